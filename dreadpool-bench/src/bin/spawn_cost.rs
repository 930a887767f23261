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
//! spawns 1M one-pointer tasks). Prints the median and the best ns/task of
//! REPS runs (default 5) on THREADS workers (default 2). With the `metrics`
//! feature, `DREADPOOL_BENCH_SAMPLING=N` sets `with_latency_sampling(N)`, and
//! `DREADPOOL_BENCH_SNAPSHOT_HZ=F` has another thread take `pool.metrics()`
//! F times a second while the scenarios run (issue 3: a snapshot 100 times a
//! second must not slow a flat-out pool measurably). With the `recorder`
//! feature, `DREADPOOL_BENCH_RECORD=off|scheduler|tasks` sets the flight
//! recorder's level (default: scheduler), and `DREADPOOL_BENCH_RECORDINGS_HZ=F`
//! has another thread take `pool.recording()` F times a second (issue 15: a
//! recording taken while the pool runs flat out must not stall it).

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
    #[allow(unused_mut)]
    let mut builder = ThreadPoolBuilder::new().with_threads(threads);
    #[cfg(feature = "recorder")]
    if let Ok(level) = std::env::var("DREADPOOL_BENCH_RECORD") {
        let level: dreadpool::RecordLevel = level.parse()?;
        builder = builder.with_record_level(level);
    }
    #[cfg(not(feature = "recorder"))]
    if std::env::var_os("DREADPOOL_BENCH_RECORD").is_some() {
        return Err("DREADPOOL_BENCH_RECORD needs the recorder feature".to_string());
    }
    #[cfg(feature = "metrics")]
    if let Ok(n) = std::env::var("DREADPOOL_BENCH_SAMPLING") {
        let n = n
            .parse()
            .map_err(|e| format!("DREADPOOL_BENCH_SAMPLING={n:?}: {e}"))?;
        return Ok(builder.with_latency_sampling(n));
    }
    Ok(builder)
}

/// A thread taking metrics snapshots at a fixed rate until stopped.
struct Snapshots {
    stop: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<u64>,
}

impl Snapshots {
    /// Stops the thread; returns how many snapshots it took.
    fn stop(self) -> u64 {
        drop(self.stop);
        self.thread.join().unwrap_or(0)
    }
}

#[cfg(feature = "metrics")]
fn snapshot_thread(pool: &'static ThreadPool) -> Result<Option<Snapshots>, String> {
    use std::sync::mpsc::{channel, RecvTimeoutError};
    let Ok(hz) = std::env::var("DREADPOOL_BENCH_SNAPSHOT_HZ") else {
        return Ok(None);
    };
    let hz: f64 = hz
        .parse()
        .map_err(|e| format!("DREADPOOL_BENCH_SNAPSHOT_HZ={hz:?}: {e}"))?;
    if !(hz > 0.0 && hz.is_finite()) {
        return Err(format!(
            "DREADPOOL_BENCH_SNAPSHOT_HZ must be positive, not {hz}"
        ));
    }
    let period = std::time::Duration::from_secs_f64(1.0 / hz);
    let (stop, stopped) = channel::<()>();
    let thread = std::thread::spawn(move || {
        let mut taken = 0u64;
        let mut next = Instant::now();
        loop {
            black_box(pool.metrics());
            taken += 1;
            next += period;
            let wait = next.saturating_duration_since(Instant::now());
            match stopped.recv_timeout(wait) {
                Err(RecvTimeoutError::Timeout) => {}
                _ => return taken,
            }
        }
    });
    Ok(Some(Snapshots { stop, thread }))
}

/// A thread calling `read` at `hz` times a second until stopped.
fn periodic(hz_var: &str, read: impl Fn() + Send + 'static) -> Result<Option<Snapshots>, String> {
    use std::sync::mpsc::{channel, RecvTimeoutError};
    let Ok(hz) = std::env::var(hz_var) else {
        return Ok(None);
    };
    let hz: f64 = hz.parse().map_err(|e| format!("{hz_var}={hz:?}: {e}"))?;
    if !(hz > 0.0 && hz.is_finite()) {
        return Err(format!("{hz_var} must be positive, not {hz}"));
    }
    let period = std::time::Duration::from_secs_f64(1.0 / hz);
    let (stop, stopped) = channel::<()>();
    let thread = std::thread::spawn(move || {
        let mut taken = 0u64;
        let mut next = Instant::now();
        loop {
            read();
            taken += 1;
            next += period;
            let wait = next.saturating_duration_since(Instant::now());
            match stopped.recv_timeout(wait) {
                Err(RecvTimeoutError::Timeout) => {}
                _ => return taken,
            }
        }
    });
    Ok(Some(Snapshots { stop, thread }))
}

#[cfg(feature = "recorder")]
fn recording_thread(pool: &'static ThreadPool) -> Result<Option<Snapshots>, String> {
    periodic("DREADPOOL_BENCH_RECORDINGS_HZ", move || {
        black_box(pool.recording());
    })
}

#[cfg(not(feature = "recorder"))]
fn recording_thread(_pool: &'static ThreadPool) -> Result<Option<Snapshots>, String> {
    match std::env::var("DREADPOOL_BENCH_RECORDINGS_HZ") {
        Ok(_) => Err("DREADPOOL_BENCH_RECORDINGS_HZ needs the recorder feature".to_string()),
        Err(_) => Ok(None),
    }
}

#[cfg(not(feature = "metrics"))]
fn snapshot_thread(_pool: &'static ThreadPool) -> Result<Option<Snapshots>, String> {
    match std::env::var("DREADPOOL_BENCH_SNAPSHOT_HZ") {
        Ok(_) => Err("DREADPOOL_BENCH_SNAPSHOT_HZ needs the metrics feature".to_string()),
        Err(_) => Ok(None),
    }
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
    let snapshots = snapshot_thread(pool)?;
    let recordings = recording_thread(pool)?;
    let mut per_task = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Instant::now();
        let tasks = run(pool, &scenario)?;
        per_task.push(start.elapsed().as_nanos() as f64 / tasks as f64);
    }
    if let Some(snapshots) = snapshots {
        let taken = snapshots.stop();
        eprintln!("spawn_cost: {taken} snapshots taken");
    }
    if let Some(recordings) = recordings {
        let taken = recordings.stop();
        eprintln!("spawn_cost: {taken} recordings taken");
    }
    per_task.sort_by(f64::total_cmp);
    println!(
        "{scenario}: median {:.1} ns/task, best {:.1} ns/task over {reps} runs on {threads} threads",
        per_task[per_task.len() / 2],
        per_task[0]
    );
    Ok(())
}
