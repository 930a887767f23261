//! A host application for `dreadpool-top --attach`: two pools under load,
//! served on ADDR by `dreadpool::metrics::Exporter`.
//!
//! ```text
//! cargo run --release --example attach_host --features metrics,recorder -- /tmp/dreadpool.sock
//! cargo run --release -p dreadpool-top -- --attach /tmp/dreadpool.sock
//! ```
//!
//! Both pools record at `RecordLevel::Tasks`, so the dashboard's timeline
//! shows their workers' states, and a recording pulled from them (`r` in
//! the dashboard, or `--headless --duration 5s --record FILE`) shows every
//! task as a slice in Perfetto.
//!
//! ADDR is a Unix socket path or a loopback `host:port` (`127.0.0.1:6670`).
//! An optional second argument stops the host after that many seconds
//! (otherwise it runs until killed; a stale socket file is cleared by the
//! next run).
//!
//! The `api` pool (4 threads) gets a steady stream of short requests from
//! outside, and one request in about 5,000 panics (its worker is respawned:
//! watch the event log); the `batch` pool (2 threads) gets a recursive job
//! tree every two seconds, so it floods, steals and falls asleep in turns.

use dreadpool::metrics::Exporter;
use dreadpool::{Handle, RecordLevel, ThreadPoolBuilder};
use std::time::{Duration, Instant};

/// The prefix of this host's deliberate panics (kept off stderr).
const SIMULATED: &str = "attach_host: simulated failure";

/// xorshift64*: enough randomness for task sizes, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn micros(&mut self, low: u64, high: u64) -> Duration {
        Duration::from_micros(low + self.next() % (high - low))
    }
}

fn spin(d: Duration) {
    let end = Instant::now() + d;
    while Instant::now() < end {
        std::hint::spin_loop();
    }
}

/// A batch job: some work, then two children, down to `depth` zero.
fn job_tree(pool: Handle, seed: u64, depth: u32) {
    let mut rng = Rng(seed | 1);
    spin(rng.micros(50, 300));
    if depth > 0 {
        for _ in 0..2 {
            let (p, s) = (pool.clone(), rng.next());
            pool.spawn(move || job_tree(p, s, depth - 1));
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(addr) = args.next() else {
        eprintln!("usage: attach_host ADDR [SECONDS]   (ADDR: a socket path or 127.0.0.1:PORT)");
        std::process::exit(2);
    };
    let seconds = match args.next().map(|s| s.parse::<u64>()) {
        None => None,
        Some(Ok(s)) => Some(Duration::from_secs(s)),
        Some(Err(_)) => {
            eprintln!("attach_host: SECONDS must be a whole number");
            std::process::exit(2);
        }
    };

    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str));
        if !message.is_some_and(|m| m.starts_with(SIMULATED)) {
            previous(info);
        }
    }));

    let api = ThreadPoolBuilder::new()
        .with_threads(4)
        .with_thread_name("api")
        .with_latency_sampling(8)
        .with_record_level(RecordLevel::Tasks)
        .build();
    let batch = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_thread_name("batch")
        .with_latency_sampling(8)
        .with_record_level(RecordLevel::Tasks)
        .build();
    let exporter = match Exporter::builder().pool(&api).pool(&batch).bind(&addr) {
        Ok(exporter) => exporter,
        Err(error) => {
            eprintln!("attach_host: cannot serve on {addr}: {error}");
            std::process::exit(1);
        }
    };
    println!(
        "attach_host: serving pools api (4 threads) and batch (2 threads) on {}",
        exporter.addr()
    );
    println!(
        "attach_host: watch with: cargo run --release -p dreadpool-top -- --attach {}",
        exporter.addr()
    );

    let started = Instant::now();
    let mut rng = Rng(0x5EED);
    let mut request = 0u64;
    let mut next_batch = started;
    loop {
        if seconds.is_some_and(|s| started.elapsed() >= s) {
            break;
        }
        // About 1,500 requests a second, in steps of 5 ms.
        for _ in 0..(5 + rng.next() % 5) {
            request += 1;
            let work = rng.micros(40, 250);
            let fails = rng.next().is_multiple_of(5_000);
            let id = request;
            api.spawn(move || {
                spin(work);
                if fails {
                    panic!("{SIMULATED}: request {id}");
                }
            });
        }
        if Instant::now() >= next_batch {
            next_batch += Duration::from_secs(2);
            let (handle, seed) = (batch.handle(), rng.next());
            batch.spawn(move || job_tree(handle, seed, 8));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    exporter.shutdown();
    println!(
        "attach_host: done after {:?}: {} api requests, {} panics",
        started.elapsed(),
        request,
        api.panic_count()
    );
}
