//! The ssh runner: every request runs on a remote host through the system `ssh` client, over one
//! multiplexed connection, with every word quoted so the remote shell interprets none of it.
//!
//! Why the system client: `~/.ssh/config`, keys, agents and jump hosts work as the DBA expects.
//! One master connection (ControlMaster/ControlPersist, its socket in a private 0700 directory)
//! carries every run; BatchMode keeps ssh from ever prompting inside the TUI. Processes are
//! spawned by the local runner (`LocalRunner::run_command`), so output caps, process groups and
//! kills on timeout and drop are the same as for local commands.
//!
//! The remote command of a run is `env INFORMIXSERVER=… onstat -u` inside a small POSIX-sh
//! wrapper (`wrapped`), which the login shell, whatever it is (sh, dash, bash, ksh93, csh,
//! tcsh), only hands to `/bin/sh` (`login_line`). The wrapper runs the command in a process
//! group of its own and kills that group when ssh is gone (killed at the timeout, or the
//! connection dropped: its heartbeat on standard output fails) or when its own time is up, so
//! nothing of a run outlives it on the host. It frames both output streams between lines
//! holding a random marker, so whatever the remote shell's startup files print (a `.bashrc`
//! greeting) is dropped, and ends standard error with the command's exit status: `ssh` exits 255
//! both when the connection fails and when the remote command does (onstat exits 255 when the
//! server is off-line), and that line tells the two apart. ssh runs with no input (`-n`), so a
//! startup file that reads some does not hold the run up.

use super::local::{Input, LocalRunner};
use super::{BoxFuture, CommandRunner, Cut, Output, Request};
use crate::error::SourceError;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::time::Instant;

/// How long ssh may take to set up a connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The least time a remote run gets: a file read that takes a millisecond locally (2 s allowed)
/// also crosses the network and starts the remote shell.
const MIN_RUN_TIMEOUT: Duration = Duration::from_secs(5);
/// Remote commands open at once over the one connection. sshd refuses more than `MaxSessions`
/// (10 by default) sessions on a connection ("no more sessions"), and ssh then opens a second
/// connection of its own; 8 leaves room for the master's own session and a closing one.
pub const MAX_SESSIONS: usize = 8;
/// How long each of the few runs at start (sqlhosts, services) may take.
const SETUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an idle master connection stays up after the last run (ifxtop closes it on quit).
const CONTROL_PERSIST_SECS: u32 = 60;
/// Keepalives: a master whose peer vanished exits after about 3 × 5 s instead of hanging.
const ALIVE_INTERVAL_SECS: u32 = 5;
const ALIVE_COUNT: u32 = 3;
/// The longest wait between two connection attempts.
const BACKOFF_MAX: Duration = Duration::from_secs(30);
/// Runs timing out in a row (with no success between) before the master is taken for stuck.
const STUCK_AFTER_TIMEOUTS: u32 = 3;
/// How much longer than the run's timeout the remote wrapper lets a command run before it kills
/// it itself: the local side kills ssh first, and its end reaches the host at once; this limit is
/// for a connection that hangs without ending.
const REMOTE_GRACE: Duration = Duration::from_secs(5);

/// A `[user@]host[:port]` to run on, checked so no part of it can reach ssh as an option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshTarget {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
}

impl SshTarget {
    /// Reads `[user@]host[:port]`; an IPv6 address with a port is written `[::1]:2222`.
    pub fn parse(s: &str) -> Result<SshTarget, String> {
        let bad = |why: &str| Err(format!("--ssh '{}': {why}", sanitize(s)));
        if s.is_empty() {
            return bad("empty");
        }
        if s.starts_with('-') {
            return bad("must not start with '-'");
        }
        if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return bad("no spaces or control characters");
        }
        let (user, rest) = match s.rsplit_once('@') {
            Some((u, r)) => (Some(u), r),
            None => (None, s),
        };
        if let Some(u) = user {
            if u.is_empty() {
                return bad("empty user name before '@'");
            }
            if u.starts_with('-') {
                return bad("user name must not start with '-'");
            }
        }
        let (host, port) = if let Some(inner) = rest.strip_prefix('[') {
            let Some((h, after)) = inner.split_once(']') else {
                return bad("missing ']' after an IPv6 address");
            };
            match after {
                "" => (h, None),
                _ => match after.strip_prefix(':') {
                    Some(p) => (h, Some(p)),
                    None => return bad("expected ':PORT' after ']'"),
                },
            }
        } else if rest.matches(':').count() > 1 {
            // A bare IPv6 address: no port (write [addr]:port for one).
            (rest, None)
        } else {
            match rest.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (rest, None),
            }
        };
        if host.is_empty() {
            return bad("empty host");
        }
        if host.starts_with('-') {
            return bad("host must not start with '-'");
        }
        let port = match port {
            None => None,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n >= 1 => Some(n),
                _ => return bad("the port is a number from 1 to 65535"),
            },
        };
        Ok(SshTarget {
            user: user.map(str::to_string),
            host: host.to_string(),
            port,
        })
    }

    /// The destination arguments: `-p PORT`, `-l USER`, then `--` and the host.
    pub(crate) fn args(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(p) = self.port {
            v.push("-p".into());
            v.push(p.to_string());
        }
        if let Some(u) = &self.user {
            v.push("-l".into());
            v.push(u.clone());
        }
        // `--`: whatever the host is, ssh takes it as the destination, never as an option.
        v.push("--".into());
        v.push(self.host.clone());
        v
    }
}

impl std::fmt::Display for SshTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(u) = &self.user {
            write!(f, "{u}@")?;
        }
        match (self.port, self.host.contains(':')) {
            (Some(p), true) => write!(f, "[{}]:{p}", self.host),
            (Some(p), false) => write!(f, "{}:{p}", self.host),
            (None, _) => write!(f, "{}", self.host),
        }
    }
}

/// `NAME=VALUE` for `--ssh-env`: a shell variable name, then any value.
pub fn parse_env_assignment(s: &str) -> Result<(String, String), String> {
    let Some((name, value)) = s.split_once('=') else {
        return Err(format!("'{}': NAME=VALUE", sanitize(s)));
    };
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("'{}': not a variable name", sanitize(name)));
    }
    if value.contains('\0') {
        return Err(format!("{name}: the value holds a NUL"));
    }
    Ok((name.to_string(), value.to_string()))
}

fn sanitize(s: &str) -> String {
    crate::format::printable(s)
}

/// One word for a POSIX shell: always single-quoted, a `'` written as `'\''`. Nothing inside
/// single quotes is special to sh, bash or ksh, so the shell hands the word over as it is.
pub fn quote(word: &str) -> String {
    let mut s = String::with_capacity(word.len() + 2);
    s.push('\'');
    for c in word.chars() {
        if c == '\'' {
            s.push_str("'\\''");
        } else {
            s.push(c);
        }
    }
    s.push('\'');
    s
}

/// Words quoted one by one and joined with blanks: a command line the remote shell splits back
/// into exactly these words.
pub fn quote_words<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A marker no output can guess: framing lines hold it, so a command printing look-alike lines
/// cannot end its own output early or forge an exit status.
fn frame_marker() -> String {
    use std::hash::BuildHasher;
    static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    // Each RandomState is keyed from the OS's randomness (std), so the marker is unpredictable.
    let state = std::collections::hash_map::RandomState::new();
    let a = state.hash_one((n, nanos, std::process::id()));
    let b = std::collections::hash_map::RandomState::new().hash_one((a, n));
    format!("ifxtop-frame-{a:016x}{b:016x}")
}

/// Where the text between the line `marker` and the last `\n` + `marker` (exclusive) lies, and
/// what follows that end marker on its line. Whatever came before the start line (the remote
/// shell's startup files) and after the end line (an exit trap) is dropped.
fn framed(text: &str, marker: &str) -> Option<(Range<usize>, Option<Range<usize>>)> {
    let start = text.find(&format!("{marker}\n"))? + marker.len() + 1;
    let rest = text.get(start..)?;
    match rest.rfind(&format!("\n{marker}")) {
        Some(end) => {
            let tail_at = start + end + 1 + marker.len();
            let tail_len = text[tail_at..].find('\n').unwrap_or(text.len() - tail_at);
            Some((start..start + end, Some(tail_at..tail_at + tail_len)))
        }
        // Cut short (a run that did not end): what came after the start.
        None => Some((start..text.len(), None)),
    }
}

/// `text` cut to `range`, in place.
fn keep(mut text: String, range: Range<usize>) -> String {
    text.truncate(range.end);
    text.drain(..range.start);
    text
}

/// Takes every `pat` out of `text` in one pass, in place: an `oncheck -pe` that runs for
/// minutes carries a heartbeat a second through a hundred MB.
fn remove_all(text: String, pat: &str) -> String {
    let finder = memchr::memmem::Finder::new(pat.as_bytes());
    if pat.is_empty() || finder.find(text.as_bytes()).is_none() {
        return text;
    }
    let mut bytes = text.into_bytes();
    let (mut write, mut read) = (0, 0);
    while let Some(at) = finder.find(&bytes[read..]) {
        let at = read + at;
        bytes.copy_within(read..at, write);
        write += at - read;
        read = at + pat.len();
    }
    let len = bytes.len();
    bytes.copy_within(read..len, write);
    bytes.truncate(write + len - read);
    // Whole ASCII lines came out between characters: still UTF-8.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A run's output without the wrapper's frames and heartbeats: the command's own stdout and
/// stderr and its exit status. What ssh gave (its heartbeats taken out) when standard error
/// carries no end line with a status (the connection failed, or the remote side ran something
/// else than the wrapper: a forced command).
fn unframe(out: Output, marker: &str) -> Result<Output, Output> {
    let out = Output {
        stdout: remove_all(out.stdout, &heartbeat(marker)),
        ..out
    };
    let code = match framed(&out.stderr, marker) {
        Some((body, Some(tail))) => match out.stderr[tail].trim().parse::<i32>() {
            Ok(code) => (code, body),
            Err(_) => return Err(out),
        },
        _ => return Err(out),
    };
    let (code, err_body) = code;
    let stdout = match framed(&out.stdout, marker) {
        Some((body, _)) => keep(out.stdout, body),
        None => out.stdout,
    };
    Ok(Output {
        exit: Some(code),
        stdout,
        stderr: keep(out.stderr, err_body),
    })
}

/// What ssh said when it failed: its last line (the verdict after any warning banner).
fn ssh_message(stderr: &str) -> String {
    let line = stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("connection failed (exit code 255)");
    let line = line.strip_prefix("ssh: ").unwrap_or(line);
    sanitize(line)
}

/// Where ssh may see the connection, and how many attempts failed in a row.
#[derive(Debug, Default)]
struct Link {
    /// The master answered the last time anything ran.
    up: bool,
    failures: u32,
    /// Timeouts in a row, with no success between.
    timeouts: u32,
    /// No new attempt before this.
    retry_at: Option<Instant>,
    last_error: String,
}

/// The private directory holding the master's socket: 0700, removed when the runner goes.
#[derive(Debug)]
struct ControlDir {
    dir: tempfile::TempDir,
}

impl ControlDir {
    fn create() -> std::io::Result<ControlDir> {
        use std::os::unix::fs::PermissionsExt;
        // A socket path has at most 107 bytes: the directory, '/', %C (40) and the suffix ssh
        // adds while it sets the socket up (17).
        let fits = |p: &Path| {
            p.to_str().is_some_and(|s| {
                s.len() <= 44 && !s.chars().any(|c| c.is_whitespace() || "\"'%".contains(c))
            })
        };
        let base = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute() && p.is_dir() && fits(p))
            .or_else(|| Some(std::env::temp_dir()).filter(|p| fits(p)))
            .unwrap_or_else(|| PathBuf::from("/tmp"));
        let dir = tempfile::Builder::new()
            .prefix("ifxtop-ssh-")
            .tempdir_in(base)?;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))?;
        Ok(ControlDir { dir })
    }

    fn control_path(&self) -> String {
        format!("{}/%C", self.dir.path().display())
    }
}

/// Runs every request on a remote host through `ssh`.
#[derive(Debug)]
pub struct SshRunner {
    target: SshTarget,
    informixserver: Option<String>,
    /// Directories put in front of the remote PATH (where onstat is when the remote shell's
    /// PATH lacks `$INFORMIXDIR/bin`).
    remote_path: Option<String>,
    /// Variables set remotely for every command (`INFORMIXDIR`, `INFORMIXSQLHOSTS`, ...).
    remote_env: Vec<(String, String)>,
    /// `ssh -F FILE`.
    config: Option<PathBuf>,
    /// The program run as ssh (tests put a fake one on PATH).
    program: String,
    /// Spawns ssh: the local runner's execution, without INFORMIXSERVER of its own.
    local: LocalRunner,
    control: ControlDir,
    /// Files read on this machine, not remotely (`--extents FILE`).
    local_files: Vec<PathBuf>,
    link: std::sync::Mutex<Link>,
    /// One connection attempt at a time: the first run after a drop becomes the new master,
    /// the others wait for it instead of opening connections of their own.
    connecting: tokio::sync::Mutex<()>,
    /// At most [`MAX_SESSIONS`] remote commands at once; the others wait their turn.
    sessions: tokio::sync::Semaphore,
    /// ssh's `ConnectTimeout` ([`CONNECT_TIMEOUT`]).
    connect_timeout: Duration,
}

impl SshRunner {
    /// A runner for `target`, watching `informixserver` (set remotely for every command).
    pub fn new(target: SshTarget, informixserver: Option<String>) -> std::io::Result<SshRunner> {
        Ok(SshRunner {
            target,
            informixserver,
            remote_path: None,
            remote_env: Vec::new(),
            config: None,
            program: "ssh".into(),
            local: LocalRunner::new(None),
            control: ControlDir::create()?,
            local_files: Vec::new(),
            link: std::sync::Mutex::new(Link::default()),
            connecting: tokio::sync::Mutex::new(()),
            sessions: tokio::sync::Semaphore::new(MAX_SESSIONS),
            connect_timeout: CONNECT_TIMEOUT,
        })
    }

    /// Another `ConnectTimeout` than [`CONNECT_TIMEOUT`] (whole seconds, at least one); the
    /// first run, which opens the connection, gets half as long again to log in and start.
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Duration::from_secs(timeout.as_secs().max(1));
        self
    }

    /// How long the first run (`uname -n`) may take: the connection, the login, the command.
    fn probe_timeout(&self) -> Duration {
        self.connect_timeout + self.connect_timeout / 2
    }

    /// `ssh -F FILE`: another client configuration than `~/.ssh/config`.
    pub fn with_config(mut self, file: Option<PathBuf>) -> Self {
        self.config = file;
        self
    }

    /// Puts these directories (`:`-separated) in front of the remote PATH.
    pub fn with_remote_path(mut self, dirs: Option<String>) -> Self {
        self.remote_path = dirs.filter(|d| !d.is_empty());
        self
    }

    /// Sets these variables remotely for every command (after INFORMIXSERVER).
    pub fn with_remote_env(mut self, vars: Vec<(String, String)>) -> Self {
        self.remote_env = vars;
        self
    }

    /// Looks `ssh` up in this PATH on this machine (tests).
    pub fn with_local_path(mut self, path: impl Into<std::ffi::OsString>) -> Self {
        self.local = std::mem::take(&mut self.local).with_path(path);
        self
    }

    /// Reads this file on this machine rather than on the remote host.
    pub fn with_local_file(mut self, path: PathBuf) -> Self {
        self.local_files.push(path);
        self
    }

    pub fn target(&self) -> &SshTarget {
        &self.target
    }

    /// The directory holding the master's socket.
    pub fn control_dir(&self) -> &Path {
        self.control.dir.path()
    }

    /// The ssh options every run shares (and `-O` control commands too: the socket's name is
    /// derived from the destination, so they must name the same one).
    fn ssh_options(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(f) = &self.config {
            v.push("-F".into());
            v.push(f.display().to_string());
        }
        for o in [
            "BatchMode=yes".to_string(),
            format!("ConnectTimeout={}", self.connect_timeout.as_secs()),
            "ControlMaster=auto".into(),
            format!("ControlPersist={CONTROL_PERSIST_SECS}"),
            format!("ControlPath={}", self.control.control_path()),
            format!("ServerAliveInterval={ALIVE_INTERVAL_SECS}"),
            format!("ServerAliveCountMax={ALIVE_COUNT}"),
        ] {
            v.push("-o".into());
            v.push(o);
        }
        v
    }

    /// The local argv running `remote` (one shell command line) on the host.
    pub(crate) fn ssh_argv(&self, remote: &str) -> Vec<String> {
        let mut v = vec![self.program.clone()];
        v.extend(self.ssh_options());
        // No terminal: output comes back byte for byte, and nothing waits for a key. No input
        // either (`-n`): a remote startup file that reads some gets the end of input at once.
        v.push("-n".into());
        v.push("-T".into());
        v.extend(self.target.args());
        v.push(remote.to_string());
        v
    }

    /// `argv` as a remote command line: `env [INFORMIXSERVER=…] [PATH=…:"$PATH"] argv…`, every
    /// value single-quoted.
    pub(crate) fn remote_line(&self, argv: &[String], informixserver: bool) -> String {
        let mut line = String::from("env");
        if informixserver {
            if let Some(s) = &self.informixserver {
                line.push(' ');
                line.push_str(&quote(&format!("INFORMIXSERVER={s}")));
            }
            for (name, value) in &self.remote_env {
                line.push(' ');
                line.push_str(&quote(&format!("{name}={value}")));
            }
        }
        if let Some(dirs) = &self.remote_path {
            line.push(' ');
            line.push_str(&quote(&format!("PATH={dirs}:")));
            // The remote PATH itself, expanded by the remote shell: ifxtop's own text.
            line.push_str("\"$PATH\"");
        }
        line.push(' ');
        line.push_str(&quote_words(argv));
        line
    }

    /// Runs one remote command line; a connection that fails is an error, anything the remote
    /// command did is its output.
    async fn exec(
        &self,
        remote: &str,
        stdin: Option<&str>,
        timeout: Duration,
        cap: u64,
    ) -> Result<Output, SourceError> {
        self.exec_keeping(remote, stdin, timeout, cap)
            .await
            .map_err(|c| c.error)
    }

    /// `exec`, keeping what the command had printed on its standard output when it was killed
    /// at its timeout.
    async fn exec_keeping(
        &self,
        remote: &str,
        stdin: Option<&str>,
        timeout: Duration,
        cap: u64,
    ) -> Result<Output, Cut> {
        let timeout = timeout.max(MIN_RUN_TIMEOUT);
        let started = tokio::time::Instant::now();
        // Waiting for a session counts against the run's time, like the run itself.
        let _session = match tokio::time::timeout(timeout, self.sessions.acquire()).await {
            Ok(Ok(permit)) => permit,
            Ok(Err(_)) => return Err(Cut::bare(SourceError::Other("ssh runner closed".into()))),
            Err(_) => return Err(Cut::bare(SourceError::Timeout { after: timeout })),
        };
        let timeout = timeout
            .saturating_sub(started.elapsed())
            .max(Duration::from_secs(1));
        self.ensure_connected(timeout).await.map_err(Cut::bare)?;
        self.exec_now(remote, stdin, timeout, cap).await
    }

    /// Runs one remote command line inside the wrapper, over the connection (opening it when
    /// there is none), and reads the result.
    async fn exec_now(
        &self,
        remote: &str,
        stdin: Option<&str>,
        timeout: Duration,
        cap: u64,
    ) -> Result<Output, Cut> {
        let marker = frame_marker();
        let argv = self.ssh_argv(&login_line(&wrapped(remote, stdin, timeout, &marker)));
        // Nothing on ssh's input (`-n` too): what the command reads travels in the script.
        let out = self
            .local
            .run_command_keeping(&argv, Input::Null, timeout, cap)
            .await;
        self.settle(out, &marker).await
    }

    /// Reads the end of one run: a success resets the link, a failed connection backs off. A
    /// run killed at its timeout keeps what the command printed before (its frame and
    /// heartbeats taken off).
    async fn settle(&self, out: Result<Output, Cut>, marker: &str) -> Result<Output, Cut> {
        let out = match out {
            Ok(o) => Ok(o),
            Err(Cut {
                error: SourceError::Timeout { after },
                stdout,
            }) => {
                self.mark_timeout().await;
                let stdout = remove_all(stdout, &heartbeat(marker));
                let stdout = match framed(&stdout, marker) {
                    Some((body, _)) => keep(stdout, body),
                    // Nothing of the command's: the login shell's noise at most.
                    None => String::new(),
                };
                return Err(Cut {
                    error: SourceError::Timeout { after },
                    stdout,
                });
            }
            Err(c) => Err(c.error),
        };
        self.settle_plain(out, marker).await.map_err(Cut::bare)
    }

    async fn settle_plain(
        &self,
        out: Result<Output, SourceError>,
        marker: &str,
    ) -> Result<Output, SourceError> {
        match out {
            Ok(o) => match unframe(o, marker) {
                Ok(framed) => {
                    self.mark_up();
                    Ok(framed)
                }
                Err(o) if o.exit == Some(255) || o.exit.is_none() => {
                    Err(self.mark_down(ssh_message(&o.stderr)).await)
                }
                // The remote shell ran something else than the line (a forced command):
                // its exit code is all there is.
                Err(o) => {
                    self.mark_up();
                    Ok(o)
                }
            },
            Err(SourceError::Timeout { after }) => {
                self.mark_timeout().await;
                Err(SourceError::Timeout { after })
            }
            Err(e) => Err(e),
        }
    }

    fn with_link<T>(&self, f: impl FnOnce(&mut Link) -> T) -> T {
        // A panic while holding the lock leaves plain counters behind: use them.
        let mut guard = match self.link.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }

    fn mark_up(&self) {
        self.with_link(|l| {
            l.up = true;
            l.failures = 0;
            l.timeouts = 0;
            l.retry_at = None;
        });
    }

    /// Records a failed connection: no attempt before the backoff has passed; from the second
    /// failure in a row, the master is closed so the next attempt starts a new one.
    async fn mark_down(&self, message: String) -> SourceError {
        let failures = self.with_link(|l| {
            l.up = false;
            l.failures = l.failures.saturating_add(1);
            l.retry_at = Some(Instant::now() + backoff(l.failures));
            l.last_error = message.clone();
            l.failures
        });
        if failures >= 2 {
            self.close_master_async().await;
        }
        SourceError::Ssh { message }
    }

    async fn mark_timeout(&self) {
        let stuck = self.with_link(|l| {
            l.timeouts = l.timeouts.saturating_add(1);
            if l.timeouts >= STUCK_AFTER_TIMEOUTS {
                l.timeouts = 0;
                l.up = false;
                true
            } else {
                false
            }
        });
        if stuck {
            self.close_master_async().await;
        }
    }

    /// Before a run: inside a backoff, the last failure; with no live master, one connection
    /// attempt (the others wait for it), with the connection's own timeout rather than the
    /// request's.
    async fn ensure_connected(&self, timeout: Duration) -> Result<(), SourceError> {
        self.check_backoff()?;
        if self.with_link(|l| l.up) {
            return Ok(());
        }
        // Waiting for another run's attempt counts against this run's own timeout.
        let Ok(_one) = tokio::time::timeout(timeout, self.connecting.lock()).await else {
            return Err(SourceError::Ssh {
                message: format!("still connecting to {}", self.target),
            });
        };
        if self.with_link(|l| l.up) {
            return Ok(());
        }
        self.check_backoff()?;
        self.probe().await.map(|_| ())
    }

    fn check_backoff(&self) -> Result<(), SourceError> {
        let now = Instant::now();
        self.with_link(|l| match l.retry_at {
            Some(at) if at > now => Err(SourceError::Ssh {
                message: format!(
                    "{} (next attempt in {}s)",
                    l.last_error,
                    (at - now).as_secs_f64().ceil()
                ),
            }),
            _ => Ok(()),
        })
    }

    /// One run of `uname -n` (the remote host name): it becomes the master connection.
    async fn probe(&self) -> Result<String, SourceError> {
        let line = self.remote_line(&["uname".to_string(), "-n".to_string()], false);
        let limit = self.probe_timeout();
        let out = self
            .exec_now(&line, None, limit, self.local.cap())
            .await
            .map_err(|c| c.error);
        let out = match out {
            Err(SourceError::Timeout { .. }) => {
                let why = self.why_no_answer(limit).await;
                Err(self.mark_down(why).await)
            }
            other => other,
        }?;
        Ok(out.stdout.trim().to_string())
    }

    /// Why the first run did not answer within `limit`: no connection, or a connection whose
    /// login shell never started the command (a startup file that waits: for input it no
    /// longer gets, for a terminal, a network share). The master answers `ssh -O check` once
    /// logged in: ControlPersist puts it in the background before the session's command runs.
    async fn why_no_answer(&self, limit: Duration) -> String {
        let secs = limit.as_secs();
        let mut argv = vec![self.program.clone()];
        argv.extend(self.ssh_options());
        argv.extend(["-O".to_string(), "check".to_string()]);
        argv.extend(self.target.args());
        let check = self
            .local
            .run_command(&argv, Input::Null, Duration::from_secs(2))
            .await;
        if check.is_ok_and(|o| o.exit == Some(0)) {
            format!(
                "logged in to {}, but the remote login shell did not start the command within \
                 {secs}s: does a startup file of that account (~/.bashrc, ~/.cshrc) wait for \
                 something?",
                self.target
            )
        } else {
            format!("no connection after {secs}s")
        }
    }

    /// The remote host's name (`uname -n`); connects when not connected yet.
    pub async fn remote_hostname(&self) -> Result<String, SourceError> {
        self.check_backoff()?;
        let _one = self.connecting.lock().await;
        let name = self.probe().await?;
        Ok(if name.is_empty() {
            self.target.host.clone()
        } else {
            sanitize(&name)
        })
    }

    /// The instance's listener ports from the remote sqlhosts file (`$INFORMIXSQLHOSTS`, else
    /// `$INFORMIXDIR/etc/sqlhosts` of the remote environment) and `/etc/services`; none when
    /// they cannot be read.
    pub async fn remote_ports(&self, server: &str) -> Vec<u16> {
        let script = "cat -- \"${INFORMIXSQLHOSTS:-$INFORMIXDIR/etc/sqlhosts}\"";
        let argv = ["sh".to_string(), "-c".to_string(), script.to_string()];
        let sqlhosts = match self
            .run(&Request::Command(argv.to_vec()), SETUP_TIMEOUT)
            .await
        {
            Ok(o) if o.exit == Some(0) => o.stdout,
            _ => return Vec::new(),
        };
        let services = self
            .run(&Request::ReadFile("/etc/services".into()), SETUP_TIMEOUT)
            .await
            .map(|o| super::sqlhosts::parse_services(&o.stdout))
            .unwrap_or_default();
        let entries = super::sqlhosts::parse_sqlhosts(&sqlhosts);
        super::sqlhosts::listener_ports(&entries, &[server], &services)
    }

    /// Connects before anything is collected, from outside the async runtime (setup): the
    /// remote host's name and, when `ports_of` names a server, its listener ports.
    pub fn connect_blocking(
        &self,
        ports_of: Option<&str>,
    ) -> Result<(String, Vec<u16>), SourceError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| SourceError::Other(format!("ssh: {e}")))?;
        rt.block_on(async {
            let host = self.remote_hostname().await?;
            let ports = match ports_of {
                Some(server) => self.remote_ports(server).await,
                None => Vec::new(),
            };
            Ok((host, ports))
        })
    }

    /// `ssh -O exit` for the master: the next run starts a new connection.
    fn control_exit_argv(&self) -> Vec<String> {
        let mut v = vec![self.program.clone()];
        v.extend(self.ssh_options());
        v.extend(["-O".to_string(), "exit".to_string()]);
        v.extend(self.target.args());
        v
    }

    /// Closes a master taken for stuck, on the async runtime.
    async fn close_master_async(&self) {
        let _ = self
            .local
            .run_command(
                &self.control_exit_argv(),
                Input::Null,
                Duration::from_secs(2),
            )
            .await;
    }

    /// Closes the master connection (`ssh -O exit`), waiting at most two seconds: on quit,
    /// where no runtime may be left to run it.
    pub fn close_master(&self) {
        let argv = self.control_exit_argv();
        let Some((program, args)) = argv.split_first() else {
            return;
        };
        let mut cmd = std::process::Command::new(program);
        if let Some(p) = &self.local.path {
            cmd.env("PATH", p);
        }
        cmd.args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let Ok(mut child) = cmd.spawn() else { return };
        let until = std::time::Instant::now() + Duration::from_secs(2);
        while std::time::Instant::now() < until {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
    }

    async fn read_file(
        &self,
        path: &Path,
        timeout: Duration,
        cap: u64,
    ) -> Result<Output, SourceError> {
        let p = remote_path_text(path)?;
        let line = self.remote_line(&["cat".into(), "--".into(), p], false);
        let out = self.exec(&line, None, timeout, cap).await?;
        match out.exit {
            Some(0) => Ok(Output::ok(out.stdout)),
            _ => Err(io_error(path, &out)),
        }
    }

    async fn list_dir(&self, path: &Path, timeout: Duration) -> Result<Output, SourceError> {
        let p = remote_path_text(path)?;
        // -1: one name a line; -A: dot files too, as read_dir lists them; C collation.
        let line = self.remote_line(
            &["LC_ALL=C".into(), "ls".into(), "-1A".into(), "--".into(), p],
            false,
        );
        let out = self.exec(&line, None, timeout, self.local.cap()).await?;
        match out.exit {
            Some(0) => {
                let mut names: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty()).collect();
                names.sort_unstable();
                Ok(Output::ok(names.join("\n")))
            }
            _ => Err(io_error(path, &out)),
        }
    }

    async fn command(
        &self,
        argv: &[String],
        stdin: Option<&str>,
        timeout: Duration,
        cap: u64,
    ) -> Result<Output, Cut> {
        let Some(program) = argv.first() else {
            return Err(Cut::bare(SourceError::Other("empty command".into())));
        };
        if argv.iter().any(|w| w.contains('\0')) || program.contains('=') {
            return Err(Cut::bare(SourceError::Other(format!(
                "{}: not a command ifxtop runs remotely",
                sanitize(program)
            ))));
        }
        let line = self.remote_line(argv, true);
        let out = self.exec_keeping(&line, stdin, timeout, cap).await?;
        // env's own verdict: the program is not on the remote PATH.
        if out.exit == Some(127) && out.stdout.is_empty() {
            return Err(Cut::bare(SourceError::NotFound {
                program: format!("{program} (on {})", self.target.host),
            }));
        }
        Ok(out)
    }
}

/// The remote script around one command line (`line`, its words already quoted), in plain
/// POSIX sh (dash, bash, ksh93 are tested as the `/bin/sh` that runs it; [`login_line`] makes
/// every login shell hand it to `/bin/sh`):
///
/// - the start of each stream is a line holding `marker`, so what the shell's startup files
///   printed before it is known for noise; the end of standard output is another, the end of
///   standard error one with the command's exit status;
/// - the wrapper's own stderr (job notices, `set -m` refused without a terminal) goes nowhere;
///   the command's goes to the real one (fd 4);
/// - the command runs in a process group of its own: through job control (`set -m`: bash, ksh),
///   else `setsid` where there is one (Linux: dash has no job control without a terminal), else
///   as a plain child, then killed alone;
/// - a watcher, a shell of its own started the same way (so its `sleep` is in its group, whatever
///   the shell does with job control in subshells: ksh93 keeps it on and puts a subshell's
///   `sleep` in a group of its own, which was left behind), writes a heartbeat line on standard
///   output every second after the first, and kills the command's group when the write fails
///   (sshd stopped reading the stream: ssh was killed at the timeout, or the connection
///   dropped) or past the run's time and [`REMOTE_GRACE`]; ifxtop takes the heartbeats out
///   ([`unframe`]). A run of less than a second has none. Standard input cannot tell it (it is
///   `/dev/null`: ssh runs with `-n`, so a startup file that reads input reads nothing instead
///   of blocking, and sshd keeps a session's input open after its client is gone);
/// - when the command ends, the watcher's group and what the command left in its own go;
/// - the command's input, if any, is a here-document ending at a line holding the marker.
fn wrapped(line: &str, stdin: Option<&str>, timeout: Duration, marker: &str) -> String {
    let limit = (timeout + REMOTE_GRACE).as_secs().max(1);
    let mut s = format!(
        "m='{marker}'\n\
         printf '%s\\n' \"$m\"; printf '%s\\n' \"$m\" >&2\n\
         exec 4>&2 2>/dev/null\n\
         set -m; g=\n\
         case $- in *m*) ;; *) command -v setsid >/dev/null && g=setsid;; esac\n\
         $g {line} 2>&4 4>&-"
    );
    match stdin {
        Some(text) => {
            s.push_str(&format!(" <<'{marker}-input' &\n{text}"));
            if !text.is_empty() && !text.ends_with('\n') {
                s.push('\n');
            }
            s.push_str(&format!("{marker}-input\n"));
        }
        None => s.push_str(" </dev/null &\n"),
    }
    // The watcher writes with `echo`: ksh93's `printf` says nothing of a failed write.
    s.push_str(&format!(
        "c=$!\n\
         $g \"$0\" -c 'trap \"\" PIPE; n=1; while sleep 1 && [ $n -lt \"$2\" ] && echo \"$1+\"; do \
         n=$((n+1)); done; kill -9 -\"$3\" \"$3\"' w \"$m\" {limit} \"$c\" </dev/null 4>&- &\n\
         w=$!\n\
         wait \"$c\"; s=$?\n\
         kill -9 -\"$w\" \"$w\" -\"$c\"\n\
         printf '\\n%s\\n' \"$m\"; printf '\\n%s %s\\n' \"$m\" \"$s\" >&4\n\
         exit \"$s\"\n"
    ));
    s
}

/// The heartbeat line the wrapper's watcher writes on standard output.
fn heartbeat(marker: &str) -> String {
    format!("{marker}+\n")
}

/// The command line ssh gives the remote login shell for `script`: `exec /bin/sh -c '…'`, read
/// alike by the POSIX shells (sh, dash, bash, ksh) and by csh and tcsh. So the login shell only
/// starts `/bin/sh`, and the script never meets csh's syntax nor a ksh93 that runs its last
/// command by `exec`. Inside the quotes csh takes `!` for history and refuses a newline, so
/// the script travels as a `printf` format with those (and `'`, `\`, `%`, every control
/// character) written as escapes: `eval "$(printf '…')"` gives it back to `/bin/sh` byte for
/// byte.
fn login_line(script: &str) -> String {
    let mut format = String::with_capacity(script.len() + script.len() / 8);
    for c in script.chars() {
        match c {
            '\\' => format.push_str("\\\\"),
            '%' => format.push_str("%%"),
            '\'' | '!' | '\u{7f}' => format.push_str(&format!("\\{:03o}", c as u32)),
            c if (c as u32) < 0x20 => format.push_str(&format!("\\{:03o}", c as u32)),
            c => format.push(c),
        }
    }
    format!(
        "exec /bin/sh -c {}",
        quote(&format!("eval \"$(printf '{format}')\""))
    )
}

fn backoff(failures: u32) -> Duration {
    let secs = 1u64 << failures.saturating_sub(1).min(6);
    Duration::from_secs(secs).min(BACKOFF_MAX)
}

fn remote_path_text(path: &Path) -> Result<String, SourceError> {
    match path.to_str() {
        Some(s) if !s.contains('\0') => Ok(s.to_string()),
        _ => Err(SourceError::Io {
            path: path.display().to_string(),
            reason: "not a UTF-8 path".into(),
        }),
    }
}

fn io_error(path: &Path, out: &Output) -> SourceError {
    let reason = out
        .stderr
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(sanitize)
        .unwrap_or_else(|| format!("exit code {}", out.exit.unwrap_or(-1)));
    SourceError::Io {
        path: path.display().to_string(),
        reason,
    }
}

impl SshRunner {
    /// Caps what a remote command may print (and what a local file may hold) at `mb` MB.
    pub fn with_max_output_mb(mut self, mb: u64) -> Self {
        self.local = std::mem::take(&mut self.local).with_max_output_mb(mb);
        self
    }

    async fn run_capped(
        &self,
        request: &Request,
        timeout: Duration,
        cap: u64,
        extent_report: bool,
    ) -> Result<Output, Cut> {
        match request {
            Request::ReadFile(path) if self.local_files.contains(path) => if extent_report {
                self.local.run_extent_report(request, timeout).await
            } else {
                self.local.run(request, timeout).await
            }
            .map_err(Cut::bare),
            Request::Command(argv) => self.command(argv, None, timeout, cap).await,
            Request::CommandInput { argv, stdin } => {
                self.command(argv, Some(stdin), timeout, cap).await
            }
            Request::ReadFile(path) => self.read_file(path, timeout, cap).await.map_err(Cut::bare),
            Request::ListDir(path) => self.list_dir(path, timeout).await.map_err(Cut::bare),
        }
    }
}

impl CommandRunner for SshRunner {
    fn runs_processes(&self) -> bool {
        true
    }

    fn run<'a>(
        &'a self,
        request: &'a Request,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<Output, SourceError>> {
        Box::pin(async move {
            self.run_capped(request, timeout, self.local.cap(), false)
                .await
                .map_err(|c| c.error)
        })
    }

    fn run_extent_report<'a>(
        &'a self,
        request: &'a Request,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<Output, SourceError>> {
        Box::pin(async move {
            self.run_capped(request, timeout, self.local.extent_cap(), true)
                .await
                .map_err(|c| c.error)
        })
    }

    fn run_keeping<'a>(
        &'a self,
        request: &'a Request,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<Output, Cut>> {
        Box::pin(self.run_capped(request, timeout, self.local.cap(), false))
    }
}

impl Drop for SshRunner {
    /// Quitting closes the master: nothing of ifxtop stays connected to the server.
    fn drop(&mut self) {
        self.close_master();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_read_and_checked() {
        let t = SshTarget::parse("informix@db01:2222").unwrap();
        assert_eq!(t.user.as_deref(), Some("informix"));
        assert_eq!(t.host, "db01");
        assert_eq!(t.port, Some(2222));
        assert_eq!(t.to_string(), "informix@db01:2222");
        let t = SshTarget::parse("db01").unwrap();
        assert_eq!((t.user, t.port), (None, None));
        let t = SshTarget::parse("[::1]:22").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", Some(22)));
        assert_eq!(t.to_string(), "[::1]:22");
        let t = SshTarget::parse("fe80::1").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("fe80::1", None));
        for bad in [
            "",
            "-oProxyCommand=touch /tmp/x",
            "-p22",
            "db01 -p 22",
            "db\n01",
            "db01\t",
            "@db01",
            "-x@db01",
            "u@-db01",
            "u@",
            "db01:0",
            "db01:65536",
            "db01:",
            "db01:ssh",
            "[::1",
            "[::1]x",
            ":22",
        ] {
            assert!(SshTarget::parse(bad).is_err(), "{bad:?} accepted");
        }
        let e = SshTarget::parse("a\u{1b}[2Jb c").unwrap_err();
        assert!(!e.contains('\u{1b}'), "{e}");
    }

    #[test]
    fn remote_variables_are_names_then_any_value() {
        assert_eq!(
            parse_env_assignment("INFORMIXDIR=/opt/ifx dir").unwrap(),
            ("INFORMIXDIR".to_string(), "/opt/ifx dir".to_string())
        );
        assert_eq!(parse_env_assignment("A_1=").unwrap().1, "");
        for bad in ["X", "=v", "1A=v", "A-B=v", "$(id)=v", "A B=v"] {
            assert!(parse_env_assignment(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_destination_comes_after_a_double_dash() {
        let t = SshTarget::parse("dba@db01:2200").unwrap();
        assert_eq!(t.args(), ["-p", "2200", "-l", "dba", "--", "db01"]);
    }

    #[test]
    fn quoting_wraps_every_word_in_single_quotes() {
        assert_eq!(quote(""), "''");
        assert_eq!(quote("onstat"), "'onstat'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote_words(&["a b", "$x"]), "'a b' '$x'");
    }

    #[test]
    fn frames_drop_what_the_shell_printed_around_the_output() {
        let m = frame_marker();
        assert_ne!(m, frame_marker(), "a marker of its own for each run");
        let out = Output {
            exit: Some(0),
            stdout: format!("Welcome to db01\nno newline{m}\nline 1\nlast\n{m}\nbye\n"),
            stderr: format!("noise\n{m}\noops\n\n{m} 255\nbye\n"),
        };
        assert_eq!(
            unframe(out, &m),
            Ok(Output {
                exit: Some(255),
                stdout: "line 1\nlast".into(),
                stderr: "oops\n".into(),
            })
        );
        // Heartbeats anywhere in standard output, the first line's end and the end line's
        // start too, come out; a line of the command's that looks alike stays.
        let hb = heartbeat(&m);
        let out = Output {
            exit: Some(0),
            stdout: format!("{m}\n{hb}ab{hb}c\n{hb}{hb}{m}+x\n{hb}\n{m}\n"),
            stderr: format!("{m}\n\n{m} 0\n"),
        };
        let back = unframe(out, &m).expect("framed");
        assert_eq!(back.stdout, format!("abc\n{m}+x\n"));
        assert_eq!(remove_all(format!("{hb}é{hb}"), &hb), "é");
        assert_eq!(remove_all("é".into(), &hb), "é");
        // Empty outputs stay empty.
        let out = Output {
            exit: Some(0),
            stdout: format!("{m}\n\n{m}\n"),
            stderr: format!("{m}\n\n{m} 0\n"),
        };
        let back = unframe(out, &m).expect("framed");
        assert_eq!((back.stdout.as_str(), back.stderr.as_str()), ("", ""));
        // No end line with a status: not the wrapper's output (a failed connection).
        for stderr in [
            "Connection refused\n".to_string(),
            format!("{m}\ncut short"),
            format!("{m}\n\n{m} x\n"),
            format!("{}\n\n{m} 0\n", "ifxtop-frame-0000"),
        ] {
            let out = Output {
                exit: Some(255),
                stdout: String::new(),
                stderr,
            };
            assert_eq!(unframe(out.clone(), &m), Err(out));
        }
    }

    /// Whether `pid` runs (a zombie does not).
    fn alive(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|st| {
            st.rfind(')')
                .and_then(|at| st[at + 1..].split_whitespace().next())
                .is_some_and(|state| state != "Z")
        })
    }

    /// Runs `script` with `shell -c`, no input; returns its output.
    fn run_under(shell: &str, script: &str) -> Output {
        let out = std::process::Command::new(shell)
            .arg("-c")
            .arg(script)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("runs");
        Output {
            exit: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// The shells here of those given (a machine without ksh93 or tcsh checks the others).
    fn shells<'a>(all: &[&'a str]) -> Vec<&'a str> {
        all.iter()
            .copied()
            .filter(|s| Path::new(s).exists())
            .collect()
    }

    /// Words and an input that sh, csh and the encoding would love to interpret.
    const HOSTILE: [&str; 10] = [
        "a!b !! !$",
        "it's",
        "x\ny",
        "$HOME `id` $(id)",
        "\\n\\",
        "%d %% %s",
        "é 日本",
        "\t\r\u{7f}",
        "",
        "-n",
    ];

    /// The wrapper under each shell that may be `/bin/sh` (dash has no job control without a
    /// terminal and takes the `setsid` way; bash and ksh93 take `set -m`): the output comes
    /// back framed, the heartbeats taken out, and when ssh goes (the streams' readers close)
    /// the command, its children and the watcher are killed.
    #[test]
    fn the_wrapper_frames_and_kills_its_group_under_each_shell() {
        // One thread a shell: each waits out a heartbeat.
        let all = shells(&["/bin/sh", "/bin/dash", "/bin/bash", "/bin/ksh93"]);
        let threads: Vec<_> = all
            .into_iter()
            .map(|shell| std::thread::spawn(move || wrapper_under(shell)))
            .collect();
        for t in threads {
            if let Err(panic) = t.join() {
                std::panic::resume_unwind(panic);
            }
        }
    }

    fn wrapper_under(shell: &str) {
        use std::process::{Command, Stdio};
        let m = frame_marker();
        let line = quote_words(&["sh", "-c", "cat; echo err >&2; exit 3"]);
        let out = run_under(
            shell,
            &wrapped(&line, Some("it's\nfed"), Duration::from_secs(5), &m),
        );
        let back = unframe(out.clone(), &m).unwrap_or_else(|_| panic!("{shell}: {out:?}"));
        assert_eq!(back.exit, Some(3), "{shell}: {out:?}");
        assert_eq!(back.stdout, "it's\nfed\n", "{shell}");
        assert_eq!(back.stderr, "err\n", "{shell}");

        // A command that outlives a heartbeat: its output, cut by the heartbeat, comes back
        // whole.
        let slow = "printf 'a'; printf 'b' >&2; sleep 1.8; printf 'c' >&2; echo d";
        let line = quote_words(&["sh", "-c", slow]);
        let out = run_under(shell, &wrapped(&line, None, Duration::from_secs(5), &m));
        assert!(
            out.stdout.contains(&format!("a{}", heartbeat(&m))),
            "{shell}: {out:?}"
        );
        let back = unframe(out.clone(), &m).unwrap_or_else(|_| panic!("{shell}: {out:?}"));
        assert_eq!((back.stdout.as_str(), back.stderr.as_str()), ("ad\n", "bc"));

        let dir = tempfile::tempdir().expect("dir");
        let pids = dir.path().join("pids");
        let hang = format!(
            "sleep 600 </dev/null >/dev/null 2>&1 & echo \"$$ $!\" > '{}'; wait",
            pids.display()
        );
        let line = quote_words(&["sh", "-c", &hang]);
        let mut child = Command::new(shell)
            .arg("-c")
            .arg(wrapped(&line, None, Duration::from_secs(60), &m))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starts");
        let until = std::time::Instant::now() + Duration::from_secs(10);
        let recorded: Vec<i32> = loop {
            let text = std::fs::read_to_string(&pids).unwrap_or_default();
            let v: Vec<i32> = text
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect();
            if v.len() == 2 {
                break v;
            }
            assert!(std::time::Instant::now() < until, "{shell}: never started");
            std::thread::sleep(Duration::from_millis(20));
        };
        // ssh goes: sshd closes the wrapper's streams.
        drop(child.stdout.take());
        drop(child.stderr.take());
        let status = child.wait().expect("the wrapper ends");
        let until = std::time::Instant::now() + Duration::from_secs(5);
        while recorded.iter().any(|&p| alive(p)) && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        let left: Vec<i32> = recorded.iter().copied().filter(|&p| alive(p)).collect();
        for &p in &left {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(p),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        assert!(left.is_empty(), "{shell}: {left:?} left running ({status})");
    }

    /// What ssh gives the login shell reaches `/bin/sh` as it is, whatever the login shell:
    /// csh and tcsh (which would take `!` for history and refuse a newline inside quotes) as
    /// well as the POSIX ones. Any words and any input come back exact.
    #[test]
    fn every_login_shell_hands_the_wrapper_to_sh_unchanged() {
        let mut argv = vec!["printf", "%s|"];
        argv.extend(HOSTILE);
        let line = quote_words(&argv);
        let input = HOSTILE.join("\n");
        for shell in shells(&[
            "/bin/sh",
            "/bin/dash",
            "/bin/bash",
            "/bin/ksh93",
            "/bin/tcsh",
            "/bin/csh",
        ]) {
            let m = frame_marker();
            let script = wrapped(&line, None, Duration::from_secs(5), &m);
            let out = run_under(shell, &login_line(&script));
            let back = unframe(out.clone(), &m).unwrap_or_else(|_| panic!("{shell}: {out:?}"));
            assert_eq!(back.exit, Some(0), "{shell}: {out:?}");
            let want: String = HOSTILE.iter().map(|w| format!("{w}|")).collect();
            assert_eq!(back.stdout, want, "{shell}");
            let script = wrapped("'cat'", Some(&input), Duration::from_secs(5), &m);
            let out = run_under(shell, &login_line(&script));
            let back = unframe(out.clone(), &m).unwrap_or_else(|_| panic!("{shell}: {out:?}"));
            assert_eq!(back.stdout, format!("{input}\n"), "{shell}");
        }
    }

    #[test]
    fn the_login_line_has_nothing_csh_reads_in_quotes() {
        let m = frame_marker();
        let line = login_line(&wrapped(
            &quote_words(&HOSTILE),
            Some("a\nb!"),
            Duration::from_secs(5),
            &m,
        ));
        assert!(line.starts_with("exec /bin/sh -c 'eval "), "{line}");
        assert!(!line.contains(['!', '\n', '\r']), "{line}");
    }

    #[test]
    fn ssh_failures_say_what_ssh_said_last() {
        assert_eq!(
            ssh_message("ssh: connect to host 127.0.0.1 port 9: Connection refused\r\n"),
            "connect to host 127.0.0.1 port 9: Connection refused"
        );
        assert_eq!(
            ssh_message("@@@@\nWARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!\nHost key verification failed.\n"),
            "Host key verification failed."
        );
        assert_eq!(ssh_message(""), "connection failed (exit code 255)");
    }

    #[test]
    fn backoff_doubles_up_to_a_limit() {
        let s: Vec<u64> = (1..=8).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(s, [1, 2, 4, 8, 16, 30, 30, 30]);
    }

    #[test]
    fn the_control_directory_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let r = SshRunner::new(SshTarget::parse("db01").unwrap(), None).unwrap();
        let dir = r.control_dir().to_path_buf();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let argv = r.ssh_argv("true");
        let cp = argv.iter().find(|a| a.starts_with("ControlPath=")).unwrap();
        assert!(
            cp.starts_with(&format!("ControlPath={}/", dir.display())),
            "{cp}"
        );
        assert!(argv.contains(&"BatchMode=yes".to_string()));
        assert!(argv.contains(&"ControlMaster=auto".to_string()));
        drop(r);
        assert!(!dir.exists(), "control directory left behind");
    }
}
