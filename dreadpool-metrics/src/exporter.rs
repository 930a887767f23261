//! [`Exporter`]: serves snapshots of one or several pools on a local socket.
//!
//! Threads, not an async runtime: one accepts connections, one ticks (reads
//! every pool once per interval, serialises one frame, hands it to every
//! client's bounded queue without waiting), and each client has a writer
//! (drains its queue into the socket, with a write timeout) and a reader
//! (answers requests). So the pools are only ever read, never waited on, and
//! a slow client loses frames (then, past the write timeout, its connection)
//! without slowing anyone else. Answers to its requests are never dropped:
//! its reader waits for room in its queue, which only its own writer drains.
//!
//! The Unix socket file, owner-only and never put in place of anything but
//! a stale socket of ours, is [`unix_socket`]'s business.

mod unix_socket;

use crate::endpoint::{Conn, Endpoint};
use crate::error::ExportError;
use crate::protocol::{self, Line, Outgoing, Request, MAX_REQUEST_LINE, SCHEMA_VERSION};
use crate::snapshot::Snapshot;
use dreadpool_core::{Handle, ThreadPool};
use std::fmt;
use std::io::{self, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// Default time between frames.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(250);
/// Default frames buffered per client before frames are dropped for it.
pub const DEFAULT_CLIENT_BUFFER: usize = 16;
/// Default most clients served at once.
pub const DEFAULT_MAX_CLIENTS: usize = 32;
/// Default time a write to a client may block before the client is dropped.
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(5);

// Defined with the recording types; without the `recorder` feature the
// builder keeps the field (unused) so that its layout does not depend on it.
#[cfg(feature = "recorder")]
use crate::recording::{DEFAULT_MAX_RECORDING_EVENTS, MAX_RECORDING_EVENTS};
#[cfg(not(feature = "recorder"))]
const DEFAULT_MAX_RECORDING_EVENTS: usize = 0;

type Frame = Arc<[u8]>;

/// Configures an [`Exporter`]: which pools, how often, how much patience
/// with slow clients. Finish with [`bind`](Self::bind).
///
/// ```
/// use dreadpool::ThreadPoolBuilder;
/// use dreadpool::metrics::Exporter;
/// use std::time::Duration;
///
/// let io = ThreadPoolBuilder::new().with_threads(2).with_thread_name("io").build();
/// let cpu = ThreadPoolBuilder::new().with_threads(2).with_thread_name("cpu").build();
/// let path = std::env::temp_dir().join(format!("dreadpool-doc-{}.sock", std::process::id()));
/// let exporter = Exporter::builder()
///     .pool(&io)
///     .pool(&cpu)
///     .interval(Duration::from_millis(100))
///     .bind(path.to_str().unwrap())?;
/// assert_eq!(exporter.pools(), 2);
/// drop(exporter); // stops serving and removes the socket file
/// assert!(!path.exists());
/// # Ok::<(), dreadpool::metrics::ExportError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ExporterBuilder {
    pools: Vec<Handle>,
    interval: Duration,
    client_buffer: usize,
    max_clients: usize,
    write_timeout: Duration,
    max_recording_events: usize,
}

impl Default for ExporterBuilder {
    fn default() -> Self {
        ExporterBuilder {
            pools: Vec::new(),
            interval: DEFAULT_INTERVAL,
            client_buffer: DEFAULT_CLIENT_BUFFER,
            max_clients: DEFAULT_MAX_CLIENTS,
            write_timeout: DEFAULT_WRITE_TIMEOUT,
            max_recording_events: DEFAULT_MAX_RECORDING_EVENTS,
        }
    }
}

impl ExporterBuilder {
    /// Adds a pool. Pools appear in every frame in the order they were
    /// added; that position is their identity on the wire.
    pub fn pool(self, pool: &ThreadPool) -> Self {
        self.handle(pool.handle())
    }

    /// Adds the pool behind `handle`.
    pub fn handle(mut self, handle: Handle) -> Self {
        self.pools.push(handle);
        self
    }

    /// Adds several pools' handles.
    pub fn handles(mut self, handles: impl IntoIterator<Item = Handle>) -> Self {
        self.pools.extend(handles);
        self
    }

    /// Time between frames (default [`DEFAULT_INTERVAL`], at least 1 ms).
    pub fn interval(mut self, interval: Duration) -> Self {
        self.interval = interval.max(Duration::from_millis(1));
        self
    }

    /// Frames buffered per client (default [`DEFAULT_CLIENT_BUFFER`], at
    /// least 1). When a client's buffer is full, new frames are dropped for
    /// that client (it sees a gap in `seq`); answers to its requests wait
    /// for room instead.
    pub fn client_buffer(mut self, frames: usize) -> Self {
        self.client_buffer = frames.max(1);
        self
    }

    /// Most clients at once (default [`DEFAULT_MAX_CLIENTS`]); one more gets
    /// an error line and is closed.
    pub fn max_clients(mut self, clients: usize) -> Self {
        self.max_clients = clients.max(1);
        self
    }

    /// How long one write to a client may block (default
    /// [`DEFAULT_WRITE_TIMEOUT`]) before that client is disconnected as
    /// dead or too slow.
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.write_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// The most events one `recording` reply carries (default
    /// [`DEFAULT_MAX_RECORDING_EVENTS`], at least 1, at most
    /// [`MAX_RECORDING_EVENTS`]): the newest are kept, and the reply says
    /// how many it left out. This bounds a reply's size (about 70 bytes an
    /// event) and the memory it takes to make.
    ///
    /// [`DEFAULT_MAX_RECORDING_EVENTS`]: crate::DEFAULT_MAX_RECORDING_EVENTS
    /// [`MAX_RECORDING_EVENTS`]: crate::MAX_RECORDING_EVENTS
    #[cfg(feature = "recorder")]
    pub fn max_recording_events(mut self, events: usize) -> Self {
        self.max_recording_events = events.clamp(1, MAX_RECORDING_EVENTS);
        self
    }

    /// Starts serving on `addr`: a Unix socket path, or `HOST:PORT` on a
    /// loopback address (see [`Endpoint::parse`]; port 0 picks a free port,
    /// [`Exporter::endpoint`] tells which).
    ///
    /// # Who can connect
    ///
    /// A recording says more about a process than its counters, so choose
    /// the address with its readers in mind:
    ///
    /// - A Unix socket is created owner-only (mode 0600) whatever the
    ///   process's umask, and is never reachable with a wider mode, even
    ///   for a moment: only this user (and root) can connect. An existing
    ///   path is replaced only if it is a stale socket of ours: a socket
    ///   file of this user's on which nobody listens (its process died
    ///   without removing it). Anything else there is left untouched and
    ///   the bind fails.
    /// - Loopback TCP (`127.0.0.1:PORT`) is open to **every local user of
    ///   the machine**: TCP has no owner or mode. Prefer a socket path for
    ///   anything sensitive.
    ///
    /// # Errors
    ///
    /// [`ExportError::NotLoopback`] for a TCP address off this machine;
    /// for a socket path, [`ExportError::InUse`] when something listens
    /// there, [`ExportError::NotASocket`] when it is some other file,
    /// [`ExportError::NotOurs`] for another user's stale socket,
    /// [`ExportError::Unverified`] when it cannot be told stale; and
    /// [`ExportError::NoPools`], and binding or thread errors.
    ///
    /// ```
    /// use dreadpool::ThreadPoolBuilder;
    /// use dreadpool::metrics::{ExportError, Exporter, FileKind};
    /// use std::os::unix::fs::PermissionsExt;
    ///
    /// let pool = ThreadPoolBuilder::new().with_threads(1).build();
    /// let dir = std::env::temp_dir().join(format!("dreadpool-doc3-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("app.sock");
    /// let exporter = Exporter::builder().pool(&pool).bind(path.to_str().unwrap())?;
    /// let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    /// assert_eq!(mode & 0o777, 0o600);
    /// drop(exporter);
    ///
    /// // A file that is not a socket is never replaced.
    /// std::fs::write(&path, "notes").unwrap();
    /// let refused = Exporter::builder().pool(&pool).bind(path.to_str().unwrap());
    /// assert!(matches!(refused, Err(ExportError::NotASocket { kind: FileKind::File, .. })));
    /// assert_eq!(std::fs::read_to_string(&path).unwrap(), "notes");
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), ExportError>(())
    /// ```
    pub fn bind(self, addr: &str) -> Result<Exporter, ExportError> {
        self.bind_endpoint(Endpoint::parse(addr)?)
    }

    /// Like [`bind`](Self::bind), with an already parsed endpoint.
    pub fn bind_endpoint(self, endpoint: Endpoint) -> Result<Exporter, ExportError> {
        if self.pools.is_empty() {
            return Err(ExportError::NoPools);
        }
        let (listener, endpoint, socket_file) = Listener::bind(endpoint)?;
        Exporter::start(self, listener, endpoint, socket_file)
    }
}

/// Counters of an exporter's work, for tests and for the host's own logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ExporterStats {
    /// Clients connected now.
    pub clients: usize,
    /// Clients accepted since the start.
    pub accepted: u64,
    /// Connections refused because `max_clients` were connected.
    pub refused: u64,
    /// Frames produced (ticks).
    pub frames: u64,
    /// Frames not delivered to some client because its buffer was full.
    pub frames_dropped: u64,
    /// Clients disconnected because a write blocked past the timeout.
    pub slow_disconnects: u64,
    /// Malformed or unknown requests answered with an error.
    pub bad_requests: u64,
    /// `recording` replies made and queued to send (feature `recorder`).
    pub recordings: u64,
}

/// Serves snapshots of one or several pools to clients on a local socket,
/// as newline-delimited JSON (the schema is in the crate docs).
///
/// A Unix socket is owner-only (0600); loopback TCP is open to every local
/// user of the machine (see [`ExporterBuilder::bind`]): prefer a socket
/// path for anything sensitive.
///
/// Add two lines to a host application and watch it live with
/// `dreadpool-top --attach PATH`:
///
/// ```
/// use dreadpool::ThreadPoolBuilder;
/// use dreadpool::metrics::{Client, Exporter};
///
/// let pool = ThreadPoolBuilder::new().with_threads(2).build();
/// let path = std::env::temp_dir().join(format!("dreadpool-doc2-{}.sock", std::process::id()));
/// let _exporter = Exporter::bind(&pool, path.to_str().unwrap())?;
///
/// // Elsewhere (usually another process):
/// let mut client = Client::connect(path.to_str().unwrap())?;
/// let pools = client.next_snapshots()?;
/// assert_eq!(pools.len(), 1);
/// assert_eq!(pools[0].threads, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Several clients are served at once, each from its own bounded buffer: a
/// client that reads slowly misses frames and, once a write to it blocks
/// for the write timeout, is disconnected; the pools and the other clients
/// never wait for it. A request line that does not parse gets an `error`
/// line back. Dropping the exporter closes every connection, joins its
/// threads and removes the socket file. Pools that shut down while served
/// keep appearing in frames, with their workers stopped.
pub struct Exporter {
    shared: Arc<Shared>,
    endpoint: Endpoint,
    listener: Arc<Listener>,
    accept_thread: Option<JoinHandle<()>>,
    tick_thread: Option<JoinHandle<()>>,
    stop_tick: Option<SyncSender<()>>,
    /// The socket file we created, and its inode, to remove it on drop only
    /// if it is still ours.
    socket_file: Option<(PathBuf, u64)>,
}

impl Exporter {
    /// A builder, to export several pools or change the defaults.
    pub fn builder() -> ExporterBuilder {
        ExporterBuilder::default()
    }

    /// Exports one pool with the default settings: the two-line case.
    pub fn bind(pool: &ThreadPool, addr: &str) -> Result<Exporter, ExportError> {
        Self::builder().pool(pool).bind(addr)
    }

    /// Exports the pools behind `handles` with the default settings.
    pub fn new(handles: Vec<Handle>, addr: &str) -> Result<Exporter, ExportError> {
        Self::builder().handles(handles).bind(addr)
    }

    fn start(
        config: ExporterBuilder,
        listener: Listener,
        endpoint: Endpoint,
        socket_file: SocketFile,
    ) -> Result<Exporter, ExportError> {
        let shared = Arc::new(Shared {
            hello: hello_line(&config),
            pools: config.pools,
            interval: config.interval,
            client_buffer: config.client_buffer,
            max_clients: config.max_clients,
            write_timeout: config.write_timeout,
            max_recording_events: config.max_recording_events,
            stopping: AtomicBool::new(false),
            clients: Mutex::new(Vec::new()),
            last_frame: Mutex::new(None),
            seq: AtomicU64::new(0),
            next_id: AtomicUsize::new(0),
            stats: Stats::default(),
        });
        let listener = Arc::new(listener);
        let mut exporter = Exporter {
            shared: Arc::clone(&shared),
            listener: Arc::clone(&listener),
            endpoint,
            accept_thread: None,
            tick_thread: None,
            stop_tick: None,
            socket_file,
        };
        // From here on, an error drops `exporter`, which undoes what started.
        let (stop_tick, stopped) = mpsc::sync_channel(1);
        exporter.stop_tick = Some(stop_tick);
        let s = Arc::clone(&shared);
        exporter.tick_thread = Some(
            thread::Builder::new()
                .name("dreadpool-export-tick".into())
                .spawn(move || tick_loop(&s, &stopped))
                .map_err(ExportError::Thread)?,
        );
        let s = Arc::clone(&shared);
        exporter.accept_thread = Some(
            thread::Builder::new()
                .name("dreadpool-export-accept".into())
                .spawn(move || accept_loop(&s, &listener))
                .map_err(ExportError::Thread)?,
        );
        Ok(exporter)
    }

    /// Where it listens (for TCP port 0, with the port actually bound).
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The address for [`Client::connect`](crate::Client::connect), as a
    /// string.
    pub fn addr(&self) -> String {
        match &self.endpoint {
            Endpoint::Unix(path) => {
                let plain = path.display().to_string();
                // A relative path such as `host:7` would read as TCP.
                match Endpoint::parse(&plain) {
                    Ok(Endpoint::Unix(p)) if p == *path => plain,
                    _ => format!("unix:{plain}"),
                }
            }
            Endpoint::Tcp(addr) => addr.to_string(),
        }
    }

    /// Number of pools exported.
    pub fn pools(&self) -> usize {
        self.shared.pools.len()
    }

    /// Counters of the exporter's work so far.
    pub fn stats(&self) -> ExporterStats {
        let s = &self.shared.stats;
        ExporterStats {
            clients: lock(&self.shared.clients).len(),
            accepted: s.accepted.load(Ordering::Relaxed),
            refused: s.refused.load(Ordering::Relaxed),
            frames: s.frames.load(Ordering::Relaxed),
            frames_dropped: s.frames_dropped.load(Ordering::Relaxed),
            slow_disconnects: s.slow_disconnects.load(Ordering::Relaxed),
            bad_requests: s.bad_requests.load(Ordering::Relaxed),
            recordings: s.recordings.load(Ordering::Relaxed),
        }
    }

    /// Stops serving: closes every connection, joins the threads, removes
    /// the socket file. `Drop` does the same.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        // Wake the ticker (a full channel means it is already woken).
        if let Some(stop) = self.stop_tick.take() {
            let _ = stop.try_send(());
        }
        if let Some(t) = self.tick_thread.take() {
            let _ = t.join();
        }
        if let Some(t) = self.accept_thread.take() {
            if self.wake_accept() {
                let _ = t.join();
            }
            // Else leave the thread: it exits at its next connection, and
            // holds nothing but the listener.
        }
        let clients: Vec<ClientSlot> = lock(&self.shared.clients).drain(..).collect();
        for client in &clients {
            client.conn.shutdown();
        }
        for client in clients {
            drop(client.frames);
            for t in client.threads {
                let _ = t.join();
            }
        }
        if let Some((path, ino)) = self.socket_file.take() {
            let ours = std::fs::metadata(&path).is_ok_and(|m| m.ino() == ino);
            if ours {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

impl Exporter {
    /// Wakes the accept thread blocked in `accept`; true if it will wake.
    fn wake_accept(&self) -> bool {
        // On Linux, shutdown(2) on a listening socket makes a blocked
        // accept fail at once (EINVAL), for TCP and Unix sockets alike.
        let shut = socket2::SockRef::from(&*self.listener)
            .shutdown(std::net::Shutdown::Read)
            .is_ok();
        if shut && cfg!(target_os = "linux") {
            return true;
        }
        // Elsewhere, a connection of our own wakes it; but only to a socket
        // file that is still ours, never to someone else's listener.
        if let Some((path, ino)) = &self.socket_file {
            if !std::fs::metadata(path).is_ok_and(|m| m.ino() == *ino) {
                return false;
            }
        }
        Conn::connect(&self.endpoint, Duration::from_secs(1)).is_ok()
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.stop();
    }
}

impl fmt::Debug for Exporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Exporter")
            .field("endpoint", &self.endpoint)
            .field("pools", &self.shared.pools.len())
            .field("stats", &self.stats())
            .finish()
    }
}

/// What every exporter thread shares.
struct Shared {
    pools: Vec<Handle>,
    interval: Duration,
    client_buffer: usize,
    max_clients: usize,
    write_timeout: Duration,
    #[cfg_attr(not(feature = "recorder"), allow(dead_code))]
    max_recording_events: usize,
    hello: Frame,
    stopping: AtomicBool,
    clients: Mutex<Vec<ClientSlot>>,
    last_frame: Mutex<Option<Frame>>,
    seq: AtomicU64,
    next_id: AtomicUsize,
    stats: Stats,
}

#[derive(Default)]
struct Stats {
    accepted: AtomicU64,
    refused: AtomicU64,
    frames: AtomicU64,
    frames_dropped: AtomicU64,
    slow_disconnects: AtomicU64,
    bad_requests: AtomicU64,
    recordings: AtomicU64,
}

impl Shared {
    fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Reads every pool now and serialises one `snapshots` line.
    fn frame(&self, seq: u64) -> Frame {
        let pools: Vec<Snapshot> = self
            .pools
            .iter()
            .map(|h| Snapshot::from(&h.metrics()))
            .collect();
        protocol::line(&Outgoing::Snapshots {
            v: SCHEMA_VERSION,
            seq,
            pools: &pools,
        })
        .into()
    }
}

/// One connected client, as the ticker and the shutdown see it.
struct ClientSlot {
    frames: SyncSender<Frame>,
    conn: Conn,
    alive: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while holding these locks; if something did, the data
    // (a list of clients, a frame) is still consistent.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn hello_line(config: &ExporterBuilder) -> Frame {
    let names: Vec<String> = config.pools.iter().map(|h| h.name().to_string()).collect();
    protocol::line(&Outgoing::Hello {
        v: SCHEMA_VERSION,
        server: env!("CARGO_PKG_NAME"),
        version: env!("CARGO_PKG_VERSION"),
        pid: std::process::id(),
        interval_ms: u64::try_from(config.interval.as_millis()).unwrap_or(u64::MAX),
        pools: names.iter().map(String::as_str).collect(),
        recording: cfg!(feature = "recorder"),
    })
    .into()
}

fn error_line(message: &str) -> Frame {
    protocol::line(&Outgoing::Error {
        v: SCHEMA_VERSION,
        error: message,
    })
    .into()
}

fn tick_loop(shared: &Shared, stopped: &Receiver<()>) {
    loop {
        match stopped.recv_timeout(shared.interval) {
            Err(RecvTimeoutError::Timeout) => {}
            // Told to stop, or the exporter is gone.
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
        if shared.is_stopping() {
            return;
        }
        let seq = shared.seq.fetch_add(1, Ordering::Relaxed) + 1;
        let frame = shared.frame(seq);
        shared.stats.frames.fetch_add(1, Ordering::Relaxed);
        let mut gone = Vec::new();
        {
            let mut clients = lock(&shared.clients);
            // Published under the clients' lock, which `admit` holds while
            // it greets a new client with the latest frame and adds it: a
            // client is either greeted with an older frame and then sent
            // this one, or greeted with this one and not sent it again
            // (published before taking the lock, a client admitted in
            // between got this frame twice).
            *lock(&shared.last_frame) = Some(Arc::clone(&frame));
            clients.retain_mut(|client| {
                if !client.alive.load(Ordering::SeqCst) {
                    client.conn.shutdown();
                    gone.push(std::mem::take(&mut client.threads));
                    return false;
                }
                match client.frames.try_send(Arc::clone(&frame)) {
                    Ok(()) => true,
                    Err(TrySendError::Full(_)) => {
                        shared.stats.frames_dropped.fetch_add(1, Ordering::Relaxed);
                        true
                    }
                    Err(TrySendError::Disconnected(_)) => {
                        client.conn.shutdown();
                        gone.push(std::mem::take(&mut client.threads));
                        false
                    }
                }
            });
        }
        // A finished client's threads have exited or are about to (its
        // socket is shut down): join them outside the lock.
        for threads in gone {
            for t in threads {
                let _ = t.join();
            }
        }
    }
}

fn accept_loop(shared: &Arc<Shared>, listener: &Listener) {
    loop {
        let conn = listener.accept();
        if shared.is_stopping() {
            return;
        }
        match conn {
            Ok(conn) => admit(shared, conn),
            // A failed accept (the peer left first, or out of descriptors
            // for a moment) affects that connection only; pause so that a
            // lasting error does not spin.
            Err(_) => thread::sleep(Duration::from_millis(10)),
        }
    }
}

fn admit(shared: &Arc<Shared>, conn: Conn) {
    let _ = conn.set_write_timeout(Some(shared.write_timeout));
    let mut clients = lock(&shared.clients);
    // Forget clients that have left since the last tick (their threads are
    // exiting on their own) so that they do not count against the limit.
    clients.retain(|c| {
        let alive = c.alive.load(Ordering::SeqCst);
        if !alive {
            c.conn.shutdown();
        }
        alive
    });
    if clients.len() >= shared.max_clients {
        drop(clients);
        shared.stats.refused.fetch_add(1, Ordering::Relaxed);
        let mut conn = conn;
        let _ = conn.write_all(&error_line("too many clients"));
        conn.shutdown();
        return;
    }
    let (Ok(reader_conn), Ok(slot_conn)) = (conn.try_clone(), conn.try_clone()) else {
        conn.shutdown();
        return;
    };
    let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
    let (frames, queue) = mpsc::sync_channel::<Frame>(shared.client_buffer);
    let alive = Arc::new(AtomicBool::new(true));
    // The hello and the latest frame go first, so a client has something to
    // show at once.
    let _ = frames.try_send(Arc::clone(&shared.hello));
    if let Some(frame) = lock(&shared.last_frame).clone() {
        let _ = frames.try_send(frame);
    }
    let mut threads = Vec::with_capacity(2);
    let writer = {
        let (shared, alive) = (Arc::clone(shared), Arc::clone(&alive));
        thread::Builder::new()
            .name(format!("dreadpool-export-w{id}"))
            .spawn(move || write_loop(&shared, conn, &queue, &alive))
    };
    match writer {
        Ok(t) => threads.push(t),
        Err(_) => {
            slot_conn.shutdown();
            return;
        }
    }
    let reader = {
        let (shared, alive, replies) = (Arc::clone(shared), Arc::clone(&alive), frames.clone());
        thread::Builder::new()
            .name(format!("dreadpool-export-r{id}"))
            .spawn(move || read_loop(&shared, reader_conn, &replies, &alive))
    };
    // Without a reader the client still gets its stream; its requests go
    // unanswered.
    if let Ok(t) = reader {
        threads.push(t);
    }
    shared.stats.accepted.fetch_add(1, Ordering::Relaxed);
    clients.push(ClientSlot {
        frames,
        conn: slot_conn,
        alive,
        threads,
    });
}

fn write_loop(shared: &Shared, mut conn: Conn, queue: &Receiver<Frame>, alive: &AtomicBool) {
    // Ends when the queue's senders are gone (the exporter stopped or
    // dropped this client) or a write fails (the client left, or blocked us
    // past the write timeout).
    while let Ok(frame) = queue.recv() {
        if let Err(e) = conn.write_all(&frame) {
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ) {
                shared
                    .stats
                    .slow_disconnects
                    .fetch_add(1, Ordering::Relaxed);
            }
            break;
        }
    }
    alive.store(false, Ordering::SeqCst);
    conn.shutdown();
}

fn read_loop(shared: &Shared, conn: Conn, replies: &SyncSender<Frame>, alive: &AtomicBool) {
    let mut reader = BufReader::new(conn);
    let mut line = Vec::new();
    // The latest recording reply sent to this client: the next is made
    // only once the writer has let go of it (written it, or given up on the
    // client), so that a client holds at most one reply's worth of memory
    // in the exporter however fast it asks.
    let mut last_recording: Option<Frame> = None;
    loop {
        match protocol::read_line(&mut reader, &mut line, MAX_REQUEST_LINE) {
            Ok(Line::Complete) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                if let Ok(Request::Recording(params)) = crate::json::from_slice::<Request>(&line) {
                    if let Some(previous) = last_recording.take() {
                        // There is no event for "the writer dropped its
                        // copy": poll, briefly. A client waits here only if
                        // it asks again before reading the last reply.
                        while Arc::strong_count(&previous) > 1
                            && alive.load(Ordering::SeqCst)
                            && !shared.is_stopping()
                        {
                            thread::sleep(Duration::from_millis(1));
                        }
                    }
                    let reply = recording_reply(shared, &params);
                    let is_recording = reply.starts_with(RECORDING_LINE_START);
                    if is_recording {
                        last_recording = Some(Arc::clone(&reply));
                    }
                    // Counted before it is queued, so that a client that
                    // has read the reply sees it counted (counted after,
                    // the exporter test that checks the count failed now
                    // and then).
                    if is_recording {
                        shared.stats.recordings.fetch_add(1, Ordering::Relaxed);
                    }
                    // Waits for room (unlike frames, a recording is not
                    // dropped for a slow reader: it was asked for and is
                    // costly to make); fails once the writer is gone.
                    if replies.send(reply).is_err() {
                        break;
                    }
                    continue;
                }
                // Waits for room, as a recording does: frames are dropped for
                // a client that falls behind, but a reply was asked for, and
                // a client that reads gets it even when its writer thread
                // lost the CPU while the ticker filled its buffer (a dropped
                // reply left a test waiting for an answer on a loaded
                // machine). The wait is bounded: a client that does not read
                // makes its writer's write time out, and the writer's end
                // fails this send.
                if replies.send(answer(shared, &line)).is_err() {
                    break;
                }
            }
            Ok(Line::TooLong) => {
                shared.stats.bad_requests.fetch_add(1, Ordering::Relaxed);
                // The error before the end of the stream, waited for as above.
                let _ = replies.send(error_line("request line too long; closing"));
                break;
            }
            Ok(Line::Eof) | Err(_) => break,
        }
    }
    // The client closed its side (or sent too much): the writer may still
    // be busy with our last reply, so close only our half; the writer ends
    // when the client is gone or when the ticker drops it.
    alive.store(false, Ordering::SeqCst);
}

fn answer(shared: &Shared, line: &[u8]) -> Frame {
    match crate::json::from_slice::<Request>(line) {
        Ok(Request::Ping) => protocol::line(&Outgoing::Pong { v: SCHEMA_VERSION }).into(),
        Ok(Request::Hello) => Arc::clone(&shared.hello),
        Ok(Request::Snapshot) => shared.frame(shared.seq.load(Ordering::Relaxed)),
        Ok(Request::Recording(params)) => recording_reply(shared, &params),
        Err(e) => {
            shared.stats.bad_requests.fetch_add(1, Ordering::Relaxed);
            error_line(&format!(
                "bad request ({e}); send one JSON object a line: {{\"request\":\"ping\"|\"snapshot\"|\"hello\"|\"recording\"}}"
            ))
        }
    }
}

/// The start of a `recording` reply line.
#[cfg(feature = "recorder")]
const RECORDING_LINE_START: &[u8] = crate::recording::LINE_START;
#[cfg(not(feature = "recorder"))]
const RECORDING_LINE_START: &[u8] = br#"{"type":"recording","#;

/// The reply to a recording request: the recording, or an error line.
fn recording_reply(shared: &Shared, params: &protocol::RecordingParams) -> Frame {
    #[cfg(feature = "recorder")]
    {
        let Some(handle) = shared.pools.get(params.pool) else {
            shared.stats.bad_requests.fetch_add(1, Ordering::Relaxed);
            return error_line(
                &crate::recording::Refusal::NoSuchPool {
                    pool: params.pool,
                    pools: shared.pools.len(),
                }
                .to_string(),
            );
        };
        match crate::recording::answer(handle, params.pool, params, shared.max_recording_events) {
            Ok(line) => line.into(),
            Err(refusal) => {
                shared.stats.bad_requests.fetch_add(1, Ordering::Relaxed);
                error_line(&refusal.to_string())
            }
        }
    }
    #[cfg(not(feature = "recorder"))]
    {
        let _ = params;
        shared.stats.bad_requests.fetch_add(1, Ordering::Relaxed);
        error_line(
            "this exporter has no flight recorder: its host was built without dreadpool-metrics' `recorder` feature",
        )
    }
}

/// A listening socket of either kind.
#[derive(Debug)]
enum Listener {
    Unix(UnixListener),
    Tcp(TcpListener),
}

impl std::os::fd::AsFd for Listener {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        match self {
            Listener::Unix(l) => l.as_fd(),
            Listener::Tcp(l) => l.as_fd(),
        }
    }
}

/// A bound socket file and its inode, to remove it on drop only if it is
/// still ours.
type SocketFile = Option<(PathBuf, u64)>;

impl Listener {
    fn bind(endpoint: Endpoint) -> Result<(Listener, Endpoint, SocketFile), ExportError> {
        match endpoint {
            Endpoint::Unix(path) => {
                let (listener, ino) = unix_socket::bind(&path)?;
                let file = Some((path.clone(), ino));
                Ok((Listener::Unix(listener), Endpoint::Unix(path), file))
            }
            Endpoint::Tcp(addr) => {
                if !addr.ip().is_loopback() {
                    return Err(ExportError::NotLoopback { addr });
                }
                let bind_error = |source| ExportError::Bind {
                    addr: addr.to_string(),
                    source,
                };
                let listener = TcpListener::bind(addr).map_err(bind_error)?;
                let bound: SocketAddr = listener.local_addr().map_err(bind_error)?;
                Ok((Listener::Tcp(listener), Endpoint::Tcp(bound), None))
            }
        }
    }

    fn accept(&self) -> io::Result<Conn> {
        match self {
            Listener::Unix(l) => l.accept().map(|(s, _)| Conn::Unix(s)),
            Listener::Tcp(l) => l.accept().map(|(s, _)| {
                let _ = s.set_nodelay(true);
                Conn::Tcp(s)
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_names_the_pools() {
        let pool = dreadpool_core::ThreadPoolBuilder::new()
            .with_threads(1)
            .with_thread_name("hello")
            .build();
        let line = hello_line(&ExporterBuilder::default().pool(&pool));
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["type"], "hello");
        assert_eq!(v["v"], SCHEMA_VERSION);
        assert_eq!(v["pools"][0], "hello");
        assert_eq!(line.last(), Some(&b'\n'));
    }
}
