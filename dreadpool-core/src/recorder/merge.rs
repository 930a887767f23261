//! Turning the rings' events into a recording: the tracks merged in time
//! order, tasks given ids, runs closed, and inherited spawn times bounded
//! ([`merge`]'s docs).

use super::event::{self, Unpacked};
use super::recording::{EventKind, RecordedEvent, Track};
use super::site::SpawnSite;
use std::collections::HashMap;

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
/// task's. The run of a stolen fork (an anonymous task, the thief's next
/// run after its `ForkStolen`) takes the fork's id, and a fork shared with
/// its join's site (at `Tasks` level) gives that id the site, so that the
/// run is named and timed by the join that made it.
///
/// **Run ends.** A worker records when a run begins, not when it ends
/// (except a panicking one): that saves an event and a clock read per task.
/// A run ends where the next event of its level on its track happens: the
/// next run's begin, a change of state away from running (searching,
/// sleeping, ...), or, for a run inside a wait, the wait's end. Runs nest,
/// as a stack per track, when a task waits inside another (`WaitBegin`
/// opens a level, `WaitEnd` closes it). The `RunEnd` events of the
/// recording are made here.
#[cfg(test)]
pub(crate) fn merge(tracks: Vec<TrackEvents>, taken_at_ns: u64) -> Vec<RecordedEvent> {
    merge_with_sites(tracks, taken_at_ns).0
}

/// [`merge`], and each spawned task's or shared fork's site by its id
/// (`event::site_of`).
pub(crate) fn merge_with_sites(
    tracks: Vec<TrackEvents>,
    taken_at_ns: u64,
) -> (Vec<RecordedEvent>, HashMap<u64, SpawnSite>) {
    let all = in_time_order(tracks, taken_at_ns);

    // Spawns first, so that a run finds its spawn's id wherever it is.
    let mut ids: HashMap<u64, u64> = HashMap::new();
    let mut sites: HashMap<u64, SpawnSite> = HashMap::new();
    // One `SpawnSite` (its file copied) per distinct location.
    let mut made: HashMap<*const std::panic::Location<'static>, SpawnSite> = HashMap::new();
    let mut next = 0u64;
    for timed in &all {
        if timed.event.kind == event::SPAWN && timed.event.c != 0 {
            next += 1;
            ids.insert(timed.event.c, next);
            if let Some(location) = event::site_of(&timed.event) {
                let site = made
                    .entry(std::ptr::from_ref(location))
                    .or_insert_with(|| SpawnSite::from(location));
                sites.insert(next, site.clone());
            }
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
        /// The fork this track just stole (`ForkStolen`): its run, the
        /// next one to begin, an anonymous task, takes the fork's id.
        stolen_fork: Option<u64>,
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
                let stolen_fork = at.stolen_fork.take();
                let id = if raw != 0 {
                    Some(*ids.entry(raw).or_insert_with(|| {
                        // Spawned before the oldest event kept.
                        next += 1;
                        next
                    }))
                } else {
                    stolen_fork
                };
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
                if let Some(location) = event::site_of(&event) {
                    let site = made
                        .entry(std::ptr::from_ref(location))
                        .or_insert_with(|| SpawnSite::from(location));
                    sites.insert(next, site.clone());
                }
                Some(next)
            }
            event::FORK_STOLEN => {
                let id = fork_ids.get(&raw).copied();
                at.stolen_fork = id;
                id
            }
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
    (events, sites)
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
