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
    /// Something answers on this Unix socket path (another exporter, or
    /// some other server): it is not taken over.
    #[error("{path:?} is in use: something is listening there; not replacing it")]
    InUse {
        /// The socket path.
        path: PathBuf,
    },
    /// The Unix socket path exists and is not a socket: it is left alone.
    #[error("{path:?} exists and is a {kind}, not a socket; not replacing it")]
    NotASocket {
        /// The path.
        path: PathBuf,
        /// What is there.
        kind: FileKind,
    },
    /// The Unix socket path is a socket nobody listens on, but another
    /// user's: theirs to remove, not ours.
    #[error(
        "{path:?} is a stale socket of uid {owner}, not of this process's user; not replacing it"
    )]
    NotOurs {
        /// The path.
        path: PathBuf,
        /// The socket file's owner.
        owner: u32,
    },
    /// The Unix socket path is a socket, and connecting to it failed in a
    /// way that does not tell whether it is stale (for example, permission
    /// denied): it is left alone.
    #[error("cannot tell whether {path:?} is a stale socket ({source}); not replacing it")]
    Unverified {
        /// The path.
        path: PathBuf,
        /// Why connecting failed.
        #[source]
        source: io::Error,
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

/// What an [`ExportError::NotASocket`] found at the socket's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link (not followed, whatever it points to).
    Symlink,
    /// A fifo, a device or anything else.
    Other,
}

impl FileKind {
    pub(crate) fn of(file_type: std::fs::FileType) -> FileKind {
        if file_type.is_symlink() {
            FileKind::Symlink
        } else if file_type.is_dir() {
            FileKind::Directory
        } else if file_type.is_file() {
            FileKind::File
        } else {
            FileKind::Other
        }
    }
}

impl std::fmt::Display for FileKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FileKind::File => "regular file",
            FileKind::Directory => "directory",
            FileKind::Symlink => "symbolic link",
            FileKind::Other => "special file",
        })
    }
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

/// [`Buckets::new`](crate::publish::Buckets::new) was given a layout that
/// does not line up with the core's histogram buckets.
#[cfg(feature = "metrics-rs")]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BucketsError {
    /// The core splits each power of two into 8 buckets, so only 1, 2, 4
    /// or 8 bounds per power of two fall on its bucket edges.
    #[error("{0} buckets per power of two: use 1, 2, 4 or 8 (the core's buckets split each power of two in 8)")]
    PerOctave(u32),
    /// The range is empty, starts below 8 ns (where the core's buckets are
    /// 1 ns wide, not log-scaled) or ends above the core's maximum.
    #[error("bucket range {lowest:?}..{highest:?} must be non-empty and within 8ns..{max:?}")]
    Range {
        /// The lowest bound asked for.
        lowest: std::time::Duration,
        /// The highest bound asked for.
        highest: std::time::Duration,
        /// [`LatencyHistogram::MAX`](dreadpool_core::LatencyHistogram::MAX).
        max: std::time::Duration,
    },
}

/// A bad value in one of the observability variables
/// ([`observe`](crate::observe)); the message names the variable.
#[cfg(feature = "recorder")]
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ObserveEnvError {
    /// The value is not UTF-8.
    #[error("{var} is not valid UTF-8")]
    NotUnicode {
        /// The variable.
        var: &'static str,
    },
    /// The address does not parse or resolve.
    #[error("{var}={value:?}: {source}")]
    Addr {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// Why.
        #[source]
        source: AddrError,
    },
    /// A TCP address off this machine: serving is for loopback only.
    #[error("{var}={value:?}: not a loopback address; use a socket path or 127.0.0.1:PORT")]
    NotLoopback {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// Not a `host:port` (the Prometheus endpoint is HTTP over TCP).
    #[error("{var}={value:?}: expected a loopback host:port such as 127.0.0.1:9187")]
    NotHostPort {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// Not a record level.
    #[error("{var}={value:?}: unknown record level (expected off, scheduler or tasks)")]
    Level {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
}

/// What the observability switch asked for could not start
/// ([`observe`](crate::observe)).
#[cfg(feature = "recorder")]
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ObserveError {
    /// A variable has a bad value.
    #[error(transparent)]
    Env(#[from] ObserveEnvError),
    /// The exporter could not bind.
    #[error("DREADPOOL_SERVE: cannot serve on {addr}: {source}")]
    Serve {
        /// The address.
        addr: String,
        /// Why.
        #[source]
        source: ExportError,
    },
    /// `DREADPOOL_PROMETHEUS` is set, but this build has no Prometheus
    /// endpoint (the `prometheus` feature is off).
    #[error(
        "DREADPOOL_PROMETHEUS is set, but this build lacks the `prometheus` feature of dreadpool"
    )]
    PrometheusNotBuilt,
    /// The Prometheus endpoint could not start.
    #[error("DREADPOOL_PROMETHEUS: cannot serve on {addr}: {source}")]
    Prometheus {
        /// The address.
        addr: SocketAddr,
        /// Why (the port is taken, another metrics-rs recorder is installed).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The thread publishing to Prometheus could not start.
    #[error("DREADPOOL_PROMETHEUS: cannot start the publisher thread: {0}")]
    Publisher(#[source] io::Error),
}
