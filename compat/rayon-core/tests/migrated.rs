//! `FnContext::migrated` is true exactly when the closure ran on another
//! thread than the caller of `join_context`.

use rayon_core::{join_context, ThreadPoolBuilder};
use std::sync::mpsc;
use std::thread::{self, ThreadId};

/// What one half of a join saw: its thread and its `migrated()`.
fn seen(context: rayon_core::FnContext) -> (ThreadId, bool) {
    (thread::current().id(), context.migrated())
}

#[test]
fn a_stolen_second_half_migrated_and_the_first_did_not() {
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let (caller, a, b) = pool.install(|| {
        let caller = thread::current().id();
        let (sent, received) = mpsc::channel();
        // The first half waits for the second, which therefore can only
        // run on the other worker (the caller's thread is busy in `a`).
        let (a, b) = join_context(
            move |context| {
                received.recv().unwrap();
                seen(context)
            },
            move |context| {
                let result = seen(context);
                sent.send(()).unwrap();
                result
            },
        );
        (caller, a, b)
    });
    assert_eq!(
        a,
        (caller, false),
        "the first half runs on the caller's thread"
    );
    assert_ne!(b.0, caller, "the second half was stolen");
    assert!(b.1, "a stolen half reports that it migrated");
}

#[test]
fn halves_on_the_callers_thread_did_not_migrate() {
    let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let (caller, a, b) = pool.install(|| {
        let (a, b) = join_context(seen, seen);
        (thread::current().id(), a, b)
    });
    assert_eq!(a, (caller, false));
    assert_eq!(b, (caller, false));
}

#[test]
fn a_join_from_outside_every_pool_migrated_both_halves() {
    let caller = thread::current().id();
    let (a, b) = join_context(seen, seen);
    for (thread, migrated) in [a, b] {
        assert_ne!(
            thread, caller,
            "outside a pool, both halves run on the global pool"
        );
        assert!(migrated);
    }
}

#[test]
fn migrated_matches_the_thread_on_every_join_of_a_recursion() {
    fn walk(depth: u32, out: &mpsc::Sender<(bool, bool)>) {
        if depth == 0 {
            return;
        }
        let caller = thread::current().id();
        let check = |context: rayon_core::FnContext| {
            let (thread, migrated) = seen(context);
            out.send((thread != caller, migrated)).unwrap();
            walk(depth - 1, out);
        };
        join_context(check, check);
    }
    let pool = ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    let (sent, received) = mpsc::channel();
    pool.install(|| walk(10, &sent));
    drop(sent);
    let mut halves = 0;
    for (moved, migrated) in received {
        assert_eq!(
            moved, migrated,
            "migrated() must say whether the thread changed"
        );
        halves += 1;
    }
    assert_eq!(halves, 2 * ((1 << 10) - 1));
}
