//! Recording requests to an attached host, one at a time: timeline digests and the user's saves.

use super::reader::Incoming;
use super::Attached;
use crate::record::{self, Saved};
use crate::source::pacing::HOST_COST_FACTOR;
use crate::state::waits::WaitsChunk;
use crate::state::Link;
use dreadpool_core::RecordLevel;
use dreadpool_metrics::{RecordingReply, RecordingRequest};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The most events one timeline digest asks an attached host for, to bound
/// a digest's size: a second of the scheduler's events of a large pool
/// fits; beyond, the oldest of the second are left out.
pub const DIGEST_MAX_EVENTS: usize = 20_000;

/// The most events a digest for the waits view asks an attached host for:
/// a Tasks-level window of a busy pool is several times a second of its
/// scheduler's events; the newest are kept, so the window explained is the
/// latest one.
pub const WAITS_MAX_EVENTS: usize = 100_000;

/// How long a requested recording may take to arrive before it is given up.
pub const RECORDING_PATIENCE: Duration = Duration::from_secs(60);

/// What a recording request was for.
#[derive(Debug, Clone)]
enum Purpose {
    /// A timeline digest of this pool; with `waits`, a whole `Tasks`-level
    /// recording whose waits are explained too.
    Digest { pool: usize, waits: bool },
    /// The `r` key: save this pool's recording to `path`.
    Save { path: PathBuf },
}

/// The recording request on its way (the exporter sends one at a time per
/// client, so there is never more than one).
#[derive(Debug)]
pub(super) struct Pending {
    id: u64,
    purpose: Purpose,
    sent: Instant,
}

impl Attached {
    pub(super) fn give_up(&mut self, pending: Pending, why: &str) {
        match pending.purpose {
            Purpose::Save { .. } => self.notes.push(format!("recording not saved: {why}")),
            // The next digest is due after the usual pause.
            Purpose::Digest { .. } => self.pacer.pulled(Instant::now(), Duration::ZERO, 1),
        }
    }

    pub(super) fn answered(&mut self, reply: RecordingReply) {
        let Some(pending) = self.pending.take_if(|p| Some(p.id) == reply.id) else {
            // A reply to a request given up on: nothing waits for it.
            return;
        };
        match pending.purpose {
            Purpose::Digest { pool, waits } => {
                if waits {
                    self.explained.push(WaitsChunk::explain(&reply.recording));
                }
                let (mut chunk, newest) =
                    record::timeline_chunk(&reply.recording, self.cursors.get(&pool).copied());
                if let Some(newest) = newest {
                    self.cursors.insert(pool, newest);
                }
                if let Some(i) = self.restarts.iter().position(|&p| p == pool) {
                    self.restarts.swap_remove(i);
                    chunk.restart = true;
                }
                self.chunks.push(chunk);
                // Paced by what the pull cost the host.
                self.pacer
                    .pulled(Instant::now(), reply.took, HOST_COST_FACTOR);
            }
            Purpose::Save { path, .. } => {
                record::write_in_background(reply.recording, path, self.saved.0.clone());
            }
        }
    }

    /// Sends the next recording request, if one is due and none is on its
    /// way: a save the user asked for first, else the shown pool's digest.
    pub(super) fn request(&mut self) {
        let now = Instant::now();
        if let Some(pending) = self.pending.take() {
            if now.duration_since(pending.sent) < RECORDING_PATIENCE {
                self.pending = Some(pending);
                return;
            }
            self.give_up(pending, "no reply from the host");
        }
        if !self.records || !matches!(self.link, Link::Connected) {
            return;
        }
        let Some(requester) = self.requester.as_mut() else {
            return;
        };
        let (request, purpose) = if let Some((pool, path)) = self.saves.pop_front() {
            (RecordingRequest::pool(pool), Purpose::Save { path })
        } else {
            let shown = self
                .shown
                .as_ref()
                .and_then(|name| self.hello_pools.iter().position(|p| p == name));
            let Some(pool) = shown.filter(|_| self.pacer.due(now)) else {
                return;
            };
            let waits = self.waits;
            let request = if waits {
                // A wait is explained from its spawn, which may be older
                // than the previous digest: the whole of the rings (the
                // newest events up to the limit), with every task's events.
                // The timeline takes only the marks newer than its cursor.
                RecordingRequest::pool(pool)
                    .level(RecordLevel::Tasks)
                    .max_events(WAITS_MAX_EVENTS)
            } else {
                let request = RecordingRequest::pool(pool)
                    .level(RecordLevel::Scheduler)
                    .max_events(DIGEST_MAX_EVENTS);
                match self.cursors.get(&pool) {
                    Some(&since) => request.since_ns(since),
                    None => request,
                }
            };
            (request, Purpose::Digest { pool, waits })
        };
        self.next_id += 1;
        let id = self.next_id;
        match requester.request_recording(&request.id(id)) {
            Ok(()) => {
                self.pending = Some(Pending {
                    id,
                    purpose,
                    sent: now,
                })
            }
            Err(e) => {
                // The reader thread sees the broken connection too and
                // reconnects; a save is reported now.
                self.give_up(
                    Pending {
                        id,
                        purpose,
                        sent: now,
                    },
                    &e.to_string(),
                );
            }
        }
    }

    /// Carries out the `r` key: the pool's recording is requested (after
    /// any request on its way) and written to a new file in the directory.
    pub fn save(&mut self, pool: usize) {
        if !self.records {
            self.notes.push(
                "the host has no flight recorder (build it with dreadpool's `recorder` feature)"
                    .into(),
            );
            return;
        }
        let name = self
            .hello_pools
            .get(pool)
            .cloned()
            .unwrap_or_else(|| format!("pool{pool}"));
        self.saves
            .push_back((pool, record::default_path(&self.dir, &name)));
        self.request();
    }

    /// Headless `--record`: asks for every pool's recording in turn, waits
    /// for each (up to [`RECORDING_PATIENCE`]) and writes it to
    /// [`record::path_for_pool`]; one outcome per pool.
    pub fn record_all(&mut self, path: &Path) -> Vec<Result<Saved, String>> {
        let pools = self.hello_pools.clone();
        let mut outcomes = Vec::new();
        for (index, name) in pools.iter().enumerate() {
            let target = record::path_for_pool(path, index, name);
            outcomes.push(self.record_one(index, &target));
        }
        outcomes
    }

    fn record_one(&mut self, pool: usize, path: &Path) -> Result<Saved, String> {
        let deadline = Instant::now() + RECORDING_PATIENCE;
        // Whatever the reader thread has said so far (the connection, and
        // the reply to a digest that may be on its way).
        while let Ok(incoming) = self.rx.try_recv() {
            self.receive(incoming);
        }
        if !self.records {
            return Err(
                "the host has no flight recorder (build it with dreadpool's `recorder` feature)"
                    .into(),
            );
        }
        self.next_id += 1;
        let id = self.next_id;
        let requester = self
            .requester
            .as_mut()
            .ok_or_else(|| "not connected to the host".to_owned())?;
        requester
            .request_recording(&RecordingRequest::pool(pool).id(id))
            .map_err(|e| format!("cannot ask for the recording: {e}"))?;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(Incoming::Recording(reply)) if reply.id == Some(id) => {
                    return record::write(&reply.recording, path).map_err(|e| e.to_string());
                }
                Ok(Incoming::Refused(error)) => return Err(format!("the host refused: {error}")),
                Ok(Incoming::Lost { error, .. }) => {
                    return Err(format!("the connection was lost: {error}"))
                }
                Ok(other) => {
                    self.receive(other);
                }
                Err(_) => return Err(format!("no recording within {RECORDING_PATIENCE:?}")),
            }
        }
    }
}
