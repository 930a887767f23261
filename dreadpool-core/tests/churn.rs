//! Pools created and dropped by the thousand leak neither threads nor memory.
//!
//! Alone in its own test binary, because it measures the whole process's
//! resident memory, which other tests running in parallel would disturb.

mod common;

use common::settled_threads;
use dreadpool_core::ThreadPoolBuilder;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Resident set size of this process in bytes, from /proc.
fn rss_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[test]
fn thousands_of_pools_leak_no_thread_and_no_memory() {
    let ran = Arc::new(AtomicUsize::new(0));
    let cycle = |rounds: usize| {
        for _ in 0..rounds {
            let pool = ThreadPoolBuilder::new()
                .with_threads(2)
                .with_thread_name("many")
                .build();
            for _ in 0..4 {
                let ran = Arc::clone(&ran);
                pool.spawn(move || {
                    ran.fetch_add(1, Ordering::Relaxed);
                });
            }
            drop(pool);
        }
    };
    // Warm up the allocator, then measure growth over many more pools.
    cycle(200);
    let rss_warm = rss_bytes();
    cycle(2000);
    let growth = rss_bytes().saturating_sub(rss_warm);
    assert_eq!(ran.load(Ordering::Relaxed), 2200 * 4, "a drop lost tasks");
    assert_eq!(settled_threads("many-", 0), 0, "threads leaked");
    // A leak of even one small allocation per pool would show as tens of KiB;
    // a leaked stack or queue per pool as megabytes.
    assert!(
        growth < 8 << 20,
        "RSS grew by {growth} bytes over 2000 pools"
    );
}
