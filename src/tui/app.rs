//! App state: pane, selection, sort, filter, freeze, drill stack, messages, and what may be asked
//! of it without changing it. Only `tui::update` changes it; views only read it.

use crate::collect::extents::ExtentStatus;
use crate::collect::replay::{ReplayCommand, ReplayUi};
use crate::ids::Sid;
use crate::model::snapshot::Snapshot;
use crate::model::tree::TreeItem;
use crate::tui::keymap::Keymap;
use crate::tui::panes::{Order, Pane};
use crate::tui::theme::Theme;
use std::sync::Arc;
use std::time::Duration;

/// Selection, scroll, sort and filter of one list pane.
#[derive(Debug, Clone, PartialEq)]
pub struct TableUi {
    /// Position in `order` (not a row index).
    pub selected: usize,
    pub offset: usize,
    /// How the rows are ordered.
    pub sort: Order,
    pub filter: String,
    /// Row indices of the shown snapshot, sorted and filtered.
    pub order: Vec<usize>,
    /// The snapshot `order` indexes into: the selected row's identity is read from it when the
    /// next snapshot arrives (its row indices mean other rows). Only the pane on screen keeps
    /// it: one off screen keeps its selected row's identity instead (`kept`), so a visited pane
    /// does not hold an old snapshot, 4.5 MB at 5,000 sessions, until it is shown again.
    pub(crate) basis: Option<Arc<Snapshot>>,
    /// The selected row's identity, read from `basis` when the pane went stale.
    pub(crate) kept: Option<crate::tui::panes::RowId>,
    /// The user moved the selection off the top row: it then follows its row as data moves.
    /// Left on the top row, it stays there, so what matters most stays in view, as in `top`.
    pub follow: bool,
    /// `order` is of an older snapshot: sorted again when the pane is shown (only the pane on
    /// screen is sorted with every snapshot; thousands of rows each).
    pub(crate) stale: bool,
}

impl TableUi {
    fn new(pane: Pane) -> Self {
        TableUi {
            selected: 0,
            offset: 0,
            sort: pane.default_order(),
            filter: String::new(),
            order: Vec::new(),
            basis: None,
            kept: None,
            follow: false,
            stale: false,
        }
    }
}

/// The Activity pane: the window shown, what the table groups by, the group drilled into, and
/// the span of the chart the table is narrowed to.
#[derive(Debug, Clone, PartialEq)]
pub struct ActivityUi {
    /// Seconds: one of [`ActivityUi::WINDOWS`].
    pub window_s: u32,
    pub group: crate::model::activity::Key,
    /// Enter on a group: only its rows, grouped by session (Esc goes back).
    pub filter: Option<(crate::model::activity::Key, String)>,
    /// The span of the chart the table covers instead of the whole window ("since when"):
    /// session seconds, from..to. It stays on those moments as the chart moves on.
    pub span: Option<(f64, f64)>,
    /// Picking a span (`v`): the cursor moves over the chart, the table is not narrowed yet.
    pub pick: Option<SpanPick>,
}

/// A span being picked on the Activity chart: both ends are moments (session seconds) on the
/// chart's grid of [`ActivityUi::step`] seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpanPick {
    /// Where `v` marked.
    pub mark: f64,
    /// Where the cursor is.
    pub cursor: f64,
}

impl SpanPick {
    /// The span between the mark and the cursor, a step wide at least (a mark on the cursor
    /// is the step ending there).
    pub fn span(&self, step: f64) -> (f64, f64) {
        let (a, b) = (self.mark.min(self.cursor), self.mark.max(self.cursor));
        if b - a < step {
            (b - step, b)
        } else {
            (a, b)
        }
    }
}

impl ActivityUi {
    /// The windows `w` cycles through: 1, 5, 15 and 60 minutes.
    pub const WINDOWS: [u32; 4] = [60, 300, 900, 3600];

    /// How far the span cursor moves for `←`/`→`: a sixtieth of the window (1 s of a minute,
    /// a minute of an hour), at least a second.
    pub fn step(&self) -> f64 {
        (f64::from(self.window_s) / 60.0).max(1.0)
    }

    /// `at` on the cursor's grid: the end of the step it falls in.
    pub fn on_grid(&self, at: f64) -> f64 {
        let step = self.step();
        (at / step).ceil() * step
    }

    /// From when to when the table covers, for a chart ending at `to`: the span if one is
    /// picked, else the whole window.
    pub fn covers(&self, to: f64) -> (f64, f64) {
        self.span.unwrap_or((to - f64::from(self.window_s), to))
    }

    /// The query of the table, for a chart ending at `to` (session seconds).
    pub fn query(&self, to: f64) -> crate::model::activity::Query {
        let (from, to) = self.covers(to);
        crate::model::activity::Query {
            from,
            to,
            keys: vec![self.group],
            filter: self.filter.clone(),
            top: 200,
        }
    }

    /// The same table as `other` would show (the pick cursor moves over the chart alone).
    pub fn same_table(&self, other: &ActivityUi) -> bool {
        self.window_s == other.window_s
            && self.group == other.group
            && self.filter == other.filter
            && self.span == other.span
    }
}

impl Default for ActivityUi {
    fn default() -> Self {
        ActivityUi {
            window_s: 300,
            group: crate::model::activity::Key::Class,
            filter: None,
            span: None,
            pick: None,
        }
    }
}

/// One session screen on the drill stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrillUi {
    pub sid: Sid,
    /// The selected link of its blocker chain (Enter drills into it).
    pub selected: usize,
    /// The first line shown (the screen scrolls when it is taller than the terminal).
    pub scroll: usize,
}

impl DrillUi {
    pub fn new(sid: Sid) -> Self {
        DrillUi {
            sid,
            selected: 0,
            scroll: 0,
        }
    }
}

/// The buffer hot spot screen: which object, and which of its sessions is selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HotspotUi {
    /// The hot spot's `object` (its row's label).
    pub object: String,
    pub selected: usize,
}

/// Where the data comes from, for the header.
pub use crate::instance::setup::Mode;
pub(crate) use crate::instance::setup::NoteFn;

/// What the live loop must do after an action.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    SetInterval(Duration),
    RebuildExtents,
    /// Put this text on the clipboard (OSC 52).
    Copy(String),
    /// Write the screen and the snapshot to files.
    Export,
    Replay(ReplayCommand),
    /// Collect `onstat -g ses/sql` for these sessions (the drill stack; while recording, also
    /// the blockers and long waiters).
    Focus(crate::collect::Focus),
    /// Send `Msg::Settled` after this long (data settling, or the rebuild rate limit).
    SettleIn(Duration),
    /// End the loop with this exit code.
    Quit(u8),
    /// Draw the whole screen again (Ctrl-L).
    Redraw,
    /// Give the terminal back and stop until `fg` (Ctrl-Z, SIGTSTP).
    Suspend,
    /// Esc with nothing left to go back from: back to the fleet screen, when there is one.
    Leave,
    /// Continued (SIGCONT) after a stop: take the terminal again (raw mode, the alternate
    /// screen) and draw the whole screen.
    Resume,
    /// Mark the moment `at` (session time) with a note: into the ring, to the viewers.
    Mark {
        at: Duration,
        note: String,
    },
}

/// What a line of input at the bottom is for.
#[derive(Debug, Clone, PartialEq)]
pub enum Prompt {
    /// `/`: keep only the rows whose text holds this.
    Filter(String),
    /// `F3`: jump to the next row whose text holds this.
    Search(String),
    /// `#`: open the screen of this session.
    Session(String),
    /// `:` in a replay: go to a time.
    Seek(String),
    /// `b`: a note for the moment on screen (session time), a bookmark.
    Mark(Duration, String),
    /// `@`: whose view to follow (a number of the help's list of who watches).
    Follow(String),
}

pub struct App {
    pub(crate) keymap: Keymap,
    pub(crate) theme: Theme,
    pub(crate) mode: Mode,
    pub server: Option<String>,
    pub pane: Pane,
    pub(crate) tables: [TableUi; 8],
    /// The Activity pane's window, grouping and drill.
    pub activity: ActivityUi,
    pub help: bool,
    /// Lines of the help scrolled past (a terminal too small for all of it).
    pub help_scroll: usize,
    /// The list of every finding is open (`f`).
    pub findings: bool,
    /// The finding selected in that list: Enter opens its culprit.
    pub findings_selected: usize,
    pub prompt: Option<Prompt>,
    pub live: Arc<Snapshot>,
    /// The snapshot kept on screen while frozen, and when it was frozen.
    pub frozen: Option<(Arc<Snapshot>, Duration)>,
    pub interval: Duration,
    pub hide_idle: bool,
    pub tree: bool,
    /// Sessions drilled into, innermost last.
    pub drill: Vec<DrillUi>,
    /// The buffer hot spot opened from the Buffers pane (under any session screens).
    pub hotspot: Option<HotspotUi>,
    /// The status line's message and when it was said (on `clock`).
    pub(crate) message: Option<(String, Duration)>,
    /// Time that passes for the user (not the data's time: a paused replay stands still, a
    /// message still expires): what messages expire by.
    pub clock: Duration,
    /// The last text searched for (`F3` again jumps to the next match).
    pub(crate) search: String,
    pub quit: bool,
    /// Esc found nothing to go back from (the fleet screen takes it).
    pub leave: bool,
    /// The instance's name when it is one of several (the fleet): the header names it.
    pub(crate) instance: Option<String>,
    pub extents: ExtentStatus,
    pub replay: Option<ReplayUi>,
    /// The line under the tabs: what the demo plays at a demo time, and the demo time the
    /// session started at (`--demo-at`).
    pub(crate) note: Option<(NoteFn, Duration)>,
    /// Terminal size, set on start and resize: the app pages by it.
    pub size: (u16, u16),
    /// The wall-clock time at session time 0, in the server's time zone: the header's clock.
    pub wall_start: Option<time::OffsetDateTime>,
    /// The host the instance runs on (this one, or the one ssh reaches), for the header.
    pub host: Option<String>,
    /// The recording under way (`--record`), for the header.
    pub recording: Option<RecordingUi>,
    /// Watching together (`--share`, `--attach`), for the header and the help.
    pub watching: Option<Box<crate::instance::share::Watching>>,
    /// Bookmarks on the session's clock, in time order: the ring's (a replay of one) and those
    /// made here (`b`); the replay's timeline shows them.
    pub marks: Vec<MarkUi>,
    /// A viewer back in what it received (the replay keys), shown as a frozen moment.
    pub past: Option<PastUi>,
    /// Whose view this screen follows (`@`): a presence id (0: the collector's screen), and
    /// how the screen names them.
    pub following: Option<(u64, String)>,
    /// `@` chose whom to follow: the session starts following at once.
    pub(crate) follow_asked: Option<u64>,
}

/// Where a viewer stands in what it received, for the header: at `at`, between `from` and
/// `to` (the first and the last sample kept), on the collector's session clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PastUi {
    pub at: Duration,
    pub from: Duration,
    pub to: Duration,
    /// Still reading its way to `at`, this far (the screen shows the moment before).
    pub seeking: Option<f64>,
}

/// A bookmark as the screen shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkUi {
    /// Session time.
    pub at: Duration,
    pub note: String,
}

/// A recording under way, as the header shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordingUi {
    /// Bytes written to the file so far.
    pub bytes: u64,
    /// Why it stopped early (size cap, disk full), if it did.
    pub stopped: Option<String>,
}

/// How long a message stays on the status line.
pub(crate) const MESSAGE_TTL: Duration = Duration::from_secs(6);

/// Rows above a list pane's table body: header (4, the top finding last), tabs (1), summary (1), column header (1);
/// below it: the status line (1).
pub(crate) const CHROME_ROWS: u16 = 8;

impl App {
    /// The key that does `action`, as a hint names it (`s`, `Enter`, `Ctrl-p`); `None` when the
    /// config left the action with no key. Hints on screen come from here, not from text.
    pub(crate) fn key_of(&self, action: crate::tui::keymap::Action) -> Option<String> {
        self.keymap.hint(&[action])
    }

    /// ` (s sorts)`, or ` (i)` with no words: a parenthesised hint naming the key, or nothing
    /// when it has none.
    pub(crate) fn hint(&self, action: crate::tui::keymap::Action, words: &str) -> String {
        match (self.key_of(action), words) {
            (None, _) => String::new(),
            (Some(k), "") => format!(" ({k})"),
            (Some(k), w) => format!(" ({k} {w})"),
        }
    }

    /// `↑/↓ selects a session, Enter opens it`: each phrase led by the keys of its actions,
    /// joined by `sep`; a phrase whose action has no key is left out.
    pub(crate) fn key_phrases(
        &self,
        phrases: &[(&[crate::tui::keymap::Action], &str)],
        sep: &str,
    ) -> String {
        phrases
            .iter()
            .filter_map(|(actions, words)| Some(format!("{} {words}", self.keymap.hint(actions)?)))
            .collect::<Vec<_>>()
            .join(sep)
    }

    pub fn new(keymap: Keymap, theme: Theme, mode: Mode, interval: Duration) -> Self {
        App {
            keymap,
            theme,
            mode,
            server: None,
            pane: Pane::Sessions,
            tables: Pane::ALL.map(TableUi::new),
            activity: ActivityUi::default(),
            help: false,
            help_scroll: 0,
            findings: false,
            findings_selected: 0,
            prompt: None,
            live: Arc::new(Snapshot::default()),
            frozen: None,
            interval,
            hide_idle: false,
            tree: false,
            drill: Vec::new(),
            hotspot: None,
            message: None,
            clock: Duration::ZERO,
            search: String::new(),
            quit: false,
            leave: false,
            instance: None,
            extents: ExtentStatus::None,
            replay: None,
            note: None,
            size: (80, 24),
            wall_start: None,
            host: None,
            recording: None,
            watching: None,
            marks: Vec::new(),
            past: None,
            following: None,
            follow_asked: None,
        }
    }

    /// A viewer of a shared feed (`--attach`): it follows a collector.
    pub(crate) fn is_viewer(&self) -> bool {
        self.watching
            .as_ref()
            .is_some_and(|w| w.following.is_some())
    }

    /// The snapshot on screen: the frozen one, else the live one.
    pub fn shown(&self) -> &Arc<Snapshot> {
        self.frozen.as_ref().map_or(&self.live, |(s, _)| s)
    }

    pub fn table(&self) -> &TableUi {
        &self.tables[self.pane.index()]
    }

    /// Rows of table body that fit on screen.
    pub(crate) fn page_rows(&self) -> usize {
        let chrome = CHROME_ROWS + u16::from(self.replay.is_some());
        usize::from(self.size.1.saturating_sub(chrome)).max(1)
    }

    /// The wall-clock time at session time `at`, when known.
    pub fn wall_clock(&self, at: Duration) -> Option<time::OffsetDateTime> {
        self.wall_start.map(|w| w + at)
    }

    /// Adds a bookmark, kept in time order.
    pub(crate) fn add_mark(&mut self, at: Duration, note: String) {
        let i = self.marks.partition_point(|m| m.at <= at);
        self.marks.insert(i, MarkUi { at, note });
    }

    /// The message still worth showing.
    pub fn current_message(&self) -> Option<&str> {
        self.message
            .as_ref()
            .filter(|(_, at)| self.clock.saturating_sub(*at) < MESSAGE_TTL)
            .map(|(m, _)| m.as_str())
    }

    /// The Waiters pane shows the blocker tree (its rows are the tree's lines).
    pub fn tree_shown(&self, pane: Pane) -> bool {
        pane == Pane::Waiters && self.tree
    }

    /// The session of the selected row: a waiter, a socket's session, a hot spot's owner.
    pub fn selected_sid(&self) -> Option<Sid> {
        let snap = self.shown();
        let t = self.table();
        let row = *t.order.get(t.selected)?;
        if self.tree_shown(self.pane) {
            return match snap.tree.get(row)?.item {
                TreeItem::Head(sid) | TreeItem::Deadlock(sid) => Some(sid),
                TreeItem::Waiter(i) => snap.waiters.get(i).map(|w| w.sessid),
            };
        }
        match self.pane {
            Pane::Sessions => snap.sessions.get(row).map(|s| s.sessid),
            Pane::Waiters => snap.waiters.get(row).map(|w| w.sessid),
            Pane::Sockets => snap.sockets.get(row).and_then(|s| s.sessid),
            Pane::Buffers => snap.hotspots.get(row).and_then(|h| h.owner_sid),
            Pane::Numa | Pane::Io => None,
            Pane::Activity => {
                let e = crate::tui::panes::activity_entry(snap, row)?;
                match self.activity.group {
                    crate::model::activity::Key::Session
                    | crate::model::activity::Key::HeadBlocker => e.key.parse().ok().map(Sid),
                    _ => None,
                }
            }
            Pane::Server => crate::tui::server_lines::lines(snap, &self.theme)
                .get(row)
                .and_then(|l| l.sid),
        }
    }

    /// The hot spot screen (when open and no session screen is above it), and its content.
    pub(crate) fn hotspot_screen(
        &self,
    ) -> Option<(&HotspotUi, Option<&crate::model::hotspot::HotspotView>)> {
        if !self.drill.is_empty() {
            return None;
        }
        let h = self.hotspot.as_ref()?;
        let view = self
            .shown()
            .hotspot_view
            .as_ref()
            .filter(|v| v.row.object == h.object);
        Some((h, view))
    }

    /// The session screen on top of the drill stack, and its content when built.
    pub(crate) fn session(
        &self,
    ) -> Option<(&DrillUi, Option<&crate::model::session::SessionView>)> {
        let d = self.drill.last()?;
        Some((
            d,
            self.shown().session_views.iter().find(|s| s.sid == d.sid),
        ))
    }
}
