//! A real `sshd` on a loopback port for the tests: generated host and client keys, a config of
//! its own, fake `onstat` executables printing real fixtures, and an ssh client config naming
//! all of it.

use crate::common::fake_onstat::FakeOnstat;
use crate::common::free_port;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const SSHD: &str = "/usr/sbin/sshd";

/// Whether the tests can run: sshd is installed. Without it, outside CI, they say so and pass;
/// in CI (`CI` set) a missing sshd is a failure.
pub fn available(test: &str) -> bool {
    crate::common::have(SSHD, "openssh-server", test)
        && crate::common::have("ssh", "openssh-client", test)
        && crate::common::have("ssh-keygen", "openssh-client", test)
}

/// A running sshd and everything it and its clients need, in one temporary directory.
pub struct Sshd {
    pub dir: tempfile::TempDir,
    pub port: u16,
    child: Option<Child>,
    /// The remote instance's programs (its `bin` is the remote PATH's first directory).
    pub fake: FakeOnstat,
}

impl Sshd {
    /// Keys, configs and fake onstat, and sshd listening on a free loopback port.
    pub fn start() -> Sshd {
        let dir = tempfile::Builder::new()
            .prefix("ifxtop-sshd-")
            .tempdir()
            .expect("temp dir");
        let d = dir.path();
        // Entered, not listed, by the test users of other login shells (`login_user`): sshd
        // reads their `authorized_keys` as them. The private keys stay 0600.
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o711)).expect("chmod");
        keygen(&d.join("host_key"));
        keygen(&d.join("client_key"));
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).expect("authorize");
        std::fs::set_permissions(
            d.join("authorized_keys"),
            std::fs::Permissions::from_mode(0o644),
        )
        .expect("chmod");
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
                 LogLevel VERBOSE\n\
                 SetEnv HOME={d}/remote-home {MARK}={d}\n",
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
        // The remote sessions' HOME: an empty one, so no startup file of the user running the
        // tests (root's .bashrc may take a quarter of a second) slows every remote command.
        std::fs::create_dir_all(d.join("remote-home")).expect("remote home");
        std::fs::set_permissions(
            d.join("remote-home"),
            std::fs::Permissions::from_mode(0o755),
        )
        .expect("chmod");
        let fake = fake_instance();
        let mut s = Sshd {
            dir,
            port,
            child: None,
            fake,
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
        self.fake.bin.clone()
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

    /// The `user@127.0.0.1:PORT` of a test user (`login_user`).
    pub fn target_as(&self, user: &str) -> String {
        format!("{user}@{}", self.target())
    }

    /// The processes sshd's sessions left running on the host: every one started in a session
    /// of this sshd carries [`MARK`] naming its directory in its environment (`SetEnv`), the
    /// login shell and all it starts; sshd's own processes do not. By pid, from /proc; zombies
    /// are gone for every purpose.
    pub fn on_host(&self) -> Vec<(i32, String)> {
        let needle = format!("{MARK}={}\0", self.path().display());
        let mut found = Vec::new();
        for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            let env = std::fs::read(e.path().join("environ")).unwrap_or_default();
            if !String::from_utf8_lossy(&env).contains(&needle) {
                continue;
            }
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X']));
            if zombie {
                continue;
            }
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            found.push((pid, cmdline));
        }
        found
    }

    /// Waits up to `within` for the sessions to leave nothing on the host; returns what is
    /// left then (and kills it, by pid, so a failing test leaves nothing either).
    pub fn left_on_host(&self, within: Duration) -> Vec<(i32, String)> {
        let until = Instant::now() + within;
        loop {
            let left = self.on_host();
            if left.is_empty() || Instant::now() >= until {
                for (pid, _) in &left {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(*pid),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
                return left;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The variable every process of a session of a test sshd carries: its directory.
const MARK: &str = "IFXTOP_TEST_SSHD";

/// The uid of a user, from `getent passwd`.
pub fn uid_of(name: &str) -> Option<u32> {
    let out = Command::new("getent")
        .args(["passwd", name])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .split(':')
        .nth(2)?
        .parse()
        .ok()
}

/// A user whose login shell is `shell`, for sshd to run sessions under: `ifxtop-t-NAME` (the
/// shell's file name). Made for these tests with `useradd` when it does not exist (no home, a
/// password field of `*`: not locked, no password), its shell set again with `usermod` when
/// another was set; idempotent, so concurrent tests and runs share the same users. `None`, with
/// a message, when the tests run unprivileged or the shell is not installed; in CI that is a
/// failure (`.ci/run` installs ksh and tcsh, and the tests run as root there).
pub fn login_user(shell: &str) -> Option<String> {
    static MAKING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let skip = |why: String| {
        if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
            panic!("{why}");
        }
        eprintln!("SKIPPED a login shell test: {why}; in CI this is a failure");
        None
    };
    if !Path::new(shell).exists() {
        return skip(format!("{shell} is not installed"));
    }
    if !is_root() {
        return skip("making test users needs root".into());
    }
    let base = Path::new(shell).file_name()?.to_string_lossy().into_owned();
    let name = format!("ifxtop-t-{base}");
    let _one = MAKING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let shell_of = |name: &str| -> Option<String> {
        let out = Command::new("getent")
            .args(["passwd", name])
            .output()
            .ok()?;
        let line = String::from_utf8_lossy(&out.stdout).into_owned();
        line.trim_end().rsplit(':').next().map(str::to_string)
    };
    let run = |args: &[&str]| {
        Command::new(args[0])
            .args(&args[1..])
            .stdin(Stdio::null())
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    match shell_of(&name).filter(|s| !s.is_empty()) {
        Some(s) if s == shell => {}
        Some(_) => assert!(
            run(&["usermod", "-s", shell, &name]),
            "usermod -s {shell} {name}"
        ),
        None => {
            let made = run(&[
                "useradd",
                "-M",
                "-d",
                "/nonexistent",
                "-s",
                shell,
                "-p",
                "*",
                &name,
            ]);
            // Another run may have made it meanwhile.
            assert!(
                made || shell_of(&name).as_deref() == Some(shell),
                "useradd {name} with {shell} failed"
            );
        }
    }
    Some(name)
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

/// The host name the fake `uname -n` gives: reports must name the remote host, not this one.
pub const REMOTE_HOST: &str = "db-remote-01";

/// A lock chain: 812 holds, 813 and 815 wait for it, 814 for 813.
pub const U: &str = "Userthreads
address          flags   sessid   user     tty      wait             tout locks nreads   nwrites
4b4ad628         --BP--- 812      appuser  -        0                0    3     120      45
4b4adc40         L-BP--- 813      appuser  -        44a1b000         0    1     10       2
4b4ae258         L--P--- 814      batch    -        44a1b2c8         0    0     5        0
4b4ae870         L--P--- 815      report   -        44a1b000         0    0     7        0
 4 active, 128 total, 12 maximum concurrent
";

const K: &str = "Locks
address          wtlist           owner            lklist           type     tblsnum  rowid    key#/bsiz
44a1a000         0                4b4ad628         0                HDR+IX   100105   0            0
44a1b000         4b4adc40         4b4ad628         44a1a000         HDR+X    100105   68           0
44a1b100         0                4b4ad628         44a1b000         HDR+X    100105   69           0
44a1b2c8         4b4ae258         4b4adc40         0                HDR+X    100106   12           0
 4 active, 20000 total, 16384 hash buckets, 0 lock table overflows
";

/// The remote instance: the shared fake `onstat` of the tests (every polled source answers,
/// grouped options as real onstat prints them) with the lock chain above, `oncheck`,
/// `dbaccess`, and a `uname -n` naming the remote host. onstat also writes the INFORMIXSERVER it
/// was given to `server-seen` beside itself; a server named `offline…` is off-line (exit 255,
/// as onstat does).
fn fake_instance() -> FakeOnstat {
    let mut f = FakeOnstat::new();
    f.answer("-u", &format!("\n{U}"))
        .answer("-k", &format!("\n{K}"))
        .answer_fixture(
            "-X",
            "onstat-X/oninit-onstat-X-two-pools.txt",
            Some("Buffers (Access)"),
        )
        .answer_fixture("-p", "onstat-p/hcl-14.10-adr-0602-doc.txt", Some("Profile"))
        .answer_fixture(
            "-l",
            "onstat-l/hcl-onedb-2.0-adr-0598-doc.txt",
            Some("Physical Logging"),
        )
        .answer_fixture(
            "-s",
            "onstat-s/hcl-14.10-prf-186-doc-lru-bf.txt",
            Some("Latches with lock or userthread set"),
        )
        .answer_fixture(
            "-x",
            "onstat-x-txn/ifxtop-single-line-header-no-rb-time.txt",
            Some("Transactions"),
        )
        .answer_fixture("-g con", "onstat-g-con/oninit-onstat-g-con.txt", None)
        .answer_fixture(
            "-g ath",
            "onstat-g-ath/oninit-onstat-g-ath-truncated.txt",
            None,
        )
        .answer_fixture("-g cpu", "onstat-g-cpu/oninit-onstat-g-cpu-cut.txt", None)
        // The session list (`-g ses` exactly: `-g ses 812` is another answer).
        .answer_fixture("-g ses", "onstat-g-ses/ibm-kc-12.10-adr-0574.txt", None)
        .answer_fixture(
            "-g ntt",
            "onstat-g-ntt/oninit-onstat-g-ntt-truncated.txt",
            None,
        )
        .answer_fixture("-g sql 812", "onstat-g-sql/ifxtop-sql-812.txt", None)
        .answer_fixture(
            "-g glo",
            "onstat-g-glo/hcl-14.10-adr-0533-doc-truncated.txt",
            None,
        )
        .answer_fixture("-g rea", "onstat-g-rea/ifxtop-12.10-cpu-queue.txt", None)
        .answer_fixture(
            "-g lmx",
            "onstat-g-lmx/ifxtop-12.10-x86-three-waiters-no-holder.txt",
            None,
        )
        .answer_fixture(
            "-g wmx",
            "onstat-g-wmx/ifxtop-12.10-x86-three-waiters-no-holder.txt",
            None,
        )
        .answer_fixture("-g seg", "onstat-g-seg/ifxtop-64-bit-locked-vx-m.txt", None)
        .answer_fixture(
            "-D",
            "onstat-D/ifxtop-16-digit-five-spaces-prim.txt",
            Some("Dbspaces"),
        )
        .answer_fixture(
            "-g iof",
            "onstat-g-iof/ifxtop-four-chunks-kaio-temp-file.txt",
            None,
        )
        .answer_fixture(
            "-g tpf",
            "onstat-g-tpf/ifxtop-all-threads-one-fills-the-log.txt",
            None,
        )
        .answer_fixture(
            "-g ckp",
            "onstat-g-ckp/ifxtop-20-checkpoints-5-blocking.txt",
            None,
        );
    f.oncheck_fixture("oncheck-pe/ifxtop-chunks-of-seed-onstat-X.txt");
    f.dbaccess_tables("1048837|stores:'informix'.customer\n1048838|stores:'informix'.orders\n");
    let seen = sh_quote(&f.bin.join("server-seen").display().to_string());
    f.override_call(
        "*",
        &format!(
            "printf '%s' \"$INFORMIXSERVER\" > {seen}; case \"$INFORMIXSERVER\" in offline*) \
             echo; echo \"shared memory not initialized for INFORMIXSERVER '$INFORMIXSERVER'\"; \
             exit 255;; esac"
        ),
    );
    f.install();
    script(
        &f.bin,
        "uname",
        &format!(
            "#!/bin/sh\nif [ \"$1\" = -n ]; then echo {REMOTE_HOST}; else exec /bin/uname \"$@\"; fi\n"
        ),
    );
    f
}

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn script(bin: &Path, name: &str, text: &str) {
    let path = bin.join(name);
    std::fs::write(&path, text).expect("fake program");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The `/tmp/pwned_*` files: a hostile server name that ran would leave one.
pub fn pwned_in_tmp() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/tmp")
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("pwned_"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}
