//! The dashboard's own CPU use: the time its UI thread spent on a CPU over
//! wall time, from `/proc/thread-self/schedstat` (nanoseconds) or, where
//! that is missing, `/proc/thread-self/stat` (`utime + stime`, in clock
//! ticks of 10 ms). Linux only; elsewhere it reads as unknown.

use std::time::{Duration, Instant};

/// CPU time of the calling thread so far.
pub fn thread_cpu_time() -> Option<Duration> {
    if let Ok(text) = std::fs::read_to_string("/proc/thread-self/schedstat") {
        if let Some(ns) = text.split_whitespace().next().and_then(|v| v.parse().ok()) {
            return Some(Duration::from_nanos(ns));
        }
    }
    let text = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold
    // spaces: utime and stime are fields 14 and 15 of the whole line.
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Measures the calling thread's CPU share over windows of at least
/// `window`.
#[derive(Debug)]
pub struct CpuMeter {
    window: Duration,
    since: Instant,
    cpu_at_since: Option<Duration>,
    started: Instant,
    cpu_at_start: Option<Duration>,
    last: Option<f64>,
}

impl CpuMeter {
    /// Starts measuring (call from the thread to measure).
    pub fn new(window: Duration) -> Self {
        let cpu = thread_cpu_time();
        let now = Instant::now();
        CpuMeter {
            window,
            since: now,
            cpu_at_since: cpu,
            started: now,
            cpu_at_start: cpu,
            last: None,
        }
    }

    /// The share of one CPU used over the last complete window (0.0 to 1.0),
    /// updated when a window has passed; `None` until then or off Linux.
    pub fn poll(&mut self) -> Option<f64> {
        let elapsed = self.since.elapsed();
        if elapsed >= self.window {
            let now = thread_cpu_time();
            if let (Some(a), Some(b)) = (self.cpu_at_since, now) {
                self.last = Some(b.saturating_sub(a).as_secs_f64() / elapsed.as_secs_f64());
            }
            self.since = Instant::now();
            self.cpu_at_since = now;
        }
        self.last
    }

    /// The share of one CPU used since [`new`](Self::new).
    pub fn overall(&self) -> Option<f64> {
        let elapsed = self.started.elapsed().as_secs_f64();
        let used = thread_cpu_time()?.saturating_sub(self.cpu_at_start?);
        (elapsed > 0.0).then(|| used.as_secs_f64() / elapsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spinning_thread_reads_as_busy() {
        let Some(_) = thread_cpu_time() else {
            return; // not Linux
        };
        let mut meter = CpuMeter::new(Duration::from_millis(50));
        let end = Instant::now() + Duration::from_millis(80);
        while Instant::now() < end {
            std::hint::spin_loop();
        }
        let share = meter.poll().expect("a window passed");
        // A shared, loaded machine may run us only part of the time.
        assert!(share > 0.05 && share <= 1.05, "{share}");
        assert!(meter.overall().unwrap() > 0.05);
    }
}
