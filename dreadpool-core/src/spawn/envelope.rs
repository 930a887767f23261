//! What a spawn carries to its task besides the closure: the span current
//! at the spawn site, and the latency sample's spawn instant.

use crate::task::{IntoTask, Task};

/// What a spawn learns about its task before it commits to it: the span
/// current at the spawn site, when a `tracing` subscriber makes it a real
/// one.
///
/// Capturing the span calls into the subscriber, which is foreign code and
/// may panic; it happens here, before the task is counted, so that a panic
/// leaves no count behind for `join()` to wait on. Turning the closure into
/// a [`Task`] afterwards cannot fail.
///
/// Nearly every spawn has no span to carry, so the envelope is one pointer,
/// null in that case, and the span it does carry is boxed, by code out of
/// line. Holding the span (40 bytes) and the latency sample's spawn instant
/// inline moved them along every spawn and kept the spawn path from
/// inlining, even with no subscriber installed; one pointer, which
/// `try_spawn` makes a constant when no subscriber exists (see
/// `Registry::try_spawn_in_context`), costs such a spawn a few instructions
/// (`BENCHMARKS.md`, "Core design figures": spawn-envelope-size).
pub(crate) struct Envelope(Option<Box<crate::trace::SpawnContext>>);

// `inline(always)` on the spawn path's small steps: left to its heuristics,
// LLVM inlined different ones with each feature set, and an un-inlined step
// (a call, a frame, the task moved through memory) cost more than what the
// feature itself did (`BENCHMARKS.md`, "Core design figures":
// spawn-inlining).
impl Envelope {
    /// An envelope carrying nothing, for a spawn with no span to carry.
    #[inline(always)]
    pub(crate) const fn empty() -> Self {
        Envelope(None)
    }

    /// An envelope carrying the current span, if there is one to carry.
    #[inline(always)]
    pub(crate) fn new() -> Self {
        match crate::trace::SpawnContext::capture() {
            None => Envelope(None),
            Some(context) => Self::carrying(context),
        }
    }

    // Out of line and cold, like `wrap`.
    #[cold]
    #[inline(never)]
    fn carrying(context: crate::trace::SpawnContext) -> Self {
        Envelope(Some(Box::new(context)))
    }

    /// Makes `task` a [`Task`]. When a span was captured, the task runs
    /// inside it, so a host's request context follows its work onto the
    /// pool. With the `metrics` feature, a spawn picked for timing (one in
    /// `latency_sampling`, `sampled_at` its instant) is also wrapped to time
    /// its schedule delay and run time. Every other task, and every task
    /// without those features, is stored as it is: no extra size, no extra
    /// work.
    ///
    /// `identity` (given when the pool records at the flight recorder's
    /// `Tasks` level; a constant `None` without the recorder) is stored
    /// with the closure, in a box (or, from outside the pool, a slot), so
    /// that its spawn can be linked to its run.
    #[inline(always)]
    pub(crate) fn into_task(
        self,
        task: impl IntoTask,
        sampled_at: Option<std::time::Instant>,
        identity: Option<u64>,
    ) -> Task {
        let task = match identity {
            Some(id) => task.into_identified_task(id),
            None => task.into_task(),
        };
        if self.0.is_none() && sampled_at.is_none() {
            return task;
        }
        wrap(task, self.0, sampled_at)
    }

    /// [`into_task`](Self::into_task) for a spawn from outside the pool:
    /// with the `metrics` feature the task is marked
    /// ([`Task::marked_from_outside`]), so that the worker that runs it counts it.
    #[inline(always)]
    pub(crate) fn into_outside_task(
        self,
        task: impl IntoTask,
        sampled_at: Option<std::time::Instant>,
        identity: Option<u64>,
    ) -> Task {
        // (An identified task goes on: a closure's identity may take a
        // slot, `IntoTask::into_outside_task`, which marks it either way.)
        if !crate::metrics::COUNTS_BATCHES && identity.is_none() {
            return self.into_task(task, sampled_at, identity);
        }
        if self.0.is_none() && sampled_at.is_none() {
            return task.into_outside_task(identity);
        }
        // The wrapper is what runs: mark it.
        self.into_task(task, sampled_at, identity)
            .marked_from_outside()
    }
}

// Out of line and cold, so that the common path above stays small enough to
// inline into every spawn.
#[cold]
#[inline(never)]
fn wrap(
    task: Task,
    context: Option<Box<crate::trace::SpawnContext>>,
    sampled_at: Option<std::time::Instant>,
) -> Task {
    // A wrapper keeps the identity of the task it wraps, if it has one: it
    // is what runs, and its run must link to the spawn.
    let id = task.record_id();
    let task = match context {
        Some(context) => wrapper(id, move || context.in_scope(move || task.run())),
        None => task,
    };
    match sampled_at {
        Some(spawned) => wrapper(id, move || crate::worker::run_timed(spawned, task)),
        None => task,
    }
}

/// A task of `f`, with the identity `id` unless it is 0.
fn wrapper<F>(id: u64, f: F) -> Task
where
    F: FnOnce() + Send + 'static,
{
    if id == 0 {
        Task::new(f)
    } else {
        Task::identified_as(id, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrappers_and_made_tasks_take_the_identity_they_are_given() {
        let made = Task::new(|| {});
        assert_eq!(made.into_identified_task(9).record_id(), 9);
        let made = Task::new(|| {});
        assert_eq!(made.into_outside_task(Some(10)).record_id(), 10);
        // A span's or a latency sample's wrapper keeps its task's identity.
        let sampled = Envelope::empty().into_task(|| {}, Some(std::time::Instant::now()), Some(11));
        assert_eq!(sampled.record_id(), 11);
        sampled.run();
        let unsampled = Envelope::empty().into_task(|| {}, Some(std::time::Instant::now()), None);
        assert_eq!(unsampled.record_id(), 0);
        unsampled.run();
    }
}
