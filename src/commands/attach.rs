//! `ifxtop attach [SOCKET]`: joins a shared feed on this host and copies it to standard output,
//! and standard input to it, so `ssh db01 ifxtop attach` carries the feed over a plain ssh
//! session (no forwarding, no port): that is what `ifxtop --attach db01` runs.

use crate::collect::wire::{self, ViewerMsg};
use crate::instance::share::socket;
use std::io::{IsTerminal, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `ifxtop attach`.
pub fn run_cli(socket: Option<&Path>) -> ExitCode {
    match run(socket) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ifxtop attach: {e}");
            ExitCode::from(1)
        }
    }
}

/// The shared feeds this user may join on this host: the default directories' sockets.
pub fn shared_sockets() -> Vec<PathBuf> {
    let mut dirs = vec![socket::default_dir()];
    if let Ok(rd) = std::fs::read_dir("/tmp") {
        let mut tmp: Vec<PathBuf> = rd
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("ifxtop-"))
            .map(|e| e.path())
            .collect();
        tmp.sort();
        dirs.extend(tmp);
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for d in dirs {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut socks: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                use std::os::unix::fs::FileTypeExt;
                p.extension().is_some_and(|x| x == "sock")
                    && std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_socket())
            })
            .collect();
        socks.sort();
        for s in socks {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out
}

/// Which socket to join: the one named, else the one shared feed found.
fn which(socket: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(s) = socket {
        return Ok(s.to_path_buf());
    }
    let found: Vec<PathBuf> = shared_sockets()
        .into_iter()
        .filter(|p| UnixStream::connect(p).is_ok())
        .collect();
    match found.len() {
        1 => Ok(found[0].clone()),
        0 => Err(format!(
            "no shared feed found (in {} or /tmp/ifxtop-*): start one with `ifxtop --share` or \
             `ifxtop serve --share`, or name its socket",
            socket::default_dir().display()
        )),
        _ => Err(format!(
            "several shared feeds: name one of {}",
            found
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

fn run(socket: Option<&Path>) -> Result<(), String> {
    if std::io::stdout().is_terminal() {
        return Err(
            "the feed is compressed, not for a terminal: `ifxtop --attach HOST` shows it \
             (it runs `ssh HOST ifxtop attach`)"
                .into(),
        );
    }
    let path = which(socket)?;
    let stream = UnixStream::connect(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut to_feed = stream.try_clone().map_err(|e| e.to_string())?;
    // Where the viewer is, as sshd says: the presence list shows it.
    if let Some(from) = std::env::var("SSH_CLIENT")
        .ok()
        .and_then(|c| c.split_whitespace().next().map(String::from))
    {
        let _ = to_feed.write_all(&wire::line(&ViewerMsg::Hello { host: Some(from) }));
    }
    std::thread::Builder::new()
        .name("attach-in".into())
        .spawn(move || {
            // What the viewer sends goes on as it is: the collector reads it, line by line, and
            // refuses what is not one of its messages.
            let _ = std::io::copy(&mut std::io::stdin().lock(), &mut to_feed);
            let _ = to_feed.shutdown(std::net::Shutdown::Write);
        })
        .map_err(|e| e.to_string())?;
    let mut from_feed = stream;
    let mut out = std::io::stdout().lock();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from_feed.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        // The viewer went (ssh closed): nothing to say, it is gone.
        if out.write_all(&buf[..n]).and_then(|()| out.flush()).is_err() {
            return Ok(());
        }
    }
}
