//! A loom-friendly stand-in for crossbeam-deque, used only under `cfg(loom)`.
//!
//! crossbeam-deque's lock-free internals are invisible to loom, so the models
//! run against these mutex-protected `VecDeque`s instead. They keep the
//! semantics the scheduler relies on: a LIFO `Worker` whose owner pushes to
//! and pops from the back, `Stealer`s that take from the front (the oldest),
//! batch steals that move up to half of the victim's tasks, and an `Injector`
//! any thread pushes to. They never return `Retry` (a lock cannot lose a
//! race), which the scheduler treats the same as a success that moved nothing.
//!
//! One thing they must *not* add is synchronization the real queues lack.
//! crossbeam's `is_empty` is a plain atomic read of the queue's indices, with
//! no lock; if the stand-in answered `is_empty` under its mutex, that mutex
//! would order the sleeper's second look after every earlier push and hide
//! the fences the sleep protocol depends on (a model with the spawner's fence
//! removed would still pass). So `is_empty` and `len` read a separate atomic
//! length, published with `Release` after each change: a reader without other
//! synchronization may see a stale length, as with crossbeam.

use crate::sync::atomic::{AtomicUsize, Ordering};
use crate::sync::{lock, Arc, Mutex};
use std::collections::VecDeque;

/// The outcome of a steal, as in crossbeam-deque.
#[must_use]
pub(crate) enum Steal<T> {
    Empty,
    Success(T),
    #[allow(dead_code)]
    Retry,
}

/// A queue: the tasks under a mutex, and their count in an atomic that
/// lock-free readers (`is_empty`, `len`) use.
struct Queue<T> {
    tasks: Mutex<VecDeque<T>>,
    len: AtomicUsize,
}

impl<T> Queue<T> {
    fn new() -> Self {
        Queue {
            tasks: Mutex::new(VecDeque::new()),
            len: AtomicUsize::new(0),
        }
    }

    /// Runs `f` on the tasks, then publishes their new count.
    fn with<R>(&self, f: impl FnOnce(&mut VecDeque<T>) -> R) -> R {
        let mut tasks = lock(&self.tasks);
        let result = f(&mut tasks);
        self.len.store(tasks.len(), Ordering::Release);
        result
    }

    fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }
}

/// Moves the front task of `from` plus up to half of the rest (at most
/// `limit` in all) to `dest`, returning the front one.
fn move_batch<T>(from: &Queue<T>, dest: &Worker<T>, limit: usize) -> Steal<T> {
    let mut batch = Vec::new();
    let first = from.with(|tasks| {
        let first = tasks.pop_front()?;
        let n = tasks.len().div_ceil(2).min(limit.saturating_sub(1));
        batch.extend(tasks.drain(..n));
        Some(first)
    });
    match first {
        None => Steal::Empty,
        Some(first) => {
            if !batch.is_empty() {
                dest.queue.with(|tasks| tasks.extend(batch));
            }
            Steal::Success(first)
        }
    }
}

/// The global queue.
pub(crate) struct Injector<T> {
    queue: Queue<T>,
}

impl<T> Injector<T> {
    pub(crate) fn new() -> Self {
        Injector {
            queue: Queue::new(),
        }
    }

    pub(crate) fn push(&self, task: T) {
        self.queue.with(|tasks| tasks.push_back(task));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queue.len() == 0
    }

    #[allow(dead_code)]
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    pub(crate) fn steal(&self) -> Steal<T> {
        match self.queue.with(VecDeque::pop_front) {
            Some(task) => Steal::Success(task),
            None => Steal::Empty,
        }
    }

    pub(crate) fn steal_batch_with_limit_and_pop(
        &self,
        dest: &Worker<T>,
        limit: usize,
    ) -> Steal<T> {
        move_batch(&self.queue, dest, limit)
    }
}

/// A worker's own LIFO queue.
pub(crate) struct Worker<T> {
    queue: Arc<Queue<T>>,
}

impl<T> Worker<T> {
    pub(crate) fn new_lifo() -> Self {
        Worker {
            queue: Arc::new(Queue::new()),
        }
    }

    pub(crate) fn push(&self, task: T) {
        self.queue.with(|tasks| tasks.push_back(task));
    }

    pub(crate) fn pop(&self) -> Option<T> {
        self.queue.with(VecDeque::pop_back)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queue.len() == 0
    }

    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    pub(crate) fn stealer(&self) -> Stealer<T> {
        Stealer {
            queue: Arc::clone(&self.queue),
        }
    }
}

/// A peer's handle on a worker's queue.
pub(crate) struct Stealer<T> {
    queue: Arc<Queue<T>>,
}

impl<T> Clone for Stealer<T> {
    fn clone(&self) -> Self {
        Stealer {
            queue: Arc::clone(&self.queue),
        }
    }
}

impl<T> Stealer<T> {
    pub(crate) fn is_empty(&self) -> bool {
        self.queue.len() == 0
    }

    #[allow(dead_code)]
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    pub(crate) fn steal_batch_and_pop(&self, dest: &Worker<T>) -> Steal<T> {
        if Arc::ptr_eq(&self.queue, &dest.queue) {
            return Steal::Empty;
        }
        move_batch(&self.queue, dest, usize::MAX)
    }
}
