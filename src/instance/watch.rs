//! One instance's store and the one rule for when what is built from it is due (the screen's
//! snapshot, `serve`'s metrics, a `snapshot`'s report, the walks' samples): data arriving
//! together settles for `SETTLE` from its first arrival, then one build for all of it, at most
//! every half interval for data alone; what the user does, at once. Every loop follows it: the
//! headless one (`headless.rs`) and the screen's (`tui/run.rs`).

use crate::collect::log::DebugLog;
use crate::collect::sample::Update;
use crate::model::activity::Activity;
use crate::model::snapshot::Snapshot;
use crate::store::Store;
use std::time::Duration;
use tokio::time::Instant;

/// Data arriving together (one tick of the collectors) settles this long from its first
/// arrival, so the snapshot is built once for all of it.
pub(crate) const SETTLE: Duration = Duration::from_millis(60);

/// One instance's store, its `--log` diary, and when what is built from the store is due: the
/// screen's session and `serve` each keep one per instance.
pub struct Watched {
    pub(crate) store: Store,
    /// Since when each finding of the snapshots built from the store has held.
    pub(crate) findings: crate::model::findings::FindingsHistory,
    log: Option<DebugLog>,
    rebuild: Rebuild,
    /// Database time: one sample per `onstat -u` moment built (`model/activity.rs`).
    pub(crate) activity: Activity,
    /// Where each sample also goes when recording: the recording's track.
    track: Option<Kept>,
    /// The data arrives in real time: ifxtop's own CPU is read as it arrives (not on a walk's
    /// paused clock, where a share of a core over virtual time would be nonsense).
    real_time: bool,
    /// Every part of a call arrives at once (a recording walked a time at a time: its parts
    /// carry the call's time), so a moment needs no wait for the rest of its call; a walk that
    /// parses only some sources would otherwise wait for parts it never reads.
    calls_whole: bool,
    /// The snapshot's parts kept from the last build: the ones whose sources did not move
    /// are shared with the next (`model/parts/`).
    pub(crate) parts: crate::model::parts::Parts,
    /// The flight recorder's incidents: the findings of each moment sampled, and where their
    /// beginnings and ends go (`collect/ring.rs`).
    incidents: Option<(
        crate::model::incidents::IncidentWatch,
        std::sync::mpsc::Sender<crate::collect::ring::Event>,
    )>,
    /// The flight recorder's stats, for each snapshot built: its cost, and a finding when it
    /// stopped writing.
    ring: Option<std::sync::Arc<std::sync::Mutex<crate::collect::ring::RingStats>>>,
}

/// The recording's database-time track (`model/track.rs`): each sample's line, sent to the
/// recorder (or kept, on a walk that writes its recording at the end).
struct Kept {
    to: TrackTo,
    encoder: crate::model::track::TrackEncoder,
}

enum TrackTo {
    Recorder(std::sync::mpsc::SyncSender<String>),
    Lines(Vec<String>),
}

impl Watched {
    pub(crate) fn new(store: Store, log: Option<DebugLog>) -> Self {
        Watched {
            store,
            findings: Default::default(),
            log,
            rebuild: Rebuild::default(),
            activity: Activity::new(),
            track: None,
            real_time: true,
            calls_whole: false,
            parts: Default::default(),
            incidents: None,
            ring: None,
        }
    }

    /// Every part of a call arrives at once: see `calls_whole`.
    pub(crate) fn calls_arrive_whole(mut self) -> Self {
        self.calls_whole = true;
        self
    }

    /// The data arrives on a paused clock (a walk): no reading of ifxtop's own CPU.
    pub(crate) fn in_virtual_time(mut self) -> Self {
        self.real_time = false;
        self
    }

    /// Each sample taken from now on also goes to the recording's track.
    pub(crate) fn keep_track(&mut self, tx: std::sync::mpsc::SyncSender<String>) {
        self.track = Some(Kept {
            to: TrackTo::Recorder(tx),
            encoder: crate::model::track::TrackEncoder::new(),
        });
    }

    /// The findings of each moment sampled from now on make the ring's incidents (sent to
    /// `tx`).
    pub(crate) fn keep_incidents(
        &mut self,
        tx: std::sync::mpsc::Sender<crate::collect::ring::Event>,
    ) {
        self.incidents = Some((Default::default(), tx));
    }

    /// Keeping the ring `ring`: the findings of each moment sampled make its incidents, and
    /// each snapshot built shows what it costs (and a finding when it stopped writing).
    pub(crate) fn keep_ring(&mut self, ring: &crate::collect::ring::Ring) {
        self.keep_incidents(ring.events());
        self.ring = Some(ring.stats_handle());
    }

    /// Each sample taken from now on also makes a line of a track, kept until
    /// [`Watched::track_lines`] takes them (a walk writes its recording at the end).
    pub(crate) fn keep_track_lines(&mut self) {
        self.track = Some(Kept {
            to: TrackTo::Lines(Vec::new()),
            encoder: crate::model::track::TrackEncoder::new(),
        });
    }

    /// The track's lines kept so far (see [`Watched::keep_track_lines`]).
    pub(crate) fn track_lines(&mut self) -> Vec<String> {
        match &mut self.track {
            Some(Kept {
                to: TrackTo::Lines(lines),
                ..
            }) => std::mem::take(lines),
            _ => Vec::new(),
        }
    }

    /// Applies updates that arrived together (and writes them to the diary); returns how long
    /// until they settle (what is built from the store is due then at the earliest).
    pub(crate) fn apply(&mut self, updates: impl IntoIterator<Item = Update>) -> Duration {
        // ifxtop's own CPU, read as the data arrives: a watch in real time makes a true share
        // of a core with the updates' times (in the demo, which starts no process, it is the
        // only reading); a walk's paused clock would make nonsense of it.
        let reading = if self.real_time {
            crate::source::cost::now()
        } else {
            None
        };
        for mut u in updates {
            if u.how.process.is_none() {
                u.how.process = reading;
            }
            if let Some(l) = &mut self.log {
                l.update(&u);
            }
            self.store.apply(u);
        }
        self.rebuild.arrived()
    }

    /// Applies what a recording walked at its own pace played at one of its times: data that
    /// arrived together, as `apply`. It counts as arrived even when the walk parses none of it
    /// (`Played::only`), so the builds fall when the screen's did.
    pub(crate) fn play(&mut self, played: crate::collect::replay::Played) {
        self.store.play(played);
        self.store.generation += 1;
        self.rebuild.arrived();
    }

    /// A line in the diary of `--log`, if any.
    pub(crate) fn log(&mut self, now: Duration, line: &str) {
        if let Some(l) = &mut self.log {
            l.line(now, line);
        }
    }

    /// Why `--log` stopped writing (a full disk), the first time it is asked after it did.
    pub(crate) fn log_failure(&mut self) -> Option<String> {
        self.log.as_mut()?.take_failure()
    }

    /// The snapshot of the store at `now` (of `server`, with the screens of the sessions in
    /// `focus` and of the buffer hot spot `hotspot`), sharing the parts whose sources did not
    /// move since the last one.
    pub(crate) fn build(
        &mut self,
        now: Duration,
        server: Option<&str>,
        focus: &[crate::ids::Sid],
        hotspot: Option<&str>,
    ) -> Snapshot {
        let snap = crate::model::snapshot::build_from(
            &self.store,
            now,
            server,
            focus,
            hotspot,
            &mut self.parts,
        );
        #[cfg(test)]
        check::compare(&self.store, &snap, &self.parts, |store| {
            crate::model::snapshot::build_with(store, now, server, focus, hotspot)
        });
        let mut snap = snap;
        if let Some(r) = &self.ring {
            let stats = r.lock().map(|s| s.clone()).unwrap_or_default();
            if let Some(why) = &stats.stopped {
                crate::model::findings::insert(
                    &mut snap.findings,
                    crate::model::findings::ring_stopped(why),
                );
            }
            snap.ring = Some(stats);
        }
        snap
    }

    /// Gives the room of a snapshot let go to the next build (see `Snapshot::recycle`).
    pub(crate) fn recycle(&mut self, old: std::sync::Arc<Snapshot>) {
        Snapshot::recycle(old, &mut self.parts);
    }

    /// The next build is due as soon as anything moved, whatever the gap (a key, a drill).
    pub(crate) fn force(&mut self) {
        self.rebuild.force();
    }

    /// Whether the store calls for a build, at `interval` seconds.
    pub(crate) fn due(&self, interval: Duration) -> Due {
        self.rebuild.due(self.store.generation, interval)
    }

    /// Samples the active sessions of a snapshot just built from this store (once per
    /// `onstat -u` moment): whether it was a new moment. The second's work is then done (the
    /// snapshot before this one let go), so the heap's free pages go back to the system, at
    /// most every `memory::GIVE_BACK_EVERY`: the screen, `serve` and a live `ash` alike.
    ///
    /// A moment is sampled once every part of the call that read its `onstat -u` is in: the
    /// parts arrive one by one, and a snapshot built between them would class the sessions
    /// with no thread list of the moment (`cpu_or_wait`) and without their statements. The
    /// parts still out come with the next build; a part that never comes (an option whose
    /// answer did not parse) leaves the moment out, and the next sample stands for its
    /// seconds too.
    pub(crate) fn sample(&mut self, snap: &Snapshot) -> bool {
        if !self.calls_whole && !self.store.moment_whole() {
            return false;
        }
        if let Some((watch, tx)) = &mut self.incidents {
            for e in watch.observe(snap) {
                let _ = tx.send(e);
            }
        }
        let added = self.sample_moment(snap);
        crate::memory::give_back();
        added
    }

    fn sample_moment(&mut self, snap: &Snapshot) -> bool {
        let Some(kept) = &mut self.track else {
            return sample_into(&mut self.activity, snap);
        };
        let mut gone = false;
        let added = sample_keeping(&mut self.activity, snap, &mut |at, actives| {
            let line = kept.encoder.line(at, actives);
            match &mut kept.to {
                TrackTo::Lines(lines) => lines.push(line),
                TrackTo::Recorder(tx) => match tx.try_send(line) {
                    Ok(()) => {}
                    // A lost line: the next defines its names again.
                    Err(std::sync::mpsc::TrySendError::Full(_)) => kept.encoder.restart(),
                    Err(std::sync::mpsc::TrySendError::Disconnected(_)) => gone = true,
                },
            }
        });
        if gone {
            self.track = None; // the recording stopped
        }
        added
    }

    /// When a loop must wake for the next build (now, later, or never while nothing moves).
    pub(crate) fn wake_at(&self, interval: Duration) -> Option<Instant> {
        match self.due(interval) {
            Due::Now => Some(Instant::now()),
            Due::In(wait) => Some(Instant::now() + wait),
            Due::Nothing => None,
        }
    }

    /// Whether a build is due now; it then counts as built.
    pub(crate) fn take_due(&mut self, interval: Duration) -> bool {
        let now = self.due(interval) == Due::Now;
        if now {
            self.built();
        }
        now
    }

    /// A loop without a screen starts with nothing to build: the empty store is no snapshot
    /// (the screen builds it at once, to say it waits for data).
    pub(crate) fn nothing_built_yet(&mut self) {
        self.rebuild.built_generation = self.store.generation;
        self.rebuild.force = false;
    }

    /// What was just built is of the store as it is now.
    pub(crate) fn built(&mut self) {
        self.rebuild.built(self.store.generation);
    }
}

/// The guard of the parts (tests only): while a thread turns it on, every snapshot a watch
/// builds on that thread from the parts it kept is compared with the one built whole.
#[cfg(test)]
pub(crate) mod check {
    use crate::model::snapshot::Snapshot;
    use crate::store::Store;
    use std::cell::RefCell;

    /// What the builds compared showed.
    #[derive(Debug, Default)]
    pub(crate) struct Checked {
        pub(crate) builds: u64,
        /// The first few builds that differed: their time and both snapshots' JSON.
        pub(crate) differed: Vec<(f64, String, String)>,
        pub(crate) differences: u64,
        /// The parts' counts at the last build.
        pub(crate) parts: crate::model::parts::Counts,
    }

    thread_local! {
        static ON: RefCell<Option<Checked>> = const { RefCell::new(None) };
    }

    /// Compares the builds of this thread from now on.
    pub(crate) fn start() {
        ON.with(|c| *c.borrow_mut() = Some(Checked::default()));
    }

    /// What the builds since [`start`] showed; comparing stops.
    pub(crate) fn finish() -> Checked {
        ON.with(|c| c.borrow_mut().take()).unwrap_or_default()
    }

    pub(super) fn compare(
        store: &Store,
        snap: &Snapshot,
        parts: &crate::model::parts::Parts,
        whole: impl FnOnce(&Store) -> Snapshot,
    ) {
        ON.with(|c| {
            let mut c = c.borrow_mut();
            let Some(checked) = c.as_mut() else {
                return;
            };
            checked.builds += 1;
            checked.parts = parts.counts();
            let full = whole(store);
            if full != *snap {
                checked.differences += 1;
                if checked.differed.len() < 3 {
                    let json = |s: &Snapshot| serde_json::to_string_pretty(s).unwrap_or_default();
                    checked.differed.push((snap.at_s, json(snap), json(&full)));
                }
            }
        });
    }
}

/// Asks for the statements of the blockers and the longest waits of `snap` (their `onstat -g
/// sql`), as the screen collects them in the background, with no session drilled into, and
/// for those the snapshot knows are active besides the ones `onstat -u` shows
/// ([`crate::model::snapshot::statements_wanted`]): what a watch without a screen (`ifxtop
/// ash`, the demo's walks) collects.
pub(crate) fn ask_background(collection: &crate::collect::Collection, snap: &Snapshot) {
    let background =
        crate::model::snapshot::worth_recording(snap, &[], crate::collect::Focus::MAX_BACKGROUND);
    let _ = collection.focus.send(crate::collect::Focus {
        drilled: Vec::new(),
        background,
        statements: crate::model::snapshot::statements_wanted(snap),
    });
}

/// Adds a snapshot's active sessions to `activity`, once per `onstat -u` moment.
pub(crate) fn sample_into(activity: &mut Activity, snap: &Snapshot) -> bool {
    sample_keeping(activity, snap, &mut |_, _| {})
}

/// `sample_into`, handing a new moment's sample to `keep` too (the recording's track).
pub(crate) fn sample_keeping(
    activity: &mut Activity,
    snap: &Snapshot,
    keep: &mut dyn FnMut(f64, &[crate::model::activity::Active<'_>]),
) -> bool {
    let Some(at) = snap.moment_s else {
        return false;
    };
    let actives = snap.actives();
    let added = activity.add(at, &actives);
    if added {
        keep(at, &actives);
    }
    added
}

/// Whether a build is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Due {
    /// The data moved and the gap since the last build is over (or a build was forced).
    Now,
    /// The data moved, too soon after the last build: come back in this long.
    In(Duration),
    /// Nothing moved since the last build.
    Nothing,
}

/// When the store's data calls for a new build: the generation last built and when, and when
/// the data that arrived since settles.
///
/// Why this rule, for every front-end: a tick's sources do not answer at one instant (one
/// `onstat -i` for the grouped options, a task each for the rest, the focus sessions after a
/// build asked for them), so a build at the first arrival would join a new `onstat -u` to the
/// holders of the second before (shown as unknown) and build again and again within the second.
/// Settling from the first arrival bounds the delay (a source that hangs does not hold the
/// others up), the half-interval gap bounds the cost, and a walk through a recording that
/// applies it to the recorded times takes the samples the screen took while recording. What a
/// one-time report needs on top (every source answered, or a deadline) is that front-end's
/// condition to stop, not another rule for when to build.
#[derive(Debug, Clone)]
struct Rebuild {
    built_generation: u64,
    last_build: Option<Instant>,
    force: bool,
    /// When the data that arrived since the last build settles.
    settle: Option<Instant>,
}

impl Default for Rebuild {
    fn default() -> Self {
        Rebuild {
            built_generation: u64::MAX,
            last_build: None,
            force: true,
            settle: None,
        }
    }
}

impl Rebuild {
    fn force(&mut self) {
        self.force = true;
    }

    /// Data arrived: it settles `SETTLE` from the first arrival since the last build (later
    /// arrivals do not move it). Returns how long until then.
    fn arrived(&mut self) -> Duration {
        let now = Instant::now();
        let at = *self.settle.get_or_insert(now + SETTLE);
        at.saturating_duration_since(now)
    }

    /// The least time between two builds for data alone, half the interval (a build joins
    /// thousands of rows).
    fn min_gap(interval: Duration) -> Duration {
        crate::collect::clamp_interval(interval) / 2
    }

    /// Whether the store at `generation` calls for a build, at `interval`.
    fn due(&self, generation: u64, interval: Duration) -> Due {
        if generation == self.built_generation {
            return Due::Nothing;
        }
        if self.force {
            return Due::Now;
        }
        if let Some(at) = self.settle {
            let now = Instant::now();
            if now < at {
                return Due::In(at - now);
            }
        }
        let min_gap = Self::min_gap(interval);
        match self.last_build {
            Some(b) if b.elapsed() < min_gap => Due::In(min_gap.saturating_sub(b.elapsed())),
            _ => Due::Now,
        }
    }

    /// What was just built is of the store at `generation`.
    fn built(&mut self, generation: u64) {
        self.last_build = Some(Instant::now());
        self.force = false;
        self.built_generation = generation;
        self.settle = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first build is at once; then data alone waits out half the interval, and a forced
    /// build (a key) does not; nothing moved, nothing is due.
    #[tokio::test(start_paused = true)]
    async fn data_alone_waits_half_an_interval_and_a_key_does_not() {
        let mut r = Rebuild::default();
        assert_eq!(r.due(0, Duration::from_secs(2)), Due::Now);
        r.built(0);
        assert_eq!(r.due(0, Duration::from_secs(2)), Due::Nothing);
        assert_eq!(
            r.due(1, Duration::from_secs(2)),
            Due::In(Duration::from_secs(1))
        );
        tokio::time::advance(Duration::from_millis(400)).await;
        assert_eq!(
            r.due(1, Duration::from_secs(2)),
            Due::In(Duration::from_millis(600))
        );
        r.force();
        assert_eq!(r.due(1, Duration::from_secs(2)), Due::Now);
        r.built(1);
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(r.due(2, Duration::from_secs(2)), Due::Now);
    }

    /// A tick's call delivers its parts one by one: a snapshot built after its `onstat -u`
    /// but before its `onstat -g ath` is not sampled (it would say `cpu_or_wait` for every
    /// session with no wait flag); the one built once both are in is, with true classes.
    #[test]
    fn a_moment_is_sampled_once_its_whole_call_is_in() {
        use crate::collect::sample::{How, Update};
        use crate::model::activity::{Class, Query};
        use crate::source::Source;
        let demo = crate::demo::DemoInstance::new(1);
        // The CPU VPs saturated: more threads runnable than VPs.
        let t = Duration::from_secs(470);
        let part = |source: Source| Update {
            source,
            t,
            took: Duration::ZERO,
            result: source.parse(
                demo.respond(&source.request(), t)
                    .expect("the demo answers"),
            ),
            how: How {
                shared: 2,
                ..How::default()
            },
        };
        let mut w = Watched::new(Store::new(Default::default()), None);
        w.apply([part(Source::OnstatU)]);
        let snap = crate::model::snapshot::build(&w.store, t, None, &[]);
        assert!(!w.sample(&snap), "sampled before the call's -g ath was in");
        w.apply([part(Source::OnstatGAth)]);
        let snap = crate::model::snapshot::build(&w.store, t, None, &[]);
        assert!(w.sample(&snap));
        let report = w.activity.report(&Query::every_key(0.0, 1_000.0, 10));
        assert!(report.class_secs(Class::Cpu) > 0.0);
        assert!(report.class_secs(Class::CpuWait) > 0.0);
        assert_eq!(report.class_secs(Class::CpuOrWait), 0.0);
    }

    /// Data settles `SETTLE` from its first arrival, whatever arrives after it; before then no
    /// build is due (the screen's 1 s clock builds nothing early), a key's build is.
    #[tokio::test(start_paused = true)]
    async fn data_settles_from_its_first_arrival() {
        let i = Duration::from_secs(1);
        let mut r = Rebuild::default();
        r.built(0);
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!(r.arrived(), SETTLE);
        tokio::time::advance(Duration::from_millis(40)).await;
        // A later arrival moves nothing.
        assert_eq!(r.arrived(), Duration::from_millis(20));
        assert_eq!(r.due(2, i), Due::In(Duration::from_millis(20)));
        tokio::time::advance(Duration::from_millis(20)).await;
        assert_eq!(r.due(2, i), Due::Now);
        r.built(2);
        // The next arrival settles, then waits out the rest of half an interval.
        tokio::time::advance(Duration::from_millis(100)).await;
        r.arrived();
        assert_eq!(r.due(3, i), Due::In(SETTLE));
        tokio::time::advance(SETTLE).await;
        assert_eq!(r.due(3, i), Due::In(Duration::from_millis(500 - 100 - 60)));
        r.force();
        assert_eq!(r.due(3, i), Due::Now);
    }
}
