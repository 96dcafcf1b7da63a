//! Reading files without trusting them: regular files only (a FIFO, a device such as
//! `/dev/zero` or a directory is refused by name), opened without blocking (a FIFO with no
//! writer would hold the open forever), and never more than a cap read into memory. Writing
//! files ifxtop creates: new files only, never through a symbolic link, never over an existing
//! file, readable by their owner alone (they may hold SQL text).
//!
//! Every path a user gives (`--config`, `--replay`, `--extents`, `ifxtop parse FILE`, the web
//! config and its certificate and key files) goes through one of these, so each is refused the
//! same way and at once when it is not a regular file:
//! - [`check_regular`]: before anything starts, without opening it;
//! - [`open_regular`]: to read it as a stream (a recording);
//! - [`read_capped`] / [`read_text_capped`]: to read it whole, at most a cap;
//! - [`user_file_error`]: the one message, `--config /x: a FIFO (named pipe), not a regular
//!   file`.

use std::io::{self, Read};
use std::path::Path;

/// One mebibyte: caps are set in MB.
pub const MB: u64 = 1024 * 1024;

/// What a path is when it is not a regular file, for the message refusing it.
fn kind_of(ft: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO (named pipe)"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Opens `path` for reading if it is a regular file. The open does not block (O_NONBLOCK: a
/// FIFO without a writer opens at once, and is then refused); for a regular file the flag
/// changes nothing.
pub fn open_regular(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(path)?;
    regular_only(file)
}

/// `file` if it is a regular file, else an error naming what it is.
fn regular_only(file: std::fs::File) -> io::Result<std::fs::File> {
    let ft = file.metadata()?.file_type();
    if !ft.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}, not a regular file", kind_of(ft)),
        ));
    }
    Ok(file)
}

/// Creates `path` as a new file, mode 0600: `O_CREAT | O_EXCL` fails on any existing file and
/// on a symbolic link (dangling or not) in its place, so nothing planted there is followed and
/// nothing there is overwritten.
pub fn create_new_private(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
        .open(path)
}

/// Opens `path` to append to it, creating it 0600 if it is not there; a symbolic link in its
/// place is refused (`O_NOFOLLOW`), and so is anything but a regular file.
pub fn open_append_private(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC | nix::libc::O_NONBLOCK)
        .open(path)?;
    regular_only(file)
}

/// Checks, without opening it, that `path` is a regular file (following symbolic links): for
/// refusing a bad `--extents FILE` before the screen starts.
pub fn check_regular(path: &Path) -> io::Result<()> {
    let ft = std::fs::metadata(path)?.file_type();
    if ft.is_file() {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}, not a regular file", kind_of(ft)),
        ))
    }
}

/// Who besides its owner may change `path` (or, for a `secret`, read it), as ssh judges its own
/// files: the file writable by its group or others; a secret readable by them (ssh refuses a
/// private key with any of the 077 bits set); a directory on the way to it writable by
/// its group or others without the sticky bit (whoever writes it can put another file in its
/// place). One sentence per finding, naming the path and its mode; empty when none (or when
/// the path cannot be looked at: the read that follows says why).
pub fn loose_modes(path: &Path, secret: bool) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    let mut found = Vec::new();
    let Ok(mode) = std::fs::metadata(path).map(|m| m.permissions().mode()) else {
        return found;
    };
    if mode & 0o022 != 0 {
        found.push(format!(
            "{} is writable by others (mode {:o})",
            path.display(),
            mode & 0o7777
        ));
    }
    if secret && mode & 0o044 != 0 {
        found.push(format!(
            "{} is readable by others (mode {:o})",
            path.display(),
            mode & 0o7777
        ));
    }
    let full = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    for dir in full.ancestors().skip(1) {
        let Ok(m) = std::fs::metadata(dir).map(|m| m.permissions().mode()) else {
            continue;
        };
        if m & 0o022 != 0 && m & 0o1000 == 0 {
            found.push(format!(
                "{}, a directory above {}, is writable by others (mode {:o}, no sticky bit)",
                dir.display(),
                path.display(),
                m & 0o7777
            ));
        }
    }
    found
}

/// The error for input past a cap of `cap` bytes.
pub fn too_large(cap: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("larger than {} (read no further)", cap_text(cap)),
    )
}

/// `64 MB`, or the bytes when the cap is not a whole number of MB (tests use small caps).
pub fn cap_text(cap: u64) -> String {
    if cap >= MB && cap % MB == 0 {
        format!("{} MB", cap / MB)
    } else {
        format!("{cap} bytes")
    }
}

/// Reads all of `reader`, failing once more than `cap` bytes came (nothing past `cap + 1` is
/// read, nothing past about `cap` is kept).
pub fn read_all_capped(reader: impl Read, cap: u64, size_hint: u64) -> io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(usize::try_from(size_hint.min(cap) + 1).unwrap_or(0));
    reader.take(cap.saturating_add(1)).read_to_end(&mut buf)?;
    if buf.len() as u64 > cap {
        return Err(too_large(cap));
    }
    Ok(buf)
}

/// Reads the regular file `path`, at most `cap` bytes (more is an error, not a cut).
pub fn read_capped(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > cap {
        return Err(too_large(cap));
    }
    read_all_capped(file, cap, len)
}

/// Reads the regular file `path` whole as text (invalid UTF-8 replaced), at most `cap` bytes.
pub fn read_text_capped(path: &Path, cap: u64) -> io::Result<String> {
    read_capped(path, cap).map(lossy)
}

/// The message for a user-given file that cannot be used: what it was given as (`--config`),
/// the path, and why (`a FIFO (named pipe), not a regular file`, `larger than 1 MB`).
pub fn user_file_error(what: &str, path: &Path, e: &io::Error) -> String {
    format!("{what} {}: {e}", path.display())
}

/// Bytes as text: invalid UTF-8 (a legacy code set) is replaced, never an error.
pub fn lossy(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// Helpers of the tests that need a full disk: a small tmpfs in a namespace of their own.
#[cfg(test)]
pub(crate) mod test_mounts {
    /// Runs the ignored test `name` of this binary in a user and mount namespace of its own
    /// (`unshare -rm`: root there, so it may mount a small tmpfs; nothing outside sees it).
    pub(crate) fn in_own_mounts(name: &str) {
        let exe = std::env::current_exe().expect("the test binary");
        let out = std::process::Command::new("unshare")
            .args(["-rm"])
            .arg(exe)
            .args(["--exact", name, "--ignored", "--nocapture"])
            .output()
            .expect("unshare (util-linux) runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{text}");
        assert!(text.contains("1 passed"), "{text}");
    }

    /// A 64 kB tmpfs mounted on a new directory (in the namespace `in_own_mounts` made).
    pub(crate) fn small_tmpfs() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(dir.path())
            .status()
            .expect("mount runs");
        assert!(mounted.success(), "mount a tmpfs");
        dir
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_up_to_the_cap() {
        let dir = tempfile::tempdir().expect("dir");
        let p = dir.path().join("f");
        std::fs::write(&p, b"0123456789").expect("write");
        assert_eq!(read_capped(&p, 10).expect("fits"), b"0123456789");
        let e = read_capped(&p, 9).expect_err("too big");
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        assert_eq!(e.to_string(), "larger than 9 bytes (read no further)");
        assert_eq!(cap_text(64 * MB), "64 MB");
    }

    #[test]
    fn devices_directories_and_fifos_are_refused_without_blocking() {
        let e = read_capped(Path::new("/dev/zero"), MB).expect_err("a device");
        assert!(e.to_string().contains("a character device"), "{e}");
        let dir = tempfile::tempdir().expect("dir");
        let e = read_capped(dir.path(), MB).expect_err("a directory");
        assert!(e.to_string().contains("a directory"), "{e}");
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.expect("mkfifo runs").success());
        // No writer: a blocking open would never return.
        let e = read_capped(&fifo, MB).expect_err("a fifo");
        assert!(e.to_string().contains("a FIFO"), "{e}");
        assert!(check_regular(&fifo).is_err());
        // A stream past the cap stops being read.
        let e = read_all_capped(io::repeat(b'y'), 1000, 0).expect_err("endless");
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
    }
}

/// An instance's name as one file name of its own (`ol_prod@db01`): what is not a letter, a
/// digit or `-_.@` becomes `_`, and a name that is empty or starts with a dot is prefixed
/// `ifxtop` (never `.`, `..` or a hidden file).
pub fn name_of_instance(instance: &str) -> String {
    let name: String = instance
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.@".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() || name.starts_with('.') {
        format!("ifxtop{name}")
    } else {
        name
    }
}

#[cfg(test)]
mod name_tests {
    /// An instance's name never leaves the directory it is kept in: no separator, never `.`
    /// or `..` (a ring per instance once used the name as it was).
    #[test]
    fn an_instance_name_is_one_plain_file_name() {
        use super::name_of_instance as n;
        assert_eq!(n("ol_prod@db01"), "ol_prod@db01");
        assert_eq!(n("ol/../prod"), "ol_.._prod");
        assert_eq!(n(".."), "ifxtop..");
        assert_eq!(n(""), "ifxtop");
        assert_eq!(n(".hidden"), "ifxtop.hidden");
    }
}
