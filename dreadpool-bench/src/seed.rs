//! A faithful copy of the seed's original design, as a contender.
//!
//! This is the pool that `shared/seed/dreadpool-seed-readme.txt` describes,
//! with its two lost-wakeup fixes and nothing more, so that the benchmark can
//! show what dreadpool's changes bought:
//!
//! - every [`SeedPool::spawn`], from outside *or from inside a task*, takes
//!   the one `Mutex<()>`, pushes a `Box<dyn FnOnce() + Send>` onto the global
//!   [`Injector`] and calls `notify_one` on the one `Condvar`;
//! - each worker loops: top off its FIFO local queue from the global queue up
//!   to the backlog target with `steal_batch_with_limit_and_pop` (running the
//!   popped task at once); else pop its local queue; else
//!   `steal_batch_and_pop` from the first peer that has something; else check
//!   the shutdown flag; else take the mutex, look at the global queue once
//!   more, check the flag again, and wait on the condvar;
//! - `join` waits on a single pending-task counter that every spawn
//!   increments and every finished task decrements (one cache line bounced
//!   between all threads twice per task, which is exactly what the seed did
//!   and what dreadpool's sharded counts avoid);
//! - dropping the pool sets the flag, takes the lock, `notify_all`s and joins.
//!
//! The seed's thread replacement (respawning a worker whose task panicked,
//! handing it the old local queue) is kept too, since it is part of the
//! design, though no benchmark panics.

use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{panicking, JoinHandle};

/// The seed's unit of work.
type Task = Box<dyn FnOnce() + Send>;

/// The seed's ideal local backlog (the same default as dreadpool's).
pub const SEED_BACKLOG: usize = 32;

/// What the pool and every worker share.
struct Shared {
    global: Injector<Task>,
    stealers: Vec<Stealer<Task>>,
    shutdown: AtomicBool,
    /// The seed's `mcv`: one mutex and one condvar for every sleeper.
    mcv: (Condvar, Mutex<()>),
    /// Tasks spawned and not yet finished: the seed's `join` counter.
    pending: AtomicUsize,
    /// Joiners wait here for `pending` to reach zero.
    idle: (Condvar, Mutex<()>),
    backlog: usize,
    name: Option<String>,
    stack_size: Option<usize>,
    /// The seed's "janky glue to enable thread replacement".
    threads: Mutex<Vec<JoinHandle<()>>>,
}

/// The seed's thread pool.
///
/// ```
/// use dreadpool_bench::seed::SeedPool;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
///
/// let pool = SeedPool::new(2);
/// let counter = Arc::new(AtomicUsize::new(0));
/// for _ in 0..100 {
///     let counter = Arc::clone(&counter);
///     pool.spawn(move || {
///         counter.fetch_add(1, Ordering::Relaxed);
///     });
/// }
/// pool.join();
/// assert_eq!(counter.load(Ordering::Relaxed), 100);
/// ```
pub struct SeedPool {
    shared: Arc<Shared>,
}

/// Everything one worker thread needs, as in the seed's `WorkerContext`.
struct WorkerContext {
    shared: Arc<Shared>,
    worker: Worker<Task>,
    id: usize,
}

impl SeedPool {
    /// Starts a pool of `threads` workers with the seed's backlog of 32.
    pub fn new(threads: usize) -> Self {
        Self::with_backlog(threads, SEED_BACKLOG)
    }

    /// Starts a pool of `threads` workers keeping `backlog` tasks locally.
    pub fn with_backlog(threads: usize, backlog: usize) -> Self {
        let threads = threads.max(1);
        let workers: Vec<_> = (0..threads).map(|_| Worker::<Task>::new_fifo()).collect();
        let stealers = workers.iter().map(|w| w.stealer()).collect();
        let shared = Arc::new(Shared {
            global: Injector::new(),
            stealers,
            shutdown: AtomicBool::new(false),
            mcv: (Condvar::new(), Mutex::new(())),
            pending: AtomicUsize::new(0),
            idle: (Condvar::new(), Mutex::new(())),
            backlog: backlog.max(1),
            name: Some("seed".to_owned()),
            stack_size: None,
            threads: Mutex::new(Vec::with_capacity(threads)),
        });
        for (id, worker) in workers.into_iter().enumerate() {
            spawn_in_pool(WorkerContext {
                shared: Arc::clone(&shared),
                worker,
                id,
            });
        }
        SeedPool { shared }
    }

    /// The seed's `spawn`: lock, push to the global queue, notify one.
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce() + Send + 'static,
    {
        let shared = &self.shared;
        shared.pending.fetch_add(1, Ordering::SeqCst);
        // take the lock to force a wait on any worker threads trying to register
        let _guard = shared.mcv.1.lock().unwrap_or_else(|e| e.into_inner());
        shared.global.push(Box::new(f));
        // wake up a waiting thread
        shared.mcv.0.notify_one();
    }

    /// Blocks until every spawned task has finished.
    pub fn join(&self) {
        let shared = &self.shared;
        let mut guard = shared.idle.1.lock().unwrap_or_else(|e| e.into_inner());
        while shared.pending.load(Ordering::SeqCst) != 0 {
            guard = shared.idle.0.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// The number of worker threads.
    pub fn threads(&self) -> usize {
        self.shared.stealers.len()
    }
}

impl Drop for SeedPool {
    fn drop(&mut self) {
        let shared = &self.shared;
        shared.shutdown.store(true, Ordering::Release);
        {
            let _guard = shared.mcv.1.lock().unwrap_or_else(|e| e.into_inner());
            shared.mcv.0.notify_all();
        }
        loop {
            let batch =
                std::mem::take(&mut *shared.threads.lock().unwrap_or_else(|e| e.into_inner()));
            if batch.is_empty() {
                break;
            }
            for handle in batch {
                let _ = handle.join();
            }
        }
    }
}

impl std::fmt::Debug for SeedPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeedPool")
            .field("threads", &self.threads())
            .field("pending", &self.shared.pending.load(Ordering::Relaxed))
            .finish()
    }
}

/// The seed's `ThreadPoolBuilder::spawn_in_pool`.
fn spawn_in_pool(ctx: WorkerContext) {
    let shared = Arc::clone(&ctx.shared);
    let mut builder = std::thread::Builder::new();
    if let Some(name) = &shared.name {
        builder = builder.name(format!("{name}-{}", ctx.id));
    }
    if let Some(bytes) = shared.stack_size {
        builder = builder.stack_size(bytes);
    }
    let mut threads = shared.threads.lock().unwrap_or_else(|e| e.into_inner());
    let handle = builder
        .spawn(move || worker_loop(ctx))
        .expect("the seed pool could not start a thread");
    threads.push(handle);
}

/// The seed's worker loop, in the seed's order.
fn worker_loop(ctx: WorkerContext) {
    let shared = Arc::clone(&ctx.shared);
    loop {
        // 1. Top off the local queue from the global queue; run the popped task.
        let len = ctx.worker.len();
        if len < shared.backlog {
            if let Steal::Success(task) = shared
                .global
                .steal_batch_with_limit_and_pop(&ctx.worker, shared.backlog - len)
            {
                run(&shared, task);
                continue;
            }
        }
        // 2. Pull a task off the local queue and run it.
        if let Some(task) = ctx.worker.pop() {
            run(&shared, task);
            continue;
        }
        // 3. Steal a batch from the first available other worker.
        let stolen = shared
            .stealers
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != ctx.id)
            .find_map(|(_, s)| s.steal_batch_and_pop(&ctx.worker).success());
        if let Some(task) = stolen {
            run(&shared, task);
            continue;
        }
        // 4. Time to shut down?
        if shared.shutdown.load(Ordering::Acquire) {
            break;
        }
        // 5. Sleep, with the seed's two fixes: the double check of the global
        // queue and the flag, both under the lock that spawn also takes.
        let guard = shared.mcv.1.lock().unwrap_or_else(|e| e.into_inner());
        if !shared.global.is_empty() {
            continue;
        }
        if shared.shutdown.load(Ordering::Acquire) {
            break;
        }
        let _guard = shared.mcv.0.wait(guard).unwrap_or_else(|e| e.into_inner());
    }
}

/// Runs one task and counts it finished (also when it panics: the counter
/// is decremented by a guard while the panic unwinds to the respawn logic).
fn run(shared: &Shared, task: Task) {
    struct Finished<'a>(&'a Shared);
    impl Drop for Finished<'_> {
        fn drop(&mut self) {
            if self.0.pending.fetch_sub(1, Ordering::SeqCst) == 1 {
                let _guard = self.0.idle.1.lock().unwrap_or_else(|e| e.into_inner());
                self.0.idle.0.notify_all();
            }
        }
    }
    let _finished = Finished(shared);
    task();
}

impl Drop for WorkerContext {
    fn drop(&mut self) {
        if panicking() {
            // The seed's "Indiana Jones move": keep the queue (its stealer is
            // still in every peer's list), hand it to a fresh thread.
            let worker = std::mem::replace(&mut self.worker, Worker::new_fifo());
            spawn_in_pool(WorkerContext {
                shared: Arc::clone(&self.shared),
                worker,
                id: self.id,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_outside_and_nested_spawns() {
        let pool = Arc::new(SeedPool::new(2));
        let done = Arc::new(AtomicUsize::new(0));
        for _ in 0..100 {
            let (p, d) = (Arc::clone(&pool), Arc::clone(&done));
            pool.spawn(move || {
                let d2 = Arc::clone(&d);
                p.spawn(move || {
                    d2.fetch_add(1, Ordering::Relaxed);
                });
                d.fetch_add(1, Ordering::Relaxed);
            });
        }
        pool.join();
        assert_eq!(done.load(Ordering::Relaxed), 200);
        // Break the cycle: tasks held clones of the pool.
        drop(Arc::try_unwrap(pool).ok());
    }

    #[test]
    fn a_panicking_task_is_replaced_and_join_returns() {
        let pool = SeedPool::new(1);
        pool.spawn(|| panic!("seed task panics"));
        let done = Arc::new(AtomicBool::new(false));
        let d = Arc::clone(&done);
        pool.spawn(move || d.store(true, Ordering::Relaxed));
        pool.join();
        assert!(done.load(Ordering::Relaxed));
    }
}
