//! `examples/prometheus.rs` (at the workspace root), built with the facade's
//! `metrics` feature, run as a real process and scraped over loopback: its
//! text carries every documented metric name, with the `pool` and `worker`
//! labels.
#![cfg(feature = "metrics-rs")]

mod common;

use common::HANG;
use dreadpool::metrics::publish::names;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Building the example may compile tokio and hyper on a small machine.
const BUILD_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Kills and reaps the child when the test ends, however it ends.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Builds the example with cargo and returns its executable's path.
fn build_example() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate sits in the workspace");
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .current_dir(root)
        .args([
            "build",
            "--quiet",
            "-p",
            "dreadpool",
            "--example",
            "prometheus",
            "--features",
            "metrics",
            "--message-format=json-render-diagnostics",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = Reaped(cargo.spawn().expect("cargo runs"));
    let stdout = child.0.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut executable = None;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let Ok(message) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            if message["reason"] == "compiler-artifact" && message["target"]["name"] == "prometheus"
            {
                if let Some(path) = message["executable"].as_str() {
                    executable = Some(PathBuf::from(path));
                }
            }
        }
        let _ = tx.send(executable);
    });
    let executable = rx
        .recv_timeout(BUILD_TIMEOUT)
        .expect("cargo build of the example timed out")
        .expect("cargo built no prometheus example");
    let status = child.0.wait().expect("cargo exits");
    assert!(status.success(), "cargo build failed: {status}");
    executable
}

/// One plain HTTP/1.1 GET; the whole response as text.
fn get(addr: SocketAddr, path: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
    stream.set_read_timeout(Some(HANG))?;
    stream.set_write_timeout(Some(HANG))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    Ok(response)
}

#[test]
fn the_prometheus_example_serves_the_documented_names() {
    let executable = build_example();
    let mut child = Reaped(
        Command::new(&executable)
            // Port 0: the example picks a free port and prints it. It stops
            // by itself after ten minutes should this test die unreaped.
            .args(["127.0.0.1:0", "600"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the example starts"),
    );
    let stdout = child.0.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let line = rx
        .recv_timeout(HANG)
        .expect("the example prints its address");
    let addr: SocketAddr = line
        .strip_prefix("serving http://")
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .parse()
        .expect("an address");
    assert!(addr.ip().is_loopback());

    // The publisher publishes before the example prints, and the listener
    // is bound before that: the first scrape has everything.
    let response = get(addr, "/metrics").expect("scrape");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    for name in names::ALL {
        assert!(
            response.lines().any(|l| l.starts_with(name)),
            "{name} missing from the scrape:\n{response}"
        );
    }
    assert!(
        response.contains("dreadpool_tasks_run_total{pool=\"prometheus-demo\",worker=\"0\"}"),
        "{response}"
    );
    assert!(response.contains("dreadpool_threads{pool=\"prometheus-demo\"} 4"));

    // The numbers move: a later scrape has run more tasks.
    let tasks = |text: &str| -> u64 {
        text.lines()
            .filter(|l| l.starts_with("dreadpool_tasks_run_total{"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .sum()
    };
    let first = tasks(&response);
    let deadline = Instant::now() + HANG;
    loop {
        let later = get(addr, "/metrics").expect("scrape");
        if tasks(&later) > first {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "tasks_run never moved past {first}"
        );
        // Not an ordering: a pause between scrapes of a process that
        // publishes twice a second.
        thread::sleep(Duration::from_millis(100));
    }
    assert!(
        child.0.try_wait().expect("status").is_none(),
        "the example exited early"
    );
}
