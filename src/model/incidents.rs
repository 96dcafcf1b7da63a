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
        // A hot spot not resolved to its table is named by its page (`3:280003`), and the
        // page of last-page inserts moves on every few seconds: the same hot spot, so its
        // chunk is what it is about.
        FindingKind::BufferHotSpot if c.object.as_deref().and_then(unresolved_chunk).is_some() => {
            let chunk = c.object.as_deref().and_then(unresolved_chunk);
            format!("chunk {}", chunk.unwrap_or_default())
        }
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

/// The chunk of a page named as `chunk:page` (a buffer wait's page the extent map did not
/// resolve), `None` for a table's or an index's name.
fn unresolved_chunk(object: &str) -> Option<&str> {
    let (chunk, page) = object.split_once(':')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(chunk) && digits(page)).then_some(chunk)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::ring::Event;
    use crate::ids::Sid;
    use crate::model::findings::Finding;

    fn finding(kind: FindingKind, sids: &[u64], object: Option<&str>) -> Finding {
        let mut f = Finding::of(kind, "x");
        f.culprit.sids = sids.iter().map(|s| Sid(*s)).collect();
        f.culprit.object = object.map(String::from);
        f
    }

    fn at(t: f64, findings: Vec<Finding>) -> Snapshot {
        Snapshot {
            at_s: t,
            moment_s: Some(t),
            findings,
            ..Snapshot::default()
        }
    }

    fn kinds(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .map(|e| match e {
                Event::Began { kind, culprit, .. } => format!("began {kind} {culprit}"),
                Event::Ended { kind, culprit, .. } => {
                    format!("ended {kind} {}", culprit.clone().unwrap_or_default())
                }
            })
            .collect()
    }

    /// A hot spot of last-page inserts not resolved to its table moves from page to page
    /// every few seconds (`3:280003`, `3:280004`, ...): one incident, not one a page (each
    /// cut writes minutes of the ring again). Another chunk's, or a table's, is another.
    #[test]
    fn an_unresolved_hot_spot_moving_page_to_page_is_one_incident() {
        let mut w = IncidentWatch::default();
        let mut events = Vec::new();
        for i in 0..6u64 {
            let page = format!("3:{}", 280_003 + i);
            let mut fs = vec![finding(FindingKind::BufferHotSpot, &[819 + i], Some(&page))];
            if i >= 4 {
                fs.push(finding(FindingKind::BufferHotSpot, &[900], Some("5:1200")));
                fs.push(finding(
                    FindingKind::BufferHotSpot,
                    &[901],
                    Some("order_log (stores)"),
                ));
            }
            events.extend(w.observe(&at(100.0 + 4.0 * i as f64, fs)));
        }
        assert_eq!(
            kinds(&events),
            [
                "began buffer_hot_spot sid 819 3:280003",
                "began buffer_hot_spot sid 900 5:1200",
                "began buffer_hot_spot sid 901 order_log (stores)",
            ]
        );
        assert_eq!(unresolved_chunk("3:280003"), Some("3"));
        assert_eq!(unresolved_chunk("stores:customer"), None);
        assert_eq!(unresolved_chunk("3:"), None);
    }

    /// One long transaction whose culprit is named from its waiters, then from `onstat -x`,
    /// then not at all for a second, is one incident; one mutex whose holder changes every
    /// second is one incident. Two lock chains of two heads are two.
    #[test]
    fn an_incident_is_its_findings_run_whatever_its_culprit() {
        let mut w = IncidentWatch::default();
        let mut events = Vec::new();
        let steps: [(&[u64], &[u64]); 6] = [
            (&[811], &[52]),
            (&[], &[61]),
            (&[811], &[70]),
            (&[900], &[52]),
            (&[811], &[61]),
            (&[811], &[]),
        ];
        for (i, (txn, holder)) in steps.iter().enumerate() {
            let mut fs = vec![
                finding(FindingKind::LongTransaction, txn, None),
                finding(FindingKind::LockChain, &[812], Some("stores:customer")),
            ];
            if !holder.is_empty() {
                fs.push(finding(
                    FindingKind::MutexContention,
                    holder,
                    Some("free_lock"),
                ));
            }
            if i >= 3 {
                fs.push(finding(
                    FindingKind::LockChain,
                    &[813],
                    Some("stores:orders"),
                ));
            }
            events.extend(w.observe(&at(100.0 + i as f64, fs)));
        }
        assert_eq!(
            kinds(&events),
            [
                "began long_transaction sid 811",
                "began lock_chain sid 812 stores:customer",
                "began mutex_contention sid 52 free_lock",
                "began lock_chain sid 813 stores:orders",
            ]
        );
        // All clear: each ends once, 10 s after it was last at warning.
        let ended = w.observe(&at(116.0, Vec::new()));
        assert_eq!(
            kinds(&ended),
            [
                "ended long_transaction ",
                "ended lock_chain ",
                "ended mutex_contention ",
                "ended lock_chain ",
            ]
        );
    }

    /// An incident that began with its culprit not known yet (a long transaction before its
    /// `onstat -x`) is named when it is: its end says whom.
    #[test]
    fn a_culprit_named_later_is_said_at_the_end() {
        let mut w = IncidentWatch::default();
        let began = w.observe(&at(
            10.0,
            vec![finding(FindingKind::LongTransaction, &[], None)],
        ));
        assert_eq!(kinds(&began), ["began long_transaction "]);
        assert!(w
            .observe(&at(
                11.0,
                vec![finding(FindingKind::LongTransaction, &[811], None)]
            ))
            .is_empty());
        let ended = w.observe(&at(30.0, Vec::new()));
        assert_eq!(kinds(&ended), ["ended long_transaction sid 811"]);
    }
}
