//! One constructed recording per cause, and the explanation's order,
//! totals and errors.

use super::*;
use crate::recorder::recording::{RecordedEvent, WorkerActivity};

fn at(time_ns: u64, track: Track, kind: EventKind) -> RecordedEvent {
    RecordedEvent {
        time_ns,
        track,
        kind,
    }
}

fn state(time_ns: u64, worker: usize, activity: WorkerActivity) -> RecordedEvent {
    at(time_ns, Track::Worker(worker), EventKind::State(activity))
}

fn spawn(time_ns: u64, track: Track, task: u64, queue: SpawnQueue) -> RecordedEvent {
    at(
        time_ns,
        track,
        EventKind::Spawn {
            task,
            queue,
            within_ns: 0,
        },
    )
}

fn run(time_ns: u64, worker: usize, task: u64) -> RecordedEvent {
    at(
        time_ns,
        Track::Worker(worker),
        EventKind::RunBegin { task: Some(task) },
    )
}

fn recording(workers: usize, events: Vec<RecordedEvent>) -> Recording {
    Recording::from_parts(
        "test".into(),
        RecordLevel::Tasks,
        (0..workers).map(|i| format!("w{i}")).collect(),
        vec!["main".into()],
        events,
        0,
        1_000_000_000,
    )
}

fn cause_of(recording: &Recording, task: u64) -> WaitCause {
    let explanation = recording.explain(usize::MAX).expect("at Tasks level");
    explanation
        .worst
        .iter()
        .find(|w| w.task == task)
        .unwrap_or_else(|| panic!("task {task} not explained"))
        .cause
}

#[test]
fn a_task_queued_behind_a_long_task_on_its_worker() {
    use WorkerActivity::*;
    let events = vec![
        state(0, 0, Running),
        state(0, 1, Running),
        run(100, 0, 1),
        // Task 1 spawns task 2 into worker 0's queue, then runs for 10 ms.
        spawn(200, Track::Worker(0), 2, SpawnQueue::Local),
        run(10_000_100, 0, 2),
        // Worker 1 is busy with short tasks meanwhile.
        run(150, 1, 3),
        run(300, 1, 4),
        state(5_000_000, 1, Searching),
        state(5_000_100, 1, Sleeping),
    ];
    let cause = cause_of(&recording(2, events), 2);
    assert_eq!(
        cause,
        WaitCause::BehindLongTask {
            worker: 0,
            task: Some(1),
            task_ns: 9_999_900,
            tasks_ahead: 0,
        }
    );
}

#[test]
fn an_older_task_waits_behind_the_newer_ones_its_worker_runs_first() {
    use WorkerActivity::*;
    let mut events = vec![
        state(0, 0, Running),
        state(0, 1, Sleeping),
        run(50, 0, 100),
        spawn(100, Track::Worker(0), 1, SpawnQueue::Local),
    ];
    // Ten newer tasks, a millisecond each, run first on worker 0.
    for k in 0..10u64 {
        events.push(run(1_000 + 1_000_000 * k, 0, 10 + k));
    }
    events.push(run(10_001_000, 0, 1));
    let cause = cause_of(&recording(2, events), 1);
    assert_eq!(
        cause,
        WaitCause::BehindNewerTasks {
            worker: 0,
            tasks_ahead: 10,
            busy_ns: 10_000_900,
        }
    );
}

#[test]
fn a_task_spawned_into_a_sleeping_pool_waits_for_the_wake() {
    use WorkerActivity::*;
    let events = vec![
        state(0, 0, Sleeping),
        state(0, 1, Sleeping),
        spawn(1_000, Track::Outside(0), 7, SpawnQueue::Global),
        at(1_500, Track::Outside(0), EventKind::Unpark { worker: 1 }),
        at(60_000, Track::Worker(1), EventKind::Wake { handoff: false }),
        state(60_000, 1, Searching),
        state(61_000, 1, Running),
        run(61_000, 1, 7),
    ];
    // Timed from the spawner's wake call, not the worker's own wake: the
    // 58.5 us the OS took to run the woken thread are the wait.
    assert_eq!(
        cause_of(&recording(2, events.clone()), 7),
        WaitCause::PoolAsleep { wake_ns: 59_500 }
    );
    // A recording without the wake call falls back to the worker's wake.
    let without_unpark: Vec<RecordedEvent> = events
        .into_iter()
        .filter(|e| !matches!(e.kind, EventKind::Unpark { .. }))
        .collect();
    assert_eq!(
        cause_of(&recording(2, without_unpark), 7),
        WaitCause::PoolAsleep { wake_ns: 1_000 }
    );
}

#[test]
fn a_task_waits_its_turn_behind_older_tasks() {
    use WorkerActivity::*;
    let mut events = vec![state(0, 0, Running), state(0, 1, Searching)];
    for task in 41..=44 {
        events.push(spawn(500, Track::Outside(0), task, SpawnQueue::Global));
    }
    events.extend([
        spawn(1_000, Track::Outside(0), 50, SpawnQueue::Global),
        run(1_100, 0, 41),
        state(1_900, 1, Running),
        run(2_000, 1, 42),
        run(3_000, 0, 43),
        run(4_000, 1, 44),
        run(5_000, 0, 50),
    ]);
    events.sort_by_key(|e| e.time_ns);
    // Worker 1 was searching at the spawn, so not every worker was busy;
    // the four older tasks ran first, worker 0 for 3.9 us and worker 1
    // for 3 us of the 4 us wait.
    assert_eq!(
        cause_of(&recording(2, events), 50),
        WaitCause::Backlog {
            tasks_ahead: 4,
            busy_ns: 6_900,
        }
    );
}

#[test]
fn a_task_in_the_global_queue_while_workers_steal_from_each_other() {
    use WorkerActivity::*;
    let steal = |t, w, victim| {
        at(
            t,
            Track::Worker(w),
            EventKind::Steal {
                victim,
                batch: 4,
                local_depth: 3,
            },
        )
    };
    let pull = |t| {
        at(
            t,
            Track::Worker(2),
            EventKind::GlobalPull {
                batch: 1,
                local_depth: 0,
            },
        )
    };
    let events = |early_pull: bool| {
        let mut events = vec![
            state(0, 0, Running),
            state(0, 1, Running),
            state(0, 2, Running),
            spawn(1_000, Track::Outside(0), 9, SpawnQueue::Global),
            run(1_100, 0, 20),
            steal(2_000, 1, 0),
            run(2_000, 1, 21),
            // A fork of a join taken by a peer counts as a steal too.
            at(
                3_000,
                Track::Worker(2),
                EventKind::ForkStolen {
                    fork: None,
                    owner: 1,
                },
            ),
            run(3_000, 2, 22),
            run(4_000, 0, 23),
            // The pull that takes the task, just before it starts.
            pull(49_500),
            run(50_000, 2, 9),
        ];
        if early_pull {
            events.push(pull(1_500));
            events.sort_by_key(|e| e.time_ns);
        }
        events
    };
    assert_eq!(
        cause_of(&recording(3, events(false)), 9),
        WaitCause::GlobalQueueStarved {
            steals: 2,
            unpulled_ns: 48_500
        }
    );
    // A worker pulled from the global queue early in the wait: the queue
    // was not starved (the task waited behind what that pull took).
    assert!(!matches!(
        cause_of(&recording(3, events(true)), 9),
        WaitCause::GlobalQueueStarved { .. }
    ));
}

#[test]
fn a_task_waits_while_every_worker_is_busy() {
    use WorkerActivity::*;
    let events = vec![
        state(0, 0, Running),
        state(0, 1, Running),
        run(10, 0, 30),
        run(20, 1, 31),
        spawn(1_000, Track::Outside(0), 32, SpawnQueue::Global),
        run(3_000, 0, 33),
        run(4_000, 1, 34),
        at(
            9_000,
            Track::Worker(0),
            EventKind::GlobalPull {
                batch: 1,
                local_depth: 0,
            },
        ),
        run(9_000, 0, 32),
    ];
    let recording = recording(2, events);
    assert_eq!(cause_of(&recording, 32), WaitCause::AllWorkersBusy);
    // What kept each worker: the run in progress at the spawn counts for
    // its time within the wait, not as a task started.
    let explanation = recording.explain(usize::MAX).expect("Tasks level");
    let wait = explanation.worst.iter().find(|w| w.task == 32).expect("32");
    assert_eq!(
        recording.ran_meanwhile(wait),
        vec![
            RanMeanwhile {
                worker: 0,
                tasks_started: 1,
                busy_ns: 8_000,
                longest: Some((Some(33), 6_000)),
            },
            RanMeanwhile {
                worker: 1,
                tasks_started: 1,
                busy_ns: 8_000,
                longest: Some((Some(34), 5_000)),
            },
        ]
    );
}

#[test]
fn a_silent_running_worker_is_no_progress() {
    use WorkerActivity::*;
    let events = vec![
        state(0, 0, Running),
        // Its last task ended (a state change), then nothing for 20 ms.
        spawn(1_000, Track::Worker(0), 40, SpawnQueue::Local),
        state(1_100, 0, Running),
        run(20_001_100, 0, 40),
    ];
    assert_eq!(
        cause_of(&recording(1, events), 40),
        WaitCause::NoProgress {
            worker: 0,
            gap_ns: 20_000_000,
        }
    );
}

fn pull(time_ns: u64, worker: usize, batch: u32) -> RecordedEvent {
    at(
        time_ns,
        Track::Worker(worker),
        EventKind::GlobalPull {
            batch,
            local_depth: u64::from(batch - 1),
        },
    )
}

/// A worker wakes, pulls a batch from the global queue (the task in it)
/// into its own queue and falls silent (descheduled); another, after a pull
/// of its own, steals the rest of the batch from it at last: both waits are
/// the silent puller's.
#[test]
fn a_task_pulled_in_a_batch_by_a_worker_that_then_shows_no_progress() {
    use WorkerActivity::*;
    let steal = at(
        9_000_000,
        Track::Worker(1),
        EventKind::Steal {
            victim: 0,
            batch: 1,
            local_depth: 0,
        },
    );
    let events = vec![
        state(0, 0, Sleeping),
        state(0, 1, Running),
        run(0, 1, 20),
        spawn(1_000, Track::Outside(0), 9, SpawnQueue::Global),
        spawn(1_100, Track::Outside(0), 10, SpawnQueue::Global),
        state(40_000, 0, Searching),
        pull(41_000, 0, 2),
        // The other worker pulls later tasks, runs them, then steals.
        spawn(2_000_000, Track::Outside(0), 11, SpawnQueue::Global),
        pull(2_000_100, 1, 1),
        run(2_000_200, 1, 11),
        // Silent from here: the OS ran something else on its core.
        state(8_000_000, 0, Running),
        run(8_000_000, 0, 9),
        steal,
        run(9_000_000, 1, 10),
    ];
    let recording = recording(2, events);
    assert_eq!(
        cause_of(&recording, 9),
        WaitCause::NoProgress {
            worker: 0,
            gap_ns: 7_959_000,
        }
    );
    // Stolen from the silent puller: held there until the steal.
    assert!(
        matches!(
            cause_of(&recording, 10),
            WaitCause::NoProgress { worker: 0, .. }
        ),
        "{:?}",
        cause_of(&recording, 10)
    );
}

/// A worker pulls a batch and runs a long task of it first: the task after
/// it in the batch waited behind that long task, on the puller; counted
/// from the pull, so the time before it is not the worker's doing.
#[test]
fn a_task_pulled_in_a_batch_behind_a_long_one() {
    use WorkerActivity::*;
    let events = vec![
        state(0, 0, Running),
        spawn(1_000, Track::Outside(0), 8, SpawnQueue::Global),
        spawn(1_100, Track::Outside(0), 9, SpawnQueue::Global),
        pull(2_000, 0, 2),
        run(2_100, 0, 8),
        run(10_002_100, 0, 9),
    ];
    assert_eq!(
        cause_of(&recording(1, events), 9),
        WaitCause::BehindLongTask {
            worker: 0,
            task: Some(8),
            task_ns: 10_000_000,
            tasks_ahead: 1,
        }
    );
}

#[test]
fn the_worst_come_first_and_totals_add_up() {
    use WorkerActivity::*;
    let mut events = vec![state(0, 0, Running), state(0, 1, Running)];
    for task in 0..10 {
        let t = 1_000 * task;
        events.push(spawn(t, Track::Outside(0), task, SpawnQueue::Global));
        events.push(run(t + 100 * (task + 1), (task % 2) as usize, task));
    }
    let explanation = recording(2, events).explain(3).expect("Tasks level");
    assert_eq!(explanation.tasks, 10);
    let worst: Vec<u64> = explanation.worst.iter().map(|w| w.task).collect();
    assert_eq!(worst, vec![9, 8, 7]);
    let counted: usize = explanation.by_cause.iter().map(|c| c.waits).sum();
    assert_eq!(counted, 10);
    let total: u64 = explanation.by_cause.iter().map(|c| c.total_ns).sum();
    assert_eq!(total, (1..=10).map(|k| 100 * k).sum::<u64>());
}

#[test]
fn a_scheduler_level_recording_is_refused_with_the_reason() {
    let recording = Recording::from_parts(
        "test".into(),
        RecordLevel::Scheduler,
        vec!["w0".into()],
        vec![],
        vec![],
        0,
        0,
    );
    let error = recording.explain(5).expect_err("no task identities");
    assert_eq!(error, ExplainError::NeedsTasksLevel(RecordLevel::Scheduler));
    assert!(error.to_string().contains("RecordLevel::Tasks"));
}

#[test]
fn a_start_whose_spawn_fell_out_of_the_rings_is_counted_missing() {
    let events = vec![run(10, 0, 99)];
    let explanation = recording(1, events).explain(5).expect("Tasks level");
    assert_eq!(explanation.tasks, 0);
    assert_eq!(explanation.spawns_missing, 1);
}
