//! Awaiting a `TaskHandle` from async code: on tokio (current-thread and
//! multi-thread runtimes) and `futures::executor`, with panics, and with
//! futures dropped before their task ends.
#![cfg(not(loom))]

use dreadpool_core::{TaskHandle, ThreadPool, ThreadPoolBuilder};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

fn pool(threads: usize) -> ThreadPool {
    ThreadPoolBuilder::new().with_threads(threads).build()
}

/// Long enough never to be reached on a loaded machine unless something is
/// broken; a test that waits this long fails rather than hangs.
const PATIENCE: Duration = Duration::from_secs(60);

#[test]
fn awaiting_on_a_current_thread_runtime_never_blocks_the_executor() {
    let pool = pool(2);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let ticks = Arc::new(AtomicUsize::new(0));
    runtime.block_on(async {
        // The pool task ends only once another async task on this same
        // executor thread has ticked 100 times. Had the await blocked the
        // thread, the ticker could never run and the pool task would give up.
        let (tx, rx) = mpsc::channel::<()>();
        let heavy = pool.spawn_with_handle(move || rx.recv_timeout(PATIENCE).is_ok());
        let ticker = {
            let ticks = Arc::clone(&ticks);
            tokio::spawn(async move {
                for _ in 0..100 {
                    ticks.fetch_add(1, Ordering::Relaxed);
                    tokio::task::yield_now().await;
                }
                tx.send(()).unwrap();
            })
        };
        let released = heavy.await.unwrap();
        assert!(released, "the executor thread was blocked by the await");
        ticker.await.unwrap();
    });
    assert_eq!(ticks.load(Ordering::Relaxed), 100);
}

#[test]
fn a_100ms_task_leaves_the_executor_free() {
    let pool = pool(2);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let progress = runtime.block_on(async {
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        // The pool task starts its 100 ms once the other async task has run
        // a first turn, so that the count below is of turns taken while the
        // await was pending (on a loaded machine the pool could otherwise
        // finish before the executor polls anything).
        let (first_turn, turned) = mpsc::channel::<()>();
        let heavy = {
            let done = Arc::clone(&done);
            pool.spawn_with_handle(move || {
                let _ = turned.recv_timeout(PATIENCE);
                let started = std::time::Instant::now();
                while started.elapsed() < Duration::from_millis(100) {
                    std::hint::spin_loop();
                }
                done.store(true, Ordering::Release);
            })
        };
        let other = tokio::spawn(async move {
            first_turn.send(()).unwrap();
            let mut turns = 0usize;
            while !done.load(Ordering::Acquire) {
                turns += 1;
                tokio::task::yield_now().await;
            }
            turns
        });
        heavy.await.unwrap();
        other.await.unwrap()
    });
    // The other task ran while the pool task spun (at least once; on an
    // idle executor it runs many thousands of times).
    assert!(progress > 0, "no other async task ran during the pool task");
}

#[test]
fn thousands_of_concurrent_awaits_on_a_multi_thread_runtime() {
    const TASKS: u64 = 5_000;
    let pool = Arc::new(pool(2));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let sum = runtime.block_on(async {
        let awaiting: Vec<_> = (0..TASKS)
            .map(|i| {
                let (pool, ran) = (Arc::clone(&pool), Arc::clone(&ran));
                tokio::spawn(async move {
                    pool.spawn_with_handle(move || {
                        ran.fetch_add(1, Ordering::Relaxed);
                        i * 2
                    })
                    .await
                    .unwrap()
                })
            })
            .collect();
        let mut sum = 0;
        for task in awaiting {
            sum += task.await.unwrap();
        }
        sum
    });
    assert_eq!(sum, TASKS * (TASKS - 1));
    assert_eq!(
        ran.load(Ordering::Relaxed),
        TASKS as usize,
        "each task ran exactly once"
    );
}

#[test]
fn awaiting_with_futures_block_on() {
    let pool = pool(2);
    let answer = futures_executor::block_on(pool.spawn_with_handle(|| 6 * 7));
    assert_eq!(answer.unwrap(), 42);
    // Several at once, and the handle from a `Handle` too.
    let handle = pool.handle();
    let (a, b) = futures_executor::block_on(async {
        let a = pool.spawn_with_handle(|| "a");
        let b = handle.spawn_with_handle(|| "b");
        (a.await.unwrap(), b.await.unwrap())
    });
    assert_eq!((a, b), ("a", "b"));
}

#[test]
fn a_panic_arrives_as_err_with_its_payload() {
    let pool = pool(2);
    let result =
        futures_executor::block_on(pool.spawn_with_handle(|| -> u32 { panic!("no answer") }));
    let payload = result.unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"no answer"));
    assert_eq!(pool.panic_count(), 0, "a handle's panic is the awaiter's");
    // The pool is whole afterwards.
    assert_eq!(
        futures_executor::block_on(pool.spawn_with_handle(|| 1)).unwrap(),
        1
    );
}

/// A waker that counts its wakes and tells a channel.
struct Signal {
    wakes: AtomicUsize,
    tx: std::sync::Mutex<mpsc::Sender<()>>,
}

impl Wake for Signal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.wakes.fetch_add(1, Ordering::Relaxed);
        let _ = self.tx.lock().unwrap().send(());
    }
}

fn signal() -> (Arc<Signal>, mpsc::Receiver<()>) {
    let (tx, rx) = mpsc::channel();
    let signal = Arc::new(Signal {
        wakes: AtomicUsize::new(0),
        tx: std::sync::Mutex::new(tx),
    });
    (signal, rx)
}

fn poll_once<T>(handle: &mut TaskHandle<T>, waker: &Waker) -> Poll<std::thread::Result<T>> {
    Pin::new(handle).poll(&mut Context::from_waker(waker))
}

#[test]
fn a_pending_poll_is_woken_once_when_the_task_ends() {
    let pool = pool(2);
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let mut handle = pool.spawn_with_handle(move || {
        gate_rx.recv().unwrap();
        7
    });
    let (signal, woken) = signal();
    let waker = Waker::from(Arc::clone(&signal));
    assert!(poll_once(&mut handle, &waker).is_pending());
    // Polled again by the same task: the waker is kept, not cloned again.
    assert!(poll_once(&mut handle, &waker).is_pending());
    assert_eq!(signal.wakes.load(Ordering::Relaxed), 0);
    gate_tx.send(()).unwrap();
    woken
        .recv_timeout(PATIENCE)
        .expect("the waker was not woken");
    assert_eq!(
        poll_once(&mut handle, &waker).map(Result::unwrap),
        Poll::Ready(7)
    );
    assert_eq!(signal.wakes.load(Ordering::Relaxed), 1);
    drop(handle);
    drop(waker);
    // The task drops its waker after waking it: wait for the task to end.
    pool.join();
    assert_eq!(Arc::strong_count(&signal), 1, "a waker clone was leaked");
}

/// Counts drops of the task's result.
struct Dropped(Arc<AtomicUsize>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn a_future_dropped_early_leaves_the_task_running_and_leaks_nothing() {
    let pool = pool(2);
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let (ran_tx, ran_rx) = mpsc::channel::<()>();
    let drops = Arc::new(AtomicUsize::new(0));
    let result_drops = Arc::clone(&drops);
    let mut handle = pool.spawn_with_handle(move || {
        gate_rx.recv().unwrap();
        ran_tx.send(()).unwrap();
        Dropped(result_drops)
    });
    let (signal, _woken) = signal();
    let waker = Waker::from(Arc::clone(&signal));
    assert!(poll_once(&mut handle, &waker).is_pending());
    assert_eq!(
        Arc::strong_count(&signal),
        3,
        "ours, the waker, the slot's clone"
    );
    drop(handle);
    assert_eq!(
        Arc::strong_count(&signal),
        2,
        "dropping the future released the slot's waker"
    );
    gate_tx.send(()).unwrap();
    ran_rx
        .recv_timeout(PATIENCE)
        .expect("the detached task did not run");
    pool.join();
    assert_eq!(
        drops.load(Ordering::Relaxed),
        1,
        "the detached result was dropped once"
    );
    assert_eq!(
        signal.wakes.load(Ordering::Relaxed),
        0,
        "a dropped future was woken"
    );
    drop(waker);
    assert_eq!(Arc::strong_count(&signal), 1);
}

#[test]
fn join_still_works_after_a_pending_poll() {
    let pool = pool(1);
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let mut handle = pool.spawn_with_handle(move || {
        gate_rx.recv().unwrap();
        "joined"
    });
    let (signal, _woken) = signal();
    assert!(poll_once(&mut handle, &Waker::from(Arc::clone(&signal))).is_pending());
    gate_tx.send(()).unwrap();
    assert_eq!(handle.join().unwrap(), "joined");
    // (The task wakes and drops the waker just after the join can return.)
    pool.join();
    assert_eq!(Arc::strong_count(&signal), 1, "the waker was released");
}

#[test]
#[should_panic(expected = "polled after it completed")]
fn polling_after_completion_panics_clearly() {
    let pool = pool(1);
    let mut handle = pool.spawn_with_handle(|| 1);
    let (signal, _woken) = signal();
    let waker = Waker::from(signal);
    assert_eq!(futures_executor::block_on(&mut handle).unwrap(), 1);
    let _ = poll_once(&mut handle, &waker);
}

/// The hand-off on real threads, hammered: each round's first poll races
/// the task's end. A lost wakeup leaves `block_on` parked forever, which the
/// watchdog turns into a failure.
#[test]
fn a_poll_racing_the_task_never_loses_the_wakeup() {
    const ROUNDS: u64 = 20_000;
    for threads in [1, 2] {
        let pool = Arc::new(pool(threads));
        let (done_tx, done_rx) = mpsc::channel();
        let hammer = {
            let pool = Arc::clone(&pool);
            std::thread::spawn(move || {
                let mut sum = 0;
                for i in 0..ROUNDS {
                    sum += futures_executor::block_on(pool.spawn_with_handle(move || i)).unwrap();
                }
                done_tx.send(sum).unwrap();
            })
        };
        let sum = done_rx
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("a wakeup was lost on {threads} threads"));
        hammer.join().unwrap();
        assert_eq!(sum, ROUNDS * (ROUNDS - 1) / 2);
    }
}
