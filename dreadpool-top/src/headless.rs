//! `--headless`: no terminal; run the demo (or attach) for a while, then
//! print the `Report` (text, or JSON with `--json`), for scripts and CI.

use crate::source::{Attached, Demo};
use std::io::{self, Write};
use std::thread;
use std::time::{Duration, Instant};

/// How long the demo is given to finish its queued tasks before the report,
/// so that the report accounts for every task spawned.
const DRAIN: Duration = Duration::from_secs(10);

/// Runs the demo for `duration`, sampling every `refresh`, and writes the
/// report to `out`.
pub fn run_demo(
    mut demo: Demo,
    duration: Duration,
    refresh: Duration,
    json: bool,
    out: &mut impl Write,
) -> io::Result<()> {
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
    demo.shutdown();
    Ok(())
}

/// Attaches for `duration` and writes one report per pool (a JSON array
/// with `--json`).
pub fn run_attached(
    mut attached: Attached,
    duration: Duration,
    json: bool,
    out: &mut impl Write,
) -> io::Result<()> {
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
    Ok(())
}
