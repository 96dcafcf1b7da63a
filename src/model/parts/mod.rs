//! The snapshot's parts, one file per join family, each naming the sources it reads
//! (node_exporter's collector per file, made incremental): a part whose sources were not applied
//! since it was built is shared with the snapshot before (an `Arc`), not built again.
//!
//! What a part reads is declared as a list of sources (`INPUTS`, one of a kind standing for
//! every source of that kind) and checked against the store's stamps ([`Store::stamp`]): any
//! apply of one of them, a good value or an error, moves the stamp. A new store (a replay's
//! seek back starts one) or a copy of one has stamps of its own, and a clock that goes back or
//! jumps ([`GAP`]) drops everything kept: the next snapshot is built whole.

pub(crate) mod health;
pub(crate) mod hotspots;
pub(crate) mod io;
pub(crate) mod numa;
pub(crate) mod server;
pub(crate) mod sessions;
pub(crate) mod sockets;
pub(crate) mod waits;

use crate::store::{Stamp, Store};
use std::sync::Arc;
use std::time::Duration;

/// Snapshots further apart than this are not taken to follow each other (a laptop suspended, a
/// replay jumped, collection stalled): the next is built whole.
pub const GAP: Duration = Duration::from_secs(30);

/// A part as last built, with the stamp of its sources and the argument it was built with.
struct Slot<T, A = ()> {
    from: Option<(Stamp, A)>,
    value: Arc<T>,
}

impl<T: Default, A> Default for Slot<T, A> {
    fn default() -> Self {
        Slot {
            from: None,
            value: Arc::default(),
        }
    }
}

impl<T, A: PartialEq> Slot<T, A> {
    /// The part kept when its sources' stamp and its argument are the ones it was built from,
    /// else built anew by `build`.
    fn get(
        &mut self,
        stamp: Stamp,
        arg: A,
        counts: &mut Counts,
        build: impl FnOnce() -> T,
    ) -> Arc<T> {
        match &self.from {
            Some((s, a)) if *s == stamp && *a == arg => counts.reused += 1,
            _ => {
                self.value = Arc::new(build());
                self.from = Some((stamp, arg));
                counts.built += 1;
            }
        }
        Arc::clone(&self.value)
    }

    fn forget(&mut self) {
        self.from = None;
    }
}

/// How many parts were built and how many reused, and how many times everything was dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub built: u64,
    pub reused: u64,
    pub restarts: u64,
    /// Builds whose rows filled the room of a snapshot let go (`Snapshot::recycle`).
    pub rooms: u64,
}

/// The parts kept between snapshots of one store (the owner of the store keeps one, next to
/// it; a snapshot built alone starts from an empty one).
#[derive(Default)]
pub struct Parts {
    numa: Slot<crate::model::numa::NumaView>,
    io: Slot<crate::model::io::IoView>,
    replication: Slot<crate::model::io::Replication, Option<Vec<String>>>,
    session_hosts: Slot<crate::ids::BySid<compact_str::CompactString>>,
    session_memory: Slot<crate::ids::BySid<(u64, u64)>>,
    /// The time of the last snapshot built.
    last: Option<Duration>,
    counts: Counts,
    /// The row vectors of the snapshot let go before this one, for the next build to fill.
    pub(crate) spare: Spare,
    /// What the socket rows last built were: the next build keeps those of the connections
    /// that did not change, when they come back with the snapshot let go.
    pub(crate) sockets: crate::store::sockets::RowsKept,
}

/// The row vectors of a snapshot let go (`Snapshot::recycle`), emptied, for the next build to
/// fill. At 5,000 sessions each is a block of one to two MB, above the allocator's mmap
/// threshold (`memory::MMAP_THRESHOLD`): a fresh one each second is mapped, faulted in page by
/// page as it fills, and unmapped when the snapshot goes, every second. What they hold is not
/// kept, only their room.
#[derive(Default)]
pub(crate) struct Spare {
    pub(crate) waiters: Vec<crate::model::waiters::WaiterRow>,
    /// With the maps of slow sources the sessions' rows are joined to, as kept.
    pub(crate) sessions: sessions::SessionRoom,
    /// The sockets' rows come back as they were when they are the last build's (`sockets_tag`):
    /// the next build keeps the rows of the connections that did not change.
    pub(crate) sockets: Vec<crate::store::sockets::SocketRow>,
    pub(crate) sockets_tag: crate::store::sockets::RowsTag,
}

impl Spare {
    /// Keeps `v` with its rows in `slot` (for a build that writes over them), unless `slot`
    /// has more room.
    pub(crate) fn keep_rows<T>(slot: &mut Vec<T>, v: Vec<T>) {
        if v.capacity() > slot.capacity() {
            *slot = v;
        }
    }

    /// Keeps the socket rows of a snapshot let go: whole when they are the last build's
    /// (`kept`), else only their room, unless the rows kept now are the last build's or have
    /// more room.
    pub(crate) fn keep_sockets(
        &mut self,
        rows: Vec<crate::store::sockets::SocketRow>,
        tag: crate::store::sockets::RowsTag,
        kept: crate::store::sockets::RowsTag,
    ) {
        if tag.0 != 0 && tag.0 == kept.0 {
            self.sockets = rows;
            self.sockets_tag = tag;
        } else if self.sockets_tag.0 == 0 || self.sockets_tag.0 != kept.0 {
            self.sockets.clear();
            self.sockets_tag = Default::default();
            Spare::keep(&mut self.sockets, rows);
        }
    }

    /// Keeps the room of `v` (emptied) in `slot`, unless `slot` has more.
    pub(crate) fn keep<T>(slot: &mut Vec<T>, mut v: Vec<T>) {
        if v.capacity() > slot.capacity() {
            v.clear();
            *slot = v;
        }
    }
}

impl Parts {
    /// What was built and reused so far.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// The room kept for the next build's rows: waiters, sessions and sockets (for tests and
    /// benches: how much was handed back).
    pub fn spare_room(&self) -> [usize; 3] {
        [
            self.spare.waiters.capacity(),
            self.spare.sessions.rows.capacity(),
            self.spare.sockets.capacity(),
        ]
    }

    /// A snapshot at `now` begins: after a jump of the clock (back, or beyond [`GAP`]), nothing
    /// kept is used.
    fn begin(&mut self, now: Duration) {
        let follows = self
            .last
            .is_none_or(|last| now >= last && now - last <= GAP);
        if !follows {
            self.forget();
        }
        self.last = Some(now);
    }

    /// Drops every part kept: the next snapshot is built whole.
    pub fn forget(&mut self) {
        self.numa.forget();
        self.io.forget();
        self.replication.forget();
        self.session_hosts.forget();
        self.session_memory.forget();
        self.sockets = Default::default();
        self.counts.restarts += 1;
    }

    pub(crate) fn numa(&mut self, store: &Store) -> Arc<crate::model::numa::NumaView> {
        let stamp = store.stamp(numa::INPUTS);
        self.numa
            .get(stamp, (), &mut self.counts, || numa::build(store))
    }

    pub(crate) fn io(&mut self, store: &Store) -> Arc<crate::model::io::IoView> {
        let stamp = store.stamp(io::IO_INPUTS);
        self.io.get(stamp, (), &mut self.counts, || {
            crate::model::io::build_io(store)
        })
    }

    pub(crate) fn replication(
        &mut self,
        store: &Store,
        flags: Option<&[String]>,
    ) -> Arc<crate::model::io::Replication> {
        let stamp = store.stamp(io::REPLICATION_INPUTS);
        let arg = flags.map(<[String]>::to_vec);
        self.replication.get(stamp, arg, &mut self.counts, || {
            crate::model::io::build_replication(store, flags)
        })
    }
}

impl Parts {
    /// The client-host map as kept now (a test tells a map kept from one built again).
    #[cfg(test)]
    pub(crate) fn session_hosts_kept(
        &self,
    ) -> *const crate::ids::BySid<compact_str::CompactString> {
        Arc::as_ptr(&self.session_hosts.value)
    }

    /// Hands the sessions' build the maps of slow sources (client hosts, memory), kept while
    /// those sources are not read again.
    pub(crate) fn session_maps(&mut self, store: &Store) {
        let hosts_at = store.stamp(sessions::HOST_INPUTS);
        let hosts = self.session_hosts.get(hosts_at, (), &mut self.counts, || {
            sessions::client_hosts(store)
        });
        let memory_at = store.stamp(sessions::MEMORY_INPUTS);
        let memory = self
            .session_memory
            .get(memory_at, (), &mut self.counts, || {
                sessions::session_memory(store)
            });
        self.spare.sessions.hosts = Some((hosts_at, hosts));
        self.spare.sessions.memory = Some((memory_at, memory));
    }
}

/// The parts of a snapshot at `now`, kept in `parts` for the next.
pub(crate) fn begin(parts: &mut Parts, now: Duration) {
    parts.begin(now);
    if parts.spare.waiters.capacity() > 0 || parts.spare.sessions.rows.capacity() > 0 {
        parts.counts.rooms += 1;
    }
}

#[cfg(test)]
mod inputs {
    use super::*;
    use crate::collect::sample::Update;
    use crate::demo::DemoInstance;
    use crate::source::Source;

    /// Every source the demo answers, with a few of each per-node kind.
    fn sources(demo: &DemoInstance) -> Vec<Source> {
        let mut all = Source::candidates_for_tests(None);
        for n in 0..4 {
            all.extend([
                Source::NodeMeminfo(n),
                Source::NodeCpulist(n),
                Source::NumaMaps(n),
            ]);
        }
        all.retain(|s| demo.respond(&s.request(), Duration::from_secs(1)).is_ok());
        all
    }

    fn apply(store: &mut Store, demo: &DemoInstance, s: Source, t: u64) {
        if let Some(u) = Update::from_demo(demo, s, Duration::from_secs(t)) {
            store.apply(u);
        }
    }

    /// Each part, and each map the parts keep, as built whole from `store`, as JSON or as
    /// printed (a part's equality, NaN-proof).
    fn parts_of(store: &Store) -> [(&'static str, &'static [Source], String); 5] {
        let flags = store
            .get(crate::source::key::OnstatU)
            .and_then(|u| u.header.as_ref())
            .map(|h| h.mode_flags.clone());
        let json = |v: &dyn erased::Json| v.json();
        [
            ("numa", numa::INPUTS, json(&numa::build(store))),
            (
                "io",
                io::IO_INPUTS,
                json(&crate::model::io::build_io(store)),
            ),
            (
                "replication",
                io::REPLICATION_INPUTS,
                json(&crate::model::io::build_replication(
                    store,
                    flags.as_deref(),
                )),
            ),
            (
                "client hosts",
                sessions::HOST_INPUTS,
                format!("{:?}", sessions::client_hosts(store)),
            ),
            (
                "session memory",
                sessions::MEMORY_INPUTS,
                format!("{:?}", sessions::session_memory(store)),
            ),
        ]
    }

    mod erased {
        pub(super) trait Json {
            fn json(&self) -> String;
        }
        impl<T: serde::Serialize> Json for T {
            fn json(&self) -> String {
                serde_json::to_string(self).expect("serializes")
            }
        }
    }

    /// A part reads nothing but the sources it names: from a store with a minute of every
    /// source, one more sample of any other source (another phase of the demo, another
    /// instance) leaves the part as it was; and one of its own moves it (the check has teeth).
    #[test]
    fn parts_read_only_what_they_name() {
        for demo in [
            DemoInstance::new(1).with_sessions(40),
            DemoInstance::new(2).with_sessions(40).messy(),
        ] {
            let all = sources(&demo);
            let mut store = Store::new(crate::store::StoreSettings {
                ports: vec![crate::demo::LISTENER_PORT],
                ..Default::default()
            });
            for t in 540..600 {
                for s in &all {
                    apply(&mut store, &demo, *s, t);
                }
            }
            let before = parts_of(&store);
            let mut moved = [false; 5];
            // Two samples a second apart (rates are of the last two) at other phases of the
            // demo's next cycle: a checkpoint stall with zone reclaim, a lock chain, a replica
            // lagging; and of another instance (the demo never moves a session's client: there
            // other clients are on other hosts).
            let cycle = crate::demo::timeline::CYCLE;
            let other = DemoInstance::new(9).with_sessions(40);
            for (s, t, from) in all.iter().flat_map(|s| {
                [230, 300, 680]
                    .map(|t| (s, cycle + t, &demo))
                    .into_iter()
                    .chain([(s, cycle + 300, &other)])
            }) {
                let mut one = store.clone();
                apply(&mut one, from, *s, t);
                apply(&mut one, from, *s, t + 1);
                for (i, ((name, inputs, was), (_, _, now))) in
                    before.iter().zip(parts_of(&one)).enumerate()
                {
                    let named = inputs
                        .iter()
                        .any(|k| std::mem::discriminant(k) == std::mem::discriminant(s));
                    if named {
                        moved[i] |= *was != now;
                    } else {
                        assert_eq!(
                            *was,
                            now,
                            "{name} changed with {} at {t}s, which it does not name",
                            s.label()
                        );
                    }
                }
            }
            assert_eq!(moved, [true; 5], "each part moves with one of its sources");
        }
    }
}
