//! The exporter and the client over real sockets: several clients at once,
//! clients that leave, stall or send garbage, pools and exporters that go
//! away under them. Nothing hangs, nothing panics, and every other client
//! keeps its stream.

mod common;

use common::{socket_path, wait_until, HANG};
use dreadpool::metrics::{
    Client, ClientError, Endpoint, ExportError, Exporter, FileKind, Monitor, WorkerState,
    SCHEMA_VERSION,
};
use dreadpool::{ThreadPool, ThreadPoolBuilder};
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

fn named_pool(name: &str, threads: usize) -> ThreadPool {
    ThreadPoolBuilder::new()
        .with_threads(threads)
        .with_thread_name(name)
        .build()
}

/// Fast ticks so that tests see many frames quickly.
const TICK: Duration = Duration::from_millis(5);

fn unix_exporter(pools: &[&ThreadPool], tag: &str) -> Exporter {
    let mut builder = Exporter::builder().interval(TICK);
    for pool in pools {
        builder = builder.pool(pool);
    }
    let path = socket_path(tag);
    builder.bind(path.to_str().unwrap()).unwrap()
}

/// Reads `n` frames, checking their shape and order.
fn read_frames(client: &mut Client, n: usize, pools: &[(&str, usize)]) {
    let mut last = 0;
    for _ in 0..n {
        let frame = client.next_frame().unwrap();
        assert!(
            frame.seq > last || frame.seq == 0,
            "seq {} after {last}",
            frame.seq
        );
        last = last.max(frame.seq);
        assert_eq!(frame.pools.len(), pools.len());
        for (snapshot, (name, threads)) in frame.pools.iter().zip(pools) {
            assert_eq!(snapshot.name, *name);
            assert_eq!(snapshot.threads, *threads);
            assert_eq!(snapshot.workers.len(), *threads);
        }
    }
}

/// Raw lines from a socket, for tests that speak the protocol by hand.
struct Raw {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl Raw {
    fn connect(exporter: &Exporter) -> Raw {
        let stream = UnixStream::connect(exporter.endpoint().path().unwrap()).unwrap();
        stream.set_read_timeout(Some(HANG)).unwrap();
        Raw {
            writer: stream.try_clone().unwrap(),
            reader: BufReader::new(stream),
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
    }

    /// The next message, parsed; `None` at end of stream.
    fn next(&mut self) -> Option<serde_json::Value> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) => Some(serde_json::from_str(&line).expect("every line is JSON")),
            Err(e) => panic!("read failed: {e}"),
        }
    }

    /// The next message of `kind`, skipping snapshots.
    fn next_of(&mut self, kind: &str) -> serde_json::Value {
        loop {
            let m = self
                .next()
                .unwrap_or_else(|| panic!("closed before a {kind}"));
            if m["type"] == kind {
                return m;
            }
            assert_eq!(m["type"], "snapshots", "unexpected {m}");
        }
    }
}

#[test]
fn several_clients_over_a_unix_socket() {
    let io = named_pool("io", 2);
    let cpu = named_pool("cpu", 3);
    let exporter = unix_exporter(&[&io, &cpu], "several");
    let addr = exporter.addr();
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let addr = addr.clone();
            thread::spawn(move || {
                let mut client = Client::connect(&addr).unwrap();
                assert_eq!(client.hello().pools, vec!["io", "cpu"]);
                assert_eq!(client.hello().v, SCHEMA_VERSION);
                assert_eq!(client.hello().pid, std::process::id());
                read_frames(&mut client, 20, &[("io", 2), ("cpu", 3)]);
            })
        })
        .collect();
    for r in readers {
        r.join().unwrap();
    }
    let stats = exporter.stats();
    assert_eq!(stats.accepted, 3);
    assert!(stats.frames >= 19, "{stats:?}");
}

#[test]
fn several_clients_over_tcp_on_loopback() {
    let pool = named_pool("tcp", 2);
    let exporter = Exporter::builder()
        .pool(&pool)
        .interval(TICK)
        .bind("127.0.0.1:0")
        .unwrap();
    let addr = exporter.endpoint().socket_addr().unwrap();
    assert!(addr.ip().is_loopback());
    assert_ne!(addr.port(), 0);
    let mut clients: Vec<Client> = (0..3)
        .map(|_| Client::connect(&exporter.addr()).unwrap())
        .collect();
    for client in &mut clients {
        read_frames(client, 10, &[("tcp", 2)]);
    }
    // The counters travel intact: a detached monitor over the socket sees
    // the tasks run in between.
    let mut monitor = Monitor::detached();
    monitor.observe(clients[0].next_snapshots().unwrap().remove(0));
    for _ in 0..1000 {
        pool.spawn(|| ());
    }
    pool.join();
    clients[0].request_snapshot().unwrap();
    let mut seen = 0;
    while seen < 1000 {
        let i = monitor.observe(clients[0].next_snapshots().unwrap().remove(0));
        seen += i.tasks_run;
    }
    assert_eq!(seen, 1000);
}

#[test]
fn tcp_off_loopback_is_refused() {
    let pool = named_pool("refuse", 1);
    for addr in ["0.0.0.0:0", "[::]:0", "192.0.2.1:6669", "tcp:0.0.0.0:0"] {
        match Exporter::bind(&pool, addr) {
            Err(ExportError::NotLoopback { addr: refused }) => {
                assert!(!refused.ip().is_loopback());
            }
            other => panic!("{addr}: {other:?}"),
        }
    }
    assert!(matches!(
        Exporter::builder().bind("127.0.0.1:0"),
        Err(ExportError::NoPools)
    ));
    let err = Exporter::bind(&pool, "0.0.0.0:0").unwrap_err().to_string();
    assert!(err.contains("loopback"), "{err}");
}

#[test]
fn a_client_that_disconnects_mid_stream() {
    let pool = named_pool("leave", 2);
    let exporter = unix_exporter(&[&pool], "leave");
    let mut stays = Client::connect(&exporter.addr()).unwrap();
    let mut leaves = Client::connect(&exporter.addr()).unwrap();
    read_frames(&mut leaves, 3, &[("leave", 2)]);
    drop(leaves);
    // A raw client that leaves in the middle of a request line.
    let mut raw = Raw::connect(&exporter);
    raw.send(b"{\"request\":\"pi");
    drop(raw);
    read_frames(&mut stays, 30, &[("leave", 2)]);
    wait_until("the exporter to notice the clients left", || {
        exporter.stats().clients == 1
    });
    read_frames(&mut stays, 10, &[("leave", 2)]);
}

#[test]
fn a_client_that_never_reads_is_dropped_and_blocks_nobody() {
    // Large frames (16 workers) every 2ms fill a socket buffer fast. The
    // write timeout is long enough for a reader on a loaded machine (a
    // debug build parses a frame in a few milliseconds) and short enough
    // to drop the stalled client soon.
    let pool = named_pool("stall", 16);
    let exporter = Exporter::builder()
        .pool(&pool)
        .interval(Duration::from_millis(2))
        .client_buffer(2)
        .write_timeout(Duration::from_secs(2))
        .bind(socket_path("stall").to_str().unwrap())
        .unwrap();
    let stalled = UnixStream::connect(exporter.endpoint().path().unwrap()).unwrap();
    let mut reader = Client::connect(&exporter.addr()).unwrap();
    let mut frames = 0u64;
    wait_until("the stalled client to be dropped", || {
        reader.next_frame().unwrap();
        frames += 1;
        // The pool keeps working the whole time.
        for _ in 0..20 {
            pool.spawn(|| ());
        }
        exporter.stats().slow_disconnects >= 1
    });
    // The reader kept its stream all along, and keeps it.
    read_frames(&mut reader, 50, &[("stall", 16)]);
    assert!(frames > 0);
    let stats = exporter.stats();
    assert!(stats.frames_dropped > 0, "{stats:?}");
    assert_eq!(stats.slow_disconnects, 1, "{stats:?}");
    pool.join();
    assert_eq!(pool.metrics().tasks_run(), frames * 20);
    // The stalled client, reading at last, finds its stream ended.
    stalled.set_read_timeout(Some(HANG)).unwrap();
    let mut rest = Vec::new();
    let end = (&stalled).read_to_end(&mut rest);
    assert!(
        end.is_ok()
            || end
                .as_ref()
                .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
        "{end:?}"
    );
}

#[test]
fn every_request_is_answered_even_when_the_clients_buffer_is_full() {
    // One frame of buffer and a frame every millisecond: the buffer is
    // often full when a request's answer is ready. Frames may be dropped
    // for the client then; answers may not.
    let pool = named_pool("answers", 1);
    let exporter = Exporter::builder()
        .pool(&pool)
        .interval(Duration::from_millis(1))
        .client_buffer(1)
        .bind(socket_path("answers").to_str().unwrap())
        .unwrap();
    let mut raw = Raw::connect(&exporter);
    assert_eq!(raw.next().unwrap()["type"], "hello");
    const PINGS: usize = 500;
    for _ in 0..PINGS {
        raw.send(b"{\"request\":\"ping\"}\n");
    }
    // Frames keep coming, so a lost answer shows as the deadline passing
    // (answers were dropped when the buffer was full: this test then waited
    // for ever), not as a read that times out.
    let deadline = Instant::now() + HANG;
    let mut pongs = 0;
    while pongs < PINGS {
        assert!(
            Instant::now() < deadline,
            "{pongs} of {PINGS} pings answered"
        );
        let m = raw.next().expect("the stream stays open");
        match m["type"].as_str() {
            Some("pong") => pongs += 1,
            Some("snapshots") => {}
            _ => panic!("unexpected {m}"),
        }
    }
}

#[test]
fn garbage_gets_an_error_reply_not_a_crash() {
    let pool = named_pool("garbage", 2);
    let exporter = unix_exporter(&[&pool], "garbage");
    let mut bystander = Client::connect(&exporter.addr()).unwrap();
    let mut raw = Raw::connect(&exporter);
    let hello = raw.next().unwrap();
    assert_eq!(hello["type"], "hello");
    assert_eq!(hello["v"], SCHEMA_VERSION);

    for garbage in [
        &b"hello?\n"[..],
        b"{\"request\":\"reboot\"}\n",
        b"[1,2,3]\n",
        b"\xff\xfe\x00\x01\n",
        b"{\"request\":\n",
    ] {
        raw.send(garbage);
        let reply = raw.next_of("error");
        assert_eq!(reply["v"], SCHEMA_VERSION);
        assert!(
            reply["error"].as_str().unwrap().contains("bad request"),
            "{reply}"
        );
    }
    // Still connected and served.
    raw.send(b"{\"request\":\"ping\"}\n");
    raw.next_of("pong");
    raw.send(b"\n  \n{\"request\":\"hello\"}\n");
    assert_eq!(raw.next_of("hello")["pools"][0], "garbage");
    assert!(exporter.stats().bad_requests >= 5);

    // A line longer than the limit: an error, then the end of the stream.
    let huge = vec![b'x'; dreadpool::metrics::MAX_REQUEST_LINE + 10];
    raw.send(&huge);
    raw.next_of("error");
    while let Some(m) = raw.next() {
        assert_eq!(m["type"], "snapshots", "{m}");
    }
    // The other client never noticed.
    read_frames(&mut bystander, 20, &[("garbage", 2)]);
}

#[test]
fn the_pool_shutting_down_while_clients_are_connected() {
    let pool = named_pool("ending", 2);
    let other = named_pool("staying", 1);
    let exporter = unix_exporter(&[&pool, &other], "ending");
    let mut clients: Vec<Client> = (0..2)
        .map(|_| Client::connect(&exporter.addr()).unwrap())
        .collect();
    for c in &mut clients {
        read_frames(c, 2, &[("ending", 2), ("staying", 1)]);
    }
    for _ in 0..100 {
        pool.spawn(|| ());
    }
    drop(pool);
    // The stream goes on; the pool's workers read as stopped.
    for c in &mut clients {
        loop {
            let pools = c.next_snapshots().unwrap();
            if pools[0]
                .workers
                .iter()
                .all(|w| w.state == WorkerState::Stopped)
            {
                assert_eq!(pools[0].tasks_run(), 100);
                assert_eq!(pools[1].workers_in(WorkerState::Stopped), 0);
                break;
            }
        }
    }
    // Then the exporter goes: every client sees the end, none hangs.
    let path = exporter.endpoint().path().unwrap().to_path_buf();
    drop(exporter);
    assert!(!path.exists(), "socket file left behind");
    for c in &mut clients {
        loop {
            match c.next_frame() {
                Ok(_) => continue,
                Err(ClientError::Closed) => break,
                Err(e) => panic!("expected Closed, got {e}"),
            }
        }
    }
    // The iterator form ends after the error.
    let mut c = clients.pop().unwrap();
    assert!(matches!(c.next(), Some(Err(ClientError::Closed))));
    assert!(c.next().is_none());
    assert!(Client::connect(path.to_str().unwrap()).is_err());
}

#[test]
fn the_socket_file_is_managed() {
    let pool = named_pool("files", 1);
    let path = socket_path("files");
    let p = path.to_str().unwrap();

    // A stale socket (its owner died without cleaning up) is replaced.
    drop(UnixListener::bind(&path).unwrap());
    assert!(path.exists());
    let exporter = Exporter::bind(&pool, p).unwrap();
    // A live one is not.
    assert!(matches!(
        Exporter::bind(&pool, p),
        Err(ExportError::InUse { .. })
    ));
    assert!(Client::connect(p).is_ok());
    drop(exporter);
    assert!(!path.exists());

    // Nor is a file that is not a socket.
    std::fs::write(&path, b"precious").unwrap();
    assert!(matches!(
        Exporter::bind(&pool, p),
        Err(ExportError::NotASocket { .. })
    ));
    assert_eq!(std::fs::read(&path).unwrap(), b"precious");
    std::fs::remove_file(&path).unwrap();

    // A socket file replaced by someone else is not removed on drop.
    let exporter = Exporter::bind(&pool, p).unwrap();
    std::fs::remove_file(&path).unwrap();
    let squatter = UnixListener::bind(&path).unwrap();
    drop(exporter);
    assert!(path.exists());
    drop(squatter);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn requests_are_answered_between_ticks() {
    let pool = named_pool("request", 2);
    // No tick for an hour: everything here comes from requests.
    let exporter = Exporter::builder()
        .pool(&pool)
        .interval(Duration::from_secs(3600))
        .bind(socket_path("request").to_str().unwrap())
        .unwrap();
    let mut client = Client::connect(&exporter.addr()).unwrap();
    assert_eq!(client.hello().interval, Duration::from_secs(3600));
    pool.spawn(|| ());
    pool.join();
    client.ping().unwrap();
    client.request_snapshot().unwrap();
    let frame = client.next_frame().unwrap();
    assert_eq!(frame.seq, 0);
    assert_eq!(frame.pools[0].tasks_run(), 1);
    assert_eq!(exporter.stats().frames, 0);
    // A short read timeout on a quiet stream: a timeout error, not a hang.
    client
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    assert!(matches!(client.next_frame(), Err(ClientError::Timeout(_))));
}

#[test]
fn clients_beyond_the_limit_are_refused_with_a_reason() {
    let pool = named_pool("full", 1);
    let exporter = Exporter::builder()
        .pool(&pool)
        .interval(TICK)
        .max_clients(1)
        .bind(socket_path("full").to_str().unwrap())
        .unwrap();
    let mut first = Client::connect(&exporter.addr()).unwrap();
    match Client::connect(&exporter.addr()) {
        Err(ClientError::Server(reason)) => assert!(reason.contains("too many"), "{reason}"),
        other => panic!("{other:?}"),
    }
    read_frames(&mut first, 5, &[("full", 1)]);
    assert_eq!(exporter.stats().refused, 1);
    // Once the first leaves, there is room again.
    drop(first);
    wait_until("the slot to free up", || exporter.stats().clients == 0);
    let mut again = Client::connect(&exporter.addr()).unwrap();
    read_frames(&mut again, 2, &[("full", 1)]);
}

/// A one-connection fake exporter that sends `lines`, then waits for the
/// client to hang up.
fn fake_exporter(tag: &str, lines: &'static [&'static str]) -> (String, thread::JoinHandle<()>) {
    let path = socket_path(tag);
    let listener = UnixListener::bind(&path).unwrap();
    let addr = path.to_str().unwrap().to_string();
    let server = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        for line in lines {
            s.write_all(line.as_bytes()).unwrap();
        }
        s.set_read_timeout(Some(HANG)).unwrap();
        let _ = s.read(&mut [0; 1]);
        let _ = std::fs::remove_file(&path);
    });
    (addr, server)
}

#[test]
fn client_errors_are_clear() {
    let missing = socket_path("missing");
    match Client::connect(missing.to_str().unwrap()) {
        Err(e @ ClientError::Connect { .. }) => assert!(e.to_string().contains("cannot connect")),
        other => panic!("{other:?}"),
    }
    assert!(matches!(Client::connect(""), Err(ClientError::Addr(_))));

    let (addr, server) = fake_exporter("version", &["{\"type\":\"hello\",\"v\":99}\n"]);
    match Client::connect(&addr) {
        Err(ClientError::Version { got: 99, supported }) => assert_eq!(supported, SCHEMA_VERSION),
        other => panic!("{other:?}"),
    }
    server.join().unwrap();

    let (addr, server) = fake_exporter("nonsense", &["this is not json\n"]);
    assert!(matches!(
        Client::connect(&addr),
        Err(ClientError::Protocol(_))
    ));
    server.join().unwrap();

    let (addr, server) = fake_exporter(
        "badframe",
        &[
            "{\"type\":\"hello\",\"v\":1,\"interval_ms\":10,\"pools\":[\"x\"]}\n",
            "{\"type\":\"future-message\",\"v\":1}\n",
            "{\"type\":\"snapshots\",\"v\":1,\"seq\":1,\"pools\":[{\"name\":\"x\",\"threads\":1,\"new_field\":true}]}\n",
            "{\"type\":\"snapshots\",\"v\":1,\"seq\":4,\"pools\":[]}\n",
            "{\"type\":\"snapshots\",\"v\":1,\"seq\":\"five\"}\n",
        ],
    );
    let mut client = Client::connect(&addr).unwrap();
    // Unknown message types and fields are skipped.
    assert_eq!(client.next_snapshots().unwrap()[0].name, "x");
    assert_eq!(client.next_frame().unwrap().seq, 4);
    assert_eq!(client.missed_frames(), 2);
    assert!(matches!(client.next_frame(), Err(ClientError::Protocol(_))));
    drop(client);
    server.join().unwrap();

    let (addr, server) = fake_exporter("quiet", &["{\"type\":\"hello\",\"v\":1}\n"]);
    let mut client = Client::connect(&addr).unwrap();
    client
        .set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    assert!(matches!(client.next_frame(), Err(ClientError::Timeout(_))));
    drop(client);
    server.join().unwrap();
}

#[test]
fn addresses_parse_as_documented() {
    assert_eq!(
        Endpoint::parse("tcp:localhost:0")
            .unwrap()
            .socket_addr()
            .map(|a| a.ip().is_loopback()),
        Some(true)
    );
    assert_eq!(
        Endpoint::parse("unix:/tmp/x").unwrap(),
        Endpoint::Unix("/tmp/x".into())
    );
    assert_eq!(
        Endpoint::parse("[::1]:7").unwrap(),
        Endpoint::Tcp("[::1]:7".parse().unwrap())
    );
    let e = Endpoint::parse("/run/app.sock").unwrap();
    assert_eq!(Endpoint::parse(&e.to_string()).unwrap(), e);
    assert!(Endpoint::parse("unix:").is_err());
}

/// A fresh directory of its own in the temp dir, removed with its contents
/// on drop: for tests that look at everything next to the socket.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("dpm-{}-{tag}-{n}", std::process::id()));
        fs::create_dir(&dir).unwrap();
        Scratch(dir)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// The names in the directory, sorted.
    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

/// In a child run of this binary: the scratch directory and the umask that
/// the parent's shell set, as octal.
const UMASK_CHILD_DIR: &str = "DPM_UMASK_CHILD_DIR";
const UMASK_CHILD_UMASK: &str = "DPM_UMASK_CHILD_UMASK";

#[test]
fn the_socket_is_owner_only_whatever_the_umask() {
    if let (Some(dir), Some(umask)) = (
        std::env::var_os(UMASK_CHILD_DIR),
        std::env::var(UMASK_CHILD_UMASK).ok(),
    ) {
        let umask = u32::from_str_radix(&umask, 8).unwrap();
        return owner_only_under_this_umask(Path::new(&dir), umask);
    }
    // The umask is per process: each value gets a process of its own (this
    // test binary again, running only this test), so that no other test
    // runs under it.
    let exe = std::env::current_exe().unwrap();
    for umask in ["000", "002", "022", "777"] {
        let scratch = Scratch::new(&format!("umask{umask}"));
        let out = Command::new("/bin/sh")
            .arg("-c")
            .arg(format!(
                "umask {umask} && exec \"$0\" --exact the_socket_is_owner_only_whatever_the_umask --nocapture --test-threads 1"
            ))
            .arg(&exe)
            .env(UMASK_CHILD_DIR, &scratch.0)
            .env(UMASK_CHILD_UMASK, umask)
            .output()
            .unwrap();
        let output = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "umask {umask}:\n{output}");
        // The child ran the checks (not zero tests) and saw 0600.
        assert_eq!(
            fs::read_to_string(scratch.join("seen")).ok().as_deref(),
            Some("600"),
            "umask {umask}:\n{output}"
        );
    }
}

/// The child half of the test above.
fn owner_only_under_this_umask(dir: &Path, umask: u32) {
    // The control: a plain bind takes the umask (so the umask is in force
    // and the test can fail)...
    let control = dir.join("control.sock");
    let plain = UnixListener::bind(&control).unwrap();
    assert_eq!(
        mode(&control),
        0o777 & !umask,
        "a plain bind takes the umask"
    );
    drop(plain);
    fs::remove_file(&control).unwrap();

    // ...the exporter does not.
    let pool = named_pool("umask", 1);
    let path = dir.join("app.sock");
    let exporter = Exporter::bind(&pool, path.to_str().unwrap()).unwrap();
    let meta = fs::symlink_metadata(&path).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(meta.nlink(), 1, "the temporary name is gone");
    // Nothing but the socket is left next to it (no private directory).
    assert_eq!(fs::read_dir(dir).unwrap().count(), 1);
    // And it serves, by its real name.
    let client = Client::connect(path.to_str().unwrap()).unwrap();
    assert_eq!(client.hello().pools, vec!["umask"]);
    fs::write(
        dir.join("seen"),
        format!("{:o}", meta.permissions().mode() & 0o777),
    )
    .unwrap();
    drop(client);
    drop(exporter);
    assert!(!path.exists());
}

#[test]
fn only_a_stale_socket_of_ours_is_replaced() {
    let pool = named_pool("guard", 1);
    let scratch = Scratch::new("guard");
    let path = scratch.join("app.sock");
    let p = path.to_str().unwrap();
    let not_a_socket = |want: FileKind| match Exporter::bind(&pool, p) {
        Err(e @ ExportError::NotASocket { .. }) => {
            let ExportError::NotASocket { path: at, kind } = &e else {
                unreachable!()
            };
            assert_eq!((at, *kind), (&path, want));
            assert!(e.to_string().contains("not replacing"), "{e}");
        }
        other => panic!("{want:?}: {other:?}"),
    };

    // A regular file: an error, and the file intact.
    fs::write(&path, b"precious").unwrap();
    not_a_socket(FileKind::File);
    assert_eq!(fs::read(&path).unwrap(), b"precious");
    fs::remove_file(&path).unwrap();

    // A directory, with what is in it.
    fs::create_dir(&path).unwrap();
    fs::write(path.join("inside"), b"kept").unwrap();
    not_a_socket(FileKind::Directory);
    assert_eq!(fs::read(path.join("inside")).unwrap(), b"kept");
    fs::remove_dir_all(&path).unwrap();

    // A symlink, even to a stale socket: not followed, not replaced.
    let elsewhere = scratch.join("elsewhere.sock");
    drop(UnixListener::bind(&elsewhere).unwrap());
    std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
    not_a_socket(FileKind::Symlink);
    assert!(fs::symlink_metadata(&path).unwrap().is_symlink());
    assert!(fs::symlink_metadata(&elsewhere)
        .unwrap()
        .file_type()
        .is_socket());
    fs::remove_file(&path).unwrap();
    fs::remove_file(&elsewhere).unwrap();

    // A stale socket of ours (its listener dropped without removing the
    // file, as when a process dies): replaced by an owner-only one.
    drop(UnixListener::bind(&path).unwrap());
    let stale = fs::symlink_metadata(&path).unwrap();
    assert!(stale.file_type().is_socket());
    let exporter = Exporter::builder()
        .pool(&pool)
        .interval(TICK)
        .bind(p)
        .unwrap();
    let live = fs::symlink_metadata(&path).unwrap();
    assert_ne!(live.ino(), stale.ino(), "the stale socket was replaced");
    assert_eq!(mode(&path), 0o600);

    // A live exporter: a second one is refused, and the first goes on
    // serving on the same file, old clients and new.
    let mut before = Client::connect(p).unwrap();
    match Exporter::bind(&pool, p) {
        Err(e @ ExportError::InUse { .. }) => assert!(e.to_string().contains("in use"), "{e}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(fs::symlink_metadata(&path).unwrap().ino(), live.ino());
    read_frames(&mut before, 3, &[("guard", 1)]);
    let mut after = Client::connect(p).unwrap();
    read_frames(&mut after, 3, &[("guard", 1)]);
    drop((before, after));
    drop(exporter);
    assert!(!path.exists());

    // Another user's stale socket is theirs: kept. Only root can make one
    // to test with; elsewhere this case is skipped, and says why.
    drop(UnixListener::bind(&path).unwrap());
    const NOBODY: u32 = 65534;
    match std::os::unix::fs::chown(&path, Some(NOBODY), None) {
        Ok(()) => {
            match Exporter::bind(&pool, p) {
                Err(ExportError::NotOurs { owner, .. }) => assert_eq!(owner, NOBODY),
                other => panic!("{other:?}"),
            }
            let kept = fs::symlink_metadata(&path).unwrap();
            assert!(kept.file_type().is_socket());
            assert_eq!(kept.uid(), NOBODY);
        }
        Err(e) => {
            assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{e}");
            eprintln!("not root: another user's stale socket is not tested");
        }
    }
    fs::remove_file(&path).unwrap();

    // No failed bind left its private directory behind.
    assert_eq!(scratch.names(), Vec::<String>::new());
}

/// Flight recordings over the socket (feature `recorder`).
#[cfg(feature = "recorder")]
mod recordings {
    use super::*;
    use dreadpool::metrics::{RecordingRequest, DEFAULT_MAX_RECORDING_EVENTS};
    use dreadpool::{EventKind, RecordLevel, Track};

    fn recording_pool(name: &str, threads: usize, tasks: usize) -> ThreadPool {
        let pool = ThreadPoolBuilder::new()
            .with_threads(threads)
            .with_thread_name(name)
            .with_record_level(RecordLevel::Tasks)
            .build();
        for _ in 0..tasks {
            pool.spawn(|| std::hint::black_box(()));
        }
        pool.join();
        pool
    }

    fn runs(events: &[dreadpool::RecordedEvent]) -> usize {
        events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::RunBegin { .. }))
            .count()
    }

    #[test]
    fn a_recording_is_pulled_and_rebuilt_with_every_task() {
        let pool = recording_pool("rec", 2, 500);
        let other = named_pool("other", 1);
        let exporter = unix_exporter(&[&other, &pool], "rec");
        let mut client = Client::connect(&exporter.addr()).unwrap();
        assert!(client.hello().recording);
        let reply = client.recording(&RecordingRequest::pool(1).id(42)).unwrap();
        assert_eq!(reply.id, Some(42));
        assert_eq!(reply.pool, 1);
        assert_eq!(reply.omitted, 0);
        let recording = &reply.recording;
        assert_eq!(recording.pool(), "rec");
        assert_eq!(recording.level(), RecordLevel::Tasks);
        assert_eq!(recording.worker_names(), ["rec-0", "rec-1"]);
        assert_eq!(runs(recording.events()), 500);
        assert!(recording
            .events()
            .windows(2)
            .all(|w| w[0].time_ns <= w[1].time_ns));
        // Spawns from this (outside) thread are linked to their runs.
        let spawned: Vec<u64> = recording
            .events()
            .iter()
            .filter_map(|e| match (e.track, e.kind) {
                (Track::Outside(_), EventKind::Spawn { task, .. }) => Some(task),
                _ => None,
            })
            .collect();
        assert_eq!(spawned.len(), 500);
        let linked = recording
            .events()
            .iter()
            .filter(
                |e| matches!(e.kind, EventKind::RunBegin { task: Some(t) } if spawned.contains(&t)),
            )
            .count();
        assert_eq!(linked, 500);
        assert!(recording.taken_at_ns() >= recording.events().last().unwrap().time_ns);
        assert_eq!(exporter.stats().recordings, 1);
        // The stream goes on after it.
        read_frames(&mut client, 2, &[("other", 1), ("rec", 2)]);
    }

    #[test]
    fn digests_are_filtered_bounded_and_only_new() {
        let pool = recording_pool("dig", 2, 300);
        let exporter = unix_exporter(&[&pool], "dig");
        let mut client = Client::connect(&exporter.addr()).unwrap();
        let sched = client
            .recording(&RecordingRequest::pool(0).level(RecordLevel::Scheduler))
            .unwrap();
        let events = sched.recording.events();
        assert!(!events.is_empty());
        assert!(events.iter().all(|e| !matches!(
            e.kind,
            EventKind::Spawn { .. } | EventKind::RunBegin { .. } | EventKind::RunEnd { .. }
        )));
        // Since the newest seen: only what happened after.
        let newest = events.last().unwrap().time_ns;
        for _ in 0..100 {
            pool.spawn(|| std::hint::black_box(()));
        }
        pool.join();
        let new = client
            .recording(&RecordingRequest::pool(0).since_ns(newest))
            .unwrap();
        assert!(new.recording.events().iter().all(|e| e.time_ns > newest));
        assert_eq!(runs(new.recording.events()), 100);
        // A limit keeps the newest and counts the rest.
        let few = client
            .recording(&RecordingRequest::pool(0).max_events(5))
            .unwrap();
        assert_eq!(few.recording.events().len(), 5);
        assert!(few.omitted >= 795, "{}", few.omitted);
        // `off` asks for no events, and still names the pool.
        let none = client
            .recording(&RecordingRequest::pool(0).level(RecordLevel::Off))
            .unwrap();
        assert!(none.recording.events().is_empty());
        assert_eq!(none.recording.worker_names().len(), 2);
    }

    #[test]
    fn the_exporter_bounds_every_reply() {
        let pool = recording_pool("cap", 2, 2_000);
        let path = socket_path("cap");
        let exporter = Exporter::builder()
            .pool(&pool)
            .interval(TICK)
            .max_recording_events(1_000)
            .bind(path.to_str().unwrap())
            .unwrap();
        let mut client = Client::connect(&exporter.addr()).unwrap();
        // Asking for more than the exporter's limit gets its limit.
        let reply = client
            .recording(&RecordingRequest::pool(0).max_events(DEFAULT_MAX_RECORDING_EVENTS))
            .unwrap();
        assert_eq!(reply.recording.events().len(), 1_000);
        assert!(reply.omitted >= 5_000, "{}", reply.omitted);
    }

    #[test]
    fn bad_recording_requests_get_errors_and_the_connection_stays() {
        let pool = recording_pool("bad", 1, 10);
        let exporter = unix_exporter(&[&pool], "badrec");
        let mut client = Client::connect(&exporter.addr()).unwrap();
        match client.recording(&RecordingRequest::pool(7)) {
            Err(ClientError::Server(e)) => assert!(e.contains("no pool 7"), "{e}"),
            other => panic!("{other:?}"),
        }
        let mut raw = Raw::connect(&exporter);
        raw.next_of("hello");
        raw.send(b"{\"request\":\"recording\",\"level\":\"loud\"}\n");
        let error = raw.next_of("error");
        assert!(error["error"].as_str().unwrap().contains("loud"), "{error}");
        raw.send(b"{\"request\":\"recording\",\"id\":3}\n");
        let reply = raw.next_of("recording");
        assert_eq!(reply["v"], SCHEMA_VERSION);
        assert_eq!(reply["id"], 3);
        assert_eq!(reply["name"], "bad");
        assert_eq!(reply["level"], "tasks");
        assert!(reply["events"].as_array().unwrap().len() >= 10);
        // And the first client still works.
        assert!(client.recording(&RecordingRequest::pool(0)).is_ok());
    }

    #[test]
    fn a_client_has_at_most_one_recording_on_its_way() {
        // Megabytes of reply: more than the socket buffers, so that the
        // writer is still busy with the first while the second request is
        // read (this client reads nothing until both are sent). The second
        // is made only after the first is written, and both arrive, in
        // order.
        let pool = recording_pool("big", 2, 100_000);
        let exporter = unix_exporter(&[&pool], "big");
        let mut raw = Raw::connect(&exporter);
        raw.next_of("hello");
        raw.send(b"{\"request\":\"recording\",\"id\":1}\n{\"request\":\"recording\",\"id\":2,\"max_events\":3}\n");
        let first = raw.next_of("recording");
        assert_eq!(first["id"], 1);
        assert!(first["events"].as_array().unwrap().len() > 100_000);
        let second = raw.next_of("recording");
        assert_eq!(second["id"], 2);
        assert_eq!(second["events"].as_array().unwrap().len(), 3);
        // Made after the first was written: taken later.
        assert!(second["taken_at_ns"].as_u64() > first["taken_at_ns"].as_u64());
        wait_until("both replies counted", || exporter.stats().recordings == 2);
    }
}

/// Without the `recorder` feature the request is understood and refused.
#[cfg(not(feature = "recorder"))]
#[test]
fn without_the_recorder_a_recording_request_says_why() {
    let pool = named_pool("norec", 1);
    let exporter = unix_exporter(&[&pool], "norec");
    let client = Client::connect(&exporter.addr()).unwrap();
    assert!(!client.hello().recording);
    let mut raw = Raw::connect(&exporter);
    assert_eq!(raw.next_of("hello")["recording"], false);
    raw.send(b"{\"request\":\"recording\"}\n");
    let error = raw.next_of("error");
    assert!(
        error["error"]
            .as_str()
            .unwrap()
            .contains("no flight recorder"),
        "{error}"
    );
    raw.send(b"{\"request\":\"ping\"}\n");
    raw.next_of("pong");
}
