//! Why tasks waited: a recording's schedule delays (spawn to start), each
//! with its cause, worst first, and totals by cause ([`Recording::explain`]).
//!
//! Every cause is read off the events around one wait, in this order (the
//! first that fits is the one given):
//!
//! 1. **The pool was asleep** at the spawn: no worker running or
//!    searching; the wait is the wake's, timed from the first wake call
//!    (`Unpark`) at or after the spawn (or, without one, the first wake),
//!    so that the time the OS took to run the woken thread is in it.
//! 2. **Behind a long task**: the task waited in a worker's queue (a local
//!    spawn) while that worker ran one task for at least half the wait.
//!    **Behind newer tasks**: no one task was that long, but the worker
//!    ran tasks for at least half the wait (a worker runs its own queue
//!    newest first, so an older task waits behind those spawned after it).
//! 3. **No progress**: a worker whose queue held the task was running with
//!    no event at all for at least half the wait, and not inside a task it
//!    had begun: likely descheduled by the OS, or blocked between tasks.
//! 4. **Starved in the global queue**: spawned from outside, it sat in the
//!    global queue with no worker pulling from it for at least half the
//!    wait (until the first pull after its spawn, often the one that took
//!    it), while the workers took work from one another: batch steals of
//!    spawned tasks, or forks of a join (a worker waiting in a join helps
//!    the computation in flight before it looks at the global queue).
//! 5. **Every worker busy**: every worker was running for the whole wait.
//! 6. **Behind a backlog**: while it waited, the workers started tasks
//!    spawned before it (older work, ahead of it in the queues) and ran
//!    tasks for at least half the wait, added over the workers: the pool
//!    was working through what came first.
//!
//! `causes.rs` applies these rules to one wait, over each worker's timeline
//! as `worker_line.rs` lays it out; `meanwhile.rs` says what each worker ran
//! during a wait ([`Recording::ran_meanwhile`]).
//!
//! Only a recording at [`RecordLevel::Tasks`] links spawns to runs; at
//! `Scheduler` level there is no task to explain ([`ExplainError`]), but
//! [`Recording::scheduler_summary`] (`scheduler_level.rs`) still times the
//! pool's wakes, the one cause that needs no task identity.

mod by_site;
mod causes;
mod meanwhile;
mod scheduler_level;
#[cfg(test)]
mod tests;
mod worker_line;

pub use meanwhile::RanMeanwhile;
pub use scheduler_level::SchedulerSummary;

use super::level::RecordLevel;
use super::recording::{EventKind, Recording, SpawnQueue, Track};
use causes::Context;
use std::collections::{HashMap, HashSet};
use std::fmt;
use worker_line::WorkerLine;

pub use by_site::SiteTotal;

/// Why a task waited to start. See the module docs for how each is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WaitCause {
    /// No worker was running or searching when the task was spawned: the
    /// wait is the pool's wake, `wake_ns` from the first wake call after
    /// the spawn to the task's start.
    PoolAsleep {
        /// From the first wake call (`Unpark`, else the first `Wake`) at or
        /// after the spawn to the task's start.
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
    /// Spawned from outside, it sat in the global queue for `unpulled_ns`
    /// with no worker pulling from it, at least half its wait, while the
    /// workers took work from one another `steals` times.
    GlobalQueueStarved {
        /// Steals between workers (batches of spawned tasks, or forks of
        /// a join) before the first global pull after the spawn.
        steals: usize,
        /// From the spawn to the first global pull after it (or to the
        /// start, without one).
        unpulled_ns: u64,
    },
    /// Every worker was running for the whole wait.
    AllWorkersBusy,
    /// While it waited the workers started `tasks_ahead` tasks spawned
    /// before it, running tasks for `busy_ns` added over the workers: it
    /// waited its turn behind older work.
    Backlog {
        /// Tasks spawned before it that started during its wait.
        tasks_ahead: usize,
        /// How long the workers ran tasks during the wait, added up.
        busy_ns: u64,
    },
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
            WaitCause::Backlog { .. } => "behind a backlog",
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
            WaitCause::GlobalQueueStarved {
                steals,
                unpulled_ns,
            } => write!(
                f,
                "waited in the global queue: no worker pulled from it for {} while workers \
                 stole from one another ({steals} steals)",
                Nanos(unpulled_ns)
            ),
            WaitCause::AllWorkersBusy => write!(f, "every worker was busy"),
            WaitCause::Backlog {
                tasks_ahead,
                busy_ns,
            } => write!(
                f,
                "behind a backlog: {tasks_ahead} older tasks started first, the workers busy \
                 {} in all",
                Nanos(busy_ns)
            ),
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
    /// Every explained wait and every run, added up by the task's spawn
    /// site (`Recording::task_site`), the largest wait total first. The
    /// site of one of [`worst`](Self::worst), or of the long task a cause
    /// names, is `Recording::task_site` of its id.
    pub by_site: Vec<SiteTotal>,
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
         which links each spawn to its run (at this level only the pool's wakes can be \
         timed: Recording::scheduler_summary)"
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
        let lines = WorkerLine::of_each_worker(self);
        let mut spawns: HashMap<u64, (u64, Track, SpawnQueue)> = HashMap::new();
        let mut starts: Vec<(u64, usize, u64)> = Vec::new();
        let mut wakes: Vec<u64> = Vec::new();
        let mut unparks: Vec<u64> = Vec::new();
        let mut steals: Vec<u64> = Vec::new();
        let mut pulls: Vec<u64> = Vec::new();
        // A stolen fork's run carries the fork's id: it was never spawned
        // (a join made it), so it has no wait to explain and is not a
        // spawn gone missing.
        let mut forks: HashSet<u64> = HashSet::new();
        for event in &self.events {
            match (event.kind, event.track) {
                (EventKind::ForkShared { fork }, _) => {
                    forks.insert(fork);
                }
                (EventKind::Spawn { task, queue, .. }, track) => {
                    spawns.insert(task, (event.time_ns, track, queue));
                }
                (EventKind::RunBegin { task: Some(task) }, Track::Worker(w))
                    if !forks.contains(&task) =>
                {
                    starts.push((task, w, event.time_ns));
                }
                (EventKind::Wake { .. }, _) => wakes.push(event.time_ns),
                (EventKind::Unpark { .. }, _) => unparks.push(event.time_ns),
                (EventKind::Steal { .. } | EventKind::ForkStolen { .. }, _) => {
                    steals.push(event.time_ns)
                }
                (EventKind::GlobalPull { .. }, _) => pulls.push(event.time_ns),
                _ => {}
            }
        }
        let mut runs_with_spawns: Vec<(u64, u64)> = starts
            .iter()
            .filter_map(|&(task, _, started)| spawns.get(&task).map(|s| (started, s.0)))
            .collect();
        runs_with_spawns.sort_unstable();
        let context = Context {
            lines: &lines,
            wakes: &wakes,
            unparks: &unparks,
            runs_with_spawns: &runs_with_spawns,
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
        let by_site = by_site::by_site(self, &waits);
        waits.sort_by_key(|w| std::cmp::Reverse(w.delay_ns()));
        waits.truncate(top);
        Ok(Explanation {
            worst: waits,
            by_cause,
            by_site,
            tasks,
            spawns_missing,
        })
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
