//! App flows: keys in, state and effects out, against snapshots built by hand (the data path is
//! covered by the store and view tests; here the subject is what each key does).

mod alloc;
#[path = "../common/mod.rs"]
mod common;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers};
use ifxtop::collect::replay::{ReplayCommand, ReplayUi};
use ifxtop::ids::{Addr, Sid};
use ifxtop::model::session::{ChainLink, SessionView};
use ifxtop::model::snapshot::Snapshot;
use ifxtop::model::tree::TreeItem;
use ifxtop::model::waiters::WaitTarget;
use ifxtop::model::waiters::WaiterRow;
use ifxtop::parsers::onstat_u::WaitReason;
use ifxtop::tui::app::{App, Effect, Mode, Prompt};
use ifxtop::tui::keymap::Keymap;
use ifxtop::tui::panes::{Order, Pane};
use ifxtop::tui::theme::Theme;
use std::sync::Arc;
use std::time::Duration;

const NOW: Duration = Duration::from_secs(100);

fn key(c: char) -> KeyEvent {
    KeyEvent {
        code: KeyCode::Char(c),
        modifiers: if c.is_ascii_uppercase() {
            KeyModifiers::SHIFT
        } else {
            KeyModifiers::NONE
        },
        kind: KeyEventKind::Press,
        state: KeyEventState::NONE,
    }
}

fn code(code: KeyCode) -> KeyEvent {
    KeyEvent {
        code,
        modifiers: KeyModifiers::NONE,
        kind: KeyEventKind::Press,
        state: KeyEventState::NONE,
    }
}

fn waiter(sid: u64, user: &str, reason: WaitReason, in_wait: f64, idle: bool) -> WaiterRow {
    WaiterRow {
        rstcb: Addr(0x4400_0000 + sid),
        sessid: Sid(sid),
        user: user.into(),
        flags: format!("{}--P---", reason.letter()).into(),
        reason,
        waiting_on: WaitTarget::Condition {
            address: Addr(0x4480_0000 + sid),
            name: Some("netnorm".into()),
            waittime: Some(in_wait as u64),
        },
        in_wait_s: in_wait,
        in_wait_s_at_least: false,
        locks: 1,
        reads_per_s: Some(0.0),
        writes_per_s: Some(0.0),
        idle,
        idle_unknown: false,
        socket: None,
        blockers: Vec::new(),
        head_blocker: None,
        deadlock: false,
        engine_blocker: None,
        verdict: if idle {
            "idle: waiting for the client".into()
        } else {
            "waiting".into()
        },
    }
}

fn snapshot() -> Snapshot {
    let mut s = Snapshot {
        waiters: vec![
            waiter(10, "app_web", WaitReason::Condition, 300.0, true),
            waiter(812, "report", WaitReason::Condition, 72.0, false),
            waiter(902, "batch", WaitReason::Lock, 40.0, false),
            waiter(903, "batch", WaitReason::Lock, 35.0, false),
            waiter(55, "app_web", WaitReason::Buffer, 3.0, false),
        ],
        ..Snapshot::default()
    };
    s.waiters[2].blockers = vec![Sid(901)];
    s.waiters[2].head_blocker = Some(Sid(901));
    s.waiters[3].blockers = vec![Sid(902), Sid(901)];
    s.waiters[3].head_blocker = Some(Sid(901));
    s.summary.idle = 1;
    s
}

/// An app at `w`x`h` with the default keys, no colour, nothing shown yet.
fn bare_app(w: u16, h: u16) -> App {
    let mut a = App::new(
        Keymap::default(),
        Theme::plain(),
        Mode::Demo { seed: 1 },
        Duration::from_secs(1),
    );
    a.size = (w, h);
    a
}

fn app() -> App {
    let mut a = bare_app(80, 24);
    a.set_snapshot(Arc::new(snapshot()));
    // These flows are about the Waiters pane (the Sessions pane comes first).
    a.on_key(key('2'), NOW);
    assert_eq!(a.pane, Pane::Waiters);
    a
}

fn selected_sid(a: &App) -> Option<Sid> {
    a.selected_sid()
}

#[test]
fn pane_keys_switch_panes() {
    let mut a = app();
    assert_eq!(a.pane, Pane::Waiters);
    a.on_key(key('4'), NOW);
    assert_eq!(a.pane, Pane::Sockets);
    a.on_key(code(KeyCode::Tab), NOW);
    assert_eq!(a.pane, Pane::Numa);
    a.on_key(code(KeyCode::Tab), NOW);
    assert_eq!(a.pane, Pane::Server);
    a.on_key(code(KeyCode::Tab), NOW);
    assert_eq!(a.pane, Pane::Io);
    a.on_key(code(KeyCode::Tab), NOW);
    assert_eq!(a.pane, Pane::Activity);
    a.on_key(code(KeyCode::Tab), NOW);
    assert_eq!(a.pane, Pane::Sessions);
    a.on_key(code(KeyCode::BackTab), NOW);
    assert_eq!(a.pane, Pane::Activity);
    a.on_key(code(KeyCode::BackTab), NOW);
    assert_eq!(a.pane, Pane::Io);
    a.on_key(code(KeyCode::BackTab), NOW);
    assert_eq!(a.pane, Pane::Server);
    a.on_key(key('7'), NOW);
    assert_eq!(a.pane, Pane::Io);
    a.on_key(key('6'), NOW);
    assert_eq!(a.pane, Pane::Server);
    a.on_key(key('3'), NOW);
    assert_eq!(a.pane, Pane::Buffers);
    a.on_key(key('1'), NOW);
    assert_eq!(a.pane, Pane::Sessions);
}

#[test]
fn waiters_default_to_longest_wait_with_idle_last() {
    let a = app();
    let order: Vec<u64> = a
        .table()
        .order
        .iter()
        .map(|&i| a.shown().waiters[i].sessid.0)
        .collect();
    // Longest real wait first; the idle session (300 s) sinks to the bottom.
    assert_eq!(order, vec![812, 902, 903, 55, 10]);
}

#[test]
fn waits_on_sessions_come_before_long_condition_waits() {
    let mut snap = snapshot();
    // 812 waits 72 s on a server-side condition (read-ahead); 902 has waited 40 s for a lock
    // 901 holds.
    snap.waiters[1].waiting_on = WaitTarget::Condition {
        address: Addr(0x4480_0812),
        name: Some("ReadAhead".into()),
        waittime: Some(72),
    };
    snap.waiters[2].waiting_on = WaitTarget::Lock {
        address: Addr(0x44a1_b000),
        lock_type: Some("HDR+X".into()),
        partnum: Some(0x100105),
        object: None,
        owner: Some(Addr(0x4400_0901)),
        out_of_step: false,
    };
    let mut a = app();
    a.set_snapshot(Arc::new(snap));
    let order: Vec<u64> = a
        .table()
        .order
        .iter()
        .map(|&i| a.shown().waiters[i].sessid.0)
        .collect();
    assert_eq!(order, vec![902, 812, 903, 55, 10]);
}

#[test]
fn moving_clamps_at_both_ends() {
    let mut a = app();
    assert_eq!(selected_sid(&a), Some(Sid(812)));
    a.on_key(key('j'), NOW);
    assert_eq!(selected_sid(&a), Some(Sid(902)));
    a.on_key(code(KeyCode::End), NOW);
    assert_eq!(selected_sid(&a), Some(Sid(10)));
    a.on_key(key('j'), NOW);
    assert_eq!(selected_sid(&a), Some(Sid(10)));
    a.on_key(key('g'), NOW);
    assert_eq!(selected_sid(&a), Some(Sid(812)));
    a.on_key(key('k'), NOW);
    assert_eq!(selected_sid(&a), Some(Sid(812)));
}

#[test]
fn selection_follows_its_row_when_data_moves() {
    let mut a = app();
    a.on_key(key('j'), NOW);
    assert_eq!(selected_sid(&a), Some(Sid(902)));
    let mut s = snapshot();
    s.waiters[2].in_wait_s = 500.0; // 902 now waits longest: it moves to the top
    a.set_snapshot(Arc::new(s));
    assert_eq!(selected_sid(&a), Some(Sid(902)));
    assert_eq!(a.table().selected, 0);
}

#[test]
fn selection_follows_its_row_when_rows_come_and_go() {
    let mut a = app();
    a.on_key(key('j'), NOW);
    assert_eq!(selected_sid(&a), Some(Sid(902)));
    // The next snapshot lists its waiters in another order, with a newcomer first: row indices
    // now mean other sessions. The selection stays on 902, and the list is not scrolled.
    let mut s = snapshot();
    s.waiters.reverse();
    s.waiters
        .insert(0, waiter(77, "newcomer", WaitReason::Condition, 1.0, false));
    a.set_snapshot(Arc::new(s));
    assert_eq!(selected_sid(&a), Some(Sid(902)));
    assert_eq!(a.table().offset, 0);
    // And once more, unchanged: still 902.
    let s = a.shown().as_ref().clone();
    a.set_snapshot(Arc::new(s));
    assert_eq!(selected_sid(&a), Some(Sid(902)));
}

#[test]
fn an_untouched_selection_stays_on_the_top_row() {
    // Nobody moved the selection: when a new waiter comes first, it is the one selected and in
    // view (as in top), rather than the list scrolling after the old first row.
    let mut a = app();
    assert_eq!(selected_sid(&a), Some(Sid(812)));
    let mut s = snapshot();
    s.waiters
        .push(waiter(77, "newcomer", WaitReason::Condition, 900.0, false));
    a.set_snapshot(Arc::new(s));
    assert_eq!(selected_sid(&a), Some(Sid(77)));
    assert_eq!((a.table().selected, a.table().offset), (0, 0));
    // Moving down and back up to the top returns to that behaviour.
    a.on_key(key('j'), NOW);
    a.on_key(key('k'), NOW);
    assert!(!a.table().follow);
}

/// The app on its snapshot, the second waiter selected: the app, the snapshot, its sid.
fn second_row_chosen() -> (App, Arc<Snapshot>, Option<Sid>) {
    let mut a = app();
    let first = Arc::new(snapshot());
    a.set_snapshot(first.clone());
    a.on_key(key('j'), NOW);
    let chosen = selected_sid(&a);
    assert!(chosen.is_some() && chosen != Some(Sid(812)), "{chosen:?}");
    (a, first, chosen)
}

/// The snapshot with a newcomer first: every other row's index moves.
fn newcomer_first() -> Snapshot {
    let mut s = snapshot();
    s.waiters.insert(
        0,
        waiter(77, "newcomer", WaitReason::Condition, 900.0, false),
    );
    s
}

/// A pane off screen keeps its selected row's identity, not the snapshot it was sorted on:
/// every pane visited once held an old snapshot each (4.5 MB at 5,000 sessions) until it was
/// shown again. The selection still follows its row across the switch.
#[test]
fn a_pane_off_screen_holds_no_old_snapshot_and_keeps_its_selection() {
    let (mut a, first, chosen) = second_row_chosen();
    // Every pane sorted on `first`, then the Sessions pane on screen.
    for k in ['1', '3', '4', '5', '6', '7', '8', '1'] {
        a.on_key(key(k), NOW);
    }
    // A newcomer before the chosen row: its index moves.
    a.set_snapshot(Arc::new(newcomer_first()));
    assert_eq!(
        Arc::strong_count(&first),
        1,
        "an old snapshot is still held"
    );
    a.on_key(key('2'), NOW);
    assert_eq!(selected_sid(&a), chosen, "the selection followed its row");
}

/// The snapshot on screen is let go before the next is built (the two are 9 MB at 5,000
/// sessions); the selection still follows its row into the next.
#[test]
fn the_live_snapshot_is_let_go_before_the_next_and_the_selection_follows() {
    let (mut a, first, chosen) = second_row_chosen();
    a.release_live();
    assert_eq!(
        Arc::strong_count(&first),
        1,
        "the old snapshot is still held"
    );
    a.set_snapshot(Arc::new(newcomer_first()));
    assert_eq!(selected_sid(&a), chosen, "the selection followed its row");
    // Frozen, the screen's snapshot is kept.
    a.on_key(key(' '), NOW);
    let shown = a.shown().clone();
    a.release_live();
    assert!(Arc::ptr_eq(&shown, a.shown()));
}

#[test]
fn filter_narrows_rows_and_esc_clears_it() {
    let mut a = app();
    a.on_key(key('/'), NOW);
    for c in "batch".chars() {
        a.on_key(key(c), NOW);
    }
    assert_eq!(a.prompt, Some(Prompt::Filter("batch".into())));
    assert_eq!(a.table().order.len(), 2);
    a.on_key(code(KeyCode::Enter), NOW);
    assert_eq!(a.prompt, None);
    assert_eq!(a.table().filter, "batch");
    assert_eq!(a.table().order.len(), 2);
    a.on_key(code(KeyCode::Esc), NOW);
    assert_eq!(a.table().filter, "");
    assert_eq!(a.table().order.len(), 5);
}

#[test]
fn sort_keys_cycle_columns_and_reverse() {
    let mut a = app();
    assert_eq!(a.table().sort, Pane::Waiters.default_order());
    a.on_key(key('s'), NOW);
    let first = ifxtop::tui::panes::ListPane::Waiters.columns()[0];
    let Order::By { column, desc } = a.table().sort else {
        panic!("s sorts by a column: {:?}", a.table().sort)
    };
    assert_eq!(column, first);
    a.on_key(key('S'), NOW);
    assert_eq!(
        a.table().sort,
        Order::By {
            column,
            desc: !desc
        }
    );
    assert!(a
        .current_message()
        .is_some_and(|m| m.starts_with("sorted by")));
}

#[test]
fn sorting_by_a_column_orders_the_rows_by_that_column() {
    let mut a = app();
    // s: SID, as the column header then says.
    a.on_key(key('s'), NOW);
    let sids: Vec<u64> = a
        .table()
        .order
        .iter()
        .map(|&i| a.shown().waiters[i].sessid.0)
        .collect();
    let Order::By { desc, .. } = a.table().sort else {
        panic!("a column order")
    };
    let mut want = sids.clone();
    want.sort_unstable();
    if desc {
        want.reverse();
    }
    assert_eq!(sids, want);
    // s again: USER, alphabetical.
    a.on_key(key('s'), NOW);
    a.on_key(key('s'), NOW);
    a.on_key(key('s'), NOW);
    a.on_key(key('s'), NOW);
    // IN WAIT sorts by the time in the wait, not by the grouped order.
    let Order::By { column, .. } = a.table().sort else {
        panic!("a column order")
    };
    assert_eq!(column.spec().title, "IN WAIT");
    let waits: Vec<f64> = a
        .table()
        .order
        .iter()
        .map(|&i| a.shown().waiters[i].in_wait_s)
        .collect();
    assert!(waits.windows(2).all(|w| w[0] >= w[1]), "{waits:?}");
}

#[test]
fn freeze_keeps_the_screen_while_data_arrives() {
    let mut a = app();
    a.on_key(key(' '), NOW);
    assert!(a.frozen.is_some());
    assert!(
        a.current_message().is_some_and(|m| m.starts_with("frozen")),
        "{:?}",
        a.current_message()
    );
    let mut s = snapshot();
    s.waiters.truncate(1);
    a.set_snapshot(Arc::new(s));
    assert_eq!(a.shown().waiters.len(), 5, "frozen screen changed");
    assert_eq!(a.live.waiters.len(), 1, "collection stopped while frozen");
    a.on_key(key(' '), NOW);
    assert!(a.frozen.is_none());
    // Running again: the status line no longer says it is frozen.
    assert_eq!(a.current_message(), None);
    assert_eq!(a.shown().waiters.len(), 1);
    assert_eq!(a.table().order.len(), 1);
}

#[test]
fn interval_keys_step_through_the_intervals() {
    let mut a = app();
    assert_eq!(
        a.on_key(key('+'), NOW),
        vec![Effect::SetInterval(Duration::from_secs(2))]
    );
    assert_eq!(
        a.on_key(key('-'), NOW),
        vec![Effect::SetInterval(Duration::from_secs(1))]
    );
    assert_eq!(
        a.on_key(key('-'), NOW),
        vec![Effect::SetInterval(Duration::from_millis(500))]
    );
    assert_eq!(a.on_key(key('-'), NOW), vec![], "0.5 s is the shortest");
    assert_eq!(a.interval, Duration::from_millis(500));
}

#[test]
fn idle_toggle_hides_idle_client_waits() {
    let mut a = app();
    a.on_key(key('i'), NOW);
    assert!(a.hide_idle);
    assert_eq!(a.table().order.len(), 4);
    assert!(!a.table().order.iter().any(|&i| a.shown().waiters[i].idle));
    a.on_key(key('i'), NOW);
    assert_eq!(a.table().order.len(), 5);
}

#[test]
fn enter_drills_in_esc_backs_out_and_chains_drill_further() {
    let mut a = app();
    a.on_key(key('j'), NOW); // 902
    a.on_key(code(KeyCode::Enter), NOW);
    assert_eq!(a.drill.last().map(|d| d.sid), Some(Sid(902)));
    // The session screen's content arrives with the next snapshot.
    let mut s = snapshot();
    s.session_views = vec![SessionView {
        sid: Sid(902),
        chain: vec![ChainLink {
            sid: Sid(901),
            user: "batch".into(),
            state: "in a read".into(),
            locks: 3,
            head: true,
        }],
        ..SessionView::default()
    }];
    a.set_snapshot(Arc::new(s));
    a.on_key(code(KeyCode::Enter), NOW);
    assert_eq!(
        a.drill.iter().map(|d| d.sid).collect::<Vec<_>>(),
        vec![Sid(902), Sid(901)]
    );
    a.on_key(code(KeyCode::Esc), NOW);
    a.on_key(code(KeyCode::Esc), NOW);
    assert!(a.drill.is_empty());
    assert_eq!(a.pane, Pane::Waiters);
}

#[test]
fn copy_gives_the_selected_row_as_text() {
    let mut a = app();
    let effects = a.on_key(key('y'), NOW);
    let [Effect::Copy(text)] = effects.as_slice() else {
        panic!("expected one copy effect, got {effects:?}")
    };
    assert!(text.contains("SID: 812"), "{text}");
    assert!(text.contains("USER: report"), "{text}");
}

#[test]
fn export_and_rebuild_are_effects_for_the_loop() {
    let mut a = app();
    assert_eq!(a.on_key(key('e'), NOW), vec![Effect::Export]);
    assert_eq!(a.on_key(key('R'), NOW), vec![Effect::RebuildExtents]);
}

#[test]
fn help_opens_and_any_key_closes_it() {
    let mut a = app();
    a.on_key(key('?'), NOW);
    assert!(a.help);
    a.on_key(key('3'), NOW);
    assert!(!a.help);
    assert_eq!(a.pane, Pane::Waiters, "the closing key does nothing else");
    // q in the help closes the help: a quit by reflex must not end the session.
    a.on_key(key('?'), NOW);
    a.on_key(key('q'), NOW);
    assert!(!a.help);
    assert!(!a.quit, "q closes the help, it does not quit");
    // Ctrl-C still quits from the help.
    a.on_key(key('?'), NOW);
    a.on_key(
        KeyEvent {
            code: KeyCode::Char('c'),
            modifiers: KeyModifiers::CONTROL,
            kind: KeyEventKind::Press,
            state: KeyEventState::NONE,
        },
        NOW,
    );
    assert!(a.quit);
}

#[test]
fn replay_keys_only_act_in_a_replay() {
    let mut a = app();
    assert_eq!(a.on_key(key('.'), NOW), vec![]);
    a.replay = Some(ReplayUi::default());
    assert_eq!(
        a.on_key(key('.'), NOW),
        vec![Effect::Replay(ReplayCommand::Step(1))]
    );
    assert_eq!(
        a.on_key(key('p'), NOW),
        vec![Effect::Replay(ReplayCommand::TogglePause)]
    );
    a.on_key(key(':'), NOW);
    for c in "1m30s".chars() {
        a.on_key(key(c), NOW);
    }
    assert_eq!(
        a.on_key(code(KeyCode::Enter), NOW),
        vec![Effect::Replay(ReplayCommand::SeekTo(Duration::from_secs(
            90
        )))]
    );
}

#[test]
fn tree_toggle_orders_waiters_by_head_blocker() {
    let mut a = app();
    let mut s = snapshot();
    s.heads = vec![ifxtop::model::snapshot::HeadBlocker {
        sid: Sid(901),
        user: "batch".into(),
        state: "in a read".into(),
        locks: 3,
        blocked: 2,
        harm: Default::default(),
        action: None,
        command: None,
        sql: None,
    }];
    s.tree = ifxtop::model::tree::tree(&s.waiters, &[Sid(901)]);
    a.set_snapshot(Arc::new(s));
    a.on_key(key('t'), NOW);
    assert!(a.tree);
    // The head, then each waiter under its direct blocker: 902 under 901, 903 under 902.
    let lines: Vec<(String, usize)> = a
        .table()
        .order
        .iter()
        .map(|&i| {
            let line = &a.shown().tree[i];
            let what = match line.item {
                TreeItem::Head(s) => format!("head {s}"),
                TreeItem::Waiter(w) => format!("{}", a.shown().waiters[w].sessid),
                TreeItem::Deadlock(s) => format!("deadlock {s}"),
            };
            (what, line.depth())
        })
        .collect();
    assert_eq!(
        lines,
        vec![
            ("head 901".to_string(), 0),
            ("902".to_string(), 0),
            ("903".to_string(), 1)
        ]
    );
    // The head's line is selectable: Enter on it opens the head blocker's screen.
    assert_eq!(a.selected_sid(), Some(Sid(901)));
    a.on_key(code(KeyCode::Enter), NOW);
    assert_eq!(a.drill.last().map(|d| d.sid), Some(Sid(901)));
    a.on_key(code(KeyCode::Esc), NOW);
    a.on_key(key('t'), NOW);
    assert_eq!(a.table().order.len(), 5);
}

#[test]
fn ctrl_c_quits_even_while_typing_a_filter() {
    let mut a = app();
    a.on_key(key('/'), NOW);
    a.on_key(
        KeyEvent {
            code: KeyCode::Char('c'),
            modifiers: KeyModifiers::CONTROL,
            kind: KeyEventKind::Press,
            state: KeyEventState::NONE,
        },
        NOW,
    );
    assert!(a.quit);
}

fn fkey(n: u8) -> KeyEvent {
    code(KeyCode::F(n))
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent {
        code: KeyCode::Char(c),
        modifiers: KeyModifiers::CONTROL,
        kind: KeyEventKind::Press,
        state: KeyEventState::NONE,
    }
}

/// A second `/` edits the kept filter instead of starting over or appending blindly; the
/// prompt opens with it.
#[test]
fn slash_edits_the_kept_filter() {
    let mut a = app();
    a.on_key(key('/'), NOW);
    for c in "bat".chars() {
        a.on_key(key(c), NOW);
    }
    a.on_key(code(KeyCode::Enter), NOW);
    assert_eq!(a.table().filter, "bat");
    a.on_key(key('/'), NOW);
    assert_eq!(a.prompt, Some(Prompt::Filter("bat".into())));
    a.on_key(code(KeyCode::Backspace), NOW);
    a.on_key(code(KeyCode::Backspace), NOW);
    a.on_key(code(KeyCode::Backspace), NOW);
    for c in "report".chars() {
        a.on_key(key(c), NOW);
    }
    a.on_key(code(KeyCode::Enter), NOW);
    assert_eq!(a.table().filter, "report");
    assert_eq!(a.table().order.len(), 1);
}

/// The keys top and htop users reach for: F1 help, F3 search (a jump, the rows stay), F4
/// filter, F5 tree, F6 sort, F10 quit, Ctrl-L a full redraw, Ctrl-Z suspends.
#[test]
fn top_habits_function_keys_redraw_and_suspend() {
    let mut a = app();
    a.on_key(fkey(1), NOW);
    assert!(a.help);
    a.on_key(code(KeyCode::Esc), NOW);
    assert!(!a.help);

    a.on_key(fkey(3), NOW);
    assert_eq!(a.prompt, Some(Prompt::Search(String::new())));
    for c in "903".chars() {
        a.on_key(key(c), NOW);
    }
    a.on_key(code(KeyCode::Enter), NOW);
    assert_eq!(selected_sid(&a), Some(Sid(903)), "F3 jumps to the row");
    assert_eq!(a.table().order.len(), 5, "F3 does not filter");

    a.on_key(fkey(4), NOW);
    assert_eq!(a.prompt, Some(Prompt::Filter(String::new())));
    a.on_key(code(KeyCode::Esc), NOW);
    assert_eq!(a.prompt, None);

    let tree_before = a.tree_shown(Pane::Waiters);
    a.on_key(fkey(5), NOW);
    assert_ne!(a.tree_shown(Pane::Waiters), tree_before);
    a.on_key(fkey(5), NOW);

    a.on_key(fkey(6), NOW);
    assert_ne!(a.table().sort, Pane::Waiters.default_order(), "F6 sorts");

    assert_eq!(a.on_key(ctrl('l'), NOW), vec![Effect::Redraw]);
    assert_eq!(a.on_key(ctrl('z'), NOW), vec![Effect::Suspend]);
    assert!(!a.quit);
    a.on_key(fkey(10), NOW);
    assert!(a.quit, "F10 quits");
}

/// Esc with nothing left to go back from says so (the fleet screen takes it); with a drill,
/// a filter or the help open it goes back from those first.
#[test]
fn esc_leaves_only_when_nothing_is_left_to_go_back_from() {
    let mut a = app();
    a.on_key(key('/'), NOW);
    a.on_key(key('b'), NOW);
    a.on_key(code(KeyCode::Enter), NOW);
    a.on_key(code(KeyCode::Esc), NOW);
    assert_eq!(a.table().filter, "");
    assert!(!a.leave, "the first Esc cleared the filter");
    a.on_key(code(KeyCode::Esc), NOW);
    assert!(a.leave, "nothing left: leave");
}

/// `:` in a replay takes a time of day: the recorded wall-clock moment, the first one from the
/// recording's start on.
#[test]
fn replay_seeks_to_a_wall_clock_time() {
    let mut a = app();
    let mut ui = ReplayUi::default();
    ui.started = Some(time::macros::datetime!(2026-11-22 13:30:00 UTC));
    a.replay = Some(ui);
    a.on_key(key(':'), NOW);
    for c in "13:35:20".chars() {
        a.on_key(key(c), NOW);
    }
    assert_eq!(
        a.on_key(code(KeyCode::Enter), NOW),
        vec![Effect::Replay(ReplayCommand::SeekTo(Duration::from_secs(
            320
        )))]
    );
    // Before the start: the next day's.
    a.on_key(key(':'), NOW);
    for c in "13:29:00".chars() {
        a.on_key(key(c), NOW);
    }
    assert_eq!(
        a.on_key(code(KeyCode::Enter), NOW),
        vec![Effect::Replay(ReplayCommand::SeekTo(Duration::from_secs(
            24 * 3600 - 60
        )))]
    );
    // Nonsense is said, not guessed.
    a.on_key(key(':'), NOW);
    for c in "25:99:00".chars() {
        a.on_key(key(c), NOW);
    }
    assert_eq!(a.on_key(code(KeyCode::Enter), NOW), vec![]);
    assert!(a
        .current_message()
        .is_some_and(|m| m.contains("cannot seek")));
}

/// `#` with a number no session has says so instead of opening an empty screen; a known one
/// opens.
#[test]
fn a_session_number_nobody_has_says_so() {
    let mut a = app();
    for (typed, opens) in [("99999", false), ("812", true)] {
        a.on_key(key('#'), NOW);
        for c in typed.chars() {
            a.on_key(key(c), NOW);
        }
        a.on_key(code(KeyCode::Enter), NOW);
        if opens {
            assert_eq!(a.drill.last().map(|d| d.sid), Some(Sid(812)));
        } else {
            assert!(a.drill.is_empty(), "no screen for a session nobody has");
            let m = a.current_message().unwrap_or_default();
            assert!(m.contains("no such session 99999"), "{m}");
        }
    }
}

/// A key bound to nothing says so on the status line.
#[test]
fn unbound_keys_give_a_hint() {
    let mut a = app();
    a.on_key(fkey(9), NOW);
    let m = a.current_message().unwrap_or_default().to_string();
    assert!(
        m.contains("unbound key F9") && m.contains("? for help"),
        "{m}"
    );
    assert_eq!(a.pane, Pane::Waiters, "nothing else moved");
}

/// htop's M: the Sessions pane, the most memory first; with no `onstat -g ses` read yet, it
/// says so; once read, how old the figures are (a slow fact, read every 30 s).
#[test]
fn m_sorts_the_sessions_by_memory() {
    let mut a = app();
    a.on_key(key('M'), NOW);
    assert_eq!(a.pane, Pane::Sessions);
    let Order::By { column, desc } = a.table().sort else {
        panic!("a column order")
    };
    assert_eq!((column.spec().title, desc), ("MEM", true));
    let m = a.current_message().unwrap_or_default().to_string();
    assert!(
        m.starts_with("sorted by MEM, descending") && m.contains("not collected yet"),
        "{m}"
    );
    let mut s = snapshot();
    s.at_s = 100.0;
    s.session_memory_at_s = Some(88.0);
    a.set_snapshot(Arc::new(s));
    a.on_key(key('2'), NOW);
    a.on_key(key('M'), NOW);
    let m = a.current_message().unwrap_or_default().to_string();
    assert_eq!(m, "sorted by MEM, descending (onstat -g ses, 12s ago)");
}

/// htop's P: the Sessions pane, the most CPU first; with no `onstat -g cpu` read yet, it says so.
#[test]
fn p_sorts_the_sessions_by_cpu() {
    let mut a = app();
    a.on_key(key('P'), NOW);
    assert_eq!(a.pane, Pane::Sessions);
    let m = a.current_message().unwrap_or_default().to_string();
    assert!(
        m.starts_with("sorted by CPU%, descending") && m.contains("not collected yet"),
        "{m}"
    );
}

/// P on a session's screen goes to the list it sorts, as `1` does (the screen would otherwise
/// stay above the pane it changed).
#[test]
fn p_on_a_session_screen_shows_the_sorted_list() {
    let mut a = app();
    a.on_key(key('j'), NOW);
    a.on_key(code(KeyCode::Enter), NOW);
    assert!(!a.drill.is_empty(), "a session screen is open");
    a.on_key(key('P'), NOW);
    assert_eq!(a.pane, Pane::Sessions);
    assert!(
        a.drill.is_empty(),
        "the session screen was left open above the list"
    );
}

/// In the help the moving keys scroll (j/k, arrows, pages) and keep it open; q and Esc close it
/// without quitting.
#[test]
fn help_scrolls_with_the_moving_keys() {
    let mut a = app();
    a.size = (60, 20);
    a.on_key(key('?'), NOW);
    a.on_key(key('j'), NOW);
    assert!(a.help);
    assert_eq!(a.help_scroll, 1);
    a.on_key(code(KeyCode::PageDown), NOW);
    assert!(a.help && a.help_scroll > 1);
    a.on_key(key('k'), NOW);
    a.on_key(code(KeyCode::PageUp), NOW);
    assert_eq!(a.help_scroll, 0);
    a.on_key(key('q'), NOW);
    assert!(!a.help && !a.quit);
    a.on_key(key('?'), NOW);
    a.on_key(code(KeyCode::Esc), NOW);
    assert!(!a.help && !a.quit);
    assert_eq!(a.pane, Pane::Waiters);
}
