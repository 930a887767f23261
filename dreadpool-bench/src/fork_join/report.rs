//! The fork-join table: one [`Row`] per workload and thread count, and its
//! Markdown form with dreadpool's ratios to rayon and to chili.

use super::joiners::Joiner;
use super::workloads::Workload;
use crate::report::{self, Verdict};
use std::fmt::Write as _;

/// One line of the fork-join table.
#[derive(Debug, Clone)]
pub struct Row {
    /// The workload measured.
    pub workload: Workload,
    /// What is measured, as the table labels it.
    pub metric: String,
    /// Worker threads of every pool in the row.
    pub threads: usize,
    /// The unit of every figure (lower is better for all).
    pub unit: &'static str,
    /// Each joiner's median figure, where measured.
    pub values: Vec<(Joiner, f64)>,
    /// dreadpool's figure over rayon's must be at most this.
    pub target: Option<f64>,
}

impl Row {
    /// `joiner`'s figure.
    pub fn value(&self, joiner: Joiner) -> Option<f64> {
        self.values
            .iter()
            .find(|(j, _)| *j == joiner)
            .map(|&(_, v)| v)
    }

    /// dreadpool's figure over `other`'s.
    pub fn ratio_to(&self, other: Joiner) -> Option<f64> {
        let (mine, theirs) = (self.value(Joiner::Dreadpool)?, self.value(other)?);
        (theirs > 0.0).then(|| mine / theirs)
    }

    /// Whether dreadpool meets the row's target against rayon.
    pub fn verdict(&self) -> Verdict {
        match (self.target, self.ratio_to(Joiner::Rayon)) {
            (Some(limit), Some(ratio)) if ratio <= limit => Verdict::Pass,
            (Some(_), Some(_)) => Verdict::Miss,
            _ => Verdict::NotJudged,
        }
    }
}

/// The fork-join rows as a Markdown table: every joiner's figure, then
/// dreadpool's ratio to rayon and to chili, the target and PASS/MISS.
pub fn markdown_table(rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| fork-join | threads | unit | dreadpool | rayon | chili | serial | dreadpool / rayon | dreadpool / chili | target | verdict |"
    );
    let _ = writeln!(out, "|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|");
    let cell = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), report::figure);
    let ratio = |r: Option<f64>| r.map_or_else(|| "-".to_owned(), |r| format!("{r:.2}x"));
    for row in rows {
        let target = row
            .target
            .map_or_else(|| "-".to_owned(), |t| format!("vs rayon <= {t}"));
        let verdict = row.verdict().markdown();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {target} | {verdict} |",
            row.metric,
            row.threads,
            row.unit,
            cell(row.value(Joiner::Dreadpool)),
            cell(row.value(Joiner::Rayon)),
            cell(row.value(Joiner::Chili)),
            cell(row.value(Joiner::Serial)),
            ratio(row.ratio_to(Joiner::Rayon)),
            ratio(row.ratio_to(Joiner::Chili)),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_compare_with_rayon_only() {
        let row = |dreadpool, rayon, chili, target| Row {
            workload: Workload::Fib,
            metric: "m".into(),
            threads: 2,
            unit: "ns/join",
            values: vec![
                (Joiner::Dreadpool, dreadpool),
                (Joiner::Rayon, rayon),
                (Joiner::Chili, chili),
            ],
            target,
        };
        // Half rayon's time passes even when chili is faster still.
        let r = row(5.0, 10.0, 2.0, Some(0.5));
        assert_eq!(r.verdict(), Verdict::Pass);
        assert_eq!(r.ratio_to(Joiner::Chili), Some(2.5));
        assert_eq!(row(6.0, 10.0, 20.0, Some(0.5)).verdict(), Verdict::Miss);
        assert_eq!(row(6.0, 10.0, 20.0, None).verdict(), Verdict::NotJudged);
        let table = markdown_table(&[r]);
        assert!(
            table.contains("| 0.50x | 2.50x | vs rayon <= 0.5 | PASS |"),
            "{table}"
        );
    }
}
