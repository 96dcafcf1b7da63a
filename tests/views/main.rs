//! Screens as text: every pane, the help and the session screen at 80x24 and 160x48, drawn from
//! real captured outputs fed through the real parse → store → snapshot path, with a fixed clock.

#[path = "../common/mod.rs"]
mod common;
mod findings_keys;

use common::fixture;
use ifxtop::collect::extents::ExtentStatus;
use ifxtop::collect::sample::Update;
use ifxtop::ids::Sid;
use ifxtop::model::snapshot;
use ifxtop::source::{Output, Source};
use ifxtop::store::{Store, StoreSettings};
use ifxtop::tui::app::{App, DrillUi, Mode};
use ifxtop::tui::keymap::{Action, Keymap};
use ifxtop::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use std::sync::Arc;
use std::time::Duration;

const BANNER: &str =
    "IBM Informix Dynamic Server Version 11.70.FC8 -- On-Line -- Up 3 days 04:05:06 -- 2457600 Kbytes\n\n";

fn apply(store: &mut Store, source: Source, t: u64, text: &str, exit: i32) {
    let out = Output {
        exit: Some(exit),
        stdout: common::with_u_footer(source, text),
        stderr: String::new(),
    };
    let result = source.parse(out);
    match &result {
        Ok(p) => assert_eq!(p.unparsed(), 0, "{}: lines left unparsed", source.label()),
        Err(e) => panic!("{}: {e}", source.label()),
    }
    store.apply(Update {
        source,
        t: Duration::from_secs(t),
        took: Duration::from_millis(12),
        result,
        how: Default::default(),
    });
}

/// A store holding real captures: the oninit instance's onstat -u / -g con, the seed's onstat -X
/// against a matching oncheck -pe, a tcp6 table, and a two-node machine's NUMA files.
pub fn store() -> Store {
    let mut s = Store::new(StoreSettings {
        ports: vec![9088],
        ..StoreSettings::default()
    });
    apply(
        &mut s,
        Source::OncheckPe,
        0,
        &fixture("oncheck-pe/ifxtop-chunks-of-seed-onstat-X.txt"),
        0,
    );
    let u = format!("{BANNER}{}", fixture("onstat-u/oninit-onstat-u.txt"));
    let con = format!(
        "{BANNER}{}",
        fixture("onstat-g-con/oninit-onstat-g-con.txt")
    );
    let x = format!(
        "{BANNER}{}",
        fixture("onstat-X/ifxtop-seed-buffer-waits-4-pools.txt")
    );
    let ath = format!(
        "{BANNER}{}",
        fixture("onstat-g-ath/oninit-onstat-g-ath-truncated.txt")
    );
    apply(&mut s, Source::OnstatGAth, 0, &ath, 5);
    let tcp = fixture("proc-net-tcp/node_exporter-fixture-tcpstat.txt");
    let tcp6 = fixture("proc-net-tcp/ifxtop-tcp6-v4-mapped.txt");
    for t in 0..=30u64 {
        apply(&mut s, Source::OnstatU, t, &u, 5);
        apply(&mut s, Source::OnstatGCon, t, &con, 5);
        if t % 2 == 0 {
            apply(&mut s, Source::OnstatX, t, &x, 5);
        }
        apply(&mut s, Source::ProcNetTcp6, t, &tcp6, 0);
        apply(&mut s, Source::ProcNetTcp, t, &tcp, 0);
    }
    apply(&mut s, Source::NodesOnline, 25, "0-1\n", 0);
    for n in 0..2u32 {
        apply(
            &mut s,
            Source::NodeMeminfo(n),
            25,
            &fixture(&format!("node-meminfo/node_exporter-fixture-node{n}.txt")),
            0,
        );
    }
    apply(&mut s, Source::NodeCpulist(0), 25, "0-15,32-47\n", 0);
    apply(&mut s, Source::NodeCpulist(1), 25, "16-31,48-63\n", 0);
    apply(&mut s, Source::ZoneReclaimMode, 25, "1\n", 0);
    apply(
        &mut s,
        Source::Vmstat,
        25,
        "pgscan_kswapd 1000\npgscan_direct 10\n",
        0,
    );
    apply(
        &mut s,
        Source::Vmstat,
        30,
        "pgscan_kswapd 61000\npgscan_direct 5010\n",
        0,
    );
    apply(
        &mut s,
        Source::NumaMaps(4242),
        28,
        &fixture("numa_maps/drepper-2007-what-every-programmer-fig5.2-4node.txt"),
        0,
    );
    vitals(&mut s);
    s
}

/// The vital signs: two profiles 5 s apart (lock and buffer waits rising), two `-g glo` 10 s
/// apart, the logs, transactions, checkpoints, mutexes, latches, segments, the ready queue.
fn vitals(s: &mut Store) {
    let p = fixture("onstat-p/hcl-14.10-adr-0602-doc.txt");
    apply(s, Source::OnstatP, 25, &format!("{BANNER}{p}"), 5);
    let later = p.replace(
        "176       1         195872383",
        "236       61        195972383",
    );
    assert_ne!(later, p);
    apply(s, Source::OnstatP, 30, &format!("{BANNER}{later}"), 5);
    // Printed in the same second of the server's clock as the onstat -u beside it (a -g glo
    // of another second gives no busy %).
    let glo = fixture("onstat-g-glo/ifxtop-14.10-16-cpu-vps-wide-times.txt")
        .replace("Up 23 days 19:02:44", "Up 3 days 04:05:06");
    apply(s, Source::OnstatGGlo, 20, &glo, 5);
    let busier = glo.replace(
        " cpu         16        4542663.11 257580.43 4800243.54",
        " cpu         16        4542763.11 257600.43 4800363.54",
    );
    apply(s, Source::OnstatGGlo, 30, &busier, 5);
    for (source, rel) in [
        (Source::OnstatL, "onstat-l/hcl-onedb-2.0-adr-0598-doc.txt"),
        (
            Source::OnstatXTxn,
            "onstat-x-txn/ifxtop-12.10-long-txn-rolling-back.txt",
        ),
        (
            Source::OnstatGCkp,
            "onstat-g-ckp/ifxtop-20-checkpoints-5-blocking.txt",
        ),
        (
            Source::OnstatGLmx,
            "onstat-g-lmx/ifxtop-12.10-x86-three-waiters-no-holder.txt",
        ),
        (
            Source::OnstatS,
            "onstat-s/hcl-14.10-adr-0606-doc-blocked-ckpt.txt",
        ),
        (
            Source::OnstatGSeg,
            "onstat-g-seg/ifxtop-64-bit-locked-vx-m.txt",
        ),
        (
            Source::OnstatGRea,
            "onstat-g-rea/ifxtop-12.10-cpu-queue.txt",
        ),
    ] {
        let text = fixture(rel);
        // The doc's -l has no banner: give it one. The mutexes are joined to the onstat -u
        // only when printed in its second (their banners' uptimes agree): -g lmx is given the
        // onstat -u's banner, as one call prints them.
        let text = if source == Source::OnstatGLmx {
            format!(
                "{BANNER}{}",
                text.split_once("\n\n").map_or("", |(_, body)| body)
            )
        } else if text.contains(" Version ") {
            text
        } else {
            format!("{BANNER}{text}")
        };
        // Read at the moment of the last onstat -u (the grouped call and the -g ones of one
        // tick): a mutex's holder and waiters are joined to that moment only.
        apply(s, source, 30, &text, 5);
    }
}

const NOW: Duration = Duration::from_secs(30);

fn app(w: u16, h: u16, focus: &[Sid]) -> App {
    let st = store();
    let mut a = App::new(
        Keymap::default(),
        Theme::plain(),
        Mode::Live,
        Duration::from_secs(1),
    );
    a.server = Some("ol_oninit".into());
    a.size = (w, h);
    a.extents = ExtentStatus::Ready {
        what: "oncheck -pe".into(),
        extents: st.extents().map_or(0, |m| m.extent_count()),
        built_at: Duration::ZERO,
        age_at_load: Duration::ZERO,
    };
    a.set_snapshot(Arc::new(snapshot::build(
        &st,
        NOW,
        Some("ol_oninit"),
        focus,
    )));
    a
}

fn screen(a: &App, w: u16, h: u16) -> String {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    ifxtop::tui::views::render(a, NOW, area, &mut buf);
    ifxtop::tui::views::buffer_text(&buf)
}

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

#[test]
fn panes() {
    for (w, h) in SIZES {
        for (name, action) in [
            ("sessions", Action::PaneSessions),
            ("waiters", Action::PaneWaiters),
            ("buffers", Action::PaneBuffers),
            ("sockets", Action::PaneSockets),
            ("numa", Action::PaneNuma),
            ("server", Action::PaneServer),
        ] {
            let mut a = app(w, h, &[]);
            a.handle(action, NOW);
            let text = screen(&a, w, h);
            assert_eq!(text.lines().count(), usize::from(h));
            crate::snap_text!(format!("view__{name}__{w}x{h}"), text);
        }
    }
}

#[test]
fn help_screen() {
    for (w, h) in SIZES {
        let mut a = app(w, h, &[]);
        a.handle(Action::Help, NOW);
        let text = screen(&a, w, h);
        // At 160x48 all of it, down to what ifxtop costs (at 80x24 that is below: it scrolls).
        if h >= 48 {
            assert!(
                text.contains("ifxtop's cost: ifxtop's CPU not measured; onstat (simulated)")
                    && text.contains("processes, file"),
                "{text}"
            );
        }
        crate::snap_text!(format!("view__help__{w}x{h}"), text);
    }
}

#[test]
fn session_screen() {
    for (w, h) in SIZES {
        // sessid 54 waits on sm_read in the oninit capture.
        let mut a = app(w, h, &[Sid(54)]);
        a.drill.push(DrillUi {
            sid: Sid(54),
            selected: 0,
            scroll: 0,
        });
        let text = screen(&a, w, h);
        assert!(text.contains("session 54"), "{text}");
        crate::snap_text!(format!("view__session_54__{w}x{h}"), text);
    }
}

#[test]
fn frozen_badge_and_filter_prompt() {
    let mut a = app(80, 24, &[]);
    a.handle(Action::ToggleFreeze, NOW - Duration::from_secs(12));
    a.handle(Action::Filter, NOW);
    let text = screen(&a, 80, 24);
    assert!(text.contains("FROZEN 12s"), "{text}");
    assert!(text.contains("filter:"), "{text}");
}

#[test]
fn a_failed_source_keeps_its_data_and_says_why() {
    let mut st = store();
    st.apply(Update {
        source: Source::OnstatU,
        t: NOW,
        took: Duration::from_secs(10),
        result: Err(ifxtop::error::SourceError::Timeout {
            after: Duration::from_secs(10),
        }),
        how: Default::default(),
    });
    let mut a = App::new(
        Keymap::default(),
        Theme::plain(),
        Mode::Live,
        Duration::from_secs(1),
    );
    a.set_snapshot(Arc::new(snapshot::build(&st, NOW, Some("ol_oninit"), &[])));
    let text = screen(&a, 80, 24);
    assert!(text.contains("-u 0s!") || text.contains("-u 1s!"), "{text}");
    assert!(text.contains("timed out after 10s"), "{text}");
    assert!(text.contains("sm_read"), "last good data gone:\n{text}");
}

#[test]
fn an_empty_pane_says_why_and_where_to_look() {
    let fail = |e: ifxtop::error::SourceError| {
        let mut st = Store::new(StoreSettings::default());
        st.apply(Update {
            source: Source::OnstatU,
            t: NOW,
            took: Duration::ZERO,
            result: Err(e),
            how: Default::default(),
        });
        let mut a = App::new(
            Keymap::default(),
            Theme::plain(),
            Mode::Live,
            Duration::from_secs(1),
        );
        a.set_snapshot(Arc::new(snapshot::build(&st, NOW, Some("ol_prod"), &[])));
        screen(&a, 120, 24)
    };
    let text = fail(ifxtop::error::SourceError::NotFound {
        program: "onstat".into(),
    });
    assert!(
        text.contains("onstat -u failed: onstat: not found on PATH"),
        "{text}"
    );
    assert!(text.contains("is $INFORMIXDIR/bin on PATH?"), "{text}");
    // Another failure gets no PATH hint, even when its message mentions the words.
    let text = fail(ifxtop::error::SourceError::Failed {
        code: 1,
        stderr: "wrapper: not found on PATH".into(),
    });
    assert!(text.contains("onstat -u failed: exit code 1"), "{text}");
    assert!(!text.contains("INFORMIXDIR"), "{text}");
}

/// A lock chain in the real layouts (onstat -u, -k, systabnames): 812 holds, 813 and 815 wait
/// for it, 814 waits for 813.
fn lock_chain_store() -> Store {
    let u = format!(
        "{BANNER}Userthreads
address          flags   sessid   user     tty      wait             tout locks nreads   nwrites
4b4ad628         --BP--- 812      appuser  -        0                0    3     120      45
4b4adc40         L-BP--- 813      appuser  -        44a1b000         0    1     10       2
4b4ae258         L--P--- 814      batch    -        44a1b2c8         0    0     5        0
4b4ae870         L--P--- 815      report   -        44a1b000         0    0     7        0
4b4aee88         Y--P--- 816      appuser  -        4c000100         0    0     7        0
 5 active, 128 total, 12 maximum concurrent
"
    );
    let k = format!(
        "{BANNER}Locks
address          wtlist           owner            lklist           type     tblsnum  rowid    key#/bsiz
44a1a000         0                4b4ad628         0                HDR+IX   100105   0            0
44a1b000         4b4adc40         4b4ad628         44a1a000         HDR+X    100105   68           0
44a1b100         0                4b4ad628         44a1b000         HDR+X    100105   69           0
44a1b2c8         4b4ae258         4b4adc40         0                HDR+X    100106   12           0
 4 active, 20000 total, 16384 hash buckets, 0 lock table overflows
"
    );
    let tables = "1048837|stores:'informix'.customer\n1048838|stores:'informix'.orders\n";
    let mut s = Store::new(StoreSettings {
        ports: vec![9088],
        ..StoreSettings::default()
    });
    apply(&mut s, Source::Systabnames, 0, tables, 0);
    for t in 0..=30u64 {
        if t % 5 == 0 {
            apply(&mut s, Source::OnstatK, t, &k, 5);
        }
        apply(&mut s, Source::OnstatU, t, &u, 5);
    }
    apply(
        &mut s,
        Source::OnstatGSql(Sid(814)),
        29,
        &fixture("onstat-g-sql/ifxtop-sql-812.txt").replace("812  ", "814  "),
        5,
    );
    s
}

fn chain_app(w: u16, h: u16, focus: &[Sid]) -> App {
    let st = lock_chain_store();
    let mut a = App::new(
        Keymap::default(),
        Theme::plain(),
        Mode::Live,
        Duration::from_secs(1),
    );
    a.server = Some("ol_prod".into());
    a.size = (w, h);
    a.set_snapshot(Arc::new(snapshot::build(&st, NOW, Some("ol_prod"), focus)));
    a
}

/// `chain_app` with the session screen of `sid` open.
fn drilled_app(w: u16, h: u16, sid: Sid) -> App {
    let mut a = chain_app(w, h, &[sid]);
    a.drill.push(DrillUi {
        sid,
        selected: 0,
        scroll: 0,
    });
    a
}

#[test]
fn blocker_tree() {
    for (w, h) in SIZES {
        let mut a = chain_app(w, h, &[]);
        a.handle(Action::ToggleTree, NOW);
        let text = screen(&a, w, h);
        assert!(text.contains("HEAD sid 812"), "{text}");
        crate::snap_text!(format!("view__tree__{w}x{h}"), text);
    }
}

#[test]
fn session_screen_of_a_lock_waiter() {
    for (w, h) in SIZES {
        let a = drilled_app(w, h, Sid(814));
        let text = screen(&a, w, h);
        assert!(text.contains("HEAD BLOCKER"), "{text}");
        crate::snap_text!(format!("view__session_814__{w}x{h}"), text);
    }
}

#[test]
fn session_screen_of_a_head_blocker() {
    for (w, h) in SIZES {
        let a = drilled_app(w, h, Sid(812));
        let text = screen(&a, w, h);
        assert!(
            text.contains("BLOCKS    3 sessions wait for it: sid 813, 815, 814"),
            "{text}"
        );
        crate::snap_text!(format!("view__session_812__{w}x{h}"), text);
    }
}

/// The session screen with the plan of the query it runs: the doc figure's session 5
/// (`onstat -g pqs`, ids_adr_1077, cut inside its third row) given to 814, the nljoin over the
/// scan it reads (its other input was cut from the copy); 812 runs no query (the banner alone).
#[test]
fn session_screen_with_the_running_querys_plan() {
    let mut st = lock_chain_store();
    let pqs = fixture("onstat-g-pqs/hcl-14.10-adr-1077-doc-cut.txt").replace("   5 ", " 814 ");
    apply(
        &mut st,
        Source::OnstatGPqs(Sid(814)),
        29,
        &format!("{BANNER}{pqs}"),
        5,
    );
    apply(&mut st, Source::OnstatGPqs(Sid(812)), 29, BANNER, 5);
    let (w, h) = (80, 24);
    let open = |sid: Sid| {
        let mut a = App::new(
            Keymap::default(),
            Theme::plain(),
            Mode::Live,
            Duration::from_secs(1),
        );
        a.server = Some("ol_prod".into());
        a.size = (w, h);
        a.set_snapshot(Arc::new(snapshot::build(&st, NOW, Some("ol_prod"), &[sid])));
        a.drill.push(DrillUi {
            sid,
            selected: 0,
            scroll: 0,
        });
        screen(&a, w, h)
    };
    let text = open(Sid(814));
    assert!(
        text.contains("PLAN      nljoin  next  224,717 rows  1.82s"),
        "{text}"
    );
    assert!(
        text.contains("            scan  next  472 rows  0.20s"),
        "{text}"
    );
    crate::snap_text!(format!("view__session_814_plan__{w}x{h}"), text);
    let text = open(Sid(812));
    assert!(
        text.contains("PLAN      no query running (onstat -g pqs)"),
        "{text}"
    );
}

#[test]
fn control_characters_from_onstat_never_reach_the_screen() {
    // A user name with an escape sequence (clear screen) and a bell.
    let u = format!(
        "{BANNER}address  flags   sessid   user     tty      wait     tout locks nreads   nwrites
14a58b98 L--P--- 54       ev\x1b[2Jil\x07 -        44a1b000 0    1     1376     0
"
    );
    let mut st = Store::new(StoreSettings::default());
    apply(&mut st, Source::OnstatU, 30, &u, 5);
    let mut a = App::new(
        Keymap::default(),
        Theme::plain(),
        Mode::Live,
        Duration::from_secs(1),
    );
    a.set_snapshot(Arc::new(snapshot::build(&st, NOW, None, &[])));
    assert!(a.shown().waiters[0].user.contains('\x1b'));
    let area = Rect::new(0, 0, 80, 24);
    let mut buf = Buffer::empty(area);
    ifxtop::tui::views::render(&a, NOW, area, &mut buf);
    for cell in buf.content.iter() {
        assert!(
            !cell.symbol().chars().any(char::is_control),
            "control character drawn: {:?}",
            cell.symbol()
        );
    }
    assert!(ifxtop::tui::views::buffer_text(&buf).contains("[2J"));
}

/// The header names the host the instance runs on (over ssh, not the terminal's).
#[test]
fn the_header_names_the_host() {
    let mut a = app(80, 24, &[]);
    a.host = Some("db07".into());
    let text = screen(&a, 80, 24);
    let first = text.lines().next().unwrap_or_default();
    assert!(first.contains("ol_oninit@db07"), "{first}");
}

use common::demo_settings;

/// A screen of the demo's server at `w`x`h`, nothing shown yet.
fn demo_screen_app(w: u16, h: u16) -> App {
    let mut a = App::new(
        Keymap::default(),
        Theme::plain(),
        Mode::Demo { seed: 1 },
        Duration::from_secs(1),
    );
    a.server = Some("ol_demo".into());
    a.size = (w, h);
    a
}

fn demo_app(at: u64, w: u16, h: u16) -> App {
    demo_app_with(at, w, h, &[])
}

/// `demo_app`, with the screens of `drilled` sessions built too.
fn demo_app_with(at: u64, w: u16, h: u16, drilled: &[Sid]) -> App {
    let settings = demo_settings();
    let (store, _) = ifxtop::commands::snapshot::demo_store(
        ifxtop::demo::DemoInstance::new(1),
        Duration::from_secs(at - 40),
        Duration::from_secs(at),
        settings,
        false,
    )
    .expect("demo store");
    let mut a = demo_screen_app(w, h);
    a.set_snapshot(Arc::new(snapshot::build(
        &store,
        Duration::from_secs(at),
        Some("ol_demo"),
        drilled,
    )));
    a
}

fn demo_screen(a: &App, at: u64, w: u16, h: u16) -> String {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    ifxtop::tui::views::render(a, Duration::from_secs(at), area, &mut buf);
    ifxtop::tui::views::buffer_text(&buf)
}

/// What a DBA reads out on the call, the object and its chunk:page, is never cut before a lesser
/// column: at every width the buffer waiters of the all-NULL index leaf show both whole.
#[test]
fn waiting_on_keeps_the_object_and_its_page_at_every_width() {
    for (w, h) in [(100, 30), (120, 30), (140, 40), (160, 48), (200, 50)] {
        let mut a = demo_app(110, w, h);
        a.handle(Action::PaneWaiters, Duration::from_secs(110));
        let text = demo_screen(&a, 110, w, h);
        let rows: Vec<&str> = text.lines().filter(|l| l.contains(" buffer ")).collect();
        assert!(!rows.is_empty(), "{w}x{h}:\n{text}");
        for r in rows {
            assert!(
                r.contains("ix_orders_ship_date (stores) 4:133704"),
                "{w}x{h}: {r}\n{text}"
            );
        }
    }
}

/// At 80 columns the Buffers pane names the object and its database, not a cut
/// `stores:'informix'.ix_orders_s…`.
#[test]
fn buffers_at_80_columns_show_the_object_and_its_database() {
    let mut a = demo_app(110, 80, 24);
    a.handle(Action::PaneBuffers, Duration::from_secs(110));
    let text = demo_screen(&a, 110, 80, 24);
    assert!(text.contains("ix_orders_ship_date (stores)"), "{text}");
    assert!(!text.contains("'informix'.ix_orders_s"), "{text}");
}

/// A kept filter shows in the footer with how many rows it leaves, and how to edit or clear it.
#[test]
fn a_kept_filter_is_shown_with_n_of_m() {
    let mut a = demo_app(110, 80, 24);
    let now = Duration::from_secs(110);
    a.handle(Action::PaneWaiters, now);
    a.handle(Action::Filter, now);
    for c in "shipsvc".chars() {
        a.on_key(
            crossterm::event::KeyEvent::new(
                crossterm::event::KeyCode::Char(c),
                crossterm::event::KeyModifiers::NONE,
            ),
            now,
        );
    }
    a.on_key(
        crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Enter,
            crossterm::event::KeyModifiers::NONE,
        ),
        now,
    );
    let text = demo_screen(&a, 110, 80, 24);
    let footer = text.lines().last().unwrap_or_default();
    let shown = a.table().order.len();
    let total = a.shown().waiters.len();
    assert!(shown > 0 && shown < total, "{shown} of {total}");
    assert!(
        footer.contains(&format!("filter 'shipsvc': {shown} of {total}")),
        "{footer}"
    );
    assert!(footer.contains("/ edits"), "{footer}");
}

/// A status message too long for the line is cut with an ellipsis, and it expires.
#[test]
fn status_messages_are_cut_with_an_ellipsis_and_expire() {
    let mut a = demo_app(110, 80, 24);
    let long = format!(
        "exported a.txt and a.json to /{}",
        "very/long/directory/".repeat(6)
    );
    a.say(long, Duration::ZERO);
    let text = demo_screen(&a, 110, 80, 24);
    let footer = text.lines().last().unwrap_or_default();
    assert!(
        footer.starts_with("exported a.txt and a.json to /very"),
        "{footer}"
    );
    assert!(footer.ends_with('…'), "{footer}");
    a.clock = Duration::from_secs(60);
    let text = demo_screen(&a, 110, 80, 24);
    let footer = text.lines().last().unwrap_or_default();
    assert!(!footer.contains("exported"), "the message stays: {footer}");
}

/// Recording shows in the header with its size; stopped, it says so.
#[test]
fn recording_shows_in_the_header() {
    let mut a = demo_app(110, 80, 24);
    a.recording = Some(ifxtop::tui::app::RecordingUi {
        bytes: 1_200_000,
        stopped: None,
    });
    let text = demo_screen(&a, 110, 80, 24);
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.contains("REC 1.1 MB") || first.contains("REC 1.2 MB"),
        "{first}"
    );
    a.recording = Some(ifxtop::tui::app::RecordingUi {
        bytes: 1_200_000,
        stopped: Some("recording stopped: the file reached 512 MB".into()),
    });
    let text = demo_screen(&a, 110, 80, 24);
    assert!(
        text.lines()
            .next()
            .unwrap_or_default()
            .contains("REC stopped"),
        "{text}"
    );
}

/// A session screen taller than the terminal scrolls (PgDn): at 60x14 the lines below the fold,
/// its SQL among them, are reachable, and the screen says there is more.
#[test]
fn a_tall_session_screen_scrolls_on_a_small_terminal() {
    let (w, h) = (60, 14);
    let mut a = drilled_app(w, h, Sid(814));
    let first = screen(&a, w, h);
    assert!(first.contains("session 814"), "{first}");
    assert!(
        !first.contains("THREADS"),
        "not below the fold yet:\n{first}"
    );
    let mut seen = first.clone();
    for _ in 0..6 {
        a.handle(Action::PageDown, NOW);
        seen.push_str(&screen(&a, w, h));
    }
    assert!(seen.contains("THREADS"), "{seen}");
    assert!(seen.contains("LOCKS"), "{seen}");
}

/// The help overlay on a terminal too short for it says how to see the rest.
#[test]
fn help_cut_by_a_short_terminal_says_so() {
    let (w, h) = (80, 14);
    let mut a = app(w, h, &[]);
    a.handle(Action::Help, NOW);
    let text = screen(&a, w, h);
    assert!(text.contains("ifxtop help"), "{text}");
    let lower = text.to_lowercase();
    assert!(
        lower.contains("more") || lower.contains("pgdn") || lower.contains("taller"),
        "no hint that the help goes on:\n{text}"
    );
}
/// The demo at `to` as the live screen shows it (the real collectors from `to - 60`), on the
/// I/O & HA pane.
fn demo_io_app(to: u64, w: u16, h: u16) -> (App, Duration) {
    let to = Duration::from_secs(to);
    let settings = StoreSettings {
        ports: vec![ifxtop::demo::LISTENER_PORT],
        ..StoreSettings::default()
    };
    let (store, _) = ifxtop::commands::snapshot::demo_store(
        ifxtop::demo::DemoInstance::new(1),
        to - Duration::from_secs(60),
        to,
        settings,
        false,
    )
    .expect("the demo runs");
    let mut a = App::new(
        Keymap::default(),
        Theme::plain(),
        Mode::Live,
        Duration::from_secs(1),
    );
    a.server = Some("ol_demo".into());
    a.size = (w, h);
    a.set_snapshot(Arc::new(snapshot::build(&store, to, Some("ol_demo"), &[])));
    a.handle(Action::PaneIo, to);
    (a, to)
}

fn demo_io_screen(a: &App, now: Duration, w: u16, h: u16) -> String {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    ifxtop::tui::views::render(a, now, area, &mut buf);
    ifxtop::tui::views::buffer_text(&buf)
}

/// Both storage and replication incidents of the demo on the I/O & HA pane, and in the
/// header's vitals line, at both sizes: the slow chunk first with its device chain and the
/// verdict that looks below Informix; the secondary with transmission blocked.
#[test]
fn io_pane_at_the_demo_incidents() {
    for (w, h) in SIZES {
        let (a, now) = demo_io_app(620, w, h);
        let text = demo_io_screen(&a, now, w, h);
        assert_eq!(text.lines().count(), usize::from(h));
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[2].contains("slow disk 45ms (datadbs2)"), "{text}");
        let first_row = lines
            .iter()
            .position(|l| l.starts_with(" CHK DBSPACE"))
            .and_then(|i| lines.get(i + 1))
            .expect("a chunk row under the titles");
        assert!(first_row.contains("datadbs2"), "slowest first:\n{text}");
        assert!(
            text.contains("VERDICT   the device is slow: 45 ms await"),
            "{text}"
        );
        assert!(text.contains("look below"), "{text}");
        assert!(text.contains("→ mpathb"), "{text}");
        crate::snap_text!(format!("view__io_slow_device__{w}x{h}"), text);

        let (a, now) = demo_io_app(700, w, h);
        let text = demo_io_screen(&a, now, w, h);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[2].contains("ol_dr1 BLOCKED"), "{text}");
        let peer = lines
            .iter()
            .find(|l| l.trim_start().starts_with("ol_dr1"))
            .expect("the peer's row");
        assert!(peer.contains("RSS") && peer.contains("Blocked"), "{peer}");
        assert!(text.contains("log transmission blocked"), "{text}");
        crate::snap_text!(format!("view__io_replica_lag__{w}x{h}"), text);
    }
}

/// The fleet line carries the worst chunk latency and the replication lag: the slow device at
/// 620 s and the blocked secondary at 700 s need a look; at 110 s (a lock chain, disks calm)
/// neither does.
#[test]
fn fleet_line_has_the_worst_chunk_and_the_replication_lag() {
    let row = |to| {
        let (a, now) = demo_io_app(to, 160, 48);
        ifxtop::model::fleet::row("ol_demo", a.shown(), now)
    };
    let slow = row(620);
    assert!(slow.worst_chunk_ms.is_some_and(|ms| ms >= 40.0), "{slow:?}");
    assert!(slow.alarm, "{slow:?}");
    let lag = row(700);
    let text = lag.replication_lag.clone().unwrap_or_default();
    assert!(text.starts_with("ol_dr1 BLOCKED "), "{text}");
    assert!(lag.replication_alarm && lag.alarm, "{lag:?}");
    let calm = row(110);
    assert!(calm.worst_chunk_ms.is_some_and(|ms| ms < 20.0), "{calm:?}");
    assert!(!calm.replication_alarm, "{calm:?}");
}

/// The line under the header names the top finding with a marker that needs no colour, at 80
/// columns, and says so when the server is calm.
#[test]
fn the_top_finding_is_named_under_the_header() {
    let a = demo_app(300, 80, 24);
    let text = demo_screen(&a, 300, 80, 24);
    let line = text.lines().nth(3).unwrap_or_default();
    assert!(
        line.starts_with(" ✖ lock chain") || line.starts_with(" ⚠ lock chain"),
        "{text}"
    );
    assert!(line.contains("sid 812 holds up 3"), "{line}");
    let calm = demo_app(95 - 5, 80, 24);
    let text = demo_screen(&calm, 90, 80, 24);
    let line = text.lines().nth(3).unwrap_or_default();
    assert_eq!(line.trim_end(), " ✓ calm: no finding above info", "{text}");
}

/// Until two `onstat -g glo` have been read (10 s apart) the CPU VPs' load is not known: the
/// line under the header does not call calm a server whose CPU it could not judge, and says
/// what it does not know yet. Watched long enough, the same moment is the CPU saturation.
#[test]
fn a_server_is_not_called_calm_before_its_cpu_load_is_known() {
    let at = 475;
    let (store, _) = ifxtop::commands::snapshot::demo_store(
        ifxtop::demo::DemoInstance::new(1),
        Duration::from_secs(at - 3),
        Duration::from_secs(at),
        demo_settings(),
        false,
    )
    .expect("demo store");
    let mut a = demo_screen_app(80, 24);
    a.set_snapshot(Arc::new(snapshot::build(
        &store,
        Duration::from_secs(at),
        Some("ol_demo"),
        &[],
    )));
    let text = demo_screen(&a, at, 80, 24);
    let line = text.lines().nth(3).unwrap_or_default();
    assert_eq!(
        line.trim_end(),
        " ✓ no finding above info so far (CPU VP load not known yet)",
        "{text}"
    );
    let watched = demo_app(at, 80, 24);
    let text = demo_screen(&watched, at, 80, 24);
    let line = text.lines().nth(3).unwrap_or_default();
    assert!(line.starts_with(" ⚠ CPU saturated"), "{text}");
}

/// `f` lists every finding over the panes, the worst first, with its evidence and what helps;
/// any key closes it.
#[test]
fn f_lists_every_finding() {
    for (w, h) in [(80, 24), (160, 48)] {
        let mut a = demo_app(235, w, h);
        a.handle(Action::Findings, Duration::from_secs(235));
        assert!(a.findings);
        let text = demo_screen(&a, 235, w, h);
        assert!(text.contains("checkpoint blocked"), "{text}");
        assert!(text.contains("what helps:"), "{text}");
        crate::snap_text!(format!("view__findings_checkpoint__{w}x{h}"), text);
        a.handle(Action::Findings, Duration::from_secs(235));
        assert!(!a.findings);
    }
}

/// The Activity pane (8) over the demo's lock chain (sampled each second from 290 s to 320 s),
/// grouped by class, then drilled into the class on top (its sessions). (The oninit capture
/// would show nothing: its only session waits are for clients whose sockets it does not hold,
/// which are not counted as database time.)
#[test]
fn activity_pane() {
    use ifxtop::model::activity::{Activity, Class};
    let (from, to) = (290u64, 320u64);
    let mut activity = Activity::new();
    let (store, _) = ifxtop::instance::walk::demo_store_sampled(
        ifxtop::demo::DemoInstance::new(1),
        Duration::from_secs(from),
        Duration::from_secs(to),
        demo_settings(),
        false,
        Some(&mut activity),
        None,
    )
    .expect("demo store");
    let base = snapshot::build(&store, Duration::from_secs(to), Some("ol_demo"), &[]);
    let end = base.moment_s.expect("a moment");
    for (w, h) in SIZES {
        let at = Duration::from_secs(to);
        let mut a = demo_screen_app(w, h);
        a.wall_start = Some(ifxtop::demo::EPOCH);
        a.handle(Action::PaneActivity, at);
        let attach = |a: &mut App| {
            let mut snap = base.clone();
            snap.activity = Some(activity.report(&a.activity.query(end)));
            snap.activity_chart = activity.chart(end - 300.0, end).copied().collect();
            a.set_snapshot(Arc::new(snap));
        };
        attach(&mut a);
        let report = a.shown().activity.clone().expect("a report");
        let lock = report
            .by_class
            .iter()
            .find(|(c, _)| *c == Class::Lock)
            .map_or(0.0, |(_, s)| *s);
        // The chain's three waiters, the whole 30 s.
        assert!(lock >= 80.0, "{report:?}");
        let text = demo_screen(&a, to, w, h);
        assert!(text.contains("DB TIME 5 min"), "{text}");
        assert!(
            text.contains("812"),
            "the chain's head blocker named\n{text}"
        );
        crate::snap_text!(format!("view__activity__{w}x{h}"), text);
        a.handle(Action::DrillDown, at);
        attach(&mut a);
        let text = demo_screen(&a, to, w, h);
        assert!(text.contains("by session"), "{text}");
        crate::snap_text!(format!("view__activity_drilled__{w}x{h}"), text);
        // A span's cursor stops at the end of the chart's first 5 s step, five minutes back.
        a.handle(Action::SpanPick, at);
        for _ in 0..100 {
            a.handle(Action::ReplaySeekBack, at);
        }
        assert_eq!(a.activity.pick.map(|p| p.cursor), Some(end - 295.0));
        a.handle(Action::Back, at);
    }
}

/// `v` picks a span of the Activity chart and Enter narrows the table to it ("since when"):
/// over a window holding the demo's checkpoint stall (215-260 s) and lock chain (275-345 s),
/// the keys pick 270-350 s, and the table is the report of exactly that span, the stall's
/// checkpoint and lock time gone and the chain's lock time all there; Esc gives the whole
/// window back.
#[test]
fn a_span_picked_on_the_activity_chart_narrows_the_table() {
    use ifxtop::model::activity::{Activity, Class, Key, Query};
    let (from, to) = (200u64, 370u64);
    let mut activity = Activity::new();
    let settings = demo_settings();
    let (store, _) = ifxtop::instance::walk::demo_store_sampled(
        ifxtop::demo::DemoInstance::new(1),
        Duration::from_secs(from),
        Duration::from_secs(to),
        settings,
        false,
        Some(&mut activity),
        None,
    )
    .expect("demo store");
    let base = snapshot::build(&store, Duration::from_secs(to), Some("ol_demo"), &[]);
    let end = base.moment_s.expect("a moment");
    let attach = |a: &mut App| {
        let mut snap = base.clone();
        snap.activity = Some(activity.report(&a.activity.query(end)));
        snap.activity_chart = activity.chart(end - 300.0, end).copied().collect();
        a.set_snapshot(Arc::new(snap));
    };
    let secs = |r: &ifxtop::model::activity::Report, c: Class| {
        r.by_class
            .iter()
            .find(|(k, _)| *k == c)
            .map_or(0.0, |(_, s)| *s)
    };
    for (w, h) in SIZES {
        let at = Duration::from_secs(to);
        let mut a = demo_screen_app(w, h);
        a.wall_start = Some(ifxtop::demo::EPOCH);
        a.handle(Action::PaneActivity, at);
        attach(&mut a);
        let whole = a.shown().activity.clone().expect("a report");
        assert!(secs(&whole, Class::Checkpoint) > 0.0, "{whole:?}");
        assert!(secs(&whole, Class::Lock) > 0.0, "{whole:?}");
        // v: the cursor on the newest step (5 s of a 5-minute window), marked there.
        a.handle(Action::SpanPick, at);
        let pick = a.activity.pick.expect("picking");
        assert_eq!((pick.mark, pick.cursor), (370.0, 370.0));
        for _ in 0..4 {
            a.handle(Action::ReplaySeekBack, at);
        }
        a.handle(Action::SpanPick, at);
        for _ in 0..16 {
            a.handle(Action::ReplaySeekBack, at);
        }
        assert_eq!(a.activity.span, None, "not narrowed while picking");
        let text = demo_screen(&a, to, w, h);
        let title = format!("span {}-{}", a.moment_words(270.0), a.moment_words(350.0));
        assert!(text.contains(&title), "{title}\n{text}");
        crate::snap_text!(format!("view__activity_span_picking__{w}x{h}"), text);
        // Enter: the table is the span's report.
        a.handle(Action::DrillDown, at);
        assert_eq!(a.activity.span, Some((270.0, 350.0)));
        assert!(a.activity.pick.is_none());
        attach(&mut a);
        let narrowed = a.shown().activity.clone().expect("a report");
        let direct = activity.report(&Query {
            from: 270.0,
            to: 350.0,
            keys: vec![Key::Class],
            filter: None,
            top: 200,
        });
        assert_eq!(narrowed, direct);
        assert_eq!(secs(&narrowed, Class::Checkpoint), 0.0, "{narrowed:?}");
        // The lock time in the window is the chain's, and that of the two inserters the stall's
        // session in its critical section locks out of order_log.
        let stall = activity.report(&Query {
            from: 0.0,
            to: 270.0,
            keys: vec![Key::Class],
            filter: None,
            top: 200,
        });
        assert!(secs(&stall, Class::Lock) > 0.0, "{stall:?}");
        assert_eq!(
            secs(&narrowed, Class::Lock) + secs(&stall, Class::Lock),
            secs(&whole, Class::Lock),
            "every second of lock time in the window is the chain's or the stall's"
        );
        let text = demo_screen(&a, to, w, h);
        assert!(
            text.contains(&format!(
                "{}-{} (Esc)",
                a.moment_words(270.0),
                a.moment_words(350.0)
            )),
            "{text}"
        );
        crate::snap_text!(format!("view__activity_span__{w}x{h}"), text);
        // Esc: the whole window again.
        a.handle(Action::Back, at);
        assert_eq!(a.activity.span, None);
        attach(&mut a);
        assert_eq!(a.shown().activity.as_ref(), Some(&whole));
        // Picking, Esc cancels and narrows nothing; the cursor stops at the chart's ends.
        a.handle(Action::SpanPick, at);
        for _ in 0..100 {
            a.handle(Action::ReplaySeekBack, at);
        }
        assert_eq!(a.activity.pick.map(|p| p.cursor), Some(75.0));
        a.handle(Action::End, at);
        a.handle(Action::ReplaySeekForward, at);
        assert_eq!(a.activity.pick.map(|p| p.cursor), Some(370.0));
        a.handle(Action::Back, at);
        assert!(a.activity.pick.is_none() && a.activity.span.is_none());
        assert!(!a.quit);
        // In a replay, picking takes ←/→ from the seek (no replay command), and says so.
        a.replay = Some(ifxtop::collect::replay::ReplayUi::default());
        a.handle(Action::SpanPick, at);
        assert!(a.handle(Action::ReplaySeekBack, at).is_empty(), "no seek");
        assert_eq!(a.activity.pick.map(|p| p.cursor), Some(365.0));
        let text = demo_screen(&a, to, w, h);
        let footer = text.lines().last().unwrap_or_default();
        assert!(footer.contains("←/→ move"), "{footer}");
        a.handle(Action::Back, at);
        assert!(
            !a.handle(Action::ReplaySeekBack, at).is_empty(),
            "a seek again"
        );
    }
}

/// The keys a screen reads out are whole: at 60 columns a session's WAITS ON keeps how long
/// (wrapped, as the verdict is); the tree's HEAD line says how many it blocks before its state;
/// a line too long for the screen ends in `…`, never silently.
#[test]
fn body_lines_keep_their_numbers_or_say_they_are_cut() {
    let (w, h) = (60, 20);
    let a = drilled_app(w, h, Sid(814));
    let text = screen(&a, w, h);
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("WAITS ON"))
        .expect("a WAITS ON line");
    let mut waits = lines[at].to_string();
    for l in &lines[at + 1..] {
        if !l.starts_with("          ") {
            break;
        }
        waits.push_str(l);
    }
    assert!(waits.contains(" for "), "{waits}\n{text}");
    for (w, h) in [(60, 20), (80, 24)] {
        let mut a = chain_app(w, h, &[]);
        a.handle(Action::ToggleTree, NOW);
        let text = screen(&a, w, h);
        let head = text
            .lines()
            .find(|l| l.starts_with("HEAD sid 812"))
            .unwrap_or_default();
        assert!(head.contains("blocks 3"), "{w}x{h}: {head}\n{text}");
    }
    // Every body line at 60 columns either fits or ends in the mark.
    for action in [Action::PaneServer, Action::PaneNuma, Action::PaneSessions] {
        let mut a = app(60, 20, &[]);
        a.handle(action, NOW);
        let text = screen(&a, 60, 20);
        for l in text.lines().skip(5) {
            assert!(l.chars().count() <= 60, "{l}");
        }
    }
}

/// Counts agree with their nouns: session 813 holds up one session.
#[test]
fn one_session_waits_for_it() {
    let a = drilled_app(80, 24, Sid(813));
    let text = screen(&a, 80, 24);
    assert!(text.contains("1 session waits for it: sid 814"), "{text}");
    assert!(!text.contains(" 1 locks"), "{text}");
}

/// In a replay a session nobody opened while recording has no SQL, and never will: the screen
/// says it is not in the recording, not "not known yet".
#[test]
fn a_replay_says_the_sql_is_not_in_the_recording() {
    let mut a = drilled_app(80, 24, Sid(813));
    let live = screen(&a, 80, 24);
    assert!(live.contains("not known yet"), "{live}");
    a.replay = Some(ifxtop::collect::replay::ReplayUi::default());
    let replay = screen(&a, 80, 24);
    assert!(
        replay.contains("SQL       not in the recording"),
        "{replay}"
    );
    assert!(!replay.contains("not known yet"), "{replay}");
}

/// The help at 60x20 does not fit: it says how much is below, the moving keys scroll it to its
/// last line, and another key closes it.
#[test]
fn the_help_scrolls_on_a_small_terminal() {
    let (w, h) = (60, 20);
    let mut a = app(w, h, &[]);
    a.handle(Action::Help, NOW);
    let first = screen(&a, w, h);
    assert!(first.contains("more lines (↓/PgDn)"), "{first}");
    let last_line = "-u 2s in the header";
    assert!(!first.contains(last_line), "{first}");
    let key = |code| crossterm::event::KeyEvent::new(code, crossterm::event::KeyModifiers::NONE);
    a.on_key(key(crossterm::event::KeyCode::Down), NOW);
    assert!(a.help, "↓ scrolls, it does not close");
    let down = screen(&a, w, h);
    assert_ne!(first, down, "one line down");
    for _ in 0..5 {
        a.on_key(key(crossterm::event::KeyCode::PageDown), NOW);
    }
    let end = screen(&a, w, h);
    assert!(end.contains(last_line), "{end}");
    assert!(end.contains("end of help"), "{end}");
    crate::snap_text!("view__help_scrolled__60x20", end);
    a.on_key(key(crossterm::event::KeyCode::Char('k')), NOW);
    assert!(a.help);
    a.on_key(key(crossterm::event::KeyCode::Esc), NOW);
    assert!(!a.help);
    assert!(a.drill.is_empty() && !a.quit);
}

/// The Server pane's cursor goes from one line naming a session to the next (↑/↓, Home, End),
/// not through every profile line; PgDn moves a page.
#[test]
fn the_server_cursor_steps_between_sessions() {
    // The demo's mutex contention, long transaction or lock chain: lines naming sessions
    // under the profile.
    let at = [530u64, 390, 290]
        .into_iter()
        .find(|&at| {
            let mut a = demo_app(at, 160, 48);
            a.handle(Action::PaneServer, Duration::from_secs(at));
            demo_screen(&a, at, 160, 48).contains(" sid ")
        })
        .expect("a demo moment with sessions on the Server pane");
    let mut a = demo_app(at, 80, 24);
    let now = Duration::from_secs(at);
    a.handle(Action::PaneServer, now);
    assert_eq!(a.selected_sid(), None, "the top line names no session");
    a.handle(Action::Down, now);
    let first = a.selected_sid();
    assert!(first.is_some(), "one ↓ reaches a session's line");
    let first_at = a.table().selected;
    a.handle(Action::End, now);
    assert!(a.selected_sid().is_some(), "End: the last session's line");
    let last_at = a.table().selected;
    assert!(last_at >= first_at);
    a.handle(Action::Home, now);
    assert_eq!(a.table().selected, first_at);
    assert_eq!(a.selected_sid(), first);
    a.handle(Action::Up, now);
    assert_eq!(a.table().selected, 0, "above the first session: the top");
    a.handle(Action::PageDown, now);
    assert!(a.table().selected > 1, "PgDn moves more than a line");
}

/// A terminal without UTF-8 (LANG=C) gets ASCII frames: the help's corners are `+`, not `?`.
#[test]
fn a_c_locale_gets_ascii_frames() {
    let (w, h) = (80, 24);
    let mut theme = Theme::plain();
    theme.ascii = true;
    let mut a = App::new(Keymap::default(), theme, Mode::Live, Duration::from_secs(1));
    a.size = (w, h);
    a.handle(Action::Help, NOW);
    let text = screen(&a, w, h);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[1].trim_start().starts_with('+'), "{text}");
    assert!(lines[1].ends_with('+'), "{text}");
    assert!(
        lines[h as usize - 1].trim_start().starts_with('+'),
        "{text}"
    );
    assert!(!lines[1].contains('?'), "{text}");
    assert!(text.is_ascii(), "{text}");
}

/// An empty section of the text report says none rather than a header over nothing.
#[test]
fn empty_report_sections_say_none() {
    let text = ifxtop::tui::report::text(&snapshot::Snapshot::default()).to_string();
    for (section, none) in [
        ("WAITERS", "none waiting"),
        ("SESSIONS (busiest first)", "none active"),
        ("BUFFER HOT SPOTS", "none"),
        ("SOCKETS (by Send-Q)", "none"),
    ] {
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.starts_with(section))
            .unwrap_or_else(|| panic!("no {section}:\n{text}"));
        // The header, the column titles, then the word.
        let after = lines.get(at + 2).copied().unwrap_or_default();
        assert!(after.contains(none), "{section}: {after}\n{text}");
    }
}

/// The export message at 80 columns keeps the directory's end (where the files are), shortened
/// from the left.
#[test]
fn the_export_message_shows_where() {
    let mut a = demo_app(110, 80, 24);
    let note = ifxtop::tui::share::export_note(
        &[
            "ifxtop-20261122-133520-k3j9.txt".to_string(),
            "ifxtop-20261122-133520-k3j9.json".to_string(),
        ],
        "/home/dba/incidents/2026/november/db01-lock-chain-on-orders",
        80,
    );
    a.say(note, Duration::ZERO);
    let text = demo_screen(&a, 110, 80, 24);
    let footer = text.lines().last().unwrap_or_default();
    assert!(
        footer.starts_with("exported ifxtop-20261122-133520-k3j9.txt"),
        "{footer}"
    );
    assert!(footer.ends_with("db01-lock-chain-on-orders"), "{footer}");
    assert!(footer.contains('…'), "{footer}");
}

/// At 60 columns the tabs name every pane: the other panes by number when their short titles do
/// not fit, never a cut `8 Ac`.
#[test]
fn tabs_at_60_columns_show_all_eight() {
    let mut a = app(60, 20, &[]);
    a.handle(Action::PaneWaiters, NOW);
    let text = screen(&a, 60, 20);
    let tabs = text.lines().nth(4).unwrap_or_default();
    assert!(tabs.contains("2 Waiters"), "{tabs}");
    assert!(tabs.trim_end().ends_with(" 8"), "{tabs}");
    assert!(tabs.chars().count() <= 60, "{tabs}");
}

/// htop's `P` on the demo's CPU saturation: the Sessions pane sorted by CPU% (two `onstat -g
/// cpu` samples joined through `-g ath` and `-u`), the busiest first; Enter opens the busiest
/// session, whose screen says its CPU and over what.
#[test]
fn sessions_by_cpu_at_the_cpu_saturation() {
    for (w, h) in SIZES {
        let mut a = demo_app(480, w, h);
        a.handle(Action::SortCpu, Duration::from_secs(480));
        let text = demo_screen(&a, 480, w, h);
        assert!(text.contains("CPU%▼"), "{text}");
        // The column ends under `CPU%` (counted in characters: `≥` and `▼` are wider in bytes).
        let header = text.lines().find(|t| t.contains("CPU%▼")).expect("titles");
        let end = header.chars().take_while(|c| *c != '▼').count() + 1;
        let cpu_col = |l: &str| -> Option<f64> {
            let cell: String = l.chars().take(end).collect();
            cell.split_whitespace()
                .last()?
                .trim_start_matches('≥')
                .parse()
                .ok()
        };
        let shown: Vec<f64> = text
            .lines()
            .skip_while(|l| !l.contains("CPU%▼"))
            .skip(1)
            .filter_map(cpu_col)
            .collect();
        assert!(shown.len() >= 5, "{text}");
        assert!(shown.windows(2).all(|p| p[0] >= p[1]), "{shown:?}\n{text}");
        assert!(shown[0] > 0.0, "{text}");
        crate::snap_text!(format!("view__sessions_by_cpu__{w}x{h}"), text);
        // The busiest session's screen.
        let sid = a.selected_sid().expect("a session selected");
        let mut a = demo_app_with(480, w, h, &[sid]);
        a.drill.push(DrillUi {
            sid,
            selected: 0,
            scroll: 0,
        });
        let text = demo_screen(&a, 480, w, h);
        let line = text
            .lines()
            .find(|l| l.starts_with("CPU "))
            .unwrap_or_else(|| panic!("no CPU line:\n{text}"));
        let pct: f64 = line
            .trim_start_matches("CPU")
            .trim_start()
            .split('%')
            .next()
            .and_then(|p| p.trim_start_matches('≥').parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        assert!(
            (pct - shown[0]).abs() <= 0.5 && line.contains("% of a core over 10s (onstat -g cpu)"),
            "{line} (the list said {})",
            shown[0]
        );
    }
}

/// `compact_bytes` read back (`764K`, `12.3M`): bytes, to the printed precision.
fn size_cell(cell: &str) -> Option<f64> {
    let (n, unit) = cell.split_at(cell.len().checked_sub(1)?);
    let scale = match unit {
        "B" => 1.0,
        "K" => 1024.0,
        "M" => 1024.0 * 1024.0,
        "G" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(n.parse::<f64>().ok()? * scale)
}

/// htop's `M` on the demo: the Sessions pane sorted by each session's memory (`onstat -g ses`,
/// the list, read every 30 s), the most first, the list's age in the pane's title. At 80
/// columns MEM has no room (WAITING ON keeps its width) and `M` still sorts; at 160 the column
/// shows. Enter opens the first session, whose screen says its memory and how old it is.
#[test]
fn sessions_by_memory() {
    // 23 s after the list's read at 287 s (it is read 17 s past each half-minute).
    const AT: u64 = 310;
    for (w, h) in SIZES {
        let mut a = demo_app(AT, w, h);
        a.handle(Action::SortMem, Duration::from_secs(AT));
        let msg = a.current_message().unwrap_or_default().to_string();
        assert!(
            msg.starts_with("sorted by MEM, descending (onstat -g ses, "),
            "{msg}"
        );
        let text = demo_screen(&a, AT, w, h);
        let snap = a.shown();
        let at = snap.session_memory_at_s.expect("the list was read");
        let age_s = (snap.at_s - at).round();
        assert!((0.0..60.0).contains(&age_s), "{at} at {}", snap.at_s);
        let age = format!("{age_s}s");
        let title = if w < 100 {
            format!(" · MEM {age} old")
        } else {
            format!(" · MEM from onstat -g ses {age} ago")
        };
        assert!(text.contains(&title), "{title}\n{text}");
        // The order, whether the column shows or not: the most memory first.
        let order: Vec<Option<u64>> = a
            .table()
            .order
            .iter()
            .map(|&i| snap.sessions[i].memory_bytes)
            .collect();
        assert!(order.iter().take(5).all(Option::is_some), "{order:?}");
        assert!(
            order.windows(2).all(|p| p[0] >= p[1] || p[1].is_none()),
            "{order:?}"
        );
        if w >= 90 {
            let header = text.lines().find(|t| t.contains("MEM▼")).expect("titles");
            let end = header.chars().take_while(|c| *c != '▼').count() + 1;
            let shown: Vec<f64> = text
                .lines()
                .skip_while(|l| !l.contains("MEM▼"))
                .skip(1)
                .filter_map(|l| {
                    let cell: String = l.chars().take(end).collect();
                    size_cell(cell.split_whitespace().last()?)
                })
                .collect();
            assert!(shown.len() >= 5, "{text}");
            assert!(shown.windows(2).all(|p| p[0] >= p[1]), "{shown:?}\n{text}");
        } else {
            let header = text
                .lines()
                .find(|t| t.trim_start().starts_with("SID "))
                .expect("titles");
            assert!(!header.contains("MEM"), "no room at {w}: {text}");
        }
        crate::snap_text!(format!("view__sessions_by_memory__{w}x{h}"), text);
        // The first session's screen: its memory, and of when.
        let sid = a.selected_sid().expect("a session selected");
        let top = snap
            .sessions
            .iter()
            .find(|s| s.sessid == sid)
            .and_then(|s| s.memory_bytes)
            .expect("the first has a figure");
        let mut a = demo_app_with(AT, w, h, &[sid]);
        a.drill.push(DrillUi {
            sid,
            selected: 0,
            scroll: 0,
        });
        let text = demo_screen(&a, AT, w, h);
        let line = text
            .lines()
            .find(|l| l.starts_with("MEMORY "))
            .unwrap_or_else(|| panic!("no MEMORY line:\n{text}"));
        let kb = format!("{:.0} KB", top as f64 / 1024.0);
        let mb = format!("{:.1} MB", top as f64 / 1024.0 / 1024.0);
        assert!(
            (line.contains(&kb) || line.contains(&mb)) && line.contains(" ago"),
            "{line} (the list said {top})"
        );
    }
}

/// Watching together, as a viewer sees it: the header keeps `ATTACHED +0.4s · 2 watching` at
/// 80 columns (whom it follows goes first), and the help lists who watches (user, how, from
/// where, since when, how far behind, which is you), the last mark, and what the feed costs.
#[test]
fn a_viewer_sees_who_watches_in_the_help_and_how_far_behind_in_the_header() {
    use ifxtop::collect::wire::{Mark, Presence};
    use ifxtop::instance::share::Watching;
    let viewer = |id: u64, user: &str, via: &str, host: &str, behind: f64| Presence {
        id,
        user: user.into(),
        host: Some(host.into()),
        via: via.into(),
        since: "2026-11-22T13:30:05Z".into(),
        behind_s: Some(behind),
        queued_bytes: 0,
        view: None,
    };
    for (w, h) in [(80, 24), (160, 48)] {
        let mut a = app(w, h, &[]);
        a.watching = Some(Box::new(Watching {
            following: Some("https://dba@db01:19088/feed (informix@db01)".into()),
            behind_s: Some(0.4),
            viewers: vec![
                viewer(1, "informix", "socket", "10.0.0.5", 0.2),
                viewer(2, "dba", "http", "laptop7", 1.5),
            ],
            marks: vec![Mark {
                at: 30.0,
                text: "sid 812 holds the chain".into(),
                by: "informix".into(),
            }],
            you: Some(2),
            bytes: 4 << 20,
            bytes_per_s: Some(350_000.0),
            ..Watching::default()
        }));
        let text = screen(&a, w, h);
        let header = text.lines().next().unwrap_or_default();
        assert!(header.contains("ATTACHED +0.4s · 2 watching"), "{header}");
        assert_eq!(header.contains("informix@db01"), w >= 160, "{header}");
        a.handle(Action::Help, NOW);
        for _ in 0..10 {
            a.on_key(
                crossterm::event::KeyEvent::new(
                    crossterm::event::KeyCode::PageDown,
                    crossterm::event::KeyModifiers::NONE,
                ),
                NOW,
            );
        }
        let help = screen(&a, w, h);
        assert!(help.contains("Watching together: following"), "{help}");
        let row = |who: &str| {
            help.lines()
                .find(|l| l.contains(who) && l.contains(" since "))
                .unwrap_or_else(|| panic!("no row of {who}:\n{help}"))
                .to_string()
        };
        let informix = row("informix ");
        assert!(
            informix.contains("socket") && informix.contains("10.0.0.5"),
            "{informix}"
        );
        assert!(informix.contains("0.2s behind") && !informix.contains("(you)"));
        let dba = row("dba ");
        assert!(dba.contains("http") && dba.contains("laptop7"), "{dba}");
        assert!(
            dba.contains("1.5s behind") && dba.contains("(you)"),
            "{dba}"
        );
        assert!(help.contains("mark by informix:"), "{help}");
        assert!(help.contains("sid 812 holds the chain"), "{help}");
        let flat: String = help
            .replace('│', " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(flat.contains("0.4s behind the collector"), "{help}");
        assert!(
            flat.contains("a viewer: nothing run on the server for it, the feed 342 KB/s"),
            "{help}"
        );
    }
}
