//! The recorder's clock: raw CPU timestamp counter ticks on x86-64, turned
//! into nanoseconds only when a recording is taken.
//!
//! Why the TSC: an event must cost a few nanoseconds, and a clock read is
//! most of that. `rdtsc` is one instruction whose latency overlaps the
//! stores around it, while `Instant::now` goes through the vDSO's sequence
//! lock (`BENCHMARKS.md`, "Core design figures": recorder-clock-tsc).
//! The counter is the kernel's clocksource there (`constant_tsc`,
//! `nonstop_tsc`): it runs at one rate on every core, so readings on
//! different workers compare.
//!
//! Ticks become nanoseconds at dump time, from two anchors: one taken when
//! the first recorder of the process starts (a tick count and an `Instant`
//! together) and one taken at the dump. The rate between them is the
//! measured tick rate over the whole interval, so it gets more precise the
//! longer the process runs; below 10 ms of baseline the dump waits until
//! there are 10 ms (once per process, and only when a recording is taken
//! that early). Elsewhere (not x86-64) the clock is `Instant` in
//! nanoseconds since the anchor, and the conversion is the identity.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The process-wide anchor: a tick count and the instant it was read at.
struct Anchor {
    ticks: u64,
    instant: Instant,
}

static ANCHOR: OnceLock<Anchor> = OnceLock::new();

fn anchor() -> &'static Anchor {
    ANCHOR.get_or_init(|| Anchor {
        ticks: raw_ticks(),
        instant: Instant::now(),
    })
}

/// Starts the clock (takes the anchor) if nothing has yet.
pub(crate) fn start() {
    anchor();
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn raw_ticks() -> u64 {
    // SAFETY: `rdtsc` has no preconditions on x86-64 (every x86-64 CPU has
    // it); it reads a counter and touches no memory.
    #[allow(unused_unsafe)]
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn raw_ticks() -> u64 {
    // Nanoseconds since the anchor (0 while the anchor itself is taken).
    ANCHOR.get().map_or(0, |a| {
        u64::try_from(a.instant.elapsed().as_nanos()).unwrap_or(u64::MAX)
    })
}

/// Now, in ticks.
#[inline(always)]
pub(crate) fn now() -> u64 {
    raw_ticks()
}

/// Converts ticks to nanoseconds since the process's recorder anchor.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Conversion {
    anchor_ticks: u64,
    nanos_per_tick: f64,
}

impl Conversion {
    /// The conversion as of now (see the module docs).
    pub(crate) fn measure() -> Self {
        let anchor = anchor();
        if cfg!(not(target_arch = "x86_64")) {
            return Conversion {
                anchor_ticks: 0,
                nanos_per_tick: 1.0,
            };
        }
        let baseline = Duration::from_millis(10);
        let waited = anchor.instant.elapsed();
        if waited < baseline {
            std::thread::sleep(baseline - waited);
        }
        let (ticks, elapsed) = (raw_ticks(), anchor.instant.elapsed());
        let spanned = ticks.saturating_sub(anchor.ticks).max(1);
        Conversion {
            anchor_ticks: anchor.ticks,
            nanos_per_tick: elapsed.as_nanos() as f64 / spanned as f64,
        }
    }

    /// `ticks` as nanoseconds since the anchor (0 for readings before it).
    pub(crate) fn nanos(&self, ticks: u64) -> u64 {
        (ticks.saturating_sub(self.anchor_ticks) as f64 * self.nanos_per_tick) as u64
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn ticks_convert_to_elapsed_time() {
        start();
        let conversion = Conversion::measure();
        let (before, started) = (now(), Instant::now());
        std::thread::sleep(Duration::from_millis(20));
        let (after, took) = (now(), started.elapsed());
        let measured = conversion.nanos(after) - conversion.nanos(before);
        let real = took.as_nanos() as f64;
        // Within 20%: the rate is measured over a short baseline here.
        assert!(
            (measured as f64 - real).abs() < real * 0.2,
            "measured {measured} ns for {real} ns"
        );
    }
}
