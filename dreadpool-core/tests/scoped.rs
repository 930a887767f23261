//! Results, scopes, broadcast and `current()`: the API real programs need.

mod common;

use common::HANG;
use dreadpool_core::{current, current_worker_index, PanicPolicy, ThreadPool, ThreadPoolBuilder};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::Duration;

fn pool(threads: usize) -> ThreadPool {
    common::quiet_worker_panics();
    ThreadPoolBuilder::new().with_threads(threads).build()
}

fn message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn results_and_panics_round_trip_from_outside() {
    let pool = pool(2);
    let handles: Vec<_> = (0..100u64)
        .map(|i| pool.spawn_with_handle(move || i * i))
        .collect();
    let results: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(results, (0..100u64).map(|i| i * i).collect::<Vec<_>>());

    let failing = pool.spawn_with_handle(|| -> u8 { panic!("handle panic") });
    assert_eq!(message(&*failing.join().unwrap_err()), "handle panic");
}

#[test]
fn results_and_panics_round_trip_from_inside() {
    // One thread: the awaited tasks sit in the waiter's own local queue, so
    // a blocking join would deadlock; the waiter must run them itself.
    let pool = Arc::new(pool(1));
    let p = Arc::clone(&pool);
    let outer = pool.spawn_with_handle(move || {
        let inner: Vec<_> = (0..10u32)
            .map(|i| p.spawn_with_handle(move || i + 1))
            .collect();
        let sum: u32 = inner.into_iter().map(|h| h.join().unwrap()).sum();
        let failed = p.spawn_with_handle(|| -> u32 { panic!("inner panic") });
        let message = message(&*failed.join().unwrap_err());
        (sum, message)
    });
    let (sum, message) = outer.join().unwrap();
    assert_eq!(sum, 55);
    assert_eq!(message, "inner panic");
}

#[test]
fn handle_panics_do_not_trip_the_pool_panic_policy() {
    let handled = Arc::new(AtomicUsize::new(0));
    let h = Arc::clone(&handled);
    let pool = ThreadPoolBuilder::new()
        .with_threads(1)
        .with_panic_policy(PanicPolicy::Abort) // would abort the test if tripped
        .with_panic_handler(move |_| {
            h.fetch_add(1, Ordering::SeqCst);
        })
        .build();
    let before = pool
        .spawn_with_handle(|| thread::current().id())
        .join()
        .unwrap();
    assert!(pool.spawn_with_handle(|| panic!("mine")).join().is_err());
    let after = pool
        .spawn_with_handle(|| thread::current().id())
        .join()
        .unwrap();
    assert_eq!(before, after, "no respawn");
    assert_eq!(pool.panic_count(), 0);
    assert_eq!(handled.load(Ordering::SeqCst), 0);
}

#[test]
fn join_timeout_gives_the_handle_back() {
    let pool = pool(1);
    let (release, wait) = mpsc::channel::<()>();
    let handle = pool.spawn_with_handle(move || {
        wait.recv().unwrap();
        7
    });
    assert!(!handle.is_finished());
    let handle = handle.join_timeout(Duration::from_millis(10)).unwrap_err();
    release.send(()).unwrap();
    let value = handle.join_timeout(HANG).expect("finished").unwrap();
    assert_eq!(value, 7);
}

#[test]
fn join_timeout_inside_the_pool_returns_at_the_deadline() {
    let pool = Arc::new(pool(2));
    let (release, wait) = mpsc::channel::<()>();
    let blocked = pool.spawn_with_handle(move || wait.recv().unwrap());
    let outer = pool.spawn_with_handle(move || {
        // Waits as a worker (parks with a deadline) and gives up.
        blocked
            .join_timeout(Duration::from_millis(20))
            .map(|_| ())
            .unwrap_err()
    });
    let blocked = outer.join().unwrap();
    release.send(()).unwrap();
    blocked.join().unwrap();
}

#[test]
fn a_dropped_handle_detaches_the_task() {
    let pool = pool(2);
    let (tx, rx) = mpsc::channel();
    drop(pool.spawn_with_handle(move || tx.send("still ran").unwrap()));
    assert_eq!(rx.recv_timeout(HANG).unwrap(), "still ran");
    pool.join();
}

#[test]
fn is_finished_turns_true() {
    let pool = pool(1);
    let handle = pool.spawn_with_handle(|| ());
    pool.join();
    assert!(handle.is_finished());
    handle.join().unwrap();
}

#[test]
fn scope_borrows_the_stack_and_waits_for_every_task() {
    let pool = pool(2);
    let mut counts = vec![0usize; 64];
    let base = 10;
    let returned = pool.scope(|s| {
        for (i, slot) in counts.iter_mut().enumerate() {
            s.spawn(move || *slot = base + i);
        }
        "body value"
    });
    assert_eq!(returned, "body value");
    assert_eq!(counts, (10..74).collect::<Vec<_>>());
}

#[test]
fn scope_waits_for_nested_spawns() {
    let pool = pool(2);
    let done = AtomicUsize::new(0);
    pool.scope(|s| {
        for _ in 0..10 {
            s.spawn(|| {
                for _ in 0..10 {
                    s.spawn(|| {
                        s.spawn(|| {
                            done.fetch_add(1, Ordering::Relaxed);
                        });
                    });
                }
            });
        }
    });
    assert_eq!(done.load(Ordering::Relaxed), 100);
}

#[test]
fn scope_reraises_the_first_task_panic_after_all_tasks_ended() {
    let pool = pool(2);
    let ran = AtomicUsize::new(0);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.scope(|s| {
            s.spawn(|| panic!("first scoped panic"));
            for _ in 0..100 {
                s.spawn(|| {
                    ran.fetch_add(1, Ordering::Relaxed);
                });
            }
        })
    }));
    let payload = result.unwrap_err();
    assert!(message(&*payload).contains("scoped panic"));
    assert_eq!(
        ran.load(Ordering::Relaxed),
        100,
        "scope returned before its tasks ended"
    );
    assert_eq!(
        pool.panic_count(),
        0,
        "scoped panics are the scope's, not the pool's"
    );
}

#[test]
fn a_panicking_scope_body_still_waits_for_its_tasks() {
    let pool = pool(2);
    let ran = AtomicUsize::new(0);
    let (release, wait) = mpsc::channel::<()>();
    let wait = Mutex::new(wait);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.scope(|s| {
            s.spawn(|| {
                // Cannot finish before the body has panicked.
                wait.lock().unwrap().recv().unwrap();
                ran.fetch_add(1, Ordering::SeqCst);
            });
            release.send(()).unwrap();
            panic!("the body panics");
        })
    }));
    assert_eq!(message(&*result.unwrap_err()), "the body panics");
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

fn nest(pool: &ThreadPool, depth: usize, reached: &AtomicUsize) {
    reached.fetch_max(depth, Ordering::Relaxed);
    if depth == 0 {
        return;
    }
    pool.scope(|s| {
        s.spawn(|| nest(pool, depth - 1, reached));
        s.spawn(|| {
            reached.fetch_add(0, Ordering::Relaxed);
        });
    });
}

#[test]
fn scopes_nest_32_deep_from_inside_tasks() {
    for threads in [1, 2] {
        let pool = Arc::new(pool(threads));
        let reached = Arc::new(AtomicUsize::new(0));
        let (p, r) = (Arc::clone(&pool), Arc::clone(&reached));
        let handle = pool.spawn_with_handle(move || nest(&p, 32, &r));
        handle
            .join_timeout(HANG)
            .expect("nested scopes deadlocked")
            .unwrap();
        assert_eq!(reached.load(Ordering::Relaxed), 32);
    }
}

fn quicksort(pool: &ThreadPool, v: &mut [u64]) {
    if v.len() <= 4096 {
        v.sort_unstable();
        return;
    }
    let pivot = v[v.len() / 2];
    let mut lt = 0;
    let mut gt = v.len();
    let mut i = 0;
    // Three-way partition: [< pivot | == pivot | > pivot].
    while i < gt {
        if v[i] < pivot {
            v.swap(i, lt);
            lt += 1;
            i += 1;
        } else if v[i] > pivot {
            gt -= 1;
            v.swap(i, gt);
        } else {
            i += 1;
        }
    }
    let (left, rest) = v.split_at_mut(lt);
    let right = &mut rest[gt - lt..];
    pool.scope(|s| {
        s.spawn(|| quicksort(pool, left));
        s.spawn(|| quicksort(pool, right));
    });
}

#[test]
fn parallel_quicksort_of_ten_million_borrowed_elements() {
    let pool = pool(2);
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut data: Vec<u64> = (0..10_000_000)
        .map(|_| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % 1_000_000
        })
        .collect();
    // Same multiset afterwards (sum and xor of all values), and in order.
    let fingerprint = |v: &[u64]| v.iter().fold((0u64, 0u64), |(s, x), &e| (s + e, x ^ e));
    let before = fingerprint(&data);
    quicksort(&pool, &mut data);
    assert!(data.windows(2).all(|w| w[0] <= w[1]), "not sorted");
    assert_eq!(fingerprint(&data), before, "elements changed");
}

#[test]
fn scope_on_a_shut_down_pool_runs_tasks_on_the_caller() {
    let pool = pool(2);
    pool.shutdown();
    let caller = thread::current().id();
    let mut ran_on = Vec::new();
    let ran = Mutex::new(&mut ran_on);
    pool.scope(|s| {
        for _ in 0..3 {
            s.spawn(|| ran.lock().unwrap().push(thread::current().id()));
        }
    });
    assert_eq!(ran_on, vec![caller; 3]);
}

#[test]
fn a_scope_from_a_task_of_another_pool() {
    let a = Arc::new(pool(1));
    let b = pool(1);
    let a2 = Arc::clone(&a);
    let total = b
        .spawn_with_handle(move || {
            let mut parts = [0u32; 4];
            a2.scope(|s| {
                for (i, p) in parts.iter_mut().enumerate() {
                    s.spawn(move || *p = i as u32 * 10);
                }
            });
            parts.iter().sum::<u32>()
        })
        .join()
        .unwrap();
    assert_eq!(total, 60);
}

#[test]
fn broadcast_runs_exactly_once_per_worker() {
    for threads in [1, 2, 5] {
        let pool = pool(threads);
        let seen = Mutex::new(Vec::new());
        let results = pool.broadcast(|index| {
            seen.lock().unwrap().push((index, thread::current().id()));
            index * 10
        });
        assert_eq!(results, (0..threads).map(|i| i * 10).collect::<Vec<_>>());
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.len(), threads);
        let indices: HashSet<_> = seen.iter().map(|(i, _)| *i).collect();
        let thread_ids: HashSet<_> = seen.iter().map(|(_, t)| *t).collect();
        assert_eq!(indices.len(), threads, "an index ran twice");
        assert_eq!(thread_ids.len(), threads, "a thread ran twice");
    }
}

#[test]
fn broadcast_reaches_busy_and_sleeping_workers_and_works_from_inside() {
    let pool = Arc::new(pool(2));
    // Keep one worker busy with a long queue while broadcasting.
    let p = Arc::clone(&pool);
    pool.spawn(move || {
        for _ in 0..10_000 {
            p.spawn(|| ());
        }
    });
    assert_eq!(pool.broadcast(|i| i), vec![0, 1]);
    let p = Arc::clone(&pool);
    let inside = pool.spawn_with_handle(move || p.broadcast(|i| current_worker_index() == Some(i)));
    assert_eq!(inside.join().unwrap(), vec![true, true]);
}

#[test]
fn broadcast_reraises_a_panic_after_every_worker_ran() {
    let pool = pool(3);
    let ran = AtomicUsize::new(0);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.broadcast(|i| {
            ran.fetch_add(1, Ordering::SeqCst);
            if i == 1 {
                panic!("worker 1 refuses");
            }
        })
    }));
    assert_eq!(message(&*result.unwrap_err()), "worker 1 refuses");
    assert_eq!(ran.load(Ordering::SeqCst), 3);
}

#[test]
fn current_spawns_into_the_right_pool() {
    let a = ThreadPoolBuilder::new()
        .with_threads(1)
        .with_thread_name("pool-a")
        .build();
    let b = ThreadPoolBuilder::new()
        .with_threads(1)
        .with_thread_name("pool-b")
        .build();
    assert!(current().is_none());
    assert!(current_worker_index().is_none());
    for (pool, name) in [(&a, "pool-a"), (&b, "pool-b")] {
        let where_it_ran = pool
            .spawn_with_handle(|| {
                // Joining from inside keeps this (only) worker running the
                // spawned task instead of blocking on it.
                current()
                    .expect("inside a task")
                    .spawn_with_handle(|| thread::current().name().unwrap().to_owned())
                    .join()
                    .unwrap()
            })
            .join()
            .unwrap();
        assert_eq!(where_it_ran, format!("{name}-0"));
    }
}
