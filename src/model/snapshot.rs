//! The snapshot: every pane's rows derived from the store at one moment. Views draw it, freeze
//! keeps it, `ifxtop snapshot` prints it. Rebuilt when data changes, never per frame.

use crate::ids::Sid;
use crate::model::numa::NumaView;
use crate::model::waiters::{SocketRef, WaiterRow};
use crate::parsers::onstat_u::WaitReason;
use crate::source::Source;
use crate::store::hotspots::HotspotRow;
use crate::store::sockets::SocketRow;
use crate::store::Store;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;

pub use crate::model::parts::health::{Cost, SourceStatus};
pub use crate::model::parts::server::ServerInfo;
pub use crate::model::parts::sessions::SessionCpuSpan;
pub use crate::model::parts::waits::{HeadBlocker, WaitSummary};
pub use crate::model::parts::Parts;

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
    /// Which build the socket rows are, for the next to keep those that did not change.
    #[serde(skip)]
    pub sockets_tag: crate::store::sockets::RowsTag,
    /// Shared with the snapshots before while its sources do not move.
    pub numa: Arc<NumaView>,
    pub sources: Vec<SourceStatus>,
    /// What ifxtop costs the server (`None` before any source ran).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
    /// What the flight recorder costs (`--ring`): set by the snapshot's owner, which keeps
    /// the ring.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ring: Option<crate::collect::ring::RingStats>,
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
    pub io: Arc<crate::model::io::IoView>,
    /// The server's part in replication and its peers' lag.
    pub replication: Arc<crate::model::io::Replication>,
    /// The server's vital signs: `rates`, `checkpoints`, `logs`, `vps`, `ready_queue`,
    /// `mutexes`, `memory` at the JSON's top level.
    #[serde(flatten)]
    pub vitals: crate::model::vitals::Vitals,
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
    /// Hands the room of this snapshot's row vectors (waiters, sessions, sockets) to `parts`
    /// for the next build, when nothing else holds the snapshot; else it is only let go.
    pub fn recycle(this: Arc<Snapshot>, parts: &mut crate::model::parts::Parts) {
        use crate::model::parts::Spare;
        let Ok(s) = Arc::try_unwrap(this) else {
            return;
        };
        Spare::keep_rows(&mut parts.spare.waiters, s.waiters);
        Spare::keep_rows(&mut parts.spare.sessions.rows, s.sessions);
        let kept = parts.sockets.tag();
        parts.spare.keep_sockets(s.sockets, s.sockets_tag, kept);
    }

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

/// The user sessions using CPU, with their CPU: those whose statements may be read for it.
fn cpu_candidates(snap: &Snapshot) -> Vec<(f64, Sid)> {
    snap.sessions
        .iter()
        .filter(|s| !s.system)
        .filter_map(|s| Some((s.cpu_percent.filter(|c| *c > 0.0)?, s.sessid)))
        .collect()
}

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
    let mut cpu = cpu_candidates(snap);
    // The first TOP_CPU_STATEMENTS by CPU (ties by session): a selection, not a sort of
    // thousands of sessions each second (their order among themselves does not matter).
    let by_cpu = |a: &(f64, Sid), b: &(f64, Sid)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    if cpu.len() > TOP_CPU_STATEMENTS {
        cpu.select_nth_unstable_by(TOP_CPU_STATEMENTS, by_cpu);
        cpu.truncate(TOP_CPU_STATEMENTS);
    }
    out.extend(cpu.into_iter().map(|(_, s)| s));
    out.sort_unstable();
    out.dedup();
    out
}

pub fn build(store: &Store, now: Duration, server_name: Option<&str>, focus: &[Sid]) -> Snapshot {
    build_with(store, now, server_name, focus, None)
}

/// `build`, with the screen of the buffer hot spot labelled `hotspot` too: every part built
/// anew.
pub fn build_with(
    store: &Store,
    now: Duration,
    server_name: Option<&str>,
    focus: &[Sid],
    hotspot: Option<&str>,
) -> Snapshot {
    build_from(
        store,
        now,
        server_name,
        focus,
        hotspot,
        &mut crate::model::parts::Parts::default(),
    )
}

/// `build_with`, reusing the parts kept in `parts` whose sources did not move since they were
/// built (and keeping this build's there for the next): what a watch does every second. Equal
/// to `build_with` of the same store at the same time, whatever was built before.
pub fn build_from(
    store: &Store,
    now: Duration,
    server_name: Option<&str>,
    focus: &[Sid],
    hotspot: Option<&str>,
    parts: &mut crate::model::parts::Parts,
) -> Snapshot {
    use crate::model::parts::{health, hotspots, server, sockets, waits};
    crate::model::parts::begin(parts, now);
    let extents = store.extents();
    let index = waits::wait_index(store);
    let sockets::Sockets {
        rows: mut sockets,
        tag: sockets_tag,
        of_session,
    } = sockets::build(
        store,
        std::mem::take(&mut parts.spare.sockets),
        std::mem::take(&mut parts.spare.sockets_tag),
        &mut parts.sockets,
    );
    let socket_of = |sid: Sid| -> Option<SocketRef> {
        sockets.get(*of_session.get(&sid)?).map(SocketRef::from)
    };

    let server = server::build(store, server_name);
    let io = parts.io(store);
    parts.session_maps(store);
    let waits::Waits {
        summary,
        waiters,
        heads,
        sessions,
    } = match store.get(crate::source::key::OnstatU) {
        Some(u) => waits::waits(store, u, &index, now, &socket_of, &io, &mut parts.spare),
        None => waits::Waits::default(),
    };
    let head_sids: Vec<Sid> = heads.iter().map(|h| h.sid).collect();
    let tree = crate::model::tree::tree(&waiters, &head_sids);

    let hotspots = hotspots::build(store);
    sockets::name_users(store, &mut sockets);
    let numa = parts.numa(store);
    let sources = health::source_statuses(store, now);
    let cost = health::cost(store, &sources, now);

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
    let replication = parts.replication(store, flags);
    let mut snap = Snapshot {
        io,
        replication,
        hotspot_view,
        vitals: crate::model::vitals::build(store),
        heads,
        tree,
        session_cpu: crate::model::parts::sessions::session_cpu_span(store),
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
        sockets_tag,
        numa,
        sources,
        cost,
        ring: None,
        unresolved_share: store.hotspots.unresolved_share(),
        ports: store.settings.ports.clone(),
        extents_loaded: extents.is_some(),
        findings: Vec::new(),
        moment_s: store.moment().map(|m| m.as_secs_f64()),
        run: waits::run_states(store),
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
    health::mark_late(&mut snap.findings, &snap.sources);
    // Alone, a snapshot knows each finding's start from its waits, else as a lower bound;
    // the owner of the store tracks them across snapshots (`track_findings`).
    snap.track_findings(
        &mut crate::model::findings::FindingsHistory::default(),
        store.settings.wall_start,
    );
    snap
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

#[cfg(test)]
mod wanted {
    //! The sessions whose statements are read.
    use super::*;
    use crate::model::sessions::SessionRow;
    use proptest::prelude::*;

    /// The top sessions by CPU as a whole sort names them.
    fn top_by_sort(snap: &Snapshot) -> Vec<Sid> {
        let mut cpu = cpu_candidates(snap);
        cpu.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut top: Vec<Sid> = cpu.iter().take(TOP_CPU_STATEMENTS).map(|c| c.1).collect();
        top.sort_unstable();
        top.dedup();
        top
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]
        /// Few distinct CPU figures, so that ties straddle the tenth place.
        #[test]
        fn the_top_by_cpu_as_a_sort_names_them(
            rows in proptest::collection::vec((1u64..60, 0u8..6, any::<bool>()), 0..40)
        ) {
            let mut snap = Snapshot::default();
            for (sid, cpu, system) in rows {
                let mut row = SessionRow::empty(Sid(sid));
                row.cpu_percent = (cpu > 0).then(|| f64::from(cpu) / 2.0);
                row.system = system;
                snap.sessions.push(row);
            }
            prop_assert_eq!(statements_wanted(&snap), top_by_sort(&snap));
        }
    }
}

#[cfg(test)]
mod parts {
    //! The parts kept between snapshots: shared while their sources hold, built whole after
    //! any break.
    use super::*;
    use crate::model::parts::GAP;
    use crate::model::test_store::update;

    /// A store with the demo's `onstat -u` at `t` and zone reclaim `zone`.
    fn store(zone: &str, t: u64) -> Store {
        let demo = crate::demo::DemoInstance::new(1).with_sessions(20);
        let u = demo
            .respond(&Source::OnstatU.request(), Duration::from_secs(t))
            .expect("onstat -u");
        let mut s = Store::new(Default::default());
        s.apply(update(Source::ZoneReclaimMode, zone, t));
        s.apply(update(Source::OnstatU, &u.stdout, t));
        s
    }

    fn at(t: u64) -> Duration {
        Duration::from_secs(t)
    }

    /// A part whose sources were not applied since it was built is the same part (shared, not
    /// built again); one whose source was applied is built again.
    #[test]
    fn unmoved_parts_are_shared() {
        let mut parts = Parts::default();
        let mut s = store("0\n", 1);
        let a = build_from(&s, at(1), None, &[], None, &mut parts);
        let demo = crate::demo::DemoInstance::new(1).with_sessions(20);
        let u = demo
            .respond(&Source::OnstatU.request(), at(2))
            .expect("onstat -u");
        s.apply(update(Source::OnstatU, &u.stdout, 2));
        let b = build_from(&s, at(2), None, &[], None, &mut parts);
        assert!(Arc::ptr_eq(&a.numa, &b.numa), "NUMA read nothing new");
        assert!(Arc::ptr_eq(&a.io, &b.io));
        assert_eq!(b, build_with(&s, at(2), None, &[], None));
        s.apply(update(Source::ZoneReclaimMode, "1\n", 3));
        let c = build_from(&s, at(3), None, &[], None, &mut parts);
        assert!(
            !Arc::ptr_eq(&b.numa, &c.numa),
            "zone reclaim was read again"
        );
        assert_eq!(c.numa.zone_reclaim_mode, Some(1));
        assert_eq!(c, build_with(&s, at(3), None, &[], None));
    }

    /// A new store (a replay's seek back starts one) counts its stamps anew: what was built
    /// from the old one at the same stamps is not taken for its.
    #[test]
    fn a_new_store_is_built_whole() {
        let mut parts = Parts::default();
        let old = store("0\n", 1);
        let _ = build_from(&old, at(1), None, &[], None, &mut parts);
        // The same sources applied in the same order: the same generations, other values.
        let new = store("1\n", 1);
        let snap = build_from(&new, at(1), None, &[], None, &mut parts);
        assert_eq!(snap.numa.zone_reclaim_mode, Some(1));
        assert_eq!(snap, build_with(&new, at(1), None, &[], None));
    }

    /// A copy of a store (the frozen moment) goes its own way: its stamps are its own.
    #[test]
    fn a_copy_is_built_whole() {
        let mut parts = Parts::default();
        let mut live = store("0\n", 1);
        let mut frozen = live.clone();
        frozen.apply(update(Source::ZoneReclaimMode, "1\n", 2));
        live.apply(update(Source::ZoneReclaimMode, "0\n", 2));
        let _ = build_from(&live, at(2), None, &[], None, &mut parts);
        let snap = build_from(&frozen, at(2), None, &[], None, &mut parts);
        assert_eq!(snap.numa.zone_reclaim_mode, Some(1));
    }

    /// A clock that goes back (a seek back, a restart) or jumps (a gap) starts over: nothing
    /// kept is used.
    #[test]
    fn the_clock_going_back_or_jumping_starts_over() {
        let mut parts = Parts::default();
        let s = store("0\n", 1);
        let _ = build_from(&s, at(10), None, &[], None, &mut parts);
        let _ = build_from(&s, at(11), None, &[], None, &mut parts);
        assert_eq!(parts.counts().restarts, 0);
        let reused = parts.counts().reused;
        assert!(reused > 0, "{:?}", parts.counts());
        let back = build_from(&s, at(5), None, &[], None, &mut parts);
        assert_eq!(parts.counts().restarts, 1);
        assert_eq!(
            parts.counts().reused,
            reused,
            "nothing reused after going back"
        );
        assert_eq!(back, build_with(&s, at(5), None, &[], None));
        let _ = build_from(
            &s,
            at(5) + GAP + Duration::from_secs(1),
            None,
            &[],
            None,
            &mut parts,
        );
        assert_eq!(parts.counts().restarts, 2);
        assert_eq!(parts.counts().reused, reused, "nothing reused after a gap");
    }
}

#[cfg(test)]
mod session_rows {
    //! The sessions' rows written over the previous snapshot's.
    use super::*;
    use crate::demo::DemoInstance;
    use crate::model::parts::sessions::session_rows;
    use crate::model::test_store;
    use crate::source::Source;

    /// A store fed every source the demo answers for the minute before `t`.
    fn store_at(demo: &DemoInstance, t: u64) -> Store {
        let mut store = test_store::new_store();
        let sources = test_store::sources_answered(demo);
        for t in t - 60..=t {
            // Every source, then the statements of this second's first sessions.
            let statements: Vec<Source> = store
                .get(crate::source::key::OnstatU)
                .map(|u| {
                    u.threads
                        .iter()
                        .filter(|th| th.sessid.0 != 0)
                        .take(30)
                        .map(|th| Source::OnstatGSql(th.sessid))
                        .collect()
                })
                .unwrap_or_default();
            let every = sources.iter().chain(&statements).copied();
            test_store::feed(&mut store, demo, every, t);
        }
        store
    }

    fn rows(
        store: &Store,
        t: u64,
        room: Vec<crate::model::sessions::SessionRow>,
    ) -> Vec<crate::model::sessions::SessionRow> {
        let now = Duration::from_secs(t);
        let snap = build(store, now, None, &[]);
        let u = store.get(crate::source::key::OnstatU).expect("onstat -u");
        session_rows(store, u, &snap.waiters, now, room.into())
    }

    /// Rows written over the rows of another moment (other states, waits, statements, blocks,
    /// sessions gone and new) are the rows built from nothing.
    #[test]
    fn rows_written_over_another_moments_are_the_rows_built_anew() {
        let demo = DemoInstance::new(1).with_sessions(40);
        for (before, after) in [(278, 455), (455, 278), (230, 300), (300, 300)] {
            let old = rows(&store_at(&demo, before), before, Vec::new());
            let store = store_at(&demo, after);
            let fresh = rows(&store, after, Vec::new());
            // The check has teeth: statements to write over, and sessions of both moments
            // whose rows differ.
            let statements = fresh.iter().filter(|r| r.sql.is_some()).count();
            assert!(statements > 5, "{after}: {statements} statements");
            if before != after {
                let differ = fresh
                    .iter()
                    .filter(|r| old.iter().any(|o| o.sessid == r.sessid && o != *r))
                    .count();
                assert!(differ > 5, "{before} -> {after}: {differ} rows differ");
            }
            let over = rows(&store, after, old);
            let json = |r: &[crate::model::sessions::SessionRow]| {
                serde_json::to_string_pretty(r).expect("serializes")
            };
            assert_eq!(json(&over), json(&fresh), "{before} -> {after}");
        }
    }
}

#[cfg(test)]
mod sessions_kept {
    //! The sessions' rows built from what was kept (the maps of slow sources, the rows and
    //! statements of the second before) are the rows built from nothing.
    use crate::collect::sample::Update;
    use crate::demo::DemoInstance;
    use crate::model::parts::Parts;
    use crate::model::snapshot::{self, Snapshot};
    use crate::model::test_store::{self, new_store};
    use crate::source::Source;
    use crate::store::Store;
    use std::sync::Arc;
    use std::time::Duration;

    /// Feeds `store` second `t`: each source due at its period, then the statements of a
    /// turn of the sessions (a different few each second, as the collectors read them).
    fn feed(store: &mut Store, demo: &DemoInstance, sources: &[Source], t: u64) {
        let due = sources
            .iter()
            .filter(|s| t % s.period().as_secs().max(1) == 0)
            .copied();
        let turn: Vec<Source> = demo
            .sids_at(t)
            .iter()
            .skip((t as usize * 7) % 40)
            .step_by(5)
            .take(12)
            .map(|&sid| Source::OnstatGSql(crate::ids::Sid(sid)))
            .collect();
        test_store::feed(store, demo, due.chain(turn), t);
    }

    /// Walks `demo` from `from` for `seconds`, with seeks on the way (at a step, to a time of
    /// a demo: a new store, the parts and rows kept, as a replay's seek, or another recording
    /// opened): each second's rows from the kept parts equal the rows built whole. Returns how
    /// many of the kept builds reused the client hosts and how many rows kept their statement's
    /// text.
    fn walk(
        demo: &DemoInstance,
        from: u64,
        seconds: u64,
        seeks: &[(u64, u64, &DemoInstance)],
    ) -> (u64, usize) {
        let sources = test_store::sources_answered(demo);
        let mut parts = Parts::default();
        let mut store = new_store();
        let mut t = from;
        let mut demo = demo;
        let mut kept_texts = 0;
        let mut kept_maps = 0;
        let mut hosts_before = None;
        for step in 0..seconds {
            if let Some(&(_, to, other)) = seeks.iter().find(|(at, _, _)| *at == step) {
                store = new_store();
                t = to;
                demo = other;
            }
            feed(&mut store, demo, &sources, t);
            let now = Duration::from_secs(t);
            let before: Vec<_> = parts
                .spare
                .sessions
                .rows
                .iter()
                .map(|r| (r.sessid, r.sql_read))
                .collect();
            let kept = snapshot::build_from(&store, now, None, &[], None, &mut parts);
            let whole = snapshot::build(&store, now, None, &[]);
            assert_eq!(kept.sessions.len(), whole.sessions.len(), "{t}s");
            for (k, w) in kept.sessions.iter().zip(&whole.sessions) {
                assert_eq!(k, w, "{t}s: session {}", k.sessid);
            }
            kept_texts += kept
                .sessions
                .iter()
                .filter(|r| r.sql.is_some() && before.contains(&(r.sessid, r.sql_read)))
                .count();
            let hosts = parts.session_hosts_kept();
            kept_maps += u64::from(hosts_before == Some(hosts));
            hosts_before = Some(hosts);
            Snapshot::recycle(Arc::new(kept), &mut parts);
            t += 1;
        }
        (kept_maps, kept_texts)
    }

    /// An `onstat -g sql` of `sid` at `t` whose statement is `sql`.
    fn statement(sid: crate::ids::Sid, sql: &str, t: u64) -> Update {
        let out = format!(
            "IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 12 days 03:04:05 \
             -- 4194304 Kbytes\n\n\
             Sess       SQL            Current            Iso Lock       SQL  ISAM F.E.\n\
             Id         Stmt type      Database           Lvl Mode       ERR  ERR  Vers  Explain\n\
             {:<10} SELECT         stores             CR  Wait 30    0    0    9.24  Off\n\n\
             Current statement name : slctcur\n\n\
             Current SQL statement (5) :\n  {sql}\n\n\
             Last parsed SQL statement :\n  {sql}\n",
            sid.0
        );
        test_store::update(Source::OnstatGSql(sid), &out, t)
    }

    /// Rows of another store handed back late (a snapshot the screen held across a seek or
    /// another recording opened) hold reads that no read of this store is: two stores fed the
    /// same sources in the same order at the same moment, the statement of one session of the
    /// same length and another text in each; the rows of the first, handed back as room to a
    /// build from the second, show the second's text.
    #[test]
    fn rows_of_another_store_keep_no_text() {
        let demo = DemoInstance::new(1).with_sessions(40);
        let t = 300;
        let u = Update::from_demo(&demo, Source::OnstatU, Duration::from_secs(t)).expect("-u");
        let sid = demo.sids_at(t)[0];
        let sid = crate::ids::Sid(sid);
        let fed = |sql: &str| {
            let mut store = new_store();
            store.apply(u.clone());
            store.apply(statement(sid, sql, t));
            store
        };
        let a = fed("select * from customer where customer_num = 101");
        let b = fed("select * from customer where customer_num = 102");
        let now = Duration::from_secs(t);
        let mut parts = Parts::default();
        // The screen holds the snapshot of `a` while the next ones are built from `b`.
        let held = Arc::new(snapshot::build_from(&a, now, None, &[], None, &mut parts));
        let shown = snapshot::build_from(&b, now, None, &[], None, &mut parts);
        Snapshot::recycle(held, &mut parts);
        assert!(parts.spare_room()[1] > 0, "the rows of `a` came back");
        let next = snapshot::build_from(&b, now, None, &[], None, &mut parts);
        let whole = snapshot::build(&b, now, None, &[]);
        assert_eq!(
            next.statement_of(sid),
            Some("select * from customer where customer_num = 102")
        );
        assert_eq!(next.sessions, whole.sessions);
        drop(shown);
    }

    /// Every seed the tests use, tidy and messy, with short-lived sessions coming and going
    /// (their sids used again), seeks back and forth, and another instance's recording at the
    /// same moment (the same sids read at the same times, other statements).
    #[test]
    fn rows_from_kept_parts_are_the_rows_built_whole() {
        for (seed, messy, demo) in DemoInstance::seeds_tidy_and_messy(200) {
            let other = DemoInstance::new(seed + 10).with_sessions(200);
            let other = if messy { other.messy() } else { other };
            let seeks = [(50, 60, &demo), (90, 500, &demo), (120, 530, &other)];
            let (reused, kept_texts) = walk(&demo, 200, 150, &seeks);
            // The check has teeth: the slow maps were kept, and texts kept unread.
            assert!(reused > 100, "seed {seed} messy {messy}: {reused} reused");
            assert!(
                kept_texts > 100,
                "seed {seed} messy {messy}: {kept_texts} texts"
            );
        }
    }
}
