//! Terminal setup and restore: raw mode and the alternate screen on entry,
//! and back on every way out (quit, error, panic, signal).
//!
//! [`restore`] is idempotent, so the guard's `Drop`, the panic hook and the
//! error path can all call it. The panic hook is this crate's own rather
//! than `ratatui::init`'s because the demo's panic storm panics on purpose
//! on worker threads many times a second: those are caught by the pool and
//! shown in the event log, and must neither restore the terminal nor print
//! over the dashboard.

use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::cursor::{Hide, Show};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::Terminal;
use std::io::{self, Stdout};
use std::panic::PanicHookInfo;
use std::sync::atomic::{AtomicBool, Ordering};

static ACTIVE: AtomicBool = AtomicBool::new(false);

/// The dashboard's terminal.
pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// Restores the terminal when dropped.
#[derive(Debug)]
pub struct Guard(());

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

/// Enters raw mode and the alternate screen.
pub fn enter() -> io::Result<(Term, Guard)> {
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let guard = Guard(());
    execute!(io::stdout(), EnterAlternateScreen, Hide)?;
    let terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    Ok((terminal, guard))
}

/// Leaves the alternate screen and raw mode, once; later calls do nothing.
pub fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = execute!(io::stdout(), LeaveAlternateScreen, Show);
        let _ = disable_raw_mode();
    }
}

/// Installs the panic hook: panics that `quiet` accepts (the demo's own,
/// caught by the pool) are not printed; any other panic restores the
/// terminal first, then prints as usual.
pub fn install_panic_hook(quiet: fn(&PanicHookInfo<'_>) -> bool) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if quiet(info) {
            return;
        }
        restore();
        previous(info);
    }));
}

/// True once the terminal has hung up (its window closed, its tmux session
/// killed): standard input then reports `POLLHUP`. Checked by the main loop,
/// because a hung-up terminal does not always deliver SIGHUP to us, and
/// crossterm's event poll would otherwise spin on the dead descriptor at
/// full CPU forever.
pub fn hung_up() -> bool {
    let mut fd = libc::pollfd {
        fd: libc::STDIN_FILENO,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `fd` is a valid, initialised pollfd array of length 1 that
    // outlives the call; a zero timeout makes the call non-blocking.
    let ready = unsafe { libc::poll(&mut fd, 1, 0) };
    ready > 0 && fd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
}
