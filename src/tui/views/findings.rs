//! The findings overlay (`f`): every finding the snapshot names, the worst first, each with its
//! evidence and what helps, as the text report has them; the selected one (`▸`) opens its
//! culprit on Enter.

use crate::model::findings::{calm_line, headline, Severity};
use crate::tui::app::App;
use crate::tui::keymap::Action;
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
        .border_set(app.theme.border_set())
        .title(format!(
            " findings, worst first — {}, other keys close ",
            app.key_phrases(
                &[
                    (&[Action::Up, Action::Down], "select"),
                    (&[Action::DrillDown], "opens"),
                ],
                ", "
            )
        ));
    let inner = block.inner(r);
    block.render(r, buf);
    // One column on the left for the selection's mark, which reads without colour.
    let width = usize::from(inner.width).saturating_sub(1);
    let mut lines: Vec<Line> = Vec::new();
    let push = |lines: &mut Vec<Line>, text: &str, indent: usize, style: Style, mark: bool| {
        for (i, part) in wrap(text, width, indent).into_iter().enumerate() {
            let pad = if i == 0 { indent } else { indent + 2 };
            let m = if mark && i == 0 { "▸" } else { " " };
            lines.push(Line::from(Span::styled(
                format!("{m}{}{part}", " ".repeat(pad)),
                style,
            )));
        }
    };
    if headline(&snap.findings).is_none() {
        push(
            &mut lines,
            &calm_line(&snap.waiters, &snap.findings, &snap.vitals),
            0,
            theme.dim,
            false,
        );
    }
    let selected = app
        .findings_selected
        .min(snap.findings.len().saturating_sub(1));
    let mut selected_at = 0;
    for (i, f) in snap.findings.iter().enumerate() {
        let style = match f.severity {
            Severity::Critical => theme.error,
            Severity::Warning => theme.warn,
            Severity::Info => Style::new(),
        };
        let chosen = i == selected;
        if chosen {
            selected_at = lines.len();
        }
        let style = if chosen {
            style.patch(theme.selected)
        } else {
            style
        };
        push(
            &mut lines,
            &crate::format::printable(&f.line()),
            0,
            style,
            chosen,
        );
        if let Some(held) = f.held_words() {
            push(&mut lines, &held, 2, theme.dim, false);
        }
        for e in &f.evidence {
            let fact = crate::format::printable(&e.fact);
            push(
                &mut lines,
                &format!("{}: {fact}", e.source),
                2,
                Style::new(),
                false,
            );
        }
        let action = crate::format::printable(&f.action);
        push(
            &mut lines,
            &format!("what helps: {action}"),
            2,
            theme.dim,
            false,
        );
    }
    // The selected finding stays in view: from its first line when it would be below.
    let height = usize::from(inner.height);
    let skip = if selected_at >= height {
        selected_at
    } else {
        0
    };
    for (y, l) in (inner.y..inner.y + inner.height).zip(lines.iter().skip(skip)) {
        super::set_line_cut(buf, inner.x, y, l, inner.width);
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
        let len = crate::format::cells(&line);
        if len > 0 && len + 1 + crate::format::cells(word) > room {
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
