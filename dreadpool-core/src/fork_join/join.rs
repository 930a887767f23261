//! The join algorithm on a worker: fork, run `a`, then take `b` back or
//! wait for the thief that took it. The argument is in `README.md`.

use super::job::{JobRef, StackJob};
use super::FnContext;
use crate::panic::drop_payload;
use crate::worker::WorkerThread;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe, Location};

/// [`join_context`](super::join_context) on `worker`, the calling thread's;
/// `site` is the join's caller, recorded if the fork is shared.
#[inline(always)]
pub(super) fn join_on_worker<A, B, RA, RB>(
    worker: &WorkerThread,
    a: A,
    b: B,
    site: &'static Location<'static>,
) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    let job = StackJob::new(b, worker.index(), site);
    let job_ref = job.as_job_ref();
    let forks = worker.forks();
    let latent = forks.latent();
    // The fork: a plain push to a list only this thread reads, and a look
    // at whether any worker of the pool is idle (then the oldest latent
    // fork, the largest, is shared with it).
    latent.push(job_ref);
    worker.probe().joined();
    forks.share_if_wanted(worker);
    // `a` may panic: `b` must still run, and the job must not die while a
    // thief may hold it, so the unwinding stops here until both are done.
    let result_a = catch_unwind(AssertUnwindSafe(|| a(FnContext::new(false))));
    if !latent.pop(job_ref) || forks.reclaim(worker, job_ref) {
        // Nobody else can reach the job any more: run `b` here.
        // SAFETY: never shared, or taken back from the shared list.
        let b = unsafe { job.take_func() };
        return match result_a {
            Ok(result_a) => (result_a, b(FnContext::new(false))),
            Err(payload) => {
                // Both always run; `a`'s panic wins.
                if let Err(second) = catch_unwind(AssertUnwindSafe(|| b(FnContext::new(false)))) {
                    drop_payload(second);
                }
                resume_unwind(payload)
            }
        };
    }
    stolen(worker, &job, result_a)
}

/// The end of a join whose `b` a thief took: wait for it (running other
/// work meanwhile), then combine the two outcomes.
#[cold]
#[inline(never)]
fn stolen<F, RA, RB>(
    worker: &WorkerThread,
    job: &StackJob<F, RB>,
    result_a: std::thread::Result<RA>,
) -> (RA, RB)
where
    F: FnOnce(FnContext) -> RB + Send,
    RB: Send,
{
    worker.wait_for_fork(job.latch());
    // SAFETY: the latch is set: the thief wrote the result and is done.
    let result_b = unsafe { job.take_result() };
    match (result_a, result_b) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(payload), Ok(_)) | (Ok(_), Err(payload)) => resume_unwind(payload),
        (Err(payload), Err(second)) => {
            drop_payload(second);
            resume_unwind(payload)
        }
    }
}

/// Runs a fork that a worker took from a shared list (a thief, or its
/// owner while it waits on a later fork): the body of the task it travels
/// as (`WorkerThread::fork_task`).
///
/// # Safety
///
/// As for [`JobRef::execute_stolen`].
pub(crate) unsafe fn run_shared(job: JobRef) {
    crate::worker::with_current(|worker| {
        // SAFETY: passed on from our caller; this thread is a worker of the
        // job's pool (only that pool's workers take from its lists), and
        // the job is alive until we set its latch.
        unsafe {
            let migrated = job.owner() != worker.index();
            job.execute_stolen(worker.registry(), migrated);
        }
    })
}
