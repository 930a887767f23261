//! Running a closure once on every worker.

use crate::registry::Registry;
use crate::scope::{erase_lifetime, spawn_counted, ScopeState};
use crate::sync::{lock, Arc, Mutex};
use std::panic::resume_unwind;

/// Runs `f(index)` once on each worker of `registry`, waits for all, and
/// returns the results by worker index. The soundness argument of
/// `scope.rs` applies: `f` and the result slots are borrowed by the tasks,
/// and this function returns (or unwinds) only after all of them finished.
#[track_caller]
pub(crate) fn broadcast<F, R>(registry: &Registry, f: F) -> Vec<R>
where
    F: Fn(usize) -> R + Sync,
    R: Send,
{
    let threads = registry.threads();
    let results: Vec<Mutex<Option<R>>> = (0..threads).map(|_| Mutex::new(None)).collect();
    let state = ScopeState::new();
    for (index, slot) in results.iter().enumerate() {
        let f = &f;
        state.add_task();
        let task = state.task(move || {
            let value = f(index);
            *lock(slot) = Some(value);
        });
        // SAFETY: `finish_body_and_wait` below waits for this task before
        // `f` and `results` go out of scope; the task was counted above.
        let task = unsafe { erase_lifetime(task) };
        spawn_counted(registry, Some(index), task);
    }
    state.finish_body_and_wait();
    if let Some(payload) = state.take_panic() {
        resume_unwind(payload);
    }
    results
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .expect("every broadcast task that did not panic stored its result")
        })
        .collect()
}

/// Spawns `f(index)` onto each worker of `registry`, into its inbox, and
/// returns at once. Returns the number of workers it reached: fewer than
/// all only when the pool refused (it is shutting down and the caller is
/// not one of its tasks).
pub(crate) fn spawn_broadcast<F>(registry: &Registry, f: F) -> usize
where
    F: Fn(usize) + Send + Sync + 'static,
{
    let f = Arc::new(f);
    for index in 0..registry.threads() {
        let f = Arc::clone(&f);
        if registry.try_spawn_on(index, move || f(index)).is_err() {
            return index;
        }
    }
    registry.threads()
}
