//! How much the flight recorder records.

/// How much the flight recorder records, switchable while the pool runs
/// ([`ThreadPool::set_record_level`](crate::ThreadPool::set_record_level)).
///
/// ```
/// use dreadpool::{RecordLevel, ThreadPoolBuilder};
///
/// let pool = ThreadPoolBuilder::new().with_threads(2).build();
/// assert_eq!(pool.record_level(), RecordLevel::Scheduler); // the default
/// pool.set_record_level(RecordLevel::Tasks);
/// pool.spawn(|| {});
/// pool.join();
/// let recording = pool.recording();
/// assert!(recording.events().iter().any(|e| matches!(e.kind, dreadpool::EventKind::RunBegin { .. })));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum RecordLevel {
    /// Nothing is recorded; each recording point costs a load and a branch.
    Off,
    /// The scheduler's own, rare events: global pulls, steals, state changes
    /// (running, searching, sleeping), wakes, respawns, panics and waits
    /// inside tasks. Cheap enough to leave on: the default.
    #[default]
    Scheduler,
    /// Also every spawn and every task's run, linked by task id: a timeline
    /// of every task. A closure is stored beside its identity at this level
    /// (boxed, or for a small closure spawned from outside the pool, in a
    /// reusable slot of the spawning thread), so that its spawn can be
    /// linked to its run. It costs little on tasks of a microsecond or
    /// more, and up to about 1.7x on tiny tasks (`BENCHMARKS.md`, "Core
    /// design figures": recorder-level-tasks).
    Tasks,
}

impl RecordLevel {
    pub(crate) fn as_u8(self) -> u8 {
        match self {
            RecordLevel::Off => 0,
            RecordLevel::Scheduler => 1,
            RecordLevel::Tasks => 2,
        }
    }

    pub(crate) fn from_u8(level: u8) -> Self {
        match level {
            0 => RecordLevel::Off,
            1 => RecordLevel::Scheduler,
            _ => RecordLevel::Tasks,
        }
    }
}

impl std::fmt::Display for RecordLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RecordLevel::Off => "off",
            RecordLevel::Scheduler => "scheduler",
            RecordLevel::Tasks => "tasks",
        })
    }
}

impl std::str::FromStr for RecordLevel {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "off" => Ok(RecordLevel::Off),
            "scheduler" => Ok(RecordLevel::Scheduler),
            "tasks" => Ok(RecordLevel::Tasks),
            other => Err(format!(
                "unknown record level {other:?} (expected off, scheduler or tasks)"
            )),
        }
    }
}
