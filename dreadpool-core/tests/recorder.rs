//! The flight recorder, on real threads: what it records at each level,
//! that spawns link to their runs across workers, that a small ring keeps
//! only the newest events, and that recordings taken while the pool runs
//! flat out are whole.
#![cfg(feature = "recorder")]

use dreadpool_core::{
    EventKind, RecordLevel, RecordedEvent, Recording, SpawnQueue, ThreadPool, ThreadPoolBuilder,
    Track, WaitCause, WorkerActivity,
};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier};

fn pool(threads: usize, level: RecordLevel) -> ThreadPool {
    ThreadPoolBuilder::new()
        .with_threads(threads)
        .with_thread_name("rec")
        .with_record_level(level)
        .build()
}

fn kinds(recording: &Recording) -> Vec<EventKind> {
    recording.events().iter().map(|e| e.kind).collect()
}

/// Every task's spawn, run begin and run end, by task id.
#[derive(Default, Debug)]
struct TaskTimeline {
    spawn: Option<RecordedEvent>,
    begin: Option<RecordedEvent>,
    end: Option<RecordedEvent>,
}

fn timelines(recording: &Recording) -> HashMap<u64, TaskTimeline> {
    let mut tasks: HashMap<u64, TaskTimeline> = HashMap::new();
    for event in recording.events() {
        match event.kind {
            EventKind::Spawn { task, .. } => tasks.entry(task).or_default().spawn = Some(*event),
            EventKind::RunBegin { task: Some(task) } => {
                tasks.entry(task).or_default().begin = Some(*event)
            }
            EventKind::RunEnd {
                task: Some(task), ..
            } => tasks.entry(task).or_default().end = Some(*event),
            _ => {}
        }
    }
    tasks
}

/// Checks what every recording must satisfy: time order; per worker, run
/// begins and ends alternate (a nested wait may open a second run inside a
/// first, so a stack, never an end without a begin of the same task).
fn assert_well_formed(recording: &Recording) {
    let events = recording.events();
    assert!(events.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
    let mut open: HashMap<usize, Vec<Option<u64>>> = HashMap::new();
    for event in events {
        let Track::Worker(worker) = event.track else {
            continue;
        };
        assert!(worker < recording.worker_names().len());
        match event.kind {
            EventKind::RunBegin { task } => open.entry(worker).or_default().push(task),
            EventKind::RunEnd { task, .. } => {
                let stack = open.entry(worker).or_default();
                // The ring may have dropped the begin of the oldest run.
                if let Some(top) = stack.pop() {
                    assert_eq!(
                        top, task,
                        "worker {worker}: an end that is not the open run's"
                    );
                }
            }
            _ => {}
        }
    }
}

/// `pool`'s recording once `done` holds of it, or the last one taken when
/// a minute has passed, for the caller's assertions to report. A worker
/// records some events a moment after `join()` returns (it falls asleep
/// later, and a run's end is its next event): tests poll for them, with a
/// deadline, not a sleep.
fn recording_once(pool: &ThreadPool, done: impl Fn(&Recording) -> bool) -> Recording {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let recording = pool.recording();
        if done(&recording) || std::time::Instant::now() > deadline {
            return recording;
        }
        std::thread::yield_now();
    }
}

#[test]
fn the_default_level_records_the_scheduler_but_no_tasks() {
    let pool = pool(2, RecordLevel::Scheduler);
    assert_eq!(pool.record_level(), RecordLevel::Scheduler);
    for _ in 0..100 {
        pool.spawn(|| {});
    }
    pool.join();
    // join() returns once the tasks are done; the workers fall asleep a
    // moment later.
    let recording = recording_once(&pool, |r| {
        r.events()
            .iter()
            .any(|e| e.kind == EventKind::State(WorkerActivity::Sleeping))
    });
    assert_eq!(recording.level(), RecordLevel::Scheduler);
    assert_eq!(recording.worker_names(), ["rec-0", "rec-1"]);
    let kinds = kinds(&recording);
    assert!(
        kinds
            .iter()
            .any(|k| matches!(k, EventKind::GlobalPull { .. })),
        "{kinds:?}"
    );
    assert!(kinds
        .iter()
        .any(|k| matches!(k, EventKind::State(WorkerActivity::Sleeping))));
    assert!(!kinds.iter().any(|k| matches!(
        k,
        EventKind::Spawn { .. } | EventKind::RunBegin { .. } | EventKind::RunEnd { .. }
    )));
    assert_well_formed(&recording);
}

#[test]
fn off_records_nothing_and_levels_switch_at_run_time() {
    let pool = pool(2, RecordLevel::Off);
    pool.spawn(|| {});
    pool.join();
    assert!(pool.recording().events().is_empty());

    pool.set_record_level(RecordLevel::Tasks);
    assert_eq!(pool.record_level(), RecordLevel::Tasks);
    let ran = Arc::new(AtomicUsize::new(0));
    for _ in 0..50 {
        let ran = Arc::clone(&ran);
        pool.spawn(move || {
            ran.fetch_add(1, Ordering::Relaxed);
        });
    }
    pool.join();
    // A run's end is the worker's next event (`recording::merge`), which
    // `join()` does not wait for: the worker that ran the last task may not
    // have recorded it yet (under load, 49 of 50 were whole).
    let whole = |r: &Recording| {
        timelines(r)
            .values()
            .filter(|t| t.spawn.is_some() && t.begin.is_some() && t.end.is_some())
            .count()
    };
    let at_tasks = recording_once(&pool, |r| whole(r) == 50);
    assert_eq!(
        whole(&at_tasks),
        50,
        "every task spawned at Tasks level has its whole life"
    );
    assert_well_formed(&at_tasks);

    pool.set_record_level(RecordLevel::Scheduler);
    let before = timelines(&pool.recording()).len();
    pool.spawn(|| {});
    pool.join();
    assert_eq!(
        timelines(&pool.recording()).len(),
        before,
        "no task events at Scheduler"
    );
}

#[test]
fn outside_spawns_are_on_the_spawning_threads_track() {
    let pool = pool(2, RecordLevel::Tasks);
    std::thread::Builder::new()
        .name("spawner".into())
        .spawn({
            let handle = pool.handle();
            move || {
                for _ in 0..10 {
                    handle.spawn(|| {});
                }
            }
        })
        .unwrap()
        .join()
        .unwrap();
    pool.join();
    let recording = pool.recording();
    let spawner = recording
        .outside_threads()
        .iter()
        .position(|n| n == "spawner")
        .expect("the spawning thread has a track");
    let outside_spawns = recording
        .events()
        .iter()
        .filter(|e| {
            e.track == Track::Outside(spawner)
                && matches!(
                    e.kind,
                    EventKind::Spawn {
                        queue: SpawnQueue::Global,
                        ..
                    }
                )
        })
        .count();
    assert_eq!(outside_spawns, 10);
    let linked = timelines(&recording)
        .values()
        .filter(|t| {
            t.spawn.is_some_and(|s| s.track == Track::Outside(spawner)) && t.begin.is_some()
        })
        .count();
    assert_eq!(linked, 10, "each outside spawn is linked to its run");
}

#[test]
fn a_skewed_load_shows_steals_and_flows_across_workers() {
    let pool = Arc::new(pool(4, RecordLevel::Tasks));
    // One task spawns 2,000 children locally and holds its worker until one
    // child ran elsewhere (so at least one steal happened).
    let (stolen_tx, stolen_rx) = mpsc::channel::<()>();
    let p = Arc::clone(&pool);
    pool.spawn(move || {
        let home = std::thread::current().id();
        for _ in 0..2_000 {
            let stolen_tx = stolen_tx.clone();
            p.spawn(move || {
                if std::thread::current().id() != home {
                    let _ = stolen_tx.send(());
                }
            });
        }
        let _ = stolen_rx.recv();
    });
    pool.join();
    let recording = pool.recording();
    assert_well_formed(&recording);
    let tasks = timelines(&recording);
    // Every task has a run slice, linked to its spawn.
    let children: Vec<&TaskTimeline> = tasks
        .values()
        .filter(|t| t.spawn.is_some_and(|s| matches!(s.track, Track::Worker(_))))
        .collect();
    assert_eq!(children.len(), 2_000);
    assert!(children
        .iter()
        .all(|t| t.begin.is_some() && t.end.is_some()));
    // The flows that cross workers: spawned on one, run on another.
    let crossed: Vec<(usize, usize)> = children
        .iter()
        .filter_map(|t| match (t.spawn?.track, t.begin?.track) {
            (Track::Worker(from), Track::Worker(to)) if from != to => Some((from, to)),
            _ => None,
        })
        .collect();
    assert!(!crossed.is_empty(), "no child ran on another worker");
    // Each worker that ran a child spawned elsewhere recorded a steal
    // before it (from the home worker, or from a worker that had stolen a
    // batch from it: with four workers children can travel twice), and the
    // first of those chains started at home.
    let home = match children[0].spawn.unwrap().track {
        Track::Worker(w) => w,
        Track::Outside(_) => unreachable!(),
    };
    let steals = |thief: usize| {
        recording.events().iter().filter_map(move |e| match e.kind {
            EventKind::Steal { victim, .. } if e.track == Track::Worker(thief) => Some(victim),
            _ => None,
        })
    };
    let thieves: HashSet<usize> = crossed.iter().map(|&(_, to)| to).collect();
    for &thief in &thieves {
        assert!(
            steals(thief).next().is_some(),
            "worker {thief} ran a stolen child but recorded no steal"
        );
    }
    assert!(
        thieves
            .iter()
            .any(|&thief| steals(thief).any(|victim| victim == home)),
        "no worker recorded a steal from the home worker {home}"
    );
    // Every child ran after its spawn.
    for t in &children {
        assert!(t.begin.unwrap().time_ns >= t.spawn.unwrap().time_ns);
    }
}

/// Spawns an empty task from a new thread, named with a fresh name (which
/// it returns), whose first spawn therefore reads the clock.
fn spawn_from_a_new_thread(pool: &ThreadPool) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let name = format!("reference-{}", NEXT.fetch_add(1, Ordering::Relaxed));
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name(name.clone())
            .spawn_scoped(s, || pool.spawn(|| {}))
            .unwrap();
    });
    name
}

/// The one spawn recorded on the outside thread named `name`.
fn only_spawn_of(recording: &dreadpool_core::Recording, name: &str) -> RecordedEvent {
    let track = recording
        .outside_threads()
        .iter()
        .position(|n| n == name)
        .expect("the thread's track is in the recording");
    let spawns: Vec<RecordedEvent> = recording
        .events()
        .iter()
        .filter(|e| e.track == Track::Outside(track) && matches!(e.kind, EventKind::Spawn { .. }))
        .copied()
        .collect();
    assert_eq!(spawns.len(), 1, "{name} spawned once");
    spawns[0]
}

/// One attempt of the test below: the recorded spawn of a task made after
/// the main thread's outside spawn, and that outside spawn's time.
fn spawn_after_an_outside_spawn() -> (RecordedEvent, RecordedEvent, u64) {
    let pool = Arc::new(pool(1, RecordLevel::Tasks));
    let (began_tx, began_rx) = mpsc::channel::<()>();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let p = Arc::clone(&pool);
    pool.spawn(move || {
        // Spawns in quick succession: the worker's next readings are quick,
        // so the spawns after them may take the latest reading.
        for _ in 0..4 {
            p.spawn(|| {});
        }
        let handle = dreadpool_core::current().unwrap();
        // Runs first (the local queue is LIFO): it waits, then spawns.
        p.spawn(move || {
            began_tx.send(()).unwrap();
            go_rx.recv().unwrap();
            handle.spawn(|| {});
        });
    });
    began_rx.recv().unwrap();
    // From outside, while the waiting task runs: a spawn that reads the
    // clock (the first spawn of a new thread always does). The spawn under
    // test happens after it.
    let reference = spawn_from_a_new_thread(&pool);
    go_tx.send(()).unwrap();
    pool.join();
    let recording = pool.recording();
    assert_well_formed(&recording);
    let outside = only_spawn_of(&recording, &reference);
    let last = *recording
        .events()
        .iter()
        .rfind(|e| e.track == Track::Worker(0) && matches!(e.kind, EventKind::Spawn { .. }))
        .expect("the worker's spawns were recorded");
    let EventKind::Spawn { task, .. } = last.kind else {
        unreachable!()
    };
    let run = timelines(&recording)[&task].begin.expect("it ran").time_ns;
    (last, outside, run)
}

#[test]
fn a_spawns_recorded_bounds_hold_the_moment_it_happened() {
    // A spawn's time is a lower bound (its own reading, or its worker's
    // latest reading before it), `within_ns` its distance to an upper
    // bound. The spawn under test happened after the outside spawn, so the
    // upper bound must not be before that; and its task ran after it. The
    // waiting task's spawn takes its run's reading when the readings
    // before came quickly (usual); on a loaded machine it may read the
    // clock itself, and the bounds must hold either way.
    let mut inherited = 0;
    for _ in 0..5 {
        let (spawn, outside, run) = spawn_after_an_outside_spawn();
        let EventKind::Spawn { within_ns, .. } = spawn.kind else {
            unreachable!()
        };
        assert!(
            spawn.time_ns + within_ns >= outside.time_ns,
            "the spawn at {} (within {within_ns} ns) is bounded to before the outside spawn at {} that it followed",
            spawn.time_ns,
            outside.time_ns
        );
        assert!(
            spawn.time_ns <= run,
            "its task ran at {run}, before its spawn"
        );
        assert!(spawn.time_ns + within_ns <= run.max(spawn.time_ns));
        if within_ns > 0 {
            inherited += 1;
        }
    }
    eprintln!("{inherited} of 5 spawns under test took their worker's latest reading");
}

#[test]
fn an_outside_spawn_after_a_pause_reads_the_clock() {
    // A thread outside the pool spawns in a quick loop, pauses while
    // another thread spawns, and spawns again. That spawn must carry a
    // reading of its own, after the other thread's spawn: had it taken the
    // thread's latest reading (as a worker's spawns may), the timeline
    // would show its task waiting through the pause
    // (`recorder/README.md`).
    let pool = pool(1, RecordLevel::Tasks);
    for _ in 0..64 {
        pool.spawn(|| {});
    }
    let reference = spawn_from_a_new_thread(&pool);
    pool.spawn(|| {});
    pool.join();
    let recording = pool.recording();
    assert_well_formed(&recording);
    let me = std::thread::current().name().unwrap_or("main").to_owned();
    let mine = recording
        .outside_threads()
        .iter()
        .position(|n| *n == me)
        .expect("the main thread's track is in the recording");
    let spawns: Vec<&RecordedEvent> = recording
        .events()
        .iter()
        .filter(|e| e.track == Track::Outside(mine) && matches!(e.kind, EventKind::Spawn { .. }))
        .collect();
    assert_eq!(spawns.len(), 65);
    for spawn in &spawns {
        let EventKind::Spawn { within_ns, .. } = spawn.kind else {
            unreachable!()
        };
        assert_eq!(within_ns, 0, "an outside spawn reads the clock: {spawn:?}");
    }
    let reference = only_spawn_of(&recording, &reference);
    assert!(
        spawns[64].time_ns >= reference.time_ns,
        "the spawn after the pause at {} is stamped before the spawn at {} that it followed",
        spawns[64].time_ns,
        reference.time_ns
    );
}

#[test]
fn a_small_ring_keeps_only_the_newest_events() {
    let pool = ThreadPoolBuilder::new()
        .with_threads(1)
        .with_record_level(RecordLevel::Tasks)
        .with_record_capacity(64)
        .build();
    let (tx, rx) = mpsc::channel();
    pool.spawn(move || {
        let handle = dreadpool_core::current().unwrap();
        for i in 0..1_000u32 {
            let tx = tx.clone();
            handle.spawn(move || tx.send(i).unwrap());
        }
    });
    pool.join();
    let mut order: Vec<u32> = rx.try_iter().collect();
    assert_eq!(order.len(), 1_000);
    let recording = pool.recording();
    // (Run ends are not recorded but made from the next event: see
    // `Recording`.)
    let worker_events = recording
        .events()
        .iter()
        .filter(|e| e.track == Track::Worker(0) && !matches!(e.kind, EventKind::RunEnd { .. }))
        .count();
    assert!(
        worker_events <= 64,
        "{worker_events} events from a 64-event ring"
    );
    assert!(recording.lost_events() > 1_000);
    // What it kept is the end of the run: the last task's run is there.
    let last_id = timelines(&recording)
        .into_iter()
        .filter(|(_, t)| t.end.is_some())
        .max_by_key(|(_, t)| t.end.unwrap().time_ns);
    assert!(last_id.is_some());
    order.sort_unstable();
    assert_eq!(order, (0..1_000).collect::<Vec<_>>());
}

#[test]
fn recordings_taken_while_the_pool_runs_flat_out_are_well_formed() {
    let pool = Arc::new(pool(2, RecordLevel::Tasks));
    let stop = Arc::new(AtomicBool::new(false));
    let ran = Arc::new(AtomicUsize::new(0));
    let feeder = {
        let (pool, stop, ran) = (Arc::clone(&pool), Arc::clone(&stop), Arc::clone(&ran));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                for _ in 0..100 {
                    let ran = Arc::clone(&ran);
                    pool.spawn(move || {
                        ran.fetch_add(1, Ordering::Relaxed);
                    });
                }
                pool.join();
            }
        })
    };
    // Wait until the pool is running flat out.
    while ran.load(Ordering::Relaxed) < 1_000 {
        std::thread::yield_now();
    }
    let mut with_runs = 0;
    for _ in 0..100 {
        let recording = pool.recording();
        assert_well_formed(&recording);
        if recording
            .events()
            .iter()
            .any(|e| matches!(e.kind, EventKind::RunBegin { task: Some(_) }))
        {
            with_runs += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    feeder.join().unwrap();
    assert_eq!(with_runs, 100, "every recording shows runs");
}

#[test]
fn panics_and_respawns_appear_on_the_right_worker() {
    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_record_level(RecordLevel::Tasks)
        .build();
    let barrier = Arc::new(Barrier::new(2));
    let b = Arc::clone(&barrier);
    // Hold worker A so that the panicking task runs on the other one.
    let (on_tx, on_rx) = mpsc::channel();
    pool.spawn(move || {
        on_tx
            .send(dreadpool_core::current_worker_index().unwrap())
            .unwrap();
        b.wait();
    });
    let held = on_rx.recv().unwrap();
    let (tx, rx) = mpsc::channel();
    pool.spawn(move || {
        tx.send(dreadpool_core::current_worker_index().unwrap())
            .unwrap();
        panic!("recorded panic");
    });
    let panicked_on = rx.recv().unwrap();
    assert_ne!(panicked_on, held);
    barrier.wait();
    pool.join();
    let recording = pool.recording();
    let on = |kind: fn(&EventKind) -> bool| -> Vec<Track> {
        recording
            .events()
            .iter()
            .filter(|e| kind(&e.kind))
            .map(|e| e.track)
            .collect()
    };
    assert_eq!(
        on(|k| matches!(k, EventKind::Panic { .. })),
        [Track::Worker(panicked_on)]
    );
    assert_eq!(
        on(|k| matches!(k, EventKind::RunEnd { panicked: true, .. })),
        [Track::Worker(panicked_on)]
    );
    assert_eq!(
        on(|k| matches!(k, EventKind::Respawn)),
        [Track::Worker(panicked_on)]
    );
    assert_eq!(
        on(|k| matches!(k, EventKind::State(WorkerActivity::Respawning))),
        [Track::Worker(panicked_on)]
    );
    assert_well_formed(&recording);
}

#[test]
fn waits_inside_tasks_are_recorded() {
    let pool = pool(1, RecordLevel::Scheduler);
    let inner = pool.handle();
    pool.spawn_with_handle(move || inner.spawn_with_handle(|| 1).join().unwrap())
        .join()
        .unwrap();
    let kinds = kinds(&pool.recording());
    let begin = kinds
        .iter()
        .position(|k| *k == EventKind::WaitBegin)
        .expect("a wait");
    let end = kinds
        .iter()
        .position(|k| *k == EventKind::WaitEnd)
        .expect("its end");
    assert!(begin < end);
}

#[test]
fn wakes_say_who_woke_the_worker() {
    let pool = pool(1, RecordLevel::Scheduler);
    // Let the worker fall asleep, then wake it from this thread. It records
    // `Sleeping` after registering as a sleeper, so once that is its last
    // state a spawn must wake it (poll with a deadline, no sleep).
    pool.spawn(|| {});
    pool.join();
    let last_state = |r: &Recording| {
        r.events().iter().rev().find_map(|e| match e.kind {
            EventKind::State(state) => Some(state),
            _ => None,
        })
    };
    let recording = recording_once(&pool, |r| last_state(r) == Some(WorkerActivity::Sleeping));
    assert_eq!(
        last_state(&recording),
        Some(WorkerActivity::Sleeping),
        "the worker never slept"
    );
    let (tx, rx) = mpsc::channel();
    // A spawn into the idle pool wakes the worker (or hands it the task).
    pool.spawn(move || tx.send(()).unwrap());
    rx.recv().unwrap();
    pool.join();
    let recording = pool.recording();
    let woke = recording
        .events()
        .iter()
        .any(|e| matches!(e.track, Track::Outside(_)) && e.kind == EventKind::Unpark { worker: 0 });
    let wake = recording
        .events()
        .iter()
        .any(|e| e.track == Track::Worker(0) && matches!(e.kind, EventKind::Wake { .. }));
    assert!(woke && wake, "{:?}", kinds(&recording));
}

#[test]
fn a_bad_capacity_is_an_error() {
    for events in [0, 1, usize::MAX] {
        let error = ThreadPoolBuilder::new()
            .with_record_capacity(events)
            .try_build()
            .unwrap_err();
        assert!(
            matches!(error, dreadpool_core::BuildError::InvalidRecordCapacity { events: e, .. } if e == events),
            "{error:?}"
        );
    }
}

#[test]
fn a_panic_trigger_fires_once_per_interval() {
    use dreadpool_core::{PanicPolicy, RecordTrigger};
    use std::time::Duration;
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_panic_policy(PanicPolicy::Continue)
        .with_record_trigger(
            RecordTrigger::to_callback(move |recording, reason| {
                let panics = recording
                    .events()
                    .iter()
                    .filter(|e| matches!(e.kind, EventKind::Panic { .. }))
                    .count();
                let _ = tx.lock().unwrap().send((reason.to_owned(), panics));
            })
            .on_panic()
            .at_most_every(Duration::from_secs(3600)),
        )
        .build();
    for _ in 0..20 {
        pool.spawn(|| panic!("storm"));
    }
    pool.join();
    let (reason, panics) = rx.recv().unwrap();
    assert_eq!(reason, "panic");
    assert!(
        panics >= 1,
        "the recording shows the panic that triggered it"
    );
    drop(pool); // waits for nothing of the trigger's; its thread may still run
                // One storm, one recording: any second one would already be queued or
                // follow the first within the hour-long interval.
    assert!(rx.recv_timeout(Duration::from_millis(200)).is_err());
}

#[cfg(feature = "metrics")]
#[test]
fn a_slow_task_trigger_fires_with_the_reason() {
    use dreadpool_core::RecordTrigger;
    use std::time::Duration;
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let pool = ThreadPoolBuilder::new()
        .with_threads(1)
        .with_latency_sampling(1)
        .with_record_trigger(
            RecordTrigger::to_callback(move |_, reason| {
                let _ = tx.lock().unwrap().send(reason.to_owned());
            })
            .on_run_time_over(Duration::from_millis(5)),
        )
        .build();
    pool.spawn(|| {}); // fast: no trigger
    let started = std::time::Instant::now();
    pool.spawn(move || {
        while started.elapsed() < Duration::from_millis(20) {
            std::hint::spin_loop();
        }
    });
    assert_eq!(rx.recv().unwrap(), "run time");
}

/// Runs a join on a two-worker pool whose `b` must run on the other worker:
/// `a` does not return until `b` has started.
fn join_with_b_stolen(pool: &ThreadPool) {
    let b_started = AtomicBool::new(false);
    pool.install(|| {
        dreadpool_core::join(
            || {
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
                while !b_started.load(Ordering::Acquire) {
                    assert!(std::time::Instant::now() < deadline, "b never started");
                    std::thread::yield_now();
                }
            },
            || b_started.store(true, Ordering::Release),
        )
    });
}

#[test]
fn a_stolen_fork_is_a_flow_from_its_sharing_to_its_run() {
    let pool = pool(2, RecordLevel::Scheduler);
    join_with_b_stolen(&pool);
    let recording = pool.recording();
    assert_well_formed(&recording);
    let shared: Vec<(Track, u64)> = recording
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::ForkShared { fork } => Some((e.track, fork)),
            _ => None,
        })
        .collect();
    let stolen: Vec<(Track, Option<u64>, usize)> = recording
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::ForkStolen { fork, owner } => Some((e.track, fork, owner)),
            _ => None,
        })
        .collect();
    assert_eq!(stolen.len(), 1, "one fork, stolen once: {stolen:?}");
    let (thief, fork, owner) = stolen[0];
    let fork = fork.expect("its sharing is in the recording");
    let (sharer, _) = *shared
        .iter()
        .find(|&&(_, f)| f == fork)
        .expect("the stolen fork's id matches a sharing");
    assert_eq!(sharer, Track::Worker(owner), "shared by its owner");
    assert_ne!(thief, sharer, "run by the other worker");
    // Both writers draw the flow: Chrome JSON's start and finish carry the
    // same id, on the two workers' lanes.
    let mut json = Vec::new();
    recording.write_chrome_json(&mut json).unwrap();
    let events: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let events = events["traceEvents"].as_array().unwrap();
    let names: HashSet<&str> = events.iter().filter_map(|e| e["name"].as_str()).collect();
    assert!(names.contains("fork shared") && names.contains("fork stolen"));
    let starts: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "s").collect();
    let finishes: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "f").collect();
    assert!(
        starts.iter().any(|s| finishes
            .iter()
            .any(|f| f["id"] == s["id"] && f["tid"] != s["tid"])),
        "no flow between two workers: {starts:?} {finishes:?}"
    );
}

/// `Recording::explain` on a real pool: a task spawned by a task that then
/// runs on (its worker is the pool's only one) waits behind that task, and
/// the explanation says so, naming the worker and the long task.
#[test]
fn explain_finds_a_task_waiting_behind_the_task_that_spawned_it() {
    let pool = pool(1, RecordLevel::Tasks);
    let (spawned_tx, spawned_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let child_ran = Arc::new(AtomicBool::new(false));
    let ran = Arc::clone(&child_ran);
    let handle = pool.handle();
    pool.spawn(move || {
        handle.spawn(move || ran.store(true, Ordering::SeqCst));
        spawned_tx.send(()).expect("the test waits");
        // The parent runs on until the test lets it go: the child, queued
        // on the same worker, waits for all of it.
        go_rx.recv().expect("the test sends");
    });
    spawned_rx.recv().expect("the parent spawned");
    go_tx.send(()).expect("the parent waits");
    pool.join();
    assert!(child_ran.load(Ordering::SeqCst));
    let explanation = pool.recording().explain(10).expect("Tasks level");
    assert_eq!(explanation.tasks, 2, "both spawns linked to their runs");
    // The child is the one spawned on the worker (the parent came from
    // this thread).
    let child = explanation
        .worst
        .iter()
        .find(|wait| wait.spawned_on == Track::Worker(0))
        .expect("the child's wait is explained");
    match child.cause {
        WaitCause::BehindLongTask {
            worker: 0,
            task: Some(_),
            task_ns,
            ..
        } => assert!(task_ns * 2 >= child.delay_ns(), "{child:?}"),
        other => panic!("expected the child behind its parent, got {other:?} ({child:?})"),
    }
    let counted: usize = explanation.by_cause.iter().map(|c| c.waits).sum();
    assert_eq!(counted, 2);
}
