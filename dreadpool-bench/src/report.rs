//! Medians, the targets of issue 6 and the results table.

use crate::contenders::Contender;
use std::fmt::Write as _;

/// The median of `values` (the mean of the middle two for an even count);
/// `None` for no values.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    Some(if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    })
}

/// Which way a figure improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Smaller is better (time, bytes, CPU).
    Lower,
    /// Larger is better (efficiency, throughput kept).
    Higher,
}

/// What issue 6 asks of dreadpool's figure in one row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// dreadpool's figure divided by the best peer's is at most this.
    RatioAtMost(f64),
    /// dreadpool's own figure is at most this.
    AtMost(f64),
    /// dreadpool's own figure is at least this.
    AtLeast(f64),
    /// Shown for information; no target.
    None,
}

impl Target {
    fn describe(self, unit: &str) -> String {
        match self {
            Target::RatioAtMost(r) => format!("ratio <= {r}"),
            Target::AtMost(v) => format!("<= {v} {unit}"),
            Target::AtLeast(v) => format!(">= {v} {unit}"),
            Target::None => "-".to_owned(),
        }
    }
}

/// One line of the table: a figure for every contender.
#[derive(Debug, Clone)]
pub struct Row {
    /// What is measured, e.g. `external 1000000 tasks`.
    pub metric: String,
    /// The unit of every figure in the row.
    pub unit: &'static str,
    /// Which way the figure improves.
    pub better: Better,
    /// What dreadpool must reach.
    pub target: Target,
    /// Each contender's figure, if measured.
    pub values: Vec<(Contender, f64)>,
    /// The 95% interval of dreadpool's ratio to the best peer, where the
    /// samples allow one (wake latency: `bootstrap.rs`).
    pub interval: Option<(f64, f64)>,
}

/// Whether a row's target is met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Met.
    Pass,
    /// Missed.
    Miss,
    /// No target, or not enough figures to judge.
    NotJudged,
}

impl Verdict {
    /// The verdict as the tables print it (a miss in bold).
    pub fn markdown(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Miss => "**MISS**",
            Verdict::NotJudged => "-",
        }
    }
}

impl Row {
    /// dreadpool's figure.
    pub fn dreadpool(&self) -> Option<f64> {
        self.value(Contender::Dreadpool)
    }

    /// `contender`'s figure.
    pub fn value(&self, contender: Contender) -> Option<f64> {
        self.values
            .iter()
            .find(|(c, _)| *c == contender)
            .map(|&(_, v)| v)
    }

    /// The best figure among the other contenders, and whose it is.
    pub fn best_peer(&self) -> Option<(Contender, f64)> {
        let peers = self
            .values
            .iter()
            .copied()
            .filter(|(c, v)| c.is_peer() && v.is_finite());
        match self.better {
            Better::Lower => peers.min_by(|a, b| a.1.total_cmp(&b.1)),
            Better::Higher => peers.max_by(|a, b| a.1.total_cmp(&b.1)),
        }
    }

    /// dreadpool's figure divided by the best peer's.
    pub fn ratio(&self) -> Option<f64> {
        let (_, best) = self.best_peer()?;
        let mine = self.dreadpool()?;
        (best != 0.0).then(|| mine / best)
    }

    /// Whether dreadpool meets the row's target.
    pub fn verdict(&self) -> Verdict {
        let judged = match self.target {
            Target::RatioAtMost(limit) => self.ratio().map(|r| r <= limit),
            Target::AtMost(limit) => self.dreadpool().map(|v| v <= limit),
            Target::AtLeast(limit) => self.dreadpool().map(|v| v >= limit),
            Target::None => None,
        };
        match judged {
            Some(true) => Verdict::Pass,
            Some(false) => Verdict::Miss,
            None => Verdict::NotJudged,
        }
    }
}

/// Formats a figure with about three significant digits.
pub fn figure(value: f64) -> String {
    let magnitude = value.abs();
    if !value.is_finite() {
        "-".to_owned()
    } else if magnitude >= 100.0 {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else if magnitude >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

/// The results as a Markdown table: one column per contender, then the best
/// peer, dreadpool's ratio to it, the target and PASS/MISS.
pub fn markdown_table<'r>(
    rows: impl IntoIterator<Item = &'r Row>,
    contenders: &[Contender],
) -> String {
    let mut out = String::new();
    let _ = write!(out, "| scenario | unit |");
    for c in contenders {
        let _ = write!(out, " {c} |");
    }
    let _ = writeln!(out, " best peer | dreadpool / best | target | verdict |");
    let _ = write!(out, "|---|---|");
    for _ in contenders {
        let _ = write!(out, "---:|");
    }
    let _ = writeln!(out, "---|---:|---|---|");
    for row in rows {
        let _ = write!(out, "| {} | {} |", row.metric, row.unit);
        for &c in contenders {
            let cell = row.value(c).map_or_else(|| "-".to_owned(), figure);
            let _ = write!(out, " {cell} |");
        }
        let best = row
            .best_peer()
            .map_or_else(|| "-".to_owned(), |(c, _)| c.to_string());
        let ratio = match (row.ratio(), row.interval) {
            (Some(r), Some((low, high))) => format!("{r:.2}x ({low:.2}-{high:.2})"),
            (Some(r), None) => format!("{r:.2}x"),
            (None, _) => "-".to_owned(),
        };
        let verdict = row.verdict().markdown();
        let _ = writeln!(
            out,
            " {best} | {ratio} | {} | {verdict} |",
            row.target.describe(row.unit)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(better: Better, target: Target, values: &[(Contender, f64)]) -> Row {
        Row {
            metric: "m".into(),
            unit: "ns/task",
            better,
            target,
            values: values.to_vec(),
            interval: None,
        }
    }

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn ratio_to_the_best_peer() {
        use Contender::*;
        let r = row(
            Better::Lower,
            Target::RatioAtMost(0.5),
            &[(Dreadpool, 40.0), (Rayon, 100.0), (Tokio, 80.0)],
        );
        assert_eq!(r.best_peer(), Some((Tokio, 80.0)));
        assert_eq!(r.ratio(), Some(0.5));
        assert_eq!(r.verdict(), Verdict::Pass);
        let r = row(
            Better::Higher,
            Target::AtLeast(0.95),
            &[(Dreadpool, 0.9), (Rayon, 0.97)],
        );
        assert_eq!(r.best_peer(), Some((Rayon, 0.97)));
        assert_eq!(r.verdict(), Verdict::Miss);
    }

    #[test]
    fn table_has_a_line_per_row() {
        use Contender::*;
        let rows = vec![
            row(
                Better::Lower,
                Target::AtMost(64.0),
                &[(Dreadpool, 56.0), (Rayon, 80.0)],
            ),
            row(Better::Lower, Target::None, &[(Rayon, 1.0)]),
        ];
        let table = markdown_table(&rows, &[Dreadpool, Rayon]);
        assert_eq!(table.lines().count(), 4);
        assert!(table.contains("PASS"));
        assert!(table.contains("| 0.70x |"), "{table}");
    }

    #[test]
    fn an_interval_follows_its_ratio() {
        use Contender::*;
        let mut r = row(
            Better::Lower,
            Target::RatioAtMost(1.0),
            &[(Dreadpool, 99.0), (Rayon, 100.0)],
        );
        r.interval = Some((0.96, 1.03));
        let table = markdown_table(&[r], &[Dreadpool, Rayon]);
        assert!(table.contains("| 0.99x (0.96-1.03) |"), "{table}");
    }
}
