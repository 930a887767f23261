//! Quantiles with `hdrhistogram`: latency distributions rebuilt from the
//! core's bucket counts, and distributions of sampled gauges (queue depths,
//! steal batch sizes).
//!
//! Every histogram here is bounded (`Histogram::new_with_max`): memory is
//! fixed, and a value above the bound is clamped to it and counted in
//! `outliers`, never dropped and never a reason to grow (console-subscriber
//! does the same).

use crate::nanos;
use crate::snapshot::HistogramSnapshot;
use dreadpool_core::LatencyHistogram;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Two significant digits: 1% resolution, finer than the core's buckets
/// (12.5% wide), in about 40 KiB per latency histogram.
const SIGFIG: u8 = 2;

/// Largest queue depth the depth distributions track; deeper samples are
/// clamped and counted as outliers.
pub const MAX_TRACKED_DEPTH: u64 = 1 << 24;

/// Largest steal batch the batch-size distribution tracks.
pub const MAX_TRACKED_BATCH: u64 = 1 << 16;

fn bounded(max: u64) -> Histogram<u64> {
    // The bounds are constants that satisfy `new_with_max`'s conditions
    // (max >= 2, sigfig <= 5); the unit tests build every one of them.
    Histogram::new_with_max(max, SIGFIG).expect("constant histogram bounds are valid")
}

/// Quantiles of a latency distribution (schedule delay or run time).
///
/// All zero for an empty distribution. Serialised with integer-nanosecond
/// fields (`p50_ns`, ..., `max_ns`, `mean_ns`).
///
/// ```
/// use dreadpool_metrics::{HistogramSnapshot, Quantiles};
/// use std::time::Duration;
///
/// let mut h = HistogramSnapshot::default();
/// for micros in 1..=1000 {
///     h.record_n(Duration::from_micros(micros), 1);
/// }
/// let q = Quantiles::of(&h);
/// assert_eq!(q.count, 1000);
/// let p50 = q.p50.as_secs_f64() * 1e6;
/// assert!((p50 - 500.0).abs() < 40.0, "{p50}");
/// assert!(q.p50 <= q.p90 && q.p90 <= q.p99 && q.p99 <= q.p999 && q.p999 <= q.max);
/// assert_eq!(Quantiles::of(&HistogramSnapshot::default()), Quantiles::default());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Quantiles {
    /// Values in the distribution.
    pub count: u64,
    /// Median.
    #[serde(rename = "p50_ns", with = "nanos")]
    pub p50: Duration,
    /// 90th percentile.
    #[serde(rename = "p90_ns", with = "nanos")]
    pub p90: Duration,
    /// 99th percentile.
    #[serde(rename = "p99_ns", with = "nanos")]
    pub p99: Duration,
    /// 99.9th percentile.
    #[serde(rename = "p999_ns", with = "nanos")]
    pub p999: Duration,
    /// Largest value.
    #[serde(rename = "max_ns", with = "nanos")]
    pub max: Duration,
    /// Mean.
    #[serde(rename = "mean_ns", with = "nanos")]
    pub mean: Duration,
    /// Values that were clamped at the bound ([`LatencyHistogram::MAX`]).
    pub outliers: u64,
}

impl Quantiles {
    /// The quantiles of one bucket snapshot (builds a histogram: for
    /// repeated use, a [`Monitor`](crate::Monitor) keeps its own).
    pub fn of(histogram: &HistogramSnapshot) -> Quantiles {
        let mut h = LatencyDistribution::new();
        h.add(histogram);
        h.quantiles()
    }
}

/// A latency distribution in an `hdrhistogram`, rebuilt from the core's
/// bucket counts: each bucket's values are recorded at its midpoint.
#[derive(Debug, Clone)]
pub(crate) struct LatencyDistribution {
    histogram: Histogram<u64>,
    outliers: u64,
    /// Sum of the recorded midpoints, in nanoseconds, for the mean (cheaper
    /// than hdrhistogram's walk over every bucket).
    sum: f64,
}

impl LatencyDistribution {
    pub(crate) fn new() -> Self {
        LatencyDistribution {
            histogram: bounded(nanos::of(LatencyHistogram::MAX)),
            outliers: 0,
            sum: 0.0,
        }
    }

    pub(crate) fn clear(&mut self) {
        if !self.histogram.is_empty() {
            self.histogram.reset();
        }
        self.outliers = 0;
        self.sum = 0.0;
    }

    pub(crate) fn add(&mut self, snapshot: &HistogramSnapshot) {
        for bucket in &snapshot.buckets {
            let value = nanos::of(bucket.midpoint());
            if value > self.histogram.high() {
                self.outliers += bucket.count;
            }
            self.histogram.saturating_record_n(value, bucket.count);
            self.sum += value.min(self.histogram.high()) as f64 * bucket.count as f64;
        }
        self.outliers += snapshot.outliers;
    }

    /// Adds `other`'s values (built with the same bounds).
    pub(crate) fn merge(&mut self, other: &LatencyDistribution) {
        // Same bounds on both sides, so the addition cannot fail for want
        // of range; should it fail anyway, the values are counted as
        // outliers rather than lost silently.
        if self.histogram.add(&other.histogram).is_err() {
            self.outliers += other.histogram.len();
        }
        self.outliers += other.outliers;
        self.sum += other.sum;
    }

    pub(crate) fn quantiles(&self) -> Quantiles {
        let h = &self.histogram;
        if h.is_empty() {
            return Quantiles {
                outliers: self.outliers,
                ..Quantiles::default()
            };
        }
        let at = |q: f64| Duration::from_nanos(h.value_at_quantile(q));
        Quantiles {
            count: h.len(),
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            p999: at(0.999),
            max: Duration::from_nanos(h.max()),
            mean: Duration::from_nanos(finite_or_zero(self.sum / h.len() as f64) as u64),
            outliers: self.outliers,
        }
    }
}

fn finite_or_zero(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

/// The distribution of a sampled count (a queue depth at each sample, the
/// size of steal batches), from an `hdrhistogram`.
///
/// All zero when nothing was sampled.
///
/// ```
/// # use dreadpool_metrics::Distribution;
/// let d = Distribution::default();
/// assert_eq!(d.samples, 0);
/// assert_eq!(d.mean, 0.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Distribution {
    /// Samples taken (weighted: a steal batch size counts once per steal).
    pub samples: u64,
    /// Mean, 0 when empty.
    pub mean: f64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest sample.
    pub max: u64,
    /// Samples above the tracked bound, clamped to it.
    pub outliers: u64,
}

/// The recording side of a [`Distribution`].
#[derive(Debug, Clone)]
pub(crate) struct CountDistribution {
    histogram: Histogram<u64>,
    outliers: u64,
}

impl CountDistribution {
    pub(crate) fn new(max: u64) -> Self {
        CountDistribution {
            histogram: bounded(max),
            outliers: 0,
        }
    }

    pub(crate) fn record_n(&mut self, value: u64, n: u64) {
        if n == 0 {
            return;
        }
        if value > self.histogram.high() {
            self.outliers += n;
        }
        self.histogram.saturating_record_n(value, n);
    }

    pub(crate) fn distribution(&self) -> Distribution {
        let h = &self.histogram;
        if h.is_empty() {
            return Distribution {
                outliers: self.outliers,
                ..Distribution::default()
            };
        }
        Distribution {
            samples: h.len(),
            mean: finite_or_zero(h.mean()),
            p50: h.value_at_quantile(0.5),
            p90: h.value_at_quantile(0.9),
            p99: h.value_at_quantile(0.99),
            max: h.max(),
            outliers: self.outliers,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bound_builds() {
        let _ = LatencyDistribution::new();
        let _ = CountDistribution::new(MAX_TRACKED_DEPTH);
        let _ = CountDistribution::new(MAX_TRACKED_BATCH);
    }

    #[test]
    fn quantiles_of_a_known_distribution_through_the_core_buckets() {
        // 10,000 values uniform on 1us..=10ms: the quantile q is q * 10ms.
        let mut core = LatencyHistogram::default();
        for micros in 1..=10_000 {
            core.record(Duration::from_micros(micros));
        }
        let q = Quantiles::of(&HistogramSnapshot::from(&core));
        assert_eq!(q.count, 10_000);
        for (got, want) in [
            (q.p50, 5000.0),
            (q.p90, 9000.0),
            (q.p99, 9900.0),
            (q.p999, 9990.0),
        ] {
            let got = got.as_secs_f64() * 1e6;
            // The core's buckets are at most 12.5% wide: a midpoint is within
            // about 6.25% of any value in it, and hdrhistogram adds 1%.
            assert!((got - want).abs() / want < 0.08, "{got} vs {want}");
        }
        let mean = q.mean.as_secs_f64() * 1e6;
        assert!((mean - 5000.0).abs() / 5000.0 < 0.08, "{mean}");
        assert!(q.max >= Duration::from_micros(9_500), "{:?}", q.max);
        assert!(q.max <= Duration::from_micros(11_000), "{:?}", q.max);
        assert_eq!(q.outliers, 0);
    }

    #[test]
    fn a_bimodal_distribution_keeps_its_tail() {
        let mut h = HistogramSnapshot::default();
        h.record_n(Duration::from_micros(10), 990);
        h.record_n(Duration::from_millis(10), 10);
        let q = Quantiles::of(&h);
        assert!(q.p50 < Duration::from_micros(12), "{q:?}");
        assert!(q.p90 < Duration::from_micros(12), "{q:?}");
        assert!(q.p999 > Duration::from_millis(9), "{q:?}");
        assert!(q.max > Duration::from_millis(9), "{q:?}");
    }

    #[test]
    fn values_above_the_bound_are_clamped_and_counted() {
        let mut h = HistogramSnapshot::default();
        h.record_n(Duration::from_secs(1_000_000), 3);
        let q = Quantiles::of(&h);
        assert_eq!(q.count, 3);
        assert_eq!(q.outliers, 3);
        assert!(q.max <= LatencyHistogram::MAX + LatencyHistogram::MAX / 50);

        let mut d = CountDistribution::new(MAX_TRACKED_BATCH);
        d.record_n(MAX_TRACKED_BATCH * 10, 2);
        d.record_n(1, 2);
        let d = d.distribution();
        assert_eq!(d.samples, 4);
        assert_eq!(d.outliers, 2);
    }

    #[test]
    fn count_distribution_quantiles() {
        let mut d = CountDistribution::new(MAX_TRACKED_DEPTH);
        for depth in 0..100 {
            d.record_n(depth, 1);
        }
        let d = d.distribution();
        assert_eq!(d.samples, 100);
        assert!((d.mean - 49.5).abs() < 0.5, "{d:?}");
        assert!((49..=51).contains(&d.p50), "{d:?}");
        assert_eq!(d.max, 99);
    }
}
