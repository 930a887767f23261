//! A worker with nothing to do: registers to sleep, looks once more,
//! then parks, exits at shutdown, or searches again (`sleep/README.md`);
//! and the duty of a worker that ran out of work (`idle_duty`): releasing
//! `join()` waiters, and at shutdown the last sleepers.

use super::wait::WaitTarget;
use super::WorkerThread;
use crate::task::Task;

/// What [`WorkerThread::idle_duty`] found.
pub(super) enum IdleDuty {
    /// The pool is not idle, or idle with nobody to release; or idle, its
    /// joiners released, and not shut down. The worker carries on: parks,
    /// or (worker 0 of a `use_current_thread` pool) returns to the user.
    NotDone,
    /// Shut down and idle: every sleeper was woken to exit. A pool thread
    /// exits; worker 0 returns to the user, as in `NotDone`.
    ShutDown,
    /// Shut down and idle, and the registered caller had been handed a task
    /// meanwhile: it runs that, and nobody was woken yet (the next idle
    /// does it).
    HandedOff(Task),
}

/// What the worker found when it ran out of work.
pub(super) enum Idle {
    /// Its second look found work: search again (it counts as searching).
    Search,
    /// It slept and was woken: search (it counts as searching).
    Woken,
    /// It slept and was woken with a task handed to it: run that (it counts
    /// as running).
    HandedOff(Task),
    /// The pool is shut down and idle.
    Exit,
}

impl WorkerThread {
    /// Stops searching after finding work; if this was the last searcher,
    /// spawners skipped waking sleepers on its account, so wake one more
    /// while work is visible.
    pub(super) fn stop_searching(&self) {
        let registry = &self.registry;
        if registry.sleep().stop_searching() && registry.has_visible_work() {
            registry.sleep().wake_one();
        }
    }

    /// Nothing to do anywhere: register to sleep, look once more, then park,
    /// exit, or go back to searching.
    pub(super) fn idle(&self, searching: bool, until: Option<&WaitTarget<'_>>) -> Idle {
        let registry = &self.registry;
        let index = self.state.index;
        registry.sleep().register_sleeper(index, searching);
        // Second look, after the registration's SeqCst fence: the queues, and
        // for a waiting worker its latch (see `latch.rs`).
        let second_look = !broken!("__broken_no_second_look");
        if second_look
            && (registry.has_visible_work_for(index)
                || until.is_some_and(|t| t.latch.is_set_before_sleep()))
        {
            self.probe().sleep_cancelled();
            return match registry.sleep().cancel(index) {
                Some(task) => Idle::HandedOff(task),
                None => Idle::Search,
            };
        }
        match self.idle_duty(true) {
            IdleDuty::NotDone => {}
            IdleDuty::HandedOff(task) => return Idle::HandedOff(task),
            IdleDuty::ShutDown => return Idle::Exit,
        }
        self.probe().sleeping();
        self.pacer.reset();
        let handed = match until.and_then(|t| t.deadline) {
            Some(deadline) => registry.sleep().park_until(index, deadline),
            None => registry.sleep().park(index),
        };
        self.probe().woken(handed.is_some());
        self.refresh_record_level();
        match handed {
            Some(task) => Idle::HandedOff(task),
            None => Idle::Woken,
        }
    }

    /// The duty of a worker that ran out of work: if the pool is idle,
    /// releases the `join()` waiters, and at shutdown wakes every sleeper to
    /// exit. Called by a worker registered to sleep (`registered`: from
    /// [`idle`](Self::idle), after its second look found nothing) and by
    /// worker 0 of a `use_current_thread` pool at the end of each of its
    /// nested waits, which it leaves without registering
    /// (`current_thread.rs`, point 2).
    ///
    /// ## Why no joiner and no sleeper is left waiting
    ///
    /// The caller stored its completion counts (the tasks it ran), then
    /// issued a `SeqCst` fence: a registered worker's in
    /// `Sleep::register_sleeper`, worker 0's in `current_thread.rs`. Every
    /// read below comes after that fence.
    ///
    /// - A joiner increments `waiters`, fences, then reads the counts
    ///   (`IdleLatch::wait`). Of the two fences one comes first: either the
    ///   joiner sees our completions and returns by itself, or we see it in
    ///   [`has_waiters`](crate::idle_latch::IdleLatch::has_waiters) and
    ///   release it. The release checks the counts again under the
    ///   generation mutex, so a joiner that arrived since with new work is
    ///   not released early (`IdleLatch::release_waiters_if_idle`).
    /// - A sleeper registers (its fence), then reads the shutdown flag and
    ///   the counts before it parks. Either its check sees our completions
    ///   and it exits by itself, or it is in the idle list by the time we
    ///   read the flag and the counts, and `wake_all` takes it from there.
    ///   The flag itself is not raced: `begin_shutdown` stores it and then
    ///   wakes all, under the idle list's lock.
    ///
    /// A registered caller at shutdown first takes itself off the idle list
    /// (`Sleep::cancel`), so that `wake_all` wakes the others and not itself;
    /// a task handed to it in between is returned, to be run, not dropped
    /// (tasks are handed only to a worker waiting on its condvar, which it
    /// did not, so this should not happen).
    #[inline]
    pub(super) fn idle_duty(&self, registered: bool) -> IdleDuty {
        let registry = &self.registry;
        let shutting_down = registry.is_shutting_down();
        if !((shutting_down || registry.joiners().has_waiters()) && registry.counts().is_idle()) {
            return IdleDuty::NotDone;
        }
        registry
            .joiners()
            .release_waiters_if_idle(registry.counts());
        if !shutting_down {
            return IdleDuty::NotDone;
        }
        if registered {
            if let Some(task) = registry.sleep().cancel(self.state.index) {
                return IdleDuty::HandedOff(task);
            }
            registry.sleep().stop_searching();
        }
        // Sleepers waiting for the last task must see it is done.
        registry.sleep().wake_all();
        IdleDuty::ShutDown
    }
}
