//! Per-thread start and exit handlers: they run on every worker thread,
//! replacements included, pair up, and survive their own panics.

use dreadpool_core::{BuildError, PanicPolicy, ThreadPool, ThreadPoolBuilder};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// What the handlers saw: per worker index, how many threads started and
/// ended in that seat, and the thread names they ran on.
#[derive(Default)]
struct Log {
    starts: Mutex<BTreeMap<usize, usize>>,
    exits: Mutex<BTreeMap<usize, usize>>,
    wrong_thread: AtomicUsize,
}

impl Log {
    fn total(map: &Mutex<BTreeMap<usize, usize>>) -> usize {
        map.lock().unwrap().values().sum()
    }
    fn starts(&self) -> usize {
        Self::total(&self.starts)
    }
    fn exits(&self) -> usize {
        Self::total(&self.exits)
    }
}

thread_local! {
    /// Set by the start handler: tasks check that their thread was set up.
    static SET_UP: Cell<bool> = const { Cell::new(false) };
}

/// A builder with start and exit handlers that record into `log` and check
/// that they run on the worker's own thread.
fn logged(name: &str, threads: usize, log: &Arc<Log>) -> ThreadPoolBuilder {
    let (on_start, on_exit) = (Arc::clone(log), Arc::clone(log));
    let (start_name, exit_name) = (name.to_owned(), name.to_owned());
    ThreadPoolBuilder::new()
        .with_threads(threads)
        .with_thread_name(name)
        .with_start_handler(move |index| {
            if std::thread::current().name() != Some(&format!("{start_name}-{index}")) {
                on_start.wrong_thread.fetch_add(1, Ordering::Relaxed);
            }
            SET_UP.with(|s| s.set(true));
            *on_start.starts.lock().unwrap().entry(index).or_default() += 1;
        })
        .with_exit_handler(move |index| {
            if std::thread::current().name() != Some(&format!("{exit_name}-{index}")) {
                on_exit.wrong_thread.fetch_add(1, Ordering::Relaxed);
            }
            *on_exit.exits.lock().unwrap().entry(index).or_default() += 1;
        })
}

/// Every worker runs a task on a thread its start handler set up.
fn every_worker_is_set_up(pool: &ThreadPool) -> bool {
    pool.broadcast(|_| SET_UP.with(Cell::get))
        .into_iter()
        .all(|set_up| set_up)
}

#[test]
fn each_thread_starts_and_exits_once_with_1_2_and_8_threads() {
    for threads in [1, 2, 8] {
        let log = Arc::new(Log::default());
        let pool = logged("hooks", threads, &log).build();
        assert!(every_worker_is_set_up(&pool), "{threads} threads");
        let ran = Arc::new(AtomicUsize::new(0));
        for _ in 0..1000 {
            let ran = Arc::clone(&ran);
            pool.spawn(move || {
                assert!(
                    SET_UP.with(Cell::get),
                    "a task ran before its thread's start handler"
                );
                ran.fetch_add(1, Ordering::Relaxed);
            });
        }
        pool.join();
        assert_eq!(ran.load(Ordering::Relaxed), 1000);
        assert_eq!(pool.panic_count(), 0, "a task found its thread not set up");
        drop(pool);
        let expected: BTreeMap<usize, usize> = (0..threads).map(|i| (i, 1)).collect();
        assert_eq!(*log.starts.lock().unwrap(), expected, "{threads} threads");
        assert_eq!(*log.exits.lock().unwrap(), expected, "{threads} threads");
        assert_eq!(log.wrong_thread.load(Ordering::Relaxed), 0);
    }
}

#[test]
fn replacement_threads_run_the_handlers_too() {
    let log = Arc::new(Log::default());
    let pool = logged("respawned", 2, &log)
        .with_panic_policy(PanicPolicy::Respawn)
        .build();
    const PANICS: usize = 5;
    for _ in 0..PANICS {
        pool.spawn(|| panic!("replace this thread"));
    }
    pool.join();
    assert_eq!(pool.panic_count(), PANICS);
    assert_eq!(pool.respawn_failures(), 0);
    // The replacements' thread-local state was set up by the start handler.
    assert!(every_worker_is_set_up(&pool));
    drop(pool);
    assert_eq!(
        log.starts(),
        2 + PANICS,
        "one start per thread that ever ran"
    );
    assert_eq!(log.exits(), 2 + PANICS, "one exit per thread that ever ran");
    assert_eq!(*log.starts.lock().unwrap(), *log.exits.lock().unwrap());
    assert_eq!(log.wrong_thread.load(Ordering::Relaxed), 0);
}

#[test]
fn a_replacement_the_os_refuses_does_not_start_or_exit_twice() {
    let log = Arc::new(Log::default());
    let pool = logged("refused", 1, &log)
        .with_panic_policy(PanicPolicy::Respawn)
        .__inject_respawn_failures(1)
        .build();
    pool.spawn(|| panic!("the replacement will be refused"));
    pool.join();
    assert_eq!(pool.respawn_failures(), 1);
    drop(pool);
    // The old thread carried on as the worker: it started and ended once.
    assert_eq!((log.starts(), log.exits()), (1, 1));
}

#[test]
fn a_panicking_start_handler_is_reported_and_costs_no_worker() {
    let panics = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&panics);
    let exits = Arc::new(AtomicUsize::new(0));
    let e = Arc::clone(&exits);
    for policy in [PanicPolicy::Respawn, PanicPolicy::Continue] {
        panics.lock().unwrap().clear();
        exits.store(0, Ordering::Relaxed);
        let seen = Arc::clone(&seen);
        let e = Arc::clone(&e);
        let pool = ThreadPoolBuilder::new()
            .with_threads(2)
            .with_panic_policy(policy)
            .with_start_handler(|index| {
                if index == 1 {
                    panic!("start handler of worker {index}");
                }
            })
            .with_exit_handler(move |_| {
                e.fetch_add(1, Ordering::Relaxed);
            })
            .with_panic_handler(move |payload| {
                let message = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .unwrap_or_default();
                seen.lock().unwrap().push(message);
            })
            .build();
        // Both workers take part: a missing worker would hang the broadcast.
        assert_eq!(pool.broadcast(|index| index), [0, 1], "{policy:?}");
        assert_eq!(pool.panic_count(), 1, "{policy:?}");
        assert_eq!(
            *panics.lock().unwrap(),
            ["start handler of worker 1"],
            "{policy:?}"
        );
        drop(pool);
        assert_eq!(exits.load(Ordering::Relaxed), 2, "{policy:?}");
    }
}

#[test]
fn a_panicking_exit_handler_is_reported_and_drop_returns() {
    let reported = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&reported);
    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_exit_handler(|index| panic!("exit handler of worker {index}"))
        .with_panic_handler(move |_| {
            r.fetch_add(1, Ordering::Relaxed);
        })
        .build();
    pool.spawn(|| {});
    pool.join();
    drop(pool); // must return: the panics are contained
    assert_eq!(reported.load(Ordering::Relaxed), 2);
}

#[test]
fn a_build_that_fails_part_way_exits_the_threads_it_started() {
    let log = Arc::new(Log::default());
    // 1 TiB stacks: the first threads may start (memory is overcommitted)
    // but the address space runs out long before 1,024 of them (as in
    // tests/leaks.rs).
    let result = logged("partway", dreadpool_core::MAX_THREADS, &log)
        .with_stack_size(dreadpool_core::MAX_STACK_SIZE)
        .try_build();
    let started = match result {
        Err(BuildError::Spawn { index, .. }) => index,
        other => panic!("expected the OS to refuse a thread, got {other:?}"),
    };
    // try_build joined the threads it had started before returning.
    assert_eq!(log.starts(), started);
    assert_eq!(log.exits(), started);
    assert_eq!(*log.starts.lock().unwrap(), *log.exits.lock().unwrap());
}
