//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod process;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long a test waits for something that should happen soon before it
/// declares a hang. Generous: these machines are small and loaded, and a
/// correct run never waits for it.
pub const HANG: Duration = Duration::from_secs(60);

/// A socket path of its own for each call, in the temp dir.
pub fn socket_path(tag: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("dpm-{}-{tag}-{n}.sock", std::process::id()))
}

/// Re-checks `done` until it holds, failing after `HANG`. For states the
/// system reaches on its own (a client noticed as gone), where there is
/// no event to wait on.
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + HANG;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        // Not an ordering: only a pause between checks, so as not to take
        // a core from the threads being waited for.
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Spins for `d` (a task that must take at least that long).
pub fn spin_for(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}
