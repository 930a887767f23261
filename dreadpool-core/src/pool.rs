//! The pool itself.

use crate::error::SpawnError;
use crate::handle::Handle;
use crate::registry::Registry;
use crate::scope::Scope;
use crate::sync::Arc;
use crate::task_handle::TaskHandle;
use crate::worker;
use std::fmt;
use std::time::{Duration, Instant};

/// A work-stealing pool of threads running `'static` closures.
///
/// Build one with [`ThreadPoolBuilder`](crate::ThreadPoolBuilder). It is
/// `Send + Sync`: share it with `Arc` and spawn or join from any thread.
///
/// Dropping it (or calling [`shutdown`](Self::shutdown)) refuses new work
/// from outside, runs every task already queued and every task those tasks
/// spawn, then joins every worker thread.
///
/// ```
/// use dreadpool::ThreadPoolBuilder;
/// use std::sync::{Arc, Mutex};
///
/// let pool = ThreadPoolBuilder::default()
///     .with_threads(4)
///     .with_thread_name("dreadpool-worker")
///     .build();
/// let counter = Arc::new(Mutex::new(0));
/// for _ in 0..100 {
///     let counter = Arc::clone(&counter);
///     pool.spawn(move || *counter.lock().unwrap() += 1);
/// }
/// pool.join(); // blocks until all tasks complete
/// assert_eq!(*counter.lock().unwrap(), 100);
/// ```
///
/// Tasks must own what they capture:
///
/// ```compile_fail,E0373
/// let pool = dreadpool::ThreadPoolBuilder::new().build();
/// let local = String::from("on the caller's stack");
/// pool.spawn(|| println!("{}", local)); // error: `local` does not live long enough
/// ```
///
/// and be `Send`:
///
/// ```compile_fail,E0277
/// let pool = dreadpool::ThreadPoolBuilder::new().build();
/// let rc = std::rc::Rc::new(1);
/// pool.spawn(move || println!("{}", rc)); // error: `Rc<i32>` cannot be sent between threads
/// ```
pub struct ThreadPool {
    registry: Arc<Registry>,
}

impl ThreadPool {
    pub(crate) fn from_registry(registry: Arc<Registry>) -> Self {
        ThreadPool { registry }
    }

    /// Spawns `task`. From one of this pool's own tasks it goes to that
    /// worker's local queue; from anywhere else, to the global queue.
    ///
    /// # Panics
    ///
    /// If the pool has been [shut down](Self::shutdown) and the caller is not
    /// one of its tasks.
    #[inline]
    #[track_caller]
    pub fn spawn<F>(&self, task: F)
    where
        F: FnOnce() + Send + 'static,
    {
        self.registry.spawn(task);
    }

    /// Spawns `task` so that it starts after the tasks the same worker
    /// spawned this way before it (rayon's `spawn_fifo`), where
    /// [`spawn`](Self::spawn)'s tasks from a worker start newest first. From
    /// outside the pool it is [`spawn`](Self::spawn): the global queue is
    /// FIFO already. How: `spawn/fifo.rs`.
    ///
    /// ```
    /// use std::sync::mpsc;
    ///
    /// let pool = dreadpool::ThreadPoolBuilder::new().with_threads(1).build();
    /// let (sent, received) = mpsc::channel();
    /// pool.install(|| {
    ///     let handle = dreadpool::current().unwrap();
    ///     for i in 0..3 {
    ///         let sent = sent.clone();
    ///         handle.spawn_fifo(move || sent.send(i).unwrap());
    ///     }
    /// });
    /// drop(sent);
    /// pool.join();
    /// assert_eq!(received.iter().collect::<Vec<_>>(), [0, 1, 2]);
    /// ```
    ///
    /// # Panics
    ///
    /// If the pool has been [shut down](Self::shutdown) and the caller is not
    /// one of its tasks.
    #[track_caller]
    pub fn spawn_fifo<F>(&self, task: F)
    where
        F: FnOnce() + Send + 'static,
    {
        self.registry.spawn_fifo(task);
    }

    /// Like [`spawn`](Self::spawn), but gives the closure back if the pool
    /// has shut down.
    #[track_caller]
    pub fn try_spawn<F>(&self, task: F) -> Result<(), SpawnError<F>>
    where
        F: FnOnce() + Send + 'static,
    {
        self.registry.try_spawn(task).map_err(SpawnError::new)
    }

    /// Spawns `task` and returns a [`TaskHandle`] to its result. See
    /// [`TaskHandle`] for what happens to its panic (it goes to the handle,
    /// not to the pool's panic policy).
    ///
    /// # Panics
    ///
    /// If the pool has shut down and the caller is not one of its tasks.
    #[track_caller]
    pub fn spawn_with_handle<F, T>(&self, task: F) -> TaskHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.handle().spawn_with_handle(task)
    }

    /// Runs `body` with a [`Scope`] on which it can spawn tasks that borrow
    /// anything outliving the scope, and returns `body`'s value once every
    /// task spawned on the scope (including tasks spawned by those tasks) has
    /// finished.
    ///
    /// If `body` panicked, that panic is re-raised (after the wait); else if
    /// any scoped task panicked, the first one is. Scoped task panics are the
    /// scope's: like [`TaskHandle`] panics they do not trip the pool's panic
    /// policy nor reach its handler.
    ///
    /// Opened from one of the pool's own tasks, the waiting worker keeps
    /// running tasks (its own scope's, or anyone's) instead of blocking its
    /// thread, so scopes nest to any depth on any number of threads.
    ///
    /// ```
    /// fn sum(pool: &dreadpool::ThreadPool, data: &[u64]) -> u64 {
    ///     if data.len() < 1000 {
    ///         return data.iter().sum();
    ///     }
    ///     let (left, right) = data.split_at(data.len() / 2);
    ///     let (mut a, mut b) = (0, 0);
    ///     pool.scope(|s| {
    ///         s.spawn(|| a = sum(pool, left));
    ///         s.spawn(|| b = sum(pool, right));
    ///     });
    ///     a + b
    /// }
    /// let pool = dreadpool::ThreadPoolBuilder::new().with_threads(2).build();
    /// let data: Vec<u64> = (0..100_000).collect();
    /// assert_eq!(sum(&pool, &data), 99_999 * 100_000 / 2);
    /// ```
    pub fn scope<'env, F, R>(&self, body: F) -> R
    where
        F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R,
    {
        crate::scope::run(&self.registry, body)
    }

    /// Runs `f` on one of the pool's workers and returns its result, the
    /// calling thread waiting meanwhile. Inside `f`, [`join`](crate::join)
    /// forks on this pool, and `f` may borrow from the caller's stack.
    ///
    /// - From one of this pool's own tasks, `f` simply runs there.
    /// - From a task of another pool, that worker keeps running its own
    ///   pool's tasks while it waits (it never blocks its thread, so waiting
    ///   cannot deadlock the other pool).
    /// - From any other thread, the caller blocks until `f` returns.
    /// - If the pool has shut down and the caller is outside it, `f` runs on
    ///   the calling thread, as a [`scope`](Self::scope)'s refused tasks do.
    ///
    /// ```
    /// let pool = dreadpool::ThreadPoolBuilder::new()
    ///     .with_threads(2)
    ///     .with_thread_name("sum")
    ///     .build();
    /// let data: Vec<u64> = (1..=1_000).collect();
    /// let (total, thread) = pool.install(|| {
    ///     let (left, right) = data.split_at(500);
    ///     let (a, b) = dreadpool::join(|| left.iter().sum::<u64>(), || right.iter().sum::<u64>());
    ///     (a + b, std::thread::current().name().map(str::to_owned))
    /// });
    /// assert_eq!(total, 500_500);
    /// assert!(thread.unwrap().starts_with("sum-"));
    /// ```
    ///
    /// # Panics
    ///
    /// Re-raises the panic of `f`, on the calling thread.
    #[track_caller]
    pub fn install<F, R>(&self, f: F) -> R
    where
        F: FnOnce() -> R + Send,
        R: Send,
    {
        crate::fork_join::install(&self.registry, f)
    }

    /// Runs `f(worker_index)` once on every worker and waits for all of them;
    /// returns the results by worker index. For per-thread setup such as
    /// warming thread-local caches. If any call panicked, the first panic is
    /// re-raised after all of them ended.
    ///
    /// ```
    /// let pool = dreadpool::ThreadPoolBuilder::new().with_threads(3).build();
    /// let names = pool.broadcast(|_| std::thread::current().name().unwrap().to_owned());
    /// assert_eq!(names, ["dreadpool-0", "dreadpool-1", "dreadpool-2"]);
    /// ```
    ///
    /// # Panics
    ///
    /// Re-raises the first panic of `f`.
    #[track_caller]
    pub fn broadcast<F, R>(&self, f: F) -> Vec<R>
    where
        F: Fn(usize) -> R + Sync,
        R: Send,
    {
        crate::broadcast::broadcast(&self.registry, f)
    }

    /// The flight recorder's level now (feature `recorder`).
    #[cfg(feature = "recorder")]
    pub fn record_level(&self) -> crate::RecordLevel {
        self.registry.recorder().level()
    }

    /// Switches what the flight recorder records, while the pool runs
    /// (feature `recorder`). Each recording point sees the new level at its
    /// next look: spawns from outside at once, a worker's own spawns and
    /// runs within 61 tasks or at its next wake.
    #[cfg(feature = "recorder")]
    pub fn set_record_level(&self, level: crate::RecordLevel) {
        self.registry.recorder().set_level(level);
    }

    /// Copies out what the flight recorder holds now: the newest events of
    /// every worker, and the spawns and wakes of outside threads, in time
    /// order (feature `recorder`). The workers are not stopped or slowed:
    /// each ring is copied while its worker goes on writing, and events
    /// overwritten meanwhile are left out (see [`Recording`](crate::Recording)).
    ///
    /// ```
    /// let pool = dreadpool::ThreadPoolBuilder::new().with_threads(2).build();
    /// pool.spawn(|| {});
    /// pool.join();
    /// let recording = pool.recording();
    /// let mut trace = Vec::new();
    /// recording.write_chrome_json(&mut trace).unwrap();
    /// ```
    #[cfg(feature = "recorder")]
    pub fn recording(&self) -> crate::Recording {
        self.registry.recorder().recording()
    }

    /// A cheap, cloneable spawner for this pool (see [`Handle`]).
    pub fn handle(&self) -> Handle {
        Handle {
            registry: Arc::clone(&self.registry),
        }
    }

    /// Blocks until no task is queued or running, including tasks spawned by
    /// tasks while it waits. Returns at once on an idle pool. Any number of
    /// threads may join at once; all of them return when the pool goes idle.
    ///
    /// # Panics
    ///
    /// When called from one of this pool's own tasks, which would wait for
    /// itself forever.
    pub fn join(&self) {
        self.assert_not_own_task("join");
        self.registry.joiners().wait(self.registry.counts(), None);
    }

    /// Like [`join`](Self::join), giving up after `timeout`. Returns true when
    /// the pool went idle, false when the time ran out first.
    ///
    /// # Panics
    ///
    /// When called from one of this pool's own tasks.
    pub fn join_timeout(&self, timeout: Duration) -> bool {
        self.assert_not_own_task("join_timeout");
        let deadline = Instant::now().checked_add(timeout);
        self.registry
            .joiners()
            .wait(self.registry.counts(), deadline)
    }

    /// Spawns `f(index)` onto each worker, as a task that only that worker
    /// runs, and returns at once, without waiting for any (rayon's
    /// `spawn_broadcast`). Unlike [`broadcast`](Self::broadcast), `f` must be
    /// `'static`; a panic in it is handled as a spawned task's.
    ///
    /// ```
    /// use std::sync::mpsc;
    ///
    /// let pool = dreadpool::ThreadPoolBuilder::new().with_threads(3).build();
    /// let (sent, received) = mpsc::channel();
    /// let sent = std::sync::Mutex::new(sent);
    /// pool.spawn_broadcast(move |index| sent.lock().unwrap().send(index).unwrap());
    /// let mut seen: Vec<usize> = received.iter().take(3).collect();
    /// seen.sort();
    /// assert_eq!(seen, [0, 1, 2]);
    /// ```
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
            crate::handle::refused_broadcast(self.registry.name());
        }
    }

    /// The index of the worker running the caller, if the caller is one of
    /// this pool's tasks; `None` on any other thread, another pool's workers
    /// included (rayon's `ThreadPool::current_thread_index`).
    ///
    /// ```
    /// let pool = dreadpool::ThreadPoolBuilder::new().with_threads(2).build();
    /// let other = dreadpool::ThreadPoolBuilder::new().with_threads(1).build();
    /// assert_eq!(pool.current_worker_index(), None);
    /// assert_eq!(pool.broadcast(|_| pool.current_worker_index()), [Some(0), Some(1)]);
    /// assert_eq!(other.install(|| pool.current_worker_index()), None);
    /// ```
    pub fn current_worker_index(&self) -> Option<usize> {
        worker::current_index(Some(&self.registry))
    }

    /// The number of worker threads.
    pub fn threads(&self) -> usize {
        self.registry.threads()
    }

    /// The pool's name (its thread name prefix).
    pub fn name(&self) -> &str {
        self.registry.name()
    }

    /// A snapshot of the pool's counters: per worker, its state, tasks run,
    /// steals, sleeps and wakeups, busy time, queue depth, steal matrix row
    /// and latency histograms; per pool, queue depth and pending tasks.
    /// Cheap enough to call 100 times a second while the pool runs flat out.
    ///
    /// ```
    /// use dreadpool::{ThreadPoolBuilder, WorkerState};
    ///
    /// let pool = ThreadPoolBuilder::new().with_threads(2).build();
    /// for _ in 0..1000 {
    ///     pool.spawn(|| ());
    /// }
    /// pool.join();
    /// let metrics = pool.metrics();
    /// assert_eq!(metrics.tasks_run(), 1000);
    /// assert_eq!(metrics.tasks_spawned_external, 1000);
    /// assert_eq!(metrics.workers.len(), 2);
    /// assert_ne!(metrics.workers[0].state, WorkerState::Stopped);
    /// ```
    #[cfg(feature = "metrics")]
    pub fn metrics(&self) -> crate::PoolMetrics {
        self.registry.metrics_snapshot()
    }

    /// How many replacement threads the OS refused after a panic under
    /// [`PanicPolicy::Respawn`](crate::PanicPolicy::Respawn). Each time, the
    /// panicked thread carried on as the worker, so the pool kept its full
    /// strength; an `ERROR` event is also logged with the `tracing` feature.
    pub fn respawn_failures(&self) -> usize {
        self.registry.respawn_failures()
    }

    /// How many tasks have panicked so far.
    pub fn panic_count(&self) -> usize {
        self.registry.panic_count()
    }

    /// Shuts the pool down: refuses new work from outside, runs every queued
    /// task and everything those tasks spawn, then joins all worker threads.
    /// Idempotent; `Drop` calls it.
    ///
    /// A task that never returns makes this wait forever, like any join of
    /// a thread running it: use [`join_timeout`](Self::join_timeout) first
    /// to find out, and make such tasks observe a cancellation signal.
    ///
    /// Called from one of the pool's own tasks (for example by dropping the
    /// last `Arc<ThreadPool>` there), it cannot wait for its own thread: it
    /// starts the shutdown and returns, and the workers finish draining and
    /// exit on their own.
    ///
    /// On the thread that is the pool's worker 0 by
    /// [`use_current_thread`](crate::ThreadPoolBuilder::use_current_thread),
    /// outside any wait of its own, the thread first leaves seat 0 (its
    /// queued tasks are left to the other workers), then shuts the pool down
    /// as any outside thread does.
    pub fn shutdown(&self) {
        if worker::is_seated_outside_waits(&self.registry) {
            worker::vacate();
        }
        if self.registry.is_detached() || worker::current_index(Some(&self.registry)).is_some() {
            self.registry.begin_shutdown();
            return;
        }
        self.registry.shutdown_and_join();
        crate::trace::pool_shutdown(self.registry.name());
    }

    /// Shuts the pool down without waiting (rayon's drop of a pool): refuses
    /// new work from outside, and returns at once; the workers run every
    /// queued task and everything those tasks spawn, then exit on their own,
    /// and no one joins them. [`Handle`](crate::Handle)s see the pool shut
    /// down.
    ///
    /// ```
    /// use std::sync::mpsc;
    ///
    /// let pool = dreadpool::ThreadPoolBuilder::new().with_threads(1).build();
    /// let (go, wait) = mpsc::channel::<()>();
    /// let (done, finished) = mpsc::channel();
    /// pool.spawn(move || {
    ///     wait.recv().unwrap();
    ///     done.send("drained").unwrap();
    /// });
    /// pool.shutdown_detached(); // returns while the task still waits
    /// go.send(()).unwrap();
    /// assert_eq!(finished.recv().unwrap(), "drained");
    /// ```
    pub fn shutdown_detached(self) {
        self.registry.detach();
        // The drop (`shutdown`) now starts the shutdown without joining.
        drop(self);
    }

    fn assert_not_own_task(&self, what: &str) {
        if worker::current_index(Some(&self.registry)).is_some() {
            panic!(
                "dreadpool: ThreadPool::{what} called from inside a task of pool {:?}: it would wait for itself forever",
                self.registry.name()
            );
        }
    }
}

// The pool's shared state stays consistent across a panic anywhere: no user
// code runs while the pool holds a lock or has an invariant half-updated, and
// the user's panic handler is only ever called inside `catch_unwind`. So a
// `&ThreadPool` may be used across `catch_unwind` (the auto traits only miss
// this because the handler is a `dyn Fn`).
impl std::panic::UnwindSafe for ThreadPool {}
impl std::panic::RefUnwindSafe for ThreadPool {}

impl Drop for ThreadPool {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl fmt::Debug for ThreadPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPool")
            .field("name", &self.registry.name())
            .field("threads", &self.registry.threads())
            .field("pending", &self.registry.counts().pending())
            .field("panics", &self.registry.panic_count())
            .finish()
    }
}
