//! A viewer's way to a shared feed: the one process it runs, `ssh HOST ifxtop attach [SOCKET]`
//! (BatchMode, the user's ssh configuration: the site's keys and audit, no forwarding), or a
//! socket on this host. The process is killed with its group when the viewer lets go.

use crate::source::ssh::{quote_words, SshTarget};
use std::io::{self, Read};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

/// The two directions of a feed, and what keeps them up.
pub struct Transport {
    pub from: Box<dyn Read + Send>,
    pub to: Box<dyn io::Write + Send>,
    pub keep: Box<dyn Send>,
    /// What ssh said on its standard error (the last few KB): why it failed.
    pub said: Arc<Mutex<String>>,
}

/// ssh, killed with its process group when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.0.id()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The feed's path on serve.
pub const FEED_PATH: &str = "/feed";
/// serve's default port (`--web.listen-address`).
const DEFAULT_PORT: u16 = 19088;
/// `https://[USER@]HOST[:PORT][/feed[/INSTANCE]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpTarget {
    pub host: String,
    pub port: u16,
    pub path: String,
    pub user: Option<String>,
}

impl HttpTarget {
    pub fn parse(s: &str) -> Result<HttpTarget, String> {
        let rest = match s.split_once("://") {
            Some(("https", rest)) => rest,
            Some(("http", _)) => {
                return Err(format!(
                    "{s}: the feed is served over TLS only (it holds the server's SQL): https://"
                ))
            }
            _ => return Err(format!("{s}: https://HOST:PORT")),
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let (user, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) if !u.is_empty() => (Some(u.to_string()), h),
            Some(_) => return Err(format!("{s}: an empty user")),
            None => (None, authority),
        };
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (h, after) = v6
                .split_once(']')
                .ok_or_else(|| format!("{s}: an IPv6 address in [ ] without its ]"))?;
            (h, after.strip_prefix(':'))
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (hostport, None),
            }
        };
        let port = match port {
            None => DEFAULT_PORT,
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| format!("{s}: port {p:?} is not a port"))?,
        };
        let name_ok = |c: char| c.is_ascii_alphanumeric() || "-._:".contains(c);
        if host.is_empty() || !host.chars().all(name_ok) {
            return Err(format!("{s}: {host:?} is not a host name or address"));
        }
        let path = if path.is_empty() || path == "/" {
            FEED_PATH.to_string()
        } else {
            path.to_string()
        };
        let path_ok = |c: char| c.is_ascii_alphanumeric() || "/-._~".contains(c);
        if !(path == FEED_PATH || path.starts_with("/feed/")) || !path.chars().all(path_ok) {
            return Err(format!(
                "{s}: the feed's path is {FEED_PATH} (or {FEED_PATH}/INSTANCE), not {path:?}"
            ));
        }
        Ok(HttpTarget {
            host: host.to_string(),
            port,
            path,
            user,
        })
    }

    /// The `Host` header's value.
    pub(crate) fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

impl std::fmt::Display for HttpTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let user = self
            .user
            .as_deref()
            .map(|u| format!("{u}@"))
            .unwrap_or_default();
        write!(f, "https://{user}{}{}", self.authority(), self.path)
    }
}

/// Where a viewer attaches.
#[derive(Debug, Clone, PartialEq)]
pub enum AttachTarget {
    /// A socket on this host.
    Socket(PathBuf),
    /// `ssh HOST ifxtop attach`.
    Ssh(SshTarget),
    /// `ifxtop serve`'s feed over HTTPS (`super::attach_http` opens it).
    Http(HttpTarget),
}

impl AttachTarget {
    /// A URL (`https://`) is serve's feed; a path (it holds a `/`) a socket here; anything
    /// else `[user@]host[:port]` for ssh.
    pub fn parse(s: &str) -> Result<AttachTarget, String> {
        if s.contains("://") {
            HttpTarget::parse(s).map(AttachTarget::Http)
        } else if s.contains('/') {
            Ok(AttachTarget::Socket(PathBuf::from(s)))
        } else {
            SshTarget::parse(s)
                .map(AttachTarget::Ssh)
                .map_err(|e| e.replacen("--ssh", "--attach", 1))
        }
    }
}

impl std::fmt::Display for AttachTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AttachTarget::Socket(p) => write!(f, "{}", p.display()),
            AttachTarget::Ssh(t) => write!(f, "{t}"),
            AttachTarget::Http(t) => write!(f, "{t}"),
        }
    }
}

/// The local argv of `ssh TARGET ifxtop attach [SOCKET]` (`ifxtop` being `remote_ifxtop`).
pub fn ssh_argv(
    target: &SshTarget,
    config: Option<&Path>,
    remote_ifxtop: &str,
    socket: Option<&str>,
) -> Vec<String> {
    let mut v = vec!["ssh".to_string()];
    if let Some(f) = config {
        v.push("-F".into());
        v.push(f.display().to_string());
    }
    for o in [
        "BatchMode=yes",
        "ConnectTimeout=10",
        "ServerAliveInterval=10",
        "ServerAliveCountMax=3",
    ] {
        v.push("-o".into());
        v.push(o.into());
    }
    // No terminal: the feed's bytes come back as they are.
    v.push("-T".into());
    v.extend(target.args());
    let mut remote = vec![remote_ifxtop.to_string(), "attach".to_string()];
    remote.extend(socket.map(String::from));
    v.push(quote_words(&remote));
    v
}

/// Opens the feed at `target` (serve's HTTP feed: `attach_http::open`, with its credentials).
pub fn open(
    target: &AttachTarget,
    config: Option<&Path>,
    remote_ifxtop: &str,
    socket: Option<&str>,
) -> io::Result<Transport> {
    match target {
        AttachTarget::Socket(path) => {
            let s = UnixStream::connect(path)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            Ok(Transport {
                from: Box::new(s.try_clone()?),
                to: Box::new(s),
                keep: Box::new(()),
                said: Arc::default(),
            })
        }
        AttachTarget::Http(t) => Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("{t}: opened with its credentials (attach_http::open)"),
        )),
        AttachTarget::Ssh(t) => {
            let argv = ssh_argv(t, config, remote_ifxtop, socket);
            let mut child = Command::new(&argv[0])
                .args(&argv[1..])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0)
                .spawn()
                .map_err(|e| io::Error::new(e.kind(), format!("ssh: {e}")))?;
            let from = child
                .stdout
                .take()
                .ok_or_else(|| io::Error::other("no stdout"))?;
            let to = child
                .stdin
                .take()
                .ok_or_else(|| io::Error::other("no stdin"))?;
            let said: Arc<Mutex<String>> = Arc::default();
            if let Some(mut err) = child.stderr.take() {
                let said = said.clone();
                std::thread::spawn(move || {
                    let mut buf = [0u8; 1024];
                    while let Ok(n) = err.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        let mut s = said.lock().unwrap_or_else(|p| p.into_inner());
                        s.push_str(&crate::format::printable(&String::from_utf8_lossy(
                            &buf[..n],
                        )));
                        if s.len() > 4096 {
                            let cut = s.len() - 4096;
                            let cut = (cut..s.len()).find(|i| s.is_char_boundary(*i)).unwrap_or(0);
                            s.drain(..cut);
                        }
                    }
                });
            }
            Ok(Transport {
                from: Box::new(from),
                to: Box::new(to),
                keep: Box::new(Killed(child)),
                said,
            })
        }
    }
}
