//! FIFO spawns (`spawn_fifo`, `Scope::spawn_fifo`): their order, their
//! exactly-once runs under stealing, and panics.

use dreadpool_core::{current, ThreadPoolBuilder};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};

#[test]
fn a_workers_fifo_spawns_start_in_spawn_order_and_plain_ones_newest_first() {
    let pool = ThreadPoolBuilder::new().with_threads(1).build();
    let (sent, received) = mpsc::channel();
    pool.install(|| {
        let handle = current().unwrap();
        for i in 0..100 {
            let sent = sent.clone();
            handle.spawn_fifo(move || sent.send(("fifo", i)).unwrap());
        }
    });
    pool.join();
    pool.install(|| {
        let handle = current().unwrap();
        for i in 0..3 {
            let sent = sent.clone();
            handle.spawn(move || sent.send(("lifo", i)).unwrap());
        }
    });
    pool.join();
    drop(sent);
    let seen: Vec<_> = received.iter().collect();
    let mut expected: Vec<_> = (0..100).map(|i| ("fifo", i)).collect();
    expected.extend([("lifo", 2), ("lifo", 1), ("lifo", 0)]);
    assert_eq!(seen, expected);
}

#[test]
fn a_scopes_fifo_spawns_start_in_spawn_order_and_may_borrow() {
    let pool = ThreadPoolBuilder::new().with_threads(1).build();
    let order = Mutex::new(Vec::new());
    let order_ref = &order;
    pool.install(|| {
        pool.scope(|scope| {
            for i in 0..50 {
                scope.spawn_fifo(move || order_ref.lock().unwrap().push(i));
            }
        });
    });
    assert_eq!(order.into_inner().unwrap(), (0..50).collect::<Vec<_>>());
}

#[test]
fn fifo_spawns_nested_and_stolen_run_exactly_once() {
    const SPAWNERS: usize = 64;
    const EACH: usize = 200;
    let pool = ThreadPoolBuilder::new().with_threads(4).build();
    let runs: Vec<AtomicUsize> = (0..SPAWNERS * EACH).map(|_| AtomicUsize::new(0)).collect();
    let runs = &runs;
    pool.scope(|scope| {
        for s in 0..SPAWNERS {
            scope.spawn_fifo(move || {
                // Each spawner's tasks go to its worker's FIFO queue, their
                // trampolines to its local queue, where the other workers
                // steal them.
                for k in 0..EACH {
                    scope.spawn_fifo(move || {
                        runs[s * EACH + k].fetch_add(1, Ordering::Relaxed);
                    });
                }
            });
        }
    });
    // Plain FIFO spawns from tasks, nested three deep, counted.
    let count = std::sync::Arc::new(AtomicUsize::new(0));
    let c = std::sync::Arc::clone(&count);
    pool.install(move || {
        let handle = current().unwrap();
        for _ in 0..SPAWNERS {
            let c = std::sync::Arc::clone(&c);
            handle.spawn_fifo(move || {
                let handle = current().unwrap();
                for _ in 0..EACH {
                    let c = std::sync::Arc::clone(&c);
                    handle.spawn_fifo(move || {
                        c.fetch_add(1, Ordering::Relaxed);
                    });
                }
            });
        }
    });
    pool.join();
    assert!(runs.iter().all(|r| r.load(Ordering::Relaxed) == 1));
    assert_eq!(count.load(Ordering::Relaxed), SPAWNERS * EACH);
}

#[test]
fn a_fifo_tasks_panic_is_reported_and_the_rest_run() {
    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_panic_handler(|_| {})
        .build();
    let ran = std::sync::Arc::new(AtomicUsize::new(0));
    let r = std::sync::Arc::clone(&ran);
    pool.install(move || {
        let handle = current().unwrap();
        for i in 0..10 {
            let r = std::sync::Arc::clone(&r);
            handle.spawn_fifo(move || {
                assert_ne!(i, 4, "the fifth panics");
                r.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    pool.join();
    assert_eq!(pool.panic_count(), 1);
    assert_eq!(ran.load(Ordering::Relaxed), 9);
}

#[test]
fn from_outside_a_fifo_spawn_is_a_plain_spawn() {
    let pool = ThreadPoolBuilder::new().with_threads(2).build();
    let (sent, received) = mpsc::channel();
    pool.spawn_fifo(move || sent.send(current().is_some()).unwrap());
    assert!(received.recv().unwrap());
}
