//! What each worker ran while a task waited: the detail behind the causes
//! that are about the whole pool (every worker busy, behind a backlog).

use super::worker_line::WorkerLine;
use super::TaskWait;
use crate::recorder::recording::Recording;

/// What one worker ran during a task's wait ([`Recording::ran_meanwhile`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RanMeanwhile {
    /// The worker.
    pub worker: usize,
    /// Tasks it started during the wait (a task already running when the
    /// wait began is not counted here, but its time is).
    pub tasks_started: usize,
    /// How long it ran tasks during the wait, in all.
    pub busy_ns: u64,
    /// The task it ran longest during the wait, if it ran one, and for how
    /// long within the wait (`None` inside: a task the recording has no
    /// identity for).
    pub longest: Option<(Option<u64>, u64)>,
}

impl Recording {
    /// What each worker ran while `wait`'s task waited: the tasks it
    /// started, its time running tasks, and its longest task. It says what
    /// kept the pool from the task when the cause is
    /// [`AllWorkersBusy`](super::WaitCause::AllWorkersBusy) or
    /// [`Backlog`](super::WaitCause::Backlog).
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
    /// let recording = pool.recording();
    /// let explanation = recording.explain(1)?;
    /// if let Some(worst) = explanation.worst.first() {
    ///     for ran in recording.ran_meanwhile(worst) {
    ///         println!("worker {} ran tasks for {} ns", ran.worker, ran.busy_ns);
    ///     }
    /// }
    /// # Ok::<(), dreadpool::ExplainError>(())
    /// ```
    pub fn ran_meanwhile(&self, wait: &TaskWait) -> Vec<RanMeanwhile> {
        meanwhile(&WorkerLine::of_each_worker(self), wait)
    }
}

/// [`Recording::ran_meanwhile`] over timelines already laid out.
pub(super) fn meanwhile(lines: &[WorkerLine], wait: &TaskWait) -> Vec<RanMeanwhile> {
    let (from, to) = (wait.spawned_ns, wait.started_ns);
    lines
        .iter()
        .enumerate()
        .map(|(worker, line)| RanMeanwhile {
            worker,
            tasks_started: line.runs_in(from, to),
            busy_ns: line.busy_in(from, to),
            longest: line.longest_run_in(from, to).filter(|&(_, ns)| ns > 0),
        })
        .collect()
}
