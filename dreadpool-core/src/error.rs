//! The pool's errors.

use std::fmt;

/// Why a thread pool could not be built.
///
/// [`ThreadPoolBuilder::try_build`](crate::ThreadPoolBuilder::try_build)
/// returns it; [`build`](crate::ThreadPoolBuilder::build) panics with its
/// message. No thread is left running when a build fails.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// More threads were asked for than the pool supports.
    #[error("{requested} threads requested, but a pool has at most {max}")]
    TooManyThreads {
        /// The number asked for.
        requested: usize,
        /// [`MAX_THREADS`](crate::MAX_THREADS).
        max: usize,
    },
    /// `DREADPOOL_THREADS` is set but is not a thread count.
    #[error("DREADPOOL_THREADS={value:?} is not a number of threads (expected a whole number; 0 means one per CPU)")]
    InvalidThreadsEnv {
        /// The variable's value.
        value: String,
    },
    /// The thread name prefix contains a NUL byte, which the OS cannot take.
    #[error("thread name prefix {prefix:?} contains a NUL byte")]
    InvalidThreadName {
        /// The rejected prefix.
        prefix: String,
    },
    /// The stack size is zero, or too large to be a stack.
    #[error("stack size of {bytes} bytes is invalid (expected {min} to {max} bytes)")]
    InvalidStackSize {
        /// The size asked for.
        bytes: usize,
        /// [`MIN_STACK_SIZE`](crate::MIN_STACK_SIZE).
        min: usize,
        /// [`MAX_STACK_SIZE`](crate::MAX_STACK_SIZE).
        max: usize,
    },
    /// The backlog target is zero.
    #[error("backlog must be at least 1 task")]
    InvalidBacklog,
    /// The global queue's shard count is zero or above its maximum
    /// (`with_global_queue_shards`).
    #[error("the global queue takes 1 to {max} shards, got {shards}")]
    InvalidGlobalQueueShards {
        /// The count asked for.
        shards: usize,
        /// [`MAX_GLOBAL_QUEUE_SHARDS`](crate::MAX_GLOBAL_QUEUE_SHARDS).
        max: usize,
    },
    /// The flight recorder's ring size is below 2 or above its maximum
    /// (`with_record_capacity`, feature `recorder`).
    #[error("record capacity must be 2 to {max} events per worker, got {events}")]
    InvalidRecordCapacity {
        /// The size asked for.
        events: usize,
        /// The largest allowed.
        max: usize,
    },
    /// [`build_global`](crate::ThreadPoolBuilder::build_global) was called
    /// after the global pool had been configured or started; the pool is
    /// unchanged and no thread was started.
    #[error("the global thread pool has already been initialized")]
    GlobalPoolAlreadyInitialized,
    /// [`use_current_thread`](crate::ThreadPoolBuilder::use_current_thread)
    /// was asked of a thread that is already a worker of a pool (one built
    /// with it on this thread, or a pool's worker thread): a thread is the
    /// worker of one pool at most. No thread was started. (rayon's
    /// `CurrentThreadAlreadyInPool`.)
    #[error("the current thread is already a worker of a thread pool")]
    CurrentThreadAlreadyInPool,
    /// The operating system refused to start a worker thread, or its name
    /// (from [`with_thread_names`](crate::ThreadPoolBuilder::with_thread_names))
    /// panicked or held a NUL byte.
    #[error("could not spawn worker thread {index}: {source}")]
    Spawn {
        /// The index of the worker that could not start.
        index: usize,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// A task was refused because the pool has shut down (or is shutting down).
///
/// It holds the closure, so nothing is silently dropped: take it back with
/// [`into_inner`](Self::into_inner).
///
/// ```
/// use dreadpool::ThreadPoolBuilder;
///
/// let pool = ThreadPoolBuilder::new().with_threads(1).build();
/// let handle = pool.handle();
/// drop(pool);
/// let refused = handle.try_spawn(|| println!("too late")).unwrap_err();
/// let task = refused.into_inner(); // still ours: run it here, or drop it
/// task();
/// ```
pub struct SpawnError<F> {
    task: F,
}

impl<F> SpawnError<F> {
    pub(crate) fn new(task: F) -> Self {
        SpawnError { task }
    }

    /// The closure that was not spawned.
    pub fn into_inner(self) -> F {
        self.task
    }
}

impl<F> fmt::Debug for SpawnError<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpawnError").finish_non_exhaustive()
    }
}

impl<F> fmt::Display for SpawnError<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the thread pool has shut down and accepts no new tasks from outside")
    }
}

impl<F> std::error::Error for SpawnError<F> {}
