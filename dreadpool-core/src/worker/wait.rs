//! Waiting inside a task for a latch: a worker keeps running its pool's
//! tasks meanwhile and sleeps through the pool's protocol (`latch.rs`).

use super::current::current_ptr;
use super::run_loop::Exit;
use super::WorkerThread;
use crate::fork_join::ForkLatch;
use crate::latch::Latch;
use crate::sync::Arc;
use std::time::Instant;

/// What a nested worker loop (a worker waiting inside one of its tasks)
/// runs until.
pub(super) struct WaitTarget<'a> {
    pub(super) latch: WaitLatch<'a>,
    pub(super) deadline: Option<Instant>,
}

/// The latch a nested worker loop waits on.
#[derive(Clone, Copy)]
pub(super) enum WaitLatch<'a> {
    /// A scope's, a broadcast's or a task handle's.
    Task(&'a Latch),
    /// A join's whose second half was stolen: the loop looks for work in
    /// the order that helps it finish (`find_task_in_join`).
    Fork(&'a ForkLatch),
}

impl WaitLatch<'_> {
    pub(super) fn is_set(self) -> bool {
        match self {
            WaitLatch::Task(latch) => latch.is_set(),
            WaitLatch::Fork(latch) => latch.is_set(),
        }
    }

    /// The second look before a sleep (after the sleep registration):
    /// true if set. A fork latch is marked so that its setter wakes us
    /// (`fork_join/fork_latch.rs`); a task latch's waiter was registered
    /// before the loop started (`latch.rs`).
    pub(super) fn is_set_before_sleep(self) -> bool {
        match self {
            WaitLatch::Task(latch) => latch.is_set(),
            WaitLatch::Fork(latch) => !latch.mark_sleepy(),
        }
    }
}

/// Waits until `latch` is set, or until `deadline`; returns whether it is set.
///
/// On a worker thread (of any pool) the worker keeps running its pool's
/// tasks while it waits, and sleeps through the pool's sleep protocol when
/// there are none, so waiting inside a task can never deadlock the pool (see
/// `latch.rs`). A task it runs meanwhile that panics under
/// [`PanicPolicy::Respawn`] is handled as under `Continue`: the thread cannot
/// be replaced in the middle of the task that is waiting. On any other thread
/// it simply blocks. A long task run meanwhile can delay the return past
/// `deadline`.
pub(crate) fn wait_for(latch: &Latch, deadline: Option<Instant>) -> bool {
    if latch.is_set() {
        return true;
    }
    let worker = current_ptr();
    if worker.is_null() {
        return latch.wait_blocking(deadline);
    }
    // SAFETY: non-null: this thread is a worker, inside one of its tasks
    // (the one waiting), which the worker outlives.
    let worker = unsafe { &*worker };
    let _user_thread = worker.enter_wait();
    worker.probe().wait_begin();
    let set = worker.wait_in_loop(latch, deadline);
    worker.probe().wait_end();
    set
}

impl WorkerThread {
    /// [`wait_for`] on this worker.
    ///
    /// First it runs the tasks in its own queue, newest first, until the
    /// latch is set: what a scope or a handle waits for was usually spawned
    /// right there, so most waits end without registering as the latch's
    /// waiter. Registering clones the pool's `Arc` (a contended count) and
    /// locks the latch, and the setter of a latch with a waiter locks the
    /// pool's idle list to wake it, a cost every nested scope paid when each
    /// wait registered (`BENCHMARKS.md`, "Core design figures":
    /// worker-wait-own-queue-first). Only when its queue is empty does it
    /// register and run the general loop, which sleeps when there is
    /// nothing anywhere.
    pub(super) fn wait_in_loop(&self, latch: &Latch, deadline: Option<Instant>) -> bool {
        while let Some(task) = self.state.queue.pop() {
            self.execute(task, true);
            if latch.is_set() {
                return true;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return false;
            }
        }
        latch.register_worker(Arc::clone(&self.registry), self.state.index);
        let exit = self.run_loop(Some(&WaitTarget {
            latch: WaitLatch::Task(latch),
            deadline,
        }));
        match exit {
            Exit::Done => true,
            Exit::TimedOut => {
                latch.unregister_worker();
                latch.is_set()
            }
            // Neither can happen while the waiting task itself is pending
            // (the pool is not idle, and nested loops handle Respawn as
            // Continue); if it ever did, blocking is still correct.
            Exit::Shutdown | Exit::Respawn => latch.wait_blocking(deadline),
        }
    }

    /// Waits at the end of a join until the thief that took its fork has
    /// run it, running other work meanwhile (`find_task_in_join`), and
    /// sleeping through the pool's protocol when there is none.
    #[cold]
    #[inline(never)]
    pub(crate) fn wait_for_fork(&self, latch: &ForkLatch) {
        if latch.is_set() {
            return;
        }
        let _user_thread = self.enter_wait();
        self.probe().wait_begin();
        let exit = self.run_loop(Some(&WaitTarget {
            latch: WaitLatch::Fork(latch),
            deadline: None,
        }));
        self.probe().wait_end();
        if !matches!(exit, Exit::Done) {
            // Neither shutdown (the pool is not idle while the joining task
            // runs) nor a respawn (nested loops treat it as `Continue`) can
            // end this loop; should one ever, the thief still sets the latch.
            while !latch.is_set() {
                crate::sync::thread::yield_now();
            }
        }
    }
}
