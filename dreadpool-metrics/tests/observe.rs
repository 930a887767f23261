//! The observability switch (`dreadpool::metrics::observe`) on a real pool:
//! the variables, as a lookup, start an exporter that the client
//! `dreadpool-top --attach` uses can read snapshots and recordings from,
//! and a Prometheus endpoint that serves the pool's series.
#![cfg(feature = "recorder")]

mod common;

use common::{socket_path, HANG};
use dreadpool::metrics::observe::{
    ObserveConfig, ObserveEnvError, ObserveError, PROMETHEUS_VAR, RECORD_VAR, SERVE_VAR,
};
use dreadpool::metrics::{Client, RecordingRequest};
use dreadpool::{EventKind, RecordLevel, ThreadPoolBuilder};
use std::collections::HashMap;
use std::time::Instant;

fn config(vars: &[(&str, String)]) -> Result<ObserveConfig, ObserveEnvError> {
    let vars: HashMap<&str, String> = vars.iter().cloned().collect();
    ObserveConfig::from_lookup(|name| vars.get(name).cloned())
}

#[test]
fn a_pool_served_from_the_variables_is_attached_to_with_recordings_of_every_task() {
    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_thread_name("observed")
        .build();
    // The pool is built at the default level; serving switches it to Tasks.
    assert_eq!(pool.record_level(), RecordLevel::Scheduler);
    let path = socket_path("observe");
    let observer = config(&[(SERVE_VAR, path.display().to_string())])
        .unwrap()
        .start(pool.handle())
        .unwrap();
    assert_eq!(pool.record_level(), RecordLevel::Tasks);
    assert_eq!(observer.serve_addr(), Some(path.display().to_string()));
    assert_eq!(observer.prometheus_addr(), None);

    for _ in 0..300 {
        pool.spawn(|| std::hint::black_box(()));
    }
    pool.join();

    // The client dreadpool-top's attached source uses.
    let mut client = Client::connect(&path.display().to_string()).unwrap();
    assert_eq!(client.hello().pools, ["observed"]);
    assert!(client.hello().recording, "the exporter answers recordings");
    let deadline = Instant::now() + HANG;
    loop {
        let snapshots = client.next_snapshots().unwrap();
        let run: u64 = snapshots[0].workers.iter().map(|w| w.tasks_run).sum();
        if run >= 300 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the served pool never showed 300 runs: {run}"
        );
    }
    let reply = client.recording(&RecordingRequest::pool(0)).unwrap();
    assert_eq!(reply.recording.level(), RecordLevel::Tasks);
    let runs = reply
        .recording
        .events()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::RunBegin { .. }))
        .count();
    assert_eq!(runs, 300, "every task's run is in the recording");

    // Dropping the guard stops serving.
    drop(observer);
    assert!(Client::connect(&path.display().to_string()).is_err());
}

#[test]
fn a_level_given_is_set_and_nothing_else_is_started() {
    let pool = ThreadPoolBuilder::new().with_threads(1).build();
    let observer = config(&[(RECORD_VAR, "off".into())])
        .unwrap()
        .start(pool.handle())
        .unwrap();
    assert_eq!(pool.record_level(), RecordLevel::Off);
    assert_eq!(observer.serve_addr(), None);
}

#[test]
fn a_path_in_use_is_a_serve_error_and_the_pool_is_left_running() {
    let pool = ThreadPoolBuilder::new().with_threads(1).build();
    let path = socket_path("taken");
    let first = config(&[(SERVE_VAR, path.display().to_string())])
        .unwrap()
        .start(pool.handle())
        .unwrap();
    let second = config(&[(SERVE_VAR, path.display().to_string())])
        .unwrap()
        .start(pool.handle())
        .unwrap_err();
    assert!(matches!(second, ObserveError::Serve { .. }), "{second:?}");
    assert!(
        second.to_string().starts_with("DREADPOOL_SERVE: "),
        "{second}"
    );
    // The first still serves.
    Client::connect(&path.display().to_string()).unwrap();
    drop(first);
}

#[cfg(not(feature = "prometheus"))]
#[test]
fn a_prometheus_address_without_the_feature_is_refused_not_ignored() {
    let pool = ThreadPoolBuilder::new().with_threads(1).build();
    let error = config(&[(PROMETHEUS_VAR, "127.0.0.1:0".into())])
        .unwrap()
        .start(pool.handle())
        .unwrap_err();
    assert!(
        matches!(error, ObserveError::PrometheusNotBuilt),
        "{error:?}"
    );
}

/// The only test in this file that installs the process's metrics-rs
/// recorder (a process has one).
#[cfg(feature = "prometheus")]
#[test]
fn a_prometheus_endpoint_serves_the_pools_series() {
    use common::process::get;
    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_thread_name("scraped")
        .build();
    let observer = config(&[(PROMETHEUS_VAR, "127.0.0.1:0".into())])
        .unwrap()
        .start(pool.handle())
        .unwrap();
    let addr = observer.prometheus_addr().expect("an endpoint");
    assert_ne!(addr.port(), 0, "the port picked is reported");
    for _ in 0..100 {
        pool.spawn(|| ());
    }
    pool.join();
    // The publisher publishes every PUBLISH_PERIOD: poll until the runs show.
    let deadline = Instant::now() + HANG;
    loop {
        let (status, text) = get(addr, "/metrics").expect("scrape");
        assert_eq!(status, 200, "{text}");
        let runs: u64 = text
            .lines()
            .filter(|l| l.starts_with("dreadpool_tasks_run_total{pool=\"scraped\""))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .sum();
        if runs >= 100 {
            assert!(
                text.contains("dreadpool_threads{pool=\"scraped\"} 2"),
                "{text}"
            );
            break;
        }
        assert!(Instant::now() < deadline, "no runs scraped:\n{text}");
        // Not an ordering: a pause between scrapes.
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // A second endpoint in the same process cannot install a second
    // recorder: a typed error, not a panic.
    let second = config(&[(PROMETHEUS_VAR, "127.0.0.1:0".into())])
        .unwrap()
        .start(pool.handle())
        .unwrap_err();
    assert!(
        matches!(second, ObserveError::Prometheus { .. }),
        "{second:?}"
    );
}
