//! The worker's side of fork sharing (`fork_join/README.md`).

use super::WorkerThread;
use crate::fork_join::{JobRef, LatentForks, SharedForks};
use crate::task::Task;

impl WorkerThread {
    /// The forks of this worker's joins that are not yet shared.
    #[inline(always)]
    pub(crate) fn latent_forks(&self) -> &LatentForks {
        &self.latent
    }

    /// Counts a join (metrics).
    #[inline(always)]
    pub(crate) fn joined(&self) {
        self.probe().joined();
    }

    /// At a fork: shares the oldest latent fork if fewer than
    /// `shared_forks_kept` of ours are shared (thieves took them, or their
    /// joins ended), so that an idle worker always finds this worker's
    /// largest pieces of work at once. Costs a load of a line that only
    /// changes when a fork is shared or taken.
    #[inline(always)]
    pub(crate) fn share_a_fork_if_wanted(&self) {
        if self.own_shared_forks().len() < self.shared_forks_kept {
            self.share_oldest_fork();
        }
    }

    /// This worker's shared forks.
    #[inline(always)]
    pub(super) fn own_shared_forks(&self) -> &SharedForks {
        // SAFETY: `own_shared_forks` points into `registry`, which this
        // worker holds (an `Arc`) and whose lists never move.
        unsafe { &*self.own_shared_forks }
    }

    /// Moves the oldest latent fork to the shared list, as a task of its
    /// own (counted, so that the thief's run, or the owner's reclaim, takes
    /// the count back), and wakes a sleeper to take it unless someone
    /// already searches. No fence, as for a local spawn
    /// (`Sleep::notify_local_task`): if no thief comes, the owner takes the
    /// fork back at its join.
    #[cold]
    #[inline(never)]
    pub(super) fn share_oldest_fork(&self) {
        let Some(job) = self.latent.share_oldest() else {
            return;
        };
        let index = self.state.index;
        self.registry.counts.local_spawned(index);
        self.probe().fork_shared(job.id());
        self.own_shared_forks().push(job);
        self.registry.sleep.notify_local_task();
    }

    /// At the end of a join whose fork was shared: takes it back from the
    /// shared list if no thief took it. Returns whether it did.
    #[cold]
    #[inline(never)]
    pub(crate) fn reclaim_fork(&self, job: JobRef) -> bool {
        let index = self.state.index;
        if !self.own_shared_forks().reclaim(job) {
            return false;
        }
        // The shared fork's count, taken back as if it had run as a task.
        self.registry.counts.completed(index);
        true
    }

    /// A shared fork this worker took (a thief, or the owner while it
    /// waits), as the task that runs it. One word (the job reference):
    /// stored inline, no allocation.
    pub(super) fn fork_task(job: JobRef) -> Task {
        // SAFETY: `job` was taken from a shared list, so nobody else runs
        // it, and its owner waits for it (`fork_join/README.md`).
        Task::new(move || unsafe { crate::fork_join::run_shared(job) })
    }
}
