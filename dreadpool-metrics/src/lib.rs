//! Rates, histograms, reports and export for [dreadpool](https://docs.rs/dreadpool)'s
//! counters.
//!
//! The core's [`ThreadPool::metrics`](dreadpool_core::ThreadPool::metrics)
//! returns raw monotonic counters. This crate turns them into what a person
//! or a monitoring system reads, and carries them out of the process:
//!
//! - [`Snapshot`]: a serde mirror of the core's `PoolMetrics`. Everything
//!   below works from snapshots, so a pool in this process and a pool
//!   attached over a socket share all code.
//! - [`Monitor`]: samples a pool (or is fed snapshots) and returns
//!   [`Interval`]s, the tokio-metrics shape: deltas, per-second rates,
//!   division-safe ratios (an empty interval gives 0, never NaN), busy
//!   ratios, queue depths, the steal matrix row per worker, and latency
//!   [`Quantiles`] per interval and since the start, from `hdrhistogram`.
//! - [`Report`]: all of it, as a terminal table with a one-line summary in
//!   the spirit of Go's schedtrace, or as JSON.
//! - [`Exporter`] and [`Client`]: newline-delimited JSON over a Unix socket
//!   or loopback TCP, for `dreadpool-top --attach` and anything else.
//! - With the `metrics-rs` feature, `publish` (and its `Publisher`): the counters, gauges
//!   and latency histograms through the `metrics` facade, for Prometheus, StatsD and the
//!   rest; its own metric schema (names, units, cardinality, changelog) is documented there.
//!
//! Most users reach this crate as `dreadpool::metrics` (the facade's
//! `metrics` feature).
//!
//! ```
//! use dreadpool::ThreadPoolBuilder;
//! use dreadpool::metrics::Monitor;
//!
//! let pool = ThreadPoolBuilder::new().with_threads(2).build();
//! let mut monitor = Monitor::new(&pool);
//! for _ in 0..1000 {
//!     pool.spawn(|| ());
//! }
//! pool.join();
//! let interval = monitor.sample();
//! assert_eq!(interval.tasks_run, 1000);
//! println!("{interval}"); // SCHED 2ms: pool=dreadpool threads=2 running=0 idle=2 ...
//! println!("{}", monitor.report()); // the table
//! ```
//!
//! # Features
//!
//! - `metrics-rs` (off by default): the `publish` module and its
//!   `Publisher`, through the `metrics` facade crate.
//! - `recorder` (off by default; the facade's `recorder` feature turns it
//!   on when `metrics` is on): the exporter answers `recording` requests
//!   with the pools' flight recordings, and [`Client::recording`] reads them
//!   back into a `dreadpool::Recording` ([`RecordingRequest`],
//!   [`RecordingReply`], [`Requester`]). Enables `dreadpool-core/recorder`.
//!
//! - `prometheus` (off by default; implies `metrics-rs`): [`observe`]
//!   can serve a Prometheus scrape endpoint (`DREADPOOL_PROMETHEUS`):
//!   `metrics-exporter-prometheus`'s recorder and text format, over a
//!   small HTTP responder of this crate (not the exporter's listener,
//!   whose hyper, tokio and `http` dependencies add impls of std traits
//!   to the program's crate graph).
//!
//! With `recorder`, [`observe`] serves a pool to `dreadpool-top --attach`
//! and Prometheus as environment variables ask (`DREADPOOL_SERVE`,
//! `DREADPOOL_PROMETHEUS`, `DREADPOOL_RECORD`), with no code beyond one call.
//!
//! Everything else is always on: this crate exists to be used when the
//! core's `metrics` feature is.
//!
//! # Wire protocol
//!
//! An [`Exporter`] listens on a Unix domain socket path or on TCP at a
//! loopback address (it refuses any other). The socket is owner-only
//! (0600, whatever the umask); loopback TCP is open to every local user of
//! the machine, so prefer a socket path for anything sensitive (see
//! [`ExporterBuilder::bind`]). Each connection is a stream of
//! UTF-8 JSON objects, one per line (`\n`-terminated), schema version
//! [`SCHEMA_VERSION`] (currently 1), carried as `"v"` in every message.
//!
//! From the exporter, tagged by `"type"`:
//!
//! | `type` | when | fields |
//! |---|---|---|
//! | `hello` | first, on connect | `v`, `server` (`"dreadpool-metrics"`), `version` (crate version), `pid`, `interval_ms`, `pools` (names, in frame order), `recording` (`true` if it answers `recording` requests) |
//! | `snapshots` | every `interval_ms` (and on request) | `v`, `seq` (tick number from 1; a gap means frames were dropped for a slow reader), `pools`: one [`Snapshot`] per pool, in `hello` order |
//! | `pong` | answer to `ping` | `v` |
//! | `recording` | answer to a `recording` request | `v`, `id` (the request's, if it had one), `pool` (index), `name`, `level` (`"off"`, `"scheduler"`, `"tasks"`), `workers` (thread names by index), `outside_threads` (names), `taken_at_ns`, `lost_events`, `omitted` (events left out for the limit, the oldest), `took_ns` (what taking it cost the host), `events`, `sites` (spawn sites, `"file:line:column"`, each once; absent when none) |
//! | `error` | answer to a bad request; also before closing a refused connection | `v`, `error` (text) |
//!
//! A [`Snapshot`] is an object with `name`, `threads`, `uptime_ns`,
//! `global_queue_depth`, `tasks_spawned_external`, `tasks_pending`,
//! `panics`, `latency_sampling` and `workers`, an array of objects with
//! `index`, `state` (`"running"`, `"searching"`, `"sleeping"`,
//! `"respawning"`, `"stopped"`), `tasks_run`, `tasks_spawned_local`,
//! `global_pulls`, `steals_attempted`, `steals_succeeded`, `tasks_stolen`,
//! `sleeps`, `sleeps_cancelled` (registrations to sleep that the worker's
//! second look called off), `global_empty_polls` (looks at the global queue
//! that found it empty), `wakeups`, `noop_wakeups`, `respawns`, `panics`, `joins`
//! (`dreadpool::join`s forked on the worker), `forks_shared` (of those, the
//! forks it shared with idle workers), `forks_stolen` (forks shared by peers
//! that it took and ran), `busy_ns`,
//! `local_queue_depth`, `stolen_from` (array: tasks stolen from each peer),
//! and `schedule_delay` and `run_time`: `{"buckets": [[lower_ns, upper_ns,
//! count], ...], "outliers": n}` with only the non-empty buckets, in
//! increasing order. Durations are integer nanoseconds; counts are
//! monotonic over the pool's life; a rate is the difference of two
//! snapshots over the difference of their `uptime_ns`.
//!
//! A `recording`'s `events` are objects in time order: `t` (nanoseconds on
//! the host's recorder clock, as `taken_at_ns`), `w` (a worker's index) or
//! `o` (an index into `outside_threads`), `k` (the kind) and the kind's
//! fields: `spawn` (`task`, `queue`: `"local"`, `"global"` or `"inbox"` with
//! `worker`; `within`, nanoseconds, when the spawn's time is its worker's
//! latest clock reading: see `EventKind::Spawn`; `site`, an index into
//! `sites`, at `tasks` level), `run_begin` (`task`, absent for a task spawned below `tasks`
//! level), `run_end` (`task`, `panicked`), `global_pull` (`batch`, `depth`),
//! `steal` (`victim`, `batch`, `depth`), `state` (`state`: `"running"`,
//! `"searching"`, `"sleeping"`, `"respawning"`, `"stopped"`), `wake`
//! (`handoff`), `noop_wakeup`, `unpark` (`worker`), `respawn`, `panic`
//! (`task`), `wait_begin`, `wait_end`, `fork_shared` (`fork`: an id in
//! this recording) and `fork_stolen` (`owner`: the worker whose join it
//! belongs to; `fork`, absent when its `fork_shared` is not in the
//! recording). `false` flags are left out. A reader skips kinds it does not
//! know. Times convert ticks at the moment
//! of each take, so one event's time may differ by a little (well under a
//! millisecond) between two replies.
//!
//! From the client, optional, one object per line, at most
//! [`MAX_REQUEST_LINE`] bytes: `{"request":"ping"}`,
//! `{"request":"snapshot"}` (a `snapshots` message read now),
//! `{"request":"hello"}`, or `{"request":"recording"}` with, all optional,
//! `pool` (index, default 0), `since_ns` (only events after it), `level`
//! (only events of that level and below: `"scheduler"` leaves out spawns
//! and runs), `max_events` (the newest that many) and `id` (echoed). A
//! `recording` is bounded: at most the exporter's
//! [`ExporterBuilder::max_recording_events`] (default
//! [`DEFAULT_MAX_RECORDING_EVENTS`], about 35 MB of JSON), never more than
//! [`MAX_RECORDING_EVENTS`], which keeps any reply under a client's 256 MiB
//! line limit; a client's next recording is made only after its previous
//! one was written to it, so a client holds at most one in the exporter's
//! memory. An exporter without the `recorder` feature answers it with an
//! `error`. Anything else gets an `error` line and the connection stays
//! open; an over-long line gets an `error` line and is closed.
//!
//! Compatibility: readers ignore fields and message types they do not know,
//! and missing fields read as zero; `v` changes only for a change that
//! would mislead an older reader, and a [`Client`] refuses an exporter of
//! another version with [`ClientError::Version`]. The `recording` request
//! and message and hello's `recording` were added within version 1 under
//! these rules: an older client never asks and skips the message; an older
//! exporter answers the request with an `error` and its hello reads as
//! `recording: false`. The workers' `joins`, `forks_shared` and
//! `forks_stolen` (fork-join) were added within version 1 the same way: an
//! older client ignores them; an older exporter's snapshots lack them, so
//! they read as 0 (as for a pool that forks no join) and give rates of 0.
//! So were the `fork_shared` and `fork_stolen` events of a recording: an
//! older client skips them; and a spawn's `within`: an older client reads
//! every spawn's time as exact, and an older exporter's spawns are.
//!
//! ```text
//! {"type":"hello","v":1,"server":"dreadpool-metrics","version":"0.1.0","pid":4242,"interval_ms":250,"pools":["io"]}
//! {"type":"snapshots","v":1,"seq":1,"pools":[{"name":"io","threads":2,"uptime_ns":250431002,...}]}
//! ```
//!
//! Anything that reads lines reads the stream: `socat - UNIX-CONNECT:/tmp/app.sock | jq .`

mod client;
mod endpoint;
mod error;
mod exporter;
mod histogram;
mod interval;
mod json;
mod monitor;
mod nanos;
#[cfg(feature = "recorder")]
pub mod observe;
mod protocol;
#[cfg(feature = "metrics-rs")]
pub mod publish;
#[cfg(feature = "recorder")]
mod recording;
mod report;
mod snapshot;

#[cfg(feature = "recorder")]
pub use client::RECORDING_TIMEOUT;
pub use client::{Client, Frame, Hello, Message, Requester, CONNECT_TIMEOUT};
pub use endpoint::Endpoint;
#[cfg(feature = "metrics-rs")]
pub use error::BucketsError;
pub use error::{AddrError, ClientError, ExportError, FileKind};
pub use exporter::{
    Exporter, ExporterBuilder, ExporterStats, DEFAULT_CLIENT_BUFFER, DEFAULT_INTERVAL,
    DEFAULT_MAX_CLIENTS, DEFAULT_WRITE_TIMEOUT,
};
pub use histogram::{Distribution, Quantiles, MAX_TRACKED_BATCH, MAX_TRACKED_DEPTH};
pub use interval::{Interval, StateCounts, WorkerInterval};
pub use monitor::{Intervals, Monitor};
pub use protocol::{MAX_REQUEST_LINE, SCHEMA_VERSION};
#[cfg(feature = "metrics-rs")]
pub use publish::Publisher;
#[cfg(feature = "recorder")]
pub use recording::{
    RecordingReply, RecordingRequest, DEFAULT_MAX_RECORDING_EVENTS, MAX_RECORDING_EVENTS,
};
pub use report::Report;
pub use snapshot::{Bucket, HistogramSnapshot, Snapshot, WorkerSnapshot, WorkerState};
