//! When a finding is an incident for the flight recorder (`collect/ring.rs`): it reached
//! warning (the findings' own severities, docs/findings.md: no threshold of its own), and it
//! ends when no finding of its kind about the same thing ([`subject`]) has been at warning for
//! [`CLEAR_AFTER_S`].

use crate::collect::ring::Event;
use crate::model::findings::{Culprit, FindingKind, Severity};
use crate::model::snapshot::Snapshot;

/// An incident ends when its finding has been below warning (or gone) this long: a lock chain
/// whose oldest wait goes under the warning's 5 s for a sample is one incident, not two.
pub const CLEAR_AFTER_S: f64 = 10.0;

/// An incident open: its kind and subject, the culprit it was first named with (the first
/// named one, when it began with none), and the last moment it was at warning.
#[derive(Debug)]
struct Open {
    kind: FindingKind,
    subject: String,
    culprit: String,
    /// The culprit was named after the incident began (its line has none).
    named_later: bool,
    last: f64,
}

/// The incidents open, by kind and subject.
#[derive(Debug, Default)]
pub struct IncidentWatch {
    open: Vec<Open>,
    /// Only these kinds make incidents (all when empty).
    kinds: Vec<FindingKind>,
}

/// A culprit in a few words: `sid 52, 61`, `table stores.orders`, `chunk 3 /dev/sdb`.
pub fn culprit_text(c: &Culprit) -> String {
    let mut parts = Vec::new();
    if !c.sids.is_empty() {
        let sids: Vec<String> = c.sids.iter().map(|s| s.to_string()).collect();
        parts.push(format!("sid {}", sids.join(", ")));
    }
    if let Some(o) = &c.object {
        parts.push(o.clone());
    }
    if let Some(ch) = c.chunk {
        parts.push(format!("chunk {ch}"));
    }
    if let Some(d) = &c.device {
        parts.push(d.clone());
    }
    if let Some(p) = &c.peer {
        parts.push(p.clone());
    }
    if let Some(n) = c.numa_node {
        parts.push(format!("node {n}"));
    }
    parts.join(" ")
}

/// What a finding is about, the key of its incident: the thing it names (a mutex, a table, a
/// device, a replica, a client), not who is to blame at the moment, which may change while it
/// holds (a mutex's holder passes from session to session; a long transaction's session is
/// named from its waiters, or from `onstat -x` when they are gone, or not at all for a second).
/// A lock chain is about its head blocker: another head is another chain. A finding there is
/// one of at a time (a blocked checkpoint, the oldest transaction, the CPU VPs, the server
/// blocked or off-line) is about the server: its kind alone.
pub fn subject(kind: FindingKind, c: &Culprit) -> String {
    match kind {
        FindingKind::LockChain => match c.sids.first() {
            Some(head) => format!("sid {head}"),
            None => c.object.clone().unwrap_or_default(),
        },
        FindingKind::Offline
        | FindingKind::CheckpointBlocked
        | FindingKind::LongTransaction
        | FindingKind::ServerBlocked
        | FindingKind::CpuSaturation
        | FindingKind::MemoryReclaim
        | FindingKind::LogsNotBackedUp
        | FindingKind::RingStopped => String::new(),
        FindingKind::ReplicaLag
        | FindingKind::SlowDevice
        | FindingKind::BufferHotSpot
        | FindingKind::MutexContention
        | FindingKind::ClientNetwork => culprit_text(&Culprit {
            sids: Vec::new(),
            hosts: Vec::new(),
            ..c.clone()
        }),
    }
}

impl IncidentWatch {
    /// Incidents of `kinds` only (every kind when empty).
    pub fn new(kinds: Vec<FindingKind>) -> Self {
        IncidentWatch {
            open: Vec::new(),
            kinds,
        }
    }

    /// What `snap` begins and ends.
    pub fn observe(&mut self, snap: &Snapshot) -> Vec<Event> {
        let t = snap.moment_s.unwrap_or(snap.at_s);
        let mut events = Vec::new();
        for f in &snap.findings {
            if f.severity < Severity::Warning
                || (!self.kinds.is_empty() && !self.kinds.contains(&f.kind))
            {
                continue;
            }
            let culprit = culprit_text(&f.culprit);
            let subject = subject(f.kind, &f.culprit);
            match self
                .open
                .iter_mut()
                .find(|o| o.kind == f.kind && o.subject == subject)
            {
                Some(o) => {
                    o.last = t;
                    if o.culprit.is_empty() && !culprit.is_empty() {
                        o.culprit = culprit;
                        o.named_later = true;
                    }
                }
                None => {
                    events.push(Event::Began {
                        t,
                        kind: f.kind.as_str().to_string(),
                        subject: subject.clone(),
                        severity: f.severity.as_str().to_string(),
                        culprit: culprit.clone(),
                        summary: f.summary.clone(),
                    });
                    self.open.push(Open {
                        kind: f.kind,
                        subject,
                        culprit,
                        named_later: false,
                        last: t,
                    });
                }
            }
        }
        self.open.retain(|o| {
            if t - o.last >= CLEAR_AFTER_S {
                events.push(Event::Ended {
                    t,
                    kind: o.kind.as_str().to_string(),
                    subject: o.subject.clone(),
                    culprit: o.named_later.then(|| o.culprit.clone()),
                });
                false
            } else {
                true
            }
        });
        events
    }
}
