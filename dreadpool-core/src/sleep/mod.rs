//! Idle workers sleep; spawns wake them. No wakeup is ever lost, and a spawn
//! pays neither a lock nor a syscall while no worker sleeps.
//!
//! The full argument, with the seed's two lost-wakeup scenarios, is in
//! `README.md` beside this file. In short, one `AtomicU64` holds two counts,
//! *sleeping* (workers registered to sleep) and *searching* (workers woken
//! and looking for work). The sleeping count only changes with the idle list
//! locked, so it always agrees with the list; spawners only read the word.
//!
//! - A spawner pushes its task, issues a `SeqCst` fence, then reads the word.
//!   It wakes a sleeper only if one sleeps and nobody is already searching.
//! - A worker about to sleep registers itself (list + word), issues a `SeqCst`
//!   fence, then looks at every queue once more before it parks.
//!
//! Of two `SeqCst` fences one comes first: either the worker's second look
//! sees the task, or the spawner sees the sleeper. A searching worker that a
//! spawner relied on either finds work or registers and looks again, so the
//! reliance is safe.

mod parker;

use crate::sync::atomic::fence;
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::{lock, Mutex};
use crate::task::Task;
use parker::{Parked, Parker};

/// One sleeping worker in the packed state word.
const ONE_SLEEPING: u64 = 1 << 32;
/// One searching worker in the packed state word.
const ONE_SEARCHING: u64 = 1;

fn sleeping(state: u64) -> u64 {
    state >> 32
}

fn searching(state: u64) -> u64 {
    state & (ONE_SLEEPING - 1)
}

/// The sleep/wake coordinator of one pool.
pub(crate) struct Sleep {
    /// `sleeping << 32 | searching`; the sleeping half only changes with
    /// `idle` locked.
    state: AtomicU64,
    /// Indices of the registered sleepers, most recent last (woken first: its
    /// caches are the warmest).
    idle: Mutex<Vec<usize>>,
    parkers: Box<[Parker]>,
}

impl Sleep {
    pub(crate) fn new(workers: usize) -> Self {
        Sleep {
            state: AtomicU64::new(0),
            idle: Mutex::new(Vec::with_capacity(workers)),
            parkers: (0..workers).map(|_| Parker::new()).collect(),
        }
    }

    /// Hands `task`, spawned from outside, straight to a sleeping worker
    /// when the whole pool sleeps; gives it back otherwise (then the caller
    /// pushes it to the global queue and calls
    /// [`notify_external_task`](Self::notify_external_task)).
    ///
    /// Only a fully idle pool, with nobody searching: that is where a spawn
    /// waits for a wakeup and nothing else, and where handing the task over
    /// with the token takes the global queue's lines, and the woken worker's
    /// search bookkeeping, off that wait. The woken worker counts as running,
    /// not searching, so it does not hold back later wakes; a burst into an
    /// idle pool therefore wakes one more worker the usual way on its second
    /// spawn, and is throttled by that searcher from then on.
    ///
    /// No fence is needed: the claim is made under the idle lock, which the
    /// sleeper took to register, and a claimed sleeper is certain to take
    /// the task with its token (`README.md`).
    pub(crate) fn try_hand_off(&self, task: Task) -> Result<(), Task> {
        // Relaxed: a stale view only sends the task the usual way, whose
        // fence does the ordering; the claim below is decided under the lock.
        let state = self.state.load(Ordering::Relaxed);
        if sleeping(state) != self.parkers.len() as u64 || searching(state) != 0 {
            return Err(task);
        }
        let claimed = {
            let mut idle = lock(&self.idle);
            let claimed = idle.pop();
            if claimed.is_some() {
                // Straight from sleeping to running: not a searcher.
                self.state.fetch_sub(ONE_SLEEPING, Ordering::SeqCst);
            }
            claimed
        };
        match claimed {
            Some(index) => {
                self.parkers[index].hand_off(task);
                Ok(())
            }
            None => Err(task),
        }
    }

    /// Called by a spawner after pushing a task to the global queue.
    pub(crate) fn notify_external_task(&self) {
        // SeqCst fence: pairs with the fence in `register_sleeper`. Either the
        // sleeper's second look sees our push, or we see its registration.
        // (Left out only by the `__broken_no_spawn_fence` feature, under loom.)
        if !cfg!(all(loom, feature = "__broken_no_spawn_fence")) {
            fence(Ordering::SeqCst);
        }
        self.wake_one_if_nobody_searching();
    }

    /// Called by a worker after pushing a task to its own local queue.
    ///
    /// No fence here, deliberately: the owner of a local queue is awake (it
    /// is running the task that spawned) and will run the task itself if
    /// nobody steals it, so a missed wake can cost parallelism for a moment
    /// but can never strand a task. The next spawn sees the sleeper.
    pub(crate) fn notify_local_task(&self) {
        self.wake_one_if_nobody_searching();
    }

    fn wake_one_if_nobody_searching(&self) {
        // Relaxed: the fence before (or the argument above) does the ordering;
        // this is a plain read of a line that only sleep transitions write.
        let state = self.state.load(Ordering::Relaxed);
        if sleeping(state) > 0 && searching(state) == 0 {
            self.wake_one();
        }
    }

    /// Wakes one sleeper, if any, which becomes a searcher.
    pub(crate) fn wake_one(&self) {
        let woken = {
            let mut idle = lock(&self.idle);
            let woken = idle.pop();
            if woken.is_some() {
                self.state
                    .fetch_add(ONE_SEARCHING.wrapping_sub(ONE_SLEEPING), Ordering::SeqCst);
            }
            woken
        };
        if let Some(index) = woken {
            self.parkers[index].unpark();
        }
    }

    /// Wakes worker `index` if it is registered as a sleeper (it becomes a
    /// searcher); does nothing if it is awake. For latches, whose waiter must
    /// be woken however many others sleep.
    pub(crate) fn wake_specific(&self, index: usize) {
        let found = {
            let mut idle = lock(&self.idle);
            match idle.iter().position(|&i| i == index) {
                Some(position) => {
                    idle.swap_remove(position);
                    self.state
                        .fetch_add(ONE_SEARCHING.wrapping_sub(ONE_SLEEPING), Ordering::SeqCst);
                    true
                }
                None => false,
            }
        };
        if found {
            self.parkers[index].unpark();
        }
    }

    /// Wakes every sleeper (shutdown, or a refused spawn that may have made
    /// the pool idle). Each becomes a searcher.
    pub(crate) fn wake_all(&self) {
        let woken = {
            let mut idle = lock(&self.idle);
            let woken = std::mem::take(&mut *idle);
            let n = woken.len() as u64;
            if n > 0 {
                self.state.fetch_add(
                    (n * ONE_SEARCHING).wrapping_sub(n * ONE_SLEEPING),
                    Ordering::SeqCst,
                );
            }
            woken
        };
        for index in woken {
            self.parkers[index].unpark();
        }
    }

    /// Registers worker `index` as a sleeper. `was_searching` says whether it
    /// was counted as a searcher, which it stops being.
    ///
    /// After this returns, the worker must look at every queue (and the
    /// shutdown flag) once more, then call [`park`](Self::park) or
    /// [`cancel`](Self::cancel).
    pub(crate) fn register_sleeper(&self, index: usize, was_searching: bool) {
        {
            let mut idle = lock(&self.idle);
            idle.push(index);
            let delta = if was_searching {
                ONE_SLEEPING.wrapping_sub(ONE_SEARCHING)
            } else {
                ONE_SLEEPING
            };
            self.state.fetch_add(delta, Ordering::SeqCst);
        }
        // SeqCst fence: pairs with the fence in `notify_external_task` (lost
        // wakeup), with the joiner's fence in `IdleLatch::wait` (a join that
        // misses the last task) and orders our completion counts before the
        // reads of the join waiters count.
        fence(Ordering::SeqCst);
    }

    /// Takes back worker `index`'s registration because its second look found
    /// work (or it is exiting). Afterwards the worker counts as searching,
    /// unless a task was handed to it: then it is returned, and the worker
    /// counts as running.
    pub(crate) fn cancel(&self, index: usize) -> Option<Task> {
        {
            let mut idle = lock(&self.idle);
            if let Some(position) = idle.iter().position(|&i| i == index) {
                idle.swap_remove(position);
                self.state
                    .fetch_add(ONE_SEARCHING.wrapping_sub(ONE_SLEEPING), Ordering::SeqCst);
                return None;
            }
        }
        // A waker popped us between our registration and now, and is about to
        // unpark us (it already counted us as searching, or as running if it
        // hands us a task). Consume that token now, or our next `park` would
        // return at once while we are listed.
        let handed = self.parkers[index].park();
        // (The `__broken_handoff_lost_in_cancel` feature, under loom, drops
        // a task handed over here, to show that the models would notice.)
        if cfg!(all(loom, feature = "__broken_handoff_lost_in_cancel")) {
            drop(handed);
            return None;
        }
        handed
    }

    /// Parks worker `index` until a waker pops it from the idle list. It
    /// then counts as searching, or as running with the task handed to it,
    /// which is returned.
    pub(crate) fn park(&self, index: usize) -> Option<Task> {
        self.parkers[index].park()
    }

    /// Like [`park`](Self::park), but gives up at `deadline`; either way
    /// the worker is no longer registered afterwards.
    pub(crate) fn park_until(&self, index: usize, deadline: std::time::Instant) -> Option<Task> {
        match self.parkers[index].park_until(deadline) {
            Parked::Woken(task) => task,
            Parked::TimedOut => self.cancel(index),
        }
    }

    /// Worker stops searching (it found work, or it exits). Returns true when
    /// it was the last searcher and more sleepers remain: the caller should
    /// then wake one if there is more work than it can take, because spawners
    /// skipped waking while it searched.
    pub(crate) fn stop_searching(&self) -> bool {
        let previous = self.state.fetch_sub(ONE_SEARCHING, Ordering::SeqCst);
        searching(previous) == 1 && sleeping(previous) > 0
    }
}
