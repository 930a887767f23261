//! The free functions act on the pool the caller runs in: inside `install`
//! of a pool, that pool; nested `install`s across two pools switch and come
//! back.

use rayon_core::ThreadPoolBuilder;
use std::sync::Mutex;

#[test]
fn current_num_threads_inside_install_of_a_three_thread_pool() {
    let pool = ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    assert_eq!(pool.current_num_threads(), 3);
    assert_eq!(pool.install(rayon_core::current_num_threads), 3);
    // And in what `install` starts: a join's halves, a scope's tasks.
    let (a, b) = pool.install(|| {
        rayon_core::join(
            rayon_core::current_num_threads,
            rayon_core::current_num_threads,
        )
    });
    assert_eq!((a, b), (3, 3));
    let in_task = Mutex::new(0);
    pool.install(|| {
        rayon_core::scope(|s| {
            s.spawn(|_| *in_task.lock().unwrap() = rayon_core::current_num_threads())
        })
    });
    assert_eq!(*in_task.lock().unwrap(), 3);
}

#[test]
fn nested_install_across_two_pools() {
    let outer = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let inner = ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    outer.install(|| {
        assert_eq!(rayon_core::current_num_threads(), 2);
        assert!(outer.current_thread_index().is_some());
        inner.install(|| {
            assert_eq!(rayon_core::current_num_threads(), 3);
            assert!(inner.current_thread_index().is_some());
            assert_eq!(outer.current_thread_index(), None);
            // A scope opened here spawns into the inner pool.
            let ran_on_inner = Mutex::new(Vec::new());
            rayon_core::scope(|s| {
                for _ in 0..8 {
                    s.spawn(|_| {
                        ran_on_inner
                            .lock()
                            .unwrap()
                            .push(inner.current_thread_index().is_some())
                    });
                }
            });
            assert_eq!(ran_on_inner.into_inner().unwrap(), [true; 8]);
            // So does `spawn`, and `in_place_scope`.
            let (sent, received) = std::sync::mpsc::channel();
            rayon_core::spawn({
                let sent = sent.clone();
                move || sent.send(rayon_core::current_num_threads()).unwrap()
            });
            assert_eq!(received.recv().unwrap(), 3);
            rayon_core::in_place_scope(|s| {
                s.spawn(|_| sent.send(rayon_core::current_num_threads()).unwrap())
            });
            assert_eq!(received.recv().unwrap(), 3);
        });
        assert_eq!(
            rayon_core::current_num_threads(),
            2,
            "back in the outer pool"
        );
        assert!(outer.current_thread_index().is_some());
    });
}

#[test]
fn broadcast_runs_on_every_thread_of_the_current_pool() {
    let pool = ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    let seen = pool.install(|| {
        rayon_core::broadcast(|context| {
            (
                context.index(),
                context.num_threads(),
                rayon_core::current_thread_index(),
            )
        })
    });
    assert_eq!(seen, [(0, 3, Some(0)), (1, 3, Some(1)), (2, 3, Some(2))]);
}
