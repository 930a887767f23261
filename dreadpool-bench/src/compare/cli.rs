//! `compare`'s command line, parsed with clap: the flags, defaults and help
//! of the parser it replaced, plus the hidden flags of a child process.

use super::child::ChildKind;
use super::scenario::{Name, Selection};
use super::{cores, Options, Sizes};
use crate::contenders::{Contender, Tuning};
use clap::{ArgAction, Parser};
use std::str::FromStr;
use std::time::Duration;

/// What one invocation of the binary is for.
#[derive(Debug, Clone)]
pub enum Invocation {
    /// Run the comparison.
    Compare(Options),
    /// Run the comparison at each thread count (`--sweep`).
    Sweep {
        /// The options of every run but its thread count.
        options: Options,
        /// The thread counts, in the order given.
        counts: Vec<usize>,
    },
    /// Run one child-process measurement and print `RESULT <figure>`.
    Child {
        /// What to measure.
        kind: ChildKind,
        /// Whose pool.
        contender: Contender,
        /// Its thread count.
        threads: usize,
        /// The sizes (only the idle window and memory task count are used).
        sizes: Sizes,
        /// dreadpool's settings, where not its defaults.
        tuning: Tuning,
    },
}

/// The usage line, as the hand-written parser printed it.
const USAGE: &str = "compare [--quick] [--threads N | --sweep N,...] [--reps N] \
                     [--contenders a,b,...] [SCENARIO...]";

/// What `compare` does, under the usage line.
const ABOUT: &str = "\
Runs dreadpool against rayon, threadpool, tokio and the seed design, and prints
a Markdown table with dreadpool's ratio to the best peer and PASS/MISS against
the targets of issue 6; then dreadpool::join against rayon::join and chili on
fork-join workloads (issue 16), on 1 thread and on --threads.";

/// The command line. Flags given twice keep the last value, as before.
#[derive(Debug, Parser)]
#[command(
    name = "compare",
    override_usage = USAGE,
    about = ABOUT,
    help_template = "usage: {usage}\n\n{about}\n\n{options}\n{positionals}\n",
    disable_help_flag = true,
    args_override_self = true
)]
struct Cli {
    /// smaller sizes and fewer repetitions (about a minute)
    #[arg(long, overrides_with = "smoke")]
    quick: bool,

    /// seconds, even in a debug build (the test suite's run)
    #[arg(long, hide = true, overrides_with = "quick")]
    smoke: bool,

    /// worker threads of every pool (default: the number of CPUs)
    #[arg(long, value_name = "N")]
    threads: Option<u64>,

    /// run at each of these thread counts (e.g. 2,4,8,16), then print how
    /// each time per task scales from the first count to the last
    #[arg(
        long,
        value_name = "LIST",
        conflicts_with = "threads",
        verbatim_doc_comment
    )]
    sweep: Option<ThreadCounts>,

    /// repetitions (default: 7, or 3 with --quick)
    #[arg(long, value_name = "N")]
    reps: Option<u64>,

    /// comma-separated subset of: dreadpool,rayon,threadpool,tokio,seed
    /// (the fork-join group always runs dreadpool, rayon and chili)
    #[arg(long, value_name = "LIST", verbatim_doc_comment)]
    contenders: Option<Contenders>,

    /// dreadpool's with_backlog (default: dreadpool's default)
    #[arg(long, value_name = "N")]
    backlog: Option<u64>,

    /// dreadpool's with_global_queue_shards (default: dreadpool's default, 1)
    #[arg(long, value_name = "N")]
    global_shards: Option<u64>,

    /// wake latency samples per contender (default: 60000, 300 with --quick)
    #[arg(long, value_name = "N")]
    wake_samples: Option<u32>,

    /// before each repetition, wait up to SECS for other processes
    /// to use less than 0.1 CPU (default: 60, or 0 with --quick)
    #[arg(long, value_name = "SECS", verbatim_doc_comment)]
    quiet_wait: Option<u64>,

    /// any of: external nested fanout producers wake idle compute memory oversub
    /// offload twopools idlebeside
    /// fork-join: fib tree quicksort nqueens scope, or forkjoin for all five
    /// (also accepted as --filter a,b,...); default: all
    #[arg(value_name = "SCENARIO", verbatim_doc_comment)]
    scenarios: Vec<Name>,

    /// The same names as SCENARIO, comma-separated.
    #[arg(long, value_name = "LIST", value_delimiter = ',', hide = true)]
    filter: Vec<Name>,

    /// Run one child-process measurement (the parent passes the rest).
    #[arg(long, value_name = "KIND", hide = true, requires = "contender")]
    child: Option<ChildKind>,

    /// The child's contender.
    #[arg(long, value_name = "NAME", hide = true)]
    contender: Option<Contender>,

    /// Tasks the memory child queues.
    #[arg(long, value_name = "N", hide = true)]
    memory_tasks: Option<u64>,

    /// How long the idle child watches, in milliseconds.
    #[arg(long, value_name = "MS", hide = true)]
    idle_ms: Option<u64>,

    /// Print the help (not listed in it, as before).
    #[arg(short, long, action = ArgAction::Help, hide = true)]
    help: Option<bool>,
}

/// `--contenders`: sorted, each once.
#[derive(Debug, Clone)]
struct Contenders(Vec<Contender>);

impl FromStr for Contenders {
    type Err = String;

    fn from_str(list: &str) -> Result<Self, Self::Err> {
        let mut contenders = list
            .split(',')
            .map(str::parse)
            .collect::<Result<Vec<Contender>, _>>()?;
        contenders.sort();
        contenders.dedup();
        Ok(Contenders(contenders))
    }
}

/// `--sweep`: thread counts, each at least 1.
#[derive(Debug, Clone)]
struct ThreadCounts(Vec<usize>);

impl FromStr for ThreadCounts {
    type Err = String;

    fn from_str(list: &str) -> Result<Self, Self::Err> {
        let count = |n: &str| match n.trim().parse::<usize>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(format!("{n:?} is not a thread count (1 or more)")),
        };
        list.split(',')
            .map(count)
            .collect::<Result<_, _>>()
            .map(ThreadCounts)
    }
}

impl Cli {
    fn invocation(self) -> Invocation {
        let mut sizes = if self.smoke {
            Sizes::SMOKE
        } else if self.quick {
            Sizes::QUICK
        } else {
            Sizes::FULL
        };
        if let Some(reps) = self.reps {
            sizes.reps = reps.max(1) as usize;
        }
        if let Some(n) = self.wake_samples {
            sizes.wake_samples = n.max(1);
        }
        if let Some(tasks) = self.memory_tasks {
            sizes.memory_tasks = tasks;
        }
        if let Some(ms) = self.idle_ms {
            sizes.idle_window = Duration::from_millis(ms);
        }
        let threads = self.threads.map_or_else(cores, |n| n.max(1) as usize);
        let tuning = Tuning {
            backlog: self.backlog.map(|n| n.max(1) as usize),
            global_queue_shards: self
                .global_shards
                .map(|n| (n as usize).clamp(1, dreadpool::MAX_GLOBAL_QUEUE_SHARDS)),
        };
        if let (Some(kind), Some(contender)) = (self.child, self.contender) {
            return Invocation::Child {
                kind,
                contender,
                threads,
                sizes,
                tuning,
            };
        }
        // Any size or repetition flag drops the default wait, as it always has.
        let quiet_wait = self
            .quiet_wait
            .unwrap_or(if sizes == Sizes::FULL { 60 } else { 0 });
        let names = self.scenarios.into_iter().chain(self.filter).collect();
        let options = Options {
            threads,
            sizes,
            selection: Selection::new(names),
            contenders: self
                .contenders
                .map_or_else(|| Contender::ALL.to_vec(), |c| c.0),
            exe: std::env::current_exe().ok(),
            tuning,
            quiet_wait: Duration::from_secs(quiet_wait),
        };
        match self.sweep {
            Some(ThreadCounts(counts)) => Invocation::Sweep { options, counts },
            None => Invocation::Compare(options),
        }
    }
}

/// Parses the command line (without the program name). The error prints
/// itself with [`clap::Error::exit`]: the help on stdout (status 0), a
/// mistake on stderr (status 2).
pub fn parse_args<I>(args: I) -> Result<Invocation, clap::Error>
where
    I: IntoIterator<Item = String>,
{
    let cli = Cli::try_parse_from(std::iter::once("compare".to_owned()).chain(args))?;
    Ok(cli.invocation())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Scenario;
    use crate::fork_join::Workload;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Invocation, clap::Error> {
        parse_args(args.iter().map(|a| (*a).to_owned()))
    }

    fn compare(args: &[&str]) -> Options {
        match parse(args) {
            Ok(Invocation::Compare(options)) => options,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn wake_samples_sets_the_sample_count_after_quick() {
        let options = compare(&["--wake-samples", "40000", "--quick", "wake"]);
        assert_eq!(options.sizes.wake_samples, 40_000);
        assert_eq!(options.sizes.reps, Sizes::QUICK.reps);
        assert!(options.selection.wants(Scenario::Wake));
        assert!(!options.selection.wants(Scenario::External));
    }

    #[test]
    fn wake_samples_needs_a_number() {
        let error = parse(&["--wake-samples", "lots"]).unwrap_err().to_string();
        assert!(error.contains("--wake-samples"), "{error}");
        let error = parse(&["--wake-samples", "99999999999"])
            .unwrap_err()
            .to_string();
        assert!(error.contains("is not in 0..=4294967295"), "{error}");
    }

    #[test]
    fn defaults_are_the_full_run_on_every_cpu() {
        let options = compare(&[]);
        assert_eq!(options.threads, cores());
        assert_eq!(options.sizes, Sizes::FULL);
        assert_eq!(options.contenders, Contender::ALL);
        assert_eq!(options.selection, Selection::default());
        assert_eq!(options.tuning, Tuning::default());
        assert_eq!(options.quiet_wait, Duration::from_secs(60));
        assert_eq!(compare(&["--quick"]).quiet_wait, Duration::ZERO);
        assert_eq!(compare(&["--quiet-wait", "5"]).quiet_wait.as_secs(), 5);
    }

    #[test]
    fn numbers_are_at_least_one_and_the_last_one_counts() {
        let options = compare(&[
            "--threads",
            "0",
            "--reps",
            "0",
            "--backlog",
            "0",
            "--global-shards",
            "0",
        ]);
        assert_eq!((options.threads, options.sizes.reps), (1, 1));
        assert_eq!(options.tuning.backlog, Some(1));
        assert_eq!(options.tuning.global_queue_shards, Some(1));
        let too_many = compare(&["--global-shards", "100000"]);
        assert_eq!(
            too_many.tuning.global_queue_shards,
            Some(dreadpool::MAX_GLOBAL_QUEUE_SHARDS)
        );
        assert_eq!(compare(&["--threads", "2", "--threads", "5"]).threads, 5);
        assert_eq!(compare(&["--quick", "--smoke"]).sizes, Sizes::SMOKE);
        assert_eq!(compare(&["--smoke", "--quick"]).sizes, Sizes::QUICK);
    }

    #[test]
    fn contenders_are_sorted_once_each() {
        let options = compare(&["--contenders", "seed,dreadpool,seed"]);
        assert_eq!(options.contenders, [Contender::Dreadpool, Contender::Seed]);
        let error = parse(&["--contenders", "foo"]).unwrap_err().to_string();
        assert!(error.contains("unknown contender \"foo\""), "{error}");
    }

    #[test]
    fn names_come_as_arguments_or_through_filter() {
        let options = compare(&["--filter", "nested,fib", "oversub", "scope"]);
        let selection = &options.selection;
        assert!(selection.wants(Scenario::Nested) && selection.wants(Scenario::Oversub));
        assert!(!selection.wants(Scenario::External));
        assert_eq!(
            selection.workloads(),
            [Workload::Fib, Workload::Scope, Workload::NestedScopes]
        );
        let error = parse(&["no-such-scenario"]).unwrap_err();
        assert_eq!(error.exit_code(), 2);
        assert!(error.to_string().contains("unknown scenario"), "{error}");
    }

    #[test]
    fn a_sweep_takes_thread_counts_instead_of_threads() {
        match parse(&["--sweep", "2,4,8,16", "external"]) {
            Ok(Invocation::Sweep { options, counts }) => {
                assert_eq!(counts, [2, 4, 8, 16]);
                assert!(options.selection.wants(Scenario::External));
            }
            other => panic!("{other:?}"),
        }
        for wrong in [
            &["--sweep", "2,0"][..],
            &["--sweep", "2,x"],
            &["--sweep", "4", "--threads", "2"],
        ] {
            assert_eq!(parse(wrong).unwrap_err().exit_code(), 2, "{wrong:?}");
        }
    }

    #[test]
    fn a_child_needs_its_contender() {
        match parse(&[
            "--child",
            "memory",
            "--contender",
            "rayon",
            "--memory-tasks",
            "9",
        ]) {
            Ok(Invocation::Child {
                kind,
                contender,
                sizes,
                ..
            }) => {
                assert_eq!((kind, contender), (ChildKind::Memory, Contender::Rayon));
                assert_eq!(sizes.memory_tasks, 9);
            }
            other => panic!("{other:?}"),
        }
        assert!(parse(&["--child", "idle"]).is_err());
    }

    #[test]
    fn the_help_names_every_flag_and_scenario() {
        let help = Cli::command().render_help().to_string();
        assert!(
            help.starts_with(&format!("usage: {USAGE}\n\n{ABOUT}\n")),
            "{help}"
        );
        for flag in [
            "--quick",
            "--threads",
            "--sweep",
            "--reps",
            "--contenders",
            "--backlog",
            "--global-shards",
            "--wake-samples",
            "--quiet-wait",
            "--filter a,b,...",
        ] {
            assert!(help.contains(flag), "no {flag} in\n{help}");
        }
        let names = Scenario::ALL.map(Scenario::name);
        for name in names.into_iter().chain(Workload::names()) {
            assert!(help.contains(&format!(" {name}")), "no {name} in\n{help}");
        }
        assert!(
            !help.contains("--child") && !help.contains("--smoke"),
            "{help}"
        );
        assert_eq!(parse(&["--help"]).unwrap_err().exit_code(), 0);
    }
}
