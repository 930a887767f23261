//! A one-shot "done" signal that a worker waits on without blocking its
//! thread, and any other thread can block on.
//!
//! `scope`, `broadcast` and `TaskHandle::join` wait for tasks to finish. A
//! worker thread that simply blocked there could deadlock the pool: the tasks
//! it waits for may sit in its own local queue, which only it pops (on a
//! one-thread pool, nobody else could ever run them). So a waiting worker
//! keeps running tasks (see `worker::wait_for`), and when there is nothing to
//! run it sleeps through its pool's ordinary sleep protocol, where both new
//! work and this latch can wake it. Threads outside any pool block on the
//! condvar.
//!
//! ## Why the waiter cannot miss the signal
//!
//! The waiter registers under `waiter`'s mutex, then (as a worker, after its
//! sleep registration and fence) looks at `done`. The setter stores `done`,
//! then takes the same mutex to find the waiter and wake it. If the waiter
//! registered first, the setter finds it; if the setter took the mutex first,
//! its store of `done` happened before the waiter's lock, so the waiter sees
//! it. A worker found by the setter is woken through
//! `Sleep::wake_specific`, which is a no-op if the worker is not asleep (it is
//! then running or searching and will look at `done` before it sleeps again:
//! its sleep registration, done under the idle-list lock that
//! `wake_specific` also takes, precedes its second look at `done`).

use crate::registry::Registry;
use crate::sync::atomic::{AtomicBool, Ordering};
use crate::sync::{lock, wait_until, Arc, Condvar, Mutex};
use std::time::Instant;

/// A worker of some pool that waits on a latch.
struct WorkerWaiter {
    registry: Arc<Registry>,
    index: usize,
}

/// A one-shot completion signal.
pub(crate) struct Latch {
    done: AtomicBool,
    waiter: Mutex<Option<WorkerWaiter>>,
    condvar: Condvar,
}

impl Latch {
    pub(crate) fn new() -> Self {
        Latch {
            done: AtomicBool::new(false),
            waiter: Mutex::new(None),
            condvar: Condvar::new(),
        }
    }

    /// True once [`set`](Self::set) was called. `Acquire`: pairs with the
    /// setter's `Release`, so everything the finished work did is visible.
    pub(crate) fn is_set(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// Signals completion and wakes the waiter, wherever it waits.
    pub(crate) fn set(&self) {
        self.done.store(true, Ordering::Release);
        let waiter = {
            let mut waiter = lock(&self.waiter);
            self.condvar.notify_all();
            waiter.take()
        };
        if let Some(waiter) = waiter {
            waiter.registry.sleep.wake_specific(waiter.index);
        }
    }

    /// Registers worker `index` of `registry` as the waiter, to be woken
    /// through its sleep protocol.
    pub(crate) fn register_worker(&self, registry: Arc<Registry>, index: usize) {
        *lock(&self.waiter) = Some(WorkerWaiter { registry, index });
    }

    /// Forgets the registered worker (it stopped waiting: timed out).
    pub(crate) fn unregister_worker(&self) {
        *lock(&self.waiter) = None;
    }

    /// Blocks the calling (non-worker) thread until set, or until
    /// `deadline`. Returns whether it is set.
    pub(crate) fn wait_blocking(&self, deadline: Option<Instant>) -> bool {
        let mut guard = lock(&self.waiter);
        while !self.is_set() {
            match wait_until(&self.condvar, guard, deadline) {
                Ok(next) => guard = next,
                Err(_) => return false,
            }
        }
        true
    }
}
