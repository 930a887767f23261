//! How long a worker waits before its next look at the global queue.
//!
//! When one thread feeds the pool from outside and the workers run its
//! tasks faster than it spawns them, a worker that pulls a single task runs
//! it and is back at the global queue at once, finds the next one or two,
//! and so on. Every such pull reads the cache lines that the spawner is
//! writing (the queue's indices and the newest slots), so spawner and
//! worker trade those lines back and forth on every task, and the spawner,
//! which is the bottleneck, slows to a crawl (`BENCHMARKS.md`, "Core
//! design figures": pull-pacer).
//!
//! So a pull that empties the queue (only the task to run now came back)
//! makes the worker pause before its next pull, a little longer each time
//! it happens again, up to [`MAX_SPINS`]; a pull that brings a full batch
//! (tasks were waiting) shortens the pause, and an empty pull ends it.
//! Nothing else is looked at: asking the global queue whether more tasks
//! wait would read the very lines the pause keeps the worker off (tried: it
//! brought the contention back; `BENCHMARKS.md`, "Core design figures":
//! pull-pacer). The pause lets a batch gather, so the worker takes it in
//! one go while the spawner writes lines nobody reads.
//!
//! The cost is latency, and only in that regime: a task spawned during a
//! pause waits for it to end, at most [`MAX_SPINS`] spin hints (a few
//! microseconds). A worker woken from sleep starts with no pause, so a lone
//! spawn on an idle pool is not delayed.
//!
//! Why nothing can be lost: pausing changes only *when* a worker looks at
//! the global queue, never *whether*. A pausing worker is neither searching
//! nor registered to sleep, so the sleep protocol (`sleep/README.md`) does
//! not count on it: a spawner that finds sleepers wakes one as before, and
//! the pausing worker pulls right after its pause, which is bounded.

use std::cell::Cell;

/// The first pause, in spin hints, after a pull that emptied the queue.
pub(crate) const MIN_SPINS: u32 = 8;

/// The longest pause, in spin hints: the most latency the pacer may add to
/// a task, kept to a few microseconds (`BENCHMARKS.md`, "Core design
/// figures": pull-pacer).
pub(crate) const MAX_SPINS: u32 = 128;

/// The most tasks a pull must bring to count as full, whatever the
/// backlog: crossbeam cuts batches at the end of its 63-slot blocks, so with
/// a backlog above that a pull would never be full, and a pause grown in a
/// drained phase would outlast it.
const FULL_BATCH: usize = 32;

/// A worker's pause before its next global pull. Only its worker uses it
/// (hence a `Cell`: the worker is shared with its tasks through `&`).
#[derive(Debug, Default)]
pub(crate) struct PullPacer {
    spins: Cell<u32>,
}

impl PullPacer {
    /// Pauses for the current length of pause, if any.
    #[inline]
    pub(crate) fn pause(&self) {
        for _ in 0..self.spins.get() {
            std::hint::spin_loop();
        }
    }

    /// Records what a global pull brought: `None` if the queue was empty,
    /// else how many tasks it left in the local queue (besides the one
    /// returned to run) out of `backlog`, the most a pull tops off to.
    #[inline]
    pub(crate) fn pulled(&self, left_in_local_queue: Option<usize>, backlog: usize) {
        let spins = self.spins.get();
        self.spins.set(match left_in_local_queue {
            // The spawner has stopped, or is slow: pausing would only wait.
            None => 0,
            // A full batch: tasks were waiting. Pause less. (First, so that
            // with a backlog of 1, where every batch is one task, a pull
            // never counts as draining.)
            Some(left) if left + 1 >= backlog.min(FULL_BATCH) => spins / 2,
            // Only the task to run came back: the queue is drained as fast
            // as it fills. Pause longer.
            Some(0) => (spins * 2).clamp(MIN_SPINS, MAX_SPINS),
            Some(_) => spins,
        });
    }

    /// Forgets the pause: for a worker that slept, whose next pull is for
    /// work spawned while no one was looking.
    pub(crate) fn reset(&self) {
        self.spins.set(0);
    }

    #[cfg(test)]
    fn spins(&self) -> u32 {
        self.spins.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BACKLOG: usize = 32;

    #[test]
    fn no_pause_until_a_pull_drains_the_queue() {
        let pacer = PullPacer::default();
        assert_eq!(pacer.spins(), 0);
        pacer.pulled(Some(5), BACKLOG);
        assert_eq!(pacer.spins(), 0);
        pacer.pulled(Some(0), BACKLOG);
        assert_eq!(pacer.spins(), MIN_SPINS);
    }

    #[test]
    fn draining_pulls_double_the_pause_up_to_the_cap() {
        let pacer = PullPacer::default();
        let mut seen = Vec::new();
        for _ in 0..10 {
            pacer.pulled(Some(0), BACKLOG);
            seen.push(pacer.spins());
        }
        assert_eq!(seen[..5], [8, 16, 32, 64, 128]);
        assert!(seen.iter().all(|&s| s <= MAX_SPINS));
        assert_eq!(seen[9], MAX_SPINS);
    }

    #[test]
    fn a_full_batch_halves_the_pause_and_an_empty_queue_ends_it() {
        let pacer = PullPacer::default();
        for _ in 0..5 {
            pacer.pulled(Some(0), BACKLOG);
        }
        pacer.pulled(Some(BACKLOG - 1), BACKLOG);
        assert_eq!(pacer.spins(), MAX_SPINS / 2);
        pacer.pulled(Some(10), BACKLOG);
        assert_eq!(pacer.spins(), MAX_SPINS / 2, "a partial batch keeps it");
        pacer.pulled(None, BACKLOG);
        assert_eq!(pacer.spins(), 0);
    }

    #[test]
    fn with_a_large_backlog_a_batch_of_32_is_full() {
        let pacer = PullPacer::default();
        for _ in 0..5 {
            pacer.pulled(Some(0), 256);
        }
        pacer.pulled(Some(31), 256);
        assert_eq!(pacer.spins(), MAX_SPINS / 2);
        pacer.pulled(Some(30), 256);
        assert_eq!(
            pacer.spins(),
            MAX_SPINS / 2,
            "31 tasks are not a full batch"
        );
    }

    #[test]
    fn with_a_backlog_of_one_there_is_never_a_pause() {
        let pacer = PullPacer::default();
        for _ in 0..5 {
            pacer.pulled(Some(0), 1);
        }
        assert_eq!(pacer.spins(), 0);
    }

    #[test]
    fn reset_forgets_the_pause() {
        let pacer = PullPacer::default();
        pacer.pulled(Some(0), BACKLOG);
        pacer.reset();
        assert_eq!(pacer.spins(), 0);
    }
}
