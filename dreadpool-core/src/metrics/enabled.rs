//! The real counters, compiled with the `metrics` feature.
//!
//! Every counter has a single writer, the worker that owns the block, so an
//! increment is a plain `Relaxed` load and store: no locked read-modify-write
//! on the hot path. Blocks are cache-padded so that one worker's writes never
//! invalidate another's line. Readers (`snapshot`) load each field `Relaxed`:
//! a snapshot is a set of individually current values, not a transaction.
//!
//! `tasks_run` and `tasks_spawned_local` are not kept here at all: they are
//! the per-worker shards of the pending-task count (`pending.rs`), which the
//! pool maintains anyway, so they cost nothing extra.

use super::histogram::AtomicHistogram;
use super::snapshot::{PoolMetrics, WorkerMetrics, WorkerState};
use crate::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use crossbeam_utils::CachePadded;
use std::cell::Cell;
use std::time::{Duration, Instant};

/// Single-writer add. Always inlined: a load and a store, which LLVM left
/// as a call on `join`'s path, with its spills, on every join
/// (`BENCHMARKS.md`, "Core design figures": metrics-add-inlined).
#[inline(always)]
fn add(counter: &AtomicU64, n: u64) {
    counter.store(counter.load(Ordering::Relaxed) + n, Ordering::Relaxed);
}

struct CounterBlock {
    global_pulls: AtomicU64,
    steals_attempted: AtomicU64,
    steals_succeeded: AtomicU64,
    tasks_stolen: AtomicU64,
    sleeps: AtomicU64,
    sleeps_cancelled: AtomicU64,
    global_empty_polls: AtomicU64,
    wakeups: AtomicU64,
    noop_wakeups: AtomicU64,
    respawns: AtomicU64,
    panics: AtomicU64,
    joins: AtomicU64,
    forks_shared: AtomicU64,
    forks_stolen: AtomicU64,
    /// Nanoseconds of finished running stretches.
    busy_nanos: AtomicU64,
    /// When the current running stretch began, in nanoseconds since the pool
    /// started; meaningful while `state` is `Running`.
    running_since: AtomicU64,
    state: AtomicU8,
    stolen_from: Box<[AtomicU64]>,
    schedule_delay: AtomicHistogram,
    run_time: AtomicHistogram,
}

/// A pool's metrics blocks.
pub(crate) struct PoolCounters {
    started: Instant,
    sampling: u32,
    workers: Box<[CachePadded<CounterBlock>]>,
}

/// The values a snapshot needs from the rest of the pool.
pub(crate) struct PoolGauges<'a> {
    pub(crate) name: &'a str,
    pub(crate) global_queue_depth: usize,
    pub(crate) tasks_spawned_external: u64,
    pub(crate) tasks_pending: u64,
    pub(crate) panics: u64,
    pub(crate) respawn_failures: u64,
}

/// The values a worker's snapshot needs from the rest of the pool.
pub(crate) struct WorkerGauges {
    pub(crate) tasks_run: u64,
    pub(crate) tasks_spawned_local: u64,
    pub(crate) local_queue_depth: usize,
}

thread_local! {
    /// Spawns made by this thread, for picking one in `sampling` to time.
    static SPAWN_TICK: Cell<u32> = const { Cell::new(0) };
}

/// A worker's choice of which of its own spawns to time: one in `sampling`
/// of the spawns it makes into its own pool.
///
/// Spawns from inside the pool are the hot path (a nested spawn tree's task
/// is little more than its spawn: `BENCHMARKS.md`, "Core design figures":
/// metrics-spawn-sampler): this countdown lives in the worker itself, so the
/// common case is a load, a compare and a store, with no thread-local
/// lookup and no reading of the pool's rate, which only the cold restart
/// consults. Spawns from other threads use [`PoolCounters::sample_spawn`].
pub(crate) struct SpawnSampler {
    /// Spawns to make before the next timed one, counting this one.
    left: Cell<u32>,
}

impl SpawnSampler {
    pub(crate) fn new() -> Self {
        SpawnSampler { left: Cell::new(0) }
    }

    /// Returns the spawn instant if this spawn is to be timed.
    #[inline(always)]
    pub(crate) fn sample(&self, pool: &PoolCounters) -> Option<Instant> {
        let left = self.left.get();
        if left > 1 {
            self.left.set(left - 1);
            return None;
        }
        self.restart(pool)
    }

    #[cold]
    #[inline(never)]
    fn restart(&self, pool: &PoolCounters) -> Option<Instant> {
        if pool.sampling == 0 {
            // Timing is off: come back here only every 4 billion spawns.
            self.left.set(u32::MAX);
            return None;
        }
        self.left.set(pool.sampling);
        Some(Instant::now())
    }
}

impl PoolCounters {
    pub(crate) fn new(workers: usize, sampling: u32) -> Self {
        PoolCounters {
            started: Instant::now(),
            sampling,
            workers: (0..workers)
                .map(|_| {
                    CachePadded::new(CounterBlock {
                        global_pulls: AtomicU64::new(0),
                        steals_attempted: AtomicU64::new(0),
                        steals_succeeded: AtomicU64::new(0),
                        tasks_stolen: AtomicU64::new(0),
                        sleeps: AtomicU64::new(0),
                        sleeps_cancelled: AtomicU64::new(0),
                        global_empty_polls: AtomicU64::new(0),
                        wakeups: AtomicU64::new(0),
                        noop_wakeups: AtomicU64::new(0),
                        respawns: AtomicU64::new(0),
                        panics: AtomicU64::new(0),
                        joins: AtomicU64::new(0),
                        forks_shared: AtomicU64::new(0),
                        forks_stolen: AtomicU64::new(0),
                        busy_nanos: AtomicU64::new(0),
                        running_since: AtomicU64::new(0),
                        state: AtomicU8::new(WorkerState::Running.to_u8()),
                        stolen_from: (0..workers).map(|_| AtomicU64::new(0)).collect(),
                        schedule_delay: AtomicHistogram::new(),
                        run_time: AtomicHistogram::new(),
                    })
                })
                .collect(),
        }
    }

    /// The recorder of worker `index`; only that worker's thread may record.
    #[inline(always)]
    pub(crate) fn worker(&self, index: usize) -> WorkerCounters<'_> {
        WorkerCounters {
            pool: self,
            counters: &self.workers[index],
        }
    }

    /// Decides at spawn time whether to time a task spawned from outside the
    /// pool: one in `sampling` spawns per spawning thread (a thread that
    /// feeds several pools counts its spawns into all of them). Returns the
    /// spawn instant if so. A worker's spawns into its own pool use its
    /// [`SpawnSampler`] instead.
    #[inline]
    pub(crate) fn sample_spawn(&self) -> Option<Instant> {
        if self.sampling == 0 {
            return None;
        }
        let tick = SPAWN_TICK
            .try_with(|tick| {
                let next = tick.get().wrapping_add(1);
                tick.set(next);
                next
            })
            .ok()?;
        // A power of two (the default) is a mask, not a 32-bit division on
        // every external spawn: a small gain at most, for one branch
        // (`BENCHMARKS.md`, "Core design figures": metrics-sampling-mask).
        let picked = if self.sampling.is_power_of_two() {
            tick & (self.sampling - 1) == 0
        } else {
            tick.is_multiple_of(self.sampling)
        };
        picked.then(Instant::now)
    }

    fn nanos_since_start(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Reads everything. `worker_gauges(i)` supplies what the pool keeps
    /// elsewhere for worker `i`.
    pub(crate) fn snapshot(
        &self,
        pool: PoolGauges<'_>,
        worker_gauges: impl Fn(usize) -> WorkerGauges,
    ) -> PoolMetrics {
        let now = self.nanos_since_start();
        let workers = self
            .workers
            .iter()
            .enumerate()
            .map(|(index, c)| {
                let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
                let state = WorkerState::from_u8(c.state.load(Ordering::Relaxed));
                let mut busy = load(&c.busy_nanos);
                if state == WorkerState::Running {
                    busy += now.saturating_sub(load(&c.running_since));
                }
                let gauges = worker_gauges(index);
                WorkerMetrics {
                    index,
                    state,
                    tasks_run: gauges.tasks_run,
                    tasks_spawned_local: gauges.tasks_spawned_local,
                    global_pulls: load(&c.global_pulls),
                    steals_attempted: load(&c.steals_attempted),
                    steals_succeeded: load(&c.steals_succeeded),
                    tasks_stolen: load(&c.tasks_stolen),
                    sleeps: load(&c.sleeps),
                    sleeps_cancelled: load(&c.sleeps_cancelled),
                    global_empty_polls: load(&c.global_empty_polls),
                    wakeups: load(&c.wakeups),
                    noop_wakeups: load(&c.noop_wakeups),
                    respawns: load(&c.respawns),
                    panics: load(&c.panics),
                    joins: load(&c.joins),
                    forks_shared: load(&c.forks_shared),
                    forks_stolen: load(&c.forks_stolen),
                    busy_duration: Duration::from_nanos(busy),
                    local_queue_depth: gauges.local_queue_depth,
                    stolen_from: c.stolen_from.iter().map(load).collect(),
                    schedule_delay: c.schedule_delay.snapshot(),
                    run_time: c.run_time.snapshot(),
                }
            })
            .collect();
        PoolMetrics {
            name: pool.name.to_owned(),
            threads: self.workers.len(),
            uptime: Duration::from_nanos(now),
            global_queue_depth: pool.global_queue_depth,
            tasks_spawned_external: pool.tasks_spawned_external,
            tasks_pending: pool.tasks_pending,
            panics: pool.panics,
            respawn_failures: pool.respawn_failures,
            latency_sampling: self.sampling,
            workers,
        }
    }
}

thread_local! {
    /// The `global_pulls` of the worker running on this thread, or null:
    /// every task from outside bumps it when it starts
    /// (`Task::marked_from_outside`), through this thread-local, so that a
    /// task needs to know nothing of workers and the worker's run path
    /// nothing of where its tasks came from.
    static CURRENT_OUTSIDE_TASKS: Cell<*const AtomicU64> = const { Cell::new(std::ptr::null()) };
}

/// The calling thread runs no worker from now on: its worker stopped, or
/// its thread-locals are being destroyed.
pub(crate) fn leave_thread() {
    // (`try_with`: during the thread's teardown the cell may be gone.)
    let _ = CURRENT_OUTSIDE_TASKS.try_with(|current| current.set(std::ptr::null()));
}

/// Counts a task from outside the pool on the worker running it, if this
/// thread is a worker (only that worker's thread writes its counter).
#[inline(always)]
pub(crate) fn count_outside_task() {
    let counter = CURRENT_OUTSIDE_TASKS.with(Cell::get);
    if !counter.is_null() {
        // SAFETY: set by the worker running on this thread
        // (`WorkerCounters::enter_thread`), which keeps the counters alive,
        // and cleared before it stops (`leave_thread`).
        add(unsafe { &*counter }, 1);
    }
}

/// One worker's view of its own block. Only the owning worker's thread
/// records through it.
pub(crate) struct WorkerCounters<'a> {
    pool: &'a PoolCounters,
    counters: &'a CounterBlock,
}

// The state changes and the steal counts are out of line (`inline(never)`):
// they run on the worker loop's rare paths (a search, a wake, a steal), and
// inlined they left the loop's per-task path a register short
// (`BENCHMARKS.md`, "Core design figures": metrics-worker-counters).
impl WorkerCounters<'_> {
    /// The calling thread runs this worker from now on: tasks from outside
    /// that it runs count here (see `count_outside_task`).
    pub(crate) fn enter_thread(&self) {
        let pulls: *const AtomicU64 = &self.counters.global_pulls;
        CURRENT_OUTSIDE_TASKS.with(|current| current.set(pulls));
    }

    #[inline(never)]
    pub(crate) fn steal_attempted(&self) {
        add(&self.counters.steals_attempted, 1);
    }

    #[inline(never)]
    pub(crate) fn stole(&self, victim: usize, tasks: usize) {
        add(&self.counters.steals_succeeded, 1);
        add(&self.counters.tasks_stolen, tasks as u64);
        add(&self.counters.stolen_from[victim], tasks as u64);
    }

    /// The worker starts (or resumes) running tasks.
    #[inline(never)]
    pub(crate) fn running(&self) {
        let c = self.counters;
        c.running_since
            .store(self.pool.nanos_since_start(), Ordering::Relaxed);
        c.state
            .store(WorkerState::Running.to_u8(), Ordering::Relaxed);
    }

    /// The worker ran out of work and searches: close its running stretch.
    #[inline(never)]
    pub(crate) fn searching(&self) {
        let c = self.counters;
        let stretch = self
            .pool
            .nanos_since_start()
            .saturating_sub(c.running_since.load(Ordering::Relaxed));
        add(&c.busy_nanos, stretch);
        c.state
            .store(WorkerState::Searching.to_u8(), Ordering::Relaxed);
    }

    pub(crate) fn sleeping(&self) {
        add(&self.counters.sleeps, 1);
        self.set_state(WorkerState::Sleeping);
    }

    /// Counted in `sleeps_cancelled`; the state stays `Searching`. Out of
    /// line like the other rare paths.
    #[inline(never)]
    pub(crate) fn sleep_cancelled(&self) {
        add(&self.counters.sleeps_cancelled, 1);
    }

    /// Counted in `global_empty_polls`. Out of line: a look that found
    /// nothing is on the way to a steal or a sleep, or is the look made
    /// every `GLOBAL_CHECK_INTERVAL` tasks, so it is off the path of all
    /// but one task in that many (`BENCHMARKS.md`, "Global-queue polls per
    /// task").
    #[inline(never)]
    pub(crate) fn global_queue_empty(&self) {
        add(&self.counters.global_empty_polls, 1);
    }

    /// Woken: to search, or (`handed`) to run a task handed over, which
    /// `running` reports next.
    pub(crate) fn woken(&self, handed: bool) {
        if !handed {
            self.set_state(WorkerState::Searching);
        }
    }

    /// Counted in `wakeups`.
    #[inline(never)]
    pub(crate) fn wakeup_found_work(&self) {
        add(&self.counters.wakeups, 1);
    }

    /// Counted in `noop_wakeups`.
    #[inline(never)]
    pub(crate) fn wakeup_found_nothing(&self) {
        add(&self.counters.noop_wakeups, 1);
    }

    pub(crate) fn panicked(&self) {
        add(&self.counters.panics, 1);
    }

    /// A `join` forked on this worker (the one per-join cost of metrics).
    #[inline(always)]
    pub(crate) fn joined(&self) {
        add(&self.counters.joins, 1);
    }

    pub(crate) fn fork_shared(&self) {
        add(&self.counters.forks_shared, 1);
    }

    pub(crate) fn fork_stolen(&self) {
        add(&self.counters.forks_stolen, 1);
    }

    pub(crate) fn respawning(&self) {
        self.set_state(WorkerState::Respawning);
    }

    pub(crate) fn respawned(&self) {
        add(&self.counters.respawns, 1);
    }

    pub(crate) fn stopped(&self) {
        self.set_state(WorkerState::Stopped);
    }

    pub(crate) fn sampled_task_started(&self, schedule_delay: Duration) {
        self.counters.schedule_delay.record(schedule_delay);
    }

    pub(crate) fn sampled_task_ran(&self, run_time: Duration) {
        self.counters.run_time.record(run_time);
    }

    fn set_state(&self, state: WorkerState) {
        self.counters.state.store(state.to_u8(), Ordering::Relaxed);
    }
}
