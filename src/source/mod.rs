//! Sources: what ifxtop reads (the registry, `registry.rs`), how to get it (`Request`), and the
//! `CommandRunner` trait — the only door to processes and files. Local, demo and replay runners
//! implement it, so every mode runs the same pipeline.

pub mod attach;
pub mod attach_http;
pub mod budget;
pub mod cost;
pub mod kinds;
pub mod local;
pub mod registry;
pub mod sqlhosts;
pub mod ssh;

pub use kinds::Kind;
pub use registry::{key, CallKind, Key, Source};
pub(crate) use registry::{Collector, Run, FILE_TIMEOUT, PERIOD_DISCOVERY};

use crate::error::SourceError;
use crate::parsers::memo::LineMemo;
use crate::parsers::Parsed;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

/// What a command may print (standard output and error together) and a file may hold, in MB,
/// unless `--max-output-mb` or the config's `max-output-mb` says otherwise: well above the
/// biggest poll (a 20,000-session `onstat -u` prints about 2 MB), far below what a runaway
/// command (`yes`) would take in seconds.
pub const DEFAULT_MAX_OUTPUT_MB: u64 = 64;
/// The extent map's report (`oncheck -pe`, about 90 MB per million extents, or a captured one
/// read with `--extents FILE`) may be this many times the cap.
pub const EXTENT_OUTPUT_FACTOR: u64 = 16;

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What to ask a runner for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Request {
    /// A program and its arguments (run with the instance's INFORMIXSERVER).
    Command(Vec<String>),
    /// A program fed `stdin` (dbaccess reading its SQL).
    CommandInput { argv: Vec<String>, stdin: String },
    /// A file read directly (/proc, /sys, a captured output).
    ReadFile(PathBuf),
    /// The names in a directory, one per line (finding NUMA nodes and oninit processes).
    ListDir(PathBuf),
}

impl Request {
    /// The program for a command, the path for a file or directory.
    pub(crate) fn program(&self) -> String {
        match self {
            Request::Command(argv) | Request::CommandInput { argv, .. } => {
                argv.first().cloned().unwrap_or_default()
            }
            Request::ReadFile(p) | Request::ListDir(p) => p.display().to_string(),
        }
    }

    /// The argv a recording stores: the command line, or `["cat", path]` for a file read.
    pub fn argv(&self) -> Vec<String> {
        match self {
            Request::Command(argv) | Request::CommandInput { argv, .. } => argv.clone(),
            Request::ReadFile(p) => vec!["cat".into(), p.display().to_string()],
            Request::ListDir(p) => vec!["ls".into(), p.display().to_string()],
        }
    }
}

/// What a runner returns: the raw output, however the command ended.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Output {
    /// `None` when killed by a signal.
    pub exit: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    pub(crate) fn ok(stdout: impl Into<String>) -> Self {
        Output {
            exit: Some(0),
            stdout: stdout.into(),
            stderr: String::new(),
        }
    }
}

/// A run that failed part way (killed at its timeout), with what the command had printed on its
/// standard output by then.
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    pub error: SourceError,
    pub stdout: String,
}

impl Cut {
    /// A failure with nothing kept.
    pub(crate) fn bare(error: SourceError) -> Cut {
        Cut {
            error,
            stdout: String::new(),
        }
    }
}

/// How to read a command's exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExitPolicy {
    /// onstat exits with the server mode: 0..=7 are modes (5 = On-Line), 255 (-1) off-line.
    Onstat,
    ZeroIsSuccess,
}

impl ExitPolicy {
    /// `check_text` of an output.
    #[cfg(test)]
    fn check(self, out: &Output) -> Result<(), SourceError> {
        self.check_text(out.exit, &out.stdout, &out.stderr)
    }

    /// Turns a finished run (its exit code and what it printed) into usable output or the
    /// reason it is not.
    pub(crate) fn check_text(
        self,
        exit: Option<i32>,
        stdout: &str,
        stderr: &str,
    ) -> Result<(), SourceError> {
        let Some(code) = exit else {
            return Err(SourceError::Killed);
        };
        match self {
            ExitPolicy::Onstat => {
                let offline = crate::parsers::header::is_offline_message(stdout)
                    || crate::parsers::header::is_offline_message(stderr);
                if code == 255 || code == -1 || offline {
                    let message = first_line(stdout)
                        .or_else(|| first_line(stderr))
                        .unwrap_or("onstat exit code 255")
                        .to_string();
                    Err(SourceError::Offline { message })
                } else if !stdout.trim().is_empty() {
                    // Any exit code is a mode (newer versions add modes): what onstat printed
                    // decides, through the parser.
                    Ok(())
                } else {
                    Err(SourceError::Failed {
                        code,
                        stderr: first_line(stderr).unwrap_or("").to_string(),
                    })
                }
            }
            ExitPolicy::ZeroIsSuccess => {
                if code == 0 {
                    Ok(())
                } else {
                    Err(SourceError::Failed {
                        code,
                        stderr: first_line(stderr)
                            .or_else(|| first_line(stdout))
                            .unwrap_or("")
                            .to_string(),
                    })
                }
            }
        }
    }
}

fn first_line(s: &str) -> Option<&str> {
    s.lines().map(str::trim).find(|l| !l.is_empty())
}

/// The only door to the outside world: runs a request within `timeout`.
///
/// Implementations must kill what they started (its whole process group) when the timeout
/// passes or the returned future is dropped, must cap what they read, and must not block the
/// async runtime.
pub trait CommandRunner: Send + Sync {
    fn run<'a>(
        &'a self,
        request: &'a Request,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<Output, SourceError>>;

    /// `run` for the extent map's report (`oncheck -pe`, or a captured one read from a file),
    /// which runs to tens or hundreds of MB: a runner with an output cap allows it
    /// `EXTENT_OUTPUT_FACTOR` times its cap. Runners without a cap run it as any request.
    fn run_extent_report<'a>(
        &'a self,
        request: &'a Request,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<Output, SourceError>> {
        self.run(request, timeout)
    }

    /// `run`, keeping what the command had printed on its standard output when it is killed at
    /// its timeout: `onstat -i` answers one option after another, and what it answered before
    /// one hung is good. A runner that cannot tell keeps nothing.
    fn run_keeping<'a>(
        &'a self,
        request: &'a Request,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<Output, Cut>> {
        Box::pin(async move { self.run(request, timeout).await.map_err(Cut::bare) })
    }

    /// Seconds since the runner's start on its own clock, when it has one (demo, replay).
    /// `None` means wall-clock time.
    fn clock(&self) -> Option<Duration> {
        None
    }

    /// Whether its requests run processes on a host (this machine's, or over ssh): what they
    /// cost is then measured, and counted as such also while every command fails or hangs
    /// (none finishing to have its CPU read). The demo and a replay run none.
    fn runs_processes(&self) -> bool {
        false
    }
}

impl Source {
    /// Parses a finished run. Exit codes are read per command first (onstat's code is the server
    /// mode; 255 means off-line), so a failed run never reaches a parser; an onstat that prints
    /// the off-line message with another exit code (a wrapper script) is off-line too.
    pub fn parse(&self, out: Output) -> Result<Parsed, SourceError> {
        self.parse_ref(&out)
    }

    /// `parse`, of output the caller keeps (an `onstat -i` part, recorded after it parsed).
    pub fn parse_ref(&self, out: &Output) -> Result<Parsed, SourceError> {
        self.parse_text(out.exit, &out.stdout, &out.stderr)
    }

    /// `parse`, of a run's exit code and what it printed, wherever those are kept (a part of
    /// one `onstat -i` output is a slice of it).
    pub fn parse_text(
        &self,
        exit: Option<i32>,
        stdout: &str,
        stderr: &str,
    ) -> Result<Parsed, SourceError> {
        self.read_text(exit, stdout, stderr, None)
    }

    /// `parse_text` through `memo`, the source's memo of its last parse (`memoised` sources:
    /// the rows of lines unchanged since are not parsed again). A run that fails, does not
    /// parse or finds the server off-line leaves the memo empty.
    pub fn parse_text_memo(
        &self,
        exit: Option<i32>,
        stdout: &str,
        stderr: &str,
        memo: &mut LineMemo,
    ) -> Result<Parsed, SourceError> {
        let result = self.read_text(exit, stdout, stderr, Some(&mut *memo));
        if result.is_err() {
            memo.forget();
        }
        result
    }

    fn read_text(
        &self,
        exit: Option<i32>,
        stdout: &str,
        stderr: &str,
        memo: Option<&mut LineMemo>,
    ) -> Result<Parsed, SourceError> {
        self.exit_policy().check_text(exit, stdout, stderr)?;
        let parsed = memo
            .and_then(|m| self.parse_str_memo(stdout, m))
            .unwrap_or_else(|| self.parse_str(stdout))
            .map_err(SourceError::from)?;
        if let Some(m) = parsed.offline() {
            return Err(SourceError::Offline {
                message: m.to_string(),
            });
        }
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::Sid;

    #[test]
    fn labels_round_trip() {
        // Every entry of the registry, those with an argument with a sample one.
        let mut all = Source::candidates_for_tests(None);
        all.extend(Source::candidates_for_tests(Some("42")));
        assert!(all.contains(&Source::OnstatGSes(Sid(42))));
        assert!(all.contains(&Source::NumaMaps(42)));
        assert!(all.len() >= 19, "{all:?}");
        for s in all {
            assert_eq!(Source::from_label(&s.label()), Some(s), "{s:?}");
        }
        assert_eq!(Source::from_label("netstat -Aan"), Some(Source::Netstat));
        assert_eq!(
            Source::from_label("onstat -g ses 812"),
            Some(Source::OnstatGSes(Sid(812)))
        );
        assert_eq!(Source::from_label("onstat  -u "), Some(Source::OnstatU));
        assert_eq!(Source::from_label("onstat -x"), Some(Source::OnstatXTxn));
        assert_eq!(Source::from_label("onstat -y"), None);
        // Chunk I/O, devices and replication: `-D` is not `-d`; the HA commands with their
        // `verbose`; the device resolution recorded under its stat command.
        assert_eq!(Source::from_label("onstat -D"), Some(Source::OnstatDUpper));
        assert_eq!(Source::from_label("onstat -d"), None);
        assert_eq!(
            Source::from_label("onstat -g iof"),
            Some(Source::OnstatGIof)
        );
        assert_eq!(
            Source::from_label("onstat -g rss verbose"),
            Some(Source::OnstatGRss)
        );
        assert_eq!(Source::from_label("onstat -g rss"), None);
        assert_eq!(
            Source::from_label("onstat -g cluster"),
            Some(Source::OnstatGCluster)
        );
        assert_eq!(
            Source::from_label("/proc/diskstats"),
            Some(Source::ProcDiskstats)
        );
        assert_eq!(Source::ChunkDevices.label(), "stat -L -c %f %t %T %d %n --");
        assert_eq!(
            Source::from_label("stat -L -c %f %t %T %d %n --"),
            Some(Source::ChunkDevices)
        );
        // -D rides in the grouped onstat call; the `-g` ones and the HA ones do not.
        assert_eq!(Source::OnstatDUpper.group_option(), Some("-D"));
        assert_eq!(Source::OnstatGIof.group_option(), None);
        assert_eq!(Source::OnstatGCluster.group_option(), None);
        assert!(Source::polled().contains(&Source::OnstatGIof));
        assert!(!Source::polled().contains(&Source::OnstatGCluster));
        assert_eq!(Source::from_label("/proc/x/numa_maps"), None);
    }

    #[test]
    fn onstat_exit_codes_are_modes_not_failures() {
        let on = Output {
            exit: Some(5),
            stdout: "x".into(),
            stderr: String::new(),
        };
        assert!(ExitPolicy::Onstat.check(&on).is_ok());
        // Exit code 1 is Quiescent mode, not a failure...
        let quiescent = Output {
            exit: Some(1),
            stdout: "x".into(),
            stderr: String::new(),
        };
        assert!(ExitPolicy::Onstat.check(&quiescent).is_ok());
        // ...but a run that printed nothing and complained on stderr is.
        let failed = Output {
            exit: Some(1),
            stdout: String::new(),
            stderr: "onstat: permission denied\n".into(),
        };
        assert_eq!(
            ExitPolicy::Onstat.check(&failed),
            Err(SourceError::Failed {
                code: 1,
                stderr: "onstat: permission denied".into()
            })
        );
        let off = Output {
            exit: Some(255),
            stdout: "\nshared memory not initialized for INFORMIXSERVER 'x'\n".into(),
            stderr: String::new(),
        };
        assert_eq!(
            ExitPolicy::Onstat.check(&off),
            Err(SourceError::Offline {
                message: "shared memory not initialized for INFORMIXSERVER 'x'".into()
            })
        );
        let killed = Output::default();
        assert_eq!(ExitPolicy::Onstat.check(&killed), Err(SourceError::Killed));
        let bad = Output {
            exit: Some(1),
            stdout: String::new(),
            stderr: "oops".into(),
        };
        assert!(matches!(
            ExitPolicy::ZeroIsSuccess.check(&bad),
            Err(SourceError::Failed { code: 1, .. })
        ));
    }
}
