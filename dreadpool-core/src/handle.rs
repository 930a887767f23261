//! A cheap, cloneable spawner.

use crate::error::SpawnError;
use crate::registry::Registry;
use crate::sync::Arc;
use std::fmt;

/// A cheap `Clone + Send + Sync` handle that spawns into a pool, for tasks
/// and other threads to capture.
///
/// A handle does not keep the pool running: once the [`ThreadPool`] is shut
/// down or dropped, spawning from outside through a handle is refused.
///
/// ```
/// use dreadpool::ThreadPoolBuilder;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
///
/// let pool = ThreadPoolBuilder::new().with_threads(2).build();
/// let handle = pool.handle();
/// let done = Arc::new(AtomicUsize::new(0));
/// let d = Arc::clone(&done);
/// pool.spawn(move || {
///     // A task spawning more work into its own pool goes to its local queue.
///     handle.spawn(move || {
///         d.fetch_add(1, Ordering::Relaxed);
///     });
/// });
/// pool.join();
/// assert_eq!(done.load(Ordering::Relaxed), 1);
/// ```
///
/// [`ThreadPool`]: crate::ThreadPool
#[derive(Clone)]
pub struct Handle {
    pub(crate) registry: Arc<Registry>,
}

impl Handle {
    /// Spawns `task` into the pool.
    ///
    /// # Panics
    ///
    /// If the pool has shut down and the caller is not one of its tasks; use
    /// [`try_spawn`](Self::try_spawn) to get the closure back instead.
    #[inline]
    #[track_caller]
    pub fn spawn<F>(&self, task: F)
    where
        F: FnOnce() + Send + 'static,
    {
        self.registry.spawn(task);
    }

    /// Spawns `task` into the pool in FIFO order (see
    /// [`ThreadPool::spawn_fifo`](crate::ThreadPool::spawn_fifo)).
    ///
    /// # Panics
    ///
    /// If the pool has shut down and the caller is not one of its tasks.
    #[track_caller]
    pub fn spawn_fifo<F>(&self, task: F)
    where
        F: FnOnce() + Send + 'static,
    {
        self.registry.spawn_fifo(task);
    }

    /// Spawns `task` into the pool, or gives it back in the error if the pool
    /// has shut down (or is shutting down) and the caller is not one of its
    /// tasks. Tasks spawned by the pool's own tasks are always accepted, even
    /// while it drains.
    #[track_caller]
    pub fn try_spawn<F>(&self, task: F) -> Result<(), SpawnError<F>>
    where
        F: FnOnce() + Send + 'static,
    {
        self.registry.try_spawn(task).map_err(SpawnError::new)
    }

    /// Runs `f` on one of the pool's workers and returns its result (see
    /// [`ThreadPool::install`](crate::ThreadPool::install)).
    ///
    /// # Panics
    ///
    /// Re-raises the panic of `f`.
    #[track_caller]
    pub fn install<F, R>(&self, f: F) -> R
    where
        F: FnOnce() -> R + Send,
        R: Send,
    {
        crate::fork_join::install(&self.registry, f)
    }

    /// Spawns `task` and returns a [`TaskHandle`](crate::TaskHandle) to its
    /// result (see
    /// [`ThreadPool::spawn_with_handle`](crate::ThreadPool::spawn_with_handle)).
    ///
    /// # Panics
    ///
    /// If the pool has shut down and the caller is not one of its tasks.
    #[track_caller]
    pub fn spawn_with_handle<F, T>(&self, task: F) -> crate::TaskHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let (task, handle) = crate::task_handle::with_handle(task);
        self.spawn(task);
        handle
    }

    /// Runs `f(index)` once on each worker, waits for all, and returns the
    /// results by worker index (see
    /// [`ThreadPool::broadcast`](crate::ThreadPool::broadcast)).
    ///
    /// # Panics
    ///
    /// Re-raises the first panic of `f`.
    pub fn broadcast<F, R>(&self, f: F) -> Vec<R>
    where
        F: Fn(usize) -> R + Sync,
        R: Send,
    {
        crate::broadcast::broadcast(&self.registry, f)
    }

    /// Spawns `f(index)` onto each worker and returns at once (see
    /// [`ThreadPool::spawn_broadcast`](crate::ThreadPool::spawn_broadcast)).
    ///
    /// # Panics
    ///
    /// If the pool has shut down and the caller is not one of its tasks.
    #[track_caller]
    pub fn spawn_broadcast<F>(&self, f: F)
    where
        F: Fn(usize) + Send + Sync + 'static,
    {
        if crate::broadcast::spawn_broadcast(&self.registry, f) < self.registry.threads() {
            refused_broadcast(self.registry.name());
        }
    }

    /// The index of the worker running the caller, if the caller is one of
    /// this pool's tasks; `None` on any other thread, another pool's workers
    /// included.
    pub fn current_worker_index(&self) -> Option<usize> {
        crate::worker::current_index(Some(&self.registry))
    }

    /// The number of worker threads.
    pub fn threads(&self) -> usize {
        self.registry.threads()
    }

    /// The pool's name (its thread name prefix).
    pub fn name(&self) -> &str {
        self.registry.name()
    }

    /// A snapshot of the pool's counters (see
    /// [`ThreadPool::metrics`](crate::ThreadPool::metrics)).
    #[cfg(feature = "metrics")]
    pub fn metrics(&self) -> crate::PoolMetrics {
        self.registry.metrics_snapshot()
    }

    /// The flight recorder's level now (see
    /// [`ThreadPool::record_level`](crate::ThreadPool::record_level)).
    #[cfg(feature = "recorder")]
    pub fn record_level(&self) -> crate::RecordLevel {
        self.registry.recorder().level()
    }

    /// Switches the flight recorder's level (see
    /// [`ThreadPool::set_record_level`](crate::ThreadPool::set_record_level)).
    #[cfg(feature = "recorder")]
    pub fn set_record_level(&self, level: crate::RecordLevel) {
        self.registry.recorder().set_level(level);
    }

    /// A recording of the pool's recent activity (see
    /// [`ThreadPool::recording`](crate::ThreadPool::recording)).
    #[cfg(feature = "recorder")]
    pub fn recording(&self) -> crate::Recording {
        self.registry.recorder().recording()
    }

    /// How many tasks have panicked so far.
    pub fn panic_count(&self) -> usize {
        self.registry.panic_count()
    }

    /// True once the pool has begun shutting down.
    pub fn is_shut_down(&self) -> bool {
        self.registry.is_shutting_down()
    }
}

// See the same impls on `ThreadPool` for why this holds.
impl std::panic::UnwindSafe for Handle {}
impl std::panic::RefUnwindSafe for Handle {}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle")
            .field("name", &self.registry.name())
            .field("threads", &self.registry.threads())
            .finish_non_exhaustive()
    }
}

/// A [`spawn_broadcast`](Handle::spawn_broadcast) was refused.
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn refused_broadcast(pool: &str) -> ! {
    panic!(
        "dreadpool: cannot spawn_broadcast into pool {pool:?}: it has shut down (a shutdown that raced the call may have let some workers run it)"
    );
}
