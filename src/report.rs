//! `ifxtop snapshot`: every pane once, as text or JSON, for tickets and chat. From the demo at a
//! point of its timeline, from a recording, or from the local instance.

use crate::error::{Error, SourceError};
use crate::model::snapshot::{human_bytes, Snapshot};
use crate::sample::{parse_output, RawSample, Update};
use crate::source::{Output, Request, Source};
use crate::store::Store;
use crate::views::panes::{human_duration, reason_short};
use std::fmt::Write as _;
use std::time::Duration;

/// A source and its period, as the live collectors poll them (at an interval of 1 s).
pub fn schedule() -> Vec<(Source, Duration)> {
    use crate::collect::{PERIOD_BUFFERS, PERIOD_FAST, PERIOD_JOINS, PERIOD_NUMA};
    vec![
        (Source::OnstatU, PERIOD_FAST),
        (Source::OnstatGCon, PERIOD_FAST),
        (Source::ProcNetTcp6, PERIOD_FAST),
        (Source::ProcNetTcp, PERIOD_FAST),
        (Source::OnstatX, PERIOD_BUFFERS),
        (Source::OnstatK, PERIOD_JOINS),
        (Source::OnstatGAth, PERIOD_JOINS),
        (Source::OnstatGNtt, PERIOD_JOINS),
        (Source::NodesOnline, PERIOD_NUMA),
        (Source::ZoneReclaimMode, PERIOD_NUMA),
        (Source::Vmstat, PERIOD_NUMA),
    ]
}

/// Plays the live collectors' schedule on a virtual clock from `from` to `to` against a pure
/// responder (the demo instance), applying every output to `store` and handing each raw output
/// to `record` — exactly what a live session at those times would have collected.
pub fn simulate(
    respond: &dyn Fn(&Request, Duration) -> Result<Output, SourceError>,
    extra: &[Source],
    from: Duration,
    to: Duration,
    store: &mut Store,
    record: &mut dyn FnMut(RawSample),
) {
    let sched = schedule();
    let mut once: Vec<Source> = vec![Source::OncheckPe];
    once.extend(extra.iter().cloned());
    let mut collect = |source: &Source, t: Duration, store: &mut Store| {
        let request = source.request();
        let out = respond(&request, t);
        record(match &out {
            Ok(o) => RawSample {
                t: t.as_secs_f64(),
                source: source.label(),
                argv: request.argv(),
                exit: o.exit,
                stdout: o.stdout.clone(),
                stderr: o.stderr.clone(),
            },
            Err(e) => RawSample {
                t: t.as_secs_f64(),
                source: source.label(),
                argv: request.argv(),
                exit: None,
                stdout: String::new(),
                stderr: e.to_string(),
            },
        });
        let result = out.and_then(|o| parse_output(source, o));
        store.apply(Update {
            source: source.clone(),
            t,
            took: Duration::ZERO,
            result,
        });
    };
    for s in &once {
        collect(s, from, store);
    }
    // NUMA nodes are read per node, as the NUMA collector does.
    let mut t = from;
    while t <= to {
        for (source, period) in &sched {
            let p = period.as_millis().max(1);
            if (t.as_millis() - from.as_millis()) % p == 0 {
                collect(source, t, store);
                if *source == Source::NodesOnline {
                    if let Some(crate::sample::Parsed::NodeList(nodes)) =
                        store.parsed(&Source::NodesOnline).cloned()
                    {
                        for n in nodes.iter() {
                            collect(&Source::NodeMeminfo(*n), t, store);
                            if t == from {
                                collect(&Source::NodeCpulist(*n), t, store);
                            }
                        }
                    }
                }
            }
        }
        t += Duration::from_secs(1);
    }
}

/// The snapshot as a plain-text report.
pub fn text(snap: &Snapshot) -> String {
    let mut s = String::new();
    let sv = &snap.server;
    let _ = writeln!(
        s,
        "ifxtop snapshot at {}  server {}  {} {}{}{}",
        human_duration(snap.at_s),
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
    let counts: Vec<String> = snap
        .summary
        .by_reason
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let _ = writeln!(
        s,
        "\nWAITERS  {}  ({} threads, {} sessions, {} idle client waits not listed)",
        counts.join("  "),
        snap.summary.threads,
        snap.summary.sessions,
        snap.summary.idle
    );
    let _ = writeln!(
        s,
        "{:>6} {:<10} {:<10} {:>7}  WHY",
        "SID", "USER", "WAIT", "IN WAIT"
    );
    let mut waiters: Vec<_> = snap.waiters.iter().filter(|w| !w.idle).collect();
    waiters.sort_by(|a, b| b.in_wait_s.total_cmp(&a.in_wait_s));
    for w in waiters {
        let _ = writeln!(
            s,
            "{:>6} {:<10} {:<10} {:>7}  {}",
            w.sessid,
            w.user,
            reason_short(w.reason),
            human_duration(w.in_wait_s),
            w.verdict
        );
    }
    let _ = writeln!(s, "\nBUFFER HOT SPOTS");
    let _ = writeln!(
        s,
        "{:<44} {:>4} {:>6} {:>8} {:>6} {:>6}",
        "OBJECT", "NOW", "WIN", "SAMPLES", "TOTAL", "PAGES"
    );
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
    for k in snap
        .sockets
        .iter()
        .filter(|k| k.send_q > 0 || k.max_send_q > 0)
        .take(20)
    {
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
    let _ = writeln!(s, "({quiet} connections with nothing queued not listed)");
    let _ = writeln!(s, "\nNUMA");
    s.push_str(&crate::views::numa::report_text(snap));
    let failing: Vec<_> = snap.sources.iter().filter(|x| x.error.is_some()).collect();
    if !failing.is_empty() {
        let _ = writeln!(s, "\nSOURCES FAILING");
        for f in failing {
            let _ = writeln!(s, "{}: {}", f.source, f.error.as_deref().unwrap_or(""));
        }
    }
    s
}

/// The snapshot as JSON (the shape of `ifxtop snapshot --format json`).
pub fn json(snap: &Snapshot) -> Result<String, Error> {
    serde_json::to_string_pretty(snap).map_err(|e| Error::Other(e.to_string()))
}
