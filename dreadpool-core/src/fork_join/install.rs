//! [`ThreadPool::install`](crate::ThreadPool::install): run a closure on one
//! of a pool's workers and wait for it.

use crate::registry::Registry;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// Runs `f` on a worker of `registry`'s pool and returns its result,
/// re-raising its panic. From one of the pool's own workers it simply runs
/// `f`; from a worker of another pool, that worker runs its own pool's
/// tasks while it waits; from any other thread, the caller blocks. If the
/// pool has shut down and the caller is outside it, `f` runs on the calling
/// thread, as a scope's refused tasks do.
#[track_caller]
pub(crate) fn install<F, R>(registry: &Registry, f: F) -> R
where
    F: FnOnce() -> R + Send,
    R: Send,
{
    if crate::worker::current_index(Some(registry)).is_some() {
        return f();
    }
    let mut result = None;
    crate::scope::run_one(registry, || {
        result = Some(catch_unwind(AssertUnwindSafe(f)));
    });
    match result.expect("a scope runs every task it spawned") {
        Ok(value) => value,
        Err(payload) => resume_unwind(payload),
    }
}
