//! A recording: the events the flight recorder kept, in time order, ready
//! to inspect or to write out for Perfetto.

use super::level::RecordLevel;
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

impl WorkerActivity {
    /// Every activity, in the order of a worker's life.
    pub const ALL: [WorkerActivity; 5] = [
        WorkerActivity::Running,
        WorkerActivity::Searching,
        WorkerActivity::Sleeping,
        WorkerActivity::Respawning,
        WorkerActivity::Stopped,
    ];

    /// Its name in lower case, as the trace writers name its slices
    /// (`"running"`, `"searching"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            WorkerActivity::Running => "running",
            WorkerActivity::Searching => "searching",
            WorkerActivity::Sleeping => "sleeping",
            WorkerActivity::Respawning => "respawning",
            WorkerActivity::Stopped => "stopped",
        }
    }
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
    /// Each recorded task's spawn site, by task id (`Tasks` level).
    pub(crate) sites: std::collections::HashMap<u64, super::SpawnSite>,
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
            sites: std::collections::HashMap::new(),
        }
    }

    /// This recording with `sites` as its tasks' spawn sites (task id,
    /// site): for tools that rebuild a recording ([`from_parts`](Self::from_parts))
    /// and carried the sites with it.
    #[must_use]
    pub fn with_sites(mut self, sites: impl IntoIterator<Item = (u64, super::SpawnSite)>) -> Self {
        self.sites.extend(sites);
        self
    }

    /// Where task `task` (an id of this recording's events) was spawned:
    /// the caller of `spawn`, `try_spawn`, `spawn_with_handle` or a scope's
    /// `spawn`; for a fork of a join that another worker took (the id of a
    /// `ForkShared`, which its run carries too), the caller of `join`.
    /// `None` for a task whose spawn is not in the recording (it is older
    /// than the oldest event kept) or carried no site.
    ///
    /// ```
    /// use dreadpool::{EventKind, RecordLevel, ThreadPoolBuilder};
    ///
    /// let pool = ThreadPoolBuilder::new()
    ///     .with_threads(1)
    ///     .with_record_level(RecordLevel::Tasks)
    ///     .build();
    /// let line = line!() + 1;
    /// pool.spawn(|| {});
    /// pool.join();
    /// let recording = pool.recording();
    /// let task = recording.events().iter().find_map(|e| match e.kind {
    ///     EventKind::Spawn { task, .. } => Some(task),
    ///     _ => None,
    /// }).unwrap();
    /// assert_eq!(recording.task_site(task).unwrap().line(), line);
    /// ```
    pub fn task_site(&self, task: u64) -> Option<&super::SpawnSite> {
        self.sites.get(&task)
    }

    /// Every task with a known spawn site, with its site, in no particular
    /// order.
    pub fn task_sites(&self) -> impl Iterator<Item = (u64, &super::SpawnSite)> + '_ {
        self.sites.iter().map(|(task, site)| (*task, site))
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
