//! Who forks: each [`Joiner`], its [`Fork`] implementation (zero-sized, so
//! every workload is monomorphised for it), and the pools they fork on.

use std::fmt;
use std::num::NonZeroUsize;

/// How a workload forks two closures. Implemented by zero-sized types so
/// that each contender gets its own monomorphised, inlined recursion.
pub trait Fork {
    /// Runs `a` and `b`, maybe in parallel, and returns both results.
    fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send;
}

/// No fork at all: `a` then `b` on the calling thread (the serial baseline
/// and the reference results).
#[derive(Debug, Clone, Copy)]
pub struct Serial;

impl Fork for Serial {
    #[inline]
    fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        (a(), b())
    }
}

/// `dreadpool::join` (forks on the pool whose task calls it).
#[derive(Debug, Clone, Copy)]
pub struct DreadpoolJoin;

impl Fork for DreadpoolJoin {
    #[inline]
    fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        dreadpool::join(a, b)
    }
}

/// `rayon::join` (forks on the pool whose worker calls it).
#[derive(Debug, Clone, Copy)]
pub struct RayonJoin;

impl Fork for RayonJoin {
    #[inline]
    fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        rayon::join(a, b)
    }
}

/// Who forks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Joiner {
    /// `dreadpool::join` / `ThreadPool::scope`, inside `ThreadPool::install`.
    Dreadpool,
    /// `rayon::join` / `rayon::scope`, inside `ThreadPool::install`.
    Rayon,
    /// chili's `Scope::join`.
    Chili,
    /// The same recursion with no fork, on the bench thread.
    Serial,
}

impl Joiner {
    /// The parallel contenders, in column order.
    pub const PARALLEL: [Joiner; 3] = [Joiner::Dreadpool, Joiner::Rayon, Joiner::Chili];

    /// Every joiner, in the table's column order.
    pub const COLUMNS: [Joiner; 4] = [
        Joiner::Dreadpool,
        Joiner::Rayon,
        Joiner::Chili,
        Joiner::Serial,
    ];

    /// The column name.
    pub fn name(self) -> &'static str {
        match self {
            Joiner::Dreadpool => "dreadpool",
            Joiner::Rayon => "rayon",
            Joiner::Chili => "chili",
            Joiner::Serial => "serial",
        }
    }
}

impl fmt::Display for Joiner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One pool of each kind with the same thread count.
pub(super) struct Pools {
    pub(super) threads: usize,
    pub(super) dreadpool: dreadpool::ThreadPool,
    pub(super) rayon: rayon::ThreadPool,
    pub(super) chili: chili::ThreadPool,
}

impl Pools {
    pub(super) fn new(threads: usize) -> Pools {
        Pools {
            threads,
            dreadpool: dreadpool::ThreadPoolBuilder::new()
                .with_threads(threads)
                .with_thread_name(format!("fj{threads}-dreadpool"))
                .build(),
            rayon: rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(move |i| format!("fj{threads}-rayon-{i}"))
                .build()
                .expect("rayon pool"),
            chili: chili::ThreadPool::with_config(chili::Config {
                thread_count: NonZeroUsize::new(threads),
                ..chili::Config::default()
            }),
        }
    }
}
