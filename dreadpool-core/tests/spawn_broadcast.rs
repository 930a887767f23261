//! `spawn_broadcast`, `Handle::broadcast`, `current_worker_index` of a
//! given pool and `current_threads`.

use dreadpool_core::{current_threads, ThreadPoolBuilder};
use std::sync::mpsc;
use std::sync::Mutex;

#[test]
fn spawn_broadcast_runs_once_on_every_worker_without_waiting() {
    let pool = ThreadPoolBuilder::new().with_threads(4).build();
    let (sent, received) = mpsc::channel();
    let sent = Mutex::new(sent);
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let gate = Mutex::new(gate_rx);
    // Worker 0 is held on the gate: spawn_broadcast must return anyway.
    pool.spawn_broadcast(move |index| {
        if index == 0 {
            gate.lock().unwrap().recv().unwrap();
        }
        let current = dreadpool_core::current_worker_index();
        sent.lock().unwrap().send((index, current)).unwrap();
    });
    gate_tx.send(()).unwrap();
    let mut seen: Vec<_> = received.iter().take(4).collect();
    seen.sort();
    assert_eq!(seen, (0..4).map(|i| (i, Some(i))).collect::<Vec<_>>());
}

#[test]
fn a_panic_in_spawn_broadcast_is_a_tasks_panic() {
    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_panic_handler(|_| {})
        .build();
    pool.spawn_broadcast(|index| assert_ne!(index, 1, "worker 1 panics"));
    pool.join();
    assert_eq!(pool.panic_count(), 1);
    assert_eq!(pool.broadcast(|i| i), [0, 1]);
}

#[test]
fn spawn_broadcast_after_shutdown_panics() {
    let pool = ThreadPoolBuilder::new().with_threads(1).build();
    let handle = pool.handle();
    drop(pool);
    let refused = std::panic::catch_unwind(|| handle.spawn_broadcast(|_| ()));
    assert!(refused.is_err());
}

#[test]
fn a_handle_broadcasts_and_knows_its_own_workers() {
    let pool = ThreadPoolBuilder::new().with_threads(3).build();
    let other = ThreadPoolBuilder::new().with_threads(2).build();
    let handle = pool.handle();
    assert_eq!(
        handle.broadcast(|i| (i, handle.current_worker_index())),
        [(0, Some(0)), (1, Some(1)), (2, Some(2))]
    );
    assert_eq!(other.install(|| handle.current_worker_index()), None);
    assert_eq!(handle.current_worker_index(), None);
}

#[test]
fn current_threads_is_the_current_pools_even_nested() {
    let pool = ThreadPoolBuilder::new().with_threads(3).build();
    let other = ThreadPoolBuilder::new().with_threads(2).build();
    let seen = pool.install(|| (current_threads(), other.install(current_threads)));
    assert_eq!(seen, (3, 2));
    assert_eq!(current_threads(), dreadpool_core::global_pool().threads());
}
