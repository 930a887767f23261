//! A plain rayon program with real work, in rounds: primes over a range, word
//! counts over generated text, and a box blur of a generated image, each a
//! `par_iter` (or `par_chunks`) on rayon's global pool.
//!
//! ```text
//! rayon-demo [SECONDS]
//! ```
//!
//! Runs for SECONDS (a whole number), or until killed, printing one line per
//! round. It knows nothing of dreadpool: built with dreadpool's `rayon-core`
//! (`[patch.crates-io]`, see README.md) and run with
//! `DREADPOOL_SERVE=/tmp/app.sock`, its global pool is served to
//! `dreadpool-top --attach /tmp/app.sock`.

mod blur;
mod primes;
mod words;

use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let run_for = match args.next().map(|s| s.parse::<u64>()) {
        None => None,
        Some(Ok(seconds)) => Some(Duration::from_secs(seconds)),
        Some(Err(_)) => {
            eprintln!(
                "usage: rayon-demo [SECONDS]   (SECONDS: a whole number; none: until killed)"
            );
            std::process::exit(2);
        }
    };
    println!(
        "rayon-demo: pid {}, {} threads in rayon's global pool",
        std::process::id(),
        rayon::current_num_threads()
    );

    let text = words::generate_text(200_000, 7);
    let mut image = blur::Image::generate(1024, 768, 11);
    let started = Instant::now();
    let mut round = 0u64;
    while run_for.is_none_or(|limit| started.elapsed() < limit) {
        round += 1;
        let t = Instant::now();
        // A range that moves each round, so the work is never the same twice.
        let low = 1_000_000 + (round % 50) * 20_000;
        let primes = primes::count_in(low..low + 400_000);
        let counts = words::count(&text);
        image = image.blurred(2);
        println!(
            "round {round}: {primes} primes in [{low}, {}), {} distinct words (top {:?}), image checksum {:016x}, {:?}",
            low + 400_000,
            counts.len(),
            words::most_common(&counts),
            image.checksum(),
            t.elapsed()
        );
    }
    println!("rayon-demo: {round} rounds in {:?}", started.elapsed());
}
