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
//! (a binary spawn tree of 20 levels, 1,048,575 tasks), `nested-1us` (a
//! tree of 17 levels whose tasks each compute for about a microsecond) or
//! `fanout` (one task spawns 1M one-pointer tasks). Prints the median and the best ns/task of
//! REPS runs (default 5) on THREADS workers (default 2). With the `metrics`
//! feature, `DREADPOOL_BENCH_SAMPLING=N` sets `with_latency_sampling(N)`, and
//! `DREADPOOL_BENCH_SNAPSHOT_HZ=F` has another thread take `pool.metrics()`
//! F times a second while the scenarios run (issue 3: a snapshot 100 times a
//! second must not slow a flat-out pool measurably). With the `recorder`
//! feature, `DREADPOOL_BENCH_RECORD=off|scheduler|tasks` sets the flight
//! recorder's level (default: scheduler), `DREADPOOL_BENCH_RECORD_CAPACITY=N`
//! its ring size, and `DREADPOOL_BENCH_BESIDE=recordings` has another thread
//! take `pool.recording()` back to back for the whole run (issue 15: a
//! recording taken while the pool runs flat out must not stall it);
//! `DREADPOOL_BENCH_BESIDE=spin` has it spin instead, the control: the same
//! competition for the CPUs, without the recorder.

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

/// Spin iterations that take about a microsecond (0.98-1.05 us on this
/// project's 2-vCPU AMD EPYC guest). A constant, not calibrated per run:
/// the builds compared run as separate processes, and a count calibrated in
/// each would differ by a few percent from one to the next, more than the
/// costs measured.
fn one_microsecond() -> u64 {
    460
}

/// A loop the optimiser cannot remove.
fn spin(iterations: u64) -> u64 {
    let mut x = black_box(0x9E37_79B9_7F4A_7C15u64);
    for _ in 0..iterations {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    black_box(x)
}

/// A binary tree like `nested`, but each task also computes for about a
/// microsecond: the recorder's budget there is 2% (issue 15).
fn node_1us(pool: &'static ThreadPool, levels_left: u32, iterations: u64) {
    spin(iterations);
    if levels_left > 1 {
        pool.spawn(move || node_1us(pool, levels_left - 1, iterations));
        pool.spawn(move || node_1us(pool, levels_left - 1, iterations));
    }
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
        "nested-1us" => {
            let iterations = one_microsecond();
            pool.spawn(move || node_1us(pool, 17, iterations));
            (1 << 17) - 1
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
    #[cfg(feature = "recorder")]
    if let Ok(events) = std::env::var("DREADPOOL_BENCH_RECORD_CAPACITY") {
        let events = events
            .parse()
            .map_err(|e| format!("DREADPOOL_BENCH_RECORD_CAPACITY={events:?}: {e}"))?;
        builder = builder.with_record_capacity(events);
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
    periodic("DREADPOOL_BENCH_SNAPSHOT_HZ", move || {
        black_box(pool.metrics());
    })
}

/// A thread calling `read` at `hz` times a second until stopped.
#[cfg(feature = "metrics")]
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

/// A thread beside the pool for the whole run, until stopped: taking
/// recordings back to back, or (the control) spinning.
struct Beside {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<u64>,
}

impl Beside {
    /// Stops the thread; returns how many recordings (or spins) it made.
    fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or(0)
    }
}

/// `DREADPOOL_BENCH_BESIDE=recordings` (recorder feature) or `spin`.
fn beside_thread(pool: &'static ThreadPool) -> Result<Option<Beside>, String> {
    let Ok(what) = std::env::var("DREADPOOL_BENCH_BESIDE") else {
        return Ok(None);
    };
    let work: Box<dyn Fn() + Send> = match what.as_str() {
        "spin" => Box::new(|| {
            black_box(one_microsecond());
        }),
        #[cfg(feature = "recorder")]
        "recordings" => Box::new(move || {
            black_box(pool.recording());
        }),
        other => {
            let _ = pool;
            return Err(format!(
                "DREADPOOL_BENCH_BESIDE={other:?}: expected spin, or recordings with the recorder feature"
            ));
        }
    };
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = std::sync::Arc::clone(&stop);
    let thread = std::thread::spawn(move || {
        let mut done = 0u64;
        while !flag.load(Ordering::Relaxed) {
            work();
            done += 1;
        }
        done
    });
    Ok(Some(Beside { stop, thread }))
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
    let beside = beside_thread(pool)?;
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
    if let Some(beside) = beside {
        let made = beside.stop();
        eprintln!("spawn_cost: the thread beside made {made} rounds");
    }
    per_task.sort_by(f64::total_cmp);
    println!(
        "{scenario}: median {:.1} ns/task, best {:.1} ns/task over {reps} runs on {threads} threads",
        per_task[per_task.len() / 2],
        per_task[0]
    );
    Ok(())
}
