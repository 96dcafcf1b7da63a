//! The I/O & HA pane: is it the disk? Each chunk with Informix's page rates and its own time per
//! operation beside the device's await and %util (slowest first, the await's last minutes as a
//! sparkline); under the table the selected chunk's way down to its disks and the verdict in
//! words. Is it the replica? Each secondary's lag in log pages and seconds, whether log
//! transmission to it is blocked, its last acknowledgement; on a secondary, how far behind it is.

use crate::format::{human_duration, thousands};
use crate::model::io::{ChunkRow, Concern, Peer, Replication};
use crate::model::snapshot::Snapshot;
use crate::tui::app::App;
use crate::tui::panes::{ms, spark_floor, ListPane, Order, PaneRows};
use crate::tui::table::{wrap, TableView};
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

fn concern_style(c: Concern, theme: &Theme) -> Style {
    match c {
        Concern::Alarm => theme.error,
        Concern::Warn => theme.warn,
        _ => Style::new(),
    }
}

/// `label` in a 10-column margin, then `text` wrapped under it.
fn labelled(label: &str, text: &str, width: u16, style: Style, head: Style) -> Vec<Line<'static>> {
    let w = usize::from(width).saturating_sub(10).max(20);
    wrap(text, w)
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            let lead = if i == 0 {
                format!("{label:<10}")
            } else {
                " ".repeat(10)
            };
            Line::from(vec![Span::styled(lead, head), Span::styled(l, style)])
        })
        .collect()
}

/// Informix's time per operation in words: `31 ms (last 20 s)`, `1.2 ms since the reset`.
fn ifx_words(v: Option<f64>, over: Option<f64>) -> String {
    match (v, over) {
        (None, _) => "-".into(),
        (Some(v), Some(s)) => format!("{} ms (last {})", ms(v), human_duration(s)),
        (Some(v), None) => format!("{} ms since its counters' reset", ms(v)),
    }
}

/// The selected chunk: its way down to the disks, Informix's and the device's figures, the
/// verdict. `full` adds the figures (when there is room).
pub(crate) fn chunk_lines(
    c: &ChunkRow,
    width: u16,
    theme: &Theme,
    full: bool,
) -> Vec<Line<'static>> {
    let head = theme.column_header;
    let mut way = format!(
        "{} {}",
        c.path,
        c.chunk_kind.map(|k| format!("({k})")).unwrap_or_default()
    );
    if c.device.is_some() {
        way.push_str(&format!(" → {}", c.device_label()));
        for l in &c.layers {
            way.push_str(&format!(" → {l}"));
        }
        if !c.disks.is_empty() {
            let disks: Vec<String> = c
                .disks
                .iter()
                .map(|d| match (d.await_ms, d.util_pct) {
                    (Some(a), Some(u)) => format!("{} {} ms {u:.0}%", d.name, ms(a)),
                    _ => d.name.clone(),
                })
                .collect();
            way.push_str(&format!(" → {}", disks.join(", ")));
        }
    }
    let mut out = labelled(
        &format!("CHUNK {}", c.chunk),
        &way,
        width,
        Style::new(),
        head,
    );
    if let Some(why) = &c.device_unknown {
        out.extend(labelled(
            "DEVICE",
            &format!("unknown: {why}"),
            width,
            theme.warn,
            head,
        ));
    }
    if full {
        let side = |what: &str, rate: Option<f64>, avg: Option<f64>, over: Option<f64>| match rate {
            None => format!("{what} -"),
            Some(r) if r == 0.0 && avg.is_none() => format!("no {what}"),
            Some(r) => format!(
                "{what} {} pages/s at {}",
                if r < 10.0 {
                    format!("{r:.1}")
                } else {
                    format!("{r:.0}")
                },
                ifx_words(avg, over)
            ),
        };
        out.extend(labelled(
            "INFORMIX",
            &format!(
                "{}, {}",
                side("reads", c.reads_per_s, c.avg_read_ms, c.avg_read_over_s),
                side("writes", c.writes_per_s, c.avg_write_ms, c.avg_write_over_s),
            ),
            width,
            Style::new(),
            head,
        ));
        if let (Some(iops), Some(aw), Some(u)) =
            (c.device_iops, c.device_await_ms, c.device_util_pct)
        {
            let rw = match (c.device_r_await_ms, c.device_w_await_ms) {
                (Some(r), Some(w)) => format!(" (read {}, write {})", ms(r), ms(w)),
                _ => String::new(),
            };
            out.extend(labelled(
                "DEVICE",
                &format!("{iops:.0} I/O/s, await {} ms{rw}, {u:.0} % util", ms(aw)),
                width,
                Style::new(),
                head,
            ));
        }
    }
    if let Some(v) = &c.verdict {
        out.extend(labelled(
            "VERDICT",
            v,
            width,
            concern_style(c.concern, theme),
            head,
        ));
    }
    out
}

fn lag_words(p: &Peer) -> String {
    match (p.lag_s, p.lag_s_at_least) {
        (Some(s), _) => human_duration(s),
        (None, Some(s)) => format!(">{}", human_duration(s)),
        _ => "-".into(),
    }
}

/// The replication section: the role, one row per peer with its verdict under it, or on a
/// secondary how far behind it is.
pub(crate) fn replication_lines(r: &Replication, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let head = theme.column_header;
    let dim = theme.dim;
    let mut out = Vec::new();
    let Some(role) = &r.role else {
        out.push(Line::from(vec![
            Span::styled("REPLICATION  ", head),
            Span::styled("waiting for the banner (onstat -u)", dim),
        ]));
        return out;
    };
    let mut title = vec![Span::styled("REPLICATION  ", head), Span::raw(role.clone())];
    if let Some(p) = r.current_log_page {
        title.push(Span::raw(format!(
            " · current log page {},{}",
            p.log, p.page
        )));
    }
    out.push(Line::from(title));
    if let Some(n) = &r.note {
        out.push(Line::from(Span::styled(format!(" {n}"), dim)));
    }
    if let Some(s) = &r.secondary {
        let pos = |p: Option<crate::parsers::ha::LogPos>| {
            p.map_or("?".to_string(), |p| format!("{},{}", p.log, p.page))
        };
        let mut text = format!(
            "source {} ({}), received up to {}, applied up to {}",
            s.source.as_deref().unwrap_or("?"),
            s.connection.as_deref().unwrap_or("connection unknown"),
            pos(s.received),
            pos(s.applied)
        );
        if let Some(n) = s.apply_behind_pages {
            text.push_str(&format!(": {} pages to apply", thousands(n)));
        }
        if let Some(st) = &s.dr_state {
            text.push_str(&format!("; HDR state {st}"));
        }
        text.push_str(" (the primary's position is known on the primary only)");
        out.extend(labelled(" BEHIND", &text, width, Style::new(), head));
        return out;
    }
    if r.peers.is_empty() {
        if r.note.is_none() && role == "primary" {
            out.push(Line::from(Span::styled(
                " no secondary in onstat -g cluster",
                dim,
            )));
        }
        return out;
    }
    let wide = width >= 110;
    let mut header = format!(
        " {:<12}{:<5}{:<9}{:>9}{:>7}  {:<10}",
        "PEER", "TYPE", "STATE", "LAG pg", "LAG", "TRANSMIT"
    );
    if wide {
        header.push_str(&format!("{:<11}{:<21}", "CONNECTION", "LAST ACK"));
    } else {
        header.push_str(&format!("{:<9}", "LAST ACK"));
    }
    header.push_str("LAG TREND");
    out.push(Line::from(Span::styled(header, head)));
    for p in &r.peers {
        let last_ack = p.last_ack.clone().unwrap_or_else(|| "-".into());
        // Narrow: the time of day only (`2026-11-22.13:40:58` → `13:40:58`).
        let short_ack = last_ack
            .rsplit(['.', ' '])
            .next()
            .unwrap_or(&last_ack)
            .to_string();
        let mut row = format!(
            " {:<12}{:<5}{:<9}{:>9}{:>7}  {:<10}",
            crate::format::cut(&p.name, 11),
            p.peer_type.as_deref().unwrap_or("?"),
            crate::format::cut(p.status.as_deref().unwrap_or("?"), 8),
            p.lag_pages.map_or("-".into(), thousands),
            lag_words(p),
            p.transmission.as_deref().unwrap_or("-"),
        );
        if wide {
            row.push_str(&format!(
                "{:<11}{:<21}",
                crate::format::cut(p.connection.as_deref().unwrap_or("?"), 10),
                crate::format::cut(&last_ack, 20)
            ));
        } else {
            row.push_str(&format!("{:<9}", crate::format::cut(&short_ack, 8)));
        }
        let st = concern_style(p.concern, theme);
        out.push(Line::from(vec![
            Span::styled(row, st),
            Span::styled(
                spark_floor(&p.lag_history, crate::model::io::LAG_PAGES_WARN as f64, 12),
                theme.hot,
            ),
        ]));
        if let Some(v) = &p.verdict {
            out.extend(labelled("", v, width, st, head));
        }
    }
    out
}

/// The line over the table: how many chunks, how many on slow devices, what holds for all.
fn summary_line<'a>(snap: &'a Snapshot, app: &App) -> Line<'a> {
    let theme = &app.theme;
    let io = &snap.io;
    let mut spans = Vec::new();
    if !io.chunks.is_empty() {
        let slow = io
            .chunks
            .iter()
            .filter(|c| c.concern >= Concern::Warn)
            .count();
        spans.push(Span::raw(format!(
            "{} chunk{} · ",
            io.chunks.len(),
            if io.chunks.len() == 1 { "" } else { "s" }
        )));
        if slow > 0 {
            spans.push(Span::styled(format!("{slow} to look at · "), theme.warn));
        }
        let order = app.table().sort;
        spans.push(Span::raw(format!(
            "{} · IFX: Informix's ms/op (* since its reset)",
            ListPane::Io.order_label(order)
        )));
    }
    if let Some(n) = &io.note {
        if !spans.is_empty() {
            spans.push(Span::raw(" · "));
        }
        spans.push(Span::styled(n.clone(), theme.dim));
    }
    Line::from(spans)
}

/// The pane's rows with nothing left out: the summary, the table, the selected chunk's detail
/// with its figures, replication (as `render` lays them out).
pub(crate) fn whole_rows(app: &App, width: u16) -> usize {
    let snap = app.shown();
    let t = app.table();
    let table = if t.order.is_empty() {
        1
    } else {
        t.order.len() + 1
    };
    let detail = t
        .order
        .get(t.selected)
        .and_then(|&i| snap.io.chunks.get(i))
        .map_or(0, |c| chunk_lines(c, width, &app.theme, true).len() + 1);
    1 + table + detail + 1 + replication_lines(&snap.replication, width, &app.theme).len()
}

pub(crate) fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let snap = app.shown();
    let theme = &app.theme;
    if area.height < 3 {
        return;
    }
    super::set_line_cut(buf, area.x, area.y, &summary_line(snap, app), area.width);
    let t = app.table();
    let selected = t.order.get(t.selected).and_then(|&i| snap.io.chunks.get(i));
    let repl = replication_lines(&snap.replication, area.width, theme);
    let body = area.height - 1;
    // The detail of the selected chunk: with the figures when they fit.
    let rows = u16::try_from(t.order.len()).unwrap_or(u16::MAX);
    let table_want = if t.order.is_empty() { 0 } else { rows + 1 };
    let room = |detail: usize| {
        usize::from(body).saturating_sub(usize::from(table_want) + detail + repl.len() + 2)
    };
    let mut detail = selected.map_or_else(Vec::new, |c| chunk_lines(c, area.width, theme, true));
    if room(detail.len()) == 0 {
        if let Some(c) = selected {
            detail = chunk_lines(c, area.width, theme, false);
        }
    }
    let reserved = u16::try_from(detail.len() + repl.len() + 2).unwrap_or(u16::MAX);
    // The table gets what it needs, but at least its header and three rows.
    let table_h = table_want.min(body.saturating_sub(reserved).max(4.min(table_want)));
    let mut y = area.y + 1;
    if table_h > 0 {
        let columns = ListPane::Io.columns();
        let specs: Vec<_> = columns.iter().map(|c| c.spec()).collect();
        let sort = match t.sort {
            Order::By { column, desc } => {
                columns.iter().position(|c| *c == column).map(|i| (i, desc))
            }
            Order::Grouped => None,
        };
        // Scrolled so the selected row is on screen in this (smaller) table.
        let page = usize::from(table_h - 1).max(1);
        let offset = if t.selected < t.offset {
            t.selected
        } else if t.selected >= t.offset + page {
            t.selected + 1 - page
        } else {
            t.offset
        };
        TableView {
            cols: &specs,
            order: &t.order,
            rows: &PaneRows {
                list: ListPane::Io,
                snap,
            },
            selected: Some(t.selected),
            offset,
            sort,
            theme,
        }
        .render(
            Rect {
                y,
                height: table_h,
                ..area
            },
            buf,
        );
        y += table_h;
    } else if snap.io.chunks.is_empty() && snap.io.note.is_none() {
        buf.set_line(
            area.x,
            y,
            &Line::from(Span::styled("no chunk to show", theme.dim)),
            area.width,
        );
        y += 1;
    }
    let end = area.y + area.height;
    let mut put = |y: &mut u16, l: &Line| {
        if *y < end {
            super::set_line_cut(buf, area.x, *y, l, area.width);
            *y += 1;
        }
    };
    if !detail.is_empty() {
        y += 1;
        for l in &detail {
            put(&mut y, l);
        }
    }
    y += 1;
    for l in &repl {
        put(&mut y, l);
    }
}

/// The pane as plain text (the snapshot report, `y`): every chunk with its figures and
/// verdict, then replication.
pub(crate) fn report_text(snap: &Snapshot) -> String {
    let theme = Theme::plain();
    let mut s = String::new();
    let line_text = |l: &Line| {
        l.spans
            .iter()
            .map(|x| x.content.as_ref())
            .collect::<String>()
    };
    if let Some(n) = &snap.io.note {
        s.push_str(n);
        s.push('\n');
    }
    s.push_str(&format!(
        "{:>4} {:<10} {:<26} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6}\n",
        "CHK", "DBSPACE", "DEVICE", "RD/s", "WR/s", "IFX RD", "IFX WR", "AWAIT", "%UTIL"
    ));
    for c in &snap.io.chunks {
        use crate::tui::panes::IoCol;
        let cell = |col| crate::tui::panes::io_cell(c, col).into_owned();
        s.push_str(
            format!(
                "{:>4} {:<10} {:<26} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6}",
                c.chunk,
                c.dbspace.as_deref().unwrap_or("?"),
                crate::format::cut(&cell(IoCol::Device), 26),
                cell(IoCol::ReadsPerS),
                cell(IoCol::WritesPerS),
                cell(IoCol::IfxRead),
                cell(IoCol::IfxWrite),
                cell(IoCol::Await),
                cell(IoCol::Util),
            )
            .trim_end(),
        );
        s.push('\n');
    }
    for c in &snap.io.chunks {
        s.push('\n');
        for l in chunk_lines(c, 100, &theme, true) {
            s.push_str(line_text(&l).trim_end());
            s.push('\n');
        }
    }
    s.push('\n');
    for l in replication_lines(&snap.replication, 100, &theme) {
        s.push_str(line_text(&l).trim_end());
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::io::SecondaryView;
    use crate::parsers::ha::LogPos;

    fn text(lines: &[Line<'_>]) -> String {
        lines
            .iter()
            .map(|l| {
                l.spans
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// On a secondary the pane says how far behind it is: what it received and applied, and
    /// the pages still to apply; a standard server says it has no replication.
    #[test]
    fn a_secondary_and_a_standard_server() {
        let r = Replication {
            role: Some("RSS secondary".into()),
            secondary: Some(SecondaryView {
                source: Some("ol_prim".into()),
                connection: Some("Connected".into()),
                received: Some(LogPos {
                    log: 1871,
                    page: 500,
                }),
                applied: Some(LogPos {
                    log: 1871,
                    page: 450,
                }),
                apply_behind_pages: Some(50),
                dr_state: None,
            }),
            ..Replication::default()
        };
        let t = text(&replication_lines(&r, 80, &Theme::plain()));
        assert!(t.starts_with("REPLICATION  RSS secondary"), "{t}");
        assert!(t.contains(" BEHIND"), "{t}");
        assert!(
            t.contains("source ol_prim (Connected), received up to 1871,500, applied up to"),
            "{t}"
        );
        assert!(t.contains("1871,450: 50 pages to apply"), "{t}");
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");

        let standard = Replication {
            role: Some("standard".into()),
            note: Some("a standard server: no replication (no role in the banner)".into()),
            ..Replication::default()
        };
        let t = text(&replication_lines(&standard, 80, &Theme::plain()));
        assert_eq!(
            t,
            "REPLICATION  standard\n a standard server: no replication (no role in the banner)"
        );
    }
}
