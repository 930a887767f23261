//! The builder's `use_current_thread` option: the building thread takes
//! seat 0 instead of a new thread (the seat itself is
//! `worker/current_thread.rs`'s). Here are the option and the check that
//! the thread is free to take the seat; `start` (`builder.rs`) takes it
//! last, once every other worker has started, so that a failed build
//! leaves the thread as it was.

use super::ThreadPoolBuilder;
use crate::error::BuildError;

impl ThreadPoolBuilder {
    /// Makes the thread that builds the pool its worker 0 (rayon's
    /// `use_current_thread`): the pool starts one thread fewer, and this
    /// thread owns worker 0's local queue. After the build,
    /// [`current_worker_index`](crate::current_worker_index) is `Some(0)`
    /// on it, and [`install`](crate::ThreadPool::install),
    /// [`join`](crate::join), [`scope`](crate::ThreadPool::scope) and
    /// [`yield_now`](crate::yield_now) called on it act as worker 0 of the
    /// pool: they run its tasks, steal, and take from the global queue while
    /// they wait. Its spawns go to its local queue, where the other workers
    /// may steal them. The start and exit handlers do not run for it, and
    /// it keeps its own name: the thread is not the pool's.
    ///
    /// It runs no worker loop: tasks spawned into the pool are run by this
    /// thread only when it yields or waits in one of those calls (with one
    /// thread in all, only then). Tasks addressed to worker 0 alone
    /// ([`broadcast`](crate::ThreadPool::broadcast),
    /// [`spawn_broadcast`](crate::ThreadPool::spawn_broadcast)) wait for it.
    /// [`ThreadPool::join`](crate::ThreadPool::join) called on this thread
    /// panics, as from any of the pool's tasks (it would wait for a worker
    /// that waits); use a scope.
    ///
    /// The thread leaves seat 0 when it drops the pool (outside any wait of
    /// its own: the drop then joins the other threads), and when it exits
    /// while the pool lives: the tasks in its queue are left to the other
    /// workers, and tasks addressed to worker 0 alone run on another worker
    /// from then on. Afterwards it is an outside thread again.
    ///
    /// Building fails with [`BuildError::CurrentThreadAlreadyInPool`](crate::BuildError::CurrentThreadAlreadyInPool) on a
    /// thread that is already a worker of a pool, this way or as one of its
    /// threads. With [`build_global`](Self::build_global) (or
    /// [`build_global_with_spawner`](Self::build_global_with_spawner)), the
    /// calling thread becomes worker 0 of the global pool for good (it is
    /// never dropped).
    ///
    /// ```
    /// use dreadpool::{ThreadPoolBuilder, Yield};
    /// use std::sync::mpsc;
    ///
    /// let pool = ThreadPoolBuilder::new().with_threads(2).use_current_thread().build();
    /// assert_eq!(pool.current_worker_index(), Some(0));
    /// // A task spawned from here waits in worker 0's queue, to be stolen by
    /// // worker 1 or run here when this thread yields.
    /// let (sent, received) = mpsc::channel();
    /// pool.spawn(move || sent.send(dreadpool::current_worker_index()).unwrap());
    /// while received.try_recv().is_err() {
    ///     if dreadpool::yield_now() == Some(Yield::Idle) {
    ///         std::thread::yield_now();
    ///     }
    /// }
    /// // A scope on this thread runs on worker 0, and waits as a worker.
    /// let (mut a, mut b) = (0, 0);
    /// pool.scope(|s| {
    ///     s.spawn(|| a = 1);
    ///     s.spawn(|| b = 2);
    /// });
    /// assert_eq!(a + b, 3);
    /// assert!(ThreadPoolBuilder::new().use_current_thread().try_build().is_err());
    /// drop(pool); // this thread leaves seat 0
    /// assert_eq!(dreadpool::current_worker_index(), None);
    /// ```
    pub fn use_current_thread(mut self) -> Self {
        self.use_current_thread = true;
        self
    }
}

/// Refuses `use_current_thread` on a thread that is already a worker of a
/// pool (rayon's rule: a thread is the worker of one pool at most). Done
/// before any thread starts, so that the refusal starts none.
pub(super) fn check_free(use_current_thread: bool) -> Result<(), BuildError> {
    if use_current_thread && !crate::worker::current_ptr().is_null() {
        return Err(BuildError::CurrentThreadAlreadyInPool);
    }
    Ok(())
}
