//! Monitor, Interval and Report against workloads whose counts are known.

mod common;

use common::{spin_for, HANG};
use dreadpool::metrics::{
    HistogramSnapshot, Interval, Monitor, Report, Snapshot, WorkerSnapshot, WorkerState,
};
use dreadpool::{PanicPolicy, ThreadPool, ThreadPoolBuilder};
use std::sync::{mpsc, Arc, Barrier};
use std::thread;
use std::time::Duration;

fn pool(threads: usize) -> ThreadPool {
    ThreadPoolBuilder::new()
        .with_threads(threads)
        .with_latency_sampling(1)
        .build()
}

/// Every number in `value`, with its path.
fn numbers(value: &serde_json::Value, path: String, out: &mut Vec<(String, f64)>) {
    match value {
        serde_json::Value::Number(n) => out.push((path, n.as_f64().unwrap_or(f64::NAN))),
        serde_json::Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                numbers(v, format!("{path}[{i}]"), out);
            }
        }
        serde_json::Value::Object(o) => {
            for (k, v) in o {
                numbers(v, format!("{path}.{k}"), out);
            }
        }
        serde_json::Value::Null => out.push((path, f64::NAN)),
        _ => {}
    }
}

fn assert_all_finite(interval: &Interval) {
    let json = serde_json::to_value(interval).unwrap();
    let mut all = Vec::new();
    numbers(&json, String::new(), &mut all);
    for (path, x) in all {
        assert!(x.is_finite(), "{path} = {x}");
    }
}

#[test]
fn deltas_and_rates_against_known_counts() {
    let pool = pool(2);
    let handle = pool.handle();
    let mut monitor = Monitor::new(&pool);

    for _ in 0..1000 {
        pool.spawn(|| ());
    }
    pool.join();
    let first = monitor.sample();
    assert_eq!(first.tasks_run, 1000);
    assert_eq!(first.tasks_spawned_external, 1000);
    assert_eq!(first.global_pulls, 1000);
    assert_eq!(first.tasks_spawned_local, 0);
    assert_eq!(first.tasks_pending, 0);
    assert_eq!(first.threads, 2);
    // The first interval runs from the pool's start.
    assert_eq!(first.elapsed, first.uptime);
    let secs = first.elapsed.as_secs_f64();
    assert_eq!(first.tasks_per_sec, 1000.0 / secs);
    assert_eq!(first.tasks_spawned_external_per_sec, 1000.0 / secs);
    assert_eq!(first.schedule_delay.count, 1000);
    assert_eq!(first.run_time.count, 1000);
    assert_eq!(first.workers.iter().map(|w| w.tasks_run).sum::<u64>(), 1000);

    for _ in 0..500 {
        let handle = handle.clone();
        pool.spawn(move || {
            handle.spawn(|| ());
            handle.spawn(|| ());
        });
    }
    pool.join();
    let second = monitor.sample();
    assert_eq!(second.tasks_run, 1500);
    assert_eq!(second.tasks_spawned_external, 500);
    assert_eq!(second.tasks_spawned_local, 1000);
    assert_eq!(second.global_pulls, 500);
    assert_eq!(second.elapsed, second.uptime - first.uptime);
    assert_eq!(second.tasks_per_sec, 1500.0 / second.elapsed.as_secs_f64());
    // Interval quantiles count the interval's tasks, cumulative ones all.
    assert_eq!(second.run_time.count, 1500);
    assert_eq!(second.run_time_total.count, 2500);
    assert_eq!(second.schedule_delay_total.count, 2500);
    for w in &second.workers {
        assert!((0.0..=1.0).contains(&w.busy_ratio), "{w:?}");
    }
    assert!((0.0..=1.0).contains(&second.busy_ratio));

    let report = monitor.report();
    assert_eq!(report.samples, 2);
    assert_eq!(report.lifetime.tasks_run, 2500);
    assert_eq!(report.lifetime.run_time.count, 2500);
    assert_eq!(report.latest, second);
    // Two samples, one global-depth sample each, one local per worker each.
    assert_eq!(report.global_queue_depth.samples, 2);
    assert_eq!(report.local_queue_depth.samples, 4);
}

#[test]
fn idle_intervals_are_zero_not_nan() {
    let pool = pool(2);
    let mut monitor = Monitor::new(&pool);
    monitor.sample();
    let idle = monitor.sample();
    assert_eq!(idle.tasks_run, 0);
    assert_eq!(idle.tasks_per_sec, 0.0);
    assert_eq!(idle.steal_success_ratio, 0.0);
    assert_eq!(idle.mean_steal_batch, 0.0);
    assert_eq!(idle.schedule_delay.count, 0);
    assert_eq!(idle.schedule_delay.p99, Duration::ZERO);
    assert_all_finite(&idle);

    // The same snapshot twice: zero elapsed.
    let mut detached = Monitor::detached();
    let snapshot = Snapshot::from(&pool.metrics());
    detached.observe(snapshot.clone());
    let zero = detached.observe(snapshot);
    assert_eq!(zero.elapsed, Duration::ZERO);
    assert_eq!(zero.busy_ratio, 0.0);
    assert_all_finite(&zero);

    // A detached monitor has nothing to sample; nor an iterator.
    assert_all_finite(&Monitor::detached().sample());
    assert_eq!(Monitor::detached().intervals().next(), None);
    assert_all_finite(&Monitor::detached().report().latest);

    // An empty snapshot, no workers at all.
    let empty = Monitor::detached().observe(Snapshot::default());
    assert_all_finite(&empty);
    assert_eq!(empty.max_busy_ratio(), 0.0);
}

#[test]
fn busy_time_of_a_task_that_runs_a_known_time() {
    let pool = pool(1);
    let mut monitor = Monitor::new(&pool);
    monitor.sample();
    pool.spawn(|| spin_for(Duration::from_millis(30)));
    pool.join();
    let i = monitor.sample();
    // The core takes its clock readings a little inside the task's own:
    // allow it 10%.
    assert!(i.busy >= Duration::from_millis(27), "{:?}", i.busy);
    assert!(i.workers[0].busy >= Duration::from_millis(27));
    assert!(
        i.busy_ratio > 0.0 && i.busy_ratio <= 1.0,
        "{}",
        i.busy_ratio
    );
    assert_eq!(i.busy_ratio, i.workers[0].busy_ratio);
    // The task ran at least 30ms: the run time quantiles say so.
    assert_eq!(i.run_time.count, 1);
    assert!(
        i.run_time.max >= Duration::from_millis(27),
        "{:?}",
        i.run_time
    );
}

#[test]
fn quantiles_against_a_known_distribution_of_task_durations() {
    // 90 short tasks (about 200us) and 10 long ones (at least 5ms) on one
    // worker. A loaded machine only makes tasks longer, so lower bounds are
    // exact and upper bounds generous.
    let pool = pool(1);
    let mut monitor = Monitor::new(&pool);
    let gate = Arc::new(Barrier::new(2));
    let g = Arc::clone(&gate);
    // Hold the worker so that every task is queued before any runs.
    pool.spawn(move || {
        g.wait();
    });
    for i in 0..100 {
        let d = if i % 10 == 9 {
            Duration::from_millis(5)
        } else {
            Duration::from_micros(200)
        };
        pool.spawn(move || spin_for(d));
    }
    gate.wait();
    pool.join();
    let q = monitor.sample().run_time;
    assert_eq!(q.count, 101);
    // The core's buckets are 12.5% wide; allow that below the true value.
    assert!(q.p50 >= Duration::from_micros(175), "{q:?}");
    assert!(q.p50 < Duration::from_millis(4), "{q:?}");
    assert!(q.p99 >= Duration::from_micros(4_375), "{q:?}");
    assert!(q.max >= Duration::from_micros(4_375), "{q:?}");
    assert!(q.p50 <= q.p90 && q.p90 <= q.p99 && q.p99 <= q.p999 && q.p999 <= q.max);
    // The queued tasks waited behind each other: the last one waited for
    // all the others, about 70ms.
    let delay = monitor.report().lifetime.schedule_delay;
    assert!(delay.max >= Duration::from_millis(60), "{delay:?}");
}

/// Builds a one-worker snapshot whose run time histogram is `values`.
fn synthetic(uptime_ms: u64, values: &[(Duration, u64)]) -> Snapshot {
    let mut run_time = HistogramSnapshot::default();
    for &(v, n) in values {
        run_time.record_n(v, n);
    }
    Snapshot {
        name: "synthetic".into(),
        threads: 1,
        uptime: Duration::from_millis(uptime_ms),
        workers: vec![WorkerSnapshot {
            tasks_run: values.iter().map(|(_, n)| n).sum(),
            stolen_from: vec![0],
            run_time,
            ..Default::default()
        }],
        ..Default::default()
    }
}

#[test]
fn interval_and_cumulative_quantiles_of_a_synthetic_distribution() {
    let mut monitor = Monitor::detached();
    let us10 = Duration::from_micros(10);
    let ms1 = Duration::from_millis(1);
    let a = monitor.observe(synthetic(1000, &[(us10, 1000)]));
    assert_eq!(a.run_time.count, 1000);
    let near = |d: Duration, want: Duration| {
        let (d, w) = (d.as_secs_f64(), want.as_secs_f64());
        (d - w).abs() / w < 0.07
    };
    assert!(near(a.run_time.p50, us10), "{:?}", a.run_time);
    assert!(near(a.run_time.max, us10), "{:?}", a.run_time);

    let b = monitor.observe(synthetic(2000, &[(us10, 1000), (ms1, 1000)]));
    // This interval saw only the 1ms values...
    assert_eq!(b.run_time.count, 1000);
    assert!(near(b.run_time.p50, ms1), "{:?}", b.run_time);
    assert!(near(b.run_time.p999, ms1), "{:?}", b.run_time);
    // ...the pool's life both: half at 10us, half at 1ms.
    assert_eq!(b.run_time_total.count, 2000);
    assert!(near(b.run_time_total.p50, us10), "{:?}", b.run_time_total);
    assert!(near(b.run_time_total.p90, ms1), "{:?}", b.run_time_total);
    assert_eq!(b.tasks_run, 1000);
    assert_eq!(b.tasks_per_sec, 1000.0);
}

#[test]
fn a_skewed_load_shows_in_the_steal_matrix() {
    let pool = Arc::new(pool(2));
    let mut monitor = Monitor::new(&pool);
    let (stolen_tx, stolen_rx) = mpsc::channel::<()>();
    let p = Arc::clone(&pool);
    pool.spawn(move || {
        let home = thread::current().id();
        for _ in 0..1000 {
            let tx = stolen_tx.clone();
            p.spawn(move || {
                if thread::current().id() != home {
                    let _ = tx.send(());
                }
            });
        }
        // Hold this worker until the other one has stolen something.
        assert!(
            stolen_rx.recv_timeout(HANG).is_ok(),
            "nobody stole from the busy worker"
        );
    });
    pool.join();
    let i = monitor.sample();
    let home = i
        .workers
        .iter()
        .max_by_key(|w| w.tasks_spawned_local)
        .map(|w| w.index)
        .unwrap();
    let thief = &i.workers[1 - home];
    assert!(thief.steals_succeeded > 0, "{thief:?}");
    assert!(thief.stolen_from[home] > 0);
    assert_eq!(thief.stolen_from[1 - home], 0);
    assert!(thief.steal_success_ratio > 0.0 && thief.steal_success_ratio <= 1.0);
    for w in &i.workers {
        assert_eq!(w.tasks_stolen, w.stolen_from.iter().sum::<u64>());
    }
    assert_eq!(i.steal_matrix()[1 - home][home], thief.stolen_from[home]);
    assert!(thief.mean_steal_batch >= 1.0);
    let report = monitor.report();
    assert_eq!(report.steal_batch_size.samples, i.steals_succeeded);
    assert!(report.steal_batch_size.max >= 1);
}

#[test]
fn panics_and_respawns_per_interval() {
    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_panic_policy(PanicPolicy::Respawn)
        .with_panic_handler(|_| {})
        .build();
    let mut monitor = Monitor::new(&pool);
    for _ in 0..10 {
        pool.spawn(|| panic!("counted"));
    }
    pool.join();
    let i = monitor.sample();
    assert_eq!(i.panics, 10);
    assert_eq!(i.respawns, 10);
    assert_eq!(i.tasks_run, 10);
    assert!(i.to_string().contains("panics=10 respawns=10"), "{i}");
    let again = monitor.sample();
    assert_eq!(again.panics, 0);
    assert_eq!(again.respawns, 0);
}

#[test]
fn intervals_iterate_and_add_up() {
    let pool = pool(2);
    let mut monitor = Monitor::new(&pool);
    let mut total = 0;
    for (round, interval) in monitor.intervals().take(5).enumerate() {
        total += interval.tasks_run;
        assert_eq!(interval.tasks_run, 10 * round as u64);
        for _ in 0..10 * (round + 1) {
            pool.spawn(|| ());
        }
        pool.join();
    }
    // The spawns of the last round are not sampled yet.
    assert_eq!(total, 100);
    assert_eq!(monitor.sample().tasks_run, 50);
    assert_eq!(monitor.samples(), 6);
}

#[test]
fn a_report_reads_as_a_table_and_as_json() {
    let pool = ThreadPoolBuilder::new()
        .with_threads(3)
        .with_thread_name("reported")
        .with_latency_sampling(1)
        .build();
    let mut monitor = Monitor::new(&pool);
    for _ in 0..300 {
        pool.spawn(|| ());
    }
    pool.join();
    monitor.sample();
    let report = monitor.report();
    let text = report.to_string();
    let first = text.lines().next().unwrap();
    assert!(first.starts_with("SCHED "), "{text}");
    assert!(
        first.contains("pool=reported threads=3 running="),
        "{first}"
    );
    assert!(first.contains(" [0 0 0] "), "{first}");
    let rows = text
        .lines()
        .filter(|l| l.trim_start().starts_with(char::is_numeric))
        .count();
    assert_eq!(rows, 3, "{text}");
    assert!(text.contains("schedule delay:"), "{text}");
    assert!(text.contains("p99.9="), "{text}");

    let json = serde_json::to_string(&report).unwrap();
    let back: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(back, report);
    assert_eq!(back.lifetime.tasks_run, 300);
    assert!(!json.contains("NaN") && !json.contains("null"), "{json}");
}

#[test]
fn a_report_before_any_sample_reads_the_pool() {
    let pool = pool(2);
    pool.spawn(|| ());
    pool.join();
    let monitor = Monitor::new(&pool);
    let report = monitor.report();
    assert_eq!(report.lifetime.tasks_run, 1);
    // It did not count as a sample.
    assert_eq!(monitor.samples(), 0);
}

#[test]
fn a_monitor_outlives_its_pool() {
    let pool = pool(2);
    let mut monitor = Monitor::from_handle(pool.handle());
    pool.spawn(|| ());
    drop(pool);
    let i = monitor.sample();
    assert_eq!(i.states.stopped, 2);
    assert_eq!(i.tasks_run, 1);
    assert!(i.workers.iter().all(|w| w.state == WorkerState::Stopped));
    assert!(i.to_string().contains("stopped=2"), "{i}");
}

#[test]
fn a_restarted_source_starts_from_zero() {
    let mut monitor = Monitor::detached();
    monitor.observe(synthetic(5000, &[(Duration::from_micros(5), 500)]));
    let i = monitor.observe(synthetic(1000, &[(Duration::from_micros(5), 20)]));
    assert!(i.restarted);
    assert_eq!(i.tasks_run, 20);
    assert_eq!(i.run_time.count, 20);
    assert_eq!(i.elapsed, Duration::from_secs(1));
}

#[test]
fn snapshots_survive_json_and_give_the_same_intervals() {
    let pool = pool(2);
    for _ in 0..100 {
        pool.spawn(|| ());
    }
    pool.join();
    let local = Snapshot::from(&pool.metrics());
    let remote: Snapshot = serde_json::from_str(&serde_json::to_string(&local).unwrap()).unwrap();
    assert_eq!(remote, local);
    let a = Monitor::detached().observe(local);
    let b = Monitor::detached().observe(remote);
    assert_eq!(a, b);
}

#[test]
fn a_report_at_the_end_of_a_run_gives_rates_over_the_run() {
    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_latency_sampling(1)
        .build();
    let mut monitor = Monitor::new(&pool);
    for _ in 0..1000 {
        pool.spawn(|| ());
    }
    pool.join();
    monitor.sample();
    // A final sample right after the last: its interval is a sliver in
    // which (next to) nothing ran, as at the end of `--headless`.
    monitor.sample();
    let report = monitor.report();
    let text = report.to_string();
    let rate = |row: &str| -> f64 {
        row.split_whitespace()
            .nth(4)
            .and_then(|r| r.parse().ok())
            .unwrap_or_else(|| panic!("no tasks/s in {row:?}"))
    };
    let all = text
        .lines()
        .find(|l| l.trim_start().starts_with("all "))
        .expect("an all row");
    let want = report.lifetime.tasks_per_sec;
    assert!(want > 0.0);
    assert!((rate(all) - want).abs() <= 0.5, "{all} vs {want}\n{text}");
    for row in text
        .lines()
        .filter(|l| l.trim_start().starts_with(char::is_numeric))
    {
        let tasks: u64 = row.split_whitespace().nth(3).unwrap().parse().unwrap();
        assert_eq!(tasks > 0, rate(row) > 0.0, "{row}\n{text}");
    }
    assert!(text.contains("last interval ("), "{text}");
    assert!(text.contains("whole run p50="), "{text}");
}

/// `depth` levels of nested joins; returns the number of joins made.
fn join_tree(depth: u32) -> u64 {
    if depth == 0 {
        return 0;
    }
    let (a, b) = dreadpool::join(|| join_tree(depth - 1), || join_tree(depth - 1));
    a + b + 1
}

#[test]
fn joins_show_in_the_interval_the_json_and_the_report() {
    let pool = pool(2);
    let mut monitor = Monitor::new(&pool);
    let first = pool.install(|| join_tree(10));
    let i = monitor.sample();
    assert_eq!(i.joins, first, "{i:#?}");
    assert_eq!(i.workers.iter().map(|w| w.joins).sum::<u64>(), first);
    assert!(i.joins_per_sec > 0.0);
    assert!(i.forks_stolen <= i.forks_shared, "{i:#?}");
    assert_eq!(
        i.forks_stolen,
        i.workers.iter().map(|w| w.forks_stolen).sum::<u64>()
    );
    assert!(i.to_string().contains(" joins/s="), "{i}");
    assert_all_finite(&i);

    // The next interval has only the next joins; the snapshot's JSON
    // carries the totals.
    let second = pool.install(|| join_tree(6));
    let i = monitor.sample();
    assert_eq!(i.joins, second);
    let json = serde_json::to_value(monitor.last_snapshot().unwrap()).unwrap();
    let total: u64 = json["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["joins"].as_u64().unwrap())
        .sum();
    assert_eq!(total, first + second);
    assert!(monitor.report().to_string().contains("forks st/sh"));
}
