//! `--sweep`: the selected scenarios at each of several thread counts, and a
//! table of how each contender's time per task scales from the first count
//! to the last.

use super::{render, run, Metric, Options, Results};
use crate::contenders::Contender;
use crate::fork_join::{Joiner, Workload};
use crate::report;
use std::fmt::Write as _;

/// One comparison run per thread count, in the order given.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// Each count's results.
    pub runs: Vec<Results>,
}

/// Runs the comparison of `options` once for each of `counts` worker threads.
pub fn sweep(options: &Options, counts: &[usize]) -> Sweep {
    let runs = counts
        .iter()
        .map(|&threads| {
            eprintln!("sweep: {threads} threads");
            run(&Options {
                threads,
                ..options.clone()
            })
        })
        .collect();
    Sweep { runs }
}

/// One line of the scaling table: a figure at each count, lower is better.
struct Line {
    label: String,
    unit: &'static str,
    who: String,
    figures: Vec<Option<f64>>,
}

impl Sweep {
    /// The thread counts, in run order.
    pub fn counts(&self) -> Vec<usize> {
        self.runs.iter().map(|r| r.options.threads).collect()
    }

    /// Each run's full report, then the scaling table.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for results in &self.runs {
            out.push_str(&render(results));
            out.push('\n');
        }
        out.push_str(&self.markdown_table());
        out
    }

    /// The scaling table: every swept row's figure at each count, and the
    /// throughput kept at the last count (the first count's time over the
    /// last's).
    pub fn markdown_table(&self) -> String {
        let counts = self.counts();
        let (Some(first), Some(last)) = (counts.first(), counts.last()) else {
            return String::new();
        };
        let mut out = format!(
            "scaling (--sweep): time per task at each thread count; kept = the time at \
             {first} threads over the time at {last} (above 1: faster with more threads)\n\n"
        );
        let _ = write!(out, "| scenario | unit | contender |");
        for count in &counts {
            let _ = write!(out, " {count} threads |");
        }
        let _ = writeln!(out, " kept, {last} vs {first} threads |");
        let _ = write!(out, "|---|---|---|");
        for _ in &counts {
            let _ = write!(out, "---:|");
        }
        let _ = writeln!(out, "---:|");
        for line in self.spawn_lines().into_iter().chain(self.fork_join_lines()) {
            let cell = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), report::figure);
            let _ = write!(out, "| {} | {} | {} |", line.label, line.unit, line.who);
            for &figure in &line.figures {
                let _ = write!(out, " {} |", cell(figure));
            }
            let kept = match (line.figures.first(), line.figures.last()) {
                (Some(Some(a)), Some(Some(b))) if *b > 0.0 => format!("{:.2}x", a / b),
                _ => "-".to_owned(),
            };
            let _ = writeln!(out, " {kept} |");
        }
        out
    }

    /// The spawn table's swept rows, one line per contender.
    fn spawn_lines(&self) -> Vec<Line> {
        let Some(first) = self.runs.first() else {
            return Vec::new();
        };
        let mut lines = Vec::new();
        for (metric, row) in first.rows.iter().filter(|(m, _)| m.swept()) {
            for &contender in &first.contenders {
                let figures: Vec<Option<f64>> = self
                    .runs
                    .iter()
                    .map(|r| spawn_figure(r, *metric, contender))
                    .collect();
                if figures.iter().any(Option::is_some) {
                    lines.push(Line {
                        label: row.metric.clone(),
                        unit: row.unit,
                        who: contender.to_string(),
                        figures,
                    });
                }
            }
        }
        lines
    }

    /// The fork-join rows on the pools of each count, one line per joiner
    /// (the serial figure does not depend on the count).
    fn fork_join_lines(&self) -> Vec<Line> {
        let Some(first) = self.runs.first() else {
            return Vec::new();
        };
        let sizes = first.options.sizes.fork_join;
        let mut lines = Vec::new();
        for &workload in Workload::ALL {
            for joiner in Joiner::PARALLEL {
                let figures: Vec<Option<f64>> = self
                    .runs
                    .iter()
                    .map(|r| fork_join_figure(r, workload, joiner))
                    .collect();
                if figures.iter().any(Option::is_some) {
                    lines.push(Line {
                        label: workload.label(&sizes),
                        unit: workload.unit(),
                        who: joiner.to_string(),
                        figures,
                    });
                }
            }
        }
        lines
    }
}

fn spawn_figure(results: &Results, metric: Metric, contender: Contender) -> Option<f64> {
    let (_, row) = results.rows.iter().find(|(m, _)| *m == metric)?;
    row.value(contender)
}

fn fork_join_figure(results: &Results, workload: Workload, joiner: Joiner) -> Option<f64> {
    let threads = results.options.threads;
    results
        .fork_join
        .iter()
        .find(|r| r.workload == workload && r.threads == threads)?
        .value(joiner)
}
