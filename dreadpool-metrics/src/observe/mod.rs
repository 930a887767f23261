//! Zero-code observability: serve a pool to `dreadpool-top --attach` and to
//! Prometheus, switched on by environment variables, with no change to the
//! program.
//!
//! A program (or a library that owns a pool, such as the rayon-core
//! compatibility crate's global pool) calls [`serve_from_env`] once, after
//! building its pool; the person running it chooses what is served:
//!
//! | variable | value | effect |
//! |---|---|---|
//! | [`SERVE_VAR`] (`DREADPOOL_SERVE`) | a socket path or a loopback `host:port`, as `dreadpool-top --attach` takes | an [`Exporter`](crate::Exporter) serves the pool there: snapshots and flight recordings |
//! | [`PROMETHEUS_VAR`] (`DREADPOOL_PROMETHEUS`) | a loopback `host:port` (port 0 picks one) | a Prometheus scrape endpoint at `http://host:port/metrics` (feature `prometheus`) |
//! | [`RECORD_VAR`] (`DREADPOOL_RECORD`) | `off`, `scheduler` or `tasks` | the flight recorder's level; unset, `tasks` when serving (so that a recording shows every task), else the pool's own |
//!
//! An unset or empty variable is off. A bad value is an [`ObserveEnvError`]
//! naming the variable; a server that cannot start is an [`ObserveError`]:
//! the caller decides whether that is fatal (the rayon-core compatibility
//! crate prints one line to stderr and carries on unobserved).
//!
//! ```text
//! DREADPOOL_SERVE=/tmp/app.sock DREADPOOL_PROMETHEUS=127.0.0.1:9187 ./app &
//! dreadpool-top --attach /tmp/app.sock
//! curl -s http://127.0.0.1:9187/metrics | grep '^dreadpool_'
//! ```
//!
//! The level is switched on the running pool
//! ([`Handle::set_record_level`](dreadpool_core::Handle::set_record_level)),
//! so nothing needs to be known when the pool is built. The parsing is a
//! pure function of a variable lookup ([`ObserveConfig::from_lookup`]), so
//! it is tested without touching the process's environment.
//!
//! ```
//! use dreadpool::ThreadPoolBuilder;
//! use dreadpool::metrics::observe::ObserveConfig;
//!
//! let pool = ThreadPoolBuilder::new().with_threads(2).build();
//! // Nothing set: nothing is served, and the guard holds nothing.
//! let config = ObserveConfig::from_lookup(|_| None)?;
//! let observer = config.start(pool.handle())?;
//! assert!(observer.serve_addr().is_none());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Available with the `recorder` feature (serving recordings is the point);
//! the Prometheus endpoint also needs `prometheus`, and without it a set
//! `DREADPOOL_PROMETHEUS` is refused with [`ObserveError::PrometheusNotBuilt`]
//! rather than ignored.

mod config;
mod observer;
#[cfg(feature = "prometheus")]
mod prometheus;
#[cfg(feature = "prometheus")]
mod scrape_endpoint;

pub use crate::error::{ObserveEnvError, ObserveError};
pub use config::{ObserveConfig, PROMETHEUS_VAR, RECORD_VAR, SERVE_VAR};
pub use observer::{Observer, PUBLISH_PERIOD};

use dreadpool_core::Handle;

/// Reads the process's environment ([`ObserveConfig::from_env`]) and starts
/// what it asks for on the pool behind `handle`
/// ([`ObserveConfig::start`]). Keep the returned guard for as long as the
/// pool should be served ([`Observer::keep_for_process`] for a pool that
/// lives as long as the process).
///
/// ```
/// use dreadpool::ThreadPoolBuilder;
/// use dreadpool::metrics::observe::serve_from_env;
///
/// let pool = ThreadPoolBuilder::new().with_threads(2).build();
/// match serve_from_env(pool.handle()) {
///     Ok(observer) => observer.keep_for_process(),
///     Err(error) => eprintln!("app: not observable: {error}"),
/// }
/// ```
///
/// # Errors
///
/// [`ObserveError::Env`] for a bad variable, and the other
/// [`ObserveError`]s when a server cannot start.
pub fn serve_from_env(handle: Handle) -> Result<Observer, ObserveError> {
    ObserveConfig::from_env()?.start(handle)
}
