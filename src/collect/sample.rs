//! One collected output: the raw form a recording keeps (`RawSample`) and the typed form on its
//! way to the store (`Update`, parsed by `Source::parse` in every mode).

use crate::error::SourceError;
use crate::parsers::Parsed;
use crate::source::Source;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A collected output exactly as the command printed it: one line of a recording. `T` is how
/// its texts are kept: read as `String`s, or checked and dropped when indexing a recording
/// needs only when and what (`collect::record`), by the same rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawSample<T = String> {
    /// Seconds since the start of the session (recording).
    pub t: f64,
    /// The command line as a DBA types it (`onstat -u`) or the path of a file read directly.
    pub source: String,
    #[serde(default)]
    pub argv: Vec<T>,
    /// Exit code; null when killed, timed out or not started (then `stderr` says why). A
    /// hand-written line may leave it out: it then counts as a successful run (0).
    #[serde(default = "exit_ok")]
    pub exit: Option<i32>,
    #[serde(default)]
    pub stdout: T,
    #[serde(default)]
    pub stderr: T,
}

#[cfg(test)]
impl RawSample {
    /// An `onstat -u` of an on-line server (exit 5) at `t` printing `stdout`: a test's sample.
    pub(crate) fn onstat_u(t: f64, stdout: String) -> Self {
        RawSample {
            t,
            source: "onstat -u".into(),
            argv: vec!["onstat".into(), "-u".into()],
            exit: Some(5),
            stdout,
            stderr: String::new(),
        }
    }
}

pub(crate) fn exit_ok() -> Option<i32> {
    Some(0)
}

impl RawSample {
    pub(crate) fn at(&self) -> Duration {
        Duration::try_from_secs_f64(self.t).unwrap_or_default()
    }
}

/// A typed sample on its way to the store.
#[derive(Debug, Clone)]
pub struct Update {
    pub source: Source,
    pub t: Duration,
    /// How long the run took (the command's cost, shown in the status view).
    pub took: Duration,
    pub result: Result<Parsed, SourceError>,
    /// How it ran and what it cost.
    pub how: How,
}

#[cfg(test)]
impl Update {
    /// The demo's answer for `source` at demo time `t`, parsed, as its collector would deliver
    /// it (`None` where the demo does not answer that source): what tests feed a store.
    pub(crate) fn from_demo(
        demo: &crate::demo::DemoInstance,
        source: Source,
        t: Duration,
    ) -> Option<Update> {
        let out = demo.respond(&source.request(), t).ok()?;
        Some(Update {
            source,
            t,
            took: Duration::ZERO,
            result: source.parse(out),
            how: Default::default(),
        })
    }
}

/// How a sample was collected and what its process cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct How {
    /// When worth saying: in one `onstat -i` with other options, or one call per option and
    /// why (`collect/group.rs`).
    pub note: Option<String>,
    /// The CPU time of the process that answered (`source::cost`), when one ran here.
    pub cpu: Option<Duration>,
    /// How many sources that process answered (its CPU time is theirs together).
    pub shared: u32,
    /// The bytes of output read for this source (its part of a shared call), when it answered.
    pub bytes: Option<u64>,
    /// What ifxtop as a whole had cost when this sample came, when a process ran for it (the
    /// demo and a replay run none).
    pub process: Option<crate::source::cost::ProcessCost>,
    /// Its runner runs processes on a host (live, here or over ssh), whether or not one
    /// finished for this sample: what ifxtop costs there is measured, never simulated.
    pub live: bool,
}
