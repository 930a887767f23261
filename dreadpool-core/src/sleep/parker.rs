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
/// The token may carry a task ([`hand_off`](Self::hand_off)): the waker puts
/// it next to the token, under the same lock, and the woken worker takes both
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
            }),
            condvar: Condvar::new(),
        }
    }

    /// Blocks until [`unpark`](Self::unpark) or [`hand_off`](Self::hand_off)
    /// is (or was already) called, then consumes that token and returns the
    /// task handed over with it. Spurious condvar wakeups are absorbed here.
    pub(crate) fn park(&self) -> Option<Task> {
        let mut slot = lock(&self.slot);
        while !slot.notified {
            slot = wait(&self.condvar, slot);
        }
        slot.notified = false;
        slot.task.take()
    }

    /// Like [`park`](Self::park), giving up at `deadline`.
    pub(crate) fn park_until(&self, deadline: std::time::Instant) -> Parked {
        let mut slot = lock(&self.slot);
        while !slot.notified {
            match crate::sync::wait_until(&self.condvar, slot, Some(deadline)) {
                Ok(guard) => slot = guard,
                Err(_) => return Parked::TimedOut,
            }
        }
        slot.notified = false;
        Parked::Woken(slot.task.take())
    }

    /// Wakes the parked thread, or makes its next `park` return at once.
    pub(crate) fn unpark(&self) {
        lock(&self.slot).notified = true;
        self.condvar.notify_one();
    }

    /// [`unpark`](Self::unpark), handing `task` to the woken thread.
    ///
    /// The caller owns this wakeup (it popped the worker from the idle list),
    /// so no other token, and no other task, can be pending here.
    pub(crate) fn hand_off(&self, task: Task) {
        {
            let mut slot = lock(&self.slot);
            debug_assert!(!slot.notified && slot.task.is_none());
            slot.notified = true;
            slot.task = Some(task);
        }
        self.condvar.notify_one();
    }
}
