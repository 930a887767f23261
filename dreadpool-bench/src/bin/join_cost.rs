//! `fib(N)` by `join` inside `install` on a pool of one worker: the join
//! path alone, small enough to run under `valgrind --tool=callgrind`.
//! `scripts/join-instructions.sh` runs it at two sizes and divides the
//! difference in instructions by the difference in joins, which leaves out
//! the pool's start and stop: instructions per join.
//!
//! ```text
//! join_cost N       prints "fib(N) = F, J joins, T ns/join"
//! ```
//!
//! With one worker no fork is ever stolen, so this is the cost of a join
//! whose fork its own worker takes back: the common case of fine-grained
//! fork-join, and the one that a change to the join path must not slow.

use dreadpool::ThreadPoolBuilder;
use std::time::Instant;

fn fib(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = dreadpool::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// How many joins `fib(n)` makes: one at every call with `n >= 2`.
fn joins(n: u32) -> u64 {
    let (mut below, mut here) = (0u64, 0u64); // joins(k - 1), joins(k), from k = 1
    for _ in 2..=n {
        (below, here) = (here, here + below + 1);
    }
    here
}

fn main() {
    let n = match std::env::args().nth(1).map(|s| s.parse::<u32>()) {
        Some(Ok(n)) if (2..=40).contains(&n) => n,
        _ => {
            eprintln!("usage: join_cost N   (N from 2 to 40)");
            std::process::exit(2);
        }
    };
    let pool = ThreadPoolBuilder::new().with_threads(1).build();
    let start = Instant::now();
    let value = pool.install(|| fib(n));
    let took = start.elapsed();
    let joins = joins(n);
    println!(
        "fib({n}) = {value}, {joins} joins, {:.2} ns/join",
        took.as_nanos() as f64 / joins as f64
    );
}
