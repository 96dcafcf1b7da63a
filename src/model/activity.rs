//! Database time, as Oracle's Active Session History keeps it: every `onstat -u` moment is one
//! sample of the sessions doing something (on CPU, or waiting for the server: a lock, a buffer,
//! a mutex, the checkpoint...), each classed and keyed by who and what (user, host, program,
//! statement, object, head blocker). Added up over any window, the samples say where the
//! server's time went: a session active in N samples one second apart stood for N seconds of
//! database time.
//!
//! Idle sessions (waiting for their client) are not database time. The last
//! [`RECENT`] seconds are kept sample by sample; older ones are added up into [`BUCKET`]-second
//! buckets by their keys (as ASH keeps one sample in ten), and past [`MIDDLE`] into
//! [`COARSE`]-second ones, up to [`HISTORY`] and at most
//! [`MAX_ROWS`] rows in all (the oldest buckets go first: [`Activity::covered_from`] says what
//! is still held).

use crate::ids::Sid;
use crate::model::sessions::{SessionRow, SessionState};
use crate::model::waiters::{WaitTarget, WaiterRow};
use crate::parsers::onstat_u::WaitReason;
use compact_str::CompactString;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use std::collections::VecDeque;
use std::fmt::Write as _;

/// Seconds kept sample by sample (the 1-minute window, exact to the sample).
pub const RECENT: f64 = 60.0;
/// The length of an older bucket (seconds).
pub const BUCKET: f64 = 10.0;
/// Buckets older than this (seconds) are added up into [`COARSE`]-second ones.
pub const MIDDLE: f64 = 900.0;
/// The length of a bucket older than [`MIDDLE`] (seconds): five minutes, so an hour of a
/// 5,000-session instance fits the memory budget (with minutes it took 448,000 rows, 12.3 MB;
/// with five, 254,000 rows, 7.1 MB).
pub const COARSE: f64 = 300.0;
/// How far back the history goes (seconds).
pub const HISTORY: f64 = 3600.0;
/// At most this many rows (sample rows and bucket rows together, 28 bytes each): about 11 MB.
/// An hour of the demo at 5,000 sessions (895 active a second, each changing every second) is
/// 254,000 rows, 7.1 MB on the heap (`benches/activity.rs`).
pub const MAX_ROWS: usize = 400_000;
/// A sample stands for the time since the one before, at most this long (a gap in the data is
/// not database time).
pub const MAX_WEIGHT: f64 = 5.0;
/// A statement read this long before the moment may still be the session's (`onstat -g sql` is
/// read on the joins' period, 5 s); older, it is not used.
pub const SQL_FRESH_S: f64 = 12.0;

/// What a session spent a sample on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// On a CPU VP: its thread `running` in an `onstat -g ath` read at the moment.
    Cpu,
    /// No wait flag in `onstat -u`, and no thread list of the moment to tell whether it runs
    /// on a VP, waits for one, or waits inside the server (I/O): said so, never guessed.
    CpuOrWait,
    /// Ready to run, waiting for a CPU VP: `ready` in `onstat -g ath`, or in the ready queue
    /// of an `onstat -g rea`, read at the moment.
    CpuWait,
    /// Waiting for a disk read or write (`IO Wait` in `onstat -g ath` at the moment).
    Io,
    Lock,
    Buffer,
    /// A mutex or latch (`S`).
    Mutex,
    Checkpoint,
    LogBuffer,
    Transaction,
    /// A condition that is not the client's (`sm_read`, I/O, a sort...).
    Condition,
    /// Rollback, defunct, a wait with no reason; a thread sleeping or yielding inside the
    /// server with no wait flag (`sleeping secs`, `yield`, `join wait` at the moment).
    Other,
}

impl Class {
    pub const ALL: [Class; 12] = [
        Class::Cpu,
        Class::CpuOrWait,
        Class::CpuWait,
        Class::Io,
        Class::Lock,
        Class::Buffer,
        Class::Mutex,
        Class::Checkpoint,
        Class::LogBuffer,
        Class::Transaction,
        Class::Condition,
        Class::Other,
    ];
    pub const COUNT: usize = Class::ALL.len();

    pub fn index(self) -> usize {
        self as usize
    }

    /// Its name in JSON, the exporter's label and `ifxtop ash`.
    pub fn name(self) -> &'static str {
        match self {
            Class::Cpu => "cpu",
            Class::CpuOrWait => "cpu_or_wait",
            Class::CpuWait => "cpu_wait",
            Class::Io => "io",
            Class::Lock => "lock",
            Class::Buffer => "buffer",
            Class::Mutex => "mutex",
            Class::Checkpoint => "checkpoint",
            Class::LogBuffer => "log_buffer",
            Class::Transaction => "transaction",
            Class::Condition => "condition",
            Class::Other => "other",
        }
    }

    /// At most 9 characters, for the chart's legend and the table.
    pub fn label(self) -> &'static str {
        match self {
            Class::Cpu => "CPU",
            Class::CpuOrWait => "CPU/wait?",
            Class::CpuWait => "CPU wait",
            Class::Io => "I/O",
            Class::Lock => "lock",
            Class::Buffer => "buffer",
            Class::Mutex => "mutex",
            Class::Checkpoint => "ckpt",
            Class::LogBuffer => "log buf",
            Class::Transaction => "txn",
            Class::Condition => "cond/IO",
            Class::Other => "other",
        }
    }

    /// The class of a wait reason of `onstat -u`.
    pub fn of_wait(r: WaitReason) -> Class {
        match r {
            WaitReason::Buffer => Class::Buffer,
            WaitReason::Checkpoint => Class::Checkpoint,
            WaitReason::LogBuffer => Class::LogBuffer,
            WaitReason::Lock => Class::Lock,
            WaitReason::Mutex => Class::Mutex,
            WaitReason::Transaction => Class::Transaction,
            WaitReason::Condition => Class::Condition,
            WaitReason::Rollback | WaitReason::Defunct => Class::Other,
        }
    }

    pub fn from_name(s: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == s)
    }
}

/// What the activity can be grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Key {
    Class,
    Sql,
    User,
    Host,
    Program,
    Object,
    Session,
    HeadBlocker,
}

impl Key {
    /// In the order `g` cycles through them.
    pub const ALL: [Key; 8] = [
        Key::Class,
        Key::Sql,
        Key::User,
        Key::Host,
        Key::Program,
        Key::Object,
        Key::Session,
        Key::HeadBlocker,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Key::Class => "class",
            Key::Sql => "sql",
            Key::User => "user",
            Key::Host => "host",
            Key::Program => "program",
            Key::Object => "object",
            Key::Session => "session",
            Key::HeadBlocker => "head_blocker",
        }
    }

    /// The table's column title.
    pub fn title(self) -> &'static str {
        match self {
            Key::Class => "CLASS",
            Key::Sql => "SQL",
            Key::User => "USER",
            Key::Host => "HOST",
            Key::Program => "PROGRAM",
            Key::Object => "OBJECT",
            Key::Session => "SESSION",
            Key::HeadBlocker => "HEAD BLOCKER",
        }
    }

    pub fn from_name(s: &str) -> Option<Key> {
        let s = s.trim().to_ascii_lowercase().replace('-', "_");
        Key::ALL
            .into_iter()
            .find(|k| k.name() == s || (s == "head" && *k == Key::HeadBlocker))
    }

    /// The next in `g`'s cycle.
    pub fn next(self) -> Key {
        let i = Key::ALL.iter().position(|k| *k == self).unwrap_or(0);
        Key::ALL[(i + 1) % Key::ALL.len()]
    }
}

/// An interned name's number (0: none, unknown).
type NameId = u32;
const NONE: NameId = 0;

/// One active session in one sample (or, in a bucket, the same keys over several samples).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Row {
    sid: u32,
    /// (user, host, program), interned as one.
    ident: NameId,
    sql: NameId,
    object: NameId,
    /// The head blocker's session id + 1 (0: none).
    head: u32,
    class: Class,
}

/// One sample: the active sessions at one `onstat -u` moment.
#[derive(Debug, Clone)]
struct Sample {
    at: f64,
    /// The seconds it stands for.
    weight: f32,
    rows: Vec<Row>,
}

/// Samples added up: the keys' seconds of database time between `start` and `end`.
#[derive(Debug, Clone)]
struct Bucket {
    start: f64,
    end: f64,
    samples: u32,
    rows: Rows,
}

/// A bucket's rows with their seconds: open while samples may still join it, packed once no
/// sample will. Closed buckets are most of an hour's history (at 5,000 sessions, 300,000 rows
/// of 28 bytes, 8.3 MB as vectors), and their rows are read only when a report is made.
#[derive(Debug, Clone)]
enum Rows {
    Open(Vec<(Row, f32)>),
    /// zstd of the rows column by column: each row's session as the difference from the
    /// row's before (rows come in session order), the ident, statement, object and head
    /// blocker numbers, the class's place, the seconds' bits. `len` rows.
    Packed {
        bytes: Box<[u8]>,
        len: usize,
    },
}

/// Bytes of one row in a packed bucket before zstd: five numbers, the class, the seconds.
const PACKED_ROW: usize = 5 * 4 + 1 + 4;

/// zstd's fastest level: a closed ten-second bucket of 5,000 sessions packs in about a
/// millisecond.
const PACK_LEVEL: i32 = 1;

impl Default for Rows {
    fn default() -> Self {
        Rows::Open(Vec::new())
    }
}

impl Rows {
    fn len(&self) -> usize {
        match self {
            Rows::Open(v) => v.len(),
            Rows::Packed { len, .. } => *len,
        }
    }

    /// The bytes held on the heap.
    fn heap_bytes(&self) -> usize {
        match self {
            Rows::Open(v) => v.capacity() * std::mem::size_of::<(Row, f32)>(),
            Rows::Packed { bytes, .. } => bytes.len(),
        }
    }

    /// The rows, unpacked if packed.
    fn get(&self) -> std::borrow::Cow<'_, [(Row, f32)]> {
        match self {
            Rows::Open(v) => std::borrow::Cow::Borrowed(v),
            Rows::Packed { bytes, len } => std::borrow::Cow::Owned(unpack(bytes, *len)),
        }
    }

    /// The rows to change (a sample joins them, buckets merge, names are renumbered):
    /// unpacked in place if packed.
    fn open(&mut self) -> &mut Vec<(Row, f32)> {
        if let Rows::Packed { bytes, len } = self {
            *self = Rows::Open(unpack(bytes, *len));
        }
        match self {
            Rows::Open(v) => v,
            Rows::Packed { .. } => unreachable!("opened just above"),
        }
    }

    /// No sample joins them any more: packs them (none stay an empty vector; kept open if
    /// zstd fails, which it does not on a buffer it can allocate).
    fn close(&mut self) {
        if let Rows::Open(v) = self {
            if v.is_empty() {
                *v = Vec::new();
                return;
            }
            if let Some(bytes) = pack(v) {
                *self = Rows::Packed {
                    bytes,
                    len: v.len(),
                };
            }
        }
    }
}

/// The rows, column by column (see [`Rows::Packed`]), zstd-packed.
fn pack(rows: &[(Row, f32)]) -> Option<Box<[u8]>> {
    let mut raw = Vec::with_capacity(rows.len() * PACKED_ROW);
    let mut before = 0u32;
    for (r, _) in rows {
        raw.extend_from_slice(&r.sid.wrapping_sub(before).to_le_bytes());
        before = r.sid;
    }
    let numbers: [fn(&Row) -> u32; 4] = [|r| r.ident, |r| r.sql, |r| r.object, |r| r.head];
    for number in numbers {
        for (r, _) in rows {
            raw.extend_from_slice(&number(r).to_le_bytes());
        }
    }
    raw.extend(rows.iter().map(|(r, _)| r.class.index() as u8));
    for (_, secs) in rows {
        raw.extend_from_slice(&secs.to_bits().to_le_bytes());
    }
    zstd::bulk::compress(&raw, PACK_LEVEL)
        .ok()
        .map(Vec::into_boxed_slice)
}

/// The `len` rows `pack` packed into `bytes`.
fn unpack(bytes: &[u8], len: usize) -> Vec<(Row, f32)> {
    let raw = zstd::bulk::decompress(bytes, len * PACKED_ROW).unwrap_or_default();
    debug_assert_eq!(raw.len(), len * PACKED_ROW, "a packed bucket unpacks whole");
    if raw.len() != len * PACKED_ROW {
        return Vec::new();
    }
    let column = |i: usize| {
        raw[i * 4 * len..(i + 1) * 4 * len]
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let classes = &raw[5 * 4 * len..5 * 4 * len + len];
    let secs = raw[5 * 4 * len + len..]
        .chunks_exact(4)
        .map(|b| f32::from_bits(u32::from_le_bytes([b[0], b[1], b[2], b[3]])));
    let mut sid = 0u32;
    column(0)
        .zip(column(1))
        .zip(column(2))
        .zip(column(3))
        .zip(column(4))
        .zip(classes)
        .zip(secs)
        .map(|((((((d, ident), sql), object), head), class), secs)| {
            sid = sid.wrapping_add(d);
            let row = Row {
                sid,
                ident,
                sql,
                object,
                head,
                class: Class::ALL
                    .get(usize::from(*class))
                    .copied()
                    .unwrap_or(Class::Other),
            };
            (row, secs)
        })
        .collect()
}

/// Names kept once, each with a number.
#[derive(Debug, Clone, Default)]
struct Names {
    by_name: FxHashMap<CompactString, NameId>,
    names: Vec<CompactString>,
}

impl Names {
    fn id(&mut self, s: &str) -> NameId {
        if s.is_empty() {
            return NONE;
        }
        if let Some(id) = self.by_name.get(s) {
            return *id;
        }
        if self.names.is_empty() {
            self.names.push(CompactString::default()); // 0: none
        }
        let id = NameId::try_from(self.names.len()).unwrap_or(NameId::MAX);
        let s = CompactString::new(s);
        self.names.push(s.clone());
        self.by_name.insert(s, id);
        id
    }

    fn name(&self, id: NameId) -> Option<&str> {
        (id != NONE)
            .then(|| self.names.get(id as usize).map(CompactString::as_str))
            .flatten()
    }

    fn len(&self) -> usize {
        self.names.len()
    }
}

/// One hour of database time.
#[derive(Debug, Clone, Default)]
pub struct Activity {
    names: Names,
    /// (user, host, program) → the ident's number, and back.
    idents: FxHashMap<(NameId, NameId, NameId), NameId>,
    ident_of: Vec<(NameId, NameId, NameId)>,
    /// A statement's text (what a row holds) → its fingerprint (what reports group by).
    fp_of: FxHashMap<NameId, NameId>,
    recent: VecDeque<Sample>,
    buckets: VecDeque<Bucket>,
    /// Each sample's active sessions by class, for the chart, over the whole history.
    chart: VecDeque<ChartPoint>,
    rows: usize,
    last_moment: Option<f64>,
    /// Only the counts by class are kept (the chart), no session's row: what the exporter
    /// needs (`informix_active_sessions`, the database-time counter), at a fraction of the
    /// memory.
    counts_only: bool,
    /// Each active session's statement name as last made from its words: emptied when names
    /// are renumbered ([`Activity::compact`]).
    words_seen: WordsMemo<NameId>,
}

/// One sample's active sessions by class (seconds of database time = count × weight).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChartPoint {
    pub at: f64,
    pub weight: f32,
    pub counts: [u16; Class::COUNT],
}

/// One active session at a moment, as it is sampled.
#[derive(Debug, Clone, PartialEq)]
pub struct Active<'a> {
    pub sid: Sid,
    pub class: Class,
    pub user: &'a str,
    pub host: Option<&'a str>,
    pub program: Option<&'a str>,
    pub sql: Option<&'a str>,
    pub object: Option<String>,
    pub head: Option<Sid>,
}

/// What a statement not read lately is called, wherever a statement is shown.
pub const NOT_READ: &str = "(not read)";

/// A statement's words as the history keys them.
pub(crate) const SQL_KEY_CHARS: usize = 200;

/// What a waiter waits on, as the Activity pane groups it: the table or index of a lock or a
/// buffer, the mutex's name, the condition's name.
fn object_of(w: &WaiterRow) -> Option<String> {
    match &w.waiting_on {
        WaitTarget::Lock {
            object: Some(o), ..
        }
        | WaitTarget::Buffer {
            object: Some(o), ..
        } => Some(o.clone()),
        WaitTarget::Lock {
            partnum: Some(p), ..
        } => Some(format!("partnum {p:#x}")),
        WaitTarget::Buffer { chunk, .. } => Some(format!("chunk {chunk} (page not resolved)")),
        WaitTarget::Latch { name: Some(n), .. } => Some(n.to_string()),
        WaitTarget::Condition { name: Some(n), .. } => Some(n.to_string()),
        _ => None,
    }
}

/// What the thread lists read at the moment of an `onstat -u` say of the sessions whose
/// threads have no wait flag there: running on a VP, ready for one, or waiting inside the
/// server. A list not read at the moment says nothing (its sessions are `cpu_or_wait`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunStates {
    /// From an `onstat -g ath` of the moment: each session's class by its primary thread's
    /// status (`running`, `ready`, `IO Wait`, ...). `None`: not read at the moment.
    pub threads: Option<FxHashMap<Sid, Class>>,
    /// From an `onstat -g rea` of the moment: the sessions with a thread in the ready queue.
    pub ready: FxHashSet<Sid>,
}

impl RunStates {
    /// The class of a session with no wait flag at the moment: what `onstat -g ath` says of
    /// its primary thread, else waiting for a CPU when `onstat -g rea` lists it, else not
    /// known (`cpu_or_wait`).
    pub fn class_of(&self, sid: Sid) -> Class {
        if let Some(c) = self.threads.as_ref().and_then(|t| t.get(&sid)) {
            return *c;
        }
        if self.ready.contains(&sid) {
            return Class::CpuWait;
        }
        Class::CpuOrWait
    }
}

/// The class an `onstat -g ath` status gives a thread that has no wait flag in `onstat -u`.
pub fn class_of_thread(state: &crate::parsers::onstat_g_ath::ThreadState) -> Class {
    use crate::parsers::onstat_g_ath::ThreadState;
    match state {
        ThreadState::Running => Class::Cpu,
        ThreadState::Ready => Class::CpuWait,
        ThreadState::Io => Class::Io,
        ThreadState::CondWait { .. } => Class::Condition,
        ThreadState::MutexWait { .. } => Class::Mutex,
        ThreadState::LockWait => Class::Lock,
        ThreadState::Sleeping { .. } => Class::Other,
        ThreadState::Other { words } => {
            let w = words.to_ascii_lowercase();
            if w.contains("buf") {
                Class::Buffer
            } else if w.contains("checkpoint") {
                Class::Checkpoint
            } else if w.contains("log") {
                Class::LogBuffer
            } else {
                Class::Other
            }
        }
    }
}

/// The active sessions of a snapshot, each classed and keyed (the server's own threads left
/// out, as ASH counts foreground sessions only): a session waiting for the server (its
/// primary thread's wait; an idle client wait is not active), or with no wait flag, classed by
/// the thread lists of the moment (`run`: on a CPU, waiting for one, in I/O, or not known).
/// `sessions`, `waiters` and `run` are a snapshot's (one moment's).
pub fn actives<'a>(
    sessions: &'a [SessionRow],
    waiters: &'a [WaiterRow],
    run: &RunStates,
) -> Vec<Active<'a>> {
    let mut waiter_of: FxHashMap<Sid, &WaiterRow> =
        FxHashMap::with_capacity_and_hasher(waiters.len(), Default::default());
    for w in waiters {
        let primary = w.flags.as_bytes().get(3) == Some(&b'P');
        let e = waiter_of.entry(w.sessid).or_insert(w);
        if primary {
            *e = w;
        }
    }
    let mut out = Vec::new();
    for s in sessions.iter().filter(|s| !s.system) {
        let (class, w) = match s.state {
            SessionState::Idle => continue,
            SessionState::Running => (run.class_of(s.sessid), None),
            SessionState::Waiting => {
                let w = waiter_of.get(&s.sessid).copied();
                match w {
                    // A client wait whose Send-Q was seen once is most often an idle
                    // client's reply in flight: not database time until the next sample shows
                    // the bytes stay (then it is a client not reading, and counted).
                    Some(w) if w.idle || w.idle_unknown => continue,
                    Some(w) => (Class::of_wait(w.reason), Some(w)),
                    None => (s.wait.map_or(Class::Other, Class::of_wait), None),
                }
            }
        };
        out.push(Active {
            sid: s.sessid,
            class,
            user: s.user.as_str(),
            host: s.host.as_deref(),
            program: s.program.as_deref(),
            sql: s.sql.as_deref(),
            object: w.and_then(object_of),
            head: w.and_then(|w| w.head_blocker),
        });
    }
    out
}

/// The first words of a statement, blanks collapsed, at most `max` characters (the key's text).
pub fn statement_words(sql: &str, max: usize) -> String {
    let mut out = String::new();
    statement_words_into(sql, max, &mut out);
    out
}

/// [`statement_words`] into `out` (emptied first), in its room: the characters are counted as
/// the words are added, not again for each word.
pub fn statement_words_into(sql: &str, max: usize, out: &mut String) {
    words_into(sql, max, out);
}

/// [`statement_words_into`], saying which of `sql` the words were taken from.
fn words_into(sql: &str, max: usize, out: &mut String) -> WordsFrom {
    out.clear();
    let mut chars = 0;
    let mut from = WordsFrom { end: 0, cut: false };
    for w in sql.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
            chars += 1;
        }
        out.push_str(w);
        chars += w.chars().count();
        // `w` is a piece of `sql`: where it ends in it.
        from.end = w.as_ptr() as usize - sql.as_ptr() as usize + w.len();
        if chars >= max {
            from.cut = true;
            break;
        }
    }
    if chars > max {
        let cut = out
            .char_indices()
            .nth(max.saturating_sub(1))
            .map_or(out.len(), |(i, _)| i);
        out.truncate(cut);
        out.push('…');
    }
    from
}

/// Which part of a statement its words were taken from: up to `end` (the end of the last word
/// taken), and whether they stopped there at the length wanted (`cut`) or took every word.
#[derive(Debug, Clone, Copy, PartialEq)]
struct WordsFrom {
    end: usize,
    cut: bool,
}

/// A session's statement as its words were last taken: the text they were taken from, how,
/// and what was made of the words (`key`).
#[derive(Debug, Clone)]
struct WordsSeen<V> {
    text: Box<str>,
    cut: bool,
    key: V,
    /// The last sample that used it.
    sample: u64,
}

impl<V> WordsSeen<V> {
    /// Whether `sql` has the words `self` was taken for: the same text up to where they were
    /// taken, and there a word's end (a cut) or nothing but blanks (every word taken).
    fn same_words(&self, sql: &str) -> bool {
        let end = self.text.len();
        if sql.as_bytes().get(..end) != Some(self.text.as_bytes()) {
            return false;
        }
        // The same bytes as a whole `str` up to `end`: `end` is a character boundary of `sql`.
        let Some(rest) = sql.get(end..) else {
            return false;
        };
        if self.cut {
            rest.chars().next().is_none_or(char::is_whitespace)
        } else {
            rest.chars().all(char::is_whitespace)
        }
    }
}

/// What is made of each active session's statement words ([`SQL_KEY_CHARS`] of them), kept by
/// session: a statement is most often the same text second after second, and its words are
/// then known without being taken (and what was made of them made) again. Only of the sessions
/// of the last sample.
#[derive(Debug, Clone)]
pub(crate) struct WordsMemo<V> {
    seen: FxHashMap<u32, WordsSeen<V>>,
    /// Samples ended (what [`WordsSeen::sample`] counts).
    sample: u64,
}

impl<V> Default for WordsMemo<V> {
    fn default() -> Self {
        WordsMemo {
            seen: FxHashMap::default(),
            sample: 0,
        }
    }
}

impl<V> WordsMemo<V> {
    /// What `make` made of the words of session `sid`'s statement `sql`: kept from the last
    /// time when the words are the same, else made now from the words (taken into `words`).
    pub(crate) fn key(
        &mut self,
        sid: Sid,
        sql: &str,
        words: &mut String,
        make: impl FnOnce(&str) -> V,
    ) -> &V {
        let sid = u32::try_from(sid.0).unwrap_or(u32::MAX);
        let sample = self.sample;
        let seen = match self.seen.entry(sid) {
            std::collections::hash_map::Entry::Occupied(e) => {
                let seen = e.into_mut();
                if !seen.same_words(sql) {
                    let from = words_into(sql, SQL_KEY_CHARS, words);
                    seen.key = make(words);
                    seen.text = sql.get(..from.end).unwrap_or_default().into();
                    seen.cut = from.cut;
                }
                seen
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                let from = words_into(sql, SQL_KEY_CHARS, words);
                e.insert(WordsSeen {
                    key: make(words),
                    text: sql.get(..from.end).unwrap_or_default().into(),
                    cut: from.cut,
                    sample,
                })
            }
        };
        seen.sample = sample;
        &seen.key
    }

    /// The end of a sample: the sessions it did not ask about are forgotten.
    pub(crate) fn end_sample(&mut self) {
        let sample = self.sample;
        self.seen.retain(|_, w| w.sample == sample);
        self.sample += 1;
    }

    /// Sessions kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.seen.len()
    }

    /// Forgets every session (what was made of their words means nothing any more).
    pub(crate) fn clear(&mut self) {
        self.seen.clear();
    }
}

impl Activity {
    pub fn new() -> Self {
        Activity::default()
    }

    /// One that keeps only the counts by class of each sample (the chart), no session's row
    /// and no name: `serve`'s, which exports the latest counts and their sum.
    pub fn counts_only() -> Self {
        Activity {
            counts_only: true,
            ..Activity::default()
        }
    }

    /// Adds the sample of one `onstat -u` moment (`at`, session seconds); a moment already
    /// sampled (a second build of the same data) is ignored, and an older one (a replay sought
    /// back) starts the history again. Returns whether it was added.
    pub fn add(&mut self, at: f64, actives: &[Active<'_>]) -> bool {
        match self.last_moment {
            Some(m) if at == m => return false,
            Some(m) if at < m => {
                *self = Activity {
                    counts_only: self.counts_only,
                    ..Activity::new()
                }
            }
            _ => {}
        }
        let weight = match self.last_moment {
            Some(m) => (at - m).clamp(0.0, MAX_WEIGHT),
            None => 1.0,
        } as f32;
        self.last_moment = Some(at);
        let mut counts = [0u16; Class::COUNT];
        let mut rows = Vec::with_capacity(if self.counts_only { 0 } else { actives.len() });
        let mut words = String::new();
        for a in actives {
            counts[a.class.index()] = counts[a.class.index()].saturating_add(1);
            if self.counts_only {
                continue;
            }
            let user = self.names.id(a.user);
            let host = self.names.id(a.host.unwrap_or(""));
            let program = self.names.id(a.program.unwrap_or(""));
            let ident = self.ident(user, host, program);
            let sql = match a.sql {
                Some(q) => self.statement_name(a.sid, q, &mut words),
                None => NONE,
            };
            let object = self.names.id(a.object.as_deref().unwrap_or(""));
            rows.push(Row {
                sid: u32::try_from(a.sid.0).unwrap_or(u32::MAX),
                ident,
                sql,
                object,
                head: a
                    .head
                    .map_or(0, |h| u32::try_from(h.0).unwrap_or(u32::MAX - 1) + 1),
                class: a.class,
            });
        }
        if !self.counts_only {
            self.words_seen.end_sample();
        }
        self.rows += rows.len();
        self.recent.push_back(Sample { at, weight, rows });
        self.chart.push_back(ChartPoint { at, weight, counts });
        self.age(at);
        true
    }

    /// The name of session `sid`'s statement `sql` as a row keeps it: its first words (what a
    /// recording's track keeps, so a track gives the same rows), which reports group by their
    /// fingerprint, made once per text. Taken again only when the text differs from the
    /// session's last where its words were taken ([`WordsMemo`]).
    fn statement_name(&mut self, sid: Sid, sql: &str, words: &mut String) -> NameId {
        let (names, fp_of) = (&mut self.names, &mut self.fp_of);
        *self.words_seen.key(sid, sql, words, |words| {
            let name = names.id(words);
            if name != NONE && !fp_of.contains_key(&name) {
                let fp = crate::model::fingerprint::fingerprint(words);
                let fp = names.id(&fp);
                fp_of.insert(name, fp);
            }
            name
        })
    }

    fn ident(&mut self, user: NameId, host: NameId, program: NameId) -> NameId {
        if let Some(i) = self.idents.get(&(user, host, program)) {
            return *i;
        }
        let i = NameId::try_from(self.ident_of.len()).unwrap_or(NameId::MAX);
        self.ident_of.push((user, host, program));
        self.idents.insert((user, host, program), i);
        i
    }

    /// Moves samples older than [`RECENT`] into buckets, drops what is older than [`HISTORY`]
    /// or past [`MAX_ROWS`], and forgets names nothing refers to any more.
    fn age(&mut self, now: f64) {
        while let Some(s) = self.recent.front() {
            if now - s.at <= RECENT {
                break;
            }
            let Some(s) = self.recent.pop_front() else {
                break;
            };
            self.rows -= s.rows.len();
            let start = (s.at / BUCKET).floor() * BUCKET;
            let open = self
                .buckets
                .back()
                .is_some_and(|b| b.start == start && s.at >= b.end);
            if !open {
                self.buckets.push_back(Bucket {
                    start,
                    end: s.at,
                    samples: 0,
                    rows: Rows::default(),
                });
            }
            if let Some(b) = self.buckets.back_mut() {
                let before = b.rows.len();
                merge_into(b, &s);
                self.rows += b.rows.len() - before;
            }
            // A bucket another sample will not join is packed.
            if let Some(b) = self.buckets.iter_mut().rev().nth(1) {
                b.rows.close();
            }
        }
        // Past the middle, ten-second buckets become minutes.
        let mut i = 0;
        while i + 1 < self.buckets.len() {
            let (a, b) = (&self.buckets[i], &self.buckets[i + 1]);
            if now - b.end <= MIDDLE {
                break;
            }
            let minute = |x: f64| (x / COARSE).floor();
            if minute(a.start) == minute(b.start) {
                if let Some(b) = self.buckets.remove(i + 1) {
                    let held = self.buckets[i].rows.len() + b.rows.len();
                    merge_buckets(&mut self.buckets[i], b);
                    self.buckets[i].rows.close();
                    self.rows -= held - self.buckets[i].rows.len();
                }
            } else {
                i += 1;
            }
        }
        while let Some(b) = self.buckets.front() {
            if now - b.end <= HISTORY && self.rows <= MAX_ROWS {
                break;
            }
            if let Some(b) = self.buckets.pop_front() {
                self.rows -= b.rows.len();
            }
        }
        // Past the row limit with no bucket left: the oldest samples go.
        while self.rows > MAX_ROWS && self.recent.len() > 1 {
            if let Some(s) = self.recent.pop_front() {
                self.rows -= s.rows.len();
            }
        }
        let from = self.covered_from().unwrap_or(now);
        while self.chart.front().is_some_and(|c| c.at < from) {
            self.chart.pop_front();
        }
        if self.names.len() > 200_000 {
            self.compact();
        }
    }

    /// Keeps only the names and idents the rows still use.
    fn compact(&mut self) {
        // The names are numbered anew: the words' names kept by session would name others.
        self.words_seen.clear();
        let mut names = Names::default();
        let mut idents: FxHashMap<(NameId, NameId, NameId), NameId> = FxHashMap::default();
        let mut ident_of = Vec::new();
        let old_names = std::mem::take(&mut self.names);
        let old_idents = std::mem::take(&mut self.ident_of);
        let old_fp_of = std::mem::take(&mut self.fp_of);
        let mut fp_of: FxHashMap<NameId, NameId> = FxHashMap::default();
        let mut renumber = |r: &mut Row| {
            let remap = |names: &mut Names, id: NameId| match old_names.name(id) {
                Some(n) => names.id(n),
                None => NONE,
            };
            let (u, h, p) = old_idents
                .get(r.ident as usize)
                .copied()
                .unwrap_or((NONE, NONE, NONE));
            let key = (
                remap(&mut names, u),
                remap(&mut names, h),
                remap(&mut names, p),
            );
            r.ident = *idents.entry(key).or_insert_with(|| {
                ident_of.push(key);
                NameId::try_from(ident_of.len() - 1).unwrap_or(NameId::MAX)
            });
            let sql = remap(&mut names, r.sql);
            if sql != NONE && !fp_of.contains_key(&sql) {
                if let Some(fp) = old_fp_of.get(&r.sql) {
                    let fp = remap(&mut names, *fp);
                    fp_of.insert(sql, fp);
                }
            }
            r.sql = sql;
            r.object = remap(&mut names, r.object);
        };
        for s in &mut self.recent {
            s.rows.iter_mut().for_each(&mut renumber);
        }
        let last = self.buckets.len().saturating_sub(1);
        for (i, b) in self.buckets.iter_mut().enumerate() {
            b.rows.open().iter_mut().for_each(|(r, _)| renumber(r));
            // The last bucket may still have samples join it: it stays open.
            if i < last {
                b.rows.close();
            }
        }
        self.names = names;
        self.idents = idents;
        self.ident_of = ident_of;
        self.fp_of = fp_of;
    }

    /// The first moment the history still holds (session seconds).
    pub fn covered_from(&self) -> Option<f64> {
        match (self.buckets.front(), self.recent.front()) {
            (Some(b), _) => Some(b.start),
            (None, Some(s)) => Some(s.at),
            _ => None,
        }
    }

    /// The last moment sampled.
    pub fn last(&self) -> Option<f64> {
        self.last_moment
    }

    /// Rows held (samples' and buckets'), for the memory budget.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The bytes the history holds on the heap, from its containers' capacities (the rows,
    /// the chart, the names and their index): what the memory budget counts.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let samples: usize = self
            .recent
            .iter()
            .map(|s| s.rows.capacity() * size_of::<Row>() + size_of::<Sample>())
            .sum();
        let buckets: usize = self
            .buckets
            .iter()
            .map(|b| b.rows.heap_bytes() + size_of::<Bucket>())
            .sum();
        let names: usize = self
            .names
            .names
            .iter()
            .map(|n| size_of::<CompactString>() + if n.is_heap_allocated() { n.capacity() } else { 0 })
            .sum::<usize>()
            * 2 // the index holds each name again
            + self.names.by_name.capacity() * (size_of::<CompactString>() + size_of::<NameId>() + 8);
        let idents = self.ident_of.capacity() * 12
            + self.idents.capacity() * (16 + 8)
            + self.fp_of.capacity() * (4 + 4 + 8);
        samples + buckets + names + idents + self.chart.capacity() * size_of::<ChartPoint>()
    }

    /// The chart's points after `from` up to `to` (session seconds).
    pub fn chart(&self, from: f64, to: f64) -> impl Iterator<Item = &ChartPoint> {
        self.chart.iter().filter(move |c| c.at > from && c.at <= to)
    }

    /// The latest sample's active sessions by class (the exporter's gauge).
    pub fn latest(&self) -> Option<&ChartPoint> {
        self.chart.back()
    }

    /// A row's value of a key, as a number: the class's place, a name's number, the session.
    fn raw(&self, key: Key, r: &Row) -> u64 {
        let (u, h, p) = self
            .ident_of
            .get(r.ident as usize)
            .copied()
            .unwrap_or((NONE, NONE, NONE));
        u64::from(match key {
            Key::Class => r.class.index() as u32,
            Key::Sql => self.fingerprint_of(r.sql),
            Key::User => u,
            Key::Host => h,
            Key::Program => p,
            Key::Object => r.object,
            Key::Session => r.sid,
            Key::HeadBlocker => r.head,
        })
    }

    /// The text of a key's value (`raw`).
    fn raw_text(&self, key: Key, raw: u64) -> String {
        let name = |none: &str| {
            u32::try_from(raw)
                .ok()
                .and_then(|id| self.names.name(id))
                .unwrap_or(none)
                .to_string()
        };
        match key {
            Key::Class => Class::ALL
                .get(raw as usize)
                .map_or("other", |c| c.name())
                .to_string(),
            Key::Sql => name(NOT_READ),
            Key::User | Key::Host | Key::Program | Key::Object => name("-"),
            Key::Session => raw.to_string(),
            Key::HeadBlocker => match raw {
                0 => "-".to_string(),
                h => (h - 1).to_string(),
            },
        }
    }

    /// The fingerprint of a statement's text (a row's `sql`).
    fn fingerprint_of(&self, text: NameId) -> NameId {
        self.fp_of.get(&text).copied().unwrap_or(text)
    }

    /// One text a statement's fingerprint was run with in the window (`examples`: the first
    /// in text order of those seen there, so any two reports of a window agree), when it
    /// differs from the fingerprint.
    fn example_of(
        &self,
        examples: &FxHashMap<NameId, NameId>,
        key: Key,
        raw: u64,
    ) -> Option<String> {
        if key != Key::Sql {
            return None;
        }
        let fp = u32::try_from(raw).ok()?;
        let e = examples.get(&fp)?;
        (*e != fp).then(|| self.names.name(*e).map(str::to_string))?
    }

    /// The value of a key whose text is `text` (`None`: no row can have it).
    fn raw_of(&self, key: Key, text: &str) -> Option<u64> {
        let name = |none: &str| {
            if text == none {
                Some(u64::from(NONE))
            } else {
                self.names.by_name.get(text).map(|id| u64::from(*id))
            }
        };
        match key {
            Key::Class => Class::from_name(text).map(|c| c.index() as u64),
            Key::Sql => name(NOT_READ),
            Key::User | Key::Host | Key::Program | Key::Object => name("-"),
            Key::Session => text.parse().ok(),
            Key::HeadBlocker if text == "-" => Some(0),
            Key::HeadBlocker => text.parse::<u64>().ok().map(|h| h + 1),
        }
    }

    /// Calls `each` with every row after `from` up to `to` (session seconds) and the seconds
    /// it stands for: the buckets' whose middle is in the window (unpacked one at a time),
    /// then the samples'.
    fn rows_in(&self, from: f64, to: f64, mut each: impl FnMut(&Row, f64)) {
        for b in &self.buckets {
            let mid = (b.start + b.end) / 2.0;
            if mid > from && mid <= to {
                for (r, s) in b.rows.get().iter() {
                    each(r, f64::from(*s));
                }
            }
        }
        for s in self.recent.iter().filter(|s| s.at > from && s.at <= to) {
            for r in &s.rows {
                each(r, f64::from(s.weight));
            }
        }
    }

    /// The samples in the window, and the seconds it covers: from its first sample to its end.
    fn coverage(&self, from: f64, to: f64) -> (u64, f64) {
        let mut n = 0u64;
        let mut secs = 0.0;
        for b in &self.buckets {
            let mid = (b.start + b.end) / 2.0;
            if mid > from && mid <= to {
                n += u64::from(b.samples);
            }
        }
        for c in self.chart(from, to) {
            if c.at >= self.recent.front().map_or(f64::MAX, |s| s.at) {
                n += 1;
            }
            secs += f64::from(c.weight);
        }
        (n, secs)
    }

    /// Database time between `from` and `to` (session seconds), grouped by `keys`, each list
    /// the `top` largest, narrowed to the rows whose `filter` key reads the given text.
    pub fn report(&self, q: &Query) -> Report {
        let (samples, window_s) = self.coverage(q.from, q.to);
        let mut by_class = [0f64; Class::COUNT];
        // Grouped by number (a name's, a session's), the texts made once per group: a window
        // holds hundreds of thousands of rows.
        let mut groups: Vec<FxHashMap<u64, Group>> = vec![FxHashMap::default(); q.keys.len()];
        let mut db_time = 0.0;
        let filter = q.filter.as_ref().map(|(k, v)| (*k, self.raw_of(*k, v)));
        // By class, each class's head blockers, objects and statements (the first view).
        let per_class = q.keys.contains(&Key::Class);
        let mut within: Vec<[FxHashMap<u64, f64>; 3]> = if per_class {
            vec![Default::default(); Class::COUNT]
        } else {
            Vec::new()
        };
        // Each session's statements, for the head blockers' own (what holds the others up).
        let mut session_sql: FxHashMap<(u32, NameId), f64> = FxHashMap::default();
        // Each fingerprint's example: the first text in text order run in the window.
        let mut examples: FxHashMap<NameId, NameId> = FxHashMap::default();
        self.rows_in(q.from, q.to, |r, secs| {
            if let Some((k, want)) = filter {
                if Some(self.raw(k, r)) != want {
                    return;
                }
            }
            db_time += secs;
            by_class[r.class.index()] += secs;
            if r.sql != NONE {
                let fp = self.fingerprint_of(r.sql);
                let e = examples.entry(fp).or_insert(r.sql);
                if *e != r.sql && self.names.name(r.sql) < self.names.name(*e) {
                    *e = r.sql;
                }
            }
            if let Some(w) = within.get_mut(r.class.index()) {
                for (m, k) in w.iter_mut().zip(CLASS_TOP_KEYS) {
                    *m.entry(self.raw(k, r)).or_default() += secs;
                }
                *session_sql
                    .entry((r.sid, self.fingerprint_of(r.sql)))
                    .or_default() += secs;
            }
            for (i, k) in q.keys.iter().enumerate() {
                let g = groups[i].entry(self.raw(*k, r)).or_default();
                g.secs += secs;
                g.by_class[r.class.index()] += secs;
                g.sessions.insert(r.sid);
            }
        });
        let window = window_s.max(f64::EPSILON);
        let top = q
            .keys
            .iter()
            .zip(groups)
            .map(|(k, g)| {
                let mut entries: Vec<Entry> = g
                    .into_iter()
                    .map(|(raw, g)| Entry {
                        key: self.raw_text(*k, raw),
                        db_time_s: round3(g.secs),
                        share: if db_time > 0.0 {
                            round3(g.secs / db_time)
                        } else {
                            0.0
                        },
                        aas: round3(g.secs / window),
                        sessions: g.sessions.len(),
                        by_class: class_map(&g.by_class),
                        example: self.example_of(&examples, *k, raw),
                    })
                    .collect();
                entries.sort_by(|a, b| {
                    b.db_time_s
                        .total_cmp(&a.db_time_s)
                        .then_with(|| a.key.cmp(&b.key))
                });
                entries.truncate(q.top);
                (k.name().to_string(), entries)
            })
            .collect();
        let class_tops = Class::ALL
            .into_iter()
            .zip(within)
            .filter(|(c, _)| by_class[c.index()] > 0.0)
            .map(|(c, maps)| {
                let secs = by_class[c.index()];
                let [head, object, sql] = maps;
                let top = |k: Key, m: FxHashMap<u64, f64>| -> Option<Top> {
                    // A head blocker or an object the class has: not "none" (statements
                    // not read do count: their share says how much is not known).
                    let (raw, t) = m
                        .into_iter()
                        .filter(|(raw, _)| k == Key::Sql || *raw != u64::from(NONE))
                        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))?;
                    Some(Top {
                        key: self.raw_text(k, raw),
                        db_time_s: round3(t),
                        share: round3(t / secs),
                        example: self.example_of(&examples, k, raw),
                    })
                };
                let head_blocker = top(Key::HeadBlocker, head);
                // The head blocker's own statement over the window (its seconds: its own).
                let head_sql = head_blocker
                    .as_ref()
                    .and_then(|h| h.key.parse::<u32>().ok())
                    .and_then(|h| {
                        session_sql
                            .iter()
                            .filter(|((sid, _), _)| *sid == h)
                            .max_by(|a, b| a.1.total_cmp(b.1).then(b.0 .1.cmp(&a.0 .1)))
                            .map(|((_, q), t)| {
                                let own: f64 = session_sql
                                    .iter()
                                    .filter(|((sid, _), _)| *sid == h)
                                    .map(|(_, t)| t)
                                    .sum();
                                Top {
                                    key: self.raw_text(Key::Sql, u64::from(*q)),
                                    db_time_s: round3(*t),
                                    share: round3(t / own.max(1e-9)),
                                    example: self.example_of(&examples, Key::Sql, u64::from(*q)),
                                }
                            })
                    });
                ClassTop {
                    class: c,
                    db_time_s: round3(secs),
                    head_blocker,
                    head_sql,
                    object: top(Key::Object, object),
                    sql: top(Key::Sql, sql),
                }
            })
            .collect();
        Report {
            from_s: q.from,
            to_s: q.to,
            window_s: round3(window_s),
            samples,
            db_time_s: round3(db_time),
            aas: round3(db_time / window),
            by_class: class_map(&by_class),
            top,
            class_tops,
        }
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn class_map(secs: &[f64; Class::COUNT]) -> Vec<(Class, f64)> {
    Class::ALL
        .into_iter()
        .filter(|c| secs[c.index()] > 0.0)
        .map(|c| (c, round3(secs[c.index()])))
        .collect()
}

/// Adds a later bucket's rows into a bucket.
fn merge_buckets(into: &mut Bucket, b: Bucket) {
    add_rows(into.rows.open(), b.rows.get().iter().copied());
    into.samples += b.samples;
    into.end = b.end;
}

/// Adds a sample's rows into a bucket.
fn merge_into(b: &mut Bucket, s: &Sample) {
    add_rows(b.rows.open(), s.rows.iter().map(|r| (*r, s.weight)));
    b.samples += 1;
    b.end = s.at;
}

/// Adds `incoming` rows with their seconds into `rows`: a row already there gains the
/// seconds, a new one is appended (in the order it came). The incoming rows are indexed, not
/// the bucket's (which was indexed afresh every second, for every sample added): a sample is
/// smaller than the bucket it joins, and a ten-second bucket than the five-minute one.
fn add_rows(rows: &mut Vec<(Row, f32)>, incoming: impl Iterator<Item = (Row, f32)>) {
    let mut new: Vec<(Row, f32)> = Vec::new();
    let mut index: FxHashMap<Row, usize> = FxHashMap::default();
    for (r, secs) in incoming {
        match index.get(&r) {
            Some(&i) => new[i].1 += secs,
            None => {
                index.insert(r, new.len());
                new.push((r, secs));
            }
        }
    }
    let mut taken = vec![false; new.len()];
    for (r, secs) in rows.iter_mut() {
        if let Some(&i) = index.get(r) {
            *secs += new[i].1;
            taken[i] = true;
        }
    }
    rows.extend(
        new.into_iter()
            .zip(taken)
            .filter(|(_, taken)| !taken)
            .map(|(row, _)| row),
    );
}

#[derive(Debug, Default, Clone)]
struct Group {
    secs: f64,
    by_class: [f64; Class::COUNT],
    sessions: FxHashSet<u32>,
}

/// What a report asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// Session seconds: the samples after `from` up to `to`.
    pub from: f64,
    pub to: f64,
    /// One top list per key.
    pub keys: Vec<Key>,
    /// Only the rows whose key reads this text (a drill into a group).
    pub filter: Option<(Key, String)>,
    /// At most this many entries a list.
    pub top: usize,
}

impl Query {
    /// Every key, the top `top` of each, over `from..=to`.
    pub fn every_key(from: f64, to: f64, top: usize) -> Query {
        Query {
            from,
            to,
            keys: Key::ALL.to_vec(),
            filter: None,
            top,
        }
    }
}

/// Database time over a window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The window asked for (session seconds).
    #[serde(skip)]
    pub from_s: f64,
    #[serde(skip)]
    pub to_s: f64,
    /// The seconds of the window the history holds samples for.
    pub window_s: f64,
    pub samples: u64,
    /// Seconds of database time (active sessions × seconds).
    pub db_time_s: f64,
    /// Average active sessions: database time over the window.
    pub aas: f64,
    #[serde(serialize_with = "ser_classes")]
    pub by_class: Vec<(Class, f64)>,
    /// One list per key, the largest first.
    #[serde(serialize_with = "ser_top")]
    pub top: Vec<(String, Vec<Entry>)>,
    /// Grouped by class: each class (in the chart's order) with the head blocker, the object
    /// and the statement that have the most of its time.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub class_tops: Vec<ClassTop>,
}

/// The keys a class's top is told by (the order of [`ClassTop`]'s fields).
const CLASS_TOP_KEYS: [Key; 3] = [Key::HeadBlocker, Key::Object, Key::Sql];

/// One class of the first view: its time, and who and what had the most of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassTop {
    pub class: Class,
    pub db_time_s: f64,
    /// The session at the head of the chains that held its sessions up the longest (none when
    /// nobody held them up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_blocker: Option<Top>,
    /// The statement that head blocker ran the longest over the window (its share: of its own
    /// time): what holds the others up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_sql: Option<Top>,
    /// The table, index, mutex or condition waited on the longest (none for CPU time).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<Top>,
    /// The statement (fingerprint) its sessions ran the longest, `(not read)` when those not
    /// read had most.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sql: Option<Top>,
}

/// The value of a key with the most of a class's time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Top {
    pub key: String,
    pub db_time_s: f64,
    /// Of the class's time, 0 to 1.
    pub share: f64,
    /// A statement's text with its values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
}

/// One group of a top list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    pub key: String,
    pub db_time_s: f64,
    /// Of the window's database time, 0 to 1.
    pub share: f64,
    /// Average active sessions.
    pub aas: f64,
    /// Distinct sessions.
    pub sessions: usize,
    #[serde(serialize_with = "ser_classes")]
    pub by_class: Vec<(Class, f64)>,
    /// A statement's fingerprint (the key) was seen with this text first: one example with
    /// its values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
}

fn ser_classes<S: serde::Serializer>(v: &[(Class, f64)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(v.len()))?;
    for (c, secs) in v {
        m.serialize_entry(c.name(), secs)?;
    }
    m.end()
}

fn ser_top<S: serde::Serializer>(v: &[(String, Vec<Entry>)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(v.len()))?;
    for (k, e) in v {
        m.serialize_entry(k, e)?;
    }
    m.end()
}

impl Report {
    /// The list of one key.
    pub fn list(&self, key: Key) -> &[Entry] {
        self.top
            .iter()
            .find(|(k, _)| k == key.name())
            .map_or(&[], |(_, e)| e.as_slice())
    }

    /// Seconds of one class.
    pub fn class_secs(&self, c: Class) -> f64 {
        self.by_class
            .iter()
            .find(|(k, _)| *k == c)
            .map_or(0.0, |(_, s)| *s)
    }

    /// The report as text: the window, then each list as a table.
    pub fn text(&self, when: &dyn Fn(f64) -> String) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "ACTIVITY  {} to {}: {:.0}s of samples ({}), database time {:.0}s, {:.2} average active sessions",
            when(self.from_s),
            when(self.to_s),
            self.window_s,
            self.samples,
            self.db_time_s,
            self.aas,
        );
        if self.samples == 0 {
            let _ = writeln!(s, "          no samples in this window");
        }
        if !self.class_tops.is_empty() {
            let _ = writeln!(
                s,
                "\n{:<12} {:>6} {:>6}  {:<12} {:<28} TOP SQL (the head blocker's: >)",
                "CLASS", "%DBT", "AAS", "HEAD BLOCKER", "TOP OBJECT"
            );
            let window = self.window_s.max(f64::EPSILON);
            for t in &self.class_tops {
                let named = |x: &Option<Top>| {
                    x.as_ref().map_or("-".to_string(), |x| {
                        format!("{} {:.0}%", x.key, x.share * 100.0)
                    })
                };
                let _ = writeln!(
                    s,
                    "{:<12} {:>5.1}% {:>6.2}  {:<12} {:<28} {}",
                    t.class.name(),
                    t.db_time_s / self.db_time_s.max(1e-9) * 100.0,
                    t.db_time_s / window,
                    truncate(&named(&t.head_blocker), 12),
                    truncate(&named(&t.object), 28),
                    named(&t.sql),
                );
                if let (Some(h), Some(q)) = (&t.head_blocker, &t.head_sql) {
                    let _ = writeln!(s, "{:>49} > {} runs {}", "", h.key, q.key);
                }
            }
        }
        for (key, entries) in &self.top {
            let title = Key::from_name(key).map_or(key.as_str(), |k| k.title());
            let _ = writeln!(
                s,
                "\n{:<40} {:>6} {:>8} {:>6} {:>5}  BY CLASS",
                title, "%DBT", "SECONDS", "AAS", "SESS"
            );
            for e in entries {
                let classes: Vec<String> = e
                    .by_class
                    .iter()
                    .map(|(c, secs)| format!("{} {:.0}s", c.label(), secs))
                    .collect();
                let _ = writeln!(
                    s,
                    "{:<40} {:>5.1}% {:>8.1} {:>6.2} {:>5}  {}",
                    truncate(&e.key, 40),
                    e.share * 100.0,
                    e.db_time_s,
                    e.aas,
                    e.sessions,
                    classes.join(", ")
                );
            }
        }
        s
    }
}

/// `s` cut to `n` characters, `…` marking the cut.
pub fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// Statements for tests of what is kept by a session's statement: texts that share their first
/// words and differ past the cut, differ in a digit, or only in blanks, and an empty one.
#[cfg(test)]
pub(crate) fn changing_statements() -> Vec<String> {
    let long = "select a from t where b = ".repeat(12);
    vec![
        format!("{long}1"),
        format!("{long}2"),
        format!("{long} 1"),
        "select 1".into(),
        "select 1 ".into(),
        "select 10".into(),
        "select  1\n".into(),
        "insert into t values (1)".into(),
        String::new(),
    ]
}

/// Session `sid` active on the CPU running `sql`, the rest plain.
#[cfg(test)]
pub(crate) fn active_with(sid: Sid, sql: Option<&str>) -> Active<'_> {
    Active {
        sid,
        class: Class::Cpu,
        user: "app",
        host: None,
        program: None,
        sql,
        object: None,
        head: None,
    }
}

/// A test's picks, the same on every run (a linear congruential generator).
#[cfg(test)]
pub(crate) struct Picks(pub(crate) u64);

#[cfg(test)]
impl Picks {
    /// The next pick, below `n`.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize % n.max(1)
    }
}

#[cfg(test)]
mod words_seen {
    //! A session's statement words known again without taking them.
    use super::*;
    use proptest::prelude::*;

    /// Texts of a few words, blanks of several kinds (Unicode ones too) and wide characters,
    /// so that a cut at a small length falls inside and between words.
    fn text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("select"),
            Just("sel"),
            Just("é"),
            Just("x1"),
            Just(" "),
            Just("  "),
            Just("\n"),
            Just("\t"),
            Just("\u{a0}"),
            Just("\u{3000}"),
        ];
        proptest::collection::vec(piece, 0..12).prop_map(|p| p.concat())
    }

    /// A second text: the first with its end changed, something added, or another.
    fn second(first: String) -> impl Strategy<Value = (String, String)> {
        let (f1, f2, f3) = (first.clone(), first.clone(), first.clone());
        prop_oneof![
            Just((first.clone(), first.clone())),
            text().prop_map(move |t| (f1.clone(), format!("{f1}{t}"))),
            (0..=first.len(), text()).prop_map(move |(n, t)| {
                let cut = (0..=n).rev().find(|&i| f2.is_char_boundary(i)).unwrap_or(0);
                (f2.clone(), format!("{}{t}", &f2[..cut]))
            }),
            text().prop_map(move |t| (f3.clone(), t)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn a_text_said_the_same_has_the_same_words(
            (a, b) in text().prop_flat_map(second),
            max in 1usize..16,
        ) {
            let mut words = String::new();
            let from = words_into(&a, max, &mut words);
            let seen = WordsSeen {
                text: a[..from.end].into(),
                cut: from.cut,
                key: NONE,
                sample: 0,
            };
            if a == b {
                prop_assert!(seen.same_words(&b), "{a:?}");
            }
            if seen.same_words(&b) {
                prop_assert_eq!(statement_words(&b, max), words, "{:?} then {:?}", a, b);
            }
        }
    }

    /// Over samples where sessions keep, lengthen, change and lose their statements (and
    /// names are renumbered), each row's statement is named by its own words.
    #[test]
    fn each_row_names_its_own_words() {
        let texts = changing_statements();
        let mut a = Activity::new();
        let mut picks = Picks(7);
        for t in 0..400u32 {
            let mut actives = Vec::new();
            for sid in 1..6u64 {
                let sql = texts.get(picks.below(texts.len() + 1)).map(String::as_str);
                actives.push(active_with(Sid(sid), sql));
            }
            assert!(a.add(f64::from(t), &actives));
            if t % 97 == 96 {
                a.compact();
            }
            let sample = a.recent.back().expect("a sample");
            for (row, act) in sample.rows.iter().zip(&actives) {
                let want = act.sql.map(|q| statement_words(q, SQL_KEY_CHARS));
                let got = a.names.name(row.sql).map(str::to_string);
                let want = want.filter(|w| !w.is_empty());
                assert_eq!(got, want, "second {t}, session {}", row.sid);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn active(sid: u64, class: Class, object: Option<&str>, head: Option<u64>) -> Active<'static> {
        Active {
            sid: Sid(sid),
            class,
            user: "app",
            host: Some("web1"),
            program: None,
            sql: Some("update  items\n set qty = 1"),
            object: object.map(str::to_string),
            head: head.map(Sid),
        }
    }

    /// The exporter's history keeps the counts by class the full one keeps, and no row.
    #[test]
    fn counts_only_keeps_the_chart_and_no_row() {
        let mut full = Activity::new();
        let mut counts = Activity::counts_only();
        for t in 0..600 {
            // 50 active sessions a second, as a busy server has.
            let sample: Vec<Active<'static>> = (0..50)
                .map(|i| match i % 2 {
                    0 => active(t * 100 + i, Class::Lock, Some("stores:items"), Some(7)),
                    _ => active(t * 100 + i, Class::Cpu, None, None),
                })
                .collect();
            full.add(f64::from(u32::try_from(t).expect("small")), &sample);
            counts.add(f64::from(u32::try_from(t).expect("small")), &sample);
        }
        assert_eq!(counts.latest(), full.latest());
        assert_eq!(
            counts.chart(0.0, 600.0).count(),
            full.chart(0.0, 600.0).count()
        );
        assert_eq!(counts.rows(), 0);
        assert!(full.rows() > 0);
        // Not a byte of rows held: no sample's or bucket's capacity, no name.
        assert!(counts.recent.iter().all(|s| s.rows.capacity() == 0));
        assert!(counts.buckets.iter().all(|b| b.rows.heap_bytes() == 0));
        assert_eq!(counts.names.len(), 0);
        assert!(
            counts.heap_bytes() < full.heap_bytes(),
            "{} vs {}",
            counts.heap_bytes(),
            full.heap_bytes()
        );
        // Sought back (a replay), it stays a counts-only history.
        counts.add(1.0, &[active(1, Class::Cpu, None, None)]);
        assert_eq!(counts.rows(), 0);
    }

    /// Each sample stands for the seconds since the one before; a moment sampled twice counts
    /// once; grouped by any key, the seconds add up to the database time.
    #[test]
    fn samples_add_up_by_key() {
        let mut a = Activity::new();
        assert!(a.add(10.0, &[active(1, Class::Cpu, None, None)]));
        assert!(!a.add(10.0, &[active(1, Class::Cpu, None, None)]));
        for t in 11..=20 {
            a.add(
                f64::from(t),
                &[
                    active(1, Class::Lock, Some("stores:items"), Some(7)),
                    active(2, Class::Lock, Some("stores:items"), Some(7)),
                    active(7, Class::Cpu, None, None),
                ],
            );
        }
        let r = a.report(&Query::every_key(0.0, 100.0, 10));
        assert_eq!(r.samples, 11);
        assert_eq!(r.db_time_s, 31.0);
        assert_eq!(r.class_secs(Class::Lock), 20.0);
        assert_eq!(r.class_secs(Class::Cpu), 11.0);
        assert_eq!(r.window_s, 11.0);
        let heads = r.list(Key::HeadBlocker);
        assert_eq!(heads[0].key, "7");
        assert_eq!(heads[0].db_time_s, 20.0);
        assert_eq!(heads[0].sessions, 2);
        let objects = r.list(Key::Object);
        assert_eq!(objects[0].key, "stores:items");
        // Keyed by the statement's fingerprint, with the text it was seen with.
        assert_eq!(r.list(Key::Sql)[0].key, "update items set qty = ?");
        assert_eq!(
            r.list(Key::Sql)[0].example.as_deref(),
            Some("update items set qty = 1")
        );
        for (_, list) in &r.top {
            let sum: f64 = list.iter().map(|e| e.db_time_s).sum();
            assert!((sum - r.db_time_s).abs() < 1e-6, "{list:?}");
        }
        // A window on the lock seconds alone.
        let r = a.report(&Query {
            filter: Some((Key::Class, "lock".into())),
            ..Query::every_key(15.0, 20.0, 10)
        });
        assert_eq!(r.db_time_s, 10.0);
        assert_eq!(r.list(Key::Session).len(), 2);
    }

    /// A gap in the data is not database time: a sample stands for at most MAX_WEIGHT seconds.
    #[test]
    fn a_gap_is_not_database_time() {
        let mut a = Activity::new();
        a.add(0.0, &[active(1, Class::Cpu, None, None)]);
        a.add(100.0, &[active(1, Class::Cpu, None, None)]);
        let r = a.report(&Query::every_key(-1.0, 100.0, 5));
        assert_eq!(r.db_time_s, 1.0 + MAX_WEIGHT);
    }

    /// Older samples are added up into buckets by their keys: the same totals, fewer rows; an
    /// hour on, they are gone.
    #[test]
    fn old_samples_become_buckets_then_go() {
        let mut a = Activity::new();
        for t in 0..1000 {
            a.add(
                f64::from(t),
                &[
                    active(1, Class::Lock, Some("t"), Some(2)),
                    active(2, Class::Cpu, None, None),
                ],
            );
        }
        // 61 recent samples of 2 rows (the last 60 s); the 10-second buckets ending within
        // 900 s (85 of 2 rows, [90, 940)); before them, five minutes' ([0, 90)): 2 rows, not
        // 180.
        assert_eq!(a.rows(), 61 * 2 + 85 * 2 + 2);
        let r = a.report(&Query::every_key(-1.0, 1000.0, 5));
        assert_eq!(r.db_time_s, 2000.0);
        assert_eq!(r.class_secs(Class::Lock), 1000.0);
        assert_eq!(r.samples, 1000);
        for t in 1000..5000 {
            a.add(f64::from(t), &[active(3, Class::Cpu, None, None)]);
        }
        assert!(a.covered_from().unwrap() >= 4999.0 - HISTORY - COARSE);
        let r = a.report(&Query::every_key(0.0, 1000.0, 5));
        assert_eq!(r.db_time_s, 0.0);
    }

    /// Names nothing refers to any more are forgotten (distinct statements by the hundred
    /// thousand must not grow the history for ever).
    #[test]
    fn compaction_keeps_what_rows_use() {
        let mut a = Activity::new();
        for t in 0..10 {
            a.add(f64::from(t), &[active(1, Class::Cpu, None, None)]);
        }
        a.compact();
        let r = a.report(&Query::every_key(0.0, 10.0, 5));
        assert_eq!(r.list(Key::User)[0].key, "app");
        assert_eq!(r.list(Key::Host)[0].key, "web1");
        assert_eq!(r.list(Key::Program)[0].key, "-");
        assert_eq!(r.list(Key::Sql)[0].key, "update items set qty = ?");
        assert_eq!(
            r.list(Key::Sql)[0].example.as_deref(),
            Some("update items set qty = 1")
        );
    }

    /// The same statement run with other values is one fingerprint, with the first text seen
    /// as its example; the example outlives compaction while a row uses its fingerprint.
    #[test]
    fn statements_group_by_fingerprint() {
        let mut a = Activity::new();
        let texts: Vec<String> = (0..40)
            .map(|k| format!("select * from orders where order_num = {}", 1000 + k))
            .collect();
        for (t, q) in texts.iter().enumerate() {
            let mut s = active(t as u64 % 7, Class::Cpu, None, None);
            s.sql = Some(q);
            a.add(t as f64, &[s]);
        }
        let r = a.report(&Query::every_key(-1.0, 100.0, 10));
        let sql = r.list(Key::Sql);
        assert_eq!(sql.len(), 1, "{sql:?}");
        assert_eq!(sql[0].key, "select * from orders where order_num = ?");
        assert_eq!(sql[0].db_time_s, 40.0);
        assert_eq!(sql[0].sessions, 7);
        assert_eq!(
            sql[0].example.as_deref(),
            Some("select * from orders where order_num = 1000")
        );
        // A drill into the fingerprint finds its rows.
        let only = a.report(&Query {
            filter: Some((Key::Sql, sql[0].key.clone())),
            ..Query::every_key(-1.0, 100.0, 10)
        });
        assert_eq!(only.db_time_s, 40.0);
        a.compact();
        assert_eq!(a.report(&Query::every_key(-1.0, 100.0, 10)), r);
    }

    /// A closed bucket is packed; every report reads the same from it as from its rows kept
    /// open, each row as it was (sessions in any order and up to the largest number, every
    /// class, fractional seconds), before and after the names are compacted.
    #[test]
    fn packed_buckets_read_as_their_rows() {
        let mut a = Activity::new();
        let mut t = 0.0;
        for step in 0..400u32 {
            // Irregular gaps: fractional seconds in the buckets.
            t += if step % 3 == 0 { 0.7 } else { 1.3 };
            let sample: Vec<Active<'static>> = (0..40u32)
                .map(|i| {
                    // Descending session numbers, and the largest one.
                    let sid = if i == 0 {
                        u64::from(u32::MAX)
                    } else {
                        5_000 - u64::from(i) * 97
                    };
                    let class = Class::ALL[(i + step) as usize % Class::COUNT];
                    let object = ["stores:items", "stores:orders", ""][(i % 3) as usize];
                    let head = (i % 4 == 0).then_some(7 + u64::from(i));
                    active(sid, class, (!object.is_empty()).then_some(object), head)
                })
                .collect();
            a.add(t, &sample);
        }
        let packed = a
            .buckets
            .iter()
            .filter(|b| matches!(b.rows, Rows::Packed { .. }))
            .count();
        assert!(
            packed + 1 >= a.buckets.len() && packed > 10,
            "{packed} packed"
        );
        let mut open = a.clone();
        for b in &mut open.buckets {
            b.rows.open();
        }
        for (b, o) in a.buckets.iter().zip(&open.buckets) {
            assert_eq!(b.rows.get().as_ref(), o.rows.get().as_ref());
        }
        let windows = [(-1.0, 1000.0), (100.0, 300.0), (350.0, 480.0)];
        for (from, to) in windows {
            let q = Query::every_key(from, to, 50);
            assert_eq!(a.report(&q), open.report(&q), "window {from}..{to}");
        }
        assert!(
            a.heap_bytes() * 2 < open.heap_bytes(),
            "packed {} vs open {}",
            a.heap_bytes(),
            open.heap_bytes()
        );
        let before = a.report(&Query::every_key(-1.0, 1000.0, 50));
        a.compact();
        assert_eq!(a.report(&Query::every_key(-1.0, 1000.0, 50)), before);
        // Samples still join the last bucket after compaction.
        a.add(t + 1.0, &[active(1, Class::Cpu, None, None)]);
        assert!(a.report(&Query::every_key(-1.0, 1000.0, 50)).db_time_s > before.db_time_s);
    }

    #[test]
    fn statement_words_are_cut() {
        assert_eq!(
            statement_words("select *\n  from t", 100),
            "select * from t"
        );
        assert_eq!(statement_words("select a, b from t", 8), "select …");
    }

    /// The words cut as counting every word's characters again cut them: any statement, any
    /// limit, with multi-byte characters.
    #[test]
    fn statement_words_are_those_counted_again_for_each_word() {
        fn counted_again(sql: &str, max: usize) -> String {
            let mut out = String::new();
            for w in sql.split_whitespace() {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(w);
                if out.chars().count() >= max {
                    break;
                }
            }
            if out.chars().count() > max {
                out = out.chars().take(max.saturating_sub(1)).collect();
                out.push('…');
            }
            out
        }
        let sqls = [
            "",
            "   ",
            "select",
            "select *\n  from t where a = 'été' and b = '東京'",
            "update  orders set x = 1\twhere id in (1, 2, 3)",
        ];
        let mut out = String::from("left over");
        for sql in sqls {
            for max in 0..60 {
                statement_words_into(sql, max, &mut out);
                assert_eq!(out, counted_again(sql, max), "{sql:?} at {max}");
            }
        }
    }
}
