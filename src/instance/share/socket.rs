//! Where a shared feed listens: a Unix socket, created new, in a directory of its own (0700, or
//! 0750 of a DBA group), its mode and group as configured; who connects is read from the
//! socket itself (`SO_PEERCRED`), never from what they say.

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

/// The socket's access: its mode and group (the DBA group that may watch).
#[derive(Debug, Clone, PartialEq)]
pub struct Access {
    pub mode: u32,
    pub group: Option<nix::unistd::Gid>,
}

impl Access {
    /// From `--share-mode` and `--share-group` (a name or a number): by default 0600, or 0660
    /// with a group.
    pub fn new(mode: Option<u32>, group: Option<&str>) -> Result<Access, String> {
        let group = match group {
            None => None,
            Some(g) => Some(match g.parse::<u32>() {
                Ok(n) => nix::unistd::Gid::from_raw(n),
                Err(_) => {
                    nix::unistd::Group::from_name(g)
                        .map_err(|e| format!("--share-group {g}: {e}"))?
                        .ok_or_else(|| format!("--share-group {g}: no such group"))?
                        .gid
                }
            }),
        };
        let mode = mode.unwrap_or(if group.is_some() { 0o660 } else { 0o600 });
        if mode & !0o777 != 0 || mode & 0o007 != 0 {
            return Err(format!(
                "--share-mode {mode:o}: a mode for the owner and the group only (0600, 0660): \
                 the feed holds the server's SQL"
            ));
        }
        Ok(Access { mode, group })
    }
}

/// The default socket of `instance`: `$XDG_RUNTIME_DIR/ifxtop/NAME.sock`, else
/// `/tmp/ifxtop-UID/NAME.sock`.
pub fn default_path(instance: &str) -> PathBuf {
    let name = crate::files::name_of_instance(instance);
    default_dir().join(format!("{name}.sock"))
}

/// The directory of the default sockets.
pub fn default_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        Some(d) if d.is_absolute() => d.join("ifxtop"),
        _ => PathBuf::from(format!("/tmp/ifxtop-{}", nix::unistd::getuid())),
    }
}

/// Makes the default directory (0700, or 0750 of the group), or checks the one there: a
/// directory (not a link), this user's, that nobody else may write to.
fn own_dir(dir: &Path, access: &Access) -> io::Result<()> {
    let mode = if access.group.is_some() { 0o750 } else { 0o700 };
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            std::fs::DirBuilder::new().mode(mode).create(dir)?;
        }
        Err(e) => return Err(e),
        Ok(m) => {
            if !m.file_type().is_dir() {
                return Err(io::Error::other(
                    "is not a directory (a link is not followed)",
                ));
            }
            if m.uid() != nix::unistd::getuid().as_raw() {
                return Err(io::Error::other("belongs to another user"));
            }
            if m.mode() & 0o022 != 0 {
                return Err(io::Error::other(
                    "others may write to it (chmod 700 it, or give --share a path)",
                ));
            }
        }
    }
    if let Some(g) = access.group {
        std::os::unix::fs::chown(dir, None, Some(g.as_raw()))?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// A listening socket and what identifies the file it made (removed on drop only if it is
/// still that file).
pub(crate) struct Bound {
    pub(crate) listener: UnixListener,
    pub(crate) path: PathBuf,
    ino: u64,
}

impl Drop for Bound {
    fn drop(&mut self) {
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.ino() == self.ino) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Listens at `path` (the default when `None`): a new socket, never over a file; a socket left
/// by an ifxtop that is gone (this user's, nobody listening) is replaced.
pub(crate) fn bind(path: Option<&Path>, instance: &str, access: &Access) -> io::Result<Bound> {
    let path = match path {
        Some(p) => p.to_path_buf(),
        None => {
            let p = default_path(instance);
            if let Some(dir) = p.parent() {
                own_dir(dir, access).map_err(|e| with_path(dir, e))?;
            }
            p
        }
    };
    if let Ok(m) = std::fs::symlink_metadata(&path) {
        use std::os::unix::fs::FileTypeExt;
        let stale = m.file_type().is_socket()
            && m.uid() == nix::unistd::getuid().as_raw()
            && UnixStream::connect(&path)
                .is_err_and(|e| e.kind() == io::ErrorKind::ConnectionRefused);
        if !stale {
            return Err(with_path(
                &path,
                io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "already exists (another ifxtop shares there, or not a socket: give another path)",
                ),
            ));
        }
        std::fs::remove_file(&path).map_err(|e| with_path(&path, e))?;
    }
    let listener = UnixListener::bind(&path).map_err(|e| with_path(&path, e))?;
    let ino = std::fs::symlink_metadata(&path)?.ino();
    let bound = Bound {
        listener,
        path: path.clone(),
        ino,
    };
    if let Some(g) = access.group {
        std::os::unix::fs::chown(&path, None, Some(g.as_raw())).map_err(|e| with_path(&path, e))?;
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(access.mode))
        .map_err(|e| with_path(&path, e))?;
    Ok(bound)
}

fn with_path(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// The user at the other end of `stream`, by the kernel's word: their name, else their uid.
pub(crate) fn peer_user(stream: &UnixStream) -> String {
    match nix::sys::socket::getsockopt(stream, nix::sys::socket::sockopt::PeerCredentials) {
        Ok(cred) => {
            let uid = nix::unistd::Uid::from_raw(cred.uid());
            match nix::unistd::User::from_uid(uid) {
                Ok(Some(u)) => u.name,
                _ => format!("uid {uid}"),
            }
        }
        Err(_) => "unknown".to_string(),
    }
}

/// This process's user's name.
pub(crate) fn own_user() -> String {
    let uid = nix::unistd::getuid();
    match nix::unistd::User::from_uid(uid) {
        Ok(Some(u)) => u.name,
        _ => format!("uid {uid}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_socket_is_new_private_and_a_stale_one_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("feed.sock");
        let access = Access::new(None, None).unwrap();
        let b = bind(Some(&path), "x", &access).unwrap();
        let m = std::fs::metadata(&path).unwrap();
        assert_eq!(m.mode() & 0o777, 0o600);
        // A second one at the same path is refused while the first listens.
        let again = bind(Some(&path), "x", &access).err().unwrap();
        assert!(again.to_string().contains("already exists"), "{again}");
        // A socket nobody listens on (a crashed ifxtop's) is replaced.
        let left = b.path.clone();
        let stale = UnixListener::bind(dir.path().join("stale.sock")).unwrap();
        drop(stale);
        let b2 = bind(Some(&dir.path().join("stale.sock")), "x", &access).unwrap();
        drop(b2);
        assert!(!dir.path().join("stale.sock").exists());
        drop(b);
        assert!(!left.exists());
        // Never over a file, never through a link.
        let file = dir.path().join("file");
        std::fs::write(&file, "keep").unwrap();
        assert!(bind(Some(&file), "x", &access).is_err());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
        let link = dir.path().join("link.sock");
        std::os::unix::fs::symlink(dir.path().join("elsewhere.sock"), &link).unwrap();
        assert!(bind(Some(&link), "x", &access).is_err());
        assert!(!dir.path().join("elsewhere.sock").exists());
    }

    #[test]
    fn a_mode_for_others_is_refused() {
        assert!(Access::new(Some(0o666), None).is_err());
        assert_eq!(Access::new(None, Some("0")).unwrap().mode, 0o660);
        assert!(Access::new(None, Some("no-such-group-here")).is_err());
    }

    #[test]
    fn the_default_directory_is_its_own_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("ifxtop");
        let access = Access::new(None, None).unwrap();
        own_dir(&d, &access).unwrap();
        assert_eq!(std::fs::metadata(&d).unwrap().mode() & 0o777, 0o700);
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(own_dir(&d, &access).is_err());
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        assert!(own_dir(&link, &access).is_err());
    }
}
