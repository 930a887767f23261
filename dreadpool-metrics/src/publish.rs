//! The pool's counters and gauges through the [`metrics`] facade crate
//! (metrics-rs), so that any metrics-rs exporter (Prometheus, StatsD, ...)
//! serves them. Feature `metrics-rs`.
//!
//! Nothing here exports anything itself: install a recorder (for example
//! `metrics_exporter_prometheus::PrometheusBuilder::install`), then either
//! start a [`Publisher`] (a background thread that samples a pool and
//! publishes every period) or call [`sample`] from a loop of your own.
//!
//! Counters are published with absolute values (the pool's own monotonic
//! counts), gauges with their current value. Every metric carries the label
//! `pool` (the pool's name: give pools distinct names), per-worker metrics
//! also `worker` (its index).
//!
//! | name | kind | labels | meaning |
//! |---|---|---|---|
//! | `dreadpool_tasks_run_total` | counter | pool, worker | tasks finished |
//! | `dreadpool_tasks_spawned_local_total` | counter | pool, worker | tasks spawned by tasks into the worker's queue |
//! | `dreadpool_tasks_spawned_external_total` | counter | pool | tasks spawned from outside |
//! | `dreadpool_global_pulls_total` | counter | pool, worker | tasks taken from the global queue, or handed over by an outside spawn |
//! | `dreadpool_steals_attempted_total` | counter | pool, worker | steal attempts |
//! | `dreadpool_steals_succeeded_total` | counter | pool, worker | steals that took a task |
//! | `dreadpool_tasks_stolen_total` | counter | pool, worker | tasks taken by steals |
//! | `dreadpool_stolen_from_total` | counter | pool, worker, victim | the steal matrix |
//! | `dreadpool_sleeps_total` | counter | pool, worker | parks |
//! | `dreadpool_wakeups_total` | counter | pool, worker | wakeups that found work |
//! | `dreadpool_noop_wakeups_total` | counter | pool, worker | wakeups that found nothing |
//! | `dreadpool_respawns_total` | counter | pool, worker | threads replaced after a panic |
//! | `dreadpool_panics_total` | counter | pool, worker | task panics |
//! | `dreadpool_busy_nanoseconds_total` | counter | pool, worker | time spent running tasks |
//! | `dreadpool_threads` | gauge | pool | workers |
//! | `dreadpool_uptime_seconds` | gauge | pool | time since the pool started |
//! | `dreadpool_global_queue_depth` | gauge | pool | tasks in the global queue |
//! | `dreadpool_tasks_pending` | gauge | pool | tasks queued or running |
//! | `dreadpool_workers` | gauge | pool, state | workers in each state |
//! | `dreadpool_local_queue_depth` | gauge | pool, worker | tasks in the worker's queue |
//! | `dreadpool_worker_state` | gauge | pool, worker, state | 1 for the worker's state, 0 for the others |
//! | `dreadpool_busy_ratio` | gauge | pool | busy time over capacity, last interval |
//! | `dreadpool_worker_busy_ratio` | gauge | pool, worker | busy time over elapsed, last interval |
//! | `dreadpool_schedule_delay_seconds` | gauge | pool, quantile | spawn-to-start delay quantiles (0.5, 0.9, 0.99, 0.999, 1), last interval |
//! | `dreadpool_run_time_seconds` | gauge | pool, quantile | task run time quantiles, last interval |
//!
//! ```
//! use dreadpool::ThreadPoolBuilder;
//! use dreadpool::metrics::{publish, Monitor};
//!
//! // A recorder must be installed for the values to go anywhere; without
//! // one, publishing is a no-op.
//! let pool = ThreadPoolBuilder::new().with_threads(2).build();
//! let mut monitor = Monitor::new(&pool);
//! publish::describe();
//! pool.spawn(|| ());
//! pool.join();
//! let interval = publish::sample(&mut monitor);
//! assert_eq!(interval.tasks_run, 1);
//! ```

use crate::interval::Interval;
use crate::monitor::Monitor;
use crate::snapshot::{Snapshot, WorkerSnapshot, WorkerState};
use dreadpool_core::{Handle, ThreadPool};
use metrics::{counter, describe_counter, describe_gauge, gauge, Unit};
use std::fmt;
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// The metric names, as constants.
pub mod names {
    /// Counter: tasks finished (pool, worker).
    pub const TASKS_RUN: &str = "dreadpool_tasks_run_total";
    /// Counter: tasks spawned by tasks into the worker's queue (pool, worker).
    pub const TASKS_SPAWNED_LOCAL: &str = "dreadpool_tasks_spawned_local_total";
    /// Counter: tasks spawned from outside (pool).
    pub const TASKS_SPAWNED_EXTERNAL: &str = "dreadpool_tasks_spawned_external_total";
    /// Counter: tasks taken from the global queue (pool, worker).
    pub const GLOBAL_PULLS: &str = "dreadpool_global_pulls_total";
    /// Counter: steal attempts (pool, worker).
    pub const STEALS_ATTEMPTED: &str = "dreadpool_steals_attempted_total";
    /// Counter: successful steals (pool, worker).
    pub const STEALS_SUCCEEDED: &str = "dreadpool_steals_succeeded_total";
    /// Counter: tasks taken by steals (pool, worker).
    pub const TASKS_STOLEN: &str = "dreadpool_tasks_stolen_total";
    /// Counter: the steal matrix (pool, worker, victim).
    pub const STOLEN_FROM: &str = "dreadpool_stolen_from_total";
    /// Counter: parks (pool, worker).
    pub const SLEEPS: &str = "dreadpool_sleeps_total";
    /// Counter: wakeups that found work (pool, worker).
    pub const WAKEUPS: &str = "dreadpool_wakeups_total";
    /// Counter: wakeups that found nothing (pool, worker).
    pub const NOOP_WAKEUPS: &str = "dreadpool_noop_wakeups_total";
    /// Counter: threads replaced after a panic (pool, worker).
    pub const RESPAWNS: &str = "dreadpool_respawns_total";
    /// Counter: task panics (pool, worker).
    pub const PANICS: &str = "dreadpool_panics_total";
    /// Counter: nanoseconds spent running tasks (pool, worker).
    pub const BUSY: &str = "dreadpool_busy_nanoseconds_total";
    /// Gauge: workers (pool).
    pub const THREADS: &str = "dreadpool_threads";
    /// Gauge: seconds since the pool started (pool).
    pub const UPTIME: &str = "dreadpool_uptime_seconds";
    /// Gauge: tasks in the global queue (pool).
    pub const GLOBAL_QUEUE_DEPTH: &str = "dreadpool_global_queue_depth";
    /// Gauge: tasks queued or running (pool).
    pub const TASKS_PENDING: &str = "dreadpool_tasks_pending";
    /// Gauge: workers in each state (pool, state).
    pub const WORKERS: &str = "dreadpool_workers";
    /// Gauge: tasks in a worker's queue (pool, worker).
    pub const LOCAL_QUEUE_DEPTH: &str = "dreadpool_local_queue_depth";
    /// Gauge: 1 for a worker's state, 0 for the others (pool, worker, state).
    pub const WORKER_STATE: &str = "dreadpool_worker_state";
    /// Gauge: busy time over capacity in the last interval (pool).
    pub const BUSY_RATIO: &str = "dreadpool_busy_ratio";
    /// Gauge: a worker's busy time over elapsed time, last interval (pool, worker).
    pub const WORKER_BUSY_RATIO: &str = "dreadpool_worker_busy_ratio";
    /// Gauge: schedule delay quantiles, last interval, seconds (pool, quantile).
    pub const SCHEDULE_DELAY: &str = "dreadpool_schedule_delay_seconds";
    /// Gauge: run time quantiles, last interval, seconds (pool, quantile).
    pub const RUN_TIME: &str = "dreadpool_run_time_seconds";

    /// Every name above.
    pub const ALL: [&str; 25] = [
        TASKS_RUN,
        TASKS_SPAWNED_LOCAL,
        TASKS_SPAWNED_EXTERNAL,
        GLOBAL_PULLS,
        STEALS_ATTEMPTED,
        STEALS_SUCCEEDED,
        TASKS_STOLEN,
        STOLEN_FROM,
        SLEEPS,
        WAKEUPS,
        NOOP_WAKEUPS,
        RESPAWNS,
        PANICS,
        BUSY,
        THREADS,
        UPTIME,
        GLOBAL_QUEUE_DEPTH,
        TASKS_PENDING,
        WORKERS,
        LOCAL_QUEUE_DEPTH,
        WORKER_STATE,
        BUSY_RATIO,
        WORKER_BUSY_RATIO,
        SCHEDULE_DELAY,
        RUN_TIME,
    ];
}

use names::*;

/// Describes every metric (help text and unit) to the installed recorder.
/// Call once after installing it; a [`Publisher`] does.
pub fn describe() {
    describe_counter!(TASKS_RUN, Unit::Count, "Tasks finished by the worker.");
    describe_counter!(
        TASKS_SPAWNED_LOCAL,
        Unit::Count,
        "Tasks spawned by the worker's tasks into its local queue."
    );
    describe_counter!(
        TASKS_SPAWNED_EXTERNAL,
        Unit::Count,
        "Tasks spawned from outside the pool."
    );
    describe_counter!(
        GLOBAL_PULLS,
        Unit::Count,
        "Tasks the worker took from the global queue."
    );
    describe_counter!(
        STEALS_ATTEMPTED,
        Unit::Count,
        "Steal attempts by the worker."
    );
    describe_counter!(
        STEALS_SUCCEEDED,
        Unit::Count,
        "Steal attempts that took at least one task."
    );
    describe_counter!(
        TASKS_STOLEN,
        Unit::Count,
        "Tasks the worker took by stealing."
    );
    describe_counter!(
        STOLEN_FROM,
        Unit::Count,
        "Tasks the worker stole from the victim worker."
    );
    describe_counter!(SLEEPS, Unit::Count, "Times the worker parked.");
    describe_counter!(
        WAKEUPS,
        Unit::Count,
        "Times the worker was woken and found work."
    );
    describe_counter!(
        NOOP_WAKEUPS,
        Unit::Count,
        "Times the worker was woken and found nothing."
    );
    describe_counter!(
        RESPAWNS,
        Unit::Count,
        "Times the worker's thread was replaced after a panic."
    );
    describe_counter!(PANICS, Unit::Count, "Task panics on the worker.");
    describe_counter!(
        BUSY,
        Unit::Nanoseconds,
        "Time the worker spent running tasks."
    );
    describe_gauge!(THREADS, Unit::Count, "Worker threads in the pool.");
    describe_gauge!(UPTIME, Unit::Seconds, "Time since the pool started.");
    describe_gauge!(
        GLOBAL_QUEUE_DEPTH,
        Unit::Count,
        "Tasks waiting in the global queue."
    );
    describe_gauge!(TASKS_PENDING, Unit::Count, "Tasks queued or running.");
    describe_gauge!(WORKERS, Unit::Count, "Workers in each state.");
    describe_gauge!(
        LOCAL_QUEUE_DEPTH,
        Unit::Count,
        "Tasks in the worker's local queue."
    );
    describe_gauge!(
        WORKER_STATE,
        "1 for the worker's current state, 0 for the others."
    );
    describe_gauge!(
        BUSY_RATIO,
        "Busy time over capacity (elapsed time times workers) in the last interval."
    );
    describe_gauge!(
        WORKER_BUSY_RATIO,
        "The worker's busy time over elapsed time in the last interval."
    );
    describe_gauge!(
        SCHEDULE_DELAY,
        Unit::Seconds,
        "Spawn-to-start delay quantiles of the tasks timed in the last interval."
    );
    describe_gauge!(
        RUN_TIME,
        Unit::Seconds,
        "Run time quantiles of the tasks timed in the last interval."
    );
}

/// Publishes a snapshot's counters and gauges.
pub fn publish_snapshot(snapshot: &Snapshot) {
    let pool = snapshot.name.clone();
    let p = [("pool", pool.clone())];
    counter!(TASKS_SPAWNED_EXTERNAL, &p).absolute(snapshot.tasks_spawned_external);
    gauge!(THREADS, &p).set(snapshot.threads as f64);
    gauge!(UPTIME, &p).set(snapshot.uptime.as_secs_f64());
    gauge!(GLOBAL_QUEUE_DEPTH, &p).set(snapshot.global_queue_depth as f64);
    gauge!(TASKS_PENDING, &p).set(snapshot.tasks_pending as f64);
    for state in WorkerState::ALL {
        let n = snapshot.workers_in(state);
        if n > 0 || state != WorkerState::Unknown {
            gauge!(
                WORKERS,
                &[
                    ("pool", pool.clone()),
                    ("state", state.as_str().to_string())
                ]
            )
            .set(n as f64);
        }
    }
    for w in &snapshot.workers {
        publish_worker(&pool, w);
    }
}

fn publish_worker(pool: &str, w: &WorkerSnapshot) {
    let labels = [("pool", pool.to_string()), ("worker", w.index.to_string())];
    let counters: [(&'static str, u64); 12] = [
        (TASKS_RUN, w.tasks_run),
        (TASKS_SPAWNED_LOCAL, w.tasks_spawned_local),
        (GLOBAL_PULLS, w.global_pulls),
        (STEALS_ATTEMPTED, w.steals_attempted),
        (STEALS_SUCCEEDED, w.steals_succeeded),
        (TASKS_STOLEN, w.tasks_stolen),
        (SLEEPS, w.sleeps),
        (WAKEUPS, w.wakeups),
        (NOOP_WAKEUPS, w.noop_wakeups),
        (RESPAWNS, w.respawns),
        (PANICS, w.panics),
        (BUSY, crate::nanos::of(w.busy_duration)),
    ];
    for (name, value) in counters {
        counter!(name, &labels).absolute(value);
    }
    gauge!(LOCAL_QUEUE_DEPTH, &labels).set(w.local_queue_depth as f64);
    for (victim, &n) in w.stolen_from.iter().enumerate() {
        if victim != w.index {
            let l = [
                ("pool", pool.to_string()),
                ("worker", w.index.to_string()),
                ("victim", victim.to_string()),
            ];
            counter!(STOLEN_FROM, &l).absolute(n);
        }
    }
    for state in WorkerState::ALL {
        if state == WorkerState::Unknown && w.state != WorkerState::Unknown {
            continue;
        }
        let l = [
            ("pool", pool.to_string()),
            ("worker", w.index.to_string()),
            ("state", state.as_str().to_string()),
        ];
        gauge!(WORKER_STATE, &l).set(if w.state == state { 1.0 } else { 0.0 });
    }
}

/// Publishes an interval's gauges: busy ratios and latency quantiles.
pub fn publish_interval(interval: &Interval) {
    let pool = interval.name.clone();
    gauge!(BUSY_RATIO, &[("pool", pool.clone())]).set(interval.busy_ratio);
    for w in &interval.workers {
        gauge!(
            WORKER_BUSY_RATIO,
            &[("pool", pool.clone()), ("worker", w.index.to_string())]
        )
        .set(w.busy_ratio);
    }
    for (name, q) in [
        (SCHEDULE_DELAY, &interval.schedule_delay),
        (RUN_TIME, &interval.run_time),
    ] {
        for (quantile, value) in [
            ("0.5", q.p50),
            ("0.9", q.p90),
            ("0.99", q.p99),
            ("0.999", q.p999),
            ("1", q.max),
        ] {
            gauge!(
                name,
                &[("pool", pool.clone()), ("quantile", quantile.to_string())]
            )
            .set(value.as_secs_f64());
        }
    }
}

/// Samples `monitor` and publishes the snapshot and the interval; returns
/// the interval. For a detached monitor, publishes its last snapshot.
pub fn sample(monitor: &mut Monitor) -> Interval {
    let interval = monitor.sample();
    if let Some(snapshot) = monitor.last_snapshot() {
        publish_snapshot(snapshot);
    }
    publish_interval(&interval);
    interval
}

/// A background thread that samples one pool and publishes its metrics
/// every `period`, until dropped.
///
/// It publishes once before [`spawn`](Self::spawn) returns, so the metrics
/// are there as soon as it is.
///
/// ```
/// use dreadpool::ThreadPoolBuilder;
/// use dreadpool::metrics::Publisher;
/// use std::time::Duration;
///
/// // Install a metrics-rs recorder first (Prometheus, StatsD, ...).
/// let pool = ThreadPoolBuilder::new().with_threads(2).build();
/// let publisher = Publisher::spawn(&pool, Duration::from_secs(1))?;
/// // ... the application runs ...
/// drop(publisher); // stops publishing
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Publisher {
    stop: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
    pool: String,
}

impl Publisher {
    /// Publishes `pool` every `period`.
    ///
    /// # Errors
    ///
    /// When the thread cannot be started.
    pub fn spawn(pool: &ThreadPool, period: Duration) -> std::io::Result<Publisher> {
        Self::from_handle(pool.handle(), period)
    }

    /// Publishes the pool behind `handle` every `period`.
    ///
    /// # Errors
    ///
    /// When the thread cannot be started.
    pub fn from_handle(handle: Handle, period: Duration) -> std::io::Result<Publisher> {
        let pool = handle.name().to_string();
        let mut monitor = Monitor::from_handle(handle);
        describe();
        sample(&mut monitor);
        let (stop, stopped) = mpsc::sync_channel::<()>(1);
        let thread = thread::Builder::new()
            .name("dreadpool-publish".into())
            .spawn(move || loop {
                match stopped.recv_timeout(period) {
                    Err(RecvTimeoutError::Timeout) => {
                        sample(&mut monitor);
                    }
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
                }
            })?;
        Ok(Publisher {
            stop: Some(stop),
            thread: Some(thread),
            pool,
        })
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.try_send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl fmt::Debug for Publisher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Publisher")
            .field("pool", &self.pool)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};

    #[test]
    fn publishes_the_documented_names_with_labels() {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        let pool = dreadpool_core::ThreadPoolBuilder::new()
            .with_threads(2)
            .with_thread_name("pubtest")
            .build();
        for _ in 0..100 {
            pool.spawn(|| ());
        }
        pool.join();
        metrics::with_local_recorder(&recorder, || {
            let mut monitor = Monitor::new(&pool);
            describe();
            sample(&mut monitor);
        });
        let all = snapshotter.snapshot().into_vec();
        let mut tasks_run = 0;
        for name in names::ALL {
            assert!(
                all.iter().any(|(key, ..)| key.key().name() == name),
                "{name} not published"
            );
        }
        for (key, _, _, value) in &all {
            let labels: Vec<_> = key
                .key()
                .labels()
                .map(|l| (l.key().to_string(), l.value().to_string()))
                .collect();
            assert!(
                labels.iter().any(|(k, v)| k == "pool" && v == "pubtest"),
                "{key:?}"
            );
            if key.key().name() == TASKS_RUN {
                assert!(labels.iter().any(|(k, _)| k == "worker"));
                if let DebugValue::Counter(n) = value {
                    tasks_run += n;
                }
            }
        }
        assert_eq!(tasks_run, 100);
    }
}
