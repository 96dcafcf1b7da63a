//! An instance walked through time without a screen: the demo on a paused clock (the real
//! collectors, in virtual time) and a recording played from its start, each sampling the
//! database time of every `onstat -u` moment once its data settled, as the live screen does.
//! `ifxtop snapshot` and `ifxtop ash` are built on them.

use crate::collect::extents::ExtentSource;
use crate::collect::sample::RawSample;
use crate::collect::{Collection, SessionClock};
use crate::error::Error;
use crate::model::activity::Activity;
use crate::store::{Store, StoreSettings};
use std::sync::Arc;
use std::time::Duration;

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
    demo_store_sampled(demo, from, to, settings, record, None, None)
}

/// `demo_store`, sampling the database time of each `onstat -u` moment into `activity` as the
/// live screen does (a snapshot built once the moment's data settled), and each sample's line
/// of a recording's track into `track` (`model/track.rs`).
pub fn demo_store_sampled(
    demo: crate::demo::DemoInstance,
    from: Duration,
    to: Duration,
    settings: StoreSettings,
    record: bool,
    activity: Option<&mut crate::model::activity::Activity>,
    track: Option<&mut Vec<String>>,
) -> Result<(Store, Vec<RawSample>), Error> {
    demo_store_tracked(demo, from, to, settings, record, activity, track, None)
}

/// [`demo_store_sampled`], and with `findings` the history of the findings of every moment
/// before `to`, as the screen tracks them: a snapshot of `to` tracked with it has its findings'
/// ages (a hot spot whose waits rotate has held since it began, not since its oldest wait).
#[allow(clippy::too_many_arguments)]
pub fn demo_store_tracked(
    demo: crate::demo::DemoInstance,
    from: Duration,
    to: Duration,
    settings: StoreSettings,
    record: bool,
    activity: Option<&mut crate::model::activity::Activity>,
    mut track: Option<&mut Vec<String>>,
    mut findings: Option<&mut crate::model::findings::FindingsHistory>,
) -> Result<(Store, Vec<RawSample>), Error> {
    let mut own = Activity::new();
    let sampling = activity.is_some() || track.is_some();
    let activity = activity.unwrap_or(&mut own);
    let mut encoder = crate::model::track::TrackEncoder::new();
    let rt = crate::instance::runtime::paused()?;
    Ok(rt.block_on(async {
        let demo = crate::demo::DemoRunner::new(demo).starting_at(from);
        let (raw_tx, raw_rx) = std::sync::mpsc::sync_channel::<RawSample>(1 << 20);
        let raw = record.then_some(raw_tx);
        let mut collection = Collection::start(
            Arc::new(demo),
            Duration::from_secs(1),
            raw,
            ExtentSource::default(),
            SessionClock::starting_at(from),
        );
        let mut store = Store::new(settings);
        // Everything due at `to` runs before the clock moves on past it.
        let t0 = tokio::time::Instant::now();
        // Sampling, the last moment's data settles too.
        let settle_last = if sampling {
            crate::instance::watch::SETTLE
        } else {
            Duration::ZERO
        };
        let deadline = t0 + (to - from) + settle_last + Duration::from_millis(1);
        let mut settle: Option<tokio::time::Instant> = None;
        loop {
            let settled = settle.unwrap_or(deadline);
            tokio::select! {
                Some(u) = collection.updates.recv() => {
                    let moment = u.source == crate::source::Source::OnstatU;
                    store.apply(u);
                    if moment && (sampling || findings.is_some()) {
                        settle = Some(tokio::time::Instant::now() + crate::instance::watch::SETTLE);
                    }
                }
                _ = tokio::time::sleep_until(settled), if settle.is_some() => {
                    settle = None;
                    let now = from + t0.elapsed();
                    let mut snap = crate::model::snapshot::build(&store, now, None, &[]);
                    // Never past `to`: the snapshot of `to` is tracked after them.
                    if let Some(h) = findings.as_deref_mut().filter(|_| now <= to) {
                        snap.track_findings(h, store.settings.wall_start);
                    }
                    if sampling {
                        crate::instance::watch::sample_keeping(activity, &snap, &mut |at, a| {
                            if let Some(t) = track.as_deref_mut() {
                                t.push(encoder.line(at, a));
                            }
                        });
                    }
                    crate::instance::watch::ask_background(&collection, &snap);
                }
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

/// Plays a recording into a store from its start to `to`, sampling every `onstat -u` moment
/// from `sample_from` on, each once its data settled (as the live screen builds it).
pub fn replay_walk(
    rec: Arc<crate::collect::record::Recording>,
    settings: StoreSettings,
    sample_from: Duration,
    to: Duration,
    activity: &mut Activity,
) -> Store {
    walk(rec, settings, sample_from, to, activity, None)
}

/// `replay_walk` for the database time alone (`ifxtop ash`): only the sources it reads
/// ([`feeds_activity`]) are parsed, the rest read past; the same samples, for a fraction of
/// the work.
pub fn replay_activity(
    rec: Arc<crate::collect::record::Recording>,
    settings: StoreSettings,
    sample_from: Duration,
    to: Duration,
    activity: &mut Activity,
) {
    walk(
        rec,
        settings,
        sample_from,
        to,
        activity,
        Some(feeds_activity),
    );
}

fn walk(
    rec: Arc<crate::collect::record::Recording>,
    settings: StoreSettings,
    sample_from: Duration,
    to: Duration,
    activity: &mut Activity,
    only: Option<fn(crate::source::Source) -> bool>,
) -> Store {
    walk_tracked(rec, settings, sample_from, to, activity, only, None)
}

/// How much of a recording before its moment a replayed snapshot walks, each `onstat -u` moment
/// built as the screen builds it, so its findings have the history the screen would have given
/// them: since when each has held, and `≥` for what held already when the walk began.
pub const FINDINGS_HISTORY: Duration = Duration::from_secs(180);

/// A recording's store at `to`, and the history of its findings over the
/// [`FINDINGS_HISTORY`] before it (a snapshot of `to` tracked with it has its findings' ages);
/// with `activity`, database time sampled from its first moment on.
pub fn replay_with_findings(
    rec: Arc<crate::collect::record::Recording>,
    settings: StoreSettings,
    to: Duration,
    activity: Option<(Duration, &mut Activity)>,
) -> (Store, crate::model::findings::FindingsHistory) {
    let mut history = crate::model::findings::FindingsHistory::default();
    let mut own = Activity::new();
    let (sample_from, activity) = match activity {
        Some((from, a)) => (from, a),
        // Nothing sampled: a moment after the end.
        None => (to + Duration::from_secs(1), &mut own),
    };
    let store = walk_tracked(
        rec,
        settings,
        sample_from,
        to,
        activity,
        None,
        Some(&mut history),
    );
    (store, history)
}

fn walk_tracked(
    rec: Arc<crate::collect::record::Recording>,
    settings: StoreSettings,
    sample_from: Duration,
    to: Duration,
    activity: &mut Activity,
    only: Option<fn(crate::source::Source) -> bool>,
    mut findings: Option<&mut crate::model::findings::FindingsHistory>,
) -> Store {
    let mut store = Store::new(settings);
    let mut player = crate::collect::replay::Player::new(rec.clone());
    let play = |store: &mut Store, played: crate::collect::replay::Played| match only {
        Some(keep) => store.play(played.only(keep)),
        None => store.play(played),
    };
    let track_from = if findings.is_some() {
        to.saturating_sub(FINDINGS_HISTORY).min(sample_from)
    } else {
        sample_from
    };
    let mut ticks: Vec<Duration> = rec
        .sources()
        .zip(rec.times())
        .filter(|(s, _)| *s == crate::source::Source::OnstatU)
        .map(|(_, t)| t)
        .filter(|t| *t >= track_from && *t <= to)
        .collect();
    ticks.dedup();
    for t in ticks {
        // The moment's data settled, as the screen builds it; never past `to`.
        let settled = (t + crate::instance::watch::SETTLE).min(to);
        play(&mut store, player.seek(settled));
        let mut snap = crate::model::snapshot::build(&store, settled, None, &[]);
        if let Some(h) = findings.as_deref_mut() {
            snap.track_findings(h, store.settings.wall_start);
        }
        if t >= sample_from {
            crate::instance::watch::sample_into(activity, &snap);
        }
    }
    play(&mut store, player.seek(to));
    store
}

/// A track's first and last moments (session seconds), and whether it was read to the file's
/// end.
pub type TrackSpan = (f64, f64, bool);

/// The first and last moments of the database-time track of the recording at `path`
/// (`collect/track.rs`), and whether it was read to the file's end; none without a track; the
/// inner error says which frame could not be unpacked (damaged, or past the memory budget).
pub fn track_span(path: &std::path::Path) -> Result<Result<Option<TrackSpan>, String>, Error> {
    let mut span: Option<(f64, f64)> = None;
    // Its first and last frames: the frames between are stepped over, not unpacked.
    let read = crate::collect::track::read_track_ends(path, |line| {
        if let Some(at) = crate::model::track::moment_of(line) {
            let first = span.map_or(at, |s| s.0);
            span = Some((first, at));
        }
        true
    })
    .map_err(|source| Error::File {
        path: path.display().to_string(),
        source,
    })?;
    if let Some(damaged) = read.as_ref().and_then(|r| r.damaged.clone()) {
        return Ok(Err(damaged));
    }
    Ok(Ok(read.zip(span).map(|(r, (a, b))| (a, b, r.complete))))
}

/// Adds the samples of the recording's track from `from` to `to` (session seconds) to
/// `activity`, with those of the [`WARM`] before `from` (as the screen had them before the
/// window: each sample stands for the time since the one before). The track's damage, if it
/// has any before `to`, is the error's text.
pub fn track_activity(
    path: &std::path::Path,
    from: f64,
    to: f64,
    activity: &mut Activity,
) -> Result<Result<(), String>, Error> {
    let mut decoder = crate::model::track::TrackDecoder::new();
    let mut bad = None;
    let lead = from - WARM.as_secs_f64();
    let read = crate::collect::track::read_track(path, |line| match decoder.sample(line) {
        Ok(s) if s.at > to => false,
        Ok(s) => {
            if s.at >= lead {
                s.add_to(activity);
            }
            true
        }
        Err(e) => {
            bad = Some(e);
            false
        }
    })
    .map_err(|source| Error::File {
        path: path.display().to_string(),
        source,
    })?;
    // A frame that could not be unpacked: the samples after it are not known.
    if let Some(damaged) = read.and_then(|r| r.damaged).filter(|_| bad.is_none()) {
        bad = Some(damaged);
    }
    Ok(bad.map_or(Ok(()), Err))
}

/// What a walk into a window of database time starts with, so the first sample has a sample
/// before it (and waits and rates a past).
pub const WARM: Duration = Duration::from_secs(60);

/// Whether database time reads a source: the threads and their waits, what they wait on and
/// who holds it (locks, buffers, conditions, mutexes, latches, the engine's blocker graph), the
/// ready queue, names (threads, clients, tables, the extent map), the sessions' programs and
/// SQL, and the sockets (whether a client wait is idle). The rest (the vital signs and
/// transactions, I/O, NUMA, replication, a running query's operators) is read past unparsed by
/// `replay_activity`. Every source is named, so a new one is a decision; `tests/ash` checks the
/// samples are the same.
pub(crate) fn feeds_activity(s: crate::source::Source) -> bool {
    use crate::source::Source as S;
    match s {
        S::OnstatU
        | S::OnstatX
        | S::OnstatGCon
        | S::OnstatGAth
        | S::OnstatGNtt
        | S::OnstatK
        | S::OnstatS
        | S::OnstatGRea
        | S::OnstatGLmx
        | S::OnstatGWmx
        | S::OnstatGBth
        | S::OnstatGSes(_)
        | S::OnstatGSql(_)
        | S::OncheckPe
        | S::Systabnames
        // A client wait is idle only when its socket has nothing queued (a Send-Q is the
        // server waiting for a slow client: database time).
        | S::Netstat
        | S::ProcNetTcp
        | S::ProcNetTcp6 => true,
        S::OnstatP
        | S::OnstatL
        | S::OnstatXTxn
        | S::OnstatGGlo
        | S::OnstatGTpf
        | S::OnstatGCpu
        | S::OnstatGSesList
        | S::OnstatGPqs(_)
        | S::OnstatGCkp
        | S::OnstatGSeg
        | S::OnstatDUpper
        | S::OnstatGIof
        | S::ProcDiskstats
        | S::ChunkDevices
        | S::OnstatGCluster
        | S::OnstatGRss
        | S::OnstatGSds
        | S::OnstatGDri
        | S::NodesOnline
        | S::NodeMeminfo(_)
        | S::NodeCpulist(_)
        | S::ZoneReclaimMode
        | S::Vmstat
        | S::NumaMaps(_) => false,
        #[cfg(test)]
        S::Toy => false,
    }
}

/// The recording's settings, as `snapshot --replay` takes them.
pub fn replay_settings(
    rec: &crate::collect::record::Recording,
    mut settings: StoreSettings,
) -> StoreSettings {
    settings.wall_start = rec.started();
    settings.host = rec.header.as_ref().and_then(|h| h.host.clone());
    if let Some(kb) = rec.header.as_ref().and_then(|h| h.base_page_kb) {
        settings.base_page_kb = kb;
    }
    settings
}
