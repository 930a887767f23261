//! The HTTP side of the Prometheus endpoint: a listener thread that answers
//! `GET /metrics` with the text that a render function gives.
//!
//! Why not `metrics-exporter-prometheus`'s own HTTP listener: it brings
//! hyper, tokio and the `http` crate into the program, and `http`'s
//! `impl PartialEq<StatusCode> for u16` changes type inference in the
//! program's own code (`assert_eq!(p, s)` with `s` a `sum()` stops
//! compiling; one of rayon's doc tests does exactly that). The
//! rayon-core compatibility crate serves every rayon program this way, so
//! it must not add such impls to a user's crate graph. The exposition
//! format itself is still the exporter's (`PrometheusHandle::render`); a
//! scrape needs nothing of HTTP beyond one request and one response.
//!
//! One connection at a time, each closed after its response: a scraper
//! opens one every scrape interval. Each connection has read and write
//! timeouts, so a client that stalls delays the next scrape by at most
//! `IO_TIMEOUT`, and a request head is read up to `MAX_HEAD` bytes.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;
use std::time::Duration;

/// How long a connection may take to send its request or take the reply.
const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest request head read (a scraper's is a few hundred bytes).
const MAX_HEAD: usize = 16 * 1024;
/// The content type of Prometheus' text exposition format.
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Serves `render()` at `/metrics` (and `/`) on `listener`, on a thread of
/// its own that runs for the rest of the process (the recorder it reads
/// from is process-wide too).
pub(super) fn spawn(
    listener: TcpListener,
    render: impl Fn() -> String + Send + 'static,
) -> io::Result<()> {
    thread::Builder::new()
        .name("dreadpool-prometheus".into())
        .spawn(move || {
            // A failed accept (a connection reset before it was taken, too
            // many open files) is the client's loss, not the endpoint's:
            // go on to the next.
            for stream in listener.incoming().flatten() {
                // Likewise a connection that fails mid-way.
                let _ = answer(stream, &render);
            }
        })
        .map(drop)
}

/// Reads one request from `stream` and writes its response.
fn answer(mut stream: TcpStream, render: &dyn Fn() -> String) -> io::Result<()> {
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let head = read_head(&mut stream)?;
    let reply = respond(&head, render);
    stream.write_all(&reply)?;
    stream.flush()
}

/// The request head: bytes up to the blank line that ends it (or what came
/// before the client stopped sending, or `MAX_HEAD` bytes).
fn read_head(stream: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    Ok(head)
}

/// The whole response to a request whose head is `head`.
fn respond(head: &[u8], render: &dyn Fn() -> String) -> Vec<u8> {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    match (method, path) {
        ("GET" | "HEAD", "/metrics" | "/") => {
            let body = render();
            let mut reply = header("200 OK", CONTENT_TYPE, body.len(), &[]);
            if method == "GET" {
                reply.extend_from_slice(body.as_bytes());
            }
            reply
        }
        ("GET" | "HEAD", _) => plain(
            "404 Not Found",
            "not found: the metrics are at /metrics\n",
            &[],
        ),
        // RFC 9110: a 405 names the methods that are allowed.
        _ => plain(
            "405 Method Not Allowed",
            "only GET and HEAD\n",
            &["Allow: GET, HEAD"],
        ),
    }
}

/// A short plain-text response, with `extra` header lines.
fn plain(status: &str, body: &str, extra: &[&str]) -> Vec<u8> {
    let mut reply = header(status, "text/plain; charset=utf-8", body.len(), extra);
    reply.extend_from_slice(body.as_bytes());
    reply
}

/// A response's status line and headers, up to the blank line.
fn header(status: &str, content_type: &str, length: usize, extra: &[&str]) -> Vec<u8> {
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\nConnection: close\r\n"
    );
    for line in extra {
        head.push_str(line);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    head.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(request: &str) -> String {
        String::from_utf8(respond(request.as_bytes(), &|| "up 1\n".to_string())).unwrap()
    }

    #[test]
    fn metrics_are_served_at_metrics_and_at_the_root() {
        for target in ["/metrics", "/", "/metrics?x=1"] {
            let r = reply(&format!("GET {target} HTTP/1.1\r\nHost: a\r\n\r\n"));
            assert!(r.starts_with("HTTP/1.1 200 OK\r\n"), "{r}");
            assert!(r.contains("Content-Type: text/plain; version=0.0.4"), "{r}");
            assert!(r.contains("Content-Length: 5\r\n"), "{r}");
            assert!(r.ends_with("\r\n\r\nup 1\n"), "{r}");
        }
    }

    #[test]
    fn head_gets_the_headers_without_the_body() {
        let r = reply("HEAD /metrics HTTP/1.1\r\n\r\n");
        assert!(r.starts_with("HTTP/1.1 200 OK\r\n"), "{r}");
        assert!(r.contains("Content-Length: 5\r\n"), "{r}");
        assert!(r.ends_with("\r\n\r\n"), "{r}");
    }

    #[test]
    fn other_paths_and_methods_are_refused() {
        assert!(reply("GET /other HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404 "));
        let r = reply("POST /metrics HTTP/1.1\r\n\r\n");
        assert!(r.starts_with("HTTP/1.1 405 "), "{r}");
        assert!(r.contains("\r\nAllow: GET, HEAD\r\n\r\nonly GET"), "{r}");
        assert!(reply("").starts_with("HTTP/1.1 405 "));
    }

    #[test]
    fn a_real_connection_is_answered_and_closed() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        spawn(listener, || "dreadpool_up 1\n".to_string()).unwrap();
        for _ in 0..3 {
            let mut stream = TcpStream::connect(addr).unwrap();
            stream
                .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
                .unwrap();
            let mut reply = String::new();
            stream.read_to_string(&mut reply).unwrap();
            assert!(reply.starts_with("HTTP/1.1 200 OK"), "{reply}");
            assert!(reply.ends_with("\r\n\r\ndreadpool_up 1\n"), "{reply}");
        }
    }
}
