//! Reusable homes for the identities of tasks spawned from outside the pool
//! while it records at `Tasks` level.
//!
//! A recorded task carries its identity to its run (`task.rs`), and a task
//! is two words, a table and one data word, with no room for it. A closure
//! of one word from outside the pool was therefore boxed with its identity:
//! a `malloc` on the spawning thread and a `free` on the worker that ran
//! it. That is glibc's worst case, one thread allocating and others freeing:
//! the spawner's thread cache is never refilled, so every spawn took the
//! arena's lock, and the workers' frees contended for it: the box, not the
//! recording, was most of what external spawns paid at `Tasks` level
//! (`BENCHMARKS.md`, "Core design figures": recorder-identity-slots).
//!
//! Here a spawning thread owns a ring of [`IdentitySlot`]s and fills them in
//! turn; the task's data word points to the slot, and the worker that runs
//! the task moves the closure out and marks the slot free. No allocation,
//! no lock, no read-modify-write: one store on each side.
//!
//! # Why a slot is never used by two tasks at once
//!
//! A slot is owned by one side at a time, and its `free` flag says which:
//!
//! 1. The owning thread claims slot `i` only when it loads `free == true`
//!    (Acquire). It stores `false` (Relaxed), writes the identity and the
//!    closure, and publishes the task through the pool's queues, whose push
//!    and pop are a Release/Acquire pair.
//! 2. The worker that pops the task (or the code that drops it unrun) reads
//!    the identity and the closure, which the queue's Acquire made visible,
//!    and only then stores `free = true` (Release). It never touches the slot
//!    again.
//! 3. The worker's `true` comes after the owner's `false` in the flag's
//!    modification order, because the owner's store happens before the
//!    worker's through the queue. So the owner reads `true` only after that
//!    worker's store, and its Acquire load synchronises with it: the worker's
//!    reads of the closure happen before the owner's next writes to it. No
//!    data race, and no closure is overwritten before it was moved out.
//!
//! When the slot the owner comes to is still taken (more tasks from this
//! thread waiting than the ring has slots, or a task that is slow to be
//! run), the owner moves on to another ring (`Owner`); when all of its
//! rings are taken, that spawn boxes its closure as before. A full ring
//! costs at most what every spawn used to, never a wait.
//!
//! `tests/loom.rs` (`an_identity_slot_is_never_shared`) checks the argument
//! on this code: an owner reuses a one-slot ring while a worker takes the
//! task from it, and loom's cell reports any access that races. The build
//! with `__broken_slot_relaxed_free` (the worker's store Relaxed, so step 3's
//! synchronisation is lost) must fail it.
//!
//! # Whose rings
//!
//! Each thread that spawns from outside at `Tasks` level gets a ring on its
//! first such spawn (`claim`), and more as its waiting tasks need them, up
//! to [`MAX_RINGS`] of [`SLOTS`] slots of 24 bytes. When the thread ends,
//! its rings are handed to the next thread that needs some, with any slots
//! still taken by its tasks: those are freed by the workers that run them,
//! as before. Rings are never freed (a task may hold a slot of a thread
//! long gone), so a process keeps, for each of the most threads that ever
//! spawned from outside at once, the rings its most waiting tasks needed:
//! 24 KiB for a thread whose tasks are run as fast as it spawns them.

use crate::sync::atomic::{AtomicBool, Ordering};
use crate::sync::cell::UnsafeCell;
use std::mem::{align_of, size_of, MaybeUninit};

/// Slots in a thread's ring: tasks of one thread that can wait at once
/// without a box. 1,024 slots are 24 KiB. (Loom's models make their rings
/// directly, so it is unused there.)
#[cfg(not(loom))]
pub(crate) const SLOTS: usize = 1024;

/// One task's identity and its closure, stored in the closure's one word.
///
/// 24 bytes, so a cache line holds parts of three slots, which the spawning
/// thread fills while the workers that took the tasks before read them and
/// free them. `--cfg dreadpool_identity_slot_line` gives each slot a line
/// of its own, for the many-core comparison (`BENCHMARKS.md`, "Identity
/// slots on many cores"): whether that sharing is what external spawns pay
/// at `Tasks` level on 16 cores.
#[cfg_attr(dreadpool_identity_slot_line, repr(align(64)))]
pub(crate) struct IdentitySlot {
    /// The identity and the closure, written by the owner while the slot is
    /// taken and read by the task's runner before it frees the slot.
    contents: UnsafeCell<Contents>,
    /// Whether the owner may fill the slot (see the module docs).
    free: AtomicBool,
}

struct Contents {
    id: u64,
    word: MaybeUninit<usize>,
}

// SAFETY: the contents are accessed by one thread at a time, handed over by
// the `free` flag and the pool's queues (the module docs argue it); the
// closure stored there is `Send` (`fill`'s bound). (`Send` is automatic.)
unsafe impl Sync for IdentitySlot {}

impl IdentitySlot {
    fn new() -> Self {
        IdentitySlot {
            contents: UnsafeCell::new(Contents {
                id: 0,
                word: MaybeUninit::uninit(),
            }),
            free: AtomicBool::new(true),
        }
    }

    /// Stores `id` and `f` in a slot just claimed.
    ///
    /// # Safety
    ///
    /// The caller claimed the slot ([`SlotRing::claim`]) and has not filled
    /// it yet; `F` fits in a word.
    #[inline(always)]
    pub(crate) unsafe fn fill<F: Send>(&self, id: u64, f: F) {
        debug_assert!(size_of::<F>() <= size_of::<usize>());
        debug_assert!(align_of::<F>() <= align_of::<usize>());
        self.contents.with_mut(|contents| {
            // SAFETY: the caller owns the slot (see the module docs); the
            // word is large and aligned enough for `F` (the caller's
            // promise), and holds nothing that needs dropping.
            unsafe {
                (*contents).id = id;
                (*contents).word.as_mut_ptr().cast::<F>().write(f);
            }
        });
    }

    /// The identity of the task in the slot.
    ///
    /// # Safety
    ///
    /// The caller holds the task that fills the slot.
    #[inline(always)]
    pub(crate) unsafe fn id(&self) -> u64 {
        // SAFETY: the task's holder owns the slot (the module docs).
        self.contents.with_mut(|contents| unsafe { (*contents).id })
    }

    /// Moves the closure out and frees the slot for its owner.
    ///
    /// # Safety
    ///
    /// The caller holds the task that fills the slot, with an `F` (the one
    /// [`fill`](Self::fill) stored), and gives it up: it must not touch the
    /// slot again.
    #[inline(always)]
    pub(crate) unsafe fn take<F>(&self) -> F {
        // SAFETY: the holder owns the slot, whose word holds the `F` that
        // `fill` wrote; it is read once (the caller gives the task up).
        let f = self
            .contents
            .with_mut(|contents| unsafe { (*contents).word.as_ptr().cast::<F>().read() });
        // Release: our read of the closure happens before the owner's next
        // write to the slot (step 3 of the module docs).
        let relaxed = broken!("__broken_slot_relaxed_free");
        let order = if relaxed {
            Ordering::Relaxed
        } else {
            Ordering::Release
        };
        self.free.store(true, order);
        f
    }
}

/// A thread's ring of slots, filled in turn.
pub(crate) struct SlotRing {
    slots: Box<[IdentitySlot]>,
}

impl SlotRing {
    /// A ring of `slots` free slots (a power of two).
    pub(crate) fn new(slots: usize) -> Self {
        assert!(slots.is_power_of_two(), "a ring of 2^k slots");
        SlotRing {
            slots: (0..slots).map(|_| IdentitySlot::new()).collect(),
        }
    }

    /// The number of slots.
    #[cfg(loom)]
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Slot `index`, as a worker finds it through its task.
    #[cfg(loom)]
    pub(crate) fn slot(&self, index: usize) -> &IdentitySlot {
        &self.slots[index]
    }

    /// Claims the slot at `*cursor` if its last task has let it go, and
    /// moves the cursor on either way. Called only by the ring's owner.
    #[inline(always)]
    pub(crate) fn claim(&self, cursor: &mut usize) -> Option<&IdentitySlot> {
        let slot = &self.slots[*cursor & (self.slots.len() - 1)];
        *cursor = cursor.wrapping_add(1);
        // Acquire: pairs with the Release in `take` (the module docs).
        if !slot.free.load(Ordering::Acquire) {
            return None;
        }
        slot.free.store(false, Ordering::Relaxed);
        Some(slot)
    }
}

/// A free slot of the calling thread's rings: for a spawn from outside the
/// pool at `Tasks` level. `None` when its rings are full, or when the
/// thread is ending.
#[cfg(not(loom))]
#[inline(always)]
pub(crate) fn claim() -> Option<&'static IdentitySlot> {
    thread_local! {
        static MINE: Owner = Owner::adopt(&UNOWNED);
    }
    MINE.try_with(Owner::claim).ok().flatten()
}

/// Under loom the models use [`SlotRing`] directly (a static list of rings
/// would outlive loom's executions).
#[cfg(loom)]
pub(crate) fn claim() -> Option<&'static IdentitySlot> {
    None
}

/// The most rings a thread fills: 64 rings of [`SLOTS`] let 65,536 of its
/// tasks wait at once without a box (1.5 MiB, made only as they are
/// needed).
#[cfg(not(loom))]
pub(crate) const MAX_RINGS: usize = 64;

/// The rings of threads that ended, for the next threads that need some.
#[cfg(not(loom))]
static UNOWNED: Unowned = std::sync::Mutex::new(Vec::new());

#[cfg(not(loom))]
type Unowned = std::sync::Mutex<Vec<Vec<&'static SlotRing>>>;

/// A thread's hold on its rings.
///
/// It fills one ring slot by slot. When it comes to a taken slot (its
/// tasks fill the ring's length of the queues), it moves to the start of
/// its next ring, the one filled longest ago, whose tasks have most likely
/// run; if that one is taken too, it makes a new ring, up to
/// [`MAX_RINGS`]. So a spawn checks one slot, or two when it changes ring,
/// and a thread's rings grow with the number of its tasks that wait at
/// once, as the boxes they replace would.
#[cfg(not(loom))]
struct Owner {
    /// The ring being filled, where in it, and its index in `rings`.
    current: std::cell::Cell<Current>,
    /// Every ring of the thread, in the order it fills them.
    rings: std::cell::RefCell<Vec<&'static SlotRing>>,
    /// Where the rings go when the thread ends ([`UNOWNED`]; the tests'
    /// own list in the tests).
    unowned: &'static Unowned,
}

#[cfg(not(loom))]
#[derive(Clone, Copy)]
struct Current {
    ring: &'static SlotRing,
    cursor: usize,
    index: usize,
}

#[cfg(not(loom))]
impl Owner {
    /// Takes the rings of a thread that ended, or makes one. Rings are kept
    /// for the life of the process: tasks of an ended thread may still hold
    /// their slots.
    #[cold]
    fn adopt(unowned: &'static Unowned) -> Self {
        let left = crate::sync::lock(unowned).pop();
        let rings = left.unwrap_or_else(|| vec![Box::leak(Box::new(SlotRing::new(SLOTS)))]);
        Owner {
            current: std::cell::Cell::new(Current {
                ring: rings[0],
                cursor: 0,
                index: 0,
            }),
            rings: std::cell::RefCell::new(rings),
            unowned,
        }
    }

    #[inline(always)]
    fn claim(&self) -> Option<&'static IdentitySlot> {
        let mut current = self.current.get();
        let slot = current.ring.claim(&mut current.cursor);
        self.current.set(current);
        if slot.is_some() {
            return slot;
        }
        self.claim_in_next_ring()
    }

    /// The current ring's slot was taken: the first slot of the next ring,
    /// or of a new one. When every ring is full (as many of the thread's
    /// tasks wait as the rings hold), each spawn checks the one slot that
    /// frees first, the next ring's first, and boxes its closure.
    #[cold]
    #[inline(never)]
    fn claim_in_next_ring(&self) -> Option<&'static IdentitySlot> {
        let mut rings = self.rings.borrow_mut();
        let at = self.current.get().index;
        let next = (at + 1) % rings.len();
        if next != at {
            let mut cursor = 0;
            if let Some(slot) = rings[next].claim(&mut cursor) {
                self.current.set(Current {
                    ring: rings[next],
                    cursor,
                    index: next,
                });
                return Some(slot);
            }
        }
        if rings.len() >= MAX_RINGS {
            return None;
        }
        let ring: &'static SlotRing = Box::leak(Box::new(SlotRing::new(SLOTS)));
        // After the current ring, so that the rings are filled in turn.
        rings.insert(at + 1, ring);
        let mut cursor = 0;
        let slot = ring.claim(&mut cursor);
        self.current.set(Current {
            ring,
            cursor,
            index: at + 1,
        });
        slot
    }
}

#[cfg(not(loom))]
impl Drop for Owner {
    fn drop(&mut self) {
        let rings = std::mem::take(self.rings.get_mut());
        crate::sync::lock(self.unowned).push(rings);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_claimed_again_only_after_its_task_took_the_closure() {
        let ring = SlotRing::new(2);
        let mut cursor = 0;
        let first = ring.claim(&mut cursor).expect("a new ring is free");
        // SAFETY: just claimed; a `u32` fits in a word.
        unsafe { first.fill(7, 41u32) };
        assert!(ring.claim(&mut cursor).is_some(), "the second slot");
        assert!(
            ring.claim(&mut cursor).is_none(),
            "the first slot is still taken"
        );
        // SAFETY: we hold the "task" that filled it, with a `u32`.
        unsafe {
            assert_eq!(first.id(), 7);
            assert_eq!(first.take::<u32>(), 41);
        }
        assert!(ring.claim(&mut cursor).is_none(), "the second is taken");
        assert!(ring.claim(&mut cursor).is_some(), "the first is free again");
    }

    #[test]
    fn an_ended_threads_rings_go_to_the_next_owner_with_their_taken_slots() {
        // (Each test's own list, a static so that its rings stay reachable
        // for memcheck.)
        static UNOWNED: Unowned = std::sync::Mutex::new(Vec::new());
        let unowned = &UNOWNED;
        let first = Owner::adopt(unowned);
        let ring = first.current.get().ring;
        let taken = first.claim().expect("a new ring is free");
        // SAFETY: just claimed; a `u16` fits.
        unsafe { taken.fill(3, 9u16) };
        drop(first);
        let next = Owner::adopt(unowned);
        assert!(std::ptr::eq(next.current.get().ring, ring), "handed on");
        assert!(crate::sync::lock(unowned).is_empty());
        let slot = next.claim().expect("a free slot");
        assert!(!std::ptr::eq(slot, taken), "its task still holds slot 0");
        // SAFETY: we hold the "task" in slot 0, a `u16`.
        assert_eq!(unsafe { taken.take::<u16>() }, 9);
    }

    #[test]
    fn a_thread_whose_tasks_fill_its_ring_moves_to_another_and_never_shares_a_slot() {
        static UNOWNED: Unowned = std::sync::Mutex::new(Vec::new());
        let unowned = &UNOWNED;
        let owner = Owner::adopt(unowned);
        // Every slot claimed and none let go: the tasks all wait.
        let mut held = Vec::new();
        while let Some(slot) = owner.claim() {
            // SAFETY: just claimed; a `u64` fits.
            unsafe { slot.fill(held.len() as u64, held.len() as u64) };
            held.push(slot);
        }
        assert_eq!(
            held.len(),
            SLOTS * MAX_RINGS,
            "every ring filled, then none"
        );
        let distinct: std::collections::HashSet<usize> = held
            .iter()
            .map(|s| std::ptr::from_ref(*s) as usize)
            .collect();
        assert_eq!(distinct.len(), held.len(), "no slot given twice");
        // The oldest tasks run: their slots are the ones filled next.
        for (n, slot) in held.iter().take(3).enumerate() {
            // SAFETY: we hold these "tasks", `u64`s.
            assert_eq!(unsafe { slot.take::<u64>() }, n as u64);
        }
        for slot in held.iter().take(3) {
            let again = owner.claim().expect("a slot was let go");
            assert!(std::ptr::eq(again, *slot), "the slots let go, in order");
        }
        assert!(owner.claim().is_none());
    }

    #[test]
    fn every_thread_gets_a_slot() {
        for _ in 0..4 {
            std::thread::spawn(|| {
                let slot = claim().expect("a ring has free slots");
                // SAFETY: just claimed; a `u8` fits.
                unsafe {
                    slot.fill(1, 5u8);
                    assert_eq!(slot.take::<u8>(), 5);
                }
            })
            .join()
            .unwrap();
        }
    }
}
