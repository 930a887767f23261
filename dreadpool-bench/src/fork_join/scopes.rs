//! Scoped spawns: one dreadpool or rayon scope spawning many tiny tasks,
//! and a binary tree of nested scopes, each task marking itself so that a
//! lost or repeated task shows.

use std::sync::atomic::{AtomicU8, Ordering};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fork_join::joiners::Pools;

    fn pools(threads: usize) -> Pools {
        Pools::new(threads)
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
}
