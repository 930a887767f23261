//! Criterion micro-benchmarks of dreadpool's hot paths, with the seed design
//! beside it for reference: `cargo bench -p dreadpool-bench`.
//!
//! - `spawn_outside`: the spawner's cost per `spawn` from a thread outside
//!   the pool (the tasks are tiny; waiting for them is not timed);
//! - `spawn_inside`: the same from inside one of the pool's tasks;
//! - `steal`: with its peer held at a gate, a worker spawns a batch, then
//!   releases the peer and blocks; time per task from the release to the
//!   last completion, all of it the peer stealing and running the batch;
//! - `park_unpark`: spawn one task into an idle pool (every worker asleep)
//!   and wait until it has run: wake, run, signal back;
//! - `join_idle`: `join()` on a pool with nothing to do.

// `criterion_group!` generates a public, undocumented `fn benches`.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use dreadpool_bench::contenders::Spawner;
use dreadpool_bench::seed::SeedPool;
use dreadpool_bench::tally;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const THREADS: usize = 2;
// `steal` holds one worker at a gate and blocks another: with one worker it
// would wait forever.
const _: () = assert!(THREADS >= 2, "the steal benchmark needs two workers");

fn dreadpool() -> &'static dreadpool::ThreadPool {
    static POOL: OnceLock<dreadpool::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        dreadpool::ThreadPoolBuilder::new()
            .with_threads(THREADS)
            .build()
    })
}

fn seed() -> &'static SeedPool {
    static POOL: OnceLock<SeedPool> = OnceLock::new();
    POOL.get_or_init(|| SeedPool::new(THREADS))
}

fn tiny() {
    std::hint::black_box(());
    tally::task_done();
}

fn spawn_outside<P: Spawner>(pool: &'static P, iters: u64) -> Duration {
    let target = tally::total() + iters;
    let start = Instant::now();
    for _ in 0..iters {
        pool.spawn(tiny);
    }
    let took = start.elapsed();
    tally::wait_until(target);
    took
}

fn spawn_inside<P: Spawner>(pool: &'static P, iters: u64) -> Duration {
    let target = tally::total() + iters + 1;
    let (tx, rx) = mpsc::channel();
    pool.spawn(move || {
        let start = Instant::now();
        for _ in 0..iters {
            pool.spawn(tiny);
        }
        let _ = tx.send(start.elapsed());
        tally::task_done();
    });
    let took = rx.recv().expect("the spawning task reports");
    tally::wait_until(target);
    took
}

fn steal<P: Spawner>(pool: &'static P, iters: u64) -> Duration {
    static HELD: AtomicBool = AtomicBool::new(false);
    static RELEASED: AtomicBool = AtomicBool::new(false);
    HELD.store(false, Ordering::Relaxed);
    RELEASED.store(false, Ordering::Relaxed);
    let target = tally::total() + iters;
    // Hold one worker at a gate while the other makes the batch, so that the
    // batch is whole when the timing starts. (Without the gate the peer
    // drained the batch while it was spawned, and the timed tail after the
    // last spawn measured nothing: 10 ps per task for the seed.)
    pool.spawn(|| {
        HELD.store(true, Ordering::Release);
        while !RELEASED.load(Ordering::Acquire) {
            std::hint::spin_loop();
        }
    });
    while !HELD.load(Ordering::Acquire) {
        std::thread::yield_now();
    }
    let (tx, rx) = mpsc::channel();
    // Runs on the other worker: the held one is busy.
    pool.spawn(move || {
        for _ in 0..iters {
            pool.spawn(tiny);
        }
        let start = Instant::now();
        RELEASED.store(true, Ordering::Release);
        // Block this worker too, so that the released peer must take
        // everything: from this worker's queue (dreadpool), or from the
        // global queue (the seed, whose spawns all go there). Sleeping
        // between looks, as the harness does: spinning on the peer's
        // counter would pull its cache line away on every task it runs
        // (that tripled the figure here).
        let end = tally::wait_until(target);
        let _ = tx.send(end - start);
    });
    let took = rx.recv().expect("the blocking task reports");
    tally::wait_until(target);
    took
}

fn park_unpark<P: Spawner>(pool: &'static P, iters: u64) -> Duration {
    static DONE: AtomicBool = AtomicBool::new(false);
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        // Untimed: let every worker go to sleep.
        std::thread::sleep(Duration::from_micros(100));
        DONE.store(false, Ordering::Relaxed);
        let waiter = std::thread::current();
        let start = Instant::now();
        pool.spawn(move || {
            DONE.store(true, Ordering::Release);
            waiter.unpark();
        });
        while !DONE.load(Ordering::Acquire) {
            std::thread::park();
        }
        total += start.elapsed();
    }
    total
}

fn bench_hot_paths(c: &mut Criterion) {
    let mut group = c.benchmark_group("spawn_outside");
    group.throughput(Throughput::Elements(1));
    group.bench_function(BenchmarkId::from_parameter("dreadpool"), |b| {
        b.iter_custom(|iters| spawn_outside(dreadpool(), iters))
    });
    group.bench_function(BenchmarkId::from_parameter("seed"), |b| {
        b.iter_custom(|iters| spawn_outside(seed(), iters))
    });
    group.finish();

    let mut group = c.benchmark_group("spawn_inside");
    group.throughput(Throughput::Elements(1));
    group.bench_function(BenchmarkId::from_parameter("dreadpool"), |b| {
        b.iter_custom(|iters| spawn_inside(dreadpool(), iters))
    });
    group.bench_function(BenchmarkId::from_parameter("seed"), |b| {
        b.iter_custom(|iters| spawn_inside(seed(), iters))
    });
    group.finish();

    let mut group = c.benchmark_group("steal");
    group.throughput(Throughput::Elements(1));
    group.bench_function(BenchmarkId::from_parameter("dreadpool"), |b| {
        b.iter_custom(|iters| steal(dreadpool(), iters))
    });
    group.bench_function(BenchmarkId::from_parameter("seed"), |b| {
        b.iter_custom(|iters| steal(seed(), iters))
    });
    group.finish();

    let mut group = c.benchmark_group("park_unpark");
    group.measurement_time(Duration::from_secs(1));
    group.bench_function(BenchmarkId::from_parameter("dreadpool"), |b| {
        b.iter_custom(|iters| park_unpark(dreadpool(), iters))
    });
    group.bench_function(BenchmarkId::from_parameter("seed"), |b| {
        b.iter_custom(|iters| park_unpark(seed(), iters))
    });
    group.finish();

    let mut group = c.benchmark_group("join_idle");
    group.bench_function(BenchmarkId::from_parameter("dreadpool"), |b| {
        let pool = dreadpool();
        b.iter(|| pool.join())
    });
    group.bench_function(BenchmarkId::from_parameter("seed"), |b| {
        let pool = seed();
        b.iter(|| pool.join())
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = bench_hot_paths
}
criterion_main!(benches);
