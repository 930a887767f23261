//! A pool's counters, gauges and latency histograms served to Prometheus,
//! through the `metrics` facade (metrics-rs) and `metrics-exporter-prometheus`.
//!
//! ```text
//! cargo run --example prometheus --features metrics-rs [-- ADDR [SECONDS]]
//! curl -s http://127.0.0.1:9187/metrics | grep '^dreadpool_'
//! ```
//!
//! `ADDR` is a loopback `IP:PORT` (default `127.0.0.1:9187`; port 0 picks a
//! free one); the program prints `serving http://ADDR/metrics` once the
//! endpoint is up, then runs a steady load until killed, or for `SECONDS`.
//! The metric names are documented in `dreadpool::metrics::publish`; two
//! copies on two ports make the fleet of `deploy/prometheus/`'s rules.

use dreadpool::metrics::publish::{names, Buckets, Publisher};
use dreadpool::ThreadPoolBuilder;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
use std::error::Error;
use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let addr: SocketAddr = args.next().as_deref().unwrap_or("127.0.0.1:9187").parse()?;
    let run_for = match args.next() {
        Some(seconds) => Some(Duration::from_secs(seconds.parse()?)),
        None => None,
    };
    if !addr.ip().is_loopback() {
        return Err(format!(
            "{addr} is not a loopback address: this example serves 127.0.0.1 or ::1 only"
        )
        .into());
    }
    let addr = if addr.port() == 0 {
        // The exporter does not report the port it bound, so find a free one
        // first.
        TcpListener::bind(addr)?.local_addr()?
    } else {
        addr
    };

    // Bounds on the core's bucket edges, so that the histograms are exact
    // (see `Buckets`). Without them this exporter would serve summaries,
    // which a fleet cannot aggregate.
    let bounds = Buckets::default().bounds();
    let mut builder = PrometheusBuilder::new().with_http_listener(addr);
    for name in names::HISTOGRAMS {
        builder = builder.set_buckets_for_metric(Matcher::Full(name.to_string()), &bounds)?;
    }
    builder.install()?;

    let pool = ThreadPoolBuilder::new()
        .with_threads(4)
        .with_thread_name("prometheus-demo")
        .build();
    // Samples the pool and publishes every metric twice a second; the first
    // publication happens before `spawn` returns.
    let _publisher = Publisher::spawn(&pool, Duration::from_millis(500))?;

    println!("serving http://{addr}/metrics");
    std::io::stdout().flush()?;

    // A steady load so that the numbers move: bursts of tasks that spawn
    // children (local queues, steals) and fork a join (the fork-join
    // counters), a pause, again.
    let started = Instant::now();
    let handle = pool.handle();
    let work = |seed: u64| {
        std::hint::black_box((0..200).fold(seed, |a, b| a.wrapping_mul(31) ^ b));
    };
    while run_for.is_none_or(|limit| started.elapsed() < limit) {
        for i in 0..2_000u64 {
            let handle = handle.clone();
            pool.spawn(move || {
                for j in 0..4 {
                    handle.spawn(move || work(i ^ j));
                }
                dreadpool::join(|| work(i), || work(!i));
            });
        }
        pool.join();
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}
