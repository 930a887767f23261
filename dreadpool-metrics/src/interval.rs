//! [`Interval`]: what happened between two snapshots, as deltas, rates and
//! ratios, pool-wide and per worker.

use crate::histogram::Quantiles;
use crate::nanos;
use crate::snapshot::{Snapshot, WorkerSnapshot, WorkerState};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// `count` per second of `elapsed`; 0 for an empty interval, never NaN or
/// infinite.
pub(crate) fn per_sec(count: u64, elapsed: Duration) -> f64 {
    ratio(count as f64, elapsed.as_secs_f64())
}

/// `part / whole`; 0 when `whole` is zero (or the result is not finite).
pub(crate) fn ratio(part: f64, whole: f64) -> f64 {
    if whole <= 0.0 {
        return 0.0;
    }
    let r = part / whole;
    if r.is_finite() {
        r
    } else {
        0.0
    }
}

/// How many workers are in each state.
///
/// ```
/// use dreadpool_metrics::{StateCounts, WorkerState};
///
/// let counts = StateCounts::of([WorkerState::Running, WorkerState::Sleeping, WorkerState::Sleeping]);
/// assert_eq!(counts.running, 1);
/// assert_eq!(counts.sleeping, 2);
/// assert_eq!(counts.get(WorkerState::Sleeping), 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct StateCounts {
    /// Workers running tasks.
    pub running: usize,
    /// Workers looking for work.
    pub searching: usize,
    /// Parked workers (Go's schedtrace calls them idle).
    pub sleeping: usize,
    /// Workers whose thread is being replaced after a panic.
    pub respawning: usize,
    /// Workers that exited after shutdown.
    pub stopped: usize,
    /// Workers in a state this version does not know.
    pub unknown: usize,
}

impl StateCounts {
    /// Counts `states`.
    pub fn of(states: impl IntoIterator<Item = WorkerState>) -> Self {
        let mut counts = StateCounts::default();
        for state in states {
            *counts.slot(state) += 1;
        }
        counts
    }

    /// Workers in `state`.
    pub fn get(&self, state: WorkerState) -> usize {
        let mut copy = *self;
        *copy.slot(state)
    }

    fn slot(&mut self, state: WorkerState) -> &mut usize {
        match state {
            WorkerState::Running => &mut self.running,
            WorkerState::Searching => &mut self.searching,
            WorkerState::Sleeping => &mut self.sleeping,
            WorkerState::Respawning => &mut self.respawning,
            WorkerState::Stopped => &mut self.stopped,
            WorkerState::Unknown => &mut self.unknown,
        }
    }
}

/// One worker over one interval: deltas of its counters, their rates, and
/// its gauges at the end of the interval.
///
/// Rates are per second of the interval's `elapsed`; every rate and ratio is
/// 0 for an empty interval, never NaN.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct WorkerInterval {
    /// The worker's index.
    pub index: usize,
    /// Its state at the end of the interval.
    pub state: WorkerState,
    /// Tasks in its local queue at the end of the interval.
    pub local_queue_depth: usize,
    /// Tasks it finished.
    pub tasks_run: u64,
    /// Tasks finished per second.
    pub tasks_per_sec: f64,
    /// Tasks its tasks spawned into its local queue.
    pub tasks_spawned_local: u64,
    /// Tasks spawned from outside the pool that it ran.
    pub global_pulls: u64,
    /// Steal attempts.
    pub steals_attempted: u64,
    /// Steal attempts per second.
    pub steals_attempted_per_sec: f64,
    /// Steals that took at least one task.
    pub steals_succeeded: u64,
    /// Successful steals per second.
    pub steals_succeeded_per_sec: f64,
    /// `steals_succeeded / steals_attempted`, 0 with no attempt.
    pub steal_success_ratio: f64,
    /// Tasks taken by its steals.
    pub tasks_stolen: u64,
    /// Tasks stolen per second.
    pub tasks_stolen_per_sec: f64,
    /// Mean tasks per successful steal, 0 with none.
    pub mean_steal_batch: f64,
    /// Times it parked.
    pub sleeps: u64,
    /// Parks per second.
    pub sleeps_per_sec: f64,
    /// Registrations to sleep that its second look called off (it found
    /// work and searched again without parking).
    pub sleeps_cancelled: u64,
    /// Called-off sleeps per second.
    pub sleeps_cancelled_per_sec: f64,
    /// Looks at the global queue that found it empty.
    pub global_empty_polls: u64,
    /// Empty looks at the global queue per second.
    pub global_empty_polls_per_sec: f64,
    /// Wakeups that found work.
    pub wakeups: u64,
    /// Useful wakeups per second.
    pub wakeups_per_sec: f64,
    /// Wakeups that found nothing.
    pub noop_wakeups: u64,
    /// Useless wakeups per second.
    pub noop_wakeups_per_sec: f64,
    /// Times its thread was replaced after a panic.
    pub respawns: u64,
    /// Task panics.
    pub panics: u64,
    /// [`join`](dreadpool_core::join)s it forked.
    pub joins: u64,
    /// Joins forked per second.
    pub joins_per_sec: f64,
    /// Of its joins' forks, those it shared with idle workers.
    pub forks_shared: u64,
    /// Forks shared per second.
    pub forks_shared_per_sec: f64,
    /// Forks shared by its peers that it took and ran.
    pub forks_stolen: u64,
    /// Forks taken from peers per second.
    pub forks_stolen_per_sec: f64,
    /// Time spent running tasks.
    #[serde(rename = "busy_ns", with = "nanos")]
    pub busy: Duration,
    /// `busy / elapsed`, between 0 and 1.
    pub busy_ratio: f64,
    /// `stolen_from[victim]`: tasks it stole from each peer in the interval
    /// (its row of the interval's steal matrix).
    pub stolen_from: Vec<u64>,
}

impl WorkerInterval {
    fn between(before: Option<&WorkerSnapshot>, now: &WorkerSnapshot, elapsed: Duration) -> Self {
        let zero = WorkerSnapshot::default();
        let before = before.unwrap_or(&zero);
        let d = |f: fn(&WorkerSnapshot) -> u64| f(now).saturating_sub(f(before));
        let tasks_run = d(|w| w.tasks_run);
        let steals_attempted = d(|w| w.steals_attempted);
        let steals_succeeded = d(|w| w.steals_succeeded);
        let tasks_stolen = d(|w| w.tasks_stolen);
        let sleeps = d(|w| w.sleeps);
        let sleeps_cancelled = d(|w| w.sleeps_cancelled);
        let global_empty_polls = d(|w| w.global_empty_polls);
        let wakeups = d(|w| w.wakeups);
        let noop_wakeups = d(|w| w.noop_wakeups);
        let joins = d(|w| w.joins);
        let forks_shared = d(|w| w.forks_shared);
        let forks_stolen = d(|w| w.forks_stolen);
        let busy = now.busy_duration.saturating_sub(before.busy_duration);
        WorkerInterval {
            index: now.index,
            state: now.state,
            local_queue_depth: now.local_queue_depth,
            tasks_run,
            tasks_per_sec: per_sec(tasks_run, elapsed),
            tasks_spawned_local: d(|w| w.tasks_spawned_local),
            global_pulls: d(|w| w.global_pulls),
            steals_attempted,
            steals_attempted_per_sec: per_sec(steals_attempted, elapsed),
            steals_succeeded,
            steals_succeeded_per_sec: per_sec(steals_succeeded, elapsed),
            steal_success_ratio: ratio(steals_succeeded as f64, steals_attempted as f64),
            tasks_stolen,
            tasks_stolen_per_sec: per_sec(tasks_stolen, elapsed),
            mean_steal_batch: ratio(tasks_stolen as f64, steals_succeeded as f64),
            sleeps,
            sleeps_per_sec: per_sec(sleeps, elapsed),
            sleeps_cancelled,
            sleeps_cancelled_per_sec: per_sec(sleeps_cancelled, elapsed),
            global_empty_polls,
            global_empty_polls_per_sec: per_sec(global_empty_polls, elapsed),
            wakeups,
            wakeups_per_sec: per_sec(wakeups, elapsed),
            noop_wakeups,
            noop_wakeups_per_sec: per_sec(noop_wakeups, elapsed),
            respawns: d(|w| w.respawns),
            panics: d(|w| w.panics),
            joins,
            joins_per_sec: per_sec(joins, elapsed),
            forks_shared,
            forks_shared_per_sec: per_sec(forks_shared, elapsed),
            forks_stolen,
            forks_stolen_per_sec: per_sec(forks_stolen, elapsed),
            busy,
            // Fields are read one at a time, so busy time may run a hair
            // past the elapsed time: clamp.
            busy_ratio: ratio(busy.as_secs_f64(), elapsed.as_secs_f64()).clamp(0.0, 1.0),
            stolen_from: now
                .stolen_from
                .iter()
                .enumerate()
                .map(|(victim, &n)| {
                    n.saturating_sub(before.stolen_from.get(victim).copied().unwrap_or(0))
                })
                .collect(),
        }
    }
}

/// What a pool did between two samples: the tokio-metrics shape, with
/// deltas, rates (per second of `elapsed`), division-safe ratios, gauges at
/// the end of the interval, latency quantiles, and one [`WorkerInterval`]
/// per worker.
///
/// `Display` prints the one-line summary ([`schedtrace`](Self::schedtrace)).
///
/// ```
/// use dreadpool::ThreadPoolBuilder;
/// use dreadpool::metrics::Monitor;
///
/// let pool = ThreadPoolBuilder::new().with_threads(2).build();
/// let mut monitor = Monitor::new(&pool);
/// for _ in 0..1000 {
///     pool.spawn(|| ());
/// }
/// pool.join();
/// let interval = monitor.sample();
/// assert_eq!(interval.tasks_run, 1000);
/// assert!(interval.tasks_per_sec > 0.0);
/// assert_eq!(interval.workers.len(), 2);
///
/// // Nothing happened since: zero rates, not NaN.
/// let idle = monitor.sample();
/// assert_eq!(idle.tasks_run, 0);
/// assert_eq!(idle.steal_success_ratio, 0.0);
/// println!("{idle}"); // SCHED 3ms: threads=2 running=0 idle=2 ...
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Interval {
    /// The pool's name.
    pub name: String,
    /// Number of workers.
    pub threads: usize,
    /// The pool's uptime at the end of the interval.
    #[serde(rename = "uptime_ns", with = "nanos")]
    pub uptime: Duration,
    /// Length of the interval, on the pool's clock.
    #[serde(rename = "elapsed_ns", with = "nanos")]
    pub elapsed: Duration,
    /// True when the counters went backwards (a different or restarted pool
    /// behind the same source), so this interval is measured from zero.
    pub restarted: bool,
    /// Workers in each state at the end of the interval.
    pub states: StateCounts,
    /// Tasks in the global queue at the end of the interval.
    pub global_queue_depth: usize,
    /// Tasks queued or running at the end of the interval.
    pub tasks_pending: u64,
    /// Tasks spawned from outside the pool.
    pub tasks_spawned_external: u64,
    /// Tasks spawned from outside, per second.
    pub tasks_spawned_external_per_sec: f64,
    /// Tasks spawned by tasks into their worker's local queue.
    pub tasks_spawned_local: u64,
    /// Tasks finished, all workers.
    pub tasks_run: u64,
    /// Tasks finished per second.
    pub tasks_per_sec: f64,
    /// Tasks spawned from outside the pool that ran.
    pub global_pulls: u64,
    /// Steal attempts.
    pub steals_attempted: u64,
    /// Steal attempts per second.
    pub steals_attempted_per_sec: f64,
    /// Successful steals.
    pub steals_succeeded: u64,
    /// Successful steals per second.
    pub steals_succeeded_per_sec: f64,
    /// `steals_succeeded / steals_attempted`, 0 with no attempt.
    pub steal_success_ratio: f64,
    /// Tasks taken by steals.
    pub tasks_stolen: u64,
    /// Tasks stolen per second.
    pub tasks_stolen_per_sec: f64,
    /// Mean tasks per successful steal, 0 with none.
    pub mean_steal_batch: f64,
    /// Parks.
    pub sleeps: u64,
    /// Parks per second.
    pub sleeps_per_sec: f64,
    /// Registrations to sleep called off by the worker's second look: each
    /// took the idle list's lock twice and wrote the word every spawn reads,
    /// without a park to show for it.
    pub sleeps_cancelled: u64,
    /// Called-off sleeps per second.
    pub sleeps_cancelled_per_sec: f64,
    /// Looks at the global queue that found it empty: each read the lines
    /// that outside spawns write, and brought nothing.
    pub global_empty_polls: u64,
    /// Empty looks at the global queue per second.
    pub global_empty_polls_per_sec: f64,
    /// Wakeups that found work.
    pub wakeups: u64,
    /// Useful wakeups per second.
    pub wakeups_per_sec: f64,
    /// Wakeups that found nothing.
    pub noop_wakeups: u64,
    /// Useless wakeups per second.
    pub noop_wakeups_per_sec: f64,
    /// Worker threads replaced after a panic.
    pub respawns: u64,
    /// Task panics.
    pub panics: u64,
    /// [`join`](dreadpool_core::join)s forked, all workers.
    pub joins: u64,
    /// Joins forked per second.
    pub joins_per_sec: f64,
    /// Forks shared with idle workers.
    pub forks_shared: u64,
    /// Forks shared per second.
    pub forks_shared_per_sec: f64,
    /// Shared forks taken and run by a worker other than their owner.
    pub forks_stolen: u64,
    /// Forks stolen per second.
    pub forks_stolen_per_sec: f64,
    /// `forks_shared / joins`, 0 with no join: the share of joins whose
    /// fork was offered to idle workers (the rest ran inline for a few
    /// plain stores).
    pub fork_share_ratio: f64,
    /// Time spent running tasks, summed over workers.
    #[serde(rename = "busy_ns", with = "nanos")]
    pub busy: Duration,
    /// `busy / (elapsed * threads)`: 1.0 means every worker ran tasks the
    /// whole interval.
    pub busy_ratio: f64,
    /// Spawn-to-start delay of the tasks timed in this interval.
    pub schedule_delay: Quantiles,
    /// Run time of the tasks timed in this interval.
    pub run_time: Quantiles,
    /// Spawn-to-start delay of every task timed since the pool started.
    pub schedule_delay_total: Quantiles,
    /// Run time of every task timed since the pool started.
    pub run_time_total: Quantiles,
    /// Per worker, by index.
    pub workers: Vec<WorkerInterval>,
}

impl Interval {
    /// The interval from `before` (or the pool's start, with `None`) to
    /// `now`, without latency quantiles (the [`Monitor`](crate::Monitor)
    /// fills those in from its histograms).
    pub(crate) fn between(before: Option<&Snapshot>, now: &Snapshot) -> Self {
        let restarted = before.is_some_and(|b| went_backwards(b, now));
        let before = if restarted { None } else { before };
        let elapsed = now
            .uptime
            .saturating_sub(before.map_or(Duration::ZERO, |b| b.uptime));
        let workers: Vec<WorkerInterval> = now
            .workers
            .iter()
            .enumerate()
            .map(|(i, w)| {
                WorkerInterval::between(before.and_then(|b| b.workers.get(i)), w, elapsed)
            })
            .collect();
        let sum = |f: fn(&WorkerInterval) -> u64| workers.iter().map(f).sum::<u64>();
        let tasks_run = sum(|w| w.tasks_run);
        let steals_attempted = sum(|w| w.steals_attempted);
        let steals_succeeded = sum(|w| w.steals_succeeded);
        let tasks_stolen = sum(|w| w.tasks_stolen);
        let sleeps = sum(|w| w.sleeps);
        let sleeps_cancelled = sum(|w| w.sleeps_cancelled);
        let global_empty_polls = sum(|w| w.global_empty_polls);
        let wakeups = sum(|w| w.wakeups);
        let noop_wakeups = sum(|w| w.noop_wakeups);
        let joins = sum(|w| w.joins);
        let forks_shared = sum(|w| w.forks_shared);
        let forks_stolen = sum(|w| w.forks_stolen);
        let busy: Duration = workers.iter().map(|w| w.busy).sum();
        let tasks_spawned_external = now
            .tasks_spawned_external
            .saturating_sub(before.map_or(0, |b| b.tasks_spawned_external));
        let capacity = elapsed.as_secs_f64() * now.workers.len() as f64;
        Interval {
            name: now.name.clone(),
            threads: now.threads,
            uptime: now.uptime,
            elapsed,
            restarted,
            states: StateCounts::of(now.workers.iter().map(|w| w.state)),
            global_queue_depth: now.global_queue_depth,
            tasks_pending: now.tasks_pending,
            tasks_spawned_external,
            tasks_spawned_external_per_sec: per_sec(tasks_spawned_external, elapsed),
            tasks_spawned_local: sum(|w| w.tasks_spawned_local),
            tasks_run,
            tasks_per_sec: per_sec(tasks_run, elapsed),
            global_pulls: sum(|w| w.global_pulls),
            steals_attempted,
            steals_attempted_per_sec: per_sec(steals_attempted, elapsed),
            steals_succeeded,
            steals_succeeded_per_sec: per_sec(steals_succeeded, elapsed),
            steal_success_ratio: ratio(steals_succeeded as f64, steals_attempted as f64),
            tasks_stolen,
            tasks_stolen_per_sec: per_sec(tasks_stolen, elapsed),
            mean_steal_batch: ratio(tasks_stolen as f64, steals_succeeded as f64),
            sleeps,
            sleeps_per_sec: per_sec(sleeps, elapsed),
            sleeps_cancelled,
            sleeps_cancelled_per_sec: per_sec(sleeps_cancelled, elapsed),
            global_empty_polls,
            global_empty_polls_per_sec: per_sec(global_empty_polls, elapsed),
            wakeups,
            wakeups_per_sec: per_sec(wakeups, elapsed),
            noop_wakeups,
            noop_wakeups_per_sec: per_sec(noop_wakeups, elapsed),
            respawns: sum(|w| w.respawns),
            panics: now.panics.saturating_sub(before.map_or(0, |b| b.panics)),
            joins,
            joins_per_sec: per_sec(joins, elapsed),
            forks_shared,
            forks_shared_per_sec: per_sec(forks_shared, elapsed),
            forks_stolen,
            forks_stolen_per_sec: per_sec(forks_stolen, elapsed),
            fork_share_ratio: ratio(forks_shared as f64, joins as f64),
            busy,
            busy_ratio: ratio(busy.as_secs_f64(), capacity).clamp(0.0, 1.0),
            schedule_delay: Quantiles::default(),
            run_time: Quantiles::default(),
            schedule_delay_total: Quantiles::default(),
            run_time_total: Quantiles::default(),
            workers,
        }
    }

    /// The highest busy ratio of any worker (tokio-metrics' `max_*`).
    pub fn max_busy_ratio(&self) -> f64 {
        self.workers
            .iter()
            .map(|w| w.busy_ratio)
            .fold(0.0, f64::max)
    }

    /// The lowest busy ratio of any worker (0 with no worker).
    pub fn min_busy_ratio(&self) -> f64 {
        self.workers
            .iter()
            .map(|w| w.busy_ratio)
            .reduce(f64::min)
            .unwrap_or(0.0)
    }

    /// The interval's steal matrix: `matrix[thief][victim]` tasks stolen.
    pub fn steal_matrix(&self) -> Vec<Vec<u64>> {
        self.workers.iter().map(|w| w.stolen_from.clone()).collect()
    }

    /// The one-line summary in the spirit of Go's `GODEBUG=schedtrace`:
    ///
    /// ```text
    /// SCHED 1004ms: pool=dreadpool threads=4 running=2 idle=2 searching=0 pending=17 global=5 [3 0 9 0] tasks/s=1234 steals=12/40 busy=48% p99=120us
    /// ```
    ///
    /// The bracketed list is each worker's local queue depth; `idle` counts
    /// sleeping workers; `steals` is succeeded/attempted in the interval;
    /// `p99` is the interval's schedule delay. An interval with
    /// [`join`](dreadpool_core::join)s adds `joins/s=` and
    /// `forks=stolen/shared`, as one with panics or respawns adds those.
    ///
    /// ```text
    /// SCHED 1004ms: pool=dreadpool threads=4 ... busy=97% p99=12us joins/s=812345 forks=310/322
    /// ```
    pub fn schedtrace(&self) -> String {
        self.to_string()
    }
}

fn went_backwards(before: &Snapshot, now: &Snapshot) -> bool {
    now.uptime < before.uptime
        || now.tasks_spawned_external < before.tasks_spawned_external
        || now.tasks_run() < before.tasks_run()
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SCHED {}ms: pool={} threads={} running={} idle={} searching={} pending={} global={} [",
            self.uptime.as_millis(),
            self.name,
            self.threads,
            self.states.running,
            self.states.sleeping,
            self.states.searching,
            self.tasks_pending,
            self.global_queue_depth,
        )?;
        for (i, w) in self.workers.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{}", w.local_queue_depth)?;
        }
        write!(
            f,
            "] tasks/s={:.0} steals={}/{} busy={:.0}% p99={}",
            self.tasks_per_sec,
            self.steals_succeeded,
            self.steals_attempted,
            self.busy_ratio * 100.0,
            crate::report::short_duration(self.schedule_delay.p99),
        )?;
        if self.joins > 0 {
            write!(
                f,
                " joins/s={:.0} forks={}/{}",
                self.joins_per_sec, self.forks_stolen, self.forks_shared
            )?;
        }
        if self.respawns > 0 || self.panics > 0 {
            write!(f, " panics={} respawns={}", self.panics, self.respawns)?;
        }
        if self.states.respawning > 0 || self.states.stopped > 0 {
            write!(
                f,
                " respawning={} stopped={}",
                self.states.respawning, self.states.stopped
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worker(index: usize, tasks_run: u64, busy_ms: u64) -> WorkerSnapshot {
        WorkerSnapshot {
            index,
            tasks_run,
            busy_duration: Duration::from_millis(busy_ms),
            stolen_from: vec![0, 0],
            ..Default::default()
        }
    }

    fn snapshot(uptime_ms: u64, workers: Vec<WorkerSnapshot>) -> Snapshot {
        Snapshot {
            name: "t".into(),
            threads: workers.len(),
            uptime: Duration::from_millis(uptime_ms),
            workers,
            ..Default::default()
        }
    }

    #[test]
    fn rates_and_ratios_from_known_deltas() {
        let a = snapshot(1000, vec![worker(0, 100, 100), worker(1, 0, 0)]);
        let mut b = snapshot(3000, vec![worker(0, 300, 1100), worker(1, 100, 2000)]);
        b.workers[1].steals_attempted = 10;
        b.workers[1].steals_succeeded = 4;
        b.workers[1].tasks_stolen = 12;
        b.workers[1].stolen_from = vec![12, 0];
        let i = Interval::between(Some(&a), &b);
        assert_eq!(i.elapsed, Duration::from_secs(2));
        assert_eq!(i.tasks_run, 300);
        assert_eq!(i.tasks_per_sec, 150.0);
        assert_eq!(i.workers[0].tasks_per_sec, 100.0);
        assert_eq!(i.steals_attempted_per_sec, 5.0);
        assert_eq!(i.steal_success_ratio, 0.4);
        assert_eq!(i.mean_steal_batch, 3.0);
        assert_eq!(i.workers[0].busy_ratio, 0.5);
        assert_eq!(i.workers[1].busy_ratio, 1.0);
        assert_eq!(i.busy_ratio, 0.75);
        assert_eq!(i.steal_matrix(), vec![vec![0, 0], vec![12, 0]]);
        assert_eq!(i.max_busy_ratio(), 1.0);
        assert_eq!(i.min_busy_ratio(), 0.5);
        assert!(!i.restarted);
        // No join anywhere: zero rates, and the line says nothing of them.
        assert_eq!(i.joins_per_sec, 0.0);
        assert_eq!(i.fork_share_ratio, 0.0);
        assert!(!i.to_string().contains("joins"), "{i}");
    }

    #[test]
    fn join_and_fork_rates_per_worker_and_for_the_pool() {
        let mut a = snapshot(1000, vec![worker(0, 0, 0), worker(1, 0, 0)]);
        a.workers[0].joins = 1_000;
        a.workers[0].forks_shared = 10;
        a.workers[1].forks_stolen = 7;
        let mut b = snapshot(3000, vec![worker(0, 0, 0), worker(1, 0, 0)]);
        // Worker 0 forked 4000 joins in 2 s and shared 40 of their forks,
        // worker 1 stole 30 of them and forked 600 joins of its own, all
        // inline.
        b.workers[0].joins = 5_000;
        b.workers[0].forks_shared = 50;
        b.workers[0].forks_stolen = 2;
        b.workers[1].joins = 600;
        b.workers[1].forks_stolen = 37;
        let i = Interval::between(Some(&a), &b);
        let (w0, w1) = (&i.workers[0], &i.workers[1]);
        assert_eq!((w0.joins, w0.forks_shared, w0.forks_stolen), (4_000, 40, 2));
        assert_eq!((w1.joins, w1.forks_shared, w1.forks_stolen), (600, 0, 30));
        assert_eq!(w0.joins_per_sec, 2_000.0);
        assert_eq!(w0.forks_shared_per_sec, 20.0);
        assert_eq!(w0.forks_stolen_per_sec, 1.0);
        assert_eq!(w1.joins_per_sec, 300.0);
        assert_eq!(w1.forks_stolen_per_sec, 15.0);
        assert_eq!((i.joins, i.forks_shared, i.forks_stolen), (4_600, 40, 32));
        assert_eq!(i.joins_per_sec, 2_300.0);
        assert_eq!(i.forks_shared_per_sec, 20.0);
        assert_eq!(i.forks_stolen_per_sec, 16.0);
        assert_eq!(i.fork_share_ratio, 40.0 / 4_600.0);
        let line = i.to_string();
        assert!(line.contains(" joins/s=2300 forks=32/40"), "{line}");

        // From the pool's start, the totals are the rates' counts.
        let from_start = Interval::between(None, &b);
        assert_eq!(from_start.joins, 5_600);
        assert_eq!(from_start.forks_stolen, 39);
        assert_eq!(from_start.joins_per_sec, 5_600.0 / 3.0);

        // A snapshot from an exporter that predates fork-join has no such
        // fields: they read as 0, and the rates are 0, not NaN.
        let old: Snapshot = serde_json::from_str(
            r#"{"name":"t","threads":1,"uptime_ns":1000000000,"workers":[{"index":0,"tasks_run":5}]}"#,
        )
        .unwrap();
        let i = Interval::between(None, &old);
        assert_eq!(i.workers[0].joins, 0);
        assert_eq!(i.joins_per_sec, 0.0);
        assert_eq!(i.fork_share_ratio, 0.0);
    }

    /// Checks a counter that the interval reports as a count and a rate,
    /// per worker and for the pool: worker 0 counts 3 then 43 and worker 1
    /// 0 then 8 over 4 s, and an interval of no time reads a rate of 0.
    fn check_counted_rate(
        set: impl Fn(&mut WorkerSnapshot, u64),
        per_worker: impl Fn(&WorkerInterval) -> (u64, f64),
        pool: impl Fn(&Interval) -> (u64, f64),
    ) {
        let mut a = snapshot(1000, vec![worker(0, 0, 0), worker(1, 0, 0)]);
        set(&mut a.workers[0], 3);
        let mut b = snapshot(5000, vec![worker(0, 0, 0), worker(1, 0, 0)]);
        set(&mut b.workers[0], 43);
        set(&mut b.workers[1], 8);
        let i = Interval::between(Some(&a), &b);
        assert_eq!(per_worker(&i.workers[0]), (40, 10.0));
        assert_eq!(per_worker(&i.workers[1]), (8, 2.0));
        assert_eq!(pool(&i), (48, 12.0));
        assert_eq!(pool(&Interval::between(Some(&b), &b)).1, 0.0);
    }

    #[test]
    fn cancelled_sleeps_per_worker_and_for_the_pool() {
        check_counted_rate(
            |w, n| w.sleeps_cancelled = n,
            |w| (w.sleeps_cancelled, w.sleeps_cancelled_per_sec),
            |i| (i.sleeps_cancelled, i.sleeps_cancelled_per_sec),
        );
    }

    #[test]
    fn empty_global_polls_per_worker_and_for_the_pool() {
        check_counted_rate(
            |w, n| w.global_empty_polls = n,
            |w| (w.global_empty_polls, w.global_empty_polls_per_sec),
            |i| (i.global_empty_polls, i.global_empty_polls_per_sec),
        );
    }

    #[test]
    fn an_empty_interval_is_all_zeros() {
        let a = snapshot(1000, vec![worker(0, 5, 5)]);
        let i = Interval::between(Some(&a), &a);
        assert_eq!(i.elapsed, Duration::ZERO);
        let json = serde_json::to_string(&i).unwrap();
        assert!(!json.contains("NaN") && !json.contains("null"), "{json}");
        for x in [
            i.tasks_per_sec,
            i.steal_success_ratio,
            i.busy_ratio,
            i.mean_steal_batch,
            i.workers[0].busy_ratio,
            i.workers[0].steal_success_ratio,
            i.joins_per_sec,
            i.forks_stolen_per_sec,
            i.fork_share_ratio,
            i.workers[0].joins_per_sec,
            i.workers[0].forks_shared_per_sec,
        ] {
            assert_eq!(x, 0.0);
        }
        let none = Interval::between(None, &Snapshot::default());
        assert_eq!(none.busy_ratio, 0.0);
        assert_eq!(none.min_busy_ratio(), 0.0);
    }

    #[test]
    fn counters_going_backwards_restart_from_zero() {
        let a = snapshot(5000, vec![worker(0, 500, 0)]);
        let b = snapshot(1000, vec![worker(0, 10, 0)]);
        let i = Interval::between(Some(&a), &b);
        assert!(i.restarted);
        assert_eq!(i.tasks_run, 10);
        assert_eq!(i.elapsed, Duration::from_secs(1));
    }

    #[test]
    fn schedtrace_line() {
        let mut b = snapshot(1004, vec![worker(0, 0, 0), worker(1, 0, 0)]);
        b.workers[0].local_queue_depth = 3;
        b.workers[0].state = WorkerState::Running;
        b.global_queue_depth = 5;
        b.tasks_pending = 17;
        let line = Interval::between(None, &b).to_string();
        assert!(
            line.starts_with(
                "SCHED 1004ms: pool=t threads=2 running=1 idle=1 searching=0 pending=17 global=5 [3 0]"
            ),
            "{line}"
        );
    }
}
