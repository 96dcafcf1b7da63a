//! Draws the Activity pane: database time over the window as a chart of average active sessions
//! stacked by class (Oracle's Top Activity), its legend, and the top groups by the chosen key.

use crate::model::activity::{ChartPoint, Class, Entry, Key, Report, Top};
use crate::tui::app::{ActivityUi, App};
use crate::tui::keymap::Action;
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

/// The chart's glyph of a class without colour: the wait letters of `onstat -u` (B, C, G, L,
/// S, T, Y), `#` on CPU, `+` waiting for a CPU, `?` one or the other (not known), `i` I/O,
/// `o` other.
pub(crate) fn glyph(c: Class, color: bool) -> char {
    if color {
        return '█';
    }
    match c {
        Class::Cpu => '#',
        Class::CpuOrWait => '?',
        Class::CpuWait => '+',
        Class::Io => 'i',
        Class::Lock => 'L',
        Class::Buffer => 'B',
        Class::Mutex => 'S',
        Class::Checkpoint => 'C',
        Class::LogBuffer => 'G',
        Class::Transaction => 'T',
        Class::Condition => 'Y',
        Class::Other => 'o',
    }
}

/// A class's colour: the basic ANSI colours, readable on light and dark backgrounds.
fn style(c: Class, theme: &Theme) -> Style {
    if !theme.color {
        return Style::new();
    }
    Style::new().fg(match c {
        Class::Cpu => Color::Green,
        Class::CpuOrWait => Color::DarkGray,
        Class::CpuWait => Color::LightGreen,
        Class::Io => Color::LightBlue,
        Class::Lock => Color::Red,
        Class::Buffer => Color::Magenta,
        Class::Mutex => Color::Yellow,
        Class::Checkpoint => Color::LightRed,
        Class::LogBuffer => Color::Blue,
        Class::Transaction => Color::LightMagenta,
        Class::Condition => Color::Cyan,
        Class::Other => Color::Gray,
    })
}

/// Average active sessions per class in each of `cols` columns spanning the window.
pub(crate) fn columns(
    points: &[ChartPoint],
    from: f64,
    window_s: f64,
    cols: usize,
) -> Vec<[f64; Class::COUNT]> {
    let cols = cols.max(1);
    let span = window_s / cols as f64;
    let mut sums = vec![[0f64; Class::COUNT]; cols];
    let mut secs = vec![0f64; cols];
    for p in points {
        let i = column_at(p.at, from, span).clamp(0.0, (cols - 1) as f64) as usize;
        secs[i] += f64::from(p.weight);
        for c in Class::ALL {
            sums[i][c.index()] += f64::from(p.counts[c.index()]) * f64::from(p.weight);
        }
    }
    sums.iter()
        .zip(&secs)
        .map(|(s, t)| {
            let mut out = [0f64; Class::COUNT];
            if *t > 0.0 {
                for (o, v) in out.iter_mut().zip(s) {
                    *o = v / t;
                }
            }
            out
        })
        .collect()
}

fn window_words(s: u32) -> String {
    if s >= 60 {
        format!("{} min", s / 60)
    } else {
        format!("{s} s")
    }
}

/// The title line: the window, the average active sessions, the span picked, the grouping,
/// the drill; short enough for 80 columns.
fn title(app: &App, report: Option<&Report>) -> Line<'static> {
    let (ui, theme) = (&app.activity, &app.theme);
    let mut spans = vec![
        Span::styled("DB TIME", theme.title),
        Span::raw(format!(" {} ", window_words(ui.window_s))),
    ];
    let key = |action| {
        app.key_of(action)
            .map(|k| Span::styled(format!("({k})"), theme.key))
    };
    spans.extend(key(Action::WindowNext));
    if let Some(r) = report {
        spans.push(Span::raw(format!("  {:.2} AAS", r.aas)));
        // A span says its own ends instead.
        let picking = ui.pick.is_some() || ui.span.is_some();
        if !picking && r.window_s + 1.0 < f64::from(ui.window_s) {
            spans.push(Span::styled(
                format!(" (in {:.0}s seen)", r.window_s),
                theme.dim,
            ));
        }
    }
    let between = |(a, b): (f64, f64)| format!("{}-{}", app.moment_words(a), app.moment_words(b));
    if let Some(p) = &ui.pick {
        spans.push(Span::styled(
            format!("  span {} ", between(p.span(ui.step()))),
            theme.warn,
        ));
        spans.extend(key(Action::DrillDown));
    } else if let Some(span) = ui.span {
        spans.push(Span::styled(format!("  {} ", between(span)), theme.warn));
        spans.extend(key(Action::Back));
    }
    spans.push(Span::raw(format!("  by {} ", ui.group.name())));
    spans.extend(key(Action::GroupNext));
    if let Some((k, v)) = &ui.filter {
        spans.push(Span::styled(
            format!(
                "  {} {} ",
                k.name(),
                crate::model::activity::truncate(v, 24)
            ),
            theme.warn,
        ));
        spans.extend(key(Action::Back));
    }
    Line::from(spans)
}

/// The column (0 = oldest, unbounded) of columns `width` seconds wide from `from` a moment
/// falls in: a column holds the samples after its start, up to its end.
fn column_at(at: f64, from: f64, width: f64) -> f64 {
    ((at - from) / width).ceil() - 1.0
}

/// The chart's column a moment falls in, as [`columns`] places samples, or `None` off the
/// chart.
fn column_of(at: f64, from: f64, window_s: f64, cols: usize) -> Option<usize> {
    let i = column_at(at, from, window_s / cols.max(1) as f64);
    (i >= 0.0 && i < cols as f64).then_some(i as usize)
}

/// The span's marks under the chart: `[---]` over the columns it covers (a part off the
/// chart has no bracket at that end), `^` at a picking cursor.
fn span_marks(ui: &ActivityUi, from: f64, cols: usize) -> Vec<(usize, char)> {
    let window = f64::from(ui.window_s);
    let mut marks = Vec::new();
    let span = match &ui.pick {
        Some(p) => Some(p.span(ui.step())),
        None => ui.span,
    };
    // The cursor's grid may end a moment past the chart's end (now): nothing is later.
    let end = from + window;
    if let Some((a, b)) = span.map(|(a, b)| (a.min(end - 1e-3), b.min(end))) {
        // Samples strictly after `a`, up to `b`.
        let first = column_of(a + 1e-6, from, window, cols);
        let last = column_of(b, from, window, cols);
        let lo = first.unwrap_or(0);
        let hi = last.unwrap_or(cols.saturating_sub(1));
        let on_chart = b > from && a < from + window;
        if on_chart {
            for i in lo..=hi {
                let c = match (i == lo && first.is_some(), i == hi && last.is_some()) {
                    (true, true) => '|',
                    (true, false) => '[',
                    (false, true) => ']',
                    (false, false) => '-',
                };
                marks.push((i, c));
            }
        }
    }
    if let Some(i) = ui
        .pick
        .and_then(|p| column_of(p.cursor.min(end), from, window, cols))
    {
        marks.retain(|(j, _)| *j != i);
        marks.push((i, '^'));
    }
    marks
}

pub(crate) fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let snap = app.shown();
    let ui = &app.activity;
    let theme = &app.theme;
    let report = snap.activity.as_ref();
    let mut y = area.y;
    let bottom = area.y + area.height;
    buf.set_line(area.x, y, &title(app, report), area.width);
    y += 1;
    let Some(report) = report else {
        if y < bottom {
            buf.set_line(
                area.x,
                y,
                &Line::styled(
                    "waiting for the first samples (one per onstat -u)",
                    theme.dim,
                ),
                area.width,
            );
        }
        return;
    };
    // The chart: a third of the pane, 3 to 10 rows, its scale on the left.
    let chart_h = (area.height / 3).clamp(3, 10);
    let label_w: u16 = 6;
    let cols = usize::from(area.width.saturating_sub(label_w)).min(ui.window_s as usize);
    // The chart ends at the moment shown (the table may be a few seconds older: it is built
    // every window/60 seconds).
    let from = snap.moment_s.unwrap_or(report.to_s) - f64::from(ui.window_s);
    let mut data = columns(&snap.activity_chart, from, f64::from(ui.window_s), cols);
    // Drilled into a class, the chart shows that class alone (the samples keep classes, not
    // statements or users: for those it shows every class).
    if let Some(only) = ui
        .filter
        .as_ref()
        .filter(|(k, _)| *k == crate::model::activity::Key::Class)
        .and_then(|(_, v)| Class::from_name(v))
    {
        for col in &mut data {
            for c in Class::ALL.into_iter().filter(|c| *c != only) {
                col[c.index()] = 0.0;
            }
        }
    }
    // The CPU VPs drawn as a line across the chart, as Oracle's Top Activity draws the cores:
    // more sessions on a CPU or waiting for one than that is a CPU-bound instance.
    let cpu_vps = cpu_vps(app);
    let max = data
        .iter()
        .map(|c| c.iter().sum::<f64>())
        .fold(0.0, f64::max)
        .max(cpu_vps.unwrap_or(0) as f64)
        .max(1.0);
    let unit = max / f64::from(chart_h);
    let line_row = cpu_vps.map(|v| {
        let from_bottom = (v as f64 / unit).floor() as u16;
        chart_h
            .saturating_sub(1)
            .saturating_sub(from_bottom.min(chart_h - 1))
    });
    for r in 0..chart_h {
        if y >= bottom {
            return;
        }
        // Row r from the top covers the values around (chart_h - r - 0.5) units.
        let level = (f64::from(chart_h - r) - 0.5) * unit;
        let label = match (r, cpu_vps) {
            (r, Some(v)) if Some(r) == line_row => format!("{:>3}cpu", v),
            (0, _) => format!("{max:>5.1}"),
            (r, _) if r == chart_h - 1 => format!("{:>5}", 0),
            _ => String::new(),
        };
        buf.set_string(area.x, y, &label, theme.dim);
        for (i, col) in data.iter().enumerate() {
            let mut top = 0.0;
            let class = Class::ALL.into_iter().find(|c| {
                top += col[c.index()];
                top > level
            });
            let x = area.x + label_w + i as u16;
            if let Some(c) = class {
                buf.set_string(x, y, glyph(c, theme.color).to_string(), style(c, theme));
            } else if Some(r) == line_row {
                buf.set_string(x, y, if theme.color { "─" } else { "-" }, theme.dim);
            }
        }
        y += 1;
    }
    // The time axis and the legend: each class seen, with its share.
    if y < bottom {
        let axis = format!(
            "{:>w$}-{}{:>pad$}",
            "",
            window_words(ui.window_s),
            "now",
            w = usize::from(label_w),
            pad = cols.saturating_sub(window_words(ui.window_s).len() + 1)
        );
        buf.set_string(area.x, y, axis, theme.dim);
        for (i, c) in span_marks(ui, from, cols) {
            let x = area.x + label_w + i as u16;
            if x < area.x + area.width {
                buf.set_string(x, y, c.to_string(), theme.warn);
            }
        }
        y += 1;
    }
    if y < bottom {
        let mut spans = Vec::new();
        for (c, secs) in &report.by_class {
            let share = if report.db_time_s > 0.0 {
                secs / report.db_time_s * 100.0
            } else {
                0.0
            };
            spans.push(Span::styled(
                glyph(*c, theme.color).to_string(),
                style(*c, theme),
            ));
            spans.push(Span::raw(format!(" {} {share:.0}%  ", c.label())));
        }
        if spans.is_empty() {
            // Not "every session idle": a client wait whose socket is not known is not
            // counted, and may not be idle.
            spans.push(Span::styled("no database time in this window  ", theme.dim));
        }
        if let Some(v) = cpu_vps {
            spans.push(Span::styled(
                format!("{} {v} CPU VPs", if theme.color { "─" } else { "-" }),
                theme.dim,
            ));
        }
        buf.set_line(area.x, y, &Line::from(spans), area.width);
        y += 1;
    }
    table(
        app,
        report,
        Rect::new(area.x, y, area.width, bottom.saturating_sub(y)),
        buf,
    );
}

/// The CPU VPs of the instance (`onstat -g glo`), when known.
fn cpu_vps(app: &App) -> Option<u64> {
    app.shown()
        .vitals
        .vps
        .iter()
        .find(|v| v.class == "cpu")
        .map(|v| v.count)
        .filter(|n| *n > 0)
}

/// The top groups: `%` of database time, seconds, average active sessions, sessions, and the
/// classes they spent it on. By class (the first view), each class's head blocker, object
/// and statement with the most of its time instead.
fn table(app: &App, report: &Report, area: Rect, buf: &mut Buffer) {
    if area.height == 0 {
        return;
    }
    let theme = &app.theme;
    let key = app.activity.group;
    let entries: &[Entry] = report.list(key);
    if key == Key::Class && !report.class_tops.is_empty() {
        return class_table(app, report, entries, area, buf);
    }
    // The key a third of the width (a statement's first words), the classes the rest.
    let key_w = (usize::from(area.width) * 35 / 100).clamp(10, 48);
    let header = format!(
        "{:<key_w$} {:>5} {:>7} {:>6} {:>4} {}",
        key.title(),
        "%DBT",
        "SECONDS",
        "AAS",
        "SESS",
        "BY CLASS"
    );
    buf.set_string(
        area.x,
        area.y,
        crate::model::activity::truncate(&header, usize::from(area.width)),
        theme.column_header,
    );
    let t = app.table();
    let rows = usize::from(area.height - 1);
    let skip = (t.selected + 1).saturating_sub(rows);
    if entries.is_empty() {
        if area.height > 1 {
            buf.set_string(
                area.x,
                area.y + 1,
                "no database time in this window",
                theme.dim,
            );
        }
        return;
    }
    for (line, pos) in (skip..t.order.len()).take(rows).enumerate() {
        let Some(e) = t.order.get(pos).and_then(|&r| entries.get(r)) else {
            continue;
        };
        let classes: Vec<String> = {
            let mut v = e.by_class.clone();
            v.sort_by(|a, b| b.1.total_cmp(&a.1));
            v.iter()
                .take(3)
                .map(|(c, s)| format!("{} {:.0}%", c.label(), s / e.db_time_s.max(1e-9) * 100.0))
                .collect()
        };
        let text = format!(
            "{:<key_w$} {:>4.1}% {:>7.0} {:>6.2} {:>4} {}",
            crate::model::activity::truncate(&e.key, key_w),
            e.share * 100.0,
            e.db_time_s,
            e.aas,
            e.sessions,
            classes.join(" ")
        );
        let mut style = Style::new();
        if pos == t.selected {
            style = theme.selected;
        }
        let y = area.y + 1 + line as u16;
        buf.set_string(area.x, y, " ".repeat(usize::from(area.width)), style);
        buf.set_string(
            area.x,
            y,
            crate::model::activity::truncate(&text, usize::from(area.width)),
            style,
        );
    }
}

/// The first view: each class with its share, its average active sessions, and who and what
/// had the most of it: the head blocker with the statement it ran (what holds the others up),
/// the object waited on, the statement its own sessions ran.
fn class_table(app: &App, report: &Report, entries: &[Entry], area: Rect, buf: &mut Buffer) {
    let theme = &app.theme;
    let width = usize::from(area.width);
    let rest = width.saturating_sub(25);
    let head_w = (rest * 36 / 100).max(8);
    let object_w = (rest * 24 / 100).max(8);
    let header = format!(
        "{:<9} {:>6} {:>6} {:<head_w$} {:<object_w$} {}",
        "CLASS", "%DBT", "AAS", "HEAD BLOCKER: ITS SQL", "OBJECT", "TOP SQL"
    );
    buf.set_string(
        area.x,
        area.y,
        crate::model::activity::truncate(&header, width),
        theme.column_header,
    );
    let t = app.table();
    let rows = usize::from(area.height - 1);
    let skip = (t.selected + 1).saturating_sub(rows);
    let key = |x: &Option<Top>| x.as_ref().map_or("-", |x| x.key.as_str()).to_string();
    for (line, pos) in (skip..t.order.len()).take(rows).enumerate() {
        let Some(e) = t.order.get(pos).and_then(|&r| entries.get(r)) else {
            continue;
        };
        let Some(top) = report.class_tops.iter().find(|c| c.class.name() == e.key) else {
            continue;
        };
        let head = match (&top.head_blocker, &top.head_sql) {
            (Some(h), Some(q)) => format!("{}: {}", h.key, q.key),
            (Some(h), None) => h.key.clone(),
            (None, _) => "-".to_string(),
        };
        let text = format!(
            "{:<9} {:>5.1}% {:>6.2} {:<head_w$} {:<object_w$} {}",
            top.class.label(),
            e.share * 100.0,
            e.aas,
            crate::model::activity::truncate(&head, head_w),
            crate::model::activity::truncate(&key(&top.object), object_w),
            key(&top.sql),
        );
        let style = if pos == t.selected {
            theme.selected
        } else {
            Style::new()
        };
        let y = area.y + 1 + line as u16;
        buf.set_string(area.x, y, " ".repeat(width), style);
        buf.set_string(
            area.x,
            y,
            crate::model::activity::truncate(&text, width),
            style,
        );
    }
}

/// The pane as text (copy, export): the report as `ifxtop ash` prints it.
pub(crate) fn report_text(app: &App) -> String {
    match &app.shown().activity {
        Some(r) => r.text(&|t| format!("{t:.0} s")),
        None => "no activity sampled yet\n".to_string(),
    }
}
