//! When a worker's spawn reads the clock, and when it takes its worker's
//! latest reading instead.
//!
//! At `Tasks` level a worker records two events a task: the run's begin and
//! (on average, in a spawn tree) one spawn. Reading the clock is most of an
//! event's cost, so with a reading for each the level ran over its budgets
//! on short tasks (`BENCHMARKS.md`, "Core design figures":
//! recorder-spawn-clock).
//!
//! So a run's begin always reads the clock (it bounds two slices: its own
//! and the run before it), and a spawn made from a task on the worker
//! reads it only when the worker's readings have been coming slowly:
//!
//! - After each reading, if it came less than [`QUICK_TICKS`] after the
//!   reading before it, the worker's next [`INHERITING_SPAWNS`] spawns take
//!   that reading as their time (the event carries [`event::INHERITED`]).
//! - Otherwise every spawn reads the clock, until readings come quickly
//!   again.
//!
//! **What an inherited time means.** It is the latest reading this policy
//! saw before the spawn (a run's begin or a spawn's; the worker's
//! scheduler events read the clock on their own, and `merge.rs`
//! raises the time to the latest of those before it), so the spawn
//! happened at or after it, and before
//! the worker's next reading (whatever event took it) and before the
//! spawned task began to run. `merge.rs` turns these bounds into the
//! spawn's `within_ns`: a recording never claims a precision it does not
//! have. Where tasks are short (the case that needs the saving), the bounds
//! are a task or two apart; where they are long (readings come slowly),
//! spawns read the clock, at a cost that is small beside such tasks
//! (`BENCHMARKS.md`, "Core design figures": recorder-spawn-clock). A long
//! task that follows short ones gets wide bounds on its spawns, once: its
//! own run switches the worker to reading.
//!
//! A spawn loop in one long task (a fan-out) reads the clock on every
//! `INHERITING_SPAWNS + 1`-th spawn, so its bounds span at most that many
//! spawns, and switches to reading every spawn if those spans grow slow.

use super::clock;
use std::cell::Cell;

/// Spawns that may take the latest reading after a quick one: in a fan-out
/// loop one spawn in 16 reads the clock, a sixteenth of a reading's cost a
/// spawn, and an inherited time is at most 15 spawns old.
pub(crate) const INHERITING_SPAWNS: u32 = 15;

/// A reading this many ticks or fewer after the one before it is quick.
/// 1.6-8 us across counters of 1-5 GHz (8 us where the clock counts
/// nanoseconds): above the time between the runs of 1 us tasks, whose
/// spawns should not each pay a reading, and short enough that an
/// inherited time is a few microseconds from the truth at most in a steady
/// load (`BENCHMARKS.md`, "Core design figures": recorder-spawn-clock).
pub(crate) const QUICK_TICKS: u64 = 8192;

/// A time for an event: read now, or the latest reading taken again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stamp {
    /// Read from the clock for this event.
    Read(u64),
    /// The worker's latest reading, taken before this event.
    Inherited(u64),
}

/// One worker seat's clock policy; only the thread in the seat uses it
/// (`Cell`s: it is part of that thread's `WorkerThread`).
pub(crate) struct SpawnClock {
    /// The latest reading (0 before the first).
    latest: Cell<u64>,
    /// Spawns that may still take `latest`.
    inheritable: Cell<u32>,
}

impl SpawnClock {
    pub(crate) const fn new() -> Self {
        SpawnClock {
            latest: Cell::new(0),
            inheritable: Cell::new(0),
        }
    }

    /// Reads the clock for an event that must have its own time (a run's
    /// begin).
    #[inline(always)]
    pub(crate) fn read(&self) -> u64 {
        let now = clock::now();
        self.note_reading(now);
        now
    }

    /// A time for a spawn from a task on this worker.
    #[inline(always)]
    pub(crate) fn for_spawn(&self) -> Stamp {
        self.stamp_spawn(clock::now)
    }

    /// [`for_spawn`](Self::for_spawn), with the clock given (the tests
    /// give theirs).
    #[inline(always)]
    fn stamp_spawn(&self, clock: impl FnOnce() -> u64) -> Stamp {
        let inheritable = self.inheritable.get();
        if inheritable > 0 {
            self.inheritable.set(inheritable - 1);
            Stamp::Inherited(self.latest.get())
        } else {
            let now = clock();
            self.note_reading(now);
            Stamp::Read(now)
        }
    }

    #[inline(always)]
    fn note_reading(&self, now: u64) {
        let since = now.wrapping_sub(self.latest.get());
        // A reading a few ticks behind the latest (on another core, whose
        // counter lags a little) is quick too: wrapped, it is huge.
        let quick = since <= QUICK_TICKS || since.wrapping_neg() <= QUICK_TICKS;
        self.inheritable
            .set(if quick { INHERITING_SPAWNS } else { 0 });
        self.latest.set(now);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A reading `ticks` after the latest.
    fn after(clock: &SpawnClock, ticks: u64) -> u64 {
        clock.latest.get().wrapping_add(ticks)
    }

    #[test]
    fn spawns_after_a_quick_reading_take_it_until_their_budget_is_spent() {
        let clock = SpawnClock::new();
        // The first reading follows nothing (0): slow, so the spawn after
        // it reads the clock too, quickly.
        clock.note_reading(1_000_000);
        let quick = after(&clock, 100);
        assert_eq!(clock.stamp_spawn(|| quick), Stamp::Read(quick));
        for _ in 0..INHERITING_SPAWNS {
            assert_eq!(
                clock.stamp_spawn(|| unreachable!()),
                Stamp::Inherited(quick)
            );
        }
        let next = after(&clock, 200);
        assert_eq!(clock.stamp_spawn(|| next), Stamp::Read(next));
        assert_eq!(clock.stamp_spawn(|| unreachable!()), Stamp::Inherited(next));
    }

    #[test]
    fn after_a_slow_reading_every_spawn_reads() {
        let clock = SpawnClock::new();
        clock.note_reading(1_000_000);
        for step in [QUICK_TICKS + 1, QUICK_TICKS * 10, QUICK_TICKS + 1] {
            let slow = after(&clock, step);
            assert_eq!(clock.stamp_spawn(|| slow), Stamp::Read(slow));
        }
        // A run's begin that comes quickly after lets the spawns inherit.
        clock.note_reading(after(&clock, 5));
        assert!(matches!(
            clock.stamp_spawn(|| unreachable!()),
            Stamp::Inherited(_)
        ));
        // One that comes slowly stops them.
        clock.note_reading(after(&clock, QUICK_TICKS + 1));
        let slow = after(&clock, QUICK_TICKS + 1);
        assert_eq!(clock.stamp_spawn(|| slow), Stamp::Read(slow));
    }

    #[test]
    fn a_reading_a_little_behind_the_latest_is_quick() {
        let clock = SpawnClock::new();
        clock.note_reading(1_000_000);
        clock.note_reading(1_000_000 - 5);
        assert_eq!(
            clock.stamp_spawn(|| unreachable!()),
            Stamp::Inherited(999_995)
        );
    }
}
