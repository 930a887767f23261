//! loom models of the pool's synchronization protocols, run on the pool's
//! real code (`sync.rs` swaps in loom's primitives, `queue/mock.rs` stands in
//! for crossbeam-deque).
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p dreadpool-core --no-default-features --release --test loom
//! ```
//!
//! The models are also run against deliberately broken builds, each of which
//! the model named for it must fail (loom reports a deadlock or an assertion
//! fails; a failed loom execution may abort the test process while it cleans
//! up, which is why this is checked from `.ci/run` rather than with
//! `should_panic`). Add `--features NAME`, NAME one of:
//!
//! - `__broken_no_second_look` (fails `spawn_races_a_worker_going_to_sleep`):
//!   the seed's first lost wakeup, a worker that sleeps without looking at
//!   the queues again after announcing itself;
//! - `__broken_no_spawn_fence` (fails `spawn_races_a_worker_going_to_sleep`):
//!   the spawner reads the sleep state without the fence that pairs with the
//!   sleeper's (a lost wakeup);
//! - `__broken_stale_release` (fails `join_waves_do_not_release_each_other`):
//!   a worker releases joiners on a stale observation that the pool went idle
//!   (the bug the wakeup hammer found);
//! - `__broken_flag_before_count` (fails `shutdown_races_a_spawn`): a spawner
//!   checks the shutdown flag before counting its task, so a draining worker
//!   can exit under it;
//! - `__broken_respawn_fresh_queue` (fails `respawn_hands_over_the_queue`): a
//!   respawned worker starts with an empty queue instead of its
//!   predecessor's;
//! - `__broken_unpark_reads_waiting_early` (fails
//!   `spawn_races_a_worker_going_to_sleep`): a waker decides whether the
//!   sleeper waits on its condvar (and so needs a notify) before it leaves
//!   the token, so a sleeper that starts waiting in between is never woken;
//! - `__broken_wait_on_hint` (fails `a_sleeper_that_spins_takes_every_token`):
//!   a sleeper that spun decides whether to block from the hint it read while
//!   spinning, not from the token under the lock, so a token left after
//!   that read, while no notify was due, is never seen;
//! - `__broken_waker_outside_lock` (fails `awaiting_a_handle_races_the_task`):
//!   a polled `TaskHandle` looks for the result and leaves its waker in two
//!   critical sections, so a task that ends in between wakes nobody.
//!
//! - `__broken_ring_no_recheck` (fails
//!   `the_recorders_reader_never_keeps_a_torn_event`): the flight recorder's
//!   reader trusts its copy of the ring without looking at the head again,
//!   so it can return an event the writer was overwriting.
//!
//! - `__broken_fork_latch_no_mark` (fails `a_join_races_the_thief_of_its_fork`):
//!   a joiner whose fork was stolen sleeps without marking the fork's latch,
//!   so the thief that sets it does not know to wake it;
//! - `__broken_fork_result_after_latch` (fails
//!   `a_join_races_the_thief_of_its_fork`): the thief sets the fork's latch
//!   before it writes the result, so the joiner can find none.
//!
//! - `__broken_slot_relaxed_free` (fails `an_identity_slot_is_never_shared`):
//!   a worker frees an outside spawn's identity slot with a Relaxed store, so
//!   the slot's owner can fill it again while the worker is still reading it.
//!
//! - `__broken_fifo_trampoline_first` (fails
//!   `fifo_tasks_run_once_in_spawn_order`): a FIFO spawn pushes the
//!   trampoline before its task, so a thief can run a trampoline that finds
//!   no task (and a later one runs the task meant for it);
//! - `__broken_fifo_as_lifo` (fails `fifo_tasks_run_once_in_spawn_order`):
//!   a FIFO spawn from a worker is an ordinary one, so the worker runs its
//!   FIFO tasks newest first.
//!
//! - `__broken_current_thread_local_notify` (fails
//!   `worker_0s_spawn_wakes_a_sleeping_peer`): the building thread, worker 0
//!   by `use_current_thread`, wakes for its spawns without the fence, as a
//!   worker that will run the task itself may, so a peer sleeps through the
//!   task while worker 0 blocks;
//! - `__broken_current_thread_no_release` (fails
//!   `a_join_is_released_by_worker_0s_yield`): worker 0 returns from running
//!   the pool's last task without the idle worker's duty, so a `join()`
//!   waiting elsewhere is never released.
//!
//! - `__broken_second_look_home_shard` (fails
//!   `spawners_on_two_shards_one_worker`): a sleeper's second look reads
//!   its home shard of the global queue alone, so it sleeps through a task
//!   pushed onto another shard;
//! - `__broken_pending_one_shard` (fails
//!   `shutdown_races_a_spawn_into_shards`): the pending count reads one
//!   shard's count of outside spawns alone, so a draining worker exits
//!   while a spawn counted in another shard's count is being pushed.
//!
//! `.ci/run` runs the clean build and all eighteen broken ones.
#![cfg(loom)]

use dreadpool_core::{PanicPolicy, ThreadPoolBuilder};
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;

/// Explores every interleaving up to `LOOM_MAX_PREEMPTIONS` (default 4)
/// preemptions: enough for every race below (the stale release needs 4),
/// small enough for CI (7 to 8 minutes for all models on the 2-CPU host,
/// 2026-12-07; `two_spawners_one_worker` alone takes two).
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(4);
    }
    builder.check(f);
}

/// [`model`] with its own default bound, for the models with more threads.
fn model_with_bound(bound: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(bound);
    }
    builder.check(f);
}

fn counter() -> (Arc<AtomicUsize>, impl Fn() + Send + Sync + Clone + 'static) {
    let count = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&count);
    (count, move || {
        c.fetch_add(1, Ordering::Relaxed);
    })
}

/// A spawn racing the only worker as it goes to sleep (both of the seed's
/// lost wakeups; the spawn into the sleeping pool hands its task over if
/// the worker already waits, else pushes and wakes it), then a join racing
/// the last task.
#[test]
fn spawn_races_a_worker_going_to_sleep() {
    model(|| {
        let pool = ThreadPoolBuilder::new().with_threads(1).build();
        let (count, task) = counter();
        pool.spawn(task);
        pool.join();
        assert_eq!(
            count.load(Ordering::Relaxed),
            1,
            "join returned before the task ran"
        );
        drop(pool);
    });
}

/// Two spawners against one sleeping worker: every task runs, nothing
/// sleeps through a spawn. One spawner may hand its task to the sleeper
/// while the other's goes to the global queue.
#[test]
fn two_spawners_one_worker() {
    model(|| {
        let pool = Arc::new(ThreadPoolBuilder::new().with_threads(1).build());
        let (count, task) = counter();
        let other = {
            let (pool, task) = (Arc::clone(&pool), task.clone());
            loom::thread::spawn(move || pool.spawn(task))
        };
        pool.spawn(task);
        other.join().unwrap();
        pool.join();
        assert_eq!(count.load(Ordering::Relaxed), 2);
    });
}

/// Two spawners on two shards of the global queue (`queue/global.rs`: the
/// threads take the shards in turn) against one sleeping worker, whose home
/// is shard 0: it must find the task on the other shard too, in its search
/// and in its second look before sleeping.
#[test]
fn spawners_on_two_shards_one_worker() {
    model(|| {
        let pool = Arc::new(
            ThreadPoolBuilder::new()
                .with_threads(1)
                .with_global_queue_shards(2)
                .build(),
        );
        let (count, task) = counter();
        let other = {
            let (pool, task) = (Arc::clone(&pool), task.clone());
            loom::thread::spawn(move || pool.spawn(task))
        };
        pool.spawn(task);
        other.join().unwrap();
        pool.join();
        assert_eq!(count.load(Ordering::Relaxed), 2);
    });
}

/// Join across waves: a worker's observation that wave one went idle must
/// not release the joiner of wave two.
#[test]
fn join_waves_do_not_release_each_other() {
    model(|| {
        let pool = ThreadPoolBuilder::new().with_threads(1).build();
        let (count, task) = counter();
        pool.spawn(task.clone());
        pool.join();
        pool.spawn(task);
        pool.join();
        assert_eq!(
            count.load(Ordering::Relaxed),
            2,
            "the second join returned early"
        );
    });
}

/// A join waits for a task that a task spawned into its local queue.
#[test]
fn join_waits_for_tasks_spawned_by_tasks() {
    model(|| {
        let pool = ThreadPoolBuilder::new().with_threads(1).build();
        let (count, task) = counter();
        let handle = pool.handle();
        pool.spawn(move || {
            task();
            handle.spawn(task);
        });
        pool.join();
        assert_eq!(count.load(Ordering::Relaxed), 2);
    });
}

/// Shutdown racing an outside spawn: the task is either refused (and handed
/// back) or run; never accepted and lost.
#[test]
fn shutdown_races_a_spawn() {
    model(|| {
        let pool = ThreadPoolBuilder::new().with_threads(1).build();
        let (count, task) = counter();
        let handle = pool.handle();
        let spawner = loom::thread::spawn(move || handle.try_spawn(task).is_ok());
        drop(pool);
        let accepted = spawner.join().unwrap();
        assert_eq!(count.load(Ordering::Relaxed), usize::from(accepted));
    });
}

/// [`shutdown_races_a_spawn`] with the global queue in two shards: the
/// spawner counts its task in its home shard's count, and the draining
/// worker must read every shard's.
#[test]
fn shutdown_races_a_spawn_into_shards() {
    model(|| {
        let pool = ThreadPoolBuilder::new()
            .with_threads(1)
            .with_global_queue_shards(2)
            .build();
        let (count, task) = counter();
        let handle = pool.handle();
        let spawner = loom::thread::spawn(move || handle.try_spawn(task).is_ok());
        drop(pool);
        let accepted = spawner.join().unwrap();
        assert_eq!(count.load(Ordering::Relaxed), usize::from(accepted));
    });
}

/// A panicking task's worker is replaced and the replacement runs the
/// children the task had queued locally.
#[test]
fn respawn_hands_over_the_queue() {
    model(|| {
        let pool = ThreadPoolBuilder::new()
            .with_threads(1)
            .with_panic_policy(PanicPolicy::Respawn)
            .build();
        let (count, task) = counter();
        let handle = pool.handle();
        pool.spawn(move || {
            handle.spawn(task);
            panic!("respawn me");
        });
        pool.join();
        assert_eq!(
            count.load(Ordering::Relaxed),
            1,
            "the queued child was lost"
        );
        assert_eq!(pool.panic_count(), 1);
    });
}

/// A scope from outside waits for its task; its latch wakes the waiter.
#[test]
fn scope_waits_for_its_task() {
    model(|| {
        let pool = ThreadPoolBuilder::new().with_threads(1).build();
        let count = AtomicUsize::new(0);
        pool.scope(|s| {
            s.spawn(|| {
                count.fetch_add(1, Ordering::Relaxed);
            });
        });
        assert_eq!(count.load(Ordering::Relaxed), 1);
    });
}

/// A join inside a task of a two-worker pool: under loom every fork is
/// shared, so the other worker may steal `b` while the joiner runs `a`,
/// takes `b` back, or waits for the thief (sleeping if it has nothing else
/// to do, to be woken by the thief's set of the latch). `b` runs exactly
/// once, its result reaches the joiner, and `a`'s panic, raised only after
/// `b` finished, reaches the task's caller through a scope.
#[test]
fn a_join_races_the_thief_of_its_fork() {
    model_with_bound(2, || {
        let pool = ThreadPoolBuilder::new().with_threads(2).build();
        let ran_b = Arc::new(AtomicUsize::new(0));
        let sum = Arc::new(AtomicUsize::new(0));
        let (b_count, total) = (Arc::clone(&ran_b), Arc::clone(&sum));
        pool.spawn(move || {
            let (a, b) = dreadpool_core::join(
                || 1,
                || {
                    b_count.fetch_add(1, Ordering::Relaxed);
                    2
                },
            );
            total.store(a + b, Ordering::Relaxed);
        });
        pool.join();
        assert_eq!(sum.load(Ordering::Relaxed), 3);
        assert_eq!(ran_b.load(Ordering::Relaxed), 1);
    });
}

/// A waker that an outside thread blocks on, as an executor's thread parks
/// between polls: a lost wakeup leaves it parked forever, which loom reports
/// as a deadlock.
#[derive(Default)]
struct ParkingWaker {
    woken: loom::sync::Mutex<bool>,
    condvar: loom::sync::Condvar,
}

impl ParkingWaker {
    /// Blocks until woken, then forgets the wake.
    fn park(&self) {
        let mut woken = self.woken.lock().unwrap();
        while !*woken {
            woken = self.condvar.wait(woken).unwrap();
        }
        *woken = false;
    }
}

impl std::task::Wake for ParkingWaker {
    fn wake(self: std::sync::Arc<Self>) {
        *self.woken.lock().unwrap() = true;
        self.condvar.notify_one();
    }
}

/// Awaiting a task's handle while the task ends: the poller finds the
/// result or leaves a waker that the task wakes, never neither (the waker
/// hand-off in `task_handle.rs`).
#[test]
fn awaiting_a_handle_races_the_task() {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};
    model(|| {
        let pool = ThreadPoolBuilder::new().with_threads(1).build();
        let mut handle = pool.spawn_with_handle(|| 7);
        let parker = std::sync::Arc::new(ParkingWaker::default());
        let waker = Waker::from(std::sync::Arc::clone(&parker));
        let mut cx = Context::from_waker(&waker);
        let value = loop {
            match std::pin::Pin::new(&mut handle).poll(&mut cx) {
                Poll::Ready(result) => break result.unwrap(),
                Poll::Pending => parker.park(),
            }
        };
        assert_eq!(value, 7);
        drop(pool);
    });
}

/// The flight recorder's ring: a writer laps a two-slot ring while a reader
/// copies it; every event the reader keeps is whole (its three words from
/// one event) and they are consecutive.
#[test]
fn the_recorders_reader_never_keeps_a_torn_event() {
    model(|| {
        let ring = Arc::new(dreadpool_core::__loom::Ring::new(2));
        let writer = {
            let ring = Arc::clone(&ring);
            loom::thread::spawn(move || {
                for n in 1..=3u64 {
                    ring.push([n, n, n]);
                }
            })
        };
        // Without a yield here loom runs the copy before the writer ever
        // starts (one execution, nothing explored).
        loom::thread::yield_now();
        let copied = ring.copy();
        for event in &copied {
            assert!(
                event[0] == event[1] && event[1] == event[2],
                "torn event {event:?}"
            );
        }
        for pair in copied.windows(2) {
            assert_eq!(
                pair[1][0],
                pair[0][0] + 1,
                "events out of order: {copied:?}"
            );
        }
        writer.join().unwrap();
    });
}

/// A sleeper that spins before it blocks (`sleep/parker.rs`) against one
/// waker, as `Sleep::wake_with_task` wakes: it hands over a task if the
/// sleeper is in `park` (spinning or blocked), and otherwise runs the task
/// itself and leaves a plain token. The waker may come before the sleeper
/// parks, while it spins or once it blocks: the sleeper always returns (a
/// lost token is a deadlock), and the task runs exactly once.
#[test]
fn a_sleeper_that_spins_takes_every_token() {
    model(|| {
        let parker = Arc::new(dreadpool_core::__loom::Parker::spinning());
        let runs = Arc::new(AtomicUsize::new(0));
        let sleeper = {
            let parker = Arc::clone(&parker);
            loom::thread::spawn(move || parker.park_and_run())
        };
        let handed = parker.hand_off(&runs);
        if !handed {
            runs.fetch_add(1, Ordering::Relaxed);
            parker.unpark();
        }
        let took_task = sleeper.join().unwrap();
        assert_eq!(took_task, handed, "the sleeper takes what was handed");
        assert_eq!(runs.load(Ordering::Relaxed), 1, "the task ran once");
    });
}

/// The identity slots of outside spawns at `Tasks` level: the owner of a
/// one-slot ring fills it, hands the "task" to a worker, and fills the slot
/// again as soon as it finds it free; the worker takes the first value.
/// loom's cell reports a fill that races the worker's take, and the worker
/// must see the first task whole.
#[test]
fn an_identity_slot_is_never_shared() {
    use loom::sync::atomic::AtomicBool;
    model(|| {
        let ring = Arc::new(dreadpool_core::__loom::SlotRing::new(1));
        // The pool's queue, reduced to its Release/Acquire handover.
        let published = Arc::new(AtomicBool::new(false));
        let mut cursor = 0;
        let index = ring
            .claim_and_fill(&mut cursor, 1, 10)
            .expect("a new ring is free");
        let worker = {
            let (ring, published) = (Arc::clone(&ring), Arc::clone(&published));
            loom::thread::spawn(move || {
                while !published.load(Ordering::Acquire) {
                    loom::thread::yield_now();
                }
                // SAFETY: the task was published to us alone, once.
                unsafe { ring.take(index) }
            })
        };
        published.store(true, Ordering::Release);
        // The owner's next spawn: the slot is taken until the worker lets
        // it go, then it is filled again.
        while ring.claim_and_fill(&mut cursor, 2, 20).is_none() {
            loom::thread::yield_now();
        }
        assert_eq!(worker.join().unwrap(), (1, 10), "the first task, whole");
    });
}

/// FIFO spawns (`spawn/fifo.rs`): a task of a two-worker pool spawns two
/// FIFO tasks, whose trampolines the other worker may steal. Each task runs
/// exactly once (no trampoline finds the FIFO queue empty: a task's panic
/// would say so), and they start in spawn order: the promise is about
/// starts, which a body can only observe on one thread, so the check is
/// that when one worker ran both, it ran the first one first.
///
/// One preemption by default: it catches both broken variants in under a
/// second; the clean build also passes at 2 (`LOOM_MAX_PREEMPTIONS=2`,
/// about a minute here), too slow for every CI run.
#[test]
fn fifo_tasks_run_once_in_spawn_order() {
    model_with_bound(1, || {
        let pool = ThreadPoolBuilder::new().with_threads(2).build();
        let log = Arc::new(loom::sync::Mutex::new(Vec::new()));
        let handle = pool.handle();
        let spawner_log = Arc::clone(&log);
        pool.spawn(move || {
            for name in ["first", "second"] {
                let log = Arc::clone(&spawner_log);
                handle.spawn_fifo(move || {
                    let worker = dreadpool_core::current_worker_index();
                    log.lock().unwrap().push((name, worker));
                });
            }
        });
        pool.join();
        assert_eq!(pool.panic_count(), 0, "a trampoline found no task");
        let log = log.lock().unwrap().clone();
        let mut names: Vec<&str> = log.iter().map(|&(name, _)| name).collect();
        if let [(_, one), (_, other)] = log[..] {
            if one == other {
                assert_eq!(
                    names,
                    ["first", "second"],
                    "one worker ran them out of order"
                );
            }
        }
        names.sort_unstable();
        assert_eq!(
            names,
            ["first", "second"],
            "each FIFO task runs exactly once"
        );
        drop(pool);
    });
}

/// `use_current_thread`: the model's thread is worker 0 of a two-worker
/// pool. It spawns a task (into its own queue) and then blocks until the
/// task ran, which only worker 1 can do: its spawn must wake worker 1 even
/// as worker 1 goes to sleep (`worker/current_thread.rs`, point 1). Then the
/// drop leaves seat 0 and joins worker 1.
#[test]
fn worker_0s_spawn_wakes_a_sleeping_peer() {
    model(|| {
        let pool = ThreadPoolBuilder::new()
            .with_threads(2)
            .use_current_thread()
            .build();
        let done = Arc::new((loom::sync::Mutex::new(false), loom::sync::Condvar::new()));
        let task_done = Arc::clone(&done);
        pool.spawn(move || {
            *task_done.0.lock().unwrap() = true;
            task_done.1.notify_one();
        });
        let mut ran = done.0.lock().unwrap();
        while !*ran {
            ran = done.1.wait(ran).unwrap();
        }
        drop(ran);
        drop(pool);
        assert_eq!(dreadpool_core::current_worker_index(), None);
    });
}

/// `use_current_thread` with one thread in all: the model's thread is the
/// pool's only worker. A `join()` on another thread races worker 0's run of
/// the pool's only task in a `yield_local`: worker 0's return to the user
/// must release it (`worker/current_thread.rs`, point 2).
#[test]
fn a_join_is_released_by_worker_0s_yield() {
    model(|| {
        let pool = Arc::new(
            ThreadPoolBuilder::new()
                .with_threads(1)
                .use_current_thread()
                .build(),
        );
        let (count, task) = counter();
        pool.spawn(task);
        let joiner = {
            let pool = Arc::clone(&pool);
            loom::thread::spawn(move || pool.join())
        };
        assert_eq!(
            dreadpool_core::yield_local(),
            Some(dreadpool_core::Yield::Executed)
        );
        joiner.join().unwrap();
        assert_eq!(count.load(Ordering::Relaxed), 1);
    });
}
