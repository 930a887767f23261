//! Writing a recording in the Chrome JSON trace event format (the "Trace
//! Event Format" of `chrome://tracing`, also read by ui.perfetto.dev and
//! speedscope): the same layout as the Perfetto writer's
//! (`perfetto::timeline`), each lane a thread of one process.
//!
//! Written by hand, not with serde_json: a library that links serde_json
//! into its users' builds brings its `impl PartialEq<Value> for u64` (and
//! the like) with it, and code that compiled before, such as
//! `assert_eq!(n, iter.sum())`, stops inferring its types (this crate's
//! own `tests/api.rs` did). The format needs little: objects, strings,
//! integers, and microseconds written exactly from nanoseconds. Names come
//! from users, so every string goes through [`escape`], which follows RFC
//! 8259 (tested against serde_json in this module's tests). This runs at
//! dump time only.

use super::perfetto::timeline::{self, Arg, Item, Lane, SliceName};
use super::recording::Recording;
use std::fmt::Write as _;
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
        let pid = u64::from(std::process::id());
        let workers = self.worker_names().len();
        let mut events = Events { out, first: true };
        events.out.write_all(b"{\"traceEvents\":[")?;

        let metadata = |name: &str, tid: u64, args: Object| {
            Object::new()
                .str("ph", "M")
                .str("name", name)
                .uint("pid", pid)
                .uint("tid", tid)
                .object("args", args)
        };
        events.write(metadata(
            "process_name",
            0,
            Object::new().str("name", self.pool()),
        ))?;
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
            events.write(metadata(
                "thread_name",
                tid,
                Object::new().str("name", &name),
            ))?;
            events.write(metadata(
                "thread_sort_index",
                tid,
                Object::new().uint("sort_index", tid),
            ))?;
        }

        for item in &timeline.items {
            match item {
                Item::Begin(i) => {
                    let slice = &timeline.slices[*i];
                    let tid = tid(slice.lane, workers);
                    let mut args = Object::new();
                    if let SliceName::Task(Some(task)) = slice.name {
                        args = args.uint("task", task);
                    }
                    if slice.panicked {
                        args = args.bool("panicked", true);
                    }
                    if slice.unfinished {
                        args = args.bool("unfinished", true);
                    }
                    events.write(
                        Object::new()
                            .str("ph", "X")
                            .str("name", &slice.name.text(self))
                            .str("cat", slice.name.category())
                            .uint("pid", pid)
                            .uint("tid", tid)
                            .micros("ts", slice.begin_ns)
                            .micros("dur", slice.end_ns - slice.begin_ns)
                            .object("args", args),
                    )?;
                    if let Some(task) = slice.flow_in {
                        // "bp":"e": binds to the enclosing slice, the run
                        // that begins here (not the next one to begin).
                        events.write(flow("f", task, pid, tid, slice.begin_ns).str("bp", "e"))?;
                    }
                }
                // An "X" event carries its end.
                Item::End(_) => {}
                Item::Instant(instant) => {
                    let tid = tid(instant.lane, workers);
                    let mut args = Object::new();
                    for &(name, value) in &instant.args {
                        args = match value {
                            Arg::Uint(v) => args.uint(name, v),
                            Arg::Bool(v) => args.bool(name, v),
                            Arg::Str(v) => args.str(name, v),
                        };
                    }
                    // Flows bind to slices in this format: an instant that
                    // starts or ends one is a zero-length slice.
                    let event = if instant.flow_out.is_some() || instant.flow_in.is_some() {
                        Object::new().str("ph", "X").micros("dur", 0)
                    } else {
                        Object::new().str("ph", "i").str("s", "t")
                    };
                    events.write(
                        event
                            .str("name", instant.name)
                            .str("cat", instant.category)
                            .uint("pid", pid)
                            .uint("tid", tid)
                            .micros("ts", instant.time_ns)
                            .object("args", args),
                    )?;
                    if let Some(task) = instant.flow_out {
                        events.write(flow("s", task, pid, tid, instant.time_ns))?;
                    }
                    if let Some(fork) = instant.flow_in {
                        events.write(flow("f", fork, pid, tid, instant.time_ns).str("bp", "e"))?;
                    }
                }
                Item::Depth(sample) => {
                    let name = self
                        .worker_names()
                        .get(sample.worker)
                        .map_or("?", String::as_str);
                    // Counters belong to the process in this format; the
                    // name tells the workers' apart.
                    events.write(
                        Object::new()
                            .str("ph", "C")
                            .str("name", &format!("{name} local queue depth"))
                            .uint("pid", pid)
                            .uint("tid", tid(Lane::Tasks(sample.worker), workers))
                            .micros("ts", sample.time_ns)
                            .object("args", Object::new().uint("depth", sample.depth)),
                    )?;
                }
            }
        }
        events.out.write_all(b"],\"displayTimeUnit\":\"ns\"}")?;
        events.out.flush()
    }
}

/// A flow event: a spawn's (`"s"`) or its run's (`"f"`).
fn flow(ph: &str, task: u64, pid: u64, tid: u64, time_ns: u64) -> Object {
    Object::new()
        .str("ph", ph)
        .uint("id", task)
        .str("name", "spawn")
        .str("cat", "task")
        .uint("pid", pid)
        .uint("tid", tid)
        .micros("ts", time_ns)
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

/// One JSON object, written a member at a time.
struct Object {
    json: String,
}

impl Object {
    fn new() -> Self {
        Object {
            json: String::from("{"),
        }
    }

    fn key(mut self, key: &str) -> Self {
        if self.json.len() > 1 {
            self.json.push(',');
        }
        escape(&mut self.json, key);
        self.json.push(':');
        self
    }

    fn str(self, key: &str, value: &str) -> Self {
        let mut object = self.key(key);
        escape(&mut object.json, value);
        object
    }

    fn uint(self, key: &str, value: u64) -> Self {
        let mut object = self.key(key);
        let _ = write!(object.json, "{value}");
        object
    }

    fn bool(self, key: &str, value: bool) -> Self {
        let mut object = self.key(key);
        object.json.push_str(if value { "true" } else { "false" });
        object
    }

    /// Nanoseconds as the format's microseconds, exactly: integer
    /// arithmetic, no float rounding however long the clock has run.
    fn micros(self, key: &str, ns: u64) -> Self {
        let mut object = self.key(key);
        let _ = write!(object.json, "{}.{:03}", ns / 1_000, ns % 1_000);
        object
    }

    fn object(self, key: &str, value: Object) -> Self {
        let mut object = self.key(key);
        object.json.push_str(&value.finish());
        object
    }

    fn finish(mut self) -> String {
        self.json.push('}');
        self.json
    }
}

/// Appends `s` as a JSON string (RFC 8259): quotes, backslashes and
/// control characters escaped; everything else, non-ASCII included, as
/// UTF-8.
fn escape(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c < ' ' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Writes the array's elements with their commas.
struct Events<W> {
    out: W,
    first: bool,
}

impl<W: Write> Events<W> {
    fn write(&mut self, event: Object) -> io::Result<()> {
        if !std::mem::take(&mut self.first) {
            self.out.write_all(b",")?;
        }
        self.out.write_all(event.finish().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_string_escapes_to_json_that_parses_back() {
        let mut tricky: String = (0u32..0x80).filter_map(char::from_u32).collect();
        tricky.push_str("é ワ ☃ \u{2028} \u{1F600} \\\" \\u0000");
        let mut json = String::new();
        escape(&mut json, &tricky);
        let parsed: String = serde_json::from_str(&json).unwrap();
        assert_eq!(parsed, tricky);
    }

    #[test]
    fn micros_are_exact() {
        let json = Object::new()
            .micros("a", 0)
            .micros("b", 1_234_567)
            .micros("c", u64::MAX)
            .finish();
        assert_eq!(
            json,
            r#"{"a":0.000,"b":1234.567,"c":18446744073709551.615}"#
        );
    }
}
