//! The side-by-side comparison: `cargo run --release -p dreadpool-bench --bin
//! compare [-- --quick] [--threads N] [--reps N] [--contenders a,b] [SCENARIO...]`.
//!
//! Every scenario of issue 6 runs on every contender with the same thread
//! count, repetition after repetition; inside one repetition the contenders
//! take turns (the first one rotating from repetition to repetition), so
//! drift of this shared machine hits all of them alike. The table reports the
//! median over repetitions (wake latency: percentiles over all samples).
//!
//! Idle cost and memory are measured in a fresh child process per contender
//! and repetition (this binary re-executed with the hidden `--child` flag),
//! so that no other pool's threads or freed memory pollute the figures.
//!
//! - [`cli`]: the command line ([`parse_args`]).
//! - [`scenario`]: the spawn benchmarks as a type ([`Scenario`]) and what
//!   the command line selects ([`Selection`]).
//! - [`metric`]: the table's rows as a type ([`Metric`]): label, unit,
//!   target.
//! - `harness`: pools built once, one measuring function per scenario.
//! - `rows`: the rows from the samples.
//! - [`child`]: the measurements that run in a child process.
//! - [`mod@sweep`]: `--sweep`, the scenarios at several thread counts.
//! - [`mod@render`]: the report.

pub mod child;
pub mod cli;
mod harness;
pub mod metric;
pub mod render;
mod rows;
mod samples;
pub mod scenario;
pub mod sweep;

pub use child::{run_child, ChildKind};
pub use cli::{parse_args, Invocation};
pub use harness::WAKE_BLOCK;
pub use metric::Metric;
pub use render::{date, features, machine, render};
pub use scenario::{Name, Scenario, Selection};
pub use sweep::{sweep, Sweep};

use crate::contenders::{Contender, Tuning};
use crate::fork_join;
use crate::report::Row;
use harness::Harness;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How big each scenario is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizes {
    /// Tasks spawned from outside.
    pub external: u64,
    /// Depth of the nested tree.
    pub levels: u32,
    /// Children of the fan-out task.
    pub fanout: u64,
    /// Tasks the producers spawn between them.
    pub producers: u64,
    /// Wake latency samples per contender, over all repetitions.
    pub wake_samples: u32,
    /// Idle time before each wake sample.
    pub wake_pause: Duration,
    /// How long the idle cost is watched, per child process.
    pub idle_window: Duration,
    /// Repetitions of the idle and memory child processes (at most `reps`).
    pub child_reps: usize,
    /// CPU-bound tasks in the compute scenario.
    pub compute_tasks: u32,
    /// Tasks queued behind the blocked pool.
    pub memory_tasks: u64,
    /// Offloads awaited one at a time, per contender and repetition.
    pub offload: u32,
    /// Offloads awaited at once, per contender and repetition.
    pub offload_many: u32,
    /// The fork-join group's workloads.
    pub fork_join: fork_join::Sizes,
    /// Repetitions of everything.
    pub reps: usize,
}

impl Sizes {
    /// The sizes of issue 6.
    pub const FULL: Sizes = Sizes {
        external: 1_000_000,
        levels: 20,
        fanout: 1_000_000,
        producers: 1_000_000,
        // Enough for a p99 verdict (`BENCHMARKS.md`, on the wake p99 sample count).
        wake_samples: 60_000,
        wake_pause: Duration::from_millis(1),
        idle_window: Duration::from_secs(2),
        child_reps: 3,
        compute_tasks: 20_000,
        memory_tasks: 1_000_000,
        offload: 20_000,
        offload_many: 20_000,
        fork_join: fork_join::Sizes::FULL,
        reps: 7,
    };

    /// `--quick`: a minute or so, for a sanity check.
    pub const QUICK: Sizes = Sizes {
        external: 100_000,
        levels: 16,
        fanout: 100_000,
        producers: 100_000,
        wake_samples: 300,
        wake_pause: Duration::from_millis(1),
        idle_window: Duration::from_millis(500),
        child_reps: 1,
        compute_tasks: 2_000,
        memory_tasks: 200_000,
        offload: 5_000,
        offload_many: 5_000,
        fork_join: fork_join::Sizes::QUICK,
        reps: 3,
    };

    /// `--smoke`: seconds, even in a debug build (the test suite's run).
    pub const SMOKE: Sizes = Sizes {
        external: 2_000,
        levels: 8,
        fanout: 2_000,
        producers: 2_000,
        wake_samples: 10,
        wake_pause: Duration::from_micros(200),
        idle_window: Duration::from_millis(50),
        child_reps: 1,
        compute_tasks: 50,
        memory_tasks: 2_000,
        offload: 50,
        offload_many: 50,
        fork_join: fork_join::Sizes::SMOKE,
        reps: 1,
    };
}

/// What the command line asked for.
#[derive(Debug, Clone)]
pub struct Options {
    /// Worker threads of every pool (the oversubscribed cases use 4x cores).
    pub threads: usize,
    /// Scenario sizes and repetitions.
    pub sizes: Sizes,
    /// The scenarios and fork-join workloads to run.
    pub selection: Selection,
    /// The contenders to run, dreadpool first.
    pub contenders: Vec<Contender>,
    /// This binary, re-executed for the child-process scenarios.
    pub exe: Option<PathBuf>,
    /// dreadpool's settings, where not its defaults (`--backlog`,
    /// `--global-shards`).
    pub tuning: Tuning,
    /// Before each repetition, wait up to this long for other processes to
    /// leave the CPUs alone (`--quiet-wait SECS`; 0 = do not wait).
    pub quiet_wait: Duration,
}

/// Everything one comparison run measured.
#[derive(Debug, Clone)]
pub struct Results {
    /// The table's rows, in the order of issue 6, each with its metric.
    pub rows: Vec<(Metric, Row)>,
    /// The fork-join table's rows (issue 16).
    pub fork_join: Vec<fork_join::Row>,
    /// The contenders, in column order.
    pub contenders: Vec<Contender>,
    /// The options the run used.
    pub options: Options,
    /// The oversubscribed thread count.
    pub oversub_threads: usize,
    /// Wall time of the whole run.
    pub took: Duration,
    /// Problems met on the way (a child that failed, ...).
    pub problems: Vec<String>,
    /// Other processes' CPU use (in CPUs) just before each repetition.
    pub background: Vec<f64>,
    /// The 1-minute load average at the start and at the end.
    pub loadavg: (Option<f64>, Option<f64>),
}

/// Other processes' CPU use below which the machine counts as quiet.
pub const QUIET: f64 = 0.1;

/// The number of CPUs this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs the comparison, reporting progress on stderr.
pub fn run(options: &Options) -> Results {
    let started = Instant::now();
    let loadavg_start = crate::sys::loadavg();
    let mut harness = Harness::new(options);
    for rep in 0..options.sizes.reps {
        harness.repetition(rep);
    }
    let rows = rows::rows(&harness);
    Results {
        rows,
        fork_join: harness
            .fork_join
            .as_ref()
            .map(|b| b.rows())
            .unwrap_or_default(),
        contenders: options.contenders.clone(),
        options: options.clone(),
        oversub_threads: harness.oversub_threads,
        took: started.elapsed(),
        problems: harness.problems,
        background: harness.background,
        loadavg: (loadavg_start, crate::sys::loadavg()),
    }
}
