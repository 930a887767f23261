//! Starting a pool's worker threads with the user's own spawner
//! ([`ThreadPoolBuilder::try_build_with_spawner`]), as rayon's
//! `spawn_handler` does: each worker is handed over as a [`WorkerStart`],
//! which the spawner runs on a thread of its choosing (a scoped thread, a
//! thread from another runtime, one with a special affinity).
//!
//! ## Joining threads the pool did not spawn
//!
//! The pool holds no `JoinHandle` for such a thread, so it counts them
//! instead ([`ExternalThreads`]): the count goes up before a `WorkerStart` is
//! handed to the spawner and down when its [`run`](WorkerStart::run)
//! returns, or when it is dropped without running. A shutdown that joins the
//! pool's threads also waits for this count to reach zero, so dropping the
//! pool still returns only once every worker has finished (its exit handler
//! included), which `build_scoped`-style spawners rely on: their scope ends
//! after the pool.
//!
//! ## No replacement threads
//!
//! The spawner is borrowed only while the pool is built, so a thread whose
//! task panicked under `PanicPolicy::Respawn` cannot be replaced: it carries
//! on as the worker (as when the OS refuses a replacement, without counting
//! as a refusal).

use crate::registry::Registry;
use crate::sync::{lock, wait, Arc, Condvar, Mutex};
use crate::worker::{self, WorkerSeat};
use std::fmt;

/// One worker of a pool being built, for a spawner to run on a thread of its
/// choosing (see
/// [`ThreadPoolBuilder::try_build_with_spawner`](crate::ThreadPoolBuilder::try_build_with_spawner)).
///
/// The spawner must call [`run`](Self::run) on the new thread. A
/// `WorkerStart` dropped without running leaves its worker without a
/// thread: work addressed to that worker alone (a
/// [`broadcast`](crate::ThreadPool::broadcast)) never runs.
pub struct WorkerStart {
    registry: Arc<Registry>,
    /// `None` once run.
    seat: Option<WorkerSeat>,
    name: String,
    stack_size: Option<usize>,
}

impl WorkerStart {
    pub(crate) fn new(
        registry: Arc<Registry>,
        seat: WorkerSeat,
        name: String,
        stack_size: Option<usize>,
    ) -> Self {
        registry.external_threads().started();
        WorkerStart {
            registry,
            seat: Some(seat),
            name,
            stack_size,
        }
    }

    /// The worker's index in its pool.
    pub fn index(&self) -> usize {
        self.seat.as_ref().expect("a WorkerStart not yet run").index
    }

    /// The name the pool would give this worker's thread (`"{prefix}-{i}"`,
    /// or what [`with_thread_names`](crate::ThreadPoolBuilder::with_thread_names)
    /// returns); the spawner may use it, or not.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The stack size the builder asked for, if any; the spawner may use it.
    pub fn stack_size(&self) -> Option<usize> {
        self.stack_size
    }

    /// Runs the worker on the calling thread until the pool shuts down: its
    /// start handler, its tasks, its exit handler.
    pub fn run(mut self) {
        let seat = self.seat.take().expect("a WorkerStart runs once");
        worker::main(Arc::clone(&self.registry), seat, false);
        // Drop counts the thread out.
    }
}

impl Drop for WorkerStart {
    fn drop(&mut self) {
        // Run or not, this thread is no longer the pool's to wait for.
        self.registry.external_threads().ended();
    }
}

impl fmt::Debug for WorkerStart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkerStart")
            .field("pool", &self.registry.name())
            .field("index", &self.seat.as_ref().map(|seat| seat.index))
            .field("name", &self.name)
            .field("stack_size", &self.stack_size)
            .finish()
    }
}

/// How many of a pool's threads were started by a user's spawner and have
/// not ended: what a shutdown waits on in place of their join handles.
pub(crate) struct ExternalThreads {
    running: Mutex<usize>,
    ended: Condvar,
}

impl ExternalThreads {
    pub(crate) fn new() -> Self {
        ExternalThreads {
            running: Mutex::new(0),
            ended: Condvar::new(),
        }
    }

    fn started(&self) {
        *lock(&self.running) += 1;
    }

    fn ended(&self) {
        let mut running = lock(&self.running);
        *running -= 1;
        if *running == 0 {
            self.ended.notify_all();
        }
    }

    /// Waits until every thread counted in has ended.
    pub(crate) fn wait_for_all(&self) {
        let mut running = lock(&self.running);
        while *running > 0 {
            running = wait(&self.ended, running);
        }
    }
}
