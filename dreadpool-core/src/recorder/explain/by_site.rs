//! The profile by spawn site: every explained wait and every run, added up
//! by the site its task was spawned from (`Explanation::by_site`).

use super::TaskWait;
use crate::recorder::recording::{EventKind, Recording};
use crate::recorder::SpawnSite;
use std::collections::HashMap;

/// The waits and runs of the tasks spawned from one site, added up.
///
/// ```
/// use dreadpool::{RecordLevel, ThreadPoolBuilder};
///
/// let pool = ThreadPoolBuilder::new()
///     .with_threads(2)
///     .with_record_level(RecordLevel::Tasks)
///     .build();
/// for _ in 0..100 {
///     pool.spawn(|| {});
/// }
/// pool.join();
/// let explanation = pool.recording().explain(5)?;
/// let top = &explanation.by_site[0];
/// assert_eq!(top.waits, 100);
/// println!("{}: {} waits, {} ns in all", top.site.as_ref().unwrap(), top.waits, top.wait_total_ns);
/// # Ok::<(), dreadpool::ExplainError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteTotal {
    /// The site; `None` for the tasks whose spawn carried none.
    pub site: Option<SpawnSite>,
    /// How many explained waits (tasks with both spawn and start) it had.
    pub waits: usize,
    /// Their delays added up.
    pub wait_total_ns: u64,
    /// The 99th percentile of their delays.
    pub wait_p99_ns: u64,
    /// The time its tasks ran, added up (runs that ended in the recording).
    pub run_ns: u64,
}

/// Waits and run times by site, the largest wait total first (then run
/// time, then the site, for a stable order).
pub(super) fn by_site(recording: &Recording, waits: &[TaskWait]) -> Vec<SiteTotal> {
    let mut delays: HashMap<Option<&SpawnSite>, Vec<u64>> = HashMap::new();
    for wait in waits {
        delays
            .entry(recording.task_site(wait.task))
            .or_default()
            .push(wait.delay_ns());
    }
    let mut run_ns: HashMap<Option<&SpawnSite>, u64> = HashMap::new();
    let mut begun: HashMap<u64, u64> = HashMap::new();
    for event in recording.events() {
        match event.kind {
            EventKind::RunBegin { task: Some(task) } => {
                begun.insert(task, event.time_ns);
            }
            EventKind::RunEnd {
                task: Some(task), ..
            } => {
                if let Some(began) = begun.remove(&task) {
                    *run_ns.entry(recording.task_site(task)).or_default() +=
                        event.time_ns.saturating_sub(began);
                }
            }
            _ => {}
        }
    }
    let mut sites: Vec<Option<&SpawnSite>> = delays.keys().chain(run_ns.keys()).copied().collect();
    sites.sort();
    sites.dedup();
    let mut totals: Vec<SiteTotal> = sites
        .into_iter()
        .map(|site| {
            let mut waits = delays.remove(&site).unwrap_or_default();
            waits.sort_unstable();
            let p99 = match waits.len() {
                0 => 0,
                n => waits[(n * 99).div_ceil(100) - 1],
            };
            SiteTotal {
                site: site.cloned(),
                waits: waits.len(),
                wait_total_ns: waits.iter().sum(),
                wait_p99_ns: p99,
                run_ns: run_ns.get(&site).copied().unwrap_or(0),
            }
        })
        .collect();
    totals.sort_by(|a, b| {
        b.wait_total_ns
            .cmp(&a.wait_total_ns)
            .then(b.run_ns.cmp(&a.run_ns))
            .then(a.site.cmp(&b.site))
    });
    totals
}
