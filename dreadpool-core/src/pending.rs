//! Counting the tasks that are queued or running, without a shared hot counter.
//!
//! `join()`, shutdown and the `tasks_pending` gauge all need "how many tasks
//! are queued or running". One shared `AtomicUsize` incremented on every spawn
//! and decremented after every task would bounce one cache line between all
//! cores twice per task (rayon measured a 5.8x slowdown from exactly this). So
//! the count is sharded by writer:
//!
//! - `external`, one per shard of the global queue (`queue/global.rs`):
//!   tasks spawned from threads outside the pool, each counted in its
//!   spawner's home shard's count. Any thread may spawn from outside, so
//!   these are `fetch_add`s; but workers only *read* them when they run out
//!   of work, so a count's cache line stays with its shard's spawners, and
//!   spawners with different home shards never write the same line.
//! - per worker, `spawned` (tasks that worker's tasks spawned into its local
//!   queue) and `completed` (tasks that worker finished). Each has a single
//!   writer, the worker itself, which updates it with a plain load and store.
//!
//! ## Why the sum never shows a false zero
//!
//! [`TaskCounts::pending`] reads every `completed` first, then every
//! `spawned`. A task is counted as spawned *before* it is pushed to a queue,
//! and the queue's release/acquire hand-off means its spawn count
//! happens-before it runs, which happens-before its completion is stored
//! (release). So for every completion the reader sees (acquire), it also sees
//! the matching spawn when it reads the spawn counters afterwards. A task that
//! spawns children counts them before it completes, so a running parent with
//! unread children always keeps the sum above zero. The sum is therefore zero
//! only if every task whose spawn happened-before the read has completed: a
//! genuine idle moment, which is exactly what `join()` promises to wait for.
//!
//! "Happened-before the read" is the caller's job. A joiner reads after its
//! own spawns (program order). A worker deciding for a joiner first loads the
//! joiner's registration with `Acquire` (see `IdleLatch::has_waiters`), which
//! makes the joiner's earlier spawns visible; a worker deciding to exit during
//! shutdown relies on the read-modify-write described at `pending`.

use crate::sync::atomic::{AtomicU64, Ordering};
use crossbeam_utils::CachePadded;

/// Spawn and completion counts, sharded by writer.
pub(crate) struct TaskCounts {
    /// Shard 0's count of outside spawns, kept in the struct for the same
    /// reason as `GlobalQueue`'s first shard (`queue/global.rs`).
    external: CachePadded<AtomicU64>,
    /// Shards 1 and up.
    external_others: Box<[CachePadded<AtomicU64>]>,
    workers: Box<[CachePadded<WorkerCounts>]>,
}

/// The counts written by one worker (and only by it).
struct WorkerCounts {
    spawned: AtomicU64,
    completed: AtomicU64,
}

/// Single-writer increment: no locked read-modify-write needed, because no
/// other thread ever stores to `counter`. `Release` publishes everything the
/// writer did before (the spawn count, the task's effects) to an `Acquire`
/// reader of the counter.
fn bump(counter: &AtomicU64) {
    counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Release);
}

impl TaskCounts {
    pub(crate) fn new(workers: usize, shards: usize) -> Self {
        TaskCounts {
            external: CachePadded::new(AtomicU64::new(0)),
            external_others: (1..shards.max(1))
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
            workers: (0..workers)
                .map(|_| {
                    CachePadded::new(WorkerCounts {
                        spawned: AtomicU64::new(0),
                        completed: AtomicU64::new(0),
                    })
                })
                .collect(),
        }
    }

    /// Counts a task about to be pushed to the global queue's shard
    /// `shard`, in that shard's count.
    ///
    /// `AcqRel`, pairing with the read-modify-write in [`pending`]: either
    /// the spawner sees the shutdown flag and backs out, or the draining
    /// workers see this count and wait for the task (the argument is in
    /// `sleep/README.md`, "Shutdown racing spawn").
    ///
    /// [`pending`]: Self::pending
    #[inline(always)]
    pub(crate) fn external_spawned(&self, shard: usize) {
        self.external_of(shard).fetch_add(1, Ordering::AcqRel);
    }

    /// Shard `shard`'s count of outside spawns.
    #[inline(always)]
    fn external_of(&self, shard: usize) -> &AtomicU64 {
        match shard {
            0 => &self.external,
            _ => &self.external_others[shard - 1],
        }
    }

    /// Every shard's count of outside spawns, from 0.
    fn externals(&self) -> impl Iterator<Item = &AtomicU64> {
        std::iter::once(&*self.external).chain(self.external_others.iter().map(|c| &**c))
    }

    /// Takes back an [`external_spawned`](Self::external_spawned) whose task
    /// was refused (the pool was shutting down) and never queued: the same
    /// `shard`.
    pub(crate) fn external_refused(&self, shard: usize) {
        self.external_of(shard).fetch_sub(1, Ordering::AcqRel);
    }

    /// Counts a task that worker `index` is about to push to its own queue.
    /// Must be called on worker `index`'s thread.
    pub(crate) fn local_spawned(&self, index: usize) {
        bump(&self.workers[index].spawned);
    }

    /// Counts a task that worker `index` finished. Must be called on worker
    /// `index`'s thread, after everything the task did (including counting its
    /// children and handling its panic).
    pub(crate) fn completed(&self, index: usize) {
        bump(&self.workers[index].completed);
    }

    /// Tasks spawned from outside the pool so far (refused ones excluded).
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) fn external_total(&self) -> u64 {
        self.externals().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// Tasks worker `index` finished so far.
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) fn completed_by(&self, index: usize) -> u64 {
        self.workers[index].completed.load(Ordering::Relaxed)
    }

    /// Tasks worker `index`'s tasks spawned into its local queue so far.
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) fn spawned_by(&self, index: usize) -> u64 {
        self.workers[index].spawned.load(Ordering::Relaxed)
    }

    /// Tasks queued or running. See the module docs for why this never reads
    /// zero while a task that happened-before the call is unfinished.
    pub(crate) fn pending(&self) -> u64 {
        let completed: u64 = self
            .workers
            .iter()
            .map(|w| w.completed.load(Ordering::Acquire))
            .sum();
        // A read-modify-write, not a load: it reads the latest count in the
        // counter's modification order. A draining worker calls this after
        // reading the shutdown flag (acquire); a racing spawner counted
        // before reading the flag. If the spawner's count comes first in the
        // counter's order, this sees it; if this comes first, the spawner's
        // count acquires from it (AcqRel), hence from the flag store the
        // worker had read, and the spawner sees the flag and backs out.
        // No reliance on a single SeqCst order of loads and stores, which
        // loom does not model (it models SeqCst fences). Per shard: a
        // spawner counts in its home shard's count, and this argument holds
        // for each count on its own, so every one is read this way.
        let external: u64 = if broken!("__broken_pending_one_shard") {
            // The broken variant reads the last shard's count alone.
            let last = self.external_others.len();
            self.external_of(last).fetch_add(0, Ordering::AcqRel)
        } else {
            self.externals()
                .map(|c| c.fetch_add(0, Ordering::AcqRel))
                .sum()
        };
        let spawned: u64 = external
            + self
                .workers
                .iter()
                .map(|w| w.spawned.load(Ordering::Acquire))
                .sum::<u64>();
        spawned.saturating_sub(completed)
    }

    /// True when no task is queued or running.
    pub(crate) fn is_idle(&self) -> bool {
        self.pending() == 0
    }
}
