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
    let forks = worker.forks();
    let latent = forks.latent();
    worker.probe().joined();
    if latent.is_full() {
        // The latent window is full: this fork, newer and so smaller than
        // every latent one, could be shared only after all of them. It is
        // not made; `b` runs here after `a`. The look at the shared list
        // still happens, so that a worker deep in such joins keeps its
        // oldest forks on offer (and frees a place in the window).
        forks.share_if_wanted(worker);
        let result_a = catch_unwind(AssertUnwindSafe(|| a(FnContext::new(false))));
        return run_b_here(result_a, b);
    }
    fork(worker, a, b, site)
}

/// A join that forks `b`: the job in this frame, on the latent stack, and
/// shared if this worker keeps fewer shared forks than it wants. Out of
/// line: the window makes it the rare case, and inlined it made every
/// caller's frame (and so every join's prologue) larger.
#[inline(never)]
fn fork<A, B, RA, RB>(
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
    let forks = worker.forks();
    let latent = forks.latent();
    let job = StackJob::new(b, worker.index(), site);
    let job_ref = job.as_job_ref();
    // The fork: a plain push to a list only this thread reads, and a look
    // at how many of this worker's forks are shared (when fewer than it
    // keeps, the oldest latent fork, the largest, is shared).
    latent.push(job_ref);
    forks.share_if_wanted(worker);
    // `a` may panic: `b` must still run, and the job must not die while a
    // thief may hold it, so the unwinding stops here until both are done.
    let result_a = catch_unwind(AssertUnwindSafe(|| a(FnContext::new(false))));
    if !latent.pop(job_ref) || forks.reclaim(worker, job_ref) {
        // Nobody else can reach the job any more: run `b` here.
        // SAFETY: never shared, or taken back from the shared list.
        return run_b_here(result_a, unsafe { job.take_func() });
    }
    stolen(worker, &job, result_a)
}

/// Runs `b` on this thread after `a` ended with `result_a`: both always
/// run, and `a`'s panic wins.
#[inline(always)]
fn run_b_here<B, RA, RB>(result_a: std::thread::Result<RA>, b: B) -> (RA, RB)
where
    B: FnOnce(FnContext) -> RB,
{
    match result_a {
        Ok(result_a) => (result_a, b(FnContext::new(false))),
        Err(payload) => {
            if let Err(second) = catch_unwind(AssertUnwindSafe(|| b(FnContext::new(false)))) {
                drop_payload(second);
            }
            resume_unwind(payload)
        }
    }
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::forks::LATENT_WINDOW;
    use crate::ThreadPoolBuilder;
    use std::sync::{mpsc, Mutex};
    use std::time::Duration;

    /// Long enough to mean "never" on a loaded 2-CPU host.
    const HANG: Duration = Duration::from_secs(60);

    /// A join `depth` levels below the top (0) whose `b` reports its depth
    /// on `ran` (from whichever thread runs it), with `inner` at the bottom
    /// of `a`, `levels` levels down.
    fn nest(depth: usize, levels: usize, ran: &mpsc::Sender<usize>, inner: &(dyn Fn() + Sync)) {
        if depth == levels {
            inner();
            return;
        }
        let ran_b = ran.clone();
        crate::join(
            || nest(depth + 1, levels, ran, inner),
            move || ran_b.send(depth).unwrap(),
        );
    }

    /// A worker whose latent window is full and whose shared fork a thief
    /// took still offers its oldest latent fork: the joins it skips look at
    /// its shared list too. Two workers: the other one is held busy while
    /// the installing worker forks the top join (shared at once) and
    /// `LATENT_WINDOW` more (latent); then, inside skipped joins, it frees
    /// the other, waits until that one has run the top fork, makes one more
    /// skipped join, and waits for the fork at depth 1 to run elsewhere.
    /// If skipped joins did not share, nobody would ever offer that fork
    /// and the wait would end in the assertion, not in success.
    #[test]
    fn a_full_window_still_shares_its_oldest_fork() {
        let pool = ThreadPoolBuilder::new().with_threads(2).build();
        let (ran, ran_rx) = mpsc::channel::<usize>();
        let (gate, gate_rx) = mpsc::channel::<()>();
        let (busy, busy_rx) = mpsc::channel::<()>();
        // (Receivers are not `Sync`; the closures below borrow them.)
        let (ran_rx, busy_rx) = (Mutex::new(ran_rx), Mutex::new(busy_rx));
        let recv = |rx: &Mutex<mpsc::Receiver<usize>>| rx.lock().unwrap().recv_timeout(HANG);
        pool.install(|| {
            // The gate task goes to this worker's queue; only the other
            // worker can run it, since this one blocks until it has started.
            let this_pool = crate::current().expect("install runs on a worker");
            this_pool.spawn(move || {
                busy.send(()).unwrap();
                gate_rx.recv().unwrap();
            });
            busy_rx
                .lock()
                .unwrap()
                .recv_timeout(HANG)
                .expect("the other worker took the gate task");
            let skipped_levels = || {
                // One level below the window: this join is not forked.
                crate::join(
                    || {
                        gate.send(()).unwrap();
                        let top = recv(&ran_rx).expect("the top fork ran");
                        assert_eq!(top, 0, "the shared fork is the top one");
                        // Another skipped join: its look at the shared
                        // list finds it empty and shares depth 1.
                        crate::join(
                            || {
                                let next = recv(&ran_rx);
                                assert_eq!(
                                    next,
                                    Ok(1),
                                    "the oldest latent fork was offered and run by the other worker"
                                );
                            },
                            || {},
                        );
                    },
                    || {},
                );
            };
            nest(0, LATENT_WINDOW + 1, &ran, &skipped_levels);
        });
        // Every other fork ran, on this side or the other: depths 2 to the
        // window's last, each once.
        let mut rest: Vec<usize> = ran_rx.into_inner().unwrap().try_iter().collect();
        rest.sort_unstable();
        assert_eq!(rest, (2..=LATENT_WINDOW).collect::<Vec<_>>());
    }
}
