//! The help screen: every key binding (from the keymap, so it matches the config) and what
//! each pane shows.

use crate::app::App;
use crate::keymap::Action;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

const ORDER: &[Action] = &[
    Action::Quit,
    Action::Help,
    Action::Up,
    Action::Down,
    Action::PageUp,
    Action::PageDown,
    Action::Home,
    Action::End,
    Action::NextPane,
    Action::PaneWaiters,
    Action::PaneBuffers,
    Action::PaneSockets,
    Action::PaneNuma,
    Action::DrillDown,
    Action::Back,
    Action::Filter,
    Action::SortNext,
    Action::SortReverse,
    Action::ToggleFreeze,
    Action::IntervalLonger,
    Action::IntervalShorter,
    Action::ToggleIdle,
    Action::ToggleTree,
    Action::RebuildExtents,
    Action::Copy,
    Action::Export,
    Action::ReplayPause,
    Action::ReplayStepBack,
    Action::ReplayStepForward,
    Action::ReplaySeekBack,
    Action::ReplaySeekForward,
    Action::ReplaySeek,
    Action::ReplaySlower,
    Action::ReplayFaster,
];

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let w = area.width.saturating_sub(4).min(76);
    let h = area.height.saturating_sub(2);
    let r = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + 1,
        width: w,
        height: h,
    };
    Clear.render(r, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" ifxtop help — any key closes ");
    let inner = block.inner(r);
    block.render(r, buf);
    let bindings = app.keymap.bindings();
    let mut lines: Vec<Line> = Vec::new();
    for a in ORDER {
        let Some(keys) = bindings.get(a) else {
            continue;
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{:<14}", keys.join(" ")), app.theme.key),
            Span::raw(a.describe()),
        ]));
    }
    lines.push(Line::from(""));
    lines.push(Line::from(
        "Waiters: threads waiting (onstat -u flag 1) joined to what they wait on.",
    ));
    lines.push(Line::from(
        "Buffers: objects with buffer waits (onstat -X), over a window and since start.",
    ));
    lines.push(Line::from(
        "Sockets: client connections by Send-Q: a growing Send-Q = slow network/client.",
    ));
    lines.push(Line::from(
        "NUMA: node memory, zone_reclaim_mode, page scans, where oninit memory lives.",
    ));
    // Two columns of bindings when the screen is short.
    let rows = usize::from(inner.height);
    if lines.len() > rows && inner.width >= 70 {
        let half = usize::from(inner.width / 2);
        for (i, l) in lines.iter().enumerate() {
            let col = i / rows;
            let row = i % rows;
            if col > 1 {
                break;
            }
            let x = inner.x + u16::try_from(col * half).unwrap_or(0);
            let y = inner.y + u16::try_from(row).unwrap_or(0);
            buf.set_line(x, y, l, u16::try_from(half).unwrap_or(0));
        }
    } else {
        for (i, l) in lines.iter().take(rows).enumerate() {
            let y = inner.y + u16::try_from(i).unwrap_or(0);
            buf.set_line(inner.x, y, l, inner.width);
        }
    }
}
