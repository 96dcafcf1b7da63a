//! The help screen: every key binding (read from the keymap, so it matches the config) grouped
//! so that it fits 80x24, what each pane shows, and what ifxtop costs this server; it scrolls
//! on a smaller terminal.

use crate::tui::app::App;
use crate::tui::keymap::Action;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

/// Lines of the help: actions that share a line, and what the line says.
const GROUPS: &[(&[Action], &str)] = &[
    (&[Action::Quit], "quit"),
    (&[Action::Help, Action::Findings], "help / every finding"),
    (&[Action::Up, Action::Down], "move"),
    (&[Action::PageUp, Action::PageDown], "page"),
    (&[Action::Home, Action::End], "first / last row"),
    (
        &[Action::NextPane, Action::PrevPane],
        "next / previous pane",
    ),
    (
        &[
            Action::PaneSessions,
            Action::PaneWaiters,
            Action::PaneBuffers,
            Action::PaneSockets,
            Action::PaneNuma,
            Action::PaneServer,
            Action::PaneIo,
            Action::PaneActivity,
        ],
        "the eight panes (below)",
    ),
    (&[Action::DrillDown], "open the row's screen"),
    (&[Action::GotoSession], "open session by number"),
    (&[Action::Back], "back / clear filter"),
    (&[Action::Filter, Action::Search], "filter / find next"),
    (
        &[
            Action::SortNext,
            Action::SortReverse,
            Action::SortCpu,
            Action::SortMem,
        ],
        "sort / rev / CPU% / MEM",
    ),
    (&[Action::ToggleFreeze], "freeze / resume"),
    (
        &[Action::IntervalLonger, Action::IntervalShorter],
        "interval longer/shorter",
    ),
    (&[Action::ToggleIdle], "hide / show idle waits"),
    (&[Action::ToggleTree], "blocker tree / list"),
    (&[Action::RebuildExtents], "rebuild extent map"),
    (
        &[Action::Copy, Action::Export, Action::Bookmark],
        "copy / export / mark",
    ),
    (&[Action::Follow], "follow another's view"),
    (&[Action::ReplayPause], "replay: pause / play"),
    (
        &[Action::ReplayStepBack, Action::ReplayStepForward],
        "replay: step back/fwd",
    ),
    (
        &[Action::ReplaySeekBack, Action::ReplaySeekForward],
        "replay: seek -/+10%",
    ),
    (&[Action::ReplaySeek], "replay: seek to time/%"),
    (
        &[Action::ReplaySlower, Action::ReplayFaster],
        "replay: slower / faster",
    ),
    (&[Action::Redraw, Action::Suspend], "redraw / suspend (fg)"),
];

/// What each pane shows, then how to read the header.
const PANES: &[&str] = &[
    "1 Sessions every session: running, waiting or idle, what it blocks",
    "2 Waiters  who waits (onstat -u), on what, for how long; Enter explains",
    "3 Buffers  objects with buffer waits (onstat -X); Enter: pages, waiters",
    "4 Sockets  client connections by Send-Q: growing = slow network/client",
    "5 NUMA     node memory, zone_reclaim_mode, page scans, oninit per node",
    "6 Server   rates, checkpoints, logs, VPs, mutexes, memory; Enter on a sid",
    "7 I/O & HA chunks: Informix's ms/op vs device await, %util; replica lag",
    "8 Activity database time by class; g: by SQL, user...; w: window; v: a span",
    // At 80x24 the panes and this line fill the box: each line stands alone.
    "B C G L S T Y X: waits on buffer ckpt log lock mutex txn cond rollback",
    "-u 2s in the header: the age of each source's data",
];

/// Where the help box goes on a screen of `area`.
fn boxed(area: Rect) -> Rect {
    let w = area.width.saturating_sub(2).min(84);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + 1,
        width: w,
        height: area.height.saturating_sub(1),
    }
}

/// The help's lines for a box whose inside is `width` wide: the keys (in two columns when they
/// fit), then what each pane shows.
fn lines(app: &App, width: u16) -> Vec<Line<'static>> {
    let bindings = app.keymap.bindings();
    let entries: Vec<(String, &str)> = GROUPS
        .iter()
        .filter_map(|(actions, what)| {
            let mut keys: Vec<String> = actions
                .iter()
                .filter_map(|a| bindings.get(a))
                .flatten()
                .cloned()
                .collect();
            // Plain keys first: Ctrl- variants are alternatives.
            keys.sort_by_key(|k| k.starts_with("Ctrl-"));
            (!keys.is_empty()).then(|| (digit_run(&keys).unwrap_or_else(|| keys.join(" ")), *what))
        })
        .collect();
    let two_columns = width >= 70;
    let col_w = usize::from(if two_columns { width / 2 } else { width });
    let per_col = if two_columns {
        entries.len().div_ceil(2)
    } else {
        entries.len()
    };
    let key_w = 14usize;
    let what_w = col_w.saturating_sub(key_w + 1);
    let entry = |(keys, what): &(String, &str), spans: &mut Vec<Span<'static>>| {
        spans.push(Span::styled(
            format!("{:<key_w$}", cut(keys, key_w - 1)),
            app.theme.key,
        ));
        spans.push(Span::raw(format!(
            "{:<what_w$} ",
            crate::tui::table::fit(what, u16::try_from(what_w).unwrap_or(u16::MAX), false)
        )));
    };
    let mut out = Vec::new();
    for row in 0..per_col {
        let mut spans = Vec::new();
        if let Some(e) = entries.get(row) {
            entry(e, &mut spans);
        }
        if two_columns {
            if let Some(e) = entries.get(row + per_col) {
                entry(e, &mut spans);
            }
        }
        out.push(Line::from(spans));
    }
    // The pane list right under the keys: at 80x24 every line is needed. A narrow box wraps
    // each under its text (`1 Sessions ` is 11 wide), as it scrolls anyway.
    let w = usize::from(width);
    for p in PANES {
        let (head, rest) = p.split_at(p.char_indices().nth(11).map_or(p.len(), |(i, _)| i));
        if p.chars().count() <= w || w < 31 {
            out.push(Line::from(*p));
        } else if head.ends_with(' ') {
            for (i, part) in crate::tui::table::wrap(rest, w - 11)
                .into_iter()
                .enumerate()
            {
                let lead = if i == 0 { head } else { "           " };
                out.push(Line::from(format!("{lead}{part}")));
            }
        } else {
            for (i, part) in crate::tui::table::wrap(p, w - 2).into_iter().enumerate() {
                let lead = if i == 0 { "" } else { "  " };
                out.push(Line::from(format!("{lead}{part}")));
            }
        }
    }
    // Watching together: who watches, from where, since when, how far behind.
    if let Some(w) = app.watching.as_deref() {
        out.extend(watching_lines(app, w, w_usize(width)));
    }
    // Last, what ifxtop costs this server (the Server pane has it per source).
    let mut cost = crate::tui::server_lines::cost_and_ring(app.shown())
        .unwrap_or_else(|| "not measured yet".to_string());
    if let Some(words) = app
        .watching
        .as_deref()
        .and_then(crate::tui::server_lines::watch_words)
    {
        cost.push_str(&format!("; {words}"));
    }
    for (i, part) in crate::tui::table::wrap(
        &format!("ifxtop's cost: {cost} (6: per source)"),
        w.saturating_sub(2).max(20),
    )
    .into_iter()
    .enumerate()
    {
        out.push(Line::from(if i == 0 { part } else { format!("  {part}") }));
    }
    out
}

fn w_usize(width: u16) -> usize {
    usize::from(width)
}

/// The help's section on watching together: whom this screen follows or where it shares, then
/// one line a viewer (who, how, from where, since when, how far behind), then the last marks.
fn watching_lines(
    app: &App,
    w: &crate::instance::share::Watching,
    width: usize,
) -> Vec<Line<'static>> {
    let mut out = vec![Line::from("")];
    let head = match (&w.following, &w.sharing) {
        (Some(f), _) => format!(
            "Watching together: following {}{}",
            crate::format::printable(f),
            w.behind_s
                .map_or(String::new(), |b| format!(", {b:.1}s behind the collector"))
        ),
        (None, Some(s)) => format!(
            "Watching together: shared at {}",
            crate::format::printable(s)
        ),
        (None, None) => "Watching together".to_string(),
    };
    for (i, part) in crate::tui::table::wrap(&head, width.saturating_sub(2).max(20))
        .into_iter()
        .enumerate()
    {
        out.push(Line::from(if i == 0 { part } else { format!("  {part}") }));
    }
    if w.viewers.is_empty() {
        out.push(Line::from("  nobody attached"));
    }
    let fit = |text: &str| {
        Line::from(crate::tui::table::fit(
            text,
            u16::try_from(width).unwrap_or(u16::MAX),
            false,
        ))
    };
    if let Some(v) = &w.screen {
        out.push(fit(&format!(
            "  0 the collector's screen: {}",
            view_words(app, v)
        )));
    }
    for (i, v) in w.viewers.iter().enumerate() {
        let since =
            time::OffsetDateTime::parse(&v.since, &time::format_description::well_known::Rfc3339)
                .map(|t| {
                    let offset = app
                        .wall_clock(std::time::Duration::ZERO)
                        .map_or(time::UtcOffset::UTC, |w| w.offset());
                    crate::format::local_time(t.to_offset(offset))
                })
                .unwrap_or_else(|_| "?".to_string());
        let behind = v
            .behind_s
            .map_or("behind ?".to_string(), |b| format!("{b:.1}s behind"));
        let you = if w.you == Some(v.id) { "  (you)" } else { "" };
        let follows = match v.view.as_ref().and_then(|v| v.follows) {
            Some(0) => "  follows the collector's screen".to_string(),
            Some(id) => match w.viewers.iter().position(|o| o.id == id) {
                Some(k) => format!("  follows {}", k + 1),
                None => String::new(),
            },
            None => String::new(),
        };
        let text = format!(
            "  {} {:<10} {:<6} {:<16} since {since}  {behind}{you}{follows}",
            i + 1,
            crate::tui::table::fit(&crate::format::printable(&v.user), 10, false),
            v.via,
            crate::tui::table::fit(
                &crate::format::printable(v.host.as_deref().unwrap_or("-")),
                16,
                false
            ),
        );
        out.push(Line::from(crate::tui::table::fit(
            &text,
            u16::try_from(width).unwrap_or(u16::MAX),
            false,
        )));
    }
    // Follow-me: whom this screen follows, and how to.
    let follow = match &app.following {
        Some((_, name)) => format!("  following {name}'s view: any key comes back to yours"),
        None => app.key_of(Action::Follow).map_or(String::new(), |k| {
            format!("  {k} and a number: follow that one's view (pane, session, moment)")
        }),
    };
    if !follow.is_empty() {
        out.push(fit(&follow));
    }
    if w.following.is_some() {
        let back = app.key_phrases(
            &[
                (
                    &[
                        Action::ReplaySeekBack,
                        Action::ReplayStepBack,
                        Action::ReplaySeek,
                    ],
                    "go back over what was received",
                ),
                (&[Action::ToggleFreeze], "the live end"),
            ],
            ", ",
        );
        let kept = match &w.kept {
            Some(k) => match &k.stopped {
                Some(why) => format!(" ({}; {why})", crate::format::human_bytes(k.bytes)),
                None => format!(" ({} kept)", crate::format::human_bytes(k.bytes)),
            },
            None => String::new(),
        };
        out.push(fit(&format!("  {back}{kept}")));
    }
    for m in w.marks.iter().rev().take(3) {
        let at = app
            .wall_clock(std::time::Duration::try_from_secs_f64(m.at).unwrap_or_default())
            .map(crate::format::local_time)
            .unwrap_or_else(|| format!("{:.0}s", m.at));
        let text = crate::format::printable(&format!("  mark by {}: {at} {}", m.by, m.text));
        out.push(Line::from(crate::tui::table::fit(
            &text,
            u16::try_from(width).unwrap_or(u16::MAX),
            false,
        )));
    }
    out
}

/// Whose view may be followed (`@`), as numbered in the help: the collector's screen 0 (when
/// it shares one), then every viewer from 1, in the presence list's order; with how each is
/// named.
pub(crate) fn followable(app: &App) -> Vec<(usize, u64, String)> {
    let Some(w) = app.watching.as_deref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if w.screen.is_some() {
        out.push((0, 0, "the collector's screen".to_string()));
    }
    for (i, v) in w.viewers.iter().enumerate() {
        let host = v.host.as_deref().map_or(String::new(), |h| format!("@{h}"));
        let you = if w.you == Some(v.id) { " (you)" } else { "" };
        out.push((
            i + 1,
            v.id,
            crate::format::printable(&format!("{}{host}{you}", v.user)),
        ));
    }
    out
}

/// How a view followed is said: `pane 2, sid 812 open, at 13:34:50`.
pub(crate) fn view_words(app: &App, v: &crate::collect::wire::View) -> String {
    let pane = crate::tui::panes::Pane::ALL
        .get(usize::from(v.pane).saturating_sub(1))
        .map_or("?", |p| p.short_title());
    let mut s = pane.to_string();
    if let Some(sid) = v.sid {
        s.push_str(&format!(", sid {sid}{}", if v.open { " open" } else { "" }));
    }
    match v.at {
        Some(at) => {
            let at = std::time::Duration::try_from_secs_f64(at).unwrap_or_default();
            let when = app
                .wall_clock(at)
                .map(crate::format::local_time)
                .unwrap_or_else(|| crate::format::clock(at));
            s.push_str(&format!(", at {when}"));
        }
        None => s.push_str(", live"),
    }
    s
}

/// How far the help can scroll on a screen of `area`: the lines below the box.
pub(crate) fn max_scroll(app: &App, area: Rect) -> usize {
    let inner = boxed(area).inner(ratatui::layout::Margin::new(1, 1));
    lines(app, inner.width)
        .len()
        .saturating_sub(usize::from(inner.height))
}

pub(crate) fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let r = boxed(area);
    // The whole screen below the title bar, so nothing of the pane shows at the sides.
    Clear.render(
        Rect {
            y: area.y + 1,
            height: area.height.saturating_sub(1),
            ..area
        },
        buf,
    );
    let inner = r.inner(ratatui::layout::Margin::new(1, 1));
    let all = lines(app, inner.width);
    let scroll = app.help_scroll.min(max_scroll(app, area));
    let below = all.len().saturating_sub(scroll + usize::from(inner.height));
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_set(app.theme.border_set());
    block = if below > 0 || scroll > 0 {
        block.title(" ifxtop help — ↑/↓ PgDn scroll, other keys close ")
    } else {
        block.title(" ifxtop help — any key closes ")
    };
    // Said on the frame, not over a line: what is below and how to get there.
    if below > 0 {
        block = block.title_bottom(format!(
            " ↓ {} more line{} (↓/PgDn) ",
            below,
            if below == 1 { "" } else { "s" }
        ));
    } else if scroll > 0 {
        block = block.title_bottom(" end of help (↑/PgUp back) ");
    }
    block.render(r, buf);
    for (y, line) in (inner.y..inner.y + inner.height).zip(all.iter().skip(scroll)) {
        super::set_line_cut(buf, inner.x, y, line, inner.width);
    }
}

/// Keys that are the digits of one run (`1 2 3 4 5 6 7 8`) as the run (`1-8`).
fn digit_run(keys: &[String]) -> Option<String> {
    let digits: Vec<u32> = keys
        .iter()
        .map(|k| {
            let mut c = k.chars();
            match (c.next(), c.next()) {
                (Some(d), None) => d.to_digit(10),
                _ => None,
            }
        })
        .collect::<Option<_>>()?;
    let consecutive = digits.windows(2).all(|w| w[1] == w[0] + 1);
    (digits.len() > 2 && consecutive).then(|| format!("{}-{}", digits[0], digits[digits.len() - 1]))
}

/// The keys that fit in `n` characters, whole keys only (`PgUp PgDn` rather than `PgUp PgDn Ctr`).
fn cut(s: &str, n: usize) -> String {
    let mut out = String::new();
    for k in s.split(' ') {
        let need = if out.is_empty() { k.len() } else { k.len() + 1 };
        if out.chars().count() + need > n {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(k);
    }
    out
}
