//! The help screen: every key binding (read from the keymap, so it matches the config) grouped
//! so that it fits 80x24, and what each pane shows.

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
        &[Action::SortNext, Action::SortReverse],
        "sort column / reverse",
    ),
    (&[Action::ToggleFreeze], "freeze / resume"),
    (
        &[Action::IntervalLonger, Action::IntervalShorter],
        "interval longer/shorter",
    ),
    (&[Action::ToggleIdle], "hide / show idle waits"),
    (&[Action::ToggleTree], "blocker tree / list"),
    (&[Action::RebuildExtents], "rebuild extent map"),
    (&[Action::Copy, Action::Export], "copy (OSC 52) / export"),
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
    "8 Activity database time by class; g: by SQL, user, object...; w: window",
    // At 80x24 the panes and this line fill the box: each line stands alone.
    "B C G L S T Y X: waits on buffer ckpt log lock mutex txn cond rollback",
    "-u 2s in the header: the age of each source's data",
];

pub(crate) fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let w = area.width.saturating_sub(2).min(84);
    let h = area.height.saturating_sub(1);
    let r = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + 1,
        width: w,
        height: h,
    };
    // The whole screen below the title bar, so nothing of the pane shows at the sides.
    Clear.render(
        Rect {
            y: area.y + 1,
            height: area.height.saturating_sub(1),
            ..area
        },
        buf,
    );
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" ifxtop help — any key closes ");
    let inner = block.inner(r);
    block.render(r, buf);
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
    let two_columns = inner.width >= 70;
    let col_w = if two_columns {
        inner.width / 2
    } else {
        inner.width
    };
    let per_col = if two_columns {
        entries.len().div_ceil(2)
    } else {
        entries.len()
    };
    let key_w = 14usize;
    for (i, (keys, what)) in entries.iter().enumerate() {
        let (col, row) = (i / per_col, i % per_col);
        let Ok(row) = u16::try_from(row) else { break };
        if row >= inner.height {
            continue;
        }
        let x = inner.x + u16::try_from(col).unwrap_or(0) * col_w;
        let line = Line::from(vec![
            Span::styled(format!("{:<key_w$}", cut(keys, key_w - 1)), app.theme.key),
            Span::raw(what.to_string()),
        ]);
        buf.set_line(x, inner.y + row, &line, col_w.saturating_sub(1));
    }
    // The pane list right under the keys: at 80x24 every line is needed.
    let first = inner.y + u16::try_from(per_col).unwrap_or(inner.height);
    for (y, p) in (first..inner.y + inner.height).zip(PANES) {
        buf.set_line(inner.x, y, &Line::from(*p), inner.width);
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
