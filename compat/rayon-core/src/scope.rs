//! rayon's scopes, `Scope<'scope>` and `ScopeFifo<'scope>`, on dreadpool's.
//!
//! rayon's scope differs from dreadpool's in shape only: its spawned
//! closures are handed the scope (`FnOnce(&Scope<'scope>)`), so that they
//! can spawn more, and its `Scope` has one lifetime, that of the data the
//! tasks may borrow. Both wait for every task before returning, and
//! re-raise a panic only after every task ended.
//!
//! ## Soundness
//!
//! A rayon [`Scope`] is a local of [`run_scope`], created before dreadpool's
//! scope opens and dropped after it has closed. dreadpool's
//! `ThreadPool::scope` returns (or unwinds) only after every task spawned
//! on its scope has finished (its soundness argument is in
//! `dreadpool-core/src/scope.rs`). Every task this module spawns is spawned
//! on that dreadpool scope, so:
//!
//! - the pointer to the rayon `Scope` that each task carries (to hand to
//!   its closure) stays valid for as long as any task runs;
//! - the pointer to dreadpool's scope that the rayon `Scope` keeps is
//!   written before `op` sees the rayon `Scope`, and is only read by `op`
//!   and by tasks, all of which end before dreadpool's scope (which lives in
//!   `ThreadPool::scope`'s frame) goes away;
//! - `op` and the tasks are handed `&Scope<'scope>` for a borrow they
//!   cannot keep (higher-ranked in their signatures), so nobody reaches the
//!   rayon `Scope` after [`run_scope`] returns;
//! - a task's closure borrows only data that outlives `'scope`, and it ends
//!   before the dreadpool scope does, which ends before `'scope` can.
//!
//! [`Scope`] and [`ScopeFifo`] are invariant in `'scope`, as rayon's are.

use crate::broadcast::BroadcastContext;
use std::fmt;
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

/// A scope for spawning tasks that may borrow data outliving `'scope`,
/// made by [`scope`] or [`in_place_scope`]; each task is handed the scope,
/// so that it can spawn more.
///
/// ```
/// let mut totals = [0u64; 2];
/// let data: Vec<u64> = (1..=100).collect();
/// let (left, right) = totals.split_at_mut(1);
/// rayon_core::scope(|s| {
///     s.spawn(|_| left[0] = data[..50].iter().sum());
///     s.spawn(|s| {
///         // A task may spawn more on the same scope.
///         s.spawn(|_| right[0] = data[50..].iter().sum());
///     });
/// });
/// assert_eq!(totals[0] + totals[1], 5050);
/// ```
///
/// What makes it sound is checked by the compiler, as with rayon's: a task
/// cannot borrow what dies before the scope ends,
///
/// ```compile_fail,E0373
/// fn spawn_with_a_local<F: FnOnce(&i32) + Send>(f: F) {
///     rayon_core::scope(|s| {
///         let local = 22;
///         s.spawn(|_| f(&local)); // `local` dies before the scope's tasks
///     });
/// }
/// ```
///
/// captures must be `Send`,
///
/// ```compile_fail,E0277
/// let rc = std::rc::Rc::new(1);
/// rayon_core::scope(|s| s.spawn(|_| println!("{rc}")));
/// ```
///
/// and the scope cannot be kept past its end:
///
/// ```compile_fail,E0521
/// let mut kept = None;
/// rayon_core::in_place_scope(|s| kept = Some(s));
/// ```
pub struct Scope<'scope> {
    base: ScopeBase<'scope>,
}

/// A scope whose tasks start in FIFO order, per spawning thread, made by
/// [`scope_fifo`] or [`in_place_scope_fifo`].
///
/// ```
/// use std::sync::Mutex;
///
/// let order = Mutex::new(Vec::new());
/// rayon_core::ThreadPoolBuilder::new()
///     .num_threads(1)
///     .build()
///     .unwrap()
///     .scope_fifo(|s| {
///         for i in 0..4 {
///             let order = &order;
///             s.spawn_fifo(move |_| order.lock().unwrap().push(i));
///         }
///     });
/// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3]);
/// ```
pub struct ScopeFifo<'scope> {
    base: ScopeBase<'scope>,
}

/// The kind of closure a scope holds, for its marker.
type ScopedTask<'scope> = Box<dyn FnOnce(&Scope<'scope>) + Send + Sync + 'scope>;

/// What both kinds of scope hold.
struct ScopeBase<'scope> {
    /// dreadpool's scope, a `dreadpool::Scope<'_, 'scope>` with its first
    /// lifetime erased; set by [`run_scope`] before anyone reads it.
    core: AtomicPtr<()>,
    /// The pool the scope spawns into, for `spawn_broadcast`.
    pool: dreadpool::Handle,
    /// Invariant in `'scope`, and `Send + Sync`, as rayon's scopes are.
    marker: PhantomData<ScopedTask<'scope>>,
}

impl<'scope> ScopeBase<'scope> {
    fn new(pool: &dreadpool::ThreadPool) -> Self {
        ScopeBase {
            core: AtomicPtr::new(ptr::null_mut()),
            pool: pool.handle(),
            marker: PhantomData,
        }
    }

    fn open(&self, core: &dreadpool::Scope<'_, 'scope>) {
        let core: *const dreadpool::Scope<'_, 'scope> = core;
        // Release, paired with the Acquire in `core`: the tasks that read it
        // were spawned after this store anyway, so this is belt and braces.
        self.core.store(core as *mut (), Ordering::Release);
    }

    /// dreadpool's scope, to spawn on.
    fn core(&self) -> &'scope dreadpool::Scope<'scope, 'scope> {
        let core = self.core.load(Ordering::Acquire) as *const dreadpool::Scope<'scope, 'scope>;
        assert!(!core.is_null(), "a scope is used before it opened");
        // SAFETY: set by `open` to dreadpool's scope before `op` or any task
        // can call this, and that scope outlives every caller (module
        // docs). The lifetime given to the reference is longer than the
        // scope object's, but it is only used to spawn tasks, which that
        // scope waits for before it goes away.
        unsafe { &*core }
    }
}

/// A raw pointer to a scope that a task carries, to hand the scope to its
/// closure.
struct ScopePtr<T>(*const T);

// SAFETY: the pointee is `Sync` (shared `&T` across threads is what the
// task does with it), and it outlives the task (module docs).
unsafe impl<T: Sync> Send for ScopePtr<T> {}

impl<T> ScopePtr<T> {
    /// # Safety
    ///
    /// The scope must still be alive: true inside its tasks (module docs).
    unsafe fn get(&self) -> &T {
        // SAFETY: passed on from the caller.
        unsafe { &*self.0 }
    }
}

/// Creates a scope whose tasks run on the current pool (the global pool
/// outside every pool), runs `op` on one of that pool's threads, and
/// returns once `op` and every task spawned on the scope have finished.
///
/// # Panics
///
/// If `op` or any task panics, the panic is re-raised after all of them
/// have finished (`op`'s, if it panicked, else the first task's).
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    crate::in_worker(|| in_place_scope(op))
}

/// [`scope`], with tasks started in FIFO order (see [`ScopeFifo`]).
pub fn scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
    R: Send,
{
    crate::in_worker(|| in_place_scope_fifo(op))
}

/// Like [`scope`], but `op` runs on the calling thread, which may be any
/// thread; the tasks run on the current pool (the global pool outside
/// every pool). As `op` does not move, it need not be `Send`.
///
/// ```
/// let local = std::rc::Rc::new(5); // not Send
/// let mut doubled = 0;
/// rayon_core::in_place_scope(|s| {
///     let five = *local;
///     let doubled = &mut doubled;
///     s.spawn(move |_| *doubled = five * 2);
/// });
/// assert_eq!(doubled, 10);
/// ```
pub fn in_place_scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    let pool = crate::membership::current_pool();
    run_scope(&pool, op)
}

/// [`in_place_scope`], with tasks started in FIFO order.
pub fn in_place_scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    let pool = crate::membership::current_pool();
    run_scope_fifo(&pool, op)
}

/// Runs `op` on the calling thread with a [`Scope`] whose tasks go to `pool`.
pub(crate) fn run_scope<'scope, OP, R>(pool: &dreadpool::ThreadPool, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    let scope = Scope {
        base: ScopeBase::new(pool),
    };
    pool.scope(|core: &dreadpool::Scope<'_, 'scope>| {
        scope.base.open(core);
        op(&scope)
    })
}

/// Runs `op` on the calling thread with a [`ScopeFifo`] whose tasks go to
/// `pool`.
pub(crate) fn run_scope_fifo<'scope, OP, R>(pool: &dreadpool::ThreadPool, op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    let scope = ScopeFifo {
        base: ScopeBase::new(pool),
    };
    pool.scope(|core: &dreadpool::Scope<'_, 'scope>| {
        scope.base.open(core);
        op(&scope)
    })
}

impl<'scope> Scope<'scope> {
    /// Spawns `body` into the scope's pool; the scope ends only after it
    /// has. `body` is handed the scope, to spawn more tasks on it.
    pub fn spawn<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        let this = ScopePtr(self as *const Scope<'scope>);
        self.base.core().spawn(move || {
            // SAFETY: this task runs inside the scope (module docs).
            body(unsafe { this.get() })
        });
    }

    /// Runs `body` once on every thread of the scope's pool, as part of the
    /// scope: the scope ends only after every call has.
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&Scope<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        let this = ScopePtr(self as *const Scope<'scope>);
        let pool = self.base.pool.clone();
        self.base.core().spawn(move || {
            // SAFETY: this task runs inside the scope (module docs).
            let scope = unsafe { this.get() };
            broadcast_within(&pool, |context| body(scope, context));
        });
    }
}

impl<'scope> ScopeFifo<'scope> {
    /// Spawns `body` into the scope's pool, in FIFO order with the calling
    /// thread's other FIFO spawns; the scope ends only after it has.
    pub fn spawn_fifo<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&ScopeFifo<'scope>) + Send + 'scope,
    {
        let this = ScopePtr(self as *const ScopeFifo<'scope>);
        self.base.core().spawn_fifo(move || {
            // SAFETY: this task runs inside the scope (module docs).
            body(unsafe { this.get() })
        });
    }

    /// Runs `body` once on every thread of the scope's pool, as part of the
    /// scope.
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&ScopeFifo<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        let this = ScopePtr(self as *const ScopeFifo<'scope>);
        let pool = self.base.pool.clone();
        self.base.core().spawn_fifo(move || {
            // SAFETY: this task runs inside the scope (module docs).
            let scope = unsafe { this.get() };
            broadcast_within(&pool, |context| body(scope, context));
        });
    }
}

/// A scope's broadcast: one of its tasks runs a blocking broadcast on the
/// scope's pool, so the scope waits for every call (and gets the first
/// panic) through that one task.
fn broadcast_within(pool: &dreadpool::Handle, body: impl Fn(BroadcastContext<'_>) + Sync) {
    let threads = pool.threads();
    pool.broadcast(|index| body(BroadcastContext::new(index, threads)));
}

impl fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("pool", &self.base.pool)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for ScopeFifo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopeFifo")
            .field("pool", &self.base.pool)
            .finish_non_exhaustive()
    }
}
