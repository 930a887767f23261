//! A per-worker parking spot, with room for one task handed to the sleeper.

use crate::sync::{lock, wait, Condvar, Mutex};
use crate::task::Task;

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
pub(crate) struct Parker {
    slot: Mutex<Slot>,
    condvar: Condvar,
}

/// What a waker leaves for the parked worker.
struct Slot {
    notified: bool,
    task: Option<Task>,
    /// The worker waits on the condvar. A waker that finds it not waiting
    /// yet (it is still taking its second look) skips the notify, a system
    /// call: the worker sees the token under this lock before it would wait.
    waiting: bool,
}

/// How a [`Parker::park_until`] ended.
pub(crate) enum Parked {
    /// Woken by a token, with the task handed over with it, if any.
    Woken(Option<Task>),
    /// The deadline passed first; no token was consumed.
    TimedOut,
}

impl Parker {
    pub(crate) fn new() -> Self {
        Parker {
            slot: Mutex::new(Slot {
                notified: false,
                task: None,
                waiting: false,
            }),
            condvar: Condvar::new(),
        }
    }

    /// Blocks until [`unpark`](Self::unpark) or a successful
    /// [`hand_off_if_waiting`](Self::hand_off_if_waiting) is (or was already)
    /// called, then consumes that token and returns the
    /// task handed over with it. Spurious condvar wakeups are absorbed here.
    pub(crate) fn park(&self) -> Option<Task> {
        let mut slot = lock(&self.slot);
        while !slot.notified {
            slot.waiting = true;
            slot = wait(&self.condvar, slot);
            slot.waiting = false;
        }
        slot.notified = false;
        slot.task.take()
    }

    /// Like [`park`](Self::park), giving up at `deadline`.
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
            early.unwrap_or(slot.waiting)
        };
        if waiting {
            self.condvar.notify_one();
        }
    }

    /// If the worker waits on the condvar, runs `claim` (the caller's
    /// bookkeeping, done before the worker can see the token) and leaves the
    /// token with `task`, returning `Ok`: the caller must then call
    /// [`notify`](Self::notify). Gives `task` back if the worker does not
    /// wait (it is still taking its second look, which should find the task
    /// where spawns normally put it).
    pub(crate) fn hand_off_if_waiting(&self, task: Task, claim: impl FnOnce()) -> Result<(), Task> {
        let mut slot = lock(&self.slot);
        if !slot.waiting {
            return Err(task);
        }
        claim();
        debug_assert!(!slot.notified && slot.task.is_none());
        slot.notified = true;
        slot.task = Some(task);
        Ok(())
    }

    /// Wakes the worker after a successful
    /// [`hand_off_if_waiting`](Self::hand_off_if_waiting).
    pub(crate) fn notify(&self) {
        self.condvar.notify_one();
    }

    /// Whether the worker waits on the condvar now (for tests that must
    /// act only once it does, without sleeping to get there).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn is_waiting(&self) -> bool {
        lock(&self.slot).waiting
    }
}
