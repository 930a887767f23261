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

/// Something to run on two pools of the same kind at once.
pub trait PairScenario {
    /// What one run measures.
    type Output;
    /// Runs once on `a` and `b`, each with `threads` workers.
    fn run<P: Spawner>(&self, a: &'static P, b: &'static P, threads: usize) -> Self::Output;
}

/// dreadpool's builder settings that a run may change from their defaults
/// (`compare --backlog`, `--global-shards`); `None` keeps the default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tuning {
    /// `ThreadPoolBuilder::with_backlog`.
    pub backlog: Option<usize>,
    /// `ThreadPoolBuilder::with_global_queue_shards`.
    pub global_queue_shards: Option<usize>,
}

impl Tuning {
    /// `builder` with these settings.
    fn apply(self, mut builder: dreadpool::ThreadPoolBuilder) -> dreadpool::ThreadPoolBuilder {
        if let Some(backlog) = self.backlog {
            builder = builder.with_backlog(backlog);
        }
        if let Some(shards) = self.global_queue_shards {
            builder = builder.with_global_queue_shards(shards);
        }
        builder
    }
}

/// Builds `contender`'s pool with `threads` workers and leaks it; `tuning`
/// applies to dreadpool's.
fn build(contender: Contender, threads: usize, tuning: Tuning, tag: &'static str) -> Built {
    match contender {
        Contender::Dreadpool => {
            let builder = dreadpool::ThreadPoolBuilder::new()
                .with_threads(threads)
                .with_thread_name(format!("bench{tag}-dreadpool"));
            Built::Dreadpool(Box::leak(Box::new(tuning.apply(builder).build())))
        }
        #[cfg(feature = "recorder")]
        Contender::DreadpoolTasks => {
            let builder = dreadpool::ThreadPoolBuilder::new()
                .with_threads(threads)
                .with_thread_name(format!("bench{tag}-recorded"))
                .with_record_level(dreadpool::RecordLevel::Tasks);
            Built::Dreadpool(Box::leak(Box::new(tuning.apply(builder).build())))
        }
        Contender::Rayon => Built::Rayon(Box::leak(Box::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(move |i| format!("bench{tag}-rayon-{i}"))
                .build()
                .expect("rayon pool"),
        ))),
        Contender::Threadpool => Built::Threadpool(Box::leak(Box::new(
            threadpool::Builder::new()
                .num_threads(threads)
                .thread_name(format!("bench{tag}-threadpool"))
                .build(),
        ))),
        Contender::Tokio => Built::Tokio(Box::leak(Box::new(
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(threads)
                .thread_name(format!("bench{tag}-tokio"))
                .build()
                .expect("tokio runtime"),
        ))),
        // (The seed's threads are unnamed, as in the seed.)
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
    tuning: Tuning,
    /// Goes into the thread names (`bench{tag}-...`), to tell two sets'
    /// threads apart.
    tag: &'static str,
    built: Vec<(Contender, Built)>,
}

impl PoolSet {
    /// An empty set for pools of `threads` workers.
    pub fn new(threads: usize) -> Self {
        PoolSet {
            threads,
            tuning: Tuning::default(),
            tag: "",
            built: Vec::new(),
        }
    }

    /// Sets dreadpool's builder settings for the pools built from now on.
    pub fn with_tuning(mut self, tuning: Tuning) -> Self {
        self.tuning = tuning;
        self
    }

    /// Names the set's threads `bench{tag}-...` (default: `bench-...`).
    pub fn with_tag(mut self, tag: &'static str) -> Self {
        self.tag = tag;
        self
    }

    /// The worker count of every pool in the set.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// `contender`'s pool, built on first use.
    fn get(&mut self, contender: Contender) -> Built {
        match self.built.iter().find(|(c, _)| *c == contender) {
            Some((_, built)) => *built,
            None => {
                let built = build(contender, self.threads, self.tuning, self.tag);
                self.built.push((contender, built));
                built
            }
        }
    }

    /// Runs `scenario` on `contender`'s pool of this set and of `other`, at
    /// once (two pools in one process).
    pub fn run_pair<S: PairScenario>(
        &mut self,
        other: &mut PoolSet,
        contender: Contender,
        scenario: &S,
    ) -> S::Output {
        let (a, b) = (self.get(contender), other.get(contender));
        let threads = self.threads;
        match (a, b) {
            (Built::Dreadpool(a), Built::Dreadpool(b)) => scenario.run(a, b, threads),
            (Built::Rayon(a), Built::Rayon(b)) => scenario.run(a, b, threads),
            (Built::Threadpool(a), Built::Threadpool(b)) => scenario.run(a, b, threads),
            (Built::Tokio(a), Built::Tokio(b)) => scenario.run(a, b, threads),
            (Built::Seed(a), Built::Seed(b)) => scenario.run(a, b, threads),
            _ => unreachable!("both sets build the same contender's kind of pool"),
        }
    }

    /// Runs `scenario` once on `contender`'s pool (building it first if
    /// needed).
    pub fn run<S: Scenario>(&mut self, contender: Contender, scenario: &S) -> S::Output {
        let built = self.get(contender);
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
