//! The binary's command line without a terminal: bad flags and unreachable
//! addresses fail clearly with a non-zero status, and `--headless` prints
//! the report.

use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_dreadpool-top");

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn bad_flags_exit_non_zero_with_a_message() {
    for (args, says) in [
        (&["--threads", "0"][..], "--threads"),
        (&["--pattern", "chaos"], "chaos"),
        (&["--refresh", "1ms"], "refresh"),
        (&["--headless"], "--duration"),
        (&["--attach", "/tmp/x.sock", "--rate", "5"], "--rate"),
        (&["--bogus"], "--bogus"),
    ] {
        let out = run(args);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn an_unreachable_attach_address_exits_non_zero_with_a_message() {
    let out = run(&[
        "--attach",
        "/nonexistent/dreadpool.sock",
        "--headless",
        "--duration",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("cannot attach to /nonexistent/dreadpool.sock"),
        "{err}"
    );
    let out = run(&["--attach", "127.0.0.1:1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("cannot attach to 127.0.0.1:1"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn without_a_terminal_the_ui_refuses_and_points_at_headless() {
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--headless"), "{}", stderr(&out));
}

#[test]
fn headless_json_reports_the_run_and_nothing_is_lost_in_a_panic_storm() {
    let out = run(&[
        "--headless",
        "--duration",
        "1500ms",
        "--refresh",
        "100",
        "--threads",
        "2",
        "--pattern",
        "panic-storm",
        "--rate",
        "1000",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let lifetime = &report["lifetime"];
    assert_eq!(lifetime["threads"], 2);
    let tasks = lifetime["tasks_run"].as_u64().unwrap();
    assert!(tasks > 100, "{tasks}");
    assert!(lifetime["panics"].as_u64().unwrap() > 0);
    assert!(lifetime["respawns"].as_u64().unwrap() > 0);
    assert_eq!(
        lifetime["tasks_pending"], 0,
        "the run drained before the report"
    );
    assert!(
        stderr(&out).is_empty(),
        "panics leaked to stderr: {}",
        stderr(&out)
    );

    let text = run(&[
        "--headless",
        "--duration",
        "1",
        "--threads",
        "2",
        "--seed",
        "3",
    ]);
    assert!(text.status.success());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.starts_with("SCHED "), "{text}");
    assert!(text.contains("none lost"), "{text}");
}

/// A scratch directory removed on drop.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("dpt-cli-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The trace events of a Chrome JSON trace: the `traceEvents` array of the
/// object form, or the array form itself.
fn trace_events(path: &std::path::Path) -> Vec<serde_json::Value> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let trace: serde_json::Value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    let events = match &trace {
        serde_json::Value::Array(events) => events.clone(),
        object => object["traceEvents"]
            .as_array()
            .cloned()
            .unwrap_or_default(),
    };
    assert!(!events.is_empty(), "no events in {}", path.display());
    events
}

fn non_empty_file(path: &std::path::Path) {
    let len = std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .len();
    assert!(len > 0, "{} is empty", path.display());
}

#[test]
fn record_needs_headless() {
    let out = run(&["--record", "/tmp/never.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--headless"), "{}", stderr(&out));
}

#[test]
fn headless_demo_record_writes_perfetto_and_chrome_json() {
    let scratch = Scratch::new("demo-record");
    for name in ["run.perfetto-trace", "run.json"] {
        let path = scratch.path(name);
        let out = run(&[
            "--headless",
            "--duration",
            "1",
            "--threads",
            "2",
            "--rate",
            "2000",
            "--record",
            path.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("none lost"), "{stdout}");
        assert!(
            stdout.contains(&format!("saved to {}", path.display())),
            "{stdout}"
        );
        non_empty_file(&path);
    }
    // The demo records every task: far more events than the scheduler's.
    let events = trace_events(&scratch.path("run.json"));
    assert!(events.len() > 1_000, "{} events", events.len());
}

#[test]
fn headless_attach_record_pulls_every_pool_from_the_host() {
    use dreadpool_core::{RecordLevel, ThreadPoolBuilder};
    let scratch = Scratch::new("attach-record");
    let pools: Vec<_> = ["api", "batch"]
        .into_iter()
        .map(|name| {
            let pool = ThreadPoolBuilder::new()
                .with_threads(2)
                .with_thread_name(name)
                .with_record_level(RecordLevel::Tasks)
                .build();
            for _ in 0..500 {
                pool.spawn(|| std::hint::black_box(()));
            }
            pool.join();
            pool
        })
        .collect();
    let socket = scratch.path("host.sock");
    let _exporter = dreadpool_metrics::Exporter::builder()
        .pool(&pools[0])
        .pool(&pools[1])
        .bind(socket.to_str().unwrap())
        .unwrap();
    let trace = scratch.path("host.json");
    let out = run(&[
        "--attach",
        socket.to_str().unwrap(),
        "--headless",
        "--duration",
        "1",
        "--record",
        trace.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("recording of api"), "{stdout}");
    assert!(stdout.contains("recording of batch"), "{stdout}");
    // 500 tasks, each spawned and run: at least that many events each.
    assert!(trace_events(&trace).len() >= 500);
    assert!(trace_events(&scratch.path("host.batch.json")).len() >= 500);
}

/// A pool named `api` of `threads` workers, recording at `Tasks` level,
/// that ran one task which spawned `children` tasks into its own queue and
/// then ran on until this thread let it go: each child waited behind it.
fn pool_with_children_behind_their_parent(
    threads: usize,
    children: usize,
) -> dreadpool_core::ThreadPool {
    use dreadpool_core::{RecordLevel, ThreadPoolBuilder};
    use std::sync::mpsc;
    let pool = ThreadPoolBuilder::new()
        .with_threads(threads)
        .with_thread_name("api")
        .with_record_level(RecordLevel::Tasks)
        .build();
    let (spawned_tx, spawned_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let handle = pool.handle();
    pool.spawn(move || {
        for _ in 0..children {
            handle.spawn(|| std::hint::black_box(()));
        }
        spawned_tx.send(()).unwrap();
        go_rx.recv().unwrap();
    });
    spawned_rx.recv().unwrap();
    go_tx.send(()).unwrap();
    pool.join();
    pool
}

/// `explain --attach`: a host whose one-worker pool ran a task that spawned
/// a child and then ran on; the child's wait is explained as queued behind
/// that task, in JSON and in text.
#[test]
fn explain_attach_says_why_the_hosts_tasks_waited() {
    let scratch = Scratch::new("explain");
    let pool = pool_with_children_behind_their_parent(1, 1);
    let socket = scratch.path("host.sock");
    let _exporter = dreadpool_metrics::Exporter::bind(&pool, socket.to_str().unwrap()).unwrap();

    let out = run(&["explain", "--attach", socket.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(json["pool"], "api");
    assert_eq!(json["tasks"], 2, "{json}");
    let child = json["worst"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["spawned_on"] == "worker 0")
        .unwrap_or_else(|| panic!("the child's wait: {json}"));
    assert_eq!(child["cause"]["name"], "behind a long task", "{json}");
    assert_eq!(child["cause"]["worker"], 0);
    // Sites: the child's `handle.spawn` and the parent's `pool.spawn`, both
    // in this file's `pool_with_children_behind_their_parent`.
    let site = child["site"].as_str().unwrap_or_else(|| panic!("{json}"));
    let long = child["long_task_site"]
        .as_str()
        .unwrap_or_else(|| panic!("{json}"));
    assert!(site.starts_with("dreadpool-top/tests/cli.rs:"), "{json}");
    assert!(long.starts_with("dreadpool-top/tests/cli.rs:"), "{json}");
    assert_ne!(site, long);
    assert_eq!(json["by_site"].as_array().map(Vec::len), Some(2), "{json}");

    let out = run(&["explain", "--attach", socket.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("pool api: 2 tasks"), "{text}");
    assert!(text.contains("queued behind"), "{text}");
    assert!(text.contains("waits by cause:"), "{text}");
    assert!(text.contains("by spawn site"), "{text}");
    assert!(
        text.contains("the long task spawned at dreadpool-top/tests/cli.rs:"),
        "{text}"
    );
}

/// A host recording below `Tasks` level cannot be explained: the message
/// says which level is needed and how to set it, and what the recording
/// can still tell (the wake of a sleeping worker, timed).
#[test]
fn explain_refuses_a_scheduler_level_host_with_the_reason() {
    use dreadpool_core::{RecordLevel, ThreadPoolBuilder, WorkerState};
    let scratch = Scratch::new("explain-level");
    let pool = ThreadPoolBuilder::new()
        .with_threads(1)
        .with_record_level(RecordLevel::Scheduler)
        .build();
    pool.spawn(|| ());
    pool.join();
    // Once the worker is registered asleep, a spawn must wake it: a wake
    // call and a wake for the summary to time.
    while pool.metrics().workers_in(WorkerState::Sleeping) != 1 {
        std::thread::yield_now();
    }
    pool.spawn(|| ());
    pool.join();
    let socket = scratch.path("host.sock");
    let _exporter = dreadpool_metrics::Exporter::bind(&pool, socket.to_str().unwrap()).unwrap();
    let out = run(&["explain", "--attach", socket.to_str().unwrap()]);
    assert!(!out.status.success());
    let message = stderr(&out);
    assert!(message.contains("RecordLevel::Tasks"), "{message}");
    assert!(message.contains("set_record_level"), "{message}");
    assert!(
        message.contains("what this recording can still tell"),
        "{message}"
    );
    assert!(message.contains("took, from the wake call"), "{message}");
    assert!(message.contains("behind a backlog"), "{message}");
}

/// `explain` takes none of the dashboard's flags.
#[test]
fn explain_rejects_the_dashboards_flags() {
    let out = run(&["--threads", "2", "explain", "--attach", "/nonexistent.sock"]);
    // A usage error (2), not a failed attach (1).
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );
}

/// `explain PATH`: a recording written in its Chrome JSON form reads back
/// with the same answer as the pool's own `Recording::explain`.
#[test]
fn explain_reads_a_chrome_json_trace_back_with_the_same_answer() {
    let scratch = Scratch::new("explain-file");
    let pool = pool_with_children_behind_their_parent(2, 20);
    for _ in 0..200 {
        pool.spawn(|| std::hint::black_box(()));
    }
    pool.join();
    let recording = pool.recording();
    let direct = recording.explain(5).unwrap();
    let trace = scratch.path("run.json");
    recording
        .write_chrome_json(std::fs::File::create(&trace).unwrap())
        .unwrap();

    let out = run(&["explain", trace.to_str().unwrap(), "--top", "5", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["pool"], "api");
    assert_eq!(json["tasks"], direct.tasks as u64, "{json}");
    let read_back: Vec<(u64, String)> = json["worst"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["task"].as_u64().unwrap(),
                w["cause"]["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // The whole sentence: its figures (a wake's time from the wake call,
    // a backlog's tasks) must survive the file too.
    let expected: Vec<(u64, String)> = direct
        .worst
        .iter()
        .map(|w| (w.task, w.cause.to_string()))
        .collect();
    // Times go through microseconds with three decimals: exact to the ns.
    assert_eq!(read_back, expected);
}

/// A task spawned from outside while the one worker runs a long task waits
/// with every worker busy, and the report says what the worker ran
/// meanwhile: no task started, busy the whole wait with the long one.
#[test]
fn explain_says_what_each_worker_ran_while_every_worker_was_busy() {
    use dreadpool_core::{RecordLevel, ThreadPoolBuilder};
    use std::sync::mpsc;
    let scratch = Scratch::new("explain-busy");
    let pool = ThreadPoolBuilder::new()
        .with_threads(1)
        .with_record_level(RecordLevel::Tasks)
        .build();
    let (started_tx, started_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    pool.spawn(move || {
        started_tx.send(()).unwrap();
        release_rx.recv().unwrap();
    });
    started_rx.recv().unwrap();
    pool.spawn(|| std::hint::black_box(()));
    release_tx.send(()).unwrap();
    pool.join();
    let trace = scratch.path("busy.json");
    pool.recording()
        .write_chrome_json(std::fs::File::create(&trace).unwrap())
        .unwrap();

    let out = run(&["explain", trace.to_str().unwrap(), "--top", "2", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The second task's (the first's wait is the new thread's start).
    let worst = json["worst"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["cause"]["name"] == "every worker busy")
        .unwrap_or_else(|| panic!("no wait with every worker busy: {json}"));
    let meanwhile = worst["meanwhile"].as_array().unwrap();
    assert_eq!(meanwhile.len(), 1, "{json}");
    assert_eq!(meanwhile[0]["tasks_started"], 0, "{json}");
    let busy = meanwhile[0]["busy_ns"].as_u64().unwrap();
    assert_eq!(meanwhile[0]["longest_ns"].as_u64(), Some(busy), "{json}");
    assert!(
        busy > 0 && busy <= worst["delay_ns"].as_u64().unwrap(),
        "{json}"
    );

    let out = run(&["explain", trace.to_str().unwrap(), "--top", "2"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("worker 0 started 0 tasks, ran tasks for"),
        "{text}"
    );
}

/// What is not a dreadpool trace in Chrome JSON form is refused, saying
/// why: a Perfetto (binary) trace, JSON cut short, other JSON.
#[test]
fn explain_refuses_what_it_cannot_read_back() {
    let scratch = Scratch::new("explain-bad");
    let perfetto = scratch.path("run.perfetto-trace");
    std::fs::write(&perfetto, [0x0a, 0x05, 0x00, 0x01]).unwrap();
    let cut = scratch.path("cut.json");
    std::fs::write(&cut, br#"{"traceEvents":[{"ph":"M","name":"proc"#).unwrap();
    let other = scratch.path("other.json");
    std::fs::write(&other, br#"{"traceEvents":[]}"#).unwrap();
    for (path, expected) in [
        (&perfetto, "Perfetto"),
        (&cut, "truncated"),
        (&other, "not a dreadpool trace"),
        (&scratch.path("missing.json"), "cannot read"),
    ] {
        let out = run(&["explain", path.to_str().unwrap()]);
        assert!(!out.status.success());
        let message = stderr(&out);
        assert!(message.contains(expected), "{path:?}: {message}");
    }
    let out = run(&["explain"]);
    assert!(!out.status.success(), "a path or --attach is required");
}

/// `explain` on recordings of the demo's patterns: each explains every
/// task whose spawn and start it holds, and names a cause for the worst.
#[test]
fn explain_answers_for_each_demo_pattern() {
    let scratch = Scratch::new("explain-demo");
    for pattern in ["steady", "bursty", "skewed", "fan-out", "mixed"] {
        let trace = scratch.path(&format!("{pattern}.json"));
        let out = run(&[
            "--headless",
            "--duration",
            "1",
            "--threads",
            "2",
            "--pattern",
            pattern,
            "--rate",
            "2000",
            "--record",
            trace.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{pattern}: {}", stderr(&out));
        let out = run(&["explain", trace.to_str().unwrap(), "--top", "3", "--json"]);
        assert!(out.status.success(), "{pattern}: {}", stderr(&out));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let tasks = json["tasks"].as_u64().unwrap();
        assert!(tasks > 100, "{pattern}: {json}");
        let explained: u64 = json["by_cause"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["waits"].as_u64().unwrap())
            .sum();
        assert_eq!(explained, tasks, "{pattern}: every wait has a cause entry");
        let worst = &json["worst"][0]["cause"]["name"];
        assert!(worst.is_string(), "{pattern}: {json}");
    }
}
