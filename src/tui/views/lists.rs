//! The list panes (Waiters, Buffers, Sockets): a summary line, then the generic table; an error
//! panel or "waiting for first data" when there is nothing to show yet.

use crate::collect::extents::ExtentStatus;
use crate::error::Failure;
use crate::format::human_bytes;
use crate::model::snapshot::Snapshot;
use crate::parsers::onstat_u::WaitReason;
use crate::tui::app::App;
use crate::tui::panes::{Order, Pane, PaneRows};
use crate::tui::table::TableView;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

/// The sources a pane is drawn from, to explain an empty pane.
fn pane_sources(pane: Pane) -> &'static [&'static str] {
    match pane {
        Pane::Waiters => &["onstat -u", "onstat -g con"],
        Pane::Buffers => &["onstat -X"],
        Pane::Sockets => &["/proc/net/tcp", "netstat -an"],
        Pane::Numa => &["/proc/vmstat"],
    }
}

pub(crate) fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let snap = app.shown();
    let theme = &app.theme;
    if area.height < 2 {
        return;
    }
    let summary = summary_line(app, snap, area.width);
    buf.set_line(area.x, area.y, &summary, area.width);
    let table_area = Rect {
        y: area.y + 1,
        height: area.height - 1,
        ..area
    };
    let t = app.table();
    if app.pane == Pane::Waiters && app.tree {
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
    let rows = PaneRows {
        pane: app.pane,
        snap,
    };
    let columns = app.pane.columns();
    let specs: Vec<_> = columns.iter().map(|c| c.spec()).collect();
    let sort = match t.sort {
        Order::By { column, desc } => columns.iter().position(|c| *c == column).map(|i| (i, desc)),
        Order::Concern => None,
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
            "no row matches the filter '{}' (Esc clears it)",
            app.table().filter
        );
    }
    match app.pane {
        _ if !seen => format!("waiting for first data ({})", sources.join(", ")),
        Pane::Waiters if app.hide_idle && snap.summary.idle > 0 => {
            format!(
                "no waiters but {} idle client waits (i shows them)",
                snap.summary.idle
            )
        }
        Pane::Waiters => "no thread is waiting".to_string(),
        Pane::Buffers => "no buffer has had waiters yet (onstat -X shows none)".to_string(),
        Pane::Sockets => "no client connection on the listener ports".to_string(),
        Pane::Numa => String::new(),
    }
}

fn summary_line<'a>(app: &'a App, snap: &'a Snapshot, width: u16) -> Line<'a> {
    let theme = &app.theme;
    let mut spans: Vec<Span> = Vec::new();
    match app.pane {
        Pane::Waiters => {
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
                let style = if n > 0 && *r != WaitReason::Condition {
                    theme.hot
                } else if n > 0 {
                    theme.title
                } else {
                    theme.dim
                };
                let text = if width < 100 {
                    format!("{}{n} ", r.letter())
                } else {
                    format!("{} {n}  ", r.letter())
                };
                spans.push(Span::styled(text, style));
            }
            let narrow = width < 100;
            if narrow {
                spans.push(Span::raw(" "));
            }
            spans.push(Span::raw(if narrow {
                format!("{} thr {} ses", snap.summary.threads, snap.summary.sessions)
            } else {
                format!(
                    "{} threads {} sessions",
                    snap.summary.threads, snap.summary.sessions
                )
            }));
            if snap.summary.idle > 0 {
                let verb = if app.hide_idle { "hidden" } else { "shown" };
                let text = if narrow {
                    format!(" · {} idle (i)", snap.summary.idle)
                } else {
                    format!(" · {} idle {verb} (i)", snap.summary.idle)
                };
                spans.push(Span::styled(text, theme.dim));
            }
            if app.table().sort == Order::Concern && !app.tree {
                // The grouped default order marks no column: it says what it is here.
                spans.push(Span::styled(
                    if narrow {
                        " · by concern"
                    } else {
                        " · ordered by concern, then time in wait (s sorts)"
                    },
                    theme.dim,
                ));
            }
        }
        Pane::Buffers => {
            let window = snap.hotspots.first().map_or(0, |h| h.window_samples);
            spans.push(Span::raw(format!(
                "buffer waits · window {window} samples · "
            )));
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
                ExtentStatus::Failed { error, .. } => {
                    Span::styled(format!("no extent map ({error}); R retries"), theme.error)
                }
                ExtentStatus::None => Span::styled(
                    "no extent map: pages shown as chunk:page (--extents FILE or R)",
                    theme.dim,
                ),
            });
        }
        Pane::Sockets => {
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
        Pane::Numa => {}
    }
    Line::from(spans)
}

/// The Waiters pane as blocker trees: each head blocker, then the sessions its chain holds up.
fn tree(app: &App, snap: &Snapshot, area: Rect, buf: &mut Buffer) {
    let theme = &app.theme;
    let t = app.table();
    if snap.heads.is_empty() {
        buf.set_line(
            area.x,
            area.y + 1,
            &Line::from(Span::styled(
                "no session blocks another (no lock or buffer owner holds up a waiter); t: list",
                theme.dim,
            )),
            area.width,
        );
        return;
    }
    // Lines: (text, style, position in `order` when it is a waiter line).
    let mut lines: Vec<(String, ratatui::style::Style, Option<usize>)> = Vec::new();
    let mut pos = 0usize;
    for h in &snap.heads {
        lines.push((
            format!(
                "HEAD sid {} {}  {}, {} lock{}  — blocks {}",
                h.sid,
                h.user,
                h.state,
                h.locks,
                if h.locks == 1 { "" } else { "s" },
                h.blocked
            ),
            theme.hot,
            None,
        ));
        while let Some(&row) = t.order.get(pos) {
            let Some(w) = snap.waiters.get(row) else {
                break;
            };
            if w.head_blocker != Some(h.sid) {
                break;
            }
            let depth = w.blockers.len();
            let indent = "  ".repeat(depth.saturating_sub(1));
            lines.push((
                // The time before what it waits on: a narrow screen cuts the end of the line.
                format!(
                    "{indent}└ sid {} {}  {} {}  {}",
                    w.sessid,
                    w.user,
                    w.reason.short(),
                    crate::format::human_duration(w.in_wait_s),
                    w.waiting_on.describe(),
                ),
                ratatui::style::Style::new(),
                Some(pos),
            ));
            pos += 1;
        }
    }
    let height = usize::from(area.height);
    let sel_line = lines
        .iter()
        .position(|(_, _, p)| *p == Some(t.selected))
        .unwrap_or(0);
    let offset = sel_line.saturating_sub(height.saturating_sub(1));
    for (y, (text, style, p)) in (area.y..area.y + area.height).zip(lines.iter().skip(offset)) {
        let style = if *p == Some(t.selected) {
            style.patch(theme.selected)
        } else {
            *style
        };
        let padded = crate::tui::table::fit(text, area.width, false);
        buf.set_stringn(area.x, y, padded, usize::from(area.width), style);
    }
}
