//! The building thread as worker 0 (`ThreadPoolBuilder::use_current_thread`,
//! rayon's option of the same name): a worker whose thread the pool does not
//! own and which runs no worker loop of its own.
//!
//! ## What the seat is
//!
//! The thread that builds the pool takes seat 0: worker 0's `WorkerThread`
//! (its local queue, its inbox, its FIFO queue, its forks, its counters and
//! recorder ring) is made on that thread and put in its `CURRENT`
//! (`current.rs`), exactly where a worker thread keeps its own, so every
//! call that asks "which worker am I" (`install`, `join`, `scope`, a spawn,
//! `yield_now`, `yield_local`, `current_worker_index`) finds worker 0 and
//! acts as that worker: a spawn goes to its local queue, a `join` keeps its
//! second half there, a wait runs the pool's tasks. The start and exit
//! handlers and the worker span do not run for it: its thread is the
//! user's.
//!
//! It runs tasks only inside such calls (a *nested* wait: `wait.rs`'s
//! `wait_for` and `wait_for_fork`, `yielding.rs`), never in a main loop.
//! Between them it runs the user's code, and the pool must not depend on it.
//! Three things in the rest of the pool assume that a worker that is not
//! asleep will come back to the pool by itself, and each is answered here:
//!
//! 1. **Its spawns wake a sleeper with the fence of an outside spawn.** A
//!    worker's spawn into its own queue skips the fence
//!    (`Sleep::notify_local_task`) because the owner will run the task if
//!    no one steals it; worker 0 may not come back for a long time (or
//!    block, waiting for that very task). So its spawns pay the `SeqCst`
//!    fence of `Sleep::notify_external_task`, which pairs with a sleeper's
//!    registration fence: either the sleeper's second look sees the task
//!    (worker 0's queue is polled: it is never registered as a sleeper
//!    outside a wait, `sleep/awake.rs`), or the spawner sees the sleeper
//!    and wakes it (the loom model `worker_0s_spawn_wakes_a_sleeping_peer`
//!    catches `__broken_current_thread_local_notify`, the wake without the
//!    fence). The other workers' spawns test nothing for it: a spawn
//!    already compares the worker's pool with the spawn's
//!    (`spawn/mod.rs`, `push_if_local`), and worker 0 is given a null
//!    pointer to compare (`WorkerThread::unfenced_spawns_into`), so its
//!    spawns fail that comparison and are recognised on the rare path
//!    that follows, where they take `WorkerThread::push_local_fenced`
//!    (`BENCHMARKS.md`, "use_current_thread on the spawn path").
//! 2. **It does the idle worker's duty when it returns to the user.** The
//!    pool's `join()` waiters and a shutdown's last sleepers are released
//!    by a worker that, after completing tasks, registers to sleep (its
//!    `SeqCst` fence), sees the pool idle and releases them
//!    (`WorkerThread::idle_duty`, `idle.rs`, where the argument is).
//!    Worker 0 completes tasks and then returns to the user's code without
//!    registering. So every nested wait of worker 0 ends with the same
//!    step ([`CurrentThreadWait`]'s drop): a `SeqCst` fence after its
//!    completion counts (in the place of the sleeper's registration fence:
//!    it pairs with the joiner's fence in `IdleLatch::wait`, and with a
//!    sleeper's registration), then the same `idle_duty`: if the pool is
//!    idle, the joiners released and, at shutdown, every sleeper woken to
//!    exit. Without it, a `join()` whose last task worker 0 ran
//!    in a `yield_now` would wait forever (`tests/current_thread.rs`,
//!    `a_join_elsewhere_returns_when_worker_0_ran_the_last_task`, and the
//!    loom model `a_join_is_released_by_worker_0s_yield`, which catches
//!    `__broken_current_thread_no_release`).
//! 3. **Nobody waits for it to wake.** It is registered as a sleeper only
//!    inside a nested wait, where it runs the loop that a wake expects and
//!    where whoever wakes it (a latch's setter, a spawner) is right to. Its
//!    local queue is open to thieves the whole time; what only it may run
//!    is its inbox (`broadcast`, `spawn_broadcast`), which waits for its
//!    next yield or wait, as in rayon. The all-asleep handoff of an outside
//!    spawn (`Sleep::deliver_external_task`) needs every worker asleep, so
//!    while worker 0 is in the user's code it never happens.
//!
//! A task worker 0 runs that panics is handled as in any nested wait: its
//! thread cannot be replaced, so `PanicPolicy::Respawn` acts as `Continue`
//! (counted, reported to the handler, the thread carries on).
//!
//! ## Leaving the seat
//!
//! Worker 0 leaves its seat ([`vacate`]) when its thread drops or shuts the
//! pool down outside any wait of its own, when it detaches the pool, and
//! when its thread exits while the pool lives (its `CURRENT` is destroyed).
//! Leaving takes it out of `CURRENT` (so `current_worker_index()` is `None`
//! and later spawns from the thread are outside spawns), and hands what only
//! it could run to the others: its inbox moves to the global queue
//! (`Registry::vacate_current_thread_seat`, a broadcast task addressed to
//! index 0 then runs on another worker, still given 0), and every sleeper
//! is woken to look. Its local queue needs no move: the deque's buffer is
//! shared with the stealers the peers hold, so its tasks stay there for
//! them to steal. A drop then joins the other threads as from any outside
//! thread; the `WorkerThread` itself is kept until the thread exits
//! (`retire`), because a `join` frame further up this thread's stack may
//! still hold a reference to it.
//!
//! Dropped *inside* one of worker 0's waits (by a task it runs), the pool is
//! shut down as by any of its own tasks: the shutdown starts and the drop
//! returns without joining; worker 0 keeps its seat until its thread exits.
//!
//! rayon instead leaks the worker, and the registry with it, in the thread
//! for the rest of its life (its docs say so); after a drop here the thread
//! is an outside thread again and may build another such pool.

use super::current::{current_ptr, retire_current, set_current};
use super::idle::IdleDuty;
use super::{WorkerSeat, WorkerThread};
use crate::registry::Registry;
use crate::sync::atomic::{fence, Ordering};
use crate::sync::Arc;
use std::rc::Rc;

/// Makes the calling thread worker `seat.index` (0) of `registry`'s pool.
/// The caller checked that the thread is no pool's worker.
pub(crate) fn adopt(registry: &Arc<Registry>, seat: WorkerSeat) {
    let mut worker = WorkerThread::new(Arc::clone(registry), seat);
    worker.user_thread = true;
    // Its spawns fail the common path's comparison and take the fenced one
    // (point 1).
    worker.unfenced_spawns_into = std::ptr::null();
    worker.refresh_record_level();
    let worker = Rc::new(worker);
    set_current(Some(worker));
}

/// Whether the calling thread is worker 0 of `registry`'s pool by
/// `use_current_thread`, outside every wait of its own: the place where it
/// may leave its seat.
pub(crate) fn is_seated_outside_waits(registry: &Registry) -> bool {
    let worker = current_ptr();
    if worker.is_null() {
        return false;
    }
    // SAFETY: non-null, so `CURRENT` holds it for as long as this thread
    // does not clear it, which nothing below does.
    let worker = unsafe { &*worker };
    worker.user_thread && worker.user_waits.get() == 0 && std::ptr::eq(worker.registry(), registry)
}

/// Worker 0 of a `use_current_thread` pool leaves its seat (module docs).
/// The caller checked [`is_seated_outside_waits`], or the thread's locals are
/// being destroyed (`current.rs`).
pub(crate) fn vacate() {
    if let Some(worker) = retire_current() {
        leave(&worker);
    }
}

/// What leaving the seat tells the pool (see [`vacate`]).
pub(super) fn leave(worker: &WorkerThread) {
    let registry = &worker.registry;
    registry.probe(worker.index()).stopped();
    registry.vacate_current_thread_seat(worker.index());
}

/// Held by worker 0 of a `use_current_thread` pool for the length of each of
/// its nested waits (`wait_for`, `wait_for_fork`, a yield): counts them,
/// and, when the wait ends, does an idle worker's duty (module docs, point
/// 2). On any other worker it is nothing.
pub(super) struct CurrentThreadWait<'a> {
    worker: Option<&'a WorkerThread>,
}

impl WorkerThread {
    /// Enters a nested wait (see [`CurrentThreadWait`]).
    #[inline(always)]
    pub(super) fn enter_wait(&self) -> CurrentThreadWait<'_> {
        if !self.user_thread {
            return CurrentThreadWait { worker: None };
        }
        self.user_waits.set(self.user_waits.get() + 1);
        CurrentThreadWait { worker: Some(self) }
    }
}

impl Drop for CurrentThreadWait<'_> {
    fn drop(&mut self) {
        if let Some(worker) = self.worker {
            worker.user_waits.set(worker.user_waits.get() - 1);
            back_to_the_user(worker);
        }
    }
}

/// Worker 0 returns to the user's code after running tasks: releases the
/// pool's joiners and, at shutdown, its last sleepers, if the pool is idle
/// (module docs, point 2).
#[cold]
fn back_to_the_user(worker: &WorkerThread) {
    // The broken variant returns to the user as if it had not run any task.
    if broken!("__broken_current_thread_no_release") {
        return;
    }
    // SeqCst fence: orders this thread's completion counts before the reads
    // of the idle duty, in the place of a sleeper's registration fence (the
    // argument is at `idle_duty`).
    fence(Ordering::SeqCst);
    // Either way worker 0 returns to the user; unregistered, it is never
    // handed a task here.
    let duty = worker.idle_duty(false);
    debug_assert!(!matches!(duty, IdleDuty::HandedOff(_)));
}
