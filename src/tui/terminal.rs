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

pub(crate) type Term = Terminal<CrosstermBackend<Colors<Stdout>>>;

/// The terminal's writer: passes the screen through, or, for a terminal without 256 colours,
/// rewrites crossterm's colour codes (always the 256-colour form, `ESC[38;5;6m`) to the basic
/// ones (`ESC[36m`) every terminal knows. A frame is held until the flush that ends it, so no
/// sequence is ever rewritten in halves.
pub(crate) struct Colors<W: Write> {
    out: W,
    basic: bool,
    pending: Vec<u8>,
}

impl<W: Write> Colors<W> {
    pub(crate) fn new(out: W, basic: bool) -> Self {
        Colors {
            out,
            basic,
            pending: Vec::new(),
        }
    }
}

impl<W: Write> Write for Colors<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.basic {
            self.pending.extend_from_slice(buf);
            Ok(buf.len())
        } else {
            self.out.write(buf)
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            let frame = basic_colors(&std::mem::take(&mut self.pending));
            self.out.write_all(&frame)?;
        }
        self.out.flush()
    }
}

impl<W: Write> Drop for Colors<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// `bytes` with every SGR colour in the 256-colour form for one of the first 16 colours
/// (`38;5;N`, `48;5;N`) written as the basic code (`3N`/`4N`; the bright ones as their plain
/// colour, which an 8-colour terminal shows); everything else as it was.
pub(crate) fn basic_colors(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == 0x1b && bytes.get(i + 1) == Some(&b'[') {
            let start = i + 2;
            let mut end = start;
            while end < bytes.len() && (bytes[end].is_ascii_digit() || bytes[end] == b';') {
                end += 1;
            }
            if bytes.get(end) == Some(&b'm') {
                out.extend_from_slice(b"\x1b[");
                out.extend_from_slice(&sgr_basic(&bytes[start..end]));
                out.push(b'm');
                i = end + 1;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// One SGR's parameters with `38;5;N`/`48;5;N` (N < 16) as basic colours.
fn sgr_basic(params: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(params);
    let tokens: Vec<&str> = text.split(';').collect();
    let mut out: Vec<String> = Vec::with_capacity(tokens.len());
    let mut k = 0;
    while k < tokens.len() {
        let n = tokens.get(k + 2).and_then(|n| n.parse::<u8>().ok());
        match (tokens[k], tokens.get(k + 1), n) {
            ("38", Some(&"5"), Some(n)) if n < 16 => {
                out.push((30 + n % 8).to_string());
                k += 3;
            }
            ("48", Some(&"5"), Some(n)) if n < 16 => {
                out.push((40 + n % 8).to_string());
                k += 3;
            }
            (t, _, _) => {
                out.push(t.to_string());
                k += 1;
            }
        }
    }
    out.join(";").into_bytes()
}

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
pub(crate) fn enter(basic_colors: bool) -> io::Result<(Term, Guard)> {
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
    match Terminal::new(CrosstermBackend::new(Colors::new(
        io::stdout(),
        basic_colors,
    ))) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_basic_terminal_gets_the_basic_colour_codes() {
        let frame = b"\x1b[1;1H\x1b[38;5;6;48;5;0mab\x1b[38;5;15;48;5;1m!\x1b[39;49m\x1b[0m\x1b[2J";
        let out = basic_colors(frame);
        assert_eq!(
            String::from_utf8_lossy(&out),
            "\x1b[1;1H\x1b[36;40mab\x1b[37;41m!\x1b[39;49m\x1b[0m\x1b[2J"
        );
        // A colour past the 16 (never drawn) is left as it is.
        assert_eq!(basic_colors(b"\x1b[38;5;200m"), b"\x1b[38;5;200m".to_vec());
    }

    #[test]
    fn the_writer_rewrites_only_for_a_basic_terminal() {
        let mut w = Colors::new(Vec::new(), true);
        w.write_all(b"\x1b[38;5;6mx").expect("write");
        assert!(w.out.is_empty(), "held until the flush");
        w.flush().expect("flush");
        assert_eq!(w.out, b"\x1b[36mx".to_vec());
        let mut w = Colors::new(Vec::new(), false);
        w.write_all(b"\x1b[38;5;6mx").expect("write");
        w.flush().expect("flush");
        assert_eq!(w.out, b"\x1b[38;5;6mx".to_vec());
    }
}
