//! What happens when a task panics.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// What the pool does with a worker whose task panicked.
///
/// Under every policy the panic is caught, counted in
/// [`ThreadPool::panic_count`](crate::ThreadPool::panic_count) and handed to
/// the [panic handler](crate::ThreadPoolBuilder::with_panic_handler) if there
/// is one; `join()` still returns and no queued task is lost.
///
/// ```
/// use dreadpool::{PanicPolicy, ThreadPoolBuilder};
///
/// let pool = ThreadPoolBuilder::new()
///     .with_threads(2)
///     .with_panic_policy(PanicPolicy::Continue)
///     .build();
/// pool.spawn(|| panic!("boom"));
/// pool.join();
/// assert_eq!(pool.panic_count(), 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PanicPolicy {
    /// Replace the worker thread with a fresh one that takes over the same
    /// local queue, so no queued task and no stealer is lost. A panic may have
    /// left thread-local state half-updated; the new thread starts clean.
    /// If the replacement thread cannot be spawned, the old thread carries on
    /// as the worker, so capacity is never lost. The default.
    #[default]
    Respawn,
    /// Keep the same thread and go on with the next task.
    Continue,
    /// Abort the process after the handler ran: for fail-fast services where
    /// a panic means the process state can no longer be trusted.
    Abort,
}

/// The payload of a caught panic, as `std::panic::catch_unwind` gives it.
pub type PanicPayload = Box<dyn Any + Send + 'static>;

/// A user's panic handler.
pub(crate) type PanicHandler = Arc<dyn Fn(PanicPayload) + Send + Sync + 'static>;

/// The message of a panic payload, for logs: panics made with a format
/// string carry a `String`, literal ones a `&'static str`.
pub(crate) fn payload_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(message) = payload.downcast_ref::<&'static str>() {
        message
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message
    } else {
        "<non-string panic payload>"
    }
}

/// Drops a panic payload whose `Drop` might itself panic, without letting
/// that second panic unwind into the worker. A payload that panics while
/// being dropped hands us a new payload; that one is leaked rather than
/// risking an endless chain.
pub(crate) fn drop_payload(payload: PanicPayload) {
    if let Err(second) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(second);
    }
}

/// Runs `f`, containing any panic it raises. For calls into code the pool
/// does not control on paths that must not unwind: `tracing` subscribers
/// (whose writers may panic, for example `eprint!` on a closed stderr) and
/// the panic handler. Unwinding out of a worker's bookkeeping would kill the
/// thread with its queue and its owed counts, and hang every `join()`.
pub(crate) fn contain(f: impl FnOnce()) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
        drop_payload(payload);
    }
}

/// Gives `payload` to `handler`, containing any panic of the handler itself.
/// Returns false if the handler panicked.
pub(crate) fn call_handler(handler: &PanicHandler, payload: PanicPayload) -> bool {
    match catch_unwind(AssertUnwindSafe(|| handler(payload))) {
        Ok(()) => true,
        Err(second) => {
            drop_payload(second);
            false
        }
    }
}
