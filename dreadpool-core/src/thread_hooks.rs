//! Per-thread start and exit handlers: user code that runs on every worker
//! thread as it starts and as it ends, replacements after a panic included.
//!
//! ## Why starts and exits pair up
//!
//! Both run in `worker::main`, the body of every worker thread (the first
//! ones and each replacement): the start handler before the thread's first
//! task, the exit handler on each of the two ways the function returns (the
//! pool shut down, or a replacement took over after a panic). The function
//! does not unwind (tasks and handlers run under `catch_unwind`), so a
//! thread that ran its start handler reaches one of those returns and runs
//! its exit handler exactly once. A thread kept on after the OS refused its
//! replacement stays in the same call, so it starts and exits once too.
//! Dropping the pool joins every thread, replacements included
//! (`Registry::shutdown_and_join`), so when the drop returns every exit
//! handler has returned; `try_build` failing part-way joins the threads it
//! had started the same way.
//!
//! ## Panics
//!
//! A handler's panic is caught and reported as a task's is (counted in
//! `panic_count`, logged, given to the panic handler; under
//! `PanicPolicy::Abort` the process aborts), but it never costs a worker:
//! the thread carries on into its loop after a start handler's panic, and
//! goes on to end after an exit handler's. `Respawn` does not apply, since
//! replacing a thread whose start handler panicked would only run the
//! handler again.

use crate::panic::PanicPayload;
use crate::sync::Arc;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A user's start or exit handler, called with the worker's index.
pub(crate) type ThreadHandler = Arc<dyn Fn(usize) + Send + Sync + 'static>;

/// The handlers a pool's threads run at their start and end.
#[derive(Clone, Default)]
pub(crate) struct ThreadHooks {
    pub(crate) start: Option<ThreadHandler>,
    pub(crate) exit: Option<ThreadHandler>,
}

/// Which end of a thread's life a handler marks.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ThreadEvent {
    Start,
    /// The thread ends while it still holds its worker seat (shutdown).
    Exit,
    /// The thread ends after handing its seat to a replacement, which may
    /// already be running: it must not touch the seat's single-writer
    /// counters (`metrics`) or ring (`recorder`) any more.
    ExitAfterHandover,
}

impl ThreadEvent {
    /// The handler's name, for logs.
    pub(crate) fn handler_name(self) -> &'static str {
        match self {
            ThreadEvent::Start => "the start handler",
            ThreadEvent::Exit | ThreadEvent::ExitAfterHandover => "the exit handler",
        }
    }

    /// Whether the thread still holds its worker seat.
    pub(crate) fn in_seat(self) -> bool {
        !matches!(self, ThreadEvent::ExitAfterHandover)
    }
}

impl ThreadHooks {
    /// Runs the handler for `event` on worker `index`'s thread, if there is
    /// one, and gives back its panic, for the pool to report as a task's
    /// (see the module docs).
    pub(crate) fn run(&self, event: ThreadEvent, index: usize) -> Result<(), PanicPayload> {
        let handler = match event {
            ThreadEvent::Start => self.start.as_ref(),
            ThreadEvent::Exit | ThreadEvent::ExitAfterHandover => self.exit.as_ref(),
        };
        match handler {
            Some(handler) => catch_unwind(AssertUnwindSafe(|| handler(index))),
            None => Ok(()),
        }
    }
}
