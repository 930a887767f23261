//! Task identities for the flight recorder's `Tasks` level: a word in each
//! recorded task's box (`task.rs`, `Identified`) that links its spawn to its
//! run, never given twice in a process (`recorder/README.md` says why not
//! the box's address).

/// A fresh identity for a task (`Task::record_id`), never given before in
/// this process, for a spawn from a thread outside the pool (a worker
/// takes its own, `SeatRing::next_task_id`).
#[inline(always)]
pub(crate) fn next_task_id() -> u64 {
    thread_local! {
        static MINE: TaskIds = const { TaskIds::new() };
    }
    MINE.with(TaskIds::next)
}

/// A thread's task identities: a block of them at a time from a
/// process-wide counter, so that a spawn touches no line that other
/// threads write, and no identity is given twice.
pub(crate) struct TaskIds {
    /// The next identity and the end of the block.
    block: std::cell::Cell<(u64, u64)>,
}

impl TaskIds {
    /// Identities per block.
    const BLOCK: u64 = 1 << 16;

    pub(crate) const fn new() -> Self {
        TaskIds {
            block: std::cell::Cell::new((0, 0)),
        }
    }

    #[inline(always)]
    pub(crate) fn next(&self) -> u64 {
        /// The next block; block 0 is never handed out, so no identity is
        /// 0 (the mark of a task without one).
        static NEXT_BLOCK: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let (next, end) = self.block.get();
        if next < end {
            self.block.set((next + 1, end));
            return next;
        }
        let start = NEXT_BLOCK.fetch_add(1, std::sync::atomic::Ordering::Relaxed) * Self::BLOCK;
        self.block.set((start + 1, start + Self::BLOCK));
        start
    }
}
