//! [`Publisher`]: a background thread that samples one pool and publishes
//! it through the `metrics` facade every period.

use super::{describe, sample_with, Options};
use crate::monitor::Monitor;
use dreadpool_core::{Handle, ThreadPool};
use std::fmt;
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// A background thread that samples one pool and publishes its metrics
/// every `period`, until dropped.
///
/// It publishes once before [`spawn`](Self::spawn) returns, so the metrics
/// are there as soon as it is. It owns its [`Monitor`], so the histograms
/// get every timed task exactly once (see [`sample_with`](super::sample_with)).
///
/// ```
/// use dreadpool::ThreadPoolBuilder;
/// use dreadpool::metrics::Publisher;
/// use std::time::Duration;
///
/// // Install a metrics-rs recorder first (Prometheus, StatsD, ...).
/// let pool = ThreadPoolBuilder::new().with_threads(2).build();
/// let publisher = Publisher::spawn(&pool, Duration::from_secs(1))?;
/// // ... the application runs ...
/// drop(publisher); // stops publishing
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Publisher {
    stop: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
    pool: String,
}

impl Publisher {
    /// Publishes `pool` every `period`, with the default [`Options`].
    ///
    /// # Errors
    ///
    /// When the thread cannot be started.
    pub fn spawn(pool: &ThreadPool, period: Duration) -> std::io::Result<Publisher> {
        Self::with_options(pool.handle(), period, Options::default())
    }

    /// Publishes the pool behind `handle` every `period`, with the default
    /// [`Options`].
    ///
    /// # Errors
    ///
    /// When the thread cannot be started.
    pub fn from_handle(handle: Handle, period: Duration) -> std::io::Result<Publisher> {
        Self::with_options(handle, period, Options::default())
    }

    /// Publishes the pool behind `handle` every `period`, with `options`.
    ///
    /// ```
    /// use dreadpool::ThreadPoolBuilder;
    /// use dreadpool::metrics::publish::{Options, Publisher};
    /// use std::time::Duration;
    ///
    /// let pool = ThreadPoolBuilder::new().with_threads(2).build();
    /// // The steal matrix even for pools of up to 64 workers.
    /// let options = Options::new().steal_matrix_max_workers(64);
    /// let _publisher = Publisher::with_options(pool.handle(), Duration::from_secs(1), options)?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// When the thread cannot be started.
    pub fn with_options(
        handle: Handle,
        period: Duration,
        options: Options,
    ) -> std::io::Result<Publisher> {
        let pool = handle.name().to_string();
        let mut monitor = Monitor::from_handle(handle);
        describe();
        sample_with(&mut monitor, &options);
        let (stop, stopped) = mpsc::sync_channel::<()>(1);
        let thread = thread::Builder::new()
            .name("dreadpool-publish".into())
            .spawn(move || loop {
                match stopped.recv_timeout(period) {
                    Err(RecvTimeoutError::Timeout) => {
                        sample_with(&mut monitor, &options);
                    }
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
                }
            })?;
        Ok(Publisher {
            stop: Some(stop),
            thread: Some(thread),
            pool,
        })
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.try_send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl fmt::Debug for Publisher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Publisher")
            .field("pool", &self.pool)
            .finish_non_exhaustive()
    }
}
