//! What a recording below `Tasks` level still tells about waits. It has no
//! task identities, so no wait can be linked to its task; but the wake
//! calls and the wakes they caused are there (the *pool asleep* cause,
//! timed as the per-task rule times it), and so is how the workers drained
//! the queues.

use super::Nanos;
use crate::recorder::recording::{EventKind, Recording, Track, WorkerActivity};
use std::fmt;

/// What [`Recording::scheduler_summary`] finds: the part of the causes a
/// recording at any level can tell.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SchedulerSummary {
    /// Wake calls (`Unpark`) answered by the woken worker's `Wake`.
    pub wakes: usize,
    /// From a wake call to the woken worker's wake: the median.
    pub wake_p50_ns: u64,
    /// The same, 99th percentile.
    pub wake_p99_ns: u64,
    /// The same, the longest.
    pub wake_max_ns: u64,
    /// Times a worker went to sleep.
    pub sleeps: usize,
    /// Batches the workers pulled from the global queue.
    pub global_pulls: usize,
    /// Batches the workers stole from one another.
    pub steals: usize,
}

impl SchedulerSummary {
    /// The names of the causes ([`WaitCause::name`](super::WaitCause::name))
    /// that only a recording at `Tasks` level can tell: each needs to know
    /// which task waited, where it was queued, and what ran before it.
    pub const NEEDS_TASKS_LEVEL: [&'static str; 6] = [
        "behind a long task",
        "behind newer tasks",
        "no progress",
        "global queue starved",
        "every worker busy",
        "behind a backlog",
    ];
}

impl fmt::Display for SchedulerSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.wakes == 0 {
            write!(f, "pool asleep: no wake call answered in the recording")?;
        } else {
            write!(
                f,
                "pool asleep: {} {} took, from the wake call to the woken worker's wake, \
                 p50 {}, p99 {}, at most {}",
                self.wakes,
                if self.wakes == 1 { "wake" } else { "wakes" },
                Nanos(self.wake_p50_ns),
                Nanos(self.wake_p99_ns),
                Nanos(self.wake_max_ns)
            )?;
        }
        write!(
            f,
            "\nqueues: {} global pulls, {} steals between workers, {} sleeps",
            self.global_pulls, self.steals, self.sleeps
        )
    }
}

impl Recording {
    /// What this recording tells about waits without task identities: how
    /// long the pool's wakes took (the *pool asleep* cause of
    /// [`explain`](Self::explain), from each wake call to the woken
    /// worker's wake) and how the workers drained the queues. It works at
    /// any level, and is what remains to say about a recording that
    /// `explain` refuses for its level ([`SchedulerSummary::NEEDS_TASKS_LEVEL`]
    /// lists the causes that need `Tasks`).
    ///
    /// ```
    /// use dreadpool::{RecordLevel, ThreadPoolBuilder};
    ///
    /// let pool = ThreadPoolBuilder::new()
    ///     .with_threads(2)
    ///     .with_record_level(RecordLevel::Scheduler)
    ///     .build();
    /// pool.spawn(|| {});
    /// pool.join();
    /// let recording = pool.recording();
    /// assert!(recording.explain(5).is_err(), "no task identities");
    /// let summary = recording.scheduler_summary();
    /// assert!(summary.wake_p50_ns <= summary.wake_max_ns);
    /// ```
    pub fn scheduler_summary(&self) -> SchedulerSummary {
        let workers = self.worker_names.len();
        // Each worker's oldest wake call not yet answered by its wake.
        let mut pending: Vec<Option<u64>> = vec![None; workers];
        let mut delays: Vec<u64> = Vec::new();
        let mut summary = SchedulerSummary::default();
        for event in &self.events {
            match (event.kind, event.track) {
                (EventKind::Unpark { worker }, _) => {
                    if let Some(slot) = pending.get_mut(worker) {
                        slot.get_or_insert(event.time_ns);
                    }
                }
                (EventKind::Wake { .. }, Track::Worker(w)) => {
                    if let Some(called) = pending.get_mut(w).and_then(Option::take) {
                        delays.push(event.time_ns.saturating_sub(called));
                    }
                }
                (EventKind::State(WorkerActivity::Sleeping), _) => summary.sleeps += 1,
                (EventKind::GlobalPull { .. }, _) => summary.global_pulls += 1,
                (EventKind::Steal { .. }, _) => summary.steals += 1,
                _ => {}
            }
        }
        delays.sort_unstable();
        summary.wakes = delays.len();
        if let Some(&max) = delays.last() {
            let rank = |q: usize| delays[(delays.len() * q).div_ceil(100).saturating_sub(1)];
            summary.wake_p50_ns = rank(50);
            summary.wake_p99_ns = rank(99);
            summary.wake_max_ns = max;
        }
        summary
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recorder::level::RecordLevel;
    use crate::recorder::recording::RecordedEvent;

    fn at(time_ns: u64, track: Track, kind: EventKind) -> RecordedEvent {
        RecordedEvent {
            time_ns,
            track,
            kind,
        }
    }

    #[test]
    fn wakes_are_timed_from_each_workers_first_unanswered_wake_call() {
        use WorkerActivity::*;
        let events = vec![
            at(0, Track::Worker(0), EventKind::State(Sleeping)),
            at(0, Track::Worker(1), EventKind::State(Sleeping)),
            // A spawner wakes worker 1 twice before it runs: the first call
            // is the one the wake answers.
            at(1_000, Track::Outside(0), EventKind::Unpark { worker: 1 }),
            at(1_500, Track::Outside(0), EventKind::Unpark { worker: 1 }),
            at(4_000, Track::Worker(1), EventKind::Wake { handoff: false }),
            // Worker 1 wakes worker 0, which takes 20 us to run.
            at(5_000, Track::Worker(1), EventKind::Unpark { worker: 0 }),
            at(25_000, Track::Worker(0), EventKind::Wake { handoff: false }),
            // A wake nobody called for (a timed sleep ending) is not timed.
            at(30_000, Track::Worker(0), EventKind::Wake { handoff: false }),
            at(
                31_000,
                Track::Worker(0),
                EventKind::GlobalPull {
                    batch: 3,
                    local_depth: 2,
                },
            ),
            at(
                32_000,
                Track::Worker(1),
                EventKind::Steal {
                    victim: 0,
                    batch: 1,
                    local_depth: 0,
                },
            ),
        ];
        let recording = Recording::from_parts(
            "test".into(),
            RecordLevel::Scheduler,
            vec!["w0".into(), "w1".into()],
            vec!["main".into()],
            events,
            0,
            40_000,
        );
        let summary = recording.scheduler_summary();
        assert_eq!(
            summary,
            SchedulerSummary {
                wakes: 2,
                wake_p50_ns: 3_000,
                wake_p99_ns: 20_000,
                wake_max_ns: 20_000,
                sleeps: 2,
                global_pulls: 1,
                steals: 1,
            }
        );
        let text = summary.to_string();
        assert!(text.contains("2 wakes"), "{text}");
        assert!(text.contains("p99 20.0 us"), "{text}");
    }

    #[test]
    fn the_causes_that_need_tasks_level_are_every_cause_but_the_sleeping_pool() {
        use super::super::WaitCause;
        let every = [
            WaitCause::PoolAsleep { wake_ns: 0 },
            WaitCause::BehindLongTask {
                worker: 0,
                task: None,
                task_ns: 0,
                tasks_ahead: 0,
            },
            WaitCause::BehindNewerTasks {
                worker: 0,
                tasks_ahead: 0,
                busy_ns: 0,
            },
            WaitCause::NoProgress {
                worker: 0,
                gap_ns: 0,
            },
            WaitCause::GlobalQueueStarved {
                steals: 0,
                unpulled_ns: 0,
            },
            WaitCause::AllWorkersBusy,
            WaitCause::Backlog {
                tasks_ahead: 0,
                busy_ns: 0,
            },
        ];
        let needing: Vec<&str> = every
            .iter()
            .map(WaitCause::name)
            .filter(|name| *name != "pool asleep")
            .collect();
        assert_eq!(needing, SchedulerSummary::NEEDS_TASKS_LEVEL);
    }
}
