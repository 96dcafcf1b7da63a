//! What each list pane shows: its columns (one enum per pane), each cell's text, each column's
//! sort key, and the pane's default order. The app sorts and filters with these; the views draw
//! with them.

use crate::format::human_bytes;
use crate::ids::{Addr, Sid};
use crate::model::io::{ChunkRow, Concern};
use crate::model::sessions::{SessionRow, SessionState};
use crate::model::snapshot::Snapshot;
use crate::model::waiters::WaiterRow;
use crate::parsers::onstat_u::WaitReason;
use crate::parsers::sockets::Endpoint;
use crate::store::hotspots::HotspotRow;
use crate::store::sockets::SocketRow;
use crate::tui::table::{sparkline, Col, SortKey, TableRows};
use crate::tui::theme::Theme;
use ratatui::style::Style;
use std::borrow::Cow;

/// The panes: five lists of rows under typed columns ([`ListPane`]) and three reports drawn in
/// their own order (NUMA, Server, Activity).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pane {
    /// Every session, as `top` lists every process.
    Sessions,
    Waiters,
    Buffers,
    Sockets,
    Numa,
    /// The server's vital signs: rates, checkpoints, logs, VPs, mutexes, memory.
    Server,
    /// Each chunk with its device (is it the disk?), and replication (is it the replica?).
    Io,
    /// Database time over a window: a chart by class and the top groups (`model/activity.rs`).
    Activity,
}

/// A pane that lists rows under typed columns: sorted by any of them, filtered and searched.
/// The report panes have no columns and no sort: they keep their rows in their own order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ListPane {
    Sessions,
    Waiters,
    Buffers,
    Sockets,
    Io,
}

/// What identifies a row across snapshots, so the selection follows its row as rows move.
/// Compared with a snapshot's rows in place ([`Pane::is_row`]): finding it allocates nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowId {
    /// A session (Sessions; NUMA has none).
    Session(Sid),
    /// A waiting thread, by its `onstat -u` address (Waiters).
    Thread(Addr),
    /// A table or index (Buffers).
    Object(Box<str>),
    /// A connection (Sockets).
    Connection {
        local: Endpoint,
        remote: Endpoint,
    },
    /// A NUMA node.
    Node(u32),
    /// A chunk (I/O & HA).
    Chunk(u32),
    /// A group of the Activity table.
    Group(Box<str>),
    /// A line of the Waiters tree: the head of a chain, or a deadlock's lowest session.
    Head(Sid),
    Deadlock(Sid),
}

/// A column of the Sessions pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionCol {
    Sid,
    User,
    Host,
    State,
    What,
    /// The first words of its current statement, where read lately (`onstat -g sql` of the
    /// sessions that matter: blockers, the longest waiters, the top by database time).
    Sql,
    Time,
    /// CPU % of one core between the last two `onstat -g cpu` samples.
    Cpu,
    /// The memory its pool holds (`onstat -g ses`, read every 30 s).
    Mem,
    ReadsPerS,
    WritesPerS,
    Locks,
    Blocks,
    Threads,
    Program,
}

/// A column of the Waiters pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WaiterCol {
    Sid,
    User,
    Wait,
    WaitingOn,
    InWait,
    Blocker,
    SendQ,
    Locks,
    ReadsPerS,
    WritesPerS,
    Flags,
    Verdict,
}

/// A column of the Buffers pane (hot spots).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HotspotCol {
    Object,
    Now,
    Window,
    Samples,
    Total,
    Pages,
    Owner,
    Trend,
    Streak,
    Dbspace,
}

/// A column of the Sockets pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SocketCol {
    Remote,
    Sid,
    State,
    SendQ,
    RecvQ,
    MaxSendQ,
    Trend,
    User,
    Local,
}

/// A column of the I/O & HA pane's chunk table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IoCol {
    Chunk,
    Dbspace,
    Path,
    Device,
    ReadsPerS,
    WritesPerS,
    /// Informix's own time per read (`onstat -g iof`).
    IfxRead,
    /// ... per write.
    IfxWrite,
    /// The device's await (`/proc/diskstats`).
    Await,
    Util,
    /// The device's await over the last minutes.
    Trend,
    Disks,
    Verdict,
}

/// A column of any pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Column {
    Session(SessionCol),
    Waiter(WaiterCol),
    Hotspot(HotspotCol),
    Socket(SocketCol),
    Io(IoCol),
}

/// How a pane's rows are ordered: by one column, or by the pane's own grouped order (which says
/// what it groups by in its label, and marks no column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Waiters: what deserves a look first (waits on sessions and resources, then client waits
    /// with data queued, other conditions and mutexes, unknown sockets, idle client waits),
    /// the longest wait first within each. Sessions: those holding others up first, then the
    /// waiting, the running (busiest first), the idle.
    Grouped,
    By {
        column: Column,
        desc: bool,
    },
}

const SESSION_COLS: [Column; 15] = [
    Column::Session(SessionCol::Sid),
    Column::Session(SessionCol::User),
    Column::Session(SessionCol::State),
    Column::Session(SessionCol::What),
    Column::Session(SessionCol::Sql),
    Column::Session(SessionCol::Blocks),
    Column::Session(SessionCol::Time),
    Column::Session(SessionCol::Cpu),
    Column::Session(SessionCol::Mem),
    Column::Session(SessionCol::ReadsPerS),
    Column::Session(SessionCol::WritesPerS),
    Column::Session(SessionCol::Host),
    Column::Session(SessionCol::Locks),
    Column::Session(SessionCol::Threads),
    Column::Session(SessionCol::Program),
];

const WAITER_COLS: [Column; 12] = [
    Column::Waiter(WaiterCol::Sid),
    Column::Waiter(WaiterCol::User),
    Column::Waiter(WaiterCol::Wait),
    Column::Waiter(WaiterCol::WaitingOn),
    Column::Waiter(WaiterCol::InWait),
    Column::Waiter(WaiterCol::Blocker),
    Column::Waiter(WaiterCol::SendQ),
    Column::Waiter(WaiterCol::Locks),
    Column::Waiter(WaiterCol::ReadsPerS),
    Column::Waiter(WaiterCol::WritesPerS),
    Column::Waiter(WaiterCol::Flags),
    Column::Waiter(WaiterCol::Verdict),
];

const HOTSPOT_COLS: [Column; 10] = [
    Column::Hotspot(HotspotCol::Object),
    Column::Hotspot(HotspotCol::Now),
    Column::Hotspot(HotspotCol::Window),
    Column::Hotspot(HotspotCol::Samples),
    Column::Hotspot(HotspotCol::Total),
    Column::Hotspot(HotspotCol::Pages),
    Column::Hotspot(HotspotCol::Owner),
    Column::Hotspot(HotspotCol::Trend),
    Column::Hotspot(HotspotCol::Streak),
    Column::Hotspot(HotspotCol::Dbspace),
];

const SOCKET_COLS: [Column; 9] = [
    Column::Socket(SocketCol::Remote),
    Column::Socket(SocketCol::Sid),
    Column::Socket(SocketCol::State),
    Column::Socket(SocketCol::SendQ),
    Column::Socket(SocketCol::RecvQ),
    Column::Socket(SocketCol::MaxSendQ),
    Column::Socket(SocketCol::Trend),
    Column::Socket(SocketCol::User),
    Column::Socket(SocketCol::Local),
];

const IO_COLS: [Column; 13] = [
    Column::Io(IoCol::Chunk),
    Column::Io(IoCol::Dbspace),
    Column::Io(IoCol::Path),
    Column::Io(IoCol::Device),
    Column::Io(IoCol::ReadsPerS),
    Column::Io(IoCol::WritesPerS),
    Column::Io(IoCol::IfxRead),
    Column::Io(IoCol::IfxWrite),
    Column::Io(IoCol::Await),
    Column::Io(IoCol::Util),
    Column::Io(IoCol::Trend),
    Column::Io(IoCol::Disks),
    Column::Io(IoCol::Verdict),
];

impl Pane {
    pub const ALL: [Pane; 8] = [
        Pane::Sessions,
        Pane::Waiters,
        Pane::Buffers,
        Pane::Sockets,
        Pane::Numa,
        Pane::Server,
        Pane::Io,
        Pane::Activity,
    ];

    pub(crate) fn index(self) -> usize {
        match self {
            Pane::Sessions => 0,
            Pane::Waiters => 1,
            Pane::Buffers => 2,
            Pane::Sockets => 3,
            Pane::Numa => 4,
            Pane::Server => 5,
            Pane::Io => 6,
            Pane::Activity => 7,
        }
    }

    pub(crate) fn title(self) -> &'static str {
        match self {
            Pane::Sessions => "Sessions",
            Pane::Waiters => "Waiters",
            Pane::Buffers => "Buffers",
            Pane::Sockets => "Sockets",
            Pane::Numa => "NUMA",
            Pane::Server => "Server",
            Pane::Io => "I/O & HA",
            Pane::Activity => "Activity",
        }
    }

    /// A short title for narrow terminals (the active pane keeps its full one).
    pub(crate) fn short_title(self) -> &'static str {
        match self {
            Pane::Sessions => "Ses",
            Pane::Waiters => "Wait",
            Pane::Buffers => "Buf",
            Pane::Sockets => "Sock",
            Pane::Numa => "NUMA",
            Pane::Server => "Srv",
            Pane::Io => "I/O",
            Pane::Activity => "Act",
        }
    }

    /// The list it is, if it is one.
    pub fn list(self) -> Option<ListPane> {
        match self {
            Pane::Sessions => Some(ListPane::Sessions),
            Pane::Waiters => Some(ListPane::Waiters),
            Pane::Buffers => Some(ListPane::Buffers),
            Pane::Sockets => Some(ListPane::Sockets),
            Pane::Io => Some(ListPane::Io),
            Pane::Numa | Pane::Server | Pane::Activity => None,
        }
    }

    /// The order until the user picks another: a report's is its own.
    pub fn default_order(self) -> Order {
        self.list().map_or(Order::Grouped, ListPane::default_order)
    }

    pub(crate) fn len(self, snap: &Snapshot) -> usize {
        match self {
            Pane::Sessions => snap.sessions.len(),
            Pane::Waiters => snap.waiters.len(),
            Pane::Buffers => snap.hotspots.len(),
            Pane::Sockets => snap.sockets.len(),
            Pane::Numa => snap.numa.nodes.len(),
            // Every line is a row the cursor moves over (Enter on one naming a session).
            Pane::Server => crate::tui::server_lines::lines(snap, &Theme::plain()).len(),
            Pane::Io => snap.io.chunks.len(),
            Pane::Activity => snap
                .activity
                .as_ref()
                .map_or(0, |a| a.top.first().map_or(0, |(_, entries)| entries.len())),
        }
    }

    /// What identifies row `row` (a line of the list or report, not of the Waiters tree).
    pub(crate) fn row_id(self, snap: &Snapshot, row: usize) -> Option<RowId> {
        match self {
            Pane::Sessions => snap.sessions.get(row).map(|s| RowId::Session(s.sessid)),
            Pane::Waiters => snap.waiters.get(row).map(|w| RowId::Thread(w.rstcb)),
            Pane::Buffers => snap
                .hotspots
                .get(row)
                .map(|h| RowId::Object(h.object.as_str().into())),
            Pane::Sockets => snap.sockets.get(row).map(|s| RowId::Connection {
                local: s.local.clone(),
                remote: s.remote.clone(),
            }),
            Pane::Numa => snap.numa.nodes.get(row).map(|n| RowId::Node(n.node)),
            Pane::Server => None,
            Pane::Io => snap.io.chunks.get(row).map(|c| RowId::Chunk(c.chunk)),
            Pane::Activity => {
                activity_entry(snap, row).map(|e| RowId::Group(e.key.as_str().into()))
            }
        }
    }

    /// Whether row `row` is the one `id` names.
    pub(crate) fn is_row(self, snap: &Snapshot, row: usize, id: &RowId) -> bool {
        match (self, id) {
            (Pane::Sessions, RowId::Session(sid)) => {
                snap.sessions.get(row).is_some_and(|s| s.sessid == *sid)
            }
            (Pane::Waiters, RowId::Thread(a)) => {
                snap.waiters.get(row).is_some_and(|w| w.rstcb == *a)
            }
            (Pane::Buffers, RowId::Object(o)) => {
                snap.hotspots.get(row).is_some_and(|h| *h.object == **o)
            }
            (Pane::Sockets, RowId::Connection { local, remote }) => snap
                .sockets
                .get(row)
                .is_some_and(|s| s.local == *local && s.remote == *remote),
            (Pane::Numa, RowId::Node(n)) => snap.numa.nodes.get(row).is_some_and(|r| r.node == *n),
            (Pane::Io, RowId::Chunk(c)) => snap.io.chunks.get(row).is_some_and(|r| r.chunk == *c),
            (Pane::Activity, RowId::Group(k)) => {
                activity_entry(snap, row).is_some_and(|e| *e.key == **k)
            }
            _ => false,
        }
    }
}

impl ListPane {
    pub const ALL: [ListPane; 5] = [
        ListPane::Sessions,
        ListPane::Waiters,
        ListPane::Buffers,
        ListPane::Sockets,
        ListPane::Io,
    ];

    /// How many rows the list has in `snap`.
    pub fn len(self, snap: &Snapshot) -> usize {
        self.pane().len(snap)
    }

    /// The pane it is.
    pub fn pane(self) -> Pane {
        match self {
            ListPane::Sessions => Pane::Sessions,
            ListPane::Waiters => Pane::Waiters,
            ListPane::Buffers => Pane::Buffers,
            ListPane::Sockets => Pane::Sockets,
            ListPane::Io => Pane::Io,
        }
    }

    /// The pane's columns, left to right.
    pub fn columns(self) -> &'static [Column] {
        match self {
            ListPane::Sessions => &SESSION_COLS,
            ListPane::Waiters => &WAITER_COLS,
            ListPane::Buffers => &HOTSPOT_COLS,
            ListPane::Sockets => &SOCKET_COLS,
            ListPane::Io => &IO_COLS,
        }
    }

    /// The order until the user picks another.
    pub fn default_order(self) -> Order {
        match self {
            ListPane::Sessions | ListPane::Waiters | ListPane::Io => Order::Grouped,
            ListPane::Buffers => Order::By {
                column: Column::Hotspot(HotspotCol::Window),
                desc: true,
            },
            ListPane::Sockets => Order::By {
                column: Column::Socket(SocketCol::SendQ),
                desc: true,
            },
        }
    }

    /// The order `s` moves to from `order`: the next column; the pane's grouped order (if it
    /// has one) after the last column.
    pub(crate) fn next_order(self, order: Order) -> Order {
        let cols = self.columns();
        let grouped = self.default_order() == Order::Grouped;
        let next = match order {
            Order::Grouped => cols.first().copied(),
            Order::By { column, .. } => {
                let i = cols.iter().position(|c| *c == column).map_or(0, |i| i + 1);
                match cols.get(i) {
                    Some(c) => Some(*c),
                    None if grouped => None,
                    None => cols.first().copied(),
                }
            }
        };
        match next {
            Some(column) => Order::By {
                column,
                desc: column.spec().right,
            },
            None => Order::Grouped,
        }
    }

    /// The key `row` sorts by under `order`, borrowed from the row.
    pub(crate) fn sort_key(self, snap: &Snapshot, row: usize, order: Order) -> SortKey<'_> {
        match (order, self) {
            (Order::By { column, .. }, _) => column.key(snap, row),
            (Order::Grouped, ListPane::Waiters) => snap
                .waiters
                .get(row)
                .map_or(SortKey::None, |w| SortKey::Num(w.priority())),
            (Order::Grouped, ListPane::Sessions) => snap
                .sessions
                .get(row)
                .map_or(SortKey::None, |s| SortKey::Num(session_priority(s))),
            (Order::Grouped, ListPane::Io) => snap
                .io
                .chunks
                .get(row)
                .map_or(SortKey::None, |c| SortKey::num(c.latency_ms())),
            // No grouped order of their own: the rows' place.
            (Order::Grouped, ListPane::Buffers | ListPane::Sockets) => SortKey::Num(-(row as f64)),
        }
    }

    /// Whether `row` is an idle one (hidden by `i`): an idle session, a waiter in an idle
    /// client wait.
    pub(crate) fn is_idle(self, snap: &Snapshot, row: usize) -> bool {
        match self {
            ListPane::Waiters => snap.waiters.get(row).is_some_and(|w| w.idle),
            ListPane::Sessions => snap
                .sessions
                .get(row)
                .is_some_and(|s| s.state == SessionState::Idle),
            ListPane::Buffers | ListPane::Sockets | ListPane::Io => false,
        }
    }

    /// The row's text for `/` filtering and `n` search, lowercase: every column, and the
    /// verdict, path and device the narrow columns cut. Written into `out` (cleared first), so
    /// filtering thousands of rows reuses one buffer.
    pub(crate) fn row_text(self, snap: &Snapshot, row: usize, out: &mut String) {
        use std::fmt::Write;
        out.clear();
        for c in self.columns() {
            out.push_str(&c.cell(snap, row));
            out.push(' ');
        }
        if let (ListPane::Waiters, Some(w)) = (self, snap.waiters.get(row)) {
            out.push_str(&w.verdict);
        }
        if let (ListPane::Io, Some(c)) = (self, snap.io.chunks.get(row)) {
            let _ = write!(out, "{} {}", c.path, c.device_name.as_deref().unwrap_or(""));
        }
        if !out.is_ascii() {
            *out = out.to_lowercase();
        } else {
            out.make_ascii_lowercase();
        }
    }

    /// What the pane's grouped order is, in words.
    pub(crate) fn grouped_label(self) -> &'static str {
        match self {
            ListPane::Sessions => "blockers, waiting, running, idle",
            ListPane::Io => "slowest first",
            ListPane::Waiters => "concern, then time in wait",
            ListPane::Buffers | ListPane::Sockets => "as collected",
        }
    }

    /// How an order is named on screen: `concern, then time in wait`, `IN WAIT▼`.
    pub(crate) fn order_label(self, order: Order) -> String {
        match order {
            Order::Grouped => self.grouped_label().to_string(),
            Order::By { column, desc } => {
                format!("{}{}", column.spec().title, if desc { "▼" } else { "▲" })
            }
        }
    }
}

impl Column {
    /// Title, width and placement.
    pub fn spec(self) -> Col {
        match self {
            Column::Session(c) => match c {
                SessionCol::Sid => Col::new("SID", 6).right(),
                SessionCol::User => Col::new("USER", 8),
                SessionCol::Host => Col::new("HOST", 15).wide(100),
                SessionCol::State => Col::new("STATE", 10),
                SessionCol::What => Col::new("WAITING ON", 16).flex(),
                SessionCol::Sql => Col::new("SQL", 24).flex().wide(120),
                SessionCol::Time => Col::new("TIME", 6).right(),
                SessionCol::Cpu => Col::new("CPU%", 5).right(),
                // Not at 80 columns, where WAITING ON would lose its width (`M` still sorts
                // by it there).
                SessionCol::Mem => Col::new("MEM", 5).right().wide(90),
                // Rates of 100 and more have no decimal: five characters hold 99999/s.
                SessionCol::ReadsPerS => Col::new("RD/s", 5).right(),
                // At 80 columns CPU% takes its place (WAITING ON keeps its width).
                SessionCol::WritesPerS => Col::new("WR/s", 5).right().wide(90),
                SessionCol::Locks => Col::new("LOCKS", 6).right().wide(110),
                SessionCol::Blocks => Col::new("BLOCKS", 7).right(),
                SessionCol::Threads => Col::new("THR", 4).right().wide(120),
                SessionCol::Program => Col::new("PROGRAM", 20).flex().wide(140),
            },
            Column::Waiter(c) => match c {
                WaiterCol::Sid => Col::new("SID", 6).right(),
                WaiterCol::User => Col::new("USER", 8),
                WaiterCol::Wait => Col::new("WAIT", 10),
                WaiterCol::WaitingOn => Col::new("WAITING ON", 16).flex(),
                WaiterCol::InWait => Col::new("IN WAIT", 8).right(),
                WaiterCol::Blocker => Col::new("BLOCKER", 8).right(),
                WaiterCol::SendQ => Col::new("SEND-Q", 7).right(),
                WaiterCol::Locks => Col::new("LOCKS", 6).right().wide(100),
                WaiterCol::ReadsPerS => Col::new("RD/s", 6).right().wide(100),
                WaiterCol::WritesPerS => Col::new("WR/s", 6).right().wide(110),
                WaiterCol::Flags => Col::new("FLAGS", 7).wide(120),
                WaiterCol::Verdict => Col::new("VERDICT", 20).flex_by(3).wide(140),
            },
            Column::Hotspot(c) => match c {
                HotspotCol::Object => Col::new("OBJECT", 24).flex(),
                HotspotCol::Now => Col::new("NOW", 4).right(),
                HotspotCol::Window => Col::new("WIN", 5).right(),
                HotspotCol::Samples => Col::new("SAMPLES", 8).right(),
                HotspotCol::Total => Col::new("TOTAL", 6).right(),
                HotspotCol::Pages => Col::new("PAGES", 6).right(),
                HotspotCol::Owner => Col::new("OWNER", 6).right(),
                HotspotCol::Trend => Col::new("TREND", 8),
                HotspotCol::Streak => Col::new("STREAK", 7).right().wide(110),
                HotspotCol::Dbspace => Col::new("DBSPACE", 12).wide(120),
            },
            Column::Socket(c) => match c {
                SocketCol::Remote => Col::new("REMOTE", 22),
                SocketCol::Sid => Col::new("SID", 6).right(),
                SocketCol::State => Col::new("STATE", 11),
                SocketCol::SendQ => Col::new("SEND-Q", 8).right(),
                SocketCol::RecvQ => Col::new("RECV-Q", 7).right(),
                SocketCol::MaxSendQ => Col::new("MAX SQ", 8).right(),
                SocketCol::Trend => Col::new("TREND", 12),
                SocketCol::User => Col::new("USER", 9).wide(100),
                SocketCol::Local => Col::new("LOCAL", 22).flex().wide(120),
            },
            Column::Io(c) => match c {
                IoCol::Chunk => Col::new("CHK", 4).right(),
                IoCol::Dbspace => Col::new("DBSPACE", 9),
                IoCol::Path => Col::new("PATH", 24).flex().wide(120),
                IoCol::Device => Col::new("DEVICE", 11).flex(),
                IoCol::ReadsPerS => Col::new("RD/s", 6).right(),
                IoCol::WritesPerS => Col::new("WR/s", 6).right(),
                IoCol::IfxRead => Col::new("IFX RD", 7).right(),
                IoCol::IfxWrite => Col::new("IFX WR", 7).right().wide(100),
                IoCol::Await => Col::new("AWAIT", 6).right(),
                IoCol::Util => Col::new("%UTIL", 6).right(),
                IoCol::Trend => Col::new("AWAIT TREND", 12),
                IoCol::Disks => Col::new("DISKS", 14).wide(140),
                IoCol::Verdict => Col::new("VERDICT", 30).flex_by(2).wide(200),
            },
        }
    }

    /// The cell of `row` in this column.
    pub(crate) fn cell(self, snap: &Snapshot, row: usize) -> Cow<'_, str> {
        match self {
            Column::Session(c) => snap
                .sessions
                .get(row)
                .map_or(Cow::Borrowed(""), |r| session_cell(r, c)),
            Column::Waiter(c) => snap
                .waiters
                .get(row)
                .map_or(Cow::Borrowed(""), |r| waiter_cell(r, c)),
            Column::Hotspot(c) => snap
                .hotspots
                .get(row)
                .map_or(Cow::Borrowed(""), |r| hotspot_cell(r, c)),
            Column::Socket(c) => snap
                .sockets
                .get(row)
                .map_or(Cow::Borrowed(""), |r| socket_cell(r, c)),
            Column::Io(c) => snap
                .io
                .chunks
                .get(row)
                .map_or(Cow::Borrowed(""), |r| io_cell(r, c)),
        }
    }

    /// The value `row` sorts by in this column.
    pub(crate) fn key(self, snap: &Snapshot, row: usize) -> SortKey<'_> {
        match self {
            Column::Session(c) => snap
                .sessions
                .get(row)
                .map_or(SortKey::None, |r| session_key(r, c)),
            Column::Waiter(c) => snap
                .waiters
                .get(row)
                .map_or(SortKey::None, |r| waiter_key(r, c)),
            Column::Hotspot(c) => snap
                .hotspots
                .get(row)
                .map_or(SortKey::None, |r| hotspot_key(r, c)),
            Column::Socket(c) => snap
                .sockets
                .get(row)
                .map_or(SortKey::None, |r| socket_key(r, c)),
            Column::Io(c) => snap
                .io
                .chunks
                .get(row)
                .map_or(SortKey::None, |r| io_key(r, c)),
        }
    }
}

/// An endpoint as a DBA reads it: an IPv4-mapped address of `/proc/net/tcp6` as plain IPv4.
pub(crate) fn plain_endpoint(e: &Endpoint) -> String {
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

fn sid_key(s: Option<Sid>) -> SortKey<'static> {
    s.map_or(SortKey::None, |s| SortKey::Num(s.0 as f64))
}

/// The Sessions pane's grouped order, largest first: sessions holding others up (most first),
/// then those waiting on something (longest first), those running (busiest first), the idle.
pub(crate) fn session_priority(s: &SessionRow) -> f64 {
    let io = s.reads_per_s.unwrap_or(0.0) + s.writes_per_s.unwrap_or(0.0);
    let time = s.in_state_s.unwrap_or(0.0).min(1e7);
    if (!s.blocks.is_empty() && !s.harm.background) || s.critical_section {
        // The most harm first: the oldest wait it causes, then how many wait.
        4e9 + s.harm.oldest_wait_s.min(1e5) * 1e4 + s.blocks.len().min(9_999) as f64 + time.min(0.5)
    } else {
        match s.state {
            SessionState::Waiting => 3e9 + time,
            SessionState::Running => 2e9 + io.min(1e8),
            // Idle in an open transaction: above the plain idle, the longest first.
            SessionState::Idle if s.in_txn => 1.5e9 + time,
            SessionState::Idle => 1e9 - time,
        }
    }
}

use crate::model::activity::NOT_READ;

fn session_cell(r: &SessionRow, c: SessionCol) -> Cow<'_, str> {
    match c {
        SessionCol::Sid => r.sessid.to_string().into(),
        SessionCol::User => Cow::Borrowed(r.user.as_str()),
        SessionCol::Host => r.host.as_deref().unwrap_or("-").into(),
        SessionCol::State => r.state_words().into(),
        SessionCol::What => r.waiting_on.as_deref().unwrap_or("").into(),
        // One line: the statement's own line breaks and indentation folded into blanks.
        SessionCol::Sql => r.sql.as_deref().map_or(Cow::Borrowed(NOT_READ), |q| {
            crate::format::printable(&q.split_whitespace().collect::<Vec<_>>().join(" ")).into()
        }),
        SessionCol::Time => r.in_state_s.map_or(Cow::Borrowed("-"), |t| {
            crate::format::human_duration_bound(t, r.in_state_s_at_least).into()
        }),
        SessionCol::Cpu => r.cpu_percent.map_or(Cow::Borrowed("-"), |c| {
            let n = if c < 9.95 {
                format!("{c:.1}")
            } else {
                format!("{c:.0}")
            };
            if r.cpu_at_least {
                format!("≥{n}").into()
            } else {
                n.into()
            }
        }),
        SessionCol::Mem => r.memory_bytes.map_or(Cow::Borrowed("-"), |b| {
            crate::format::compact_bytes(b).into()
        }),
        SessionCol::ReadsPerS => rate(r.reads_per_s).into(),
        SessionCol::WritesPerS => rate(r.writes_per_s).into(),
        SessionCol::Locks => r.locks.to_string().into(),
        SessionCol::Blocks => {
            if r.blocks.is_empty() {
                Cow::Borrowed("-")
            } else {
                r.blocks.len().to_string().into()
            }
        }
        SessionCol::Threads => r.threads.to_string().into(),
        SessionCol::Program => r.program.as_deref().unwrap_or("-").into(),
    }
}

fn session_key(r: &SessionRow, c: SessionCol) -> SortKey<'_> {
    let (text, num) = (SortKey::text, SortKey::num);
    match c {
        SessionCol::Sid => SortKey::Num(r.sessid.0 as f64),
        SessionCol::User => SortKey::Text(&r.user),
        SessionCol::Host => text(r.host.as_deref()),
        SessionCol::State => SortKey::Text(r.state_words()),
        SessionCol::What => text(r.waiting_on.as_deref()),
        SessionCol::Sql => text(r.sql.as_deref()),
        SessionCol::Time => num(r.in_state_s),
        SessionCol::Cpu => num(r.cpu_percent),
        SessionCol::Mem => num(r.memory_bytes.map(|b| b as f64)),
        SessionCol::ReadsPerS => num(r.reads_per_s),
        SessionCol::WritesPerS => num(r.writes_per_s),
        SessionCol::Locks => SortKey::Num(r.locks as f64),
        SessionCol::Blocks => SortKey::Num(r.blocks.len() as f64),
        SessionCol::Threads => SortKey::Num(f64::from(r.threads)),
        SessionCol::Program => text(r.program.as_deref()),
    }
}

fn waiter_cell(r: &WaiterRow, c: WaiterCol) -> Cow<'_, str> {
    match c {
        WaiterCol::Sid => r.sessid.to_string().into(),
        WaiterCol::User => Cow::Borrowed(r.user.as_str()),
        WaiterCol::Wait => Cow::Borrowed(r.reason.short()),
        WaiterCol::WaitingOn => {
            let mut d = r.waiting_on_short();
            if r.idle {
                d.push_str(" (idle)");
            }
            d.into()
        }
        WaiterCol::InWait => {
            crate::format::human_duration_bound(r.in_wait_s, r.in_wait_s_at_least).into()
        }
        // The direct blocker: the head has its own place (the tree, the session screen).
        WaiterCol::Blocker => match (r.deadlock, r.direct_blocker()) {
            (true, _) => Cow::Borrowed("DEADLK"),
            (false, Some(b)) => b.to_string().into(),
            (false, None) => Cow::Borrowed("-"),
        },
        WaiterCol::SendQ => r
            .socket
            .as_ref()
            .map_or(Cow::Borrowed("-"), |s| human_bytes(s.send_q).into()),
        WaiterCol::Locks => r.locks.to_string().into(),
        WaiterCol::ReadsPerS => rate(r.reads_per_s).into(),
        WaiterCol::WritesPerS => rate(r.writes_per_s).into(),
        WaiterCol::Flags => Cow::Borrowed(r.flags.as_str()),
        WaiterCol::Verdict => Cow::Borrowed(&*r.verdict),
    }
}

fn waiter_key(r: &WaiterRow, c: WaiterCol) -> SortKey<'_> {
    match c {
        WaiterCol::Sid => SortKey::Num(r.sessid.0 as f64),
        WaiterCol::User => SortKey::Text(&r.user),
        WaiterCol::Wait => SortKey::Text(r.reason.short()),
        WaiterCol::WaitingOn => {
            let (what, at) = r.waiting_on.sort_parts();
            SortKey::TextNum(what, at)
        }
        WaiterCol::InWait => SortKey::Num(r.in_wait_s),
        WaiterCol::Blocker => sid_key(r.direct_blocker()),
        WaiterCol::SendQ => r
            .socket
            .as_ref()
            .map_or(SortKey::None, |s| SortKey::Num(s.send_q as f64)),
        WaiterCol::Locks => SortKey::Num(r.locks as f64),
        WaiterCol::ReadsPerS => SortKey::num(r.reads_per_s),
        WaiterCol::WritesPerS => SortKey::num(r.writes_per_s),
        WaiterCol::Flags => SortKey::Text(&r.flags),
        WaiterCol::Verdict => SortKey::Text(&r.verdict),
    }
}

fn hotspot_cell(r: &HotspotRow, c: HotspotCol) -> Cow<'_, str> {
    match c {
        HotspotCol::Object => Cow::Borrowed(r.object.as_str()),
        HotspotCol::Now => r.current_waiters.to_string().into(),
        HotspotCol::Window => r.waiters_window.to_string().into(),
        HotspotCol::Samples => format!("{}/{}", r.samples_window, r.window_samples).into(),
        HotspotCol::Total => r.waiters_total.to_string().into(),
        HotspotCol::Pages => r.distinct_pages.to_string().into(),
        HotspotCol::Owner => r
            .owner_sid
            .map_or(Cow::Borrowed("-"), |s| s.to_string().into()),
        HotspotCol::Trend => sparkline(&r.trend, 8).into(),
        HotspotCol::Streak => r.longest_streak.to_string().into(),
        HotspotCol::Dbspace => r.dbspace.as_deref().unwrap_or("?").into(),
    }
}

fn hotspot_key(r: &HotspotRow, c: HotspotCol) -> SortKey<'_> {
    match c {
        HotspotCol::Object => SortKey::Text(&r.object),
        HotspotCol::Now => SortKey::Num(r.current_waiters as f64),
        // Ties in the window broken by the total since start.
        HotspotCol::Window => SortKey::Num(r.waiters_window as f64 + r.waiters_total as f64 * 1e-9),
        HotspotCol::Samples => SortKey::Num(r.samples_window as f64),
        HotspotCol::Total => SortKey::Num(r.waiters_total as f64),
        HotspotCol::Pages => SortKey::Num(r.distinct_pages as f64),
        HotspotCol::Owner => sid_key(r.owner_sid),
        HotspotCol::Trend => SortKey::Num(r.trend.iter().sum::<u64>() as f64),
        HotspotCol::Streak => SortKey::Num(f64::from(r.longest_streak)),
        HotspotCol::Dbspace => SortKey::Text(r.dbspace.as_deref().unwrap_or("")),
    }
}

fn socket_cell(r: &SocketRow, c: SocketCol) -> Cow<'_, str> {
    match c {
        SocketCol::Remote => plain_endpoint(&r.remote).into(),
        SocketCol::Sid => r
            .sessid
            .map_or(Cow::Borrowed("-"), |s| s.to_string().into()),
        SocketCol::State => Cow::Borrowed(r.state.map(|s| s.as_str()).unwrap_or("")),
        SocketCol::SendQ => human_bytes(r.send_q).into(),
        SocketCol::RecvQ => human_bytes(r.recv_q).into(),
        SocketCol::MaxSendQ => human_bytes(r.max_send_q).into(),
        SocketCol::Trend => sparkline(&r.trend, 12).into(),
        SocketCol::User => r.user.as_deref().unwrap_or("-").to_string().into(),
        SocketCol::Local => plain_endpoint(&r.local).into(),
    }
}

fn socket_key(r: &SocketRow, c: SocketCol) -> SortKey<'_> {
    match c {
        SocketCol::Remote => endpoint_key(&r.remote),
        SocketCol::Sid => sid_key(r.sessid),
        SocketCol::State => SortKey::Text(r.state.map(|s| s.as_str()).unwrap_or("")),
        SocketCol::SendQ => SortKey::Num(r.send_q as f64),
        SocketCol::RecvQ => SortKey::Num(r.recv_q as f64),
        SocketCol::MaxSendQ => SortKey::Num(r.max_send_q as f64),
        SocketCol::Trend => SortKey::Num(r.trend.iter().sum::<u64>() as f64),
        SocketCol::User => SortKey::text(r.user.as_deref()),
        SocketCol::Local => endpoint_key(&r.local),
    }
}

/// Milliseconds as the I/O pane prints them: `41`, `2.3`, `0.41`.
pub(crate) fn ms(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Informix's time per operation: over the last samples, or (`*`) since its counters' reset.
fn ifx_ms(v: Option<f64>, over: Option<f64>) -> String {
    match (v, over) {
        (None, _) => "-".into(),
        (Some(v), Some(_)) => ms(v),
        (Some(v), None) => format!("{}*", ms(v)),
    }
}

/// A sparkline of `h` scaled to its maximum or `floor`, whichever is larger: a calm device's
/// or a caught-up replica's small noise stays low instead of filling the cells.
pub(crate) fn spark_floor(h: &[f64], floor: f64, width: usize) -> String {
    let top = h.iter().copied().fold(floor, f64::max);
    let mut v: Vec<u64> = h
        .iter()
        .map(|x| ((x / top) * 70.0).round().max(0.0) as u64)
        .collect();
    // The scale's top, never drawn: sparkline scales to the largest value it is given.
    v.insert(0, 70);
    let s = sparkline(&v, width + 1);
    s.chars().skip(1).collect()
}

pub(crate) fn io_cell(r: &ChunkRow, c: IoCol) -> Cow<'_, str> {
    match c {
        IoCol::Chunk => r.chunk.to_string().into(),
        IoCol::Dbspace => r.dbspace.as_deref().unwrap_or("?").into(),
        IoCol::Path => Cow::Borrowed(r.path.as_str()),
        IoCol::Device => match (&r.device, &r.device_unknown) {
            (Some(_), _) => r.device_label().into(),
            (None, Some(_)) => Cow::Borrowed("unknown"),
            (None, None) => Cow::Borrowed("-"),
        },
        IoCol::ReadsPerS => rate(r.reads_per_s).into(),
        IoCol::WritesPerS => rate(r.writes_per_s).into(),
        IoCol::IfxRead => ifx_ms(r.avg_read_ms, r.avg_read_over_s).into(),
        IoCol::IfxWrite => ifx_ms(r.avg_write_ms, r.avg_write_over_s).into(),
        IoCol::Await => r
            .device_await_ms
            .map_or(Cow::Borrowed("-"), |v| ms(v).into()),
        IoCol::Util => r
            .device_util_pct
            .map_or(Cow::Borrowed("-"), |v| format!("{v:.0}").into()),
        IoCol::Trend => spark_floor(&r.await_history, crate::model::io::SLOW_AWAIT_MS, 12).into(),
        IoCol::Disks => r
            .disks
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>()
            .join(",")
            .into(),
        IoCol::Verdict => r.verdict.as_deref().unwrap_or("").into(),
    }
}

fn io_key(r: &ChunkRow, c: IoCol) -> SortKey<'_> {
    let num = SortKey::num;
    match c {
        IoCol::Chunk => SortKey::Num(f64::from(r.chunk)),
        IoCol::Dbspace => SortKey::Text(r.dbspace.as_deref().unwrap_or("")),
        IoCol::Path => SortKey::Text(&r.path),
        // The name shown first (`vg01-data`), else the kernel's (`dm-8`).
        IoCol::Device => SortKey::Text(
            r.device_name
                .as_deref()
                .or(r.device.as_deref())
                .unwrap_or("?"),
        ),
        IoCol::ReadsPerS => num(r.reads_per_s),
        IoCol::WritesPerS => num(r.writes_per_s),
        IoCol::IfxRead => num(r.avg_read_ms),
        IoCol::IfxWrite => num(r.avg_write_ms),
        IoCol::Await => num(r.device_await_ms),
        IoCol::Util => num(r.device_util_pct),
        IoCol::Trend => SortKey::Num(r.await_history.iter().sum()),
        // By the first disk under it.
        IoCol::Disks => SortKey::Text(r.disks.first().map_or("", |d| d.name.as_str())),
        IoCol::Verdict => SortKey::Text(r.verdict.as_deref().unwrap_or("")),
    }
}

/// An endpoint sorts by its host, then its port as a number.
fn endpoint_key(e: &Endpoint) -> SortKey<'_> {
    SortKey::TextNum(&e.host, e.port_num().map_or(f64::MAX, f64::from))
}

/// Adapts a pane of a snapshot to the generic table.
pub(crate) struct PaneRows<'a> {
    pub(crate) list: ListPane,
    pub(crate) snap: &'a Snapshot,
}

impl TableRows for PaneRows<'_> {
    fn cell(&self, row: usize, col: usize) -> Cow<'_, str> {
        match self.list.columns().get(col) {
            Some(c) => c.cell(self.snap, row),
            None => Cow::Borrowed(""),
        }
    }

    fn short_cell(&self, row: usize, col: usize) -> Option<Cow<'_, str>> {
        match self.list.columns().get(col)? {
            Column::Hotspot(HotspotCol::Object) => {
                let r = self.snap.hotspots.get(row)?;
                let n = crate::parsers::oncheck_pe::split_object(&r.object)?;
                Some(format!("{} ({})", n.name, n.database).into())
            }
            // Narrow: the kernel's name alone (`dm-8`).
            Column::Io(IoCol::Device) => {
                let r = self.snap.io.chunks.get(row)?;
                r.device.as_deref().map(Cow::Borrowed)
            }
            _ => None,
        }
    }

    fn style(&self, row: usize, theme: &Theme) -> Style {
        match self.list {
            ListPane::Sessions => match self.snap.sessions.get(row) {
                // Holding others up is an alarm; holding a mutex someone waits on for an
                // instant is the background of a busy server.
                Some(r) if (!r.blocks.is_empty() && !r.harm.background) || r.critical_section => {
                    theme.hot
                }
                Some(r) if r.state == SessionState::Idle && !r.in_txn => theme.dim,
                Some(r) if r.state == SessionState::Waiting => theme.warn,
                _ => Style::new(),
            },
            ListPane::Waiters => match self.snap.waiters.get(row) {
                Some(r) if r.idle => theme.dim,
                // Client waits with data queued are the FET_BUF_SIZE story: worth a look.
                Some(r) if r.socket.as_ref().is_some_and(|s| s.send_q > 0) => {
                    theme.wait_style(r.in_wait_s.max(5.0))
                }
                Some(r) if r.reason == WaitReason::Condition && r.head_blocker.is_none() => {
                    Style::new()
                }
                // Escalates with the time in the wait: a wait of a second is not an alarm.
                Some(r) => theme.wait_style(r.in_wait_s),
                _ => Style::new(),
            },
            ListPane::Buffers => match self.snap.hotspots.get(row) {
                Some(r) if r.current_waiters > 0 => theme.hot,
                _ => Style::new(),
            },
            ListPane::Sockets => match self.snap.sockets.get(row) {
                Some(r) if r.send_q > 0 => theme.hot,
                _ => Style::new(),
            },
            ListPane::Io => match self.snap.io.chunks.get(row).map(|c| c.concern) {
                Some(Concern::Alarm) => theme.error,
                Some(Concern::Warn) => theme.warn,
                _ => Style::new(),
            },
        }
    }
}

/// The Activity pane's row: an entry of the report's one list.
pub(crate) fn activity_entry(
    snap: &Snapshot,
    row: usize,
) -> Option<&crate::model::activity::Entry> {
    snap.activity.as_ref()?.top.first()?.1.get(row)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn every_title_has_room_for_the_sort_marker() {
        for pane in ListPane::ALL {
            for c in pane.columns() {
                let s = c.spec();
                let need = s.title.chars().count() + 1;
                assert!(usize::from(s.width) >= need, "{pane:?} {}", s.title);
            }
        }
    }

    /// A running session with nothing else known.
    pub(crate) fn session(sid: u64) -> SessionRow {
        SessionRow {
            user: "app".into(),
            threads: 1,
            system: false,
            ..SessionRow::empty(crate::ids::Sid(sid))
        }
    }

    pub(crate) fn socket(host: &str, port: &str, send_q: u64) -> SocketRow {
        SocketRow {
            local: Endpoint::new("10.0.0.5", "9088"),
            remote: Endpoint::new(host, port),
            state: None,
            send_q,
            recv_q: 0,
            max_send_q: send_q,
            trend: Vec::new(),
            queued_for_s: (send_q > 0).then_some(0.0),
            sessid: None,
            user: None,
        }
    }

    /// At 130 columns the I/O pane shows PATH (optional, left of DEVICE): the device's name
    /// gets the width it needs first; PATH used to take the spare width before it, cutting
    /// `vg01-data (dm-8)` to widen a path.
    #[test]
    fn the_device_gets_its_width_before_the_optional_path() {
        let cols: Vec<Col> = ListPane::Io.columns().iter().map(|c| c.spec()).collect();
        let at = |c: IoCol| {
            ListPane::Io
                .columns()
                .iter()
                .position(|x| *x == Column::Io(c))
        };
        let (path, device) = (
            at(IoCol::Path).expect("PATH"),
            at(IoCol::Device).expect("DEVICE"),
        );
        let mut needs = vec![0u16; cols.len()];
        needs[path] = 60;
        needs[device] = 30;
        let got = crate::tui::table::layout_for(&cols, 130, &needs);
        let width_of = |i| got.iter().find(|g| g.0 == i).map(|g| g.1);
        assert!(width_of(path).is_some(), "PATH is shown at 130: {got:?}");
        assert_eq!(width_of(device), Some(30), "{got:?}");
    }

    /// REMOTE sorts by host, then by port as a number: `:9088` before `:40000`, which the
    /// text `10.1.1.1:40000` < `10.1.1.1:9088` would reverse.
    #[test]
    fn endpoints_sort_by_host_then_port_number() {
        let snap = Snapshot {
            sockets: vec![
                socket("10.1.1.2", "1", 0),
                socket("10.1.1.1", "40000", 0),
                socket("10.1.1.1", "9088", 0),
            ],
            ..Snapshot::default()
        };
        let by = Order::By {
            column: Column::Socket(SocketCol::Remote),
            desc: false,
        };
        let key = |row| ListPane::Sockets.sort_key(&snap, row, by);
        let mut rows = vec![0, 1, 2];
        rows.sort_by(|a, b| key(*a).compare(&key(*b)));
        assert_eq!(rows, vec![2, 1, 0]);
    }

    /// The selection's identity is compared in place: each kind of row is found by its own
    /// id, and an id of another pane's kind matches nothing.
    #[test]
    fn a_row_is_found_by_its_identity() {
        let snap = Snapshot {
            sockets: vec![
                socket("10.1.1.1", "40000", 0),
                socket("10.1.1.1", "9088", 0),
            ],
            ..Snapshot::default()
        };
        let id = Pane::Sockets.row_id(&snap, 1).expect("a socket's id");
        assert!(Pane::Sockets.is_row(&snap, 1, &id));
        assert!(!Pane::Sockets.is_row(&snap, 0, &id));
        assert!(!Pane::Sessions.is_row(&snap, 1, &id));
        assert!(!Pane::Sockets.is_row(&snap, 1, &RowId::Chunk(1)));
    }

    #[test]
    fn sort_cycles_through_every_column_and_back_to_the_grouped_order() {
        let mut o = ListPane::Waiters.default_order();
        assert_eq!(o, Order::Grouped);
        let mut seen = Vec::new();
        for _ in 0..ListPane::Waiters.columns().len() {
            o = ListPane::Waiters.next_order(o);
            let Order::By { column, .. } = o else {
                panic!("a column")
            };
            seen.push(column);
        }
        assert_eq!(seen, ListPane::Waiters.columns());
        assert_eq!(ListPane::Waiters.next_order(o), Order::Grouped);
        // A pane without a grouped order wraps to its first column.
        let last = Order::By {
            column: Column::Socket(SocketCol::Local),
            desc: false,
        };
        assert!(matches!(
            ListPane::Sockets.next_order(last),
            Order::By {
                column: Column::Socket(SocketCol::Remote),
                ..
            }
        ));
    }
}
