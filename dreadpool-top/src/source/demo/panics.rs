//! The demo's panics: kept for the next tick, folded per worker, kept off the terminal.

use super::DEMO_POOL;
use crate::load::PANIC_PREFIX;
use crate::state::events::{EventKind, LogEvent};
use std::any::Any;
use std::collections::VecDeque;
use std::thread;
use std::time::Duration;

/// Panic messages kept between two ticks; the rest are only counted.
const PANIC_BUFFER: usize = 1_000;

/// Panics caught by the demo pool's panic handler, waiting for the next tick.
#[derive(Debug, Default)]
pub(super) struct PanicInbox {
    /// `(worker, message)`, oldest first.
    messages: VecDeque<(Option<usize>, String)>,
    /// Panics beyond the buffer, only counted.
    dropped: u64,
}

impl PanicInbox {
    /// Keeps `message` of a panic on the current thread, or only counts it
    /// when the buffer is full.
    pub(super) fn keep(&mut self, message: String) {
        if self.messages.len() < PANIC_BUFFER {
            self.messages.push_back((worker_of_thread(), message));
        } else {
            self.dropped += 1;
        }
    }

    /// The panics kept, as the log events of a tick at `at`.
    pub(super) fn into_events(self, at: Duration) -> Vec<LogEvent> {
        fold_panics(at, self.messages, self.dropped)
    }
}

/// A panic payload's message, as the event log shows it.
pub(super) fn message_of(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string panic payload>".to_owned()
    }
}

/// The worker index in a thread name such as `demo-3`.
fn worker_of_thread() -> Option<usize> {
    let current = thread::current();
    let name = current.name()?;
    let rest = name.strip_prefix(DEMO_POOL)?.strip_prefix('-')?;
    rest.parse().ok()
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
