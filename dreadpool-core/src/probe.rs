//! One call per worker state change, reaching all three sinks: the
//! counters (`metrics/`), the flight recorder (`recorder/`) and `tracing`
//! (`trace.rs`).
//!
//! The worker loop says what happened (`probe.sleeping()`), never which
//! sink wants to know: each sink keeps its own meaning of the event (the
//! counters close a busy stretch where the recorder writes a state change).
//! Every event's method is `#[inline(always)]` and forwards to the sinks'
//! methods of the same name, which are empty with their feature off, so that
//! with every feature off a probe call compiles to nothing.

use crate::metrics::WorkerCounters;
use crate::recorder::{FlightRecorder, WorkerTrack};
use std::time::Duration;

/// One worker seat's probe. Only the thread in the seat calls it (the
/// counters and the recorder's ring have one writer each).
pub(crate) struct WorkerProbe<'a> {
    counters: WorkerCounters<'a>,
    recorder: &'a FlightRecorder,
    index: usize,
}

impl<'a> WorkerProbe<'a> {
    /// The probe of worker `index`, writing to `counters` and `recorder`.
    #[inline(always)]
    pub(crate) fn new(
        counters: WorkerCounters<'a>,
        recorder: &'a FlightRecorder,
        index: usize,
    ) -> Self {
        WorkerProbe {
            counters,
            recorder,
            index,
        }
    }

    /// The calling thread runs this worker from now on: the sinks that
    /// need to know which worker a thread runs (the counters, for tasks from
    /// outside; the recorder, for the wakes a worker makes) look it up.
    pub(crate) fn enter_thread(&self) {
        self.counters.enter_thread();
        self.recorder.enter_thread(self.index);
    }

    /// The calling thread runs no worker from now on (also called while its
    /// thread-locals are destroyed).
    pub(crate) fn leave_thread() {
        crate::metrics::leave_thread();
        crate::recorder::leave_thread();
    }

    #[inline(always)]
    fn track(&self) -> WorkerTrack<'a> {
        self.recorder.worker(self.index)
    }

    /// The worker starts (or resumes) running tasks.
    #[inline(always)]
    pub(crate) fn running(&self) {
        self.counters.running();
        self.track().running();
    }

    /// The worker ran out of work and looks for more.
    #[inline(always)]
    pub(crate) fn searching(&self) {
        self.counters.searching();
        self.track().searching();
    }

    /// The worker found nothing anywhere and parks.
    #[inline(always)]
    pub(crate) fn sleeping(&self) {
        crate::trace::sleeping(self.index);
        self.counters.sleeping();
        self.track().sleeping();
    }

    /// The worker registered to sleep, and its second look found work: it
    /// searches again without having parked. Counted only: it is not a
    /// state change (the worker was searching and still is), so the
    /// recorder and `tracing`, which report state changes, have nothing to
    /// show, and a worker that cycles through it would flood both.
    #[inline(always)]
    pub(crate) fn sleep_cancelled(&self) {
        self.counters.sleep_cancelled();
    }

    /// The worker was woken: with a task handed to it (`handed`, it runs
    /// that next), or to search.
    #[inline(always)]
    pub(crate) fn woken(&self, handed: bool) {
        crate::trace::woken(self.index);
        self.counters.woken(handed);
        self.track().woken(handed);
    }

    /// The first search after a wake found work.
    #[inline(always)]
    pub(crate) fn wakeup_found_work(&self) {
        self.counters.wakeup_found_work();
    }

    /// The first search after a wake found nothing.
    #[inline(always)]
    pub(crate) fn wakeup_found_nothing(&self) {
        self.counters.wakeup_found_nothing();
        self.track().wakeup_found_nothing();
    }

    /// The worker tries to steal from a peer.
    #[inline(always)]
    pub(crate) fn steal_attempted(&self) {
        self.counters.steal_attempted();
    }

    /// The worker stole `batch` tasks from `victim` (one of them to run at
    /// once); `local_depth` reads its queue's depth afterwards.
    #[inline(always)]
    pub(crate) fn stole(&self, victim: usize, batch: usize, local_depth: impl FnOnce() -> usize) {
        self.counters.stole(victim, batch);
        self.track().stole(victim, batch, local_depth);
        crate::trace::stole(self.index, victim, batch);
    }

    /// The worker looked in the global queue and found it empty. Counted
    /// only, like a steal attempt: a look is not a state change.
    #[inline(always)]
    pub(crate) fn global_queue_empty(&self) {
        self.counters.global_queue_empty();
    }

    /// The worker topped its queue off from the global one with `batch`
    /// tasks (one of them to run at once).
    #[inline(always)]
    pub(crate) fn pulled_global(&self, batch: usize, local_depth: impl FnOnce() -> usize) {
        self.track().pulled_global(batch, local_depth);
    }

    /// A `join` forked on this worker.
    #[inline(always)]
    pub(crate) fn joined(&self) {
        self.counters.joined();
    }

    /// The worker shared the fork `fork`, of a join called at `site`, with
    /// idle peers.
    #[inline(always)]
    pub(crate) fn fork_shared(&self, fork: u64, site: &'static std::panic::Location<'static>) {
        self.counters.fork_shared();
        self.track().fork_shared(fork, site);
        crate::trace::fork_shared(self.index);
    }

    /// The worker took `owner`'s shared fork `fork` to run it.
    #[inline(always)]
    pub(crate) fn fork_stolen(&self, owner: usize, fork: u64) {
        self.counters.fork_stolen();
        self.track().fork_stolen(owner, fork);
        crate::trace::fork_stolen(self.index, owner);
    }

    /// A task (identity `id`, 0 if none) panicked on this worker; recorded
    /// before the panic is reported, so that a recording the report
    /// triggers shows it.
    #[inline(always)]
    pub(crate) fn panicked(&self, id: u64) {
        self.track().panicked(id);
    }

    /// A task with identity `id` panicked (recorded at the recorder's
    /// `Tasks` level only, as the end of its run).
    #[inline(always)]
    pub(crate) fn run_panicked(&self, id: u64) {
        self.track().run_panicked(id);
    }

    /// The worker waits inside a task (a scope, a handle, a join).
    #[inline(always)]
    pub(crate) fn wait_begin(&self) {
        self.track().wait_begin();
    }

    /// The wait that [`wait_begin`](Self::wait_begin) began is over.
    #[inline(always)]
    pub(crate) fn wait_end(&self) {
        self.track().wait_end();
    }

    /// A task sampled for latency starts, `schedule_delay` after its spawn
    /// (reported before the run, so that a task that panics still counts).
    #[inline(always)]
    pub(crate) fn sampled_task_started(&self, schedule_delay: Duration) {
        self.counters.sampled_task_started(schedule_delay);
    }

    /// A task sampled for latency returned after `run_time`: for the
    /// histograms and the recorder's triggers.
    #[inline(always)]
    pub(crate) fn sampled_task_ran(&self, schedule_delay: Duration, run_time: Duration) {
        self.counters.sampled_task_ran(run_time);
        self.recorder.observed_latency(schedule_delay, run_time);
    }

    /// The worker's thread is being replaced after a panic.
    #[inline(always)]
    pub(crate) fn respawning(&self) {
        self.counters.respawning();
        self.track().respawning();
    }

    /// A replacement thread took the seat over.
    #[inline(always)]
    pub(crate) fn respawned(&self) {
        self.counters.respawned();
        self.track().respawned();
    }

    /// The worker's thread exits for good.
    #[inline(always)]
    pub(crate) fn stopped(&self) {
        self.counters.stopped();
        self.track().stopped();
    }
}
