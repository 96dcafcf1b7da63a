//! One line per watched instance for the fleet screen: what a DBA scans first on each server
//! (mode, blocked reason, waiters by reason, lock and buffer waits per second, worst chunk
//! latency, replication lag, CPU, data age and what fails), read from that instance's snapshot.

use crate::model::io::Concern;
use crate::model::snapshot::Snapshot;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// One instance on the fleet screen.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FleetRow {
    /// `ol_prod`, `ol_prod@db01`.
    pub instance: String,
    pub host: Option<String>,
    /// `On-Line`, `On-Line (CKPT REQ)`, `OFF-LINE`, or `-` before the first answer.
    pub mode: String,
    pub blocked: Option<String>,
    /// Threads waiting, per reason letter, idle client waits left out.
    pub waiters: BTreeMap<char, usize>,
    pub lock_waits_per_s: Option<f64>,
    pub buffer_waits_per_s: Option<f64>,
    /// The slowest chunk's latency (its device's await, else Informix's time per operation), ms.
    pub worst_chunk_ms: Option<f64>,
    /// The secondary furthest behind: `ol_dr1 1,234pg 40s`, `ol_dr1 BLOCKED 9,000pg`.
    pub replication_lag: Option<String>,
    /// That secondary needs a look (transmission blocked, or behind past the warning).
    pub replication_alarm: bool,
    /// The busiest VP class's busy %, with its name.
    pub cpu: Option<(String, f64)>,
    /// Age of the newest `onstat -u` data, seconds.
    pub age_s: Option<f64>,
    /// Why the instance is not answering, when it is not: off-line, ssh unreachable, a failed
    /// onstat.
    pub problem: Option<String>,
    /// The top finding above info, its marker first (`⚠ lock chain 42s: sid 812 ...`).
    pub finding: Option<String>,
    /// Needs a look, by one rule for the row's mark, the title's count and the PROBLEM column:
    /// a problem (`!`) or a finding above info (its own mark, `⚠` or `✖`). A blocked server,
    /// a slow device or a lagging secondary needs a look through its finding.
    pub alarm: bool,
    /// The mark of a row that needs a look (`!`, `⚠`, `✖`), `None` otherwise.
    pub mark: Option<&'static str>,
    /// No `onstat -u` answer yet: not a problem (yet), said across the line.
    pub waiting: bool,
}

/// The fleet line of one instance at session time `now`.
pub fn row(instance: &str, snap: &Snapshot, now: Duration) -> FleetRow {
    let s = &snap.server;
    let mode = match (&s.offline, &s.mode) {
        (Some(_), _) => "OFF-LINE".to_string(),
        (None, Some(m)) => {
            let mut mode = m.clone();
            for f in &s.mode_flags {
                mode.push_str(&format!(" ({f})"));
            }
            mode
        }
        (None, None) => "-".to_string(),
    };
    let mut waiters = BTreeMap::new();
    for w in snap.waiters.iter().filter(|w| !w.idle) {
        *waiters.entry(w.reason.letter()).or_insert(0) += 1;
    }
    let rates = snap.vitals.rates.as_ref();
    let cpu = snap
        .vitals
        .vps
        .iter()
        .filter_map(|v| v.busy_pct.map(|b| (v.class.clone(), b)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let onstat_u = snap.sources.iter().find(|st| st.source == "onstat -u");
    let age_s = onstat_u
        .and_then(|st| st.age_s)
        .map(|a| a + (now.as_secs_f64() - snap.at_s).max(0.0));
    let problem = s
        .offline
        .as_ref()
        .map(|m| format!("off-line: {m}"))
        .or_else(|| {
            // What fails first among the sources that matter most, else any.
            let failing = |name: &str| {
                snap.sources
                    .iter()
                    .find(|st| st.source == name && st.error.is_some())
            };
            failing("onstat -u")
                .or_else(|| snap.sources.iter().find(|st| st.error.is_some()))
                .and_then(|st| st.error.as_ref().map(|e| format!("{}: {e}", st.source)))
        });
    let worst_chunk_ms = snap.io.worst().and_then(|c| c.latency_ms());
    let worst_peer = snap.replication.worst();
    let replication_alarm = worst_peer.is_some_and(|p| {
        p.transmission.as_deref() == Some("Blocked") || p.concern >= Concern::Warn
    });
    let replication_lag = worst_peer.map(|p| {
        let mut t = p.name.clone();
        if p.transmission.as_deref() == Some("Blocked") {
            t.push_str(" BLOCKED");
        }
        if let Some(n) = p.lag_pages {
            t.push_str(&format!(" {}pg", crate::format::thousands(n)));
        }
        if let Some(secs) = p.lag_s {
            t.push_str(&format!(" {}", crate::format::human_duration(secs)));
        }
        t
    });
    let top = crate::model::findings::headline(&snap.findings);
    let waiting = onstat_u.is_none() && problem.is_none();
    let mark = match (&problem, top) {
        (Some(_), _) => Some("!"),
        (None, Some(f)) => Some(f.severity.marker()),
        (None, None) => None,
    };
    FleetRow {
        instance: instance.to_string(),
        host: snap.host.clone(),
        mode,
        blocked: s.blocked.clone(),
        waiters,
        lock_waits_per_s: rates.and_then(|r| r.lokwaits),
        buffer_waits_per_s: rates.and_then(|r| r.bufwaits),
        worst_chunk_ms,
        replication_lag,
        replication_alarm,
        cpu,
        age_s,
        problem,
        finding: top.map(|f| f.line()),
        alarm: mark.is_some(),
        mark,
        waiting,
    }
}

/// `L3 B2 Y1`: the reasons with the most waiters first.
pub fn waiters_text(w: &BTreeMap<char, usize>) -> String {
    let mut v: Vec<(char, usize)> = w.iter().map(|(c, n)| (*c, *n)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.iter()
        .map(|(c, n)| format!("{c}{n}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiters_most_first() {
        let mut w = BTreeMap::new();
        w.insert('B', 2);
        w.insert('L', 3);
        w.insert('Y', 2);
        assert_eq!(waiters_text(&w), "L3 B2 Y2");
        assert_eq!(waiters_text(&BTreeMap::new()), "");
    }

    #[test]
    fn an_empty_snapshot_is_waiting_not_alarmed() {
        let r = row("ol_x", &Snapshot::default(), Duration::from_secs(3));
        assert_eq!(r.mode, "-");
        assert!(r.waiting);
        assert_eq!(r.problem, None);
        assert!(!r.alarm);
        assert_eq!(r.mark, None);
        assert_eq!(r.finding, None);
    }
}
