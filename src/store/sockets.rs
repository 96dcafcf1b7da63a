//! Client connections on the Informix listener ports over time: Send-Q/Recv-Q now, its
//! maximum over the window and its trend, per connection.

use crate::parsers::sockets::{Endpoint, Socket, TcpState};
use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;
use serde::Serialize;
use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::time::Duration;

/// One Send-Q sample: when (milliseconds since ifxtop started, modulo 2^32: two are compared
/// by their wrapping difference, right for any window under [`MAX_WINDOW_MS`]) and how many
/// bytes (a socket's queue is an `int` in the kernel). 8 bytes, not `(Duration, u64)`'s 24:
/// thousands of connections each keep a few dozen.
type Sample = (u32, u32);

fn nanos(t: Duration) -> u64 {
    u64::try_from(t.as_nanos()).unwrap_or(u64::MAX)
}

/// A sample's time: milliseconds, wrapping every 49 days.
fn millis(t: Duration) -> u32 {
    (t.as_millis() % (1u128 << 32)) as u32
}

/// The longest window the wrapping times can tell (24 days).
const MAX_WINDOW_MS: u32 = i32::MAX as u32;

/// Samples oldest first in a ring of `N` held where its owner is (not on the heap): observing
/// one of thousands of connections touches its own memory only, no deque beside it.
#[derive(Debug, Clone)]
struct Ring<const N: usize> {
    at: [Sample; N],
    /// The place of the oldest sample.
    head: u8,
    len: u8,
}

impl<const N: usize> Ring<N> {
    const fn new() -> Self {
        Ring {
            at: [(0, 0); N],
            head: 0,
            len: 0,
        }
    }

    fn len(&self) -> usize {
        usize::from(self.len)
    }

    fn is_full(&self) -> bool {
        self.len() == N
    }

    /// The place of the `k`-th sample from the oldest.
    fn place(&self, k: usize) -> usize {
        (usize::from(self.head) + k) % N
    }

    fn front(&self) -> Option<&Sample> {
        (self.len > 0).then(|| &self.at[usize::from(self.head)])
    }

    fn back(&self) -> Option<&Sample> {
        (self.len > 0).then(|| &self.at[self.place(self.len() - 1)])
    }

    /// Adds a sample after the newest; the ring must not be full.
    fn push_back(&mut self, s: Sample) {
        debug_assert!(!self.is_full());
        let p = self.place(self.len());
        self.at[p] = s;
        self.len += 1;
    }

    fn pop_front(&mut self) {
        if self.len > 0 {
            self.head = (self.place(1)) as u8;
            self.len -= 1;
        }
    }

    fn pop_back(&mut self) {
        self.len = self.len.saturating_sub(1);
    }

    /// The samples, oldest first: the part from the oldest to the end of the array, then the
    /// part that wrapped to its start.
    fn as_slices(&self) -> (&[Sample], &[Sample]) {
        let head = usize::from(self.head);
        let first = (N - head).min(self.len());
        (&self.at[head..head + first], &self.at[..self.len() - first])
    }

    fn iter(&self) -> impl Iterator<Item = &Sample> {
        let (a, b) = self.as_slices();
        a.iter().chain(b)
    }
}

/// Peaks a connection holds in its own memory: a queue that rose and fell rarely holds more
/// (a strictly falling run of Send-Q values within the window).
const PEAKS_HELD: usize = 6;

/// The samples that can still be the window's largest Send-Q once older ones leave it:
/// strictly decreasing from the front, so the front is the window's maximum (a sliding-window
/// maximum). Held in the connection up to [`PEAKS_HELD`]; a longer run (a queue falling sample
/// after sample) moves to the heap, and back once it is short again. It never holds more than
/// the window's samples: each is pushed once and leaves when it is older than the window.
#[derive(Debug, Clone)]
enum Peaks {
    Held(Ring<PEAKS_HELD>),
    Spilt(VecDeque<Sample>),
}

impl Peaks {
    #[cfg(test)]
    fn len(&self) -> usize {
        match self {
            Peaks::Held(r) => r.len(),
            Peaks::Spilt(d) => d.len(),
        }
    }

    fn front(&self) -> Option<&Sample> {
        match self {
            Peaks::Held(r) => r.front(),
            Peaks::Spilt(d) => d.front(),
        }
    }

    /// Adds sample `s` after dropping the samples at the back it is at least as large as.
    fn push(&mut self, s: Sample) {
        match self {
            Peaks::Held(r) => {
                while r.back().is_some_and(|&(_, p)| p <= s.1) {
                    r.pop_back();
                }
                if r.is_full() {
                    let mut d = VecDeque::with_capacity(2 * PEAKS_HELD);
                    d.extend(r.iter().copied());
                    d.push_back(s);
                    *self = Peaks::Spilt(d);
                } else {
                    r.push_back(s);
                }
            }
            Peaks::Spilt(d) => {
                while d.back().is_some_and(|&(_, p)| p <= s.1) {
                    d.pop_back();
                }
                d.push_back(s);
            }
        }
    }

    /// Drops the samples at the front that `old` says left the window.
    fn expire(&mut self, old: impl Fn(&Sample) -> bool) {
        match self {
            Peaks::Held(r) => {
                while r.front().is_some_and(&old) {
                    r.pop_front();
                }
            }
            Peaks::Spilt(d) => {
                while d.front().is_some_and(&old) {
                    d.pop_front();
                }
                // Back in the connection once short again (half full: a queue hovering at
                // the limit does not move to and from the heap each sample).
                if d.len() <= PEAKS_HELD / 2 {
                    let mut r = Ring::new();
                    d.iter().for_each(|&s| r.push_back(s));
                    *self = Peaks::Held(r);
                }
            }
        }
    }
}

#[derive(Debug, Clone)]
struct ConnHistory {
    /// The latest samples in the window, oldest first, at most [`TREND_SAMPLES`]: what the
    /// sparkline draws. A connection never holds the whole window (60 samples at a 1 s poll).
    recent: Ring<TREND_SAMPLES>,
    peaks: Peaks,
    /// The latest sample's queues and state: the endpoints are the maps' keys, not kept
    /// again (5,000 connections held 2.5 MB of map with a whole socket in each entry, 1.25 MB
    /// without).
    send_q: u64,
    recv_q: u64,
    state: Option<TcpState>,
    /// When it was last in a sample (nanoseconds since ifxtop started).
    last_seen: u64,
    /// When the current stretch of samples with bytes in its Send-Q began (nanoseconds since
    /// ifxtop started): a reply in flight is acknowledged within a round trip, a client that
    /// does not read leaves them there.
    queued_since: Option<u64>,
    /// Order of first appearance: a stable, cheap tie-break for the pane's order.
    seq: u64,
    /// The window's largest Send-Q (the front of `peaks`), kept beside the queues: the pane's
    /// order reads it for every connection each second.
    max: u32,
    /// The last sample that changed its row ([`SocketHistory::rows_kept`]).
    changed: u64,
}

impl ConnHistory {
    fn push(&mut self, t: u32, q: u64) {
        let q = u32::try_from(q).unwrap_or(u32::MAX);
        if self.recent.is_full() {
            self.recent.pop_front();
        }
        self.recent.push_back((t, q));
        self.peaks.push((t, q));
    }

    /// Drops the samples taken more than `window` milliseconds before `now`.
    fn expire(&mut self, now: u32, window: u32) {
        let old = |&(ft, _): &Sample| now.wrapping_sub(ft) > window;
        while self.recent.front().is_some_and(old) {
            self.recent.pop_front();
        }
        self.peaks.expire(old);
        self.max = self.peaks.front().map_or(0, |&(_, q)| q);
    }

    /// The largest Send-Q in the window.
    fn max(&self) -> u64 {
        u64::from(self.max)
    }
}

/// Send-Q samples a row carries for its sparkline (the widest sparkline drawn is 20 cells).
pub(crate) const TREND_SAMPLES: usize = 24;

/// Send-Q history per connection. Feed it every socket sample.
///
/// Each connection has a number (its place in `conns`, used again once it is gone) and the
/// indexes hold only that number, found by the endpoints it points at: a map keyed by the
/// endpoints held each twice, and rebuilding string-keyed maps each second was a good part of
/// the sockets' cost at thousands of connections.
#[derive(Debug, Clone)]
pub(crate) struct SocketHistory {
    window: Duration,
    conns: Vec<Option<Conn>>,
    /// The numbers of `conns` free for the next new connection.
    free: Vec<u32>,
    /// Local and remote end → connection.
    by_ends: HashTable<u32>,
    /// The connections of the latest sample by remote end (`plain_host`, port), and by remote
    /// port: what sessions are joined by (`onstat -g ntt`'s client address). Several may share
    /// a key.
    by_remote: HashTable<u32>,
    by_port: HashTable<u32>,
    /// The connections in the latest sample, by number.
    live: Vec<u32>,
    /// The connections whose `changed` is the latest sample (some more than once): a build
    /// that follows the one of the sample before reads these, not every connection.
    touched: Vec<u32>,
    /// Per place in the latest sample's sockets, its connection's number (`NONE` for a socket
    /// not kept): the next sample's socket in the same place is most often the same
    /// connection, found without hashing its endpoints.
    places: Vec<u32>,
    places_next: Vec<u32>,
    latest: Option<Duration>,
    next_seq: u64,
    /// Connections put into or taken out of `by_remote` and `by_port`: while it stays, the
    /// indexes hold the same connections and a join through them finds what it found.
    joins: u64,
    /// Samples taken: a connection's `changed` is one of these.
    samples: u64,
    id: HistoryId,
}

#[derive(Debug, Clone)]
struct Conn {
    local: Endpoint,
    remote: Endpoint,
    h: ConnHistory,
    /// In `by_remote` and `by_port` (it was in the latest sample).
    joined: bool,
    /// Its place in the sockets of the sample it was last in.
    place: u32,
}

impl Conn {
    /// Whether socket `s` is this connection: the remote port first, where connections to
    /// one listener differ most, so another connection is told at its first comparison.
    fn is(&self, s: &Socket) -> bool {
        self.remote.port == s.remote.port
            && self.remote.host == s.remote.host
            && self.local.port == s.local.port
            && self.local.host == s.local.host
    }
}

/// A history's own number: a new history and every copy of one get another, so rows kept from
/// one are never taken for another's.
#[derive(Debug)]
struct HistoryId(u64);

static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl HistoryId {
    fn new() -> Self {
        HistoryId(next_id())
    }
}

impl Clone for HistoryId {
    fn clone(&self) -> Self {
        HistoryId::new()
    }
}

fn hash_ends(local: &Endpoint, remote: &Endpoint) -> u64 {
    FxBuildHasher.hash_one((local, remote))
}

fn hash_remote(host: &str, port: &str) -> u64 {
    FxBuildHasher.hash_one((plain_host(host), port))
}

fn hash_port(port: &str) -> u64 {
    FxBuildHasher.hash_one(port)
}

/// A socket table's host with the IPv4-mapped prefix of `/proc/net/tcp6` taken off, so
/// `::ffff:10.1.2.3` compares equal to `onstat -g ntt`'s `10.1.2.3`.
pub(crate) fn plain_host(host: &str) -> &str {
    host.strip_prefix("::ffff:").unwrap_or(host)
}

/// One row of the Sockets pane.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct SocketRow {
    pub local: Endpoint,
    pub remote: Endpoint,
    pub state: Option<TcpState>,
    pub send_q: u64,
    pub recv_q: u64,
    pub max_send_q: u64,
    /// Send-Q per sample over the window, oldest first.
    pub trend: Vec<u64>,
    /// Seconds its Send-Q has held bytes, from the first of the samples in a row that saw
    /// bytes in it to the latest (0 when only the latest did); `None` when it is empty.
    pub queued_for_s: Option<f64>,
    /// The session on this connection (joined through `onstat -g ntt`), when known.
    pub sessid: Option<crate::ids::Sid>,
    pub user: Option<compact_str::CompactString>,
}

/// Which rows a snapshot's `sockets` are: the build that made them (0: none). Not data: two
/// snapshots are equal whatever their rows' build was.
#[derive(Debug, Clone, Copy, Default)]
pub struct RowsTag(pub(crate) u64);

impl PartialEq for RowsTag {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// What the last rows built from a history were, so the next build keeps the rows of the
/// connections that did not change ([`SocketHistory::rows_kept`]).
#[derive(Debug, Default)]
pub(crate) struct RowsKept {
    history: u64,
    /// The history's sample count when they were built.
    sample: u64,
    tag: u64,
    /// Per row, its connection: number and order of appearance (a number is used again).
    rows: Vec<(u32, u64)>,
    /// Per connection number, its row (checked against `rows`).
    pos: Vec<u32>,
    /// The rows' order keys, in the rows' order (the next build starts from them), and room
    /// for the next build: the keys that moved, whether a connection kept its key, where each
    /// new row comes from, where each old row goes.
    order: Vec<Key>,
    moved: Vec<Key>,
    next: Vec<Key>,
    still: Vec<bool>,
    from: Vec<u32>,
    dest: Vec<u32>,
    /// Rows made or refreshed by the last build (the others were kept as they were).
    pub(crate) refreshed: usize,
    /// The sessions' connections, for the join of the next build.
    pub(crate) join: JoinKept,
}

impl RowsKept {
    /// The tag of the rows last built.
    pub(crate) fn tag(&self) -> RowsTag {
        RowsTag(self.tag)
    }

    /// The row of connection `i` in the rows last built.
    pub(crate) fn row_of(&self, i: u32) -> Option<usize> {
        self.pos.get(i as usize).map(|&p| p as usize)
    }

    /// The last in the rows' order of the rows of connections `conns`.
    pub(crate) fn last_row_of(&self, conns: &[u32]) -> Option<usize> {
        conns.iter().filter_map(|&i| self.row_of(i)).max()
    }
}

/// The connections each session's client address found in a history's join indexes
/// (`SocketHistory::remote_conns`, `port_conn`), for one `onstat -g ntt` read: found again only
/// when the read or the indexes change (the read every 10 s, the indexes when a connection
/// comes or goes), while the rows they are in move every second.
#[derive(Debug, Default)]
pub(crate) struct JoinKept {
    /// The read they are of (held, so that it is never taken for another).
    pub(crate) ntt: Option<crate::parsers::Parsed>,
    /// `SocketHistory::joined_as` when they were found.
    pub(crate) joined_as: (u64, u64),
    /// Per session with a client address, in the read's order: its id, the range in `conns`
    /// of the connections with its remote end, and the one connection with its remote port
    /// (`NONE`: none or several, or a host given as an address).
    pub(crate) sessions: Vec<(crate::ids::Sid, u32, u32, u32)>,
    pub(crate) conns: Vec<u32>,
}

pub(crate) const NONE: u32 = u32::MAX;

/// A row's place in the pane's order: Send-Q, the window's largest Send-Q, order of first
/// appearance, and its connection's number (not compared: the order of appearance is unique).
type Key = (u64, u64, u64, u32);

/// The pane's order: largest Send-Q first, then the largest in the window, then the first seen.
fn by_pane_order(a: &Key, b: &Key) -> std::cmp::Ordering {
    b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2))
}

/// Moves the row at each place `j` of `rows` to place `dest[j]` (`dest` a permutation of the
/// places, left as the identity). Each cycle is followed with one row in hand, so each row is
/// read and written once: swapping along a cycle moved the row at its start at every step, and
/// the rows are large (thousands of them move when one climbs to the top of the pane).
fn permute(rows: &mut [SocketRow], dest: &mut [u32]) {
    for start in 0..rows.len().min(dest.len()) {
        let mut d = dest[start] as usize;
        dest[start] = start as u32;
        if d == start || d >= rows.len() {
            continue;
        }
        let mut hand = std::mem::take(&mut rows[start]);
        while d != start {
            hand = std::mem::replace(&mut rows[d], hand);
            let next = dest[d] as usize;
            dest[d] = d as u32;
            if next >= rows.len() {
                // Not a permutation (never so): the row in hand stays at the cycle's start.
                break;
            }
            d = next;
        }
        rows[start] = hand;
    }
}

/// Which sockets belong to the instance: those whose local port is a listener port (the server
/// end of a client connection). With no known port, every TCP connection is shown.
pub(crate) fn is_client_connection(s: &Socket, ports: &[u16]) -> bool {
    if s.state == Some(TcpState::Listen) || !s.proto.starts_with("tcp") {
        return false;
    }
    ports.is_empty() || s.local.port_num().is_some_and(|p| ports.contains(&p))
}

impl SocketHistory {
    pub(crate) fn new(window: Duration) -> Self {
        SocketHistory {
            window,
            conns: Vec::new(),
            free: Vec::new(),
            by_ends: HashTable::new(),
            by_remote: HashTable::new(),
            by_port: HashTable::new(),
            live: Vec::new(),
            touched: Vec::new(),
            places: Vec::new(),
            places_next: Vec::new(),
            latest: None,
            next_seq: 0,
            joins: 0,
            samples: 0,
            id: HistoryId::new(),
        }
    }

    fn conn(&self, i: u32) -> Option<&Conn> {
        self.conns.get(i as usize).and_then(Option::as_ref)
    }

    /// The number of the connection `local` → `remote`, a new one if it is not known; looked
    /// for first at `guess` (a number), then by its endpoints.
    fn number(&mut self, s: &Socket, guess: u32, now: u64) -> u32 {
        if self.conn(guess).is_some_and(|c| c.is(s)) {
            return guess;
        }
        let hash = hash_ends(&s.local, &s.remote);
        let conns = &self.conns;
        let same = |i: &u32| {
            conns
                .get(*i as usize)
                .and_then(Option::as_ref)
                .is_some_and(|c| c.is(s))
        };
        if let Some(&i) = self.by_ends.find(hash, same) {
            return i;
        }
        self.next_seq += 1;
        let conn = Conn {
            local: s.local.clone(),
            remote: s.remote.clone(),
            h: ConnHistory {
                recent: Ring::new(),
                peaks: Peaks::Held(Ring::new()),
                send_q: s.send_q,
                recv_q: s.recv_q,
                state: s.state,
                last_seen: now,
                queued_since: None,
                seq: self.next_seq,
                max: 0,
                changed: self.samples,
            },
            joined: false,
            place: NONE,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.conns[i as usize] = Some(conn);
                i
            }
            None => {
                self.conns.push(Some(conn));
                u32::try_from(self.conns.len() - 1).unwrap_or(NONE)
            }
        };
        self.touched.push(i);
        let conns = &self.conns;
        self.by_ends.insert_unique(hash, i, |j| {
            conns
                .get(*j as usize)
                .and_then(Option::as_ref)
                .map_or(0, |c| hash_ends(&c.local, &c.remote))
        });
        i
    }

    /// Takes one sample of the socket table(s) at `t`; only the instance's connections are kept.
    pub(crate) fn observe<'a>(
        &mut self,
        sockets: impl IntoIterator<Item = &'a Socket>,
        t: Duration,
        ports: &[u16],
    ) {
        let now = nanos(t);
        let now_ms = millis(t);
        let window = u32::try_from(self.window.as_millis())
            .unwrap_or(u32::MAX)
            .min(MAX_WINDOW_MS);
        self.samples += 1;
        let sample = self.samples;
        let latest = self.latest.map(nanos);
        self.touched.clear();
        self.places_next.clear();
        // How far the last sample's sockets moved: the place of the last connection not found
        // where it was, less its place now (rows inserted or removed before it).
        let mut shift = 0i64;
        for (place, s) in sockets.into_iter().enumerate() {
            let place = u32::try_from(place).unwrap_or(NONE);
            if !is_client_connection(s, ports) {
                self.places_next.push(NONE);
                continue;
            }
            let guess = usize::try_from(i64::from(place) + shift)
                .ok()
                .and_then(|g| self.places.get(g).copied())
                .unwrap_or(NONE);
            let i = self.number(s, guess, now);
            self.places_next.push(i);
            let Some(c) = self.conns.get_mut(i as usize).and_then(Option::as_mut) else {
                continue;
            };
            if i != guess && c.place != NONE {
                shift = i64::from(c.place) - i64::from(place);
            }
            c.place = place;
            let h = &mut c.h;
            if h.last_seen == now && h.recent.len() > 0 {
                continue;
            }
            let was = (h.send_q, h.recv_q, h.state, h.max);
            h.push(now_ms, s.send_q);
            // Its old samples dropped now, while its samples are in the cache (a second pass
            // over 5,000 connections found each evicted).
            h.expire(now_ms, window);
            // Bytes seen in the sample before this one (of the connection as it was: a
            // connection missing from a sample starts again).
            let queued_before = h.send_q > 0 && latest == Some(h.last_seen);
            h.queued_since = match (s.send_q > 0, queued_before) {
                (false, _) => None,
                (true, true) => h.queued_since.or(Some(now)),
                (true, false) => Some(now),
            };
            // Only what changes between samples (the endpoints are the key).
            h.send_q = s.send_q;
            h.recv_q = s.recv_q;
            h.state = s.state;
            h.last_seen = now;
            // Its row changes when a field of it does, and every sample while its window
            // holds bytes (the trend moves, and so does the time bytes have been queued).
            if was != (h.send_q, h.recv_q, h.state, h.max) || h.max > 0 {
                h.changed = sample;
                self.touched.push(i);
            }
        }
        std::mem::swap(&mut self.places, &mut self.places_next);
        let horizon = nanos(t.saturating_sub(self.window));
        self.live.clear();
        for i in 0..self.conns.len() {
            let Some(c) = self.conns[i].as_mut() else {
                continue;
            };
            let number = u32::try_from(i).unwrap_or(NONE);
            let seen = c.h.last_seen == now;
            if !seen {
                // Those in this sample were expired as they were pushed.
                c.h.expire(now_ms, window);
                // Out of the rows: back in them, it is a row made anew.
                c.h.changed = sample;
                self.touched.push(number);
            }
            let gone = c.h.last_seen < horizon;
            let joined = c.joined;
            c.joined = seen;
            if seen {
                self.live.push(number);
            }
            if seen != joined {
                self.join(number, seen);
            }
            if gone {
                if let Some(c) = self.conns[i].take() {
                    let hash = hash_ends(&c.local, &c.remote);
                    if let Ok(e) = self.by_ends.find_entry(hash, |j| *j == number) {
                        e.remove();
                    }
                }
                self.free.push(number);
            }
        }
        self.latest = Some(t);
    }

    /// Puts connection `i` into the indexes sessions are joined by (`on`), or takes it out.
    fn join(&mut self, i: u32, on: bool) {
        self.joins += 1;
        let Some(c) = self.conn(i) else { return };
        let remote = hash_remote(&c.remote.host, &c.remote.port);
        let port = hash_port(&c.remote.port);
        let conns = &self.conns;
        let rehash = |by: fn(&Endpoint) -> u64| {
            move |j: &u32| {
                conns
                    .get(*j as usize)
                    .and_then(Option::as_ref)
                    .map_or(0, |c| by(&c.remote))
            }
        };
        if on {
            self.by_remote.insert_unique(
                remote,
                i,
                rehash(|e: &Endpoint| hash_remote(&e.host, &e.port)),
            );
            self.by_port
                .insert_unique(port, i, rehash(|e: &Endpoint| hash_port(&e.port)));
        } else {
            if let Ok(e) = self.by_remote.find_entry(remote, |j| *j == i) {
                e.remove();
            }
            if let Ok(e) = self.by_port.find_entry(port, |j| *j == i) {
                e.remove();
            }
        }
    }

    /// Connections present in the latest sample, largest Send-Q first.
    #[cfg(test)]
    pub(crate) fn rows(&self) -> Vec<SocketRow> {
        let mut rows = Vec::new();
        self.rows_into(&mut rows);
        rows
    }

    /// [`Self::rows`] into `out` (emptied first), every row made anew.
    #[cfg(test)]
    pub(crate) fn rows_into(&self, out: &mut Vec<SocketRow>) {
        self.rows_kept(&mut RowsKept::default(), out, RowsTag(0));
    }

    /// The rows of the connections in the latest sample, largest Send-Q first (then the
    /// largest in the window, then the first seen), into `rows`. When `rows` are the ones
    /// `kept` says were built last (`tag`), the row of a connection that did not change since
    /// is kept as it was and the others are moved into place and refreshed; else every row is
    /// made anew. Every row's session and user are left unknown (the joins fill them).
    /// Returns the new rows' tag.
    pub(crate) fn rows_kept(
        &self,
        kept: &mut RowsKept,
        rows: &mut Vec<SocketRow>,
        tag: RowsTag,
    ) -> RowsTag {
        let valid = tag.0 != 0
            && tag.0 == kept.tag
            && kept.history == self.id.0
            && rows.len() == kept.rows.len();
        if !valid {
            rows.clear();
            kept.rows.clear();
        }
        let latest = self.latest.map_or(0, nanos);
        let quick = self.order_into(kept, valid);
        let order = &kept.order;
        // Where each new row comes from (the old row of the same connection) and where each
        // old row goes: a permutation of the rows in place, so that the rows kept are moved,
        // not made again, and no second vector of rows is held.
        let (n, m) = (order.len(), rows.len());
        let total = n.max(m);
        kept.from.clear();
        kept.from.resize(n, NONE);
        kept.dest.clear();
        kept.dest.resize(total, NONE);
        for (new, &(_, _, seq, i)) in order.iter().enumerate() {
            let old = kept.pos.get(i as usize).copied().unwrap_or(NONE) as usize;
            if old < m && kept.rows.get(old) == Some(&(i, seq)) {
                kept.from[new] = old as u32;
                kept.dest[old] = new as u32;
            }
        }
        // The rows of connections gone, and blank ones for rows added, fill the places left.
        rows.resize_with(total, SocketRow::default);
        let mut free = (0..total).filter(|&p| p >= n || kept.from[p] == NONE);
        for d in kept.dest.iter_mut() {
            if *d == NONE {
                *d = free.next().map_or(NONE, |p| p as u32);
            }
        }
        permute(rows, &mut kept.dest);
        kept.refreshed = 0;
        for (p, &(_, _, _, i)) in order.iter().enumerate() {
            let row = &mut rows[p];
            row.sessid = None;
            row.user = None;
            // Its connection is not read when the sample said it did not change.
            let still = quick && kept.still.get(i as usize).copied().unwrap_or(false);
            if kept.from[p] != NONE && still {
                continue;
            }
            let Some(c) = self.conn(i) else { continue };
            if kept.from[p] == NONE {
                // The trend's room of the row that was here (gone, or a blank) is kept.
                let trend = std::mem::take(&mut row.trend);
                *row = SocketRow {
                    local: c.local.clone(),
                    remote: c.remote.clone(),
                    trend,
                    ..SocketRow::default()
                };
                c.h.fill(row, latest);
                kept.refreshed += 1;
            } else if c.h.changed > kept.sample {
                c.h.fill(row, latest);
                kept.refreshed += 1;
            }
        }
        rows.truncate(n);
        kept.rows.clear();
        kept.rows
            .extend(order.iter().map(|&(_, _, seq, i)| (i, seq)));
        kept.pos.resize(self.conns.len(), NONE);
        for (p, &(_, _, _, i)) in order.iter().enumerate() {
            if let Some(slot) = kept.pos.get_mut(i as usize) {
                *slot = p as u32;
            }
        }
        kept.history = self.id.0;
        kept.sample = self.samples;
        kept.tag = next_id();
        RowsTag(kept.tag)
    }

    /// The order of the rows of the latest sample into `kept.order`. Sorting every connection
    /// each second was most of the rows' cost at 5,000 of them, though few move: the keys of
    /// the last build (`kept.order`, when `last` says they are this history's) that are
    /// unchanged are still in order, so only the others are sorted, then merged in. The order
    /// is total (the order of appearance is unique), so this is the order a full sort gives.
    /// When the last build was of the sample before, the connections whose row did not change
    /// are told by the sample's changed ones, without reading every connection; true then,
    /// and `kept.still` says which rows did not change at all.
    fn order_into(&self, kept: &mut RowsKept, last: bool) -> bool {
        let key = |i: u32| {
            let h = &self.conn(i)?.h;
            Some((h.send_q, u64::from(h.max), h.seq, i))
        };
        let mut still = std::mem::take(&mut kept.still);
        still.clear();
        still.resize(self.conns.len(), false);
        // The last build's rows whose connection is in this sample with the same key, in
        // their order.
        let mut stayed = std::mem::take(&mut kept.next);
        stayed.clear();
        let quick = last && kept.sample.checked_add(1) == Some(self.samples);
        if quick {
            // The last rows are the connections of the sample before; one that left since,
            // or whose queues, state or window moved, is among the changed ones.
            for k in &kept.order {
                if let Some(s) = still.get_mut(k.3 as usize) {
                    *s = true;
                }
            }
            for &i in &self.touched {
                if let Some(s) = still.get_mut(i as usize) {
                    *s = false;
                }
            }
            stayed.extend(
                kept.order
                    .iter()
                    .filter(|k| still.get(k.3 as usize).copied().unwrap_or(false)),
            );
        } else if last {
            for &k in &kept.order {
                let i = k.3;
                let live = self.conn(i).is_some_and(|c| c.joined);
                if live && key(i) == Some(k) {
                    stayed.push(k);
                    still[i as usize] = true;
                }
            }
        }
        let moved = &mut kept.moved;
        moved.clear();
        moved.extend(
            self.live
                .iter()
                .filter(|&&i| !still.get(i as usize).copied().unwrap_or(false))
                .filter_map(|&i| key(i)),
        );
        moved.sort_unstable_by(by_pane_order);
        let order = &mut kept.order;
        order.clear();
        let (mut a, mut b) = (stayed.iter().peekable(), moved.iter().peekable());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if by_pane_order(x, y).is_le() => a.next(),
                (Some(_), None) => a.next(),
                (_, Some(_)) => b.next(),
                (None, None) => break,
            };
            order.extend(next.copied());
        }
        kept.next = stayed;
        kept.still = still;
        quick
    }

    /// The connections of the latest sample whose remote end is `host`:`port`, onto `out`.
    pub(crate) fn remote_conns(&self, host: &str, port: &str, out: &mut Vec<u32>) {
        let host = plain_host(host);
        out.extend(
            self.by_remote
                .iter_hash(hash_remote(host, port))
                .filter(|&&i| {
                    self.conn(i).is_some_and(|c| {
                        plain_host(&c.remote.host) == host && c.remote.port == port
                    })
                }),
        );
    }

    /// The one connection of the latest sample whose remote port is `port`; `None` when
    /// several are.
    pub(crate) fn port_conn(&self, port: &str) -> Option<u32> {
        let mut hits = self
            .by_port
            .iter_hash(hash_port(port))
            .filter(|&&i| self.conn(i).is_some_and(|c| c.remote.port == port));
        let first = hits.next()?;
        if hits.next().is_some() {
            return None;
        }
        Some(*first)
    }

    /// What the join indexes hold: the same pair, the same connections in them.
    pub(crate) fn joined_as(&self) -> (u64, u64) {
        (self.id.0, self.joins)
    }
}

impl ConnHistory {
    /// Writes what a row shows of this connection (all but its endpoints and session) at
    /// `latest`, into `row`, keeping the room of its trend.
    fn fill(&self, row: &mut SocketRow, latest: u64) {
        let max = self.max();
        row.state = self.state;
        row.send_q = self.send_q;
        row.recv_q = self.recv_q;
        row.max_send_q = max;
        row.trend.clear();
        // A connection that never queued anything in the window draws a blank sparkline: no
        // samples needed (most of thousands of connections).
        if max > 0 {
            let (a, b) = self.recent.as_slices();
            row.trend.extend(a.iter().map(|&(_, q)| u64::from(q)));
            row.trend.extend(b.iter().map(|&(_, q)| u64::from(q)));
        }
        row.queued_for_s = self
            .queued_since
            .map(|q| latest.saturating_sub(q) as f64 / 1e9);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn socket(remote_port: u16, send_q: u64) -> Socket {
        Socket {
            proto: "tcp".into(),
            recv_q: 0,
            send_q,
            local: Endpoint::new("10.0.0.1", "9088"),
            remote: Endpoint::new("10.0.0.2", &remote_port.to_string()),
            state: Some(TcpState::Established),
            process: None,
        }
    }

    /// What the rows must say, from every sample kept: the window's maximum and the last
    /// TREND_SAMPLES samples in the window.
    fn naive(samples: &[(Duration, u64)], latest: Duration, window: Duration) -> (u64, Vec<u64>) {
        let horizon = latest.saturating_sub(window);
        let inside: Vec<u64> = samples
            .iter()
            .filter(|(t, _)| *t >= horizon)
            .map(|(_, q)| *q)
            .collect();
        let max = inside.iter().copied().max().unwrap_or(0);
        let trend = if max == 0 {
            Vec::new()
        } else {
            inside[inside.len().saturating_sub(TREND_SAMPLES)..].to_vec()
        };
        (max, trend)
    }

    proptest! {
        /// The sliding-window maximum and the bounded trend say what keeping every sample
        /// would, for any queue sizes and any gaps between samples.
        #[test]
        fn rows_match_every_sample_kept(
            steps in proptest::collection::vec((1u64..5_000, 0u64..4), 1..200),
        ) {
            let window = Duration::from_secs(60);
            let mut h = SocketHistory::new(window);
            let mut t = Duration::ZERO;
            let mut kept = Vec::new();
            for (gap_ms, q) in steps {
                t += Duration::from_millis(gap_ms * 10);
                // Few distinct values, so equal queues (ties) are common.
                let q = q * 1000;
                h.observe([&socket(40000, q)], t, &[]);
                kept.push((t, q));
                let rows = h.rows();
                prop_assert_eq!(rows.len(), 1);
                let (max, trend) = naive(&kept, t, window);
                prop_assert_eq!(rows[0].max_send_q, max);
                prop_assert_eq!(&rows[0].trend, &trend);
            }
        }
    }

    /// Bytes in a Send-Q are dated from the first of the samples in a row that saw them: a
    /// reply in flight shows in one sample (0 s), a client that does not read holds them
    /// sample after sample; a connection missing from a sample starts again.
    #[test]
    fn a_send_q_is_dated_from_the_first_sample_in_a_row_that_held_bytes() {
        let mut h = SocketHistory::new(Duration::from_secs(60));
        let at = Duration::from_secs;
        let queued = |h: &SocketHistory| h.rows().first().and_then(|r| r.queued_for_s);
        h.observe([&socket(40000, 0)], at(1), &[]);
        assert_eq!(queued(&h), None);
        h.observe([&socket(40000, 300)], at(2), &[]);
        assert_eq!(queued(&h), Some(0.0));
        h.observe([&socket(40000, 0)], at(3), &[]);
        assert_eq!(queued(&h), None);
        for s in 4..=7 {
            h.observe([&socket(40000, 900)], at(s), &[]);
        }
        assert_eq!(queued(&h), Some(3.0));
        h.observe([&socket(40001, 0)], at(8), &[]);
        h.observe([&socket(40000, 900)], at(9), &[]);
        assert_eq!(queued(&h), Some(0.0));
    }

    #[test]
    fn a_connection_keeps_a_sparklines_worth_of_samples_not_the_window() {
        let mut h = SocketHistory::new(Duration::from_secs(60));
        for i in 0..600u64 {
            // Rising then falling: the worst case for the peaks kept is a falling queue.
            let q = if i < 300 { i } else { 600 - i };
            h.observe([&socket(40000, q)], Duration::from_secs(i), &[]);
        }
        let conn = h.conns.iter().flatten().map(|c| &c.h).next();
        let conn = conn.expect("the connection is kept");
        assert_eq!(conn.recent.len(), TREND_SAMPLES);
        // A falling queue keeps every sample of the window as a possible maximum: 61 at most.
        assert!(conn.peaks.len() <= 61, "{} peaks", conn.peaks.len());
        // The window holds seconds 539..=599; the queue was 61 at 539.
        assert_eq!(h.rows()[0].max_send_q, 61);
    }

    /// A sample is 8 bytes; its time wraps every 49 days of watching, and the window still
    /// holds what it should across the wrap.
    #[test]
    fn the_window_holds_across_the_wrap_of_a_samples_time() {
        assert_eq!(std::mem::size_of::<Sample>(), 8);
        let mut h = SocketHistory::new(Duration::from_secs(60));
        let t0 = Duration::from_millis((1u64 << 32) - 30_000);
        h.observe([&socket(40000, 5_000)], t0, &[]);
        for i in 1..=59u64 {
            h.observe([&socket(40000, 0)], t0 + Duration::from_secs(i), &[]);
        }
        // 29 s past the wrap, the 5,000 bytes of 59 s before are still in the window.
        assert_eq!(h.rows()[0].max_send_q, 5_000);
        assert_eq!(h.rows()[0].trend.len(), TREND_SAMPLES);
        h.observe([&socket(40000, 0)], t0 + Duration::from_secs(61), &[]);
        assert_eq!(h.rows()[0].max_send_q, 0);
        // A queue past what 32 bits hold (never seen: the kernel's is an int) reads as the
        // most they hold, not as a wrapped small number.
        h.observe(
            [&socket(40000, u64::MAX)],
            t0 + Duration::from_secs(62),
            &[],
        );
        assert_eq!(h.rows()[0].max_send_q, u64::from(u32::MAX));
    }

    #[test]
    fn a_quiet_connection_holds_one_peak_and_draws_no_sparkline() {
        let mut h = SocketHistory::new(Duration::from_secs(60));
        for i in 0..120u64 {
            h.observe([&socket(40000, 0)], Duration::from_secs(i), &[]);
        }
        let conn = h.conns.iter().flatten().map(|c| &c.h).next();
        assert_eq!(conn.map(|c| c.peaks.len()), Some(1));
        let rows = h.rows();
        assert_eq!(rows[0].max_send_q, 0);
        assert!(rows[0].trend.is_empty());
    }

    /// Rows built by keeping the last build's, next to rows made anew each time: they must be
    /// equal at every step.
    struct Kept {
        kept: RowsKept,
        rows: Vec<SocketRow>,
        tag: RowsTag,
    }

    impl Kept {
        fn new() -> Self {
            Kept {
                kept: RowsKept::default(),
                rows: Vec::new(),
                tag: RowsTag(0),
            }
        }

        /// Builds from `h` with the rows of the last build handed back; returns how many rows
        /// were made or refreshed.
        fn build(&mut self, h: &SocketHistory) -> usize {
            self.tag = h.rows_kept(&mut self.kept, &mut self.rows, self.tag);
            assert_eq!(self.rows, h.rows(), "kept rows equal rows made anew");
            self.kept.refreshed
        }
    }

    fn ports(rows: &[SocketRow]) -> Vec<(String, u64)> {
        rows.iter()
            .map(|r| (r.remote.port.to_string(), r.send_q))
            .collect()
    }

    #[test]
    fn only_a_connection_whose_queue_changed_is_refreshed() {
        let mut h = SocketHistory::new(Duration::from_secs(60));
        let mut k = Kept::new();
        let at = Duration::from_secs;
        let quiet: Vec<Socket> = (1..=5).map(|p| socket(40000 + p, 0)).collect();
        h.observe(&quiet, at(1), &[]);
        assert_eq!(k.build(&h), 5, "the first build makes every row");
        h.observe(&quiet, at(2), &[]);
        assert_eq!(k.build(&h), 0, "nothing changed: every row kept");
        let mut busy = quiet.clone();
        busy[2].send_q = 7_000;
        h.observe(&busy, at(3), &[]);
        assert_eq!(k.build(&h), 1, "one queue changed");
        assert_eq!(ports(&k.rows)[0], ("40003".to_string(), 7_000));
        // Drained, the queue's window still holds its bytes: its row moves each second (the
        // trend), the others are kept.
        h.observe(&quiet, at(4), &[]);
        assert_eq!(k.build(&h), 1);
        assert_eq!(k.rows[0].max_send_q, 7_000);
        // A receive queue alone changes a row too.
        let mut recv = quiet.clone();
        recv[4].recv_q = 12;
        h.observe(&recv, at(5), &[]);
        assert_eq!(k.build(&h), 2);
    }

    #[test]
    fn a_connection_gone_a_new_one_and_one_back_after_going() {
        let mut h = SocketHistory::new(Duration::from_secs(60));
        let mut k = Kept::new();
        let at = Duration::from_secs;
        h.observe(
            &[socket(40001, 0), socket(40002, 0), socket(40003, 0)],
            at(1),
            &[],
        );
        k.build(&h);
        // 40002 gone, 40004 new (with bytes: it goes first).
        h.observe(
            &[socket(40001, 0), socket(40003, 0), socket(40004, 500)],
            at(2),
            &[],
        );
        assert_eq!(k.build(&h), 1, "only the new connection's row is made");
        assert_eq!(
            ports(&k.rows),
            [
                ("40004".into(), 500),
                ("40001".into(), 0),
                ("40003".into(), 0)
            ]
        );
        // 40002 back, within the window: its history goes on, its row is made again.
        h.observe(
            &[
                socket(40001, 0),
                socket(40002, 0),
                socket(40003, 0),
                socket(40004, 500),
            ],
            at(3),
            &[],
        );
        assert_eq!(k.build(&h), 2, "40002 back, 40004 queued");
        // Gone past the window, its number is used again by a new connection: the rows never
        // take one for the other.
        let mut t = 3;
        for _ in 0..70 {
            t += 1;
            h.observe(&[socket(40001, 0)], at(t), &[]);
            k.build(&h);
        }
        assert_eq!(h.conns.iter().flatten().count(), 1);
        h.observe(
            &[
                socket(40001, 0),
                socket(40005, 0),
                socket(40006, 9),
                socket(40002, 0),
            ],
            at(t + 1),
            &[],
        );
        assert_eq!(k.build(&h), 3);
    }

    #[test]
    fn the_windows_maximum_sliding_out_refreshes_the_row() {
        let mut h = SocketHistory::new(Duration::from_secs(60));
        let mut k = Kept::new();
        let at = Duration::from_secs;
        h.observe(&[socket(40001, 9_000), socket(40002, 0)], at(0), &[]);
        k.build(&h);
        for s in 1..=60 {
            h.observe(&[socket(40001, 0), socket(40002, 0)], at(s), &[]);
            k.build(&h);
            assert_eq!(k.rows[0].max_send_q, 9_000, "at {s}s");
        }
        h.observe(&[socket(40001, 0), socket(40002, 0)], at(61), &[]);
        assert_eq!(k.build(&h), 1, "the maximum left the window");
        assert_eq!(k.rows[0].max_send_q, 0);
        assert!(k.rows[0].trend.is_empty());
        h.observe(&[socket(40001, 0), socket(40002, 0)], at(62), &[]);
        assert_eq!(k.build(&h), 0, "quiet again: kept");
    }

    #[test]
    fn rows_from_another_build_or_history_are_not_kept() {
        let mut h = SocketHistory::new(Duration::from_secs(60));
        let at = Duration::from_secs;
        h.observe(&[socket(40001, 0), socket(40002, 0)], at(1), &[]);
        let mut k = Kept::new();
        k.build(&h);
        let stale = k.rows.clone();
        let stale_tag = k.tag;
        h.observe(&[socket(40001, 0), socket(40002, 300)], at(2), &[]);
        k.build(&h);
        h.observe(&[socket(40001, 0), socket(40002, 300)], at(3), &[]);
        // The rows of the build before last handed back: made anew, not trusted.
        let mut rows = stale.clone();
        h.rows_kept(&mut k.kept, &mut rows, stale_tag);
        assert_eq!(rows, h.rows());
        assert_eq!(k.kept.refreshed, 2);
        // A copy of the history (a store cloned) is another history.
        let copy = h.clone();
        let tag = h.rows_kept(&mut k.kept, &mut rows, RowsTag(0));
        assert_eq!(k.kept.refreshed, 2, "no tag: every row");
        h.observe(&[socket(40001, 0), socket(40002, 300)], at(4), &[]);
        let tag = h.rows_kept(&mut k.kept, &mut rows, tag);
        assert_eq!(k.kept.refreshed, 1, "the queued row only");
        copy.rows_kept(&mut k.kept, &mut rows, tag);
        assert_eq!(k.kept.refreshed, 2, "another history: every row");
        assert_eq!(rows, copy.rows());
    }

    proptest! {
        /// Built at every sample (so the rows are read from the sample's changed connections),
        /// over samples repeated unchanged for long stretches (the window slides under them),
        /// connections going and coming back, sockets listed in another order or twice: the
        /// rows equal rows made anew, and equal those of a history that finds every connection
        /// by its endpoints alone.
        #[test]
        fn rows_built_each_sample_equal_the_plain_ones(
            steps in proptest::collection::vec(
                (
                    proptest::collection::vec((0u16..10, 0u64..3, 0u64..2), 0..10),
                    1u64..30,
                    0u64..40,
                    0usize..4,
                ),
                1..40,
            ),
        ) {
            let window = Duration::from_secs(20);
            let mut h = SocketHistory::new(window);
            let mut plain = SocketHistory::new(window);
            let mut k = Kept::new();
            let mut t = Duration::ZERO;
            for (sockets, gap, repeats, turn) in steps {
                let mut sample: Vec<Socket> = sockets
                    .iter()
                    .map(|&(p, q, r)| {
                        let mut s = socket(40000 + p, q * 1000);
                        s.recv_q = r;
                        s
                    })
                    .collect();
                let n = sample.len().max(1);
                sample.rotate_left(turn % n);
                t += Duration::from_secs(gap);
                for _ in 0..=repeats {
                    t += Duration::from_secs(1);
                    h.observe(&sample, t, &[]);
                    plain.places.clear();
                    plain.observe(&sample, t, &[]);
                    k.build(&h);
                    prop_assert_eq!(&k.rows, &plain.rows());
                }
            }
        }
    }

    proptest! {
        /// Over random samples of a few connections (queues changing, connections going,
        /// coming and coming back, gaps longer than the window), rows kept from the last
        /// build equal rows made anew, whether or not a build happens at every sample.
        #[test]
        fn kept_rows_equal_rows_made_anew(
            steps in proptest::collection::vec(
                (proptest::collection::vec((0u16..12, 0u64..3, 0u64..2), 0..10), 1u64..40, any::<bool>()),
                1..80,
            ),
        ) {
            let mut h = SocketHistory::new(Duration::from_secs(60));
            let mut k = Kept::new();
            let mut t = Duration::ZERO;
            for (sockets, gap, build) in steps {
                t += Duration::from_secs(gap);
                let sample: Vec<Socket> = sockets
                    .iter()
                    .map(|&(p, q, r)| {
                        let mut s = socket(40000 + p, q * 1000);
                        s.recv_q = r;
                        s
                    })
                    .collect();
                h.observe(&sample, t, &[]);
                if build {
                    k.build(&h);
                }
            }
        }
    }

    /// Samples per connection as a plain list, kept while it is in the samples: what its
    /// row must say is read from these ([`naive`]).
    type Plain = std::collections::BTreeMap<u16, Vec<(Duration, u64)>>;

    /// The next queue of a connection: mostly falling (a run of peaks longer than a
    /// connection holds), now and then back up.
    fn next_queue(last: u64, step: u8) -> u64 {
        match step {
            0 => 40_000,
            1 => last,
            s => last.saturating_sub(u64::from(s) * 100),
        }
    }

    proptest! {
        /// Connections coming and going (numbers used again), queues falling sample after
        /// sample (their peaks held past what a connection holds in itself, then short again),
        /// samples a millisecond apart or farther apart than the window: every row says what
        /// keeping every sample says, the rows kept from build to build equal rows made anew,
        /// and no connection holds more peaks than its window has samples.
        #[test]
        fn rows_of_many_connections_match_every_sample_kept(
            steps in proptest::collection::vec(
                (
                    prop_oneof![1u64..1_500, 20_000u64..90_000],
                    proptest::collection::btree_map(0u16..8, 0u8..6, 0..8),
                ),
                1..160,
            ),
        ) {
            let window = Duration::from_secs(30);
            let mut h = SocketHistory::new(window);
            let mut k = Kept::new();
            let mut plain = Plain::new();
            let mut t = Duration::ZERO;
            for (gap_ms, present) in steps {
                t += Duration::from_millis(gap_ms);
                let mut sample = Vec::new();
                for (&port, &step) in &present {
                    let kept = plain.entry(port).or_default();
                    let q = next_queue(kept.last().map_or(0, |s| s.1), step);
                    kept.push((t, q));
                    sample.push(socket(40000 + port, q));
                }
                h.observe(&sample, t, &[]);
                k.build(&h);
                let rows = h.rows();
                prop_assert_eq!(rows.len(), present.len());
                for row in &rows {
                    let port: u16 = row.remote.port.parse().expect("a port") ;
                    let (max, trend) = naive(&plain[&(port - 40000)], t, window);
                    prop_assert_eq!(row.max_send_q, max);
                    prop_assert_eq!(&row.trend, &trend);
                }
                for c in h.conns.iter().flatten() {
                    let port: u16 = c.remote.port.parse().expect("a port");
                    let horizon = t.saturating_sub(window);
                    let inside = plain[&(port - 40000)].iter().filter(|s| s.0 >= horizon).count();
                    prop_assert!(c.h.peaks.len() <= inside.max(1));
                    prop_assert!(c.h.recent.len() <= inside.min(TREND_SAMPLES));
                }
                // A connection gone past the window starts again when it is back.
                let horizon = t.saturating_sub(window);
                plain.retain(|_, s| s.last().is_some_and(|l| l.0 >= horizon));
            }
        }
    }

    /// A queue falling sample after sample holds every sample as a peak: past what a
    /// connection holds in itself they go to the heap, and come back once few are left.
    #[test]
    fn a_long_falling_queue_spills_its_peaks_and_takes_them_back() {
        let mut h = SocketHistory::new(Duration::from_secs(60));
        let peaks =
            |h: &SocketHistory| h.conns.iter().flatten().map(|c| &c.h.peaks).next().cloned();
        for i in 0..20u64 {
            h.observe([&socket(40000, 20_000 - i)], Duration::from_secs(i), &[]);
        }
        assert!(matches!(peaks(&h), Some(Peaks::Spilt(d)) if d.len() == 20));
        assert_eq!(h.rows()[0].max_send_q, 20_000);
        // Quiet for longer than the window: one peak left, held again.
        for i in 20..100u64 {
            h.observe([&socket(40000, 0)], Duration::from_secs(i), &[]);
        }
        assert!(matches!(peaks(&h), Some(Peaks::Held(r)) if r.len() == 1));
        assert_eq!(h.rows()[0].max_send_q, 0);
    }

    /// Connections that share a remote port (clients on several hosts, or one client on two
    /// listeners), listed in another order each sample: the connection found at a socket's
    /// place of the sample before is taken only when all four of its ends are the socket's.
    #[test]
    fn connections_sharing_a_remote_port_are_told_apart_when_they_move() {
        let at = |local: &str, host: &str, send_q: u64| Socket {
            local: Endpoint::new("10.0.0.1", local),
            remote: Endpoint::new(host, "40000"),
            ..socket(40000, send_q)
        };
        let mut sample = vec![
            at("9088", "10.0.0.2", 100),
            at("9088", "10.0.0.3", 200),
            at("9089", "10.0.0.2", 300),
            at("9089", "10.0.0.3", 400),
        ];
        let mut h = SocketHistory::new(Duration::from_secs(60));
        let mut plain = SocketHistory::new(Duration::from_secs(60));
        let mut k = Kept::new();
        for s in 1..=8u64 {
            sample.rotate_left(1);
            for (j, x) in sample.iter_mut().enumerate() {
                x.send_q += 1_000 * s * j as u64;
            }
            h.observe(&sample, Duration::from_secs(s), &[]);
            plain.places.clear();
            plain.observe(&sample, Duration::from_secs(s), &[]);
            k.build(&h);
            assert_eq!(k.rows, plain.rows(), "at {s}s");
            assert_eq!(h.conns.iter().flatten().count(), 4);
        }
    }

    proptest! {
        /// Rows moved along the permutation's cycles land where moving each to its place in
        /// a new vector puts them, and the permutation is left as the identity.
        #[test]
        fn permuting_rows_in_place_puts_each_where_it_goes(
            dest in (0usize..40).prop_flat_map(|n| Just((0..n as u32).collect::<Vec<u32>>()).prop_shuffle()),
        ) {
            let rows: Vec<SocketRow> = (0..dest.len())
                .map(|j| SocketRow { send_q: j as u64, trend: vec![j as u64], ..SocketRow::default() })
                .collect();
            let mut want = vec![SocketRow::default(); rows.len()];
            for (j, &d) in dest.iter().enumerate() {
                want[d as usize] = rows[j].clone();
            }
            let mut got = rows.clone();
            let mut spent = dest.clone();
            permute(&mut got, &mut spent);
            prop_assert_eq!(&got, &want);
            prop_assert!(spent.iter().enumerate().all(|(j, &d)| d as usize == j));
        }
    }
}
