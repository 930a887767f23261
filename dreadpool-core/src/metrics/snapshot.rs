//! What [`ThreadPool::metrics`](crate::ThreadPool::metrics) returns.

use super::histogram::LatencyHistogram;
use std::time::Duration;

/// What a worker is doing right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WorkerState {
    /// Running tasks (or about to: it has work).
    Running,
    /// Woken, looking for work in the global queue and its peers' queues.
    Searching,
    /// Parked, waiting for a spawn to wake it.
    Sleeping,
    /// Its thread panicked and a replacement thread is being started.
    Respawning,
    /// The pool shut down and this worker exited.
    Stopped,
}

impl WorkerState {
    /// A short lower-case name (`running`, `searching`, ...), for displays.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkerState::Running => "running",
            WorkerState::Searching => "searching",
            WorkerState::Sleeping => "sleeping",
            WorkerState::Respawning => "respawning",
            WorkerState::Stopped => "stopped",
        }
    }

    pub(crate) fn to_u8(self) -> u8 {
        self as u8
    }

    pub(crate) fn from_u8(value: u8) -> Self {
        match value {
            0 => WorkerState::Running,
            1 => WorkerState::Searching,
            2 => WorkerState::Sleeping,
            3 => WorkerState::Respawning,
            _ => WorkerState::Stopped,
        }
    }
}

impl std::fmt::Display for WorkerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One worker's counters, read live.
///
/// Every `*_count`-like field is monotonic over the pool's life (it survives
/// respawns: the replacement thread continues its predecessor's counters);
/// subtract an earlier snapshot for a rate. `local_queue_depth` and `state`
/// are gauges.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct WorkerMetrics {
    /// The worker's index (its thread is named `"{pool}-{index}"`).
    pub index: usize,
    /// What it is doing right now.
    pub state: WorkerState,
    /// Tasks it finished (panicked ones included). A fork of
    /// [`join`](crate::join) that was shared counts as a task: here on
    /// the worker that ran it, or on its owner if it took it back.
    pub tasks_run: u64,
    /// Tasks its tasks spawned into its own local queue, and forks it
    /// shared.
    pub tasks_spawned_local: u64,
    /// Tasks spawned from outside the pool that it ran: taken from the
    /// global queue by itself or by the peer it stole them from, or handed
    /// to it as it slept. Every task from outside is counted once, where it
    /// ran. (Counted where they run, not where they were pulled: counting
    /// pulled batches exactly cost every outside spawn a move through a
    /// private queue: `BENCHMARKS.md`, "Core design figures":
    /// task-marked-from-outside.)
    pub global_pulls: u64,
    /// Steal attempts on a peer's queue.
    pub steals_attempted: u64,
    /// Steal attempts that took at least one task.
    pub steals_succeeded: u64,
    /// Tasks taken by successful steals (the sum of batch sizes).
    pub tasks_stolen: u64,
    /// Times it parked.
    pub sleeps: u64,
    /// Times it registered to sleep and its second look, after the
    /// registration, found work, so it searched again instead of parking
    /// (`sleep/README.md`). Each one took the idle list's lock twice and
    /// wrote the sleep state word that every spawn reads: a worker that
    /// cycles through these costs the spawners without ever sleeping.
    pub sleeps_cancelled: u64,
    /// Times it looked for tasks in the global queue (in every shard) and
    /// found none. Each such look reads the queue's indices, the lines that
    /// every outside spawn writes, so it costs the spawners while bringing
    /// nothing. (The second look before a sleep reads them too, once per
    /// sleep or cancelled sleep, and is not counted here.)
    pub global_empty_polls: u64,
    /// Times it was woken and found work.
    pub wakeups: u64,
    /// Times it was woken and found nothing.
    pub noop_wakeups: u64,
    /// Times its thread was replaced after a panic.
    pub respawns: u64,
    /// Task panics on this worker.
    pub panics: u64,
    /// [`join`](crate::join)s it forked (each one's `b` waited where idle
    /// workers could take it, or ran inline).
    pub joins: u64,
    /// Of its forks, those it shared with idle workers (the rest ran inline
    /// with no synchronisation at all).
    pub forks_shared: u64,
    /// Forks shared by its peers that it took and ran.
    pub forks_stolen: u64,
    /// Time spent running (not searching or asleep), including the running
    /// stretch in progress: a worker busy with one long task shows it.
    pub busy_duration: Duration,
    /// Tasks in its local queue now.
    pub local_queue_depth: usize,
    /// `stolen_from[victim]`: tasks this worker stole from each peer.
    pub stolen_from: Vec<u64>,
    /// Spawn-to-start delay of the sampled tasks it ran.
    pub schedule_delay: LatencyHistogram,
    /// Run time of the sampled tasks it ran.
    pub run_time: LatencyHistogram,
}

/// A snapshot of a pool's counters, cheap enough to take 100 times a second
/// while the pool runs flat out.
///
/// Fields are read one by one without stopping the workers, so two fields
/// may be a few tasks apart; each one is current as of the call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PoolMetrics {
    /// The pool's name (its thread name prefix).
    pub name: String,
    /// Number of workers.
    pub threads: usize,
    /// Time since the pool started.
    pub uptime: Duration,
    /// Tasks waiting in the global queue.
    pub global_queue_depth: usize,
    /// Tasks spawned from outside the pool.
    pub tasks_spawned_external: u64,
    /// Tasks queued or running.
    pub tasks_pending: u64,
    /// Task panics, all workers.
    pub panics: u64,
    /// Replacement threads the OS refused after a panic (each time, the
    /// panicked thread carried on as the worker, so no capacity was lost).
    pub respawn_failures: u64,
    /// One in this many tasks is timed for the latency histograms.
    pub latency_sampling: u32,
    /// Per-worker counters, by index.
    pub workers: Vec<WorkerMetrics>,
}

impl PoolMetrics {
    /// `tasks_run` summed over the workers.
    pub fn tasks_run(&self) -> u64 {
        self.workers.iter().map(|w| w.tasks_run).sum()
    }

    /// Workers in `state` right now.
    pub fn workers_in(&self, state: WorkerState) -> usize {
        self.workers.iter().filter(|w| w.state == state).count()
    }

    /// Schedule delay histogram merged over workers.
    pub fn schedule_delay(&self) -> LatencyHistogram {
        merged(self.workers.iter().map(|w| &w.schedule_delay))
    }

    /// Run time histogram merged over workers.
    pub fn run_time(&self) -> LatencyHistogram {
        merged(self.workers.iter().map(|w| &w.run_time))
    }
}

fn merged<'a>(histograms: impl Iterator<Item = &'a LatencyHistogram>) -> LatencyHistogram {
    let mut total = LatencyHistogram::default();
    for h in histograms {
        total.merge(h);
    }
    total
}
