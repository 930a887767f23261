//! The unit of work.

use crate::registry::Registry;

/// A unit of work: a boxed closure that runs once, on any thread.
///
/// `FnOnce` because a task runs exactly once; `Send` because it crosses
/// threads; boxed because trait objects are unsized. `'static` is required by
/// [`spawn`](crate::ThreadPool::spawn), so a task owns what it captures.
pub(crate) type Task = Box<dyn FnOnce() + Send + 'static>;

/// Anything that can become a [`Task`]: any `'static` closure, or a task that
/// is already boxed (scopes and broadcasts box their closures themselves, and
/// must not pay a second allocation).
pub(crate) trait IntoTask: Send + 'static {
    fn into_task(self) -> Task;
}

impl<F> IntoTask for F
where
    F: FnOnce() + Send + 'static,
{
    fn into_task(self) -> Task {
        Box::new(self)
    }
}

/// A task boxed by its spawner. (`FnOnce` is a fundamental trait, so this
/// impl does not overlap the closure one: `Boxed` is not a closure.)
pub(crate) struct Boxed(pub(crate) Task);

impl IntoTask for Boxed {
    fn into_task(self) -> Task {
        self.0
    }
}

/// What a spawn learns about its task before it commits to it.
///
/// Capturing the spawn site's span calls into the `tracing` subscriber, which
/// is foreign code and may panic; it happens here, before the task is
/// counted, so that a panic leaves no count behind for `join()` to wait on.
/// Turning the closure into a [`Task`] afterwards is pure boxing.
///
/// Nearly every spawn learns nothing (no span to carry, not sampled), so the
/// envelope is one pointer, null in that case, and whatever it does carry is
/// boxed, and the code that boxes it is out of line. Holding the span and
/// the sample time inline (56 bytes) moved them along every spawn and kept
/// the spawn path from inlining: with no subscriber installed, a nested spawn
/// cost 120 instructions more than with the `tracing` feature compiled out,
/// and nearly twice the time; now it costs 10 more (callgrind, a 20-level
/// spawn tree on one worker).
pub(crate) struct Envelope(Option<Box<Wrapping>>);

/// What a task must be wrapped in, for the rare spawn that needs it.
struct Wrapping {
    context: Option<crate::trace::SpawnContext>,
    sampled_at: Option<std::time::Instant>,
}

impl Envelope {
    #[inline]
    pub(crate) fn new(registry: &Registry) -> Self {
        let context = crate::trace::SpawnContext::capture();
        let sampled_at = registry.metrics.sample_spawn();
        if context.is_none() && sampled_at.is_none() {
            Envelope(None)
        } else {
            Self::carrying(context, sampled_at)
        }
    }

    // Out of line and cold, like `Wrapping::wrap`.
    #[cold]
    #[inline(never)]
    fn carrying(
        context: Option<crate::trace::SpawnContext>,
        sampled_at: Option<std::time::Instant>,
    ) -> Self {
        Envelope(Some(Box::new(Wrapping {
            context,
            sampled_at,
        })))
    }

    /// Boxes `f` as a task. When a `tracing` subscriber is active and a span
    /// was current at the spawn site, the task runs inside that span, so a
    /// host's request context follows its work onto the pool. With the
    /// `metrics` feature, one spawn in `latency_sampling` (per spawning
    /// thread) is also wrapped to time its schedule delay and run time. Every
    /// other task, and every task without those features, is boxed as it is:
    /// no extra size, no extra work.
    #[inline]
    pub(crate) fn into_task(self, task: impl IntoTask) -> Task {
        let task = task.into_task();
        match self.0 {
            None => task,
            Some(wrapping) => (*wrapping).wrap(task),
        }
    }
}

impl Wrapping {
    // Out of line and cold, so that the common path above stays small enough
    // to inline into every spawn.
    #[cold]
    #[inline(never)]
    fn wrap(self, task: Task) -> Task {
        let Wrapping {
            context,
            sampled_at,
        } = self;
        let task: Task = match context {
            Some(context) => Box::new(move || context.in_scope(task)),
            None => task,
        };
        match sampled_at {
            Some(spawned) => Box::new(move || crate::worker::run_timed(spawned, task)),
            None => task,
        }
    }
}
