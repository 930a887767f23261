//! The builder's way to the global pool: [`build_global`] on the pool's own
//! threads, [`build_global_with_spawner`] on threads the user starts. Both
//! go through `fork_join/global_pool.rs`, which lets exactly one initialiser
//! of the process build, and sets the pool only once a build succeeded.
//!
//! [`build_global`]: ThreadPoolBuilder::build_global
//! [`build_global_with_spawner`]: ThreadPoolBuilder::build_global_with_spawner

use super::ThreadPoolBuilder;
use crate::error::BuildError;
use crate::worker_start::WorkerStart;

impl ThreadPoolBuilder {
    /// Configures and starts the global pool (the one [`join`](crate::join)
    /// outside every pool runs on, and [`global_pool`](crate::global_pool)
    /// returns), once. It succeeds only before the global pool's first use:
    /// after that it returns
    /// [`BuildError::GlobalPoolAlreadyInitialized`], leaves the pool as it
    /// is and starts no thread. Of racing calls exactly one succeeds. A
    /// failed build leaves the global pool unset, for a later call to set.
    ///
    /// ```
    /// use dreadpool::{BuildError, ThreadPoolBuilder};
    ///
    /// ThreadPoolBuilder::new().with_threads(2).build_global().unwrap();
    /// assert_eq!(dreadpool::global_pool().threads(), 2);
    /// let again = ThreadPoolBuilder::new().with_threads(3).build_global();
    /// assert!(matches!(again, Err(BuildError::GlobalPoolAlreadyInitialized)));
    /// ```
    ///
    /// # Panics
    ///
    /// If the builder's own code (a [thread-name
    /// function](Self::with_thread_names)) uses the global pool while it is
    /// being built, on the building thread: that would wait for itself.
    pub fn build_global(self) -> Result<(), BuildError> {
        crate::fork_join::build_global(|| self.try_build()).map(|_| ())
    }

    /// Configures and starts the global pool, as
    /// [`build_global`](Self::build_global) does, on worker threads that
    /// `spawner` starts, as [`try_build_with_spawner`](Self::try_build_with_spawner)
    /// does (rayon's `build_global` with a `spawn_handler`): `spawner` is
    /// called once per worker the pool needs started, in index order, with
    /// a [`WorkerStart`] that it must [`run`](WorkerStart::run) on a new
    /// thread.
    ///
    /// The global pool is never dropped, so its threads run for the rest of
    /// the process: they cannot be scoped threads whose scope must end.
    /// Such a pool starts no replacement threads (see
    /// [`try_build_with_spawner`](Self::try_build_with_spawner)).
    ///
    /// Once the global pool exists (configured, or started by its first
    /// use), this returns [`BuildError::GlobalPoolAlreadyInitialized`]
    /// without calling `spawner`. If `spawner` returns an error for worker
    /// `i`, the workers already started are shut down and joined, this
    /// returns [`BuildError::Spawn`] for index `i`, and the global pool is
    /// left unset: a later `build_global` (or the first use, with the
    /// defaults) builds it.
    ///
    /// `spawner` runs while the global pool is being built, on the calling
    /// thread, so it must not use the global pool itself (a
    /// [`join`](crate::join) outside every pool, [`global_pool`](crate::global_pool)),
    /// nor wait for a thread that does: other threads that use it wait for
    /// the build to end.
    ///
    /// ```
    /// use dreadpool::{BuildError, ThreadPoolBuilder};
    ///
    /// let mut spawned = 0;
    /// ThreadPoolBuilder::new()
    ///     .with_threads(2)
    ///     .build_global_with_spawner(|worker| {
    ///         spawned += 1;
    ///         std::thread::Builder::new()
    ///             .name(format!("mine-{}", worker.index()))
    ///             .spawn(move || worker.run())?;
    ///         Ok(())
    ///     })
    ///     .unwrap();
    /// assert_eq!(spawned, 2);
    /// let names = dreadpool::global_pool()
    ///     .broadcast(|_| std::thread::current().name().map(str::to_owned));
    /// assert_eq!(names, [Some("mine-0".to_owned()), Some("mine-1".to_owned())]);
    ///
    /// let again = ThreadPoolBuilder::new().build_global_with_spawner(|_| unreachable!());
    /// assert!(matches!(again, Err(BuildError::GlobalPoolAlreadyInitialized)));
    /// ```
    ///
    /// # Panics
    ///
    /// If `spawner` (or a [thread-name function](Self::with_thread_names))
    /// uses the global pool on the building thread while it is being built:
    /// that would wait for itself.
    pub fn build_global_with_spawner<S>(self, spawner: S) -> Result<(), BuildError>
    where
        S: FnMut(WorkerStart) -> std::io::Result<()>,
    {
        crate::fork_join::build_global(|| self.try_build_with_spawner(spawner)).map(|_| ())
    }
}
