//! Which worker, if any, runs on the calling thread: thread-locals set for
//! the life of a worker loop, and the lookups built on them.

use super::WorkerThread;
use crate::probe::WorkerProbe;
use crate::registry::Registry;
use crate::sync::Arc;
#[cfg(not(loom))]
use std::cell::Cell;
use std::cell::RefCell;
use std::rc::Rc;

/// What [`CURRENT`] holds: the worker running on this thread, if any.
///
/// Its drop (when the thread's locals are destroyed with a worker still in
/// it, as after a panic out of the worker loop) clears [`CURRENT_PTR`] and
/// the sinks' note of the thread's seat (`WorkerProbe::leave_thread`)
/// first, so that no destructor running later finds a dangling pointer
/// there.
struct CurrentWorker(RefCell<Option<Rc<WorkerThread>>>);

impl Drop for CurrentWorker {
    fn drop(&mut self) {
        #[cfg(not(loom))]
        CURRENT_PTR.with(|ptr| ptr.set(std::ptr::null()));
        WorkerProbe::leave_thread();
        // Worker 0 of a `use_current_thread` pool whose thread exits while
        // the pool lives: it leaves its seat, so that what only it could run
        // goes to the others (`current_thread.rs`).
        if let Some(worker) = self.0.get_mut().take() {
            if worker.user_thread {
                super::current_thread::leave(&worker);
            }
        }
    }
}

#[cfg(not(loom))]
thread_local! {
    /// The worker running on this thread, if any: set for the whole life
    /// of the worker loop. It keeps the worker alive; [`CURRENT_PTR`] is
    /// how the hot paths reach it.
    static CURRENT: CurrentWorker = const { CurrentWorker(RefCell::new(None)) };
}

// loom runs its modelled threads on one OS thread: their thread-locals must
// be loom's.
#[cfg(loom)]
loom::thread_local! {
    static CURRENT: CurrentWorker = CurrentWorker(RefCell::new(None));
}

#[cfg(not(loom))]
thread_local! {
    /// The worker in [`CURRENT`], as a plain pointer, for the hot paths
    /// (every spawn asks whether its thread is a worker of the pool, and
    /// `join` which worker it is on): a `const`-initialised cell with no
    /// destructor is a single load from the thread's TLS block (the
    /// `RefCell<Option<Rc<..>>>` needs a lazy-initialisation check and a
    /// borrow on every spawn: `BENCHMARKS.md`, "Core design figures":
    /// worker-current-ptr). Set and cleared together with `CURRENT`, which
    /// keeps the worker alive meanwhile.
    static CURRENT_PTR: Cell<*const WorkerThread> = const { Cell::new(std::ptr::null()) };
}

/// Makes `worker` (or nobody) this thread's current worker, and tells the
/// sinks which seat the thread runs (`WorkerProbe::enter_thread`).
pub(super) fn set_current(worker: Option<Rc<WorkerThread>>) {
    #[cfg(not(loom))]
    CURRENT_PTR.with(|ptr| ptr.set(worker.as_ref().map_or(std::ptr::null(), Rc::as_ptr)));
    match &worker {
        Some(worker) => worker.probe().enter_thread(),
        None => WorkerProbe::leave_thread(),
    }
    CURRENT.with(|current| *current.0.borrow_mut() = worker);
}

#[cfg(not(loom))]
thread_local! {
    /// Workers that left their seat on this thread (`current_thread.rs`):
    /// no longer current, kept alive until the thread exits because a frame
    /// further up its stack (a `join`'s) may still hold a reference.
    static RETIRED: RefCell<Vec<Rc<WorkerThread>>> = const { RefCell::new(Vec::new()) };
}

#[cfg(loom)]
loom::thread_local! {
    static RETIRED: RefCell<Vec<Rc<WorkerThread>>> = RefCell::new(Vec::new());
}

/// Takes this thread's current worker out of `CURRENT` (nobody is current
/// afterwards) and keeps it alive in `RETIRED` until the thread exits.
/// Returns it, if there was one.
pub(super) fn retire_current() -> Option<Rc<WorkerThread>> {
    let worker = CURRENT.with(|current| current.0.borrow().clone())?;
    set_current(None);
    RETIRED.with(|retired| retired.borrow_mut().push(Rc::clone(&worker)));
    Some(worker)
}

/// The worker running on this thread, or null. The pointer stays valid for
/// as long as the caller is inside one of that worker's tasks.
#[inline(always)]
pub(crate) fn current_ptr() -> *const WorkerThread {
    #[cfg(not(loom))]
    return CURRENT_PTR.with(Cell::get);
    #[cfg(loom)]
    return CURRENT.with(|current| {
        current
            .0
            .borrow()
            .as_ref()
            .map_or(std::ptr::null(), Rc::as_ptr)
    });
}

/// Calls `f` with the worker running on this thread.
///
/// # Panics
///
/// If this thread is not a worker (a bug: only workers run the callers).
pub(crate) fn with_current<R>(f: impl FnOnce(&WorkerThread) -> R) -> R {
    let worker = current_ptr();
    assert!(!worker.is_null(), "dreadpool: not on a worker thread");
    // SAFETY: non-null, so `CURRENT` holds it, and our caller runs inside
    // one of its tasks, which it outlives.
    f(unsafe { &*worker })
}

/// The registry of the pool whose worker runs on this thread, if any.
pub(crate) fn current_registry() -> Option<Arc<Registry>> {
    CURRENT
        .try_with(|current| {
            current
                .0
                .borrow()
                .as_deref()
                .map(|worker| Arc::clone(&worker.registry))
        })
        .ok()
        .flatten()
}

/// The index of the worker running on this thread, if it belongs to
/// `registry` (any pool when `registry` is `None`).
pub(crate) fn current_index(registry: Option<&Registry>) -> Option<usize> {
    CURRENT
        .try_with(|current| {
            current.0.borrow().as_deref().and_then(|worker| {
                let mine = registry.is_none_or(|r| std::ptr::eq(&*worker.registry, r));
                mine.then_some(worker.state.index)
            })
        })
        .ok()
        .flatten()
}

/// Calls `f` with the worker running on this thread, if any (none while
/// the thread's locals are destroyed).
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
pub(super) fn with_worker(f: impl FnOnce(&WorkerThread)) {
    let _ = CURRENT.try_with(|current| {
        if let Some(worker) = current.0.borrow().as_deref() {
            f(worker);
        }
    });
}
