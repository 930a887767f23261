//! The fork-sharing policy: which of a worker's forks idle peers may take,
//! and how a thief takes one (`README.md`, "Sharing" and "Stealing").

use super::forks::{LatentForks, SharedForks};
use super::job::JobRef;
use crate::registry::Registry;
use crate::task::Task;
use crate::worker::WorkerThread;

/// The most forks a worker keeps shared at once: one per peer that may be
/// idle, so that several thieves each find a piece at once, but few, since
/// each shared fork that nobody takes costs its owner a lock to take it back
/// (`BENCHMARKS.md`, "Fork-join").
///
/// A cap of 16 made fine work several times slower on 16 workers, most
/// likely because a stack that rarely holds that many forks shares every
/// new one and takes it back, two locks a join (`BENCHMARKS.md`, "Coarse
/// fork-join: wakes in parallel", the cap of 16).
const MAX_SHARED_FORKS: usize = 4;

/// One worker's forks: the latent ones only it sees, and its list of shared
/// ones in the pool.
pub(crate) struct ForkSharing {
    /// The forks of this worker's joins that are not yet shared.
    latent: LatentForks,
    /// How many of its oldest forks this worker keeps shared: one per peer
    /// that could take one, at most [`MAX_SHARED_FORKS`]; none on a pool of
    /// one thread, whose joins therefore never share.
    kept: usize,
    /// `&registry.shared_forks(index)`, looked up once: every fork looks at
    /// it, and indexing (a bounds check, a multiply) was a third of what the
    /// look cost.
    own: *const SharedForks,
}

impl ForkSharing {
    /// Worker `index`'s forks in `registry`, which must outlive this (the
    /// worker holding both keeps its registry alive).
    pub(crate) fn new(registry: &Registry, index: usize) -> Self {
        ForkSharing {
            latent: LatentForks::new(),
            kept: (registry.threads() - 1).min(MAX_SHARED_FORKS),
            own: &registry.shared_forks()[index],
        }
    }

    /// The forks of this worker's joins that are not yet shared.
    #[inline(always)]
    pub(crate) fn latent(&self) -> &LatentForks {
        &self.latent
    }

    /// This worker's shared forks.
    #[inline(always)]
    pub(crate) fn own_shared(&self) -> &SharedForks {
        // SAFETY: `own` points into the registry, which the worker holding
        // this keeps alive (an `Arc`), and whose lists never move.
        unsafe { &*self.own }
    }

    /// At a fork on `worker` (whose forks these are): shares the oldest
    /// latent fork if fewer than `kept` are shared (thieves took them, or
    /// their joins ended), so that an idle worker always finds this
    /// worker's largest pieces of work at once. Costs a load of a line that
    /// only changes when a fork is shared or taken.
    #[inline(always)]
    pub(crate) fn share_if_wanted(&self, worker: &WorkerThread) {
        if self.own_shared().len() < self.kept {
            self.share_oldest(worker);
        }
    }

    /// Moves the oldest latent fork to the shared list, as a task of its
    /// own (counted, so that the thief's run, or the owner's reclaim, takes
    /// the count back), and wakes a sleeper to take it unless as many
    /// workers already search as this worker has forks on offer
    /// (`Sleep::notify_shared_forks`). No fence, as for a local spawn: if
    /// no thief comes, the owner takes the fork back at its join.
    #[cold]
    #[inline(never)]
    fn share_oldest(&self, worker: &WorkerThread) {
        let Some(job) = self.latent.share_oldest() else {
            return;
        };
        let registry = worker.registry();
        registry.counts().local_spawned(worker.index());
        // SAFETY: a latent fork of this worker: its frame is alive.
        let site = unsafe { job.site() };
        worker.probe().fork_shared(job.id(), site);
        let on_offer = self.own_shared().push(job);
        registry.sleep().notify_shared_forks(on_offer);
    }

    /// At the end of a join on `worker` whose fork was shared: takes it back
    /// from the shared list if no thief took it. Returns whether it did.
    #[cold]
    #[inline(never)]
    pub(crate) fn reclaim(&self, worker: &WorkerThread, job: JobRef) -> bool {
        if !self.own_shared().reclaim(job) {
            return false;
        }
        // The shared fork's count, taken back as if it had run as a task.
        worker.registry().counts().completed(worker.index());
        true
    }

    /// The newest of this worker's own shared forks, as a task, for the
    /// worker waiting at a join (newest, so smallest, first).
    pub(crate) fn take_own_newest(&self) -> Option<Task> {
        self.own_shared().pop_newest().map(fork_task)
    }
}

/// Takes the oldest shared fork of a peer of `worker`, trying every peer
/// once from a random start (one job at a time: a stack job never travels
/// in a batch, so it cannot be stranded behind other work in a thief's
/// queue).
#[inline]
pub(crate) fn steal_fork(worker: &WorkerThread) -> Option<Task> {
    // (The length of the list itself, so that indexing it by a remainder of
    // it needs no bounds check.)
    let forks = worker.registry().shared_forks();
    let n = forks.len();
    if n < 2 {
        return None;
    }
    let me = worker.index();
    let start = worker.next_random() as usize % n;
    for offset in 0..n {
        let victim = (start + offset) % n;
        if victim == me {
            continue;
        }
        if let Some(job) = forks[victim].steal() {
            // SAFETY: taken from its owner's list, so its owner waits for it
            // (or will), and the job is alive.
            let owner = unsafe { job.owner() };
            worker.probe().fork_stolen(owner, job.id());
            return Some(fork_task(job));
        }
    }
    None
}

/// A shared fork a worker took (a thief, or the owner while it waits), as
/// the task that runs it. One word (the job reference): stored inline, no
/// allocation.
fn fork_task(job: JobRef) -> Task {
    // SAFETY: `job` was taken from a shared list, so nobody else runs it,
    // and its owner waits for it (`README.md`).
    Task::new(move || unsafe { super::join::run_shared(job) })
}
