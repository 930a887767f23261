//! `yield_now`, `yield_local` and `current_thread_has_pending_tasks`.

use dreadpool_core::{
    current, current_thread_has_pending_tasks, yield_local, yield_now, ThreadPoolBuilder, Yield,
};
use std::sync::mpsc;

#[test]
fn outside_a_pool_there_is_nothing_to_yield_to() {
    assert_eq!(yield_now(), None);
    assert_eq!(yield_local(), None);
    assert_eq!(current_thread_has_pending_tasks(), None);
}

#[test]
fn yield_local_runs_the_newest_task_of_the_workers_own_queue() {
    let pool = ThreadPoolBuilder::new().with_threads(1).build();
    let order = pool.install(|| {
        let (sent, received) = mpsc::channel();
        let handle = current().unwrap();
        for name in ["older", "newer"] {
            let sent = sent.clone();
            handle.spawn(move || sent.send(name).unwrap());
        }
        assert_eq!(current_thread_has_pending_tasks(), Some(true));
        let first = (yield_local(), received.try_recv().ok());
        let second = (yield_local(), received.try_recv().ok());
        assert_eq!(current_thread_has_pending_tasks(), Some(false));
        (first, second, yield_local())
    });
    assert_eq!(
        order,
        (
            (Some(Yield::Executed), Some("newer")),
            (Some(Yield::Executed), Some("older")),
            Some(Yield::Idle)
        )
    );
}

#[test]
fn yield_now_takes_a_task_from_the_global_queue() {
    let pool = ThreadPoolBuilder::new().with_threads(1).build();
    let handle = pool.handle();
    let (ran, ran_rx) = mpsc::channel();
    let result = pool.install(move || {
        // Spawned from a thread outside the pool while its only worker is
        // busy here: the task waits in the global queue.
        std::thread::scope(|s| {
            s.spawn(|| handle.spawn(move || ran.send(()).unwrap()));
        });
        assert_eq!(yield_local(), Some(Yield::Idle), "not in the local queue");
        let yielded = yield_now();
        (yielded, ran_rx.try_recv().is_ok(), yield_now())
    });
    assert_eq!(result, (Some(Yield::Executed), true, Some(Yield::Idle)));
}
