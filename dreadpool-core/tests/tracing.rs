//! The pool's tracing output, as a host application's subscriber sees it.
#![cfg(feature = "tracing")]

use dreadpool_core::ThreadPoolBuilder;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

/// Everything the global fmt subscriber wrote.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Installs one global subscriber for this test binary (worker threads only
/// see a global one) and returns its output buffer.
fn captured() -> Captured {
    static CAPTURED: OnceLock<Captured> = OnceLock::new();
    CAPTURED
        .get_or_init(|| {
            let captured = Captured::default();
            let writer = captured.clone();
            tracing_subscriber::fmt()
                .with_max_level(tracing::Level::TRACE)
                .with_ansi(false)
                .with_writer(move || writer.clone())
                .init();
            captured
        })
        .clone()
}

fn lines_with(captured: &Captured, needle: &str) -> Vec<String> {
    String::from_utf8_lossy(&captured.0.lock().unwrap())
        .lines()
        .filter(|l| l.contains(needle))
        .map(str::to_owned)
        .collect()
}

#[test]
fn workers_run_in_a_span_and_panics_are_logged() {
    let captured = captured();
    let pool = ThreadPoolBuilder::new()
        .with_threads(1)
        .with_thread_name("traced")
        .build();
    pool.spawn(|| panic!("logged panic"));
    pool.join();
    drop(pool);
    let panics = lines_with(&captured, "logged panic");
    assert_eq!(panics.len(), 1, "{panics:?}");
    let line = &panics[0];
    assert!(line.contains("ERROR"), "{line}");
    assert!(
        line.contains("dreadpool.worker{pool=\"traced\" worker=0}"),
        "{line}"
    );
    let respawns = lines_with(&captured, "worker thread replaced");
    assert!(
        respawns
            .iter()
            .any(|l| l.contains("WARN") && l.contains("pool=\"traced\"")),
        "{respawns:?}"
    );
    let started = lines_with(&captured, "dreadpool started");
    assert!(
        started
            .iter()
            .any(|l| l.contains("DEBUG") && l.contains("pool=\"traced\"")),
        "{started:?}"
    );
    let stopped = lines_with(&captured, "dreadpool shut down");
    assert!(
        stopped.iter().any(|l| l.contains("pool=\"traced\"")),
        "{stopped:?}"
    );
    let sleeps = lines_with(&captured, "sleeping");
    assert!(
        sleeps
            .iter()
            .any(|l| l.contains("TRACE") && l.contains("pool=\"traced\"")),
        "{sleeps:?}"
    );
}

#[test]
fn a_task_runs_inside_the_span_it_was_spawned_in() {
    let captured = captured();
    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_thread_name("spanned")
        .build();
    let handle = pool.handle();
    tracing::info_span!("request", id = 42).in_scope(|| {
        pool.spawn(move || {
            tracing::info!("outer task");
            // And onwards: a task spawned by that task keeps the span.
            handle.spawn(|| tracing::info!("inner task"));
        });
    });
    pool.spawn(|| tracing::info!("task outside any request"));
    pool.join();
    for needle in ["outer task", "inner task"] {
        let lines = lines_with(&captured, needle);
        assert_eq!(lines.len(), 1, "{lines:?}");
        // The spawner's span replaces the worker's as the task's context:
        // the host's logs keep the request they belong to.
        assert!(lines[0].contains("request{id=42}"), "{}", lines[0]);
    }
    let outside = lines_with(&captured, "task outside any request");
    assert!(!outside[0].contains("request{"), "{}", outside[0]);
}

#[test]
fn steals_are_traced_with_victim_and_batch() {
    let captured = captured();
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .with_threads(2)
            .with_thread_name("thief")
            .build(),
    );
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let p = Arc::clone(&pool);
    pool.spawn(move || {
        let home = std::thread::current().id();
        let (seen_tx, seen_rx) = std::sync::mpsc::channel();
        for _ in 0..100 {
            let seen_tx = seen_tx.clone();
            p.spawn(move || {
                if std::thread::current().id() != home {
                    let _ = seen_tx.send(());
                }
            });
        }
        // Held until a child ran elsewhere, which takes a steal.
        seen_rx.recv().unwrap();
        drop(tx);
    });
    let _ = rx.recv();
    pool.join();
    let steals = lines_with(&captured, "stole");
    assert!(
        steals
            .iter()
            .any(|l| l.contains("pool=\"thief\"") && l.contains("victim=") && l.contains("batch=")),
        "{steals:?}"
    );
}

#[test]
fn an_awaited_task_runs_inside_the_span_it_was_spawned_in() {
    let captured = captured();
    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_thread_name("awaited")
        .build();
    let value = tracing::info_span!("async_request", id = 7).in_scope(|| {
        let handle = pool.spawn_with_handle(|| {
            tracing::info!("offloaded work");
            5
        });
        futures_executor::block_on(handle)
    });
    assert_eq!(value.unwrap(), 5);
    let lines = lines_with(&captured, "offloaded work");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("async_request{id=7}"), "{}", lines[0]);
}

#[test]
fn thread_handlers_run_inside_the_worker_span() {
    let captured = captured();
    let pool = ThreadPoolBuilder::new()
        .with_threads(1)
        .with_thread_name("hooked")
        .with_start_handler(|index| tracing::info!(index, "start handler ran"))
        .with_exit_handler(|_| panic!("exit handler fails"))
        .build();
    drop(pool);
    let starts = lines_with(&captured, "start handler ran");
    assert_eq!(starts.len(), 1, "{starts:?}");
    assert!(
        starts[0].contains("dreadpool.worker{pool=\"hooked\" worker=0}"),
        "{}",
        starts[0]
    );
    let failures = lines_with(&captured, "thread handler panicked");
    assert!(
        failures.iter().any(|l| l.contains("ERROR")
            && l.contains("pool=\"hooked\"")
            && l.contains("the exit handler")
            && l.contains("exit handler fails")),
        "{failures:?}"
    );
}

#[test]
fn stolen_forks_are_traced_with_their_owner() {
    let captured = captured();
    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_thread_name("forker")
        .build();
    let b_started = std::sync::atomic::AtomicBool::new(false);
    pool.install(|| {
        dreadpool_core::join(
            || {
                // `a` holds its worker until `b` runs, which takes a steal.
                while !b_started.load(std::sync::atomic::Ordering::Acquire) {
                    std::thread::yield_now();
                }
            },
            || b_started.store(true, std::sync::atomic::Ordering::Release),
        )
    });
    let shared = lines_with(&captured, "shared a fork");
    let stolen = lines_with(&captured, "stole a fork");
    assert!(
        shared.iter().any(|l| l.contains("pool=\"forker\"")),
        "{shared:?}"
    );
    assert!(
        stolen
            .iter()
            .any(|l| l.contains("pool=\"forker\"") && l.contains("owner=")),
        "{stolen:?}"
    );
}
