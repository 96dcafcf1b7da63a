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
}

/// The parts kept between snapshots of one store (the owner of the store keeps one, next to
/// it; a snapshot built alone starts from an empty one).
#[derive(Default)]
pub struct Parts {
    numa: Slot<crate::model::numa::NumaView>,
    io: Slot<crate::model::io::IoView>,
    replication: Slot<crate::model::io::Replication, Option<Vec<String>>>,
    /// The time of the last snapshot built.
    last: Option<Duration>,
    counts: Counts,
}

impl Parts {
    /// What was built and reused so far.
    pub fn counts(&self) -> Counts {
        self.counts
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

/// The parts of a snapshot at `now`, kept in `parts` for the next.
pub(crate) fn begin(parts: &mut Parts, now: Duration) {
    parts.begin(now);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::sample::Update;
    use crate::model::snapshot::{build_from, build_with};
    use crate::source::Source;

    fn update(source: Source, text: &str, t: u64) -> Update {
        Update {
            source,
            t: Duration::from_secs(t),
            took: Duration::ZERO,
            result: Ok(source.parse_str(text).expect("parses")),
            how: Default::default(),
        }
    }

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
