//! Every spawned task runs exactly once, counted by id, under random mixes of
//! outside and inside spawns.

mod common;

use dreadpool_core::{Handle, ThreadPoolBuilder};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

/// A small deterministic generator, so a failing mix can be replayed.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

struct Ledger {
    runs: Vec<AtomicU8>,
    next_id: AtomicUsize,
}

impl Ledger {
    fn new(capacity: usize) -> Self {
        Ledger {
            runs: (0..capacity).map(|_| AtomicU8::new(0)).collect(),
            next_id: AtomicUsize::new(0),
        }
    }

    fn claim(&self) -> Option<usize> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        (id < self.runs.len()).then_some(id)
    }

    fn ran(&self, id: usize) {
        self.runs[id].fetch_add(1, Ordering::Relaxed);
    }

    fn assert_each_ran_once(&self) {
        let spawned = self.next_id.load(Ordering::Relaxed).min(self.runs.len());
        let mut wrong = Vec::new();
        for (id, runs) in self.runs[..spawned].iter().enumerate() {
            let runs = runs.load(Ordering::Relaxed);
            if runs != 1 {
                wrong.push((id, runs));
            }
        }
        assert!(
            wrong.is_empty(),
            "{} of {spawned} tasks did not run exactly once, e.g. (id, runs) {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(10)]
        );
    }
}

/// A task that spawns a random number of children from inside the pool.
fn task(handle: Handle, ledger: Arc<Ledger>, id: usize, seed: u64) {
    ledger.ran(id);
    let mut rng = XorShift(seed | 1);
    let children = rng.next() % 4;
    for _ in 0..children {
        let Some(child) = ledger.claim() else { return };
        let (h, l, s) = (handle.clone(), Arc::clone(&ledger), rng.next());
        handle.spawn(move || task(h, l, child, s));
    }
}

fn run_mix(threads: usize, outside_spawners: usize, total: usize, seed: u64) {
    let pool = ThreadPoolBuilder::new().with_threads(threads).build();
    let ledger = Arc::new(Ledger::new(total));
    let spawners: Vec<_> = (0..outside_spawners)
        .map(|s| {
            let (handle, ledger) = (pool.handle(), Arc::clone(&ledger));
            thread::spawn(move || {
                let mut rng = XorShift(seed.wrapping_add(s as u64 * 7919) | 1);
                while let Some(id) = ledger.claim() {
                    let (h, l, s) = (handle.clone(), Arc::clone(&ledger), rng.next());
                    handle.spawn(move || task(h, l, id, s));
                    // Now and then wait for the pool mid-stream, as real
                    // callers do.
                    if rng.next().is_multiple_of(50_000) {
                        thread::yield_now();
                    }
                }
            })
        })
        .collect();
    for spawner in spawners {
        spawner.join().unwrap();
    }
    pool.join();
    ledger.assert_each_ran_once();
    assert!(ledger.next_id.load(Ordering::Relaxed) >= total);
}

#[test]
fn a_million_tasks_from_one_outside_thread_and_their_children() {
    run_mix(2, 1, 1_000_000, 0x5eed);
}

#[test]
fn a_million_tasks_from_three_outside_threads_and_their_children() {
    run_mix(3, 3, 1_000_000, 0xfeed);
}

#[test]
fn many_small_mixes_on_varied_pool_sizes() {
    for (i, threads) in [1, 2, 3, 4, 8].into_iter().enumerate() {
        for round in 0..20 {
            run_mix(threads, 1 + round % 3, 5_000, (i * 100 + round) as u64);
        }
    }
}

#[test]
fn every_task_runs_once_when_the_pool_is_dropped_instead_of_joined() {
    for round in 0..50 {
        let pool = ThreadPoolBuilder::new().with_threads(2).build();
        let ledger = Arc::new(Ledger::new(20_000));
        let handle = pool.handle();
        for _ in 0..100 {
            let Some(id) = ledger.claim() else { break };
            let (h, l) = (handle.clone(), Arc::clone(&ledger));
            pool.spawn(move || task(h, l, id, round));
        }
        drop(pool);
        ledger.assert_each_ran_once();
    }
}
