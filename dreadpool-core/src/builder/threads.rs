//! The builder's options for the worker threads themselves: their names,
//! stack size, start and exit handlers, and who starts them (the pool, or
//! the user's spawner through [`try_build_with_spawner`]).
//!
//! [`try_build_with_spawner`]: ThreadPoolBuilder::try_build_with_spawner

use super::ThreadPoolBuilder;
use crate::error::BuildError;
use crate::pool::ThreadPool;
use crate::sync::Arc;
use crate::thread_names::ThreadNames;
use crate::worker_start::WorkerStart;

impl ThreadPoolBuilder {
    /// Sets the thread name prefix: worker `i` is named `"{prefix}-{i}"`.
    pub fn with_thread_name(mut self, prefix: impl Into<String>) -> Self {
        self.name = Some(prefix.into());
        self
    }

    /// Names worker `i`'s thread `names(i)`, instead of `"{prefix}-{i}"`
    /// (rayon's `thread_name`). The pool keeps its prefix
    /// ([`with_thread_name`](Self::with_thread_name), or `"dreadpool"`) as
    /// its own name, which its metrics and recordings carry. A replacement
    /// thread, after a panic, gets the name of the seat it takes over.
    ///
    /// A name with a NUL byte, or a panic in `names`, fails that thread's
    /// start: [`try_build`](Self::try_build) returns
    /// [`BuildError::Spawn`](crate::BuildError::Spawn).
    ///
    /// ```
    /// let pool = dreadpool::ThreadPoolBuilder::new()
    ///     .with_threads(2)
    ///     .with_thread_names(|i| format!("render-{}", ["left", "right"][i]))
    ///     .build();
    /// let names = pool.broadcast(|_| std::thread::current().name().unwrap().to_owned());
    /// assert_eq!(names, ["render-left", "render-right"]);
    /// assert_eq!(pool.name(), "dreadpool");
    /// ```
    pub fn with_thread_names<F>(mut self, names: F) -> Self
    where
        F: Fn(usize) -> String + Send + Sync + 'static,
    {
        self.thread_names = ThreadNames::PerIndex(Arc::new(names));
        self
    }

    /// Sets each worker thread's stack size in bytes, from
    /// [`MIN_STACK_SIZE`](super::MIN_STACK_SIZE) to [`MAX_STACK_SIZE`](super::MAX_STACK_SIZE).
    pub fn with_stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    /// Sets a function every worker thread calls with its worker index when
    /// it starts, before its first task: to pin it to a core, register it
    /// with a profiler, or set up thread-local state.
    ///
    /// It runs on every thread the pool ever starts, *including* the threads
    /// that replace a panicked one under [`PanicPolicy::Respawn`](crate::PanicPolicy::Respawn) (they start
    /// clean, so their thread-local state needs setting up again), inside the
    /// worker's `dreadpool.worker` span. Each thread that ran it also runs
    /// the [exit handler](Self::with_exit_handler) before it ends, and once
    /// the pool is dropped every thread has done both.
    ///
    /// A panic in the handler is reported as a task's is (counted in
    /// [`panic_count`](crate::ThreadPool::panic_count), logged, passed to the
    /// [panic handler](Self::with_panic_handler); under
    /// [`PanicPolicy::Abort`](crate::PanicPolicy::Abort) the process aborts), and the thread then goes
    /// on as a worker: the pool is never left short of one.
    ///
    /// ```
    /// use dreadpool::ThreadPoolBuilder;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// let (started, ended) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    /// let (s, e) = (Arc::clone(&started), Arc::clone(&ended));
    /// let pool = ThreadPoolBuilder::new()
    ///     .with_threads(3)
    ///     .with_start_handler(move |_index| {
    ///         s.fetch_add(1, Ordering::Relaxed);
    ///     })
    ///     .with_exit_handler(move |_index| {
    ///         e.fetch_add(1, Ordering::Relaxed);
    ///     })
    ///     .build();
    /// drop(pool); // joins every thread
    /// assert_eq!(started.load(Ordering::Relaxed), 3);
    /// assert_eq!(ended.load(Ordering::Relaxed), 3);
    /// ```
    pub fn with_start_handler<H>(mut self, handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.hooks.start = Some(Arc::new(handler));
        self
    }

    /// Sets a function every worker thread calls with its worker index just
    /// before it ends: when the pool shuts down, and when a thread whose task
    /// panicked hands its seat to a replacement. It pairs with the
    /// [start handler](Self::with_start_handler): every thread that started
    /// runs it once, and dropping the pool returns only after all have.
    /// Panics in it are reported as the start handler's are.
    pub fn with_exit_handler<H>(mut self, handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.hooks.exit = Some(Arc::new(handler));
        self
    }

    /// Starts the pool with worker threads that `spawner` starts: it is
    /// called once per worker, in index order (every worker but 0 with
    /// [`use_current_thread`](Self::use_current_thread), whose thread is the
    /// caller's), with a [`WorkerStart`] that
    /// it must [`run`](WorkerStart::run) on a new thread (rayon's
    /// `spawn_handler`). The spawner is only borrowed while the pool is
    /// built, so it may start scoped threads, as long as the pool is
    /// dropped before their scope ends; dropping the pool waits for every
    /// worker to finish, as it does for the pool's own threads
    /// (`worker_start.rs`).
    ///
    /// Such a pool cannot start replacement threads: under
    /// [`PanicPolicy::Respawn`](crate::PanicPolicy::Respawn), a worker whose task panicked carries on.
    ///
    /// If the spawner returns an error for worker `i`, the workers already
    /// started are shut down and joined, and the build fails with
    /// [`BuildError::Spawn`](crate::BuildError::Spawn) for index `i`.
    ///
    /// ```
    /// std::thread::scope(|scope| {
    ///     let pool = dreadpool::ThreadPoolBuilder::new()
    ///         .with_threads(2)
    ///         .try_build_with_spawner(|worker| {
    ///             let name = worker.name().to_owned();
    ///             std::thread::Builder::new()
    ///                 .name(name)
    ///                 .spawn_scoped(scope, move || worker.run())?;
    ///             Ok(())
    ///         })
    ///         .unwrap();
    ///     assert_eq!(pool.install(|| 6 * 7), 42);
    ///     // The pool is dropped here, before the scope joins its threads.
    /// });
    /// ```
    pub fn try_build_with_spawner<S>(self, mut spawner: S) -> Result<ThreadPool, BuildError>
    where
        S: FnMut(WorkerStart) -> std::io::Result<()>,
    {
        self.start(Some(&mut spawner))
    }
}
