//! Budget (DESIGN.md §6): a frame of any pane with 10,000 rows renders in under 2 ms (only the
//! visible rows are formatted). Renders into a 200x50 buffer, as a big terminal would.

use criterion::{criterion_group, criterion_main, Criterion};
use ifxtop::ids::{Addr, Sid};
use ifxtop::model::snapshot::Snapshot;
use ifxtop::model::waiters::WaitTarget;
use ifxtop::model::waiters::{SocketRef, WaiterRow};
use ifxtop::parsers::onstat_u::WaitReason;
use ifxtop::parsers::sockets::{Endpoint, TcpState};
use ifxtop::store::hotspots::HotspotRow;
use ifxtop::store::sockets::SocketRow;
use ifxtop::tui::app::{App, DrillUi, Mode};
use ifxtop::tui::keymap::{Action, Keymap};
use ifxtop::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use std::sync::Arc;
use std::time::Duration;

const ROWS: usize = 10_000;

fn snapshot() -> Snapshot {
    let mut snap = Snapshot::default();
    for i in 0..ROWS {
        let remote = Endpoint::new(
            &format!("10.1.{}.{}", i / 250, i % 250),
            &format!("{}", 40_000 + i),
        );
        let local = Endpoint::new("10.0.0.5", "9088");
        snap.waiters.push(WaiterRow {
            rstcb: Addr(0x4400_0000 + i as u64 * 0x5b0),
            sessid: Sid(1000 + i as u64),
            user: format!("user{}", i % 37).into(),
            flags: "Y--P---".into(),
            reason: if i % 10 == 0 {
                WaitReason::Buffer
            } else {
                WaitReason::Condition
            },
            waiting_on: WaitTarget::Condition {
                address: Addr(0x4480_0000 + i as u64),
                name: Some("netnorm".into()),
                waittime: Some(i as u64 % 500),
            },
            in_wait_s: (i % 900) as f64,
            in_wait_s_at_least: false,
            locks: (i % 4) as u64,
            reads_per_s: Some((i % 100) as f64),
            writes_per_s: Some(0.5),
            idle: i % 3 == 0,
            idle_unknown: false,
            socket: Some(SocketRef {
                local: local.clone(),
                remote: remote.clone(),
                send_q: (i * 37 % 250_000) as u64,
                recv_q: 0,
                max_send_q: 250_000,
                queued_for_s: Some(10.0),
            }),
            blockers: Vec::new(),
            head_blocker: None,
            deadlock: false,
            engine_blocker: None,
            verdict: "waiting for its client to read: 12 KB queued (see FET_BUF_SIZE)".into(),
        });
        snap.hotspots.push(HotspotRow {
            object: format!("stores:'informix'.table_{i}"),
            dbspace: Some("datadbs1".into()),
            resolved: true,
            samples_window: (i % 60) as u64,
            window_samples: 60,
            waiters_window: (i % 300) as u64,
            samples_total: i as u64,
            waiters_total: i as u64 * 3,
            distinct_pages: (i % 40) as u64,
            current_waiters: (i % 5) as u64,
            longest_streak: (i % 30) as u32,
            trend: (0..60).map(|k| ((k * i) % 9) as u64).collect(),
            owner: Some(Addr(0x4400_0000)),
            owner_sid: Some(Sid(i as u64)),
            span_s: (i % 30) as f64,
        });
        snap.sockets.push(SocketRow {
            local,
            remote,
            state: Some(TcpState::Established),
            send_q: (i * 37 % 250_000) as u64,
            recv_q: 0,
            max_send_q: 250_000,
            trend: (0..60).map(|k| ((k * i) % 1000) as u64).collect(),
            queued_for_s: Some(10.0),
            sessid: Some(Sid(1000 + i as u64)),
            user: Some("app".into()),
        });
    }
    snap
}

fn bench(c: &mut Criterion) {
    let mut app = App::new(
        Keymap::default(),
        Theme::colored(),
        Mode::Demo { seed: 1 },
        Duration::from_secs(1),
    );
    app.size = (200, 50);
    app.set_snapshot(Arc::new(snapshot()));
    let area = Rect::new(0, 0, 200, 50);
    let now = Duration::from_secs(100);
    let panes = [
        ("waiters", Action::PaneWaiters),
        ("buffers", Action::PaneBuffers),
        ("sockets", Action::PaneSockets),
        ("numa", Action::PaneNuma),
    ];
    let mut g = c.benchmark_group("render_200x50_10k_rows");
    for (name, action) in panes {
        app.handle(action, now);
        // Scroll to the middle: the visible window is not the first rows.
        for _ in 0..100 {
            app.handle(Action::PageDown, now);
        }
        g.bench_function(name, |b| {
            let mut buf = Buffer::empty(area);
            b.iter(|| {
                buf.reset();
                ifxtop::tui::views::render(&app, now, area, &mut buf);
            })
        });
    }
    app.handle(Action::PaneWaiters, now);
    app.drill.push(DrillUi {
        sid: Sid(1500),
        selected: 0,
        scroll: 0,
    });
    g.bench_function("session", |b| {
        let mut buf = Buffer::empty(area);
        b.iter(|| {
            buf.reset();
            ifxtop::tui::views::render(&app, now, area, &mut buf);
        })
    });
    g.finish();
    // Sorting and filtering run on data changes, not per frame, but must stay cheap too.
    c.bench_function("order_10k_waiters_after_update", |b| {
        let snap = Arc::new(snapshot());
        // On the Waiters pane (the loop above left the NUMA report, which is not sorted).
        app.handle(Action::PaneWaiters, now);
        b.iter(|| app.set_snapshot(snap.clone()))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
