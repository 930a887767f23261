//! rayon's `ThreadPoolBuilder`, translated into dreadpool's.

use crate::error::ThreadPoolBuildError;
use crate::membership::{self, Seat};
use crate::pool::ThreadPool;
use crate::thread_spawn::{CustomSpawn, DefaultSpawn, ThreadBuilder, ThreadSpawn};
use std::any::Any;
use std::fmt;
use std::io;
use std::sync::Arc;

type PanicHandler = dyn Fn(Box<dyn Any + Send>) + Send + Sync;
type StartHandler = dyn Fn(usize) + Send + Sync;
type ExitHandler = dyn Fn(usize) + Send + Sync;

/// The pool name (dreadpool's metrics and recordings carry it) and the
/// thread name prefix of pools from [`ThreadPoolBuilder::build`].
pub(crate) const POOL_NAME: &str = "rayon";
/// The same, for the global pool.
pub(crate) const GLOBAL_POOL_NAME: &str = "rayon-global";

/// Configures a [`ThreadPool`] or the global pool, with rayon's methods.
///
/// ```
/// let pool = rayon_core::ThreadPoolBuilder::new()
///     .num_threads(3)
///     .thread_name(|i| format!("worker-{i}"))
///     .build()
///     .unwrap();
/// assert_eq!(pool.current_num_threads(), 3);
/// assert_eq!(pool.install(rayon_core::current_num_threads), 3);
/// ```
///
/// The spawner type `S` is `DefaultSpawn` until
/// [`spawn_handler`](Self::spawn_handler) replaces it.
pub struct ThreadPoolBuilder<S = DefaultSpawn> {
    num_threads: usize,
    use_current_thread: bool,
    panic_handler: Option<Box<PanicHandler>>,
    get_thread_name: Option<Box<dyn FnMut(usize) -> String>>,
    stack_size: Option<usize>,
    start_handler: Option<Box<StartHandler>>,
    exit_handler: Option<Box<ExitHandler>>,
    spawn_handler: S,
}

/// rayon 1.x's older name for the builder.
#[deprecated(note = "Use `ThreadPoolBuilder`")]
#[derive(Default)]
pub struct Configuration {
    builder: ThreadPoolBuilder,
}

impl Default for ThreadPoolBuilder {
    fn default() -> Self {
        ThreadPoolBuilder {
            num_threads: 0,
            use_current_thread: false,
            panic_handler: None,
            get_thread_name: None,
            stack_size: None,
            start_handler: None,
            exit_handler: None,
            spawn_handler: DefaultSpawn,
        }
    }
}

impl ThreadPoolBuilder {
    /// A builder with rayon's defaults: one thread per CPU (or
    /// `RAYON_NUM_THREADS`), no thread names of the user's, no handlers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds a pool on scoped threads, runs `with_pool` with it, and
    /// returns once the pool is dropped and all its threads have ended.
    /// `wrapper` is called on each new thread with its [`ThreadBuilder`]
    /// and must call [`run`](ThreadBuilder::run): it may set up
    /// thread-local state around it, or borrow from the caller.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let started = AtomicUsize::new(0);
    /// let sum = rayon_core::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .build_scoped(
    ///         |thread| {
    ///             started.fetch_add(1, Ordering::Relaxed);
    ///             thread.run()
    ///         },
    ///         |pool| pool.install(|| 6 * 7),
    ///     )
    ///     .unwrap();
    /// assert_eq!((sum, started.load(Ordering::Relaxed)), (42, 2));
    /// ```
    pub fn build_scoped<W, F, R>(self, wrapper: W, with_pool: F) -> Result<R, ThreadPoolBuildError>
    where
        W: Fn(ThreadBuilder) + Sync,
        F: FnOnce(&ThreadPool) -> R,
    {
        let wrapper = &wrapper;
        std::thread::scope(|scope| {
            let pool = self
                .spawn_handler(|thread| {
                    let mut builder = std::thread::Builder::new();
                    if let Some(name) = thread.name() {
                        builder = builder.name(name.to_owned());
                    }
                    if let Some(bytes) = thread.stack_size() {
                        builder = builder.stack_size(bytes);
                    }
                    builder.spawn_scoped(scope, move || wrapper(thread))?;
                    Ok(())
                })
                .build()?;
            // Dropping the pool (at the end of this closure) lets its
            // workers drain and exit; the scope then joins their threads.
            Ok(with_pool(&pool))
        })
    }
}

impl<S: ThreadSpawn> ThreadPoolBuilder<S> {
    /// Starts a pool.
    ///
    /// # Errors
    ///
    /// If a thread cannot be started (the spawn handler's error, or the
    /// OS's), if [`use_current_thread`](Self::use_current_thread) was asked
    /// of a thread that is already part of a pool, or if dreadpool refuses
    /// the configuration.
    pub fn build(self) -> Result<ThreadPool, ThreadPoolBuildError> {
        ThreadPool::build(self)
    }

    /// Configures and starts the global pool, the one used outside every
    /// pool. It can be done once, before the global pool's first use:
    /// later calls fail with "The global thread pool has already been
    /// initialized.".
    ///
    /// ```
    /// rayon_core::ThreadPoolBuilder::new().num_threads(2).build_global().unwrap();
    /// assert_eq!(rayon_core::current_num_threads(), 2);
    /// assert!(rayon_core::ThreadPoolBuilder::new().build_global().is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build), and when the global pool exists already.
    pub fn build_global(self) -> Result<(), ThreadPoolBuildError> {
        crate::global::build(self)
    }

    /// Translates this configuration into dreadpool's and starts the pool:
    /// on dreadpool's own threads, or through the spawn handler.
    pub(crate) fn start(self, seat: Seat) -> Result<dreadpool::ThreadPool, ThreadPoolBuildError> {
        self.into_parts(seat)?.start()
    }
}

/// A configuration translated for dreadpool.
pub(crate) struct Parts<S> {
    /// dreadpool's builder, complete but for the spawner.
    core: dreadpool::ThreadPoolBuilder,
    spawn_handler: S,
    /// Whether the user named the threads (see [`ThreadBuilder::name`]).
    named: bool,
    /// With `use_current_thread`, the pool the calling thread records once
    /// the build made it worker 0 (`membership.rs`).
    current_thread: Option<Seat>,
}

impl<S: ThreadSpawn> Parts<S> {
    /// Starts a pool of its own.
    pub(crate) fn start(self) -> Result<dreadpool::ThreadPool, ThreadPoolBuildError> {
        let Parts {
            core,
            mut spawn_handler,
            named,
            current_thread,
        } = self;
        let pool = match spawn_handler.custom() {
            None => core.try_build()?,
            Some(spawn) => {
                core.try_build_with_spawner(|start| spawn(ThreadBuilder::new(start, named)))?
            }
        };
        enter_current_thread(current_thread);
        Ok(pool)
    }

    /// Starts the global pool, unless it exists (dreadpool's
    /// `build_global`, or `build_global_with_spawner` for a spawn handler).
    pub(crate) fn start_global(self) -> Result<(), ThreadPoolBuildError> {
        let Parts {
            core,
            mut spawn_handler,
            named,
            current_thread,
        } = self;
        match spawn_handler.custom() {
            None => core.build_global()?,
            Some(spawn) => {
                core.build_global_with_spawner(|start| spawn(ThreadBuilder::new(start, named)))?
            }
        }
        enter_current_thread(current_thread);
        Ok(())
    }
}

/// After a successful build with `use_current_thread`, the calling thread
/// is worker 0: it records its pool, as the start handler (which the core
/// does not run for it, nor rayon) makes every other worker do. Its tasks
/// cannot look for the pool before this: it runs none until the build
/// returns. It forgets the pool when it stops being worker 0 (`pool.rs`,
/// `DetachOnDrop`).
fn enter_current_thread(seat: Option<Seat>) {
    if let Some(seat) = seat {
        membership::enter(seat);
    }
}

impl<S> ThreadPoolBuilder<S> {
    /// Starts each worker thread through `spawn` instead of
    /// `std::thread::spawn`: it is called once per worker, in index order,
    /// with a [`ThreadBuilder`] that it must [`run`](ThreadBuilder::run) on
    /// the new thread (see there for an example). An error it returns fails
    /// the build, after the threads already started have ended.
    pub fn spawn_handler<F>(self, spawn: F) -> ThreadPoolBuilder<CustomSpawn<F>>
    where
        F: FnMut(ThreadBuilder) -> io::Result<()>,
    {
        ThreadPoolBuilder {
            num_threads: self.num_threads,
            use_current_thread: self.use_current_thread,
            panic_handler: self.panic_handler,
            get_thread_name: self.get_thread_name,
            stack_size: self.stack_size,
            start_handler: self.start_handler,
            exit_handler: self.exit_handler,
            spawn_handler: CustomSpawn(spawn),
        }
    }

    /// Names each thread `closure(index)` (called once per thread, when the
    /// pool is built).
    pub fn thread_name<F>(mut self, closure: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.get_thread_name = Some(Box::new(closure));
        self
    }

    /// Sets the number of threads. `0`, the default, means
    /// `RAYON_NUM_THREADS` if it is set to a positive number, else
    /// `RAYON_RS_NUM_CPUS` if that is, else one per CPU this process may use.
    /// Counts above [`max_num_threads`](crate::max_num_threads) are lowered
    /// to it.
    pub fn num_threads(mut self, num_threads: usize) -> Self {
        self.num_threads = num_threads;
        self
    }

    /// Uses the calling thread as one of the pool's threads: its index 0.
    /// The start and exit handlers do not run for it (the thread is not the
    /// pool's), and no spawn handler is asked for it: one thread fewer is
    /// started.
    ///
    /// It runs no work-stealing loop: work spawned into the pool is picked
    /// up by it only while it waits in the pool or yields
    /// ([`yield_now`](crate::yield_now), [`yield_local`](crate::yield_local),
    /// [`scope`](crate::scope), [`join`](crate::join)). On it,
    /// [`current_thread_index`](crate::current_thread_index) is `Some(0)`,
    /// and `join`, `scope` and [`spawn`](crate::spawn) use this pool.
    ///
    /// Building fails with "The current thread is already part of another
    /// thread pool." on a thread that is already a pool's thread. Unlike
    /// rayon, which leaks the pool's state in the thread, dropping the pool
    /// ends the thread's part in it: it is an outside thread again, and may
    /// build another such pool (compat/README.md).
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .use_current_thread()
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(rayon_core::current_thread_index(), Some(0));
    /// assert_eq!(rayon_core::current_num_threads(), 2);
    /// let again = rayon_core::ThreadPoolBuilder::new().use_current_thread().build();
    /// assert_eq!(
    ///     again.unwrap_err().to_string(),
    ///     "The current thread is already part of another thread pool."
    /// );
    /// drop(pool);
    /// assert_eq!(rayon_core::current_thread_index(), None);
    /// ```
    pub fn use_current_thread(mut self) -> Self {
        self.use_current_thread = true;
        self
    }

    /// Sets the function called with the payload of every panic of a task
    /// from [`spawn`](crate::spawn) (or a pool's `spawn`, `spawn_fifo` or
    /// `spawn_broadcast`). Without one, such a panic aborts the process, as
    /// in rayon. Panics in [`join`](crate::join), scopes and
    /// [`install`](ThreadPool::install) are not task panics: they propagate
    /// to the caller.
    pub fn panic_handler<H>(mut self, panic_handler: H) -> Self
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.panic_handler = Some(Box::new(panic_handler));
        self
    }

    /// Sets each worker thread's stack size in bytes. Sizes below
    /// `dreadpool::MIN_STACK_SIZE` are raised to it (the OS would round
    /// them up anyway).
    pub fn stack_size(mut self, stack_size: usize) -> Self {
        self.stack_size = Some(stack_size);
        self
    }

    /// Does nothing, as in rayon since 1.0 (its effect was never
    /// guaranteed). Use [`scope_fifo`](crate::scope_fifo) and
    /// [`spawn_fifo`](crate::spawn_fifo) for FIFO order.
    #[deprecated(note = "use `scope_fifo` and `spawn_fifo` for similar effect")]
    pub fn breadth_first(self) -> Self {
        self
    }

    /// Sets a function each worker thread calls with its index when it
    /// starts, before any task.
    pub fn start_handler<H>(mut self, start_handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.start_handler = Some(Box::new(start_handler));
        self
    }

    /// Sets a function each worker thread calls with its index just before
    /// it exits.
    pub fn exit_handler<H>(mut self, exit_handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.exit_handler = Some(Box::new(exit_handler));
        self
    }

    /// The number of threads, resolved as rayon does.
    fn resolved_num_threads(&self) -> usize {
        let wanted = if self.num_threads > 0 {
            self.num_threads
        } else {
            threads_from_env(
                std::env::var("RAYON_NUM_THREADS").ok().as_deref(),
                std::env::var("RAYON_RS_NUM_CPUS").ok().as_deref(),
            )
        };
        wanted.min(crate::max_num_threads())
    }

    /// dreadpool's builder for this configuration; the workers record
    /// `seat` as their pool (`membership.rs`).
    pub(crate) fn into_parts(mut self, seat: Seat) -> Result<Parts<S>, ThreadPoolBuildError> {
        let threads = self.resolved_num_threads();
        let prefix = match seat {
            Seat::Global => GLOBAL_POOL_NAME,
            Seat::Owned(_) => POOL_NAME,
        };
        let mut core = dreadpool::ThreadPoolBuilder::new()
            .with_threads(threads)
            .with_thread_name(prefix);
        let current_thread = self.use_current_thread.then(|| seat.clone());
        if self.use_current_thread {
            core = core.use_current_thread();
        }
        let named = self.get_thread_name.is_some();
        if let Some(mut name) = self.get_thread_name.take() {
            // rayon's closure is `FnMut` and need not be `Send`: call it
            // here, once per index, as rayon does while building.
            let names: Vec<String> = (0..threads).map(&mut name).collect();
            core =
                core.with_thread_names(move |index| names.get(index).cloned().unwrap_or_default());
        }
        if let Some(bytes) = self.stack_size {
            core = core.with_stack_size(bytes.max(dreadpool::MIN_STACK_SIZE));
        }
        core = match self.panic_handler.take() {
            // rayon: a panicking task calls the handler, and the worker
            // goes on.
            Some(handler) => core
                .with_panic_policy(dreadpool::PanicPolicy::Continue)
                .with_panic_handler(handler),
            // rayon: with no handler, a panicking task aborts the process.
            None => core.with_panic_policy(dreadpool::PanicPolicy::Abort),
        };
        let start: Option<Arc<StartHandler>> = self.start_handler.take().map(Arc::from);
        core = core.with_start_handler(move |index| {
            membership::enter(seat.clone());
            if let Some(start) = &start {
                start(index);
            }
        });
        let exit: Option<Arc<ExitHandler>> = self.exit_handler.take().map(Arc::from);
        core = core.with_exit_handler(move |index| {
            // Leave even if the user's handler panics: the thread may
            // outlive its worker (a spawn handler's thread).
            let _leave = LeaveOnDrop;
            if let Some(exit) = &exit {
                exit(index);
            }
        });
        Ok(Parts {
            core,
            spawn_handler: self.spawn_handler,
            named,
            current_thread,
        })
    }
}

/// Forgets the worker's pool when dropped (`membership::leave`).
struct LeaveOnDrop;

impl Drop for LeaveOnDrop {
    fn drop(&mut self) {
        membership::leave();
    }
}

/// rayon's thread count when none was asked for: `RAYON_NUM_THREADS` if it
/// is a positive number (`0` means the default), else `RAYON_RS_NUM_CPUS`
/// if that is, else the CPUs this process may use. Garbage counts as unset.
fn threads_from_env(rayon_num_threads: Option<&str>, rayon_rs_num_cpus: Option<&str>) -> usize {
    let default = || std::thread::available_parallelism().map_or(1, |n| n.get());
    match rayon_num_threads.and_then(|value| value.parse::<usize>().ok()) {
        Some(0) => return default(),
        Some(threads) => return threads,
        None => {}
    }
    match rayon_rs_num_cpus.and_then(|value| value.parse::<usize>().ok()) {
        Some(threads) if threads > 0 => threads,
        _ => default(),
    }
}

#[allow(deprecated)]
impl Configuration {
    /// A configuration with the defaults.
    pub fn new() -> Configuration {
        Configuration {
            builder: ThreadPoolBuilder::new(),
        }
    }

    /// Starts a pool.
    pub fn build(self) -> Result<ThreadPool, Box<dyn std::error::Error + 'static>> {
        self.builder.build().map_err(Box::from)
    }

    /// See [`ThreadPoolBuilder::thread_name`].
    pub fn thread_name<F>(mut self, closure: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.builder = self.builder.thread_name(closure);
        self
    }

    /// See [`ThreadPoolBuilder::num_threads`].
    pub fn num_threads(mut self, num_threads: usize) -> Configuration {
        self.builder = self.builder.num_threads(num_threads);
        self
    }

    /// See [`ThreadPoolBuilder::panic_handler`].
    pub fn panic_handler<H>(mut self, panic_handler: H) -> Configuration
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.builder = self.builder.panic_handler(panic_handler);
        self
    }

    /// See [`ThreadPoolBuilder::stack_size`].
    pub fn stack_size(mut self, stack_size: usize) -> Self {
        self.builder = self.builder.stack_size(stack_size);
        self
    }

    /// See [`ThreadPoolBuilder::breadth_first`]: does nothing.
    pub fn breadth_first(mut self) -> Self {
        self.builder = self.builder.breadth_first();
        self
    }

    /// See [`ThreadPoolBuilder::start_handler`].
    pub fn start_handler<H>(mut self, start_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.builder = self.builder.start_handler(start_handler);
        self
    }

    /// See [`ThreadPoolBuilder::exit_handler`].
    pub fn exit_handler<H>(mut self, exit_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.builder = self.builder.exit_handler(exit_handler);
        self
    }

    pub(crate) fn into_builder(self) -> ThreadPoolBuilder {
        self.builder
    }
}

/// Configures and starts the global pool (rayon's old name for
/// [`ThreadPoolBuilder::build_global`]).
#[deprecated(note = "use `ThreadPoolBuilder::build_global`")]
#[allow(deprecated)]
pub fn initialize(config: Configuration) -> Result<(), Box<dyn std::error::Error>> {
    config.into_builder().build_global().map_err(Box::from)
}

impl<S> fmt::Debug for ThreadPoolBuilder<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let closure = |set: bool| set.then_some("<closure>");
        f.debug_struct("ThreadPoolBuilder")
            .field("num_threads", &self.num_threads)
            .field("use_current_thread", &self.use_current_thread)
            .field("get_thread_name", &closure(self.get_thread_name.is_some()))
            .field("panic_handler", &closure(self.panic_handler.is_some()))
            .field("stack_size", &self.stack_size)
            .field("start_handler", &closure(self.start_handler.is_some()))
            .field("exit_handler", &closure(self.exit_handler.is_some()))
            .finish()
    }
}

#[allow(deprecated)]
impl fmt::Debug for Configuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.builder.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::threads_from_env;

    #[test]
    fn rayon_num_threads_wins_then_rayon_rs_num_cpus_then_the_cpus() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(threads_from_env(Some("3"), Some("5")), 3);
        assert_eq!(threads_from_env(Some("0"), Some("5")), cpus);
        assert_eq!(threads_from_env(Some("three"), Some("5")), 5);
        assert_eq!(threads_from_env(None, Some("5")), 5);
        assert_eq!(threads_from_env(None, Some("0")), cpus);
        assert_eq!(threads_from_env(None, None), cpus);
        assert_eq!(threads_from_env(Some("-1"), None), cpus);
    }
}
