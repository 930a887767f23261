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
    /// [`use_current_thread`](crate::ThreadPoolBuilder::use_current_thread)
    /// on a thread that is already a worker of a pool (dreadpool's
    /// `CurrentThreadAlreadyInPool`).
    CurrentThreadAlreadyInPool,
    /// Any other reason dreadpool refused the configuration (a stack size
    /// over its maximum, for instance).
    Dreadpool(dreadpool::BuildError),
}

const GLOBAL_POOL_ALREADY_INITIALIZED: &str =
    "The global thread pool has already been initialized.";
const CURRENT_THREAD_ALREADY_IN_POOL: &str =
    "The current thread is already part of another thread pool.";

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
            dreadpool::BuildError::CurrentThreadAlreadyInPool => {
                ErrorKind::CurrentThreadAlreadyInPool
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
            ErrorKind::CurrentThreadAlreadyInPool => f.write_str(CURRENT_THREAD_ALREADY_IN_POOL),
            ErrorKind::Dreadpool(error) => error.fmt(f),
        }
    }
}

impl Error for ThreadPoolBuildError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match &self.kind {
            ErrorKind::IOError(error) => Some(error),
            ErrorKind::Dreadpool(error) => Some(error),
            ErrorKind::GlobalPoolAlreadyInitialized | ErrorKind::CurrentThreadAlreadyInPool => None,
        }
    }
}
