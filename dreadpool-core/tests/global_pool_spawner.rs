//! The global pool on threads a user's spawner starts
//! (`ThreadPoolBuilder::build_global_with_spawner`).
//!
//! The global pool is set once per process, so this binary holds one test,
//! which walks through the failures (each of which must leave the pool
//! unset) to the build that succeeds, then checks that the pool runs its
//! work on the spawner's threads and refuses a second build.

use dreadpool_core::{global_pool, join, BuildError, ThreadPoolBuilder};
use std::collections::HashSet;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::thread::{self, JoinHandle, ThreadId};

#[test]
fn the_global_pool_runs_on_the_spawners_threads_once_a_build_succeeds() {
    // 1. A spawner that uses the global pool while building it panics, with
    //    a message, instead of waiting for itself; the pool stays unset.
    let reentrant = panic::catch_unwind(AssertUnwindSafe(|| {
        ThreadPoolBuilder::new()
            .with_threads(2)
            .build_global_with_spawner(|_| {
                global_pool();
                Ok(())
            })
    }));
    let message = reentrant.expect_err("a re-entrant build panics");
    let message = message
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| message.downcast_ref::<String>().map(String::as_str))
        .unwrap_or_default();
    assert!(message.contains("while this thread builds it"), "{message}");

    // 2. A spawner that fails for worker 1: a typed error naming it, the
    //    thread it did start joined by the failed build, the pool unset.
    let mut started: Vec<JoinHandle<()>> = Vec::new();
    let error = ThreadPoolBuilder::new()
        .with_threads(3)
        .build_global_with_spawner(|worker| {
            if worker.index() == 1 {
                return Err(io::Error::other("no thread for you"));
            }
            started.push(thread::spawn(move || worker.run()));
            Ok(())
        })
        .expect_err("the spawner refused worker 1");
    match &error {
        BuildError::Spawn { index, source } => {
            assert_eq!(*index, 1);
            assert_eq!(source.to_string(), "no thread for you");
        }
        other => panic!("expected BuildError::Spawn, got {other:?}"),
    }
    assert_eq!(started.len(), 1, "the build stops at the first refusal");
    for thread in started {
        thread
            .join()
            .expect("worker 0 of the failed build ended cleanly");
    }

    // 3. Now a build succeeds: the spawner is called once per worker, in
    //    index order.
    let mut handed = Vec::new();
    let mut threads: HashSet<ThreadId> = HashSet::new();
    ThreadPoolBuilder::new()
        .with_threads(2)
        .with_thread_names(|i| format!("spawned-{i}"))
        .build_global_with_spawner(|worker| {
            handed.push(worker.index());
            let thread = thread::Builder::new()
                .name(worker.name().to_owned())
                .spawn(move || worker.run())?;
            threads.insert(thread.thread().id());
            Ok(())
        })
        .expect("the global pool was left unset by the failed builds");
    assert_eq!(handed, [0, 1]);

    // 4. The global pool runs its work on those threads.
    let pool = global_pool();
    assert_eq!(pool.threads(), 2);
    let names = pool.broadcast(|_| thread::current().name().map(str::to_owned));
    assert_eq!(
        names,
        [Some("spawned-0".to_owned()), Some("spawned-1".to_owned())]
    );
    let (a, b) = join(|| thread::current().id(), || thread::current().id());
    assert!(threads.contains(&a) && threads.contains(&b), "{a:?} {b:?}");
    assert!(threads.contains(&pool.install(|| thread::current().id())));

    // 5. A second build is refused, and calls no spawner.
    let mut called = false;
    let again = ThreadPoolBuilder::new().build_global_with_spawner(|_| {
        called = true;
        Ok(())
    });
    assert!(matches!(
        again,
        Err(BuildError::GlobalPoolAlreadyInitialized)
    ));
    assert!(!called);
    let again = ThreadPoolBuilder::new().build_global();
    assert!(matches!(
        again,
        Err(BuildError::GlobalPoolAlreadyInitialized)
    ));
}
