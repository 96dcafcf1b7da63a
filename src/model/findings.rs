//! Findings: the causes a snapshot shows, named and ranked (the worst first), each with its
//! impact, culprit, evidence and what helps. Pure: read from one snapshot, whose joins already
//! hold only facts of one moment (docs/findings.md gives every rule and its threshold).

use crate::ids::Sid;
use crate::model::io::{Concern, SLOW_AWAIT_MS, VERY_SLOW_AWAIT_MS};
use crate::model::io::{IoView, Replication};
use crate::model::numa::NumaView;
use crate::model::session::SessionView;
use crate::model::sessions::SessionRow;
use crate::model::vitals::Vitals;
use crate::model::waiters::{WaitTarget, WaiterRow};
use crate::parsers::onstat_u::WaitReason;
use crate::source::Source;
use crate::store::hotspots::HotspotRow;
use crate::store::sockets::SocketRow;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// What the rules read: the parts of one snapshot (the snapshot, which holds the findings,
/// builds it, so this file needs not know it).
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    /// The snapshot's moment (session seconds): ages of what began at a known moment count to
    /// it.
    pub at_s: f64,
    /// The banner's `Blocked:` reason.
    pub blocked: Option<&'a str>,
    /// The off-line message of the last `onstat -u`.
    pub offline: Option<&'a str>,
    pub waiters: &'a [WaiterRow],
    pub heads: &'a [HeadFacts<'a>],
    pub sessions: &'a [SessionRow],
    pub session_views: &'a [SessionView],
    pub hotspots: &'a [HotspotRow],
    pub sockets: &'a [SocketRow],
    pub io: &'a IoView,
    pub replication: &'a Replication,
    pub numa: &'a NumaView,
    pub vitals: &'a Vitals,
}

/// A head blocker as the rules read it.
#[derive(Debug, Clone, Copy)]
pub struct HeadFacts<'a> {
    pub sid: Sid,
    pub locks: u64,
    /// `running`, `waiting: condition`...
    pub state: &'a str,
    /// What helps, in harm.rs's words.
    pub action: Option<&'a str>,
    /// Its current statement, where read lately.
    pub sql: Option<&'a str>,
}

/// A wait this long (seconds) makes a finding a warning...
pub const WARN_WAIT_S: f64 = 5.0;
/// ... and this long critical.
pub const CRITICAL_WAIT_S: f64 = 30.0;
/// CPU VPs this busy (%) with [`READY_QUEUE_WARN`] threads ready and waiting for one are
/// saturated.
pub const CPU_BUSY_PCT: f64 = 90.0;
pub const READY_QUEUE_WARN: usize = 10;
/// Threads waiting on one mutex that make contention a warning whatever their wait's age, once
/// a wait lasts past [`crate::model::harm::BRIEF_MUTEX_WAIT_S`]. No manual gives a number
/// (oninit.com's `onstat -g lmx` notes: "a large list of waiters on a particular mutex, or large
/// wait times"): ifxtop's choice, twice the ready queue that makes CPU saturation
/// ([`READY_QUEUE_WARN`]).
pub const MUTEX_WAITERS_WARN: usize = 20;
/// A checkpoint that has blocked the server (`Blocked:CKPT`, threads waiting C) this long is a
/// warning; shorter blocks are every checkpoint's (the manual's own `onstat -g ckp` example
/// shows a 2.0 s block at a log switch). The same bar as any wait ([`WARN_WAIT_S`]).
pub const CKPT_BLOCK_WARN_S: f64 = WARN_WAIT_S;
/// ... and this long critical: every transaction is held up, and 10 s is the limit for keeping
/// a user's attention on a task (Nielsen, "Response Times: The 3 Important Limits").
pub const CKPT_BLOCK_CRITICAL_S: f64 = 10.0;
/// The oldest open transaction spanning this many logical logs is worth a warning.
pub const LONG_TXN_LOGS: u64 = 3;
/// A client connection's Send-Q is a client not reading when it holds bytes for
/// [`SEND_Q_PERSIST_S`] (samples in a row), or more than [`SEND_Q_ONE_FLIGHT_BYTES`] at once: a
/// reply in flight is acknowledged within a round trip.
pub use crate::model::waiters::{SEND_Q_ONE_FLIGHT_BYTES, SEND_Q_PERSIST_S};
/// Pages per second scanned by direct reclaim (processes stalled reclaiming memory themselves)
/// that make memory reclaim a cause: a few pages a second is any busy host's background.
pub const DIRECT_RECLAIM_PAGES_PER_S: f64 = 1_000.0;
/// A secondary this many log pages behind is worth naming (as info; a warning while it falls
/// further behind).
pub const LAG_PAGES_INFO: u64 = 100;
/// A hot spot waited on this long (seconds) on one page only is one hot page (an index leaf, a
/// counter row), not a table's last page under inserts: a 2 KB page taking inserts busy enough
/// to queue on fills within a few seconds (tens of rows a page, hundreds of inserts a second).
pub const ONE_PAGE_AFTER_S: f64 = 10.0;
/// Share of logical logs not backed up (%) that makes a warning.
pub const LOGS_NOT_BACKED_UP_PCT: f64 = 80.0;

/// What kind of cause a finding names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    // The order is the precedence among findings of one severity: a cause before what it
    // causes (a blocked checkpoint holds up the lock holders too).
    Offline,
    CheckpointBlocked,
    LongTransaction,
    ServerBlocked,
    LockChain,
    ReplicaLag,
    SlowDevice,
    BufferHotSpot,
    MutexContention,
    CpuSaturation,
    ClientNetwork,
    MemoryReclaim,
    LogsNotBackedUp,
    /// ifxtop's flight recorder stopped writing (a nearly full disk): not the server's, but
    /// the host's disk and the evidence of the next incident.
    RingStopped,
}

impl FindingKind {
    pub const ALL: [FindingKind; 14] = [
        FindingKind::Offline,
        FindingKind::CheckpointBlocked,
        FindingKind::LongTransaction,
        FindingKind::ServerBlocked,
        FindingKind::LockChain,
        FindingKind::ReplicaLag,
        FindingKind::SlowDevice,
        FindingKind::BufferHotSpot,
        FindingKind::MutexContention,
        FindingKind::CpuSaturation,
        FindingKind::ClientNetwork,
        FindingKind::MemoryReclaim,
        FindingKind::LogsNotBackedUp,
        FindingKind::RingStopped,
    ];

    /// The name in the JSON and the exporter's label: `lock_chain`.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::Offline => "offline",
            FindingKind::CheckpointBlocked => "checkpoint_blocked",
            FindingKind::LongTransaction => "long_transaction",
            FindingKind::ServerBlocked => "server_blocked",
            FindingKind::LockChain => "lock_chain",
            FindingKind::ReplicaLag => "replica_lag",
            FindingKind::SlowDevice => "slow_device",
            FindingKind::BufferHotSpot => "buffer_hot_spot",
            FindingKind::MutexContention => "mutex_contention",
            FindingKind::CpuSaturation => "cpu_saturation",
            FindingKind::ClientNetwork => "client_network",
            FindingKind::MemoryReclaim => "memory_reclaim",
            FindingKind::LogsNotBackedUp => "logs_not_backed_up",
            FindingKind::RingStopped => "ring_stopped",
        }
    }
}

impl FindingKind {
    /// The sources a finding of this kind is read from. When one of them is older than its
    /// period (it failed, or stopped answering), the finding is of that source's moment, not of
    /// now: it is marked `as of` ([`Finding::as_of_s`]).
    pub fn sources(self) -> &'static [Source] {
        match self {
            FindingKind::Offline
            | FindingKind::CheckpointBlocked
            | FindingKind::ServerBlocked
            | FindingKind::LockChain
            | FindingKind::BufferHotSpot
            | FindingKind::MutexContention => &[Source::OnstatU],
            FindingKind::LongTransaction => &[Source::OnstatU, Source::OnstatXTxn, Source::OnstatL],
            FindingKind::ReplicaLag => &[
                Source::OnstatGCluster,
                Source::OnstatGRss,
                Source::OnstatGSds,
                Source::OnstatGDri,
            ],
            FindingKind::SlowDevice => &[Source::ProcDiskstats],
            FindingKind::CpuSaturation => &[Source::OnstatGGlo, Source::OnstatGRea],
            FindingKind::ClientNetwork => &[
                Source::OnstatU,
                Source::ProcNetTcp,
                Source::ProcNetTcp6,
                Source::Netstat,
            ],
            FindingKind::MemoryReclaim => &[Source::Vmstat, Source::ZoneReclaimMode],
            FindingKind::LogsNotBackedUp => &[Source::OnstatL],
            // Read from the ring itself, not the server.
            FindingKind::RingStopped => &[],
        }
    }
}

/// A source this much past its period (seconds) is late, not only slow: a tick's own delay is
/// less.
pub const LATE_AFTER_S: f64 = 1.0;

/// How urgent a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }

    /// A marker that does not depend on colour (the ASCII screen draws `X`, `!`, `i`).
    pub fn marker(self) -> &'static str {
        match self {
            Severity::Critical => "✖",
            Severity::Warning => "⚠",
            Severity::Info => "ℹ",
        }
    }

    /// By the longest wait a cause makes: [`WARN_WAIT_S`], [`CRITICAL_WAIT_S`].
    fn of_wait(s: f64) -> Severity {
        if s >= CRITICAL_WAIT_S {
            Severity::Critical
        } else if s >= WARN_WAIT_S {
            Severity::Warning
        } else {
            Severity::Info
        }
    }
}

/// Who and what a finding blames (whichever apply).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Culprit {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sids: Vec<Sid>,
    /// A table, an index or a mutex.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numa_node: Option<u32>,
    /// The client hosts a DBA must go and look at (their addresses), with how many of the
    /// sessions blamed each has, the most first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostCount>,
}

/// A client host and how many of a finding's sessions come from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostCount {
    pub host: String,
    pub sessions: usize,
}

/// Which way what a finding measures goes over its last samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trend {
    Growing,
    Draining,
    Steady,
}

impl Trend {
    pub fn as_str(self) -> &'static str {
        match self {
            Trend::Growing => "growing",
            Trend::Draining => "draining",
            Trend::Steady => "steady",
        }
    }
}

/// What it costs: the sessions held up and the seconds they have waited so far.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Impact {
    pub sessions: usize,
    /// Seconds of waiting caused, summed over the waits now on (lower bounds count as such).
    pub wait_s: f64,
}

/// One fact behind a finding and where it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// `onstat -u`, `onstat -g ckp`, `/proc/diskstats`...
    pub source: &'static str,
    pub fact: String,
}

/// One named cause.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    pub severity: Severity,
    /// How long it has held: from `since_s` to the snapshot's moment (see [`FindingsHistory`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub for_s: Option<f64>,
    /// `for_s` is a lower bound and `since_s` an upper one: it held already when ifxtop first
    /// saw it (its first snapshot, after a gap, or a wait older than ifxtop's first sample).
    pub for_s_at_least: bool,
    /// The first moment it held, on the snapshot's clock (`at_s`; below 0: before ifxtop
    /// started): kept across snapshots while a finding of the same kind and culprit holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since_s: Option<f64>,
    /// `since_s` as a UTC time, when the session's wall clock is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    pub impact: Impact,
    pub culprit: Culprit,
    /// Which way it goes (a Send-Q), where the rule says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trend: Option<Trend>,
    /// Set when the data it stands on is older than its source's period: how old (seconds).
    /// It is then said `as of` that moment, not of now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub as_of_s: Option<f64>,
    /// One line a DBA reads out on a call.
    pub summary: String,
    pub evidence: Vec<Evidence>,
    /// What helps (ifxtop only reads).
    pub action: String,
    /// `since` on the server's clock (`13:10:02`), for the screen and the text report.
    #[serde(skip)]
    pub since_clock: Option<String>,
    /// The summary's words before and after its age, so the age can follow `for_s`.
    #[serde(skip)]
    aged: Option<(String, String)>,
    /// The first snapshot that shows it saw it begin, to within one sample of `onstat -u`: it
    /// is made of waits or of the banner, read every second. A finding read from a rate or a
    /// setting (a device's await, the CPU VPs' load, a replica's lag, memory reclaim) held
    /// already at some moment between two samples of its source: its first sight is only a
    /// lower bound of its age.
    #[serde(skip)]
    start_seen: bool,
}

impl Finding {
    /// A finding of `kind` with its words, for other modules' tests.
    #[cfg(test)]
    pub(crate) fn of(kind: FindingKind, summary: &str) -> Self {
        Finding::new(kind, Severity::Warning, summary.to_string(), "")
    }

    fn new(kind: FindingKind, severity: Severity, summary: String, action: &str) -> Self {
        Finding {
            kind,
            severity,
            for_s: None,
            for_s_at_least: false,
            since_s: None,
            since: None,
            impact: Impact::default(),
            culprit: Culprit::default(),
            trend: None,
            as_of_s: None,
            summary,
            evidence: Vec::new(),
            action: action.to_string(),
            since_clock: None,
            aged: None,
            start_seen: false,
        }
    }

    /// Its first sight is its start (see `start_seen`).
    fn seen_to_begin(mut self) -> Self {
        self.start_seen = true;
        self
    }

    /// The summary: `before`, its age (`42s`, `≥42s`), `after`; the age follows `for_s` when
    /// [`FindingsHistory::stamp`] sets it.
    fn aged_summary(&mut self, before: String, after: String) {
        self.summary = format!("{before}{}{after}", self.age_words());
        self.aged = Some((before, after));
    }

    fn fact(mut self, source: &'static str, fact: String) -> Self {
        self.evidence.push(Evidence { source, fact });
        self
    }

    /// Its age and impact from the waits it causes.
    fn with_waits(mut self, waits: &[&WaiterRow]) -> Self {
        let mut sids: Vec<Sid> = waits.iter().map(|w| w.sessid).collect();
        sids.sort_unstable();
        sids.dedup();
        self.impact = Impact {
            sessions: sids.len(),
            wait_s: waits.iter().map(|w| w.in_wait_s).sum(),
        };
        if let Some(w) = waits
            .iter()
            .max_by(|a, b| a.in_wait_s.total_cmp(&b.in_wait_s))
        {
            self.for_s = Some(w.in_wait_s);
            self.for_s_at_least = w.in_wait_s_at_least;
        }
        self
    }

    /// `42s`, `≥42s`, or nothing (nor for a lower bound under a second: it says nothing).
    fn age_words(&self) -> String {
        self.for_s
            .filter(|s| !(self.for_s_at_least && *s < 1.0))
            .map(|s| {
                format!(
                    " {}",
                    crate::format::human_duration_bound(s, self.for_s_at_least)
                )
            })
            .unwrap_or_default()
    }

    /// Says it is of `age_s` ago (its source `label` is that old, older than its period).
    pub fn mark_as_of(&mut self, age_s: f64, label: &str) {
        self.as_of_s = Some(age_s);
        let words = format!(
            " (as of {} ago: {label} is late)",
            crate::format::human_duration(age_s)
        );
        self.summary.push_str(&words);
        if let Some((_, after)) = &mut self.aged {
            after.push_str(&words);
        }
    }

    /// The line the screen shows: `⚠ lock chain 42s: sid 812 holds up 3 (...)`.
    pub fn line(&self) -> String {
        format!("{} {}", self.severity.marker(), self.summary)
    }

    /// `for 42s, since 13:10:02`; as bounds `for ≥42s, since 13:10:02 or before`, and only
    /// `since 13:10:02 or before` for a lower bound under a second (it says nothing more).
    pub fn held_words(&self) -> Option<String> {
        let s = self.for_s?;
        if self.for_s_at_least && s < 1.0 {
            return self
                .since_clock
                .as_ref()
                .map(|c| format!("since {c} or before"));
        }
        let since = self
            .since_clock
            .as_deref()
            .map(|c| {
                format!(
                    ", since {c}{}",
                    if self.for_s_at_least {
                        " or before"
                    } else {
                        ""
                    }
                )
            })
            .unwrap_or_default();
        Some(format!(
            "for {}{since}",
            crate::format::human_duration_bound(s, self.for_s_at_least)
        ))
    }

    /// What makes two findings one across snapshots beyond their kind: the part of the
    /// culprit that stays while the cause does (a hot spot's holder rotates, its object stays;
    /// a checkpoint's critical sections change, the checkpoint is one).
    fn identity(&self) -> String {
        let c = &self.culprit;
        match self.kind {
            FindingKind::LockChain => sids_words(&c.sids),
            FindingKind::BufferHotSpot | FindingKind::MutexContention => {
                c.object.clone().unwrap_or_default()
            }
            FindingKind::SlowDevice => c.chunk.map(|n| n.to_string()).unwrap_or_default(),
            FindingKind::ReplicaLag => c.peer.clone().unwrap_or_default(),
            // The reason named.
            FindingKind::ServerBlocked => self
                .evidence
                .first()
                .map(|e| e.fact.clone())
                .unwrap_or_default(),
            _ => String::new(),
        }
    }

    /// Sets its start, and its age and summary from it.
    fn set_since(&mut self, since: Since, at_s: f64, wall_start: Option<time::OffsetDateTime>) {
        let at = wall_start.and_then(|w| w.checked_add(time::Duration::seconds_f64(since.at)));
        self.since_s = Some((since.at * 10.0).round() / 10.0);
        self.since = at.map(crate::format::iso_utc);
        self.since_clock = at.map(crate::format::local_time);
        self.for_s = Some((at_s - since.at).max(0.0));
        self.for_s_at_least = since.at_least;
        if let Some((before, after)) = self.aged.take() {
            self.aged_summary(before, after);
        }
    }
}

/// Builds of the snapshot at most this far apart (seconds) see a finding continuously: the
/// wait tracker's rule (`SEEN_BEGIN_WITHIN`). After a longer gap (a slower interval, a replay
/// seek, a restart) what held before may have stopped in between: its start is not kept.
pub const CONTINUOUS_WITHIN_S: f64 = 1.5;

/// A finding across snapshots: its kind, whether it is above info (background that becomes a
/// cause starts anew), and [`Finding::identity`].
type Key = (FindingKind, bool, String);

/// A finding's first moment and whether it held already then.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Since {
    at: f64,
    at_least: bool,
}

impl Since {
    /// The earlier of two starts (each one a moment the finding is known to have held).
    fn earliest(a: Since, b: Since) -> Since {
        if a.at < b.at {
            a
        } else if b.at < a.at {
            b
        } else {
            Since {
                at: a.at,
                at_least: a.at_least && b.at_least,
            }
        }
    }
}

/// Since when each finding has held, across the snapshots of one watched instance: a finding
/// of the same kind and culprit keeps its start; one that stops holding is forgotten. The model
/// stays pure: the owner of the store keeps this beside it and passes it to each new snapshot
/// ([`crate::model::snapshot::Snapshot::track_findings`]).
#[derive(Debug, Clone, Default)]
pub struct FindingsHistory {
    held: HashMap<Key, Since>,
    /// The moment of the last snapshot stamped.
    last_at: Option<f64>,
    /// The sources whose data a finding could be read from at that snapshot.
    ready: Vec<String>,
}

impl FindingsHistory {
    /// Sets each finding's start (`since_s`, `for_s`, the age in its summary) from the
    /// snapshots seen before, the one at `at_s` included, and remembers them. The start is the
    /// earlier of: the first snapshot it held in (a lower bound of its age when that was the
    /// first one seen or followed a gap), and its oldest wait's start as the moment's facts
    /// tell. Never earlier than either shows it held.
    ///
    /// `ready` names the sources with data and how much (its first good sample, its second:
    /// rates need two). A finding first seen when a source has just had its first or second
    /// sample may have held before ifxtop could see it: its start is then an upper bound too.
    pub fn stamp(
        &mut self,
        findings: &mut [Finding],
        at_s: f64,
        ready: Vec<String>,
        wall_start: Option<time::OffsetDateTime>,
    ) {
        self.stamp_at(findings, at_s, at_s, ready, wall_start);
    }

    /// [`FindingsHistory::stamp`] for a snapshot built at `at_s` from data taken at
    /// `moment_s` (its `onstat -u`'s): a finding first seen then held from that moment, not from
    /// the build.
    pub fn stamp_at(
        &mut self,
        findings: &mut [Finding],
        at_s: f64,
        moment_s: f64,
        ready: Vec<String>,
        wall_start: Option<time::OffsetDateTime>,
    ) {
        let continuous = self
            .last_at
            .is_some_and(|last| at_s >= last && at_s - last <= CONTINUOUS_WITHIN_S);
        if !continuous {
            self.held.clear();
        }
        // New data, not a new cause, may be what shows a finding first seen now.
        let seen_begin = continuous && ready.iter().all(|r| self.ready.contains(r));
        let mut held: HashMap<Key, Since> = HashMap::new();
        for f in findings.iter_mut() {
            let key = (f.kind, f.severity > Severity::Info, f.identity());
            // First seen now: it began since the last snapshot, or before when there was none;
            // or at any moment before when what shows it is a rate or a setting.
            let seen = self.held.get(&key).copied().unwrap_or(Since {
                at: moment_s.min(at_s),
                at_least: !seen_begin || !f.start_seen,
            });
            let waits = f.for_s.map(|s| Since {
                at: at_s - s,
                at_least: f.for_s_at_least,
            });
            let since = waits.map_or(seen, |w| Since::earliest(w, seen));
            f.set_since(since, at_s, wall_start);
            held.entry(key)
                .and_modify(|s| *s = Since::earliest(*s, since))
                .or_insert(since);
        }
        self.held = held;
        self.last_at = Some(at_s);
        self.ready = ready;
    }
}

/// The line for a server with no finding above info.
pub const CALM: &str = "✓ calm: no finding above info";

/// What the rules cannot judge yet: an input that is a rate and has had one sample only. The
/// CPU VPs' load needs two `onstat -g glo` (10 s apart in the TUI): until then a server whose
/// CPU VPs are saturated would read as calm.
pub fn not_yet_judged(vitals: &Vitals) -> Vec<&'static str> {
    let cpu_known = vitals
        .vps
        .iter()
        .any(|v| v.class == "cpu" && v.busy_pct.is_some());
    if cpu_known {
        Vec::new()
    } else {
        vec!["CPU VP load"]
    }
}

/// The waits on now that may become a finding but that no rule has judged above info yet:
/// sessions waiting on locks, buffers, the checkpoint or the log (not their clients), and on a
/// mutex past an instant. The findings' thresholds are ages (a lock wait is a warning from
/// [`WARN_WAIT_S`]): until then they are watched, not calm.
pub fn unjudged_waits(waiters: &[WaiterRow]) -> Vec<&WaiterRow> {
    waiters
        .iter()
        .filter(|w| w.sessid.0 != 0 && !w.idle)
        .filter(|w| match w.reason {
            WaitReason::Lock
            | WaitReason::Buffer
            | WaitReason::Checkpoint
            | WaitReason::LogBuffer => true,
            WaitReason::Mutex => w.in_wait_s >= crate::model::harm::BRIEF_MUTEX_WAIT_S,
            _ => false,
        })
        .collect()
}

/// The line for no finding above info: [`CALM`] once every rule could judge, else what it could
/// not yet (`✓ no finding above info so far (CPU VP load not known yet)`); `◔ watching: ...`
/// while waits are on that no rule has judged above info yet (a lock chain's first seconds):
/// never `✓` above sessions visibly held up.
pub fn calm_line(
    waiters: &[WaiterRow],
    findings: &[Finding],
    vitals: &Vitals,
) -> std::borrow::Cow<'static, str> {
    let waits = unjudged_waits(waiters);
    if !waits.is_empty() {
        // The finding they already make at info, the oldest wait's first.
        let kinds = [
            FindingKind::LockChain,
            FindingKind::BufferHotSpot,
            FindingKind::MutexContention,
        ];
        if let Some(f) = findings
            .iter()
            .filter(|f| kinds.contains(&f.kind))
            .max_by(|a, b| a.for_s.unwrap_or(0.0).total_cmp(&b.for_s.unwrap_or(0.0)))
        {
            return format!("◔ watching: {} (no finding above info yet)", f.summary).into();
        }
        let mut by: BTreeMap<&'static str, usize> = BTreeMap::new();
        for w in &waits {
            *by.entry(wait_words(w.reason)).or_default() += 1;
        }
        let oldest = waits
            .iter()
            .max_by(|a, b| a.in_wait_s.total_cmp(&b.in_wait_s))
            .map(|w| crate::format::human_duration_bound(w.in_wait_s, w.in_wait_s_at_least))
            .unwrap_or_default();
        let what: Vec<String> = by.iter().map(|(k, n)| format!("{n} on {k}")).collect();
        return format!(
            "◔ watching: {} waiting ({}), the oldest {oldest} (no finding above info yet)",
            crate::format::count(waits.len() as u64, "session", "sessions"),
            what.join(", ")
        )
        .into();
    }
    let pending = not_yet_judged(vitals);
    if pending.is_empty() {
        CALM.into()
    } else {
        format!(
            "✓ no finding above info so far ({} not known yet)",
            pending.join(", ")
        )
        .into()
    }
}

/// What a wait is on, in a word.
fn wait_words(r: WaitReason) -> &'static str {
    match r {
        WaitReason::Lock => "locks",
        WaitReason::Buffer => "buffers",
        WaitReason::Checkpoint => "the checkpoint",
        WaitReason::LogBuffer => "the log",
        WaitReason::Mutex => "mutexes",
        _ => "other",
    }
}

/// The findings of a snapshot, the worst first.
pub fn build(snap: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(off) = snap.offline {
        out.push(
            Finding::new(
                FindingKind::Offline,
                Severity::Critical,
                format!("server off-line: {off}"),
                "start the server (oninit) or find why it stopped: its message log (onstat -m)",
            )
            .seen_to_begin()
            .fact("onstat -u", off.to_string()),
        );
        return out;
    }
    // Who is held up, by the head of their chain; brief mutex waits are background.
    let serious: Vec<&WaiterRow> = snap
        .waiters
        .iter()
        .filter(|w| !w.idle && w.sessid.0 != 0 || w.reason == WaitReason::Checkpoint)
        .collect();
    checkpoint(snap, &serious, &mut out);
    long_transaction(snap, &serious, &mut out);
    server_blocked(snap, &mut out);
    lock_chains(snap, &serious, &mut out);
    replica_lag(snap, &mut out);
    slow_device(snap, &mut out);
    buffer_hot_spots(snap, &serious, &mut out);
    mutexes(snap, &mut out);
    cpu(snap, &mut out);
    client_network(snap, &mut out);
    memory_reclaim(snap, &mut out);
    logs(snap, &mut out);
    out.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.kind.cmp(&b.kind))
            .then(b.impact.wait_s.total_cmp(&a.impact.wait_s))
    });
    out
}

/// The flight recorder stopped writing, `why` in its words (`collect/ring.rs`: a nearly full
/// disk, a write that failed).
pub(crate) fn ring_stopped(why: &str) -> Finding {
    Finding::new(
        FindingKind::RingStopped,
        Severity::Warning,
        why.to_string(),
        "free space on the ring's file system (or give --ring a directory on another); the ring \
         writes again once it has room",
    )
    .fact("ifxtop --ring", why.to_string())
}

/// Adds `f` to `findings` where their order puts it (the worst first).
pub(crate) fn insert(findings: &mut Vec<Finding>, f: Finding) {
    let at = findings.partition_point(|g| {
        g.severity > f.severity || (g.severity == f.severity && g.kind <= f.kind)
    });
    findings.insert(at, f);
}

/// `the top finding's line`, or the calm line when none is above info.
pub fn headline(findings: &[Finding]) -> Option<&Finding> {
    findings.first().filter(|f| f.severity > Severity::Info)
}

fn sids_words(sids: &[Sid]) -> String {
    sids.iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn checkpoint(snap: &Facts<'_>, serious: &[&WaiterRow], out: &mut Vec<Finding>) {
    let waits: Vec<&WaiterRow> = serious
        .iter()
        .copied()
        .filter(|w| w.reason == WaitReason::Checkpoint)
        .collect();
    let blocked = snap.blocked == Some("CKPT");
    if waits.is_empty() && !blocked {
        return;
    }
    // The sessions in critical sections the checkpoint waits for: the checkpoint waiters'
    // direct blockers, joined at the moment.
    let mut critical: Vec<Sid> = waits.iter().filter_map(|w| w.direct_blocker()).collect();
    critical.sort_unstable();
    critical.dedup();
    let mut f = Finding::new(
        FindingKind::CheckpointBlocked,
        Severity::Info,
        String::new(),
        "",
    )
    .seen_to_begin()
    .with_waits(&waits);
    // Every checkpoint blocks for a moment: the block's age (the banner's, or the oldest
    // checkpoint wait's) makes it a cause.
    let banner_s = snap.vitals.blocked_for_s.filter(|_| blocked);
    let block_s = banner_s.into_iter().chain(f.for_s).fold(0.0, f64::max);
    f.severity = if block_s >= CKPT_BLOCK_CRITICAL_S {
        Severity::Critical
    } else if block_s >= CKPT_BLOCK_WARN_S {
        Severity::Warning
    } else {
        Severity::Info
    };
    if banner_s.is_some_and(|b| f.for_s.is_none_or(|w| b > w)) {
        f.for_s = banner_s;
        f.for_s_at_least = snap.vitals.blocked_for_s_at_least;
    }
    if blocked {
        f = f.fact("onstat banner", "Blocked:CKPT".to_string());
    }
    if !waits.is_empty() {
        f = f.fact(
            "onstat -u",
            format!("{} threads wait for the checkpoint (C)", waits.len()),
        );
    }
    // What slows it: a slow chunk device, memory reclaim.
    let slow = snap
        .io
        .worst()
        .and_then(|c| Some((c, c.device_await_ms?)))
        .filter(|(c, aw)| *aw >= SLOW_AWAIT_MS && c.device_iops.unwrap_or(0.0) >= 1.0);
    let reclaim = reclaiming(snap);
    let mut why = Vec::new();
    if let Some((c, aw)) = slow {
        why.push(format!("chunk {} device {aw:.0} ms", c.chunk));
        f = f.fact(
            "/proc/diskstats",
            format!(
                "chunk {} on {}: {aw:.0} ms await",
                c.chunk,
                c.device_label()
            ),
        );
    }
    if let Some(r) = &reclaim {
        why.push("memory reclaim".to_string());
        f = f.fact("/proc/vmstat", r.clone());
    }
    let why = if why.is_empty() {
        String::new()
    } else {
        format!(", slowed by {}", why.join(" and "))
    };
    if critical.is_empty() {
        f.aged_summary(
            "checkpoint blocking".into(),
            format!(": flushing, {} threads wait{why}", waits.len()),
        );
        f.action = if slow.is_some() {
            "the checkpoint is flushing to a slow device: look at the chunk's device (the I/O pane)"
        } else if reclaim.is_some() {
            "the checkpoint crawls through memory reclaim: set vm.zone_reclaim_mode = 0"
        } else {
            "the checkpoint is flushing: wait for it; if it recurs, look at the flush time \
             (onstat -g ckp) and the LRU settings"
        }
        .to_string();
    } else {
        f.aged_summary(
            "checkpoint blocked".into(),
            format!(
                ": sid {} in a critical section holds up {}{why}",
                sids_words(&critical),
                waits.len()
            ),
        );
        f = f.fact(
            "onstat -u",
            format!(
                "sid {} in a critical section (flag X)",
                sids_words(&critical)
            ),
        );
        f.action = format!(
            "inside a critical section, where onmode -z cannot end it: wait for it to leave, \
             and find why it crawls{}",
            if reclaim.is_some() {
                " (memory reclaim: set vm.zone_reclaim_mode = 0)"
            } else if slow.is_some() {
                " (a slow device)"
            } else {
                " (a slow log device, memory reclaim)"
            }
        );
        f.culprit.sids = critical;
    }
    if let Some((c, _)) = slow {
        f.culprit.chunk = Some(c.chunk);
        f.culprit.device = c.device.clone();
    }
    // Reclaim blamed: its node is a culprit too (what Enter on the finding opens).
    if reclaim.is_some() {
        f.culprit.numa_node = reclaim_node(snap);
    }
    out.push(f);
}

/// The node with the least free memory: where reclaim bites (none on a single node).
fn reclaim_node(snap: &Facts<'_>) -> Option<u32> {
    snap.numa
        .nodes
        .iter()
        .filter_map(|n| Some((n.node, n.free_kb?)))
        .min_by_key(|(_, free)| *free)
        .map(|(n, _)| n)
        .filter(|_| snap.numa.nodes.len() > 1)
}

/// Direct reclaim going on, with zone_reclaim_mode on: in words.
fn reclaiming(snap: &Facts<'_>) -> Option<String> {
    let z = snap.numa.zone_reclaim_mode.filter(|z| *z != 0)?;
    let d = snap
        .numa
        .pgscan_direct_per_s
        .filter(|d| *d >= DIRECT_RECLAIM_PAGES_PER_S)?;
    Some(format!(
        "zone_reclaim_mode = {z}, direct reclaim scanning {d:.0} pages/s"
    ))
}

fn long_transaction(snap: &Facts<'_>, serious: &[&WaiterRow], out: &mut Vec<Finding>) {
    let blocked = snap.blocked == Some("LONGTX");
    let waits: Vec<&WaiterRow> = serious
        .iter()
        .copied()
        .filter(|w| w.reason == WaitReason::LogBuffer && !w.blockers.is_empty())
        .collect();
    let oldest = snap
        .vitals
        .logs
        .as_ref()
        .and_then(|l| l.oldest_transaction.as_ref());
    let spanned = oldest.map_or(0, |t| t.logs_spanned);
    if !blocked && waits.is_empty() && spanned < LONG_TXN_LOGS {
        return;
    }
    let severity = if blocked || !waits.is_empty() {
        Severity::Critical
    } else {
        Severity::Warning
    };
    let mut f = Finding::new(
        FindingKind::LongTransaction,
        severity,
        String::new(),
        "the oldest transaction holds the logical logs: add logs (onparams -a -d DBSPACE) \
         and wait for its rollback; onmode -z does not hurry a rollback",
    )
    .with_waits(&waits);
    if blocked {
        f = f.fact("onstat banner", "Blocked:LONGTX".to_string());
    }
    let holder = waits
        .iter()
        .find_map(|w| w.head_blocker)
        .or(oldest.and_then(|t| t.sessid));
    if let Some(t) = oldest {
        f = f.fact(
            "onstat -x",
            format!(
                "oldest transaction{} spans {} logs",
                t.sessid.map(|s| format!(" (sid {s})")).unwrap_or_default(),
                t.logs_spanned
            ),
        );
    }
    if !waits.is_empty() {
        f = f.fact(
            "onstat -u",
            format!("{} threads wait to write the log (G)", waits.len()),
        );
    }
    // Its age is the transaction's, from where its first log record is: exact where the log's
    // samples bracket it, else at least since the log's end passed it or it was first seen.
    if let Some((age, at_least)) = oldest
        .filter(|t| holder.is_none() || t.sessid == holder)
        .and_then(|t| t.age(snap.at_s))
    {
        if f.for_s.is_none_or(|w| age >= w) {
            f.for_s = Some(age);
            f.for_s_at_least = at_least;
        }
    }
    let who = holder
        .map(|s| format!("sid {s}"))
        .unwrap_or_else(|| "a transaction".into());
    let (before, after) = if blocked && !waits.is_empty() {
        (
            "LONGTX",
            format!(": {who} holds the logs, {} wait", waits.len()),
        )
    } else if blocked {
        (
            "LONGTX",
            format!(": {who} holds {spanned} logical logs, server blocked"),
        )
    } else if waits.is_empty() {
        (
            "long transaction",
            format!(": {who} holds {spanned} logical logs"),
        )
    } else {
        (
            "long transaction",
            format!(": {who} holds {spanned} logs, {} wait to log", waits.len()),
        )
    };
    f.aged_summary(before.into(), after);
    if spanned < LONG_TXN_LOGS && waits.is_empty() && !blocked {
        f.action = "let it commit or roll back".into();
    }
    f.culprit.sids = holder.into_iter().collect();
    out.push(f);
}

fn server_blocked(snap: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(b) = snap.blocked else {
        return;
    };
    if matches!(b, "CKPT" | "LONGTX") {
        return;
    }
    let (what, action) = match b {
        "ARCHIVE" => (
            "an archive holds the server",
            "wait for the archive (onstat -g arc), or end it",
        ),
        "MEDIA_FAILURE" => (
            "a media failure",
            "a chunk is down: see the message log (onstat -m) and onstat -d",
        ),
        "HANG_SYSTEM" => (
            "the server hangs",
            "see the message log (onstat -m) and call support",
        ),
        "DBS_DROP" => ("a dbspace is being dropped", "wait for the drop"),
        "DDLOG" => ("DDL logging waits", "see onstat -m"),
        "LBU" => (
            "the logs wait for a backup",
            "back up the logical logs (ontape -a, onbar -b -l)",
        ),
        _ => ("the server is blocked", "see the message log (onstat -m)"),
    };
    out.push(
        Finding::new(
            FindingKind::ServerBlocked,
            Severity::Critical,
            format!("server Blocked:{b}: {what}"),
            action,
        )
        .seen_to_begin()
        .fact("onstat banner", format!("Blocked:{b}")),
    );
}

/// The head's state in words: `idle in an open transaction` when it waits for its client
/// while others wait for its locks.
fn head_state(snap: &Facts<'_>, h: &HeadFacts<'_>) -> String {
    let idle =
        snap.waiters
            .iter()
            .any(|w| w.sessid == h.sid && w.reason == WaitReason::Condition && w.idle)
            || snap.sessions.iter().any(|s| {
                s.sessid == h.sid && s.state == crate::model::sessions::SessionState::Idle
            });
    if idle && h.locks > 0 {
        "idle in an open transaction".into()
    } else {
        h.state.to_string()
    }
}

fn lock_chains(snap: &Facts<'_>, serious: &[&WaiterRow], out: &mut Vec<Finding>) {
    for h in snap.heads {
        let waits: Vec<&WaiterRow> = serious
            .iter()
            .copied()
            .filter(|w| w.head_blocker == Some(h.sid) && w.reason == WaitReason::Lock)
            .collect();
        if waits.is_empty() {
            continue;
        }
        let mut f = Finding::new(FindingKind::LockChain, Severity::Info, String::new(), "")
            .seen_to_begin()
            .with_waits(&waits);
        f.severity = Severity::of_wait(f.for_s.unwrap_or(0.0));
        let object = waits.iter().find_map(|w| match &w.waiting_on {
            WaitTarget::Lock { object, .. } => object.clone(),
            _ => None,
        });
        let mut state = head_state(snap, h);
        // Its SQL, where it was read (the active sessions' statements, a drilled session, a
        // recording), whole: a screen cuts the line to its width, the JSON and a ticket keep
        // the statement.
        if let Some(sql) = h.sql {
            let words = sql.split_whitespace().collect::<Vec<_>>().join(" ");
            state = format!("{state}: {words}");
        }
        let on = object
            .as_deref()
            .map(|o| format!(" on {}", short_object(o)))
            .unwrap_or_default();
        f.aged_summary(
            "lock chain".into(),
            format!(": sid {} holds up {}{on} ({state})", h.sid, waits.len()),
        );
        f = f.fact(
            "onstat -k",
            format!(
                "sid {} holds {}; {} for them{on}",
                h.sid,
                crate::format::count(h.locks, "lock", "locks"),
                crate::format::count(waits.len() as u64, "session waits", "sessions wait")
            ),
        );
        f = f.fact("onstat -u", format!("sid {}: {state}", h.sid));
        f.action = h.action.map(str::to_string).unwrap_or_else(|| {
            format!(
                "onmode -z {} ends the session (or ask its application to commit)",
                h.sid
            )
        });
        f.culprit.sids = vec![h.sid];
        f.culprit.object = object;
        out.push(f);
    }
}

/// `customer (stores)` for `stores:'informix'.customer`.
fn short_object(o: &str) -> String {
    match crate::parsers::oncheck_pe::split_object(o) {
        Some(n) => format!("{} ({})", n.name, n.database),
        None => o.to_string(),
    }
}

fn replica_lag(snap: &Facts<'_>, out: &mut Vec<Finding>) {
    for p in &snap.replication.peers {
        let blocked = p.transmission.as_deref() == Some("Blocked");
        let lag = p.lag_pages.unwrap_or(0);
        // Falling behind: past the first threshold and further behind than the last sample.
        let growing = lag >= LAG_PAGES_INFO
            && p.lag_history
                .iter()
                .rev()
                .nth(1)
                .is_some_and(|prev| (lag as f64) > *prev);
        if !blocked && p.concern < Concern::Warn && lag < LAG_PAGES_INFO {
            continue;
        }
        let severity = if blocked || p.concern >= Concern::Alarm {
            Severity::Critical
        } else if p.concern >= Concern::Warn || growing {
            Severity::Warning
        } else {
            Severity::Info
        };
        let mut lag = Vec::new();
        if let Some(n) = p.lag_pages {
            lag.push(format!("{} log pages", crate::format::thousands(n)));
        }
        if let Some(s) = p.lag_s.or(p.lag_s_at_least) {
            lag.push(crate::format::human_duration_bound(s, p.lag_s.is_none()));
        }
        let mut f = Finding::new(
            FindingKind::ReplicaLag,
            severity,
            format!(
                "replica {} {}behind{}{}",
                p.name,
                if blocked {
                    "blocked, "
                } else if growing {
                    "falling "
                } else {
                    ""
                },
                if lag.is_empty() { "" } else { " " },
                lag.join(", ")
            ),
            if blocked {
                "log transmission to the secondary is blocked: look at the network to it and \
                 its apply rate; the primary's logs cannot be reused until it catches up"
            } else {
                "look at the network to the secondary and its apply rate"
            },
        )
        .fact(
            "onstat -g rss",
            format!(
                "{}: transmission {}, lag {}",
                p.name,
                p.transmission.as_deref().unwrap_or("?"),
                if lag.is_empty() {
                    "?".to_string()
                } else {
                    lag.join(", ")
                }
            ),
        );
        if let Some(v) = &p.verdict {
            f = f.fact("onstat -g cluster", v.clone());
        }
        // Its lag in seconds is how far behind it is, not since when: the finding's age is
        // from its first sight (a lower bound: the lag crossed the line between two samples).
        f.culprit.peer = Some(p.name.clone());
        out.push(f);
    }
}

/// A device's await that rose this many times over from its first kept sample, while
/// Informix's demand on the chunk stayed within [`FLAT_DEMAND`], is a device slowing down...
pub const SLOWING_FACTOR: f64 = 3.0;
/// ... once it reaches this (ms): the latency a database's data files should stay under (the
/// common guidance for database storage: under 10 ms good, over 20 ms slow). A device that
/// answered in 2 ms and now takes 10 with the same demand is failing (a SAN path, an array
/// rebuilding), before it is slow by [`SLOW_AWAIT_MS`].
pub const SLOWING_AWAIT_MS: f64 = 10.0;
/// Demand within this share of its first kept sample is flat.
pub const FLAT_DEMAND: f64 = 0.2;

/// The device's await rose [`SLOWING_FACTOR`] times over while the demand stayed flat: the
/// await at the start of the history.
fn slowing(c: &crate::model::io::ChunkRow, aw: f64) -> Option<f64> {
    let first = *c.await_history.first()?;
    let d0 = *c.demand_history.first()?;
    let d1 = *c.demand_history.last()?;
    let flat = d0 > 0.0 && ((d1 - d0) / d0).abs() <= FLAT_DEMAND;
    (aw >= SLOWING_AWAIT_MS && first > 0.0 && aw >= SLOWING_FACTOR * first && flat).then_some(first)
}

fn slow_device(snap: &Facts<'_>, out: &mut Vec<Finding>) {
    for c in &snap.io.chunks {
        let Some(aw) = c
            .device_await_ms
            .filter(|_| c.device_iops.unwrap_or(0.0) >= 1.0)
        else {
            continue;
        };
        let rising = slowing(c, aw);
        if aw < SLOW_AWAIT_MS && rising.is_none() {
            continue;
        }
        let severity = if aw >= VERY_SLOW_AWAIT_MS {
            Severity::Critical
        } else {
            Severity::Warning
        };
        // Sessions whose waits sit on this chunk's pages.
        let waits: Vec<&WaiterRow> = snap
            .waiters
            .iter()
            .filter(
                |w| matches!(&w.waiting_on, WaitTarget::Buffer { chunk, .. } if *chunk == c.chunk),
            )
            .collect();
        let mut f = Finding::new(
            FindingKind::SlowDevice,
            severity,
            format!(
                "slow device: chunk {}{} on {} answers in {aw:.0} ms{}",
                c.chunk,
                c.dbspace
                    .as_deref()
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default(),
                c.device_label(),
                rising
                    .map(|from| format!(", up from {from:.0} ms, demand flat"))
                    .unwrap_or_default()
            ),
            "the device is slow, not Informix's demand: look at the storage (SAN, multipath, \
             the disks under it)",
        )
        .fact(
            "/proc/diskstats",
            format!(
                "{}: {aw:.0} ms await{}",
                c.device_label(),
                c.device_util_pct
                    .map(|u| format!(", {u:.0}% busy"))
                    .unwrap_or_default()
            ),
        );
        if let Some(v) = &c.verdict {
            f = f.fact("onstat -g iof", v.clone());
        }
        f.impact = Impact {
            sessions: waits.len(),
            wait_s: waits.iter().map(|w| w.in_wait_s).sum(),
        };
        f.culprit.chunk = Some(c.chunk);
        f.culprit.device = c.device.clone().or_else(|| Some(c.path.clone()));
        out.push(f);
    }
}

fn buffer_hot_spots(snap: &Facts<'_>, serious: &[&WaiterRow], out: &mut Vec<Finding>) {
    // Buffer waiters by the object of their page, joined at the moment.
    let mut by_object: BTreeMap<String, Vec<&WaiterRow>> = BTreeMap::new();
    for w in serious.iter().filter(|w| w.reason == WaitReason::Buffer) {
        let object = match &w.waiting_on {
            WaitTarget::Buffer {
                object: Some(o), ..
            } => o.clone(),
            WaitTarget::Buffer { chunk, page, .. } => format!("{chunk}:{page}"),
            _ => continue,
        };
        by_object.entry(object).or_default().push(w);
    }
    for (object, waits) in by_object {
        let mut f = Finding::new(
            FindingKind::BufferHotSpot,
            Severity::Info,
            String::new(),
            "",
        )
        .seen_to_begin()
        .with_waits(&waits);
        let row = snap.hotspots.iter().find(|h| h.object == object);
        let pages = row.map_or(0, |r| r.distinct_pages);
        let span = row.map_or(0.0, |r| r.span_s);
        // The pages waited on over the window: a page that moves is the table's last page, its
        // holder rotating; one page waited on for long is one hot page (an index leaf, a
        // counter row). Until then it may be either: a table's last page under inserts fills
        // in seconds.
        let (how, action) = if pages > 1 {
            (
                "last-page inserts: the holder rotates",
                "holds a hot page for the moment: its holder changes every few seconds, so \
                 ending it only moves the wait; the fix is the table's design (spread the \
                 inserts: a fragmented table, a key that does not always grow)",
            )
        } else if span >= ONE_PAGE_AFTER_S {
            (
                "one page",
                "one page everyone wants (an index leaf all the same keys land on, a counter \
                 row): the fix is the index's or the table's design (a key that spreads), \
                 ending the holder only moves the wait",
            )
        } else {
            (
                "one page so far: a moving last page or one hot page, too soon to tell",
                "many sessions want one page: ending its holder only moves the wait; in a few \
                 seconds ifxtop tells a table's last page (inserts) from one hot page (an \
                 index leaf)",
            )
        };
        f.severity = if waits.len() >= 2 {
            Severity::of_wait(f.for_s.unwrap_or(0.0)).max(Severity::Warning)
        } else {
            Severity::of_wait(f.for_s.unwrap_or(0.0))
        };
        f.aged_summary(
            if pages > 1 { "hot pages" } else { "hot page" }.into(),
            format!(
                ": {} wait on {} ({how})",
                waits.len(),
                short_object(&object)
            ),
        );
        f.action = action.to_string();
        f = f.fact(
            "onstat -X",
            format!("{} threads wait for buffers of {object}", waits.len()),
        );
        if let Some(r) = row {
            f = f.fact(
                "onstat -X",
                format!(
                    "{} distinct pages waited on, in {} of the last {} samples",
                    r.distinct_pages, r.samples_window, r.window_samples
                ),
            );
        }
        let mut holders: Vec<Sid> = waits.iter().filter_map(|w| w.direct_blocker()).collect();
        holders.sort_unstable();
        holders.dedup();
        f.culprit.sids = holders;
        f.culprit.object = Some(object);
        out.push(f);
    }
}

fn mutexes(snap: &Facts<'_>, out: &mut Vec<Finding>) {
    for m in snap.vitals.mutexes.iter().filter(|m| m.kind == "mutex") {
        let waits: Vec<&WaiterRow> = snap
            .waiters
            .iter()
            .filter(|w| {
                w.reason == WaitReason::Mutex
                    && matches!(&w.waiting_on, WaitTarget::Latch { address, .. } if *address == m.address)
            })
            .collect();
        let longest = waits
            .iter()
            .map(|w| w.in_wait_s)
            .fold(m.longest_wait_s.map_or(0.0, |s| s as f64), f64::max);
        // Brief mutex waits are the background of a busy server.
        if longest < crate::model::harm::BRIEF_MUTEX_WAIT_S {
            continue;
        }
        let n = m.waiters.max(waits.len());
        // A few threads a second queue on the busiest mutexes of any large server: a crowd, or
        // a wait that lasts, is contention.
        let severity = if n >= MUTEX_WAITERS_WARN {
            Severity::of_wait(longest).max(Severity::Warning)
        } else {
            Severity::of_wait(longest)
        };
        let holder = m
            .holder_sessid
            .map(|s| format!("held by sid {s}"))
            .unwrap_or_else(|| "holder unknown at this moment".into());
        let at_least = waits
            .iter()
            .any(|w| w.in_wait_s >= longest && w.in_wait_s_at_least);
        let state = m.holder_sessid.and_then(|sid| {
            snap.heads
                .iter()
                .find(|h| h.sid == sid)
                .map(|h| head_state(snap, h))
        });
        let action = crate::model::harm::mutex_advice(&crate::model::harm::MutexFacts {
            name: Some(&m.name),
            holder: m.holder_sessid,
            holder_state: state.as_deref(),
            waiting: n,
            longest_s: longest,
            longest_at_least: at_least,
        });
        let mut f = Finding::new(
            FindingKind::MutexContention,
            severity,
            format!("mutex contention: {n} wait on {} ({holder})", m.name),
            &action,
        )
        .seen_to_begin()
        .with_waits(&waits)
        .fact(
            "onstat -g lmx",
            format!("{}: {n} waiters, {holder}", m.name),
        );
        f.impact.sessions = f.impact.sessions.max(n);
        f.for_s = Some(longest);
        f.culprit.object = Some(m.name.clone());
        f.culprit.sids = m.holder_sessid.into_iter().collect();
        out.push(f);
    }
}

fn cpu(snap: &Facts<'_>, out: &mut Vec<Finding>) {
    let v = &snap.vitals;
    let Some(busy) = v
        .vps
        .iter()
        .find(|x| x.class == "cpu")
        .and_then(|c| c.busy_pct)
    else {
        return;
    };
    let ready = v.ready_queue.unwrap_or(0);
    if busy < CPU_BUSY_PCT || ready < READY_QUEUE_WARN {
        return;
    }
    let mut f = Finding::new(
        FindingKind::CpuSaturation,
        Severity::Warning,
        format!("CPU saturated: CPU VPs {busy:.0}% busy, {ready} threads ready"),
        "the CPU VPs are saturated: find the busiest sessions (Sessions pane), their plans \
         (sequential scans); more CPU VPs only help if the host has idle cores",
    )
    .fact("onstat -g glo", format!("CPU VPs {busy:.0}% busy"))
    .fact("onstat -g rea", format!("{ready} threads ready to run"));
    f.impact.sessions = ready;
    out.push(f);
}

fn client_network(snap: &Facts<'_>, out: &mut Vec<Finding>) {
    // Sessions waiting for their client with bytes queued towards it.
    let waits: Vec<&WaiterRow> = snap
        .waiters
        .iter()
        .filter(|w| {
            w.reason == WaitReason::Condition
                && !w.idle
                && !w.idle_unknown
                && w.socket.as_ref().is_some_and(|s| s.send_q > 0)
        })
        .collect();
    if waits.is_empty() {
        return;
    }
    let queued: u64 = waits
        .iter()
        .filter_map(|w| w.socket.as_ref().map(|s| s.send_q))
        .sum();
    let (trend, peak) = send_q_trend(snap.sockets, &waits);
    let trend_words = trend
        .map(|t| format!(" {}", t.as_str()))
        .unwrap_or_default();
    let peak_words = match (trend, peak) {
        (Some(Trend::Draining), Some(p)) if p > queued => {
            format!(" (peak {})", crate::format::human_bytes(p))
        }
        _ => String::new(),
    };
    // The client hosts a DBA must go and look at, the most sessions first.
    let mut by_host: BTreeMap<&str, usize> = BTreeMap::new();
    for w in &waits {
        if let Some(s) = &w.socket {
            *by_host.entry(s.remote.host.as_str()).or_default() += 1;
        }
    }
    let mut hosts: Vec<HostCount> = by_host
        .into_iter()
        .map(|(host, sessions)| HostCount {
            host: host.to_string(),
            sessions,
        })
        .collect();
    hosts.sort_by(|a, b| b.sessions.cmp(&a.sessions).then(a.host.cmp(&b.host)));
    let host_words = hosts
        .iter()
        .take(3)
        .map(|h| {
            if h.sessions > 1 {
                format!("{} ×{}", h.host, h.sessions)
            } else {
                h.host.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    let more_hosts = hosts.len().saturating_sub(3);
    let host_words = if more_hosts > 0 {
        format!("{host_words} +{more_hosts} more")
    } else {
        host_words
    };
    // A queue that drains is a client catching up; one that grows or stays full is a client
    // (or a network) that does not keep up.
    let severity = if trend == Some(Trend::Draining) {
        Severity::Info
    } else {
        Severity::Warning
    };
    let mut f = Finding::new(
        FindingKind::ClientNetwork,
        severity,
        format!(
            "clients not reading: {} sessions on {host_words}, Send-Q {}{trend_words}{peak_words}",
            waits.len(),
            crate::format::human_bytes(queued),
        ),
        "the server waits for clients that do not read what it sent: look at the clients and \
         the network to them (FET_BUF_SIZE, a slow WAN link); nothing to do on the server",
    )
    .seen_to_begin()
    .with_waits(&waits)
    .fact(
        "/proc/net/tcp",
        format!(
            "{} client connections with a Send-Q, {} queued{}",
            waits.len(),
            crate::format::human_bytes(queued),
            peak.filter(|p| *p > queued)
                .map(|p| format!(", {} at its peak", crate::format::human_bytes(p)))
                .unwrap_or_default()
        ),
    )
    .fact("onstat -g ntt", format!("client hosts: {host_words}"));
    let mut sids: Vec<Sid> = waits.iter().map(|w| w.sessid).collect();
    sids.sort_unstable();
    sids.dedup();
    f.culprit.sids = sids;
    f.culprit.hosts = hosts;
    f.trend = trend;
    out.push(f);
}

/// Which way the waiting sessions' Send-Q goes, summed over their connections: their latest
/// sample against the one before (`None` before two samples); and the sum's largest value over
/// the samples the connections keep (its peak).
fn send_q_trend(sockets: &[SocketRow], waits: &[&WaiterRow]) -> (Option<Trend>, Option<u64>) {
    let rows: Vec<&SocketRow> = waits
        .iter()
        .filter_map(|w| {
            let s = w.socket.as_ref()?;
            sockets
                .iter()
                .find(|r| r.remote == s.remote && r.local == s.local)
        })
        .collect();
    let len = rows.iter().map(|r| r.trend.len()).min().unwrap_or(0);
    if rows.is_empty() || len == 0 {
        return (None, None);
    }
    // The sums, aligned from the latest sample back (every connection is in each sample).
    let sums: Vec<u64> = (0..len)
        .map(|k| rows.iter().map(|r| r.trend[r.trend.len() - len + k]).sum())
        .collect();
    let peak = sums.iter().copied().max();
    let trend = match sums.as_slice() {
        [.., before, now] if now > before => Some(Trend::Growing),
        [.., before, now] if now < before => Some(Trend::Draining),
        [.., _, _] => Some(Trend::Steady),
        _ => None,
    };
    (trend, peak)
}

fn memory_reclaim(snap: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(z) = snap.numa.zone_reclaim_mode.filter(|z| *z != 0) else {
        return;
    };
    let direct = snap
        .numa
        .pgscan_direct_per_s
        .filter(|d| *d >= DIRECT_RECLAIM_PAGES_PER_S);
    let mut f = Finding::new(
        FindingKind::MemoryReclaim,
        if direct.is_some() {
            Severity::Warning
        } else {
            Severity::Info
        },
        match direct {
            Some(d) => {
                format!("memory reclaim: zone_reclaim_mode = {z}, direct reclaim {d:.0} pages/s")
            }
            None => format!("zone_reclaim_mode = {z}: local-node reclaim may stall I/O"),
        },
        "set vm.zone_reclaim_mode = 0 (sysctl): the kernel then uses another node's memory \
         instead of reclaiming on the local one",
    )
    .fact("/proc/sys/vm/zone_reclaim_mode", z.to_string());
    if let Some(d) = direct {
        f = f.fact("/proc/vmstat", format!("pgscan_direct {d:.0}/s"));
    }
    f.culprit.numa_node = reclaim_node(snap);
    out.push(f);
}

fn logs(snap: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(l) = &snap.vitals.logs else {
        return;
    };
    if l.total == 0 || l.not_backed_up == 0 {
        return;
    }
    let pct = 100.0 * l.not_backed_up as f64 / l.total as f64;
    if pct < LOGS_NOT_BACKED_UP_PCT {
        return;
    }
    out.push(
        Finding::new(
            FindingKind::LogsNotBackedUp,
            Severity::Warning,
            format!(
                "logs not backed up: {} of {} logical logs",
                l.not_backed_up, l.total
            ),
            "back up the logical logs (ontape -a, onbar -b -l): the server blocks when none \
             is free",
        )
        .fact(
            "onstat -l",
            format!(
                "{} of {} logs used and not backed up",
                l.not_backed_up, l.total
            ),
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock_chain(head: u64, for_s: Option<f64>, at_least: bool) -> Finding {
        // Made of waits, read every second: seen to begin, as the rule makes it.
        let mut f = Finding::new(FindingKind::LockChain, Severity::Warning, String::new(), "")
            .seen_to_begin();
        f.for_s = for_s;
        f.for_s_at_least = at_least;
        f.culprit.sids = vec![Sid(head)];
        f.aged_summary("lock chain".into(), format!(": sid {head} holds up 2"));
        f
    }

    fn stamped(h: &mut FindingsHistory, mut f: Vec<Finding>, at: f64) -> Vec<Finding> {
        h.stamp(&mut f, at, vec!["onstat -u".into()], None);
        f
    }

    /// A finding first seen in ifxtop's first snapshot began then or before: a lower bound
    /// that grows while it holds; one that stops and holds again starts anew, exactly.
    #[test]
    fn since_is_kept_while_it_holds_and_reset_when_it_stops() {
        let mut h = FindingsHistory::default();
        let f = stamped(&mut h, vec![lock_chain(812, None, false)], 10.0);
        assert_eq!((f[0].since_s, f[0].for_s), (Some(10.0), Some(0.0)));
        assert!(f[0].for_s_at_least);
        assert_eq!(f[0].summary, "lock chain: sid 812 holds up 2");
        assert_eq!(f[0].held_words(), None);
        let f = stamped(&mut h, vec![lock_chain(812, None, false)], 11.0);
        let f2 = stamped(&mut h, vec![lock_chain(812, None, false)], 12.0);
        assert_eq!(f[0].since_s, Some(10.0));
        assert_eq!((f2[0].since_s, f2[0].for_s), (Some(10.0), Some(2.0)));
        assert!(f2[0].for_s_at_least);
        assert_eq!(f2[0].summary, "lock chain ≥2s: sid 812 holds up 2");
        assert_eq!(f2[0].held_words().as_deref(), Some("for ≥2s"));
        // It stops; it holds again: seen to begin between two snapshots.
        stamped(&mut h, vec![], 13.0);
        let f = stamped(&mut h, vec![lock_chain(812, None, false)], 14.0);
        assert_eq!(f[0].since_s, Some(14.0));
        assert!(!f[0].for_s_at_least);
        let f = stamped(&mut h, vec![lock_chain(812, None, false)], 15.0);
        assert_eq!(f[0].summary, "lock chain 1s: sid 812 holds up 2");
        // Another head is another finding.
        let f = stamped(&mut h, vec![lock_chain(813, None, false)], 16.0);
        assert_eq!(f[0].since_s, Some(16.0));
    }

    /// After a gap (a replay seek forward, a slower interval) or a step back in time (a seek
    /// back, a restart), what held before is not assumed to have held in between.
    #[test]
    fn a_gap_or_a_seek_back_forgets_the_start() {
        let mut h = FindingsHistory::default();
        stamped(&mut h, vec![lock_chain(812, None, false)], 10.0);
        stamped(&mut h, vec![lock_chain(812, None, false)], 11.0);
        let f = stamped(&mut h, vec![lock_chain(812, None, false)], 100.0);
        assert_eq!(f[0].since_s, Some(100.0));
        assert!(f[0].for_s_at_least);
        let f = stamped(&mut h, vec![lock_chain(812, None, false)], 101.0);
        assert_eq!((f[0].since_s, f[0].for_s), (Some(100.0), Some(1.0)));
        let f = stamped(&mut h, vec![lock_chain(812, None, false)], 50.0);
        assert_eq!((f[0].since_s, f[0].for_s), (Some(50.0), Some(0.0)));
        assert!(f[0].for_s_at_least);
    }

    /// The oldest wait's start, when the moment's facts know it to be earlier, is the start;
    /// it stays when that waiter leaves and the chain holds on with younger waits.
    #[test]
    fn an_older_wait_moves_the_start_back_and_it_stays() {
        let mut h = FindingsHistory::default();
        let f = stamped(&mut h, vec![lock_chain(812, Some(30.0), false)], 100.0);
        assert_eq!((f[0].since_s, f[0].for_s), (Some(70.0), Some(30.0)));
        assert!(!f[0].for_s_at_least);
        assert_eq!(f[0].summary, "lock chain 30s: sid 812 holds up 2");
        let f = stamped(&mut h, vec![lock_chain(812, Some(1.0), false)], 101.0);
        assert_eq!((f[0].since_s, f[0].for_s), (Some(70.0), Some(31.0)));
        assert!(!f[0].for_s_at_least);
        assert_eq!(f[0].summary, "lock chain 31s: sid 812 holds up 2");
        // A wait older than ifxtop's first sample: a lower bound.
        let mut h = FindingsHistory::default();
        let f = stamped(&mut h, vec![lock_chain(812, Some(6.0), true)], 100.0);
        assert_eq!(f[0].since_s, Some(94.0));
        assert!(f[0].for_s_at_least);
    }

    /// A finding first seen when a source has just become ready may have held before: a
    /// lower bound; once the data is steady, a new finding was seen to begin.
    #[test]
    fn a_finding_shown_by_new_data_is_a_lower_bound() {
        let mut h = FindingsHistory::default();
        let u = || vec!["onstat -u".to_string()];
        let mut f = vec![];
        h.stamp(&mut f, 10.0, u(), None);
        let mut f = vec![lock_chain(812, None, false)];
        h.stamp(
            &mut f,
            11.0,
            vec!["onstat -u".into(), "onstat -k".into()],
            None,
        );
        assert_eq!(f[0].since_s, Some(11.0));
        assert!(f[0].for_s_at_least);
        let mut f = vec![lock_chain(813, None, false)];
        h.stamp(
            &mut f,
            12.0,
            vec!["onstat -u".into(), "onstat -k".into()],
            None,
        );
        assert!(!f[0].for_s_at_least);
    }

    /// A hot spot whose holder rotates is one finding: its object stays.
    #[test]
    fn a_hot_spot_keeps_its_start_while_its_holder_rotates() {
        let hot = |holder: u64| {
            let mut f = Finding::new(
                FindingKind::BufferHotSpot,
                Severity::Warning,
                "hot pages".into(),
                "",
            );
            f.culprit.sids = vec![Sid(holder)];
            f.culprit.object = Some("stores:'informix'.orders".into());
            f
        };
        let mut h = FindingsHistory::default();
        stamped(&mut h, vec![hot(1)], 10.0);
        let f = stamped(&mut h, vec![hot(2)], 11.0);
        assert_eq!((f[0].since_s, f[0].for_s), (Some(10.0), Some(1.0)));
    }

    /// With the session's wall clock, the start reads as a time, a lower bound as `or before`.
    #[test]
    fn since_reads_as_a_time_of_day() {
        let start = time::macros::datetime!(2026-11-26 13:10:00 UTC);
        let mut h = FindingsHistory::default();
        let mut f = vec![lock_chain(812, Some(40.0), true)];
        h.stamp(&mut f, 42.0, Vec::new(), Some(start));
        assert_eq!(f[0].since.as_deref(), Some("2026-11-26T13:10:02Z"));
        assert_eq!(
            f[0].held_words().as_deref(),
            Some("for ≥40s, since 13:10:02 or before")
        );
        let json = serde_json::to_value(&f[0]).expect("json");
        assert_eq!(json["since_s"], 2.0);
        assert_eq!(json["since"], "2026-11-26T13:10:02Z");
        assert_eq!(json["for_s_at_least"], true);
    }
}
