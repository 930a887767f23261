//! Which cause a wait had: the rules of the module docs, in order, read
//! off the workers' timelines around the wait.

use super::worker_line::WorkerLine;
use super::{TaskWait, WaitCause};
use crate::recorder::recording::{SpawnQueue, Track, WorkerActivity};

/// What the causes are read from.
pub(super) struct Context<'a> {
    pub(super) lines: &'a [WorkerLine],
    pub(super) wakes: &'a [u64],
    /// Times of the wake calls (`Unpark`), sorted.
    pub(super) unparks: &'a [u64],
    /// Every linked run as (started, spawned), sorted.
    pub(super) runs_with_spawns: &'a [(u64, u64)],
    pub(super) steals: &'a [u64],
    pub(super) pulls: &'a [u64],
}

/// How many of the sorted `times` fall within `(from, to)`.
fn count_in(times: &[u64], from: u64, to: u64) -> usize {
    let a = times.partition_point(|&t| t <= from);
    let b = times.partition_point(|&t| t < to);
    b.saturating_sub(a)
}

impl Context<'_> {
    /// How many tasks spawned before `from` started within `(from, to)`:
    /// the ones ahead of a task spawned at `from`.
    fn older_runs_in(&self, from: u64, to: u64) -> usize {
        let a = self.runs_with_spawns.partition_point(|&(s, _)| s <= from);
        let b = self.runs_with_spawns.partition_point(|&(s, _)| s < to);
        self.runs_with_spawns[a..b.max(a)]
            .iter()
            .filter(|&&(_, spawned)| spawned < from)
            .count()
    }

    /// The cause of `wait`: the first rule of the module docs that fits.
    pub(super) fn cause_of(&self, wait: &TaskWait) -> WaitCause {
        let (from, to) = (wait.spawned_ns, wait.started_ns);
        let delay = to.saturating_sub(from);
        let awake = self.lines.iter().any(|line| {
            matches!(
                line.activity_at(from),
                Some(WorkerActivity::Running | WorkerActivity::Searching)
            )
        });
        if !awake && self.lines.iter().any(|l| l.activity_at(from).is_some()) {
            // The wake is timed from the wake call (the spawner's unpark),
            // so that the OS's delay in running the woken thread counts:
            // on a loaded host that is most of it. Without an unpark in
            // the recording, from the worker's own wake.
            let first_in = |times: &[u64]| {
                times[times.partition_point(|&t| t < from)..]
                    .first()
                    .copied()
                    .filter(|&t| t <= to)
            };
            let woke = first_in(self.unparks)
                .or_else(|| first_in(self.wakes))
                .unwrap_or(from);
            return WaitCause::PoolAsleep {
                wake_ns: to.saturating_sub(woke),
            };
        }
        // The worker whose queue held the task: the spawner for a local
        // spawn, the inbox's owner; for the global queue, whoever ran it.
        let holder = match (wait.queue, wait.spawned_on) {
            (SpawnQueue::Local, Track::Worker(w)) => Some(w),
            (SpawnQueue::Inbox { worker }, _) => Some(worker),
            _ => None,
        };
        if let Some(worker) = holder {
            if let Some(line) = self.lines.get(worker) {
                let tasks_ahead = line.runs_in(from, to);
                if let Some((task, task_ns)) = line.longest_run_in(from, to) {
                    if task_ns * 2 >= delay && delay > 0 {
                        return WaitCause::BehindLongTask {
                            worker,
                            task,
                            task_ns,
                            tasks_ahead,
                        };
                    }
                }
                let busy_ns = line.busy_in(from, to);
                if tasks_ahead > 0 && busy_ns * 2 >= delay && delay > 0 {
                    return WaitCause::BehindNewerTasks {
                        worker,
                        tasks_ahead,
                        busy_ns,
                    };
                }
                let gap_ns = line.longest_silence_in(from, to);
                if gap_ns * 2 >= delay && delay > 0 {
                    return WaitCause::NoProgress { worker, gap_ns };
                }
            }
        }
        if wait.queue == SpawnQueue::Global && delay > 0 {
            // Until the first pull after the spawn, the task sat in the
            // queue untouched. That pull is usually the one that took it,
            // so it is not asked to be missing: only to be late.
            let first_pull = self.pulls[self.pulls.partition_point(|&t| t <= from)..]
                .first()
                .copied()
                .filter(|&t| t < to)
                .unwrap_or(to);
            let unpulled_ns = first_pull - from;
            let steals = count_in(self.steals, from, first_pull);
            if steals > 0 && unpulled_ns * 2 >= delay {
                return WaitCause::GlobalQueueStarved {
                    steals,
                    unpulled_ns,
                };
            }
        }
        let all_busy = !self.lines.is_empty()
            && self.lines.iter().all(|line| {
                line.activity_at(from) == Some(WorkerActivity::Running)
                    && !line.changed_state_in(from, to)
            });
        if all_busy {
            return WaitCause::AllWorkersBusy;
        }
        if delay > 0 {
            let tasks_ahead = self.older_runs_in(from, to);
            let busy_ns: u64 = self.lines.iter().map(|l| l.busy_in(from, to)).sum();
            if tasks_ahead > 0 && busy_ns * 2 >= delay {
                return WaitCause::Backlog {
                    tasks_ahead,
                    busy_ns,
                };
            }
        }
        WaitCause::Unexplained
    }
}
