//! Running one task: its panic caught, its completion counted, its run
//! recorded at the flight recorder's `Tasks` level, a sampled one timed.

use super::current::with_worker;
use super::WorkerThread;
use crate::panic::PanicPolicy;
use crate::task::Task;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs a task picked for latency sampling, recording its schedule delay and
/// run time on the worker that runs it.
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
pub(crate) fn run_timed(spawned: std::time::Instant, task: Task) {
    let started = std::time::Instant::now();
    let delay = started.saturating_duration_since(spawned);
    // (Recorded before the run, so that a task that panics still counts.)
    with_worker(|worker| worker.probe().sampled_task_started(delay));
    task.run();
    let ran = started.elapsed();
    with_worker(|worker| worker.probe().sampled_task_ran(delay, ran));
}

impl WorkerThread {
    /// Runs one task, catching its panic. Returns the policy to apply:
    /// anything but `Respawn` means carry on with this thread. `nested` (the
    /// worker is waiting inside another task) turns `Respawn` into
    /// `Continue`: the thread cannot be replaced under the waiting task.
    #[inline(always)]
    pub(super) fn execute(&self, task: Task, nested: bool) -> PanicPolicy {
        if self.records_tasks() {
            return self.execute_recorded(task, nested);
        }
        self.execute_unrecorded(task, nested)
    }

    /// [`execute`](Self::execute) at the recorder's `Tasks` level: the run
    /// after an event carrying the task's identity. Inlined: out of line it
    /// cost the `Tasks` level a call per task, and inlined it costs the
    /// `Scheduler` level nothing measurable (`BENCHMARKS.md`, "Core design
    /// figures": worker-execute-recorded).
    #[inline(always)]
    pub(super) fn execute_recorded(&self, task: Task, nested: bool) -> PanicPolicy {
        let id = task.record_id();
        // SAFETY: as in `push_local`.
        unsafe { self.seat_ring.run_begin(id) };
        match catch_unwind(AssertUnwindSafe(move || task.run())) {
            // The run's end is the next event of this level (the next run's
            // begin, a state change, a wait's end): see `recording::merge`.
            Ok(()) => self.completed(),
            Err(payload) => {
                self.probe().run_panicked(id);
                self.after_panic(payload, nested, id)
            }
        }
    }

    #[inline(always)]
    pub(super) fn execute_unrecorded(&self, task: Task, nested: bool) -> PanicPolicy {
        match catch_unwind(AssertUnwindSafe(move || task.run())) {
            Ok(()) => self.completed(),
            Err(payload) => self.after_panic(payload, nested, 0),
        }
    }

    /// A task returned: count it done.
    #[inline(always)]
    pub(super) fn completed(&self) -> PanicPolicy {
        self.registry.counts().completed(self.state.index);
        PanicPolicy::Continue
    }

    /// A task panicked: report it, and say whether to respawn. `id` is its
    /// identity for the flight recorder (0 if it has none). The panic is
    /// recorded before it is reported, so that a recording the report
    /// triggers shows it.
    #[cold]
    pub(super) fn after_panic(
        &self,
        payload: crate::panic::PanicPayload,
        nested: bool,
        id: u64,
    ) -> PanicPolicy {
        let index = self.state.index;
        self.probe().panicked(id);
        let policy = self.registry.on_task_panic(index, payload);
        // (on_task_panic contains the handler's and the subscriber's
        // panics itself, so this cannot unwind.)
        if policy == PanicPolicy::Respawn && !nested {
            // The replacement counts the completion (see `main`).
            return PanicPolicy::Respawn;
        }
        self.registry.counts().completed(index);
        PanicPolicy::Continue
    }
}
