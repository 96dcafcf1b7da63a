//! Waiting threads joined to what they wait on: conditions, locks, buffers, latches.

use crate::extents::{ExtentMap, Lookup};
use crate::format::human_bytes;
use crate::ids::{Addr, Sid};
use crate::model::chains;
use crate::parsers::onstat_g_con::{Condition, OnstatGCon};
use crate::parsers::onstat_k::{Lock, OnstatK};
use crate::parsers::onstat_u::{Flags, OnstatU, UserThread, WaitReason};
use crate::parsers::onstat_x::OnstatX;
use crate::parsers::sockets::Endpoint;
use crate::parsers::systabnames::Systabnames;
use crate::store::sockets::SocketRow;
use compact_str::CompactString;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::borrow::Cow;
use std::fmt::Write as _;

/// What a waiter waits on, joined from the other sources.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WaitTarget {
    /// A condition from `onstat -g con` (`netnorm`, `sm_read`, ...).
    Condition {
        address: Addr,
        name: Option<CompactString>,
        /// Seconds, as `onstat -g con` reports it.
        waittime: Option<u64>,
    },
    /// A lock from `onstat -k`.
    Lock {
        address: Addr,
        #[serde(rename = "type")]
        lock_type: Option<CompactString>,
        partnum: Option<u64>,
        /// The table, when the partnum resolves.
        object: Option<String>,
        owner: Option<Addr>,
        /// The lock at its address in this moment's `onstat -k` does not show this wait (its
        /// holder waits for it, or it names no such waiter): the two outputs were printed an
        /// instant apart and it changed hands, or its slot holds another lock. Nothing of it is
        /// joined.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        out_of_step: bool,
    },
    /// A buffer from `onstat -X` whose waiter list holds this thread.
    Buffer {
        address: Addr,
        chunk: u32,
        page: u64,
        /// Table or index from the extent map; `None` when the page did not resolve.
        object: Option<String>,
        owner: Option<Addr>,
    },
    /// A mutex or latch (`onstat -g lmx`/`-g wmx`, `onstat -s`): its name and the thread
    /// holding it, where those say.
    Latch {
        address: Addr,
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<CompactString>,
        /// The holder's `onstat -u` address (the blocker).
        #[serde(skip_serializing_if = "Option::is_none")]
        owner: Option<Addr>,
    },
    /// Anything else (checkpoint, log buffer, transaction, rollback), with the address if any.
    Other { address: Option<Addr> },
}

impl WaitTarget {
    /// The thread holding what is waited on, where the sources say.
    pub fn owner(&self) -> Option<Addr> {
        match self {
            WaitTarget::Lock { owner, .. }
            | WaitTarget::Buffer { owner, .. }
            | WaitTarget::Latch { owner, .. } => owner.filter(|o| o.0 != u64::MAX),
            _ => None,
        }
    }

    /// The Waiters list's short form: the table or index name before its database
    /// (`HDR+X on customer (stores)`), so a narrow column still shows what is locked. The full
    /// `db:'owner'.name` is in the verdict and on the session screen.
    pub fn describe_short(&self) -> String {
        let mut out = String::new();
        self.write_short(&mut out);
        out
    }

    /// [`Self::describe_short`] written at the end of `out`.
    pub(crate) fn write_short(&self, out: &mut String) {
        let short = |out: &mut String, o: &str| match crate::parsers::oncheck_pe::split_object(o) {
            Some(n) => {
                let _ = write!(out, "{} ({})", n.name, n.database);
            }
            None => out.push_str(o),
        };
        match self {
            WaitTarget::Lock {
                lock_type: Some(t),
                object: Some(o),
                ..
            } => {
                let _ = write!(out, "{t} on ");
                short(out, o);
            }
            WaitTarget::Buffer {
                chunk,
                page,
                object: Some(o),
                ..
            } => {
                short(out, o);
                let _ = write!(out, " {chunk}:{page}");
            }
            other => other.write_long(out),
        }
    }

    /// What the Waiters list sorts WAITING ON by, with no text built for it: the name of what
    /// is waited on (table or index, condition, mutex; empty when unknown), then where it is (an
    /// address, a buffer's chunk and page), so the waits on one object sit together.
    pub fn sort_parts(&self) -> (&str, f64) {
        let at = |a: &Addr| a.0 as f64;
        match self {
            WaitTarget::Condition { address, name, .. } => {
                (name.as_deref().unwrap_or(""), at(address))
            }
            WaitTarget::Lock {
                address, object, ..
            } => (object.as_deref().unwrap_or(""), at(address)),
            WaitTarget::Buffer {
                chunk,
                page,
                object,
                ..
            } => (
                object.as_deref().unwrap_or(""),
                f64::from(*chunk) * 4_294_967_296.0 + *page as f64,
            ),
            WaitTarget::Latch { address, name, .. } => (name.as_deref().unwrap_or(""), at(address)),
            WaitTarget::Other { address } => ("", address.as_ref().map_or(0.0, at)),
        }
    }

    /// One line for the Waiters pane.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        self.write_long(&mut out);
        out
    }

    /// [`Self::describe`] written at the end of `out`.
    fn write_long(&self, out: &mut String) {
        let _ = match self {
            WaitTarget::Condition { address, name, .. } => match name {
                Some(n) => {
                    out.push_str(n);
                    Ok(())
                }
                None => write!(out, "cond {address}"),
            },
            WaitTarget::Lock {
                address,
                lock_type,
                object,
                partnum,
                ..
            } => {
                // What is locked first (a narrow column shows that), the address last.
                match (lock_type, object, partnum) {
                    (Some(t), Some(o), _) => write!(out, "{t} on {o} (lock {address})"),
                    (Some(t), None, Some(p)) => {
                        write!(out, "{t} on partnum {p:x} (lock {address})")
                    }
                    (None, Some(o), _) => write!(out, "lock on {o} ({address})"),
                    (None, None, Some(p)) => write!(out, "lock on partnum {p:x} ({address})"),
                    (Some(t), None, None) => write!(out, "{t} lock {address}"),
                    (None, None, None) => write!(out, "lock {address}"),
                }
            }
            WaitTarget::Buffer {
                chunk,
                page,
                object,
                ..
            } => match object {
                Some(o) => write!(out, "{o} ({chunk}:{page})"),
                None => write!(out, "buffer {chunk}:{page}"),
            },
            WaitTarget::Latch {
                name: Some(n),
                address,
                ..
            } => write!(out, "mutex {n} ({address})"),
            WaitTarget::Latch { address, .. } => write!(out, "mutex {address}"),
            WaitTarget::Other { address } => match address {
                Some(a) => write!(out, "{a}"),
                None => Ok(()),
            },
        };
    }
}

/// Index of the sources a waiter is joined against, built once per snapshot.
#[derive(Debug, Default)]
pub(crate) struct WaitIndex<'a> {
    /// Condition name and, when `onstat -g con` is of this moment, how long it has waited.
    conditions: ConditionIndex<'a>,
    /// Mutex names seen before (a name does not change at an address): names a mutex wait
    /// when this moment's `onstat -g lmx` was not read.
    mutex_names: Option<&'a FxHashMap<Addr, CompactString>>,
    /// Condition names seen before, for a condition the latest `onstat -g con` does not list.
    condition_names: Option<&'a FxHashMap<Addr, CompactString>>,
    /// Waiting thread (rstcb) → the buffer whose waiter list holds it.
    buffers: FxHashMap<Addr, BufferRef>,
    /// Buffer header address → buffer, for a `B` waiter whose `onstat -u` wait column names the
    /// buffer but whom the (less often polled) `onstat -X` does not list as a waiter yet.
    buffers_by_address: FxHashMap<Addr, BufferRef>,
    locks: LockIndex<'a>,
    tables: Option<&'a Systabnames>,
    /// Mutexes and latches by their address, and by the threads their waiter lists name.
    latches: FxHashMap<Addr, LatchRef<'a>>,
    latch_waiters: FxHashMap<Addr, LatchRef<'a>>,
    /// What each waiting thread of the `onstat -u` waits on (its reason and wait address): a
    /// holder another output names must not be waiting for the very thing it holds.
    waits: ByAddress<'a, (WaitReason, Addr)>,
    /// Some thread of the `onstat -u` waits on an address (the holders are checked against it).
    any_waits: bool,
}

/// A value of each thread of an `onstat -u`, by the thread's address. `onstat -u` lists its
/// threads in address order: then a binary search in its list finds one, with no table built
/// each second for the few holders asked about; threads out of order (or an address twice) are
/// put in a map, the later of two threads at one address kept. The same answers either way.
#[derive(Debug)]
pub(crate) struct ByAddress<'a, V> {
    /// The threads, when in strictly increasing address order (else empty).
    in_order: &'a [UserThread],
    /// Otherwise: each thread's value, by its address.
    map: FxHashMap<Addr, V>,
    value: fn(&UserThread) -> Option<V>,
    /// Where the last lookup in `in_order` ended.
    at: std::cell::Cell<usize>,
}

impl<V> Default for ByAddress<'_, V> {
    fn default() -> Self {
        ByAddress {
            in_order: &[],
            map: FxHashMap::default(),
            value: |_| None,
            at: Default::default(),
        }
    }
}

impl<'a, V: Copy> ByAddress<'a, V> {
    /// `value` of each of `threads` that has one, by address.
    pub(crate) fn new(threads: &'a [UserThread], value: fn(&UserThread) -> Option<V>) -> Self {
        if threads.windows(2).all(|w| w[0].address < w[1].address) {
            return ByAddress {
                in_order: threads,
                map: FxHashMap::default(),
                value,
                at: Default::default(),
            };
        }
        ByAddress {
            in_order: &[],
            map: threads
                .iter()
                .filter_map(|t| Some((t.address, value(t)?)))
                .collect(),
            value,
            at: Default::default(),
        }
    }

    /// `value` of each of `threads` by address, as [`Self::new`] makes it; when `threads` is the
    /// very list this one was made of and found in order, with no second pass over thousands
    /// of threads to check their order.
    pub(crate) fn of_same<'b, W: Copy>(
        &self,
        threads: &'b [UserThread],
        value: fn(&UserThread) -> Option<W>,
    ) -> ByAddress<'b, W> {
        if threads.is_empty() || !std::ptr::eq(threads, self.in_order) {
            return ByAddress::new(threads, value);
        }
        ByAddress {
            in_order: threads,
            map: FxHashMap::default(),
            value,
            at: Default::default(),
        }
    }

    /// The threads are in strictly increasing address order (each address once).
    pub(crate) fn in_order(&self) -> bool {
        !self.in_order.is_empty()
    }

    /// The value of the thread at `address`. Threads asked in address order are found a few
    /// places on from the last one found; others by a binary search.
    pub(crate) fn get(&self, address: Addr) -> Option<V> {
        if self.in_order.is_empty() {
            return self.map.get(&address).copied();
        }
        let list = self.in_order;
        let at = self.at.get();
        let ahead = list.get(at..).unwrap_or_default();
        let i = match ahead.iter().take(4).position(|t| t.address >= address) {
            Some(i) if ahead[i].address == address => at + i,
            _ => list.binary_search_by_key(&address, |t| t.address).ok()?,
        };
        self.at.set(i + 1);
        (self.value)(list.get(i)?)
    }
}

/// `onstat -g con`'s conditions by address. It lists them in its waiting threads' order, as
/// `onstat -u` lists the threads, so their addresses usually rise: then the list itself is
/// searched from where the last lookup ended (the waiters are joined in that order too), with no
/// table built each second. A list out of order (or with an address twice) is put in a map, the
/// first of one address kept. The same answers either way.
#[derive(Debug, Default)]
struct ConditionIndex<'a> {
    /// The conditions, when in strictly increasing address order (else empty).
    in_order: &'a [Condition],
    /// Otherwise: the place in `list` of the first condition at each address.
    map: FxHashMap<Addr, u32>,
    list: &'a [Condition],
    /// `onstat -g con` was read at this moment: its wait times count.
    now: bool,
    /// Where the last lookup in `in_order` ended.
    at: std::cell::Cell<usize>,
}

impl<'a> ConditionIndex<'a> {
    fn new(con: Option<&'a OnstatGCon>, now: bool) -> Self {
        let Some(con) = con else {
            return ConditionIndex::default();
        };
        let list = con.conditions.as_slice();
        let mut index = ConditionIndex {
            list,
            now,
            ..ConditionIndex::default()
        };
        if list.windows(2).all(|w| w[0].addr < w[1].addr) {
            index.in_order = list;
        } else {
            index.map.reserve(list.len());
            for (place, c) in (0u32..).zip(list) {
                index.map.entry(c.addr).or_insert(place);
            }
        }
        index
    }

    /// The name of the condition at `address`, and how long it has waited when read at this
    /// moment. The name as the parser keeps it: a copy of it is a copy of its bytes (inline),
    /// where one made from a `&str` is measured and checked again for each of thousands of
    /// condition waiters a second.
    fn get(&self, address: Addr) -> Option<(&'a CompactString, Option<u64>)> {
        let c = if self.in_order.is_empty() {
            self.list.get(*self.map.get(&address)? as usize)?
        } else {
            self.in_order_at(address)?
        };
        Some((&c.name, self.now.then_some(c.waittime)))
    }

    fn in_order_at(&self, address: Addr) -> Option<&'a Condition> {
        let list = self.in_order;
        let at = self.at.get();
        let ahead = list.get(at..).unwrap_or_default();
        let i = match ahead.iter().take(4).position(|c| c.addr >= address) {
            Some(i) if ahead[i].addr == address => at + i,
            _ => list.binary_search_by_key(&address, |c| c.addr).ok()?,
        };
        self.at.set(i + 1);
        list.get(i)
    }
}

/// The locks of `onstat -k` by address, for the lock waiters of the `onstat -u`: of the
/// thousands of locks a busy server holds, only those the waiters wait for are looked for, in
/// one pass (the later of two locks at one address, as a map keeps it). An address no waiter
/// named is looked for in the list itself.
#[derive(Debug, Default)]
struct LockIndex<'a> {
    locks: &'a [Lock],
    /// The addresses the lock waiters wait for, in order, each with 1 + the place of its lock
    /// in `locks` (0: not there).
    wanted: Vec<(u64, u32)>,
}

impl<'a> LockIndex<'a> {
    fn new(k: Option<&'a OnstatK>, u: Option<&OnstatU>) -> Self {
        let Some(k) = k else {
            return LockIndex::default();
        };
        let mut wanted: Vec<(u64, u32)> = u
            .map(|u| {
                u.threads
                    .iter()
                    .filter(|t| t.wait_reason == Some(WaitReason::Lock))
                    .map(|t| (t.wait.unwrap_or_default().0, 0))
                    .collect()
            })
            .unwrap_or_default();
        crate::ids::sort_pairs(&mut wanted);
        wanted.dedup_by_key(|p| p.0);
        if !wanted.is_empty() {
            for (place, l) in (1u32..).zip(&k.locks) {
                if let Ok(i) = wanted.binary_search_by_key(&l.address.0, |p| p.0) {
                    wanted[i].1 = place;
                }
            }
        }
        LockIndex {
            locks: &k.locks,
            wanted,
        }
    }

    fn get(&self, address: Addr) -> Option<&'a Lock> {
        match self.wanted.binary_search_by_key(&address.0, |p| p.0) {
            Ok(i) => match self.wanted[i].1 {
                0 => None,
                place => self.locks.get(place as usize - 1),
            },
            Err(_) => self.locks.iter().rev().find(|l| l.address == address),
        }
    }
}

/// The `onstat -u` address (rstcb) of a few thread ids, by `onstat -g ath`: it lists every
/// thread (thousands), and the mutexes and the engine's blocker graph name a few, so only those
/// asked for are kept: each found by a binary search in its list, in tid order as it prints
/// it; else in one pass over it (the later of two lines of one tid, as a map keeps it).
pub(crate) struct Rstcbs {
    /// The tids asked for, in order, each with 1 + the place of its rstcb in `rstcbs` (0: none).
    tids: Vec<(u64, u32)>,
    rstcbs: Vec<Addr>,
}

impl Rstcbs {
    pub(crate) fn new(
        ath: Option<&crate::parsers::onstat_g_ath::OnstatGAth>,
        tids: impl Iterator<Item = crate::ids::Tid>,
    ) -> Self {
        let mut asked: Vec<(u64, u32)> = tids.map(|t| (t.0, 0)).collect();
        crate::ids::sort_pairs(&mut asked);
        asked.dedup_by_key(|p| p.0);
        let mut rstcbs = Vec::new();
        let Some(ath) = ath.filter(|_| !asked.is_empty()) else {
            return Rstcbs {
                tids: asked,
                rstcbs,
            };
        };
        if ath.threads.windows(2).all(|w| w[0].tid < w[1].tid) {
            // It lists its threads in tid order, each once: a binary search finds each of the
            // few asked for.
            for (tid, place) in asked.iter_mut() {
                let Ok(i) = ath.threads.binary_search_by_key(&*tid, |t| t.tid.0) else {
                    continue;
                };
                if let Some(r) = ath.threads[i].rstcb {
                    rstcbs.push(r);
                    *place = rstcbs.len() as u32;
                }
            }
        } else {
            for t in &ath.threads {
                let Some(r) = t.rstcb else { continue };
                if let Ok(i) = asked.binary_search_by_key(&t.tid.0, |p| p.0) {
                    rstcbs.push(r);
                    asked[i].1 = rstcbs.len() as u32;
                }
            }
        }
        Rstcbs {
            tids: asked,
            rstcbs,
        }
    }

    pub(crate) fn get(&self, tid: crate::ids::Tid) -> Option<Addr> {
        let i = self.tids.binary_search_by_key(&tid.0, |p| p.0).ok()?;
        match self.tids[i].1 {
            0 => None,
            place => self.rstcbs.get(place as usize - 1).copied(),
        }
    }
}

/// A mutex or latch: its name and its holder's `onstat -u` address.
#[derive(Debug, Clone, Copy)]
struct LatchRef<'a> {
    address: Addr,
    name: &'a str,
    holder: Option<Addr>,
}

/// What the mutex and latch sources give the waiter join: `onstat -g lmx`/`-g wmx` (holders and
/// waiters by thread id, turned into `onstat -u` addresses through `onstat -g ath`) and
/// `onstat -s` (latches with their holder's address).
pub(crate) struct LatchSources<'a> {
    pub(crate) lmx: Option<&'a crate::parsers::onstat_g_lmx::OnstatGLmx>,
    pub(crate) wmx: Option<&'a crate::parsers::onstat_g_lmx::OnstatGLmx>,
    pub(crate) latches: Option<&'a crate::parsers::onstat_s::OnstatS>,
    pub(crate) ath: Option<&'a crate::parsers::onstat_g_ath::OnstatGAth>,
}

#[derive(Debug, Clone, Copy)]
struct BufferRef {
    address: Addr,
    chunk: u32,
    page: u64,
    owner: Option<Addr>,
}

impl<'a> WaitIndex<'a> {
    /// `con` gives condition names (and their waits' ages when `con_now`: read at this moment);
    /// `x` the buffers, their holders and waiters, read at this moment.
    pub(crate) fn new(con: Option<&'a OnstatGCon>, con_now: bool, x: Option<&'a OnstatX>) -> Self {
        let mut idx = WaitIndex {
            conditions: ConditionIndex::new(con, con_now),
            ..WaitIndex::default()
        };
        if let Some(x) = x {
            for b in x.pools.iter().flat_map(|p| &p.buffers) {
                let r = BufferRef {
                    address: b.address,
                    chunk: b.chunk,
                    page: b.page,
                    owner: b.owner,
                };
                idx.buffers_by_address.insert(b.address, r);
                for w in &b.waiters {
                    idx.buffers.insert(*w, r);
                }
            }
        }
        idx
    }

    /// Adds `onstat -k` (a lock waiter's wait address is a lock address; `u`'s lock waiters are
    /// the ones asked about) and the partnum → table names from `sysmaster:systabnames`, when
    /// collected.
    pub(crate) fn with_locks(
        mut self,
        k: Option<&'a OnstatK>,
        tables: Option<&'a Systabnames>,
        u: Option<&OnstatU>,
    ) -> Self {
        self.locks = LockIndex::new(k, u);
        self.tables = tables;
        self
    }

    /// Adds the mutexes and latches: an S waiter's mutex by name, and its holder as blocker.
    pub(crate) fn with_latches(mut self, src: &LatchSources<'a>) -> Self {
        let mutexes = || {
            src.lmx
                .iter()
                .chain(src.wmx.iter())
                .flat_map(|x| &x.mutexes)
        };
        let rstcb_of = Rstcbs::new(
            src.ath,
            mutexes().flat_map(|m| m.holder.into_iter().chain(m.waiters.iter().map(|w| w.tid))),
        );
        for m in mutexes() {
            let r = LatchRef {
                address: m.addr,
                name: m.name.as_str(),
                holder: m.holder.and_then(|t| rstcb_of.get(t)),
            };
            // -g lmx knows the holder, -g wmx may not: keep the one that does.
            let e = self.latches.entry(m.addr).or_insert(r);
            if e.holder.is_none() {
                *e = r;
            }
            for w in &m.waiters {
                if let Some(a) = rstcb_of.get(w.tid) {
                    let e = self.latch_waiters.entry(a).or_insert(r);
                    if e.holder.is_none() {
                        *e = r;
                    }
                }
            }
        }
        for l in src.latches.iter().flat_map(|s| &s.latches) {
            self.latches.entry(l.address).or_insert(LatchRef {
                address: l.address,
                name: l.name.as_str(),
                holder: l.userthread,
            });
        }
        self
    }

    /// Adds what the threads of the `onstat -u` wait on, to check the holders the other
    /// outputs name against it.
    pub(crate) fn with_waits(mut self, u: Option<&'a OnstatU>) -> Self {
        if let Some(u) = u {
            self.waits = ByAddress::new(&u.threads, |t| Some((t.wait_reason?, t.wait?)));
            self.any_waits = u
                .threads
                .iter()
                .any(|t| t.wait_reason.is_some() && t.wait.is_some());
        }
        self
    }

    /// The thread `holder` is itself waiting (in the `onstat -u`) on `address` for `reason`:
    /// the output naming it as the holder was printed at another instant.
    fn holder_waits_on(&self, holder: Addr, reason: WaitReason, address: Addr) -> bool {
        self.waits.get(holder) == Some((reason, address))
    }

    /// The lock `l` as `onstat -k` shows it is the one `onstat -u`'s waiters wait for: its
    /// holder is not one of them, and its first waiter (`wtlist`) is one.
    fn lock_in_step(&self, l: &Lock) -> bool {
        let waits_here = |t: Addr| self.holder_waits_on(t, WaitReason::Lock, l.address);
        !waits_here(l.owner) && l.wtlist.is_some_and(waits_here)
    }

    /// Mutex names seen before, for the mutex waits this moment's `onstat -g lmx` does not
    /// explain.
    pub(crate) fn with_mutex_names(mut self, names: &'a FxHashMap<Addr, CompactString>) -> Self {
        self.mutex_names = Some(names);
        self
    }

    /// Condition names seen before, for the condition waits the latest `onstat -g con` does
    /// not list.
    pub(crate) fn with_condition_names(
        mut self,
        names: &'a FxHashMap<Addr, CompactString>,
    ) -> Self {
        self.condition_names = Some(names);
        self
    }

    /// The session of each of `threads` by address (the `onstat -u` the waits were given
    /// from: its order is known).
    pub(crate) fn sessions_by_address<'b>(&self, threads: &'b [UserThread]) -> ByAddress<'b, Sid> {
        self.waits.of_same(threads, |t| Some(t.sessid))
    }

    /// The table a partnum names, when systabnames was read.
    pub(crate) fn table(&self, partnum: u64) -> Option<&'a str> {
        self.tables.and_then(|t| t.table(partnum))
    }

    /// Joins one waiting thread to what it waits on.
    pub(crate) fn target(
        &self,
        th: &UserThread,
        reason: WaitReason,
        extents: Option<&ExtentMap>,
        base_page_kb: u32,
    ) -> WaitTarget {
        match reason {
            WaitReason::Condition => {
                let address = th.wait.unwrap_or_default();
                let hit = self.conditions.get(address);
                WaitTarget::Condition {
                    address,
                    name: hit
                        .map(|(n, _)| n.clone())
                        .or_else(|| self.condition_names.and_then(|n| n.get(&address)).cloned()),
                    waittime: hit.and_then(|(_, w)| w),
                }
            }
            WaitReason::Buffer => match self.buffers.get(&th.address).or_else(|| {
                th.wait
                    .and_then(|a| self.buffers_by_address.get(&a))
                    // Its own buffer is no wait on itself.
                    .filter(|b| b.owner != Some(th.address))
            }) {
                Some(b) => WaitTarget::Buffer {
                    address: b.address,
                    chunk: b.chunk,
                    page: b.page,
                    object: extents.and_then(|m| match m.lookup(b.chunk, b.page, base_page_kb) {
                        Lookup::Resolved(hit) => Some(hit.object.description.to_string()),
                        _ => None,
                    }),
                    // A holder that waits for this very buffer in the onstat -u was named by
                    // an onstat -X printed at another instant.
                    owner: b
                        .owner
                        .filter(|o| !self.holder_waits_on(*o, WaitReason::Buffer, b.address)),
                },
                None => WaitTarget::Other { address: th.wait },
            },
            WaitReason::Lock => {
                let address = th.wait.unwrap_or_default();
                let unknown = |out_of_step| WaitTarget::Lock {
                    address,
                    lock_type: None,
                    partnum: None,
                    object: None,
                    owner: None,
                    out_of_step,
                };
                match self.locks.get(address) {
                    // Checked against the onstat -u only when its waits were given.
                    Some(l) if self.any_waits && !self.lock_in_step(l) => unknown(true),
                    Some(l) => WaitTarget::Lock {
                        address,
                        lock_type: Some(l.lock_type.clone()),
                        partnum: Some(l.tblsnum),
                        object: self.table(l.tblsnum).map(String::from),
                        owner: l.owner.non_zero(),
                        out_of_step: false,
                    },
                    None => unknown(false),
                }
            }
            WaitReason::Mutex => {
                let address = th.wait.unwrap_or_default();
                let hit = self
                    .latch_waiters
                    .get(&th.address)
                    .or_else(|| self.latches.get(&address));
                let address = hit.map_or(address, |l| l.address);
                WaitTarget::Latch {
                    address,
                    name: hit
                        .map(|l| CompactString::from(l.name))
                        .or_else(|| self.mutex_names.and_then(|n| n.get(&address)).cloned()),
                    // Its own mutex is no wait on itself; a holder that waits for this very
                    // mutex in the onstat -u was named by an output of another instant.
                    owner: hit.and_then(|l| l.holder).filter(|h| {
                        *h != th.address && !self.holder_waits_on(*h, WaitReason::Mutex, address)
                    }),
                }
            }
            _ => WaitTarget::Other { address: th.wait },
        }
    }
}

/// Describes the flags in words, for the session screen.
pub(crate) fn flags_in_words(flags: &Flags) -> Vec<&'static str> {
    let mut v = Vec::new();
    if flags.is_defunct() {
        v.push("defunct");
        return v;
    }
    if let Some(r) = flags.wait_reason() {
        v.push(match r {
            WaitReason::Buffer => "waiting for a buffer",
            WaitReason::Checkpoint => "waiting for a checkpoint",
            WaitReason::LogBuffer => "waiting for a logical-log buffer write",
            WaitReason::Lock => "waiting for a lock",
            WaitReason::Mutex => "waiting for a mutex",
            WaitReason::Transaction => "waiting for a transaction",
            WaitReason::Condition => "waiting on a condition",
            WaitReason::Rollback => "waiting for rollback cleanup",
            WaitReason::Defunct => "defunct",
        });
    }
    match flags.txn_state() {
        Some('A') => v.push("backup thread"),
        Some('B') => v.push("transaction begun"),
        Some('P') => v.push("transaction prepared"),
        Some('X') => v.push("XA transaction prepared"),
        Some('C') => v.push("committing"),
        Some('R') => v.push("rolling back"),
        Some('H') => v.push("heuristically rolled back"),
        _ => {}
    }
    if flags.is_primary() {
        v.push("primary thread");
    }
    if flags.in_read() {
        v.push("in a read call");
    }
    if flags.in_critical_section() {
        v.push("in a critical section");
    }
    if flags.is_recovery() {
        v.push("recovery thread");
    }
    match flags.thread_kind() {
        Some('B') => v.push("btree cleaner"),
        Some('C') => v.push("terminated, awaiting cleanup"),
        Some('D') => v.push("daemon"),
        Some('F') => v.push("page cleaner"),
        Some('M') => v.push("monitor"),
        _ => {}
    }
    v
}

/// A client socket joined to a session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SocketRef {
    pub local: Endpoint,
    pub remote: Endpoint,
    pub send_q: u64,
    pub recv_q: u64,
    pub max_send_q: u64,
    /// Seconds its Send-Q has held bytes in the samples in a row up to now (`None`: empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queued_for_s: Option<f64>,
}

impl From<&SocketRow> for SocketRef {
    fn from(r: &SocketRow) -> SocketRef {
        SocketRef {
            local: r.local.clone(),
            remote: r.remote.clone(),
            send_q: r.send_q,
            recv_q: r.recv_q,
            max_send_q: r.max_send_q,
            queued_for_s: r.queued_for_s,
        }
    }
}

/// A Send-Q that has held bytes this long (seconds) is a client that does not read: a reply
/// is acknowledged within one round trip (well under this even across a continent), so bytes
/// still there half a second later, at a 1 s interval in two samples in a row, are not in
/// flight. Linux counts the unacknowledged bytes in the Send-Q (netstat(8): "the count of bytes
/// not acknowledged by the remote host"), so an idle client shows a few hundred bytes for a
/// moment after each reply.
pub const SEND_Q_PERSIST_S: f64 = 0.5;
/// More than this in a Send-Q at one sample is more than one round trip of a reply: Linux's
/// initial congestion window (ten segments of 1,448 bytes, RFC 6928) is what a reply after an
/// idle pause puts in flight at once.
pub const SEND_Q_ONE_FLIGHT_BYTES: u64 = 14_480;

impl SocketRef {
    /// For a session that has waited `waiting_s` seconds for its client: its Send-Q is a client
    /// that does not read (`Some(true)`), empty (`Some(false)`), or holds a few bytes not yet
    /// held for [`SEND_Q_PERSIST_S`] while it waits: a reply in flight or a client that stopped
    /// reading, which the next sample tells (`None`). Bytes queued while it still ran were sent
    /// then; only what stays unread while it waits counts.
    pub fn not_reading(&self, waiting_s: f64) -> Option<bool> {
        let held = self.queued_for_s.unwrap_or(0.0).min(waiting_s);
        if self.send_q == 0 {
            Some(false)
        } else if self.send_q > SEND_Q_ONE_FLIGHT_BYTES || held >= SEND_Q_PERSIST_S {
            Some(true)
        } else {
            None
        }
    }
}

/// One waiting thread, joined.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WaiterRow {
    pub rstcb: Addr,
    pub sessid: Sid,
    pub user: CompactString,
    /// As `onstat -u` printed them (`Y--P---`), read as a `&str`: copied into its row as they
    /// are, with no string built, nor freed, for each of thousands of waiters a second.
    pub flags: Flags,
    pub reason: WaitReason,
    pub waiting_on: WaitTarget,
    /// How long it has been in this wait, tracked across samples (seconds).
    pub in_wait_s: f64,
    /// `in_wait_s` is a lower bound: the wait was already on when ifxtop first saw it (or
    /// after a gap in its samples), and nothing says when it began.
    pub in_wait_s_at_least: bool,
    pub locks: u64,
    pub reads_per_s: Option<f64>,
    pub writes_per_s: Option<f64>,
    /// A client session waiting for its client with nothing queued (or on a shared-memory
    /// connection, which has no queue to see): not a problem.
    pub idle: bool,
    /// A client wait whose Send-Q holds a few bytes seen in one sample only: the reply it just
    /// sent, still in flight, or a client that has stopped reading. Neither idle nor a client
    /// not reading until the next sample tells.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub idle_unknown: bool,
    pub socket: Option<SocketRef>,
    /// The sessions holding it up, the direct blocker first, then on up the chain to the head
    /// blocker. A checkpoint waiter's are the sessions inside critical sections (what the
    /// checkpoint waits for), then whatever holds up the first of them.
    pub blockers: Vec<Sid>,
    pub head_blocker: Option<Sid>,
    /// The chain loops back: a deadlock.
    pub deadlock: bool,
    /// The session the engine's own blocker graph (`onstat -g bth`, 14.10+) names when it
    /// differs from the direct blocker found through `-k`/`-X`/the mutexes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine_blocker: Option<Sid>,
    /// One sentence saying why it waits (the common ones are static: thousands of idle
    /// sessions need no allocation each).
    pub verdict: Cow<'static, str>,
}

/// How long a thread has been in its wait, in seconds, and whether that is a lower bound.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WaitAge {
    pub(crate) seconds: f64,
    pub(crate) at_least: bool,
}

/// What a waiting thread's row is made of before its chain, idleness and verdict are joined.
pub(crate) struct Joined<'a> {
    pub(crate) thread: &'a UserThread,
    pub(crate) reason: WaitReason,
    pub(crate) target: WaitTarget,
    pub(crate) wait: WaitAge,
    /// Reads and writes a second.
    pub(crate) rates: Option<(f64, f64)>,
    pub(crate) socket: Option<SocketRef>,
}

impl Joined<'_> {
    /// The row, with no chain, idleness or verdict yet: a blank row of its reason written
    /// over, so each field is set in one place ([`Self::write_over`]). Inlined where it is
    /// made: the row is then written once, where it goes, not made on the side and copied.
    #[inline]
    pub(crate) fn into_row(self) -> WaiterRow {
        let mut row = WaiterRow::blank(self.reason);
        self.write_over(&mut row);
        row
    }

    /// This wait's row written over `row` (a row of another second, or a blank), field by
    /// field in place: no row of thousands is made on the side, copied in and the old one
    /// freed. Every field is named, so a field added to the row cannot be left as it was.
    #[inline]
    pub(crate) fn write_over(self, row: &mut WaiterRow) {
        let WaiterRow {
            rstcb,
            sessid,
            user,
            flags,
            reason,
            waiting_on,
            in_wait_s,
            in_wait_s_at_least,
            locks,
            reads_per_s,
            writes_per_s,
            idle,
            idle_unknown,
            socket,
            blockers,
            head_blocker,
            deadlock,
            engine_blocker,
            verdict,
        } = row;
        *rstcb = self.thread.address;
        *sessid = self.thread.sessid;
        if *user != self.thread.user {
            user.clone_from(&self.thread.user);
        }
        *flags = self.thread.flags;
        *reason = self.reason;
        *waiting_on = self.target;
        *in_wait_s = self.wait.seconds;
        *in_wait_s_at_least = self.wait.at_least;
        *locks = self.thread.locks;
        *reads_per_s = self.rates.map(|r| r.0);
        *writes_per_s = self.rates.map(|r| r.1);
        *idle = false;
        *idle_unknown = false;
        *socket = self.socket;
        blockers.clear();
        *head_blocker = None;
        *deadlock = false;
        *engine_blocker = None;
        *verdict = Cow::Borrowed("");
    }
}

impl WaiterRow {
    /// A row of no thread waiting for `reason`, on nothing known: what a wait's row is
    /// written over when there is no row of another second to write over.
    fn blank(reason: WaitReason) -> Self {
        WaiterRow {
            rstcb: Addr::default(),
            sessid: Sid::default(),
            user: CompactString::default(),
            flags: Flags(*b"-------"),
            reason,
            waiting_on: WaitTarget::Other { address: None },
            in_wait_s: 0.0,
            in_wait_s_at_least: false,
            locks: 0,
            reads_per_s: None,
            writes_per_s: None,
            idle: false,
            idle_unknown: false,
            socket: None,
            blockers: Vec::new(),
            head_blocker: None,
            deadlock: false,
            engine_blocker: None,
            verdict: Cow::Borrowed(""),
        }
    }

    /// What it waits on, short, for a list: `HDR+X on customer (stores)`, `sm_read`,
    /// `the checkpoint` (a wait with only an address says what kind of wait it is).
    pub fn waiting_on_short(&self) -> String {
        let mut out = String::new();
        self.write_waiting_on_short(&mut out);
        out
    }

    /// [`Self::waiting_on_short`] written at the end of `out`.
    pub(crate) fn write_waiting_on_short(&self, out: &mut String) {
        let _ = match &self.waiting_on {
            WaitTarget::Other { .. } => match self.reason {
                // The lists name the wait (checkpoint) beside this: say who holds it up, the
                // sessions inside critical sections, when there are any.
                WaitReason::Checkpoint => match self.blockers.as_slice() {
                    [] => write!(out, "the checkpoint to complete"),
                    [one] => write!(out, "held up by sid {one}"),
                    [one, more @ ..] => write!(out, "held up by sid {one} +{}", more.len()),
                },
                WaitReason::LogBuffer => match self.blockers.first() {
                    Some(sid) => write!(out, "the logs: held by sid {sid}"),
                    None => write!(out, "a log buffer write"),
                },
                WaitReason::Transaction => write!(out, "a transaction"),
                WaitReason::Rollback => write!(out, "rollback cleanup"),
                WaitReason::Buffer => write!(out, "a buffer (not in onstat -X)"),
                r => write!(out, "{}", r.words()),
            },
            t => {
                t.write_short(out);
                Ok(())
            }
        };
    }

    /// The session holding it up directly.
    pub fn direct_blocker(&self) -> Option<Sid> {
        self.blockers.first().copied()
    }
}

/// What kind of condition a thread waits on, by its name in `onstat -g con`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConditionKind {
    /// `netnorm`: a session on a TCP connection waiting for its client — idle when nothing is
    /// queued on its socket, the FET_BUF_SIZE story when its Send-Q grows.
    ClientTcp,
    /// `sm_read`: a session on a shared-memory connection waiting for its client between
    /// requests; there is no socket to look at.
    ClientShm,
    /// Anything else (a server-side condition worth a look).
    Other,
}

impl ConditionKind {
    pub(crate) fn of(name: Option<&str>) -> ConditionKind {
        match name {
            Some("netnorm") => ConditionKind::ClientTcp,
            Some("sm_read") => ConditionKind::ClientShm,
            _ => ConditionKind::Other,
        }
    }
}

impl WaitTarget {
    /// The kind of condition waited on (`Other` for anything that is not a condition).
    pub(crate) fn condition_kind(&self) -> ConditionKind {
        match self {
            WaitTarget::Condition { name, .. } => ConditionKind::of(name.as_deref()),
            _ => ConditionKind::Other,
        }
    }
}

/// The threads inside critical sections (flag position 5 `X`): a checkpoint cannot start until
/// they leave, so they hold up every checkpoint waiter. Lowest session first.
pub(crate) fn critical_section_threads(u: &OnstatU) -> Vec<(Sid, Addr)> {
    let mut v: Vec<(Sid, Addr)> = u
        .threads
        .iter()
        .filter(|t| t.flags.in_critical_section())
        .map(|t| (t.sessid, t.address))
        .collect();
    v.sort_unstable();
    v
}

/// Fills each waiter's blockers, head blocker and deadlock flag from the owners of what they
/// wait on; a checkpoint waiter is held up by the threads inside critical sections.
/// `onstat -g bth`'s waiting threads and their blockers as `onstat -u` addresses (through the
/// thread ids of `onstat -g ath`): what the engine itself says blocks whom.
pub(crate) fn engine_blockers(
    bth: Option<&crate::parsers::onstat_g_bth::OnstatGBth>,
    ath: Option<&crate::parsers::onstat_g_ath::OnstatGAth>,
) -> FxHashMap<Addr, Addr> {
    let (Some(bth), Some(ath)) = (bth, ath) else {
        return FxHashMap::default();
    };
    let rstcb = Rstcbs::new(
        Some(ath),
        bth.waiting
            .iter()
            .flat_map(|w| std::iter::once(w.tid).chain(w.blocker)),
    );
    bth.waiting
        .iter()
        .filter_map(|w| Some((rstcb.get(w.tid)?, rstcb.get(w.blocker?)?)))
        .collect()
}

/// The thread holding the logs while the server is `Blocked:LONGTX`: the oldest open
/// transaction of `onstat -x` read at this moment, else the one session rolling back in this
/// `onstat -u` (flag position 3 `R`). `None` when neither says (several roll back, no `-x`).
pub(crate) fn long_transaction_thread(
    u: &OnstatU,
    x: Option<&crate::parsers::onstat_x_txn::OnstatXTxn>,
) -> Option<Addr> {
    let blocked = u
        .header
        .as_ref()
        .and_then(|h| h.blocked.as_deref())
        .is_some_and(|b| b.split(',').any(|r| r.trim() == "LONGTX"));
    if !blocked {
        return None;
    }
    let oldest = x.and_then(|x| {
        x.transactions
            .iter()
            .filter_map(|t| Some((t.userthread?, t.begin_logpos?)))
            .min_by_key(|(_, b)| b.log)
            .map(|(a, _)| a)
    });
    oldest.or_else(|| {
        let mut rolling: Vec<Addr> = u
            .threads
            .iter()
            .filter(|t| t.flags.txn_state() == Some('R') && t.flags.is_primary())
            .map(|t| t.address)
            .collect();
        rolling.dedup();
        match rolling.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    })
}

/// Follows every waiter's chain of owners to its head blocker, in rows as `waiter_rows` makes
/// them (no chain yet), and returns the places of the rows given one, in order. `engine` (from `onstat -g bth`) fills in the blockers the other sources
/// cannot see (memory grants, conditions); where both know one and they differ, the waiter says
/// so.
///
/// `log_holder` is the thread of the oldest open transaction while the server is
/// `Blocked:LONGTX`: nothing but its rollback may write, so every log waiter waits for it.
pub(crate) fn join_chains(
    u: &OnstatU,
    index: &WaitIndex<'_>,
    waiters: &mut [WaiterRow],
    engine: &FxHashMap<Addr, Addr>,
    log_holder: Option<Addr>,
) -> Vec<usize> {
    let critical = critical_section_threads(u);
    // The rows given an owner, by place: most waiters (idle clients) wait on no thread, and
    // their rows keep no chain, as made.
    let mut chained: Vec<usize> = Vec::new();
    let mut owner_of: FxHashMap<Addr, Addr> = FxHashMap::default();
    for (i, w) in waiters.iter().enumerate() {
        if let Some(o) = w.waiting_on.owner() {
            owner_of.insert(w.rstcb, o);
            chained.push(i);
        }
    }
    let sid_of = index.sessions_by_address(&u.threads);
    for (i, w) in waiters
        .iter_mut()
        .enumerate()
        .filter(|_| !engine.is_empty())
    {
        let Some(e) = engine.get(&w.rstcb) else {
            continue;
        };
        match owner_of.get(&w.rstcb) {
            None => {
                owner_of.insert(w.rstcb, *e);
                chained.push(i);
            }
            Some(o) if sid_of.get(*o) != sid_of.get(*e) => w.engine_blocker = sid_of.get(*e),
            Some(_) => {}
        }
    }
    if let Some(holder) = log_holder {
        for (i, w) in waiters.iter().enumerate() {
            if w.reason == WaitReason::LogBuffer && w.rstcb != holder {
                owner_of.insert(w.rstcb, holder);
                chained.push(i);
            }
        }
    }
    if let Some((_, first)) = critical.first() {
        for (i, w) in waiters.iter().enumerate() {
            if w.reason == WaitReason::Checkpoint && w.rstcb != *first {
                owner_of.insert(w.rstcb, *first);
                chained.push(i);
            }
        }
    }
    if owner_of.is_empty() {
        return Vec::new();
    }
    if sid_of.in_order() {
        // Each row is a thread of its own address: the rows given an owner are the ones whose
        // address has one.
        chained.sort_unstable();
        chained.dedup();
    } else {
        // An address twice: every row at an address given an owner has it.
        chained = (0..waiters.len())
            .filter(|i| owner_of.contains_key(&waiters[*i].rstcb))
            .collect();
    }
    for i in chained.iter().copied() {
        let w = &mut waiters[i];
        let c = chains::follow(w.rstcb, &owner_of);
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
    chained
}

/// The thread that speaks for each head blocker in the verdicts: its first thread (in the
/// `onstat -u`'s order) that is primary or not waiting. Found in one pass for all heads, not a
/// pass over every thread for each waiter held up.
pub(crate) struct HeadThreads<'a> {
    /// The heads' sessions in order, each with its thread.
    heads: Vec<(Sid, Option<&'a UserThread>)>,
}

impl<'a> HeadThreads<'a> {
    pub(crate) fn new(u: &'a OnstatU, heads: impl Iterator<Item = Sid>) -> Self {
        let mut heads: Vec<(Sid, Option<&UserThread>)> = heads.map(|h| (h, None)).collect();
        heads.sort_unstable_by_key(|h| h.0);
        heads.dedup_by_key(|h| h.0);
        let mut left = heads.len();
        for t in &u.threads {
            if left == 0 {
                break;
            }
            if !(t.flags.is_primary() || t.wait_reason.is_none()) {
                continue;
            }
            if let Ok(i) = heads.binary_search_by_key(&t.sessid, |h| h.0) {
                if heads[i].1.is_none() {
                    heads[i].1 = Some(t);
                    left -= 1;
                }
            }
        }
        HeadThreads { heads }
    }

    pub(crate) fn get(&self, sid: Sid) -> Option<&'a UserThread> {
        let i = self.heads.binary_search_by_key(&sid, |h| h.0).ok()?;
        self.heads[i].1
    }
}

/// "blocked by sid 812 (head blocker, holding 3 locks, running)".
fn blocker_words(row: &WaiterRow, heads: &HeadThreads<'_>) -> Option<String> {
    if row.deadlock {
        let sids: Vec<String> = row.blockers.iter().map(|s| s.to_string()).collect();
        return Some(format!("DEADLOCK with sid {}", sids.join(", ")));
    }
    let first = row.direct_blocker()?;
    let head = row.head_blocker?;
    let head_th = heads.get(head);
    let mut what = Vec::new();
    if first == head {
        what.push("head blocker".to_string());
    }
    if let Some(t) = head_th {
        what.push(format!(
            "holding {} lock{}",
            t.locks,
            if t.locks == 1 { "" } else { "s" }
        ));
        if t.flags.in_read() {
            what.push("in a read".into());
        } else if t.flags.in_critical_section() {
            what.push("in a critical section".into());
        } else if let Some(r) = t.wait_reason {
            what.push(format!("itself waiting: {}", r.words()));
        } else {
            what.push("running".into());
        }
    }
    let mut s = format!("blocked by sid {first}");
    if first != head {
        s.push_str(&format!(", head blocker sid {head}"));
    }
    if !what.is_empty() {
        s.push_str(&format!(" ({})", what.join(", ")));
    }
    Some(s)
}

/// The sentence that says why a thread waits. `checkpoint` is what holds the checkpoint up
/// (`Blocked:CKPT`, the sessions in critical sections), for checkpoint waiters.
/// Why a holder is not named, per kind of holder, for this moment: `holder unknown: onstat -k
/// is 3s old` (the holder of a lock, a buffer or a mutex is named only from an output read at
/// the moment of the `onstat -u`).
#[derive(Debug, Clone, Default)]
pub(crate) struct HolderNotes {
    pub(crate) lock: String,
    pub(crate) buffer: String,
    pub(crate) mutex: String,
}

/// The output that names who holds what a thread of `onstat -u` waits for: `onstat -k` a
/// lock's holder, `onstat -X` a buffer's, `onstat -g lmx` a mutex's. A holder is named only
/// from one read at the moment of that `onstat -u`. `None` for the other waits.
pub(crate) fn holder_source(reason: WaitReason) -> Option<crate::source::Source> {
    use crate::source::Source;
    match reason {
        WaitReason::Lock => Some(Source::OnstatK),
        WaitReason::Buffer => Some(Source::OnstatX),
        WaitReason::Mutex => Some(Source::OnstatGLmx),
        _ => None,
    }
}

impl HolderNotes {
    /// The notes of this moment, `note` saying why a holder is not named from a source (its
    /// [`holder_source`]).
    pub(crate) fn new(note: impl Fn(crate::source::Source) -> String) -> Self {
        let of = |reason| holder_source(reason).map(&note).unwrap_or_default();
        HolderNotes {
            lock: of(WaitReason::Lock),
            buffer: of(WaitReason::Buffer),
            mutex: of(WaitReason::Mutex),
        }
    }

    /// The note for one source: its age at `moment`, that it was printed a second after the
    /// `onstat -u` of its call (`late`), or that it was not read yet.
    pub(crate) fn note(
        label: &str,
        observed: Option<std::time::Duration>,
        moment: Option<std::time::Duration>,
        late: bool,
    ) -> String {
        if late {
            return format!("holder unknown: {label} was printed a second after onstat -u");
        }
        match (observed, moment) {
            (Some(t), Some(m)) => format!(
                "holder unknown: {label} is {} old",
                crate::format::human_duration(m.saturating_sub(t).as_secs_f64())
            ),
            _ => format!("holder unknown: {label} not read yet"),
        }
    }
}

pub(crate) fn verdict(
    row: &WaiterRow,
    heads: &HeadThreads<'_>,
    checkpoint: &str,
    notes: &HolderNotes,
) -> Cow<'static, str> {
    if row.reason == WaitReason::Checkpoint {
        return Cow::Owned(if checkpoint.is_empty() {
            "waiting for a checkpoint to finish".to_string()
        } else {
            format!("waiting for a checkpoint to finish ({checkpoint})")
        });
    }
    if let Some(b) = blocker_words(row, heads) {
        let on = match &row.waiting_on {
            WaitTarget::Lock {
                object: Some(o), ..
            } => format!("waiting for a lock on {o}: "),
            WaitTarget::Lock { .. } => "waiting for a lock: ".to_string(),
            WaitTarget::Buffer {
                object: Some(o), ..
            } => {
                format!("waiting for a buffer of {o}: ")
            }
            WaitTarget::Buffer { chunk, page, .. } => {
                format!("waiting for buffer {chunk}:{page}: ")
            }
            WaitTarget::Latch { name: Some(n), .. } => format!("waiting for mutex {n}: "),
            WaitTarget::Latch { address, .. } => format!("waiting for mutex {address}: "),
            _ => String::new(),
        };
        let engine = row
            .engine_blocker
            .map(|s| format!(" (but onstat -g bth names sid {s})"))
            .unwrap_or_default();
        return Cow::Owned(format!("{on}{b}{engine}"));
    }
    match &row.waiting_on {
        WaitTarget::Condition { name, .. } => match ConditionKind::of(name.as_deref()) {
            ConditionKind::ClientTcp => match &row.socket {
                Some(s) if s.send_q > 0 && !row.idle_unknown => Cow::Owned(format!(
                    "waiting for its client to read: {} queued on {} (see FET_BUF_SIZE)",
                    human_bytes(s.send_q),
                    s.remote
                )),
                Some(s) if s.send_q > 0 => Cow::Owned(format!(
                    "waiting for its client: {} in its Send-Q, seen once (a reply in flight, or \
                     a client not reading: the next sample tells)",
                    human_bytes(s.send_q)
                )),
                Some(_) => Cow::Borrowed("idle: waiting for the client"),
                None => Cow::Borrowed("waiting for the client (its socket is not known)"),
            },
            ConditionKind::ClientShm => {
                Cow::Borrowed("idle: waiting for the client (shared-memory connection: no socket)")
            }
            ConditionKind::Other => match name {
                Some(n) => Cow::Owned(format!("waiting on condition {n}")),
                None => Cow::Owned(format!(
                    "waiting on condition {}",
                    row.waiting_on.describe()
                )),
            },
        },
        WaitTarget::Buffer {
            object,
            chunk,
            page,
            ..
        } => Cow::Owned(match object {
            Some(o) => format!("waiting for a buffer of {o} (page {chunk}:{page})"),
            None => format!("waiting for buffer page {chunk}:{page} (not in the extent map)"),
        }),
        WaitTarget::Lock {
            out_of_step: true, ..
        } => Cow::Borrowed(
            "waiting for a lock (holder unknown: onstat -k, printed an instant apart, no longer \
             shows this wait)",
        ),
        WaitTarget::Lock { owner: None, .. } => {
            Cow::Owned(format!("waiting for a lock ({})", notes.lock))
        }
        WaitTarget::Lock { .. } => Cow::Borrowed("waiting for a lock"),
        WaitTarget::Latch {
            name,
            owner: None,
            address,
            ..
        } => Cow::Owned(format!(
            "waiting for mutex {} ({})",
            name.as_deref()
                .map_or_else(|| address.to_string(), str::to_string),
            notes.mutex
        )),
        WaitTarget::Latch { name: Some(n), .. } => Cow::Owned(format!("waiting for mutex {n}")),
        WaitTarget::Latch { address, .. } => Cow::Owned(format!("waiting for mutex {address}")),
        WaitTarget::Other { .. } => match row.reason {
            WaitReason::LogBuffer => Cow::Borrowed("waiting for a logical-log buffer write"),
            WaitReason::Transaction => Cow::Borrowed("waiting for a transaction"),
            WaitReason::Rollback => Cow::Borrowed("waiting for rollback cleanup"),
            WaitReason::Buffer => Cow::Owned(format!("waiting for a buffer ({})", notes.buffer)),
            r => Cow::Owned(format!("waiting: {}", r.words())),
        },
    }
}

impl WaiterRow {
    /// The default order, largest first: what deserves a look first (see `concern`), the
    /// longest wait first within each; idle client waits last, whatever their age. One number,
    /// so the Waiters pane sorts and reverses by it, and the text report orders the same way.
    pub(crate) fn priority(&self) -> f64 {
        if self.idle {
            -1.0 / (1.0 + self.in_wait_s)
        } else {
            f64::from(self.concern()) * 1e9 + self.in_wait_s.min(1e8)
        }
    }

    /// How much this wait deserves a look, for the default order: waits on a session or a
    /// resource (lock, buffer, checkpoint, log buffer, transaction) first, then client waits with
    /// data queued, other conditions and mutexes, client waits whose socket is unknown, and idle
    /// client waits last.
    pub(crate) fn concern(&self) -> u8 {
        if self.idle {
            return 0;
        }
        match &self.waiting_on {
            WaitTarget::Condition { .. } => match self.waiting_on.condition_kind() {
                ConditionKind::ClientTcp => match &self.socket {
                    Some(s) if s.send_q > 0 && !self.idle_unknown => 3,
                    _ => 1,
                },
                ConditionKind::ClientShm => 0,
                ConditionKind::Other => 2,
            },
            // Mutex waits come and go within a sample: a long one still sorts by its time.
            WaitTarget::Latch { .. } => 2,
            _ => 4,
        }
    }

    /// An idle client wait: waiting for its client with nothing queued (a TCP connection whose
    /// socket is known to hold nothing), or on a shared-memory connection between requests.
    pub(crate) fn is_idle_client_wait(&self) -> bool {
        match self.waiting_on.condition_kind() {
            ConditionKind::ClientShm => true,
            // A netnorm wait with an unknown socket may be the FET_BUF_SIZE case: not idle.
            ConditionKind::ClientTcp => self.socket.as_ref().is_some_and(|s| s.send_q == 0),
            ConditionKind::Other => false,
        }
    }

    /// A client wait neither idle nor known not to read: its Send-Q holds a few bytes not
    /// held while it has waited `waiting_s` seconds (as of the socket table's moment):
    /// `SocketRef::not_reading`; or its socket is not known (a session newer than the latest
    /// `onstat -g ntt`), so its queue cannot be seen.
    pub(crate) fn is_unjudged_client_wait(&self, waiting_s: f64) -> bool {
        match &self.waiting_on {
            // A condition no onstat -g con has named yet may be the client's.
            WaitTarget::Condition { name: None, .. } => true,
            _ => {
                self.waiting_on.condition_kind() == ConditionKind::ClientTcp
                    && self
                        .socket
                        .as_ref()
                        .is_none_or(|s| s.not_reading(waiting_s).is_none())
            }
        }
    }
}

/// What a session is doing, in a few words, from its threads.
pub(crate) fn state_words(u: &OnstatU, sid: Sid) -> (String, u64, String) {
    let threads: Vec<&UserThread> = u.threads.iter().filter(|t| t.sessid == sid).collect();
    state_words_of(&threads)
}

/// [`state_words`] of a session from its threads, in the `onstat -u`'s order.
pub(crate) fn state_words_of(threads: &[&UserThread]) -> (String, u64, String) {
    let locks = threads.iter().map(|t| t.locks).sum();
    let user = threads
        .first()
        .map(|t| t.user.to_string())
        .unwrap_or_default();
    let primary = threads
        .iter()
        .find(|t| t.flags.is_primary())
        .or(threads.first());
    let state = match primary {
        None => "gone".to_string(),
        Some(t) => match t.wait_reason {
            Some(r) => format!("waiting: {}", r.words()),
            None if t.flags.in_read() => "in a read".to_string(),
            None if t.flags.in_critical_section() => "in a critical section".to_string(),
            None => "running".to_string(),
        },
    };
    (state, locks, user)
}

#[cfg(test)]
mod index {
    //! The index's lookups against the plain maps they stand for.
    use super::*;
    use crate::ids::Tid;
    use proptest::prelude::*;
    use std::time::Duration;

    /// A record of each kind the index reads, as the demo prints it, to vary.
    fn templates() -> (UserThread, Lock, crate::parsers::onstat_g_ath::AthThread) {
        use crate::source::{key, Source};
        let demo = crate::demo::DemoInstance::new(1).with_sessions(20);
        let mut store = crate::store::Store::new(Default::default());
        for s in [Source::OnstatU, Source::OnstatK, Source::OnstatGAth] {
            let u = crate::collect::sample::Update::from_demo(&demo, s, Duration::from_secs(278));
            store.apply(u.expect("the demo answers"));
        }
        let u = store.get(key::OnstatU).expect("onstat -u");
        let k = store.get(key::OnstatK).expect("onstat -k");
        let ath = store.get(key::OnstatGAth).expect("onstat -g ath");
        (
            u.threads[0].clone(),
            k.locks[0].clone(),
            ath.threads[0].clone(),
        )
    }

    /// Threads at the addresses given (in that order), every other one waiting on a lock at
    /// its wait address.
    fn threads(t: &UserThread, at: &[(u64, u64)]) -> Vec<UserThread> {
        at.iter()
            .enumerate()
            .map(|(i, (a, wait))| UserThread {
                address: Addr(*a),
                sessid: Sid(i as u64),
                wait_reason: (i % 2 == 0).then_some(WaitReason::Lock),
                wait: (*wait != 0).then_some(Addr(*wait)),
                ..t.clone()
            })
            .collect()
    }

    proptest! {
        /// Threads in address order or not, an address twice or not: a thread's value by its
        /// address is the one a map of them (the later of one address kept) holds.
        #[test]
        fn threads_by_address_are_a_map(
            mut at in proptest::collection::vec((1u64..40, 0u64..6), 0..30),
            asked in proptest::collection::vec(0u64..42, 0..40),
            in_order: bool,
        ) {
            let (t, _, _) = templates();
            if in_order {
                at.sort_unstable();
                at.dedup_by_key(|a| a.0);
            }
            let threads = threads(&t, &at);
            let waits = ByAddress::new(&threads, |t| Some((t.wait_reason?, t.wait?)));
            let sids = ByAddress::new(&threads, |t| Some(t.sessid));
            let plain_waits: FxHashMap<Addr, (WaitReason, Addr)> = threads
                .iter()
                .filter_map(|t| Some((t.address, (t.wait_reason?, t.wait?))))
                .collect();
            let plain_sids: FxHashMap<Addr, Sid> =
                threads.iter().map(|t| (t.address, t.sessid)).collect();
            for a in asked.into_iter().chain(0..42).map(Addr) {
                prop_assert_eq!(waits.get(a), plain_waits.get(&a).copied(), "{}", a);
                prop_assert_eq!(sids.get(a), plain_sids.get(&a).copied(), "{}", a);
            }
        }

        /// Conditions in address order or not, an address twice or not, asked in any order
        /// and then in address order: a condition's name and wait are the ones a map of them
        /// (the first of one address kept) holds.
        #[test]
        fn conditions_by_address_are_a_map(
            mut at in proptest::collection::vec((1u64..40, 0u64..100), 0..30),
            asked in proptest::collection::vec(0u64..42, 0..40),
            in_order: bool,
            now: bool,
        ) {
            if in_order {
                at.sort_unstable_by_key(|a| a.0);
                at.dedup_by_key(|a| a.0);
            }
            let con = OnstatGCon {
                conditions: at
                    .iter()
                    .map(|(a, w)| crate::parsers::onstat_g_con::Condition {
                        cid: *w,
                        addr: Addr(*a),
                        name: CompactString::from(format!("c{w}")),
                        waiter: crate::ids::Tid(*a),
                        waittime: *w,
                    })
                    .collect(),
                ..OnstatGCon::default()
            };
            let mut plain: FxHashMap<Addr, (&str, Option<u64>)> = FxHashMap::default();
            for c in &con.conditions {
                plain.entry(c.addr).or_insert((c.name.as_str(), now.then_some(c.waittime)));
            }
            let index = ConditionIndex::new(Some(&con), now);
            for a in asked.into_iter().chain(0..42).map(Addr) {
                let got = index.get(a).map(|(n, w)| (n.as_str(), w));
                prop_assert_eq!(got, plain.get(&a).copied(), "{}", a);
            }
            prop_assert_eq!(ConditionIndex::new(None, now).get(Addr(1)), None);
        }

        /// The lock at an address, asked by a lock waiter or not, is the one a map of
        /// `onstat -k`'s locks (the later of one address kept) holds.
        #[test]
        fn locks_by_address_are_a_map(
            locks in proptest::collection::vec((1u64..30, 0u64..1000), 0..40),
            waits in proptest::collection::vec((1u64..40, 0u64..32), 0..20),
        ) {
            let (t, l, _) = templates();
            let k = OnstatK {
                locks: locks
                    .iter()
                    .map(|(a, partnum)| Lock { address: Addr(*a), tblsnum: *partnum, ..l.clone() })
                    .collect(),
                ..OnstatK::default()
            };
            let u = OnstatU { threads: threads(&t, &waits), ..OnstatU::default() };
            let index = LockIndex::new(Some(&k), Some(&u));
            let plain: FxHashMap<Addr, &Lock> = k.locks.iter().map(|l| (l.address, l)).collect();
            for a in (0..34).map(Addr) {
                prop_assert_eq!(index.get(a), plain.get(&a).copied(), "{}", a);
            }
            let none = LockIndex::new(None, Some(&u));
            prop_assert_eq!(none.get(Addr(1)), None);
        }

        /// The rstcb of a thread id asked for is the one a map of `onstat -g ath`'s threads
        /// with an rstcb (the later line of one tid kept) holds.
        #[test]
        fn rstcbs_by_tid_are_a_map(
            mut ath in proptest::collection::vec((0u64..30, 0u64..8), 0..40),
            asked in proptest::collection::vec(0u64..32, 0..20),
            in_order: bool,
        ) {
            if in_order {
                ath.sort_unstable_by_key(|t| t.0);
                ath.dedup_by_key(|t| t.0);
            }
            let (_, _, a) = templates();
            let ath = crate::parsers::onstat_g_ath::OnstatGAth {
                threads: ath
                    .iter()
                    .map(|(tid, rstcb)| crate::parsers::onstat_g_ath::AthThread {
                        tid: Tid(*tid),
                        rstcb: (*rstcb != 0).then_some(Addr(*rstcb)),
                        ..a.clone()
                    })
                    .collect(),
                ..Default::default()
            };
            let plain: FxHashMap<Tid, Addr> = ath
                .threads
                .iter()
                .filter_map(|t| Some((t.tid, t.rstcb?)))
                .collect();
            let rstcbs = Rstcbs::new(Some(&ath), asked.iter().map(|t| Tid(*t)));
            for t in asked.iter().map(|t| Tid(*t)) {
                prop_assert_eq!(rstcbs.get(t), plain.get(&t).copied(), "{}", t);
            }
            prop_assert_eq!(Rstcbs::new(None, asked.iter().map(|t| Tid(*t))).get(Tid(1)), None);
        }
    }

    proptest! {
        /// The thread that speaks for a head blocker is the first of its session, in the
        /// `onstat -u`'s order, that is primary or not waiting, as a search of every thread
        /// for each head finds it; none for a session not asked about or with no such thread.
        #[test]
        fn a_head_blockers_thread_is_the_first_that_speaks_for_it(
            rows in proptest::collection::vec((0u64..8, any::<bool>(), any::<bool>()), 0..30),
            heads in proptest::collection::vec(0u64..10, 0..8),
        ) {
            let (t, _, _) = templates();
            let u = OnstatU {
                threads: (0u64..)
                    .zip(&rows)
                    .map(|(i, &(sid, primary, waiting))| UserThread {
                        address: Addr(0x1000 + i),
                        sessid: Sid(sid),
                        flags: Flags(*if primary { b"---P---" } else { b"-------" }),
                        wait_reason: waiting.then_some(WaitReason::Lock),
                        ..t.clone()
                    })
                    .collect(),
                ..OnstatU::default()
            };
            let index = HeadThreads::new(&u, heads.iter().map(|h| Sid(*h)));
            for sid in (0..10).map(Sid) {
                let plain = heads.contains(&sid.0).then(|| {
                    u.threads.iter().find(|t| {
                        t.sessid == sid && (t.flags.is_primary() || t.wait_reason.is_none())
                    })
                });
                prop_assert_eq!(
                    index.get(sid).map(|t| t.address),
                    plain.flatten().map(|t| t.address),
                    "{}", sid
                );
            }
        }
    }

    /// The waits counted by reason index `WaitReason::ALL` by their place in it.
    #[test]
    fn reasons_are_in_their_order() {
        for (i, r) in WaitReason::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i, "{r:?}");
        }
    }
}
