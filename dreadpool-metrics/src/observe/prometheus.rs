//! The Prometheus scrape endpoint: `metrics-exporter-prometheus`'s HTTP
//! listener installed as the process's metrics-rs recorder, as
//! `examples/prometheus.rs` does (feature `prometheus`).

use crate::error::ObserveError;
use crate::publish::{names, Buckets};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
use std::net::{SocketAddr, TcpListener};

/// Installs the endpoint at `addr` and returns the address it listens on.
pub(super) fn install(addr: SocketAddr) -> Result<SocketAddr, ObserveError> {
    let failed = |source: Box<dyn std::error::Error + Send + Sync>| ObserveError::Prometheus {
        addr,
        source,
    };
    let addr = if addr.port() == 0 {
        // The exporter does not report the port it bound, so find a free one
        // first (a race with another process taking it is reported as a
        // failure to bind, below).
        TcpListener::bind(addr)
            .and_then(|listener| listener.local_addr())
            .map_err(|e| failed(e.into()))?
    } else {
        addr
    };
    // Bounds on the core's bucket edges, so that the histograms are exact
    // (see `Buckets`); without them the exporter serves summaries, which a
    // fleet cannot aggregate.
    let bounds = Buckets::default().bounds();
    let mut builder = PrometheusBuilder::new().with_http_listener(addr);
    for name in names::HISTOGRAMS {
        builder = builder
            .set_buckets_for_metric(Matcher::Full(name.to_string()), &bounds)
            .map_err(|e| failed(e.into()))?;
    }
    builder.install().map_err(|e| failed(e.into()))?;
    Ok(addr)
}
