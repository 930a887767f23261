//! [`Report`]: everything a [`Monitor`](crate::Monitor) knows, for a person
//! (`Display`) or a program (serde).

use crate::histogram::{Distribution, Quantiles};
use crate::interval::Interval;
use serde::{Deserialize, Serialize};
use std::fmt::{self, Write as _};
use std::time::Duration;

/// Everything a [`Monitor`](crate::Monitor) has observed: the latest
/// interval, the pool's whole life so far, and the distributions it sampled.
///
/// `Display` prints the schedtrace line of the pool's life so far, then a
/// compact per-worker table (`joins` are the [`join`](dreadpool_core::join)s
/// a worker forked, `forks st/sh` the forks it stole from peers / the forks
/// of its own that it shared) and the latency and queue-depth lines, for a
/// terminal or a log. Its rates, busy shares and first latency figures are
/// over the whole run (since the pool started), so a report printed at the
/// end of a run describes the run, not the last sliver of it; the latest
/// interval's latency follows, labelled with its length. Serialise it with
/// serde for a program: `latest` and `lifetime` are both there.
///
/// ```
/// use dreadpool::ThreadPoolBuilder;
/// use dreadpool::metrics::Monitor;
///
/// let pool = ThreadPoolBuilder::new().with_threads(2).build();
/// let mut monitor = Monitor::new(&pool);
/// for _ in 0..100 {
///     pool.spawn(|| ());
/// }
/// pool.join();
/// monitor.sample();
/// let report = monitor.report();
/// let text = report.to_string();
/// assert!(text.starts_with("SCHED "));
/// assert!(text.contains("worker"));
/// let json = serde_json::to_value(&report).unwrap();
/// assert_eq!(json["lifetime"]["tasks_run"], 100);
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Report {
    /// Samples the monitor took or observed.
    pub samples: u64,
    /// The latest interval.
    pub latest: Interval,
    /// From the pool's start to the latest sample: totals, lifetime rates
    /// and ratios, and the cumulative latency quantiles.
    pub lifetime: Interval,
    /// The global queue's depth, one sample per monitor sample.
    pub global_queue_depth: Distribution,
    /// Local queue depths, one sample per worker per monitor sample.
    pub local_queue_depth: Distribution,
    /// Tasks per successful steal (one sample per steal, at the mean size
    /// of its worker's interval).
    pub steal_batch_size: Distribution,
}

/// `d` in the largest unit that keeps three or four digits: `850ns`,
/// `12.3us`, `4.5ms`, `1.2s`.
pub(crate) fn short_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns < 1_000 {
        format!("{ns}ns")
    } else if ns < 1_000_000 {
        format!("{:.1}us", ns as f64 / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.1}ms", ns as f64 / 1e6)
    } else {
        format!("{:.2}s", ns as f64 / 1e9)
    }
}

fn quantiles_line(q: &Quantiles) -> String {
    if q.count == 0 {
        return "no tasks timed".to_string();
    }
    let mut s = format!(
        "p50={} p90={} p99={} p99.9={} max={} (n={})",
        short_duration(q.p50),
        short_duration(q.p90),
        short_duration(q.p99),
        short_duration(q.p999),
        short_duration(q.max),
        q.count
    );
    if q.outliers > 0 {
        let _ = write!(s, " outliers={}", q.outliers);
    }
    s
}

fn distribution_line(d: &Distribution) -> String {
    if d.samples == 0 {
        return "no samples".to_string();
    }
    format!(
        "mean={:.1} p50={} p99={} max={}",
        d.mean, d.p50, d.p99, d.max
    )
}

fn percent(ratio: f64) -> String {
    format!("{:.0}%", ratio * 100.0)
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let life = &self.lifetime;
        let latest = &self.latest;
        // Rates over the whole run: the latest interval may be a few
        // milliseconds (a final sample just after the previous one), and a
        // worker that ran thousands of tasks would show 0 tasks/s.
        writeln!(f, "{life}")?;
        writeln!(
            f,
            "pool {}: {} threads, up {}, {} samples; rates and busy over the whole run",
            life.name,
            life.threads,
            short_duration(life.uptime),
            self.samples,
        )?;
        writeln!(
            f,
            "{:>6} {:<10} {:>6} {:>10} {:>9} {:>13} {:>8} {:>9} {:>11} {:>7} {:>7} {:>6} {:>5} {:>5} {:>6}",
            "worker",
            "state",
            "queue",
            "tasks",
            "tasks/s",
            "steals ok/try",
            "stolen",
            "joins",
            "forks st/sh",
            "sleeps",
            "wakeups",
            "noop",
            "resp",
            "panic",
            "busy"
        )?;
        for w in &life.workers {
            writeln!(
                f,
                "{:>6} {:<10} {:>6} {:>10} {:>9.0} {:>13} {:>8} {:>9} {:>11} {:>7} {:>7} {:>6} {:>5} {:>5} {:>6}",
                w.index,
                w.state.as_str(),
                w.local_queue_depth,
                w.tasks_run,
                w.tasks_per_sec,
                format!("{}/{}", w.steals_succeeded, w.steals_attempted),
                w.tasks_stolen,
                w.joins,
                format!("{}/{}", w.forks_stolen, w.forks_shared),
                w.sleeps,
                w.wakeups,
                w.noop_wakeups,
                w.respawns,
                w.panics,
                percent(w.busy_ratio),
            )?;
        }
        writeln!(
            f,
            "{:>6} {:<10} {:>6} {:>10} {:>9.0} {:>13} {:>8} {:>9} {:>11} {:>7} {:>7} {:>6} {:>5} {:>5} {:>6}",
            "all",
            format!("{}run/{}idle", life.states.running, life.states.sleeping),
            life.global_queue_depth,
            life.tasks_run,
            life.tasks_per_sec,
            format!("{}/{}", life.steals_succeeded, life.steals_attempted),
            life.tasks_stolen,
            life.joins,
            format!("{}/{}", life.forks_stolen, life.forks_shared),
            life.sleeps,
            life.wakeups,
            life.noop_wakeups,
            life.respawns,
            life.panics,
            percent(life.busy_ratio),
        )?;
        let last = format!("last interval ({})", short_duration(latest.elapsed));
        writeln!(
            f,
            "schedule delay: whole run {}; {last} {}",
            quantiles_line(&life.schedule_delay),
            quantiles_line(&latest.schedule_delay)
        )?;
        writeln!(
            f,
            "run time:       whole run {}; {last} {}",
            quantiles_line(&life.run_time),
            quantiles_line(&latest.run_time)
        )?;
        write!(
            f,
            "queue depth:    global {}; local {}; steal batch {}",
            distribution_line(&self.global_queue_depth),
            distribution_line(&self.local_queue_depth),
            distribution_line(&self.steal_batch_size)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_durations() {
        assert_eq!(short_duration(Duration::from_nanos(850)), "850ns");
        assert_eq!(short_duration(Duration::from_nanos(12_340)), "12.3us");
        assert_eq!(short_duration(Duration::from_micros(4_500)), "4.5ms");
        assert_eq!(short_duration(Duration::from_millis(1_200)), "1.20s");
    }

    #[test]
    fn the_table_has_the_join_and_fork_columns() {
        use crate::interval::WorkerInterval;
        let w = WorkerInterval {
            index: 1,
            joins: 12_345,
            forks_shared: 40,
            forks_stolen: 3,
            ..WorkerInterval::default()
        };
        let lifetime = Interval {
            joins: 12_345,
            forks_shared: 40,
            forks_stolen: 3,
            workers: vec![w],
            ..Interval::default()
        };
        let report = Report {
            lifetime,
            ..Report::default()
        };
        let text = report.to_string();
        let lines: Vec<&str> = text.lines().collect();
        let header = lines
            .iter()
            .position(|l| l.contains("steals ok/try"))
            .unwrap();
        assert!(lines[header].contains("joins") && lines[header].contains("forks st/sh"));
        // Each value ends where its column's title does.
        for row in &lines[header + 1..header + 3] {
            for (title, value) in [("joins", "12345"), ("forks st/sh", "3/40")] {
                let end = lines[header].find(title).unwrap() + title.len();
                assert_eq!(&row[end - value.len()..end], value, "{text}");
            }
        }
    }

    #[test]
    fn an_empty_report_displays() {
        let text = Report::default().to_string();
        assert!(text.contains("no tasks timed"), "{text}");
        assert!(text.contains("no samples"), "{text}");
    }
}
