//! The fleet screen: one line per instance (mode, blocked reason, waiters by reason, lock and
//! buffer waits per second, worst chunk latency, replication lag, CPU, data age, what fails);
//! Enter opens one.

use crate::model::fleet::{waiters_text, FleetRow};
use crate::tui::fleet::FleetUi;
use crate::tui::keymap::{Action, Keymap};
use crate::tui::table::{self, Col};
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// The fleet table's columns, left to right; the last one takes what is left.
const COLS: [Col; 12] = [
    // What needs a look, as a mark that reads without colour: the top finding's own (`⚠`,
    // `✖`), `!` for a problem (not answering, a failed onstat).
    Col::new("", 1),
    Col::new("INSTANCE", 16).flex_by(2),
    Col::new("MODE", 14).flex_by(1),
    Col::new("BLOCKED", 8).wide(70),
    Col::new("WAITERS", 10).flex_by(1),
    Col::new("LOCK/s", 6).right().wide(100),
    Col::new("BUF/s", 6).right().wide(100),
    Col::new("DISK", 6).right().wide(80),
    Col::new("REPL LAG", 13).flex_by(1).wide(80),
    Col::new("CPU", 8).right().wide(130),
    Col::new("AGE", 5).right(),
    Col::new("PROBLEM", 8).flex_by(3).wide(90),
];

fn rate(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(0.0) => "0".into(),
        Some(x) if x < 10.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.0}"),
    }
}

/// What the instance is waiting for, when it has no answer yet and nothing failed.
const WAITING: &str = "waiting for the first onstat -u";

fn cells(r: &FleetRow) -> [String; 12] {
    [
        r.mark.unwrap_or_default().to_string(),
        r.instance.clone(),
        r.mode.clone(),
        r.blocked.clone().unwrap_or_else(|| "-".into()),
        {
            let w = waiters_text(&r.waiters);
            if w.is_empty() {
                "-".into()
            } else {
                w
            }
        },
        rate(r.lock_waits_per_s),
        rate(r.buffer_waits_per_s),
        r.worst_chunk_ms
            .map(|ms| format!("{}ms", crate::tui::panes::ms(ms)))
            .unwrap_or_else(|| "-".into()),
        r.replication_lag.clone().unwrap_or_else(|| "-".into()),
        r.cpu
            .as_ref()
            .map(|(c, b)| format!("{c} {b:.0}%"))
            .unwrap_or_else(|| "-".into()),
        r.age_s
            .map(crate::format::human_duration)
            .unwrap_or_else(|| "-".into()),
        // What fails first; else the top finding.
        r.problem
            .clone()
            .or_else(|| r.finding.clone())
            .unwrap_or_default(),
    ]
}

/// Draws the fleet screen: title, table, footer (and the help overlay when asked).
pub(crate) fn render(
    rows: &[FleetRow],
    ui: &FleetUi,
    clock: Option<String>,
    (theme, keymap): (&Theme, &Keymap),
    area: Rect,
    buf: &mut Buffer,
) {
    if area.height < 4 || area.width < 20 {
        return;
    }
    let bar = theme.header_bar;
    buf.set_style(Rect { height: 1, ..area }, bar);
    // The rule of the rows' marks (model::fleet::row): the count is of the marked rows.
    let alarms = rows.iter().filter(|r| r.mark.is_some()).count();
    let mut title = vec![
        Span::styled(" ifxtop ", bar.patch(theme.title)),
        Span::styled(format!("fleet  {} instances  ", rows.len()), bar),
    ];
    if alarms > 0 {
        title.push(Span::styled(
            format!(" {alarms} need a look "),
            theme.badge_alarm,
        ));
        title.push(Span::styled("  ", bar));
    }
    if let Some(c) = clock {
        title.push(Span::styled(format!("{c}  "), bar.patch(theme.title)));
    }
    title.push(Span::styled(" RUNNING ", bar.patch(theme.badge_running)));
    buf.set_line(area.x, area.y, &Line::from(title), area.width);

    // Each column's widest cell: the spare width goes to what the cells need (PROBLEM, the
    // finding in words), not to blanks after a short instance name.
    let all: Vec<[String; 12]> = rows.iter().map(cells).collect();
    let mut needs = [0u16; 12];
    for (i, n) in needs.iter_mut().enumerate() {
        let cells = all.iter().map(|c| crate::format::cells(&c[i]));
        *n = u16::try_from(cells.max().unwrap_or(0)).unwrap_or(u16::MAX);
    }
    let widths = table::layout_for(&COLS, area.width, &needs);
    let mut head = Vec::new();
    for (n, (i, w)) in widths.iter().enumerate() {
        if n > 0 {
            head.push(Span::raw(" "));
        }
        let c = &COLS[*i];
        head.push(Span::styled(
            table::fit(c.title, *w, c.right),
            theme.column_header,
        ));
    }
    buf.set_line(area.x, area.y + 2, &Line::from(head), area.width);

    let body_top = area.y + 3;
    let body_height = usize::from(area.height.saturating_sub(4));
    let offset = table::scroll_offset(ui.selected, 0, body_height, rows.len());
    for (k, r) in rows.iter().enumerate().skip(offset).take(body_height) {
        let y = body_top + u16::try_from(k - offset).unwrap_or(0);
        let c = &all[k];
        let row_style = if k == ui.selected {
            theme.selected
        } else if r.alarm {
            theme.hot
        } else {
            Style::new()
        };
        let mut spans = Vec::new();
        // An instance with nothing to show (no answer yet, off-line, unreachable) says why
        // across the columns it cannot fill, whatever the width.
        let no_data = r.age_s.is_none() || r.mode == "OFF-LINE";
        let why = r
            .problem
            .as_ref()
            .map(|p| (p.as_str(), theme.warn))
            .or(r.waiting.then_some((WAITING, theme.dim)));
        let mut used: u16 = 0;
        for (n, (i, w)) in widths.iter().enumerate() {
            if n > 0 {
                spans.push(Span::raw(" "));
                used = used.saturating_add(1);
            }
            if *i >= 3 && no_data {
                if let Some((p, style)) = why {
                    let rest = area.width.saturating_sub(used);
                    spans.push(Span::styled(table::fit(p, rest, false), style));
                    break;
                }
            }
            used = used.saturating_add(*w);
            let col = &COLS[*i];
            let style = match *i {
                0 if r.alarm => theme.hot,
                3 if r.blocked.is_some() => theme.error,
                7 if r
                    .worst_chunk_ms
                    .is_some_and(|ms| ms >= crate::model::io::SLOW_AWAIT_MS) =>
                {
                    theme.warn
                }
                8 if r.replication_alarm => theme.error,
                11 if r.problem.is_some() || r.finding.is_some() => theme.warn,
                _ => Style::new(),
            };
            spans.push(Span::styled(table::fit(&c[*i], *w, col.right), style));
        }
        buf.set_style(
            Rect {
                y,
                height: 1,
                ..area
            },
            row_style,
        );
        buf.set_line(area.x, y, &Line::from(spans), area.width);
    }
    if rows.is_empty() {
        buf.set_string(area.x + 1, body_top, "no instances", theme.dim);
    }
    // A problem too long for its column (or a terminal too narrow for the column) is shown in
    // full for the selected instance, above the footer.
    if let Some(r) = rows.get(ui.selected) {
        if let Some(p) = r.problem.as_ref().or(r.finding.as_ref()) {
            let y = area.y + area.height.saturating_sub(2);
            let text = format!("{}: {p}", r.instance);
            buf.set_string(area.x, y, table::fit(&text, area.width, false), theme.warn);
        }
    }
    // The keys the keymap binds (a key moved in the config shows as moved).
    let mut footer = String::new();
    for (actions, what) in FOOTER {
        if let Some(k) = keymap.hint(actions) {
            footer.push_str(&format!(" {k} {what}"));
        }
    }
    buf.set_string(
        area.x,
        area.y + area.height - 1,
        table::fit(&footer, area.width, false),
        theme.dim,
    );
    if ui.help {
        help(theme, area, buf);
    }
    // As on every other screen: no control character reaches the terminal (a finding may quote
    // SQL), and a locale that is not UTF-8 gets ASCII.
    super::strip_control(buf);
    if theme.ascii {
        super::asciify(buf);
    }
}

/// The fleet's keys on its last line.
const FOOTER: &[(&[Action], &str)] = &[
    (&[Action::Quit], "quit"),
    (&[Action::Help], "help"),
    (&[Action::Up, Action::Down], "move"),
    (&[Action::DrillDown], "open"),
    (&[Action::Back], "(in an instance) back to the fleet"),
];

const HELP: &[&str] = &[
    "ifxtop help: the fleet",
    "",
    "One line per instance watched. Each runs its own collectors: one that fails",
    "or hangs never holds up the others.",
    "",
    "INSTANCE  the server (@host over ssh)  MODE     the banner's mode and flags",
    "BLOCKED   the server's Blocked: reason  WAITERS  threads waiting, by -u flag",
    "LOCK/s    lock waits per second                  (idle client waits left out)",
    "BUF/s     buffer waits per second       CPU      the busiest VP class",
    "DISK      the slowest chunk's latency   REPL LAG the secondary furthest behind",
    "AGE       age of the newest onstat -u   PROBLEM  what fails (off-line, ssh),",
    "                                                 else the top finding",
    "",
    "↑/↓ select   Enter open the instance   Esc back to the fleet   q quit",
    "",
    "Press any key to close this help.",
];

fn help(theme: &Theme, area: Rect, buf: &mut Buffer) {
    let inner = Rect {
        x: area.x,
        y: area.y + 1,
        width: area.width,
        height: area.height.saturating_sub(1),
    };
    ratatui::widgets::Widget::render(ratatui::widgets::Clear, inner, buf);
    for (i, line) in HELP.iter().enumerate() {
        let Ok(dy) = u16::try_from(i) else { break };
        if dy >= inner.height {
            break;
        }
        let style = if i == 0 { theme.title } else { Style::new() };
        buf.set_string(
            inner.x + 1,
            inner.y + dy,
            table::fit(line, inner.width.saturating_sub(1), false),
            style,
        );
    }
}

#[cfg(test)]
mod help_tests {
    use super::*;

    fn footer(keymap: &Keymap) -> String {
        let area = Rect::new(0, 0, 100, 10);
        let mut buf = Buffer::empty(area);
        render(
            &[],
            &FleetUi::default(),
            None,
            (&Theme::plain(), keymap),
            area,
            &mut buf,
        );
        crate::tui::views::buffer_text(&buf)
            .lines()
            .last()
            .unwrap_or_default()
            .to_string()
    }

    /// The fleet's last line names the keys the keymap binds.
    #[test]
    fn the_footer_names_the_bound_keys() {
        let line = footer(&Keymap::default());
        assert!(
            line.starts_with(" q quit ? help ↑/↓ move Enter open Esc"),
            "{line}"
        );
        let mut keys = std::collections::BTreeMap::new();
        keys.insert("quit".to_string(), vec!["x".to_string()]);
        keys.insert("help".to_string(), vec![]);
        let line = footer(&Keymap::from_config(&keys).expect("keymap"));
        assert!(line.starts_with(" x quit ↑/↓ move"), "{line}");
    }

    /// The help is drawn one column in, on an 80-column terminal: no line may be cut.
    #[test]
    fn every_help_line_fits_80_columns() {
        for l in HELP {
            assert!(l.chars().count() <= 78, "{l}");
        }
    }
}
