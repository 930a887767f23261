//! [`Snapshot`]: a serde mirror of the core's `PoolMetrics`, the one type
//! every consumer works from, whether the pool runs in this process or is
//! attached over a socket.

use crate::nanos;
use dreadpool_core::{LatencyHistogram, PoolMetrics, WorkerMetrics};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What a worker was doing when the snapshot was taken: the serde mirror of
/// [`dreadpool::WorkerState`](dreadpool_core::WorkerState).
///
/// Serialised in lower case (`"running"`, `"searching"`, ...). A state this
/// version does not know (a newer core, or a newer peer over the socket)
/// reads as [`Unknown`](WorkerState::Unknown) rather than failing.
///
/// ```
/// use dreadpool_metrics::WorkerState;
///
/// assert_eq!(serde_json::to_string(&WorkerState::Sleeping).unwrap(), "\"sleeping\"");
/// let later: WorkerState = serde_json::from_str("\"hibernating\"").unwrap();
/// assert_eq!(later, WorkerState::Unknown);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkerState {
    /// Running tasks (or about to: it has work).
    Running,
    /// Woken, looking for work in the global queue and its peers' queues.
    Searching,
    /// Parked, waiting for a spawn to wake it.
    #[default]
    Sleeping,
    /// Its thread panicked and a replacement thread is being started.
    Respawning,
    /// The pool shut down and this worker exited.
    Stopped,
    /// A state this version of the crate does not know.
    #[serde(other)]
    Unknown,
}

impl WorkerState {
    /// Every state, in display order.
    pub const ALL: [WorkerState; 6] = [
        WorkerState::Running,
        WorkerState::Searching,
        WorkerState::Sleeping,
        WorkerState::Respawning,
        WorkerState::Stopped,
        WorkerState::Unknown,
    ];

    /// A short lower-case name (`running`, `searching`, ...), as serialised.
    ///
    /// ```
    /// assert_eq!(dreadpool_metrics::WorkerState::Running.as_str(), "running");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            WorkerState::Running => "running",
            WorkerState::Searching => "searching",
            WorkerState::Sleeping => "sleeping",
            WorkerState::Respawning => "respawning",
            WorkerState::Stopped => "stopped",
            WorkerState::Unknown => "unknown",
        }
    }
}

impl From<dreadpool_core::WorkerState> for WorkerState {
    fn from(state: dreadpool_core::WorkerState) -> Self {
        use dreadpool_core::WorkerState as Core;
        match state {
            Core::Running => WorkerState::Running,
            Core::Searching => WorkerState::Searching,
            Core::Sleeping => WorkerState::Sleeping,
            Core::Respawning => WorkerState::Respawning,
            Core::Stopped => WorkerState::Stopped,
            _ => WorkerState::Unknown,
        }
    }
}

impl std::fmt::Display for WorkerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One non-empty bucket of a [`HistogramSnapshot`]: `count` values in
/// `[lower, upper)`. Serialised as `[lower_ns, upper_ns, count]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "[u64; 3]", into = "[u64; 3]")]
pub struct Bucket {
    /// Inclusive lower bound.
    pub lower: Duration,
    /// Exclusive upper bound.
    pub upper: Duration,
    /// Values recorded in the bucket.
    pub count: u64,
}

impl Bucket {
    /// The bucket's midpoint, where its values are taken to lie.
    pub fn midpoint(&self) -> Duration {
        self.lower + (self.upper.saturating_sub(self.lower)) / 2
    }
}

impl From<[u64; 3]> for Bucket {
    fn from([lower, upper, count]: [u64; 3]) -> Self {
        Bucket {
            lower: Duration::from_nanos(lower),
            upper: Duration::from_nanos(upper.max(lower)),
            count,
        }
    }
}

impl From<Bucket> for [u64; 3] {
    fn from(b: Bucket) -> Self {
        [nanos::of(b.lower), nanos::of(b.upper), b.count]
    }
}

/// The bucket counts of one of the core's latency histograms
/// ([`LatencyHistogram`]), sparse: only non-empty buckets, in increasing
/// order. Counts are monotonic over the pool's life; [`since`](Self::since)
/// gives an interval's distribution.
///
/// Quantiles are computed downstream with `hdrhistogram` (see
/// [`Quantiles`](crate::Quantiles)); this type only carries the counts.
///
/// ```
/// use dreadpool_metrics::HistogramSnapshot;
/// use std::time::Duration;
///
/// let mut h = HistogramSnapshot::default();
/// h.record_n(Duration::from_micros(10), 3);
/// h.record_n(Duration::from_millis(1), 1);
/// assert_eq!(h.count(), 4);
/// let earlier = h.clone();
/// h.record_n(Duration::from_micros(10), 2);
/// assert_eq!(h.since(&earlier).count(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HistogramSnapshot {
    /// Non-empty buckets in increasing order of `lower`.
    pub buckets: Vec<Bucket>,
    /// Values that were at or above [`LatencyHistogram::MAX`] when recorded
    /// and were clamped into the last bucket (they are counted in
    /// `buckets` too).
    #[serde(default)]
    pub outliers: u64,
}

impl HistogramSnapshot {
    /// Values recorded.
    pub fn count(&self) -> u64 {
        self.buckets.iter().map(|b| b.count).sum()
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.buckets.iter().all(|b| b.count == 0)
    }

    /// Records `n` values equal to `value`, in the core's bucket layout (for
    /// building snapshots by hand: fixtures, tests, replay).
    pub fn record_n(&mut self, value: Duration, n: u64) {
        if n == 0 {
            return;
        }
        let mut one = LatencyHistogram::default();
        one.record(value);
        for (lower, upper, _) in one.buckets() {
            self.add(Bucket {
                lower,
                upper,
                count: n,
            });
        }
        if one.outliers() > 0 {
            self.outliers += n;
        }
    }

    /// Adds `bucket` (merging with an existing bucket of the same `lower`).
    fn add(&mut self, bucket: Bucket) {
        match self
            .buckets
            .binary_search_by(|b| b.lower.cmp(&bucket.lower))
        {
            Ok(at) => self.buckets[at].count += bucket.count,
            Err(at) => self.buckets.insert(at, bucket),
        }
    }

    /// Adds `other`'s counts to this one (to merge workers).
    pub fn merge(&mut self, other: &HistogramSnapshot) {
        if self.buckets.is_empty() {
            self.buckets.clone_from(&other.buckets);
        } else {
            for bucket in &other.buckets {
                self.add(*bucket);
            }
        }
        self.outliers += other.outliers;
    }

    /// The values recorded since `earlier`, an older snapshot of the same
    /// histogram (buckets that went backwards count as empty).
    pub fn since(&self, earlier: &HistogramSnapshot) -> HistogramSnapshot {
        let mut then = earlier.buckets.iter().peekable();
        let mut buckets = Vec::with_capacity(self.buckets.len());
        for now in &self.buckets {
            while then.next_if(|b| b.lower < now.lower).is_some() {}
            let before = then
                .next_if(|b| b.lower == now.lower)
                .map_or(0, |b| b.count);
            let count = now.count.saturating_sub(before);
            if count > 0 {
                buckets.push(Bucket { count, ..*now });
            }
        }
        HistogramSnapshot {
            buckets,
            outliers: self.outliers.saturating_sub(earlier.outliers),
        }
    }
}

impl From<&LatencyHistogram> for HistogramSnapshot {
    fn from(h: &LatencyHistogram) -> Self {
        HistogramSnapshot {
            buckets: h
                .buckets()
                .map(|(lower, upper, count)| Bucket {
                    lower,
                    upper,
                    count,
                })
                .collect(),
            outliers: h.outliers(),
        }
    }
}

/// One worker's counters: the serde mirror of
/// [`dreadpool::WorkerMetrics`](dreadpool_core::WorkerMetrics).
///
/// Every count is monotonic over the pool's life (it survives respawns);
/// `state` and `local_queue_depth` are gauges. Durations are serialised as
/// integer nanoseconds (`busy_ns`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkerSnapshot {
    /// The worker's index (its thread is named `"{pool}-{index}"`).
    pub index: usize,
    /// What it was doing.
    pub state: WorkerState,
    /// Tasks it finished (panicked ones included). A fork of
    /// [`dreadpool::join`](dreadpool_core::join) that was shared counts as a
    /// task: on the worker that ran it, or on its owner if it took it back.
    pub tasks_run: u64,
    /// Tasks its tasks spawned into its own local queue, and forks it
    /// shared.
    pub tasks_spawned_local: u64,
    /// Tasks spawned from outside the pool that it ran (counted where
    /// they ran, wherever they were pulled).
    pub global_pulls: u64,
    /// Steal attempts on a peer's queue.
    pub steals_attempted: u64,
    /// Steal attempts that took at least one task.
    pub steals_succeeded: u64,
    /// Tasks taken by successful steals (the sum of batch sizes).
    pub tasks_stolen: u64,
    /// Times it parked.
    pub sleeps: u64,
    /// Times it registered to sleep and its second look found work, so it
    /// searched again without parking. Absent from (read as 0 in)
    /// snapshots of exporters that predate the count.
    pub sleeps_cancelled: u64,
    /// Times it looked for tasks in the global queue and found none: each
    /// look reads the lines that outside spawns write. Absent from (read as
    /// 0 in) snapshots of exporters that predate the count.
    pub global_empty_polls: u64,
    /// Times it was woken and found work.
    pub wakeups: u64,
    /// Times it was woken and found nothing.
    pub noop_wakeups: u64,
    /// Times its thread was replaced after a panic.
    pub respawns: u64,
    /// Task panics on this worker.
    pub panics: u64,
    /// [`join`](dreadpool_core::join)s it forked (each one's `b` waited
    /// where idle workers could take it, or ran inline). Absent from (read
    /// as 0 in) snapshots of exporters that predate fork-join.
    pub joins: u64,
    /// Of its joins' forks, those it shared with idle workers (the rest ran
    /// inline with no synchronisation).
    pub forks_shared: u64,
    /// Forks shared by its peers that it took and ran (a fork-join steal;
    /// not counted in `steals_*` or `tasks_stolen`).
    pub forks_stolen: u64,
    /// Time spent running tasks, including a stretch still in progress.
    #[serde(rename = "busy_ns", with = "nanos")]
    pub busy_duration: Duration,
    /// Tasks in its local queue.
    pub local_queue_depth: usize,
    /// `stolen_from[victim]`: tasks this worker stole from each peer (its
    /// row of the steal matrix).
    pub stolen_from: Vec<u64>,
    /// Spawn-to-start delay of the sampled tasks it ran.
    pub schedule_delay: HistogramSnapshot,
    /// Run time of the sampled tasks it ran.
    pub run_time: HistogramSnapshot,
}

impl From<&WorkerMetrics> for WorkerSnapshot {
    fn from(w: &WorkerMetrics) -> Self {
        WorkerSnapshot {
            index: w.index,
            state: w.state.into(),
            tasks_run: w.tasks_run,
            tasks_spawned_local: w.tasks_spawned_local,
            global_pulls: w.global_pulls,
            steals_attempted: w.steals_attempted,
            steals_succeeded: w.steals_succeeded,
            tasks_stolen: w.tasks_stolen,
            sleeps: w.sleeps,
            sleeps_cancelled: w.sleeps_cancelled,
            global_empty_polls: w.global_empty_polls,
            wakeups: w.wakeups,
            noop_wakeups: w.noop_wakeups,
            respawns: w.respawns,
            panics: w.panics,
            joins: w.joins,
            forks_shared: w.forks_shared,
            forks_stolen: w.forks_stolen,
            busy_duration: w.busy_duration,
            local_queue_depth: w.local_queue_depth,
            stolen_from: w.stolen_from.clone(),
            schedule_delay: (&w.schedule_delay).into(),
            run_time: (&w.run_time).into(),
        }
    }
}

/// A snapshot of one pool's counters: the serde mirror of
/// [`dreadpool::PoolMetrics`](dreadpool_core::PoolMetrics), and what
/// everything downstream ([`Monitor`](crate::Monitor),
/// [`Exporter`](crate::Exporter), [`Client`](crate::Client), the dashboard)
/// works from.
///
/// Its JSON form is part of the wire schema (see the crate docs): durations
/// are integer nanoseconds (`uptime_ns`, `busy_ns`), histograms are sparse
/// bucket lists. Missing fields read as zero, so that a newer peer may add
/// fields and an older one still reads the rest.
///
/// ```
/// use dreadpool::ThreadPoolBuilder;
/// use dreadpool::metrics::Snapshot;
///
/// let pool = ThreadPoolBuilder::new().with_threads(2).build();
/// for _ in 0..100 {
///     pool.spawn(|| ());
/// }
/// pool.join();
/// let snapshot = Snapshot::from(&pool.metrics());
/// assert_eq!(snapshot.tasks_run(), 100);
///
/// let json = serde_json::to_string(&snapshot).unwrap();
/// let back: Snapshot = serde_json::from_str(&json).unwrap();
/// assert_eq!(back, snapshot);
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Snapshot {
    /// The pool's name (its thread name prefix).
    pub name: String,
    /// Number of workers.
    pub threads: usize,
    /// Time since the pool started, when the snapshot was taken. Intervals
    /// are measured on this clock, so snapshots that travelled over a socket
    /// give the same rates as local ones.
    #[serde(rename = "uptime_ns", with = "nanos")]
    pub uptime: Duration,
    /// Tasks waiting in the global queue.
    pub global_queue_depth: usize,
    /// Tasks spawned from outside the pool.
    pub tasks_spawned_external: u64,
    /// Tasks queued or running.
    pub tasks_pending: u64,
    /// Task panics, all workers.
    pub panics: u64,
    /// One in this many tasks is timed for the latency histograms (0: none).
    pub latency_sampling: u32,
    /// Per-worker counters, by index.
    pub workers: Vec<WorkerSnapshot>,
}

impl Snapshot {
    /// Takes a snapshot of a pool (or anything else that gives
    /// [`PoolMetrics`]): `Snapshot::from(&pool.metrics())`.
    pub fn of(metrics: &PoolMetrics) -> Self {
        metrics.into()
    }

    /// `tasks_run` summed over the workers.
    pub fn tasks_run(&self) -> u64 {
        self.workers.iter().map(|w| w.tasks_run).sum()
    }

    /// Workers in `state`.
    pub fn workers_in(&self, state: WorkerState) -> usize {
        self.workers.iter().filter(|w| w.state == state).count()
    }

    /// Schedule delay merged over the workers.
    pub fn schedule_delay(&self) -> HistogramSnapshot {
        merged(self.workers.iter().map(|w| &w.schedule_delay))
    }

    /// Run time merged over the workers.
    pub fn run_time(&self) -> HistogramSnapshot {
        merged(self.workers.iter().map(|w| &w.run_time))
    }
}

fn merged<'a>(histograms: impl Iterator<Item = &'a HistogramSnapshot>) -> HistogramSnapshot {
    let mut total = HistogramSnapshot::default();
    for h in histograms {
        total.merge(h);
    }
    total
}

impl From<&PoolMetrics> for Snapshot {
    fn from(m: &PoolMetrics) -> Self {
        Snapshot {
            name: m.name.clone(),
            threads: m.threads,
            uptime: m.uptime,
            global_queue_depth: m.global_queue_depth,
            tasks_spawned_external: m.tasks_spawned_external,
            tasks_pending: m.tasks_pending,
            panics: m.panics,
            latency_sampling: m.latency_sampling,
            workers: m.workers.iter().map(WorkerSnapshot::from).collect(),
        }
    }
}

impl From<PoolMetrics> for Snapshot {
    fn from(m: PoolMetrics) -> Self {
        Snapshot::from(&m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_subtracts_bucket_by_bucket() {
        let mut a = HistogramSnapshot::default();
        a.record_n(Duration::from_micros(1), 5);
        a.record_n(Duration::from_micros(100), 5);
        let mut b = a.clone();
        b.record_n(Duration::from_micros(100), 2);
        b.record_n(Duration::from_micros(50), 7);
        b.record_n(Duration::from_secs(1), 1);
        let d = b.since(&a);
        assert_eq!(d.count(), 10);
        assert_eq!(d.buckets.len(), 3);
        assert!(d.buckets.windows(2).all(|w| w[0].lower < w[1].lower));
        // Backwards (a different pool, or a restart) reads as empty.
        assert_eq!(a.since(&b).count(), 0);
    }

    #[test]
    fn mirrors_the_core_histogram() {
        let mut core = LatencyHistogram::default();
        for micros in [1, 2, 3, 50, 50, 1000] {
            core.record(Duration::from_micros(micros));
        }
        core.record(Duration::from_secs(100_000));
        let h = HistogramSnapshot::from(&core);
        assert_eq!(h.count(), core.count());
        assert_eq!(h.outliers, 1);
        let mut by_hand = HistogramSnapshot::default();
        for micros in [1, 2, 3, 50, 50, 1000] {
            by_hand.record_n(Duration::from_micros(micros), 1);
        }
        by_hand.record_n(Duration::from_secs(100_000), 1);
        assert_eq!(by_hand, h);
    }

    #[test]
    fn json_shape_is_the_documented_one() {
        let mut w = WorkerSnapshot {
            busy_duration: Duration::from_nanos(1500),
            state: WorkerState::Running,
            joins: 9,
            forks_shared: 4,
            forks_stolen: 2,
            sleeps_cancelled: 5,
            global_empty_polls: 6,
            ..Default::default()
        };
        w.run_time.record_n(Duration::from_nanos(3), 2);
        let s = Snapshot {
            name: "p".into(),
            threads: 1,
            uptime: Duration::from_millis(2),
            workers: vec![w],
            ..Default::default()
        };
        let v: serde_json::Value = serde_json::to_value(&s).unwrap();
        assert_eq!(v["uptime_ns"], 2_000_000);
        assert_eq!(v["workers"][0]["busy_ns"], 1500);
        assert_eq!(v["workers"][0]["state"], "running");
        assert_eq!(v["workers"][0]["run_time"]["buckets"][0][0], 3);
        assert_eq!(v["workers"][0]["run_time"]["buckets"][0][1], 4);
        assert_eq!(v["workers"][0]["run_time"]["buckets"][0][2], 2);
        assert_eq!(v["workers"][0]["joins"], 9);
        assert_eq!(v["workers"][0]["forks_shared"], 4);
        assert_eq!(v["workers"][0]["forks_stolen"], 2);
        assert_eq!(v["workers"][0]["sleeps_cancelled"], 5);
        assert_eq!(v["workers"][0]["global_empty_polls"], 6);
        // Unknown fields are ignored and missing ones default.
        let back: Snapshot =
            serde_json::from_str(r#"{"name":"q","threads":3,"future_field":1}"#).unwrap();
        assert_eq!(back.threads, 3);
        assert_eq!(back.uptime, Duration::ZERO);
        // A worker from an exporter that predates fork-join: no join fields.
        let old: WorkerSnapshot = serde_json::from_str(r#"{"index":1,"tasks_run":7}"#).unwrap();
        assert_eq!((old.joins, old.forks_shared, old.forks_stolen), (0, 0, 0));
        assert_eq!((old.sleeps_cancelled, old.global_empty_polls), (0, 0));
        assert_eq!(old.tasks_run, 7);
    }
}
