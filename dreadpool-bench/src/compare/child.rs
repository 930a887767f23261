//! The measurements that run in a fresh process of their own (this binary
//! re-executed with the hidden `--child` flag), so that no other pool's
//! threads or freed memory pollute their figures.

use super::{Options, Scenario, Sizes};
use crate::contenders::{Contender, PoolSet, Tuning};
use crate::scenarios::{Idle, Memory};
use std::path::Path;
use std::process::Command;

/// What a child process measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ChildKind {
    /// [`Scenario::Idle`]: CPU time of an idle pool, in ms/s.
    Idle,
    /// [`Scenario::Memory`]: peak RSS per queued task, in bytes.
    Memory,
}

impl ChildKind {
    /// The kind that measures `scenario`, if it runs in a child.
    pub fn of(scenario: Scenario) -> Option<ChildKind> {
        match scenario {
            Scenario::Idle => Some(ChildKind::Idle),
            Scenario::Memory => Some(ChildKind::Memory),
            _ => None,
        }
    }

    /// Its name after `--child`.
    pub fn name(self) -> &'static str {
        match self {
            ChildKind::Idle => "idle",
            ChildKind::Memory => "memory",
        }
    }
}

/// Runs one child-process measurement in this process and returns its figure.
pub fn run_child(
    kind: ChildKind,
    contender: Contender,
    threads: usize,
    sizes: Sizes,
    tuning: Tuning,
) -> Result<f64, String> {
    let mut set = PoolSet::new(threads).with_tuning(tuning);
    match kind {
        ChildKind::Idle => Ok(set.run(
            contender,
            &Idle {
                window: sizes.idle_window,
            },
        )),
        ChildKind::Memory => set.run(
            contender,
            &Memory {
                tasks: sizes.memory_tasks,
            },
        ),
    }
}

/// Runs a child-process measurement in a fresh process of `exe`.
pub(super) fn spawn_child(
    exe: &Path,
    kind: ChildKind,
    contender: Contender,
    options: &Options,
) -> Result<f64, String> {
    let (threads, sizes) = (options.threads, options.sizes);
    let mut command = Command::new(exe);
    if let Some(backlog) = options.tuning.backlog {
        command.args(["--backlog", &backlog.to_string()]);
    }
    if let Some(shards) = options.tuning.global_queue_shards {
        command.args(["--global-shards", &shards.to_string()]);
    }
    let output = command
        .args(["--child", kind.name(), "--contender", contender.name()])
        .args(["--threads", &threads.to_string()])
        .args(["--memory-tasks", &sizes.memory_tasks.to_string()])
        .args(["--idle-ms", &sizes.idle_window.as_millis().to_string()])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let kind = kind.name();
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .ok_or_else(|| {
            format!(
                "child {kind}/{contender} failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            )
        })?
        .trim()
        .parse::<f64>()
        .map_err(|e| format!("child {kind}/{contender}: {e}"))
}
