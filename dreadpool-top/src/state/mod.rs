//! The model: what the dashboard knows (samples, history, events) and what
//! the user chose (selection, sort, pause, overlays), and the pure updates of
//! both. Nothing here touches a terminal, a pool or a socket.

pub mod events;
pub mod history;
pub mod sample;
pub mod timeline;
pub mod waits;

use crate::input::Action;
use crate::pattern::{self, Pattern};
use events::{derive_events, merge_respawns, EventKind, EventLog, LogEvent};
use history::Ring;
use sample::{PoolSample, WorkerSample};
use std::cmp::Ordering;
use std::time::Duration;
use timeline::{Timeline, TimelineChunk};
use waits::{Waits, WaitsChunk};

/// How many intervals of history are kept for sparklines and charts.
pub const HISTORY: usize = 300;

/// How many lines the event log keeps.
pub const EVENT_LOG: usize = 500;

/// What the samples come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// The built-in demo: a pool in this process under a load generator.
    Demo {
        /// The load pattern.
        pattern: Pattern,
        /// Tasks per second.
        rate: u64,
        /// The load's seed.
        seed: u64,
    },
    /// Another process's pools, over an exporter connection.
    Attach {
        /// The address as given.
        addr: String,
        /// The connection's state.
        link: Link,
    },
}

/// The state of an attach connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    /// Not connected yet.
    Connecting,
    /// Receiving snapshots.
    Connected,
    /// The connection failed or dropped; retrying.
    Lost {
        /// Why.
        error: String,
        /// Attempts so far.
        attempts: u32,
    },
}

/// Whether the figures shown are current: what the header's marker says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// Samples arrive: the demo runs, or the attach connection is up.
    Live,
    /// The attach connection is lost and retried: the figures shown are
    /// frozen.
    Stale {
        /// How old the figures shown are (`None`: no figures yet).
        age: Option<Duration>,
    },
}

/// The worker table's sort column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortKey {
    /// Worker index.
    Index,
    /// Worker state.
    State,
    /// Local queue depth.
    Queue,
    /// Tasks per second.
    Tasks,
    /// Steal attempts per second.
    Steals,
    /// Tasks stolen per second.
    Stolen,
    /// Sleeps per second.
    Sleeps,
    /// Respawns.
    Respawns,
    /// Busy share.
    Busy,
}

impl SortKey {
    /// The cycle `s` walks.
    pub const ALL: [SortKey; 9] = [
        SortKey::Index,
        SortKey::State,
        SortKey::Queue,
        SortKey::Tasks,
        SortKey::Steals,
        SortKey::Stolen,
        SortKey::Sleeps,
        SortKey::Respawns,
        SortKey::Busy,
    ];

    /// The column's name, as the table header shows it.
    pub fn label(self) -> &'static str {
        match self {
            SortKey::Index => "#",
            SortKey::State => "state",
            SortKey::Queue => "queue",
            SortKey::Tasks => "tasks/s",
            SortKey::Steals => "steal/s",
            SortKey::Stolen => "stoln/s",
            SortKey::Sleeps => "slp/s",
            SortKey::Respawns => "resp",
            SortKey::Busy => "busy",
        }
    }

    /// The next column in the cycle.
    pub fn next(self) -> SortKey {
        let i = SortKey::ALL.iter().position(|&k| k == self).unwrap_or(0);
        SortKey::ALL[(i + 1) % SortKey::ALL.len()]
    }

    /// The previous column in the cycle.
    pub fn prev(self) -> SortKey {
        let i = SortKey::ALL.iter().position(|&k| k == self).unwrap_or(0);
        SortKey::ALL[(i + SortKey::ALL.len() - 1) % SortKey::ALL.len()]
    }

    /// Whether this column sorts biggest first when chosen.
    pub fn descending_by_default(self) -> bool {
        !matches!(self, SortKey::Index | SortKey::State)
    }

    fn compare(self, a: &WorkerSample, b: &WorkerSample) -> Ordering {
        let f = |x: f64, y: f64| x.partial_cmp(&y).unwrap_or(Ordering::Equal);
        match self {
            SortKey::Index => a.index.cmp(&b.index),
            SortKey::State => a.state.cmp(&b.state),
            SortKey::Queue => a.local_queue_depth.cmp(&b.local_queue_depth),
            SortKey::Tasks => f(a.tasks_per_sec, b.tasks_per_sec),
            SortKey::Steals => f(a.steals_attempted_per_sec, b.steals_attempted_per_sec),
            SortKey::Stolen => f(a.tasks_stolen_per_sec, b.tasks_stolen_per_sec),
            SortKey::Sleeps => f(a.sleeps_per_sec, b.sleeps_per_sec),
            SortKey::Respawns => a.totals.respawns.cmp(&b.totals.respawns),
            SortKey::Busy => f(a.busy_ratio, b.busy_ratio),
        }
    }
}

/// Recent history of one pool, one value per interval.
#[derive(Debug, Clone)]
pub struct PoolHistory {
    /// Pool tasks per second.
    pub tasks_per_sec: Ring<f64>,
    /// Pool busy ratio.
    pub busy: Ring<f64>,
    /// Global queue depth.
    pub global_queue: Ring<f64>,
    /// Schedule delay p50.
    pub sched_p50: Ring<Duration>,
    /// Schedule delay p99.
    pub sched_p99: Ring<Duration>,
    /// Run time p50.
    pub run_p50: Ring<Duration>,
    /// Run time p99.
    pub run_p99: Ring<Duration>,
    /// Per worker (by index): tasks per second.
    pub worker_tasks: Vec<Ring<f64>>,
    /// Per worker (by index): busy ratio.
    pub worker_busy: Vec<Ring<f64>>,
}

impl PoolHistory {
    fn new() -> Self {
        PoolHistory {
            tasks_per_sec: Ring::new(HISTORY),
            busy: Ring::new(HISTORY),
            global_queue: Ring::new(HISTORY),
            sched_p50: Ring::new(HISTORY),
            sched_p99: Ring::new(HISTORY),
            run_p50: Ring::new(HISTORY),
            run_p99: Ring::new(HISTORY),
            worker_tasks: Vec::new(),
            worker_busy: Vec::new(),
        }
    }

    fn record(&mut self, sample: &PoolSample) {
        self.tasks_per_sec.push(sample.tasks_per_sec);
        self.busy.push(sample.busy_ratio);
        self.global_queue.push(sample.global_queue_depth as f64);
        self.sched_p50.push(sample.schedule_delay.p50);
        self.sched_p99.push(sample.schedule_delay.p99);
        self.run_p50.push(sample.run_time.p50);
        self.run_p99.push(sample.run_time.p99);
        for worker in &sample.workers {
            while self.worker_tasks.len() <= worker.index {
                self.worker_tasks.push(Ring::new(HISTORY));
                self.worker_busy.push(Ring::new(HISTORY));
            }
            self.worker_tasks[worker.index].push(worker.tasks_per_sec);
            self.worker_busy[worker.index].push(worker.busy_ratio);
        }
    }
}

/// One pool as the dashboard knows it.
#[derive(Debug, Clone)]
pub struct PoolView {
    /// The latest interval.
    pub sample: PoolSample,
    /// Recent intervals.
    pub history: PoolHistory,
}

/// What one sampling tick brings in.
#[derive(Debug, Clone, Default)]
pub struct Tick {
    /// Time since the dashboard started.
    pub at: Duration,
    /// The latest interval of each pool, in the source's order.
    pub pools: Vec<PoolSample>,
    /// Events the source saw itself (in-process panics, with messages).
    pub events: Vec<LogEvent>,
    /// True when `events` carries the panics (with their messages), so
    /// that they are not also derived from counters.
    pub panics_reported: bool,
    /// The attach connection's state, when attached.
    pub link: Option<Link>,
    /// What the flight recorder saw since the previous chunk, per pool
    /// (only on the ticks that pulled a recording).
    pub timelines: Vec<TimelineChunk>,
    /// The waits of the pools whose recordings were explained on this tick
    /// (only while the waits view is shown, on the ticks that pulled a
    /// recording).
    pub waits: Vec<WaitsChunk>,
    /// Outcomes to tell the user (a recording saved, or why not): the
    /// newest goes to the footer, each to the event log.
    pub notes: Vec<String>,
}

/// An effect of an update on the world outside the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// Switch the demo load to this pattern.
    SetPattern(Pattern),
    /// Set the demo load rate.
    SetRate(u64),
    /// Save a flight recording of the pool at this index (in the source's
    /// order) to a file.
    SaveRecording {
        /// The pool's index.
        pool: usize,
    },
}

/// The whole model.
#[derive(Debug, Clone)]
pub struct App {
    /// Where samples come from.
    pub mode: Mode,
    /// The sampling period.
    pub refresh: Duration,
    /// Known pools, in the source's order.
    pub pools: Vec<PoolView>,
    /// The pool shown.
    pub selected_pool: usize,
    /// The selected worker's index (not its row: the selection follows the
    /// worker when the sort order changes).
    pub selected_worker: usize,
    /// The sort column.
    pub sort: SortKey,
    /// Biggest first.
    pub descending: bool,
    /// Display frozen.
    pub paused: bool,
    /// Help overlay shown.
    pub show_help: bool,
    /// Worker detail view open.
    pub detail_open: bool,
    /// Waits view open: the shown pool's longest waits and their causes.
    pub waits_open: bool,
    /// Panics, respawns and connection changes.
    pub events: EventLog,
    /// The dashboard's own CPU use (its UI thread), 0.0 to 1.0 of a core.
    pub overhead: Option<f64>,
    /// Time since the dashboard started, as of the latest tick.
    pub now: Duration,
    /// A short message for the footer (for example, why a key did nothing).
    pub status: Option<String>,
    /// Each pool's timeline, by name (only pools whose source has a
    /// flight recorder).
    pub timelines: Vec<(String, Timeline)>,
    /// Each pool's newest explained waits, by name (only while the waits
    /// view is shown: the source explains nothing otherwise).
    pub waits: Vec<(String, Waits)>,
    quit: bool,
    held: Option<Tick>,
    /// The newest tick's time, paused or not (`now` stops while paused).
    clock: Duration,
    /// The time of the tick whose samples are shown.
    shown_at: Option<Duration>,
}

impl App {
    /// A model with no samples yet.
    pub fn new(mode: Mode, refresh: Duration) -> Self {
        App {
            mode,
            refresh,
            pools: Vec::new(),
            selected_pool: 0,
            selected_worker: 0,
            sort: SortKey::Index,
            descending: false,
            paused: false,
            show_help: false,
            detail_open: false,
            waits_open: false,
            events: EventLog::new(EVENT_LOG),
            overhead: None,
            now: Duration::ZERO,
            status: None,
            timelines: Vec::new(),
            waits: Vec::new(),
            quit: false,
            held: None,
            clock: Duration::ZERO,
            shown_at: None,
        }
    }

    /// True once the user asked to leave.
    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// Whether the figures shown are current. Attached, after the host
    /// dies or the connection drops, they stay on screen frozen while the
    /// connection is retried: stale, aging with every tick, until samples
    /// arrive again.
    ///
    /// ```
    /// use dreadpool_top::state::{App, Freshness, Link, Mode, Tick};
    /// use std::time::Duration;
    ///
    /// let mode = Mode::Attach { addr: "/tmp/app.sock".into(), link: Link::Connected };
    /// let mut app = App::new(mode, Duration::from_millis(500));
    /// assert_eq!(app.freshness(), Freshness::Live);
    /// let lost = Link::Lost { error: "closed".into(), attempts: 1 };
    /// app.ingest(Tick { at: Duration::from_secs(3), link: Some(lost), ..Tick::default() });
    /// assert_eq!(app.freshness(), Freshness::Stale { age: None });
    /// app.ingest(Tick { at: Duration::from_secs(4), link: Some(Link::Connected), ..Tick::default() });
    /// assert_eq!(app.freshness(), Freshness::Live);
    /// ```
    pub fn freshness(&self) -> Freshness {
        match &self.mode {
            Mode::Attach {
                link: Link::Lost { .. },
                ..
            } => Freshness::Stale {
                age: self.shown_at.map(|at| self.clock.saturating_sub(at)),
            },
            _ => Freshness::Live,
        }
    }

    /// The pool shown, if any sample arrived.
    pub fn current(&self) -> Option<&PoolView> {
        self.pools.get(self.selected_pool)
    }

    /// The shown pool's timeline, if its source has a flight recorder.
    pub fn timeline(&self) -> Option<&Timeline> {
        let name = &self.current()?.sample.name;
        self.timelines
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t)
    }

    /// The shown pool's newest explained waits, if a recording of it was
    /// explained since the waits view opened.
    pub fn waits(&self) -> Option<&Waits> {
        let name = &self.current()?.sample.name;
        self.waits.iter().find(|(n, _)| n == name).map(|(_, w)| w)
    }

    /// The shown pool's workers in display (sort) order.
    pub fn sorted_workers(&self) -> Vec<&WorkerSample> {
        let Some(pool) = self.current() else {
            return Vec::new();
        };
        let mut workers: Vec<&WorkerSample> = pool.sample.workers.iter().collect();
        workers.sort_by(|a, b| {
            let order = self.sort.compare(a, b);
            let order = if self.descending {
                order.reverse()
            } else {
                order
            };
            order.then(a.index.cmp(&b.index))
        });
        workers
    }

    /// The row of the selected worker in display order.
    pub fn selected_row(&self) -> Option<usize> {
        self.sorted_workers()
            .iter()
            .position(|w| w.index == self.selected_worker)
    }

    /// The selected worker's latest interval.
    pub fn selected(&self) -> Option<&WorkerSample> {
        self.current()?
            .sample
            .workers
            .iter()
            .find(|w| w.index == self.selected_worker)
    }

    /// Takes in one tick of samples (held back while paused: the newest
    /// samples and every event are applied on resume).
    pub fn ingest(&mut self, mut tick: Tick) {
        self.clock = self.clock.max(tick.at);
        // The connection's state is not data: it shows even while paused.
        if let Some(link) = tick.link.take() {
            self.set_link(tick.at, link);
        }
        // So are the outcomes of what the user asked for.
        for note in tick.notes.drain(..) {
            self.events
                .push(LogEvent::note(tick.at, EventKind::Info, note.clone()));
            self.status = Some(note);
        }
        if self.paused {
            let held = self.held.get_or_insert_with(Tick::default);
            held.at = tick.at;
            held.pools = tick.pools;
            held.panics_reported = tick.panics_reported;
            held.events.extend(tick.events);
            let excess = held.events.len().saturating_sub(EVENT_LOG);
            held.events.drain(..excess);
            // Chunks hold only what is new: every one is kept for resume.
            held.timelines.extend(tick.timelines);
            // Each chunk of waits replaces the last: only the newest counts.
            for chunk in tick.waits {
                held.waits.retain(|c| c.pool != chunk.pool);
                held.waits.push(chunk);
            }
            return;
        }
        for chunk in tick.waits {
            match self.waits.iter_mut().find(|(n, _)| *n == chunk.pool) {
                Some((_, waits)) => *waits = chunk.waits,
                None => self.waits.push((chunk.pool, chunk.waits)),
            }
        }
        for chunk in &tick.timelines {
            match self.timelines.iter_mut().find(|(n, _)| *n == chunk.pool) {
                Some((_, timeline)) => timeline.absorb(chunk),
                None => {
                    let mut timeline = Timeline::new();
                    timeline.absorb(chunk);
                    self.timelines.push((chunk.pool.clone(), timeline));
                }
            }
        }
        self.now = tick.at;
        if !tick.pools.is_empty() {
            self.shown_at = Some(tick.at);
        }
        let mut reported = tick.events;
        let mut derived = Vec::new();
        for sample in tick.pools {
            match self.pools.iter_mut().find(|p| p.sample.name == sample.name) {
                Some(view) => {
                    derived.extend(derive_events(
                        &view.sample,
                        &sample,
                        tick.at,
                        !tick.panics_reported,
                    ));
                    view.history.record(&sample);
                    view.sample = sample;
                }
                None => {
                    let mut history = PoolHistory::new();
                    history.record(&sample);
                    self.pools.push(PoolView { sample, history });
                }
            }
        }
        let derived = merge_respawns(&mut reported, derived);
        for event in reported.into_iter().chain(derived) {
            self.events.push(event);
        }
        self.clamp_selection();
    }

    /// Records the attach connection's state, logging changes.
    pub fn set_link(&mut self, at: Duration, link: Link) {
        self.clock = self.clock.max(at);
        if let Mode::Attach { addr, link: old } = &mut self.mode {
            if *old == link {
                return;
            }
            let event = match &link {
                Link::Connected => Some(LogEvent::note(
                    at,
                    EventKind::Info,
                    format!("connected to {addr}"),
                )),
                Link::Lost { error, attempts } if *attempts <= 1 || *old == Link::Connected => {
                    Some(LogEvent::note(
                        at,
                        EventKind::Warning,
                        format!("connection to {addr} lost: {error}; retrying"),
                    ))
                }
                _ => None,
            };
            *old = link;
            if let Some(event) = event {
                self.events.push(event);
            }
        }
    }

    /// Applies one user action; returns what the world outside must do.
    pub fn update(&mut self, action: Action) -> Option<Command> {
        self.status = None;
        match action {
            Action::Quit => self.quit = true,
            Action::Back => {
                if self.show_help {
                    self.show_help = false;
                } else if self.detail_open {
                    self.detail_open = false;
                } else if self.waits_open {
                    self.set_waits_open(false);
                } else {
                    self.quit = true;
                }
            }
            Action::ToggleHelp => self.show_help = !self.show_help,
            Action::TogglePause => {
                self.paused = !self.paused;
                if !self.paused {
                    if let Some(held) = self.held.take() {
                        self.ingest(held);
                    }
                }
            }
            Action::Up => self.move_selection(-1),
            Action::Down => self.move_selection(1),
            Action::First => self.move_selection(isize::MIN / 2),
            Action::Last => self.move_selection(isize::MAX / 2),
            Action::Open => {
                self.detail_open = !self.detail_open && self.selected().is_some();
                // One panel over the body at a time.
                if self.detail_open {
                    self.set_waits_open(false);
                }
            }
            Action::ToggleWaits => {
                self.set_waits_open(!self.waits_open);
                if self.waits_open {
                    self.detail_open = false;
                }
            }
            Action::SortNext => self.set_sort(self.sort.next()),
            Action::SortPrev => self.set_sort(self.sort.prev()),
            Action::SortReverse => self.descending = !self.descending,
            Action::NextPool => self.switch_pool(1),
            Action::PrevPool => self.switch_pool(-1),
            Action::Pattern(new) => return self.change_load(Some(new), None),
            Action::SaveRecording => {
                let Some(pool) = self.current() else {
                    self.status = Some("no pool to record yet".into());
                    return None;
                };
                self.status = Some(format!("recording pool {}…", pool.sample.name));
                return Some(Command::SaveRecording {
                    pool: self.selected_pool,
                });
            }
            Action::RateUp | Action::RateDown => {
                let Mode::Demo { rate, .. } = self.mode else {
                    return self.change_load(None, None);
                };
                let new = if action == Action::RateUp {
                    pattern::rate_up(rate)
                } else {
                    pattern::rate_down(rate)
                };
                return self.change_load(None, Some(new));
            }
        }
        None
    }

    fn change_load(
        &mut self,
        new_pattern: Option<Pattern>,
        new_rate: Option<u64>,
    ) -> Option<Command> {
        let now = self.now;
        let Mode::Demo { pattern, rate, .. } = &mut self.mode else {
            self.status = Some("load keys work in the demo only (not when attached)".into());
            return None;
        };
        if let Some(new) = new_pattern {
            if *pattern == new {
                return None;
            }
            *pattern = new;
            self.events.push(LogEvent::note(
                now,
                EventKind::Info,
                format!("load pattern: {new} ({})", new.describe()),
            ));
            return Some(Command::SetPattern(new));
        }
        if let Some(new) = new_rate {
            if *rate == new {
                return None;
            }
            *rate = new;
            return Some(Command::SetRate(new));
        }
        None
    }

    fn set_waits_open(&mut self, open: bool) {
        self.waits_open = open;
        if !open {
            // Explained windows age: reopened, the view shows only new ones.
            self.waits.clear();
            if let Some(held) = &mut self.held {
                held.waits.clear();
            }
        }
    }

    fn set_sort(&mut self, key: SortKey) {
        self.sort = key;
        self.descending = key.descending_by_default();
    }

    fn switch_pool(&mut self, step: isize) {
        let n = self.pools.len();
        if n < 2 {
            return;
        }
        self.selected_pool = (self.selected_pool as isize + step).rem_euclid(n as isize) as usize;
        self.selected_worker = 0;
        self.detail_open = false;
        self.clamp_selection();
    }

    fn move_selection(&mut self, step: isize) {
        let order: Vec<usize> = self.sorted_workers().iter().map(|w| w.index).collect();
        if order.is_empty() {
            return;
        }
        let row = order
            .iter()
            .position(|&i| i == self.selected_worker)
            .unwrap_or(0) as isize;
        let row = row.saturating_add(step).clamp(0, order.len() as isize - 1) as usize;
        self.selected_worker = order[row];
    }

    fn clamp_selection(&mut self) {
        if self.selected_pool >= self.pools.len() {
            self.selected_pool = self.pools.len().saturating_sub(1);
        }
        if let Some(pool) = self.pools.get(self.selected_pool) {
            let threads = pool.sample.workers.len();
            if threads > 0 && self.selected_worker >= threads {
                self.selected_worker = threads - 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    fn demo() -> App {
        App::new(
            Mode::Demo {
                pattern: Pattern::Steady,
                rate: 2_000,
                seed: 1,
            },
            Duration::from_millis(500),
        )
    }

    fn fed(ticks: usize) -> App {
        let mut app = demo();
        for tick in fixture::ticks(7, 4, ticks) {
            app.ingest(tick);
        }
        app
    }

    #[test]
    fn ingest_keeps_the_latest_sample_and_history() {
        let app = fed(10);
        let pool = app.current().unwrap();
        assert_eq!(pool.sample.workers.len(), 4);
        assert_eq!(pool.history.tasks_per_sec.len(), 10);
        assert_eq!(pool.history.worker_tasks.len(), 4);
        assert_eq!(pool.history.worker_tasks[3].len(), 10);
    }

    #[test]
    fn selection_moves_in_display_order_and_stays_in_bounds() {
        let mut app = fed(3);
        assert_eq!(app.selected_worker, 0);
        app.update(Action::Up);
        assert_eq!(app.selected_worker, 0);
        app.update(Action::Down);
        app.update(Action::Down);
        assert_eq!(app.selected_worker, 2);
        app.update(Action::Last);
        assert_eq!(app.selected_worker, 3);
        app.update(Action::Down);
        assert_eq!(app.selected_worker, 3);
        app.update(Action::First);
        assert_eq!(app.selected_worker, 0);

        // Sorted by tasks/s, biggest first: Down walks that order.
        app.update(Action::SortNext); // state
        app.update(Action::SortNext); // queue
        app.update(Action::SortNext); // tasks
        assert_eq!(app.sort, SortKey::Tasks);
        assert!(app.descending);
        let order: Vec<usize> = app.sorted_workers().iter().map(|w| w.index).collect();
        let rates: Vec<f64> = app
            .sorted_workers()
            .iter()
            .map(|w| w.tasks_per_sec)
            .collect();
        assert!(rates.windows(2).all(|w| w[0] >= w[1]), "{rates:?}");
        app.update(Action::First);
        assert_eq!(app.selected_worker, order[0]);
        app.update(Action::Down);
        assert_eq!(app.selected_worker, order[1]);
        assert_eq!(app.selected_row(), Some(1));
        app.update(Action::SortReverse);
        assert!(!app.descending);
        assert_eq!(
            app.selected_worker, order[1],
            "the selection follows the worker"
        );
    }

    #[test]
    fn sort_cycles_through_every_column_both_ways() {
        let mut key = SortKey::Index;
        for _ in 0..SortKey::ALL.len() {
            key = key.next();
        }
        assert_eq!(key, SortKey::Index);
        assert_eq!(SortKey::Index.prev(), SortKey::Busy);
        assert_eq!(SortKey::Busy.next(), SortKey::Index);
    }

    #[test]
    fn esc_closes_help_then_detail_then_quits() {
        let mut app = fed(2);
        app.update(Action::Open);
        assert!(app.detail_open);
        app.update(Action::ToggleHelp);
        assert!(app.show_help);
        app.update(Action::Back);
        assert!(!app.show_help && app.detail_open && !app.should_quit());
        app.update(Action::Back);
        assert!(!app.detail_open && !app.should_quit());
        app.update(Action::Back);
        assert!(app.should_quit());
    }

    fn waits_chunk(pool: &str, cause: &'static str) -> WaitsChunk {
        WaitsChunk {
            pool: pool.into(),
            waits: Waits::Explained {
                worst: vec![waits::WaitRow {
                    task: 9,
                    delay: Duration::from_millis(3),
                    ran_on: 1,
                    queue: "global".into(),
                    cause,
                    details: String::new(),
                    site: String::new(),
                }],
                by_cause: Vec::new(),
                tasks: 1,
                spawns_missing: 0,
            },
        }
    }

    fn worst_cause(app: &App) -> Option<&'static str> {
        match app.waits()? {
            Waits::Explained { worst, .. } => worst.first().map(|w| w.cause),
            Waits::NeedsTasksLevel { .. } | Waits::NoRecorder => None,
        }
    }

    #[test]
    fn w_opens_the_waits_of_the_shown_pool_and_esc_closes_them_before_quitting() {
        let mut app = fed(2);
        app.update(Action::Open);
        app.update(Action::ToggleWaits);
        assert!(app.waits_open && !app.detail_open, "one panel at a time");
        assert_eq!(app.waits(), None, "nothing explained yet");
        let shown = app.current().unwrap().sample.name.clone();
        app.ingest(Tick {
            at: app.now,
            waits: vec![
                waits_chunk("other", "pool asleep"),
                waits_chunk(&shown, "every worker busy"),
            ],
            ..Tick::default()
        });
        assert_eq!(worst_cause(&app), Some("every worker busy"));
        // A newer chunk replaces the pool's waits: the panel is live.
        app.ingest(Tick {
            at: app.now,
            waits: vec![waits_chunk(&shown, "behind a long task")],
            ..Tick::default()
        });
        assert_eq!(worst_cause(&app), Some("behind a long task"));
        assert_eq!(app.waits.len(), 2);
        app.update(Action::Open);
        assert!(app.detail_open && !app.waits_open);
        app.update(Action::ToggleWaits);
        app.update(Action::Back);
        assert!(!app.waits_open && !app.should_quit());
        assert_eq!(app.waits(), None, "closed: what was explained is dropped");
        app.update(Action::Back);
        assert!(app.should_quit());
    }

    #[test]
    fn paused_waits_are_held_and_the_newest_applied_on_resume() {
        let mut app = fed(1);
        let shown = app.current().unwrap().sample.name.clone();
        app.update(Action::ToggleWaits);
        app.update(Action::TogglePause);
        for cause in ["pool asleep", "no progress"] {
            app.ingest(Tick {
                at: app.now,
                waits: vec![waits_chunk(&shown, cause)],
                ..Tick::default()
            });
        }
        assert_eq!(app.waits(), None);
        app.update(Action::TogglePause);
        assert_eq!(worst_cause(&app), Some("no progress"));
    }

    #[test]
    fn enter_toggles_the_detail_but_not_without_workers() {
        let mut app = demo();
        app.update(Action::Open);
        assert!(!app.detail_open);
        let mut app = fed(1);
        app.update(Action::Open);
        assert!(app.detail_open);
        app.update(Action::Open);
        assert!(!app.detail_open);
    }

    #[test]
    fn pause_holds_samples_and_events_until_resumed() {
        let mut ticks = fixture::ticks(7, 4, 6).into_iter();
        let mut app = demo();
        app.ingest(ticks.next().unwrap());
        app.update(Action::TogglePause);
        assert!(app.paused);
        let frozen = app.current().unwrap().sample.clone();
        let mut panic_tick = ticks.next().unwrap();
        panic_tick
            .events
            .push(LogEvent::note(Duration::ZERO, EventKind::Panic, "boom"));
        app.ingest(panic_tick);
        for tick in ticks.by_ref() {
            app.ingest(tick);
        }
        assert_eq!(app.current().unwrap().sample, frozen);
        assert_eq!(app.events.panics(), 0);
        app.update(Action::TogglePause);
        assert!(!app.paused);
        assert_ne!(app.current().unwrap().sample, frozen);
        // The one pushed above, and the fixture's own at its fourth tick.
        assert_eq!(app.events.panics(), 2);
    }

    #[test]
    fn load_keys_change_the_demo_and_say_so() {
        let mut app = fed(1);
        assert_eq!(
            app.update(Action::Pattern(Pattern::PanicStorm)),
            Some(Command::SetPattern(Pattern::PanicStorm))
        );
        assert_eq!(app.update(Action::Pattern(Pattern::PanicStorm)), None);
        assert_eq!(app.update(Action::RateUp), Some(Command::SetRate(5_000)));
        assert_eq!(app.update(Action::RateDown), Some(Command::SetRate(2_000)));
        assert!(matches!(
            app.mode,
            Mode::Demo {
                pattern: Pattern::PanicStorm,
                rate: 2_000,
                ..
            }
        ));
        assert!(app.events.newest(1)[0].message.contains("panic-storm"));

        let mut attached = App::new(
            Mode::Attach {
                addr: "/tmp/x".into(),
                link: Link::Connecting,
            },
            Duration::from_millis(500),
        );
        assert_eq!(attached.update(Action::RateUp), None);
        assert!(attached.status.is_some());
    }

    #[test]
    fn respawns_are_logged_from_counter_growth_and_panics_only_when_unreported() {
        let mut app = demo();
        let mut ticks = fixture::ticks(7, 2, 2);
        ticks[1].pools[0].workers[1].totals.respawns += 2;
        ticks[1].pools[0].workers[1].totals.panics += 2;
        ticks[1].panics_reported = true;
        for tick in ticks {
            app.ingest(tick);
        }
        // Reported panics are not derived again; the respawns are counted.
        assert_eq!(app.events.respawns(), 2);
        assert_eq!(app.events.panics(), 0);
    }

    #[test]
    fn figures_go_stale_while_the_link_is_lost_and_live_again_with_new_samples() {
        let mut app = App::new(
            Mode::Attach {
                addr: "/tmp/x".into(),
                link: Link::Connected,
            },
            Duration::from_millis(500),
        );
        let mut ticks = fixture::ticks(3, 2, 3).into_iter();
        let first = ticks.next().unwrap();
        let shown = first.at;
        app.ingest(first);
        assert_eq!(app.freshness(), Freshness::Live);

        // Lost: the figures age with every tick that brings none.
        let lost = Link::Lost {
            error: "the exporter closed the connection".into(),
            attempts: 1,
        };
        for secs in [1, 5, 12] {
            let at = shown + Duration::from_secs(secs);
            app.ingest(Tick {
                at,
                link: Some(lost.clone()),
                ..Tick::default()
            });
            assert_eq!(
                app.freshness(),
                Freshness::Stale {
                    age: Some(Duration::from_secs(secs))
                }
            );
        }
        // Paused, they still age (the clock is not the display's).
        app.update(Action::TogglePause);
        app.set_link(shown + Duration::from_secs(20), lost.clone());
        assert_eq!(
            app.freshness(),
            Freshness::Stale {
                age: Some(Duration::from_secs(20))
            }
        );
        app.update(Action::TogglePause);

        // Back: live again.
        let mut back = ticks.next().unwrap();
        back.at = shown + Duration::from_secs(21);
        back.link = Some(Link::Connected);
        app.ingest(back);
        assert_eq!(app.freshness(), Freshness::Live);
        // The demo is always live.
        assert_eq!(fed(1).freshness(), Freshness::Live);
    }

    #[test]
    fn pools_are_switched_with_tab_and_link_changes_are_logged() {
        let mut app = App::new(
            Mode::Attach {
                addr: "/tmp/x".into(),
                link: Link::Connecting,
            },
            Duration::from_millis(500),
        );
        app.set_link(Duration::ZERO, Link::Connected);
        let mut tick = fixture::ticks(3, 2, 1).remove(0);
        let mut second = tick.pools[0].clone();
        second.name = "batch".into();
        tick.pools.push(second);
        app.ingest(tick);
        assert_eq!(app.pools.len(), 2);
        app.update(Action::NextPool);
        assert_eq!(app.current().unwrap().sample.name, "batch");
        app.update(Action::NextPool);
        assert_eq!(app.selected_pool, 0);
        app.update(Action::PrevPool);
        assert_eq!(app.selected_pool, 1);
        let lost = Link::Lost {
            error: "refused".into(),
            attempts: 1,
        };
        app.set_link(Duration::ZERO, lost.clone());
        app.set_link(Duration::ZERO, lost);
        let warnings = app
            .events
            .newest(10)
            .iter()
            .filter(|e| e.kind == EventKind::Warning)
            .count();
        assert_eq!(warnings, 1);
    }
}
