//! `ifxtop snapshot`: every pane once, as text or JSON, for tickets and chat. From the demo at a
//! point of its timeline, from a recording, or from the local instance.

use crate::collect::sample::{parse_output, RawSample, Update};
use crate::error::{Error, SourceError};
use crate::format::{human_bytes, human_duration};
use crate::model::snapshot::Snapshot;
use crate::source::{Output, Request, Source};
use crate::store::Store;
use std::fmt::Write as _;
use std::time::Duration;

/// The sources the live collectors poll, with their periods (at an interval of 1 s).
pub fn schedule() -> Vec<(Source, Duration)> {
    [
        Source::OnstatU,
        Source::OnstatGCon,
        Source::ProcNetTcp6,
        Source::ProcNetTcp,
        Source::OnstatX,
        Source::OnstatK,
        Source::OnstatGAth,
        Source::OnstatGNtt,
        Source::NodesOnline,
        Source::ZoneReclaimMode,
        Source::Vmstat,
    ]
    .into_iter()
    .map(|s| {
        let p = s.period();
        (s, p)
    })
    .collect()
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
    let mut once: Vec<Source> = vec![Source::OncheckPe, Source::Systabnames];
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
                    if let Some(crate::collect::sample::Parsed::NodeList(nodes)) =
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
    // The TUI's default order.
    waiters.sort_by(|a, b| b.priority().total_cmp(&a.priority()));
    for w in waiters {
        let _ = writeln!(
            s,
            "{:>6} {:<10} {:<10} {:>7}  {}",
            w.sessid,
            w.user,
            w.reason.short(),
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
    s.push_str(&crate::tui::views::numa::report_text(snap));
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

/// How far before `--at` the demo simulation starts, so windows and rates are filled.
pub const DEMO_WARMUP: Duration = Duration::from_secs(120);

/// `ifxtop snapshot`.
pub fn run_cli(args: &crate::cli::SnapshotArgs) -> std::process::ExitCode {
    match snapshot_for(args) {
        Ok(snap) => {
            let out = match args.format {
                crate::cli::Format::Text => Ok(text(&snap)),
                crate::cli::Format::Json => json(&snap),
            };
            match out {
                Ok(s) => {
                    use std::io::Write;
                    let mut o = std::io::stdout().lock();
                    let _ = o.write_all(s.as_bytes());
                    if !s.ends_with('\n') {
                        let _ = writeln!(o);
                    }
                    std::process::ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("ifxtop snapshot: {e}");
                    std::process::ExitCode::from(1)
                }
            }
        }
        Err(e) => {
            eprintln!("ifxtop snapshot: {e}");
            std::process::ExitCode::from(match e {
                Error::Usage(_) => 2,
                _ => 1,
            })
        }
    }
}

fn at_arg(at: Option<f64>) -> Result<Option<Duration>, Error> {
    at.map(|s| {
        Duration::try_from_secs_f64(s)
            .map_err(|_| Error::Usage(format!("--at {s}: a number of seconds, 0 or more")))
    })
    .transpose()
}

/// The snapshot `ifxtop snapshot` prints, from the demo, a recording, or the live instance.
pub fn snapshot_for(args: &crate::cli::SnapshotArgs) -> Result<Snapshot, Error> {
    use crate::store::StoreSettings;
    let at = at_arg(args.at)?;
    let mut settings = StoreSettings {
        base_page_kb: args.base_page_kb,
        ports: args.ports.clone(),
        ..StoreSettings::default()
    };
    if let Some(path) = &args.replay {
        let rec = crate::collect::record::read_recording(path)?;
        for s in &rec.skipped {
            eprintln!("ifxtop snapshot: {}: {s}", path.display());
        }
        if settings.ports.is_empty() {
            settings.ports = rec
                .header
                .as_ref()
                .map(|h| h.ports.clone())
                .unwrap_or_default();
        }
        let server = rec.header.as_ref().and_then(|h| h.server.clone());
        let rec = std::sync::Arc::new(rec);
        let end = rec.length();
        let t = at.unwrap_or(end);
        let store = crate::store::replayed(rec, settings, Some(t));
        return Ok(crate::model::snapshot::build(
            &store,
            t,
            server.as_deref(),
            &[],
        ));
    }
    if args.demo {
        if settings.ports.is_empty() {
            settings.ports = vec![crate::demo::LISTENER_PORT];
        }
        let demo = crate::demo::DemoInstance::new(args.seed).with_sessions(args.demo_sessions);
        let to = at.unwrap_or(DEMO_WARMUP);
        let from = to.saturating_sub(DEMO_WARMUP);
        let mut store = Store::new(settings.clone());
        let mut samples: Vec<RawSample> = Vec::new();
        simulate(
            &|req, t| demo.respond(req, t),
            &[],
            from,
            to,
            &mut store,
            &mut |s| samples.push(s),
        );
        if let Some(path) = &args.record {
            write_recording(path, Some("ol_demo"), &settings, &samples)?;
        }
        return Ok(crate::model::snapshot::build(
            &store,
            to,
            Some("ol_demo"),
            &[],
        ));
    }
    Err(Error::Usage(
        "snapshot of a live instance: run `ifxtop` on the server and press e to export, \
         or use --demo / --replay FILE"
            .into(),
    ))
}

/// Writes samples as a recording file (the same format `--record` writes).
pub fn write_recording(
    path: &std::path::Path,
    server: Option<&str>,
    settings: &crate::store::StoreSettings,
    samples: &[RawSample],
) -> Result<(), Error> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<RawSample>(samples.len().max(1));
    let header = crate::collect::record::RecordingHeader::now(
        server,
        &settings.ports,
        settings.base_page_kb,
    );
    let rec = crate::collect::record::Recorder::start(path, u64::MAX / (1024 * 1024), &header, rx)?;
    for s in samples {
        tx.send(s.clone())
            .map_err(|_| Error::Other("recorder stopped".into()))?;
    }
    drop(tx);
    rec.finish().map(|_| ())
}
