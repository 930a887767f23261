//! The one-swap latch a join waits on when its second half was stolen.
//!
//! The latch lives in the joining frame, on the owner's stack, so the thief
//! must not touch it once the owner can see it set: the owner may return and
//! pop the frame at once. That rules out the pool's general `Latch`, whose
//! setter locks a mutex inside the latch after storing `done`. Here the set
//! is a single `swap`, the setter's last access to the latch, and it tells
//! the setter whether the owner went to sleep on it; only then does the
//! setter wake it, through the pool's sleep protocol and with the owner's
//! index copied out beforehand.
//!
//! ## Why the owner cannot sleep through the set
//!
//! The owner sleeps only through the pool's sleep protocol: it registers as
//! a sleeper (in the idle list, under its lock), then marks the latch
//! `SLEEPY` with a compare-exchange, and parks only if that found the latch
//! not yet set. Both the mark and the set are read-modify-writes of the same
//! word, so one comes first:
//!
//! - the set first: the mark finds `SET`, and the owner does not park;
//! - the mark first: the set reads `SLEEPY` (acquiring the owner's
//!   registration, which preceded the mark), so the setter wakes the owner
//!   with `Sleep::wake_specific`, which finds it in the idle list unless
//!   someone else already woke it; a woken owner looks at the latch before
//!   anything else.
//!
//! A mark left behind by an earlier sleep only costs the setter a
//! `wake_specific` that finds nobody (or wakes the owner for a look that
//! finds its latch set, which is what it waits for).

use crate::sync::atomic::{AtomicU8, Ordering};

/// Not set; the owner has not slept on it.
const UNSET: u8 = 0;
/// Not set; the owner registered as a sleeper and may be parked.
const SLEEPY: u8 = 1;
/// Set: the job's result is written.
const SET: u8 = 2;

/// See the module docs.
pub(crate) struct ForkLatch {
    state: AtomicU8,
}

impl ForkLatch {
    pub(crate) fn new() -> Self {
        ForkLatch {
            state: AtomicU8::new(UNSET),
        }
    }

    /// True once set. `Acquire`: pairs with the set's release, so the
    /// stolen half's result and effects are visible.
    #[inline]
    pub(crate) fn is_set(&self) -> bool {
        self.state.load(Ordering::Acquire) == SET
    }

    /// For the owner, after registering as a sleeper and before parking:
    /// marks the latch so that its setter wakes the owner. Returns false if
    /// it is already set (then the owner must not park).
    pub(crate) fn mark_sleepy(&self) -> bool {
        if broken!("__broken_fork_latch_no_mark") {
            return !self.is_set(); // no mark: the setter never wakes the owner
        }
        // AcqRel: releases the sleep registration to the setter's swap;
        // acquires the result if the set came first.
        match self
            .state
            .compare_exchange(UNSET, SLEEPY, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => true,
            Err(current) => current == SLEEPY,
        }
    }

    /// Sets the latch; returns whether the owner must be woken.
    ///
    /// # Safety
    ///
    /// `this` must point to a live latch. It may die as soon as the swap
    /// inside has happened: this function does not touch it afterwards, and
    /// neither may the caller.
    pub(crate) unsafe fn set(this: *const Self) -> bool {
        // AcqRel: releases the result to the owner's `is_set`; acquires the
        // owner's sleep registration when it reads `SLEEPY`.
        // SAFETY: live until this swap, by the caller's contract.
        let previous = unsafe { (*this).state.swap(SET, Ordering::AcqRel) };
        previous == SLEEPY
    }
}
