//! `ifxtop snapshot`: every pane once, as text or JSON, for tickets and chat. From the demo at a
//! point of its timeline, from a recording, or from the local instance.

use crate::cli::{LiveArgs, SnapshotArgs};
use crate::collect::extents::ExtentStatus;
use crate::collect::sample::RawSample;
use crate::collect::{Collection, SessionClock};
use crate::error::Error;
use crate::instance::headless;
use crate::instance::setup::{InstanceSpec, Shared};
use crate::instance::watch::Watched;
use crate::model::snapshot::Snapshot;
use crate::source::Source;
use crate::store::{Store, StoreSettings};
/// The text report is the screen's (its panes as text): the one thing `commands` take from `tui`.
pub(crate) use crate::tui::report::text;
use std::collections::HashMap;
use std::time::Duration;

/// The snapshot as JSON (the shape of `ifxtop snapshot --format json`).
pub fn json(snap: &Snapshot) -> Result<String, Error> {
    serde_json::to_string_pretty(snap).map_err(|e| Error::Other(e.to_string()))
}

/// How far before `--at` the demo simulation starts, so windows and rates are filled.
pub(crate) const DEMO_WARMUP: Duration = Duration::from_secs(120);

/// The report of one instance: the snapshot (or why there is none) and what makes it
/// incomplete.
fn report(args: &SnapshotArgs, shared: &Shared) -> (Result<Snapshot, Error>, Vec<String>) {
    if args.watch.demo || args.watch.replay.is_some() {
        (snapshot_with(args, shared), Vec::new())
    } else {
        match live_report(args, shared) {
            Ok((snap, problems)) => (Ok(snap), problems),
            Err(e) => (Err(e), Vec::new()),
        }
    }
}

/// The snapshot's instances as the live screen names and sets them up (the screen's own
/// options at their defaults).
fn as_live(args: &SnapshotArgs) -> LiveArgs {
    LiveArgs::watching(args.watch.clone())
}

/// The arguments of each instance the command line and the config name, one instance each (the
/// live screen's list, `instance::setup::instance_specs`): `--demo-instances` demo instances,
/// each server of `--server a,b` on each `--ssh` host, else the config's `[[instance]]` tables;
/// else the one.
pub(crate) fn per_instance(
    args: &SnapshotArgs,
    shared: &Shared,
) -> Result<Vec<SnapshotArgs>, Error> {
    if args.watch.demo && !args.watch.ssh.ssh.is_empty() {
        return Err(Error::Usage("--ssh: not with --demo here".into()));
    }
    let specs = crate::instance::setup::instance_specs(&as_live(args), shared.config())?;
    if specs.len() > 1 && args.watch.record.is_some() {
        return Err(Error::Usage(format!(
            "--record: records one instance, and {} are named",
            specs.len()
        )));
    }
    Ok(specs
        .into_iter()
        .map(|spec| {
            let mut a = args.clone();
            match spec {
                InstanceSpec::Replay(_) => {}
                InstanceSpec::Demo { index } => a.demo_index = index as u64,
                InstanceSpec::Live { server, ssh, ports } => {
                    a.watch.server = server;
                    a.watch.ssh.ssh = ssh.into_iter().collect();
                    a.watch.ports = ports;
                }
            }
            a
        })
        .collect())
}

/// Writes a finished report to standard output: only text through the sanitizer (a closed
/// pipe, `| head`, is no error).
pub(crate) fn print(s: &crate::format::SafeText) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(s.as_str().as_bytes());
    if !s.as_str().ends_with('\n') {
        let _ = writeln!(o);
    }
}

/// A line on standard error, through the sanitizer (a problem may quote an output, an instance
/// name a recording's header).
fn warn(msg: &str) {
    eprintln!("ifxtop snapshot: {}", crate::format::SafeText::new(msg));
}

/// `ifxtop snapshot`.
pub fn run_cli(args: &SnapshotArgs) -> std::process::ExitCode {
    let prepared = (|| {
        // Read and checked once, as the live screen and serve do.
        let shared = crate::instance::setup::checked(&as_live(args))?;
        let each = per_instance(args, &shared)?;
        Ok::<_, Error>((shared, each))
    })();
    let (shared, each) = match prepared {
        Ok(p) => p,
        Err(e) => {
            warn(&e.to_string());
            return std::process::ExitCode::from(match e {
                Error::Usage(_) => 2,
                _ => 1,
            });
        }
    };
    if each.len() > 1 {
        return run_several(args, &shared, &each);
    }
    let (result, problems) = report(&each[0], &shared);
    // An incomplete report is still printed (it is what could be seen), but its exit code and
    // standard error say why it is incomplete.
    for p in &problems {
        warn(&p.to_string());
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
                crate::cli::Format::Json => json(&snap).map(|j| crate::format::SafeText::json(&j)),
            };
            match out {
                Ok(s) => {
                    print(&s);
                    incomplete
                }
                Err(e) => {
                    warn(&e.to_string());
                    std::process::ExitCode::from(1)
                }
            }
        }
        Err(e) => {
            warn(&e.to_string());
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
    args: &SnapshotArgs,
    shared: &Shared,
    each: &[SnapshotArgs],
) -> std::process::ExitCode {
    let results: Vec<(Result<Snapshot, Error>, Vec<String>)> = std::thread::scope(|sc| {
        let handles: Vec<_> = each
            .iter()
            .map(|a| sc.spawn(move || report(a, shared)))
            .collect();
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
            warn(&format!("{name}: {p}"));
            failed = true;
        }
        match result {
            Ok(s) => snaps.push(s),
            Err(e) => {
                warn(&format!("{name}: {e}"));
                failed = true;
            }
        }
    }
    let out = match args.format {
        crate::cli::Format::Json => {
            serde_json::to_string_pretty(&serde_json::json!({ "instances": snaps }))
                .map(|j| crate::format::SafeText::json(&j))
                .map_err(|e| Error::Other(e.to_string()))
        }
        crate::cli::Format::Text => Ok(crate::format::SafeText::new(
            &snaps
                .iter()
                .map(|s| {
                    format!(
                        "=== {} ===\n{}",
                        s.instance.as_deref().unwrap_or("-"),
                        text(s)
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"),
        )),
    };
    match out {
        Ok(s) => print(&s),
        Err(e) => {
            warn(&e.to_string());
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
fn instance_of(a: &SnapshotArgs) -> String {
    if a.watch.demo {
        return crate::instance::setup::demo_server(a.demo_index);
    }
    crate::instance::setup::instance_name(
        a.watch.server.as_deref(),
        a.watch.ssh.ssh.first().map(|t| t.host.as_str()),
    )
}

/// `--at` on a timeline that started at `started` (a time of day is on its clock) and lasts
/// `length` (a share of a recording).
fn at_arg(
    at: Option<crate::format::When>,
    started: Option<time::OffsetDateTime>,
    length: Option<Duration>,
) -> Result<Option<Duration>, Error> {
    at.map(|w| {
        w.into_timeline(started, length)
            .map_err(|e| Error::Usage(format!("--at {e}")))
    })
    .transpose()
}

/// The demo at `to` as the live screen would show it: the real collectors run against the demo
/// on a paused clock (virtual time), from `to - DEMO_WARMUP` so windows and rates are filled.
fn demo_snapshot(
    args: &SnapshotArgs,
    settings: StoreSettings,
    to: Duration,
) -> Result<Snapshot, Error> {
    let window = window_arg(args.window)?;
    // With a window, the simulation starts a minute before it (waits and rates have a past).
    let from = match window {
        Some(w) => to.saturating_sub(DEMO_WARMUP.max(w + Duration::from_secs(60))),
        None => to.saturating_sub(DEMO_WARMUP),
    };
    let i = args.demo_index;
    let demo =
        crate::demo::DemoInstance::new(args.watch.seed + i).with_sessions(args.watch.demo_sessions);
    let server = crate::instance::setup::demo_server(i);
    let mut activity = crate::model::activity::Activity::new();
    // A zstd recording keeps the database-time track the screen would have kept.
    let mut track = Vec::new();
    let tracked = args
        .watch
        .record
        .as_deref()
        .is_some_and(crate::collect::record::keeps_track);
    // The findings have the history the screen would have given them.
    let mut history = crate::model::findings::FindingsHistory::default();
    let (store, samples) = crate::instance::walk::demo_store_tracked(
        demo,
        from,
        to,
        settings.clone(),
        args.watch.record.is_some(),
        window.is_some().then_some(&mut activity),
        tracked.then_some(&mut track),
        Some(&mut history),
    )?;
    if let Some(path) = &args.watch.record {
        write_recording_tracked(
            path,
            Some(&server),
            &settings,
            samples.iter().cloned(),
            Some(&track),
        )?;
    }
    let mut snap = crate::model::snapshot::build(&store, to, Some(&server), &[]);
    snap.track_findings(&mut history, store.settings.wall_start);
    snap.activity = window.map(|w| activity_report(&activity, to, w));
    Ok(snap)
}

/// `--window SECONDS`, checked: more than 0 and at most the hour database time keeps (a longer
/// window reported only its last hour, and the demo walked all of it).
pub(crate) fn window_len(w: f64) -> Result<Duration, Error> {
    let hour = crate::model::activity::HISTORY;
    Duration::try_from_secs_f64(w)
        .ok()
        .filter(|d| !d.is_zero() && d.as_secs_f64() <= hour)
        .ok_or_else(|| {
            Error::Usage(format!(
                "--window {w}: seconds, more than 0 and at most {hour:.0} (database time keeps \
                 an hour)"
            ))
        })
}

/// `--window SECONDS`, checked: more than 0, at most the hour database time keeps (a longer
/// window reported only its last hour; the demo walked it all).
fn window_arg(w: Option<f64>) -> Result<Option<Duration>, Error> {
    w.map(window_len).transpose()
}

/// The top ten of every key over the `window` ending at `to`.
fn activity_report(
    activity: &crate::model::activity::Activity,
    to: Duration,
    window: Duration,
) -> crate::model::activity::Report {
    activity.report(&crate::model::activity::Query::every_key(
        to.saturating_sub(window).as_secs_f64(),
        to.as_secs_f64(),
        10,
    ))
}

pub use crate::instance::walk::demo_store;

/// The snapshot `ifxtop snapshot` prints, from the demo, a recording, or the live instance (the
/// config file read as the live screen reads it).
pub fn snapshot_for(args: &SnapshotArgs) -> Result<Snapshot, Error> {
    let shared = crate::instance::setup::checked(&as_live(args))?;
    snapshot_with(args, &shared)
}

/// `snapshot_for` with the arguments and the config checked.
fn snapshot_with(args: &SnapshotArgs, shared: &Shared) -> Result<Snapshot, Error> {
    // The base page size and the windows of the command line or the config.
    let mut settings = shared.settings.clone();
    settings.ports = shared.ports.clone();
    if let Some(path) = &args.watch.replay {
        // A ring (a directory): only the minutes before the moment, read from the segments
        // that hold them.
        let (rec, ring_at) = if path.is_dir() {
            let warm = RING_WARM.max(window_arg(args.window)?.unwrap_or_default() + RING_WARM);
            let (rec, at) = crate::instance::ring::window_to(path, args.at, warm)?;
            (rec, Some(at))
        } else {
            (
                crate::collect::record::read_replayable_for_walk(path)?,
                None,
            )
        };
        // The first few problems and a count: a garbage file has one per line.
        if !rec.skipped.is_empty() {
            warn(&format!("{}: {}", path.display(), rec.problems_line()));
        }
        if settings.ports.is_empty() {
            settings.ports = rec
                .header
                .as_ref()
                .map(|h| h.ports.clone())
                .unwrap_or_default();
        }
        let server = rec.header.as_ref().and_then(|h| h.server.clone());
        let settings = crate::instance::walk::replay_settings(&rec, settings);
        let rec = std::sync::Arc::new(rec);
        let end = rec.length();
        let at = match ring_at {
            // The window ends at the moment: its last sample at most a second before.
            Some(at) => Some(at.min(end)),
            None => at_arg(args.at, rec.started(), Some(end))?,
        };
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
        let window = window_arg(args.window)?;
        let mut activity = crate::model::activity::Activity::new();
        // The findings have the history the screen would have given them.
        let (store, mut history) = crate::instance::walk::replay_with_findings(
            rec,
            settings,
            t,
            window.map(|w| (t.saturating_sub(w), &mut activity)),
        );
        let mut snap = crate::model::snapshot::build(&store, t, server.as_deref(), &[]);
        snap.track_findings(&mut history, store.settings.wall_start);
        snap.activity = window.map(|w| activity_report(&activity, t, w));
        return Ok(snap);
    }
    if args.watch.demo {
        if settings.ports.is_empty() {
            settings.ports = vec![crate::demo::LISTENER_PORT];
        }
        // The i-th demo instance runs its timeline 300 s on from the one before (as the live
        // screen's fleet does), on a host of its own.
        let i = args.demo_index;
        let offset = Duration::from_secs(i * crate::instance::setup::DEMO_INSTANCE_OFFSET);
        let at = at_arg(args.at, Some(crate::demo::EPOCH), None)?;
        let to = at.unwrap_or(DEMO_WARMUP) + offset;
        settings.wall_start = Some(crate::demo::EPOCH);
        settings.host = Some(crate::instance::setup::demo_host(i));
        settings.instance = Some(crate::instance::setup::demo_server(i));
        return demo_snapshot(args, settings, to);
    }
    live_report(args, shared).map(|(snap, _)| snap)
}

/// How far before the moment a snapshot of a ring starts its walk: the findings' history of
/// the moment (`walk::FINDINGS_HISTORY`) and a minute more for rates and windows.
const RING_WARM: Duration = Duration::from_secs(300);

/// How long a live snapshot waits for its sources at most (the slowest regular source,
/// `dbaccess` on sysmaster, may take 30 s); what has not answered by then is reported missing.
pub const LIVE_DEADLINE: Duration = Duration::from_secs(40);

/// The live instance, once: every source collected (the 1 s ones twice, for rates), the extent
/// map from the cache (or built, if that fits in the deadline), the SQL of the head blockers and
/// longest waits, then the report. Returns it with what makes it incomplete: the server off-line,
/// an onstat that failed or did not answer in time.
pub(crate) fn live_report(
    args: &SnapshotArgs,
    shared: &Shared,
) -> Result<(Snapshot, Vec<String>), Error> {
    if args.at.is_some() {
        return Err(Error::Usage(
            "--at: only with --demo or --replay (a live snapshot is of now)".into(),
        ));
    }
    if args.window.is_some() {
        return Err(Error::Usage(
            "--window: only with --demo or --replay (a live snapshot collects once; the \
             screen's Activity pane, 8, keeps the live history)"
                .into(),
        ));
    }
    // The instance set up as the live screen and `serve` set theirs up: this machine, or the
    // host of `--ssh` (connected here, once).
    let mut setup = crate::instance::setup::setup_one(&as_live(args), shared)?;
    // Rates need two samples of the 1 s sources, a second apart, whatever the screen's interval.
    setup.interval = Duration::from_secs(1);
    let server = setup.server.clone();
    let rt = crate::instance::runtime::current_thread()?;
    let record = setup.record.is_some();
    // A signal ends the collection at once: dropping it kills every command in flight (their
    // whole process groups), which the terminal's Ctrl-C no longer reaches.
    let collected = rt.block_on(async {
        tokio::select! {
            r = live_store(&setup, record, LIVE_DEADLINE) => Ok(r),
            code = crate::instance::signals::first_end() => Err(code),
        }
    });
    // Nothing may hold up the exit: a file read stuck in the kernel (a dead NFS server) keeps
    // its thread, not the process.
    crate::instance::runtime::finish(rt);
    let (store, samples, mut problems) = collected.map_err(Error::Signal)?;
    if let Some((path, _)) = &setup.record {
        write_recording(path, server.as_deref(), &setup.settings, &samples)?;
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

/// The chunk page counts (`onstat -D`, the chunk rates) and the VPs' CPU times (`onstat -g
/// glo`: without the CPU VPs' load the findings cannot judge a saturated CPU) need two samples:
/// each is pinned to every tick until then, so the second comes a second after the first, not
/// at its own 5 or 10 s period. Informix's op times (`-g iof`, 10 s) are shown from one sample
/// (as averages since its counters' reset).
const PINNED: [Source; 2] = [Source::OnstatDUpper, Source::OnstatGGlo];

/// How many answers a polled source needs: two of the 1 s sources (rates need two) and of the
/// pinned ones, else one.
fn need(s: &Source) -> u32 {
    if s.period() <= Duration::from_secs(1) || PINNED.contains(s) {
        2
    } else {
        1
    }
}

/// Collects every source of the live instance of `setup` once (see [`live_report`]) on the
/// headless loop; returns the store, the raw outputs when `record` is set, and what failed or
/// did not answer within `deadline`.
pub(crate) async fn live_store(
    setup: &crate::instance::setup::Setup,
    record: bool,
    deadline: Duration,
) -> (Store, Vec<RawSample>, Vec<String>) {
    use crate::source::Run;
    let (raw_tx, raw_rx) = std::sync::mpsc::sync_channel::<RawSample>(1 << 16);
    let mut collection = Collection::start(
        setup.runner.clone(),
        setup.interval,
        record.then_some(raw_tx),
        setup.extents.clone(),
        SessionClock::start(),
    );
    for s in &PINNED {
        collection.pin(s, true);
    }
    let mut watched = Watched::new(Store::new(setup.settings.clone()), None);
    let mut front = Complete {
        polled: Source::polled(),
        seen: HashMap::new(),
        extents_done: false,
        focus: None,
        done: false,
        judged: None,
        retries: 0,
    };
    headless::run(
        &mut headless::Input::collectors(&mut collection),
        &mut watched,
        setup.interval,
        setup.server.as_deref(),
        tokio::time::sleep(deadline),
        &mut front,
    )
    .await;
    collection.stop();
    drop(collection);
    let store = watched.store;
    let mut problems = Vec::new();
    let release = store
        .get(crate::source::key::OnstatU)
        .and_then(|u| u.header.as_ref())
        .and_then(|h| h.release());
    for s in front.polled.iter().filter(|s| s.supported_by(release)) {
        let onstat = matches!(s.def().run, Run::Onstat(_));
        match front.seen.get(s) {
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

/// A live snapshot's front-end on the loop: how often each source answered (and its last
/// error); once every source a report needs is in, the statements of the sessions that matter
/// are asked for (their screens, as if drilled into), and once those are in, the loop stops.
struct Complete {
    polled: Vec<Source>,
    seen: HashMap<Source, (u32, Option<String>)>,
    extents_done: bool,
    /// The sessions whose statements were asked for, once asked.
    focus: Option<Vec<crate::ids::Sid>>,
    /// Everything is in: the next build is the last.
    done: bool,
    /// The last moment (its `onstat -u`) judged not to name every holder it could, and how
    /// many such moments there were.
    judged: Option<Duration>,
    retries: u32,
}

/// How many moments past the first a report waits for one at which every lock and buffer
/// holder could be named (its `onstat -k`/`-X` read at the moment of its `onstat -u`), before
/// it reports what it has and says which holders it could not name. A holder read an instant
/// apart is another moment's (`store::SAME_MOMENT`): plain calls over a slow connection, or a
/// call that straddled a second of the server's clock. While threads wait on locks or buffers
/// both ride in every tick's call, so the next moment usually has them; the report's deadline
/// bounds the wait too.
const MOMENT_RETRIES: u32 = 3;

impl Complete {
    /// Every source a report needs answered (or failed), per what this server has (`onstat -g
    /// bth` only from 14.10 on).
    fn collected(&self, store: &Store) -> bool {
        let release = store
            .get(crate::source::key::OnstatU)
            .and_then(|u| u.header.as_ref())
            .and_then(|h| h.release());
        let polled_done = self
            .polled
            .iter()
            .filter(|s| s.supported_by(release))
            .all(|s| self.seen.get(s).is_some_and(|(n, _)| *n >= need(s)));
        let sockets_done = [Source::ProcNetTcp, Source::Netstat]
            .iter()
            .any(|s| self.seen.contains_key(s));
        let numa_done = self.seen.contains_key(&Source::Vmstat);
        polled_done
            && sockets_done
            && numa_done
            && self.extents_done
            && io_collected(store, &self.seen)
    }

    /// The statements asked for are in: each session's `-g ses` and `-g sql`, and its plan
    /// where the server has `onstat -g pqs`.
    fn focus_in(&self, store: &Store) -> bool {
        let release = store
            .get(crate::source::key::OnstatU)
            .and_then(|u| u.header.as_ref())
            .and_then(|h| h.release());
        self.focus.as_ref().is_some_and(|sids| {
            sids.iter().all(|sid| {
                let plan = Source::OnstatGPqs(*sid);
                self.seen.contains_key(&Source::OnstatGSes(*sid))
                    && self.seen.contains_key(&Source::OnstatGSql(*sid))
                    && (!plan.supported_by(release) || self.seen.contains_key(&plan))
            })
        })
    }

    /// Whether to wait for another moment: the report's snapshot has a waiter on a lock or a
    /// buffer with no holder named, because that holder's output was not read at the moment
    /// of the `onstat -u` (see [`MOMENT_RETRIES`]), and fewer moments than that were judged so.
    fn another_moment(&mut self, snap: &Snapshot, store: &Store) -> bool {
        use crate::parsers::onstat_u::WaitReason;
        let Some(moment) = store.moment() else {
            return false;
        };
        // Not for a mutex: its waits pass in an instant, and the next moment's are others.
        let unnamed = snap.waiters.iter().any(|w| {
            w.blockers.is_empty()
                && matches!(w.reason, WaitReason::Lock | WaitReason::Buffer)
                && crate::model::waiters::holder_source(w.reason)
                    .is_some_and(|s| !store.at_moment(&s))
        });
        if !unnamed {
            return false;
        }
        if self.judged != Some(moment) {
            self.judged = Some(moment);
            self.retries += 1;
        }
        self.retries <= MOMENT_RETRIES
    }

    /// Everything is in: this build is the last, unless another moment is to be waited for
    /// (then the next arrivals make it done again).
    fn last_or_another(&mut self, snap: &Snapshot, store: &Store) -> headless::Flow {
        if self.another_moment(snap, store) {
            self.done = false;
            headless::Flow::Go
        } else {
            headless::Flow::Stop
        }
    }

    /// A report waits for nothing once what it needs is in: the build that picks the sessions,
    /// and the last one, are at once (as what the user asks for is, by the one rule).
    fn check(&mut self, watched: &mut Watched) {
        if self.done || !self.collected(&watched.store) {
            return;
        }
        match self.focus {
            None => watched.force(),
            Some(_) if self.focus_in(&watched.store) => {
                self.done = true;
                watched.force();
            }
            Some(_) => {}
        }
    }
}

impl headless::Front for Complete {
    fn applied(
        &mut self,
        arrived: &[(Source, Option<String>)],
        watched: &mut Watched,
        collection: Option<&Collection>,
    ) {
        for (source, error) in arrived {
            let e = self.seen.entry(*source).or_insert((0, None));
            e.0 += 1;
            e.1 = error.clone();
            if PINNED.contains(source) && e.0 >= need(source) {
                if let Some(c) = collection {
                    c.pin(source, false);
                }
            }
        }
        self.check(watched);
    }

    fn extents(&mut self, status: Option<&ExtentStatus>, watched: &mut Watched) {
        if !matches!(status, Some(ExtentStatus::Building { .. })) {
            self.extents_done = true;
        }
        self.check(watched);
    }

    fn built(
        &mut self,
        snap: Snapshot,
        _sampled: bool,
        watched: &mut Watched,
        collection: Option<&Collection>,
    ) -> headless::Flow {
        if self.done {
            return self.last_or_another(&snap, &watched.store);
        }
        if self.focus.is_none() && self.collected(&watched.store) {
            // Then the SQL of the sessions that matter, once: their screens are open
            // (drilled), so the plan of the query each runs too, where the server has
            // `onstat -g pqs`.
            let sids = crate::model::snapshot::worth_recording(
                &snap,
                &[],
                crate::collect::Focus::MAX_BACKGROUND,
            );
            if let Some(c) = collection {
                let _ = c.focus.send(crate::collect::Focus {
                    drilled: sids.clone(),
                    background: Vec::new(),
                    statements: crate::model::snapshot::statements_wanted(&snap),
                });
            }
            self.focus = Some(sids);
            self.check(watched);
            if self.done {
                return self.last_or_another(&snap, &watched.store);
            }
        }
        headless::Flow::Go
    }
}

/// The devices and replication sources have answered what a report needs: `/proc/diskstats`
/// twice (await and %util are rates) or failed (not Linux); the chunks' devices once `onstat -D`
/// named them; on a cluster member `onstat -g cluster`, and the commands its peers call for.
fn io_collected(store: &Store, seen: &HashMap<Source, (u32, Option<String>)>) -> bool {
    let count = |s: Source| seen.get(&s).map_or(0, |(n, _)| *n);
    let failed = |s: Source| seen.get(&s).is_some_and(|(_, e)| e.is_some());
    let diskstats = count(Source::ProcDiskstats) >= 2 || failed(Source::ProcDiskstats);
    let chunks_named = store
        .get(crate::source::key::OnstatDUpper)
        .is_some_and(|d| !d.chunks.is_empty());
    let devices = !chunks_named || failed(Source::ProcDiskstats) || count(Source::ChunkDevices) > 0;
    let flags = store
        .get(crate::source::key::OnstatU)
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
            .get(crate::source::key::OnstatGCluster)
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

/// Writes samples as a recording file (the same format `--record` writes), without a
/// database-time track.
pub fn write_recording(
    path: &std::path::Path,
    server: Option<&str>,
    settings: &crate::store::StoreSettings,
    samples: &[RawSample],
) -> Result<(), Error> {
    write_recording_tracked(path, server, settings, samples.iter().cloned(), None)
}

/// `write_recording`, with the lines of its database-time track (`model/track.rs`) when the
/// file is zstd, each sent before the first output collected after its moment (as a live
/// recording gets them); the outputs may be an iterator of any length.
pub fn write_recording_tracked(
    path: &std::path::Path,
    server: Option<&str>,
    settings: &crate::store::StoreSettings,
    samples: impl IntoIterator<Item = RawSample>,
    track: Option<&[String]>,
) -> Result<(), Error> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<RawSample>(1024);
    let header = crate::collect::record::RecordingHeader::new(
        server,
        settings.host.as_deref(),
        settings
            .wall_start
            .unwrap_or_else(time::OffsetDateTime::now_utc),
        &settings.ports,
        settings.base_page_kb,
    );
    let queue = track.map(|t| t.len().max(1));
    let rec = crate::collect::record::Recorder::start(
        path,
        u64::MAX / (1024 * 1024),
        &header,
        rx,
        queue,
    )?;
    let stopped = || Error::Other("recorder stopped".into());
    let track_tx = rec.track();
    let mut lines = track.unwrap_or_default().iter().peekable();
    for s in samples {
        if let Some(ttx) = &track_tx {
            while let Some(l) =
                lines.next_if(|l| crate::model::track::moment_of(l).is_some_and(|at| at < s.t))
            {
                ttx.send(l.clone()).map_err(|_| stopped())?;
            }
        }
        tx.send(s).map_err(|_| stopped())?;
    }
    if let Some(ttx) = &track_tx {
        for l in lines {
            ttx.send(l.clone()).map_err(|_| stopped())?;
        }
    }
    drop((tx, track_tx));
    rec.finish().map(|_| ())
}
