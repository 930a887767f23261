//! The global pool's one-time configuration under racing initialisers.
//!
//! The global pool is set once per process, so each round runs in a child
//! process: the test re-runs this binary's ignored `race_round` test, which
//! races configured `build_global` calls against default initialisers (a
//! `join` outside every pool, `global_pool()`) behind a barrier, then checks
//! that exactly one initialiser won, everyone sees the winner's pool, and
//! only the winner's threads were ever started.

use dreadpool_core::{global_pool, join, BuildError, ThreadPool, ThreadPoolBuilder};
use std::process::Command;
use std::sync::{Arc, Barrier};
use std::thread;

const ROUNDS: usize = 16;
const CONFIGURED: usize = 4;
const DEFAULT: usize = 2;

#[test]
fn racing_initialisers_agree_on_one_pool() {
    let exe = std::env::current_exe().unwrap();
    for round in 0..ROUNDS {
        let output = Command::new(&exe)
            .args(["race_round", "--exact", "--ignored", "--test-threads=1"])
            .args(["--nocapture"])
            .env_remove("DREADPOOL_THREADS")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "round {round} failed:\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.contains("1 passed"),
            "round {round} ran no race:\n{stdout}"
        );
    }
}

/// Who initialised the pool, as one racer saw it.
enum Outcome {
    Configured(usize, &'static ThreadPool),
    Refused,
    Default(&'static ThreadPool),
}

#[test]
#[ignore = "one round of the race; run by racing_initialisers_agree_on_one_pool in a child process"]
fn race_round() {
    let barrier = Arc::new(Barrier::new(CONFIGURED + DEFAULT));
    let mut racers = Vec::new();
    for i in 0..CONFIGURED {
        let barrier = Arc::clone(&barrier);
        racers.push(thread::spawn(move || {
            let builder = ThreadPoolBuilder::new()
                .with_threads(i + 1)
                .with_thread_name(format!("racer{i}"));
            barrier.wait();
            match builder.build_global() {
                Ok(()) => Outcome::Configured(i, global_pool()),
                Err(BuildError::GlobalPoolAlreadyInitialized) => Outcome::Refused,
                Err(other) => panic!("unexpected build error: {other}"),
            }
        }));
    }
    for i in 0..DEFAULT {
        let barrier = Arc::clone(&barrier);
        racers.push(thread::spawn(move || {
            barrier.wait();
            if i % 2 == 0 {
                assert_eq!(join(|| 1, || 2), (1, 2));
            }
            Outcome::Default(global_pool())
        }));
    }
    let outcomes: Vec<Outcome> = racers.into_iter().map(|r| r.join().unwrap()).collect();

    let pool = global_pool();
    let winners: Vec<usize> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Configured(i, p) => {
                assert!(std::ptr::eq(*p, pool));
                Some(*i)
            }
            Outcome::Default(p) => {
                assert!(std::ptr::eq(*p, pool));
                None
            }
            Outcome::Refused => None,
        })
        .collect();
    assert!(winners.len() <= 1, "two configurations won: {winners:?}");
    let prefix = match winners.first() {
        Some(&i) => {
            assert_eq!(pool.threads(), i + 1);
            assert_eq!(pool.name(), format!("racer{i}"));
            format!("racer{i}-")
        }
        // A default initialiser won: every configured call was refused.
        None => "dreadpool-glob".to_owned(),
    };
    // Every worker has set its name once it has run a broadcast.
    pool.broadcast(|_| ());
    let names = pool_thread_names();
    assert!(
        names.iter().all(|n| n.starts_with(&prefix)),
        "a losing initialiser started threads: {names:?}"
    );
    assert_eq!(names.len(), pool.threads(), "{names:?}");
    // Later calls are refused, and change nothing.
    let late = ThreadPoolBuilder::new().with_threads(7).build_global();
    assert!(matches!(
        late,
        Err(BuildError::GlobalPoolAlreadyInitialized)
    ));
    assert!(std::ptr::eq(global_pool(), pool));
    assert_eq!(pool_thread_names().len(), pool.threads());
}

/// The names of this process's threads that belong to some racer's pool.
fn pool_thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|comm| comm.trim_end().to_owned())
        .filter(|comm| comm.starts_with("racer") || comm.starts_with("dreadpool-glob"))
        .collect()
}
