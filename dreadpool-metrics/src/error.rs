//! The crate's error types.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

/// An address string that names no usable endpoint.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AddrError {
    /// The address was empty.
    #[error("empty address: give a socket path or host:port")]
    Empty,
    /// A `host:port` whose host did not resolve.
    #[error("cannot resolve {addr:?}: {source}")]
    Resolve {
        /// The address as given.
        addr: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A `host:port` that resolved to nothing.
    #[error("{addr:?} resolves to no address")]
    NoAddress {
        /// The address as given.
        addr: String,
    },
}

/// The [`Exporter`](crate::Exporter) could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The address did not parse or resolve.
    #[error(transparent)]
    Addr(#[from] AddrError),
    /// TCP export is for this machine only.
    #[error("refusing to export on {addr}: TCP export is only allowed on a loopback address (127.0.0.0/8, ::1); use a Unix socket path or 127.0.0.1:PORT")]
    NotLoopback {
        /// The address refused.
        addr: SocketAddr,
    },
    /// The builder was given no pool.
    #[error("no pool to export: add one with ExporterBuilder::pool or ::handle")]
    NoPools,
    /// Another process is serving on this Unix socket path.
    #[error("{path:?} is in use: another exporter is listening there")]
    InUse {
        /// The socket path.
        path: PathBuf,
    },
    /// The Unix socket path exists and is not a socket: it is left alone.
    #[error("{path:?} exists and is not a socket; not replacing it")]
    NotASocket {
        /// The path.
        path: PathBuf,
    },
    /// Binding the socket failed.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address, as displayed.
        addr: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A background thread could not be started.
    #[error("cannot start the exporter's thread: {0}")]
    Thread(#[source] io::Error),
}

/// A [`Client`](crate::Client) lost or could not make its connection, or
/// the exporter said something it does not understand. The dashboard
/// reconnects on any of them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The address did not parse or resolve.
    #[error(transparent)]
    Addr(#[from] AddrError),
    /// Nobody answered at the address.
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        /// The address, as displayed.
        addr: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Reading or writing the connection failed.
    #[error("connection to the exporter failed: {0}")]
    Io(#[from] io::Error),
    /// Nothing arrived within the read timeout.
    #[error("no message from the exporter within {0:?}")]
    Timeout(std::time::Duration),
    /// The exporter closed the connection (it shut down, or dropped this
    /// client for reading too slowly).
    #[error("the exporter closed the connection")]
    Closed,
    /// The exporter speaks another schema version.
    #[error("the exporter speaks schema version {got}; this client reads version {supported}")]
    Version {
        /// The exporter's version.
        got: u32,
        /// This crate's [`SCHEMA_VERSION`](crate::SCHEMA_VERSION).
        supported: u32,
    },
    /// A line that is not a valid message.
    #[error("malformed message from the exporter: {0}")]
    Protocol(String),
    /// The exporter answered a request with an error.
    #[error("the exporter replied with an error: {0}")]
    Server(String),
}
