//! What a pool's worker threads are called: `"{prefix}-{index}"` by
//! default, or whatever a per-index function returns
//! ([`ThreadPoolBuilder::with_thread_names`](crate::ThreadPoolBuilder::with_thread_names)).
//!
//! The pool keeps its prefix as its own name either way (metrics, the
//! recorder and traces label the pool with it); a per-index function only
//! names the threads. A replacement thread (after a panic under
//! `PanicPolicy::Respawn`) takes its seat's index and so its name.

use crate::sync::Arc;
use std::fmt;

/// A user's function from a worker index to that worker's thread name.
pub(crate) type ThreadNameFn = Arc<dyn Fn(usize) -> String + Send + Sync + 'static>;

/// How a pool names its threads.
#[derive(Clone)]
pub(crate) enum ThreadNames {
    /// `"{prefix}-{index}"`, the prefix being the pool's name.
    Prefixed,
    /// What the function returns for the index.
    PerIndex(ThreadNameFn),
}

impl ThreadNames {
    /// Worker `index`'s thread name, in the pool named `pool`. The user's
    /// function may panic; the caller runs this where a panic becomes a
    /// failed spawn.
    pub(crate) fn name(&self, pool: &str, index: usize) -> String {
        match self {
            ThreadNames::Prefixed => format!("{pool}-{index}"),
            ThreadNames::PerIndex(name) => name(index),
        }
    }
}

impl fmt::Debug for ThreadNames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ThreadNames::Prefixed => f.write_str("Prefixed"),
            ThreadNames::PerIndex(_) => f.write_str("PerIndex(..)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixed_names_join_the_pool_name_and_the_index() {
        assert_eq!(ThreadNames::Prefixed.name("pool", 3), "pool-3");
    }

    #[test]
    fn per_index_names_are_the_functions() {
        let names = ThreadNames::PerIndex(Arc::new(|i| format!("w{}", i * 10)));
        assert_eq!(names.name("pool", 2), "w20");
    }
}
