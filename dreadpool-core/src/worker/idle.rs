//! A worker with nothing to do: registers to sleep, looks once more,
//! then parks, exits at shutdown, or searches again (`sleep/README.md`).

use super::wait::WaitTarget;
use super::WorkerThread;
use crate::task::Task;

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
            return match registry.sleep().cancel(index) {
                Some(task) => Idle::HandedOff(task),
                None => Idle::Search,
            };
        }
        let shutting_down = registry.is_shutting_down();
        if (shutting_down || registry.joiners().has_waiters()) && registry.counts().is_idle() {
            registry
                .joiners()
                .release_waiters_if_idle(registry.counts());
            if shutting_down {
                // (Tasks are handed only to a worker that waits on its
                // condvar, which this one did not; should one arrive anyway,
                // it is run, not dropped.)
                if let Some(task) = registry.sleep().cancel(index) {
                    return Idle::HandedOff(task);
                }
                registry.sleep().stop_searching();
                // Sleepers waiting for the last task must see it is done.
                registry.sleep().wake_all();
                return Idle::Exit;
            }
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
}
