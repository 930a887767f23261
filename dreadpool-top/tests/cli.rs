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
