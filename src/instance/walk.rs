//! An instance walked through time without a screen: the demo on a paused clock (the real
//! collectors, in virtual time) and a recording played from its start at its recorded times,
//! both on the one headless loop (`headless.rs`) and its one rule, so each samples the database
//! time of every `onstat -u` moment when the live screen does. `ifxtop snapshot` and
//! `ifxtop ash` are built on them.

use crate::collect::extents::ExtentSource;
use crate::collect::sample::RawSample;
use crate::collect::{Collection, SessionClock};
use crate::error::Error;
use crate::instance::headless::{self, Input, Recorded};
use crate::instance::watch::{Watched, SETTLE};
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
/// live screen does (a snapshot built when the one rule says the data settled), and each
/// sample's line of a recording's track into `track` (`model/track.rs`). The headless loop
/// (`headless.rs`) runs it, on a paused clock.
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
/// up to `to`, as the screen tracks them: a snapshot of `to` tracked with it has its findings'
/// ages (a hot spot whose waits rotate has held since it began, not since its oldest wait).
#[allow(clippy::too_many_arguments)]
pub fn demo_store_tracked(
    demo: crate::demo::DemoInstance,
    from: Duration,
    to: Duration,
    settings: StoreSettings,
    record: bool,
    activity: Option<&mut crate::model::activity::Activity>,
    track: Option<&mut Vec<String>>,
    findings: Option<&mut crate::model::findings::FindingsHistory>,
) -> Result<(Store, Vec<RawSample>), Error> {
    let sampling = activity.is_some() || track.is_some();
    let (raw_tx, raw_rx) = std::sync::mpsc::sync_channel::<RawSample>(1 << 20);
    let mut watched = Watched::new(Store::new(settings), None).in_virtual_time();
    if track.is_some() {
        watched.keep_track_lines();
    }
    // Everything due at `to` runs before the clock moves on past it; sampling, the last
    // moment's data settles too.
    let settle_last = if sampling { SETTLE } else { Duration::ZERO };
    let mut front = Sampling {
        sampling,
        from: Duration::ZERO,
        // The collectors' clock is the demo's, from `from`.
        findings: findings.is_some().then_some((Duration::ZERO, to)),
        tracked: None,
    };
    demo_walk(
        demo,
        from,
        (to - from) + settle_last,
        record.then_some(raw_tx),
        &mut watched,
        &mut front,
    )?;
    let samples: Vec<RawSample> = raw_rx.try_iter().collect();
    let mut watched = watched;
    if let Some(t) = track {
        *t = watched.track_lines();
    }
    if let Some(a) = activity {
        *a = std::mem::take(&mut watched.activity);
    }
    if let Some(h) = findings {
        *h = std::mem::take(&mut watched.findings);
    }
    Ok((watched.store, samples))
}

/// The demo walked on a paused clock from demo time `from` for `span`: the real collectors in
/// virtual time, every output also sent to `raw` when given, on the one headless loop, each
/// build handed to `front` (a store sampled, `snapshot` and `ash`; a ring written,
/// `instance/ring.rs`). The collectors are stopped when it returns.
pub(crate) fn demo_walk(
    demo: crate::demo::DemoInstance,
    from: Duration,
    span: Duration,
    raw: Option<std::sync::mpsc::SyncSender<RawSample>>,
    watched: &mut Watched,
    front: &mut impl headless::Front,
) -> Result<(), Error> {
    let rt = crate::instance::runtime::paused()?;
    rt.block_on(async {
        let demo = crate::demo::DemoRunner::new(demo).starting_at(from);
        let mut collection = Collection::start(
            Arc::new(demo),
            Duration::from_secs(1),
            raw,
            ExtentSource::default(),
            SessionClock::starting_at(from),
        );
        let deadline = tokio::time::Instant::now() + span + Duration::from_millis(1);
        headless::run(
            &mut Input::collectors(&mut collection),
            watched,
            Duration::from_secs(1),
            None,
            tokio::time::sleep_until(deadline),
            front,
        )
        .await;
        collection.stop();
    });
    crate::instance::runtime::finish(rt);
    Ok(())
}

/// A walk's front-end: a snapshot at each new `onstat -u` moment from `from` on, sampled by the
/// loop; with `findings` (from, to), the findings of each moment between tracked into the
/// instance's history as the screen tracks them; on the demo, the statements of its blockers
/// and longest waits asked for as the screen asks for them while recording.
struct Sampling {
    sampling: bool,
    from: Duration,
    findings: Option<(Duration, Duration)>,
    /// The last moment whose findings were tracked.
    tracked: Option<Duration>,
}

impl headless::Front for Sampling {
    fn wants(&mut self, watched: &Watched) -> bool {
        let Some(m) = watched.store.moment() else {
            return false;
        };
        let sample =
            self.sampling && m >= self.from && Some(m.as_secs_f64()) != watched.activity.last();
        let track = self
            .findings
            .is_some_and(|(from, to)| m >= from && m <= to && self.tracked != Some(m));
        sample || track
    }

    fn built(
        &mut self,
        mut snap: crate::model::snapshot::Snapshot,
        _sampled: bool,
        watched: &mut Watched,
        collection: Option<&Collection>,
    ) -> headless::Flow {
        if let (Some((from, to)), Some(m)) = (self.findings, watched.store.moment()) {
            // Never a build past `to`: the caller's snapshot of `to` is tracked after these,
            // and a history goes forward in time only.
            if m >= from && snap.at_s <= to.as_secs_f64() && self.tracked != Some(m) {
                self.tracked = Some(m);
                let wall_start = watched.store.settings.wall_start;
                snap.track_findings(&mut watched.findings, wall_start);
            }
        }
        if let Some(c) = collection {
            crate::instance::watch::ask_background(c, &snap);
        }
        watched.recycle(std::sync::Arc::new(snap));
        headless::Flow::Go
    }
}

/// Plays a recording into a store from its start to `to`, sampling every `onstat -u` moment
/// from `sample_from` on, each when the one rule says its data settled (the recorded times are
/// when the data arrived: the screen that recorded it built then).
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

/// How much of a recording before its moment a replayed snapshot tracks the findings of, each
/// `onstat -u` moment built as the screen builds it, so its findings have the history the screen
/// would have given them: since when each has held, and `≥` for what held already when the
/// tracking began.
pub const FINDINGS_HISTORY: Duration = Duration::from_secs(180);

/// A recording's store at `to`, and the history of its findings over the
/// [`FINDINGS_HISTORY`] before it (a snapshot of `to` tracked with it has its findings' ages);
/// with `activity`, database time sampled from its given moment on.
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

/// The recording walked by the headless loop on a paused clock: its times played as they were
/// recorded, up to `to`.
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

/// [`walk`], with the findings of the [`FINDINGS_HISTORY`] before `to` tracked into `findings`.
fn walk_tracked(
    rec: Arc<crate::collect::record::Recording>,
    settings: StoreSettings,
    sample_from: Duration,
    to: Duration,
    activity: &mut Activity,
    only: Option<fn(crate::source::Source) -> bool>,
    findings: Option<&mut crate::model::findings::FindingsHistory>,
) -> Store {
    let mut watched = Watched::new(Store::new(settings), None)
        .in_virtual_time()
        .calls_arrive_whole();
    watched.activity = std::mem::take(activity);
    let track = findings
        .is_some()
        .then_some((to.saturating_sub(FINDINGS_HISTORY), to));
    let walk = |watched: &mut Watched| {
        // A paused clock never fails to build; were it to, the walk is of nothing.
        let Ok(rt) = crate::instance::runtime::paused() else {
            return;
        };
        rt.block_on(async {
            let recorded = Recorded::new(rec, to, only);
            let until = recorded.instant_of(to) + SETTLE + Duration::from_millis(1);
            let mut front = Sampling {
                sampling: true,
                from: sample_from,
                findings: track,
                tracked: None,
            };
            headless::run(
                &mut Input::Recording(recorded),
                watched,
                Duration::from_secs(1),
                None,
                tokio::time::sleep_until(until),
                &mut front,
            )
            .await;
        });
        crate::instance::runtime::finish(rt);
    };
    if tokio::runtime::Handle::try_current().is_ok() {
        // Called from a task (a runtime cannot block on another): the walk's clock runs on a
        // thread of its own.
        std::thread::scope(|sc| {
            if let Err(panic) = sc.spawn(|| walk(&mut watched)).join() {
                std::panic::resume_unwind(panic);
            }
        });
    } else {
        walk(&mut watched);
    }
    *activity = std::mem::take(&mut watched.activity);
    if let Some(h) = findings {
        *h = std::mem::take(&mut watched.findings);
    }
    watched.store
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
