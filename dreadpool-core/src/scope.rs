//! Scoped tasks: spawn closures that borrow from the caller's stack.
//!
//! ## Soundness
//!
//! This is the one place where the type system no longer protects the user:
//! a scoped closure may borrow anything that outlives `'scope`, yet it is
//! handed to worker threads as a `'static` task (see `erase_lifetime`). It is
//! sound because **[`ThreadPool::scope`](crate::ThreadPool::scope) does not
//! return, and does not unwind, until every task spawned on the scope has
//! finished with everything it borrowed**:
//!
//! - Every `Scope::spawn` increments `pending` *before* the task exists, and
//!   the task decrements it as its very last act, after its closure was
//!   consumed: the closure runs inside `catch_unwind`, so its captures are
//!   dropped (by the closure or by the unwinding) before the decrement, even
//!   when it panics. Nothing the task does after the decrement touches a
//!   borrow; it only drops its `Arc<ScopeState>`, which is `'static`.
//! - `pending` starts at one, for the scope body. `scope` runs the body in
//!   `catch_unwind`, so a panicking body does not skip the wait; then it
//!   drops the body's count and waits on the latch that the decrement to zero
//!   sets. Nested spawns happen from inside scoped tasks, whose own counts
//!   keep `pending` above zero until the nested count is added.
//! - The wait itself cannot unwind (it runs other tasks inside
//!   `catch_unwind` and contains every call into foreign code); should an
//!   internal bug ever make it unwind, a guard aborts the process rather than
//!   let borrowed data die under running tasks.
//! - A task the pool refuses (the pool shut down and the caller is outside
//!   it) is not dropped unrun: it runs right there on the calling thread, so
//!   its count is still taken back.
//! - The user cannot leak the scope to skip the wait: `scope` owns the
//!   `Scope` and lends it only as `&'scope Scope`, and the invariant
//!   lifetimes (as in `std::thread::scope`) stop a borrow from being
//!   stretched.
//!
//! The latch and the state live in an `Arc` rather than on `scope`'s stack
//! because the finishing task still touches the latch after the waiter may
//! already have seen it set and returned: the last task takes a strong count
//! before it sets the latch (the others hold only a pointer, see
//! `ScopeState::task`).

use crate::latch::Latch;
use crate::panic::{drop_payload, PanicPayload};
use crate::registry::Registry;
use crate::sync::atomic::{AtomicUsize, Ordering};
use crate::sync::{lock, Arc, Mutex};
use crate::task::Task;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// A scope to spawn tasks that borrow from the caller, made by
/// [`ThreadPool::scope`](crate::ThreadPool::scope).
///
/// ```
/// let pool = dreadpool::ThreadPoolBuilder::new().with_threads(2).build();
/// let mut halves = [0u64; 2];
/// let data: Vec<u64> = (1..=100).collect();
/// let (left, right) = halves.split_at_mut(1);
/// pool.scope(|s| {
///     s.spawn(|| left[0] = data[..50].iter().sum());
///     s.spawn(|| right[0] = data[50..].iter().sum());
/// });
/// assert_eq!(halves[0] + halves[1], 5050);
/// ```
///
/// Borrows must outlive the scope:
///
/// ```compile_fail,E0373
/// let pool = dreadpool::ThreadPoolBuilder::new().build();
/// pool.scope(|s| {
///     let short_lived = vec![1, 2, 3];
///     s.spawn(|| println!("{:?}", short_lived)); // `short_lived` dies before the scope ends
/// });
/// ```
///
/// and captures must be `Send`:
///
/// ```compile_fail,E0277
/// let pool = dreadpool::ThreadPoolBuilder::new().build();
/// let rc = std::rc::Rc::new(1);
/// pool.scope(|s| {
///     s.spawn(|| println!("{}", rc)); // `Rc` cannot be shared between threads
/// });
/// ```
pub struct Scope<'scope, 'env: 'scope> {
    state: Arc<ScopeState>,
    registry: &'scope Registry,
    // Invariant lifetimes, exactly as `std::thread::Scope`: neither can be
    // shortened or lengthened by the caller.
    scope: PhantomData<&'scope mut &'scope ()>,
    env: PhantomData<&'env mut &'env ()>,
}

/// The part of a scope its tasks share.
pub(crate) struct ScopeState {
    /// Tasks not yet finished, plus one for the scope body until it returns.
    pending: AtomicUsize,
    /// Set when `pending` reaches zero.
    done: Latch,
    /// The first task panic, re-raised by `scope`.
    panic: Mutex<Option<PanicPayload>>,
}

impl ScopeState {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(ScopeState {
            pending: AtomicUsize::new(1),
            done: Latch::new(),
            panic: Mutex::new(None),
        })
    }

    /// Counts a task about to be spawned.
    pub(crate) fn add_task(&self) {
        // Relaxed: the spawner's own count (a running task or the body) keeps
        // `pending` above zero until this is done; the decrement is AcqRel.
        self.pending.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one task (or the body) as finished.
    pub(crate) fn finish_one(&self) {
        // AcqRel: the last decrement acquires every other task's effects and
        // releases them to the waiter through the latch.
        if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.done.set();
        }
    }

    /// Keeps the first panic; drops later ones.
    pub(crate) fn record_panic(&self, payload: PanicPayload) {
        let mut first = lock(&self.panic);
        if first.is_none() {
            *first = Some(payload);
        } else {
            drop(first);
            drop_payload(payload);
        }
    }

    /// Wraps `f` as a scoped task: runs it, records its panic, finishes one.
    /// The caller must have called [`add_task`](Self::add_task).
    ///
    /// The task holds a plain pointer to the state, not an `Arc`: the state
    /// lives at least until the waiter sees the latch set, which happens
    /// only after the last task's decrement, and every task touches the
    /// state only before its decrement, except the last, which takes a
    /// strong count first (`finish_task`). A clone and a drop per task were
    /// two atomic read-modify-writes on a line all the scope's tasks share.
    pub(crate) fn task<'a, F>(self: &Arc<Self>, f: F) -> impl FnOnce() + Send + 'a
    where
        F: FnOnce() + Send + 'a,
    {
        let state = StatePtr(Arc::as_ptr(self));
        move || {
            let state = state;
            // SAFETY: our count keeps the waiter, and so an owner of the
            // state's `Arc`, waiting until the decrement below.
            let live = unsafe { &*state.0 };
            if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
                live.record_panic(payload);
            }
            // SAFETY: as above; this is the task's last use of `state`.
            unsafe { ScopeState::finish_task(state.0) };
        }
    }

    /// [`finish_one`](Self::finish_one) for a task holding a plain pointer:
    /// the last one keeps the state alive through the latch's `set`, which
    /// still touches the latch after the waiter may have seen it set.
    ///
    /// # Safety
    ///
    /// `state` must point to the live state of an `Arc`, kept alive until
    /// this call's decrement by the caller's own count.
    unsafe fn finish_task(state: *const ScopeState) {
        // SAFETY: alive until the decrement (the caller's contract).
        let live = unsafe { &*state };
        if live.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            // The latch is not set yet (only this call sets it), so the
            // waiter still holds its `Arc`: taking a count is sound.
            // SAFETY: `state` came from `Arc::as_ptr` of a live `Arc`.
            let keep = unsafe {
                Arc::increment_strong_count(state);
                Arc::from_raw(state)
            };
            keep.done.set();
        }
    }

    /// Drops the body's count, then waits until every task finished.
    pub(crate) fn finish_body_and_wait(&self) {
        self.finish_one();
        let guard = AbortOnUnwind;
        crate::worker::wait_for(&self.done, None);
        std::mem::forget(guard);
    }

    /// The first task panic, if any.
    pub(crate) fn take_panic(&self) -> Option<PanicPayload> {
        lock(&self.panic).take()
    }
}

/// A scoped task's pointer to its scope's state (see `ScopeState::task`).
#[derive(Clone, Copy)]
struct StatePtr(*const ScopeState);

// SAFETY: `ScopeState` is `Sync` (atomics, a latch, a mutex); the pointer is
// only dereferenced while the state is alive (`ScopeState::task`).
unsafe impl Send for StatePtr {}

/// Aborts the process if dropped while unwinding: see the soundness notes.
struct AbortOnUnwind;

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "dreadpool: a scope's wait unwound while its tasks may still borrow the stack; aborting"
        );
        std::process::abort();
    }
}

/// Erases a scoped task's lifetime so that the pool's queues can hold it.
///
/// # Safety
///
/// The caller must guarantee that the task runs to completion before
/// anything it borrows dies: see the module docs for how `scope` does.
pub(crate) unsafe fn erase_lifetime<'a, F>(task: F) -> Task
where
    F: FnOnce() + Send + 'a,
{
    // SAFETY: the caller upholds that the erased borrows outlive the run.
    unsafe { Task::new_unchecked(task) }
}

/// Spawns an already-counted scoped task on `registry` (or on worker
/// `target`'s inbox), running it on the calling thread if the pool refuses
/// it, so that its count is always taken back.
#[track_caller]
pub(crate) fn spawn_counted(registry: &Registry, target: Option<usize>, task: Task) {
    let refused = match target {
        None => registry.try_spawn(task),
        Some(index) => registry.try_spawn_on(index, task),
    };
    if let Err(task) = refused {
        task.run();
    }
}

impl<'scope, 'env> Scope<'scope, 'env> {
    pub(crate) fn new(registry: &'scope Registry) -> Self {
        Scope {
            state: ScopeState::new(),
            registry,
            scope: PhantomData,
            env: PhantomData,
        }
    }

    /// Spawns `task`, which may borrow anything that outlives the scope, into
    /// the pool. [`ThreadPool::scope`](crate::ThreadPool::scope) returns only
    /// after it (and every task it spawns on the scope) has finished.
    ///
    /// Called from a task of the same pool it goes to that worker's local
    /// queue, like [`ThreadPool::spawn`](crate::ThreadPool::spawn). If the
    /// pool has shut down and the caller is outside it, the task runs on the
    /// calling thread instead: nothing spawned on a scope is ever dropped.
    #[track_caller]
    pub fn spawn<F>(&'scope self, task: F)
    where
        F: FnOnce() + Send + 'scope,
    {
        self.state.add_task();
        let task = self.state.task(task);
        // SAFETY: `ThreadPool::scope` waits for this task before `'scope`
        // ends (module docs); the task was counted just above.
        let task = unsafe { erase_lifetime(task) };
        spawn_counted(self.registry, None, task);
    }

    /// Like [`spawn`](Self::spawn), but in FIFO order with the other FIFO
    /// spawns of the calling worker (see
    /// [`ThreadPool::spawn_fifo`](crate::ThreadPool::spawn_fifo)): what
    /// rayon's `scope_fifo` is built on.
    pub fn spawn_fifo<F>(&'scope self, task: F)
    where
        F: FnOnce() + Send + 'scope,
    {
        self.state.add_task();
        let task = self.state.task(task);
        // SAFETY: as in `spawn`.
        let task = unsafe { erase_lifetime(task) };
        if let Err(task) = self.registry.try_spawn_fifo(task) {
            // Refused (the pool shut down, the caller outside it): run here,
            // as `spawn_counted` does.
            task.run();
        }
    }
}

/// Runs a scope on `registry`: the body, then the wait, then the panics.
/// The body's panic wins over the tasks'; otherwise the first task panic is
/// re-raised, after every task ended.
/// Runs `task` on `registry` as the only task of a scope and waits for it
/// (`install`), re-raising its panic. Not through [`run`]'s body closure,
/// which would hide the caller from `#[track_caller]`: the task's spawn
/// site is the caller's caller, `install`'s user.
#[track_caller]
pub(crate) fn run_one<'env, F>(registry: &Registry, task: F)
where
    F: FnOnce() + Send + 'env,
{
    let scope: Scope<'_, 'env> = Scope::new(registry);
    scope.spawn(task);
    scope.state.finish_body_and_wait();
    if let Some(payload) = scope.state.take_panic() {
        resume_unwind(payload);
    }
}

pub(crate) fn run<'env, F, R>(registry: &Registry, body: F) -> R
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R,
{
    let scope = Scope::new(registry);
    let result = catch_unwind(AssertUnwindSafe(|| body(&scope)));
    scope.state.finish_body_and_wait();
    match result {
        Err(payload) => resume_unwind(payload),
        Ok(value) => {
            if let Some(payload) = scope.state.take_panic() {
                resume_unwind(payload);
            }
            value
        }
    }
}
