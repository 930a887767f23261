//! Fixed log-scaled latency histograms: atomic buckets on the recording side,
//! plain snapshots on the reading side. No allocation and no lock when
//! recording.
//!
//! Buckets are log-linear, like HdrHistogram's: values below 8 ns have a
//! bucket each; above, every power of two is split into 8 equal sub-buckets,
//! so a bucket is at most 1/8 = 12.5% wide relative to its lower bound and a
//! quantile read at a bucket's midpoint is within about 6% of the true value.
//! Values above [`LatencyHistogram::MAX`] (about 73 minutes) are clamped
//! into the last bucket and counted as outliers.

use crate::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const SUB_BITS: u32 = 3;
const SUB: usize = 1 << SUB_BITS;
/// Highest power of two covered (2^42 ns is about 73 minutes).
const MAX_EXPONENT: u32 = 42;
/// Number of buckets.
pub(crate) const BUCKETS: usize = SUB + (MAX_EXPONENT as usize - SUB_BITS as usize + 1) * SUB;

fn bucket_of(nanos: u64) -> usize {
    if nanos < SUB as u64 {
        return nanos as usize;
    }
    let exponent = 63 - nanos.leading_zeros();
    if exponent > MAX_EXPONENT {
        return BUCKETS - 1;
    }
    let sub = ((nanos >> (exponent - SUB_BITS)) as usize) & (SUB - 1);
    SUB + (exponent - SUB_BITS) as usize * SUB + sub
}

/// `[lower, upper)` of bucket `index`, in nanoseconds.
fn bounds_of(index: usize) -> (u64, u64) {
    if index < SUB {
        return (index as u64, index as u64 + 1);
    }
    let exponent = (index - SUB) / SUB + SUB_BITS as usize;
    let sub = ((index - SUB) % SUB) as u64;
    let width = 1u64 << (exponent - SUB_BITS as usize);
    let lower = (SUB as u64 + sub) * width;
    (lower, lower + width)
}

/// The recording side: one writer (the worker that owns it), many readers.
pub(crate) struct AtomicHistogram {
    buckets: Box<[AtomicU64]>,
    outliers: AtomicU64,
}

impl AtomicHistogram {
    pub(crate) fn new() -> Self {
        AtomicHistogram {
            buckets: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            outliers: AtomicU64::new(0),
        }
    }

    /// Records one value. Single writer: a plain load and store.
    pub(crate) fn record(&self, value: Duration) {
        let nanos = u64::try_from(value.as_nanos()).unwrap_or(u64::MAX);
        if nanos >= LatencyHistogram::MAX_NANOS {
            let o = &self.outliers;
            o.store(o.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        }
        let bucket = &self.buckets[bucket_of(nanos)];
        bucket.store(bucket.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> LatencyHistogram {
        LatencyHistogram {
            counts: self
                .buckets
                .iter()
                .map(|b| b.load(Ordering::Relaxed))
                .collect(),
            outliers: self.outliers.load(Ordering::Relaxed),
        }
    }
}

/// A snapshot of a latency histogram: counts in fixed log-scaled buckets
/// (see the module docs for their resolution).
///
/// Counts are monotonic over a pool's life; subtract an earlier snapshot
/// ([`since`](Self::since)) for an interval's distribution.
///
/// ```
/// use dreadpool::LatencyHistogram;
/// use std::time::Duration;
///
/// let mut h = LatencyHistogram::default();
/// for micros in 1..=100 {
///     h.record(Duration::from_micros(micros));
/// }
/// assert_eq!(h.count(), 100);
/// let p50 = h.quantile(0.5).as_secs_f64() * 1e6;
/// assert!((p50 - 50.0).abs() / 50.0 < 0.07, "{p50}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatencyHistogram {
    counts: Box<[u64]>,
    outliers: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            counts: vec![0; BUCKETS].into_boxed_slice(),
            outliers: 0,
        }
    }
}

impl LatencyHistogram {
    /// Values at or above this are clamped into the last bucket and counted
    /// in [`outliers`](Self::outliers).
    pub const MAX: Duration = Duration::from_nanos(Self::MAX_NANOS);
    const MAX_NANOS: u64 = 1 << (MAX_EXPONENT + 1);

    /// Records one value (for building histograms outside the pool, and in
    /// tests).
    pub fn record(&mut self, value: Duration) {
        let nanos = u64::try_from(value.as_nanos()).unwrap_or(u64::MAX);
        if nanos >= Self::MAX_NANOS {
            self.outliers += 1;
        }
        self.counts[bucket_of(nanos)] += 1;
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Values that were at or above [`MAX`](Self::MAX) and were clamped.
    pub fn outliers(&self) -> u64 {
        self.outliers
    }

    /// The value at quantile `q` (0.0 to 1.0), read at its bucket's midpoint;
    /// zero for an empty histogram.
    pub fn quantile(&self, q: f64) -> Duration {
        let total = self.count();
        if total == 0 {
            return Duration::ZERO;
        }
        let q = if q.is_nan() { 0.0 } else { q.clamp(0.0, 1.0) };
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for (index, &count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                let (lower, upper) = bounds_of(index);
                return Duration::from_nanos(lower + (upper - lower) / 2);
            }
        }
        Duration::ZERO
    }

    /// The upper bound of the highest non-empty bucket; zero when empty.
    pub fn max(&self) -> Duration {
        self.counts
            .iter()
            .rposition(|&c| c > 0)
            .map_or(Duration::ZERO, |i| Duration::from_nanos(bounds_of(i).1))
    }

    /// The mean, from bucket midpoints; zero when empty.
    pub fn mean(&self) -> Duration {
        let total = self.count();
        if total == 0 {
            return Duration::ZERO;
        }
        let sum: f64 = self
            .buckets()
            .map(|(lower, upper, count)| {
                (lower.as_nanos() as f64 + upper.as_nanos() as f64) / 2.0 * count as f64
            })
            .sum();
        Duration::from_nanos((sum / total as f64) as u64)
    }

    /// The non-empty buckets as `(lower, upper, count)`, lower inclusive,
    /// upper exclusive, in increasing order.
    pub fn buckets(&self) -> impl Iterator<Item = (Duration, Duration, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &count)| count > 0)
            .map(|(index, &count)| {
                let (lower, upper) = bounds_of(index);
                (
                    Duration::from_nanos(lower),
                    Duration::from_nanos(upper),
                    count,
                )
            })
    }

    /// Adds `other`'s counts to this one (to merge workers).
    pub fn merge(&mut self, other: &LatencyHistogram) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts.iter()) {
            *mine += theirs;
        }
        self.outliers += other.outliers;
    }

    /// The values recorded since `earlier`, an older snapshot of the same
    /// histogram.
    pub fn since(&self, earlier: &LatencyHistogram) -> LatencyHistogram {
        LatencyHistogram {
            counts: self
                .counts
                .iter()
                .zip(earlier.counts.iter())
                .map(|(now, then)| now.saturating_sub(*then))
                .collect(),
            outliers: self.outliers.saturating_sub(earlier.outliers),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_range_without_gaps() {
        let mut expected_lower = 0;
        for index in 0..BUCKETS {
            let (lower, upper) = bounds_of(index);
            assert_eq!(lower, expected_lower, "bucket {index}");
            assert!(upper > lower);
            assert_eq!(bucket_of(lower), index);
            assert_eq!(bucket_of(upper - 1), index);
            expected_lower = upper;
        }
        assert_eq!(expected_lower, LatencyHistogram::MAX_NANOS);
    }

    #[test]
    fn bucket_width_is_at_most_an_eighth_of_its_lower_bound() {
        for index in SUB..BUCKETS {
            let (lower, upper) = bounds_of(index);
            assert!(
                (upper - lower) * 8 <= lower,
                "bucket {index}: {lower}..{upper}"
            );
        }
    }

    #[test]
    fn quantiles_of_a_uniform_distribution() {
        let mut h = LatencyHistogram::default();
        for micros in 1..=10_000 {
            h.record(Duration::from_micros(micros));
        }
        for q in [0.5, 0.9, 0.99, 0.999] {
            let got = h.quantile(q).as_secs_f64() * 1e6;
            let want = q * 10_000.0;
            assert!((got - want).abs() / want < 0.07, "q{q}: {got} vs {want}");
        }
        assert!(h.max() >= Duration::from_millis(10));
        assert_eq!(h.count(), 10_000);
    }

    #[test]
    fn huge_values_are_clamped_and_counted() {
        let mut h = LatencyHistogram::default();
        h.record(Duration::from_secs(86_400));
        h.record(Duration::MAX);
        assert_eq!(h.outliers(), 2);
        assert_eq!(h.count(), 2);
        assert_eq!(h.max(), LatencyHistogram::MAX);
    }

    #[test]
    fn empty_histograms_give_zero_not_nan() {
        let h = LatencyHistogram::default();
        assert_eq!(h.quantile(0.99), Duration::ZERO);
        assert_eq!(h.mean(), Duration::ZERO);
        assert_eq!(h.max(), Duration::ZERO);
        assert_eq!(h.quantile(f64::NAN), Duration::ZERO);
    }

    #[test]
    fn since_and_merge_are_inverse() {
        let atomic = AtomicHistogram::new();
        atomic.record(Duration::from_micros(3));
        let first = atomic.snapshot();
        atomic.record(Duration::from_micros(30));
        atomic.record(Duration::from_micros(300));
        let second = atomic.snapshot();
        let delta = second.since(&first);
        assert_eq!(delta.count(), 2);
        let mut merged = first.clone();
        merged.merge(&delta);
        assert_eq!(merged, second);
    }
}
