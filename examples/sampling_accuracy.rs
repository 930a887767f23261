//! How close the sampled latency quantiles are to timing every task.
//!
//! `cargo run --release --example sampling_accuracy --features metrics`
//! runs the same seeded workload (400,000 tasks spinning for log-uniform
//! durations of 1 us to 100 us) four times on 2 threads: timing every task
//! (`with_latency_sampling(1)`), one in 16, one in 64 and one in 256 (the
//! default), and prints the run-time quantiles of each with the sampled
//! ones' error relative to full timing. (It takes about 10 seconds.)

use dreadpool::{LatencyHistogram, ThreadPoolBuilder};
use std::time::{Duration, Instant};

const TASKS: usize = 400_000;

fn durations() -> Vec<Duration> {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    (0..TASKS)
        .map(|_| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            // log-uniform in [1 us, 100 us]
            let unit = (rng >> 11) as f64 / (1u64 << 53) as f64;
            Duration::from_secs_f64(1e-6 * 100f64.powf(unit))
        })
        .collect()
}

fn run(sampling: u32, work: &[Duration]) -> LatencyHistogram {
    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_latency_sampling(sampling)
        .build();
    for &d in work {
        pool.spawn(move || {
            let start = Instant::now();
            while start.elapsed() < d {
                std::hint::spin_loop();
            }
        });
    }
    pool.join();
    pool.metrics().run_time()
}

fn main() {
    let work = durations();
    let full = run(1, &work);
    let quantiles = [0.5, 0.9, 0.99, 0.999];
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    println!("run time of {TASKS} tasks, 2 threads (quantiles in us)");
    println!(
        "{:>10} {:>8} {:>9} {:>9} {:>9} {:>9}",
        "sampling", "samples", "p50", "p90", "p99", "p99.9"
    );
    let row = |name: &str, h: &LatencyHistogram| {
        let cells: Vec<String> = quantiles
            .iter()
            .map(|&q| {
                let (got, want) = (micros(h.quantile(q)), micros(full.quantile(q)));
                if std::ptr::eq(h, &full) {
                    format!("{got:>9.1}")
                } else {
                    format!("{:>+8.1}%", (got - want) / want * 100.0)
                }
            })
            .collect();
        println!("{name:>10} {:>8} {}", h.count(), cells.join(" "));
    };
    row("1 in 1", &full);
    for sampling in [16, 64, 256] {
        let sampled = run(sampling, &work);
        row(&format!("1 in {sampling}"), &sampled);
    }
}
