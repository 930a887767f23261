//! [`Options`]: what a publisher leaves out to bound its cardinality.

/// What [`sample_with`](super::sample_with) and a
/// [`Publisher`](super::Publisher) publish beyond the fixed set.
///
/// Today one knob: the steal matrix
/// ([`STOLEN_FROM`](super::names::STOLEN_FROM)) is `workers x (workers - 1)`
/// series, quadratic where everything else is linear in the workers, so it
/// is published only for pools of at most
/// [`steal_matrix_max_workers`](Self::steal_matrix_max_workers) workers
/// (default [`DEFAULT_STEAL_MATRIX_MAX_WORKERS`](Self::DEFAULT_STEAL_MATRIX_MAX_WORKERS),
/// 240 series at most). Above that it is opt-in; per-worker
/// [`TASKS_STOLEN`](super::names::TASKS_STOLEN) is always there.
///
/// ```
/// use dreadpool::metrics::publish::Options;
///
/// let default = Options::default();
/// assert!(default.publishes_steal_matrix(16));
/// assert!(!default.publishes_steal_matrix(17));
/// assert!(Options::new().steal_matrix_max_workers(usize::MAX).publishes_steal_matrix(1024));
/// assert!(!Options::new().steal_matrix_max_workers(0).publishes_steal_matrix(2));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    steal_matrix_max_workers: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            steal_matrix_max_workers: Self::DEFAULT_STEAL_MATRIX_MAX_WORKERS,
        }
    }
}

impl Options {
    /// Pools of up to this many workers get the steal matrix by default:
    /// 16 x 15 = 240 series, about as many as the two latency histograms.
    pub const DEFAULT_STEAL_MATRIX_MAX_WORKERS: usize = 16;

    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Publishes the steal matrix for pools of at most `workers` workers:
    /// 0 never, `usize::MAX` always.
    #[must_use]
    pub fn steal_matrix_max_workers(mut self, workers: usize) -> Self {
        self.steal_matrix_max_workers = workers;
        self
    }

    /// Whether a pool of `workers` workers gets the steal matrix.
    pub fn publishes_steal_matrix(&self, workers: usize) -> bool {
        workers <= self.steal_matrix_max_workers
    }
}
