//! The findings overlay (`f`): every finding the snapshot names, the worst first, each with its
//! evidence and what helps, as the text report has them.

use crate::model::findings::{headline, Severity, CALM};
use crate::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

pub(crate) fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = &app.theme;
    let snap = app.shown();
    // Below the header's first line, the whole width: the summaries are long.
    let r = Rect {
        y: area.y + 1,
        height: area.height.saturating_sub(1),
        ..area
    };
    Clear.render(r, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" findings, worst first (ifxtop only reads) — any key closes ");
    let inner = block.inner(r);
    block.render(r, buf);
    let width = usize::from(inner.width);
    let mut lines: Vec<Line> = Vec::new();
    let mut push = |text: &str, indent: usize, style: Style| {
        for (i, part) in wrap(text, width, indent).into_iter().enumerate() {
            let pad = if i == 0 { indent } else { indent + 2 };
            lines.push(Line::from(Span::styled(
                format!("{}{part}", " ".repeat(pad)),
                style,
            )));
        }
    };
    if headline(&snap.findings).is_none() {
        push(CALM, 0, theme.dim);
    }
    for f in &snap.findings {
        let style = match f.severity {
            Severity::Critical => theme.error,
            Severity::Warning => theme.warn,
            Severity::Info => Style::new(),
        };
        push(&crate::format::printable(&f.line()), 0, style);
        for e in &f.evidence {
            let fact = crate::format::printable(&e.fact);
            push(&format!("{}: {fact}", e.source), 2, Style::new());
        }
        let action = crate::format::printable(&f.action);
        push(&format!("what helps: {action}"), 2, theme.dim);
    }
    for (y, l) in (inner.y..inner.y + inner.height).zip(&lines) {
        buf.set_line(inner.x, y, l, inner.width);
    }
}

/// `text` cut into lines at spaces: the first at most `width - indent` characters, the others
/// `width - indent - 2` (they are indented further).
fn wrap(text: &str, width: usize, indent: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let room = width
            .saturating_sub(if out.is_empty() { indent } else { indent + 2 })
            .max(8);
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > room {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push(line);
    }
    out
}
