//! Questions about the calling thread and its pool.

/// The number of threads of the current pool: the pool whose thread calls
/// it (inside [`ThreadPool::install`](crate::ThreadPool::install) too), or
/// the global pool on any other thread.
///
/// ```
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
/// assert_eq!(pool.install(rayon_core::current_num_threads), 3);
/// ```
pub fn current_num_threads() -> usize {
    match dreadpool::current() {
        Some(pool) => pool.threads(),
        None => crate::global::pool().threads(),
    }
}

/// The index of the calling thread in its pool, within
/// `0..current_num_threads()`; `None` outside every pool.
///
/// ```
/// assert_eq!(rayon_core::current_thread_index(), None);
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// assert_eq!(pool.install(rayon_core::current_thread_index), Some(0));
/// ```
#[inline]
pub fn current_thread_index() -> Option<usize> {
    dreadpool::current_worker_index()
}

/// The most threads a pool can have; larger counts asked of
/// [`ThreadPoolBuilder::num_threads`](crate::ThreadPoolBuilder::num_threads)
/// are lowered to it. dreadpool's limit (`dreadpool::MAX_THREADS`) is lower
/// than rayon's (65,535 on 64-bit targets).
pub fn max_num_threads() -> usize {
    dreadpool::MAX_THREADS
}

/// Whether the calling worker has tasks of its own queued, not yet run or
/// stolen; `None` outside every pool.
#[inline]
pub fn current_thread_has_pending_tasks() -> Option<bool> {
    dreadpool::current_thread_has_pending_tasks()
}

/// Runs `op` on a thread of the current pool: right here on a pool's
/// thread, else on the global pool, waiting for it.
pub(crate) fn in_worker<OP, R>(op: OP) -> R
where
    OP: FnOnce() -> R + Send,
    R: Send,
{
    if dreadpool::current_worker_index().is_some() {
        op()
    } else {
        crate::global::pool().install(op)
    }
}
