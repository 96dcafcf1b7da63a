//! `onstat -g lmx` (locked mutexes) and, through `onstat_g_wmx`, `onstat -g wmx` (mutexes with
//! waiters): the same table under two titles: each mutex, its holder, lock count and waiters.

use super::header::Header;
use super::lex::{self, dec_u64, hex_addr, Line, PResult};
use super::onstat_b::column;
use super::onstat_g_ath::collapse_blanks;
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::{Addr, Tid};
use nom::bytes::complete::tag;
use nom::combinator::all_consuming;
use nom::Parser;
use serde::Serialize;

/// The whole output of one `onstat -g lmx` (or `onstat -g wmx`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatGLmx {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    pub mutexes: Vec<LockedMutex>,
    /// `Number of mutexes on VP free lists: 49` (newer versions).
    pub free_list_mutexes: Option<u64>,
    pub unparsed: Vec<Unparsed>,
}

impl OnstatGLmx {
    /// Every (waiting thread, mutex) pair: who waits on what, and for how long.
    pub fn waits(&self) -> impl Iterator<Item = (&MutexWaiter, &LockedMutex)> {
        self.mutexes
            .iter()
            .flat_map(|m| m.waiters.iter().map(move |w| (w, m)))
    }
}

/// One mutex: `134825  7000002043a9148  free_lock  11009  0  200  22921`, with more waiters
/// on continuation lines holding only `waiter waittime`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LockedMutex {
    pub mid: u64,
    pub addr: Addr,
    /// As printed, blanks collapsed (some names hold one: `ddh chain`).
    pub name: String,
    /// The thread (tid) holding it; `None` for `-` or 0.
    pub holder: Option<Tid>,
    pub lkcnt: u64,
    pub waiters: Vec<MutexWaiter>,
}

/// A thread waiting for a mutex and its wait time as printed (the manuals do not give a unit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MutexWaiter {
    pub tid: Tid,
    pub waittime: u64,
}

/// Which command's title opens the table: both print the same columns.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Table {
    Locked,
    WithWaiters,
}

impl Table {
    fn title(self) -> &'static str {
        match self {
            Table::Locked => "Locked mutexes:",
            Table::WithWaiters => "Mutexes with waiters:",
        }
    }
}

/// What a caller is told when the input is not `onstat -g lmx` output at all.
const EXPECTED_LMX: &str = "onstat -g lmx output: the title `Locked mutexes:` then the column \
     header `mid addr name holder lkcnt waiter waittime` and mutex rows \
     (`134825 7000002043a9148 free_lock 11009 0 200 22921`)";

/// What a caller is told when the input is not `onstat -g wmx` output at all.
const EXPECTED_WMX: &str = "onstat -g wmx output: the title `Mutexes with waiters:` \
     then the column header `mid addr name holder lkcnt waiter waittime` and mutex rows \
     (`134825 7000002043a9148 free_lock 11009 0 200 22921`)";

/// Parses the output of `onstat -g lmx`.
pub fn parse(text: &str) -> Result<OnstatGLmx, ParseError> {
    super::drive::<Body<false>>(text)
}

/// Parses the output of `onstat -g wmx` (see `onstat_g_wmx`).
pub(super) fn parse_wmx(text: &str) -> Result<OnstatGLmx, ParseError> {
    super::drive::<Body<true>>(text)
}

record!(OnstatGLmx, onstat; mutexes);

/// `WMX`: reading `onstat -g wmx` rather than `onstat -g lmx`.
#[derive(Default)]
struct Body<const WMX: bool> {
    /// Under this command's own title: the rows are the same in both commands, so only the
    /// title tells them apart.
    in_table: bool,
    /// The last line was a mutex or a continuation: more waiters may follow.
    continues: bool,
}

impl<const WMX: bool> Body<WMX> {
    const TABLE: Table = if WMX {
        Table::WithWaiters
    } else {
        Table::Locked
    };
}

impl<const WMX: bool> OnstatBody for Body<WMX> {
    type Record = OnstatGLmx;
    const EXPECTED: &'static str = if WMX { EXPECTED_WMX } else { EXPECTED_LMX };

    fn reserve(&mut self, out: &mut OnstatGLmx, lines: usize) {
        out.mutexes.reserve(lines);
    }

    fn line<'a>(&mut self, out: &mut OnstatGLmx, line: Line<'a>) -> Seen<'a> {
        let t = lex::trim_blanks(line.text);
        let continues = std::mem::take(&mut self.continues);
        if t == Self::TABLE.title() {
            self.in_table = true;
            return Seen::Known;
        }
        if !self.in_table {
            return Seen::Miss(Miss::new(
                t,
                if WMX {
                    "the title `Mutexes with waiters:` first"
                } else {
                    "the title `Locked mutexes:` first"
                },
            ));
        }
        if lex::starts_with_words(t, &["mid", "addr", "name", "holder", "lkcnt"]) {
            return Seen::Known;
        }
        if let Some(n) = free_list_line(t) {
            out.free_list_mutexes = Some(n);
            return Seen::Known;
        }
        if continues {
            if let (Some(w), Some(m)) = (waiter_pair(t), out.mutexes.last_mut()) {
                m.waiters.push(w);
                self.continues = true;
                return Seen::Known;
            }
        }
        match mutex_row(t) {
            Ok(m) => {
                out.mutexes.push(m);
                self.continues = true;
                Seen::Known
            }
            Err(miss) => {
                // The other command's title (a text holding both) ends this one's table.
                if t == Table::Locked.title() || t == Table::WithWaiters.title() {
                    self.in_table = false;
                }
                Seen::Miss(miss)
            }
        }
    }
}

/// `Number of mutexes on VP free lists: 49`
fn free_list_line(t: &str) -> Option<u64> {
    let parsed: PResult<'_, _> = all_consuming((
        tag("Number of mutexes on VP free lists:"),
        lex::sp0,
        dec_u64,
    ))
    .parse(t);
    parsed.ok().map(|(_, (_, _, n))| n)
}

/// A continuation line: `11010    22918` (waiter, waittime).
fn waiter_pair(t: &str) -> Option<MutexWaiter> {
    let parsed: PResult<'_, _> = all_consuming((dec_u64, lex::sp1, dec_u64)).parse(t);
    parsed.ok().map(|(_, (tid, _, waittime))| MutexWaiter {
        tid: Tid(tid),
        waittime,
    })
}

/// A holder: a tid, or `-` for none.
fn holder_word(w: &str) -> Option<Option<Tid>> {
    if w == "-" {
        return Some(None);
    }
    let n: u64 = all_consuming(dec_u64).parse(w).ok()?.1;
    Some((n != 0).then_some(Tid(n)))
}

fn number_word(w: &str) -> Option<u64> {
    all_consuming(dec_u64).parse(w).ok().map(|(_, n)| n)
}

/// One mutex row: mid and addr from the left; from the right, `holder lkcnt` and, when it has
/// a waiter, `waiter waittime`; the name is what lies between (it may hold a blank).
fn mutex_row(t: &str) -> Result<LockedMutex, Miss<'_>> {
    let (i, mid) = column(t, dec_u64, "a mutex id (mid, a number)")?;
    let (rest, addr) = column(i, hex_addr, "a mutex address (hex)")?;
    let words: Vec<&str> = lex::header_words(rest).collect();
    // Trailing words that can be numbers (`-` as a holder): 4 with a waiter, 2 without; the
    // name keeps at least one word.
    let numeric = words
        .iter()
        .rev()
        .take_while(|w| holder_word(w).is_some())
        .count()
        .min(words.len().saturating_sub(1));
    let tail = if numeric >= 4 { 4 } else { 2 };
    if numeric < 2 {
        return Err(Miss::new(
            rest,
            "a name then `holder lkcnt` (numbers) and maybe `waiter waittime`",
        ));
    }
    let first_tail = words[words.len() - tail];
    let name = collapse_blanks(&rest[..lex::offset_in(rest, first_tail)]);
    let nums = &words[words.len() - tail..];
    let bad = |w: &'static str| Miss::new(rest, w);
    let holder = holder_word(nums[0]).ok_or(bad("a holder (tid)"))?;
    let lkcnt = number_word(nums[1]).ok_or(bad("lkcnt (a number)"))?;
    let waiters = if tail == 4 {
        let tid = number_word(nums[2]).ok_or(bad("a waiter (tid)"))?;
        let waittime = number_word(nums[3]).ok_or(bad("a waittime (a number)"))?;
        vec![MutexWaiter {
            tid: Tid(tid),
            waittime,
        }]
    } else {
        Vec::new()
    };
    Ok(LockedMutex {
        mid,
        addr,
        name,
        holder,
        lkcnt,
        waiters,
    })
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn rows_with_and_without_a_waiter() {
        let m = mutex_row(
            "134825   7000002043a9148  free_lock          11009    0      200      22921",
        )
        .expect("waiter");
        assert_eq!((m.holder, m.lkcnt), (Some(Tid(11009)), 0));
        assert_eq!(
            m.waiters,
            [MutexWaiter {
                tid: Tid(200),
                waittime: 22921
            }]
        );
        let m = mutex_row("119006   7000001e684b928  td_mutex           298      0").expect("none");
        assert!(m.waiters.is_empty());
        let m = mutex_row("77  4a0b1c28  ddh chain  - 1").expect("blank in the name");
        assert_eq!((m.name.as_str(), m.holder), ("ddh chain", None));
        assert!(mutex_row("77 4a0b1c28 name").is_err());
        assert!(mutex_row("77 4a0b1c28 12 0").is_err());
    }

    #[test]
    fn continuation_pairs() {
        assert_eq!(
            waiter_pair("11010    22918").map(|w| w.tid),
            Some(Tid(11010))
        );
        assert!(waiter_pair("11010").is_none());
        assert!(waiter_pair("11010 2 3").is_none());
    }
}
