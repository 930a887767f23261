//! rayon's common patterns, timed, on rayon's global pool.
//!
//! ```text
//! rayon-bench SCENARIO [REPS]     (REPS: timed repetitions, default 7)
//! rayon-bench --list
//! ```
//!
//! Prints `best X ms` (the fastest repetition, after one untimed warm-up)
//! and `median Y ms`, the form `ab.py` reads. The inputs are made before
//! the clock starts; each repetition's result is checked, so a wrong answer
//! is a failure, not a fast time. The program knows nothing of dreadpool:
//! `ab.py` builds it with crates.io's `rayon-core` and with dreadpool's.

mod scenarios;

use scenarios::Scenario;
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_default();
    if name == "--list" {
        for scenario in Scenario::ALL {
            println!("{}", scenario.name());
        }
        return;
    }
    let Some(scenario) = Scenario::from_name(&name) else {
        eprintln!(
            "usage: rayon-bench SCENARIO [REPS]; scenarios: {}",
            Scenario::ALL.map(Scenario::name).join(" ")
        );
        std::process::exit(2);
    };
    let reps = match args.next().map(|s| s.parse::<usize>()) {
        None => 7,
        Some(Ok(reps)) if reps > 0 => reps,
        Some(_) => {
            eprintln!("rayon-bench: REPS must be a positive whole number");
            std::process::exit(2);
        }
    };

    let mut input = scenario.input();
    // Warm-up: starts the pool's threads and faults in the memory.
    let output = scenario.run(&mut input);
    scenario.check(&input, &output);
    drop(output);
    let mut times: Vec<Duration> = (0..reps)
        .map(|_| {
            scenario.reset(&mut input);
            let t = Instant::now();
            let output = scenario.run(&mut input);
            let took = t.elapsed();
            scenario.check(&input, &output);
            took
        })
        .collect();
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{}: {} threads, best {:.3} ms, median {:.3} ms over {reps}",
        scenario.name(),
        rayon::current_num_threads(),
        ms(times[0]),
        ms(times[reps / 2])
    );
}
