//! Completion counting, identical for every contender.
//!
//! Every benchmark task ends with [`task_done`], which bumps a counter owned
//! by the thread it runs on: a cache-padded `AtomicU64` that only that thread
//! writes, with a plain load and store (no locked read-modify-write). The
//! harness waits with [`wait_until`], which sums the counters of every thread
//! that ever ran a task and sleeps between looks.
//!
//! Why not one shared counter and a latch released by the last task? A
//! shared counter decremented by every task bounces one cache line between
//! the workers twice per task: tens of nanoseconds per task that would be the
//! harness's cost, not the pool's, and would flatten every ratio. A sharded
//! count costs about a nanosecond and is the same for everyone. The waiter's
//! sleeps shrink as the end nears (it estimates the time left from the rate so
//! far), so it wakes only a few dozen times per run and overshoots the end by
//! at most [`MIN_POLL`] plus the OS's timer slack.

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The shortest sleep between two looks of the waiter.
pub const MIN_POLL: Duration = Duration::from_micros(20);
/// The longest sleep between two looks of the waiter.
pub const MAX_POLL: Duration = Duration::from_millis(2);

type Shard = &'static CachePadded<AtomicU64>;

/// Every thread's counter, in registration order. Counters are leaked: a
/// thread that ends keeps its count in the total, which is monotonic.
static SHARDS: Mutex<Vec<Shard>> = Mutex::new(Vec::new());

thread_local! {
    static MINE: Shard = register();
}

fn register() -> Shard {
    let shard: Shard = Box::leak(Box::new(CachePadded::new(AtomicU64::new(0))));
    SHARDS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(shard);
    shard
}

/// Counts one finished task on the calling thread.
#[inline]
pub fn task_done() {
    MINE.with(|shard| {
        // Single writer: no other thread stores to this counter. Release
        // publishes the task's effects to a waiter that reads it (Acquire).
        shard.store(shard.load(Ordering::Relaxed) + 1, Ordering::Release);
    });
}

/// Tasks finished so far, by every thread.
pub fn total() -> u64 {
    SHARDS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .iter()
        .map(|shard| shard.load(Ordering::Acquire))
        .sum()
}

/// Sleeps until [`total`] reaches `target`. Returns the instant it saw it.
pub fn wait_until(target: u64) -> Instant {
    let start = Instant::now();
    let first = total();
    loop {
        let done = total();
        let now = Instant::now();
        if done >= target {
            return now;
        }
        let progress = done.saturating_sub(first);
        let pause = if progress == 0 {
            Duration::from_micros(100)
        } else {
            // Half the estimated time left, so the last look lands close to
            // the end without many wakeups on the way.
            let per_task = now.duration_since(start).as_secs_f64() / progress as f64;
            let left = per_task * (target - done) as f64;
            Duration::from_secs_f64(left / 2.0)
        };
        std::thread::sleep(pause.clamp(MIN_POLL, MAX_POLL));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_from_every_thread() {
        let before = total();
        let threads: Vec<_> = (0..3)
            .map(|_| {
                std::thread::spawn(|| {
                    for _ in 0..1000 {
                        task_done();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        wait_until(before + 3000);
        assert!(total() >= before + 3000);
    }
}
