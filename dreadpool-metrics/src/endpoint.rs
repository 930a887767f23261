//! Where an exporter listens and a client connects: a Unix socket path or a
//! TCP address, parsed from one string, and the stream types over either.

use crate::error::AddrError;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

/// A Unix domain socket path or a TCP address.
///
/// [`parse`](Self::parse) reads one string: `unix:PATH` and `tcp:HOST:PORT`
/// say which explicitly; otherwise anything with a `/` is a path,
/// `HOST:PORT` (an IP address or a name such as `localhost`) is TCP, and
/// anything else is a path relative to the current directory.
///
/// ```
/// use dreadpool_metrics::Endpoint;
/// use std::path::Path;
///
/// let unix = Endpoint::parse("/tmp/app.sock").unwrap();
/// assert_eq!(unix, Endpoint::Unix("/tmp/app.sock".into()));
/// let tcp = Endpoint::parse("127.0.0.1:6670").unwrap();
/// assert_eq!(tcp, Endpoint::Tcp("127.0.0.1:6670".parse().unwrap()));
/// assert!(matches!(Endpoint::parse("localhost:6670").unwrap(), Endpoint::Tcp(a) if a.ip().is_loopback()));
/// assert_eq!(Endpoint::parse("app.sock").unwrap(), Endpoint::Unix("app.sock".into()));
/// assert_eq!(Endpoint::parse("unix:odd:name").unwrap(), Endpoint::Unix("odd:name".into()));
/// assert!(Endpoint::parse("").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// A Unix domain socket at this path.
    Unix(PathBuf),
    /// TCP at this address.
    Tcp(SocketAddr),
}

impl Endpoint {
    /// Parses (and for `HOST:PORT` with a name, resolves) an address.
    pub fn parse(addr: &str) -> Result<Endpoint, AddrError> {
        let addr = addr.trim();
        if addr.is_empty() {
            return Err(AddrError::Empty);
        }
        if let Some(path) = addr.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(AddrError::Empty);
            }
            return Ok(Endpoint::Unix(PathBuf::from(path)));
        }
        if let Some(tcp) = addr.strip_prefix("tcp:") {
            return resolve(tcp);
        }
        if addr.contains('/') {
            return Ok(Endpoint::Unix(PathBuf::from(addr)));
        }
        if let Ok(socket) = addr.parse::<SocketAddr>() {
            return Ok(Endpoint::Tcp(socket));
        }
        match addr.rsplit_once(':') {
            Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => resolve(addr),
            _ => Ok(Endpoint::Unix(PathBuf::from(addr))),
        }
    }

    /// The path of a Unix endpoint.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Endpoint::Unix(path) => Some(path),
            Endpoint::Tcp(_) => None,
        }
    }

    /// The address of a TCP endpoint.
    pub fn socket_addr(&self) -> Option<SocketAddr> {
        match self {
            Endpoint::Unix(_) => None,
            Endpoint::Tcp(addr) => Some(*addr),
        }
    }
}

/// Resolves `host:port`, preferring a loopback address among several.
fn resolve(addr: &str) -> Result<Endpoint, AddrError> {
    let all: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|source| AddrError::Resolve {
            addr: addr.to_string(),
            source,
        })?
        .collect();
    all.iter()
        .find(|a| a.ip().is_loopback())
        .or_else(|| all.first())
        .map(|a| Endpoint::Tcp(*a))
        .ok_or_else(|| AddrError::NoAddress {
            addr: addr.to_string(),
        })
}

impl FromStr for Endpoint {
    type Err = AddrError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Endpoint::parse(s)
    }
}

impl fmt::Display for Endpoint {
    /// `unix:PATH` or `HOST:PORT`: parses back to the same endpoint.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Unix(path) => write!(f, "unix:{}", path.display()),
            Endpoint::Tcp(addr) => write!(f, "{addr}"),
        }
    }
}

impl From<SocketAddr> for Endpoint {
    fn from(addr: SocketAddr) -> Self {
        Endpoint::Tcp(addr)
    }
}

impl From<PathBuf> for Endpoint {
    fn from(path: PathBuf) -> Self {
        Endpoint::Unix(path)
    }
}

impl From<&Path> for Endpoint {
    fn from(path: &Path) -> Self {
        Endpoint::Unix(path.to_path_buf())
    }
}

/// A connected stream of either kind.
#[derive(Debug)]
pub(crate) enum Conn {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Conn {
    pub(crate) fn connect(endpoint: &Endpoint, timeout: Duration) -> io::Result<Conn> {
        match endpoint {
            Endpoint::Unix(path) => UnixStream::connect(path).map(Conn::Unix),
            Endpoint::Tcp(addr) => {
                let stream = TcpStream::connect_timeout(addr, timeout)?;
                // Frames are whole lines written at once: no need to wait
                // for more bytes.
                stream.set_nodelay(true)?;
                Ok(Conn::Tcp(stream))
            }
        }
    }

    pub(crate) fn try_clone(&self) -> io::Result<Conn> {
        match self {
            Conn::Unix(s) => s.try_clone().map(Conn::Unix),
            Conn::Tcp(s) => s.try_clone().map(Conn::Tcp),
        }
    }

    /// Unblocks any thread reading or writing this connection (or a clone
    /// of it), which then sees end-of-file or an error.
    pub(crate) fn shutdown(&self) {
        // Fails only if the peer is already gone, which is the goal.
        let _ = match self {
            Conn::Unix(s) => s.shutdown(Shutdown::Both),
            Conn::Tcp(s) => s.shutdown(Shutdown::Both),
        };
    }

    pub(crate) fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Conn::Unix(s) => s.set_read_timeout(timeout),
            Conn::Tcp(s) => s.set_read_timeout(timeout),
        }
    }

    pub(crate) fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Conn::Unix(s) => s.set_write_timeout(timeout),
            Conn::Tcp(s) => s.set_write_timeout(timeout),
        }
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Unix(s) => s.read(buf),
            Conn::Tcp(s) => s.read(buf),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Unix(s) => s.write(buf),
            Conn::Tcp(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Conn::Unix(s) => s.flush(),
            Conn::Tcp(s) => s.flush(),
        }
    }
}
