//! `spawn` after shutdown panics, and the panic names the caller's line.
//!
//! Alone in its own test binary because it installs a panic hook, which is
//! process-wide.

use dreadpool::ThreadPoolBuilder;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

#[test]
fn spawn_after_shutdown_panics_at_the_spawn_call() {
    let pool = ThreadPoolBuilder::new().with_threads(1).build();
    pool.shutdown();
    let seen: Arc<Mutex<Option<(String, String)>>> = Arc::default();
    let hook_seen = Arc::clone(&seen);
    panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        *hook_seen.lock().unwrap() = Some((message, location));
    }));
    let spawn_line = line!() + 1;
    let result = panic::catch_unwind(AssertUnwindSafe(|| pool.spawn(|| ())));
    let _ = panic::take_hook();
    assert!(result.is_err(), "spawn after shutdown must panic");
    let (message, location) = seen.lock().unwrap().take().expect("the hook saw the panic");
    assert!(message.contains("has shut down"), "{message}");
    assert!(message.contains("try_spawn"), "{message}");
    assert_eq!(location, format!("{}:{spawn_line}", file!()));
}
