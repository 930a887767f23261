//! The empty flight recorder, compiled without the `recorder` feature: the
//! same signatures as `enabled.rs`, every body empty, so call sites need no
//! `cfg` and the optimiser removes them entirely.

use std::time::Duration;

/// Whether the recorder is compiled in: lets call sites fold their checks
/// away without it.
pub(crate) const ENABLED: bool = false;

/// Nothing to configure. (A struct with no fields rather than a unit
/// struct, so that the builder makes it with `default()` whichever twin it
/// gets.)
#[derive(Clone, Default)]
pub(crate) struct RecorderConfig {}

/// No recorder.
pub(crate) struct FlightRecorder;

#[allow(clippy::unused_self)]
impl FlightRecorder {
    pub(crate) fn new(_pool_name: &str, _workers: usize, _config: RecorderConfig) -> Self {
        FlightRecorder
    }
    #[inline(always)]
    pub(crate) fn worker(&self, _index: usize) -> WorkerTrack<'_> {
        WorkerTrack(std::marker::PhantomData)
    }
    #[inline(always)]
    pub(crate) fn records_tasks(&self) -> bool {
        false
    }
    #[inline(always)]
    pub(crate) fn outside_spawn(
        &self,
        _id: u64,
        _inbox: Option<usize>,
        _site: &'static std::panic::Location<'static>,
    ) {
    }
    pub(crate) fn waker_log(&self) -> WakerLog {
        WakerLog
    }
    #[inline(always)]
    pub(crate) fn observed_latency(&self, _schedule_delay: Duration, _run_time: Duration) {}
    #[inline(always)]
    pub(crate) fn observed_panic(&self) {}
    pub(crate) fn enter_thread(&self, _index: usize) {}
}

/// No recorder: no ring.
pub(crate) struct SeatRing;

/// No recorder: tasks need no identity (a task made with one, which only a
/// recorder's `Tasks` level asks for, gets 0).
#[inline(always)]
pub(crate) fn next_task_id() -> u64 {
    0
}

#[allow(clippy::unused_self)]
impl FlightRecorder {
    pub(crate) fn seat_ring(&self, _index: usize) -> SeatRing {
        SeatRing
    }
}

#[allow(clippy::unused_self)]
impl SeatRing {
    /// # Safety
    ///
    /// None needed: it does nothing (the same contract as the real one).
    #[inline(always)]
    pub(crate) unsafe fn spawned_local(
        &self,
        _id: u64,
        _site: &'static std::panic::Location<'static>,
    ) {
    }
    #[inline(always)]
    pub(crate) fn next_task_id(&self) -> u64 {
        0
    }
    /// # Safety
    ///
    /// As for `spawned_local`.
    #[inline(always)]
    pub(crate) unsafe fn run_begin(&self, _id: u64) {}
}

/// No recorder: records nothing.
pub(crate) struct WorkerTrack<'a>(std::marker::PhantomData<&'a ()>);

#[inline(always)]
pub(crate) fn leave_thread() {}

#[allow(clippy::unused_self)]
impl WorkerTrack<'_> {
    #[inline(always)]
    pub(crate) fn spawned_inbox(
        &self,
        _id: u64,
        _worker: usize,
        _site: &'static std::panic::Location<'static>,
    ) {
    }
    #[inline(always)]
    pub(crate) fn run_panicked(&self, _id: u64) {}
    #[inline(always)]
    pub(crate) fn pulled_global(&self, _batch: usize, _local_depth: impl FnOnce() -> usize) {}
    #[inline(always)]
    pub(crate) fn stole(
        &self,
        _victim: usize,
        _batch: usize,
        _local_depth: impl FnOnce() -> usize,
    ) {
    }
    #[inline(always)]
    pub(crate) fn running(&self) {}
    #[inline(always)]
    pub(crate) fn searching(&self) {}
    #[inline(always)]
    pub(crate) fn sleeping(&self) {}
    #[inline(always)]
    pub(crate) fn respawning(&self) {}
    #[inline(always)]
    pub(crate) fn stopped(&self) {}
    #[inline(always)]
    pub(crate) fn woken(&self, _handoff: bool) {}
    #[inline(always)]
    pub(crate) fn wakeup_found_nothing(&self) {}
    #[inline(always)]
    pub(crate) fn respawned(&self) {}
    #[inline(always)]
    pub(crate) fn panicked(&self, _id: u64) {}
    #[inline(always)]
    pub(crate) fn wait_begin(&self) {}
    #[inline(always)]
    pub(crate) fn wait_end(&self) {}
    #[inline(always)]
    pub(crate) fn fork_shared(&self, _fork: u64, _site: &'static std::panic::Location<'static>) {}
    #[inline(always)]
    pub(crate) fn fork_stolen(&self, _owner: usize, _fork: u64) {}
}

/// No recorder: notes no wake.
pub(crate) struct WakerLog;

#[allow(clippy::unused_self)]
impl WakerLog {
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn none() -> Self {
        WakerLog
    }
    #[inline(always)]
    pub(crate) fn unparking(&self, _index: usize) {}
}
