//! Sharing what is on screen: the clipboard through OSC 52 (works over ssh and through tmux),
//! and exports of the screen (text) and the snapshot (JSON) to files.

use std::path::{Path, PathBuf};

/// The OSC 52 sequence that asks the terminal to put `text` on the system clipboard
/// (crossterm's `CopyToClipboard`, as the text that reaches the terminal).
pub(crate) fn osc52(text: &str) -> String {
    use crossterm::Command;
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = crossterm::clipboard::CopyToClipboard::to_clipboard_from(text).write_ansi(&mut out);
    out
}

/// What to tell the user after a copy: OSC 52 is one-way, success cannot be confirmed.
pub(crate) fn copy_note(bytes: usize, in_tmux: bool) -> String {
    let mut s = format!("copied {bytes} bytes via OSC 52");
    if in_tmux {
        s.push_str(" (tmux needs `set -g set-clipboard on`)");
    } else {
        s.push_str(" (if nothing arrives, your terminal does not allow OSC 52)");
    }
    s
}

/// Writes the screen text and the snapshot JSON next to each other in `dir`; returns the paths.
pub(crate) fn export(
    dir: &Path,
    stem: &str,
    screen: &str,
    snapshot_json: &str,
) -> std::io::Result<(PathBuf, PathBuf)> {
    let txt = dir.join(format!("{stem}.txt"));
    let json = dir.join(format!("{stem}.json"));
    std::fs::write(&txt, screen)?;
    std::fs::write(&json, snapshot_json)?;
    Ok((txt, json))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osc52_bytes() {
        assert_eq!(osc52("hi"), "\x1b]52;c;aGk=\x1b\\");
        assert_eq!(osc52(""), "\x1b]52;c;\x1b\\");
    }
}
