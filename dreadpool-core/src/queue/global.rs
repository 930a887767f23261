//! The global queue: where tasks spawned from outside the pool wait for a
//! worker, as one crossbeam `Injector` or as several (shards).
//!
//! With one shard every outside spawn pushes onto the same `Injector`, whose
//! tail index is one cache line that every spawning thread writes: threads
//! spawning at once take turns on it, and the line moves between their cores
//! at each push (tokio#8483 measured 8 spawning threads taking 4x longer than
//! one for the same work, with a mutex in the same place). With `n` shards
//! (`ThreadPoolBuilder::with_global_queue_shards`), each spawning thread
//! pushes onto its own home shard, so `t` spawning threads share each line
//! `t / n` ways instead of `t`; one thread's tasks stay together, as on one
//! queue, for workers to take in batches.
//!
//! Workers take from every shard, starting with their own home shard (worker
//! `i`'s is `i % n`, so that the shards are drained from every side). The
//! sleep protocol is unchanged in shape: a spawner pushes onto its shard,
//! then takes its fence; a sleeper registers, takes its fence, then looks at
//! *every* shard ([`GlobalQueue::is_empty`]), so either it sees the task or
//! the spawner sees it registered (`sleep/README.md`, "Sharded global
//! queue"). The counts that `join()` and shutdown read are sharded the same
//! way (`pending.rs`), so a spawner writes no line another spawning thread
//! writes, unless the two share a home shard.
//!
//! The cost of more shards falls on the workers, not the spawners: a search
//! that finds nothing polls every shard, and a sleeper's second look reads
//! them all. One shard, the default, is the queue of every earlier release.

use super::{Injector, Steal, Worker};
use crate::task::Task;

/// The most shards a global queue may have.
pub(crate) const MAX_SHARDS: usize = 64;

/// The global queue, in one or more shards.
///
/// Shard 0 is kept in the struct itself, the others behind a pointer: with
/// one shard (the default) a spawn reaches the queue as it did before there
/// were shards, with no load of a pointer on the way.
#[repr(C)]
pub(crate) struct GlobalQueue {
    /// Shards 1 and up. First, in a cache line of its own (the injector's
    /// alignment pads it): every outside spawn reads its length, and no
    /// field that others write may share that line.
    others: Box<[Injector<Task>]>,
    first: Injector<Task>,
}

impl GlobalQueue {
    /// A queue of `shards` shards, `1..=MAX_SHARDS` (the builder checks).
    pub(crate) fn new(shards: usize) -> Self {
        debug_assert!((1..=MAX_SHARDS).contains(&shards));
        GlobalQueue {
            first: Injector::new(),
            others: (1..shards.max(1)).map(|_| Injector::new()).collect(),
        }
    }

    /// Whether there is more than one shard.
    #[inline(always)]
    pub(crate) fn is_sharded(&self) -> bool {
        !self.others.is_empty()
    }

    /// How many shards there are.
    #[inline(always)]
    fn count(&self) -> usize {
        self.others.len() + 1
    }

    /// Every shard, from 0.
    fn all(&self) -> impl Iterator<Item = &Injector<Task>> {
        std::iter::once(&self.first).chain(self.others.iter())
    }

    /// The calling thread's home shard, which its outside spawns go to.
    ///
    /// With one shard, 0 without looking at the thread; else the thread's
    /// ordinal (see [`thread_ordinal`]) modulo the shard count, so that
    /// threads that start spawning one after the other land on different
    /// shards, round the shards in turn.
    #[inline(always)]
    pub(crate) fn home_of_this_thread(&self) -> usize {
        if self.others.is_empty() {
            0
        } else {
            thread_ordinal() % self.count()
        }
    }

    /// Worker `index`'s home shard, the first it takes from.
    pub(crate) fn home_of_worker(&self, index: usize) -> usize {
        index % self.count()
    }

    /// Shard `shard`'s queue.
    #[inline(always)]
    pub(crate) fn shard(&self, shard: usize) -> &Injector<Task> {
        match shard {
            0 => &self.first,
            _ => &self.others[shard - 1],
        }
    }

    /// True when no shard holds a task (each read as crossbeam's `is_empty`
    /// reads it: no ordering beyond the caller's fences).
    pub(crate) fn is_empty(&self) -> bool {
        if broken!("__broken_second_look_home_shard") {
            // The broken variant: a second look at shard 0 (the only
            // worker's home in the model) alone.
            return self.first.is_empty();
        }
        self.all().all(Injector::is_empty)
    }

    /// Tasks waiting, over every shard (a snapshot, for the metrics).
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) fn len(&self) -> usize {
        self.all().map(Injector::len).sum()
    }

    /// Moves up to `limit` tasks of one shard into `dest` and returns one of
    /// them to run: the shard `home` first, then the next ones in turn, so
    /// a batch never mixes shards. `None` when every shard was empty.
    #[inline]
    pub(crate) fn pull_batch(
        &self,
        home: usize,
        dest: &Worker<Task>,
        limit: usize,
    ) -> Option<Task> {
        let shards = self.count();
        for k in 0..shards {
            let shard = if shards == 1 { 0 } else { (home + k) % shards };
            loop {
                match self
                    .shard(shard)
                    .steal_batch_with_limit_and_pop(dest, limit)
                {
                    Steal::Success(task) => return Some(task),
                    Steal::Empty => break,
                    Steal::Retry => continue,
                }
            }
        }
        None
    }
}

/// This thread's ordinal: the count of threads that asked before it, over
/// the process. Threads in no pool ask on their first outside spawn into a
/// pool with more than one shard; the ordinal is kept for the thread's
/// life, so its spawns always go to the same shard of a given pool.
fn thread_ordinal() -> usize {
    use crate::sync::atomic::Ordering;
    use std::cell::Cell;

    #[cfg(not(loom))]
    static NEXT: crate::sync::atomic::AtomicUsize = crate::sync::atomic::AtomicUsize::new(0);
    #[cfg(loom)]
    loom::lazy_static! {
        static ref NEXT: crate::sync::atomic::AtomicUsize = crate::sync::atomic::AtomicUsize::new(0);
    }

    #[cfg(not(loom))]
    std::thread_local! {
        static ORDINAL: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    #[cfg(loom)]
    loom::thread_local! {
        static ORDINAL: Cell<usize> = Cell::new(usize::MAX);
    }

    ORDINAL.with(|ordinal| {
        if ordinal.get() == usize::MAX {
            // Relaxed: a unique number is all that is needed.
            ordinal.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        ordinal.get()
    })
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::queue::Worker;
    use crate::task::Task;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A task that adds `n` to `sum` when run.
    fn adds(sum: &Arc<AtomicUsize>, n: usize) -> Task {
        let sum = Arc::clone(sum);
        Task::new(move || {
            sum.fetch_add(n, Ordering::Relaxed);
        })
    }

    #[test]
    fn a_pull_takes_its_home_shard_first_then_the_next_ones_in_turn() {
        let global = GlobalQueue::new(3);
        let sum = Arc::new(AtomicUsize::new(0));
        global.shard(0).push(adds(&sum, 1));
        global.shard(2).push(adds(&sum, 100));
        let local = Worker::new_lifo();
        // From home 1: shard 1 is empty, shard 2 is next.
        global.pull_batch(1, &local, 8).expect("a task").run();
        assert_eq!(sum.load(Ordering::Relaxed), 100);
        // From home 1 again: 2 is empty now, and the scan wraps round to 0.
        global.pull_batch(1, &local, 8).expect("a task").run();
        assert_eq!(sum.load(Ordering::Relaxed), 101);
        assert!(global.pull_batch(1, &local, 8).is_none());
        assert!(local.is_empty());
    }

    #[test]
    fn a_batch_never_mixes_shards() {
        let global = GlobalQueue::new(2);
        let sum = Arc::new(AtomicUsize::new(0));
        for _ in 0..4 {
            global.shard(0).push(adds(&sum, 1));
            global.shard(1).push(adds(&sum, 1000));
        }
        let local = Worker::new_lifo();
        global.pull_batch(1, &local, 16).expect("a task").run();
        while let Some(task) = local.pop() {
            task.run();
        }
        // Only shard 1's tasks, however many the batch took.
        let taken = sum.load(Ordering::Relaxed);
        assert_eq!(taken % 1000, 0, "a batch from shard 1 took {taken}");
        assert!(!global.shard(0).is_empty() && !global.is_empty());
        assert_eq!(global.len(), 4 + 4 - taken / 1000);
    }

    #[test]
    fn the_queue_is_empty_only_when_every_shard_is() {
        let global = GlobalQueue::new(4);
        assert!(global.is_empty());
        global.shard(3).push(Task::new(|| {}));
        assert!(!global.is_empty());
        assert_eq!(global.len(), 1);
        let local = Worker::new_lifo();
        global.pull_batch(0, &local, 1).expect("the task").run();
        assert!(global.is_empty());
    }

    #[test]
    fn a_thread_keeps_its_home_shard_and_workers_spread_over_them() {
        let global = GlobalQueue::new(4);
        let home = global.home_of_this_thread();
        assert!(home < 4);
        assert!((0..100).all(|_| global.home_of_this_thread() == home));
        assert_eq!(GlobalQueue::new(1).home_of_this_thread(), 0);
        let homes: Vec<_> = (0..8).map(|i| global.home_of_worker(i)).collect();
        assert_eq!(homes, [0, 1, 2, 3, 0, 1, 2, 3]);
    }
}
