//! A per-worker parking spot, with room for one task handed to the sleeper.
//!
//! ## A sleeper that spins before it blocks, when that pays
//!
//! Blocking on the condvar makes every wake a system call on the waker's
//! thread and a scheduler wake-up of the sleeper's: on the 16-core virtual
//! machine the one-producer model charges about 10 us of the spawner's time
//! to each wake (`BENCHMARKS.md`, "A sleeper that spins before it blocks").
//! So [`Parker::park`] first spins for up to [`PARK_SPIN`], giving its CPU
//! away between looks at its own `posted` hint, and blocks only if no token
//! came meanwhile; a waker that finds the sleeper spinning leaves its token
//! (and a handed task) under the lock as before and makes no system call.
//!
//! It spins only if its last park ended within [`PARK_SPIN`] (a spin would
//! have caught that token): the idle workers of a stream, woken moments
//! after they park, spin; a pool's workers that sleep long block at once.
//! A spin before every park doubled the latency of a wake into a pool idle
//! for a millisecond on the 2-CPU host: traced, that host runs the woken
//! worker on the spawner's CPU, and a worker that had spun no longer
//! preempted the spawner there but waited for it to block. A build with
//! `--cfg dreadpool_park_no_spin` never spins (the sleepers of before), for
//! the comparison on many cores (`dreadpool-bench/scripts/sixteen-cores.sh
//! park`).
//!
//! To the sleep protocol nothing changes: the worker is registered, counted
//! as sleeping and listed as idle from before its spin to after its wake,
//! and it looks at no queue while it spins (its own line only, so spawners
//! pay nothing for it). Why no token is lost:
//!
//! - The token is `Slot::notified`, set and consumed only under the lock;
//!   `posted` is a hint that ends the spin early, never read as the token.
//! - A waker reads, in the same hold of the lock in which it leaves the
//!   token, whether the sleeper waits on the condvar (`waiting`), and
//!   notifies if so. The sleeper sets `waiting` only in a hold of the lock
//!   in which it has seen no token. So a token is either seen by the sleeper
//!   under the lock, or left after the sleeper began to wait, and then the
//!   waker notifies.
//! - A waker may hand a task to a spinning sleeper (`spinning` under the
//!   lock): the sleeper takes the task with the token when it next holds the
//!   lock, after its spin.
//!
//! The loom model `a_sleeper_that_spins_takes_every_token` runs a parker
//! whose spin is one look against a waker that hands it a task or unparks
//! it, so that the waker can come before, during or after the spin;
//! `__broken_wait_on_hint` (the sleeper decides to wait from the hint it
//! read while spinning, not from the token) must fail it. The pool's models
//! run with no spin, so that they keep the interleavings they had.

use crate::sync::atomic::{AtomicBool, Ordering};
use crate::sync::{lock, wait, Condvar, Mutex};
use crate::task::Task;
use std::time::Duration;

/// How long a sleeper spins before it blocks (when its last park was no
/// longer than this): about one wake's latency, as a joiner's spin
/// (`worker/join_spin.rs`), the rent-or-buy bound. A wake
/// within it costs neither side a system call; a longer sleep burns at most
/// this much CPU, once, and is woken as before.
pub(crate) const PARK_SPIN: Duration = Duration::from_micros(25);

/// Parks one worker thread until it is unparked.
///
/// A one-token binary semaphore on a `Mutex` + `Condvar`, the pool's own
/// rather than `std::thread::park`: a task running on the worker may call
/// `thread::park` itself and would swallow a token meant for the worker,
/// which is precisely a lost wakeup.
///
/// The token may carry a task
/// ([`hand_off_if_waiting`](Self::hand_off_if_waiting)): the waker puts it
/// next to the token, under the same lock, and the woken worker takes both
/// at once. The task then reaches the worker in the cache line the wakeup
/// has to touch anyway, instead of through the global queue's (see
/// `README.md`, "Handing a task to a sleeper").
///
/// Aligned to a cache line where sleepers spin: a spinning sleeper reads
/// its own parker's line in a loop, which a neighbour's wake must not take
/// away.
#[cfg_attr(not(dreadpool_park_no_spin), repr(align(64)))]
pub(crate) struct Parker {
    slot: Mutex<Slot>,
    condvar: Condvar,
    /// Set by wakers with the token, cleared when it is consumed: ends a
    /// spin early. A hint only (the module docs).
    posted: AtomicBool,
    /// How long [`park`](Self::park) spins before it blocks.
    spin: Duration,
}

/// What a waker leaves for the parked worker.
struct Slot {
    notified: bool,
    task: Option<Task>,
    /// The worker waits on the condvar. A waker that finds it not waiting
    /// yet (it is still taking its second look, or spinning) skips the
    /// notify, a system call: the worker sees the token under this lock
    /// before it would wait.
    waiting: bool,
    /// The worker spins in [`Parker::park`] and will look for the token
    /// under this lock before it waits: it can be handed a task.
    spinning: bool,
    /// Whether the next [`Parker::park`] spins: its last one ended within
    /// the spin's time (a spin would have caught its token), or it has not
    /// parked yet. Read and written by the worker only, under the lock it
    /// takes anyway.
    spin_next: bool,
    /// Times the worker began to wait on the condvar (for the tests).
    #[cfg(all(test, not(loom)))]
    waits: usize,
    /// Times the worker spun before blocking (for the tests).
    #[cfg(all(test, not(loom)))]
    spins: usize,
}

/// How a [`Parker::park_until`] ended.
pub(crate) enum Parked {
    /// Woken by a token, with the task handed over with it, if any.
    Woken(Option<Task>),
    /// The deadline passed first; no token was consumed.
    TimedOut,
}

impl Parker {
    /// A parker whose [`park`](Self::park) may spin for [`PARK_SPIN`] first
    /// (the module docs); it blocks at once in a build with `--cfg
    /// dreadpool_park_no_spin`, and under loom: the pool's models keep the
    /// interleavings they had, and the spin has a model of its own,
    /// `a_sleeper_that_spins_takes_every_token`.
    pub(crate) fn new() -> Self {
        let spin = if cfg!(not(any(dreadpool_park_no_spin, loom))) {
            PARK_SPIN
        } else {
            Duration::ZERO
        };
        Self::with_spin(spin)
    }

    /// A parker whose [`park`](Self::park) spins for `spin` first, on its
    /// first park and after each park that ended within `spin`.
    pub(crate) fn with_spin(spin: Duration) -> Self {
        Parker {
            slot: Mutex::new(Slot {
                notified: false,
                task: None,
                waiting: false,
                spinning: false,
                spin_next: true,
                #[cfg(all(test, not(loom)))]
                waits: 0,
                #[cfg(all(test, not(loom)))]
                spins: 0,
            }),
            condvar: Condvar::new(),
            posted: AtomicBool::new(false),
            spin,
        }
    }

    /// Blocks until [`unpark`](Self::unpark) or a successful
    /// [`hand_off_if_waiting`](Self::hand_off_if_waiting) is (or was already)
    /// called, then consumes that token and returns the
    /// task handed over with it. Spins first if its last park was short
    /// (the module docs). Spurious condvar wakeups are absorbed here.
    pub(crate) fn park(&self) -> Option<Task> {
        // (A parker that never spins reads no clock.)
        let started = (!self.spin.is_zero() && !cfg!(loom)).then(std::time::Instant::now);
        let mut slot = lock(&self.slot);
        // A park that does not spin (no spin, a token already left, or a
        // long last park) holds the lock once: the park of before.
        let spins = !self.spin.is_zero() && !slot.notified && slot.spin_next;
        let mut hinted = false;
        if spins {
            slot.spinning = true;
            #[cfg(all(test, not(loom)))]
            {
                slot.spins += 1;
            }
            drop(slot);
            hinted = self.spin_for_token();
            slot = lock(&self.slot);
            slot.spinning = false;
        }
        // The broken variant trusts the hint it read while spinning: a
        // token left after that read, while it spun, is never waited out
        // and never notified.
        let token = if broken!("__broken_wait_on_hint") && spins {
            hinted
        } else {
            slot.notified
        };
        if !token {
            loop {
                slot.waiting = true;
                #[cfg(all(test, not(loom)))]
                {
                    slot.waits += 1;
                }
                slot = wait(&self.condvar, slot);
                slot.waiting = false;
                if slot.notified {
                    break;
                }
            }
        }
        slot.notified = false;
        self.clear_hint();
        // Spin next time only if a spin would have caught this token: a
        // worker woken moments after it parks (a stream's idle workers)
        // keeps spinning, one that sleeps long (an idle pool's) blocks at
        // once and keeps its wake as fast as without the spin
        // (`BENCHMARKS.md`, "A sleeper that spins before it blocks").
        if let Some(started) = started {
            slot.spin_next = started.elapsed() < self.spin;
        }
        slot.task.take()
    }

    /// Sets the hint that ends a spin (with the token, under the lock). A
    /// parker that never spins skips it: under loom each store is one more
    /// point at which the pool's models would branch.
    fn post_hint(&self) {
        if !self.spin.is_zero() {
            self.posted.store(true, Ordering::Relaxed);
        }
    }

    /// Clears the hint as the token is consumed (under the lock).
    fn clear_hint(&self) {
        if !self.spin.is_zero() {
            self.posted.store(false, Ordering::Relaxed);
        }
    }

    /// Looks at the `posted` hint, giving the CPU away between looks, until
    /// it is set or the spin's time is up; whether it was set. Under loom,
    /// one look: enough for a waker to come between it and the wait.
    fn spin_for_token(&self) -> bool {
        if cfg!(loom) {
            return self.posted.load(Ordering::Relaxed);
        }
        let start = std::time::Instant::now();
        loop {
            if self.posted.load(Ordering::Relaxed) {
                return true;
            }
            if start.elapsed() >= self.spin {
                return false;
            }
            crate::sync::thread::yield_now();
        }
    }

    /// Like [`park`](Self::park), giving up at `deadline`, without the
    /// spin: its callers wait inside a task for a latch or a deadline, and
    /// the spin's case is the main loop's sleeper woken moments later.
    pub(crate) fn park_until(&self, deadline: std::time::Instant) -> Parked {
        let mut slot = lock(&self.slot);
        while !slot.notified {
            slot.waiting = true;
            match crate::sync::wait_until(&self.condvar, slot, Some(deadline)) {
                Ok(mut guard) => {
                    guard.waiting = false;
                    slot = guard;
                }
                Err(mut guard) => {
                    guard.waiting = false;
                    return Parked::TimedOut;
                }
            }
        }
        slot.notified = false;
        self.clear_hint();
        Parked::Woken(slot.task.take())
    }

    /// Wakes the parked thread, or makes its next `park` return at once.
    /// Notifies only if the worker waits on the condvar: one still taking
    /// its second look sees the token under the lock before it would wait.
    pub(crate) fn unpark(&self) {
        // (The broken variant reads `waiting` under a lock of its own first:
        // the worker can start waiting in between and never be notified.)
        let early =
            broken!("__broken_unpark_reads_waiting_early").then(|| lock(&self.slot).waiting);
        let waiting = {
            let mut slot = lock(&self.slot);
            slot.notified = true;
            self.post_hint();
            early.unwrap_or(slot.waiting)
        };
        if waiting {
            self.condvar.notify_one();
        }
    }

    /// If the worker is in [`park`](Self::park) (spinning, or waiting on
    /// the condvar), runs `claim` (the caller's bookkeeping, done before the
    /// worker can see the token) and leaves the token with `task`, returning
    /// `Ok` with whether the worker waits on the condvar: then the caller
    /// must call [`notify`](Self::notify). Gives `task` back if the worker
    /// is not in `park` yet (it is still taking its second look, which
    /// should find the task where spawns normally put it).
    pub(crate) fn hand_off_if_waiting(
        &self,
        task: Task,
        claim: impl FnOnce(),
    ) -> Result<bool, Task> {
        let mut slot = lock(&self.slot);
        if !(slot.waiting || slot.spinning) {
            return Err(task);
        }
        claim();
        debug_assert!(!slot.notified && slot.task.is_none());
        slot.notified = true;
        slot.task = Some(task);
        self.post_hint();
        Ok(slot.waiting)
    }

    /// Wakes the worker after a successful
    /// [`hand_off_if_waiting`](Self::hand_off_if_waiting) that found it
    /// waiting on the condvar.
    pub(crate) fn notify(&self) {
        self.condvar.notify_one();
    }

    /// Whether the worker waits on the condvar now (for tests that must
    /// act only once it does, without sleeping to get there).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn is_waiting(&self) -> bool {
        lock(&self.slot).waiting
    }

    /// Whether the worker spins in `park` now (for the tests).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn is_spinning(&self) -> bool {
        lock(&self.slot).spinning
    }

    /// Times the worker began to wait on the condvar (for the tests).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn waits(&self) -> usize {
        lock(&self.slot).waits
    }

    /// Times the worker spun before blocking (for the tests).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn spins(&self) -> usize {
        lock(&self.slot).spins
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    //! The spin's three outcomes, each ordered by the parker's observed
    //! state (it says when it spins and when it blocks), never by sleeps:
    //! a spin of a minute stands for one that a wake always comes within.

    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    fn parking(parker: &Arc<Parker>) -> std::thread::JoinHandle<Option<Task>> {
        let parker = Arc::clone(parker);
        std::thread::spawn(move || parker.park())
    }

    #[test]
    fn a_sleeper_woken_while_it_spins_never_blocks() {
        let parker = Arc::new(Parker::with_spin(Duration::from_secs(60)));
        let sleeper = parking(&parker);
        while !parker.is_spinning() {
            std::thread::yield_now();
        }
        parker.unpark();
        assert!(sleeper.join().unwrap().is_none(), "a plain token");
        assert_eq!(parker.waits(), 0, "it never waited on the condvar");
        assert!(
            !parker.posted.load(Ordering::Relaxed),
            "the hint is cleared"
        );
    }

    #[test]
    fn a_sleeper_handed_a_task_while_it_spins_takes_it_with_no_notify() {
        let parker = Arc::new(Parker::with_spin(Duration::from_secs(60)));
        let sleeper = parking(&parker);
        while !parker.is_spinning() {
            std::thread::yield_now();
        }
        let ran = Arc::new(AtomicBool::new(false));
        let task = {
            let ran = Arc::clone(&ran);
            Task::new(move || ran.store(true, Ordering::Relaxed))
        };
        let blocked = parker
            .hand_off_if_waiting(task, || {})
            .unwrap_or_else(|_| panic!("a spinning sleeper takes a task"));
        assert!(!blocked, "no notify for a sleeper that has not blocked");
        sleeper.join().unwrap().expect("the task").run();
        assert!(ran.load(Ordering::Relaxed));
        assert_eq!(parker.waits(), 0);
    }

    #[test]
    fn a_sleeper_whose_spin_ran_out_blocks_and_is_woken() {
        let parker = Arc::new(Parker::with_spin(Duration::from_micros(1)));
        let sleeper = parking(&parker);
        while !parker.is_waiting() {
            std::thread::yield_now();
        }
        parker.unpark();
        assert!(sleeper.join().unwrap().is_none());
        assert!(parker.waits() >= 1, "it blocked, and was notified");
    }

    #[test]
    fn a_sleeper_spins_again_only_after_a_park_a_spin_would_have_caught() {
        // A spin of a minute: every park below ends within it, but for the
        // one whose token comes after it blocked on a spin of 1 us.
        let parker = Arc::new(Parker::with_spin(Duration::from_secs(60)));
        parker.unpark();
        assert!(parker.park().is_none());
        assert_eq!(parker.spins(), 0, "a token already left: no spin");
        // That park was short: the next one spins.
        let sleeper = parking(&parker);
        while !parker.is_spinning() {
            std::thread::yield_now();
        }
        parker.unpark();
        sleeper.join().unwrap();
        assert_eq!(parker.spins(), 1);

        // A park that outlasts the spin (it blocked, so 1 us had passed
        // before the token came) makes the next one block at once.
        let parker = Arc::new(Parker::with_spin(Duration::from_micros(1)));
        let park_until_blocked_then_wake = || {
            let sleeper = parking(&parker);
            while !parker.is_waiting() {
                std::thread::yield_now();
            }
            parker.unpark();
            sleeper.join().unwrap();
        };
        park_until_blocked_then_wake();
        assert_eq!(
            (parker.spins(), parker.waits()),
            (1, 1),
            "the first park spins"
        );
        park_until_blocked_then_wake();
        assert_eq!(
            (parker.spins(), parker.waits()),
            (1, 2),
            "after a long park, the next blocks without a spin"
        );
    }

    #[test]
    fn a_token_posts_the_hint_and_consuming_it_clears_it() {
        // The hint is what ends a spin early: without it a woken sleeper
        // would spin its whole bound, which the tests above cannot see.
        let parker = Parker::with_spin(Duration::from_secs(60));
        parker.unpark();
        assert!(parker.posted.load(Ordering::Relaxed), "unpark posts it");
        assert!(parker.park().is_none());
        assert!(!parker.posted.load(Ordering::Relaxed), "park clears it");
        assert_eq!(parker.waits(), 0, "a token already left: no wait");
        // A spinning sleeper is handed a task: the hand-off posts it too.
        let parker = Arc::new(parker);
        let sleeper = parking(&parker);
        while !parker.is_spinning() {
            std::thread::yield_now();
        }
        let handed = parker.hand_off_if_waiting(Task::new(|| {}), || {});
        assert!(handed.is_ok());
        assert!(sleeper.join().unwrap().is_some());
        assert!(!parker.posted.load(Ordering::Relaxed));
    }
}
