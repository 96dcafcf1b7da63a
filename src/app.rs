//! App state: pane, selection, sort, filter, freeze, drill stack, messages. Only this module
//! changes it; side effects (interval, rebuild, clipboard, files) are returned as `Effect`s.

use crate::collect::INTERVALS;
use crate::ids::Sid;
use crate::keymap::{Action, Keymap};
use crate::model::snapshot::Snapshot;
use crate::views::panes::Pane;
use crate::views::table::scroll_offset;
use crate::views::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::sync::Arc;
use std::time::Duration;

/// Selection, scroll, sort and filter of one list pane.
#[derive(Debug, Clone, PartialEq)]
pub struct TableUi {
    /// Position in `order` (not a row index).
    pub selected: usize,
    pub offset: usize,
    pub sort_col: usize,
    pub sort_desc: bool,
    pub filter: String,
    /// Row indices of the shown snapshot, sorted and filtered.
    pub order: Vec<usize>,
    /// The snapshot `order` indexes into: the selected row's identity is read from it when the
    /// next snapshot arrives (its row indices mean other rows).
    basis: Option<Arc<Snapshot>>,
    /// The user moved the selection off the top row: it then follows its row as data moves.
    /// Left on the top row, it stays there, so what matters most stays in view, as in `top`.
    pub follow: bool,
    /// `order` is of an older snapshot: sorted again when the pane is shown (only the pane on
    /// screen is sorted with every snapshot; thousands of rows each).
    stale: bool,
}

impl TableUi {
    fn new(pane: Pane) -> Self {
        let (sort_col, sort_desc) = pane.default_sort();
        TableUi {
            selected: 0,
            offset: 0,
            sort_col,
            sort_desc,
            filter: String::new(),
            order: Vec::new(),
            basis: None,
            follow: false,
            stale: false,
        }
    }
}

/// One session screen on the drill stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrillUi {
    pub sid: Sid,
    /// The selected link of its blocker chain (Enter drills into it).
    pub selected: usize,
}

/// Where the data comes from, for the header.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    Live,
    Demo { seed: u64 },
    Replay { file: String },
}

/// The extent map's state, for the header and the Buffers pane.
#[derive(Debug, Clone, PartialEq)]
pub enum ExtentStatus {
    /// Not asked for (no oncheck, no file).
    None,
    /// Being read or built; `what` says from where (`oncheck -pe`, a file, the cache).
    Building {
        what: String,
        since: Duration,
    },
    Ready {
        what: String,
        extents: usize,
        /// When the map was built (session time; negative ages come from the cache).
        built_at: Duration,
        age_at_load: Duration,
    },
    Failed {
        error: String,
        at: Duration,
    },
}

/// Replay position, for the header and the timeline bar.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReplayUi {
    pub position: Duration,
    pub length: Duration,
    pub paused: bool,
    pub speed: f64,
    /// Waiting threads per bucket over the whole recording (the timeline's spikes).
    pub spikes: Vec<u64>,
    pub skipped: Vec<String>,
}

/// What the live loop must do after an action.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    SetInterval(f64),
    RebuildExtents,
    /// Put this text on the clipboard (OSC 52).
    Copy(String),
    /// Write the screen and the snapshot to files.
    Export,
    Replay(ReplayCommand),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ReplayCommand {
    TogglePause,
    Step(i32),
    Speed(f64),
    SeekBy(f64),
    SeekTo(Duration),
    SeekPercent(f64),
}

/// What a line of input at the bottom is for.
#[derive(Debug, Clone, PartialEq)]
pub enum Prompt {
    Filter(String),
    Seek(String),
}

pub struct App {
    pub keymap: Keymap,
    pub theme: Theme,
    pub mode: Mode,
    pub server: Option<String>,
    pub pane: Pane,
    pub tables: [TableUi; 4],
    pub help: bool,
    pub prompt: Option<Prompt>,
    pub live: Arc<Snapshot>,
    /// The snapshot kept on screen while frozen, and when it was frozen.
    pub frozen: Option<(Arc<Snapshot>, Duration)>,
    pub interval: f64,
    pub hide_idle: bool,
    pub tree: bool,
    /// Sessions drilled into, innermost last.
    pub drill: Vec<DrillUi>,
    pub message: Option<(String, Duration)>,
    pub quit: bool,
    pub extents: ExtentStatus,
    pub replay: Option<ReplayUi>,
    /// A one-line note under the tabs (the demo's current incident).
    pub note: Option<String>,
    /// Terminal size, set on start and resize: the app pages by it.
    pub size: (u16, u16),
}

/// How long a message stays on the status line.
pub const MESSAGE_TTL: Duration = Duration::from_secs(6);

/// Rows above a list pane's table body: header (2), tabs (1), summary (1), column header (1);
/// below it: the status line (1).
pub const CHROME_ROWS: u16 = 6;

impl App {
    pub fn new(keymap: Keymap, theme: Theme, mode: Mode, interval: f64) -> Self {
        App {
            keymap,
            theme,
            mode,
            server: None,
            pane: Pane::Waiters,
            tables: Pane::ALL.map(TableUi::new),
            help: false,
            prompt: None,
            live: Arc::new(Snapshot::default()),
            frozen: None,
            interval,
            hide_idle: false,
            tree: false,
            drill: Vec::new(),
            message: None,
            quit: false,
            extents: ExtentStatus::None,
            replay: None,
            note: None,
            size: (80, 24),
        }
    }

    /// The snapshot on screen: the frozen one, else the live one.
    pub fn shown(&self) -> &Arc<Snapshot> {
        self.frozen.as_ref().map_or(&self.live, |(s, _)| s)
    }

    pub fn table(&self) -> &TableUi {
        &self.tables[self.pane.index()]
    }

    fn table_mut(&mut self) -> &mut TableUi {
        &mut self.tables[self.pane.index()]
    }

    /// Rows of table body that fit on screen.
    pub fn page_rows(&self) -> usize {
        let chrome = CHROME_ROWS + u16::from(self.replay.is_some());
        usize::from(self.size.1.saturating_sub(chrome)).max(1)
    }

    pub fn say(&mut self, text: impl Into<String>, now: Duration) {
        self.message = Some((text.into(), now));
    }

    /// The message still worth showing at `now`.
    pub fn current_message(&self, now: Duration) -> Option<&str> {
        self.message
            .as_ref()
            .filter(|(_, at)| now.saturating_sub(*at) < MESSAGE_TTL)
            .map(|(m, _)| m.as_str())
    }

    /// A new snapshot from the store. While frozen it is kept aside; the screen does not move.
    pub fn set_snapshot(&mut self, snap: Arc<Snapshot>) {
        self.live = snap;
        if self.frozen.is_none() {
            self.refresh_orders();
        }
    }

    /// Recomputes the shown pane's sorted, filtered row order, keeping the selected row
    /// selected; the other panes' orders are recomputed when they are shown.
    pub fn refresh_orders(&mut self) {
        for pane in Pane::ALL {
            if pane == self.pane {
                self.refresh_order(pane);
            } else {
                self.tables[pane.index()].stale = true;
            }
        }
    }

    fn refresh_order(&mut self, pane: Pane) {
        let snap = self.shown().clone();
        let hide_idle = self.hide_idle;
        let page = self.page_rows();
        let t = &mut self.tables[pane.index()];
        t.stale = false;
        let prev_row = t.order.get(t.selected).copied().filter(|_| t.follow);
        let prev_id = match (&t.basis, prev_row) {
            (Some(basis), Some(r)) => pane.row_id(basis, r),
            _ => None,
        };
        t.basis = Some(snap.clone());
        let needle = t.filter.to_lowercase();
        if pane == Pane::Waiters && self.tree {
            // Tree order: each head's waiters, nearest first; rows outside every tree left out.
            let mut order = Vec::new();
            for h in &snap.heads {
                let mut rows: Vec<usize> = (0..snap.waiters.len())
                    .filter(|&i| snap.waiters[i].head_blocker == Some(h.sid))
                    .filter(|&i| needle.is_empty() || pane.row_text(&snap, i).contains(&needle))
                    .collect();
                rows.sort_by_key(|&i| (snap.waiters[i].blockers.len(), snap.waiters[i].sessid));
                order.extend(rows);
            }
            t.order = order;
            t.selected = t.selected.min(t.order.len().saturating_sub(1));
            return;
        }
        let mut order: Vec<usize> = (0..pane.len(&snap))
            .filter(|&i| {
                !(hide_idle && pane == Pane::Waiters && snap.waiters.get(i).is_some_and(|w| w.idle))
            })
            .filter(|&i| needle.is_empty() || pane.row_text(&snap, i).contains(&needle))
            .collect();
        let (col, desc) = (t.sort_col, t.sort_desc);
        let mut keys = vec![crate::views::table::SortKey::None; pane.len(&snap)];
        for &i in &order {
            keys[i] = pane.sort_key(&snap, i, col);
        }
        order.sort_by(|a, b| keys[*a].compare_dir(&keys[*b], desc).then(a.cmp(b)));
        // Keep the same row selected when it is still there.
        if let Some(id) = prev_id {
            if let Some(pos) = order
                .iter()
                .position(|&i| pane.row_id(&snap, i).as_deref() == Some(id.as_str()))
            {
                t.selected = pos;
            }
        }
        t.order = order;
        t.selected = t.selected.min(t.order.len().saturating_sub(1));
        t.offset = scroll_offset(t.selected, t.offset, page, t.order.len());
    }

    /// The session of the selected row: a waiter, a socket's session, a hot spot's owner.
    pub fn selected_sid(&self) -> Option<Sid> {
        let snap = self.shown();
        let t = self.table();
        let row = *t.order.get(t.selected)?;
        match self.pane {
            Pane::Waiters => snap.waiters.get(row).map(|w| w.sessid),
            Pane::Sockets => snap.sockets.get(row).and_then(|s| s.sessid),
            Pane::Buffers => snap.hotspots.get(row).and_then(|h| h.owner_sid),
            Pane::Numa => None,
        }
    }

    /// The session screen on top of the drill stack, and its content when built.
    pub fn session(&self) -> Option<(&DrillUi, Option<&crate::model::session::SessionView>)> {
        let d = self.drill.last()?;
        Some((d, self.shown().sessions.iter().find(|s| s.sid == d.sid)))
    }

    fn move_selection(&mut self, delta: isize) {
        if let Some(d) = self.drill.last().copied() {
            let links = self
                .shown()
                .sessions
                .iter()
                .find(|s| s.sid == d.sid)
                .map_or(0, |s| s.chain.len());
            if let Some(top) = self.drill.last_mut() {
                let target = top.selected as isize + delta;
                top.selected = target.clamp(0, links.saturating_sub(1) as isize) as usize;
            }
            return;
        }
        let page = self.page_rows();
        let t = self.table_mut();
        let len = t.order.len();
        if len == 0 {
            t.selected = 0;
            return;
        }
        let target = t.selected as isize + delta;
        t.selected = target.clamp(0, len as isize - 1) as usize;
        t.follow = t.selected != 0;
        t.offset = scroll_offset(t.selected, t.offset, page, len);
    }

    fn set_pane(&mut self, pane: Pane) {
        self.pane = pane;
        self.drill.clear();
        if self.tables[pane.index()].stale {
            self.refresh_order(pane);
        }
    }

    /// Handles a key: typed text while a prompt is open, else the keymap's action.
    pub fn on_key(&mut self, key: KeyEvent, now: Duration) -> Vec<Effect> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        if let Some(prompt) = self.prompt.take() {
            return self.on_prompt_key(prompt, key, now);
        }
        if self.help {
            // Any key closes the help; q still quits.
            self.help = false;
            if self.keymap.action(&key) == Some(Action::Quit) {
                self.quit = true;
            }
            return Vec::new();
        }
        match self.keymap.action(&key) {
            Some(a) => self.handle(a, now),
            None => Vec::new(),
        }
    }

    fn on_prompt_key(&mut self, prompt: Prompt, key: KeyEvent, now: Duration) -> Vec<Effect> {
        let ctrl_c =
            key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        if ctrl_c {
            self.quit = true;
            return Vec::new();
        }
        match prompt {
            Prompt::Filter(mut text) => {
                match key.code {
                    KeyCode::Esc => {
                        self.table_mut().filter.clear();
                        self.refresh_order(self.pane);
                        return Vec::new();
                    }
                    KeyCode::Enter => return Vec::new(),
                    KeyCode::Backspace => {
                        text.pop();
                    }
                    KeyCode::Char(c) if !c.is_control() => text.push(c),
                    _ => {}
                }
                self.table_mut().filter = text.clone();
                self.table_mut().selected = 0;
                self.table_mut().follow = false;
                self.refresh_order(self.pane);
                self.prompt = Some(Prompt::Filter(text));
                Vec::new()
            }
            Prompt::Seek(mut text) => match key.code {
                KeyCode::Esc => Vec::new(),
                KeyCode::Enter => match parse_seek(&text) {
                    Some(cmd) => vec![Effect::Replay(cmd)],
                    None => {
                        self.say(
                            format!("cannot seek to '{text}': use 90, 1:30, 2m or 40%"),
                            now,
                        );
                        Vec::new()
                    }
                },
                KeyCode::Backspace => {
                    text.pop();
                    self.prompt = Some(Prompt::Seek(text));
                    Vec::new()
                }
                KeyCode::Char(c) if !c.is_control() => {
                    text.push(c);
                    self.prompt = Some(Prompt::Seek(text));
                    Vec::new()
                }
                _ => {
                    self.prompt = Some(Prompt::Seek(text));
                    Vec::new()
                }
            },
        }
    }

    /// Carries out one action.
    pub fn handle(&mut self, action: Action, now: Duration) -> Vec<Effect> {
        let page = self.page_rows() as isize;
        match action {
            Action::Quit => self.quit = true,
            Action::Help => self.help = !self.help,
            Action::Up => self.move_selection(-1),
            Action::Down => self.move_selection(1),
            Action::PageUp => self.move_selection(-page),
            Action::PageDown => self.move_selection(page),
            Action::Home => self.move_selection(isize::MIN / 2),
            Action::End => self.move_selection(isize::MAX / 2),
            Action::NextPane => {
                let i = (self.pane.index() + 1) % Pane::ALL.len();
                self.set_pane(Pane::ALL[i]);
            }
            Action::PrevPane => {
                let i = (self.pane.index() + Pane::ALL.len() - 1) % Pane::ALL.len();
                self.set_pane(Pane::ALL[i]);
            }
            Action::PaneWaiters => self.set_pane(Pane::Waiters),
            Action::PaneBuffers => self.set_pane(Pane::Buffers),
            Action::PaneSockets => self.set_pane(Pane::Sockets),
            Action::PaneNuma => self.set_pane(Pane::Numa),
            Action::DrillDown if !self.drill.is_empty() => match self.session() {
                Some((d, Some(view))) => match view.chain.get(d.selected) {
                    Some(link) => {
                        let sid = link.sid;
                        self.drill.push(DrillUi { sid, selected: 0 });
                    }
                    None => self.say("nothing blocks this session: no one to drill into", now),
                },
                _ => self.say("this session's details are not collected yet", now),
            },
            Action::DrillDown => match self.selected_sid() {
                Some(sid) if sid.0 != 0 => {
                    if self.frozen.is_some() && !self.shown().sessions.iter().any(|s| s.sid == sid)
                    {
                        self.say(
                            "frozen: the session screen shows live data (space resumes)",
                            now,
                        );
                    }
                    self.drill.push(DrillUi { sid, selected: 0 });
                }
                Some(_) => self.say("a daemon thread (session 0) has no session to show", now),
                None => self.say(
                    "select a waiter, a hot spot with an owner or a socket with a session",
                    now,
                ),
            },
            Action::Back => {
                if self.drill.pop().is_none() {
                    if !self.table().filter.is_empty() {
                        self.table_mut().filter.clear();
                        self.refresh_order(self.pane);
                    } else if self.help {
                        self.help = false;
                    }
                }
            }
            Action::Filter => {
                if self.pane != Pane::Numa {
                    self.prompt = Some(Prompt::Filter(self.table().filter.clone()));
                }
            }
            Action::SortNext | Action::SortReverse => {
                let cols = self.pane.columns().len();
                if cols > 0 {
                    let t = self.table_mut();
                    if action == Action::SortNext {
                        t.sort_col = (t.sort_col + 1) % cols;
                    } else {
                        t.sort_desc = !t.sort_desc;
                    }
                    let title = self.pane.columns()[self.table().sort_col].title;
                    let dir = if self.table().sort_desc {
                        "descending"
                    } else {
                        "ascending"
                    };
                    self.say(format!("sorted by {title}, {dir}"), now);
                    self.refresh_order(self.pane);
                }
            }
            Action::ToggleFreeze => {
                if self.frozen.take().is_none() {
                    self.frozen = Some((self.live.clone(), now));
                    self.say("frozen: collection goes on; space to resume", now);
                } else {
                    self.refresh_orders();
                }
            }
            Action::IntervalLonger | Action::IntervalShorter => {
                let pos = INTERVALS
                    .iter()
                    .position(|&i| i >= self.interval)
                    .unwrap_or(INTERVALS.len() - 1);
                let new = if action == Action::IntervalLonger {
                    INTERVALS[(pos + 1).min(INTERVALS.len() - 1)]
                } else {
                    INTERVALS[pos.saturating_sub(1)]
                };
                if (new - self.interval).abs() > f64::EPSILON {
                    self.interval = new;
                    self.say(format!("refresh every {new}s"), now);
                    return vec![Effect::SetInterval(new)];
                }
            }
            Action::ToggleIdle => {
                self.hide_idle = !self.hide_idle;
                self.say(
                    if self.hide_idle {
                        "idle client waits hidden (i to show)"
                    } else {
                        "idle client waits shown"
                    },
                    now,
                );
                self.refresh_order(Pane::Waiters);
            }
            Action::RebuildExtents => {
                if matches!(self.mode, Mode::Replay { .. }) {
                    self.say("replay: the extent map comes from the recording", now);
                } else {
                    return vec![Effect::RebuildExtents];
                }
            }
            Action::ToggleTree => {
                if self.pane == Pane::Waiters {
                    self.tree = !self.tree;
                    self.tables[Pane::Waiters.index()].selected = 0;
                    self.tables[Pane::Waiters.index()].follow = false;
                    self.refresh_order(Pane::Waiters);
                } else {
                    self.say("the blocker tree is a view of the Waiters pane (1)", now);
                }
            }
            Action::Copy => {
                return match crate::views::copy_text(self) {
                    Some(text) => vec![Effect::Copy(text)],
                    None => {
                        self.say("nothing selected to copy", now);
                        Vec::new()
                    }
                }
            }
            Action::Export => return vec![Effect::Export],
            Action::ReplayPause
            | Action::ReplayStepForward
            | Action::ReplayStepBack
            | Action::ReplayFaster
            | Action::ReplaySlower
            | Action::ReplaySeekForward
            | Action::ReplaySeekBack
            | Action::ReplaySeek => {
                if self.replay.is_none() {
                    if action == Action::ReplayPause {
                        self.say("not replaying (space freezes the screen)", now);
                    }
                    return Vec::new();
                }
                let cmd = match action {
                    Action::ReplayPause => ReplayCommand::TogglePause,
                    Action::ReplayStepForward => ReplayCommand::Step(1),
                    Action::ReplayStepBack => ReplayCommand::Step(-1),
                    Action::ReplayFaster => ReplayCommand::Speed(2.0),
                    Action::ReplaySlower => ReplayCommand::Speed(0.5),
                    Action::ReplaySeekForward => ReplayCommand::SeekBy(0.1),
                    Action::ReplaySeekBack => ReplayCommand::SeekBy(-0.1),
                    _ => {
                        self.prompt = Some(Prompt::Seek(String::new()));
                        return Vec::new();
                    }
                };
                return vec![Effect::Replay(cmd)];
            }
        }
        Vec::new()
    }
}

/// `90` or `90s` (seconds), `1:30`, `2m`, `40%`.
pub fn parse_seek(text: &str) -> Option<ReplayCommand> {
    let t = text.trim();
    if let Some(p) = t.strip_suffix('%') {
        let v: f64 = p.trim().parse().ok()?;
        return (0.0..=100.0)
            .contains(&v)
            .then_some(ReplayCommand::SeekPercent(v / 100.0));
    }
    if let Some((m, s)) = t.split_once(':') {
        let m: u64 = m.trim().parse().ok()?;
        let s: u64 = s.trim().parse().ok()?;
        return Some(ReplayCommand::SeekTo(Duration::from_secs(m * 60 + s)));
    }
    if let Some(m) = t.strip_suffix('m') {
        let m: f64 = m.trim().parse().ok()?;
        return Duration::try_from_secs_f64(m * 60.0)
            .ok()
            .map(ReplayCommand::SeekTo);
    }
    let s: f64 = t.strip_suffix('s').unwrap_or(t).trim().parse().ok()?;
    Duration::try_from_secs_f64(s)
        .ok()
        .map(ReplayCommand::SeekTo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seek_syntax() {
        assert_eq!(
            parse_seek("90"),
            Some(ReplayCommand::SeekTo(Duration::from_secs(90)))
        );
        assert_eq!(
            parse_seek("1:30"),
            Some(ReplayCommand::SeekTo(Duration::from_secs(90)))
        );
        assert_eq!(
            parse_seek("2m"),
            Some(ReplayCommand::SeekTo(Duration::from_secs(120)))
        );
        assert_eq!(parse_seek("40%"), Some(ReplayCommand::SeekPercent(0.4)));
        assert_eq!(parse_seek("140%"), None);
        assert_eq!(parse_seek("soon"), None);
    }
}
