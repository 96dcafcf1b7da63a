//! The local runner: runs onstat/oncheck/netstat on this machine and reads /proc and /sys.

use super::budget::{self, Reservation};
use super::{
    BoxFuture, CommandRunner, Cut, Output, Request, DEFAULT_MAX_OUTPUT_MB, EXTENT_OUTPUT_FACTOR,
};
use crate::error::SourceError;
use crate::files::MB;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// This machine's host name (reports and recordings name the host they describe).
pub fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
}

/// Runs commands with `INFORMIXSERVER` set to the watched instance.
///
/// Every command runs in a process group of its own, killed whole when the run ends — done,
/// timed out, or dropped on quit — so a wrapper's hung grandchildren (`sudo -u informix onstat`,
/// a site script) never outlive it. What a command prints (standard output and error together)
/// and what a file holds is capped: past the cap the command is killed and the run fails.
#[derive(Debug, Clone)]
pub struct LocalRunner {
    pub(crate) informixserver: Option<String>,
    /// A PATH for the commands (tests put fake onstat executables first); the process's own
    /// PATH when `None`.
    pub(crate) path: Option<std::ffi::OsString>,
    /// The output cap in MB (the extent map's report gets `EXTENT_OUTPUT_FACTOR` times this).
    pub(crate) max_output_mb: u64,
    /// No run waits longer than this, whatever it is allowed (tests: a hang costs a second, not
    /// onstat's ten).
    pub(crate) max_timeout: Option<Duration>,
}

impl Default for LocalRunner {
    fn default() -> Self {
        LocalRunner {
            informixserver: None,
            path: None,
            max_output_mb: DEFAULT_MAX_OUTPUT_MB,
            max_timeout: None,
        }
    }
}

/// How much a pipe read asks for at a time.
const CHUNK: usize = 64 * 1024;

/// Why reading a command's pipes stopped early.
enum PipeEnd {
    Io(std::io::Error),
    /// Past the cap.
    Exceeded,
    /// Past the process's one budget for outputs being read (`budget.rs`).
    OverBudget,
}

/// What a command reads on its standard input.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Input<'a> {
    /// Nothing (`/dev/null`).
    Null,
    /// This text, then the end of input.
    Text(&'a str),
}

/// The process group of one command (its own: `process_group(0)`). Dropped, it kills what is
/// left in the group.
struct Group(Option<nix::unistd::Pid>);

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            // ESRCH (nothing left) is the usual answer and not an error.
            let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// Reads a pipe to its end into `buf`, counting what it read in `used` (shared by stdout and
/// stderr); stops as soon as `used` passes `cap`. The buffer grows by doubling but never past
/// what the cap or the budget allows; each growth is first reserved from the process's one budget
/// (`budget.rs`), in `held`, which comes back at the end and is held until the run is done.
async fn read_pipe<R: tokio::io::AsyncRead + Unpin>(
    pipe: Option<R>,
    used: &AtomicU64,
    cap: u64,
    mut held: Reservation,
    buf: &mut Vec<u8>,
) -> Result<Reservation, PipeEnd> {
    use tokio::io::AsyncReadExt;
    let Some(mut pipe) = pipe else {
        return Ok(held);
    };
    let most = usize::try_from(cap)
        .unwrap_or(usize::MAX)
        .saturating_add(CHUNK);
    loop {
        if buf.capacity() - buf.len() < CHUNK {
            // Twice the capacity, or what the budget has left when less (one more chunk at
            // least): a report can fill the budget, not just the last doubling below it.
            let (len, had) = (buf.len(), buf.capacity());
            let want = had
                .saturating_mul(2)
                .min(most)
                .max(len.saturating_add(CHUNK));
            let least = len.saturating_add(CHUNK) - had;
            let Some(took) = held.grow_between(least as u64, (want - had) as u64) else {
                return Err(PipeEnd::OverBudget);
            };
            buf.reserve_exact(had + took as usize - len);
        }
        let n = pipe.read_buf(buf).await.map_err(PipeEnd::Io)?;
        if n == 0 {
            return Ok(held);
        }
        let n = n as u64;
        if used.fetch_add(n, Ordering::Relaxed) + n > cap {
            return Err(PipeEnd::Exceeded);
        }
    }
}

impl LocalRunner {
    pub fn new(informixserver: Option<String>) -> Self {
        LocalRunner {
            informixserver,
            ..LocalRunner::default()
        }
    }

    /// Runs commands with this PATH (the program is looked up in it too).
    pub fn with_path(mut self, path: impl Into<std::ffi::OsString>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// Caps what a command may print, and a file read, at `mb` MB (at least 1); the process's
    /// budget for outputs being read is at least twice that (`budget.rs`).
    pub fn with_max_output_mb(mut self, mb: u64) -> Self {
        self.max_output_mb = mb.max(1);
        budget::raise_to(self.cap().saturating_mul(2));
        self
    }

    /// Waits at most `limit` for any run, whatever its own timeout (tests).
    pub fn with_max_timeout(mut self, limit: Duration) -> Self {
        self.max_timeout = Some(limit);
        self
    }

    /// The cap of an ordinary run, in bytes.
    pub(crate) fn cap(&self) -> u64 {
        self.max_output_mb.saturating_mul(MB)
    }

    /// The cap of the extent map's report, in bytes.
    pub(crate) fn extent_cap(&self) -> u64 {
        self.cap().saturating_mul(EXTENT_OUTPUT_FACTOR)
    }

    /// Runs a command with the runner's own cap.
    pub(crate) async fn run_command(
        &self,
        argv: &[String],
        stdin: Input<'_>,
        timeout: Duration,
    ) -> Result<Output, SourceError> {
        self.run_command_capped(argv, stdin, timeout, self.cap())
            .await
    }

    /// Runs a command in a process group of its own, feeding it `stdin`, reading at most `cap`
    /// bytes of output, within `timeout`.
    pub(crate) async fn run_command_capped(
        &self,
        argv: &[String],
        stdin: Input<'_>,
        timeout: Duration,
        cap: u64,
    ) -> Result<Output, SourceError> {
        self.run_command_keeping(argv, stdin, timeout, cap)
            .await
            .map_err(|c| c.error)
    }

    /// `run_command_capped`, keeping what the command had printed on its standard output when
    /// it is killed at its timeout.
    pub(crate) async fn run_command_keeping(
        &self,
        argv: &[String],
        stdin: Input<'_>,
        timeout: Duration,
        cap: u64,
    ) -> Result<Output, Cut> {
        let timeout = self.max_timeout.map_or(timeout, |m| timeout.min(m));
        let Some((program, args)) = argv.split_first() else {
            return Err(Cut::bare(SourceError::Other("empty command".into())));
        };
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args)
            .stdin(match stdin {
                Input::Null => Stdio::null(),
                Input::Text(_) => Stdio::piped(),
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // A group of its own, killed whole when the run ends (`Group`); nothing typed at
            // the terminal reaches it.
            .process_group(0)
            // Dropping the future (timeout, quit) kills the child: never leave onstat behind.
            .kill_on_drop(true);
        if let Some(server) = &self.informixserver {
            cmd.env("INFORMIXSERVER", server);
        }
        if let Some(path) = &self.path {
            // std looks the program up in the child's PATH when it is set here.
            cmd.env("PATH", path);
        }
        let mut child = cmd.spawn().map_err(|e| {
            Cut::bare(if e.kind() == std::io::ErrorKind::NotFound {
                SourceError::NotFound {
                    program: program.clone(),
                }
            } else {
                SourceError::Spawn {
                    program: program.clone(),
                    reason: e.to_string(),
                }
            })
        })?;
        super::cost::started();
        // Declared after `child`, so dropped before it: the group is killed while the child is
        // at worst a zombie, its pid (the group's id) still taken.
        let _group = Group(
            child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .map(nix::unistd::Pid::from_raw),
        );
        let used = AtomicU64::new(0);
        // Every run shares the process's budget; the extent map's report (the larger cap) leaves
        // the polls their room in it (`budget.rs`).
        let report = cap > self.cap();
        let held = || {
            if report {
                Reservation::extent_report()
            } else {
                Reservation::poll()
            }
        };
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let input = match stdin {
            Input::Text(text) => child.stdin.take().map(|pipe| (text, pipe)),
            Input::Null => None,
        };
        // Read into buffers that outlive the reading: what came before a timeout is kept.
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let work = async {
            let feed = async {
                if let Some((text, mut pipe)) = input {
                    use tokio::io::AsyncWriteExt;
                    // A program that exits without reading its input is not an error here:
                    // its exit code and output tell what happened.
                    let _ = pipe.write_all(text.as_bytes()).await;
                }
                Ok(())
            };
            let (_, out_held, err_held) = tokio::try_join!(
                feed,
                read_pipe(stdout, &used, cap, held(), &mut out),
                read_pipe(stderr, &used, cap, held(), &mut err)
            )?;
            let status = child.wait().await.map_err(PipeEnd::Io)?;
            super::cost::reaped();
            Ok::<_, PipeEnd>((status, out_held, err_held))
        };
        let error = match tokio::time::timeout(timeout, work).await {
            // What was read goes back to the caller; its reservation went with the reading.
            Err(_) => {
                return Err(Cut {
                    error: SourceError::Timeout { after: timeout },
                    stdout: lossy(out),
                })
            }
            Ok(Err(PipeEnd::Exceeded)) => SourceError::OutputTooLarge {
                limit_mb: cap.div_ceil(MB),
            },
            Ok(Err(PipeEnd::OverBudget)) => SourceError::MemoryBudget {
                budget_mb: budget::limit().div_ceil(MB),
            },
            Ok(Err(PipeEnd::Io(e))) => SourceError::Spawn {
                program: program.clone(),
                reason: e.to_string(),
            },
            // The reservations go back once the text is made (dropped at the end of the arm).
            Ok(Ok((status, _out_held, _err_held))) => {
                return Ok(Output {
                    exit: status.code(),
                    stdout: lossy(out),
                    stderr: lossy(err),
                })
            }
        };
        Err(Cut::bare(error))
    }

    /// Reads a regular file, at most `cap` bytes, off the async workers. A FIFO, a device or a
    /// directory is refused without blocking; a read that hangs (a dead NFS server) times out
    /// here, and its thread never holds up the exit (the runtimes shut down without waiting).
    /// What the file holds is taken from the process's one budget before it is read (a
    /// captured `oncheck -pe` of hundreds of MB as much as a command's output).
    async fn read_file(
        &self,
        path: &std::path::Path,
        timeout: Duration,
        cap: u64,
    ) -> Result<Output, SourceError> {
        let owned = path.to_path_buf();
        let report = cap > self.cap();
        let read = tokio::task::spawn_blocking(move || {
            let over = || SourceError::MemoryBudget {
                budget_mb: budget::limit().div_ceil(MB),
            };
            // What the file says it holds is taken first; /proc and /sys files say 0 (they are
            // small), and a file that grew since is counted once read.
            let len = std::fs::metadata(&owned).map(|m| m.len()).unwrap_or(0);
            let mut held = if report {
                Reservation::extent_report()
            } else {
                Reservation::poll()
            };
            if len <= cap && !held.grow(len) {
                return Ok(Err(over()));
            }
            crate::files::read_capped(&owned, cap).map(|bytes| {
                let more = (bytes.len() as u64).saturating_sub(len);
                if more > 0 && !held.grow(more) {
                    return Err(over());
                }
                Ok((bytes, held))
            })
        });
        match tokio::time::timeout(timeout, read).await {
            Err(_) => Err(SourceError::Timeout { after: timeout }),
            Ok(Err(e)) => Err(SourceError::Other(format!(
                "reading {}: {e}",
                path.display()
            ))),
            Ok(Ok(Err(e))) => Err(SourceError::Io {
                path: path.display().to_string(),
                reason: e.to_string(),
            }),
            Ok(Ok(Ok(Err(e)))) => Err(e),
            // The reservation goes back once the text is made.
            Ok(Ok(Ok(Ok((bytes, _held))))) => Ok(Output::ok(lossy(bytes))),
        }
    }

    async fn run_capped(
        &self,
        request: &Request,
        timeout: Duration,
        cap: u64,
    ) -> Result<Output, SourceError> {
        self.run_keeping_capped(request, timeout, cap)
            .await
            .map_err(|c| c.error)
    }

    async fn run_keeping_capped(
        &self,
        request: &Request,
        timeout: Duration,
        cap: u64,
    ) -> Result<Output, Cut> {
        match request {
            Request::Command(argv) => {
                self.run_command_keeping(argv, Input::Null, timeout, cap)
                    .await
            }
            Request::CommandInput { argv, stdin } => {
                self.run_command_keeping(argv, Input::Text(stdin), timeout, cap)
                    .await
            }
            _ => self
                .run_file(request, timeout, cap)
                .await
                .map_err(Cut::bare),
        }
    }

    async fn run_file(
        &self,
        request: &Request,
        timeout: Duration,
        cap: u64,
    ) -> Result<Output, SourceError> {
        let timeout = self.max_timeout.map_or(timeout, |m| timeout.min(m));
        match request {
            Request::Command(_) | Request::CommandInput { .. } => {
                Err(SourceError::Other("a command is not a file".into()))
            }
            Request::ReadFile(path) => self.read_file(path, timeout, cap).await,
            Request::ListDir(path) => {
                let list = async {
                    let mut names = Vec::new();
                    let mut rd = tokio::fs::read_dir(path).await?;
                    while let Some(entry) = rd.next_entry().await? {
                        names.push(entry.file_name().to_string_lossy().into_owned());
                    }
                    names.sort();
                    Ok::<_, std::io::Error>(names)
                };
                match tokio::time::timeout(timeout, list).await {
                    Err(_) => Err(SourceError::Timeout { after: timeout }),
                    Ok(Err(e)) => Err(SourceError::Io {
                        path: path.display().to_string(),
                        reason: e.to_string(),
                    }),
                    Ok(Ok(names)) => Ok(Output::ok(names.join("\n"))),
                }
            }
        }
    }
}

/// Command output in a legacy code set must not fail the whole sample.
fn lossy(bytes: Vec<u8>) -> String {
    crate::files::lossy(bytes)
}

impl CommandRunner for LocalRunner {
    fn runs_processes(&self) -> bool {
        true
    }

    fn run<'a>(
        &'a self,
        request: &'a Request,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<Output, SourceError>> {
        Box::pin(self.run_capped(request, timeout, self.cap()))
    }

    fn run_extent_report<'a>(
        &'a self,
        request: &'a Request,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<Output, SourceError>> {
        Box::pin(self.run_capped(request, timeout, self.extent_cap()))
    }

    fn run_keeping<'a>(
        &'a self,
        request: &'a Request,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<Output, Cut>> {
        Box::pin(self.run_keeping_capped(request, timeout, self.cap()))
    }
}
