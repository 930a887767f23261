//! Panics propagate as rayon documents: from `join` after both halves ran
//! (the first half's payload if both panicked), from a scope after all its
//! tasks ran, from `install`; a spawned task's goes to the panic handler.

use rayon_core::ThreadPoolBuilder;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

fn message(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<&str>() {
        Ok(text) => text.to_string(),
        Err(payload) => *payload.downcast::<String>().unwrap(),
    }
}

#[test]
fn join_reraises_after_both_halves_ran() {
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let other_ran = AtomicBool::new(false);
    let result = catch_unwind(AssertUnwindSafe(|| {
        pool.install(|| {
            rayon_core::join(
                || panic!("first"),
                || other_ran.store(true, Ordering::Relaxed),
            )
        })
    }));
    assert_eq!(message(result.unwrap_err()), "first");
    assert!(other_ran.load(Ordering::Relaxed));

    let other_ran = AtomicBool::new(false);
    let result = catch_unwind(AssertUnwindSafe(|| {
        rayon_core::join(
            || other_ran.store(true, Ordering::Relaxed),
            || panic!("second"),
        )
    }));
    assert_eq!(message(result.unwrap_err()), "second");
    assert!(other_ran.load(Ordering::Relaxed));

    let result = catch_unwind(|| pool.join(|| panic!("a"), || panic!("b")));
    assert_eq!(
        message(result.unwrap_err()),
        "a",
        "the first half's payload wins"
    );
}

#[test]
fn scope_reraises_after_every_task_ran() {
    let ran = AtomicUsize::new(0);
    let result = catch_unwind(AssertUnwindSafe(|| {
        rayon_core::scope(|s| {
            s.spawn(|_| panic!("task"));
            for _ in 0..10 {
                s.spawn(|s| {
                    s.spawn(|_| {
                        ran.fetch_add(1, Ordering::Relaxed);
                    });
                });
            }
        })
    }));
    assert_eq!(message(result.unwrap_err()), "task");
    assert_eq!(ran.load(Ordering::Relaxed), 10);

    let ran = AtomicBool::new(false);
    let result = catch_unwind(AssertUnwindSafe(|| {
        rayon_core::in_place_scope(|s| {
            s.spawn(|_| ran.store(true, Ordering::Relaxed));
            panic!("body");
        })
    }));
    assert_eq!(message(result.unwrap_err()), "body");
    assert!(
        ran.load(Ordering::Relaxed),
        "the body's panic waits for the tasks too"
    );
}

#[test]
fn install_reraises() {
    let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let result = catch_unwind(|| pool.install(|| panic!("installed")));
    assert_eq!(message(result.unwrap_err()), "installed");
    assert_eq!(pool.install(|| 5), 5, "the pool carries on");
}

#[test]
fn a_spawned_tasks_panic_goes_to_the_panic_handler() {
    let (sent, received) = mpsc::channel();
    let sent = std::sync::Mutex::new(sent);
    let pool = ThreadPoolBuilder::new()
        .num_threads(1)
        .panic_handler(move |payload| sent.lock().unwrap().send(message(payload)).unwrap())
        .build()
        .unwrap();
    pool.spawn(|| panic!("spawned"));
    assert_eq!(received.recv().unwrap(), "spawned");
    assert_eq!(pool.install(|| 7), 7, "the worker carries on");
}
