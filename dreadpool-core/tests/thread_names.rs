//! Per-index thread names (`ThreadPoolBuilder::with_thread_names`).

use dreadpool_core::{BuildError, PanicPolicy, ThreadPoolBuilder};
use std::sync::mpsc;

fn thread_name() -> String {
    std::thread::current().name().unwrap().to_owned()
}

#[test]
fn every_worker_is_named_by_its_index() {
    let pool = ThreadPoolBuilder::new()
        .with_threads(3)
        .with_thread_name("named")
        .with_thread_names(|i| format!("worker #{i}"))
        .build();
    assert_eq!(
        pool.broadcast(|_| thread_name()),
        ["worker #0", "worker #1", "worker #2"]
    );
    // The pool keeps its prefix as its own name.
    assert_eq!(pool.name(), "named");
}

#[test]
fn a_replacement_thread_takes_its_seats_name() {
    let pool = ThreadPoolBuilder::new()
        .with_threads(1)
        .with_panic_policy(PanicPolicy::Respawn)
        .with_panic_handler(|_| {})
        .with_thread_names(|i| format!("seat {i}"))
        .build();
    let (sent, received) = mpsc::channel();
    pool.spawn(move || {
        sent.send(thread_name()).unwrap();
        panic!("this worker is replaced");
    });
    assert_eq!(received.recv().unwrap(), "seat 0");
    // The broadcast runs on the replacement, once it has taken the seat.
    assert_eq!(pool.broadcast(|_| thread_name()), ["seat 0"]);
    assert_eq!(pool.panic_count(), 1);
}

#[test]
fn a_name_with_a_nul_byte_fails_the_build() {
    let error = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_thread_names(|i| {
            if i == 1 {
                "bad\0".into()
            } else {
                "good".into()
            }
        })
        .try_build()
        .unwrap_err();
    assert!(
        matches!(error, BuildError::Spawn { index: 1, .. }),
        "{error}"
    );
}

#[test]
fn a_naming_function_that_panics_fails_the_build() {
    let error = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_thread_names(|i| {
            if i == 0 {
                panic!("no name")
            } else {
                "fine".into()
            }
        })
        .try_build()
        .unwrap_err();
    assert!(
        matches!(error, BuildError::Spawn { index: 0, .. }),
        "{error}"
    );
}
