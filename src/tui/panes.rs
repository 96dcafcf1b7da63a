//! What each list pane shows: its columns, each cell's text, each column's sort key. The app
//! sorts and filters with these; the views draw with them.

use crate::format::{human_bytes, human_duration};
use crate::model::snapshot::Snapshot;
use crate::model::waiters::WaitTarget;
use crate::model::waiters::WaiterRow;
use crate::parsers::onstat_u::WaitReason;
use crate::store::hotspots::HotspotRow;
use crate::store::sockets::SocketRow;
use crate::tui::table::{sparkline, Col, SortKey, TableRows};
use crate::tui::theme::Theme;
use ratatui::style::Style;
use std::borrow::Cow;

/// The list panes. NUMA is drawn as a report, not a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pane {
    Waiters,
    Buffers,
    Sockets,
    Numa,
}

impl Pane {
    pub const ALL: [Pane; 4] = [Pane::Waiters, Pane::Buffers, Pane::Sockets, Pane::Numa];

    pub fn index(self) -> usize {
        match self {
            Pane::Waiters => 0,
            Pane::Buffers => 1,
            Pane::Sockets => 2,
            Pane::Numa => 3,
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Pane::Waiters => "Waiters",
            Pane::Buffers => "Buffers",
            Pane::Sockets => "Sockets",
            Pane::Numa => "NUMA",
        }
    }

    pub fn columns(self) -> &'static [Col] {
        match self {
            Pane::Waiters => WAITER_COLS,
            Pane::Buffers => HOTSPOT_COLS,
            Pane::Sockets => SOCKET_COLS,
            Pane::Numa => &[],
        }
    }

    /// The column sorted by until the user picks another, and its direction (descending?).
    pub fn default_sort(self) -> (usize, bool) {
        match self {
            Pane::Waiters => (4, true),
            Pane::Buffers => (2, true),
            Pane::Sockets => (3, true),
            Pane::Numa => (0, false),
        }
    }

    pub fn len(self, snap: &Snapshot) -> usize {
        match self {
            Pane::Waiters => snap.waiters.len(),
            Pane::Buffers => snap.hotspots.len(),
            Pane::Sockets => snap.sockets.len(),
            Pane::Numa => snap.numa.nodes.len(),
        }
    }

    pub fn sort_key(self, snap: &Snapshot, row: usize, col: usize) -> SortKey {
        match self {
            Pane::Waiters => snap
                .waiters
                .get(row)
                .map_or(SortKey::None, |r| waiter_key(r, col)),
            Pane::Buffers => snap
                .hotspots
                .get(row)
                .map_or(SortKey::None, |r| hotspot_key(r, col)),
            Pane::Sockets => snap
                .sockets
                .get(row)
                .map_or(SortKey::None, |r| socket_key(r, col)),
            Pane::Numa => SortKey::Num(row as f64),
        }
    }

    /// What identifies a row across snapshots, to keep it selected when rows move.
    pub fn row_id(self, snap: &Snapshot, row: usize) -> Option<String> {
        match self {
            Pane::Waiters => snap.waiters.get(row).map(|w| w.rstcb.to_string()),
            Pane::Buffers => snap.hotspots.get(row).map(|h| h.object.clone()),
            Pane::Sockets => snap
                .sockets
                .get(row)
                .map(|s| format!("{} {}", s.local, s.remote)),
            Pane::Numa => snap.numa.nodes.get(row).map(|n| n.node.to_string()),
        }
    }

    /// The row's text for `/` filtering: every column, lowercase.
    pub fn row_text(self, snap: &Snapshot, row: usize) -> String {
        let cols = self.columns().len();
        let rows = PaneRows { pane: self, snap };
        let mut s = String::new();
        for c in 0..cols {
            s.push_str(&rows.cell(row, c));
            s.push(' ');
        }
        if let (Pane::Waiters, Some(w)) = (self, snap.waiters.get(row)) {
            s.push_str(&w.verdict);
        }
        s.to_lowercase()
    }
}

pub const WAITER_COLS: &[Col] = &[
    Col::new("SID", 6).right(),
    Col::new("USER", 8),
    Col::new("WAIT", 10),
    Col::new("WAITING ON", 16).flex(),
    Col::new("IN WAIT", 8).right(),
    Col::new("BLOCKER", 8).right(),
    Col::new("SEND-Q", 7).right(),
    Col::new("LOCKS", 6).right().wide(100),
    Col::new("RD/s", 6).right().wide(100),
    Col::new("WR/s", 6).right().wide(110),
    Col::new("FLAGS", 7).wide(120),
    Col::new("VERDICT", 20).flex_by(3).wide(140),
];

pub const HOTSPOT_COLS: &[Col] = &[
    Col::new("OBJECT", 24).flex(),
    Col::new("NOW", 4).right(),
    Col::new("WIN", 5).right(),
    Col::new("SAMPLES", 8).right(),
    Col::new("TOTAL", 6).right(),
    Col::new("PAGES", 6).right(),
    Col::new("OWNER", 6).right(),
    Col::new("TREND", 8),
    Col::new("STREAK", 7).right().wide(110),
    Col::new("DBSPACE", 12).wide(120),
];

pub const SOCKET_COLS: &[Col] = &[
    Col::new("REMOTE", 22),
    Col::new("SID", 6).right(),
    Col::new("STATE", 11),
    Col::new("SEND-Q", 8).right(),
    Col::new("RECV-Q", 7).right(),
    Col::new("MAX SQ", 8).right(),
    Col::new("TREND", 12),
    Col::new("USER", 9).wide(100),
    Col::new("LOCAL", 22).flex().wide(120),
];

/// An endpoint as a DBA reads it: an IPv4-mapped address of `/proc/net/tcp6` as plain IPv4.
pub fn plain_endpoint(e: &crate::parsers::sockets::Endpoint) -> String {
    match e.host.strip_prefix("::ffff:") {
        Some(v4) if v4.contains('.') => format!("{v4}:{}", e.port),
        _ => e.to_string(),
    }
}

fn rate(r: Option<f64>) -> String {
    match r {
        None => "-".into(),
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
    }
}

fn waiter_key(r: &WaiterRow, col: usize) -> SortKey {
    match col {
        0 => SortKey::Num(r.sessid.0 as f64),
        1 => SortKey::Text(r.user.to_string()),
        2 => SortKey::Text(r.reason.short().into()),
        3 => SortKey::Text(r.waiting_on.describe()),
        4 => SortKey::Num(r.priority()),
        5 => r
            .head_blocker
            .map_or(SortKey::None, |s| SortKey::Num(s.0 as f64)),
        6 => r
            .socket
            .as_ref()
            .map_or(SortKey::None, |s| SortKey::Num(s.send_q as f64)),
        7 => SortKey::Num(r.locks as f64),
        8 => r.reads_per_s.map_or(SortKey::None, SortKey::Num),
        9 => r.writes_per_s.map_or(SortKey::None, SortKey::Num),
        10 => SortKey::Text(r.flags.to_string()),
        _ => SortKey::Text(r.verdict.to_string()),
    }
}

fn hotspot_key(r: &HotspotRow, col: usize) -> SortKey {
    match col {
        0 => SortKey::Text(r.object.clone()),
        1 => SortKey::Num(r.current_waiters as f64),
        2 => SortKey::Num(r.waiters_window as f64 + r.waiters_total as f64 * 1e-9),
        3 => SortKey::Num(r.samples_window as f64),
        4 => SortKey::Num(r.waiters_total as f64),
        5 => SortKey::Num(r.distinct_pages as f64),
        6 => r
            .owner_sid
            .map_or(SortKey::None, |s| SortKey::Num(s.0 as f64)),
        7 => SortKey::Num(r.trend.iter().sum::<u64>() as f64),
        8 => SortKey::Num(f64::from(r.longest_streak)),
        _ => SortKey::Text(r.dbspace.clone().unwrap_or_default()),
    }
}

fn socket_key(r: &SocketRow, col: usize) -> SortKey {
    match col {
        0 => SortKey::Text(r.remote.to_string()),
        1 => r.sessid.map_or(SortKey::None, |s| SortKey::Num(s.0 as f64)),
        2 => SortKey::Text(r.state.map(|s| s.as_str()).unwrap_or("").into()),
        3 => SortKey::Num(r.send_q as f64),
        4 => SortKey::Num(r.recv_q as f64),
        5 => SortKey::Num(r.max_send_q as f64),
        6 => SortKey::Num(r.trend.iter().sum::<u64>() as f64),
        7 => r
            .user
            .as_ref()
            .map_or(SortKey::None, |u| SortKey::Text(u.to_string())),
        _ => SortKey::Text(r.local.to_string()),
    }
}

/// Adapts a pane of a snapshot to the generic table.
pub struct PaneRows<'a> {
    pub pane: Pane,
    pub snap: &'a Snapshot,
}

impl TableRows for PaneRows<'_> {
    fn cell(&self, row: usize, col: usize) -> Cow<'_, str> {
        match self.pane {
            Pane::Waiters => {
                let Some(r) = self.snap.waiters.get(row) else {
                    return Cow::Borrowed("");
                };
                match col {
                    0 => r.sessid.to_string().into(),
                    1 => Cow::Borrowed(r.user.as_str()),
                    2 => Cow::Borrowed(r.reason.short()),
                    3 => match &r.waiting_on {
                        // A bare address says nothing: the sentence does (checkpoint, log
                        // buffer, transaction...).
                        WaitTarget::Other { .. } => Cow::Borrowed(&*r.verdict),
                        target => {
                            let mut d = target.describe_short();
                            if r.idle {
                                d.push_str(" (idle)");
                            }
                            d.into()
                        }
                    },
                    4 => human_duration(r.in_wait_s).into(),
                    5 => match (r.deadlock, r.head_blocker) {
                        (true, _) => Cow::Borrowed("DEADLK"),
                        (false, Some(h)) => h.to_string().into(),
                        (false, None) => Cow::Borrowed("-"),
                    },
                    6 => r
                        .socket
                        .as_ref()
                        .map_or(Cow::Borrowed("-"), |s| human_bytes(s.send_q).into()),
                    7 => r.locks.to_string().into(),
                    8 => rate(r.reads_per_s).into(),
                    9 => rate(r.writes_per_s).into(),
                    10 => Cow::Borrowed(r.flags.as_str()),
                    _ => Cow::Borrowed(&*r.verdict),
                }
            }
            Pane::Buffers => {
                let Some(r) = self.snap.hotspots.get(row) else {
                    return Cow::Borrowed("");
                };
                match col {
                    0 => Cow::Borrowed(r.object.as_str()),
                    1 => r.current_waiters.to_string().into(),
                    2 => r.waiters_window.to_string().into(),
                    3 => format!("{}/{}", r.samples_window, r.window_samples).into(),
                    4 => r.waiters_total.to_string().into(),
                    5 => r.distinct_pages.to_string().into(),
                    6 => r
                        .owner_sid
                        .map_or(Cow::Borrowed("-"), |s| s.to_string().into()),
                    7 => sparkline(&r.trend, 8).into(),
                    8 => r.longest_streak.to_string().into(),
                    _ => r.dbspace.as_deref().unwrap_or("?").into(),
                }
            }
            Pane::Sockets => {
                let Some(r) = self.snap.sockets.get(row) else {
                    return Cow::Borrowed("");
                };
                match col {
                    0 => plain_endpoint(&r.remote).into(),
                    1 => r
                        .sessid
                        .map_or(Cow::Borrowed("-"), |s| s.to_string().into()),
                    2 => Cow::Borrowed(r.state.map(|s| s.as_str()).unwrap_or("")),
                    3 => human_bytes(r.send_q).into(),
                    4 => human_bytes(r.recv_q).into(),
                    5 => human_bytes(r.max_send_q).into(),
                    6 => sparkline(&r.trend, 12).into(),
                    7 => r.user.as_deref().unwrap_or("-").to_string().into(),
                    _ => plain_endpoint(&r.local).into(),
                }
            }
            Pane::Numa => Cow::Borrowed(""),
        }
    }

    fn style(&self, row: usize, theme: &Theme) -> Style {
        match self.pane {
            Pane::Waiters => match self.snap.waiters.get(row) {
                Some(r) if r.idle => theme.dim,
                Some(r) if r.head_blocker.is_some() || r.reason != WaitReason::Condition => {
                    theme.warn
                }
                Some(r) if r.socket.as_ref().is_some_and(|s| s.send_q > 0) => theme.hot,
                _ => Style::new(),
            },
            Pane::Buffers => match self.snap.hotspots.get(row) {
                Some(r) if r.current_waiters > 0 => theme.hot,
                _ => Style::new(),
            },
            Pane::Sockets => match self.snap.sockets.get(row) {
                Some(r) if r.send_q > 0 => theme.hot,
                _ => Style::new(),
            },
            Pane::Numa => Style::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_title_has_room_for_the_sort_marker() {
        for pane in Pane::ALL {
            for c in pane.columns() {
                let need = c.title.chars().count() + 1;
                assert!(usize::from(c.width) >= need, "{pane:?} {}", c.title);
            }
        }
    }
}
