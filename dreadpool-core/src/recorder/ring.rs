//! A single-writer ring of fixed-size events that a reader copies out while
//! the writer goes on, discarding whatever the writer may have overwritten
//! during the copy (a seqlock over the whole ring).
//!
//! ## The protocol
//!
//! The ring holds `capacity` slots of [`WORDS`] words. Event `n` (counting
//! from 0 since the ring was made) lives in slot `n % capacity`. `head` is
//! the number of events published.
//!
//! The writer (only ever one thread at a time: the worker that owns the
//! seat, or the outside thread that owns the ring) publishes event `n` by
//!
//! 1. a `Release` fence,
//! 2. `Relaxed` stores of the slot's words,
//! 3. a `Release` store of `head = n + 1`.
//!
//! The reader
//!
//! 1. loads `head` (`Acquire`) as `h1`,
//! 2. copies the slots of events `h1 - capacity .. h1` with `Relaxed` loads,
//! 3. issues an `Acquire` fence,
//! 4. loads `head` again (`Relaxed`) as `h2`,
//! 5. keeps only the events `n` with `n + capacity > h2`.
//!
//! **No torn event is kept.** A slot the reader copied may have been
//! overwritten during the copy by event `m = n + k * capacity` (k >= 1). If
//! the copy read any word the writer stored for event `m`, then, by the
//! fence-to-fence rule (a load before an acquire fence reads a store after a
//! release fence), everything before the writer's fence of event `m` happens
//! before the reader's second load of `head`: in particular the store
//! `head = m`, so `h2 >= m >= n + capacity` and event `n` is discarded. An
//! event that is kept therefore read none of a later event's words; and it
//! read all of its own, since `head = n + 1` (released after them) was seen
//! by the first load (acquire). The discarded events are counted as lost.
//!
//! **The writer never waits**: it does not look at the reader at all. The
//! cost per event is the fence (free on x86: stores are not reordered with
//! older stores there, so it only stops the compiler) and `WORDS + 1` plain
//! stores.
//!
//! `tests/loom.rs` (`the_recorders_reader_never_keeps_a_torn_event`) checks
//! this against a writer lapping the reader on a ring of two slots; the
//! `__broken_ring_no_recheck` build, whose reader skips steps 3-5, must fail
//! it.

use crate::sync::atomic::{fence, AtomicU64, Ordering};
use crossbeam_utils::CachePadded;

/// Words in one event.
pub(crate) const WORDS: usize = 3;

/// One event, as the ring stores it.
pub(crate) type RawEvent = [u64; WORDS];

/// A ring of events with one writer at a time.
pub(crate) struct Ring {
    /// Events published so far. Padded: the writer stores it once per
    /// event, and a reader's loads must not share its line with anything
    /// another thread writes.
    head: CachePadded<AtomicU64>,
    /// `capacity * WORDS` words.
    slots: Box<[AtomicU64]>,
    /// `capacity - 1`, `capacity` (events held) a power of two: an event's
    /// slot is its number masked by this. Kept rather than the capacity:
    /// the writer needs the mask on every event, the reader the capacity
    /// once a copy.
    mask: u64,
}

/// What a reader copied: the events still intact, oldest first, with the
/// number of the first, and how many were overwritten (before or during the
/// copy) since the ring began.
pub(crate) struct Copied {
    pub(crate) events: Vec<RawEvent>,
    // (Only the recorder reads it; the loom model needs the events alone.)
    #[cfg_attr(not(feature = "recorder"), allow(dead_code))]
    pub(crate) lost: u64,
}

impl Ring {
    /// A ring of `capacity` events, rounded up to a power of two (at least 2).
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.max(2).next_power_of_two();
        Ring {
            head: CachePadded::new(AtomicU64::new(0)),
            slots: zeroed_words(capacity * WORDS),
            mask: capacity as u64 - 1,
        }
    }

    /// Events it holds at most.
    pub(crate) fn capacity(&self) -> u64 {
        self.mask + 1
    }

    /// Publishes `event`, overwriting the oldest when full.
    ///
    /// Only the ring's one writer may call this (the worker in its seat, the
    /// outside thread owning the ring): two concurrent writers would publish
    /// the same slot twice.
    #[inline(always)]
    pub(crate) fn push(&self, event: RawEvent) {
        // Relaxed: only this thread stores `head`.
        let n = self.head.load(Ordering::Relaxed);
        let base = (n & self.mask) as usize * WORDS;
        // Release: pairs with the reader's acquire fence (step 3): a reader
        // that sees any word below sees `head == n` or later afterwards, and
        // discards the event this overwrites.
        fence(Ordering::Release);
        // (The slots' address read once: through `self`, the compiler
        // reloads it after each store, which might have changed it.)
        let slots = self.slots.as_ptr();
        for (i, word) in event.into_iter().enumerate() {
            // SAFETY: `base + i < slots.len()`: the slot index `n & mask` is
            // below `capacity` (`mask` is `capacity - 1`, `capacity` a power
            // of two), so `base + WORDS <= capacity * WORDS`, the number of
            // words (`new`). Unchecked: the compiler cannot see this, and
            // its two checks were a large share of an event's instructions,
            // on the path every task takes at `Tasks` level
            // (`BENCHMARKS.md`, "Core design figures": recorder-ring-push).
            unsafe { &*slots.add(base + i) }.store(word, Ordering::Relaxed);
        }
        // Release: pairs with the reader's first (acquire) load: all the
        // words above are visible to a reader that sees this event counted.
        self.head.store(n + 1, Ordering::Release);
    }

    /// Copies out the intact events (see the module docs). Never blocks the
    /// writer; may be called from any thread, by several at once.
    pub(crate) fn copy(&self) -> Copied {
        // Acquire: pairs with the writer's release store of `head`.
        let end = self.head.load(Ordering::Acquire);
        let start = end.saturating_sub(self.capacity());
        let mut events = Vec::with_capacity((end - start) as usize);
        for n in start..end {
            let base = (n & self.mask) as usize * WORDS;
            let mut event = [0; WORDS];
            for (word, slot) in event.iter_mut().zip(&self.slots[base..base + WORDS]) {
                *word = slot.load(Ordering::Relaxed);
            }
            events.push(event);
        }
        if broken!("__broken_ring_no_recheck") {
            let lost = start; // trusting the copy: it may hold torn events
            return Copied { events, lost };
        }
        // Acquire: pairs with the writer's release fence before each event.
        fence(Ordering::Acquire);
        let now = self.head.load(Ordering::Relaxed);
        // Events overwritten during the copy (and possibly torn): n with
        // n + capacity <= now.
        let intact_from = now.saturating_sub(self.mask).max(start);
        let torn = (intact_from - start) as usize;
        events.drain(..torn.min(events.len()));
        Copied {
            events,
            lost: intact_from,
        }
    }

    /// Events published so far.
    #[cfg(test)]
    pub(crate) fn published(&self) -> u64 {
        self.head.load(Ordering::Relaxed)
    }
}

/// `n` words set to zero, from the allocator's zeroed memory: the pages are
/// not touched (so not resident) until events fill them, where writing
/// zeros one by one would make a whole ring resident at once (1.5 MiB per
/// worker by default).
#[cfg(not(loom))]
fn zeroed_words(n: usize) -> Box<[AtomicU64]> {
    use std::alloc::{alloc_zeroed, handle_alloc_error, Layout};
    if n == 0 {
        return Box::new([]);
    }
    let layout = Layout::array::<AtomicU64>(n).expect("a ring fits in memory");
    // SAFETY: the layout has a non-zero size (n > 0).
    let ptr = unsafe { alloc_zeroed(layout) }.cast::<AtomicU64>();
    if ptr.is_null() {
        handle_alloc_error(layout);
    }
    // SAFETY: `ptr` is a fresh allocation of `n` `AtomicU64`s made with the
    // global allocator and the layout `Box<[AtomicU64]>` frees with; all
    // bytes zero is a valid `AtomicU64` (it has the bit validity of `u64`).
    unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, n)) }
}

/// loom's atomics are not plain integers: made one by one.
#[cfg(loom)]
fn zeroed_words(n: usize) -> Box<[AtomicU64]> {
    (0..n).map(|_| AtomicU64::new(0)).collect()
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_events_in_order() {
        let ring = Ring::new(4);
        for n in 0..10u64 {
            ring.push([n, n * 2, n * 3]);
        }
        let copied = ring.copy();
        // 4 slots; the reader keeps those that could not have been torn.
        let firsts: Vec<u64> = copied.events.iter().map(|e| e[0]).collect();
        assert_eq!(firsts, [7, 8, 9]);
        assert_eq!(copied.lost, 7);
        for event in &copied.events {
            assert_eq!(event[1], event[0] * 2);
            assert_eq!(event[2], event[0] * 3);
        }
    }

    #[test]
    fn a_partly_filled_ring_gives_everything() {
        let ring = Ring::new(8);
        for n in 0..5u64 {
            ring.push([n, 0, 0]);
        }
        let copied = ring.copy();
        assert_eq!(copied.events.len(), 5);
        assert_eq!(copied.lost, 0);
        assert_eq!(ring.capacity(), 8);
        assert_eq!(ring.published(), 5);
    }

    #[test]
    fn a_reader_racing_a_writer_never_sees_a_torn_event() {
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;
        let ring = Arc::new(Ring::new(16));
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let (ring, stop) = (Arc::clone(&ring), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut n = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    ring.push([n, !n, n.rotate_left(17)]);
                    n += 1;
                }
                n
            })
        };
        let check = |events: Vec<RawEvent>| {
            for event in &events {
                assert_eq!(event[1], !event[0], "torn event {event:?}");
                assert_eq!(event[2], event[0].rotate_left(17), "torn event {event:?}");
            }
            events.len()
        };
        // Race only once the writer is lapping the ring (on a loaded
        // machine it may start late).
        while ring.published() < 64 {
            std::thread::yield_now();
        }
        for _ in 0..20_000 {
            check(ring.copy().events);
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let written = writer.join().unwrap();
        assert!(written >= 64);
        // The writer has stopped: a copy now keeps all but the slot the
        // protocol always gives up.
        assert_eq!(check(ring.copy().events), 15);
    }
}
