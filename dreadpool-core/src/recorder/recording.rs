//! A recording: the events the flight recorder kept, in time order, ready
//! to inspect or to write out for Perfetto.

use super::event::{self, Unpacked};
use super::level::RecordLevel;
use std::collections::HashMap;
use std::fmt;

/// What a worker was doing, as its `State` events say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WorkerActivity {
    /// Running tasks.
    Running,
    /// Looking for work: in the queues, in its peers' queues.
    Searching,
    /// Asleep, waiting to be woken.
    Sleeping,
    /// Its thread panicked and is handing the seat to a new thread.
    Respawning,
    /// The pool shut down and the worker exited.
    Stopped,
}

/// Where a spawned task was queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpawnQueue {
    /// The spawning worker's own queue (a spawn from one of the pool's
    /// tasks).
    Local,
    /// The pool's global queue (a spawn from outside the pool), or handed
    /// straight to a sleeping worker (its `Wake` event says `handoff`).
    Global,
    /// A worker's inbox: a task for that worker alone (`broadcast`).
    Inbox {
        /// The worker it is for.
        worker: usize,
    },
}

/// One recorded event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EventKind {
    /// A task was spawned (recorded at [`RecordLevel::Tasks`]).
    Spawn {
        /// The task's id in this recording: its `RunBegin` carries the same.
        task: u64,
        /// Where it was queued.
        queue: SpawnQueue,
        /// How much later than the event's `time_ns` the spawn may have
        /// happened: 0 when it read the clock itself. A spawn made by a
        /// task spares a clock read when its worker's readings come
        /// quickly (short tasks): its time is then its worker's latest
        /// reading before it, and the spawn happened after that and before
        /// the worker's next reading and its task's run, which this bounds.
        /// So the task waited between `run − time_ns − within_ns` and
        /// `run − time_ns` in the queue.
        within_ns: u64,
    },
    /// A task began to run (at [`RecordLevel::Tasks`]). `task` is `None`
    /// for a task spawned while the level was lower (it has no identity).
    RunBegin {
        /// The id its `Spawn` carries, if it has one.
        task: Option<u64>,
    },
    /// A task finished running.
    RunEnd {
        /// As in `RunBegin`.
        task: Option<u64>,
        /// Whether it panicked.
        panicked: bool,
    },
    /// The worker took tasks from the global queue.
    GlobalPull {
        /// Tasks taken: the one it runs at once and its local queue's
        /// growth (a peer stealing from that queue meanwhile makes the
        /// figure smaller than the batch).
        batch: u32,
        /// Its local queue's depth right after.
        local_depth: u64,
    },
    /// The worker stole tasks from a peer.
    Steal {
        /// The peer's index.
        victim: usize,
        /// Tasks taken (0 when the `metrics` feature is off).
        batch: u32,
        /// Its local queue's depth right after.
        local_depth: u64,
    },
    /// The worker changed what it was doing.
    State(WorkerActivity),
    /// The worker woke from sleep.
    Wake {
        /// Whether it was handed a task with the wake (a spawn from outside
        /// into a pool whose every worker slept).
        handoff: bool,
    },
    /// A wakeup that found no work.
    NoopWakeup,
    /// This track (a worker, or an outside thread) woke a worker.
    Unpark {
        /// The worker woken.
        worker: usize,
    },
    /// A new thread took over this worker's seat after a panic.
    Respawn,
    /// A task panicked on this worker.
    Panic {
        /// The task, if it has an id.
        task: Option<u64>,
    },
    /// A task on this worker began waiting (a `join` on a handle, a scope's
    /// end, a broadcast): the worker runs other tasks meanwhile.
    WaitBegin,
    /// That wait ended.
    WaitEnd,
    /// The worker shared the oldest latent fork of its joins (its `b`) with
    /// idle workers (`dreadpool::join`; the design is in
    /// `src/fork_join/README.md`). Forks that were never shared run inline
    /// and are not recorded.
    ForkShared {
        /// The fork's id in this recording: a `ForkStolen` of it carries the
        /// same.
        fork: u64,
    },
    /// The worker took a fork that another worker shared and is about to
    /// run it (until its next event).
    ForkStolen {
        /// The id its `ForkShared` carries, if that is in the recording.
        fork: Option<u64>,
        /// The worker whose join it belongs to.
        owner: usize,
    },
}

/// Whose timeline an event is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Track {
    /// A worker, by index.
    Worker(usize),
    /// A thread outside the pool that spawned into it, by its index in
    /// [`Recording::outside_threads`].
    Outside(usize),
}

/// An event with its time and track.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RecordedEvent {
    /// Nanoseconds since the process's recorder clock started (the first
    /// pool with a flight recorder).
    pub time_ns: u64,
    /// The worker or thread it happened on.
    pub track: Track,
    /// What happened.
    pub kind: EventKind,
}

/// A recording of a pool's recent scheduler activity, from
/// [`ThreadPool::recording`](crate::ThreadPool::recording).
///
/// It holds the events every worker's ring kept (the newest
/// [`with_record_capacity`](crate::ThreadPoolBuilder::with_record_capacity)
/// events per worker), and the spawns that threads outside the pool made
/// into it, merged in time order. Write it for
/// [ui.perfetto.dev](https://ui.perfetto.dev) with
/// [`write_perfetto`](Self::write_perfetto) (Perfetto's protobuf trace) or
/// [`write_chrome_json`](Self::write_chrome_json) (the Chrome JSON trace
/// event format), or look at [`events`](Self::events) directly.
///
/// ```
/// use dreadpool::{EventKind, RecordLevel, ThreadPoolBuilder, Track};
///
/// let pool = ThreadPoolBuilder::new()
///     .with_threads(2)
///     .with_record_level(RecordLevel::Tasks)
///     .build();
/// pool.spawn(|| {});
/// pool.join();
/// let recording = pool.recording();
/// let spawn = recording.events().iter().find_map(|e| match e.kind {
///     EventKind::Spawn { task, .. } => Some(task),
///     _ => None,
/// });
/// let ran = recording.events().iter().find_map(|e| match (e.track, e.kind) {
///     (Track::Worker(_), EventKind::RunBegin { task }) => task,
///     _ => None,
/// });
/// assert_eq!(spawn, ran); // the spawn is linked to its run
/// ```
#[derive(Clone)]
pub struct Recording {
    pub(crate) pool: String,
    pub(crate) level: RecordLevel,
    pub(crate) worker_names: Vec<String>,
    pub(crate) outside_names: Vec<String>,
    pub(crate) events: Vec<RecordedEvent>,
    pub(crate) lost: u64,
    pub(crate) taken_at_ns: u64,
}

impl Recording {
    /// A recording made of its parts: for tools that carry one across a
    /// process boundary (`dreadpool::metrics`' exporter does) and rebuild it
    /// to write it out. `worker_names[i]` names `Track::Worker(i)`,
    /// `outside_names[i]` names `Track::Outside(i)`; events are sorted by
    /// time here.
    pub fn from_parts(
        pool: String,
        level: RecordLevel,
        worker_names: Vec<String>,
        outside_names: Vec<String>,
        mut events: Vec<RecordedEvent>,
        lost_events: u64,
        taken_at_ns: u64,
    ) -> Self {
        events.sort_by_key(|e| e.time_ns);
        Recording {
            pool,
            level,
            worker_names,
            outside_names,
            events,
            lost: lost_events,
            taken_at_ns,
        }
    }

    /// The pool's name.
    pub fn pool(&self) -> &str {
        &self.pool
    }

    /// The level the pool was recording at when this was taken.
    pub fn level(&self) -> RecordLevel {
        self.level
    }

    /// The workers' thread names, by index.
    pub fn worker_names(&self) -> &[String] {
        &self.worker_names
    }

    /// The names of the outside threads that spawned into the pool, in the
    /// order [`Track::Outside`] counts them.
    pub fn outside_threads(&self) -> &[String] {
        &self.outside_names
    }

    /// Every event, oldest first.
    pub fn events(&self) -> &[RecordedEvent] {
        &self.events
    }

    /// Events the rings had overwritten by the time this was taken (the
    /// older history that no longer fits), or that a writer overwrote while
    /// they were copied. A recording never contains a torn event.
    pub fn lost_events(&self) -> u64 {
        self.lost
    }

    /// When this was taken, on the events' clock.
    pub fn taken_at_ns(&self) -> u64 {
        self.taken_at_ns
    }

    /// The name of a track.
    pub fn track_name(&self, track: Track) -> &str {
        let name = match track {
            Track::Worker(i) => self.worker_names.get(i),
            Track::Outside(i) => self.outside_names.get(i),
        };
        name.map_or("?", String::as_str)
    }
}

impl fmt::Debug for Recording {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recording")
            .field("pool", &self.pool)
            .field("level", &self.level)
            .field("workers", &self.worker_names.len())
            .field("outside_threads", &self.outside_names.len())
            .field("events", &self.events.len())
            .field("lost_events", &self.lost)
            .finish()
    }
}

/// One ring's events, unpacked and timed, on their track.
pub(crate) struct TrackEvents {
    pub(crate) track: Track,
    pub(crate) events: Vec<(u64, Unpacked)>,
}

/// Merges the tracks in time order, gives tasks their ids, closes runs, and
/// bounds the spawns whose time was inherited.
///
/// **Order.** Each track's events stay in the order its ring holds them,
/// which is the order its one writer made them in; their times are made
/// non-decreasing along the track first (a worker that moved to another
/// core may read a counter a few ticks behind, and an inherited time is
/// raised to the latest reading before it). Tracks are then merged by time;
/// at equal times a spawn goes before other tracks' events, so that a run
/// stamped in the same nanosecond on another worker comes after its spawn.
///
/// **Inherited times.** A spawn whose time is its worker's latest reading
/// (`spawn_clock.rs`) happened at or after that time, before the track's
/// next event with a reading of its own (or the moment the recording was
/// taken, `taken_at_ns`), and before its task began to run: its
/// `within_ns` is the distance to the nearest of those.
///
/// **Ids.** A task's identity is given once in the process
/// (`Task::record_id`), so a run is matched to its spawn by identity alone,
/// whatever their order. The recording renames identities to small ids, in
/// the order of the spawns; a run whose spawn is not in the recording gets
/// a fresh one. Forks are named by the address of their stack job, which
/// is reused: `ForkShared` starts an id for its address, a `ForkStolen`
/// takes the latest (both read the clock, and an address is shared again
/// only after the fork was taken back or stolen), in a map of their own,
/// from the same sequence of ids, so that a fork's id never equals a
/// task's.
///
/// **Run ends.** A worker records when a run begins, not when it ends
/// (except a panicking one): that saves an event and a clock read per task.
/// A run ends where the next event of its level on its track happens: the
/// next run's begin, a change of state away from running (searching,
/// sleeping, ...), or, for a run inside a wait, the wait's end. Runs nest,
/// as a stack per track, when a task waits inside another (`WaitBegin`
/// opens a level, `WaitEnd` closes it). The `RunEnd` events of the
/// recording are made here.
pub(crate) fn merge(tracks: Vec<TrackEvents>, taken_at_ns: u64) -> Vec<RecordedEvent> {
    let all = in_time_order(tracks, taken_at_ns);

    // Spawns first, so that a run finds its spawn's id wherever it is.
    let mut ids: HashMap<u64, u64> = HashMap::new();
    let mut next = 0u64;
    for timed in &all {
        if timed.event.kind == event::SPAWN && timed.event.c != 0 {
            next += 1;
            ids.insert(timed.event.c, next);
        }
    }

    /// A track's open runs and wait levels.
    #[derive(Default)]
    struct Runs {
        /// Open runs, innermost last: (raw identity, id).
        open: Vec<(u64, Option<u64>)>,
        /// For each open wait, how many runs were open when it began.
        waits: Vec<usize>,
        /// The id of the run that ended last (for a `Panic` after it).
        last_ended: Option<u64>,
    }
    impl Runs {
        /// Closes the run open at the current level, if any.
        fn close(&mut self) -> Option<Option<u64>> {
            let base = self.waits.last().copied().unwrap_or(0);
            if self.open.len() > base {
                let (_, id) = self.open.pop()?;
                self.last_ended = id;
                Some(id)
            } else {
                None
            }
        }
    }

    let mut fork_ids: HashMap<u64, u64> = HashMap::new();
    let mut runs: HashMap<Track, Runs> = HashMap::new();
    let mut events = Vec::with_capacity(all.len() * 3 / 2);
    // Where each task began to run, to bound its spawn's inherited time.
    let mut began: HashMap<u64, u64> = HashMap::new();
    for Timed {
        time_ns,
        track,
        event,
        within_ns,
    } in all
    {
        let raw = event.c;
        let at = runs.entry(track).or_default();
        let mut closed = None;
        let id = match event.kind {
            event::SPAWN if raw != 0 => ids.get(&raw).copied(),
            event::RUN_BEGIN => {
                closed = at.close();
                let id = (raw != 0).then(|| {
                    *ids.entry(raw).or_insert_with(|| {
                        // Spawned before the oldest event kept.
                        next += 1;
                        next
                    })
                });
                at.open.push((raw, id));
                if let Some(id) = id {
                    began.entry(id).or_insert(time_ns);
                }
                id
            }
            // Recorded only for a panicking run: it is the open one.
            event::RUN_END => at.close().flatten(),
            event::PANIC => at.last_ended,
            event::FORK_SHARED => {
                next += 1;
                fork_ids.insert(raw, next);
                Some(next)
            }
            event::FORK_STOLEN => fork_ids.get(&raw).copied(),
            event::STATE if event.a != event::RUNNING => {
                closed = at.close();
                None
            }
            event::WAIT_BEGIN => {
                at.waits.push(at.open.len());
                None
            }
            event::WAIT_END => {
                closed = at.close();
                at.waits.pop();
                None
            }
            _ => None,
        };
        if let Some(task) = closed {
            events.push(RecordedEvent {
                time_ns,
                track,
                kind: EventKind::RunEnd {
                    task,
                    panicked: false,
                },
            });
        }
        if let Some(kind) = event::decode(&event, within_ns, |_, _| id) {
            events.push(RecordedEvent {
                time_ns,
                track,
                kind,
            });
        }
    }
    for event in &mut events {
        if let EventKind::Spawn {
            task, within_ns, ..
        } = &mut event.kind
        {
            if let Some(&run) = began.get(task) {
                *within_ns = (*within_ns).min(run.saturating_sub(event.time_ns));
            }
        }
    }
    events
}

/// An event with its time, its track, and how much later than its time it
/// may have happened (0 for an event that read the clock itself).
struct Timed {
    time_ns: u64,
    track: Track,
    event: Unpacked,
    within_ns: u64,
}

/// Each track's events with non-decreasing times and the bounds of their
/// inherited times, merged by time as [`merge`] says.
fn in_time_order(tracks: Vec<TrackEvents>, taken_at_ns: u64) -> Vec<Timed> {
    let mut queues: Vec<std::collections::VecDeque<Timed>> = tracks
        .into_iter()
        .map(|t| bounded(t, taken_at_ns).into())
        .collect();
    // A k-way merge (k is the number of tracks), not a sort: a sort by
    // time would move a spawn ahead of an event of its own track at the
    // same time (its inherited time is that event's reading).
    let key = |timed: &Timed, index: usize| {
        std::cmp::Reverse((timed.time_ns, timed.event.kind != event::SPAWN, index))
    };
    let mut heads: std::collections::BinaryHeap<_> = queues
        .iter()
        .enumerate()
        .filter_map(|(index, queue)| queue.front().map(|head| key(head, index)))
        .collect();
    let mut all = Vec::with_capacity(queues.iter().map(|q| q.len()).sum());
    while let Some(std::cmp::Reverse((_, _, index))) = heads.pop() {
        let Some(timed) = queues[index].pop_front() else {
            continue;
        };
        all.push(timed);
        if let Some(head) = queues[index].front() {
            heads.push(key(head, index));
        }
    }
    all
}

/// One track's events, in ring order, with non-decreasing times and each
/// inherited time's bound.
fn bounded(track: TrackEvents, taken_at_ns: u64) -> Vec<Timed> {
    let mut latest = 0;
    let mut timed: Vec<Timed> = track
        .events
        .into_iter()
        .map(|(time_ns, event)| {
            latest = latest.max(time_ns);
            Timed {
                time_ns: latest,
                track: track.track,
                event,
                within_ns: 0,
            }
        })
        .collect();
    let mut next_reading = taken_at_ns;
    for t in timed.iter_mut().rev() {
        if t.event.inherited {
            t.within_ns = next_reading.saturating_sub(t.time_ns);
        } else {
            next_reading = t.time_ns;
        }
    }
    timed
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::recorder::event::{pack, unpack, INHERITED};

    /// A track of `(time, kind, a, c)` events, as a ring would hold them.
    fn track(track: Track, events: &[(u64, u8, u32, u64)]) -> TrackEvents {
        TrackEvents {
            track,
            events: events
                .iter()
                .map(|&(time, kind, a, c)| (time, unpack(pack(time, kind, a, 0, c))))
                .collect(),
        }
    }

    const INHERITED_SPAWN: u8 = event::SPAWN | INHERITED;
    const W0: Track = Track::Worker(0);
    const W1: Track = Track::Worker(1);

    fn spawns(events: &[RecordedEvent]) -> Vec<(u64, u64, u64)> {
        events
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::Spawn {
                    task, within_ns, ..
                } => Some((task, e.time_ns, within_ns)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn an_inherited_spawn_time_is_bounded_by_the_next_reading_and_its_run() {
        let events = merge(
            vec![
                track(
                    W0,
                    &[
                        (100, event::RUN_BEGIN, 0, 0),
                        // Both took the run's reading; worker 1 ran the
                        // second at 130, before worker 0's next reading.
                        (100, INHERITED_SPAWN, 0, 7),
                        (100, INHERITED_SPAWN, 0, 8),
                        (180, event::RUN_BEGIN, 0, 7),
                        (200, event::SPAWN, 0, 9),
                    ],
                ),
                track(W1, &[(130, event::RUN_BEGIN, 0, 8)]),
            ],
            1_000,
        );
        // Ids in the order of the spawns; task 9's spawn read the clock.
        assert_eq!(spawns(&events), [(1, 100, 80), (2, 100, 30), (3, 200, 0)]);
    }

    #[test]
    fn an_inherited_spawn_with_no_reading_after_it_is_bounded_by_the_take() {
        let events = merge(
            vec![track(
                W0,
                &[(100, event::RUN_BEGIN, 0, 0), (100, INHERITED_SPAWN, 0, 7)],
            )],
            150,
        );
        assert_eq!(spawns(&events), [(1, 100, 50)]);
    }

    #[test]
    fn a_track_keeps_its_order_and_its_times_never_go_back() {
        let events = merge(
            vec![
                track(
                    W0,
                    &[
                        (100, event::RUN_BEGIN, 0, 5),
                        // A spawn that inherited an older reading (the
                        // ring's oldest events were lost) is raised to the
                        // reading before it, and stays after it.
                        (90, INHERITED_SPAWN, 0, 7),
                        // A reading a little behind (another core).
                        (99, event::STATE, event::SEARCHING, 0),
                    ],
                ),
                // Another track's spawn at the same time goes first.
                track(W1, &[(100, event::SPAWN, 0, 5)]),
            ],
            1_000,
        );
        let order: Vec<(Track, u64, &str)> = events
            .iter()
            .map(|e| {
                let name = match e.kind {
                    EventKind::Spawn { .. } => "spawn",
                    EventKind::RunBegin { .. } => "begin",
                    EventKind::RunEnd { .. } => "end",
                    EventKind::State(_) => "state",
                    _ => "other",
                };
                (e.track, e.time_ns, name)
            })
            .collect();
        assert_eq!(
            order,
            [
                (W1, 100, "spawn"),
                (W0, 100, "begin"),
                (W0, 100, "spawn"),
                (W0, 100, "end"),
                (W0, 100, "state"),
            ]
        );
    }

    #[test]
    fn a_run_finds_its_spawn_even_if_it_sorts_first() {
        // Worker 1's counter a little behind worker 0's: the run of the
        // task sorts before its spawn.
        let events = merge(
            vec![
                track(W0, &[(100, event::SPAWN, 0, 42)]),
                track(W1, &[(99, event::RUN_BEGIN, 0, 42)]),
            ],
            1_000,
        );
        let run = events.iter().find_map(|e| match e.kind {
            EventKind::RunBegin { task } => task,
            _ => None,
        });
        assert_eq!(spawns(&events)[0].0, 1);
        assert_eq!(run, Some(1));
    }
}
