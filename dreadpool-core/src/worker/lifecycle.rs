//! A worker thread's life: its start, its loop, its replacement after a
//! panic under `PanicPolicy::Respawn`, and its exit.

use super::current::set_current;
use super::run_loop::Exit;
use super::{WorkerSeat, WorkerThread};
use crate::queue::Worker;
use crate::registry::Registry;
use crate::sync::Arc;
use crate::thread_hooks::ThreadEvent;
use std::rc::Rc;

/// The body of every worker thread, the first and every replacement.
pub(crate) fn main(registry: Arc<Registry>, mut state: WorkerSeat, mut owes_completion: bool) {
    let index = state.index;
    let _span = crate::trace::worker_span(registry.name(), index);
    // Paired with the exit handler at each return below (`thread_hooks.rs`).
    registry.run_thread_hook(ThreadEvent::Start, index);
    // A thread started with a completion owed is a replacement.
    let mut replacement = owes_completion;
    loop {
        let worker = Rc::new(WorkerThread::new(Arc::clone(&registry), state));
        worker.refresh_record_level();
        set_current(Some(Rc::clone(&worker)));
        if owes_completion {
            // The predecessor's panicked task: counted only now, so that a
            // join() returning after a panic finds the replacement running.
            if replacement {
                registry.probe(index).respawned();
            }
            registry.counts().completed(index);
        }
        let exit = worker.run_loop(None);
        set_current(None);
        state = Rc::into_inner(worker)
            .expect("only the worker loop and CURRENT hold the worker")
            .state;
        match exit {
            Exit::Shutdown | Exit::Done | Exit::TimedOut => {
                registry.probe(index).stopped();
                registry.run_thread_hook(ThreadEvent::Exit, index);
                return;
            }
            Exit::Respawn if !registry.replaces_threads() => {
                // A user's spawner started this thread and is gone
                // (`worker_start.rs`): this thread stays the worker, and
                // counts the completion it owes at the top of the loop.
                owes_completion = true;
                replacement = false;
            }
            Exit::Respawn => {
                // The last event this thread records: once the replacement
                // starts, the seat's counters and ring are the replacement's
                // to write.
                registry.probe(index).respawning();
                if broken!("__broken_respawn_fresh_queue") {
                    state.queue = Worker::new_lifo(); // the queued tasks lost
                }
                match registry.spawn_worker(state, true) {
                    Ok(()) => {
                        crate::trace::worker_respawned(index);
                        registry.run_thread_hook(ThreadEvent::ExitAfterHandover, index);
                        return;
                    }
                    Err(failure) => {
                        // Keep this thread as the worker: capacity is never
                        // lost. It counts the completion it owes at the top
                        // of the loop.
                        registry.respawn_failed();
                        crate::trace::respawn_failed(index, &failure.error);
                        state = failure.state;
                        owes_completion = true;
                        replacement = false;
                    }
                }
            }
        }
    }
}
