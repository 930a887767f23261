//! `ThreadPoolBuilder::use_current_thread`: the calling thread is the
//! pool's index 0, and `join`, `scope` and `spawn` from it use the pool,
//! until it drops the pool.
//!
//! Every test first configures the global pool as one thread named
//! `global-0` (whichever test comes first wins; the others' calls fail
//! harmlessly), so that work that lands on the global pool instead of the
//! pool is told apart by its thread's name and its `current_num_threads`.

use rayon_core::ThreadPoolBuilder;
use std::error::Error;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

const THREADS: usize = 3;
const ALREADY_IN_POOL: &str = "The current thread is already part of another thread pool.";

fn global_pool_of_one() {
    let _ = ThreadPoolBuilder::new()
        .num_threads(1)
        .thread_name(|i| format!("global-{i}"))
        .build_global();
}

/// Where a task ran: its thread's name and its pool's size.
fn here() -> (Option<String>, usize) {
    (
        thread::current().name().map(str::to_owned),
        rayon_core::current_num_threads(),
    )
}

/// Whether `here` is the pool under test: the calling thread (`caller`) or
/// one of the pool's named threads, in a pool of `THREADS`.
fn in_the_pool((name, threads): &(Option<String>, usize), caller: &Option<String>) -> bool {
    let name_ok = name == caller || name.as_deref().is_some_and(|n| n.starts_with("uct-"));
    name_ok && *threads == THREADS
}

fn pool_on_this_thread() -> rayon_core::ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .thread_name(|i| format!("uct-{i}"))
        .use_current_thread()
        .build()
        .expect("this thread is in no pool yet")
}

#[test]
fn the_calling_thread_is_index_0_and_its_join_scope_and_spawn_use_the_pool() {
    global_pool_of_one();
    let caller = thread::current().name().map(str::to_owned);
    let pool = pool_on_this_thread();
    assert_eq!(rayon_core::current_thread_index(), Some(0));
    assert_eq!(pool.current_thread_index(), Some(0));
    assert_eq!(rayon_core::current_num_threads(), THREADS);
    // It keeps its own name: the pool does not own it.
    assert_eq!(thread::current().name().map(str::to_owned), caller);

    let (a, b) = rayon_core::join(here, here);
    assert!(
        in_the_pool(&a, &caller) && in_the_pool(&b, &caller),
        "{a:?} {b:?}"
    );

    let seen = Mutex::new(Vec::new());
    rayon_core::scope(|s| {
        for _ in 0..16 {
            s.spawn(|_| seen.lock().unwrap().push(here()));
        }
    });
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 16);
    for place in &seen {
        assert!(
            in_the_pool(place, &caller),
            "a scope's task ran at {place:?}"
        );
    }

    let (sent, received) = mpsc::channel();
    rayon_core::spawn(move || sent.send(here()).unwrap());
    // The task waits in index 0's queue for another thread to steal it, or
    // for this one to yield.
    let place = loop {
        if let Ok(place) = received.try_recv() {
            break place;
        }
        if rayon_core::yield_now() == Some(rayon_core::Yield::Idle) {
            thread::yield_now();
        }
    };
    assert!(in_the_pool(&place, &caller), "a spawn ran at {place:?}");
}

#[test]
fn a_second_pool_on_the_same_thread_is_refused_with_rayons_message() {
    global_pool_of_one();
    let pool = pool_on_this_thread();
    let error = ThreadPoolBuilder::new()
        .num_threads(2)
        .use_current_thread()
        .build()
        .expect_err("this thread is index 0 of `pool`");
    assert_eq!(error.to_string(), ALREADY_IN_POOL);
    assert!(error.source().is_none());
    // As on a pool's own threads.
    let from_a_worker = pool.install(|| {
        ThreadPoolBuilder::new()
            .num_threads(2)
            .use_current_thread()
            .build()
            .map(drop)
            .map_err(|error| error.to_string())
    });
    assert_eq!(from_a_worker, Err(ALREADY_IN_POOL.to_owned()));
    // The refusal left the thread as it was: still the pool's index 0.
    assert_eq!(pool.current_thread_index(), Some(0));
}

#[test]
fn dropping_the_pool_makes_the_thread_an_outside_thread_again() {
    global_pool_of_one();
    let caller = thread::current().name().map(str::to_owned);
    let threads: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
    let spawned = Arc::clone(&threads);
    let pool = ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .thread_name(|i| format!("uct-{i}"))
        .use_current_thread()
        .spawn_handler(move |worker| {
            let name = worker.name().map(str::to_owned).unwrap_or_default();
            let handle = thread::Builder::new().name(name).spawn(|| worker.run())?;
            spawned.lock().unwrap().push(handle);
            Ok(())
        })
        .build()
        .unwrap();
    assert_eq!(
        threads.lock().unwrap().len(),
        THREADS - 1,
        "no thread for index 0"
    );

    // Work spawned from here is run by the other threads while this one
    // blocks, as rayon's own test has it.
    let (sent, received) = mpsc::channel();
    for _ in 0..4 {
        let sent = sent.clone();
        pool.spawn(move || sent.send(rayon_core::current_thread_index()).unwrap());
    }
    for _ in 0..4 {
        let index = received.recv().unwrap();
        assert!(matches!(index, Some(1..THREADS)), "ran at {index:?}");
    }

    drop(pool);
    assert_eq!(rayon_core::current_thread_index(), None);
    // Its work goes to the global pool now.
    assert_eq!(rayon_core::current_num_threads(), 1);
    let seen = Mutex::new(Vec::new());
    rayon_core::scope(|s| s.spawn(|_| seen.lock().unwrap().push(here())));
    assert_eq!(
        seen.into_inner().unwrap(),
        [(Some("global-0".to_owned()), 1)]
    );
    // The pool's threads end.
    for thread in std::mem::take(&mut *threads.lock().unwrap()) {
        thread.join().unwrap();
    }
    // And it may take part in another pool.
    let again = pool_on_this_thread();
    assert_eq!(rayon_core::current_thread_index(), Some(0));
    let (a, b) = again.join(here, here);
    assert!(
        in_the_pool(&a, &caller) && in_the_pool(&b, &caller),
        "{a:?} {b:?}"
    );
}
