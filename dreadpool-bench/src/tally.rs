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

/// One thread's counters, written by that thread only.
#[derive(Default)]
struct Counters {
    /// Tasks finished.
    done: AtomicU64,
    /// The wrapping sum of [`mix`] over the ids of the tasks counted with
    /// [`task_done_as`].
    ids: AtomicU64,
}

type Shard = &'static CachePadded<Counters>;

/// Every thread's counters, in registration order. Counters are leaked: a
/// thread that ends keeps its count in the total, which is monotonic.
static SHARDS: Mutex<Vec<Shard>> = Mutex::new(Vec::new());

thread_local! {
    static MINE: Shard = register();
}

fn register() -> Shard {
    let shard: Shard = Box::leak(Box::new(CachePadded::new(Counters::default())));
    SHARDS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(shard);
    shard
}

/// Counts one finished task on the calling thread.
#[inline]
pub fn task_done() {
    MINE.with(|shard| count(&shard.done));
}

/// Counts task `id` finished on the calling thread and adds it to the
/// [`fingerprint`], so that a run can check each id ran exactly once.
#[inline]
pub fn task_done_as(id: u64) {
    MINE.with(|shard| {
        let ids = &shard.ids;
        // Published by the Release store of `count` below.
        ids.store(
            ids.load(Ordering::Relaxed).wrapping_add(mix(id)),
            Ordering::Relaxed,
        );
        count(&shard.done);
    });
}

#[inline]
fn count(done: &AtomicU64) {
    // Single writer: no other thread stores to this counter. Release
    // publishes the task's effects to a waiter that reads it (Acquire).
    done.store(done.load(Ordering::Relaxed) + 1, Ordering::Release);
}

/// Tasks finished so far, by every thread.
pub fn total() -> u64 {
    SHARDS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .iter()
        .map(|shard| shard.done.load(Ordering::Acquire))
        .sum()
}

/// The fingerprint of every id counted so far by [`task_done_as`]: the
/// wrapping sum of each id mixed by splitmix64's finaliser. Read it after
/// [`total`] (Acquire) showed the tasks done.
pub fn fingerprint() -> u64 {
    SHARDS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .iter()
        .fold(0, |sum, shard| {
            sum.wrapping_add(shard.ids.load(Ordering::Relaxed))
        })
}

/// The fingerprint that the ids `ids` add when each runs exactly once.
pub fn fingerprint_of(ids: std::ops::Range<u64>) -> u64 {
    ids.fold(0, |sum, id| sum.wrapping_add(mix(id)))
}

/// splitmix64's finaliser: a bijection, so that a lost task and a repeated
/// one never cancel out in the sum.
#[inline]
fn mix(id: u64) -> u64 {
    let mut z = id.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
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
    fn the_fingerprint_catches_a_lost_and_a_repeated_id() {
        let before = fingerprint();
        std::thread::spawn(|| (100..200).for_each(task_done_as))
            .join()
            .unwrap();
        assert_eq!(fingerprint().wrapping_sub(before), fingerprint_of(100..200));
        let lost_one_ran_twice = fingerprint_of(100..199).wrapping_add(mix(150));
        assert_ne!(lost_one_ran_twice, fingerprint_of(100..200));
    }

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
