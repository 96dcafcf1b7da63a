//! The live loop itself, driven as a user would drive it: the real collectors against the demo on
//! a paused clock, scripted keys and signals as inputs, a test backend as the terminal, and a fake
//! outside world (clipboard, export directory). Every frame drawn is kept, so a test reads the
//! screens the user would have seen, in order.

#[path = "../common/mod.rs"]
mod common;

mod bidi;
mod bookmarks;
mod cost_live;
mod findings_since;
mod processes;
mod replay_cut;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ifxtop::collect::extents::ExtentSource;
use ifxtop::demo::DemoRunner;
use ifxtop::instance::setup::Setup;
use ifxtop::store::StoreSettings;
use ifxtop::tui::app::Mode;
use ifxtop::tui::keymap::Keymap;
use ifxtop::tui::run::{drive, session_for, Feed, Input, Outside};
use ifxtop::tui::session::Signal;
use ifxtop::tui::theme::Theme;
use ratatui::backend::{Backend, ClearType, TestBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use ratatui::Terminal;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// A test backend that keeps the text of every frame drawn, and how many cells each draw
/// painted. Like a real terminal whose keys a reader thread takes, it cannot tell where the
/// cursor is (the answer to that question goes to the reader thread).
struct Frames {
    inner: TestBackend,
    seen: Arc<Mutex<Vec<String>>>,
    /// Cells painted by each frame, in order with `seen`.
    painted: Arc<Mutex<Vec<usize>>>,
    since_flush: usize,
}

impl Backend for Frames {
    type Error = std::io::Error;

    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        let cells: Vec<_> = content.collect();
        self.since_flush += cells.len();
        self.inner.draw(cells.into_iter()).map_err(|e| match e {})
    }
    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.hide_cursor().map_err(|e| match e {})
    }
    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.show_cursor().map_err(|e| match e {})
    }
    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        Err(std::io::Error::other(
            "the cursor position could not be read within a normal duration",
        ))
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> Result<(), Self::Error> {
        self.inner
            .set_cursor_position(position)
            .map_err(|e| match e {})
    }
    fn clear(&mut self) -> Result<(), Self::Error> {
        self.inner.clear().map_err(|e| match e {})
    }
    fn clear_region(&mut self, clear_type: ClearType) -> Result<(), Self::Error> {
        self.inner.clear_region(clear_type).map_err(|e| match e {})
    }
    fn size(&self) -> Result<Size, Self::Error> {
        self.inner.size().map_err(|e| match e {})
    }
    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.inner.window_size().map_err(|e| match e {})
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        let text = ifxtop::tui::views::buffer_text(self.inner.buffer());
        self.seen.lock().expect("frames").push(text);
        self.painted
            .lock()
            .expect("painted")
            .push(std::mem::take(&mut self.since_flush));
        self.inner.flush().map_err(|e| match e {})
    }
}

/// What the loop did outside the screen.
#[derive(Default)]
struct Fake {
    copied: Vec<String>,
    dir: Option<PathBuf>,
    suspended: usize,
    resumed: usize,
}

impl Outside for Fake {
    fn copy(&mut self, text: &ifxtop::format::SafeText) -> std::io::Result<()> {
        self.copied.push(text.to_string());
        Ok(())
    }
    fn in_tmux(&self) -> bool {
        false
    }
    fn export_dir(&self) -> PathBuf {
        self.dir.clone().unwrap_or_else(std::env::temp_dir)
    }
    fn suspend(&mut self) -> std::io::Result<()> {
        self.suspended += 1;
        Ok(())
    }
    fn resume(&mut self) -> std::io::Result<()> {
        self.resumed += 1;
        Ok(())
    }
}

fn demo_setup(at: u64) -> Setup {
    Setup {
        instance: "ol_demo".into(),
        mode: Mode::Demo { seed: 1 },
        runner: Arc::new(DemoRunner::wall(1, 300).starting_at(Duration::from_secs(at))),
        settings: StoreSettings {
            wall_start: Some(ifxtop::demo::EPOCH + Duration::from_secs(at)),
            ..demo_settings()
        },
        interval: Duration::from_secs(1),
        server: Some("ol_demo".into()),
        extents: ExtentSource::default(),
        record: None,
        note: Some((ifxtop::demo::describe_phase, Duration::from_secs(at))),
        replay: None,
        log: None,
        ring: None,
        share: None,
        follow: None,
    }
}

use common::demo_settings;

/// Where a ring of the demo comes from, as its segments' headers say.
fn origin() -> ifxtop::collect::ring::Origin {
    ifxtop::collect::ring::Origin {
        server: Some("ol_demo".into()),
        host: Some(ifxtop::demo::HOST.into()),
        wall_start: ifxtop::demo::EPOCH,
        ports: vec![ifxtop::demo::LISTENER_PORT],
        base_page_kb: 2,
    }
}

fn key(c: char) -> Input {
    Input::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

fn code(c: KeyCode) -> Input {
    Input::Key(KeyEvent::new(c, KeyModifiers::NONE))
}

/// Runs the loop on `setup` at 80x24 with `script` (a pause, then an input) fed to it; returns
/// the exit code, every frame drawn, and the fake outside world.
async fn play(setup: Setup, script: Vec<(u64, Input)>) -> (u8, Vec<String>, Fake) {
    play_with(setup, script, Fake::default()).await
}

/// `play` with the outside world given.
async fn play_with(
    setup: Setup,
    script: Vec<(u64, Input)>,
    outside: Fake,
) -> (u8, Vec<String>, Fake) {
    let (code, frames, _, outside) = play_painted(setup, script, outside).await;
    (code, frames, outside)
}

/// `play_with`, also returning how many cells each frame painted.
async fn play_painted(
    setup: Setup,
    script: Vec<(u64, Input)>,
    mut outside: Fake,
) -> (u8, Vec<String>, Vec<usize>, Fake) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let painted = Arc::new(Mutex::new(Vec::new()));
    let backend = Frames {
        inner: TestBackend::new(80, 24),
        seen: seen.clone(),
        painted: painted.clone(),
        since_flush: 0,
    };
    let mut terminal = Terminal::new(backend).expect("terminal");
    let mut feed = Feed::start(&setup).expect("feed");
    let mut session =
        session_for(&setup, &Keymap::default(), Theme::plain(), (80, 24)).expect("session");
    let (tx, mut inputs) = mpsc::channel::<Input>(16);
    tokio::spawn(async move {
        for (wait_ms, input) in script {
            tokio::time::sleep(Duration::from_millis(wait_ms)).await;
            if tx.send(input).await.is_err() {
                return;
            }
        }
        // Keep the channel open: the loop ends by a key or a signal, not by the script's end.
        std::future::pending::<()>().await;
    });
    let code = drive(
        &mut terminal,
        &mut session,
        &mut feed,
        &mut inputs,
        &mut outside,
    )
    .await
    .expect("the loop runs");
    // As the program does on its way out: a recording is finished and flushed.
    if let Some(Err(e)) = feed.finish().await {
        panic!("recording: {e}");
    }
    let frames = seen.lock().expect("frames").clone();
    let painted = painted.lock().expect("painted").clone();
    (code, frames, painted, outside)
}

fn last_with<'a>(frames: &'a [String], needle: &str) -> Option<&'a String> {
    frames.iter().rev().find(|f| f.contains(needle))
}

#[tokio::test(start_paused = true)]
async fn keys_switch_panes_and_q_quits() {
    let (code, frames, _) = play(
        demo_setup(278),
        vec![(5_000, key('4')), (2_000, key('3')), (2_000, key('q'))],
    )
    .await;
    assert_eq!(code, 0);
    // Data arrived and was drawn before any key: the sessions, the lock chain's waiting.
    let sessions =
        last_with(&frames, "HDR+X on customer (stores)").expect("the sessions were drawn");
    assert!(sessions.contains("1 Sessions"), "{sessions}");
    // 4: the Sockets pane, 3: the Buffers pane, each drawn at once.
    let sockets = last_with(&frames, "REMOTE").expect("the sockets pane was drawn");
    assert!(sockets.contains("SEND-Q"), "{sockets}");
    let last = frames.last().expect("frames");
    assert!(
        last.contains("buffer waits · window"),
        "the buffers pane last:\n{last}"
    );
}

/// `7` opens the I/O & HA pane: in the demo's slow-device phase, after the chunk rates and the
/// devices had their time (the rates need two `onstat -D` 5 s apart), the slow chunk is first
/// with its verdict, the header names it, and the RSS secondary is listed.
#[tokio::test(start_paused = true)]
async fn seven_opens_the_io_pane_with_the_slow_chunk_first() {
    let (code, frames, _) =
        play(demo_setup(600), vec![(12_000, key('7')), (2_000, key('q'))]).await;
    assert_eq!(code, 0);
    let last = frames.last().expect("frames");
    assert!(last.contains("7 I/O & HA"), "{last}");
    assert!(
        last.contains("slow disk"),
        "the header's vitals line:\n{last}"
    );
    let lines: Vec<&str> = last.lines().collect();
    let first_row = lines
        .iter()
        .position(|l| l.starts_with(" CHK DBSPACE"))
        .and_then(|i| lines.get(i + 1))
        .expect("the chunk table");
    assert!(first_row.contains("datadbs2"), "{last}");
    assert!(last.contains("VERDICT   the device is slow"), "{last}");
    assert!(last.contains("ol_dr1      RSS"), "{last}");
}

#[tokio::test(start_paused = true)]
async fn signals_end_the_loop_with_their_exit_codes() {
    for (sig, want) in [
        (Signal::Terminate, 143),
        (Signal::Hangup, 129),
        (Signal::Interrupt, 130),
        (Signal::Quit, 131),
    ] {
        let (code, frames, _) = play(demo_setup(0), vec![(3_000, Input::Signal(sig))]).await;
        assert_eq!(code, want, "{sig:?}");
        assert!(!frames.is_empty());
    }
}

/// Ctrl-L, Ctrl-Z (then continued), SIGTSTP and SIGCONT each paint the whole screen again on
/// the next frame, although the terminal cannot say where its cursor is (`Terminal::clear`
/// asks, fails and clears nothing); the stops and the continue go through the outside world.
#[tokio::test(start_paused = true)]
async fn redraw_suspend_and_continue_repaint_every_cell() {
    let ctrl = |c: char| Input::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
    let (code, frames, painted, outside) = play_painted(
        demo_setup(278),
        vec![
            (5_000, ctrl('l')),
            (2_000, ctrl('z')),
            (2_000, Input::Signal(Signal::Stop)),
            (2_000, Input::Signal(Signal::Continue)),
            (2_000, key('q')),
        ],
        Fake::default(),
    )
    .await;
    assert_eq!(code, 0);
    assert_eq!((outside.suspended, outside.resumed), (2, 1));
    // Every non-blank cell of a full frame: a repaint paints at least those; an ordinary frame
    // (the clock moved, a few numbers changed) far fewer.
    let full = |f: &str| f.chars().filter(|c| !c.is_whitespace()).count();
    let repaints = frames
        .iter()
        .zip(&painted)
        .filter(|(f, n)| **n >= full(f) && full(f) > 200)
        .count();
    // The first frame, then one for each of Ctrl-L, Ctrl-Z, SIGTSTP and SIGCONT.
    assert!(repaints >= 5, "{repaints} full repaints: {painted:?}");
    // An ordinary frame (the second's data and clock, drawn together) paints what changed:
    // under half of what a repaint paints.
    let ordinary = frames
        .iter()
        .zip(&painted)
        .filter(|(f, n)| 2 * **n < full(f))
        .count();
    assert!(ordinary > 5, "every frame repainted: {painted:?}");
}

#[tokio::test(start_paused = true)]
async fn the_screen_moves_with_the_data_without_keys() {
    let (_, frames, _) = play(demo_setup(278), vec![(10_000, key('q'))]).await;
    // The demo's clock line (the tabs' row, under the four header lines) moves on each second
    // although nothing was pressed; frames are not drawn on a timer faster than that (the age
    // clock ticks once a second, data settles).
    let clocks: Vec<&str> = frames
        .iter()
        .filter_map(|f| f.lines().nth(4))
        .filter_map(|l| l.split("t=").nth(1))
        .filter_map(|t| t.split('s').next())
        .collect();
    let mut distinct = clocks.clone();
    distinct.dedup();
    assert!(distinct.len() >= 8, "{distinct:?}");
    assert!(frames.len() <= 4 * 11, "{} frames in 10 s", frames.len());
}

#[tokio::test(start_paused = true)]
async fn drilling_into_a_session_collects_its_sql() {
    let (_, frames, _) = play(
        demo_setup(278),
        vec![
            (5_000, key('2')),
            (500, code(KeyCode::Enter)),
            (7_000, key('q')),
        ],
    )
    .await;
    let last = frames.last().expect("frames");
    // The top waiter of the lock chain, its screen, and its SQL from onstat -g sql <sid>: only
    // collected once the session was drilled into.
    assert!(last.contains("VERDICT"), "{last}");
    assert!(last.contains("SQL       [stores]"), "{last}");
    // And the plan of the statement it is in (onstat -g pqs <sid>, asked for drilled sessions).
    assert!(last.contains("PLAN      scan  next"), "{last}");
}

#[tokio::test(start_paused = true)]
async fn y_copies_the_selected_row_through_the_outside() {
    let (_, frames, outside) =
        play(demo_setup(278), vec![(5_000, key('y')), (1_000, key('q'))]).await;
    assert_eq!(outside.copied.len(), 1);
    // A provenance line first (when, which host, which server), then the row itself.
    let mut lines = outside.copied[0].lines();
    let first = lines.next().unwrap_or_default();
    assert!(
        first.starts_with("ifxtop 2026-11-22T13:3")
            && first.ends_with("host db01-demo server ol_demo"),
        "{}",
        outside.copied[0]
    );
    assert!(
        lines.next().is_some_and(|l| l.starts_with("SID: ")),
        "{}",
        outside.copied[0]
    );
    assert!(
        last_with(&frames, "copied").is_some_and(|f| f.contains("via OSC 52")),
        "the status line says what was copied"
    );
}

#[tokio::test(start_paused = true)]
async fn e_exports_the_screen_and_the_snapshot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let outside = Fake {
        dir: Some(dir.path().to_path_buf()),
        ..Fake::default()
    };
    play_with(
        demo_setup(278),
        vec![(5_000, key('2')), (500, key('e')), (1_000, key('q'))],
        outside,
    )
    .await;
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names[0].ends_with(".json") && names[1].ends_with(".txt"),
        "{names:?}"
    );
    // Named after the moment shown (the demo's clock: 278 s + 5.5 s after 13:30:00 UTC), not
    // after the day the test runs.
    assert!(
        names.iter().all(|n| n.starts_with("ifxtop-20261122T13344")),
        "{names:?}"
    );
    let text = std::fs::read_to_string(dir.path().join(&names[1])).expect("text");
    assert!(text.contains("HDR+X on customer"), "{text}");
    // The text names when, which host and which server it shows.
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("ifxtop 2026-11-22T13:34") && first.contains("host db01-demo"),
        "{first}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join(&names[0])).expect("json"))
            .expect("valid JSON");
    assert!(json["waiters"].as_array().is_some_and(|w| !w.is_empty()));
}

/// While recording, the blockers and long waiters get their `onstat -g ses/sql` collected too
/// (nobody drilled into them, yet a replay can show their SQL); bounded: a few sessions, on
/// the joins' period, not on every change of the set.
#[tokio::test(start_paused = true)]
async fn a_recording_holds_the_sql_of_blockers_nobody_drilled_into() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("rec.jsonl");
    let mut setup = demo_setup(278);
    setup.record = Some((path.clone(), 50));
    let (code, _, _) = play(setup, vec![(16_000, key('q'))]).await;
    assert_eq!(code, 0);
    let rec = ifxtop::collect::record::read_recording(&path).expect("the recording reads");
    let focus: Vec<String> = rec
        .sources()
        .filter(|s| {
            matches!(
                s,
                ifxtop::source::Source::OnstatGSql(_) | ifxtop::source::Source::OnstatGSes(_)
            )
        })
        .map(|s| s.label())
        .collect();
    // The lock chain's head blocker, 812, holds up three sessions: its SQL is on record.
    assert!(focus.iter().any(|s| s == "onstat -g sql 812"), "{focus:?}");
    // Not its plan: `onstat -g pqs` is asked only while a session's screen is open.
    assert!(
        !rec.sources()
            .any(|s| matches!(s, ifxtop::source::Source::OnstatGPqs(_))),
        "a plan recorded for a session nobody opened"
    );
    // The background screens (`onstat -g ses`) for a few sessions; the statements for every
    // active session (database time's top statements), each in turn.
    let mut screens: Vec<&str> = focus
        .iter()
        .filter(|s| s.starts_with("onstat -g ses "))
        .filter_map(|s| s.rsplit(' ').next())
        .collect();
    screens.sort_unstable();
    screens.dedup();
    assert!(
        screens.len() <= ifxtop::collect::Focus::MAX_BACKGROUND,
        "at most a few sessions' screens: {screens:?}"
    );
    let mut sids: Vec<&str> = focus.iter().filter_map(|s| s.rsplit(' ').next()).collect();
    sids.sort_unstable();
    sids.dedup();
    // Each session at most once per 5 s period over the 16 s played (plus the first round).
    for sid in &sids {
        let runs = focus
            .iter()
            .filter(|s| **s == format!("onstat -g sql {sid}"))
            .count();
        assert!(runs <= 4, "onstat -g sql {sid} ran {runs} times: {focus:?}");
    }
}

/// A zstd recording keeps the database time the screen sampled (its track): every second the
/// screen played is there, read to the file's end, and it adds up to what parsing the recorded
/// outputs again gives.
#[tokio::test(start_paused = true)]
async fn a_zstd_recording_keeps_the_screens_database_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("rec.jsonl.zst");
    let mut setup = demo_setup(278);
    setup.record = Some((path.clone(), 50));
    let (code, _, _) = play(setup, vec![(25_000, key('q'))]).await;
    assert_eq!(code, 0);
    let (first, last, complete) = ifxtop::instance::walk::track_span(&path)
        .expect("read")
        .expect("no damaged frame")
        .expect("a track");
    assert!(
        complete && last - first >= 20.0,
        "{first} {last} {complete}"
    );
    let mut kept = ifxtop::model::activity::Activity::new();
    ifxtop::instance::walk::track_activity(&path, first, last, &mut kept)
        .expect("read")
        .expect("a whole track");
    let rec = std::sync::Arc::new(
        ifxtop::collect::record::read_replayable_for_walk(&path).expect("the recording reads"),
    );
    let settings =
        ifxtop::instance::walk::replay_settings(&rec, ifxtop::store::StoreSettings::default());
    let mut parsed = ifxtop::model::activity::Activity::new();
    ifxtop::instance::walk::replay_activity(
        rec,
        settings,
        Duration::ZERO,
        Duration::from_secs_f64(last),
        &mut parsed,
    );
    let q = ifxtop::model::activity::Query::every_key(first, last, 10);
    let (kept, parsed) = (kept.report(&q), parsed.report(&q));
    assert!(kept.samples >= 20 && kept.db_time_s > 0.0, "{kept:?}");
    assert_eq!(
        (kept.samples, kept.db_time_s, &kept.by_class),
        (parsed.samples, parsed.db_time_s, &parsed.by_class)
    );
}

/// Enter on a Buffers row opens the hot spot: the all-NULL index leaf reads "one index page, N
/// waiters", its holder and waiters are listed, and Enter on one opens that session.
#[tokio::test(start_paused = true)]
async fn a_hot_spot_opens_on_enter_and_its_sessions_drill_in() {
    let (_, frames, _) = play(
        demo_setup(95),
        vec![
            (8_000, key('3')),
            (500, code(KeyCode::Enter)),
            (1_000, code(KeyCode::Down)),
            (500, code(KeyCode::Enter)),
            (1_000, key('q')),
        ],
    )
    .await;
    let spot = last_with(&frames, "SESSIONS").expect("the hot spot screen was drawn");
    assert!(
        spot.contains("ix_orders_ship_date  index") && spot.contains("one index page,"),
        "{spot}"
    );
    // The holder first, then the waiters, each on a line of its own.
    let people: Vec<&str> = spot
        .lines()
        .skip_while(|l| !l.starts_with("SESSIONS"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect();
    assert!(people.len() >= 3, "{spot}");
    assert!(people[0].ends_with("holds it"), "{spot}");
    assert!(
        people[1..].iter().all(|l| l.trim_end().ends_with('s')),
        "{spot}"
    );
    // Down then Enter: the first waiter's screen, waiting for a buffer of the index.
    let sid = people[1].split_whitespace().next().expect("a sid");
    let last = frames.last().expect("frames");
    assert!(
        last.contains(&format!("session {sid} ")) && last.contains("waiting for a buffer of"),
        "{last}"
    );
}

/// The Sessions pane tells the Send-Q story too: a client wait with data queued says how much.
#[tokio::test(start_paused = true)]
async fn the_sessions_pane_names_what_is_queued_to_a_slow_client() {
    let (_, frames, _) = play(demo_setup(140), vec![(8_000, key('q'))]).await;
    let last = last_with(&frames, " BLOCKS ").expect("the sessions were drawn");
    let row = last
        .lines()
        .find(|l| l.trim_start().starts_with("871 "))
        .unwrap_or_else(|| panic!("871 is listed:\n{last}"));
    assert!(
        row.contains("condition") && row.contains("netnorm, ") && row.contains("KB queued"),
        "{row}"
    );
}

/// A checkpoint stall: the waits say who holds the checkpoint up (the session inside a critical
/// section), in the Sessions pane, the Waiters pane and the tree, whose head it is.
#[tokio::test(start_paused = true)]
async fn a_checkpoint_stall_names_the_session_holding_it_up() {
    let (_, frames, _) = play(
        demo_setup(218),
        vec![(7_000, key('2')), (1_000, key('t')), (1_000, key('q'))],
    )
    .await;
    let sessions = last_with(&frames, " BLOCKS ").expect("the sessions were drawn");
    assert!(sessions.contains("crit.sect."), "{sessions}");
    assert!(
        sessions.contains("checkpoint held up by sid 882"),
        "{sessions}"
    );
    let waiters = last_with(&frames, "IN WAIT").expect("the waiters were drawn");
    let c = waiters
        .lines()
        .find(|l| l.contains("held up by sid"))
        .unwrap_or_else(|| panic!("a checkpoint waiter:\n{waiters}"));
    // WAIT checkpoint, held up by 882, which is also the BLOCKER column.
    assert!(
        c.contains(" checkpoint ") && c.contains("held up by sid 882") && c.contains(" 882 "),
        "{c}"
    );
    let tree = frames.last().expect("frames");
    assert!(
        tree.contains("HEAD sid 882") && tree.contains("holds up the checkpoint"),
        "{tree}"
    );
}

/// The demo's `onstat -u` (`sessions` sessions) at seconds 0 to `secs` - 1, each output passed
/// through `edit`, written as a recording named `name` in a new directory: the directory, the
/// recording's path and what it holds.
pub(crate) fn demo_u_recording(
    sessions: usize,
    secs: u64,
    name: &str,
    edit: impl Fn(String) -> String,
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    Vec<ifxtop::collect::sample::RawSample>,
) {
    use ifxtop::source::Source;
    let demo = ifxtop::demo::DemoInstance::new(1).with_sessions(sessions);
    let req = Source::OnstatU.request();
    let samples: Vec<ifxtop::collect::sample::RawSample> = (0..secs)
        .map(|t| {
            let out = demo
                .respond(&req, Duration::from_secs(t))
                .expect("demo output");
            ifxtop::collect::sample::RawSample {
                t: t as f64,
                source: Source::OnstatU.label(),
                argv: req.argv(),
                exit: out.exit,
                stdout: edit(out.stdout),
                stderr: out.stderr,
            }
        })
        .collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(name);
    ifxtop::commands::snapshot::write_recording(
        &path,
        Some("ol_demo"),
        &StoreSettings::default(),
        &samples,
    )
    .expect("recording written");
    (dir, path, samples)
}

/// A runner whose commands never finish: a host that hangs (ssh stuck, NFS, a wedged onstat).
pub(crate) struct Hanging;

impl ifxtop::source::CommandRunner for Hanging {
    // A live host's runner: its commands would be processes.
    fn runs_processes(&self) -> bool {
        true
    }

    fn run<'a>(
        &'a self,
        _request: &'a ifxtop::source::Request,
        _timeout: Duration,
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<
                    Output = Result<ifxtop::source::Output, ifxtop::error::SourceError>,
                > + Send
                + 'a,
        >,
    > {
        Box::pin(std::future::pending())
    }
}

/// Runs the fleet loop over `setups` at 100x24 with `script` fed to it; returns the exit code,
/// every frame drawn, how many cells each painted, and the fake outside world.
async fn play_fleet(
    setups: &[Setup],
    script: Vec<(u64, Input)>,
    mut outside: Fake,
) -> (u8, Vec<String>, Vec<usize>, Fake) {
    use ifxtop::tui::fleet::FleetUi;
    use ifxtop::tui::run::{drive_fleet, Member};
    let seen = Arc::new(Mutex::new(Vec::new()));
    let painted = Arc::new(Mutex::new(Vec::new()));
    let backend = Frames {
        inner: TestBackend::new(100, 24),
        seen: seen.clone(),
        painted: painted.clone(),
        since_flush: 0,
    };
    let mut terminal = Terminal::new(backend).expect("terminal");
    let mut feeds: Vec<Feed> = setups
        .iter()
        .map(|s| Feed::start(s).expect("feed"))
        .collect();
    let mut sessions: Vec<_> = setups
        .iter()
        .map(|s| session_for(s, &Keymap::default(), Theme::plain(), (100, 24)).expect("session"))
        .collect();
    let mut members: Vec<Member> = sessions
        .iter_mut()
        .zip(feeds.iter_mut())
        .zip(setups)
        .map(|((session, feed), s)| Member::new(session, feed, s.instance.clone()))
        .collect();
    let (tx, mut inputs) = mpsc::channel::<Input>(16);
    tokio::spawn(async move {
        for (wait_ms, input) in script {
            tokio::time::sleep(Duration::from_millis(wait_ms)).await;
            if tx.send(input).await.is_err() {
                return;
            }
        }
        std::future::pending::<()>().await;
    });
    let code = drive_fleet(
        &mut terminal,
        &mut members,
        Some(FleetUi::default()),
        &mut inputs,
        &mut outside,
    )
    .await
    .expect("the loop runs");
    let frames = seen.lock().expect("frames").clone();
    let painted = painted.lock().expect("painted").clone();
    (code, frames, painted, outside)
}

/// Ctrl-L and Ctrl-Z on the fleet screen paint the whole screen again, as on an instance's own
/// screens: the fleet's keys take the same way to the terminal (they called `Terminal::clear`,
/// which asks the terminal where its cursor is, fails and clears nothing).
#[tokio::test(start_paused = true)]
async fn redraw_and_suspend_on_the_fleet_screen_repaint_every_cell() {
    let ctrl = |c: char| Input::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
    let mut setups = vec![demo_setup(0), demo_setup(300)];
    setups[1].instance = "ol_demo2".into();
    let (code, frames, painted, outside) = play_fleet(
        &setups,
        vec![(4_000, ctrl('l')), (3_000, ctrl('z')), (3_000, key('q'))],
        Fake::default(),
    )
    .await;
    assert_eq!(code, 0);
    assert_eq!(outside.suspended, 1);
    assert!(frames.iter().all(|f| f.contains("fleet  2 instances")));
    let full = |f: &str| f.chars().filter(|c| !c.is_whitespace()).count();
    let repaints = frames
        .iter()
        .zip(&painted)
        .filter(|(f, n)| **n >= full(f) && full(f) > 100)
        .count();
    // The first frame, then one for each of Ctrl-L and Ctrl-Z.
    assert!(repaints >= 3, "{repaints} full repaints: {painted:?}");
    let ordinary = painted.iter().filter(|n| **n < 100).count();
    assert!(ordinary > 3, "every frame repainted: {painted:?}");
}

/// The fleet: two demo instances and one that hangs. The fleet screen lists all three, the demo
/// lines stay current while the third times out, Enter opens an instance, Esc comes back, q
/// quits.
/// A fleet line without the marker its instance name carries when it needs a look (`!` a
/// problem, `⚠`/`✖` a finding).
fn unmarked(line: &str) -> &str {
    line.trim_start_matches(['!', '⚠', '✖', 'X', ' '])
}

#[tokio::test(start_paused = true)]
async fn fleet_lists_every_instance_and_one_that_hangs_stalls_nothing() {
    let mut setups = vec![demo_setup(0), demo_setup(300)];
    setups[0].instance = "ol_demo".into();
    setups[1].instance = "ol_demo2".into();
    let mut hung = demo_setup(0);
    hung.instance = "ol_hung@db09".into();
    hung.mode = Mode::Live;
    hung.runner = Arc::new(Hanging);
    hung.note = None;
    hung.server = Some("ol_hung".into());
    setups.push(hung);
    let script = vec![
        (15_000, code(KeyCode::Down)),
        (100, code(KeyCode::Enter)),
        (3_000, code(KeyCode::Esc)),
        (2_000, key('q')),
    ];
    let (code, frames, _, _) = play_fleet(&setups, script, Fake::default()).await;
    assert_eq!(code, 0);
    // Before any key: the fleet, the hanging instance first waiting, then timed out, while the
    // demo instances' data stays seconds old.
    let first = frames.first().expect("a first frame");
    assert!(first.contains("fleet  3 instances"), "{first}");
    let waiting = last_with(&frames, "waiting for the first onstat -u").expect("waiting");
    assert!(waiting.contains("ol_hung@db09"), "{waiting}");
    let timed_out = frames
        .iter()
        .find(|f| {
            f.lines()
                .any(|l| unmarked(l).starts_with("ol_hung@db09") && l.contains("onstat -u: timed"))
        })
        .unwrap_or_else(|| {
            panic!(
                "the hanging instance's failure is said; last:\n{}",
                frames[frames.len() - 6]
            )
        });
    for line in timed_out
        .lines()
        .filter(|l| unmarked(l).starts_with("ol_demo") && l.contains("On-Line"))
    {
        // AGE: a demo line's data is at most a couple of seconds old.
        let words: Vec<&str> = line.split_whitespace().collect();
        assert!(
            ["0s", "1s", "2s"].iter().any(|age| words.contains(age)),
            "{line}\n{timed_out}"
        );
    }
    // The demo lines moved on while the third hung: the second is in its lock chain.
    assert!(timed_out.contains("L3"), "{timed_out}");
    // Enter on the second line opened ol_demo2; Esc came back to the fleet.
    let opened = last_with(&frames, "demo ol_demo2").expect("ol_demo2 opened");
    assert!(opened.contains("1 Sessions"), "{opened}");
    assert!(opened.contains("Esc fleet"), "{opened}");
    let last = frames.last().expect("frames");
    assert!(last.contains("fleet  3 instances"), "{last}");
}

/// Space then Enter: drilling into a frozen moment shows that moment's session, whole (its
/// verdict, its blockers), not an empty screen that contradicts itself.
#[tokio::test(start_paused = true)]
async fn drilling_into_a_frozen_moment_shows_that_moment() {
    let (_, frames, _) = play(
        demo_setup(278),
        vec![
            (5_000, key('2')),
            (500, key(' ')),
            (3_000, code(KeyCode::Enter)),
            (3_000, key('q')),
        ],
    )
    .await;
    let s = last_with(&frames, "FROZEN").expect("frozen");
    let drilled = frames
        .iter()
        .rev()
        .find(|f| f.contains("FROZEN") && f.contains(" session 81"))
        .unwrap_or_else(|| panic!("no frozen session screen; last:\n{s}"));
    assert!(drilled.contains("VERDICT"), "{drilled}");
    assert!(drilled.contains("blocked by sid 812"), "{drilled}");
    assert!(!drilled.contains("not waiting"), "{drilled}");
}

/// The demo, with the server off-line (every onstat and oncheck answers as on a stopped
/// instance) while `offline` is set, and only `oncheck` failing while `oncheck_fails` is set.
struct Switchable {
    demo: DemoRunner,
    offline: Arc<std::sync::atomic::AtomicBool>,
    oncheck_fails: Arc<std::sync::atomic::AtomicBool>,
}

type Run<'a> = std::pin::Pin<
    Box<
        dyn std::future::Future<Output = Result<ifxtop::source::Output, ifxtop::error::SourceError>>
            + Send
            + 'a,
    >,
>;

impl Switchable {
    fn down(&self, request: &ifxtop::source::Request) -> Option<ifxtop::source::Output> {
        use std::sync::atomic::Ordering;
        // A command, or one `onstat -i` fed the tick's options.
        let argv = match request {
            ifxtop::source::Request::Command(argv)
            | ifxtop::source::Request::CommandInput { argv, .. } => argv,
            _ => return None,
        };
        let prog = argv.first().map(String::as_str).unwrap_or("");
        let off = self.offline.load(Ordering::SeqCst) && (prog == "onstat" || prog == "oncheck");
        let fails = self.oncheck_fails.load(Ordering::SeqCst) && prog == "oncheck";
        (off || fails).then(|| ifxtop::source::Output {
            exit: Some(255),
            stdout: "\nshared memory not initialized for INFORMIXSERVER 'ol_demo'\n".into(),
            stderr: String::new(),
        })
    }
}

impl ifxtop::source::CommandRunner for Switchable {
    fn run<'a>(&'a self, request: &'a ifxtop::source::Request, timeout: Duration) -> Run<'a> {
        match self.down(request) {
            Some(out) => Box::pin(async move { Ok(out) }),
            None => self.demo.run(request, timeout),
        }
    }
    fn run_extent_report<'a>(
        &'a self,
        request: &'a ifxtop::source::Request,
        timeout: Duration,
    ) -> Run<'a> {
        match self.down(request) {
            Some(out) => Box::pin(async move { Ok(out) }),
            None => self.demo.run_extent_report(request, timeout),
        }
    }
    fn clock(&self) -> Option<Duration> {
        self.demo.clock()
    }
}

fn switchable_setup(
    offline: bool,
) -> (
    Setup,
    Arc<std::sync::atomic::AtomicBool>,
    Arc<std::sync::atomic::AtomicBool>,
) {
    let off = Arc::new(std::sync::atomic::AtomicBool::new(offline));
    let fails = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut setup = demo_setup(278);
    setup.runner = Arc::new(Switchable {
        demo: DemoRunner::wall(1, 300).starting_at(Duration::from_secs(278)),
        offline: off.clone(),
        oncheck_fails: fails.clone(),
    });
    (setup, off, fails)
}

/// The map failed while the server was off-line; when it comes back on-line the map is built
/// again without R (it stayed "no extent map" until R).
#[tokio::test(start_paused = true)]
async fn the_extent_map_is_rebuilt_when_the_server_comes_back() {
    let (setup, off, _) = switchable_setup(true);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(6)).await;
        off.store(false, std::sync::atomic::Ordering::SeqCst);
    });
    let (_, frames, _) = play(setup, vec![(3_000, key('3')), (12_000, key('q'))]).await;
    assert!(
        frames.iter().any(|f| f.contains("no extent map")),
        "the map failed while off-line"
    );
    let last = frames.last().expect("frames");
    assert!(last.contains("extents from oncheck -pe"), "{last}");
}

/// A rebuild that fails while an older map is in use says so, instead of "no extent map".
#[tokio::test(start_paused = true)]
async fn a_failed_rebuild_names_the_older_map_in_use() {
    let (setup, _, fails) = switchable_setup(false);
    let flip = fails.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        flip.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let (_, frames, _) = play(
        setup,
        vec![(3_000, key('3')), (4_000, key('R')), (4_000, key('q'))],
    )
    .await;
    let last = frames.last().expect("frames");
    assert!(
        last.contains("older map of") && last.contains("rebuild failed"),
        "{last}"
    );
    assert!(!last.contains("no extent map"), "{last}");
}

/// The demo, with a database user named to attack the DBA's terminal: `\e[201~` ends a
/// bracketed paste, `\e]0;...\a` sets the window title.
struct Hostile(DemoRunner);

const HOSTILE_USER: &str = "x\u{1b}[201~\u{1b}]0;pwn\u{7}";

impl ifxtop::source::CommandRunner for Hostile {
    fn run<'a>(&'a self, request: &'a ifxtop::source::Request, timeout: Duration) -> Run<'a> {
        Box::pin(async move {
            let mut out = self.0.run(request, timeout).await?;
            out.stdout = out.stdout.replace("appuser", HOSTILE_USER);
            Ok(out)
        })
    }
    fn clock(&self) -> Option<Duration> {
        self.0.clock()
    }
}

/// `y` copied a user name's escapes into the OSC 52 payload as they were; every byte that
/// leaves for the clipboard is stripped of control characters, as the screen is.
#[tokio::test(start_paused = true)]
async fn y_copies_no_escape_a_database_user_wrote() {
    let mut setup = demo_setup(278);
    setup.runner = Arc::new(Hostile(
        DemoRunner::wall(1, 300).starting_at(Duration::from_secs(278)),
    ));
    let (_, _, outside) = play(setup, vec![(5_000, key('y')), (1_000, key('q'))]).await;
    assert_eq!(outside.copied.len(), 1);
    let copied = &outside.copied[0];
    assert!(copied.contains("x?[201~?]0;pwn?"), "{copied}");
    assert!(
        !copied
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{copied:?}"
    );
}

/// A seek through a long recording is applied a slice at a time: the header says `seeking`
/// while the panes catch up, and a key pressed meanwhile (`q`) is seen before the seek ends. It
/// was one blocking call: seconds of a frozen screen, deaf to `q`, for a long recording of a big
/// instance.
#[tokio::test(start_paused = true)]
async fn a_long_replay_seek_goes_in_slices_and_q_is_seen_before_it_ends() {
    // 2,000-session `onstat -u` outputs, 100 of them: each takes milliseconds to read and parse
    // (a test build), several times the 50 ms slice in all.
    let (_dir, path, samples) = demo_u_recording(2000, 100, "long.jsonl.zst", |o| o);
    let rec = ifxtop::collect::record::read_recording(&path).expect("readable");
    assert_eq!(rec.len(), samples.len());
    let mut setup = demo_setup(0);
    setup.mode = Mode::Replay {
        file: path.display().to_string(),
    };
    setup.runner = Arc::new(ifxtop::source::local::LocalRunner::new(None));
    setup.note = None;
    setup.replay = Some(Arc::new(rec));
    let code = |c: KeyCode| Input::Key(KeyEvent::new(c, KeyModifiers::NONE));
    // To the end of the recording, then `q` at once.
    let script = vec![
        (500, key(':')),
        (0, key('1')),
        (0, key('0')),
        (0, key('0')),
        (0, key('%')),
        (0, code(KeyCode::Enter)),
        (0, key('q')),
    ];
    let (code, frames, _) = play(setup, script).await;
    assert_eq!(code, 0);
    let seeking = last_with(&frames, "seeking").expect("the header said it was seeking");
    assert!(seeking.contains("REPLAY 01:39/01:39"), "{seeking}");
    // `q` ended the loop while the seek was part way: the last frame still says so.
    let last = frames.last().expect("frames");
    assert!(last.contains("seeking"), "{last}");
    // What it shows is the moment the seek has reached, with its own ages: the `-u` sample
    // just applied is 0 s old (measured from the seek's target it read as over a minute).
    assert!(last.contains(" -u 0s "), "{last}");
}

/// The header's clock (`13:35:47`, the wall clock of the moment shown) on a frame's first line.
fn header_clock(frame: &str) -> Option<String> {
    let first = frame.lines().next()?;
    first.split_whitespace().find_map(|w| {
        let b = w.as_bytes();
        (b.len() == 8
            && b[2] == b':'
            && b[5] == b':'
            && w.replace(':', "").bytes().all(|c| c.is_ascii_digit()))
        .then(|| w.to_string())
    })
}

#[tokio::test(start_paused = true)]
async fn a_calm_screen_is_drawn_once_a_second_and_the_clock_ticks_each_second() {
    // The demo's calm from 345 s to 375 s: 20 s without a key.
    let (_, frames, _) = play(demo_setup(346), vec![(20_000, key('q'))]).await;
    let clocks: Vec<u32> = frames
        .iter()
        .filter_map(|f| header_clock(f))
        .map(|c| {
            c.split(':')
                .map(|n| n.parse::<u32>().expect("a clock"))
                .fold(0, |s, n| s * 60 + n)
        })
        .collect();
    assert_eq!(clocks.len(), frames.len(), "every frame has the clock");
    // The first seconds draw what arrives as it arrives (the first answers, the extent map).
    let steady: Vec<u32> = clocks
        .iter()
        .copied()
        .skip_while(|c| *c < clocks[0] + 2)
        .collect();
    assert!(steady.len() >= 17, "{clocks:?}");
    // Then each second is drawn once, the data and the clock together: not a frame for each,
    // and no second left out.
    assert!(
        steady.windows(2).all(|w| w[1] == w[0] + 1),
        "{} frames in 20 s: {clocks:?}",
        frames.len()
    );
}

#[tokio::test(start_paused = true)]
async fn with_no_data_the_clock_still_draws_each_second() {
    // A host that hangs: nothing arrives but the timeouts, and the clock goes on.
    let mut hung = demo_setup(346);
    hung.mode = Mode::Live;
    hung.runner = Arc::new(Hanging);
    hung.note = None;
    let (_, frames, _) = play(hung, vec![(8_000, key('q'))]).await;
    let mut clocks: Vec<String> = frames.iter().filter_map(|f| header_clock(f)).collect();
    clocks.dedup();
    assert!(clocks.len() >= 8, "{clocks:?}");
}
