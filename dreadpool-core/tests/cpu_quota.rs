//! `with_threads(0)` sizes the pool from the CPUs this process may use (its
//! affinity mask and its cgroup's CPU quota), not the host's core count.
//! Checked with a real affinity mask: the test re-runs itself under
//! `taskset`.

use dreadpool_core::ThreadPoolBuilder;
use std::process::Command;

/// The child half: prints the default pool's thread count.
#[test]
fn default_threads_child() {
    if std::env::var_os("DREADPOOL_QUOTA_CHILD").is_none() {
        return;
    }
    let pool = ThreadPoolBuilder::new().build();
    println!("\nDEFAULT_THREADS={}", pool.threads());
}

fn default_threads_under(cpus: &str) -> Option<usize> {
    let output = Command::new("taskset")
        .args(["-c", cpus])
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "default_threads_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("DREADPOOL_QUOTA_CHILD", "1")
        .env_remove("DREADPOOL_THREADS")
        .output()
        .ok()?;
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .find_map(|l| l.split("DEFAULT_THREADS=").nth(1))
        .map(|n| n.trim().parse().unwrap())
}

#[test]
fn the_default_follows_the_affinity_mask() {
    if Command::new("taskset").arg("-V").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "taskset (util-linux) is missing on CI"
        );
        eprintln!("SKIPPED: taskset is not installed");
        return;
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(default_threads_under("0"), Some(1), "pinned to one CPU");
    if cpus >= 2 {
        assert_eq!(default_threads_under("0,1"), Some(2), "pinned to two CPUs");
    }
}
