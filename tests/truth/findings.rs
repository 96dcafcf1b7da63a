//! Findings against the truth, every second, calm ones too. From the demo's truth alone (none
//! of the product's findings, rules or wording), the oracle works out which causes hold at each
//! second, since when, how severe they are, whom and what they blame and which way they go; then
//! it judges every finding the snapshot shows: its kind and culprit (it holds, or held within its
//! sources' periods), its severity, its culprit (sessions, object, chunk, client hosts, replica),
//! its trend words, its age (exact, or a flagged lower bound, never above the truth; the long
//! transaction from its begin); every cause that holds past the time its sources need to show
//! it is shown; and the line the screen shows above the panes says the same.
//!
//! The thresholds are the product's constants (what a DBA's `warning` means is the product's
//! choice); what holds, since when and for whom is the truth's.

use crate::joins::{judge_age, EXACT_S};
use crate::report::Report;
use crate::walk::{Check, Moment};
use ifxtop::demo::timeline::{Incident, TIMELINE};
use ifxtop::demo::truth::{State, Truth};
use ifxtop::model::findings::{
    Finding, FindingKind, Severity, Trend, CKPT_BLOCK_CRITICAL_S, CKPT_BLOCK_WARN_S,
    CRITICAL_WAIT_S, LAG_PAGES_INFO, LOGS_NOT_BACKED_UP_PCT, LONG_TXN_LOGS, MUTEX_WAITERS_WARN,
    WARN_WAIT_S,
};
use ifxtop::model::harm::BRIEF_MUTEX_WAIT_S;
use ifxtop::model::io::VERY_SLOW_AWAIT_MS;
use ifxtop::source::Source;
use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;

/// The long transaction's age, judged apart: from its begin, exact once ifxtop's samples of
/// the log bracket it (it watched the transaction begin), else a lower bound.
pub const TXN_AGE: &str = "finding: transaction age";

/// How a finding's age is known.
#[derive(Debug, Clone, PartialEq)]
enum Age {
    /// From the waits it is about (and its first second): exact once ifxtop saw them begin.
    Waits,
    /// From the begin of the transaction the finding blames: of those that were the oldest
    /// within its sources' period, (sid, began).
    Transaction(Vec<(u64, u64)>),
    /// A rate or a setting crossed a threshold at some moment between two samples: ifxtop can
    /// give only a lower bound from its first sight.
    Sampled,
}

/// A cause that holds at one second, as the truth tells it.
#[derive(Debug, Clone)]
struct Cause {
    kind: FindingKind,
    /// What tells it from another of its kind (a head's sid, an object, a chunk, a peer).
    id: String,
    /// The severities the product's rules may give it at this second (ages at the build).
    least: Severity,
    most: Severity,
    /// The sessions it may blame (`None`: it blames none).
    sids: Option<Vec<u64>>,
    /// The objects it may name.
    objects: Vec<&'static str>,
    chunks: Vec<u32>,
    /// The client addresses of the sessions it may blame.
    hosts: Vec<String>,
    peer: Option<&'static str>,
    trend: Option<Trend>,
    /// A hot spot's page moves on (last-page inserts) or stays (one page).
    moving: Option<bool>,
    /// Another id it may go by (a mutex's address while its name is not known).
    alias: Option<String>,
    age: Age,
    /// The oldest relevant wait's start (seconds), where the walk saw it begin.
    oldest_wait: Option<u64>,
}

/// Seconds a cause may hold before ifxtop must show it, and a finding may stand after its cause
/// ended: its sources' periods (a rate over a window: the window too).
fn slack(kind: FindingKind) -> (f64, f64) {
    let p = |s: Source| s.period().as_secs_f64();
    match kind {
        // Waits in onstat -u, their holders in the outputs the next tick's call carries.
        FindingKind::LockChain
        | FindingKind::BufferHotSpot
        | FindingKind::MutexContention
        | FindingKind::ClientNetwork => (1.0, 0.0),
        FindingKind::CheckpointBlocked | FindingKind::ServerBlocked | FindingKind::Offline => {
            (0.0, 0.0)
        }
        FindingKind::LongTransaction => {
            let x = p(Source::OnstatXTxn).max(p(Source::OnstatL));
            (x + 1.0, x)
        }
        // busy % between two -g glo samples: saturated over a whole period to pass 90 %.
        FindingKind::CpuSaturation => {
            let x = p(Source::OnstatGGlo).max(p(Source::OnstatGRea));
            (2.0 * x + 1.0, x + 1.0)
        }
        // The await over the last 5 s of /proc/diskstats, read every second.
        FindingKind::SlowDevice => (10.0, 6.0),
        FindingKind::ReplicaLag => {
            let x = p(Source::OnstatGRss).max(p(Source::OnstatGCluster));
            (x + 1.0, x)
        }
        // The direct-reclaim rate over the last 5 s of /proc/vmstat, read every 5 s.
        FindingKind::MemoryReclaim => {
            let x = p(Source::Vmstat);
            (2.0 * x + 1.0, 2.0 * x + 1.0)
        }
        FindingKind::LogsNotBackedUp => {
            let x = p(Source::OnstatL);
            (x + 1.0, x)
        }
        // ifxtop's own ring, not the server: the walks keep none.
        FindingKind::RingStopped => (0.0, 0.0),
    }
}

fn of_wait(s: f64) -> Severity {
    if s >= CRITICAL_WAIT_S {
        Severity::Critical
    } else if s >= WARN_WAIT_S {
        Severity::Warning
    } else {
        Severity::Info
    }
}

/// The severities an age `s` (exact within [`EXACT_S`]) may give, raised to `floor`.
fn by_wait(s: f64, floor: Severity) -> (Severity, Severity) {
    (
        of_wait(s - EXACT_S).max(floor),
        of_wait(s + EXACT_S).max(floor),
    )
}

/// What one second of the truth says for the trends and the rates that lag.
#[derive(Debug, Clone)]
struct Second {
    t: u64,
    /// The oldest open transaction: its session and when it began.
    oldest_txn: Option<(u64, u64)>,
    /// The Send-Q of the clients not reading, summed.
    send_q: u64,
    direct_reclaim: bool,
    /// The server blocked (`Blocked:CKPT`, `Blocked:LONGTX`).
    blocked: Option<&'static str>,
}

/// The severities a cause may have at one second: (second, least, most).
type SeverityAt = (u64, Severity, Severity);

/// One cause's run of seconds.
#[derive(Debug, Clone, Copy)]
struct Run {
    began: u64,
    last: u64,
    /// The oldest wait's start at any second of the run: a finding's start, once known, stays
    /// while it holds (its waits may end and others begin).
    oldest_wait: Option<u64>,
    /// A second of the run had a wait on since before the walk: its start is not known.
    start_unknown: bool,
    /// The walk saw it begin (not already on at the walk's first second).
    seen_begin: bool,
}

/// Incident × the top finding shown (seconds): what the DBA reads first, per incident.
#[derive(Default)]
pub struct Confusion {
    cells: BTreeMap<(String, String), u64>,
}

impl Confusion {
    pub fn table(&self) -> String {
        let mut s = format!(
            "{:<22} {:<28} {:>7}\n",
            "incident", "top finding", "seconds"
        );
        for ((i, k), n) in &self.cells {
            let _ = writeln!(s, "{i:<22} {k:<28} {n:>7}");
        }
        s
    }

    pub fn merge(&mut self, o: Confusion) {
        for (k, n) in o.cells {
            *self.cells.entry(k).or_default() += n;
        }
    }
}

/// The findings' check, fed every second of the truth.
#[derive(Default)]
pub struct Findings {
    /// Each cause's current or last run, by (kind, id).
    runs: BTreeMap<(FindingKind, String), Run>,
    /// The causes of the latest second walked.
    now: Vec<Cause>,
    seconds: VecDeque<Second>,
    first_t: Option<u64>,
    /// The first moment checked: ifxtop's first sample (demo seconds).
    start_s: f64,
    /// Each cause's severities over its last seconds: (second, least, most).
    severities: BTreeMap<(FindingKind, String), VecDeque<SeverityAt>>,
    pub confusion: Confusion,
}

impl Check for Findings {
    fn truth(&mut self, truth: &Truth) {
        let first = *self.first_t.get_or_insert(truth.t);
        let send_q = slow_fetchers(truth).map(|s| s.send_q).sum();
        self.seconds.push_back(Second {
            t: truth.t,
            oldest_txn: truth.oldest_txn.as_ref().map(|x| (x.sid, x.began)),
            send_q,
            direct_reclaim: truth.direct_reclaim,
            blocked: truth.blocked,
        });
        while self.seconds.len() > 60 {
            self.seconds.pop_front();
        }
        self.now = causes(truth, &self.seconds);
        for c in &self.now {
            let key = (c.kind, c.id.clone());
            match self.runs.get_mut(&key) {
                Some(r) if r.last + 1 == truth.t => {
                    r.last = truth.t;
                    r.start_unknown |= c.age == Age::Waits && c.oldest_wait.is_none();
                    r.oldest_wait = match (r.oldest_wait, c.oldest_wait) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                }
                _ => {
                    self.runs.insert(
                        key,
                        Run {
                            began: truth.t,
                            last: truth.t,
                            oldest_wait: c.oldest_wait,
                            start_unknown: c.age == Age::Waits && c.oldest_wait.is_none(),
                            seen_begin: truth.t > first,
                        },
                    );
                }
            }
        }
    }

    fn check(&mut self, m: &Moment<'_>, r: &mut Report) {
        self.judge(m, r);
    }
}

/// The sessions not reading what the server sent them.
fn slow_fetchers(truth: &Truth) -> impl Iterator<Item = &ifxtop::demo::truth::SessionTruth> {
    truth
        .sessions
        .values()
        .filter(|s| s.state == State::SlowFetch && s.send_q > 0)
}

/// A wait's start (seconds), where the walk saw it begin.
fn wait_start(truth: &Truth, sid: u64) -> Option<u64> {
    truth.wait_age(sid).map(|a| truth.t - a)
}

/// The causes that hold at one second.
fn causes(truth: &Truth, seconds: &VecDeque<Second>) -> Vec<Cause> {
    let mut out = Vec::new();
    let cause = |kind, id: String, least, most, age| Cause {
        kind,
        id,
        least,
        most,
        sids: None,
        objects: Vec::new(),
        chunks: Vec::new(),
        hosts: Vec::new(),
        peer: None,
        trend: None,
        moving: None,
        alias: None,
        age,
        oldest_wait: None,
    };
    // The oldest wait's start; not known when one of them was on already when the walk began.
    let oldest = |sids: &[u64]| -> Option<u64> {
        let starts: Option<Vec<u64>> = sids.iter().map(|s| wait_start(truth, *s)).collect();
        starts?.into_iter().min()
    };
    // The checkpoint: blocked, or sessions waiting for it; the sessions in critical sections it
    // waits for.
    let ckpt: Vec<u64> = truth
        .sessions
        .values()
        .filter(|s| s.state == State::Checkpoint)
        .map(|s| s.sid)
        .collect();
    let blocked = truth.blocked == Some("CKPT");
    if blocked || !ckpt.is_empty() {
        // Its severity is the block's age (the banner's, or the oldest checkpoint wait's):
        // ifxtop's is a sample old at most, never above the truth's.
        let band = |age: f64| {
            if age >= CKPT_BLOCK_CRITICAL_S {
                Severity::Critical
            } else if age >= CKPT_BLOCK_WARN_S {
                Severity::Warning
            } else {
                Severity::Info
            }
        };
        // The banner's run of seconds up to now; begun before the walk: its age not known.
        let mut since = None;
        let mut whole = false;
        if blocked {
            for s in seconds.iter().rev() {
                if s.blocked != Some("CKPT") {
                    whole = true;
                    break;
                }
                since = Some(s.t);
            }
        }
        let banner = since.map(|b| (truth.t - b) as f64);
        let waits = oldest(&ckpt).map(|w| (truth.t - w) as f64);
        let age = banner.into_iter().chain(waits).fold(0.0, f64::max);
        let least = band((age - 1.0).max(0.0));
        let most = if blocked && !whole {
            Severity::Critical
        } else {
            band(age + 1.0)
        };
        let mut c = cause(
            FindingKind::CheckpointBlocked,
            String::new(),
            least,
            most,
            Age::Waits,
        );
        let mut crit: Vec<u64> = ckpt
            .iter()
            .filter_map(|s| truth.session(*s)?.blocker)
            .collect();
        crit.sort_unstable();
        crit.dedup();
        c.sids = Some(crit);
        c.chunks = truth.slow_chunks.clone();
        c.oldest_wait = oldest(&ckpt);
        out.push(c);
    }
    // The long transaction: the server blocked by it, sessions waiting to log behind it, or the
    // oldest transaction spanning enough logs.
    let log_waits: Vec<u64> = truth
        .sessions
        .values()
        .filter(|s| s.state == State::LogWait && s.blocker.is_some())
        .map(|s| s.sid)
        .collect();
    if let Some(x) = &truth.oldest_txn {
        let longtx = truth.blocked == Some("LONGTX");
        if longtx || !log_waits.is_empty() || x.logs_spanned >= LONG_TXN_LOGS {
            let sev = if longtx || !log_waits.is_empty() {
                Severity::Critical
            } else {
                Severity::Warning
            };
            // What -x shows may be a period old: the oldest of any second since.
            let period = slack(FindingKind::LongTransaction).1 as u64;
            let mut oldest: Vec<(u64, u64)> = seconds
                .iter()
                .filter(|s| s.t + period >= truth.t)
                .filter_map(|s| s.oldest_txn)
                .collect();
            oldest.push((x.sid, x.began));
            oldest.sort_unstable();
            oldest.dedup();
            let mut c = cause(
                FindingKind::LongTransaction,
                String::new(),
                sev,
                sev,
                Age::Transaction(oldest.clone()),
            );
            c.sids = Some(oldest.iter().map(|(s, _)| *s).collect());
            out.push(c);
        }
    }
    // Lock chains, by head.
    let mut chains: BTreeMap<u64, Vec<&ifxtop::demo::truth::SessionTruth>> = BTreeMap::new();
    for s in truth.sessions.values().filter(|s| s.state == State::Lock) {
        if let Some(h) = s.head {
            chains.entry(h).or_default().push(s);
        }
    }
    for (head, waits) in chains {
        let sids: Vec<u64> = waits.iter().map(|s| s.sid).collect();
        let mut c = cause(
            FindingKind::LockChain,
            head.to_string(),
            Severity::Info,
            Severity::Info,
            Age::Waits,
        );
        c.sids = Some(vec![head]);
        c.objects = waits.iter().filter_map(|s| s.object).collect();
        c.oldest_wait = oldest(&sids);
        out.push(c);
    }
    // Buffer hot spots, by object.
    let mut hot: BTreeMap<&'static str, Vec<&ifxtop::demo::truth::SessionTruth>> = BTreeMap::new();
    for s in truth.sessions.values().filter(|s| s.state == State::Buffer) {
        if let Some(o) = s.object {
            hot.entry(o).or_default().push(s);
        }
    }
    for (object, waits) in hot {
        let sids: Vec<u64> = waits.iter().map(|s| s.sid).collect();
        let mut c = cause(
            FindingKind::BufferHotSpot,
            object.to_string(),
            Severity::Info,
            Severity::Info,
            Age::Waits,
        );
        let mut holders: Vec<u64> = waits.iter().filter_map(|s| s.blocker).collect();
        holders.sort_unstable();
        holders.dedup();
        c.sids = Some(holders);
        c.objects = vec![object];
        c.moving = truth
            .hot
            .as_ref()
            .filter(|h| h.object == object)
            .map(|h| h.moving);
        c.oldest_wait = oldest(&sids);
        out.push(c);
    }
    // Mutexes whose longest wait lasts past an instant.
    for m in &truth.mutexes {
        let Some(start) = oldest(&m.waiters) else {
            continue;
        };
        if ((truth.t - start) as f64) < BRIEF_MUTEX_WAIT_S - EXACT_S {
            continue;
        }
        let mut c = cause(
            FindingKind::MutexContention,
            m.name.to_string(),
            Severity::Info,
            Severity::Info,
            Age::Waits,
        );
        c.sids = Some(vec![m.holder]);
        c.objects = vec![m.name];
        c.alias = Some(format!("{:x}", m.address));
        c.oldest_wait = Some(start);
        out.push(c);
    }
    // Clients not reading: waiting for them with bytes queued towards them; growing or
    // draining as their Send-Q went over the last second.
    let slow: Vec<&ifxtop::demo::truth::SessionTruth> =
        slow_fetchers(truth).filter(|s| s.send_q > 0).collect();
    if !slow.is_empty() {
        let now_q: u64 = slow_fetchers(truth).map(|s| s.send_q).sum();
        let before = seconds
            .iter()
            .rev()
            .find(|s| s.t + 1 == truth.t)
            .map(|s| s.send_q);
        let trend = before.map(|b| {
            if now_q > b {
                Trend::Growing
            } else if now_q < b {
                Trend::Draining
            } else {
                Trend::Steady
            }
        });
        let mut c = cause(
            FindingKind::ClientNetwork,
            String::new(),
            Severity::Info,
            Severity::Warning,
            Age::Waits,
        );
        let mut sids: Vec<u64> = slow.iter().map(|s| s.sid).collect();
        sids.sort_unstable();
        c.hosts = slow.iter().filter_map(|s| s.client.clone()).collect();
        c.hosts.sort();
        c.hosts.dedup();
        c.oldest_wait = oldest(&sids);
        c.sids = Some(sids);
        c.trend = trend;
        // Warning while it grows, info while it drains.
        match trend {
            Some(Trend::Growing) => c.least = Severity::Warning,
            Some(Trend::Draining) => c.most = Severity::Info,
            _ => {}
        }
        out.push(c);
    }
    if truth.incident == Incident::CpuSaturated {
        out.push(cause(
            FindingKind::CpuSaturation,
            String::new(),
            Severity::Warning,
            Severity::Warning,
            Age::Sampled,
        ));
    }
    for chunk in &truth.slow_chunks {
        let sev = if truth.slow_await_ms >= VERY_SLOW_AWAIT_MS {
            Severity::Critical
        } else {
            Severity::Warning
        };
        let mut c = cause(
            FindingKind::SlowDevice,
            chunk.to_string(),
            Severity::Warning,
            sev,
            Age::Sampled,
        );
        c.chunks = vec![*chunk];
        out.push(c);
    }
    let rep = &truth.replica;
    if rep.blocked || rep.lag_pages >= LAG_PAGES_INFO {
        let mut c = cause(
            FindingKind::ReplicaLag,
            rep.name.to_string(),
            if rep.blocked {
                Severity::Critical
            } else {
                Severity::Info
            },
            if rep.blocked {
                Severity::Critical
            } else {
                Severity::Warning
            },
            Age::Sampled,
        );
        c.peer = Some(rep.name);
        out.push(c);
    }
    if truth.zone_reclaim_mode != 0 {
        // A warning while direct reclaim scans, over the window its rate is taken on.
        let window = slack(FindingKind::MemoryReclaim).1 as u64;
        let recent: Vec<&Second> = seconds.iter().filter(|s| s.t + window >= truth.t).collect();
        let all = recent.iter().all(|s| s.direct_reclaim) && recent.len() as u64 > window;
        let any = recent.iter().any(|s| s.direct_reclaim);
        out.push(cause(
            FindingKind::MemoryReclaim,
            String::new(),
            if all {
                Severity::Warning
            } else {
                Severity::Info
            },
            if any {
                Severity::Warning
            } else {
                Severity::Info
            },
            Age::Sampled,
        ));
    }
    let (not_backed, total) = truth.logs_not_backed_up;
    if total > 0 && 100.0 * not_backed as f64 / total as f64 >= LOGS_NOT_BACKED_UP_PCT {
        out.push(cause(
            FindingKind::LogsNotBackedUp,
            String::new(),
            Severity::Warning,
            Severity::Warning,
            Age::Sampled,
        ));
    }
    out
}

/// A finding's id as the truth keys causes: the head, the object, the chunk, the peer.
fn id_of(f: &Finding) -> String {
    let c = &f.culprit;
    match f.kind {
        FindingKind::LockChain => c.sids.first().map(|s| s.0.to_string()).unwrap_or_default(),
        FindingKind::BufferHotSpot | FindingKind::MutexContention => {
            c.object.clone().unwrap_or_default()
        }
        FindingKind::SlowDevice => c.chunk.map(|n| n.to_string()).unwrap_or_default(),
        FindingKind::ReplicaLag => c.peer.clone().unwrap_or_default(),
        _ => String::new(),
    }
}

/// The marker of a severity as the screen draws it (colour aside).
fn marker(s: Severity) -> &'static str {
    match s {
        Severity::Critical => "✖",
        Severity::Warning => "⚠",
        Severity::Info => "ℹ",
    }
}

impl Findings {
    fn judge(&mut self, m: &Moment<'_>, r: &mut Report) {
        let (snap, truth, at) = (m.snap, m.truth, m.at.as_str());
        let grow = m.since_truth();
        if m.first {
            self.start_s = m.moment_s;
        }
        // How long ifxtop has watched: nothing can be shown before its sources have run.
        let watched = m.now_s - self.start_s;
        // The causes at the truth's second with the severities their ages give at the build.
        let mut causes = self.now.clone();
        for c in &mut causes {
            if c.age == Age::Waits
                && matches!(
                    c.kind,
                    FindingKind::LockChain
                        | FindingKind::BufferHotSpot
                        | FindingKind::MutexContention
                )
            {
                let Some(start) = c.oldest_wait else {
                    // Already on when the walk began: any severity from its floor.
                    c.most = Severity::Critical;
                    continue;
                };
                let age = (truth.t - start) as f64 + grow;
                let floor = match c.kind {
                    FindingKind::BufferHotSpot => {
                        let n = truth
                            .sessions
                            .values()
                            .filter(|s| s.state == State::Buffer && s.object == Some(c.id.as_str()))
                            .count();
                        if n >= 2 {
                            Severity::Warning
                        } else {
                            Severity::Info
                        }
                    }
                    FindingKind::MutexContention => {
                        let n = truth
                            .mutexes
                            .iter()
                            .find(|x| x.name == c.id)
                            .map_or(0, |x| x.waiters.len());
                        if n >= MUTEX_WAITERS_WARN {
                            Severity::Warning
                        } else {
                            Severity::Info
                        }
                    }
                    _ => Severity::Info,
                };
                (c.least, c.most) = by_wait(age, floor);
            }
        }
        for c in &causes {
            let h = self.severities.entry((c.kind, c.id.clone())).or_default();
            h.push_back((truth.t, c.least, c.most));
            while h.front().is_some_and(|(t, ..)| t + 60 < truth.t) {
                h.pop_front();
            }
        }
        // Every finding shown: its cause holds (or held within its sources' periods), and what
        // it says of it is true.
        for f in &snap.findings {
            let id = id_of(f);
            let cause = causes.iter().find(|c| {
                c.kind == f.kind && (c.id == id || c.alias.as_deref() == Some(id.as_str()))
            });
            let id = cause.map_or(id, |c| c.id.clone());
            let Some(c) = cause else {
                // Ended within its sources' periods, or marked as of its data's moment.
                let (_, linger) = slack(f.kind);
                let run = self.runs.get(&(f.kind, id.clone()));
                let ended = run.map(|r| (truth.t - r.last) as f64 - 1.0 + grow);
                match ended {
                    Some(e) if e <= linger + EXACT_S => r.right("finding: holds"),
                    Some(e) if f.as_of_s.is_some_and(|a| a + EXACT_S >= e) => {
                        r.right("finding: holds")
                    }
                    _ => r.wrong(
                        "finding: holds",
                        format!(
                            "{at} {:?}: {} {:?} ({}): no such cause {}",
                            truth.incident,
                            f.kind.as_str(),
                            f.severity,
                            f.summary,
                            match ended {
                                Some(e) => format!("for {e:.1}s (its sources' periods: {linger}s)"),
                                None => "at all".to_string(),
                            }
                        ),
                    ),
                }
                continue;
            };
            r.right("finding: holds");
            let run = self.runs.get(&(f.kind, id.clone())).copied();
            let begun = run.map_or(0.0, |r| (truth.t - r.began) as f64 + grow);
            // Severity: what the rules give at this second, or gave within its sources'
            // periods (what they show may be that old); below it only from an age shown as a
            // lower bound (ifxtop did not see the wait begin).
            let (detect, linger) = slack(f.kind);
            let settling = begun <= detect + EXACT_S || watched <= detect + EXACT_S;
            let window = detect.max(linger) as u64;
            let (least, most) = self
                .severities
                .get(&(c.kind, c.id.clone()))
                .map(|h| {
                    h.iter()
                        .filter(|(t, ..)| t + window >= truth.t)
                        .fold((c.least, c.most), |(l, m), (_, a, b)| {
                            (l.min(*a), m.max(*b))
                        })
                })
                .unwrap_or((c.least, c.most));
            let sev_ok = (least..=most).contains(&f.severity)
                || ((settling || f.for_s_at_least) && f.severity <= most)
                || f.as_of_s.is_some();
            // A client network finding from one Send-Q sample has no trend yet: whether it
            // drains (info) or not (warning) is not known, and warning is what it says.
            let no_trend = f.kind == FindingKind::ClientNetwork && f.trend.is_none();
            if !sev_ok && no_trend {
                r.unknown("finding: severity");
            } else {
                r.judge("finding: severity", sev_ok, || {
                    format!(
                        "{at} {:?}: {} shown {:?}, true {:?}..={:?} ({})",
                        truth.incident,
                        f.kind.as_str(),
                        f.severity,
                        c.least,
                        c.most,
                        f.summary
                    )
                });
            }
            self.culprit(m, f, c, r);
            self.trend(m, f, c, r);
            // Age.
            let Some(shown) = f.for_s else {
                r.wrong(
                    "finding: age",
                    format!("{at}: {} has no age", f.kind.as_str()),
                );
                continue;
            };
            let truth_s = match c.age {
                Age::Waits => {
                    let Some(run) = run.filter(|r| r.seen_begin && !r.start_unknown) else {
                        // Already on when the walk began, or a wait of it was: its start is
                        // not known.
                        r.unknown("finding: age");
                        continue;
                    };
                    let since = run.oldest_wait.map_or(run.began, |w| w.min(run.began));
                    (truth.t - since) as f64 + grow
                }
                Age::Transaction(ref txns) => {
                    let named = f.culprit.sids.first().map(|s| s.0);
                    let Some((_, b)) = txns.iter().find(|(s, _)| Some(*s) == named).or(txns.last())
                    else {
                        continue;
                    };
                    let open = (truth.t - b) as f64 + grow;
                    // Never below its first sight: ifxtop's `onstat -x` (and `-l`) see it within
                    // their periods of its begin, or of ifxtop's start when it began before.
                    let (detect, _) = slack(f.kind);
                    let first_sight = open.min(watched) - detect - EXACT_S;
                    if shown < first_sight {
                        r.wrong(
                            TXN_AGE,
                            format!(
                                "{at} {:?}: open {open:.1}s, watched {watched:.1}s, shown \
                                 {shown:.1}s: below its first sight ({})",
                                truth.incident, f.summary
                            ),
                        );
                        continue;
                    }
                    open
                }
                Age::Sampled => match run.filter(|r| r.seen_begin) {
                    Some(run) => (truth.t - run.began) as f64 + grow,
                    // Since before the walk: only a flagged bound can be right.
                    None => f64::INFINITY,
                },
            };
            // The long transaction's age is the transaction's: counted apart.
            let kind = match c.age {
                Age::Transaction(_) => TXN_AGE,
                _ => "finding: age",
            };
            judge_age(r, kind, shown, f.for_s_at_least, truth_s, || {
                format!(
                    "{at} {:?}: {} {:?} ({})",
                    truth.incident,
                    f.kind.as_str(),
                    c.age,
                    f.summary
                )
            });
        }
        // Every cause that holds past the time its sources need is shown.
        for c in &causes {
            let Some(run) = self.runs.get(&(c.kind, c.id.clone())) else {
                continue;
            };
            let begun = (truth.t - run.began) as f64 + grow;
            let shown = snap
                .findings
                .iter()
                .any(|f| f.kind == c.kind && id_of(f) == c.id);
            let (detect, _) = slack(c.kind);
            if shown {
                r.right("finding: shown");
            } else if begun <= detect + 1.0 || watched <= detect + 1.0 {
                r.unknown("finding: shown");
            } else if snap.sources.iter().any(|s| s.late) {
                // An output the rules join was printed a second after the onstat -u of its
                // call: the rule could not judge this moment.
                r.unknown("finding: shown");
            } else if c.kind == FindingKind::CpuSaturation
                && !ifxtop::model::findings::not_yet_judged(&snap.vitals).is_empty()
            {
                // The CPU VPs' load is not known now (a late `onstat -g glo` gave no busy %):
                // the rule cannot judge, and ifxtop says so.
                r.unknown("finding: shown");
            } else if c.most == Severity::Info && c.kind == FindingKind::MutexContention {
                // A mutex wait past an instant is info: its holder's row may have gone.
                r.unknown("finding: shown");
            } else {
                r.wrong(
                    "finding: shown",
                    format!(
                        "{at} {:?}: {} {} for {begun:.1}s, not shown ({:?})",
                        truth.incident,
                        c.kind.as_str(),
                        c.id,
                        snap.findings
                            .iter()
                            .map(|f| f.summary.as_str())
                            .collect::<Vec<_>>()
                    ),
                );
            }
        }
        self.line(m, &causes, watched, r);
        // The findings table: the incident and the top finding shown.
        let top = snap
            .findings
            .first()
            .filter(|f| f.severity > Severity::Info)
            .map_or("-".to_string(), |f| f.kind.as_str().to_string());
        *self
            .confusion
            .cells
            .entry((format!("{:?}", truth.incident), top))
            .or_default() += 1;
    }

    /// The trend words against the truth's (a turn within a second may be either).
    fn trend(&self, m: &Moment<'_>, f: &Finding, c: &Cause, r: &mut Report) {
        let (truth, at) = (m.truth, m.at.as_str());
        let Some(t) = c.trend else {
            return;
        };
        let said = f.trend;
        let words = match said {
            Some(Trend::Growing) => f.summary.contains("growing"),
            Some(Trend::Draining) => f.summary.contains("draining"),
            Some(Trend::Steady) => f.summary.contains("steady"),
            None => true,
        };
        if said.is_none() {
            // Not said (one sample of the Send-Q so far): nothing wrong, nothing told.
            r.unknown("finding: trend");
            return;
        }
        let turned = self.turned_within(truth.t, 1);
        r.judge(
            "finding: trend",
            words && (said == Some(t) || turned),
            || {
                format!(
                    "{at} {:?}: {} says {said:?}, true {t:?} ({})",
                    truth.incident,
                    f.kind.as_str(),
                    f.summary
                )
            },
        );
        if said == Some(Trend::Draining) {
            r.judge("finding: trend", f.summary.contains("peak"), || {
                format!("{at}: a draining Send-Q without its peak ({})", f.summary)
            });
        }
    }

    /// The Send-Q's direction changed within `n` seconds before `t`.
    fn turned_within(&self, t: u64, n: u64) -> bool {
        let dir = |a: &Second, b: &Second| a.send_q.cmp(&b.send_q);
        let s: Vec<&Second> = self.seconds.iter().filter(|s| s.t + n + 1 >= t).collect();
        s.windows(3).any(|w| dir(w[1], w[0]) != dir(w[2], w[1]))
    }

    fn culprit(&self, m: &Moment<'_>, f: &Finding, c: &Cause, r: &mut Report) {
        let (truth, at) = (m.truth, m.at.as_str());
        let shown: Vec<u64> = f.culprit.sids.iter().map(|s| s.0).collect();
        let what = || {
            format!(
                "{at} {:?}: {} culprit {:?}, true sids {:?} objects {:?} chunks {:?} hosts {:?} \
                 peer {:?} ({})",
                truth.incident,
                f.kind.as_str(),
                f.culprit,
                c.sids,
                c.objects,
                c.chunks,
                c.hosts,
                c.peer,
                f.summary
            )
        };
        // Sessions: only those the truth blames; none where it blames none.
        match &c.sids {
            Some(want) => {
                if !shown.iter().all(|s| want.contains(s)) {
                    r.wrong("culprit: sessions", what());
                } else if shown.is_empty() && !want.is_empty() {
                    r.unknown("culprit: sessions");
                } else {
                    r.right("culprit: sessions");
                }
            }
            None => r.judge("culprit: sessions", shown.is_empty(), what),
        }
        if let Some(o) = &f.culprit.object {
            r.judge("culprit: object", c.objects.iter().any(|x| x == o), what);
        } else if !c.objects.is_empty() {
            r.unknown("culprit: object");
        }
        if let Some(n) = f.culprit.chunk {
            r.judge("culprit: chunk", c.chunks.contains(&n), what);
        } else if f.kind == FindingKind::SlowDevice {
            r.unknown("culprit: chunk");
        }
        if let Some(p) = &f.culprit.peer {
            r.judge("culprit: replica", c.peer == Some(p.as_str()), what);
        }
        if f.kind == FindingKind::ClientNetwork {
            let hosts: Vec<&str> = f.culprit.hosts.iter().map(|h| h.host.as_str()).collect();
            let ok = !hosts.is_empty()
                && hosts.iter().all(|h| c.hosts.iter().any(|x| x == h))
                && f.culprit.hosts.iter().map(|h| h.sessions).sum::<usize>()
                    <= f.culprit.sids.len();
            r.judge("culprit: client hosts", ok, what);
        }
        // A hot spot's type: never the wrong one.
        if let Some(moving) = c.moving {
            let says_moving = f.summary.contains("last-page inserts");
            let says_one = f.summary.contains("(one page)");
            r.judge(
                "finding: hot spot type",
                !(says_moving && !moving || says_one && moving),
                what,
            );
        }
    }

    /// The line above the panes: the top finding's, with its marker; calm only when nothing
    /// holds above info and no wait is on that a rule has yet to judge; `watching` while one is.
    fn line(&self, m: &Moment<'_>, causes: &[Cause], watched: f64, r: &mut Report) {
        let (snap, truth, at) = (m.snap, m.truth, m.at.as_str());
        let line = ifxtop::tui::report::headline(snap);
        let top = snap.findings.iter().map(|f| f.severity).max();
        let what = || format!("{at} {:?}: the line says {line:?}", truth.incident);
        match top.filter(|s| *s > Severity::Info) {
            Some(s) => r.judge("line", line.starts_with(marker(s)), what),
            None => {
                // Due above info by now (ifxtop saw it begin, its sources have had their time):
                // the line cannot be calm.
                let due = causes.iter().any(|c| {
                    let (detect, _) = slack(c.kind);
                    c.least > Severity::Info
                        && watched > detect + 1.0
                        && self.runs.get(&(c.kind, c.id.clone())).is_some_and(|run| {
                            (truth.t - run.began) as f64 > detect + 1.0
                                && run.began as f64 > self.start_s
                        })
                });
                let waits = truth.sessions.values().any(|s| {
                    matches!(
                        s.state,
                        State::Lock | State::Buffer | State::Checkpoint | State::LogWait
                    ) || s.state == State::Mutex
                        && truth
                            .wait_age(s.sid)
                            .is_some_and(|a| a as f64 + m.since_truth() >= BRIEF_MUTEX_WAIT_S)
                });
                let calm = line.starts_with('✓');
                let watching = line.starts_with("◔ watching");
                // Watching, not naming, while an output the rules join was printed a second
                // after the onstat -u of its call: this moment cannot be judged.
                if due && watching && waits && snap.sources.iter().any(|s| s.late) {
                    r.unknown("line");
                    return;
                }
                r.judge(
                    "line",
                    !due && (calm && !waits || watching && waits || (calm || watching) && m.first),
                    what,
                );
            }
        }
    }
}

/// Each incident's first start in the timeline.
pub fn incident_starts() -> Vec<(Incident, u64)> {
    let mut v: Vec<(Incident, u64)> = Vec::new();
    for p in TIMELINE {
        if p.incident != Incident::Calm && !v.iter().any(|(i, _)| *i == p.incident) {
            v.push((p.incident, p.start));
        }
    }
    v
}
