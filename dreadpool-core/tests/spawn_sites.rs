//! Spawn sites: each spawn API records its caller's line (`#[track_caller]`)
//! at `Tasks` level, from outside the pool and from its own tasks.
#![cfg(feature = "recorder")]

use dreadpool_core::{
    EventKind, RecordLevel, Recording, SpawnQueue, ThreadPool, ThreadPoolBuilder,
};
use std::collections::BTreeMap;

fn pool(threads: usize) -> ThreadPool {
    ThreadPoolBuilder::new()
        .with_threads(threads)
        .with_record_level(RecordLevel::Tasks)
        .build()
}

/// The lines of this file's spawns in `recording`, by queue, sorted.
fn lines(recording: &Recording) -> BTreeMap<&'static str, Vec<u32>> {
    let mut lines: BTreeMap<&'static str, Vec<u32>> = BTreeMap::new();
    for event in recording.events() {
        if let EventKind::Spawn { task, queue, .. } = event.kind {
            let site = recording
                .task_site(task)
                .unwrap_or_else(|| panic!("task {task} has no site"));
            assert!(site.file().ends_with("spawn_sites.rs"), "{site}");
            let queue = match queue {
                SpawnQueue::Local => "local",
                SpawnQueue::Global => "global",
                SpawnQueue::Inbox { .. } => "inbox",
            };
            lines.entry(queue).or_default().push(site.line());
        }
    }
    for v in lines.values_mut() {
        v.sort_unstable();
    }
    lines
}

#[test]
fn outside_spawns_record_their_callers_line() {
    let pool = pool(2);
    let spawn = line!() + 1;
    pool.spawn(|| {});
    let try_spawn = line!() + 1;
    pool.try_spawn(|| {}).unwrap();
    let with_handle = line!() + 1;
    pool.spawn_with_handle(|| 1).join().unwrap();
    let handle = pool.handle();
    let handle_spawn = line!() + 1;
    handle.spawn(|| {});
    let handle_try = line!() + 1;
    handle.try_spawn(|| {}).unwrap();
    let handle_with = line!() + 1;
    handle.spawn_with_handle(|| 2).join().unwrap();
    pool.join();
    let recording = pool.recording();
    let mut want = vec![
        spawn,
        try_spawn,
        with_handle,
        handle_spawn,
        handle_try,
        handle_with,
    ];
    want.sort_unstable();
    assert_eq!(lines(&recording).get("global"), Some(&want));
    // The column is the method name's: `pool.spawn` here, at column 10.
    let site = recording
        .task_sites()
        .map(|(_, site)| site)
        .find(|site| site.line() == spawn)
        .unwrap();
    assert_eq!(site.column(), 10, "{site:?}");
}

#[test]
fn a_tasks_own_spawns_record_their_line() {
    let pool = pool(1);
    let handle = pool.handle();
    let (done, finished) = std::sync::mpsc::channel();
    let outer = line!() + 1;
    pool.spawn(move || {
        handle.spawn(|| {});
        let _ = done.send(line!() - 1);
    });
    let inner = finished.recv().unwrap();
    pool.join();
    let recording = pool.recording();
    let lines = lines(&recording);
    assert_eq!(lines.get("global"), Some(&vec![outer]));
    assert_eq!(lines.get("local"), Some(&vec![inner]));
}

#[test]
fn scope_and_broadcast_spawns_record_their_line() {
    let pool = pool(2);
    let scoped = line!() + 2;
    pool.scope(|s| {
        s.spawn(|| {});
    });
    let broadcast = line!() + 1;
    pool.broadcast(|_| ());
    let recording = pool.recording();
    let lines = lines(&recording);
    assert_eq!(lines.get("global"), Some(&vec![scoped]));
    assert_eq!(lines.get("inbox"), Some(&vec![broadcast, broadcast]));
}

#[test]
fn install_records_its_callers_line() {
    let pool = pool(1);
    let line = line!() + 1;
    assert_eq!(pool.install(|| 7), 7);
    let handle_line = line!() + 1;
    assert_eq!(pool.handle().install(|| 8), 8);
    let recording = pool.recording();
    assert_eq!(
        lines(&recording).get("global"),
        Some(&vec![line, handle_line])
    );
}

#[test]
fn below_tasks_level_no_sites() {
    let pool = ThreadPoolBuilder::new()
        .with_threads(1)
        .with_record_level(RecordLevel::Scheduler)
        .build();
    pool.spawn(|| {});
    pool.join();
    assert_eq!(pool.recording().task_sites().count(), 0);
}

/// A child queued behind its long-running parent: the explanation names the
/// child's site for the wait, the parent's for the long task, and totals
/// the waits by site, largest first.
#[test]
fn explain_names_the_sites_of_the_wait_and_of_the_long_task() {
    use dreadpool_core::WaitCause;
    let pool = pool(1);
    let handle = pool.handle();
    let (spawned_tx, spawned_rx) = std::sync::mpsc::channel();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let parent_line = line!() + 1;
    pool.spawn(move || {
        for _ in 0..3 {
            handle.spawn(|| ());
        }
        spawned_tx.send(line!() - 2).unwrap();
        go_rx.recv().unwrap();
    });
    let child_line = spawned_rx.recv().unwrap();
    go_tx.send(()).unwrap();
    pool.join();
    let recording = pool.recording();
    let explanation = recording.explain(10).unwrap();
    let child = explanation
        .worst
        .iter()
        .find(|w| matches!(w.cause, WaitCause::BehindLongTask { .. }))
        .unwrap_or_else(|| panic!("a wait behind the parent: {explanation:?}"));
    assert_eq!(recording.task_site(child.task).unwrap().line(), child_line);
    let WaitCause::BehindLongTask {
        task: Some(parent), ..
    } = child.cause
    else {
        panic!("the long task's id: {:?}", child.cause);
    };
    assert_eq!(recording.task_site(parent).unwrap().line(), parent_line);
    // Largest total wait first. (Which site is first depends on the
    // machine: the parent's one wait includes its new thread's start.)
    assert!(
        explanation
            .by_site
            .windows(2)
            .all(|w| w[0].wait_total_ns >= w[1].wait_total_ns),
        "{explanation:?}"
    );
    let children = explanation
        .by_site
        .iter()
        .find(|t| t.site.as_ref().is_some_and(|s| s.line() == child_line))
        .unwrap_or_else(|| panic!("the children's site: {explanation:?}"));
    assert_eq!(children.waits, 3);
    let parent_total = explanation
        .by_site
        .iter()
        .find(|t| t.site.as_ref().is_some_and(|s| s.line() == parent_line))
        .unwrap();
    assert_eq!(parent_total.waits, 1);
    assert!(parent_total.run_ns > 0, "{explanation:?}");
}

/// A task spawned into a pool whose only worker sleeps waits for the wake:
/// explained as the pool asleep, at the spawn's line.
#[test]
fn explain_names_the_site_of_a_wait_for_a_sleeping_pool() {
    use dreadpool_core::{WaitCause, WorkerState};
    let pool = pool(1);
    pool.spawn(|| ());
    pool.join();
    // Registered asleep: the next spawn must wake it.
    while pool.metrics().workers_in(WorkerState::Sleeping) != 1 {
        std::thread::yield_now();
    }
    let line = line!() + 1;
    pool.spawn(|| ());
    pool.join();
    let recording = pool.recording();
    let explanation = recording.explain(10).unwrap();
    let woken = explanation
        .worst
        .iter()
        .find(|w| recording.task_site(w.task).map(|s| s.line()) == Some(line))
        .unwrap_or_else(|| panic!("the woken task's wait: {explanation:?}"));
    assert!(
        matches!(woken.cause, WaitCause::PoolAsleep { .. }),
        "{explanation:?}"
    );
}

/// A task spawned from outside while the only worker runs a long task waits
/// with every worker busy: explained so, at the spawn's line, and what the
/// worker ran meanwhile is the long task, at its own line.
#[test]
fn explain_names_the_sites_of_a_wait_in_a_saturated_pool() {
    use dreadpool_core::WaitCause;
    let pool = pool(1);
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let long_line = line!() + 1;
    pool.spawn(move || {
        started_tx.send(()).unwrap();
        release_rx.recv().unwrap();
    });
    started_rx.recv().unwrap();
    let line = line!() + 1;
    pool.spawn(|| ());
    release_tx.send(()).unwrap();
    pool.join();
    let recording = pool.recording();
    let explanation = recording.explain(10).unwrap();
    let wait = explanation
        .worst
        .iter()
        .find(|w| recording.task_site(w.task).map(|s| s.line()) == Some(line))
        .unwrap_or_else(|| panic!("the queued task's wait: {explanation:?}"));
    assert_eq!(wait.cause, WaitCause::AllWorkersBusy, "{explanation:?}");
    let meanwhile = recording.ran_meanwhile(wait);
    let (Some(long), _) = meanwhile[0].longest.expect("the worker ran the long task") else {
        panic!("the long task has an id: {meanwhile:?}");
    };
    assert_eq!(recording.task_site(long).unwrap().line(), long_line);
}

/// A join tree whose leaves spin: both workers are inside it, stealing
/// forks from each other, and neither looks at the global queue until its
/// part is done (a worker helps a computation in flight first).
fn spinning_tree(depth: u32, at_leaf: &(dyn Fn() + Sync)) {
    if depth == 0 {
        at_leaf();
        let end = std::time::Instant::now() + std::time::Duration::from_micros(40);
        while std::time::Instant::now() < end {
            std::hint::spin_loop();
        }
        return;
    }
    dreadpool_core::join(
        || spinning_tree(depth - 1, at_leaf),
        || spinning_tree(depth - 1, at_leaf),
    );
}

/// A task spawned from outside while both workers are in a join tree sits
/// in the global queue, unpulled, while one worker, waiting at its join,
/// takes forks from the other: explained as a starved global queue, at its
/// line.
#[test]
fn explain_names_the_site_of_a_wait_in_a_starved_global_queue() {
    use dreadpool_core::{current_worker_index, WaitCause};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{mpsc, Arc, Barrier, Mutex};
    let pool = pool(2);
    let (in_tree_tx, in_tree_rx) = mpsc::channel::<()>();
    // The test thread and each worker's first leaf: the tree goes on only
    // once the outside task is in the global queue.
    let spawned = Arc::new(Barrier::new(3));
    let gate = Arc::clone(&spawned);
    pool.spawn(move || {
        let root = current_worker_index().unwrap();
        let (thief_in_tx, thief_in_rx) = mpsc::channel::<()>();
        let thief_in_rx = Mutex::new(thief_in_rx);
        let thief_seen = AtomicBool::new(false);
        let at_leaf = || {
            if current_worker_index() != Some(root) && !thief_seen.swap(true, Ordering::AcqRel) {
                // The thief's first leaf: it stole the big half and holds
                // it (its oldest fork shared) until the spawn.
                thief_in_tx.send(()).unwrap();
                gate.wait();
            }
        };
        // The root's half is one leaf: it waits there until the thief is
        // in the big half, then until the spawn; then it waits at this
        // join, taking the thief's forks (before the global queue) until
        // the tree is done.
        dreadpool_core::join(
            || {
                thief_in_rx.lock().unwrap().recv().unwrap();
                in_tree_tx.send(()).unwrap();
                gate.wait();
            },
            || spinning_tree(8, &at_leaf),
        );
    });
    in_tree_rx.recv().unwrap();
    let line = line!() + 1;
    pool.spawn(|| ());
    spawned.wait();
    pool.join();
    let recording = pool.recording();
    let explanation = recording.explain(usize::MAX).unwrap();
    let wait = explanation
        .worst
        .iter()
        .find(|w| recording.task_site(w.task).map(|s| s.line()) == Some(line))
        .unwrap_or_else(|| panic!("the outside task's wait: {explanation:?}"));
    assert!(
        matches!(wait.cause, WaitCause::GlobalQueueStarved { steals, unpulled_ns }
            if steals > 0 && unpulled_ns * 2 >= wait.delay_ns()),
        "{wait:?}"
    );
}

/// A join on a worker whose fork another worker steals: the fork's run is
/// named by the join's line, and it is not taken for a task whose spawn
/// went missing.
#[test]
fn a_stolen_forks_run_records_its_joins_line() {
    use std::sync::mpsc;
    use std::time::Duration;
    let pool = pool(2);
    let (line, joiner) = pool.install(|| {
        let (stolen_tx, stolen_rx) = mpsc::channel::<usize>();
        // `a` holds this worker until `b` runs: on the other worker.
        let line = line!() + 1;
        let (thief, ()) = dreadpool_core::join(
            move || {
                stolen_rx
                    .recv_timeout(Duration::from_secs(60))
                    .expect("the fork was stolen")
            },
            move || {
                stolen_tx
                    .send(dreadpool_core::current_worker_index().unwrap())
                    .unwrap()
            },
        );
        let me = dreadpool_core::current_worker_index().unwrap();
        assert_ne!(thief, me);
        (line, me)
    });
    let recording = pool.recording();
    let forks: Vec<u64> = recording
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::ForkShared { fork } => Some(fork),
            _ => None,
        })
        .collect();
    let runs: Vec<(u64, dreadpool_core::Track)> = recording
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::RunBegin { task: Some(task) } if forks.contains(&task) => {
                Some((task, e.track))
            }
            _ => None,
        })
        .collect();
    let [(fork, track)] = runs[..] else {
        panic!("one stolen fork's run: {runs:?} of {forks:?}");
    };
    assert_ne!(track, dreadpool_core::Track::Worker(joiner));
    let site = recording.task_site(fork).expect("the fork's site");
    assert!(site.file().ends_with("spawn_sites.rs"), "{site}");
    assert_eq!(site.line(), line);
    assert_eq!(recording.explain(10).unwrap().spawns_missing, 0);
}
