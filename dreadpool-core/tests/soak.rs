//! Soak: a mixed workload, round after round, for a bounded time. Outside
//! and inside spawns, scopes, handles, broadcasts, panics, joins from
//! several threads, pools created and dropped, and fork-join: random trees
//! of `dreadpool_core::join` whose halves join again, spawn, open scopes and
//! panic, started from `install`, from tasks and from scoped tasks. After
//! every round, every task and every forked closure ran exactly once and no
//! thread leaked.
//!
//! `cargo test --test soak` runs it for `DREADPOOL_SOAK_SECS` seconds (30 by
//! default); `cargo test --test soak -- --ignored` runs the 10-minute soak.

mod common;

use common::{settled_threads, HANG};
use dreadpool_core::{PanicPolicy, ThreadPool, ThreadPoolBuilder};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Every task of a round, by id: how many times it ran.
struct Ledger {
    runs: Vec<AtomicU8>,
    next: AtomicUsize,
}

impl Ledger {
    fn new(capacity: usize) -> Arc<Self> {
        Arc::new(Ledger {
            runs: (0..capacity).map(|_| AtomicU8::new(0)).collect(),
            next: AtomicUsize::new(0),
        })
    }
    /// A new task id, or `None` when the round's budget is spent.
    fn claim(&self) -> Option<usize> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        (id < self.runs.len()).then_some(id)
    }
    fn ran(&self, id: usize) {
        self.runs[id].fetch_add(1, Ordering::Relaxed);
    }
    /// Checks the round; returns how many tasks it ran.
    fn check(&self, round: usize) -> usize {
        let spawned = self.next.load(Ordering::Relaxed).min(self.runs.len());
        for (id, runs) in self.runs[..spawned].iter().enumerate() {
            let runs = runs.load(Ordering::Relaxed);
            assert_eq!(runs, 1, "round {round}: task {id} ran {runs} times");
        }
        spawned
    }
}

/// A task that records itself, maybe spawns children from inside the pool,
/// now and then forks a join tree, and now and then panics after doing so.
fn task(pool: Arc<ThreadPool>, ledger: Arc<Ledger>, id: usize, seed: u64) {
    ledger.ran(id);
    let mut rng = Rng(seed | 1);
    for _ in 0..rng.below(3) {
        let Some(child) = ledger.claim() else { break };
        let (p, l, s) = (Arc::clone(&pool), Arc::clone(&ledger), rng.next());
        pool.spawn(move || task(p, l, child, s));
    }
    if rng.below(16) == 0 {
        // A panic in the tree unwinds out of this task to the pool.
        fork(&pool, &ledger, rng.next(), 3);
    }
    if rng.below(40) == 0 {
        panic!("soak: planned panic in task {id}");
    }
}

/// Forked closures run so far, over every round.
static FORKED: AtomicUsize = AtomicUsize::new(0);

/// Joins two [`forked`] closures with fresh ids (one, run directly, if the
/// ledger has a single id left; nothing if none).
fn fork(pool: &Arc<ThreadPool>, ledger: &Arc<Ledger>, seed: u64, depth: u32) {
    let mut rng = Rng(seed | 1);
    let Some(a) = ledger.claim() else { return };
    let a_seed = rng.next();
    match ledger.claim() {
        Some(b) => {
            let b_seed = rng.next();
            dreadpool_core::join(
                || forked(pool, ledger, a, a_seed, depth),
                || forked(pool, ledger, b, b_seed, depth),
            );
        }
        None => forked(pool, ledger, a, a_seed, depth),
    }
}

/// A forked closure: records itself, then (while `depth` lasts) joins again,
/// spawns a task, or opens a scope whose two tasks fork; and now and then
/// panics after all that, which the join re-raises once both halves ran.
fn forked(pool: &Arc<ThreadPool>, ledger: &Arc<Ledger>, id: usize, seed: u64, depth: u32) {
    ledger.ran(id);
    FORKED.fetch_add(1, Ordering::Relaxed);
    let mut rng = Rng(seed | 1);
    if depth > 0 {
        match rng.below(4) {
            0 | 1 => fork(pool, ledger, rng.next(), depth - 1),
            2 => {
                if let Some(child) = ledger.claim() {
                    let (p, l, s) = (Arc::clone(pool), Arc::clone(ledger), rng.next());
                    pool.spawn(move || task(p, l, child, s));
                }
            }
            _ => {
                let seeds = [rng.next(), rng.next()];
                pool.scope(|s| {
                    for seed in seeds {
                        s.spawn(move || fork(pool, ledger, seed, depth - 1));
                    }
                });
            }
        }
    }
    if rng.below(24) == 0 {
        panic!("soak: planned panic in forked closure {id}");
    }
}

#[derive(Default)]
struct Totals {
    rounds: usize,
    tasks: usize,
    panics: usize,
}

fn round(number: usize, rng: &mut Rng, totals: &mut Totals) {
    let threads = 1 + rng.below(4) as usize;
    let policy = if rng.below(2) == 0 {
        PanicPolicy::Respawn
    } else {
        PanicPolicy::Continue
    };
    let prefix = format!("soak{}", number % 1000);
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .with_threads(threads)
            .with_thread_name(prefix.clone())
            .with_panic_policy(policy)
            .build(),
    );
    let ledger = Ledger::new(20_000);

    // Outside spawners, racing each other and the joiners.
    let spawners: Vec<_> = (0..2)
        .map(|s| {
            let (pool, ledger) = (Arc::clone(&pool), Arc::clone(&ledger));
            let seed = rng.next();
            thread::spawn(move || {
                let mut rng = Rng(seed | 1);
                for _ in 0..2_000 {
                    let Some(id) = ledger.claim() else { break };
                    let (p, l, s) = (Arc::clone(&pool), Arc::clone(&ledger), rng.next());
                    pool.spawn(move || task(p, l, id, s));
                }
                s
            })
        })
        .collect();
    let joiners: Vec<_> = (0..2)
        .map(|_| {
            let pool = Arc::clone(&pool);
            thread::spawn(move || assert!(pool.join_timeout(HANG), "join hung"))
        })
        .collect();

    // Handles, from outside and from inside.
    let handles: Vec<_> = (0..50)
        .map(|i| {
            let p = Arc::clone(&pool);
            pool.spawn_with_handle(move || {
                if i % 10 == 0 {
                    let inner = p.spawn_with_handle(move || i * 2);
                    return inner.join().expect("inner handle task does not panic");
                }
                if i % 17 == 0 {
                    panic!("soak: handle task {i} panics");
                }
                i * 2
            })
        })
        .collect();
    let mut handle_panics = 0;
    for (i, handle) in handles.into_iter().enumerate() {
        match handle.join() {
            Ok(value) => assert_eq!(value, i * 2),
            Err(_) => handle_panics += 1,
        }
    }
    assert_eq!(handle_panics, 2, "handle tasks 17 and 34 panic");

    // A scope from outside with nested scopes from inside.
    let mut sums = vec![0u64; 8];
    pool.scope(|s| {
        for (i, slot) in sums.iter_mut().enumerate() {
            let pool = &pool;
            s.spawn(move || {
                let mut halves = [0u64; 2];
                let (a, b) = halves.split_at_mut(1);
                pool.scope(|inner| {
                    inner.spawn(|| a[0] = i as u64);
                    inner.spawn(|| b[0] = 100);
                });
                *slot = halves[0] + halves[1];
            });
        }
    });
    assert_eq!(sums, (0..8).map(|i| i + 100).collect::<Vec<u64>>());

    // Fork-join trees from outside (through install) and from scoped tasks;
    // their own ledger, so the spawners' trees cannot use up its ids. A
    // panic in a tree comes back to the caller, once every closure ran.
    let forks = Ledger::new(4_000);
    for _ in 0..8 {
        let seed = rng.next();
        let _ = catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| fork(&pool, &forks, seed, 6))
        }));
    }
    let seeds = [rng.next(), rng.next()];
    let _ = catch_unwind(AssertUnwindSafe(|| {
        pool.scope(|s| {
            for seed in seeds {
                let (pool, forks) = (&pool, &forks);
                s.spawn(move || fork(pool, forks, seed, 6));
            }
        })
    }));

    // Every worker, once.
    let indices = pool.broadcast(|index| index);
    assert_eq!(indices, (0..threads).collect::<Vec<_>>());

    for spawner in spawners {
        spawner.join().unwrap();
    }
    for joiner in joiners {
        joiner.join().unwrap();
    }
    assert!(pool.join_timeout(HANG), "round {number}: join hung");
    totals.tasks += ledger.check(number) + forks.check(number) + 50 + 8 * 3 + threads;
    totals.panics += pool.panic_count();
    // Drop the pool (the last reference) and check its threads are gone.
    let pool = Arc::into_inner(pool).expect("only the test holds the pool now");
    drop(pool);
    assert_eq!(
        settled_threads(&format!("{prefix}-"), 0),
        0,
        "round {number}: threads leaked"
    );
    totals.rounds += 1;
}

/// Keeps the planned panics out of the output (thousands of backtraces would
/// slow the soak to a crawl); any other panic still reports as usual.
fn quiet_planned_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let planned = info
            .payload()
            .downcast_ref::<String>()
            .is_some_and(|m| m.starts_with("soak: "));
        if !planned {
            default(info);
        }
    }));
}

fn soak(duration: Duration) {
    quiet_planned_panics();
    let deadline = Instant::now() + duration;
    let mut rng = Rng(0x50a4_5eed);
    let mut totals = Totals::default();
    let mut number = 0;
    while Instant::now() < deadline {
        round(number, &mut rng, &mut totals);
        number += 1;
    }
    let forked = FORKED.load(Ordering::Relaxed);
    eprintln!(
        "soak: {} rounds, {} tasks run ({forked} of them forked closures), {} task panics injected, 0 tasks lost, 0 threads leaked",
        totals.rounds, totals.tasks, totals.panics
    );
    assert!(totals.rounds > 0);
    assert!(forked > 0, "no join ran");
}

#[test]
fn soak_for_a_bounded_time() {
    let secs = std::env::var("DREADPOOL_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    soak(Duration::from_secs(secs));
}

#[test]
#[ignore = "ten minutes; run with --ignored"]
fn soak_for_ten_minutes() {
    soak(Duration::from_secs(600));
}
