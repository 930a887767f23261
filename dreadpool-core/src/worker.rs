//! A worker thread: the seed's loop, with what the peers learned.
//!
//! Each pass: every [`GLOBAL_CHECK_INTERVAL`] tasks, take one task from the
//! global queue first, so external work never starves behind a flood of local
//! work; otherwise pop the local queue (newest first: see the comment on
//! `Worker::new_lifo` in `builder.rs`); when it is empty, top it off from the
//! global queue (up to the backlog target, popping one to run at once; after
//! pulls that drained it, with a short pause first: `pull_pacer.rs`); when
//! that is empty too, steal a batch from a peer, starting at a random one;
//! when nothing is anywhere, sleep (see `sleep/README.md`) or, once the pool
//! shuts down and is idle, exit.

use crate::fork_join::{ForkLatch, JobRef, LatentForks, SharedForks};
use crate::latch::Latch;
use crate::metrics::SpawnSampler;
use crate::panic::PanicPolicy;
use crate::pull_pacer::PullPacer;
use crate::queue::{Steal, Worker};
use crate::registry::Registry;
use crate::sync::Arc;
use crate::task::{Envelope, IntoTask, Task};
use crate::thread_hooks::{self, ThreadEvent};
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::time::Instant;

/// Every this many tasks a worker looks at the global queue before its own.
/// Go's scheduler uses 61 for the same purpose: prime, so it does not beat in
/// step with periodic workloads, and rare enough to cost nothing.
const GLOBAL_CHECK_INTERVAL: u32 = 61;

/// The most forks a worker keeps shared at once (`fork_join/README.md`):
/// one per peer that may be idle, so that several thieves each find a piece
/// at once, but few, since each shared fork that nobody takes costs its
/// owner a lock to take it back. (On 2 threads, keeping 2 shared instead
/// of 1 changed nothing measurable on the quicksort: 4 to 9 steals per
/// sort either way, 119-123 ms against rayon's 119-128.)
const MAX_SHARED_FORKS: usize = 4;

/// What a worker owns and hands to its replacement when its thread is
/// respawned: the same index, the same local queue (whose stealers the peers
/// still hold), so nothing queued is lost.
pub(crate) struct WorkerSeat {
    pub(crate) index: usize,
    pub(crate) queue: Worker<Task>,
}

impl WorkerSeat {
    pub(crate) fn new(index: usize, queue: Worker<Task>) -> Self {
        WorkerSeat { index, queue }
    }
}

/// The running worker, reachable from its tasks through [`CURRENT`].
pub(crate) struct WorkerThread {
    registry: Arc<Registry>,
    state: WorkerSeat,
    /// Where batches land to be counted before they join `state.queue` (see
    /// `take_batch`); always empty between transfers. Nobody steals from it.
    scratch: Worker<Task>,
    /// Which of this worker's spawns into its own pool to time.
    sampler: SpawnSampler,
    /// xorshift64 state for picking the first steal victim.
    rng: Cell<u64>,
    tick: Cell<u32>,
    /// The pause before the next global pull when out of local work.
    pacer: PullPacer,
    /// Whether the flight recorder records task events (its `Tasks` level),
    /// as last looked up: refreshed every `GLOBAL_CHECK_INTERVAL` tasks and
    /// around every sleep, so that the per-task checks (one per spawn, one
    /// per run) read a field of this struct, not the pool's shared level.
    records_tasks: Cell<bool>,
    /// This seat's flight recorder ring, for the per-task events.
    seat_ring: crate::recorder::SeatRing,
    /// The forks of this worker's joins that are not yet shared
    /// (`fork_join/README.md`).
    latent: LatentForks,
    /// How many of its oldest forks this worker keeps shared: one per peer
    /// that could take one, at most [`MAX_SHARED_FORKS`]; none on a pool of
    /// one thread, whose joins therefore never share.
    shared_forks_kept: usize,
    /// This worker's count of tasks from outside (metrics), at hand.
    outside_tasks: crate::metrics::OutsideTaskCounter,
    /// `&registry.shared_forks[index]`, looked up once: every fork looks at
    /// it, and indexing (a bounds check, a multiply) was a third of what
    /// the look cost.
    own_shared_forks: *const SharedForks,
}

/// What [`CURRENT`] holds: the worker running on this thread, if any.
///
/// Its drop (when the thread's locals are destroyed with a worker still in
/// it, as after a panic out of the worker loop) clears [`CURRENT_PTR`]
/// first, so that no destructor running later finds a dangling pointer
/// there.
struct CurrentWorker(RefCell<Option<Rc<WorkerThread>>>);

impl Drop for CurrentWorker {
    fn drop(&mut self) {
        #[cfg(not(loom))]
        CURRENT_PTR.with(|ptr| ptr.set(std::ptr::null()));
    }
}

#[cfg(not(loom))]
thread_local! {
    /// The worker running on this thread, if any: set for the whole life
    /// of the worker loop. It keeps the worker alive; [`CURRENT_PTR`] is
    /// how the hot paths reach it.
    static CURRENT: CurrentWorker = const { CurrentWorker(RefCell::new(None)) };
}

// loom runs its modelled threads on one OS thread: their thread-locals must
// be loom's.
#[cfg(loom)]
loom::thread_local! {
    static CURRENT: CurrentWorker = CurrentWorker(RefCell::new(None));
}

#[cfg(not(loom))]
thread_local! {
    /// The worker in [`CURRENT`], as a plain pointer, for the hot paths
    /// (every spawn asks whether its thread is a worker of the pool, and
    /// `join` which worker it is on): a `const`-initialised cell with no
    /// destructor is a single load from the thread's TLS block (the
    /// `RefCell<Option<Rc<..>>>` needs a lazy-initialisation check and a
    /// borrow; on the spawn path that was about 10 instructions a spawn,
    /// callgrind). Set and cleared together with `CURRENT`, which keeps the
    /// worker alive meanwhile.
    static CURRENT_PTR: Cell<*const WorkerThread> = const { Cell::new(std::ptr::null()) };
}

/// Makes `worker` (or nobody) this thread's current worker.
fn set_current(worker: Option<Rc<WorkerThread>>) {
    #[cfg(not(loom))]
    CURRENT_PTR.with(|ptr| ptr.set(worker.as_ref().map_or(std::ptr::null(), Rc::as_ptr)));
    CURRENT.with(|current| *current.0.borrow_mut() = worker);
}

/// The worker running on this thread, or null. The pointer stays valid for
/// as long as the caller is inside one of that worker's tasks.
#[inline(always)]
pub(crate) fn current_ptr() -> *const WorkerThread {
    #[cfg(not(loom))]
    return CURRENT_PTR.with(Cell::get);
    #[cfg(loom)]
    return CURRENT.with(|current| {
        current
            .0
            .borrow()
            .as_ref()
            .map_or(std::ptr::null(), Rc::as_ptr)
    });
}

/// Counts a task from outside the pool on the worker running it (called by
/// the task itself: `Task::marked_from_outside`).
#[inline(always)]
pub(crate) fn count_outside_task() {
    // Only the `metrics` feature counts them; without it, only tasks with
    // an identity for the flight recorder are marked, and they need not
    // look up their worker.
    if !crate::metrics::COUNTS_BATCHES {
        return;
    }
    let worker = current_ptr();
    if !worker.is_null() {
        // SAFETY: non-null: the worker runs the task calling us.
        unsafe { (*worker).outside_tasks.count() };
    }
}

/// Calls `f` with the worker running on this thread.
///
/// # Panics
///
/// If this thread is not a worker (a bug: only workers run the callers).
pub(crate) fn with_current<R>(f: impl FnOnce(&WorkerThread) -> R) -> R {
    let worker = current_ptr();
    assert!(!worker.is_null(), "dreadpool: not on a worker thread");
    // SAFETY: non-null, so `CURRENT` holds it, and our caller runs inside
    // one of its tasks, which it outlives.
    f(unsafe { &*worker })
}

/// How a worker loop ended.
enum Exit {
    /// The pool shut down and is idle.
    Shutdown,
    /// A task panicked under [`PanicPolicy::Respawn`]: replace the thread.
    Respawn,
    /// A nested loop's latch was set.
    Done,
    /// A nested loop's deadline passed.
    TimedOut,
}

/// What a nested worker loop (a worker waiting inside one of its tasks)
/// runs until.
struct WaitTarget<'a> {
    latch: WaitLatch<'a>,
    deadline: Option<Instant>,
}

/// The latch a nested worker loop waits on.
#[derive(Clone, Copy)]
enum WaitLatch<'a> {
    /// A scope's, a broadcast's or a task handle's.
    Task(&'a Latch),
    /// A join's whose second half was stolen: the loop looks for work in
    /// the order that helps it finish (`find_task_in_join`).
    Fork(&'a ForkLatch),
}

impl WaitLatch<'_> {
    fn is_set(self) -> bool {
        match self {
            WaitLatch::Task(latch) => latch.is_set(),
            WaitLatch::Fork(latch) => latch.is_set(),
        }
    }

    /// The second look before a sleep (after the sleep registration):
    /// true if set. A fork latch is marked so that its setter wakes us
    /// (`fork_join/fork_latch.rs`); a task latch's waiter was registered
    /// before the loop started (`latch.rs`).
    fn is_set_before_sleep(self) -> bool {
        match self {
            WaitLatch::Task(latch) => latch.is_set(),
            WaitLatch::Fork(latch) => !latch.mark_sleepy(),
        }
    }
}

/// What the worker found when it ran out of work.
enum Idle {
    /// Its second look found work: search again (it counts as searching).
    Search,
    /// It slept and was woken: search (it counts as searching).
    Woken,
    /// It slept and was woken with a task handed to it: run that (it counts
    /// as running).
    HandedOff(Task),
    /// The pool is shut down and idle.
    Exit,
}

/// If the calling thread is a worker of `registry`, pushes `task` to its local
/// queue; otherwise gives it back.
#[inline(always)]
pub(crate) fn push_if_local<T: IntoTask>(
    registry: &Registry,
    task: T,
    envelope: Envelope,
) -> Result<(), (T, Envelope)> {
    let worker = current_ptr();
    if worker.is_null() {
        return Err((task, envelope));
    }
    // SAFETY: non-null, so `CURRENT` holds this worker (the two are set and
    // cleared together, the pointer first, also when the thread's locals
    // are destroyed: `CurrentWorker`), and nothing below runs code that
    // could clear it: making the task and pushing it run no user code.
    let worker = unsafe { &*worker };
    if !std::ptr::eq(&*worker.registry, registry) {
        return Err((task, envelope));
    }
    let sampled_at = worker.sampler.sample(&registry.metrics);
    if worker.records_tasks() {
        // Made inline, as the unrecorded task is: out of line, as a generic
        // function of its own, it cost the `Tasks` level's spawns 22-30
        // instructions more (a call, a frame, the closure and the envelope
        // through memory) and the default level nothing measurable. Marked
        // unlikely, so that the spawn site's usual path stays together.
        crate::hint::cold_path();
        let id = worker.seat_ring.next_task_id();
        worker.push_local_recorded(envelope.into_task(task, sampled_at, Some(id)), id);
    } else {
        worker.push_local(envelope.into_task(task, sampled_at, None));
    }
    Ok(())
}

/// Waits until `latch` is set, or until `deadline`; returns whether it is set.
///
/// On a worker thread (of any pool) the worker keeps running its pool's
/// tasks while it waits, and sleeps through the pool's sleep protocol when
/// there are none, so waiting inside a task can never deadlock the pool (see
/// `latch.rs`). A task it runs meanwhile that panics under
/// [`PanicPolicy::Respawn`] is handled as under `Continue`: the thread cannot
/// be replaced in the middle of the task that is waiting. On any other thread
/// it simply blocks. A long task run meanwhile can delay the return past
/// `deadline`.
pub(crate) fn wait_for(latch: &Latch, deadline: Option<Instant>) -> bool {
    if latch.is_set() {
        return true;
    }
    let worker = current_ptr();
    if worker.is_null() {
        return latch.wait_blocking(deadline);
    }
    // SAFETY: non-null: this thread is a worker, inside one of its tasks
    // (the one waiting), which the worker outlives.
    let worker = unsafe { &*worker };
    worker.flight().wait_begin();
    let set = worker.wait_in_loop(latch, deadline);
    worker.flight().wait_end();
    set
}

/// The registry of the pool whose worker runs on this thread, if any.
pub(crate) fn current_registry() -> Option<Arc<Registry>> {
    CURRENT
        .try_with(|current| {
            current
                .0
                .borrow()
                .as_deref()
                .map(|worker| Arc::clone(&worker.registry))
        })
        .ok()
        .flatten()
}

/// The index of the worker running on this thread, if it belongs to
/// `registry` (any pool when `registry` is `None`).
pub(crate) fn current_index(registry: Option<&Registry>) -> Option<usize> {
    CURRENT
        .try_with(|current| {
            current.0.borrow().as_deref().and_then(|worker| {
                let mine = registry.is_none_or(|r| std::ptr::eq(&*worker.registry, r));
                mine.then_some(worker.state.index)
            })
        })
        .ok()
        .flatten()
}

/// Runs a task picked for latency sampling, recording its schedule delay and
/// run time on the worker that runs it.
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
pub(crate) fn run_timed(spawned: std::time::Instant, task: Task) {
    let started = std::time::Instant::now();
    let delay = started.saturating_duration_since(spawned);
    // (Recorded before the run, so that a task that panics still counts.)
    with_worker(|worker| worker.recorder().schedule_delay(delay));
    task.run();
    let ran = started.elapsed();
    with_worker(|worker| {
        worker.recorder().run_time(ran);
        worker.registry.flight.observed_latency(delay, ran);
    });
}

/// The index of the worker running on this thread if it belongs to the pool
/// whose flight recorder has id `pool_id`.
#[cfg_attr(not(feature = "recorder"), allow(dead_code))]
pub(crate) fn current_index_in_pool(pool_id: u64) -> Option<usize> {
    CURRENT
        .try_with(|current| {
            current.0.borrow().as_deref().and_then(|worker| {
                (worker.registry.flight.pool_id() == pool_id).then_some(worker.state.index)
            })
        })
        .ok()
        .flatten()
}

#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
fn with_worker(f: impl FnOnce(&WorkerThread)) {
    let _ = CURRENT.try_with(|current| {
        if let Some(worker) = current.0.borrow().as_deref() {
            f(worker);
        }
    });
}

/// The body of every worker thread, the first and every replacement.
pub(crate) fn main(registry: Arc<Registry>, mut state: WorkerSeat, mut owes_completion: bool) {
    let index = state.index;
    let _span = crate::trace::worker_span(&registry.name, index);
    // Paired with the exit handler at each return below (`thread_hooks.rs`).
    thread_hooks::run(&registry, ThreadEvent::Start, index);
    // A thread started with a completion owed is a replacement.
    let mut replacement = owes_completion;
    loop {
        let worker = Rc::new(WorkerThread::new(Arc::clone(&registry), state));
        worker.refresh_record_level();
        set_current(Some(Rc::clone(&worker)));
        if owes_completion {
            // The predecessor's panicked task: counted only now, so that a
            // join() returning after a panic finds the replacement running.
            if replacement {
                registry.metrics.worker(index).respawned();
                registry.flight.worker(index).respawned();
            }
            registry.counts.completed(index);
        }
        let exit = worker.run_loop(None);
        set_current(None);
        state = Rc::into_inner(worker)
            .expect("only the worker loop and CURRENT hold the worker")
            .state;
        match exit {
            Exit::Shutdown | Exit::Done | Exit::TimedOut => {
                registry.metrics.worker(index).stopped();
                registry.flight.worker(index).stopped();
                thread_hooks::run(&registry, ThreadEvent::Exit, index);
                return;
            }
            Exit::Respawn => {
                registry.metrics.worker(index).respawning();
                // The last event this thread records: once the replacement
                // starts, the seat's ring is the replacement's to write.
                registry.flight.worker(index).respawning();
                if cfg!(all(loom, feature = "__broken_respawn_fresh_queue")) {
                    // The mistake the seed's `mem::replace` avoids: the
                    // replacement starts with an empty queue (the loom
                    // models catch the lost tasks).
                    state.queue = Worker::new_lifo();
                }
                match registry.spawn_worker(state, true) {
                    Ok(()) => {
                        crate::trace::worker_respawned(index);
                        thread_hooks::run(&registry, ThreadEvent::ExitAfterHandover, index);
                        return;
                    }
                    Err(failure) => {
                        // Keep this thread as the worker: capacity is never
                        // lost. It counts the completion it owes at the top
                        // of the loop.
                        registry.respawn_failed();
                        crate::trace::respawn_failed(index, &failure.error);
                        state = failure.state;
                        owes_completion = true;
                        replacement = false;
                    }
                }
            }
        }
    }
}

impl WorkerThread {
    fn new(registry: Arc<Registry>, state: WorkerSeat) -> Self {
        let seed = (state.index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let seat_ring = registry.flight.seat_ring(state.index);
        let own_shared_forks: *const SharedForks = &registry.shared_forks[state.index];
        let outside_tasks = registry.metrics.outside_task_counter(state.index);
        let shared_forks_kept = (registry.threads() - 1).min(MAX_SHARED_FORKS);
        WorkerThread {
            registry,
            state,
            scratch: Worker::new_lifo(),
            sampler: SpawnSampler::new(),
            rng: Cell::new(seed | 1),
            tick: Cell::new(0),
            pacer: PullPacer::default(),
            records_tasks: Cell::new(false),
            seat_ring,
            latent: LatentForks::new(),
            outside_tasks,
            shared_forks_kept,
            own_shared_forks,
        }
    }

    /// This worker's index in its pool.
    #[inline(always)]
    pub(crate) fn index(&self) -> usize {
        self.state.index
    }

    /// The pool this worker belongs to.
    pub(crate) fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The forks of this worker's joins that are not yet shared.
    #[inline(always)]
    pub(crate) fn latent_forks(&self) -> &LatentForks {
        &self.latent
    }

    /// Counts a join (metrics).
    #[inline(always)]
    pub(crate) fn joined(&self) {
        self.recorder().joined();
    }

    /// At a fork: shares the oldest latent fork if fewer than
    /// `shared_forks_kept` of ours are shared (thieves took them, or their
    /// joins ended), so that an idle worker always finds this worker's
    /// largest pieces of work at once. Costs a load of a line that only
    /// changes when a fork is shared or taken.
    #[inline(always)]
    pub(crate) fn share_a_fork_if_wanted(&self) {
        if self.own_shared_forks().len() < self.shared_forks_kept {
            self.share_oldest_fork();
        }
    }

    /// This worker's shared forks.
    #[inline(always)]
    fn own_shared_forks(&self) -> &SharedForks {
        // SAFETY: `own_shared_forks` points into `registry`, which this
        // worker holds (an `Arc`) and whose lists never move.
        unsafe { &*self.own_shared_forks }
    }

    /// Moves the oldest latent fork to the shared list, as a task of its
    /// own (counted, so that the thief's run, or the owner's reclaim, takes
    /// the count back), and wakes a sleeper to take it unless someone
    /// already searches. No fence, as for a local spawn
    /// (`Sleep::notify_local_task`): if no thief comes, the owner takes the
    /// fork back at its join.
    #[cold]
    #[inline(never)]
    fn share_oldest_fork(&self) {
        let Some(job) = self.latent.share_oldest() else {
            return;
        };
        let index = self.state.index;
        self.registry.counts.local_spawned(index);
        self.recorder().shared_fork();
        self.flight().fork_shared(job.id());
        crate::trace::fork_shared(index);
        self.own_shared_forks().push(job);
        self.registry.sleep.notify_local_task();
    }

    /// At the end of a join whose fork was shared: takes it back from the
    /// shared list if no thief took it. Returns whether it did.
    #[cold]
    #[inline(never)]
    pub(crate) fn reclaim_fork(&self, job: JobRef) -> bool {
        let index = self.state.index;
        if !self.own_shared_forks().reclaim(job) {
            return false;
        }
        // The shared fork's count, taken back as if it had run as a task.
        self.registry.counts.completed(index);
        true
    }

    /// A shared fork this worker took (a thief, or the owner while it
    /// waits), as the task that runs it. One word (the job reference):
    /// stored inline, no allocation.
    fn fork_task(job: JobRef) -> Task {
        // SAFETY: `job` was taken from a shared list, so nobody else runs
        // it, and its owner waits for it (`fork_join/README.md`).
        Task::new(move || unsafe { crate::fork_join::run_shared(job) })
    }

    /// [`wait_for`] on this worker.
    ///
    /// First it runs the tasks in its own queue, newest first, until the
    /// latch is set: what a scope or a handle waits for was usually spawned
    /// right there, so most waits end without registering as the latch's
    /// waiter. Registering clones the pool's `Arc` (a contended count) and
    /// locks the latch, and the setter of a latch with a waiter locks the
    /// pool's idle list to wake it: nested scopes cost 1.5x rayon's per
    /// spawn with every wait registered (`BENCHMARKS.md`). Only when its
    /// queue is empty does it register and run the general loop, which
    /// sleeps when there is nothing anywhere.
    fn wait_in_loop(&self, latch: &Latch, deadline: Option<Instant>) -> bool {
        while let Some(task) = self.state.queue.pop() {
            self.execute(task, true);
            if latch.is_set() {
                return true;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return false;
            }
        }
        latch.register_worker(Arc::clone(&self.registry), self.state.index);
        let exit = self.run_loop(Some(&WaitTarget {
            latch: WaitLatch::Task(latch),
            deadline,
        }));
        match exit {
            Exit::Done => true,
            Exit::TimedOut => {
                latch.unregister_worker();
                latch.is_set()
            }
            // Neither can happen while the waiting task itself is pending
            // (the pool is not idle, and nested loops handle Respawn as
            // Continue); if it ever did, blocking is still correct.
            Exit::Shutdown | Exit::Respawn => latch.wait_blocking(deadline),
        }
    }

    /// Waits at the end of a join until the thief that took its fork has
    /// run it, running other work meanwhile (`find_task_in_join`), and
    /// sleeping through the pool's protocol when there is none.
    #[cold]
    #[inline(never)]
    pub(crate) fn wait_for_fork(&self, latch: &ForkLatch) {
        if latch.is_set() {
            return;
        }
        self.flight().wait_begin();
        let exit = self.run_loop(Some(&WaitTarget {
            latch: WaitLatch::Fork(latch),
            deadline: None,
        }));
        self.flight().wait_end();
        if !matches!(exit, Exit::Done) {
            // Neither shutdown (the pool is not idle while the joining task
            // runs) nor a respawn (nested loops treat it as `Continue`) can
            // end this loop; should one ever, the thief still sets the latch.
            while !latch.is_set() {
                crate::sync::thread::yield_now();
            }
        }
    }

    fn recorder(&self) -> crate::metrics::WorkerRecorder<'_> {
        self.registry.metrics.worker(self.state.index)
    }

    /// This worker's track in the flight recorder.
    #[inline(always)]
    fn flight(&self) -> crate::recorder::WorkerTrack<'_> {
        self.registry.flight.worker(self.state.index)
    }

    /// Whether to record task events now (see `records_tasks`); a constant
    /// `false` without the `recorder` feature.
    #[inline(always)]
    fn records_tasks(&self) -> bool {
        crate::recorder::ENABLED && self.records_tasks.get()
    }

    /// Looks the recorder's level up again.
    fn refresh_record_level(&self) {
        self.records_tasks.set(self.flight().records_tasks());
    }

    fn push_local(&self, task: Task) {
        self.registry.counts.local_spawned(self.state.index);
        self.state.queue.push(task);
        self.registry.sleep.notify_local_task();
    }

    /// A spawn from one of this worker's tasks while the flight recorder
    /// records spawns: recorded (`id` is the task's identity), then pushed.
    #[inline(never)]
    fn push_local_recorded(&self, task: Task, id: u64) {
        // SAFETY: this worker holds its pool (`registry`), which owns the
        // recorder, and is the thread in the ring's seat.
        unsafe { self.seat_ring.spawned_local(id) };
        self.push_local(task);
    }

    /// The worker loop. `until` is `None` for the thread's main loop, which
    /// runs until shutdown (or a respawn); `Some` for a worker waiting inside
    /// one of its tasks, which runs until the target's latch is set.
    fn run_loop(&self, until: Option<&WaitTarget<'_>>) -> Exit {
        let recorder = self.recorder();
        let flight = self.flight();
        recorder.running();
        flight.running();
        // Counted by the sleep protocol as a searcher (woken, or back from a
        // second look that found work).
        let mut searching = false;
        // Woken from a park and not yet told whether that found work.
        let mut woken = false;
        loop {
            if let Some(target) = until {
                let exit = if target.latch.is_set() {
                    Some(Exit::Done)
                } else if target.deadline.is_some_and(|d| Instant::now() >= d) {
                    Some(Exit::TimedOut)
                } else {
                    None
                };
                if let Some(exit) = exit {
                    if searching {
                        self.stop_searching();
                        recorder.running();
                        flight.running();
                    }
                    if woken {
                        recorder.wakeup();
                    }
                    return exit;
                }
            }
            let found = if woken {
                self.find_task_after_wake()
            } else if until.is_some_and(|t| matches!(t.latch, WaitLatch::Fork(_))) {
                self.find_task_in_join()
            } else {
                self.find_task()
            };
            match found {
                Some(task) => {
                    // (A woken worker is always searching: checking `woken`
                    // only then keeps it off the per-task path.)
                    if searching {
                        searching = false;
                        self.stop_searching();
                        recorder.running();
                        flight.running();
                        if woken {
                            woken = false;
                            recorder.wakeup();
                        }
                    }
                    if self.execute(task, until.is_some()) == PanicPolicy::Respawn {
                        return Exit::Respawn;
                    }
                    if until.is_none() && self.run_local_queue() == PanicPolicy::Respawn {
                        return Exit::Respawn;
                    }
                }
                None => {
                    if woken {
                        woken = false;
                        recorder.noop_wakeup();
                        flight.noop_wakeup();
                    }
                    if !searching {
                        recorder.stopped_running();
                        flight.searching();
                    }
                    match self.idle(searching, until) {
                        Idle::Search => searching = true,
                        Idle::Woken => {
                            searching = true;
                            woken = true;
                        }
                        Idle::HandedOff(task) => {
                            searching = false;
                            recorder.running();
                            flight.running();
                            recorder.wakeup();
                            // Run at once, whatever `until` says: the task is
                            // ours alone, and the loop's next turn checks the
                            // latch and the deadline again.
                            if self.execute(task, until.is_some()) == PanicPolicy::Respawn {
                                return Exit::Respawn;
                            }
                        }
                        Idle::Exit => return Exit::Shutdown,
                    }
                }
            }
        }
    }

    /// The main loop's common case, in a loop of its own: runs tasks from
    /// the local queue back to back while it has them, exactly as
    /// [`find_task`](Self::find_task) would pick them, and returns (for the
    /// main loop to look further) when it is empty, at the tick on which
    /// `find_task` looks at the inbox and the global queue first, or when a
    /// task's panic calls for a respawn.
    ///
    /// Out of line: inside `run_loop`, which also carries the searching,
    /// sleeping and waiting states, LLVM kept the task and the loop's flags
    /// on the stack and moved the task through it three times per task; the
    /// `metrics` build's larger state changes made it worse (callgrind
    /// `--dump-instr`, the nested tree: 43 instructions a task with
    /// `tracing`, 48 with `metrics`).
    ///
    /// Whether runs are recorded is looked at once, on entry: the worker's
    /// cached flight-recorder level only changes at the check tick (and
    /// around sleeps in a task's wait), so a level switch takes effect
    /// within the same 61 tasks as before, and each of the two loops stays
    /// as small as the build without the recorder (with the test inside
    /// the loop, the recorder build ran 8 instructions a task more there).
    #[inline(never)]
    fn run_local_queue(&self) -> PanicPolicy {
        if self.records_tasks() {
            self.run_local_queue_as::<true>()
        } else {
            self.run_local_queue_as::<false>()
        }
    }

    #[inline(always)]
    fn run_local_queue_as<const RECORDED: bool>(&self) -> PanicPolicy {
        loop {
            let tick = self.tick.get().wrapping_add(1);
            if tick.is_multiple_of(GLOBAL_CHECK_INTERVAL) {
                return PanicPolicy::Continue;
            }
            let Some(task) = self.state.queue.pop() else {
                return PanicPolicy::Continue;
            };
            self.tick.set(tick);
            let policy = if RECORDED {
                self.execute_recorded(task, false)
            } else {
                self.execute_unrecorded(task, false)
            };
            if policy == PanicPolicy::Respawn {
                return PanicPolicy::Respawn;
            }
        }
    }

    fn find_task(&self) -> Option<Task> {
        let tick = self.tick.get().wrapping_add(1);
        self.tick.set(tick);
        if tick.is_multiple_of(GLOBAL_CHECK_INTERVAL) {
            self.refresh_record_level();
            if let Some(task) = self.pull_inbox().or_else(|| self.pull_global()) {
                return Some(task);
            }
        }
        self.state
            .queue
            .pop()
            .or_else(|| self.pull_inbox())
            .or_else(|| self.steal_fork())
            .or_else(|| self.paced_pull_global())
            .or_else(|| self.steal_from_peers())
    }

    /// What a worker waiting at the end of a join (its fork stolen) runs
    /// meanwhile, in the order that keeps its stack shallow and helps the
    /// waiting computation: its own queue (tasks its frames spawned), its
    /// own older shared forks (newest, so smallest, first), forks shared by
    /// peers, its inbox, peers' queues; the global queue last, so that no
    /// unrelated outside task starts ahead of the computation in flight.
    fn find_task_in_join(&self) -> Option<Task> {
        let own_forks = self.own_shared_forks();
        self.state
            .queue
            .pop()
            .or_else(|| own_forks.pop_newest().map(Self::fork_task))
            .or_else(|| self.steal_fork())
            .or_else(|| self.pull_inbox())
            .or_else(|| self.steal_from_peers())
            .or_else(|| self.pull_global())
    }

    /// Takes the oldest shared fork of a peer, trying every peer once from
    /// a random start (one job at a time: a stack job never travels in a
    /// batch, so it cannot be stranded behind other work in a thief's
    /// queue).
    fn steal_fork(&self) -> Option<Task> {
        let forks = &self.registry.shared_forks;
        let n = forks.len();
        if n < 2 {
            return None;
        }
        let start = self.next_random() as usize % n;
        for offset in 0..n {
            let victim = (start + offset) % n;
            if victim == self.state.index {
                continue;
            }
            if let Some(job) = forks[victim].steal() {
                // SAFETY: taken from its owner's list, so its owner waits
                // for it (or will), and the job is alive.
                let owner = unsafe { job.owner() };
                self.recorder().stole_fork();
                self.flight().fork_stolen(owner, job.id());
                crate::trace::fork_stolen(self.state.index, owner);
                return Some(Self::fork_task(job));
            }
        }
        None
    }

    /// [`pull_global`](Self::pull_global) for a worker that ran out of local
    /// work, paused when its recent pulls drained the global queue (see
    /// `pull_pacer.rs`).
    fn paced_pull_global(&self) -> Option<Task> {
        self.pacer.pause();
        let task = self.pull_global();
        let left = task.as_ref().map(|_| self.state.queue.len());
        self.pacer.pulled(left, self.registry.backlog);
        task
    }

    /// The first look of a worker just woken. It went to sleep only after
    /// finding its own queue empty, and only it pushes there, so the work it
    /// was woken for is in the global queue (or a peer's, or its inbox):
    /// looking there first spares the cold lines and the fence of popping
    /// its own empty queue before the task starts. With 40,000 wake samples
    /// this took the p99 spawn-to-start latency from 1.04x-1.05x the seed
    /// design's to 1.00x-1.01x in two runs each; ten later runs with it
    /// ranged from 0.96x to 1.04x (mean 1.01x), so the gain is within this
    /// machine's noise, kept because it costs nothing (`BENCHMARKS.md`).
    /// Its own queue is still looked at, last, so nothing depends on that
    /// argument for correctness.
    fn find_task_after_wake(&self) -> Option<Task> {
        self.pull_global()
            .or_else(|| self.pull_inbox())
            .or_else(|| self.state.queue.pop())
            .or_else(|| self.steal_fork())
            .or_else(|| self.steal_from_peers())
    }

    /// Takes a task addressed to this worker alone (`broadcast`).
    fn pull_inbox(&self) -> Option<Task> {
        let inbox = &self.registry.inboxes[self.state.index];
        loop {
            match inbox.steal() {
                Steal::Success(task) => return Some(task),
                Steal::Empty => return None,
                Steal::Retry => continue,
            }
        }
    }

    /// Tops off the local queue from the global one, up to the backlog
    /// target, and returns one task to run now.
    fn pull_global(&self) -> Option<Task> {
        // The limit counts the popped task too, so it is at least 1.
        let limit = self
            .registry
            .backlog
            .saturating_sub(self.state.queue.len())
            .max(1);
        let injector = &self.registry.injector;
        let queue = &self.state.queue;
        // Straight into the local queue: the metrics count tasks from outside
        // where they run (`Task::marked_from_outside`), not here. The recorder's
        // batch is the queue's growth, which a thief stealing meanwhile
        // makes smaller (its depth sample is exact).
        let before = if crate::recorder::ENABLED {
            queue.len()
        } else {
            0
        };
        loop {
            match injector.steal_batch_with_limit_and_pop(queue, limit) {
                Steal::Success(task) => {
                    if crate::recorder::ENABLED {
                        let after = queue.len();
                        self.flight()
                            .pulled_global((after + 1).saturating_sub(before), || after);
                    }
                    return Some(task);
                }
                Steal::Empty => return None,
                Steal::Retry => continue,
            }
        }
    }

    /// Runs a batch transfer `take` (a steal from a peer) into this
    /// worker's local queue and returns the popped task with the batch size
    /// (popped task included).
    ///
    /// With the `metrics` feature the batch lands in a private scratch queue
    /// first and is counted there, then moved over: counting it in the
    /// shared local queue would undercount whenever a thief steals from it
    /// during the transfer (a test caught 978 global pulls for 1000 tasks,
    /// when global pulls were counted this way too). Without the feature
    /// the batch goes straight to the local queue and the size is not
    /// computed.
    fn take_batch(&self, take: impl FnOnce(&Worker<Task>) -> Steal<Task>) -> Steal<(Task, usize)> {
        if !crate::metrics::COUNTS_BATCHES {
            return match take(&self.state.queue) {
                Steal::Success(task) => Steal::Success((task, 0)),
                Steal::Empty => Steal::Empty,
                Steal::Retry => Steal::Retry,
            };
        }
        match take(&self.scratch) {
            Steal::Success(task) => {
                let batch = self.scratch.len() + 1;
                while let Some(moved) = self.scratch.pop() {
                    self.state.queue.push(moved);
                }
                Steal::Success((task, batch))
            }
            Steal::Empty => Steal::Empty,
            Steal::Retry => Steal::Retry,
        }
    }

    /// Steals a batch (about half) of a peer's queue, trying every peer once
    /// from a random start, again while any attempt lost a race.
    fn steal_from_peers(&self) -> Option<Task> {
        let stealers = &self.registry.stealers;
        let n = stealers.len();
        if n < 2 {
            return None;
        }
        let start = self.next_random() as usize % n;
        loop {
            let mut lost_a_race = false;
            for offset in 0..n {
                let victim = (start + offset) % n;
                if victim == self.state.index {
                    continue;
                }
                self.recorder().steal_attempted();
                match self.take_batch(|dest| stealers[victim].steal_batch_and_pop(dest)) {
                    Steal::Success((task, batch)) => {
                        self.recorder().stole(victim, batch);
                        self.flight()
                            .stole(victim, batch, || self.state.queue.len());
                        crate::trace::stole(self.state.index, victim, batch);
                        return Some(task);
                    }
                    Steal::Retry => lost_a_race = true,
                    Steal::Empty => {}
                }
            }
            if !lost_a_race {
                return None;
            }
        }
    }

    fn next_random(&self) -> u64 {
        let mut x = self.rng.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng.set(x);
        x
    }

    /// Runs one task, catching its panic. Returns the policy to apply:
    /// anything but `Respawn` means carry on with this thread. `nested` (the
    /// worker is waiting inside another task) turns `Respawn` into
    /// `Continue`: the thread cannot be replaced under the waiting task.
    #[inline(always)]
    fn execute(&self, task: Task, nested: bool) -> PanicPolicy {
        if self.records_tasks() {
            return self.execute_recorded(task, nested);
        }
        self.execute_unrecorded(task, nested)
    }

    /// [`execute`](Self::execute) at the recorder's `Tasks` level: the run
    /// after an event carrying the task's identity. Inlined: out of line it
    /// cost the `Tasks` level 6% more on the nested tree (a call per task),
    /// and inlined it cost the `Scheduler` level nothing measurable (-0.6%,
    /// 21 paired rounds; `BENCHMARKS.md`).
    #[inline(always)]
    fn execute_recorded(&self, task: Task, nested: bool) -> PanicPolicy {
        let id = task.record_id();
        // SAFETY: as in `push_local`.
        unsafe { self.seat_ring.run_begin(id) };
        match catch_unwind(AssertUnwindSafe(move || task.run())) {
            // The run's end is the next event of this level (the next run's
            // begin, a state change, a wait's end): see `recording::merge`.
            Ok(()) => self.completed(),
            Err(payload) => {
                self.flight().run_panicked(id);
                self.after_panic(payload, nested, id)
            }
        }
    }

    #[inline(always)]
    fn execute_unrecorded(&self, task: Task, nested: bool) -> PanicPolicy {
        match catch_unwind(AssertUnwindSafe(move || task.run())) {
            Ok(()) => self.completed(),
            Err(payload) => self.after_panic(payload, nested, 0),
        }
    }

    /// A task returned: count it done.
    #[inline(always)]
    fn completed(&self) -> PanicPolicy {
        self.registry.counts.completed(self.state.index);
        PanicPolicy::Continue
    }

    /// A task panicked: report it, and say whether to respawn. `id` is its
    /// identity for the flight recorder (0 if it has none). The panic is
    /// recorded before it is reported, so that a recording the report
    /// triggers shows it.
    #[cold]
    fn after_panic(
        &self,
        payload: crate::panic::PanicPayload,
        nested: bool,
        id: u64,
    ) -> PanicPolicy {
        let index = self.state.index;
        self.flight().panicked(id);
        let policy = self.registry.on_task_panic(index, payload);
        // (on_task_panic contains the handler's and the subscriber's
        // panics itself, so this cannot unwind.)
        if policy == PanicPolicy::Respawn && !nested {
            // The replacement counts the completion (see `main`).
            return PanicPolicy::Respawn;
        }
        self.registry.counts.completed(index);
        PanicPolicy::Continue
    }

    /// Stops searching after finding work; if this was the last searcher,
    /// spawners skipped waking sleepers on its account, so wake one more
    /// while work is visible.
    fn stop_searching(&self) {
        let registry = &self.registry;
        if registry.sleep.stop_searching() && registry.has_visible_work() {
            registry.sleep.wake_one();
        }
    }

    /// Nothing to do anywhere: register to sleep, look once more, then park,
    /// exit, or go back to searching.
    fn idle(&self, searching: bool, until: Option<&WaitTarget<'_>>) -> Idle {
        let registry = &self.registry;
        let index = self.state.index;
        registry.sleep.register_sleeper(index, searching);
        // Second look, after the registration's SeqCst fence: the queues, and
        // for a waiting worker its latch (see `latch.rs`). (Skipped only by
        // the `__broken_no_second_look` feature, which shows that the loom
        // models catch the seed's first lost wakeup.)
        let second_look = !cfg!(all(loom, feature = "__broken_no_second_look"));
        if second_look
            && (registry.has_visible_work_for(index)
                || until.is_some_and(|t| t.latch.is_set_before_sleep()))
        {
            return match registry.sleep.cancel(index) {
                Some(task) => Idle::HandedOff(task),
                None => Idle::Search,
            };
        }
        let shutting_down = registry.is_shutting_down();
        if (shutting_down || registry.joiners.has_waiters()) && registry.counts.is_idle() {
            registry.joiners.release_waiters_if_idle(&registry.counts);
            if shutting_down {
                // (Tasks are handed only to a worker that waits on its
                // condvar, which this one did not; should one arrive anyway,
                // it is run, not dropped.)
                if let Some(task) = registry.sleep.cancel(index) {
                    return Idle::HandedOff(task);
                }
                registry.sleep.stop_searching();
                // Sleepers waiting for the last task must see it is done.
                registry.sleep.wake_all();
                return Idle::Exit;
            }
        }
        crate::trace::sleeping(index);
        self.recorder().parking();
        self.flight().sleeping();
        self.pacer.reset();
        let handed = match until.and_then(|t| t.deadline) {
            Some(deadline) => registry.sleep.park_until(index, deadline),
            None => registry.sleep.park(index),
        };
        crate::trace::woken(index);
        self.flight().woken(handed.is_some());
        self.refresh_record_level();
        match handed {
            Some(task) => Idle::HandedOff(task),
            None => {
                self.recorder().searching();
                self.flight().searching();
                Idle::Woken
            }
        }
    }
}
