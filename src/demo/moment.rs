//! The demo instance at one moment: each session's activity as the timeline's incident and
//! its own rhythm make it, and from that every thread's flags and wait, the conditions, the
//! locks, the buffers being accessed and each connection's Send-Q. The printers only read a
//! `World`, so `onstat -u`, `-g con`, `-g ath`, `-k`, `-X` and the socket tables agree.

use super::instance::{
    Kind, Link, Population, Role, Session, Status, Tenant, BUF_HDR_SIZE, CHAIN, CKPT, CRITICAL,
    INSERTERS, LOCKS_PER_SESSION, LOCK_SIZE, LONG_TXN, MUTEX_HOLDER, MUTEX_WAITERS,
    POOL_2K_BUFFERS, POOL_8K_BUFFERS, RSTCB_SIZE, SLOW, UPDATERS,
};
use super::longtx::{self, Stage};
use super::noise::{below, unit, Salt};
use super::profile::Counters;
use super::schedule;
use super::schema::{self, Placed};
use super::timeline::{self, Incident, Now};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a session is doing at a moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Activity {
    /// Waiting for its client (netnorm, or sm_read when local) for `waited` seconds.
    Idle {
        waited: u64,
    },
    Running,
    Reading,
    Mutex {
        which: u64,
    },
    /// Waiting for the buffer at this address.
    Buffer {
        buf: u64,
    },
    Checkpoint,
    /// Waiting for the lock at this address.
    Lock {
        lock: u64,
    },
    /// Sending a big result to a client that does not read it fast enough.
    SlowFetch {
        waited: u64,
    },
    /// In a critical section (a log write crawling through zone reclaim).
    Critical,
    /// Waiting to write to the logical log while the server is blocked (`G`).
    LogWait,
    /// Rolling its transaction back (`R`), in a critical section while it writes a log record
    /// (`X`), between records not.
    Rollback {
        writing: bool,
    },
    /// No session on the slot: one left, the next has not connected yet.
    Gone,
}

/// The mutexes sessions wait for: the first six briefly now and then, the last one during the
/// contention of the timeline.
pub(crate) const MUTEXES: [&str; 7] = [
    "lockhash[212]",
    "bhash[4012]",
    "tblsp_hash[3]",
    "ddh_mutex",
    "plog",
    "llog",
    "free_lock",
];
/// The one the contention is about.
pub(crate) const CONTENDED: u64 = 6;
/// Mutexes are this far apart in shared memory.
pub(crate) const MUTEX_SIZE: u64 = 0x1a8;

/// Who holds a mutex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holder {
    /// A client session (its index).
    Session(usize),
    /// A daemon thread (its index).
    Daemon(usize),
}

/// A mutex held at a moment, with the sessions waiting for it and how long (seconds).
#[derive(Debug, Clone)]
pub(crate) struct HeldMutex {
    pub(crate) which: u64,
    pub(crate) holder: Holder,
    pub(crate) waiters: Vec<(usize, u64)>,
}

/// A session at a moment.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SessionNow {
    pub(crate) activity: Activity,
    /// In a transaction (flag position 3 `B`).
    pub(crate) txn: bool,
    pub(crate) send_q: u64,
}

/// Where a session with work in hand (running, in a critical section, rolling back) is at
/// the instant the outputs are taken: on a CPU VP (its number), in the ready queue, or
/// waiting for a disk read in between. At most one session thread a CPU VP runs at once, and
/// as many as the VPs' busy seconds of this second make (`World::cpu_use`'s share).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dispatch {
    OnCpu(u32),
    Ready,
    Io,
}

/// The virtual processor a thread runs on, as `onstat -g ath` names it (`3cpu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Vp {
    Cpu(u32),
    Named(&'static str),
}

impl Vp {
    /// Its name (`3cpu`, `adm`) at the end of `o`, without `fmt`: the demo's rows print it
    /// for every thread.
    pub(crate) fn write(&self, o: &mut super::text::Rows<'_>) {
        match self {
            Vp::Cpu(n) => {
                o.dec(u64::from(*n), 0);
                o.str("cpu");
            }
            Vp::Named(s) => o.str(s),
        }
    }
}

impl std::fmt::Display for Vp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Vp::Cpu(n) => write!(f, "{n}cpu"),
            Vp::Named(s) => f.write_str(s),
        }
    }
}

/// One thread at a moment: a row of `onstat -u` and of `onstat -g ath`.
#[derive(Debug, Clone)]
pub(crate) struct Thread {
    pub(crate) rstcb: u64,
    pub(crate) tid: u64,
    pub(crate) sid: u64,
    /// The session's index, for client threads.
    pub(crate) session: Option<usize>,
    pub(crate) flags: [u8; 7],
    pub(crate) wait: u64,
    pub(crate) locks: u32,
    pub(crate) nreads: u64,
    pub(crate) nwrites: u64,
    pub(crate) user: &'static str,
    pub(crate) name: &'static str,
    pub(crate) vp: Vp,
    pub(crate) prty: u8,
    pub(crate) status: Status,
}

/// One row of `onstat -k`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LockRow {
    pub(crate) address: u64,
    pub(crate) wtlist: u64,
    pub(crate) owner: u64,
    pub(crate) lklist: u64,
    pub(crate) kind: &'static str,
    pub(crate) partnum: u32,
    pub(crate) rowid: u64,
}

/// One row of `onstat -X`.
#[derive(Debug, Clone)]
pub(crate) struct BufRow {
    pub(crate) address: u64,
    /// 0 none, `u64::MAX` shared.
    pub(crate) owner: u64,
    pub(crate) flags: u32,
    pub(crate) chunk: u32,
    /// In base pages.
    pub(crate) page: u64,
    pub(crate) memaddr: u64,
    pub(crate) nslots: u32,
    pub(crate) pgflgs: u32,
    pub(crate) scount: u32,
    pub(crate) waiters: Vec<u64>,
}

/// The instance at one moment.
///
/// What every output needs (each session's activity, the locks held, the incident's hot
/// buffer) is computed up front ([`Moment`], shared: `worlds.rs` keeps the last few seconds'
/// for every printer of those seconds); threads, lock rows and buffer rows only by the printers
/// that print them.
pub(crate) struct World<'a> {
    pub(crate) pop: &'a Population,
    pub(crate) counters: &'a Counters,
    moment: Arc<Moment>,
    /// Its threads, computed by the first printer that asks: the printers of one call (a
    /// tick's `onstat -i` prints `-u`, `-g con`, `-x`, `-g ath`, ... from one world) share
    /// them, and they go with the world at the end of the call (never kept between calls; only
    /// their emptied memory is, in `spare`).
    threads: std::cell::OnceCell<Vec<Thread>>,
    /// Where its thread rows' memory comes from and goes back to (`Worlds`): without it a
    /// second's rows (a megabyte at 5,000 sessions) took fresh pages every call.
    spare: Option<&'a SpareThreads>,
}

/// One emptied `Vec<Thread>` kept between calls, its capacity the largest one given back.
#[derive(Default)]
pub(crate) struct SpareThreads(std::sync::Mutex<Vec<Thread>>);

impl SpareThreads {
    /// The kept rows' memory (empty), or none.
    fn take(&self) -> Vec<Thread> {
        std::mem::take(&mut *super::lock(&self.0))
    }

    /// Keeps `rows`' memory for the next call, unless what is kept is as large.
    fn give_back(&self, mut rows: Vec<Thread>) {
        rows.clear();
        let mut kept = super::lock(&self.0);
        if kept.capacity() < rows.capacity() {
            *kept = rows;
        }
    }
}

impl Drop for World<'_> {
    fn drop(&mut self) {
        if let (Some(spare), Some(rows)) = (self.spare, self.threads.take()) {
            spare.give_back(rows);
        }
    }
}

/// What `World::at` computes for one second of a population: all a `World` is but the
/// population and counters it was computed from (it reads nothing else, so a second's is the
/// same whenever it is computed).
pub(crate) struct Moment {
    pub(crate) now: Now,
    /// Who is on each slot (`Population::tenants_at`).
    pub(crate) tenants: Arc<[Tenant]>,
    pub(crate) sessions: Vec<SessionNow>,
    held: HeldLocks,
    hot: Option<HotBuffer>,
    /// Mutexes held, in mutex order.
    pub(crate) mutexes: Vec<HeldMutex>,
    /// Per session: where it is at the instant when it has work in hand (`None` when it waits
    /// or is idle).
    pub(crate) dispatch: Vec<Option<Dispatch>>,
}

impl std::ops::Deref for World<'_> {
    type Target = Moment;

    fn deref(&self) -> &Moment {
        &self.moment
    }
}

/// Rolling back, between log records or writing one.
pub(crate) const fn rolling_back(t: u64) -> Activity {
    Activity::Rollback {
        writing: t % 3 != 0,
    }
}

/// A lock a session holds: (partnum, rowid, type), and who waits for it first.
#[derive(Debug, Clone, Copy)]
struct Held {
    partnum: u32,
    rowid: u64,
    kind: LockKind,
    waiter: u64,
    /// Its address when not the session's own lock slot: a lock taken from the server's free
    /// list (the hot counter row's).
    at: Option<std::num::NonZeroU64>,
}

// Four words: thousands are kept for each of the last seconds.
const _: () = assert!(std::mem::size_of::<Held>() == 32);

/// The lock types the demo's sessions hold, as `onstat -k` prints them: a byte in the 32 of a
/// held lock (thousands of them kept for each of the last seconds), not a string's 16.
#[derive(Debug, Clone, Copy)]
enum LockKind {
    /// `HDR+S`: the database lock every session holds.
    Shared,
    /// `HDR+IX`: a transaction's intent lock on a table.
    IntentExclusive,
    /// `HDR+X`: a row lock.
    Exclusive,
}

impl LockKind {
    const fn text(self) -> &'static str {
        match self {
            LockKind::Shared => "HDR+S",
            LockKind::IntentExclusive => "HDR+IX",
            LockKind::Exclusive => "HDR+X",
        }
    }
}

/// A transaction's locks on a table: its intent lock (`HDR+IX`), then a lock on each row.
fn hold_rows(held: &mut Vec<Held>, partnum: u32, rows: impl IntoIterator<Item = u64>) {
    held.push(Held {
        kind: LockKind::IntentExclusive,
        ..Held::row(partnum, 0)
    });
    held.extend(rows.into_iter().map(|rowid| Held::row(partnum, rowid)));
}

/// The locks every session holds at a moment, one list after the other (session `i`'s are
/// `rows[start[i]..start[i + 1]]`): two blocks a moment, not one per session holding a lock
/// (thousands at 5,000 sessions, each freed when the moment goes).
#[derive(Debug, Default)]
struct HeldLocks {
    start: Vec<u32>,
    rows: Vec<Held>,
}

impl HeldLocks {
    /// Session `i`'s locks, in the order it took them.
    fn of(&self, i: usize) -> &[Held] {
        match (self.start.get(i), self.start.get(i + 1)) {
            (Some(&a), Some(&b)) => self.rows.get(a as usize..b as usize).unwrap_or_default(),
            _ => &[],
        }
    }
}

impl Held {
    /// Its address: the lock it took from the server's free list, or lock slot `slot` of
    /// session `i` (slot 0 is the database lock).
    fn address(&self, pop: &Population, i: usize, slot: u64) -> u64 {
        self.at
            .map_or_else(|| lock_address(pop, i, slot), std::num::NonZeroU64::get)
    }

    /// A row lock (`HDR+X`) no one waits for.
    fn row(partnum: u32, rowid: u64) -> Held {
        Held {
            partnum,
            rowid,
            kind: LockKind::Exclusive,
            waiter: 0,
            at: None,
        }
    }
}

/// The incidents' buffers: which page, owned by whom, waited on by whom.
struct HotBuffer {
    pool8k: bool,
    chunk: u32,
    page: u64,
    owner: usize,
    waiters: Vec<usize>,
}

fn buffer_slot(seed: u64, chunk: u32, page: u64, total: u64) -> u64 {
    below(seed, Salt::Page, u64::from(chunk) << 40 | page, 0, total)
}

impl Population {
    /// Address of the buffer holding (chunk, page).
    pub(crate) fn buffer_address(&self, pool8k: bool, chunk: u32, page: u64) -> (u64, u64) {
        let l = &self.layout;
        if pool8k {
            let slot = buffer_slot(self.seed, chunk, page, POOL_8K_BUFFERS);
            (l.buf8k + slot * BUF_HDR_SIZE, l.mem8k + slot * 8192)
        } else {
            let slot = buffer_slot(self.seed, chunk, page, POOL_2K_BUFFERS);
            (l.buf2k + slot * BUF_HDR_SIZE, l.mem2k + slot * 2048)
        }
    }

    /// The last data page of `order_log` at `now` (base pages): it moves on every few seconds
    /// as the table grows, within its last extent.
    pub(crate) fn order_log_last_page(&self, now: &Now) -> (u32, u64) {
        let ext = last_extent(schema::ORDER_LOG);
        let per_cycle = timeline::first(Incident::InsertHotSpot).map_or(1, |p| p.len() / HOT_TURN);
        let step = now.cycle * per_cycle + now.into / HOT_TURN;
        let room = ext.size.saturating_sub(ext.size / 4 + 1).max(1);
        (ext.chunk, ext.base_page(ext.size / 4 + step % room))
    }

    /// The leaf of `ix_orders_ship_date` holding every NULL key (base pages).
    pub(crate) fn null_leaf_page(&self) -> (u32, u64) {
        let ext = last_extent(schema::IX_SHIP_DATE);
        let nth = 1_000 + below(self.seed, Salt::Leaf, 0, 0, ext.size / 2);
        (ext.chunk, ext.base_page(nth))
    }
}

fn last_extent(name: &str) -> Placed {
    schema::extents_of(name).last().copied().unwrap_or(Placed {
        chunk: 0,
        description: "",
        offset: 0,
        size: 1,
        page_kb: schema::BASE_PAGE_KB,
    })
}

/// Members of a role group present in this population.
fn group(pop: &Population, range: std::ops::Range<usize>) -> Vec<usize> {
    range.filter(|&i| i < pop.sessions.len()).collect()
}

/// Seconds one owner holds the hot page (an order_log page fills in that time too). One owner
/// and one set of waiters per page keeps `onstat -u` (every 1 s) and `onstat -X` (every 2 s)
/// telling the same story.
const HOT_TURN: u64 = 4;

/// An owner and waiters taken from `members`, changing every `HOT_TURN` s.
fn hot_group(
    seed: u64,
    members: &[usize],
    into: u64,
    min: u64,
    spread: u64,
) -> (usize, Vec<usize>) {
    let b = into / HOT_TURN;
    let g = members.len();
    let owner_at = (b as usize) % g.max(1);
    let want = (min + below(seed, Salt::Waiters, g as u64, b, spread)) as usize;
    let n = want.min(g.saturating_sub(1));
    let owner = members.get(owner_at).copied().unwrap_or(0);
    let waiters = (1..=n)
        .filter_map(|k| members.get((owner_at + k) % g).copied())
        .collect();
    (owner, waiters)
}

impl Moment {
    /// The moment at `t` seconds of `pop`.
    pub(crate) fn at(pop: &Population, counters: &Counters, t: u64) -> Moment {
        let now = timeline::now(t);
        let seed = pop.seed;
        let tenants = pop.tenants_at(t);
        let sessions: Vec<SessionNow> = pop
            .sessions
            .iter()
            .zip(tenants.iter())
            .map(|(s, tn)| background(seed, pop.messy, s, tn, t))
            .collect();
        let mut scene = Scene {
            pop,
            now,
            t,
            sessions,
            held: BTreeMap::new(),
            hot: None,
            contended_holder: None,
        };
        scene.incident();
        scene.hot_buffer();
        scene.hot_row(&tenants);
        scene.quick_checkpoint();
        let held = scene.background_locks();
        let Scene {
            sessions,
            hot,
            contended_holder,
            ..
        } = scene;
        let mutexes = held_mutexes(pop, &now, &sessions, contended_holder);
        let dispatch = dispatch(pop, counters, &now, &sessions);
        Moment {
            now,
            tenants,
            sessions,
            held,
            hot,
            mutexes,
            dispatch,
        }
    }
}

impl<'a> World<'a> {
    /// The instance at `t` seconds, computed afresh (`Worlds::at` shares one a second).
    pub(crate) fn at(pop: &'a Population, counters: &'a Counters, t: u64) -> World<'a> {
        World::of(pop, counters, Arc::new(Moment::at(pop, counters, t)))
    }

    /// The instance at a moment computed before from the same population and counters.
    pub(crate) fn of(pop: &'a Population, counters: &'a Counters, moment: Arc<Moment>) -> Self {
        World {
            pop,
            counters,
            moment,
            threads: std::cell::OnceCell::new(),
            spare: None,
        }
    }

    /// The same world, its thread rows written into `spare`'s memory and given back to it.
    pub(crate) fn sparing(mut self, spare: &'a SpareThreads) -> Self {
        self.spare = Some(spare);
        self
    }

    /// CPU seconds each client session uses in this second (its primary thread's, what
    /// `onstat -g cpu` adds up and the ground truth reads). The CPU VPs' busy seconds of this
    /// second (`onstat -g glo`'s `cpu` class) are shared out, 90 % to the client sessions (the
    /// rest is the server's own threads'), by what each wants: a running session its own pace, a
    /// spinning mutex waiter some, a reader little, a waiter nothing; never more than a core.
    pub(crate) fn cpu_use(&self) -> Vec<f64> {
        use super::profile::Q;
        let seed = self.pop.seed;
        let want: Vec<f64> = self
            .pop
            .sessions
            .iter()
            .zip(&self.sessions)
            .map(|(s, sn)| match sn.activity {
                Activity::Running | Activity::Critical | Activity::Rollback { .. } => {
                    0.40 + below(seed, Salt::Cpu, s.idx as u64, 3, 56) as f64 / 100.0
                }
                Activity::Mutex { .. } => 0.30,
                Activity::Reading => 0.08,
                _ => 0.0,
            })
            .collect();
        let total: f64 = want.iter().sum();
        let t = self.now.t as i64;
        let busy = |q: Q| self.counters.at(q, t) - self.counters.at(q, t - 1);
        let have = 0.9 * (busy(Q::CpuUser) + busy(Q::CpuSys)).max(0.0);
        if total <= 0.0 {
            return want;
        }
        let share = have / total;
        want.into_iter().map(|w| (w * share).min(1.0)).collect()
    }

    /// Every thread with an rstcb, in rstcb order: `onstat -u`'s rows (computed once a world).
    pub(crate) fn threads(&self) -> &[Thread] {
        self.threads.get_or_init(|| threads(self))
    }

    /// `onstat -k`'s rows.
    pub(crate) fn locks(&self) -> Vec<LockRow> {
        lock_rows(self.pop, &self.tenants, &self.held)
    }

    /// `onstat -X`'s rows: the 2 KB pool's, then the 8 KB pool's.
    pub(crate) fn buffers(&self) -> (Vec<BufRow>, Vec<BufRow>) {
        buffers(self.pop, &self.now, &self.sessions, self.hot.as_ref())
    }

    /// The banner's mode qualifier: a checkpoint requested or in progress, a long transaction
    /// rolling back.
    pub(crate) fn mode_flag(&self) -> Option<&'static str> {
        match self.now.incident() {
            Incident::CheckpointRequested => Some("CKPT REQ"),
            Incident::CheckpointInProgress => Some("CKPT INP"),
            _ if schedule::quick_block_at(self.now.t).is_some() => Some("CKPT INP"),
            _ => match longtx::stage(&self.now) {
                Some(Stage::RollingBack | Stage::Blocked) => Some("LONGTX"),
                _ => None,
            },
        }
    }

    /// What the server is blocked by (`Blocked:CKPT`, `Blocked:LONGTX`): the stall, a quick
    /// checkpoint's second or two, the long transaction.
    pub(crate) fn blocked(&self) -> Option<&'static str> {
        match self.now.incident() {
            Incident::CheckpointRequested | Incident::CheckpointInProgress => Some("CKPT"),
            _ if schedule::quick_block_at(self.now.t).is_some() => Some("CKPT"),
            _ => match longtx::stage(&self.now) {
                Some(Stage::Blocked) => Some("LONGTX"),
                _ => None,
            },
        }
    }

    /// The sid of the session on slot `idx` now (0 when nobody is on it).
    pub(crate) fn sid(&self, idx: usize) -> u64 {
        self.tenants
            .get(idx)
            .filter(|t| t.present)
            .map_or(0, |t| t.sid)
    }

    /// The slot of the session `sid` now.
    pub(crate) fn slot_of_sid(&self, sid: u64) -> Option<usize> {
        // A session connected all along is the only one with its sid (`steady_slot_of_sid`):
        // found at once, not by a walk over every slot for each session asked about.
        if let Some(k) = self.pop.steady_slot_of_sid(sid) {
            if self
                .tenants
                .get(k)
                .is_some_and(|t| t.present && t.sid == sid)
            {
                return Some(k);
            }
        }
        self.tenants.iter().position(|t| t.present && t.sid == sid)
    }

    /// The session on slot `idx` is connected now.
    pub(crate) fn present(&self, idx: usize) -> bool {
        self.tenants.get(idx).is_some_and(|t| t.present)
    }

    /// The client end of the session on slot `idx` now: (host name, link).
    pub(crate) fn client(&self, idx: usize) -> (&'a str, Link) {
        let s = &self.pop.sessions[idx];
        let tenant = self.tenants.get(idx).copied();
        self.pop.client_of(s, tenant.map_or(0, |t| t.host))
    }

    /// When the session's open transaction began (seconds), for `onstat -x`: the incident's
    /// start for the sessions it holds in one, the start of the current state otherwise.
    pub(crate) fn txn_began(&self, idx: usize) -> u64 {
        let t = self.now.t;
        let s = &self.pop.sessions[idx];
        let phase_start = self.now.cycle * timeline::CYCLE + self.now.phase.start;
        match (s.role, self.now.incident()) {
            (Role::LongTxn, Incident::LongTransaction) => longtx::began(&self.now),
            (Role::Chain(_), Incident::LockChain)
            | (Role::MutexHolder, Incident::MutexContention)
            | (Role::Critical, Incident::CheckpointRequested) => phase_start,
            (Role::Critical, Incident::CheckpointInProgress) => {
                timeline::first(Incident::CheckpointRequested)
                    .map_or(phase_start, |p| self.now.cycle * timeline::CYCLE + p.start)
            }
            _ => {
                let began = t - ((t + s.offset) % s.period).min(t);
                // Not before the session connected.
                let since = self.tenants.get(idx).map_or(0, |tn| tn.since.max(0) as u64);
                began.max(since.min(t))
            }
        }
    }
}

/// The CPU VPs a session thread may run on: `1cpu` runs the shared-memory poll thread.
const FIRST_SESSION_VP: u32 = 2;

/// Where each session with work in hand is at the instant (see [`Dispatch`]). As many run on
/// a CPU VP as the VPs' busy seconds of this second give the sessions (90 %, as
/// [`World::cpu_use`] shares them out), never more than the VPs they may run on; while the
/// CPU VPs are saturated the ready queue holds a growing share of the rest, otherwise a few
/// (a thread woken an instant before its VP takes it); the others are between two disk reads
/// of their statement.
fn dispatch(
    pop: &Population,
    counters: &Counters,
    now: &Now,
    sessions: &[SessionNow],
) -> Vec<Option<Dispatch>> {
    use super::profile::{CPU_VPS, Q};
    let seed = pop.seed;
    let t = now.t;
    let mut out: Vec<Option<Dispatch>> = sessions
        .iter()
        .map(|sn| match sn.activity {
            Activity::Reading => Some(Dispatch::Io),
            _ => None,
        })
        .collect();
    let mut candidates: Vec<(u64, usize)> = Vec::with_capacity(sessions.len());
    candidates.extend(
        sessions
            .iter()
            .enumerate()
            .filter(|(_, sn)| {
                matches!(
                    sn.activity,
                    Activity::Running | Activity::Critical | Activity::Rollback { .. }
                )
            })
            .map(|(i, _)| (below(seed, Salt::State, i as u64, t * 7 + 5, 1 << 30), i)),
    );
    candidates.sort_unstable();
    let ti = i64::try_from(t).unwrap_or(i64::MAX);
    let busy = |q: Q| counters.at(q, ti) - counters.at(q, ti - 1);
    let vp_seconds = (busy(Q::CpuUser) + busy(Q::CpuSys)).max(0.0);
    let slots = (CPU_VPS as u32).saturating_sub(FIRST_SESSION_VP - 1) as usize;
    let on_cpu = ((0.9 * vp_seconds).round() as usize)
        .min(slots)
        .min(candidates.len());
    let saturated = now.incident() == Incident::CpuSaturated;
    let calm_ready = below(seed, Salt::State, t, 11, 3) as usize;
    let len = now.phase.len().max(1) as f64;
    let share = 0.25 + 0.65 * (now.into as f64 / len);
    let mut queued = 0;
    for (k, &(_, i)) in candidates.iter().enumerate() {
        out[i] = Some(if k < on_cpu {
            Dispatch::OnCpu(FIRST_SESSION_VP + k as u32)
        } else if saturated {
            // The queue grows through the phase: a session once queued stays queued.
            if unit(seed, Salt::State, i as u64, 77) < share {
                Dispatch::Ready
            } else {
                Dispatch::Io
            }
        } else if queued < calm_ready {
            queued += 1;
            Dispatch::Ready
        } else {
            Dispatch::Io
        });
    }
    out
}

/// The moment `World::at` builds, in phases: each session starts as its own rhythm makes it,
/// then the timeline's incident, its hot buffer and the background transactions change what
/// sessions do and add the locks they hold. The phases run in this order because each later
/// one reads what the earlier ones decided.
struct Scene<'a> {
    pop: &'a Population,
    now: Now,
    t: u64,
    sessions: Vec<SessionNow>,
    /// The locks the incident's sessions hold, by session: a few of them (every other
    /// session's are added by `background_locks`, as the moment's list is made).
    held: BTreeMap<usize, Vec<Held>>,
    hot: Option<HotBuffer>,
    /// Who holds the contended mutex this second, when the contention plays.
    contended_holder: Option<usize>,
}

impl Scene<'_> {
    /// What the timeline's incident makes its sessions do, and the locks it makes them hold.
    fn incident(&mut self) {
        let pop = self.pop;
        let now = self.now;
        let t = self.t;
        let n = pop.sessions.len();
        match now.incident() {
            Incident::InsertHotSpot => self.insert_hot_spot(),
            Incident::NullIndexLeaf => self.null_index_leaf(),
            Incident::SendQFill | Incident::SendQDrain => self.slow_fetch(),
            // The slow clients' query runs (reads) just before it starts sending rows, so their
            // netnorm wait is a new one, not the idle wait before it.
            _ if timeline::now(t + QUERY_RUNS).incident() == Incident::SendQFill => {
                for m in group(pop, SLOW) {
                    self.sessions[m] = SessionNow {
                        activity: Activity::Reading,
                        txn: false,
                        send_q: 0,
                    };
                }
            }
            Incident::CheckpointRequested | Incident::CheckpointInProgress => self.checkpoint(),
            Incident::LongTransaction => self.long_transaction(),
            Incident::CpuSaturated => {
                // Every session with work to do runs: the CPU VPs are the bottleneck.
                for (s, sn) in pop.sessions.iter().zip(self.sessions.iter_mut()) {
                    if s.kind == Kind::Active && sn.activity != Activity::Gone {
                        sn.activity = Activity::Running;
                    }
                }
            }
            Incident::MutexContention if MUTEX_HOLDER < n => self.mutex_contention(),
            Incident::LockChain if CHAIN.end <= n => self.lock_chain(),
            _ => {}
        }
    }

    /// The inserters all run in a transaction; one owns order_log's last page, some wait for it.
    fn insert_hot_spot(&mut self) {
        let pop = self.pop;
        let now = self.now;
        let seed = pop.seed;
        let members = group(pop, INSERTERS);
        if !members.is_empty() {
            let (owner, waiters) = hot_group(seed, &members, now.into, 8, 8);
            let (chunk, page) = pop.order_log_last_page(&now);
            for &m in &members {
                self.sessions[m] = SessionNow {
                    activity: Activity::Running,
                    txn: true,
                    send_q: 0,
                };
            }
            self.hot = Some(HotBuffer {
                pool8k: false,
                chunk,
                page,
                owner,
                waiters,
            });
        }
    }

    /// The updaters all run in a transaction; one owns the index leaf of every NULL key, some
    /// wait for it.
    fn null_index_leaf(&mut self) {
        let pop = self.pop;
        let now = self.now;
        let seed = pop.seed;
        let members = group(pop, UPDATERS);
        if !members.is_empty() {
            let (owner, waiters) = hot_group(seed, &members, now.into, 4, 5);
            let (chunk, page) = pop.null_leaf_page();
            for &m in &members {
                self.sessions[m] = SessionNow {
                    activity: Activity::Running,
                    txn: true,
                    send_q: 0,
                };
            }
            self.hot = Some(HotBuffer {
                pool8k: true,
                chunk,
                page,
                owner,
                waiters,
            });
        }
    }

    /// A few slow clients fetch a big result, their Send-Q filling then draining.
    fn slow_fetch(&mut self) {
        let pop = self.pop;
        let now = self.now;
        let t = self.t;
        let seed = pop.seed;
        let count = 4 + below(seed, Salt::Count, 3, 0, 3) as usize;
        let waited = t - timeline_start_of_fill(&now);
        for (k, m) in group(pop, SLOW).into_iter().take(count).enumerate() {
            self.sessions[m] = SessionNow {
                activity: Activity::SlowFetch { waited },
                txn: false,
                send_q: send_q_of_slow(seed, k as u64, &now),
            };
        }
    }

    /// Sessions wait for the checkpoint; while it is requested, one session in a critical
    /// section holds order_log's locks.
    fn checkpoint(&mut self) {
        let pop = self.pop;
        let now = self.now;
        let n = pop.sessions.len();
        let members = group(pop, CKPT);
        let count = schedule::checkpoint_waiters(now.incident(), now.into, members.len() as u64);
        for m in members.into_iter().take(count as usize) {
            let txn = self.sessions[m].txn;
            self.sessions[m] = SessionNow {
                activity: Activity::Checkpoint,
                txn,
                send_q: 0,
            };
        }
        if CRITICAL < n && now.incident() == Incident::CheckpointRequested {
            self.sessions[CRITICAL] = SessionNow {
                activity: Activity::Critical,
                txn: true,
                send_q: 0,
            };
            let log = schema::partnum(schema::ORDER_LOG);
            let rows = (0..10).map(|r| 0x4_0000 + (now.cycle * 0x100 + r) * 0x101);
            hold_rows(self.holding(CRITICAL), log, rows);
            // Two inserters want rows it has locked: they wait on a session that onmode -z
            // cannot end (its locks go when it leaves the critical section).
            for (k, w) in LOCKED_OUT_BY_CRITICAL.into_iter().enumerate() {
                if w < n {
                    self.wait_for_lock(w, CRITICAL, 1 + k);
                }
            }
        }
    }

    /// The locks session `i` holds for the incident (none until it takes one).
    fn holding(&mut self, i: usize) -> &mut Vec<Held> {
        self.held.entry(i).or_default()
    }

    /// Session `waiter` waits for the lock `owner` holds at its `held[k]` (lock slot `k + 1`).
    fn wait_for_lock(&mut self, waiter: usize, owner: usize, k: usize) {
        let Some(h) = self.held.get_mut(&owner).and_then(|l| l.get_mut(k)) else {
            return;
        };
        if h.waiter == 0 {
            h.waiter = self.pop.sessions[waiter].rstcb;
        }
        let lock = h.address(self.pop, owner, k as u64 + 1);
        self.sessions[waiter] = waiting(Activity::Lock { lock });
    }

    /// The long transaction runs, then rolls back; while the server is blocked, sessions that
    /// came to write wait for the log.
    fn long_transaction(&mut self) {
        let pop = self.pop;
        let now = self.now;
        let t = self.t;
        let seed = pop.seed;
        let n = pop.sessions.len();
        if let (Some(stage), true) = (longtx::stage(&now), LONG_TXN < n) {
            if stage == Stage::Blocked {
                // Nothing but the rollback may write: a session that came to write
                // since the server blocked waits until it is unblocked.
                let blocked_at = longtx::began(&now) + longtx::EHWM_INTO;
                for (s, sn) in pop.sessions.iter().zip(self.sessions.iter_mut()) {
                    // An empty slot's next session waits only once it has connected.
                    if s.role != Role::LongTxn
                        && sn.activity != Activity::Gone
                        && wrote_between(seed, s, blocked_at, t)
                    {
                        *sn = waiting(Activity::LogWait);
                    }
                }
            }
            let reading = below(seed, Salt::State, LONG_TXN as u64, t / 2, 3) == 0;
            self.sessions[LONG_TXN] = SessionNow {
                activity: match stage {
                    Stage::Open if reading => Activity::Reading,
                    Stage::Open => Activity::Running,
                    _ => rolling_back(t),
                },
                txn: true,
                send_q: 0,
            };
            // LOCK TABLE order_log IN EXCLUSIVE MODE, then the delete.
            self.holding(LONG_TXN)
                .push(Held::row(schema::partnum(schema::ORDER_LOG), 0));
            // An inserter that came to order_log waits for that lock while it rolls back:
            // ending the session would not free it any sooner.
            if stage != Stage::Open && LOCKED_OUT_BY_ROLLBACK < n {
                self.wait_for_lock(LOCKED_OUT_BY_ROLLBACK, LONG_TXN, 0);
            }
        }
    }

    /// The mutex contention: its holder runs in a transaction with its row locks, and its
    /// waiters join the queue for the mutex one by one.
    fn mutex_contention(&mut self) {
        let pop = self.pop;
        let now = self.now;
        let t = self.t;
        // Repricing items row by row: a lock taken from the free list for each row.
        self.sessions[MUTEX_HOLDER] = SessionNow {
            activity: Activity::Running,
            txn: true,
            send_q: 0,
        };
        let items = schema::partnum(schema::ITEMS);
        let rows = (0..10).map(|r| 0x1_0000 + (t * 10 + r) * 0x101 % 0xf_0000);
        hold_rows(self.holding(MUTEX_HOLDER), items, rows);
        self.contended_holder = Some(MUTEX_HOLDER);
        let waiters = group(pop, MUTEX_WAITERS);
        for (k, &m) in waiters.iter().enumerate() {
            if now.into < contention_join(k) {
                continue;
            }
            if contention_holder(pop.messy, now.into) == Some(k) {
                // Its turn: it has the mutex this second, and waits no more.
                self.contended_holder = Some(m);
                self.sessions[m] = SessionNow {
                    activity: Activity::Running,
                    txn: false,
                    send_q: 0,
                };
                continue;
            }
            self.sessions[m] = SessionNow {
                activity: Activity::Mutex { which: CONTENDED },
                txn: false,
                send_q: 0,
            };
        }
    }

    /// The chain of lock waits: who holds which row and who waits for it.
    fn lock_chain(&mut self) {
        let pop = self.pop;
        let now = self.now;
        let seed = pop.seed;
        // 812 runs a long transaction holding row locks on customer and orders; 813
        // (holding an items row) and 815 wait on 812; 814 waits on 813.
        let [s812, s813, s814, s815] = [CHAIN.start, 13, 14, 15];
        let reading = below(seed, Salt::State, 812, now.into / 3, 3) == 0;
        self.sessions[s812] = SessionNow {
            activity: if reading {
                Activity::Reading
            } else {
                Activity::Running
            },
            txn: true,
            send_q: 0,
        };
        let lock = |owner: usize, j: u64| lock_address(pop, owner, j);
        let customer = schema::partnum(schema::CUSTOMER);
        let orders = schema::partnum(schema::ORDERS);
        let items = schema::partnum(schema::ITEMS);
        let rstcb = |i: usize| pop.sessions[i].rstcb;
        let waited = |partnum, rowid, waiter: usize| Held {
            waiter: rstcb(waiter),
            ..Held::row(partnum, rowid)
        };
        self.holding(s812).push(waited(customer, 0x104, s813));
        self.holding(s812).push(waited(orders, 0x2a07, s815));
        self.holding(s813).push(waited(items, 0x1f03, s814));
        // Lock slot 0 is the database lock; the row locks follow.
        self.sessions[s813] = waiting(Activity::Lock {
            lock: lock(s812, 1),
        });
        self.sessions[s815] = waiting(Activity::Lock {
            lock: lock(s812, 2),
        });
        self.sessions[s814] = waiting(Activity::Lock {
            lock: lock(s813, 1),
        });
    }

    /// The hot buffer's waiters wait for it; its owner and waiters hold a lock on its table and
    /// one on a row each.
    fn hot_buffer(&mut self) {
        let pop = self.pop;
        let t = self.t;
        let seed = pop.seed;
        if let Some(h) = &self.hot {
            let (buf, _) = pop.buffer_address(h.pool8k, h.chunk, h.page);
            for &w in &h.waiters {
                self.sessions[w] = SessionNow {
                    activity: Activity::Buffer { buf },
                    txn: true,
                    send_q: 0,
                };
            }
            let (tbl, rowbase) = if h.pool8k {
                (schema::partnum(schema::ORDERS), 0x3000)
            } else {
                (schema::partnum(schema::ORDER_LOG), h.page << 8)
            };
            for (k, &m) in std::iter::once(&h.owner).chain(&h.waiters).enumerate() {
                let row = rowbase + 1 + k as u64 + below(seed, Salt::Noise, m as u64, t, 7);
                // `self.hot` is borrowed: the map itself, not `holding`.
                hold_rows(self.held.entry(m).or_default(), tbl, [row]);
            }
        }
    }

    /// A counter row of `stock` every few short-lived sessions update: its lock passes from
    /// one to the next every `HOT_ROW_TURN` s, and the next ones in line wait for it (brief lock
    /// waits in every phase, on a lock whose holder, and whose slot, keep changing).
    fn hot_row(&mut self, tenants: &[Tenant]) {
        let pop = self.pop;
        let t = self.t;
        let members: Vec<usize> = pop
            .sessions
            .iter()
            .filter(|s| {
                s.churn
                    .as_ref()
                    .is_some_and(|c| c.ordinal < HOT_ROW_MEMBERS)
            })
            .map(|s| s.idx)
            .filter(|&i| {
                tenants.get(i).is_some_and(|tn| tn.present)
                    && !matches!(self.sessions[i].activity, Activity::Gone)
            })
            .collect();
        if members.len() < 2 {
            return;
        }
        let g = members.len();
        let at = (t / HOT_ROW_TURN) as usize % g;
        let holder = members[at];
        self.sessions[holder] = SessionNow {
            activity: Activity::Running,
            txn: true,
            send_q: 0,
        };
        hold_rows(
            self.holding(holder),
            schema::partnum(schema::STOCK),
            [HOT_ROW_ID],
        );
        // Its lock comes from the server's free list, as every lock does: the one the last
        // holder freed, so one address is held by one session, then the next, the same
        // second its waiters see it change hands.
        if let Some(h) = self.held.get_mut(&holder).and_then(|l| l.last_mut()) {
            h.at = std::num::NonZeroU64::new(hot_row_lock(pop));
        }
        // Now and then nobody comes for it for a second; the next second the new holder has
        // it and the next in line wait again: waits that begin with no lock wait the second
        // before (so no `onstat -k` was asked for with that second's `onstat -u`).
        if t % HOT_ROW_PAUSE_EVERY == HOT_ROW_PAUSE_AT {
            return;
        }
        for k in 1..g.min(3) {
            // Lock slot 2: after its intent lock on the table.
            self.wait_for_lock(members[(at + k) % g], holder, 1);
        }
    }

    /// A quick checkpoint's second or two of block: a thread or two wait for it (C).
    fn quick_checkpoint(&mut self) {
        let Some((j, _)) = schedule::quick_block_at(self.t) else {
            return;
        };
        let members = group(self.pop, CKPT);
        for m in members.into_iter().take(schedule::normal_waits(j) as usize) {
            let txn = self.sessions[m].txn;
            self.sessions[m] = SessionNow {
                activity: Activity::Checkpoint,
                txn,
                send_q: 0,
            };
        }
    }

    /// The moment's locks: the incident's sessions' as they took them; and a table and a row
    /// lock held by each other session in a transaction (not waiting for a lock), as ordinary
    /// transactions in the background do.
    fn background_locks(&mut self) -> HeldLocks {
        let pop = self.pop;
        let t = self.t;
        let seed = pop.seed;
        let incident = self.held.values().map(Vec::len).sum::<usize>();
        let background = self
            .sessions
            .iter()
            .enumerate()
            .filter(|(i, sn)| Self::holds_background_locks(sn) && !self.held.contains_key(i))
            .count();
        let mut out = HeldLocks {
            start: Vec::with_capacity(self.sessions.len() + 1),
            rows: Vec::with_capacity(incident + 2 * background),
        };
        for (i, sn) in self.sessions.iter().enumerate() {
            out.start.push(out.rows.len() as u32);
            let mine = self.held.remove(&i).unwrap_or_default();
            if !mine.is_empty() {
                out.rows.extend(mine);
            } else if Self::holds_background_locks(sn) {
                let s = &pop.sessions[i];
                let table = [
                    schema::ORDERS,
                    schema::ITEMS,
                    schema::CUSTOMER,
                    schema::STOCK,
                ][(s.sql % 4) as usize];
                let mut row = 0x100 + below(seed, Salt::Noise, i as u64, t / s.period, 0x8000);
                if table == schema::STOCK && row == HOT_ROW_ID {
                    row += 1;
                }
                hold_rows(&mut out.rows, schema::partnum(table), [row]);
            }
        }
        out.start.push(out.rows.len() as u32);
        out
    }

    /// A session in a transaction, not waiting for a lock, holds a table and a row lock (when
    /// the incident gave it none).
    fn holds_background_locks(sn: &SessionNow) -> bool {
        sn.txn && !matches!(sn.activity, Activity::Lock { .. })
    }
}

/// When the `k`-th session of the contention starts waiting (seconds into the phase): twenty
/// at once, then two more every second (a hot mutex gathers its crowd in seconds).
pub(crate) fn contention_join(k: usize) -> u64 {
    if k < CONTENTION_AT_ONCE {
        0
    } else {
        ((k - CONTENTION_AT_ONCE) / 2 + 1) as u64
    }
}

const CONTENTION_AT_ONCE: usize = 20;

/// The short-lived sessions (by their place among them) that update the hot counter row, and
/// how long each holds its lock.
const HOT_ROW_MEMBERS: u64 = 6;
const HOT_ROW_TURN: u64 = 2;
/// A second in this many nobody waits for the counter row: the one before a turn (odd), so the
/// waits after it are on the lock the next holder took.
const HOT_ROW_PAUSE_EVERY: u64 = 30;
const HOT_ROW_PAUSE_AT: u64 = 21;
/// The counter row's rowid in `stock`.
const HOT_ROW_ID: u64 = 0x101;
/// The contended mutex passes from holder to holder: every `ROTATION` s one of the first
/// `ROTATING` waiters has it for a second (in turn), the repricing session the rest of the time.
const ROTATION: u64 = 3;
const ROTATING: u64 = 8;

/// Which of the contention's waiters (by its place) holds the mutex `into` seconds into the
/// phase, if one does (on the messy instance: the tidy one's repricing session holds it all
/// along).
pub(crate) fn contention_holder(messy: bool, into: u64) -> Option<usize> {
    (messy && into % ROTATION == ROTATION - 1).then_some(((into / ROTATION) % ROTATING) as usize)
}

/// Seconds the `k`-th waiter of the contention has been waiting `into` seconds into the phase:
/// since it joined, or since its last turn holding the mutex.
pub(crate) fn contention_waited(messy: bool, k: usize, into: u64) -> u64 {
    let joined = contention_join(k);
    let mut since = joined;
    if messy && (k as u64) < ROTATING && into >= ROTATION - 1 {
        // Its turns are the seconds ROTATION * (ROTATING * c + k) + ROTATION - 1.
        let turn = (into - (ROTATION - 1)) / ROTATION;
        if turn >= k as u64 {
            let last = turn - (turn - k as u64) % ROTATING;
            since = since.max(ROTATION * last + ROTATION);
        }
    }
    into.saturating_sub(since)
}

/// The inserters locked out of `order_log`'s rows by the session in its critical section during
/// the checkpoint stall, and the one locked out of the table by the long transaction's
/// rollback.
const LOCKED_OUT_BY_CRITICAL: [usize; 2] = [INSERTERS.start, INSERTERS.start + 1];
const LOCKED_OUT_BY_ROLLBACK: usize = INSERTERS.start + 2;

/// The mutexes held at a moment: each one sessions wait for, with its holder (the contention's
/// DBA session, or a running session for the brief waits), and one more held without waiters.
fn held_mutexes(
    pop: &Population,
    now: &Now,
    sessions: &[SessionNow],
    contended_holder: Option<usize>,
) -> Vec<HeldMutex> {
    let seed = pop.seed;
    let t = now.t;
    let mut out: Vec<HeldMutex> = Vec::new();
    let mut running: Vec<usize> = Vec::with_capacity(sessions.len());
    running.extend(
        sessions
            .iter()
            .enumerate()
            .filter(|(_, s)| s.activity == Activity::Running)
            .map(|(i, _)| i),
    );
    let pick = |salt_entity: u64| -> Holder {
        match running.get(below(seed, Salt::Mutex, salt_entity, t, running.len() as u64) as usize) {
            Some(&i) => Holder::Session(i),
            // The log flusher holds the log mutexes when no session runs.
            None => Holder::Daemon(9),
        }
    };
    for (i, sn) in sessions.iter().enumerate() {
        if let Activity::Mutex { which } = sn.activity {
            let waited = if which == CONTENDED {
                let k = i.saturating_sub(MUTEX_WAITERS.start);
                contention_waited(pop.messy, k, now.into)
            } else {
                0
            };
            match out.iter_mut().find(|m| m.which == which) {
                Some(m) => m.waiters.push((i, waited)),
                None => {
                    let holder = match contended_holder {
                        Some(h) if which == CONTENDED => Holder::Session(h),
                        _ => pick(1_000 + which),
                    };
                    out.push(HeldMutex {
                        which,
                        holder,
                        waiters: vec![(i, waited)],
                    });
                }
            }
        }
    }
    // The longest waiter first, as onstat lists them.
    for m in &mut out {
        m.waiters.sort_by_key(|&(i, w)| (std::cmp::Reverse(w), i));
    }
    let extra = below(seed, Salt::Mutex, 2_000, t, 6);
    if !out.iter().any(|m| m.which == extra) {
        out.push(HeldMutex {
            which: extra,
            holder: pick(2_001),
            waiters: Vec::new(),
        });
    }
    out.sort_by_key(|m| m.which);
    out
}

fn waiting(activity: Activity) -> SessionNow {
    SessionNow {
        activity,
        txn: true,
        send_q: 0,
    }
}

/// Seconds the slow clients' query reads before it sends rows.
const QUERY_RUNS: u64 = 4;

/// When the current Send-Q episode began (the fill phase's start).
fn timeline_start_of_fill(now: &Now) -> u64 {
    let fill = timeline::first(Incident::SendQFill).map_or(0, |p| p.start);
    now.cycle * timeline::CYCLE + fill
}

/// Send-Q of the `k`-th slow client: from a few KB to several hundred KB over the fill phase
/// (growing every second), then draining to nothing.
fn send_q_of_slow(seed: u64, k: u64, now: &Now) -> u64 {
    let start = 2_048.0 + 4_096.0 * unit(seed, Salt::SendQ, k, 0);
    let top = 250_000.0 + 300_000.0 * unit(seed, Salt::SendQ, k, 1);
    let fill = timeline::first(Incident::SendQFill).map_or(50, |p| p.len()) as f64;
    let jitter = 1.0 + 0.02 * (unit(seed, Salt::SendQ, k, now.t) - 0.5);
    let q = match now.incident() {
        Incident::SendQFill => {
            let x = (now.into as f64 / (fill - 1.0).max(1.0)).min(1.0);
            start * (top / start).powf(x) * jitter
        }
        _ => {
            let drain = timeline::first(Incident::SendQDrain).map_or(15, |p| p.len()) as f64;
            let left = 1.0 - (now.into as f64 + 1.0) / (drain - 2.0).max(1.0);
            if left <= 0.0 {
                0.0
            } else {
                top * left * left * jitter
            }
        }
    };
    q as u64
}

/// The incident a role plays in, whose end a later wait cannot predate.
fn incident_of(role: Role) -> Option<Incident> {
    Some(match role {
        Role::Chain(_) => Incident::LockChain,
        Role::Inserter(_) => Incident::InsertHotSpot,
        Role::Updater(_) => Incident::NullIndexLeaf,
        Role::Slow(_) => Incident::SendQDrain,
        Role::Critical | Role::CkptWaiter(_) => Incident::CheckpointInProgress,
        Role::LongTxn => Incident::LongTransaction,
        Role::MutexHolder | Role::MutexWaiter(_) => Incident::MutexContention,
        Role::Plain | Role::Local => return None,
    })
}

/// When the latest of the other phases that kept session `s` busy (not waiting for its client)
/// ended, at or before `t` (0 if none): the CPU saturation runs every active session, the
/// long transaction's block holds those that came to write until the rollback is done, the
/// checkpoint stall and the rollback hold the inserters locked out of `order_log`, a quick
/// checkpoint its waiters. An idle wait cannot have begun before.
fn busy_until(seed: u64, s: &Session, t: u64) -> u64 {
    let mut until = 0;
    if s.kind == Kind::Active {
        until = until.max(last_end(Incident::CpuSaturated, t));
    }
    if LOCKED_OUT_BY_CRITICAL.contains(&s.idx) {
        until = until.max(last_end(Incident::CheckpointRequested, t));
    }
    if let Some(p) = timeline::first(Incident::LongTransaction) {
        if let Some(done) = last_at(p.start + longtx::DONE_INTO, t) {
            let blocked_at = done - (longtx::DONE_INTO - longtx::EHWM_INTO);
            let waited_for_log = s.role != Role::LongTxn
                && s.kind == Kind::Active
                && wrote_between(seed, s, blocked_at, done - 1);
            if s.idx == LOCKED_OUT_BY_ROLLBACK || waited_for_log {
                until = until.max(done);
            }
        }
    }
    if let Some(k) = s
        .idx
        .checked_sub(CKPT.start)
        .filter(|_| CKPT.contains(&s.idx))
    {
        for (j, at) in schedule::offsets().into_iter().enumerate() {
            let waited = !schedule::is_stall(at) && (k as u64) < schedule::normal_waits(j);
            if let Some(end) = last_at(at + schedule::quick_block(j), t).filter(|_| waited) {
                until = until.max(end);
            }
        }
    }
    until
}

/// The latest second `c * CYCLE + offset` at or before `t`, if one is.
fn last_at(offset: u64, t: u64) -> Option<u64> {
    let c = t.checked_sub(offset)? / timeline::CYCLE;
    Some(c * timeline::CYCLE + offset)
}

/// When the last phase of `incident` before `t` ended (0 if none has yet).
fn last_end(incident: Incident, t: u64) -> u64 {
    let Some(p) = timeline::first(incident) else {
        return 0;
    };
    let at = t % timeline::CYCLE;
    let cycle = t / timeline::CYCLE;
    if at >= p.end {
        cycle * timeline::CYCLE + p.end
    } else if cycle > 0 {
        (cycle - 1) * timeline::CYCLE + p.end
    } else {
        0
    }
}

/// Every this many buckets an active session does some work, so a wait's start is always found
/// within that many buckets back (and waittime never jumps back within one wait).
const MAX_IDLE_BUCKETS: u64 = 10;

/// The state an active session is in during its `b`-th bucket: idle outside 55..97, in a
/// transaction in 88..97.
fn bucket_state(seed: u64, s: &Session, b: u64) -> u64 {
    if b % MAX_IDLE_BUCKETS == s.offset % MAX_IDLE_BUCKETS {
        60
    } else {
        below(seed, Salt::State, s.idx as u64, b, 100)
    }
}

/// Whether an active session wanted to write (was in a transaction) at some second of
/// `from..=to`.
fn wrote_between(seed: u64, s: &Session, from: u64, to: u64) -> bool {
    s.kind == Kind::Active
        && ((from + s.offset) / s.period..=(to + s.offset) / s.period)
            .any(|b| (88..97).contains(&bucket_state(seed, s, b)))
}

/// What a session does when no incident involves it.
fn background(seed: u64, messy: bool, s: &Session, tenant: &Tenant, t: u64) -> SessionNow {
    let idle = |waited, send_q| SessionNow {
        activity: Activity::Idle { waited },
        txn: false,
        send_q,
    };
    if !tenant.present {
        return SessionNow {
            activity: Activity::Gone,
            txn: false,
            send_q: 0,
        };
    }
    if s.kind == Kind::Sleepy {
        return idle(s.idle_base + t, 0);
    }
    // The counter row's updaters (`Scene::hot_row`) are always at it.
    if s.churn
        .as_ref()
        .is_some_and(|c| c.ordinal < HOT_ROW_MEMBERS)
    {
        return SessionNow {
            activity: Activity::Running,
            txn: false,
            send_q: 0,
        };
    }
    // A session that has just connected logs in: it runs its first second.
    let connected = u64::try_from(tenant.since).ok();
    if connected == Some(t) && tenant.epoch > 0 {
        return SessionNow {
            activity: Activity::Running,
            txn: false,
            send_q: 0,
        };
    }
    let state = |b: u64| bucket_state(seed, s, b);
    let b = (t + s.offset) / s.period;
    let st = state(b);
    let is_idle = |v: u64| !(55..97).contains(&v);
    if is_idle(st) {
        // A wait that started in an earlier bucket goes on: look back for its start.
        let mut first = b;
        while first > 0 && is_idle(state(first - 1)) {
            first -= 1;
        }
        let mut start = (first * s.period).saturating_sub(s.offset);
        // Before its incident ended, the session was busy with it; nor was it idle while
        // another phase kept it busy.
        if let Some(i) = incident_of(s.role) {
            start = start.max(last_end(i, t));
        }
        start = start.max(busy_until(seed, s, t));
        // Nor did it wait before it connected (and logged in).
        if let Some(c) = connected.filter(|_| tenant.epoch > 0) {
            start = start.max(c + 1);
        }
        let waited = t - start.min(t);
        // It has just sent the reply to its last request: the bytes sit in the Send-Q until
        // the client's acknowledgement, a fraction of a second; the socket table read now
        // catches them about half the time.
        let in_flight = if messy && waited == 0 && below(seed, Salt::Blip, s.idx as u64, t, 2) == 0
        {
            120 + below(seed, Salt::Blip, s.idx as u64, t + 1, 900)
        } else {
            0
        };
        return idle(waited, in_flight);
    }
    let txn = (88..97).contains(&st);
    let activity = if below(seed, Salt::Mutex, s.idx as u64, t, 100) < 3 {
        Activity::Mutex {
            which: below(seed, Salt::Mutex, s.idx as u64, t + 1, CONTENDED),
        }
    } else if (75..88).contains(&st) {
        Activity::Reading
    } else {
        Activity::Running
    };
    // A running query streams rows: a little data sits in the send queue now and then.
    let send_q =
        if activity == Activity::Running && below(seed, Salt::SendQ, s.idx as u64, t, 3) == 0 {
            200 + below(seed, Salt::SendQ, s.idx as u64, t + 7, 1_248)
        } else {
            0
        };
    SessionNow {
        activity,
        txn,
        send_q,
    }
}

/// A session's reads and writes so far: a session connected all along counts from before the
/// demo, a new one from its login.
fn counted(s: &Session, tenant: &Tenant, t: u64) -> (u64, u64) {
    if s.churn.is_none() {
        return (
            s.base_reads + s.reads_rate * t / 100,
            s.base_writes + s.writes_rate * t / 100,
        );
    }
    let up = (t as i64 - tenant.since).max(0) as u64;
    (3 + s.reads_rate * up / 100, s.writes_rate * up / 100)
}

/// The address of lock slot `j` of session `idx` (slot 0: its database lock).
pub(crate) fn lock_address(pop: &Population, idx: usize, j: u64) -> u64 {
    pop.layout.lock + ((idx as u64) * LOCKS_PER_SESSION + j) * LOCK_SIZE
}

/// The hot counter row's lock: past every session's lock slots, taken by each holder in turn.
fn hot_row_lock(pop: &Population) -> u64 {
    lock_address(pop, pop.sessions.len(), 0)
}

/// `onstat -k`: each session's database lock, then the locks it holds, chained through lklist.
/// An empty slot's locks are free (the next session on it takes the same lock slots).
fn lock_rows(pop: &Population, tenants: &[Tenant], held: &HeldLocks) -> Vec<LockRow> {
    let mut rows = Vec::with_capacity(pop.sessions.len() + 64);
    for (s, _) in pop
        .sessions
        .iter()
        .zip(tenants)
        .filter(|(_, tn)| tn.present)
    {
        let mut prev = 0;
        let db = Held {
            partnum: schema::DATABASE_TBLSPACE,
            rowid: schema::STORES_DB_ROWID,
            kind: LockKind::Shared,
            waiter: 0,
            at: None,
        };
        let mine = held.of(s.idx);
        for (j, h) in std::iter::once(&db).chain(mine).enumerate() {
            let address = h.address(pop, s.idx, j as u64);
            rows.push(LockRow {
                address,
                wtlist: h.waiter,
                owner: s.rstcb,
                lklist: prev,
                kind: h.kind.text(),
                partnum: h.partnum,
                rowid: h.rowid,
            });
            prev = address;
        }
    }
    rows
}

fn flags_of(sn: &SessionNow, primary: bool) -> [u8; 7] {
    let mut f = *b"-------";
    f[0] = match sn.activity {
        Activity::Idle { .. } | Activity::SlowFetch { .. } => b'Y',
        Activity::Mutex { .. } => b'S',
        Activity::Buffer { .. } => b'B',
        Activity::Checkpoint => b'C',
        Activity::Lock { .. } => b'L',
        Activity::LogWait => b'G',
        _ => b'-',
    };
    if sn.txn {
        f[2] = b'B';
    }
    if matches!(sn.activity, Activity::Rollback { .. }) {
        f[2] = b'R';
    }
    if primary {
        f[3] = b'P';
    }
    match sn.activity {
        Activity::Reading => f[4] = b'R',
        Activity::Critical | Activity::Rollback { writing: true } => f[4] = b'X',
        _ => {}
    }
    f
}

#[cfg(test)]
thread_local! {
    /// How many times this thread built a world's threads (the test that one call builds them
    /// once).
    pub(crate) static THREADS_BUILT: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn threads(w: &World<'_>) -> Vec<Thread> {
    #[cfg(test)]
    THREADS_BUILT.with(|n| n.set(n.get() + 1));
    let (pop, now, sessions, held) = (w.pop, &w.now, &w.sessions, &w.held);
    let t = now.t;
    // Sized for every row at once (a parallel query's session has two helper threads): grown
    // by doubling, the 5,000-session table was copied on the way.
    let helpers = 2 * pop.sessions.iter().filter(|s| s.pdq).count();
    let mut out = w.spare.map(SpareThreads::take).unwrap_or_default();
    out.reserve(pop.daemons.len() + sessions.len() + helpers);
    let ckpt_inp = now.incident() == Incident::CheckpointInProgress;
    let ckpt_secs = timeline::seconds_in(Incident::CheckpointInProgress, t);
    for (i, d) in pop.daemons.iter().enumerate() {
        let status = if d.sleeps == 0 {
            if d.flags[6] == b'F' && ckpt_inp {
                Status::Running
            } else {
                Status::SleepingForever
            }
        } else {
            Status::Sleeping(1 + (d.sleeps - 1).saturating_sub(t % d.sleeps))
        };
        let mut nwrites = d.base_writes + d.writes_rate * t / 10;
        if d.flags[6] == b'F' {
            nwrites += 4_000 * ckpt_secs;
        }
        out.push(Thread {
            rstcb: pop.daemon_rstcb(i),
            tid: Population::daemon_tid(i),
            sid: d.sid,
            session: None,
            flags: *d.flags,
            wait: 0,
            locks: 0,
            nreads: d.base_reads + t / 50,
            nwrites,
            user: "informix",
            name: d.name,
            vp: Vp::Named(d.vp),
            prty: d.prty,
            status,
        });
    }
    for ((s, sn), tn) in pop.sessions.iter().zip(sessions).zip(w.tenants.iter()) {
        let (wait, status) = match sn.activity {
            Activity::Gone => continue,
            Activity::Idle { waited } => (
                s.cond,
                Status::Cond {
                    name: if s.link == Link::Shm {
                        "sm_read"
                    } else {
                        "netnorm"
                    },
                    cid: s.cid,
                    waited,
                },
            ),
            Activity::SlowFetch { waited } => (
                s.cond,
                Status::Cond {
                    name: "netnorm",
                    cid: s.cid,
                    waited,
                },
            ),
            Activity::Running | Activity::Critical | Activity::Rollback { .. } => (
                0,
                match w.dispatch.get(s.idx).copied().flatten() {
                    Some(Dispatch::OnCpu(_)) => Status::Running,
                    Some(Dispatch::Ready) => Status::Ready,
                    _ => Status::IoWait,
                },
            ),
            Activity::Reading => (0, Status::IoWait),
            Activity::Mutex { which } => (
                pop.layout.mutex + which * MUTEX_SIZE,
                Status::Mutex(MUTEXES[which as usize % MUTEXES.len()]),
            ),
            Activity::LogWait => (pop.layout.logbuf, Status::LogWait),
            Activity::Buffer { buf } => (buf, Status::Buffer),
            Activity::Checkpoint => (pop.layout.ckpt_cond, Status::Checkpoint),
            Activity::Lock { lock } => (lock, Status::Lock),
        };
        let locks = 1 + held.of(s.idx).len() as u32;
        let (nreads, nwrites) = counted(s, tn, t);
        out.push(Thread {
            rstcb: s.rstcb,
            tid: tn.tid,
            sid: tn.sid,
            session: Some(s.idx),
            flags: flags_of(sn, true),
            wait,
            locks,
            nreads,
            nwrites,
            user: s.user,
            name: "sqlexec",
            vp: match w.dispatch.get(s.idx).copied().flatten() {
                Some(Dispatch::OnCpu(vp)) => Vp::Cpu(vp),
                _ => Vp::Cpu(s.vp),
            },
            prty: 2,
            status,
        });
        // A parallel query runs with helper threads sharing the sessid.
        // Its scan threads wait for a VP of their own while it runs, or read.
        if s.pdq && matches!(sn.activity, Activity::Running | Activity::Reading) {
            let scanning = match w.dispatch.get(s.idx).copied().flatten() {
                Some(Dispatch::OnCpu(_) | Dispatch::Ready) => Status::Ready,
                _ => Status::IoWait,
            };
            for (k, (flags, name, status)) in [
                (*b"-------", "scan_1.0", scanning),
                (*b"----R--", "scan_1.1", Status::IoWait),
            ]
            .into_iter()
            .enumerate()
            {
                out.push(Thread {
                    rstcb: s.rstcb + (k as u64 + 1) * RSTCB_SIZE,
                    tid: tn.tid + k as u64 + 1,
                    sid: tn.sid,
                    session: Some(s.idx),
                    flags,
                    wait: 0,
                    locks: 0,
                    nreads: s.reads_rate * t / 200,
                    nwrites: 0,
                    user: s.user,
                    name,
                    vp: Vp::Cpu(1 + (s.vp + k as u32) % 16),
                    prty: 2,
                    status,
                });
            }
        }
    }
    out
}

/// `onstat -X`: the incident's hot buffer with its owner and waiters, plus a few buffers held
/// without waiters (noise, as in any busy instance).
fn buffers(
    pop: &Population,
    now: &Now,
    sessions: &[SessionNow],
    hot: Option<&HotBuffer>,
) -> (Vec<BufRow>, Vec<BufRow>) {
    let seed = pop.seed;
    let t = now.t;
    let mut p2 = Vec::new();
    let mut p8 = Vec::new();
    let row = |pool8k: bool, chunk: u32, page: u64, owner: u64, waiters: Vec<u64>, k: u64| {
        let (address, memaddr) = pop.buffer_address(pool8k, chunk, page);
        let shared = owner == u64::MAX;
        BufRow {
            address,
            owner,
            flags: if owner == 0 { 0x10 } else { 0x80 },
            chunk,
            page,
            memaddr,
            nslots: 40 + below(seed, Salt::Page, page, k, 200) as u32,
            pgflgs: if pool8k { 0x890 } else { 0x2801 },
            scount: if shared || owner == 0 { 1 } else { 0 },
            waiters,
        }
    };
    if let Some(h) = hot {
        let owner = pop.sessions[h.owner].rstcb;
        let waiters = h.waiters.iter().map(|&w| pop.sessions[w].rstcb).collect();
        let r = row(h.pool8k, h.chunk, h.page, owner, waiters, 0);
        if h.pool8k {
            p8.push(r);
        } else {
            // The page filled just before is still being written out.
            p2.push(row(
                false,
                h.chunk,
                h.page.saturating_sub(1),
                u64::MAX,
                Vec::new(),
                1,
            ));
            p2.push(r);
        }
    }
    // Noise: running sessions hold a page of a table or an index for a moment.
    let mut running: Vec<usize> = Vec::with_capacity(sessions.len());
    running.extend(
        sessions
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(s.activity, Activity::Running | Activity::Reading))
            .map(|(i, _)| i),
    );
    let tables = [
        schema::CUSTOMER,
        schema::ORDERS,
        schema::ITEMS,
        schema::STOCK,
    ];
    let indexes = [
        schema::IX_ORDERS_NUM,
        schema::IX_ITEMS_ORDER,
        schema::IX_CUSTOMER_ZIP,
    ];
    let noise = 2 + below(seed, Salt::Noise, 0, t, 3);
    for k in 0..noise {
        let pick = below(seed, Salt::Noise, 1 + k, t, 1_000);
        let name = if k % 3 == 2 {
            indexes[(pick % 3) as usize]
        } else {
            tables[(pick % 4) as usize]
        };
        let exts = schema::extents_of(name);
        let Some(ext) = exts.get((pick as usize / 7) % exts.len().max(1)).copied() else {
            continue;
        };
        let nth = below(seed, Salt::Page, 2 + k, t, ext.size);
        let owner =
            match running.get(below(seed, Salt::Owner, k, t, running.len() as u64 + 2) as usize) {
                Some(&i) => pop.sessions[i].rstcb,
                None if pick % 2 == 0 => u64::MAX,
                None => 0,
            };
        let r = row(
            ext.page_kb == 8,
            ext.chunk,
            ext.base_page(nth),
            owner,
            Vec::new(),
            2 + k,
        );
        if ext.page_kb == 8 {
            p8.push(r);
        } else {
            p2.push(r);
        }
    }
    p2.sort_by_key(|b| b.address);
    p2.dedup_by_key(|b| b.address);
    p8.sort_by_key(|b| b.address);
    p8.dedup_by_key(|b| b.address);
    (p2, p8)
}
