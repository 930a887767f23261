//! The structural costs that decide how dreadpool behaves on many cores,
//! counted rather than timed, at several worker counts (issue 26): who wakes
//! whom, how often the global queue and peers' deques are polled, and how
//! large the stolen and pulled batches are. Counts, unlike times, mean the
//! same on a 2-CPU host as on a 16-core one, which is what lets a model
//! carry them from one to the other (`BENCHMARKS.md`, "Sixteen cores").
//!
//! ```text
//! structure [--threads 2,4,8,16] [--tasks N] [--reps R] [--global-shards N] [SCENARIO...]
//! ```
//!
//! SCENARIO is `external` (one outside thread spawns N tiny tasks), `fanout`
//! (one task spawns N), `producers` (one outside thread per worker, N in
//! all, released together), or `nqueens` (coarse fork-join, below); default:
//! all four. Each runs R times (default 10, N 100,000 by default) per
//! worker count, each on a fresh pool with the `metrics` counters and the
//! flight recorder at its `Scheduler` level (wakes are recorded on the
//! waker's track, so a recording tells the spawner's wakes from the
//! workers'), and prints one Markdown row per worker count (the R runs'
//! counts added up, the median time), per 1,000 tasks:
//!
//! - *spawner wakes*: workers woken by a spawning thread outside the pool:
//!   every wake counted by the woken workers (`wakeups`, `noop_wakeups`)
//!   less the wakes on the workers' own tracks, so that runs of a million
//!   tasks count them all (an outside thread's ring keeps 4,096 events, and
//!   the recording's own count of them stops there; a wake is missed if
//!   its worker had not yet looked for work when the run ended, or if it
//!   reached a worker that was taking its registration back, which counts
//!   a cancelled sleep instead: at most one a run in checks against
//!   recordings that lost nothing); for `fanout`, the wakes of the
//!   spawning task's own worker, from the recording;
//! - *worker wakes*: workers woken by other workers (a searcher that found
//!   work waking the next, a thief waking a fork's owner);
//! - *sleeps*, *cancelled sleeps* (registrations to sleep that the
//!   worker's second look called off, having found work: each takes the
//!   idle list's lock twice and writes the state word every spawn reads,
//!   like a sleep and its wake, without a park), *no-op wakes* (woken,
//!   found nothing);
//! - *global pulls* (batches taken from the global queue) and the tasks per
//!   pull; *empty global polls* (looks at the global queue that found it
//!   empty: each reads the lines outside spawns write; the second look
//!   before a sleep is not among them); *steal attempts* (a poll of a
//!   peer's deque), *tasks stolen* (moved from one worker's deque to
//!   another's, so a task stolen twice counts twice) and tasks per stolen
//!   batch.
//!
//! The counts are the run's alone: each pool's start-up (every worker
//! looks for work once and sleeps) is over, and subtracted, before the
//! clock starts.
//!
//! `nqueens` is `compare`'s coarse fork-join row, nqueens(12) in
//! `ThreadPool::install` (joins over the columns of its first rows, serial below),
//! counted per run in a table of its own: how fast a burst of coarse work
//! reaches every worker is a question of how many wakes must happen one
//! after the other, so it prints the *wake depth* (the longest chain of
//! wakes, each woken by the one before it, from the thread that called
//! `install` to a worker's first wake in the run), the workers woken, the
//! wakes that found nothing, the forks shared and stolen, and the sleeps of
//! joiners waiting for a thief (each ends with the thief's wake). On real
//! cores each step of the chain, and each such sleep on the computation's
//! critical path, costs a wake's latency.
//!
//! `--global-shards N` builds the pools with the global queue in N shards
//! (`ThreadPoolBuilder::with_global_queue_shards`; default 1).
//!
//! Needs `--features metrics,recorder`.

use dreadpool::{
    EventKind, RecordLevel, Recording, ThreadPool, ThreadPoolBuilder, Track, WorkerActivity,
    WorkerState,
};
use dreadpool_bench::fork_join::{nqueens, queens_reference, DreadpoolJoin};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// What the tiny tasks read.
static WORD: AtomicU64 = AtomicU64::new(1);

fn tiny() {
    black_box(WORD.load(Ordering::Relaxed));
}

/// Events each ring keeps: enough for a million tasks' scheduler events on
/// any worker (the run reports it if some were lost anyway).
const RING_EVENTS: usize = 1 << 19;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Scenario {
    External,
    Fanout,
    Producers,
    Nqueens,
}

/// The board of the coarse fork-join scenario (`compare`'s nqueens row).
const QUEENS: u32 = 12;

impl Scenario {
    const ALL: [Scenario; 4] = [
        Scenario::External,
        Scenario::Fanout,
        Scenario::Producers,
        Scenario::Nqueens,
    ];

    fn name(self) -> &'static str {
        match self {
            Scenario::External => "external",
            Scenario::Fanout => "fanout",
            Scenario::Producers => "producers",
            Scenario::Nqueens => "nqueens",
        }
    }

    fn parse(name: &str) -> Result<Scenario, String> {
        Scenario::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| {
                format!("unknown scenario {name:?} (external, fanout, producers, nqueens)")
            })
    }

    /// Spawns `tasks` tiny tasks into `pool` this scenario's way and waits
    /// until they ran.
    fn run(self, pool: &Arc<ThreadPool>, tasks: u64) {
        match self {
            Scenario::External => {
                for _ in 0..tasks {
                    pool.spawn(tiny);
                }
            }
            Scenario::Fanout => {
                let inner = Arc::clone(pool);
                pool.spawn(move || {
                    for _ in 0..tasks {
                        inner.spawn(tiny);
                    }
                });
            }
            Scenario::Producers => {
                let producers = pool.threads() as u64;
                let start = Arc::new(Barrier::new(producers as usize));
                let threads: Vec<_> = (0..producers)
                    .map(|p| {
                        let pool = Arc::clone(pool);
                        let start = Arc::clone(&start);
                        // The first producers take one more when N does not divide.
                        let share = tasks / producers + u64::from(p < tasks % producers);
                        std::thread::spawn(move || {
                            start.wait();
                            for _ in 0..share {
                                pool.spawn(tiny);
                            }
                        })
                    })
                    .collect();
                for thread in threads {
                    thread.join().expect("a producer panicked");
                }
            }
            Scenario::Nqueens => {
                let solutions = pool.install(|| nqueens::<DreadpoolJoin>(QUEENS));
                assert_eq!(Some(solutions), queens_reference(QUEENS));
            }
        }
        pool.join();
    }
}

/// What one run counted.
struct Counts {
    ns_per_task: f64,
    spawner_wakes: u64,
    worker_wakes: u64,
    sleeps: u64,
    cancelled_sleeps: u64,
    noop_wakes: u64,
    global_pulls: u64,
    pulled: u64,
    empty_global_polls: u64,
    steal_attempts: u64,
    steals: u64,
    stolen: u64,
    forks_shared: u64,
    forks_stolen: u64,
    /// Each run's wake depth (`nqueens`): the longest chain of wakes.
    wake_depths: Vec<u32>,
    /// Workers woken at least once, added over the runs.
    workers_woken: u64,
    /// Sleeps of a worker waiting inside a task (at a join whose fork a
    /// thief runs, in `nqueens`): each ends with a wake by the thief.
    wait_sleeps: u64,
    lost_events: u64,
}

fn measure(scenario: Scenario, threads: usize, options: &Options) -> Counts {
    // A fork-join run is timed whole (`ns_per_task` is then per run).
    let tasks = if scenario == Scenario::Nqueens {
        1
    } else {
        options.tasks
    };
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .with_threads(threads)
            .with_global_queue_shards(options.global_shards)
            .with_record_level(RecordLevel::Scheduler)
            .with_record_capacity(RING_EVENTS)
            .build(),
    );
    // Every worker started and asleep before the clock starts, and what
    // the start-up counted left out (see `settle`).
    pool.join();
    settle(&pool);
    let before = pool.metrics();
    let recorded_from_ns = pool.recording().taken_at_ns();
    let started = Instant::now();
    scenario.run(&pool, tasks);
    let took = started.elapsed();
    let metrics = pool.metrics();
    let recording = pool.recording();
    let mut counts = Counts {
        ns_per_task: took.as_nanos() as f64 / tasks as f64,
        spawner_wakes: 0,
        worker_wakes: 0,
        sleeps: 0,
        cancelled_sleeps: 0,
        noop_wakes: 0,
        global_pulls: 0,
        pulled: 0,
        empty_global_polls: 0,
        steal_attempts: 0,
        steals: 0,
        stolen: 0,
        forks_shared: 0,
        forks_stolen: 0,
        wake_depths: Vec::new(),
        workers_woken: 0,
        wait_sleeps: 0,
        lost_events: recording.lost_events(),
    };
    for (worker, was) in metrics.workers.iter().zip(&before.workers) {
        counts.sleeps += worker.sleeps - was.sleeps;
        counts.empty_global_polls += worker.global_empty_polls - was.global_empty_polls;
        counts.cancelled_sleeps += worker.sleeps_cancelled - was.sleeps_cancelled;
        counts.noop_wakes += worker.noop_wakeups - was.noop_wakeups;
        counts.steal_attempts += worker.steals_attempted - was.steals_attempted;
        counts.steals += worker.steals_succeeded - was.steals_succeeded;
        counts.stolen += worker.tasks_stolen - was.tasks_stolen;
        counts.forks_shared += worker.forks_shared - was.forks_shared;
        counts.forks_stolen += worker.forks_stolen - was.forks_stolen;
    }
    count_events(&recording, recorded_from_ns, scenario, &mut counts);
    if scenario != Scenario::Fanout {
        // Every wake's worker counts it (`wakeups`, `noop_wakeups`), so the
        // wakes made outside the pool are those counted less those on the
        // workers' tracks. The recording alone would count them short
        // wherever the outside threads' rings overflowed (4,096 events, a
        // run of a million tasks at four wakes per 1,000).
        let woken: u64 = metrics
            .workers
            .iter()
            .zip(&before.workers)
            .map(|(w, was)| w.wakeups + w.noop_wakeups - was.wakeups - was.noop_wakeups)
            .sum();
        counts.spawner_wakes = woken.saturating_sub(counts.worker_wakes);
    }
    let depths = wake_depths(&recording, recorded_from_ns);
    counts.workers_woken = depths.iter().flatten().count() as u64;
    counts
        .wake_depths
        .push(depths.iter().flatten().copied().max().unwrap_or(0));
    counts
}

/// Each worker's wake depth in `recording`: 1 if its first wake came from
/// a thread outside the pool, one more than its waker's if from a worker
/// (0 for a waker never woken: it was awake when the run began); `None` for
/// a worker never woken; from the events at or after `from_ns` (the
/// run's). Events come oldest first, so a waker's depth is
/// known before it wakes anyone.
fn wake_depths(recording: &Recording, from_ns: u64) -> Vec<Option<u32>> {
    let mut depths = vec![None; recording.worker_names().len()];
    for event in recording.events().iter().filter(|e| e.time_ns >= from_ns) {
        if let EventKind::Unpark { worker } = event.kind {
            let depth = match event.track {
                Track::Outside(_) => 1,
                Track::Worker(waker) => depths[waker].unwrap_or(0) + 1,
            };
            depths[worker].get_or_insert(depth);
        }
    }
    depths
}

/// The recording's wakes by waker, and its global pulls, from the events
/// at or after `from_ns` (the run's; those before are the start-up's).
fn count_events(recording: &Recording, from_ns: u64, scenario: Scenario, counts: &mut Counts) {
    // In the fan-out the spawner is the worker running the spawning task:
    // the worker that woke most is taken to be it.
    let mut wakes_by_worker = vec![0u64; recording.worker_names().len()];
    // How deep in nested waits each worker is.
    let mut waiting = vec![0u32; recording.worker_names().len()];
    for event in recording.events().iter().filter(|e| e.time_ns >= from_ns) {
        match (event.kind, event.track) {
            (EventKind::WaitBegin, Track::Worker(w)) => waiting[w] += 1,
            (EventKind::WaitEnd, Track::Worker(w)) => waiting[w] = waiting[w].saturating_sub(1),
            (EventKind::State(WorkerActivity::Sleeping), Track::Worker(w)) if waiting[w] > 0 => {
                counts.wait_sleeps += 1;
            }
            (EventKind::Unpark { .. }, Track::Outside(_)) => counts.spawner_wakes += 1,
            (EventKind::Unpark { .. }, Track::Worker(w)) => wakes_by_worker[w] += 1,
            (EventKind::GlobalPull { batch, .. }, _) => {
                counts.global_pulls += 1;
                counts.pulled += u64::from(batch);
            }
            _ => {}
        }
    }
    let all: u64 = wakes_by_worker.iter().sum();
    if scenario == Scenario::Fanout {
        let spawner = wakes_by_worker.iter().copied().max().unwrap_or(0);
        counts.spawner_wakes += spawner;
        counts.worker_wakes = all - spawner;
    } else {
        counts.worker_wakes = all;
    }
}

/// Waits until every worker of the fresh `pool` is asleep. A worker that
/// starts looks for work once before its first sleep, polling each peer
/// not yet asleep: W(W-1)/2 polls of peers' deques in all (120 at 16
/// workers, counted), which no run's tasks caused. Counted as the run's,
/// they read as a cost per task that shrinks as runs grow (half of the
/// 0.24 per 1,000 tasks read at 16 workers in runs of a million), which is
/// how they were found. A bench's wait, so it polls; it gives up after ten
/// seconds.
fn settle(pool: &ThreadPool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pool
        .metrics()
        .workers
        .iter()
        .all(|w| w.state == WorkerState::Sleeping)
    {
        assert!(
            Instant::now() < deadline,
            "the workers of a fresh pool with no work did not all sleep within 10 s"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// `count` per 1,000 of `tasks`: to two decimals, or three below 0.1, where
/// a difference of one in the second decimal is a factor of two or more.
fn per_thousand(count: u64, tasks: u64) -> String {
    let value = count as f64 * 1000.0 / tasks as f64;
    if value < 0.1 {
        format!("{value:.3}")
    } else {
        format!("{value:.2}")
    }
}

fn ratio(a: u64, b: u64) -> String {
    if b == 0 {
        "-".to_string()
    } else {
        format!("{:.2}", a as f64 / b as f64)
    }
}

struct Options {
    threads: Vec<usize>,
    tasks: u64,
    reps: u32,
    global_shards: usize,
    scenarios: Vec<Scenario>,
}

impl Counts {
    /// Adds `other`'s counts to these (the time is handled by the caller).
    fn add(&mut self, other: &Counts) {
        self.spawner_wakes += other.spawner_wakes;
        self.worker_wakes += other.worker_wakes;
        self.sleeps += other.sleeps;
        self.cancelled_sleeps += other.cancelled_sleeps;
        self.noop_wakes += other.noop_wakes;
        self.global_pulls += other.global_pulls;
        self.pulled += other.pulled;
        self.empty_global_polls += other.empty_global_polls;
        self.steal_attempts += other.steal_attempts;
        self.steals += other.steals;
        self.stolen += other.stolen;
        self.forks_shared += other.forks_shared;
        self.forks_stolen += other.forks_stolen;
        self.wake_depths.extend_from_slice(&other.wake_depths);
        self.workers_woken += other.workers_woken;
        self.wait_sleeps += other.wait_sleeps;
        self.lost_events += other.lost_events;
    }
}

/// `reps` runs of `scenario` on `threads` workers: their counts added up,
/// and the median time.
fn measure_reps(scenario: Scenario, threads: usize, options: &Options) -> Counts {
    let reps = options.reps;
    let mut times = Vec::new();
    let mut total = measure(scenario, threads, options);
    times.push(total.ns_per_task);
    for _ in 1..reps {
        let run = measure(scenario, threads, options);
        times.push(run.ns_per_task);
        total.add(&run);
    }
    times.sort_by(f64::total_cmp);
    total.ns_per_task = times[times.len() / 2];
    total
}

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        threads: vec![2, 4, 8, 16],
        tasks: 100_000,
        reps: 10,
        global_shards: 1,
        scenarios: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--threads" => {
                let list = args.next().ok_or("--threads needs a list, e.g. 2,4,8,16")?;
                options.threads = list
                    .split(',')
                    .map(|n| match n.trim().parse::<usize>() {
                        Ok(n) if n > 0 => Ok(n),
                        _ => Err(format!("--threads: {n:?} is not a positive count")),
                    })
                    .collect::<Result<_, _>>()?;
            }
            "--tasks" => {
                let n = args.next().ok_or("--tasks needs a count")?;
                options.tasks = match n.parse::<u64>() {
                    Ok(n) if n > 0 => n,
                    _ => return Err(format!("--tasks: {n:?} is not a positive count")),
                };
            }
            "--reps" => {
                let n = args.next().ok_or("--reps needs a count")?;
                options.reps = match n.parse::<u32>() {
                    Ok(n) if n > 0 => n,
                    _ => return Err(format!("--reps: {n:?} is not a positive count")),
                };
            }
            "--global-shards" => {
                let n = args.next().ok_or("--global-shards needs a count")?;
                options.global_shards = match n.parse::<usize>() {
                    Ok(n) if (1..=dreadpool::MAX_GLOBAL_QUEUE_SHARDS).contains(&n) => n,
                    _ => {
                        return Err(format!(
                            "--global-shards: {n:?} is not a count from 1 to {}",
                            dreadpool::MAX_GLOBAL_QUEUE_SHARDS
                        ))
                    }
                };
            }
            "-h" | "--help" => {
                return Err(
                    "usage: structure [--threads 2,4,8,16] [--tasks N] [--reps R] [--global-shards N] [external|fanout|producers|nqueens ...]"
                        .to_string(),
                )
            }
            name => options.scenarios.push(Scenario::parse(name)?),
        }
    }
    if options.scenarios.is_empty() {
        options.scenarios = Scenario::ALL.to_vec();
    }
    Ok(options)
}

fn main() {
    let options = match parse_args() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "structure: {} runs a row, on {cpus} CPUs, global queue in {} shard(s)\n",
        options.reps, options.global_shards
    );
    let (spawns, forks): (Vec<_>, Vec<_>) = options
        .scenarios
        .iter()
        .partition(|&&s| s != Scenario::Nqueens);
    if !spawns.is_empty() {
        println!(
            "{} tasks a run; per 1,000 tasks unless a ratio\n",
            options.tasks
        );
        println!("| scenario | workers | ns/task | spawner wakes | worker wakes | sleeps | cancelled sleeps | no-op wakes | global pulls | tasks/pull | empty global polls | steal attempts | tasks stolen | tasks/stolen batch | lost events |");
        println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    }
    for &&scenario in &spawns {
        for &threads in &options.threads {
            let c = measure_reps(scenario, threads, &options);
            let t = options.tasks * u64::from(options.reps);
            println!(
                "| {} | {threads} | {:.1} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                scenario.name(),
                c.ns_per_task,
                per_thousand(c.spawner_wakes, t),
                per_thousand(c.worker_wakes, t),
                per_thousand(c.sleeps, t),
                per_thousand(c.cancelled_sleeps, t),
                per_thousand(c.noop_wakes, t),
                per_thousand(c.global_pulls, t),
                ratio(c.pulled, c.global_pulls),
                per_thousand(c.empty_global_polls, t),
                per_thousand(c.steal_attempts, t),
                per_thousand(c.stolen, t),
                ratio(c.stolen, c.steals),
                c.lost_events,
            );
        }
    }
    if !forks.is_empty() {
        if !spawns.is_empty() {
            println!();
        }
        println!("nqueens({QUEENS}) in `install`, per run (the wake depth: median and the most of the runs)\n");
        println!("| workers | ms | wake depth | most | workers woken | wakes | no-op wakes | cancelled sleeps | forks shared | forks stolen | joiners' sleeps | lost events |");
        println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for &threads in &options.threads {
            let mut c = measure_reps(Scenario::Nqueens, threads, &options);
            let runs = f64::from(options.reps);
            let per_run = |n: u64| format!("{:.1}", n as f64 / runs);
            c.wake_depths.sort_unstable();
            println!(
                "| {threads} | {:.2} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                c.ns_per_task / 1e6,
                c.wake_depths[c.wake_depths.len() / 2],
                c.wake_depths.last().copied().unwrap_or(0),
                per_run(c.workers_woken),
                per_run(c.spawner_wakes + c.worker_wakes),
                per_run(c.noop_wakes),
                per_run(c.cancelled_sleeps),
                per_run(c.forks_shared),
                per_run(c.forks_stolen),
                per_run(c.wait_sleeps),
                c.lost_events,
            );
        }
    }
}
