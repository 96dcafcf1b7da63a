//! `ifxtop ash`: database time over a window, as Oracle's ASH reports it: who waited on what,
//! grouped by any key, from the demo, a recording, or the live server watched for the window. The same samples as the Activity pane
//! (`model/activity.rs`): one per `onstat -u` moment, taken once the moment's data settled.

use crate::cli::{AshArgs, Format, LiveArgs};
use crate::error::Error;
use crate::model::activity::{Activity, Key, Query, Report};
use crate::store::StoreSettings;
use std::sync::Arc;
use std::time::Duration;

/// The window when none is given (seconds).
pub const DEFAULT_WINDOW: f64 = 600.0;

/// What walks into a window first, so waits and rates have a past (seconds).
const WARM: Duration = Duration::from_secs(60);

/// The keys of `--group`, in order.
pub(crate) fn keys(names: &[String]) -> Result<Vec<Key>, Error> {
    let mut out = Vec::new();
    for n in names.iter().flat_map(|n| n.split(',')) {
        let k = Key::from_name(n).ok_or_else(|| {
            Error::Usage(format!(
                "--group {n}: one of {}",
                Key::ALL.map(Key::name).join(", ")
            ))
        })?;
        if !out.contains(&k) {
            out.push(k);
        }
    }
    if out.is_empty() {
        out.push(Key::Class);
    }
    Ok(out)
}

/// The window asked for, as (from, to), with `end` the default end; a time of day is on the
/// clock that started at `started`, a share of `length` (a recording's).
fn window(
    args: &AshArgs,
    end: Duration,
    started: Option<time::OffsetDateTime>,
    length: Option<Duration>,
) -> Result<(Duration, Duration), Error> {
    let on = |flag: &str, w: crate::format::When| {
        w.into_timeline(started, length)
            .map_err(|e| Error::Usage(format!("{flag} {e}")))
    };
    let to = match (args.to, args.snapshot.at) {
        (Some(t), _) => on("--to", t)?,
        (None, Some(at)) => on("--at", at)?,
        (None, None) => end,
    };
    let from = match args.from {
        Some(f) => on("--from", f)?,
        None => to.saturating_sub(crate::commands::snapshot::window_len(
            args.snapshot.window.unwrap_or(DEFAULT_WINDOW),
        )?),
    };
    if from >= to {
        return Err(Error::Usage(format!(
            "the window ends ({:.0} s) before it begins ({:.0} s)",
            to.as_secs_f64(),
            from.as_secs_f64()
        )));
    }
    let hour = crate::model::activity::HISTORY;
    if (to - from).as_secs_f64() > hour {
        return Err(Error::Usage(format!(
            "--from {:.0} --to {:.0}: a window of at most {hour:.0} s (database time keeps an \
             hour)",
            from.as_secs_f64(),
            to.as_secs_f64()
        )));
    }
    Ok((from, to))
}

/// The demo's database time from `from` to `to` (demo seconds), sampled as the live screen
/// samples it (the simulation starts a minute before `from`).
pub fn demo_activity(
    demo: crate::demo::DemoInstance,
    from: Duration,
    to: Duration,
) -> Result<Activity, Error> {
    demo_activity_with(demo, from, to, StoreSettings::default())
}

/// `demo_activity` with the store's settings (the demo's wall clock is set here).
fn demo_activity_with(
    demo: crate::demo::DemoInstance,
    from: Duration,
    to: Duration,
    mut settings: StoreSettings,
) -> Result<Activity, Error> {
    let mut activity = Activity::new();
    settings.wall_start = Some(crate::demo::EPOCH);
    crate::instance::walk::demo_store_sampled(
        demo,
        from.saturating_sub(WARM),
        to,
        settings,
        false,
        Some(&mut activity),
        None,
    )?;
    Ok(activity)
}

/// Where `ifxtop ash` read database time from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadFrom {
    /// The demo, walked.
    Demo,
    /// A recording's database-time track: the samples the screen took while recording.
    Track,
    /// A recording's outputs, parsed again (a recording without a track, one whose track ends
    /// before the window does, or `--rederive`).
    Outputs,
    /// The live server, watched for the window.
    Live,
}

impl ReadFrom {
    /// What the text report says of it.
    fn words(self) -> &'static str {
        match self {
            ReadFrom::Demo => "the demo, simulated",
            ReadFrom::Track => {
                "the recording's database-time track (the samples the screen took while recording)"
            }
            ReadFrom::Outputs => "the recorded outputs, parsed again",
            ReadFrom::Live => "the live server, watched",
        }
    }
}

/// What `ifxtop ash` prints: the report, the wall-clock start to say its times with, where it
/// was read from, and why a recording's track was not used.
pub struct Ash {
    pub report: Report,
    pub started: Option<time::OffsetDateTime>,
    pub read_from: ReadFrom,
    pub note: Option<String>,
}

/// The report of a recording's track over the window asked for; `Err` says why the track
/// cannot answer (then the outputs are parsed again).
fn from_track(
    path: &std::path::Path,
    args: &AshArgs,
    keys: &[Key],
) -> Result<Result<Ash, String>, Error> {
    let span = match crate::instance::walk::track_span(path)? {
        Ok(span) => span,
        Err(why) => return Ok(Err(format!("the recording's database-time track: {why}"))),
    };
    let Some((_, last, complete)) = span else {
        return Ok(Err("the recording has no database-time track".into()));
    };
    // A recording cut short (a crash, a full disk) may hold outputs past its track's end: the
    // window that ends at the recording's end is read from those.
    if !complete && args.to.is_none() && args.snapshot.at.is_none() {
        return Ok(Err(format!(
            "the recording is cut short, its database-time track at {last:.0} s"
        )));
    }
    let started = crate::collect::record::read_header(path)?.and_then(|h| h.started_at());
    let end = Duration::try_from_secs_f64(last).unwrap_or_default();
    let (from, to) = window(args, end, started, Some(end))?;
    if to.as_secs_f64() > last + 1.0 {
        return Ok(Err(format!(
            "the recording's database-time track ends {last:.0} s in, before the window"
        )));
    }
    let mut activity = Activity::new();
    if let Err(why) = crate::instance::walk::track_activity(
        path,
        from.as_secs_f64(),
        to.as_secs_f64(),
        &mut activity,
    )? {
        return Ok(Err(format!("the recording's database-time track: {why}")));
    }
    // Cut short (a crash, a full disk) or damaged past the track's end: said, as `snapshot
    // --replay` says it, though the window was read whole.
    let note = (!complete).then(|| {
        let n = format!(
            "the recording is cut short or damaged after {last:.0} s, where its database-time \
             track ends"
        );
        warn(&format!("{}: {n}", path.display()));
        n
    });
    Ok(Ok(Ash {
        report: activity.report(&query(from, to, keys, args.top)),
        started,
        read_from: ReadFrom::Track,
        note,
    }))
}

/// The database time of a window of a ring (`--ring DIR` of `serve` or the screen): the
/// segments that hold it and a minute before it (`walk::WARM`), their outputs parsed again.
fn from_ring(
    dir: &std::path::Path,
    args: &AshArgs,
    keys: &[Key],
    settings: crate::store::StoreSettings,
) -> Result<Ash, Error> {
    let len =
        crate::commands::snapshot::window_len(args.snapshot.window.unwrap_or(DEFAULT_WINDOW))?;
    let (rec, from, to) = crate::instance::ring::window_between(
        dir,
        args.from,
        args.to.or(args.snapshot.at),
        len,
        crate::instance::walk::WARM,
    )?;
    let hour = crate::model::activity::HISTORY;
    if (to - from).as_secs_f64() > hour {
        return Err(Error::Usage(format!(
            "--from --to: a window of at most {hour:.0} s (database time keeps an hour)"
        )));
    }
    if !rec.skipped.is_empty() {
        warn(&format!("{}: {}", dir.display(), rec.problems_line()));
    }
    let started = rec.started();
    let settings = crate::instance::walk::replay_settings(&rec, settings);
    let mut activity = Activity::new();
    crate::instance::walk::replay_activity(Arc::new(rec), settings, from, to, &mut activity);
    Ok(Ash {
        report: activity.report(&query(from, to, keys, args.top)),
        started,
        read_from: ReadFrom::Outputs,
        note: Some("a ring: its outputs parsed again".into()),
    })
}

fn query(from: Duration, to: Duration, keys: &[Key], top: usize) -> Query {
    Query {
        from: from.as_secs_f64(),
        to: to.as_secs_f64(),
        keys: keys.to_vec(),
        filter: None,
        top,
    }
}

/// The report `ifxtop ash` prints.
pub fn report_for(args: &AshArgs) -> Result<Ash, Error> {
    let live = LiveArgs::watching(args.snapshot.watch.clone());
    let shared = crate::instance::setup::checked(&live)?;
    let keys = keys(&args.group)?;
    let settings = shared.settings.clone();
    if let Some(path) = args.snapshot.watch.replay.as_ref().filter(|p| p.is_dir()) {
        return from_ring(path, args, &keys, settings);
    }
    if let Some(path) = &args.snapshot.watch.replay {
        // A FIFO, a device or a directory is refused before the track is looked for.
        crate::collect::record::checked_file(path)?;
        let note = if args.rederive {
            "--rederive".to_string()
        } else {
            match from_track(path, args, &keys)? {
                Ok(ash) => return Ok(ash),
                Err(why) => why,
            }
        };
        let rec = crate::collect::record::read_replayable_for_walk(path)?;
        // Its problems (cut short, damaged lines), as `snapshot --replay` says them.
        if !rec.skipped.is_empty() {
            warn(&format!("{}: {}", path.display(), rec.problems_line()));
        }
        let started = rec.started();
        let (from, to) = window(args, rec.length(), started, Some(rec.length()))?;
        if to > rec.length() {
            return Err(Error::Usage(format!(
                "--to {:.0}: {} ends {:.0} s in",
                to.as_secs_f64(),
                path.display(),
                rec.length().as_secs_f64()
            )));
        }
        let settings = crate::instance::walk::replay_settings(&rec, settings);
        let mut activity = Activity::new();
        crate::instance::walk::replay_activity(Arc::new(rec), settings, from, to, &mut activity);
        Ok(Ash {
            report: activity.report(&query(from, to, &keys, args.top)),
            started,
            read_from: ReadFrom::Outputs,
            note: Some(note),
        })
    } else if args.snapshot.watch.demo {
        let started = Some(crate::demo::EPOCH);
        let w = args.snapshot.window.unwrap_or(DEFAULT_WINDOW);
        let end = Duration::try_from_secs_f64(w.max(1.0)).unwrap_or(Duration::from_secs(600));
        let (from, to) = window(args, end, started, None)?;
        let demo = crate::demo::DemoInstance::new(args.snapshot.watch.seed)
            .with_sessions(args.snapshot.watch.demo_sessions);
        let activity = demo_activity_with(demo, from, to, settings)?;
        Ok(Ash {
            report: activity.report(&query(from, to, &keys, args.top)),
            started,
            read_from: ReadFrom::Demo,
            note: None,
        })
    } else {
        watch(args, &live, shared, &keys)
    }
}

/// How long `ifxtop ash` watches a live server when no `--window` is given (seconds).
pub const LIVE_WINDOW: f64 = 60.0;

/// The live instance watched for the window (a signal ends it early, with the table so far):
/// every `onstat -u` moment sampled as the screen samples it, with the statements of the
/// blockers and the longest waits collected as the screen collects them. `--record` records it.
fn watch(
    args: &AshArgs,
    live: &LiveArgs,
    shared: crate::instance::setup::Shared,
    keys: &[Key],
) -> Result<Ash, Error> {
    for (given, name) in [
        (args.from.is_some(), "--from"),
        (args.to.is_some(), "--to"),
        (args.snapshot.at.is_some(), "--at"),
    ] {
        if given {
            return Err(Error::Usage(format!(
                "{name}: only with --demo or --replay (a live server is watched for --window \
                 seconds from its first answer)"
            )));
        }
    }
    let window =
        crate::commands::snapshot::window_len(args.snapshot.window.unwrap_or(LIVE_WINDOW))?;
    let mut setups = crate::instance::setup::setups(live, shared)?;
    if setups.len() != 1 {
        return Err(Error::Usage(format!(
            "ifxtop ash watches one instance, and {} are named (give --server or --ssh for one)",
            setups.len()
        )));
    }
    let setup = setups.remove(0);
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprintln!(
            "ifxtop ash: watching {} for {:.0} s (Ctrl-C prints the table so far)",
            crate::format::SafeText::new(&setup.instance),
            window.as_secs_f64()
        );
    }
    let rt = crate::instance::runtime::current_thread()?;
    let watched = rt.block_on(watch_live(&setup, window));
    crate::instance::runtime::finish(rt);
    let (activity, to, interrupted) = watched?;
    if activity.last().is_none() {
        return Err(Error::Other(format!(
            "{}: no onstat -u answered in {:.0} s, so no database time is known",
            setup.instance,
            to.as_secs_f64()
        )));
    }
    Ok(Ash {
        report: activity.report(&query(Duration::ZERO, to, keys, args.top)),
        started: setup.settings.wall_start,
        read_from: ReadFrom::Live,
        note: interrupted.then(|| format!("interrupted after {:.0} s", to.as_secs_f64())),
    })
}

/// Watches the live instance of `setup` for `window`, or until a signal that ends a watch:
/// the database time sampled, the session time it ended at, and whether a signal ended it.
async fn watch_live(
    setup: &crate::instance::setup::Setup,
    window: Duration,
) -> Result<(Activity, Duration, bool), Error> {
    use crate::instance::headless;
    use crate::instance::watch::Watched;
    let mut ends = crate::instance::signals::listen(&crate::instance::signals::Signal::ENDS)?;
    let mut feed = crate::instance::feed::Feed::start(setup)?;
    let mut watched = Watched::new(crate::store::Store::new(setup.settings.clone()), None);
    if let Some(tx) = feed.track() {
        watched.keep_track(tx);
    }
    let crate::instance::feed::Feed::Collect { collection, .. } = &mut feed else {
        return Err(Error::Other("a live watch got a replay".into()));
    };
    // The window counts from the server's first answer to `onstat -u` (an ssh connection or
    // a slow first call takes none of it), and the last moment's data settles before the end.
    // With no answer at all, the watch ends once an answer would have timed out, or when the
    // window has passed if that is later.
    let started = tokio::time::Instant::now();
    let settle = crate::instance::watch::SETTLE * 2;
    let (first_answer, mut answered) = tokio::sync::watch::channel(None);
    let mut interrupted = false;
    let until = async {
        loop {
            let end = match *answered.borrow_and_update() {
                Some(at) => at + window + settle,
                None => started + window.max(crate::source::registry::ONSTAT_TIMEOUT) + settle,
            };
            tokio::select! {
                _ = tokio::time::sleep_until(end) => break,
                // The first answer came: the end moves to its window's.
                Ok(()) = answered.changed() => {}
                s = ends.recv() => {
                    interrupted = s.is_some();
                    break;
                }
            }
        }
    };
    headless::run(
        &mut headless::Input::collectors(collection),
        &mut watched,
        setup.interval,
        setup.server.as_deref(),
        until,
        &mut Background { first_answer },
    )
    .await;
    let to = collection.clock.now();
    let activity = std::mem::take(&mut watched.activity);
    // No sample: say why, where the store knows (the server off-line).
    let offline = activity.last().is_none().then(|| {
        crate::model::snapshot::build(&watched.store, to, setup.server.as_deref(), &[])
            .server
            .offline
    });
    drop(watched);
    if let Some(done) = feed.finish().await {
        let summary = done?;
        eprintln!("ifxtop ash: {}", crate::format::SafeText::new(&summary));
    }
    match offline.flatten() {
        Some(off) => Err(Error::Other(format!(
            "{}: the server is off-line: {off}",
            setup.instance
        ))),
        None => Ok((activity, to, interrupted)),
    }
}

/// A live `ash`'s front-end on the loop: the statements of the blockers and the longest waits of
/// each snapshot asked for, as the screen asks while recording.
struct Background {
    /// When the first `onstat -u` answer (data, off-line or an error) arrived.
    first_answer: tokio::sync::watch::Sender<Option<tokio::time::Instant>>,
}

impl crate::instance::headless::Front for Background {
    fn applied(
        &mut self,
        arrived: &[(crate::source::Source, Option<String>)],
        _watched: &mut crate::instance::watch::Watched,
        _collection: Option<&crate::collect::Collection>,
    ) {
        if self.first_answer.borrow().is_none()
            && arrived
                .iter()
                .any(|(s, _)| *s == crate::source::Source::OnstatU)
        {
            self.first_answer
                .send_replace(Some(tokio::time::Instant::now()));
        }
    }

    fn built(
        &mut self,
        snap: crate::model::snapshot::Snapshot,
        _sampled: bool,
        _watched: &mut crate::instance::watch::Watched,
        collection: Option<&crate::collect::Collection>,
    ) -> crate::instance::headless::Flow {
        if let Some(c) = collection {
            crate::instance::watch::ask_background(c, &snap);
        }
        crate::instance::headless::Flow::Go
    }
}

/// A moment of the window in words: the wall clock where known, with its seconds in.
pub(crate) fn when(started: Option<time::OffsetDateTime>) -> impl Fn(f64) -> String {
    move |s: f64| match started
        .and_then(|w| w.checked_add(time::Duration::seconds_f64(s)))
        .map(crate::format::local_time)
    {
        Some(clock) => format!("{clock} ({s:.0} s)"),
        None => format!("{s:.0} s"),
    }
}

/// `ifxtop ash`.
pub fn run_cli(args: &AshArgs) -> std::process::ExitCode {
    match report_for(args) {
        Ok(ash) => {
            let out = match args.snapshot.format {
                Format::Text => {
                    let mut text = ash.report.text(&when(ash.started));
                    text.push_str(&format!("\nread from {}", ash.read_from.words()));
                    if let Some(n) = &ash.note {
                        text.push_str(&format!(" ({n})"));
                    }
                    Ok(crate::format::SafeText::new(text.trim_end()))
                }
                Format::Json => serde_json::to_value(&ash.report)
                    .and_then(|mut v| {
                        if let Some(o) = v.as_object_mut() {
                            o.insert("read_from".into(), serde_json::to_value(ash.read_from)?);
                            if let Some(n) = &ash.note {
                                o.insert("read_from_note".into(), n.clone().into());
                            }
                        }
                        serde_json::to_string_pretty(&v)
                    })
                    .map(|j| crate::format::SafeText::json(j.trim_end()))
                    .map_err(|e| Error::Other(e.to_string())),
            };
            match out {
                Ok(s) => {
                    crate::commands::snapshot::print(&s);
                    std::process::ExitCode::SUCCESS
                }
                Err(e) => fail(&e),
            }
        }
        Err(e) => fail(&e),
    }
}

/// A line on standard error, through the sanitizer (a problem may quote a recording's text).
fn warn(msg: &str) {
    eprintln!("ifxtop ash: {}", crate::format::SafeText::new(msg));
}

fn fail(e: &Error) -> std::process::ExitCode {
    eprintln!(
        "ifxtop ash: {}",
        crate::format::SafeText::new(&e.to_string())
    );
    std::process::ExitCode::from(match e {
        Error::Usage(_) => 2,
        _ => 1,
    })
}
