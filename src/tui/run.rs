//! The live loop. Updates from the collectors (or a replay), keys, resizes, signals and the clocks
//! become messages for `Session::update`; the effects it returns are carried out here. The
//! terminal, the inputs and the outside world (clipboard, export directory) are injected, so the
//! tests drive this very loop with a `TestBackend`, scripted inputs and the demo on paused time.
//! Drawing happens only when something changed: no frame timer.

use crate::collect::extents::ExtentStatus;
use crate::collect::log::DebugLog;
use crate::error::Error;
pub use crate::instance::feed::Feed;
use crate::instance::setup::Setup;
use crate::instance::signals::Signal;
use crate::store::Store;
use crate::tui::app::{App, Effect};
use crate::tui::keymap::Keymap;
use crate::tui::session::{Msg, Outcome, Session};
use crate::tui::theme::Theme;
use crate::tui::views;
use crossterm::event::KeyEvent;
use ratatui::backend::Backend;
use ratatui::Terminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// How often a playing replay moves on.
const REPLAY_STEP: Duration = Duration::from_millis(100);

/// What reaches the loop from the terminal and the operating system.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    Key(KeyEvent),
    Resize(u16, u16),
    Signal(Signal),
}

/// What lies outside the screen: the clipboard (an escape sequence to the terminal) and the
/// directory exports are written to.
pub trait Outside {
    /// Puts `text` on the clipboard (already stripped of control characters).
    fn copy(&mut self, text: &crate::format::SafeText) -> std::io::Result<()>;
    /// The copy goes through tmux (which needs `set-clipboard on`).
    fn in_tmux(&self) -> bool;
    /// Where `e` writes its files.
    fn export_dir(&self) -> PathBuf;
    /// Gives the terminal back and stops until continued (Ctrl-Z, SIGTSTP).
    fn suspend(&mut self) -> std::io::Result<()>;
    /// Takes the terminal again after a stop (SIGCONT): raw mode, the alternate screen.
    fn resume(&mut self) -> std::io::Result<()>;
}

/// The real terminal's outside: OSC 52 on standard output, the current directory.
pub(crate) struct Terminal52;

impl Outside for Terminal52 {
    fn copy(&mut self, text: &crate::format::SafeText) -> std::io::Result<()> {
        use std::io::Write;
        let mut out = std::io::stdout();
        out.write_all(crate::tui::share::osc52(text).as_bytes())?;
        out.flush()
    }

    fn in_tmux(&self) -> bool {
        std::env::var_os("TMUX").is_some()
    }

    fn export_dir(&self) -> PathBuf {
        std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
    }

    fn suspend(&mut self) -> std::io::Result<()> {
        crate::tui::terminal::suspend()
    }

    fn resume(&mut self) -> std::io::Result<()> {
        crate::tui::terminal::take_again()
    }
}

/// Clears the screen and makes the next draw paint every cell. Not `Terminal::clear`: that
/// first asks the terminal where the cursor is, an answer the key-reading thread swallows, so it
/// waits 2 s, fails and clears nothing. `resize` to the full size clears without asking.
fn repaint<B: Backend>(terminal: &mut Terminal<B>) {
    if let Ok(size) = terminal.size() {
        let _ = terminal.resize(ratatui::layout::Rect::new(0, 0, size.width, size.height));
    }
}

/// One instance in the loop: its screen's state and where its data comes from.
pub struct Member<'a> {
    pub session: &'a mut Session,
    pub feed: &'a mut Feed,
    /// How the fleet screen names it.
    pub name: String,
    /// When its data has settled (`Msg::Settled` is due).
    settle: Option<Instant>,
    /// Its extent job may still send.
    extents_open: bool,
}

impl<'a> Member<'a> {
    pub fn new(session: &'a mut Session, feed: &'a mut Feed, name: String) -> Self {
        // Recording, the database time the screen samples goes into the recording too.
        if let Some(tx) = feed.track() {
            session.watched.keep_track(tx);
        }
        // Keeping a ring, the findings of each moment make its incidents.
        if let Some(ring) = feed.ring() {
            session.watched.keep_ring(ring);
        }
        Member {
            session,
            feed,
            name,
            settle: None,
            extents_open: true,
        }
    }
}

/// What woke the loop, and for which instance.
enum Event {
    Updates(usize, Vec<crate::collect::sample::Update>),
    Extents(usize, ExtentStatus),
    Settled(usize),
    SeekMore(usize),
    ReplayStep,
    Input(Option<Input>),
    Tick,
}

/// The first instance (from `start` on, so none starves the others) with data or an extent-map
/// status waiting: each instance's arrivals taken as the headless loop takes them.
fn poll_feeds(
    members: &mut [Member<'_>],
    start: usize,
    cx: &mut std::task::Context<'_>,
) -> std::task::Poll<Event> {
    use crate::instance::headless::{poll_arrival, Arrival};
    use std::task::Poll;
    let n = members.len();
    for k in 0..n {
        let i = (start + k) % n;
        let m = &mut members[i];
        if let Feed::Collect { collection, .. } = &mut *m.feed {
            match poll_arrival(collection, &mut m.extents_open, cx) {
                // This update and every other already waiting, applied together.
                Poll::Ready(Arrival::Updates(u)) => return Poll::Ready(Event::Updates(i, u)),
                Poll::Ready(Arrival::Extents(st)) => return Poll::Ready(Event::Extents(i, st)),
                // The screen stays on what it has: its stale marks say the rest.
                Poll::Ready(Arrival::ExtentsEnded | Arrival::Closed | Arrival::Played(_))
                | Poll::Pending => {}
            }
        }
    }
    Poll::Pending
}

/// Waits for the next thing to happen: data or the extent job of any instance, a settle timer,
/// the replay clock, an input, or the 1 s clock (at `clock`).
async fn next_event(
    members: &mut [Member<'_>],
    inputs: Option<&mut mpsc::Receiver<Input>>,
    clock: Instant,
    replay_tick: &mut tokio::time::Interval,
    turn: usize,
) -> Event {
    let settle = members
        .iter()
        .enumerate()
        .filter_map(|(i, m)| m.settle.map(|d| (d, i)))
        .min();
    let replaying = members
        .iter()
        .any(|m| matches!(&*m.feed, Feed::Replay { player, .. } if !player.is_paused()));
    // A seek part way goes on only when no key is waiting: a key (another seek, `q`) is always
    // seen first.
    let keys_waiting = inputs.as_ref().is_some_and(|rx| !rx.is_empty());
    let seeking = members
        .iter()
        .position(|m| m.session.is_seeking())
        .filter(|_| !keys_waiting);
    let data = std::future::poll_fn(|cx| poll_feeds(members, turn, cx));
    tokio::select! {
        ev = data => ev,
        i = async {
            match settle {
                Some((d, i)) => {
                    tokio::time::sleep_until(d).await;
                    i
                }
                None => std::future::pending().await,
            }
        } => Event::Settled(i),
        _ = replay_tick.tick(), if replaying => Event::ReplayStep,
        // Ready at once: a long seek goes on a slice at a time, and `q` still quits.
        i = std::future::ready(seeking), if seeking.is_some() => Event::SeekMore(i.unwrap_or(0)),
        input = async {
            match inputs {
                Some(rx) => rx.recv().await,
                None => std::future::pending().await,
            }
        } => Event::Input(input),
        _ = tokio::time::sleep_until(clock) => Event::Tick,
    }
}

/// Runs the loop until the session asks to quit (a key, a signal) or the inputs end; returns the
/// exit code.
pub async fn drive<B: Backend>(
    terminal: &mut Terminal<B>,
    session: &mut Session,
    feed: &mut Feed,
    inputs: &mut mpsc::Receiver<Input>,
    outside: &mut dyn Outside,
) -> Result<u8, Error> {
    let mut members = [Member::new(session, feed, String::new())];
    drive_fleet(terminal, &mut members, None, inputs, outside).await
}

/// The loop over several instances: with `fleet`, the fleet screen lists them and Enter opens
/// one (Esc comes back); without it, the first instance's screens are all there is. Every
/// instance's data is applied as it comes, shown or not: its fleet line stays current.
pub async fn drive_fleet<B: Backend>(
    terminal: &mut Terminal<B>,
    members: &mut [Member<'_>],
    mut fleet: Option<crate::tui::fleet::FleetUi>,
    inputs: &mut mpsc::Receiver<Input>,
    outside: &mut dyn Outside,
) -> Result<u8, Error> {
    use crate::tui::fleet::FleetCommand;
    use std::collections::VecDeque;
    if members.is_empty() {
        return Err(Error::Other("no instance to watch".into()));
    }
    // The first at once, as an interval's: the recording's badge is up from the start.
    let mut clock = Instant::now();
    let mut replay_tick = tokio::time::interval(REPLAY_STEP);
    replay_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut inputs_open = true;
    let mut fleet_dirty = true;
    let mut turn = 0usize;
    let mut effects: VecDeque<(usize, Effect)> = VecDeque::new();
    for (i, m) in members.iter_mut().enumerate() {
        if fleet.is_some() {
            // One of several: its screens name it, and Esc leads back to the fleet.
            m.session.app.instance = Some(m.name.clone());
        }
        let now = m.feed.now();
        effects.extend(m.session.update(Msg::Tick, now).into_iter().map(|e| (i, e)));
        if let Feed::Replay { player, .. } = &*m.feed {
            let ui = player.ui();
            effects.extend(
                m.session
                    .update(Msg::Played(Default::default(), ui), now)
                    .into_iter()
                    .map(|e| (i, e)),
            );
        }
    }
    loop {
        while let Some((i, e)) = effects.pop_front() {
            let m = &mut members[i];
            match e {
                Effect::Quit(code) => return Ok(code),
                Effect::SettleIn(d) => {
                    let at = Instant::now() + d;
                    m.settle = Some(m.settle.map_or(at, |s| s.min(at)));
                }
                Effect::Leave => {
                    if let Some(f) = fleet.as_mut() {
                        f.open = None;
                        fleet_dirty = true;
                    }
                }
                other => {
                    if let Some(msg) = carry_out(other, m.session, m.feed, terminal, outside) {
                        let now = m.feed.now();
                        effects.extend(m.session.update(msg, now).into_iter().map(|e| (i, e)));
                        fleet_dirty = true;
                    }
                }
            }
        }
        let shown = fleet.as_ref().map_or(Some(0), |f| f.open);
        match shown {
            Some(i) => {
                let m = &mut members[i];
                if m.session.dirty {
                    let now = m.feed.now();
                    terminal
                        .draw(|f| views::draw(f, &m.session.app, now))
                        .map_err(|e| Error::Other(format!("terminal: {e}")))?;
                    m.session.dirty = false;
                    m.session.drawn = Some(views::time_face(&m.session.app, now));
                }
            }
            None => {
                if fleet_dirty || members.iter().any(|m| m.session.dirty) {
                    let rows: Vec<crate::model::fleet::FleetRow> = members
                        .iter()
                        .map(|m| {
                            crate::model::fleet::row(&m.name, m.session.app.shown(), m.feed.now())
                        })
                        .collect();
                    let first = &members[0];
                    let clock = first
                        .session
                        .app
                        .wall_clock(first.feed.now())
                        .map(crate::format::local_time);
                    let theme = first.session.app.theme;
                    let keymap = &first.session.app.keymap;
                    let ui = fleet.clone().unwrap_or_default();
                    terminal
                        .draw(|f| {
                            let area = f.area();
                            views::fleet::render(
                                &rows,
                                &ui,
                                clock,
                                (&theme, keymap),
                                area,
                                f.buffer_mut(),
                            )
                        })
                        .map_err(|e| Error::Other(format!("terminal: {e}")))?;
                    fleet_dirty = false;
                    for m in members.iter_mut() {
                        m.session.dirty = false;
                    }
                }
            }
        }
        turn = turn.wrapping_add(1);
        let event = next_event(
            members,
            inputs_open.then_some(&mut *inputs),
            clock,
            &mut replay_tick,
            turn,
        )
        .await;
        // Which instance a key or a signal is for: the one shown, else the first.
        let target = shown.unwrap_or(0);
        let (i, msg) = match event {
            Event::Updates(i, u) => (i, Msg::Data(u)),
            Event::Extents(i, st) => (i, Msg::Extents(st)),
            Event::SeekMore(i) => (i, Msg::SeekMore),
            Event::Settled(i) => {
                members[i].settle = None;
                (i, Msg::Settled)
            }
            Event::ReplayStep => {
                let Some(i) = members
                    .iter()
                    .position(|m| matches!(&*m.feed, Feed::Replay { .. }))
                else {
                    continue;
                };
                let Feed::Replay { player, last, .. } = &mut *members[i].feed else {
                    continue;
                };
                let wall = last.elapsed();
                *last = Instant::now();
                let before = (player.position().as_secs(), player.is_paused());
                let played = player.advance(wall);
                // Draw when a sample was applied or the clock on screen moved, not 10 times
                // a second.
                if played.is_empty()
                    && !played.restart
                    && before == (player.position().as_secs(), player.is_paused())
                {
                    continue;
                }
                (i, Msg::Played(played, player.ui()))
            }
            Event::Input(Some(Input::Key(k))) => {
                if let Some(f) = fleet.as_mut().filter(|f| f.open.is_none()) {
                    let keymap = members[0].session.app.keymap.clone();
                    let command = f.on_key(&keymap, &k, members.len());
                    if let FleetCommand::Open(i) = command {
                        if let Some(m) = members.get_mut(i) {
                            m.session.dirty = true;
                        }
                    }
                    fleet_dirty |= command != FleetCommand::Ignored;
                    // Quit, Ctrl-L and Ctrl-Z become the effects an instance's keys give, and
                    // are carried out the one way (a repaint, never `Terminal::clear`).
                    effects.extend(command.effect().map(|e| (target, e)));
                    continue;
                }
                (target, Msg::Key(k))
            }
            Event::Input(Some(Input::Resize(w, h))) => {
                let _ = terminal.autoresize();
                for (j, m) in members.iter_mut().enumerate() {
                    if j != target {
                        let now = m.feed.now();
                        let more = m.session.update(Msg::Resize(w, h), now);
                        effects.extend(more.into_iter().map(|e| (j, e)));
                    }
                }
                fleet_dirty = true;
                (target, Msg::Resize(w, h))
            }
            Event::Input(Some(Input::Signal(s))) => {
                fleet_dirty = true;
                (target, Msg::Signal(s))
            }
            Event::Input(None) => {
                // The terminal is gone: nothing more can be typed or shown.
                inputs_open = false;
                (target, Msg::Signal(Signal::Hangup))
            }
            Event::Tick => {
                clock = next_clock(&members[target]);
                for (j, m) in members.iter_mut().enumerate() {
                    if j == target {
                        continue;
                    }
                    let msg = tick_msg(m.feed);
                    let now = m.feed.now();
                    effects.extend(m.session.update(msg, now).into_iter().map(|e| (j, e)));
                }
                fleet_dirty = true;
                // Watching together: the viewers' asks, and who watches, once a second.
                let m = &mut members[target];
                m.feed.set_focus(None);
                // What this screen shows, for the others to follow.
                m.feed.say_view(m.session.view());
                if let Some(w) = m.feed.watching() {
                    let now = m.feed.now();
                    effects.extend(
                        m.session
                            .update(Msg::Watching(Box::new(w)), now)
                            .into_iter()
                            .map(|e| (target, e)),
                    );
                }
                (target, tick_msg(members[target].feed))
            }
        };
        let m = &mut members[i];
        let now = m.feed.now();
        effects.extend(m.session.update(msg, now).into_iter().map(|e| (i, e)));
    }
}

/// How long after the header's clock shows the next second the 1 s clock wakes: the data of
/// that second (polled on the second, settled `watch::SETTLE` after it arrives) has been drawn
/// with the new second by then, and the clock has nothing left to draw; with no data, the new
/// second shows this late.
const CLOCK_GRACE: Duration = Duration::from_millis(250);

/// When the 1 s clock next wakes: `CLOCK_GRACE` after the second shown on `m`'s screen next
/// changes.
fn next_clock(m: &Member<'_>) -> Instant {
    let till = views::till_next_second(&m.session.app, m.feed.now());
    Instant::now() + till + CLOCK_GRACE
}

/// The 1 s clock's message: with the recording's progress when recording.
fn tick_msg(feed: &Feed) -> Msg {
    match feed {
        Feed::Collect {
            recorder: Some(rec),
            ..
        } => Msg::Recording {
            bytes: rec.written(),
            stopped: rec.status(),
        },
        _ => Msg::Tick,
    }
}

/// Carries out one effect; what it came to goes back to the session as a message.
fn carry_out<B: Backend>(
    effect: Effect,
    session: &Session,
    feed: &mut Feed,
    terminal: &mut Terminal<B>,
    outside: &mut dyn Outside,
) -> Option<Msg> {
    match effect {
        Effect::SetInterval(v) => {
            if let Feed::Collect { collection, .. } = feed {
                let _ = collection.interval.send(v);
            }
            None
        }
        Effect::RebuildExtents => {
            if let Feed::Collect { collection, .. } = feed {
                let _ = collection.rebuild.try_send(());
            }
            None
        }
        Effect::Focus(focus) => {
            feed.set_focus(Some(focus));
            None
        }
        Effect::Copy(text) => {
            let text = crate::format::SafeText::new(&text);
            Some(Msg::Done(match outside.copy(&text) {
                Ok(()) => Outcome::Copied {
                    bytes: text.len(),
                    tmux: outside.in_tmux(),
                },
                Err(e) => Outcome::Failed(format!("could not write to the terminal: {e}")),
            }))
        }
        Effect::Export => Some(Msg::Done(export(
            &session.app,
            feed.now(),
            terminal,
            outside,
        ))),
        Effect::Replay(cmd) => match feed {
            Feed::Replay { player, last, .. } => {
                let played = player.command(cmd);
                *last = Instant::now();
                Some(Msg::Played(played, player.ui()))
            }
            // A viewer seeks over what it received.
            Feed::Collect {
                follow: Some(f), ..
            } => Some(Msg::Past(cmd, f.history())),
            Feed::Collect { .. } => None,
        },
        Effect::Mark { at, note } => {
            let wall = session.app.wall_clock(at);
            Some(Msg::Done(match feed.mark(at, wall, &note) {
                Ok(to) => Outcome::Marked { at, note, to },
                Err(e) => Outcome::Failed(e),
            }))
        }
        Effect::Redraw => {
            // A full repaint: whatever the terminal shows now is forgotten.
            repaint(terminal);
            Some(Msg::Tick)
        }
        Effect::Suspend => match outside.suspend() {
            Ok(()) => {
                repaint(terminal);
                Some(Msg::Tick)
            }
            Err(e) => Some(Msg::Done(Outcome::Failed(format!("cannot suspend: {e}")))),
        },
        Effect::Resume => {
            let taken = outside.resume();
            repaint(terminal);
            match taken {
                Ok(()) => Some(Msg::Tick),
                Err(e) => Some(Msg::Done(Outcome::Failed(format!(
                    "cannot take the terminal again: {e}"
                )))),
            }
        }
        Effect::Quit(_) | Effect::SettleIn(_) | Effect::Leave => None,
    }
}

/// Writes the screen as text and the snapshot as JSON next to each other.
fn export<B: Backend>(
    app: &App,
    now: Duration,
    terminal: &Terminal<B>,
    outside: &dyn Outside,
) -> Outcome {
    let size = terminal.size().unwrap_or_default();
    // The whole screen, not the terminal's part of it: a session screen's last sections, a
    // report pane's last lines are what a ticket needs.
    let height = views::whole_height(app, size.width, size.height);
    let area = ratatui::layout::Rect::new(0, 0, size.width, height);
    let mut buf = ratatui::buffer::Buffer::empty(area);
    views::render(app, now, area, &mut buf);
    let text = crate::format::SafeText::new(&format!(
        "{}{}",
        views::provenance(app, app.shown()),
        views::buffer_text(&buf)
    ));
    let json = crate::format::SafeText::json(
        &serde_json::to_string_pretty(app.shown().as_ref()).unwrap_or_default(),
    );
    // Named after the moment shown (a replay's recorded time), not the time of the export.
    let moment = app
        .wall_clock(now)
        .unwrap_or_else(time::OffsetDateTime::now_utc);
    let stem = crate::format::export_stem(moment);
    let dir = outside.export_dir();
    match crate::tui::share::export(&dir, &stem, &text, &json) {
        Ok((a, b)) => {
            let name = |p: &std::path::Path| {
                p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            };
            Outcome::Exported {
                files: vec![name(&a), name(&b)],
                dir: dir.display().to_string(),
            }
        }
        Err(e) => Outcome::Failed(format!("export failed: {e}")),
    }
}

/// A new session from a setup: the app with its keys, theme and mode, and an empty store.
pub fn session_for(
    setup: &Setup,
    keymap: &Keymap,
    theme: Theme,
    size: (u16, u16),
) -> Result<Session, Error> {
    let log = match &setup.log {
        // The screen says it when the log cannot be written (a full disk).
        Some(p) => Some(
            DebugLog::open(p)
                .map(DebugLog::for_screen)
                .map_err(|source| Error::File {
                    path: p.display().to_string(),
                    source,
                })?,
        ),
        None => None,
    };
    let mut app = App::new(keymap.clone(), theme, setup.mode.clone(), setup.interval);
    app.server = setup.server.clone();
    app.note = setup.note;
    app.wall_start = setup.settings.wall_start;
    app.host = setup.settings.host.clone();
    app.size = size;
    if let Some(rec) = &setup.replay {
        ring_marks(&mut app, setup, rec);
        if !rec.skipped.is_empty() {
            app.say(
                format!("recording: {}", rec.problems_line()),
                Duration::ZERO,
            );
        }
    }
    let mut session = Session::new(
        app,
        Store::new(setup.settings.clone()),
        setup.server.clone(),
        log,
    );
    session.log(
        Duration::ZERO,
        &format!(
            "start: {:?} server {} ports {:?} base page {} KB interval {}s",
            setup.mode,
            setup.server.as_deref().unwrap_or("-"),
            setup.settings.ports,
            setup.settings.base_page_kb,
            setup.interval.as_secs_f64()
        ),
    );
    Ok(session)
}

/// A replay of a ring: its bookmarks within the window replayed, on the replay's clock.
fn ring_marks(app: &mut App, setup: &Setup, rec: &crate::collect::record::Recording) {
    let crate::instance::setup::Mode::Replay { file } = &setup.mode else {
        return;
    };
    let dir = std::path::Path::new(file);
    let Some(start) = app.wall_start.filter(|_| dir.is_dir()) else {
        return;
    };
    let length = rec.length();
    for m in crate::collect::ring::marks(dir) {
        let Ok(at) =
            time::OffsetDateTime::parse(&m.at, &time::format_description::well_known::Rfc3339)
        else {
            continue;
        };
        match Duration::try_from(at - start) {
            Ok(d) if d <= length => app.add_mark(d, m.note),
            _ => {}
        }
    }
}

/// Runs the TUI on the real terminal until the user quits or a signal arrives.
pub fn run(args: &crate::cli::LiveArgs) -> Result<ExitCode, Error> {
    // A bad argument or config value is named even where no screen could be drawn.
    let checked = crate::instance::setup::checked(args)?;
    let keymap = Keymap::from_config(&checked.config().keys)
        .map_err(|e| Error::Usage(format!("config [keys]: {e}")))?;
    crate::tui::terminal::check().map_err(Error::Usage)?;
    let setups = crate::instance::setup::setups(args, checked)?;
    let rt = crate::instance::runtime::current_thread()?;
    let code = rt.block_on(run_async(setups, keymap));
    crate::instance::runtime::finish(rt);
    code
}

async fn run_async(setups: Vec<Setup>, keymap: Keymap) -> Result<ExitCode, Error> {
    let several = setups.len() > 1;
    let mut feeds = Vec::with_capacity(setups.len());
    for s in &setups {
        feeds.push(Feed::start(s)?);
    }
    let (tx, mut inputs) = mpsc::channel::<Input>(256);
    let keys = tx.clone();
    std::thread::spawn(move || {
        use crossterm::event::Event;
        // Blocking reads on their own thread: the async loop never waits on the terminal.
        while let Ok(ev) = crossterm::event::read() {
            let inputs: Vec<Input> = match ev {
                Event::Key(k) => crate::tui::keymap::keys_of(k).map(Input::Key).collect(),
                Event::Resize(w, h) => vec![Input::Resize(w, h)],
                _ => continue,
            };
            if inputs.into_iter().any(|i| keys.blocking_send(i).is_err()) {
                break;
            }
        }
    });
    spawn_signals(tx)?;
    let palette = crate::tui::theme::palette(|k| std::env::var(k).ok());
    let (mut terminal, guard) =
        crate::tui::terminal::enter(palette == crate::tui::theme::Palette::Basic)?;
    let size = terminal
        .size()
        .map(|s| (s.width, s.height))
        .unwrap_or((80, 24));
    let mut sessions = Vec::with_capacity(setups.len());
    for s in &setups {
        sessions.push(session_for(s, &keymap, Theme::from_env(), size)?);
    }
    let mut members: Vec<Member> = sessions
        .iter_mut()
        .zip(feeds.iter_mut())
        .zip(&setups)
        .map(|((session, feed), s)| Member::new(session, feed, s.instance.clone()))
        .collect();
    let fleet = several.then(crate::tui::fleet::FleetUi::default);
    let code = drive_fleet(
        &mut terminal,
        &mut members,
        fleet,
        &mut inputs,
        &mut Terminal52,
    )
    .await;
    drop(members);
    drop(guard);
    for (session, feed) in sessions.iter_mut().zip(feeds) {
        let now = feed.now();
        session.log(now, &format!("exit ({code:?})"));
        match feed.finish().await {
            Some(Ok(note)) if !note.is_empty() => eprintln!("ifxtop: {note}"),
            Some(Err(e)) => eprintln!("ifxtop: recording: {e}"),
            _ => {}
        }
    }
    Ok(ExitCode::from(code?))
}

/// Forwards SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGTSTP and SIGCONT to the loop as inputs.
fn spawn_signals(tx: mpsc::Sender<Input>) -> Result<(), Error> {
    let mut signals = crate::instance::signals::listen(&Signal::SCREEN)?;
    tokio::spawn(async move {
        while let Some(sig) = signals.recv().await {
            if tx.send(Input::Signal(sig)).await.is_err() {
                break;
            }
        }
    });
    Ok(())
}
