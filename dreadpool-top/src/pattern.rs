//! The demo load patterns and the rate ladder (the names and numbers only; the
//! generator that runs them is [`crate::load`]).

use std::fmt;

/// A demo load pattern, each showing a different side of the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Pattern {
    /// Uniform short tasks from outside the pool.
    Steady,
    /// Idle gaps, then floods: sleeps and wakeups.
    Bursty,
    /// All work spawned from inside one worker: the others must steal.
    Skewed,
    /// Recursive task trees spawned from inside the pool.
    FanOut,
    /// Long tasks among short ones: starvation and fairness.
    Mixed,
    /// A share of the tasks panic: respawns, and nothing is lost.
    PanicStorm,
    /// Tasks that each run a tree of `dreadpool::join`s: forks shared with
    /// idle workers and stolen.
    ForkJoin,
}

impl Pattern {
    /// Every pattern, in key order (`1`..`7`).
    pub const ALL: [Pattern; 7] = [
        Pattern::Steady,
        Pattern::Bursty,
        Pattern::Skewed,
        Pattern::FanOut,
        Pattern::Mixed,
        Pattern::PanicStorm,
        Pattern::ForkJoin,
    ];

    /// The name used on the command line and in the header.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Steady => "steady",
            Pattern::Bursty => "bursty",
            Pattern::Skewed => "skewed",
            Pattern::FanOut => "fan-out",
            Pattern::Mixed => "mixed",
            Pattern::PanicStorm => "panic-storm",
            Pattern::ForkJoin => "fork-join",
        }
    }

    /// A one-line description, for the help overlay.
    pub fn describe(self) -> &'static str {
        match self {
            Pattern::Steady => "uniform short tasks from outside",
            Pattern::Bursty => "idle gaps, then floods: sleeps and wakeups",
            Pattern::Skewed => "all work spawned from one worker: steals",
            Pattern::FanOut => "recursive task trees",
            Pattern::Mixed => "long tasks among short ones",
            Pattern::PanicStorm => "a share of tasks panic: respawns",
            Pattern::ForkJoin => "join trees: forks shared, stolen",
        }
    }

    /// The digit key that selects it.
    pub fn key(self) -> char {
        match self {
            Pattern::Steady => '1',
            Pattern::Bursty => '2',
            Pattern::Skewed => '3',
            Pattern::FanOut => '4',
            Pattern::Mixed => '5',
            Pattern::PanicStorm => '6',
            Pattern::ForkJoin => '7',
        }
    }

    /// The pattern a digit key selects.
    pub fn from_key(key: char) -> Option<Pattern> {
        Pattern::ALL.into_iter().find(|p| p.key() == key)
    }

    /// Its index in [`Pattern::ALL`], for storing in an atomic.
    pub fn to_index(self) -> u8 {
        Pattern::ALL.iter().position(|&p| p == self).unwrap_or(0) as u8
    }

    /// The inverse of [`to_index`](Self::to_index).
    pub fn from_index(index: u8) -> Pattern {
        Pattern::ALL
            .get(usize::from(index))
            .copied()
            .unwrap_or(Pattern::Steady)
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The rates `+` and `-` step through, in tasks per second (1-2-5 steps).
pub const RATE_LADDER: [u64; 16] = [
    0, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000,
    500_000,
];

/// The default demo rate, tasks per second.
pub const DEFAULT_RATE: u64 = 2_000;

/// The next rate up the ladder from `rate` (which need not be on it).
pub fn rate_up(rate: u64) -> u64 {
    RATE_LADDER
        .iter()
        .copied()
        .find(|&r| r > rate)
        .unwrap_or(RATE_LADDER[RATE_LADDER.len() - 1])
}

/// The next rate down the ladder from `rate`.
pub fn rate_down(rate: u64) -> u64 {
    RATE_LADDER
        .iter()
        .rev()
        .copied()
        .find(|&r| r < rate)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_indices_round_trip() {
        for p in Pattern::ALL {
            assert_eq!(Pattern::from_key(p.key()), Some(p));
            assert_eq!(Pattern::from_index(p.to_index()), p);
        }
        assert_eq!(Pattern::from_key('7'), Some(Pattern::ForkJoin));
        assert_eq!(Pattern::from_key('8'), None);
        assert_eq!(Pattern::from_key('0'), None);
    }

    #[test]
    fn rates_step_along_the_ladder_and_stop_at_the_ends() {
        assert_eq!(rate_up(2_000), 5_000);
        assert_eq!(rate_down(2_000), 1_000);
        assert_eq!(rate_up(1_500), 2_000);
        assert_eq!(rate_down(1_500), 1_000);
        assert_eq!(rate_down(0), 0);
        assert_eq!(rate_up(0), 10);
        assert_eq!(rate_up(500_000), 500_000);
        assert_eq!(rate_up(9_999_999), 500_000);
    }
}
