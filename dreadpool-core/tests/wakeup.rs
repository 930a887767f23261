//! The lost-wakeup hammer: the pool goes idle, one task is spawned, and the
//! join must see it run. A single lost wakeup hangs a round, and the timeout
//! fails the test instead of hanging CI.

mod common;

use common::HANG;
use dreadpool_core::ThreadPoolBuilder;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;

#[test]
fn one_task_into_an_idle_pool_tens_of_thousands_of_times() {
    for threads in [1, 2, 4] {
        let pool = ThreadPoolBuilder::new().with_threads(threads).build();
        let done = Arc::new(AtomicUsize::new(0));
        for round in 1..=20_000 {
            let d = Arc::clone(&done);
            pool.spawn(move || {
                d.fetch_add(1, Ordering::Relaxed);
            });
            assert!(
                pool.join_timeout(HANG),
                "round {round} on {threads} threads: lost wakeup"
            );
            assert_eq!(done.load(Ordering::Relaxed), round);
        }
    }
}

#[test]
fn one_task_at_a_time_through_a_channel_never_waits_for_a_join() {
    // No join at all: the only thing that can run the task is a woken worker.
    let pool = ThreadPoolBuilder::new().with_threads(2).build();
    let (tx, rx) = mpsc::channel();
    for round in 0..20_000u32 {
        let tx = tx.clone();
        pool.spawn(move || tx.send(round).unwrap());
        assert_eq!(
            rx.recv_timeout(HANG),
            Ok(round),
            "lost wakeup in round {round}"
        );
    }
}

#[test]
fn several_spawners_against_sleeping_workers() {
    let pool = Arc::new(ThreadPoolBuilder::new().with_threads(2).build());
    let spawners: Vec<_> = (0..3)
        .map(|s| {
            let pool = Arc::clone(&pool);
            thread::spawn(move || {
                let (tx, rx) = mpsc::channel();
                for round in 0..5_000u32 {
                    let tx = tx.clone();
                    pool.spawn(move || tx.send(round).unwrap());
                    assert_eq!(
                        rx.recv_timeout(HANG),
                        Ok(round),
                        "spawner {s}: lost wakeup in round {round}"
                    );
                }
            })
        })
        .collect();
    for spawner in spawners {
        spawner.join().unwrap();
    }
}

#[test]
fn joiners_racing_the_last_task() {
    let pool = Arc::new(ThreadPoolBuilder::new().with_threads(2).build());
    for round in 0..5_000 {
        let done = Arc::new(AtomicUsize::new(0));
        let d = Arc::clone(&done);
        pool.spawn(move || {
            d.fetch_add(1, Ordering::SeqCst);
        });
        let joiner = {
            let (pool, done) = (Arc::clone(&pool), Arc::clone(&done));
            thread::spawn(move || {
                assert!(
                    pool.join_timeout(HANG),
                    "round {round}: join missed the last task"
                );
                done.load(Ordering::SeqCst)
            })
        };
        assert!(
            pool.join_timeout(HANG),
            "round {round}: join missed the last task"
        );
        assert_eq!(done.load(Ordering::SeqCst), 1);
        assert_eq!(joiner.join().unwrap(), 1);
    }
}
