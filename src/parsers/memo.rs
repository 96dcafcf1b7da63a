//! Rows not parsed again: a source's output a second later is mostly the same lines (at 5,000
//! sessions ~94 % of `onstat -u`'s rows, ~92 % of `/proc/net/tcp`'s), and a line identical to
//! one of the last output gives the identical row. A [`LineMemo`] keeps, per source, the last
//! parse's record (the `Parsed` the store keeps anyway) and, per row, the [`LineKey`] of the
//! line it came from; never the text, which would cost its size again in memory. Only bodies
//! whose row is a pure function of its line's text use it (no section state, no line number in
//! the row); everything else a parse does (banner, off-line message, lines not understood,
//! recognition, the error) is done as without it. A body may key a row by less than its line
//! (`-g con`'s rows without their wait time, which ticks every second) when it reads the rest
//! of the row again from the line.

use super::{Parsed, Record};
use crate::error::ParseError;
use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;

/// What stands for a line: a 64-bit hash of its text and its length.
///
/// The hash is foldhash (hashbrown's default hasher, already a dependency; a folded multiply
/// that passes SMHasher3 on its full 64 bits, ~10 ns a line where std's SipHash takes several
/// times that), seeded at random once a run: lines are text the server prints (user and host
/// names among them), and a fixed hash would let one be written to collide with another's row.
/// A line is compared with at most `3 * LOOK_AHEAD + 2` remembered keys, so at 5,000
/// sessions (about 30,000 memoised lines a second: `-u`, `-g con`, `-g ath`, `/proc/net/tcp`,
/// `-k`, `-x`) that is under 8·10^5 comparisons a second, 7·10^10 a day; at 2^-64 a
/// comparison of two different lines of one length, a wrong row once in about 2.5·10^8 days.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineKey {
    hash: u64,
    len: u32,
}

impl LineKey {
    /// Stands for a row that came from no single line: matches no line.
    pub(crate) const NONE: LineKey = LineKey {
        hash: 0,
        len: u32::MAX,
    };

    pub(crate) fn of(text: &str) -> LineKey {
        // A line of 4 GiB or more (no output cap allows it) is never remembered.
        let Ok(len) = u32::try_from(text.len()) else {
            return LineKey::NONE;
        };
        if len == u32::MAX {
            return LineKey::NONE;
        }
        static SEED: OnceLock<hashbrown::DefaultHashBuilder> = OnceLock::new();
        let mut h = SEED.get_or_init(Default::default).build_hasher();
        h.write(text.as_bytes());
        LineKey {
            hash: h.finish(),
            len,
        }
    }
}

/// How many remembered lines past the next one a line is looked for: a few rows removed
/// before it (sessions gone) still find it; a line not found is parsed.
const LOOK_AHEAD: usize = 8;

/// One source's memo: its last parse and, per row of it, the key of the row's line.
#[derive(Debug, Default, Clone)]
pub struct LineMemo {
    last: Option<Parsed>,
    /// Aligned with the last record's rows.
    keys: Vec<LineKey>,
}

impl LineMemo {
    /// Forgets the last parse (a failed or off-line one follows it).
    pub(crate) fn forget(&mut self) {
        self.last = None;
        self.keys = Vec::new();
    }

    /// How many rows it holds a line's key for.
    #[cfg(test)]
    pub(crate) fn remembered(&self) -> usize {
        self.keys.iter().filter(|k| **k != LineKey::NONE).count()
    }

    /// Parses `text` with `parse` (a parser's `parse_memo`), then the poll's `check`, and
    /// remembers the result; a failure forgets.
    pub(crate) fn read<T: Record>(
        &mut self,
        text: &str,
        parse: fn(&str, &LineMemo) -> Recalled<T>,
        check: fn(T) -> Result<T, ParseError>,
    ) -> Result<Parsed, ParseError> {
        let Recalled { result, keys } = parse(text, self);
        match super::parsed(result.and_then(check)) {
            Ok(p) => {
                self.last = Some(Parsed::clone(&p));
                self.keys = keys;
                Ok(p)
            }
            Err(e) => {
                self.forget();
                Err(e)
            }
        }
    }
}

/// A parse with a memo: the record, and the keys of its rows' lines (for the next memo).
pub(crate) struct Recalled<T> {
    pub(crate) result: Result<T, ParseError>,
    pub(crate) keys: Vec<LineKey>,
}

/// One parse's use of a memo: the rows it may copy, where the next line is looked for first,
/// and the keys of the rows read so far.
pub(crate) struct Recall<'m, R> {
    last: Option<&'m R>,
    keys: &'m [LineKey],
    /// The remembered line after the last one found.
    at: usize,
    /// Lines not found since: a run of changed lines stands for as many remembered ones.
    misses: usize,
    next: Vec<LineKey>,
}

impl<'m, R: Record> Recall<'m, R> {
    /// The memo's last record, when it is of this parser's type.
    pub(crate) fn new(memo: &'m LineMemo, rows: usize) -> Self {
        let last = memo.last.as_deref().and_then(|p| p.get::<R>());
        Recall {
            last,
            keys: if last.is_some() { &memo.keys } else { &[] },
            at: 0,
            misses: 0,
            next: Vec::with_capacity(rows),
        }
    }
}

impl<'m, R> Recall<'m, R> {
    /// The last record and its row whose line was `key`'s, looked for at the next remembered
    /// line and a few past it (rows inserted or removed), then, after lines not found, as many
    /// lines on (a run of changed rows): no search.
    fn find(&mut self, key: LineKey) -> Option<(&'m R, usize)> {
        let last = self.last?;
        if key == LineKey::NONE {
            return None;
        }
        let found = self.look(self.at, key).or_else(|| match self.misses {
            0 => None,
            n => self.look_around(self.at + n, key),
        });
        match found {
            Some(i) => {
                self.at = i + 1;
                self.misses = 0;
                Some((last, i))
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    /// Where `key` is among the remembered lines `from` and `LOOK_AHEAD` after.
    fn look(&self, from: usize, key: LineKey) -> Option<usize> {
        self.look_in(from, from.saturating_add(1 + LOOK_AHEAD), key)
    }

    /// Where `key` is among the remembered lines `LOOK_AHEAD` either side of `mid` (not before
    /// the next one): the end of a run of changed lines, which rows inserted among them put
    /// earlier and rows removed later.
    fn look_around(&self, mid: usize, key: LineKey) -> Option<usize> {
        let from = mid.saturating_sub(LOOK_AHEAD).max(self.at);
        self.look_in(from, mid.saturating_add(1 + LOOK_AHEAD), key)
    }

    /// Where `key` is among the remembered lines `from..end`.
    fn look_in(&self, from: usize, end: usize, key: LineKey) -> Option<usize> {
        let end = self.keys.len().min(end);
        (from.min(end)..end).find(|&i| self.keys[i] == key)
    }

    /// The remembered row of a line whose key is `key`, given through `copy` (false: no such
    /// row) and noted; false when there is none, and the line is to be read.
    pub(crate) fn copied(&mut self, key: LineKey, copy: impl FnOnce(&'m R, usize) -> bool) -> bool {
        match self.find(key) {
            Some((last, i)) if copy(last, i) => {
                self.note(key, true, 1);
                true
            }
            _ => false,
        }
    }

    /// After a line: the `added` rows it gave, remembered by `key` when it gave exactly one
    /// row.
    pub(crate) fn note(&mut self, key: LineKey, one_row: bool, added: usize) {
        if one_row && added == 1 {
            self.next.push(key);
        } else {
            self.next.extend(std::iter::repeat_n(LineKey::NONE, added));
        }
    }

    /// The keys for the next memo, when they are one per row of a record of `rows` rows (a row
    /// added but by a line leaves them unaligned: nothing is remembered then).
    pub(crate) fn finish(self, rows: usize) -> Vec<LineKey> {
        if self.next.len() == rows {
            self.next
        } else {
            Vec::new()
        }
    }
}

/// A parse of `text` through `memo`: `parse` reads the lines through the [`Recall`] it is
/// given, and the keys of the record's `rows` are kept for the next memo (none after an error).
pub(crate) fn parse_with<R: Record>(
    text: &str,
    memo: &LineMemo,
    parse: impl FnOnce(&mut Recall<'_, R>) -> Result<R, ParseError>,
    rows: fn(&R) -> usize,
) -> Recalled<R> {
    let mut recall = Recall::new(memo, super::lex::row_count_hint(text));
    let result = parse(&mut recall);
    let keys = match &result {
        Ok(r) => recall.finish(rows(r)),
        Err(_) => Vec::new(),
    };
    Recalled { result, keys }
}

/// Adds a copy of `from[i]` to `to`; false when there is no such row.
pub(crate) fn copy_row<T: Clone>(from: &[T], i: usize, to: &mut Vec<T>) -> bool {
    match from.get(i) {
        Some(row) => {
            to.push(row.clone());
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{LineMemo, Recalled};
    use crate::error::ParseError;
    use crate::parsers::{
        onstat_g_ath, onstat_g_con, onstat_k, onstat_u, onstat_x_txn, parsed, sockets, Parsed,
        Record,
    };
    use proptest::prelude::*;

    /// A memoised parser: its fixtures' folder, its plain parse, its memo parse.
    struct Kind {
        fixtures: &'static str,
        plain: fn(&str) -> Result<Parsed, ParseError>,
        memo: fn(&str, &mut LineMemo) -> Result<Parsed, ParseError>,
    }

    fn read<T: Record>(
        text: &str,
        memo: &mut LineMemo,
        parse: fn(&str, &LineMemo) -> Recalled<T>,
    ) -> Result<Parsed, ParseError> {
        memo.read(text, parse, Ok)
    }

    const KINDS: &[Kind] = &[
        Kind {
            fixtures: "onstat-u",
            plain: |t| parsed(onstat_u::parse(t)),
            memo: |t, m| read(t, m, onstat_u::parse_memo),
        },
        Kind {
            fixtures: "onstat-g-ath",
            plain: |t| parsed(onstat_g_ath::parse(t)),
            memo: |t, m| read(t, m, onstat_g_ath::parse_memo),
        },
        Kind {
            fixtures: "onstat-g-con",
            plain: |t| parsed(onstat_g_con::parse(t)),
            memo: |t, m| read(t, m, onstat_g_con::parse_memo),
        },
        Kind {
            fixtures: "onstat-k",
            plain: |t| parsed(onstat_k::parse(t)),
            memo: |t, m| read(t, m, onstat_k::parse_memo),
        },
        Kind {
            fixtures: "onstat-x-txn",
            plain: |t| parsed(onstat_x_txn::parse(t)),
            memo: |t, m| read(t, m, onstat_x_txn::parse_memo),
        },
        Kind {
            fixtures: "proc-net-tcp",
            plain: |t| parsed(sockets::parse_proc_net_tcp(t)),
            memo: |t, m| read(t, m, sockets::parse_proc_net_tcp_memo),
        },
    ];

    /// `/proc/net/tcp` lines (its fixtures' folder is empty): the header, rows of both widths.
    const PROC_NET_TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:2382 00000000:0000 0A 00000000:00000000 00:00000000 00000000   200        0 31057 1 0000000000000000 100 0 0 10 0
   1: 0100007F:2382 0100007F:C8E2 01 00000000:00000000 00:00000000 00000000   200        0 31101 1 0000000000000000 20 4 30 10 -1
   2: 0A000005:2382 0A010203:C852 01 0003D000:00000000 01:00000014 00000000   200        0 31102 1 0000000000000000 20 4 30 10 -1
   3: 0A000005:2382 0A010204:D001 01 00000000:00000000 00:00000000 00000000   200        0 31103 1
   4: 0000000000000000FFFF00000A000005:2382 0000000000000000FFFF00000A010205:E001 01 00000010:00000000 00:00000000 00000000 200 0 3 1
";

    /// Every line of the kind's fixtures, and lines of other commands and garbage.
    fn pool(kind: &Kind) -> Vec<String> {
        let dir = format!(
            "{}/tests/fixtures/{}",
            env!("CARGO_MANIFEST_DIR"),
            kind.fixtures
        );
        let mut lines: Vec<String> = Vec::new();
        if let Ok(entries) = std::fs::read_dir(&dir) {
            let mut paths: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
            paths.sort();
            for p in paths
                .iter()
                .filter(|p| p.extension().is_some_and(|e| e == "txt"))
            {
                let text = std::fs::read_to_string(p).expect("a fixture");
                lines.extend(text.lines().map(str::to_string));
            }
        }
        lines.extend(PROC_NET_TCP.lines().map(str::to_string));
        lines.extend(
            [
                "",
                "garbage",
                ".....",
                " 6 active, 128 total, 7 maximum concurrent",
                "Userthreads",
                "Transactions",
                "  2370 14480848 netnorm 349 3682",
                "a6dc4e8  A-B--  a69ee18  502  33:0x25018  34:0x486fc  COMMIT  0:07  0",
            ]
            .map(str::to_string),
        );
        lines
    }

    /// One edit of a list of lines; the numbers are taken modulo the list's (or the pool's)
    /// length.
    #[derive(Debug, Clone)]
    enum Edit {
        /// A byte of the line replaced (a digit, a letter, a blank).
        Change(usize, usize, u8),
        Insert(usize, usize),
        Remove(usize),
        Duplicate(usize),
        Swap(usize, usize),
        Garbage(usize, String),
    }

    fn edit() -> impl Strategy<Value = Edit> {
        prop_oneof![
            4 => (any::<usize>(), any::<usize>(), prop::sample::select(b"0179aAfZ -:".to_vec()))
                .prop_map(|(i, at, b)| Edit::Change(i, at, b)),
            2 => (any::<usize>(), any::<usize>()).prop_map(|(i, p)| Edit::Insert(i, p)),
            2 => any::<usize>().prop_map(Edit::Remove),
            1 => any::<usize>().prop_map(Edit::Duplicate),
            1 => (any::<usize>(), any::<usize>()).prop_map(|(i, j)| Edit::Swap(i, j)),
            1 => (any::<usize>(), "[ -~]{0,40}").prop_map(|(i, g)| Edit::Garbage(i, g)),
        ]
    }

    fn apply(lines: &mut Vec<String>, pool: &[String], e: &Edit) {
        let n = lines.len();
        match e {
            Edit::Insert(i, p) => lines.insert(i % (n + 1), pool[p % pool.len()].clone()),
            Edit::Garbage(i, g) => lines.insert(i % (n + 1), g.clone()),
            _ if n == 0 => {}
            Edit::Change(i, at, b) => {
                let line = &mut lines[i % n];
                if !line.is_empty() {
                    let mut bytes = std::mem::take(line).into_bytes();
                    let at = at % bytes.len();
                    if bytes[at].is_ascii() {
                        bytes[at] = *b;
                    }
                    *line = String::from_utf8_lossy(&bytes).into_owned();
                }
            }
            Edit::Remove(i) => {
                lines.remove(i % n);
            }
            Edit::Duplicate(i) => {
                let l = lines[i % n].clone();
                lines.insert(i % n, l);
            }
            Edit::Swap(i, j) => lines.swap(i % n, j % n),
        }
    }

    /// The record's JSON, or the error.
    fn outcome(r: &Result<Parsed, ParseError>) -> Result<serde_json::Value, ParseError> {
        r.as_ref().map(|p| p.to_json()).map_err(Clone::clone)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(600))]

        /// A text parsed with the memo of the one before it (two rounds of random edits: lines
        /// changed, inserted, removed, duplicated, swapped, garbage) reads as it does alone.
        #[test]
        fn a_memo_parse_is_the_plain_parse(
            kind in 0..KINDS.len(),
            picks in prop::collection::vec(any::<usize>(), 0..60),
            first in prop::collection::vec(edit(), 0..12),
            second in prop::collection::vec(edit(), 0..12),
        ) {
            let kind = &KINDS[kind];
            let pool = pool(kind);
            let mut lines: Vec<String> = picks.iter().map(|p| pool[p % pool.len()].clone()).collect();
            let mut memo = LineMemo::default();
            for edits in [&Vec::new(), &first, &second] {
                for e in edits {
                    apply(&mut lines, &pool, e);
                }
                let text = lines.join("\n");
                let with = (kind.memo)(&text, &mut memo);
                let alone = (kind.plain)(&text);
                prop_assert_eq!(outcome(&with), outcome(&alone), "text:\n{}", text);
            }
        }
    }

    /// After a run of changed lines longer than the look-ahead with a row inserted among them
    /// (a new session's row amid sessions whose counters moved), the unchanged lines after it
    /// are still found, each at its row.
    #[test]
    fn rows_after_a_long_run_of_changed_lines_with_one_inserted_are_found() {
        let key = |s: String| super::LineKey::of(&s);
        let keys: Vec<_> = (0..40).map(|i| key(format!("row {i}"))).collect();
        let last = onstat_u::OnstatU::default();
        let mut recall = super::Recall {
            last: Some(&last),
            keys: &keys,
            at: 0,
            misses: 0,
            next: Vec::new(),
        };
        for (i, k) in keys.iter().enumerate().take(5) {
            assert_eq!(recall.find(*k).map(|(_, at)| at), Some(i));
        }
        // Rows 5..16 changed, and one more row among them: 12 lines not found.
        for j in 0..12 {
            assert!(recall.find(key(format!("changed {j}"))).is_none());
        }
        for (i, k) in keys.iter().enumerate().skip(16) {
            assert_eq!(recall.find(*k).map(|(_, at)| at), Some(i), "row {i}");
        }
    }

    /// A memo of another parser's record is not used: its rows are not this parser's.
    #[test]
    fn a_memo_of_another_record_type_is_not_used() {
        let u = "Userthreads\naddress  flags   sessid   user     tty      wait     tout locks nreads   nwrites\n\
                 a4d9e68  Y--P--- 21       niraj    -        a65e5a8  0    1     0        0\n \
                 1 active, 128 total, 1 maximum concurrent\n";
        let mut memo = LineMemo::default();
        read(u, &mut memo, onstat_u::parse_memo).expect("onstat -u");
        assert_eq!(memo.keys.len(), 1);
        let k = &KINDS[3];
        assert_eq!(k.fixtures, "onstat-k");
        assert_eq!(outcome(&(k.memo)(u, &mut memo)), outcome(&(k.plain)(u)));
    }
}
