//! Writing flight recordings to files: the format from the file name
//! (Perfetto's protobuf trace unless it ends in `.json`, then the Chrome
//! JSON trace), a default name for the `r` key, and the conversion of a
//! recording into the timeline's marks.

use crate::state::sample::WorkerStatus;
use crate::state::timeline::{Mark, MarkKind, TimelineChunk};
use dreadpool_core::{EventKind, RecordLevel, Recording, Track, WorkerActivity};
use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::time::{SystemTime, UNIX_EPOCH};

/// A trace file's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Perfetto's protobuf trace (`write_perfetto`).
    Perfetto,
    /// The Chrome JSON trace event format (`write_chrome_json`).
    ChromeJson,
}

impl Format {
    /// The format a path asks for: Chrome JSON if it ends in `.json` (any
    /// case), else Perfetto.
    ///
    /// ```
    /// use dreadpool_top::record::Format;
    /// use std::path::Path;
    ///
    /// assert_eq!(Format::of(Path::new("/tmp/run.json")), Format::ChromeJson);
    /// assert_eq!(Format::of(Path::new("/tmp/run.perfetto-trace")), Format::Perfetto);
    /// assert_eq!(Format::of(Path::new("run")), Format::Perfetto);
    /// ```
    pub fn of(path: &Path) -> Format {
        let json = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        if json {
            Format::ChromeJson
        } else {
            Format::Perfetto
        }
    }
}

/// Writing a recording failed.
#[derive(Debug)]
pub enum RecordError {
    /// The file could not be created.
    Create {
        /// The path.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Writing it failed (it is removed).
    Write {
        /// The path.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::Create { path, source } => {
                write!(f, "cannot create {}: {source}", path.display())
            }
            RecordError::Write { path, source } => {
                write!(
                    f,
                    "cannot write the recording to {}: {source}",
                    path.display()
                )
            }
        }
    }
}

impl std::error::Error for RecordError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RecordError::Create { source, .. } | RecordError::Write { source, .. } => Some(source),
        }
    }
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    /// Where.
    pub path: PathBuf,
    /// The pool recorded.
    pub pool: String,
    /// Events in the recording.
    pub events: usize,
    /// Bytes written.
    pub bytes: u64,
    /// Its format.
    pub format: Format,
}

impl fmt::Display for Saved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "recording of {} ({} events) saved to {}",
            self.pool,
            self.events,
            self.path.display()
        )?;
        if self.format == Format::Perfetto {
            f.write_str(" (open at ui.perfetto.dev)")?;
        }
        Ok(())
    }
}

/// Writes `recording` to `path` in the format its name asks for; on a
/// failure, removes what was written.
pub fn write(recording: &Recording, path: &Path) -> Result<Saved, RecordError> {
    let format = Format::of(path);
    let file = File::create(path).map_err(|source| RecordError::Create {
        path: path.to_owned(),
        source,
    })?;
    let mut out = BufWriter::new(file);
    let written = match format {
        Format::Perfetto => recording.write_perfetto(&mut out),
        Format::ChromeJson => recording.write_chrome_json(&mut out),
    }
    .and_then(|()| out.flush())
    .and_then(|()| out.get_ref().sync_all())
    .and_then(|()| out.get_ref().metadata());
    match written {
        Ok(meta) => Ok(Saved {
            path: path.to_owned(),
            pool: recording.pool().to_owned(),
            events: recording.events().len(),
            bytes: meta.len(),
            format,
        }),
        Err(source) => {
            drop(out);
            // A partial trace would only mislead whoever opens it.
            let _ = std::fs::remove_file(path);
            Err(RecordError::Write {
                path: path.to_owned(),
                source,
            })
        }
    }
}

/// Writes `recording` on a thread of its own (a Tasks-level recording
/// takes a moment to encode; the dashboard keeps drawing) and sends the
/// outcome, as a line for the user, to `done`.
pub fn write_in_background(recording: Recording, path: PathBuf, done: Sender<String>) {
    let spawned = std::thread::Builder::new()
        .name("dreadpool-top-record".into())
        .spawn({
            let done = done.clone();
            let path = path.clone();
            move || {
                let _ = done.send(outcome(&write(&recording, &path)));
            }
        });
    if let Err(e) = spawned {
        let _ = done.send(format!("cannot start the recording's writer: {e}"));
    }
}

/// The user's line for a write's outcome.
pub fn outcome(result: &Result<Saved, RecordError>) -> String {
    match result {
        Ok(saved) => saved.to_string(),
        Err(e) => format!("recording not saved: {e}"),
    }
}

/// A new file name in `dir` for a recording of `pool`:
/// `dreadpool-POOL-SECONDS.perfetto-trace`, with `-2`, `-3`... if taken.
pub fn default_path(dir: &Path, pool: &str) -> PathBuf {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // Pool names come from the host: keep them to safe file name characters.
    let pool: String = pool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut n = 1;
    loop {
        let suffix = if n == 1 {
            String::new()
        } else {
            format!("-{n}")
        };
        let path = dir.join(format!("dreadpool-{pool}-{secs}{suffix}.perfetto-trace"));
        if !path.exists() {
            return path;
        }
        n += 1;
    }
}

/// `path` for the first pool, and `STEM.POOL.EXT` beside it for the others
/// (for `--record` on a host of several pools).
pub fn path_for_pool(path: &Path, index: usize, pool: &str) -> PathBuf {
    if index == 0 {
        return path.to_owned();
    }
    let stem = path.file_stem().map_or_else(
        || "recording".to_owned(),
        |s| s.to_string_lossy().into_owned(),
    );
    let name = match path.extension() {
        Some(ext) => format!("{stem}.{pool}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{pool}"),
    };
    path.with_file_name(name)
}

/// The timeline's marks in `recording` newer than `since_ns`, and the
/// newest event's time (the next chunk's `since`).
pub fn timeline_chunk(
    recording: &Recording,
    since_ns: Option<u64>,
) -> (TimelineChunk, Option<u64>) {
    let mut newest = since_ns;
    let marks = recording
        .events()
        .iter()
        .filter(|e| since_ns.is_none_or(|t| e.time_ns > t))
        .filter_map(|e| {
            newest = Some(newest.map_or(e.time_ns, |n| n.max(e.time_ns)));
            let Track::Worker(worker) = e.track else {
                return None;
            };
            let kind = match e.kind {
                EventKind::State(activity) => MarkKind::State(status(activity)),
                EventKind::Steal { victim, .. } => MarkKind::Steal { victim },
                EventKind::Respawn => MarkKind::Respawn,
                EventKind::Panic { .. } => MarkKind::Panic,
                _ => return None,
            };
            Some(Mark {
                at_ns: e.time_ns,
                worker,
                kind,
            })
        })
        .collect();
    let chunk = TimelineChunk {
        pool: recording.pool().to_owned(),
        workers: recording.worker_names().len(),
        taken_at_ns: recording.taken_at_ns(),
        marks,
        restart: false,
        recorder_off: recording.level() == RecordLevel::Off,
    };
    (chunk, newest)
}

fn status(activity: WorkerActivity) -> WorkerStatus {
    match activity {
        WorkerActivity::Running => WorkerStatus::Running,
        WorkerActivity::Searching => WorkerStatus::Searching,
        WorkerActivity::Sleeping => WorkerStatus::Sleeping,
        WorkerActivity::Respawning => WorkerStatus::Respawning,
        WorkerActivity::Stopped => WorkerStatus::Stopped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dreadpool_core::ThreadPoolBuilder;

    #[test]
    fn paths_for_pools_and_default_names() {
        let p = Path::new("/tmp/host.perfetto-trace");
        assert_eq!(path_for_pool(p, 0, "api"), p);
        assert_eq!(
            path_for_pool(p, 1, "batch"),
            Path::new("/tmp/host.batch.perfetto-trace")
        );
        assert_eq!(
            path_for_pool(Path::new("/tmp/run.json"), 2, "b"),
            Path::new("/tmp/run.b.json")
        );
        let dir = std::env::temp_dir();
        let name = default_path(&dir, "we/ird name");
        let file = name.file_name().unwrap().to_string_lossy().into_owned();
        assert!(file.starts_with("dreadpool-we_ird_name-"), "{file}");
        assert!(file.ends_with(".perfetto-trace"), "{file}");
        assert_eq!(name.parent(), Some(dir.as_path()));
    }

    #[test]
    fn a_recording_becomes_timeline_marks_only_once() {
        let pool = ThreadPoolBuilder::new()
            .with_threads(2)
            .with_thread_name("marks")
            .build();
        for _ in 0..200 {
            pool.spawn(|| ());
        }
        pool.join();
        let recording = pool.recording();
        let (chunk, newest) = timeline_chunk(&recording, None);
        assert_eq!(chunk.pool, "marks");
        assert_eq!(chunk.workers, 2);
        assert!(
            chunk
                .marks
                .iter()
                .any(|m| m.kind == MarkKind::State(WorkerStatus::Running)),
            "{chunk:?}"
        );
        let newest = newest.expect("events were recorded");
        let (again, _) = timeline_chunk(&recording, Some(newest));
        assert!(again.marks.is_empty());
    }

    #[test]
    fn a_failed_write_leaves_no_file_and_says_why() {
        let pool = ThreadPoolBuilder::new().with_threads(1).build();
        let missing = std::env::temp_dir()
            .join(format!("dpt-no-such-dir-{}", std::process::id()))
            .join("x.json");
        let error = write(&pool.recording(), &missing).unwrap_err();
        assert!(matches!(error, RecordError::Create { .. }));
        assert!(outcome(&Err(error)).starts_with("recording not saved: cannot create"));
        assert!(!missing.exists());
    }
}
