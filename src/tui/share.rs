//! Sharing what is on screen: the clipboard through OSC 52 (works over ssh and through tmux),
//! and exports of the screen (text) and the snapshot (JSON) to files.

use std::path::{Path, PathBuf};

/// The OSC 52 sequence that asks the terminal to put `text` on the system clipboard
/// (crossterm's `CopyToClipboard`, as the text that reaches the terminal).
pub(crate) fn osc52(text: &crate::format::SafeText) -> String {
    use crossterm::Command;
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = crossterm::clipboard::CopyToClipboard::to_clipboard_from(text.as_str())
        .write_ansi(&mut out);
    out
}

/// What to tell the user after an export, in `width` columns: the files (one stem, its
/// extensions after the first: `ifxtop-x.txt, .json`), then the directory, shortened from the
/// left (`…/incidents/today`) so its end, the part that tells where, stays on the line.
pub fn export_note(files: &[String], dir: &str, width: usize) -> String {
    let mut names = String::new();
    let mut stem: Option<&str> = None;
    for f in files {
        let split = f.rsplit_once('.');
        match (stem, split) {
            (Some(s), Some((fs, ext))) if s == fs => names.push_str(&format!(", .{ext}")),
            _ => {
                if !names.is_empty() {
                    names.push_str(", ");
                }
                names.push_str(f);
                stem = split.map(|(s, _)| s);
            }
        }
    }
    let head = format!("exported {names} to ");
    let room = width.saturating_sub(head.chars().count());
    let n = dir.chars().count();
    let dir = if n > room && room > 1 {
        let tail: String = dir.chars().skip(n - (room - 1)).collect();
        format!("…{tail}")
    } else {
        dir.to_string()
    };
    head + &dir
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
/// Each is a new file, 0600 (they may hold SQL), never written through a link or over a file:
/// the stem (the moment shown, chosen by whoever made a replayed recording) is followed by six
/// random characters, so a name cannot be planted in advance.
pub(crate) fn export(
    dir: &Path,
    stem: &str,
    screen: &crate::format::SafeText,
    snapshot_json: &crate::format::SafeText,
) -> std::io::Result<(PathBuf, PathBuf)> {
    use std::io::Write;
    // The stem names no directory: only its last part is used.
    let stem: String = stem
        .chars()
        .map(|c| if c == '/' || c.is_control() { '_' } else { c })
        .collect();
    let f = tempfile::Builder::new()
        .prefix(&format!("{stem}-"))
        .suffix(".txt")
        .rand_bytes(6)
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .tempfile_in(dir)?;
    let (mut file, txt) = f.keep().map_err(|e| e.error)?;
    file.write_all(screen.as_str().as_bytes())?;
    file.sync_all()?;
    // The JSON beside it, with the same random part: new, 0600, no link followed.
    let json = txt.with_extension("json");
    let mut file = crate::files::create_new_private(&json)?;
    file.write_all(snapshot_json.as_str().as_bytes())?;
    file.sync_all()?;
    Ok((txt, json))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reliability test's planted files: exports are new files, 0600, under names nobody
    /// could guess in advance; a link planted at the old predictable name is not followed.
    #[test]
    fn exports_are_new_private_files_that_follow_no_planted_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me").expect("write");
        for ext in ["txt", "json"] {
            std::os::unix::fs::symlink(&victim, dir.path().join(format!("ifxtop-x.{ext}")))
                .expect("symlink");
        }
        let safe = crate::format::SafeText::new;
        let (txt, json) =
            export(dir.path(), "ifxtop-x", &safe("screen"), &safe("{}")).expect("export");
        assert_eq!(std::fs::read_to_string(&victim).expect("read"), "keep me");
        for p in [&txt, &json] {
            let m = std::fs::symlink_metadata(p).expect("meta");
            assert!(m.file_type().is_file(), "{p:?}");
            assert_eq!(m.permissions().mode() & 0o777, 0o600, "{p:?}");
        }
        assert_eq!(std::fs::read_to_string(&txt).expect("read"), "screen");
        assert_ne!(txt, dir.path().join("ifxtop-x.txt"));
        assert_eq!(txt.with_extension("json"), json);
        // A stem with a slash names no other directory.
        let (t2, _) = export(dir.path(), "../../etc/x", &safe("s"), &safe("{}")).expect("export");
        assert_eq!(t2.parent(), Some(dir.path()));
    }

    #[test]
    fn osc52_bytes() {
        use crate::format::SafeText;
        assert_eq!(osc52(&SafeText::new("hi")), "\x1b]52;c;aGk=\x1b\\");
        assert_eq!(osc52(&SafeText::new("")), "\x1b]52;c;\x1b\\");
    }
}
