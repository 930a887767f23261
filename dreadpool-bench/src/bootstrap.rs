//! How sure a percentile ratio is: a paired block bootstrap.
//!
//! The comparison takes wake latency in short blocks, the contenders taking
//! turns, so block `i` of every contender was measured in the same stretch of
//! time. A tail percentile such as p99 rests on a few hundred samples and
//! moves by several percent from run to run on this machine, so a single
//! ratio cannot say whether a 2% gap is real. Resampling whole blocks, the
//! same block indices for both contenders, keeps what the turns share (drift,
//! a noisy neighbour) paired, and the spread of the resampled ratios is an
//! honest interval for the ratio itself.

/// Resamples used for an interval: enough for stable 2.5% and 97.5% points.
pub const RESAMPLES: usize = 1000;

/// The `q` quantile (0 to 1) of `values`, by exact order statistic (the
/// value at rank `round(q * (n - 1))`); `None` for no values. Reorders
/// `values`.
pub fn quantile(values: &mut [u64], q: f64) -> Option<u64> {
    if values.is_empty() {
        return None;
    }
    let rank = ((values.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize;
    let (_, value, _) = values.select_nth_unstable(rank);
    Some(*value)
}

/// The 95% interval of `quantile(numerator) / quantile(denominator)` at `q`,
/// resampling block indices with replacement, the same indices for both.
///
/// Blocks are paired by index; only the first `min(len)` blocks of each side
/// are used. `None` when there is no block, or a resample's denominator is 0.
/// Deterministic: the resampling uses a fixed-seed generator, so one set of
/// samples always gives one interval.
pub fn ratio_interval(
    numerator: &[Vec<u64>],
    denominator: &[Vec<u64>],
    q: f64,
) -> Option<(f64, f64)> {
    let blocks = numerator.len().min(denominator.len());
    if blocks == 0 {
        return None;
    }
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut ratios = Vec::with_capacity(RESAMPLES);
    let (mut top, mut bottom) = (Vec::new(), Vec::new());
    for _ in 0..RESAMPLES {
        top.clear();
        bottom.clear();
        for _ in 0..blocks {
            let i = rng.below(blocks);
            top.extend_from_slice(&numerator[i]);
            bottom.extend_from_slice(&denominator[i]);
        }
        let above = quantile(&mut top, q)? as f64;
        let below = quantile(&mut bottom, q)? as f64;
        if below == 0.0 {
            return None;
        }
        ratios.push(above / below);
    }
    ratios.sort_by(f64::total_cmp);
    let at = |p: f64| ratios[((ratios.len() - 1) as f64 * p).round() as usize];
    Some((at(0.025), at(0.975)))
}

/// A small fixed-seed generator: the interval must not change from one
/// report of the same samples to the next.
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, n: usize) -> usize {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        (x % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `blocks` blocks of 50 samples each, pseudo-random between 20,000 and
    /// 120,000 with a long tail.
    fn samples(blocks: usize, seed: u64) -> Vec<Vec<u64>> {
        let mut rng = XorShift(seed);
        (0..blocks)
            .map(|_| {
                (0..50)
                    .map(|_| {
                        let base = 20_000 + rng.below(10_000) as u64;
                        if rng.below(50) == 0 {
                            base + rng.below(100_000) as u64
                        } else {
                            base
                        }
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn quantile_is_the_order_statistic() {
        let mut v: Vec<u64> = (1..=101).rev().collect();
        assert_eq!(quantile(&mut v, 0.5), Some(51));
        assert_eq!(quantile(&mut v, 0.99), Some(100));
        assert_eq!(quantile(&mut v, 0.0), Some(1));
        assert_eq!(quantile(&mut v, 1.0), Some(101));
        assert_eq!(quantile(&mut [], 0.5), None);
    }

    #[test]
    fn a_contender_against_itself_is_exactly_one() {
        let a = samples(40, 7);
        assert_eq!(ratio_interval(&a, &a, 0.99), Some((1.0, 1.0)));
    }

    #[test]
    fn a_scaled_copy_gives_the_scale() {
        let a = samples(40, 7);
        let slower: Vec<Vec<u64>> = a
            .iter()
            .map(|b| b.iter().map(|v| v * 2).collect())
            .collect();
        let (low, high) = ratio_interval(&slower, &a, 0.99).unwrap();
        assert!((low - 2.0).abs() < 1e-9 && (high - 2.0).abs() < 1e-9);
    }

    #[test]
    fn independent_samples_give_an_interval_around_one_that_narrows_with_more() {
        let few = ratio_interval(&samples(20, 1), &samples(20, 2), 0.99).unwrap();
        let many = ratio_interval(&samples(800, 1), &samples(800, 2), 0.99).unwrap();
        assert!(few.0 < 1.0 && 1.0 < few.1, "{few:?}");
        assert!(many.0 < 1.0 && 1.0 < many.1, "{many:?}");
        assert!(many.1 - many.0 < (few.1 - few.0) / 2.0, "{few:?} {many:?}");
    }

    #[test]
    fn a_real_gap_is_outside_the_interval() {
        let a = samples(400, 1);
        let b: Vec<Vec<u64>> = samples(400, 2)
            .iter()
            .map(|b| b.iter().map(|v| v + v / 5).collect())
            .collect();
        let (low, high) = ratio_interval(&b, &a, 0.5).unwrap();
        assert!(low > 1.05 && high < 1.35, "{low} {high}");
    }

    #[test]
    fn no_blocks_no_interval() {
        assert_eq!(ratio_interval(&[], &samples(3, 1), 0.5), None);
    }
}
