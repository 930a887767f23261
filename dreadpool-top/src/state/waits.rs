//! The waits view's model: the shown pool's longest waits (spawn to
//! start), each with its cause, and the totals by cause, worked out with
//! `Recording::explain` from the newest flight recording the source took.
//!
//! The source turns each recording into a [`WaitsChunk`] with
//! [`WaitsChunk::explain`]; the model keeps the newest one per pool (a wait
//! is about one window of the recorder's rings: the panel shows the window
//! the rings hold now, live, rather than piling up windows whose worst
//! would soon be all that shows). Everything the view draws is plain text
//! and durations here, so that a fixed chunk draws the same panel every time.

use dreadpool_core::{ExplainError, Recording, SpawnQueue, SpawnSite, Track, WaitCause};
use std::time::Duration;

/// How many of the longest waits a chunk keeps (more than the tallest
/// panel shows).
pub const WAITS_TOP: usize = 100;

/// One explained wait, as the panel shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitRow {
    /// The task's identity in the recording.
    pub task: u64,
    /// From its spawn to its start.
    pub delay: Duration,
    /// The worker that ran it.
    pub ran_on: usize,
    /// Where it was queued, in words (`global`, `local w2`, `inbox w1`).
    pub queue: String,
    /// The cause's short name (`behind a long task`).
    pub cause: &'static str,
    /// The cause's figures, compact (`w2 ran one task 31.0ms, 4 ahead`).
    pub details: String,
    /// Where the task was spawned, short (`server.rs:88`); empty where
    /// the recording has no site for it (a join's fork, a recording
    /// without sites).
    pub site: String,
}

/// The waits of one cause, added up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CauseRow {
    /// The cause's short name.
    pub cause: &'static str,
    /// How many waits had it.
    pub waits: usize,
    /// Their delays added up.
    pub total: Duration,
    /// The 99th percentile of their delays.
    pub p99: Duration,
}

/// What one recording says about the waits of its pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Waits {
    /// The recording's tasks, explained.
    Explained {
        /// The longest waits, longest first.
        worst: Vec<WaitRow>,
        /// Every wait's cause, added up, largest total first.
        by_cause: Vec<CauseRow>,
        /// Tasks whose spawn and start are both in the recording.
        tasks: usize,
        /// Tasks started whose spawn fell out of the rings.
        spawns_missing: usize,
    },
    /// The pool records below `Tasks` level: no spawn can be linked to its
    /// run, so there is no wait to explain (the panel says how to fix it).
    NeedsTasksLevel {
        /// The level it records at, in words (`Scheduler`, `Off`).
        level: String,
    },
    /// The attached host has no flight recorder (built without dreadpool's
    /// `recorder` feature): no recording will come.
    NoRecorder,
}

/// The waits of one pool, from one recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitsChunk {
    /// The pool's name.
    pub pool: String,
    /// What the recording says.
    pub waits: Waits,
}

impl WaitsChunk {
    /// Explains `recording`'s [`WAITS_TOP`] longest waits.
    pub fn explain(recording: &Recording) -> WaitsChunk {
        let waits = match recording.explain(WAITS_TOP) {
            Ok(explanation) => Waits::Explained {
                worst: explanation
                    .worst
                    .iter()
                    .map(|w| WaitRow {
                        task: w.task,
                        delay: Duration::from_nanos(w.delay_ns()),
                        ran_on: w.ran_on,
                        queue: queue(w.queue, w.spawned_on),
                        cause: w.cause.name(),
                        details: details(&w.cause),
                        site: recording
                            .task_site(w.task)
                            .map_or_else(String::new, short_site),
                    })
                    .collect(),
                by_cause: explanation
                    .by_cause
                    .iter()
                    .map(|c| CauseRow {
                        cause: c.cause,
                        waits: c.waits,
                        total: Duration::from_nanos(c.total_ns),
                        p99: Duration::from_nanos(c.p99_ns),
                    })
                    .collect(),
                tasks: explanation.tasks,
                spawns_missing: explanation.spawns_missing,
            },
            Err(ExplainError::NeedsTasksLevel(level)) => Waits::NeedsTasksLevel {
                level: format!("{level:?}"),
            },
            // A cause of refusal added later: say the level, which is what
            // every refusal so far is about.
            Err(_) => Waits::NeedsTasksLevel {
                level: format!("{:?}", recording.level()),
            },
        };
        WaitsChunk {
            pool: recording.pool().to_owned(),
            waits,
        }
    }
}

/// Where a task was queued, in a few characters.
fn queue(queue: SpawnQueue, spawned_on: Track) -> String {
    match (queue, spawned_on) {
        (SpawnQueue::Global, _) => "global".into(),
        (SpawnQueue::Local, Track::Worker(w)) => format!("local w{w}"),
        (SpawnQueue::Local, Track::Outside(_)) => "local".into(),
        (SpawnQueue::Inbox { worker }, _) => format!("inbox w{worker}"),
    }
}

/// A spawn site in a few characters: the file's name without its folders,
/// and the line (`src/server.rs:88:5` reads `server.rs:88`). The column
/// is narrow, and within one program a file name and line are rarely
/// ambiguous; `explain` prints the whole path.
pub fn short_site(site: &SpawnSite) -> String {
    let file = site.file();
    let name = file.rsplit(['/', '\\']).next().unwrap_or(file);
    format!("{name}:{}", site.line())
}

/// A duration in a few characters (`850ns`, `12.3us`, `4.1ms`, `1.20s`).
pub fn short(d: Duration) -> String {
    let ns = d.as_nanos() as f64;
    if ns < 1e3 {
        format!("{ns:.0}ns")
    } else if ns < 1e6 {
        format!("{:.1}us", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.1}ms", ns / 1e6)
    } else {
        format!("{:.2}s", ns / 1e9)
    }
}

/// A cause's figures, compact: the panel's last column. (The sentence of
/// `WaitCause`'s `Display` is too long for a row.)
fn details(cause: &WaitCause) -> String {
    let ns = |n: u64| short(Duration::from_nanos(n));
    match *cause {
        WaitCause::PoolAsleep { wake_ns } => format!("the wake took {}", ns(wake_ns)),
        WaitCause::BehindLongTask {
            worker,
            task_ns,
            tasks_ahead,
            ..
        } => format!(
            "w{worker} ran one task {}, {tasks_ahead} ahead",
            ns(task_ns)
        ),
        WaitCause::BehindNewerTasks {
            worker,
            tasks_ahead,
            busy_ns,
        } => format!("w{worker} ran {tasks_ahead} newer for {}", ns(busy_ns)),
        WaitCause::NoProgress { worker, gap_ns } => {
            format!("w{worker} silent {} (descheduled?)", ns(gap_ns))
        }
        WaitCause::GlobalQueueStarved {
            steals,
            unpulled_ns,
        } => format!("unpulled {}, {steals} steals", ns(unpulled_ns)),
        WaitCause::AllWorkersBusy => "every worker running".into(),
        WaitCause::Backlog {
            tasks_ahead,
            busy_ns,
        } => format!("{tasks_ahead} older ran first, busy {}", ns(busy_ns)),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dreadpool_core::{RecordLevel, ThreadPoolBuilder};

    /// A recording of 300 tasks spawned at `level`, and the line of their
    /// spawn.
    fn recording_at(level: RecordLevel) -> (Recording, u32) {
        let pool = ThreadPoolBuilder::new()
            .with_threads(2)
            .with_thread_name("waits")
            .with_record_level(level)
            .build();
        let mut spawn_line = 0;
        for i in 0..300u64 {
            // Some tasks long enough that others queue behind them.
            spawn_line = line!() + 1;
            pool.spawn(move || {
                if i % 50 == 0 {
                    std::thread::sleep(Duration::from_millis(2));
                }
            });
        }
        pool.join();
        (pool.recording(), spawn_line)
    }

    #[test]
    fn a_tasks_level_recording_gives_the_worst_waits_longest_first_each_with_a_cause() {
        let (recording, spawn_line) = recording_at(RecordLevel::Tasks);
        let chunk = WaitsChunk::explain(&recording);
        assert_eq!(chunk.pool, "waits");
        let Waits::Explained {
            worst,
            by_cause,
            tasks,
            ..
        } = chunk.waits
        else {
            panic!("a Tasks-level recording is explained: {chunk:?}");
        };
        assert!(tasks >= 300, "every spawn is linked to its run: {tasks}");
        assert_eq!(worst.len(), WAITS_TOP.min(tasks));
        assert!(worst.windows(2).all(|w| w[0].delay >= w[1].delay));
        assert!(worst.iter().all(|w| !w.cause.is_empty() && w.ran_on < 2));
        // Spawned from this (outside) thread: into the global queue.
        assert!(worst.iter().all(|w| w.queue == "global"), "{worst:?}");
        // Each names its spawn site: the `pool.spawn` in `recording_at`.
        let spawn_line = format!("waits.rs:{spawn_line}");
        assert!(worst.iter().all(|w| w.site == spawn_line), "{worst:?}");
        // The totals account for every explained wait.
        assert_eq!(by_cause.iter().map(|c| c.waits).sum::<usize>(), tasks);
        assert!(by_cause.windows(2).all(|c| c[0].total >= c[1].total));
    }

    #[test]
    fn a_scheduler_level_recording_says_which_level_is_needed() {
        let chunk = WaitsChunk::explain(&recording_at(RecordLevel::Scheduler).0);
        assert_eq!(
            chunk.waits,
            Waits::NeedsTasksLevel {
                level: "Scheduler".into()
            }
        );
    }

    #[test]
    fn details_and_durations_read_short() {
        assert_eq!(
            details(&WaitCause::BehindLongTask {
                worker: 2,
                task: None,
                task_ns: 31_000_000,
                tasks_ahead: 4
            }),
            "w2 ran one task 31.0ms, 4 ahead"
        );
        assert_eq!(
            details(&WaitCause::PoolAsleep { wake_ns: 80_000 }),
            "the wake took 80.0us"
        );
        assert_eq!(
            details(&WaitCause::GlobalQueueStarved {
                steals: 7,
                unpulled_ns: 2_900_000
            }),
            "unpulled 2.9ms, 7 steals"
        );
        assert_eq!(
            details(&WaitCause::Backlog {
                tasks_ahead: 12,
                busy_ns: 3_400_000
            }),
            "12 older ran first, busy 3.4ms"
        );
        assert_eq!(
            short_site(&SpawnSite::new("src/net/server.rs", 88, 5)),
            "server.rs:88"
        );
        assert_eq!(short_site(&SpawnSite::new("main.rs", 3, 1)), "main.rs:3");
        assert_eq!(
            short_site(&SpawnSite::new(r"C:\app\src\lib.rs", 12, 9)),
            "lib.rs:12"
        );
        assert_eq!(short(Duration::from_nanos(850)), "850ns");
        assert_eq!(short(Duration::from_millis(1_200)), "1.20s");
        assert_eq!(queue(SpawnQueue::Local, Track::Worker(3)), "local w3");
        assert_eq!(
            queue(SpawnQueue::Inbox { worker: 1 }, Track::Outside(0)),
            "inbox w1"
        );
    }
}
