//! [`Client`]: reads an [`Exporter`](crate::Exporter)'s stream, so that a
//! dashboard never speaks the protocol itself.

use crate::endpoint::{Conn, Endpoint};
use crate::error::ClientError;
use crate::protocol::{self, Incoming, Line, MAX_MESSAGE_LINE, SCHEMA_VERSION};
use crate::snapshot::Snapshot;
use std::io::{self, BufReader, Write};
use std::time::Duration;

/// How long [`Client::connect`] waits for a TCP connection and the hello.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long [`Client::recording`] waits for its reply: the exporter copies
/// the pool's rings and serialises up to its event limit (tens of MB at
/// most), well within this on any machine that runs the pool.
#[cfg(feature = "recorder")]
pub const RECORDING_TIMEOUT: Duration = Duration::from_secs(60);

/// What the exporter said about itself when the client connected.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Hello {
    /// Its schema version (equal to [`SCHEMA_VERSION`] once connected).
    pub v: u32,
    /// The serving crate (`dreadpool-metrics`).
    pub server: String,
    /// The serving crate's version.
    pub version: String,
    /// The host process's id.
    pub pid: u32,
    /// Time between frames.
    pub interval: Duration,
    /// The exported pools' names, in frame order.
    pub pools: Vec<String>,
    /// Whether it answers `recording` requests (its host was built with the
    /// `recorder` feature). An exporter from before recordings says `false`.
    pub recording: bool,
}

/// One tick's snapshots, one per exported pool in the exporter's order.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Frame {
    /// The tick number, counting from 1; a gap means frames were dropped
    /// because this client read too slowly. A frame sent in answer to a
    /// request carries the latest tick's number.
    pub seq: u64,
    /// One snapshot per pool.
    pub pools: Vec<Snapshot>,
}

/// A message from the exporter that a client acts on, from
/// [`Client::next_message`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Message {
    /// A tick's (or a requested) snapshots.
    Frame(Frame),
    /// The answer to a recording request (feature `recorder`).
    #[cfg(feature = "recorder")]
    Recording(Box<crate::recording::RecordingReply>),
}

/// Sends requests on a [`Client`]'s connection from another thread, while
/// the client's own thread reads the replies with
/// [`Client::next_message`]. Made with [`Client::requester`].
///
/// Its writes and the client's own ([`Client::ping`] and the like) go to
/// the same socket: let one of them write at a time.
#[derive(Debug)]
pub struct Requester {
    writer: Conn,
}

impl Requester {
    /// Asks for a flight recording; the reply arrives as a
    /// [`Message::Recording`] (or as [`ClientError::Server`] when the
    /// exporter refuses: no such pool, no recorder).
    #[cfg(feature = "recorder")]
    pub fn request_recording(
        &mut self,
        request: &crate::recording::RecordingRequest,
    ) -> Result<(), ClientError> {
        self.writer.write_all(&request.line())?;
        Ok(())
    }

    /// Asks for a frame read now (see [`Client::request_snapshot`]).
    pub fn request_snapshot(&mut self) -> Result<(), ClientError> {
        self.writer.write_all(b"{\"request\":\"snapshot\"}\n")?;
        Ok(())
    }
}

/// A connection to an [`Exporter`](crate::Exporter): yields one
/// `Vec<Snapshot>` per tick (one snapshot per exported pool).
///
/// It is an [`Iterator`] of `Result<Vec<Snapshot>, ClientError>` that ends
/// after the first error; a dashboard reconnects then. Every read is bounded
/// by a timeout (by default a few exporter intervals plus
/// [`CONNECT_TIMEOUT`]), so a stalled exporter gives
/// [`ClientError::Timeout`], never a hang.
///
/// ```
/// use dreadpool::ThreadPoolBuilder;
/// use dreadpool::metrics::{Client, Exporter, Monitor};
/// use std::time::Duration;
///
/// let pool = ThreadPoolBuilder::new().with_threads(2).build();
/// let exporter = Exporter::builder()
///     .pool(&pool)
///     .interval(Duration::from_millis(20))
///     .bind("127.0.0.1:0")?;
///
/// let mut client = Client::connect(&exporter.addr())?;
/// assert_eq!(client.hello().pools.len(), 1);
/// let mut monitor = Monitor::detached();
/// for pools in client.by_ref().take(2) {
///     let interval = monitor.observe(pools?.remove(0));
///     assert_eq!(interval.threads, 2);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Client {
    reader: BufReader<Conn>,
    writer: Conn,
    endpoint: Endpoint,
    hello: Hello,
    line: Vec<u8>,
    read_timeout: Option<Duration>,
    last_seq: Option<u64>,
    missed: u64,
    failed: bool,
}

impl Client {
    /// Connects to `addr` (a Unix socket path, or `HOST:PORT` for TCP: see
    /// [`Endpoint::parse`]) and reads the exporter's hello.
    ///
    /// # Errors
    ///
    /// [`ClientError::Connect`] when nobody listens there,
    /// [`ClientError::Version`] for an exporter of another schema version,
    /// and the errors of reading (timeouts, a closed connection, a
    /// malformed hello).
    pub fn connect(addr: &str) -> Result<Client, ClientError> {
        Self::connect_endpoint(&Endpoint::parse(addr)?)
    }

    /// Like [`connect`](Self::connect), with an already parsed endpoint.
    pub fn connect_endpoint(endpoint: &Endpoint) -> Result<Client, ClientError> {
        let conn =
            Conn::connect(endpoint, CONNECT_TIMEOUT).map_err(|source| ClientError::Connect {
                addr: endpoint.to_string(),
                source,
            })?;
        let writer = conn.try_clone()?;
        let mut client = Client {
            reader: BufReader::with_capacity(64 * 1024, conn),
            writer,
            endpoint: endpoint.clone(),
            hello: Hello::default(),
            line: Vec::new(),
            read_timeout: Some(CONNECT_TIMEOUT),
            last_seq: None,
            missed: 0,
            failed: false,
        };
        client.apply_read_timeout()?;
        client.hello = client.read_hello()?;
        client.read_timeout = Some(CONNECT_TIMEOUT + client.hello.interval.saturating_mul(4));
        client.apply_read_timeout()?;
        Ok(client)
    }

    fn read_hello(&mut self) -> Result<Hello, ClientError> {
        match self.read_message()? {
            Incoming::Hello {
                v,
                server,
                version,
                pid,
                interval_ms,
                pools,
                recording,
            } => {
                if v != SCHEMA_VERSION {
                    return Err(ClientError::Version {
                        got: v,
                        supported: SCHEMA_VERSION,
                    });
                }
                Ok(Hello {
                    v,
                    server,
                    version,
                    pid,
                    interval: Duration::from_millis(interval_ms),
                    pools,
                    recording,
                })
            }
            Incoming::Error { error } => Err(ClientError::Server(error)),
            _ => Err(ClientError::Protocol(
                "expected a hello as the first message".into(),
            )),
        }
    }

    /// What the exporter said when the client connected.
    pub fn hello(&self) -> &Hello {
        &self.hello
    }

    /// Where it is connected.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Frames the exporter dropped for this client so far (gaps in `seq`).
    pub fn missed_frames(&self) -> u64 {
        self.missed
    }

    /// The read timeout: how long [`next_frame`](Self::next_frame) waits
    /// before [`ClientError::Timeout`]; `None` waits for ever.
    pub fn set_read_timeout(&mut self, timeout: Option<Duration>) -> Result<(), ClientError> {
        self.read_timeout = timeout.map(|t| t.max(Duration::from_millis(1)));
        self.apply_read_timeout()
    }

    fn apply_read_timeout(&mut self) -> Result<(), ClientError> {
        self.reader.get_ref().set_read_timeout(self.read_timeout)?;
        Ok(())
    }

    /// Waits for the next frame.
    ///
    /// # Errors
    ///
    /// [`ClientError::Closed`] when the exporter closed the connection,
    /// [`ClientError::Timeout`], [`ClientError::Io`],
    /// [`ClientError::Protocol`] for a line that is not a message, and
    /// [`ClientError::Server`] when the exporter answered a request with an
    /// error.
    pub fn next_frame(&mut self) -> Result<Frame, ClientError> {
        loop {
            #[allow(unreachable_patterns)] // `Recording` only with `recorder`
            match self.next_message()? {
                Message::Frame(frame) => return Ok(frame),
                _ => continue,
            }
        }
    }

    /// Waits for the next frame or recording (pongs and repeated hellos
    /// are consumed here).
    ///
    /// # Errors
    ///
    /// As [`next_frame`](Self::next_frame).
    pub fn next_message(&mut self) -> Result<Message, ClientError> {
        loop {
            match self.read_message()? {
                Incoming::Snapshots { seq, pools } => {
                    if let Some(last) = self.last_seq {
                        self.missed += seq.saturating_sub(last).saturating_sub(1);
                    }
                    self.last_seq = Some(seq.max(self.last_seq.unwrap_or(0)));
                    return Ok(Message::Frame(Frame { seq, pools }));
                }
                #[cfg(feature = "recorder")]
                Incoming::Recording(body) => {
                    return Ok(Message::Recording(Box::new(body.into_reply())))
                }
                Incoming::Error { error } => return Err(ClientError::Server(error)),
                Incoming::Hello { .. } | Incoming::Pong | Incoming::Other => continue,
            }
        }
    }

    /// A [`Requester`] on this connection, to send requests from another
    /// thread while this one reads.
    ///
    /// # Errors
    ///
    /// [`ClientError::Io`] when the socket cannot be duplicated.
    pub fn requester(&self) -> Result<Requester, ClientError> {
        Ok(Requester {
            writer: self.writer.try_clone()?,
        })
    }

    /// Asks for a flight recording; the reply arrives through
    /// [`next_message`](Self::next_message) as a [`Message::Recording`].
    #[cfg(feature = "recorder")]
    pub fn request_recording(
        &mut self,
        request: &crate::recording::RecordingRequest,
    ) -> Result<(), ClientError> {
        self.writer.write_all(&request.line())?;
        Ok(())
    }

    /// Asks for a flight recording and waits for it: the request and its
    /// reply in one call, for scripts. Frames that arrive meanwhile are
    /// read and dropped (their gap shows in [`missed_frames`](Self::missed_frames)
    /// only as later `seq` numbers do).
    ///
    /// ```
    /// use dreadpool::{EventKind, RecordLevel, ThreadPoolBuilder};
    /// use dreadpool::metrics::{Client, Exporter, RecordingRequest};
    ///
    /// let pool = ThreadPoolBuilder::new()
    ///     .with_threads(2)
    ///     .with_record_level(RecordLevel::Tasks)
    ///     .build();
    /// pool.spawn(|| {});
    /// pool.join();
    /// let exporter = Exporter::builder().pool(&pool).bind("127.0.0.1:0")?;
    /// let mut client = Client::connect(&exporter.addr())?;
    /// let reply = client.recording(&RecordingRequest::pool(0))?;
    /// let runs = reply.recording.events().iter()
    ///     .filter(|e| matches!(e.kind, EventKind::RunBegin { .. }))
    ///     .count();
    /// assert_eq!(runs, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ClientError::Server`] when the exporter refuses (no such pool, no
    /// recorder), [`ClientError::Timeout`] when no recording arrives within
    /// [`RECORDING_TIMEOUT`], and the errors of
    /// [`next_frame`](Self::next_frame).
    #[cfg(feature = "recorder")]
    pub fn recording(
        &mut self,
        request: &crate::recording::RecordingRequest,
    ) -> Result<crate::recording::RecordingReply, ClientError> {
        self.request_recording(request)?;
        let deadline = std::time::Instant::now() + RECORDING_TIMEOUT;
        loop {
            if std::time::Instant::now() >= deadline {
                return Err(ClientError::Timeout(RECORDING_TIMEOUT));
            }
            if let Message::Recording(reply) = self.next_message()? {
                return Ok(*reply);
            }
        }
    }

    /// Waits for the next frame and returns its snapshots.
    ///
    /// # Errors
    ///
    /// As [`next_frame`](Self::next_frame).
    pub fn next_snapshots(&mut self) -> Result<Vec<Snapshot>, ClientError> {
        self.next_frame().map(|f| f.pools)
    }

    /// Asks for a frame read now rather than at the next tick; it arrives
    /// through [`next_frame`](Self::next_frame) like any other.
    pub fn request_snapshot(&mut self) -> Result<(), ClientError> {
        self.send(br#"{"request":"snapshot"}"#)
    }

    /// Asks the exporter to answer, to check the connection; the `pong`
    /// is consumed by [`next_frame`](Self::next_frame).
    pub fn ping(&mut self) -> Result<(), ClientError> {
        self.send(br#"{"request":"ping"}"#)
    }

    fn send(&mut self, request: &[u8]) -> Result<(), ClientError> {
        self.writer.write_all(request)?;
        self.writer.write_all(b"\n")?;
        Ok(())
    }

    fn read_message(&mut self) -> Result<Incoming, ClientError> {
        loop {
            let read = protocol::read_line(&mut self.reader, &mut self.line, MAX_MESSAGE_LINE);
            match read {
                Ok(Line::Complete) => {}
                Ok(Line::Eof) => return Err(ClientError::Closed),
                Ok(Line::TooLong) => {
                    return Err(ClientError::Protocol(format!(
                        "a line longer than {MAX_MESSAGE_LINE} bytes"
                    )))
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(ClientError::Timeout(self.read_timeout.unwrap_or_default()))
                }
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => {
                    return Err(ClientError::Closed)
                }
                Err(e) => return Err(ClientError::Io(e)),
            }
            if self.line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            // A recording is read straight into its body, without the
            // buffering a tagged enum needs: it can be tens of MB.
            #[cfg(feature = "recorder")]
            if self.line.starts_with(crate::recording::LINE_START) {
                return crate::json::from_slice(&self.line)
                    .map(|body| Incoming::Recording(Box::new(body)))
                    .map_err(|e| ClientError::Protocol(format!("{e} in a recording")));
            }
            return crate::json::from_slice(&self.line).map_err(|e| {
                let start =
                    String::from_utf8_lossy(&self.line[..self.line.len().min(80)]).into_owned();
                ClientError::Protocol(format!("{e} in {start:?}"))
            });
        }
    }
}

impl Iterator for Client {
    type Item = Result<Vec<Snapshot>, ClientError>;

    /// The next frame's snapshots; after the first error, `None`.
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let next = self.next_snapshots();
        self.failed = next.is_err();
        Some(next)
    }
}
