//! Every pane as text, the one door `commands` use to the screen's code: `ifxtop snapshot`'s
//! text report, with the NUMA, Server and I/O panes written as the screen lays them out.

use crate::format::{human_bytes, human_duration};
use crate::model::snapshot::Snapshot;
use std::fmt::Write as _;

/// The snapshot as a plain-text report.
pub fn text(snap: &Snapshot) -> crate::format::SafeText {
    crate::format::SafeText::new(&raw_text(snap))
}

/// The report before the sanitizer: user names, verdicts and host names as the sources gave them.
fn raw_text(snap: &Snapshot) -> String {
    let mut s = String::new();
    let sv = &snap.server;
    let _ = writeln!(
        s,
        "ifxtop snapshot {}  host {}  server {}  {} {}{}{}",
        snap.time
            .clone()
            .unwrap_or_else(|| format!("at {}", human_duration(snap.at_s))),
        snap.host.as_deref().unwrap_or("?"),
        sv.name.as_deref().unwrap_or("?"),
        sv.version.as_deref().unwrap_or(""),
        sv.mode.as_deref().unwrap_or(""),
        sv.mode_flags
            .iter()
            .map(|f| format!(" ({f})"))
            .collect::<String>(),
        sv.blocked
            .as_deref()
            .map(|b| format!("  Blocked:{b}"))
            .unwrap_or_default()
    );
    if let Some(off) = &sv.offline {
        let _ = writeln!(s, "OFF-LINE: {off}");
    }
    findings(&mut s, snap);
    if let Some(a) = &snap.activity {
        let _ = writeln!(s);
        // Times as seconds of the session: the snapshot's clock line above says the moment.
        s.push_str(&a.text(&|t| format!("{t:.0} s")));
    }
    let counts: Vec<String> = snap
        .summary
        .by_reason
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let _ = writeln!(
        s,
        "\nWAITERS  {}  ({}, {}, {} not listed)",
        counts.join("  "),
        crate::format::count(snap.summary.threads as u64, "thread", "threads"),
        crate::format::count(snap.summary.sessions as u64, "session", "sessions"),
        crate::format::count(
            snap.summary.idle as u64,
            "idle client wait",
            "idle client waits"
        )
    );
    let _ = writeln!(
        s,
        "{:>6} {:<10} {:<10} {:>7}  WHY",
        "SID", "USER", "WAIT", "IN WAIT"
    );
    let mut waiters: Vec<_> = snap.waiters.iter().filter(|w| !w.idle).collect();
    // The TUI's default order.
    waiters.sort_by(|a, b| b.priority().total_cmp(&a.priority()));
    // An empty section says so: a header over nothing reads as a cut report.
    if waiters.is_empty() {
        let _ = writeln!(s, "{:>6} none waiting", "");
    }
    for w in waiters {
        let _ = writeln!(
            s,
            "{:>6} {:<10} {:<10} {:>7}  {}",
            w.sessid,
            w.user,
            w.reason.short(),
            crate::format::human_duration_bound(w.in_wait_s, w.in_wait_s_at_least),
            w.verdict
        );
    }
    if !snap.heads.is_empty() {
        let _ = writeln!(s, "\nHEAD BLOCKERS (most harm first; ifxtop only reads)");
        let _ = writeln!(
            s,
            "{:>6} {:<10} {:<24} {:>6}  SQL",
            "SID", "USER", "STATE", "BLOCKS"
        );
        for h in &snap.heads {
            let sql = h
                .sql
                .as_deref()
                .map(|q| {
                    crate::format::printable(&q.split_whitespace().collect::<Vec<_>>().join(" "))
                })
                .unwrap_or_else(|| crate::model::activity::NOT_READ.into());
            let _ = writeln!(
                s,
                "{:>6} {:<10} {:<24} {:>6}  {}",
                h.sid,
                h.user,
                format!(
                    "{}, {}",
                    h.state,
                    crate::format::count(h.locks, "lock", "locks")
                ),
                h.blocked,
                sql
            );
            // The plan of the query it runs, where its screen was open (`onstat -g pqs`).
            let plan = snap
                .session_views
                .iter()
                .find(|v| v.sid == h.sid)
                .map_or(&[][..], |v| v.plan.as_slice());
            for (i, step) in plan.iter().enumerate() {
                let _ = writeln!(
                    s,
                    "{:>6} {:<5} {}",
                    "",
                    if i == 0 { "plan:" } else { "" },
                    crate::format::printable(&step.line())
                );
            }
            if let Some(a) = &h.action {
                let _ = writeln!(s, "{:>6} what helps: {}", "", crate::format::printable(a));
            }
        }
    }
    let _ = writeln!(s, "\nSESSIONS (busiest first)");
    let _ = writeln!(
        s,
        "{:>6} {:<10} {:<18} {:>6} {:>7} {:>7} {:>7}  WAITING ON",
        "SID", "USER", "STATE", "BLOCKS", "TIME", "RD/s", "WR/s"
    );
    let mut active: Vec<_> = snap
        .sessions
        .iter()
        .filter(|r| r.state != crate::model::sessions::SessionState::Idle)
        .collect();
    let busy = |r: &crate::model::sessions::SessionRow| {
        r.reads_per_s.unwrap_or(0.0) + r.writes_per_s.unwrap_or(0.0)
    };
    active.sort_by(|a, b| {
        b.harm
            .rank_key()
            .cmp(&a.harm.rank_key())
            .then(busy(b).total_cmp(&busy(a)))
            .then(a.sessid.cmp(&b.sessid))
    });
    let rate = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.1}"));
    if active.is_empty() {
        let _ = writeln!(s, "{:>6} none active", "");
    }
    for r in active.iter().take(30) {
        let line = format!(
            "{:>6} {:<10} {:<18} {:>6} {:>7} {:>7} {:>7}  {}",
            r.sessid,
            r.user,
            r.state_words(),
            r.blocks.len(),
            r.in_state_s.map_or("-".to_string(), |t| {
                crate::format::human_duration_bound(t, r.in_state_s_at_least)
            }),
            rate(r.reads_per_s),
            rate(r.writes_per_s),
            r.waiting_on.as_deref().unwrap_or("")
        );
        let _ = writeln!(s, "{}", line.trim_end());
    }
    let idle = snap.sessions.len() - active.len();
    let more = active.len().saturating_sub(30);
    let _ = writeln!(
        s,
        "({} more active, {} not listed)",
        more,
        crate::format::count(idle as u64, "idle session", "idle sessions")
    );
    let _ = writeln!(s, "\nBUFFER HOT SPOTS");
    let _ = writeln!(
        s,
        "{:<44} {:>4} {:>6} {:>8} {:>6} {:>6}",
        "OBJECT", "NOW", "WIN", "SAMPLES", "TOTAL", "PAGES"
    );
    if snap.hotspots.is_empty() {
        let _ = writeln!(s, "none (no buffer waits seen)");
    }
    for h in snap.hotspots.iter().take(20) {
        let _ = writeln!(
            s,
            "{:<44} {:>4} {:>6} {:>8} {:>6} {:>6}",
            h.object,
            h.current_waiters,
            h.waiters_window,
            format!("{}/{}", h.samples_window, h.window_samples),
            h.waiters_total,
            h.distinct_pages
        );
    }
    let _ = writeln!(s, "\nSOCKETS (by Send-Q)");
    let _ = writeln!(
        s,
        "{:<22} {:>6} {:<12} {:>9} {:>8} {:>9}",
        "REMOTE", "SID", "STATE", "SEND-Q", "RECV-Q", "MAX SQ"
    );
    let queued: Vec<_> = snap
        .sockets
        .iter()
        .filter(|k| k.send_q > 0 || k.max_send_q > 0)
        .collect();
    if queued.is_empty() {
        let _ = writeln!(s, "none with data queued");
    }
    for k in queued.into_iter().take(20) {
        let _ = writeln!(
            s,
            "{:<22} {:>6} {:<12} {:>9} {:>8} {:>9}",
            k.remote.to_string(),
            k.sessid.map_or("-".to_string(), |x| x.to_string()),
            k.state.map(|x| x.as_str()).unwrap_or(""),
            human_bytes(k.send_q),
            k.recv_q,
            human_bytes(k.max_send_q)
        );
    }
    let quiet = snap
        .sockets
        .iter()
        .filter(|k| k.send_q == 0 && k.max_send_q == 0)
        .count();
    let _ = writeln!(
        s,
        "({} with nothing queued not listed)",
        crate::format::count(quiet as u64, "connection", "connections")
    );
    let _ = writeln!(s, "\nNUMA");
    s.push_str(&crate::tui::views::numa::report_text(snap));
    s.push('\n');
    s.push_str(&crate::tui::server_lines::report_text(snap));
    let _ = writeln!(
        s,
        "\nI/O & HA (chunks slowest first; IFX: Informix's time per op)"
    );
    s.push_str(&crate::tui::views::io::report_text(snap));
    let failing: Vec<_> = snap.sources.iter().filter(|x| x.error.is_some()).collect();
    if !failing.is_empty() {
        let _ = writeln!(s, "\nSOURCES FAILING");
        for f in failing {
            let _ = writeln!(s, "{}: {}", f.source, f.error.as_deref().unwrap_or(""));
        }
    }
    s
}

/// The line the screen shows above the panes: the top finding above info with its marker and
/// how many others are above info (`⚠ lock chain 42s: sid 812 holds up 3 (...)  +1 more`), or
/// the calm line (`✓ calm: no finding above info`, `◔ watching: ...` while waits no rule has
/// judged yet are on).
pub fn headline(snap: &Snapshot) -> String {
    let (line, _, more) = crate::tui::views::header::finding_text(snap);
    format!("{line}{more}")
}

/// The findings, the worst first: each with its evidence and what helps.
fn findings(s: &mut String, snap: &Snapshot) {
    use crate::format::printable;
    use crate::model::findings::{calm_line, headline};
    let _ = writeln!(s, "\nFINDINGS (worst first; ifxtop only reads)");
    if headline(&snap.findings).is_none() {
        let _ = writeln!(
            s,
            "{}",
            calm_line(&snap.waiters, &snap.findings, &snap.vitals)
        );
    }
    for f in &snap.findings {
        let _ = writeln!(
            s,
            "{} {:<8} {}",
            f.severity.marker(),
            f.severity.as_str(),
            printable(&f.summary)
        );
        if let Some(held) = f.held_words() {
            let _ = writeln!(s, "{:>11}{held}", "");
        }
        for e in &f.evidence {
            let _ = writeln!(s, "{:>11}{}: {}", "", e.source, printable(&e.fact));
        }
        let _ = writeln!(s, "{:>11}what helps: {}", "", printable(&f.action));
    }
}
