//! Which of this crate's pools the current worker thread serves.
//!
//! dreadpool tells a task which pool runs it only as a `dreadpool::Handle`,
//! which can spawn, install and broadcast but cannot open a scope (only a
//! `dreadpool::ThreadPool` can). rayon's `in_place_scope`, called on a
//! worker, must spawn into that worker's own pool, so every worker of a pool
//! this crate builds records its pool in a thread-local when it starts (the
//! start handler this crate installs in front of the user's) and forgets it
//! when it exits. The thread that `use_current_thread` makes worker 0 runs
//! no handler: it records its pool when the build returns
//! (`builder.rs`, `enter_current_thread`) and forgets it when it drops the
//! pool (`pool.rs`, `DetachOnDrop`).
//!
//! A worker cannot hold its pool strongly (the pool would own its workers
//! and they it), so it holds a [`Seat`]: for a pool from
//! [`build`](crate::ThreadPoolBuilder::build), a slot filled with a weak
//! reference right after the build returns, before any task can run (no
//! task can be spawned into a pool that `build` has not yet returned).
//!
//! [`current_pool`] falls back to the global pool when the pool is gone
//! (dropped by its owner while its workers drain queued work) and on
//! workers of pools this crate did not build (plain dreadpool pools): their
//! scopes then spawn into the global pool, which is correct, only not where
//! rayon would put the work.

use crate::pool::DetachOnDrop;
use std::cell::RefCell;
use std::ops::Deref;
use std::sync::{Arc, OnceLock, Weak};

/// What a worker of one of this crate's pools records about its pool.
#[derive(Clone)]
pub(crate) enum Seat {
    /// A worker of the global pool.
    Global,
    /// A worker of a pool from `build`: the slot is filled once the pool
    /// exists.
    Owned(Arc<OnceLock<Weak<DetachOnDrop>>>),
}

thread_local! {
    static SEAT: RefCell<Option<Seat>> = const { RefCell::new(None) };
}

/// Called by each worker as it starts (the first thing its start handler
/// does), and by the thread a `use_current_thread` build made worker 0, once
/// the build succeeded (`builder.rs`).
pub(crate) fn enter(seat: Seat) {
    SEAT.with(|current| *current.borrow_mut() = Some(seat));
}

/// Called by each worker as it exits (the last thing its exit handler does):
/// a thread from a spawn handler lives on after its worker ends. Also
/// called by a `use_current_thread` thread that dropped its pool and so is
/// no worker any more (`pool.rs`, `DetachOnDrop`).
pub(crate) fn leave() {
    SEAT.with(|current| current.borrow_mut().take());
}

/// A pool to open a scope on, kept alive while the scope runs.
pub(crate) enum PoolRef {
    /// The global pool, which lives forever.
    Global(&'static dreadpool::ThreadPool),
    /// A pool from `build`, alive as long as this reference is.
    Owned(Arc<DetachOnDrop>),
}

impl Deref for PoolRef {
    type Target = dreadpool::ThreadPool;

    fn deref(&self) -> &dreadpool::ThreadPool {
        match self {
            PoolRef::Global(pool) => pool,
            PoolRef::Owned(pool) => pool,
        }
    }
}

/// The pool the calling worker serves, or the global pool on any other
/// thread (rayon's "current registry, or the global one").
pub(crate) fn current_pool() -> PoolRef {
    if dreadpool::current_worker_index().is_some() {
        let seat = SEAT.with(|current| current.borrow().clone());
        if let Some(Seat::Owned(slot)) = seat {
            if let Some(pool) = slot.get().and_then(Weak::upgrade) {
                return PoolRef::Owned(pool);
            }
        }
    }
    PoolRef::Global(crate::global::pool())
}
