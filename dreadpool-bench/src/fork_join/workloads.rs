//! The fork-join workloads: each [`Workload`] names one row of the table
//! and carries its label, unit and target; the recursions below are what
//! the harness times, each written once over [`Fork`] and once for chili.

use super::joiners::Fork;
use super::scopes::nested_scope_spawns;
use super::{Sizes, GROUP};

/// Slices of at most this many elements are sorted serially.
pub const SORT_CUTOFF: usize = 4096;

/// [`nqueens`] joins over the free columns of this many rows; below them
/// it counts serially.
pub const QUEENS_FORKED_ROWS: u32 = 3;

/// One row of the fork-join table: what is timed, and how it is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Workload {
    /// [`fib`]: the cost of one join.
    Fib,
    /// [`tree_sum`]: fine-grained joins that chase pointers.
    Tree,
    /// [`quicksort`]: coarse, its first partitions serial.
    Quicksort,
    /// [`nqueens`]: coarse and unbalanced.
    Nqueens,
    /// One scope spawning many tiny tasks
    /// ([`flat_scope_dreadpool`](super::flat_scope_dreadpool)).
    Scope,
    /// A binary tree of nested scopes
    /// ([`nested_scopes_dreadpool`](super::nested_scopes_dreadpool)).
    NestedScopes,
}

impl Workload {
    /// Every workload, in the table's order (and the order they run in).
    pub const ALL: &'static [Workload] = &[
        Workload::Fib,
        Workload::Tree,
        Workload::Quicksort,
        Workload::Nqueens,
        Workload::Scope,
        Workload::NestedScopes,
    ];

    /// The command-line name; both scope rows answer to `scope`.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Fib => "fib",
            Workload::Tree => "tree",
            Workload::Quicksort => "quicksort",
            Workload::Nqueens => "nqueens",
            Workload::Scope | Workload::NestedScopes => "scope",
        }
    }

    /// The command-line names, each once, in table order.
    pub fn names() -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Workload::ALL.iter().map(|w| w.name()).collect();
        names.dedup();
        names
    }

    /// The workloads a command-line name selects: [`GROUP`] selects all.
    pub fn named(name: &str) -> Option<&'static [Workload]> {
        if name == GROUP {
            return Some(Workload::ALL);
        }
        let first = Workload::ALL.iter().position(|w| w.name() == name)?;
        let count = Workload::ALL[first..]
            .iter()
            .take_while(|w| w.name() == name)
            .count();
        Some(&Workload::ALL[first..first + count])
    }

    /// Whether it joins: chili and the serial baseline run it too (chili
    /// has no scoped spawns, and a scope has no serial form).
    pub fn joins(self) -> bool {
        !matches!(self, Workload::Scope | Workload::NestedScopes)
    }

    /// What the row measures, at `sizes`.
    pub fn label(self, sizes: &Sizes) -> String {
        match self {
            Workload::Fib => format!(
                "fib({}), a join at every level ({} joins)",
                sizes.fib,
                fib_joins(sizes.fib)
            ),
            Workload::Tree => format!(
                "tree sum, {} boxed nodes, a join per inner node",
                tree_nodes(sizes.tree_levels)
            ),
            Workload::Quicksort => format!(
                "quicksort, {} random u64, serial below {SORT_CUTOFF}",
                sizes.sort_len
            ),
            Workload::Nqueens => format!(
                "nqueens({}), joins over the columns of {QUEENS_FORKED_ROWS} rows",
                sizes.queens
            ),
            Workload::Scope => format!(
                "scope: one scope spawns {} tiny tasks (in install)",
                sizes.scope_spawns
            ),
            Workload::NestedScopes => format!(
                "scope: nested scopes, {} levels ({} spawns)",
                sizes.scope_levels,
                nested_scope_spawns(sizes.scope_levels)
            ),
        }
    }

    /// The unit of the row's figures (lower is better for every one).
    pub fn unit(self) -> &'static str {
        match self {
            Workload::Fib => "ns/join",
            Workload::Tree => "ns/node",
            Workload::Quicksort | Workload::Nqueens => "ms",
            Workload::Scope | Workload::NestedScopes => "ns/spawn",
        }
    }

    /// The most dreadpool's figure may be over rayon's, where judged.
    pub fn target(self) -> Option<f64> {
        match self {
            Workload::Fib | Workload::Tree => Some(0.5),
            Workload::Quicksort | Workload::Nqueens => Some(1.0),
            Workload::Scope | Workload::NestedScopes => None,
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fork_join::joiners::{DreadpoolJoin, Pools, RayonJoin, Serial};

    fn pools(threads: usize) -> Pools {
        Pools::new(threads)
    }

    #[test]
    fn names_select_workloads() {
        assert_eq!(Workload::named("fib"), Some(&[Workload::Fib][..]));
        assert_eq!(
            Workload::named("scope"),
            Some(&[Workload::Scope, Workload::NestedScopes][..])
        );
        assert_eq!(Workload::named(GROUP), Some(Workload::ALL));
        assert_eq!(Workload::named("scope-nested"), None);
        assert_eq!(
            Workload::names(),
            ["fib", "tree", "quicksort", "nqueens", "scope"]
        );
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
}
