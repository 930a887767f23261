//! A tokio service that offloads CPU-bound work to a dreadpool with
//! `.await`: no channel, no blocking of the executor, and the pool's
//! metrics beside the service's own latencies.
//!
//! ```text
//! cargo run --release --example async_offload --features metrics
//! cargo run --release --example async_offload --features metrics -- --requests 300000 --serve /tmp/offload.sock
//! cargo run --release -p dreadpool-top -- --attach /tmp/offload.sock   # while it runs
//! ```
//!
//! A "listener" task accepts requests from a simulated stream of clients (a
//! tokio channel, 10,000 requests a second unless `--rate` says otherwise) and handles each in its own async task, as a server does
//! per connection. A request hashes its payload on the `cpu` pool
//! (`pool.spawn_with_handle(..).await`); its async part (parsing, replying)
//! stays on tokio's threads. A heartbeat task ticks every millisecond: its
//! worst gap shows whether anything blocked the executor. At the end the
//! example prints the requests' latency quantiles, the heartbeat's worst
//! gap and the pool's own report (`dreadpool::metrics::Monitor`).

use dreadpool::metrics::{Exporter, Monitor};
use dreadpool::ThreadPoolBuilder;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One client request: a payload to digest.
struct Request {
    id: u64,
    payload: Vec<u8>,
    arrived: Instant,
}

/// The CPU-bound part: a few rounds of FNV-1a over the payload (tens of
/// microseconds), standing in for parsing, compression or a signature.
fn digest(payload: &[u8]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for _ in 0..16 {
        for &byte in payload {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

struct Options {
    requests: u64,
    /// Requests a second.
    rate: u64,
    serve: Option<String>,
}

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        requests: 20_000,
        rate: 10_000,
        serve: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--requests" => {
                let value = args.next().ok_or("--requests needs a number")?;
                options.requests = value
                    .parse()
                    .map_err(|_| format!("--requests: {value:?} is not a whole number"))?;
            }
            "--rate" => {
                let value = args.next().ok_or("--rate needs a number")?;
                options.rate =
                    value.parse().ok().filter(|&rate| rate > 0).ok_or_else(|| {
                        format!("--rate: {value:?} is not a positive whole number")
                    })?;
            }
            "--serve" => options.serve = Some(args.next().ok_or("--serve needs an address")?),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(options)
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[rank]
}

fn main() {
    let options = match parse_args() {
        Ok(options) => options,
        Err(error) => {
            eprintln!("async_offload: {error}");
            eprintln!("usage: async_offload [--requests N] [--rate PER_SECOND] [--serve ADDR]");
            std::process::exit(2);
        }
    };

    // The pool's threads announce themselves through the start and exit
    // handlers (where a service would pin them or register them with a
    // profiler).
    let threads_started = Arc::new(AtomicUsize::new(0));
    let started = Arc::clone(&threads_started);
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .with_threads(2)
            .with_thread_name("cpu")
            .with_latency_sampling(16)
            .with_start_handler(move |_| {
                started.fetch_add(1, Ordering::Relaxed);
            })
            .build(),
    );
    let exporter = options.serve.as_deref().map(|addr| {
        Exporter::bind(&pool, addr).unwrap_or_else(|error| {
            eprintln!("async_offload: cannot serve on {addr}: {error}");
            std::process::exit(1);
        })
    });
    if let Some(exporter) = &exporter {
        println!(
            "async_offload: pool `cpu` served on {} (dreadpool-top --attach {})",
            exporter.addr(),
            exporter.addr()
        );
    }
    let mut monitor = Monitor::new(&pool);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("a tokio runtime starts");
    let began = Instant::now();
    let (latencies, worst_gap, checksum) = runtime.block_on(async {
        // The heartbeat: a 1 ms ticker whose worst gap exposes a blocked
        // executor thread.
        let beating = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let heartbeat = {
            let beating = Arc::clone(&beating);
            tokio::spawn(async move {
                let mut worst = Duration::ZERO;
                let mut last = Instant::now();
                while beating.load(Ordering::Relaxed) {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    worst = worst.max(last.elapsed());
                    last = Instant::now();
                }
                worst
            })
        };

        // Clients: `rate` requests a second, sent each millisecond as a
        // small burst, as network reads would deliver them.
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Request>(1024);
        let (requests, per_tick) = (options.requests, options.rate.div_ceil(1000).max(1));
        let clients = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(Duration::from_millis(1));
            let mut id = 0;
            while id < requests {
                ticks.tick().await;
                for _ in 0..per_tick.min(requests - id) {
                    let payload = (0..256).map(|i| (id as u8).wrapping_add(i as u8)).collect();
                    let request = Request {
                        id,
                        payload,
                        arrived: Instant::now(),
                    };
                    if tx.send(request).await.is_err() {
                        return;
                    }
                    id += 1;
                }
            }
        });

        // The listener: one async task per request, which awaits its CPU
        // work on the pool.
        let mut handlers = Vec::with_capacity(requests as usize);
        while let Some(request) = rx.recv().await {
            let pool = Arc::clone(&pool);
            handlers.push(tokio::spawn(async move {
                let Request {
                    id,
                    payload,
                    arrived,
                } = request;
                let hash = pool
                    .spawn_with_handle(move || digest(&payload))
                    .await
                    .expect("digest does not panic");
                (id ^ hash, arrived.elapsed())
            }));
        }
        clients.await.expect("the clients finish");
        let mut latencies = Vec::with_capacity(handlers.len());
        let mut checksum = 0u64;
        for handler in handlers {
            let (mixed, latency) = handler.await.expect("a request handler finishes");
            checksum ^= mixed;
            latencies.push(latency);
        }
        beating.store(false, Ordering::Relaxed);
        let worst_gap = heartbeat.await.expect("the heartbeat ends");
        (latencies, worst_gap, checksum)
    });
    let elapsed = began.elapsed();

    let mut sorted = latencies;
    sorted.sort_unstable();
    monitor.sample();
    println!(
        "async_offload: {} requests in {:.2?} ({:.0}/s), checksum {checksum:016x}",
        sorted.len(),
        elapsed,
        sorted.len() as f64 / elapsed.as_secs_f64()
    );
    println!(
        "async_offload: request latency p50 {:.1?}  p99 {:.1?}  max {:.1?}",
        quantile(&sorted, 0.50),
        quantile(&sorted, 0.99),
        quantile(&sorted, 1.0)
    );
    println!("async_offload: executor heartbeat worst gap {worst_gap:.1?} (1 ms ticks)");
    println!(
        "async_offload: pool threads started: {}",
        threads_started.load(Ordering::Relaxed)
    );
    println!("{}", monitor.report());
    if let Some(exporter) = exporter {
        exporter.shutdown();
    }
}
