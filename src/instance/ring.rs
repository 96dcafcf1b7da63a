//! The flight recorder for one watched instance (`collect/ring.rs` writes it): its settings from
//! the command line and the config, started beside the collectors, its incidents from the
//! findings of each moment sampled (`Watched::sample`), a window of it replayed as a recording;
//! and the demo walked on a paused clock into a ring (the tests' and the measurements' way).

use crate::cli::{LiveArgs, RingArgs};
use crate::collect::record::Recording;
use crate::collect::ring::{Event, Origin, Ring, RingConfig, RingIndex, RingWriter};
use crate::collect::sample::RawSample;
use crate::collect::Collection;
use crate::error::Error;
use crate::format::When;
use crate::instance::config::Config;
use crate::instance::headless;
use crate::instance::watch::Watched;
use crate::store::{Store, StoreSettings};
use std::path::Path;
use std::time::Duration;

/// The ring's settings from the command line, else the config, else the defaults.
pub(crate) fn config_for(args: &LiveArgs, config: &Config) -> Result<Option<RingConfig>, Error> {
    let r = &args.ring;
    let Some(dir) = r.ring.clone().or_else(|| config.ring.clone()) else {
        return Ok(None);
    };
    let mut cfg = RingConfig::new(dir);
    let hours = r.ring_hours.or(config.ring_hours);
    if let Some(h) = hours {
        if !(h > 0.0 && h <= 24.0 * 366.0) {
            return Err(Error::Usage(format!(
                "ring-hours {h}: more than 0, at most a year"
            )));
        }
        cfg.retention = Duration::from_secs_f64(h * 3600.0);
    }
    if let Some(mb) = r.ring_max_mb.or(config.ring_max_mb) {
        if mb < 16 {
            return Err(Error::Usage(format!(
                "ring-max-mb {mb}: at least 16 (a segment is an eighth of it)"
            )));
        }
        cfg.max_bytes = mb.saturating_mul(crate::files::MB);
    }
    if let Some(m) = r.ring_before.or(config.ring_before) {
        if !(0.0..=120.0).contains(&m) {
            return Err(Error::Usage(format!("ring-before {m}: minutes, 0 to 120")));
        }
        cfg.before = Duration::from_secs_f64(m * 60.0);
    }
    if let Some(mb) = r.ring_incidents_mb.or(config.ring_incidents_mb) {
        cfg.incidents_max_bytes = mb.saturating_mul(crate::files::MB);
    }
    Ok(Some(cfg))
}

/// One of several instances keeps its ring in a directory of its own in the one named, after
/// the instance's name.
pub(crate) fn per_instance(cfg: &mut RingConfig, instance: &str) -> Result<(), Error> {
    let name = crate::files::name_of_instance(instance);
    crate::collect::ring::prepare_dir(&cfg.dir)?;
    cfg.dir = cfg.dir.join(name);
    Ok(())
}

/// What the ring's segments of `setup` say of where they come from.
fn origin(settings: &StoreSettings, server: Option<&str>) -> Origin {
    Origin {
        server: server.map(String::from),
        host: settings.host.clone(),
        wall_start: settings
            .wall_start
            .unwrap_or_else(time::OffsetDateTime::now_utc),
        ports: settings.ports.clone(),
        base_page_kb: settings.base_page_kb,
    }
}

/// Starts the ring `cfg` of an instance (its settings, its server): the sender its collectors
/// record to (each output also goes on to `also`, a `--record` file).
pub fn start(
    cfg: &RingConfig,
    settings: &StoreSettings,
    server: Option<&str>,
    also: Option<std::sync::mpsc::SyncSender<RawSample>>,
) -> Result<(Ring, std::sync::mpsc::SyncSender<RawSample>), Error> {
    let writer = RingWriter::open(cfg.clone(), origin(settings, server))?;
    let (tx, rx) = std::sync::mpsc::sync_channel::<RawSample>(4096);
    Ok((Ring::start(writer, rx, also), tx))
}

/// The ring in `dir` given to `--replay`: a directory with no ring in it is refused as a
/// directory given for a recording file is.
fn open_for_replay(dir: &Path) -> Result<RingIndex, Error> {
    if crate::collect::ring::segments(dir)?.is_empty() {
        return Err(Error::Usage(format!(
            "--replay {}: a directory, not a regular file, and no ring in it (a ring is what \
             `--ring DIR` writes)",
            dir.display()
        )));
    }
    RingIndex::open(dir)
}

/// The window of the ring in `dir` that `--from`/`--to` name (default: the last hour), as one
/// recording.
pub(crate) fn replay_window(dir: &Path, r: &RingArgs, timeline: bool) -> Result<Recording, Error> {
    let index = open_for_replay(dir)?;
    let moment = |flag: &str, w: When| {
        index
            .moment(w)
            .map_err(|e| Error::Usage(format!("--{flag} {e}")))
    };
    let to = match r.to {
        Some(w) => moment("to", w)?,
        None => index.end,
    };
    let from = match r.from {
        Some(w) => moment("from", w)?,
        None => to - time::Duration::hours(1),
    };
    if from > to {
        return Err(Error::Usage("--from: after --to".into()));
    }
    index.window(from, to, timeline)
}

/// The ring in `dir` up to `at` (default its end), from `warm` before it, as a recording for a
/// walk: the recording and `at` on its clock.
pub fn window_to(
    dir: &Path,
    at: Option<When>,
    warm: Duration,
) -> Result<(Recording, Duration), Error> {
    let index = open_for_replay(dir)?;
    let at = match at {
        Some(w) => index
            .moment(w)
            .map_err(|e| Error::Usage(format!("--at {e}")))?,
        None => index.end,
    };
    let from = at - time::Duration::try_from(warm).unwrap_or_default();
    let rec = index.window(from, at, false)?;
    let start = rec.started().unwrap_or(from);
    Ok((rec, Duration::try_from(at - start).unwrap_or_default()))
}

/// The ring in `dir` from `from` to `to` (defaults: `len` before the end, the end), from `warm`
/// before `from`: the recording and the window on its clock.
pub fn window_between(
    dir: &Path,
    from: Option<When>,
    to: Option<When>,
    len: Duration,
    warm: Duration,
) -> Result<(Recording, Duration, Duration), Error> {
    let index = open_for_replay(dir)?;
    let to = match to {
        Some(w) => index
            .moment(w)
            .map_err(|e| Error::Usage(format!("--to {e}")))?,
        None => index.end,
    };
    let from = match from {
        Some(w) => index
            .moment(w)
            .map_err(|e| Error::Usage(format!("--from {e}")))?,
        None => to - time::Duration::try_from(len).unwrap_or_default(),
    };
    if from > to {
        return Err(Error::Usage("--from: after --to".into()));
    }
    let rec = index.window(
        from - time::Duration::try_from(warm).unwrap_or_default(),
        to,
        false,
    )?;
    let start = rec.started().unwrap_or(from);
    let on = |t: time::OffsetDateTime| Duration::try_from(t - start).unwrap_or_default();
    Ok((rec, on(from), on(to)))
}

/// The demo walked on a paused clock from `from` to `to` into `ring`, as `serve --ring` would
/// have written it: every output collected, and the incidents of the findings of each moment
/// (`Watched::sample`, as on the screen and in `serve`). The outputs are handed to the writer
/// after each build, on the loop's thread, so none is dropped however fast the clock runs.
pub fn demo_ring(
    demo: crate::demo::DemoInstance,
    from: Duration,
    to: Duration,
    settings: StoreSettings,
    ring: &mut RingWriter,
) -> Result<(), Error> {
    let (raw_tx, raw_rx) = std::sync::mpsc::sync_channel::<RawSample>(1 << 16);
    let (ev_tx, ev_rx) = std::sync::mpsc::channel::<Event>();
    let mut watched = Watched::new(Store::new(settings), None).in_virtual_time();
    watched.keep_incidents(ev_tx);
    let mut front = Writing {
        ring,
        raw: &raw_rx,
        events: &ev_rx,
    };
    crate::instance::walk::demo_walk(
        demo,
        from,
        to - from,
        Some(raw_tx),
        &mut watched,
        &mut front,
    )?;
    // What the collectors sent after the last build.
    front.drain();
    Ok(())
}

/// The walk's front-end: the outputs and incidents so far into the ring, and the statements
/// asked for as the screen asks for them.
struct Writing<'a> {
    ring: &'a mut RingWriter,
    raw: &'a std::sync::mpsc::Receiver<RawSample>,
    events: &'a std::sync::mpsc::Receiver<Event>,
}

impl Writing<'_> {
    fn drain(&mut self) {
        while let Ok(s) = self.raw.try_recv() {
            self.ring.write(s);
        }
        while let Ok(e) = self.events.try_recv() {
            self.ring.event(e);
        }
    }
}

impl headless::Front for Writing<'_> {
    fn built(
        &mut self,
        snap: crate::model::snapshot::Snapshot,
        _sampled: bool,
        _watched: &mut Watched,
        collection: Option<&Collection>,
    ) -> headless::Flow {
        self.drain();
        if let Some(c) = collection {
            crate::instance::watch::ask_background(c, &snap);
        }
        headless::Flow::Go
    }
}

/// The marks viewers of the shared feed send (`instance/share`), written into the ring in `dir`
/// as its bookmarks (`ifxtop incidents` lists them): at the collector's moment they point at
/// (on its clock, `wall_start` + the session time), with who marked. On a thread of its own
/// that ends when the feed does.
pub(crate) fn marks_into(
    marks: std::sync::mpsc::Receiver<crate::collect::wire::Mark>,
    dir: std::path::PathBuf,
    wall_start: Option<time::OffsetDateTime>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for m in marks {
            let at = wall_start
                .and_then(|w| w.checked_add(time::Duration::seconds_f64(m.at.max(0.0))))
                .unwrap_or_else(time::OffsetDateTime::now_utc);
            let note = if m.by.is_empty() {
                m.text
            } else {
                format!("{} ({})", m.text, m.by)
            };
            let _ = crate::collect::ring::mark(&dir, at, &note);
        }
    })
}

/// Joins a shared feed's marks to the ring, when the instance has both.
pub(crate) fn share_marks(
    share: Option<&crate::instance::share::Share>,
    ring: Option<&Ring>,
    wall_start: Option<time::OffsetDateTime>,
) {
    if let (Some(share), Some(ring)) = (share, ring) {
        let (tx, rx) = std::sync::mpsc::sync_channel(64);
        share.marks_to(tx);
        let _ = marks_into(rx, ring.dir().to_path_buf(), wall_start);
    }
}

#[cfg(test)]
mod marks_tests {
    use super::*;

    /// A viewer's mark lands in the ring's marks at the collector's moment it points at, with
    /// who marked.
    #[test]
    fn a_viewers_mark_is_a_bookmark_of_the_ring() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let ring = dir.path().join("ring");
        let start = time::macros::datetime!(2026-11-22 13:30:00 UTC);
        let (tx, rx) = std::sync::mpsc::sync_channel(4);
        let t = marks_into(rx, ring.clone(), Some(start));
        tx.send(crate::collect::wire::Mark {
            at: 290.0,
            text: "look at sid 812".into(),
            by: "anna".into(),
        })
        .expect("sent");
        drop(tx);
        t.join().expect("the thread ends with the feed");
        let marks = crate::collect::ring::marks(&ring);
        assert_eq!(marks.len(), 1, "{marks:?}");
        assert_eq!(marks[0].note, "look at sid 812 (anna)");
        assert_eq!(marks[0].at, "2026-11-22T13:34:50Z");
    }

    /// A ring that stopped writing (its file system under what it leaves free) is on every
    /// snapshot built beside it: a `ring_stopped` finding saying why, and its cost with the
    /// stop, for the cost line and `serve`'s metrics.
    #[test]
    fn a_stopped_ring_is_a_finding_and_on_the_cost_line() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let mut cfg = RingConfig::new(dir.path().join("ring"));
        cfg.min_free_bytes = Some(u64::MAX);
        let origin = Origin {
            server: Some("ol_demo".into()),
            host: None,
            wall_start: time::macros::datetime!(2026-11-22 13:30:00 UTC),
            ports: Vec::new(),
            base_page_kb: 2,
        };
        let writer = RingWriter::open(cfg, origin).expect("ring");
        let (tx, rx) = std::sync::mpsc::sync_channel::<RawSample>(4);
        let ring = Ring::start(writer, rx, None);
        tx.send(RawSample {
            t: 0.0,
            source: "onstat -u".into(),
            argv: vec!["onstat".into(), "-u".into()],
            exit: Some(0),
            stdout: String::new(),
            stderr: String::new(),
        })
        .expect("sent");
        // The thread shares its stats once a second.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while ring.stats().stopped.is_none() {
            assert!(std::time::Instant::now() < deadline, "{:?}", ring.stats());
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut watched = Watched::new(Store::new(StoreSettings::default()), None);
        watched.keep_ring(&ring);
        let snap = watched.build(Duration::from_secs(1), Some("ol_demo"), &[], None);
        let f = snap
            .findings
            .iter()
            .find(|f| f.kind == crate::model::findings::FindingKind::RingStopped)
            .unwrap_or_else(|| panic!("{:#?}", snap.findings));
        assert_eq!(f.severity, crate::model::findings::Severity::Warning);
        assert!(f.summary.contains("disk nearly full"), "{}", f.summary);
        let stats = snap.ring.as_ref().expect("the ring's cost");
        assert!(stats.stopped.is_some());
        drop(tx);
        ring.finish();
    }
}
