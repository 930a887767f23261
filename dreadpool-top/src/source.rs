//! Where samples come from, and the only module that touches
//! `dreadpool-metrics`: a demo pool in this process, or the pools of another
//! process over an exporter connection. Both turn `Snapshot`s into
//! `Interval`s with a `Monitor`, and both into the model's [`PoolSample`]s.
//!
//! Two things the metrics crate's `Interval` does not carry are worked out
//! here from the snapshots themselves: per-worker latency quantiles (for the
//! detail view) and the running totals (for the detail view and to derive
//! respawn and panic events when attached).

use crate::load::{LoadGenerator, LoadStats, PANIC_PREFIX};
use crate::pattern::Pattern;
use crate::record::{self, RecordError, Saved};
use crate::state::events::{EventKind, LogEvent};
use crate::state::sample::{PoolSample, Quantiles, WorkerSample, WorkerStatus, WorkerTotals};
use crate::state::timeline::TimelineChunk;
use crate::state::{Command, Link, Tick};
use dreadpool_core::{PanicPolicy, RecordLevel, ThreadPool, ThreadPoolBuilder};
use dreadpool_metrics as metrics;
use metrics::{
    Client, ClientError, Interval, Message, Monitor, RecordingReply, RecordingRequest, Report,
    Requester, Snapshot, WorkerState,
};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The demo pool's name (its threads are `demo-0`, `demo-1`, ...).
pub const DEMO_POOL: &str = "demo";

/// One task in this many is timed for the demo's latency panel (finer than
/// the pool's default so that an interval holds enough samples for a p99).
const DEMO_LATENCY_SAMPLING: u32 = 8;

/// Panic messages kept between two ticks; the rest are only counted.
const PANIC_BUFFER: usize = 1_000;

/// The demo pool's ring size in the dashboard, in events per worker. The
/// timeline takes a recording every second, and a recording copies and
/// merges every ring whole: with the default 64Ki events per worker a full
/// set of 4 rings took 25 ms to take on the 2-core test machine (2.5% of a
/// core at one a second), with 8Ki 3.7 ms. 4Ki events is about 5 s of a
/// demo worker's scheduler events at the default load, several times the
/// second between pulls; under a much heavier load a ring may wrap between
/// two pulls, and the strip then carries the last state it saw across the
/// gap. (`--record` runs use the default size: they want history, and have
/// no timeline.)
pub const DEMO_RECORD_CAPACITY: usize = 1 << 12;

/// The shortest time between two recordings for the timeline.
pub const TIMELINE_EVERY: Duration = Duration::from_secs(1);

/// A pull for the timeline waits at least this many times what the last
/// one cost (the host's time to take it, when attached), so that the
/// timeline never costs more than 1/800 (0.125%) of a core, whatever the
/// ring sizes. The demo's pull (4 rings of 4Ki events) took about 2.5 ms in
/// the dashboard, so its strips move every 2 s.
pub const TIMELINE_COST_FACTOR: u32 = 800;

/// The same for an attached host, whose exporter thread pays for each pull
/// (the reply says how long it took): at most 1/100 (1%) of one of the
/// host's cores per dashboard. With the default 64Ki-event rings (25 ms a
/// pull for 4 workers) its strips move every 2.5 s.
pub const HOST_COST_FACTOR: u32 = 100;

/// The most events one timeline digest asks an attached host for (at
/// about 50 bytes each, 1 MB): a second of the scheduler's events of a
/// large pool fits; beyond, the oldest of the second are left out.
pub const DIGEST_MAX_EVENTS: usize = 20_000;

/// How long a requested recording may take to arrive before it is given up.
pub const RECORDING_PATIENCE: Duration = Duration::from_secs(60);

/// When the timeline's next recording is due.
#[derive(Debug, Clone)]
pub struct Pacer {
    next: Instant,
}

impl Pacer {
    /// Due at once.
    pub fn new() -> Self {
        Pacer {
            next: Instant::now(),
        }
    }

    /// Whether a pull is due at `now`.
    pub fn due(&self, now: Instant) -> bool {
        now >= self.next
    }

    /// A pull that cost `cost` ended at `now`: the next is due after
    /// [`TIMELINE_EVERY`] or `factor` times the cost, whichever is longer.
    pub fn pulled(&mut self, now: Instant, cost: Duration, factor: u32) {
        self.next = now + TIMELINE_EVERY.max(cost.saturating_mul(factor));
    }
}

impl Default for Pacer {
    fn default() -> Self {
        Pacer::new()
    }
}

/// How the demo pool records.
#[derive(Debug, Clone)]
pub struct DemoRecorder {
    /// The flight recorder's level.
    pub level: RecordLevel,
    /// Events per worker ring.
    pub capacity: usize,
    /// Whether to pull recordings for the timeline (the dashboard; not
    /// headless runs).
    pub timeline: bool,
    /// Where the `r` key saves.
    pub dir: PathBuf,
}

impl Default for DemoRecorder {
    /// What the dashboard uses: the scheduler's events in small rings, for
    /// the timeline; `r` saves in the current directory.
    fn default() -> Self {
        DemoRecorder {
            level: RecordLevel::Scheduler,
            capacity: DEMO_RECORD_CAPACITY,
            timeline: true,
            dir: PathBuf::from("."),
        }
    }
}

fn quantiles(q: &metrics::Quantiles) -> Quantiles {
    Quantiles {
        count: q.count,
        p50: q.p50,
        p90: q.p90,
        p99: q.p99,
        p999: q.p999,
        max: q.max,
    }
}

fn status(state: WorkerState) -> WorkerStatus {
    WorkerStatus::from_name(state.as_str())
}

/// Turns consecutive snapshots of one pool into samples.
#[derive(Debug)]
pub struct PoolFeed {
    monitor: Monitor,
    last: Option<Snapshot>,
}

impl Default for PoolFeed {
    fn default() -> Self {
        PoolFeed::new()
    }
}

impl PoolFeed {
    /// A feed with no snapshot yet.
    pub fn new() -> Self {
        PoolFeed {
            monitor: Monitor::detached(),
            last: None,
        }
    }

    /// Takes the next snapshot; returns the interval since the previous one.
    pub fn observe(&mut self, snapshot: Snapshot) -> PoolSample {
        let interval = self.monitor.observe(snapshot.clone());
        let before = if interval.restarted {
            None
        } else {
            self.last.as_ref()
        };
        let sample = to_sample(&interval, before, &snapshot);
        self.last = Some(snapshot);
        sample
    }

    /// Everything observed so far.
    pub fn report(&self) -> Report {
        self.monitor.report()
    }
}

/// The model's view of `interval`, completed from the snapshots it spans.
pub fn to_sample(interval: &Interval, before: Option<&Snapshot>, now: &Snapshot) -> PoolSample {
    let workers = interval
        .workers
        .iter()
        .map(|w| {
            let snap = now.workers.iter().find(|s| s.index == w.index);
            let prev = before.and_then(|b| b.workers.iter().find(|s| s.index == w.index));
            let latency = |f: fn(&metrics::WorkerSnapshot) -> &metrics::HistogramSnapshot| {
                let Some(snap) = snap else {
                    return Quantiles::default();
                };
                let delta = match prev {
                    Some(prev) => f(snap).since(f(prev)),
                    None => f(snap).clone(),
                };
                quantiles(&metrics::Quantiles::of(&delta))
            };
            let totals = snap.map_or_else(WorkerTotals::default, |s| WorkerTotals {
                tasks_run: s.tasks_run,
                steals_attempted: s.steals_attempted,
                steals_succeeded: s.steals_succeeded,
                tasks_stolen: s.tasks_stolen,
                sleeps: s.sleeps,
                wakeups: s.wakeups,
                noop_wakeups: s.noop_wakeups,
                respawns: s.respawns,
                panics: s.panics,
                joins: s.joins,
                forks_shared: s.forks_shared,
                forks_stolen: s.forks_stolen,
            });
            WorkerSample {
                index: w.index,
                state: Some(status(w.state)),
                local_queue_depth: w.local_queue_depth,
                tasks_per_sec: w.tasks_per_sec,
                steals_attempted_per_sec: w.steals_attempted_per_sec,
                steals_succeeded_per_sec: w.steals_succeeded_per_sec,
                steal_success_ratio: (w.steals_attempted > 0).then_some(w.steal_success_ratio),
                tasks_stolen_per_sec: w.tasks_stolen_per_sec,
                sleeps_per_sec: w.sleeps_per_sec,
                wakeups_per_sec: w.wakeups_per_sec,
                noop_wakeups_per_sec: w.noop_wakeups_per_sec,
                joins_per_sec: w.joins_per_sec,
                forks_shared_per_sec: w.forks_shared_per_sec,
                forks_stolen_per_sec: w.forks_stolen_per_sec,
                busy_ratio: w.busy_ratio,
                stolen_from: w.stolen_from.clone(),
                totals,
                schedule_delay: latency(|s| &s.schedule_delay),
                run_time: latency(|s| &s.run_time),
            }
        })
        .collect::<Vec<_>>();
    PoolSample {
        name: interval.name.clone(),
        threads: interval.threads,
        uptime: interval.uptime,
        elapsed: interval.elapsed,
        tasks_per_sec: interval.tasks_per_sec,
        tasks_run: now.tasks_run(),
        global_queue_depth: interval.global_queue_depth,
        pending: interval.tasks_pending,
        panics: now.panics,
        respawns: now.workers.iter().map(|w| w.respawns).sum(),
        busy_ratio: interval.busy_ratio,
        steals_attempted_per_sec: interval.steals_attempted_per_sec,
        steals_succeeded_per_sec: interval.steals_succeeded_per_sec,
        tasks_stolen_per_sec: interval.tasks_stolen_per_sec,
        sleeps_per_sec: interval.sleeps_per_sec,
        wakeups_per_sec: interval.wakeups_per_sec,
        noop_wakeups_per_sec: interval.noop_wakeups_per_sec,
        joins_per_sec: interval.joins_per_sec,
        schedule_delay: quantiles(&interval.schedule_delay),
        run_time: quantiles(&interval.run_time),
        schedule_delay_total: quantiles(&interval.schedule_delay_total),
        run_time_total: quantiles(&interval.run_time_total),
        workers,
    }
}

/// Panics caught by the demo pool's panic handler, waiting for the next tick.
#[derive(Debug, Default)]
struct PanicInbox {
    /// `(worker, message)`, oldest first.
    messages: VecDeque<(Option<usize>, String)>,
    /// Panics beyond the buffer, only counted.
    dropped: u64,
}

/// The worker index in a thread name such as `demo-3`.
fn worker_of_thread() -> Option<usize> {
    let current = thread::current();
    let name = current.name()?;
    let rest = name.strip_prefix(DEMO_POOL)?.strip_prefix('-')?;
    rest.parse().ok()
}

/// The built-in demo: a pool in this process under the load generator.
#[derive(Debug)]
pub struct Demo {
    pool: Arc<ThreadPool>,
    load: LoadGenerator,
    feed: PoolFeed,
    inbox: Arc<Mutex<PanicInbox>>,
    started: Instant,
    timeline: Option<(Pacer, Option<u64>)>,
    dir: PathBuf,
    saved: (Sender<String>, Receiver<String>),
}

impl Demo {
    /// Starts a pool of `threads` workers (with the default
    /// `PanicPolicy::Respawn`), recording as `recorder` says, and the load
    /// on it.
    pub fn start(
        threads: usize,
        pattern: Pattern,
        rate: u64,
        seed: u64,
        recorder: DemoRecorder,
    ) -> Result<Demo, String> {
        let inbox = Arc::new(Mutex::new(PanicInbox::default()));
        let sink = Arc::clone(&inbox);
        let pool = ThreadPoolBuilder::new()
            .with_threads(threads)
            .with_thread_name(DEMO_POOL)
            .with_panic_policy(PanicPolicy::Respawn)
            .with_latency_sampling(DEMO_LATENCY_SAMPLING)
            .with_record_level(recorder.level)
            .with_record_capacity(recorder.capacity)
            .with_panic_handler(move |payload| {
                let message = if let Some(s) = payload.downcast_ref::<&str>() {
                    (*s).to_owned()
                } else if let Some(s) = payload.downcast_ref::<String>() {
                    s.clone()
                } else {
                    "<non-string panic payload>".to_owned()
                };
                let mut inbox = sink.lock().unwrap_or_else(|e| e.into_inner());
                if inbox.messages.len() < PANIC_BUFFER {
                    inbox.messages.push_back((worker_of_thread(), message));
                } else {
                    inbox.dropped += 1;
                }
            })
            .try_build()
            .map_err(|e| format!("cannot start the demo pool: {e}"))?;
        let pool = Arc::new(pool);
        let load = LoadGenerator::start(pool.handle(), pattern, rate, seed)
            .map_err(|e| format!("cannot start the load generator: {e}"))?;
        Ok(Demo {
            pool,
            load,
            feed: PoolFeed::new(),
            inbox,
            started: Instant::now(),
            timeline: recorder.timeline.then(|| (Pacer::new(), None)),
            dir: recorder.dir,
            saved: mpsc::channel(),
        })
    }

    /// Samples the pool now.
    pub fn tick(&mut self) -> Tick {
        let at = self.started.elapsed();
        let sample = self.feed.observe(Snapshot::from(&self.pool.metrics()));
        let (messages, dropped) = {
            let mut inbox = self.inbox.lock().unwrap_or_else(|e| e.into_inner());
            (
                std::mem::take(&mut inbox.messages),
                std::mem::take(&mut inbox.dropped),
            )
        };
        let mut timelines = Vec::new();
        if let Some((pacer, cursor)) = &mut self.timeline {
            let now = Instant::now();
            if pacer.due(now) {
                // On this (the UI) thread, so that the dashboard's own CPU
                // figure includes it.
                let recording = self.pool.recording();
                let (chunk, newest) = record::timeline_chunk(&recording, *cursor);
                *cursor = newest;
                timelines.push(chunk);
                pacer.pulled(Instant::now(), now.elapsed(), TIMELINE_COST_FACTOR);
            }
        }
        Tick {
            at,
            events: fold_panics(at, messages, dropped),
            pools: vec![sample],
            panics_reported: true,
            link: None,
            timelines,
            notes: self.saved.1.try_iter().collect(),
        }
    }

    /// Carries out a command of the model.
    pub fn apply(&mut self, command: Command) {
        match command {
            Command::SetPattern(p) => self.load.set_pattern(p),
            Command::SetRate(r) => self.load.set_rate(r),
            Command::SaveRecording { .. } => {
                let path = record::default_path(&self.dir, DEMO_POOL);
                record::write_in_background(self.pool.recording(), path, self.saved.0.clone());
            }
        }
    }

    /// Writes the pool's recording to `path` now (for `--record`).
    pub fn record_to(&self, path: &Path) -> Result<Saved, RecordError> {
        record::write(&self.pool.recording(), path)
    }

    /// Everything the monitor observed.
    pub fn report(&self) -> Report {
        self.feed.report()
    }

    /// The load generator's counters.
    pub fn load_stats(&self) -> LoadStats {
        self.load.stats()
    }

    /// Stops the load and lets the pool finish what is queued (for a report
    /// that accounts for every task); bounded by `timeout`.
    pub fn finish(&mut self, timeout: Duration) -> bool {
        self.load.stop();
        self.pool.join_timeout(timeout)
    }

    /// Stops the load, cancels queued tasks and shuts the pool down (fast:
    /// cancelled tasks return at once).
    pub fn shutdown(mut self) {
        self.load.cancel();
        self.pool.shutdown();
    }
}

/// One event per worker and message kind for the panics of one tick: a
/// storm of hundreds a second stays readable.
fn fold_panics(
    at: Duration,
    messages: VecDeque<(Option<usize>, String)>,
    dropped: u64,
) -> Vec<LogEvent> {
    let mut events: Vec<LogEvent> = Vec::new();
    for (worker, message) in messages {
        match events.iter_mut().find(|e| e.worker == worker) {
            Some(event) => {
                event.count += 1;
                event.message = message;
            }
            None => events.push(LogEvent {
                at,
                pool: Some(DEMO_POOL.into()),
                worker,
                kind: EventKind::Panic,
                count: 1,
                respawned: 0,
                message,
            }),
        }
    }
    if dropped > 0 {
        match events.last_mut() {
            Some(last) => last.count += dropped,
            None => events.push(LogEvent {
                at,
                pool: Some(DEMO_POOL.into()),
                worker: None,
                kind: EventKind::Panic,
                count: dropped,
                respawned: 0,
                message: format!("{dropped} panics (messages not kept)"),
            }),
        }
    }
    events
}

/// True for a panic of the demo's own panic storm on a demo worker: the
/// pool catches it and the event log shows it, so the panic hook must not
/// print it over the dashboard.
pub fn is_demo_panic(info: &std::panic::PanicHookInfo<'_>) -> bool {
    let payload = info.payload();
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str));
    worker_of_thread().is_some() && message.is_some_and(|m| m.starts_with(PANIC_PREFIX))
}

/// What the attach reader thread reports.
#[derive(Debug)]
enum Incoming {
    /// A new connection (the first, or after a loss): its request side, and
    /// whether the host answers recording requests.
    Connected {
        requester: Option<Requester>,
        records: bool,
    },
    Frame(Vec<Snapshot>),
    Recording(Box<RecordingReply>),
    /// The exporter refused a request (the connection stays).
    Refused(String),
    Lost {
        error: String,
        attempts: u32,
    },
}

/// What a recording request was for.
#[derive(Debug, Clone)]
enum Purpose {
    /// A timeline digest of this pool.
    Digest { pool: usize },
    /// The `r` key: save this pool's recording to `path`.
    Save { path: PathBuf },
}

/// The recording request on its way (the exporter sends one at a time per
/// client, so there is never more than one).
#[derive(Debug)]
struct Pending {
    id: u64,
    purpose: Purpose,
    sent: Instant,
}

/// The first and the longest wait between reconnection attempts.
const RETRY_FIRST: Duration = Duration::from_millis(250);
const RETRY_MAX: Duration = Duration::from_secs(2);

/// Another process's pools, read from its exporter.
#[derive(Debug)]
pub struct Attached {
    rx: Receiver<Incoming>,
    feeds: Vec<(String, PoolFeed)>,
    started: Instant,
    link: Link,
    hello_pools: Vec<String>,
    requester: Option<Requester>,
    /// The host answers recording requests.
    records: bool,
    /// The pool shown, whose timeline is pulled.
    shown: Option<String>,
    pacer: Pacer,
    /// Per pool index: the newest event time seen, for the next digest.
    cursors: HashMap<usize, u64>,
    /// Pools whose next chunk starts a new timeline (after a connection).
    restarts: Vec<usize>,
    pending: Option<Pending>,
    saves: VecDeque<(usize, PathBuf)>,
    next_id: u64,
    dir: PathBuf,
    notes: Vec<String>,
    chunks: Vec<TimelineChunk>,
    saved: (Sender<String>, Receiver<String>),
}

impl Attached {
    /// Connects to `addr` (a Unix socket path or a loopback `host:port`)
    /// once, failing with a clear message if nobody serves there; from then
    /// on a lost connection is retried in the background, never an error.
    /// The `r` key saves recordings in `dir`.
    pub fn connect(addr: &str, dir: PathBuf) -> Result<Attached, String> {
        let endpoint =
            metrics::Endpoint::parse(addr).map_err(|e| format!("bad address {addr:?}: {e}"))?;
        if let Some(socket) = endpoint.socket_addr() {
            if !socket.ip().is_loopback() {
                return Err(format!(
                    "cannot attach to {addr}: only a Unix socket path or a loopback address (127.0.0.1:PORT, [::1]:PORT) is supported"
                ));
            }
        }
        let client = Client::connect_endpoint(&endpoint)
            .map_err(|e| format!("cannot attach to {addr}: {e}"))?;
        let hello_pools = client.hello().pools.clone();
        let (tx, rx) = mpsc::channel();
        let addr = addr.to_owned();
        thread::Builder::new()
            .name("dreadpool-top-attach".into())
            .spawn(move || read_loop(addr, client, tx))
            .map_err(|e| format!("cannot start the reader thread: {e}"))?;
        Ok(Attached {
            rx,
            feeds: Vec::new(),
            started: Instant::now(),
            link: Link::Connected,
            hello_pools,
            requester: None,
            records: false,
            shown: None,
            pacer: Pacer::new(),
            cursors: HashMap::new(),
            restarts: Vec::new(),
            pending: None,
            saves: VecDeque::new(),
            next_id: 0,
            dir,
            notes: Vec::new(),
            chunks: Vec::new(),
            saved: mpsc::channel(),
        })
    }

    /// Which pool the dashboard shows (its timeline is the one pulled).
    pub fn show_pool(&mut self, name: Option<&str>) {
        self.shown = name.map(str::to_owned);
    }

    /// Whether the host answers recording requests (as its latest hello
    /// said).
    pub fn host_records(&self) -> bool {
        self.records
    }

    /// Takes in one message of the reader thread; returns a frame's
    /// snapshots.
    fn receive(&mut self, incoming: Incoming) -> Option<Vec<Snapshot>> {
        match incoming {
            Incoming::Connected { requester, records } => {
                self.link = Link::Connected;
                self.requester = requester;
                self.records = records;
                // Perhaps another host process: another recorder clock.
                self.cursors.clear();
                self.restarts = (0..self.hello_pools.len().max(1)).collect();
                if let Some(pending) = self.pending.take() {
                    self.give_up(pending, "the connection was lost before it arrived");
                }
            }
            Incoming::Frame(pools) => {
                self.link = Link::Connected;
                return Some(pools);
            }
            Incoming::Recording(reply) => self.answered(*reply),
            Incoming::Refused(error) => {
                if let Some(pending) = self.pending.take() {
                    self.give_up(pending, &error);
                }
            }
            Incoming::Lost { error, attempts } => self.link = Link::Lost { error, attempts },
        }
        None
    }

    fn give_up(&mut self, pending: Pending, why: &str) {
        match pending.purpose {
            Purpose::Save { .. } => self.notes.push(format!("recording not saved: {why}")),
            // The next digest is due after the usual pause.
            Purpose::Digest { .. } => self.pacer.pulled(Instant::now(), Duration::ZERO, 1),
        }
    }

    fn answered(&mut self, reply: RecordingReply) {
        let Some(pending) = self.pending.take_if(|p| Some(p.id) == reply.id) else {
            // A reply to a request given up on: nothing waits for it.
            return;
        };
        match pending.purpose {
            Purpose::Digest { pool } => {
                let (mut chunk, newest) =
                    record::timeline_chunk(&reply.recording, self.cursors.get(&pool).copied());
                if let Some(newest) = newest {
                    self.cursors.insert(pool, newest);
                }
                if let Some(i) = self.restarts.iter().position(|&p| p == pool) {
                    self.restarts.swap_remove(i);
                    chunk.restart = true;
                }
                self.chunks.push(chunk);
                // Paced by what the pull cost the host.
                self.pacer
                    .pulled(Instant::now(), reply.took, HOST_COST_FACTOR);
            }
            Purpose::Save { path, .. } => {
                record::write_in_background(reply.recording, path, self.saved.0.clone());
            }
        }
    }

    /// Sends the next recording request, if one is due and none is on its
    /// way: a save the user asked for first, else the shown pool's digest.
    fn request(&mut self) {
        let now = Instant::now();
        if let Some(pending) = self.pending.take() {
            if now.duration_since(pending.sent) < RECORDING_PATIENCE {
                self.pending = Some(pending);
                return;
            }
            self.give_up(pending, "no reply from the host");
        }
        if !self.records || !matches!(self.link, Link::Connected) {
            return;
        }
        let Some(requester) = self.requester.as_mut() else {
            return;
        };
        let (request, purpose) = if let Some((pool, path)) = self.saves.pop_front() {
            (RecordingRequest::pool(pool), Purpose::Save { path })
        } else {
            let shown = self
                .shown
                .as_ref()
                .and_then(|name| self.hello_pools.iter().position(|p| p == name));
            let Some(pool) = shown.filter(|_| self.pacer.due(now)) else {
                return;
            };
            let mut request = RecordingRequest::pool(pool)
                .level(RecordLevel::Scheduler)
                .max_events(DIGEST_MAX_EVENTS);
            if let Some(&since) = self.cursors.get(&pool) {
                request = request.since_ns(since);
            }
            (request, Purpose::Digest { pool })
        };
        self.next_id += 1;
        let id = self.next_id;
        match requester.request_recording(&request.id(id)) {
            Ok(()) => {
                self.pending = Some(Pending {
                    id,
                    purpose,
                    sent: now,
                })
            }
            Err(e) => {
                // The reader thread sees the broken connection too and
                // reconnects; a save is reported now.
                self.give_up(
                    Pending {
                        id,
                        purpose,
                        sent: now,
                    },
                    &e.to_string(),
                );
            }
        }
    }

    /// Carries out the `r` key: the pool's recording is requested (after
    /// any request on its way) and written to a new file in the directory.
    pub fn save(&mut self, pool: usize) {
        if !self.records {
            self.notes.push(
                "the host has no flight recorder (build it with dreadpool's `recorder` feature)"
                    .into(),
            );
            return;
        }
        let name = self
            .hello_pools
            .get(pool)
            .cloned()
            .unwrap_or_else(|| format!("pool{pool}"));
        self.saves
            .push_back((pool, record::default_path(&self.dir, &name)));
        self.request();
    }

    /// Headless `--record`: asks for every pool's recording in turn, waits
    /// for each (up to [`RECORDING_PATIENCE`]) and writes it to
    /// [`record::path_for_pool`]; one outcome per pool.
    pub fn record_all(&mut self, path: &Path) -> Vec<Result<Saved, String>> {
        let pools = self.hello_pools.clone();
        let mut outcomes = Vec::new();
        for (index, name) in pools.iter().enumerate() {
            let target = record::path_for_pool(path, index, name);
            outcomes.push(self.record_one(index, &target));
        }
        outcomes
    }

    fn record_one(&mut self, pool: usize, path: &Path) -> Result<Saved, String> {
        let deadline = Instant::now() + RECORDING_PATIENCE;
        // Whatever the reader thread has said so far (the connection, and
        // the reply to a digest that may be on its way).
        while let Ok(incoming) = self.rx.try_recv() {
            self.receive(incoming);
        }
        if !self.records {
            return Err(
                "the host has no flight recorder (build it with dreadpool's `recorder` feature)"
                    .into(),
            );
        }
        self.next_id += 1;
        let id = self.next_id;
        let requester = self
            .requester
            .as_mut()
            .ok_or_else(|| "not connected to the host".to_owned())?;
        requester
            .request_recording(&RecordingRequest::pool(pool).id(id))
            .map_err(|e| format!("cannot ask for the recording: {e}"))?;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(Incoming::Recording(reply)) if reply.id == Some(id) => {
                    return record::write(&reply.recording, path).map_err(|e| e.to_string());
                }
                Ok(Incoming::Refused(error)) => return Err(format!("the host refused: {error}")),
                Ok(Incoming::Lost { error, .. }) => {
                    return Err(format!("the connection was lost: {error}"))
                }
                Ok(other) => {
                    self.receive(other);
                }
                Err(_) => return Err(format!("no recording within {RECORDING_PATIENCE:?}")),
            }
        }
    }

    /// The pools the exporter announced when first connected.
    pub fn pool_names(&self) -> &[String] {
        &self.hello_pools
    }

    /// Takes what arrived since the last tick: the newest frame (so that an
    /// interval spans the dashboard's refresh, not the exporter's) and the
    /// connection's state.
    pub fn tick(&mut self) -> Tick {
        let at = self.started.elapsed();
        let mut newest = None;
        while let Ok(incoming) = self.rx.try_recv() {
            if let Some(pools) = self.receive(incoming) {
                newest = Some(pools);
            }
        }
        self.request();
        let pools = newest.map(|pools| self.observe(pools)).unwrap_or_default();
        let mut notes = std::mem::take(&mut self.notes);
        notes.extend(self.saved.1.try_iter());
        Tick {
            at,
            pools,
            events: Vec::new(),
            panics_reported: false,
            link: Some(self.link.clone()),
            timelines: std::mem::take(&mut self.chunks),
            notes,
        }
    }

    /// Waits up to `timeout` for the next frame (for headless runs).
    pub fn wait_frame(&mut self, timeout: Duration) -> Option<Vec<PoolSample>> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(incoming) => {
                    if let Some(pools) = self.receive(incoming) {
                        return Some(self.observe(pools));
                    }
                }
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {
                    return None
                }
            }
        }
    }

    fn observe(&mut self, pools: Vec<Snapshot>) -> Vec<PoolSample> {
        pools
            .into_iter()
            .map(|snapshot| {
                let i = match self.feeds.iter().position(|(n, _)| *n == snapshot.name) {
                    Some(i) => i,
                    None => {
                        self.feeds.push((snapshot.name.clone(), PoolFeed::new()));
                        self.feeds.len() - 1
                    }
                };
                self.feeds[i].1.observe(snapshot)
            })
            .collect()
    }

    /// Every pool's report, in the exporter's order.
    pub fn reports(&self) -> Vec<Report> {
        self.feeds.iter().map(|(_, f)| f.report()).collect()
    }
}

fn read_loop(addr: String, first: Client, tx: Sender<Incoming>) {
    let mut client = Some(first);
    let mut attempts = 0u32;
    loop {
        if let Some(mut c) = client.take() {
            attempts = 0;
            let connected = Incoming::Connected {
                requester: c.requester().ok(),
                records: c.hello().recording,
            };
            if tx.send(connected).is_err() {
                return;
            }
            loop {
                let incoming = match c.next_message() {
                    Ok(Message::Frame(frame)) => Incoming::Frame(frame.pools),
                    Ok(Message::Recording(reply)) => Incoming::Recording(reply),
                    // A message kind of a newer dreadpool-metrics.
                    Ok(_) => continue,
                    // A refused request: the connection stays.
                    Err(ClientError::Server(error)) => Incoming::Refused(error),
                    Err(e) => {
                        attempts += 1;
                        let lost = Incoming::Lost {
                            error: e.to_string(),
                            attempts,
                        };
                        if tx.send(lost).is_err() {
                            return;
                        }
                        break;
                    }
                };
                if tx.send(incoming).is_err() {
                    return;
                }
            }
        }
        let wait = RETRY_FIRST
            .saturating_mul(1 << attempts.min(4))
            .min(RETRY_MAX);
        thread::sleep(wait);
        match Client::connect(&addr) {
            Ok(c) => client = Some(c),
            Err(e) => {
                attempts += 1;
                let lost = Incoming::Lost {
                    error: e.to_string(),
                    attempts,
                };
                if tx.send(lost).is_err() {
                    return;
                }
            }
        }
    }
}

/// Either source, behind one face for the main loop.
#[derive(Debug)]
pub enum Source {
    /// The in-process demo (boxed: it holds a monitor's histograms).
    Demo(Box<Demo>),
    /// An attached host (boxed: it holds its requests' state).
    Attached(Box<Attached>),
}

impl Source {
    /// Samples now.
    pub fn tick(&mut self) -> Tick {
        match self {
            Source::Demo(d) => d.tick(),
            Source::Attached(a) => a.tick(),
        }
    }

    /// Carries out a command of the model (load commands mean nothing when
    /// attached; the model does not send them then).
    pub fn apply(&mut self, command: Command) {
        match (self, command) {
            (Source::Demo(d), command) => d.apply(command),
            (Source::Attached(a), Command::SaveRecording { pool }) => a.save(pool),
            (Source::Attached(_), _) => {}
        }
    }

    /// Tells the source which pool is shown (an attached host's timeline
    /// is pulled for that pool only).
    pub fn show_pool(&mut self, name: Option<&str>) {
        if let Source::Attached(a) = self {
            a.show_pool(name);
        }
    }

    /// Stops whatever runs.
    pub fn shutdown(self) {
        if let Source::Demo(d) = self {
            (*d).shutdown();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{App, Freshness, Mode};

    #[test]
    fn panics_fold_per_worker() {
        let messages = VecDeque::from(vec![
            (Some(1), "a".to_owned()),
            (Some(1), "b".to_owned()),
            (Some(0), "c".to_owned()),
        ]);
        let events = fold_panics(Duration::ZERO, messages, 3);
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].worker, Some(1));
        assert_eq!(events[0].count, 2);
        assert_eq!(events[0].message, "b");
        assert_eq!(events[1].count, 4);
        assert!(fold_panics(Duration::ZERO, VecDeque::new(), 0).is_empty());
    }

    #[test]
    fn a_feed_turns_snapshots_into_samples_with_totals_and_worker_latency() {
        let pool = ThreadPoolBuilder::new()
            .with_threads(2)
            .with_latency_sampling(1)
            .build();
        let mut feed = PoolFeed::new();
        feed.observe(Snapshot::from(&pool.metrics()));
        for _ in 0..500 {
            pool.spawn(|| std::hint::black_box(()));
        }
        pool.join();
        let sample = feed.observe(Snapshot::from(&pool.metrics()));
        assert_eq!(sample.workers.len(), 2);
        assert_eq!(sample.tasks_run, 500);
        let run: u64 = sample.workers.iter().map(|w| w.totals.tasks_run).sum();
        assert_eq!(run, 500);
        let timed: u64 = sample.workers.iter().map(|w| w.run_time.count).sum();
        assert_eq!(timed, 500);
        assert!(sample.tasks_per_sec > 0.0);
        let idle = feed.observe(Snapshot::from(&pool.metrics()));
        assert_eq!(idle.tasks_per_sec, 0.0);
        assert!(idle.workers.iter().all(|w| w.steal_success_ratio.is_none()));
        assert_eq!(
            idle.workers.iter().map(|w| w.run_time.count).sum::<u64>(),
            0
        );
    }

    /// Ticks `app` from `attached` until `done`, failing after a minute (a
    /// correct run waits for the exporter's ticks and one reconnection).
    fn tick_until(attached: &mut Attached, app: &mut App, what: &str, done: impl Fn(&App) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            app.ingest(attached.tick());
            if done(app) {
                return;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            // Not an ordering: only a pause between polls, to leave the
            // reader thread a core.
            thread::sleep(Duration::from_millis(2));
        }
    }

    #[test]
    fn a_lost_host_leaves_stale_figures_and_a_returning_one_live_ones() {
        let pool = ThreadPoolBuilder::new()
            .with_threads(1)
            .with_thread_name("host")
            .build();
        let dir = std::env::temp_dir().join(format!("dpt-stale-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("host.sock");
        let addr = path.to_str().unwrap();
        let serve = || {
            metrics::Exporter::builder()
                .pool(&pool)
                .interval(Duration::from_millis(10))
                .bind(addr)
                .unwrap()
        };
        let exporter = serve();
        let mut attached = Attached::connect(addr, std::env::temp_dir()).unwrap();
        let mut app = App::new(
            Mode::Attach {
                addr: addr.into(),
                link: Link::Connected,
            },
            Duration::from_millis(10),
        );
        tick_until(&mut attached, &mut app, "the first samples", |a| {
            a.current().is_some()
        });
        assert_eq!(app.freshness(), Freshness::Live);

        drop(exporter);
        tick_until(&mut attached, &mut app, "the lost link", |a| {
            a.freshness() != Freshness::Live
        });
        assert!(matches!(app.freshness(), Freshness::Stale { age: Some(_) }));
        let frozen = app.current().unwrap().sample.uptime;

        let _back = serve();
        tick_until(&mut attached, &mut app, "new samples", |a| {
            a.current().unwrap().sample.uptime > frozen
        });
        assert_eq!(app.freshness(), Freshness::Live);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unreachable_address_is_a_clear_error() {
        let error =
            Attached::connect("/nonexistent/dreadpool-top.sock", PathBuf::from(".")).unwrap_err();
        assert!(
            error.contains("cannot attach to /nonexistent/dreadpool-top.sock"),
            "{error}"
        );
    }
}
