//! The store: per source the last good value, the last error and their times; and the
//! accumulators fed by every sample (wait tracking, rates, hot spots, Send-Q history, scan rates).

pub mod cpu;
pub mod hotspots;
pub mod io;
pub mod logs;
pub mod scan;
pub mod sockets;
pub mod vitals;
pub mod waits;

use crate::collect::sample::Update;
use crate::error::SourceError;
use crate::extents::ExtentMap;
use crate::parsers::numa::Vmstat;
use crate::parsers::onstat_u::OnstatU;
use crate::parsers::onstat_x::OnstatX;
use crate::parsers::sockets::Sockets;
use crate::parsers::{Parsed, Record};
use crate::source::{Key, Source};
use crate::store::hotspots::Hotspots;
use crate::store::scan::ScanRate;
use crate::store::sockets::SocketHistory;
use crate::store::waits::{Rates, WaitTracker};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// Settings the joins need.
#[derive(Debug, Clone)]
pub struct StoreSettings {
    /// Base page size in KB that onstat page numbers count in.
    pub base_page_kb: u32,
    /// Informix listener ports (empty: unknown, every TCP connection is shown).
    pub ports: Vec<u16>,
    pub hotspot_window: Duration,
    pub socket_window: Duration,
    /// The wall-clock time (UTC) at session time 0: what the header's clock, the snapshot's
    /// `time` and export names are read from. The demo has a clock of its own.
    pub wall_start: Option<time::OffsetDateTime>,
    /// The host the instance runs on, as reports name it.
    pub host: Option<String>,
    /// The instance's name (`ol_prod`, `ol_prod@db01` over ssh), as reports and metrics name it.
    pub instance: Option<String>,
}

impl Default for StoreSettings {
    fn default() -> Self {
        StoreSettings {
            base_page_kb: 2,
            ports: Vec::new(),
            hotspot_window: Duration::from_secs(120),
            socket_window: Duration::from_secs(60),
            wall_start: None,
            host: None,
            instance: None,
        }
    }
}

/// Outputs taken at most this far apart are of one moment: the sources of one tick (the grouped
/// `onstat -u -X -k` is one process; `-g lmx` and `-g con` start on the same tick).
pub const SAME_MOMENT: Duration = Duration::from_millis(250);

/// A session's statement (`onstat -g sql <sid>`) not read again for this long is forgotten:
/// far past any use (`model::activity::SQL_FRESH_S`), and a drilled session's is read every
/// 5 s.
pub const STATEMENTS_KEPT: Duration = Duration::from_secs(120);

/// At most this many mutex names are kept (a server has a few thousand mutexes).
const MUTEX_NAMES_MAX: usize = 100_000;

/// What is known of one source.
#[derive(Debug, Clone, Default)]
pub struct SourceState {
    pub last_ok: Option<(Duration, Parsed)>,
    /// Which apply set `last_ok` (the store's `generation` then): see [`Store::read`].
    pub(crate) ok_at: u64,
    pub(crate) last_error: Option<(Duration, SourceError)>,
    pub runs: u64,
    pub failures: u64,
    pub(crate) last_took: Duration,
    /// How the latest run was made, when the collector said (one `onstat -i` for several
    /// options, or one call per option and why).
    pub(crate) note: Option<String>,
    /// CPU time of the processes that answered it (its share of a call shared with others),
    /// and how many calls that is.
    pub(crate) cpu: Duration,
    pub(crate) cpu_calls: u64,
    /// Bytes of output read for it, and how many calls that is.
    pub(crate) bytes: u64,
    pub(crate) byte_calls: u64,
    /// When its first run was applied (calls a minute).
    pub(crate) first_t: Option<Duration>,
    /// The processes started for it: one a call, or its share of a call that answered several
    /// sources (one `onstat -i` for N options is 1/N each); none for a file read.
    pub(crate) processes: f64,
    /// The runs, and the processes, at `first_t`: a rate counts the runs after the first
    /// instant over the time since it (61 runs a second apart are 60 seconds of them, one a
    /// second, not 61 a minute).
    pub(crate) runs_at_first: u64,
    pub(crate) processes_at_first: f64,
    /// The latest run applied failed. Order of arrival decides, not timestamps: an error and
    /// a good sample can carry the same time.
    pub(crate) latest_failed: bool,
}

impl SourceState {
    /// The last run failed: the data shown (if any) is older than the last attempt.
    pub fn failing(&self) -> Option<&SourceError> {
        match &self.last_error {
            Some((_, e)) if self.latest_failed => Some(e),
            _ => None,
        }
    }

    /// Age of the data shown, at `now`.
    pub(crate) fn age(&self, now: Duration) -> Option<Duration> {
        self.last_ok.as_ref().map(|(t, _)| now.saturating_sub(*t))
    }
}

#[derive(Debug, Clone)]
pub struct Store {
    pub(crate) settings: StoreSettings,
    sources: BTreeMap<Source, SourceState>,
    pub(crate) tracker: WaitTracker,
    pub(crate) rates: Rates,
    /// Each session's CPU use between the last two `onstat -g cpu` samples.
    pub(crate) cpu: cpu::SessionCpu,
    pub(crate) hotspots: Hotspots,
    pub(crate) sockets: SocketHistory,
    pub(crate) scan: ScanRate,
    pub(crate) vitals: vitals::Vitals,
    /// Chunk and device I/O rates, Informix's operation times, the primary's log position.
    pub(crate) io: io::IoHistory,
    /// The logical log's end over time and when each transaction was first seen.
    pub(crate) logs: logs::LogHistory,
    /// The extent map in use and when it arrived (the `oncheck -pe` source's last good value
    /// that was a map).
    extents: Option<(Duration, Parsed)>,
    /// Mutex names by address, from every `onstat -g lmx`/`-g wmx` seen.
    mutex_names: rustc_hash::FxHashMap<crate::ids::Addr, compact_str::CompactString>,
    /// A condition's name at an address (`netnorm`, `sm_read`: a session's own condition, the
    /// next session on its slot has it too), from every `onstat -g con` read: names a
    /// condition wait when this moment's `onstat -g con` does not list it (read a second late,
    /// or failed).
    condition_names: rustc_hash::FxHashMap<crate::ids::Addr, compact_str::CompactString>,
    /// Bumped by every applied update: derived views are rebuilt when it moves.
    pub(crate) generation: u64,
    /// Per kind of source (`onstat -g sql` of every session is one kind), the generation at
    /// which it was last applied or forgotten: what was built from sources whose stamps did not
    /// move is still what they would build (`model/parts/`).
    stamps: rustc_hash::FxHashMap<std::mem::Discriminant<Source>, u64>,
    /// Which store the stamps count in: a new store (a replay's seek back starts one) or a
    /// copy (the frozen moment) counts anew, so nothing built from another is taken for its.
    epoch: Epoch,
    /// Statements applied (every so many, the old ones are forgotten).
    statements_applied: u64,
    /// The parts applied of the latest calls (by their moment) and how many parts the call of
    /// the latest `onstat -u` had: whether that moment is whole ([`Store::moment_whole`]).
    calls: Calls,
    /// Time of the newest sample applied.
    pub latest: Duration,
    /// What ifxtop had cost at the first and the latest sample that ran a process (none on the
    /// demo or a replay).
    pub(crate) process_cost: ProcessCosts,
    /// A sample came from a runner that runs processes on a host (live): what ifxtop costs is
    /// measured there, also while no command finishes.
    pub(crate) runs_processes: bool,
    /// When a source first ran again after its first run: the collectors' second tick had
    /// begun by then, so a source whose first run came before it ran in the first tick.
    pub(crate) first_repeat: Option<Duration>,
}

/// The parts applied of the last few calls, by the moment they share (every part of one call has
/// its start as its time), and the size of the latest `onstat -u`'s call.
#[derive(Debug, Clone, Default)]
struct Calls {
    /// (moment, parts applied), the newest last; a few, as the slow options' call and the
    /// sockets' reads interleave with a tick's call.
    parts: Vec<(Duration, u32)>,
    /// The latest `onstat -u`'s moment and the parts of its call.
    u: Option<(Duration, u32)>,
}

impl Calls {
    const KEPT: usize = 8;

    fn part(&mut self, u: &Update) {
        match self.parts.iter_mut().find(|(t, _)| *t == u.t) {
            Some((_, n)) => *n += 1,
            None => {
                if self.parts.len() == Self::KEPT {
                    self.parts.remove(0);
                }
                self.parts.push((u.t, 1));
            }
        }
        if u.source == Source::OnstatU && u.result.is_ok() {
            self.u = Some((u.t, u.how.shared));
        }
    }

    fn whole(&self, moment: Duration) -> bool {
        match self.u {
            Some((t, shared)) if t == moment && shared > 1 => self
                .parts
                .iter()
                .find(|(p, _)| *p == t)
                .is_some_and(|(_, n)| *n >= shared),
            _ => true,
        }
    }
}

/// Where some sources of one store stand ([`Store::stamp`]): the same stamp, the same values
/// (any apply moves it, whether or not the value differs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    epoch: u64,
    at: u64,
}

/// One good value of a source as applied to one store ([`Store::read`]): the store's number
/// and the apply that set it. No other value applied in this process, to this store or any
/// other, is named so (a source forgotten and read again counts its runs from 1, and a copy
/// or a new store counts its applies anew: neither tells values apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Read {
    /// Not 0: an `Option<Read>` takes no more room.
    store: std::num::NonZeroU64,
    apply: u64,
}

/// A store's own number: every new store and every copy gets another (never 0).
#[derive(Debug)]
struct Epoch(std::num::NonZeroU64);

impl Epoch {
    fn new() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Epoch(std::num::NonZeroU64::new(n).expect("2^64 stores"))
    }
}

impl Clone for Epoch {
    /// A copy goes its own way from here: its stamps are not the original's.
    fn clone(&self) -> Self {
        Epoch::new()
    }
}

/// The first and the latest reading of what ifxtop costs, with their times.
pub(crate) type ProcessCosts = (
    Option<(Duration, crate::source::cost::ProcessCost)>,
    Option<(Duration, crate::source::cost::ProcessCost)>,
);

impl Store {
    pub fn new(settings: StoreSettings) -> Self {
        Store {
            hotspots: Hotspots::new(settings.hotspot_window),
            sockets: SocketHistory::new(settings.socket_window),
            settings,
            sources: BTreeMap::new(),
            tracker: WaitTracker::default(),
            rates: Rates::default(),
            cpu: cpu::SessionCpu::default(),
            scan: ScanRate::default(),
            vitals: vitals::Vitals::default(),
            io: io::IoHistory::default(),
            logs: logs::LogHistory::default(),
            extents: None,
            mutex_names: rustc_hash::FxHashMap::default(),
            condition_names: rustc_hash::FxHashMap::default(),
            generation: 0,
            stamps: rustc_hash::FxHashMap::default(),
            epoch: Epoch::new(),
            statements_applied: 0,
            calls: Calls::default(),
            latest: Duration::ZERO,
            process_cost: (None, None),
            first_repeat: None,
            runs_processes: false,
        }
    }

    /// Forgets the statements (`onstat -g sql <sid>`) not read for [`STATEMENTS_KEPT`]: the
    /// active sessions' statements are read in turn, and sessions come and go. Every 256th
    /// statement applied looks.
    fn forget_old_statements(&mut self, now: Duration) {
        self.statements_applied = self.statements_applied.wrapping_add(1);
        if self.statements_applied % 256 != 0 {
            return;
        }
        let before = self.sources.len();
        self.sources.retain(|s, st| {
            let read = st
                .last_ok
                .as_ref()
                .map(|(t, _)| *t)
                .max(st.last_error.as_ref().map(|(t, _)| *t));
            !matches!(s, Source::OnstatGSql(_))
                || read.is_some_and(|t| now.saturating_sub(t) <= STATEMENTS_KEPT)
        });
        if self.sources.len() != before {
            self.generation += 1;
            self.stamps.insert(
                std::mem::discriminant(&Source::OnstatGSql(crate::ids::Sid(0))),
                self.generation,
            );
        }
    }

    /// Where the sources of `kinds` (one of a kind stands for every source of that kind:
    /// `NodeMeminfo(0)` for every node's) stand: equal stamps, equal values.
    pub(crate) fn stamp(&self, kinds: &[Source]) -> Stamp {
        let at = kinds
            .iter()
            .filter_map(|k| self.stamps.get(&std::mem::discriminant(k)))
            .copied()
            .max()
            .unwrap_or(0);
        Stamp {
            epoch: self.epoch.0.get(),
            at,
        }
    }

    /// Which value `st` (a source of this store) holds as its last good one: the same read,
    /// the same value.
    pub(crate) fn read(&self, st: &SourceState) -> Read {
        Read {
            store: self.epoch.0,
            apply: st.ok_at,
        }
    }

    pub fn source(&self, s: &Source) -> Option<&SourceState> {
        self.sources.get(s)
    }

    pub(crate) fn sources(&self) -> impl Iterator<Item = (&Source, &SourceState)> {
        self.sources.iter()
    }

    /// The per-session sources of one kind (`Source::OnstatGSql` for every sid read), in sid
    /// order: a range of the sources, not a walk through all of them (thousands of sessions
    /// each have theirs).
    pub(crate) fn per_session(
        &self,
        kind: fn(crate::ids::Sid) -> Source,
    ) -> impl Iterator<Item = (crate::ids::Sid, &SourceState)> {
        use crate::ids::Sid;
        self.sources
            .range(kind(Sid(0))..=kind(Sid(u64::MAX)))
            .filter_map(move |(s, st)| match (s, kind(Sid(0))) {
                (Source::OnstatGSql(sid), Source::OnstatGSql(_))
                | (Source::OnstatGSes(sid), Source::OnstatGSes(_))
                | (Source::OnstatGPqs(sid), Source::OnstatGPqs(_)) => Some((*sid, st)),
                _ => None,
            })
    }

    /// Every source but the per-session ones of one kind (`Source::OnstatGSql`: hundreds of
    /// sessions read in turn), in order: the sources before that kind's range, and those after
    /// it ([`Store::per_session`] walks the range itself).
    pub(crate) fn sources_around(
        &self,
        kind: fn(crate::ids::Sid) -> Source,
    ) -> (
        impl Iterator<Item = (&Source, &SourceState)>,
        impl Iterator<Item = (&Source, &SourceState)>,
    ) {
        use crate::ids::Sid;
        use std::ops::Bound::{Excluded, Unbounded};
        (
            self.sources.range(..kind(Sid(0))),
            self.sources
                .range((Excluded(kind(Sid(u64::MAX))), Unbounded)),
        )
    }

    /// The last good value of a source.
    pub(crate) fn parsed(&self, s: &Source) -> Option<&Parsed> {
        self.sources
            .get(s)
            .and_then(|st| st.last_ok.as_ref())
            .map(|(_, p)| p)
    }

    /// The last good value of a source in its own type (`None`: not collected yet, or not
    /// of that type).
    pub fn get<T: Record>(&self, k: Key<T>) -> Option<&T> {
        self.parsed(&k.source()).and_then(|p| p.get::<T>())
    }

    /// When the last good value of a source was taken.
    pub fn observed(&self, s: Source) -> Option<Duration> {
        self.sources
            .get(&s)
            .and_then(|st| st.last_ok.as_ref())
            .map(|(t, _)| *t)
    }

    /// The moment of the latest good `onstat -u`: what the fast facts (holders, waits, thread
    /// states) of a snapshot are joined at.
    pub fn moment(&self) -> Option<Duration> {
        self.observed(Source::OnstatU)
    }

    /// Whether every part of the call that read the latest `onstat -u` has been applied (a
    /// call's parts arrive one by one: a snapshot built between them has the moment's
    /// `onstat -u` with the thread states of the moment before). True for an `onstat -u` read
    /// alone, and where the call's size is not known (a replay).
    pub fn moment_whole(&self) -> bool {
        self.moment().is_none_or(|m| self.calls.whole(m))
    }

    /// The last good value of a source only if it was taken at the same moment as the latest
    /// `onstat -u` (within [`SAME_MOMENT`]): holders change within a second, so an older one is
    /// not joined to this moment's waiters.
    ///
    /// Nor when its banner gives another second of the server's uptime than the `onstat -u`'s:
    /// the options of one `onstat -i` call are printed one after the other, and one printed
    /// after the server's clock ticked (the call stalled between two of them) may show a holder
    /// who took over after the waiters of the `onstat -u` were printed.
    pub fn get_at_moment<T: Record>(&self, k: Key<T>) -> Option<&T> {
        self.at_moment(&k.source()).then(|| self.get(k)).flatten()
    }

    /// Whether the last good output of `source` was taken at the moment of the latest `onstat
    /// -u` (within [`SAME_MOMENT`], printed in the same second of the server's clock): the one
    /// rule [`Self::get_at_moment`] joins by, and a report asks before it says a holder is
    /// unknown.
    pub(crate) fn at_moment(&self, source: &Source) -> bool {
        self.read_at_moment(source) && self.in_step(source, &Source::OnstatU)
    }

    /// Whether the last good output of `source` was read within [`SAME_MOMENT`] of the latest
    /// `onstat -u`, by ifxtop's clock.
    fn read_at_moment(&self, source: &Source) -> bool {
        self.moment()
            .zip(self.observed(*source))
            .is_some_and(|(m, t)| m.abs_diff(t) <= SAME_MOMENT)
    }

    /// Whether `source` was read at the moment of the latest `onstat -u` but printed in a later
    /// second of the server's clock (its banner says so): of that moment by ifxtop's clock, not
    /// by the server's.
    pub(crate) fn late_for_moment(&self, source: &Source) -> bool {
        self.read_at_moment(source) && !self.in_step(source, &Source::OnstatU)
    }

    /// The server's uptime in the banner of the last good output of `s` (whole seconds).
    fn uptime(&self, s: &Source) -> Option<u64> {
        self.parsed(s)?.header()?.uptime_s
    }

    /// Two outputs were printed in the same second of the server's clock, as far as their
    /// banners tell (an output with no banner, or a banner with no uptime, does not tell).
    fn in_step(&self, a: &Source, b: &Source) -> bool {
        match (self.uptime(a), self.uptime(b)) {
            (Some(x), Some(y)) => x == y,
            _ => true,
        }
    }

    /// The last good value of a source only if it was taken at moment `t` (within
    /// [`SAME_MOMENT`]).
    pub(crate) fn get_at<T: Record>(&self, k: Key<T>, t: Duration) -> Option<&T> {
        let apart = t.abs_diff(self.observed(k.source())?);
        (apart <= SAME_MOMENT).then(|| self.get(k)).flatten()
    }

    /// A mutex's name at an address: it does not change while the server is up, so a name
    /// seen once names the address from then on (`onstat -g lmx`/`-g wmx` are read every 10 s
    /// or when a mutex wait lasts).
    pub(crate) fn mutex_names(
        &self,
    ) -> &rustc_hash::FxHashMap<crate::ids::Addr, compact_str::CompactString> {
        &self.mutex_names
    }

    /// A condition's name at an address, from any `onstat -g con` read so far.
    pub(crate) fn condition_names(
        &self,
    ) -> &rustc_hash::FxHashMap<crate::ids::Addr, compact_str::CompactString> {
        &self.condition_names
    }

    pub fn extents(&self) -> Option<&ExtentMap> {
        self.extents
            .as_ref()
            .and_then(|(_, m)| m.get::<ExtentMap>())
    }

    pub(crate) fn extents_loaded_at(&self) -> Option<Duration> {
        self.extents.as_ref().map(|(t, _)| *t)
    }

    /// Applies one sample: the source's state, then the accumulators it feeds.
    pub fn apply(&mut self, u: Update) {
        self.latest = self.latest.max(u.t);
        self.generation += 1;
        self.stamps
            .insert(std::mem::discriminant(&u.source), self.generation);
        self.calls.part(&u);
        if let Some(p) = u.how.process {
            self.process_cost.0.get_or_insert((u.t, p));
            self.process_cost.1 = Some((u.t, p));
        }
        self.runs_processes |= u.how.live;
        let st = self.sources.entry(u.source).or_default();
        st.first_t.get_or_insert(u.t);
        if let Some(c) = u.how.cpu {
            st.cpu += c / u.how.shared.max(1);
            st.cpu_calls += 1;
        }
        if let Some(b) = u.how.bytes {
            st.bytes = st.bytes.saturating_add(b);
            st.byte_calls += 1;
        }
        st.runs += 1;
        let share = match u.source.call_kind() {
            crate::source::CallKind::FileRead => 0.0,
            _ => 1.0 / f64::from(u.how.shared.max(1)),
        };
        st.processes += share;
        let again = st.first_t.is_some_and(|f| u.t > f);
        if !again {
            st.runs_at_first += 1;
            st.processes_at_first += share;
        }
        st.last_took = u.took;
        st.note = u.how.note.clone();
        if again && self.first_repeat.is_none_or(|r| u.t < r) {
            self.first_repeat = Some(u.t);
        }
        let parsed = match u.result {
            Err(e) => {
                st.failures += 1;
                st.latest_failed = true;
                st.last_error = Some((u.t, e));
                return;
            }
            Ok(p) => p,
        };
        st.latest_failed = false;
        st.last_ok = Some((u.t, parsed.clone()));
        st.ok_at = self.generation;
        if matches!(u.source, Source::OnstatGSql(_)) {
            self.forget_old_statements(u.t);
        }
        let base = self.settings.base_page_kb;
        match u.source {
            Source::OnstatU => {
                if let Some(v) = parsed.get::<OnstatU>() {
                    self.tracker.observe(v, u.t);
                    self.rates.observe(v, u.t);
                    let blocked = v.header.as_ref().and_then(|h| h.blocked.as_deref());
                    self.vitals.blocked.observe(blocked, u.t);
                    // An `onstat -x` of this moment applied before it: its oldest
                    // transaction's owner is this output's.
                    if self.at_moment(&Source::OnstatXTxn) {
                        self.logs.name_owner(v);
                    }
                }
            }
            Source::OnstatGCon => {
                if let Some(v) = parsed.get::<crate::parsers::onstat_g_con::OnstatGCon>() {
                    for c in &v.conditions {
                        let known = self.condition_names.get(&c.addr);
                        if known.is_some_and(|n| n == c.name.as_str()) {
                            continue;
                        }
                        if known.is_some() || self.condition_names.len() < MUTEX_NAMES_MAX {
                            self.condition_names.insert(c.addr, c.name.as_str().into());
                        }
                    }
                }
            }
            Source::OnstatGLmx | Source::OnstatGWmx => {
                if let Some(v) = parsed.get::<crate::parsers::onstat_g_lmx::OnstatGLmx>() {
                    for m in &v.mutexes {
                        if self.mutex_names.len() < MUTEX_NAMES_MAX
                            || self.mutex_names.contains_key(&m.addr)
                        {
                            self.mutex_names.insert(m.addr, m.name.as_str().into());
                        }
                    }
                }
            }
            Source::OnstatX => {
                if let Some(v) = parsed.get::<OnstatX>() {
                    let map = self
                        .extents
                        .as_ref()
                        .and_then(|(_, m)| m.get::<ExtentMap>());
                    self.hotspots.observe(v, u.t, map, base);
                }
            }
            Source::ProcNetTcp | Source::Netstat => {
                if let Some(v) = parsed.get::<Sockets>() {
                    // tcp6 arrives on its own; the latest one joins each tcp sample.
                    let v6 = self.parsed(&Source::ProcNetTcp6).cloned();
                    let v6 = v6.as_deref().and_then(|p| p.get::<Sockets>());
                    let all = v
                        .sockets
                        .iter()
                        .chain(v6.iter().flat_map(|s| s.sockets.iter()));
                    self.sockets.observe(all, u.t, &self.settings.ports);
                }
            }
            Source::Vmstat => {
                if let Some(v) = parsed.get::<Vmstat>() {
                    self.scan.observe(&v.0, u.t);
                }
            }
            Source::OnstatP => {
                if let Some(p) = parsed.get::<crate::parsers::onstat_p::OnstatP>() {
                    if p.offline.is_none() {
                        self.vitals.profile.observe(p, u.t);
                    }
                }
            }
            Source::OnstatL => {
                if let Some(l) = parsed.get::<crate::parsers::onstat_l::OnstatL>() {
                    self.logs.observe_l(l, u.t);
                }
            }
            Source::OnstatXTxn => {
                if let Some(x) = parsed.get::<crate::parsers::onstat_x_txn::OnstatXTxn>() {
                    // Its oldest transaction's owner only from the `onstat -u` of its moment:
                    // an rstcb of another moment may be another session's.
                    let mut logs = std::mem::take(&mut self.logs);
                    let users = self
                        .at_moment(&Source::OnstatXTxn)
                        .then(|| self.get(crate::source::key::OnstatU))
                        .flatten();
                    logs.observe_x(x, u.t, users);
                    self.logs = logs;
                }
            }
            Source::OnstatGGlo => {
                if let Some(g) = parsed.get::<crate::parsers::onstat_g_glo::OnstatGGlo>() {
                    // Printed in a later second than the onstat -u of its call: its CPU
                    // seconds are of another moment than its time says.
                    let late = self.get_at(crate::source::key::OnstatU, u.t).is_some()
                        && !self.in_step(&Source::OnstatGGlo, &Source::OnstatU);
                    if late {
                        self.vitals.vps.observe_late();
                    } else {
                        self.vitals.vps.observe(g, u.t);
                    }
                }
            }
            Source::OnstatGSeg => {
                if let Some(s) = parsed.get::<crate::parsers::onstat_g_seg::OnstatGSeg>() {
                    if !s.segments.is_empty() {
                        self.vitals.memory.observe(s);
                    }
                }
            }
            Source::OnstatGCpu => {
                if let Some(g) = parsed.get::<crate::parsers::onstat_g_cpu::OnstatGCpu>() {
                    // The threads' sessions only from outputs of this moment: an rstcb of
                    // another moment may be another session's.
                    let mut cpu = std::mem::take(&mut self.cpu);
                    let ath = self.get_at(crate::source::key::OnstatGAth, u.t);
                    let users = self.get_at(crate::source::key::OnstatU, u.t);
                    // Printed in a later second than the onstat -u of its moment: its CPU
                    // seconds run to another second than its time says.
                    let late =
                        users.is_some() && !self.in_step(&Source::OnstatGCpu, &Source::OnstatU);
                    if late {
                        cpu.observe_late();
                    } else {
                        cpu.observe(g, u.t, u.took, ath, users);
                    }
                    self.cpu = cpu;
                }
            }
            Source::OnstatGRea => {
                if let Some(r) = parsed.get::<crate::parsers::onstat_g_rea::OnstatGRea>() {
                    self.vitals.ready.observe(r.threads.len());
                }
            }
            Source::OnstatDUpper => {
                if let Some(d) = parsed.get::<crate::parsers::onstat_d_upper::OnstatDUpper>() {
                    if d.offline.is_none() {
                        self.io.chunks.observe(d, u.t);
                    }
                }
            }
            Source::OnstatGIof => {
                if let Some(g) = parsed.get::<crate::parsers::onstat_g_iof::OnstatGIof>() {
                    if g.offline.is_none() {
                        self.io.iof.observe(g, u.t);
                    }
                }
            }
            Source::ProcDiskstats => {
                if let Some(d) = parsed.get::<crate::parsers::proc_diskstats::ProcDiskstats>() {
                    self.io.disks.observe(d, u.t);
                }
            }
            Source::OnstatGCluster => {
                if let Some(c) = parsed.get::<crate::parsers::onstat_g_cluster::OnstatGCluster>() {
                    self.io.log.observe(c, u.t);
                }
            }
            Source::OncheckPe => {
                if let Some(m) = parsed.get::<ExtentMap>() {
                    self.hotspots.rekey(m, base);
                    self.extents = Some((u.t, parsed.clone()));
                }
            }
            _ => {}
        }
    }

    /// Applies what a replay step played: a seek back starts over from an empty store.
    pub(crate) fn play(&mut self, mut played: crate::collect::replay::Played) {
        self.play_for(&mut played, Duration::MAX);
    }

    /// Applies what a replay step played for at most about `budget` (a seek through a long
    /// recording reads and parses for seconds): whether it is all applied. What is left stays
    /// in `played` for the next call.
    pub(crate) fn play_for(
        &mut self,
        played: &mut crate::collect::replay::Played,
        budget: Duration,
    ) -> bool {
        if std::mem::take(&mut played.restart) {
            *self = Store::new(self.settings.clone());
        }
        let start = std::time::Instant::now();
        while let Some(u) = played.next_update() {
            self.apply(u);
            if start.elapsed() >= budget {
                return false;
            }
        }
        true
    }
}

/// A store holding everything a recording says up to `at` (the end when `None`).
pub fn replayed(
    rec: Arc<crate::collect::record::Recording>,
    settings: StoreSettings,
    at: Option<Duration>,
) -> Store {
    let mut store = Store::new(settings);
    let mut p = crate::collect::replay::Player::new(rec);
    let target = at.unwrap_or_else(|| p.length());
    store.play(p.seek(target));
    store
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::sample::{How, Update};
    use crate::ids::Sid;

    fn statement(sid: u64, t: u64) -> Update {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/onstat-g-sql/ifxtop-sql-812.txt"
        ))
        .expect("the fixture");
        Update {
            source: Source::OnstatGSql(Sid(sid)),
            t: Duration::from_secs(t),
            took: Duration::ZERO,
            result: Ok(Source::OnstatGSql(Sid(sid))
                .parse_str(&text)
                .expect("parses")),
            how: How::default(),
        }
    }

    /// The per-session sources of one kind are every sid read of that kind, and only those:
    /// not another kind's of the same sid, not a source without one.
    #[test]
    fn per_session_takes_one_kind_whole() {
        let mut store = Store::new(StoreSettings::default());
        for sid in [0, 7, 812, u64::MAX] {
            store.apply(statement(sid, 1));
        }
        let mut other = statement(7, 1);
        other.source = Source::OnstatGSes(Sid(7));
        store.apply(other);
        let mut u = statement(3, 1);
        u.source = Source::OnstatU;
        store.apply(u);
        let sids = |kind: fn(Sid) -> Source| -> Vec<u64> {
            store.per_session(kind).map(|(s, _)| s.0).collect()
        };
        assert_eq!(sids(Source::OnstatGSql), vec![0, 7, 812, u64::MAX]);
        assert_eq!(sids(Source::OnstatGSes), vec![7]);
        assert!(sids(Source::OnstatGPqs).is_empty());
    }

    /// The statements of sessions not read again for STATEMENTS_KEPT are forgotten: reading
    /// the active sessions' statements in turn does not grow the store for ever.
    #[test]
    fn old_statements_are_forgotten() {
        let mut store = Store::new(StoreSettings::default());
        for sid in 0..1_000u64 {
            store.apply(statement(sid, sid / 100));
        }
        let kept = |store: &Store| {
            store
                .sources()
                .filter(|(s, _)| matches!(s, Source::OnstatGSql(_)))
                .count()
        };
        assert_eq!(kept(&store), 1_000);
        // Minutes later, session 5 is read again, and others: the ones of long ago go.
        for k in 0..256u64 {
            store.apply(statement(5 + (k % 3) * 1_000, 300));
        }
        assert_eq!(kept(&store), 3, "only the statements read lately");
        assert!(store.source(&Source::OnstatGSql(Sid(5))).is_some());
    }

    /// A read names one value: a statement forgotten and read again counts its runs from 1
    /// (here at the same moment as before, a clock gone back), a copy of the store counts the
    /// same applies; neither is the read it was.
    #[test]
    fn a_read_is_never_named_twice() {
        let read = |store: &Store| {
            let st = store.source(&Source::OnstatGSql(Sid(7))).expect("read");
            (st.runs, store.read(st))
        };
        let mut store = Store::new(StoreSettings::default());
        store.apply(statement(7, 1));
        let (runs, first) = read(&store);
        for k in 0..256u64 {
            store.apply(statement(1_000 + k, 300));
        }
        assert!(
            store.source(&Source::OnstatGSql(Sid(7))).is_none(),
            "forgotten"
        );
        store.apply(statement(7, 1));
        let (runs_again, again) = read(&store);
        assert_eq!(runs_again, runs, "the runs tell them not apart");
        assert_ne!(again, first);
        let copy = store.clone();
        assert_ne!(read(&copy).1, again);
        assert_eq!(read(&store).1, again, "the same read, the same name");
    }

    /// A read takes 16 bytes in a row, none more for being optional (5,000 sessions' rows).
    #[test]
    fn a_read_is_small() {
        assert_eq!(std::mem::size_of::<Option<Read>>(), 16);
    }
}
