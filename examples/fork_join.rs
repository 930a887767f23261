//! A parallel quicksort by `dreadpool::join`, on a borrowed `&mut [u64]`.
//!
//! `cargo run --release --example fork_join [ELEMENTS]` (default 10,000,000)
//! sorts the same random data with the same quicksort twice: once calling
//! both halves one after the other, once under `dreadpool::join` inside
//! `pool.install`; checks both against `sort_unstable` and prints the times.
//!
//! `join` needs no scope and no `'static` data: each half borrows its part
//! of the slice, and the recursion forks at every level. Below
//! [`CUTOFF`] elements a fork costs more than it can save, so the slice is
//! sorted serially.

use dreadpool::ThreadPoolBuilder;
use std::time::Instant;

/// Slices this short are sorted by `sort_unstable`.
const CUTOFF: usize = 4096;

/// Splits `v` (at least 2 elements) around a median-of-three pivot: every
/// element of `v[..mid]` is `<=` every element of `v[mid..]`, both non-empty.
fn partition(v: &mut [u64]) -> usize {
    let (middle, last) = (v.len() / 2, v.len() - 1);
    if v[middle] < v[0] {
        v.swap(middle, 0);
    }
    if v[last] < v[0] {
        v.swap(last, 0);
    }
    if v[last] < v[middle] {
        v.swap(last, middle);
    }
    // Hoare's scheme with the pivot in front, which keeps both sides
    // non-empty.
    v.swap(0, middle);
    let pivot = v[0];
    let (mut i, mut j) = (0, v.len());
    loop {
        loop {
            j -= 1;
            if v[j] <= pivot {
                break;
            }
        }
        while v[i] < pivot {
            i += 1;
        }
        if i >= j {
            return j + 1;
        }
        v.swap(i, j);
        i += 1;
    }
}

/// Sorts `v`, the two sides of each partition under `dreadpool::join`.
fn quicksort(v: &mut [u64]) {
    if v.len() <= CUTOFF {
        v.sort_unstable();
        return;
    }
    let mid = partition(v);
    let (left, right) = v.split_at_mut(mid);
    dreadpool::join(|| quicksort(left), || quicksort(right));
}

/// The same quicksort, one side after the other.
fn quicksort_serial(v: &mut [u64]) {
    if v.len() <= CUTOFF {
        v.sort_unstable();
        return;
    }
    let mid = partition(v);
    let (left, right) = v.split_at_mut(mid);
    quicksort_serial(left);
    quicksort_serial(right);
}

fn main() {
    let n: usize = match std::env::args().nth(1) {
        None => 10_000_000,
        Some(arg) => match arg.parse() {
            Ok(n) => n,
            Err(_) => {
                eprintln!("usage: fork_join [ELEMENTS]  (got {arg:?})");
                std::process::exit(2);
            }
        },
    };
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let data: Vec<u64> = (0..n)
        .map(|_| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        })
        .collect();
    let mut expected = data.clone();
    expected.sort_unstable();

    let mut serial = data.clone();
    let start = Instant::now();
    quicksort_serial(&mut serial);
    let serial_time = start.elapsed();

    let pool = ThreadPoolBuilder::new().build();
    let mut parallel = data;
    let start = Instant::now();
    // Inside install, every join forks on this pool's workers.
    pool.install(|| quicksort(&mut parallel));
    let parallel_time = start.elapsed();

    assert!(serial == expected, "the serial quicksort is wrong");
    assert!(
        parallel == expected,
        "the quicksort under join disagrees with sort_unstable"
    );
    println!(
        "fork_join: sorted {n} u64s (checked against sort_unstable): serial quicksort {:.1} ms, under dreadpool::join on {} threads {:.1} ms, speedup {:.2}x",
        serial_time.as_secs_f64() * 1e3,
        pool.threads(),
        parallel_time.as_secs_f64() * 1e3,
        serial_time.as_secs_f64() / parallel_time.as_secs_f64()
    );
}
