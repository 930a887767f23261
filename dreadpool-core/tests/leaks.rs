//! Every thread a pool started is gone when it is shut down, dropped, or
//! fails to build.
//!
//! Threads are counted by name prefix, one prefix per test, so tests running
//! in parallel do not see each other's threads.

mod common;

use common::{live_threads, settled_threads};
use dreadpool_core::{BuildError, ThreadPoolBuilder};
use std::sync::Arc;
use std::thread;

#[test]
fn shutdown_is_idempotent_and_joins_threads() {
    let pool = ThreadPoolBuilder::new()
        .with_threads(4)
        .with_thread_name("idem")
        .build();
    // Once every worker ran a task, every worker has named itself.
    let gate = Arc::new(common::Gate::new());
    for _ in 0..4 {
        let gate = Arc::clone(&gate);
        pool.spawn(move || assert!(gate.arrive_and_wait(4)));
    }
    pool.join();
    assert_eq!(live_threads("idem-"), 4);
    pool.shutdown();
    assert_eq!(settled_threads("idem-", 0), 0);
    pool.shutdown();
    drop(pool);
    assert_eq!(settled_threads("idem-", 0), 0);
}

#[test]
fn concurrent_shutdowns_all_wait_for_the_threads() {
    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_thread_name("conc")
        .build();
    let pool = Arc::new(pool);
    let callers: Vec<_> = (0..3)
        .map(|_| {
            let pool = Arc::clone(&pool);
            // Every caller returns only after the workers are gone.
            thread::spawn(move || {
                pool.shutdown();
                settled_threads("conc-", 0)
            })
        })
        .collect();
    for caller in callers {
        assert_eq!(caller.join().unwrap(), 0);
    }
}

#[test]
fn a_failed_build_leaks_no_thread() {
    for builder in [
        ThreadPoolBuilder::new().with_stack_size(0),
        ThreadPoolBuilder::new().with_backlog(0),
        ThreadPoolBuilder::new().with_threads(dreadpool_core::MAX_THREADS + 1),
    ] {
        assert!(builder.with_thread_name("fail").try_build().is_err());
    }
    assert_eq!(settled_threads("fail-", 0), 0);
}

#[test]
fn a_build_the_os_refuses_stops_the_threads_it_started() {
    // 1 TiB stacks: the first threads may start (memory is overcommitted)
    // but the address space (128 TiB) runs out long before 1,024 of them. Whatever started is stopped.
    let result = ThreadPoolBuilder::new()
        .with_threads(dreadpool_core::MAX_THREADS)
        .with_stack_size(dreadpool_core::MAX_STACK_SIZE)
        .with_thread_name("huge")
        .try_build();
    match result {
        Err(BuildError::Spawn { index, source }) => {
            assert!(index < dreadpool_core::MAX_THREADS);
            assert!(!source.to_string().is_empty());
        }
        other => panic!("expected the OS to refuse, got {other:?}"),
    }
    assert_eq!(settled_threads("huge-", 0), 0);
}
