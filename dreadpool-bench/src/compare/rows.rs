//! The table's rows from what the harness measured: each selected
//! [`Scenario`]'s [`Metric`]s in table order, then the recorder's.

use super::harness::Harness;
use super::metric::{Metric, RowContext};
use super::samples::{Samples, WakeRecord};
use super::scenario::{Scenario, Selection};
use crate::bootstrap;
use crate::contenders::Contender;
use crate::report::{self, Row};
use std::collections::BTreeMap;

/// What the rows are built from.
struct Measured<'h> {
    selection: &'h Selection,
    samples: &'h Samples,
    wake: &'h BTreeMap<Contender, WakeRecord>,
    cx: RowContext,
}

/// Every row the run measured, each with its metric, in table order.
pub(super) fn rows(harness: &Harness<'_>) -> Vec<(Metric, Row)> {
    let options = harness.options();
    let measured = Measured {
        selection: &options.selection,
        samples: &harness.samples,
        wake: &harness.wake,
        cx: RowContext {
            sizes: options.sizes,
            threads: options.threads,
            oversub_threads: harness.oversub_threads,
            wake_budget: report::median(&harness.wake_budget),
        },
    };
    let selected = Scenario::ALL
        .into_iter()
        .filter(|&s| measured.selection.wants(s));
    let metrics = selected.flat_map(|s| s.metrics().iter().copied());
    #[cfg(feature = "recorder")]
    let metrics = metrics.chain(Metric::RECORDER);
    metrics
        .filter_map(|metric| Some((metric, measured.row(metric)?)))
        .collect()
}

impl Measured<'_> {
    /// `metric`'s row, unless the run has no figure for it.
    fn row(&self, metric: Metric) -> Option<Row> {
        let mut row = Row {
            metric: metric.label(&self.cx),
            unit: metric.unit(),
            better: metric.better(),
            target: metric.target(&self.cx),
            values: self.values(metric)?,
            interval: None,
        };
        if let Metric::Wake(quantile) = metric {
            // The ratio's 95% interval, resampling the turns (`bootstrap.rs`).
            let mine = self.wake.get(&Contender::Dreadpool);
            if let (Some(mine), Some((peer, _))) = (mine, row.best_peer()) {
                let theirs = &self.wake[&peer].blocks;
                row.interval = bootstrap::ratio_interval(&mine.blocks, theirs, quantile.value());
            }
        }
        Some(row)
    }

    /// Each contender's figure of `metric`; `None` where the row is left
    /// out (a derived row whose inputs were not measured).
    fn values(&self, metric: Metric) -> Option<Vec<(Contender, f64)>> {
        let dreadpool = |metric| self.samples.median(metric, Contender::Dreadpool);
        match metric {
            Metric::Wake(quantile) => Some(
                self.wake
                    .iter()
                    .map(|(&c, w)| {
                        let ns = w.histogram.value_at_quantile(quantile.value());
                        (c, ns as f64 / 1e3)
                    })
                    .collect(),
            ),
            Metric::OversubscribedKept(load) => {
                // Kept relative to the pools of `--threads`, so only when those ran.
                if !self.selection.wants(load.scenario()) {
                    return None;
                }
                let at_base = self.samples.medians(load.metric());
                let over = self.samples.medians(Metric::Oversubscribed(load));
                let kept = over.iter().filter_map(|&(c, o)| {
                    let b = at_base.iter().find(|(x, _)| *x == c)?.1;
                    Some((c, b / o))
                });
                Some(kept.collect())
            }
            Metric::ProducersKept => {
                let one = self.samples.medians(Metric::OneProducer);
                let many = self.samples.medians(Metric::Producers);
                let kept = many.iter().filter_map(|&(c, m)| {
                    let o = one.iter().find(|(x, _)| *x == c)?.1;
                    Some((c, o / m))
                });
                Some(kept.collect())
            }
            Metric::ComputeOfBound => {
                let bound = dreadpool(Metric::ComputeBound)?;
                let efficiency = self.samples.medians(Metric::Compute);
                Some(
                    efficiency
                        .into_iter()
                        .map(|(c, e)| (c, e / bound))
                        .collect(),
                )
            }
            Metric::OffloadJoin => Some(vec![(Contender::Dreadpool, dreadpool(metric)?)]),
            Metric::OffloadOverJoin => {
                let join = dreadpool(Metric::OffloadJoin)?;
                let single = dreadpool(Metric::OffloadSingle)?;
                self.cx.wake_budget?;
                Some(vec![(Contender::Dreadpool, single - join)])
            }
            #[cfg(feature = "recorder")]
            Metric::RecorderRatio(_) | Metric::RecorderEvent(_) => {
                // The recorded contender's figure, shown in dreadpool's column.
                let recorded = self.samples.median(metric, Contender::DreadpoolTasks)?;
                Some(vec![(Contender::Dreadpool, recorded)])
            }
            _ => Some(self.samples.medians(metric)),
        }
    }
}
