//! Why a pool could not be built: rayon's `ThreadPoolBuildError`.

use std::error::Error;
use std::fmt;
use std::io;

/// The error [`ThreadPoolBuilder::build`](crate::ThreadPoolBuilder::build)
/// and [`build_global`](crate::ThreadPoolBuilder::build_global) return.
///
/// Its messages for the cases rayon has are rayon's, word for word (tests
/// and programs match on them).
///
/// ```
/// use std::error::Error;
///
/// rayon_core::ThreadPoolBuilder::new().build_global().unwrap();
/// let error = rayon_core::ThreadPoolBuilder::new().build_global().unwrap_err();
/// assert_eq!(error.to_string(), "The global thread pool has already been initialized.");
/// assert!(error.source().is_none());
/// ```
#[derive(Debug)]
pub struct ThreadPoolBuildError {
    kind: ErrorKind,
}

#[derive(Debug)]
pub(crate) enum ErrorKind {
    /// `build_global` after the global pool was configured or started.
    GlobalPoolAlreadyInitialized,
    /// A spawn handler (or the OS) could not start a thread.
    IOError(io::Error),
    /// [`use_current_thread`](crate::ThreadPoolBuilder::use_current_thread):
    /// the dreadpool core cannot make the calling thread a worker yet.
    UseCurrentThreadUnsupported,
    /// A global pool with a [`spawn_handler`](crate::ThreadPoolBuilder::spawn_handler):
    /// the dreadpool core builds its global pool on its own threads only.
    GlobalSpawnHandlerUnsupported,
    /// Any other reason dreadpool refused the configuration (a stack size
    /// over its maximum, for instance).
    Dreadpool(dreadpool::BuildError),
}

const GLOBAL_POOL_ALREADY_INITIALIZED: &str =
    "The global thread pool has already been initialized.";
const USE_CURRENT_THREAD_UNSUPPORTED: &str =
    "use_current_thread is not supported yet by dreadpool's rayon-core (compat/README.md)";
const GLOBAL_SPAWN_HANDLER_UNSUPPORTED: &str =
    "a spawn_handler for the global pool is not supported by dreadpool's rayon-core (compat/README.md)";

impl ThreadPoolBuildError {
    pub(crate) fn new(kind: ErrorKind) -> Self {
        ThreadPoolBuildError { kind }
    }

    pub(crate) fn is_global_pool_already_initialized(&self) -> bool {
        matches!(self.kind, ErrorKind::GlobalPoolAlreadyInitialized)
    }
}

impl From<dreadpool::BuildError> for ThreadPoolBuildError {
    fn from(error: dreadpool::BuildError) -> Self {
        ThreadPoolBuildError::new(match error {
            dreadpool::BuildError::GlobalPoolAlreadyInitialized => {
                ErrorKind::GlobalPoolAlreadyInitialized
            }
            // rayon hands back the spawn handler's (or the OS's) own error.
            dreadpool::BuildError::Spawn { source, .. } => ErrorKind::IOError(source),
            other => ErrorKind::Dreadpool(other),
        })
    }
}

impl fmt::Display for ThreadPoolBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::GlobalPoolAlreadyInitialized => f.write_str(GLOBAL_POOL_ALREADY_INITIALIZED),
            ErrorKind::IOError(error) => error.fmt(f),
            ErrorKind::UseCurrentThreadUnsupported => f.write_str(USE_CURRENT_THREAD_UNSUPPORTED),
            ErrorKind::GlobalSpawnHandlerUnsupported => {
                f.write_str(GLOBAL_SPAWN_HANDLER_UNSUPPORTED)
            }
            ErrorKind::Dreadpool(error) => error.fmt(f),
        }
    }
}

impl Error for ThreadPoolBuildError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match &self.kind {
            ErrorKind::IOError(error) => Some(error),
            ErrorKind::Dreadpool(error) => Some(error),
            ErrorKind::GlobalPoolAlreadyInitialized
            | ErrorKind::UseCurrentThreadUnsupported
            | ErrorKind::GlobalSpawnHandlerUnsupported => None,
        }
    }
}
