//! Flight recordings over the wire (feature `recorder`): the request, the
//! serde mirror of the core's recorded events, and the reply, rebuilt into
//! a [`Recording`] on the client with [`Recording::from_parts`].
//!
//! The mirror is a flat object per event (`t`, `w` or `o`, `k`, and the
//! kind's arguments) rather than serde's tagged enums: it is about 40 to 70
//! bytes an event, it reads without buffering (a Tasks-level recording of a
//! busy pool is hundreds of thousands of events), and an event kind a newer
//! exporter adds is skipped by an older client instead of failing the
//! whole reply.

use dreadpool_core::{
    EventKind, RecordLevel, RecordedEvent, Recording, SpawnQueue, Track, WorkerActivity,
};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The most events an exporter puts in one `recording` reply by default
/// ([`ExporterBuilder::max_recording_events`](crate::ExporterBuilder::max_recording_events)):
/// at about 70 bytes an event, a reply of at most about 35 MB.
pub const DEFAULT_MAX_RECORDING_EVENTS: usize = 500_000;

/// The most events an exporter can be configured to send in one reply: at
/// most 128 bytes an event (the longest event line, with every number at
/// its widest, is under that), a reply always fits within a [`Client`]'s
/// line limit of 256 MiB.
///
/// [`Client`]: crate::Client
pub const MAX_RECORDING_EVENTS: usize = 2_000_000;

/// A request for a pool's flight recording, sent with
/// [`Client::request_recording`](crate::Client::request_recording) or
/// [`Requester::request_recording`](crate::Requester::request_recording).
///
/// The exporter takes a recording of the pool (a copy of its rings, on the
/// exporter's thread for this client: the pool's workers never wait), keeps
/// the events this asks for, and sends them back as one `recording` line.
/// A client's requests are answered in order, and its next recording is
/// made only once the previous one has been written to it.
///
/// ```
/// use dreadpool::RecordLevel;
/// use dreadpool::metrics::RecordingRequest;
///
/// // Only the scheduler's events newer than t = 5 s, at most 20,000 of them:
/// // a small, cheap digest for a live timeline.
/// let digest = RecordingRequest::pool(1)
///     .since_ns(5_000_000_000)
///     .level(RecordLevel::Scheduler)
///     .max_events(20_000);
/// assert_eq!(digest.pool_index(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordingRequest {
    #[serde(rename = "request")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<u64>,
    pool: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    since_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    level: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_events: Option<usize>,
}

impl RecordingRequest {
    /// Everything the exporter will send of the pool at `index` (its
    /// position in the hello's `pools`).
    pub fn pool(index: usize) -> Self {
        RecordingRequest {
            kind: "recording",
            id: None,
            pool: index,
            since_ns: None,
            level: None,
            max_events: None,
        }
    }

    /// Only events after `time_ns` (on the host's recorder clock, as
    /// [`Recording::taken_at_ns`] and the events' `time_ns` are): for
    /// fetching only what is new since the last reply.
    pub fn since_ns(mut self, time_ns: u64) -> Self {
        self.since_ns = Some(time_ns);
        self
    }

    /// Only events of this level and below: `Scheduler` leaves out every
    /// spawn and task run, which are most of a Tasks-level recording.
    /// `Off` asks for no events (the reply still says the pool's level and
    /// names).
    pub fn level(mut self, level: RecordLevel) -> Self {
        self.level = Some(match level {
            RecordLevel::Off => "off",
            RecordLevel::Scheduler => "scheduler",
            RecordLevel::Tasks => "tasks",
        });
        self
    }

    /// At most `events` events, the newest (the exporter also applies its
    /// own limit, [`DEFAULT_MAX_RECORDING_EVENTS`] unless configured).
    pub fn max_events(mut self, events: usize) -> Self {
        self.max_events = Some(events);
        self
    }

    /// An id the reply carries back, to match replies to requests.
    pub fn id(mut self, id: u64) -> Self {
        self.id = Some(id);
        self
    }

    /// The pool's index this asks for.
    pub fn pool_index(&self) -> usize {
        self.pool
    }

    /// The request line, newline included.
    pub(crate) fn line(&self) -> Vec<u8> {
        // A struct of numbers and static strings: serialising cannot fail.
        let mut line = crate::json::to_vec(self).unwrap_or_default();
        line.push(b'\n');
        line
    }
}

/// A `recording` reply, as a [`Client`](crate::Client) reads it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RecordingReply {
    /// The request's id, if it had one.
    pub id: Option<u64>,
    /// The pool's index in the hello's `pools`.
    pub pool: usize,
    /// The recording, rebuilt with [`Recording::from_parts`]: write it with
    /// `write_perfetto` or `write_chrome_json` as if taken in this process.
    pub recording: Recording,
    /// Events the request matched but the reply left out for its event
    /// limit (the oldest ones).
    pub omitted: u64,
    /// How long the exporter took to take the recording: what a pull
    /// costs the host, for a client to pace its pulls.
    pub took: Duration,
}

/// The reply's body: the `recording` message without its `type` (written
/// and read as one object with it).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Body {
    #[serde(default)]
    pub(crate) v: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) id: Option<u64>,
    #[serde(default)]
    pub(crate) pool: usize,
    #[serde(default)]
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) level: String,
    #[serde(default)]
    pub(crate) workers: Vec<String>,
    #[serde(default)]
    pub(crate) outside_threads: Vec<String>,
    #[serde(default)]
    pub(crate) taken_at_ns: u64,
    #[serde(default)]
    pub(crate) lost_events: u64,
    #[serde(default)]
    pub(crate) omitted: u64,
    #[serde(default)]
    pub(crate) took_ns: u64,
    #[serde(default)]
    pub(crate) events: Vec<WireEvent>,
    /// The spawn sites the events name, each once (`file:line:column`): a
    /// `spawn`'s `site` is an index into it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) sites: Vec<String>,
}

/// The `recording` message as written: `type` first, so that a client can
/// tell it from its first bytes and read it without buffering.
#[derive(Serialize)]
struct Tagged<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    body: &'a Body,
}

/// The start of every `recording` line this crate writes.
pub(crate) const LINE_START: &[u8] = br#"{"type":"recording","#;

use crate::protocol::RecordingParams as Params;

/// Why a recording request cannot be answered.
#[derive(Debug)]
pub(crate) enum Refusal {
    NoSuchPool { pool: usize, pools: usize },
    BadLevel(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NoSuchPool { pool, pools } => write!(
                f,
                "no pool {pool}: this exporter serves {pools} (pools count from 0, in hello order)"
            ),
            Refusal::BadLevel(level) => write!(
                f,
                "unknown level {level:?} (expected off, scheduler or tasks)"
            ),
        }
    }
}

/// Takes `handle`'s recording and serialises the reply `params` ask for,
/// with at most `limit` events.
pub(crate) fn answer(
    handle: &dreadpool_core::Handle,
    index: usize,
    params: &Params,
    limit: usize,
) -> Result<Vec<u8>, Refusal> {
    let level = match params.level.as_deref() {
        None => RecordLevel::Tasks,
        Some(text) => text
            .parse::<RecordLevel>()
            .map_err(|_| Refusal::BadLevel(text.to_owned()))?,
    };
    let started = std::time::Instant::now();
    let recording = handle.recording();
    let took = started.elapsed();
    let since = params.since_ns;
    let wanted = |e: &&RecordedEvent| {
        since.is_none_or(|t| e.time_ns > t)
            && level_of(&e.kind) <= level
            && level > RecordLevel::Off
    };
    let matching: Vec<&RecordedEvent> = recording.events().iter().filter(wanted).collect();
    let limit = params.max_events.unwrap_or(limit).min(limit);
    let omitted = matching.len().saturating_sub(limit);
    // Each distinct site once, in the order the events first name them.
    let mut sites: Vec<String> = Vec::new();
    let mut site_index: std::collections::HashMap<&dreadpool_core::SpawnSite, u32> =
        std::collections::HashMap::new();
    let events = matching[omitted..]
        .iter()
        .filter_map(|e| {
            let mut wire = WireEvent::from_event(e)?;
            if let EventKind::Spawn { task, .. } = e.kind {
                if let Some(site) = recording.task_site(task) {
                    let index = *site_index.entry(site).or_insert_with(|| {
                        sites.push(format!("{}:{}:{}", site.file(), site.line(), site.column()));
                        (sites.len() - 1) as u32
                    });
                    wire.site = Some(index);
                }
            }
            Some(wire)
        })
        .collect();
    let body = Body {
        v: crate::protocol::SCHEMA_VERSION,
        id: params.id,
        pool: index,
        name: recording.pool().to_owned(),
        level: recording.level().to_string(),
        workers: recording.worker_names().to_vec(),
        outside_threads: recording.outside_threads().to_vec(),
        taken_at_ns: recording.taken_at_ns(),
        lost_events: recording.lost_events(),
        omitted: omitted as u64,
        took_ns: u64::try_from(took.as_nanos()).unwrap_or(u64::MAX),
        events,
        sites,
    };
    let mut line = crate::json::to_vec(&Tagged {
        kind: "recording",
        body: &body,
    })
    .unwrap_or_default();
    line.push(b'\n');
    Ok(line)
}

/// The least level at which the recorder records an event of this kind.
fn level_of(kind: &EventKind) -> RecordLevel {
    match kind {
        EventKind::Spawn { .. } | EventKind::RunBegin { .. } | EventKind::RunEnd { .. } => {
            RecordLevel::Tasks
        }
        _ => RecordLevel::Scheduler,
    }
}

impl Body {
    /// The reply, with the recording rebuilt.
    pub(crate) fn into_reply(self) -> RecordingReply {
        let level = self.level.parse().unwrap_or(RecordLevel::Scheduler);
        // A site that does not parse, or an index past the table, is left
        // out: the task keeps its events, without a site.
        let table: Vec<Option<dreadpool_core::SpawnSite>> =
            self.sites.iter().map(|s| s.parse().ok()).collect();
        let mut task_sites = Vec::new();
        for wire in &self.events {
            if let (Kind::Spawn, Some(task), Some(index)) = (wire.k, wire.task, wire.site) {
                if let Some(Some(site)) = table.get(index as usize) {
                    task_sites.push((task, site.clone()));
                }
            }
        }
        let events = self
            .events
            .into_iter()
            .filter_map(WireEvent::into_event)
            .collect();
        RecordingReply {
            id: self.id,
            pool: self.pool,
            recording: Recording::from_parts(
                self.name,
                level,
                self.workers,
                self.outside_threads,
                events,
                self.lost_events,
                self.taken_at_ns,
            )
            .with_sites(task_sites),
            omitted: self.omitted,
            took: Duration::from_nanos(self.took_ns),
        }
    }
}

/// One event on the wire. Only the fields of its kind are present.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WireEvent {
    /// `time_ns`.
    pub(crate) t: u64,
    /// A worker's track.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) w: Option<usize>,
    /// An outside thread's track.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) o: Option<usize>,
    /// The kind.
    pub(crate) k: Kind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) task: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) queue: Option<Queue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) worker: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) victim: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) batch: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) depth: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) state: Option<State>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub(crate) panicked: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub(crate) handoff: bool,
    /// A fork's id in the recording (`fork_shared`, `fork_stolen`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) fork: Option<u64>,
    /// The worker whose join a stolen fork belongs to (`fork_stolen`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) owner: Option<usize>,
    /// A spawn's `within_ns`, when not 0 (`spawn`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) within: Option<u64>,
    /// A spawn's site: an index into the reply's `sites` (`spawn`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) site: Option<u32>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// An event's kind on the wire.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    Spawn,
    RunBegin,
    RunEnd,
    GlobalPull,
    Steal,
    State,
    Wake,
    NoopWakeup,
    Unpark,
    Respawn,
    Panic,
    WaitBegin,
    WaitEnd,
    ForkShared,
    ForkStolen,
    /// A kind a newer exporter sends: skipped.
    #[default]
    #[serde(other)]
    Other,
}

/// A spawn's queue on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Queue {
    Local,
    Global,
    Inbox,
    #[serde(other)]
    Other,
}

/// A worker activity on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum State {
    Running,
    Searching,
    Sleeping,
    Respawning,
    Stopped,
    #[serde(other)]
    Other,
}

impl WireEvent {
    /// The wire form; `None` for a kind this crate does not know (the
    /// core's `EventKind` may grow).
    pub(crate) fn from_event(event: &RecordedEvent) -> Option<WireEvent> {
        let mut wire = WireEvent {
            t: event.time_ns,
            ..WireEvent::default()
        };
        match event.track {
            Track::Worker(i) => wire.w = Some(i),
            Track::Outside(i) => wire.o = Some(i),
        }
        wire.k = match event.kind {
            EventKind::Spawn {
                task,
                queue,
                within_ns,
            } => {
                wire.task = Some(task);
                wire.within = (within_ns > 0).then_some(within_ns);
                wire.queue = Some(match queue {
                    SpawnQueue::Local => Queue::Local,
                    SpawnQueue::Global => Queue::Global,
                    SpawnQueue::Inbox { worker } => {
                        wire.worker = Some(worker);
                        Queue::Inbox
                    }
                });
                Kind::Spawn
            }
            EventKind::RunBegin { task } => {
                wire.task = task;
                Kind::RunBegin
            }
            EventKind::RunEnd { task, panicked } => {
                wire.task = task;
                wire.panicked = panicked;
                Kind::RunEnd
            }
            EventKind::GlobalPull { batch, local_depth } => {
                wire.batch = Some(batch);
                wire.depth = Some(local_depth);
                Kind::GlobalPull
            }
            EventKind::Steal {
                victim,
                batch,
                local_depth,
            } => {
                wire.victim = Some(victim);
                wire.batch = Some(batch);
                wire.depth = Some(local_depth);
                Kind::Steal
            }
            EventKind::State(activity) => {
                wire.state = Some(match activity {
                    WorkerActivity::Running => State::Running,
                    WorkerActivity::Searching => State::Searching,
                    WorkerActivity::Sleeping => State::Sleeping,
                    WorkerActivity::Respawning => State::Respawning,
                    WorkerActivity::Stopped => State::Stopped,
                });
                Kind::State
            }
            EventKind::Wake { handoff } => {
                wire.handoff = handoff;
                Kind::Wake
            }
            EventKind::NoopWakeup => Kind::NoopWakeup,
            EventKind::Unpark { worker } => {
                wire.worker = Some(worker);
                Kind::Unpark
            }
            EventKind::Respawn => Kind::Respawn,
            EventKind::Panic { task } => {
                wire.task = task;
                Kind::Panic
            }
            EventKind::WaitBegin => Kind::WaitBegin,
            EventKind::WaitEnd => Kind::WaitEnd,
            EventKind::ForkShared { fork } => {
                wire.fork = Some(fork);
                Kind::ForkShared
            }
            EventKind::ForkStolen { fork, owner } => {
                wire.fork = fork;
                wire.owner = Some(owner);
                Kind::ForkStolen
            }
            _ => return None,
        };
        Some(wire)
    }

    /// The core's event; `None` for a kind, queue or state this crate does
    /// not know, or an event on no track.
    pub(crate) fn into_event(self) -> Option<RecordedEvent> {
        let track = match (self.w, self.o) {
            (Some(i), _) => Track::Worker(i),
            (None, Some(i)) => Track::Outside(i),
            (None, None) => return None,
        };
        let kind = match self.k {
            Kind::Spawn => EventKind::Spawn {
                task: self.task?,
                queue: match self.queue? {
                    Queue::Local => SpawnQueue::Local,
                    Queue::Global => SpawnQueue::Global,
                    Queue::Inbox => SpawnQueue::Inbox {
                        worker: self.worker?,
                    },
                    Queue::Other => return None,
                },
                within_ns: self.within.unwrap_or(0),
            },
            Kind::RunBegin => EventKind::RunBegin { task: self.task },
            Kind::RunEnd => EventKind::RunEnd {
                task: self.task,
                panicked: self.panicked,
            },
            Kind::GlobalPull => EventKind::GlobalPull {
                batch: self.batch.unwrap_or(0),
                local_depth: self.depth.unwrap_or(0),
            },
            Kind::Steal => EventKind::Steal {
                victim: self.victim?,
                batch: self.batch.unwrap_or(0),
                local_depth: self.depth.unwrap_or(0),
            },
            Kind::State => EventKind::State(match self.state? {
                State::Running => WorkerActivity::Running,
                State::Searching => WorkerActivity::Searching,
                State::Sleeping => WorkerActivity::Sleeping,
                State::Respawning => WorkerActivity::Respawning,
                State::Stopped => WorkerActivity::Stopped,
                State::Other => return None,
            }),
            Kind::Wake => EventKind::Wake {
                handoff: self.handoff,
            },
            Kind::NoopWakeup => EventKind::NoopWakeup,
            Kind::Unpark => EventKind::Unpark {
                worker: self.worker?,
            },
            Kind::Respawn => EventKind::Respawn,
            Kind::Panic => EventKind::Panic { task: self.task },
            Kind::WaitBegin => EventKind::WaitBegin,
            Kind::WaitEnd => EventKind::WaitEnd,
            Kind::ForkShared => EventKind::ForkShared { fork: self.fork? },
            Kind::ForkStolen => EventKind::ForkStolen {
                fork: self.fork,
                owner: self.owner?,
            },
            Kind::Other => return None,
        };
        Some(RecordedEvent {
            time_ns: self.t,
            track,
            kind,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `text` with the crate's codec, as the exporter and client do.
    fn parse<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, crate::json::Error> {
        crate::json::from_slice(text.as_bytes())
    }

    fn every_kind() -> Vec<RecordedEvent> {
        let kinds = [
            EventKind::Spawn {
                task: 1,
                queue: SpawnQueue::Local,
                within_ns: 0,
            },
            EventKind::Spawn {
                task: 4,
                queue: SpawnQueue::Local,
                within_ns: 250,
            },
            EventKind::Spawn {
                task: 2,
                queue: SpawnQueue::Global,
                within_ns: 0,
            },
            EventKind::Spawn {
                task: 3,
                queue: SpawnQueue::Inbox { worker: 1 },
                within_ns: 0,
            },
            EventKind::RunBegin { task: Some(1) },
            EventKind::RunBegin { task: None },
            EventKind::RunEnd {
                task: Some(1),
                panicked: true,
            },
            EventKind::GlobalPull {
                batch: 4,
                local_depth: 3,
            },
            EventKind::Steal {
                victim: 1,
                batch: 2,
                local_depth: 1,
            },
            EventKind::State(WorkerActivity::Running),
            EventKind::State(WorkerActivity::Searching),
            EventKind::State(WorkerActivity::Sleeping),
            EventKind::State(WorkerActivity::Respawning),
            EventKind::State(WorkerActivity::Stopped),
            EventKind::Wake { handoff: true },
            EventKind::NoopWakeup,
            EventKind::Unpark { worker: 2 },
            EventKind::Respawn,
            EventKind::Panic { task: Some(9) },
            EventKind::WaitBegin,
            EventKind::WaitEnd,
            EventKind::ForkShared { fork: 7 },
            EventKind::ForkStolen {
                fork: Some(7),
                owner: 0,
            },
            EventKind::ForkStolen {
                fork: None,
                owner: 1,
            },
        ];
        kinds
            .into_iter()
            .enumerate()
            .map(|(i, kind)| RecordedEvent {
                time_ns: 1_000 + i as u64,
                track: if i % 3 == 0 {
                    Track::Outside(0)
                } else {
                    Track::Worker(i % 2)
                },
                kind,
            })
            .collect()
    }

    #[test]
    fn every_kind_round_trips_through_json() {
        for event in every_kind() {
            let wire = WireEvent::from_event(&event).unwrap();
            let json = String::from_utf8(crate::json::to_vec(&wire).unwrap()).unwrap();
            assert!(json.len() < 128, "{json}");
            let back: WireEvent = parse(&json).unwrap();
            assert_eq!(back.into_event(), Some(event), "{json}");
        }
    }

    #[test]
    fn a_stolen_fork_travels_with_its_link() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let pool = dreadpool_core::ThreadPoolBuilder::new()
            .with_threads(2)
            .with_record_level(RecordLevel::Scheduler)
            .build();
        // `a` waits for `b` to start: `b` is shared and another worker
        // takes it.
        let started = AtomicBool::new(false);
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let joiner = pool.install(|| {
            dreadpool_core::join(
                || {
                    while !started.load(Ordering::Acquire) {
                        assert!(std::time::Instant::now() < deadline, "b never started");
                        std::thread::yield_now();
                    }
                },
                || started.store(true, Ordering::Release),
            );
            dreadpool_core::current_worker_index()
        });
        let joiner = joiner.expect("install runs on a worker");
        let line = answer(&pool.handle(), 0, &Params::default(), 1_000).unwrap_or_default();
        let body: Body = crate::json::from_slice(&line).unwrap();
        assert!(body.events.iter().any(|e| e.k == Kind::ForkShared));
        let events = body.into_reply().recording.events().to_vec();
        let shared: Vec<u64> = events
            .iter()
            .filter_map(|e| match (e.track, e.kind) {
                (Track::Worker(w), EventKind::ForkShared { fork }) if w == joiner => Some(fork),
                _ => None,
            })
            .collect();
        let stolen = events.iter().find_map(|e| match (e.track, e.kind) {
            (Track::Worker(thief), EventKind::ForkStolen { fork, owner }) => {
                Some((thief, fork, owner))
            }
            _ => None,
        });
        let (thief, fork, owner) = stolen.expect("a fork_stolen event read back");
        assert_ne!(thief, joiner);
        assert_eq!(owner, joiner);
        assert!(fork.is_some_and(|f| shared.contains(&f)), "{events:?}");
    }

    /// A Tasks-level pool's reply carries each spawn's site (a table, and
    /// an index on the spawn), and the client's recording has them back.
    #[test]
    fn spawn_sites_round_trip_through_a_reply() {
        let pool = dreadpool_core::ThreadPoolBuilder::new()
            .with_threads(1)
            .with_record_level(RecordLevel::Tasks)
            .build();
        let line = line!() + 2;
        for _ in 0..3 {
            pool.spawn(|| ());
        }
        let other = line!() + 1;
        pool.spawn(|| ());
        pool.join();
        let reply = answer(&pool.handle(), 0, &Params::default(), 1_000).unwrap_or_default();
        let body: Body = crate::json::from_slice(&reply).unwrap();
        assert_eq!(body.sites.len(), 2, "{:?}", body.sites);
        let recording = body.into_reply().recording;
        let mut lines: Vec<u32> = recording.task_sites().map(|(_, s)| s.line()).collect();
        lines.sort_unstable();
        assert_eq!(lines, [line, line, line, other]);
        assert!(recording
            .task_sites()
            .all(|(_, s)| s.file().ends_with("recording.rs") && s.column() > 0));
        // A bad table entry or index loses only the site.
        let bad: Body = parse(
            r#"{"events":[{"t":1,"w":0,"k":"spawn","task":1,"queue":"local","site":0},
                          {"t":2,"w":0,"k":"spawn","task":2,"queue":"local","site":5}],
                "sites":["nowhere"]}"#,
        )
        .unwrap();
        let recording = bad.into_reply().recording;
        assert_eq!(recording.events().len(), 2);
        assert_eq!(recording.task_sites().count(), 0);
    }

    #[test]
    fn unknown_kinds_and_states_are_skipped_not_errors() {
        let event: WireEvent = parse(r#"{"t":5,"w":0,"k":"teleport","x":1}"#).unwrap();
        assert_eq!(event.k, Kind::Other);
        assert_eq!(event.into_event(), None);
        let event: WireEvent = parse(r#"{"t":5,"w":0,"k":"state","state":"dreaming"}"#).unwrap();
        assert_eq!(event.into_event(), None);
        // No track: not an event.
        let event: WireEvent = parse(r#"{"t":5,"k":"respawn"}"#).unwrap();
        assert_eq!(event.into_event(), None);
    }

    #[test]
    fn a_request_serialises_as_documented() {
        let line = RecordingRequest::pool(2)
            .since_ns(7)
            .level(RecordLevel::Scheduler)
            .max_events(10)
            .id(3)
            .line();
        let text = String::from_utf8(line).unwrap();
        assert_eq!(
            text,
            "{\"request\":\"recording\",\"id\":3,\"pool\":2,\"since_ns\":7,\"level\":\"scheduler\",\"max_events\":10}\n"
        );
        let plain = String::from_utf8(RecordingRequest::pool(0).line()).unwrap();
        assert_eq!(plain, "{\"request\":\"recording\",\"pool\":0}\n");
    }

    #[test]
    fn a_reply_starts_with_its_type_and_reads_back() {
        let pool = dreadpool_core::ThreadPoolBuilder::new()
            .with_threads(2)
            .with_thread_name("wire")
            .with_record_level(RecordLevel::Tasks)
            .build();
        for _ in 0..100 {
            pool.spawn(|| ());
        }
        pool.join();
        let line = answer(&pool.handle(), 0, &Params::default(), 1_000).unwrap_or_default();
        assert!(line.starts_with(LINE_START));
        let body: Body = crate::json::from_slice(&line).unwrap();
        let reply = body.into_reply();
        assert_eq!(reply.recording.pool(), "wire");
        assert_eq!(reply.recording.worker_names().len(), 2);
        let runs = reply
            .recording
            .events()
            .iter()
            .filter(|e| matches!(e.kind, EventKind::RunBegin { .. }))
            .count();
        assert_eq!(runs, 100);

        // The limit keeps the newest and says how many it left out.
        let params = Params {
            max_events: Some(10),
            ..Params::default()
        };
        let line = answer(&pool.handle(), 0, &params, 1_000).unwrap_or_default();
        let small: Body = crate::json::from_slice(&line).unwrap();
        assert_eq!(small.events.len(), 10);
        assert!(small.omitted > 0);
        // The rings only gain events (workers may still note their sleep
        // after `join`): the newest ten now are no older than the tenth
        // newest before. Within a millisecond: each take converts ticks to
        // nanoseconds with the tick rate measured up to it, so one event's
        // time may shift a little from one take to the next.
        let events = reply.recording.events();
        let tenth_newest = events[events.len() - 10].time_ns;
        assert!(small.events.iter().all(|e| e.t + 1_000_000 >= tenth_newest));
        assert!(small.events.windows(2).all(|w| w[0].t <= w[1].t));

        // Scheduler level: no task events.
        let params = Params {
            level: Some("scheduler".into()),
            ..Params::default()
        };
        let line = answer(&pool.handle(), 0, &params, 1_000).unwrap_or_default();
        let sched: Body = crate::json::from_slice(&line).unwrap();
        assert!(sched
            .events
            .iter()
            .all(|e| !matches!(e.k, Kind::Spawn | Kind::RunBegin | Kind::RunEnd)));
        let params = Params {
            level: Some("loud".into()),
            ..Params::default()
        };
        assert!(matches!(
            answer(&pool.handle(), 0, &params, 1_000),
            Err(Refusal::BadLevel(_))
        ));
    }
}
