//! rayon's common patterns, timed, on rayon's global pool.
//!
//! ```text
//! rayon-bench SCENARIO [REPS] [--no-pool]   (REPS: timed repetitions, default 7)
//! rayon-bench --list
//! ```
//!
//! `--no-pool` runs the scenario's work on plain threads instead, with no
//! pool (`no_pool.rs`: a bound on what any pool could give), for `sum`,
//! `map_collect` and `par_bridge`.
//!
//! Prints `best X ms` (the fastest repetition, after one untimed warm-up)
//! and `median Y ms`, the form `ab.py` reads. The inputs are made before
//! the clock starts; each repetition's result is checked, so a wrong answer
//! is a failure, not a fast time. The program knows nothing of dreadpool:
//! `ab.py` builds it with crates.io's `rayon-core` and with dreadpool's.

mod no_pool;
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
    let rest: Vec<String> = args.collect();
    let no_pool = rest.iter().any(|a| a == "--no-pool");
    let reps = match rest
        .iter()
        .find(|a| *a != "--no-pool")
        .map(|s| s.parse::<usize>())
    {
        None => 7,
        Some(Ok(reps)) if reps > 0 => reps,
        Some(_) => {
            eprintln!("rayon-bench: REPS must be a positive whole number");
            std::process::exit(2);
        }
    };

    let mut input = scenario.input();
    let mut times = if no_pool {
        no_pool::time(scenario, &input, reps).unwrap_or_else(|| {
            eprintln!("rayon-bench: {} has no --no-pool form", scenario.name());
            std::process::exit(2);
        })
    } else {
        // Warm-up: starts the pool's threads and faults in the memory.
        let output = scenario.run(&mut input);
        scenario.check(&input, &output);
        drop(output);
        (0..reps)
            .map(|_| {
                scenario.reset(&mut input);
                let t = Instant::now();
                let output = scenario.run(&mut input);
                let took = t.elapsed();
                scenario.check(&input, &output);
                took
            })
            .collect::<Vec<Duration>>()
    };
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{}{}: {} threads, best {:.3} ms, median {:.3} ms over {reps}",
        scenario.name(),
        if no_pool { " (no pool)" } else { "" },
        if no_pool {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            rayon::current_num_threads()
        },
        ms(times[0]),
        ms(times[reps / 2])
    );
}
