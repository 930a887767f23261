//! Which workers are not registered as sleepers: a hint that spares a
//! searcher the polls of queues that are certainly empty.
//!
//! A registered sleeper's local queue is empty. Only its owner pushes to it
//! (its tasks' spawns, and the batches it pulls or steals), and the owner
//! registers to sleep only after finding it empty; it sets its bit again
//! before it takes any task after waking (`Sleep::park`, `Sleep::cancel`).
//! So a searcher that skips the queues of workers whose bit is clear skips
//! nothing it could have stolen.
//!
//! Nothing depends on the hint for correctness, which is why every access
//! is `Relaxed`: a stale clear bit makes a searcher skip a worker that has
//! just woken and pulled work, and a task in an awake worker's queue is run
//! by that worker whoever else looks (the argument that lets a local spawn
//! skip the fence, `README.md`, "Spawns from inside the pool"). A stale set
//! bit costs one poll of an empty queue, as before the hint.

use crate::sync::atomic::{AtomicU64, Ordering};

/// One bit per worker, set while the worker is not registered as a sleeper.
pub(crate) struct AwakeSet {
    words: Box<[AtomicU64]>,
}

impl AwakeSet {
    /// Every one of `workers` awake, as they start.
    pub(crate) fn new(workers: usize) -> Self {
        AwakeSet {
            words: (0..workers.div_ceil(64))
                .map(|_| AtomicU64::new(u64::MAX))
                .collect(),
        }
    }

    fn word_and_bit(index: usize) -> (usize, u64) {
        (index / 64, 1 << (index % 64))
    }

    /// Worker `index` registers as a sleeper (its queue is empty).
    pub(crate) fn remove(&self, index: usize) {
        let (word, bit) = Self::word_and_bit(index);
        self.words[word].fetch_and(!bit, Ordering::Relaxed);
    }

    /// Worker `index` is awake again, before it takes any task.
    pub(crate) fn insert(&self, index: usize) {
        let (word, bit) = Self::word_and_bit(index);
        self.words[word].fetch_or(bit, Ordering::Relaxed);
    }

    /// Whether worker `index` may have tasks in its local queue: false only
    /// for a registered sleeper.
    #[inline]
    pub(crate) fn contains(&self, index: usize) -> bool {
        let (word, bit) = Self::word_and_bit(index);
        self.words[word].load(Ordering::Relaxed) & bit != 0
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::AwakeSet;

    #[test]
    fn workers_start_awake_and_each_bit_is_its_own() {
        let set = AwakeSet::new(130);
        assert!((0..130).all(|i| set.contains(i)));
        for i in [0, 63, 64, 129] {
            set.remove(i);
        }
        let asleep: Vec<usize> = (0..130).filter(|&i| !set.contains(i)).collect();
        assert_eq!(asleep, [0, 63, 64, 129]);
        set.insert(64);
        assert!(set.contains(64) && !set.contains(63) && !set.contains(129));
    }
}
