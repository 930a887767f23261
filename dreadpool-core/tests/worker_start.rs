//! Pools whose threads a user's spawner starts
//! (`ThreadPoolBuilder::try_build_with_spawner`, `WorkerStart`).

use dreadpool_core::{BuildError, PanicPolicy, ThreadPoolBuilder};
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::thread;

#[test]
fn scoped_workers_run_tasks_and_end_before_the_drop_returns() {
    let started = Arc::new(AtomicUsize::new(0));
    let ended = Arc::new(AtomicUsize::new(0));
    let (s, e) = (Arc::clone(&started), Arc::clone(&ended));
    let mut handed = Vec::new();
    thread::scope(|scope| {
        let pool = ThreadPoolBuilder::new()
            .with_threads(3)
            .with_thread_names(|i| format!("scoped-{i}"))
            .with_stack_size(1 << 20)
            .with_start_handler(move |_| {
                s.fetch_add(1, Ordering::SeqCst);
            })
            .with_exit_handler(move |_| {
                e.fetch_add(1, Ordering::SeqCst);
            })
            .try_build_with_spawner(|worker| {
                handed.push((
                    worker.index(),
                    worker.name().to_owned(),
                    worker.stack_size(),
                ));
                thread::Builder::new()
                    .name(worker.name().to_owned())
                    .spawn_scoped(scope, move || worker.run())?;
                Ok(())
            })
            .unwrap();
        let names = pool.broadcast(|_| thread::current().name().unwrap().to_owned());
        assert_eq!(names, ["scoped-0", "scoped-1", "scoped-2"]);
        assert_eq!(pool.install(|| dreadpool_core::join(|| 1, || 2)), (1, 2));
        drop(pool);
        // Every worker ran its exit handler before the drop returned.
        assert_eq!(ended.load(Ordering::SeqCst), 3);
    });
    assert_eq!(started.load(Ordering::SeqCst), 3);
    let expected: Vec<_> = (0..3)
        .map(|i| (i, format!("scoped-{i}"), Some(1 << 20)))
        .collect();
    assert_eq!(handed, expected);
}

#[test]
fn a_spawner_error_fails_the_build_after_joining_the_started_workers() {
    let ended = Arc::new(AtomicUsize::new(0));
    let e = Arc::clone(&ended);
    let mut threads = Vec::new();
    let error = ThreadPoolBuilder::new()
        .with_threads(3)
        .with_exit_handler(move |_| {
            e.fetch_add(1, Ordering::SeqCst);
        })
        .try_build_with_spawner(|worker| {
            if worker.index() == 1 {
                return Err(io::Error::other("no thread for you"));
            }
            threads.push(thread::spawn(move || worker.run()));
            Ok(())
        })
        .unwrap_err();
    assert!(
        matches!(&error, BuildError::Spawn { index: 1, source } if source.to_string() == "no thread for you"),
        "{error}"
    );
    // Worker 0 had started, and had ended by the time the build returned.
    assert_eq!(threads.len(), 1);
    assert_eq!(ended.load(Ordering::SeqCst), 1);
    for thread in threads {
        thread.join().unwrap();
    }
}

#[test]
fn a_worker_whose_task_panicked_carries_on_without_a_replacement() {
    let pool = ThreadPoolBuilder::new()
        .with_threads(1)
        .with_panic_policy(PanicPolicy::Respawn)
        .with_panic_handler(|_| {})
        .try_build_with_spawner(|worker| {
            thread::spawn(move || worker.run());
            Ok(())
        })
        .unwrap();
    let (sent, received) = mpsc::channel();
    pool.spawn(move || {
        sent.send(thread::current().id()).unwrap();
        panic!("no replacement can be started");
    });
    let panicked_on = received.recv().unwrap();
    pool.join();
    assert_eq!(pool.panic_count(), 1);
    assert_eq!(pool.respawn_failures(), 0);
    assert_eq!(pool.broadcast(|_| thread::current().id()), [panicked_on]);
}

#[test]
fn a_worker_start_dropped_unrun_does_not_hold_up_the_drop() {
    let barrier = Arc::new(Barrier::new(2));
    let b = Arc::clone(&barrier);
    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .try_build_with_spawner(|worker| {
            if worker.index() == 0 {
                thread::spawn(move || worker.run());
            } // worker 1 is dropped: it never runs
            Ok(())
        })
        .unwrap();
    pool.spawn(move || {
        b.wait();
    });
    barrier.wait();
    drop(pool);
}
