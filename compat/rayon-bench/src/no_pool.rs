//! The same work as a scenario, spread over plain threads with no pool at
//! all: a bound on what any pool could give.
//!
//! The threads are started once, before the timing, and wait at a barrier
//! between repetitions, as a pool's idle workers sleep. A repetition hands
//! them one shared iterator of pieces under a lock; each takes pieces until
//! it runs dry (self-scheduling: a thread the machine descheduled takes
//! fewer, as with work stealing), and a second barrier ends it. Nothing is
//! stolen, and each thread is woken once. What is left is the work itself,
//! one wake per thread, and what the machine gives the threads doing it
//! (memory bandwidth, a shared lock). A pool cannot do much better: where
//! this time is near rayon's own, no pool can be much faster than rayon.
//! `ab.py --no-pool` prints it beside the two.

use crate::scenarios::{mix, Input, Scenario, BRIDGE_ITEMS};
use std::mem::MaybeUninit;
use std::ops::Range;
use std::slice::{Chunks, ChunksMut};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Pieces a vector is cut into: enough for one thread to pick up the
/// slack of a descheduled one, few enough that taking them costs nothing.
const PIECES: usize = 64;

/// One repetition's work, taken piece by piece.
enum Job<'a> {
    /// Between repetitions.
    Idle,
    /// Sum the pieces.
    Sum(Chunks<'a, u64>),
    /// Map each piece into its slots of the output.
    Map(std::iter::Zip<Chunks<'a, u64>, ChunksMut<'a, MaybeUninit<u64>>>),
    /// Mix each item of the stream, one at a time (rayon's par_bridge).
    Bridge(Range<u64>),
}

/// What one piece of a job is.
enum Piece<'a> {
    Sum(&'a [u64]),
    Map(&'a [u64], &'a mut [MaybeUninit<u64>]),
    Item(u64),
}

impl<'a> Job<'a> {
    fn next(&mut self) -> Option<Piece<'a>> {
        match self {
            Job::Idle => None,
            Job::Sum(parts) => parts.next().map(Piece::Sum),
            Job::Map(parts) => parts.next().map(|(from, to)| Piece::Map(from, to)),
            Job::Bridge(items) => items.next().map(Piece::Item),
        }
    }
}

/// What the threads share.
struct Shared<'a> {
    job: Mutex<Job<'a>>,
    total: AtomicU64,
    start: Barrier,
    end: Barrier,
    stop: AtomicBool,
}

/// A thread's part of each repetition, until told to stop.
fn work(shared: &Shared<'_>) {
    loop {
        shared.start.wait();
        if shared.stop.load(Ordering::Relaxed) {
            return;
        }
        let mut total = 0u64;
        loop {
            // The guard is dropped at the end of the statement, so the lock
            // is held only to take the next piece.
            let piece = shared.job.lock().expect("no thread panics").next();
            match piece {
                None => break,
                Some(Piece::Sum(part)) => {
                    total = total.wrapping_add(part.iter().map(|&x| x >> 8).sum::<u64>());
                }
                Some(Piece::Map(from, to)) => {
                    for (x, y) in from.iter().zip(to) {
                        y.write(x.wrapping_mul(3) ^ 1);
                    }
                }
                Some(Piece::Item(item)) => total = total.wrapping_add(mix(item)),
            }
        }
        shared.total.fetch_add(total, Ordering::Relaxed);
        shared.end.wait();
    }
}

/// Times `reps` repetitions of `scenario` without a pool (after one
/// untimed warm-up), checking each result; `None` where the scenario has no
/// no-pool form.
pub fn time(scenario: Scenario, input: &Input, reps: usize) -> Option<Vec<Duration>> {
    let work_of = |input: &Input| match input {
        Input::Numbers { work, .. } => Some(work.clone()),
        _ => None,
    };
    let numbers = work_of(input);
    let (len, piece) = match (scenario, &numbers) {
        (Scenario::Sum | Scenario::MapCollect, Some(n)) => (n.len(), n.len().div_ceil(PIECES)),
        (Scenario::Bridge, _) => (0, 0),
        _ => return None,
    };
    let numbers = numbers.unwrap_or_default();
    // map_collect's outputs, one per run, allocated (not touched) up front
    // so that the threads can borrow them for the whole scope; the writes
    // fault their pages in, inside the timing, as a collect's do.
    let mut outputs: Vec<Vec<u64>> = (0..=reps).map(|_| Vec::with_capacity(len)).collect();
    let threads = thread::available_parallelism().map_or(1, |n| n.get());
    let shared = Shared {
        job: Mutex::new(Job::Idle),
        total: AtomicU64::new(0),
        start: Barrier::new(threads + 1),
        end: Barrier::new(threads + 1),
        stop: AtomicBool::new(false),
    };
    let mut times = Vec::with_capacity(reps);
    thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| work(&shared));
        }
        for (run, output) in outputs.iter_mut().enumerate() {
            *shared.job.lock().expect("no thread panics") = match scenario {
                Scenario::Sum => Job::Sum(numbers.chunks(piece)),
                Scenario::MapCollect => Job::Map(
                    numbers
                        .chunks(piece)
                        .zip(output.spare_capacity_mut()[..len].chunks_mut(piece)),
                ),
                _ => Job::Bridge(0..BRIDGE_ITEMS),
            };
            shared.total.store(0, Ordering::Relaxed);
            let t = Instant::now();
            shared.start.wait();
            shared.end.wait();
            let took = t.elapsed();
            if run > 0 {
                times.push(took);
            }
            check(scenario, &numbers, shared.total.load(Ordering::Relaxed));
        }
        shared.stop.store(true, Ordering::Relaxed);
        shared.start.wait();
    });
    for output in &mut outputs {
        if scenario == Scenario::MapCollect {
            // SAFETY: every run's pieces covered the first `len` slots of
            // its output's capacity and wrote each of them in full.
            unsafe { output.set_len(len) };
            assert!(numbers
                .iter()
                .zip(output.iter())
                .all(|(&x, &y)| y == x.wrapping_mul(3) ^ 1));
        }
    }
    Some(times)
}

/// Checks a sum (map_collect's outputs are checked after the threads end).
fn check(scenario: Scenario, numbers: &[u64], total: u64) {
    match scenario {
        Scenario::Sum => assert_eq!(total, numbers.iter().map(|&x| x >> 8).sum::<u64>()),
        Scenario::Bridge => {
            assert_eq!(total, (0..BRIDGE_ITEMS).map(mix).fold(0, u64::wrapping_add))
        }
        _ => {}
    }
}
