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

#[cfg(all(test, feature = "recorder"))]
mod tests {
    use crate::{EventKind, RecordLevel};

    /// A join outside every pool runs as the default pool's task, whose
    /// site is the join's caller (`#[track_caller]` through `join_outside`
    /// and `install`). Other tests may join on the default pool meanwhile:
    /// their tasks have other lines.
    #[test]
    fn a_join_outside_every_pool_records_its_callers_line() {
        let pool = super::get();
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
