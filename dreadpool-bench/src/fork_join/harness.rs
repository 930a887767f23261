//! The fork-join [`Bench`]: its pools, its inputs, and every sample taken;
//! it times each [`Workload`] on each [`Joiner`] and checks every result.

use super::joiners::{DreadpoolJoin, Joiner, Pools, RayonJoin, Serial};
use super::report::Row;
use super::scopes::{
    flat_scope_dreadpool, flat_scope_rayon, nested_scope_spawns, nested_scopes_dreadpool,
    nested_scopes_rayon, Marks,
};
use super::workloads::{
    build_tree, fib, fib_chili, fib_joins, fib_reference, nqueens, nqueens_chili, queens_reference,
    quicksort, quicksort_chili, random_u64s, tree_nodes, tree_reference, tree_sum, tree_sum_chili,
    Node, Workload,
};
use super::Sizes;
use crate::report;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Times one workload on `joiner`: `$work::<F>($arg)` with the joiner's
/// [`Fork`](super::Fork) (inside the pool's `install` for dreadpool and
/// rayon), or `$chili(&mut scope, $arg)` in a chili scope opened on the
/// bench thread.
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
    workloads: Vec<Workload>,
    pools: Vec<Pools>,
    tree: Option<Box<Node>>,
    sort_input: Vec<u64>,
    sort_reference: Vec<u64>,
    sort_buffer: Vec<u64>,
    flat_marks: Marks,
    nested_marks: Marks,
    /// By (workload, threads, joiner): one figure per repetition, in the
    /// row's unit.
    samples: BTreeMap<(Workload, usize, Joiner), Vec<f64>>,
}

impl Bench {
    /// Builds the pools for each of `thread_counts` and the inputs of
    /// `workloads`, and warms every pool up.
    pub fn new(sizes: Sizes, thread_counts: &[usize], workloads: &[Workload]) -> Bench {
        let mut counts = thread_counts.to_vec();
        counts.sort_unstable();
        counts.dedup();
        let wants = |w: Workload| workloads.contains(&w);
        let tree = wants(Workload::Tree).then(|| build_tree(sizes.tree_levels));
        let (sort_input, sort_reference) = if wants(Workload::Quicksort) {
            let input = random_u64s(sizes.sort_len, 0x9E37_79B9_7F4A_7C15);
            let mut sorted = input.clone();
            sorted.sort_unstable();
            (input, sorted)
        } else {
            (Vec::new(), Vec::new())
        };
        let bench = Bench {
            sizes,
            workloads: Workload::ALL
                .iter()
                .copied()
                .filter(|&w| wants(w))
                .collect(),
            pools: counts.into_iter().map(Pools::new).collect(),
            tree,
            sort_buffer: sort_input.clone(),
            sort_input,
            sort_reference,
            flat_marks: Marks::new(if wants(Workload::Scope) {
                sizes.scope_spawns
            } else {
                0
            }),
            nested_marks: Marks::new(if wants(Workload::NestedScopes) {
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

    fn push(&mut self, workload: Workload, threads: usize, joiner: Joiner, value: f64) {
        self.samples
            .entry((workload, threads, joiner))
            .or_default()
            .push(value);
    }

    /// One repetition of every workload selected; `turn` rotates the order
    /// in which the contenders take their turns.
    ///
    /// # Panics
    ///
    /// If any contender computes a wrong result.
    pub fn repetition(&mut self, turn: usize) {
        let mut order = Joiner::PARALLEL;
        order.rotate_left(turn % Joiner::PARALLEL.len());
        let workloads = self.workloads.clone();
        // Workloads of one name (the two scope rows) take turns on each pool.
        for group in workloads.chunk_by(|a, b| a.name() == b.name()) {
            for &workload in group.iter().filter(|w| w.joins()) {
                let value = self.time(workload, None, Joiner::Serial);
                // The serial figure does not depend on a thread count.
                for threads in self.thread_counts() {
                    self.push(workload, threads, Joiner::Serial, value);
                }
            }
            for index in 0..self.pools.len() {
                let threads = self.pools[index].threads;
                for &workload in group {
                    let joiners = order
                        .into_iter()
                        .filter(|&j| workload.joins() || j != Joiner::Chili);
                    for joiner in joiners {
                        let value = self.time(workload, Some(index), joiner);
                        self.push(workload, threads, joiner, value);
                    }
                }
            }
        }
    }

    /// Runs `workload` once with `joiner` on the pools at `index` (none for
    /// [`Joiner::Serial`]), checks the result, and returns the figure in
    /// the row's unit.
    fn time(&mut self, workload: Workload, index: Option<usize>, joiner: Joiner) -> f64 {
        let pools = index.map(|i| &self.pools[i]);
        let checked = match workload {
            Workload::Fib => self.fib(pools, joiner),
            Workload::Tree => self.tree(pools, joiner),
            Workload::Quicksort => self.quicksort(index, joiner),
            Workload::Nqueens => self.nqueens(pools, joiner),
            Workload::Scope | Workload::NestedScopes => self.scope(workload, index, joiner),
        };
        checked.unwrap_or_else(|what| {
            panic!("fork-join {workload:?}: {joiner} computed a wrong result ({what})")
        })
    }

    fn fib(&self, pools: Option<&Pools>, joiner: Joiner) -> Result<f64, String> {
        let n = self.sizes.fib;
        let (took, result) = time_joins!(joiner, pools, fib, fib_chili, n);
        if result != fib_reference(n) {
            return Err(format!("fib({n}) = {result}"));
        }
        Ok(took.as_nanos() as f64 / fib_joins(n) as f64)
    }

    fn tree(&self, pools: Option<&Pools>, joiner: Joiner) -> Result<f64, String> {
        let levels = self.sizes.tree_levels;
        let tree = self.tree.as_deref().expect("the tree was built");
        let (took, result) = time_joins!(joiner, pools, tree_sum, tree_sum_chili, tree);
        if result != tree_reference(levels) {
            return Err(format!("sum {result}"));
        }
        Ok(took.as_nanos() as f64 / tree_nodes(levels) as f64)
    }

    fn quicksort(&mut self, index: Option<usize>, joiner: Joiner) -> Result<f64, String> {
        let pools = index.map(|i| &self.pools[i]);
        let buffer = &mut self.sort_buffer;
        buffer.copy_from_slice(&self.sort_input);
        let (took, ()) = time_joins!(joiner, pools, quicksort, quicksort_chili, buffer);
        if *buffer != self.sort_reference {
            return Err("not the sorted input".to_owned());
        }
        Ok(took.as_secs_f64() * 1e3)
    }

    fn nqueens(&self, pools: Option<&Pools>, joiner: Joiner) -> Result<f64, String> {
        let n = self.sizes.queens;
        let (took, result) = time_joins!(joiner, pools, nqueens, nqueens_chili, n);
        let expected = queens_reference(n).unwrap_or_else(|| nqueens::<Serial>(n));
        if result != expected {
            return Err(format!("{result} solutions of {n} queens"));
        }
        Ok(took.as_secs_f64() * 1e3)
    }

    fn scope(
        &mut self,
        workload: Workload,
        index: Option<usize>,
        joiner: Joiner,
    ) -> Result<f64, String> {
        let nested = workload == Workload::NestedScopes;
        let pools = index.map(|i| &self.pools[i]);
        let marks = if nested {
            &mut self.nested_marks
        } else {
            &mut self.flat_marks
        };
        marks.reset();
        let marks = &*marks;
        let levels = self.sizes.scope_levels;
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
        marks.check()?;
        Ok(took.as_nanos() as f64 / marks.len() as f64)
    }

    /// The table's rows: for each workload measured, one row per thread
    /// count; targets (dreadpool's time over rayon's) on the largest count
    /// above 1.
    pub fn rows(&self) -> Vec<Row> {
        let judged = self.thread_counts().into_iter().filter(|&t| t > 1).max();
        let mut rows = Vec::new();
        for &workload in Workload::ALL {
            for threads in self.thread_counts() {
                let values: Vec<(Joiner, f64)> = Joiner::COLUMNS
                    .into_iter()
                    .filter_map(|j| {
                        let samples = self.samples.get(&(workload, threads, j))?;
                        report::median(samples).map(|m| (j, m))
                    })
                    .collect();
                if values.is_empty() {
                    continue;
                }
                rows.push(Row {
                    workload,
                    metric: workload.label(&self.sizes),
                    threads,
                    unit: workload.unit(),
                    values,
                    target: workload.target().filter(|_| Some(threads) == judged),
                });
            }
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bench_measures_and_judges_every_workload() {
        let mut bench = Bench::new(Sizes::SMOKE, &[1, 2], Workload::ALL);
        // Every contender takes the first turn once.
        for turn in 0..3 {
            bench.repetition(turn);
        }
        let rows = bench.rows();
        assert_eq!(rows.len(), Workload::ALL.len() * 2, "{rows:#?}");
        for row in &rows {
            let judged = row.threads == 2 && row.workload.joins();
            assert_eq!(row.target.is_some(), judged, "{row:?}");
            assert!(row.value(Joiner::Dreadpool).is_some(), "{row:?}");
            assert!(row.value(Joiner::Rayon).is_some(), "{row:?}");
            assert_eq!(
                row.value(Joiner::Chili).is_some(),
                row.workload.joins(),
                "{row:?}"
            );
        }
        let table = super::super::markdown_table(&rows);
        assert_eq!(table.lines().count(), 2 + rows.len());
    }
}
