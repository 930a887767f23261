//! The worker loop's states: running tasks, searching for more, and
//! going idle, with each state change reported.

use super::idle::Idle;
use super::join_spin::JoinSpin;
use super::wait::{WaitLatch, WaitTarget};
use super::{WorkerThread, GLOBAL_CHECK_INTERVAL};
use crate::panic::PanicPolicy;
use std::time::Instant;

/// How a worker loop ended.
pub(super) enum Exit {
    /// The pool shut down and is idle.
    Shutdown,
    /// A task panicked under [`PanicPolicy::Respawn`]: replace the thread.
    Respawn,
    /// A nested loop's latch was set.
    Done,
    /// A nested loop's deadline passed.
    TimedOut,
}

impl WorkerThread {
    /// The worker loop. `until` is `None` for the thread's main loop, which
    /// runs until shutdown (or a respawn); `Some` for a worker waiting inside
    /// one of its tasks, which runs until the target's latch is set.
    pub(super) fn run_loop(&self, until: Option<&WaitTarget<'_>>) -> Exit {
        let probe = self.probe();
        probe.running();
        // Counted by the sleep protocol as a searcher (woken, or back from a
        // second look that found work).
        let mut searching = false;
        // Woken from a park and not yet told whether that found work.
        let mut woken = false;
        // A joiner's looks again before it sleeps (`join_spin.rs`); under
        // way only while `searching` is false, and over before `idle`.
        let mut spin = JoinSpin::new();
        loop {
            if let Some(target) = until {
                let exit = if target.latch.is_set() {
                    Some(Exit::Done)
                } else if target.deadline.is_some_and(|d| Instant::now() >= d) {
                    Some(Exit::TimedOut)
                } else {
                    None
                };
                if let Some(exit) = exit {
                    if searching {
                        self.stop_searching();
                        probe.running();
                    } else if spin.is_spinning() {
                        probe.running();
                    }
                    if woken {
                        probe.wakeup_found_work();
                    }
                    return exit;
                }
            }
            let found = if woken {
                self.find_task_after_wake()
            } else if let Some(target) = until {
                match target.latch {
                    WaitLatch::Fork(_) => self.find_task_in_join(),
                    WaitLatch::Task(_) => self.find_task_in_wait(),
                }
            } else {
                self.find_task()
            };
            match found {
                Some(task) => {
                    // (A woken worker is always searching: checking `woken`
                    // only then keeps it off the per-task path.)
                    if searching {
                        searching = false;
                        self.stop_searching();
                        probe.running();
                        if woken {
                            woken = false;
                            probe.wakeup_found_work();
                        }
                    } else if spin.is_spinning() {
                        spin.found_work();
                        probe.running();
                    }
                    if self.execute(task, until.is_some()) == PanicPolicy::Respawn {
                        return Exit::Respawn;
                    }
                    if until.is_none() && self.run_local_queue() == PanicPolicy::Respawn {
                        return Exit::Respawn;
                    }
                }
                None => {
                    if woken {
                        woken = false;
                        probe.wakeup_found_nothing();
                    }
                    if !searching && !spin.is_spinning() {
                        probe.searching();
                    }
                    let joins = until.is_some_and(|t| matches!(t.latch, WaitLatch::Fork(_)));
                    if joins && !searching && spin.look_again() {
                        continue;
                    }
                    match self.idle(searching, until) {
                        Idle::Search => searching = true,
                        Idle::Woken => {
                            searching = true;
                            woken = true;
                        }
                        Idle::HandedOff(task) => {
                            searching = false;
                            probe.running();
                            probe.wakeup_found_work();
                            // Run at once, whatever `until` says: the task is
                            // ours alone, and the loop's next turn checks the
                            // latch and the deadline again.
                            if self.execute(task, until.is_some()) == PanicPolicy::Respawn {
                                return Exit::Respawn;
                            }
                        }
                        Idle::Exit => return Exit::Shutdown,
                    }
                }
            }
        }
    }

    /// The main loop's common case, in a loop of its own: runs tasks from
    /// the local queue back to back while it has them, exactly as
    /// [`find_task`](Self::find_task) would pick them, and returns (for the
    /// main loop to look further) when it is empty, at the tick on which
    /// `find_task` looks at the inbox and the global queue first, or when a
    /// task's panic calls for a respawn.
    ///
    /// Out of line: inside `run_loop`, which also carries the searching,
    /// sleeping and waiting states, LLVM kept the task and the loop's flags
    /// on the stack and moved the task through it three times per task; the
    /// `metrics` build's larger state changes made it worse (`BENCHMARKS.md`,
    /// "Core design figures": worker-run-local-queue).
    ///
    /// Whether runs are recorded is looked at once, on entry: the worker's
    /// cached flight-recorder level only changes at the check tick (and
    /// around sleeps in a task's wait), so a level switch takes effect
    /// within the same 61 tasks as before, and each of the two loops stays
    /// as small as the build without the recorder (with the test inside
    /// the loop, the recorder build's loop grew: `BENCHMARKS.md`, "Core
    /// design figures": worker-run-local-queue).
    #[inline(never)]
    pub(super) fn run_local_queue(&self) -> PanicPolicy {
        if self.records_tasks() {
            self.run_local_queue_as::<true>()
        } else {
            self.run_local_queue_as::<false>()
        }
    }

    #[inline(always)]
    pub(super) fn run_local_queue_as<const RECORDED: bool>(&self) -> PanicPolicy {
        loop {
            let tick = self.tick.get().wrapping_add(1);
            if tick.is_multiple_of(GLOBAL_CHECK_INTERVAL) {
                return PanicPolicy::Continue;
            }
            let Some(task) = self.state.queue.pop() else {
                return PanicPolicy::Continue;
            };
            self.tick.set(tick);
            let policy = if RECORDED {
                self.execute_recorded(task, false)
            } else {
                self.execute_unrecorded(task, false)
            };
            if policy == PanicPolicy::Respawn {
                return PanicPolicy::Respawn;
            }
        }
    }
}
