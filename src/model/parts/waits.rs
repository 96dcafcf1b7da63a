//! The waits part: each waiting thread of `onstat -u` joined to what it waits on (conditions,
//! buffers, locks, latches of the same moment), its chain to the head blocker and a verdict in
//! words; the head blockers, and the sessions built on the waiters.

use crate::ids::Sid;
use crate::model::waiters::{
    join_chains, verdict, HeadThreads, Joined, SocketRef, WaitAge, WaitIndex, WaitTarget, WaiterRow,
};
use crate::parsers::onstat_u::{OnstatU, UserThread, WaitReason};
use crate::source::Source;
use crate::store::Store;
use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Duration;

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

/// What the thread lists read at the moment of the `onstat -u` (whose addresses name the
/// sessions) say of each session: `onstat -g ath`'s status of its primary thread (else of any
/// of its threads), and `onstat -g rea`'s ready queue. A list of another moment says nothing.
pub(crate) fn run_states(store: &Store) -> crate::model::activity::RunStates {
    let mut out = crate::model::activity::RunStates::default();
    let Some(u) = store.get(crate::source::key::OnstatU) else {
        return out;
    };
    let rea = store.get_at_moment(crate::source::key::OnstatGRea);
    let ath = store.get_at_moment(crate::source::key::OnstatGAth);
    if rea.is_none() && ath.is_none() {
        return out;
    }
    // The user threads' sessions by address (the daemons' session 0 is none).
    let sid_of = crate::model::waiters::ByAddress::new(&u.threads, |t| {
        (t.sessid.0 != 0).then_some((t.sessid, t.flags.is_primary()))
    });
    if let Some(rea) = rea {
        out.ready = rea
            .threads
            .iter()
            .filter_map(|t| sid_of.get(t.rstcb?).map(|(s, _)| s))
            .collect();
    }
    if let Some(ath) = ath {
        // Room for every thread at once: grown by doubling, the map was rehashed a dozen
        // times a second at 5,000 sessions.
        let mut threads: rustc_hash::FxHashMap<Sid, crate::model::activity::Class> =
            rustc_hash::FxHashMap::with_capacity_and_hasher(ath.threads.len(), Default::default());
        for t in &ath.threads {
            let Some((sid, primary)) = t.rstcb.and_then(|a| sid_of.get(a)) else {
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

/// What each waiting thread waits on: conditions, buffers, locks and latches by address.
pub(crate) fn wait_index(store: &Store) -> WaitIndex<'_> {
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
        store.get(crate::source::key::OnstatU),
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

/// What the threads of onstat -u join into: empty when there is no onstat -u yet.
#[derive(Default)]
pub(crate) struct Waits {
    pub(crate) summary: WaitSummary,
    pub(crate) waiters: Vec<WaiterRow>,
    pub(crate) heads: Vec<HeadBlocker>,
    pub(crate) sessions: Vec<crate::model::sessions::SessionRow>,
}

/// The waiters with their chains and verdicts, the head blockers they lead to and the
/// sessions, from the threads of `u`.
pub(crate) fn waits(
    store: &Store,
    u: &OnstatU,
    index: &WaitIndex<'_>,
    now: Duration,
    socket_of: &impl Fn(Sid) -> Option<SocketRef>,
    io: &crate::model::io::IoView,
    spare: &mut super::Spare,
) -> Waits {
    let mut summary = WaitSummary {
        threads: u.threads.len(),
        ..WaitSummary::default()
    };
    let mut waiters = waiter_rows(
        store,
        u,
        index,
        now,
        socket_of,
        &mut summary,
        std::mem::take(&mut spare.waiters),
    );
    let engine = crate::model::waiters::engine_blockers(
        store.get_at_moment(crate::source::key::OnstatGBth),
        store.get(crate::source::key::OnstatGAth),
    );
    let log_holder = crate::model::waiters::long_transaction_thread(
        u,
        store.get_at_moment(crate::source::key::OnstatXTxn),
    );
    let chained = join_chains(u, index, &mut waiters, &engine, log_holder);
    // How long it had waited at the moment (the sockets are read with onstat -u), not
    // counted on to `now`.
    let at_moment = now
        .saturating_sub(store.moment().unwrap_or(now))
        .as_secs_f64();
    // Idleness and verdict in one pass over the thousands of rows.
    let why = Explaining::new(store, u, &waiters, &chained);
    for row in &mut waiters {
        row.idle = row.is_idle_client_wait();
        row.idle_unknown = row.is_unjudged_client_wait(row.in_wait_s - at_moment);
        summary.idle += usize::from(row.idle);
        row.verdict = why.verdict(row);
    }
    crate::model::io::note_slow_chunks(&mut waiters, io);
    let heads = head_blockers(u, &waiters, &chained);
    let sessions =
        super::sessions::session_rows(store, u, &waiters, now, std::mem::take(&mut spare.sessions));
    Waits {
        summary,
        waiters,
        heads,
        sessions,
    }
}

/// A row for each waiting thread of `u`, counted by reason in `summary` (and the sessions
/// counted there), in `waiters`: the rows it holds (a snapshot's let go) are written over, the
/// others made; chains, idleness and verdicts are joined later.
fn waiter_rows(
    store: &Store,
    u: &OnstatU,
    index: &WaitIndex<'_>,
    now: Duration,
    socket_of: &impl Fn(Sid) -> Option<SocketRef>,
    summary: &mut WaitSummary,
    mut waiters: Vec<WaiterRow>,
) -> Vec<WaiterRow> {
    let base = store.settings.base_page_kb;
    let extents = store.extents();
    // A row for each waiting thread, sized once (most of 5,000 sessions wait: pushed one
    // by one, the rows took up to twice their size at the heaviest second).
    let waiting = count_sessions_and_waits(u, summary);
    waiters.truncate(waiting);
    waiters.reserve_exact(waiting - waiters.len());
    // The tracker keeps the waits in rstcb order, as onstat -u lists its threads.
    let mut tracked_waits = store.tracker.cursor();
    let mut thread_rates = store.rates.cursor();
    let since_moment = now
        .saturating_sub(store.moment().unwrap_or(now))
        .as_secs_f64();
    // Counted by reason here, put in the summary's map once.
    let mut by_reason = [0usize; WaitReason::ALL.len()];
    let mut place = 0;
    for th in &u.threads {
        let Some(reason) = th.wait_reason else {
            continue;
        };
        by_reason[reason as usize] += 1;
        let target = index.target(th, reason, extents, base);
        let (since, at_least) = tracked_waits.since(th.address).unwrap_or((now, true));
        let tracked = now.saturating_sub(since).as_secs_f64();
        // onstat -g con, read at this moment, knows how long a condition wait has lasted:
        // from before ifxtop ran, and since it began again between two samples (the same
        // condition, a new wait). Counted on to `now` as the tracked time is. Its count is the
        // wait's whole age.
        let wait = match &target {
            WaitTarget::Condition {
                waittime: Some(w), ..
            } => WaitAge {
                seconds: *w as f64 + since_moment,
                at_least: false,
            },
            _ => WaitAge {
                seconds: tracked,
                at_least,
            },
        };
        let joined = Joined {
            thread: th,
            reason,
            target,
            wait,
            rates: thread_rates.get(th.address).copied(),
            socket: socket_of(th.sessid),
        };
        match waiters.get_mut(place) {
            Some(row) => joined.write_over(row),
            None => waiters.push(joined.into_row()),
        }
        place += 1;
    }
    for (reason, n) in WaitReason::ALL.iter().zip(by_reason) {
        if n > 0 {
            *summary.by_reason.entry(reason.letter()).or_default() += n;
        }
    }
    waiters
}

/// Counts the user sessions of `u` in `summary`, as the Sessions pane counts them (the daemons'
/// session 0 is none), and returns how many of its threads wait: one pass over its thousands
/// of threads for both.
fn count_sessions_and_waits(u: &OnstatU, summary: &mut WaitSummary) -> usize {
    let mut waiting = 0;
    let mut sids: Vec<Sid> = Vec::with_capacity(u.threads.len());
    for t in &u.threads {
        waiting += usize::from(t.wait_reason.is_some());
        if t.sessid.0 != 0 {
            sids.push(t.sessid);
        }
    }
    sids.sort_unstable();
    sids.dedup();
    summary.sessions = sids.len();
    waiting
}

/// What the waiters' verdicts read besides their own rows: what holds the checkpoint up, why
/// holders are not named at this moment, and the thread that speaks for each head blocker.
struct Explaining<'u> {
    checkpoint: String,
    notes: crate::model::waiters::HolderNotes,
    heads: HeadThreads<'u>,
}

impl<'u> Explaining<'u> {
    /// For `waiters` with their chains joined (`chained`: the rows that have one).
    fn new(store: &Store, u: &'u OnstatU, waiters: &[WaiterRow], chained: &[usize]) -> Self {
        let moment = store.moment();
        let notes = crate::model::waiters::HolderNotes::new(|s: Source| {
            crate::model::waiters::HolderNotes::note(
                &s.label(),
                store.observed(s),
                moment,
                store.late_for_moment(&s),
            )
        });
        Explaining {
            checkpoint: checkpoint_words(u, waiters),
            notes,
            heads: HeadThreads::new(u, chained.iter().filter_map(|i| waiters[*i].head_blocker)),
        }
    }

    /// The row's verdict in words.
    fn verdict(&self, row: &WaiterRow) -> Cow<'static, str> {
        verdict(row, &self.heads, &self.checkpoint, &self.notes)
    }
}

/// The sessions at the end of the waiters' chains, with how many wait for each and the harm
/// it causes; `chained` are the rows with a chain, in order (the others have no blocker).
fn head_blockers(u: &OnstatU, waiters: &[WaiterRow], chained: &[usize]) -> Vec<HeadBlocker> {
    let mut counts: BTreeMap<Sid, usize> = BTreeMap::new();
    for w in chained.iter().map(|i| &waiters[*i]) {
        if let Some(h) = w.head_blocker {
            *counts.entry(h).or_default() += 1;
        }
    }
    if counts.is_empty() {
        return Vec::new();
    }
    // What each head's words read, gathered in one pass over the threads and one over the
    // waiters held up (a few of thousands), not a pass over all of them for each head.
    let sids: Vec<Sid> = counts.keys().copied().collect();
    let mut threads: Vec<Vec<&UserThread>> = vec![Vec::new(); sids.len()];
    for t in &u.threads {
        if let Ok(i) = sids.binary_search(&t.sessid) {
            threads[i].push(t);
        }
    }
    let held: Vec<&WaiterRow> = chained
        .iter()
        .map(|i| &waiters[*i])
        .filter(|w| !w.blockers.is_empty())
        .collect();
    let mut heads: Vec<HeadBlocker> = counts
        .into_iter()
        .zip(&threads)
        .map(|((sid, blocked), threads)| {
            let held_up: Vec<&WaiterRow> = held
                .iter()
                .copied()
                .filter(|w| w.blockers.contains(&sid))
                .collect();
            let (state, locks, user) = crate::model::waiters::state_words_of(threads);
            let action = crate::model::harm::action_with(threads, &held_up, waiters, sid);
            HeadBlocker {
                sid,
                user,
                state,
                locks,
                blocked,
                harm: crate::model::harm::harm_to(held_up.iter().copied()),
                action: action.as_ref().map(|a| a.words.clone()),
                command: action.and_then(|a| a.command),
                sql: None,
            }
        })
        .collect();
    heads.sort_by(most_harmful_first);
    heads
}

/// The most harmful first: the oldest wait caused, then how many wait; sub-second mutex waits
/// last (background of any busy server).
fn most_harmful_first(a: &HeadBlocker, b: &HeadBlocker) -> std::cmp::Ordering {
    b.harm
        .rank_key()
        .cmp(&a.harm.rank_key())
        .then(b.blocked.cmp(&a.blocked))
        .then(a.sid.cmp(&b.sid))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::DemoInstance;
    use crate::ids::Addr;
    use crate::model::test_store;

    /// The head blockers as each head's words read them, one pass over every thread and every
    /// waiter for each head: what `head_blockers` gathers once for all heads.
    fn plain_heads(u: &OnstatU, waiters: &[WaiterRow]) -> Vec<HeadBlocker> {
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
                    harm: crate::model::harm::harm_to(
                        waiters.iter().filter(|w| w.blockers.contains(&sid)),
                    ),
                    action: action.as_ref().map(|a| a.words.clone()),
                    command: action.and_then(|a| a.command),
                    sql: None,
                }
            })
            .collect();
        heads.sort_by(most_harmful_first);
        heads
    }

    /// Every waiter's chain followed, whether it waits on a thread or not: what `join_chains`
    /// gives by passing the rows that wait on none.
    fn plain_chains(
        u: &OnstatU,
        waiters: &mut [WaiterRow],
        engine: &rustc_hash::FxHashMap<Addr, Addr>,
        log_holder: Option<Addr>,
    ) {
        let critical = crate::model::waiters::critical_section_threads(u);
        let mut owner_of: rustc_hash::FxHashMap<Addr, Addr> = waiters
            .iter()
            .filter_map(|w| w.waiting_on.owner().map(|o| (w.rstcb, o)))
            .collect();
        let sid_of = crate::model::waiters::ByAddress::new(&u.threads, |t| Some(t.sessid));
        for w in waiters.iter_mut().filter(|_| !engine.is_empty()) {
            let Some(e) = engine.get(&w.rstcb) else {
                continue;
            };
            match owner_of.get(&w.rstcb) {
                None => {
                    owner_of.insert(w.rstcb, *e);
                }
                Some(o) if sid_of.get(*o) != sid_of.get(*e) => w.engine_blocker = sid_of.get(*e),
                Some(_) => {}
            }
        }
        if let Some(holder) = log_holder {
            for w in waiters.iter() {
                if w.reason == WaitReason::LogBuffer && w.rstcb != holder {
                    owner_of.insert(w.rstcb, holder);
                }
            }
        }
        if let Some((_, first)) = critical.first() {
            for w in waiters.iter() {
                if w.reason == WaitReason::Checkpoint && w.rstcb != *first {
                    owner_of.insert(w.rstcb, *first);
                }
            }
        }
        if owner_of.is_empty() {
            return;
        }
        for w in waiters.iter_mut() {
            let c = crate::model::chains::follow(w.rstcb, &owner_of);
            let mut blockers: Vec<Sid> = c.blockers.iter().filter_map(|a| sid_of.get(*a)).collect();
            if w.reason == WaitReason::Checkpoint && !blockers.is_empty() {
                // Every session in a critical section holds the checkpoint up, not only the first.
                let mut all: Vec<Sid> = critical.iter().map(|(s, _)| *s).collect();
                all.dedup();
                let onward = blockers.split_off(1);
                blockers = all;
                blockers.extend(
                    onward
                        .into_iter()
                        .filter(|s| !critical.iter().any(|c| c.0 == *s)),
                );
            }
            // A session waiting on a thread of its own (a PDQ helper) is not blocked by another.
            blockers.retain(|b| *b != w.sessid);
            blockers.dedup();
            w.head_blocker = if c.cycle {
                None
            } else {
                c.head
                    .and_then(|a| sid_of.get(a))
                    .filter(|h| *h != w.sessid)
            };
            w.blockers = blockers;
            w.deadlock = c.cycle;
        }
    }

    /// The waits by reason letter, counted thread by thread.
    fn plain_by_reason(u: &OnstatU) -> BTreeMap<char, usize> {
        let mut by = BTreeMap::new();
        for r in u.threads.iter().filter_map(|t| t.wait_reason) {
            *by.entry(r.letter()).or_default() += 1;
        }
        by
    }

    /// The waits of a store at `at`, built with `kept` (rows of a snapshot let go) as the
    /// room for the waiters.
    fn waits_over(store: &Store, at: Duration, kept: Vec<WaiterRow>) -> Waits {
        let u = store.get(crate::source::key::OnstatU).expect("onstat -u");
        let io = crate::model::io::build_io(store);
        let mut spare = crate::model::parts::Spare {
            waiters: kept,
            ..Default::default()
        };
        waits(store, u, &wait_index(store), at, &|_| None, &io, &mut spare)
    }

    /// Rows written over the rows of another second are the rows made anew: over the demo's
    /// whole cycle (seeds 1-3, tidy and messy: sessions come and go, their sids given out
    /// again), every other second, over the last build's rows (with their chains and
    /// verdicts, more or fewer than now) and now and then over those of a far moment (a
    /// seek), every waiter, head blocker and count is the same.
    #[test]
    fn rows_written_over_are_rows_made_anew() {
        let mut compared = 0;
        let mut chained = 0;
        let (mut fewer, mut more) = (0, 0);
        for (seed, messy, demo) in DemoInstance::seeds_tidy_and_messy(200) {
            let mut store = test_store::new_store();
            let sources = test_store::sources_answered(&demo);
            let mut last: Vec<WaiterRow> = Vec::new();
            let mut far: Vec<WaiterRow> = Vec::new();
            for t in 1..=crate::demo::timeline::CYCLE {
                test_store::feed(&mut store, &demo, sources.iter().copied(), t);
                if t % 2 != 0 {
                    continue;
                }
                let at = Duration::from_secs(t);
                let fresh = waits_over(&store, at, Vec::new());
                let kept = if t % 50 == 0 {
                    std::mem::replace(&mut far, last.clone())
                } else {
                    last
                };
                fewer += usize::from(kept.len() < fresh.waiters.len());
                more += usize::from(kept.len() > fresh.waiters.len());
                let over = waits_over(&store, at, kept);
                assert_eq!(over.waiters, fresh.waiters, "seed {seed} {messy} {t}s");
                assert_eq!(over.heads, fresh.heads, "seed {seed} {messy} {t}s");
                assert_eq!(over.summary, fresh.summary, "seed {seed} {messy} {t}s");
                compared += fresh.waiters.len();
                chained += fresh
                    .waiters
                    .iter()
                    .filter(|w| w.head_blocker.is_some())
                    .count();
                last = over.waiters;
            }
        }
        assert!(compared > 100_000, "{compared} rows compared");
        assert!(chained > 1_000, "{chained} chained rows compared");
        assert!(
            fewer > 50 && more > 50,
            "kept fewer {fewer}, more {more} times"
        );
    }

    /// Over the demo's incidents (seeds 1-3, tidy and messy, every 9th second of its cycle
    /// fed by every source it answers), the head blockers, the counts by reason, the chains and
    /// the threads the verdicts read for the heads are the plain computation's, and the moments
    /// hold heads of every kind of action to compare.
    #[test]
    fn heads_and_counts_are_the_plain_computations() {
        let mut seen_heads = 0;
        let mut chained = 0;
        let mut actions = std::collections::BTreeSet::new();
        for demo in [
            DemoInstance::new(1).with_sessions(300),
            DemoInstance::new(2).with_sessions(300).messy(),
            DemoInstance::new(3).with_sessions(300),
        ] {
            let mut store = test_store::new_store();
            let sources = test_store::sources_answered(&demo);
            for t in 1..=crate::demo::timeline::CYCLE {
                test_store::feed(&mut store, &demo, sources.iter().copied(), t);
                if t % 9 != 0 {
                    continue;
                }
                let at = Duration::from_secs(t);
                let u = store.get(crate::source::key::OnstatU).expect("onstat -u");
                let index = wait_index(&store);
                let io = crate::model::io::build_io(&store);
                let w = waits(
                    &store,
                    u,
                    &index,
                    at,
                    &|_| None,
                    &io,
                    &mut crate::model::parts::Spare::default(),
                );
                assert_eq!(w.summary.by_reason, plain_by_reason(u), "{t}s");
                let mut sids: Vec<Sid> = u.threads.iter().map(|t| t.sessid).collect();
                sids.retain(|s| s.0 != 0);
                sids.sort_unstable();
                sids.dedup();
                assert_eq!(w.summary.sessions, sids.len(), "{t}s");
                // The chains, followed for every row made again.
                let mut rows = waiter_rows(
                    &store,
                    u,
                    &index,
                    at,
                    &|_| None,
                    &mut WaitSummary::default(),
                    Vec::new(),
                );
                plain_chains(
                    u,
                    &mut rows,
                    &crate::model::waiters::engine_blockers(
                        store.get_at_moment(crate::source::key::OnstatGBth),
                        store.get(crate::source::key::OnstatGAth),
                    ),
                    crate::model::waiters::long_transaction_thread(
                        u,
                        store.get_at_moment(crate::source::key::OnstatXTxn),
                    ),
                );
                let chain = |w: &WaiterRow| {
                    (
                        w.rstcb,
                        w.blockers.clone(),
                        w.head_blocker,
                        w.deadlock,
                        w.engine_blocker,
                    )
                };
                assert_eq!(
                    w.waiters.iter().map(chain).collect::<Vec<_>>(),
                    rows.iter().map(chain).collect::<Vec<_>>(),
                    "{t}s"
                );
                chained += rows.iter().filter(|r| !r.blockers.is_empty()).count();
                // The thread each head's words read, as a search of every thread finds it.
                let heads = HeadThreads::new(u, w.waiters.iter().filter_map(|r| r.head_blocker));
                for h in w.waiters.iter().filter_map(|r| r.head_blocker) {
                    let plain = u.threads.iter().find(|t| {
                        t.sessid == h && (t.flags.is_primary() || t.wait_reason.is_none())
                    });
                    assert_eq!(
                        heads.get(h).map(|t| t.address),
                        plain.map(|t| t.address),
                        "{t}s {h}"
                    );
                }
                let plain = plain_heads(u, &w.waiters);
                assert_eq!(w.heads, plain, "{t}s");
                seen_heads += plain.len();
                actions.extend(plain.iter().filter_map(|h| h.action.clone()));
            }
        }
        assert!(seen_heads > 100, "{seen_heads} heads compared");
        assert!(chained > 100, "{chained} chains compared");
        assert!(actions.len() >= 4, "{actions:?}");
    }
}
