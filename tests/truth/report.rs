//! The oracle's tally: per join (and per finding check) and per incident, how many answers were
//! named right, left unknown, or wrong. Silence is counted, not skipped: a holder ifxtop does not
//! name is an unknown, and the floors say how much silence is allowed.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Tally of one kind of answer.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    pub checked: u64,
    pub right: u64,
    pub unknown: u64,
    pub wrong: u64,
}

impl Tally {
    fn add(&mut self, o: Tally) {
        self.checked += o.checked;
        self.right += o.right;
        self.unknown += o.unknown;
        self.wrong += o.wrong;
    }

    /// The share named (right) of what was checked, %.
    pub fn named_pct(&self) -> f64 {
        if self.checked == 0 {
            100.0
        } else {
            100.0 * self.right as f64 / self.checked as f64
        }
    }
}

#[derive(Debug, Default)]
pub struct Report {
    pub kinds: BTreeMap<&'static str, Tally>,
    /// The same per incident (the incident playing at the moment checked).
    pub by_incident: BTreeMap<(&'static str, &'static str), Tally>,
    /// The first few wrong answers, for the failure message.
    pub examples: Vec<String>,
    /// A few unknowns per kind: where the silence is.
    pub silences: BTreeMap<&'static str, Vec<String>>,
    /// The incident of the moment being checked.
    pub incident: &'static str,
}

/// Wrong answers kept in all (`IFXTOP_ORACLE_EXAMPLES` raises both caps, to diagnose a run).
fn examples_cap() -> usize {
    examples_env().map_or(80, |n| n.max(80))
}
/// Wrong answers kept per kind and incident.
fn per_kind_cap() -> usize {
    examples_env().unwrap_or(2)
}
fn examples_env() -> Option<usize> {
    std::env::var("IFXTOP_ORACLE_EXAMPLES").ok()?.parse().ok()
}
const SILENCES: usize = 4;

impl Report {
    fn tally(&mut self, kind: &'static str) -> (&mut Tally, &mut Tally) {
        let t = self.kinds.entry(kind).or_default();
        let i = self.by_incident.entry((kind, self.incident)).or_default();
        (t, i)
    }

    pub fn right(&mut self, kind: &'static str) {
        let (t, i) = self.tally(kind);
        for x in [t, i] {
            x.checked += 1;
            x.right += 1;
        }
    }

    pub fn unknown(&mut self, kind: &'static str) {
        let (t, i) = self.tally(kind);
        for x in [t, i] {
            x.checked += 1;
            x.unknown += 1;
        }
    }

    /// An unknown, with where it was (kept for a few).
    pub fn silent(&mut self, kind: &'static str, what: String) {
        self.unknown(kind);
        let v = self.silences.entry(kind).or_default();
        if v.len() < SILENCES {
            v.push(what);
        }
    }

    pub fn wrong(&mut self, kind: &'static str, what: String) {
        let (t, i) = self.tally(kind);
        for x in [t, i] {
            x.checked += 1;
            x.wrong += 1;
        }
        let tag = format!("{kind} [{}]", self.incident);
        let n = self.examples.iter().filter(|e| e.starts_with(&tag)).count();
        let e = format!("{tag}: {what}");
        if self.examples.len() < examples_cap() && n < per_kind_cap() && !self.examples.contains(&e)
        {
            self.examples.push(e);
        }
    }

    /// Right or wrong as `ok` says.
    pub fn judge(&mut self, kind: &'static str, ok: bool, what: impl FnOnce() -> String) {
        if ok {
            self.right(kind);
        } else {
            self.wrong(kind, what());
        }
    }

    pub fn wrong_total(&self) -> u64 {
        self.kinds.values().map(|t| t.wrong).sum()
    }

    pub fn merge(&mut self, other: Report) {
        for (k, t) in other.kinds {
            self.kinds.entry(k).or_default().add(t);
        }
        for (k, t) in other.by_incident {
            self.by_incident.entry(k).or_default().add(t);
        }
        for (k, v) in other.silences {
            let mine = self.silences.entry(k).or_default();
            for s in v {
                if mine.len() < SILENCES {
                    mine.push(s);
                }
            }
        }
        for e in other.examples {
            if self.examples.len() < examples_cap() && !self.examples.contains(&e) {
                self.examples.push(e);
            }
        }
    }

    /// Per join: checked, named (right), unknown, wrong and the share named.
    pub fn table(&self) -> String {
        let mut s = format!(
            "{:<28} {:>9} {:>9} {:>9} {:>7} {:>8}\n",
            "join / check", "checked", "named", "unknown", "wrong", "named %"
        );
        for (k, t) in &self.kinds {
            let _ = writeln!(
                s,
                "{k:<28} {:>9} {:>9} {:>9} {:>7} {:>8.2}",
                t.checked,
                t.right,
                t.unknown,
                t.wrong,
                t.named_pct()
            );
        }
        s
    }

    /// The joins whose name starts with one of `prefixes`, per incident.
    pub fn incident_table(&self, prefixes: &[&str]) -> String {
        let mut s = format!(
            "{:<28} {:<22} {:>8} {:>8} {:>8} {:>6} {:>8}\n",
            "join / check", "incident", "checked", "named", "unknown", "wrong", "named %"
        );
        for ((k, i), t) in &self.by_incident {
            if !prefixes.iter().any(|p| k.starts_with(p)) {
                continue;
            }
            let _ = writeln!(
                s,
                "{k:<28} {i:<22} {:>8} {:>8} {:>8} {:>6} {:>8.2}",
                t.checked,
                t.right,
                t.unknown,
                t.wrong,
                t.named_pct()
            );
        }
        s
    }

    /// Where some of the silences were.
    pub fn silence_examples(&self) -> String {
        let mut s = String::new();
        for (k, v) in &self.silences {
            for e in v {
                let _ = writeln!(s, "unknown {k}: {e}");
            }
        }
        s
    }

    /// Every kind whose name starts with `prefix` is named for at least `floor` % of what was
    /// checked: the failures, in words.
    pub fn below_floor(&self, prefix: &str, floor: f64) -> Vec<String> {
        self.kinds
            .iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .filter(|(_, t)| t.named_pct() < floor)
            .map(|(k, t)| {
                format!(
                    "{k}: named {:.2} % of {} (floor {floor} %)",
                    t.named_pct(),
                    t.checked
                )
            })
            .collect()
    }
}
