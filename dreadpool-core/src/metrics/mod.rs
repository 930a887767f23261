//! Per-worker lock-free counters and latency histograms.
//!
//! Twin modules with identical signatures, the real `enabled` with the
//! `metrics` feature and the empty `disabled` without, so that no call site
//! carries a `cfg` and a disabled feature compiles to nothing.

#[cfg(feature = "metrics")]
mod enabled;
#[cfg(feature = "metrics")]
pub(crate) use enabled::*;

#[cfg(not(feature = "metrics"))]
mod disabled;
#[cfg(not(feature = "metrics"))]
pub(crate) use disabled::*;

#[cfg(feature = "metrics")]
mod histogram;
#[cfg(feature = "metrics")]
mod snapshot;

#[cfg(feature = "metrics")]
pub use histogram::LatencyHistogram;
#[cfg(feature = "metrics")]
pub use snapshot::{PoolMetrics, WorkerMetrics, WorkerState};

/// Whether batch transfers are counted (see `WorkerThread::take_batch`),
/// and tasks from outside marked so that the worker that runs them counts
/// them (`Task::marked_from_outside`): with the feature off, nobody reads either
/// count, so neither is computed.
pub(crate) const COUNTS_BATCHES: bool = cfg!(feature = "metrics");

/// By default one task in this many is timed for the latency histograms.
///
/// A timed task costs three clock reads and the allocation of its timing
/// wrapper; at one in 256 that is under 2% of the instructions of a fan-out
/// of empty tasks (`BENCHMARKS.md`, "Core design figures":
/// metrics-default-latency-sampling). A pool running 100,000 tasks a second
/// still times about 400 of them a second.
pub const DEFAULT_LATENCY_SAMPLING: u32 = 256;
