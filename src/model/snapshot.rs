//! The snapshot: every pane's rows derived from the store at one moment. Views draw it, freeze
//! keeps it, `ifxtop snapshot` prints it. Rebuilt when data changes, never per frame.

use crate::ids::{Addr, Sid};
use crate::model::numa::{self, NumaView};
use crate::model::waiters::{join_chains, verdict, SocketRef, WaitIndex, WaitTarget, WaiterRow};
use crate::parsers::numa::NodeMeminfo;
use crate::parsers::onstat_u::{OnstatU, WaitReason};
use crate::source::Source;
use crate::store::hotspots::HotspotRow;
use crate::store::sockets::SocketRow;
use crate::store::Store;
use compact_str::CompactString;
use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Duration;

/// What the banner of the latest onstat said.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct ServerInfo {
    pub(crate) name: Option<String>,
    pub(crate) version: Option<String>,
    /// Informix 15.0's storage mode from its banner's second line (`Compatibility mode`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) storage_mode: Option<String>,
    pub mode: Option<String>,
    pub mode_flags: Vec<String>,
    pub(crate) uptime_s: Option<u64>,
    pub blocked: Option<String>,
    /// The off-line message when the last onstat -u found the server down.
    pub(crate) offline: Option<String>,
}

/// A head blocker: the root of a blocker tree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeadBlocker {
    pub sid: Sid,
    pub user: String,
    /// `running`, `in a read`, `waiting: condition`...
    pub state: String,
    pub locks: u64,
    /// Waiters whose chain ends at this session.
    pub blocked: usize,
    /// The harm it causes: heads are ranked by it.
    pub harm: crate::model::harm::Harm,
    /// What helps, in the words the session screen shows (`onmode -z 812 ends the session...`
    /// only where ending it frees what others wait for).
    pub action: Option<String>,
    /// `onmode -z SID`, only where ending the session frees what others wait for.
    pub command: Option<String>,
    /// Its current statement, where one was read lately (its screen's `onstat -g sql`, or the
    /// active sessions' read in turn); `null` when not read.
    pub sql: Option<String>,
}

/// Counts for the Waiters pane's summary line.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct WaitSummary {
    /// Per reason letter (B C G L S T Y X D): number of threads waiting.
    pub by_reason: BTreeMap<char, usize>,
    pub threads: usize,
    /// User sessions (the daemons' session 0 is none), as the Sessions pane counts them.
    pub sessions: usize,
    pub idle: usize,
}

/// A period in seconds, or `null` for none: a one-shot or on-demand source's period is
/// `Duration::MAX` (1.8e19 s), which says "never again", not a number to show or compute with.
fn period_or_null<S: serde::Serializer>(period_s: &f64, s: S) -> Result<S::Ok, S::Error> {
    // A year: no polled source has a period anywhere near it.
    if period_s.is_finite() && *period_s < 365.0 * 86_400.0 {
        s.serialize_f64(*period_s)
    } else {
        s.serialize_none()
    }
}

/// Health of one source, for the header and the status line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourceStatus {
    pub source: String,
    /// Its short name in the header (`-u`, `con`), from the registry.
    #[serde(skip)]
    pub(crate) short: &'static str,
    pub(crate) age_s: Option<f64>,
    /// How often it is collected at an interval of 1 s: data older than a few periods is stale.
    /// A source collected once or on demand has no period (`Duration::MAX`): `null` in JSON.
    #[serde(serialize_with = "period_or_null")]
    pub(crate) period_s: f64,
    pub error: Option<String>,
    /// What kind of failure `error` is.
    pub(crate) failure: Option<crate::error::Failure>,
    pub(crate) took_ms: u64,
    pub(crate) runs: u64,
    pub(crate) failures: u64,
    /// How it was collected: in one `onstat -i` with other options, or one call per option
    /// and why (an onstat without interactive mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) via: Option<String>,
    /// Milliseconds of CPU a call (its share of a call shared with other sources), when a
    /// process ran for it here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cpu_ms_per_call: Option<f64>,
    /// Runs a minute, once it has been collected for a full minute and run twice (a rate
    /// over less says nothing: an `oncheck -pe` run once in 25 s is not 2.4 calls a minute).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) calls_per_min: Option<f64>,

    /// Bytes of output a call (its part of a call shared with other sources), once one
    /// answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) bytes_per_call: Option<f64>,
    /// Read at the moment of the latest `onstat -u` but printed a second later by the server's
    /// clock (the call stalled between the two): what changes within a second (the holders it
    /// names, its waits' ages) is not joined at this moment.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub late: bool,
}

/// What ifxtop costs the server it runs on (`source::cost`): its own CPU, and the processes
/// and file reads it asks of the server, as rates once there is a full minute to count over.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Cost {
    /// ifxtop's own CPU time since it started, and its share of one core since the first
    /// reading (the demo's simulation runs inside ifxtop: it is counted in).
    pub self_cpu_s: Option<f64>,
    pub self_core_share: Option<f64>,
    /// Its children's (onstat, cat, ssh) CPU time, and their share of one core.
    pub children_cpu_s: Option<f64>,
    pub children_core_share: Option<f64>,
    /// `measured`, or why not (the demo and a replay start no process).
    pub children: String,
    /// The seconds the counts below are over (since the first source ran).
    pub over_s: f64,
    /// Processes started: onstat (one `onstat -i` for several options is one), other commands
    /// (oncheck, dbaccess, ...); and files read (`/proc`, `/sys`).
    pub onstat_processes: f64,
    pub other_processes: f64,
    pub file_reads: u64,
    /// The same a minute, once `over_s` is a full minute (none before).
    pub onstat_processes_per_min: Option<f64>,
    pub other_processes_per_min: Option<f64>,
    pub file_reads_per_min: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Snapshot {
    /// The wall-clock time of the moment shown (ISO 8601, UTC), when known.
    pub time: Option<String>,
    /// The instance's name as the fleet shows it: the server, `@host` for a remote one.
    pub instance: Option<String>,
    /// The host the instance runs on.
    pub host: Option<String>,
    /// Session time the snapshot was built at (seconds).
    pub at_s: f64,
    pub server: ServerInfo,
    pub summary: WaitSummary,
    pub waiters: Vec<WaiterRow>,
    pub hotspots: Vec<HotspotRow>,
    pub sockets: Vec<SocketRow>,
    pub numa: NumaView,
    pub sources: Vec<SourceStatus>,
    /// What ifxtop costs the server (`None` before any source ran).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
    /// Share of buffer pages with waiters that did not resolve through the extent map.
    pub unresolved_share: Option<f64>,
    pub extents_loaded: bool,
    /// The listener ports the Sockets pane filters on (empty: unknown, all connections).
    pub ports: Vec<u16>,
    /// Sessions that block others without being blocked themselves, most waiters first.
    pub heads: Vec<HeadBlocker>,
    /// Every user session with its state.
    pub sessions: Vec<crate::model::sessions::SessionRow>,
    /// What the sessions' `cpu_percent` covers, or why it is not known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_cpu: Option<SessionCpuSpan>,
    /// When the sessions' `memory_bytes` were read (`onstat -g ses`, session seconds; `None`
    /// before the first read): a slow fact, of its own moment, not of `at_s`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_memory_at_s: Option<f64>,
    /// The causes this moment shows, the worst first (`model/findings.rs`).
    pub findings: Vec<crate::model::findings::Finding>,
    /// The moment of the `onstat -u` the fast facts were joined at (session seconds).
    #[serde(skip)]
    pub moment_s: Option<f64>,
    /// What the thread lists read at the moment of the `onstat -u` say of the sessions with no
    /// wait flag (on a CPU VP, ready for one, in I/O), for database time.
    #[serde(skip)]
    pub run: crate::model::activity::RunStates,
    /// Database time over a window ending at this moment (`snapshot --window`, the Activity
    /// pane).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub activity: Option<crate::model::activity::Report>,
    /// The samples of the Activity pane's chart over its window.
    #[serde(skip)]
    pub activity_chart: Vec<crate::model::activity::ChartPoint>,
    /// The blocker tree of the Waiters pane.
    #[serde(skip)]
    pub tree: Vec<crate::model::tree::TreeLine>,
    /// The sessions drilled into, built with the rest so a frozen screen keeps them too.
    #[serde(skip)]
    pub session_views: Vec<crate::model::session::SessionView>,
    /// The buffer hot spot opened, likewise.
    #[serde(skip)]
    pub hotspot_view: Option<crate::model::hotspot::HotspotView>,
    /// Each chunk with its device: rates, Informix's and the device's latency, a verdict.
    pub io: crate::model::io::IoView,
    /// The server's part in replication and its peers' lag.
    pub replication: crate::model::io::Replication,
    /// The server's vital signs: `rates`, `checkpoints`, `logs`, `vps`, `ready_queue`,
    /// `mutexes`, `memory` at the JSON's top level.
    #[serde(flatten)]
    pub vitals: crate::model::vitals::Vitals,
}

/// Each session's memory, total and used, from the last `onstat -g ses` (the list): empty
/// before it is read. A session it does not name has no figure (unknown, not 0).
fn session_memory(store: &Store) -> rustc_hash::FxHashMap<Sid, (u64, u64)> {
    store
        .get(crate::source::key::OnstatGSesList)
        .map(|l| {
            l.sessions
                .iter()
                .map(|r| (r.sid, (r.total_memory, r.used_memory)))
                .collect()
        })
        .unwrap_or_default()
}

/// What the sessions' CPU figures cover (`None` before any `onstat -g cpu`).
fn session_cpu_span(store: &Store) -> Option<SessionCpuSpan> {
    if let Some((from, to)) = store.cpu.interval() {
        return Some(SessionCpuSpan {
            from_s: Some(from.as_secs_f64()),
            to_s: Some(to.as_secs_f64()),
            unknown: None,
        });
    }
    store.cpu.unknown().map(|why| SessionCpuSpan {
        from_s: None,
        to_s: None,
        unknown: Some(why.words()),
    })
}

/// The interval the sessions' CPU figures cover (two `onstat -g cpu` samples), or why they are
/// not known.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionCpuSpan {
    /// Session seconds of the two samples.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_s: Option<f64>,
    /// Why no session has a figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<&'static str>,
}

/// What holds the checkpoint up, in words: `server Blocked:CKPT; in a critical section: sid 882`.
/// In `CKPT INP` with nobody in a critical section, the checkpoint itself is what the waiters
/// wait for: `the checkpoint is flushing, 12s so far` (from its oldest waiter's wait).
fn checkpoint_words(u: &OnstatU, waiters: &[WaiterRow]) -> String {
    let mut why = Vec::new();
    if let Some(h) = &u.header {
        if let Some(b) = &h.blocked {
            why.push(format!("server Blocked:{b}"));
        } else if let Some(f) = h.checkpoint_flag() {
            why.push(format!("server {f}"));
        }
    }
    let mut critical: Vec<String> = crate::model::waiters::critical_section_threads(u)
        .iter()
        .map(|(s, _)| s.to_string())
        .collect();
    critical.dedup();
    if !critical.is_empty() {
        why.push(format!(
            "held up by sid {} in a critical section",
            critical.join(", ")
        ));
    } else if u
        .header
        .as_ref()
        .and_then(|h| h.checkpoint_flag())
        .is_some_and(|f| f.contains("INP"))
    {
        let oldest = waiters
            .iter()
            .filter(|w| w.reason == WaitReason::Checkpoint)
            .max_by(|a, b| a.in_wait_s.total_cmp(&b.in_wait_s));
        why.push(match oldest {
            Some(w) => format!(
                "no session holds it up: the checkpoint is flushing, {} so far",
                crate::format::human_duration_bound(w.in_wait_s, w.in_wait_s_at_least)
            ),
            None => "no session holds it up: the checkpoint is flushing".to_string(),
        });
    }
    why.join("; ")
}

/// The client host of each session, from `onstat -g ntt`.
fn client_hosts(store: &Store) -> rustc_hash::FxHashMap<Sid, CompactString> {
    let mut out = rustc_hash::FxHashMap::default();
    if let Some(n) = store.get(crate::source::key::OnstatGNtt) {
        for t in &n.threads {
            if let Some(c) = &t.client {
                out.insert(t.sid, CompactString::new(&c.host));
            }
        }
    }
    out
}

/// The client program of the sessions whose `onstat -g ses <sid>` was collected.
fn client_programs(store: &Store) -> rustc_hash::FxHashMap<Sid, String> {
    // A session's program does not change: any `onstat -g ses <sid>` read names it.
    store
        .sources()
        .filter_map(|(s, _)| match s {
            Source::OnstatGSes(sid) => {
                let ses = store.get(crate::source::key::OnstatGSes(*sid))?;
                Some((*sid, ses.detail.as_ref()?.program.clone()?))
            }
            _ => None,
        })
        .collect()
}

/// What the thread lists read at the moment of the `onstat -u` (whose addresses name the
/// sessions) say of each session: `onstat -g ath`'s status of its primary thread (else of any
/// of its threads), and `onstat -g rea`'s ready queue. A list of another moment says nothing.
fn run_states(store: &Store) -> crate::model::activity::RunStates {
    let mut out = crate::model::activity::RunStates::default();
    let Some(u) = store.get(crate::source::key::OnstatU) else {
        return out;
    };
    let rea = store.get_at_moment(crate::source::key::OnstatGRea);
    let ath = store.get_at_moment(crate::source::key::OnstatGAth);
    if rea.is_none() && ath.is_none() {
        return out;
    }
    let sid_of: rustc_hash::FxHashMap<Addr, (Sid, bool)> = u
        .threads
        .iter()
        .filter(|t| t.sessid.0 != 0)
        .map(|t| (t.address, (t.sessid, t.flags.is_primary())))
        .collect();
    if let Some(rea) = rea {
        out.ready = rea
            .threads
            .iter()
            .filter_map(|t| sid_of.get(&t.rstcb?).map(|(s, _)| *s))
            .collect();
    }
    if let Some(ath) = ath {
        let mut threads: rustc_hash::FxHashMap<Sid, crate::model::activity::Class> =
            rustc_hash::FxHashMap::default();
        for t in &ath.threads {
            let Some(&(sid, primary)) = t.rstcb.as_ref().and_then(|a| sid_of.get(a)) else {
                continue;
            };
            let class = crate::model::activity::class_of_thread(&t.state);
            if primary {
                threads.insert(sid, class);
            } else {
                threads.entry(sid).or_insert(class);
            }
        }
        out.threads = Some(threads);
    }
    out
}

/// Each session's current statement, where an `onstat -g sql <sid>` read within
/// [`crate::model::activity::SQL_FRESH_S`] of the moment tells it (a statement changes; an
/// older one is not said to be the session's).
fn current_statements(store: &Store) -> rustc_hash::FxHashMap<Sid, String> {
    let Some(moment) = store.moment() else {
        return Default::default();
    };
    store
        .sources()
        .filter_map(|(s, _)| match s {
            Source::OnstatGSql(sid) => {
                let seen = store.observed(*s)?;
                if moment.abs_diff(seen).as_secs_f64() > crate::model::activity::SQL_FRESH_S {
                    return None;
                }
                let q = store.get(crate::source::key::OnstatGSql(*sid))?;
                let text = q.current_sql.as_ref().or(q.last_parsed_sql.as_ref())?;
                Some((*sid, text.clone()))
            }
            _ => None,
        })
        .collect()
}

/// Builds every pane's rows from the store at `now`, with the screens of the sessions in
/// `focus`.
/// A wait this long (seconds) is worth its SQL on record.
pub const LONG_WAIT_S: f64 = 10.0;

/// A mutex holder is a blocker worth its SQL on record once someone has waited on it this long
/// (seconds, as `onstat -g lmx` counts): a busy server holds mutexes for an instant all the
/// time, and the sessions holding them change every second.
pub const MUTEX_WAIT_S: f64 = 1.0;

/// The sessions whose SQL a recording or a report should hold, at most `max`, none of `except`:
/// the blockers first (most sessions held up first; a mutex holder once someone waited
/// [`MUTEX_WAIT_S`] on it), then the longest waits of at least [`LONG_WAIT_S`] that are not
/// idle client waits.
pub fn worth_recording(snap: &Snapshot, except: &[Sid], max: usize) -> Vec<Sid> {
    let mut held_up: Vec<Sid> = snap
        .waiters
        .iter()
        .filter(|w| w.reason != WaitReason::Mutex || w.in_wait_s >= MUTEX_WAIT_S)
        .map(|w| w.sessid)
        .collect();
    held_up.sort_unstable();
    let waited = |sid: &Sid| held_up.binary_search(sid).is_ok();
    let mut blockers: Vec<&crate::model::sessions::SessionRow> = snap
        .sessions
        .iter()
        .filter(|s| s.blocks.iter().any(waited))
        .collect();
    blockers.sort_by(|a, b| {
        b.blocks
            .len()
            .cmp(&a.blocks.len())
            .then(a.sessid.cmp(&b.sessid))
    });
    let mut waits: Vec<&WaiterRow> = snap
        .waiters
        .iter()
        .filter(|w| !w.idle && w.in_wait_s >= LONG_WAIT_S && w.sessid.0 != 0)
        .collect();
    waits.sort_by(|a, b| {
        b.in_wait_s
            .total_cmp(&a.in_wait_s)
            .then(a.sessid.cmp(&b.sessid))
    });
    let mut out: Vec<Sid> = Vec::new();
    for sid in blockers
        .iter()
        .map(|s| s.sessid)
        .chain(waits.iter().map(|w| w.sessid))
    {
        if out.len() >= max {
            break;
        }
        if !except.contains(&sid) && !out.contains(&sid) {
            out.push(sid);
        }
    }
    out
}

impl Snapshot {
    /// A session's current statement where one was read lately: its screen's (drilled into,
    /// read with the rest of the screen), else the one read in turn for the active sessions.
    pub fn statement_of(&self, sid: Sid) -> Option<&str> {
        self.session_views
            .iter()
            .find(|v| v.sid == sid)
            .and_then(|v| v.sql.as_deref())
            .or_else(|| {
                self.sessions
                    .binary_search_by_key(&sid, |s| s.sessid)
                    .ok()
                    .and_then(|i| self.sessions[i].sql.as_deref())
            })
    }

    /// The active sessions of this moment, each classed and keyed, as database time samples
    /// them ([`crate::model::activity::actives`]).
    pub fn actives(&self) -> Vec<crate::model::activity::Active<'_>> {
        crate::model::activity::actives(&self.sessions, &self.waiters, &self.run)
    }
}

/// The top CPU sessions whose statements are read (item of the Sessions pane sorted by CPU).
pub const TOP_CPU_STATEMENTS: usize = 10;

/// The sessions whose statements the collectors should read besides the ones `onstat -u`
/// shows active (their thread has no wait flag, or waits for the server): the sessions active
/// though their thread waits on a condition (a client slow to read what it was sent: not the
/// idle wait for the next statement), and the [`TOP_CPU_STATEMENTS`] sessions that used the
/// most CPU between the last two `onstat -g cpu` (the Sessions pane sorted by CPU).
pub fn statements_wanted(snap: &Snapshot) -> Vec<Sid> {
    let mut out: Vec<Sid> = snap
        .waiters
        .iter()
        .filter(|w| w.reason == WaitReason::Condition && !w.idle && w.sessid.0 != 0)
        .map(|w| w.sessid)
        .collect();
    let mut cpu: Vec<(f64, Sid)> = snap
        .sessions
        .iter()
        .filter(|s| !s.system)
        .filter_map(|s| Some((s.cpu_percent.filter(|c| *c > 0.0)?, s.sessid)))
        .collect();
    cpu.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    out.extend(cpu.into_iter().take(TOP_CPU_STATEMENTS).map(|(_, s)| s));
    out.sort_unstable();
    out.dedup();
    out
}

pub fn build(store: &Store, now: Duration, server_name: Option<&str>, focus: &[Sid]) -> Snapshot {
    build_with(store, now, server_name, focus, None)
}

/// `build`, with the screen of the buffer hot spot labelled `hotspot` too.
pub fn build_with(
    store: &Store,
    now: Duration,
    server_name: Option<&str>,
    focus: &[Sid],
    hotspot: Option<&str>,
) -> Snapshot {
    let extents = store.extents();
    let index = wait_index(store);
    let mut sockets = store.sockets.rows();
    let client_row = match store.get(crate::source::key::OnstatGNtt) {
        Some(n) => crate::model::sockets::join_sessions(&mut sockets, n),
        None => Default::default(),
    };
    let socket_of = |sid: Sid| -> Option<SocketRef> {
        sockets.get(*client_row.get(&sid)?).map(SocketRef::from)
    };

    let server = server_info(store, server_name);
    let io = crate::model::io::build_io(store);
    let Waits {
        summary,
        waiters,
        heads,
        sessions,
    } = match store.get(crate::source::key::OnstatU) {
        Some(u) => waits(store, u, &index, now, &socket_of, &io),
        None => Waits::default(),
    };
    let head_sids: Vec<Sid> = heads.iter().map(|h| h.sid).collect();
    let tree = crate::model::tree::tree(&waiters, &head_sids);

    let mut hotspots = store.hotspots.rows();
    name_owners(store, &mut sockets, &mut hotspots);
    let numa = numa_view(store);
    let sources = source_statuses(store, now);
    let cost = cost(store, &sources, now);

    let session_views = focus
        .iter()
        .map(|sid| crate::model::session::build(store, &waiters, &sockets, *sid, now))
        .collect();
    // Checked: a start near the end of the calendar must not panic the screen.
    let time = store
        .settings
        .wall_start
        .and_then(|w| w.checked_add(time::Duration::try_from(now).ok()?));
    let hotspot_view = hotspot
        .and_then(|label| hotspots.iter().find(|h| h.object == label))
        .map(|row| crate::model::hotspot::build(store, row, now));
    let flags = store
        .get(crate::source::key::OnstatU)
        .and_then(|u| u.header.as_ref())
        .map(|h| h.mode_flags.as_slice());
    let replication = crate::model::io::build_replication(store, flags);
    let mut snap = Snapshot {
        io,
        replication,
        hotspot_view,
        vitals: crate::model::vitals::build(store),
        heads,
        tree,
        session_cpu: session_cpu_span(store),
        session_memory_at_s: store
            .observed(Source::OnstatGSesList)
            .map(|t| t.as_secs_f64()),
        sessions,
        session_views,
        at_s: now.as_secs_f64(),
        time: time.map(crate::format::iso_utc),
        instance: store
            .settings
            .instance
            .clone()
            .or_else(|| server_name.map(str::to_string)),
        host: store.settings.host.clone(),
        server,
        summary,
        waiters,
        hotspots,
        sockets,
        numa,
        sources,
        cost,
        unresolved_share: store.hotspots.unresolved_share(),
        ports: store.settings.ports.clone(),
        extents_loaded: extents.is_some(),
        findings: Vec::new(),
        moment_s: store.moment().map(|m| m.as_secs_f64()),
        run: run_states(store),
        activity: None,
        activity_chart: Vec::new(),
    };
    let statements: Vec<Option<String>> = snap
        .heads
        .iter()
        .map(|h| snap.statement_of(h.sid).map(str::to_string))
        .collect();
    for (h, sql) in snap.heads.iter_mut().zip(statements) {
        h.sql = sql;
    }
    snap.findings = snap.with_facts(crate::model::findings::build);
    mark_late(&mut snap.findings, &snap.sources);
    // Alone, a snapshot knows each finding's start from its waits, else as a lower bound;
    // the owner of the store tracks them across snapshots (`track_findings`).
    snap.track_findings(
        &mut crate::model::findings::FindingsHistory::default(),
        store.settings.wall_start,
    );
    snap
}

/// The findings read from a source older than its period (it failed or stopped answering),
/// marked `as of` that source's moment: a replica's `blocked` from a `-g rss` read minutes ago
/// is not said to be so now.
fn mark_late(findings: &mut [crate::model::findings::Finding], sources: &[SourceStatus]) {
    for f in findings.iter_mut() {
        let late = f
            .kind
            .sources()
            .iter()
            .filter_map(|src| {
                let label = src.label();
                let st = sources.iter().find(|s| s.source == label)?;
                let age = st.age_s?;
                // Its period, or the spacing its runs have had (a slower interval scales it).
                let every = st
                    .calls_per_min
                    .filter(|c| *c > 0.0)
                    .map_or(st.period_s, |c| st.period_s.max(60.0 / c));
                (every.is_finite() && age > every + crate::model::findings::LATE_AFTER_S)
                    .then_some((age, label))
            })
            .max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((age, label)) = late {
            f.mark_as_of(age, &label);
        }
    }
}

/// What each waiting thread waits on: conditions, buffers, locks and latches by address.
fn wait_index(store: &Store) -> WaitIndex<'_> {
    // Holders and waits change within a second: only what was read at the moment of the
    // onstat -u joins its waiters. Names (of conditions, mutexes, tables) and thread ids do
    // not change that fast and may come from older outputs.
    WaitIndex::new(
        store.get(crate::source::key::OnstatGCon),
        store
            .get_at_moment(crate::source::key::OnstatGCon)
            .is_some(),
        store.get_at_moment(crate::source::key::OnstatX),
    )
    .with_locks(
        store.get_at_moment(crate::source::key::OnstatK),
        store.get(crate::source::key::Systabnames),
    )
    .with_latches(&crate::model::waiters::LatchSources {
        lmx: store.get_at_moment(crate::source::key::OnstatGLmx),
        wmx: store.get_at_moment(crate::source::key::OnstatGWmx),
        latches: store.get_at_moment(crate::source::key::OnstatS),
        ath: store.get(crate::source::key::OnstatGAth),
    })
    .with_mutex_names(store.mutex_names())
    .with_condition_names(store.condition_names())
    .with_waits(store.get(crate::source::key::OnstatU))
}

/// The server's name, whether it is off-line, and what the latest onstat -u's banner said.
fn server_info(store: &Store, server_name: Option<&str>) -> ServerInfo {
    let mut server = ServerInfo {
        name: server_name.map(String::from),
        ..ServerInfo::default()
    };
    if let Some(st) = store.source(&Source::OnstatU) {
        if let Some(crate::error::SourceError::Offline { message }) = st.failing() {
            server.offline = Some(message.clone());
        }
    }
    if let Some(h) = store
        .get(crate::source::key::OnstatU)
        .and_then(|u| u.header.as_ref())
    {
        server.version = h.version.clone();
        server.storage_mode = h.storage_mode.clone();
        server.mode = Some(h.mode.clone());
        server.mode_flags = h.mode_flags.clone();
        server.uptime_s = h.uptime_s;
        server.blocked = h.blocked.clone();
    }
    server
}

/// What the threads of onstat -u join into: empty when there is no onstat -u yet.
#[derive(Default)]
struct Waits {
    summary: WaitSummary,
    waiters: Vec<WaiterRow>,
    heads: Vec<HeadBlocker>,
    sessions: Vec<crate::model::sessions::SessionRow>,
}

/// The waiters with their chains and verdicts, the head blockers they lead to and the
/// sessions, from the threads of `u`.
fn waits(
    store: &Store,
    u: &OnstatU,
    index: &WaitIndex<'_>,
    now: Duration,
    socket_of: &impl Fn(Sid) -> Option<SocketRef>,
    io: &crate::model::io::IoView,
) -> Waits {
    let mut summary = WaitSummary {
        threads: u.threads.len(),
        ..WaitSummary::default()
    };
    // User sessions, as the Sessions pane counts them (the daemons' session 0 is none).
    let mut sids: Vec<Sid> = u
        .threads
        .iter()
        .map(|t| t.sessid)
        .filter(|s| s.0 != 0)
        .collect();
    sids.sort_unstable();
    sids.dedup();
    summary.sessions = sids.len();
    let mut waiters = waiter_rows(store, u, index, now, socket_of, &mut summary);
    let engine = crate::model::waiters::engine_blockers(
        store.get_at_moment(crate::source::key::OnstatGBth),
        store.get(crate::source::key::OnstatGAth),
    );
    let log_holder = crate::model::waiters::long_transaction_thread(
        u,
        store.get_at_moment(crate::source::key::OnstatXTxn),
    );
    join_chains(u, &mut waiters, &engine, log_holder);
    for row in &mut waiters {
        row.idle = row.is_idle_client_wait();
        // How long it had waited at the moment (the sockets are read with onstat -u), not
        // counted on to `now`.
        let at_moment = now
            .saturating_sub(store.moment().unwrap_or(now))
            .as_secs_f64();
        row.idle_unknown = row.is_unjudged_client_wait(row.in_wait_s - at_moment);
        if row.idle {
            summary.idle += 1;
        }
    }
    explain_waits(store, u, &mut waiters, io);
    let heads = head_blockers(u, &waiters);
    let sessions = session_rows(store, u, &waiters, now);
    Waits {
        summary,
        waiters,
        heads,
        sessions,
    }
}

/// A row for each waiting thread of `u`, counted by reason in `summary`; chains, idleness and
/// verdicts are joined later.
fn waiter_rows(
    store: &Store,
    u: &OnstatU,
    index: &WaitIndex<'_>,
    now: Duration,
    socket_of: &impl Fn(Sid) -> Option<SocketRef>,
    summary: &mut WaitSummary,
) -> Vec<WaiterRow> {
    let base = store.settings.base_page_kb;
    let extents = store.extents();
    // A row for each waiting thread, sized once (most of 5,000 sessions wait: pushed one
    // by one, the rows took up to twice their size at the heaviest second).
    let mut waiters = Vec::new();
    waiters.reserve_exact(u.threads.iter().filter(|t| t.wait_reason.is_some()).count());
    for th in &u.threads {
        let Some(reason) = th.wait_reason else {
            continue;
        };
        *summary.by_reason.entry(reason.letter()).or_default() += 1;
        let target = index.target(th, reason, extents, base);
        let (since, at_least) = store.tracker.since(th.address).unwrap_or((now, true));
        let tracked = now.saturating_sub(since).as_secs_f64();
        // onstat -g con, read at this moment, knows how long a condition wait has lasted:
        // from before ifxtop ran, and since it began again between two samples (the same
        // condition, a new wait). Counted on to `now` as the tracked time is.
        let reported = match &target {
            WaitTarget::Condition {
                waittime: Some(w), ..
            } => Some(
                *w as f64
                    + now
                        .saturating_sub(store.moment().unwrap_or(now))
                        .as_secs_f64(),
            ),
            _ => None,
        };
        let rates = store.rates.get(th.address);
        waiters.push(WaiterRow {
            rstcb: th.address,
            sessid: th.sessid,
            user: th.user.clone(),
            flags: CompactString::new(th.flags.as_str()),
            reason,
            waiting_on: target,
            in_wait_s: reported.unwrap_or(tracked),
            // onstat -g con's count is the wait's whole age.
            in_wait_s_at_least: reported.is_none() && at_least,
            locks: th.locks,
            reads_per_s: rates.map(|r| r.0),
            writes_per_s: rates.map(|r| r.1),
            idle: false,
            idle_unknown: false,
            socket: socket_of(th.sessid),
            blockers: Vec::new(),
            head_blocker: None,
            deadlock: false,
            engine_blocker: None,
            verdict: Cow::Borrowed(""),
        });
    }
    waiters
}

/// Each waiter's verdict in words, and the waits on a slow chunk noted.
fn explain_waits(
    store: &Store,
    u: &OnstatU,
    waiters: &mut [WaiterRow],
    io: &crate::model::io::IoView,
) {
    let checkpoint = checkpoint_words(u, waiters);
    let moment = store.moment();
    let note = |label: &str, s: Source| {
        crate::model::waiters::HolderNotes::note(
            label,
            store.observed(s),
            moment,
            store.late_for_moment(&s),
        )
    };
    let notes = crate::model::waiters::HolderNotes {
        lock: note("onstat -k", Source::OnstatK),
        buffer: note("onstat -X", Source::OnstatX),
        mutex: note("onstat -g lmx", Source::OnstatGLmx),
    };
    for row in waiters.iter_mut() {
        row.verdict = verdict(row, u, &checkpoint, &notes);
    }
    crate::model::io::note_slow_chunks(waiters, io);
}

/// The sessions at the end of the waiters' chains, with how many wait for each and the harm
/// it causes.
fn head_blockers(u: &OnstatU, waiters: &[WaiterRow]) -> Vec<HeadBlocker> {
    let mut counts: BTreeMap<Sid, usize> = BTreeMap::new();
    for w in waiters {
        if let Some(h) = w.head_blocker {
            *counts.entry(h).or_default() += 1;
        }
    }
    let mut heads: Vec<HeadBlocker> = counts
        .into_iter()
        .map(|(sid, blocked)| {
            let (state, locks, user) = crate::model::waiters::state_words(u, sid);
            let action = crate::model::harm::action_for(u, waiters, sid);
            HeadBlocker {
                sid,
                user,
                state,
                locks,
                blocked,
                harm: crate::model::harm::harm_of(waiters, sid),
                action: action.as_ref().map(|a| a.words.clone()),
                command: action.and_then(|a| a.command),
                sql: None,
            }
        })
        .collect();
    // The most harmful first: the oldest wait caused, then how many wait; sub-second
    // mutex waits last (background of any busy server).
    heads.sort_by(|a, b| {
        b.harm
            .rank_key()
            .cmp(&a.harm.rank_key())
            .then(b.blocked.cmp(&a.blocked))
            .then(a.sid.cmp(&b.sid))
    });
    heads
}

/// The Sessions pane's rows: each session of `u` with its client, SQL, memory and CPU.
fn session_rows(
    store: &Store,
    u: &OnstatU,
    waiters: &[WaiterRow],
    now: Duration,
) -> Vec<crate::model::sessions::SessionRow> {
    let hosts = client_hosts(store);
    let programs = client_programs(store);
    let sql = current_statements(store);
    let memory = session_memory(store);
    crate::model::sessions::build(
        u,
        &crate::model::sessions::SessionInputs {
            waiters,
            tracker: &store.tracker,
            rates: &store.rates,
            cpu: &store.cpu,
            memory: &memory,
            hosts: &hosts,
            programs: &programs,
            sql: &sql,
            now,
        },
    )
}

/// The user of each socket's session, and the session of each hot spot's owning thread.
fn name_owners(store: &Store, sockets: &mut [SocketRow], hotspots: &mut [HotspotRow]) {
    if let Some(u) = store.get(crate::source::key::OnstatU) {
        let users: rustc_hash::FxHashMap<Sid, &CompactString> =
            u.threads.iter().map(|t| (t.sessid, &t.user)).collect();
        for r in sockets.iter_mut() {
            r.user = r.sessid.and_then(|s| users.get(&s)).map(|u| (*u).clone());
        }
        let sid_of: rustc_hash::FxHashMap<Addr, Sid> =
            u.threads.iter().map(|t| (t.address, t.sessid)).collect();
        for h in hotspots.iter_mut() {
            h.owner_sid = h.owner.and_then(|o| sid_of.get(&o).copied());
        }
    }
}

/// The NUMA view from every node's meminfo and cpulist, the nodes online, zone reclaim and
/// the server processes' numa_maps.
fn numa_view(store: &Store) -> NumaView {
    let meminfo: BTreeMap<u32, NodeMeminfo> = store
        .sources()
        .filter_map(|(s, _)| match s {
            Source::NodeMeminfo(n) => {
                Some((*n, store.get(crate::source::key::NodeMeminfo(*n))?.clone()))
            }
            _ => None,
        })
        .collect();
    let cpulists: BTreeMap<u32, Vec<u32>> = store
        .sources()
        .filter_map(|(s, _)| match s {
            Source::NodeCpulist(n) => Some((
                *n,
                store.get(crate::source::key::NodeCpulist(*n))?.0.clone(),
            )),
            _ => None,
        })
        .collect();
    let online = store
        .get(crate::source::key::NodesOnline)
        .map(|n| n.0.as_slice());
    let zone = store.get(crate::source::key::ZoneReclaimMode).map(|z| z.0);
    let maps = store
        .sources()
        .filter_map(|(s, _)| match s {
            Source::NumaMaps(pid) => store.get(crate::source::key::NumaMaps(*pid)),
            _ => None,
        })
        .collect();
    numa::build(&numa::NumaInputs {
        online,
        meminfo: &meminfo,
        cpulists: &cpulists,
        zone_reclaim_mode: zone,
        scan: &store.scan,
        numa_maps: maps,
    })
}

/// Each source's health, age and cost, for the header and the status line; the per-node NUMA
/// sources are left out.
fn source_statuses(store: &Store, now: Duration) -> Vec<SourceStatus> {
    let mut out: Vec<SourceStatus> = Vec::new();
    // The statements as one source, where the first of them sorts.
    let mut statements_at: Option<usize> = None;
    for (s, st) in store.sources() {
        match s {
            Source::NodeMeminfo(_) | Source::NodeCpulist(_) | Source::NumaMaps(_) => {}
            Source::OnstatGSql(_) => {
                statements_at.get_or_insert(out.len());
            }
            _ => {
                let mut status = source_status(s, st, now);
                status.late = store.late_for_moment(s);
                out.push(status);
            }
        }
    }
    if let (Some(at), Some(sql)) = (statements_at, statements_status(store, now)) {
        out.insert(at, sql);
    }
    out
}

/// The statements read (`onstat -g sql <sid>`, those of the active sessions in turn, hundreds
/// of sessions on a busy server) as one source: the newest read's age, error and how it ran,
/// the runs, calls and bytes of them all.
fn statements_status(store: &Store, now: Duration) -> Option<SourceStatus> {
    let mut all = store
        .sources()
        .filter(|(s, _)| matches!(s, Source::OnstatGSql(_)));
    let (first, st) = all.next()?;
    let mut sum = source_status(first, st, now);
    let mut newest = st.last_ok.as_ref().map(|(t, _)| *t);
    let mut per_min = sum.calls_per_min;
    let (mut bytes, mut byte_calls, mut cpu, mut cpu_calls) =
        (st.bytes, st.byte_calls, st.cpu, st.cpu_calls);
    for (s, st) in all {
        let one = source_status(s, st, now);
        sum.runs += one.runs;
        sum.failures += one.failures;
        per_min = match (per_min, one.calls_per_min) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        bytes = bytes.saturating_add(st.bytes);
        byte_calls += st.byte_calls;
        cpu += st.cpu;
        cpu_calls += st.cpu_calls;
        let t = st.last_ok.as_ref().map(|(t, _)| *t);
        if t > newest {
            newest = t;
            sum.age_s = one.age_s;
            sum.error = one.error;
            sum.failure = one.failure;
            sum.took_ms = one.took_ms;
            sum.via = one.via;
        }
    }
    sum.source = "onstat -g sql".to_string();
    sum.calls_per_min = per_min;
    sum.bytes_per_call = (byte_calls > 0).then(|| bytes as f64 / byte_calls as f64);
    sum.cpu_ms_per_call = (cpu_calls > 0).then(|| cpu.as_secs_f64() * 1000.0 / cpu_calls as f64);
    Some(sum)
}

fn source_status(s: &Source, st: &crate::store::SourceState, now: Duration) -> SourceStatus {
    SourceStatus {
        source: s.label(),
        short: s.short(),
        age_s: st.age(now).map(|a| a.as_secs_f64()),
        period_s: s.period().as_secs_f64(),
        error: st.failing().map(|e| e.to_string()),
        failure: st.failing().map(|e| e.failure()),
        took_ms: u64::try_from(st.last_took.as_millis()).unwrap_or(u64::MAX),
        runs: st.runs,
        failures: st.failures,
        via: st.note.clone(),
        cpu_ms_per_call: (st.cpu_calls > 0)
            .then(|| st.cpu.as_secs_f64() * 1000.0 / st.cpu_calls as f64),
        calls_per_min: st
            .first_t
            .map(|f| now.saturating_sub(f).as_secs_f64())
            .filter(|span| *span >= RATE_OVER_S && st.runs >= 2)
            .map(|span| st.runs as f64 * 60.0 / span),
        bytes_per_call: (st.byte_calls > 0).then(|| st.bytes as f64 / st.byte_calls as f64),
        late: false,
    }
}

/// A rate a minute is given over a full minute at least.
const RATE_OVER_S: f64 = 60.0;

/// What ifxtop costs, from the sources' counts and the store's first and latest readings of the
/// process's CPU (`None` before any source ran).
fn cost(store: &Store, sources: &[SourceStatus], now: Duration) -> Option<Cost> {
    use crate::source::CallKind;
    if sources.is_empty() {
        return None;
    }
    // Every source counts here, the per-node NUMA files too.
    let over_s = store
        .sources()
        .filter_map(|(_, st)| st.first_t)
        .min()
        .map_or(0.0, |f| now.saturating_sub(f).as_secs_f64());
    let processes = |kind: CallKind| {
        store
            .sources()
            .filter(|(s, _)| s.call_kind() == kind)
            .map(|(_, st)| st.processes)
            .sum::<f64>()
    };
    let file_reads: u64 = store
        .sources()
        .filter(|(s, _)| s.call_kind() == CallKind::FileRead)
        .map(|(_, st)| st.runs)
        .sum();
    let per_min = |n: f64| (over_s >= RATE_OVER_S).then(|| n * 60.0 / over_s);
    // A process ran for a call here (its CPU was read when it was reaped), or processes run
    // here though none has finished yet (a live host whose every command hangs or fails): the
    // children are measured; the demo and a replay start none.
    let children = if sources.iter().any(|s| s.cpu_ms_per_call.is_some()) || store.runs_processes {
        "measured".to_string()
    } else {
        "simulated: the demo or a replay starts no onstat process".to_string()
    };
    let mut cost = Cost {
        children,
        over_s,
        onstat_processes: processes(CallKind::Onstat),
        other_processes: processes(CallKind::Command),
        file_reads,
        onstat_processes_per_min: per_min(processes(CallKind::Onstat)),
        other_processes_per_min: per_min(processes(CallKind::Command)),
        file_reads_per_min: per_min(file_reads as f64),
        ..Cost::default()
    };
    let (first, last) = store.process_cost;
    if let Some((t1, last)) = last {
        cost.self_cpu_s = Some(last.self_cpu.as_secs_f64());
        if cost.children == "measured" {
            cost.children_cpu_s = Some(last.children_cpu.as_secs_f64());
        }
        if let Some((t0, first)) =
            first.filter(|(t0, _)| t1.saturating_sub(*t0) >= Duration::from_secs(10))
        {
            let span = t1.saturating_sub(t0).as_secs_f64();
            let share = |a: Duration, b: Duration| a.saturating_sub(b).as_secs_f64() / span;
            cost.self_core_share = Some(share(last.self_cpu, first.self_cpu));
            if cost.children == "measured" {
                cost.children_core_share = Some(share(last.children_cpu, first.children_cpu));
            }
        }
    }
    Some(cost)
}

impl Snapshot {
    /// Each finding's start, kept across the snapshots `history` has seen (one history per
    /// watched store, passed each of its snapshots in order).
    pub fn track_findings(
        &mut self,
        history: &mut crate::model::findings::FindingsHistory,
        wall_start: Option<time::OffsetDateTime>,
    ) {
        // Each source with its first good sample, and with its second: a rate (of a device's
        // await, of reclaim) needs two.
        let ready = self
            .sources
            .iter()
            .filter_map(|s| {
                let ok = s.runs.saturating_sub(s.failures).min(2);
                (ok > 0).then(|| format!("{} ×{ok}", s.source))
            })
            .collect();
        history.stamp_at(
            &mut self.findings,
            self.at_s,
            self.moment_s.unwrap_or(self.at_s),
            ready,
            wall_start,
        );
    }

    /// `f` of the facts the findings' rules read.
    pub fn with_facts<T>(&self, f: impl FnOnce(&crate::model::findings::Facts<'_>) -> T) -> T {
        let heads: Vec<crate::model::findings::HeadFacts<'_>> = self
            .heads
            .iter()
            .map(|h| crate::model::findings::HeadFacts {
                sid: h.sid,
                locks: h.locks,
                state: &h.state,
                action: h.action.as_deref(),
                sql: h.sql.as_deref(),
            })
            .collect();
        f(&crate::model::findings::Facts {
            at_s: self.at_s,
            blocked: self.server.blocked.as_deref(),
            offline: self.server.offline.as_deref(),
            waiters: &self.waiters,
            heads: &heads,
            sessions: &self.sessions,
            session_views: &self.session_views,
            hotspots: &self.hotspots,
            sockets: &self.sockets,
            io: &self.io,
            replication: &self.replication,
            numa: &self.numa,
            vitals: &self.vitals,
        })
    }
}
