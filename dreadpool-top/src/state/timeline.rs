//! The timeline: each worker's recent states as the flight recorder saw
//! them, with its steals and respawns, kept as change points and cut into
//! cells when drawn.
//!
//! The source feeds it [`TimelineChunk`]s, each holding only the marks
//! newer than the previous chunk's (a digest of a recording, never a whole
//! one), on the host's recorder clock. Nothing here reads a clock: "now" is
//! the newest chunk's `taken_at_ns`, so a fixed chunk draws the same strip
//! every time.

use super::sample::WorkerStatus;
use std::collections::VecDeque;
use std::time::Duration;

/// How much history a timeline keeps: more than the widest strip shows
/// (a 300-column terminal at 100 ms a cell is 30 s).
pub const TIMELINE_KEEP: Duration = Duration::from_secs(60);

/// What a mark says happened on a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkKind {
    /// The worker changed state.
    State(WorkerStatus),
    /// The worker stole from a peer.
    Steal {
        /// The peer.
        victim: usize,
    },
    /// A new thread took over the worker's seat after a panic.
    Respawn,
    /// A task panicked on the worker.
    Panic,
}

/// One thing that happened on a worker, on the recorder's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    /// Nanoseconds on the host's recorder clock.
    pub at_ns: u64,
    /// The worker's index.
    pub worker: usize,
    /// What happened.
    pub kind: MarkKind,
}

/// The marks of one pool that are new since the previous chunk.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TimelineChunk {
    /// The pool's name.
    pub pool: String,
    /// Its worker count.
    pub workers: usize,
    /// When the recording they come from was taken (the strip's "now").
    pub taken_at_ns: u64,
    /// The marks, oldest first.
    pub marks: Vec<Mark>,
    /// The clock changed under the timeline (another host process after a
    /// reconnection): what was kept is dropped first.
    pub restart: bool,
    /// The pool records nothing (its level is `Off`).
    pub recorder_off: bool,
}

/// One worker's history.
#[derive(Debug, Clone, Default)]
struct Strip {
    /// State changes, oldest first; the first may be older than the
    /// history kept (it says what the worker was doing when it begins).
    changes: VecDeque<(u64, WorkerStatus)>,
    steals: VecDeque<u64>,
    respawns: VecDeque<u64>,
    /// The newest mark's time: older marks in a later chunk are repeats
    /// (a chunk's times may shift slightly from one recording to the next).
    newest: u64,
}

/// One cell of a drawn strip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cell {
    /// The state the worker spent most of the cell in (`Respawning` if it
    /// respawned at all in it); `None` before anything is known.
    pub state: Option<WorkerStatus>,
    /// The share of the cell it spent running, in eighths rounded up (so
    /// that any work at all shows): 0 to 8.
    pub running: u8,
    /// It stole at least once in the cell.
    pub steal: bool,
    /// A task panicked or the worker respawned in the cell.
    pub respawn: bool,
}

/// A pool's timeline.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    strips: Vec<Strip>,
    now_ns: u64,
    recorder_off: bool,
}

impl Timeline {
    /// An empty timeline.
    pub fn new() -> Self {
        Timeline::default()
    }

    /// The newest recording's time: the strips end there.
    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Workers known.
    pub fn workers(&self) -> usize {
        self.strips.len()
    }

    /// Whether the pool's recorder is off (nothing will come).
    pub fn recorder_off(&self) -> bool {
        self.recorder_off
    }

    /// Whether any mark arrived.
    pub fn is_empty(&self) -> bool {
        self.strips
            .iter()
            .all(|s| s.changes.is_empty() && s.steals.is_empty() && s.respawns.is_empty())
    }

    /// Adds a chunk's marks and forgets what is older than
    /// [`TIMELINE_KEEP`] (keeping the state each worker was in then).
    pub fn absorb(&mut self, chunk: &TimelineChunk) {
        if chunk.restart || chunk.taken_at_ns < self.now_ns {
            // Another clock: the old history would be misplaced on it.
            *self = Timeline::default();
        }
        self.recorder_off = chunk.recorder_off;
        self.now_ns = self.now_ns.max(chunk.taken_at_ns);
        let workers = chunk
            .workers
            .max(chunk.marks.iter().map(|m| m.worker + 1).max().unwrap_or(0));
        if self.strips.len() < workers {
            self.strips.resize_with(workers, Strip::default);
        }
        for mark in &chunk.marks {
            let strip = &mut self.strips[mark.worker];
            if mark.at_ns <= strip.newest && strip.newest != 0 {
                continue;
            }
            strip.newest = mark.at_ns;
            match mark.kind {
                MarkKind::State(state) => {
                    if strip.changes.back().map(|&(_, s)| s) != Some(state) {
                        strip.changes.push_back((mark.at_ns, state));
                    }
                }
                MarkKind::Steal { .. } => strip.steals.push_back(mark.at_ns),
                MarkKind::Respawn | MarkKind::Panic => strip.respawns.push_back(mark.at_ns),
            }
        }
        let keep = u64::try_from(TIMELINE_KEEP.as_nanos()).unwrap_or(u64::MAX);
        let cutoff = self.now_ns.saturating_sub(keep);
        for strip in &mut self.strips {
            // Keep the last change at or before the cutoff: the state then.
            while strip.changes.len() > 1 && strip.changes[1].0 <= cutoff {
                strip.changes.pop_front();
            }
            while strip.steals.front().is_some_and(|&t| t < cutoff) {
                strip.steals.pop_front();
            }
            while strip.respawns.front().is_some_and(|&t| t < cutoff) {
                strip.respawns.pop_front();
            }
        }
    }

    /// Worker `worker`'s last `count` cells of `cell` each, oldest first,
    /// the last ending at [`now_ns`](Self::now_ns).
    pub fn cells(&self, worker: usize, count: usize, cell: Duration) -> Vec<Cell> {
        let mut out = vec![Cell::default(); count];
        let Some(strip) = self.strips.get(worker) else {
            return out;
        };
        let width = u64::try_from(cell.as_nanos()).unwrap_or(u64::MAX).max(1);
        let span = width.saturating_mul(count as u64);
        let start = self.now_ns.saturating_sub(span);
        // Walk the changes once, cell by cell.
        let mut next = strip.changes.partition_point(|&(t, _)| t <= start);
        let mut current = next.checked_sub(1).map(|i| strip.changes[i].1);
        for (i, out) in out.iter_mut().enumerate() {
            // Counted back from now, so that the last cell ends at now;
            // cells before the clock began (a young process) stay empty.
            let back = width.saturating_mul((count - 1 - i) as u64);
            let Some(to) = self.now_ns.checked_sub(back) else {
                continue;
            };
            let from = to.saturating_sub(width);
            // Time in each state within [from, to).
            let mut spent = [0u64; 6];
            let mut at = from;
            let mut respawning = current == Some(WorkerStatus::Respawning);
            while next < strip.changes.len() && strip.changes[next].0 < to {
                let (t, state) = strip.changes[next];
                if let Some(s) = current {
                    spent[slot(s)] += t.saturating_sub(at);
                }
                at = t.max(at);
                current = Some(state);
                respawning |= state == WorkerStatus::Respawning;
                next += 1;
            }
            if let Some(s) = current {
                spent[slot(s)] += to.saturating_sub(at);
            }
            let ran = spent[slot(WorkerStatus::Running)];
            out.running = u8::try_from((ran * 8).div_ceil(width).min(8)).unwrap_or(8);
            out.state = if respawning {
                Some(WorkerStatus::Respawning)
            } else {
                dominant(&spent)
            };
            let within = |times: &VecDeque<u64>| {
                let first = times.partition_point(|&t| t < from);
                times.get(first).is_some_and(|&t| t < to)
            };
            out.steal = within(&strip.steals);
            out.respawn = within(&strip.respawns);
        }
        out
    }
}

/// Ties go to the first in this order: what most needs seeing first.
const ORDER: [WorkerStatus; 6] = [
    WorkerStatus::Respawning,
    WorkerStatus::Running,
    WorkerStatus::Searching,
    WorkerStatus::Sleeping,
    WorkerStatus::Stopped,
    WorkerStatus::Unknown,
];

fn slot(state: WorkerStatus) -> usize {
    ORDER.iter().position(|&s| s == state).unwrap_or(5)
}

fn dominant(spent: &[u64; 6]) -> Option<WorkerStatus> {
    let mut best: Option<(usize, u64)> = None;
    for (i, &t) in spent.iter().enumerate() {
        if t > 0 && best.is_none_or(|(_, b)| t > b) {
            best = Some((i, t));
        }
    }
    best.map(|(i, _)| ORDER[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn state(at_ms: u64, worker: usize, s: WorkerStatus) -> Mark {
        Mark {
            at_ns: at_ms * MS,
            worker,
            kind: MarkKind::State(s),
        }
    }

    fn chunk(taken_ms: u64, marks: Vec<Mark>) -> TimelineChunk {
        TimelineChunk {
            pool: "p".into(),
            workers: 2,
            taken_at_ns: taken_ms * MS,
            marks,
            ..TimelineChunk::default()
        }
    }

    #[test]
    fn cells_show_the_dominant_state_steals_and_respawns() {
        let mut t = Timeline::new();
        t.absorb(&chunk(
            1_000,
            vec![
                state(0, 0, WorkerStatus::Sleeping),
                state(500, 0, WorkerStatus::Running),
                Mark {
                    at_ns: 550 * MS,
                    worker: 0,
                    kind: MarkKind::Steal { victim: 1 },
                },
                state(730, 0, WorkerStatus::Searching),
                state(750, 0, WorkerStatus::Sleeping),
                state(900, 1, WorkerStatus::Respawning),
                state(901, 1, WorkerStatus::Running),
            ],
        ));
        let cells = t.cells(0, 10, Duration::from_millis(100));
        let states: Vec<_> = cells.iter().map(|c| c.state).collect();
        use WorkerStatus::*;
        assert_eq!(
            states,
            [
                Sleeping, Sleeping, Sleeping, Sleeping, Sleeping, Running, Running, Sleeping,
                Sleeping, Sleeping
            ]
            .map(Some)
        );
        assert!(cells[5].steal && !cells[4].steal && !cells[6].steal);
        let running: Vec<u8> = cells.iter().map(|c| c.running).collect();
        // 30 ms of 100 in cell 7: 2.4 eighths, shown as 3.
        assert_eq!(running, [0, 0, 0, 0, 0, 8, 8, 3, 0, 0]);
        let w1 = t.cells(1, 10, Duration::from_millis(100));
        assert_eq!(w1[8].state, None, "nothing known before its first mark");
        assert_eq!(
            w1[9].state,
            Some(Respawning),
            "a respawn shows, however short"
        );
    }

    #[test]
    fn a_young_clock_fills_only_the_cells_it_has_seen() {
        let mut t = Timeline::new();
        t.absorb(&chunk(250, vec![state(10, 0, WorkerStatus::Sleeping)]));
        let cells = t.cells(0, 10, Duration::from_millis(100));
        // 250 ms of clock: the last three cells (the first one partly).
        assert!(cells[..7].iter().all(|c| c.state.is_none()), "{cells:?}");
        assert!(cells[7..]
            .iter()
            .all(|c| c.state == Some(WorkerStatus::Sleeping)));
    }

    #[test]
    fn chunks_add_up_repeats_are_ignored_and_old_history_is_dropped() {
        let mut t = Timeline::new();
        t.absorb(&chunk(1_000, vec![state(100, 0, WorkerStatus::Running)]));
        // A repeat of the same mark (shifted a little) and a new one.
        t.absorb(&chunk(
            2_000,
            vec![
                state(99, 0, WorkerStatus::Running),
                state(1_500, 0, WorkerStatus::Sleeping),
            ],
        ));
        let cells = t.cells(0, 20, Duration::from_millis(100));
        assert_eq!(cells[0].state, None);
        assert_eq!(cells[1].state, Some(WorkerStatus::Running));
        assert_eq!(cells[19].state, Some(WorkerStatus::Sleeping));
        assert_eq!(t.strips[0].changes.len(), 2);

        // A minute and more later: the old change is forgotten, but the
        // state it set holds until the next.
        t.absorb(&chunk(100_000, vec![]));
        let cells = t.cells(0, 10, Duration::from_millis(100));
        assert!(cells
            .iter()
            .all(|c| c.state == Some(WorkerStatus::Sleeping)));
        assert_eq!(t.strips[0].changes.len(), 1);

        // Another host: the history goes.
        let mut restart = chunk(50, vec![]);
        restart.restart = true;
        t.absorb(&restart);
        assert!(t.is_empty());
        assert_eq!(t.now_ns(), 50 * MS);
    }
}
