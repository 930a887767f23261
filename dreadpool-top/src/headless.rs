//! `--headless`: no terminal; run the demo (or attach) for a while, then
//! print the `Report` (text, or JSON with `--json`), for scripts and CI.

use crate::source::{Attached, Demo};
use std::fmt;
use std::io::{self, Write};
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

/// A headless run failed.
#[derive(Debug)]
pub enum HeadlessError {
    /// The report could not be written to the output.
    Report(io::Error),
    /// `--record`: a recording could not be taken or written.
    Record(String),
}

impl fmt::Display for HeadlessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeadlessError::Report(e) => write!(f, "cannot write the report: {e}"),
            HeadlessError::Record(e) => write!(f, "--record: {e}"),
        }
    }
}

impl std::error::Error for HeadlessError {}

impl From<io::Error> for HeadlessError {
    fn from(e: io::Error) -> Self {
        HeadlessError::Report(e)
    }
}

impl From<serde_json::Error> for HeadlessError {
    fn from(e: serde_json::Error) -> Self {
        HeadlessError::Report(e.into())
    }
}

/// Where the line about a written recording goes: after the text report,
/// or to stderr when stdout carries JSON.
fn say(json: bool, out: &mut impl Write, line: &str) -> io::Result<()> {
    if json {
        eprintln!("{line}");
        Ok(())
    } else {
        writeln!(out, "{line}")
    }
}

/// How long the demo is given to finish its queued tasks before the report,
/// so that the report accounts for every task spawned.
const DRAIN: Duration = Duration::from_secs(10);

/// Runs the demo for `duration`, sampling every `refresh`, and writes the
/// report to `out`; with `record`, then writes the flight recording there
/// (after the load drained, so that it ends with the last task).
pub fn run_demo(
    mut demo: Demo,
    duration: Duration,
    refresh: Duration,
    json: bool,
    record: Option<&Path>,
    out: &mut impl Write,
) -> Result<(), HeadlessError> {
    let end = Instant::now() + duration;
    let mut next = Instant::now() + refresh;
    while Instant::now() < end {
        thread::sleep(next.min(end).saturating_duration_since(Instant::now()));
        demo.tick();
        next += refresh;
    }
    let drained = demo.finish(DRAIN);
    demo.tick();
    let report = demo.report();
    let stats = demo.load_stats();
    if json {
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
    } else {
        writeln!(out, "{report}")?;
        let lost = stats.spawned.saturating_sub(stats.finished);
        writeln!(
            out,
            "load: {} tasks spawned, {} finished ({} panicked on purpose), {}",
            stats.spawned,
            stats.finished,
            stats.panicked,
            if drained && lost == 0 {
                "none lost".to_owned()
            } else {
                format!("{lost} still queued after {DRAIN:?}")
            }
        )?;
    }
    let recorded = record.map(|path| demo.record_to(path));
    demo.shutdown();
    match recorded {
        Some(Ok(saved)) => say(json, out, &saved.to_string())?,
        Some(Err(e)) => return Err(HeadlessError::Record(e.to_string())),
        None => {}
    }
    Ok(())
}

/// Attaches for `duration` and writes one report per pool (a JSON array
/// with `--json`); with `record`, then pulls every pool's flight recording
/// from the host and writes it there.
pub fn run_attached(
    mut attached: Attached,
    duration: Duration,
    json: bool,
    record: Option<&Path>,
    out: &mut impl Write,
) -> Result<(), HeadlessError> {
    let end = Instant::now() + duration;
    let mut frames = 0u64;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        if attached.wait_frame(left).is_some() {
            frames += 1;
        }
    }
    let reports = attached.reports();
    if json {
        serde_json::to_writer_pretty(&mut *out, &reports)?;
        writeln!(out)?;
    } else {
        if reports.is_empty() {
            writeln!(out, "no frames received in {duration:?}")?;
        }
        for report in &reports {
            writeln!(out, "{report}")?;
        }
        writeln!(out, "{frames} frames received")?;
    }
    if let Some(path) = record {
        let mut failed = Vec::new();
        for outcome in attached.record_all(path) {
            match outcome {
                Ok(saved) => say(json, out, &saved.to_string())?,
                Err(e) => failed.push(e),
            }
        }
        if !failed.is_empty() {
            return Err(HeadlessError::Record(failed.join("; ")));
        }
    }
    Ok(())
}
