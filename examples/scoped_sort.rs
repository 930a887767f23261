//! A parallel merge sort of a borrowed `&mut [u64]` through nested scopes.
//!
//! `cargo run --release --example scoped_sort [ELEMENTS]` (default
//! 10,000,000) sorts the same data twice, with `slice::sort_unstable` on one
//! thread and with the pool, checks both agree, and prints the speedup.
//!
//! Halves are sorted in parallel scopes down to leaves that `sort_unstable`
//! handles, then merged in parallel too (each merge splits at the median of
//! the longer run and a binary search in the shorter one), so that no
//! sequential O(n) pass is left at the top to cap the speedup.

use dreadpool::{ThreadPool, ThreadPoolBuilder};
use std::time::Instant;

/// Merges and copies at or below this length run sequentially.
const LEAF: usize = 64 * 1024;

/// Sorts `v`, using `buf` (as long as `v`) as scratch space. Runs of `leaf`
/// elements or fewer go to `sort_unstable`.
fn merge_sort(pool: &ThreadPool, v: &mut [u64], buf: &mut [u64], leaf: usize) {
    if v.len() <= leaf {
        v.sort_unstable();
        return;
    }
    let mid = v.len() / 2;
    {
        let (left, right) = v.split_at_mut(mid);
        let (buf_left, buf_right) = buf.split_at_mut(mid);
        pool.scope(|s| {
            s.spawn(|| merge_sort(pool, left, buf_left, leaf));
            s.spawn(|| merge_sort(pool, right, buf_right, leaf));
        });
    }
    let (left, right) = v.split_at(mid);
    merge(pool, left, right, buf);
    copy(pool, buf, v);
}

/// Merges the sorted runs `a` and `b` into `out`.
fn merge(pool: &ThreadPool, a: &[u64], b: &[u64], out: &mut [u64]) {
    let (a, b) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    if a.len() + b.len() <= LEAF || b.is_empty() {
        let (mut i, mut j) = (0, 0);
        for slot in out.iter_mut() {
            if j >= b.len() || (i < a.len() && a[i] <= b[j]) {
                *slot = a[i];
                i += 1;
            } else {
                *slot = b[j];
                j += 1;
            }
        }
        return;
    }
    let split_a = a.len() / 2;
    let split_b = b.partition_point(|&x| x < a[split_a]);
    let (out_left, out_right) = out.split_at_mut(split_a + split_b);
    pool.scope(|s| {
        s.spawn(|| merge(pool, &a[..split_a], &b[..split_b], out_left));
        s.spawn(|| merge(pool, &a[split_a..], &b[split_b..], out_right));
    });
}

/// Copies `from` into `to` in parallel chunks.
fn copy(pool: &ThreadPool, from: &[u64], to: &mut [u64]) {
    pool.scope(|s| {
        for (from, to) in from.chunks(LEAF).zip(to.chunks_mut(LEAF)) {
            s.spawn(move || to.copy_from_slice(from));
        }
    });
}

fn main() {
    let n: usize = match std::env::args().nth(1) {
        None => 10_000_000,
        Some(arg) => match arg.parse() {
            Ok(n) => n,
            Err(_) => {
                eprintln!("usage: scoped_sort [ELEMENTS]  (got {arg:?})");
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

    let mut sequential = data.clone();
    let start = Instant::now();
    sequential.sort_unstable();
    let one_thread = start.elapsed();

    let pool = ThreadPoolBuilder::new().build();
    let mut parallel = data;
    let start = Instant::now();
    let mut scratch = vec![0; n];
    // One leaf per thread: each level of merging is another pass over all
    // the data, and leaves this size keep every thread busy.
    let leaf = n.div_ceil(pool.threads()).max(LEAF);
    merge_sort(&pool, &mut parallel, &mut scratch, leaf);
    let pooled = start.elapsed();

    assert!(
        parallel == sequential,
        "the parallel sort disagrees with sort_unstable"
    );
    println!(
        "sorted {n} u64s: sort_unstable on 1 thread {:.1} ms, dreadpool scopes on {} threads {:.1} ms, speedup {:.2}x",
        one_thread.as_secs_f64() * 1e3,
        pool.threads(),
        pooled.as_secs_f64() * 1e3,
        one_thread.as_secs_f64() / pooled.as_secs_f64()
    );
}
