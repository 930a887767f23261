//! What monitoring costs, measured rather than guessed. Ignored by default
//! (timings mean nothing in a debug build on a loaded machine); run with
//!
//! ```text
//! cargo test --release -p dreadpool-metrics --test cost -- --ignored --nocapture
//! ```

use dreadpool::metrics::{Monitor, Snapshot};
use dreadpool::ThreadPoolBuilder;
use std::time::{Duration, Instant};

fn per_call(n: u32, mut f: impl FnMut()) -> Duration {
    f();
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed() / n
}

#[test]
#[ignore = "a measurement: run in release with --ignored --nocapture"]
fn cost_of_sampling_and_serialising() {
    for threads in [2, 16] {
        let pool = ThreadPoolBuilder::new()
            .with_threads(threads)
            .with_latency_sampling(1)
            .build();
        // Fill the histograms with a spread of values, as a real pool has.
        let handle = pool.handle();
        for i in 0..20_000u64 {
            let handle = handle.clone();
            pool.spawn(move || {
                if i % 7 == 0 {
                    handle.spawn(move || {
                        std::hint::black_box((0..(i % 5000)).sum::<u64>());
                    });
                }
            });
        }
        pool.join();

        let metrics = per_call(2000, || {
            std::hint::black_box(pool.metrics());
        });
        let convert = {
            let m = pool.metrics();
            per_call(2000, || {
                std::hint::black_box(Snapshot::from(&m));
            })
        };
        let mut monitor = Monitor::new(&pool);
        let sample = per_call(2000, || {
            std::hint::black_box(monitor.sample());
        });
        let snapshot = Snapshot::from(&pool.metrics());
        // serde_json here, as an outside reader of the wire would; the
        // exporter's own codec (crate-private) is timed against it by
        // `json::tests::cost` (BENCHMARKS.md, "The wire's JSON").
        let json = serde_json::to_vec(&snapshot).unwrap();
        let serialise = per_call(2000, || {
            std::hint::black_box(serde_json::to_vec(&snapshot).unwrap());
        });
        let parse = per_call(2000, || {
            std::hint::black_box(serde_json::from_slice::<Snapshot>(&json).unwrap());
        });
        let report = per_call(200, || {
            std::hint::black_box(monitor.report().to_string());
        });
        println!(
            "{threads:>2} workers: pool.metrics() {metrics:?}, Snapshot::from {convert:?}, \
             Monitor::sample {sample:?}, frame JSON {} bytes, serialise {serialise:?}, \
             parse {parse:?}, report+Display {report:?}",
            json.len()
        );
    }
}
