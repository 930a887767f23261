//! Fork-join, black-box: `join`, `join_context` and `install` as a user sees
//! them (issue 16), on 1, 2 and 8 threads.
//!
//! Nothing here requires that the two halves of a join ran on different
//! threads (the assertions hold for a join that runs both halves on the
//! caller, and for one that hands `b` to another worker): only results,
//! that both halves always ran, where panics land, and which pool's
//! threads ran what. Ordering uses channels, never sleeps.
//!
//! `DREADPOOL_TEST_SMALL=1` shrinks the sizes (CI runs this file under
//! valgrind with it).

mod common;

use common::HANG;
use dreadpool_core::{join, join_context, ThreadPool, ThreadPoolBuilder};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;

/// Whether to run small sizes (`DREADPOOL_TEST_SMALL` set, and not "0").
fn small() -> bool {
    std::env::var_os("DREADPOOL_TEST_SMALL").is_some_and(|v| v != "0")
}

/// `normal`, or `small` under `DREADPOOL_TEST_SMALL`.
fn size<T>(normal: T, small_size: T) -> T {
    if small() {
        small_size
    } else {
        normal
    }
}

/// A pool with default thread names (`dreadpool-N`), whose planned panics
/// [`common::quiet_worker_panics`] keeps out of the output.
fn pool(threads: usize) -> ThreadPool {
    common::quiet_worker_panics();
    ThreadPoolBuilder::new().with_threads(threads).build()
}

fn named(threads: usize, name: &str) -> ThreadPool {
    ThreadPoolBuilder::new()
        .with_threads(threads)
        .with_thread_name(name)
        .build()
}

fn thread_name() -> String {
    thread::current().name().unwrap_or("<unnamed>").to_owned()
}

fn message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

// ------------------------------------------------------------- workloads

fn fib(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = join(|| fib(n - 1), || fib(n - 2));
    a + b
}

fn fib_serial(n: u32) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a
}

/// A perfect binary tree of boxed nodes holding 1, 2, ..., 2^levels - 1.
struct Node {
    value: u64,
    children: Option<Box<(Node, Node)>>,
}

fn build(levels: u32, next: &mut u64) -> Node {
    *next += 1;
    let value = *next;
    let children = (levels > 1).then(|| {
        let left = build(levels - 1, next);
        Box::new((left, build(levels - 1, next)))
    });
    Node { value, children }
}

fn tree_sum(node: &Node) -> u64 {
    match &node.children {
        Some(pair) => {
            let (a, b) = join(|| tree_sum(&pair.0), || tree_sum(&pair.1));
            node.value + a + b
        }
        None => node.value,
    }
}

fn tree_sum_serial(node: &Node) -> u64 {
    node.value
        + node.children.as_ref().map_or(0, |pair| {
            tree_sum_serial(&pair.0) + tree_sum_serial(&pair.1)
        })
}

/// Sorts a borrowed slice: a Hoare partition, both sides under a join.
fn quicksort(v: &mut [u64]) {
    if v.len() <= 1024 {
        v.sort_unstable();
        return;
    }
    let pivot = v[v.len() / 2];
    v.swap(0, v.len() / 2);
    let (mut i, mut j) = (0, v.len());
    let mid = loop {
        loop {
            j -= 1;
            if v[j] <= pivot {
                break;
            }
        }
        while v[i] < pivot {
            i += 1;
        }
        if i >= j {
            break j + 1;
        }
        v.swap(i, j);
        i += 1;
    };
    let (left, right) = v.split_at_mut(mid);
    join(|| quicksort(left), || quicksort(right));
}

fn random(len: usize, seed: u64) -> Vec<u64> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect()
}

// ------------------------------------------------------------- results

#[test]
fn fib_matches_the_serial_result_on_1_2_and_8_threads() {
    let n = size(24, 12);
    for threads in [1, 2, 8] {
        let pool = pool(threads);
        assert_eq!(pool.install(|| fib(n)), fib_serial(n), "{threads} threads");
    }
}

#[test]
fn tree_sums_match_the_serial_sum_on_1_2_and_8_threads() {
    let levels = size(16, 8);
    let tree = build(levels, &mut 0);
    let nodes = (1u64 << levels) - 1;
    let expected = nodes * (nodes + 1) / 2;
    assert_eq!(tree_sum_serial(&tree), expected);
    for threads in [1, 2, 8] {
        let pool = pool(threads);
        assert_eq!(
            pool.install(|| tree_sum(&tree)),
            expected,
            "{threads} threads"
        );
    }
}

#[test]
fn a_parallel_quicksort_of_borrowed_data() {
    let len = size(1 << 20, 20_000);
    for threads in [1, 2, 8] {
        let pool = pool(threads);
        // Few distinct values too: many elements equal to the pivot.
        for modulus in [u64::MAX, 7] {
            let mut data: Vec<u64> = random(len, 42).into_iter().map(|x| x % modulus).collect();
            let mut expected = data.clone();
            expected.sort_unstable();
            pool.install(|| quicksort(&mut data));
            assert!(data == expected, "{threads} threads, values mod {modulus}");
        }
    }
}

#[test]
fn both_halves_may_write_to_the_callers_stack() {
    let pool = pool(2);
    let mut left = vec![0u32; 1000];
    let mut right = vec![0u32; 1000];
    let (a, b) = pool.install(|| {
        join(
            || {
                left.iter_mut().enumerate().for_each(|(i, x)| *x = i as u32);
                "a"
            },
            || {
                right.iter_mut().for_each(|x| *x = 7);
                "b"
            },
        )
    });
    assert_eq!((a, b), ("a", "b"));
    assert_eq!(left, (0..1000).collect::<Vec<u32>>());
    assert!(right.iter().all(|&x| x == 7));
}

// ------------------------------------------------------------- where joins run

#[test]
fn joins_inside_spawned_tasks_fork_on_that_pool() {
    let pool = Arc::new(named(2, "fjspawn"));
    let handles: Vec<_> = (0..8u32)
        .map(|i| pool.spawn_with_handle(move || fib(12 + i % 4)))
        .collect();
    for (i, handle) in (0..8u32).zip(handles) {
        assert_eq!(handle.join().unwrap(), fib_serial(12 + i % 4));
    }
    // A plain spawn, reporting through a channel.
    let (tx, rx) = mpsc::channel();
    pool.spawn(move || {
        let (a, b) = join(thread_name, thread_name);
        tx.send((fib(15), a, b)).unwrap();
    });
    let (value, a, b) = rx.recv_timeout(HANG).unwrap();
    assert_eq!(value, fib_serial(15));
    assert!(a.starts_with("fjspawn-"), "{a}");
    assert!(b.starts_with("fjspawn-"), "{b}");
}

#[test]
fn joins_inside_scoped_tasks() {
    let pool = named(2, "fjscope");
    let mut results = [0u64; 16];
    let mut names = vec![String::new(); 16];
    pool.scope(|s| {
        for ((i, slot), name) in results.iter_mut().enumerate().zip(names.iter_mut()) {
            s.spawn(move || {
                let (value, (a, b)) =
                    join(|| fib(8 + i as u32 % 6), || join(thread_name, thread_name));
                *slot = value;
                *name = if a.starts_with("fjscope-") && b.starts_with("fjscope-") {
                    a
                } else {
                    format!("{a} / {b}")
                };
            });
        }
    });
    for (i, (value, name)) in results.iter().zip(&names).enumerate() {
        assert_eq!(*value, fib_serial(8 + i as u32 % 6), "task {i}");
        assert!(name.starts_with("fjscope-"), "task {i} forked on {name}");
    }
    // And scopes opened inside a join's halves, their tasks joining again.
    let mut sums = [0u64; 4];
    let (left, right) = sums.split_at_mut(2);
    pool.install(|| {
        join(
            || {
                pool.scope(|s| {
                    for (i, slot) in left.iter_mut().enumerate() {
                        s.spawn(move || *slot = fib(10 + i as u32));
                    }
                })
            },
            || {
                pool.scope(|s| {
                    for (i, slot) in right.iter_mut().enumerate() {
                        s.spawn(move || *slot = join(|| fib(12 + i as u32), || 1).0);
                    }
                })
            },
        )
    });
    assert_eq!(
        sums,
        [
            fib_serial(10),
            fib_serial(11),
            fib_serial(12),
            fib_serial(13)
        ]
    );
}

#[test]
fn joins_inside_install_of_another_pool_fork_on_that_pool() {
    let a = named(2, "fjouter");
    let b = named(2, "fjinner");
    let (outer, (left, right), value) = a.install(|| {
        let outer = thread_name();
        let (halves, value) = b.install(|| {
            let halves = join(thread_name, thread_name);
            (halves, fib(16))
        });
        (outer, halves, value)
    });
    assert!(outer.starts_with("fjouter-"), "{outer}");
    assert!(left.starts_with("fjinner-"), "{left}");
    assert!(right.starts_with("fjinner-"), "{right}");
    assert_eq!(value, fib_serial(16));
    // Both halves of a join on one pool install on the other.
    let (x, y) = a.install(|| join(|| b.install(|| fib(14)), || b.install(|| fib(13))));
    assert_eq!((x, y), (fib_serial(14), fib_serial(13)));
}

#[test]
fn a_worker_waiting_inside_a_runs_its_own_shared_fork() {
    // The join's `b` is shared at once (one peer: one shared fork), but the
    // peer is held busy by the gate task, so only the joining worker can
    // run `b`; and `a`, in an install on another pool, returns only after
    // `b` ran. The joining worker must take its own fork back while it
    // waits: if it could not, `a` would time out (after HANG) with the
    // fork still on offer.
    let pool = named(2, "fjown");
    let other = named(1, "fjownother");
    let (gate, gate_rx) = mpsc::channel::<()>();
    let (busy, busy_rx) = mpsc::channel::<()>();
    let (ran, ran_rx) = mpsc::channel::<String>();
    // (Receivers are not `Sync`; the closures below borrow them.)
    let (busy_rx, ran_rx) = (Mutex::new(busy_rx), Mutex::new(ran_rx));
    let (joiner, seen) = pool.install(|| {
        // The gate task goes to this worker's queue; only the other worker
        // can run it, since this one blocks until it has started.
        let this_pool = dreadpool_core::current().expect("install runs on a worker");
        this_pool.spawn(move || {
            busy.send(()).unwrap();
            gate_rx.recv().unwrap();
        });
        busy_rx
            .lock()
            .unwrap()
            .recv_timeout(HANG)
            .expect("the other worker took the gate task");
        let (seen, ()) = join(
            || other.install(|| ran_rx.lock().unwrap().recv_timeout(HANG)),
            move || ran.send(thread_name()).unwrap(),
        );
        (thread_name(), seen)
    });
    gate.send(()).unwrap();
    assert_eq!(
        seen.as_deref(),
        Ok(joiner.as_str()),
        "b ran on the worker waiting in a"
    );
}

#[test]
fn install_from_a_worker_of_another_pool_keeps_running_that_pools_work() {
    // One worker each: the task queued on `a` has nobody but the worker
    // waiting in `b.install` to run it, and `f` cannot return before it
    // ran. A blocking wait would time out (not hang) after HANG.
    let a = Arc::new(named(1, "fjkeep"));
    let b = Arc::new(named(1, "fjother"));

    // Queued from inside (a's own local queue) before installing.
    let (tx, rx) = mpsc::channel();
    let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
    let outcome = a
        .spawn_with_handle(move || {
            a2.spawn(move || tx.send(thread_name()).unwrap());
            b2.install(move || (thread_name(), rx.recv_timeout(HANG)))
        })
        .join()
        .unwrap();
    assert!(outcome.0.starts_with("fjother-"), "f ran on {}", outcome.0);
    assert_eq!(outcome.1.as_deref(), Ok("fjkeep-0"));

    // Queued from outside while a's worker already waits in install.
    let (tx, rx) = mpsc::channel();
    let (installing_tx, installing_rx) = mpsc::channel();
    let b2 = Arc::clone(&b);
    let waiting = a.spawn_with_handle(move || {
        installing_tx.send(()).unwrap();
        b2.install(move || rx.recv_timeout(HANG))
    });
    installing_rx.recv_timeout(HANG).unwrap();
    a.spawn(move || tx.send(thread_name()).unwrap());
    assert_eq!(waiting.join().unwrap().as_deref(), Ok("fjkeep-0"));
}

#[test]
fn install_from_the_same_pools_worker_runs_inline() {
    let pool = Arc::new(named(2, "fjinline"));
    let outer_inner = pool.install(|| {
        let outer = (thread::current().id(), thread_name());
        let inner = pool.install(|| (thread::current().id(), thread_name()));
        (outer, inner)
    });
    assert_eq!(outer_inner.0, outer_inner.1);
    assert!(outer_inner.0 .1.starts_with("fjinline-"));
    // From a spawned task, through a Handle too.
    let p = Arc::clone(&pool);
    let same = pool
        .spawn_with_handle(move || {
            let me = thread::current().id();
            let by_pool = p.install(|| thread::current().id());
            let by_handle = p.handle().install(|| thread::current().id());
            by_pool == me && by_handle == me
        })
        .join()
        .unwrap();
    assert!(same);
}

#[test]
fn install_from_outside_runs_on_a_worker_and_borrows() {
    let pool = named(2, "fjinst");
    let data: Vec<u64> = (1..=1000).collect();
    let (total, name) = pool.install(|| (data.iter().sum::<u64>(), thread_name()));
    assert_eq!(total, 500_500);
    assert!(name.starts_with("fjinst-"), "{name}");
    let (total, name) = pool
        .handle()
        .install(|| (data.iter().sum::<u64>(), thread_name()));
    assert_eq!(total, 500_500);
    assert!(name.starts_with("fjinst-"), "{name}");
}

#[test]
fn install_reraises_its_panic_on_the_caller_and_the_pool_goes_on() {
    let pool = pool(2);
    let result = catch_unwind(AssertUnwindSafe(|| {
        pool.install(|| -> u32 { panic!("install panics") })
    }));
    assert_eq!(message(&*result.unwrap_err()), "install panics");
    assert_eq!(pool.install(|| join(|| 1, || 2)), (1, 2));
    assert_eq!(
        pool.panic_count(),
        0,
        "the caller got the panic, not the pool"
    );
}

#[test]
fn joins_outside_every_pool_run_on_the_default_pool() {
    common::quiet_worker_panics();
    assert!(
        dreadpool_core::current().is_none(),
        "the test thread is no worker"
    );
    let data: Vec<u64> = (1..=100).collect();
    let (left, right) = data.split_at(50);
    let ((a_sum, a_name), (b_sum, b_name)) = join(
        || (left.iter().sum::<u64>(), thread_name()),
        || (right.iter().sum::<u64>(), thread_name()),
    );
    assert_eq!(a_sum + b_sum, 5050);
    assert!(a_name.starts_with("dreadpool-global-"), "{a_name}");
    assert!(b_name.starts_with("dreadpool-global-"), "{b_name}");
    // Recursion from outside, and from a thread of the test's own.
    assert_eq!(fib(size(20, 10)), fib_serial(size(20, 10)));
    let from_thread = thread::spawn(|| join(thread_name, || fib(12)))
        .join()
        .unwrap();
    assert!(
        from_thread.0.starts_with("dreadpool-global-"),
        "{}",
        from_thread.0
    );
    assert_eq!(from_thread.1, fib_serial(12));
    // A panic from outside reaches the caller, and the default pool goes on.
    let result = catch_unwind(|| join(|| panic!("outside"), || 2));
    assert_eq!(message(&*result.unwrap_err()), "outside");
    assert_eq!(join(|| 1, || 2), (1, 2));
}

// ------------------------------------------------------------- join_context

/// Checks the migrated flags at every level of a small recursion: `a` never
/// migrates; `b` migrated exactly when it runs on another thread than the
/// caller of its join.
fn check_migrated(depth: u32, wrong: &AtomicUsize) {
    if depth == 0 {
        return;
    }
    let caller = thread::current().id();
    join_context(
        |ctx| {
            if ctx.migrated() || thread::current().id() != caller {
                wrong.fetch_add(1, Ordering::Relaxed);
            }
            check_migrated(depth - 1, wrong);
        },
        |ctx| {
            if ctx.migrated() != (thread::current().id() != caller) {
                wrong.fetch_add(1, Ordering::Relaxed);
            }
            check_migrated(depth - 1, wrong);
        },
    );
}

#[test]
fn join_context_never_reports_a_as_migrated() {
    for threads in [1, 2, 8] {
        let pool = pool(threads);
        let wrong = AtomicUsize::new(0);
        pool.install(|| check_migrated(size(12, 6), &wrong));
        assert_eq!(wrong.load(Ordering::Relaxed), 0, "{threads} threads");
        let (a, _) = pool.install(|| join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated()));
        assert!(!a, "{threads} threads");
    }
}

// ------------------------------------------------------------- panics

/// What the two halves of one join did.
#[derive(Default)]
struct Ran {
    a_started: AtomicBool,
    a_finished: AtomicBool,
    b_started: AtomicBool,
    b_finished: AtomicBool,
}

impl Ran {
    fn get(flag: &AtomicBool) -> bool {
        flag.load(Ordering::SeqCst)
    }
}

/// A join whose halves panic as asked. `a` panics (if asked) only after
/// telling `b`, and `b` finishes only after hearing from `a`: so when `b`
/// runs elsewhere, `a`'s panic comes while `b` is still running, and the
/// join must still wait for `b`. `a` never waits for `b` (a join may run
/// `b` after `a` on the same thread).
fn panicking_join(pool: &ThreadPool, a_panics: bool, b_panics: bool) -> (Option<String>, Ran) {
    let ran = Ran::default();
    let (tx, rx) = mpsc::channel::<()>();
    let rx = Mutex::new(rx);
    let result = catch_unwind(AssertUnwindSafe(|| {
        pool.install(|| {
            join(
                || {
                    ran.a_started.store(true, Ordering::SeqCst);
                    let work = fib(15);
                    tx.send(()).unwrap();
                    if a_panics {
                        panic!("a panics");
                    }
                    ran.a_finished.store(true, Ordering::SeqCst);
                    work
                },
                || {
                    ran.b_started.store(true, Ordering::SeqCst);
                    let heard = rx.lock().unwrap().recv_timeout(HANG);
                    assert!(heard.is_ok(), "a never sent");
                    if b_panics {
                        panic!("b panics");
                    }
                    ran.b_finished.store(true, Ordering::SeqCst);
                    fib(10)
                },
            )
        })
    }));
    (result.err().map(|p| message(&*p)), ran)
}

/// The pool still forks, installs and counts no panic of its own.
fn assert_still_works(pool: &ThreadPool, threads: usize) {
    assert_eq!(
        pool.install(|| fib(12)),
        fib_serial(12),
        "{threads} threads"
    );
    assert_eq!(pool.install(|| join(|| 1, || "two")), (1, "two"));
    assert_eq!(
        pool.panic_count(),
        0,
        "join panics go to the caller, not the pool"
    );
}

#[test]
fn a_panic_in_a_is_reraised_after_b_finished() {
    for threads in [1, 2, 8] {
        let pool = pool(threads);
        let (payload, ran) = panicking_join(&pool, true, false);
        assert_eq!(payload.as_deref(), Some("a panics"), "{threads} threads");
        assert!(Ran::get(&ran.a_started) && !Ran::get(&ran.a_finished));
        assert!(
            Ran::get(&ran.b_finished),
            "b did not finish before the re-raise"
        );
        assert_still_works(&pool, threads);
    }
}

#[test]
fn a_panic_in_b_is_reraised_after_a_finished() {
    for threads in [1, 2, 8] {
        let pool = pool(threads);
        let (payload, ran) = panicking_join(&pool, false, true);
        assert_eq!(payload.as_deref(), Some("b panics"), "{threads} threads");
        assert!(Ran::get(&ran.a_finished), "a did not finish");
        assert!(Ran::get(&ran.b_started) && !Ran::get(&ran.b_finished));
        assert_still_works(&pool, threads);
    }
}

#[test]
fn when_both_panic_as_payload_wins() {
    for threads in [1, 2, 8] {
        let pool = pool(threads);
        // a panics first (b waits to hear from a).
        let (payload, ran) = panicking_join(&pool, true, true);
        assert_eq!(payload.as_deref(), Some("a panics"), "{threads} threads");
        assert!(Ran::get(&ran.a_started) && Ran::get(&ran.b_started));
        // b may panic first: it does not wait, a does some work.
        let b_done = AtomicBool::new(false);
        let result = catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| {
                join(
                    || -> u64 {
                        let work = fib(16);
                        panic!("a panics after {work}");
                    },
                    || -> u64 {
                        b_done.store(true, Ordering::SeqCst);
                        panic!("b panics at once");
                    },
                )
            })
        }));
        let payload = message(&*result.unwrap_err());
        assert_eq!(payload, format!("a panics after {}", fib_serial(16)));
        assert!(b_done.load(Ordering::SeqCst));
        assert_still_works(&pool, threads);
    }
}

/// A join tree `depth` levels deep whose leaves count themselves; the
/// leaves in `panic_at` panic with their index.
fn panicking_tree(depth: u32, index: usize, panic_at: &[usize], ran: &AtomicUsize) {
    if depth == 0 {
        ran.fetch_add(1, Ordering::Relaxed);
        if panic_at.contains(&index) {
            panic!("leaf {index}");
        }
        return;
    }
    join(
        || panicking_tree(depth - 1, 2 * index, panic_at, ran),
        || panicking_tree(depth - 1, 2 * index + 1, panic_at, ran),
    );
}

#[test]
fn a_panic_deep_in_a_join_tree_reaches_the_top_after_every_leaf_ran() {
    let depth = size(10, 6);
    let leaves = 1usize << depth;
    for threads in [1, 2, 8] {
        let pool = pool(threads);
        // One panicking leaf; then two, where the leftmost wins at the join
        // above both (it is in `a` there).
        for (panic_at, expected) in [
            (vec![leaves / 3], leaves / 3),
            (vec![leaves - 1, leaves / 4], leaves / 4),
        ] {
            let ran = AtomicUsize::new(0);
            let result = catch_unwind(AssertUnwindSafe(|| {
                pool.install(|| panicking_tree(depth, 0, &panic_at, &ran))
            }));
            assert_eq!(message(&*result.unwrap_err()), format!("leaf {expected}"));
            assert_eq!(ran.load(Ordering::Relaxed), leaves, "{threads} threads");
        }
        assert_still_works(&pool, threads);
    }
}

// ------------------------------------------------------------- deep recursion

/// A chain of `n` nested joins with the recursion in `a`.
fn chain_in_a(n: u32) -> u32 {
    if n == 0 {
        return 0;
    }
    let (depth, ()) = join(|| chain_in_a(n - 1), || ());
    depth + 1
}

/// A chain of `n` nested joins with the recursion in `b`: when `b` is
/// taken by another worker, the recursion moves from thread to thread,
/// and each waiting worker may take the next link on top of its wait.
fn chain_in_b(n: u32) -> u32 {
    if n == 0 {
        return 0;
    }
    let ((), depth) = join(|| (), || chain_in_b(n - 1));
    depth + 1
}

/// Stack allowed per level of a chain. A sequential join used 144-192
/// bytes per level at the test profile's opt-level 1, 176-192 in release:
/// the budget leaves room for a job and a latch on each frame, but not for
/// a wait that piles more than a level's work on a level's frame.
const STACK_PER_LEVEL: usize = 1024;

#[test]
fn chains_of_nested_joins_fit_a_stack_sized_for_their_depth() {
    let depth = size(100_000u32, 10_000);
    for threads in [1, 2] {
        common::quiet_worker_panics();
        let pool = ThreadPoolBuilder::new()
            .with_threads(threads)
            .with_stack_size(depth as usize * STACK_PER_LEVEL + (1 << 20))
            .build();
        assert_eq!(
            pool.install(|| chain_in_a(depth)),
            depth,
            "{threads} threads"
        );
        assert_eq!(
            pool.install(|| chain_in_b(depth)),
            depth,
            "{threads} threads"
        );
    }
}
