//! The buffer hot spot screen: the object and its dbspace, the verdict in words, its hot pages
//! now with their holder and waiters (each session selectable: Enter opens it), and its history.

use crate::format::human_duration;
use crate::model::hotspot::HotspotView;
use crate::tui::app::{App, HotspotUi};
use crate::tui::keymap::Action;
use crate::tui::table::{sparkline, wrap};
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

const L: usize = 10;

fn label(text: &str, theme: &Theme) -> Span<'static> {
    Span::styled(format!("{text:<L$}"), theme.column_header)
}

/// The screen's lines, and which one is the selected session's; `keys`, the line naming the
/// keys at its foot (none in the clipboard's text).
pub(crate) fn lines(
    v: &HotspotView,
    ui: &HotspotUi,
    theme: &Theme,
    width: u16,
    keys: Option<String>,
) -> (Vec<Line<'static>>, Option<usize>) {
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
                "{:<L$}{:<16} {:>8}  {:<10} {:>7}",
                "PAGES", "chunk:page", "hot for", "holder", "waiters"
            ),
            theme.column_header,
        )));
    }
    for p in &v.pages {
        out.push(Line::from(vec![
            Span::raw(format!("{:<L$}", "")),
            Span::raw(format!(
                "{:<16} {:>8}  {:<10} {:>7}",
                format!("{}:{}", p.chunk, p.page),
                p.hot_for_s.map_or("-".into(), human_duration),
                p.owner.map_or("-".into(), |o| format!("sid {o}")),
                p.waiters.len()
            )),
        ]));
    }
    let mut selected_line = None;
    if !v.people.is_empty() {
        out.push(Line::from(""));
        out.push(Line::from(Span::styled(
            format!(
                "{:<L$}{:>6} {:<10} {:<16} {:>8}",
                "SESSIONS", "SID", "USER", "chunk:page", "waits"
            ),
            theme.column_header,
        )));
        // Selectable in the order `HotspotView::sessions` lists them.
        for (k, p) in v.people.iter().enumerate() {
            let text = format!(
                "{:<L$}{:>6} {:<10} {:<16} {:>8}",
                "",
                p.sid.to_string(),
                crate::format::cut(&p.user, 10),
                format!("{}:{}", p.chunk, p.page),
                match p.in_wait_s {
                    None => "holds it".to_string(),
                    Some(s) => crate::format::human_duration_bound(s, p.in_wait_s_at_least),
                }
            );
            if k == ui.selected {
                selected_line = Some(out.len());
                out.push(Line::from(Span::styled(text, theme.selected)));
            } else if p.holds {
                out.push(Line::from(Span::styled(text, theme.hot)));
            } else {
                out.push(Line::from(text));
            }
        }
    }
    if let Some(keys) = keys {
        out.push(Line::from(""));
        out.push(Line::from(Span::styled(keys, theme.dim)));
    }
    (out, selected_line)
}

pub(crate) fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let Some((ui, view)) = app.hotspot_screen() else {
        return;
    };
    let (lines, selected) = match view {
        Some(v) => {
            let keys = app.key_phrases(
                &[
                    (&[Action::Up, Action::Down], "selects a session"),
                    (&[Action::DrillDown], "opens it"),
                    (&[Action::Back], "goes back"),
                ],
                ", ",
            );
            lines(v, ui, &app.theme, area.width, Some(keys))
        }
        None => (
            vec![Line::from(Span::styled(
                format!("{}: no longer among the hot spots", ui.object),
                app.theme.dim,
            ))],
            None,
        ),
    };
    // Scrolled just enough that the selected session is on screen.
    let h = usize::from(area.height);
    let skip = selected.map_or(0, |s| (s + 2).saturating_sub(h));
    for (y, line) in (area.y..area.y + area.height).zip(lines.iter().skip(skip)) {
        super::set_line_cut(buf, area.x, y, line, area.width);
    }
}

/// The screen as plain text, for the clipboard.
pub(crate) fn text(v: &HotspotView, ui: &HotspotUi) -> String {
    let mut s = String::new();
    for l in lines(v, ui, &Theme::plain(), 100, None).0 {
        for span in &l.spans {
            s.push_str(&span.content);
        }
        s.push('\n');
    }
    s
}
