//! The demo load generator: a driver thread spawning seeded tasks into the
//! demo pool at a rate, in one of the [`Pattern`]s, switchable live.
//!
//! Every task's parameters (how long it spins, whether it panics, how many
//! children it has) are drawn from one seeded generator on the driver thread
//! (fan-out children and the halves of a fork-join tree derive theirs from
//! their parent's), so the sequence of tasks a run produces is
//! reproducible; only the timing is the machine's.
//!
//! The driver bounds the tasks outstanding (spawned and not yet finished)
//! so that a rate the machine cannot keep up with shows up as a growing
//! queue, not as unbounded memory. Every task, panicking or not, is counted
//! when it ends, so [`LoadStats`] can show that nothing was lost.

use crate::pattern::Pattern;
use crate::rng::Rng;
use dreadpool_core::Handle;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// The driver's step.
const STEP: Duration = Duration::from_millis(5);
/// Most tasks outstanding before the driver holds back.
const MAX_OUTSTANDING: u64 = 50_000;
/// The prefix of every panic message of the panic storm.
pub const PANIC_PREFIX: &str = "panic storm:";
/// Share of panic-storm tasks that panic.
pub const PANIC_SHARE: f64 = 0.05;
/// Depth of a fan-out tree (2^(depth+1) - 1 tasks).
const FAN_OUT_DEPTH: u32 = 5;
/// Depth of a fork-join tree: 2^depth leaves under 2^depth - 1 joins, in
/// one task. The rate counts its leaves, so that the CPU a rate costs is
/// about that of the other patterns.
const FORK_JOIN_DEPTH: u32 = 5;
/// Period of the bursty pattern and the share of it that floods.
const BURST_PERIOD: Duration = Duration::from_millis(2_000);
const BURST_ON: Duration = Duration::from_millis(200);

/// What the driver and the tasks share.
#[derive(Debug, Default)]
struct Shared {
    pattern: AtomicU8,
    rate: AtomicU64,
    stop: AtomicBool,
    cancel: AtomicBool,
    spawned: AtomicU64,
    finished: AtomicU64,
    panicked: AtomicU64,
    held_back: AtomicU64,
}

/// The generator's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadStats {
    /// Tasks spawned (children of skewed and fan-out tasks included; a
    /// fork-join tree is one task, its joins are not tasks).
    pub spawned: u64,
    /// Tasks that ended, by returning or by panicking.
    pub finished: u64,
    /// Tasks that panicked on purpose.
    pub panicked: u64,
    /// Driver steps skipped because too many tasks were outstanding.
    pub held_back: u64,
}

/// Counts a task as finished when dropped: on return and on unwind alike.
struct Finish(Arc<Shared>);

impl Drop for Finish {
    fn drop(&mut self) {
        self.0.finished.fetch_add(1, Ordering::Relaxed);
    }
}

/// The running generator; stops (and cancels the tasks still queued) when
/// dropped.
#[derive(Debug)]
pub struct LoadGenerator {
    shared: Arc<Shared>,
    driver: Option<JoinHandle<()>>,
}

impl LoadGenerator {
    /// Starts driving `pool` with `pattern` at `rate` tasks per second, from
    /// `seed`.
    pub fn start(pool: Handle, pattern: Pattern, rate: u64, seed: u64) -> std::io::Result<Self> {
        let shared = Arc::new(Shared::default());
        shared.pattern.store(pattern.to_index(), Ordering::Relaxed);
        shared.rate.store(rate, Ordering::Relaxed);
        let s = Arc::clone(&shared);
        let driver = thread::Builder::new()
            .name("dreadpool-top-load".into())
            .spawn(move || drive(pool, s, seed))?;
        Ok(LoadGenerator {
            shared,
            driver: Some(driver),
        })
    }

    /// Switches the pattern.
    pub fn set_pattern(&self, pattern: Pattern) {
        self.shared
            .pattern
            .store(pattern.to_index(), Ordering::Relaxed);
    }

    /// Sets the rate, tasks per second (0 stops the load).
    pub fn set_rate(&self, rate: u64) {
        self.shared.rate.store(rate, Ordering::Relaxed);
    }

    /// The current pattern.
    pub fn pattern(&self) -> Pattern {
        Pattern::from_index(self.shared.pattern.load(Ordering::Relaxed))
    }

    /// The current rate.
    pub fn rate(&self) -> u64 {
        self.shared.rate.load(Ordering::Relaxed)
    }

    /// The counters so far.
    pub fn stats(&self) -> LoadStats {
        let s = &self.shared;
        LoadStats {
            spawned: s.spawned.load(Ordering::Relaxed),
            finished: s.finished.load(Ordering::Relaxed),
            panicked: s.panicked.load(Ordering::Relaxed),
            held_back: s.held_back.load(Ordering::Relaxed),
        }
    }

    /// Stops spawning and waits for the driver thread (a few milliseconds).
    /// Tasks already queued still run in full.
    pub fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(driver) = self.driver.take() {
            let _ = driver.join();
        }
    }

    /// Stops spawning and makes the tasks still queued return at once (and
    /// spawn nothing), so that the pool drains in milliseconds on quit.
    pub fn cancel(&mut self) {
        self.shared.cancel.store(true, Ordering::Relaxed);
        self.stop();
    }
}

impl Drop for LoadGenerator {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// A task's own parameters.
#[derive(Debug, Clone, Copy)]
struct Job {
    id: u64,
    spin: Duration,
    panics: bool,
}

fn spin(d: Duration, shared: &Shared) {
    let end = Instant::now() + d;
    let mut n = 0u32;
    while Instant::now() < end {
        std::hint::spin_loop();
        n = n.wrapping_add(1);
        if n.is_multiple_of(1024) && shared.cancel.load(Ordering::Relaxed) {
            return;
        }
    }
}

fn run(job: Job, shared: &Arc<Shared>) {
    let _finish = Finish(Arc::clone(shared));
    if shared.cancel.load(Ordering::Relaxed) {
        return;
    }
    spin(job.spin, shared);
    if job.panics {
        shared.panicked.fetch_add(1, Ordering::Relaxed);
        panic!("{PANIC_PREFIX} task {} failed on purpose", job.id);
    }
}

fn spawn_job(pool: &Handle, shared: &Arc<Shared>, job: Job) -> bool {
    shared.spawned.fetch_add(1, Ordering::Relaxed);
    let s = Arc::clone(shared);
    if pool.try_spawn(move || run(job, &s)).is_err() {
        // The pool shut down: the task never ran and never will.
        shared.spawned.fetch_sub(1, Ordering::Relaxed);
        return false;
    }
    true
}

fn micros(rng: &mut Rng, low: u64, high: u64) -> Duration {
    Duration::from_micros(rng.range(low, high))
}

/// A fan-out node: spins, then spawns its two children into its own
/// worker's local queue, until `depth` reaches zero.
fn fan_out(pool: Handle, shared: Arc<Shared>, seed: u64, depth: u32) {
    let _finish = Finish(Arc::clone(&shared));
    if shared.cancel.load(Ordering::Relaxed) {
        return;
    }
    let mut rng = Rng::new(seed);
    spin(micros(&mut rng, 20, 60), &shared);
    if depth == 0 {
        return;
    }
    for _ in 0..2 {
        let child = rng.next_u64();
        let (p, s) = (pool.clone(), Arc::clone(&shared));
        shared.spawned.fetch_add(1, Ordering::Relaxed);
        if pool
            .try_spawn(move || fan_out(p, s, child, depth - 1))
            .is_err()
        {
            shared.spawned.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

fn tree_size(depth: u32) -> u64 {
    (1u64 << (depth + 1)) - 1
}

/// A fork-join node, inside one task: a leaf spins; an inner node joins
/// its two halves (`dreadpool::join`), which an idle worker may take.
fn fork_join(shared: &Shared, seed: u64, depth: u32) {
    if shared.cancel.load(Ordering::Relaxed) {
        return;
    }
    let mut rng = Rng::new(seed);
    if depth == 0 {
        spin(micros(&mut rng, 20, 60), shared);
        return;
    }
    let (left, right) = (rng.next_u64(), rng.next_u64());
    dreadpool_core::join(
        || fork_join(shared, left, depth - 1),
        || fork_join(shared, right, depth - 1),
    );
}

fn drive(pool: Handle, shared: Arc<Shared>, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut next_id = 0u64;
    let mut budget = 0.0f64;
    let started = Instant::now();
    let mut last = started;
    let mut pattern = Pattern::from_index(shared.pattern.load(Ordering::Relaxed));
    let mut next_step = started;
    while !shared.stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        let dt = now.duration_since(last).min(Duration::from_millis(100));
        last = now;
        let current = Pattern::from_index(shared.pattern.load(Ordering::Relaxed));
        if current != pattern {
            pattern = current;
            budget = 0.0;
        }
        let rate = shared.rate.load(Ordering::Relaxed) as f64;
        let outstanding = shared
            .spawned
            .load(Ordering::Relaxed)
            .saturating_sub(shared.finished.load(Ordering::Relaxed));
        if outstanding > MAX_OUTSTANDING {
            shared.held_back.fetch_add(1, Ordering::Relaxed);
            budget = 0.0;
        } else {
            let rate = if pattern == Pattern::Bursty {
                let phase = now.duration_since(started).as_nanos() % BURST_PERIOD.as_nanos();
                if phase < BURST_ON.as_nanos() {
                    rate * (BURST_PERIOD.as_secs_f64() / BURST_ON.as_secs_f64())
                } else {
                    0.0
                }
            } else {
                rate
            };
            budget += rate * dt.as_secs_f64();
            let mut id = || {
                next_id += 1;
                next_id
            };
            match pattern {
                Pattern::Steady | Pattern::Bursty | Pattern::Mixed | Pattern::PanicStorm => {
                    while budget >= 1.0 {
                        budget -= 1.0;
                        let long = pattern == Pattern::Mixed && rng.chance(0.05);
                        let job = Job {
                            id: id(),
                            spin: if long {
                                micros(&mut rng, 2_000, 10_000)
                            } else {
                                micros(&mut rng, 50, 150)
                            },
                            panics: pattern == Pattern::PanicStorm && rng.chance(PANIC_SHARE),
                        };
                        if !spawn_job(&pool, &shared, job) {
                            return;
                        }
                    }
                }
                Pattern::Skewed => {
                    // One parent per step spawns the step's tasks into its
                    // own worker's local queue and keeps that worker busy:
                    // the others get work only by stealing.
                    let n = budget.floor() as u64;
                    budget -= n as f64;
                    if n > 0 {
                        let jobs: Vec<Job> = (0..n)
                            .map(|_| Job {
                                id: id(),
                                spin: micros(&mut rng, 50, 150),
                                panics: false,
                            })
                            .collect();
                        let (p, s) = (pool.clone(), Arc::clone(&shared));
                        shared.spawned.fetch_add(1, Ordering::Relaxed);
                        let parent = move || {
                            let _finish = Finish(Arc::clone(&s));
                            for job in jobs {
                                spawn_job(&p, &s, job);
                            }
                            spin(Duration::from_micros(200), &s);
                        };
                        if pool.try_spawn(parent).is_err() {
                            return;
                        }
                    }
                }
                Pattern::ForkJoin => {
                    let leaves = (1u64 << FORK_JOIN_DEPTH) as f64;
                    while budget >= leaves {
                        budget -= leaves;
                        let s = Arc::clone(&shared);
                        let root = rng.next_u64();
                        shared.spawned.fetch_add(1, Ordering::Relaxed);
                        let tree = move || {
                            let _finish = Finish(Arc::clone(&s));
                            fork_join(&s, root, FORK_JOIN_DEPTH);
                        };
                        if pool.try_spawn(tree).is_err() {
                            return;
                        }
                    }
                }
                Pattern::FanOut => {
                    let size = tree_size(FAN_OUT_DEPTH) as f64;
                    while budget >= size {
                        budget -= size;
                        let (p, s) = (pool.clone(), Arc::clone(&shared));
                        let root = rng.next_u64();
                        shared.spawned.fetch_add(1, Ordering::Relaxed);
                        if pool
                            .try_spawn(move || fan_out(p, s, root, FAN_OUT_DEPTH))
                            .is_err()
                        {
                            return;
                        }
                    }
                }
            }
        }
        next_step += STEP;
        let now = Instant::now();
        if next_step > now {
            thread::sleep(next_step - now);
        } else if now - next_step > Duration::from_millis(100) {
            next_step = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dreadpool_core::ThreadPoolBuilder;

    fn wait_until(what: &str, done: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !done() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn every_pattern_runs_and_nothing_is_lost() {
        let pool = ThreadPoolBuilder::new()
            .with_threads(2)
            .with_thread_name("load-test")
            .with_panic_handler(|_| {})
            .build();
        let mut load = LoadGenerator::start(pool.handle(), Pattern::Steady, 2_000, 7).unwrap();
        for pattern in Pattern::ALL {
            load.set_pattern(pattern);
            assert_eq!(load.pattern(), pattern);
            let before = load.stats().spawned;
            wait_until(pattern.name(), || load.stats().spawned > before + 20);
        }
        load.stop();
        pool.join();
        let stats = load.stats();
        assert_eq!(stats.spawned, stats.finished, "{stats:?}");
        assert!(stats.panicked > 0 || pool.panic_count() == 0);
        assert_eq!(pool.panic_count() as u64, stats.panicked);
    }

    #[test]
    fn the_fork_join_pattern_forks_a_whole_tree_of_joins_per_task() {
        let pool = ThreadPoolBuilder::new()
            .with_threads(2)
            .with_thread_name("load-fj")
            .build();
        let mut load = LoadGenerator::start(pool.handle(), Pattern::ForkJoin, 5_000, 3).unwrap();
        wait_until("fork-join trees", || load.stats().finished > 20);
        load.stop();
        pool.join();
        let stats = load.stats();
        assert_eq!(stats.spawned, stats.finished, "{stats:?}");
        let m = pool.metrics();
        let joins: u64 = m.workers.iter().map(|w| w.joins).sum();
        let joins_per_tree = (1u64 << FORK_JOIN_DEPTH) - 1;
        assert_eq!(joins, stats.spawned * joins_per_tree, "{m:#?}");
        let shared: u64 = m.workers.iter().map(|w| w.forks_shared).sum();
        let stolen: u64 = m.workers.iter().map(|w| w.forks_stolen).sum();
        assert!(shared > 0 && stolen <= shared, "{m:#?}");
    }

    #[test]
    fn rate_zero_spawns_nothing_and_cancel_drains_fast() {
        let pool = ThreadPoolBuilder::new().with_threads(2).build();
        let mut load = LoadGenerator::start(pool.handle(), Pattern::Mixed, 0, 1).unwrap();
        thread::sleep(Duration::from_millis(30));
        assert_eq!(load.stats().spawned, 0);
        load.set_rate(50_000);
        assert_eq!(load.rate(), 50_000);
        wait_until("a backlog", || load.stats().spawned > 1_000);
        load.cancel();
        let started = Instant::now();
        pool.join();
        assert!(started.elapsed() < Duration::from_secs(5));
        let stats = load.stats();
        assert_eq!(stats.spawned, stats.finished);
    }
}
