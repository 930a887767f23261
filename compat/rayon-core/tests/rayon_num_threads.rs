//! `RAYON_NUM_THREADS` sizes the global pool (and pools built with no
//! thread count), over dreadpool's own `DREADPOOL_THREADS`; checked in a
//! child process, whose environment is its own.

use std::process::Command;

/// Runs the ignored test `name` of this binary in a child process with
/// `vars` set, and says whether it passed.
fn child_passes(name: &str, vars: &[(&str, &str)]) -> bool {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args(["--ignored", "--exact", name, "--nocapture"]);
    command
        .env_remove("RAYON_NUM_THREADS")
        .env_remove("RAYON_RS_NUM_CPUS");
    for (key, value) in vars {
        command.env(key, value);
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    // Guard against a child that ran nothing (a renamed test).
    assert!(
        stdout.contains("1 passed") || !output.status.success(),
        "{stdout}"
    );
    output.status.success()
}

#[test]
fn rayon_num_threads_is_honoured() {
    assert!(child_passes(
        "child_sees_three_threads",
        &[("RAYON_NUM_THREADS", "3"), ("DREADPOOL_THREADS", "5")]
    ));
    // RAYON_RS_NUM_CPUS when RAYON_NUM_THREADS is not set, as rayon does.
    assert!(child_passes(
        "child_sees_three_threads",
        &[("RAYON_RS_NUM_CPUS", "3")]
    ));
    // And the check can fail: with another count it does.
    assert!(!child_passes(
        "child_sees_three_threads",
        &[("RAYON_NUM_THREADS", "4")]
    ));
}

#[test]
#[ignore = "run by rayon_num_threads_is_honoured in a child process"]
fn child_sees_three_threads() {
    assert_eq!(rayon_core::current_num_threads(), 3);
    assert_eq!(rayon_core::broadcast(|context| context.index()), [0, 1, 2]);
    let pool = rayon_core::ThreadPoolBuilder::new().build().unwrap();
    assert_eq!(pool.current_num_threads(), 3);
}
