//! The buffer hot spot screen: the object and its dbspace, the verdict in words, its hot pages
//! now with their holder and waiters (each session selectable: Enter opens it), and its history.

use crate::format::human_duration;
use crate::model::hotspot::HotspotView;
use crate::tui::app::{App, HotspotUi};
use crate::tui::table::{sparkline, wrap};
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

const L: usize = 10;

fn label(text: &str, theme: &Theme) -> Span<'static> {
    Span::styled(format!("{text:<L$}"), theme.column_header)
}

/// The screen's lines; the selected session is marked.
pub(crate) fn lines(
    v: &HotspotView,
    ui: &HotspotUi,
    theme: &Theme,
    width: u16,
) -> Vec<Line<'static>> {
    let w = usize::from(width).saturating_sub(L).max(20);
    let mut out = vec![Line::from(vec![
        Span::styled(v.row.object.clone(), theme.title),
        Span::raw(format!(
            "  {}  dbspace {}",
            v.kind,
            v.row.dbspace.as_deref().unwrap_or("?")
        )),
    ])];
    for (i, part) in wrap(&v.verdict, w).into_iter().enumerate() {
        out.push(Line::from(vec![
            label(if i == 0 { "VERDICT" } else { "" }, theme),
            Span::styled(part, theme.hot),
        ]));
    }
    out.push(Line::from(vec![
        label("WINDOW", theme),
        Span::raw(format!(
            "waiters in {} of {} samples, {} in all; {} page{}; longest streak {}  ",
            v.row.samples_window,
            v.row.window_samples,
            v.row.waiters_window,
            v.row.distinct_pages,
            if v.row.distinct_pages == 1 { "" } else { "s" },
            v.row.longest_streak
        )),
        Span::styled(sparkline(&v.row.trend, 20), theme.hot),
    ]));
    out.push(Line::from(""));
    if v.pages.is_empty() {
        out.push(Line::from(Span::styled(
            "no buffer of it has waiters in the latest onstat -X",
            theme.dim,
        )));
    } else {
        out.push(Line::from(Span::styled(
            format!(
                "{:<L$}{:<16} {:>8}  {:<10} WAITERS",
                "PAGES", "chunk:page", "hot for", "holder"
            ),
            theme.column_header,
        )));
    }
    let mut k = 0usize;
    for p in &v.pages {
        let mut spans = vec![
            Span::raw(format!("{:<L$}", "")),
            Span::raw(format!(
                "{:<16} {:>8}  ",
                format!("{}:{}", p.chunk, p.page),
                p.hot_for_s.map_or("-".into(), human_duration)
            )),
        ];
        // The sessions are selectable in the order `HotspotView::sessions` lists them.
        let mut session = |text: String| {
            let style = if k == ui.selected {
                theme.selected
            } else {
                ratatui::style::Style::new()
            };
            k += 1;
            Span::styled(text, style)
        };
        match p.owner {
            Some(o) => spans.push(session(format!("{:<10}", format!("sid {o}")))),
            None => spans.push(Span::styled(format!("{:<10}", "-"), theme.dim)),
        }
        spans.push(Span::raw(format!(" {} ", p.waiters.len())));
        for wsid in &p.waiters {
            spans.push(session(format!("{wsid}")));
            spans.push(Span::raw(" "));
        }
        out.push(Line::from(spans));
    }
    out.push(Line::from(""));
    out.push(Line::from(Span::styled(
        "↑/↓ selects a session, Enter opens it, Esc goes back",
        theme.dim,
    )));
    out
}

pub(crate) fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let Some((ui, view)) = app.hotspot_screen() else {
        return;
    };
    let lines = match view {
        Some(v) => lines(v, ui, &app.theme, area.width),
        None => vec![Line::from(Span::styled(
            format!("{}: no longer among the hot spots", ui.object),
            app.theme.dim,
        ))],
    };
    for (y, line) in (area.y..area.y + area.height).zip(lines.iter()) {
        buf.set_line(area.x, y, line, area.width);
    }
}

/// The screen as plain text, for the clipboard.
pub(crate) fn text(v: &HotspotView, ui: &HotspotUi) -> String {
    let mut s = String::new();
    for l in lines(v, ui, &Theme::plain(), 100) {
        for span in &l.spans {
            s.push_str(&span.content);
        }
        s.push('\n');
    }
    s
}
