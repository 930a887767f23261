//! The flight recorder's writers: Perfetto's protobuf, checked by decoding
//! it with `protoc` and Perfetto's schema, and the Chrome JSON trace event
//! format, checked by parsing it; on recordings of real pools (a skewed load
//! that forces steals, a panic) and on a hand-made one with the edge cases
//! (an end whose begin was lost, nested runs, a run still open at the end,
//! names that need escaping).
#![cfg(feature = "recorder")]

use dreadpool_core::{
    EventKind, RecordLevel, RecordedEvent, Recording, SpawnQueue, ThreadPoolBuilder, Track,
    WorkerActivity,
};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc};

// ---------------------------------------------------------------------------
// Recordings

/// A real pool's recording: one task spawns 500 children on its own queue
/// and holds its worker until one of them ran on another worker (so at
/// least one was stolen); then a task panics.
fn skewed_recording() -> Recording {
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .with_threads(4)
            .with_thread_name("out")
            .with_record_level(RecordLevel::Tasks)
            .build(),
    );
    let (stolen_tx, stolen_rx) = mpsc::channel::<()>();
    let p = Arc::clone(&pool);
    pool.spawn(move || {
        let home = std::thread::current().id();
        for _ in 0..500 {
            let stolen_tx = stolen_tx.clone();
            p.spawn(move || {
                if std::thread::current().id() != home {
                    let _ = stolen_tx.send(());
                }
            });
        }
        stolen_rx.recv().expect("a child ran on another worker");
    });
    pool.join();
    let (ran_tx, ran_rx) = mpsc::channel();
    pool.spawn(move || {
        ran_tx.send(()).unwrap();
        panic!("a recorded panic");
    });
    ran_rx.recv().unwrap();
    pool.join();
    let recording = pool.recording();
    assert!(recording
        .events()
        .iter()
        .any(|e| matches!(e.kind, EventKind::Panic { .. })));
    recording
}

/// Names that need escaping in both formats.
const POOL: &str = "pool \"quoted\"\n\\ ünï ☃";
const WORKER_0: &str = "w \"0\" \\ back";
const WORKER_1: &str = "w-1 ワーカー \u{1}";
const OUTSIDE: &str = "main 'thread' \t";

/// A hand-made recording with the edge cases, taken at 1000 ns.
fn edge_recording() -> Recording {
    let at = |time_ns, track, kind| RecordedEvent {
        time_ns,
        track,
        kind,
    };
    let (w0, w1, out) = (Track::Worker(0), Track::Worker(1), Track::Outside(0));
    let events = vec![
        // Its begin fell out of the ring: no slice.
        at(
            10,
            w0,
            EventKind::RunEnd {
                task: Some(1),
                panicked: false,
            },
        ),
        at(15, w0, EventKind::State(WorkerActivity::Running)),
        at(20, w0, EventKind::RunBegin { task: Some(2) }),
        at(
            22,
            w0,
            EventKind::Spawn {
                task: 3,
                queue: SpawnQueue::Local,
                within_ns: 3,
            },
        ),
        at(25, w0, EventKind::WaitBegin),
        // Nested: task 2 waits, its worker runs task 3 inside it.
        at(30, w0, EventKind::RunBegin { task: Some(3) }),
        at(
            40,
            w0,
            EventKind::RunEnd {
                task: Some(3),
                panicked: false,
            },
        ),
        at(45, w0, EventKind::WaitEnd),
        at(
            50,
            w0,
            EventKind::RunEnd {
                task: Some(2),
                panicked: false,
            },
        ),
        // From outside, run on worker 1 after a steal.
        at(
            5,
            out,
            EventKind::Spawn {
                task: 5,
                queue: SpawnQueue::Global,
                within_ns: 0,
            },
        ),
        at(6, out, EventKind::Unpark { worker: 1 }),
        at(7, w1, EventKind::Wake { handoff: false }),
        at(8, w1, EventKind::State(WorkerActivity::Searching)),
        at(
            9,
            w1,
            EventKind::Steal {
                victim: 0,
                batch: 2,
                local_depth: 1,
            },
        ),
        at(
            12,
            w1,
            EventKind::GlobalPull {
                batch: 1,
                local_depth: 3,
            },
        ),
        at(13, w1, EventKind::State(WorkerActivity::Running)),
        at(15, w1, EventKind::RunBegin { task: Some(5) }),
        at(18, w1, EventKind::Panic { task: Some(5) }),
        at(
            18,
            w1,
            EventKind::RunEnd {
                task: Some(5),
                panicked: true,
            },
        ),
        at(19, w1, EventKind::State(WorkerActivity::Respawning)),
        at(20, w1, EventKind::Respawn),
        at(21, w1, EventKind::NoopWakeup),
        // A task without an id, still running when the recording was taken.
        at(60, w0, EventKind::RunBegin { task: None }),
    ];
    Recording::from_parts(
        POOL.to_owned(),
        RecordLevel::Tasks,
        vec![WORKER_0.to_owned(), WORKER_1.to_owned()],
        vec![OUTSIDE.to_owned()],
        events,
        1,
        1_000,
    )
}

// ---------------------------------------------------------------------------
// protoc

fn protoc_available() -> bool {
    let found = Command::new("protoc")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "protoc not installed, and CI is set: .ci/run installs protobuf-compiler"
        );
        println!("SKIPPED: protoc not installed (apt-get install protobuf-compiler)");
    }
    found
}

/// The vendored Perfetto protos the writer was generated from.
fn vendored_protos() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/recorder/perfetto")
}

/// The full upstream schema, when a `perfetto_protos` crate (which ships
/// Perfetto's protos) is in cargo's registry or `DREADPOOL_PERFETTO_PROTOS`
/// names a directory holding `protos/perfetto/trace/trace.proto`.
fn upstream_protos() -> Option<PathBuf> {
    let has_trace = |dir: &Path| dir.join("protos/perfetto/trace/trace.proto").is_file();
    if let Some(dir) = std::env::var_os("DREADPOOL_PERFETTO_PROTOS") {
        let dir = PathBuf::from(dir);
        assert!(
            has_trace(&dir),
            "DREADPOOL_PERFETTO_PROTOS={}",
            dir.display()
        );
        return Some(dir);
    }
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))?;
    let mut found: Vec<PathBuf> = std::fs::read_dir(cargo_home.join("registry/src"))
        .ok()?
        .flatten()
        .flat_map(|index| {
            std::fs::read_dir(index.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("perfetto_protos-"))
                && has_trace(path)
        })
        .collect();
    found.sort();
    found.pop()
}

/// `protoc --decode=perfetto.protos.Trace` of `trace` with the protos in
/// `include`.
fn decode(trace: &[u8], include: &Path) -> String {
    let mut child = Command::new("protoc")
        .arg("--decode=perfetto.protos.Trace")
        .arg("-I")
        .arg(include)
        .arg(include.join("protos/perfetto/trace/trace.proto"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("protoc runs");
    let mut stdin = child.stdin.take().unwrap();
    let trace = trace.to_vec();
    // Written from a thread: protoc writes while it reads, and a full pipe
    // each way would deadlock.
    let writer = std::thread::spawn(move || stdin.write_all(&trace));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        output.status.success(),
        "protoc --decode failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Decodes with the vendored protos and, when available, checks that the
/// full upstream schema reads the trace the same way (the vendored subset
/// keeps upstream's names, numbers and types).
fn decode_checked(trace: &[u8]) -> Vec<Packet> {
    let text = decode(trace, &vendored_protos());
    match upstream_protos() {
        Some(upstream) => {
            let upstream_text = decode(trace, &upstream);
            assert!(
                upstream_text == text,
                "the upstream schema ({}) reads the trace differently",
                upstream.display()
            );
        }
        None => println!(
            "note: no upstream perfetto_protos found; decoded with the vendored protos only"
        ),
    }
    let packets = parse_text_format(&text);
    assert!(!packets.is_empty());
    packets
}

/// A decoded packet: its fields as (path, value) pairs, where the path
/// names the enclosing messages (`track_event.debug_annotations.name`).
#[derive(Debug, Default)]
struct Packet {
    fields: Vec<(String, String)>,
}

impl Packet {
    fn get(&self, path: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, v)| v.as_str())
    }

    fn all<'a>(&'a self, path: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.fields
            .iter()
            .filter(move |(p, _)| p == path)
            .map(|(_, v)| v.as_str())
    }

    fn uint(&self, path: &str) -> Option<u64> {
        self.get(path).map(|v| v.parse().unwrap())
    }

    /// A debug annotation's value, by its name.
    fn annotation(&self, name: &str) -> Option<&str> {
        self.get(&format!("annotation {}", quoted(name)))
    }
}

/// Parses protoc's text format, one `packet { ... }` at a time. A debug
/// annotation (printed value first: protoc prints fields in number order)
/// becomes one field, `annotation "<name>"`.
fn parse_text_format(text: &str) -> Vec<Packet> {
    let mut packets = Vec::new();
    let mut stack: Vec<&str> = Vec::new();
    let mut packet = Packet::default();
    let mut annotation: (Option<String>, Option<String>) = (None, None);
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(block) = line.strip_suffix(" {") {
            stack.push(block);
        } else if line == "}" {
            let block = stack.pop().expect("balanced braces");
            if block == "debug_annotations" {
                let (Some(name), Some(value)) = std::mem::take(&mut annotation) else {
                    panic!("an annotation without a name or a value");
                };
                packet.fields.push((format!("annotation {name}"), value));
            }
            if stack.is_empty() {
                packets.push(std::mem::take(&mut packet));
            }
        } else {
            let (key, value) = line.split_once(": ").expect("key: value");
            if stack.last() == Some(&"debug_annotations") {
                if key == "name" {
                    annotation.0 = Some(value.to_owned());
                } else {
                    annotation.1 = Some(value.to_owned());
                }
                continue;
            }
            let mut path: Vec<&str> = stack[1..].to_vec();
            path.push(key);
            packet.fields.push((path.join("."), value.to_owned()));
        }
    }
    assert!(stack.is_empty());
    packets
}

/// A string as protoc's text format prints it: quoted, C-escaped, bytes
/// outside printable ASCII in octal.
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for &b in s.as_bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\'' => out.push_str("\\'"),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}

/// Track uuids by their descriptor's name.
fn tracks_by_name(packets: &[Packet]) -> HashMap<String, Vec<u64>> {
    let mut tracks: HashMap<String, Vec<u64>> = HashMap::new();
    for p in packets {
        if let (Some(uuid), Some(name)) = (
            p.uint("track_descriptor.uuid"),
            p.get("track_descriptor.name"),
        ) {
            tracks.entry(name.to_owned()).or_default().push(uuid);
        }
    }
    tracks
}

/// Checks, in file order, that slice ends never outnumber begins on a
/// track, and that every track ends balanced. Returns the begins per track.
fn assert_balanced(packets: &[Packet]) -> HashMap<u64, usize> {
    let mut open: HashMap<u64, i64> = HashMap::new();
    let mut begins: HashMap<u64, usize> = HashMap::new();
    for p in packets {
        let Some(kind) = p.get("track_event.type") else {
            continue;
        };
        let track = p.uint("track_event.track_uuid").expect("a track");
        match kind {
            "TYPE_SLICE_BEGIN" => {
                *open.entry(track).or_default() += 1;
                *begins.entry(track).or_default() += 1;
            }
            "TYPE_SLICE_END" => {
                let depth = open.entry(track).or_default();
                *depth -= 1;
                assert!(*depth >= 0, "track {track}: an end without a begin");
            }
            _ => {}
        }
    }
    for (track, depth) in &open {
        assert_eq!(*depth, 0, "track {track}: begins and ends do not balance");
    }
    begins
}

/// Every packet is on one sequence, the first says its state is clean, and
/// the events' timestamps never go back.
fn assert_sequence(packets: &[Packet]) {
    let sequences: HashSet<&str> = packets
        .iter()
        .map(|p| p.get("trusted_packet_sequence_id").expect("a sequence id"))
        .collect();
    assert_eq!(sequences.len(), 1);
    assert_eq!(packets[0].get("sequence_flags"), Some("1"));
    let times: Vec<u64> = packets.iter().filter_map(|p| p.uint("timestamp")).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
}

// ---------------------------------------------------------------------------
// Perfetto

#[test]
fn perfetto_real_pool_decodes_with_a_track_per_worker_balanced_slices_and_flows() {
    let recording = skewed_recording();
    let mut trace = Vec::new();
    recording.write_perfetto(&mut trace).unwrap();
    assert_eq!(trace[0], 0x0a, "starts with Trace.packet's key");
    if !protoc_available() {
        return;
    }
    let packets = decode_checked(&trace);
    assert_sequence(&packets);

    // The process, then one track per worker named after its thread.
    let tracks = tracks_by_name(&packets);
    let process = packets
        .iter()
        .find(|p| p.get("track_descriptor.process.process_name") == Some("\"out\""))
        .and_then(|p| p.uint("track_descriptor.uuid"))
        .expect("a process track named after the pool");
    let mut worker_tracks = Vec::new();
    for (i, name) in recording.worker_names().iter().enumerate() {
        assert_eq!(name, &format!("out-{i}"));
        let uuids = &tracks[&quoted(name)];
        assert_eq!(uuids.len(), 1, "one track for {name}");
        let descriptor = packets
            .iter()
            .find(|p| p.uint("track_descriptor.uuid") == Some(uuids[0]))
            .unwrap();
        assert_eq!(
            descriptor.uint("track_descriptor.parent_uuid"),
            Some(process)
        );
        worker_tracks.push(uuids[0]);
        assert_eq!(tracks[&quoted(&format!("{name} state"))].len(), 1);
    }

    // Slices balance on every track, and every task run that the recording
    // holds whole is a slice on its worker's track.
    let begins = assert_balanced(&packets);
    let whole_runs = recording
        .events()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::RunBegin { .. }))
        .count();
    let task_slices: usize = worker_tracks
        .iter()
        .map(|t| begins.get(t).copied().unwrap_or(0))
        .sum();
    assert_eq!(task_slices, whole_runs);
    assert!(whole_runs > 500);

    // A stolen child: spawned on one worker, run on another; its flow id is
    // on both ends, on the right tracks.
    let mut spawned_on = HashMap::new();
    let mut stolen = None;
    for e in recording.events() {
        match (e.track, e.kind) {
            (Track::Worker(w), EventKind::Spawn { task, .. }) => {
                spawned_on.insert(task, w);
            }
            (Track::Worker(to), EventKind::RunBegin { task: Some(task) }) => {
                if let Some(&from) = spawned_on.get(&task) {
                    if from != to && stolen.is_none() {
                        stolen = Some((task, from, to));
                    }
                }
            }
            _ => {}
        }
    }
    let (task, from, to) = stolen.expect("a child ran on another worker");
    let spawn = packets
        .iter()
        .find(|p| {
            p.get("track_event.name") == Some("\"spawn\"")
                && p.annotation("task") == Some(task.to_string().as_str())
        })
        .expect("the child's spawn");
    assert_eq!(spawn.get("track_event.type"), Some("TYPE_INSTANT"));
    assert_eq!(
        spawn.uint("track_event.track_uuid"),
        Some(worker_tracks[from])
    );
    let flow = spawn
        .get("track_event.flow_ids")
        .expect("a flow from the spawn");
    // The run's slice is named by the child's spawn site, the `p.spawn`
    // line in `skewed_recording`; its id is the `task` annotation.
    let site = recording.task_site(task).expect("the child's site");
    assert!(site.file().ends_with("tests/recorder_output.rs"), "{site}");
    let run = packets
        .iter()
        .find(|p| {
            p.get("track_event.type") == Some("TYPE_SLICE_BEGIN")
                && p.annotation("task") == Some(task.to_string().as_str())
        })
        .expect("the child's run");
    assert_eq!(
        run.get("track_event.name"),
        Some(quoted(&site.to_string()).as_str())
    );
    assert_eq!(run.uint("track_event.track_uuid"), Some(worker_tracks[to]));
    assert_eq!(run.get("track_event.terminating_flow_ids"), Some(flow));

    // Every flow has both ends, once each.
    let starts: Vec<&str> = packets
        .iter()
        .flat_map(|p| p.all("track_event.flow_ids"))
        .collect();
    let ends: Vec<&str> = packets
        .iter()
        .flat_map(|p| p.all("track_event.terminating_flow_ids"))
        .collect();
    assert_eq!(starts.len(), ends.len());
    assert_eq!(
        starts.iter().collect::<HashSet<_>>(),
        ends.iter().collect::<HashSet<_>>()
    );

    // Steals carry their victim and batch; the queue depth is a counter.
    let steal = packets
        .iter()
        .find(|p| p.get("track_event.name") == Some("\"steal\""))
        .expect("a steal");
    assert!(steal.annotation("victim").is_some() && steal.annotation("batch").is_some());
    assert!(packets
        .iter()
        .any(|p| p.get("track_event.type") == Some("TYPE_COUNTER")));
    assert!(packets
        .iter()
        .any(|p| p.get("track_descriptor.counter.unit") == Some("UNIT_COUNT")));
    // The panic: an instant, and its run's slice says so.
    assert!(packets
        .iter()
        .any(|p| p.get("track_event.name") == Some("\"panic\"")));
    assert!(packets
        .iter()
        .any(|p| p.annotation("panicked") == Some("true")));
}

#[test]
fn perfetto_edge_cases_drop_an_orphan_end_nest_runs_and_escape_names() {
    let recording = edge_recording();
    let mut trace = Vec::new();
    recording.write_perfetto(&mut trace).unwrap();
    if !protoc_available() {
        return;
    }
    let packets = decode_checked(&trace);
    assert_sequence(&packets);
    let tracks = tracks_by_name(&packets);
    for name in [WORKER_0, WORKER_1, OUTSIDE] {
        assert_eq!(tracks[&quoted(name)].len(), 1, "a track named {name:?}");
    }
    assert!(packets
        .iter()
        .any(|p| p.get("track_descriptor.process.process_name") == Some(quoted(POOL).as_str())));

    let begins = assert_balanced(&packets);
    let w0 = tracks[&quoted(WORKER_0)][0];
    // Tasks 2, 3 (nested in 2) and the id-less one; not task 1, whose
    // begin was lost.
    assert_eq!(begins[&w0], 3);
    let names: Vec<&str> = packets
        .iter()
        .filter(|p| p.uint("track_event.track_uuid") == Some(w0))
        .filter_map(|p| p.get("track_event.name"))
        .collect();
    assert_eq!(
        names,
        [
            "\"task 2\"",
            "\"spawn\"",
            "\"wait begin\"",
            "\"task 3\"",
            "\"wait end\"",
            "\"task\""
        ]
    );
    // Task 3's run nests in task 2's: begin 2, begin 3, end 3, end 2.
    let w0_slices: Vec<(u64, &str)> = packets
        .iter()
        .filter(|p| p.uint("track_event.track_uuid") == Some(w0))
        .filter_map(|p| Some((p.uint("timestamp")?, p.get("track_event.type")?)))
        .filter(|(_, t)| *t != "TYPE_INSTANT")
        .collect();
    assert_eq!(
        w0_slices,
        [
            (20, "TYPE_SLICE_BEGIN"),
            (30, "TYPE_SLICE_BEGIN"),
            (40, "TYPE_SLICE_END"),
            (50, "TYPE_SLICE_END"),
            (60, "TYPE_SLICE_BEGIN"),
            (1_000, "TYPE_SLICE_END"),
        ]
    );
    let last_end = packets
        .iter()
        .rfind(|p| p.uint("track_event.track_uuid") == Some(w0))
        .unwrap();
    assert_eq!(last_end.annotation("unfinished"), Some("true"));

    // The outside spawn's flow reaches worker 1's run of task 5.
    let spawn = packets
        .iter()
        .find(|p| {
            p.uint("track_event.track_uuid") == Some(tracks[&quoted(OUTSIDE)][0])
                && p.get("track_event.name") == Some("\"spawn\"")
        })
        .expect("the outside spawn");
    let run5 = packets
        .iter()
        .find(|p| p.get("track_event.name") == Some("\"task 5\""))
        .unwrap();
    assert_eq!(
        run5.uint("track_event.track_uuid"),
        Some(tracks[&quoted(WORKER_1)][0])
    );
    assert!(spawn.get("track_event.flow_ids").is_some());
    assert_eq!(
        spawn.get("track_event.flow_ids"),
        run5.get("track_event.terminating_flow_ids")
    );
    // Task 3's spawn took its worker's latest reading: it says by how much
    // it may be late. The outside spawn read the clock: it says nothing.
    let spawn3 = packets
        .iter()
        .find(|p| {
            p.uint("track_event.track_uuid") == Some(w0)
                && p.get("track_event.name") == Some("\"spawn\"")
        })
        .expect("task 3's spawn");
    assert_eq!(spawn3.annotation("within_ns"), Some("3"));
    assert_eq!(spawn.annotation("within_ns"), None);

    // Worker 1's states are slices on its state track, with its scheduler
    // events as instants there.
    let state = tracks[&quoted(&format!("{WORKER_1} state"))][0];
    let on_state: Vec<&str> = packets
        .iter()
        .filter(|p| p.uint("track_event.track_uuid") == Some(state))
        .filter_map(|p| p.get("track_event.name"))
        .collect();
    assert_eq!(
        on_state,
        [
            "\"wake\"",
            "\"searching\"",
            "\"steal\"",
            "\"global pull\"",
            "\"running\"",
            "\"respawning\"",
            "\"respawn\"",
            "\"no-op wakeup\"",
        ]
    );
    let steal = packets
        .iter()
        .find(|p| p.get("track_event.name") == Some("\"steal\""))
        .unwrap();
    assert_eq!(steal.annotation("victim"), Some("0"));
    assert_eq!(steal.annotation("batch"), Some("2"));
    let unpark = packets
        .iter()
        .find(|p| p.get("track_event.name") == Some("\"unpark\""))
        .unwrap();
    assert_eq!(unpark.annotation("worker"), Some("1"));
    let depths: Vec<u64> = packets
        .iter()
        .filter(|p| p.get("track_event.type") == Some("TYPE_COUNTER"))
        .map(|p| p.uint("track_event.counter_value").unwrap())
        .collect();
    assert_eq!(depths, [1, 3]);
}

// ---------------------------------------------------------------------------
// Chrome JSON

fn chrome_json(recording: &Recording) -> Vec<Value> {
    let mut out = Vec::new();
    recording.write_chrome_json(&mut out).unwrap();
    let trace: Value = serde_json::from_slice(&out).expect("valid JSON");
    assert_eq!(trace["displayTimeUnit"], "ns");
    let events = trace["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .clone();
    assert_well_formed_json(&events);
    events
}

/// What every event must have, and that flows pair up.
fn assert_well_formed_json(events: &[Value]) {
    let mut starts = HashSet::new();
    let mut finishes = HashSet::new();
    for event in events {
        let ph = event["ph"].as_str().expect("every event has ph");
        assert!(event["pid"].is_u64(), "{event}");
        assert!(event["tid"].is_u64(), "{event}");
        if ph != "M" {
            assert!(event["ts"].as_f64().is_some_and(|ts| ts >= 0.0), "{event}");
        }
        match ph {
            "X" => assert!(event["dur"].as_f64().is_some_and(|d| d >= 0.0), "{event}"),
            "i" => assert_eq!(event["s"], "t"),
            "s" => assert!(
                starts.insert(event["id"].as_u64().unwrap()),
                "one start per id"
            ),
            "f" => {
                assert_eq!(event["bp"], "e");
                assert!(finishes.insert(event["id"].as_u64().unwrap()));
            }
            "C" => assert!(event["args"]["depth"].is_u64()),
            "M" => {}
            other => panic!("unexpected phase {other}"),
        }
    }
    assert_eq!(starts, finishes, "every flow start has its finish");
}

fn thread_names(events: &[Value]) -> HashMap<String, u64> {
    events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| {
            (
                e["args"]["name"].as_str().unwrap().to_owned(),
                e["tid"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn chrome_json_real_pool_is_valid_with_thread_names_slices_and_flows() {
    let recording = skewed_recording();
    let events = chrome_json(&recording);
    let threads = thread_names(&events);
    for name in recording.worker_names() {
        assert!(threads.contains_key(name), "thread_name for {name}");
    }
    assert!(events
        .iter()
        .any(|e| e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "out"));
    let sort_indexes = events
        .iter()
        .filter(|e| e["name"] == "thread_sort_index")
        .count();
    assert_eq!(sort_indexes, threads.len());
    let runs = recording
        .events()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::RunBegin { .. }))
        .count();
    let task_slices = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "task" && e["name"] != "spawn")
        .count();
    assert_eq!(task_slices, runs);
    // Every task slice whose spawn is in the recording is named by its
    // spawn site (this file's lines), its id in `args.task`.
    let mut named = 0;
    for e in &events {
        if e["ph"] != "X" || e["cat"] != "task" || e["name"] == "spawn" {
            continue;
        }
        let Some(task) = e["args"]["task"].as_u64() else {
            continue;
        };
        if let Some(site) = recording.task_site(task) {
            assert!(site.file().ends_with("tests/recorder_output.rs"), "{site}");
            assert_eq!(e["name"], site.to_string().as_str(), "{e}");
            named += 1;
        }
    }
    assert!(named > 500, "{named} task slices named by their site");
    let flows = events.iter().filter(|e| e["ph"] == "s").count();
    assert!(flows >= 500, "{flows} flows for 500 children");
    assert!(events
        .iter()
        .any(|e| e["ph"] == "i" && e["name"] == "steal"));
    assert!(events.iter().any(|e| e["ph"] == "C"));
}

#[test]
fn chrome_json_edge_cases_escape_names_drop_an_orphan_end_and_close_open_runs() {
    let events = chrome_json(&edge_recording());
    // Parsed back, the names are the originals: they were escaped.
    let threads = thread_names(&events);
    for name in [WORKER_0, WORKER_1, OUTSIDE] {
        assert!(threads.contains_key(name), "{name:?} in {threads:?}");
    }
    assert!(events
        .iter()
        .any(|e| e["name"] == "process_name" && e["args"]["name"] == POOL));

    let tasks = |tid: u64| -> Vec<(String, f64, f64)> {
        events
            .iter()
            .filter(|e| e["ph"] == "X" && e["tid"] == tid && e["name"] != "spawn")
            .map(|e| {
                (
                    e["name"].as_str().unwrap().to_owned(),
                    e["ts"].as_f64().unwrap(),
                    e["dur"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(
        tasks(threads[WORKER_0]),
        [
            ("task 2".to_owned(), 0.02, 0.03),
            ("task 3".to_owned(), 0.03, 0.01),
            ("task".to_owned(), 0.06, 0.94),
        ]
    );
    let open = events
        .iter()
        .find(|e| e["ph"] == "X" && e["name"] == "task")
        .unwrap();
    assert_eq!(open["args"]["unfinished"], true);
    let panicked = events.iter().find(|e| e["name"] == "task 5").unwrap();
    assert_eq!(panicked["args"]["panicked"], true);
    // The flows: task 3 within worker 0, task 5 from the outside thread.
    let flow = |ph: &str, id: u64| {
        events
            .iter()
            .find(|e| e["ph"] == ph && e["id"] == id)
            .map(|e| e["tid"].as_u64().unwrap())
    };
    assert_eq!(flow("s", 3), Some(threads[WORKER_0]));
    assert_eq!(flow("f", 3), Some(threads[WORKER_0]));
    assert_eq!(flow("s", 5), Some(threads[OUTSIDE]));
    assert_eq!(flow("f", 5), Some(threads[WORKER_1]));
    // Only the spawn whose time was inherited says how late it may be.
    let spawn_of = |task: u64| {
        events
            .iter()
            .find(|e| e["name"] == "spawn" && e["args"]["task"] == task)
            .unwrap()
    };
    assert_eq!(spawn_of(3)["args"]["within_ns"], 3);
    assert!(spawn_of(5)["args"].get("within_ns").is_none());
    let steal = events.iter().find(|e| e["name"] == "steal").unwrap();
    assert_eq!(steal["args"]["victim"], 0);
    assert_eq!(steal["args"]["batch"], 2);
    assert_eq!(steal["tid"], threads[&format!("{WORKER_1} state")]);
}

// ---------------------------------------------------------------------------
// save

#[test]
fn save_picks_the_format_from_the_extension() {
    let dir =
        std::env::temp_dir().join(format!("dreadpool-recorder-output-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let recording = edge_recording();

    for name in ["trace.json", "trace.JSON"] {
        let path = dir.join(name);
        recording.save(&path).unwrap();
        let json: Value = serde_json::from_slice(&std::fs::read(&path).unwrap())
            .unwrap_or_else(|e| panic!("{name} is JSON: {e}"));
        assert!(json["traceEvents"].is_array());
    }
    for name in ["trace.perfetto-trace", "trace.pftrace", "trace"] {
        let path = dir.join(name);
        recording.save(&path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let mut in_memory = Vec::new();
        recording.write_perfetto(&mut in_memory).unwrap();
        assert_eq!(bytes, in_memory, "{name} is the Perfetto protobuf");
        assert_eq!(bytes[0], 0x0a, "starts with a TracePacket's key");
    }
    // A path that cannot be created is an error, not a panic.
    let error = recording
        .save(dir.join("no such directory").join("trace.json"))
        .unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
    std::fs::remove_dir_all(&dir).unwrap();
}
