//! Finding the pool you are running in.

use crate::handle::Handle;

/// Inside a task, the [`Handle`] of the pool running it; `None` on any
/// thread that is not one of a pool's workers. Lets library code spawn into
/// whatever pool it is called from, without threading a handle through.
///
/// ```
/// use dreadpool::ThreadPoolBuilder;
///
/// assert!(dreadpool::current().is_none());
/// let pool = ThreadPoolBuilder::new().with_thread_name("here").build();
/// let name = pool.spawn_with_handle(|| dreadpool::current().map(|h| h.name().to_owned()));
/// assert_eq!(name.join().unwrap().as_deref(), Some("here"));
/// ```
pub fn current() -> Option<Handle> {
    crate::worker::current_registry().map(|registry| Handle { registry })
}

/// Inside a task, the index of the worker running it (its thread is named
/// `"{pool}-{index}"`); `None` outside any pool.
///
/// ```
/// let pool = dreadpool::ThreadPoolBuilder::new().with_threads(3).build();
/// let mut seen = pool.broadcast(|index| (index, dreadpool::current_worker_index()));
/// for (index, current) in seen.drain(..) {
///     assert_eq!(Some(index), current);
/// }
/// assert_eq!(dreadpool::current_worker_index(), None);
/// ```
pub fn current_worker_index() -> Option<usize> {
    crate::worker::current_index(None)
}

/// The number of worker threads of the pool running the caller, or, on any
/// other thread, of the [global pool](crate::global_pool) (which this starts
/// if nothing has yet): how many ways a computation started here can split
/// (rayon's `current_num_threads`).
///
/// ```
/// let pool = dreadpool::ThreadPoolBuilder::new().with_threads(3).build();
/// assert_eq!(pool.install(dreadpool::current_threads), 3);
/// assert_eq!(dreadpool::current_threads(), dreadpool::global_pool().threads());
/// ```
pub fn current_threads() -> usize {
    match crate::worker::current_registry() {
        Some(registry) => registry.threads(),
        None => crate::global_pool().threads(),
    }
}
