//! The live loop. Updates from the collectors (or a replay), keys, resizes, signals and the clocks
//! become messages for `Session::update`; the effects it returns are carried out here. The
//! terminal, the inputs and the outside world (clipboard, export directory) are injected, so the
//! tests drive this very loop with a `TestBackend`, scripted inputs and the demo on paused time.
//! Drawing happens only when something changed: no frame timer.

use crate::collect::extents::ExtentStatus;
use crate::collect::log::DebugLog;
use crate::collect::record::{Recorder, RecordingHeader};
use crate::collect::replay::Player;
use crate::collect::sample::RawSample;
use crate::collect::Collection;
use crate::error::Error;
use crate::store::Store;
use crate::tui::app::{App, Effect};
use crate::tui::session::{Msg, Outcome, Session, Signal};
use crate::tui::setup::Setup;
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

/// Where the store's updates come from.
pub enum Feed {
    Collect {
        collection: Collection,
        recorder: Option<Recorder>,
    },
    Replay {
        player: Player,
        /// When the player last moved (its speed is relative to this clock).
        last: Instant,
    },
}

impl Feed {
    /// Starts the collectors of `setup` (or its replay), and the recorder when recording.
    pub fn start(setup: &Setup) -> Result<Feed, Error> {
        if let Some(rec) = &setup.replay {
            return Ok(Feed::Replay {
                player: Player::new(rec.clone()),
                last: Instant::now(),
            });
        }
        let (raw, recorder) = match &setup.record {
            Some((path, max_mb)) => {
                let (tx, rx) = std::sync::mpsc::sync_channel::<RawSample>(4096);
                let header = RecordingHeader::new(
                    setup.server.as_deref(),
                    setup.settings.host.as_deref(),
                    setup
                        .settings
                        .wall_start
                        .unwrap_or_else(time::OffsetDateTime::now_utc),
                    &setup.settings.ports,
                    setup.settings.base_page_kb,
                );
                let rec = Recorder::start(path, *max_mb, &header, rx)?;
                (Some(tx), Some(rec))
            }
            None => (None, None),
        };
        let collection = Collection::start(
            setup.runner.clone(),
            setup.interval,
            raw,
            setup.extents.clone(),
            crate::collect::SessionClock::start(),
        );
        Ok(Feed::Collect {
            collection,
            recorder,
        })
    }

    /// The session time: the collectors' clock, or the replay's position.
    pub(crate) fn now(&self) -> Duration {
        match self {
            Feed::Collect { collection, .. } => collection.clock.now(),
            Feed::Replay { player, .. } => player.position(),
        }
    }

    /// Stops collecting; a recording is finished and its summary returned.
    pub async fn finish(self) -> Option<Result<String, Error>> {
        match self {
            Feed::Collect {
                mut collection,
                recorder,
            } => {
                collection.stop();
                drop(collection);
                let rec = recorder?;
                // Aborted collectors drop their senders; the recorder then writes what it has.
                tokio::task::yield_now().await;
                Some(rec.finish())
            }
            Feed::Replay { .. } => None,
        }
    }
}

/// What lies outside the screen: the clipboard (an escape sequence to the terminal) and the
/// directory exports are written to.
pub trait Outside {
    /// Puts `text` on the clipboard (already stripped of control characters).
    fn copy(&mut self, text: &str) -> std::io::Result<()>;
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
    fn copy(&mut self, text: &str) -> std::io::Result<()> {
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

/// What woke the loop.
enum Event {
    Updates(Vec<crate::collect::sample::Update>),
    Extents(ExtentStatus),
    Settled,
    ReplayStep,
    Input(Option<Input>),
    Tick,
}

/// Waits for the next thing to happen: data, the extent job, the settle timer, the replay
/// clock, an input, or the 1 s age clock.
async fn next_event(
    feed: &mut Feed,
    inputs: Option<&mut mpsc::Receiver<Input>>,
    settle: &mut Option<Instant>,
    tick: &mut tokio::time::Interval,
    replay_tick: &mut tokio::time::Interval,
) -> Event {
    let (updates, extents, replaying) = match feed {
        Feed::Collect { collection, .. } => (
            Some(&mut collection.updates),
            Some(&mut collection.extents),
            false,
        ),
        Feed::Replay { player, .. } => (None, None, !player.is_paused()),
    };
    tokio::select! {
        Some(first) = async {
            match updates {
                Some(rx) => {
                    let first = rx.recv().await?;
                    // This update and every other already waiting, applied together.
                    let mut all = vec![first];
                    while let Ok(u) = rx.try_recv() {
                        all.push(u);
                    }
                    Some(all)
                }
                None => std::future::pending().await,
            }
        } => Event::Updates(first),
        Some(st) = async {
            match extents {
                Some(rx) => rx.recv().await,
                None => std::future::pending().await,
            }
        } => Event::Extents(st),
        _ = async {
            match *settle {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        } => {
            *settle = None;
            Event::Settled
        }
        _ = replay_tick.tick(), if replaying => Event::ReplayStep,
        input = async {
            match inputs {
                Some(rx) => rx.recv().await,
                None => std::future::pending().await,
            }
        } => Event::Input(input),
        _ = tick.tick() => Event::Tick,
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
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut replay_tick = tokio::time::interval(REPLAY_STEP);
    replay_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut settle: Option<Instant> = None;
    let mut inputs_open = true;
    let mut effects = session.update(Msg::Tick, feed.now());
    if let Feed::Replay { player, .. } = &*feed {
        effects.extend(session.update(Msg::Played(Default::default(), player.ui()), feed.now()));
    }
    loop {
        for e in std::mem::take(&mut effects) {
            match e {
                Effect::Quit(code) => return Ok(code),
                Effect::SettleIn(d) => {
                    let at = Instant::now() + d;
                    settle = Some(settle.map_or(at, |s| s.min(at)));
                }
                other => {
                    if let Some(msg) = carry_out(other, session, feed, terminal, outside) {
                        effects.extend(session.update(msg, feed.now()));
                    }
                }
            }
        }
        if !effects.is_empty() {
            continue;
        }
        if session.dirty {
            let now = feed.now();
            terminal
                .draw(|f| views::draw(f, &session.app, now))
                .map_err(|e| Error::Other(format!("terminal: {e}")))?;
            session.dirty = false;
        }
        let msg = match next_event(
            feed,
            inputs_open.then_some(&mut *inputs),
            &mut settle,
            &mut tick,
            &mut replay_tick,
        )
        .await
        {
            Event::Updates(u) => Msg::Data(u),
            Event::Extents(st) => Msg::Extents(st),
            Event::Settled => Msg::Settled,
            Event::ReplayStep => {
                let Feed::Replay { player, last } = &mut *feed else {
                    continue;
                };
                let wall = last.elapsed();
                *last = Instant::now();
                let before = (player.position().as_secs(), player.is_paused());
                let played = player.advance(wall);
                // Draw when a sample was applied or the clock on screen moved, not 10 times
                // a second.
                if played.updates.is_empty()
                    && !played.restart
                    && before == (player.position().as_secs(), player.is_paused())
                {
                    continue;
                }
                Msg::Played(played, player.ui())
            }
            Event::Input(Some(Input::Key(k))) => Msg::Key(k),
            Event::Input(Some(Input::Resize(w, h))) => {
                let _ = terminal.autoresize();
                Msg::Resize(w, h)
            }
            Event::Input(Some(Input::Signal(s))) => Msg::Signal(s),
            Event::Input(None) => {
                // The terminal is gone: nothing more can be typed or shown.
                inputs_open = false;
                Msg::Signal(Signal::Hangup)
            }
            Event::Tick => match &*feed {
                Feed::Collect {
                    recorder: Some(rec),
                    ..
                } => Msg::Recording {
                    bytes: rec.written(),
                    stopped: rec.status(),
                },
                _ => Msg::Tick,
            },
        };
        effects = session.update(msg, feed.now());
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
            if let Feed::Collect { collection, .. } = feed {
                let _ = collection.focus.send(focus);
            }
            None
        }
        Effect::Copy(text) => {
            let text = crate::format::printable(&text);
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
            Feed::Replay { player, last } => {
                let played = player.command(cmd);
                *last = Instant::now();
                Some(Msg::Played(played, player.ui()))
            }
            Feed::Collect { .. } => None,
        },
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
        Effect::Quit(_) | Effect::SettleIn(_) => None,
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
    let area = ratatui::layout::Rect::new(0, 0, size.width, size.height);
    let mut buf = ratatui::buffer::Buffer::empty(area);
    views::render(app, now, area, &mut buf);
    let text = crate::format::printable(&format!(
        "{}{}",
        views::provenance(app, app.shown()),
        views::buffer_text(&buf)
    ));
    let json = serde_json::to_string_pretty(app.shown().as_ref()).unwrap_or_default();
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
pub fn session_for(setup: &Setup, size: (u16, u16)) -> Result<Session, Error> {
    let log = match &setup.log {
        Some(p) => Some(DebugLog::open(p).map_err(|source| Error::File {
            path: p.display().to_string(),
            source,
        })?),
        None => None,
    };
    let mut app = App::new(
        setup.keymap.clone(),
        setup.theme,
        setup.mode.clone(),
        setup.interval,
    );
    app.server = setup.server.clone();
    app.note = setup.note;
    app.wall_start = setup.settings.wall_start;
    app.host = setup.settings.host.clone();
    app.size = size;
    if let Some(rec) = &setup.replay {
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
            setup.interval
        ),
    );
    Ok(session)
}

/// Runs the TUI on the real terminal until the user quits or a signal arrives.
pub fn run(args: &crate::cli::LiveArgs) -> Result<ExitCode, Error> {
    // A bad argument or config value is named even where no screen could be drawn.
    crate::tui::setup::checked(args)?;
    crate::tui::terminal::check().map_err(Error::Usage)?;
    let setup = crate::tui::setup::setup(args)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let code = rt.block_on(run_async(setup));
    // Every task is dropped here (so every command in flight is killed with its process
    // group); a file read stuck in the kernel (a dead NFS server) keeps its thread, but never
    // holds up the exit.
    rt.shutdown_timeout(Duration::from_millis(500));
    code
}

async fn run_async(setup: Setup) -> Result<ExitCode, Error> {
    let mut feed = Feed::start(&setup)?;
    let (tx, mut inputs) = mpsc::channel::<Input>(256);
    let keys = tx.clone();
    std::thread::spawn(move || {
        use crossterm::event::Event;
        // Blocking reads on their own thread: the async loop never waits on the terminal.
        while let Ok(ev) = crossterm::event::read() {
            let input = match ev {
                Event::Key(k) => Input::Key(k),
                Event::Resize(w, h) => Input::Resize(w, h),
                _ => continue,
            };
            if keys.blocking_send(input).is_err() {
                break;
            }
        }
    });
    spawn_signals(tx)?;
    let (mut terminal, guard) = crate::tui::terminal::enter()?;
    let size = terminal
        .size()
        .map(|s| (s.width, s.height))
        .unwrap_or((80, 24));
    let mut session = session_for(&setup, size)?;
    let code = drive(
        &mut terminal,
        &mut session,
        &mut feed,
        &mut inputs,
        &mut Terminal52,
    )
    .await;
    drop(guard);
    let now = feed.now();
    session.log(now, &format!("exit ({code:?})"));
    match feed.finish().await {
        Some(Ok(note)) if !note.is_empty() => eprintln!("ifxtop: {note}"),
        Some(Err(e)) => eprintln!("ifxtop: recording: {e}"),
        _ => {}
    }
    Ok(ExitCode::from(code?))
}

/// Forwards SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGTSTP and SIGCONT to the loop as inputs.
fn spawn_signals(tx: mpsc::Sender<Input>) -> Result<(), Error> {
    use tokio::signal::unix::{signal, SignalKind};
    for (kind, sig) in [
        (SignalKind::terminate(), Signal::Terminate),
        (SignalKind::hangup(), Signal::Hangup),
        (SignalKind::interrupt(), Signal::Interrupt),
        (SignalKind::quit(), Signal::Quit),
        (SignalKind::from_raw(nix::libc::SIGTSTP), Signal::Stop),
        (SignalKind::from_raw(nix::libc::SIGCONT), Signal::Continue),
    ] {
        let mut stream = signal(kind).map_err(Error::Io)?;
        let tx = tx.clone();
        tokio::spawn(async move {
            while stream.recv().await.is_some() {
                if tx.send(Input::Signal(sig)).await.is_err() {
                    break;
                }
            }
        });
    }
    Ok(())
}
