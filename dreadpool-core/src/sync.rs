//! The synchronization primitives the scheduler is built from.
//!
//! Normally these are `std`'s. Under `cfg(loom)` they are loom's, so that the
//! sleep/wake, join and shutdown protocols can be model-checked on the very
//! code that runs in production (see `tests/loom.rs`). Nothing else in the
//! crate names `std::sync` directly.

#[cfg(not(loom))]
pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};

#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};

/// `std`'s `Arc` even under loom: reference counting is not part of any
/// protocol modelled here, and loom's `Arc` cannot be a method receiver.
pub(crate) use std::sync::Arc;

/// Atomics and fences.
#[allow(unused_imports)] // not every feature combination uses every type
pub(crate) mod atomic {
    #[cfg(not(loom))]
    pub(crate) use std::sync::atomic::{
        fence, AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering,
    };

    #[cfg(loom)]
    pub(crate) use loom::sync::atomic::{
        fence, AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering,
    };
}

/// Threads: `std`'s, or loom's modelled ones.
pub(crate) mod thread {
    #[cfg(not(loom))]
    pub(crate) use std::thread::{yield_now, Builder, JoinHandle};

    #[cfg(loom)]
    pub(crate) use loom::thread::{yield_now, Builder, JoinHandle};
}

/// Locks `mutex`, ignoring poisoning.
///
/// No user code ever runs while one of the pool's own mutexes is held (tasks
/// and panic handlers run outside them), so a poisoned mutex can only mean a
/// panic inside the pool's few lines of bookkeeping, after which the data is
/// still consistent. Propagating the poison would turn one panic into a
/// cascade across every worker.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Waits on `condvar`, ignoring poisoning (see [`lock`]).
pub(crate) fn wait<'a, T>(condvar: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    condvar
        .wait(guard)
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Waits on `condvar` until notified or until `deadline` (forever if none),
/// ignoring poisoning. `Err` carries the guard back when the deadline had
/// already passed; a wakeup before it (real or spurious) is `Ok`, so callers
/// loop on their own condition.
pub(crate) fn wait_until<'a, T>(
    condvar: &Condvar,
    guard: MutexGuard<'a, T>,
    deadline: Option<std::time::Instant>,
) -> Result<MutexGuard<'a, T>, MutexGuard<'a, T>> {
    match deadline {
        None => Ok(wait(condvar, guard)),
        Some(deadline) => {
            let now = std::time::Instant::now();
            if now >= deadline {
                Err(guard)
            } else {
                Ok(wait_timeout(condvar, guard, deadline - now))
            }
        }
    }
}

/// Waits on `condvar` for at most `timeout`, ignoring poisoning (see [`lock`]).
#[cfg(not(loom))]
pub(crate) fn wait_timeout<'a, T>(
    condvar: &Condvar,
    guard: MutexGuard<'a, T>,
    timeout: std::time::Duration,
) -> MutexGuard<'a, T> {
    match condvar.wait_timeout(guard, timeout) {
        Ok((guard, _)) => guard,
        Err(poisoned) => poisoned.into_inner().0,
    }
}

/// loom has no timed waits: a timed wait is modelled as an untimed one, which
/// is the stricter case for the protocols (a timeout never rescues a lost
/// wakeup in the model).
#[cfg(loom)]
pub(crate) fn wait_timeout<'a, T>(
    condvar: &Condvar,
    guard: MutexGuard<'a, T>,
    _timeout: std::time::Duration,
) -> MutexGuard<'a, T> {
    wait(condvar, guard)
}

/// `UnsafeCell` with loom's checked access API: under loom, every access
/// is checked against the happens-before order, so that a model catches a
/// read that races a write even when the racing interleaving would not
/// otherwise show (the fork job's result slot).
pub(crate) mod cell {
    #[cfg(loom)]
    pub(crate) use loom::cell::UnsafeCell;

    /// `std`'s `UnsafeCell` behind loom's API.
    #[cfg(not(loom))]
    #[derive(Debug)]
    pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

    #[cfg(not(loom))]
    impl<T> UnsafeCell<T> {
        #[inline(always)]
        pub(crate) const fn new(value: T) -> Self {
            UnsafeCell(std::cell::UnsafeCell::new(value))
        }

        /// Calls `f` with a mutable pointer to the value.
        #[inline(always)]
        pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }
    }
}
