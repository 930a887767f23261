//! Seeded, deterministic model inputs for render tests and state tests:
//! plausible intervals of a pool under load, never live pool data.

use crate::rng::Rng;
use crate::state::events::{EventKind, LogEvent};
use crate::state::sample::{PoolSample, Quantiles, WorkerSample, WorkerStatus, WorkerTotals};
use crate::state::timeline::{Mark, MarkKind, TimelineChunk};
use crate::state::Tick;
use std::time::Duration;

const STATES: [WorkerStatus; 4] = [
    WorkerStatus::Running,
    WorkerStatus::Running,
    WorkerStatus::Searching,
    WorkerStatus::Sleeping,
];

fn micros(us: u64) -> Duration {
    Duration::from_micros(us)
}

fn quantiles(rng: &mut Rng, base_us: u64, count: u64) -> Quantiles {
    let p50 = base_us + rng.range(0, base_us / 2 + 1);
    Quantiles {
        count,
        p50: micros(p50),
        p90: micros(p50 * 3),
        p99: micros(p50 * 8),
        p999: micros(p50 * 20),
        max: micros(p50 * 40),
    }
}

/// `n` ticks of one pool named `demo` with `threads` workers, half a second
/// apart, all derived from `seed`.
pub fn ticks(seed: u64, threads: usize, n: usize) -> Vec<Tick> {
    let mut rng = Rng::new(seed);
    // Fork-join figures come from a generator of their own, so that the
    // rest of a seed's figures stay what they were before joins existed.
    let mut forks = Rng::new(seed ^ 0x6a6f_696e);
    let mut totals = vec![WorkerTotals::default(); threads];
    let mut tasks_run = 0;
    let elapsed = Duration::from_millis(500);
    let secs = elapsed.as_secs_f64();
    (0..n)
        .map(|i| {
            let mut workers = Vec::with_capacity(threads);
            // Joins forked and forks shared per worker; each worker steals
            // part of the forks its left neighbour shared.
            let joins: Vec<u64> = (0..threads).map(|_| forks.range(0, 4_000)).collect();
            let shared: Vec<u64> = joins.iter().map(|&j| j * forks.range(0, 5) / 100).collect();
            let stolen_forks: Vec<u64> = (0..threads)
                .map(|i| {
                    let left = shared[(i + threads - 1) % threads];
                    if threads > 1 {
                        left * forks.range(50, 100) / 100
                    } else {
                        0
                    }
                })
                .collect();
            for (index, total) in totals.iter_mut().enumerate() {
                let tasks = rng.range(200, 1_200);
                let attempted = rng.range(0, 400);
                let succeeded = attempted * rng.range(0, 80) / 100;
                let stolen = succeeded * rng.range(1, 4);
                let sleeps = rng.range(0, 60);
                let wakeups = sleeps * rng.range(50, 100) / 100;
                let noop = sleeps - wakeups;
                // (Derived, not drawn: a new draw would shift every later
                // one, and with it every golden screen.)
                let cancelled = sleeps / 8;
                let respawned = u64::from(index == 1 && i % 4 == 3);
                total.tasks_run += tasks;
                total.steals_attempted += attempted;
                total.steals_succeeded += succeeded;
                total.tasks_stolen += stolen;
                total.sleeps += sleeps;
                total.sleeps_cancelled += cancelled;
                total.wakeups += wakeups;
                total.noop_wakeups += noop;
                total.respawns += respawned;
                total.panics += respawned;
                total.joins += joins[index];
                total.forks_shared += shared[index];
                total.forks_stolen += stolen_forks[index];
                tasks_run += tasks;
                let mut stolen_from = vec![0; threads];
                let mut left = stolen;
                while left > 0 && threads > 1 {
                    let victim = rng.range(0, threads as u64) as usize;
                    if victim == index {
                        continue;
                    }
                    let take = rng.range(1, left + 1);
                    stolen_from[victim] += take;
                    left -= take;
                }
                let state = if respawned > 0 {
                    WorkerStatus::Respawning
                } else {
                    STATES[rng.range(0, STATES.len() as u64) as usize]
                };
                workers.push(WorkerSample {
                    index,
                    state: Some(state),
                    local_queue_depth: rng.range(0, 40) as usize,
                    tasks_per_sec: tasks as f64 / secs,
                    steals_attempted_per_sec: attempted as f64 / secs,
                    steals_succeeded_per_sec: succeeded as f64 / secs,
                    steal_success_ratio: (attempted > 0)
                        .then(|| succeeded as f64 / attempted as f64),
                    tasks_stolen_per_sec: stolen as f64 / secs,
                    sleeps_per_sec: sleeps as f64 / secs,
                    sleeps_cancelled_per_sec: cancelled as f64 / secs,
                    wakeups_per_sec: wakeups as f64 / secs,
                    noop_wakeups_per_sec: noop as f64 / secs,
                    joins_per_sec: joins[index] as f64 / secs,
                    forks_shared_per_sec: shared[index] as f64 / secs,
                    forks_stolen_per_sec: stolen_forks[index] as f64 / secs,
                    busy_ratio: rng.range(5, 100) as f64 / 100.0,
                    stolen_from,
                    totals: *total,
                    schedule_delay: quantiles(&mut rng, 20, tasks / 64),
                    run_time: quantiles(&mut rng, 50, tasks / 64),
                });
            }
            let sum = |f: fn(&WorkerSample) -> f64| workers.iter().map(f).sum::<f64>();
            let sample = PoolSample {
                name: "demo".into(),
                threads,
                uptime: elapsed * (i as u32 + 1),
                elapsed,
                tasks_per_sec: sum(|w| w.tasks_per_sec),
                tasks_run,
                global_queue_depth: rng.range(0, 300) as usize,
                pending: rng.range(0, 400),
                panics: totals.iter().map(|t| t.panics).sum(),
                respawns: totals.iter().map(|t| t.respawns).sum(),
                busy_ratio: sum(|w| w.busy_ratio) / threads.max(1) as f64,
                steals_attempted_per_sec: sum(|w| w.steals_attempted_per_sec),
                steals_succeeded_per_sec: sum(|w| w.steals_succeeded_per_sec),
                tasks_stolen_per_sec: sum(|w| w.tasks_stolen_per_sec),
                sleeps_per_sec: sum(|w| w.sleeps_per_sec),
                wakeups_per_sec: sum(|w| w.wakeups_per_sec),
                noop_wakeups_per_sec: sum(|w| w.noop_wakeups_per_sec),
                joins_per_sec: sum(|w| w.joins_per_sec),
                schedule_delay: quantiles(&mut rng, 20, 60),
                run_time: quantiles(&mut rng, 50, 60),
                schedule_delay_total: quantiles(&mut rng, 25, 60 * (i as u64 + 1)),
                run_time_total: quantiles(&mut rng, 55, 60 * (i as u64 + 1)),
                workers,
            };
            let at = elapsed * (i as u32 + 1);
            let events = if i % 4 == 3 {
                vec![LogEvent {
                    at,
                    pool: Some("demo".into()),
                    worker: Some(1),
                    kind: EventKind::Panic,
                    count: 1,
                    respawned: 0,
                    message: format!("panic storm: task {} failed on purpose", 1000 + i),
                }]
            } else {
                Vec::new()
            };
            Tick {
                at,
                pools: vec![sample],
                events,
                panics_reported: true,
                link: None,
                timelines: Vec::new(),
                waits: Vec::new(),
                notes: Vec::new(),
            }
        })
        .collect()
}

/// A seeded timeline chunk of pool `demo`: `seconds` of each of `threads`
/// workers' states (runs of work, searches, sleeps, a long stall on worker
/// 0 and an idle gap on the last), steals, and a respawn of worker 1 near
/// the end, as the flight recorder would report them.
pub fn timeline_chunk(seed: u64, threads: usize, seconds: u64) -> TimelineChunk {
    const MS: u64 = 1_000_000;
    let mut rng = Rng::new(seed);
    let end = seconds * 1_000 * MS;
    // The recorder's clock started a while before the strip.
    let base = 5_000 * MS;
    let mut marks = Vec::new();
    for worker in 0..threads {
        let mut at = 0;
        while at < end {
            let stall = worker == 0 && (4_000 * MS..4_200 * MS).contains(&at);
            let idle = worker + 1 == threads && threads > 1 && at > end / 2 && at < end * 3 / 4;
            let (state, len) = if stall {
                (WorkerStatus::Running, 1_500 * MS)
            } else if idle {
                (WorkerStatus::Sleeping, end / 4)
            } else {
                match rng.range(0, 10) {
                    0..=4 => (WorkerStatus::Running, rng.range(50, 400) * MS),
                    5..=6 => (WorkerStatus::Searching, rng.range(5, 60) * MS),
                    _ => (WorkerStatus::Sleeping, rng.range(50, 500) * MS),
                }
            };
            marks.push(Mark {
                at_ns: base + at,
                worker,
                kind: MarkKind::State(state),
            });
            if state == WorkerStatus::Running && threads > 1 && rng.range(0, 3) == 0 {
                let victim = (worker + 1 + rng.range(0, threads as u64 - 1) as usize) % threads;
                marks.push(Mark {
                    at_ns: base + at + MS,
                    worker,
                    kind: MarkKind::Steal { victim },
                });
            }
            at += len;
        }
    }
    if threads > 1 {
        let at = base + end - 1_200 * MS;
        marks.push(Mark {
            at_ns: at,
            worker: 1,
            kind: MarkKind::Panic,
        });
        marks.push(Mark {
            at_ns: at + MS,
            worker: 1,
            kind: MarkKind::State(WorkerStatus::Respawning),
        });
        marks.push(Mark {
            at_ns: at + 2 * MS,
            worker: 1,
            kind: MarkKind::Respawn,
        });
        marks.push(Mark {
            at_ns: at + 3 * MS,
            worker: 1,
            kind: MarkKind::State(WorkerStatus::Running),
        });
    }
    marks.sort_by_key(|m| m.at_ns);
    TimelineChunk {
        pool: "demo".into(),
        workers: threads,
        taken_at_ns: base + end,
        marks,
        restart: false,
        recorder_off: false,
    }
}
