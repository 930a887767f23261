//! Which worker seat the calling thread runs, if any: set by a worker as it
//! starts and stops on its thread (`WorkerProbe::enter_thread`), so that a
//! wake the thread makes is recorded on that worker's own ring rather than
//! on an outside thread's.

use std::cell::Cell;

thread_local! {
    /// The seat of the worker running on this thread, as its pool's
    /// recorder id and its index.
    static CURRENT_SEAT: Cell<Option<(u64, usize)>> = const { Cell::new(None) };
}

/// The calling thread runs worker `index` of the pool whose recorder has id
/// `pool_id` from now on.
pub(super) fn enter(pool_id: u64, index: usize) {
    CURRENT_SEAT.with(|seat| seat.set(Some((pool_id, index))));
}

/// The calling thread runs no worker from now on.
pub(crate) fn leave_thread() {
    // (`try_with`: during the thread's teardown the cell may be gone.)
    let _ = CURRENT_SEAT.try_with(|seat| seat.set(None));
}

/// The seat the calling thread runs: its pool's recorder id and its index.
pub(super) fn current() -> Option<(u64, usize)> {
    CURRENT_SEAT.with(Cell::get)
}
