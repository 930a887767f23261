//! FIFO spawns (rayon's `spawn_fifo`): the tasks one worker spawns this way
//! start in the order it spawned them, where its ordinary spawns start
//! newest first (the local queue is LIFO: `builder.rs` says why).
//!
//! ## The trampoline
//!
//! A worker's FIFO spawn pushes the task onto that worker's FIFO queue (an
//! `Injector` per worker in the registry, `Registry::fifos`) and a
//! *trampoline* onto its local queue, by the ordinary local spawn (counted,
//! recorded, sampled: the trampoline is the task as far as the pool is
//! concerned). A trampoline carries only the worker's index; whoever runs
//! it (the owner, newest first, or a thief) takes the *oldest* task from
//! that FIFO queue and runs it. So:
//!
//! - every task runs exactly once: each spawn pushes one task and one
//!   trampoline, the task before the trampoline (so a trampoline never
//!   finds the queue empty), and each trampoline takes one task;
//! - the tasks start in their spawn order, whatever order the trampolines
//!   run in (their starts, not their ends: a thief's may run alongside);
//! - no new scheduling path: stealing, sleeping, counting and draining at
//!   shutdown are the local queue's, and a task's panic is its trampoline's.
//!
//! A trampoline runs only on a worker of its own pool (tasks in a pool's
//! queues are run by its workers alone), which is how it finds the FIFO
//! queue without carrying a pointer.
//!
//! From outside the pool a FIFO spawn is an ordinary one: such tasks go to
//! the global queue, FIFO already.
//!
//! `tests/fifo.rs` checks the order, stealing, scopes and panics; the loom
//! model `fifo_tasks_run_once_in_spawn_order` (`tests/loom.rs`) checks the
//! two claims above against every interleaving with a thief, and catches
//! the trampoline pushed before its task (`__broken_fifo_trampoline_first`)
//! and FIFO spawns made ordinary ones (`__broken_fifo_as_lifo`).

use crate::queue::Steal;
use crate::registry::Registry;
use crate::task::IntoTask;
use crate::worker;

impl Registry {
    /// Spawns `task` in FIFO order with the other FIFO spawns of the
    /// calling worker (see the module docs); from outside the pool, as
    /// [`try_spawn`](Self::try_spawn).
    pub(crate) fn try_spawn_fifo<T: IntoTask>(&self, task: T) -> Result<(), T> {
        let Some(index) = worker::current_index(Some(self)) else {
            return self.try_spawn(task);
        };
        // The broken variant spawns the task as an ordinary (LIFO) one.
        if broken!("__broken_fifo_as_lifo") {
            return self.try_spawn(task);
        }
        let trampoline = move || run_oldest_fifo_task(index);
        // The broken variant pushes the trampoline before its task, so that
        // a thief can run the trampoline before the task is there.
        if broken!("__broken_fifo_trampoline_first") {
            if self.try_spawn(trampoline).is_err() {
                unreachable!("a worker's spawn into its own pool is always accepted");
            }
            self.fifos()[index].push(task.into_task());
            return Ok(());
        }
        // The task first, then its trampoline: a trampoline that runs
        // finds at least its own task (a thief's steal of the trampoline
        // synchronises with the push that follows this one).
        self.fifos()[index].push(task.into_task());
        if self.try_spawn(trampoline).is_err() {
            unreachable!("a worker's spawn into its own pool is always accepted");
        }
        Ok(())
    }

    /// [`try_spawn_fifo`](Self::try_spawn_fifo), panicking (for the public
    /// `spawn_fifo`s) when the task is refused.
    #[track_caller]
    pub(crate) fn spawn_fifo<T: IntoTask>(&self, task: T) {
        if self.try_spawn_fifo(task).is_err() {
            self.refused();
        }
    }
}

/// A trampoline's body: runs the oldest task of worker `index`'s FIFO
/// queue, in the pool of the worker running it.
fn run_oldest_fifo_task(index: usize) {
    let task = worker::with_current(|worker| {
        let fifo = &worker.registry().fifos()[index];
        loop {
            match fifo.steal() {
                Steal::Success(task) => break task,
                Steal::Retry => continue,
                Steal::Empty => unreachable!("a FIFO trampoline always has its task"),
            }
        }
    });
    // Run outside `with_current`, which must not be held across user code
    // that may itself spawn or wait.
    task.run();
}
