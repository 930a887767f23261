//! dreadpool's benchmark suite (issue 6).
//!
//! - [`seed`]: a faithful copy of the seed's original design, as a contender.
//! - [`contenders`]: dreadpool, rayon, threadpool, tokio and the seed behind
//!   one [`Spawner`](contenders::Spawner) trait, built once per thread count.
//! - [`tally`]: how every contender's tasks report completion (the same way
//!   for all) and how the harness waits for them.
//! - [`scenarios`]: the measurements of issue 6 (and issue 26's producers),
//!   one [`Scenario`](contenders::Scenario) each.
//! - [`offload`]: async code awaiting work on a pool, in each pool's
//!   pattern (issue 19).
//! - [`two_pools`]: two pools in one process, fed at once; an idle pool
//!   beside a busy one (issue 18).
//! - [`fork_join`]: `dreadpool::join` beside `rayon::join` and chili on
//!   recursive workloads, and scoped spawns beside rayon's (issue 16).
//! - `recorder_cost` (with the `recorder` feature): the flight recorder's
//!   cost, plain and recorded dreadpool run back to back (issue 15).
//! - [`sys`]: CPU time and resident memory of this process.
//! - [`report`]: medians, the targets of issue 6 and the results table.
//! - [`bootstrap`]: the 95% interval of a wake latency percentile ratio.
//! - [`compare`]: the driver behind `cargo run --release -p dreadpool-bench
//!   --bin compare`.
//!
//! The criterion micro-benchmarks of dreadpool's hot paths are in
//! `benches/hot_paths.rs` (`cargo bench -p dreadpool-bench`).

pub mod bootstrap;
pub mod compare;
pub mod contenders;
pub mod fork_join;
pub mod offload;
#[cfg(feature = "recorder")]
pub mod recorder_cost;
pub mod report;
pub mod scenarios;
pub mod seed;
pub mod sys;
pub mod tally;
pub mod two_pools;
