//! The empty counters, compiled without the `metrics` feature: the same
//! signatures as `enabled.rs`, every body empty, so call sites need no `cfg`
//! and the optimiser removes them entirely.

use std::time::{Duration, Instant};

/// No metrics: nothing to keep.
pub(crate) struct PoolCounters;

impl PoolCounters {
    pub(crate) fn new(_workers: usize, _sampling: u32) -> Self {
        PoolCounters
    }

    #[inline(always)]
    pub(crate) fn worker(&self, _index: usize) -> WorkerCounters<'_> {
        WorkerCounters(std::marker::PhantomData)
    }

    #[inline(always)]
    pub(crate) fn sample_spawn(&self) -> Option<Instant> {
        None
    }
}

#[inline(always)]
pub(crate) fn leave_thread() {}

#[inline(always)]
pub(crate) fn count_outside_task() {}

/// No metrics: never times a spawn.
pub(crate) struct SpawnSampler;

impl SpawnSampler {
    pub(crate) fn new() -> Self {
        SpawnSampler
    }

    #[inline(always)]
    pub(crate) fn sample(&self, _pool: &PoolCounters) -> Option<Instant> {
        None
    }
}

/// No metrics: records nothing.
pub(crate) struct WorkerCounters<'a>(std::marker::PhantomData<&'a ()>);

#[allow(clippy::unused_self)]
impl WorkerCounters<'_> {
    #[inline(always)]
    pub(crate) fn enter_thread(&self) {}
    #[inline(always)]
    pub(crate) fn steal_attempted(&self) {}
    #[inline(always)]
    pub(crate) fn stole(&self, _victim: usize, _tasks: usize) {}
    #[inline(always)]
    pub(crate) fn running(&self) {}
    #[inline(always)]
    pub(crate) fn searching(&self) {}
    #[inline(always)]
    pub(crate) fn sleeping(&self) {}
    #[inline(always)]
    pub(crate) fn sleep_cancelled(&self) {}
    #[inline(always)]
    pub(crate) fn global_queue_empty(&self) {}
    #[inline(always)]
    pub(crate) fn woken(&self, _handed: bool) {}
    #[inline(always)]
    pub(crate) fn wakeup_found_work(&self) {}
    #[inline(always)]
    pub(crate) fn wakeup_found_nothing(&self) {}
    #[inline(always)]
    pub(crate) fn panicked(&self) {}
    #[inline(always)]
    pub(crate) fn joined(&self) {}
    #[inline(always)]
    pub(crate) fn fork_shared(&self) {}
    #[inline(always)]
    pub(crate) fn fork_stolen(&self) {}
    #[inline(always)]
    pub(crate) fn respawning(&self) {}
    #[inline(always)]
    pub(crate) fn respawned(&self) {}
    #[inline(always)]
    pub(crate) fn stopped(&self) {}
    #[inline(always)]
    pub(crate) fn sampled_task_started(&self, _schedule_delay: Duration) {}
    #[inline(always)]
    pub(crate) fn sampled_task_ran(&self, _run_time: Duration) {}
}
