//! The list panes (Waiters, Buffers, Sockets): a summary line, then the generic table; an error
//! panel or "waiting for first data" when there is nothing to show yet.

use crate::collect::extents::ExtentStatus;
use crate::error::Failure;
use crate::format::human_bytes;
use crate::model::snapshot::Snapshot;
use crate::parsers::onstat_u::WaitReason;
use crate::tui::app::App;
use crate::tui::keymap::Action;
use crate::tui::panes::{Column, ListPane, Order, Pane, PaneRows, SessionCol};
use crate::tui::table::TableView;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// The sources a pane is drawn from, to explain an empty pane.
fn pane_sources(pane: Pane) -> &'static [&'static str] {
    match pane {
        Pane::Sessions => &["onstat -u"],
        Pane::Waiters => &["onstat -u", "onstat -g con"],
        Pane::Buffers => &["onstat -X"],
        Pane::Sockets => &["/proc/net/tcp", "netstat -an"],
        Pane::Numa => &["/proc/vmstat"],
        Pane::Server => &["onstat -p"],
        Pane::Io => &["onstat -D"],
        Pane::Activity => &["onstat -u"],
    }
}

pub(crate) fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let snap = app.shown();
    let theme = &app.theme;
    if area.height < 2 {
        return;
    }
    let summary = summary_line(app, snap, area.width);
    super::set_line_cut(buf, area.x, area.y, &summary, area.width);
    let table_area = Rect {
        y: area.y + 1,
        height: area.height - 1,
        ..area
    };
    let t = app.table();
    if app.tree_shown(app.pane) {
        tree(app, snap, table_area, buf);
        return;
    }
    if t.order.is_empty() {
        let msg = empty_message(app, snap);
        buf.set_line(
            table_area.x,
            table_area.y + 1,
            &Line::from(Span::styled(msg, theme.dim)),
            table_area.width,
        );
        return;
    }
    let Some(list) = app.pane.list() else {
        return;
    };
    let rows = PaneRows { list, snap };
    let columns = list.columns();
    let specs: Vec<_> = columns.iter().map(|c| c.spec()).collect();
    let sort = match t.sort {
        Order::By { column, desc } => columns.iter().position(|c| *c == column).map(|i| (i, desc)),
        Order::Grouped => None,
    };
    TableView {
        cols: &specs,
        order: &t.order,
        rows: &rows,
        selected: Some(t.selected),
        offset: t.offset,
        sort,
        theme,
    }
    .render(table_area, buf);
}

fn empty_message(app: &App, snap: &Snapshot) -> String {
    let sources = pane_sources(app.pane);
    for s in sources {
        if let Some(st) = snap.sources.iter().find(|x| x.source == *s) {
            if let Some(e) = &st.error {
                if st.age_s.is_none() {
                    let hint = if st.failure == Some(Failure::NotFound) {
                        " (is $INFORMIXDIR/bin on PATH? `ifxtop --demo` runs without a server)"
                    } else {
                        ""
                    };
                    return format!("{s} failed: {e}{hint}");
                }
            }
        }
    }
    let seen = snap
        .sources
        .iter()
        .any(|x| sources.contains(&x.source.as_str()));
    if !app.table().filter.is_empty() {
        return format!(
            "no row matches the filter '{}'{}",
            app.table().filter,
            app.hint(Action::Back, "clears it")
        );
    }
    match app.pane {
        _ if !seen => format!("waiting for first data ({})", sources.join(", ")),
        Pane::Sessions if app.hide_idle => format!(
            "no session but idle ones{}",
            app.hint(Action::ToggleIdle, "shows them")
        ),
        Pane::Sessions => "no user session (only the server's own threads)".to_string(),
        Pane::Waiters if app.hide_idle && snap.summary.idle > 0 => {
            format!(
                "no waiters but {} idle client waits{}",
                snap.summary.idle,
                app.hint(Action::ToggleIdle, "shows them")
            )
        }
        Pane::Waiters => "no thread is waiting".to_string(),
        Pane::Buffers => "no buffer has had waiters yet (onstat -X shows none)".to_string(),
        Pane::Sockets => "no client connection on the listener ports".to_string(),
        Pane::Io => "onstat -D lists no chunk".to_string(),
        Pane::Numa | Pane::Server | Pane::Activity => String::new(),
    }
}

/// The line above a list: what its rows add up to, and how they are ordered.
fn summary_line<'a>(app: &'a App, snap: &'a Snapshot, width: u16) -> Line<'a> {
    let mut spans: Vec<Span> = Vec::new();
    match app.pane {
        Pane::Sessions => sessions_summary(app, snap, width < 100, &mut spans),
        Pane::Waiters => waiters_summary(app, snap, width, &mut spans),
        Pane::Buffers => buffers_summary(app, snap, &mut spans),
        Pane::Sockets => sockets_summary(app, snap, &mut spans),
        Pane::Numa | Pane::Server | Pane::Io | Pane::Activity => {}
    }
    off_screen_sort(app, width, &mut spans);
    Line::from(spans)
}

/// The Sessions pane's summary: running, waiting, idle, holding others up; the age of MEM when
/// sorted by it; what the grouped order is.
fn sessions_summary(app: &App, snap: &Snapshot, narrow: bool, spans: &mut Vec<Span<'_>>) {
    use crate::model::sessions::SessionState;
    let theme = &app.theme;
    let count = |st: SessionState| snap.sessions.iter().filter(|s| s.state == st).count();
    // Brief mutex waits are the background of any busy server: not "blocking".
    let blocking = snap
        .sessions
        .iter()
        .filter(|s| !s.blocks.is_empty() && !s.harm.background)
        .count();
    let (ses, run, wait, idle, holding) = if narrow {
        ("ses", "run", "wait", "idle", "blocking")
    } else {
        (
            "sessions",
            "running",
            "waiting",
            "idle",
            "holding others up",
        )
    };
    spans.push(Span::raw(format!(
        "{} {ses}: {} {run}, ",
        snap.sessions.len(),
        count(SessionState::Running)
    )));
    let waiting = count(SessionState::Waiting);
    spans.push(Span::styled(
        format!("{waiting} {wait}"),
        if waiting > 0 {
            theme.warn
        } else {
            Style::new()
        },
    ));
    spans.push(Span::raw(format!(", {} {idle}", count(SessionState::Idle))));
    if blocking > 0 {
        spans.push(Span::styled(format!(" · {blocking} {holding}"), theme.hot));
    }
    if app.hide_idle {
        let key = app.hint(Action::ToggleIdle, "");
        spans.push(Span::styled(format!(" · idle hidden{key}"), theme.dim));
    }
    // Sorted by memory, the age of the list it comes from (read every 30 s).
    let by_mem = Column::Session(SessionCol::Mem);
    if matches!(app.table().sort, Order::By { column, .. } if column == by_mem) {
        let text = match snap.session_memory_at_s {
            Some(at) if narrow => format!(
                " · MEM {} old",
                crate::format::human_duration(snap.at_s - at)
            ),
            Some(at) => format!(
                " · MEM from onstat -g ses {} ago",
                crate::format::human_duration(snap.at_s - at)
            ),
            None => " · MEM not read yet".to_string(),
        };
        spans.push(Span::styled(text, theme.dim));
    }
    if app.table().sort == Order::Grouped {
        spans.push(Span::styled(
            if narrow {
                " · by activity".to_string()
            } else {
                format!(
                    " · ordered: {}{}",
                    ListPane::Sessions.grouped_label(),
                    app.hint(Action::SortNext, "sorts")
                )
            },
            theme.dim,
        ));
    }
}

/// The Waiters pane's summary: a count per wait reason (coloured by its longest wait), threads
/// and sessions, the idle, what the grouped order is.
fn waiters_summary(app: &App, snap: &Snapshot, width: u16, spans: &mut Vec<Span<'_>>) {
    let theme = &app.theme;
    let narrow = width < 100;
    for r in WaitReason::ALL
        .iter()
        .filter(|r| **r != WaitReason::Defunct)
    {
        let n = snap
            .summary
            .by_reason
            .get(&r.letter())
            .copied()
            .unwrap_or(0);
        // A count is only an alarm when its waits last: a mutex or lock wait of a
        // second is everyday traffic.
        let longest = snap
            .waiters
            .iter()
            .filter(|w| w.reason == *r && !w.idle)
            .map(|w| w.in_wait_s)
            .fold(0.0, f64::max);
        let style = if n == 0 {
            theme.dim
        } else if *r == WaitReason::Condition {
            Style::new()
        } else {
            theme.wait_style(longest)
        };
        let text = if width < 100 {
            format!("{}{n} ", r.letter())
        } else {
            format!("{} {n}  ", r.letter())
        };
        spans.push(Span::styled(text, style));
    }
    if narrow {
        spans.push(Span::raw(" "));
    }
    spans.push(Span::raw(if narrow {
        format!("{} thr {} ses", snap.summary.threads, snap.summary.sessions)
    } else {
        format!(
            "{} {}",
            crate::format::count(snap.summary.threads as u64, "thread", "threads"),
            crate::format::count(snap.summary.sessions as u64, "session", "sessions")
        )
    }));
    if snap.summary.idle > 0 {
        let verb = if app.hide_idle { "hidden" } else { "shown" };
        let key = app.hint(Action::ToggleIdle, "");
        let text = if narrow {
            format!(" · {} idle{key}", snap.summary.idle)
        } else {
            format!(" · {} idle {verb}{key}", snap.summary.idle)
        };
        spans.push(Span::styled(text, theme.dim));
    }
    if app.table().sort == Order::Grouped && !app.tree {
        // The grouped default order marks no column: it says what it is here.
        spans.push(Span::styled(
            if narrow {
                " · by concern".to_string()
            } else {
                format!(
                    " · ordered by {}{}",
                    ListPane::Waiters.grouped_label(),
                    app.hint(Action::SortNext, "sorts")
                )
            },
            theme.dim,
        ));
    }
}

/// The Buffers pane's summary: the window, and the extent map the objects are named from.
fn buffers_summary(app: &App, snap: &Snapshot, spans: &mut Vec<Span<'_>>) {
    let theme = &app.theme;
    let window = snap.hotspots.first().map_or(0, |h| h.window_samples);
    spans.push(Span::raw(format!(
        "buffer waits · window {window} samples · "
    )));
    let retry = app
        .key_of(Action::RebuildExtents)
        .map_or_else(String::new, |k| format!("; {k} retries"));
    spans.push(match &app.extents {
        ExtentStatus::Ready { extents, what, .. } => {
            let mut s = format!("map {extents} extents from {what}");
            if let Some(u) = snap.unresolved_share.filter(|u| *u > 0.0) {
                s.push_str(&format!(" · {:.0}% pages unresolved", u * 100.0));
            }
            Span::raw(s)
        }
        ExtentStatus::Building { what, .. } => Span::styled(
            format!("building extent map ({what}); pages shown as chunk:page"),
            theme.warn,
        ),
        ExtentStatus::Failed {
            error,
            in_use: Some(extents),
            ..
        } => Span::styled(
            format!("older map of {extents} extents in use: rebuild failed ({error}){retry}"),
            theme.warn,
        ),
        ExtentStatus::Failed { error, .. } => {
            Span::styled(format!("no extent map ({error}){retry}"), theme.error)
        }
        ExtentStatus::None => Span::styled(
            match app.key_of(Action::RebuildExtents) {
                Some(k) => {
                    format!("no extent map: pages shown as chunk:page (--extents FILE or {k})")
                }
                None => "no extent map: pages shown as chunk:page (--extents FILE)".to_string(),
            },
            theme.dim,
        ),
    });
}

/// The Sockets pane's summary: the listener ports, the connections, what is queued.
fn sockets_summary(app: &App, snap: &Snapshot, spans: &mut Vec<Span<'_>>) {
    let theme = &app.theme;
    let total: u64 = snap.sockets.iter().map(|s| s.send_q).sum();
    let queued = snap.sockets.iter().filter(|s| s.send_q > 0).count();
    if snap.ports.is_empty() {
        spans.push(Span::styled(
            "listener port unknown: every TCP connection shown (--port N) · ",
            theme.warn,
        ));
    } else {
        let ports: Vec<String> = snap.ports.iter().map(|p| p.to_string()).collect();
        spans.push(Span::raw(format!("port {} · ", ports.join(","))));
    }
    spans.push(Span::raw(format!(
        "{} connection{} · {queued} with Send-Q · {} queued",
        snap.sockets.len(),
        if snap.sockets.len() == 1 { "" } else { "s" },
        human_bytes(total)
    )));
}

/// A sort marker only shows on a column on screen: say what the rows are sorted by when the
/// column is not.
fn off_screen_sort(app: &App, width: u16, spans: &mut Vec<Span<'_>>) {
    let theme = &app.theme;
    if let (Order::By { column, .. }, Some(list)) = (app.table().sort, app.pane.list()) {
        let specs: Vec<_> = list.columns().iter().map(|c| c.spec()).collect();
        let pos = list.columns().iter().position(|c| *c == column);
        let visible = crate::tui::table::layout(&specs, width)
            .iter()
            .any(|(i, _)| Some(*i) == pos);
        if !visible && !app.tree_shown(app.pane) {
            spans.push(Span::styled(
                format!(
                    " · sorted by {} (off screen)",
                    list.order_label(app.table().sort)
                ),
                theme.warn,
            ));
        }
    }
}

/// The Waiters pane as blocker trees: each head blocker, then the sessions it holds up, each
/// under its direct blocker. Every line is selectable (Enter opens its session).
fn tree(app: &App, snap: &Snapshot, area: Rect, buf: &mut Buffer) {
    use crate::model::tree::TreeItem;
    let theme = &app.theme;
    let t = app.table();
    if t.order.is_empty() {
        let msg = if app.table().filter.is_empty() {
            let back = app
                .key_of(Action::ToggleTree)
                .map_or_else(String::new, |k| format!("; {k}: list"));
            format!(
                "no session blocks another (no lock, buffer, checkpoint or critical section holds \
                 up a waiter){back}"
            )
        } else {
            format!(
                "no line matches the filter '{}'{}",
                app.table().filter,
                app.hint(Action::Back, "clears it")
            )
        };
        // Wrapped, not cut: the way back (`t: list`) is at its end.
        let lines = crate::tui::table::wrap(&msg, usize::from(area.width).max(1));
        for (y, l) in (area.y + 1..area.y + area.height).zip(lines) {
            buf.set_line(
                area.x,
                y,
                &Line::from(Span::styled(l, theme.dim)),
                area.width,
            );
        }
        return;
    }
    let height = usize::from(area.height);
    let offset = t.offset.min(t.order.len().saturating_sub(1));
    let offset = if t.selected >= offset + height {
        t.selected + 1 - height
    } else if t.selected < offset {
        t.selected
    } else {
        offset
    };
    for (y, pos) in (area.y..area.y + area.height).zip(offset..t.order.len()) {
        let Some(line) = snap.tree.get(t.order[pos]) else {
            continue;
        };
        let (text, style) = match line.item {
            TreeItem::Head(sid) => {
                let h = snap.heads.iter().find(|h| h.sid == sid);
                let crit = snap
                    .sessions
                    .iter()
                    .any(|s| s.sessid == sid && s.critical_section);
                // What it holds the others up by: the logs (the oldest transaction under
                // Blocked:LONGTX), the checkpoint (a critical section), or its own state.
                let holds_logs = snap
                    .waiters
                    .iter()
                    .any(|w| w.reason == WaitReason::LogBuffer && w.head_blocker == Some(sid));
                let holds_checkpoint = snap
                    .waiters
                    .iter()
                    .any(|w| w.reason == WaitReason::Checkpoint && w.blockers.contains(&sid));
                let text = match h {
                    // The counts before the state, and what it holds up before why: a narrow
                    // screen cuts the end.
                    Some(h) => format!(
                        "HEAD sid {} {}  blocks {}, {}, {}",
                        h.sid,
                        h.user,
                        h.blocked,
                        crate::format::count(h.locks, "lock", "locks"),
                        if holds_logs {
                            "holds the logs: the oldest transaction"
                        } else if crit && holds_checkpoint {
                            "holds up the checkpoint: in a critical section"
                        } else if crit {
                            "in a critical section"
                        } else {
                            h.state.as_str()
                        },
                    ),
                    None => format!("HEAD sid {sid}"),
                };
                (text, theme.hot)
            }
            TreeItem::Deadlock(sid) => (
                format!("DEADLOCK: sessions waiting on each other (lowest sid {sid})"),
                theme.error,
            ),
            TreeItem::Waiter(i) => {
                let Some(w) = snap.waiters.get(i) else {
                    continue;
                };
                let mut prefix = String::new();
                for more in &line.guides {
                    prefix.push_str(if *more { "│ " } else { "  " });
                }
                prefix.push_str(if line.last { "└ " } else { "├ " });
                (
                    // The time before what it waits on: a narrow screen cuts the end.
                    format!(
                        "{prefix}sid {} {}  {} {}  {}",
                        w.sessid,
                        w.user,
                        w.reason.short(),
                        crate::format::human_duration_bound(w.in_wait_s, w.in_wait_s_at_least),
                        w.waiting_on_short(),
                    ),
                    app.theme.wait_style(w.in_wait_s),
                )
            }
        };
        let style = if pos == t.selected {
            style.patch(theme.selected)
        } else {
            style
        };
        let padded = crate::tui::table::fit(&text, area.width, false);
        buf.set_stringn(area.x, y, padded, usize::from(area.width), style);
    }
}
