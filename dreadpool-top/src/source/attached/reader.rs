//! The reader thread: passes on what an exporter sends, reconnecting after each loss.

use dreadpool_metrics::{Client, ClientError, Message, RecordingReply, Requester, Snapshot};
use std::sync::mpsc::Sender;
use std::thread;
use std::time::Duration;

/// What the attach reader thread reports.
#[derive(Debug)]
pub(super) enum Incoming {
    /// A new connection (the first, or after a loss): its request side, and
    /// whether the host answers recording requests.
    Connected {
        requester: Option<Requester>,
        records: bool,
    },
    Frame(Vec<Snapshot>),
    Recording(Box<RecordingReply>),
    /// The exporter refused a request (the connection stays).
    Refused(String),
    Lost {
        error: String,
        attempts: u32,
    },
}

/// The first and the longest wait between reconnection attempts.
const RETRY_FIRST: Duration = Duration::from_millis(250);
const RETRY_MAX: Duration = Duration::from_secs(2);

/// Passes on `first`'s messages, then reconnects to `addr` after each loss
/// (waiting longer each time), until nobody listens on `tx`.
pub(super) fn read_loop(addr: String, first: Client, tx: Sender<Incoming>) {
    let mut client = Some(first);
    let mut attempts = 0u32;
    loop {
        if let Some(mut c) = client.take() {
            attempts = 0;
            let connected = Incoming::Connected {
                requester: c.requester().ok(),
                records: c.hello().recording,
            };
            if tx.send(connected).is_err() {
                return;
            }
            loop {
                let incoming = match c.next_message() {
                    Ok(Message::Frame(frame)) => Incoming::Frame(frame.pools),
                    Ok(Message::Recording(reply)) => Incoming::Recording(reply),
                    // A message kind of a newer dreadpool-metrics.
                    Ok(_) => continue,
                    // A refused request: the connection stays.
                    Err(ClientError::Server(error)) => Incoming::Refused(error),
                    Err(e) => {
                        if !report_lost(&tx, &e, &mut attempts) {
                            return;
                        }
                        break;
                    }
                };
                if tx.send(incoming).is_err() {
                    return;
                }
            }
        }
        let wait = RETRY_FIRST
            .saturating_mul(1 << attempts.min(4))
            .min(RETRY_MAX);
        thread::sleep(wait);
        match Client::connect(&addr) {
            Ok(c) => client = Some(c),
            Err(e) => {
                if !report_lost(&tx, &e, &mut attempts) {
                    return;
                }
            }
        }
    }
}

/// Counts one more failed attempt and passes the loss on; false when the
/// dashboard is gone (the reader then ends).
fn report_lost(tx: &Sender<Incoming>, error: &ClientError, attempts: &mut u32) -> bool {
    *attempts += 1;
    let lost = Incoming::Lost {
        error: error.to_string(),
        attempts: *attempts,
    };
    tx.send(lost).is_ok()
}
