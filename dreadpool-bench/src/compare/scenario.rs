//! The spawn benchmarks as a type: each [`Scenario`] has its command-line
//! name, the contenders it runs on and the [`Metric`]s (rows) it reports;
//! a [`Selection`] is what the command line asked for.

use super::metric::{Metric, Quantile, SpawnLoad};
use crate::contenders::Contender;
use crate::fork_join::{self, Workload};
use crate::offload::OffloadPools;
use std::str::FromStr;

/// One spawn benchmark, as the command line names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scenario {
    /// Tiny tasks spawned from one outside thread.
    External,
    /// A binary tree of spawns from inside the pool.
    Nested,
    /// One task spawning many children.
    FanOut,
    /// One outside thread per worker spawning at once, against one alone.
    Producers,
    /// The latency of a spawn into an idle pool.
    Wake,
    /// The CPU an idle pool burns (in a child process).
    Idle,
    /// Parallel efficiency on CPU-bound tasks.
    Compute,
    /// Memory per queued task (in a child process).
    Memory,
    /// External and nested on four times as many threads as cores.
    Oversub,
    /// Two pools in one process, fed at once.
    TwoPools,
    /// An idle pool beside a busy one.
    IdleBeside,
    /// Async code awaiting work on a pool.
    Offload,
}

impl Scenario {
    /// Every scenario, in the table's order.
    pub const ALL: [Scenario; 12] = [
        Scenario::External,
        Scenario::Nested,
        Scenario::FanOut,
        Scenario::Producers,
        Scenario::Wake,
        Scenario::Idle,
        Scenario::Compute,
        Scenario::Memory,
        Scenario::Oversub,
        Scenario::TwoPools,
        Scenario::IdleBeside,
        Scenario::Offload,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::External => "external",
            Scenario::Nested => "nested",
            Scenario::FanOut => "fanout",
            Scenario::Producers => "producers",
            Scenario::Wake => "wake",
            Scenario::Idle => "idle",
            Scenario::Compute => "compute",
            Scenario::Memory => "memory",
            Scenario::Oversub => "oversub",
            Scenario::TwoPools => "twopools",
            Scenario::IdleBeside => "idlebeside",
            Scenario::Offload => "offload",
        }
    }

    /// The rows it reports, in the table's order.
    pub fn metrics(self) -> &'static [Metric] {
        match self {
            Scenario::External => &[Metric::External],
            Scenario::Nested => &[Metric::Nested],
            Scenario::FanOut => &[Metric::FanOut],
            Scenario::Producers => &[
                Metric::Producers,
                Metric::OneProducer,
                Metric::ProducersKept,
            ],
            Scenario::Wake => &[Metric::Wake(Quantile::P50), Metric::Wake(Quantile::P99)],
            Scenario::Idle => &[Metric::Idle],
            Scenario::Compute => &[
                Metric::Compute,
                Metric::ComputeBound,
                Metric::ComputeOfBound,
            ],
            Scenario::Memory => &[Metric::Memory],
            Scenario::Oversub => &[
                Metric::Oversubscribed(SpawnLoad::External),
                Metric::OversubscribedKept(SpawnLoad::External),
                Metric::Oversubscribed(SpawnLoad::Nested),
                Metric::OversubscribedKept(SpawnLoad::Nested),
            ],
            Scenario::TwoPools => &[Metric::TwoPoolsCombined, Metric::TwoPoolsShare],
            Scenario::IdleBeside => &[Metric::IdleBeside],
            Scenario::Offload => &[
                Metric::OffloadSingle,
                Metric::OffloadMany,
                Metric::OffloadJoin,
                Metric::OffloadOverJoin,
            ],
        }
    }

    /// Whether it runs on `contender`'s pool.
    pub fn runs_on(self, contender: Contender) -> bool {
        let peer_or_dreadpool = contender.is_peer() || contender == Contender::Dreadpool;
        match self {
            Scenario::Offload => OffloadPools::has(contender),
            Scenario::TwoPools => peer_or_dreadpool,
            // The seed's threads have no names to find them by.
            Scenario::IdleBeside => peer_or_dreadpool && contender != Contender::Seed,
            _ => true,
        }
    }
}

/// One name on the command line: a spawn scenario, or fork-join workloads
/// (a workload's name, or [`fork_join::GROUP`] for all of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Name {
    /// A spawn scenario.
    Scenario(Scenario),
    /// The fork-join workloads the name selects.
    Workloads(&'static [Workload]),
}

impl FromStr for Name {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(scenario) = Scenario::ALL.into_iter().find(|c| c.name() == s) {
            return Ok(Name::Scenario(scenario));
        }
        Workload::named(s).map(Name::Workloads).ok_or_else(|| {
            let spawn: Vec<&str> = Scenario::ALL.iter().map(|s| s.name()).collect();
            format!(
                "unknown scenario {s:?} (known: {}, {}, {})",
                spawn.join(", "),
                Workload::names().join(", "),
                fork_join::GROUP,
            )
        })
    }
}

/// What a run measures: everything when nothing is named, else the named
/// scenarios and workloads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    names: Vec<Name>,
}

impl Selection {
    /// The scenarios and workloads `names` name; all of them for none.
    pub fn new(names: Vec<Name>) -> Selection {
        Selection { names }
    }

    /// Whether `scenario` runs.
    pub fn wants(&self, scenario: Scenario) -> bool {
        self.names.is_empty() || self.names.contains(&Name::Scenario(scenario))
    }

    /// Whether the fork-join `workload` runs.
    pub fn wants_workload(&self, workload: Workload) -> bool {
        self.names.is_empty()
            || self.names.iter().any(|name| match name {
                Name::Workloads(named) => named.contains(&workload),
                Name::Scenario(_) => false,
            })
    }

    /// Whether any spawn scenario runs.
    pub fn any_scenario(&self) -> bool {
        Scenario::ALL.into_iter().any(|s| self.wants(s))
    }

    /// The fork-join workloads that run, in table order.
    pub fn workloads(&self) -> Vec<Workload> {
        Workload::ALL
            .iter()
            .copied()
            .filter(|&w| self.wants_workload(w))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selection(names: &[&str]) -> Selection {
        Selection::new(names.iter().map(|n| n.parse().unwrap()).collect())
    }

    #[test]
    fn every_name_parses_back_to_its_scenario() {
        for scenario in Scenario::ALL {
            assert_eq!(scenario.name().parse(), Ok(Name::Scenario(scenario)));
            assert!(!scenario.metrics().is_empty(), "{scenario:?}");
        }
        let error = "fan-out".parse::<Name>().unwrap_err();
        assert!(error.contains("unknown scenario \"fan-out\""), "{error}");
        assert!(error.contains("fanout, producers, wake"), "{error}");
        assert!(error.contains("offload, fib"), "{error}");
    }

    #[test]
    fn nothing_named_selects_everything() {
        let all = Selection::default();
        assert!(Scenario::ALL.into_iter().all(|s| all.wants(s)));
        assert_eq!(all.workloads(), Workload::ALL);
    }

    #[test]
    fn names_select_scenarios_and_workloads_apart() {
        let spawn_only = selection(&["external", "oversub"]);
        assert!(spawn_only.wants(Scenario::External) && spawn_only.wants(Scenario::Oversub));
        assert!(!spawn_only.wants(Scenario::Nested));
        assert!(spawn_only.workloads().is_empty());

        let group = selection(&["forkjoin"]);
        assert!(!group.any_scenario());
        assert_eq!(group.workloads(), Workload::ALL);

        let scope = selection(&["scope", "fib"]);
        assert_eq!(
            scope.workloads(),
            [Workload::Fib, Workload::Scope, Workload::NestedScopes]
        );
    }
}
