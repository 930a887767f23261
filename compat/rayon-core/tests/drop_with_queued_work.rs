//! Dropping a pool does not wait (as in rayon), and everything spawned
//! into it before the drop still runs.

use rayon_core::ThreadPoolBuilder;
use std::sync::mpsc;
use std::time::Duration;

#[test]
fn a_pool_dropped_while_work_is_queued_runs_all_of_it() {
    const QUEUED: usize = 100;
    let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let (open_gate, gate) = mpsc::channel::<()>();
    let (finished, results) = mpsc::channel();
    // The only worker is held by this task until the gate opens, so every
    // task below is still queued when the pool is dropped.
    pool.spawn(move || gate.recv().unwrap());
    for i in 0..QUEUED {
        let finished = finished.clone();
        pool.spawn(move || {
            // A queued task may still spawn into its (dropped) pool.
            let finished_too = finished.clone();
            rayon_core::spawn(move || finished_too.send(QUEUED + i).unwrap());
            finished.send(i).unwrap();
        });
    }
    drop(finished);
    let (dropped, drop_returned) = mpsc::channel();
    std::thread::spawn(move || {
        drop(pool);
        dropped.send(()).unwrap();
    });
    // Not an ordering sleep: a bound on a failure that would otherwise hang.
    drop_returned
        .recv_timeout(Duration::from_secs(60))
        .expect("dropping the pool waited for its tasks; rayon's drop does not");
    open_gate.send(()).unwrap();
    let mut seen: Vec<usize> = results.iter().collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..2 * QUEUED).collect::<Vec<_>>());
}
