//! Giving way inside a task: running one other task of the pool on the
//! spot ([`yield_now`], [`yield_local`]), and asking whether there is one
//! ([`current_thread_has_pending_tasks`]); rayon's functions of the same
//! names.
//!
//! The task run meanwhile runs nested, on the yielding task's stack, as a
//! task run while waiting does (`wait.rs`): a panic in it under
//! `PanicPolicy::Respawn` is handled as under `Continue`, since the thread
//! cannot be replaced in the middle of the yielding task.

use super::current::current_ptr;
use super::WorkerThread;
use crate::fork_join::steal_fork;
use crate::task::Task;

/// What a [`yield_now`] or [`yield_local`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Yield {
    /// Another task ran, and has returned.
    Executed,
    /// There was no task to run.
    Idle,
}

/// Runs one other task of the current pool, if there is one anywhere it can
/// take from: its own queue, its inbox, a peer's shared fork, the global
/// queue, a peer's queue. `None` when not called on a worker thread.
///
/// ```
/// use dreadpool::Yield;
///
/// assert_eq!(dreadpool::yield_now(), None); // not a worker
/// let pool = dreadpool::ThreadPoolBuilder::new().with_threads(1).build();
/// let ran = pool.install(|| {
///     let (sent, received) = std::sync::mpsc::channel();
///     dreadpool::current().unwrap().spawn(move || sent.send(()).unwrap());
///     (dreadpool::yield_now(), received.try_recv().is_ok())
/// });
/// assert_eq!(ran, (Some(Yield::Executed), true));
/// ```
pub fn yield_now() -> Option<Yield> {
    with_worker(|worker| {
        worker
            .state
            .queue
            .pop()
            .or_else(|| worker.pull_inbox())
            .or_else(|| steal_fork(worker))
            .or_else(|| worker.pull_global())
            .or_else(|| worker.steal_from_peers())
    })
}

/// Runs one task from the current worker's own queue, if it holds one
/// (the newest), taking nothing from elsewhere. `None` when not called on a
/// worker thread.
///
/// ```
/// use dreadpool::Yield;
///
/// let pool = dreadpool::ThreadPoolBuilder::new().with_threads(1).build();
/// let idle = pool.install(dreadpool::yield_local);
/// assert_eq!(idle, Some(Yield::Idle));
/// ```
pub fn yield_local() -> Option<Yield> {
    with_worker(|worker| worker.state.queue.pop())
}

/// Whether the current worker's own queue holds tasks (ones it spawned, not
/// yet run or stolen); `None` when not called on a worker thread.
///
/// ```
/// let pool = dreadpool::ThreadPoolBuilder::new().with_threads(1).build();
/// let pending = pool.install(|| {
///     let before = dreadpool::current_thread_has_pending_tasks();
///     dreadpool::current().unwrap().spawn(|| ());
///     (before, dreadpool::current_thread_has_pending_tasks())
/// });
/// assert_eq!(pending, (Some(false), Some(true)));
/// assert_eq!(dreadpool::current_thread_has_pending_tasks(), None);
/// ```
pub fn current_thread_has_pending_tasks() -> Option<bool> {
    let worker = current_ptr();
    if worker.is_null() {
        return None;
    }
    // SAFETY: non-null: this thread is a worker, inside one of its tasks,
    // which the worker outlives.
    let worker = unsafe { &*worker };
    Some(!worker.state.queue.is_empty())
}

/// Runs the task `find` finds on the current worker, if any.
fn with_worker(find: impl FnOnce(&WorkerThread) -> Option<Task>) -> Option<Yield> {
    let worker = current_ptr();
    if worker.is_null() {
        return None;
    }
    // SAFETY: non-null: this thread is a worker, inside one of its tasks
    // (the one yielding), which the worker outlives.
    let worker = unsafe { &*worker };
    let _user_thread = worker.enter_wait();
    Some(match find(worker) {
        Some(task) => {
            // Nested: a Respawn is handled as Continue (see the module doc).
            let _ = worker.execute(task, true);
            Yield::Executed
        }
        None => Yield::Idle,
    })
}
