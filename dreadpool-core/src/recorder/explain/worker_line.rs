//! One worker's timeline, as the causes read it: its events' times, its
//! state changes, its task starts, where each run ended, and when it took
//! tasks from the global queue or from a peer.

use crate::recorder::recording::{EventKind, Recording, Track, WorkerActivity};

/// One worker's timeline, as the causes need it.
#[derive(Default)]
pub(super) struct WorkerLine {
    /// Times of every event on the worker's track.
    pub(super) times: Vec<u64>,
    /// `State` changes: (time, activity).
    pub(super) states: Vec<(u64, WorkerActivity)>,
    /// Task starts: (time, task).
    pub(super) runs: Vec<(u64, Option<u64>)>,
    /// The events that end a task's run (the recorder records no end for
    /// a run that returns: it ends at the worker's next task start, state
    /// change, wait or panic), with whether each is itself a task start.
    pub(super) boundaries: Vec<(u64, bool)>,
    /// Times of its pulls from the global queue.
    pub(super) pulls: Vec<u64>,
    /// Its batch steals of spawned tasks: (time, victim).
    pub(super) steals: Vec<(u64, usize)>,
}

impl WorkerLine {
    /// Every worker's timeline in `recording`, by worker index.
    pub(super) fn of_each_worker(recording: &Recording) -> Vec<WorkerLine> {
        let mut lines: Vec<WorkerLine> = (0..recording.worker_names.len())
            .map(|_| WorkerLine::default())
            .collect();
        for event in &recording.events {
            let Track::Worker(w) = event.track else {
                continue;
            };
            let Some(line) = lines.get_mut(w) else {
                continue;
            };
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
                EventKind::GlobalPull { .. } => line.pulls.push(event.time_ns),
                EventKind::Steal { victim, .. } => line.steals.push((event.time_ns, victim)),
                _ => {}
            }
        }
        lines
    }

    /// Its last pull from the global queue within `(from, to]` (a pull is
    /// read at most as late as the run it fed).
    pub(super) fn last_pull_in(&self, from: u64, to: u64) -> Option<u64> {
        let i = self.pulls.partition_point(|&t| t <= to);
        i.checked_sub(1)
            .map(|i| self.pulls[i])
            .filter(|&t| t > from)
    }

    /// Its last batch steal within `(from, to]`: (time, victim).
    pub(super) fn last_steal_in(&self, from: u64, to: u64) -> Option<(u64, usize)> {
        let i = self.steals.partition_point(|&(t, _)| t <= to);
        i.checked_sub(1)
            .map(|i| self.steals[i])
            .filter(|&(t, _)| t > from)
    }

    /// The worker's activity at `t` (its last state change at or before),
    /// `None` if the recording has none by then.
    pub(super) fn activity_at(&self, t: u64) -> Option<WorkerActivity> {
        let i = self.states.partition_point(|&(at, _)| at <= t);
        i.checked_sub(1).map(|i| self.states[i].1)
    }

    /// Whether it changed state during `(from, to)`.
    pub(super) fn changed_state_in(&self, from: u64, to: u64) -> bool {
        let i = self.states.partition_point(|&(at, _)| at <= from);
        self.states.get(i).is_some_and(|&(at, _)| at < to)
    }

    /// The longest time its tasks ran within `[from, to)`: a task runs from
    /// its start to the next boundary. Returns that task and time.
    pub(super) fn longest_run_in(&self, from: u64, to: u64) -> Option<(Option<u64>, u64)> {
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
    pub(super) fn busy_in(&self, from: u64, to: u64) -> u64 {
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
    pub(super) fn runs_in(&self, from: u64, to: u64) -> usize {
        let a = self.runs.partition_point(|&(at, _)| at <= from);
        let b = self.runs.partition_point(|&(at, _)| at < to);
        b.saturating_sub(a)
    }

    /// When the run begun at `begin` ended: the first boundary after it.
    pub(super) fn run_end_after(&self, begin: u64) -> Option<u64> {
        let i = self.boundaries.partition_point(|&(at, _)| at <= begin);
        self.boundaries.get(i).map(|&(at, _)| at)
    }

    /// Whether the worker was inside a task's run at `t` (its last boundary
    /// at or before `t` is a task start).
    pub(super) fn in_run_at(&self, t: u64) -> bool {
        let i = self.boundaries.partition_point(|&(at, _)| at <= t);
        i.checked_sub(1).is_some_and(|i| self.boundaries[i].1)
    }

    /// Its longest silence within `[from, to)` outside its tasks' runs: no
    /// event at all, while not inside a task it began.
    pub(super) fn longest_silence_in(&self, from: u64, to: u64) -> u64 {
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
