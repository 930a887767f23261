//! The dashboard's own picture of one sampling interval of one pool.
//!
//! These types are what the views render. They are filled by
//! [`crate::source`] (the only module that talks to `dreadpool-metrics`) and,
//! in tests, by [`crate::fixture`], so that every panel can be rendered from
//! seeded, deterministic data.

use std::time::Duration;

/// What a worker is doing (the core's `WorkerState`, plus `Unknown` for a
/// state name an attached host sends that this build does not know).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WorkerStatus {
    /// Running tasks.
    Running,
    /// Looking for work in the queues.
    Searching,
    /// Parked until a spawn wakes it.
    Sleeping,
    /// Its thread panicked and is being replaced.
    Respawning,
    /// The pool shut down.
    Stopped,
    /// A state this build does not know.
    Unknown,
}

impl WorkerStatus {
    /// The lower-case name shown in the worker table.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkerStatus::Running => "running",
            WorkerStatus::Searching => "searching",
            WorkerStatus::Sleeping => "sleeping",
            WorkerStatus::Respawning => "respawning",
            WorkerStatus::Stopped => "stopped",
            WorkerStatus::Unknown => "unknown",
        }
    }

    /// Parses a state name as the core prints it (`running`, `sleeping`, ...).
    pub fn from_name(name: &str) -> Self {
        match name.to_ascii_lowercase().as_str() {
            "running" => WorkerStatus::Running,
            "searching" => WorkerStatus::Searching,
            "sleeping" => WorkerStatus::Sleeping,
            "respawning" => WorkerStatus::Respawning,
            "stopped" => WorkerStatus::Stopped,
            _ => WorkerStatus::Unknown,
        }
    }
}

/// Latency quantiles of one distribution.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Quantiles {
    /// Number of sampled values.
    pub count: u64,
    /// Median.
    pub p50: Duration,
    /// 90th percentile.
    pub p90: Duration,
    /// 99th percentile.
    pub p99: Duration,
    /// 99.9th percentile.
    pub p999: Duration,
    /// Largest value seen.
    pub max: Duration,
}

/// One worker over one interval: rates per second, gauges read at the end of
/// the interval, and a few running totals.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkerSample {
    /// The worker's index.
    pub index: usize,
    /// Its state at the end of the interval.
    pub state: Option<WorkerStatus>,
    /// Tasks in its local queue at the end of the interval.
    pub local_queue_depth: usize,
    /// Tasks finished per second.
    pub tasks_per_sec: f64,
    /// Steal attempts per second.
    pub steals_attempted_per_sec: f64,
    /// Successful steals per second.
    pub steals_succeeded_per_sec: f64,
    /// Successful / attempted steals in the interval; `None` without attempts.
    pub steal_success_ratio: Option<f64>,
    /// Tasks taken by steals per second.
    pub tasks_stolen_per_sec: f64,
    /// Times parked per second.
    pub sleeps_per_sec: f64,
    /// Registrations to sleep that its second look called off, per second.
    pub sleeps_cancelled_per_sec: f64,
    /// Wakeups that found work, per second.
    pub wakeups_per_sec: f64,
    /// Wakeups that found nothing, per second.
    pub noop_wakeups_per_sec: f64,
    /// `dreadpool::join`s forked per second.
    pub joins_per_sec: f64,
    /// Forks of its joins shared with idle workers, per second.
    pub forks_shared_per_sec: f64,
    /// Forks shared by peers that it took and ran, per second.
    pub forks_stolen_per_sec: f64,
    /// Share of the interval spent running tasks, 0.0 to 1.0.
    pub busy_ratio: f64,
    /// `stolen_from[victim]`: tasks this worker stole from each peer in the
    /// interval.
    pub stolen_from: Vec<u64>,
    /// Totals over the pool's life.
    pub totals: WorkerTotals,
    /// This worker's schedule delay in the interval.
    pub schedule_delay: Quantiles,
    /// This worker's task run time in the interval.
    pub run_time: Quantiles,
}

/// A worker's running totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerTotals {
    /// Tasks finished.
    pub tasks_run: u64,
    /// Steal attempts.
    pub steals_attempted: u64,
    /// Successful steals.
    pub steals_succeeded: u64,
    /// Tasks taken by steals.
    pub tasks_stolen: u64,
    /// Times parked.
    pub sleeps: u64,
    /// Registrations to sleep that its second look called off.
    pub sleeps_cancelled: u64,
    /// Wakeups that found work.
    pub wakeups: u64,
    /// Wakeups that found nothing.
    pub noop_wakeups: u64,
    /// Threads replaced after a panic.
    pub respawns: u64,
    /// Task panics.
    pub panics: u64,
    /// `dreadpool::join`s forked.
    pub joins: u64,
    /// Forks of its joins shared with idle workers.
    pub forks_shared: u64,
    /// Forks shared by peers that it took and ran.
    pub forks_stolen: u64,
}

/// One pool over one interval.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PoolSample {
    /// The pool's name.
    pub name: String,
    /// Number of workers.
    pub threads: usize,
    /// Time since the pool started, at the end of the interval.
    pub uptime: Duration,
    /// Length of the interval.
    pub elapsed: Duration,
    /// Tasks finished per second, all workers.
    pub tasks_per_sec: f64,
    /// Tasks finished over the pool's life.
    pub tasks_run: u64,
    /// Tasks in the global queue at the end of the interval.
    pub global_queue_depth: usize,
    /// Tasks queued or running at the end of the interval.
    pub pending: u64,
    /// Task panics over the pool's life.
    pub panics: u64,
    /// Thread respawns over the pool's life.
    pub respawns: u64,
    /// Mean busy ratio of the workers, 0.0 to 1.0.
    pub busy_ratio: f64,
    /// Steal attempts per second, all workers.
    pub steals_attempted_per_sec: f64,
    /// Successful steals per second, all workers.
    pub steals_succeeded_per_sec: f64,
    /// Tasks stolen per second, all workers.
    pub tasks_stolen_per_sec: f64,
    /// Parks per second, all workers.
    pub sleeps_per_sec: f64,
    /// Wakeups per second, all workers.
    pub wakeups_per_sec: f64,
    /// No-op wakeups per second, all workers.
    pub noop_wakeups_per_sec: f64,
    /// Joins forked per second, all workers.
    pub joins_per_sec: f64,
    /// Schedule delay (spawn to start) in the interval.
    pub schedule_delay: Quantiles,
    /// Run time in the interval.
    pub run_time: Quantiles,
    /// Schedule delay over the pool's life.
    pub schedule_delay_total: Quantiles,
    /// Run time over the pool's life.
    pub run_time_total: Quantiles,
    /// One entry per worker, by index.
    pub workers: Vec<WorkerSample>,
}

impl PoolSample {
    /// The largest single cell of the steal matrix in this interval.
    pub fn max_steal_cell(&self) -> u64 {
        self.workers
            .iter()
            .flat_map(|w| w.stolen_from.iter().copied())
            .max()
            .unwrap_or(0)
    }
}
