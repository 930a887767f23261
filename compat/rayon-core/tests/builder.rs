//! The builder's options reach the threads, and a spawn handler's error is
//! the build's (`use_current_thread` has its own file).

use rayon_core::ThreadPoolBuilder;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[test]
fn thread_names_and_handlers_reach_every_thread() {
    let (started, exited) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (s, e) = (Arc::clone(&started), Arc::clone(&exited));
    let exit_seen = rayon_core::ThreadPoolBuilder::new()
        .num_threads(2)
        .thread_name(|i| format!("compat-test-{i}"))
        .start_handler(move |_| {
            s.fetch_add(1, Ordering::Relaxed);
        })
        .exit_handler(move |_| {
            e.fetch_add(1, Ordering::Relaxed);
        })
        .build_scoped(
            |thread| thread.run(),
            |pool| {
                let names = pool.broadcast(|_| std::thread::current().name().map(str::to_owned));
                assert_eq!(
                    names,
                    [Some("compat-test-0".into()), Some("compat-test-1".into())]
                );
                assert_eq!(started.load(Ordering::Relaxed), 2);
            },
        );
    exit_seen.unwrap();
    // build_scoped returns after the pool's threads ended.
    assert_eq!(exited.load(Ordering::Relaxed), 2);
}

#[test]
fn a_spawn_handlers_error_fails_the_build() {
    let error = ThreadPoolBuilder::new()
        .num_threads(2)
        .spawn_handler(|_thread| Err(std::io::Error::other("no threads today")))
        .build()
        .unwrap_err();
    assert_eq!(error.to_string(), "no threads today");
}
