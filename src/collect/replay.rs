//! Replay: plays a recording as a feed of updates, the same `Update`s live collection sends,
//! with pause, step, speed and seek. A seek back starts the store over from the start of the
//! recording (parsers are fast; the accumulators need the history), so each move of the player
//! says whether the store must restart before its updates are applied.

use crate::collect::record::{Cursor, Recording};
use crate::collect::sample::{How, RawSample, Update};
use crate::error::SourceError;
use crate::source::Source;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Replay position, for the header and the timeline bar.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReplayUi {
    pub(crate) position: Duration,
    pub(crate) length: Duration,
    pub(crate) paused: bool,
    pub(crate) speed: f64,
    /// Still reading its way to `position` (a seek through a long recording), this far: the
    /// screen shows an earlier moment until it gets there.
    pub(crate) seeking: Option<f64>,
    /// Waiting threads per bucket over the whole recording (the timeline's spikes).
    pub(crate) spikes: Vec<u64>,
    pub skipped: Vec<String>,
    /// The wall-clock time the recording started at, when its header says.
    pub started: Option<time::OffsetDateTime>,
}

/// What a key asks of the player.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ReplayCommand {
    TogglePause,
    Step(i32),
    Speed(f64),
    SeekBy(f64),
    SeekTo(Duration),
    SeekPercent(f64),
}

/// The player's place in the recording, shared with what it plays: the store reads the
/// samples through it as it applies them.
type SharedCursor = Arc<Mutex<Cursor>>;

fn lock(c: &SharedCursor) -> MutexGuard<'_, Cursor> {
    c.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Whether the cursor's next sample is due by `until` (not yet applied).
fn due(rec: &Recording, c: &Cursor, until: Duration) -> bool {
    rec.time_of(c.index).is_some_and(|t| t <= until)
}

/// The time of the last sample the cursor gave (`None` before the first).
fn reached(rec: &Recording, c: &Cursor) -> Option<Duration> {
    rec.time_of(c.index.checked_sub(1)?)
}

/// What one move of the player gives the store: start over first (a seek back), then every
/// sample up to `until`, each read from the recording and parsed as the store takes it. (A seek
/// to the end of a long recording held every parsed output at once: 480 MB for 200 s of a
/// 5,000-session instance.)
#[derive(Default)]
pub struct Played {
    pub(crate) restart: bool,
    samples: Option<(Arc<Recording>, SharedCursor, Duration)>,
    /// Only the samples of these sources are parsed and given; the others are passed over
    /// unparsed (a walk that needs a few sources: `ifxtop ash`).
    only: Option<fn(Source) -> bool>,
    /// The player's memos of the last parses (as live: unchanged lines not parsed again).
    memos: Option<Arc<super::Memos>>,
}

impl std::fmt::Debug for Played {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Played")
            .field("restart", &self.restart)
            .field("until", &self.samples.as_ref().map(|(_, _, until)| until))
            .finish()
    }
}

impl Played {
    fn merge(&mut self, other: Played) {
        self.restart |= other.restart;
        if other.samples.is_some() {
            self.samples = other.samples;
            self.memos = other.memos;
        }
    }

    /// Whether there is no sample to apply.
    pub(crate) fn is_empty(&self) -> bool {
        self.samples
            .as_ref()
            .is_none_or(|(rec, cursor, until)| !due(rec, &lock(cursor), *until))
    }

    /// Nothing to do: no start over, no samples (a paused player's step).
    pub(crate) fn is_noop(&self) -> bool {
        !self.restart && self.samples.is_none()
    }

    /// Only the samples of the sources `keep` says yes to: the others are read past, never
    /// parsed.
    pub(crate) fn only(mut self, keep: fn(Source) -> bool) -> Played {
        self.only = Some(keep);
        self
    }

    /// The next update, read and parsed now.
    pub(crate) fn next_update(&mut self) -> Option<Update> {
        let (rec, cursor, until) = self.samples.as_mut()?;
        let mut c = lock(cursor);
        loop {
            if !due(rec, &c, *until) {
                return None;
            }
            let (src, raw) = c.next(rec)?;
            if self.only.is_none_or(|keep| keep(src)) {
                return Some(update_of(&src, &raw, self.memos.as_deref()));
            }
        }
    }

    /// Why the recording gave no more samples, once it stopped (it changed on disk since it
    /// was read: cut short, replaced): the store is at [`Played::reached`], not further.
    pub(crate) fn broken(&self) -> Option<String> {
        let (_, cursor, _) = self.samples.as_ref()?;
        lock(cursor).broken.clone()
    }

    /// The time of the last sample it applied (`None` before the first).
    pub(crate) fn reached(&self) -> Option<Duration> {
        let (rec, cursor, _) = self.samples.as_ref()?;
        reached(rec, &lock(cursor))
    }

    /// How far through its samples it is, 0 to 1 (1 when there are none).
    pub(crate) fn progress(&self) -> f64 {
        let Some((rec, cursor, until)) = &self.samples else {
            return 1.0;
        };
        match rec.time_of(lock(cursor).index) {
            Some(t) if t <= *until && !until.is_zero() => t.as_secs_f64() / until.as_secs_f64(),
            _ => 1.0,
        }
    }

    /// The updates, in time order, each read and parsed when it is taken.
    #[cfg(test)]
    pub(crate) fn updates(mut self) -> impl Iterator<Item = Update> {
        std::iter::from_fn(move || self.next_update())
    }
}

/// Buckets of the timeline bar.
pub(crate) const TIMELINE_BUCKETS: usize = 120;

/// Turns one recorded line back into the update live collection would have produced.
pub(crate) fn to_update(source: &Source, raw: &RawSample) -> Update {
    update_of(source, raw, None)
}

/// `to_update`, through `memos` when given.
fn update_of(source: &Source, raw: &RawSample, memos: Option<&super::Memos>) -> Update {
    let result = match raw.exit {
        // The run failed live (timeout, not found, killed): replay the failure as it was seen.
        None => Err(if raw.stderr.is_empty() {
            SourceError::Other("no output (killed or timed out)".to_string())
        } else {
            SourceError::from_recorded(&raw.stderr)
        }),
        Some(code) => match memos {
            Some(m) => m.parse_text(source, Some(code), &raw.stdout, &raw.stderr),
            None => source.parse_text(Some(code), &raw.stdout, &raw.stderr),
        },
    };
    Update {
        source: *source,
        t: raw.at(),
        took: Duration::ZERO,
        result,
        how: How {
            note: interactive_note(&raw.argv),
            // As live: the parts of one call (`onstat -i`, `onstat -u -X -k`) share its process.
            // As live: a run that failed before printing (a timeout, recorded without an
            // exit code or output) read nothing.
            bytes: (raw.exit.is_some() || !raw.stdout.is_empty())
                .then_some(raw.stdout.len() as u64),
            shared: shared_by(&raw.argv),
            ..How::default()
        },
    }
}

/// How many options one recorded call answered, as live: one process shared by them (`onstat
/// -i` lists one option a line; `onstat -u -X -k` one a flag).
fn shared_by(argv: &[String]) -> u32 {
    let n = match argv {
        [onstat, i, options @ ..] if onstat == "onstat" && i == "-i" => options.len(),
        [onstat, options @ ..] if onstat == "onstat" => {
            options.iter().filter(|o| o.starts_with('-')).count()
        }
        _ => 1,
    };
    u32::try_from(n.max(1)).unwrap_or(u32::MAX)
}

/// The note of a sample taken from one `onstat -i` (its argv lists the options), as live.
fn interactive_note(argv: &[String]) -> Option<String> {
    match argv {
        [onstat, i, options @ ..] if onstat == "onstat" && i == "-i" && options.len() > 1 => Some(
            format!("onstat -i: one process for {} options", options.len()),
        ),
        _ => None,
    }
}

/// A recording being played into a store.
pub struct Player {
    rec: Arc<Recording>,
    /// The next sample to apply, read from the recording as it is played.
    cursor: SharedCursor,
    position: Duration,
    paused: bool,
    speed: f64,
    /// The times one step moves between: the `onstat -u` samples (else every sample).
    ticks: Vec<Duration>,
    spikes: Vec<u64>,
    /// The memoised sources' last parses, handed to what it plays.
    memos: Arc<super::Memos>,
}

impl Player {
    pub(crate) fn new(rec: Arc<Recording>) -> Self {
        let ticks = ticks_of(&rec);
        let spikes = spikes(&rec, TIMELINE_BUCKETS);
        Player {
            rec,
            cursor: SharedCursor::default(),
            position: Duration::ZERO,
            paused: false,
            speed: 1.0,
            ticks,
            spikes,
            memos: Arc::default(),
        }
    }

    pub(crate) fn position(&self) -> Duration {
        self.position
    }

    /// The moment the store is at: the position, or while a seek is part way (samples up to
    /// the position not applied yet), the last sample applied; and when the recording stopped
    /// giving samples (it changed on disk), the last one it gave, however far a seek went: its
    /// data is never labelled as a later moment's.
    pub(crate) fn shown(&self) -> Duration {
        let c = lock(&self.cursor);
        if c.broken.is_some() {
            reached(&self.rec, &c)
                .unwrap_or_default()
                .min(self.position)
        } else if due(&self.rec, &c, self.position) {
            reached(&self.rec, &c).unwrap_or_default()
        } else {
            self.position
        }
    }

    pub(crate) fn length(&self) -> Duration {
        self.rec.length()
    }

    pub(crate) fn is_paused(&self) -> bool {
        self.paused
    }

    /// At the last sample's time (what `Played` gives takes the store there), or the
    /// recording ended early.
    pub(crate) fn at_end(&self) -> bool {
        self.position >= self.length() || lock(&self.cursor).broken.is_some()
    }

    pub(crate) fn ui(&self) -> ReplayUi {
        let broken = lock(&self.cursor).broken.is_some();
        ReplayUi {
            // Stopped by a recording that changed on disk: where it stopped.
            position: if broken { self.shown() } else { self.position },
            length: self.length(),
            paused: self.paused || broken,
            speed: self.speed,
            seeking: None,
            spikes: self.spikes.clone(),
            skipped: self
                .rec
                .skipped
                .iter()
                .cloned()
                .chain(lock(&self.cursor).broken.clone())
                .collect(),
            started: self.rec.started(),
        }
    }

    /// Every sample up to `self.position` not played yet.
    fn due(&self, restart: bool) -> Played {
        Played {
            restart,
            samples: Some((self.rec.clone(), self.cursor.clone(), self.position)),
            only: None,
            memos: Some(self.memos.clone()),
        }
    }

    /// Real time passed: move on by `wall * speed` unless paused.
    pub(crate) fn advance(&mut self, wall: Duration) -> Played {
        if self.paused {
            return Played::default();
        }
        self.position = (self.position + wall.mul_f64(self.speed)).min(self.length());
        if self.at_end() {
            self.paused = true;
        }
        self.due(false)
    }

    /// Moves to `target`; going back starts over from the beginning of the recording.
    pub(crate) fn seek(&mut self, target: Duration) -> Played {
        let target = target.min(self.length());
        let mut cursor = lock(&self.cursor);
        let restart = target < self.position || cursor.index == 0;
        if restart {
            // From the start of the recording again (a replay keeps no outputs in memory).
            *cursor = Cursor::default();
        }
        drop(cursor);
        self.position = target;
        self.due(restart)
    }

    pub(crate) fn command(&mut self, cmd: ReplayCommand) -> Played {
        let mut played = Played::default();
        match cmd {
            ReplayCommand::TogglePause => {
                if self.paused && self.at_end() {
                    played.merge(self.seek(Duration::ZERO));
                }
                self.paused = !self.paused;
            }
            ReplayCommand::Step(n) => {
                self.paused = true;
                if let Some(t) = step_from(&self.ticks, self.position, n) {
                    played.merge(self.seek(t));
                }
            }
            ReplayCommand::Speed(f) => self.speed = (self.speed * f).clamp(0.125, 64.0),
            ReplayCommand::SeekBy(frac) => {
                let len = self.length().as_secs_f64();
                let t = (self.position.as_secs_f64() + frac * len).clamp(0.0, len);
                played.merge(self.seek(Duration::from_secs_f64(t)));
            }
            ReplayCommand::SeekTo(t) => played.merge(self.seek(t)),
            ReplayCommand::SeekPercent(p) => {
                let t = self.length().as_secs_f64() * p.clamp(0.0, 1.0);
                played.merge(self.seek(Duration::from_secs_f64(t)));
            }
        }
        played
    }
}

/// The moments a step moves between: each `onstat -u` of `rec` (each sample's, when it has
/// none), in order.
pub(crate) fn ticks_of(rec: &Recording) -> Vec<Duration> {
    let mut ticks: Vec<Duration> = rec
        .sources()
        .zip(rec.times())
        .filter(|(s, _)| *s == Source::OnstatU)
        .map(|(_, t)| t)
        .collect();
    if ticks.is_empty() {
        ticks = rec.times().collect();
    }
    ticks.dedup();
    ticks
}

/// Where a step of `n` from `at` lands: the first tick after it (`n` ≥ 0) or the last before
/// it; `None` past either end.
pub(crate) fn step_from(ticks: &[Duration], at: Duration, n: i32) -> Option<Duration> {
    if n >= 0 {
        ticks.iter().copied().find(|t| *t > at)
    } else {
        ticks.iter().copied().rev().find(|t| *t < at)
    }
}

/// Waiting threads other than condition waits (B C G L S T X), the most of any `onstat -u`
/// sample in each bucket of the recording: where the incident spikes are.
pub(crate) fn spikes(rec: &Recording, buckets: usize) -> Vec<u64> {
    let len = rec.length().as_secs_f64();
    let mut out = vec![0u64; buckets];
    if buckets == 0 {
        return out;
    }
    for &(t, n) in &rec.waiting {
        let i = if len > 0.0 {
            ((t / len) * (buckets as f64 - 1.0)).round() as usize
        } else {
            0
        };
        let slot = &mut out[i.min(buckets - 1)];
        *slot = (*slot).max(n);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recording_cut_during_the_replay_stops_it_and_says_why() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("rec.jsonl");
        // Lines of 4 kB: the reader holds a few at a time, not the file.
        let pad = "x".repeat(4000);
        let line =
            |t: u32| format!("{{\"t\":{t},\"source\":\"onstat -k\",\"stdout\":\"{pad}\"}}\n");
        let text: String = (0..100).map(line).collect();
        std::fs::write(&path, &text).expect("write");
        let rec = crate::collect::record::read_recording(&path).expect("readable");
        let mut p = Player::new(Arc::new(rec));
        assert_eq!(p.seek(Duration::from_secs(3)).updates().count(), 4);
        assert!(!p.at_end());
        // Cut after the 60th sample while the replay is at the 4th: the rest of the 60 plays,
        // then the replay stops.
        let cut = text.lines().take(60).map(|l| l.len() + 1).sum::<usize>();
        std::fs::write(&path, &text[..cut]).expect("cut");
        let played = p.seek(Duration::from_secs(99)).updates().count();
        assert!((56..60).contains(&played), "{played}");
        assert!(p.at_end());
        let ui = p.ui();
        assert!(
            ui.skipped.iter().any(|s| s.contains("changed on disk")),
            "{:?}",
            ui.skipped
        );
    }

    /// Played through the player's memos, forward, back to the start and forward again, each
    /// sample reads as it does parsed alone.
    #[test]
    fn a_sample_played_through_the_memos_is_the_sample_parsed_alone() {
        let demo = crate::demo::DemoInstance::new(2).with_sessions(300);
        let sources = [
            Source::OnstatU,
            Source::OnstatK,
            Source::OnstatXTxn,
            Source::ProcNetTcp,
        ];
        let answer = |src: Source, t: u64| {
            demo.respond(&src.request(), Duration::from_secs(300 + t))
                .expect("an answer")
        };
        let mut text = String::new();
        for t in 0..30 {
            for src in sources {
                let out = answer(src, t);
                let line = serde_json::json!({
                    "t": t, "source": src.label(), "exit": out.exit, "stdout": out.stdout,
                });
                text.push_str(&format!("{line}\n"));
            }
        }
        let rec = Arc::new(crate::collect::record::parse_recording(text.as_bytes()));
        let mut p = Player::new(rec);
        let mut played = 0;
        for target in [20, 5, 29] {
            for u in p.seek(Duration::from_secs(target)).updates() {
                let out = answer(u.source, u.t.as_secs());
                let alone = u.source.parse_text(out.exit, &out.stdout, &out.stderr);
                let json = |r: &Result<crate::parsers::Parsed, _>| {
                    r.as_ref().map(|p| p.to_json()).map_err(ToString::to_string)
                };
                assert_eq!(
                    json(&u.result),
                    json(&alone),
                    "{} at {:?}",
                    u.source.label(),
                    u.t
                );
                played += 1;
            }
        }
        // To 20, from the start to 5, then on from 6 to 29.
        assert_eq!(played, (21 + 6 + 24) * sources.len());
    }

    #[test]
    fn a_seek_reads_and_parses_each_sample_only_when_the_store_takes_it() {
        let text: String = (0..50)
            .map(|t| format!("{{\"t\":{t},\"source\":\"onstat -k\",\"stdout\":\"\"}}\n"))
            .collect();
        let rec = Arc::new(crate::collect::record::parse_recording(text.as_bytes()));
        let mut p = Player::new(rec);
        let played = p.seek(Duration::from_secs(49));
        assert!(!played.is_empty());
        // Nothing read yet: the seek holds no outputs, parsed or not.
        assert_eq!(lock(&p.cursor).index, 0);
        assert_eq!(p.shown(), Duration::ZERO);
        let mut updates = played.updates();
        assert!(updates.next().is_some());
        assert!(updates.next().is_some());
        assert_eq!(lock(&p.cursor).index, 2);
        // Part way, the screen's moment is the last sample applied, not the target.
        assert_eq!(p.shown(), Duration::from_secs(1));
        assert_eq!(updates.count(), 48);
        assert_eq!(lock(&p.cursor).index, 50);
        assert_eq!(p.shown(), Duration::from_secs(49));
        // At the end: nothing more to play.
        assert!(p.at_end());
        assert!(p.seek(Duration::from_secs(49)).is_empty());
    }
}
