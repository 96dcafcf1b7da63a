//! The server's vital signs as the screen and the JSON show them: profile rates, checkpoints,
//! logical logs and the oldest open transaction, VP busy %, the ready queue, mutexes and latches
//! with waiters, shared memory and its growth.

use crate::ids::{Addr, Sid, Tid};
use crate::parsers::onstat_u::OnstatU;
use crate::store::Store;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::BTreeMap;

/// Per-second rates of the `onstat -p` counters over the last interval.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Rates {
    pub lokwaits: Option<f64>,
    pub bufwaits: Option<f64>,
    pub lchwaits: Option<f64>,
    pub deadlks: Option<f64>,
    pub dltouts: Option<f64>,
    pub ckpwaits: Option<f64>,
    pub seqscans: Option<f64>,
    pub commit: Option<f64>,
    pub rollbk: Option<f64>,
    pub isamtot: Option<f64>,
    /// Reads and writes served from the buffer pool over the interval, %.
    pub read_cache_pct: Option<f64>,
    pub write_cache_pct: Option<f64>,
}

/// One checkpoint of `onstat -g ckp`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckpointRow {
    pub interval: u64,
    /// The server's clock when it ran.
    pub clock_time: String,
    pub trigger: String,
    pub total_s: f64,
    pub flush_s: f64,
    /// How long transactions were blocked.
    pub block_s: f64,
    /// From the request to the start (`Ckpt Time`): how long the checkpoint waited for the
    /// threads to leave their critical sections. When it is most of the block time, the
    /// checkpoint waited on a thread (the seed's zone reclaim), not on the disks. (`Long Time`,
    /// the longest any transaction waited, is the block time of every blocking checkpoint and
    /// tells nothing of why.)
    pub crit_s: f64,
    /// Transactions that waited for it.
    pub waits: u64,
    pub blocking: bool,
}

/// The oldest open transaction and how many logical logs it holds on to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OldestTransaction {
    pub sessid: Option<Sid>,
    /// The owning thread's `onstat -u` address.
    pub userthread: Addr,
    pub user: Option<String>,
    /// Logs from the one it began in to the current one.
    pub logs_spanned: u64,
    /// The unique id of the log it began in.
    pub begin_log: u32,
    pub locks: u64,
    /// It began at or before this moment (session seconds): when the log's end had passed its
    /// first record (`onstat -l`), or it was first seen open (`onstat -x`), the earlier. Its age
    /// is at least the time since.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub began_by_s: Option<f64>,
    /// It began after this moment: a sample showed the log's end still before its first
    /// record. With `began_by_s` a second or so later, its age is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub began_after_s: Option<f64>,
}

/// Samples this close (seconds) around a transaction's first record give its begin to within a
/// tick: the gap the findings' history still counts as one sample to the next.
pub const BRACKETED_WITHIN_S: f64 = 1.5;

impl OldestTransaction {
    /// Its age at `at_s` and whether that is a lower bound: exact when the samples around its
    /// first record lie within [`BRACKETED_WITHIN_S`] of each other.
    pub fn age(&self, at_s: f64) -> Option<(f64, bool)> {
        let by = self.began_by_s?;
        let exact = self
            .began_after_s
            .is_some_and(|a| by - a <= BRACKETED_WITHIN_S);
        Some(((at_s - by).max(0.0), !exact))
    }
}

/// The logical logs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Logs {
    /// Of all logical-log pages, how many are used and not yet free for reuse (used and not
    /// backed up), %.
    pub used_pct: f64,
    /// Log files used and not yet backed up.
    pub not_backed_up: usize,
    pub total: usize,
    /// The number of the current log file.
    pub current: Option<u64>,
    /// How full the physical log is, %.
    pub physical_used_pct: Option<f64>,
    pub oldest_transaction: Option<OldestTransaction>,
}

/// One VP class: how many VPs and how busy they were over the last interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VpRow {
    pub class: String,
    pub count: u64,
    pub busy_pct: Option<f64>,
}

/// A mutex or latch that has waiters (or a holder worth naming).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MutexRow {
    pub name: String,
    pub address: Addr,
    /// `mutex` (`onstat -g lmx`/`-g wmx`) or `latch` (`onstat -s`).
    pub kind: &'static str,
    /// Its holder at the moment of the snapshot's `onstat -u`; `None` when not known for
    /// that moment.
    pub holder_sessid: Option<Sid>,
    pub holder_tid: Option<Tid>,
    /// How long before the `onstat -u` the holder was read (within the same tick), when named.
    pub holder_age_s: Option<f64>,
    /// How many threads wait for it.
    pub waiters: usize,
    pub waiter_sessids: Vec<Sid>,
    /// The longest wait, seconds, where the source says.
    pub longest_wait_s: Option<u64>,
}

impl MutexRow {
    /// A mutex with no holder or waiter known yet.
    fn unheld(name: String, address: Addr) -> MutexRow {
        MutexRow {
            name,
            address,
            kind: "mutex",
            holder_sessid: None,
            holder_tid: None,
            holder_age_s: None,
            waiters: 0,
            waiter_sessids: Vec::new(),
            longest_wait_s: None,
        }
    }
}

/// Shared memory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Memory {
    pub segments: usize,
    pub total_kb: u64,
    /// Since ifxtop started watching.
    pub growth_kb: i64,
    pub added_segments: usize,
    /// KB per segment class (`R` resident, `V` virtual, `M` message, `B` buffer pool...).
    pub by_class: BTreeMap<String, u64>,
}

/// The vital signs in a snapshot (flattened into its JSON's top level).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Vitals {
    pub rates: Option<Rates>,
    pub checkpoints: Vec<CheckpointRow>,
    pub logs: Option<Logs>,
    pub vps: Vec<VpRow>,
    pub ready_queue: Option<usize>,
    pub mutexes: Vec<MutexRow>,
    pub memory: Option<Memory>,
    /// Seconds the banner has said `Blocked:` (at the latest `onstat -u`), and whether that is
    /// a lower bound (it was blocked already when ifxtop first saw it, or after a gap).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_for_s: Option<f64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub blocked_for_s_at_least: bool,
    /// Recent values for the sparklines: rate name → per second, VP class → busy %, and the
    /// ready queue.
    #[serde(skip)]
    pub history: History,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct History {
    pub rates: BTreeMap<&'static str, Vec<f64>>,
    pub vps: BTreeMap<String, Vec<f64>>,
    pub ready_queue: Vec<f64>,
}

pub(crate) fn build(store: &Store) -> Vitals {
    let u = store.get(crate::source::key::OnstatU);
    let v = &store.vitals;
    let mut out = Vitals::default();
    if let Some((_, s, at_least)) = store.moment().and_then(|m| v.blocked.lasted(m)) {
        out.blocked_for_s = Some(s);
        out.blocked_for_s_at_least = at_least;
    }
    let p = &v.profile;
    if !p.per_s.is_empty() {
        let r = |k: &str| p.per_s.get(k).copied();
        out.rates = Some(Rates {
            lokwaits: r("lokwaits"),
            bufwaits: r("bufwaits"),
            lchwaits: r("lchwaits"),
            deadlks: r("deadlks"),
            dltouts: r("dltouts"),
            ckpwaits: r("ckpwaits"),
            seqscans: r("seqscans"),
            commit: r("commit"),
            rollbk: r("rollbk"),
            isamtot: r("isamtot"),
            read_cache_pct: p.read_cache_pct,
            write_cache_pct: p.write_cache_pct,
        });
    }
    out.history.rates = p
        .history
        .iter()
        .map(|(k, h)| (*k, h.iter().copied().collect()))
        .collect();
    if let Some(c) = store.get(crate::source::key::OnstatGCkp) {
        out.checkpoints = c
            .checkpoints
            .iter()
            .map(|k| CheckpointRow {
                interval: k.interval,
                clock_time: k.clock_time.clone(),
                trigger: k.trigger.clone(),
                total_s: k.total_time,
                flush_s: k.flush_time,
                block_s: k.block_time,
                crit_s: k.ckpt_time,
                waits: k.waits,
                blocking: k.blocking,
            })
            .collect();
    }
    if let Some(l) = store.get(crate::source::key::OnstatL) {
        if !l.logs.is_empty() {
            let size: u64 = l.logs.iter().map(|f| f.size).sum();
            let held: u64 = l
                .logs
                .iter()
                .filter(|f| f.has_flag('U') && !f.has_flag('B'))
                .map(|f| f.used)
                .sum();
            let current = l.logs.iter().find(|f| f.is_current());
            out.logs = Some(Logs {
                used_pct: if size > 0 {
                    100.0 * held as f64 / size as f64
                } else {
                    0.0
                },
                not_backed_up: l.not_backed_up(),
                total: l.logs.len(),
                current: current.map(|f| f.number),
                physical_used_pct: l.physical.as_ref().and_then(|p| p.used_pct),
                oldest_transaction: oldest_transaction(store, current.map(|f| f.uniqid)),
            });
        }
    }
    if let Some(g) = store.get(crate::source::key::OnstatGGlo) {
        out.vps = g
            .classes
            .iter()
            .map(|c| VpRow {
                class: c.class.clone(),
                count: c.vps,
                busy_pct: v.vps.busy.get(&c.class).map(|(_, pct)| *pct),
            })
            .collect();
    }
    out.history.vps = v
        .vps
        .history
        .iter()
        .map(|(k, h)| (k.clone(), h.iter().copied().collect()))
        .collect();
    out.ready_queue = store
        .get(crate::source::key::OnstatGRea)
        .map(|r| r.threads.len());
    out.history.ready_queue = v.ready.history.iter().copied().collect();
    out.mutexes = mutexes(store, u);
    if let (Some(s), Some(total)) = (
        store.get(crate::source::key::OnstatGSeg),
        v.memory.latest_kb,
    ) {
        let mut by_class: BTreeMap<String, u64> = BTreeMap::new();
        for seg in &s.segments {
            *by_class.entry(seg.class.clone()).or_default() += seg.size / 1024;
        }
        out.memory = Some(Memory {
            segments: v.memory.segments,
            total_kb: total,
            growth_kb: i64::try_from(total).unwrap_or(i64::MAX)
                - i64::try_from(v.memory.first_kb.unwrap_or(total)).unwrap_or(i64::MAX),
            added_segments: v.memory.added,
            by_class,
        });
    }
    out
}

/// The open transaction whose first log record is the oldest: what keeps the logs from being
/// freed, with when it began as the log's history tells. Its session is the one that owned its
/// thread at the moment `onstat -x` was read (`store::logs::OldestOpen`), not the one at that
/// address in a later `onstat -u`.
pub(crate) fn oldest_transaction(
    store: &Store,
    current_log: Option<u64>,
) -> Option<OldestTransaction> {
    store.get(crate::source::key::OnstatXTxn)?;
    let o = store.logs.oldest()?;
    let page_bytes = u64::from(store.settings.base_page_kb) * 1024;
    let began = store.logs.began(o.address, o.begin, page_bytes);
    Some(OldestTransaction {
        sessid: o.owner.as_ref().map(|w| w.sid),
        userthread: o.userthread,
        user: o.owner.as_ref().map(|w| w.user.to_string()),
        logs_spanned: current_log.map_or(1, |c| c.saturating_sub(u64::from(o.begin.log)) + 1),
        begin_log: o.begin.log,
        locks: o.locks,
        began_by_s: began.map(|b| b.by.as_secs_f64()),
        began_after_s: began.and_then(|b| b.after).map(|a| a.as_secs_f64()),
    })
}

/// The session of each user thread of `u` at an address in `addrs` (the last row at it, as a
/// map of every row would say).
fn sessions_at(u: &OnstatU, mut addrs: Vec<Addr>) -> FxHashMap<Addr, Sid> {
    addrs.sort_unstable();
    addrs.dedup();
    if addrs.is_empty() {
        return FxHashMap::default();
    }
    u.threads
        .iter()
        .filter(|t| addrs.binary_search(&t.address).is_ok())
        .map(|t| (t.address, t.sessid))
        .collect()
}

/// The session of each thread in `tids`: tid → rstcb (`ath`) → session (`u`'s row at that
/// address), as [`crate::parsers::onstat_g_ath::OnstatGAth::sessions`] says for every thread.
fn sessions_of_threads(
    ath: &crate::parsers::onstat_g_ath::OnstatGAth,
    u: &OnstatU,
    mut tids: Vec<Tid>,
) -> FxHashMap<Tid, Sid> {
    tids.sort_unstable();
    tids.dedup();
    if tids.is_empty() {
        return FxHashMap::default();
    }
    let wanted = || {
        ath.threads
            .iter()
            .filter(|t| tids.binary_search(&t.tid).is_ok())
    };
    let sid_of = sessions_at(u, wanted().filter_map(|t| t.rstcb).collect());
    wanted()
        .filter_map(|t| Some((t.tid, *sid_of.get(&t.rstcb?)?)))
        .collect()
}

/// Mutexes with waiters or holders (`-g lmx`, `-g wmx`, merged by address) and latches with a
/// holder (`-s`), most waiters first. Holders change within microseconds: a holder is named
/// only from outputs read at the moment of the `onstat -u` (`Store::get_at_moment`); at any
/// other moment the list is this `onstat -u`'s mutex waits, named from the names seen before,
/// and the holder is unknown.
fn mutexes(store: &Store, u: Option<&OnstatU>) -> Vec<MutexRow> {
    let lists = [
        crate::source::key::OnstatGLmx,
        crate::source::key::OnstatGWmx,
    ]
    .map(|src| store.get_at_moment(src));
    let latches = store
        .get_at_moment(crate::source::key::OnstatS)
        .map(|s| s.latches.as_slice())
        .unwrap_or_default();
    // Only the threads the lists name are looked up: a handful, among thousands.
    let tids: Vec<Tid> = lists
        .iter()
        .flatten()
        .flat_map(|x| &x.mutexes)
        .flat_map(|m| m.holder.into_iter().chain(m.waiters.iter().map(|w| w.tid)))
        .collect();
    let sid_of_tid = match (store.get(crate::source::key::OnstatGAth), u) {
        (Some(ath), Some(u)) => sessions_of_threads(ath, u, tids),
        _ => FxHashMap::default(),
    };
    let sid_of_addr = u
        .map(|u| sessions_at(u, latches.iter().filter_map(|l| l.userthread).collect()))
        .unwrap_or_default();
    let moment = store.moment();
    let mut rows: BTreeMap<Addr, MutexRow> = BTreeMap::new();
    let mut read_now = false;
    for (src, x) in [
        crate::source::key::OnstatGLmx,
        crate::source::key::OnstatGWmx,
    ]
    .into_iter()
    .zip(lists)
    {
        let Some(x) = x else {
            continue;
        };
        read_now = true;
        let age = match (moment, store.observed(src.source())) {
            (Some(m), Some(t)) => Some(m.saturating_sub(t).as_secs_f64()),
            _ => None,
        };
        for m in &x.mutexes {
            let row = rows
                .entry(m.addr)
                .or_insert_with(|| MutexRow::unheld(m.name.clone(), m.addr));
            if m.holder.is_some() {
                row.holder_tid = m.holder;
                row.holder_sessid = m.holder.and_then(|t| sid_of_tid.get(&t).copied());
                row.holder_age_s = age;
            }
            if m.waiters.len() >= row.waiters {
                row.waiters = m.waiters.len();
                let mut sids: Vec<Sid> = m
                    .waiters
                    .iter()
                    .filter_map(|w| sid_of_tid.get(&w.tid).copied())
                    .collect();
                sids.sort_unstable();
                sids.dedup();
                row.waiter_sessids = sids;
                row.longest_wait_s = m.waiters.iter().map(|w| w.waittime).max();
            }
        }
    }
    if !read_now {
        for th in u.map(|u| u.threads.as_slice()).unwrap_or_default() {
            let (Some(crate::parsers::onstat_u::WaitReason::Mutex), Some(addr)) =
                (th.wait_reason, th.wait)
            else {
                continue;
            };
            let row = rows.entry(addr).or_insert_with(|| {
                let name = store
                    .mutex_names()
                    .get(&addr)
                    .map_or_else(|| addr.to_string(), |n| n.to_string());
                MutexRow::unheld(name, addr)
            });
            row.waiters += 1;
            if !row.waiter_sessids.contains(&th.sessid) {
                row.waiter_sessids.push(th.sessid);
                row.waiter_sessids.sort_unstable();
            }
        }
    }
    for l in latches {
        rows.entry(l.address).or_insert_with(|| MutexRow {
            name: l.name.clone(),
            address: l.address,
            kind: "latch",
            holder_sessid: l.userthread.and_then(|a| sid_of_addr.get(&a).copied()),
            holder_tid: None,
            holder_age_s: Some(0.0),
            waiters: usize::from(l.wait.is_some()),
            waiter_sessids: Vec::new(),
            longest_wait_s: None,
        });
    }
    let mut out: Vec<MutexRow> = rows.into_values().collect();
    out.sort_by(|a, b| b.waiters.cmp(&a.waiters).then(a.name.cmp(&b.name)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parsers::onstat_g_ath::OnstatGAth;
    use crate::source::Source;
    use proptest::prelude::*;

    /// One demo second's `onstat -u` and `onstat -g ath` (300 sessions).
    fn demo_second() -> (OnstatU, OnstatGAth) {
        let demo = crate::demo::DemoInstance::new(1).with_sessions(300);
        let t = std::time::Duration::from_secs(280);
        let read = |source: Source| {
            source
                .parse(demo.respond(&source.request(), t).expect("answers"))
                .expect("parses")
        };
        let u = read(Source::OnstatU);
        let ath = read(Source::OnstatGAth);
        (
            u.get::<OnstatU>().expect("-u").clone(),
            ath.get::<OnstatGAth>().expect("-g ath").clone(),
        )
    }

    proptest! {
        /// The sessions of a few threads are what the map of every thread says of them, with
        /// threads listed twice (another rstcb, or none) and addresses reused by two rows.
        #[test]
        fn sessions_of_a_few_threads_match_the_map_of_all(
            twice in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..3, any::<prop::sample::Index>()), 0..12),
            reused in proptest::collection::vec((any::<prop::sample::Index>(), 0u64..50_000), 0..12),
            picks in proptest::collection::vec(any::<prop::sample::Index>(), 0..30),
            strangers in proptest::collection::vec(0u64..5_000, 0..5),
        ) {
            let (mut u, mut ath) = demo_second();
            prop_assume!(!u.threads.is_empty() && !ath.threads.is_empty());
            for (i, how, j) in twice {
                let mut t = ath.threads[i.index(ath.threads.len())].clone();
                t.rstcb = match how {
                    0 => None,
                    1 => Some(u.threads[j.index(u.threads.len())].address),
                    _ => Some(Addr(0xdead_0000 + j.index(1000) as u64)),
                };
                ath.threads.push(t);
            }
            for (i, sid) in reused {
                let mut t = u.threads[i.index(u.threads.len())].clone();
                t.sessid = Sid(sid);
                u.threads.push(t);
            }
            let tids: Vec<Tid> = picks
                .iter()
                .map(|p| ath.threads[p.index(ath.threads.len())].tid)
                .chain(strangers.into_iter().map(Tid))
                .collect();
            let all = ath.sessions(&u);
            let expected: FxHashMap<Tid, Sid> = all
                .into_iter()
                .filter(|(t, _)| tids.contains(t))
                .collect();
            prop_assert_eq!(sessions_of_threads(&ath, &u, tids), expected);

            let addrs: Vec<Addr> = u.threads.iter().step_by(7).map(|t| t.address).collect();
            let every: FxHashMap<Addr, Sid> =
                u.threads.iter().map(|t| (t.address, t.sessid)).collect();
            let expected: FxHashMap<Addr, Sid> = every
                .into_iter()
                .filter(|(a, _)| addrs.contains(a))
                .collect();
            prop_assert_eq!(sessions_at(&u, addrs), expected);
        }
    }
}
