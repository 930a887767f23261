//! The exporter's Unix socket file: owner-only (0600) whatever the umask,
//! and put in place of nothing but a stale socket of ours.
//!
//! # Owner-only, with no window
//!
//! bind(2) creates the socket file with mode `0777 & !umask`: under umask
//! 002 a group member may connect, and a recording says more about a
//! process than its counters. A chmod after the bind leaves a window in
//! which the file is reachable with the wider mode. Setting the umask
//! around the bind is no better in a library: the umask is per process,
//! not per thread, so another thread creating a file at that moment would
//! get our umask, and a thread setting its own would undo ours.
//!
//! So the socket is born where nobody else can reach it. [`PrivateDir`]
//! makes a fresh directory next to the target, mode 0700 (mkdir(2) fails
//! if the name exists, so the directory is new and ours, and at no time
//! wider than 0700: the umask can only narrow it). The socket is bound
//! inside and chmodded to 0600 there: connect(2) needs search permission on
//! every directory of the path, so until then only we (and root) can reach
//! it. Only then does it get its real name, by link(2): atomic, and unlike
//! rename(2) it fails if the name exists, so nothing that appeared at the
//! path after we looked is ever replaced. The temporary name and directory
//! go at once; the listening socket is the inode, reachable by any of its
//! names.
//!
//! # A stale socket of ours
//!
//! An existing path is replaced only when all of these hold:
//!
//! - it is a socket, by lstat(2): a symlink, even to a socket, is not
//!   followed, and a regular file, a directory or a fifo is never touched
//!   ([`ExportError::NotASocket`]);
//! - nobody listens on it: connect(2) is refused (`ECONNREFUSED`). If
//!   something answers, it is a live exporter or some other server
//!   ([`ExportError::InUse`]); any other failure (`EACCES` on another
//!   user's owner-only socket, say) means we cannot tell, and we do not
//!   guess ([`ExportError::Unverified`]);
//! - its owner is our effective uid (read from the directory we just made,
//!   which needs no `libc`): a dead process of another user's is theirs to
//!   clean up ([`ExportError::NotOurs`]).
//!
//! One race is left, between two exporters starting at once on the same
//! stale path: the inode is checked again just before the unlink, but no
//! system call unlinks "this name if it is still this inode", so a socket
//! bound in between could be unlinked. Its exporter's link then fails or
//! its clients find no file, and nothing outside dreadpool is harmed.

use crate::error::{ExportError, FileKind};
use std::fs::{self, DirBuilder, Permissions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// The socket file's mode: its owner may connect, nobody else.
pub(crate) const SOCKET_MODE: u32 = 0o600;

/// The private directory's mode while the socket is bound inside it.
const PRIVATE_DIR_MODE: u32 = 0o700;

/// How many times the target is looked at again when something appears
/// there between our check and our link.
const ATTEMPTS: usize = 3;

/// Binds a listener at `path`, owner-only, replacing only a stale socket
/// of ours; returns it with its socket file's inode (so that the exporter
/// removes the file on drop only if it is still ours).
pub(super) fn bind(path: &Path) -> Result<(UnixListener, u64), ExportError> {
    let bind_error = |source| ExportError::Bind {
        addr: path.display().to_string(),
        source,
    };
    let private = PrivateDir::create(path).map_err(bind_error)?;
    let listener = UnixListener::bind(private.socket()).map_err(bind_error)?;
    fs::set_permissions(private.socket(), Permissions::from_mode(SOCKET_MODE))
        .map_err(bind_error)?;
    let ino = fs::symlink_metadata(private.socket())
        .map_err(bind_error)?
        .ino();
    for _ in 0..ATTEMPTS {
        clear_stale(path, private.owner)?;
        match fs::hard_link(private.socket(), path) {
            // `private` goes on return: the temporary name and directory
            // with it; the socket keeps its real name.
            Ok(()) => return Ok((listener, ino)),
            // Something took the name since we looked: look again.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(bind_error(e)),
        }
    }
    // Still taken after several looks: someone keeps putting files there.
    Err(ExportError::InUse {
        path: path.to_path_buf(),
    })
}

/// Makes `path` free for our socket: nothing is there, or what was there
/// was a stale socket of ours and is gone. Anything else is an error and
/// is left as it was.
fn clear_stale(path: &Path, owner: u32) -> Result<(), ExportError> {
    let io_error = |source| ExportError::Bind {
        addr: path.display().to_string(),
        source,
    };
    let found = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_error(e)),
    };
    if !found.file_type().is_socket() {
        return Err(ExportError::NotASocket {
            path: path.to_path_buf(),
            kind: FileKind::of(found.file_type()),
        });
    }
    match UnixStream::connect(path) {
        Ok(_) => {
            return Err(ExportError::InUse {
                path: path.to_path_buf(),
            })
        }
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
        // Gone since the lstat: free.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(ExportError::Unverified {
                path: path.to_path_buf(),
                source,
            })
        }
    }
    if found.uid() != owner {
        return Err(ExportError::NotOurs {
            path: path.to_path_buf(),
            owner: found.uid(),
        });
    }
    // Unlink only the file judged stale above (see the module docs for the
    // race this narrows but cannot close).
    match fs::symlink_metadata(path) {
        Ok(now) if now.dev() == found.dev() && now.ino() == found.ino() => {}
        // Replaced or removed meanwhile: the link fails or succeeds on its
        // own, and a failure brings us back here to judge the newcomer.
        Ok(_) => return Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_error(e)),
    }
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_error(e)),
    }
}

/// A fresh directory of ours, mode 0700, next to the socket's path; removed
/// (with the temporary socket name in it) when dropped.
struct PrivateDir {
    path: PathBuf,
    /// Our effective uid: the directory's owner.
    owner: u32,
}

impl PrivateDir {
    fn create(target: &Path) -> io::Result<PrivateDir> {
        // Per process, so that two exporters binding at once in this
        // process never pick the same name; the pid does that across
        // processes, and mkdir refusing an existing name does the rest.
        static NEXT: AtomicU32 = AtomicU32::new(0);
        // Next to the target, so that the link stays on one file system.
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let mut taken = None;
        for _ in 0..16 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            // Short, because a socket path is limited to about 107 bytes:
            // `.dp-PID-N/s` is no longer than most socket names it stands
            // in for.
            let path = parent.join(format!(".dp-{}-{n}", std::process::id()));
            match DirBuilder::new().mode(PRIVATE_DIR_MODE).create(&path) {
                Ok(()) => {
                    // From here on, an error removes the directory.
                    let mut dir = PrivateDir { path, owner: 0 };
                    // A umask that masks the owner's bits (0o700 & !umask)
                    // would keep even us out: restore them. This only ever
                    // widens to 0700, never beyond.
                    fs::set_permissions(&dir.path, Permissions::from_mode(PRIVATE_DIR_MODE))?;
                    dir.owner = fs::symlink_metadata(&dir.path)?.uid();
                    return Ok(dir);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => taken = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(taken.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists)))
    }

    /// The socket's temporary name.
    fn socket(&self) -> PathBuf {
        self.path.join("s")
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        // The socket name may not exist (the bind failed); the directory is
        // empty after it, so both removals are all there is to undo.
        let _ = fs::remove_file(self.socket());
        let _ = fs::remove_dir(&self.path);
    }
}
