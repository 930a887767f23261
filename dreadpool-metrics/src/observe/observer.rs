//! Starting what an [`ObserveConfig`] asks for, and the guard that keeps it
//! running.

use super::config::ObserveConfig;
use crate::error::ObserveError;
use crate::exporter::Exporter;
use dreadpool_core::Handle;
use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

/// How often the Prometheus publisher samples the pool: twice a second, as
/// `examples/prometheus.rs` does, well under any scrape interval.
pub const PUBLISH_PERIOD: Duration = Duration::from_millis(500);

impl ObserveConfig {
    /// Sets the record level ([`record_level`](Self::record_level)) on the
    /// pool behind `handle`, then starts the [`Exporter`] (when serving)
    /// and the Prometheus endpoint with its publisher (when asked), in that
    /// order. If one fails, what was already started is stopped again.
    ///
    /// # Errors
    ///
    /// [`ObserveError::Serve`] when the exporter cannot bind,
    /// [`ObserveError::PrometheusNotBuilt`] when a Prometheus address is
    /// set in a build without the `prometheus` feature,
    /// [`ObserveError::Prometheus`] when its endpoint cannot start (the
    /// port is taken, another metrics-rs recorder is installed), and
    /// [`ObserveError::Publisher`] when the publishing thread cannot start.
    pub fn start(&self, handle: Handle) -> Result<Observer, ObserveError> {
        if let Some(level) = self.record_level() {
            handle.set_record_level(level);
        }
        let exporter = match self.serve() {
            None => None,
            Some(endpoint) => Some(
                Exporter::builder()
                    .handle(handle.clone())
                    .bind_endpoint(endpoint.clone())
                    .map_err(|source| ObserveError::Serve {
                        addr: endpoint.to_string(),
                        source,
                    })?,
            ),
        };
        let prometheus = match self.prometheus() {
            None => None,
            Some(addr) => Some(start_prometheus(addr, handle)?),
        };
        Ok(Observer {
            exporter,
            prometheus,
        })
    }
}

#[cfg(feature = "prometheus")]
fn start_prometheus(addr: SocketAddr, handle: Handle) -> Result<Prometheus, ObserveError> {
    let addr = super::prometheus::install(addr)?;
    let publisher = crate::publish::Publisher::from_handle(handle, PUBLISH_PERIOD)
        .map_err(ObserveError::Publisher)?;
    Ok(Prometheus {
        addr,
        _publisher: publisher,
    })
}

#[cfg(not(feature = "prometheus"))]
fn start_prometheus(_: SocketAddr, _: Handle) -> Result<Prometheus, ObserveError> {
    Err(ObserveError::PrometheusNotBuilt)
}

/// A running Prometheus endpoint: its address and the thread that
/// publishes the pool's metrics to it.
struct Prometheus {
    addr: SocketAddr,
    #[cfg(feature = "prometheus")]
    _publisher: crate::publish::Publisher,
}

/// What [`ObserveConfig::start`] started: the exporter and the Prometheus
/// publisher, which stop when this is dropped. (The Prometheus HTTP
/// listener itself, a process-wide metrics-rs recorder, stays up.)
#[must_use = "dropping the observer stops serving the pool; keep it, or call keep_for_process"]
pub struct Observer {
    exporter: Option<Exporter>,
    prometheus: Option<Prometheus>,
}

impl Observer {
    /// Where the pool is served to `dreadpool-top --attach`, as the client
    /// takes it (a bound port 0 reads as the port picked).
    pub fn serve_addr(&self) -> Option<String> {
        self.exporter.as_ref().map(Exporter::addr)
    }

    /// Where the Prometheus endpoint listens (a port 0 asked for reads as
    /// the port picked): `http://ADDR/metrics`.
    pub fn prometheus_addr(&self) -> Option<SocketAddr> {
        self.prometheus.as_ref().map(|p| p.addr)
    }

    /// Keeps serving until the process exits: for a pool that lives as
    /// long as the process (a global pool). The exporter's socket file is
    /// then left behind at exit; the next exporter on that path finds it
    /// stale and replaces it.
    pub fn keep_for_process(self) {
        // Never dropped: its threads run until the process exits, and a
        // global pool they read from is never torn down.
        std::mem::forget(self);
    }
}

impl fmt::Debug for Observer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Observer")
            .field("serve_addr", &self.serve_addr())
            .field("prometheus_addr", &self.prometheus_addr())
            .finish()
    }
}
