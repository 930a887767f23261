//! Configuring and starting a pool: the builder, its pool-wide options
//! (thread count, backlog, panics, metrics and recorder), and `start`, which
//! validates them and starts the workers. The options of the worker threads
//! and who starts them are in `builder/threads.rs`, `use_current_thread` in
//! `builder/current_thread.rs`, the global pool's builds in
//! `builder/global.rs`.

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

mod current_thread;
mod global;
mod threads;

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
/// The most shards a pool's global queue may be split into
/// ([`ThreadPoolBuilder::with_global_queue_shards`]): beyond a few, more
/// shards only add to what an idle worker looks at before it sleeps.
pub const MAX_GLOBAL_QUEUE_SHARDS: usize = crate::queue::MAX_SHARDS;
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
    global_queue_shards: usize,
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
            global_queue_shards: 1,
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
            .field("global_queue_shards", &self.global_queue_shards)
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

    /// Sets the backlog target: when a worker's local queue runs short it
    /// takes up to this many tasks from the global queue at once. Larger
    /// batches mean fewer trips to the shared queue; smaller ones spread
    /// bursts of outside work across workers sooner. At least 1.
    pub fn with_backlog(mut self, tasks: usize) -> Self {
        self.backlog = tasks;
        self
    }

    /// Splits the global queue, where tasks spawned from outside the pool
    /// wait, into `shards` queues (default 1, at most
    /// [`MAX_GLOBAL_QUEUE_SHARDS`]; else [`BuildError::InvalidGlobalQueueShards`]).
    ///
    /// For pools fed by many threads at once, such as a server's request
    /// threads offloading work: each thread pushes onto one shard, chosen
    /// when it first spawns (threads take the shards in turn), so threads
    /// spawning at once contend on a shard's share of them instead of all on
    /// one queue. Every worker takes from every
    /// shard, its own first, so no task waits longer for want of a worker;
    /// the price is that an idle worker looks at every shard before it
    /// sleeps. With one spawning thread there is nothing to gain.
    ///
    /// ```
    /// use dreadpool::ThreadPoolBuilder;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// let pool = ThreadPoolBuilder::new()
    ///     .with_threads(4)
    ///     .with_global_queue_shards(4)
    ///     .build();
    /// let ran = Arc::new(AtomicUsize::new(0));
    /// std::thread::scope(|s| {
    ///     for _ in 0..4 {
    ///         s.spawn(|| {
    ///             for _ in 0..100 {
    ///                 let ran = Arc::clone(&ran);
    ///                 pool.spawn(move || {
    ///                     ran.fetch_add(1, Ordering::Relaxed);
    ///                 });
    ///             }
    ///         });
    ///     }
    /// });
    /// pool.join();
    /// assert_eq!(ran.load(Ordering::Relaxed), 400);
    /// ```
    pub fn with_global_queue_shards(mut self, shards: usize) -> Self {
        self.global_queue_shards = shards;
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
        if !(1..=MAX_GLOBAL_QUEUE_SHARDS).contains(&self.global_queue_shards) {
            return Err(BuildError::InvalidGlobalQueueShards {
                shards: self.global_queue_shards,
                max: MAX_GLOBAL_QUEUE_SHARDS,
            });
        }
        current_thread::check_free(self.use_current_thread)?;
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
            global_queue_shards: self.global_queue_shards,
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
