//! Tasks whose result (or panic) someone waits for.

use crate::latch::Latch;
use crate::sync::{lock, Arc, Mutex};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// The result slot a task with a handle fills in.
struct Slot<T> {
    result: Mutex<Option<std::thread::Result<T>>>,
    done: Latch,
}

/// A handle on a task's result, from
/// [`ThreadPool::spawn_with_handle`](crate::ThreadPool::spawn_with_handle).
///
/// [`join`](Self::join) waits for the task and returns its value, or the
/// payload of its panic. Dropping the handle detaches the task: it still
/// runs, and its result is dropped.
///
/// **Panics.** A task spawned with a handle runs inside its own
/// `catch_unwind`: its panic is delivered to the handle as `Err(payload)` and
/// is *not* a pool panic. It does not trip the [`PanicPolicy`] (no worker is
/// replaced, the process is not aborted), is not passed to the panic handler
/// and is not counted in [`ThreadPool::panic_count`]. Whoever joins the
/// handle decides what it means; a detached handle's panic is dropped
/// silently (the default panic hook still prints it).
///
/// **Joining from inside the pool** does not block the worker thread: it
/// keeps running other tasks until this one finishes, so waiting on a task
/// queued behind the waiter cannot deadlock the pool.
///
/// ```
/// let pool = dreadpool::ThreadPoolBuilder::new().with_threads(2).build();
/// let answer = pool.spawn_with_handle(|| 6 * 7);
/// let oops = pool.spawn_with_handle(|| -> u32 { panic!("no answer") });
/// assert_eq!(answer.join().unwrap(), 42);
/// assert!(oops.join().is_err());
/// assert_eq!(pool.panic_count(), 0); // handle panics are the joiner's
/// ```
///
/// [`PanicPolicy`]: crate::PanicPolicy
/// [`ThreadPool::panic_count`]: crate::ThreadPool::panic_count
#[must_use = "dropping a TaskHandle detaches the task; call `join` to get its result"]
pub struct TaskHandle<T> {
    slot: Arc<Slot<T>>,
}

/// Makes the task for `f` and the handle on its result.
pub(crate) fn with_handle<F, T>(f: F) -> (impl FnOnce() + Send + 'static, TaskHandle<T>)
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let slot = Arc::new(Slot {
        result: Mutex::new(None),
        done: Latch::new(),
    });
    let filler = Arc::clone(&slot);
    let task = move || {
        let result = catch_unwind(AssertUnwindSafe(f));
        *lock(&filler.result) = Some(result);
        filler.done.set();
    };
    (task, TaskHandle { slot })
}

impl<T> TaskHandle<T> {
    /// Waits for the task to finish; gives its value, or its panic payload.
    pub fn join(self) -> std::thread::Result<T> {
        crate::worker::wait_for(&self.slot.done, None);
        self.take()
    }

    /// Like [`join`](Self::join), giving up after `timeout`: then the handle
    /// comes back in `Err`, to wait again or drop.
    pub fn join_timeout(self, timeout: Duration) -> Result<std::thread::Result<T>, TaskHandle<T>> {
        let deadline = Instant::now().checked_add(timeout);
        if crate::worker::wait_for(&self.slot.done, deadline) {
            Ok(self.take())
        } else {
            Err(self)
        }
    }

    /// True once the task has finished (returned or panicked).
    pub fn is_finished(&self) -> bool {
        self.slot.done.is_set()
    }

    fn take(self) -> std::thread::Result<T> {
        lock(&self.slot.result)
            .take()
            .expect("a finished task's result is taken once, by the handle's consuming join")
    }
}

impl<T> fmt::Debug for TaskHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskHandle")
            .field("finished", &self.is_finished())
            .finish()
    }
}
