//! rayon's `ThreadPool`: a dreadpool pool, dropped the rayon way.

use crate::broadcast::BroadcastContext;
use crate::builder::ThreadPoolBuilder;
use crate::membership::Seat;
use crate::scope::{run_scope, run_scope_fifo, Scope, ScopeFifo};
use crate::thread_spawn::ThreadSpawn;
use crate::Yield;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

/// A pool of worker threads, with rayon's methods.
///
/// Dropping it does not wait: the pool stops taking work from outside, its
/// workers run everything already queued (and whatever that spawns), then
/// exit on their own, as rayon's do.
///
/// ```
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// let (a, b) = pool.join(|| 1 + 1, || 2 + 2);
/// assert_eq!((a, b), (2, 4));
/// assert_eq!(pool.install(rayon_core::current_thread_index).map(|i| i < 2), Some(true));
/// ```
pub struct ThreadPool {
    pool: Arc<DetachOnDrop>,
}

/// The dreadpool pool behind a [`ThreadPool`], shut down without waiting
/// (`shutdown_detached`) when the last reference goes. Workers reach it
/// through a weak reference (`membership.rs`) and may hold it for the
/// length of a scope; the last of those to let go shuts it down, from
/// inside its own task, which dreadpool also does without waiting.
pub(crate) struct DetachOnDrop(Option<dreadpool::ThreadPool>);

impl Deref for DetachOnDrop {
    type Target = dreadpool::ThreadPool;

    fn deref(&self) -> &dreadpool::ThreadPool {
        match &self.0 {
            Some(pool) => pool,
            // Only `drop` takes it, and nothing derefs after that.
            None => unreachable!("a pool is used after its drop"),
        }
    }
}

impl Drop for DetachOnDrop {
    fn drop(&mut self) {
        if let Some(pool) = self.0.take() {
            pool.shutdown_detached();
            // A thread made worker 0 by `use_current_thread` stops being a
            // worker when it shuts its pool down outside its own waits (the
            // core vacates the seat): it then forgets its pool too, so that
            // no stale record outlives the seat. Only a thread that is no
            // pool's worker now forgets, so worker threads keep theirs.
            if dreadpool::current_worker_index().is_none() {
                crate::membership::leave();
            }
        }
    }
}

impl ThreadPool {
    pub(crate) fn build<S: ThreadSpawn>(
        builder: ThreadPoolBuilder<S>,
    ) -> Result<ThreadPool, ThreadPoolBuildError> {
        let slot = Arc::new(OnceLock::new());
        let core = builder.start(Seat::Owned(Arc::clone(&slot)))?;
        let pool = Arc::new(DetachOnDrop(Some(core)));
        // Before `build` returns, so before any task can run on the pool
        // and look for it (`membership::current_pool`).
        let _ = slot.set(Arc::downgrade(&pool));
        Ok(ThreadPool { pool })
    }

    /// Builds a pool from a [`Configuration`](crate::Configuration) (rayon's
    /// old way).
    #[deprecated(note = "Use `ThreadPoolBuilder::build`")]
    #[allow(deprecated)]
    pub fn new(
        configuration: crate::Configuration,
    ) -> Result<ThreadPool, Box<dyn std::error::Error>> {
        configuration.into_builder().build().map_err(Box::from)
    }

    /// Runs `op` on one of this pool's threads and returns its result;
    /// inside, [`join`](crate::join), [`scope`](crate::scope),
    /// [`spawn`](crate::spawn) and the other free functions use this pool.
    /// From one of this pool's own threads, `op` runs right there. A panic
    /// in `op` is re-raised here.
    pub fn install<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        self.pool.install(op)
    }

    /// Runs `op` once on every thread of the pool, and returns the results
    /// in thread index order. A panic in any call is re-raised here, after
    /// all of them ended.
    ///
    /// ```
    /// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// let seen = pool.broadcast(|context| (context.index(), context.num_threads()));
    /// assert_eq!(seen, [(0, 3), (1, 3), (2, 3)]);
    /// ```
    pub fn broadcast<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(BroadcastContext<'_>) -> R + Sync,
        R: Send,
    {
        let threads = self.pool.threads();
        self.pool
            .broadcast(|index| op(BroadcastContext::new(index, threads)))
    }

    /// The number of threads of this pool.
    #[inline]
    pub fn current_num_threads(&self) -> usize {
        self.pool.threads()
    }

    /// The index of the calling thread in this pool, or `None` if it is not
    /// one of this pool's threads.
    #[inline]
    pub fn current_thread_index(&self) -> Option<usize> {
        self.pool.current_worker_index()
    }

    /// Whether the calling thread, one of this pool's, has tasks of its own
    /// queued; `None` on any other thread.
    #[inline]
    pub fn current_thread_has_pending_tasks(&self) -> Option<bool> {
        self.current_thread_index()?;
        dreadpool::current_thread_has_pending_tasks()
    }

    /// [`join`](crate::join) in this pool.
    pub fn join<A, B, RA, RB>(&self, oper_a: A, oper_b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.install(|| crate::join(oper_a, oper_b))
    }

    /// [`scope`](crate::scope) in this pool: `op` runs on one of its threads.
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| run_scope(&self.pool, op))
    }

    /// [`scope_fifo`](crate::scope_fifo) in this pool.
    pub fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| run_scope_fifo(&self.pool, op))
    }

    /// [`in_place_scope`](crate::in_place_scope) whose tasks go to this
    /// pool: `op` runs on the calling thread.
    pub fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        run_scope(&self.pool, op)
    }

    /// [`in_place_scope_fifo`](crate::in_place_scope_fifo) whose tasks go
    /// to this pool.
    pub fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R,
    {
        run_scope_fifo(&self.pool, op)
    }

    /// Runs `op` on this pool, in the background. A panic in it goes to the
    /// pool's panic handler, or aborts the process if it has none.
    pub fn spawn<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        self.pool.spawn(op);
    }

    /// Like [`spawn`](Self::spawn), in FIFO order with the calling thread's
    /// other FIFO spawns.
    pub fn spawn_fifo<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        self.pool.spawn_fifo(op);
    }

    /// Runs `op` once on every thread of the pool, in the background.
    pub fn spawn_broadcast<OP>(&self, op: OP)
    where
        OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
    {
        let threads = self.pool.threads();
        self.pool
            .spawn_broadcast(move |index| op(BroadcastContext::new(index, threads)));
    }

    /// [`yield_now`](crate::yield_now), if the calling thread is one of this
    /// pool's; `None` otherwise.
    pub fn yield_now(&self) -> Option<Yield> {
        self.current_thread_index()?;
        crate::yield_now()
    }

    /// [`yield_local`](crate::yield_local), if the calling thread is one of
    /// this pool's; `None` otherwise.
    pub fn yield_local(&self) -> Option<Yield> {
        self.current_thread_index()?;
        crate::yield_local()
    }
}

impl fmt::Debug for ThreadPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPool")
            .field("num_threads", &self.current_num_threads())
            .field("pool", &**self.pool)
            .finish()
    }
}

use crate::ThreadPoolBuildError;
