//! The global pool: dreadpool's own global pool, configured the rayon way.
//!
//! This crate and plain `dreadpool` share one global pool (so that
//! `dreadpool::join` and `rayon::join` outside every pool run on the same
//! threads). rayon sizes its global pool by `RAYON_NUM_THREADS`, dreadpool
//! by `DREADPOOL_THREADS`; so that the rayon way wins, every function of
//! this crate that may land on the global pool calls [`pool`] first, which
//! builds it with this crate's defaults unless it exists already.
//!
//! dreadpool's `build_global` lets exactly one of racing initialisers
//! build; the others get `GlobalPoolAlreadyInitialized`, which here means
//! "use the one that is there". So [`build`] is the one place this crate
//! creates the global pool, and the observability hook is called there,
//! once, by whoever built it.

use crate::error::ThreadPoolBuildError;
use crate::membership::Seat;
use crate::thread_spawn::ThreadSpawn;
use crate::ThreadPoolBuilder;
use std::sync::OnceLock;

/// Set once the global pool is known to exist, so that [`pool`] costs one
/// load after the first call.
static READY: OnceLock<&'static dreadpool::ThreadPool> = OnceLock::new();

/// The global pool, built with rayon's defaults if nothing has built it.
///
/// # Panics
///
/// If the global pool does not exist and cannot be built (the OS refusing
/// its threads), as rayon does.
pub(crate) fn pool() -> &'static dreadpool::ThreadPool {
    if let Some(pool) = READY.get() {
        return pool;
    }
    match build(ThreadPoolBuilder::new()) {
        Ok(()) => {}
        Err(error) if error.is_global_pool_already_initialized() => {}
        Err(error) => panic!("The global thread pool has not been initialized.: {error}"),
    }
    READY.get_or_init(dreadpool::global_pool)
}

/// [`ThreadPoolBuilder::build_global`]: configures and starts the global
/// pool, unless it exists.
pub(crate) fn build<S: ThreadSpawn>(
    builder: ThreadPoolBuilder<S>,
) -> Result<(), ThreadPoolBuildError> {
    builder.into_parts(Seat::Global)?.start_global()?;
    let pool = dreadpool::global_pool();
    let _ = READY.set(pool);
    crate::observe::from_env(pool);
    Ok(())
}
