//! The global pool: the default pool that [`join`](crate::join) runs on
//! when called outside every pool, configured at most once.
//!
//! Either [`ThreadPoolBuilder::build_global`] configures it, before its
//! first use, or the first [`join`](crate::join) outside every pool (or
//! [`global_pool`]) starts it with the defaults. After that it never
//! changes: a later `build_global` fails with
//! [`BuildError::GlobalPoolAlreadyInitialized`] and starts no thread.
//!
//! The protocol: one lock (`INIT`) serialises every initialiser, and the
//! pool is published through a `OnceLock`, which readers check first
//! without the lock. Under the lock an initialiser checks the cell again,
//! builds, and sets it; as only lock holders set it, the set cannot fail,
//! and a builder never starts threads that would then be thrown away.
//! `tests/global_pool.rs` races configured and default initialisers.

use crate::{BuildError, ThreadPool, ThreadPoolBuilder};
use std::sync::{Mutex, OnceLock, PoisonError};

/// The name of the default pool's threads (`"dreadpool-global-{i}"`).
pub(crate) const GLOBAL_POOL_NAME: &str = "dreadpool-global";

static GLOBAL_POOL: OnceLock<ThreadPool> = OnceLock::new();

/// Held by whoever builds the global pool, so that exactly one build runs.
/// It guards no data (`()`): a panicking default build poisons it without
/// breaking anything, so a poisoned lock is taken as it is.
static INIT: Mutex<()> = Mutex::new(());

/// The global pool, started on first use with one thread per CPU this
/// process may use (or `DREADPOOL_THREADS`), unless
/// [`ThreadPoolBuilder::build_global`] configured it first. It is never shut
/// down: its threads sleep when it has no work.
///
/// ```
/// let pool = dreadpool::global_pool();
/// assert_eq!(pool.install(|| 6 * 7), 42);
/// ```
///
/// # Panics
///
/// If the default pool cannot be built; every later call tries again.
pub fn global_pool() -> &'static ThreadPool {
    if let Some(pool) = GLOBAL_POOL.get() {
        return pool;
    }
    initialise(|| {
        ThreadPoolBuilder::new()
            .with_thread_name(GLOBAL_POOL_NAME)
            .try_build()
    })
    .unwrap_or_else(|error| panic!("dreadpool: the global pool could not start: {error}"))
}

/// Builds the global pool with `builder`, unless it is already there.
pub(crate) fn build_global(builder: ThreadPoolBuilder) -> Result<&'static ThreadPool, BuildError> {
    let mut builder = Some(builder);
    let pool = initialise(|| builder.take().expect("built once").try_build())?;
    if builder.is_some() {
        // Someone else initialised it: our builder was never used.
        return Err(BuildError::GlobalPoolAlreadyInitialized);
    }
    Ok(pool)
}

/// Returns the global pool, building it with `build` (under the lock) if no
/// one has. A failed build leaves the pool unset.
fn initialise(
    build: impl FnOnce() -> Result<ThreadPool, BuildError>,
) -> Result<&'static ThreadPool, BuildError> {
    let _only_builder = INIT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(pool) = GLOBAL_POOL.get() {
        return Ok(pool);
    }
    let pool = build()?;
    // Only lock holders set the cell, and we checked it under the lock.
    if GLOBAL_POOL.set(pool).is_err() {
        unreachable!("the global pool is set only under INIT");
    }
    Ok(GLOBAL_POOL.get().expect("just set"))
}

#[cfg(all(test, feature = "recorder"))]
mod tests {
    use crate::{EventKind, RecordLevel};

    /// A join outside every pool runs as the default pool's task, whose
    /// site is the join's caller (`#[track_caller]` through `join_outside`
    /// and `install`). Other tests may join on the default pool meanwhile:
    /// their tasks have other lines.
    #[test]
    fn a_join_outside_every_pool_records_its_callers_line() {
        let pool = super::global_pool();
        let before = pool.record_level();
        pool.set_record_level(RecordLevel::Tasks);
        let line = line!() + 1;
        crate::join(|| (), || ());
        let recording = pool.recording();
        pool.set_record_level(before);
        let found = recording.events().iter().any(|event| match event.kind {
            EventKind::Spawn { task, .. } => recording
                .task_site(task)
                .is_some_and(|site| site.line() == line && site.file().ends_with("global_pool.rs")),
            _ => false,
        });
        assert!(
            found,
            "no task at line {line}: {:?}",
            recording.task_sites().collect::<Vec<_>>()
        );
    }
}
