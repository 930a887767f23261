//! The comparison's [`Harness`]: the pools, built and warmed up once, and
//! one function per [`Scenario`] that measures it on every contender in
//! the repetition's turn order.

use super::child::{spawn_child, ChildKind};
use super::metric::{Metric, SpawnLoad};
use super::samples::{Samples, WakeRecord};
use super::{cores, Options, Scenario, Sizes, QUIET};
use crate::contenders::{Contender, PoolSet};
use crate::fork_join;
use crate::offload::{self, OffloadPools};
#[cfg(feature = "recorder")]
use crate::recorder_cost::recorder_pair;
use crate::scenarios::{
    calibrate_spin, compute_bound, compute_plan, compute_serial, Compute, External, FanOut, Nested,
    Producers, Wake,
};
use crate::sys;
use crate::two_pools::{IdleBeside, TwoPools};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The recorder's back-to-back blocks per repetition (`recorder_cost.rs`):
/// one block's ratio varies too much to judge (`BENCHMARKS.md`, "The flight
/// recorder (issue 15)").
#[cfg(feature = "recorder")]
const RECORDER_BLOCKS: usize = 3;

/// Wake latency samples a contender takes in one turn.
pub const WAKE_BLOCK: u32 = 50;

/// Everything a run keeps: its pools and inputs, and what it measured.
pub(super) struct Harness<'a> {
    options: &'a Options,
    sizes: Sizes,
    /// The repetition under way.
    rep: usize,
    pub(super) oversub_threads: usize,
    pools: PoolSet,
    oversub: PoolSet,
    /// The second pool of each kind, for the two-pool scenarios; its
    /// threads are named `benchB-...`.
    second: PoolSet,
    /// The compute scenario's work list (empty when it does not run).
    plan: &'static [u64],
    offload: Option<&'static OffloadPools>,
    pub(super) fork_join: Option<fork_join::Bench>,
    pub(super) samples: Samples,
    pub(super) wake: BTreeMap<Contender, WakeRecord>,
    /// One thread wake, in ns, per repetition: the offload rows' budget.
    pub(super) wake_budget: Vec<f64>,
    pub(super) problems: Vec<String>,
    /// Other processes' CPU use (in CPUs) just before each repetition.
    pub(super) background: Vec<f64>,
}

impl<'a> Harness<'a> {
    /// Builds and warms up the pools and inputs of what `options` selects.
    pub(super) fn new(options: &'a Options) -> Harness<'a> {
        let sizes = options.sizes;
        let selection = &options.selection;
        let oversub_threads = 4 * cores();
        let mut pools = PoolSet::new(options.threads).with_tuning(options.tuning);
        let mut oversub = PoolSet::new(oversub_threads).with_tuning(options.tuning);
        let second = PoolSet::new(options.threads)
            .with_tuning(options.tuning)
            .with_tag("B");
        // Warm up every pool and its allocator arenas (fork-join has its own pools).
        let contenders = options.contenders.iter().copied();
        for c in contenders.filter(|_| selection.any_scenario()) {
            pools.run(c, &External { tasks: 10_000 });
            pools.run(c, &Nested { levels: 10 });
            if selection.wants(Scenario::Oversub) {
                oversub.run(c, &External { tasks: 10_000 });
            }
        }
        let plan: &'static [u64] = if selection.wants(Scenario::Compute) {
            let ns_per_iteration = calibrate_spin(Duration::from_millis(40));
            eprintln!("compute: one spin iteration takes {ns_per_iteration:.3} ns");
            Vec::leak(compute_plan(
                sizes.compute_tasks,
                ns_per_iteration,
                Duration::from_micros(10),
                Duration::from_micros(20),
            ))
        } else {
            &[]
        };
        // The fork-join group: its own pools on 1 thread and on `--threads`.
        let workloads = selection.workloads();
        let fork_join = (!workloads.is_empty())
            .then(|| fork_join::Bench::new(sizes.fork_join, &[1, options.threads], &workloads));
        let offload = selection.wants(Scenario::Offload).then(|| {
            let pools: &'static OffloadPools =
                Box::leak(Box::new(OffloadPools::new(options.threads)));
            let on = options.contenders.iter().copied();
            for c in on.filter(|&c| Scenario::Offload.runs_on(c)) {
                pools.one_at_a_time(c, 1_000);
                pools.many_at_once(c, 1_000);
            }
            pools
        });
        Harness {
            options,
            sizes,
            rep: 0,
            oversub_threads,
            pools,
            oversub,
            second,
            plan,
            offload,
            fork_join,
            samples: Samples::default(),
            wake: BTreeMap::new(),
            wake_budget: Vec::new(),
            problems: Vec::new(),
            background: Vec::new(),
        }
    }

    /// The options of the run.
    pub(super) fn options(&self) -> &'a Options {
        self.options
    }

    /// Repetition `rep` of everything selected, the contenders' order
    /// rotated by one from the last repetition's.
    pub(super) fn repetition(&mut self, rep: usize) {
        self.rep = rep;
        let mut order = self.options.contenders.clone();
        let turn = rep % order.len().max(1);
        order.rotate_left(turn);
        self.wait_for_machine(rep, &order);
        for scenario in [Scenario::External, Scenario::Nested] {
            self.measure(scenario, &order);
        }
        #[cfg(feature = "recorder")]
        self.recorder_blocks(rep);
        for scenario in [
            Scenario::FanOut,
            Scenario::Producers,
            Scenario::Wake,
            Scenario::Compute,
            Scenario::Oversub,
            Scenario::Offload,
            Scenario::TwoPools,
            Scenario::IdleBeside,
        ] {
            self.measure(scenario, &order);
        }
        if let Some(bench) = &mut self.fork_join {
            bench.repetition(rep);
        }
        // Child processes last, and only in the first repetitions.
        if rep < self.sizes.child_reps {
            for scenario in [Scenario::Idle, Scenario::Memory] {
                self.measure(scenario, &order);
            }
        }
    }

    /// Waits for the machine to quieten (up to `--quiet-wait`) and reports
    /// the repetition on stderr.
    fn wait_for_machine(&mut self, rep: usize, order: &[Contender]) {
        let load = if self.options.quiet_wait > Duration::ZERO {
            wait_for_quiet(self.options.quiet_wait)
        } else {
            sys::background_load(Duration::from_millis(100))
        };
        self.background.extend(load);
        eprintln!(
            "repetition {}/{} (order: {order:?}, other processes: {} CPUs)",
            rep + 1,
            self.sizes.reps,
            load.map_or_else(|| "?".to_owned(), |l| format!("{l:.2}"))
        );
    }

    /// Measures `scenario`, if selected, on each contender it runs on.
    fn measure(&mut self, scenario: Scenario, order: &[Contender]) {
        if !self.options.selection.wants(scenario) {
            return;
        }
        let order: Vec<Contender> = order
            .iter()
            .copied()
            .filter(|&c| scenario.runs_on(c))
            .collect();
        match scenario {
            Scenario::External => self.external(&order),
            Scenario::Nested => self.nested(&order),
            Scenario::FanOut => self.fan_out(&order),
            Scenario::Producers => self.producers(&order),
            Scenario::Wake => self.wake(&order),
            Scenario::Compute => self.compute(&order),
            Scenario::Oversub => self.oversub(&order),
            Scenario::Offload => self.offload(&order),
            Scenario::TwoPools => self.two_pools(&order),
            Scenario::IdleBeside => self.idle_beside(&order),
            Scenario::Idle => self.in_child(ChildKind::Idle, &order),
            Scenario::Memory => self.in_child(ChildKind::Memory, &order),
        }
    }

    fn external(&mut self, order: &[Contender]) {
        let external = self.external_load();
        for &c in order {
            let took = self.pools.run(c, &external);
            let figure = ns_per_task(took, external.tasks);
            self.samples.push(Metric::External, c, figure);
        }
    }

    fn nested(&mut self, order: &[Contender]) {
        let nested = self.nested_load();
        for &c in order {
            let took = self.pools.run(c, &nested);
            let figure = ns_per_task(took, nested.tasks());
            self.samples.push(Metric::Nested, c, figure);
        }
    }

    fn fan_out(&mut self, order: &[Contender]) {
        let fanout = FanOut {
            children: self.sizes.fanout,
        };
        for &c in order {
            let took = self.pools.run(c, &fanout);
            let figure = ns_per_task(took, fanout.children);
            self.samples.push(Metric::FanOut, c, figure);
        }
    }

    fn producers(&mut self, order: &[Contender]) {
        let tasks = self.sizes.producers;
        let mut runs = [
            (Metric::Producers, self.pools.threads()),
            (Metric::OneProducer, 1),
        ];
        // Alternate which goes first, so neither always finds the pool just woken.
        if self.rep % 2 == 1 {
            runs.reverse();
        }
        for &c in order {
            for (metric, producers) in runs {
                match self.pools.run(c, &Producers { tasks, producers }) {
                    Ok(took) => self.samples.push(metric, c, ns_per_task(took, tasks)),
                    Err(problem) => self.problems.push(format!("{problem} ({c})")),
                }
            }
        }
    }

    fn wake(&mut self, order: &[Contender]) {
        let reps = self.sizes.reps;
        let mut left = (self.sizes.wake_samples as usize).div_ceil(reps).max(1) as u32;
        // Short blocks in turns, so a burst of noise hits every contender alike.
        while left > 0 {
            let block = left.min(WAKE_BLOCK);
            left -= block;
            for &c in order {
                let wake = Wake {
                    samples: block,
                    pause: self.sizes.wake_pause,
                };
                let latencies = self.pools.run(c, &wake);
                self.wake.entry(c).or_default().record_block(latencies);
            }
        }
    }

    fn compute(&mut self, order: &[Contender]) {
        let serial = compute_serial(self.plan);
        let threads = self.pools.threads();
        let bound = compute_bound(self.plan, threads);
        let bound = serial.as_secs_f64() / (bound.as_secs_f64() * threads as f64);
        if bound.is_finite() {
            // The machine's figure, shown in dreadpool's column (as the recorder's).
            self.samples
                .push(Metric::ComputeBound, Contender::Dreadpool, bound);
        }
        for &c in order {
            let took = self.pools.run(c, &Compute { plan: self.plan });
            let efficiency =
                serial.as_secs_f64() / (took.as_secs_f64() * self.pools.threads() as f64);
            self.samples.push(Metric::Compute, c, efficiency);
        }
    }

    fn oversub(&mut self, order: &[Contender]) {
        let (external, nested) = (self.external_load(), self.nested_load());
        for &c in order {
            let took = self.oversub.run(c, &external);
            let figure = ns_per_task(took, external.tasks);
            let metric = Metric::Oversubscribed(SpawnLoad::External);
            self.samples.push(metric, c, figure);
        }
        for &c in order {
            let took = self.oversub.run(c, &nested);
            let figure = ns_per_task(took, nested.tasks());
            let metric = Metric::Oversubscribed(SpawnLoad::Nested);
            self.samples.push(metric, c, figure);
        }
    }

    fn offload(&mut self, order: &[Contender]) {
        let Some(pools) = self.offload else {
            return;
        };
        let (n, many) = (self.sizes.offload, self.sizes.offload_many);
        // The join baseline and the wake budget first, then the patterns in turns.
        offload::settle();
        let join = pools.joins(n);
        self.samples
            .push(Metric::OffloadJoin, Contender::Dreadpool, join);
        self.wake_budget.push(offload::one_wake(n));
        for &c in order {
            offload::settle();
            let figure = pools.one_at_a_time(c, n);
            self.samples.push(Metric::OffloadSingle, c, figure);
        }
        for &c in order {
            offload::settle();
            let figure = pools.many_at_once(c, many);
            self.samples.push(Metric::OffloadMany, c, figure);
        }
    }

    fn two_pools(&mut self, order: &[Contender]) {
        let two = TwoPools {
            tasks: self.sizes.external,
        };
        for &c in order {
            let times = self.pools.run_pair(&mut self.second, c, &two);
            let samples = &mut self.samples;
            samples.push(Metric::TwoPoolsCombined, c, times.combined_over_alone());
            samples.push(Metric::TwoPoolsShare, c, times.smaller_share());
        }
    }

    fn idle_beside(&mut self, order: &[Contender]) {
        let beside = IdleBeside {
            tasks: self.sizes.external / 4,
            window: self.sizes.idle_window,
            idle_prefix: "benchB-",
        };
        for &c in order {
            match self.pools.run_pair(&mut self.second, c, &beside) {
                Some(ms) => self.samples.push(Metric::IdleBeside, c, ms),
                None => self
                    .problems
                    .push(format!("idlebeside/{c}: no /proc/self/task")),
            }
        }
    }

    fn in_child(&mut self, kind: ChildKind, order: &[Contender]) {
        let metric = match kind {
            ChildKind::Idle => Metric::Idle,
            ChildKind::Memory => Metric::Memory,
        };
        for &c in order {
            let figure = match &self.options.exe {
                Some(exe) => spawn_child(exe, kind, c, self.options),
                None => Err("no executable to re-run".to_owned()),
            };
            match figure {
                Ok(v) => self.samples.push(metric, c, v),
                Err(e) => self.problems.push(e),
            }
        }
    }

    /// The recorder's blocks, when both dreadpool contenders run: plain and
    /// recorded back to back on the external and nested loads.
    #[cfg(feature = "recorder")]
    fn recorder_blocks(&mut self, rep: usize) {
        let contenders = &self.options.contenders;
        if !(contenders.contains(&Contender::Dreadpool)
            && contenders.contains(&Contender::DreadpoolTasks))
        {
            return;
        }
        let (external, nested) = (self.external_load(), self.nested_load());
        let selection = &self.options.selection;
        for block in 0..RECORDER_BLOCKS {
            let turn = rep * RECORDER_BLOCKS + block;
            if selection.wants(Scenario::External) {
                let pair = recorder_pair(&mut self.pools, &external, external.tasks, turn);
                self.samples.push_recorded(SpawnLoad::External, pair);
            }
            if selection.wants(Scenario::Nested) {
                let pair = recorder_pair(&mut self.pools, &nested, nested.tasks(), turn);
                self.samples.push_recorded(SpawnLoad::Nested, pair);
            }
        }
    }

    fn external_load(&self) -> External {
        External {
            tasks: self.sizes.external,
        }
    }

    fn nested_load(&self) -> Nested {
        Nested {
            levels: self.sizes.levels,
        }
    }
}

fn ns_per_task(took: Duration, tasks: u64) -> f64 {
    took.as_nanos() as f64 / tasks.max(1) as f64
}

/// Waits up to `max` for other processes to use less than [`QUIET`] CPUs;
/// returns their last measured use.
fn wait_for_quiet(max: Duration) -> Option<f64> {
    let start = Instant::now();
    loop {
        let load = sys::background_load(Duration::from_millis(300))?;
        if load < QUIET || start.elapsed() >= max {
            return Some(load);
        }
    }
}
