//! The findings list (`f`) as keys drive it: up and down select a finding, Enter opens what it
//! blames (its session, its hot spot, its chunk in the I/O pane, the pane of its peer or node),
//! on the demo's incidents through the real pipeline.

use crate::demo_app;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers};
use ifxtop::model::findings::{headline, FindingKind};
use ifxtop::tui::app::App;
use ifxtop::tui::keymap::Action;
use ifxtop::tui::panes::Pane;
use std::time::Duration;

fn press(a: &mut App, code: KeyCode, at: u64) {
    a.on_key(
        KeyEvent {
            code,
            modifiers: KeyModifiers::NONE,
            kind: KeyEventKind::Press,
            state: KeyEventState::NONE,
        },
        Duration::from_secs(at),
    );
}

/// The demo at `at` with the findings open; the top finding's kind is `kind`.
fn open_at(at: u64, kind: FindingKind) -> App {
    let mut a = demo_app(at, 80, 24);
    let top = headline(&a.shown().findings).map(|f| f.kind);
    assert_eq!(top, Some(kind), "{:#?}", a.shown().findings);
    a.handle(Action::Findings, Duration::from_secs(at));
    assert!(a.findings);
    a
}

#[test]
fn enter_on_a_lock_chain_opens_its_head() {
    let mut a = open_at(300, FindingKind::LockChain);
    press(&mut a, KeyCode::Enter, 300);
    assert!(!a.findings);
    let sids: Vec<_> = a.drill.iter().map(|d| d.sid.0).collect();
    assert_eq!(sids, vec![812]);
}

#[test]
fn enter_on_a_hot_spot_opens_its_screen() {
    let mut a = open_at(45, FindingKind::BufferHotSpot);
    let object = a.shown().findings[0].culprit.object.clone();
    assert!(object.is_some(), "{:?}", a.shown().findings[0]);
    press(&mut a, KeyCode::Enter, 45);
    assert_eq!(a.pane, Pane::Buffers);
    assert!(a.drill.is_empty());
    assert_eq!(a.hotspot.as_ref().map(|h| h.object.clone()), object);
    // The hot spot's row is the one selected in the pane, for when the screen is left.
    let t = a.table();
    let row = t.order[t.selected];
    assert_eq!(Some(a.shown().hotspots[row].object.clone()), object);
}

#[test]
fn enter_on_a_slow_device_selects_its_chunk_in_the_io_pane() {
    let mut a = demo_app(620, 80, 24);
    // The I/O pane's selection left on another row first (the slowest chunk is its top row).
    press(&mut a, KeyCode::Char('7'), 620);
    press(&mut a, KeyCode::Char('j'), 620);
    press(&mut a, KeyCode::Char('1'), 620);
    a.handle(Action::Findings, Duration::from_secs(620));
    let top = &a.shown().findings[0];
    assert_eq!(
        top.kind,
        FindingKind::SlowDevice,
        "{:#?}",
        a.shown().findings
    );
    let chunk = top.culprit.chunk.expect("a chunk");
    press(&mut a, KeyCode::Enter, 620);
    assert_eq!(a.pane, Pane::Io);
    let t = a.table();
    let row = t.order[t.selected];
    assert_eq!(a.shown().io.chunks[row].chunk, chunk);
    assert!(a.drill.is_empty() && a.hotspot.is_none());
}

#[test]
fn enter_on_a_lagging_replica_opens_the_io_pane_and_names_the_peer() {
    let mut a = open_at(700, FindingKind::ReplicaLag);
    let peer = a.shown().findings[0].culprit.peer.clone().expect("a peer");
    press(&mut a, KeyCode::Enter, 700);
    assert_eq!(a.pane, Pane::Io);
    let said = a.current_message().unwrap_or_default().to_string();
    assert!(said.contains(&peer), "{said}");
}

/// Down selects the next finding (and stops at the last), up the one before (and stops at the
/// first); the selection is drawn with a mark that needs no colour.
#[test]
fn up_and_down_select_a_finding_and_enter_opens_it() {
    let mut a = open_at(235, FindingKind::CheckpointBlocked);
    let kinds: Vec<_> = a.shown().findings.iter().map(|f| f.kind).collect();
    let reclaim = kinds
        .iter()
        .position(|k| *k == FindingKind::MemoryReclaim)
        .unwrap_or_else(|| panic!("{kinds:?}"));
    press(&mut a, KeyCode::Up, 235);
    assert_eq!(a.findings_selected, 0);
    for _ in 0..kinds.len() + 2 {
        press(&mut a, KeyCode::Char('j'), 235);
    }
    assert_eq!(a.findings_selected, kinds.len() - 1);
    assert!(a.findings, "moving keeps the list open");
    while a.findings_selected > reclaim {
        press(&mut a, KeyCode::Char('k'), 235);
    }
    let text = crate::demo_screen(&a, 235, 80, 24);
    let marked: Vec<&str> = text.lines().filter(|l| l.contains('▸')).collect();
    assert_eq!(marked.len(), 1, "{text}");
    assert!(marked[0].contains("memory reclaim"), "{text}");
    press(&mut a, KeyCode::Enter, 235);
    assert_eq!(a.pane, Pane::Numa);
    assert!(a.drill.is_empty());
    // The checkpoint, first, opens the session in the critical section.
    let mut a = open_at(235, FindingKind::CheckpointBlocked);
    let sid = a.shown().findings[0].culprit.sids[0];
    press(&mut a, KeyCode::Enter, 235);
    assert_eq!(a.drill.last().map(|d| d.sid), Some(sid));
}

/// Any other key closes the list and does nothing else; opening it again starts at the top.
#[test]
fn another_key_closes_the_findings() {
    let mut a = open_at(300, FindingKind::LockChain);
    press(&mut a, KeyCode::Down, 300);
    press(&mut a, KeyCode::Char('3'), 300);
    assert!(!a.findings);
    assert_eq!(a.pane, Pane::Sessions);
    assert!(a.drill.is_empty());
    a.handle(Action::Findings, Duration::from_secs(300));
    assert_eq!(a.findings_selected, 0);
}
