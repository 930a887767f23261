//! A per-worker parking spot.

use crate::sync::{lock, wait, Condvar, Mutex};

/// Parks one worker thread until it is unparked.
///
/// A one-token binary semaphore on a `Mutex<bool>` + `Condvar`, the pool's own
/// rather than `std::thread::park`: a task running on the worker may call
/// `thread::park` itself and would swallow a token meant for the worker,
/// which is precisely a lost wakeup.
pub(crate) struct Parker {
    notified: Mutex<bool>,
    condvar: Condvar,
}

impl Parker {
    pub(crate) fn new() -> Self {
        Parker {
            notified: Mutex::new(false),
            condvar: Condvar::new(),
        }
    }

    /// Blocks until [`unpark`](Self::unpark) is (or was already) called, then
    /// consumes that token. Spurious condvar wakeups are absorbed here.
    pub(crate) fn park(&self) {
        let mut notified = lock(&self.notified);
        while !*notified {
            notified = wait(&self.condvar, notified);
        }
        *notified = false;
    }

    /// Like [`park`](Self::park), giving up at `deadline`. Returns whether it
    /// consumed a token (false: timed out, no token).
    pub(crate) fn park_until(&self, deadline: std::time::Instant) -> bool {
        let mut notified = lock(&self.notified);
        while !*notified {
            match crate::sync::wait_until(&self.condvar, notified, Some(deadline)) {
                Ok(guard) => notified = guard,
                Err(_) => return false,
            }
        }
        *notified = false;
        true
    }

    /// Wakes the parked thread, or makes its next `park` return at once.
    pub(crate) fn unpark(&self) {
        *lock(&self.notified) = true;
        self.condvar.notify_one();
    }
}
