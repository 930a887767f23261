//! A join's second half, living in the joining frame: the stack job, and
//! the two-word reference to it that travels between workers.

use super::fork_latch::ForkLatch;
use super::FnContext;
use crate::registry::Registry;
use crate::sync::cell::UnsafeCell;
use std::mem::ManuallyDrop;
use std::panic::Location;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

/// What every stack job starts with, whatever its closure's type: how to
/// run it on a thief, and whom to wake when it is done.
#[repr(C)]
struct JobHeader {
    /// Runs the job on a thief (`execute_stolen::<F, R>`); the flag is the
    /// closure's `FnContext::migrated`.
    execute: unsafe fn(NonNull<JobHeader>, &Registry, bool),
    /// The index of the worker whose frame the job lives in.
    owner: usize,
    /// The join's caller (`#[track_caller]`), for the flight recorder when
    /// the fork is shared: a constant address, one store per join, read
    /// only on the cold sharing path.
    site: &'static Location<'static>,
}

/// A pointer to a stack job, with its type erased: what the fork lists
/// hold. Two words would do (the table in the header keeps it one).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct JobRef(NonNull<JobHeader>);

// SAFETY: a `JobRef` is sent to a thief only while its frame waits for it
// (`README.md`); the closure it points to is `Send` (`StackJob::new`), and
// its result `Send` too.
unsafe impl Send for JobRef {}

impl JobRef {
    /// The job's identity (its address), for the flight recorder: unique
    /// among the live jobs.
    pub(crate) fn id(self) -> u64 {
        self.0.as_ptr() as usize as u64
    }

    /// The worker whose frame holds the job.
    ///
    /// # Safety
    ///
    /// The job must be alive: its owner has not yet seen it done.
    pub(crate) unsafe fn owner(self) -> usize {
        // SAFETY: live, by the caller's contract; `owner` never changes.
        unsafe { self.0.as_ref().owner }
    }

    /// Where the join that made the job was called.
    ///
    /// # Safety
    ///
    /// The job must be alive (as for [`owner`](Self::owner)).
    pub(crate) unsafe fn site(self) -> &'static Location<'static> {
        // SAFETY: live, by the caller's contract; `site` never changes.
        unsafe { self.0.as_ref().site }
    }

    /// Runs a stolen job on this thread (a worker of `registry`'s pool,
    /// which the owner belongs to), then sets its latch and wakes its owner
    /// if it sleeps. Cannot unwind: the closure's panic goes to the owner.
    /// `migrated`: this thread is not the owner's (the owner itself runs
    /// its own older shared forks while it waits on a newer one).
    ///
    /// # Safety
    ///
    /// The job must have been taken from its owner's shared list (so that
    /// nobody else runs it) and its owner must still wait for it.
    pub(crate) unsafe fn execute_stolen(self, registry: &Registry, migrated: bool) {
        let execute = {
            // SAFETY: alive until this thread sets its latch.
            let header = unsafe { self.0.as_ref() };
            header.execute
        };
        // SAFETY: passed on from our caller.
        unsafe { execute(self.0, registry, migrated) }
    }
}

/// The second closure of a join and the slot for its result, in the
/// joining frame.
#[repr(C)]
pub(crate) struct StackJob<F, R> {
    /// First, so that a pointer to the job is a pointer to its header.
    header: JobHeader,
    latch: ForkLatch,
    /// Moved out exactly once, by whoever runs the job (`README.md`: the
    /// job runs exactly once), so there is no `Option` to write and test
    /// on the fast path. (A job that never ran would leak its closure,
    /// never drop it twice.)
    func: UnsafeCell<ManuallyDrop<F>>,
    /// Written only by a thief, before it sets the latch, and taken by the
    /// owner after. `ManuallyDrop`, so that a frame whose job ran inline
    /// has no drop code for it (a stolen job's result is always taken).
    result: UnsafeCell<ManuallyDrop<Option<std::thread::Result<R>>>>,
}

impl<F, R> StackJob<F, R>
where
    F: FnOnce(FnContext) -> R + Send,
    R: Send,
{
    /// A job of `func`, owned by worker `owner`, forked by a join called
    /// at `site`.
    #[inline(always)]
    pub(crate) fn new(func: F, owner: usize, site: &'static Location<'static>) -> Self {
        StackJob {
            header: JobHeader {
                execute: execute_stolen::<F, R>,
                owner,
                site,
            },
            latch: ForkLatch::new(),
            func: UnsafeCell::new(ManuallyDrop::new(func)),
            result: UnsafeCell::new(ManuallyDrop::new(None)),
        }
    }

    /// The reference the fork lists hold. The job must not move while one
    /// exists (it does not: it stays in the joining frame).
    #[inline(always)]
    pub(crate) fn as_job_ref(&self) -> JobRef {
        JobRef(NonNull::from(&self.header))
    }

    /// The latch a thief sets when it has run the job.
    pub(crate) fn latch(&self) -> &ForkLatch {
        &self.latch
    }

    /// Takes the closure back to run it inline.
    ///
    /// # Safety
    ///
    /// No thief can reach the job any more: it was never shared, or its
    /// owner took it back from its shared list. Called at most once.
    #[inline(always)]
    pub(crate) unsafe fn take_func(&self) -> F {
        // SAFETY: only the owner reaches the job now, and moves the closure
        // out once (the caller's contract).
        self.func
            .with_mut(|func| unsafe { ManuallyDrop::take(&mut *func) })
    }

    /// The stolen run's result.
    ///
    /// # Safety
    ///
    /// The latch must be set (the thief wrote the result and will not touch
    /// the job again).
    pub(crate) unsafe fn take_result(&self) -> std::thread::Result<R> {
        self.result
            // SAFETY: the set latch (acquire) orders the thief's write
            // before this read, and the thief is done with the job.
            .with_mut(|result| unsafe { (*result).take() })
            .expect("a set latch means the result is written")
    }
}

/// Runs the stolen job at `header` (a `StackJob<F, R>`) and sets its latch.
///
/// # Safety
///
/// As for [`JobRef::execute_stolen`].
unsafe fn execute_stolen<F, R>(header: NonNull<JobHeader>, registry: &Registry, migrated: bool)
where
    F: FnOnce(FnContext) -> R + Send,
    R: Send,
{
    let job = header.cast::<StackJob<F, R>>().as_ptr().cast_const();
    // Everything below goes through the raw pointer and ends with the swap
    // in `ForkLatch::set`: once that is done the owner may return and its
    // frame, with the job, be gone (`fork_latch.rs`).
    // SAFETY: the job is alive and ours alone until its latch is set.
    let (owner, func) = unsafe { ((*job).header.owner, &(*job).func) };
    // SAFETY: as above: the thief that took the job from the shared list
    // is the only one to move the closure out.
    let func = func.with_mut(|func| unsafe { ManuallyDrop::take(&mut *func) });
    let result = catch_unwind(AssertUnwindSafe(|| func(FnContext::new(migrated))));
    let mut result = Some(result);
    let write_result = |result| {
        // SAFETY: as above; the result is written before the latch releases
        // it (except in the broken variant below, which loom catches).
        unsafe { (*job).result.with_mut(|slot| **slot = result) };
    };
    if !broken!("__broken_fork_result_after_latch") {
        write_result(result.take());
    }
    // SAFETY: the latch is alive until this call's swap; nothing touches
    // the job afterwards.
    let wake = unsafe { ForkLatch::set(std::ptr::addr_of!((*job).latch)) };
    if result.is_some() {
        write_result(result.take()); // only the broken variant: too late
    }
    if wake {
        registry.sleep().wake_specific(owner);
    }
}
