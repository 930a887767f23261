//! `examples/prometheus.rs` (at the workspace root), built with the facade's
//! `metrics-rs` feature, run as a real process and scraped over loopback:
//! its text carries every documented metric name, with the `pool` and
//! `worker` labels, and the latency metrics as histograms.
#![cfg(feature = "metrics-rs")]

mod common;

use common::process::{build_example, get, start_example};
use common::HANG;
use dreadpool::metrics::publish::{names, Buckets};
use std::thread;
use std::time::{Duration, Instant};

#[test]
fn the_prometheus_example_serves_the_documented_names() {
    let executable = build_example();
    let (mut child, addr) = start_example(&executable);

    // The publisher publishes before the example prints, and the listener
    // is bound before that: the first scrape has everything.
    let (status, response) = get(addr, "/metrics").expect("scrape");
    assert_eq!(status, 200, "{response}");
    for name in names::ALL {
        assert!(
            response.lines().any(|l| l.starts_with(name)),
            "{name} missing from the scrape:\n{response}"
        );
    }
    assert!(
        response.contains("dreadpool_tasks_run_total{pool=\"prometheus-demo\",worker=\"0\"}"),
        "{response}"
    );
    assert!(response.contains("dreadpool_threads{pool=\"prometheus-demo\"} 4"));
    assert!(response.contains("dreadpool_schema_info{pool=\"prometheus-demo\",version=\"2\"} 1"));

    // Histograms, not summaries: every bound of `Buckets` (plus +Inf) for
    // each, and no quantile series (schema 1's gauges, or the summaries
    // the exporter falls back to without buckets).
    let bounds = Buckets::default().series() - 2;
    for name in names::HISTOGRAMS {
        let buckets = response
            .lines()
            .filter(|l| l.starts_with(&format!("{name}_bucket{{")))
            .count();
        assert_eq!(buckets, bounds, "{name}_bucket series");
        assert!(response.contains(&format!("# TYPE {name} histogram")));
        for suffix in ["_sum", "_count"] {
            assert!(response.contains(&format!("{name}{suffix}{{pool=\"prometheus-demo\"}}")));
        }
    }
    assert!(!response.contains("quantile="), "{response}");

    // The numbers move: a later scrape has run more tasks.
    let tasks = |text: &str| -> u64 {
        text.lines()
            .filter(|l| l.starts_with("dreadpool_tasks_run_total{"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .sum()
    };
    let first = tasks(&response);
    let deadline = Instant::now() + HANG;
    loop {
        let (_, later) = get(addr, "/metrics").expect("scrape");
        if tasks(&later) > first {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "tasks_run never moved past {first}"
        );
        // Not an ordering: a pause between scrapes of a process that
        // publishes twice a second.
        thread::sleep(Duration::from_millis(100));
    }
    assert!(
        child.0.try_wait().expect("status").is_none(),
        "the example exited early"
    );
}
