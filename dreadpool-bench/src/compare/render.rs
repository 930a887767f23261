//! The report: a header on the run and the machine, the spawn table, the
//! fork-join table, the verdicts and any problems met.

use super::{cores, Results};
use crate::fork_join;
use crate::report;
use std::process::Command;

/// The machine, for the report header: CPU model, CPU count, kernel.
pub fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|k| format!(", Linux {}", k.trim()))
        .unwrap_or_default();
    format!("{model}, {} CPUs{kernel}", cores())
}

/// Today's date and time in UTC, as `date -u` prints it, if it can.
pub fn date() -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "unknown date".to_owned())
}

/// dreadpool's features in this build, as the bench crate passed them on.
pub fn features() -> &'static str {
    match (cfg!(feature = "tracing"), cfg!(feature = "metrics")) {
        (true, true) => "tracing, metrics",
        (true, false) => "tracing",
        (false, true) => "metrics",
        (false, false) => "none",
    }
}

/// The full report: header, table, notes.
pub fn render(results: &Results) -> String {
    let o = &results.options;
    let mut out = String::new();
    out.push_str(&format!(
        "dreadpool comparison: {} threads ({} oversubscribed), {} repetitions, median of repetitions\n",
        o.threads, results.oversub_threads, o.sizes.reps
    ));
    out.push_str(&format!("machine: {}\ndate: {}\n", machine(), date()));
    let fmt = |v: Option<f64>| v.map_or_else(|| "?".to_owned(), |v| format!("{v:.2}"));
    let most = results.background.iter().copied().reduce(f64::max);
    out.push_str(&format!(
        "load: 1-min loadavg {} at start, {} at end; other processes used at most {} CPUs before a repetition\n",
        fmt(results.loadavg.0),
        fmt(results.loadavg.1),
        fmt(most),
    ));
    out.push_str(&format!(
        "dreadpool build: {}, features: {}{}\n\n",
        if cfg!(debug_assertions) {
            "debug (figures meaningless)"
        } else {
            "release"
        },
        features(),
        o.tuning
            .backlog
            .map(|b| format!(", backlog {b}"))
            .into_iter()
            .chain(
                o.tuning
                    .global_queue_shards
                    .map(|s| format!(", global queue shards {s}"))
            )
            .collect::<String>(),
    ));
    if !results.rows.is_empty() {
        out.push_str(&report::markdown_table(
            results.rows.iter().map(|(_, row)| row),
            &results.contenders,
        ));
        out.push('\n');
    }
    if !results.fork_join.is_empty() {
        out.push_str(&format!(
            "fork-join (issue 16): dreadpool::join and rayon::join inside their pool's install, \
             chili's Scope::join; times are medians, ratios are dreadpool's over rayon's and \
             over chili's; targets on {} threads\n\n",
            results
                .fork_join
                .iter()
                .map(|r| r.threads)
                .max()
                .unwrap_or(1)
        ));
        out.push_str(&fork_join::markdown_table(&results.fork_join));
        out.push('\n');
    }
    let verdicts = results
        .rows
        .iter()
        .map(|(_, r)| r.verdict())
        .chain(results.fork_join.iter().map(|r| r.verdict()));
    let misses = verdicts
        .clone()
        .filter(|&v| v == report::Verdict::Miss)
        .count();
    let passes = verdicts.filter(|&v| v == report::Verdict::Pass).count();
    out.push_str(&format!("targets: {passes} PASS, {misses} MISS\n"));
    for problem in &results.problems {
        out.push_str(&format!("problem: {problem}\n"));
    }
    out.push_str(&format!("took {:.1} s\n", results.took.as_secs_f64()));
    out
}
