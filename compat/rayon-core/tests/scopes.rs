//! rayon's scopes on dreadpool's: tasks are handed the scope and may spawn
//! more, borrow from the caller, and a scope's `spawn_broadcast` runs once
//! on every thread of its pool before the scope ends.

use rayon_core::ThreadPoolBuilder;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Spawns a binary tree of tasks `depth` deep on `s`, each counting itself.
fn tree<'scope>(s: &rayon_core::Scope<'scope>, depth: u32, count: &'scope AtomicUsize) {
    count.fetch_add(1, Ordering::Relaxed);
    if depth > 0 {
        s.spawn(move |s| tree(s, depth - 1, count));
        s.spawn(move |s| tree(s, depth - 1, count));
    }
}

#[test]
fn tasks_spawn_more_tasks_on_the_same_scope_and_the_scope_waits_for_all() {
    let count = AtomicUsize::new(0);
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    pool.scope(|s| tree(s, 10, &count));
    assert_eq!(count.load(Ordering::Relaxed), (1 << 11) - 1);
    let count = AtomicUsize::new(0);
    rayon_core::in_place_scope(|s| tree(s, 8, &count));
    assert_eq!(count.load(Ordering::Relaxed), (1 << 9) - 1);
}

#[test]
fn scope_spawn_broadcast_runs_once_per_thread_even_on_one_thread() {
    for threads in [1, 3] {
        let pool = ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let seen = Mutex::new(Vec::new());
        pool.scope(|s| {
            s.spawn_broadcast(|_, context| {
                seen.lock()
                    .unwrap()
                    .push((context.index(), context.num_threads()))
            });
        });
        let mut seen = seen.into_inner().unwrap();
        seen.sort_unstable();
        assert_eq!(seen, (0..threads).map(|i| (i, threads)).collect::<Vec<_>>());

        let seen = Mutex::new(Vec::new());
        pool.in_place_scope_fifo(|s| {
            s.spawn_broadcast(|s, context| {
                let (seen, index) = (&seen, context.index());
                s.spawn_fifo(move |_| seen.lock().unwrap().push(index));
            });
        });
        assert_eq!(seen.into_inner().unwrap().len(), threads);
    }
}

#[test]
fn a_fifo_scope_on_one_thread_runs_its_tasks_in_spawn_order() {
    let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let order = Mutex::new(Vec::new());
    pool.scope_fifo(|s| {
        for i in 0..10 {
            let order = &order;
            s.spawn_fifo(move |_| order.lock().unwrap().push(i));
        }
    });
    assert_eq!(order.into_inner().unwrap(), (0..10).collect::<Vec<_>>());
}

#[test]
fn pool_spawn_broadcast_and_yield() {
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let (sent, received) = std::sync::mpsc::channel();
    let sent = Mutex::new(sent);
    pool.spawn_broadcast(move |context| sent.lock().unwrap().send(context.index()).unwrap());
    let mut seen: Vec<usize> = received.iter().take(2).collect();
    seen.sort_unstable();
    assert_eq!(seen, [0, 1]);
    assert_eq!(pool.yield_now(), None, "not one of the pool's threads");
    assert_eq!(pool.current_thread_has_pending_tasks(), None);
    // One thread, so that nobody steals the task before it is looked at.
    let alone = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let (pending, yielded) = alone.install(|| {
        rayon_core::spawn(|| ());
        (
            alone.current_thread_has_pending_tasks(),
            alone.yield_local(),
        )
    });
    assert_eq!(pending, Some(true));
    assert_eq!(yielded, Some(rayon_core::Yield::Executed));
}
