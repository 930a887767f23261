//! `build_global` with a `spawn_handler`: the handler starts the global
//! pool's threads. One test, as the global pool is set once per process.

use rayon_core::ThreadPoolBuilder;
use std::error::Error;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

#[test]
fn the_global_pool_runs_on_the_handlers_threads() {
    // A handler's error is the build's, and leaves the global pool unset.
    let error = ThreadPoolBuilder::new()
        .num_threads(2)
        .spawn_handler(|_| Err(io::Error::other("not today")))
        .build_global()
        .unwrap_err();
    assert_eq!(error.to_string(), "not today");
    assert!(error.source().is_some());

    static SPAWNED: AtomicUsize = AtomicUsize::new(0);
    ThreadPoolBuilder::new()
        .num_threads(2)
        .thread_name(|i| format!("handled-{i}"))
        .spawn_handler(|worker| {
            SPAWNED.fetch_add(1, Ordering::SeqCst);
            let name = worker.name().map(str::to_owned).unwrap_or_default();
            thread::Builder::new().name(name).spawn(|| worker.run())?;
            Ok(())
        })
        .build_global()
        .expect("the failed build left the global pool unset");
    assert_eq!(SPAWNED.load(Ordering::SeqCst), 2, "once per thread");
    assert_eq!(rayon_core::current_num_threads(), 2);
    let names = rayon_core::broadcast(|_| thread::current().name().map(str::to_owned));
    assert_eq!(
        names,
        [Some("handled-0".to_owned()), Some("handled-1".to_owned())]
    );
    let (a, _) = rayon_core::join(|| thread::current().name().map(str::to_owned), || ());
    assert!(a.is_some_and(|name| name.starts_with("handled-")));

    let again = ThreadPoolBuilder::new()
        .spawn_handler(|_| unreachable!("the global pool exists"))
        .build_global()
        .unwrap_err();
    assert_eq!(
        again.to_string(),
        "The global thread pool has already been initialized."
    );
    assert_eq!(SPAWNED.load(Ordering::SeqCst), 2);
}
