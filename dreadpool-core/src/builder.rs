//! Configuring and starting a pool.

use crate::error::BuildError;
use crate::panic::{PanicHandler, PanicPayload, PanicPolicy};
use crate::pool::ThreadPool;
use crate::queue::Worker;
use crate::recorder::RecorderConfig;
use crate::registry::{Registry, RegistryConfig};
use crate::sync::Arc;
use crate::thread_hooks::ThreadHooks;
use crate::thread_names::ThreadNames;
use crate::worker::WorkerSeat;
use crate::worker_start::WorkerStart;
use std::fmt;

/// The most worker threads one pool may have.
///
/// A CPU pool gains nothing from more threads than this, and some per-pool
/// state grows with the square of the thread count (the `metrics` feature's
/// steal matrix: 8 MiB at this limit).
pub const MAX_THREADS: usize = 1024;
/// The smallest stack a worker may be given (Linux's `PTHREAD_STACK_MIN`).
pub const MIN_STACK_SIZE: usize = 16 * 1024;
/// The largest stack a worker may be given (1 TiB: anything larger is a
/// mistake, and overflows the OS's page rounding).
pub const MAX_STACK_SIZE: usize = 1 << 40;
/// The default backlog target: how many tasks a worker keeps in its local
/// queue when it tops off from the global queue.
pub const DEFAULT_BACKLOG: usize = 32;
/// The environment variable that sets the thread count when the builder
/// leaves it at 0.
pub const THREADS_ENV: &str = "DREADPOOL_THREADS";
/// The default thread name prefix.
pub const DEFAULT_THREAD_NAME: &str = "dreadpool";

/// Configures a [`ThreadPool`].
///
/// ```
/// use dreadpool::{PanicPolicy, ThreadPoolBuilder};
///
/// let pool = ThreadPoolBuilder::new()
///     .with_threads(4)
///     .with_thread_name("dreadpool-worker")
///     .with_stack_size(4 * 1024 * 1024)
///     .with_backlog(64)
///     .with_panic_policy(PanicPolicy::Respawn)
///     .with_panic_handler(|payload| eprintln!("task panicked: {payload:?}"))
///     .build();
/// assert_eq!(pool.threads(), 4);
/// assert_eq!(pool.name(), "dreadpool-worker");
/// ```
#[must_use = "a builder does nothing until `build` is called"]
#[derive(Clone)]
pub struct ThreadPoolBuilder {
    threads: usize,
    name: Option<String>,
    stack_size: Option<usize>,
    backlog: usize,
    panic_policy: PanicPolicy,
    panic_handler: Option<PanicHandler>,
    hooks: ThreadHooks,
    thread_names: ThreadNames,
    recorder: RecorderConfig,
    latency_sampling: u32,
    respawn_failures_to_inject: usize,
    use_current_thread: bool,
}

impl Default for ThreadPoolBuilder {
    fn default() -> Self {
        ThreadPoolBuilder {
            threads: 0,
            name: None,
            stack_size: None,
            backlog: DEFAULT_BACKLOG,
            panic_policy: PanicPolicy::default(),
            panic_handler: None,
            hooks: ThreadHooks::default(),
            thread_names: ThreadNames::Prefixed,
            recorder: RecorderConfig::default(),
            latency_sampling: crate::metrics::DEFAULT_LATENCY_SAMPLING,
            respawn_failures_to_inject: 0,
            use_current_thread: false,
        }
    }
}

impl fmt::Debug for ThreadPoolBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPoolBuilder")
            .field("threads", &self.threads)
            .field("name", &self.name)
            .field("thread_names", &self.thread_names)
            .field("stack_size", &self.stack_size)
            .field("backlog", &self.backlog)
            .field("panic_policy", &self.panic_policy)
            .field("panic_handler", &self.panic_handler.is_some())
            .field("start_handler", &self.hooks.start.is_some())
            .field("exit_handler", &self.hooks.exit.is_some())
            .field("latency_sampling", &self.latency_sampling)
            .finish()
    }
}

impl ThreadPoolBuilder {
    /// A builder with the defaults: one thread per CPU (or
    /// `DREADPOOL_THREADS`), names `dreadpool-0`, `dreadpool-1`, ..., the OS's
    /// default stack size, a backlog of [`DEFAULT_BACKLOG`], and
    /// [`PanicPolicy::Respawn`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the number of worker threads. `0` (the default) means the
    /// `DREADPOOL_THREADS` environment variable if it is set to a positive
    /// number, else the CPUs this process may use, not the host's core
    /// count: `std::thread::available_parallelism`, which on Linux reads
    /// the process's affinity mask (`taskset`, cpusets: tested in
    /// `tests/cpu_quota.rs`) and its cgroup's CPU quota (cgroup v2
    /// `cpu.max`, v1 `cpu.cfs_quota_us`). A fractional quota is rounded
    /// down, to at least one thread: a container run with `--cpus=1.5` gets
    /// one worker, and one with `--cpus=4` on a 64-core host gets four. Set
    /// the count yourself (or `DREADPOOL_THREADS`) to round up instead.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

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
    /// [`MIN_STACK_SIZE`] to [`MAX_STACK_SIZE`].
    pub fn with_stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    /// Sets the backlog target: when a worker's local queue runs short it
    /// takes up to this many tasks from the global queue at once. Larger
    /// batches mean fewer trips to the shared queue; smaller ones spread
    /// bursts of outside work across workers sooner. At least 1.
    pub fn with_backlog(mut self, tasks: usize) -> Self {
        self.backlog = tasks;
        self
    }

    /// Sets what happens to a worker whose task panics (see [`PanicPolicy`]).
    pub fn with_panic_policy(mut self, policy: PanicPolicy) -> Self {
        self.panic_policy = policy;
        self
    }

    /// Sets a function called, on the worker thread, with the payload of every
    /// task panic. A panic inside the handler is caught and ignored.
    pub fn with_panic_handler<H>(mut self, handler: H) -> Self
    where
        H: Fn(PanicPayload) + Send + Sync + 'static,
    {
        self.panic_handler = Some(Arc::new(handler));
        self
    }

    /// Sets a function every worker thread calls with its worker index when
    /// it starts, before its first task: to pin it to a core, register it
    /// with a profiler, or set up thread-local state.
    ///
    /// It runs on every thread the pool ever starts, *including* the threads
    /// that replace a panicked one under [`PanicPolicy::Respawn`] (they start
    /// clean, so their thread-local state needs setting up again), inside the
    /// worker's `dreadpool.worker` span. Each thread that ran it also runs
    /// the [exit handler](Self::with_exit_handler) before it ends, and once
    /// the pool is dropped every thread has done both.
    ///
    /// A panic in the handler is reported as a task's is (counted in
    /// [`panic_count`](crate::ThreadPool::panic_count), logged, passed to the
    /// [panic handler](Self::with_panic_handler); under
    /// [`PanicPolicy::Abort`] the process aborts), and the thread then goes
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

    /// Times one task in `n` for the latency histograms of
    /// [`ThreadPool::metrics`](crate::ThreadPool::metrics) (schedule delay and
    /// run time); `1` times every task, `0` none. The default,
    /// [`DEFAULT_LATENCY_SAMPLING`](crate::DEFAULT_LATENCY_SAMPLING), costs
    /// three clock reads and one small allocation per 256 tasks, and a
    /// countdown on every spawn (`BENCHMARKS.md` has what that adds per task).
    /// Each worker picks every `n`th of its own spawns into the pool, and each
    /// other thread every `n`th of its spawns (counting those into other
    /// pools too), so the sample is spread across spawners. A pool that runs
    /// few tasks may want a smaller `n` to fill its histograms sooner.
    ///
    /// How much accuracy sampling costs is measured by the
    /// `sampling_accuracy` example (`cargo run --release --example
    /// sampling_accuracy --features metrics`): sampling 1 in 256 kept the
    /// run-time percentiles within one histogram bucket (12.5% wide) of
    /// timing every task, the histogram's own resolution (`BENCHMARKS.md`,
    /// "Core design figures": builder-latency-sampling-accuracy).
    #[cfg(feature = "metrics")]
    pub fn with_latency_sampling(mut self, n: u32) -> Self {
        self.latency_sampling = n;
        self
    }

    /// Sets what the flight recorder records from the start (default:
    /// [`RecordLevel::Scheduler`](crate::RecordLevel::Scheduler)); change it
    /// later with [`ThreadPool::set_record_level`](crate::ThreadPool::set_record_level).
    /// The rings are allocated at build whatever the level, from zeroed
    /// memory: at `Off` they record nothing, and pages that were never
    /// written need not be resident.
    ///
    /// ```
    /// use dreadpool::{RecordLevel, ThreadPoolBuilder};
    ///
    /// let pool = ThreadPoolBuilder::new().with_record_level(RecordLevel::Off).build();
    /// assert_eq!(pool.record_level(), RecordLevel::Off);
    /// assert!(pool.recording().events().is_empty());
    /// ```
    #[cfg(feature = "recorder")]
    pub fn with_record_level(mut self, level: crate::RecordLevel) -> Self {
        self.recorder.level = Some(level);
        self
    }

    /// Sets how many events each worker's ring keeps (rounded up to a power
    /// of two; default [`DEFAULT_RECORD_CAPACITY`](crate::DEFAULT_RECORD_CAPACITY),
    /// 65,536 events, 1.5 MiB per worker). Each event takes 24 bytes; the
    /// memory is allocated once and its pages are touched only as events
    /// fill them. Must be at least 2 ([`BuildError::InvalidRecordCapacity`]).
    #[cfg(feature = "recorder")]
    pub fn with_record_capacity(mut self, events_per_worker: usize) -> Self {
        self.recorder.capacity = Some(events_per_worker);
        self
    }

    /// Takes and writes a recording by itself when a task panics or a
    /// sampled task is slow (see [`RecordTrigger`](crate::RecordTrigger)).
    #[cfg(feature = "recorder")]
    pub fn with_record_trigger(mut self, trigger: crate::RecordTrigger) -> Self {
        self.recorder.trigger = Some(trigger);
        self
    }

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
    /// Building fails with [`BuildError::CurrentThreadAlreadyInPool`] on a
    /// thread that is already a worker of a pool, this way or as one of its
    /// threads. With [`build_global`](Self::build_global), the calling
    /// thread becomes worker 0 of the global pool for good (it is never
    /// dropped).
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

    /// Fault injection for tests: the next `count` replacement threads
    /// (after a panic under [`PanicPolicy::Respawn`]) fail to spawn as if the
    /// OS had refused them. Not part of the stable API.
    #[doc(hidden)]
    pub fn __inject_respawn_failures(mut self, count: usize) -> Self {
        self.respawn_failures_to_inject = count;
        self
    }

    /// Starts the pool.
    ///
    /// # Panics
    ///
    /// If the pool cannot start, with the [`BuildError`]'s message; use
    /// [`try_build`](Self::try_build) to handle that instead.
    pub fn build(self) -> ThreadPool {
        self.try_build()
            .unwrap_or_else(|error| panic!("dreadpool: cannot build the thread pool: {error}"))
    }

    /// Configures and starts the global pool (the one [`join`](crate::join)
    /// outside every pool runs on, and [`global_pool`](crate::global_pool)
    /// returns), once. It succeeds only before the global pool's first use:
    /// after that it returns
    /// [`BuildError::GlobalPoolAlreadyInitialized`], leaves the pool as it
    /// is and starts no thread. Of racing calls exactly one succeeds. A
    /// failed build leaves the global pool unset, for a later call to set.
    ///
    /// ```
    /// use dreadpool::{BuildError, ThreadPoolBuilder};
    ///
    /// ThreadPoolBuilder::new().with_threads(2).build_global().unwrap();
    /// assert_eq!(dreadpool::global_pool().threads(), 2);
    /// let again = ThreadPoolBuilder::new().with_threads(3).build_global();
    /// assert!(matches!(again, Err(BuildError::GlobalPoolAlreadyInitialized)));
    /// ```
    pub fn build_global(self) -> Result<(), BuildError> {
        crate::fork_join::build_global(self).map(|_| ())
    }

    /// Starts the pool, or says why it cannot. No thread is left running when
    /// this fails.
    ///
    /// ```
    /// use dreadpool::{BuildError, ThreadPoolBuilder};
    ///
    /// let error = ThreadPoolBuilder::new().with_thread_name("bad\0name").try_build().unwrap_err();
    /// assert!(matches!(error, BuildError::InvalidThreadName { .. }));
    /// ```
    pub fn try_build(self) -> Result<ThreadPool, BuildError> {
        self.start(None)
    }

    /// Starts the pool with worker threads that `spawner` starts: it is
    /// called once per worker, in index order, with a [`WorkerStart`] that
    /// it must [`run`](WorkerStart::run) on a new thread (rayon's
    /// `spawn_handler`). The spawner is only borrowed while the pool is
    /// built, so it may start scoped threads, as long as the pool is
    /// dropped before their scope ends; dropping the pool waits for every
    /// worker to finish, as it does for the pool's own threads
    /// (`worker_start.rs`).
    ///
    /// Such a pool cannot start replacement threads: under
    /// [`PanicPolicy::Respawn`], a worker whose task panicked carries on.
    ///
    /// If the spawner returns an error for worker `i`, the workers already
    /// started are shut down and joined, and the build fails with
    /// [`BuildError::Spawn`] for index `i`.
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

    /// Validates, then starts the workers on the pool's own threads, or
    /// through `spawner`.
    fn start(
        self,
        mut spawner: Option<&mut dyn FnMut(WorkerStart) -> std::io::Result<()>>,
    ) -> Result<ThreadPool, BuildError> {
        let threads = resolve_threads(self.threads, std::env::var(THREADS_ENV).ok())?;
        let name = self.name.unwrap_or_else(|| DEFAULT_THREAD_NAME.to_owned());
        if name.contains('\0') {
            return Err(BuildError::InvalidThreadName { prefix: name });
        }
        if let Some(bytes) = self.stack_size {
            if !(MIN_STACK_SIZE..=MAX_STACK_SIZE).contains(&bytes) {
                return Err(BuildError::InvalidStackSize {
                    bytes,
                    min: MIN_STACK_SIZE,
                    max: MAX_STACK_SIZE,
                });
            }
        }
        if self.backlog == 0 {
            return Err(BuildError::InvalidBacklog);
        }
        if self.use_current_thread && !crate::worker::current_ptr().is_null() {
            return Err(BuildError::CurrentThreadAlreadyInPool);
        }
        #[cfg(feature = "recorder")]
        if let Some(events) = self.recorder.capacity {
            if !(2..=crate::recorder::MAX_RECORD_CAPACITY).contains(&events) {
                return Err(BuildError::InvalidRecordCapacity {
                    events,
                    max: crate::recorder::MAX_RECORD_CAPACITY,
                });
            }
        }

        // LIFO local queues, not the seed's FIFO: a worker waiting inside a
        // task (scope, broadcast, TaskHandle::join) runs other tasks on its
        // own stack, and popping its newest task (its own scope's children)
        // keeps that nesting as deep as the task tree, where FIFO would walk
        // the tree breadth-first, one stack frame per open scope, and
        // overflow the stack (a 10M-element parallel quicksort did). Newest
        // first is also the cache-warm order. Fairness is kept by thieves,
        // which take the oldest tasks, and by the global queue check.
        let queues: Vec<Worker<_>> = (0..threads).map(|_| Worker::new_lifo()).collect();
        let registry = Arc::new(Registry::new(RegistryConfig {
            name,
            stealers: queues.iter().map(Worker::stealer).collect(),
            backlog: self.backlog,
            panic_policy: self.panic_policy,
            panic_handler: self.panic_handler,
            hooks: self.hooks,
            thread_names: self.thread_names,
            replaces_threads: spawner.is_none(),
            recorder: self.recorder,
            stack_size: self.stack_size,
            latency_sampling: self.latency_sampling,
            respawn_failures_to_inject: self.respawn_failures_to_inject,
            current_thread_seat: self.use_current_thread,
        }));
        let mut queues = queues.into_iter().enumerate();
        // Seat 0 is this thread's; it is taken once the others started, so
        // that a failed build leaves the thread as it was.
        let current_thread_seat = if self.use_current_thread {
            queues
                .next()
                .map(|(index, queue)| WorkerSeat::new(index, queue))
        } else {
            None
        };
        for (index, queue) in queues {
            let seat = WorkerSeat::new(index, queue);
            let started = match spawner.as_mut() {
                None => registry.spawn_worker(seat, false).map_err(|f| f.error),
                Some(spawner) => spawner(WorkerStart::new(
                    Arc::clone(&registry),
                    seat,
                    registry.thread_name(index),
                    registry.stack_size(),
                )),
            };
            if let Err(source) = started {
                // Stop and join the workers already running: no thread leaks.
                registry.shutdown_and_join();
                return Err(BuildError::Spawn { index, source });
            }
        }
        if let Some(seat) = current_thread_seat {
            crate::worker::adopt(&registry, seat);
        }
        crate::trace::pool_started(registry.name(), threads);
        Ok(ThreadPool::from_registry(registry))
    }
}

/// The thread count: `requested` if positive, else a positive
/// `DREADPOOL_THREADS`, else the available parallelism.
fn resolve_threads(requested: usize, env: Option<String>) -> Result<usize, BuildError> {
    let threads = if requested > 0 {
        requested
    } else {
        let from_env = match env {
            // An empty value is how shells spell "unset".
            None => 0,
            Some(value) if value.trim().is_empty() => 0,
            Some(value) => value
                .trim()
                .parse::<usize>()
                .map_err(|_| BuildError::InvalidThreadsEnv { value })?,
        };
        if from_env > 0 {
            from_env
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        }
    };
    if threads > MAX_THREADS {
        return Err(BuildError::TooManyThreads {
            requested: threads,
            max: MAX_THREADS,
        });
    }
    Ok(threads)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_threads_win_over_the_environment() {
        assert_eq!(resolve_threads(3, Some("garbage".into())).unwrap(), 3);
        assert_eq!(resolve_threads(3, Some("7".into())).unwrap(), 3);
    }

    #[test]
    fn environment_sets_the_default() {
        assert_eq!(resolve_threads(0, Some("7".into())).unwrap(), 7);
        assert_eq!(resolve_threads(0, Some(" 5 ".into())).unwrap(), 5);
    }

    #[test]
    fn zero_in_the_environment_means_one_per_cpu() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(resolve_threads(0, Some("0".into())).unwrap(), cpus);
        assert_eq!(resolve_threads(0, None).unwrap(), cpus);
        assert_eq!(resolve_threads(0, Some(" ".into())).unwrap(), cpus);
        assert_eq!(resolve_threads(0, Some(String::new())).unwrap(), cpus);
    }

    #[test]
    fn garbage_in_the_environment_is_an_error() {
        for value in ["four", "-1", "1.5", "99999999999999999999999"] {
            let error = resolve_threads(0, Some(value.into())).unwrap_err();
            assert!(
                matches!(&error, BuildError::InvalidThreadsEnv { value: v } if v == value),
                "{value:?} gave {error:?}"
            );
        }
    }

    #[test]
    fn too_many_threads_is_an_error() {
        let error = resolve_threads(MAX_THREADS + 1, None).unwrap_err();
        assert!(
            matches!(error, BuildError::TooManyThreads { requested, .. } if requested == MAX_THREADS + 1)
        );
        let error = resolve_threads(0, Some((MAX_THREADS + 1).to_string())).unwrap_err();
        assert!(matches!(error, BuildError::TooManyThreads { .. }));
    }
}
