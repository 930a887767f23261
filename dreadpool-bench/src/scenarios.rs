//! The measurements of issue 6, one [`Scenario`] each.
//!
//! Every task, whatever the contender, captures what it needs as plain
//! pointers (or its id) and ends with [`tally::task_done`] (or
//! [`tally::task_done_as`]); every run waits with
//! [`tally::wait_until`]. So the harness's own cost is the same for all.

use crate::contenders::{Scenario, Spawner};
use crate::sys;
use crate::tally;
use hdrhistogram::Histogram;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Barrier, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// What a tiny task reads: one shared word that nobody writes, so that the
/// closure captures exactly one pointer.
static TINY: AtomicU64 = AtomicU64::new(1);

/// The body of a tiny task.
#[inline]
fn tiny(word: &'static AtomicU64) {
    black_box(word.load(Ordering::Relaxed));
    tally::task_done();
}

/// External: `tasks` tiny tasks spawned from this (outside) thread, then
/// wait. Returns the wall time from the first spawn to the last completion.
#[derive(Debug, Clone, Copy)]
pub struct External {
    /// How many tasks to spawn.
    pub tasks: u64,
}

impl Scenario for External {
    type Output = Duration;

    fn run<P: Spawner>(&self, pool: &'static P, _threads: usize) -> Duration {
        let target = tally::total() + self.tasks;
        let word = &TINY;
        let start = Instant::now();
        for _ in 0..self.tasks {
            pool.spawn(move || tiny(word));
        }
        tally::wait_until(target) - start
    }
}

/// Nested: a binary tree of spawns `levels` deep (`2^levels - 1` tasks), each
/// task spawning its two children from inside the pool.
#[derive(Debug, Clone, Copy)]
pub struct Nested {
    /// Depth of the tree; the root alone is one level.
    pub levels: u32,
}

impl Nested {
    /// The number of tasks in the tree.
    pub fn tasks(&self) -> u64 {
        (1u64 << self.levels) - 1
    }
}

fn node<P: Spawner>(pool: &'static P, levels_left: u32) {
    if levels_left > 1 {
        pool.spawn(move || node(pool, levels_left - 1));
        pool.spawn(move || node(pool, levels_left - 1));
    }
    tally::task_done();
}

impl Scenario for Nested {
    type Output = Duration;

    fn run<P: Spawner>(&self, pool: &'static P, _threads: usize) -> Duration {
        let target = tally::total() + self.tasks();
        let levels = self.levels;
        let start = Instant::now();
        pool.spawn(move || node(pool, levels));
        tally::wait_until(target) - start
    }
}

/// Fan-out: one task (spawned from outside) spawns `children` tiny tasks from
/// inside the pool; the other workers must steal to help.
#[derive(Debug, Clone, Copy)]
pub struct FanOut {
    /// How many children the one task spawns.
    pub children: u64,
}

impl Scenario for FanOut {
    type Output = Duration;

    fn run<P: Spawner>(&self, pool: &'static P, _threads: usize) -> Duration {
        let target = tally::total() + self.children + 1;
        let children = self.children;
        let start = Instant::now();
        pool.spawn(move || {
            let word = &TINY;
            for _ in 0..children {
                pool.spawn(move || tiny(word));
            }
            tally::task_done();
        });
        tally::wait_until(target) - start
    }
}

/// Producers: `producers` outside threads, released together by a barrier,
/// spawn `tasks` tiny tasks between them (a server's request threads
/// offloading CPU work; tokio#8483), then wait. Each task counts its id in
/// the [`tally::fingerprint`], so a lost or repeated task fails the run.
/// Returns the wall time from the release to the last completion.
#[derive(Debug, Clone, Copy)]
pub struct Producers {
    /// How many tasks all the producers spawn together.
    pub tasks: u64,
    /// How many outside threads spawn them.
    pub producers: usize,
}

impl Scenario for Producers {
    type Output = Result<Duration, String>;

    fn run<P: Spawner>(&self, pool: &'static P, _threads: usize) -> Self::Output {
        let (tasks, producers) = (self.tasks, self.producers.max(1) as u64);
        let expected = tally::fingerprint_of(0..tasks);
        let (target, before) = (tally::total() + tasks, tally::fingerprint());
        let barrier = &Barrier::new(producers as usize);
        let (start, end) = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..producers)
                .map(|p| {
                    let ids = tasks * p / producers..tasks * (p + 1) / producers;
                    scope.spawn(move || {
                        barrier.wait();
                        let start = Instant::now();
                        for id in ids {
                            pool.spawn(move || tally::task_done_as(id));
                        }
                        start
                    })
                })
                .collect();
            let end = tally::wait_until(target);
            // The first producer's start: this thread may be off the CPU at the release.
            let starts = handles.into_iter().map(|h| h.join().expect("a producer"));
            (starts.min().expect("one producer at least"), end)
        });
        if tally::fingerprint().wrapping_sub(before) != expected {
            return Err(format!(
                "producers: {tasks} tasks from {producers} threads did not each run exactly once"
            ));
        }
        Ok(end - start)
    }
}

static EPOCH: OnceLock<Instant> = OnceLock::new();

/// Nanoseconds since this process's benchmark epoch, at least 1.
fn now_ns() -> u64 {
    let epoch = *EPOCH.get_or_init(Instant::now);
    (epoch.elapsed().as_nanos() as u64).max(1)
}

/// The latency histogram every wake measurement records into: 1 ns to 10 s,
/// three significant figures; longer values are clamped to the bound.
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 10_000_000_000, 3).expect("valid histogram bounds")
}

/// Wake latency: on an idle pool, spawn one task and record the time from
/// just before the spawn to the first instruction of the task, `samples`
/// times, with a pause of `pause` (plus a little jitter) before each spawn so
/// that every worker is asleep again. The output is every latency, in
/// nanoseconds, in the order taken (the comparison keeps blocks of them for
/// its intervals, and adds them to a [`latency_histogram`]).
#[derive(Debug, Clone, Copy)]
pub struct Wake {
    /// How many spawns to time.
    pub samples: u32,
    /// The idle time before each spawn.
    pub pause: Duration,
}

impl Scenario for Wake {
    type Output = Vec<u64>;

    fn run<P: Spawner>(&self, pool: &'static P, _threads: usize) -> Vec<u64> {
        static STARTED: AtomicU64 = AtomicU64::new(0);
        let mut latencies = Vec::with_capacity(self.samples as usize);
        let mut rng = 0x2545_F491_4F6C_DD1D_u64;
        now_ns();
        for _ in 0..self.samples {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let jitter = Duration::from_micros(rng % 200);
            std::thread::sleep(self.pause + jitter);
            STARTED.store(0, Ordering::Relaxed);
            let started = &STARTED;
            let spawned_at = now_ns();
            pool.spawn(move || {
                started.store(now_ns(), Ordering::Release);
                tally::task_done();
            });
            // Stay off the CPU while the pool wakes up: the woken worker may
            // need the core this thread runs on.
            let started_at = loop {
                std::thread::sleep(Duration::from_micros(50));
                let at = STARTED.load(Ordering::Acquire);
                if at != 0 {
                    break at;
                }
            };
            latencies.push(started_at.saturating_sub(spawned_at));
        }
        latencies
    }
}

/// Idle cost: after warming the pool up, the CPU time the whole process uses
/// per second of wall time while nothing is submitted, in milliseconds per
/// second. Meant for a fresh process holding only the pool under test.
#[derive(Debug, Clone, Copy)]
pub struct Idle {
    /// How long to watch.
    pub window: Duration,
}

impl Scenario for Idle {
    type Output = f64;

    fn run<P: Spawner>(&self, pool: &'static P, threads: usize) -> f64 {
        // Warm up: wake every worker a few times, then let them settle.
        for _ in 0..3 {
            External { tasks: 10_000 }.run(pool, threads);
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(200));
        let (cpu, wall) = (sys::cpu_time(), Instant::now());
        std::thread::sleep(self.window);
        let (cpu, wall) = (sys::cpu_time() - cpu, wall.elapsed());
        cpu.as_secs_f64() * 1e3 / wall.as_secs_f64()
    }
}

/// The CPU-bound kernel of the compute scenario: `iterations` rounds of
/// xorshift that the optimiser cannot remove.
#[inline(never)]
pub fn spin(iterations: u64) -> u64 {
    let mut x = black_box(iterations | 1);
    for _ in 0..iterations {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    black_box(x)
}

/// How long one [`spin`] iteration takes on this machine, in nanoseconds,
/// measured over about `budget`.
pub fn calibrate_spin(budget: Duration) -> f64 {
    let mut iterations = 10_000u64;
    loop {
        let start = Instant::now();
        spin(iterations);
        let took = start.elapsed();
        if took >= budget / 4 {
            // Best of three at this size, to dodge a preempted run.
            let best = (0..3)
                .map(|_| {
                    let start = Instant::now();
                    spin(iterations);
                    start.elapsed()
                })
                .min()
                .unwrap_or(took);
            return best.as_nanos() as f64 / iterations as f64;
        }
        iterations *= 4;
    }
}

/// The work list of the compute scenario: task `i` spins for a duration
/// spread evenly (pseudo-randomly) over `[min, max]`.
pub fn compute_plan(tasks: u32, ns_per_iteration: f64, min: Duration, max: Duration) -> Vec<u64> {
    let (lo, hi) = (min.as_nanos() as f64, max.as_nanos() as f64);
    let mut rng = 0x9E37_79B9_7F4A_7C15_u64;
    (0..tasks)
        .map(|_| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let ns = lo + (hi - lo) * (rng % 1_000_001) as f64 / 1e6;
            ((ns / ns_per_iteration) as u64).max(1)
        })
        .collect()
}

/// Runs the compute plan in a loop on this thread: the one-thread baseline.
pub fn compute_serial(plan: &[u64]) -> Duration {
    let start = Instant::now();
    for &iterations in plan {
        spin(iterations);
    }
    start.elapsed()
}

/// The compute plan on `threads` plain threads, each taking the next entry
/// off one shared index until none is left: the wall time from their common
/// start to the last one's finish.
///
/// This is the machine's bound for the compute scenario, with no pool: no
/// queues, no wakes, no spawner, and a balance no scheduler beats (a thread
/// takes the next task the moment it is free). What it loses against
/// [`compute_serial`] is the machine's own: cores that run slower when all
/// of them are busy (a lower all-core clock), shared caches and memory, the
/// last tasks' imbalance. A pool's efficiency over this bound is what its
/// scheduling costs. One `fetch_add` per task of 10-20 us is far below the
/// figures it bounds. The threads are started before the clock, behind a
/// barrier, so their creation is not timed.
///
/// With no threads, or no plan, it returns zero.
pub fn compute_bound(plan: &[u64], threads: usize) -> Duration {
    share_out(plan.len(), threads, |entry| {
        spin(plan[entry]);
    })
}

/// Runs `run(i)` for every `i` in `0..entries` on `threads` plain threads
/// that each take the next `i` off one shared index; the wall time from the
/// first one's start (all wait at a barrier first) to the last one's finish.
///
/// Each thread reads its own start: the caller's thread may get its CPU back
/// from the barrier only after the work is done.
fn share_out(entries: usize, threads: usize, run: impl Fn(usize) + Sync) -> Duration {
    let next = AtomicUsize::new(0);
    let ready = Barrier::new(threads);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    ready.wait();
                    let start = Instant::now();
                    loop {
                        let entry = next.fetch_add(1, Ordering::Relaxed);
                        if entry >= entries {
                            return (start, Instant::now());
                        }
                        run(entry);
                    }
                })
            })
            .collect();
        let spans: Vec<(Instant, Instant)> = workers
            .into_iter()
            .map(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e))
            })
            .collect();
        let first = spans.iter().map(|&(start, _)| start).min();
        let last = spans.iter().map(|&(_, end)| end).max();
        match (first, last) {
            (Some(first), Some(last)) => last.duration_since(first),
            _ => Duration::ZERO,
        }
    })
}

/// Compute: every entry of the plan as one CPU-bound task spawned from
/// outside; the wall time until all are done.
#[derive(Debug, Clone, Copy)]
pub struct Compute {
    /// The work list (see [`compute_plan`]); leaked so tasks read it freely.
    pub plan: &'static [u64],
}

impl Scenario for Compute {
    type Output = Duration;

    fn run<P: Spawner>(&self, pool: &'static P, _threads: usize) -> Duration {
        let target = tally::total() + self.plan.len() as u64;
        let start = Instant::now();
        for &iterations in self.plan {
            pool.spawn(move || {
                spin(iterations);
                tally::task_done();
            });
        }
        tally::wait_until(target) - start
    }
}

/// Memory: block every worker in a task, queue `tasks` tasks each capturing
/// one pointer behind them, and report the growth of the peak resident set
/// per queued task, in bytes. Meant for a fresh process holding only the pool
/// under test; leaves the pool blocked (the process should exit after).
#[derive(Debug, Clone, Copy)]
pub struct Memory {
    /// How many tasks to queue.
    pub tasks: u64,
}

/// A gate that blocked tasks wait behind.
struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
}

static GATE: Gate = Gate {
    open: Mutex::new(false),
    opened: Condvar::new(),
};

impl Gate {
    fn wait(&self) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        while !*open {
            open = self.opened.wait(open).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Scenario for Memory {
    type Output = Result<f64, String>;

    fn run<P: Spawner>(&self, pool: &'static P, threads: usize) -> Result<f64, String> {
        static BLOCKED: AtomicUsize = AtomicUsize::new(0);
        for _ in 0..threads {
            pool.spawn(|| {
                BLOCKED.fetch_add(1, Ordering::SeqCst);
                GATE.wait();
                tally::task_done();
            });
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while BLOCKED.load(Ordering::SeqCst) < threads {
            if Instant::now() > deadline {
                return Err("not every worker took a blocking task".into());
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(20));
        let before = sys::rss().ok_or("no /proc/self/status")?;
        let word = &TINY;
        for _ in 0..self.tasks {
            pool.spawn(move || tiny(word));
        }
        let after = sys::rss().ok_or("no /proc/self/status")?;
        let grown = after.peak.max(after.current).saturating_sub(before.current);
        Ok(grown as f64 / self.tasks as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compute_plan_spreads_over_the_range() {
        let plan = compute_plan(
            1000,
            1.0,
            Duration::from_micros(10),
            Duration::from_micros(20),
        );
        assert_eq!(plan.len(), 1000);
        assert!(plan.iter().all(|&i| (10_000..=20_000).contains(&i)));
        let mean = plan.iter().sum::<u64>() as f64 / 1000.0;
        assert!((14_000.0..16_000.0).contains(&mean), "mean {mean}");
    }

    #[test]
    fn the_bound_runs_every_entry_exactly_once_however_many_threads() {
        for threads in [1, 2, 5] {
            let runs: Vec<AtomicUsize> = (0..1000).map(|_| AtomicUsize::new(0)).collect();
            share_out(runs.len(), threads, |entry| {
                runs[entry].fetch_add(1, Ordering::Relaxed);
            });
            let counts: Vec<usize> = runs.iter().map(|r| r.load(Ordering::Relaxed)).collect();
            assert!(
                counts.iter().all(|&n| n == 1),
                "{threads} threads: {counts:?}"
            );
        }
    }

    #[test]
    fn the_bound_times_until_the_slowest_thread_is_done() {
        // One entry of 30 ms among instant ones: the wall time covers it,
        // wherever it falls among the threads.
        let took = share_out(8, 3, |entry| {
            if entry == 5 {
                std::thread::sleep(Duration::from_millis(30));
            }
        });
        assert!(took >= Duration::from_millis(30), "{took:?}");
    }

    #[test]
    fn nested_counts_its_tasks() {
        assert_eq!(Nested { levels: 1 }.tasks(), 1);
        assert_eq!(Nested { levels: 20 }.tasks(), 1_048_575);
    }
}
