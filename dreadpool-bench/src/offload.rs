//! The offload scenario (issue 19): async code that hands CPU work to a pool
//! and awaits the result, in the patterns people use today.
//!
//! - dreadpool: `pool.spawn_with_handle(work).await` (the handle is a
//!   `Future`);
//! - rayon and threadpool: spawn a closure that sends its result down a
//!   `tokio::sync::oneshot`, and await the receiver (what `tokio-rayon`
//!   wraps);
//! - tokio: `spawn_blocking(work).await` on a runtime's blocking pool.
//!
//! Each pattern is timed two ways: one offload at a time from a
//! current-thread runtime (the latency of one round trip, two thread wakes
//! in it), and many at once from a multi-thread runtime (throughput). Beside
//! them, dreadpool's blocking `TaskHandle::join` from a plain thread and the
//! cost of one thread wake, measured in the same run, make the target of
//! issue 19: awaiting costs no more than `join()` plus one wake.

use crate::contenders::Contender;
use std::hint::black_box;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// The offloaded work: next to nothing, so that the figures are the
/// patterns' own cost.
fn work() -> u64 {
    black_box(41u64) + 1
}

/// The pools and runtimes the offload patterns use, built once.
pub struct OffloadPools {
    dreadpool: dreadpool::ThreadPool,
    rayon: rayon::ThreadPool,
    threadpool: threadpool::ThreadPool,
    /// Its blocking pool serves `spawn_blocking`; it has `threads` of them
    /// at most, like the other pools.
    blocking: tokio::runtime::Runtime,
    /// Awaits one offload at a time.
    single: tokio::runtime::Runtime,
    /// Awaits many at once.
    many: tokio::runtime::Runtime,
}

impl OffloadPools {
    /// Every pool with `threads` workers; the awaiting multi-thread runtime
    /// has `threads` workers too.
    pub fn new(threads: usize) -> Self {
        let runtime = || {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(threads);
            builder
        };
        OffloadPools {
            dreadpool: dreadpool::ThreadPoolBuilder::new()
                .with_threads(threads)
                .with_thread_name("offload")
                .build(),
            rayon: rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("rayon starts"),
            threadpool: threadpool::ThreadPool::new(threads),
            blocking: runtime()
                .max_blocking_threads(threads)
                .build()
                .expect("tokio starts"),
            single: tokio::runtime::Builder::new_current_thread()
                .build()
                .expect("tokio starts"),
            many: runtime().build().expect("tokio starts"),
        }
    }

    /// One future that offloads `work` the way `contender`'s users do.
    async fn offload(&self, contender: Contender) -> u64 {
        match contender {
            Contender::Dreadpool => self
                .dreadpool
                .spawn_with_handle(work)
                .await
                .expect("work does not panic"),
            Contender::Rayon => {
                let (tx, rx) = tokio::sync::oneshot::channel();
                self.rayon.spawn(move || {
                    let _ = tx.send(work());
                });
                rx.await.expect("the pool sends")
            }
            Contender::Threadpool => {
                let (tx, rx) = tokio::sync::oneshot::channel();
                self.threadpool.execute(move || {
                    let _ = tx.send(work());
                });
                rx.await.expect("the pool sends")
            }
            Contender::Tokio => self
                .blocking
                .spawn_blocking(work)
                .await
                .expect("work does not panic"),
            Contender::Seed => unreachable!("the seed design has no result handles"),
            #[cfg(feature = "recorder")]
            Contender::DreadpoolTasks => unreachable!("not an offload contender"),
        }
    }

    /// Whether `contender` takes part (the seed has no result handles; the
    /// recorder's contender measures spawns, not offloads).
    pub fn has(contender: Contender) -> bool {
        contender == Contender::Dreadpool || (contender.is_peer() && contender != Contender::Seed)
    }

    /// `n` offloads one after another from a current-thread runtime:
    /// nanoseconds per round trip.
    pub fn one_at_a_time(&self, contender: Contender, n: u32) -> f64 {
        let took = self.single.block_on(async {
            let start = Instant::now();
            for _ in 0..n {
                black_box(self.offload(contender).await);
            }
            start.elapsed()
        });
        took.as_nanos() as f64 / f64::from(n.max(1))
    }

    /// `n` offloads at once, each awaited by its own task on the
    /// multi-thread runtime: nanoseconds per offload.
    pub fn many_at_once(&'static self, contender: Contender, n: u32) -> f64 {
        let took = self.many.block_on(async move {
            let start = Instant::now();
            let tasks: Vec<_> = (0..n)
                .map(|_| {
                    self.many
                        .spawn(async move { self.offload(contender).await })
                })
                .collect();
            for task in tasks {
                black_box(task.await.expect("an offload task ends"));
            }
            start.elapsed()
        });
        took.as_nanos() as f64 / f64::from(n.max(1))
    }

    /// `n` blocking `TaskHandle::join`s one after another from this (plain)
    /// thread: nanoseconds per round trip. The baseline of the await.
    pub fn joins(&self, n: u32) -> f64 {
        let start = Instant::now();
        for _ in 0..n {
            black_box(
                self.dreadpool
                    .spawn_with_handle(work)
                    .join()
                    .expect("work does not panic"),
            );
        }
        start.elapsed().as_nanos() as f64 / f64::from(n.max(1))
    }
}

/// The cost of one thread wake, in nanoseconds: half the round trip of a
/// ping-pong between two threads that each block until the other wakes it.
pub fn one_wake(round_trips: u32) -> f64 {
    let (ping_tx, ping_rx) = mpsc::sync_channel::<()>(0);
    let (pong_tx, pong_rx) = mpsc::sync_channel::<()>(0);
    let echo = thread::spawn(move || {
        while ping_rx.recv().is_ok() {
            if pong_tx.send(()).is_err() {
                break;
            }
        }
    });
    // Warm the pair up before timing.
    for _ in 0..100 {
        ping_tx.send(()).expect("echo runs");
        pong_rx.recv().expect("echo answers");
    }
    let start = Instant::now();
    for _ in 0..round_trips {
        ping_tx.send(()).expect("echo runs");
        pong_rx.recv().expect("echo answers");
    }
    let took = start.elapsed();
    drop(ping_tx);
    echo.join().expect("echo ends");
    took.as_nanos() as f64 / f64::from(round_trips.max(1)) / 2.0
}

/// Waits for the pools' threads to go back to sleep between patterns, so
/// that each starts from the same idle pool (as a service's offload does).
pub fn settle() {
    thread::sleep(Duration::from_millis(20));
}
