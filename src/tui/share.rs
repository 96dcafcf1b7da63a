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
/// random characters, so a name cannot be planted in advance. Each is written whole under a
/// hidden temporary name, synced, then renamed to its own (never over a file): a full disk or a
/// failed write leaves neither file, not an empty one, and the error says why.
pub(crate) fn export(
    dir: &Path,
    stem: &str,
    screen: &crate::format::SafeText,
    snapshot_json: &crate::format::SafeText,
) -> std::io::Result<(PathBuf, PathBuf)> {
    // The stem names no directory: only its last part is used.
    let stem: String = stem
        .chars()
        .map(|c| {
            if c == '/' || crate::format::is_unsafe(c) {
                '_'
            } else {
                c
            }
        })
        .collect();
    let txt = written(
        tempfile::Builder::new()
            .prefix(&format!(".{stem}-"))
            .suffix(".txt.part")
            .rand_bytes(6),
        dir,
        screen,
    )?;
    // The final names: the temporary one without its dot and `.part`.
    let name = txt
        .path()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = name.trim_start_matches('.').trim_end_matches(".part");
    let txt_path = dir.join(base);
    let json_path = txt_path.with_extension("json");
    // The JSON beside it, with the same random part: new, 0600, no link followed.
    let json = written(
        tempfile::Builder::new()
            .prefix(&format!(
                ".{}.part",
                json_path
                    .file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default()
            ))
            .rand_bytes(0),
        dir,
        snapshot_json,
    )?;
    txt.persist_noclobber(&txt_path).map_err(|e| e.error)?;
    if let Err(e) = json.persist_noclobber(&json_path) {
        // Both or neither.
        let _ = std::fs::remove_file(&txt_path);
        return Err(e.error);
    }
    // The renames themselves on disk.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok((txt_path, json_path))
}

/// `text` written to a new temporary file in `dir` (0600) and synced; removed again if that
/// fails.
fn written(
    builder: &mut tempfile::Builder<'_, '_>,
    dir: &Path,
    text: &crate::format::SafeText,
) -> std::io::Result<tempfile::NamedTempFile> {
    use std::io::Write;
    let mut f = builder
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .tempfile_in(dir)?;
    f.write_all(text.as_str().as_bytes())?;
    f.as_file().sync_all()?;
    Ok(f)
}

#[cfg(test)]
pub(crate) mod tests {
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

    /// An export into a full disk (a 64 kB tmpfs, filled): it fails, says why, and leaves no
    /// file behind (it left a 0-byte one); once there is room, it is written whole.
    #[test]
    fn an_export_into_a_full_disk_leaves_no_file() {
        crate::files::test_mounts::in_own_mounts("tui::share::tests::export_into_a_full_tmpfs");
    }

    #[test]
    #[ignore = "run by an_export_into_a_full_disk_leaves_no_file, in a namespace of its own"]
    fn export_into_a_full_tmpfs() {
        let dir = crate::files::test_mounts::small_tmpfs();
        let filler = dir.path().join("filler");
        let mut f = std::fs::File::create(&filler).expect("create");
        let _ = std::io::Write::write_all(&mut f, &[b'x'; 60 * 1024]);
        drop(f);
        let screen = crate::format::SafeText::new(&"screen line\n".repeat(2000));
        let json = crate::format::SafeText::new("{}");
        let e = export(dir.path(), "ifxtop-x", &screen, &json).expect_err("the disk is full");
        assert!(e.to_string().contains("No space left on device"), "{e}");
        let left: Vec<String> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, ["filler"], "{left:?}");
        // Room again: both files, whole.
        std::fs::remove_file(&filler).expect("rm");
        let (txt, json_path) = export(dir.path(), "ifxtop-x", &screen, &json).expect("export");
        assert_eq!(
            std::fs::read_to_string(&txt).expect("read"),
            screen.as_str()
        );
        assert_eq!(std::fs::read_to_string(&json_path).expect("read"), "{}");
        assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 2);
    }

    #[test]
    fn osc52_bytes() {
        use crate::format::SafeText;
        assert_eq!(osc52(&SafeText::new("hi")), "\x1b]52;c;aGk=\x1b\\");
        assert_eq!(osc52(&SafeText::new("")), "\x1b]52;c;\x1b\\");
    }
}
