//! Tasks whose result (or panic) someone waits for: by blocking
//! ([`TaskHandle::join`]) or by awaiting the handle as a [`Future`].
//!
//! ## The waker hand-off, and why no wakeup is lost
//!
//! The task (the *filler*) and an awaiting future (the *poller*) meet in one
//! mutex, [`Slot::shared`], which holds both the result and the waker:
//!
//! - the filler, under the lock, stores the result and takes the waker; after
//!   the lock it sets the latch (for blocking joiners) and wakes the waker;
//! - the poller, under the lock, takes the result if it is there, and
//!   otherwise stores its waker and returns `Pending`.
//!
//! Both steps of each side happen inside one critical section, so the two
//! sections are ordered. If the poller's comes first, the filler finds its
//! waker and wakes it; if the filler's comes first, the poller finds the
//! result. There is no window in which the result is missing for the poller
//! *and* its waker is missing for the filler. The mistake this rules out is
//! the natural one of looking for the result and registering the waker in
//! two sections: a filler between them stores the result, finds no waker,
//! and the future is never polled again. `tests/loom.rs`
//! (`awaiting_a_handle_races_the_task`) checks the protocol on this code, and
//! the `__broken_waker_outside_lock` build, which makes exactly that mistake,
//! must fail it.
//!
//! The latch keeps its own protocol (`latch.rs`) for `join` and
//! `join_timeout`; awaiting never touches it, so a future on an executor
//! thread never blocks that thread. The filler sets the latch only after its
//! critical section, so a joiner that sees the latch set finds the result.

use crate::latch::Latch;
use crate::sync::{lock, Arc, Mutex};
use std::fmt;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// What the task and whoever waits for it share, under one lock.
struct Shared<T> {
    /// The task's value or panic payload, until taken.
    result: Option<std::thread::Result<T>>,
    /// The waker of the future that last polled the handle and found no
    /// result. Taken (and woken) by the task when it finishes, or dropped
    /// with the handle.
    waker: Option<Waker>,
}

/// The result slot a task with a handle fills in.
struct Slot<T> {
    shared: Mutex<Shared<T>>,
    done: Latch,
}

/// A handle on a task's result, from
/// [`ThreadPool::spawn_with_handle`](crate::ThreadPool::spawn_with_handle).
///
/// [`join`](Self::join) waits for the task and returns its value, or the
/// payload of its panic. Dropping the handle detaches the task: it still
/// runs, and its result is dropped.
///
/// **Awaiting.** A `TaskHandle<T>` is also a
/// [`Future<Output = std::thread::Result<T>>`](Future), for async code that
/// offloads CPU work to the pool: awaiting it never blocks the executor's
/// thread, and the awaiting task is woken when the pool task ends. It works
/// with any executor (tokio, smol, `futures::executor`): the pool only
/// calls [`Waker::wake`]. Dropping the future detaches the task, as dropping
/// the handle does, and releases its waker at once. A handle awaited to
/// completion has given its result away: polling it again, or calling
/// `join` on it afterwards, panics, as a future polled after completion may.
///
/// ```
/// # #[cfg(any())] // needs an executor; see examples/async_offload.rs
/// # async fn example(pool: &dreadpool::ThreadPool) {
/// let sum = pool.spawn_with_handle(|| (1..=100u64).sum::<u64>()).await;
/// assert_eq!(sum.unwrap(), 5050);
/// # }
/// ```
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
#[must_use = "dropping a TaskHandle detaches the task; call `join` or `.await` it to get its result"]
pub struct TaskHandle<T> {
    slot: Arc<Slot<T>>,
    /// Whether a poll left a waker in the slot, so that dropping the handle
    /// must take it out (a handle never polled skips that lock).
    waker_registered: bool,
}

/// Makes the task for `f` and the handle on its result.
pub(crate) fn with_handle<F, T>(f: F) -> (impl FnOnce() + Send + 'static, TaskHandle<T>)
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let slot = Arc::new(Slot {
        shared: Mutex::new(Shared {
            result: None,
            waker: None,
        }),
        done: Latch::new(),
    });
    let filler = Arc::clone(&slot);
    let task = move || {
        let result = catch_unwind(AssertUnwindSafe(f));
        filler.fill(result);
    };
    (
        task,
        TaskHandle {
            slot,
            waker_registered: false,
        },
    )
}

impl<T> Slot<T> {
    /// The filler's side of the hand-off (see the module docs).
    fn fill(&self, result: std::thread::Result<T>) {
        let waker = {
            let mut shared = lock(&self.shared);
            shared.result = Some(result);
            shared.waker.take()
        };
        self.done.set();
        if let Some(waker) = waker {
            // The executor's code: a panicking waker must not count as a
            // panic of this task (its result is delivered already) nor
            // unwind into the worker.
            crate::panic::contain(|| waker.wake());
        }
    }
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
        lock(&self.slot.shared)
            .result
            .take()
            .expect("dreadpool: TaskHandle joined after it was awaited to completion")
    }
}

impl<T> Future for TaskHandle<T> {
    type Output = std::thread::Result<T>;

    /// The poller's side of the hand-off (see the module docs): take the
    /// result, or leave the waker, in one critical section.
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let mut shared = lock(&this.slot.shared);
        if let Some(result) = shared.result.take() {
            shared.waker = None;
            this.waker_registered = false;
            return Poll::Ready(result);
        }
        if this.slot.done.is_set() {
            // Set only after the result was stored, so it was taken before.
            drop(shared);
            panic!("dreadpool: TaskHandle polled after it completed");
        }
        if broken!("__broken_waker_outside_lock") {
            drop(shared); // look, unlock, then register: a lost wakeup
            shared = lock(&this.slot.shared);
        }
        shared.register(cx.waker());
        drop(shared);
        this.waker_registered = true;
        Poll::Pending
    }
}

impl<T> Shared<T> {
    /// Leaves `waker` for the task to wake, replacing an older one unless it
    /// would wake the same task (the common case of a future polled again by
    /// the same task: no clone).
    fn register(&mut self, waker: &Waker) {
        match &mut self.waker {
            Some(old) if old.will_wake(waker) => {}
            slot => *slot = Some(waker.clone()),
        }
    }
}

impl<T> Drop for TaskHandle<T> {
    fn drop(&mut self) {
        if self.waker_registered {
            // An abandoned future: release its waker now rather than when the
            // task ends (which may be never), since it may keep the whole
            // async task alive. Taken out under the lock, dropped after it.
            let waker = lock(&self.slot.shared).waker.take();
            drop(waker);
        }
    }
}

impl<T> fmt::Debug for TaskHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskHandle")
            .field("finished", &self.is_finished())
            .finish()
    }
}
