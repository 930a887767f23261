//! [`Buckets`]: the `le` bounds to configure on the exporter for the two
//! latency histograms, chosen on the core's own bucket edges.
//!
//! Why on its edges: the publisher does not see the timed values, only how
//! many fell into each of the core's buckets (`[lower, upper)`, 8 per power
//! of two). It records each bucket's count at the bucket's midpoint. When
//! every Prometheus bound is one of the core's edges, a midpoint always lies
//! strictly inside one Prometheus bucket, so each count lands where its
//! values were: the published histogram is exact at its bounds. With
//! arbitrary bounds (say the exporter's default 5 ms, 10 ms, 25 ms...) a
//! core bucket that straddles a bound would be counted wholly on one side.

use crate::error::BucketsError;
use dreadpool_core::LatencyHistogram;
use std::time::Duration;

/// Where the core's log-linear buckets stop being 1 ns wide: 2^3 ns.
const LOG_SCALED_FROM_EXP: u32 = 3;
/// The core splits every power of two into this many buckets.
const CORE_PER_OCTAVE: u32 = 8;

/// The bucket bounds (in seconds) for the exporter's histograms
/// [`SCHEDULE_DELAY`](super::names::SCHEDULE_DELAY) and
/// [`RUN_TIME`](super::names::RUN_TIME): `per_octave` bounds per power of
/// two from `lowest` to `highest`, every one of them an edge of the core's
/// buckets.
///
/// The default keeps the core's full resolution (8 per power of two, each
/// bucket at most 12.5% wide) from 2^10 ns (1.02 µs) to 2^34 ns (17.2 s):
/// 193 bounds, so 196 series per histogram with `+Inf`, `_sum` and
/// `_count`. Faster values count in the lowest bucket, slower ones only in
/// `+Inf`. With 4 per power of two (buckets up to 25% wide) the series
/// halve; `histogram_quantile` interpolates linearly inside a bucket, so its
/// error is at most the bucket's width.
///
/// ```
/// use dreadpool::metrics::publish::Buckets;
/// use std::time::Duration;
///
/// let full = Buckets::default().bounds();
/// assert_eq!(full.len(), 193);
/// assert_eq!(full[0], 1024e-9);
///
/// // A coarser layout for a large fleet: 4 per power of two, 1 µs to 1 s.
/// let coarse = Buckets::new(4, Duration::from_micros(1), Duration::from_secs(1))?;
/// assert_eq!(coarse.bounds().len(), 4 * 21 + 1); // 2^9 ns to 2^30 ns
/// # Ok::<(), dreadpool::metrics::BucketsError>(())
/// ```
///
/// On the exporter (`metrics-exporter-prometheus`):
///
/// ```ignore
/// let bounds = Buckets::default().bounds();
/// let mut builder = PrometheusBuilder::new();
/// for name in names::HISTOGRAMS {
///     builder = builder.set_buckets_for_metric(Matcher::Full(name.into()), &bounds)?;
/// }
/// ```
///
/// Without buckets configured that exporter renders a histogram as a
/// summary (`{quantile=...}` over its own window), which cannot be
/// aggregated across processes: configure them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buckets {
    per_octave: u32,
    /// log2 of the lowest bound, in nanoseconds.
    lowest_exp: u32,
    /// log2 of the highest bound, in nanoseconds.
    highest_exp: u32,
}

impl Default for Buckets {
    fn default() -> Self {
        Buckets {
            per_octave: CORE_PER_OCTAVE,
            lowest_exp: 10,
            highest_exp: 34,
        }
    }
}

impl Buckets {
    /// `per_octave` bounds per power of two (1, 2, 4 or 8) from `lowest`
    /// rounded down to a power of two of nanoseconds, to `highest` rounded
    /// up to one.
    ///
    /// # Errors
    ///
    /// [`BucketsError::PerOctave`] for any other `per_octave` (those bounds
    /// would cut the core's buckets); [`BucketsError::Range`] when `lowest`
    /// is not below `highest`, is below 8 ns, or `highest` is above
    /// [`LatencyHistogram::MAX`].
    ///
    /// ```
    /// use dreadpool::metrics::publish::Buckets;
    /// use dreadpool::metrics::BucketsError;
    /// use std::time::Duration;
    ///
    /// let err = Buckets::new(3, Duration::from_micros(1), Duration::from_secs(1));
    /// assert_eq!(err, Err(BucketsError::PerOctave(3)));
    /// ```
    pub fn new(per_octave: u32, lowest: Duration, highest: Duration) -> Result<Self, BucketsError> {
        if !matches!(per_octave, 1 | 2 | 4 | 8) {
            return Err(BucketsError::PerOctave(per_octave));
        }
        let range = BucketsError::Range {
            lowest,
            highest,
            max: LatencyHistogram::MAX,
        };
        let lo = u64::try_from(lowest.as_nanos()).unwrap_or(u64::MAX);
        let hi = u64::try_from(highest.as_nanos()).unwrap_or(u64::MAX);
        if lo < 1 << LOG_SCALED_FROM_EXP || lo >= hi || highest > LatencyHistogram::MAX {
            return Err(range);
        }
        let lowest_exp = 63 - lo.leading_zeros();
        let highest_exp = 64 - (hi - 1).leading_zeros();
        Ok(Buckets {
            per_octave,
            lowest_exp,
            highest_exp,
        })
    }

    /// Bounds per power of two.
    pub fn per_octave(&self) -> u32 {
        self.per_octave
    }

    /// The bounds in seconds, increasing, without `+Inf` (the exporter adds
    /// it).
    pub fn bounds(&self) -> Vec<f64> {
        self.nanos().map(|ns| ns as f64 / 1e9).collect()
    }

    /// Series one published histogram makes per pool: a `_bucket` per bound
    /// and `+Inf`, `_sum` and `_count`.
    ///
    /// ```
    /// assert_eq!(dreadpool::metrics::publish::Buckets::default().series(), 196);
    /// ```
    pub fn series(&self) -> usize {
        self.nanos().count() + 3
    }

    /// The bounds in nanoseconds: `2^e + k 2^e / per_octave`. The core's
    /// edges are `2^e + k 2^(e-3)`, so these are among them.
    fn nanos(&self) -> impl Iterator<Item = u64> + '_ {
        let step_of = move |exp: u32| (1u64 << exp) / u64::from(self.per_octave);
        (self.lowest_exp..self.highest_exp)
            .flat_map(move |exp| {
                (0..u64::from(self.per_octave)).map(move |k| (1u64 << exp) + k * step_of(exp))
            })
            .chain(std::iter::once(1u64 << self.highest_exp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::HistogramSnapshot;

    /// The core bucket a value falls into, as `[lower, upper)` nanoseconds.
    fn core_bucket(nanos: u64) -> (u64, u64) {
        let mut h = LatencyHistogram::default();
        h.record(Duration::from_nanos(nanos));
        let b = HistogramSnapshot::from(&h).buckets[0];
        (b.lower.as_nanos() as u64, b.upper.as_nanos() as u64)
    }

    #[test]
    fn every_bound_is_an_edge_of_the_core_buckets() {
        for per_octave in [1, 2, 4, 8] {
            let b = Buckets::new(per_octave, Duration::from_nanos(8), LatencyHistogram::MAX)
                .expect("valid");
            let bounds: Vec<u64> = b.nanos().collect();
            assert!(bounds.windows(2).all(|w| w[0] < w[1]));
            for &edge in &bounds[..bounds.len() - 1] {
                assert_eq!(core_bucket(edge).0, edge, "{per_octave}/octave: {edge}");
            }
        }
    }

    #[test]
    fn full_resolution_keeps_every_core_edge_in_range() {
        let bounds: Vec<u64> = Buckets::default().nanos().collect();
        let mut edge = 1u64 << 10;
        let mut from_core = vec![edge];
        while edge < 1 << 34 {
            edge = core_bucket(edge).1;
            from_core.push(edge);
        }
        assert_eq!(bounds, from_core);
    }

    #[test]
    fn midpoints_land_inside_one_bucket() {
        // What the publisher records: a core bucket's midpoint must be above
        // the bound below the bucket and at or under the one above it.
        let bounds = Buckets::default().bounds();
        for ns in [1_100u64, 5_000, 123_456, 9_999_999, 3_000_000_000] {
            let (lower, upper) = core_bucket(ns);
            let mid = (lower + (upper - lower) / 2) as f64 / 1e9;
            let above = bounds.iter().position(|&b| mid <= b).expect("in range");
            assert_eq!(bounds[above], upper as f64 / 1e9, "{ns}");
            assert!(above == 0 || bounds[above - 1] == lower as f64 / 1e9);
        }
    }

    #[test]
    fn ranges_round_outwards_and_bad_layouts_are_errors() {
        let b = Buckets::new(2, Duration::from_nanos(1500), Duration::from_nanos(3000)).unwrap();
        assert_eq!(
            b.nanos().collect::<Vec<_>>(),
            [1024, 1536, 2048, 3072, 4096]
        );
        assert_eq!(b.series(), 8);
        assert!(matches!(
            Buckets::new(8, Duration::from_nanos(4), Duration::from_secs(1)),
            Err(BucketsError::Range { .. })
        ));
        assert!(matches!(
            Buckets::new(8, Duration::from_secs(2), Duration::from_secs(1)),
            Err(BucketsError::Range { .. })
        ));
        assert!(matches!(
            Buckets::new(8, Duration::from_secs(1), Duration::MAX),
            Err(BucketsError::Range { .. })
        ));
        assert_eq!(
            Buckets::new(16, Duration::from_secs(1), Duration::from_secs(2)),
            Err(BucketsError::PerOctave(16))
        );
    }
}
