//! Sources: what ifxtop reads (`Source`), how to get it (`Request`), and the `CommandRunner`
//! trait — the only place that spawns processes or reads /proc. Local, demo and replay runners
//! implement it, so every mode runs the same pipeline.

pub mod local;
pub mod sqlhosts;

use crate::error::SourceError;
use crate::ids::Sid;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One thing ifxtop collects. Its `label` is how a DBA would type it (`onstat -u`) or, for a file
/// read directly, its path; recordings name their samples by it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    OnstatU,
    OnstatX,
    OnstatGCon,
    OnstatGAth,
    OnstatGNtt,
    OnstatK,
    OnstatD,
    OnstatGSes(Sid),
    OnstatGSql(Sid),
    OncheckPe,
    Netstat,
    ProcNetTcp,
    ProcNetTcp6,
    NodesOnline,
    NodeMeminfo(u32),
    NodeCpulist(u32),
    ZoneReclaimMode,
    Vmstat,
    NumaMaps(u32),
    /// `sysmaster:systabnames` through dbaccess: partnum → table name.
    Systabnames,
}

pub const ONSTAT_TIMEOUT: Duration = Duration::from_secs(10);
pub const FILE_TIMEOUT: Duration = Duration::from_secs(2);
pub const ONCHECK_TIMEOUT: Duration = Duration::from_secs(1800);

/// Base periods (DESIGN.md §1) at an interval of 1 s; `+`/`-` scale them together.
pub const PERIOD_FAST: Duration = Duration::from_secs(1);
pub const PERIOD_BUFFERS: Duration = Duration::from_secs(2);
pub const PERIOD_JOINS: Duration = Duration::from_secs(5);
pub const PERIOD_NUMA: Duration = Duration::from_secs(5);
pub const PERIOD_NUMA_MAPS: Duration = Duration::from_secs(30);
pub const PERIOD_DISCOVERY: Duration = Duration::from_secs(120);
/// `sysmaster:systabnames` changes only when tables are created or dropped.
pub const PERIOD_TABLES: Duration = Duration::from_secs(600);
pub const DBACCESS_TIMEOUT: Duration = Duration::from_secs(30);

const NODE_DIR: &str = "/sys/devices/system/node";

impl Source {
    /// `onstat -u`, `/proc/net/tcp`, `/sys/devices/system/node/node0/meminfo`, ...
    pub fn label(&self) -> String {
        match self {
            Source::OnstatU => "onstat -u".into(),
            Source::OnstatX => "onstat -X".into(),
            Source::OnstatGCon => "onstat -g con".into(),
            Source::OnstatGAth => "onstat -g ath".into(),
            Source::OnstatGNtt => "onstat -g ntt".into(),
            Source::OnstatK => "onstat -k".into(),
            Source::OnstatD => "onstat -d".into(),
            Source::OnstatGSes(sid) => format!("onstat -g ses {sid}"),
            Source::OnstatGSql(sid) => format!("onstat -g sql {sid}"),
            Source::OncheckPe => "oncheck -pe".into(),
            Source::Netstat => "netstat -an".into(),
            Source::ProcNetTcp => "/proc/net/tcp".into(),
            Source::ProcNetTcp6 => "/proc/net/tcp6".into(),
            Source::NodesOnline => format!("{NODE_DIR}/online"),
            Source::NodeMeminfo(n) => format!("{NODE_DIR}/node{n}/meminfo"),
            Source::NodeCpulist(n) => format!("{NODE_DIR}/node{n}/cpulist"),
            Source::ZoneReclaimMode => "/proc/sys/vm/zone_reclaim_mode".into(),
            Source::Vmstat => "/proc/vmstat".into(),
            Source::NumaMaps(pid) => format!("/proc/{pid}/numa_maps"),
            Source::Systabnames => "dbaccess sysmaster -".into(),
        }
    }

    /// The inverse of `label`, for recordings. Extra blanks in a hand-written label are accepted.
    pub fn from_label(label: &str) -> Option<Source> {
        let words: Vec<&str> = label.split_whitespace().collect();
        let fixed = match words.as_slice() {
            ["onstat", "-u"] => Some(Source::OnstatU),
            ["onstat", "-X"] => Some(Source::OnstatX),
            ["onstat", "-g", "con"] => Some(Source::OnstatGCon),
            ["onstat", "-g", "ath"] => Some(Source::OnstatGAth),
            ["onstat", "-g", "ntt"] => Some(Source::OnstatGNtt),
            ["onstat", "-k"] => Some(Source::OnstatK),
            ["onstat", "-d"] => Some(Source::OnstatD),
            ["onstat", "-g", "ses", sid] => sid.parse().ok().map(|s| Source::OnstatGSes(Sid(s))),
            ["onstat", "-g", "sql", sid] => sid.parse().ok().map(|s| Source::OnstatGSql(Sid(s))),
            ["oncheck", "-pe"] => Some(Source::OncheckPe),
            ["dbaccess", "sysmaster", "-"] => Some(Source::Systabnames),
            ["netstat", ..] => Some(Source::Netstat),
            _ => None,
        };
        if fixed.is_some() {
            return fixed;
        }
        let path = label.trim();
        match path {
            "/proc/net/tcp" => return Some(Source::ProcNetTcp),
            "/proc/net/tcp6" => return Some(Source::ProcNetTcp6),
            "/proc/sys/vm/zone_reclaim_mode" => return Some(Source::ZoneReclaimMode),
            "/proc/vmstat" => return Some(Source::Vmstat),
            _ => {}
        }
        if let Some(rest) = path.strip_prefix(NODE_DIR) {
            if rest == "/online" {
                return Some(Source::NodesOnline);
            }
            let rest = rest.strip_prefix("/node")?;
            let (n, file) = rest.split_once('/')?;
            let n: u32 = n.parse().ok()?;
            return match file {
                "meminfo" => Some(Source::NodeMeminfo(n)),
                "cpulist" => Some(Source::NodeCpulist(n)),
                _ => None,
            };
        }
        if let Some(rest) = path.strip_prefix("/proc/") {
            let (pid, file) = rest.split_once('/')?;
            if file == "numa_maps" {
                return pid.parse().ok().map(Source::NumaMaps);
            }
        }
        None
    }

    /// How often it is collected at an interval of 1 s (`+`/`-` scale it): the one table the
    /// collectors, the demo simulation and the header's staleness all read.
    pub fn period(&self) -> Duration {
        match self {
            Source::OnstatU
            | Source::OnstatGCon
            | Source::Netstat
            | Source::ProcNetTcp
            | Source::ProcNetTcp6 => PERIOD_FAST,
            Source::OnstatX => PERIOD_BUFFERS,
            Source::OnstatGAth
            | Source::OnstatGNtt
            | Source::OnstatK
            | Source::OnstatD
            | Source::OnstatGSes(_)
            | Source::OnstatGSql(_) => PERIOD_JOINS,
            Source::NodesOnline
            | Source::NodeMeminfo(_)
            | Source::ZoneReclaimMode
            | Source::Vmstat => PERIOD_NUMA,
            Source::NodeCpulist(_) => PERIOD_DISCOVERY,
            Source::NumaMaps(_) => PERIOD_NUMA_MAPS,
            Source::Systabnames => PERIOD_TABLES,
            // Built on demand (and on R), not polled.
            Source::OncheckPe => Duration::MAX,
        }
    }

    /// How to collect it.
    pub fn request(&self) -> Request {
        match self {
            Source::OnstatU
            | Source::OnstatX
            | Source::OnstatGCon
            | Source::OnstatGAth
            | Source::OnstatGNtt
            | Source::OnstatK
            | Source::OnstatD
            | Source::OnstatGSes(_)
            | Source::OnstatGSql(_)
            | Source::OncheckPe
            | Source::Netstat => {
                Request::Command(self.label().split(' ').map(String::from).collect())
            }
            Source::Systabnames => Request::CommandInput {
                argv: self.label().split(' ').map(String::from).collect(),
                stdin: crate::parsers::systabnames::QUERY.to_string(),
            },
            _ => Request::ReadFile(PathBuf::from(self.label())),
        }
    }

    /// How its exit code is read.
    pub fn exit_policy(&self) -> ExitPolicy {
        match self {
            Source::OnstatU
            | Source::OnstatX
            | Source::OnstatGCon
            | Source::OnstatGAth
            | Source::OnstatGNtt
            | Source::OnstatK
            | Source::OnstatD
            | Source::OnstatGSes(_)
            | Source::OnstatGSql(_) => ExitPolicy::Onstat,
            _ => ExitPolicy::ZeroIsSuccess,
        }
    }
}

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
    pub fn program(&self) -> String {
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
    pub fn ok(stdout: impl Into<String>) -> Self {
        Output {
            exit: Some(0),
            stdout: stdout.into(),
            stderr: String::new(),
        }
    }
}

/// How to read a command's exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitPolicy {
    /// onstat exits with the server mode: 0..=7 are modes (5 = On-Line), 255 (-1) off-line.
    Onstat,
    ZeroIsSuccess,
}

/// The server mode onstat reports through its exit code.
pub fn onstat_mode(code: i32) -> Option<&'static str> {
    Some(match code {
        0 => "Initialization",
        1 => "Quiescent",
        2 => "Fast Recovery",
        3 => "Archive Backup",
        4 => "Shutdown",
        5 => "On-Line",
        6 => "Abort",
        7 => "Single-User",
        _ => return None,
    })
}

impl ExitPolicy {
    /// Turns a finished run into usable output or the reason it is not.
    pub fn check(self, out: Output) -> Result<Output, SourceError> {
        let Some(code) = out.exit else {
            return Err(SourceError::Killed);
        };
        match self {
            ExitPolicy::Onstat => {
                let offline = crate::parsers::header::is_offline_message(&out.stdout)
                    || crate::parsers::header::is_offline_message(&out.stderr);
                if code == 255 || code == -1 || offline {
                    let message = first_line(&out.stdout)
                        .or_else(|| first_line(&out.stderr))
                        .unwrap_or("onstat exit code 255")
                        .to_string();
                    Err(SourceError::Offline { message })
                } else if !out.stdout.trim().is_empty() {
                    // Any exit code is a mode (newer versions add modes): what onstat printed
                    // decides, through the parser.
                    Ok(out)
                } else {
                    Err(SourceError::Failed {
                        code,
                        stderr: first_line(&out.stderr).unwrap_or("").to_string(),
                    })
                }
            }
            ExitPolicy::ZeroIsSuccess => {
                if code == 0 {
                    Ok(out)
                } else {
                    Err(SourceError::Failed {
                        code,
                        stderr: first_line(&out.stderr)
                            .or_else(|| first_line(&out.stdout))
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
/// Implementations must kill what they started when the timeout passes or the returned future
/// is dropped, and must not block the async runtime.
pub trait CommandRunner: Send + Sync {
    fn run<'a>(
        &'a self,
        request: &'a Request,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<Output, SourceError>>;

    /// Seconds since the runner's start on its own clock, when it has one (demo, replay).
    /// `None` means wall-clock time.
    fn clock(&self) -> Option<Duration> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_round_trip() {
        let all = [
            Source::OnstatU,
            Source::OnstatX,
            Source::OnstatGCon,
            Source::OnstatGAth,
            Source::OnstatGNtt,
            Source::OnstatK,
            Source::OnstatD,
            Source::OnstatGSes(Sid(42)),
            Source::OnstatGSql(Sid(7)),
            Source::OncheckPe,
            Source::Netstat,
            Source::ProcNetTcp,
            Source::ProcNetTcp6,
            Source::NodesOnline,
            Source::NodeMeminfo(3),
            Source::NodeCpulist(1),
            Source::ZoneReclaimMode,
            Source::Vmstat,
            Source::NumaMaps(1234),
            Source::Systabnames,
        ];
        for s in all {
            assert_eq!(Source::from_label(&s.label()), Some(s.clone()), "{s:?}");
        }
        assert_eq!(Source::from_label("onstat  -u "), Some(Source::OnstatU));
        assert_eq!(Source::from_label("onstat -x"), None);
        assert_eq!(Source::from_label("/proc/x/numa_maps"), None);
    }

    #[test]
    fn onstat_exit_codes_are_modes_not_failures() {
        let on = Output {
            exit: Some(5),
            stdout: "x".into(),
            stderr: String::new(),
        };
        assert!(ExitPolicy::Onstat.check(on).is_ok());
        // Exit code 1 is Quiescent mode, not a failure...
        let quiescent = Output {
            exit: Some(1),
            stdout: "x".into(),
            stderr: String::new(),
        };
        assert!(ExitPolicy::Onstat.check(quiescent).is_ok());
        // ...but a run that printed nothing and complained on stderr is.
        let failed = Output {
            exit: Some(1),
            stdout: String::new(),
            stderr: "onstat: permission denied\n".into(),
        };
        assert_eq!(
            ExitPolicy::Onstat.check(failed),
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
            ExitPolicy::Onstat.check(off),
            Err(SourceError::Offline {
                message: "shared memory not initialized for INFORMIXSERVER 'x'".into()
            })
        );
        let killed = Output::default();
        assert_eq!(ExitPolicy::Onstat.check(killed), Err(SourceError::Killed));
        let bad = Output {
            exit: Some(1),
            stdout: String::new(),
            stderr: "oops".into(),
        };
        assert!(matches!(
            ExitPolicy::ZeroIsSuccess.check(bad),
            Err(SourceError::Failed { code: 1, .. })
        ));
    }
}
