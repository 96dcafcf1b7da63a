//! `ifxtop ash`: database time over a window, as Oracle's ASH reports it: who waited on what,
//! grouped by any key, from the demo or a recording. The same samples as the Activity pane
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

/// A time of `--from`/`--to`: seconds into the demo's timeline or the recording, or a wall
/// clock `HH:MM[:SS]` of the day the recording (the demo) started on, in its time zone (the
/// next day's, when earlier than the start).
pub(crate) fn moment(s: &str, started: Option<time::OffsetDateTime>) -> Result<Duration, Error> {
    let bad = || {
        Error::Usage(format!(
            "{s}: seconds (130, 42.5) or a time of day (13:10, 13:10:30)"
        ))
    };
    if !s.contains(':') {
        let secs: f64 = s.trim().parse().map_err(|_| bad())?;
        return Duration::try_from_secs_f64(secs).map_err(|_| bad());
    }
    let parts: Vec<u8> = s
        .split(':')
        .map(|p| p.trim().parse::<u8>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad())?;
    let (h, m, sec) = match parts.as_slice() {
        [h, m] => (*h, *m, 0),
        [h, m, sec] => (*h, *m, *sec),
        _ => return Err(bad()),
    };
    let t = time::Time::from_hms(h, m, sec).map_err(|_| bad())?;
    let started = started.ok_or_else(|| {
        Error::Usage(format!(
            "{s}: a time of day needs the recording's start time, which it does not have: give seconds"
        ))
    })?;
    let mut at = started.replace_time(t);
    if at < started {
        at += time::Duration::days(1);
    }
    Duration::try_from(at - started).map_err(|_| bad())
}

/// The window asked for, as (from, to), with `end` the default end.
fn window(
    args: &AshArgs,
    end: Duration,
    started: Option<time::OffsetDateTime>,
) -> Result<(Duration, Duration), Error> {
    let to = match (&args.to, args.snapshot.at) {
        (Some(t), _) => moment(t, started)?,
        (None, Some(at)) => Duration::try_from_secs_f64(at)
            .map_err(|_| Error::Usage(format!("--at {at}: a number of seconds, 0 or more")))?,
        (None, None) => end,
    };
    let from = match &args.from {
        Some(f) => moment(f, started)?,
        None => {
            let w = args.snapshot.window.unwrap_or(DEFAULT_WINDOW);
            to.saturating_sub(Duration::try_from_secs_f64(w).map_err(|_| {
                Error::Usage(format!("--window {w}: a number of seconds, more than 0"))
            })?)
        }
    };
    if from >= to {
        return Err(Error::Usage(format!(
            "the window ends ({:.0} s) before it begins ({:.0} s)",
            to.as_secs_f64(),
            from.as_secs_f64()
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
    )?;
    Ok(activity)
}

/// The report `ifxtop ash` prints, with the wall-clock start to say its times with.
pub fn report_for(args: &AshArgs) -> Result<(Report, Option<time::OffsetDateTime>), Error> {
    let live = LiveArgs::watching(args.snapshot.watch.clone());
    let shared = crate::instance::setup::checked(&live)?;
    let keys = keys(&args.group)?;
    let settings = shared.settings.clone();
    let (from, to, started, activity) = if let Some(path) = &args.snapshot.watch.replay {
        let rec = crate::collect::record::read_replayable_for_walk(path)?;
        let started = rec.started();
        let (from, to) = window(args, rec.length(), started)?;
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
        (from, to, started, activity)
    } else if args.snapshot.watch.demo {
        let started = Some(crate::demo::EPOCH);
        let w = args.snapshot.window.unwrap_or(DEFAULT_WINDOW);
        let end = Duration::try_from_secs_f64(w.max(1.0)).unwrap_or(Duration::from_secs(600));
        let (from, to) = window(args, end, started)?;
        let demo = crate::demo::DemoInstance::new(args.snapshot.watch.seed)
            .with_sessions(args.snapshot.watch.demo_sessions);
        let activity = demo_activity_with(demo, from, to, settings)?;
        (from, to, started, activity)
    } else {
        return Err(Error::Usage(
            "ifxtop ash reads the demo (--demo) or a recording (--replay FILE); for a live \
             server, watch the Activity pane (8) of the screen, or record (--record FILE) and \
             read the recording"
                .into(),
        ));
    };
    let report = activity.report(&Query {
        from: from.as_secs_f64(),
        to: to.as_secs_f64(),
        keys,
        filter: None,
        top: args.top,
    });
    Ok((report, started))
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
        Ok((report, started)) => {
            let out = match args.snapshot.format {
                Format::Text => Ok(report.text(&when(started))),
                Format::Json => {
                    serde_json::to_string_pretty(&report).map_err(|e| Error::Other(e.to_string()))
                }
            };
            match out {
                Ok(s) => {
                    println!("{}", crate::format::SafeText::new(s.trim_end()));
                    std::process::ExitCode::SUCCESS
                }
                Err(e) => fail(&e),
            }
        }
        Err(e) => fail(&e),
    }
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
