//! Waiting until the pool is idle: the machinery behind `join()`.
//!
//! Joiners wait on a condvar for a *generation* to change; a worker that sees
//! the pool go idle while joiners wait bumps it and notifies them all. The
//! generation makes `join` a wave: every thread that was waiting when the
//! pool went idle returns, even if new work arrives before it is scheduled
//! (the `threadpool` crate's behaviour, and the one a caller can reason
//! about).
//!
//! ## Why a join never misses the last task
//!
//! The joiner increments `waiters`, issues a `SeqCst` fence, then checks
//! whether the pool is idle. A worker finishing the last task stores its
//! completion count, issues a `SeqCst` fence (in
//! [`Sleep::register_sleeper`](crate::sleep::Sleep::register_sleeper)), then
//! reads `waiters`. Whichever fence comes first, the other side sees the
//! write: the joiner sees the completion and returns, or the worker sees the
//! joiner and notifies it. The worker notifies while holding the generation
//! mutex, which the joiner holds from before its check until it waits, so the
//! notification cannot fall between the joiner's check and its wait.

use crate::pending::TaskCounts;
use crate::sync::atomic::{fence, AtomicUsize, Ordering};
use crate::sync::{lock, wait_until, Condvar, Mutex};
use std::time::Instant;

/// Joiners of one pool.
pub(crate) struct IdleLatch {
    waiters: AtomicUsize,
    generation: Mutex<u64>,
    condvar: Condvar,
}

impl IdleLatch {
    pub(crate) fn new() -> Self {
        IdleLatch {
            waiters: AtomicUsize::new(0),
            generation: Mutex::new(0),
            condvar: Condvar::new(),
        }
    }

    /// Blocks until the pool is idle, or until `deadline`. Returns true when
    /// it saw the pool idle.
    pub(crate) fn wait(&self, counts: &TaskCounts, deadline: Option<Instant>) -> bool {
        if counts.is_idle() {
            return true;
        }
        let mut generation = lock(&self.generation);
        self.waiters.fetch_add(1, Ordering::SeqCst);
        // SeqCst fence: pairs with the worker's fence in `register_sleeper`
        // (see the module docs).
        fence(Ordering::SeqCst);
        let start = *generation;
        let idle = loop {
            if *generation != start || counts.is_idle() {
                break true;
            }
            match wait_until(&self.condvar, generation, deadline) {
                Ok(guard) => generation = guard,
                Err(_) => break false,
            }
        };
        self.waiters.fetch_sub(1, Ordering::Relaxed);
        idle
    }

    /// True when some thread is blocked in [`wait`](Self::wait). Call after a
    /// `SeqCst` fence that follows the caller's completion counts, and before
    /// reading the counts to decide whether the pool is idle.
    pub(crate) fn has_waiters(&self) -> bool {
        // Acquire: pairs with the joiner's increment (SeqCst, so release).
        // Everything that happened before the join call, in particular the
        // spawn counts of the tasks it must wait for, is then visible to the
        // caller's idle check. With Relaxed, a worker could see the joiner but
        // not the task it spawned just before joining, compute "idle" and
        // release it early (the wakeup hammer caught exactly that).
        self.waiters.load(Ordering::Acquire) > 0
    }

    /// Releases every waiting joiner if the pool is idle. The caller saw it
    /// idle a moment ago; the check is repeated under the generation mutex
    /// because the caller's observation may be stale by now: a joiner that
    /// registered since (after spawning new work) holds the mutex while it
    /// registers, so the repeated check sees its spawns and does not release
    /// it early. Without this, a worker that saw the previous wave go idle but
    /// was slow to take the mutex released the next wave's joiner before its
    /// task ran (the wakeup hammer caught that too).
    pub(crate) fn release_waiters_if_idle(&self, counts: &TaskCounts) {
        let mut generation = lock(&self.generation);
        if broken!("__broken_stale_release") || counts.is_idle() {
            *generation = generation.wrapping_add(1);
            self.condvar.notify_all();
        }
    }
}
