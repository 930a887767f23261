//! The rings of threads outside a pool: a thread that spawns into a pool or
//! wakes one of its workers records into a ring of its own, made on its
//! first such event and kept in a process-wide list for the pool's
//! recordings to find (`enabled.rs` writes and reads them through here).

use super::ring::Ring;
use crate::sync::atomic::{AtomicBool, Ordering};
use crate::sync::{lock, Arc, Mutex};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Weak;

/// A ring of a thread outside the pool, for one pool.
pub(super) struct OutsideRing {
    pool_id: u64,
    /// The thread's name, or its id.
    pub(super) name: String,
    /// Its events.
    pub(super) ring: Ring,
    /// Cleared when the thread ends; dead rings are kept (their events may
    /// still matter to the next recording) up to `DEAD_RINGS_KEPT`.
    alive: AtomicBool,
}

/// Events per outside thread and pool: outside threads spawn and wake less
/// than workers run.
const OUTSIDE_CAPACITY: usize = 1 << 12;
/// Rings of ended threads kept for later recordings.
const DEAD_RINGS_KEPT: usize = 64;

static OUTSIDE: Mutex<Vec<Arc<OutsideRing>>> = Mutex::new(Vec::new());

/// This thread's outside rings, by pool; marks them dead when it ends. The
/// process-wide list owns them (until their pool is dropped, or their thread
/// ended long ago), so a long-lived thread that spawns into many short-lived
/// pools keeps none of theirs alive, except the last one it used: `last`
/// spares the usual spawn, into the same pool as the one before, a map
/// lookup and a reference count.
#[derive(Default)]
struct MyRings {
    last: Option<(u64, Arc<OutsideRing>)>,
    all: HashMap<u64, Weak<OutsideRing>>,
}

impl Drop for MyRings {
    fn drop(&mut self) {
        for ring in self.all.values().filter_map(Weak::upgrade) {
            ring.alive.store(false, Ordering::Relaxed);
        }
    }
}

thread_local! {
    static MY_RINGS: RefCell<MyRings> = RefCell::new(MyRings::default());
}

/// Writes `raw` into this thread's ring for pool `pool_id`, making the ring
/// on first use (the only lock and allocation, once per thread and pool).
#[inline]
pub(super) fn push(pool_id: u64, raw: [u64; 3]) {
    let _ = MY_RINGS.try_with(|mine| {
        let mut mine = mine.borrow_mut();
        if let Some((pool, ring)) = &mine.last {
            if *pool == pool_id {
                ring.ring.push(raw);
                return;
            }
        }
        push_outside_slow(&mut mine, pool_id, raw);
    });
}

#[cold]
fn push_outside_slow(mine: &mut MyRings, pool_id: u64, raw: [u64; 3]) {
    let ring = match mine.all.get(&pool_id).and_then(Weak::upgrade) {
        Some(ring) => ring,
        None => {
            // Forget rings whose pools are gone, then make this one.
            mine.all.retain(|_, ring| ring.strong_count() > 0);
            let ring = register_outside(pool_id);
            mine.all.insert(pool_id, Arc::downgrade(&ring));
            ring
        }
    };
    ring.ring.push(raw);
    mine.last = Some((pool_id, ring));
}

#[cold]
fn register_outside(pool_id: u64) -> Arc<OutsideRing> {
    let thread = std::thread::current();
    let name = match thread.name() {
        Some(name) => name.to_owned(),
        None => format!("{:?}", thread.id()),
    };
    let ring = Arc::new(OutsideRing {
        pool_id,
        name,
        ring: Ring::new(OUTSIDE_CAPACITY),
        alive: AtomicBool::new(true),
    });
    let mut all = lock(&OUTSIDE);
    let dead = all
        .iter()
        .filter(|r| !r.alive.load(Ordering::Relaxed))
        .count();
    if dead >= DEAD_RINGS_KEPT {
        // Drop the oldest dead ones (the list is in registration order).
        let mut to_drop = dead + 1 - DEAD_RINGS_KEPT;
        all.retain(|r| {
            if to_drop > 0 && !r.alive.load(Ordering::Relaxed) {
                to_drop -= 1;
                false
            } else {
                true
            }
        });
    }
    all.push(Arc::clone(&ring));
    ring
}

/// The rings of pool `pool_id`, live threads' and dead ones' alike.
pub(super) fn of_pool(pool_id: u64) -> Vec<Arc<OutsideRing>> {
    lock(&OUTSIDE)
        .iter()
        .filter(|r| r.pool_id == pool_id)
        .cloned()
        .collect()
}

/// Drops pool `pool_id`'s rings (its recorder is gone).
pub(super) fn forget_pool(pool_id: u64) {
    lock(&OUTSIDE).retain(|ring| ring.pool_id != pool_id);
}
