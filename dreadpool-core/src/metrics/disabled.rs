//! The empty recorder, compiled without the `metrics` feature: the same
//! signatures as `enabled.rs`, every body empty, so call sites need no `cfg`
//! and the optimiser removes them entirely.

use std::time::{Duration, Instant};

/// No metrics: nothing to keep.
pub(crate) struct PoolRecorder;

impl PoolRecorder {
    pub(crate) fn new(_workers: usize, _sampling: u32) -> Self {
        PoolRecorder
    }

    #[inline(always)]
    pub(crate) fn worker(&self, _index: usize) -> WorkerRecorder<'_> {
        WorkerRecorder(std::marker::PhantomData)
    }

    #[inline(always)]
    pub(crate) fn sample_spawn(&self) -> Option<Instant> {
        None
    }

    #[inline(always)]
    pub(crate) fn outside_task_counter(&self, _index: usize) -> OutsideTaskCounter {
        OutsideTaskCounter
    }
}

/// No metrics: counts nothing.
pub(crate) struct OutsideTaskCounter;

impl OutsideTaskCounter {
    #[inline(always)]
    pub(crate) fn count(&self) {}
}

/// No metrics: never times a spawn.
pub(crate) struct SpawnSampler;

impl SpawnSampler {
    pub(crate) fn new() -> Self {
        SpawnSampler
    }

    #[inline(always)]
    pub(crate) fn sample(&self, _pool: &PoolRecorder) -> Option<Instant> {
        None
    }
}

/// No metrics: records nothing.
pub(crate) struct WorkerRecorder<'a>(std::marker::PhantomData<&'a ()>);

#[allow(clippy::unused_self)]
impl WorkerRecorder<'_> {
    #[inline(always)]
    pub(crate) fn steal_attempted(&self) {}
    #[inline(always)]
    pub(crate) fn stole(&self, _victim: usize, _tasks: usize) {}
    #[inline(always)]
    pub(crate) fn running(&self) {}
    #[inline(always)]
    pub(crate) fn stopped_running(&self) {}
    #[inline(always)]
    pub(crate) fn parking(&self) {}
    #[inline(always)]
    pub(crate) fn searching(&self) {}
    #[inline(always)]
    pub(crate) fn wakeup(&self) {}
    #[inline(always)]
    pub(crate) fn noop_wakeup(&self) {}
    #[inline(always)]
    pub(crate) fn panicked(&self) {}
    #[inline(always)]
    pub(crate) fn joined(&self) {}
    #[inline(always)]
    pub(crate) fn shared_fork(&self) {}
    #[inline(always)]
    pub(crate) fn stole_fork(&self) {}
    #[inline(always)]
    pub(crate) fn respawning(&self) {}
    #[inline(always)]
    pub(crate) fn respawned(&self) {}
    #[inline(always)]
    pub(crate) fn stopped(&self) {}
    #[inline(always)]
    pub(crate) fn schedule_delay(&self, _delay: Duration) {}
    #[inline(always)]
    pub(crate) fn run_time(&self, _time: Duration) {}
}
