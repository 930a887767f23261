//! The spawn-heavy scenarios on dreadpool alone, small enough to run under
//! `valgrind --tool=callgrind`, for counting what a feature adds per task
//! (instruction counts do not vary with machine load; wall time here does).
//! `scripts/instruction-cost.sh` builds it once per feature set and prints
//! the table in `BENCHMARKS.md`.
//!
//! ```text
//! spawn_cost SCENARIO [REPS] [THREADS]
//! ```
//!
//! SCENARIO is `external` (1M one-pointer tasks from this thread), `nested`
//! (a binary spawn tree of 20 levels, 1,048,575 tasks) or `fanout` (one task
//! spawns 1M one-pointer tasks). Prints the median ns/task of REPS runs
//! (default 5) on THREADS workers (default 2). With the `metrics` feature,
//! `DREADPOOL_BENCH_SAMPLING=N` sets `with_latency_sampling(N)`.

use dreadpool::{ThreadPool, ThreadPoolBuilder};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// What the one-pointer tasks read: their closures capture `&WORD`.
static WORD: AtomicU64 = AtomicU64::new(1);

fn node(pool: &'static ThreadPool, levels_left: u32) {
    if levels_left > 1 {
        pool.spawn(move || node(pool, levels_left - 1));
        pool.spawn(move || node(pool, levels_left - 1));
    }
}

fn tiny(word: &'static AtomicU64) {
    black_box(word.load(Ordering::Relaxed));
}

/// Runs `scenario` once; returns how many tasks it ran.
fn run(pool: &'static ThreadPool, scenario: &str) -> Result<u64, String> {
    let word = &WORD;
    let tasks = match scenario {
        "external" => {
            for _ in 0..1_000_000 {
                pool.spawn(move || tiny(word));
            }
            1_000_000
        }
        "nested" => {
            pool.spawn(move || node(pool, 20));
            (1 << 20) - 1
        }
        "fanout" => {
            pool.spawn(move || {
                for _ in 0..1_000_000 {
                    pool.spawn(move || tiny(word));
                }
            });
            1_000_001
        }
        other => return Err(format!("unknown scenario {other:?}")),
    };
    pool.join();
    Ok(tasks)
}

fn builder(threads: usize) -> Result<ThreadPoolBuilder, String> {
    let builder = ThreadPoolBuilder::new().with_threads(threads);
    #[cfg(feature = "metrics")]
    if let Ok(n) = std::env::var("DREADPOOL_BENCH_SAMPLING") {
        let n = n
            .parse()
            .map_err(|e| format!("DREADPOOL_BENCH_SAMPLING={n:?}: {e}"))?;
        return Ok(builder.with_latency_sampling(n));
    }
    Ok(builder)
}

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let scenario = args.next().unwrap_or_else(|| "nested".to_string());
    let number = |arg: Option<String>, default: usize| -> Result<usize, String> {
        arg.map_or(Ok(default), |a| {
            a.parse().map_err(|e| format!("{a:?}: {e}"))
        })
    };
    let reps = number(args.next(), 5)?.max(1);
    let threads = number(args.next(), 2)?;
    let pool: &'static ThreadPool = Box::leak(Box::new(
        builder(threads)?.try_build().map_err(|e| e.to_string())?,
    ));
    let mut per_task = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Instant::now();
        let tasks = run(pool, &scenario)?;
        per_task.push(start.elapsed().as_nanos() as f64 / tasks as f64);
    }
    per_task.sort_by(f64::total_cmp);
    println!(
        "{scenario}: median {:.1} ns/task over {reps} runs on {threads} threads",
        per_task[per_task.len() / 2]
    );
    Ok(())
}
