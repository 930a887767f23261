//! A worker waiting at a join whose fork a thief runs looks again for a
//! while before it sleeps.
//!
//! When such a worker finds nothing else to run, the thief is usually in
//! the middle of the fork. Sleeping then puts a wake on the computation's
//! critical path: the thief's setting of the latch wakes the joiner
//! (`fork_latch.rs`), and the joiner resumes one wake latency later. At the
//! end of each level of a coarse recursion the last joins wait like this,
//! one after another (`BENCHMARKS.md`, "Core design figures": join-spin).
//!
//! So the worker looks again (its latch, then every place
//! `find_task_in_join` looks), giving its CPU away between looks, for up to
//! [`JOIN_SPIN`], and only then registers to sleep. The bound is about one
//! wake's latency, the rule of renting skis: a wait shorter than the bound
//! ends without the wake's latency; a longer one wastes at most the bound
//! in CPU time, and costs the joiner nothing in latency, since it sleeps
//! and is woken exactly as before.
//!
//! ## Why the spin cannot lose a wakeup or a task
//!
//! A spinning worker is neither registered as a sleeper nor counted as a
//! searcher: to the sleep protocol it is a worker running a task (the one
//! that joins). Its looks are the loop's ordinary ones, each followed by the
//! same decision, so the spin only moves the protocol later; it enters it
//! unchanged (`idle.rs`: register, look a second time, mark the latch,
//! park). Every wake decision others make meanwhile is the one they would
//! make if it were running its task, which is the case the protocol already
//! covers. The loom model `a_join_races_the_thief_of_its_fork` checks that
//! protocol with the spin off (under loom, a spin would only multiply the
//! interleavings of looks that find nothing).
//!
//! Not counting the spinner as a searcher is deliberate: a first patch that
//! let idle workers spin counted them as searchers, so spawners skipped
//! waking sleepers while a spinner had lost its CPU, and under load the
//! pool ran slower (`BENCHMARKS.md`, "Spin before sleeping").
//!
//! Only joins spin. A task latch (a scope, a handle) waits for tasks that
//! may not have started, and the main loop's idle workers have no piece of
//! work in flight to wait for. A build with `--cfg dreadpool_join_spin_off`
//! sleeps at once, as before, for comparing the two on many cores.

use std::time::{Duration, Instant};

/// How long a joiner looks again before it sleeps: about the median
/// latency of a wake on the slower of the machines this project measured
/// (`BENCHMARKS.md`, "Core design figures": join-spin).
pub(super) const JOIN_SPIN: Duration = Duration::from_micros(25);

/// One joiner's spin: when it began, if it has.
pub(super) struct JoinSpin {
    since: Option<Instant>,
}

impl JoinSpin {
    /// A joiner that has not run dry yet.
    pub(super) fn new() -> Self {
        JoinSpin { since: None }
    }

    /// Whether the spin is under way: the joiner ran dry and has not found
    /// work since.
    pub(super) fn is_spinning(&self) -> bool {
        self.since.is_some()
    }

    /// The joiner's look found nothing: true to look again (its CPU given
    /// away first), false once it has looked for [`JOIN_SPIN`]. Then the
    /// spin is over and the joiner goes to sleep; after it is woken it
    /// searches as any woken worker does, and spins again only after it
    /// has found work and run dry once more.
    pub(super) fn look_again(&mut self) -> bool {
        if cfg!(any(loom, dreadpool_join_spin_off)) {
            return false;
        }
        let now = Instant::now();
        let since = *self.since.get_or_insert(now);
        if now.duration_since(since) >= JOIN_SPIN {
            self.since = None;
            return false;
        }
        // A thief on this CPU (an oversubscribed pool) runs meanwhile.
        std::thread::yield_now();
        true
    }

    /// The spinning joiner found work: its next run dry spins afresh.
    pub(super) fn found_work(&mut self) {
        self.since = None;
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// (Under `--cfg dreadpool_join_spin_off` this fails, as it should.)
    #[test]
    fn a_joiner_looks_again_until_the_bound_then_its_spin_is_over() {
        let mut spin = JoinSpin::new();
        assert!(!spin.is_spinning());
        let start = Instant::now();
        let mut looks = 0u64;
        while spin.look_again() {
            looks += 1;
        }
        assert!(looks >= 1, "the first dry look is followed by another");
        assert!(
            start.elapsed() >= JOIN_SPIN,
            "it gave up only after the bound"
        );
        assert!(!spin.is_spinning(), "the spin is over once it gave up");
        assert!(spin.look_again(), "a new run dry spins again");
        assert!(spin.is_spinning());
        spin.found_work();
        assert!(!spin.is_spinning());
    }

    /// On a pool of two, the joiner's fork is taken by the other worker,
    /// which holds it until the joiner has gone to sleep, and measures how
    /// long after the joiner's `a` returned that was: never less than the
    /// spin's bound. (With `--cfg dreadpool_join_spin_off` the joiner sleeps
    /// a few microseconds after `a`, and this fails.)
    #[cfg(feature = "metrics")]
    #[test]
    fn a_joiner_whose_fork_is_running_sleeps_only_after_the_bound() {
        use std::sync::{mpsc, OnceLock};

        const HANG: Duration = Duration::from_secs(60);
        let pool = crate::ThreadPoolBuilder::new().with_threads(2).build();
        let (stolen, stolen_rx) = mpsc::channel::<()>();
        let stolen_rx = std::sync::Mutex::new(stolen_rx);
        let a_returned = OnceLock::<Instant>::new();
        let slept_after = pool.install(|| {
            let joiner = crate::current_worker_index().expect("install runs on a worker");
            let ((), slept_after) = crate::join(
                || {
                    // `b` runs elsewhere: this worker is held here until then.
                    let received = stolen_rx.lock().unwrap().recv_timeout(HANG);
                    received.expect("the other worker took the fork");
                    a_returned.set(Instant::now()).unwrap();
                },
                || {
                    let sleeps = pool.metrics().workers[joiner].sleeps;
                    stolen.send(()).unwrap();
                    let deadline = Instant::now() + HANG;
                    while pool.metrics().workers[joiner].sleeps == sleeps {
                        assert!(Instant::now() < deadline, "the joiner never slept");
                        std::hint::spin_loop();
                    }
                    loop {
                        if let Some(returned) = a_returned.get() {
                            return returned.elapsed();
                        }
                        std::hint::spin_loop();
                    }
                },
            );
            slept_after
        });
        assert!(
            slept_after >= JOIN_SPIN,
            "the joiner slept {slept_after:?} after its `a`, within the spin's {JOIN_SPIN:?}"
        );
    }
}
