//! The pool's `tracing` spans and events, in one place.
//!
//! Two twin implementations with identical signatures: the real one with the
//! `tracing` feature, an empty one without, so no call site carries a `cfg`
//! and a disabled feature compiles to nothing.

#[cfg(feature = "tracing")]
mod imp {
    use crate::panic::{contain, drop_payload};
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use tracing::{debug, error, trace, warn, Span};

    // Every call into `tracing` is contained (see `panic::contain`): a
    // subscriber that panics must not unwind through the scheduler.

    /// Enters the `dreadpool.worker` span for the life of a worker thread.
    pub(crate) fn worker_span(pool: &str, worker: usize) -> tracing::span::EnteredSpan {
        catch_unwind(AssertUnwindSafe(|| {
            tracing::info_span!("dreadpool.worker", pool = pool, worker = worker).entered()
        }))
        .unwrap_or_else(|payload| {
            drop_payload(payload);
            Span::none().entered()
        })
    }

    pub(crate) fn pool_started(pool: &str, threads: usize) {
        contain(|| debug!(pool, threads, "dreadpool started"));
    }

    pub(crate) fn pool_shutdown(pool: &str) {
        contain(|| debug!(pool, "dreadpool shut down"));
    }

    pub(crate) fn task_panicked(worker: usize, message: &str) {
        contain(|| error!(worker, panic = message, "task panicked"));
    }

    pub(crate) fn thread_handler_panicked(worker: usize, handler: &str, message: &str) {
        contain(|| error!(worker, handler, panic = message, "thread handler panicked"));
    }

    pub(crate) fn panic_handler_panicked(worker: usize) {
        contain(|| {
            error!(
                worker,
                "the panic handler itself panicked; its panic was contained"
            )
        });
    }

    pub(crate) fn worker_respawned(worker: usize) {
        contain(|| warn!(worker, "worker thread replaced after a panic"));
    }

    pub(crate) fn respawn_failed(worker: usize, error: &std::io::Error) {
        contain(
            || error!(worker, %error, "could not spawn a replacement worker thread; the old thread carries on"),
        );
    }

    pub(crate) fn stole(worker: usize, victim: usize, batch: usize) {
        contain(|| trace!(worker, victim, batch, "stole"));
    }

    pub(crate) fn fork_shared(worker: usize) {
        contain(|| trace!(worker, "shared a fork"));
    }

    pub(crate) fn fork_stolen(worker: usize, owner: usize) {
        contain(|| trace!(worker, owner, "stole a fork"));
    }

    pub(crate) fn sleeping(worker: usize) {
        contain(|| trace!(worker, "sleeping"));
    }

    pub(crate) fn woken(worker: usize) {
        contain(|| trace!(worker, "woken"));
    }

    /// The span current at a spawn site, if a subscriber makes it a real one.
    pub(crate) struct SpawnContext(Span);

    impl SpawnContext {
        /// Whether a spawn may have a span to carry: not until a subscriber
        /// has been set. One relaxed load of the flag `tracing`'s own macros
        /// test to elide their callsites (set for good by the first global
        /// or scoped dispatcher). `Span::current` would otherwise look up
        /// the dispatcher and make a virtual call on every spawn, even with
        /// no subscriber installed (`BENCHMARKS.md`, "Core design figures":
        /// trace-spawn-context).
        #[inline(always)]
        pub(crate) fn may_exist() -> bool {
            tracing::dispatcher::has_been_set()
        }

        #[inline(always)]
        pub(crate) fn capture() -> Option<SpawnContext> {
            if !Self::may_exist() {
                return None;
            }
            Self::capture_current()
        }

        // Out of line, so that the check above inlines into every spawn.
        #[inline(never)]
        fn capture_current() -> Option<SpawnContext> {
            let span = catch_unwind(Span::current).unwrap_or_else(|payload| {
                drop_payload(payload);
                Span::none()
            });
            (!span.is_none()).then_some(SpawnContext(span))
        }

        /// Runs `f` inside the captured span.
        pub(crate) fn in_scope<R>(&self, f: impl FnOnce() -> R) -> R {
            self.0.in_scope(f)
        }
    }
}

#[cfg(not(feature = "tracing"))]
mod imp {
    /// Without `tracing` there is no span to hold.
    pub(crate) struct NoSpan;

    pub(crate) fn worker_span(_pool: &str, _worker: usize) -> NoSpan {
        NoSpan
    }
    pub(crate) fn pool_started(_pool: &str, _threads: usize) {}
    pub(crate) fn pool_shutdown(_pool: &str) {}
    pub(crate) fn task_panicked(_worker: usize, _message: &str) {}
    pub(crate) fn thread_handler_panicked(_worker: usize, _handler: &str, _message: &str) {}
    pub(crate) fn panic_handler_panicked(_worker: usize) {}
    pub(crate) fn worker_respawned(_worker: usize) {}
    pub(crate) fn respawn_failed(_worker: usize, _error: &std::io::Error) {}
    pub(crate) fn stole(_worker: usize, _victim: usize, _batch: usize) {}
    pub(crate) fn fork_shared(_worker: usize) {}
    pub(crate) fn fork_stolen(_worker: usize, _owner: usize) {}
    pub(crate) fn sleeping(_worker: usize) {}
    pub(crate) fn woken(_worker: usize) {}

    /// Without `tracing` there is no span to carry.
    pub(crate) enum SpawnContext {}

    impl SpawnContext {
        pub(crate) fn may_exist() -> bool {
            false
        }

        pub(crate) fn capture() -> Option<SpawnContext> {
            None
        }

        pub(crate) fn in_scope<R>(&self, _f: impl FnOnce() -> R) -> R {
            match *self {}
        }
    }
}

pub(crate) use imp::*;
