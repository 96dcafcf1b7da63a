//! Draws the Server pane (its lines are built in `tui/server_lines.rs`, where the pane's row
//! count comes from too), the selected line highlighted and scrolled into view.

use crate::tui::app::App;
use crate::tui::server_lines::lines;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

pub(crate) fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let snap = app.shown();
    let lines = lines(snap, &app.theme);
    let t = app.table();
    let selected = t.selected.min(lines.len().saturating_sub(1));
    // Scrolled just enough that the selected line is on screen.
    let h = usize::from(area.height);
    let skip = (selected + 1).saturating_sub(h);
    for (i, (y, l)) in (area.y..area.y + area.height)
        .zip(lines.iter().skip(skip))
        .enumerate()
    {
        let mut line = l.line.clone();
        if i + skip == selected {
            line = line.patch_style(app.theme.selected);
        }
        buf.set_line(area.x, y, &line, area.width);
    }
}
