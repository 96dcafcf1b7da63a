//! `onstat -g tpf [tid]`: per-thread profiles (locks, ISAM calls, buffers) including `lsus`,
//! the logical-log space a thread's transaction uses now: the way to find who fills the logs.

use super::header::Header;
use super::lex::{self, dec_u64, Line};
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::{Sid, Tid};
use nom::combinator::all_consuming;
use nom::Parser;
use serde::Serialize;
use std::sync::Arc;

/// The whole output of one `onstat -g tpf`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatGTpf {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    pub profiles: Vec<ThreadProfile>,
    pub unparsed: Vec<Unparsed>,
}

impl OnstatGTpf {
    /// The profiles by the log space they use now, most first.
    pub fn by_log_space(&self) -> Vec<&ThreadProfile> {
        let mut v: Vec<_> = self.profiles.iter().collect();
        v.sort_by_key(|p| std::cmp::Reverse(p.lsus.unwrap_or(0)));
        v
    }
}

/// One row: `945  1969  0  0  0  6181 ... 743580  0  6`, read by the column header above it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThreadProfile {
    pub tid: Tid,
    /// The session, where a version prints it (`sid`/`session` column).
    pub session: Option<Sid>,
    /// `lsus`: log space the thread's transaction currently uses (bytes).
    pub lsus: Option<u64>,
    /// `lsmx`: the most log space it has used (bytes).
    pub lsmx: Option<u64>,
    /// Every other column by its name as printed: `lkreqs` lock requests, `lkw` lock waits,
    /// `dl` deadlocks, `to` lock timeouts, `lgrs` log records, `isrd`/`iswr`/`isrw`/`isdl`/
    /// `isct`/`isrb` ISAM reads, writes, rewrites, deletes, commits, rollbacks, `lx` long
    /// transactions, `bfr`/`bfw` buffer reads and writes, `seq` sequential scans.
    pub counters: Counters,
}

/// A row's counters: the names sorted, shared by every row under one column header, and the
/// row's numbers in the same order (one allocation a row: 5,000 threads held ~20 MB as a map
/// of owned names per row, 2.2 MB as a list of shared names and numbers, 0.6 MB so).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Counters {
    names: Arc<[Arc<str>]>,
    values: Box<[u64]>,
}

impl Counters {
    /// The counter of column `name`, as printed (`seq`, `lkw`).
    pub fn get(&self, name: &str) -> Option<u64> {
        self.names
            .binary_search_by(|k| (**k).cmp(name))
            .ok()
            .and_then(|i| self.values.get(i).copied())
    }

    /// Name and number, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.names
            .iter()
            .map(|k| &**k)
            .zip(self.values.iter().copied())
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Whether two rows share their names (read under one column header).
    pub fn share_names(&self, other: &Counters) -> bool {
        Arc::ptr_eq(&self.names, &other.names)
    }
}

/// In JSON: an object from name to number, as a map would print it.
impl Serialize for Counters {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

impl ThreadProfile {
    /// The counter of column `name`, as printed (`seq`, `lkw`).
    pub fn counter(&self, name: &str) -> Option<u64> {
        self.counters.get(name)
    }
}

/// What a caller is told when the input is not `onstat -g tpf` output at all.
const EXPECTED: &str = "onstat -g tpf output: the title `Thread profiles`, the column header \
     `tid lkreqs lkw dl to lgrs isrd iswr isrw isdl isct isrb lx bfr bfw lsus lsmx seq`, then \
     one row of numbers per thread";

/// Parses the output of `onstat -g tpf` (all threads, or one: `onstat -g tpf <tid>`).
pub fn parse(text: &str) -> Result<OnstatGTpf, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatGTpf, onstat; profiles);

#[derive(Default)]
struct Body {
    /// The columns of the last column header: rows are numbers only, so they are read under
    /// a header and by its names.
    columns: Columns,
}

/// A column header: what each column is, and the counters' names sorted (shared by every
/// row's counters).
#[derive(Default)]
struct Columns {
    each: Vec<Column>,
    names: Arc<[Arc<str>]>,
}

#[derive(Clone, Copy)]
enum Column {
    Tid,
    Session,
    Lsus,
    Lsmx,
    /// A counter, at this place among the sorted names.
    Counter(usize),
}

impl Columns {
    fn of(header: &str) -> Columns {
        let words: Vec<&str> = lex::header_words(header).collect();
        let special = |w: &str| matches!(w, "tid" | "sid" | "session" | "lsus" | "lsmx");
        let mut names: Vec<&str> = words.iter().copied().filter(|w| !special(w)).collect();
        names.sort_unstable();
        names.dedup();
        let each = words
            .iter()
            .map(|w| match *w {
                "tid" => Column::Tid,
                "sid" | "session" => Column::Session,
                "lsus" => Column::Lsus,
                "lsmx" => Column::Lsmx,
                // A name printed twice has one place: the later number is kept, as a map
                // of them would.
                w => Column::Counter(names.binary_search(&w).unwrap_or_default()),
            })
            .collect();
        Columns {
            each,
            names: names.into_iter().map(Arc::from).collect(),
        }
    }

    fn is_empty(&self) -> bool {
        self.each.is_empty()
    }
}

impl OnstatBody for Body {
    type Record = OnstatGTpf;
    const EXPECTED: &'static str = EXPECTED;

    fn reserve(&mut self, out: &mut OnstatGTpf, lines: usize) {
        out.profiles.reserve(lines);
    }

    fn line<'a>(&mut self, out: &mut OnstatGTpf, line: Line<'a>) -> Seen<'a> {
        let t = lex::trim_blanks(line.text);
        if t == "Thread profiles" {
            return Seen::Known;
        }
        if is_column_header(t) {
            self.columns = Columns::of(t);
            return Seen::Known;
        }
        if self.columns.is_empty() {
            return Seen::Miss(Miss::new(
                t,
                "the column header `tid lkreqs lkw dl ...` before the rows",
            ));
        }
        match profile(&self.columns, t) {
            Ok(p) => {
                out.profiles.push(p);
                Seen::Known
            }
            Err(miss) => Seen::Miss(miss),
        }
    }
}

/// `tid lkreqs lkw dl to lgrs ...`: starts with `tid`, names `lkreqs` and `lsus`.
fn is_column_header(t: &str) -> bool {
    lex::starts_with_words(t, &["tid"])
        && lex::header_words(t).any(|w| w == "lkreqs")
        && lex::header_words(t).any(|w| w == "lsus")
}

/// One row: a number under each column name.
fn profile<'a>(columns: &Columns, t: &'a str) -> Result<ThreadProfile, Miss<'a>> {
    let mut p = ThreadProfile {
        tid: Tid(0),
        session: None,
        lsus: None,
        lsmx: None,
        counters: Counters::default(),
    };
    let mut values = vec![0; columns.names.len()];
    let mut words = lex::header_words(t);
    for column in &columns.each {
        let Some(w) = words.next() else {
            return Err(Miss::new(&t[t.len()..], "a number under every column name"));
        };
        let (_, n) = all_consuming(dec_u64)
            .parse(w)
            .map_err(|_| Miss::new(&t[lex::offset_in(t, w)..], "a number"))?;
        match *column {
            Column::Tid => p.tid = Tid(n),
            Column::Session => p.session = Some(Sid(n)),
            Column::Lsus => p.lsus = Some(n),
            Column::Lsmx => p.lsmx = Some(n),
            Column::Counter(i) => {
                if let Some(v) = values.get_mut(i) {
                    *v = n;
                }
            }
        }
    }
    if let Some(extra) = words.next() {
        return Err(Miss::new(
            &t[lex::offset_in(t, extra)..],
            "no more numbers than column names",
        ));
    }
    p.counters = Counters {
        names: columns.names.clone(),
        values: values.into_boxed_slice(),
    };
    Ok(p)
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    /// 5,000 threads are 70,000 counters: every row shares the header's names instead of
    /// owning a copy of each (a map of owned names per row held ~20 MB and grew the heap).
    #[test]
    fn rows_share_the_column_names() {
        let text = "\nThread profiles\ntid lkreqs lkw lsus lsmx seq\n1 2 3 4 5 6\n7 8 9 10 11 12\n";
        let out = parse(text).expect("parses");
        let (a, b) = (&out.profiles[0], &out.profiles[1]);
        assert_eq!(a.counters.len(), 3);
        assert!(
            a.counters.share_names(&b.counters),
            "the names are copied per row"
        );
        let names: Vec<&str> = a.counters.iter().map(|(k, _)| k).collect();
        assert_eq!(names, ["lkreqs", "lkw", "seq"]);
        assert_eq!(b.counter("lkw"), Some(9));
        assert_eq!(b.counter("nope"), None);
    }

    #[test]
    fn rows_by_the_header() {
        let cols = Columns::of("tid lkreqs lsus lsmx seq");
        let p = profile(&cols, "945 1969   743580 0    6").expect("row");
        assert_eq!((p.tid, p.lsus, p.lsmx), (Tid(945), Some(743_580), Some(0)));
        assert_eq!(p.counter("seq"), Some(6));
        assert!(profile(&cols, "945 1969 743580 0").is_err());
        assert!(profile(&cols, "945 1969 743580 0 6 7").is_err());
        assert!(profile(&cols, "945 1969 74x580 0 6").is_err());
    }
}
