//! A real `sshd` on a loopback port for the tests: generated host and client keys, a config of
//! its own, fake `onstat` executables printing real fixtures, and an ssh client config naming
//! all of it.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const SSHD: &str = "/usr/sbin/sshd";

/// Whether the tests can run: sshd is installed. Without it, outside CI, they say so and pass;
/// in CI (`CI` set) a missing sshd is a failure.
pub fn available(test: &str) -> bool {
    if Path::new(SSHD).exists() {
        return true;
    }
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("{SSHD} is missing: .ci/run installs openssh-server");
    }
    eprintln!(
        "SKIPPED {test}: {SSHD} not found (apt-get install openssh-server openssh-client); \
         in CI this is a failure"
    );
    false
}

/// A running sshd and everything it and its clients need, in one temporary directory.
pub struct Sshd {
    pub dir: tempfile::TempDir,
    pub port: u16,
    child: Option<Child>,
}

impl Sshd {
    /// Keys, configs and fake onstat, and sshd listening on a free loopback port.
    pub fn start() -> Sshd {
        let dir = tempfile::Builder::new()
            .prefix("ifxtop-sshd-")
            .tempdir()
            .expect("temp dir");
        let d = dir.path();
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        keygen(&d.join("host_key"));
        keygen(&d.join("client_key"));
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).expect("authorize");
        let port = free_port();
        let host_pub = std::fs::read_to_string(d.join("host_key.pub")).expect("host key");
        let mut fields = host_pub.split_whitespace();
        let (kind, key) = (fields.next().expect("type"), fields.next().expect("key"));
        std::fs::write(
            d.join("known_hosts"),
            format!("[127.0.0.1]:{port} {kind} {key}\n"),
        )
        .expect("known_hosts");
        std::fs::write(
            d.join("sshd_config"),
            format!(
                "Port {port}\n\
                 ListenAddress 127.0.0.1\n\
                 HostKey {d}/host_key\n\
                 PidFile {d}/sshd.pid\n\
                 AuthorizedKeysFile {d}/authorized_keys\n\
                 UsePAM no\n\
                 StrictModes no\n\
                 PubkeyAuthentication yes\n\
                 PasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\n\
                 PermitRootLogin prohibit-password\n\
                 PrintMotd no\n\
                 LogLevel VERBOSE\n",
                d = d.display()
            ),
        )
        .expect("sshd_config");
        std::fs::write(
            d.join("ssh_config"),
            format!(
                "Host *\n\
                 \x20 IdentityFile {d}/client_key\n\
                 \x20 IdentitiesOnly yes\n\
                 \x20 UserKnownHostsFile {d}/known_hosts\n\
                 \x20 GlobalKnownHostsFile /dev/null\n\
                 \x20 StrictHostKeyChecking yes\n\
                 \x20 PasswordAuthentication no\n\
                 \x20 KbdInteractiveAuthentication no\n",
                d = d.display()
            ),
        )
        .expect("ssh_config");
        fake_onstat(&d.join("bin"));
        let mut s = Sshd {
            dir,
            port,
            child: None,
        };
        s.restart();
        s
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn client_config(&self) -> PathBuf {
        self.path().join("ssh_config")
    }

    /// Where the fake onstat is: the runner's remote PATH.
    pub fn bin(&self) -> PathBuf {
        self.path().join("bin")
    }

    /// `127.0.0.1:PORT`, as `--ssh` takes it.
    pub fn target(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Starts sshd (again) on the same port and waits until it accepts connections.
    pub fn restart(&mut self) {
        if is_root() {
            // As root, sshd needs its privilege-separation directory (the Debian service makes
            // it at boot; a container has none).
            let _ = std::fs::create_dir_all("/run/sshd");
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.path().join("sshd.log"))
            .expect("sshd log");
        use std::os::unix::process::CommandExt;
        let child = Command::new(SSHD)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(self.path().join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            // A group of its own: killing it drops every connection, not only the listener.
            .process_group(0)
            .spawn()
            .expect("start sshd");
        self.child = Some(child);
        let until = Instant::now() + Duration::from_secs(15);
        loop {
            if self.log().contains("Server listening on") {
                return;
            }
            if let Some(c) = self.child.as_mut() {
                if let Ok(Some(status)) = c.try_wait() {
                    panic!("sshd exited ({status}):\n{}", self.log());
                }
            }
            assert!(
                Instant::now() < until,
                "sshd did not start:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills sshd and every connection it serves: each connection's sshd starts a session of
    /// its own (setsid), so they are found as the listener's descendants.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let listener = c.id() as i32;
            let mut doomed = descendants(listener);
            doomed.push(listener);
            for pid in doomed {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            let _ = c.wait();
        }
        // Its session processes may take a moment to go.
        std::thread::sleep(Duration::from_millis(100));
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.path().join("sshd.log")).unwrap_or_default()
    }

    /// How many connections sshd let in so far.
    pub fn logins(&self) -> usize {
        self.log().matches("Accepted publickey").count()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Every process below `root` in the process tree (from /proc/*/stat's parent ids).
fn descendants(root: i32) -> Vec<i32> {
    let parents: Vec<(i32, i32)> = std::fs::read_dir("/proc")
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
                .filter_map(|pid| {
                    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                    // The parent is the second field after the parenthesised name.
                    let rest = &stat[stat.rfind(')')? + 1..];
                    let ppid = rest.split_whitespace().nth(1)?.parse().ok()?;
                    Some((pid, ppid))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let p = found[i];
        found.extend(parents.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    found.remove(0);
    found
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    // /proc/self belongs to the process's effective user.
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

fn keygen(path: &Path) {
    let st = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "ifxtop-test", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .status()
        .expect("ssh-keygen (openssh-client)");
    assert!(st.success(), "ssh-keygen failed");
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    l.local_addr().expect("address").port()
}

/// `onstat` printing the real fixtures, with the server mode as its exit code; it writes the
/// INFORMIXSERVER it was given next to itself (`server-seen`) before anything else.
fn fake_onstat(bin: &Path) {
    std::fs::create_dir_all(bin).expect("bin dir");
    let fx = |rel: &str| {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(rel);
        let quoted = p.display().to_string().replace('\'', "'\\''");
        format!("'{quoted}'")
    };
    let script = format!(
        r#"#!/bin/sh
here=$(dirname "$0")
printf '%s' "$INFORMIXSERVER" > "$here/server-seen"
case "$INFORMIXSERVER" in
  offline*) echo; echo "shared memory not initialized for INFORMIXSERVER '$INFORMIXSERVER'"; exit 255;;
esac
case "$*" in
  "-u") cat {u};;
  "-g con") cat {con};;
  "-X") cat {x};;
  "-g ath") cat {ath};;
  "-g ntt") cat {ntt};;
  "-k") cat {k};;
  *) echo "onstat: no fixture for '$*'" >&2; exit 1;;
esac
exit 5
"#,
        u = fx("onstat-u/oninit-onstat-u.txt"),
        con = fx("onstat-g-con/oninit-onstat-g-con.txt"),
        x = fx("onstat-X/oninit-onstat-X-two-pools.txt"),
        ath = fx("onstat-g-ath/oninit-onstat-g-ath-truncated.txt"),
        ntt = fx("onstat-g-ntt/oninit-onstat-g-ntt-truncated.txt"),
        k = fx("onstat-k/ibm-kc-12.10-adref-0597.txt"),
    );
    let path = bin.join("onstat");
    std::fs::write(&path, script).expect("fake onstat");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}
