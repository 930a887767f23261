//! [`Monitor`]: turns a stream of snapshots into intervals and a report.

use crate::histogram::{
    CountDistribution, LatencyDistribution, MAX_TRACKED_BATCH, MAX_TRACKED_DEPTH,
};
use crate::interval::Interval;
use crate::report::Report;
use crate::snapshot::{HistogramSnapshot, Snapshot, WorkerSnapshot};
use dreadpool_core::{Handle, ThreadPool};
use std::fmt;

/// Samples a pool's counters and turns them into [`Interval`]s (deltas,
/// rates, quantiles since the previous sample) and a [`Report`] (all of it).
///
/// A monitor is either attached to a pool in this process
/// ([`new`](Self::new), [`from_handle`](Self::from_handle)), and then
/// [`sample`](Self::sample) reads the pool itself, or
/// [`detached`](Self::detached), fed [`Snapshot`]s from elsewhere (a
/// [`Client`](crate::Client) attached to another process) through
/// [`observe`](Self::observe). Both paths run the same code.
///
/// The first interval is measured from the pool's start. Memory is fixed:
/// a monitor keeps the previous snapshot and a few bounded histograms, not
/// the history.
///
/// ```
/// use dreadpool::ThreadPoolBuilder;
/// use dreadpool::metrics::Monitor;
///
/// let pool = ThreadPoolBuilder::new().with_threads(2).build();
/// let mut monitor = Monitor::new(&pool);
/// for round in 0..3 {
///     for _ in 0..100 {
///         pool.spawn(|| ());
///     }
///     pool.join();
///     let interval = monitor.sample();
///     assert_eq!(interval.tasks_run, 100, "round {round}");
/// }
/// let report = monitor.report();
/// assert_eq!(report.lifetime.tasks_run, 300);
/// println!("{report}");
/// ```
///
/// Feeding snapshots from elsewhere:
///
/// ```
/// use dreadpool::ThreadPoolBuilder;
/// use dreadpool::metrics::{Monitor, Snapshot};
///
/// let pool = ThreadPoolBuilder::new().with_threads(2).build();
/// let mut monitor = Monitor::detached();
/// pool.spawn(|| ());
/// pool.join();
/// // In real use the snapshot arrives over a socket (see `Client`).
/// let interval = monitor.observe(Snapshot::from(&pool.metrics()));
/// assert_eq!(interval.tasks_run, 1);
/// ```
#[derive(Clone)]
pub struct Monitor {
    source: Option<Handle>,
    last: Option<Snapshot>,
    last_interval: Option<Interval>,
    samples: u64,
    // Reused from sample to sample: cleared, never reallocated.
    interval_delay: LatencyDistribution,
    interval_run: LatencyDistribution,
    total_delay: LatencyDistribution,
    total_run: LatencyDistribution,
    global_depth: CountDistribution,
    local_depth: CountDistribution,
    steal_batch: CountDistribution,
}

impl Monitor {
    /// A monitor of `pool` (it holds a [`Handle`], not a borrow).
    pub fn new(pool: &ThreadPool) -> Self {
        Self::from_handle(pool.handle())
    }

    /// A monitor of the pool behind `handle`. It keeps working after the
    /// pool shuts down: its workers then read as stopped.
    ///
    /// ```
    /// use dreadpool::ThreadPoolBuilder;
    /// use dreadpool::metrics::{Monitor, WorkerState};
    ///
    /// let pool = ThreadPoolBuilder::new().with_threads(2).build();
    /// let mut monitor = Monitor::from_handle(pool.handle());
    /// drop(pool);
    /// assert_eq!(monitor.sample().states.stopped, 2);
    /// ```
    pub fn from_handle(handle: Handle) -> Self {
        Self::with_source(Some(handle))
    }

    /// A monitor with no pool of its own, fed with [`observe`](Self::observe).
    pub fn detached() -> Self {
        Self::with_source(None)
    }

    fn with_source(source: Option<Handle>) -> Self {
        Monitor {
            source,
            last: None,
            last_interval: None,
            samples: 0,
            interval_delay: LatencyDistribution::new(),
            interval_run: LatencyDistribution::new(),
            total_delay: LatencyDistribution::new(),
            total_run: LatencyDistribution::new(),
            global_depth: CountDistribution::new(MAX_TRACKED_DEPTH),
            local_depth: CountDistribution::new(MAX_TRACKED_DEPTH),
            steal_batch: CountDistribution::new(MAX_TRACKED_BATCH),
        }
    }

    /// True for a monitor made with [`detached`](Self::detached).
    pub fn is_detached(&self) -> bool {
        self.source.is_none()
    }

    /// Reads the pool now and returns what happened since the previous
    /// sample (the first: since the pool started).
    ///
    /// A detached monitor has nothing to read: it returns an empty interval
    /// (zero elapsed, zero rates) with the gauges of the last snapshot it
    /// observed.
    pub fn sample(&mut self) -> Interval {
        match &self.source {
            Some(handle) => {
                let snapshot = Snapshot::from(&handle.metrics());
                self.observe(snapshot)
            }
            None => match &self.last {
                Some(last) => Interval::between(Some(last), last),
                None => Interval::default(),
            },
        }
    }

    /// Takes `snapshot` as the next sample and returns the interval since
    /// the previous one.
    ///
    /// Snapshots should come from one pool, oldest first. If the counters go
    /// backwards (the source now reports another pool, or a host process
    /// restarted), the interval is measured from zero and flagged
    /// [`restarted`](Interval::restarted).
    pub fn observe(&mut self, snapshot: Snapshot) -> Interval {
        let mut interval = Interval::between(self.last.as_ref(), &snapshot);
        let before = if interval.restarted {
            None
        } else {
            self.last.as_ref()
        };

        self.interval_delay.clear();
        self.interval_run.clear();
        if before.is_none() {
            // From the start (first sample, or the source restarted).
            self.total_delay.clear();
            self.total_run.clear();
        }
        let empty = WorkerSnapshot::default();
        for (i, now) in snapshot.workers.iter().enumerate() {
            let then = before.and_then(|b| b.workers.get(i)).unwrap_or(&empty);
            add_delta(
                &mut self.interval_delay,
                &now.schedule_delay,
                &then.schedule_delay,
            );
            add_delta(&mut self.interval_run, &now.run_time, &then.run_time);
            self.local_depth.record_n(now.local_queue_depth as u64, 1);
        }
        // The pool's life so far is the previous total plus this interval.
        self.total_delay.merge(&self.interval_delay);
        self.total_run.merge(&self.interval_run);
        interval.schedule_delay = self.interval_delay.quantiles();
        interval.run_time = self.interval_run.quantiles();
        interval.schedule_delay_total = self.total_delay.quantiles();
        interval.run_time_total = self.total_run.quantiles();

        self.global_depth
            .record_n(snapshot.global_queue_depth as u64, 1);
        for w in &interval.workers {
            // The counters give each interval's total only, so every steal
            // of the interval is taken to have the interval's mean size.
            self.steal_batch
                .record_n(w.mean_steal_batch.round() as u64, w.steals_succeeded);
        }

        self.samples += 1;
        self.last = Some(snapshot);
        self.last_interval = Some(interval.clone());
        interval
    }

    /// An endless iterator of intervals, the tokio-metrics shape: each
    /// `next()` samples now, so the caller sets the pace. A detached
    /// monitor's iterator is empty.
    ///
    /// ```
    /// use dreadpool::ThreadPoolBuilder;
    /// use dreadpool::metrics::Monitor;
    ///
    /// let pool = ThreadPoolBuilder::new().with_threads(2).build();
    /// let mut monitor = Monitor::new(&pool);
    /// for interval in monitor.intervals().take(3) {
    ///     pool.spawn(|| ());
    ///     pool.join();
    ///     println!("{interval}");
    ///     // In a real program: std::thread::sleep(Duration::from_secs(1));
    /// }
    /// ```
    pub fn intervals(&mut self) -> Intervals<'_> {
        Intervals { monitor: self }
    }

    /// Everything observed so far: the latest interval, the totals since
    /// the pool started, cumulative latency quantiles and the sampled
    /// queue-depth and steal-batch distributions.
    ///
    /// It does not sample: call [`sample`](Self::sample) (or
    /// [`observe`](Self::observe)) first. An attached monitor that has not
    /// sampled yet reports a fresh read of the pool, without keeping it.
    pub fn report(&self) -> Report {
        if self.last.is_none() && self.source.is_some() {
            let mut fresh = self.clone();
            fresh.sample();
            return fresh.report();
        }
        let lifetime = match &self.last {
            Some(last) => {
                let mut lifetime = Interval::between(None, last);
                lifetime.schedule_delay = self.total_delay.quantiles();
                lifetime.run_time = self.total_run.quantiles();
                lifetime.schedule_delay_total = lifetime.schedule_delay;
                lifetime.run_time_total = lifetime.run_time;
                lifetime
            }
            None => Interval::default(),
        };
        Report {
            samples: self.samples,
            latest: self.last_interval.clone().unwrap_or_default(),
            lifetime,
            global_queue_depth: self.global_depth.distribution(),
            local_queue_depth: self.local_depth.distribution(),
            steal_batch_size: self.steal_batch.distribution(),
        }
    }

    /// The last snapshot sampled or observed.
    pub fn last_snapshot(&self) -> Option<&Snapshot> {
        self.last.as_ref()
    }

    /// The last interval returned.
    pub fn last_interval(&self) -> Option<&Interval> {
        self.last_interval.as_ref()
    }

    /// Samples taken or observed so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }
}

fn add_delta(into: &mut LatencyDistribution, now: &HistogramSnapshot, then: &HistogramSnapshot) {
    if then.buckets.is_empty() {
        into.add(now);
    } else {
        into.add(&now.since(then));
    }
}

impl fmt::Debug for Monitor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Monitor")
            .field("source", &self.source)
            .field("samples", &self.samples)
            .field("last_uptime", &self.last.as_ref().map(|s| s.uptime))
            .finish_non_exhaustive()
    }
}

/// The iterator of [`Monitor::intervals`].
#[derive(Debug)]
pub struct Intervals<'a> {
    monitor: &'a mut Monitor,
}

impl Iterator for Intervals<'_> {
    type Item = Interval;

    fn next(&mut self) -> Option<Interval> {
        if self.monitor.is_detached() {
            return None;
        }
        Some(self.monitor.sample())
    }
}
