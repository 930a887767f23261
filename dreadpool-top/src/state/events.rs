//! The event log: panics, respawns and connection changes, newest last.

use super::history::Ring;
use super::sample::PoolSample;
use std::time::Duration;

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// A task panicked.
    Panic,
    /// A worker thread was replaced after a panic.
    Respawn,
    /// Something worth knowing (a pattern change, a connection made).
    Info,
    /// Something went wrong outside the pool (a lost connection).
    Warning,
}

impl EventKind {
    /// A short fixed-width label.
    pub fn label(self) -> &'static str {
        match self {
            EventKind::Panic => "PANIC",
            EventKind::Respawn => "RESPAWN",
            EventKind::Info => "INFO",
            EventKind::Warning => "WARN",
        }
    }
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq)]
pub struct LogEvent {
    /// When, as time since the dashboard started.
    pub at: Duration,
    /// The pool it concerns, if any.
    pub pool: Option<String>,
    /// The worker it concerns, if any.
    pub worker: Option<usize>,
    /// What happened.
    pub kind: EventKind,
    /// How many times, when several alike are folded into one line.
    pub count: u64,
    /// For a panic line: how many of the worker's threads were replaced in
    /// the same interval (shown on the same line).
    pub respawned: u64,
    /// The panic message or description.
    pub message: String,
}

impl LogEvent {
    /// An event concerning no pool or worker.
    pub fn note(at: Duration, kind: EventKind, message: impl Into<String>) -> Self {
        LogEvent {
            at,
            pool: None,
            worker: None,
            kind,
            count: 1,
            respawned: 0,
            message: message.into(),
        }
    }
}

/// The newest events, bounded.
#[derive(Debug, Clone)]
pub struct EventLog {
    events: Ring<LogEvent>,
    panics: u64,
    respawns: u64,
}

impl EventLog {
    /// A log keeping the last `capacity` lines.
    pub fn new(capacity: usize) -> Self {
        EventLog {
            events: Ring::new(capacity),
            panics: 0,
            respawns: 0,
        }
    }

    /// Appends `event`, dropping the oldest line when full. (A panic storm
    /// arrives already folded: one line per worker and interval, with a
    /// count.)
    pub fn push(&mut self, event: LogEvent) {
        match event.kind {
            EventKind::Panic => {
                self.panics += event.count;
                self.respawns += event.respawned;
            }
            EventKind::Respawn => self.respawns += event.count,
            _ => {}
        }
        self.events.push(event);
    }

    /// Panics logged so far (folded counts included).
    pub fn panics(&self) -> u64 {
        self.panics
    }

    /// Respawns logged so far.
    pub fn respawns(&self) -> u64 {
        self.respawns
    }

    /// Number of lines held.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// True when the log is empty.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The newest `n` lines, oldest first.
    pub fn newest(&self, n: usize) -> Vec<LogEvent> {
        self.events.tail(n)
    }
}

/// The events implied by the growth of the workers' counters from
/// `before` to `after`, one line per worker: a panic line (counting the
/// respawns with it) when `with_panics` and a task panicked, else a respawn
/// line when a thread was replaced. This is how an attached dashboard, which
/// sees no panic messages, learns of panics; in-process, panics arrive with
/// their messages and only respawns are derived (see [`merge_respawns`]).
pub fn derive_events(
    before: &PoolSample,
    after: &PoolSample,
    at: Duration,
    with_panics: bool,
) -> Vec<LogEvent> {
    let mut events = Vec::new();
    for worker in &after.workers {
        let Some(old) = before.workers.iter().find(|w| w.index == worker.index) else {
            continue;
        };
        let panics = worker.totals.panics.saturating_sub(old.totals.panics);
        let respawns = worker.totals.respawns.saturating_sub(old.totals.respawns);
        let base = LogEvent {
            at,
            pool: Some(after.name.clone()),
            worker: Some(worker.index),
            kind: EventKind::Respawn,
            count: respawns,
            respawned: 0,
            message: plural(respawns, "thread replaced", "threads replaced"),
        };
        if with_panics && panics > 0 {
            events.push(LogEvent {
                kind: EventKind::Panic,
                count: panics,
                respawned: respawns,
                message: plural(panics, "task panicked", "tasks panicked"),
                ..base
            });
        } else if respawns > 0 {
            events.push(base);
        }
    }
    events
}

/// Folds derived respawn lines into the reported panic lines of the same
/// pool and worker (so that a panic and the respawn it caused read as one
/// line); returns the respawn lines left over.
pub fn merge_respawns(reported: &mut [LogEvent], derived: Vec<LogEvent>) -> Vec<LogEvent> {
    derived
        .into_iter()
        .filter(|d| {
            if d.kind != EventKind::Respawn {
                return true;
            }
            match reported
                .iter_mut()
                .find(|r| r.kind == EventKind::Panic && r.worker == d.worker && r.pool == d.pool)
            {
                Some(panic) => {
                    panic.respawned += d.count;
                    false
                }
                None => true,
            }
        })
        .collect()
}

fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        one.to_owned()
    } else {
        format!("{n} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_panics_and_respawns_and_keeps_the_newest() {
        let mut log = EventLog::new(2);
        for i in 0..3 {
            log.push(LogEvent {
                at: Duration::from_secs(i),
                pool: None,
                worker: Some(1),
                kind: EventKind::Panic,
                count: 2,
                respawned: 1,
                message: format!("boom {i}"),
            });
        }
        log.push(LogEvent::note(Duration::ZERO, EventKind::Respawn, "r"));
        assert_eq!(log.panics(), 6);
        assert_eq!(log.respawns(), 4);
        let newest = log.newest(5);
        assert_eq!(newest.len(), 2);
        assert_eq!(newest[0].message, "boom 2");
        assert_eq!(newest[1].kind, EventKind::Respawn);
    }

    #[test]
    fn respawns_and_panics_are_derived_from_counter_growth() {
        use crate::state::sample::WorkerSample;
        let worker = |index, panics, respawns| WorkerSample {
            index,
            totals: crate::state::sample::WorkerTotals {
                panics,
                respawns,
                ..Default::default()
            },
            ..Default::default()
        };
        let before = PoolSample {
            name: "p".into(),
            workers: vec![worker(0, 1, 1), worker(1, 0, 0)],
            ..Default::default()
        };
        let after = PoolSample {
            name: "p".into(),
            workers: vec![worker(0, 1, 1), worker(1, 3, 2)],
            ..Default::default()
        };
        let at = Duration::from_secs(7);
        let events = derive_events(&before, &after, at, true);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].kind, EventKind::Panic);
        assert_eq!(events[0].count, 3);
        assert_eq!(events[0].respawned, 2);
        assert_eq!(events[0].worker, Some(1));
        assert_eq!(events[0].message, "3 tasks panicked");
        let respawns = derive_events(&before, &after, at, false);
        assert_eq!(respawns.len(), 1);
        assert_eq!(respawns[0].kind, EventKind::Respawn);
        assert_eq!(respawns[0].message, "2 threads replaced");
        assert!(derive_events(&after, &after, at, true).is_empty());

        // In-process: the reported panic line takes the respawns.
        let mut reported = vec![LogEvent {
            pool: Some("p".into()),
            worker: Some(1),
            ..LogEvent::note(at, EventKind::Panic, "boom")
        }];
        let left = merge_respawns(&mut reported, respawns);
        assert!(left.is_empty());
        assert_eq!(reported[0].respawned, 2);
        let other = vec![LogEvent {
            pool: Some("p".into()),
            worker: Some(0),
            ..LogEvent::note(at, EventKind::Respawn, "1 thread replaced")
        }];
        assert_eq!(merge_respawns(&mut reported, other).len(), 1);
    }
}
