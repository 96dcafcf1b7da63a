//! Views: pure functions from app state (and `now`) to a frame. They never run anything.

pub mod activity;
pub mod findings;
pub mod fleet;
pub mod header;
pub mod help;
pub mod hotspot;
pub mod io;
pub mod lists;
pub mod numa;
pub mod server;
pub mod session;

use crate::tui::app::{App, Prompt};
use crate::tui::keymap::Action;
use crate::tui::panes::{Pane, PaneRows};
use crate::tui::table::{self, TableRows};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::Frame;
use std::time::Duration;

/// The smallest terminal the layout is made for.
pub(crate) const MIN_WIDTH: u16 = 60;
pub(crate) const MIN_HEIGHT: u16 = 12;

/// Draws the whole screen.
pub(crate) fn draw(frame: &mut Frame, app: &App, now: Duration) {
    let area = frame.area();
    render(app, now, area, frame.buffer_mut());
}

/// What a frame shows that moves with time alone: the header's clock (its second), the demo's
/// note, the extent map's age, the status message (until it expires). The rest changes only
/// with the data, a key or the terminal's size: while these are the same as when the screen
/// was drawn, a frame drawn again would be the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeFace {
    clock: Option<i64>,
    note: Option<String>,
    map: String,
    message: Option<String>,
}

/// The [`TimeFace`] of a frame drawn at `now`.
pub fn time_face(app: &App, now: Duration) -> TimeFace {
    TimeFace {
        clock: app
            .wall_clock(header::shown_at(app, now))
            .map(time::OffsetDateTime::unix_timestamp),
        note: app.note.as_ref().map(|(note, start)| note(*start + now)),
        map: header::map_text(app, now),
        message: app.current_message().map(str::to_string),
    }
}

/// How long after `now` the header's clock next shows another second (the other things of
/// [`TimeFace`] move on whole seconds too, most of them of the same clock).
pub fn till_next_second(app: &App, now: Duration) -> Duration {
    let into = match app.wall_clock(header::shown_at(app, now)) {
        Some(wall) => Duration::from_nanos(u64::from(wall.nanosecond())),
        None => Duration::from_nanos(u64::from(now.subsec_nanos())),
    };
    Duration::from_secs(1).saturating_sub(into)
}

/// Renders the whole screen into a buffer (the terminal, a test backend, an export).
pub fn render(app: &App, now: Duration, area: Rect, buf: &mut Buffer) {
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        too_small(area, buf);
        return;
    }
    header::render(app, now, Rect { height: 4, ..area }, buf);
    tabs(
        app,
        now,
        Rect {
            y: area.y + 4,
            height: 1,
            ..area
        },
        buf,
    );
    let timeline_rows = u16::from(app.replay.is_some());
    let body = Rect {
        y: area.y + 5,
        height: area.height.saturating_sub(6 + timeline_rows),
        ..area
    };
    if let Some(r) = &app.replay {
        timeline(
            r,
            &app.marks,
            &app.theme,
            Rect {
                y: area.y + area.height - 2,
                height: 1,
                ..area
            },
            buf,
        );
    }
    if !app.drill.is_empty() {
        session::render(app, body, buf);
    } else if app.hotspot.is_some() {
        hotspot::render(app, body, buf);
    } else {
        match app.pane {
            Pane::Numa => numa::render(app, body, buf),
            Pane::Server => server::render(app, body, buf),
            Pane::Io => io::render(app, body, buf),
            Pane::Activity => activity::render(app, body, buf),
            _ => lists::render(app, body, buf),
        }
    }
    status_line(
        app,
        now,
        Rect {
            y: area.y + area.height - 1,
            height: 1,
            ..area
        },
        buf,
    );
    if app.findings {
        findings::render(app, area, buf);
    }
    if app.help {
        help::render(app, area, buf);
    }
    strip_control(buf);
    if app.theme.ascii {
        asciify(buf);
    }
}

/// The height at which the open screen shows every one of its lines, for an export (`e`
/// writes whole screens, as `y` copies them, not what fits the terminal): the session and hot
/// spot screens and the report panes (Server, NUMA, I/O, Activity) grow to their last line; a
/// list pane is exported as shown (the JSON beside it has every row).
pub(crate) fn whole_height(app: &App, width: u16, height: u16) -> u16 {
    let chrome = 6 + usize::from(app.replay.is_some());
    let theme = &app.theme;
    let snap = app.shown();
    let body = if let Some((d, view)) = app.session() {
        view.map(|v| session::lines(v, d, theme, width, app.replay.is_some()).len())
    } else if let Some((ui, view)) = app.hotspot_screen() {
        // The key hints under it: two lines.
        view.map(|v| hotspot::lines(v, ui, theme, width, None).0.len() + 2)
    } else {
        match app.pane {
            Pane::Server => Some(crate::tui::server_lines::lines(snap, theme).len()),
            Pane::Numa => Some(numa::lines(&snap.numa, width, Some(app)).len()),
            Pane::Io => Some(io::whole_rows(app, width)),
            // Title, the chart at its tallest (10 rows), its axis and legend, the table's
            // header and rows.
            Pane::Activity => Some(5 + 10 + app.table().order.len()),
            _ => None,
        }
    };
    body.map_or(height, |b| {
        height.max(u16::try_from(chrome + b).unwrap_or(u16::MAX))
    })
}

/// Draws `line` at (`x`, `y`) in `width` cells; a line that does not fit ends in `…`, so a cut
/// is never silent (a body line's end is often its number or its duration).
pub(crate) fn set_line_cut(buf: &mut Buffer, x: u16, y: u16, line: &Line, width: u16) {
    buf.set_line(x, y, line, width);
    let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
    // Trailing blanks (a padded selection bar) are no loss.
    let used = Span::raw(text.trim_end()).width();
    if width > 0 && used > usize::from(width) {
        if let Some(cell) = buf.cell_mut((x + width - 1, y)) {
            cell.set_symbol("…");
        }
    }
}

/// Draws every glyph in ASCII, for a terminal whose locale is not UTF-8. Where one character
/// would say something else (`≤` as `<`, the key `↓` as `v`, itself a key), the stand-in is
/// written out (`<=`, `Down`): the cells it needs more come out of the nearest padding (two
/// blanks or more), left of it when it is right-aligned there, else to its right, so the columns
/// after it stay where they were; a row with no padding left loses its end, marked `~`.
pub(crate) fn asciify(buf: &mut Buffer) {
    use ratatui::buffer::Cell;
    let width = usize::from(buf.area.width);
    if width == 0 {
        return;
    }
    let blank = |c: &Cell| c.symbol() == " ";
    // What can give a cell on the right: two blanks, or a frame's line (`─`, or its ASCII `-`
    // in a run of three, so that `--at` in a text stays whole).
    let gives_way = |row: &[Cell], i: usize| {
        let at = |j: usize| row.get(j).map_or("", |c| c.symbol());
        match at(i) {
            " " => matches!(at(i + 1), " " | "─" | "━" | "═" | "-"),
            "─" | "━" | "═" => true,
            "-" => i > 0 && at(i - 1) == "-" && at(i + 1) == "-",
            _ => false,
        }
    };
    for row in buf.content.chunks_mut(width) {
        if row.iter().all(|c| c.symbol().is_ascii()) {
            continue;
        }
        let mut out: Vec<Cell> = Vec::with_capacity(width + 8);
        // Cells written out beyond the row's, still to be taken from padding on the right.
        let mut owed = 0usize;
        for i in 0..row.len() {
            let sym = row[i].symbol();
            // Padding on the right (blanks, a frame's line) pays what a stand-in before it took.
            if owed > 0 && gives_way(row, i) {
                owed -= 1;
                continue;
            }
            if sym.is_ascii() {
                out.push(row[i].clone());
                continue;
            }
            let c = sym.chars().next().unwrap_or(' ');
            // A key in a hint: next to the `/` of `↑/↓`, `↓/PgDn`, `Ctrl-p/↓`.
            let key = (i > 0 && row[i - 1].symbol() == "/")
                || row.get(i + 1).is_some_and(|n| n.symbol() == "/");
            let text = crate::tui::theme::ascii_text(c, key);
            let mut extra = text.chars().count().saturating_sub(1);
            // Right-aligned after padding: the padding gives way.
            while extra > 0
                && out.len() >= 2
                && blank(&out[out.len() - 1])
                && blank(&out[out.len() - 2])
            {
                out.pop();
                extra -= 1;
            }
            owed += extra;
            for ch in text.chars() {
                let mut cell = row[i].clone();
                cell.set_symbol(ch.encode_utf8(&mut [0; 4]));
                out.push(cell);
            }
        }
        if out.len() > width {
            let lost = out[width..].iter().any(|c| !blank(c));
            out.truncate(width);
            if lost {
                if let Some(last) = out.last_mut() {
                    last.set_symbol("~");
                }
            }
        }
        for (cell, new) in row.iter_mut().zip(out) {
            *cell = new;
        }
    }
}

/// What commands print (user names, SQL, host names) reaches the screen: a control character
/// in it (an escape sequence) would drive the terminal, a bidirectional control turn the line
/// around. Every cell is checked after drawing, so no view can forget it: a control character
/// becomes `?`, a bidirectional control (no width: drawn with the cell before it) is dropped.
pub(crate) fn strip_control(buf: &mut Buffer) {
    for cell in buf.content.iter_mut() {
        if cell.symbol().chars().any(crate::format::is_unsafe) {
            let kept: String = cell
                .symbol()
                .chars()
                .filter(|c| !crate::format::is_bidi_control(*c))
                .map(|c| if c.is_control() { '?' } else { c })
                .collect();
            cell.set_symbol(if kept.is_empty() { " " } else { &kept });
        }
    }
}

fn too_small(area: Rect, buf: &mut Buffer) {
    let msg = format!(
        "ifxtop needs a terminal of at least {MIN_WIDTH}x{MIN_HEIGHT}; this one is {}x{}. \
         Enlarge it, or press q to quit.",
        area.width, area.height
    );
    let w = usize::from(area.width.max(1));
    // Broken at blanks: a word cut in two reads as two words.
    for (y, line) in (area.y..area.y + area.height).zip(table::wrap(&msg, w)) {
        buf.set_stringn(area.x, y, line, w, ratatui::style::Style::new());
    }
}

/// The session time of the moment on screen: when frozen, when it was frozen; in a replay,
/// the moment played.
pub(crate) fn moment_shown(app: &App, now: Duration) -> Duration {
    header::shown_at(app, now)
}

/// The replay timeline: non-condition waiters over the whole recording, the position marked,
/// bookmarks as `◆`; when the position is at a bookmark (within the time one cell of the bar
/// stands for, 2 s at least), its note after the clock.
fn timeline(
    r: &crate::collect::replay::ReplayUi,
    marks: &[crate::tui::app::MarkUi],
    theme: &crate::tui::theme::Theme,
    area: Rect,
    buf: &mut Buffer,
) {
    let clock = format!(
        " {} / {} ",
        crate::format::clock(r.position),
        crate::format::clock(r.length)
    );
    let len = r.length.as_secs_f64();
    // The bar's width with no note: what one of its cells stands for.
    let full = usize::from(area.width).saturating_sub(clock.chars().count() + 1);
    let cell_s = if full > 0 { len / full as f64 } else { len };
    let pos_s = r.position.as_secs_f64();
    let near = marks
        .iter()
        .filter(|m| (m.at.as_secs_f64() - pos_s).abs() <= cell_s.max(2.0))
        .min_by(|a, b| {
            let d = |m: &crate::tui::app::MarkUi| (m.at.as_secs_f64() - pos_s).abs();
            d(a).total_cmp(&d(b))
        });
    // The note takes at most half the line: the bar stays readable.
    let note = near.map(|m| {
        let room = usize::from(area.width) / 2;
        format!("◆ {} ", table::fit(&m.note, room as u16, false).trim_end())
    });
    let note_w = note.as_deref().map_or(0, crate::format::cells);
    let width = full.saturating_sub(note_w);
    if width == 0 {
        return;
    }
    // Resample the spikes to the width, keeping each cell's maximum.
    let n = r.spikes.len().max(1);
    let cells: Vec<u64> = (0..width)
        .map(|i| {
            let a = i * n / width;
            let b = ((i + 1) * n / width).max(a + 1).min(n);
            r.spikes
                .get(a..b)
                .and_then(|s| s.iter().max().copied())
                .unwrap_or(0)
        })
        .collect();
    let mut bars: Vec<char> = table::sparkline(&cells, width)
        .chars()
        .map(|c| if c == ' ' { '·' } else { c })
        .collect();
    let cell_of = |t: f64| {
        if len > 0.0 {
            ((t / len) * (width as f64 - 1.0)).round() as usize
        } else {
            0
        }
    };
    for m in marks {
        if let Some(c) = bars.get_mut(cell_of(m.at.as_secs_f64())) {
            *c = '◆';
        }
    }
    let pos = cell_of(pos_s);
    let mut spans = vec![Span::styled(clock, theme.key)];
    if let Some(n) = note {
        spans.push(Span::styled(n, theme.warn));
    }
    let before: String = bars.iter().take(pos).collect();
    let at: String = bars.get(pos).map(|c| c.to_string()).unwrap_or_default();
    let after: String = bars.iter().skip(pos + 1).collect();
    spans.push(Span::styled(before, theme.warn));
    spans.push(Span::styled(at, theme.selected));
    spans.push(Span::styled(after, theme.dim));
    buf.set_line(area.x, area.y, &Line::from(spans), area.width);
}

fn tabs(app: &App, now: Duration, area: Rect, buf: &mut Buffer) {
    let theme = &app.theme;
    let mut tail = Vec::new();
    if let Some(sid) = app.drill.last().map(|d| d.sid) {
        tail.push(Span::styled(format!(" session {sid} "), theme.tab_active));
        tail.push(Span::raw(" "));
    }
    if let Some((note, start)) = app.note {
        tail.push(Span::styled(note(start + now), theme.warn));
    }
    let tail_width: usize = tail.iter().map(Span::width).sum();
    let labels = |short: bool, gap: &'static str| {
        let mut spans = Vec::new();
        for (i, p) in Pane::ALL.iter().enumerate() {
            let active = *p == app.pane && app.drill.is_empty();
            let title = if short && !active {
                p.short_title()
            } else {
                p.title()
            };
            let style = if active { theme.tab_active } else { theme.tab };
            spans.push(Span::styled(format!(" {} {title} ", i + 1), style));
            spans.push(Span::raw(gap));
        }
        spans.push(Span::raw(" "));
        spans
    };
    let width = usize::from(area.width);
    let fits = |spans: &[Span]| spans.iter().map(Span::width).sum::<usize>() + tail_width <= width;
    // Full titles when they and the note fit; else short titles for the panes not shown, so the
    // note (the demo's incident, the session drilled into) stays readable at 80 columns.
    // Narrow terminals keep room for the note after the tabs.
    let gap = if area.width < 120 { "" } else { " " };
    let mut spans = labels(false, gap);
    if !fits(&spans) {
        spans = labels(true, "");
    }
    if spans.iter().map(Span::width).sum::<usize>() > width {
        // 60 columns: the other panes by their numbers only, so the eighth is not cut (a
        // note after them is cut with `…` instead).
        spans = Vec::new();
        for (i, p) in Pane::ALL.iter().enumerate() {
            let active = *p == app.pane && app.drill.is_empty();
            let (text, style) = if active {
                (format!(" {} {} ", i + 1, p.title()), theme.tab_active)
            } else {
                (format!(" {} ", i + 1), theme.tab)
            };
            spans.push(Span::styled(text, style));
        }
        spans.push(Span::raw(" "));
    }
    spans.extend(tail);
    // The note after the tabs may not fit: it ends in `…` then.
    set_line_cut(buf, area.x, area.y, &Line::from(spans), area.width);
}

fn status_line(app: &App, _now: Duration, area: Rect, buf: &mut Buffer) {
    let theme = &app.theme;
    let width = usize::from(area.width);
    let prompt = |label: &str, text: &str, help: &str| {
        Line::from(vec![
            Span::styled(format!("{label}: "), theme.key),
            Span::raw(text.to_string()),
            Span::styled(format!("█  {help}"), theme.dim),
        ])
    };
    let line = match &app.prompt {
        Some(Prompt::Filter(text)) => prompt(
            "filter",
            text,
            "(Enter keeps, Esc clears; matches the row's text and its verdict)",
        ),
        Some(Prompt::Search(text)) => prompt(
            "search",
            text,
            "(Enter jumps to the next row holding it; n: again)",
        ),
        Some(Prompt::Session(text)) => prompt("session", text, "(its number; Enter opens it)"),
        Some(Prompt::Mark(at, text)) => {
            let when = app
                .wall_clock(*at)
                .map(crate::format::local_time)
                .unwrap_or_else(|| crate::format::clock(*at));
            prompt(
                "mark",
                text,
                &format!("(for {when}; Enter marks, Esc cancels)"),
            )
        }
        Some(Prompt::Follow(text)) => {
            let whom: Vec<String> = help::followable(app)
                .into_iter()
                .map(|(n, _, name)| format!("{n} {name}"))
                .collect();
            prompt(
                "follow",
                text,
                &format!("({}; Enter follows, Esc cancels)", whom.join(", ")),
            )
        }
        Some(Prompt::Seek(text)) => prompt(
            "seek to",
            text,
            "(90, 2m, 40% or a time of day 13:35:20; Esc cancels)",
        ),
        None => match app.current_message() {
            // Cut with an ellipsis, never silently: the start of a message says what it is.
            Some(m) => Line::from(Span::styled(table::fit(m, area.width, false), theme.warn)),
            None => {
                let mut spans = Vec::new();
                let mut used = 0usize;
                let t = app.table();
                if !t.filter.is_empty() && app.drill.is_empty() {
                    let total = if app.tree_shown(app.pane) {
                        app.shown().tree.len()
                    } else {
                        app.pane.len(app.shown())
                    };
                    let keys = app.key_phrases(
                        &[(&[Action::Filter], "edits"), (&[Action::Back], "clears")],
                        ", ",
                    );
                    let keys = if keys.is_empty() {
                        keys
                    } else {
                        format!(" ({keys})")
                    };
                    let text = format!(
                        " filter '{}': {} of {}{keys} ",
                        t.filter,
                        t.order.len(),
                        total
                    );
                    used += text.chars().count();
                    spans.push(Span::styled(text, theme.warn));
                }
                // One of several instances: Esc goes back to the fleet screen.
                let fleet: &[Hint] =
                    if app.instance.is_some() && app.drill.is_empty() && app.hotspot.is_none() {
                        &[(&[Action::Back], "fleet")]
                    } else {
                        &[]
                    };
                for (actions, what) in fleet.iter().chain(hints(app)) {
                    // An action left without a key (the config unbound it) is not hinted.
                    let Some(k) = app.keymap.hint(actions) else {
                        continue;
                    };
                    let n = k.chars().count() + what.chars().count() + 2;
                    if used + n > width {
                        break;
                    }
                    used += n;
                    spans.push(Span::styled(format!(" {k}"), theme.key));
                    spans.push(Span::raw(format!(" {what}")));
                }
                Line::from(spans)
            }
        },
    };
    buf.set_line(area.x, area.y, &line, area.width);
}

/// A hint of the status line: the actions whose keys it names (`↑/↓`: up and down, each by
/// its first key in the keymap, so a key bound in the config shows as bound), and what they do.
type Hint = (&'static [Action], &'static str);

/// The keys the status line names, most useful first (the line keeps what fits).
fn hints(app: &App) -> &'static [Hint] {
    if app.activity_shown() && app.activity.pick.is_some() {
        // Picking a span takes ←/→ from the replay's seek.
        &[
            (&[Action::ReplaySeekBack, Action::ReplaySeekForward], "move"),
            (&[Action::Home, Action::End], "ends"),
            (&[Action::SpanPick], "mark here"),
            (&[Action::DrillDown], "narrow the table"),
            (&[Action::Back], "cancel"),
        ]
    } else if app.replay.is_some() {
        &[
            (&[Action::Quit], "quit"),
            (&[Action::Help], "help"),
            (&[Action::ReplayPause], "pause"),
            (&[Action::ReplayStepBack, Action::ReplayStepForward], "step"),
            (&[Action::ReplaySeekBack, Action::ReplaySeekForward], "seek"),
            (&[Action::ReplaySeek], "go to"),
            (&[Action::ReplaySlower, Action::ReplayFaster], "speed"),
            (&[Action::DrillDown], "drill"),
            (&[Action::GotoSession], "sid"),
            (&[Action::Bookmark], "mark"),
        ]
    } else if !app.drill.is_empty() {
        &[
            (&[Action::Quit], "quit"),
            (&[Action::Help], "help"),
            (&[Action::Back], "back"),
            (&[Action::Up, Action::Down], "blocker"),
            (&[Action::DrillDown], "open blocker"),
            (&[Action::PageDown], "scroll"),
            (&[Action::Copy], "copy"),
            (&[Action::ToggleFreeze], "freeze"),
        ]
    } else if app.pane == Pane::Numa && app.hotspot.is_none() {
        &[
            (&[Action::Quit], "quit"),
            (&[Action::Help], "help"),
            (&[Action::GotoSession], "sid"),
            (&[Action::Copy], "copy"),
            (&[Action::ToggleFreeze], "freeze"),
            (
                &[Action::IntervalLonger, Action::IntervalShorter],
                "interval",
            ),
        ]
    } else if app.pane == Pane::Server && app.hotspot.is_none() {
        &[
            (&[Action::Quit], "quit"),
            (&[Action::Help], "help"),
            (&[Action::Up, Action::Down], "move"),
            (&[Action::DrillDown], "open the sid"),
            (&[Action::GotoSession], "sid"),
            (&[Action::Copy], "copy"),
            (&[Action::ToggleFreeze], "freeze"),
            (
                &[Action::IntervalLonger, Action::IntervalShorter],
                "interval",
            ),
        ]
    } else if app.pane == Pane::Activity && app.hotspot.is_none() {
        if app.activity.span.is_some() {
            &[
                (&[Action::Quit], "quit"),
                (&[Action::Back], "whole window"),
                (&[Action::SpanPick], "another span"),
                (&[Action::DrillDown], "drill"),
                (&[Action::GroupNext], "group by"),
                (&[Action::Copy], "copy"),
                (&[Action::ToggleFreeze], "freeze"),
            ]
        } else if app.activity.filter.is_some() {
            &[
                (&[Action::Quit], "quit"),
                (&[Action::Back], "back"),
                (&[Action::DrillDown], "open session"),
                (&[Action::GroupNext], "group by"),
                (&[Action::WindowNext], "window"),
                (&[Action::Copy], "copy"),
                (&[Action::ToggleFreeze], "freeze"),
            ]
        } else {
            &[
                (&[Action::Quit], "quit"),
                (&[Action::Help], "help"),
                (&[Action::Up, Action::Down], "move"),
                (&[Action::DrillDown], "drill"),
                (&[Action::GroupNext], "group by"),
                (&[Action::WindowNext], "window"),
                (&[Action::SpanPick], "span"),
                (&[Action::Copy], "copy"),
                (&[Action::ToggleFreeze], "freeze"),
            ]
        }
    } else if app.pane == Pane::Io && app.hotspot.is_none() {
        &[
            (&[Action::Quit], "quit"),
            (&[Action::Help], "help"),
            (&[Action::Up, Action::Down], "chunk"),
            (&[Action::Filter], "filter"),
            (&[Action::SortNext], "sort"),
            (&[Action::Copy], "copy"),
            (&[Action::ToggleFreeze], "freeze"),
            (
                &[Action::IntervalLonger, Action::IntervalShorter],
                "interval",
            ),
        ]
    } else if app.hotspot.is_some() {
        &[
            (&[Action::Quit], "quit"),
            (&[Action::Help], "help"),
            (&[Action::Back], "back"),
            (&[Action::Up, Action::Down], "session"),
            (&[Action::DrillDown], "open session"),
            (&[Action::Copy], "copy"),
            (&[Action::ToggleFreeze], "freeze"),
        ]
    } else {
        &[
            // The tabs above show each pane's number.
            (&[Action::Quit], "quit"),
            (&[Action::Help], "help"),
            (&[Action::DrillDown], "drill"),
            (&[Action::GotoSession], "sid"),
            (&[Action::Filter], "filter"),
            (&[Action::ToggleTree], "tree"),
            (&[Action::ToggleIdle], "idle"),
            (&[Action::SortNext], "sort"),
            (&[Action::ToggleFreeze], "freeze"),
            (
                &[Action::IntervalLonger, Action::IntervalShorter],
                "interval",
            ),
        ]
    }
}

/// Plain text of a rendered buffer, trailing blanks trimmed (exports, copies, snapshots).
pub fn buffer_text(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::with_capacity(usize::from(area.width + 1) * usize::from(area.height));
    for y in 0..area.height {
        let mut line = String::new();
        for x in 0..area.width {
            if let Some(cell) = buf.cell((area.x + x, area.y + y)) {
                line.push_str(cell.symbol());
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The selected row as plain text with its column titles, for the clipboard.
pub(crate) fn copy_text(app: &App) -> Option<String> {
    let snap = app.shown();
    // Who and when, so a pasted copy says what it describes.
    let mut out = provenance(app, snap);
    if let Some((d, view)) = app.session() {
        out.push_str(&session::text(view?, d, app.replay.is_some()));
        return Some(out);
    }
    if let Some((h, view)) = app.hotspot_screen() {
        out.push_str(&hotspot::text(view?, h));
        return Some(out);
    }
    let t = app.table();
    if app.pane == Pane::Server {
        out.push_str(&crate::tui::server_lines::report_text(snap));
        return Some(out);
    }
    if app.pane == Pane::Numa {
        out.push_str(&numa::report_text(snap));
        return Some(out);
    }
    if app.pane == Pane::Activity {
        out.push_str(&activity::report_text(app));
        return Some(out);
    }
    if app.pane == Pane::Io {
        // The selected chunk's screen text, then replication.
        let theme = crate::tui::theme::Theme::plain();
        if let Some(c) = t.order.get(t.selected).and_then(|&i| snap.io.chunks.get(i)) {
            for l in io::chunk_lines(c, 100, &theme, true) {
                let text: String = l.spans.iter().map(|x| x.content.as_ref()).collect();
                out.push_str(text.trim_end());
                out.push('\n');
            }
        }
        for l in io::replication_lines(&snap.replication, 100, &theme) {
            let text: String = l.spans.iter().map(|x| x.content.as_ref()).collect();
            out.push_str(text.trim_end());
            out.push('\n');
        }
        return Some(out);
    }
    let mut row = *t.order.get(t.selected)?;
    if app.tree_shown(app.pane) {
        match snap.tree.get(row)?.item {
            crate::model::tree::TreeItem::Waiter(i) => row = i,
            crate::model::tree::TreeItem::Head(sid) => {
                let h = snap.heads.iter().find(|h| h.sid == sid)?;
                out.push_str(&format!(
                    "HEAD BLOCKER: sid {} {}, {}, {}, blocks {}\n",
                    h.sid,
                    h.user,
                    h.state,
                    crate::format::count(h.locks, "lock", "locks"),
                    h.blocked
                ));
                return Some(out);
            }
            crate::model::tree::TreeItem::Deadlock(sid) => {
                out.push_str(&format!("DEADLOCK: lowest sid {sid}\n"));
                return Some(out);
            }
        }
    }
    let list = app.pane.list()?;
    let rows = PaneRows { list, snap };
    for (i, c) in list.columns().iter().enumerate() {
        out.push_str(&format!("{}: {}\n", c.spec().title, rows.cell(row, i)));
    }
    Some(out)
}

/// `ifxtop 2026-11-22T13:35:20Z db01 ol_prod`: the first line of a copy or an export.
pub fn provenance(app: &App, snap: &crate::model::snapshot::Snapshot) -> String {
    format!(
        "ifxtop {} host {} server {}\n",
        snap.time.as_deref().unwrap_or("(time unknown)"),
        snap.host.as_deref().unwrap_or("?"),
        app.server.as_deref().unwrap_or("?")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::keymap::Keymap;
    use std::collections::BTreeMap;

    fn status_line(keymap: Keymap) -> String {
        let mut app = App::new(
            keymap,
            crate::tui::theme::Theme::plain(),
            crate::tui::app::Mode::Demo { seed: 1 },
            Duration::from_secs(1),
        );
        app.size = (100, 24);
        app.handle(Action::PaneActivity, Duration::ZERO);
        let area = Rect::new(0, 0, 100, 24);
        let mut buf = Buffer::empty(area);
        render(&app, Duration::ZERO, area, &mut buf);
        buffer_text(&buf)
            .lines()
            .last()
            .unwrap_or_default()
            .to_string()
    }

    /// The status line names the keys the keymap binds: a window key moved to `W` in the
    /// config shows as `W`, and a copy key taken away is not offered.
    #[test]
    fn the_status_line_names_the_keys_the_config_binds() {
        let line = status_line(Keymap::default());
        assert!(line.contains(" w window"), "{line}");
        assert!(line.contains(" y copy"), "{line}");
        let mut keys = BTreeMap::new();
        keys.insert("window-next".to_string(), vec!["W".to_string()]);
        keys.insert("copy".to_string(), vec![]);
        let line = status_line(Keymap::from_config(&keys).expect("keymap"));
        assert!(line.contains(" W window"), "{line}");
        assert!(!line.contains(" w window"), "{line}");
        assert!(!line.contains("copy"), "{line}");
    }

    /// The hints inside the panes name the bound keys too: rebound, the Waiters' summary says
    /// `(o sorts)` and `(I)`, a filter's footer `x clears`, the Activity title `(W)`; a key
    /// taken away leaves its hint out.
    #[test]
    fn the_hints_in_the_panes_name_the_keys_the_config_binds() {
        let mut keys = BTreeMap::new();
        keys.insert("sort-next".to_string(), vec!["o".to_string()]);
        keys.insert("toggle-idle".to_string(), vec!["I".to_string()]);
        keys.insert("back".to_string(), vec!["x".to_string()]);
        keys.insert("window-next".to_string(), vec!["W".to_string()]);
        keys.insert("group-next".to_string(), vec![]);
        keys.insert("toggle-freeze".to_string(), vec!["F".to_string()]);
        keys.insert("rebuild-extents".to_string(), vec!["E".to_string()]);
        let mut app = App::new(
            Keymap::from_config(&keys).expect("keymap"),
            crate::tui::theme::Theme::plain(),
            crate::tui::app::Mode::Demo { seed: 1 },
            Duration::from_secs(1),
        );
        app.size = (160, 24);
        let mut snap = crate::model::snapshot::Snapshot::default();
        snap.summary.idle = 1;
        app.set_snapshot(std::sync::Arc::new(snap));
        let screen = |app: &App| {
            let area = Rect::new(0, 0, 160, 24);
            let mut buf = Buffer::empty(area);
            render(app, Duration::ZERO, area, &mut buf);
            buffer_text(&buf)
        };
        app.handle(Action::PaneWaiters, Duration::ZERO);
        let text = screen(&app);
        assert!(text.contains("(o sorts)"), "{text}");
        assert!(!text.contains("(s sorts)"), "{text}");
        assert!(text.contains("idle shown (I)"), "{text}");
        app.tables[Pane::Waiters.index()].filter = "nothing".into();
        let text = screen(&app);
        assert!(text.contains("(x clears it)"), "{text}");
        assert!(!text.contains("Esc"), "{text}");
        app.tables[Pane::Waiters.index()].filter.clear();
        app.handle(Action::PaneBuffers, Duration::ZERO);
        let text = screen(&app);
        assert!(text.contains("(--extents FILE or E)"), "{text}");
        app.handle(Action::ToggleFreeze, Duration::ZERO);
        let text = screen(&app);
        assert!(
            text.contains("frozen: collection goes on; F to resume"),
            "{text}"
        );
        app.handle(Action::ToggleFreeze, Duration::ZERO);
        app.handle(Action::PaneActivity, Duration::ZERO);
        let text = screen(&app);
        assert!(text.contains("(W)"), "{text}");
        assert!(!text.contains("(w)") && !text.contains("(g)"), "{text}");
    }
}
