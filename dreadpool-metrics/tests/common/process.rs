//! Child processes for the Prometheus tests: the `prometheus` example built
//! with cargo and started on a free loopback port, plain HTTP/1.0 requests,
//! and guards that kill children and remove scratch directories however a
//! test ends.

use super::HANG;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// Building the example may compile tokio and hyper on a small machine.
const BUILD_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Kills and reaps the child when the test ends, however it ends.
pub struct Reaped(pub Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A scratch directory removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "dpm-{tag}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("create the scratch directory");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Whether `tool --version` runs. When it does not: in CI (`CI` set, where
/// `.ci/run` installs it) the test fails, elsewhere it is skipped with a
/// `SKIPPED:` line, and the caller returns.
pub fn require_tool(tool: &str, why: &str) -> bool {
    let present = Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !present {
        assert!(
            std::env::var_os("CI").is_none(),
            "{tool} is not installed, and CI is set: .ci/run installs it (apt-get install prometheus), so the install is broken"
        );
        eprintln!("SKIPPED: {tool} is not installed (apt-get install prometheus); {why}");
    }
    present
}

/// Builds the example with cargo and returns its executable's path.
pub fn build_example() -> PathBuf {
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
            "metrics-rs",
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

/// Starts the example on a free loopback port; returns it and the address
/// it printed.
pub fn start_example(executable: &Path) -> (Reaped, SocketAddr) {
    let mut child = Reaped(
        Command::new(executable)
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
    (child, addr)
}

/// One plain GET; the status code and the body. HTTP/1.0, so that no
/// server answers with chunked encoding.
pub fn get(addr: SocketAddr, path: &str) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
    stream.set_read_timeout(Some(HANG))?;
    stream.set_write_timeout(Some(HANG))?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n")?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok((status, body.to_string()))
}

/// `s` percent-encoded for a query string.
pub fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
