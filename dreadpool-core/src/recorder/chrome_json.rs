//! Writing a recording in the Chrome JSON trace event format (the "Trace
//! Event Format" of `chrome://tracing`, also read by ui.perfetto.dev and
//! speedscope): the same layout as the Perfetto writer's
//! (`perfetto::timeline`), each lane a thread of one process.
//!
//! Every event is built as a `serde_json::Value` and written by serde_json:
//! names come from users (pool and thread names), and its escaping is the
//! one to trust. This runs at dump time only.

use super::perfetto::timeline::{self, Arg, Item, Lane, SliceName};
use super::recording::Recording;
use serde_json::{json, Map, Value};
use std::io::{self, Write};

impl Recording {
    /// Writes the recording in the Chrome JSON trace event format:
    /// `{"traceEvents":[...],"displayTimeUnit":"ns"}`, for
    /// [ui.perfetto.dev](https://ui.perfetto.dev), `chrome://tracing` and
    /// other tools that read it.
    ///
    /// The pool is a process (`process_name` metadata, with this process's
    /// pid); each worker is two threads, its task runs (named after its
    /// thread) and `"<thread> state"` (its states and scheduler events);
    /// each outside thread that spawned into the pool is one more. Task runs
    /// and states are complete events (`"X"`, `ts` and `dur` in microseconds
    /// with nanosecond fractions), scheduler events are thread instants
    /// (`"i"`), each worker's local queue depth a counter (`"C"`). A spawn
    /// is a zero-length `"X"` slice, so that the flow (`"s"`, then `"f"`
    /// with `"bp":"e"` at the run) has a slice to start from even on an
    /// outside thread. Runs are paired as for
    /// [`write_perfetto`](Self::write_perfetto).
    ///
    /// ```
    /// use dreadpool::{RecordLevel, ThreadPoolBuilder};
    ///
    /// let pool = ThreadPoolBuilder::new()
    ///     .with_threads(2)
    ///     .with_thread_name("json \"pool\"")
    ///     .with_record_level(RecordLevel::Tasks)
    ///     .build();
    /// pool.spawn(|| {});
    /// pool.join();
    /// let mut trace = Vec::new();
    /// pool.recording().write_chrome_json(&mut trace).unwrap();
    /// let trace = String::from_utf8(trace).unwrap();
    /// assert!(trace.contains(r#""name":"json \"pool\"-0""#)); // escaped
    /// ```
    ///
    /// # Errors
    ///
    /// Those of `out`.
    pub fn write_chrome_json<W: Write>(&self, out: W) -> io::Result<()> {
        let timeline = timeline::lay_out(self);
        let pid = std::process::id();
        let workers = self.worker_names().len();
        let mut events = Events { out, first: true };
        events.out.write_all(b"{\"traceEvents\":[")?;

        events.write(json!({
            "ph": "M", "name": "process_name", "pid": pid, "tid": 0,
            "args": { "name": self.pool() },
        }))?;
        let mut threads: Vec<(Lane, String)> = Vec::new();
        for (i, name) in self.worker_names().iter().enumerate() {
            threads.push((Lane::Tasks(i), name.clone()));
            threads.push((Lane::State(i), format!("{name} state")));
        }
        for (i, name) in self.outside_threads().iter().enumerate() {
            threads.push((Lane::Outside(i), name.clone()));
        }
        for (lane, name) in threads {
            let tid = tid(lane, workers);
            events.write(json!({
                "ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                "args": { "name": name },
            }))?;
            events.write(json!({
                "ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                "args": { "sort_index": tid },
            }))?;
        }

        for item in &timeline.items {
            match item {
                Item::Begin(i) => {
                    let slice = &timeline.slices[*i];
                    let tid = tid(slice.lane, workers);
                    let mut args = Map::new();
                    if let SliceName::Task(Some(task)) = slice.name {
                        args.insert("task".into(), task.into());
                    }
                    if slice.panicked {
                        args.insert("panicked".into(), true.into());
                    }
                    if slice.unfinished {
                        args.insert("unfinished".into(), true.into());
                    }
                    events.write(json!({
                        "ph": "X", "name": slice.name.text(), "cat": slice.name.category(),
                        "pid": pid, "tid": tid,
                        "ts": micros(slice.begin_ns),
                        "dur": micros(slice.end_ns - slice.begin_ns),
                        "args": args,
                    }))?;
                    if let Some(task) = slice.flow_in {
                        // "bp":"e": binds to the enclosing slice, the run
                        // that begins here (not the next one to begin).
                        events.write(json!({
                            "ph": "f", "bp": "e", "id": task, "name": "spawn", "cat": "task",
                            "pid": pid, "tid": tid, "ts": micros(slice.begin_ns),
                        }))?;
                    }
                }
                // An "X" event carries its end.
                Item::End(_) => {}
                Item::Instant(instant) => {
                    let tid = tid(instant.lane, workers);
                    let args: Map<String, Value> = instant
                        .args
                        .iter()
                        .map(|&(name, value)| (name.to_owned(), arg(value)))
                        .collect();
                    let ts = micros(instant.time_ns);
                    if instant.name == "spawn" {
                        events.write(json!({
                            "ph": "X", "name": "spawn", "cat": instant.category,
                            "pid": pid, "tid": tid, "ts": ts, "dur": 0, "args": args,
                        }))?;
                    } else {
                        events.write(json!({
                            "ph": "i", "s": "t", "name": instant.name, "cat": instant.category,
                            "pid": pid, "tid": tid, "ts": ts, "args": args,
                        }))?;
                    }
                    if let Some(task) = instant.flow_out {
                        events.write(json!({
                            "ph": "s", "id": task, "name": "spawn", "cat": "task",
                            "pid": pid, "tid": tid, "ts": ts,
                        }))?;
                    }
                }
                Item::Depth(sample) => {
                    let name = self
                        .worker_names()
                        .get(sample.worker)
                        .map_or("?", String::as_str);
                    // Counters belong to the process in this format; the
                    // name tells the workers' apart.
                    events.write(json!({
                        "ph": "C", "name": format!("{name} local queue depth"),
                        "pid": pid, "tid": tid(Lane::Tasks(sample.worker), workers),
                        "ts": micros(sample.time_ns),
                        "args": { "depth": sample.depth },
                    }))?;
                }
            }
        }
        events.out.write_all(b"],\"displayTimeUnit\":\"ns\"}")?;
        events.out.flush()
    }
}

/// A lane's thread id in the file: workers' task and state lanes
/// interleaved, then the outside threads (ids are also the sort order).
fn tid(lane: Lane, workers: usize) -> u64 {
    let tid = match lane {
        Lane::Tasks(i) => 1 + 2 * i,
        Lane::State(i) => 2 + 2 * i,
        Lane::Outside(i) => 1 + 2 * workers + i,
    };
    tid as u64
}

/// Nanoseconds as the format's microseconds: an f64 holds every
/// nanosecond exactly up to 2^53 ns (104 days of recorder clock).
fn micros(ns: u64) -> f64 {
    ns as f64 / 1_000.0
}

fn arg(value: Arg) -> Value {
    match value {
        Arg::Uint(v) => v.into(),
        Arg::Bool(v) => v.into(),
        Arg::Str(v) => v.into(),
    }
}

/// Writes the array's elements with their commas.
struct Events<W> {
    out: W,
    first: bool,
}

impl<W: Write> Events<W> {
    fn write(&mut self, event: Value) -> io::Result<()> {
        if !std::mem::take(&mut self.first) {
            self.out.write_all(b",")?;
        }
        serde_json::to_writer(&mut self.out, &event).map_err(io::Error::from)
    }
}
