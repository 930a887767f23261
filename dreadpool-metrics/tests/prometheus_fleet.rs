//! A fleet of two `examples/prometheus.rs` processes scraped by a real
//! Prometheus on loopback, judged by Prometheus' own query API: the fleet's
//! task rate is the sum of its processes' (each agreeing with what the
//! process itself counts), the deployed rules load and evaluate (the
//! fork-join rule sees the processes' joins), `histogram_quantile` over the
//! summed buckets
//! gives a finite p99 inside the range the processes' buckets allow, and
//! `promtool check metrics` accepts a scrape.
//!
//! Needs `prometheus` and `promtool` (Debian's `prometheus` package): skipped
//! without them, except under `CI`, where it fails.
#![cfg(feature = "metrics-rs")]

mod common;

use common::process::{build_example, get, require_tool, start_example, urlencode};
use common::process::{Reaped, Scratch};
use serde_json::Value;
use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How long Prometheus may take to start, scrape and answer, on a loaded
/// two-core machine. A correct run needs about ten seconds.
const PATIENCE: Duration = Duration::from_secs(120);

/// `deploy/prometheus/`'s rule files.
const RULE_FILES: [&str; 2] = ["recording.rules.yml", "alerts.rules.yml"];

/// Rate windows of the queries: five scrapes at one per second.
const WINDOW: &str = "5s";

/// A running Prometheus and its HTTP address.
struct Prometheus {
    _child: Reaped,
    addr: SocketAddr,
}

impl Prometheus {
    /// Starts Prometheus scraping `targets` every second, storing in
    /// `dir`. The port is picked free (bind to 0, read it, release it); if
    /// another process takes it in between, Prometheus exits and another
    /// port is tried.
    fn start(dir: &Scratch, targets: &[SocketAddr]) -> Prometheus {
        let config = dir.0.join("prometheus.yml");
        let targets: Vec<String> = targets.iter().map(|a| format!("\"{a}\"")).collect();
        // The rules users deploy, loaded by the real server too.
        let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/prometheus");
        let rule_files: Vec<String> = RULE_FILES
            .iter()
            .map(|f| format!("\"{}\"", rules.join(f).display()))
            .collect();
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
                 rule_files: [{}]\n\
                 scrape_configs:\n  - job_name: fleet\n    static_configs:\n      - targets: [{}]\n",
                rule_files.join(", "),
                targets.join(", ")
            ),
        )
        .expect("write the config");
        for _attempt in 0..5 {
            let addr = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port");
            let child = Reaped(
                Command::new("prometheus")
                    .arg(format!("--config.file={}", config.display()))
                    .arg(format!(
                        "--storage.tsdb.path={}",
                        dir.0.join("data").display()
                    ))
                    .arg(format!("--web.listen-address={addr}"))
                    .arg("--log.level=error")
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::inherit())
                    .spawn()
                    .expect("prometheus starts"),
            );
            let mut prometheus = Prometheus {
                _child: child,
                addr,
            };
            if prometheus.wait_ready() {
                return prometheus;
            }
        }
        panic!("prometheus did not start on any of 5 free ports");
    }

    /// Polls `/-/ready`; false if Prometheus exited (its port was taken).
    fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Ok((200, _)) = get(self.addr, "/-/ready") {
                return true;
            }
            if self._child.0.try_wait().expect("status").is_some() {
                return false;
            }
            assert!(Instant::now() < deadline, "prometheus never became ready");
            // Not an ordering: a pause between polls of a starting server.
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// An instant query at `time` (Unix seconds; now if `None`): the
    /// result vector.
    fn query(&self, promql: &str, time: Option<f64>) -> Vec<Value> {
        let mut path = format!("/api/v1/query?query={}", urlencode(promql));
        if let Some(t) = time {
            path += &format!("&time={t:.3}");
        }
        let (status, body) = get(self.addr, &path).expect("query prometheus");
        let json: Value = serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("{promql}: not JSON ({e}): {status} {body}"));
        assert_eq!(json["status"], "success", "{promql}: {body}");
        json["data"]["result"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

/// A sample's value and its timestamp.
fn value(sample: &Value) -> (f64, f64) {
    let pair = &sample["value"];
    let t = pair[0].as_f64().expect("a timestamp");
    let v = pair[1]
        .as_str()
        .expect("a value string")
        .parse()
        .expect("a number");
    (v, t)
}

/// Total `dreadpool_tasks_run_total` in a scrape.
fn tasks_run(text: &str) -> u64 {
    text.lines()
        .filter(|l| l.starts_with("dreadpool_tasks_run_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

/// The cumulative `le` buckets of `name` in a scrape, `+Inf` as infinity.
fn buckets(text: &str, name: &str) -> Vec<(f64, u64)> {
    let prefix = format!("{name}_bucket{{");
    text.lines()
        .filter(|l| l.starts_with(&prefix))
        .map(|l| {
            let le = l.split("le=\"").nth(1).and_then(|r| r.split('"').next());
            let le = match le.expect("an le label") {
                "+Inf" => f64::INFINITY,
                le => le.parse().expect("a bound"),
            };
            let count = l.rsplit(' ').next().and_then(|c| c.parse().ok());
            (le, count.expect("a count"))
        })
        .collect()
}

#[test]
fn a_real_prometheus_aggregates_a_fleet_of_two() {
    if !require_tool("prometheus", "the fleet test needs a real Prometheus")
        || !require_tool("promtool", "the fleet test checks a scrape with promtool")
    {
        return;
    }
    // Declared first, dropped last: the processes die before their
    // directory goes.
    let dir = Scratch::new("fleet");
    let executable = build_example();
    let (mut a, a_addr) = start_example(&executable);
    let (mut b, b_addr) = start_example(&executable);
    let scrape = |addr| {
        let (status, text) = get(addr, "/metrics").expect("scrape the example");
        assert_eq!(status, 200, "{text}");
        text
    };
    let started = Instant::now();
    let start_tasks = [tasks_run(&scrape(a_addr)), tasks_run(&scrape(b_addr))];

    let prometheus = Prometheus::start(&dir, &[a_addr, b_addr]);

    // Wait until Prometheus has at least a window's worth of scrapes of
    // both processes, all of them up.
    let deadline = Instant::now() + PATIENCE;
    let enough = "count_over_time(up{job=\"fleet\"}[1m]) >= 6";
    loop {
        let up = prometheus.query("up{job=\"fleet\"} == 1", None);
        if up.len() == 2 && prometheus.query(enough, None).len() == 2 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "prometheus did not scrape both processes six times in {PATIENCE:?}"
        );
        // Not an ordering: Prometheus scrapes once a second on its own.
        thread::sleep(Duration::from_millis(250));
    }

    // The deployed rules loaded, and evaluated without error on real
    // series (after six scrapes at one a second, each has run).
    let (status, body) = get(prometheus.addr, "/api/v1/rules").expect("list the rules");
    assert_eq!(status, 200, "{body}");
    let rules: Value = serde_json::from_str(&body).expect("JSON");
    let groups = rules["data"]["groups"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(groups.len(), 2, "{body}");
    let all: Vec<&Value> = groups
        .iter()
        .flat_map(|g| g["rules"].as_array().into_iter().flatten())
        .collect();
    assert_eq!(all.len(), 16, "{body}");
    for rule in all {
        assert_eq!(rule["health"], "ok", "{rule}");
    }

    // Every query at one instant, so that they see the same samples.
    let at = value(&prometheus.query("vector(time())", None)[0]).0;
    let per_instance = prometheus.query(
        &format!("sum by (instance) (rate(dreadpool_tasks_run_total{{job=\"fleet\"}}[{WINDOW}]))"),
        Some(at),
    );
    let fleet = prometheus.query(
        &format!("sum(rate(dreadpool_tasks_run_total{{job=\"fleet\"}}[{WINDOW}]))"),
        Some(at),
    );
    assert_eq!(per_instance.len(), 2, "{per_instance:?}");
    let rate_of = |addr: SocketAddr| {
        per_instance
            .iter()
            .find(|s| s["metric"]["instance"] == addr.to_string())
            .map(|s| value(s).0)
            .unwrap_or_else(|| panic!("no rate for {addr}: {per_instance:?}"))
    };
    let (rate_a, rate_b) = (rate_of(a_addr), rate_of(b_addr));
    let fleet_rate = value(&fleet[0]).0;
    eprintln!("fleet task rate {fleet_rate:.0}/s = {rate_a:.0}/s (a) + {rate_b:.0}/s (b)");
    assert!(rate_a > 0.0 && rate_b > 0.0, "{rate_a} {rate_b}");
    assert!(
        (fleet_rate - (rate_a + rate_b)).abs() <= 1e-9 * fleet_rate,
        "fleet {fleet_rate} != {rate_a} + {rate_b}"
    );

    // The fork-join counters: each process forks a join per parent task,
    // and the deployed rule sums their rates over the fleet.
    let joins = prometheus.query("job_pool:dreadpool_joins:rate1m{job=\"fleet\"}", Some(at));
    assert_eq!(joins.len(), 1, "{joins:?}");
    let joins_rate = value(&joins[0]).0;
    eprintln!("fleet joins rate {joins_rate:.0}/s");
    assert!(joins_rate > 0.0, "{joins:?}");

    // Each process's rate, as Prometheus saw it, against what the process
    // itself counted over the whole run. Its load is steady bursts, so the
    // two agree within a factor of 2 unless Prometheus scraped the wrong
    // thing or computed rates from the wrong counters.
    let texts = [scrape(a_addr), scrape(b_addr)];
    let elapsed = started.elapsed().as_secs_f64();
    for (i, (seen, text)) in [rate_a, rate_b].into_iter().zip(&texts).enumerate() {
        let own = (tasks_run(text) - start_tasks[i]) as f64 / elapsed;
        eprintln!("process {i}: {own:.0} tasks/s by its own count");
        assert!(
            seen > own / 2.0 && seen < own * 2.0,
            "process {i}: prometheus says {seen}/s, its counters {own}/s"
        );
    }

    // The fleet's p99 from the summed buckets: finite, and inside the
    // range the processes' own buckets allow (the window's tasks are among
    // the ones counted since the start): above the highest bound with no
    // task under it, at most the lowest bound with every task under it.
    let quantile = |q: f64| {
        let result = prometheus.query(
            &format!(
                "histogram_quantile({q}, sum by (le) \
                 (rate(dreadpool_schedule_delay_seconds_bucket{{job=\"fleet\"}}[{WINDOW}])))"
            ),
            Some(at),
        );
        assert_eq!(result.len(), 1, "{result:?}");
        value(&result[0]).0
    };
    let (p50, p99) = (quantile(0.5), quantile(0.99));
    let mut summed: Vec<(f64, u64)> = buckets(&texts[0], "dreadpool_schedule_delay_seconds");
    for (mine, theirs) in summed
        .iter_mut()
        .zip(buckets(&texts[1], "dreadpool_schedule_delay_seconds"))
    {
        assert_eq!(mine.0, theirs.0, "both processes use the same bounds");
        mine.1 += theirs.1;
    }
    summed.sort_by(|x, y| x.0.total_cmp(&y.0));
    let total = summed.last().expect("a +Inf bucket").1;
    assert!(total > 0, "no task timed");
    let floor = summed
        .iter()
        .filter(|(_, n)| *n == 0)
        .map(|(le, _)| *le)
        .fold(0.0, f64::max);
    let ceiling = summed
        .iter()
        .find(|(_, n)| *n == total)
        .map(|(le, _)| *le)
        .expect("+Inf holds every task");
    eprintln!(
        "fleet schedule delay p50 {:.1}us, p99 {:.1}us (buckets allow {:.1}us..{:.1}us)",
        p50 * 1e6,
        p99 * 1e6,
        floor * 1e6,
        ceiling * 1e6
    );
    assert!(p99.is_finite() && p99 > 0.0, "p99 {p99}");
    assert!(
        floor <= p50 && p50 <= p99 && p99 <= ceiling,
        "p50 {p50}, p99 {p99}, {floor}..{ceiling}"
    );

    // promtool's linter on a real scrape: names, units, suffixes, help.
    // (Not reaped by a guard: it reads its stdin to the end and exits, and
    // the test waits for it.)
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool starts");
    let mut stdin = promtool.stdin.take().expect("piped");
    let text = texts[0].clone();
    // A thread writes, so that a promtool that stops reading cannot block
    // the test.
    let writer = thread::spawn(move || stdin.write_all(text.as_bytes()));
    let output = promtool.wait_with_output().expect("promtool runs");
    writer.join().expect("writer").expect("write the scrape");
    let complaints = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success(),
        "promtool check metrics: {complaints}"
    );
    assert!(
        complaints.trim().is_empty(),
        "promtool check metrics: {complaints}"
    );

    for (name, child) in [("a", &mut a), ("b", &mut b)] {
        assert!(
            child.0.try_wait().expect("status").is_none(),
            "example {name} exited early"
        );
    }
}
