//! The live screen's state (app and store) and its one `update`: every message — keys, data,
//! ticks, resizes, signals, what the loop did — goes through `Session::update`, which changes
//! the state and returns what the loop must do. Nothing else changes the app or the store.

use crate::collect::extents::ExtentStatus;
use crate::collect::log::DebugLog;
use crate::collect::replay::{Played, ReplayUi};
use crate::collect::sample::Update;
use crate::ids::Sid;
use crate::instance::watch::{Due, Watched};
use crate::model::snapshot;
use crate::store::Store;
use crate::tui::app::{App, Effect};
use crate::tui::views;
use crossterm::event::KeyEvent;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// Rebuilding the extent map on its own because pages stop resolving: at most this often.
const AUTO_REBUILD_EVERY: Duration = Duration::from_secs(1800);

/// A signal the loop was sent.
pub use crate::instance::signals::Signal;

/// What a side effect the loop carried out came to, for the status line.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Copied {
        bytes: usize,
        tmux: bool,
    },
    Exported {
        files: Vec<String>,
        dir: String,
    },
    /// A bookmark made at `at` (session time), and where it went.
    Marked {
        at: Duration,
        note: String,
        to: String,
    },
    Failed(String),
}

/// Everything that can happen to the live screen.
#[derive(Debug)]
pub enum Msg {
    Key(KeyEvent),
    Resize(u16, u16),
    /// Samples from the collectors, applied together.
    Data(Vec<Update>),
    /// What a replay step played, and where the player is now.
    Played(Played, ReplayUi),
    /// Go on with a replay seek that is part way.
    SeekMore,
    /// A viewer's seek over what it received (`None`: nothing received yet).
    Past(
        crate::collect::replay::ReplayCommand,
        Option<Arc<crate::collect::record::Recording>>,
    ),
    Extents(ExtentStatus),
    /// The data settled (or the rate limit passed): the snapshot may be rebuilt.
    Settled,
    /// The 1 s age clock.
    Tick,
    Signal(Signal),
    /// A side effect was carried out.
    Done(Outcome),
    /// How the recording goes: bytes written, and why it stopped if it did.
    Recording {
        bytes: u64,
        stopped: Option<String>,
    },
    /// Watching together: whom this screen follows or where it shares, and who watches.
    Watching(Box<crate::instance::share::Watching>),
}

/// The live screen's state.
pub struct Session {
    pub(crate) app: App,
    /// The store, the diary, and when the data calls for the snapshot to be built again (the
    /// one policy `serve` follows too): what the user does at once, data alone at most every
    /// half interval.
    pub(crate) watched: Watched,
    server: Option<String>,
    /// The focus the shown snapshot was built from.
    built_focus: (Vec<Sid>, Option<String>),
    /// The Activity pane's window and grouping its report was built for (`None`: not shown).
    built_activity: Option<crate::tui::app::ActivityUi>,
    /// The Activity pane's last table: rebuilt when the window or grouping moves, else at most
    /// every `window / 60` seconds.
    activity_cache: Option<ActivityCache>,
    /// The sessions whose SQL the collectors were last asked for.
    sent_focus: crate::collect::Focus,
    last_auto_rebuild: Option<Instant>,
    /// The last snapshot found the server off-line.
    was_offline: bool,
    /// The data of the frozen moment (space): a session drilled into while frozen is shown as
    /// it was then, not as it is now.
    frozen_store: Option<Store>,
    /// The findings' starts as they were at the frozen moment.
    frozen_findings: Option<crate::model::findings::FindingsHistory>,
    /// When the session started, on the loop's clock: what status messages expire by.
    started: Instant,
    /// What is left of a replay seek through a long recording: applied a slice at a time, so
    /// keys (another seek, `q`) are seen in between.
    seeking: Option<Played>,
    /// A viewer back in what it received: a replay of it in a store of its own, shown as a
    /// frozen moment while the live data goes on into the live store.
    past: Option<Past>,
    /// Following another's view: this screen's own, to come back to.
    own: Option<Own>,
    /// The moment of the view followed last sought.
    follow_sought: Option<f64>,
    /// Something changed since the last draw.
    pub dirty: bool,
    /// What moved with time alone on the screen when it was last drawn: the 1 s clock draws
    /// again only when it moved on (`views::time_face`).
    pub drawn: Option<views::TimeFace>,
}

/// How long one slice of a replay seek reads and parses before keys are looked at again.
pub(crate) const SEEK_SLICE: Duration = Duration::from_millis(50);

/// Following another's view (`@`): this screen's own, to come back to.
struct Own {
    pane: crate::tui::panes::Pane,
    drill: Vec<crate::tui::app::DrillUi>,
    /// Its moment when not the live end.
    at: Option<Duration>,
}

/// A viewer's moment in what it received, replayed (see [`crate::collect::received`]).
struct Past {
    player: crate::collect::replay::Player,
    /// What the player plays: kept while the moments sought are within it.
    rec: Arc<crate::collect::record::Recording>,
    store: Store,
    findings: crate::model::findings::FindingsHistory,
    /// What is left of the seek (a slice at a time).
    played: Option<Played>,
}

impl Session {
    /// A replay seek is part way: the loop sends `Msg::SeekMore` once no key is waiting.
    pub(crate) fn is_seeking(&self) -> bool {
        self.seeking.is_some() || self.past.as_ref().is_some_and(|p| p.played.is_some())
    }

    /// A viewer's seek: where `cmd` leads from the moment on screen, within what was received
    /// (`rec`); past its end, back to the live end.
    fn past_command(
        &mut self,
        cmd: crate::collect::replay::ReplayCommand,
        rec: Option<Arc<crate::collect::record::Recording>>,
        now: Duration,
    ) {
        use crate::collect::replay::ReplayCommand;
        let Some(rec) = rec.filter(|r| !r.is_empty()) else {
            self.app.say("nothing received yet to go back over", now);
            return;
        };
        let from = rec.time_of(0).unwrap_or_default().as_secs_f64();
        let to = rec.length().as_secs_f64();
        let here = match &self.past {
            Some(p) => p.player.position(),
            None => self.app.frozen.as_ref().map_or(now, |(_, at)| *at),
        }
        .as_secs_f64();
        let span = (to - from).max(0.0);
        let target = match cmd {
            ReplayCommand::SeekBy(f) => {
                let by = f * span;
                here + if by.abs() < 1.0 { f.signum() } else { by }
            }
            // Past the last tick is the live end; before the first, the first moment.
            ReplayCommand::Step(n) => {
                let ticks = crate::collect::replay::ticks_of(&rec);
                match crate::collect::replay::step_from(&ticks, Duration::from_secs_f64(here), n) {
                    Some(t) => t.as_secs_f64(),
                    None if n >= 0 => f64::INFINITY,
                    None => from,
                }
            }
            ReplayCommand::SeekTo(t) => t.as_secs_f64(),
            ReplayCommand::SeekPercent(p) => from + p.clamp(0.0, 1.0) * span,
            ReplayCommand::TogglePause | ReplayCommand::Speed(_) => return,
        };
        if target >= to {
            if self.past.is_some() || self.app.frozen.is_some() {
                self.leave_past(now);
            } else {
                self.app.say("at the live end", now);
            }
            return;
        }
        if target < from {
            let when = self.moment_text(Duration::from_secs_f64(from));
            self.app
                .say(format!("the first moment received here is {when}"), now);
        }
        let target = Duration::from_secs_f64(target.max(from));
        let mut past = match self.past.take() {
            // Within what the player has: on from where it is (back: from its start).
            Some(p) if target <= p.rec.length() => p,
            _ => Past {
                player: crate::collect::replay::Player::new(rec.clone()),
                rec: rec.clone(),
                store: Store::new(self.watched.store.settings.clone()),
                findings: Default::default(),
                played: None,
            },
        };
        let played = past.player.seek(target);
        if played.restart {
            // The store starts over: the findings' starts with it (lower bounds again).
            past.findings = Default::default();
        }
        past.played = Some(played);
        self.past = Some(past);
        self.app.past = Some(crate::tui::app::PastUi {
            at: target,
            from: Duration::from_secs_f64(from),
            to: rec.length(),
            seeking: Some(0.0),
        });
        // Frozen on screen from now on (the live snapshots kept aside as they come): until the
        // seek gets there, the moment it leaves, labelled as that moment.
        if self.app.frozen.is_none() {
            let at = Duration::try_from_secs_f64(self.app.live.at_s).unwrap_or(now);
            self.app.frozen = Some((self.app.live.clone(), at));
        }
        self.frozen_store = None;
        self.frozen_findings = None;
        self.past_slice(now);
    }

    /// Applies the next slice of a viewer's seek; once there, shows that moment.
    fn past_slice(&mut self, now: Duration) {
        let Some(past) = self.past.as_mut() else {
            return;
        };
        let Some(mut played) = past.played.take() else {
            return;
        };
        let done = past.store.play_for(&mut played, SEEK_SLICE);
        self.dirty = true;
        if !done && played.broken().is_none() {
            if let Some(ui) = self.app.past.as_mut() {
                ui.seeking = Some(played.progress());
            }
            past.played = Some(played);
            return;
        }
        let at = match played.broken() {
            // The history's file could not be read back: the moment it reached, said.
            Some(why) => {
                self.app.say(why, now);
                played.reached().unwrap_or_default()
            }
            None => past.player.shown(),
        };
        if let Some(ui) = self.app.past.as_mut() {
            ui.seeking = None;
            ui.at = at;
        }
        self.show_past(at);
        let behind = human(now.saturating_sub(at));
        let when = self.moment_text(at);
        let keys = self.app.key_phrases(
            &[
                (
                    &[
                        crate::tui::keymap::Action::ReplaySeekBack,
                        crate::tui::keymap::Action::ReplaySeekForward,
                    ],
                    "move",
                ),
                (&[crate::tui::keymap::Action::ToggleFreeze], "live"),
            ],
            ", ",
        );
        self.app
            .say(format!("{when}, {behind} behind the live end: {keys}"), now);
    }

    /// Builds the moment `at` of the viewer's past store and shows it frozen.
    fn show_past(&mut self, at: Duration) {
        let Some(past) = self.past.as_mut() else {
            return;
        };
        let focus: Vec<Sid> = self.app.drill.iter().map(|d| d.sid).collect();
        let hot = self.app.hotspot.as_ref().map(|h| h.object.clone());
        let mut snap = snapshot::build_with(
            &past.store,
            at,
            self.server.as_deref(),
            &focus,
            hot.as_deref(),
        );
        snap.track_findings(&mut past.findings, past.store.settings.wall_start);
        self.app.frozen = Some((Arc::new(snap), at));
        self.app.refresh_orders();
        self.built_focus = (focus, hot);
        self.dirty = true;
    }

    /// Back to the live end: the past's store let go.
    fn leave_past(&mut self, now: Duration) {
        self.past = None;
        self.app.past = None;
        self.app.frozen = None;
        self.frozen_store = None;
        self.frozen_findings = None;
        self.app.refresh_orders();
        self.app.say("back to the live end", now);
        self.dirty = true;
    }

    /// What this screen shows, for others to follow.
    pub(crate) fn view(&self) -> crate::collect::wire::View {
        let open = self.app.drill.last().map(|d| d.sid);
        crate::collect::wire::View {
            pane: u8::try_from(self.app.pane.index() + 1).unwrap_or(1),
            sid: open.or_else(|| self.app.selected_sid()).map(|s| s.0),
            open: open.is_some(),
            at: self.app.frozen.as_ref().map(|(_, at)| at.as_secs_f64()),
            follows: self.app.following.as_ref().map(|f| f.0),
        }
    }

    /// Starts following `id`'s view (0: the collector's screen), keeping this one's own.
    fn start_following(&mut self, id: u64, now: Duration) -> Vec<Effect> {
        let name = crate::tui::views::help::followable(&self.app)
            .into_iter()
            .find(|f| f.1 == id)
            .map_or_else(|| format!("viewer {id}"), |f| f.2);
        self.own = Some(Own {
            pane: self.app.pane,
            drill: self.app.drill.clone(),
            at: self.app.frozen.as_ref().map(|(_, at)| *at),
        });
        self.app.following = Some((id, name.clone()));
        self.follow_sought = None;
        self.app.say(
            format!("following {name}: any key comes back to your view"),
            now,
        );
        self.follow_step(now)
    }

    /// Back to this screen's own view (its pane, sessions open and moment), saying `why`.
    fn stop_following(&mut self, now: Duration, why: String) -> Vec<Effect> {
        self.app.following = None;
        let mut effects = Vec::new();
        if let Some(own) = self.own.take() {
            if self.app.pane != own.pane {
                self.app.pane = own.pane;
            }
            self.app.drill = own.drill;
            match own.at {
                Some(at) => effects.push(Effect::Replay(
                    crate::collect::replay::ReplayCommand::SeekTo(at),
                )),
                None if self.past.is_some() => self.leave_past(now),
                None => self.app.frozen = None,
            }
            self.app.refresh_orders();
        }
        self.app.say(why, now);
        self.dirty = true;
        effects
    }

    /// Moves this screen to the view it follows, as last said; the one followed gone (or the
    /// feed ended), back to its own.
    fn follow_step(&mut self, now: Duration) -> Vec<Effect> {
        let Some((id, name)) = self.app.following.clone() else {
            return Vec::new();
        };
        let Some(w) = self.app.watching.as_deref() else {
            return Vec::new();
        };
        if w.ended.is_some() {
            return self.stop_following(now, "the feed ended: no longer following".into());
        }
        let view = if id == 0 {
            Some(w.screen.clone())
        } else {
            w.viewers
                .iter()
                .find(|v| v.id == id)
                .map(|v| v.view.clone())
        };
        let view = match view {
            None => return self.stop_following(now, format!("{name} left: back to your own view")),
            // Nothing said yet: as it is.
            Some(None) => return Vec::new(),
            Some(Some(v)) => v,
        };
        if let Some(p) = crate::tui::panes::Pane::ALL.get(usize::from(view.pane).saturating_sub(1))
        {
            if self.app.pane != *p {
                self.app.pane = *p;
                self.app.refresh_orders();
                self.dirty = true;
            }
        }
        match (view.sid, view.open) {
            (Some(sid), true) => {
                if self.app.drill.last().map(|d| d.sid) != Some(Sid(sid)) {
                    self.app.drill = vec![crate::tui::app::DrillUi::new(Sid(sid))];
                    self.dirty = true;
                }
            }
            (sid, _) => {
                if !self.app.drill.is_empty() {
                    self.app.drill.clear();
                    self.dirty = true;
                }
                if let Some(sid) = sid {
                    self.app.select_sid(Sid(sid));
                    self.dirty = true;
                }
            }
        }
        let mine = self.app.frozen.as_ref().map(|(_, at)| at.as_secs_f64());
        if view.at.is_none() {
            self.follow_sought = None;
        }
        match (view.at, mine) {
            (None, Some(_)) => {
                if self.past.is_some() {
                    self.leave_past(now);
                } else {
                    self.app.frozen = None;
                    self.app.refresh_orders();
                }
                Vec::new()
            }
            // Sought once per moment it shows (one before what was received here stays where
            // the seek got: the start).
            (Some(at), mine)
                if mine.is_none_or(|m| (m - at).abs() >= 0.5) && self.follow_sought != Some(at) =>
            {
                self.follow_sought = Some(at);
                let at = Duration::try_from_secs_f64(at).unwrap_or_default();
                vec![Effect::Replay(
                    crate::collect::replay::ReplayCommand::SeekTo(at),
                )]
            }
            _ => Vec::new(),
        }
    }

    /// A moment as the header's clock says it (else as session time).
    fn moment_text(&self, at: Duration) -> String {
        self.app
            .wall_clock(at)
            .map(crate::format::local_time)
            .unwrap_or_else(|| crate::format::clock(at))
    }

    /// Applies the next slice of what the replay played (what is left waits for
    /// `Msg::SeekMore`). Returns the moment the store is at: the player's position, or while a
    /// seek is part way the last sample applied (the screen shows that moment until the seek
    /// gets there).
    fn play_slice(&mut self) -> Option<Duration> {
        let mut played = self.seeking.take()?;
        let done = self.watched.store.play_for(&mut played, SEEK_SLICE);
        if let Some(ui) = self.app.replay.as_mut() {
            ui.seeking = (!done).then(|| played.progress());
        }
        self.app.extents = replay_extent_status(&self.watched.store);
        self.dirty = true;
        if let Some(why) = played.broken() {
            // The recording changed on disk (cut short while replayed): the screen stays at
            // the last moment read, labelled as that moment, and says why.
            let reached = played.reached().unwrap_or_default();
            if let Some(ui) = self.app.replay.as_mut() {
                ui.position = ui.position.min(reached);
                ui.paused = true;
                ui.seeking = None;
                if !ui.skipped.contains(&why) {
                    ui.skipped.push(why.clone());
                }
            }
            self.app.say(why, reached);
            return Some(reached);
        }
        if done {
            return self.app.replay.as_ref().map(|ui| ui.position);
        }
        let reached = played.reached().unwrap_or_default();
        self.seeking = Some(played);
        Some(reached)
    }

    pub(crate) fn new(
        app: App,
        store: Store,
        server: Option<String>,
        log: Option<DebugLog>,
    ) -> Self {
        Session {
            app,
            watched: Watched::new(store, log),
            server,
            built_focus: (Vec::new(), None),
            built_activity: None,
            activity_cache: None,
            sent_focus: crate::collect::Focus::default(),
            last_auto_rebuild: None,
            was_offline: false,
            frozen_store: None,
            frozen_findings: None,
            started: Instant::now(),
            seeking: None,
            past: None,
            own: None,
            follow_sought: None,
            dirty: true,
            drawn: None,
        }
    }

    /// The diary of `--log`, if any.
    pub(crate) fn log(&mut self, now: Duration, line: &str) {
        self.watched.log(now, line);
    }

    /// Takes one message at session time `now`; returns what the loop must do.
    pub fn update(&mut self, msg: Msg, mut now: Duration) -> Vec<Effect> {
        self.app.clock = self.started.elapsed();
        let mut effects = Vec::new();
        match msg {
            Msg::Key(_) if self.app.following.is_some() => {
                // Any key: back to this screen's own view.
                self.watched.force();
                effects = self.stop_following(now, "back to your own view".into());
                self.dirty = true;
            }
            Msg::Key(k) => {
                // What a key changes (a replay seek, a drill) shows at once.
                self.watched.force();
                effects = self.app.on_key(k, now);
                if let Some(id) = self.app.follow_asked.take() {
                    effects.extend(self.start_following(id, now));
                }
                if self.app.quit {
                    effects.push(Effect::Quit(0));
                }
                if std::mem::take(&mut self.app.leave) {
                    effects.push(Effect::Leave);
                }
                self.dirty = true;
            }
            Msg::Resize(w, h) => {
                self.app.size = (w, h);
                self.app.refresh_orders();
                self.dirty = true;
            }
            Msg::Data(updates) => {
                let settle = self.watched.apply(updates);
                effects.push(Effect::SettleIn(settle));
            }
            Msg::Played(played, ui) => {
                self.app.replay = Some(ui);
                // A newer move of the player takes over from a seek part way: it reads on from
                // the same place (or starts over itself).
                if !played.is_noop() || self.seeking.is_none() {
                    self.seeking = Some(played);
                }
                now = self.play_slice().unwrap_or(now);
            }
            Msg::SeekMore if self.past.as_ref().is_some_and(|p| p.played.is_some()) => {
                self.past_slice(now)
            }
            Msg::SeekMore => now = self.play_slice().unwrap_or(now),
            Msg::Past(cmd, rec) => {
                self.watched.force();
                self.past_command(cmd, rec, now);
                self.dirty = true;
            }
            Msg::Extents(mut st) => {
                self.log(now, &format!("extent map: {st:?}"));
                // A failed rebuild leaves the older map in the store: say it is still used.
                if let ExtentStatus::Failed { in_use, .. } = &mut st {
                    *in_use = self.watched.store.extents().map(|m| m.extent_count());
                }
                self.app.extents = st;
                self.dirty = true;
            }
            Msg::Settled => self.dirty = true,
            // The clock draws the screen again when what moves with time alone moved on (the
            // data drawn since may have drawn it already).
            Msg::Tick => {
                if self.drawn.as_ref() != Some(&views::time_face(&self.app, now)) {
                    self.dirty = true;
                }
            }
            Msg::Signal(s) => {
                self.log(now, &format!("signal {s:?}"));
                effects.push(match (s, s.exit_code()) {
                    (_, Some(code)) => Effect::Quit(code),
                    (Signal::Stop, None) => Effect::Suspend,
                    _ => Effect::Resume,
                });
            }
            Msg::Done(outcome) => {
                let text = match outcome {
                    Outcome::Copied { bytes, tmux } => crate::tui::share::copy_note(bytes, tmux),
                    // The names first, then the directory shortened from the left: its end says
                    // where, on an 80-column status line too.
                    Outcome::Exported { files, dir } => {
                        crate::tui::share::export_note(&files, &dir, usize::from(self.app.size.0))
                    }
                    Outcome::Marked { at, note, to } => {
                        let when = self
                            .app
                            .wall_clock(at)
                            .map(crate::format::local_time)
                            .unwrap_or_else(|| crate::format::clock(at));
                        self.app.add_mark(at, note.clone());
                        crate::format::printable(&format!("marked {when} {note}: {to}"))
                    }
                    Outcome::Failed(e) => e,
                };
                self.app.say(text, now);
                self.dirty = true;
            }
            Msg::Recording { bytes, stopped } => {
                let newly_stopped = stopped.is_some()
                    && self
                        .app
                        .recording
                        .as_ref()
                        .is_none_or(|r| r.stopped.is_none());
                if let (true, Some(why)) = (newly_stopped, &stopped) {
                    self.app.say(why.clone(), now);
                }
                self.app.recording = Some(crate::tui::app::RecordingUi { bytes, stopped });
                self.dirty = true;
            }
            Msg::Watching(w) => {
                // A mark from another viewer, or the feed's end, is said once.
                let seen = self.app.watching.as_ref().map_or(0, |o| o.marks.len());
                if let Some(m) = w.marks.last().filter(|_| w.marks.len() > seen) {
                    let at = self
                        .app
                        .wall_clock(
                            std::time::Duration::try_from_secs_f64(m.at).unwrap_or_default(),
                        )
                        .map(crate::format::local_time)
                        .unwrap_or_else(|| format!("{:.0}s", m.at));
                    self.app.say(
                        crate::format::printable(&format!("mark by {}: {at} {}", m.by, m.text)),
                        now,
                    );
                }
                // The history stopped being kept (a full disk): said once.
                let stopped = |w: &crate::instance::share::Watching| {
                    w.kept.as_ref().and_then(|k| k.stopped.clone())
                };
                if let Some(why) =
                    stopped(&w).filter(|_| self.app.watching.as_deref().and_then(stopped).is_none())
                {
                    self.app.say(why, now);
                }
                if w.ended.is_some() && self.app.watching.as_ref().is_none_or(|o| o.ended.is_none())
                {
                    self.app.say(w.ended.clone().unwrap_or_default(), now);
                }
                if self.app.watching.as_deref() != Some(&*w) {
                    self.app.watching = Some(w);
                    self.dirty = true;
                }
                effects.extend(self.follow_step(now));
            }
        }
        // `--log` stopped writing (a full disk): said once, on the status line.
        if let Some(why) = self.watched.log_failure() {
            self.app.say(why, now);
            self.dirty = true;
        }
        // Space in the past: back to the live end.
        if self.past.is_some() && self.app.frozen.is_none() {
            self.leave_past(now);
        }
        // Freezing keeps the moment's data too; resuming lets it go (a viewer's past has a
        // store of its own).
        match (&self.app.frozen, &self.frozen_store) {
            _ if self.past.is_some() => {}
            (Some(_), None) => {
                self.frozen_store = Some(self.watched.store.clone());
                self.frozen_findings = Some(self.watched.findings.clone());
            }
            (None, Some(_)) => {
                self.frozen_store = None;
                self.frozen_findings = None;
            }
            _ => {}
        }
        if self.dirty {
            effects.extend(self.refresh(now));
        }
        effects
    }

    /// Rebuilds the snapshot when the data or the drill stack moved and the rate limit allows;
    /// otherwise asks to be called back when it does.
    fn refresh(&mut self, now: Duration) -> Vec<Effect> {
        let mut effects = Vec::new();
        let focus: Vec<Sid> = self.app.drill.iter().map(|d| d.sid).collect();
        let hot = self.app.hotspot.as_ref().map(|h| h.object.clone());
        let focus_moved = (&focus, &hot) != (&self.built_focus.0, &self.built_focus.1);
        if focus_moved && self.past.as_ref().is_some_and(|p| p.played.is_none()) {
            // The viewer's past moment, with the sessions drilled into now.
            if let Some(at) = self.app.past.map(|p| p.at) {
                self.show_past(at);
            }
        } else if focus_moved {
            if let (Some(frozen), Some((snap, _))) = (&self.frozen_store, &self.app.frozen) {
                // The frozen moment, with the sessions drilled into now.
                let at = Duration::from_secs_f64(snap.at_s);
                let mut rebuilt = snapshot::build_with(
                    frozen,
                    at,
                    self.server.as_deref(),
                    &focus,
                    hot.as_deref(),
                );
                if let Some(h) = &mut self.frozen_findings {
                    rebuilt.track_findings(h, frozen.settings.wall_start);
                }
                self.app.set_frozen_snapshot(Arc::new(rebuilt));
            }
        }
        // The Activity pane's report is built only while the pane is on screen.
        let activity = self.app.activity_shown().then(|| self.app.activity.clone());
        let due = self.watched.due(self.app.interval);
        if let Due::In(wait) = due {
            // Too soon after the last build: come back when the gap is over.
            effects.push(Effect::SettleIn(wait));
        }
        if due == Due::Now || focus_moved {
            self.watched.built();
            if let Some(old) = self.app.release_live() {
                self.watched.recycle(old);
            }
            let mut snap = self
                .watched
                .build(now, self.server.as_deref(), &focus, hot.as_deref());
            snap.track_findings(
                &mut self.watched.findings,
                self.watched.store.settings.wall_start,
            );
            self.watched.sample(&snap);
            if let Some(ui) = &activity {
                attach_activity(
                    &self.watched.activity,
                    ui,
                    &mut snap,
                    &mut self.activity_cache,
                );
            }
            if self.auto_rebuild_due(&snap) || self.back_online(&snap) {
                effects.push(Effect::RebuildExtents);
            }
            // While recording, the blockers and long waiters have their SQL collected too, so
            // a replay can show it for sessions nobody drilled into.
            let recording = self
                .app
                .recording
                .as_ref()
                .is_some_and(|r| r.stopped.is_none());
            // The Activity pane groups by statement: while it is open, likewise.
            let background = if (recording || activity.is_some()) && self.app.replay.is_none() {
                snapshot::worth_recording(&snap, &focus, crate::collect::Focus::MAX_BACKGROUND)
            } else {
                Vec::new()
            };
            let statements = if self.app.replay.is_none() {
                snapshot::statements_wanted(&snap)
            } else {
                Vec::new()
            };
            self.app.set_snapshot(Arc::new(snap));
            self.built_focus = (focus.clone(), hot);
            self.built_activity = activity;
            self.send_focus(focus, background, statements, &mut effects);
        } else if !same_tables(activity.as_ref(), self.built_activity.as_ref()) {
            // A key moved the window, the grouping or the span: the same snapshots, their
            // report again (the pick cursor alone draws over the same report).
            if let Some(ui) = &activity {
                let mut snap = (*self.app.live).clone();
                attach_activity(
                    &self.watched.activity,
                    ui,
                    &mut snap,
                    &mut self.activity_cache,
                );
                self.app.set_snapshot(Arc::new(snap));
                if let Some((frozen, _)) = &self.app.frozen {
                    let mut snap = (**frozen).clone();
                    attach_activity(
                        &self.watched.activity,
                        ui,
                        &mut snap,
                        &mut self.activity_cache,
                    );
                    self.app.set_frozen_snapshot(Arc::new(snap));
                }
            }
            self.built_activity = activity;
        }
        effects
    }

    /// Asks for `onstat -g ses/sql` of these sessions when the set changed.
    fn send_focus(
        &mut self,
        drilled: Vec<Sid>,
        background: Vec<Sid>,
        statements: Vec<Sid>,
        effects: &mut Vec<Effect>,
    ) {
        let mut drilled = drilled;
        drilled.sort_unstable();
        drilled.dedup();
        let focus = crate::collect::Focus {
            drilled,
            background,
            statements,
        };
        if focus != self.sent_focus {
            self.sent_focus = focus.clone();
            effects.push(Effect::Focus(focus));
        }
    }

    /// The server came back on-line while the extent map had failed (oncheck -pe fails on an
    /// off-line server): try again at once, without waiting for R.
    fn back_online(&mut self, snap: &snapshot::Snapshot) -> bool {
        let offline = snap.server.offline.is_some();
        let was_offline = std::mem::replace(&mut self.was_offline, offline);
        was_offline
            && !offline
            && self.app.replay.is_none()
            && matches!(self.app.extents, ExtentStatus::Failed { .. })
    }

    /// Pages stop resolving (new extents since the map was built): rebuild, rate-limited.
    fn auto_rebuild_due(&mut self, snap: &snapshot::Snapshot) -> bool {
        if !matches!(self.app.extents, ExtentStatus::Ready { .. }) || self.app.replay.is_some() {
            return false;
        }
        let unresolved = snap.unresolved_share.unwrap_or(0.0);
        let enough = snap.hotspots.iter().filter(|h| !h.resolved).count() >= 3;
        if unresolved > 0.2
            && enough
            && self
                .last_auto_rebuild
                .is_none_or(|l| l.elapsed() > AUTO_REBUILD_EVERY)
        {
            self.last_auto_rebuild = Some(Instant::now());
            return true;
        }
        false
    }
}

/// A time span as the header says it (`1m12s`).
fn human(d: Duration) -> String {
    crate::format::human_duration(d.as_secs_f64())
}

/// In a replay the map comes from the recording's `oncheck -pe` sample, if it has one.
fn replay_extent_status(store: &Store) -> ExtentStatus {
    match store.extents() {
        Some(m) => ExtentStatus::Ready {
            what: "the recording".into(),
            extents: m.extent_count(),
            built_at: store.extents_loaded_at().unwrap_or_default(),
            age_at_load: Duration::ZERO,
        },
        None => ExtentStatus::None,
    }
}

/// Whether two states of the Activity pane (`None`: not shown) show the same table.
fn same_tables(
    a: Option<&crate::tui::app::ActivityUi>,
    b: Option<&crate::tui::app::ActivityUi>,
) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.same_table(b),
        (a, b) => a.is_none() && b.is_none(),
    }
}

/// The Activity pane's last table, of which window and grouping, ending when.
pub(crate) struct ActivityCache {
    ui: crate::tui::app::ActivityUi,
    to: f64,
    report: crate::model::activity::Report,
}

/// How often the Activity pane's table is built again, for a window of `window_s` seconds: a
/// table of the last hour does not move in a second, and an hour of 5,000 sessions is
/// hundreds of thousands of rows to add up.
fn table_every(window_s: u32) -> f64 {
    (f64::from(window_s) / 60.0).max(1.0)
}

/// The Activity pane's report and chart over its window, ending at the snapshot's moment (the
/// table from `cache` while it is recent enough; the chart every time).
fn attach_activity(
    activity: &crate::model::activity::Activity,
    ui: &crate::tui::app::ActivityUi,
    snap: &mut snapshot::Snapshot,
    cache: &mut Option<ActivityCache>,
) {
    let Some(to) = snap.moment_s.or(activity.last()) else {
        return;
    };
    // A span's table covers moments gone by: it holds until the span, grouping or filter
    // changes.
    let fresh = cache.as_ref().filter(|c| {
        c.ui.same_table(ui)
            && (ui.span.is_some() || (to >= c.to && to - c.to < table_every(ui.window_s)))
    });
    let report = match fresh {
        Some(c) => c.report.clone(),
        None => {
            let r = activity.report(&ui.query(to));
            *cache = Some(ActivityCache {
                ui: ui.clone(),
                to,
                report: r.clone(),
            });
            r
        }
    };
    snap.activity = Some(report);
    snap.activity_chart = activity
        .chart(to - f64::from(ui.window_s), to)
        .copied()
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::sample::Update;
    use crate::source::Source;

    /// The demo's sources answered at `t`, as the collectors deliver them.
    fn second(demo: &crate::demo::DemoInstance, t: Duration) -> Vec<Update> {
        [
            Source::OnstatU,
            Source::OnstatGAth,
            Source::OnstatGNtt,
            Source::ProcNetTcp,
        ]
        .into_iter()
        .map(|source| Update::from_demo(demo, source, t).expect("answers"))
        .collect()
    }

    fn key(c: char) -> Msg {
        Msg::Key(KeyEvent::new(
            crossterm::event::KeyCode::Char(c),
            crossterm::event::KeyModifiers::NONE,
        ))
    }

    fn enter() -> Msg {
        Msg::Key(KeyEvent::new(
            crossterm::event::KeyCode::Enter,
            crossterm::event::KeyModifiers::NONE,
        ))
    }

    /// Who watches, as a viewer's screen hears it: itself (2) and one other (1) showing `view`.
    fn watching(view: Option<crate::collect::wire::View>, with_other: bool) -> Msg {
        let p = |id: u64, view| crate::collect::wire::Presence {
            id,
            user: format!("dba{id}"),
            host: None,
            via: "socket".into(),
            since: "2026-11-22T13:30:05Z".into(),
            behind_s: None,
            queued_bytes: 0,
            view,
        };
        let mut viewers = vec![p(2, None)];
        if with_other {
            viewers.insert(0, p(1, view));
        }
        Msg::Watching(Box::new(crate::instance::share::Watching {
            following: Some("db01 (informix@db01)".into()),
            viewers,
            you: Some(2),
            ..Default::default()
        }))
    }

    /// Follow-me: `F 1 Enter` follows viewer 1's view (its pane, the session it has open, its
    /// moment: a seek over what this viewer received); any key comes back to this screen's own
    /// view; the one followed leaving ends it with a plain message.
    #[test]
    fn a_viewer_follows_anothers_view_and_any_key_brings_its_own_back() {
        use crate::collect::wire::View;
        use crate::tui::panes::Pane;
        let app = App::new(
            crate::tui::keymap::Keymap::default(),
            crate::tui::theme::Theme::plain(),
            crate::tui::app::Mode::Demo { seed: 1 },
            Duration::from_secs(1),
        );
        let mut s = Session::new(app, Store::new(Default::default()), None, None);
        let now = Duration::from_secs(300);
        let theirs = View {
            pane: 2,
            sid: Some(812),
            open: true,
            at: None,
            follows: None,
        };
        s.update(watching(Some(theirs.clone()), true), now);
        assert_eq!(s.app.pane, Pane::Sessions);
        for m in [key('@'), key('1'), enter()] {
            s.update(m, now);
        }
        assert_eq!(s.app.following.as_ref().map(|f| f.0), Some(1));
        assert_eq!(s.app.pane, Pane::Waiters);
        assert_eq!(s.app.drill.last().map(|d| d.sid), Some(Sid(812)));
        assert_eq!(s.view().follows, Some(1), "the others see whom it follows");
        // It goes back in time: this screen seeks there too.
        let back = View {
            at: Some(290.0),
            ..theirs.clone()
        };
        let effects = s.update(watching(Some(back.clone()), true), now);
        assert!(
            effects.contains(&Effect::Replay(
                crate::collect::replay::ReplayCommand::SeekTo(Duration::from_secs(290))
            )),
            "{effects:?}"
        );
        // Sought once (this screen may not get there: nothing received that early).
        let again = s.update(watching(Some(back), true), now);
        assert!(
            !again.iter().any(|e| matches!(e, Effect::Replay(_))),
            "{again:?}"
        );
        // Any key: its own pane, no session open, and nothing of the key's own doing.
        s.update(key('3'), now);
        assert_eq!(s.app.following, None);
        assert_eq!(s.app.pane, Pane::Sessions);
        assert!(s.app.drill.is_empty());
        assert_eq!(s.app.current_message(), Some("back to your own view"));
        // Following again; the one followed leaves.
        for m in [key('@'), key('1'), enter()] {
            s.update(m, now);
        }
        assert_eq!(s.app.pane, Pane::Waiters);
        s.update(watching(None, false), now);
        assert_eq!(s.app.following, None);
        assert_eq!(s.app.pane, Pane::Sessions);
        assert_eq!(
            s.app.current_message(),
            Some("dba1 left: back to your own view")
        );
        // Itself is not followed.
        for m in [key('@'), key('1'), enter()] {
            s.update(m, now);
        }
        assert_eq!(s.app.following, None);
    }

    /// The screen lets the live snapshot go before it builds the next, and that build's rows
    /// fill the room of the one let go (nothing else held it): no fresh vectors each second.
    #[tokio::test(start_paused = true)]
    async fn each_build_fills_the_room_of_the_snapshot_let_go() {
        let demo = crate::demo::DemoInstance::new(1).with_sessions(300);
        let app = App::new(
            crate::tui::keymap::Keymap::default(),
            crate::tui::theme::Theme::plain(),
            crate::tui::app::Mode::Demo { seed: 1 },
            Duration::from_secs(1),
        );
        let settings = crate::store::StoreSettings {
            ports: vec![crate::demo::LISTENER_PORT],
            ..Default::default()
        };
        let mut s = Session::new(app, Store::new(settings), None, None);
        for t in 100..104 {
            let t = Duration::from_secs(t);
            s.update(Msg::Data(second(&demo, t)), t);
            tokio::time::advance(Duration::from_secs(1)).await;
            s.update(Msg::Settled, t);
        }
        let counts = s.watched.parts.counts();
        assert!(counts.built > 0, "nothing was built: {counts:?}");
        assert!(counts.rooms >= 3, "the rows' room was not kept: {counts:?}");
        assert!(
            s.app.live.sessions.len() > 100,
            "{}",
            s.app.live.sessions.len()
        );
    }
}
