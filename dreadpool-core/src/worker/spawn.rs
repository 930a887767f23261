//! A spawn from one of a worker's own tasks: into its local queue.

use super::current::current_ptr;
use super::WorkerThread;
use crate::registry::Registry;
use crate::task::{Envelope, IntoTask, Task};

/// If the calling thread is a worker of `registry`, pushes `task` to its local
/// queue; otherwise gives it back.
#[inline(always)]
pub(crate) fn push_if_local<T: IntoTask>(
    registry: &Registry,
    task: T,
    envelope: Envelope,
) -> Result<(), (T, Envelope)> {
    let worker = current_ptr();
    if worker.is_null() {
        return Err((task, envelope));
    }
    // SAFETY: non-null, so `CURRENT` holds this worker (the two are set and
    // cleared together, the pointer first, also when the thread's locals
    // are destroyed: `CurrentWorker`), and nothing below runs code that
    // could clear it: making the task and pushing it run no user code.
    let worker = unsafe { &*worker };
    if !std::ptr::eq(&*worker.registry, registry) {
        return Err((task, envelope));
    }
    let sampled_at = worker.sampler.sample(&registry.counters);
    if worker.records_tasks() {
        // Made inline, as the unrecorded task is: out of line, as a generic
        // function of its own, it cost the `Tasks` level's spawns 22-30
        // instructions more (a call, a frame, the closure and the envelope
        // through memory) and the default level nothing measurable. Marked
        // unlikely, so that the spawn site's usual path stays together.
        crate::hint::cold_path();
        let id = worker.seat_ring.next_task_id();
        worker.push_local_recorded(envelope.into_task(task, sampled_at, Some(id)), id);
    } else {
        worker.push_local(envelope.into_task(task, sampled_at, None));
    }
    Ok(())
}

impl WorkerThread {
    pub(super) fn push_local(&self, task: Task) {
        self.registry.counts.local_spawned(self.state.index);
        self.state.queue.push(task);
        self.registry.sleep.notify_local_task();
    }

    /// A spawn from one of this worker's tasks while the flight recorder
    /// records spawns: recorded (`id` is the task's identity), then pushed.
    #[inline(never)]
    pub(super) fn push_local_recorded(&self, task: Task, id: u64) {
        // SAFETY: this worker holds its pool (`registry`), which owns the
        // recorder, and is the thread in the ring's seat.
        unsafe { self.seat_ring.spawned_local(id) };
        self.push_local(task);
    }
}
