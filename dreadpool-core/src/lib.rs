//! The work-stealing scheduler behind [dreadpool](https://docs.rs/dreadpool).
//!
//! Most users depend on the `dreadpool` facade crate, which re-exports all of
//! this. The design, in the seed's words: `spawn` from outside pushes to a
//! global queue; each worker tops off its local queue from it, runs local
//! tasks, steals batches from peers when it runs dry, and sleeps when there is
//! nothing anywhere, woken by the next spawn without a lost wakeup.
//!
//! - [`ThreadPoolBuilder`] configures and starts a [`ThreadPool`].
//! - [`ThreadPool::spawn`] / [`Handle::spawn`] run a closure on the pool.
//! - [`ThreadPool::spawn_with_handle`] returns a [`TaskHandle`] to the
//!   task's result, to `join` or to `.await` from async code; [`ThreadPool::scope`] spawns tasks that borrow from the
//!   caller's stack; [`ThreadPool::broadcast`] runs a closure on every
//!   worker; [`current`] finds the pool a task runs in.
//! - [`join`] runs two closures that may borrow from the caller's stack,
//!   potentially in parallel (fork-join, as `rayon::join`), and
//!   [`ThreadPool::install`] runs a closure on a pool's worker.
//! - [`ThreadPool::join`] waits until the pool is idle; dropping the pool
//!   drains it and joins its threads.
//! - [`PanicPolicy`] decides what a panicking task does to its worker;
//!   [`ThreadPoolBuilder::with_start_handler`] and
//!   [`with_exit_handler`](ThreadPoolBuilder::with_exit_handler) run on
//!   every worker thread, replacements included.
//! - With the `metrics` feature, `ThreadPool::metrics` returns a live
//!   snapshot of per-worker counters (`PoolMetrics`).
//!
//! ## Misuse, and what it gets
//!
//! Every case below is exercised by the tests (`tests/api.rs`,
//! `tests/leaks.rs`, `tests/panics.rs`, `builder.rs`); none hangs, aborts or
//! loses a task.
//!
//! | misuse | what happens |
//! |---|---|
//! | `with_threads(n)` above [`MAX_THREADS`] | [`BuildError::TooManyThreads`] |
//! | more threads than the OS will start | [`BuildError::Spawn`]; the threads already started are stopped and joined |
//! | `with_stack_size(0)`, below [`MIN_STACK_SIZE`] or above [`MAX_STACK_SIZE`] | [`BuildError::InvalidStackSize`] |
//! | a thread name prefix containing a NUL byte | [`BuildError::InvalidThreadName`] |
//! | `with_backlog(0)` | [`BuildError::InvalidBacklog`] |
//! | `with_record_capacity` below 2 or above 2^28 events (feature `recorder`) | [`BuildError::InvalidRecordCapacity`] |
//! | `DREADPOOL_THREADS` set to garbage (`four`, `-1`, `1.5`) | [`BuildError::InvalidThreadsEnv`] (only consulted when `with_threads` is 0 or unset) |
//! | `DREADPOOL_THREADS=0` or empty | the default: one thread per CPU |
//! | [`build`](ThreadPoolBuilder::build) on any of the above | panics with the error's message; [`try_build`](ThreadPoolBuilder::try_build) returns it |
//! | spawning after shutdown, from outside the pool | [`try_spawn`](Handle::try_spawn) returns the closure in a [`SpawnError`]; [`spawn`](Handle::spawn) panics saying so |
//! | spawning while the pool drains, from one of its own tasks | accepted and run: the drain waits for it |
//! | a scope on a shut-down pool, from outside | its tasks run on the calling thread |
//! | [`join`](ThreadPool::join) from one of the pool's own tasks | panics: it would wait for itself |
//! | dropping the last `Arc<ThreadPool>` inside one of its tasks | the shutdown starts and the pool detaches: the workers drain and exit on their own |
//! | a task that never returns | [`join_timeout`](ThreadPool::join_timeout) returns `false`; `join`, `shutdown` and drop wait for it |
//! | a panicking panic handler, a panic payload whose `Drop` panics, a panicking `tracing` subscriber | contained; counted and logged where possible; the worker carries on |
//! | [`join`] outside every pool | runs on a default pool started on first use (`with_threads(0)`'s size, `DREADPOOL_THREADS` honoured); if that pool cannot start, panics with the build error |
//! | [`install`](ThreadPool::install) on a shut-down pool, from outside | the closure runs on the calling thread, as a scope's refused tasks do |
//! | [`install`](ThreadPool::install) from one of the pool's own tasks | the closure simply runs there (no deadlock) |
//! | a panic in either half of a [`join`] | both halves still run to completion; then the panic is re-raised (the first half's if both panicked) |
//! | the OS refusing a replacement thread | the panicked thread carries on as the worker ([`ThreadPool::respawn_failures`] counts it) |
//!
//! ## Features
//!
//! - `tracing` (default): a `dreadpool.worker` span around each worker
//!   thread; events for panics and respawns (`ERROR`/`WARN`), start and
//!   shutdown (`DEBUG`), steals, sleeps and wakeups (`TRACE`); and each task
//!   runs inside the span that was current where it was spawned.
//! - `metrics`: per-worker lock-free counters and latency histograms. Off, it
//!   compiles to nothing.
//! - `recorder`: the flight recorder, a timeline of the scheduler kept in
//!   per-worker rings (`RecordLevel`, `ThreadPool::recording`,
//!   `Recording::write_perfetto`): the design is in
//!   `src/recorder/README.md`. Off, it compiles to nothing.
//!
//! ```
//! use dreadpool::ThreadPoolBuilder;
//!
//! let pool = ThreadPoolBuilder::new().with_threads(2).build();
//! let (tx, rx) = std::sync::mpsc::channel();
//! pool.spawn(move || tx.send(6 * 7).unwrap());
//! assert_eq!(rx.recv().unwrap(), 42);
//! ```

#[macro_use]
mod broken;

mod broadcast;
mod builder;
mod current;
mod error;
mod fork_join;
mod handle;
mod hint;
mod idle_latch;
mod latch;
mod metrics;
mod panic;
mod pending;
mod pool;
mod probe;
mod pull_pacer;
mod queue;
mod recorder;
mod registry;
mod scope;
mod sleep;
mod spawn;
mod sync;
mod task;
mod task_handle;
mod thread_hooks;
mod thread_names;
mod trace;
mod worker;
mod worker_start;

/// The flight recorder's ring, the identity slots and the parker, for
/// their loom models (`tests/loom.rs`): not part of the API, and only there
/// under `--cfg loom`.
#[cfg(loom)]
#[doc(hidden)]
pub mod __loom {
    /// A worker's parking spot (see `sleep/parker.rs`) whose sleeper spins
    /// (one look, under loom) before it blocks.
    pub struct Parker(crate::sleep::parker::Parker);

    impl Parker {
        /// A parker that spins before it blocks.
        pub fn spinning() -> Self {
            Parker(crate::sleep::parker::Parker::with_spin(
                std::time::Duration::from_nanos(1),
            ))
        }
        /// Parks until a token comes; runs the task handed over with it,
        /// if any, and says whether there was one.
        pub fn park_and_run(&self) -> bool {
            self.0.park().map(crate::task::Task::run).is_some()
        }
        /// Leaves a token.
        pub fn unpark(&self) {
            self.0.unpark();
        }
        /// Hands over, with the token, a task that adds one to `runs`, if
        /// the sleeper is in `park` (notifying it if it blocks), as
        /// `Sleep::wake_with_task` does; false, leaving nothing, if not.
        pub fn hand_off(&self, runs: &loom::sync::Arc<loom::sync::atomic::AtomicUsize>) -> bool {
            let runs = loom::sync::Arc::clone(runs);
            let task = crate::task::Task::new(move || {
                runs.fetch_add(1, loom::sync::atomic::Ordering::Relaxed);
            });
            match self.0.hand_off_if_waiting(task, || {}) {
                Ok(blocked) => {
                    if blocked {
                        self.0.notify();
                    }
                    true
                }
                Err(_) => false,
            }
        }
    }

    /// A ring of three-word events (see `recorder/ring.rs`).
    pub struct Ring(crate::recorder::ring::Ring);

    impl Ring {
        /// A ring of `capacity` events.
        pub fn new(capacity: usize) -> Self {
            Ring(crate::recorder::ring::Ring::new(capacity))
        }
        /// Publishes an event (one writer at a time).
        pub fn push(&self, event: [u64; 3]) {
            self.0.push(event);
        }
        /// The intact events, oldest first.
        pub fn copy(&self) -> Vec<[u64; 3]> {
            self.0.copy().events
        }
    }

    /// A thread's ring of identity slots (see
    /// `recorder/identity_slots.rs`), holding `u64`s for closures.
    pub struct SlotRing(crate::recorder::identity_slots::SlotRing);

    impl SlotRing {
        /// A ring of `slots` free slots (a power of two).
        pub fn new(slots: usize) -> Self {
            SlotRing(crate::recorder::identity_slots::SlotRing::new(slots))
        }

        /// The owner claims the slot at `*cursor` and fills it with `id` and
        /// `value`, if its last task let it go; returns its index, which
        /// stands for the task published to a worker.
        pub fn claim_and_fill(&self, cursor: &mut usize, id: u64, value: u64) -> Option<usize> {
            let index = *cursor & (self.0.len() - 1);
            let slot = self.0.claim(cursor)?;
            // SAFETY: just claimed; a `u64` fits in a word.
            unsafe { slot.fill(id, value) };
            Some(index)
        }

        /// The worker that holds slot `index`'s task takes its identity and
        /// value, and frees the slot.
        ///
        /// # Safety
        ///
        /// The caller holds that slot's task (it was published to it after
        /// `claim_and_fill`), once.
        pub unsafe fn take(&self, index: usize) -> (u64, u64) {
            let slot = self.0.slot(index);
            // SAFETY: passed on from our caller.
            unsafe { (slot.id(), slot.take::<u64>()) }
        }
    }
}

pub use builder::{
    ThreadPoolBuilder, DEFAULT_BACKLOG, DEFAULT_THREAD_NAME, MAX_GLOBAL_QUEUE_SHARDS,
    MAX_STACK_SIZE, MAX_THREADS, MIN_STACK_SIZE, THREADS_ENV,
};
pub use current::{current, current_threads, current_worker_index};
pub use error::{BuildError, SpawnError};
pub use fork_join::{global_pool, join, join_context, FnContext};
pub use handle::Handle;
pub use metrics::DEFAULT_LATENCY_SAMPLING;
#[cfg(feature = "metrics")]
pub use metrics::{LatencyHistogram, PoolMetrics, WorkerMetrics, WorkerState};
pub use panic::{PanicPayload, PanicPolicy};
pub use pool::ThreadPool;
pub use recorder::DEFAULT_RECORD_CAPACITY;
#[cfg(feature = "recorder")]
pub use recorder::{
    CauseTotal, EventKind, ExplainError, Explanation, ParseSpawnSiteError, RanMeanwhile,
    RecordLevel, RecordTrigger, RecordedEvent, Recording, SchedulerSummary, SiteTotal, SpawnQueue,
    SpawnSite, TaskWait, Track, WaitCause, WorkerActivity,
};
pub use scope::Scope;
pub use task_handle::TaskHandle;
pub use worker::{current_thread_has_pending_tasks, yield_local, yield_now, Yield};
pub use worker_start::WorkerStart;
