//! `ThreadPool::shutdown_detached`: the pool drains and its threads exit on
//! their own, with no one waiting.

use dreadpool_core::ThreadPoolBuilder;
use std::sync::mpsc;

#[test]
fn a_detached_pool_returns_at_once_then_drains_and_its_threads_exit() {
    let (exited, exits) = mpsc::channel();
    let exited = std::sync::Mutex::new(exited);
    let pool = ThreadPoolBuilder::new()
        .with_threads(1)
        .with_exit_handler(move |index| exited.lock().unwrap().send(index).unwrap())
        .build();
    let handle = pool.handle();
    let (go, wait) = mpsc::channel::<()>();
    let (ran, runs) = mpsc::channel();
    let first = ran.clone();
    pool.spawn(move || {
        wait.recv().unwrap();
        first.send("first").unwrap();
    });
    // Queued behind the blocked task: the drain must run it.
    pool.spawn(move || ran.send("queued").unwrap());
    pool.shutdown_detached(); // would deadlock here if it joined
    assert!(handle.is_shut_down());
    assert!(handle.try_spawn(|| ()).is_err(), "new work is refused");
    go.send(()).unwrap();
    assert_eq!(runs.iter().collect::<Vec<_>>(), ["first", "queued"]);
    // The worker exits on its own, its exit handler run.
    assert_eq!(exits.recv().unwrap(), 0);
}
