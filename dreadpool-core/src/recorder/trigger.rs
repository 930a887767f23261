//! Writing a recording by itself when something goes wrong: Go's flight
//! recorder pattern (keep the last seconds in memory, write them out on a
//! trigger).

use super::recording::Recording;
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A user's callback for triggered recordings: the recording and why.
type Callback = Arc<dyn Fn(Recording, &str) + Send + Sync>;

/// Where a triggered recording goes.
#[derive(Clone)]
enum Sink {
    Directory(PathBuf),
    Callback(Callback),
}

/// When to take a recording without being asked, and where to put it: set
/// with [`ThreadPoolBuilder::with_record_trigger`](crate::ThreadPoolBuilder::with_record_trigger).
///
/// A trigger fires when a task panics ([`on_panic`](Self::on_panic)), or
/// when a task picked for latency sampling (the `metrics` feature's
/// [`with_latency_sampling`](crate::ThreadPoolBuilder::with_latency_sampling))
/// waited or ran longer than a threshold. It fires at most once per
/// [`at_most_every`](Self::at_most_every) interval (a minute by default), so
/// a panic storm writes one file, not thousands. The recording is taken and
/// written on a thread of its own: the worker that saw the cause does not
/// stop for it.
///
/// ```
/// use dreadpool::{RecordTrigger, ThreadPoolBuilder};
/// use std::sync::mpsc;
///
/// let (tx, rx) = mpsc::channel();
/// let tx = std::sync::Mutex::new(tx);
/// let pool = ThreadPoolBuilder::new()
///     .with_threads(2)
///     .with_record_trigger(
///         RecordTrigger::to_callback(move |recording, reason| {
///             let _ = tx.lock().unwrap().send((reason.to_owned(), recording.events().len()));
///         })
///         .on_panic(),
///     )
///     .build();
/// pool.spawn(|| panic!("write it down"));
/// let (reason, events) = rx.recv().unwrap();
/// assert_eq!(reason, "panic");
/// assert!(events > 0);
/// ```
#[derive(Clone)]
#[must_use = "a trigger does nothing until given to `with_record_trigger`"]
pub struct RecordTrigger {
    sink: Sink,
    on_panic: bool,
    schedule_delay_over: Option<Duration>,
    run_time_over: Option<Duration>,
    min_interval: Duration,
}

impl RecordTrigger {
    /// Writes each triggered recording into `dir` as a Perfetto trace named
    /// `{pool}-{unix milliseconds}-{reason}.perfetto-trace`. The directory
    /// must exist; a write that fails is reported on stderr (and through
    /// `tracing`, with that feature) and otherwise ignored.
    pub fn to_directory(dir: impl Into<PathBuf>) -> Self {
        Self::with_sink(Sink::Directory(dir.into()))
    }

    /// Hands each triggered recording to `f`, with the reason (`"panic"`,
    /// `"schedule delay"` or `"run time"`), on the recorder's own thread.
    pub fn to_callback<F>(f: F) -> Self
    where
        F: Fn(Recording, &str) + Send + Sync + 'static,
    {
        Self::with_sink(Sink::Callback(Arc::new(f)))
    }

    fn with_sink(sink: Sink) -> Self {
        RecordTrigger {
            sink,
            on_panic: false,
            schedule_delay_over: None,
            run_time_over: None,
            min_interval: Duration::from_secs(60),
        }
    }

    /// Fires when a task (or a start or exit handler) panics.
    pub fn on_panic(mut self) -> Self {
        self.on_panic = true;
        self
    }

    /// Fires when a sampled task waited longer than `threshold` between its
    /// spawn and its start. Needs the `metrics` feature (which samples).
    pub fn on_schedule_delay_over(mut self, threshold: Duration) -> Self {
        self.schedule_delay_over = Some(threshold);
        self
    }

    /// Fires when a sampled task ran longer than `threshold`. Needs the
    /// `metrics` feature (which samples).
    pub fn on_run_time_over(mut self, threshold: Duration) -> Self {
        self.run_time_over = Some(threshold);
        self
    }

    /// Fires at most once per `interval` (default: a minute; zero means
    /// every time a cause is seen).
    pub fn at_most_every(mut self, interval: Duration) -> Self {
        self.min_interval = interval;
        self
    }
}

impl fmt::Debug for RecordTrigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sink = match &self.sink {
            Sink::Directory(dir) => format!("directory {}", dir.display()),
            Sink::Callback(_) => "callback".to_owned(),
        };
        f.debug_struct("RecordTrigger")
            .field("sink", &sink)
            .field("on_panic", &self.on_panic)
            .field("schedule_delay_over", &self.schedule_delay_over)
            .field("run_time_over", &self.run_time_over)
            .field("min_interval", &self.min_interval)
            .finish()
    }
}

/// A trigger in use: its configuration and when it last fired.
pub(crate) struct TriggerState {
    trigger: RecordTrigger,
    started: Instant,
    /// Nanoseconds since `started` of the last firing, plus one (0: never).
    last_fired: AtomicU64,
}

impl TriggerState {
    pub(crate) fn new(trigger: RecordTrigger) -> Self {
        TriggerState {
            trigger,
            started: Instant::now(),
            last_fired: AtomicU64::new(0),
        }
    }

    pub(crate) fn fires_on_panic(&self) -> bool {
        self.trigger.on_panic
    }

    /// The reason to fire, if a sampled task's latencies cross a threshold.
    pub(crate) fn latency_crossed(
        &self,
        schedule_delay: Duration,
        run_time: Duration,
    ) -> Option<&'static str> {
        if self
            .trigger
            .schedule_delay_over
            .is_some_and(|t| schedule_delay > t)
        {
            Some("schedule delay")
        } else if self.trigger.run_time_over.is_some_and(|t| run_time > t) {
            Some("run time")
        } else {
            None
        }
    }

    /// Claims the right to fire now: true for at most one caller per
    /// interval (a compare-and-swap on the last firing time).
    pub(crate) fn claim(&self) -> bool {
        let now = u64::try_from(self.started.elapsed().as_nanos())
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        let interval = u64::try_from(self.trigger.min_interval.as_nanos()).unwrap_or(u64::MAX);
        let last = self.last_fired.load(Ordering::Relaxed);
        if last != 0 && now.saturating_sub(last) < interval {
            return false;
        }
        self.last_fired
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }

    /// Hands `recording` to the sink.
    pub(crate) fn deliver(&self, recording: Recording, reason: &str) {
        match &self.trigger.sink {
            Sink::Callback(f) => {
                // The user's code, on our thread: its panic ends only this
                // delivery.
                crate::panic::contain(|| f(recording, reason));
            }
            Sink::Directory(dir) => {
                let millis = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis());
                let file = dir.join(format!(
                    "{}-{millis}-{}.perfetto-trace",
                    recording.pool(),
                    reason.replace(' ', "-")
                ));
                let written = std::fs::File::create(&file).and_then(|f| {
                    let mut out = std::io::BufWriter::new(f);
                    recording.write_perfetto(&mut out)?;
                    std::io::Write::flush(&mut out)
                });
                if let Err(error) = written {
                    use std::io::Write;
                    let _ = writeln!(
                        std::io::stderr(),
                        "dreadpool: could not write the triggered recording {}: {error}",
                        file.display()
                    );
                }
            }
        }
    }
}
