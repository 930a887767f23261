//! Fork-join (issue 16): `dreadpool::join` beside `rayon::join` and chili's
//! `Scope::join`, on the same recursive workloads, on 1 thread and on
//! `--threads`; and dreadpool's scoped spawns beside rayon's.
//!
//! - [`workloads`]: the [`Workload`]s, each with its row of the table, and
//!   the recursions they time:
//!   - [`fib`]: a join at every level of a naive Fibonacci, nothing else in
//!     a call: the cost of one join, in ns per join.
//!   - [`tree_sum`]: the sum of a binary tree of boxed nodes, a join at
//!     every inner node: fine-grained too, but each join also chases
//!     pointers through memory. In ns per node, with the serial time beside
//!     it.
//!   - [`quicksort`]: a parallel quicksort of random `u64`s, serial
//!     `sort_unstable` below [`SORT_CUTOFF`] elements: coarse, and the first
//!     partitions are serial, which caps the speedup.
//!   - [`nqueens`]: counting the placements of n queens, a join over the
//!     free columns of each of the first [`QUEENS_FORKED_ROWS`] rows and a
//!     serial count below: coarse and unbalanced (subtrees differ by orders
//!     of magnitude).
//! - [`scopes`]: one scope spawning many tiny tasks, and a binary tree of
//!   nested scopes, each from inside the pool (`pool.install`), so that both
//!   pools push to a worker's own deque: ns per scoped spawn.
//! - [`joiners`]: who forks ([`Joiner`]), as a [`Fork`] implementation, and
//!   the pools they fork on.
//! - [`harness`]: the [`Bench`] that times every workload on every joiner
//!   and checks every result.
//! - [`report`]: the fork-join [`Row`]s and their Markdown table.
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
//! before parent (as chili's README builds it), which subtree is visited
//! first changes the serial time from the memory layout alone
//! (`BENCHMARKS.md`, "Fork-join (issue 16)"). [`build_tree`] allocates each
//! node before its children, the left subtree before the right, so the
//! left-first order that every contender follows here walks memory
//! forwards. Every measured run checks its result too (the sum, the sorted
//! order, the solution count, the number of scoped tasks that ran), so a
//! join that loses or repeats work fails the benchmark loudly instead of
//! looking fast.
//!
//! dreadpool and rayon run the workload inside their pool's `install` (the
//! caller blocks; `threads` workers compute). chili's `ThreadPool` with
//! `thread_count: n` starts `n - 1` workers and the thread that opens the
//! scope computes with them, so the bench thread opens it: `n` threads
//! compute for everyone.

pub mod harness;
pub mod joiners;
pub mod report;
pub mod scopes;
pub mod workloads;

pub use harness::Bench;
pub use joiners::{DreadpoolJoin, Fork, Joiner, RayonJoin, Serial};
pub use report::{markdown_table, Row};
pub use scopes::{
    flat_scope_dreadpool, flat_scope_rayon, nested_scope_spawns, nested_scopes_dreadpool,
    nested_scopes_rayon, Marks,
};
pub use workloads::{
    build_tree, fib, fib_chili, fib_joins, fib_reference, nqueens, nqueens_chili, partition,
    queens_reference, quicksort, quicksort_chili, random_u64s, tree_nodes, tree_reference,
    tree_sum, tree_sum_chili, Node, Workload, QUEENS_FORKED_ROWS, QUEENS_SOLUTIONS, SORT_CUTOFF,
};

/// The command-line name that selects every workload of this group.
pub const GROUP: &str = "forkjoin";

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
    /// The sizes of issue 16 (`BENCHMARKS.md` gives how long they take).
    pub const FULL: Sizes = Sizes {
        fib: 30,
        tree_levels: 22,
        sort_len: 4 << 20,
        // Fewer queens finish so fast that a thread wake would be a visible part.
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
