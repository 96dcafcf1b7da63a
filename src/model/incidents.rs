//! When a finding is an incident for the flight recorder (`collect/ring.rs`): it reached
//! warning (the findings' own severities, docs/findings.md: no threshold of its own), and it
//! ends when no finding of its kind and culprit has been at warning for [`CLEAR_AFTER_S`].

use crate::collect::ring::Event;
use crate::model::findings::{Culprit, FindingKind, Severity};
use crate::model::snapshot::Snapshot;

/// An incident ends when its finding has been below warning (or gone) this long: a lock chain
/// whose oldest wait goes under the warning's 5 s for a sample is one incident, not two.
pub const CLEAR_AFTER_S: f64 = 10.0;

/// The incidents open, by kind and culprit, with the last moment each was at warning.
#[derive(Debug, Default)]
pub struct IncidentWatch {
    open: Vec<(FindingKind, String, f64)>,
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
            match self
                .open
                .iter_mut()
                .find(|(k, c, _)| *k == f.kind && *c == culprit)
            {
                Some(o) => o.2 = t,
                None => {
                    events.push(Event::Began {
                        t,
                        kind: f.kind.as_str().to_string(),
                        severity: f.severity.as_str().to_string(),
                        culprit: culprit.clone(),
                        summary: f.summary.clone(),
                    });
                    self.open.push((f.kind, culprit, t));
                }
            }
        }
        self.open.retain(|(k, c, last)| {
            if t - *last >= CLEAR_AFTER_S {
                events.push(Event::Ended {
                    t,
                    kind: k.as_str().to_string(),
                    culprit: c.clone(),
                });
                false
            } else {
                true
            }
        });
        events
    }
}
