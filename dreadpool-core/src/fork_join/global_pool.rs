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
//!
//! A failed build (a configuration refused, the OS or a user's spawner,
//! `ThreadPoolBuilder::build_global_with_spawner`, refusing a thread)
//! returns before the set, still under the lock, and the build itself has
//! shut down and joined the workers it started (`start` in `builder.rs`):
//! so the cell is still empty, no thread of the failed pool is left, and
//! no reader can have seen it (readers see only what the cell holds). The
//! next initialiser to take the lock finds the cell empty and builds: a
//! later `build_global` succeeds, unless a default initialiser (a `join`
//! outside every pool, `global_pool()`) took the lock first, in which case
//! the pool has the defaults and the later `build_global` is refused, as
//! after any first use (`tests/global_pool_spawner.rs`).
//!
//! The build runs user code on the building thread, under the lock (a
//! spawner, a thread-name function). Were that code to use the global pool,
//! it would wait for the lock it holds; `BUILDING` notices that and panics
//! with a message instead of deadlocking.

use crate::{BuildError, ThreadPool, ThreadPoolBuilder};
use std::cell::Cell;
use std::sync::{Mutex, OnceLock, PoisonError};

/// The name of the default pool's threads (`"dreadpool-global-{i}"`).
pub(crate) const GLOBAL_POOL_NAME: &str = "dreadpool-global";

static GLOBAL_POOL: OnceLock<ThreadPool> = OnceLock::new();

/// Held by whoever builds the global pool, so that exactly one build runs.
/// It guards no data (`()`): a panicking default build poisons it without
/// breaking anything, so a poisoned lock is taken as it is.
static INIT: Mutex<()> = Mutex::new(());

thread_local! {
    /// Whether this thread is building the global pool (holds `INIT`).
    static BUILDING: Cell<bool> = const { Cell::new(false) };
}

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

/// Builds the global pool with `build`, unless it is already there: then
/// `build` is not called, and the answer is
/// [`BuildError::GlobalPoolAlreadyInitialized`].
pub(crate) fn build_global(
    build: impl FnOnce() -> Result<ThreadPool, BuildError>,
) -> Result<&'static ThreadPool, BuildError> {
    let mut build = Some(build);
    let pool = initialise(|| match build.take() {
        Some(build) => build(),
        // `initialise` calls its closure at most once.
        None => unreachable!("the global pool is built once per call"),
    })?;
    if build.is_some() {
        // Someone else initialised it: our build never ran.
        return Err(BuildError::GlobalPoolAlreadyInitialized);
    }
    Ok(pool)
}

/// Returns the global pool, building it with `build` (under the lock) if no
/// one has. A failed build leaves the pool unset (see the module's docs).
///
/// # Panics
///
/// If called on a thread that is building the global pool (by the user
/// code that build runs): the lock is this thread's already.
fn initialise(
    build: impl FnOnce() -> Result<ThreadPool, BuildError>,
) -> Result<&'static ThreadPool, BuildError> {
    if BUILDING.get() {
        panic!(
            "dreadpool: the global pool was used while this thread builds it \
             (by its spawner or thread-name function), which would wait for itself"
        );
    }
    let _only_builder = INIT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(pool) = GLOBAL_POOL.get() {
        return Ok(pool);
    }
    let pool = {
        let _building = Building::enter();
        build()?
    };
    // Only lock holders set the cell, and we checked it under the lock.
    if GLOBAL_POOL.set(pool).is_err() {
        unreachable!("the global pool is set only under INIT");
    }
    Ok(GLOBAL_POOL.get().expect("just set"))
}

/// Marks this thread as building the global pool until dropped (a panic in
/// the build included).
struct Building;

impl Building {
    fn enter() -> Self {
        BUILDING.set(true);
        Building
    }
}

impl Drop for Building {
    fn drop(&mut self) {
        BUILDING.set(false);
    }
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
