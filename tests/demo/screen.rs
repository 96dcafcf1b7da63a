//! The screen at each vital-sign incident, as a user sees it: the live collectors against the
//! demo (grouped calls included), the store's rates, the model, the real views, at 80x24 and
//! 160x48. The header's vitals line must name the incident at both widths; the Server pane must
//! show its cause.

use ifxtop::commands::snapshot as report;
use ifxtop::demo::timeline::{self, Incident, Phase};
use ifxtop::demo::{DemoInstance, LISTENER_PORT};
use ifxtop::ids::Sid;
use ifxtop::model::snapshot::{self, Snapshot};
use ifxtop::parsers::onstat_u::WaitReason;
use ifxtop::store::StoreSettings;
use ifxtop::tui::app::{App, Mode};
use ifxtop::tui::keymap::{Action, Keymap};
use ifxtop::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use std::sync::Arc;
use std::time::Duration;

fn phase(incident: Incident) -> Phase {
    timeline::first(incident).expect("the incident is in the timeline")
}

/// The snapshot after the collectors ran from `from` to `to`.
fn snapshot_after(from: u64, to: u64) -> Snapshot {
    let settings = StoreSettings {
        ports: vec![LISTENER_PORT],
        ..StoreSettings::default()
    };
    let (from, to) = (Duration::from_secs(from), Duration::from_secs(to));
    let (store, _) =
        report::demo_store(DemoInstance::new(1), from, to, settings, false).expect("the demo runs");
    snapshot::build(&store, to, Some("ol_demo"), &[])
}

/// The screen (`pane` shown) after the collectors ran from `from` to `to`.
fn screen(from: u64, to: u64, pane: Action, (w, h): (u16, u16)) -> String {
    let mut a = App::new(
        Keymap::default(),
        Theme::plain(),
        Mode::Demo { seed: 1 },
        Duration::from_secs(1),
    );
    a.server = Some("ol_demo".into());
    a.size = (w, h);
    a.set_snapshot(Arc::new(snapshot_after(from, to)));
    let to = Duration::from_secs(to);
    a.handle(pane, to);
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    ifxtop::tui::views::render(&a, to, area, &mut buf);
    ifxtop::tui::views::buffer_text(&buf)
}

/// The header's vitals line (the third).
fn vitals(text: &str) -> &str {
    text.lines().nth(2).expect("a vitals line")
}

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

/// A number right after `label` in `line` (`ready 115` → 115).
fn number_after(line: &str, label: &str) -> Option<f64> {
    let rest = &line[line.find(label)? + label.len()..];
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    digits.parse().ok()
}

#[test]
fn long_transaction_on_screen() {
    let p = phase(Incident::LongTransaction);
    for size in SIZES {
        let text = screen(p.start + 30, p.start + 45, Action::PaneServer, size);
        let v = vitals(&text);
        assert!(!v.contains("waiting for"), "{text}");
        // Blocked, the logs nearly full, and whose transaction holds them: even at 80 columns.
        assert!(v.contains("Blocked:LONGTX"), "{size:?}\n{text}");
        assert!(
            v.contains("oldest txn") && v.contains("(sid 810)"),
            "{size:?}\n{text}"
        );
        assert!(
            number_after(v, "logs").is_some_and(|x| x >= 70.0),
            "{size:?}\n{text}"
        );
        assert!(text.lines().next().is_some_and(|l| l.contains("LONGTX")));
        if size.1 >= 48 {
            assert!(
                text.contains("oldest open transaction: sid 810 purge"),
                "{text}"
            );
        }
    }
}

#[test]
fn cpu_saturated_on_screen() {
    let p = phase(Incident::CpuSaturated);
    for size in SIZES {
        // Two -g glo samples (every 10 s) give the busy %.
        let text = screen(p.start + 10, p.start + 30, Action::PaneServer, size);
        let v = vitals(&text);
        assert!(
            number_after(v, "cpu VPs").is_some_and(|b| b >= 90.0),
            "{size:?}\n{text}"
        );
        assert!(
            number_after(v, "ready").is_some_and(|q| q >= 50.0),
            "{size:?}\n{text}"
        );
        let vps = text
            .lines()
            .find(|l| l.starts_with(" cpu x"))
            .expect("the cpu VP class");
        assert!(
            number_after(vps, "cpu x16").is_some_and(|b| b >= 90.0),
            "{vps}"
        );
        let queue = text
            .lines()
            .find(|l| l.starts_with(" ready queue"))
            .expect("the ready queue");
        assert!(
            number_after(queue, "ready queue").is_some_and(|q| q >= 50.0),
            "{queue}"
        );
    }
}

#[test]
fn mutex_contention_on_screen() {
    let p = phase(Incident::MutexContention);
    for size in SIZES {
        let text = screen(p.start + 15, p.start + 25, Action::PaneServer, size);
        let v = vitals(&text);
        assert!(
            number_after(v, "latch").is_some_and(|x| x >= 100.0),
            "{size:?}\n{text}"
        );
        // The mutex, its holder and its waiters, first under MUTEXES.
        let after: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("MUTEXES"))
            .collect();
        let top = after.get(1).expect("a mutex line");
        assert!(
            top.contains("free_lock") && top.contains("sid 811"),
            "{text}"
        );
        assert!(
            number_after(top, "sid 811").is_some_and(|n| n >= 20.0),
            "{top}"
        );
        // The S waiters name it and its holder.
        let waiters = screen(p.start + 15, p.start + 25, Action::PaneWaiters, size);
        let s: Vec<&str> = waiters
            .lines()
            .filter(|l| l.contains("mutex free_lock"))
            .collect();
        assert!(s.len() >= 10, "{waiters}");
        assert!(s.iter().all(|l| l.contains(" 811 ")), "{waiters}");
    }
}

/// The session holding the oldest open transaction says so on its own screen from the start,
/// before anyone waits for it; the long transaction's age is the transaction's, from where its
/// first log record is, shown as a lower bound (`onstat -l` every 5 s brackets it), never the
/// finding's own few seconds.
#[test]
fn the_oldest_transaction_is_said_with_its_own_age() {
    let p = phase(Incident::LongTransaction);
    let settings = StoreSettings {
        ports: vec![LISTENER_PORT],
        ..StoreSettings::default()
    };
    // 12 s into the purge: running, no one waiting for it yet, spanning 3 logs or more.
    let (from, to) = (p.start - 30, p.start + 12);
    let (store, _) = report::demo_store(
        DemoInstance::new(1),
        Duration::from_secs(from),
        Duration::from_secs(to),
        settings,
        false,
    )
    .expect("the demo runs");
    let snap = snapshot::build(
        &store,
        Duration::from_secs(to),
        Some("ol_demo"),
        &[Sid(810)],
    );
    let view = &snap.session_views[0];
    assert!(
        view.verdict.starts_with("not waiting")
            && view
                .verdict
                .contains("holds the oldest open transaction, open ≥"),
        "{}",
        view.verdict
    );
    let f = snap
        .findings
        .iter()
        .find(|f| f.kind == ifxtop::model::findings::FindingKind::LongTransaction)
        .expect("a long transaction finding");
    let age = f.for_s.expect("an age");
    // Open 12 s: at least since the first -l past its first record (within 5 s of its begin),
    // never more than it has been open.
    assert!(f.for_s_at_least, "{f:?}");
    assert!((7.0..=12.0).contains(&age), "{age}: {}", f.summary);
    assert!(f.summary.starts_with("long transaction ≥"), "{}", f.summary);
}

/// A finding read from a source that has stopped answering is said `as of` that source's
/// moment, not of now: the replica's `blocked` from a `-g rss` long past its period.
#[test]
fn a_finding_from_a_late_source_is_said_as_of() {
    let p = phase(Incident::ReplicaLag);
    let settings = StoreSettings {
        ports: vec![LISTENER_PORT],
        ..StoreSettings::default()
    };
    let to = p.start + 40;
    let (store, _) = report::demo_store(
        DemoInstance::new(1),
        Duration::from_secs(to - 30),
        Duration::from_secs(to),
        settings,
        false,
    )
    .expect("the demo runs");
    let fresh = snapshot::build(&store, Duration::from_secs(to), Some("ol_demo"), &[]);
    let replica = |s: &Snapshot| {
        s.findings
            .iter()
            .find(|f| f.kind == ifxtop::model::findings::FindingKind::ReplicaLag)
            .cloned()
            .expect("the replica's finding")
    };
    let f = replica(&fresh);
    assert!(
        f.summary.contains("blocked") && f.as_of_s.is_none(),
        "{f:?}"
    );
    // Nothing answered for 30 s more: -g rss (every 10 s) is late.
    let late = snapshot::build(&store, Duration::from_secs(to + 30), Some("ol_demo"), &[]);
    let f = replica(&late);
    assert!(
        f.as_of_s.is_some_and(|a| a >= 30.0) && f.summary.contains("(as of 3"),
        "{f:?}"
    );
}

/// A recording keeps the SQL of the blockers: the lock chain's head and the mutex contention's
/// holder, never the sessions that hold a mutex for an instant (the demo's background mutex
/// waits, as on any busy server, change holder every second).
#[test]
fn only_real_blockers_are_worth_recording() {
    let max = ifxtop::collect::Focus::MAX_BACKGROUND;
    let chain = phase(Incident::LockChain);
    let mut seen_momentary = 0;
    for into in [5, 9, 13, 17, 21] {
        let s = snapshot_after(chain.start + into - 5, chain.start + into);
        // Blockers of mutex waits that are momentary.
        let momentary: Vec<Sid> = s
            .waiters
            .iter()
            .filter(|w| w.reason == WaitReason::Mutex && w.in_wait_s < 1.0)
            .flat_map(|w| w.blockers.clone())
            .collect();
        seen_momentary += momentary.len();
        let picked = snapshot::worth_recording(&s, &[], max);
        assert_eq!(picked.first(), Some(&Sid(812)), "t+{into}: {picked:?}");
        assert!(
            picked.iter().all(|p| !momentary.contains(p)),
            "t+{into}: {picked:?} picks a momentary mutex holder of {momentary:?}"
        );
    }
    // The background mutex waits were there (with holders) to be passed over.
    assert!(seen_momentary > 0);
    let mx = phase(Incident::MutexContention);
    let s = snapshot_after(mx.start + 10, mx.start + 20);
    assert_eq!(
        snapshot::worth_recording(&s, &[], max).first(),
        Some(&Sid(811))
    );
}

/// `cargo test --test demo print_screens -- --ignored --nocapture` prints the Server pane at
/// each incident at both sizes, to look at them.
#[test]
#[ignore]
fn print_screens() {
    for (i, into) in [
        (Incident::LongTransaction, 45),
        (Incident::CpuSaturated, 30),
        (Incident::MutexContention, 25),
    ] {
        let p = phase(i);
        for size in SIZES {
            println!(
                "{}",
                screen(
                    p.start + into - 15,
                    p.start + into,
                    Action::PaneServer,
                    size
                )
            );
        }
    }
}
