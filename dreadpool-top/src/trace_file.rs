//! Reading back a trace this project wrote, for `dreadpool-top explain
//! PATH`: the Chrome JSON form of a recording (`Recording::write_chrome_json`,
//! `--record FILE.json`, the `r` key with a `.json` name), rebuilt into a
//! `Recording` with the events the explanation reads (spawns, task runs,
//! waits and panics, state changes, wakes and wake calls, steals (forks
//! of a join taken by a peer among them) and global pulls).

use dreadpool_core::{
    EventKind, RecordLevel, RecordedEvent, Recording, SpawnQueue, SpawnSite, Track, WorkerActivity,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Why a file could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum TraceFileError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A binary file: Perfetto's protobuf form, which is not read back.
    #[error(
        "{0} is not JSON (a Perfetto trace?): explain reads the Chrome JSON form; \
         write the recording with a name ending in .json, or use --attach"
    )]
    NotJson(String),
    /// JSON that does not parse: cut short, or not JSON at all.
    #[error("{path} is not a whole JSON document (truncated?): {reason}")]
    Malformed {
        /// The file.
        path: String,
        /// What the parser said.
        reason: String,
    },
    /// JSON, but not a trace of a dreadpool recording.
    #[error("{path} is not a dreadpool trace: {reason}")]
    NotDreadpool {
        /// The file.
        path: String,
        /// What was missing.
        reason: &'static str,
    },
}

/// Reads the Chrome JSON trace at `path` back into a recording.
///
/// # Errors
///
/// [`TraceFileError`] for a file that cannot be read, a Perfetto (binary)
/// trace, JSON cut short, or JSON that is not a dreadpool recording.
pub fn read(path: &Path) -> Result<Recording, TraceFileError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| TraceFileError::Read {
        path: shown.clone(),
        source,
    })?;
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        return Err(TraceFileError::NotJson(shown));
    }
    let json: Value = serde_json::from_slice(&bytes).map_err(|e| TraceFileError::Malformed {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    parse(&json).map_err(|reason| TraceFileError::NotDreadpool {
        path: shown,
        reason,
    })
}

/// Which timeline a thread id of the writer is (`chrome_json.rs`'s `tid`):
/// worker `i`'s task lane is `1 + 2i`, its state lane `2 + 2i`, outside
/// thread `j` is `1 + 2 * workers + j`.
#[derive(Clone, Copy)]
enum Lane {
    Tasks(usize),
    State(usize),
    Outside(usize),
}

fn lane(tid: u64, workers: usize) -> Option<Lane> {
    let tid = usize::try_from(tid).ok()?;
    if tid == 0 {
        None
    } else if tid <= 2 * workers {
        let i = (tid - 1) / 2;
        Some(if tid % 2 == 1 {
            Lane::Tasks(i)
        } else {
            Lane::State(i)
        })
    } else {
        Some(Lane::Outside(tid - 1 - 2 * workers))
    }
}

/// The activity a state slice's name says (`WorkerActivity::name`).
fn activity(name: &str) -> Option<WorkerActivity> {
    WorkerActivity::ALL.into_iter().find(|a| a.name() == name)
}

fn uint(args: &Value, name: &str) -> u64 {
    args.get(name).and_then(Value::as_u64).unwrap_or(0)
}

/// Microseconds with nanosecond fractions, as the writer puts them.
fn nanos(ts: &Value) -> Option<u64> {
    let micros = ts.as_f64()?;
    (micros >= 0.0).then(|| (micros * 1000.0).round() as u64)
}

fn parse(json: &Value) -> Result<Recording, &'static str> {
    let events = json
        .get("traceEvents")
        .and_then(Value::as_array)
        .ok_or("no traceEvents")?;
    let mut pool = String::new();
    let mut names: BTreeMap<u64, String> = BTreeMap::new();
    for event in events {
        if event.get("ph").and_then(Value::as_str) != Some("M") {
            continue;
        }
        let name = event.pointer("/args/name").and_then(Value::as_str);
        match (event.get("name").and_then(Value::as_str), name) {
            (Some("process_name"), Some(name)) => pool = name.to_string(),
            (Some("thread_name"), Some(name)) => {
                names.insert(uint(event, "tid"), name.to_string());
            }
            _ => {}
        }
    }
    let workers = names.values().filter(|n| n.ends_with(" state")).count();
    if workers == 0 {
        return Err("no worker state lanes (thread names ending in \" state\")");
    }
    let worker_names: Vec<String> = (0..workers)
        .map(|i| names.get(&(1 + 2 * i as u64)).cloned().unwrap_or_default())
        .collect();
    let outside_names: Vec<String> = names
        .iter()
        .filter(|(&tid, _)| tid > 2 * workers as u64)
        .map(|(_, name)| name.clone())
        .collect();
    let mut out = Vec::new();
    let mut tasks = false;
    let mut sites: BTreeMap<u64, SpawnSite> = BTreeMap::new();
    for event in events {
        let ph = event.get("ph").and_then(Value::as_str).unwrap_or("");
        if ph != "X" && ph != "i" {
            continue;
        }
        let (Some(name), Some(time_ns)) = (
            event.get("name").and_then(Value::as_str),
            event.get("ts").and_then(nanos),
        ) else {
            continue;
        };
        let Some(lane) = lane(uint(event, "tid"), workers) else {
            continue;
        };
        let args = event.get("args").cloned().unwrap_or(Value::Null);
        let (track, kind) = match (lane, name) {
            (Lane::Tasks(_) | Lane::Outside(_), "spawn") => {
                let track = match lane {
                    Lane::Outside(j) => Track::Outside(j),
                    Lane::Tasks(w) | Lane::State(w) => Track::Worker(w),
                };
                let queue = match args.get("queue").and_then(Value::as_str) {
                    Some("local") => SpawnQueue::Local,
                    Some("inbox") => SpawnQueue::Inbox {
                        worker: uint(&args, "for_worker") as usize,
                    },
                    _ => SpawnQueue::Global,
                };
                tasks = true;
                let task = uint(&args, "task");
                let within_ns = uint(&args, "within_ns");
                (
                    track,
                    EventKind::Spawn {
                        task,
                        queue,
                        within_ns,
                    },
                )
            }
            (Lane::Tasks(w), "wait begin") => (Track::Worker(w), EventKind::WaitBegin),
            (Lane::Tasks(w), "wait end") => (Track::Worker(w), EventKind::WaitEnd),
            (Lane::Tasks(w), "panic") => (Track::Worker(w), EventKind::Panic { task: None }),
            // A fork of a join taken by a peer: a steal, to `explain`.
            (Lane::Tasks(w), "fork stolen") => (
                Track::Worker(w),
                EventKind::ForkStolen {
                    fork: args.get("fork").and_then(Value::as_u64),
                    owner: uint(&args, "owner") as usize,
                },
            ),
            // A run: named by its spawn site (`src/server.rs:88`) or, with
            // none, `task N`; its category says which it is.
            (Lane::Tasks(w), _)
                if ph == "X"
                    && (event.get("cat").and_then(Value::as_str) == Some("task")
                        || name.starts_with("task")) =>
            {
                let task = args.get("task").and_then(Value::as_u64);
                tasks |= task.is_some();
                if let (Some(task), Ok(site)) = (task, name.parse::<SpawnSite>()) {
                    sites.insert(task, site);
                }
                (Track::Worker(w), EventKind::RunBegin { task })
            }
            (Lane::State(w), "global pull") => (
                Track::Worker(w),
                EventKind::GlobalPull {
                    batch: uint(&args, "batch") as u32,
                    local_depth: uint(&args, "local_depth"),
                },
            ),
            (Lane::State(w), "steal") => (
                Track::Worker(w),
                EventKind::Steal {
                    victim: uint(&args, "victim") as usize,
                    batch: uint(&args, "batch") as u32,
                    local_depth: uint(&args, "local_depth"),
                },
            ),
            (Lane::State(w), "wake") => (
                Track::Worker(w),
                EventKind::Wake {
                    handoff: args
                        .get("handoff")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                },
            ),
            // A wake call: on a worker's state lane, or an outside
            // thread's lane when a spawner woke the worker.
            (Lane::State(_) | Lane::Outside(_), "unpark") => {
                let track = match lane {
                    Lane::Outside(j) => Track::Outside(j),
                    Lane::Tasks(w) | Lane::State(w) => Track::Worker(w),
                };
                (
                    track,
                    EventKind::Unpark {
                        worker: uint(&args, "worker") as usize,
                    },
                )
            }
            (Lane::State(w), name) if ph == "X" => match activity(name) {
                Some(activity) => (Track::Worker(w), EventKind::State(activity)),
                None => continue,
            },
            _ => continue,
        };
        out.push(RecordedEvent {
            time_ns,
            track,
            kind,
        });
    }
    let taken_at_ns = out.iter().map(|e| e.time_ns).max().unwrap_or(0);
    let level = if tasks {
        RecordLevel::Tasks
    } else {
        RecordLevel::Scheduler
    };
    Ok(Recording::from_parts(
        pool,
        level,
        worker_names,
        outside_names,
        out,
        0,
        taken_at_ns,
    )
    .with_sites(sites))
}

#[cfg(test)]
mod tests {
    use super::*;
    use dreadpool_core::ThreadPoolBuilder;

    /// An event at `time_ns` on `track`.
    fn at(time_ns: u64, track: Track, kind: EventKind) -> RecordedEvent {
        RecordedEvent {
            time_ns,
            track,
            kind,
        }
    }

    /// A two-worker pool's recording made of `events` (with `outside`
    /// threads' lanes), written as Chrome JSON and read back; the events
    /// read back that `keep` selects, as (time, track, kind).
    fn round_trip(
        events: Vec<RecordedEvent>,
        outside: Vec<String>,
        keep: impl Fn(&EventKind) -> bool,
    ) -> Vec<(u64, Track, EventKind)> {
        let written = Recording::from_parts(
            "pool".into(),
            RecordLevel::Tasks,
            vec!["w0".into(), "w1".into()],
            outside,
            events,
            0,
            10_000,
        );
        let mut json = Vec::new();
        written.write_chrome_json(&mut json).expect("written");
        let read = parse(&serde_json::from_slice(&json).expect("JSON")).expect("read back");
        read.events()
            .iter()
            .filter(|e| keep(&e.kind))
            .map(|e| (e.time_ns, e.track, e.kind))
            .collect()
    }

    /// A real pool's recording written as Chrome JSON and read back: every
    /// task keeps its spawn site (the slice's name), and the same events.
    #[test]
    fn sites_round_trip_through_chrome_json() {
        let pool = ThreadPoolBuilder::new()
            .with_threads(2)
            .with_record_level(RecordLevel::Tasks)
            .build();
        let handle = pool.handle();
        let line = line!() + 1;
        pool.spawn(move || {
            for _ in 0..10 {
                handle.spawn(|| ());
            }
        });
        pool.join();
        let recording = pool.recording();
        let mut bytes = Vec::new();
        recording.write_chrome_json(&mut bytes).unwrap();
        let back = parse(&serde_json::from_slice(&bytes).unwrap()).unwrap();

        let mut sites: Vec<_> = recording
            .task_sites()
            .map(|(task, site)| (task, site.to_string()))
            .collect();
        sites.sort();
        assert_eq!(sites.len(), 11, "{sites:?}");
        assert!(sites
            .iter()
            .any(|(_, site)| site.ends_with(&format!("trace_file.rs:{line}"))));
        let mut read: Vec<_> = back
            .task_sites()
            .map(|(task, site)| (task, site.to_string()))
            .collect();
        read.sort();
        assert_eq!(read, sites);
    }

    /// The wake calls come back on the lanes they were written to: a
    /// spawner's on its outside lane, a worker's on its state lane. The
    /// explanation times a sleeping pool's wake from them.
    #[test]
    fn wake_calls_read_back_on_their_tracks() {
        let events = vec![
            at(
                0,
                Track::Worker(0),
                EventKind::State(WorkerActivity::Sleeping),
            ),
            at(
                0,
                Track::Worker(1),
                EventKind::State(WorkerActivity::Sleeping),
            ),
            at(
                1_000,
                Track::Outside(0),
                EventKind::Spawn {
                    task: 7,
                    queue: SpawnQueue::Global,
                    within_ns: 0,
                },
            ),
            at(1_500, Track::Outside(0), EventKind::Unpark { worker: 1 }),
            at(2_250, Track::Worker(1), EventKind::Unpark { worker: 0 }),
        ];
        let unparks = round_trip(events, vec!["main".into()], |kind| {
            matches!(kind, EventKind::Unpark { .. })
        });
        assert_eq!(
            unparks,
            vec![
                (1_500, Track::Outside(0), EventKind::Unpark { worker: 1 }),
                (2_250, Track::Worker(1), EventKind::Unpark { worker: 0 }),
            ]
        );
    }

    /// A fork of a join taken by a peer comes back as a steal of its
    /// worker, with its owner (what `explain` counts as a starved global
    /// queue's steals).
    #[test]
    fn forks_stolen_read_back_on_the_thiefs_track() {
        let events = vec![
            at(
                0,
                Track::Worker(0),
                EventKind::State(WorkerActivity::Running),
            ),
            at(
                0,
                Track::Worker(1),
                EventKind::State(WorkerActivity::Running),
            ),
            at(500, Track::Worker(0), EventKind::ForkShared { fork: 3 }),
            at(
                800,
                Track::Worker(1),
                EventKind::ForkStolen {
                    fork: Some(3),
                    owner: 0,
                },
            ),
            at(900, Track::Worker(1), EventKind::RunBegin { task: Some(3) }),
            at(
                1_900,
                Track::Worker(1),
                EventKind::RunEnd {
                    task: Some(3),
                    panicked: false,
                },
            ),
        ];
        let stolen = round_trip(events, Vec::new(), |kind| {
            matches!(kind, EventKind::ForkStolen { .. })
        });
        assert_eq!(
            stolen,
            vec![(
                800,
                Track::Worker(1),
                EventKind::ForkStolen {
                    fork: Some(3),
                    owner: 0
                }
            )]
        );
    }
}
