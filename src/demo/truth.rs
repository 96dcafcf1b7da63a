//! The demo's ground truth: at each second, what every client session is doing, whom it waits
//! for directly and at the head of its chain, since when it has been in that wait, and who holds
//! each mutex. Read from the same `World` the printers print, so a test can hold every answer
//! ifxtop gives against what was true at the moment its data was taken.

use super::instance::LONG_TXN;
use super::moment::{Activity, Holder, World, MUTEXES, MUTEX_SIZE};
use super::timeline::{self, Incident};
use super::{disk, ha, logs, schema, DemoInstance};
use std::collections::BTreeMap;

/// What a session is doing at a moment, as the oracle compares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Waiting for its client with nothing to send (`netnorm`/`sm_read`).
    Idle,
    /// Waiting for a client that does not read what it was sent (Send-Q).
    SlowFetch,
    Running,
    Reading,
    /// In a critical section (its flags' position 5 `X`).
    Critical,
    /// Rolling its transaction back (in a critical section too).
    Rollback,
    Mutex,
    Buffer,
    Checkpoint,
    Lock,
    /// Waiting to write the logical log while the server is blocked (`G`).
    LogWait,
}

impl State {
    /// The `onstat -u` wait letter (flags position 1) this state prints, if it waits.
    pub fn wait_letter(self) -> Option<char> {
        Some(match self {
            State::Idle | State::SlowFetch => 'Y',
            State::Mutex => 'S',
            State::Buffer => 'B',
            State::Checkpoint => 'C',
            State::Lock => 'L',
            State::LogWait => 'G',
            State::Running | State::Reading | State::Critical | State::Rollback => return None,
        })
    }

    /// A wait on the server (not on the client, not running).
    pub fn is_server_wait(self) -> bool {
        !matches!(self, State::Idle | State::SlowFetch) && self.wait_letter().is_some()
    }
}

/// Where a session with work in hand (no wait flag: running, reading, in a critical section,
/// rolling back) is at the instant the outputs are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dispatch {
    /// On a CPU VP.
    OnCpu,
    /// In the ready queue, waiting for a CPU VP.
    Ready,
    /// Waiting for a disk read.
    Io,
}

/// One client session at one second.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionTruth {
    pub sid: u64,
    pub state: State,
    /// The session it waits for directly, when its wait has a holder (a lock's owner, a
    /// buffer's, a mutex's, the critical section a checkpoint waits for, the oldest
    /// transaction the log waits for).
    pub blocker: Option<u64>,
    /// The end of the chain of blockers: a session that waits for no session.
    pub head: Option<u64>,
    /// Seconds it has been in its current wait, when it waits and the walk saw the wait begin
    /// (or the outputs say it: a client wait's `waited`). `None` for a wait already in
    /// progress when the walk began.
    pub wait_age: Option<u64>,
    /// The Send-Q of its connection (bytes).
    pub send_q: u64,
    /// In an open transaction.
    pub txn: bool,
    /// CPU seconds its threads use in this second (what `onstat -g cpu` adds up).
    pub cpu_s: f64,
    /// Its pool's memory in this second, total and used (what `onstat -g ses` prints).
    pub memory: (u64, u64),
    /// Where it is at the instant when it has work in hand (`None` when it waits or is idle):
    /// what its database time is spent on (on CPU, waiting for a CPU, I/O).
    pub dispatch: Option<Dispatch>,
    /// The client's address as `onstat -g ntt` prints it (`10.20.1.13`; `None` for a
    /// shared-memory connection).
    pub client: Option<String>,
    /// The table or index whose lock or buffer it waits for (`stores:'informix'.customer`).
    pub object: Option<&'static str>,
    /// The type of the lock it waits for, as `onstat -k` prints it (`HDR+X`).
    pub lock_type: Option<&'static str>,
    /// When its open transaction began (seconds), when it is in one.
    pub txn_began: Option<u64>,
    /// When it connected (demo seconds; below 0: before the demo began).
    pub connected_s: i64,
    /// Its slot: the rstcb and lock slots it has, which the next session on the slot takes
    /// after it leaves.
    pub slot: usize,
}

/// The incident's hot buffer: the object its page belongs to and whether that page moves on
/// (the last page of a table taking inserts) or stays (one index leaf everyone wants).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HotTruth {
    pub object: &'static str,
    pub moving: bool,
    /// The buffer's address in `onstat -X`.
    pub address: u64,
}

/// The oldest open transaction: whose, when it began, and how many logical logs it spans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnTruth {
    pub sid: u64,
    /// When it began (seconds).
    pub began: u64,
    /// Logs from the one its first record is in to the current one.
    pub logs_spanned: u64,
    pub rolling_back: bool,
}

/// The RSS secondary at one second.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaTruth {
    pub name: &'static str,
    /// Log pages written by the primary and not acknowledged by the secondary.
    pub lag_pages: u64,
    /// Log transmission to it is blocked (flow control).
    pub blocked: bool,
}

/// A mutex held at one second: its address, name, holder's sid and the sids waiting for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MutexTruth {
    pub address: u64,
    pub name: &'static str,
    pub holder: u64,
    pub waiters: Vec<u64>,
}

/// The whole instance at one second.
#[derive(Debug, Clone)]
pub struct Truth {
    pub t: u64,
    pub incident: Incident,
    /// The banner's `Blocked:` reason (`CKPT`, `LONGTX`).
    pub blocked: Option<&'static str>,
    pub sessions: BTreeMap<u64, SessionTruth>,
    pub mutexes: Vec<MutexTruth>,
    /// The incident's hot buffer, while one plays.
    pub hot: Option<HotTruth>,
    /// The oldest open transaction (by where its first log record is).
    pub oldest_txn: Option<TxnTruth>,
    /// The chunks whose device is slow now (on the LUN that turns slow, while it does), and
    /// the await its devices answer in (ms).
    pub slow_chunks: Vec<u32>,
    pub slow_await_ms: f64,
    pub replica: ReplicaTruth,
    /// `vm.zone_reclaim_mode`, and whether direct reclaim scans thousands of pages a second.
    pub zone_reclaim_mode: u32,
    pub direct_reclaim: bool,
    /// Logical logs used and not backed up, of all.
    pub logs_not_backed_up: (usize, usize),
}

impl Truth {
    pub fn session(&self, sid: u64) -> Option<&SessionTruth> {
        self.sessions.get(&sid)
    }

    /// Seconds the session has been in its current wait at this moment, when known.
    pub fn wait_age(&self, sid: u64) -> Option<u64> {
        self.sessions.get(&sid)?.wait_age
    }
}

/// What the walk keeps of a slot's last second: its session's sid and epoch, its activity, and
/// when that began.
type LastSecond = (u64, u64, Activity, Option<u64>);

/// Walks the demo forward one second at a time, keeping when each wait began.
pub struct TruthWalk<'a> {
    demo: &'a DemoInstance,
    t: u64,
    /// Per slot: the session on it (its sid and which of the slot's sessions it is), the
    /// activity of the last second and when it began. A new session on the slot, even one
    /// given the last one's sid, starts anew.
    last: Vec<Option<LastSecond>>,
    /// The walk's first second.
    from: u64,
}

impl<'a> TruthWalk<'a> {
    /// A walk whose first `next()` is second `from`. Waits in progress at `from` have no known
    /// start (other than client waits, whose outputs say how long they have waited): begin a
    /// few minutes before the moments to check.
    pub fn new(demo: &'a DemoInstance, from: u64) -> Self {
        TruthWalk {
            demo,
            t: from,
            from,
            last: vec![None; demo.pop.sessions.len()],
        }
    }

    /// The truth at the next second.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Truth {
        let t = self.t;
        self.t += 1;
        let world = World::at(&self.demo.pop, &self.demo.counters, t);
        // The walk's first second: a wait in progress began at some unknown time before.
        let first = self.t == self.from + 1;
        let mut began: Vec<Option<u64>> = Vec::with_capacity(world.sessions.len());
        for (i, sn) in world.sessions.iter().enumerate() {
            let tenant = world.tenants[i];
            let b = match sn.activity {
                // Waits that may predate time 0: kept as an age, below.
                Activity::Idle { .. } | Activity::SlowFetch { .. } => None,
                Activity::Running
                | Activity::Reading
                | Activity::Critical
                | Activity::Rollback { .. }
                | Activity::Gone => None,
                a => match self.last.get(i).copied().flatten() {
                    Some((sid, epoch, prev, since))
                        if prev == a && (sid, epoch) == (tenant.sid, tenant.epoch) =>
                    {
                        since
                    }
                    _ if first => None,
                    _ => Some(t),
                },
            };
            began.push(b);
        }
        for (i, sn) in world.sessions.iter().enumerate() {
            let tenant = world.tenants[i];
            if let Some(slot) = self.last.get_mut(i) {
                *slot = Some((tenant.sid, tenant.epoch, sn.activity, began[i]));
            }
        }
        let ages: Vec<Option<u64>> = world
            .sessions
            .iter()
            .zip(&began)
            .map(|(sn, b)| match sn.activity {
                Activity::Idle { waited } | Activity::SlowFetch { waited } => Some(waited),
                _ => b.map(|b| t.saturating_sub(b)),
            })
            .collect();
        truth_of(&world, &ages)
    }
}

fn state_of(a: Activity) -> State {
    match a {
        Activity::Idle { .. } => State::Idle,
        Activity::SlowFetch { .. } => State::SlowFetch,
        Activity::Running => State::Running,
        Activity::Reading => State::Reading,
        Activity::Critical => State::Critical,
        Activity::Rollback { .. } => State::Rollback,
        Activity::Mutex { .. } => State::Mutex,
        Activity::Buffer { .. } => State::Buffer,
        Activity::Checkpoint => State::Checkpoint,
        Activity::Lock { .. } => State::Lock,
        Activity::LogWait => State::LogWait,
        // Not asked: an empty slot has no session.
        Activity::Gone => State::Idle,
    }
}

fn holder_sid(world: &World<'_>, h: Holder) -> u64 {
    match h {
        Holder::Session(i) => world.sid(i),
        Holder::Daemon(i) => world.pop.daemons.get(i).map_or(0, |d| d.sid),
    }
}

fn truth_of(world: &World<'_>, ages: &[Option<u64>]) -> Truth {
    let pop = world.pop;
    let sid = |i: usize| world.sid(i);
    let (p2, p8) = world.buffers();
    let buffer_owner: BTreeMap<u64, u64> = p2
        .iter()
        .chain(&p8)
        .filter(|b| b.owner != 0 && b.owner != u64::MAX)
        .map(|b| (b.address, b.owner))
        .collect();
    // The threads of this second: a slot's rstcb is whichever session is on it now.
    let sid_of_rstcb: BTreeMap<u64, u64> = pop
        .sessions
        .iter()
        .filter(|s| world.present(s.idx))
        .map(|s| (s.rstcb, sid(s.idx)))
        .collect();
    let lock_owner: BTreeMap<u64, u64> = world
        .locks()
        .iter()
        .filter_map(|l| Some((l.address, *sid_of_rstcb.get(&l.owner)?)))
        .collect();
    let in_critical: Vec<u64> = world
        .sessions
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s.activity, Activity::Critical))
        .map(|(i, _)| sid(i))
        .collect();
    let mutexes: Vec<MutexTruth> = world
        .mutexes
        .iter()
        .map(|m| MutexTruth {
            address: pop.layout.mutex + m.which * MUTEX_SIZE,
            name: MUTEXES[m.which as usize % MUTEXES.len()],
            holder: holder_sid(world, m.holder),
            waiters: m.waiters.iter().map(|&(i, _)| sid(i)).collect(),
        })
        .collect();
    let mut sessions: BTreeMap<u64, SessionTruth> = BTreeMap::new();
    let cpu = world.cpu_use();
    let hot = hot_of(world);
    // The table and type of every lock someone waits for, by the lock's address.
    let lock_objects: BTreeMap<u64, (&'static str, &'static str)> = if world
        .sessions
        .iter()
        .any(|s| matches!(s.activity, Activity::Lock { .. }))
    {
        world
            .locks()
            .iter()
            .filter_map(|l| {
                let name = schema::PARTITIONS
                    .iter()
                    .find(|p| p.partnum == l.partnum)?
                    .name;
                Some((l.address, (name, l.kind)))
            })
            .collect()
    } else {
        BTreeMap::new()
    };
    for (i, sn) in world.sessions.iter().enumerate() {
        if !world.present(i) {
            continue;
        }
        let blocker = match sn.activity {
            Activity::Lock { lock } => lock_owner.get(&lock).copied(),
            Activity::Buffer { buf } => buffer_owner
                .get(&buf)
                .and_then(|r| sid_of_rstcb.get(r))
                .copied(),
            Activity::Mutex { which } => world
                .mutexes
                .iter()
                .find(|m| m.which == which)
                .map(|m| holder_sid(world, m.holder)),
            // In CKPT REQ the checkpoint waits for the critical section; in CKPT INP for
            // nobody: it is flushing.
            Activity::Checkpoint => in_critical.first().copied(),
            // The logs wait for the oldest transaction, rolling back.
            Activity::LogWait if LONG_TXN < pop.sessions.len() => Some(sid(LONG_TXN)),
            _ => None,
        };
        let tenant = world.tenants[i];
        sessions.insert(
            sid(i),
            SessionTruth {
                sid: sid(i),
                state: state_of(sn.activity),
                blocker,
                head: None,
                wait_age: ages.get(i).copied().flatten(),
                send_q: sn.send_q,
                txn: sn.txn,
                cpu_s: cpu.get(i).copied().unwrap_or(0.0),
                memory: super::onstat::session_memory(&pop.sessions[i], world.now.t),
                dispatch: world.dispatch.get(i).copied().flatten().map(|d| match d {
                    super::moment::Dispatch::OnCpu(_) => Dispatch::OnCpu,
                    super::moment::Dispatch::Ready => Dispatch::Ready,
                    super::moment::Dispatch::Io => Dispatch::Io,
                }),
                client: client_address(world.client(i).1),
                object: match sn.activity {
                    Activity::Lock { lock } => lock_objects.get(&lock).map(|(o, _)| *o),
                    Activity::Buffer { buf } => {
                        hot.as_ref().filter(|h| h.address == buf).map(|h| h.object)
                    }
                    _ => None,
                },
                lock_type: match sn.activity {
                    Activity::Lock { lock } => lock_objects.get(&lock).map(|(_, k)| *k),
                    _ => None,
                },
                txn_began: sn.txn.then(|| world.txn_began(i)),
                connected_s: tenant.since,
                slot: i,
            },
        );
    }
    // Heads: follow the blockers to a session that waits for nobody.
    let blockers: BTreeMap<u64, u64> = sessions
        .values()
        .filter_map(|s| Some((s.sid, s.blocker?)))
        .collect();
    for s in sessions.values_mut() {
        let Some(mut at) = s.blocker else {
            continue;
        };
        let mut steps = 0;
        while let Some(&next) = blockers.get(&at) {
            at = next;
            steps += 1;
            if steps > blockers.len() {
                break;
            }
        }
        s.head = Some(at);
    }
    let t = world.now.t;
    let rss = ha::rss_state(t);
    let files = logs::files(world.counters, t as i64, None);
    let slow = disk::slowness(t) > 0.0;
    Truth {
        t,
        incident: world.now.incident(),
        blocked: world.blocked(),
        oldest_txn: oldest_txn(world),
        sessions,
        mutexes,
        hot,
        slow_chunks: if slow {
            disk::slow_chunks()
        } else {
            Vec::new()
        },
        slow_await_ms: disk::slow_await_ms(t),
        replica: ReplicaTruth {
            name: ha::RSS_NAME,
            lag_pages: rss.current.saturating_sub(rss.acked),
            blocked: rss.blocked,
        },
        zone_reclaim_mode: super::os::ZONE_RECLAIM_MODE.trim().parse().unwrap_or(0),
        direct_reclaim: matches!(
            world.now.incident(),
            Incident::CheckpointRequested | Incident::CheckpointInProgress
        ),
        logs_not_backed_up: (
            files
                .iter()
                .filter(|f| f.flags[0] == b'U' && f.flags[2] != b'B')
                .count(),
            files.len(),
        ),
    }
}

/// The client's address as `onstat -g ntt` prints it, without the port.
fn client_address(link: super::instance::Link) -> Option<String> {
    let mut a = String::new();
    super::onstat::ntt_address_into(&mut super::text::Rows::new(&mut a), link);
    a.split('|')
        .next()
        .filter(|h| !h.is_empty())
        .map(str::to_string)
}

/// The hot buffer of the incident playing, as `World` places it.
fn hot_of(world: &World<'_>) -> Option<HotTruth> {
    let pop = world.pop;
    let (object, moving, pool8k, (chunk, page)) = match world.now.incident() {
        Incident::InsertHotSpot => (
            schema::ORDER_LOG,
            true,
            false,
            pop.order_log_last_page(&world.now),
        ),
        Incident::NullIndexLeaf => (schema::IX_SHIP_DATE, false, true, pop.null_leaf_page()),
        _ => return None,
    };
    let (address, _) = pop.buffer_address(pool8k, chunk, page);
    Some(HotTruth {
        object,
        moving,
        address,
    })
}

/// The open transaction whose first log record is the oldest (as `onstat -x` prints where each
/// began: the log's position at the end of the second before it began).
fn oldest_txn(world: &World<'_>) -> Option<TxnTruth> {
    let c = world.counters;
    let t = world.now.t;
    let (i, began, pos) = world
        .sessions
        .iter()
        .enumerate()
        .filter(|(_, s)| s.txn)
        .map(|(i, _)| {
            let began = world.txn_began(i);
            (i, began, logs::pos_at(c, began as i64 - 1))
        })
        .min_by_key(|(i, _, pos)| (*pos, *i))?;
    let current = logs::pos_at(c, t as i64);
    Some(TxnTruth {
        sid: world.sid(i),
        began,
        logs_spanned: current.uniq.saturating_sub(pos.uniq) + 1,
        rolling_back: matches!(world.sessions[i].activity, Activity::Rollback { .. }),
    })
}

/// The incident playing at `t` seconds.
pub fn incident_at(t: u64) -> Incident {
    timeline::now(t).incident()
}
