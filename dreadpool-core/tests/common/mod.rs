//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// How long a test waits for something that should happen at once before it
/// declares a hang. Generous: these machines are small and loaded, and a
/// correct run never waits for it.
pub const HANG: Duration = Duration::from_secs(60);

/// Threads of this process whose name starts with `prefix`, from /proc.
/// Counting by name keeps the test harness's own threads (which come and go
/// as other tests run) out of the count. Linux keeps 15 bytes of a name.
pub fn live_threads(prefix: &str) -> usize {
    assert!(
        prefix.len() <= 12,
        "keep prefixes short: Linux truncates names"
    );
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task is readable on Linux")
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with(prefix))
        .count()
}

/// A countdown that threads can wait on with a timeout (std's `Barrier` has
/// none, so a missing worker would hang a test instead of failing it).
pub struct Gate {
    count: Mutex<usize>,
    changed: Condvar,
}

impl Gate {
    pub fn new() -> Self {
        Gate {
            count: Mutex::new(0),
            changed: Condvar::new(),
        }
    }

    /// Arrives, then waits until `n` parties arrived. Returns false on timeout.
    pub fn arrive_and_wait(&self, n: usize) -> bool {
        let mut count = self.count.lock().unwrap();
        *count += 1;
        self.changed.notify_all();
        let (count, timeout) = self
            .changed
            .wait_timeout_while(count, HANG, |c| *c < n)
            .unwrap();
        drop(count);
        !timeout.timed_out()
    }

    /// Waits until `n` parties arrived, without arriving. False on timeout.
    pub fn wait_for(&self, n: usize) -> bool {
        let count = self.count.lock().unwrap();
        let (_count, timeout) = self
            .changed
            .wait_timeout_while(count, HANG, |c| *c < n)
            .unwrap();
        !timeout.timed_out()
    }

    pub fn arrive(&self) {
        *self.count.lock().unwrap() += 1;
        self.changed.notify_all();
    }
}

/// [`live_threads`], once it has settled at `expected` (or after a while).
///
/// `JoinHandle::join` returns when the thread has exited, but the kernel
/// removes its `/proc` entry a moment later, outside anything a test can
/// synchronise with; so a count that is still too high is read again for a
/// bounded time before the test believes it.
pub fn settled_threads(prefix: &str, expected: usize) -> usize {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let n = live_threads(prefix);
        if n == expected || std::time::Instant::now() > deadline {
            return n;
        }
        std::thread::yield_now();
    }
}

/// Silences the default panic message for panics on pool worker threads
/// (named `dreadpool-N`), which tests provoke by the thousand on purpose;
/// printing each (with a backtrace when `RUST_BACKTRACE` is set) would slow
/// them badly. Panics on the test's own thread still print.
pub fn quiet_worker_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let on_worker = std::thread::current()
                .name()
                .is_some_and(|name| name.starts_with("dreadpool-"));
            if !on_worker {
                default(info);
            }
        }));
    });
}
