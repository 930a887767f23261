//! What the harness keeps between repetitions: every figure by [`Metric`]
//! and contender, and each contender's wake latencies.

use super::metric::Metric;
#[cfg(feature = "recorder")]
use super::metric::SpawnLoad;
use crate::contenders::Contender;
#[cfg(feature = "recorder")]
use crate::recorder_cost::RecorderPair;
use crate::report;
use crate::scenarios::latency_histogram;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// Samples by metric and contender.
#[derive(Debug, Default)]
pub(super) struct Samples(BTreeMap<Metric, BTreeMap<Contender, Vec<f64>>>);

impl Samples {
    pub(super) fn push(&mut self, metric: Metric, contender: Contender, value: f64) {
        self.0
            .entry(metric)
            .or_default()
            .entry(contender)
            .or_default()
            .push(value);
    }

    /// One recorder block's figures, kept under the recorded contender.
    #[cfg(feature = "recorder")]
    pub(super) fn push_recorded(&mut self, load: SpawnLoad, pair: RecorderPair) {
        let recorded = Contender::DreadpoolTasks;
        self.push(Metric::RecorderRatio(load), recorded, pair.ratio);
        self.push(Metric::RecorderEvent(load), recorded, pair.ns_per_event);
    }

    /// The median of `contender`'s samples of `metric`.
    pub(super) fn median(&self, metric: Metric, contender: Contender) -> Option<f64> {
        report::median(self.0.get(&metric)?.get(&contender)?)
    }

    /// Every contender's median of `metric`, in contender order.
    pub(super) fn medians(&self, metric: Metric) -> Vec<(Contender, f64)> {
        self.0
            .get(&metric)
            .map(|by| {
                by.iter()
                    .filter_map(|(&c, v)| report::median(v).map(|m| (c, m)))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// One contender's wake latencies: the histogram the table's percentiles
/// come from, and the blocks, in turn order, for their intervals.
pub(super) struct WakeRecord {
    pub(super) histogram: Histogram<u64>,
    pub(super) blocks: Vec<Vec<u64>>,
}

impl Default for WakeRecord {
    fn default() -> Self {
        WakeRecord {
            histogram: latency_histogram(),
            blocks: Vec::new(),
        }
    }
}

impl WakeRecord {
    pub(super) fn record_block(&mut self, latencies: Vec<u64>) {
        for &ns in &latencies {
            self.histogram.saturating_record(ns);
        }
        self.blocks.push(latencies);
    }
}
