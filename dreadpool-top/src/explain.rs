//! `dreadpool-top explain --attach ADDR`: records an attached host's pool
//! now and says why its tasks waited (`Recording::explain`), as a table for
//! people or JSON for scripts.

use dreadpool_core::{
    Explanation, RanMeanwhile, RecordLevel, Recording, SchedulerSummary, SpawnQueue, Track,
    WaitCause,
};
use dreadpool_metrics::{Client, RecordingRequest};
use std::fmt::Write as _;

/// What an explanation is about: the pool, and what the recording held.
pub struct Explained {
    /// The pool's name.
    pub pool: String,
    /// The recording's level.
    pub level: RecordLevel,
    /// Events the host's reply left out (its event limit).
    pub omitted: u64,
    /// The explanation.
    pub explanation: Explanation,
    /// For each of the worst waits, what each worker ran meanwhile, where
    /// the cause is about the whole pool (every worker busy, behind a
    /// backlog); empty for the others.
    pub meanwhile: Vec<Vec<RanMeanwhile>>,
    /// The spawn sites of the worst waits' tasks and of the long tasks
    /// their causes name (`src/server.rs:88`), by task id.
    pub sites: std::collections::BTreeMap<u64, String>,
}

/// Takes a recording of pool `pool` (its index in the host's hello) from
/// the exporter at `addr`, and explains its `top` longest waits.
///
/// # Errors
///
/// A message for a host that cannot be reached, has no such pool or no
/// flight recorder, or records below `RecordLevel::Tasks`.
pub fn attached(addr: &str, pool: usize, top: usize) -> Result<Explained, String> {
    let mut client = Client::connect(addr).map_err(|e| format!("cannot attach to {addr}: {e}"))?;
    let reply = client
        .recording(&RecordingRequest::pool(pool))
        .map_err(|e| format!("{addr} sent no recording of pool {pool}: {e}"))?;
    explain(&reply.recording, reply.omitted, top)
}

/// Explains `recording`'s `top` longest waits.
///
/// # Errors
///
/// A message saying which level is needed, for a recording below
/// `RecordLevel::Tasks`.
pub fn explain(recording: &Recording, omitted: u64, top: usize) -> Result<Explained, String> {
    let explanation = recording.explain(top).map_err(|e| {
        format!(
            "pool {}: {e} (the host sets it with `ThreadPool::set_record_level` or \
             `ThreadPoolBuilder::with_record_level`)\n\
             what this recording can still tell:\n{}\n\
             which task waited behind what needs Tasks level: {}",
            recording.pool(),
            indent(&recording.scheduler_summary().to_string()),
            SchedulerSummary::NEEDS_TASKS_LEVEL.join(", ")
        )
    })?;
    let meanwhile = explanation
        .worst
        .iter()
        .map(|wait| match wait.cause {
            WaitCause::AllWorkersBusy | WaitCause::Backlog { .. } => recording.ran_meanwhile(wait),
            _ => Vec::new(),
        })
        .collect();
    let mut sites = std::collections::BTreeMap::new();
    for wait in &explanation.worst {
        let long = match wait.cause {
            WaitCause::BehindLongTask { task, .. } => task,
            _ => None,
        };
        for task in std::iter::once(wait.task).chain(long) {
            if let Some(site) = recording.task_site(task) {
                sites.insert(task, site.to_string());
            }
        }
    }
    Ok(Explained {
        pool: recording.pool().to_string(),
        level: recording.level(),
        omitted,
        explanation,
        meanwhile,
        sites,
    })
}

/// Each line of `text`, indented two spaces.
fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("  {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn track(track: Track) -> String {
    match track {
        Track::Worker(w) => format!("worker {w}"),
        Track::Outside(t) => format!("outside thread {t}"),
    }
}

fn queue(queue: SpawnQueue) -> String {
    match queue {
        SpawnQueue::Local => "its worker's queue".to_string(),
        SpawnQueue::Global => "the global queue".to_string(),
        SpawnQueue::Inbox { worker } => format!("worker {worker}'s inbox"),
    }
}

/// A duration for people.
fn nanos(ns: u64) -> String {
    let ns = ns as f64;
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} us", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.1} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// The explanation as text: the worst waits with their causes, then the
/// totals by cause.
pub fn render_text(explained: &Explained) -> String {
    let e = &explained.explanation;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "pool {}: {} tasks with both spawn and start in the recording{}",
        explained.pool,
        e.tasks,
        if e.spawns_missing > 0 {
            format!(
                " ({} more started whose spawn fell out of the rings)",
                e.spawns_missing
            )
        } else {
            String::new()
        }
    );
    if explained.omitted > 0 {
        let _ = writeln!(
            out,
            "(the host left out its {} oldest events)",
            explained.omitted
        );
    }
    let _ = writeln!(out, "\nlongest waits (spawn to start):");
    let site_of = |task: u64| {
        explained
            .sites
            .get(&task)
            .map_or_else(String::new, |site| format!(" ({site})"))
    };
    for (rank, wait) in e.worst.iter().enumerate() {
        let long = match wait.cause {
            WaitCause::BehindLongTask {
                task: Some(task), ..
            } => explained.sites.get(&task).map_or_else(String::new, |site| {
                format!("; the long task spawned at {site}")
            }),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "{:>3}. task {}{} waited {}: spawned on {} into {}, ran on worker {}\n     {}{}",
            rank + 1,
            wait.task,
            site_of(wait.task),
            nanos(wait.delay_ns()),
            track(wait.spawned_on),
            queue(wait.queue),
            wait.ran_on,
            wait.cause,
            long
        );
        for ran in explained.meanwhile.get(rank).into_iter().flatten() {
            let _ = writeln!(out, "       {}", meanwhile_text(ran));
        }
    }
    let _ = writeln!(out, "\nwaits by cause:");
    let _ = writeln!(
        out,
        "  {:<22} {:>8} {:>12} {:>12}",
        "cause", "waits", "total", "p99"
    );
    for total in &e.by_cause {
        let _ = writeln!(
            out,
            "  {:<22} {:>8} {:>12} {:>12}",
            total.cause,
            total.waits,
            nanos(total.total_ns),
            nanos(total.p99_ns)
        );
    }
    if e.by_site.iter().any(|t| t.site.is_some()) {
        let _ = writeln!(out, "\nby spawn site (top sites by total wait):");
        let _ = writeln!(
            out,
            "  {:<40} {:>8} {:>12} {:>12} {:>12}",
            "site", "waits", "total wait", "p99 wait", "run time"
        );
        for total in e.by_site.iter().take(10) {
            let site = total
                .site
                .as_ref()
                .map_or_else(|| "(no site)".to_string(), ToString::to_string);
            let _ = writeln!(
                out,
                "  {:<40} {:>8} {:>12} {:>12} {:>12}",
                site,
                total.waits,
                nanos(total.wait_total_ns),
                nanos(total.wait_p99_ns),
                nanos(total.run_ns)
            );
        }
    }
    out
}

/// One worker's part of a wait, for people.
fn meanwhile_text(ran: &RanMeanwhile) -> String {
    let longest = match ran.longest {
        Some((Some(task), ns)) => format!(", longest task {task} for {}", nanos(ns)),
        Some((None, ns)) => format!(", longest task for {}", nanos(ns)),
        None => String::new(),
    };
    format!(
        "worker {} started {} tasks, ran tasks for {}{longest}",
        ran.worker,
        ran.tasks_started,
        nanos(ran.busy_ns)
    )
}

fn meanwhile_json(ran: &RanMeanwhile) -> serde_json::Value {
    serde_json::json!({
        "worker": ran.worker,
        "tasks_started": ran.tasks_started,
        "busy_ns": ran.busy_ns,
        "longest_task": ran.longest.and_then(|(task, _)| task),
        "longest_ns": ran.longest.map(|(_, ns)| ns),
    })
}

fn cause_json(cause: &WaitCause) -> serde_json::Value {
    let mut value = serde_json::json!({ "name": cause.name(), "text": cause.to_string() });
    let extra = match *cause {
        WaitCause::PoolAsleep { wake_ns } => serde_json::json!({ "wake_ns": wake_ns }),
        WaitCause::BehindLongTask {
            worker,
            task,
            task_ns,
            tasks_ahead,
        } => serde_json::json!({
            "worker": worker, "task": task, "task_ns": task_ns, "tasks_ahead": tasks_ahead
        }),
        WaitCause::BehindNewerTasks {
            worker,
            tasks_ahead,
            busy_ns,
        } => {
            serde_json::json!({ "worker": worker, "tasks_ahead": tasks_ahead, "busy_ns": busy_ns })
        }
        WaitCause::NoProgress { worker, gap_ns } => {
            serde_json::json!({ "worker": worker, "gap_ns": gap_ns })
        }
        WaitCause::GlobalQueueStarved {
            steals,
            unpulled_ns,
        } => serde_json::json!({ "steals": steals, "unpulled_ns": unpulled_ns }),
        WaitCause::Backlog {
            tasks_ahead,
            busy_ns,
        } => serde_json::json!({ "tasks_ahead": tasks_ahead, "busy_ns": busy_ns }),
        _ => serde_json::json!({}),
    };
    if let (Some(map), serde_json::Value::Object(extra)) = (value.as_object_mut(), extra) {
        map.extend(extra);
    }
    value
}

/// The explanation as one JSON object, for scripts.
pub fn render_json(explained: &Explained) -> serde_json::Value {
    let e = &explained.explanation;
    serde_json::json!({
        "pool": explained.pool,
        "level": format!("{:?}", explained.level),
        "tasks": e.tasks,
        "spawns_missing": e.spawns_missing,
        "omitted_events": explained.omitted,
        "worst": e.worst.iter().enumerate().map(|(rank, w)| serde_json::json!({
            "task": w.task,
            "delay_ns": w.delay_ns(),
            "spawned_on": track(w.spawned_on),
            "queue": queue(w.queue),
            "ran_on": w.ran_on,
            "site": explained.sites.get(&w.task),
            "long_task_site": match w.cause {
                WaitCause::BehindLongTask { task: Some(task), .. } => explained.sites.get(&task),
                _ => None,
            },
            "cause": cause_json(&w.cause),
            "meanwhile": explained
                .meanwhile
                .get(rank)
                .into_iter()
                .flatten()
                .map(meanwhile_json)
                .collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "by_cause": e.by_cause.iter().map(|c| serde_json::json!({
            "cause": c.cause, "waits": c.waits, "total_ns": c.total_ns, "p99_ns": c.p99_ns,
        })).collect::<Vec<_>>(),
        "by_site": e.by_site.iter().map(|s| serde_json::json!({
            "site": s.site.as_ref().map(ToString::to_string),
            "waits": s.waits, "wait_total_ns": s.wait_total_ns,
            "wait_p99_ns": s.wait_p99_ns, "run_ns": s.run_ns,
        })).collect::<Vec<_>>(),
    })
}
