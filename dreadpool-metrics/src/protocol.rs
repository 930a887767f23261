//! The wire protocol: newline-delimited JSON, one message a line. The schema
//! is documented in the crate docs ("Wire protocol"); this module is its
//! single source of truth in code.

use crate::snapshot::Snapshot;
use serde::{Deserialize, Serialize};
use std::io::{self, BufRead};

/// The version of the wire schema this crate speaks, sent as `"v"` in every
/// message. It changes only when a change would mislead an older reader;
/// added fields do not change it (readers ignore fields they do not know,
/// and missing fields read as zero).
pub const SCHEMA_VERSION: u32 = 1;

/// The longest request line an exporter reads; a longer one gets an error
/// reply and the connection is closed.
pub const MAX_REQUEST_LINE: usize = 64 * 1024;

/// The longest message line a client reads.
pub(crate) const MAX_MESSAGE_LINE: usize = 256 * 1024 * 1024;

/// A message from the exporter (the owned form, for writing).
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum Outgoing<'a> {
    Hello {
        v: u32,
        server: &'static str,
        version: &'static str,
        pid: u32,
        interval_ms: u64,
        pools: Vec<&'a str>,
        recording: bool,
    },
    Snapshots {
        v: u32,
        seq: u64,
        pools: &'a [Snapshot],
    },
    Pong {
        v: u32,
    },
    Error {
        v: u32,
        error: &'a str,
    },
}

/// A message from the exporter, as a client reads it.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum Incoming {
    Hello {
        #[serde(default)]
        v: u32,
        #[serde(default)]
        server: String,
        #[serde(default)]
        version: String,
        #[serde(default)]
        pid: u32,
        #[serde(default)]
        interval_ms: u64,
        #[serde(default)]
        pools: Vec<String>,
        #[serde(default)]
        recording: bool,
    },
    Snapshots {
        #[serde(default)]
        seq: u64,
        pools: Vec<Snapshot>,
    },
    Pong,
    Error {
        #[serde(default)]
        error: String,
    },
    /// A flight recording (read directly, without this enum, when the line
    /// starts with its type, as this crate writes it).
    #[cfg(feature = "recorder")]
    Recording(Box<crate::recording::Body>),
    /// A message type added by a newer exporter: skipped.
    #[serde(other)]
    Other,
}

/// A request from a client.
#[derive(Debug, Deserialize)]
#[serde(tag = "request", rename_all = "lowercase")]
pub(crate) enum Request {
    /// Answered with `pong`.
    Ping,
    /// Answered with a `snapshots` message read now.
    Snapshot,
    /// Answered with the `hello` message again.
    Hello,
    /// Answered with a `recording` message (or an `error` when this
    /// exporter was built without the `recorder` feature).
    Recording(RecordingParams),
}

/// The fields of a `{"request":"recording",...}` line, all optional. Parsed
/// with or without the `recorder` feature, so that an exporter without it
/// can say why it does not answer.
#[derive(Debug, Default, Deserialize, PartialEq, Eq)]
pub(crate) struct RecordingParams {
    /// Echoed in the reply.
    #[serde(default)]
    pub(crate) id: Option<u64>,
    /// The pool's index in hello order.
    #[serde(default)]
    pub(crate) pool: usize,
    /// Only events after this time.
    #[serde(default)]
    pub(crate) since_ns: Option<u64>,
    /// Only events of this level and below (`off`, `scheduler`, `tasks`).
    #[serde(default)]
    pub(crate) level: Option<String>,
    /// At most this many events, the newest.
    #[serde(default)]
    pub(crate) max_events: Option<usize>,
}

/// Serialises `message` as one line, newline included.
pub(crate) fn line(message: &Outgoing<'_>) -> Vec<u8> {
    // Serialising these types cannot fail: no maps with non-string keys, no
    // non-finite floats (every rate is division-safe), no I/O.
    let mut out = crate::json::to_vec(message).unwrap_or_else(|e| {
        let text = format!(
            "{{\"type\":\"error\",\"v\":{SCHEMA_VERSION},\"error\":{:?}}}",
            e.to_string()
        );
        text.into_bytes()
    });
    out.push(b'\n');
    out
}

/// What [`read_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A line (without its newline) is in the buffer.
    Complete,
    /// The stream ended; a partial last line, if any, is in the buffer.
    Eof,
    /// The line was longer than the limit: the buffer holds its start.
    TooLong,
}

/// Reads one `\n`-terminated line into `buf` (cleared first), reading at
/// most `max` bytes of it, so that a peer cannot make us buffer without end.
pub(crate) fn read_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<Line> {
    buf.clear();
    loop {
        let available = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(Line::Eof);
        }
        let (chunk, found) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..at], Some(at + 1)),
            None => (available, None),
        };
        let room = max.saturating_sub(buf.len());
        if chunk.len() > room {
            buf.extend_from_slice(&chunk[..room]);
            let used = chunk.len();
            reader.consume(used);
            return Ok(Line::TooLong);
        }
        buf.extend_from_slice(chunk);
        match found {
            Some(used) => {
                reader.consume(used);
                if buf.last() == Some(&b'\r') {
                    buf.pop();
                }
                return Ok(Line::Complete);
            }
            None => {
                let used = chunk.len();
                reader.consume(used);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `text` with the crate's codec, as the exporter and client do.
    fn parse<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, crate::json::Error> {
        crate::json::from_slice(text.as_bytes())
    }
    use std::io::BufReader;

    #[test]
    fn lines_are_capped() {
        let data = b"short\nthis one is far too long\nok\r\nlast";
        let mut r = BufReader::with_capacity(4, &data[..]);
        let mut buf = Vec::new();
        assert_eq!(read_line(&mut r, &mut buf, 10).unwrap(), Line::Complete);
        assert_eq!(buf, b"short");
        assert_eq!(read_line(&mut r, &mut buf, 10).unwrap(), Line::TooLong);
        assert_eq!(buf.len(), 10);
        // The rest of the long line is still to be skipped by the caller,
        // who closes the connection; here we read on to check framing.
        assert_eq!(read_line(&mut r, &mut buf, 100).unwrap(), Line::Complete);
        assert_eq!(read_line(&mut r, &mut buf, 100).unwrap(), Line::Complete);
        assert_eq!(buf, b"ok");
        assert_eq!(read_line(&mut r, &mut buf, 100).unwrap(), Line::Eof);
        assert_eq!(buf, b"last");
    }

    #[test]
    fn requests_parse_and_garbage_does_not() {
        assert!(matches!(
            parse::<Request>(r#"{"request":"ping"}"#),
            Ok(Request::Ping)
        ));
        assert!(parse::<Request>(r#"{"request":"reboot"}"#).is_err());
        assert!(parse::<Request>("not json").is_err());
        // Extra fields are a newer client's options: ignored.
        assert!(parse::<Request>(r#"{"request":"ping","x":1}"#).is_ok());
        // A recording request: every field optional.
        match parse::<Request>(r#"{"request":"recording"}"#) {
            Ok(Request::Recording(p)) => assert_eq!(p, RecordingParams::default()),
            other => panic!("{other:?}"),
        }
        match parse::<Request>(
            r#"{"request":"recording","pool":1,"since_ns":5,"level":"scheduler","max_events":9,"id":2}"#,
        ) {
            Ok(Request::Recording(p)) => {
                assert_eq!(p.pool, 1);
                assert_eq!(p.since_ns, Some(5));
                assert_eq!(p.level.as_deref(), Some("scheduler"));
                assert_eq!(p.max_events, Some(9));
                assert_eq!(p.id, Some(2));
            }
            other => panic!("{other:?}"),
        }
        assert!(parse::<Request>(r#"{"request":"recording","pool":-1}"#).is_err());
    }

    #[test]
    fn unknown_message_types_are_skipped() {
        let m: Incoming = parse(r#"{"type":"gossip","v":1,"x":[1]}"#).unwrap();
        assert!(matches!(m, Incoming::Other));
    }
}
