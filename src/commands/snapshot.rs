//! `ifxtop snapshot`: every pane once, as text or JSON, for tickets and chat. From the demo at a
//! point of its timeline, from a recording, or from the local instance.

use crate::collect::extents::ExtentSource;
use crate::collect::sample::RawSample;
use crate::collect::{Collection, SessionClock};
use crate::error::Error;
use crate::format::{human_bytes, human_duration};
use crate::model::snapshot::Snapshot;
use crate::store::{Store, StoreSettings};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

/// The snapshot as a plain-text report.
pub(crate) fn text(snap: &Snapshot) -> String {
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
            let sql = snap
                .session_views
                .iter()
                .find(|v| v.sid == h.sid)
                .and_then(|v| v.sql.as_deref())
                .map(|q| {
                    crate::format::printable(&q.split_whitespace().collect::<Vec<_>>().join(" "))
                })
                .unwrap_or_else(|| "-".into());
            let _ = writeln!(
                s,
                "{:>6} {:<10} {:<24} {:>6}  {}",
                h.sid,
                h.user,
                format!("{}, {} locks", h.state, h.locks),
                h.blocked,
                sql
            );
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
    let _ = writeln!(s, "({} more active, {idle} idle sessions not listed)", more);
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

/// The snapshot as JSON (the shape of `ifxtop snapshot --format json`).
pub fn json(snap: &Snapshot) -> Result<String, Error> {
    serde_json::to_string_pretty(snap).map_err(|e| Error::Other(e.to_string()))
}

/// How far before `--at` the demo simulation starts, so windows and rates are filled.
pub(crate) const DEMO_WARMUP: Duration = Duration::from_secs(120);

/// The report of one instance: the snapshot (or why there is none) and what makes it
/// incomplete.
fn report(args: &crate::cli::SnapshotArgs) -> (Result<Snapshot, Error>, Vec<String>) {
    if args.demo || args.replay.is_some() {
        (snapshot_for(args), Vec::new())
    } else {
        match live_report(args) {
            Ok((snap, problems)) => (Ok(snap), problems),
            Err(e) => (Err(e), Vec::new()),
        }
    }
}

/// The arguments of each instance the command line names, one instance each: `--demo-instances`
/// demo instances, each server of `--server a,b` on each `--ssh` host; else the one.
pub fn per_instance(
    args: &crate::cli::SnapshotArgs,
) -> Result<Vec<crate::cli::SnapshotArgs>, Error> {
    if args.replay.is_some() {
        return Ok(vec![args.clone()]);
    }
    if args.demo {
        let n = args.demo_instances;
        if !(1..=crate::tui::setup::MAX_INSTANCES).contains(&n) {
            return Err(Error::Usage(format!(
                "--demo-instances {n}: between 1 and {}",
                crate::tui::setup::MAX_INSTANCES
            )));
        }
        if !args.ssh.ssh.is_empty() {
            return Err(Error::Usage("--ssh: not with --demo here".into()));
        }
        return Ok((0..n as u64)
            .map(|i| {
                let mut a = args.clone();
                a.demo_index = i;
                a
            })
            .collect());
    }
    let servers: Vec<Option<String>> = match &args.server {
        None => vec![None],
        Some(list) => list
            .split(',')
            .map(|s| {
                let s = s.trim();
                if s.is_empty() || s.chars().any(char::is_control) {
                    Err(Error::Usage(format!(
                        "--server '{}': an empty name, or control characters in one",
                        crate::format::printable(list)
                    )))
                } else {
                    Ok(Some(s.to_string()))
                }
            })
            .collect::<Result<_, _>>()?,
    };
    let hosts: Vec<Option<crate::source::ssh::SshTarget>> = if args.ssh.ssh.is_empty() {
        vec![None]
    } else {
        args.ssh.ssh.iter().cloned().map(Some).collect()
    };
    let mut out = Vec::new();
    for h in &hosts {
        for server in &servers {
            let mut a = args.clone();
            a.server = server.clone();
            a.ssh.ssh = h.iter().cloned().collect();
            out.push(a);
        }
    }
    if out.len() > 1 && args.record.is_some() {
        return Err(Error::Usage(format!(
            "--record: records one instance, and {} are named",
            out.len()
        )));
    }
    Ok(out)
}

/// Writes a finished report to standard output.
fn print(s: &str) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(s.as_bytes());
    if !s.ends_with('\n') {
        let _ = writeln!(o);
    }
}

/// `ifxtop snapshot`.
pub fn run_cli(args: &crate::cli::SnapshotArgs) -> std::process::ExitCode {
    let each = match per_instance(args) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("ifxtop snapshot: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    if each.len() > 1 {
        return run_several(args, &each);
    }
    let (result, problems) = report(&each[0]);
    // An incomplete report is still printed (it is what could be seen), but its exit code and
    // standard error say why it is incomplete.
    for p in &problems {
        eprintln!("ifxtop snapshot: {p}");
    }
    let incomplete = if problems.is_empty() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(1)
    };
    match result {
        Ok(snap) => {
            let out = match args.format {
                crate::cli::Format::Text => Ok(text(&snap)),
                crate::cli::Format::Json => json(&snap),
            };
            match out {
                Ok(s) => {
                    print(&s);
                    incomplete
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
                Error::Signal(code) => code,
                _ => 1,
            })
        }
    }
}

/// Several instances, collected side by side: one report each, in the order named (JSON:
/// `{"instances": [...]}`). An instance that fails is said on standard error and makes the exit
/// code 1; the others are reported all the same.
fn run_several(
    args: &crate::cli::SnapshotArgs,
    each: &[crate::cli::SnapshotArgs],
) -> std::process::ExitCode {
    let results: Vec<(Result<Snapshot, Error>, Vec<String>)> = std::thread::scope(|sc| {
        let handles: Vec<_> = each.iter().map(|a| sc.spawn(move || report(a))).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    (Err(Error::Other("the report panicked".into())), Vec::new())
                })
            })
            .collect()
    });
    let mut failed = false;
    let mut snaps = Vec::new();
    for (a, (result, problems)) in each.iter().zip(results) {
        let name = instance_of(a);
        for p in &problems {
            eprintln!("ifxtop snapshot: {name}: {p}");
            failed = true;
        }
        match result {
            Ok(s) => snaps.push(s),
            Err(e) => {
                eprintln!("ifxtop snapshot: {name}: {e}");
                failed = true;
            }
        }
    }
    let out = match args.format {
        crate::cli::Format::Json => {
            serde_json::to_string_pretty(&serde_json::json!({ "instances": snaps }))
                .map_err(|e| Error::Other(e.to_string()))
        }
        crate::cli::Format::Text => Ok(snaps
            .iter()
            .map(|s| {
                format!(
                    "=== {} ===\n{}",
                    s.instance.as_deref().unwrap_or("-"),
                    text(s)
                )
            })
            .collect::<Vec<_>>()
            .join("\n")),
    };
    match out {
        Ok(s) => print(&s),
        Err(e) => {
            eprintln!("ifxtop snapshot: {e}");
            failed = true;
        }
    }
    if failed {
        std::process::ExitCode::from(1)
    } else {
        std::process::ExitCode::SUCCESS
    }
}

/// How an instance's arguments name it, before it answered.
fn instance_of(a: &crate::cli::SnapshotArgs) -> String {
    if a.demo {
        return crate::tui::setup::demo_server(a.demo_index);
    }
    crate::tui::setup::instance_name(
        a.server.as_deref(),
        a.ssh.ssh.first().map(|t| t.host.as_str()),
    )
}

fn at_arg(at: Option<f64>) -> Result<Option<Duration>, Error> {
    at.map(|s| {
        Duration::try_from_secs_f64(s)
            .map_err(|_| Error::Usage(format!("--at {s}: a number of seconds, 0 or more")))
    })
    .transpose()
}

/// The demo at `to` as the live screen would show it: the real collectors run against the demo
/// on a paused clock (virtual time), from `to - DEMO_WARMUP` so windows and rates are filled.
fn demo_snapshot(
    args: &crate::cli::SnapshotArgs,
    settings: StoreSettings,
    to: Duration,
) -> Result<Snapshot, Error> {
    let from = to.saturating_sub(DEMO_WARMUP);
    let i = args.demo_index;
    let demo = crate::demo::DemoInstance::new(args.seed + i).with_sessions(args.demo_sessions);
    let server = crate::tui::setup::demo_server(i);
    let (store, samples) = demo_store(demo, from, to, settings.clone(), args.record.is_some())?;
    if let Some(path) = &args.record {
        write_recording(path, Some(&server), &settings, &samples)?;
    }
    Ok(crate::model::snapshot::build(
        &store,
        to,
        Some(&server),
        &[],
    ))
}

/// What the live collectors would have collected from the demo between demo times `from` and
/// `to` (inclusive): the real collectors, run on a paused clock. Also every raw output, when
/// `record` is set.
pub fn demo_store(
    demo: crate::demo::DemoInstance,
    from: Duration,
    to: Duration,
    settings: StoreSettings,
    record: bool,
) -> Result<(Store, Vec<RawSample>), Error> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()?;
    Ok(rt.block_on(async {
        let demo = crate::demo::DemoRunner::new(demo).starting_at(from);
        let (raw_tx, raw_rx) = std::sync::mpsc::sync_channel::<RawSample>(1 << 20);
        let raw = record.then_some(raw_tx);
        let mut collection = Collection::start(
            Arc::new(demo),
            1.0,
            raw,
            ExtentSource::default(),
            SessionClock::starting_at(from),
        );
        let mut store = Store::new(settings);
        // Everything due at `to` runs before the clock moves on past it.
        let deadline = tokio::time::Instant::now() + (to - from) + Duration::from_millis(1);
        loop {
            tokio::select! {
                Some(u) = collection.updates.recv() => store.apply(u),
                _ = tokio::time::sleep_until(deadline) => break,
            }
        }
        while let Ok(u) = collection.updates.try_recv() {
            store.apply(u);
        }
        collection.stop();
        drop(collection);
        let samples: Vec<RawSample> = raw_rx.try_iter().collect();
        (store, samples)
    }))
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
        // The first few problems and a count: a garbage file has one per line.
        if !rec.skipped.is_empty() && !rec.is_empty() {
            eprintln!(
                "ifxtop snapshot: {}: {}",
                path.display(),
                rec.problems_line()
            );
        }
        if settings.ports.is_empty() {
            settings.ports = rec
                .header
                .as_ref()
                .map(|h| h.ports.clone())
                .unwrap_or_default();
        }
        if rec.is_empty() {
            return Err(Error::Usage(format!(
                "{}: nothing to replay: {}",
                path.display(),
                rec.problems_line()
            )));
        }
        let server = rec.header.as_ref().and_then(|h| h.server.clone());
        settings.wall_start = rec.started();
        settings.host = rec.header.as_ref().and_then(|h| h.host.clone());
        if let Some(kb) = rec.header.as_ref().and_then(|h| h.base_page_kb) {
            settings.base_page_kb = kb;
        }
        let rec = std::sync::Arc::new(rec);
        let end = rec.length();
        if let Some(t) = at.filter(|t| *t > end) {
            return Err(Error::Usage(format!(
                "--at {}: {} ends at {} ({:.0} s in)",
                t.as_secs_f64(),
                path.display(),
                crate::format::clock(end),
                end.as_secs_f64()
            )));
        }
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
        // The i-th demo instance runs its timeline 300 s on from the one before (as the live
        // screen's fleet does), on a host of its own.
        let i = args.demo_index;
        let offset = Duration::from_secs(i * crate::tui::setup::DEMO_INSTANCE_OFFSET);
        let to = at.unwrap_or(DEMO_WARMUP) + offset;
        settings.wall_start = Some(crate::demo::EPOCH);
        settings.host = Some(crate::tui::setup::demo_host(i));
        settings.instance = Some(crate::tui::setup::demo_server(i));
        return demo_snapshot(args, settings, to);
    }
    live_report(args).map(|(snap, _)| snap)
}

/// The first of SIGINT, SIGTERM, SIGHUP and SIGQUIT, as the exit code a shell expects
/// (128 + its number); never, if the handlers cannot be set up.
async fn stop_signal() -> u8 {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term), Ok(mut hup), Ok(mut quit)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
        signal(SignalKind::quit()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = int.recv() => 130,
        _ = term.recv() => 143,
        _ = hup.recv() => 129,
        _ = quit.recv() => 131,
    }
}

/// How long a live snapshot waits for its sources at most (the slowest regular source,
/// `dbaccess` on sysmaster, may take 30 s); what has not answered by then is reported missing.
pub const LIVE_DEADLINE: Duration = Duration::from_secs(40);

/// The live instance, once: every source collected (the 1 s ones twice, for rates), the extent
/// map from the cache (or built, if that fits in the deadline), the SQL of the head blockers and
/// longest waits, then the report. Returns it with what makes it incomplete: the server off-line,
/// an onstat that failed or did not answer in time.
pub fn live_report(args: &crate::cli::SnapshotArgs) -> Result<(Snapshot, Vec<String>), Error> {
    if args.at.is_some() {
        return Err(Error::Usage(
            "--at: only with --demo or --replay (a live snapshot is of now)".into(),
        ));
    }
    let server = args.server.clone();
    let mut settings = StoreSettings {
        base_page_kb: args.base_page_kb,
        ..StoreSettings::default()
    };
    // Read while the process has one thread (see `now_in_local_offset`).
    settings.wall_start = Some(crate::tui::setup::now_in_local_offset());
    // This machine, or the host of `--ssh` (connected here, once).
    if let Some(file) = &args.extents {
        crate::tui::setup::check_extents_file(file)?;
    }
    let live = crate::tui::setup::live_target(
        server.clone(),
        &args.ports,
        &args.ssh,
        args.extents.clone(),
        args.max_output_mb,
    )?;
    settings.ports = live.ports;
    settings.host = live.host;
    settings.instance = Some(crate::tui::setup::instance_name(
        server.as_deref(),
        settings
            .host
            .as_deref()
            .filter(|_| !args.ssh.ssh.is_empty()),
    ));
    let runner = live.runner;
    let remote = settings
        .host
        .as_deref()
        .filter(|_| !args.ssh.ssh.is_empty());
    let extents = ExtentSource {
        file: args.extents.clone(),
        cache: crate::tui::setup::cache_spot(
            crate::tui::setup::cache_key(server.as_deref(), remote).as_deref(),
        ),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let record = args.record.is_some();
    // A signal ends the collection at once: dropping it kills every command in flight (their
    // whole process groups), which the terminal's Ctrl-C no longer reaches.
    let collected = rt.block_on(async {
        tokio::select! {
            r = live_store(runner, settings.clone(), extents, record, LIVE_DEADLINE) => Ok(r),
            code = stop_signal() => Err(code),
        }
    });
    // Nothing may hold up the exit: a file read stuck in the kernel (a dead NFS server) keeps
    // its thread, not the process.
    rt.shutdown_timeout(Duration::from_millis(500));
    let (store, samples, mut problems) = collected.map_err(Error::Signal)?;
    if let Some(path) = &args.record {
        write_recording(path, server.as_deref(), &settings, &samples)?;
    }
    let snap = crate::model::snapshot::build(&store, store.latest, server.as_deref(), &[]);
    // The sessions whose SQL was collected (the heads, the longest waits): their screens.
    let focus =
        crate::model::snapshot::worth_recording(&snap, &[], crate::collect::Focus::MAX_BACKGROUND);
    let snap = if focus.is_empty() {
        snap
    } else {
        crate::model::snapshot::build(&store, store.latest, server.as_deref(), &focus)
    };
    if let Some(off) = &snap.server.offline {
        problems.insert(0, format!("the server is off-line: {off}"));
    }
    Ok((snap, problems))
}

/// Collects every source of the live instance once (see [`live_report`]); returns the store,
/// the raw outputs when `record` is set, and what failed or did not answer.
pub async fn live_store(
    runner: Arc<dyn crate::source::CommandRunner>,
    settings: StoreSettings,
    extents: ExtentSource,
    record: bool,
    deadline: Duration,
) -> (Store, Vec<RawSample>, Vec<String>) {
    use crate::collect::extents::ExtentStatus;
    use crate::source::{Run, Source};
    use std::collections::HashMap;
    let (raw_tx, raw_rx) = std::sync::mpsc::sync_channel::<RawSample>(1 << 16);
    let mut collection = Collection::start(
        runner,
        1.0,
        record.then_some(raw_tx),
        extents,
        SessionClock::start(),
    );
    let mut store = Store::new(settings);
    let polled = Source::polled();
    // How many answers each polled source needs: two of the 1 s sources (rates need two), and
    // two of the chunk page counts (`onstat -D`, in the grouped call every 5 s: the chunk
    // rates). Informix's op times (`-g iof`, 10 s) are shown from one sample (as averages since
    // its counters' reset).
    let need = |s: &Source| {
        if s.period() <= Duration::from_secs(1) || *s == Source::OnstatDUpper {
            2
        } else {
            1
        }
    };
    let mut seen: HashMap<Source, (u32, Option<String>)> = HashMap::new();
    let mut extents_done = false;
    let mut focus_sent: Option<Vec<crate::ids::Sid>> = None;
    let until = tokio::time::Instant::now() + deadline;
    loop {
        // The sources this server has (onstat -g bth only from 14.10 on).
        let release = store
            .get::<crate::parsers::onstat_u::OnstatU>(Source::OnstatU)
            .and_then(|u| u.header.as_ref())
            .and_then(|h| h.release());
        let polled_done = polled
            .iter()
            .filter(|s| s.supported_by(release))
            .all(|s| seen.get(s).is_some_and(|(n, _)| *n >= need(s)));
        let sockets_done = [Source::ProcNetTcp, Source::Netstat]
            .iter()
            .any(|s| seen.contains_key(s));
        let numa_done = seen.contains_key(&Source::Vmstat);
        let io_done = io_collected(&store, &seen);
        if polled_done && sockets_done && numa_done && extents_done && io_done {
            // Then the SQL of the sessions that matter, once.
            match &focus_sent {
                None => {
                    let snap = crate::model::snapshot::build(&store, store.latest, None, &[]);
                    let sids = crate::model::snapshot::worth_recording(
                        &snap,
                        &[],
                        crate::collect::Focus::MAX_BACKGROUND,
                    );
                    let _ = collection.focus.send(crate::collect::Focus {
                        drilled: sids.clone(),
                        background: Vec::new(),
                    });
                    focus_sent = Some(sids);
                }
                Some(sids) => {
                    let all_in = sids.iter().all(|sid| {
                        seen.contains_key(&Source::OnstatGSes(*sid))
                            && seen.contains_key(&Source::OnstatGSql(*sid))
                    });
                    if all_in {
                        break;
                    }
                }
            }
        }
        tokio::select! {
            u = collection.updates.recv() => match u {
                Some(u) => {
                    let e = seen.entry(u.source).or_insert((0, None));
                    e.0 += 1;
                    e.1 = u.result.as_ref().err().map(|e| e.to_string());
                    store.apply(u);
                }
                None => break,
            },
            st = collection.extents.recv() => match st {
                Some(ExtentStatus::Building { .. }) => {}
                Some(_) | None => extents_done = true,
            },
            _ = tokio::time::sleep_until(until) => break,
        }
    }
    while let Ok(u) = collection.updates.try_recv() {
        store.apply(u);
    }
    collection.stop();
    drop(collection);
    let mut problems = Vec::new();
    let release = store
        .get::<crate::parsers::onstat_u::OnstatU>(Source::OnstatU)
        .and_then(|u| u.header.as_ref())
        .and_then(|h| h.release());
    for s in polled.iter().filter(|s| s.supported_by(release)) {
        let onstat = matches!(s.def().run, Run::Onstat(_));
        match seen.get(s) {
            None if onstat => problems.push(format!(
                "{}: no answer within {} s",
                s.label(),
                deadline.as_secs()
            )),
            Some((_, Some(e))) if onstat => problems.push(format!("{}: {e}", s.label())),
            _ => {}
        }
    }
    let samples: Vec<RawSample> = raw_rx.try_iter().collect();
    (store, samples, problems)
}

/// The devices and replication sources have answered what a report needs: `/proc/diskstats`
/// twice (await and %util are rates) or failed (not Linux); the chunks' devices once `onstat -D`
/// named them; on a cluster member `onstat -g cluster`, and the commands its peers call for.
fn io_collected(
    store: &Store,
    seen: &std::collections::HashMap<crate::source::Source, (u32, Option<String>)>,
) -> bool {
    use crate::source::Source;
    let count = |s: Source| seen.get(&s).map_or(0, |(n, _)| *n);
    let failed = |s: Source| seen.get(&s).is_some_and(|(_, e)| e.is_some());
    let diskstats = count(Source::ProcDiskstats) >= 2 || failed(Source::ProcDiskstats);
    let chunks_named = store
        .get::<crate::parsers::onstat_d_upper::OnstatDUpper>(Source::OnstatDUpper)
        .is_some_and(|d| !d.chunks.is_empty());
    let devices = !chunks_named || failed(Source::ProcDiskstats) || count(Source::ChunkDevices) > 0;
    let flags = store
        .get::<crate::parsers::onstat_u::OnstatU>(Source::OnstatU)
        .and_then(|u| u.header.as_ref())
        .map(|h| h.mode_flags.clone())
        .unwrap_or_default();
    let member = ["Prim", "Sec", "RSS", "SDS"]
        .iter()
        .any(|r| flags.iter().any(|f| f == r));
    let ha = if !member {
        true
    } else if count(Source::OnstatGCluster) == 0 {
        false
    } else {
        let primary = flags.iter().any(|f| f == "Prim");
        let kinds: Vec<String> = store
            .get::<crate::parsers::onstat_g_cluster::OnstatGCluster>(Source::OnstatGCluster)
            .map(|c| {
                c.servers
                    .iter()
                    .filter_map(|s| s.server_type.clone())
                    .collect()
            })
            .unwrap_or_default();
        let wants = |kind: &str, flag: &str| {
            if primary {
                kinds.iter().any(|k| k == kind)
            } else {
                flags.iter().any(|f| f == flag)
            }
        };
        [
            (wants("RSS", "RSS"), Source::OnstatGRss),
            (wants("SDS", "SDS"), Source::OnstatGSds),
            (wants("HDR", "Sec"), Source::OnstatGDri),
        ]
        .iter()
        .all(|(want, s)| !want || count(*s) > 0)
    };
    diskstats && devices && ha
}

/// Writes samples as a recording file (the same format `--record` writes).
pub fn write_recording(
    path: &std::path::Path,
    server: Option<&str>,
    settings: &crate::store::StoreSettings,
    samples: &[RawSample],
) -> Result<(), Error> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<RawSample>(samples.len().max(1));
    let header = crate::collect::record::RecordingHeader::new(
        server,
        settings.host.as_deref(),
        settings
            .wall_start
            .unwrap_or_else(time::OffsetDateTime::now_utc),
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
