//! Panicking tasks under each `PanicPolicy`: counted, handed to the handler,
//! nothing queued lost, the pool at full strength, `join()` still returning.

mod common;

use common::{Gate, HANG};
use dreadpool_core::{PanicPolicy, ThreadPool, ThreadPoolBuilder};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;

fn pool_with(policy: PanicPolicy, threads: usize) -> ThreadPool {
    common::quiet_worker_panics();
    ThreadPoolBuilder::new()
        .with_threads(threads)
        .with_panic_policy(policy)
        .build()
}

/// Proves the pool has `threads` live workers: one task per worker, each
/// waiting until all of them run at once.
fn assert_full_strength(pool: &ThreadPool) {
    let n = pool.threads();
    let gate = Arc::new(Gate::new());
    let all_met = Arc::new(AtomicUsize::new(0));
    for _ in 0..n {
        let (gate, all_met) = (Arc::clone(&gate), Arc::clone(&all_met));
        pool.spawn(move || {
            if gate.arrive_and_wait(n) {
                all_met.fetch_add(1, Ordering::SeqCst);
            }
        });
    }
    pool.join();
    assert_eq!(
        all_met.load(Ordering::SeqCst),
        n,
        "fewer than {n} workers are alive"
    );
}

#[test]
fn every_policy_but_abort_counts_panics_and_keeps_working() {
    for policy in [PanicPolicy::Respawn, PanicPolicy::Continue] {
        let pool = pool_with(policy, 2);
        let done = Arc::new(AtomicUsize::new(0));
        for i in 0..1000 {
            let done = Arc::clone(&done);
            pool.spawn(move || {
                if i % 3 == 0 {
                    panic!("task {i} panics on purpose");
                }
                done.fetch_add(1, Ordering::Relaxed);
            });
        }
        pool.join();
        assert_eq!(pool.panic_count(), 334, "{policy:?}");
        assert_eq!(done.load(Ordering::Relaxed), 666, "{policy:?}");
        assert_full_strength(&pool);
    }
}

#[test]
fn the_handler_sees_every_payload() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_panic_handler(move |payload| {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            s.lock().unwrap().push(message);
        })
        .build();
    for i in 0..10 {
        pool.spawn(move || panic!("payload {i}"));
    }
    pool.spawn(|| std::panic::panic_any("a literal"));
    pool.join();
    let mut seen = seen.lock().unwrap().clone();
    seen.sort();
    let mut expected: Vec<String> = (0..10).map(|i| format!("payload {i}")).collect();
    expected.push("a literal".into());
    expected.sort();
    assert_eq!(seen, expected);
    assert_eq!(pool.panic_count(), 11);
}

#[test]
fn respawn_replaces_the_thread_and_keeps_its_queue() {
    // One worker, so the children can only sit in the panicking worker's own
    // local queue: if the replacement did not take it over, they would be lost.
    let pool = Arc::new(pool_with(PanicPolicy::Respawn, 1));
    let done = Arc::new(AtomicUsize::new(0));
    let threads = Arc::new(Mutex::new(HashSet::new()));
    let (p, d, t) = (Arc::clone(&pool), Arc::clone(&done), Arc::clone(&threads));
    pool.spawn(move || {
        t.lock().unwrap().insert(thread::current().id());
        for _ in 0..100 {
            let (d, t) = (Arc::clone(&d), Arc::clone(&t));
            p.spawn(move || {
                t.lock().unwrap().insert(thread::current().id());
                d.fetch_add(1, Ordering::Relaxed);
            });
        }
        panic!("after queueing 100 children locally");
    });
    pool.join();
    assert_eq!(done.load(Ordering::Relaxed), 100, "a child was lost");
    assert_eq!(pool.panic_count(), 1);
    assert_eq!(
        threads.lock().unwrap().len(),
        2,
        "the children must run on a new thread"
    );
    // The replacement keeps the worker's name.
    let (tx, rx) = mpsc::channel();
    pool.spawn(move || {
        tx.send(thread::current().name().map(str::to_owned))
            .unwrap()
    });
    assert_eq!(
        rx.recv_timeout(HANG).unwrap().as_deref(),
        Some("dreadpool-0")
    );
}

#[test]
fn respawned_workers_queues_stay_stealable() {
    let pool = Arc::new(pool_with(PanicPolicy::Respawn, 2));
    let done = Arc::new(AtomicUsize::new(0));
    for round in 0..200 {
        let (p, d) = (Arc::clone(&pool), Arc::clone(&done));
        pool.spawn(move || {
            for _ in 0..10 {
                let d = Arc::clone(&d);
                p.spawn(move || {
                    d.fetch_add(1, Ordering::Relaxed);
                });
            }
            if round % 2 == 0 {
                panic!("round {round}");
            }
        });
    }
    pool.join();
    assert_eq!(done.load(Ordering::Relaxed), 2000);
    assert_eq!(pool.panic_count(), 100);
    assert_full_strength(&pool);
}

#[test]
fn continue_keeps_the_same_thread() {
    let pool = pool_with(PanicPolicy::Continue, 1);
    let (tx, rx) = mpsc::channel();
    let tx2 = tx.clone();
    pool.spawn(move || {
        tx2.send(thread::current().id()).unwrap();
        panic!("once");
    });
    pool.spawn(move || tx.send(thread::current().id()).unwrap());
    let first = rx.recv_timeout(HANG).unwrap();
    let second = rx.recv_timeout(HANG).unwrap();
    assert_eq!(first, second);
}

#[test]
fn a_panicking_handler_is_contained() {
    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_panic_handler(|_| panic!("the handler panics too"))
        .build();
    let done = Arc::new(AtomicUsize::new(0));
    for _ in 0..20 {
        let done = Arc::clone(&done);
        pool.spawn(move || {
            done.fetch_add(1, Ordering::Relaxed);
            panic!("task");
        });
    }
    pool.join();
    assert_eq!(done.load(Ordering::Relaxed), 20);
    assert_eq!(pool.panic_count(), 20);
    assert_full_strength(&pool);
}

#[test]
fn a_payload_whose_drop_panics_is_contained() {
    struct Bomb;
    impl Drop for Bomb {
        fn drop(&mut self) {
            panic!("the payload panics when dropped");
        }
    }
    for policy in [PanicPolicy::Respawn, PanicPolicy::Continue] {
        let pool = pool_with(policy, 2);
        for _ in 0..10 {
            pool.spawn(|| std::panic::panic_any(Bomb));
        }
        pool.join();
        assert_eq!(pool.panic_count(), 10);
        assert_full_strength(&pool);
    }
}

#[test]
fn a_task_panicking_while_the_pool_drains() {
    let done = Arc::new(AtomicUsize::new(0));
    let pool = pool_with(PanicPolicy::Respawn, 2);
    let handle = pool.handle();
    let d = Arc::clone(&done);
    pool.spawn(move || {
        while !handle.is_shut_down() {
            thread::yield_now();
        }
        for i in 0..100 {
            let d = Arc::clone(&d);
            handle.spawn(move || {
                d.fetch_add(1, Ordering::Relaxed);
                if i % 10 == 0 {
                    panic!("during the drain");
                }
            });
        }
        panic!("the draining parent panics too");
    });
    drop(pool);
    assert_eq!(done.load(Ordering::Relaxed), 100);
}

/// The child half of `abort_policy_aborts_the_process`.
#[test]
fn abort_child() {
    if std::env::var_os("DREADPOOL_ABORT_CHILD").is_none() {
        return;
    }
    let pool = pool_with(PanicPolicy::Abort, 1);
    pool.spawn(|| panic!("fail fast"));
    pool.join();
    unreachable!("the process should have aborted");
}

#[test]
fn abort_policy_aborts_the_process() {
    use std::os::unix::process::ExitStatusExt;
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "abort_child", "--nocapture", "--test-threads=1"])
        .env("DREADPOOL_ABORT_CHILD", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.signal(),
        Some(6),
        "expected SIGABRT; stderr: {stderr}"
    );
    assert!(stderr.contains("panic policy is Abort"), "{stderr}");
}

#[test]
fn a_replacement_the_os_refuses_leaves_the_old_thread_working() {
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .with_threads(1)
            .with_panic_policy(PanicPolicy::Respawn)
            .__inject_respawn_failures(3)
            .build(),
    );
    let done = Arc::new(AtomicUsize::new(0));
    let threads = Arc::new(Mutex::new(Vec::new()));
    for _ in 0..5 {
        let (p, d, t) = (Arc::clone(&pool), Arc::clone(&done), Arc::clone(&threads));
        pool.spawn(move || {
            t.lock().unwrap().push(thread::current().id());
            // Children in this worker's own queue: they must survive.
            for _ in 0..10 {
                let d = Arc::clone(&d);
                p.spawn(move || {
                    d.fetch_add(1, Ordering::Relaxed);
                });
            }
            panic!("respawn refused");
        });
    }
    assert!(pool.join_timeout(HANG), "join hung after a refused respawn");
    assert_eq!(
        done.load(Ordering::Relaxed),
        50,
        "queued children were lost"
    );
    assert_eq!(pool.panic_count(), 5);
    assert_eq!(pool.respawn_failures(), 3);
    // The first three panics could not be replaced, so the same thread ran
    // the fourth task too; its panic was replaced, and the fifth task ran on
    // the replacement.
    let threads = threads.lock().unwrap();
    assert!(threads[..4].iter().all(|t| *t == threads[0]), "{threads:?}");
    assert_ne!(threads[4], threads[0], "{threads:?}");
    assert_full_strength(&pool);
}

#[test]
fn a_storm_where_every_task_panics() {
    for policy in [PanicPolicy::Respawn, PanicPolicy::Continue] {
        let pool = Arc::new(pool_with(policy, 2));
        let ran = Arc::new(AtomicUsize::new(0));
        for _ in 0..300 {
            let (p, r) = (Arc::clone(&pool), Arc::clone(&ran));
            pool.spawn(move || {
                r.fetch_add(1, Ordering::Relaxed);
                // Queue two children that panic too, then panic.
                for _ in 0..2 {
                    let r = Arc::clone(&r);
                    p.spawn(move || {
                        r.fetch_add(1, Ordering::Relaxed);
                        panic!("storm child");
                    });
                }
                panic!("storm parent");
            });
        }
        assert!(
            pool.join_timeout(HANG),
            "{policy:?}: join hung in the storm"
        );
        assert_eq!(
            ran.load(Ordering::Relaxed),
            900,
            "{policy:?}: queued tasks lost"
        );
        assert_eq!(pool.panic_count(), 900, "{policy:?}");
        assert_full_strength(&pool);
    }
}
