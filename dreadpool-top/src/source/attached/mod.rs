//! Another process's pools over its exporter: each frame into samples, and the link's state.

mod reader;
mod requests;

pub use requests::{DIGEST_MAX_EVENTS, RECORDING_PATIENCE};

use super::conversion::PoolFeed;
use super::pacing::Pacer;
use crate::state::sample::PoolSample;
use crate::state::timeline::TimelineChunk;
use crate::state::waits::{Waits, WaitsChunk};
use crate::state::{Link, Tick};
use dreadpool_metrics::{self as metrics, Client, Report, Requester, Snapshot};
use reader::{read_loop, Incoming};
use requests::Pending;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

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
    /// The waits view is shown: digests are taken at `Tasks` level, whole,
    /// and explained.
    waits: bool,
    /// The explained digests since the last tick.
    explained: Vec<WaitsChunk>,
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
            waits: false,
            explained: Vec::new(),
        })
    }

    /// Which pool the dashboard shows (its timeline is the one pulled).
    pub fn show_pool(&mut self, name: Option<&str>) {
        self.shown = name.map(str::to_owned);
    }

    /// Whether the waits view is shown (see [`Source::explain_waits`](super::Source::explain_waits)).
    pub fn explain_waits(&mut self, on: bool) {
        if on && !self.waits {
            // The host may record every task already: ask now.
            self.pacer.due_at(Instant::now());
        }
        self.waits = on;
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
        if self.waits && !self.records && self.link == Link::Connected {
            // Nothing will be explained: the view says why rather than wait.
            if let Some(pool) = self.shown.clone() {
                self.explained.push(WaitsChunk {
                    pool,
                    waits: Waits::NoRecorder,
                });
            }
        }
        Tick {
            at,
            pools,
            events: Vec::new(),
            panics_reported: false,
            link: Some(self.link.clone()),
            timelines: std::mem::take(&mut self.chunks),
            waits: std::mem::take(&mut self.explained),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{App, Freshness, Mode};
    use dreadpool_core::ThreadPoolBuilder;

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
    fn with_the_waits_view_shown_the_hosts_tasks_are_explained() {
        use crate::input::Action;
        use crate::state::waits::Waits;
        let pool = ThreadPoolBuilder::new()
            .with_threads(2)
            .with_thread_name("tasks")
            .with_record_level(dreadpool_core::RecordLevel::Tasks)
            .build();
        for _ in 0..100 {
            pool.spawn(|| ());
        }
        pool.join();
        let dir = std::env::temp_dir().join(format!("dpt-waits-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("host.sock");
        let addr = path.to_str().unwrap();
        let _exporter = metrics::Exporter::builder()
            .pool(&pool)
            .interval(Duration::from_millis(10))
            .bind(addr)
            .unwrap();
        let mut attached = Attached::connect(addr, std::env::temp_dir()).unwrap();
        let mut app = App::new(
            Mode::Attach {
                addr: addr.into(),
                link: Link::Connected,
            },
            Duration::from_millis(10),
        );
        app.update(Action::ToggleWaits);
        tick_until(&mut attached, &mut app, "the host's pool", |a| {
            a.current().is_some()
        });
        // What the main loop tells the source before each tick.
        attached.show_pool(Some("tasks"));
        attached.explain_waits(app.waits_open);
        tick_until(
            &mut attached,
            &mut app,
            "the explained waits",
            |a| matches!(a.waits(), Some(Waits::Explained { tasks, .. }) if *tasks >= 100),
        );
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
