//! rayon's `join` and `join_context`, on dreadpool's.

use std::marker::PhantomData;

/// What a closure run by [`join_context`] is told about where it runs.
#[derive(Debug)]
pub struct FnContext {
    migrated: bool,
    /// Neither `Send` nor `Sync`, as rayon's is: it describes one call.
    _marker: PhantomData<*mut ()>,
}

impl FnContext {
    fn new(context: dreadpool::FnContext) -> Self {
        FnContext {
            migrated: context.migrated(),
            _marker: PhantomData,
        }
    }

    /// True when the closure runs on another thread than the one that
    /// called [`join_context`]: its half was stolen by another worker, or
    /// the call came from outside every pool and both halves were moved
    /// onto the global pool.
    #[inline]
    pub fn migrated(&self) -> bool {
        self.migrated
    }
}

/// Runs `oper_a` and `oper_b`, potentially in parallel, and returns both
/// results. Both may borrow from the caller. Outside every pool, the pair
/// runs on the global pool while the caller waits.
///
/// ```
/// fn fib(n: u64) -> u64 {
///     if n < 2 {
///         return n;
///     }
///     let (a, b) = rayon_core::join(|| fib(n - 1), || fib(n - 2));
///     a + b
/// }
/// assert_eq!(fib(20), 6765);
/// ```
///
/// The halves must not share a mutable borrow, and what they return must
/// be `Send`:
///
/// ```compile_fail,E0524
/// let mut v = vec![3, 1, 2];
/// rayon_core::join(|| v.sort(), || v.reverse());
/// ```
///
/// ```compile_fail,E0277
/// rayon_core::join(|| std::rc::Rc::new(22), || ());
/// ```
///
/// # Panics
///
/// Both closures run to completion, whichever panics; then the panic is
/// re-raised (`oper_a`'s if both panicked), as in rayon.
pub fn join<A, B, RA, RB>(oper_a: A, oper_b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    join_context(|_| oper_a(), |_| oper_b())
}

/// [`join`], with each closure told in a [`FnContext`] whether it
/// migrated to another thread.
///
/// ```
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// let (a, _b) = pool.install(|| rayon_core::join_context(|c| c.migrated(), |c| c.migrated()));
/// assert!(!a, "the first half runs on the caller's thread");
/// ```
pub fn join_context<A, B, RA, RB>(oper_a: A, oper_b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    if dreadpool::current_worker_index().is_none() {
        // dreadpool's join runs on its global pool: make sure that pool is
        // built the rayon way (`global.rs`).
        crate::global::pool();
    }
    dreadpool::join_context(
        |context| oper_a(FnContext::new(context)),
        |context| oper_b(FnContext::new(context)),
    )
}
