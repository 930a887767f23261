//! The queues tasks wait in: crossbeam-deque's `Injector` (the global queue),
//! `Worker` (a worker's local queue) and `Stealer` (a peer's view of it),
//! and the global queue built of `Injector`s (`global.rs`: one, or one
//! shard per group of spawning threads).
//!
//! crossbeam-deque is not loom-aware, so under `cfg(loom)` the same names are
//! bound to a mutex-based stand-in with the same semantics (see `queue/mock.rs`).

mod global;

pub(crate) use global::{GlobalQueue, MAX_SHARDS};

#[cfg(not(loom))]
pub(crate) use crossbeam_deque::{Injector, Steal, Stealer, Worker};

#[cfg(loom)]
mod mock;
#[cfg(loom)]
pub(crate) use mock::{Injector, Steal, Stealer, Worker};
