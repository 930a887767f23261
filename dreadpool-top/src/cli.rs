//! Command-line flags.

use crate::pattern::{Pattern, DEFAULT_RATE};
use clap::{ArgGroup, Args, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

/// The most tasks per second `--rate` accepts.
pub const MAX_RATE: u64 = 1_000_000;

/// A live terminal dashboard of a dreadpool's workers: queue depths, steals,
/// sleeps and wakeups, respawns, latency. By default it runs a demo pool
/// under a built-in load; `--attach` shows another process's pools.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "dreadpool-top",
    version,
    about,
    long_about = None,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// Instead of the dashboard, one of these.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Worker threads of the demo pool.
    #[arg(short, long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: u16,

    /// The demo's load pattern (switch live with 1..7).
    #[arg(short, long, value_enum, default_value_t = Pattern::Steady)]
    pub pattern: Pattern,

    /// The demo's load, tasks per second (0 for none; change live with + and -).
    #[arg(short, long, default_value_t = DEFAULT_RATE, value_parser = clap::value_parser!(u64).range(0..=MAX_RATE))]
    pub rate: u64,

    /// Sampling and redraw period: milliseconds, or with a unit (250ms, 1s).
    #[arg(long, value_name = "MS", default_value = "500", value_parser = parse_refresh)]
    pub refresh: Duration,

    /// Seed of the demo load, for reproducible runs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Show the pools of a process serving `dreadpool_metrics::Exporter` on
    /// ADDR: a Unix socket path or a loopback host:port.
    #[arg(long, value_name = "ADDR", conflicts_with_all = ["threads", "pattern", "rate", "seed"])]
    pub attach: Option<String>,

    /// No terminal UI: run (or attach) for --duration, then print the report.
    #[arg(long, requires = "duration")]
    pub headless: bool,

    /// How long a headless run lasts: seconds, or with a unit (500ms, 10s, 2m).
    #[arg(long, value_name = "D", value_parser = parse_duration, requires = "headless")]
    pub duration: Option<Duration>,

    /// Print the headless report as JSON.
    #[arg(long, requires = "headless")]
    pub json: bool,

    /// At the end of a headless run, write the flight recording to PATH:
    /// Perfetto's protobuf trace (open it at ui.perfetto.dev), or the Chrome
    /// JSON trace if PATH ends in `.json`. The demo then records every task;
    /// attached, every pool of the host is written (the first to PATH, the
    /// others to PATH with the pool's name before the extension).
    #[arg(long, value_name = "PATH", requires = "headless")]
    pub record: Option<PathBuf>,

    /// Where the `r` key saves recordings (default: the current directory).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub record_dir: PathBuf,
}

/// What `dreadpool-top` can do besides the dashboard.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Explains a recording's longest waits, each with its cause.
    ///
    /// Reads a trace this project wrote (its Chrome JSON form), or records
    /// an attached host's pool now; then lists the longest schedule delays
    /// (spawn to start), each with its cause, and the waits by cause. The
    /// recording must be at `RecordLevel::Tasks`.
    Explain(ExplainArgs),
}

/// `dreadpool-top explain`'s flags.
#[derive(Debug, Clone, Args)]
#[command(group(ArgGroup::new("recording").required(true).args(["path", "attach"])))]
pub struct ExplainArgs {
    /// A trace this project wrote, in its Chrome JSON form (a name ending
    /// in `.json`: `--record`, the `r` key, `write_chrome_json`).
    #[arg(value_name = "PATH")]
    pub path: Option<PathBuf>,

    /// Or the host's exporter, to record now: a Unix socket path, or
    /// HOST:PORT.
    #[arg(long, value_name = "ADDR")]
    pub attach: Option<String>,

    /// Which of the host's pools (its index in the exporter's list).
    #[arg(long, default_value_t = 0)]
    pub pool: usize,

    /// How many of the longest waits to list.
    #[arg(long, default_value_t = 10)]
    pub top: usize,

    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Parses `500`, `500ms`, `1.5s` or `2m`; a bare number is in `bare` units.
fn parse_with(text: &str, bare: Duration) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration (try 500ms, 2s or 1m)"))?;
    let scale = match unit.trim() {
        "" => bare,
        "ms" => Duration::from_millis(1),
        "s" => Duration::from_secs(1),
        "m" | "min" => Duration::from_secs(60),
        other => return Err(format!("unknown unit `{other}` (use ms, s or m)")),
    };
    let d = scale.mul_f64(value);
    if !value.is_finite() || value < 0.0 {
        return Err(format!("`{text}` is not a duration"));
    }
    Ok(d)
}

/// `--refresh`: bare numbers are milliseconds; 20 ms to 10 s.
pub fn parse_refresh(text: &str) -> Result<Duration, String> {
    let d = parse_with(text, Duration::from_millis(1))?;
    if d < Duration::from_millis(20) || d > Duration::from_secs(10) {
        return Err(format!("refresh must be between 20ms and 10s, not {d:?}"));
    }
    Ok(d)
}

/// `--duration`: bare numbers are seconds; more than zero.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let d = parse_with(text, Duration::from_secs(1))?;
    if d.is_zero() {
        return Err("the duration must be more than zero".into());
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("dreadpool-top").chain(args.iter().copied()))
    }

    #[test]
    fn the_command_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn defaults() {
        let cli = parse(&[]).unwrap();
        assert_eq!(cli.threads, 4);
        assert_eq!(cli.pattern, Pattern::Steady);
        assert_eq!(cli.rate, DEFAULT_RATE);
        assert_eq!(cli.refresh, Duration::from_millis(500));
        assert!(cli.attach.is_none() && !cli.headless);
    }

    #[test]
    fn demo_flags() {
        let cli = parse(&[
            "--threads",
            "8",
            "--pattern",
            "panic-storm",
            "--rate",
            "500",
            "--refresh",
            "250ms",
            "--seed",
            "9",
        ])
        .unwrap();
        assert_eq!(cli.threads, 8);
        assert_eq!(cli.pattern, Pattern::PanicStorm);
        assert_eq!(cli.rate, 500);
        assert_eq!(cli.refresh, Duration::from_millis(250));
        assert_eq!(cli.seed, 9);
        assert_eq!(parse(&["-p", "fan-out"]).unwrap().pattern, Pattern::FanOut);
        assert_eq!(
            parse(&["-p", "fork-join"]).unwrap().pattern,
            Pattern::ForkJoin
        );
    }

    #[test]
    fn headless_needs_a_duration_and_json_needs_headless() {
        assert!(parse(&["--headless"]).is_err());
        assert!(parse(&["--json"]).is_err());
        assert!(parse(&["--duration", "2s"]).is_err());
        let cli = parse(&["--headless", "--duration", "2", "--json"]).unwrap();
        assert_eq!(cli.duration, Some(Duration::from_secs(2)));
        assert!(cli.json);
    }

    #[test]
    fn record_needs_headless_and_record_dir_defaults_to_here() {
        assert!(parse(&["--record", "/tmp/x.json"]).is_err());
        let cli = parse(&["--headless", "--duration", "1", "--record", "/tmp/x.json"]).unwrap();
        assert_eq!(cli.record, Some(PathBuf::from("/tmp/x.json")));
        assert_eq!(parse(&[]).unwrap().record_dir, PathBuf::from("."));
        let cli = parse(&["--record-dir", "/tmp/traces"]).unwrap();
        assert_eq!(cli.record_dir, PathBuf::from("/tmp/traces"));
    }

    #[test]
    fn bad_flags_are_refused() {
        for bad in [
            &["--threads", "0"][..],
            &["--threads", "many"],
            &["--pattern", "chaos"],
            &["--rate", "-1"],
            &["--rate", "99999999"],
            &["--refresh", "1ms"],
            &["--refresh", "5 parsecs"],
            &["--attach", "/tmp/x", "--threads", "2"],
            &["--headless", "--duration", "0"],
            &["--frobnicate"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("300ms"), Ok(Duration::from_millis(300)));
        assert_eq!(parse_refresh("100"), Ok(Duration::from_millis(100)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_refresh("20s").is_err());
    }
}
