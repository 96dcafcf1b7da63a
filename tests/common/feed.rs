//! Watch together in tests: serve's web configuration for the HTTP feed (TLS and basic auth)
//! and a reader of a feed's lines as they come.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

pub const USER: &str = "dba";
pub const PASSWORD: &str = "correct horse";

/// A web configuration with TLS (serve's certificate of `pki`) and one basic-auth user, in
/// `dir`.
pub fn web_config(dir: &Path, pki: &super::pki::Pki) -> PathBuf {
    let hash = bcrypt::hash(PASSWORD, 4).expect("bcrypt");
    let p = dir.join("web.yml");
    std::fs::write(
        &p,
        format!(
            "tls_server_config:\n  cert_file: {}\n  key_file: {}\nbasic_auth_users:\n  {USER}: '{hash}'\n",
            pki.server_cert.display(),
            pki.server_key.display(),
        ),
    )
    .expect("write");
    p
}

/// `ifxtop serve` on the demo's lock chain (its second 280), its feed shared on the socket
/// `sock`, its output dropped.
pub fn serve_sharing(sock: &Path) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args([
            "serve",
            "--demo",
            "--demo-at",
            "280",
            "--listen",
            "127.0.0.1:0",
        ])
        .arg("--share")
        .arg(sock)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("serve")
}

/// The feed's lines (decompressed) read so far, on a thread of their own, and when each came.
#[derive(Clone, Default)]
pub struct Lines(pub Arc<Mutex<Vec<(SystemTime, String)>>>);

impl Lines {
    pub fn read(mut from: Box<dyn Read + Send>) -> Lines {
        let lines = Lines::default();
        let out = lines.clone();
        std::thread::spawn(move || {
            let Ok(d) = zstd::stream::read::Decoder::new(&mut from) else {
                return;
            };
            let mut r = std::io::BufReader::new(d);
            let mut line = String::new();
            while std::io::BufRead::read_line(&mut r, &mut line).is_ok_and(|n| n > 0) {
                out.0
                    .lock()
                    .expect("lines")
                    .push((SystemTime::now(), line.trim_end().to_string()));
                line.clear();
            }
        });
        lines
    }

    pub fn has(&self, s: &str) -> bool {
        self.0
            .lock()
            .expect("lines")
            .iter()
            .any(|(_, l)| l.contains(s))
    }

    pub fn any(&self, f: impl Fn(&str) -> bool) -> bool {
        self.0.lock().expect("lines").iter().any(|(_, l)| f(l))
    }

    pub fn all(&self) -> Vec<String> {
        self.0
            .lock()
            .expect("lines")
            .iter()
            .map(|(_, l)| l.clone())
            .collect()
    }
}

/// Waits (at most a minute) for `f`.
pub fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < end, "never: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

impl Lines {
    /// When the first line holding `s` came.
    pub fn when(&self, s: &str) -> Option<SystemTime> {
        self.0
            .lock()
            .expect("lines")
            .iter()
            .find(|(_, l)| l.contains(s))
            .map(|(t, _)| *t)
    }
}
