//! The unit of work.

/// A unit of work: a boxed closure that runs once, on any thread.
///
/// `FnOnce` because a task runs exactly once; `Send` because it crosses
/// threads; boxed because trait objects are unsized. `'static` is required by
/// [`spawn`](crate::ThreadPool::spawn), so a task owns what it captures.
pub(crate) type Task = Box<dyn FnOnce() + Send + 'static>;

/// Boxes `f` as a task. When a `tracing` subscriber is active and a span is
/// current at the spawn site, the task runs inside that span, so a host's
/// request context follows its work onto the pool. With no subscriber (or the
/// `tracing` feature off) the closure is boxed as it is: no extra size, no
/// extra work.
pub(crate) fn into_task<F>(f: F) -> Task
where
    F: FnOnce() + Send + 'static,
{
    match crate::trace::SpawnContext::capture() {
        Some(context) => Box::new(move || context.in_scope(f)),
        None => Box::new(f),
    }
}
