//! The unit of work.

use crate::recorder::identity_slots::IdentitySlot;
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
/// stored in smaller ones, stalling on store forwarding: a nested spawn tree
/// on one worker ran 2x slower than with boxing, although it executed 32%
/// fewer instructions (perf and callgrind, `BENCHMARKS.md`).
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

/// Where a task keeps its identity for the flight recorder's `Tasks` level.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Identity {
    /// It has none.
    None,
    /// The data word is a `Box<Identified<_>>`.
    Boxed,
    /// The data word points to an [`IdentitySlot`] (outside spawns).
    Slot,
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
    /// pays nothing for the count (a test of the flag per task cost the
    /// nested tree 2.5 instructions a task, callgrind).
    const OUTSIDE_TABLE: TaskVTable = TaskVTable {
        call: call_outside::<F>,
        outside: true,
        ..Self::TABLE
    };

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

    // (Functions, not references, in the tables: two constants that refer
    // to each other would be a cycle.)
    fn outside_table() -> &'static TaskVTable {
        &Self::OUTSIDE_TABLE
    }

    fn identified_outside_table() -> &'static TaskVTable {
        &Self::IDENTIFIED_OUTSIDE_TABLE
    }

    fn slot_outside_table() -> &'static TaskVTable {
        &Self::SLOT_OUTSIDE_TABLE
    }
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
    crate::worker::count_outside_task();
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
    crate::worker::count_outside_task();
    // SAFETY: passed on from our caller.
    unsafe { call_identified::<F>(data) }
}

/// # Safety
///
/// `data` must hold a `&IdentitySlot` filled with an `F` by
/// [`Task::in_slot`], which the caller gives up.
unsafe fn call_slot_outside<F: FnOnce()>(data: *mut u8) {
    crate::worker::count_outside_task();
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
    fn in_slot<F>(slot: &'static IdentitySlot, id: u64, f: F) -> Task
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
    /// task by task: a pop (with its fence) and a push per task, 36% more
    /// instructions per outside spawn than without the feature (callgrind,
    /// `BENCHMARKS.md`).
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

/// What a spawn learns about its task before it commits to it: the span
/// current at the spawn site, when a `tracing` subscriber makes it a real
/// one.
///
/// Capturing the span calls into the subscriber, which is foreign code and
/// may panic; it happens here, before the task is counted, so that a panic
/// leaves no count behind for `join()` to wait on. Turning the closure into
/// a [`Task`] afterwards cannot fail.
///
/// Nearly every spawn has no span to carry, so the envelope is one pointer,
/// null in that case, and the span it does carry is boxed, by code out of
/// line. Holding the span (40 bytes) and the latency sample's spawn instant
/// inline moved them along every spawn and kept the spawn path from
/// inlining: with no subscriber installed, a nested spawn cost 120
/// instructions more than with the `tracing` feature compiled out, and
/// nearly twice the time. With the envelope one pointer it was 10 more, and
/// since `try_spawn` makes it a constant when no subscriber exists (see
/// `Registry::try_spawn_in_context`), 4 more (callgrind, a 20-level spawn
/// tree on one worker; `BENCHMARKS.md`).
pub(crate) struct Envelope(Option<Box<crate::trace::SpawnContext>>);

// `inline(always)` on the spawn path's small steps: left to its heuristics,
// LLVM inlined different ones with each feature set, and an un-inlined step
// (a call, a frame, the task moved through memory) cost more than what the
// feature itself did (callgrind, the nested spawn tree).
impl Envelope {
    /// An envelope carrying nothing, for a spawn with no span to carry.
    #[inline(always)]
    pub(crate) const fn empty() -> Self {
        Envelope(None)
    }

    /// An envelope carrying the current span, if there is one to carry.
    #[inline(always)]
    pub(crate) fn new() -> Self {
        match crate::trace::SpawnContext::capture() {
            None => Envelope(None),
            Some(context) => Self::carrying(context),
        }
    }

    // Out of line and cold, like `wrap`.
    #[cold]
    #[inline(never)]
    fn carrying(context: crate::trace::SpawnContext) -> Self {
        Envelope(Some(Box::new(context)))
    }

    /// Makes `task` a [`Task`]. When a span was captured, the task runs
    /// inside it, so a host's request context follows its work onto the
    /// pool. With the `metrics` feature, a spawn picked for timing (one in
    /// `latency_sampling`, `sampled_at` its instant) is also wrapped to time
    /// its schedule delay and run time. Every other task, and every task
    /// without those features, is stored as it is: no extra size, no extra
    /// work.
    ///
    /// `identity` (given when the pool records at the flight recorder's
    /// `Tasks` level; a constant `None` without the recorder) is stored
    /// with the closure, in a box (or, from outside the pool, a slot), so
    /// that its spawn can be linked to its run.
    #[inline(always)]
    pub(crate) fn into_task(
        self,
        task: impl IntoTask,
        sampled_at: Option<std::time::Instant>,
        identity: Option<u64>,
    ) -> Task {
        let task = match identity {
            Some(id) => task.into_identified_task(id),
            None => task.into_task(),
        };
        if self.0.is_none() && sampled_at.is_none() {
            return task;
        }
        wrap(task, self.0, sampled_at)
    }

    /// [`into_task`](Self::into_task) for a spawn from outside the pool:
    /// with the `metrics` feature the task is marked
    /// ([`Task::marked_from_outside`]), so that the worker that runs it counts it.
    #[inline(always)]
    pub(crate) fn into_outside_task(
        self,
        task: impl IntoTask,
        sampled_at: Option<std::time::Instant>,
        identity: Option<u64>,
    ) -> Task {
        // (An identified task goes on: a closure's identity may take a
        // slot, `IntoTask::into_outside_task`, which marks it either way.)
        if !crate::metrics::COUNTS_BATCHES && identity.is_none() {
            return self.into_task(task, sampled_at, identity);
        }
        if self.0.is_none() && sampled_at.is_none() {
            return task.into_outside_task(identity);
        }
        // The wrapper is what runs: mark it.
        self.into_task(task, sampled_at, identity)
            .marked_from_outside()
    }
}

// Out of line and cold, so that the common path above stays small enough to
// inline into every spawn.
#[cold]
#[inline(never)]
fn wrap(
    task: Task,
    context: Option<Box<crate::trace::SpawnContext>>,
    sampled_at: Option<std::time::Instant>,
) -> Task {
    // A wrapper keeps the identity of the task it wraps, if it has one: it
    // is what runs, and its run must link to the spawn.
    let id = task.record_id();
    let task = match context {
        Some(context) => wrapper(id, move || context.in_scope(move || task.run())),
        None => task,
    };
    match sampled_at {
        Some(spawned) => wrapper(id, move || crate::worker::run_timed(spawned, task)),
        None => task,
    }
}

/// A task of `f`, with the identity `id` unless it is 0.
fn wrapper<F>(id: u64, f: F) -> Task
where
    F: FnOnce() + Send + 'static,
{
    if id == 0 {
        Task::new(f)
    } else {
        Task::identified_as(id, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Counts its drops.
    struct Tally(Arc<AtomicUsize>);

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

    #[test]
    fn wrappers_and_made_tasks_take_the_identity_they_are_given() {
        let made = Task::new(|| {});
        assert_eq!(made.into_identified_task(9).record_id(), 9);
        let made = Task::new(|| {});
        assert_eq!(made.into_outside_task(Some(10)).record_id(), 10);
        // A span's or a latency sample's wrapper keeps its task's identity.
        let sampled = Envelope::empty().into_task(|| {}, Some(std::time::Instant::now()), Some(11));
        assert_eq!(sampled.record_id(), 11);
        sampled.run();
        let unsampled = Envelope::empty().into_task(|| {}, Some(std::time::Instant::now()), None);
        assert_eq!(unsampled.record_id(), 0);
        unsampled.run();
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
