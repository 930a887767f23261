//! A recording laid out as a trace: rows (lanes), slices, instants, counter
//! samples and flows. Both writers (Perfetto's protobuf, Chrome JSON) encode
//! this one layout, so the two files show the same thing and the pairing of
//! run begins with run ends is decided once.
//!
//! (It lives under `perfetto/` because the recorder's `mod.rs` is not the
//! writers' to edit; `chrome_json.rs` reaches it as `super::perfetto::timeline`.)

use crate::recorder::recording::{EventKind, Recording, SpawnQueue, Track, WorkerActivity};
use std::collections::{HashMap, HashSet};

/// A row of the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Lane {
    /// A worker's task runs, and what tasks do there: spawn, wait, panic.
    Tasks(usize),
    /// A worker's state slices (running, searching, ...) and its scheduler
    /// instants (steals, global pulls, wakes, unparks, respawns).
    ///
    /// Why a lane of its own rather than the task lane: slices on one track
    /// must nest, and states do not nest with runs. A task that waits inside
    /// another (a `join` on a handle) lets its worker go searching and
    /// sleeping while the outer run is still open, so a "searching" slice
    /// would start inside the run and end after it. On a child track of the
    /// worker's, states line up under the runs they explain and the run
    /// stack stays readable.
    State(usize),
    /// A thread outside the pool: its spawns and unparks.
    Outside(usize),
}

impl Lane {
    /// The lane of an event: task-level events on a worker go to its task
    /// lane, scheduler events to its state lane.
    fn of(track: Track, scheduler: bool) -> Lane {
        match track {
            Track::Worker(i) if scheduler => Lane::State(i),
            Track::Worker(i) => Lane::Tasks(i),
            Track::Outside(i) => Lane::Outside(i),
        }
    }
}

/// What a slice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SliceName {
    /// A task's run, by its id when it has one.
    Task(Option<u64>),
    /// A worker's state.
    State(WorkerActivity),
}

impl SliceName {
    /// The slice's name: a task's spawn site when `recording` has one
    /// (`src/server.rs:88`: where its time went, the question a timeline is
    /// read for; the id stays in the slice's `task` argument), else
    /// `task N`.
    pub(crate) fn text(self, recording: &Recording) -> String {
        match self {
            SliceName::Task(Some(task)) => match recording.task_site(task) {
                Some(site) => site.to_string(),
                None => format!("task {task}"),
            },
            SliceName::Task(None) => "task".to_owned(),
            SliceName::State(activity) => activity.name().to_owned(),
        }
    }

    pub(crate) fn category(self) -> &'static str {
        match self {
            SliceName::Task(_) => "task",
            SliceName::State(_) => "scheduler",
        }
    }
}

/// A slice, with both of its ends.
#[derive(Debug, Clone)]
pub(crate) struct Slice {
    pub(crate) lane: Lane,
    pub(crate) begin_ns: u64,
    pub(crate) end_ns: u64,
    pub(crate) name: SliceName,
    /// The task's id, when its spawn is in the recording too: the flow from
    /// the spawn ends at this slice.
    pub(crate) flow_in: Option<u64>,
    /// The run ended in a panic.
    pub(crate) panicked: bool,
    /// Still open when the recording was taken: closed at its end.
    pub(crate) unfinished: bool,
}

/// A value in an event's arguments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Arg {
    Uint(u64),
    Bool(bool),
    Str(&'static str),
}

/// A point event.
#[derive(Debug, Clone)]
pub(crate) struct Instant {
    pub(crate) lane: Lane,
    pub(crate) time_ns: u64,
    pub(crate) name: &'static str,
    pub(crate) category: &'static str,
    pub(crate) args: Vec<(&'static str, Arg)>,
    /// The task's id, when this is a spawn whose run is in the recording
    /// (or a fork's, when this shares a fork that is stolen in it): a flow
    /// starts here.
    pub(crate) flow_out: Option<u64>,
    /// The fork's id, when this is a stolen fork whose sharing is in the
    /// recording: the flow ends here.
    pub(crate) flow_in: Option<u64>,
}

/// A sample of a worker's local queue depth.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DepthSample {
    pub(crate) worker: usize,
    pub(crate) time_ns: u64,
    pub(crate) depth: u64,
}

/// One step of the trace, in time order.
#[derive(Debug, Clone)]
pub(crate) enum Item {
    /// `slices[i]` begins.
    Begin(usize),
    /// `slices[i]` ends.
    End(usize),
    Instant(Instant),
    Depth(DepthSample),
}

/// The whole layout.
#[derive(Debug)]
pub(crate) struct Timeline {
    /// Every begin and end, instant and sample, in time order; at one
    /// instant, in the order that keeps slices nested (an inner end before
    /// its outer end).
    pub(crate) items: Vec<Item>,
    pub(crate) slices: Vec<Slice>,
    /// Workers whose local queue depth was sampled.
    pub(crate) sampled_depth: HashSet<usize>,
}

/// Lays `recording` out.
///
/// Task runs are a stack per worker (a task that waits runs others inside
/// its own run). The rings keep the newest events, so the oldest run's
/// begin may be gone while its end is kept: such an end is dropped, never
/// drawn as a slice without a start. A run still open when the recording
/// was taken is closed at [`Recording::taken_at_ns`] and marked
/// `unfinished`: a dump taken because something hangs should show what was
/// running, not hide it. State slices are closed the same way.
pub(crate) fn lay_out(recording: &Recording) -> Timeline {
    let events = recording.events();
    // Only a task with both ends in the recording gets a flow: a flow with
    // one end is drawn as an arrow from (or to) nowhere.
    // (Fork ids come from the same sequence as task ids: one set each.)
    let mut spawned = HashSet::new();
    let mut ran = HashSet::new();
    // A stolen fork's run carries the fork's id, but its flow ends at the
    // `ForkStolen` instant: a run's flow comes only from a spawn.
    let mut spawned_tasks = HashSet::new();
    for event in events {
        match event.kind {
            EventKind::Spawn { task, .. } => {
                spawned.insert(task);
                spawned_tasks.insert(task);
            }
            EventKind::ForkShared { fork } => {
                spawned.insert(fork);
            }
            EventKind::RunBegin { task: Some(task) }
            | EventKind::ForkStolen {
                fork: Some(task), ..
            } => {
                ran.insert(task);
            }
            _ => {}
        }
    }
    let end_ns = events
        .last()
        .map_or(0, |e| e.time_ns)
        .max(recording.taken_at_ns());

    let mut timeline = Timeline {
        items: Vec::with_capacity(events.len()),
        slices: Vec::new(),
        sampled_depth: HashSet::new(),
    };
    // Per track, the open runs: (slice index, task id).
    let mut runs: HashMap<Track, Vec<(usize, Option<u64>)>> = HashMap::new();
    // Per worker, the open state slice.
    let mut states: HashMap<usize, usize> = HashMap::new();

    for event in events {
        let time_ns = event.time_ns;
        let instant = |timeline: &mut Timeline,
                       scheduler: bool,
                       name: &'static str,
                       args: Vec<(&'static str, Arg)>| {
            timeline.items.push(Item::Instant(Instant {
                lane: Lane::of(event.track, scheduler),
                time_ns,
                name,
                category: if scheduler { "scheduler" } else { "task" },
                args,
                flow_out: None,
                flow_in: None,
            }));
        };
        let depth = |timeline: &mut Timeline, depth: u64| {
            if let Track::Worker(worker) = event.track {
                timeline.sampled_depth.insert(worker);
                timeline.items.push(Item::Depth(DepthSample {
                    worker,
                    time_ns,
                    depth,
                }));
            }
        };
        // No wildcard arm: a new kind of event must be given a place here.
        match event.kind {
            EventKind::Spawn {
                task,
                queue,
                within_ns,
            } => {
                let mut args = vec![("task", Arg::Uint(task))];
                if within_ns > 0 {
                    // Its time was its worker's latest clock reading: say
                    // how much later it may have been.
                    args.push(("within_ns", Arg::Uint(within_ns)));
                }
                match queue {
                    SpawnQueue::Local => args.push(("queue", Arg::Str("local"))),
                    SpawnQueue::Global => args.push(("queue", Arg::Str("global"))),
                    SpawnQueue::Inbox { worker } => {
                        args.push(("queue", Arg::Str("inbox")));
                        args.push(("for_worker", Arg::Uint(worker as u64)));
                    }
                }
                timeline.items.push(Item::Instant(Instant {
                    lane: Lane::of(event.track, false),
                    time_ns,
                    name: "spawn",
                    category: "task",
                    args,
                    flow_out: ran.contains(&task).then_some(task),
                    flow_in: None,
                }));
            }
            EventKind::RunBegin { task } => {
                let slice = timeline.open(Slice {
                    lane: Lane::of(event.track, false),
                    begin_ns: time_ns,
                    end_ns: time_ns,
                    name: SliceName::Task(task),
                    flow_in: task.filter(|t| spawned_tasks.contains(t)),
                    panicked: false,
                    unfinished: false,
                });
                runs.entry(event.track).or_default().push((slice, task));
            }
            EventKind::RunEnd { task, panicked } => {
                let stack = runs.entry(event.track).or_default();
                // Its begin fell out of the ring: nothing to close.
                let Some(at) = stack.iter().rposition(|&(_, t)| t == task) else {
                    continue;
                };
                // Runs opened above it whose ends were lost (a ring keeps a
                // suffix of its events, so this does not happen; if it did,
                // closing them here keeps the slices nested).
                while stack.len() > at + 1 {
                    let (inner, _) = stack.pop().expect("longer than at + 1");
                    timeline.close(inner, time_ns, true);
                }
                let (slice, _) = stack.pop().expect("at is in the stack");
                timeline.slices[slice].panicked = panicked;
                timeline.close(slice, time_ns, false);
            }
            EventKind::GlobalPull { batch, local_depth } => {
                instant(
                    &mut timeline,
                    true,
                    "global pull",
                    vec![
                        ("batch", Arg::Uint(u64::from(batch))),
                        ("local_depth", Arg::Uint(local_depth)),
                    ],
                );
                depth(&mut timeline, local_depth);
            }
            EventKind::Steal {
                victim,
                batch,
                local_depth,
            } => {
                instant(
                    &mut timeline,
                    true,
                    "steal",
                    vec![
                        ("victim", Arg::Uint(victim as u64)),
                        ("batch", Arg::Uint(u64::from(batch))),
                        ("local_depth", Arg::Uint(local_depth)),
                    ],
                );
                depth(&mut timeline, local_depth);
            }
            EventKind::State(activity) => {
                let Track::Worker(worker) = event.track else {
                    continue;
                };
                if let Some(open) = states.remove(&worker) {
                    timeline.close(open, time_ns, false);
                }
                let slice = timeline.open(Slice {
                    lane: Lane::State(worker),
                    begin_ns: time_ns,
                    end_ns: time_ns,
                    name: SliceName::State(activity),
                    flow_in: None,
                    panicked: false,
                    unfinished: false,
                });
                states.insert(worker, slice);
            }
            EventKind::Wake { handoff } => {
                instant(
                    &mut timeline,
                    true,
                    "wake",
                    vec![("handoff", Arg::Bool(handoff))],
                );
            }
            EventKind::NoopWakeup => instant(&mut timeline, true, "no-op wakeup", Vec::new()),
            EventKind::Unpark { worker } => {
                instant(
                    &mut timeline,
                    true,
                    "unpark",
                    vec![("worker", Arg::Uint(worker as u64))],
                );
            }
            EventKind::Respawn => instant(&mut timeline, true, "respawn", Vec::new()),
            EventKind::Panic { task } => {
                let args = task.map_or_else(Vec::new, |t| vec![("task", Arg::Uint(t))]);
                instant(&mut timeline, false, "panic", args);
            }
            EventKind::WaitBegin => instant(&mut timeline, false, "wait begin", Vec::new()),
            EventKind::WaitEnd => instant(&mut timeline, false, "wait end", Vec::new()),
            EventKind::ForkShared { fork } => {
                timeline.items.push(Item::Instant(Instant {
                    lane: Lane::of(event.track, false),
                    time_ns,
                    name: "fork shared",
                    category: "fork",
                    args: vec![("fork", Arg::Uint(fork))],
                    flow_out: ran.contains(&fork).then_some(fork),
                    flow_in: None,
                }));
            }
            EventKind::ForkStolen { fork, owner } => {
                let mut args = vec![("owner", Arg::Uint(owner as u64))];
                if let Some(fork) = fork {
                    args.push(("fork", Arg::Uint(fork)));
                }
                timeline.items.push(Item::Instant(Instant {
                    lane: Lane::of(event.track, false),
                    time_ns,
                    name: "fork stolen",
                    category: "fork",
                    args,
                    flow_out: None,
                    flow_in: fork.filter(|f| spawned.contains(f)),
                }));
            }
        }
    }

    // Close what is still open at the recording's end, innermost first.
    // (Sorted, so that the output does not depend on HashMap order.)
    let mut open_runs: Vec<_> = runs.into_iter().collect();
    open_runs.sort_by_key(|(track, _)| *track);
    for (_, mut stack) in open_runs {
        while let Some((slice, _)) = stack.pop() {
            timeline.close(slice, end_ns, true);
        }
    }
    let mut open_states: Vec<_> = states.into_iter().collect();
    open_states.sort_unstable();
    for (_, slice) in open_states {
        timeline.close(slice, end_ns, true);
    }
    timeline
}

impl Timeline {
    fn open(&mut self, slice: Slice) -> usize {
        self.slices.push(slice);
        let index = self.slices.len() - 1;
        self.items.push(Item::Begin(index));
        index
    }

    fn close(&mut self, slice: usize, end_ns: u64, unfinished: bool) {
        let s = &mut self.slices[slice];
        s.end_ns = end_ns.max(s.begin_ns);
        s.unfinished = unfinished;
        self.items.push(Item::End(slice));
    }
}
