//! Several pools in one process (issue 18): two pools, each with as many
//! threads as CPUs, fed external spawns at once; and an idle pool beside a
//! busy one.
//!
//! Completions are counted per pool ([`PoolTally`]), each thread bumping a
//! counter of its own as [`crate::tally`] does, so that each pool's end is
//! seen on its own. The pool alone is timed with the same tally, so the
//! ratio compares like with like.

use crate::contenders::{PairScenario, Spawner};
use crossbeam_utils::CachePadded;
use std::cell::RefCell;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

type Shard = &'static CachePadded<AtomicU64>;

/// One pool's completion count, sharded by thread.
#[derive(Default)]
pub struct PoolTally {
    shards: Mutex<Vec<Shard>>,
}

thread_local! {
    /// This thread's shard in each tally it counted for.
    static MINE: RefCell<Vec<(usize, Shard)>> = const { RefCell::new(Vec::new()) };
}

/// The first pool's tally and the second's, reused from run to run.
static TALLY_A: PoolTally = PoolTally::new();
static TALLY_B: PoolTally = PoolTally::new();

impl PoolTally {
    /// An empty tally.
    pub const fn new() -> Self {
        PoolTally {
            shards: Mutex::new(Vec::new()),
        }
    }

    /// Counts one finished task on the calling thread.
    #[inline]
    pub fn done(&'static self) {
        let key = self as *const PoolTally as usize;
        MINE.with(|mine| {
            let mut mine = mine.borrow_mut();
            let shard = match mine.iter().find(|(k, _)| *k == key) {
                Some(&(_, shard)) => shard,
                None => {
                    let shard: Shard = Box::leak(Box::new(CachePadded::new(AtomicU64::new(0))));
                    self.shards
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(shard);
                    mine.push((key, shard));
                    shard
                }
            };
            // Single writer (see `tally`).
            shard.store(shard.load(Ordering::Relaxed) + 1, Ordering::Release);
        });
    }

    /// Tasks counted so far.
    pub fn total(&self) -> u64 {
        self.shards
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|s| s.load(Ordering::Acquire))
            .sum()
    }

    /// Waits (polling, with short sleeps) until `target` tasks are counted.
    pub fn wait_until(&self, target: u64) -> Instant {
        loop {
            let now = Instant::now();
            if self.total() >= target {
                return now;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

/// What a tiny task reads, as in the external scenario.
static WORD: AtomicU64 = AtomicU64::new(1);

/// Spawns `tasks` tiny tasks into `pool` from this thread and waits for
/// them; the time from `start` to the last completion.
fn feed<P: Spawner>(
    pool: &'static P,
    tally: &'static PoolTally,
    tasks: u64,
    start: Instant,
) -> Duration {
    let target = tally.total() + tasks;
    let word = &WORD;
    for _ in 0..tasks {
        pool.spawn(move || {
            black_box(word.load(Ordering::Relaxed));
            tally.done();
        });
    }
    tally.wait_until(target) - start
}

/// Two pools fed external spawns, first one alone, then both at once.
#[derive(Debug, Clone, Copy)]
pub struct TwoPools {
    /// Tasks per pool and run.
    pub tasks: u64,
}

/// What [`TwoPools`] measured, in nanoseconds per task.
#[derive(Debug, Clone, Copy)]
pub struct PairTimes {
    /// The first pool fed alone.
    pub alone: f64,
    /// The first pool, while the second was fed too.
    pub a: f64,
    /// The second pool, while the first was fed too.
    pub b: f64,
}

impl PairTimes {
    /// Both pools' tasks per second together, over one pool's alone.
    pub fn combined_over_alone(&self) -> f64 {
        (1.0 / self.a + 1.0 / self.b) * self.alone
    }

    /// The slower pool's share of the combined throughput.
    pub fn smaller_share(&self) -> f64 {
        let (ra, rb) = (1.0 / self.a, 1.0 / self.b);
        ra.min(rb) / (ra + rb)
    }
}

impl PairScenario for TwoPools {
    type Output = PairTimes;

    fn run<P: Spawner>(&self, a: &'static P, b: &'static P, _threads: usize) -> PairTimes {
        let per_task = |d: Duration| d.as_nanos() as f64 / self.tasks as f64;
        let alone = per_task(feed(a, &TALLY_A, self.tasks, Instant::now()));
        let (ta, tb) = together((a, &TALLY_A), (b, &TALLY_B), self.tasks);
        PairTimes {
            alone,
            a: per_task(ta),
            b: per_task(tb),
        }
    }
}

/// An idle pool beside a busy one: the idle pool's CPU while the other
/// runs external spawns flat out.
#[derive(Debug, Clone, Copy)]
pub struct IdleBeside {
    /// Tasks per external run on the busy pool.
    pub tasks: u64,
    /// How long the busy pool runs.
    pub window: Duration,
    /// The idle pool's thread name prefix.
    pub idle_prefix: &'static str,
}

impl PairScenario for IdleBeside {
    /// Milliseconds of CPU per second, if procfs could tell.
    type Output = Option<f64>;

    fn run<P: Spawner>(&self, busy: &'static P, idle: &'static P, _threads: usize) -> Option<f64> {
        // Wake the idle pool once, then let it fall asleep.
        feed(idle, &TALLY_B, 1_000, Instant::now());
        std::thread::sleep(Duration::from_millis(100));
        idle_beside_busy(busy, &TALLY_A, self.tasks, self.idle_prefix, self.window)
    }
}

/// Two pools fed at once by two threads: each pool's time from the common
/// start to its last completion.
fn together<P: Spawner>(
    a: (&'static P, &'static PoolTally),
    b: (&'static P, &'static PoolTally),
    tasks: u64,
) -> (Duration, Duration) {
    let barrier = Barrier::new(2);
    let (took_a, took_b) = std::thread::scope(|scope| {
        let other = scope.spawn(|| {
            barrier.wait();
            feed(b.0, b.1, tasks, Instant::now())
        });
        barrier.wait();
        let mine = feed(a.0, a.1, tasks, Instant::now());
        (mine, other.join().expect("the second feeder ends"))
    });
    (took_a, took_b)
}

/// CPU time of this process's threads whose names start with `prefix`, from
/// `/proc/self/task/*/schedstat` (nanoseconds on the CPU). `None` without
/// procfs.
pub fn threads_cpu(prefix: &str) -> Option<Duration> {
    let mut total = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path();
        let Ok(name) = std::fs::read_to_string(path.join("comm")) else {
            continue;
        };
        if !name.trim_end().starts_with(prefix) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(path.join("schedstat")) else {
            continue;
        };
        total += stat
            .split_whitespace()
            .next()
            .and_then(|ns| ns.parse::<u64>().ok())
            .unwrap_or(0);
    }
    Some(Duration::from_nanos(total))
}

/// The idle pool's CPU, in milliseconds per second, while `busy` runs
/// `tasks` external spawns over and over for `window`. The idle pool's
/// threads are those named `idle_prefix`.
fn idle_beside_busy<P: Spawner>(
    busy: &'static P,
    tally: &'static PoolTally,
    tasks: u64,
    idle_prefix: &str,
    window: Duration,
) -> Option<f64> {
    let before = threads_cpu(idle_prefix)?;
    let start = Instant::now();
    while start.elapsed() < window {
        feed(busy, tally, tasks, Instant::now());
    }
    let (cpu, wall) = (threads_cpu(idle_prefix)? - before, start.elapsed());
    Some(cpu.as_secs_f64() * 1e3 / wall.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_cpu_sees_a_named_thread_spin() {
        let spun = Duration::from_millis(30);
        let (tx, rx) = std::sync::mpsc::channel();
        let spinner = std::thread::Builder::new()
            .name("tp-cpu-probe".into())
            .spawn(move || {
                // Spins for 30 ms of its own CPU time, not of the clock's:
                // on a loaded machine 30 ms of wall time held as little as
                // 9 ms of CPU.
                while own_cpu() < spun {
                    std::hint::spin_loop();
                }
                // Measured while this thread still exists.
                tx.send(()).unwrap();
                std::thread::park();
            })
            .unwrap();
        rx.recv().unwrap();
        let cpu = threads_cpu("tp-cpu-probe").expect("procfs");
        spinner.thread().unpark();
        spinner.join().unwrap();
        // The thread's clock and procfs read the scheduler's one sum of the
        // thread's time on a CPU, so procfs shows the whole spin; and
        // nobody else's threads were counted.
        assert!(cpu >= spun, "{cpu:?}");
        assert!(cpu < Duration::from_secs(5), "{cpu:?}");
        assert_eq!(threads_cpu("no-such-thread-name"), Some(Duration::ZERO));
    }

    /// The calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`).
    fn own_cpu() -> Duration {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `clock_gettime` only writes into the struct we pass.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
        assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
        Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
    }
}
