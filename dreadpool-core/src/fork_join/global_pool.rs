//! The default pool that [`join`](crate::join) runs on when called outside
//! every pool.

use crate::{ThreadPool, ThreadPoolBuilder};
use std::sync::OnceLock;

/// The name of the default pool's threads (`"dreadpool-global-{i}"`).
pub(crate) const GLOBAL_POOL_NAME: &str = "dreadpool-global";

static GLOBAL_POOL: OnceLock<ThreadPool> = OnceLock::new();

/// The default pool, started on first use with one thread per CPU this
/// process may use (or `DREADPOOL_THREADS`). It is never shut down: its
/// threads sleep when it has no work.
///
/// # Panics
///
/// If the pool cannot be built; every later call panics the same way.
pub(crate) fn get() -> &'static ThreadPool {
    GLOBAL_POOL.get_or_init(|| {
        match ThreadPoolBuilder::new()
            .with_thread_name(GLOBAL_POOL_NAME)
            .try_build()
        {
            Ok(pool) => pool,
            Err(error) => panic!("dreadpool: the default pool for join() could not start: {error}"),
        }
    })
}
