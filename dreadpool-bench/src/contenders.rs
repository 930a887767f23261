//! The contenders behind one trait, built once per thread count and kept for
//! the life of the process, as an application keeps its pool.
//!
//! Pools are leaked into `&'static` references so that a task can capture the
//! pool it spawns into as one plain pointer: no `Arc` clone (a contended
//! reference count) per task, for anyone.

use crate::seed::SeedPool;
use std::fmt;
use std::str::FromStr;

/// A pool that runs `'static` closures. Spawning from one of the pool's own
/// tasks must work (and goes wherever that pool puts inside work).
pub trait Spawner: Send + Sync + 'static {
    /// Runs `task` on the pool, from outside or from one of its own tasks.
    fn spawn<F>(&'static self, task: F)
    where
        F: FnOnce() + Send + 'static;
}

impl Spawner for dreadpool::ThreadPool {
    #[inline]
    fn spawn<F>(&'static self, task: F)
    where
        F: FnOnce() + Send + 'static,
    {
        dreadpool::ThreadPool::spawn(self, task);
    }
}

impl Spawner for rayon::ThreadPool {
    #[inline]
    fn spawn<F>(&'static self, task: F)
    where
        F: FnOnce() + Send + 'static,
    {
        // From one of this pool's workers rayon pushes to that worker's deque.
        rayon::ThreadPool::spawn(self, task);
    }
}

impl Spawner for threadpool::ThreadPool {
    #[inline]
    fn spawn<F>(&'static self, task: F)
    where
        F: FnOnce() + Send + 'static,
    {
        self.execute(task);
    }
}

impl Spawner for tokio::runtime::Runtime {
    #[inline]
    fn spawn<F>(&'static self, task: F)
    where
        F: FnOnce() + Send + 'static,
    {
        // From one of the runtime's workers tokio pushes to its local queue.
        drop(tokio::runtime::Runtime::spawn(self, async move { task() }));
    }
}

impl Spawner for SeedPool {
    #[inline]
    fn spawn<F>(&'static self, task: F)
    where
        F: FnOnce() + Send + 'static,
    {
        SeedPool::spawn(self, task);
    }
}

/// One of the pools under comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Contender {
    /// This project.
    Dreadpool,
    /// rayon's `ThreadPool::spawn`.
    Rayon,
    /// threadpool 1.8's `execute`.
    Threadpool,
    /// tokio's multi-thread runtime, `spawn` of an async block.
    Tokio,
    /// The seed's original design ([`crate::seed`]).
    Seed,
    /// dreadpool with its flight recorder at `RecordLevel::Tasks` (every
    /// spawn and run recorded): not a peer, a measure of the recorder's cost
    /// (`--features recorder` only).
    #[cfg(feature = "recorder")]
    DreadpoolTasks,
}

impl Contender {
    /// Every contender, dreadpool first.
    pub const ALL: &'static [Contender] = &[
        Contender::Dreadpool,
        Contender::Rayon,
        Contender::Threadpool,
        Contender::Tokio,
        Contender::Seed,
        #[cfg(feature = "recorder")]
        Contender::DreadpoolTasks,
    ];

    /// Whether this is one of the other pools dreadpool is compared with
    /// (dreadpool's own variants are not).
    pub fn is_peer(self) -> bool {
        match self {
            Contender::Dreadpool => false,
            #[cfg(feature = "recorder")]
            Contender::DreadpoolTasks => false,
            _ => true,
        }
    }

    /// The name used on the command line and in the table.
    pub fn name(self) -> &'static str {
        match self {
            Contender::Dreadpool => "dreadpool",
            Contender::Rayon => "rayon",
            Contender::Threadpool => "threadpool",
            Contender::Tokio => "tokio",
            Contender::Seed => "seed",
            #[cfg(feature = "recorder")]
            Contender::DreadpoolTasks => "dreadpool-tasks",
        }
    }
}

impl fmt::Display for Contender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Contender {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Contender::ALL
            .iter()
            .copied()
            .find(|c| c.name() == s)
            .ok_or_else(|| format!("unknown contender {s:?}"))
    }
}

/// Something to run on any contender's pool: a generic function in disguise,
/// so that each contender gets its own monomorphised, inlined copy.
pub trait Scenario {
    /// What one run measures.
    type Output;
    /// Runs once on `pool`, which has `threads` workers.
    fn run<P: Spawner>(&self, pool: &'static P, threads: usize) -> Self::Output;
}

/// Builds `contender`'s pool with `threads` workers and leaks it.
/// `backlog` overrides dreadpool's `with_backlog` default.
fn build(contender: Contender, threads: usize, backlog: Option<usize>) -> Built {
    match contender {
        Contender::Dreadpool => {
            let mut builder = dreadpool::ThreadPoolBuilder::new()
                .with_threads(threads)
                .with_thread_name("bench-dreadpool");
            if let Some(backlog) = backlog {
                builder = builder.with_backlog(backlog);
            }
            Built::Dreadpool(Box::leak(Box::new(builder.build())))
        }
        #[cfg(feature = "recorder")]
        Contender::DreadpoolTasks => {
            let mut builder = dreadpool::ThreadPoolBuilder::new()
                .with_threads(threads)
                .with_thread_name("bench-recorded")
                .with_record_level(dreadpool::RecordLevel::Tasks);
            if let Some(backlog) = backlog {
                builder = builder.with_backlog(backlog);
            }
            Built::Dreadpool(Box::leak(Box::new(builder.build())))
        }
        Contender::Rayon => Built::Rayon(Box::leak(Box::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(|i| format!("bench-rayon-{i}"))
                .build()
                .expect("rayon pool"),
        ))),
        Contender::Threadpool => Built::Threadpool(Box::leak(Box::new(
            threadpool::Builder::new()
                .num_threads(threads)
                .thread_name("bench-threadpool".into())
                .build(),
        ))),
        Contender::Tokio => Built::Tokio(Box::leak(Box::new(
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(threads)
                .thread_name("bench-tokio")
                .build()
                .expect("tokio runtime"),
        ))),
        Contender::Seed => Built::Seed(Box::leak(Box::new(SeedPool::new(threads)))),
    }
}

/// A built, leaked pool.
#[derive(Clone, Copy)]
enum Built {
    Dreadpool(&'static dreadpool::ThreadPool),
    Rayon(&'static rayon::ThreadPool),
    Threadpool(&'static threadpool::ThreadPool),
    Tokio(&'static tokio::runtime::Runtime),
    Seed(&'static SeedPool),
}

/// Pools of one thread count, built on first use and kept.
pub struct PoolSet {
    threads: usize,
    backlog: Option<usize>,
    built: Vec<(Contender, Built)>,
}

impl PoolSet {
    /// An empty set for pools of `threads` workers.
    pub fn new(threads: usize) -> Self {
        PoolSet {
            threads,
            backlog: None,
            built: Vec::new(),
        }
    }

    /// Sets dreadpool's backlog (`ThreadPoolBuilder::with_backlog`) for the
    /// pools built from now on; `None` keeps dreadpool's default.
    pub fn with_backlog(mut self, backlog: Option<usize>) -> Self {
        self.backlog = backlog;
        self
    }

    /// The worker count of every pool in the set.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `scenario` once on `contender`'s pool (building it first if
    /// needed).
    pub fn run<S: Scenario>(&mut self, contender: Contender, scenario: &S) -> S::Output {
        let built = match self.built.iter().find(|(c, _)| *c == contender) {
            Some((_, built)) => *built,
            None => {
                let built = build(contender, self.threads, self.backlog);
                self.built.push((contender, built));
                built
            }
        };
        let threads = self.threads;
        match built {
            Built::Dreadpool(p) => scenario.run(p, threads),
            Built::Rayon(p) => scenario.run(p, threads),
            Built::Threadpool(p) => scenario.run(p, threads),
            Built::Tokio(p) => scenario.run(p, threads),
            Built::Seed(p) => scenario.run(p, threads),
        }
    }
}

impl fmt::Debug for PoolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolSet")
            .field("threads", &self.threads)
            .field(
                "built",
                &self.built.iter().map(|(c, _)| *c).collect::<Vec<_>>(),
            )
            .finish()
    }
}
