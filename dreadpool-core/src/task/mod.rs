//! The unit of work: a closure in two words, run or dropped exactly once.
//!
//! `identity.rs` holds what the flight recorder's `Tasks` level adds: the
//! task's identity and the tables of identified tasks.

mod identity;

use identity::Identity;
use std::marker::PhantomData;
use std::mem::{align_of, size_of, ManuallyDrop, MaybeUninit};

/// A unit of work: a closure that runs once, on any thread.
///
/// `FnOnce` because a task runs exactly once; `Send` because it crosses
/// threads; `'static` is required by [`spawn`](crate::ThreadPool::spawn), so a
/// task owns what it captures.
///
/// A closure that captures at most one word (a pointer, an `Arc`, a `Box`, an
/// index; no stricter alignment than a word) is stored *inside* the task,
/// which moves through the queues by value: no allocation on spawn, no free
/// after the run. Boxing every closure made each spawn pay a `malloc` on the
/// spawning thread and a cross-thread `free` on the worker, and the two
/// contended for the allocator's arena lock. A larger closure is boxed and
/// the box stored inline: one allocation, as before.
///
/// Why one word and not more: a task of two words (table and data) is
/// passed in two registers, like the `Box<dyn FnOnce>` it replaces. At four
/// words (three of data) it is passed through memory, and every move along
/// the spawn and run paths reloaded it in 16-byte pieces that had been
/// stored in smaller ones, stalling on store forwarding: slower than boxing
/// despite fewer instructions (`BENCHMARKS.md`, "Core design figures":
/// task-one-word).
///
/// The type is erased by hand, a data word plus a static table of two
/// functions monomorphised per closure type, because `Box<dyn FnOnce>`
/// always allocates.
pub(crate) struct Task {
    vtable: &'static TaskVTable,
    /// `MaybeUninit<usize>` is `repr(transparent)`: a scalar, so the task is
    /// a scalar pair and travels in registers (an array would not).
    data: MaybeUninit<usize>,
    /// Gives `Task` the auto traits of the box it replaces: `Send` (every
    /// `F` it is made from is `Send`: `Task::new`'s bound) and not `Sync`.
    /// Without it a `Task` would be `Send` and `Sync` whatever it held.
    _owns: PhantomData<Box<dyn FnOnce() + Send>>,
}

/// How to run or drop the closure stored in a [`Task`]'s data word.
struct TaskVTable {
    /// Moves the closure out of the data word and calls it.
    call: unsafe fn(*mut u8),
    /// Drops the closure in the data word without calling it.
    drop: unsafe fn(*mut u8),
    /// Where the task's identity for the flight recorder is, if it has one
    /// (see [`Task::record_id`]).
    identity: Identity,
    /// Whether the task was spawned from outside the pool (the `metrics`
    /// feature counts such tasks where they run, by their `call`: see
    /// [`Task::marked_from_outside`]). Read by the tests.
    #[cfg_attr(not(test), allow(dead_code))]
    outside: bool,
    /// The same table with `outside` set.
    as_outside: fn() -> &'static TaskVTable,
}

/// The table for closures of type `F`, as a constant so that
/// `&VTable::<F>::TABLE` is promoted to a `'static`.
struct VTable<F>(PhantomData<F>);

impl<F: FnOnce()> VTable<F> {
    const TABLE: TaskVTable = TaskVTable {
        call: call_inline::<F>,
        drop: drop_inline::<F>,
        identity: Identity::None,
        outside: false,
        as_outside: Self::outside_table,
    };

    /// The twin for tasks from outside: its `call` counts the task on the
    /// worker that runs it first, so that the run path of every other task
    /// pays nothing for the count, where a test of a flag would cost every
    /// task (`BENCHMARKS.md`, "Core design figures": task-outside-table).
    const OUTSIDE_TABLE: TaskVTable = TaskVTable {
        call: call_outside::<F>,
        outside: true,
        ..Self::TABLE
    };

    // (Functions, not references, in the tables: two constants that refer
    // to each other would be a cycle.)
    fn outside_table() -> &'static TaskVTable {
        &Self::OUTSIDE_TABLE
    }
}

/// # Safety
///
/// `data` must point to a valid `F` written by [`Task::inline`], which the
/// caller gives up: it must not be used or dropped afterwards.
unsafe fn call_inline<F: FnOnce()>(data: *mut u8) {
    // SAFETY: the caller passes a valid, suitably aligned `F` (checked by
    // `Task::inline`) and never touches it again, so moving it out is sound.
    let f = unsafe { data.cast::<F>().read() };
    f();
}

/// [`call_inline`] for a task from outside the pool: counted first on the
/// worker running it (`global_pulls`, with the `metrics` feature).
///
/// # Safety
///
/// As for [`call_inline`].
unsafe fn call_outside<F: FnOnce()>(data: *mut u8) {
    crate::metrics::count_outside_task();
    // SAFETY: passed on from our caller.
    unsafe { call_inline::<F>(data) }
}

/// # Safety
///
/// As for [`call_inline`].
unsafe fn drop_inline<F>(data: *mut u8) {
    // SAFETY: as in `call_inline`: a valid `F` that nobody uses afterwards.
    unsafe { data.cast::<F>().drop_in_place() };
}

/// True when an `F` can live in a task's data word.
const fn fits<F>() -> bool {
    size_of::<F>() <= size_of::<usize>() && align_of::<F>() <= align_of::<usize>()
}

impl Task {
    /// Makes a task of `f`, inline if it fits, else boxed.
    #[inline(always)]
    pub(crate) fn new<F>(f: F) -> Task
    where
        F: FnOnce() + Send + 'static,
    {
        // SAFETY: `F` is `'static`: nothing it holds can die before it runs.
        unsafe { Task::new_unchecked(f) }
    }

    /// [`new`](Self::new) for a closure that may borrow: the task erases
    /// its lifetime (scopes and broadcasts, see `scope.rs`).
    ///
    /// # Safety
    ///
    /// Everything `f` borrows must outlive the task's run, or its drop if it
    /// is dropped unrun.
    #[inline(always)]
    pub(crate) unsafe fn new_unchecked<'a, F>(f: F) -> Task
    where
        F: FnOnce() + Send + 'a,
    {
        if fits::<F>() {
            // SAFETY: passed on to our caller.
            unsafe { Task::inline(f) }
        } else {
            // SAFETY: as above; the box lives exactly as long as `f` would.
            unsafe { Task::boxed(f) }
        }
    }

    /// Boxes `f` and stores the box.
    ///
    /// # Safety
    ///
    /// As for [`new_unchecked`](Self::new_unchecked).
    #[inline(always)]
    unsafe fn boxed<'a, F>(f: F) -> Task
    where
        F: FnOnce() + Send + 'a,
    {
        // SAFETY: passed on to our caller.
        unsafe { Task::with_table(Box::new(f), &VTable::<Box<F>>::TABLE) }
    }

    /// # Safety
    ///
    /// As for [`new_unchecked`](Self::new_unchecked).
    #[inline(always)]
    unsafe fn inline<'a, F>(f: F) -> Task
    where
        F: FnOnce() + Send + 'a,
    {
        // SAFETY: passed on to our caller.
        unsafe { Task::with_table(f, &VTable::<F>::TABLE) }
    }

    /// Stores `f` in the data word, with `table` (made for `F`).
    ///
    /// # Safety
    ///
    /// As for [`new_unchecked`](Self::new_unchecked).
    #[inline(always)]
    unsafe fn with_table<'a, F>(f: F, table: &'static TaskVTable) -> Task
    where
        F: Send + 'a,
    {
        assert!(fits::<F>(), "only called for closures that fit");
        let mut data = MaybeUninit::<usize>::uninit();
        // SAFETY: the data word is large and aligned enough for `F` (the
        // assert, a constant per `F`), and uninitialised, so writing
        // overwrites nothing.
        unsafe { data.as_mut_ptr().cast::<F>().write(f) };
        Task {
            vtable: table,
            data,
            _owns: PhantomData,
        }
    }

    /// Marks the task as spawned from outside the pool (its table swapped
    /// for its twin): with the `metrics` feature, the worker that runs it
    /// counts it in `global_pulls`. Counting tasks where they run, by this
    /// mark, replaced counting them where they were pulled, which needed
    /// each pulled batch to land in a private queue first and be moved over
    /// task by task: a pop (with its fence) and a push per task
    /// (`BENCHMARKS.md`, "Core design figures": task-marked-from-outside).
    #[inline(always)]
    pub(crate) fn marked_from_outside(mut self) -> Task {
        self.vtable = (self.vtable.as_outside)();
        self
    }

    /// Whether the task was marked [`marked_from_outside`](Self::marked_from_outside).
    #[cfg(test)]
    pub(crate) fn is_from_outside(&self) -> bool {
        self.vtable.outside
    }

    /// Runs the closure, consuming the task.
    #[inline]
    pub(crate) fn run(self) {
        let mut task = ManuallyDrop::new(self);
        // SAFETY: the data word holds the `F` that `vtable` was made for
        // (set together in `Task::inline`); `ManuallyDrop` ensures our `Drop`
        // will not drop it again after `call` moved it out, also when the
        // closure panics.
        unsafe { (task.vtable.call)(task.data.as_mut_ptr().cast()) }
    }
}

impl Drop for Task {
    /// A task dropped without running drops its captures.
    fn drop(&mut self) {
        // SAFETY: as in `run`: the data word holds the vtable's `F`, and
        // after this nothing uses it.
        unsafe { (self.vtable.drop)(self.data.as_mut_ptr().cast()) }
    }
}

/// Anything that can become a [`Task`]: any `'static` closure, or a task
/// already made.
pub(crate) trait IntoTask: Send + 'static {
    fn into_task(self) -> Task;
    /// The task, with the identity `id` for the flight recorder (a closure
    /// is boxed with it; a task already made is wrapped in one that has
    /// it).
    fn into_identified_task(self, id: u64) -> Task;
    /// The task, marked as spawned from outside the pool
    /// ([`Task::marked_from_outside`]), with `identity` if given; a closure
    /// gets the marked table at once, and a closure of one word with an
    /// identity goes into a slot of the calling thread's rings rather than
    /// a box when one is free (`recorder/identity_slots.rs`).
    fn into_outside_task(self, identity: Option<u64>) -> Task;
}

impl<F> IntoTask for F
where
    F: FnOnce() + Send + 'static,
{
    fn into_task(self) -> Task {
        Task::new(self)
    }
    #[inline(always)]
    fn into_identified_task(self, id: u64) -> Task {
        Task::identified_as(id, self)
    }
    #[inline(always)]
    fn into_outside_task(self, identity: Option<u64>) -> Task {
        if let Some(id) = identity {
            if fits::<F>() {
                if let Some(slot) = crate::recorder::identity_slots::claim() {
                    return Task::in_slot(slot, id, self);
                }
            }
            return Task::identified_as(id, self).marked_from_outside();
        }
        if fits::<F>() {
            // SAFETY: `F` is `'static`.
            unsafe { Task::with_table(self, &VTable::<F>::OUTSIDE_TABLE) }
        } else {
            // SAFETY: as above.
            unsafe { Task::with_table(Box::new(self), &VTable::<Box<F>>::OUTSIDE_TABLE) }
        }
    }
}

/// A task made by its spawner (scopes and broadcasts make theirs with
/// [`Task::new_unchecked`]). `FnOnce` is a fundamental trait, so this impl
/// does not overlap the closure one: a `Task` is not a closure.
impl IntoTask for Task {
    fn into_task(self) -> Task {
        self
    }
    /// Wrapped in a task that has the identity: an allocation per spawn,
    /// only at the recorder's `Tasks` level.
    fn into_identified_task(self, id: u64) -> Task {
        Task::identified_as(id, move || self.run())
    }
    fn into_outside_task(self, identity: Option<u64>) -> Task {
        match identity {
            Some(id) => self.into_identified_task(id).marked_from_outside(),
            None => self.marked_from_outside(),
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Counts its drops.
    pub(super) struct Tally(pub(super) Arc<AtomicUsize>);

    impl Drop for Tally {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_task_is_two_words() {
        assert_eq!(size_of::<Task>(), 2 * size_of::<usize>());
    }

    /// Whether `f` would be stored inline.
    fn fits_value<F>(_: &F) -> bool {
        fits::<F>()
    }

    #[test]
    fn small_and_large_closures_run_once_and_drop_once() {
        static RAN: AtomicUsize = AtomicUsize::new(0);
        let dropped = Arc::new(AtomicUsize::new(0));
        // One word of captures (inline), and 72 bytes (boxed).
        let small = {
            let t = Tally(Arc::clone(&dropped));
            move || {
                let _t = &t;
                RAN.fetch_add(1, Ordering::SeqCst);
            }
        };
        let large = {
            let (t, pad) = (Tally(Arc::clone(&dropped)), [7u64; 8]);
            move || {
                let _t = &t;
                RAN.fetch_add(pad[0] as usize, Ordering::SeqCst);
            }
        };
        assert!(fits_value(&small) && !fits_value(&large));
        assert!(fits::<&u8>() && fits::<Box<[u64; 8]>>() && !fits::<&dyn Fn()>());
        Task::new(small).run();
        Task::new(large).run();
        assert_eq!(RAN.load(Ordering::SeqCst), 8);
        assert_eq!(dropped.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_borrowing_task_runs_and_drops_its_borrow() {
        let mut hits = 0;
        {
            let hits = &mut hits;
            // SAFETY: the task runs right here, while `hits` is borrowed.
            let task = unsafe { Task::new_unchecked(move || *hits += 1) };
            task.run();
        }
        assert_eq!(hits, 1);
    }

    #[test]
    fn a_task_dropped_unrun_drops_its_captures() {
        let dropped = Arc::new(AtomicUsize::new(0));
        let (a, b) = (Tally(Arc::clone(&dropped)), Tally(Arc::clone(&dropped)));
        drop(Task::new(move || drop(a)));
        let pad = [1u8; 100];
        drop(Task::new(move || drop((b, pad))));
        assert_eq!(dropped.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_panicking_task_drops_its_captures_once() {
        let dropped = Arc::new(AtomicUsize::new(0));
        let t = Tally(Arc::clone(&dropped));
        let task = Task::new(move || {
            let _t = t;
            panic!("task panics");
        });
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| task.run()));
        assert!(result.is_err());
        assert_eq!(dropped.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_task_marked_from_outside_keeps_its_closure_and_identity() {
        let ran = Arc::new(AtomicUsize::new(0));
        let r = Arc::clone(&ran);
        let task = Task::new(move || {
            r.fetch_add(1, Ordering::SeqCst);
        });
        assert!(!task.is_from_outside());
        let task = task.marked_from_outside();
        assert!(task.is_from_outside());
        task.run();
        let r = Arc::clone(&ran);
        let boxed = Task::identified_as(7, move || {
            r.fetch_add(1, Ordering::SeqCst);
        });
        let id = boxed.record_id();
        assert_eq!(id, 7);
        let boxed = boxed.marked_from_outside();
        assert!(boxed.is_from_outside());
        assert_eq!(boxed.record_id(), id, "same identity");
        boxed.run();
        assert_eq!(ran.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn over_aligned_captures_are_boxed() {
        #[repr(align(32))]
        struct Wide(u8);
        assert!(!fits::<Wide>());
        let w = Wide(5);
        let out = Arc::new(AtomicUsize::new(0));
        let o = Arc::clone(&out);
        Task::new(move || o.store(w.0 as usize, Ordering::SeqCst)).run();
        assert_eq!(out.load(Ordering::SeqCst), 5);
    }
}
