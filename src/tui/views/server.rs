//! Draws the Server pane (its lines are built in `tui/server_lines.rs`, where the pane's row
//! count comes from too), the selected line highlighted and scrolled into view.

use crate::tui::app::App;
use crate::tui::server_lines::lines;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

pub(crate) fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let snap = app.shown();
    let mut lines = lines(snap, &app.theme);
    // Watching together: what the feed costs, on the IFXTOP line.
    if let Some(words) = app
        .watching
        .as_deref()
        .and_then(crate::tui::server_lines::watch_words)
    {
        if let Some(l) = lines.iter_mut().find(|l| {
            l.line
                .spans
                .first()
                .is_some_and(|s| s.content.starts_with("IFXTOP"))
        }) {
            l.line
                .spans
                .push(ratatui::text::Span::raw(format!("; {words}")));
        }
    }
    let t = app.table();
    let selected = t.selected.min(lines.len().saturating_sub(1));
    let h = usize::from(area.height);
    // When the pane does not fit, the blank lines between its sections go first, so a short
    // terminal keeps the rows that say something (the mutexes at 80x24).
    let compact = lines.len() > h;
    let shown: Vec<(usize, &crate::tui::server_lines::ServerLine)> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| !compact || l.line.width() > 0)
        .collect();
    let at = shown
        .iter()
        .position(|(i, _)| *i >= selected)
        .unwrap_or(shown.len().saturating_sub(1));
    // Scrolled just enough that the selected line is on screen.
    let skip = (at + 1).saturating_sub(h);
    for (y, (i, l)) in (area.y..area.y + area.height).zip(shown.iter().skip(skip)) {
        let mut line = l.line.clone();
        if *i == selected {
            line = line.patch_style(app.theme.selected);
        }
        super::set_line_cut(buf, area.x, y, &line, area.width);
    }
}
