//! Why tasks waited: a recording's schedule delays (spawn to start), each
//! with its cause, worst first, and totals by cause ([`Recording::explain`]).
//!
//! Every cause is read off the events around one wait, in this order (the
//! first that fits is the one given):
//!
//! 1. **The pool was asleep** at the spawn: no worker running or
//!    searching; the wait is the wake's (the first wake after the spawn).
//! 2. **Behind a long task**: the task waited in a worker's queue (a local
//!    spawn) while that worker ran one task for at least half the wait.
//!    **Behind newer tasks**: no one task was that long, but the worker
//!    ran tasks for at least half the wait (a worker runs its own queue
//!    newest first, so an older task waits behind those spawned after it).
//! 3. **No progress**: a worker whose queue held the task was running with
//!    no event at all for at least half the wait, and not inside a task it
//!    had begun: likely descheduled by the OS, or blocked between tasks.
//! 4. **Starved in the global queue**: spawned from outside, and while it
//!    waited the workers stole from one another but pulled nothing from
//!    the global queue.
//! 5. **Every worker busy**: every worker was running for the whole wait.
//!
//! Only a recording at [`RecordLevel::Tasks`] links spawns to runs; at
//! `Scheduler` level there is no task to explain ([`ExplainError`]).

use super::level::RecordLevel;
use super::recording::{EventKind, Recording, SpawnQueue, Track, WorkerActivity};
use std::collections::HashMap;
use std::fmt;

/// Why a task waited to start. See the module docs for how each is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WaitCause {
    /// No worker was running or searching when the task was spawned: the
    /// wait is the pool's wake, `wake_ns` from the first wake after the
    /// spawn to the task's start.
    PoolAsleep {
        /// From the first wake after the spawn to the task's start.
        wake_ns: u64,
    },
    /// Queued on `worker` while it ran one task for `task_ns`, with
    /// `tasks_ahead` other tasks started there before this one.
    BehindLongTask {
        /// The worker whose queue held the task.
        worker: usize,
        /// The long task's identity, if the recording has its start.
        task: Option<u64>,
        /// How long that task ran during the wait.
        task_ns: u64,
        /// Tasks that worker started during the wait, before this one.
        tasks_ahead: usize,
    },
    /// Queued on `worker` while it ran `tasks_ahead` other tasks for
    /// `busy_ns` in all, none of them long: a worker runs its own queue
    /// newest first, so an older task waits behind newer ones.
    BehindNewerTasks {
        /// The worker whose queue held the task.
        worker: usize,
        /// Tasks that worker started during the wait, before this one.
        tasks_ahead: usize,
        /// How long it ran tasks during the wait.
        busy_ns: u64,
    },
    /// `worker` was running but recorded nothing for `gap_ns`, not inside a
    /// task it had begun: descheduled, or blocked between tasks.
    NoProgress {
        /// The silent worker.
        worker: usize,
        /// The longest silence during the wait.
        gap_ns: u64,
    },
    /// Spawned from outside, and waited in the global queue while workers
    /// stole `steals` times from one another and pulled nothing from it.
    GlobalQueueStarved {
        /// Steals between workers during the wait.
        steals: usize,
    },
    /// Every worker was running for the whole wait.
    AllWorkersBusy,
    /// None of the above fits.
    Unexplained,
}

impl WaitCause {
    /// A short name, for tables and JSON.
    pub fn name(&self) -> &'static str {
        match self {
            WaitCause::PoolAsleep { .. } => "pool asleep",
            WaitCause::BehindLongTask { .. } => "behind a long task",
            WaitCause::BehindNewerTasks { .. } => "behind newer tasks",
            WaitCause::NoProgress { .. } => "no progress",
            WaitCause::GlobalQueueStarved { .. } => "global queue starved",
            WaitCause::AllWorkersBusy => "every worker busy",
            WaitCause::Unexplained => "unexplained",
        }
    }
}

impl fmt::Display for WaitCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            WaitCause::PoolAsleep { wake_ns } => {
                write!(f, "the pool was asleep: the wake took {}", Nanos(wake_ns))
            }
            WaitCause::BehindLongTask {
                worker,
                task_ns,
                tasks_ahead,
                ..
            } => write!(
                f,
                "queued behind {tasks_ahead} tasks on worker {worker} while it ran one task for {}",
                Nanos(task_ns)
            ),
            WaitCause::BehindNewerTasks {
                worker,
                tasks_ahead,
                busy_ns,
            } => write!(
                f,
                "queued on worker {worker} behind {tasks_ahead} newer tasks (it runs its own queue \
                 newest first), which kept it busy for {}",
                Nanos(busy_ns)
            ),
            WaitCause::NoProgress { worker, gap_ns } => write!(
                f,
                "worker {worker} showed no progress for {} (descheduled, or blocked between tasks)",
                Nanos(gap_ns)
            ),
            WaitCause::GlobalQueueStarved { steals } => write!(
                f,
                "waited in the global queue while workers stole from one another ({steals} steals)"
            ),
            WaitCause::AllWorkersBusy => write!(f, "every worker was busy"),
            WaitCause::Unexplained => write!(f, "no cause could be told"),
        }
    }
}

/// One task's wait: its spawn, its start, and why it took as long as it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskWait {
    /// The task's identity (`EventKind::Spawn::task`).
    pub task: u64,
    /// Where it was spawned.
    pub spawned_on: Track,
    /// Where it was queued.
    pub queue: SpawnQueue,
    /// When it was spawned (the recording's clock).
    pub spawned_ns: u64,
    /// The worker that ran it.
    pub ran_on: usize,
    /// When it started.
    pub started_ns: u64,
    /// Why it waited.
    pub cause: WaitCause,
}

impl TaskWait {
    /// Its schedule delay: from spawn to start.
    pub fn delay_ns(&self) -> u64 {
        self.started_ns.saturating_sub(self.spawned_ns)
    }
}

/// The waits of one cause, added up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CauseTotal {
    /// The cause's name ([`WaitCause::name`]).
    pub cause: &'static str,
    /// How many waits had it.
    pub waits: usize,
    /// Their delays added up.
    pub total_ns: u64,
    /// The 99th percentile of their delays.
    pub p99_ns: u64,
}

/// What [`Recording::explain`] found.
#[derive(Debug, Clone)]
pub struct Explanation {
    /// The longest waits, longest first, each with its cause.
    pub worst: Vec<TaskWait>,
    /// Every explained wait's cause, added up, largest total first.
    pub by_cause: Vec<CauseTotal>,
    /// Tasks whose spawn and start are both in the recording.
    pub tasks: usize,
    /// Tasks started whose spawn fell out of the rings (their waits are
    /// unknown).
    pub spawns_missing: usize,
}

/// Why a recording cannot be explained.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExplainError {
    /// The recording was taken below [`RecordLevel::Tasks`]: it has no task
    /// identities, so no spawn can be linked to its run.
    #[error(
        "the recording is at {0:?} level; explaining waits needs RecordLevel::Tasks, \
         which links each spawn to its run"
    )]
    NeedsTasksLevel(RecordLevel),
}

/// A duration for people: ns, us, ms or s.
struct Nanos(u64);

impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0 as f64;
        if ns < 1e3 {
            write!(f, "{ns:.0} ns")
        } else if ns < 1e6 {
            write!(f, "{:.1} us", ns / 1e3)
        } else if ns < 1e9 {
            write!(f, "{:.1} ms", ns / 1e6)
        } else {
            write!(f, "{:.2} s", ns / 1e9)
        }
    }
}

/// One worker's timeline, as the causes need it.
#[derive(Default)]
struct WorkerLine {
    /// Times of every event on the worker's track.
    times: Vec<u64>,
    /// `State` changes: (time, activity).
    states: Vec<(u64, WorkerActivity)>,
    /// Task starts: (time, task).
    runs: Vec<(u64, Option<u64>)>,
    /// The events that end a task's run (the recorder records no end for
    /// a run that returns: it ends at the worker's next task start, state
    /// change, wait or panic), with whether each is itself a task start.
    boundaries: Vec<(u64, bool)>,
}

impl WorkerLine {
    /// The worker's activity at `t` (its last state change at or before),
    /// `None` if the recording has none by then.
    fn activity_at(&self, t: u64) -> Option<WorkerActivity> {
        let i = self.states.partition_point(|&(at, _)| at <= t);
        i.checked_sub(1).map(|i| self.states[i].1)
    }

    /// Whether it changed state during `(from, to)`.
    fn changed_state_in(&self, from: u64, to: u64) -> bool {
        let i = self.states.partition_point(|&(at, _)| at <= from);
        self.states.get(i).is_some_and(|&(at, _)| at < to)
    }

    /// The longest time its tasks ran within `[from, to)`: a task runs from
    /// its start to the next boundary. Returns that task and time.
    fn longest_run_in(&self, from: u64, to: u64) -> Option<(Option<u64>, u64)> {
        let mut best: Option<(Option<u64>, u64)> = None;
        // The run in progress at `from` counts too.
        let first = self
            .runs
            .partition_point(|&(at, _)| at <= from)
            .saturating_sub(1);
        for &(begin, task) in self.runs.get(first..).unwrap_or_default() {
            if begin >= to {
                break;
            }
            let next = self.run_end_after(begin).unwrap_or(to);
            let ran = next.min(to).saturating_sub(begin.max(from));
            if best.is_none_or(|(_, b)| ran > b) {
                best = Some((task, ran));
            }
        }
        best
    }

    /// How long its tasks ran within `[from, to)`, in all.
    fn busy_in(&self, from: u64, to: u64) -> u64 {
        let first = self
            .runs
            .partition_point(|&(at, _)| at <= from)
            .saturating_sub(1);
        let mut busy = 0;
        for &(begin, _) in self.runs.get(first..).unwrap_or_default() {
            if begin >= to {
                break;
            }
            let end = self.run_end_after(begin).unwrap_or(to);
            busy += end.min(to).saturating_sub(begin.max(from));
        }
        busy
    }

    /// Task starts within `(from, to)`.
    fn runs_in(&self, from: u64, to: u64) -> usize {
        let a = self.runs.partition_point(|&(at, _)| at <= from);
        let b = self.runs.partition_point(|&(at, _)| at < to);
        b.saturating_sub(a)
    }

    /// When the run begun at `begin` ended: the first boundary after it.
    fn run_end_after(&self, begin: u64) -> Option<u64> {
        let i = self.boundaries.partition_point(|&(at, _)| at <= begin);
        self.boundaries.get(i).map(|&(at, _)| at)
    }

    /// Whether the worker was inside a task's run at `t` (its last boundary
    /// at or before `t` is a task start).
    fn in_run_at(&self, t: u64) -> bool {
        let i = self.boundaries.partition_point(|&(at, _)| at <= t);
        i.checked_sub(1).is_some_and(|i| self.boundaries[i].1)
    }

    /// Its longest silence within `[from, to)` outside its tasks' runs: no
    /// event at all, while not inside a task it began.
    fn longest_silence_in(&self, from: u64, to: u64) -> u64 {
        let mut longest = 0;
        let start = self
            .times
            .partition_point(|&at| at <= from)
            .saturating_sub(1);
        let mut previous = self.times.get(start).copied().unwrap_or(from).max(from);
        for &at in self.times.get(start + 1..).unwrap_or_default() {
            let at = at.min(to);
            if !self.in_run_at(previous) {
                longest = longest.max(at.saturating_sub(previous));
            }
            if at >= to {
                break;
            }
            previous = at;
        }
        longest
    }
}

impl Recording {
    /// The `top` longest schedule delays in the recording (spawn to start),
    /// each with its cause, and the totals of every wait by cause.
    ///
    /// ```
    /// use dreadpool::{RecordLevel, ThreadPoolBuilder};
    ///
    /// let pool = ThreadPoolBuilder::new()
    ///     .with_threads(2)
    ///     .with_record_level(RecordLevel::Tasks)
    ///     .build();
    /// for _ in 0..100 {
    ///     pool.spawn(|| {});
    /// }
    /// pool.join();
    /// let explanation = pool.recording().explain(5)?;
    /// for wait in &explanation.worst {
    ///     println!("task {} waited {} ns: {}", wait.task, wait.delay_ns(), wait.cause);
    /// }
    /// # Ok::<(), dreadpool::ExplainError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ExplainError::NeedsTasksLevel`] for a recording taken below
    /// [`RecordLevel::Tasks`].
    pub fn explain(&self, top: usize) -> Result<Explanation, ExplainError> {
        if self.level < RecordLevel::Tasks {
            return Err(ExplainError::NeedsTasksLevel(self.level));
        }
        let workers = self.worker_names.len();
        let mut lines: Vec<WorkerLine> = (0..workers).map(|_| WorkerLine::default()).collect();
        let mut spawns: HashMap<u64, (u64, Track, SpawnQueue)> = HashMap::new();
        let mut starts: Vec<(u64, usize, u64)> = Vec::new();
        let mut wakes: Vec<u64> = Vec::new();
        let mut steals: Vec<u64> = Vec::new();
        let mut pulls: Vec<u64> = Vec::new();
        for event in &self.events {
            if let Track::Worker(w) = event.track {
                if let Some(line) = lines.get_mut(w) {
                    line.times.push(event.time_ns);
                    match event.kind {
                        EventKind::State(activity) => {
                            line.states.push((event.time_ns, activity));
                            line.boundaries.push((event.time_ns, false));
                        }
                        EventKind::RunBegin { task } => {
                            line.runs.push((event.time_ns, task));
                            line.boundaries.push((event.time_ns, true));
                        }
                        EventKind::RunEnd { .. }
                        | EventKind::WaitBegin
                        | EventKind::WaitEnd
                        | EventKind::Panic { .. }
                        | EventKind::Respawn => line.boundaries.push((event.time_ns, false)),
                        _ => {}
                    }
                }
            }
            match (event.kind, event.track) {
                (EventKind::Spawn { task, queue, .. }, track) => {
                    spawns.insert(task, (event.time_ns, track, queue));
                }
                (EventKind::RunBegin { task: Some(task) }, Track::Worker(w)) => {
                    starts.push((task, w, event.time_ns));
                }
                (EventKind::Wake { .. }, _) => wakes.push(event.time_ns),
                (EventKind::Steal { .. }, _) => steals.push(event.time_ns),
                (EventKind::GlobalPull { .. }, _) => pulls.push(event.time_ns),
                _ => {}
            }
        }
        let context = Context {
            lines: &lines,
            wakes: &wakes,
            steals: &steals,
            pulls: &pulls,
        };
        let mut waits = Vec::with_capacity(starts.len());
        let mut spawns_missing = 0;
        for (task, ran_on, started_ns) in starts {
            let Some(&(spawned_ns, spawned_on, queue)) = spawns.get(&task) else {
                spawns_missing += 1;
                continue;
            };
            let mut wait = TaskWait {
                task,
                spawned_on,
                queue,
                spawned_ns,
                ran_on,
                started_ns,
                cause: WaitCause::Unexplained,
            };
            wait.cause = context.cause_of(&wait);
            waits.push(wait);
        }
        let tasks = waits.len();
        let by_cause = totals(&waits);
        waits.sort_by_key(|w| std::cmp::Reverse(w.delay_ns()));
        waits.truncate(top);
        Ok(Explanation {
            worst: waits,
            by_cause,
            tasks,
            spawns_missing,
        })
    }
}

/// What the causes are read from.
struct Context<'a> {
    lines: &'a [WorkerLine],
    wakes: &'a [u64],
    steals: &'a [u64],
    pulls: &'a [u64],
}

/// How many of the sorted `times` fall within `(from, to)`.
fn count_in(times: &[u64], from: u64, to: u64) -> usize {
    let a = times.partition_point(|&t| t <= from);
    let b = times.partition_point(|&t| t < to);
    b.saturating_sub(a)
}

impl Context<'_> {
    fn cause_of(&self, wait: &TaskWait) -> WaitCause {
        let (from, to) = (wait.spawned_ns, wait.started_ns);
        let delay = to.saturating_sub(from);
        let awake = self.lines.iter().any(|line| {
            matches!(
                line.activity_at(from),
                Some(WorkerActivity::Running | WorkerActivity::Searching)
            )
        });
        if !awake && self.lines.iter().any(|l| l.activity_at(from).is_some()) {
            let woke = self.wakes[self.wakes.partition_point(|&t| t <= from)..]
                .first()
                .copied()
                .filter(|&t| t <= to)
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
        if wait.queue == SpawnQueue::Global {
            let stolen = count_in(self.steals, from, to);
            if stolen > 0 && count_in(self.pulls, from, to) == 0 {
                return WaitCause::GlobalQueueStarved { steals: stolen };
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
        WaitCause::Unexplained
    }
}

/// Every wait's cause, added up, largest total first.
fn totals(waits: &[TaskWait]) -> Vec<CauseTotal> {
    let mut by_cause: HashMap<&'static str, Vec<u64>> = HashMap::new();
    for wait in waits {
        by_cause
            .entry(wait.cause.name())
            .or_default()
            .push(wait.delay_ns());
    }
    let mut totals: Vec<CauseTotal> = by_cause
        .into_iter()
        .map(|(cause, mut delays)| {
            delays.sort_unstable();
            let p99 = delays[(delays.len() * 99).div_ceil(100).saturating_sub(1)];
            CauseTotal {
                cause,
                waits: delays.len(),
                total_ns: delays.iter().sum(),
                p99_ns: p99,
            }
        })
        .collect();
    totals.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.cause.cmp(b.cause)));
    totals
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recorder::recording::RecordedEvent;

    fn at(time_ns: u64, track: Track, kind: EventKind) -> RecordedEvent {
        RecordedEvent {
            time_ns,
            track,
            kind,
        }
    }

    fn state(time_ns: u64, worker: usize, activity: WorkerActivity) -> RecordedEvent {
        at(time_ns, Track::Worker(worker), EventKind::State(activity))
    }

    fn spawn(time_ns: u64, track: Track, task: u64, queue: SpawnQueue) -> RecordedEvent {
        at(
            time_ns,
            track,
            EventKind::Spawn {
                task,
                queue,
                within_ns: 0,
            },
        )
    }

    fn run(time_ns: u64, worker: usize, task: u64) -> RecordedEvent {
        at(
            time_ns,
            Track::Worker(worker),
            EventKind::RunBegin { task: Some(task) },
        )
    }

    fn recording(workers: usize, events: Vec<RecordedEvent>) -> Recording {
        Recording::from_parts(
            "test".into(),
            RecordLevel::Tasks,
            (0..workers).map(|i| format!("w{i}")).collect(),
            vec!["main".into()],
            events,
            0,
            1_000_000_000,
        )
    }

    fn cause_of(recording: &Recording, task: u64) -> WaitCause {
        let explanation = recording.explain(usize::MAX).expect("at Tasks level");
        explanation
            .worst
            .iter()
            .find(|w| w.task == task)
            .unwrap_or_else(|| panic!("task {task} not explained"))
            .cause
    }

    #[test]
    fn a_task_queued_behind_a_long_task_on_its_worker() {
        use WorkerActivity::*;
        let events = vec![
            state(0, 0, Running),
            state(0, 1, Running),
            run(100, 0, 1),
            // Task 1 spawns task 2 into worker 0's queue, then runs for 10 ms.
            spawn(200, Track::Worker(0), 2, SpawnQueue::Local),
            run(10_000_100, 0, 2),
            // Worker 1 is busy with short tasks meanwhile.
            run(150, 1, 3),
            run(300, 1, 4),
            state(5_000_000, 1, Searching),
            state(5_000_100, 1, Sleeping),
        ];
        let cause = cause_of(&recording(2, events), 2);
        assert_eq!(
            cause,
            WaitCause::BehindLongTask {
                worker: 0,
                task: Some(1),
                task_ns: 9_999_900,
                tasks_ahead: 0,
            }
        );
    }

    #[test]
    fn an_older_task_waits_behind_the_newer_ones_its_worker_runs_first() {
        use WorkerActivity::*;
        let mut events = vec![
            state(0, 0, Running),
            state(0, 1, Sleeping),
            run(50, 0, 100),
            spawn(100, Track::Worker(0), 1, SpawnQueue::Local),
        ];
        // Ten newer tasks, a millisecond each, run first on worker 0.
        for k in 0..10u64 {
            events.push(run(1_000 + 1_000_000 * k, 0, 10 + k));
        }
        events.push(run(10_001_000, 0, 1));
        let cause = cause_of(&recording(2, events), 1);
        assert_eq!(
            cause,
            WaitCause::BehindNewerTasks {
                worker: 0,
                tasks_ahead: 10,
                busy_ns: 10_000_900,
            }
        );
    }

    #[test]
    fn a_task_spawned_into_a_sleeping_pool_waits_for_the_wake() {
        use WorkerActivity::*;
        let events = vec![
            state(0, 0, Sleeping),
            state(0, 1, Sleeping),
            spawn(1_000, Track::Outside(0), 7, SpawnQueue::Global),
            at(1_500, Track::Outside(0), EventKind::Unpark { worker: 1 }),
            at(60_000, Track::Worker(1), EventKind::Wake { handoff: false }),
            state(60_000, 1, Searching),
            state(61_000, 1, Running),
            run(61_000, 1, 7),
        ];
        assert_eq!(
            cause_of(&recording(2, events), 7),
            WaitCause::PoolAsleep { wake_ns: 1_000 }
        );
    }

    #[test]
    fn a_task_in_the_global_queue_while_workers_steal_from_each_other() {
        use WorkerActivity::*;
        let steal = |t, w, victim| {
            at(
                t,
                Track::Worker(w),
                EventKind::Steal {
                    victim,
                    batch: 4,
                    local_depth: 3,
                },
            )
        };
        let events = vec![
            state(0, 0, Running),
            state(0, 1, Running),
            state(0, 2, Running),
            spawn(1_000, Track::Outside(0), 9, SpawnQueue::Global),
            run(1_100, 0, 20),
            steal(2_000, 1, 0),
            run(2_000, 1, 21),
            steal(3_000, 2, 1),
            run(3_000, 2, 22),
            run(4_000, 0, 23),
            at(
                50_000,
                Track::Worker(2),
                EventKind::GlobalPull {
                    batch: 1,
                    local_depth: 0,
                },
            ),
            run(50_000, 2, 9),
        ];
        assert_eq!(
            cause_of(&recording(3, events), 9),
            WaitCause::GlobalQueueStarved { steals: 2 }
        );
    }

    #[test]
    fn a_task_waits_while_every_worker_is_busy() {
        use WorkerActivity::*;
        let events = vec![
            state(0, 0, Running),
            state(0, 1, Running),
            run(10, 0, 30),
            run(20, 1, 31),
            spawn(1_000, Track::Outside(0), 32, SpawnQueue::Global),
            run(3_000, 0, 33),
            run(4_000, 1, 34),
            at(
                9_000,
                Track::Worker(0),
                EventKind::GlobalPull {
                    batch: 1,
                    local_depth: 0,
                },
            ),
            run(9_000, 0, 32),
        ];
        assert_eq!(
            cause_of(&recording(2, events), 32),
            WaitCause::AllWorkersBusy
        );
    }

    #[test]
    fn a_silent_running_worker_is_no_progress() {
        use WorkerActivity::*;
        let events = vec![
            state(0, 0, Running),
            // Its last task ended (a state change), then nothing for 20 ms.
            spawn(1_000, Track::Worker(0), 40, SpawnQueue::Local),
            state(1_100, 0, Running),
            run(20_001_100, 0, 40),
        ];
        assert_eq!(
            cause_of(&recording(1, events), 40),
            WaitCause::NoProgress {
                worker: 0,
                gap_ns: 20_000_000,
            }
        );
    }

    #[test]
    fn the_worst_come_first_and_totals_add_up() {
        use WorkerActivity::*;
        let mut events = vec![state(0, 0, Running), state(0, 1, Running)];
        for task in 0..10 {
            let t = 1_000 * task;
            events.push(spawn(t, Track::Outside(0), task, SpawnQueue::Global));
            events.push(run(t + 100 * (task + 1), (task % 2) as usize, task));
        }
        let explanation = recording(2, events).explain(3).expect("Tasks level");
        assert_eq!(explanation.tasks, 10);
        let worst: Vec<u64> = explanation.worst.iter().map(|w| w.task).collect();
        assert_eq!(worst, vec![9, 8, 7]);
        let counted: usize = explanation.by_cause.iter().map(|c| c.waits).sum();
        assert_eq!(counted, 10);
        let total: u64 = explanation.by_cause.iter().map(|c| c.total_ns).sum();
        assert_eq!(total, (1..=10).map(|k| 100 * k).sum::<u64>());
    }

    #[test]
    fn a_scheduler_level_recording_is_refused_with_the_reason() {
        let recording = Recording::from_parts(
            "test".into(),
            RecordLevel::Scheduler,
            vec!["w0".into()],
            vec![],
            vec![],
            0,
            0,
        );
        let error = recording.explain(5).expect_err("no task identities");
        assert_eq!(error, ExplainError::NeedsTasksLevel(RecordLevel::Scheduler));
        assert!(error.to_string().contains("RecordLevel::Tasks"));
    }

    #[test]
    fn a_start_whose_spawn_fell_out_of_the_rings_is_counted_missing() {
        let events = vec![run(10, 0, 99)];
        let explanation = recording(1, events).explain(5).expect("Tasks level");
        assert_eq!(explanation.tasks, 0);
        assert_eq!(explanation.spawns_missing, 1);
    }
}
