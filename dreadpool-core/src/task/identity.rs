//! A task's identity for the flight recorder's `Tasks` level: where it is
//! kept (a box with the closure, or an identity slot for an outside spawn)
//! and the tables that run and drop such tasks.

use super::{drop_inline, fits, Task, TaskVTable, VTable};
use crate::recorder::identity_slots::IdentitySlot;

/// Where a task keeps its identity for the flight recorder's `Tasks` level.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Identity {
    /// It has none.
    None,
    /// The data word is a `Box<Identified<_>>`.
    Boxed,
    /// The data word points to an [`IdentitySlot`] (outside spawns).
    Slot,
}

/// A closure boxed with its identity, for the flight recorder's `Tasks`
/// level, which links each spawn to its run by it.
///
/// Why an identity of its own, not the box's address: addresses are reused
/// as soon as a task's run frees its box, often by the very next spawn (the
/// allocator hands the freed block back), and a spawn's recorded time may
/// be its worker's latest clock reading rather than its own
/// (`recorder/spawn_clock.rs`), so a spawn that reuses an address can sort
/// before the run that freed it, on another worker, and steal its link.
/// An identity that is never reused needs no ordering to match.
/// `repr(C)`: the identity is the first word, for [`Task::record_id`].
#[repr(C)]
struct Identified<F> {
    id: u64,
    f: F,
}

impl<F: FnOnce()> VTable<F> {
    /// For a `Box<Identified<F>>` in the data word.
    const IDENTIFIED_TABLE: TaskVTable = TaskVTable {
        call: call_identified::<F>,
        drop: drop_inline::<Box<Identified<F>>>,
        identity: Identity::Boxed,
        outside: false,
        as_outside: Self::identified_outside_table,
    };

    const IDENTIFIED_OUTSIDE_TABLE: TaskVTable = TaskVTable {
        call: call_identified_outside::<F>,
        outside: true,
        ..Self::IDENTIFIED_TABLE
    };

    /// For a closure in an [`IdentitySlot`], whose address the data word
    /// holds: only spawns from outside the pool use slots, so this table is
    /// its own outside twin.
    const SLOT_OUTSIDE_TABLE: TaskVTable = TaskVTable {
        call: call_slot_outside::<F>,
        drop: drop_slot::<F>,
        identity: Identity::Slot,
        outside: true,
        as_outside: Self::slot_outside_table,
    };

    fn identified_outside_table() -> &'static TaskVTable {
        &Self::IDENTIFIED_OUTSIDE_TABLE
    }

    fn slot_outside_table() -> &'static TaskVTable {
        &Self::SLOT_OUTSIDE_TABLE
    }
}

/// # Safety
///
/// `data` must hold a `Box<Identified<F>>` written by
/// [`Task::identified_as`], which the caller gives up.
unsafe fn call_identified<F: FnOnce()>(data: *mut u8) {
    // SAFETY: as in `call_inline`, for the box in the data word.
    let boxed = unsafe { data.cast::<Box<Identified<F>>>().read() };
    // The box is freed here, before the closure runs, as a boxed closure's
    // call does.
    let Identified { f, .. } = *boxed;
    f();
}

/// [`call_identified`] for a task from outside the pool (see
/// [`call_outside`]).
///
/// # Safety
///
/// As for [`call_identified`].
unsafe fn call_identified_outside<F: FnOnce()>(data: *mut u8) {
    crate::metrics::count_outside_task();
    // SAFETY: passed on from our caller.
    unsafe { call_identified::<F>(data) }
}

/// # Safety
///
/// `data` must hold a `&IdentitySlot` filled with an `F` by
/// [`Task::in_slot`], which the caller gives up.
unsafe fn call_slot_outside<F: FnOnce()>(data: *mut u8) {
    crate::metrics::count_outside_task();
    // SAFETY: passed on from our caller: the slot holds our `F`, and we
    // hold its task. The slot is freed here, before the closure runs, as a
    // boxed closure's box is.
    let f = unsafe { data.cast::<&IdentitySlot>().read().take::<F>() };
    f();
}

/// # Safety
///
/// As for [`call_slot_outside`].
unsafe fn drop_slot<F>(data: *mut u8) {
    // SAFETY: as in `call_slot_outside`.
    drop(unsafe { data.cast::<&IdentitySlot>().read().take::<F>() });
}

impl Task {
    /// Makes a task of `f` with the identity `id` for the flight recorder
    /// (see [`record_id`](Self::record_id)): boxed with it, even when `f`
    /// would fit inline. For spawns into a pool recording at `Tasks` level,
    /// with a fresh identity (`recorder::next_task_id`, or a worker's own
    /// block of them), and for a wrapper around a task that has one (a
    /// span's or a latency sample's, `wrap`), with the wrapped task's.
    #[inline(always)]
    pub(crate) fn identified_as<F>(id: u64, f: F) -> Task
    where
        F: FnOnce() + Send + 'static,
    {
        let boxed = Box::new(Identified { id, f });
        // SAFETY: `F` is `'static`; the table is made for the box of an
        // `Identified<F>`, which the data word holds.
        unsafe { Task::with_table(boxed, &VTable::<F>::IDENTIFIED_TABLE) }
    }

    /// Makes a task of `f`, spawned from outside the pool, with the identity
    /// `id`, stored in `slot` (just claimed by this thread, see
    /// `recorder/identity_slots.rs`): an identified task without a box.
    #[inline(always)]
    pub(super) fn in_slot<F>(slot: &'static IdentitySlot, id: u64, f: F) -> Task
    where
        F: FnOnce() + Send + 'static,
    {
        assert!(fits::<F>(), "only called for closures that fit");
        // SAFETY: the slot was just claimed by this thread and is filled
        // once; `F` fits in its word (the assert, a constant per `F`).
        unsafe { slot.fill(id, f) };
        // SAFETY: a reference is `'static` and fits; the table is made for
        // a slot holding an `F`.
        unsafe { Task::with_table(slot, &VTable::<F>::SLOT_OUTSIDE_TABLE) }
    }

    /// The task's identity for the flight recorder, given when it was made
    /// at the recorder's `Tasks` level ([`identified_as`](Self::identified_as)),
    /// never given twice in a process; 0 for a task made without one.
    #[inline(always)]
    pub(crate) fn record_id(&self) -> u64 {
        match self.vtable.identity {
            Identity::None => 0,
            // SAFETY: the data word holds a live `Box<Identified<_>>`
            // (`identified_as`; the task still owns it), whose first word is
            // the identity (`repr(C)`).
            Identity::Boxed => unsafe { (self.data.assume_init() as *const u64).read() },
            // SAFETY: the data word holds the address of the slot this task
            // fills (`in_slot`), which the task owns until it runs.
            Identity::Slot => unsafe { (*(self.data.assume_init() as *const IdentitySlot)).id() },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::tests::Tally;
    #[cfg(feature = "recorder")]
    use crate::task::IntoTask;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn an_identified_task_runs_or_drops_its_closure_once_and_keeps_its_identity() {
        let dropped = Arc::new(AtomicUsize::new(0));
        let ran = Arc::new(AtomicUsize::new(0));
        // Captures of every shape: nothing, one word, more than a word.
        let t = Tally(Arc::clone(&dropped));
        let r = Arc::clone(&ran);
        let tasks = [
            Task::identified_as(1, || {}),
            Task::identified_as(2, move || {
                let _t = &t;
                r.fetch_add(1, Ordering::SeqCst);
            }),
            Task::identified_as(3, {
                let (t, pad) = (Tally(Arc::clone(&dropped)), [7u64; 8]);
                move || {
                    let _t = &t;
                    assert_eq!(pad[7], 7);
                }
            }),
        ];
        let ids: Vec<u64> = tasks.iter().map(Task::record_id).collect();
        assert_eq!(ids, [1, 2, 3]);
        let [a, b, c] = tasks;
        a.run();
        b.run();
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        assert_eq!(
            dropped.load(Ordering::SeqCst),
            1,
            "run: its captures dropped"
        );
        drop(c);
        assert_eq!(dropped.load(Ordering::SeqCst), 2, "dropped unrun: the same");
        // A task made without an identity has none.
        assert_eq!(Task::new(|| {}).record_id(), 0);
    }

    // (Slots exist with the recorder only.)
    #[cfg(feature = "recorder")]
    #[test]
    fn an_outside_task_in_a_slot_runs_or_drops_its_closure_once_and_frees_the_slot() {
        let dropped = Arc::new(AtomicUsize::new(0));
        let ran = Arc::new(AtomicUsize::new(0));
        // A one-word capture (an `Arc`) takes a slot of this thread's rings.
        let tally = Tally(Arc::clone(&dropped));
        let r = Arc::clone(&ran);
        let runs = Arc::new(move || {
            let _t = &tally;
            r.fetch_add(1, Ordering::SeqCst);
        });
        let task = {
            let runs = Arc::clone(&runs);
            move || runs()
        }
        .into_outside_task(Some(11));
        assert!(task.vtable.identity == Identity::Slot, "a slot, not a box");
        assert!(task.is_from_outside());
        assert_eq!(task.record_id(), 11);
        task.run();
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        let unrun = {
            let runs = Arc::clone(&runs);
            move || runs()
        }
        .into_outside_task(Some(12));
        assert_eq!(unrun.record_id(), 12);
        drop(unrun);
        assert_eq!(ran.load(Ordering::SeqCst), 1, "dropped unrun: not run");
        assert_eq!(Arc::strong_count(&runs), 1, "both captures dropped");
        drop(runs);
        assert_eq!(dropped.load(Ordering::SeqCst), 1);
        // A closure larger than a word is boxed with its identity.
        let big = [1u64; 4];
        let boxed = (move || assert_eq!(big[3], 1)).into_outside_task(Some(13));
        assert!(boxed.vtable.identity == Identity::Boxed);
        assert_eq!(boxed.record_id(), 13);
        boxed.run();
    }
}
