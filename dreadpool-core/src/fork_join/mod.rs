//! Fork-join: [`join`] two closures that may borrow from the caller's stack,
//! and [`ThreadPool::install`](crate::ThreadPool::install) a closure on a
//! pool. The design, and the argument that no fork is lost, run twice or
//! outlives its frame, is in `README.md` beside this file.

mod fork_latch;
mod forks;
mod global_pool;
mod install;
mod job;
mod join;
mod sharing;

pub(crate) use fork_latch::ForkLatch;
pub(crate) use forks::SharedForks;
pub(crate) use global_pool::build_global;
pub use global_pool::global_pool;
pub(crate) use install::install;
pub(crate) use sharing::{steal_fork, ForkSharing};

/// What a closure run by [`join_context`] is told about where it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FnContext {
    migrated: bool,
}

impl FnContext {
    pub(crate) fn new(migrated: bool) -> Self {
        FnContext { migrated }
    }

    /// True when the closure runs on another thread than the one that
    /// called [`join_context`] (its half was stolen, or the call came from
    /// outside every pool and was moved onto one). A closure that migrated
    /// starts with cold caches: a recursive algorithm may split its work
    /// more finely there.
    pub fn migrated(&self) -> bool {
        self.migrated
    }
}

/// Runs `a` and `b`, potentially in parallel, and returns both results.
///
/// Both closures may borrow from the caller's stack. Inside a task of any
/// pool, `a` runs at once on the calling worker and `b` waits where an idle
/// worker of the same pool can take it; if nobody does, the caller runs `b`
/// itself right after `a`, with no allocation and no atomic read-modify-write
/// (the design is in `src/fork_join/README.md`). Called outside every pool,
/// the pair runs on a default pool that starts on first use, sized like
/// [`with_threads(0)`](crate::ThreadPoolBuilder::with_threads) (one thread
/// per CPU this process may use, or `DREADPOOL_THREADS`), and the caller
/// blocks until both are done.
///
/// ```
/// fn fib(n: u64) -> u64 {
///     if n < 2 {
///         return n;
///     }
///     let (a, b) = dreadpool::join(|| fib(n - 1), || fib(n - 2));
///     a + b
/// }
/// let pool = dreadpool::ThreadPoolBuilder::new().with_threads(2).build();
/// assert_eq!(pool.install(|| fib(20)), 6765);
/// ```
///
/// Borrowing: the two halves of a slice, sorted in parallel.
///
/// ```
/// let mut v = vec![5, 3, 9, 1, 7, 2];
/// let (left, right) = v.split_at_mut(3);
/// dreadpool::join(|| left.sort(), || right.sort());
/// assert_eq!(v, [3, 5, 9, 1, 2, 7]);
/// ```
///
/// # Panics
///
/// Both closures always run to completion, whichever panics. A panic is
/// re-raised only after both have finished; if both panic, `a`'s payload
/// is the one re-raised (`b`'s is dropped). Outside every pool, panics if
/// the default pool cannot be started (for example `DREADPOOL_THREADS` set
/// to garbage, or the OS refusing its threads), with the build error's
/// message.
#[track_caller]
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    join_context(|_| a(), |_| b())
}

/// [`join`], with each closure told in a [`FnContext`] whether it migrated
/// to another thread.
///
/// ```
/// let pool = dreadpool::ThreadPoolBuilder::new().with_threads(2).build();
/// let (a, b) = pool.install(|| {
///     dreadpool::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated())
/// });
/// assert!(!a, "the caller's own half never migrates");
/// let _ = b; // true only if another worker took it
/// ```
///
/// # Panics
///
/// As [`join`].
#[track_caller]
pub fn join_context<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    let worker = crate::worker::current_ptr();
    if worker.is_null() {
        return join_outside(a, b);
    }
    // SAFETY: non-null: this thread is a worker, inside one of its tasks,
    // which the worker outlives.
    join::join_on_worker(unsafe { &*worker }, a, b, std::panic::Location::caller())
}

/// A join called outside every pool: the pair runs on the default pool,
/// both halves counting as migrated (they run on other threads).
///
/// `#[track_caller]` down from `join`: the default pool's task records the
/// join's caller as its spawn site, and so does the fork if it is shared.
/// (A join on a worker spawns nothing: a fork it shares is recorded as
/// `ForkShared`, with the join's caller as its site.)
#[cold]
#[inline(never)]
#[track_caller]
fn join_outside<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    let site = std::panic::Location::caller();
    global_pool::global_pool().install(|| {
        // (Not `join_context` again: that would instantiate this function
        // for ever-new closure types.)
        crate::worker::with_current(|worker| {
            join::join_on_worker(
                worker,
                |_| a(FnContext::new(true)),
                |_| b(FnContext::new(true)),
                site,
            )
        })
    })
}
