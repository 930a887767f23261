//! Where a worker's forks wait: in a private list that only it touches
//! (latent), except the oldest few, which it keeps in a shared list that
//! thieves take from.

use super::job::JobRef;
use crate::sync::{lock, Mutex};
use crossbeam_utils::CachePadded;
use std::cell::{Cell, UnsafeCell};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A worker's forks that no join has finished with, oldest first: a stack,
/// since joins nest on one thread's call stack. The first `shared` of them
/// were moved to the worker's [`SharedForks`] (oldest first, so those are
/// always a prefix); the rest are latent: only this worker knows of them.
///
/// Owned by its worker thread alone (it is not `Sync`): plain loads and
/// stores, no atomics.
pub(crate) struct LatentForks {
    stack: UnsafeCell<Vec<JobRef>>,
    shared: Cell<usize>,
}

/// Room for this many nested forks before the stack reallocates (it keeps
/// what it grew to).
const INITIAL_DEPTH: usize = 64;

/// The most latent forks a worker holds: a join on a worker that already
/// holds this many forks nothing and runs both halves in place
/// (`README.md`, "The latent window"). Sharing takes the oldest latent fork
/// first, so a fork above this many older latent ones would be shared only
/// after all of them; the window keeps the largest pieces on offer and
/// spares the small ones below it the fork's stores.
///
/// 8 unless the build sets `--cfg dreadpool_latent_window="4"` (or `"16"`)
/// in `RUSTFLAGS`: the sizes that `BENCHMARKS.md` compares ("The latent
/// window"), for a many-core machine to compare them again
/// (`dreadpool-bench/scripts/sixteen-cores.sh windows`).
pub(crate) const LATENT_WINDOW: usize = if cfg!(dreadpool_latent_window = "4") {
    4
} else if cfg!(dreadpool_latent_window = "16") {
    16
} else {
    8
};

impl LatentForks {
    pub(crate) fn new() -> Self {
        LatentForks {
            stack: UnsafeCell::new(Vec::with_capacity(INITIAL_DEPTH)),
            shared: Cell::new(0),
        }
    }

    /// Records a fork; it is latent until [`share_oldest`](Self::share_oldest)
    /// moves it.
    #[inline(always)]
    pub(crate) fn push(&self, job: JobRef) {
        // SAFETY: only this worker's thread reaches `stack` (the type is not
        // `Sync`), and no reference into it outlives a method call.
        unsafe { (*self.stack.get()).push(job) };
    }

    /// Forgets the newest fork, which must be `job` (its join is finishing);
    /// returns whether it had been shared.
    #[inline(always)]
    pub(crate) fn pop(&self, job: JobRef) -> bool {
        // SAFETY: as in `push`.
        let stack = unsafe { &mut *self.stack.get() };
        let popped = stack.pop();
        debug_assert_eq!(popped, Some(job), "joins finish newest first");
        let depth = stack.len();
        if depth < self.shared.get() {
            // Every older fork was shared before this one.
            self.shared.set(depth);
            true
        } else {
            false
        }
    }

    /// Whether [`LATENT_WINDOW`] forks are latent: a join now forks
    /// nothing.
    #[inline(always)]
    pub(crate) fn is_full(&self) -> bool {
        // SAFETY: as in `push`.
        let depth = unsafe { (*self.stack.get()).len() };
        depth - self.shared.get() >= LATENT_WINDOW
    }

    /// Marks the oldest latent fork shared and returns it, if there is one.
    #[inline]
    pub(crate) fn share_oldest(&self) -> Option<JobRef> {
        // SAFETY: as in `push`.
        let stack = unsafe { &*self.stack.get() };
        let shared = self.shared.get();
        let job = *stack.get(shared)?;
        self.shared.set(shared + 1);
        Some(job)
    }

    /// Whether any fork is latent (for tests and assertions).
    #[cfg(test)]
    pub(crate) fn latent(&self) -> usize {
        // SAFETY: as in `push`.
        unsafe { (*self.stack.get()).len() - self.shared.get() }
    }
}

/// A worker's shared forks: jobs of its joins that idle workers may steal,
/// oldest (largest) first. The owner takes its own back, newest first, when
/// its join finishes before a thief came.
///
/// A mutex, because sharing is rare (only a worker's oldest forks, a few at
/// a time) and because under the lock the owner
/// takes back *its* job by identity, never another frame's. `len` mirrors
/// the list so that looking at an empty one costs a load, not a lock.
///
/// `len` is `std`'s atomic even under loom: it is only a hint (takers
/// decide under the lock, and a sleeper that misses a shared fork costs
/// parallelism, never the job, which its owner takes back), and a loom
/// atomic read by every search multiplied the models' interleavings
/// (`BENCHMARKS.md`, "Core design figures": fork-join-shared-forks-len).
pub(crate) struct SharedForks {
    len: CachePadded<AtomicUsize>,
    jobs: Mutex<VecDeque<JobRef>>,
}

impl SharedForks {
    pub(crate) fn new() -> Self {
        SharedForks {
            len: CachePadded::new(AtomicUsize::new(0)),
            jobs: Mutex::new(VecDeque::with_capacity(INITIAL_DEPTH)),
        }
    }

    /// True when no fork is shared. Relaxed: a hint; takers decide under
    /// the lock.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many forks are shared (a hint, as for `is_empty`).
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Shares `job` (the owner, newest last). Returns how many forks the
    /// list holds now.
    pub(crate) fn push(&self, job: JobRef) -> usize {
        let mut jobs = lock(&self.jobs);
        jobs.push_back(job);
        self.len.store(jobs.len(), Ordering::Relaxed);
        jobs.len()
    }

    /// Takes back `job` if no thief took it (the owner, whose join ends).
    pub(crate) fn reclaim(&self, job: JobRef) -> bool {
        let mut jobs = lock(&self.jobs);
        // Newest first: the finishing join's job is the newest shared one
        // unless it was stolen.
        let Some(position) = jobs.iter().rposition(|&j| j == job) else {
            return false;
        };
        jobs.remove(position);
        self.len.store(jobs.len(), Ordering::Relaxed);
        true
    }

    /// Takes the oldest shared job (a thief: the oldest is the largest).
    pub(crate) fn steal(&self) -> Option<JobRef> {
        if self.is_empty() {
            return None;
        }
        let mut jobs = lock(&self.jobs);
        let job = jobs.pop_front();
        self.len.store(jobs.len(), Ordering::Relaxed);
        job
    }

    /// Takes the newest shared job (the owner, waiting in a join whose own
    /// job was stolen: the newest of its older forks is the smallest).
    pub(crate) fn pop_newest(&self) -> Option<JobRef> {
        if self.is_empty() {
            return None;
        }
        let mut jobs = lock(&self.jobs);
        let job = jobs.pop_back();
        self.len.store(jobs.len(), Ordering::Relaxed);
        job
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::fork_join::job::StackJob;
    use crate::fork_join::FnContext;

    fn job() -> StackJob<impl FnOnce(FnContext) -> u8 + Send, u8> {
        StackJob::new(|_: FnContext| 1u8, 0, std::panic::Location::caller())
    }

    #[test]
    fn sharing_takes_the_oldest_and_pops_say_which_were_shared() {
        let (a, b, c) = (job(), job(), job());
        let (a, b, c) = (a.as_job_ref(), b.as_job_ref(), c.as_job_ref());
        let latent = LatentForks::new();
        latent.push(a);
        latent.push(b);
        assert_eq!(latent.share_oldest(), Some(a), "oldest first");
        latent.push(c);
        assert_eq!(latent.latent(), 2);
        assert_eq!(latent.share_oldest(), Some(b));
        assert!(!latent.pop(c), "c was never shared");
        assert!(latent.pop(b), "b was shared");
        assert!(latent.pop(a), "a was shared");
        assert_eq!(latent.share_oldest(), None, "nothing left to share");
        // The shared prefix was taken back with the pops: a new fork is
        // latent again.
        latent.push(c);
        assert_eq!(latent.latent(), 1);
        assert!(!latent.pop(c));
    }

    #[test]
    fn the_window_counts_latent_forks_only() {
        let jobs: Vec<_> = (0..=LATENT_WINDOW).map(|_| job()).collect();
        let refs: Vec<_> = jobs.iter().map(|j| j.as_job_ref()).collect();
        let latent = LatentForks::new();
        for &job in &refs[..LATENT_WINDOW - 1] {
            latent.push(job);
        }
        assert!(!latent.is_full(), "one place left");
        latent.push(refs[LATENT_WINDOW - 1]);
        assert!(latent.is_full());
        assert_eq!(latent.share_oldest(), Some(refs[0]));
        assert!(!latent.is_full(), "a shared fork leaves the window");
        latent.push(refs[LATENT_WINDOW]);
        assert!(latent.is_full());
        assert!(!latent.pop(refs[LATENT_WINDOW]), "the newest was latent");
        assert!(!latent.is_full(), "a finished join leaves the window");
    }

    #[test]
    fn the_owner_reclaims_its_own_job_by_identity_and_thieves_take_the_oldest() {
        let (a, b, c) = (job(), job(), job());
        let (a, b, c) = (a.as_job_ref(), b.as_job_ref(), c.as_job_ref());
        let shared = SharedForks::new();
        assert!(shared.is_empty());
        shared.push(a);
        shared.push(b);
        shared.push(c);
        assert!(shared.reclaim(b), "a job in the middle is found");
        assert!(!shared.reclaim(b), "and taken once");
        assert_eq!(shared.steal(), Some(a), "thieves take the oldest");
        assert_eq!(shared.pop_newest(), Some(c));
        assert!(shared.is_empty());
        assert_eq!(shared.steal(), None);
        assert!(!shared.reclaim(c), "a stolen job cannot be reclaimed");
    }
}
