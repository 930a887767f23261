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
use crate::state::events::{EventKind, LogEvent};
use crate::state::sample::{PoolSample, Quantiles, WorkerSample, WorkerStatus, WorkerTotals};
use crate::state::{Command, Link, Tick};
use dreadpool_core::{PanicPolicy, ThreadPool, ThreadPoolBuilder};
use dreadpool_metrics as metrics;
use metrics::{Client, Interval, Monitor, Report, Snapshot, WorkerState};
use std::collections::VecDeque;
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
}

impl Demo {
    /// Starts a pool of `threads` workers (with the default
    /// `PanicPolicy::Respawn`) and the load on it.
    pub fn start(threads: usize, pattern: Pattern, rate: u64, seed: u64) -> Result<Demo, String> {
        let inbox = Arc::new(Mutex::new(PanicInbox::default()));
        let sink = Arc::clone(&inbox);
        let pool = ThreadPoolBuilder::new()
            .with_threads(threads)
            .with_thread_name(DEMO_POOL)
            .with_panic_policy(PanicPolicy::Respawn)
            .with_latency_sampling(DEMO_LATENCY_SAMPLING)
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
        Tick {
            at,
            events: fold_panics(at, messages, dropped),
            pools: vec![sample],
            panics_reported: true,
            link: None,
        }
    }

    /// Carries out a command of the model.
    pub fn apply(&mut self, command: Command) {
        match command {
            Command::SetPattern(p) => self.load.set_pattern(p),
            Command::SetRate(r) => self.load.set_rate(r),
        }
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
    Connected,
    Frame(Vec<Snapshot>),
    Lost { error: String, attempts: u32 },
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
}

impl Attached {
    /// Connects to `addr` (a Unix socket path or a loopback `host:port`)
    /// once, failing with a clear message if nobody serves there; from then
    /// on a lost connection is retried in the background, never an error.
    pub fn connect(addr: &str) -> Result<Attached, String> {
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
        })
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
        loop {
            match self.rx.try_recv() {
                Ok(Incoming::Connected) => self.link = Link::Connected,
                Ok(Incoming::Frame(pools)) => {
                    self.link = Link::Connected;
                    newest = Some(pools);
                }
                Ok(Incoming::Lost { error, attempts }) => {
                    self.link = Link::Lost { error, attempts }
                }
                Err(_) => break,
            }
        }
        let pools = newest.map(|pools| self.observe(pools)).unwrap_or_default();
        Tick {
            at,
            pools,
            events: Vec::new(),
            panics_reported: false,
            link: Some(self.link.clone()),
        }
    }

    /// Waits up to `timeout` for the next frame (for headless runs).
    pub fn wait_frame(&mut self, timeout: Duration) -> Option<Vec<PoolSample>> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(Incoming::Frame(pools)) => return Some(self.observe(pools)),
                Ok(_) => continue,
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
        if let Some(c) = client.take() {
            attempts = 0;
            if tx.send(Incoming::Connected).is_err() {
                return;
            }
            for frame in c {
                match frame {
                    Ok(pools) => {
                        if tx.send(Incoming::Frame(pools)).is_err() {
                            return;
                        }
                    }
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
    /// An attached host.
    Attached(Attached),
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
        if let Source::Demo(d) = self {
            d.apply(command);
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
        let mut attached = Attached::connect(addr).unwrap();
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
        let error = Attached::connect("/nonexistent/dreadpool-top.sock").unwrap_err();
        assert!(
            error.contains("cannot attach to /nonexistent/dreadpool-top.sock"),
            "{error}"
        );
    }
}
