//! The pool's counters, gauges and latency histograms through the
//! [`metrics`] facade crate (metrics-rs), so that any metrics-rs exporter
//! (Prometheus, StatsD, ...) serves them. Feature `metrics-rs`.
//!
//! Nothing here exports anything itself: install a recorder (for example
//! `metrics_exporter_prometheus::PrometheusBuilder::install`, with the
//! histogram buckets of [`Buckets`]), then either start a [`Publisher`] (a
//! background thread that samples a pool and publishes every period) or
//! call [`sample`] from a loop of your own.
//!
//! Counters are published with absolute values (the pool's own monotonic
//! counts), gauges with their current value, and the histograms with the
//! tasks timed since the previous sample. Every metric carries the label
//! `pool` (the pool's name: give pools distinct names), per-worker metrics
//! also `worker` (its index). Prometheus adds `instance` and `job`, which
//! tell the processes of a fleet apart.
//!
//! # Metric schema, version 2
//!
//! | name | kind | labels | meaning |
//! |---|---|---|---|
//! | `dreadpool_schema_info` | gauge | pool, version | always 1; `version` is [`METRIC_SCHEMA_VERSION`] |
//! | `dreadpool_tasks_run_total` | counter | pool, worker | tasks finished |
//! | `dreadpool_tasks_spawned_local_total` | counter | pool, worker | tasks spawned by tasks into the worker's queue |
//! | `dreadpool_tasks_spawned_external_total` | counter | pool | tasks spawned from outside |
//! | `dreadpool_global_pulls_total` | counter | pool, worker | tasks spawned from outside the pool that this worker ran |
//! | `dreadpool_steals_attempted_total` | counter | pool, worker | steal attempts |
//! | `dreadpool_steals_succeeded_total` | counter | pool, worker | steals that took a task |
//! | `dreadpool_tasks_stolen_total` | counter | pool, worker | tasks taken by steals |
//! | `dreadpool_stolen_from_total` | counter | pool, worker, victim | the steal matrix: only for pools of at most [`Options::steal_matrix_max_workers`] workers (default 16) |
//! | `dreadpool_sleeps_total` | counter | pool, worker | parks |
//! | `dreadpool_sleeps_cancelled_total` | counter | pool, worker | registrations to sleep that the worker's second look called off (it found work): each costs the spawners what a sleep does, with no park |
//! | `dreadpool_global_empty_polls_total` | counter | pool, worker | looks at the global queue that found it empty: each reads the lines outside spawns write, and brings nothing |
//! | `dreadpool_wakeups_total` | counter | pool, worker | wakeups that found work |
//! | `dreadpool_noop_wakeups_total` | counter | pool, worker | wakeups that found nothing |
//! | `dreadpool_respawns_total` | counter | pool, worker | threads replaced after a panic |
//! | `dreadpool_panics_total` | counter | pool, worker | task panics |
//! | `dreadpool_joins_total` | counter | pool, worker | `dreadpool::join`s forked on the worker |
//! | `dreadpool_forks_shared_total` | counter | pool, worker | of those, forks the worker shared with idle workers (the rest ran inline) |
//! | `dreadpool_forks_stolen_total` | counter | pool, worker | forks shared by peers that the worker took and ran |
//! | `dreadpool_busy_seconds` | gauge, only rises | pool, worker | time spent running tasks since the pool started: `rate()` of it is the busy ratio |
//! | `dreadpool_threads` | gauge | pool | workers |
//! | `dreadpool_uptime_seconds` | gauge | pool | time since the pool started |
//! | `dreadpool_global_queue_depth` | gauge | pool | tasks in the global queue |
//! | `dreadpool_tasks_pending` | gauge | pool | tasks queued or running |
//! | `dreadpool_workers` | gauge | pool, state | workers in each state |
//! | `dreadpool_local_queue_depth` | gauge | pool, worker | tasks in the worker's queue |
//! | `dreadpool_worker_state` | gauge | pool, worker, state | 1 for the worker's state, 0 for the others |
//! | `dreadpool_busy_ratio` | gauge | pool | busy time over capacity, publisher's last interval |
//! | `dreadpool_worker_busy_ratio` | gauge | pool, worker | busy time over elapsed, publisher's last interval |
//! | `dreadpool_schedule_delay_seconds` | histogram | pool (`le` on `_bucket`) | spawn-to-start delay of the timed tasks |
//! | `dreadpool_run_time_seconds` | histogram | pool (`le` on `_bucket`) | run time of the timed tasks |
//!
//! `state` is one of `running`, `searching`, `sleeping`, `respawning`,
//! `stopped` (and `unknown`, only while some worker is in a state this
//! version does not know).
//!
//! Fork-join: a shared fork is counted as a task (in
//! `dreadpool_tasks_spawned_local_total` of its owner, and in
//! `dreadpool_tasks_run_total` of the worker that ran it); a fork run
//! inline is not. A stolen fork is not a steal: it is counted in
//! `dreadpool_forks_stolen_total` only, not in the `steals_*` and
//! `tasks_stolen` counters. `rate(dreadpool_forks_stolen_total)` over
//! `rate(dreadpool_joins_total)` is the share of joins that ran in parallel.
//!
//! ## The histograms
//!
//! The core times one task in `latency_sampling` (256 by default) into
//! log-scaled buckets, 8 per power of two. Each sample, the publisher takes
//! the buckets' growth since the previous sample and records each bucket's
//! new count at the bucket's midpoint with `histogram!(..).record_many`. On
//! `metrics-exporter-prometheus` with the bounds of [`Buckets`] (every one a
//! core bucket edge) that gives cumulative `_bucket{le=...}`, `_sum` and
//! `_count` series that are exact at every bound, and
//!
//! ```text
//! histogram_quantile(0.99, sum by (le) (rate(dreadpool_schedule_delay_seconds_bucket[1m])))
//! ```
//!
//! is the p99 of the whole fleet over the last minute. `_count` counts timed
//! tasks, not all tasks (use `dreadpool_tasks_run_total` for rates), and
//! `_sum` adds midpoints, so it is within half a bucket (6%) of the true
//! sum. The histograms are per pool, not per worker: per worker they would
//! multiply the largest block of series by the worker count, and a
//! per-worker latency is for the dashboard (`dreadpool-top`), not for a
//! fleet's rules.
//!
//! Why classic buckets and not Prometheus' native histograms (which that
//! exporter can also serve): native histograms need the protobuf scrape
//! format and a feature flag on Prometheus 2.x, and their exponential
//! buckets (ratio 2^(1/8)) do not line up with the core's log-linear ones,
//! so every core bucket would be split by guesswork. The exporter keeps
//! each recorded value until its next render (one `f64` per timed task
//! since the last scrape), which the sampling keeps small.
//!
//! ## Cardinality
//!
//! Series per pool, for `W` workers and the default [`Options`] and
//! [`Buckets`] (`H` = [`Buckets::series`], 196 by default):
//!
//! ```text
//! 12 + 24 W + 2 H + (W (W - 1) if W <= 16, else 0)
//! = 404 + 24 W + W (W - 1)     (W <= 16; 4 workers: 512, 16 workers: 1028)
//! = 404 + 24 W                 (W > 16; 64 workers: 1940)
//! ```
//!
//! 12 per pool (schema info, external spawns, threads, uptime, global queue
//! depth, pending tasks, busy ratio and 5 `dreadpool_workers` states), 24
//! per worker (16 counters, busy seconds, local queue depth, busy ratio and
//! 5 `dreadpool_worker_state` states), the two histograms, and the steal
//! matrix, the one quadratic term, published only up to
//! [`Options::DEFAULT_STEAL_MATRIX_MAX_WORKERS`] workers unless opted in
//! ([`Options::steal_matrix_max_workers`]). With 4 bounds per power of two
//! ([`Buckets::new`]) `H` is 100 and the constant 212.
//!
//! ## Changelog
//!
//! New names alone do not change the version (a query written for it still
//! finds what it found); they are listed under the version they joined.
//!
//! - **2** (this version), addition: `dreadpool_global_empty_polls_total`,
//!   a counter per worker of its looks at the global queue that found it
//!   empty. Series per worker grow from 23 to 24.
//! - **2** (this version), addition: `dreadpool_sleeps_cancelled_total`, a
//!   counter per worker of the registrations to sleep that the worker's
//!   second look called off. Series per worker grow from 22 to 23.
//! - **2** (this version), addition: `dreadpool_joins_total`,
//!   `dreadpool_forks_shared_total` and `dreadpool_forks_stolen_total`,
//!   counters per worker for fork-join (`dreadpool::join`). Series per
//!   worker grow from 19 to 22 (see the formula above). A shared fork
//!   counts as a task in `dreadpool_tasks_spawned_local_total` and
//!   `dreadpool_tasks_run_total` (an inline one does not), so a pool that
//!   forks no join publishes what it did before.
//! - **2** (this version): `dreadpool_schedule_delay_seconds` and
//!   `dreadpool_run_time_seconds` are histograms (`_bucket`, `_sum`,
//!   `_count`), per pool, cumulative since the pool started. They replace
//!   the version 1 gauges of the same base name with a `quantile` label
//!   (0.5, 0.9, 0.99, 0.999, 1 over the publisher's last interval), which
//!   are gone: a query on `{quantile=...}` now finds nothing rather than
//!   something else. `dreadpool_busy_nanoseconds_total` (a counter in
//!   nanoseconds) is replaced by `dreadpool_busy_seconds` (base units; a
//!   gauge because metrics-rs counters hold integers, see
//!   [`names::BUSY`]); queries that divided by 1e9 must stop. The steal matrix
//!   is published only up to 16 workers by default. New:
//!   `dreadpool_schema_info`.
//! - **1**: the first published names.
//!
//! The socket [wire protocol](crate#wire-protocol) has its own version,
//! [`SCHEMA_VERSION`](crate::SCHEMA_VERSION), unchanged by this one.
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

mod buckets;
pub mod names;
mod options;
mod publisher;

pub use buckets::Buckets;
pub use options::Options;
pub use publisher::Publisher;

use crate::interval::Interval;
use crate::monitor::Monitor;
use crate::snapshot::{HistogramSnapshot, Snapshot, WorkerSnapshot, WorkerState};
use metrics::{
    counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram, Unit,
};

use names::*;

/// The version of the published metric schema (the names, kinds, labels
/// and units in the [module docs](self)), also published as the `version`
/// label of [`names::SCHEMA_INFO`]. It changes whenever a name is removed
/// or changes meaning; the changelog is in the module docs.
pub const METRIC_SCHEMA_VERSION: u32 = 2;

/// Describes every metric (help text and unit) to the installed recorder.
/// Call once after installing it; a [`Publisher`] does.
pub fn describe() {
    describe_gauge!(
        SCHEMA_INFO,
        "Always 1; the version label is the dreadpool metric schema version."
    );
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
        "Tasks spawned from outside the pool that the worker ran."
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
        SLEEPS_CANCELLED,
        Unit::Count,
        "Times the worker registered to sleep and its second look found work, so it did not park."
    );
    describe_counter!(
        GLOBAL_EMPTY_POLLS,
        Unit::Count,
        "Times the worker looked in the global queue and found it empty."
    );
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
        JOINS,
        Unit::Count,
        "dreadpool::join calls forked on the worker."
    );
    describe_counter!(
        FORKS_SHARED,
        Unit::Count,
        "Forks of the worker's joins that it shared with idle workers (the rest ran inline)."
    );
    describe_counter!(
        FORKS_STOLEN,
        Unit::Count,
        "Forks shared by other workers that the worker took and ran."
    );
    describe_gauge!(
        BUSY,
        Unit::Seconds,
        "Time the worker spent running tasks since the pool started; only rises: use rate()."
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
        "Busy time over capacity (elapsed time times workers) in the publisher's last interval."
    );
    describe_gauge!(
        WORKER_BUSY_RATIO,
        "The worker's busy time over elapsed time in the publisher's last interval."
    );
    describe_histogram!(
        SCHEDULE_DELAY,
        Unit::Seconds,
        "Spawn-to-start delay of the timed tasks (one in latency_sampling)."
    );
    describe_histogram!(
        RUN_TIME,
        Unit::Seconds,
        "Run time of the timed tasks (one in latency_sampling)."
    );
}

/// Publishes a snapshot's counters and gauges, with the default
/// [`Options`].
pub fn publish_snapshot(snapshot: &Snapshot) {
    publish_snapshot_with(snapshot, &Options::default());
}

/// Publishes a snapshot's counters and gauges, leaving out what `options`
/// leave out.
pub fn publish_snapshot_with(snapshot: &Snapshot, options: &Options) {
    let pool = snapshot.name.clone();
    let p = [("pool", pool.clone())];
    gauge!(
        SCHEMA_INFO,
        &[
            ("pool", pool.clone()),
            ("version", METRIC_SCHEMA_VERSION.to_string())
        ]
    )
    .set(1.0);
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
    let steal_matrix = options.publishes_steal_matrix(snapshot.workers.len());
    for w in &snapshot.workers {
        publish_worker(&pool, w, steal_matrix);
    }
}

fn publish_worker(pool: &str, w: &WorkerSnapshot, steal_matrix: bool) {
    let labels = [("pool", pool.to_string()), ("worker", w.index.to_string())];
    let counters: [(&'static str, u64); 16] = [
        (TASKS_RUN, w.tasks_run),
        (TASKS_SPAWNED_LOCAL, w.tasks_spawned_local),
        (GLOBAL_PULLS, w.global_pulls),
        (STEALS_ATTEMPTED, w.steals_attempted),
        (STEALS_SUCCEEDED, w.steals_succeeded),
        (TASKS_STOLEN, w.tasks_stolen),
        (SLEEPS, w.sleeps),
        (SLEEPS_CANCELLED, w.sleeps_cancelled),
        (GLOBAL_EMPTY_POLLS, w.global_empty_polls),
        (WAKEUPS, w.wakeups),
        (NOOP_WAKEUPS, w.noop_wakeups),
        (RESPAWNS, w.respawns),
        (PANICS, w.panics),
        (JOINS, w.joins),
        (FORKS_SHARED, w.forks_shared),
        (FORKS_STOLEN, w.forks_stolen),
    ];
    for (name, value) in counters {
        counter!(name, &labels).absolute(value);
    }
    gauge!(BUSY, &labels).set(w.busy_duration.as_secs_f64());
    gauge!(LOCAL_QUEUE_DEPTH, &labels).set(w.local_queue_depth as f64);
    if steal_matrix {
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

/// Records the tasks timed between `before` and `now` (two snapshots of one
/// pool, `before` older; `None` for the pool's start) into the
/// [`names::SCHEDULE_DELAY`] and
/// [`names::RUN_TIME`] histograms: each core bucket's new count at
/// its midpoint. Call it once per pair, or tasks are counted twice.
pub fn publish_histograms(now: &Snapshot, before: Option<&Snapshot>) {
    let p = [("pool", now.name.clone())];
    for (name, now, before) in [
        (
            SCHEDULE_DELAY,
            now.schedule_delay(),
            before.map(Snapshot::schedule_delay),
        ),
        (RUN_TIME, now.run_time(), before.map(Snapshot::run_time)),
    ] {
        let fresh = match before {
            Some(before) => now.since(&before),
            None => now,
        };
        record(histogram!(name, &p), &fresh);
    }
}

fn record(histogram: metrics::Histogram, fresh: &HistogramSnapshot) {
    for bucket in &fresh.buckets {
        // Inside (lower, upper], so on the exporter's bounds (core edges,
        // see `Buckets`) the whole count lands in the bucket it came from.
        let at = bucket.midpoint().as_secs_f64();
        histogram.record_many(at, usize::try_from(bucket.count).unwrap_or(usize::MAX));
    }
}

/// Publishes an interval's gauges: the busy ratios of its last interval.
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
}

/// [`sample_with`] the default [`Options`].
pub fn sample(monitor: &mut Monitor) -> Interval {
    sample_with(monitor, &Options::default())
}

/// Samples `monitor` and publishes the snapshot, the tasks timed since the
/// monitor's previous sample (into the histograms) and the interval;
/// returns the interval.
///
/// The histograms get what was timed between the monitor's previous sample
/// and this one, so sample a monitor used for publishing only here: tasks
/// timed in an interval sampled elsewhere are not published. A detached
/// monitor republishes its last snapshot and records nothing new.
pub fn sample_with(monitor: &mut Monitor, options: &Options) -> Interval {
    let before = monitor.last_snapshot().cloned();
    let interval = monitor.sample();
    if let Some(now) = monitor.last_snapshot() {
        publish_snapshot_with(now, options);
        // A restarted source's counts start again from zero.
        let before = before.as_ref().filter(|_| !interval.restarted);
        publish_histograms(now, before);
    }
    publish_interval(&interval);
    interval
}

#[cfg(test)]
mod tests {
    use super::*;
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};
    use std::time::Duration;

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

    #[test]
    fn join_and_fork_counters_are_published_per_worker() {
        let workers = (0..2)
            .map(|index| WorkerSnapshot {
                index,
                joins: 1_000 * (index as u64 + 1),
                forks_shared: 10 + index as u64,
                forks_stolen: 7 - index as u64,
                stolen_from: vec![0, 0],
                ..WorkerSnapshot::default()
            })
            .collect();
        let snapshot = Snapshot {
            name: "fj".into(),
            threads: 2,
            workers,
            ..Snapshot::default()
        };
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        metrics::with_local_recorder(&recorder, || publish_snapshot(&snapshot));
        let mut seen = Vec::new();
        for (key, _, _, value) in snapshotter.snapshot().into_vec() {
            let name = key.key().name();
            if ![JOINS, FORKS_SHARED, FORKS_STOLEN].contains(&name) {
                continue;
            }
            let DebugValue::Counter(n) = value else {
                panic!("{name} is not a counter");
            };
            let label = |k: &str| {
                key.key()
                    .labels()
                    .find(|l| l.key() == k)
                    .map(|l| l.value().to_string())
            };
            assert_eq!(label("pool").as_deref(), Some("fj"));
            let worker: u64 = label("worker").expect("a worker label").parse().unwrap();
            seen.push((name.to_string(), worker, n));
        }
        seen.sort();
        let want = |name: &str, w: u64, n: u64| (name.to_string(), w, n);
        assert_eq!(
            seen,
            vec![
                want(FORKS_SHARED, 0, 10),
                want(FORKS_SHARED, 1, 11),
                want(FORKS_STOLEN, 0, 7),
                want(FORKS_STOLEN, 1, 6),
                want(JOINS, 0, 1_000),
                want(JOINS, 1, 2_000),
            ]
        );
    }

    /// Publishes `pool` through a fresh debugging recorder, sampling
    /// `samples` times with `options`; returns the recorder's snapshot.
    fn published(
        pool: &dreadpool_core::ThreadPool,
        options: &Options,
        samples: usize,
    ) -> Vec<(metrics_util::CompositeKey, DebugValue)> {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        metrics::with_local_recorder(&recorder, || {
            let mut monitor = Monitor::new(pool);
            for _ in 0..samples {
                sample_with(&mut monitor, options);
            }
        });
        snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .map(|(key, _, _, value)| (key, value))
            .collect()
    }

    #[test]
    fn series_per_pool_follow_the_documented_formula() {
        for (workers, options, matrix) in [
            (4, Options::default(), true),
            (3, Options::new().steal_matrix_max_workers(2), false),
            (17, Options::default(), false),
            (17, Options::new().steal_matrix_max_workers(17), true),
        ] {
            let pool = dreadpool_core::ThreadPoolBuilder::new()
                .with_threads(workers)
                .build();
            let all = published(&pool, &options, 1);
            let histograms = all
                .iter()
                .filter(|(_, v)| matches!(v, DebugValue::Histogram(_)))
                .count();
            let series = all.len() - histograms;
            let mut want = 12 + 24 * workers;
            if matrix {
                want += workers * (workers - 1);
            }
            assert_eq!(series, want, "{workers} workers, matrix {matrix}");
            // One key per histogram here; the exporter makes `Buckets::series`
            // of each, which the formula's `2 H` counts.
            assert_eq!(histograms, 2);
        }
    }

    #[test]
    fn histograms_get_each_timed_task_once_at_its_bucket() {
        let pool = dreadpool_core::ThreadPoolBuilder::new()
            .with_threads(2)
            .with_latency_sampling(1)
            .build();
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        let mut monitor = Monitor::new(&pool);
        let mut recorded = Vec::new();
        for round in 0..3 {
            for _ in 0..50 {
                pool.spawn(|| std::thread::sleep(Duration::from_micros(200)));
            }
            pool.join();
            metrics::with_local_recorder(&recorder, || sample(&mut monitor));
            for (key, _, _, value) in snapshotter.snapshot().into_vec() {
                if key.key().name() == RUN_TIME {
                    let DebugValue::Histogram(values) = value else {
                        panic!("{RUN_TIME} is not a histogram");
                    };
                    assert_eq!(values.len(), 50, "round {round}: only the new tasks");
                    recorded.extend(values.into_iter().map(|v| v.into_inner()));
                }
            }
        }
        assert_eq!(recorded.len(), 150);
        // Each value is a core bucket's midpoint: inside one exporter bucket,
        // and no faster than the sleep.
        let bounds = Buckets::default().bounds();
        for v in recorded {
            assert!(v >= 200e-6 * 0.94, "{v}");
            assert!(!bounds.contains(&v), "{v} sits on a bound");
        }
    }
}
