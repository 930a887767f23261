//! When the timeline's next recording is due: once a second, or later when pulls are dear.

use std::time::{Duration, Instant};

/// The shortest time between two recordings for the timeline.
pub const TIMELINE_EVERY: Duration = Duration::from_secs(1);

/// A pull for the timeline waits at least this many times what the last
/// one cost (the host's time to take it, when attached), so that the
/// timeline never costs more than 1/800 (0.125%) of a core, whatever the
/// ring sizes.
pub const TIMELINE_COST_FACTOR: u32 = 800;

/// The same while the waits view is shown, which the user asked for: a
/// `Tasks`-level recording costs more to take and to explain, and at 1/800
/// the panel would move every several seconds; at most 1/100 (1%) of a core
/// while it is open.
pub const WAITS_COST_FACTOR: u32 = 100;

/// The same for an attached host, whose exporter thread pays for each pull
/// (the reply says how long it took): at most 1/100 (1%) of one of the
/// host's cores per dashboard.
pub const HOST_COST_FACTOR: u32 = 100;

/// When the timeline's next recording is due.
#[derive(Debug, Clone)]
pub struct Pacer {
    next: Instant,
}

impl Pacer {
    /// Due at once.
    pub fn new() -> Self {
        Pacer {
            next: Instant::now(),
        }
    }

    /// Whether a pull is due at `now`.
    pub fn due(&self, now: Instant) -> bool {
        now >= self.next
    }

    /// The next pull is due at `at`, whatever the last one cost.
    pub fn due_at(&mut self, at: Instant) {
        self.next = at;
    }

    /// A pull that cost `cost` ended at `now`: the next is due after
    /// [`TIMELINE_EVERY`] or `factor` times the cost, whichever is longer.
    pub fn pulled(&mut self, now: Instant, cost: Duration, factor: u32) {
        self.next = now + TIMELINE_EVERY.max(cost.saturating_mul(factor));
    }
}

impl Default for Pacer {
    fn default() -> Self {
        Pacer::new()
    }
}
