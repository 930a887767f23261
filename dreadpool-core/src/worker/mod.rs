//! A worker thread: the seed's loop, with what the peers learned.
//!
//! Each pass: every [`GLOBAL_CHECK_INTERVAL`] tasks, take one task from the
//! global queue first, so external work never starves behind a flood of local
//! work; otherwise pop the local queue (newest first: see the comment on
//! `Worker::new_lifo` in `builder.rs`); when it is empty, top it off from the
//! global queue (up to the backlog target, popping one to run at once; after
//! pulls that drained it, with a short pause first: `pull_pacer.rs`); when
//! that is empty too, steal a batch from a peer, starting with the one it last
//! stole from, then at a random one;
//! when nothing is anywhere, sleep (see `sleep/README.md`) or, once the pool
//! shuts down and is idle, exit.
//!
//! One concept a file: `current.rs` (which worker runs on this thread),
//! `lifecycle.rs` (a thread's start, respawn and exit), `run_loop.rs` (the
//! states of the loop), `find.rs` (where the next task comes from),
//! `execute.rs` (running one task), `idle.rs` (going to sleep), `wait.rs`
//! (waiting inside a task), `join_spin.rs` (a joiner's looks before it
//! sleeps), `current_thread.rs` (the building thread as
//! worker 0, `use_current_thread`). A spawn into the worker's own queue is decided
//! in `spawn/`; the fork-sharing policy is `fork_join/sharing.rs`'s.

mod current;
mod current_thread;
mod execute;
mod find;
mod idle;
mod join_spin;
mod lifecycle;
mod run_loop;
mod wait;
mod yielding;

pub(crate) use current::{current_index, current_ptr, current_registry, with_current};
pub(crate) use current_thread::{adopt, is_seated_outside_waits, vacate};
pub(crate) use execute::run_timed;
pub(crate) use lifecycle::main;
pub(crate) use wait::wait_for;
pub use yielding::{current_thread_has_pending_tasks, yield_local, yield_now, Yield};

use crate::fork_join::ForkSharing;
use crate::metrics::{PoolCounters, SpawnSampler};
use crate::pull_pacer::PullPacer;
use crate::queue::Worker;
use crate::registry::Registry;
use crate::sync::Arc;
use crate::task::Task;
use std::cell::Cell;

/// Every this many tasks a worker looks at the global queue before its own.
/// Go's scheduler uses 61 for the same purpose: prime, so it does not beat in
/// step with periodic workloads, and rare enough to cost nothing.
const GLOBAL_CHECK_INTERVAL: u32 = 61;

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
    /// xorshift64 state for picking where a search of peers starts.
    rng: Cell<u64>,
    /// The peer this worker last stole from while it still had work: the
    /// first one its next search polls (`find.rs`, `steal_from_peers`).
    last_victim: Cell<Option<usize>>,
    tick: Cell<u32>,
    /// The global queue's shard this worker takes from first
    /// (`queue/global.rs`).
    global_home: usize,
    /// The pause before the next global pull when out of local work.
    pacer: PullPacer,
    /// Whether the flight recorder records task events (its `Tasks` level),
    /// as last looked up: refreshed every `GLOBAL_CHECK_INTERVAL` tasks and
    /// around every sleep, so that the per-task checks (one per spawn, one
    /// per run) read a field of this struct, not the pool's shared level.
    records_tasks: Cell<bool>,
    /// This seat's flight recorder ring, for the per-task events.
    seat_ring: crate::recorder::SeatRing,
    /// Its forks, latent and shared (`fork_join/sharing.rs`).
    forks: ForkSharing,
    /// Worker 0 of a `use_current_thread` pool, on the user's thread
    /// (`current_thread.rs`): its spawns wake with a fence, its waits end
    /// with an idle worker's duty. Set once, before the worker is current.
    user_thread: bool,
    /// The pool whose spawns this worker pushes on the spawn's common path
    /// (`spawn/mod.rs`, `push_if_local`), woken without a fence: its own
    /// pool; null on worker 0 of a `use_current_thread` pool, so that the
    /// one comparison that finds a worker of the spawn's pool also sends
    /// worker 0's spawns to the path that fences (`push_local_fenced`),
    /// and the other workers' spawns pay no test of `user_thread`. Set
    /// with `user_thread`.
    unfenced_spawns_into: *const Registry,
    /// How many nested waits such a worker is in (`CurrentThreadWait`).
    user_waits: Cell<u32>,
}

impl WorkerThread {
    pub(super) fn new(registry: Arc<Registry>, state: WorkerSeat) -> Self {
        let seed = (state.index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let seat_ring = registry.recorder().seat_ring(state.index);
        let forks = ForkSharing::new(&registry, state.index);
        let unfenced_spawns_into: *const Registry = &*registry;
        let global_home = registry.global().home_of_worker(state.index);
        WorkerThread {
            global_home,
            registry,
            state,
            scratch: Worker::new_lifo(),
            sampler: SpawnSampler::new(),
            rng: Cell::new(seed | 1),
            last_victim: Cell::new(None),
            tick: Cell::new(0),
            pacer: PullPacer::default(),
            records_tasks: Cell::new(false),
            seat_ring,
            forks,
            user_thread: false,
            user_waits: Cell::new(0),
            unfenced_spawns_into,
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

    /// The pool whose spawns take the common path from this worker (see
    /// the field): its own, or null on a `use_current_thread` pool's
    /// worker 0.
    #[inline(always)]
    pub(crate) fn unfenced_spawns_into(&self) -> *const Registry {
        self.unfenced_spawns_into
    }

    /// Whether this is worker 0 of a `use_current_thread` pool, on the
    /// user's thread (`current_thread.rs`).
    pub(crate) fn is_user_thread(&self) -> bool {
        self.user_thread
    }

    /// This worker's forks (`fork_join/sharing.rs`).
    #[inline(always)]
    pub(crate) fn forks(&self) -> &ForkSharing {
        &self.forks
    }

    /// Picks this worker's spawns to time (one in the sampling rate of
    /// `counters`, its pool's): the spawn instant of a picked one.
    #[inline(always)]
    pub(crate) fn sample_spawn(&self, counters: &PoolCounters) -> Option<std::time::Instant> {
        self.sampler.sample(counters)
    }

    /// A fresh identity for a task this worker spawns at the recorder's
    /// `Tasks` level (from its seat's block of them).
    #[inline(always)]
    pub(crate) fn next_task_id(&self) -> u64 {
        self.seat_ring.next_task_id()
    }

    /// A spawn from one of this worker's tasks: counted, pushed to its own
    /// queue, and a sleeper woken if nobody searches (no fence: see
    /// `Sleep::notify_local_task`). Not on a `use_current_thread` pool's
    /// worker 0, which may not come back to run it: that one's spawns take
    /// [`push_local_fenced`](Self::push_local_fenced).
    pub(crate) fn push_local(&self, task: Task) {
        self.registry.counts().local_spawned(self.state.index);
        self.state.queue.push(task);
        self.registry.sleep().notify_local_task();
    }

    /// [`push_local`](Self::push_local) on worker 0 of a
    /// `use_current_thread` pool: the sleeper woken with the fence of an
    /// outside spawn (`current_thread.rs`, point 1). Its spawns come here
    /// through the common path's failed comparison (`unfenced_spawns_into`),
    /// so that the other workers' spawns test nothing for it.
    #[cold]
    #[inline(never)]
    pub(crate) fn push_local_fenced(&self, task: Task) {
        self.registry.counts().local_spawned(self.state.index);
        self.state.queue.push(task);
        // The broken variant wakes for worker 0's spawns as for any other
        // worker's, without the fence.
        if broken!("__broken_current_thread_local_notify") {
            self.registry.sleep().notify_local_task();
        } else {
            self.registry.sleep().notify_external_task();
        }
    }

    /// [`push_local`](Self::push_local) (or its fenced variant) while the
    /// flight recorder records spawns: recorded first (`id` is the task's
    /// identity).
    #[inline(never)]
    pub(crate) fn push_local_recorded(
        &self,
        task: Task,
        id: u64,
        site: &'static std::panic::Location<'static>,
    ) {
        // SAFETY: this worker holds its pool (`registry`), which owns the
        // recorder, and is the thread in the ring's seat.
        unsafe { self.seat_ring.spawned_local(id, site) };
        if self.user_thread {
            self.push_local_fenced(task);
        } else {
            self.push_local(task);
        }
    }

    /// Where this worker reports its state changes.
    #[inline(always)]
    pub(crate) fn probe(&self) -> crate::probe::WorkerProbe<'_> {
        self.registry.probe(self.state.index)
    }

    /// Whether to record task events now (see `records_tasks`); a constant
    /// `false` without the `recorder` feature.
    #[inline(always)]
    pub(crate) fn records_tasks(&self) -> bool {
        crate::recorder::ENABLED && self.records_tasks.get()
    }

    /// Looks the recorder's level up again.
    pub(super) fn refresh_record_level(&self) {
        self.records_tasks
            .set(self.registry.recorder().records_tasks());
    }

    /// The next of this worker's pseudo-random numbers (xorshift64), for
    /// picking where a search starts.
    pub(crate) fn next_random(&self) -> u64 {
        let mut x = self.rng.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng.set(x);
        x
    }
}
