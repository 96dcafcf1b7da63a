//! The one place app state changes: keys, new snapshots and resizes in, `Effect`s out for the
//! run loop to carry out (interval, rebuild, clipboard, files, replay).

use crate::collect::extents::ExtentStatus;
use crate::collect::replay::ReplayCommand;
use crate::collect::INTERVALS;
use crate::model::snapshot::Snapshot;
use crate::tui::app::{App, DrillUi, Effect, Mode, Prompt, TableUi};
use crate::tui::keymap::Action;
use crate::tui::panes::{Order, Pane};
use crate::tui::table::scroll_offset;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::sync::Arc;
use std::time::Duration;

impl App {
    fn table_mut(&mut self) -> &mut TableUi {
        &mut self.tables[self.pane.index()]
    }

    pub(crate) fn say(&mut self, text: impl Into<String>, now: Duration) {
        self.message = Some((text.into(), now));
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
    pub(crate) fn refresh_orders(&mut self) {
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
        let sort = t.sort;
        let desc = match sort {
            Order::Concern => true,
            Order::By { desc, .. } => desc,
        };
        let mut keys = vec![crate::tui::table::SortKey::None; pane.len(&snap)];
        for &i in &order {
            keys[i] = pane.sort_key(&snap, i, sort);
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
                if !self.pane.columns().is_empty() {
                    let pane = self.pane;
                    let t = self.table_mut();
                    t.sort = match (action, t.sort) {
                        (Action::SortNext, o) => pane.next_order(o),
                        (_, Order::By { column, desc }) => Order::By {
                            column,
                            desc: !desc,
                        },
                        // The grouped order has one direction: reversing it starts at the
                        // first column, descending.
                        (_, Order::Concern) => match pane.next_order(Order::Concern) {
                            Order::By { column, .. } => Order::By { column, desc: true },
                            o => o,
                        },
                    };
                    let msg = match self.table().sort {
                        Order::Concern => format!("sorted by {}", Order::Concern.label()),
                        Order::By { column, desc } => format!(
                            "sorted by {}, {}",
                            column.spec().title,
                            if desc { "descending" } else { "ascending" }
                        ),
                    };
                    self.say(msg, now);
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
                } else if matches!(self.extents, ExtentStatus::Building { .. }) {
                    self.say("the extent map is being built already", now);
                } else {
                    self.say(
                        "rebuilding the extent map (oncheck -pe) in the background",
                        now,
                    );
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
                return match crate::tui::views::copy_text(self) {
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
pub(crate) fn parse_seek(text: &str) -> Option<ReplayCommand> {
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
