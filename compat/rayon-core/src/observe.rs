//! Where the global pool is made observable.
//!
//! [`from_env`] is called exactly once, by `global.rs`, right after this
//! crate built the global pool (by
//! [`build_global`](crate::ThreadPoolBuilder::build_global) or on first
//! use). It is the one hook for the observability switch: an environment
//! variable that, when set, will serve the pool's metrics and recordings
//! (dreadpool's exporter, for `dreadpool-top --attach` and Prometheus). The
//! crate depends on dreadpool with its `metrics` and `recorder` features for
//! that purpose. Until the switch lands it does nothing.

/// Makes the freshly built global pool observable if the environment asks
/// for it; for now, a no-op.
pub(crate) fn from_env(_pool: &'static dreadpool::ThreadPool) {}
