//! Turns one pool's snapshots into the model's samples, filling in what an `Interval` lacks.

use crate::state::sample::{PoolSample, Quantiles, WorkerSample, WorkerStatus, WorkerTotals};
use dreadpool_metrics as metrics;
use metrics::{Interval, Monitor, Report, Snapshot, WorkerState};

fn quantiles(q: &metrics::Quantiles) -> Quantiles {
    Quantiles {
        count: q.count,
        p50: q.p50,
        p90: q.p90,
        p99: q.p99,
        p999: q.p999,
        max: q.max,
    }
}

fn status(state: WorkerState) -> WorkerStatus {
    WorkerStatus::from_name(state.as_str())
}

/// Turns consecutive snapshots of one pool into samples.
#[derive(Debug)]
pub struct PoolFeed {
    monitor: Monitor,
    last: Option<Snapshot>,
}

impl Default for PoolFeed {
    fn default() -> Self {
        PoolFeed::new()
    }
}

impl PoolFeed {
    /// A feed with no snapshot yet.
    pub fn new() -> Self {
        PoolFeed {
            monitor: Monitor::detached(),
            last: None,
        }
    }

    /// Takes the next snapshot; returns the interval since the previous one.
    pub fn observe(&mut self, snapshot: Snapshot) -> PoolSample {
        let interval = self.monitor.observe(snapshot.clone());
        let before = if interval.restarted {
            None
        } else {
            self.last.as_ref()
        };
        let sample = to_sample(&interval, before, &snapshot);
        self.last = Some(snapshot);
        sample
    }

    /// Everything observed so far.
    pub fn report(&self) -> Report {
        self.monitor.report()
    }
}

/// The model's view of `interval`, completed from the snapshots it spans.
pub fn to_sample(interval: &Interval, before: Option<&Snapshot>, now: &Snapshot) -> PoolSample {
    let workers = interval
        .workers
        .iter()
        .map(|w| {
            let snap = now.workers.iter().find(|s| s.index == w.index);
            let prev = before.and_then(|b| b.workers.iter().find(|s| s.index == w.index));
            let latency = |f: fn(&metrics::WorkerSnapshot) -> &metrics::HistogramSnapshot| {
                let Some(snap) = snap else {
                    return Quantiles::default();
                };
                let delta = match prev {
                    Some(prev) => f(snap).since(f(prev)),
                    None => f(snap).clone(),
                };
                quantiles(&metrics::Quantiles::of(&delta))
            };
            let totals = snap.map_or_else(WorkerTotals::default, |s| WorkerTotals {
                tasks_run: s.tasks_run,
                steals_attempted: s.steals_attempted,
                steals_succeeded: s.steals_succeeded,
                tasks_stolen: s.tasks_stolen,
                sleeps: s.sleeps,
                sleeps_cancelled: s.sleeps_cancelled,
                wakeups: s.wakeups,
                noop_wakeups: s.noop_wakeups,
                respawns: s.respawns,
                panics: s.panics,
                joins: s.joins,
                forks_shared: s.forks_shared,
                forks_stolen: s.forks_stolen,
            });
            WorkerSample {
                index: w.index,
                state: Some(status(w.state)),
                local_queue_depth: w.local_queue_depth,
                tasks_per_sec: w.tasks_per_sec,
                steals_attempted_per_sec: w.steals_attempted_per_sec,
                steals_succeeded_per_sec: w.steals_succeeded_per_sec,
                steal_success_ratio: (w.steals_attempted > 0).then_some(w.steal_success_ratio),
                tasks_stolen_per_sec: w.tasks_stolen_per_sec,
                sleeps_per_sec: w.sleeps_per_sec,
                sleeps_cancelled_per_sec: w.sleeps_cancelled_per_sec,
                wakeups_per_sec: w.wakeups_per_sec,
                noop_wakeups_per_sec: w.noop_wakeups_per_sec,
                joins_per_sec: w.joins_per_sec,
                forks_shared_per_sec: w.forks_shared_per_sec,
                forks_stolen_per_sec: w.forks_stolen_per_sec,
                busy_ratio: w.busy_ratio,
                stolen_from: w.stolen_from.clone(),
                totals,
                schedule_delay: latency(|s| &s.schedule_delay),
                run_time: latency(|s| &s.run_time),
            }
        })
        .collect::<Vec<_>>();
    PoolSample {
        name: interval.name.clone(),
        threads: interval.threads,
        uptime: interval.uptime,
        elapsed: interval.elapsed,
        tasks_per_sec: interval.tasks_per_sec,
        tasks_run: now.tasks_run(),
        global_queue_depth: interval.global_queue_depth,
        pending: interval.tasks_pending,
        panics: now.panics,
        respawns: now.workers.iter().map(|w| w.respawns).sum(),
        busy_ratio: interval.busy_ratio,
        steals_attempted_per_sec: interval.steals_attempted_per_sec,
        steals_succeeded_per_sec: interval.steals_succeeded_per_sec,
        tasks_stolen_per_sec: interval.tasks_stolen_per_sec,
        sleeps_per_sec: interval.sleeps_per_sec,
        wakeups_per_sec: interval.wakeups_per_sec,
        noop_wakeups_per_sec: interval.noop_wakeups_per_sec,
        joins_per_sec: interval.joins_per_sec,
        schedule_delay: quantiles(&interval.schedule_delay),
        run_time: quantiles(&interval.run_time),
        schedule_delay_total: quantiles(&interval.schedule_delay_total),
        run_time_total: quantiles(&interval.run_time_total),
        workers,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dreadpool_core::ThreadPoolBuilder;

    #[test]
    fn a_feed_turns_snapshots_into_samples_with_totals_and_worker_latency() {
        let pool = ThreadPoolBuilder::new()
            .with_threads(2)
            .with_latency_sampling(1)
            .build();
        let mut feed = PoolFeed::new();
        feed.observe(Snapshot::from(&pool.metrics()));
        for _ in 0..500 {
            pool.spawn(|| std::hint::black_box(()));
        }
        pool.join();
        let after = pool.metrics();
        let sample = feed.observe(Snapshot::from(&after));
        assert_eq!(sample.workers.len(), 2);
        assert_eq!(sample.tasks_run, 500);
        let run: u64 = sample.workers.iter().map(|w| w.totals.tasks_run).sum();
        assert_eq!(run, 500);
        let timed: u64 = sample.workers.iter().map(|w| w.run_time.count).sum();
        assert_eq!(timed, 500);
        assert!(sample.tasks_per_sec > 0.0);
        // The same counters a second later: an interval in which nothing
        // happened. Not a fresh snapshot: a worker woken during the spawns
        // may get its CPU only after `join` returned, and its search then
        // counts steal attempts in the interval (seen on a loaded host).
        let mut later = after.clone();
        later.uptime += std::time::Duration::from_secs(1);
        let idle = feed.observe(Snapshot::from(&later));
        assert_eq!(idle.tasks_per_sec, 0.0);
        assert!(idle.workers.iter().all(|w| w.steal_success_ratio.is_none()));
        assert_eq!(
            idle.workers.iter().map(|w| w.run_time.count).sum::<u64>(),
            0
        );
    }
}
