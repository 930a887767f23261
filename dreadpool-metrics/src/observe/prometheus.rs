//! The Prometheus scrape endpoint: `metrics-exporter-prometheus`'s recorder,
//! installed as the process's metrics-rs recorder, rendered by it, and
//! served over HTTP by [`scrape_endpoint`](super::scrape_endpoint) (which
//! says why not by the exporter's own listener). Feature `prometheus`.

use super::scrape_endpoint;
use crate::error::ObserveError;
use crate::publish::{names, Buckets};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::net::{SocketAddr, TcpListener};
use std::thread;
use std::time::Duration;

/// How often the recorder's upkeep runs (the exporter's own listener runs
/// it as often): it drains the histograms' pending samples into their
/// buckets, so that memory stays bounded between scrapes, or with none.
const UPKEEP_PERIOD: Duration = Duration::from_secs(5);

/// Installs the recorder, serves it at `addr`, and returns the address it
/// listens on (the port picked, for port 0).
pub(super) fn install(addr: SocketAddr) -> Result<SocketAddr, ObserveError> {
    let failed = |source: Box<dyn std::error::Error + Send + Sync>| ObserveError::Prometheus {
        addr,
        source,
    };
    // Bound before the recorder is installed, so that a taken port leaves
    // the process's recorder free for another try.
    let listener = TcpListener::bind(addr).map_err(|e| failed(e.into()))?;
    let bound = listener.local_addr().map_err(|e| failed(e.into()))?;
    // Bounds on the core's bucket edges, so that the histograms are exact
    // (see `Buckets`); without them the exporter renders summaries, which a
    // fleet cannot aggregate.
    let bounds = Buckets::default().bounds();
    let mut builder = PrometheusBuilder::new();
    for name in names::HISTOGRAMS {
        builder = builder
            .set_buckets_for_metric(Matcher::Full(name.to_string()), &bounds)
            .map_err(|e| failed(e.into()))?;
    }
    let handle = builder.install_recorder().map_err(|e| failed(e.into()))?;
    spawn_upkeep(handle.clone()).map_err(|e| failed(e.into()))?;
    scrape_endpoint::spawn(listener, move || handle.render()).map_err(|e| failed(e.into()))?;
    Ok(bound)
}

/// Runs the recorder's upkeep every `UPKEEP_PERIOD` for the rest of the
/// process (the recorder is process-wide and is never uninstalled).
fn spawn_upkeep(handle: PrometheusHandle) -> std::io::Result<()> {
    thread::Builder::new()
        .name("dreadpool-prometheus-upkeep".into())
        .spawn(move || loop {
            thread::sleep(UPKEEP_PERIOD);
            handle.run_upkeep();
        })
        .map(drop)
}
