//! What the OS says about this process: CPU time and resident memory.

use std::time::Duration;

/// User plus system CPU time consumed so far by every thread of this
/// process (`getrusage(RUSAGE_SELF)`).
pub fn cpu_time() -> Duration {
    // SAFETY: `rusage` is plain old data, valid when zeroed, and
    // `getrusage` only writes into the struct we pass.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) != 0 {
            return Duration::ZERO;
        }
        usage
    };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// How many CPUs' worth of time *other* processes used over `window`: the
/// machine's busy time from `/proc/stat` minus this process's own CPU time.
/// `None` where there is no procfs.
pub fn background_load(window: Duration) -> Option<f64> {
    fn busy_and_total() -> Option<(u64, u64)> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let line = stat.lines().find(|l| l.starts_with("cpu "))?;
        let fields: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .filter_map(|f| f.parse().ok())
            .collect();
        let total: u64 = fields.iter().take(8).sum();
        // idle and iowait
        let idle = fields.get(3)? + fields.get(4).copied().unwrap_or(0);
        Some((total - idle, total))
    }
    // SAFETY: `sysconf` only reads a configuration value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let ticks = if ticks > 0 { ticks as f64 } else { 100.0 };
    let (busy0, _) = busy_and_total()?;
    let (own0, wall0) = (cpu_time(), std::time::Instant::now());
    std::thread::sleep(window);
    let (busy1, _) = busy_and_total()?;
    let (own, wall) = (cpu_time() - own0, wall0.elapsed());
    let busy = (busy1.saturating_sub(busy0)) as f64 / ticks;
    Some(((busy - own.as_secs_f64()) / wall.as_secs_f64()).max(0.0))
}

/// The 1-minute load average, from `/proc/loadavg`.
pub fn loadavg() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Resident memory of this process now and at its peak, in bytes, from
/// `/proc/self/status` (`VmRSS`, `VmHWM`). `None` where there is no procfs.
pub fn rss() -> Option<Rss> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kib: u64 = line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kib * 1024)
    };
    Some(Rss {
        current: field("VmRSS:")?,
        peak: field("VmHWM:")?,
    })
}

/// Resident set sizes, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rss {
    /// `VmRSS`: resident now.
    pub current: u64,
    /// `VmHWM`: the most ever resident.
    pub peak: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work() {
        let before = cpu_time();
        let mut x = 1u64;
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_millis(30) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        assert!(cpu_time() > before);
    }

    #[test]
    fn rss_is_plausible() {
        if let Some(rss) = rss() {
            assert!(rss.current > 0);
            assert!(rss.peak >= rss.current);
        }
    }
}
