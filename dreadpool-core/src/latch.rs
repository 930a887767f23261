//! A one-shot "done" signal that a worker waits on without blocking its
//! thread, and any other thread can block on.
//!
//! `scope`, `broadcast` and `TaskHandle::join` wait for tasks to finish. A
//! worker thread that simply blocked there could deadlock the pool: the tasks
//! it waits for may sit in its own local queue, which only it pops (on a
//! one-thread pool, nobody else could ever run them), or wait in turn for
//! a fork it shared in a join below the wait, which a peer may never come
//! to take. So a waiting worker keeps running tasks, its own shared forks
//! included (see `worker::wait_for`), and when there is nothing to run it
//! sleeps through its pool's ordinary sleep protocol, where both new work
//! and this latch can wake it. Threads outside any pool block on the
//! condvar.
//!
//! ## Why the waiter cannot miss the signal
//!
//! The waiter registers under the `waiters` mutex (a worker as `worker`, a
//! blocked thread by counting itself in `blocked`), then (as a worker, after
//! its sleep registration and fence) looks at `done`. The setter stores
//! `done`, then takes the same mutex to find the waiters and wake them (the
//! condvar only if a thread counted itself). If the waiter registered first,
//! the setter finds it; if the setter took the mutex first, its store of
//! `done` happened before the waiter's lock, so the waiter sees it. A worker found by the setter is woken through
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

/// Who waits on a latch, under its lock.
#[derive(Default)]
struct Waiters {
    /// A worker waiting inside one of its tasks, to wake through its pool.
    worker: Option<WorkerWaiter>,
    /// Threads blocked on the condvar. `set` notifies only when there are
    /// some: a notify is a syscall even with nobody waiting (std's futex
    /// condvar), and most latches (every `TaskHandle`'s) are set with no
    /// thread blocked on them.
    blocked: usize,
}

/// A one-shot completion signal.
pub(crate) struct Latch {
    done: AtomicBool,
    waiters: Mutex<Waiters>,
    condvar: Condvar,
}

impl Latch {
    pub(crate) fn new() -> Self {
        Latch {
            done: AtomicBool::new(false),
            waiters: Mutex::new(Waiters::default()),
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
            let mut waiters = lock(&self.waiters);
            // A blocked thread counted itself under this lock before it
            // looked at `done` and waited; one that has not yet counted
            // itself will see `done` (stored before this lock) when it does.
            if waiters.blocked > 0 {
                self.condvar.notify_all();
            }
            waiters.worker.take()
        };
        if let Some(waiter) = waiter {
            waiter.registry.sleep().wake_specific(waiter.index);
        }
    }

    /// Registers worker `index` of `registry` as the waiter, to be woken
    /// through its sleep protocol.
    pub(crate) fn register_worker(&self, registry: Arc<Registry>, index: usize) {
        lock(&self.waiters).worker = Some(WorkerWaiter { registry, index });
    }

    /// Forgets the registered worker (it stopped waiting: timed out).
    pub(crate) fn unregister_worker(&self) {
        lock(&self.waiters).worker = None;
    }

    /// Blocks the calling (non-worker) thread until set, or until
    /// `deadline`. Returns whether it is set.
    pub(crate) fn wait_blocking(&self, deadline: Option<Instant>) -> bool {
        let mut guard = lock(&self.waiters);
        guard.blocked += 1;
        let set = loop {
            if self.is_set() {
                break true;
            }
            match wait_until(&self.condvar, guard, deadline) {
                Ok(next) => guard = next,
                Err(timed_out) => {
                    guard = timed_out;
                    break false;
                }
            }
        };
        guard.blocked -= 1;
        set
    }
}
