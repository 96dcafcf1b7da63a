//! `b`: a bookmark of the moment on screen, with a note typed at the bottom line, into the
//! flight recorder's ring (kept live, or replayed); a replay of a ring shows its bookmarks on
//! the timeline, and the note of the one the replay is at.

use super::{code, demo_setup, key, play, Mode};
use crossterm::event::KeyCode;
use ifxtop::collect::ring::{self, RingConfig, RingIndex, RingWriter};
use ifxtop::demo::DemoInstance;
use ifxtop::tui::run::Input;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

fn typed(wait: u64, text: &str) -> Vec<(u64, Input)> {
    let mut out = vec![(wait, key('b'))];
    out.extend(text.chars().map(|c| (0, key(c))));
    out
}

fn ring_config(dir: &Path) -> RingConfig {
    RingConfig {
        // The machine's disk may be fuller than a server's: the stop is tested on its own.
        min_free_bytes: Some(0),
        ..RingConfig::new(dir.to_path_buf())
    }
}

/// Seconds from the demo's clock's start of a mark.
fn mark_s(m: &ring::MarkLine) -> f64 {
    let at = time::OffsetDateTime::parse(&m.at, &time::format_description::well_known::Rfc3339)
        .expect("RFC 3339");
    (at - ifxtop::demo::EPOCH).as_seconds_f64()
}

/// Live with a ring: `b`, a note, Enter marks the second on screen into the ring's marks with
/// the note, and says so; Esc leaves no mark.
#[tokio::test(start_paused = true)]
async fn b_marks_the_moment_on_screen_into_the_ring() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ring_dir = dir.path().join("ring");
    let mut setup = demo_setup(278);
    setup.ring = Some(ring_config(&ring_dir));
    let mut script = typed(3_000, "sid 812 holds the row");
    script.push((0, code(KeyCode::Enter)));
    script.extend(typed(2_000, "not this"));
    script.push((0, code(KeyCode::Esc)));
    script.push((1_000, key('q')));
    let (exit, frames, _) = play(setup, script).await;
    assert_eq!(exit, 0);
    let prompt = frames
        .iter()
        .find(|f| f.contains("mark: sid 812 holds the row"))
        .expect("the prompt with the note typed");
    assert!(prompt.contains("Esc cancels"), "{prompt}");
    let said = frames
        .iter()
        .find(|f| f.contains("marked 13:34:"))
        .expect("the status line says it marked");
    assert!(said.contains("into the ring"), "{said}");
    let marks = ring::marks(&ring_dir);
    assert_eq!(marks.len(), 1, "{marks:?}");
    assert_eq!(marks[0].note, "sid 812 holds the row");
    // The second on screen when `b` was pressed: 3 s after the start at 278 s.
    let at = mark_s(&marks[0]);
    assert!((280.0..=282.0).contains(&at), "{at}");
    let listed = ifxtop::commands::incidents::list(&ring_dir);
    assert!(
        listed
            .iter()
            .any(|l| l.what == "mark" && l.culprit == "sid 812 holds the row"),
        "{listed:?}"
    );
}

/// Without a ring (and nobody watching), `b` says where a mark could go instead of losing it,
/// whole on an 80-column screen.
#[tokio::test(start_paused = true)]
async fn b_without_a_ring_says_why_nothing_was_marked() {
    let mut script = typed(2_000, "x");
    script.push((0, code(KeyCode::Enter)));
    script.push((1_000, key('q')));
    let (_, frames, _) = play(demo_setup(278), script).await;
    assert!(
        frames.iter().any(|f| f
            .contains("no ring to mark into: start ifxtop with `--ring DIR` to keep one")),
        "{}",
        frames.last().expect("frames")
    );
}

/// A replay of a ring: its bookmarks are `◆` on the timeline, and at one of them the timeline
/// shows its note; `b` there marks the replay's moment into the ring replayed.
#[tokio::test(start_paused = true)]
async fn a_rings_replay_shows_its_marks_and_b_marks_the_replays_moment() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ring_dir = dir.path().join("ring");
    {
        let ring_dir = ring_dir.clone();
        // The walk runs a paused runtime of its own: on a thread of its own.
        std::thread::spawn(move || {
            let mut w = RingWriter::open(ring_config(&ring_dir), super::origin()).expect("ring");
            ifxtop::instance::ring::demo_ring(
                DemoInstance::new(1).with_sessions(300),
                Duration::from_secs(250),
                Duration::from_secs(310),
                super::demo_settings(),
                &mut w,
            )
            .expect("walk");
            w.close();
        })
        .join()
        .expect("the walk");
    }
    ring::mark(
        &ring_dir,
        ifxtop::demo::EPOCH + Duration::from_secs(280),
        "batch restarted by hand",
    )
    .expect("mark");
    let index = RingIndex::open(&ring_dir).expect("ring");
    let rec = index
        .window(index.start(), index.end, true)
        .expect("window");
    let mut setup = demo_setup(0);
    setup.mode = Mode::Replay {
        file: ring_dir.display().to_string(),
    };
    setup.runner = Arc::new(ifxtop::source::local::LocalRunner::new(None));
    setup.note = None;
    setup.settings.wall_start = rec.started();
    setup.replay = Some(Arc::new(rec));
    let mut script = vec![(500, key('p')), (200, key(':'))];
    script.extend("13:34:40".chars().map(|c| (0, key(c))));
    script.push((0, code(KeyCode::Enter)));
    script.extend(typed(1_000, "seen here"));
    script.push((0, code(KeyCode::Enter)));
    script.push((1_000, key('q')));
    let (exit, frames, _) = play(setup, script).await;
    assert_eq!(exit, 0);
    let first = frames.first().expect("frames");
    let timeline = |f: &str| f.lines().rev().nth(1).unwrap_or_default().to_string();
    // Away from the mark: the `◆` on the bar, no note.
    assert!(timeline(first).contains('◆'), "{first}");
    assert!(!timeline(first).contains("batch restarted"), "{first}");
    let at = frames
        .iter()
        .find(|f| timeline(f).contains("◆ batch restarted by hand") && f.contains("13:34:40"))
        .unwrap_or_else(|| panic!("no frame at the mark: {}", frames.last().expect("f")));
    assert!(at.contains("REPLAY 04:40/05:10"), "{at}");
    let marks = ring::marks(&ring_dir);
    assert_eq!(marks.len(), 2, "{marks:?}");
    assert_eq!(marks[1].note, "seen here");
    // The replay's moment, not the time it was typed.
    assert!((mark_s(&marks[1]) - 280.0).abs() <= 1.0, "{marks:?}");
}
