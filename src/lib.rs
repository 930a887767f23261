//! # dreadpool
//!
//! An observable work-stealing thread pool for `'static` closures.
//!
//! This crate is the facade: it re-exports the public API of
//! [`dreadpool-core`](dreadpool_core). See the crate README for the design.
//!
//! ```
//! use dreadpool::ThreadPoolBuilder;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use std::sync::Arc;
//!
//! let pool = ThreadPoolBuilder::default().with_threads(2).build();
//! let counter = Arc::new(AtomicUsize::new(0));
//! for _ in 0..100 {
//!     let counter = Arc::clone(&counter);
//!     pool.spawn(move || {
//!         counter.fetch_add(1, Ordering::Relaxed);
//!     });
//! }
//! pool.join();
//! assert_eq!(counter.load(Ordering::Relaxed), 100);
//! ```

pub use dreadpool_core::*;

/// Rates, histograms, reports and export of a pool's counters: the
/// [`dreadpool-metrics`](dreadpool_metrics) crate (feature `metrics`).
#[cfg(feature = "metrics")]
pub mod metrics {
    pub use dreadpool_metrics::*;
}
