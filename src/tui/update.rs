//! The one place app state changes: keys, new snapshots and resizes in, `Effect`s out for the
//! run loop to carry out (interval, rebuild, clipboard, files, replay).

use crate::collect::extents::ExtentStatus;
use crate::collect::replay::ReplayCommand;
use crate::collect::INTERVALS;
use crate::ids::Sid;
use crate::model::snapshot::Snapshot;
use crate::model::tree::TreeItem;
use crate::tui::app::{App, DrillUi, Effect, Mode, Prompt, TableUi};
use crate::tui::keymap::Action;
use crate::tui::panes::{Column, ListPane, Order, Pane, RowId, SessionCol};
use crate::tui::table::scroll_offset;
use crate::tui::table::SortKey;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::sync::Arc;
use std::time::Duration;

/// Lines of a session screen a page key scrolls by when the terminal's height is not known.
const SESSION_PAGE: usize = 10;

/// What the status line says when the screen is frozen (taken off when it resumes).
const FROZEN_SAID: &str = "frozen: collection goes on";

impl App {
    fn table_mut(&mut self) -> &mut TableUi {
        &mut self.tables[self.pane.index()]
    }

    /// Puts `text` on the status line (it expires after a few seconds of the user's time).
    pub fn say(&mut self, text: impl Into<String>, _now: Duration) {
        self.message = Some((text.into(), self.clock));
    }

    /// A new snapshot from the store. While frozen it is kept aside; the screen does not move.
    pub fn set_snapshot(&mut self, snap: Arc<Snapshot>) {
        self.live = snap;
        if self.frozen.is_none() {
            self.refresh_orders();
        }
    }

    /// A new version of the frozen snapshot (a session drilled into while frozen, built from
    /// the frozen moment's data).
    pub(crate) fn set_frozen_snapshot(&mut self, snap: Arc<Snapshot>) {
        if let Some((s, _)) = &mut self.frozen {
            *s = snap;
        }
    }

    /// Recomputes the shown pane's sorted, filtered row order, keeping the selected row
    /// selected; the other panes' orders are recomputed when they are shown.
    pub(crate) fn refresh_orders(&mut self) {
        for pane in Pane::ALL {
            if pane == self.pane {
                self.refresh_order(pane);
            } else {
                self.let_go(pane);
            }
        }
    }

    /// Lets go of the live snapshot before the next is built, so the two are not held at once
    /// (about 4.5 MB each at 5,000 sessions): every table keeps its selected row's identity
    /// instead, and the next snapshot's order follows it. Not while frozen: the tables are of
    /// the frozen snapshot then.
    /// Returns the snapshot let go (its rows' room is kept for the next build).
    pub fn release_live(&mut self) -> Option<Arc<Snapshot>> {
        if self.frozen.is_some() {
            return None;
        }
        for pane in Pane::ALL {
            self.let_go(pane);
        }
        Some(std::mem::replace(
            &mut self.live,
            Arc::new(Snapshot::default()),
        ))
    }

    /// Marks a pane off screen stale, keeping its selected row's identity and letting go of
    /// the snapshot its order was of.
    fn let_go(&mut self, pane: Pane) {
        let t = &self.tables[pane.index()];
        if let Some(basis) = &t.basis {
            let row = t.order.get(t.selected).copied().filter(|_| t.follow);
            let kept = row.and_then(|r| self.row_id_of(pane, basis, r));
            let t = &mut self.tables[pane.index()];
            t.kept = kept;
            t.basis = None;
        }
        self.tables[pane.index()].stale = true;
    }

    /// What identifies row `row` of `pane` (a tree line when the tree is shown).
    fn row_id_of(&self, pane: Pane, snap: &Snapshot, row: usize) -> Option<RowId> {
        if self.tree_shown(pane) {
            return match snap.tree.get(row)?.item {
                TreeItem::Head(s) => Some(RowId::Head(s)),
                TreeItem::Deadlock(s) => Some(RowId::Deadlock(s)),
                TreeItem::Waiter(i) => pane.row_id(snap, i),
            };
        }
        pane.row_id(snap, row)
    }

    /// Whether row `row` of `pane` (a tree line when the tree is shown) is the one `id` names.
    fn is_row_of(&self, pane: Pane, snap: &Snapshot, row: usize, id: &RowId) -> bool {
        if self.tree_shown(pane) {
            return match (snap.tree.get(row).map(|l| l.item), id) {
                (Some(TreeItem::Head(s)), RowId::Head(h)) => s == *h,
                (Some(TreeItem::Deadlock(s)), RowId::Deadlock(d)) => s == *d,
                (Some(TreeItem::Waiter(i)), _) => pane.is_row(snap, i, id),
                _ => false,
            };
        }
        pane.is_row(snap, row, id)
    }

    fn refresh_order(&mut self, pane: Pane) {
        let snap = self.shown().clone();
        let page = self.page_rows();
        let tree = self.tree_shown(pane);
        let hide_idle = self.hide_idle;
        let t = &self.tables[pane.index()];
        let prev_row = t.order.get(t.selected).copied().filter(|_| t.follow);
        let prev_id = match (&t.basis, prev_row) {
            (Some(basis), Some(r)) => self.row_id_of(pane, basis, r),
            (Some(_), None) => None,
            (None, _) => t.kept.clone().filter(|_| t.follow),
        };
        let needle = t.filter.to_lowercase();
        let sort = t.sort;
        let order = match pane.list() {
            _ if tree => tree_order(&snap, &needle),
            Some(list) => list_order(&snap, list, sort, &needle, hide_idle),
            // A report keeps its own order.
            None => (0..pane.len(&snap)).collect(),
        };
        // Keep the same row selected when it is still there.
        let keep = prev_id.and_then(|id| {
            order
                .iter()
                .position(|&i| self.is_row_of(pane, &snap, i, &id))
        });
        let t = &mut self.tables[pane.index()];
        t.stale = false;
        t.basis = Some(snap);
        t.kept = None;
        if let Some(pos) = keep {
            t.selected = pos;
        }
        t.order = order;
        t.selected = t.selected.min(t.order.len().saturating_sub(1));
        t.offset = scroll_offset(t.selected, t.offset, page, t.order.len());
    }

    fn move_selection(&mut self, delta: isize) {
        if let Some((_, view)) = self.hotspot_screen() {
            let n = view.map_or(0, |v| v.sessions().len());
            if let Some(h) = self.hotspot.as_mut() {
                let target = h.selected as isize + delta;
                h.selected = target.clamp(0, n.saturating_sub(1) as isize) as usize;
            }
            return;
        }
        if let Some(d) = self.drill.last().copied() {
            let links = self
                .session()
                .and_then(|(_, v)| v)
                .map_or(0, |v| v.chain.len());
            if let Some(top) = self.drill.last_mut() {
                if links > 0 && delta.unsigned_abs() == 1 {
                    let target = d.selected as isize + delta;
                    top.selected = target.clamp(0, links as isize - 1) as usize;
                } else {
                    // The screen scrolls; the view keeps `scroll` within its lines.
                    let target = d.scroll as isize + delta;
                    top.scroll = target.max(0) as usize;
                }
            }
            return;
        }
        let page = self.page_rows();
        let server = (self.pane == Pane::Server).then(|| {
            crate::tui::server_lines::lines(self.shown(), &crate::tui::theme::Theme::plain())
                .iter()
                .map(|l| l.sid.is_some())
                .collect::<Vec<bool>>()
        });
        let t = self.table_mut();
        let len = t.order.len();
        if len == 0 {
            t.selected = 0;
            return;
        }
        if let Some(sids) = server {
            let selectable: Vec<usize> = (0..len)
                .filter(|&p| t.order.get(p).and_then(|&r| sids.get(r)) == Some(&true))
                .collect();
            t.selected = server_step(&selectable, t.selected, delta, len);
        } else {
            let target = t.selected as isize + delta;
            t.selected = target.clamp(0, len as isize - 1) as usize;
        }
        t.follow = t.selected != 0;
        t.offset = scroll_offset(t.selected, t.offset, page, len);
    }

    fn set_pane(&mut self, pane: Pane) {
        self.pane = pane;
        self.drill.clear();
        self.hotspot = None;
        if self.tables[pane.index()].stale {
            self.refresh_order(pane);
        }
    }

    /// The Activity pane is on screen (no session or hot spot screen above it).
    pub(crate) fn activity_shown(&self) -> bool {
        self.pane == Pane::Activity && self.drill.is_empty() && self.hotspot.is_none()
    }

    /// The moment the Activity chart ends at: the moment shown, on the span cursor's grid.
    fn chart_end(&self) -> Option<f64> {
        let snap = self.shown();
        let at = snap
            .moment_s
            .or_else(|| snap.activity.as_ref().map(|r| r.to_s))?;
        Some(self.activity.on_grid(at))
    }

    /// `v` in the Activity pane: a cursor on the chart's newest step, marked there.
    fn span_pick_start(&mut self, now: Duration) {
        let Some(end) = self.chart_end() else {
            self.say("no samples yet: nothing to pick a span of", now);
            return;
        };
        self.activity.pick = Some(crate::tui::app::SpanPick {
            mark: end,
            cursor: end,
        });
        let keys = self.key_phrases(
            &[
                (&[Action::ReplaySeekBack, Action::ReplaySeekForward], "move"),
                (&[Action::SpanPick], "marks here"),
                (&[Action::DrillDown], "narrows the table to it"),
                (&[Action::Back], "cancels"),
            ],
            ", ",
        );
        self.say(format!("span: {keys}"), now);
    }

    /// A key while a span is being picked; `false` for a key the pick leaves alone (↑/↓ move
    /// in the table, `q` quits...).
    fn span_pick_key(&mut self, action: Action, now: Duration) -> bool {
        let (Some(mut pick), Some(end)) = (self.activity.pick, self.chart_end()) else {
            return false;
        };
        let step = self.activity.step();
        // The chart's first step, or the session's first (nothing was sampled before it).
        let first = (end - f64::from(self.activity.window_s) + step).max(step.min(end));
        match action {
            Action::ReplaySeekBack => pick.cursor -= step,
            Action::ReplaySeekForward => pick.cursor += step,
            Action::Home => pick.cursor = first,
            Action::End => pick.cursor = end,
            Action::SpanPick => {
                pick.mark = pick.cursor;
                let at = self.moment_words(pick.mark);
                self.say(
                    format!(
                        "marked {at}: move to the span's other end{}",
                        self.key_of(Action::DrillDown)
                            .map_or_else(String::new, |k| format!(", then {k}"))
                    ),
                    now,
                );
            }
            Action::DrillDown => {
                let span = pick.span(step);
                self.activity.span = Some(span);
                self.activity.pick = None;
                self.table_mut().selected = 0;
                let words = format!(
                    "the table covers {} to {}{}",
                    self.moment_words(span.0),
                    self.moment_words(span.1),
                    self.key_of(Action::Back)
                        .map_or_else(String::new, |k| format!(" ({k}: the whole window)"))
                );
                self.say(words, now);
                return true;
            }
            Action::Back => {
                self.activity.pick = None;
                self.say("no span picked", now);
                return true;
            }
            _ => return false,
        }
        pick.cursor = pick.cursor.clamp(first, end);
        self.activity.pick = Some(pick);
        true
    }

    /// A moment (session seconds) as the screen says it: the server's clock time when known.
    pub fn moment_words(&self, at: f64) -> String {
        match self.wall_clock(Duration::from_secs_f64(at.max(0.0))) {
            Some(w) => crate::format::local_time(w),
            None => format!("{at:.0} s"),
        }
    }

    /// Enter in the Activity pane: a session (or head blocker) opens its screen; any other
    /// group narrows the table to its rows, grouped by session.
    fn activity_drill(&mut self, now: Duration) {
        use crate::model::activity::Key;
        if let Some(sid) = self.selected_sid() {
            self.open_session(sid, now);
            return;
        }
        let t = self.table();
        let entry = t
            .order
            .get(t.selected)
            .and_then(|&r| crate::tui::panes::activity_entry(self.shown(), r));
        let Some(entry) = entry else {
            self.say("no group selected", now);
            return;
        };
        match self.activity.group {
            Key::Session | Key::HeadBlocker => {
                self.say("no session to open here", now);
            }
            key => {
                self.activity.filter = Some((key, entry.key.clone()));
                self.activity.group = Key::Session;
                self.table_mut().selected = 0;
            }
        }
    }

    /// Opens what the selected finding blames: its session, its hot spot, its chunk in the I/O
    /// pane; the pane that shows the rest (a peer, a NUMA node, the server's state).
    fn open_finding(&mut self, now: Duration) {
        use crate::model::findings::FindingKind as K;
        let Some(f) = self.shown().findings.get(self.findings_selected).cloned() else {
            self.say("no finding to open", now);
            return;
        };
        let c = &f.culprit;
        let hot = c.object.as_ref().filter(|o| {
            f.kind == K::BufferHotSpot && self.shown().hotspots.iter().any(|h| &h.object == *o)
        });
        if let Some(object) = hot {
            self.set_pane(Pane::Buffers);
            self.select_row(|snap, r| snap.hotspots.get(r).is_some_and(|h| &h.object == object));
            self.hotspot = Some(crate::tui::app::HotspotUi {
                object: object.clone(),
                selected: 0,
            });
        } else if let (Some(chunk), true) = (c.chunk, c.sids.is_empty()) {
            self.set_pane(Pane::Io);
            self.select_row(|snap, r| snap.io.chunks.get(r).is_some_and(|x| x.chunk == chunk));
        } else if let Some(sid) = c.sids.first() {
            self.open_session(*sid, now);
        } else if let Some(peer) = &c.peer {
            self.set_pane(Pane::Io);
            self.say(
                format!("replica {peer}: under the chunks, with its lag"),
                now,
            );
        } else if f.kind == K::MemoryReclaim || c.numa_node.is_some() {
            // Memory reclaim, or what it slows (a checkpoint flushing through it).
            self.set_pane(Pane::Numa);
        } else if f.kind == K::CpuSaturation {
            // Who uses the CPUs: the sessions by CPU%, their statements beside them.
            self.sort_sessions_by(SessionCol::Cpu, now);
        } else if f.kind == K::ClientNetwork {
            self.set_pane(Pane::Sessions);
        } else {
            self.set_pane(Pane::Server);
        }
    }

    /// Selects the first row of the current pane's order that `is` holds for.
    fn select_row(&mut self, is: impl Fn(&crate::model::snapshot::Snapshot, usize) -> bool) {
        let snap = Arc::clone(self.shown());
        let page = self.page_rows();
        let t = self.table_mut();
        let n = t.order.len();
        if let Some(pos) = t.order.iter().position(|&r| is(&snap, r)) {
            t.selected = pos;
            t.follow = true;
            t.offset = scroll_offset(pos, t.offset, page, n);
        }
    }

    /// `sid` is in the sessions shown, or there are none yet to say it is not (before the first
    /// onstat -u, a number typed is taken on trust).
    fn session_known(&self, sid: Sid) -> bool {
        let snap = self.shown();
        (snap.sessions.is_empty() && snap.waiters.is_empty())
            || snap.sessions.iter().any(|s| s.sessid == sid)
            || snap.waiters.iter().any(|w| w.sessid == sid)
    }

    /// Opens the screen of `sid` (on top of the drill stack).
    fn open_session(&mut self, sid: Sid, now: Duration) {
        if sid.0 == 0 {
            self.say(
                "session 0 is the server's own threads: no session to show",
                now,
            );
            return;
        }
        self.drill.push(DrillUi::new(sid));
    }

    /// Handles a key: typed text while a prompt is open, else the keymap's action.
    pub fn on_key(&mut self, key: KeyEvent, now: Duration) -> Vec<Effect> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        let ctrl_c =
            key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        if let Some(prompt) = self.prompt.take() {
            if ctrl_c {
                self.quit = true;
                return Vec::new();
            }
            return self.on_prompt_key(prompt, key, now);
        }
        if self.findings {
            // Up and down select a finding, Enter opens its culprit; any other key closes the
            // findings, as it does the help.
            match self.keymap.action(&key).filter(|_| !ctrl_c) {
                Some(Action::Up) => {
                    self.findings_selected = self.findings_selected.saturating_sub(1);
                }
                Some(Action::Down) => {
                    let last = self.shown().findings.len().saturating_sub(1);
                    self.findings_selected = (self.findings_selected + 1).min(last);
                }
                Some(Action::DrillDown) => {
                    self.findings = false;
                    self.open_finding(now);
                }
                _ => {
                    self.findings = false;
                    self.quit = ctrl_c;
                }
            }
            return Vec::new();
        }
        if self.help {
            // The moving keys scroll it (a small terminal does not show it all); any other key
            // closes the help, `q` included: a quit by reflex must not end a session (or a
            // recording). Ctrl-C still quits.
            let area = ratatui::layout::Rect::new(0, 0, self.size.0, self.size.1);
            let max = crate::tui::views::help::max_scroll(self, area);
            let page = usize::from(self.size.1.saturating_sub(4)).max(1);
            let at = self.help_scroll.min(max);
            self.help_scroll = match self.keymap.action(&key).filter(|_| !ctrl_c) {
                Some(Action::Up) => at.saturating_sub(1),
                Some(Action::Down) => (at + 1).min(max),
                Some(Action::PageUp) => at.saturating_sub(page),
                Some(Action::PageDown) => (at + page).min(max),
                Some(Action::Home) => 0,
                Some(Action::End) => max,
                _ => {
                    self.help = false;
                    self.quit = ctrl_c;
                    0
                }
            };
            return Vec::new();
        }
        match self.keymap.action(&key) {
            Some(a) => self.handle(a, now),
            None => {
                // A key from another tool's habits does something here or says why not.
                if let Some(k) = crate::tui::keymap::Key::from_event(&key) {
                    self.say(unbound_hint(&k.label()), now);
                }
                Vec::new()
            }
        }
    }

    fn on_prompt_key(&mut self, prompt: Prompt, key: KeyEvent, now: Duration) -> Vec<Effect> {
        // Edits the prompt's text; `None` when the key ended the prompt (Enter, Esc).
        let edit = |text: &mut String| -> Option<KeyCode> {
            match key.code {
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Char(c) if !c.is_control() => text.push(c),
                KeyCode::Enter | KeyCode::Esc => return Some(key.code),
                _ => {}
            }
            None
        };
        match prompt {
            Prompt::Filter(mut text) => {
                match edit(&mut text) {
                    Some(KeyCode::Esc) => {
                        self.table_mut().filter.clear();
                        self.refresh_order(self.pane);
                        return Vec::new();
                    }
                    Some(_) => return Vec::new(),
                    None => {}
                }
                self.table_mut().filter = text.clone();
                self.table_mut().selected = 0;
                self.table_mut().follow = false;
                self.refresh_order(self.pane);
                self.prompt = Some(Prompt::Filter(text));
                Vec::new()
            }
            Prompt::Search(mut text) => {
                match edit(&mut text) {
                    Some(KeyCode::Enter) => {
                        self.search = text;
                        self.search_next(now);
                    }
                    Some(_) => {}
                    None => self.prompt = Some(Prompt::Search(text)),
                }
                Vec::new()
            }
            Prompt::Session(mut text) => {
                match edit(&mut text) {
                    Some(KeyCode::Enter) => match text.trim().parse::<u64>() {
                        Ok(n) if n != 0 && !self.session_known(Sid(n)) => {
                            self.say(format!("no such session {n} (not in onstat -u)"), now)
                        }
                        Ok(n) => self.open_session(Sid(n), now),
                        Err(_) => self.say(format!("'{text}' is not a session number"), now),
                    },
                    Some(_) => {}
                    None => self.prompt = Some(Prompt::Session(text)),
                }
                Vec::new()
            }
            Prompt::Mark(at, mut text) => match edit(&mut text) {
                Some(KeyCode::Enter) => vec![Effect::Mark {
                    at,
                    note: text.trim().to_string(),
                }],
                Some(_) => Vec::new(),
                None => {
                    // A note is a line: as long as a viewer's mark may be.
                    if text.chars().count() > crate::collect::wire::MAX_MARK_TEXT {
                        text.pop();
                    }
                    self.prompt = Some(Prompt::Mark(at, text));
                    Vec::new()
                }
            },
            Prompt::Follow(mut text) => {
                match edit(&mut text) {
                    Some(KeyCode::Enter) => match text.trim().parse::<usize>() {
                        Ok(n) => {
                            let you = self.watching.as_ref().and_then(|w| w.you);
                            match crate::tui::views::help::followable(self)
                                .into_iter()
                                .find(|f| f.0 == n)
                            {
                                Some((_, id, _)) if Some(id) == you => self.say("that is you", now),
                                Some((_, id, _)) => self.follow_asked = Some(id),
                                None => {
                                    self.say(format!("nobody is {n} in the list (? shows it)"), now)
                                }
                            }
                        }
                        Err(_) => self.say(format!("'{text}' is not a number of the list"), now),
                    },
                    Some(_) => {}
                    None => self.prompt = Some(Prompt::Follow(text)),
                }
                Vec::new()
            }
            Prompt::Seek(mut text) => match edit(&mut text) {
                Some(KeyCode::Enter) => {
                    let started = match &self.replay {
                        Some(r) => r.started,
                        // A viewer: times of day on the collector's clock.
                        None => self.wall_start,
                    };
                    match parse_seek(&text, started) {
                        Some(cmd) => vec![Effect::Replay(cmd)],
                        None => {
                            self.say(
                                format!(
                                    "cannot seek to '{text}': use 90, 2m, 1m30s, 40% or a time \
                                     of day 13:35:20"
                                ),
                                now,
                            );
                            Vec::new()
                        }
                    }
                }
                Some(_) => Vec::new(),
                None => {
                    self.prompt = Some(Prompt::Seek(text));
                    Vec::new()
                }
            },
        }
    }

    /// Selects the row of session `sid` in the pane on screen, when it has one (a view
    /// followed).
    pub(crate) fn select_sid(&mut self, sid: Sid) {
        if self.selected_sid() == Some(sid) {
            return;
        }
        let n = self.table().order.len();
        let page = self.page_rows();
        let before = (self.table().selected, self.table().offset);
        for pos in 0..n {
            self.table_mut().selected = pos;
            if self.selected_sid() == Some(sid) {
                let t = self.table_mut();
                t.follow = true;
                t.offset = scroll_offset(pos, t.offset, page, n);
                return;
            }
        }
        let t = self.table_mut();
        (t.selected, t.offset) = before;
    }

    /// Moves the selection to the next row (after the selected one, wrapping) whose text holds
    /// the search text.
    fn search_next(&mut self, now: Duration) {
        let needle = self.search.to_lowercase();
        let Some(list) = self.pane.list().filter(|_| !needle.is_empty()) else {
            return;
        };
        let snap = self.shown().clone();
        let tree = self.tree_shown(self.pane);
        let t = self.table();
        let n = t.order.len();
        let mut text = String::new();
        let found = (1..=n).map(|k| (t.selected + k) % n.max(1)).find(|&pos| {
            let row = t.order[pos];
            if tree {
                tree_line_text(&snap, row, &mut text);
            } else {
                list.row_text(&snap, row, &mut text);
            }
            text.contains(&needle)
        });
        match found {
            Some(pos) => {
                let page = self.page_rows();
                let t = self.table_mut();
                t.selected = pos;
                t.follow = true;
                t.offset = scroll_offset(pos, t.offset, page, n);
            }
            None => self.say(format!("'{}' is on no row", self.search), now),
        }
    }

    /// Carries out one action.
    pub fn handle(&mut self, action: Action, now: Duration) -> Vec<Effect> {
        let page = self.page_step();
        if self.activity_shown() && self.activity.pick.is_some() && self.span_pick_key(action, now)
        {
            return Vec::new();
        }
        match action {
            Action::Quit => self.quit = true,
            Action::Help => {
                self.help = !self.help;
                self.help_scroll = 0;
            }
            Action::Findings => {
                self.findings = !self.findings;
                self.findings_selected = 0;
            }
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
            Action::PaneSessions => self.set_pane(Pane::Sessions),
            Action::PaneWaiters => self.set_pane(Pane::Waiters),
            Action::PaneBuffers => self.set_pane(Pane::Buffers),
            Action::PaneSockets => self.set_pane(Pane::Sockets),
            Action::PaneNuma => self.set_pane(Pane::Numa),
            Action::PaneServer => self.set_pane(Pane::Server),
            Action::PaneIo => self.set_pane(Pane::Io),
            Action::PaneActivity => self.set_pane(Pane::Activity),
            Action::GroupNext if self.activity_shown() => {
                self.activity.group = self.activity.group.next();
                self.table_mut().selected = 0;
            }
            Action::GroupNext => self.move_selection(isize::MIN / 2),
            Action::WindowNext if self.activity_shown() => {
                let w = crate::tui::app::ActivityUi::WINDOWS;
                let i = w.iter().position(|x| *x == self.activity.window_s);
                self.activity.window_s = w[i.map_or(0, |i| (i + 1) % w.len())];
            }
            Action::WindowNext => {}
            Action::SpanPick if self.activity_shown() => self.span_pick_start(now),
            Action::SpanPick => {}
            Action::DrillDown => self.drill_down(now),
            Action::GotoSession => self.prompt = Some(Prompt::Session(String::new())),
            Action::Back => self.back(now),
            Action::Filter => {
                if self.pane.list().is_some() {
                    // Edits the filter in place: a second `/` does not start over.
                    self.prompt = Some(Prompt::Filter(self.table().filter.clone()));
                }
            }
            Action::Search => {
                if self.pane.list().is_none() {
                } else if self.search.is_empty() || self.prompt.is_some() {
                    self.prompt = Some(Prompt::Search(String::new()));
                } else {
                    self.search_next(now);
                }
            }
            Action::SortNext | Action::SortReverse => self.sort_step(action, now),
            Action::SortCpu => self.sort_sessions_by(SessionCol::Cpu, now),
            Action::SortMem => self.sort_sessions_by(SessionCol::Mem, now),
            Action::ToggleFreeze => {
                if self.frozen.take().is_none() {
                    self.frozen = Some((self.live.clone(), now));
                    let resume = self
                        .key_of(Action::ToggleFreeze)
                        .map_or_else(String::new, |k| format!("; {k} to resume"));
                    self.say(format!("{FROZEN_SAID}{resume}"), now);
                } else {
                    // Live again: "frozen" must not stay on the status line until it expires.
                    if self
                        .message
                        .as_ref()
                        .is_some_and(|(m, _)| m.starts_with(FROZEN_SAID))
                    {
                        self.message = None;
                    }
                    self.refresh_orders();
                }
            }
            Action::IntervalLonger | Action::IntervalShorter => {
                return self.step_interval(action == Action::IntervalLonger, now);
            }
            Action::ToggleIdle => {
                self.hide_idle = !self.hide_idle;
                let words = if self.hide_idle {
                    format!(
                        "idle sessions and client waits hidden{}",
                        self.hint(Action::ToggleIdle, "to show")
                    )
                } else {
                    "idle sessions and client waits shown".to_string()
                };
                self.say(words, now);
                self.refresh_orders();
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
                if self.pane != Pane::Waiters {
                    self.set_pane(Pane::Waiters);
                    if self.tree {
                        return Vec::new();
                    }
                }
                self.tree = !self.tree;
                let t = self.table_mut();
                t.selected = 0;
                t.offset = 0;
                t.follow = false;
                self.refresh_order(Pane::Waiters);
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
            Action::Bookmark => {
                // The moment on screen now: the note is for it, however long the typing takes.
                let at = crate::tui::views::moment_shown(self, now);
                self.prompt = Some(Prompt::Mark(at, String::new()));
            }
            Action::Follow => {
                if self.is_viewer() {
                    self.prompt = Some(Prompt::Follow(String::new()));
                } else {
                    self.say("follow: a viewer's key (ifxtop --attach)", now);
                }
            }
            Action::Redraw => return vec![Effect::Redraw],
            Action::Suspend => return vec![Effect::Suspend],
            Action::ReplayPause
            | Action::ReplayStepForward
            | Action::ReplayStepBack
            | Action::ReplayFaster
            | Action::ReplaySlower
            | Action::ReplaySeekForward
            | Action::ReplaySeekBack
            | Action::ReplaySeek => return self.replay_key(action, now),
        }
        Vec::new()
    }

    /// How many rows a page key moves by: the list's page, or the session screen's.
    fn page_step(&self) -> isize {
        (if self.drill.is_empty() {
            self.page_rows()
        } else if self.size.1 == 0 {
            SESSION_PAGE
        } else {
            // What the session screen shows between its `↑`/`↓` lines (the body is the height
            // less the header, tabs, footer and a replay's timeline): a page skips no line.
            let body = self
                .size
                .1
                .saturating_sub(6 + u16::from(self.replay.is_some()));
            usize::from(body.saturating_sub(2)).max(1)
        }) as isize
    }

    /// Enter: one level down from what is shown (a blocker of the session screen, a session
    /// of a hot spot, a hot spot, an Activity group, the selected row's session).
    fn drill_down(&mut self, now: Duration) {
        if !self.drill.is_empty() {
            match self.session() {
                Some((d, Some(view))) => match view.chain.get(d.selected) {
                    Some(link) => {
                        let sid = link.sid;
                        self.open_session(sid, now);
                    }
                    None => self.say("nothing blocks this session: no one to drill into", now),
                },
                _ => self.say("this session's details are not collected yet", now),
            }
        } else if self.hotspot_screen().is_some() {
            let sid = self
                .hotspot_screen()
                .and_then(|(h, v)| v?.sessions().get(h.selected).copied());
            match sid {
                Some(sid) => self.open_session(sid, now),
                None => self.say("no session holds or waits for this object now", now),
            }
        } else if self.pane == Pane::Buffers {
            let t = self.table();
            match t
                .order
                .get(t.selected)
                .and_then(|&r| self.shown().hotspots.get(r))
            {
                Some(row) => {
                    self.hotspot = Some(crate::tui::app::HotspotUi {
                        object: row.object.clone(),
                        selected: 0,
                    })
                }
                None => self.say("no hot spot selected", now),
            }
        } else if self.activity_shown() {
            self.activity_drill(now);
        } else {
            match self.selected_sid() {
                Some(sid) => self.open_session(sid, now),
                None => self.say(
                    "select a session, a waiter, a hot spot with an owner or a socket with a \
                     session",
                    now,
                ),
            }
        }
    }

    /// Esc: out of the screen, span, group, filter or help shown; with nothing open, leave.
    fn back(&mut self, now: Duration) {
        if self.drill.pop().is_none() && self.hotspot.take().is_none() {
            if self.activity_shown() && self.activity.span.is_some() {
                // Out of the span, back to the whole window (the group drilled into
                // stays: Esc again leaves it).
                self.activity.span = None;
                self.table_mut().selected = 0;
                self.say("the table covers the whole window again", now);
            } else if self.activity_shown() && self.activity.filter.is_some() {
                // Out of the group drilled into, back to the grouping it was in.
                if let Some((key, _)) = self.activity.filter.take() {
                    self.activity.group = key;
                }
                self.table_mut().selected = 0;
            } else if !self.table().filter.is_empty() {
                self.table_mut().filter.clear();
                self.refresh_order(self.pane);
            } else if self.help {
                self.help = false;
            } else {
                self.leave = true;
            }
        }
    }

    /// `s` (the next column) and `r` (the other direction) on a list.
    fn sort_step(&mut self, action: Action, now: Duration) {
        if let Some(pane) = self.pane.list() {
            let t = self.table_mut();
            t.sort = match (action, t.sort) {
                (Action::SortNext, o) => pane.next_order(o),
                (_, Order::By { column, desc }) => Order::By {
                    column,
                    desc: !desc,
                },
                // The grouped order has one direction: reversing it starts at the
                // first column, descending.
                (_, Order::Grouped) => match pane.next_order(Order::Grouped) {
                    Order::By { column, .. } => Order::By { column, desc: true },
                    o => o,
                },
            };
            let msg = match self.table().sort {
                Order::Grouped => format!("sorted by {}", pane.grouped_label()),
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

    /// `+`/`-`: the next longer or shorter of [`INTERVALS`].
    fn step_interval(&mut self, longer: bool, now: Duration) -> Vec<Effect> {
        let pos = INTERVALS
            .iter()
            .position(|&i| i >= self.interval)
            .unwrap_or(INTERVALS.len() - 1);
        let new = if longer {
            INTERVALS[(pos + 1).min(INTERVALS.len() - 1)]
        } else {
            INTERVALS[pos.saturating_sub(1)]
        };
        if new == self.interval {
            return Vec::new();
        }
        self.interval = new;
        self.say(format!("refresh every {}s", new.as_secs_f64()), now);
        vec![Effect::SetInterval(new)]
    }

    /// `P` and `M`: the Sessions list by CPU% or by memory, descending, as htop has them; the
    /// status line says where the figures come from and, for memory, how old they are.
    fn sort_sessions_by(&mut self, col: SessionCol, now: Duration) {
        // As `1` does: the list, not a screen left open above it.
        self.set_pane(Pane::Sessions);
        self.table_mut().sort = Order::By {
            column: Column::Session(col),
            desc: true,
        };
        let snap = self.shown();
        let msg = if col == SessionCol::Mem {
            // A slow fact: its age, as the pane's title says it too.
            let of = match snap.session_memory_at_s {
                None => "; MEM not collected yet (onstat -g ses, every 30s)".to_string(),
                Some(at) => format!(
                    " (onstat -g ses, {} ago)",
                    crate::format::human_duration(snap.at_s - at)
                ),
            };
            format!("sorted by MEM, descending{of}")
        } else {
            let why = match snap.session_cpu.as_ref() {
                None => "; CPU% not collected yet (onstat -g cpu)".to_string(),
                Some(c) => c
                    .unknown
                    .map_or_else(String::new, |w| format!("; CPU% {w}")),
            };
            format!("sorted by CPU%, descending{why}")
        };
        self.say(msg, now);
        self.refresh_order(self.pane);
    }

    /// A replay's keys: pause, step, speed, seek (nothing outside a replay).
    fn replay_key(&mut self, action: Action, now: Duration) -> Vec<Effect> {
        if self.replay.is_none() && self.is_viewer() {
            // A viewer seeks over what it received: the same keys, no speed (it is not played).
            let cmd = match action {
                Action::ReplayStepForward => ReplayCommand::Step(1),
                Action::ReplayStepBack => ReplayCommand::Step(-1),
                Action::ReplaySeekForward => ReplayCommand::SeekBy(0.1),
                Action::ReplaySeekBack => ReplayCommand::SeekBy(-0.1),
                Action::ReplaySeek => {
                    self.prompt = Some(Prompt::Seek(String::new()));
                    return Vec::new();
                }
                _ => {
                    let back = self.key_phrases(
                        &[
                            (&[Action::ReplaySeekBack, Action::ReplayStepBack], "go back"),
                            (&[Action::ToggleFreeze], "live"),
                        ],
                        ", ",
                    );
                    self.say(format!("a viewer is not played: {back}"), now);
                    return Vec::new();
                }
            };
            return vec![Effect::Replay(cmd)];
        }
        if self.replay.is_none() {
            if action == Action::ReplayPause {
                let freeze = self.hint(Action::ToggleFreeze, "freezes the screen");
                self.say(format!("not replaying{freeze}"), now);
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
        vec![Effect::Replay(cmd)]
    }
}

/// What the status line says of a key bound to nothing: it points to the help.
fn unbound_hint(key: &str) -> String {
    format!("unbound key {key} — ? for help")
}

/// The Server pane's next line from `from` by `delta` (±1 a line, more a page, ±huge the ends),
/// given the lines that name a session (`selectable`, ascending): ↑/↓ go from one such line to
/// the next, past the last to the pane's end and before the first to its top, so every line can
/// still be scrolled to; a page stops on the farthest such line within it; Home/End on the
/// first/last one.
fn server_step(selectable: &[usize], from: usize, delta: isize, len: usize) -> usize {
    let last = len.saturating_sub(1);
    let target = (from as isize)
        .saturating_add(delta)
        .clamp(0, last as isize) as usize;
    match delta {
        1 => selectable
            .iter()
            .copied()
            .find(|&p| p > from)
            .unwrap_or(last),
        -1 => selectable
            .iter()
            .rev()
            .copied()
            .find(|&p| p < from)
            .unwrap_or(0),
        d if d <= isize::MIN / 4 => selectable.first().copied().unwrap_or(0),
        d if d >= isize::MAX / 4 => selectable.last().copied().unwrap_or(last),
        d if d > 0 => selectable
            .iter()
            .rev()
            .copied()
            .find(|&p| p > from && p <= target)
            .unwrap_or(target),
        _ => selectable
            .iter()
            .copied()
            .find(|&p| p < from && p >= target)
            .unwrap_or(target),
    }
}

/// A list's rows to show, filtered (`/`, `i`) and sorted. Filtering reuses one buffer for the
/// rows' text; the sort keys borrow from the rows: thousands of rows allocate nothing each.
fn list_order(
    snap: &Snapshot,
    list: ListPane,
    sort: Order,
    needle: &str,
    hide_idle: bool,
) -> Vec<usize> {
    let mut text = String::new();
    let rows = list.len(snap);
    let mut order: Vec<usize> = (0..rows)
        .filter(|&i| !(hide_idle && list.is_idle(snap, i)))
        .filter(|&i| {
            needle.is_empty() || {
                list.row_text(snap, i, &mut text);
                text.contains(needle)
            }
        })
        .collect();
    let desc = match sort {
        Order::Grouped => true,
        Order::By { desc, .. } => desc,
    };
    if let Some(sorted) = numeric_order(&order, |i| list.sort_key(snap, i, sort), desc) {
        return sorted;
    }
    let mut keys = vec![SortKey::None; rows];
    for &i in &order {
        keys[i] = list.sort_key(snap, i, sort);
    }
    // Ties broken by the row index: a total order, so an unstable sort gives the stable one.
    order.sort_unstable_by(|a, b| keys[*a].compare_dir(&keys[*b], desc).then(a.cmp(b)));
    order
}

/// `rows` in the order of their keys when every key is a number or none (a grouped order, a
/// numeric column: the usual case), the same order `SortKey::compare_dir` then the row index
/// give: each row's key and index packed in one integer, and the integers sorted. Sorting
/// 5,000 sessions through the keys' comparison was a quarter of the screen's own work each
/// second. `None` at the first key of another kind.
fn numeric_order<'a>(
    rows: &[usize],
    key: impl Fn(usize) -> SortKey<'a>,
    desc: bool,
) -> Option<Vec<usize>> {
    let mut packed = Vec::with_capacity(rows.len());
    for &i in rows {
        let (none, bits): (u8, u64) = match key(i) {
            SortKey::Num(v) if desc => (0, !total_order_bits(v)),
            SortKey::Num(v) => (0, total_order_bits(v)),
            SortKey::None => (1, 0),
            SortKey::Text(_) | SortKey::TextNum(..) => return None,
        };
        let index = u32::try_from(i).ok()?;
        packed.push((u128::from(none) << 96) | (u128::from(bits) << 32) | u128::from(index));
    }
    packed.sort_unstable();
    Some(packed.into_iter().map(|p| p as u32 as usize).collect())
}

/// `v`'s bits as an integer whose order is `f64::total_cmp`'s: negative numbers' bits
/// reversed, positive ones' above them.
fn total_order_bits(v: f64) -> u64 {
    let b = v.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

/// A line of the blocker tree's text for `/` and `n`, lowercase, into `out`: a waiter's row
/// text, or the session a chain or deadlock is headed by.
fn tree_line_text(snap: &Snapshot, line: usize, out: &mut String) {
    match snap.tree.get(line).map(|l| l.item) {
        Some(TreeItem::Waiter(w)) => ListPane::Waiters.row_text(snap, w, out),
        Some(TreeItem::Head(s) | TreeItem::Deadlock(s)) => {
            out.clear();
            out.push_str("sid ");
            out.push_str(&s.to_string());
        }
        None => out.clear(),
    }
}

/// The blocker tree's lines to show: all of them without a filter; with one, the waiter lines
/// whose text holds it, with the lines above them (their blockers and their head).
fn tree_order(snap: &Snapshot, needle: &str) -> Vec<usize> {
    if needle.is_empty() {
        return (0..snap.tree.len()).collect();
    }
    let mut keep = vec![false; snap.tree.len()];
    let mut text = String::new();
    // The last line seen at each depth (index 0: the head), to keep a match's ancestors.
    let mut path: Vec<usize> = Vec::new();
    for (i, line) in snap.tree.iter().enumerate() {
        let level = match line.item {
            TreeItem::Head(_) | TreeItem::Deadlock(_) => 0,
            TreeItem::Waiter(_) => line.depth() + 1,
        };
        path.truncate(level);
        path.push(i);
        tree_line_text(snap, i, &mut text);
        if text.contains(needle) {
            for &p in &path {
                keep[p] = true;
            }
        }
    }
    (0..snap.tree.len()).filter(|&i| keep[i]).collect()
}

/// Where `:` seeks: what `When` reads (seconds, `2m`, `40%`, a time of day `13:35:20` on the
/// recording's clock, when it says when it started).
pub(crate) fn parse_seek(
    text: &str,
    started: Option<time::OffsetDateTime>,
) -> Option<ReplayCommand> {
    match text.parse::<crate::format::When>().ok()? {
        crate::format::When::Share(p) => Some(ReplayCommand::SeekPercent(p)),
        w => w
            .into_timeline(started, None)
            .ok()
            .map(ReplayCommand::SeekTo),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn any_key() -> impl Strategy<Value = SortKey<'static>> {
        prop_oneof![
            Just(SortKey::None),
            any::<f64>().prop_map(SortKey::Num),
            // Few distinct values: ties, broken by the row index.
            (-3i8..3).prop_map(|v| SortKey::Num(f64::from(v))),
            Just(SortKey::Num(-0.0)),
            Just(SortKey::Num(f64::NAN)),
            Just(SortKey::Num(-f64::NAN)),
            Just(SortKey::Num(f64::NEG_INFINITY)),
        ]
    }

    proptest! {
        /// The packed numeric order is the comparison's order, ties by row index, in both
        /// directions, over any subset of rows (a filter or hidden idle rows).
        #[test]
        fn the_numeric_order_is_the_comparisons(
            keys in proptest::collection::vec(any_key(), 0..300),
            desc in any::<bool>(),
            skip in any::<u8>(),
        ) {
            let rows: Vec<usize> = (0..keys.len()).filter(|i| skip == 0 || i % 7 != usize::from(skip) % 7).collect();
            let mut plain = rows.clone();
            plain.sort_unstable_by(|a, b| keys[*a].compare_dir(&keys[*b], desc).then(a.cmp(b)));
            prop_assert_eq!(numeric_order(&rows, |i| keys[i], desc), Some(plain));
        }
    }

    #[test]
    fn a_text_key_leaves_the_numeric_order_to_the_comparison() {
        let keys = [SortKey::Num(1.0), SortKey::Text("a"), SortKey::None];
        assert_eq!(numeric_order(&[0, 1, 2], |i| keys[i], false), None);
        assert_eq!(numeric_order(&[0, 2], |i| keys[i], true), Some(vec![0, 2]));
    }

    /// A report pane is not sorted by another pane's column: NUMA used to take the Sockets
    /// pane's SEND-Q as its default order, and so sorted its nodes by the send queues of the
    /// sockets at the same row numbers.
    #[test]
    fn a_report_pane_keeps_its_own_order() {
        let mut snap = Snapshot::default();
        for node in 0..3 {
            std::sync::Arc::make_mut(&mut snap.numa)
                .nodes
                .push(crate::model::numa::NodeRow {
                    node,
                    cpus: None,
                    total_kb: None,
                    free_kb: None,
                    used_kb: None,
                    oninit_kb: None,
                });
            snap.sockets.push(crate::tui::panes::tests::socket(
                "10.1.1.1",
                "40000",
                u64::from(node) * 1000,
            ));
        }
        let mut app = crate::tui::app::App::new(
            crate::tui::keymap::Keymap::default(),
            crate::tui::theme::Theme::plain(),
            crate::tui::app::Mode::Demo { seed: 1 },
            std::time::Duration::from_secs(1),
        );
        app.set_snapshot(std::sync::Arc::new(snap));
        let now = std::time::Duration::from_secs(1);
        app.handle(crate::tui::keymap::Action::PaneNuma, now);
        assert_eq!(app.table().order, vec![0, 1, 2]);
        assert_eq!(Pane::Numa.list(), None);
        // And `s` there changes nothing.
        app.handle(crate::tui::keymap::Action::SortNext, now);
        assert_eq!(app.table().sort, Order::Grouped);
        assert_eq!(app.table().order, vec![0, 1, 2]);
    }

    /// Enter on a CPU saturation finding opens the Sessions pane sorted by CPU%, the busiest
    /// session first (their statements beside them).
    #[test]
    fn a_cpu_finding_opens_the_sessions_by_cpu() {
        use crate::model::findings::{Finding, FindingKind};
        let mut snap = Snapshot::default();
        for (sid, cpu) in [(801, 5.0), (802, 80.0), (803, 20.0)] {
            snap.sessions.push(crate::model::sessions::SessionRow {
                cpu_percent: Some(cpu),
                ..crate::tui::panes::tests::session(sid)
            });
        }
        snap.findings = vec![Finding::of(FindingKind::CpuSaturation, "CPU VPs saturated")];
        let mut app = crate::tui::app::App::new(
            crate::tui::keymap::Keymap::default(),
            crate::tui::theme::Theme::plain(),
            crate::tui::app::Mode::Demo { seed: 1 },
            std::time::Duration::from_secs(1),
        );
        app.set_snapshot(std::sync::Arc::new(snap));
        let now = std::time::Duration::from_secs(1);
        app.handle(crate::tui::keymap::Action::Findings, now);
        app.on_key(
            crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Enter),
            now,
        );
        assert_eq!(app.pane, Pane::Sessions);
        assert_eq!(
            app.table().sort,
            Order::By {
                column: crate::tui::panes::Column::Session(crate::tui::panes::SessionCol::Cpu),
                desc: true
            }
        );
        assert_eq!(app.selected_sid(), Some(Sid(802)));
    }

    #[test]
    fn seek_syntax() {
        assert_eq!(
            parse_seek("90", None),
            Some(ReplayCommand::SeekTo(Duration::from_secs(90)))
        );
        assert_eq!(
            parse_seek("1m30s", None),
            Some(ReplayCommand::SeekTo(Duration::from_secs(90)))
        );
        // A colon is a time of day, as everywhere a moment is typed: none without a clock.
        assert_eq!(parse_seek("1:30", None), None);
        assert_eq!(
            parse_seek("2m", None),
            Some(ReplayCommand::SeekTo(Duration::from_secs(120)))
        );
        assert_eq!(
            parse_seek("40%", None),
            Some(ReplayCommand::SeekPercent(0.4))
        );
        assert_eq!(parse_seek("140%", None), None);
        assert_eq!(parse_seek("soon", None), None);
    }

    #[test]
    fn a_time_of_day_seeks_on_the_recordings_clock() {
        let started = time::macros::datetime!(2026-11-22 13:35:02 UTC);
        assert_eq!(
            parse_seek("13:35:20", Some(started)),
            Some(ReplayCommand::SeekTo(Duration::from_secs(18)))
        );
        // Past midnight: the next day's.
        assert_eq!(
            parse_seek("00:00:02", Some(started)),
            Some(ReplayCommand::SeekTo(Duration::from_secs(
                10 * 3600 + 24 * 60 + 60
            )))
        );
        // Without a start time there is no clock to seek on.
        assert_eq!(parse_seek("13:35:20", None), None);
        assert_eq!(parse_seek("25:00:00", Some(started)), None);
    }
}
