//! The state one pool's threads share: its queues, its sleep and task
//! counts, its sinks, its threads, and the rules for shutting down and for
//! a task's panic. Every way in for a task is `spawn/`'s.

use crate::fork_join::SharedForks;
use crate::idle_latch::IdleLatch;
use crate::metrics::PoolCounters;
use crate::panic::{
    call_handler, drop_payload, payload_message, PanicHandler, PanicPayload, PanicPolicy,
};
use crate::pending::TaskCounts;
use crate::probe::WorkerProbe;
use crate::queue::{GlobalQueue, Injector, Stealer};
use crate::recorder::{FlightRecorder, RecorderConfig};
use crate::sleep::Sleep;
use crate::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use crate::sync::thread::{Builder, JoinHandle};
use crate::sync::{lock, Arc, Mutex};
use crate::task::Task;
use crate::thread_hooks::{ThreadEvent, ThreadHooks};
use crate::thread_names::ThreadNames;
use crate::worker::{self, WorkerSeat};
use crate::worker_start::ExternalThreads;

/// Everything a pool's workers, handles and joiners share.
pub(crate) struct Registry {
    /// Thread name prefix; worker `i` is named `"{name}-{i}"`.
    name: String,
    /// The global queue: tasks spawned from outside the pool, in one or
    /// more shards (`queue/global.rs`).
    global: GlobalQueue,
    /// Every worker's local queue, as peers (and monitors) see it.
    stealers: Box<[Stealer<Task>]>,
    /// Per worker, tasks addressed to that worker alone (`broadcast`); only
    /// the owner takes from its inbox.
    inboxes: Box<[Injector<Task>]>,
    /// Per worker, the tasks it spawned in FIFO order, each run by a
    /// trampoline in its local queue (`spawn/fifo.rs`).
    fifos: Box<[Injector<Task>]>,
    /// Per worker, the forks of its joins that idle workers may take
    /// (`fork_join/README.md`).
    shared_forks: Box<[SharedForks]>,
    sleep: Sleep,
    counts: TaskCounts,
    joiners: IdleLatch,
    /// The per-worker counters (nothing without the `metrics` feature).
    counters: PoolCounters,
    /// The flight recorder's rings (nothing without the `recorder` feature).
    recorder: FlightRecorder,
    /// The seed's ideal local backlog, topped off from the global queue.
    backlog: usize,
    panic_policy: PanicPolicy,
    panic_handler: Option<PanicHandler>,
    /// The start and exit handlers every worker thread runs.
    hooks: ThreadHooks,
    /// What the worker threads are called (`thread_names.rs`).
    thread_names: ThreadNames,
    /// See [`RegistryConfig::replaces_threads`].
    replaces_threads: bool,
    /// Threads a user's spawner started, which have no join handle here.
    external_threads: ExternalThreads,
    panic_count: AtomicUsize,
    /// Replacement threads the OS refused (the old thread carried on).
    respawn_failures: AtomicUsize,
    /// Test hook: refuse this many replacement threads as if the OS had.
    respawn_failures_to_inject: AtomicUsize,
    stack_size: Option<usize>,
    /// Set once, by shutdown; never cleared.
    shutdown: AtomicBool,
    /// Set by `ThreadPool::shutdown_detached` just before the pool is
    /// dropped: the drop then starts the shutdown without joining.
    detached: AtomicBool,
    /// Join handles of every worker thread started and not yet joined
    /// (replacements are pushed here by the thread they replace).
    threads: Mutex<Vec<JoinHandle<()>>>,
    /// Serialises shutdowns, so that every caller returns only once all
    /// threads are joined.
    shutdown_lock: Mutex<()>,
    /// Whether seat 0 is the building thread's (`use_current_thread`).
    current_thread_seat: bool,
    /// Set once, when that thread leaves seat 0 (`worker/current_thread.rs`).
    current_thread_left: AtomicBool,
}

/// What [`Registry::new`] needs.
pub(crate) struct RegistryConfig {
    pub(crate) name: String,
    pub(crate) stealers: Box<[Stealer<Task>]>,
    pub(crate) backlog: usize,
    pub(crate) panic_policy: PanicPolicy,
    pub(crate) panic_handler: Option<PanicHandler>,
    pub(crate) hooks: ThreadHooks,
    pub(crate) thread_names: ThreadNames,
    /// False when a user's spawner starts the threads (`worker_start.rs`),
    /// which cannot start replacements.
    pub(crate) replaces_threads: bool,
    pub(crate) stack_size: Option<usize>,
    pub(crate) latency_sampling: u32,
    pub(crate) recorder: RecorderConfig,
    pub(crate) respawn_failures_to_inject: usize,
    /// Seat 0 is the building thread's (`use_current_thread`).
    pub(crate) current_thread_seat: bool,
    /// The global queue's shards (`queue/global.rs`), `1..=MAX_SHARDS`.
    pub(crate) global_queue_shards: usize,
}

/// A worker thread could not be started; the state it was to run is handed
/// back so that nothing in its queue is lost.
pub(crate) struct SpawnFailure {
    pub(crate) error: std::io::Error,
    pub(crate) state: WorkerSeat,
}

impl Registry {
    pub(crate) fn new(config: RegistryConfig) -> Self {
        let workers = config.stealers.len();
        let recorder = FlightRecorder::new(&config.name, workers, config.recorder);
        Registry {
            name: config.name,
            global: GlobalQueue::new(config.global_queue_shards),
            inboxes: (0..workers).map(|_| Injector::new()).collect(),
            fifos: (0..workers).map(|_| Injector::new()).collect(),
            shared_forks: (0..workers).map(|_| SharedForks::new()).collect(),
            stealers: config.stealers,
            sleep: Sleep::new(workers, recorder.waker_log()),
            counts: TaskCounts::new(workers, config.global_queue_shards),
            joiners: IdleLatch::new(),
            counters: PoolCounters::new(workers, config.latency_sampling),
            recorder,
            backlog: config.backlog,
            panic_policy: config.panic_policy,
            panic_handler: config.panic_handler,
            hooks: config.hooks,
            thread_names: config.thread_names,
            replaces_threads: config.replaces_threads,
            external_threads: ExternalThreads::new(),
            panic_count: AtomicUsize::new(0),
            respawn_failures: AtomicUsize::new(0),
            respawn_failures_to_inject: AtomicUsize::new(config.respawn_failures_to_inject),
            stack_size: config.stack_size,
            shutdown: AtomicBool::new(false),
            detached: AtomicBool::new(false),
            threads: Mutex::new(Vec::with_capacity(workers)),
            shutdown_lock: Mutex::new(()),
            current_thread_seat: config.current_thread_seat,
            current_thread_left: AtomicBool::new(false),
        }
    }

    /// Worker `index`'s probe: where its state changes are reported.
    #[inline(always)]
    pub(crate) fn probe(&self, index: usize) -> WorkerProbe<'_> {
        WorkerProbe::new(self.counters.worker(index), &self.recorder, index)
    }

    /// The thread name prefix.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The global queue: tasks spawned from outside the pool.
    #[inline(always)]
    pub(crate) fn global(&self) -> &GlobalQueue {
        &self.global
    }

    /// Every worker's local queue, as peers (and monitors) see it.
    #[inline(always)]
    pub(crate) fn stealers(&self) -> &[Stealer<Task>] {
        &self.stealers
    }

    /// Per worker, the tasks addressed to that worker alone.
    #[inline(always)]
    pub(crate) fn inboxes(&self) -> &[Injector<Task>] {
        &self.inboxes
    }

    /// Per worker, its FIFO spawns' tasks (`spawn/fifo.rs`).
    pub(crate) fn fifos(&self) -> &[Injector<Task>] {
        &self.fifos
    }

    /// The waiters of `ThreadPool::join`, released when the pool is idle.
    pub(crate) fn joiners(&self) -> &IdleLatch {
        &self.joiners
    }

    /// The per-worker counters (nothing without the `metrics` feature).
    #[inline(always)]
    pub(crate) fn counters(&self) -> &PoolCounters {
        &self.counters
    }

    /// The flight recorder (nothing without the `recorder` feature).
    #[inline(always)]
    pub(crate) fn recorder(&self) -> &FlightRecorder {
        &self.recorder
    }

    /// The ideal local backlog, topped off from the global queue.
    #[inline(always)]
    pub(crate) fn backlog(&self) -> usize {
        self.backlog
    }

    /// Per worker, its list of shared forks (`fork_join/sharing.rs`).
    #[inline(always)]
    pub(crate) fn shared_forks(&self) -> &[SharedForks] {
        &self.shared_forks
    }

    /// The pool's count of pending tasks, per worker.
    #[inline(always)]
    pub(crate) fn counts(&self) -> &TaskCounts {
        &self.counts
    }

    /// The pool's sleep/wake coordinator.
    #[inline(always)]
    pub(crate) fn sleep(&self) -> &Sleep {
        &self.sleep
    }

    /// Number of workers.
    pub(crate) fn threads(&self) -> usize {
        self.stealers.len()
    }

    /// Counts a task from outside the pool in the count of global-queue
    /// shard `shard` (the caller's home), unless the pool is shutting down.
    /// Returns whether it was admitted (and counted).
    ///
    /// Count first, then look at the flag (acquire); `begin_shutdown` stores
    /// the flag (release), and draining workers read it, then every shard's
    /// count with a read-modify-write. Either we see the flag and back out,
    /// or the draining workers see our count and wait for the task the
    /// caller is about to push (see `TaskCounts::pending`).
    #[inline]
    pub(crate) fn admit_external(&self, shard: usize) -> bool {
        // The broken variant looks at the flag first, the natural mistake.
        let flag_first = broken!("__broken_flag_before_count");
        if flag_first && self.shutdown.load(Ordering::Acquire) {
            return false;
        }
        self.counts.external_spawned(shard);
        if !flag_first && self.shutdown.load(Ordering::Acquire) {
            self.counts.external_refused(shard);
            // Our count may have been all that kept a draining worker or a
            // joiner waiting: let every sleeper look again.
            self.sleep.wake_all();
            return false;
        }
        true
    }

    /// True when some queue holds a task that any worker may take. For the
    /// "more work for more workers" decision after a search.
    pub(crate) fn has_visible_work(&self) -> bool {
        // Registered sleepers' queues are empty and skipped (`sleep/awake.rs`).
        !self.global.is_empty()
            || self
                .stealers
                .iter()
                .enumerate()
                .any(|(i, s)| self.sleep.may_have_local_work(i) && !s.is_empty())
            || self.shared_forks.iter().any(|f| !f.is_empty())
    }

    /// True when some queue holds a task that worker `index` may take. Called
    /// by a worker that registered to sleep, after the registration's fence.
    pub(crate) fn has_visible_work_for(&self, index: usize) -> bool {
        self.has_visible_work() || !self.inboxes[index].is_empty()
    }

    pub(crate) fn is_shutting_down(&self) -> bool {
        self.shutdown.load(Ordering::Acquire)
    }

    /// Marks the pool detached: its handle's drop, which follows on the
    /// same thread, starts the shutdown and does not join (Relaxed: the
    /// flag is read only by that drop, on this thread).
    pub(crate) fn detach(&self) {
        self.detached.store(true, Ordering::Relaxed);
    }

    pub(crate) fn is_detached(&self) -> bool {
        self.detached.load(Ordering::Relaxed)
    }

    /// Refuses work from outside from now on and wakes every worker so that
    /// they drain the queues and exit.
    pub(crate) fn begin_shutdown(&self) {
        // Release: a worker or spawner that reads the flag (acquire) sees
        // everything before the shutdown. The race with spawners is argued
        // at `try_spawn`; sleepers see it through the idle-list lock that
        // `wake_all` takes next.
        self.shutdown.store(true, Ordering::Release);
        self.sleep.wake_all();
    }

    /// Shuts down and waits for every worker thread (and every replacement
    /// thread started meanwhile) to end.
    pub(crate) fn shutdown_and_join(&self) {
        let _one_at_a_time = lock(&self.shutdown_lock);
        self.begin_shutdown();
        loop {
            let batch = std::mem::take(&mut *lock(&self.threads));
            if batch.is_empty() {
                break;
            }
            for thread in batch {
                // A replacement is pushed before the thread it replaces ends,
                // so after this join the next batch holds it.
                let _ = thread.join();
            }
        }
        // Threads a user's spawner started are joined by counting them out
        // (`worker_start.rs`); they start no replacements.
        self.external_threads.wait_for_all();
    }

    /// The building thread leaves seat `index` (0) of a `use_current_thread`
    /// pool (`worker/current_thread.rs`): tasks addressed to it alone move
    /// to the global queue, now and (through the flag) from then on, and
    /// every sleeper looks again (its local queue stays open to thieves).
    ///
    /// The flag and the inbox form a Dekker pair with
    /// [`redirect_if_seat_left`](Self::redirect_if_seat_left): we store the
    /// flag, fence, then empty the inbox; a spawner pushes to the inbox,
    /// fences, then reads the flag. Of the two `SeqCst` fences one comes
    /// first, so either our emptying sees its task or it sees the flag and
    /// moves the task itself; a task moved by both is taken by one (each
    /// steal takes it once).
    pub(crate) fn vacate_current_thread_seat(&self, index: usize) {
        self.current_thread_left.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        self.move_inbox_to_global(index);
        self.sleep.wake_all();
    }

    /// After a push to inbox `index`: if it is a seat the building thread
    /// left, moves the inbox to the global queue (see
    /// [`vacate_current_thread_seat`](Self::vacate_current_thread_seat)).
    /// Nothing on pools without such a seat.
    pub(crate) fn redirect_if_seat_left(&self, index: usize) {
        if !self.current_thread_seat || index != 0 {
            return;
        }
        // SeqCst fence: pairs with the one in `vacate_current_thread_seat`.
        fence(Ordering::SeqCst);
        if self.current_thread_left.load(Ordering::Relaxed) {
            self.move_inbox_to_global(index);
        }
    }

    fn move_inbox_to_global(&self, index: usize) {
        let mut moved = false;
        loop {
            match self.inboxes[index].steal() {
                crate::queue::Steal::Success(task) => {
                    // Any shard would do: every worker takes from all.
                    self.global.shard(0).push(task);
                    moved = true;
                }
                crate::queue::Steal::Empty => break,
                crate::queue::Steal::Retry => continue,
            }
        }
        if moved {
            self.sleep.notify_external_task();
        }
    }

    /// The threads a user's spawner started (`worker_start.rs`).
    pub(crate) fn external_threads(&self) -> &ExternalThreads {
        &self.external_threads
    }

    /// Whether a worker whose task panicked under `PanicPolicy::Respawn` can
    /// be replaced by a new thread (not when a user's spawner starts them).
    pub(crate) fn replaces_threads(&self) -> bool {
        self.replaces_threads
    }

    /// Worker `index`'s thread name (`thread_names.rs`).
    pub(crate) fn thread_name(&self, index: usize) -> String {
        self.thread_names.name(&self.name, index)
    }

    /// The stack size asked for, if any.
    pub(crate) fn stack_size(&self) -> Option<usize> {
        self.stack_size
    }

    /// Starts a worker thread running `state`. `owes_completion` is true for
    /// a replacement, which must count its predecessor's panicked task as
    /// completed before anything else (see `worker::main`).
    pub(crate) fn spawn_worker(
        self: &Arc<Self>,
        state: WorkerSeat,
        owes_completion: bool,
    ) -> Result<(), SpawnFailure> {
        let index = state.index;
        if owes_completion && self.take_injected_respawn_failure() {
            return Err(SpawnFailure {
                error: std::io::Error::other("replacement thread refused by a test hook"),
                state,
            });
        }
        // The state travels through this slot rather than the closure so that
        // a failed spawn, which drops the closure, cannot drop a queue.
        let handoff = Arc::new(Mutex::new(Some(state)));
        let registry = Arc::clone(self);
        let slot = Arc::clone(&handoff);
        // Hold the thread list while spawning, so that a shutdown's join loop
        // cannot finish between the spawn and the push of its handle.
        let mut threads = lock(&self.threads);
        // The name is made inside the `catch_unwind` too: a user's naming
        // function that panics (or returns a name with a NUL byte, on which
        // std panics) fails this spawn instead of unwinding out of it.
        let spawned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut builder = Builder::new().name(self.thread_names.name(&self.name, index));
            if let Some(bytes) = self.stack_size {
                builder = builder.stack_size(bytes);
            }
            builder.spawn(move || {
                if let Some(state) = lock(&slot).take() {
                    worker::main(registry, state, owes_completion);
                }
            })
        }));
        let error = match spawned {
            Ok(Ok(handle)) => {
                threads.push(handle);
                return Ok(());
            }
            Ok(Err(error)) => error,
            // std asserts on some pthread failures instead of returning them.
            Err(payload) => {
                drop_payload(payload);
                std::io::Error::other("the thread could not be configured")
            }
        };
        drop(threads);
        let state = lock(&handoff)
            .take()
            .expect("a thread that failed to spawn never ran, so its state is still here");
        Err(SpawnFailure { error, state })
    }

    /// Records a task's panic: counts it, reports it, hands it to the
    /// handler. Returns what the worker should do next.
    pub(crate) fn on_task_panic(&self, worker: usize, payload: PanicPayload) -> PanicPolicy {
        crate::trace::task_panicked(worker, payload_message(&*payload));
        self.report_panic(worker, payload, "a task", true)
    }

    /// Runs the start or exit handler for `event` on worker `index`'s
    /// thread (`thread_hooks.rs`), reporting its panic as a task's.
    pub(crate) fn run_thread_hook(&self, event: ThreadEvent, index: usize) {
        if let Err(payload) = self.hooks.run(event, index) {
            self.on_thread_handler_panic(index, event, payload);
        }
    }

    /// Records a start or exit handler's panic as a task's (see
    /// `thread_hooks.rs`); the thread carries on whatever the policy, unless
    /// it is `Abort`. A thread that already handed its seat over is not
    /// counted on the seat's single-writer counters (its replacement writes
    /// them now), only in the pool's panic count.
    fn on_thread_handler_panic(&self, worker: usize, event: ThreadEvent, payload: PanicPayload) {
        crate::trace::thread_handler_panicked(
            worker,
            event.handler_name(),
            payload_message(&*payload),
        );
        self.report_panic(worker, payload, event.handler_name(), event.in_seat());
    }

    /// What every caught panic gets: counted, handed to the panic handler,
    /// and the process aborted under `PanicPolicy::Abort`.
    fn report_panic(
        &self,
        worker: usize,
        payload: PanicPayload,
        what: &str,
        in_seat: bool,
    ) -> PanicPolicy {
        self.panic_count.fetch_add(1, Ordering::Relaxed);
        if in_seat {
            self.counters.worker(worker).panicked();
        }
        self.recorder.observed_panic();
        match &self.panic_handler {
            Some(handler) => {
                if !call_handler(handler, payload) {
                    crate::trace::panic_handler_panicked(worker);
                }
            }
            None => drop_payload(payload),
        }
        if self.panic_policy == PanicPolicy::Abort {
            // Not `eprintln!`, which panics if stderr is closed.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "dreadpool: {what} panicked on worker {}-{worker} and the panic policy is Abort",
                self.name
            );
            std::process::abort();
        }
        self.panic_policy
    }

    fn take_injected_respawn_failure(&self) -> bool {
        self.respawn_failures_to_inject
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok()
    }

    /// Counts a replacement thread the OS refused.
    pub(crate) fn respawn_failed(&self) {
        self.respawn_failures.fetch_add(1, Ordering::Relaxed);
    }

    /// Replacement threads the OS refused so far.
    pub(crate) fn respawn_failures(&self) -> usize {
        self.respawn_failures.load(Ordering::Relaxed)
    }

    pub(crate) fn panic_count(&self) -> usize {
        self.panic_count.load(Ordering::Relaxed)
    }

    /// A snapshot of every counter.
    #[cfg(feature = "metrics")]
    pub(crate) fn metrics_snapshot(&self) -> crate::metrics::PoolMetrics {
        use crate::metrics::{PoolGauges, WorkerGauges};
        self.counters.snapshot(
            PoolGauges {
                name: &self.name,
                global_queue_depth: self.global.len(),
                tasks_spawned_external: self.counts.external_total(),
                tasks_pending: self.counts.pending(),
                panics: self.panic_count() as u64,
                respawn_failures: self.respawn_failures() as u64,
            },
            |index| WorkerGauges {
                tasks_run: self.counts.completed_by(index),
                tasks_spawned_local: self.counts.spawned_by(index),
                local_queue_depth: self.stealers[index].len(),
            },
        )
    }
}
