//! Fork-join (issue 16): `dreadpool::join` beside `rayon::join` and chili's
//! `Scope::join`, on the same recursive workloads, on 1 thread and on
//! `--threads`; and dreadpool's scoped spawns beside rayon's.
//!
//! - [`fib`]: a join at every level of a naive Fibonacci, nothing else in a
//!   call: the cost of one join, in ns per join.
//! - [`tree_sum`]: the sum of a binary tree of boxed nodes, a join at every
//!   inner node: fine-grained too, but each join also chases pointers
//!   through memory. In ns per node, with the serial time beside it.
//! - [`quicksort`]: a parallel quicksort of random `u64`s, serial
//!   `sort_unstable` below [`SORT_CUTOFF`] elements: coarse, and the first
//!   partitions are serial, which caps the speedup.
//! - [`nqueens`]: counting the placements of n queens, a join over the free
//!   columns of each of the first [`QUEENS_FORKED_ROWS`] rows and a serial
//!   count below: coarse and unbalanced (subtrees differ by orders of
//!   magnitude).
//! - Scoped spawns: one scope spawning many tiny tasks, and a binary tree of
//!   nested scopes, each from inside the pool (`pool.install`), so that both
//!   pools push to a worker's own deque: ns per scoped spawn.
//!
//! Every workload is written once, generic over [`Fork`] (monomorphised for
//! [`Serial`], [`DreadpoolJoin`] and [`RayonJoin`]), except chili's, whose
//! join hands a `&mut Scope` down the recursion: those copies sit next to
//! the generic ones, and the unit tests check that every copy agrees with
//! the serial reference.
//!
//! chili's `join(a, b)` runs `b` first on the calling thread and offers `a`
//! to thieves: the reverse of rayon's and dreadpool's `join(a, b)`, which
//! run `a` first and offer `b`. chili's copies therefore pass the halves
//! swapped, so that every contender works on the same half first and offers
//! the same half to a thief. It matters: on a tree allocated children
//! before parent (as chili's README builds it), visiting the right subtree
//! first was 2.5x faster than the left first, serially, on the AMD EPYC
//! host, from the memory layout alone. [`build_tree`] allocates each node
//! before its children, the left subtree before the right, so the
//! left-first order that every contender follows here walks memory
//! forwards. Every measured run checks its result too (the sum,
//! the sorted order, the solution count, the number of scoped tasks that
//! ran), so a join that loses or repeats work fails the benchmark loudly
//! instead of looking fast.
//!
//! dreadpool and rayon run the workload inside their pool's `install` (the
//! caller blocks; `threads` workers compute). chili's `ThreadPool` with
//! `thread_count: n` starts `n - 1` workers and the thread that opens the
//! scope computes with them, so the bench thread opens it: `n` threads
//! compute for everyone.

use crate::report::{self, Verdict};
use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// The scenario names of this group, as the command line filters them
/// (`forkjoin` selects them all).
pub const SCENARIOS: [&str; 5] = ["fib", "tree", "quicksort", "nqueens", "scope"];

/// The command-line name that selects every scenario of this group.
pub const GROUP: &str = "forkjoin";

/// Slices of at most this many elements are sorted serially.
pub const SORT_CUTOFF: usize = 4096;

/// [`nqueens`] joins over the free columns of this many rows; below them
/// it counts serially.
pub const QUEENS_FORKED_ROWS: u32 = 3;

/// How big each fork-join workload is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    /// n of fib(n).
    pub fib: u32,
    /// Levels of the perfect binary tree (`2^levels - 1` nodes).
    pub tree_levels: u32,
    /// Elements to sort.
    pub sort_len: usize,
    /// Queens (and board width).
    pub queens: u32,
    /// Tasks spawned by the one flat scope.
    pub scope_spawns: u64,
    /// Levels of the tree of nested scopes (`2^(levels+1) - 2` spawns).
    pub scope_levels: u32,
}

impl Sizes {
    /// The sizes of issue 16: about 15 s at 7 repetitions on 2 cores.
    pub const FULL: Sizes = Sizes {
        fib: 30,
        tree_levels: 22,
        sort_len: 4 << 20,
        // (11 queens take under 2 ms: a thread wake would be a visible
        // part of it.)
        queens: 12,
        scope_spawns: 100_000,
        scope_levels: 16,
    };

    /// `--quick`: a few seconds with 3 repetitions.
    pub const QUICK: Sizes = Sizes {
        fib: 27,
        tree_levels: 20,
        sort_len: 1 << 20,
        queens: 11,
        scope_spawns: 20_000,
        scope_levels: 14,
    };

    /// `--smoke`: a blink, even in a debug build.
    pub const SMOKE: Sizes = Sizes {
        fib: 15,
        tree_levels: 10,
        sort_len: 20_000,
        queens: 6,
        scope_spawns: 1_000,
        scope_levels: 6,
    };
}

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

// ---------------------------------------------------------------- fib

/// fib(n) by the naive recursion, with a join at every level.
pub fn fib<F: Fork>(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = F::join(|| fib::<F>(n - 1), || fib::<F>(n - 2));
    a + b
}

/// [`fib`] on chili (halves swapped: see the module docs).
pub fn fib_chili(s: &mut chili::Scope<'_>, n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (b, a) = s.join(|s| fib_chili(s, n - 2), |s| fib_chili(s, n - 1));
    a + b
}

/// fib(n) by iteration: the reference.
pub fn fib_reference(n: u32) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a
}

/// How many joins [`fib`]`(n)` makes: one per call with `n >= 2`, which is
/// fib(n + 1) - 1.
pub fn fib_joins(n: u32) -> u64 {
    fib_reference(n + 1) - 1
}

// ---------------------------------------------------------------- tree

/// A node of the boxed binary tree.
#[derive(Debug)]
pub struct Node {
    value: u64,
    left: Option<Box<Node>>,
    right: Option<Box<Node>>,
}

/// A perfect binary tree of `levels` levels whose nodes hold 1, 2, ...,
/// `2^levels - 1` in depth-first order (so their sum is known). Each node
/// is allocated before its children, the left subtree before the right:
/// the left-first traversal of every contender then walks memory forwards
/// (see the module docs for why the order matters).
pub fn build_tree(levels: u32) -> Box<Node> {
    fn build(levels: u32, next: &mut u64) -> Box<Node> {
        *next += 1;
        let mut node = Box::new(Node {
            value: *next,
            left: None,
            right: None,
        });
        if levels > 1 {
            node.left = Some(build(levels - 1, next));
            node.right = Some(build(levels - 1, next));
        }
        node
    }
    assert!((1..64).contains(&levels), "1 to 63 levels");
    build(levels, &mut 0)
}

/// The nodes of a perfect tree of `levels` levels.
pub fn tree_nodes(levels: u32) -> u64 {
    (1u64 << levels) - 1
}

/// The sum of [`build_tree`]`(levels)`: 1 + 2 + ... + nodes.
pub fn tree_reference(levels: u32) -> u64 {
    let n = tree_nodes(levels);
    n * (n + 1) / 2
}

/// The sum of the tree's values, with a join at every node that has two
/// children (as in Spice's and chili's tree benchmark).
pub fn tree_sum<F: Fork>(node: &Node) -> u64 {
    match (&node.left, &node.right) {
        (Some(left), Some(right)) => {
            let (a, b) = F::join(|| tree_sum::<F>(left), || tree_sum::<F>(right));
            node.value + a + b
        }
        (left, right) => {
            node.value
                + left.as_deref().map_or(0, tree_sum::<F>)
                + right.as_deref().map_or(0, tree_sum::<F>)
        }
    }
}

/// [`tree_sum`] on chili (halves swapped: see the module docs).
pub fn tree_sum_chili(s: &mut chili::Scope<'_>, node: &Node) -> u64 {
    match (&node.left, &node.right) {
        (Some(left), Some(right)) => {
            let (b, a) = s.join(|s| tree_sum_chili(s, right), |s| tree_sum_chili(s, left));
            node.value + a + b
        }
        (left, right) => {
            node.value
                + left.as_deref().map_or(0, |n| tree_sum_chili(s, n))
                + right.as_deref().map_or(0, |n| tree_sum_chili(s, n))
        }
    }
}

// ---------------------------------------------------------------- quicksort

/// Partitions `v` (at least 2 elements) around the median of its first,
/// middle and last elements; returns `mid` with every element of `v[..mid]`
/// `<=` every element of `v[mid..]`, both halves non-empty (Hoare's scheme
/// with the pivot moved to the front, which guarantees that).
pub fn partition(v: &mut [u64]) -> usize {
    let last = v.len() - 1;
    let middle = v.len() / 2;
    // Median of three to the front.
    if v[middle] < v[0] {
        v.swap(middle, 0);
    }
    if v[last] < v[0] {
        v.swap(last, 0);
    }
    if v[last] < v[middle] {
        v.swap(last, middle);
    }
    v.swap(0, middle);
    let pivot = v[0];
    // Hoare's scheme (CLRS's HOARE-PARTITION): on return, v[..=j] <= pivot
    // <= v[j + 1..], and a pivot taken from v[0] keeps j below the last
    // index. The pivot at v[0] stops the downward scan; the element that
    // stopped the last downward scan stops the upward one.
    let (mut i, mut j) = (0, v.len());
    loop {
        loop {
            j -= 1;
            if v[j] <= pivot {
                break;
            }
        }
        while v[i] < pivot {
            i += 1;
        }
        if i >= j {
            return j + 1;
        }
        v.swap(i, j);
        i += 1;
    }
}

/// Sorts `v`: [`partition`], then both halves under a join; slices of at
/// most [`SORT_CUTOFF`] elements go to `sort_unstable`.
pub fn quicksort<F: Fork>(v: &mut [u64]) {
    if v.len() <= SORT_CUTOFF {
        v.sort_unstable();
        return;
    }
    let mid = partition(v);
    let (left, right) = v.split_at_mut(mid);
    F::join(|| quicksort::<F>(left), || quicksort::<F>(right));
}

/// [`quicksort`] on chili (halves swapped: see the module docs).
pub fn quicksort_chili(s: &mut chili::Scope<'_>, v: &mut [u64]) {
    if v.len() <= SORT_CUTOFF {
        v.sort_unstable();
        return;
    }
    let mid = partition(v);
    let (left, right) = v.split_at_mut(mid);
    s.join(|s| quicksort_chili(s, right), |s| quicksort_chili(s, left));
}

/// `len` pseudo-random `u64`s from `seed` (xorshift64; 0 is replaced).
pub fn random_u64s(len: usize, seed: u64) -> Vec<u64> {
    let mut x = seed.max(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect()
}

// ---------------------------------------------------------------- nqueens

/// A partial placement: the columns and the two diagonals attacked, as bit
/// masks over the board's width, and the row to fill next.
#[derive(Debug, Clone, Copy)]
struct Board {
    all: u32,
    cols: u32,
    left: u32,
    right: u32,
    row: u32,
}

impl Board {
    fn new(n: u32) -> Board {
        assert!((1..=31).contains(&n), "1 to 31 queens");
        Board {
            all: (1u32 << n) - 1,
            cols: 0,
            left: 0,
            right: 0,
            row: 0,
        }
    }

    fn free(self) -> u32 {
        self.all & !(self.cols | self.left | self.right)
    }

    /// The board with a queen at `bit` of this row.
    fn place(self, bit: u32) -> Board {
        Board {
            all: self.all,
            cols: self.cols | bit,
            left: ((self.left | bit) << 1) & self.all,
            right: (self.right | bit) >> 1,
            row: self.row + 1,
        }
    }

    /// Counts the completions of this board serially.
    fn count_serial(self) -> u64 {
        if self.cols == self.all {
            return 1;
        }
        let mut free = self.free();
        let mut total = 0;
        while free != 0 {
            let bit = free & free.wrapping_neg();
            free &= free - 1;
            total += self.place(bit).count_serial();
        }
        total
    }
}

/// Splits a set of columns in two halves (by count of set bits).
fn halves(set: u32) -> (u32, u32) {
    let mut low = 0;
    let mut rest = set;
    for _ in 0..set.count_ones() / 2 {
        let bit = rest & rest.wrapping_neg();
        low |= bit;
        rest &= rest - 1;
    }
    (low, rest)
}

/// The solutions of the n-queens problem: a join over the free columns of
/// each of the first [`QUEENS_FORKED_ROWS`] rows (the set halved at each
/// join), a serial count below.
pub fn nqueens<F: Fork>(n: u32) -> u64 {
    queens_row::<F>(Board::new(n))
}

fn queens_row<F: Fork>(board: Board) -> u64 {
    if board.cols == board.all {
        return 1;
    }
    if board.row >= QUEENS_FORKED_ROWS {
        return board.count_serial();
    }
    queens_columns::<F>(board, board.free())
}

fn queens_columns<F: Fork>(board: Board, columns: u32) -> u64 {
    match columns.count_ones() {
        0 => 0,
        1 => queens_row::<F>(board.place(columns)),
        _ => {
            let (low, high) = halves(columns);
            let (a, b) = F::join(
                || queens_columns::<F>(board, low),
                || queens_columns::<F>(board, high),
            );
            a + b
        }
    }
}

/// [`nqueens`] on chili (halves swapped: see the module docs).
pub fn nqueens_chili(s: &mut chili::Scope<'_>, n: u32) -> u64 {
    queens_row_chili(s, Board::new(n))
}

fn queens_row_chili(s: &mut chili::Scope<'_>, board: Board) -> u64 {
    if board.cols == board.all {
        return 1;
    }
    if board.row >= QUEENS_FORKED_ROWS {
        return board.count_serial();
    }
    queens_columns_chili(s, board, board.free())
}

fn queens_columns_chili(s: &mut chili::Scope<'_>, board: Board, columns: u32) -> u64 {
    match columns.count_ones() {
        0 => 0,
        1 => queens_row_chili(s, board.place(columns)),
        _ => {
            let (low, high) = halves(columns);
            let (b, a) = s.join(
                |s| queens_columns_chili(s, board, high),
                |s| queens_columns_chili(s, board, low),
            );
            a + b
        }
    }
}

/// The known solution counts for 1 to 14 queens (OEIS A000170).
pub const QUEENS_SOLUTIONS: [u64; 14] = [
    1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2_680, 14_200, 73_712,
];

/// The known solution count of n queens, for 1 to 14.
pub fn queens_reference(n: u32) -> Option<u64> {
    QUEENS_SOLUTIONS.get(n as usize).copied().filter(|_| n >= 1)
}

// ---------------------------------------------------------------- scopes

/// One mark per scoped task, which that task (and only it) bumps: afterwards
/// every mark must be exactly 1, so a lost or a repeated task shows. (Not
/// the process-wide [`tally`](crate::tally): a check that must be exact
/// cannot share a counter with anything else running.)
#[derive(Debug)]
pub struct Marks(Vec<AtomicU8>);

impl Marks {
    /// `n` marks at zero.
    pub fn new(n: u64) -> Marks {
        Marks((0..n).map(|_| AtomicU8::new(0)).collect())
    }

    /// How many tasks these marks are for.
    pub fn len(&self) -> u64 {
        self.0.len() as u64
    }

    /// Whether there are no marks at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Task `i` ran. A load and a store, not a locked read-modify-write:
    /// each mark has one writer in a correct run, and the cost is the
    /// harness's, the same for both pools.
    #[inline]
    fn mark(&self, i: usize) {
        let mark = &self.0[i];
        mark.store(
            mark.load(Ordering::Relaxed).wrapping_add(1),
            Ordering::Relaxed,
        );
    }

    /// Sets every mark back to zero.
    pub fn reset(&mut self) {
        for mark in &mut self.0 {
            *mark.get_mut() = 0;
        }
    }

    /// Checks that every task ran exactly once (call once the scope has
    /// returned: its end orders every task's mark before it).
    pub fn check(&self) -> Result<(), String> {
        let wrong = self
            .0
            .iter()
            .map(|m| m.load(Ordering::Relaxed))
            .enumerate()
            .filter(|&(_, runs)| runs != 1)
            .collect::<Vec<_>>();
        match wrong.first() {
            None => Ok(()),
            Some(&(task, runs)) => Err(format!(
                "{} of {} scoped tasks did not run exactly once (task {task} ran {runs} times)",
                wrong.len(),
                self.0.len()
            )),
        }
    }
}

/// One dreadpool scope spawning one tiny task per mark, from where it is
/// called.
pub fn flat_scope_dreadpool(pool: &dreadpool::ThreadPool, marks: &Marks) {
    pool.scope(|s| {
        for i in 0..marks.0.len() {
            s.spawn(move || marks.mark(i));
        }
    });
}

/// One rayon scope spawning one tiny task per mark, from where it is called.
pub fn flat_scope_rayon(marks: &Marks) {
    rayon::scope(|s| {
        for i in 0..marks.0.len() {
            s.spawn(move |_| marks.mark(i));
        }
    });
}

/// A scope spawning two tasks, each opening such a scope in turn, `levels`
/// deep: [`nested_scope_spawns`]`(levels)` tasks, each marking itself. The
/// tasks are numbered as in a binary heap whose root (`node` 0) is the
/// caller, mark `k - 1` for node `k`.
pub fn nested_scopes_dreadpool(
    pool: &dreadpool::ThreadPool,
    marks: &Marks,
    node: usize,
    levels: u32,
) {
    if levels == 0 {
        return;
    }
    pool.scope(|s| {
        for child in [2 * node + 1, 2 * node + 2] {
            s.spawn(move || {
                marks.mark(child - 1);
                nested_scopes_dreadpool(pool, marks, child, levels - 1);
            });
        }
    });
}

/// [`nested_scopes_dreadpool`] on rayon.
pub fn nested_scopes_rayon(marks: &Marks, node: usize, levels: u32) {
    if levels == 0 {
        return;
    }
    rayon::scope(|s| {
        for child in [2 * node + 1, 2 * node + 2] {
            s.spawn(move |_| {
                marks.mark(child - 1);
                nested_scopes_rayon(marks, child, levels - 1);
            });
        }
    });
}

/// The tasks [`nested_scopes_dreadpool`]`(levels)` spawns: 2 + 4 + ... +
/// 2^levels.
pub fn nested_scope_spawns(levels: u32) -> u64 {
    (1u64 << (levels + 1)) - 2
}

// ---------------------------------------------------------------- harness

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
struct Pools {
    threads: usize,
    dreadpool: dreadpool::ThreadPool,
    rayon: rayon::ThreadPool,
    chili: chili::ThreadPool,
}

impl Pools {
    fn new(threads: usize) -> Pools {
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

/// Times one workload on `joiner`: `$work::<F>($arg)` with the joiner's
/// [`Fork`] (inside the pool's `install` for dreadpool and rayon), or
/// `$chili(&mut scope, $arg)` in a chili scope opened on the bench thread.
macro_rules! time_joins {
    ($joiner:expr, $pools:expr, $work:ident, $chili:ident, $arg:expr) => {
        match ($joiner, $pools) {
            (Joiner::Serial, _) => timed(|| $work::<Serial>($arg)),
            (Joiner::Dreadpool, Some(p)) => {
                timed(|| p.dreadpool.install(|| $work::<DreadpoolJoin>($arg)))
            }
            (Joiner::Rayon, Some(p)) => timed(|| p.rayon.install(|| $work::<RayonJoin>($arg))),
            (Joiner::Chili, Some(p)) => {
                let mut scope = p.chili.scope();
                timed(|| $chili(&mut scope, $arg))
            }
            _ => unreachable!("a parallel joiner has its pools"),
        }
    };
}

/// Times `f`.
fn timed<R>(f: impl FnOnce() -> R) -> (Duration, R) {
    let start = Instant::now();
    let result = f();
    (start.elapsed(), result)
}

/// The fork-join group: its pools, its inputs, and every sample taken.
pub struct Bench {
    sizes: Sizes,
    pools: Vec<Pools>,
    tree: Option<Box<Node>>,
    sort_input: Vec<u64>,
    sort_reference: Vec<u64>,
    sort_buffer: Vec<u64>,
    flat_marks: Marks,
    nested_marks: Marks,
    /// By (scenario, threads, joiner): one figure per repetition, in the
    /// row's unit.
    samples: BTreeMap<(&'static str, usize, Joiner), Vec<f64>>,
}

impl Bench {
    /// Builds the pools for each of `thread_counts` and the inputs of the
    /// scenarios `wants` selects, and warms every pool up.
    pub fn new(sizes: Sizes, thread_counts: &[usize], wants: impl Fn(&str) -> bool) -> Bench {
        let mut counts = thread_counts.to_vec();
        counts.sort_unstable();
        counts.dedup();
        let tree = wants("tree").then(|| build_tree(sizes.tree_levels));
        let (sort_input, sort_reference) = if wants("quicksort") {
            let input = random_u64s(sizes.sort_len, 0x9E37_79B9_7F4A_7C15);
            let mut sorted = input.clone();
            sorted.sort_unstable();
            (input, sorted)
        } else {
            (Vec::new(), Vec::new())
        };
        let bench = Bench {
            sizes,
            pools: counts.into_iter().map(Pools::new).collect(),
            tree,
            sort_buffer: sort_input.clone(),
            sort_input,
            sort_reference,
            flat_marks: Marks::new(if wants("scope") {
                sizes.scope_spawns
            } else {
                0
            }),
            nested_marks: Marks::new(if wants("scope") {
                nested_scope_spawns(sizes.scope_levels)
            } else {
                0
            }),
            samples: BTreeMap::new(),
        };
        // Wake every pool and fault in its stacks before the first timing.
        for pools in &bench.pools {
            let n = 20.min(sizes.fib);
            assert_eq!(
                pools.dreadpool.install(|| fib::<DreadpoolJoin>(n)),
                fib_reference(n)
            );
            assert_eq!(
                pools.rayon.install(|| fib::<RayonJoin>(n)),
                fib_reference(n)
            );
            assert_eq!(fib_chili(&mut pools.chili.scope(), n), fib_reference(n));
        }
        bench
    }

    /// The thread counts measured, ascending.
    pub fn thread_counts(&self) -> Vec<usize> {
        self.pools.iter().map(|p| p.threads).collect()
    }

    fn push(&mut self, scenario: &'static str, threads: usize, joiner: Joiner, value: f64) {
        self.samples
            .entry((scenario, threads, joiner))
            .or_default()
            .push(value);
    }

    /// One repetition of every scenario `wants` selects; `turn` rotates the
    /// order in which the contenders take their turns.
    ///
    /// # Panics
    ///
    /// If any contender computes a wrong result.
    pub fn repetition(&mut self, turn: usize, wants: impl Fn(&str) -> bool) {
        let mut order = Joiner::PARALLEL;
        order.rotate_left(turn % Joiner::PARALLEL.len());
        for scenario in SCENARIOS {
            if !wants(scenario) {
                continue;
            }
            if scenario != "scope" {
                let value = self.run(scenario, None, Joiner::Serial);
                // The serial figure does not depend on a thread count.
                for threads in self.thread_counts() {
                    self.push(scenario, threads, Joiner::Serial, value);
                }
            }
            // The scoped-spawn scenario is two rows: one flat scope, nested
            // scopes. chili has no scoped spawns.
            let (parts, joiners): (&[&'static str], Vec<Joiner>) = if scenario == "scope" {
                (
                    &["scope", "scope-nested"],
                    order.into_iter().filter(|&j| j != Joiner::Chili).collect(),
                )
            } else {
                (&[scenario], order.to_vec())
            };
            for index in 0..self.pools.len() {
                let threads = self.pools[index].threads;
                for &part in parts {
                    for &joiner in &joiners {
                        let value = self.run(part, Some(index), joiner);
                        self.push(part, threads, joiner, value);
                    }
                }
            }
        }
    }

    /// Runs `scenario` once with `joiner` on the pools at `index` (none for
    /// [`Joiner::Serial`]), checks the result, and returns the figure in
    /// the row's unit.
    fn run(&mut self, scenario: &str, index: Option<usize>, joiner: Joiner) -> f64 {
        let sizes = self.sizes;
        let pools = index.map(|i| &self.pools[i]);
        let wrong = |what: &str| -> ! {
            panic!("fork-join {scenario}: {joiner} computed a wrong result ({what})")
        };
        match scenario {
            "fib" => {
                let n = sizes.fib;
                let (took, result) = time_joins!(joiner, pools, fib, fib_chili, n);
                if result != fib_reference(n) {
                    wrong(&format!("fib({n}) = {result}"));
                }
                took.as_nanos() as f64 / fib_joins(n) as f64
            }
            "tree" => {
                let tree = self.tree.as_deref().expect("the tree was built");
                let (took, result) = time_joins!(joiner, pools, tree_sum, tree_sum_chili, tree);
                if result != tree_reference(sizes.tree_levels) {
                    wrong(&format!("sum {result}"));
                }
                took.as_nanos() as f64 / tree_nodes(sizes.tree_levels) as f64
            }
            "quicksort" => {
                let buffer = &mut self.sort_buffer;
                buffer.copy_from_slice(&self.sort_input);
                let (took, ()) = time_joins!(joiner, pools, quicksort, quicksort_chili, buffer);
                if *buffer != self.sort_reference {
                    wrong("not the sorted input");
                }
                took.as_secs_f64() * 1e3
            }
            "nqueens" => {
                let n = sizes.queens;
                let (took, result) = time_joins!(joiner, pools, nqueens, nqueens_chili, n);
                let expected = queens_reference(n).unwrap_or_else(|| nqueens::<Serial>(n));
                if result != expected {
                    wrong(&format!("{result} solutions of {n} queens"));
                }
                took.as_secs_f64() * 1e3
            }
            "scope" | "scope-nested" => {
                let nested = scenario == "scope-nested";
                let marks = if nested {
                    &mut self.nested_marks
                } else {
                    &mut self.flat_marks
                };
                marks.reset();
                let marks = &*marks;
                let levels = sizes.scope_levels;
                let took = match (joiner, pools, nested) {
                    (Joiner::Dreadpool, Some(p), false) => {
                        let pool = &p.dreadpool;
                        timed(|| pool.install(|| flat_scope_dreadpool(pool, marks))).0
                    }
                    (Joiner::Dreadpool, Some(p), true) => {
                        let pool = &p.dreadpool;
                        timed(|| pool.install(|| nested_scopes_dreadpool(pool, marks, 0, levels))).0
                    }
                    (Joiner::Rayon, Some(p), false) => {
                        timed(|| p.rayon.install(|| flat_scope_rayon(marks))).0
                    }
                    (Joiner::Rayon, Some(p), true) => {
                        timed(|| p.rayon.install(|| nested_scopes_rayon(marks, 0, levels))).0
                    }
                    _ => unreachable!("scoped spawns are dreadpool's and rayon's"),
                };
                if let Err(problem) = marks.check() {
                    wrong(&problem);
                }
                took.as_nanos() as f64 / marks.len() as f64
            }
            other => unreachable!("unknown fork-join scenario {other:?}"),
        }
    }

    /// The table's rows: for each scenario measured, one row per thread
    /// count; targets (dreadpool's time over rayon's) on the largest count
    /// above 1.
    pub fn rows(&self) -> Vec<Row> {
        let sizes = self.sizes;
        let judged = self.thread_counts().into_iter().filter(|&t| t > 1).max();
        let mut rows = Vec::new();
        let table: [(&'static str, String, &'static str, Option<f64>); 6] = [
            (
                "fib",
                format!(
                    "fib({}), a join at every level ({} joins)",
                    sizes.fib,
                    fib_joins(sizes.fib)
                ),
                "ns/join",
                Some(0.5),
            ),
            (
                "tree",
                format!(
                    "tree sum, {} boxed nodes, a join per inner node",
                    tree_nodes(sizes.tree_levels)
                ),
                "ns/node",
                Some(0.5),
            ),
            (
                "quicksort",
                format!(
                    "quicksort, {} random u64, serial below {SORT_CUTOFF}",
                    sizes.sort_len
                ),
                "ms",
                Some(1.0),
            ),
            (
                "nqueens",
                format!(
                    "nqueens({}), joins over the columns of {QUEENS_FORKED_ROWS} rows",
                    sizes.queens
                ),
                "ms",
                Some(1.0),
            ),
            (
                "scope",
                format!(
                    "scope: one scope spawns {} tiny tasks (in install)",
                    sizes.scope_spawns
                ),
                "ns/spawn",
                None,
            ),
            (
                "scope-nested",
                format!(
                    "scope: nested scopes, {} levels ({} spawns)",
                    sizes.scope_levels,
                    nested_scope_spawns(sizes.scope_levels)
                ),
                "ns/spawn",
                None,
            ),
        ];
        for (scenario, metric, unit, target) in table {
            for threads in self.thread_counts() {
                let values: Vec<(Joiner, f64)> = [
                    Joiner::Dreadpool,
                    Joiner::Rayon,
                    Joiner::Chili,
                    Joiner::Serial,
                ]
                .into_iter()
                .filter_map(|j| {
                    let samples = self.samples.get(&(scenario, threads, j))?;
                    report::median(samples).map(|m| (j, m))
                })
                .collect();
                if values.is_empty() {
                    continue;
                }
                rows.push(Row {
                    metric: metric.clone(),
                    threads,
                    unit,
                    values,
                    target: target.filter(|_| Some(threads) == judged),
                });
            }
        }
        rows
    }
}

/// One line of the fork-join table.
#[derive(Debug, Clone)]
pub struct Row {
    /// What is measured.
    pub metric: String,
    /// Worker threads of every pool in the row.
    pub threads: usize,
    /// The unit of every figure (lower is better for all).
    pub unit: &'static str,
    /// Each joiner's median figure, where measured.
    pub values: Vec<(Joiner, f64)>,
    /// dreadpool's figure over rayon's must be at most this.
    pub target: Option<f64>,
}

impl Row {
    /// `joiner`'s figure.
    pub fn value(&self, joiner: Joiner) -> Option<f64> {
        self.values
            .iter()
            .find(|(j, _)| *j == joiner)
            .map(|&(_, v)| v)
    }

    /// dreadpool's figure over `other`'s.
    pub fn ratio_to(&self, other: Joiner) -> Option<f64> {
        let (mine, theirs) = (self.value(Joiner::Dreadpool)?, self.value(other)?);
        (theirs > 0.0).then(|| mine / theirs)
    }

    /// Whether dreadpool meets the row's target against rayon.
    pub fn verdict(&self) -> Verdict {
        match (self.target, self.ratio_to(Joiner::Rayon)) {
            (Some(limit), Some(ratio)) if ratio <= limit => Verdict::Pass,
            (Some(_), Some(_)) => Verdict::Miss,
            _ => Verdict::NotJudged,
        }
    }
}

/// The fork-join rows as a Markdown table: every joiner's figure, then
/// dreadpool's ratio to rayon and to chili, the target and PASS/MISS.
pub fn markdown_table(rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| fork-join | threads | unit | dreadpool | rayon | chili | serial | dreadpool / rayon | dreadpool / chili | target | verdict |"
    );
    let _ = writeln!(out, "|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|");
    let cell = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), report::figure);
    let ratio = |r: Option<f64>| r.map_or_else(|| "-".to_owned(), |r| format!("{r:.2}x"));
    for row in rows {
        let target = row
            .target
            .map_or_else(|| "-".to_owned(), |t| format!("vs rayon <= {t}"));
        let verdict = row.verdict().markdown();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {target} | {verdict} |",
            row.metric,
            row.threads,
            row.unit,
            cell(row.value(Joiner::Dreadpool)),
            cell(row.value(Joiner::Rayon)),
            cell(row.value(Joiner::Chili)),
            cell(row.value(Joiner::Serial)),
            ratio(row.ratio_to(Joiner::Rayon)),
            ratio(row.ratio_to(Joiner::Chili)),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pools(threads: usize) -> Pools {
        Pools::new(threads)
    }

    #[test]
    fn fib_matches_the_iteration_and_counts_its_joins() {
        assert_eq!(fib_reference(0), 0);
        assert_eq!(fib_reference(1), 1);
        assert_eq!(fib_reference(20), 6765);
        assert_eq!(fib_reference(30), 832_040);
        for n in 0..=20 {
            assert_eq!(fib::<Serial>(n), fib_reference(n), "fib({n})");
        }
        // Counted by a join that counts itself.
        static JOINS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        struct Counting;
        impl Fork for Counting {
            fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
            where
                A: FnOnce() -> RA + Send,
                B: FnOnce() -> RB + Send,
                RA: Send,
                RB: Send,
            {
                JOINS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                (a(), b())
            }
        }
        for n in [0, 1, 2, 3, 10, 18] {
            JOINS.store(0, std::sync::atomic::Ordering::Relaxed);
            fib::<Counting>(n);
            assert_eq!(
                JOINS.load(std::sync::atomic::Ordering::Relaxed),
                fib_joins(n),
                "joins of fib({n})"
            );
        }
    }

    #[test]
    fn tree_sum_matches_the_formula() {
        for levels in [1, 2, 3, 10] {
            let tree = build_tree(levels);
            assert_eq!(tree_sum::<Serial>(&tree), tree_reference(levels));
        }
        assert_eq!(tree_reference(3), 28);
    }

    #[test]
    fn partition_splits_in_two_nonempty_ordered_halves() {
        let inputs: Vec<Vec<u64>> = vec![
            vec![2, 1],
            vec![1, 1],
            vec![5, 5, 5, 1],
            vec![1, 2, 3, 4, 5, 6, 7],
            vec![7, 6, 5, 4, 3, 2, 1],
            vec![3; 100],
            random_u64s(1000, 7),
            random_u64s(1000, 8).iter().map(|x| x % 3).collect(),
        ];
        for mut v in inputs {
            let before = v.clone();
            let mid = partition(&mut v);
            assert!(0 < mid && mid < v.len(), "{before:?} split at {mid}");
            let left_max = v[..mid].iter().max().unwrap();
            let right_min = v[mid..].iter().min().unwrap();
            assert!(left_max <= right_min, "{before:?} -> {v:?} at {mid}");
            let mut sorted = v.clone();
            sorted.sort_unstable();
            let mut expected = before;
            expected.sort_unstable();
            assert_eq!(sorted, expected, "elements changed");
        }
    }

    #[test]
    fn quicksort_sorts_like_sort_unstable() {
        for (len, modulus) in [
            (0, 1),
            (1, 1),
            (5_000, u64::MAX),
            (50_000, u64::MAX),
            (50_000, 10),
        ] {
            let mut v: Vec<u64> = random_u64s(len, 3).iter().map(|x| x % modulus).collect();
            let mut expected = v.clone();
            expected.sort_unstable();
            quicksort::<Serial>(&mut v);
            assert_eq!(v, expected, "{len} elements mod {modulus}");
        }
    }

    #[test]
    fn nqueens_counts_the_known_solutions() {
        for n in 1..=10 {
            assert_eq!(
                Some(nqueens::<Serial>(n)),
                queens_reference(n),
                "{n} queens"
            );
            assert_eq!(Board::new(n).count_serial(), nqueens::<Serial>(n));
        }
        assert_eq!(queens_reference(0), None);
        assert_eq!(queens_reference(15), None);
    }

    #[test]
    fn halves_split_a_set_of_columns() {
        assert_eq!(halves(0b1011_0110), (0b0000_0110, 0b1011_0000));
        assert_eq!(halves(0b1), (0, 0b1));
        assert_eq!(halves(0), (0, 0));
    }

    #[test]
    fn every_contender_agrees_with_the_serial_reference() {
        for threads in [1, 2] {
            let p = pools(threads);
            let n = 18;
            assert_eq!(
                p.dreadpool.install(|| fib::<DreadpoolJoin>(n)),
                fib_reference(n)
            );
            assert_eq!(p.rayon.install(|| fib::<RayonJoin>(n)), fib_reference(n));
            assert_eq!(fib_chili(&mut p.chili.scope(), n), fib_reference(n));

            let tree = build_tree(12);
            let expected = tree_reference(12);
            assert_eq!(
                p.dreadpool.install(|| tree_sum::<DreadpoolJoin>(&tree)),
                expected
            );
            assert_eq!(p.rayon.install(|| tree_sum::<RayonJoin>(&tree)), expected);
            assert_eq!(tree_sum_chili(&mut p.chili.scope(), &tree), expected);

            let input = random_u64s(40_000, 11);
            let mut sorted = input.clone();
            sorted.sort_unstable();
            let mut v = input.clone();
            p.dreadpool.install(|| quicksort::<DreadpoolJoin>(&mut v));
            assert_eq!(v, sorted);
            let mut v = input.clone();
            p.rayon.install(|| quicksort::<RayonJoin>(&mut v));
            assert_eq!(v, sorted);
            let mut v = input;
            quicksort_chili(&mut p.chili.scope(), &mut v);
            assert_eq!(v, sorted);

            let expected = queens_reference(8);
            assert_eq!(
                Some(p.dreadpool.install(|| nqueens::<DreadpoolJoin>(8))),
                expected
            );
            assert_eq!(Some(p.rayon.install(|| nqueens::<RayonJoin>(8))), expected);
            assert_eq!(Some(nqueens_chili(&mut p.chili.scope(), 8)), expected);
        }
    }

    #[test]
    fn scopes_run_every_spawn_exactly_once() {
        let p = pools(2);
        let mut marks = Marks::new(500);
        p.dreadpool
            .install(|| flat_scope_dreadpool(&p.dreadpool, &marks));
        assert_eq!(marks.check(), Ok(()));
        marks.reset();
        p.rayon.install(|| flat_scope_rayon(&marks));
        assert_eq!(marks.check(), Ok(()));
        let mut marks = Marks::new(nested_scope_spawns(5));
        p.dreadpool
            .install(|| nested_scopes_dreadpool(&p.dreadpool, &marks, 0, 5));
        assert_eq!(marks.check(), Ok(()));
        marks.reset();
        p.rayon.install(|| nested_scopes_rayon(&marks, 0, 5));
        assert_eq!(marks.check(), Ok(()));
        assert_eq!(nested_scope_spawns(1), 2);
        assert_eq!(nested_scope_spawns(3), 14);
    }

    #[test]
    fn marks_catch_a_lost_and_a_repeated_task() {
        let marks = Marks::new(3);
        marks.mark(0);
        marks.mark(2);
        marks.mark(2);
        let problem = marks.check().unwrap_err();
        assert!(problem.starts_with("2 of 3 scoped tasks"), "{problem}");
        assert!(problem.contains("task 1 ran 0 times"), "{problem}");
    }

    #[test]
    fn the_bench_measures_and_judges_every_scenario() {
        let mut bench = Bench::new(Sizes::SMOKE, &[1, 2], |_| true);
        // Every contender takes the first turn once.
        for turn in 0..3 {
            bench.repetition(turn, |_| true);
        }
        let rows = bench.rows();
        assert_eq!(rows.len(), 6 * 2, "{rows:#?}");
        for row in &rows {
            let judged = row.threads == 2 && !row.metric.starts_with("scope");
            assert_eq!(row.target.is_some(), judged, "{row:?}");
            assert!(row.value(Joiner::Dreadpool).is_some(), "{row:?}");
            assert!(row.value(Joiner::Rayon).is_some(), "{row:?}");
            assert_eq!(
                row.value(Joiner::Chili).is_some(),
                !row.metric.starts_with("scope"),
                "{row:?}"
            );
        }
        let table = markdown_table(&rows);
        assert_eq!(table.lines().count(), 2 + rows.len());
    }

    #[test]
    fn verdicts_compare_with_rayon_only() {
        let row = |dreadpool, rayon, chili, target| Row {
            metric: "m".into(),
            threads: 2,
            unit: "ns/join",
            values: vec![
                (Joiner::Dreadpool, dreadpool),
                (Joiner::Rayon, rayon),
                (Joiner::Chili, chili),
            ],
            target,
        };
        // Half rayon's time passes even when chili is faster still.
        let r = row(5.0, 10.0, 2.0, Some(0.5));
        assert_eq!(r.verdict(), Verdict::Pass);
        assert_eq!(r.ratio_to(Joiner::Chili), Some(2.5));
        assert_eq!(row(6.0, 10.0, 20.0, Some(0.5)).verdict(), Verdict::Miss);
        assert_eq!(row(6.0, 10.0, 20.0, None).verdict(), Verdict::NotJudged);
        let table = markdown_table(&[r]);
        assert!(
            table.contains("| 0.50x | 2.50x | vs rayon <= 0.5 | PASS |"),
            "{table}"
        );
    }
}
