//! rayon's `broadcast`, `spawn_broadcast` and their `BroadcastContext`.

use std::fmt;
use std::marker::PhantomData;

/// Where a broadcast call runs: which thread of how many.
pub struct BroadcastContext<'a> {
    index: usize,
    num_threads: usize,
    /// Tied to the call, and neither `Send` nor `Sync`, as rayon's is.
    _marker: PhantomData<&'a mut dyn Fn()>,
}

impl BroadcastContext<'_> {
    pub(crate) fn new(index: usize, num_threads: usize) -> Self {
        BroadcastContext {
            index,
            num_threads,
            _marker: PhantomData,
        }
    }

    /// The index of the thread running this call, within `0..num_threads()`.
    #[inline]
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of threads the broadcast runs on: the pool's.
    #[inline]
    pub fn num_threads(&self) -> usize {
        self.num_threads
    }
}

impl fmt::Debug for BroadcastContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BroadcastContext")
            .field("index", &self.index)
            .field("num_threads", &self.num_threads)
            .finish()
    }
}

/// Runs `op` once on every thread of the current pool (the global pool
/// outside every pool), and returns the results in thread index order. A
/// panic in any call is re-raised after all of them ended.
///
/// ```
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// let indices = pool.install(|| rayon_core::broadcast(|context| context.index()));
/// assert_eq!(indices, [0, 1]);
/// ```
pub fn broadcast<OP, R>(op: OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    let pool = match dreadpool::current() {
        Some(pool) => pool,
        None => crate::global::pool().handle(),
    };
    let threads = pool.threads();
    pool.broadcast(|index| op(BroadcastContext::new(index, threads)))
}

/// Runs `op` once on every thread of the current pool (the global pool
/// outside every pool), in the background.
pub fn spawn_broadcast<OP>(op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    let pool = match dreadpool::current() {
        Some(pool) => pool,
        None => crate::global::pool().handle(),
    };
    let threads = pool.threads();
    pool.spawn_broadcast(move |index| op(BroadcastContext::new(index, threads)));
}
