//! rayon-core 1.13's public API on the [dreadpool](https://docs.rs/dreadpool)
//! scheduler: a drop-in replacement for the `rayon-core` crate, so that
//! `rayon` (1.8 to 1.12) and everything built on it runs on dreadpool,
//! where the pool can be watched (metrics, flight recorder, dashboard).
//!
//! A program switches with one line in its `Cargo.toml`:
//!
//! ```toml
//! [patch.crates-io]
//! rayon-core = { git = "https://example.invalid/dreadpool" }
//! ```
//!
//! Every public item of rayon-core 1.13 is here, with rayon's signature and
//! behaviour; the differences (thread names, the limits, what dropping a
//! `use_current_thread` pool does) are listed in `compat/README.md`.
//!
//! ```
//! let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
//! let sum = pool.install(|| {
//!     let (a, b) = rayon_core::join(|| (1..=50).sum::<u32>(), || (51..=100).sum::<u32>());
//!     a + b
//! });
//! assert_eq!(sum, 5050);
//! ```

#![warn(missing_docs)]
#![warn(missing_debug_implementations)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]
#![warn(unreachable_pub)]
// The deprecated `Configuration` and `initialize` are part of the API.
#![allow(deprecated)]

mod broadcast;
mod builder;
mod current;
mod error;
mod global;
mod join;
mod membership;
mod observe;
mod pool;
mod scope;
mod spawn;
mod thread_spawn;
mod yielding;

pub use broadcast::{broadcast, spawn_broadcast, BroadcastContext};
pub use builder::ThreadPoolBuilder;
#[allow(deprecated)]
pub use builder::{initialize, Configuration};
pub use current::{
    current_num_threads, current_thread_has_pending_tasks, current_thread_index, max_num_threads,
};
pub use error::ThreadPoolBuildError;
pub use join::{join, join_context, FnContext};
pub use pool::ThreadPool;
pub use scope::{in_place_scope, in_place_scope_fifo, scope, scope_fifo, Scope, ScopeFifo};
pub use spawn::{spawn, spawn_fifo};
pub use thread_spawn::ThreadBuilder;
pub use yielding::{yield_local, yield_now, Yield};

pub(crate) use current::in_worker;
