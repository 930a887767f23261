//! `ThreadPoolBuilder::use_current_thread`: the building thread as worker 0
//! (`src/worker/current_thread.rs`). Each test builds its pool on a thread
//! of its own, which it ends with, so that no test thread is left seated.
//! Ordered by channels and barriers; a step that could hang if the protocol
//! broke waits with a generous timeout instead, so that the test fails.
//!
//! Nothing here uses the global pool: `build_global_on_a_worker_is_refused`
//! relies on it being unset.

mod common;

use common::Gate;
use dreadpool_core::{
    current_worker_index, yield_now, BuildError, PanicPolicy, ThreadPoolBuilder, Yield,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Long enough to mean "never" on a loaded 2-CPU machine.
const NEVER: Duration = Duration::from_secs(60);

/// Runs `f` on a fresh thread and returns its result (panics propagate).
fn on_own_thread<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::spawn(f).join().unwrap()
}

/// Holds the pool's only thread worker (index 1 of a 2-thread pool) in a
/// task until the returned sender is dropped or sent to; returns once the
/// task runs. Spawned from `spawner` (an outside thread: the global queue).
fn occupy_worker_1(pool: &dreadpool_core::ThreadPool) -> mpsc::Sender<()> {
    let (started, is_started) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let handle = pool.handle();
    std::thread::spawn(move || {
        handle.spawn(move || {
            started.send(current_worker_index()).unwrap();
            let _ = released.recv();
        })
    })
    .join()
    .unwrap();
    assert_eq!(is_started.recv_timeout(NEVER).unwrap(), Some(1));
    release
}

/// rayon's `use_current_thread_basic`, and what its docs promise: index 0,
/// one thread fewer started, a second pool refused, a spawn from here run
/// by the other worker while this thread blocks, and work sent into the
/// pool run here when this thread yields or scopes.
#[test]
fn use_current_thread_basic() {
    on_own_thread(|| {
        let spawned = Arc::new(Mutex::new(Vec::new()));
        let pool = ThreadPoolBuilder::new()
            .with_threads(2)
            .use_current_thread()
            .try_build_with_spawner(|worker| {
                let handle = std::thread::spawn(move || worker.run());
                spawned.lock().unwrap().push(handle);
                Ok(())
            })
            .unwrap();
        assert_eq!(current_worker_index(), Some(0));
        assert_eq!(pool.current_worker_index(), Some(0));
        assert_eq!(spawned.lock().unwrap().len(), 1, "one thread fewer");
        let again = ThreadPoolBuilder::new()
            .with_threads(2)
            .use_current_thread()
            .try_build();
        assert!(matches!(again, Err(BuildError::CurrentThreadAlreadyInPool)));

        // Spawned from here, into worker 0's queue: worker 1 steals it while
        // this thread blocks.
        let (sent, received) = mpsc::channel();
        pool.spawn(move || sent.send(current_worker_index()).unwrap());
        assert_eq!(received.recv_timeout(NEVER).unwrap(), Some(1));

        // With worker 1 held, only this thread can run what is sent in: it
        // does when it yields, and in a scope.
        let release = occupy_worker_1(&pool);
        let (sent, received) = mpsc::channel();
        let handle = pool.handle();
        std::thread::spawn(move || {
            handle.spawn(move || sent.send(current_worker_index()).unwrap())
        })
        .join()
        .unwrap();
        assert_eq!(yield_now(), Some(Yield::Executed));
        assert_eq!(received.try_recv().unwrap(), Some(0));
        assert_eq!(yield_now(), Some(Yield::Idle));
        let ran_on = Mutex::new(Vec::new());
        pool.scope(|s| {
            for _ in 0..4 {
                s.spawn(|| ran_on.lock().unwrap().push(current_worker_index()));
            }
        });
        assert_eq!(ran_on.into_inner().unwrap(), [Some(0); 4]);
        assert_eq!(pool.install(current_worker_index), Some(0));
        drop(release);
        drop(pool);
        assert_eq!(current_worker_index(), None, "the thread left seat 0");
        for handle in spawned.lock().unwrap().drain(..) {
            handle.join().unwrap();
        }
    });
}

/// Worker 0 spawns tasks, then blocks in the first half of a join until all
/// of them ran: only worker 1 can run them, by stealing from worker 0's
/// queue. (The join's shared fork wakes worker 1 too, so this test passes
/// even when worker 0's spawns wake nobody: the wake itself is
/// `worker_0s_spawn_wakes_worker_1_asleep`'s.)
#[test]
fn tasks_spawned_on_worker_0_are_stolen_while_it_blocks_in_a_join() {
    on_own_thread(|| {
        let pool = ThreadPoolBuilder::new()
            .with_threads(2)
            .use_current_thread()
            .build();
        for round in 0..50 {
            const TASKS: usize = 8;
            let (sent, received) = mpsc::channel();
            for _ in 0..TASKS {
                let sent = sent.clone();
                pool.spawn(move || sent.send(current_worker_index()).unwrap());
            }
            let received = Mutex::new(received);
            let (ran_on, ()) = dreadpool_core::join(
                || {
                    let received = received.lock().unwrap();
                    (0..TASKS)
                        .map(|_| received.recv_timeout(NEVER))
                        .collect::<Result<Vec<_>, _>>()
                },
                || (),
            );
            let ran_on = ran_on.unwrap_or_else(|_| panic!("round {round}: tasks stranded"));
            assert_eq!(ran_on, [Some(1); TASKS], "round {round}");
        }
    });
}

/// The lost wake: worker 1 is asleep (registered and parking: the metrics
/// report it `Sleeping` only past its second look), then worker 0 spawns
/// into its own queue and blocks in the user's code, outside any wait of
/// the pool's, so it runs nothing: only worker 1 can run the task, and only
/// if worker 0's spawn wakes it (`current_thread.rs`, point 1). A lost wake
/// strands the task, and the bounded wait fails the test instead of hanging.
#[cfg(feature = "metrics")]
#[test]
fn worker_0s_spawn_wakes_worker_1_asleep() {
    use dreadpool_core::WorkerState;
    on_own_thread(|| {
        let pool = ThreadPoolBuilder::new()
            .with_threads(2)
            .use_current_thread()
            .build();
        for round in 0..20 {
            let deadline = Instant::now() + NEVER;
            while pool.metrics().workers[1].state != WorkerState::Sleeping {
                assert!(
                    Instant::now() < deadline,
                    "round {round}: worker 1 never fell asleep"
                );
                std::thread::yield_now();
            }
            let wakeups = pool.metrics().workers[1].wakeups;
            let (sent, received) = mpsc::channel();
            pool.spawn(move || sent.send(current_worker_index()).unwrap());
            assert_eq!(
                received.recv_timeout(NEVER),
                Ok(Some(1)),
                "round {round}: worker 1 was not woken for worker 0's spawn"
            );
            assert!(
                pool.metrics().workers[1].wakeups > wakeups,
                "round {round}: it ran the task without being woken"
            );
        }
    });
}

/// A `join()` on another thread waits for a task worker 0 spawned: worker
/// 0's spawns (its own path, `push_local_fenced`) are counted as the pool's,
/// so the pool is not idle while one runs. The first join is given a short
/// time, and must use all of it: the task is held until after it.
#[test]
fn a_join_elsewhere_waits_for_worker_0s_spawns() {
    on_own_thread(|| {
        let pool = Arc::new(
            ThreadPoolBuilder::new()
                .with_threads(2)
                .use_current_thread()
                .build(),
        );
        let (started, is_started) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        pool.spawn(move || {
            started.send(current_worker_index()).unwrap();
            let _ = released.recv();
        });
        assert_eq!(is_started.recv_timeout(NEVER).unwrap(), Some(1));
        let join_for = |timeout| {
            let pool = Arc::clone(&pool);
            std::thread::spawn(move || pool.join_timeout(timeout))
                .join()
                .unwrap()
        };
        assert!(
            !join_for(Duration::from_millis(200)),
            "a join returned while worker 0's spawn still ran"
        );
        drop(release);
        assert!(join_for(NEVER), "the join was never released");
        drop(Arc::into_inner(pool).unwrap());
    });
}

/// Every task runs exactly once, over many pools built and dropped on the
/// same thread, mixing worker 0's spawns and FIFO spawns, joins, scopes,
/// yields, broadcasts and spawns from outside, with the pool dropped while
/// tasks are still queued in worker 0's queue.
#[test]
fn stress_every_task_runs_exactly_once() {
    on_own_thread(|| {
        const ITERATIONS: usize = 200;
        const SPAWNS: usize = 40;
        for iteration in 0..ITERATIONS {
            let pool = ThreadPoolBuilder::new()
                .with_threads(3)
                .use_current_thread()
                .build();
            // Slots: worker 0's spawns, FIFO spawns, scope tasks, outside
            // spawns, and the join halves nested in the scope.
            let runs: Arc<Vec<AtomicUsize>> =
                Arc::new((0..5 * SPAWNS).map(|_| AtomicUsize::new(0)).collect());
            let bump = |runs: &Arc<Vec<AtomicUsize>>, slot: usize| {
                runs[slot].fetch_add(1, Ordering::Relaxed);
            };
            let outside = {
                let (handle, runs) = (pool.handle(), Arc::clone(&runs));
                std::thread::spawn(move || {
                    for i in 0..SPAWNS {
                        let runs = Arc::clone(&runs);
                        handle.spawn(move || bump(&runs, 3 * SPAWNS + i));
                    }
                })
            };
            for i in 0..SPAWNS {
                let first = Arc::clone(&runs);
                pool.spawn(move || bump(&first, i));
                let second = Arc::clone(&runs);
                pool.spawn_fifo(move || bump(&second, SPAWNS + i));
                if i % 8 == 0 {
                    let _ = yield_now();
                }
            }
            pool.scope(|s| {
                for i in 0..SPAWNS {
                    let runs = &runs;
                    s.spawn(move || {
                        bump(runs, 2 * SPAWNS + i);
                        if i % 2 == 0 {
                            dreadpool_core::join(|| bump(runs, 4 * SPAWNS + i), || ());
                        } else {
                            dreadpool_core::join(|| (), || bump(runs, 4 * SPAWNS + i));
                        }
                    });
                }
            });
            let seen = AtomicUsize::new(0);
            pool.broadcast(|_| seen.fetch_add(1, Ordering::Relaxed));
            assert_eq!(seen.load(Ordering::Relaxed), 3);
            outside.join().unwrap();
            // Dropped with worker 0's own spawns possibly still queued: the
            // drop leaves the seat and the other workers drain it.
            drop(pool);
            for (slot, count) in runs.iter().enumerate() {
                assert_eq!(
                    count.load(Ordering::Relaxed),
                    1,
                    "iteration {iteration}: slot {slot} ran {count:?} times"
                );
            }
            assert_eq!(current_worker_index(), None);
        }
    });
}

/// The start and exit handlers run for every worker thread the pool starts,
/// and never for index 0, the user's thread. (The handlers arrive at a gate
/// instead of waiting at a barrier: a handler run for index 0, on this
/// thread, would have filled the barrier and left this thread's own wait
/// hanging, where now the test fails.)
#[test]
fn start_and_exit_handlers_skip_worker_0() {
    on_own_thread(|| {
        let started = Arc::new(Mutex::new(Vec::new()));
        let ended = Arc::new(Mutex::new(Vec::new()));
        let all_started = Arc::new(Gate::new());
        let pool = {
            let (started, ended, all_started) = (
                Arc::clone(&started),
                Arc::clone(&ended),
                Arc::clone(&all_started),
            );
            ThreadPoolBuilder::new()
                .with_threads(3)
                .use_current_thread()
                .with_start_handler(move |index| {
                    started.lock().unwrap().push(index);
                    all_started.arrive();
                })
                .with_exit_handler(move |index| ended.lock().unwrap().push(index))
                .build()
        };
        assert!(all_started.wait_for(2), "the started threads' handlers ran");
        drop(pool); // joins them: their exit handlers ran
        let mut started = started.lock().unwrap().clone();
        let mut ended = ended.lock().unwrap().clone();
        started.sort_unstable();
        ended.sort_unstable();
        assert_eq!(started, [1, 2]);
        assert_eq!(ended, [1, 2]);
    });
}

/// A thread that is already a worker cannot become worker 0 of another
/// pool: neither this way, nor as one of a pool's threads, nor for the
/// global pool (rayon's `CurrentThreadAlreadyInPool`; the global pool is
/// unset in this binary, so that is the error, as in rayon, whose
/// "already initialised" comes first when it is set).
#[test]
fn a_worker_cannot_become_worker_0_of_another_pool() {
    let pool = ThreadPoolBuilder::new().with_threads(1).build();
    let inside = pool.install(|| {
        ThreadPoolBuilder::new()
            .use_current_thread()
            .try_build()
            .err()
    });
    assert!(matches!(
        inside,
        Some(BuildError::CurrentThreadAlreadyInPool)
    ));
    let global = pool.install(|| {
        ThreadPoolBuilder::new()
            .use_current_thread()
            .build_global()
            .err()
    });
    assert!(matches!(
        global,
        Some(BuildError::CurrentThreadAlreadyInPool)
    ));
    on_own_thread(|| {
        let first = ThreadPoolBuilder::new()
            .with_threads(1)
            .use_current_thread()
            .build();
        let second = ThreadPoolBuilder::new().use_current_thread().try_build();
        assert!(matches!(
            second,
            Err(BuildError::CurrentThreadAlreadyInPool)
        ));
        assert_eq!(first.current_worker_index(), Some(0), "unchanged");
        // After the drop the thread is free again.
        drop(first);
        let third = ThreadPoolBuilder::new()
            .with_threads(1)
            .use_current_thread()
            .build();
        assert_eq!(third.current_worker_index(), Some(0));
    });
}

/// With worker 0 the pool's only worker, a `join()` on another thread can
/// only be released by worker 0's return from a yield (`current_thread.rs`,
/// point 2). The joiner announces itself just before it joins; worker 0
/// then runs the task. If worker 0 runs it before the joiner waits, the
/// join returns at once (the order this test cannot force without a hook):
/// the rounds make the order that needs the release all but certain.
#[test]
fn a_join_elsewhere_returns_when_worker_0_ran_the_last_task() {
    on_own_thread(|| {
        let pool = Arc::new(
            ThreadPoolBuilder::new()
                .with_threads(1)
                .use_current_thread()
                .build(),
        );
        for round in 0..50 {
            let handle = pool.handle();
            std::thread::spawn(move || handle.spawn(|| ()))
                .join()
                .unwrap();
            let (joining, is_joining) = mpsc::channel();
            let joiner = {
                let pool = Arc::clone(&pool);
                std::thread::spawn(move || {
                    joining.send(()).unwrap();
                    let start = Instant::now();
                    let idle = pool.join_timeout(NEVER);
                    (idle, start.elapsed())
                })
            };
            is_joining.recv().unwrap();
            std::thread::yield_now();
            assert_eq!(yield_now(), Some(Yield::Executed), "round {round}");
            // Timed as well: at its deadline a join looks at the counts once
            // more and returns true if the pool went idle unannounced.
            let (idle, waited) = joiner.join().unwrap();
            assert!(
                idle && waited < NEVER,
                "round {round}: join never released (returned {idle} after {waited:?})"
            );
        }
        // The last Arc here: the drop leaves seat 0 and joins.
        drop(Arc::into_inner(pool).unwrap());
    });
}

/// Worker 0's thread exits while the pool lives: its queued tasks are run
/// by the other worker, and a broadcast task addressed to it runs there
/// too, given index 0; a later broadcast reaches seat 0 the same way.
#[test]
fn worker_0_thread_exiting_leaves_its_tasks_to_the_others() {
    const TASKS: usize = 32;
    let ran = Arc::new(AtomicUsize::new(0));
    let (pool, release) = {
        let ran = Arc::clone(&ran);
        on_own_thread(move || {
            let pool = ThreadPoolBuilder::new()
                .with_threads(2)
                .use_current_thread()
                .build();
            // Worker 1 held, so everything stays queued until this thread exits.
            let release = occupy_worker_1(&pool);
            for _ in 0..TASKS {
                let ran = Arc::clone(&ran);
                pool.spawn(move || {
                    ran.fetch_add(1, Ordering::Relaxed);
                });
            }
            let ran = Arc::clone(&ran);
            pool.spawn_broadcast(move |index| {
                ran.fetch_add(100 * (index + 1), Ordering::Relaxed);
            });
            (pool, release)
        })
    };
    drop(release);
    if !pool.join_timeout(NEVER) {
        // Dropped, the pool would wait for the stranded tasks forever, and
        // the test would hang instead of failing.
        std::mem::forget(pool);
        panic!("tasks stranded in seat 0");
    }
    assert_eq!(ran.load(Ordering::Relaxed), TASKS + 100 + 200);
    let indices = Mutex::new(Vec::new());
    pool.broadcast(|index| indices.lock().unwrap().push(index));
    let mut indices = indices.into_inner().unwrap();
    indices.sort_unstable();
    assert_eq!(indices, [0, 1]);
}

/// A task that panics on worker 0 under `Respawn` is handled as under
/// `Continue`: counted, reported, and the thread stays worker 0.
#[test]
fn a_panic_in_a_task_worker_0_runs_keeps_the_thread_seated() {
    on_own_thread(|| {
        let reported = Arc::new(AtomicUsize::new(0));
        let pool = {
            let reported = Arc::clone(&reported);
            ThreadPoolBuilder::new()
                .with_threads(1)
                .use_current_thread()
                .with_panic_policy(PanicPolicy::Respawn)
                .with_panic_handler(move |_| {
                    reported.fetch_add(1, Ordering::Relaxed);
                })
                .build()
        };
        pool.spawn(|| panic!("on worker 0"));
        assert_eq!(yield_now(), Some(Yield::Executed));
        assert_eq!(pool.panic_count(), 1);
        assert_eq!(reported.load(Ordering::Relaxed), 1);
        assert_eq!(current_worker_index(), Some(0));
        assert_eq!(pool.install(|| 6 * 7), 42);
        // (Joined from another thread: on worker 0 `join` would panic.)
        let idle = std::thread::scope(|s| s.spawn(|| pool.join_timeout(NEVER)).join().unwrap());
        assert!(idle, "the panicked task counted as done");
    });
}
