//! The published metric names, as constants. The table of their kinds,
//! labels and meanings, the cardinality and the schema's changelog are in
//! the [`publish`](super) module docs.
//!
//! ```
//! use dreadpool::metrics::publish::names;
//!
//! assert_eq!(names::SCHEDULE_DELAY, "dreadpool_schedule_delay_seconds");
//! assert!(names::ALL.iter().all(|n| n.starts_with("dreadpool_")));
//! ```

/// Gauge: always 1; its `version` label is [`METRIC_SCHEMA_VERSION`](super::METRIC_SCHEMA_VERSION)
/// (pool, version).
pub const SCHEMA_INFO: &str = "dreadpool_schema_info";
/// Counter: tasks finished (pool, worker).
pub const TASKS_RUN: &str = "dreadpool_tasks_run_total";
/// Counter: tasks spawned by tasks into the worker's queue (pool, worker).
pub const TASKS_SPAWNED_LOCAL: &str = "dreadpool_tasks_spawned_local_total";
/// Counter: tasks spawned from outside (pool).
pub const TASKS_SPAWNED_EXTERNAL: &str = "dreadpool_tasks_spawned_external_total";
/// Counter: tasks spawned from outside the pool that the worker ran (pool, worker).
pub const GLOBAL_PULLS: &str = "dreadpool_global_pulls_total";
/// Counter: steal attempts (pool, worker).
pub const STEALS_ATTEMPTED: &str = "dreadpool_steals_attempted_total";
/// Counter: successful steals (pool, worker).
pub const STEALS_SUCCEEDED: &str = "dreadpool_steals_succeeded_total";
/// Counter: tasks taken by steals (pool, worker).
pub const TASKS_STOLEN: &str = "dreadpool_tasks_stolen_total";
/// Counter: the steal matrix (pool, worker, victim); only up to a worker
/// count, see [`Options::steal_matrix_max_workers`](super::Options::steal_matrix_max_workers).
pub const STOLEN_FROM: &str = "dreadpool_stolen_from_total";
/// Counter: parks (pool, worker).
pub const SLEEPS: &str = "dreadpool_sleeps_total";
/// Counter: registrations to sleep that the worker's second look called
/// off, having found work (pool, worker).
pub const SLEEPS_CANCELLED: &str = "dreadpool_sleeps_cancelled_total";
/// Counter: looks at the global queue that found it empty (pool, worker).
pub const GLOBAL_EMPTY_POLLS: &str = "dreadpool_global_empty_polls_total";
/// Counter: wakeups that found work (pool, worker).
pub const WAKEUPS: &str = "dreadpool_wakeups_total";
/// Counter: wakeups that found nothing (pool, worker).
pub const NOOP_WAKEUPS: &str = "dreadpool_noop_wakeups_total";
/// Counter: threads replaced after a panic (pool, worker).
pub const RESPAWNS: &str = "dreadpool_respawns_total";
/// Counter: task panics (pool, worker).
pub const PANICS: &str = "dreadpool_panics_total";
/// Counter: [`join`](dreadpool_core::join)s forked on the worker (pool,
/// worker).
pub const JOINS: &str = "dreadpool_joins_total";
/// Counter: of the worker's joins, the forks it shared with idle workers
/// (pool, worker); the rest ran inline.
pub const FORKS_SHARED: &str = "dreadpool_forks_shared_total";
/// Counter: forks shared by peers that the worker took and ran (pool,
/// worker).
pub const FORKS_STOLEN: &str = "dreadpool_forks_stolen_total";
/// Gauge, monotonic: seconds spent running tasks since the pool started
/// (pool, worker). Read it with `rate()`. A gauge because metrics-rs
/// counters hold integers and a whole-second counter would be too coarse
/// for a busy ratio; it replaces schema 1's `dreadpool_busy_nanoseconds_total`,
/// which was not in base units.
pub const BUSY: &str = "dreadpool_busy_seconds";
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
/// Gauge: busy time over capacity in the publisher's last interval (pool).
pub const BUSY_RATIO: &str = "dreadpool_busy_ratio";
/// Gauge: a worker's busy time over elapsed time, publisher's last interval
/// (pool, worker).
pub const WORKER_BUSY_RATIO: &str = "dreadpool_worker_busy_ratio";
/// Histogram: spawn-to-start delay of the timed tasks, seconds (pool; the
/// exporter adds `le` to its `_bucket` series).
pub const SCHEDULE_DELAY: &str = "dreadpool_schedule_delay_seconds";
/// Histogram: run time of the timed tasks, seconds (pool; `le` on
/// `_bucket`).
pub const RUN_TIME: &str = "dreadpool_run_time_seconds";

/// The histograms: configure the exporter's buckets for these
/// ([`Buckets`](super::Buckets)).
pub const HISTOGRAMS: [&str; 2] = [SCHEDULE_DELAY, RUN_TIME];

/// Every name above.
pub const ALL: [&str; 31] = [
    SCHEMA_INFO,
    TASKS_RUN,
    TASKS_SPAWNED_LOCAL,
    TASKS_SPAWNED_EXTERNAL,
    GLOBAL_PULLS,
    STEALS_ATTEMPTED,
    STEALS_SUCCEEDED,
    TASKS_STOLEN,
    STOLEN_FROM,
    SLEEPS,
    SLEEPS_CANCELLED,
    GLOBAL_EMPTY_POLLS,
    WAKEUPS,
    NOOP_WAKEUPS,
    RESPAWNS,
    PANICS,
    JOINS,
    FORKS_SHARED,
    FORKS_STOLEN,
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
