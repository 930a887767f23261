//! The built-in demo: a pool in this process, recording for the timeline, under the load generator.

mod panics;

pub use panics::is_demo_panic;

use super::conversion::PoolFeed;
use super::pacing::{Pacer, TIMELINE_COST_FACTOR, TIMELINE_EVERY, WAITS_COST_FACTOR};
use crate::load::{LoadGenerator, LoadStats};
use crate::pattern::Pattern;
use crate::record::{self, RecordError, Saved};
use crate::state::waits::WaitsChunk;
use crate::state::{Command, Tick};
use dreadpool_core::{PanicPolicy, RecordLevel, ThreadPool, ThreadPoolBuilder};
use dreadpool_metrics::{Report, Snapshot};
use panics::PanicInbox;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The demo pool's name (its threads are `demo-0`, `demo-1`, ...).
pub const DEMO_POOL: &str = "demo";

/// One task in this many is timed for the demo's latency panel (finer than
/// the pool's default so that an interval holds enough samples for a p99).
const DEMO_LATENCY_SAMPLING: u32 = 8;

/// The demo pool's ring size in the dashboard, in events per worker. The
/// timeline takes a recording every second, and a recording copies and
/// merges every ring whole, so the rings are kept small; this size still
/// holds several seconds of a demo worker's scheduler events at the default
/// load. Under a much heavier load a ring may wrap between two pulls, and
/// the strip then carries the last state it saw across the gap. (`--record`
/// runs use the default size: they want history, and have no timeline.)
pub const DEMO_RECORD_CAPACITY: usize = 1 << 12;

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
    /// The level the pool was started at, restored when the waits view
    /// closes.
    level: RecordLevel,
    /// The waits view is shown: recordings are explained.
    waits: bool,
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
                let message = panics::message_of(&*payload);
                sink.lock().unwrap_or_else(|e| e.into_inner()).keep(message);
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
            level: recorder.level,
            waits: false,
        })
    }

    /// Samples the pool now.
    pub fn tick(&mut self) -> Tick {
        let at = self.started.elapsed();
        let sample = self.feed.observe(Snapshot::from(&self.pool.metrics()));
        let panics = std::mem::take(&mut *self.inbox.lock().unwrap_or_else(|e| e.into_inner()));
        let mut timelines = Vec::new();
        let mut waits = Vec::new();
        if let Some((pacer, cursor)) = &mut self.timeline {
            let now = Instant::now();
            if pacer.due(now) {
                // On this (the UI) thread, so that the dashboard's own CPU
                // figure includes it.
                let recording = self.pool.recording();
                let (chunk, newest) = record::timeline_chunk(&recording, *cursor);
                *cursor = newest;
                timelines.push(chunk);
                if self.waits {
                    waits.push(WaitsChunk::explain(&recording));
                }
                let factor = if self.waits {
                    WAITS_COST_FACTOR
                } else {
                    TIMELINE_COST_FACTOR
                };
                pacer.pulled(Instant::now(), now.elapsed(), factor);
            }
        }
        Tick {
            at,
            events: panics.into_events(at),
            pools: vec![sample],
            panics_reported: true,
            link: None,
            timelines,
            waits,
            notes: self.saved.1.try_iter().collect(),
        }
    }

    /// While the waits view is shown, the pool records every task (the
    /// dashboard's small rings then hold about a second of them at the
    /// default load: enough for the window the panel explains); after, it
    /// goes back to the level it started at, which costs the pool less.
    pub fn explain_waits(&mut self, on: bool) {
        if on == self.waits {
            return;
        }
        self.waits = on;
        let level = if on {
            self.level.max(RecordLevel::Tasks)
        } else {
            self.level
        };
        self.pool.set_record_level(level);
        if on {
            if let Some((pacer, _)) = &mut self.timeline {
                // A second of every task's events: a window worth explaining.
                pacer.due_at(Instant::now() + TIMELINE_EVERY);
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::waits::Waits;

    #[test]
    fn the_waits_view_switches_the_demo_to_tasks_level_and_back() {
        let mut demo = Demo::start(
            2,
            Pattern::Skewed,
            2_000,
            7,
            DemoRecorder {
                dir: std::env::temp_dir(),
                ..DemoRecorder::default()
            },
        )
        .unwrap();
        assert_eq!(demo.pool.record_level(), RecordLevel::Scheduler);
        // Closed: recordings are taken for the timeline, never explained.
        assert!(demo.tick().waits.is_empty());
        demo.explain_waits(true);
        assert_eq!(demo.pool.record_level(), RecordLevel::Tasks);
        let deadline = Instant::now() + Duration::from_secs(60);
        let waits = loop {
            if let Some(chunk) = demo.tick().waits.pop() {
                break chunk;
            }
            assert!(Instant::now() < deadline, "no waits explained in 60 s");
            // Not an ordering: a pause between polls of the pacer.
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(waits.pool, DEMO_POOL);
        assert!(
            matches!(waits.waits, Waits::Explained { tasks, .. } if tasks > 0),
            "{waits:?}"
        );
        demo.explain_waits(false);
        assert_eq!(demo.pool.record_level(), RecordLevel::Scheduler);
        demo.shutdown();
    }
}
