//! Each counter against a workload whose effect on it is known.
#![cfg(feature = "metrics")]

mod common;

use common::{Gate, HANG};
use dreadpool_core::{PanicPolicy, PoolMetrics, ThreadPool, ThreadPoolBuilder, WorkerState};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

fn pool(threads: usize) -> ThreadPool {
    ThreadPoolBuilder::new().with_threads(threads).build()
}

/// A pool that times one task in `sampling`.
fn sampled_pool(threads: usize, sampling: u32) -> ThreadPool {
    ThreadPoolBuilder::new()
        .with_threads(threads)
        .with_latency_sampling(sampling)
        .build()
}

/// Polls the metrics until `done` holds (or fails after `HANG`). For states
/// that the pool reaches on its own, such as every worker falling asleep.
fn wait_for(pool: &ThreadPool, what: &str, done: impl Fn(&PoolMetrics) -> bool) -> PoolMetrics {
    let deadline = Instant::now() + HANG;
    loop {
        let m = pool.metrics();
        if done(&m) {
            return m;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {m:#?}"
        );
        thread::yield_now();
    }
}

#[test]
fn tasks_run_sums_to_tasks_spawned_and_global_pulls_to_external_spawns() {
    let pool = pool(2);
    let handle = pool.handle();
    for _ in 0..1000 {
        let handle = handle.clone();
        pool.spawn(move || {
            for _ in 0..3 {
                handle.spawn(|| ());
            }
        });
    }
    pool.join();
    let m = pool.metrics();
    assert_eq!(m.tasks_spawned_external, 1000);
    assert_eq!(
        m.workers.iter().map(|w| w.tasks_spawned_local).sum::<u64>(),
        3000
    );
    assert_eq!(m.tasks_run(), 4000);
    // Every outside task left the global queue exactly once.
    assert_eq!(m.workers.iter().map(|w| w.global_pulls).sum::<u64>(), 1000);
    assert_eq!(m.tasks_pending, 0);
    assert_eq!(m.global_queue_depth, 0);
    assert!(m.workers.iter().all(|w| w.local_queue_depth == 0));
    assert_eq!(m.threads, 2);
    assert_eq!(m.name, "dreadpool");
}

#[test]
fn a_skewed_load_makes_the_other_workers_steal() {
    let pool = Arc::new(pool(2));
    let stolen = Arc::new(Gate::new());
    let (p, s) = (Arc::clone(&pool), Arc::clone(&stolen));
    pool.spawn(move || {
        let home = thread::current().id();
        for _ in 0..1000 {
            let s = Arc::clone(&s);
            p.spawn(move || {
                if thread::current().id() != home {
                    s.arrive();
                }
            });
        }
        // Hold this worker: its children can now only run elsewhere, and
        // only by being stolen from this worker's local queue.
        assert!(s.wait_for(1), "nobody stole from the busy worker");
    });
    pool.join();
    let m = pool.metrics();
    let home = m
        .workers
        .iter()
        .max_by_key(|w| w.tasks_spawned_local)
        .unwrap()
        .index;
    let thief = 1 - home;
    let t = &m.workers[thief];
    assert!(t.steals_succeeded > 0, "{t:#?}");
    assert!(t.steals_attempted >= t.steals_succeeded);
    assert!(t.stolen_from[home] > 0);
    assert_eq!(t.stolen_from[thief], 0, "a worker never steals from itself");
    for w in &m.workers {
        assert_eq!(w.tasks_stolen, w.stolen_from.iter().sum::<u64>());
    }
}

#[test]
fn an_idle_pool_reports_sleeping_workers() {
    let pool = pool(2);
    pool.spawn(|| ());
    pool.join();
    let m = wait_for(&pool, "all workers asleep", |m| {
        m.workers_in(WorkerState::Sleeping) == 2
    });
    assert!(m.workers.iter().all(|w| w.sleeps >= 1), "{m:#?}");
    // Wake them: one spawn into an all-asleep pool must wake someone.
    let before: u64 = m.workers.iter().map(|w| w.wakeups + w.noop_wakeups).sum();
    let (tx, rx) = mpsc::channel();
    pool.spawn(move || tx.send(()).unwrap());
    rx.recv_timeout(HANG).unwrap();
    let m = wait_for(&pool, "the woken worker to be counted", |m| {
        m.workers.iter().map(|w| w.wakeups).sum::<u64>() >= 1
    });
    let after: u64 = m.workers.iter().map(|w| w.wakeups + w.noop_wakeups).sum();
    assert!(after > before);
}

#[test]
fn panics_and_respawns_are_counted_per_worker() {
    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_panic_policy(PanicPolicy::Respawn)
        .build();
    for _ in 0..10 {
        pool.spawn(|| panic!("counted"));
    }
    pool.join();
    let m = pool.metrics();
    assert_eq!(m.panics, 10);
    assert_eq!(m.workers.iter().map(|w| w.panics).sum::<u64>(), 10);
    assert_eq!(m.workers.iter().map(|w| w.respawns).sum::<u64>(), 10);
    assert_eq!(m.tasks_run(), 10);

    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_panic_policy(PanicPolicy::Continue)
        .build();
    for _ in 0..10 {
        pool.spawn(|| panic!("counted"));
    }
    pool.join();
    let m = pool.metrics();
    assert_eq!(m.workers.iter().map(|w| w.panics).sum::<u64>(), 10);
    assert_eq!(m.workers.iter().map(|w| w.respawns).sum::<u64>(), 0);
}

#[test]
fn a_long_task_shows_as_running_and_busy_while_it_runs() {
    let pool = pool(1);
    let (release, wait) = mpsc::channel::<()>();
    let started = Arc::new(Gate::new());
    let s = Arc::clone(&started);
    pool.spawn(move || {
        s.arrive();
        let _ = wait.recv();
    });
    assert!(started.wait_for(1));
    let first = pool.metrics();
    assert_eq!(first.workers[0].state, WorkerState::Running);
    assert_eq!(first.tasks_pending, 1);
    // Let the clock move, then look again: busy time must have grown even
    // though the task has not finished.
    let t = Instant::now();
    while t.elapsed() < Duration::from_millis(2) {
        std::hint::spin_loop();
    }
    let second = pool.metrics();
    assert_eq!(second.workers[0].state, WorkerState::Running);
    assert!(
        second.workers[0].busy_duration > first.workers[0].busy_duration,
        "{:?} then {:?}",
        first.workers[0].busy_duration,
        second.workers[0].busy_duration
    );
    assert_eq!(second.tasks_run(), 0);
    release.send(()).unwrap();
    pool.join();
    assert_eq!(pool.metrics().tasks_run(), 1);
}

#[test]
fn queue_depths_are_live() {
    let pool = pool(1);
    let (release, wait) = mpsc::channel::<()>();
    let started = Arc::new(Gate::new());
    let s = Arc::clone(&started);
    let handle = pool.handle();
    pool.spawn(move || {
        for _ in 0..10 {
            handle.spawn(|| ());
        }
        s.arrive();
        let _ = wait.recv();
    });
    assert!(started.wait_for(1));
    for _ in 0..5 {
        pool.spawn(|| ());
    }
    let m = pool.metrics();
    assert_eq!(m.workers[0].local_queue_depth, 10);
    assert_eq!(m.global_queue_depth, 5);
    assert_eq!(m.tasks_pending, 16);
    release.send(()).unwrap();
    pool.join();
}

#[test]
fn latency_histograms_count_every_sampled_task() {
    let pool = sampled_pool(2, 1);
    let ran = Arc::new(AtomicUsize::new(0));
    for _ in 0..500 {
        let ran = Arc::clone(&ran);
        pool.spawn(move || {
            ran.fetch_add(1, Ordering::Relaxed);
        });
    }
    pool.join();
    let m = pool.metrics();
    assert_eq!(m.latency_sampling, 1);
    assert_eq!(m.schedule_delay().count(), 500);
    assert_eq!(m.run_time().count(), 500);
    assert!(m.run_time().quantile(0.5) < Duration::from_secs(1));

    // One in 10 per spawning thread: this thread spawns 500.
    let pool = sampled_pool(2, 10);
    for _ in 0..500 {
        pool.spawn(|| ());
    }
    pool.join();
    assert_eq!(pool.metrics().run_time().count(), 50);

    // 0 turns timing off.
    let pool = sampled_pool(2, 0);
    for _ in 0..100 {
        pool.spawn(|| ());
    }
    pool.join();
    assert_eq!(pool.metrics().run_time().count(), 0);
}

#[test]
fn a_worker_times_one_in_n_of_its_own_spawns() {
    let pool = Arc::new(sampled_pool(2, 10));
    // The parent is spawned from a fresh thread, whose first spawn is not
    // picked (one in 10 per spawning thread: its 10th would be); inside, the
    // worker picks its 1st, 11th, ... 491st spawn: 50 of 500.
    let inner = Arc::clone(&pool);
    std::thread::spawn(move || {
        let spawner = Arc::clone(&inner);
        inner.spawn(move || {
            for _ in 0..500 {
                spawner.spawn(|| ());
            }
        });
    })
    .join()
    .unwrap();
    pool.join();
    assert_eq!(pool.metrics().run_time().count(), 50);
    assert_eq!(pool.metrics().schedule_delay().count(), 50);
}

#[test]
fn timing_every_task_holds_when_one_thread_feeds_two_pools() {
    // One thread alternates between a pool that times every task and one
    // that times one spawn in 1000 of this thread's: the first must still
    // time all of its own.
    let every = sampled_pool(1, 1);
    let rare = sampled_pool(1, 1000);
    for _ in 0..300 {
        every.spawn(|| ());
        rare.spawn(|| ());
    }
    every.join();
    rare.join();
    assert_eq!(every.metrics().run_time().count(), 300);
    assert!(rare.metrics().run_time().count() <= 1);
}

#[test]
fn run_time_reflects_how_long_tasks_run() {
    let pool = sampled_pool(1, 1);
    for _ in 0..20 {
        pool.spawn(|| {
            let t = Instant::now();
            while t.elapsed() < Duration::from_millis(1) {
                std::hint::spin_loop();
            }
        });
    }
    pool.join();
    let run = pool.metrics().run_time();
    // Each task ran at least 1 ms (a loaded machine only makes it longer).
    assert!(
        run.quantile(0.0) >= Duration::from_micros(900),
        "{:?}",
        run.quantile(0.0)
    );
}

#[test]
fn handles_read_the_same_metrics() {
    let pool = pool(2);
    let handle = pool.handle();
    pool.spawn(|| ());
    pool.join();
    assert_eq!(handle.metrics().tasks_run(), 1);
    drop(pool);
    // After shutdown the workers are reported stopped.
    let m = handle.metrics();
    assert_eq!(m.workers_in(WorkerState::Stopped), 2, "{m:#?}");
}

/// Snapshots taken while the pool runs flat out read counts that never go
/// backwards. The spawner waits for the reader's first snapshot before it
/// starts, and halfway through for one more, so that at least one is taken
/// while tasks are queued, however the two threads are scheduled (a free
/// race let the spawns finish before the reader's first look on a loaded
/// host).
#[test]
fn snapshots_while_the_pool_runs_flat_out() {
    const TASKS: u64 = 200_000;
    let pool = Arc::new(pool(2));
    let stop = Arc::new(AtomicBool::new(false));
    let snapshots = Arc::new(AtomicUsize::new(0));
    let reader = {
        let (pool, stop, snapshots) =
            (Arc::clone(&pool), Arc::clone(&stop), Arc::clone(&snapshots));
        thread::spawn(move || {
            let mut last = 0;
            while !stop.load(Ordering::Relaxed) {
                let run = pool.metrics().tasks_run();
                assert!(run >= last, "tasks_run went backwards: {last} then {run}");
                last = run;
                snapshots.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let one_more_snapshot = |after: usize| {
        let deadline = Instant::now() + HANG;
        while snapshots.load(Ordering::Relaxed) <= after {
            assert!(Instant::now() < deadline, "the reader took no snapshot");
            thread::yield_now();
        }
    };
    one_more_snapshot(0);
    for spawned in 1..=TASKS {
        pool.spawn(|| ());
        if spawned == TASKS / 2 {
            one_more_snapshot(snapshots.load(Ordering::Relaxed));
        }
    }
    pool.join();
    stop.store(true, Ordering::Relaxed);
    reader.join().expect("the reader saw a count go backwards");
    assert!(snapshots.load(Ordering::Relaxed) >= 2);
    assert_eq!(pool.metrics().tasks_run(), TASKS);
}

/// `depth` levels of nested joins, each leaf counting itself; returns the
/// number of joins made (2^depth - 1).
fn join_tree(depth: u32, leaves: &AtomicUsize) -> u64 {
    if depth == 0 {
        leaves.fetch_add(1, Ordering::Relaxed);
        return 0;
    }
    let (a, b) = dreadpool_core::join(
        || join_tree(depth - 1, leaves),
        || join_tree(depth - 1, leaves),
    );
    a + b + 1
}

#[test]
fn joins_are_counted_once_each_and_a_fork_run_elsewhere_is_shared_and_stolen() {
    let pool = pool(2);
    let sum = |m: &PoolMetrics, f: fn(&dreadpool_core::WorkerMetrics) -> u64| {
        m.workers.iter().map(f).sum::<u64>()
    };

    // A tree of joins: every one counted, on whichever worker forked it.
    let leaves = AtomicUsize::new(0);
    let made = pool.install(|| join_tree(12, &leaves));
    assert_eq!(made, (1 << 12) - 1);
    assert_eq!(leaves.load(Ordering::Relaxed), 1 << 12);
    let m = pool.metrics();
    assert_eq!(sum(&m, |w| w.joins), made, "{m:#?}");
    // Each shared fork is taken at most once, by a peer or not at all.
    assert!(
        sum(&m, |w| w.forks_stolen) <= sum(&m, |w| w.forks_shared),
        "{m:#?}"
    );
    assert!(sum(&m, |w| w.forks_shared) <= made, "{m:#?}");

    // A join whose `a` cannot finish until `b` has started: `b` must have
    // run on the other worker, so it was shared there and stolen. (Each
    // worker keeps its oldest fork shared and wakes a sleeper for it.)
    let before = pool.metrics();
    let b_started = AtomicBool::new(false);
    let (joiner, thief) = pool.install(|| {
        dreadpool_core::join(
            || {
                let deadline = Instant::now() + HANG;
                while !b_started.load(Ordering::Acquire) {
                    assert!(
                        Instant::now() < deadline,
                        "b never started elsewhere: its fork was not shared, or nobody took it"
                    );
                    thread::yield_now();
                }
                dreadpool_core::current_worker_index()
            },
            || {
                b_started.store(true, Ordering::Release);
                dreadpool_core::current_worker_index()
            },
        )
    });
    let (joiner, thief) = (joiner.expect("a runs on a worker"), thief.expect("b too"));
    assert_ne!(joiner, thief, "b ran on the worker that waited for it");
    let after = pool.metrics();
    let delta = |w: usize, f: fn(&dreadpool_core::WorkerMetrics) -> u64| {
        f(&after.workers[w]) - f(&before.workers[w])
    };
    assert_eq!(delta(joiner, |w| w.joins), 1, "{after:#?}");
    assert_eq!(delta(thief, |w| w.joins), 0, "{after:#?}");
    assert!(delta(joiner, |w| w.forks_shared) >= 1, "{after:#?}");
    assert!(delta(thief, |w| w.forks_stolen) >= 1, "{after:#?}");
    assert_eq!(sum(&after, |w| w.joins), made + 1);
    assert!(sum(&after, |w| w.forks_stolen) <= sum(&after, |w| w.forks_shared));
    // A stolen fork is not a steal of tasks.
    assert_eq!(
        sum(&after, |w| w.tasks_stolen),
        sum(&before, |w| w.tasks_stolen),
        "{after:#?}"
    );
}

/// A searcher polls only the queues of workers that are awake: a sleeper's
/// queue is empty (`sleep/awake.rs`). And a worker woken from sleep counts
/// as awake again: the child that its task spawns, and waits for, reaches
/// the one peer that can run it, in one poll.
#[test]
fn a_thief_polls_only_awake_workers() {
    let pool = pool(4);
    pool.spawn(|| ());
    pool.join();
    let before = wait_for(&pool, "all workers asleep", |m| {
        m.workers_in(WorkerState::Sleeping) == 4
    });
    let attempted = |m: &PoolMetrics| m.workers.iter().map(|w| w.steals_attempted).sum::<u64>();
    let stolen = |m: &PoolMetrics| m.workers.iter().map(|w| w.steals_succeeded).sum::<u64>();
    let (tx, rx) = mpsc::channel();
    let handle = pool.handle();
    pool.spawn(move || {
        // The child waits in this worker's own queue, which this worker
        // cannot pop while it blocks here: only a peer can run it.
        let (child_tx, child_rx) = mpsc::channel();
        handle.spawn(move || child_tx.send(()).unwrap());
        tx.send(child_rx.recv_timeout(HANG).is_ok()).unwrap();
    });
    assert!(
        rx.recv_timeout(HANG).unwrap(),
        "no peer stole the child from the worker that was woken for its parent"
    );
    let after = wait_for(&pool, "all workers asleep again, the child stolen", |m| {
        m.workers_in(WorkerState::Sleeping) == 4 && stolen(m) == stolen(&before) + 1
    });
    // The thief polls the parent's worker (the one awake queue) and takes
    // the child; after running it, it polls that worker first again (its
    // last victim) if it is not yet registered asleep, and finds it empty;
    // the parent's worker, done, may poll the thief likewise. Polling sleepers too
    // would be at least 7 polls: 1 to 3, then 3, then 3.
    let polls = attempted(&after) - attempted(&before);
    assert!(
        (1..=3).contains(&polls),
        "{polls} polls: the searchers polled sleepers' queues: {after:#?}"
    );
}

/// A worker that registers to sleep and whose second look finds work
/// counts a cancelled sleep. The second look's window is a lock and a fence
/// long, so a spawn lands in it by chance: with spawns paced at a range of
/// gaps, the first one came after 64 to 640 spawns on a quiet 2-CPU host,
/// and after 960 to 48,000 with three or four busy loops beside it (debug
/// build, 2026-12-07). The loop stops at the first one; its cap, 5 million
/// spawns, is a hundred times the worst seen (without the count, the test
/// fails after about 90 s).
#[test]
fn a_second_look_that_finds_work_counts_a_cancelled_sleep() {
    let pool = pool(2);
    let cancelled = |m: &PoolMetrics| m.workers.iter().map(|w| w.sleeps_cancelled).sum::<u64>();
    let mut spawned = 0u64;
    while spawned < 5_000_000 {
        for _ in 0..64 {
            pool.spawn(|| ());
            spawned += 1;
            for _ in 0..(spawned * 37) % 400 {
                std::hint::spin_loop();
            }
        }
        if cancelled(&pool.metrics()) > 0 {
            break;
        }
    }
    pool.join();
    let m = pool.metrics();
    assert!(
        cancelled(&m) > 0,
        "no cancelled sleep in {spawned} spawns: {m:#?}"
    );
    assert_eq!(m.tasks_run(), spawned, "every task ran once");
}

/// A look at the global queue that finds it empty is counted, and one that
/// finds tasks is not. Every worker looks once as it starts, before its
/// first sleep. Then, with the one worker held in a task while three tasks
/// wait in the global queue, the worker pulls them one at a time (a backlog
/// of 1: three looks that find a task, not counted), runs them, and looks
/// once more before it sleeps: one empty look, or two if the look it makes
/// every 61 tasks falls on an empty queue in between. A count of every
/// look would read at least four.
#[test]
fn a_look_at_an_empty_global_queue_is_counted() {
    let empty = |m: &PoolMetrics| m.workers.iter().map(|w| w.global_empty_polls).sum::<u64>();
    let two = pool(2);
    let started = wait_for(&two, "both workers asleep", |m| {
        m.workers_in(WorkerState::Sleeping) == 2
    });
    assert!(
        started.workers.iter().all(|w| w.global_empty_polls >= 1),
        "a worker slept without looking at the global queue: {started:#?}"
    );

    let pool = ThreadPoolBuilder::new()
        .with_threads(1)
        .with_backlog(1)
        .build();
    let before = wait_for(&pool, "the worker asleep", |m| {
        m.workers_in(WorkerState::Sleeping) == 1
    });
    let (started_tx, started_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    pool.spawn(move || {
        started_tx.send(()).unwrap();
        go_rx.recv_timeout(HANG).unwrap();
    });
    started_rx.recv_timeout(HANG).unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    for _ in 0..3 {
        let ran = Arc::clone(&ran);
        pool.spawn(move || {
            ran.fetch_add(1, Ordering::Relaxed);
        });
    }
    go_tx.send(()).unwrap();
    pool.join();
    let after = wait_for(&pool, "the worker asleep again", |m| {
        m.workers_in(WorkerState::Sleeping) == 1 && m.workers[0].sleeps > before.workers[0].sleeps
    });
    assert_eq!(ran.load(Ordering::Relaxed), 3);
    let looks = empty(&after) - empty(&before);
    assert!(
        (1..=2).contains(&looks),
        "{looks} empty looks at the global queue for one run of three pulled tasks: {after:#?}"
    );
}
