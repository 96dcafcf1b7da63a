//! The demo's ground truth: at each second, what every client session is doing, whom it waits
//! for directly and at the head of its chain, since when it has been in that wait, and who holds
//! each mutex. Read from the same `World` the printers print, so a test can hold every answer
//! ifxtop gives against what was true at the moment its data was taken.

use super::instance::LONG_TXN;
use super::moment::{Activity, Holder, World, MUTEXES, MUTEX_SIZE};
use super::timeline::{self, Incident};
use super::DemoInstance;
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
    /// When it connected (demo seconds; below 0: before the demo began).
    pub connected_s: i64,
    /// Its slot: the rstcb and lock slots it has, which the next session on the slot takes
    /// after it leaves.
    pub slot: usize,
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
    Truth {
        t: world.now.t,
        incident: world.now.incident(),
        blocked: world.blocked(),
        sessions,
        mutexes,
    }
}

/// The incident playing at `t` seconds.
pub fn incident_at(t: u64) -> Incident {
    timeline::now(t).incident()
}
