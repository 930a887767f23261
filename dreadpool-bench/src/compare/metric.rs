//! The table's rows as a type: each [`Metric`] is one row, keys its samples
//! and knows its label, unit, direction and target.

use super::{Scenario, Sizes};
use crate::report::{Better, Target};
use std::fmt;

/// The wake latency percentiles the table reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Quantile {
    /// The median.
    P50,
    /// The 99th percentile.
    P99,
}

impl Quantile {
    /// The quantile, in 0..=1.
    pub fn value(self) -> f64 {
        match self {
            Quantile::P50 => 0.5,
            Quantile::P99 => 0.99,
        }
    }

    /// Its name in the row's label.
    pub fn name(self) -> &'static str {
        match self {
            Quantile::P50 => "p50",
            Quantile::P99 => "p99",
        }
    }
}

/// The spawn loads that other rows run again: on more threads, or recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SpawnLoad {
    /// [`Metric::External`]'s tasks.
    External,
    /// [`Metric::Nested`]'s tree.
    Nested,
}

impl SpawnLoad {
    /// The scenario that runs this load on the pools of `--threads`.
    pub fn scenario(self) -> Scenario {
        match self {
            SpawnLoad::External => Scenario::External,
            SpawnLoad::Nested => Scenario::Nested,
        }
    }

    /// The row of this load on the pools of `--threads`.
    pub fn metric(self) -> Metric {
        match self {
            SpawnLoad::External => Metric::External,
            SpawnLoad::Nested => Metric::Nested,
        }
    }
}

/// One row of the table, and the key its samples are kept under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    /// Time per tiny task spawned from outside.
    External,
    /// Time per task of the nested tree.
    Nested,
    /// Time per child of the fan-out task.
    FanOut,
    /// Time per task, one outside thread per worker spawning at once.
    Producers,
    /// Time per task, the same tasks from one outside thread.
    OneProducer,
    /// The throughput one producer per worker keeps over one producer.
    ProducersKept,
    /// A wake latency percentile.
    Wake(Quantile),
    /// CPU time of an idle pool.
    Idle,
    /// Parallel efficiency of CPU-bound tasks.
    Compute,
    /// The same tasks' efficiency on plain threads with no pool: the
    /// machine's bound (`scenarios::compute_bound`).
    ComputeBound,
    /// Each contender's compute efficiency over the machine's bound: what
    /// its scheduling keeps.
    ComputeOfBound,
    /// Peak RSS per queued task.
    Memory,
    /// A spawn load on the oversubscribed pools.
    Oversubscribed(SpawnLoad),
    /// The throughput a spawn load keeps when oversubscribed.
    OversubscribedKept(SpawnLoad),
    /// Two pools' combined throughput over one pool's alone.
    TwoPoolsCombined,
    /// The slower of two pools' share of their throughput.
    TwoPoolsShare,
    /// An idle pool's CPU beside a busy one.
    IdleBeside,
    /// One offload awaited at a time.
    OffloadSingle,
    /// Many offloads awaited at once.
    OffloadMany,
    /// dreadpool's blocking join, the await's baseline.
    OffloadJoin,
    /// What an await costs over a blocking join.
    OffloadOverJoin,
    /// The recorder's time per task over plain dreadpool's.
    #[cfg(feature = "recorder")]
    RecorderRatio(SpawnLoad),
    /// The recorder's cost per event.
    #[cfg(feature = "recorder")]
    RecorderEvent(SpawnLoad),
}

/// What a row's label and target depend on besides the metric.
#[derive(Debug, Clone, Copy)]
pub struct RowContext {
    /// The sizes the run used.
    pub sizes: Sizes,
    /// `--threads`.
    pub threads: usize,
    /// The oversubscribed pools' threads.
    pub oversub_threads: usize,
    /// One thread wake, in ns: the budget of [`Metric::OffloadOverJoin`].
    pub wake_budget: Option<f64>,
}

impl RowContext {
    /// Whether the pools have at least 16 workers, each on a core of its own.
    fn many_cores(&self) -> bool {
        self.threads.min(super::cores()) >= 16
    }
}

impl Metric {
    /// The recorder's rows, after every scenario's (nested tree first).
    #[cfg(feature = "recorder")]
    pub const RECORDER: [Metric; 4] = [
        Metric::RecorderRatio(SpawnLoad::Nested),
        Metric::RecorderEvent(SpawnLoad::Nested),
        Metric::RecorderRatio(SpawnLoad::External),
        Metric::RecorderEvent(SpawnLoad::External),
    ];

    /// Whether `--sweep` follows it across thread counts: a time per task
    /// on the pools of `--threads`.
    pub fn swept(self) -> bool {
        matches!(
            self,
            Metric::External
                | Metric::Nested
                | Metric::FanOut
                | Metric::Producers
                | Metric::OneProducer
        )
    }

    /// What the row measures, as the table labels it.
    pub fn label(self, cx: &RowContext) -> String {
        let s = &cx.sizes;
        let (threads, oversub) = (cx.threads, cx.oversub_threads);
        match self {
            Metric::External => format!("external: {} tiny tasks from outside", s.external),
            Metric::Nested => format!(
                "nested: binary tree, {} levels ({} tasks)",
                s.levels,
                (1u64 << s.levels) - 1
            ),
            Metric::FanOut => format!("fan-out: one task spawns {}", s.fanout),
            Metric::Producers => format!(
                "producers: one outside thread per worker, {} tiny tasks in all, at once",
                s.producers
            ),
            Metric::OneProducer => format!(
                "producers: one outside thread alone, the same {} tiny tasks",
                s.producers
            ),
            Metric::ProducersKept => {
                format!("producers: throughput kept, {threads} producers vs one")
            }
            Metric::Wake(q) => format!(
                "wake latency {} ({} spawns into an idle pool)",
                q.name(),
                s.wake_samples
            ),
            Metric::Idle => "idle: CPU time of a warmed-up idle pool".to_owned(),
            Metric::Compute => format!(
                "compute: {} tasks of 10-20 us, parallel efficiency",
                s.compute_tasks
            ),
            Metric::ComputeBound => format!(
                "compute: the machine's bound, {threads} plain threads taking the tasks off one index"
            ),
            Metric::ComputeOfBound => "compute: efficiency over the machine's bound".to_owned(),
            Metric::Memory => format!(
                "memory: peak RSS per queued task ({} queued)",
                s.memory_tasks
            ),
            Metric::Oversubscribed(load) => format!("oversubscribed {load}, {oversub} threads"),
            Metric::OversubscribedKept(load) => {
                format!("oversubscribed {load}: throughput kept, {oversub} vs {threads} threads")
            }
            Metric::TwoPoolsCombined => format!(
                "two pools of {threads} threads fed at once: combined throughput over one alone"
            ),
            Metric::TwoPoolsShare => {
                "two pools fed at once: the slower pool's share of the throughput".to_owned()
            }
            Metric::IdleBeside => "an idle pool beside a busy one: its CPU".to_owned(),
            Metric::OffloadSingle => {
                "offload: await one at a time from a current-thread runtime".to_owned()
            }
            Metric::OffloadMany => format!(
                "offload: {} awaits at once from a multi-thread runtime",
                s.offload_many
            ),
            Metric::OffloadJoin => {
                "offload: blocking TaskHandle::join from a plain thread".to_owned()
            }
            Metric::OffloadOverJoin => format!(
                "offload: await minus join (budget: one thread wake, {:.0} ns)",
                cx.wake_budget.unwrap_or(f64::NAN)
            ),
            #[cfg(feature = "recorder")]
            Metric::RecorderRatio(load) => format!(
                "recorder at Tasks level, {}: time per task over dreadpool's",
                load.recorded()
            ),
            #[cfg(feature = "recorder")]
            Metric::RecorderEvent(load) => format!(
                "recorder at Tasks level, {}: cost per event ({} per task)",
                load.recorded(),
                crate::recorder_cost::EVENTS_PER_TASK
            ),
        }
    }

    /// The unit of every figure in the row.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::External
            | Metric::Nested
            | Metric::FanOut
            | Metric::Producers
            | Metric::OneProducer
            | Metric::Oversubscribed(_) => "ns/task",
            Metric::Wake(_) => "us",
            Metric::Idle | Metric::IdleBeside => "ms/s",
            Metric::Compute
            | Metric::ComputeBound
            | Metric::ComputeOfBound
            | Metric::ProducersKept
            | Metric::OversubscribedKept(_)
            | Metric::TwoPoolsCombined
            | Metric::TwoPoolsShare => "x",
            Metric::Memory => "B/task",
            Metric::OffloadSingle | Metric::OffloadMany | Metric::OffloadJoin => "ns/offload",
            Metric::OffloadOverJoin => "ns",
            #[cfg(feature = "recorder")]
            Metric::RecorderRatio(_) => "x",
            #[cfg(feature = "recorder")]
            Metric::RecorderEvent(_) => "ns",
        }
    }

    /// Which way the figure improves.
    pub fn better(self) -> Better {
        match self {
            Metric::Compute
            | Metric::ComputeBound
            | Metric::ComputeOfBound
            | Metric::ProducersKept
            | Metric::OversubscribedKept(_)
            | Metric::TwoPoolsCombined
            | Metric::TwoPoolsShare => Better::Higher,
            Metric::External
            | Metric::Nested
            | Metric::FanOut
            | Metric::Producers
            | Metric::OneProducer
            | Metric::Wake(_)
            | Metric::Idle
            | Metric::Memory
            | Metric::Oversubscribed(_)
            | Metric::IdleBeside
            | Metric::OffloadSingle
            | Metric::OffloadMany
            | Metric::OffloadJoin
            | Metric::OffloadOverJoin => Better::Lower,
            #[cfg(feature = "recorder")]
            Metric::RecorderRatio(_) | Metric::RecorderEvent(_) => Better::Lower,
        }
    }

    /// What dreadpool must reach (issue 6's targets, and later issues').
    pub fn target(self, cx: &RowContext) -> Target {
        match self {
            Metric::External => Target::RatioAtMost(0.5),
            Metric::Nested | Metric::FanOut => Target::RatioAtMost(0.9),
            // Issue 26 sets these for 16 workers on 16 cores, where they mean something.
            Metric::Producers if cx.many_cores() => Target::RatioAtMost(0.5),
            Metric::ProducersKept if cx.many_cores() => Target::AtLeast(4.0),
            Metric::Producers | Metric::OneProducer | Metric::ProducersKept => Target::None,
            Metric::Wake(_) => Target::RatioAtMost(1.0),
            Metric::Idle | Metric::IdleBeside => Target::AtMost(0.1),
            Metric::Compute => Target::AtLeast(0.95),
            Metric::Memory => Target::AtMost(64.0),
            Metric::OversubscribedKept(_) | Metric::TwoPoolsCombined => Target::AtLeast(0.8),
            Metric::TwoPoolsShare => Target::AtLeast(0.35),
            Metric::OffloadOverJoin => cx
                .wake_budget
                .map_or(Target::None, |wake| Target::AtMost(wake.round())),
            // Issue 15's budgets are on the nested tree only.
            #[cfg(feature = "recorder")]
            Metric::RecorderRatio(SpawnLoad::Nested) => Target::AtMost(1.5),
            #[cfg(feature = "recorder")]
            Metric::RecorderEvent(SpawnLoad::Nested) => Target::AtMost(5.0),
            #[cfg(feature = "recorder")]
            Metric::RecorderRatio(SpawnLoad::External)
            | Metric::RecorderEvent(SpawnLoad::External) => Target::None,
            // The bound explains the compute row's target; it sets none.
            Metric::ComputeBound | Metric::ComputeOfBound => Target::None,
            Metric::Oversubscribed(_)
            | Metric::OffloadSingle
            | Metric::OffloadMany
            | Metric::OffloadJoin => Target::None,
        }
    }
}

impl SpawnLoad {
    /// How the recorder's rows name the load.
    #[cfg(feature = "recorder")]
    fn recorded(self) -> &'static str {
        match self {
            SpawnLoad::External => "external spawns",
            SpawnLoad::Nested => "nested tree",
        }
    }
}

impl fmt::Display for SpawnLoad {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SpawnLoad::External => "external",
            SpawnLoad::Nested => "nested",
        })
    }
}
