//! The simulated instance's population: client sessions with their roles, users, clients and
//! shared-memory addresses, and the daemon threads. Built once per (seed, sessions); what they
//! do at a given moment is `moment::World`.

use super::noise::{below, Salt};
use std::sync::Arc;

/// Client sessions when not told otherwise.
pub(crate) const DEFAULT_SESSIONS: usize = 300;
pub(crate) const MAX_SESSIONS: usize = 20_000;

/// The server's address and name.
pub(crate) const SERVER_IP: [u8; 4] = [10, 20, 0, 5];
pub(crate) const SERVER_HOST: &str = "dbprod01";
/// Informix's uid, which owns its sockets.
pub(crate) const INFORMIX_UID: u32 = 200;

/// The first sid of the client sessions: the lock chain's sessions are 812..=815.
const FIRST_SID: u64 = 800;

// Which client sessions (by index) play which part. Sessions past `n` do not exist: a small
// population plays smaller incidents.
pub(super) const CHAIN: std::ops::Range<usize> = 12..16;
pub(super) const INSERTERS: std::ops::Range<usize> = 16..32;
pub(super) const UPDATERS: std::ops::Range<usize> = 32..42;
pub(super) const SLOW: std::ops::Range<usize> = 42..48;
pub(super) const CRITICAL: usize = 48;
pub(super) const CKPT: std::ops::Range<usize> = 49..89;
/// The batch job whose purge of `order_log` runs as one long transaction (sid 810).
pub(super) const LONG_TXN: usize = 10;
/// The batch session repricing items row by row, which holds the `free_lock` mutex (sid 811).
pub(super) const MUTEX_HOLDER: usize = 11;
/// The sessions queueing (S) on that mutex.
pub(super) const MUTEX_WAITERS: std::ops::Range<usize> = 89..125;
/// Sessions from here on may be short-lived connections (`churn`): none plays an incident.
const CHURN_FROM: usize = MUTEX_WAITERS.end;
/// Local batch jobs connected through shared memory: they wait on `sm_read`, with no socket.
const LOCAL: [usize; 2] = [3, 9];

/// What a session does when its incident plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Plain,
    /// A local shared-memory connection.
    Local,
    /// 0 = sid 812 (head blocker), 1 = 813, 2 = 814, 3 = 815.
    Chain(u8),
    Inserter(u8),
    Updater(u8),
    Slow(u8),
    Critical,
    CkptWaiter(u8),
    LongTxn,
    MutexHolder,
    MutexWaiter(u8),
}

/// How busy a session is outside its incidents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Connected and waiting for its client the whole time (the common case).
    Sleepy,
    /// Alternates between waiting for its client, running and reading.
    Active,
}

/// How the client is connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Link {
    Tcp {
        ip: [u8; 4],
        port: u16,
    },
    /// Through the IPv6 listener: `/proc/net/tcp6` shows it as `::ffff:a.b.c.d`.
    Tcp6Mapped {
        ip: [u8; 4],
        port: u16,
    },
    Shm,
}

/// One client session: everything about it that does not change with time.
#[derive(Debug, Clone)]
pub struct Session {
    pub(crate) idx: usize,
    pub(crate) sid: u64,
    pub(crate) user: &'static str,
    pub(crate) program: &'static str,
    pub(crate) hostname: String,
    pub(crate) link: Link,
    pub(crate) pid: u32,
    pub(crate) kind: Kind,
    pub(crate) role: Role,
    /// Runs parallel queries: two helper threads while it runs.
    pub(crate) pdq: bool,
    pub(crate) tid: u64,
    pub(crate) rstcb: u64,
    /// Its condition (netnorm, or sm_read for a local connection): address and id.
    pub(crate) cond: u64,
    pub(crate) cid: u64,
    pub(crate) netscb: u64,
    /// When it connected, in seconds before the demo's time 0.
    pub(crate) opened_ago: u64,
    /// How long a sleepy session has already waited at time 0.
    pub(crate) idle_base: u64,
    /// Reads and writes per 100 s, and their values at time 0.
    pub(crate) reads_rate: u64,
    pub(crate) writes_rate: u64,
    pub(crate) base_reads: u64,
    pub(crate) base_writes: u64,
    /// State changes every `period` s, shifted by `offset`.
    pub(crate) period: u64,
    pub(crate) offset: u64,
    pub(crate) vp: u32,
    pub(crate) inode: u64,
    /// Which of its role's statements it runs.
    pub(crate) sql: u64,
    /// A short-lived connection: sessions come and go on this slot (its rstcb and lock slots
    /// are the next session's), `None` for a session connected all along.
    pub(crate) churn: Option<Churn>,
}

/// How sessions come and go on a slot: each `period` seconds (shifted by `phase`) the session
/// on it disconnects and, after a gap of 0 to 3 s, a new one connects. Some new sessions are
/// given the sid of the one before (a sid the server freed): the same rstcb, the same sid, a
/// new session.
#[derive(Debug, Clone)]
pub(crate) struct Churn {
    /// Its place among the slots that churn (fresh sids and thread ids are numbered by it).
    pub(crate) ordinal: u64,
    pub(crate) period: u64,
    pub(crate) phase: u64,
    /// The application servers its sessions connect from, in turn: (name, address).
    pub(crate) hosts: Vec<(String, [u8; 4])>,
}

/// The session on a slot at a moment (what changes when one session leaves and another
/// connects on the slot).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tenant {
    pub(crate) sid: u64,
    /// Its thread's id: never reused.
    pub(crate) tid: u64,
    /// When it connected (demo seconds; below 0: before the demo's time 0).
    pub(crate) since: i64,
    /// Which of the slot's sessions it is (0 for a session connected all along).
    pub(crate) epoch: u64,
    /// Connected at this moment (between two sessions the slot is empty).
    pub(crate) present: bool,
    /// Which of the slot's client hosts it connected from (`Churn::hosts`).
    pub(crate) host: usize,
}

/// Sessions that come and go: how many there are by then, and how long a slot stays empty.
const CHURN_SHARE: u64 = 4;
const CHURN_MAX_GAP: u64 = 4;
/// One new session in this many takes the sid of the slot's last one (never more than three in
/// a row).
const SID_REUSE: u64 = 3;

/// A daemon thread (sessid 0 or a low sid, user informix).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Daemon {
    pub(crate) sid: u64,
    pub(crate) flags: &'static [u8; 7],
    pub(crate) name: &'static str,
    pub(crate) vp: &'static str,
    pub(crate) prty: u8,
    /// Sleeps this many seconds between rounds (0: sleeps until woken).
    pub(crate) sleeps: u64,
    pub(crate) base_reads: u64,
    pub(crate) base_writes: u64,
    pub(crate) writes_rate: u64,
}

const DAEMONS: [Daemon; 16] = [
    dm(1, b"---P--D", "main_loop()", "1cpu", 4, 1, 1204, 88013, 40),
    dm(0, b"---P--F", "flush_sub(0)", "1cpu", 2, 0, 0, 512_044, 900),
    dm(0, b"---P--F", "flush_sub(1)", "1cpu", 2, 0, 0, 498_120, 880),
    dm(0, b"---P--F", "flush_sub(2)", "1cpu", 2, 0, 0, 476_511, 860),
    dm(0, b"---P--F", "flush_sub(3)", "1cpu", 2, 0, 0, 455_012, 840),
    dm(0, b"---P--F", "flush_sub(4)", "1cpu", 2, 0, 0, 431_870, 820),
    dm(0, b"---P--F", "flush_sub(5)", "1cpu", 2, 0, 0, 410_233, 800),
    dm(0, b"---P--F", "flush_sub(6)", "1cpu", 2, 0, 0, 389_904, 780),
    dm(0, b"---P--F", "flush_sub(7)", "1cpu", 2, 0, 0, 366_118, 760),
    dm(7, b"---P--D", "aslogflush", "1cpu", 3, 1, 0, 0, 0),
    dm(8, b"---P--B", "btscanner_0", "1cpu", 2, 30, 311, 0, 0),
    dm(9, b"---P--B", "btclean", "1cpu", 2, 44, 40, 0, 0),
    dm(10, b"---P--M", "onmode_mon", "1cpu", 4, 1, 0, 0, 0),
    dm(23, b"---P--D", "dbScheduler", "1cpu", 2, 60, 5120, 212, 1),
    dm(24, b"---P--D", "dbWorker1", "1cpu", 2, 0, 2210, 77, 0),
    dm(25, b"---P--D", "dbWorker2", "1cpu", 2, 0, 1988, 64, 0),
];

#[allow(clippy::too_many_arguments)]
const fn dm(
    sid: u64,
    flags: &'static [u8; 7],
    name: &'static str,
    vp: &'static str,
    prty: u8,
    sleeps: u64,
    base_reads: u64,
    base_writes: u64,
    writes_rate: u64,
) -> Daemon {
    Daemon {
        sid,
        flags,
        name,
        vp,
        prty,
        sleeps,
        base_reads,
        base_writes,
        writes_rate,
    }
}

/// Threads with no rstcb (VPs' own threads, pollers, listeners): `onstat -g ath` only.
pub(crate) const SYSTEM_THREADS: [(Status, &str, &str); 16] = [
    (Status::IoIdle, "17lio", "lio vp 0"),
    (Status::IoIdle, "18pio", "pio vp 0"),
    (Status::IoIdle, "19aio", "aio vp 0"),
    (Status::IoIdle, "20aio", "aio vp 1"),
    (Status::IoIdle, "21aio", "aio vp 2"),
    (Status::IoIdle, "22aio", "aio vp 3"),
    (Status::IoIdle, "23msc", "msc vp 0"),
    (Status::IoIdle, "24fifo", "fifo vp 0"),
    (Status::Running, "1cpu", "sm_poll"),
    (Status::Running, "25soc", "soctcppoll"),
    (Status::SleepingForever, "1cpu", "sm_listen"),
    (Status::Sleeping(1), "1cpu", "sm_discon"),
    (Status::SleepingForever, "25soc", "soctcplst"),
    (Status::SleepingForever, "26soc", "soctcplst"),
    (Status::SleepingForever, "1cpu", "kaio"),
    (Status::SleepingForever, "2cpu", "kaio"),
];

/// Where the instance's structures sit in shared memory (seed-dependent, like a real attach).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    pub(crate) rstcb: u64,
    pub(crate) tcb: u64,
    pub(crate) cond: u64,
    pub(crate) netscb: u64,
    pub(crate) lock: u64,
    pub(crate) buf2k: u64,
    pub(crate) mem2k: u64,
    pub(crate) buf8k: u64,
    pub(crate) mem8k: u64,
    pub(crate) mutex: u64,
    pub(crate) ckpt_cond: u64,
    pub(crate) pools: u64,
    /// The logical-log buffers (what a `G` waiter waits for) and the log file structures.
    pub(crate) logbuf: u64,
    pub(crate) logfiles: u64,
    /// The transaction structures (`onstat -x`).
    pub(crate) txn: u64,
}

pub(crate) const RSTCB_SIZE: u64 = 0x848;
pub(crate) const LOCK_SIZE: u64 = 0x50;
/// Lock slots kept per session (the most any session holds is 12).
pub(crate) const LOCKS_PER_SESSION: u64 = 16;
pub(crate) const BUF_HDR_SIZE: u64 = 0xb8;
pub(crate) const POOL_2K_BUFFERS: u64 = 1_000_000;
pub(crate) const POOL_8K_BUFFERS: u64 = 150_000;

impl Layout {
    fn new(seed: u64) -> Self {
        // 64-bit Linux shared memory: 10-digit addresses as in the seed's outputs. Regions do
        // not overlap, so an address means one thing.
        let base = 0x26_0000_0000 + below(seed, Salt::Addr, 0, 0, 16) * 0x1000_0000;
        Layout {
            mutex: base + 0x0550_1a40,
            cond: base + 0x067c_d298,
            ckpt_cond: base + 0x08a0_f2a0,
            rstcb: base + 0x0a00_1028,
            tcb: base + 0x1400_9028,
            netscb: base + 0x1c0a_8c28,
            pools: base + 0x1e87_f040,
            logbuf: base + 0x0891_4028,
            logfiles: base + 0x0892_1f70,
            txn: base + 0x3200_0028,
            lock: base + 0x2a0b_0028,
            mem2k: base + 0x1_0000_0000,
            mem8k: base + 0x1_8000_0000,
            buf2k: base + 0x2_0000_07e8,
            buf8k: base + 0x2_0c00_0188,
        }
    }
}

/// Slots of the rstcb table: the daemons first, then three per session (primary and two PDQ
/// helpers; unused slots are free rstcbs).
fn rstcb_of_slot(l: &Layout, slot: u64) -> u64 {
    l.rstcb + slot * RSTCB_SIZE
}

const PLAIN_USERS: [&str; 7] = [
    "appuser", "appuser", "appuser", "webapp", "webapp", "svc_api", "batch",
];

fn program_of(user: &str) -> &'static str {
    match user {
        "webapp" => "/opt/web/bin/storefront",
        "svc_api" => "/opt/api/bin/api_server",
        "batch" => "/opt/etl/bin/eod_report",
        "ordsvc" => "/opt/app/bin/order_events",
        "shipsvc" => "/opt/app/bin/ship_planner",
        "report" => "/opt/bi/bin/sales_export",
        "loader" => "/opt/etl/bin/nightly_load",
        "purge" => "/opt/etl/bin/purge_order_log",
        "etl" => "/opt/etl/bin/reprice_items",
        _ => "/opt/app/bin/order_entry",
    }
}

/// An application server's name and address: `app03` is 10.20.1.13.
fn app_host(user: &str, n: u64) -> (String, [u8; 4]) {
    let (prefix, net) = match user {
        "purge" | "etl" => ("etl", 4),
        "webapp" => ("web", 2),
        "svc_api" => ("api", 3),
        "report" => ("rpt", 200),
        _ => ("app", 1),
    };
    let n = n as u8;
    (format!("{prefix}{n:02}"), [10, 20, net, 10 + n])
}

/// The population: built once per (seed, sessions), then read at any time.
#[derive(Debug, Clone)]
pub(crate) struct Population {
    pub(crate) seed: u64,
    pub(crate) layout: Layout,
    pub(crate) sessions: Vec<Session>,
    pub(crate) daemons: &'static [Daemon],
    /// How many slots churn, and where their fresh sids and thread ids start.
    churners: u64,
    fresh_sid: u64,
    fresh_tid: u64,
    /// As untidy as a server (`DemoInstance::messy`): sessions come and go, the parts of one
    /// call are printed apart, idle clients' replies sit a moment in their Send-Q.
    pub(crate) messy: bool,
    /// Every slot's tenant when none churns (then they never change): shared by every
    /// second's moment instead of computed again for each.
    steady_tenants: Option<Arc<[Tenant]>>,
}

impl Population {
    pub(crate) fn new(seed: u64, n: usize, messy: bool) -> Self {
        let n = n.clamp(1, MAX_SESSIONS);
        let layout = Layout::new(seed);
        let mut sessions = Vec::with_capacity(n);
        let mut sid = FIRST_SID;
        for idx in 0..n {
            if idx >= CHAIN.end {
                // sids of sessions that came and went leave gaps.
                sid += [1, 1, 1, 2, 4][below(seed, Salt::Gap, idx as u64, 0, 5) as usize];
            } else if idx > 0 {
                sid += 1;
            }
            sessions.push(Self::session(seed, &layout, idx, sid, messy));
        }
        let mut churners = 0;
        for s in sessions.iter_mut() {
            if let Some(c) = s.churn.as_mut() {
                c.ordinal = churners;
                churners += 1;
            }
        }
        // Fresh sids start past every sid of a session connected all along, fresh thread ids
        // past every thread of the slots (three each: the primary and two PDQ helpers).
        let fresh_sid = (sid / 1_000 + 2) * 1_000;
        let fresh_tid = 400 + 4 * n as u64 + 100;
        let mut pop = Population {
            seed,
            layout,
            sessions,
            daemons: &DAEMONS,
            churners,
            fresh_sid,
            fresh_tid,
            messy,
            steady_tenants: None,
        };
        if churners == 0 {
            pop.steady_tenants = Some(pop.tenants_of_slots(0));
        }
        pop
    }

    /// Who is on each slot at second `t`, in slot order.
    pub(crate) fn tenants_at(&self, t: u64) -> Arc<[Tenant]> {
        match &self.steady_tenants {
            Some(steady) => Arc::clone(steady),
            None => self.tenants_of_slots(t),
        }
    }

    fn tenants_of_slots(&self, t: u64) -> Arc<[Tenant]> {
        (0..self.sessions.len())
            .map(|i| self.tenant(i, t))
            .collect()
    }

    /// The session on slot `idx` at second `t`.
    pub(crate) fn tenant(&self, idx: usize, t: u64) -> Tenant {
        let Some(s) = self.sessions.get(idx) else {
            return Tenant {
                sid: 0,
                tid: 0,
                since: 0,
                epoch: 0,
                present: false,
                host: 0,
            };
        };
        let Some(c) = &s.churn else {
            return Tenant {
                sid: s.sid,
                tid: s.tid,
                since: -(s.opened_ago as i64),
                epoch: 0,
                present: true,
                host: 0,
            };
        };
        let epoch = (t + c.phase) / c.period;
        let start = (epoch * c.period) as i64 - c.phase as i64;
        let since = start + self.churn_gap(s, epoch) as i64;
        Tenant {
            sid: self.churn_sid(s, c, epoch),
            tid: self.fresh_tid + c.ordinal + self.churners * epoch,
            since,
            epoch,
            present: t as i64 >= since,
            host: (below(self.seed, Salt::Churn, s.idx as u64, 8 * epoch + 2, 8) as usize
                + epoch as usize)
                % c.hosts.len().max(1),
        }
    }

    /// The slot of the session connected all along whose sid is `sid`, if one is. No other
    /// slot's tenant ever has its sid: the slots' own sids rise with the slot, and a slot
    /// that churns gives its tenants fresh sids, past every slot's own.
    pub(crate) fn steady_slot_of_sid(&self, sid: u64) -> Option<usize> {
        if sid >= self.fresh_sid {
            return None;
        }
        let k = self.sessions.binary_search_by_key(&sid, |s| s.sid).ok()?;
        self.sessions[k].churn.is_none().then_some(k)
    }

    /// Seconds the slot stays empty before the `epoch`-th session connects (the first was
    /// connected before the demo began).
    fn churn_gap(&self, s: &Session, epoch: u64) -> u64 {
        if epoch == 0 {
            0
        } else {
            below(
                self.seed,
                Salt::Churn,
                s.idx as u64,
                8 * epoch,
                CHURN_MAX_GAP,
            )
        }
    }

    /// The sid of the `epoch`-th session of a slot: a fresh one, or the last session's.
    fn churn_sid(&self, s: &Session, c: &Churn, epoch: u64) -> u64 {
        let mut e = epoch;
        while e % 4 != 0 && below(self.seed, Salt::Churn, s.idx as u64, 8 * e + 1, SID_REUSE) == 0 {
            e -= 1;
        }
        self.fresh_sid + c.ordinal + self.churners * e
    }

    fn session(seed: u64, l: &Layout, idx: usize, sid: u64, messy: bool) -> Session {
        let i = idx as u64;
        let h = |salt, n| below(seed, salt, i, 0, n);
        let role = if CHAIN.contains(&idx) {
            Role::Chain((idx - CHAIN.start) as u8)
        } else if INSERTERS.contains(&idx) {
            Role::Inserter((idx - INSERTERS.start) as u8)
        } else if UPDATERS.contains(&idx) {
            Role::Updater((idx - UPDATERS.start) as u8)
        } else if SLOW.contains(&idx) {
            Role::Slow((idx - SLOW.start) as u8)
        } else if idx == CRITICAL {
            Role::Critical
        } else if CKPT.contains(&idx) {
            Role::CkptWaiter((idx - CKPT.start) as u8)
        } else if idx == LONG_TXN {
            Role::LongTxn
        } else if idx == MUTEX_HOLDER {
            Role::MutexHolder
        } else if MUTEX_WAITERS.contains(&idx) {
            Role::MutexWaiter((idx - MUTEX_WAITERS.start) as u8)
        } else if LOCAL.contains(&idx) {
            Role::Local
        } else {
            Role::Plain
        };
        let user = match role {
            Role::Plain | Role::CkptWaiter(_) | Role::MutexWaiter(_) => {
                PLAIN_USERS[h(Salt::User, 7) as usize]
            }
            Role::LongTxn => "purge",
            Role::MutexHolder => "etl",
            Role::Local => "batch",
            Role::Chain(3) => "batch",
            Role::Chain(_) => "appuser",
            Role::Inserter(_) => "ordsvc",
            Role::Updater(_) => "shipsvc",
            Role::Slow(_) => "report",
            Role::Critical => "loader",
        };
        let host_n = match role {
            Role::Slow(k) => 1 + u64::from(k) % 3,
            _ => 1 + h(Salt::Host, 8),
        };
        // A bijection on 0..28000 keeps every client port distinct.
        let port = 32_768 + ((i * 7_919 + below(seed, Salt::Link, 0, 0, 28_000)) % 28_000) as u16;
        let (hostname, link) = match role {
            Role::Local | Role::Critical => (SERVER_HOST.to_string(), Link::Shm),
            _ => {
                let (name, ip) = app_host(user, host_n);
                let mapped = role == Role::Plain && h(Salt::Link, 25) == 0;
                let link = if mapped {
                    Link::Tcp6Mapped { ip, port }
                } else {
                    Link::Tcp { ip, port }
                };
                (name, link)
            }
        };
        let churns =
            messy && role == Role::Plain && idx >= CHURN_FROM && h(Salt::Churn, CHURN_SHARE) == 0;
        let kind = match role {
            _ if churns => Kind::Active,
            Role::Plain | Role::Local if h(Salt::Kind, 100) < 65 => Kind::Sleepy,
            _ => Kind::Active,
        };
        let (reads_rate, writes_rate) = match (kind, role) {
            (Kind::Sleepy, _) => (h(Salt::Rates, 6), 0),
            (_, Role::Inserter(_)) => (200 + h(Salt::Rates, 200), 900 + h(Salt::Rates, 600)),
            (_, Role::Critical) => (400, 6_000),
            (_, Role::LongTxn) => (3_000, 9_000),
            (_, Role::Slow(_)) => (800 + h(Salt::Rates, 400), 0),
            _ => (50 + h(Salt::Rates, 3_000), h(Salt::Rates, 300)),
        };
        let pdq = role == Role::Plain && kind == Kind::Active && !churns && h(Salt::Pdq, 12) == 0;
        let churn = churns.then(|| {
            let period = 30 + below(seed, Salt::Churn, i, 1, 60);
            Churn {
                ordinal: 0,
                period,
                phase: below(seed, Salt::Churn, i, 2, period),
                hosts: (1..=8).map(|n| app_host(user, n)).collect(),
            }
        });
        let tid = 400 + 4 * i + h(Salt::Pdq, 2);
        Session {
            idx,
            sid,
            user,
            program: program_of(user),
            hostname,
            link,
            pid: 1_000 + h(Salt::Pid, 60_000) as u32,
            kind,
            role,
            pdq,
            tid,
            rstcb: rstcb_of_slot(l, DAEMONS.len() as u64 + 3 * i),
            cond: l.cond + i * 0x2d0,
            cid: 900 + 3 * i + h(Salt::Count, 3),
            netscb: l.netscb + i * 0x6a0,
            opened_ago: 600 + h(Salt::Opened, 3 * 86_400),
            idle_base: 30 + h(Salt::Opened, 4_000),
            reads_rate,
            writes_rate,
            base_reads: h(Salt::Rates, 400_000),
            base_writes: h(Salt::Rates, 40_000),
            period: 4 + h(Salt::Period, 6),
            offset: h(Salt::Period, 97),
            vp: 1 + h(Salt::Vp, 16) as u32,
            inode: 3_100_000 + i * 13 + h(Salt::Link, 13),
            sql: h(Salt::Sql, 1_000),
            churn,
        }
    }

    /// The client end of a session of `s`'s slot that came from its `host`-th client host:
    /// (host name, link). A slot connected all along has one.
    pub(crate) fn client_of<'a>(&'a self, s: &'a Session, host: usize) -> (&'a str, Link) {
        match (&s.churn, s.link) {
            (Some(c), Link::Tcp { port, .. }) => c
                .hosts
                .get(host)
                .map_or((s.hostname.as_str(), s.link), |(name, ip)| {
                    (name.as_str(), Link::Tcp { ip: *ip, port })
                }),
            (Some(c), Link::Tcp6Mapped { port, .. }) => c
                .hosts
                .get(host)
                .map_or((s.hostname.as_str(), s.link), |(name, ip)| {
                    (name.as_str(), Link::Tcp6Mapped { ip: *ip, port })
                }),
            _ => (s.hostname.as_str(), s.link),
        }
    }

    /// The sids of the sessions connected all along (those of the slots that churn change).
    pub(crate) fn steady_sids(&self) -> Vec<u64> {
        self.sessions
            .iter()
            .filter(|s| s.churn.is_none())
            .map(|s| s.sid)
            .collect()
    }

    /// The rstcb of a daemon thread.
    pub(crate) fn daemon_rstcb(&self, i: usize) -> u64 {
        rstcb_of_slot(&self.layout, i as u64)
    }

    /// Thread id of the `i`-th daemon (after the system threads, from tid 2).
    pub(crate) fn daemon_tid(i: usize) -> u64 {
        2 + SYSTEM_THREADS.len() as u64 + i as u64
    }

    /// Size of the rstcb table (what the `onstat -u` footer calls total).
    pub(crate) fn rstcb_total(&self) -> u64 {
        let used = (DAEMONS.len() + 3 * self.sessions.len()) as u64;
        used.next_power_of_two().max(2048)
    }
}

/// What a thread is doing, as `onstat -g ath` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Running,
    IoIdle,
    Ready,
    IoWait,
    Sleeping(u64),
    SleepingForever,
    Cond {
        name: &'static str,
        cid: u64,
        waited: u64,
    },
    Lock,
    Buffer,
    Checkpoint,
    Mutex(&'static str),
    /// Waiting to write to the logical log (`G`).
    LogWait,
}

impl Status {
    /// As `onstat -g ath` prints it, appended to `o`.
    pub(crate) fn write(&self, o: &mut super::text::Rows<'_>) {
        match self {
            Status::Running => o.str("running"),
            Status::Ready => o.str("ready"),
            Status::IoWait => o.str("IO Wait"),
            Status::IoIdle => o.str("IO Idle"),
            Status::Sleeping(n) => {
                o.str("sleeping secs: ");
                o.dec(*n, 0);
            }
            Status::SleepingForever => o.str("sleeping forever"),
            Status::Cond { name, .. } => {
                o.str("cond wait  ");
                o.str(name);
            }
            Status::Lock => o.str("lock wait"),
            Status::Buffer => o.str("buffer wait"),
            Status::Checkpoint => o.str("checkpoint wait"),
            Status::LogWait => o.str("log wait"),
            Status::Mutex(m) => {
                o.str("mutex wait ");
                o.str(m);
            }
        }
    }

    /// As `onstat -g ath` prints it.
    pub(crate) fn text(&self) -> String {
        let mut o = String::new();
        self.write(&mut super::text::Rows::new(&mut o));
        o
    }
}
