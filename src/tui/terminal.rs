//! The terminal: raw mode and the alternate screen on the way in; restored from ONE place on the
//! way out — normal exit, error, panic, SIGTERM, SIGHUP, SIGINT, SIGQUIT, and before a stop
//! (Ctrl-Z, SIGTSTP) — and safe to call twice; taken again when continued (SIGCONT).

use crossterm::cursor::{Hide, Show};
use crossterm::execute;
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;
use std::io::{self, Stdout, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

static ACTIVE: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

pub(crate) type Term = Terminal<CrosstermBackend<Stdout>>;

/// Why the live screen cannot run here, if it cannot: no terminal to draw on or read keys from
/// (`ssh host ifxtop` without `-t`, cron, a pipe), or a terminal that cannot move the cursor
/// (`TERM=dumb`).
pub(crate) fn unusable(term: Option<&str>, stdout_is_tty: bool, tty_opens: bool) -> Option<String> {
    const ALTERNATIVE: &str = "`ifxtop snapshot` prints every pane once without a terminal";
    if matches!(term, Some("dumb")) {
        return Some(format!(
            "cannot draw on TERM=dumb (the screen needs cursor movement: set TERM, e.g. \
             TERM=xterm-256color); {ALTERNATIVE}"
        ));
    }
    if !stdout_is_tty || !tty_opens {
        return Some(format!(
            "the live screen needs a terminal (over ssh: `ssh -t host ifxtop`); {ALTERNATIVE}"
        ));
    }
    None
}

/// [`unusable`] for this process: stdout, `/dev/tty` (where keys are read) and `TERM`.
pub(crate) fn check() -> Result<(), String> {
    use std::io::IsTerminal;
    let tty_opens = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .is_ok();
    match unusable(
        std::env::var("TERM").ok().as_deref(),
        io::stdout().is_terminal(),
        tty_opens,
    ) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

/// Puts the terminal in raw mode on the alternate screen. The returned guard restores it when
/// dropped; a panic restores it before the panic message is printed.
pub(crate) fn enter() -> io::Result<(Term, Guard)> {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
    // Before raw mode: the settings an abort (an allocation failing) puts back.
    crate::memory::guard_terminal();
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut out = io::stdout();
    if let Err(e) = execute!(out, EnterAlternateScreen, Hide) {
        restore();
        return Err(e);
    }
    match Terminal::new(CrosstermBackend::new(io::stdout())) {
        Ok(t) => Ok((t, Guard)),
        Err(e) => {
            restore();
            Err(e)
        }
    }
}

/// Leaves the alternate screen and raw mode. Does nothing if already restored; ignores errors
/// (after SIGHUP the terminal is gone and writes fail — there is nothing left to restore).
pub(crate) fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        crate::memory::terminal_released();
        let mut out = io::stdout();
        let _ = execute!(out, LeaveAlternateScreen, Show);
        let _ = disable_raw_mode();
        let _ = out.flush();
    }
}

/// Gives the terminal back and stops the process, as Ctrl-Z does for any program: the shell's
/// `fg` continues it here, and the terminal is taken again (raw mode, alternate screen). The
/// caller then redraws everything.
pub fn suspend() -> io::Result<()> {
    restore();
    nix::sys::signal::raise(nix::sys::signal::Signal::SIGSTOP).map_err(io::Error::from)?;
    // Continued (`fg`, or SIGCONT).
    take_again()
}

/// Raw mode, the alternate screen, the cursor hidden: as `enter` leaves it. Safe to call when
/// the terminal was never given back: raw mode is set afresh, because a shell that continues
/// ifxtop after someone else stopped it (`kill -STOP`, then `fg`) has put the terminal back in
/// cooked mode without crossterm knowing.
pub fn take_again() -> io::Result<()> {
    let _ = disable_raw_mode();
    crate::memory::guard_terminal();
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    execute!(io::stdout(), EnterAlternateScreen, Hide)
}

/// Restores the terminal when dropped (the normal and the error path).
#[derive(Debug)]
pub(crate) struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}
