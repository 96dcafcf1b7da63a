//! `onstat -s`: the latches (shared-memory resource locks) held or waited for, and by whom.

use super::header::Header;
use super::lex::{self, hex_addr, Line};
use super::onstat_b::{column, last_column};
use super::onstat_g_ath::is_elision;
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::Addr;
use nom::bytes::complete::take_till1;
use nom::Parser;
use serde::Serialize;

/// The whole output of one `onstat -s`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatS {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    pub latches: Vec<Latch>,
    /// Line numbers of lines made only of dots (`...`): a publisher's cut.
    pub elisions: Vec<usize>,
    pub unparsed: Vec<Unparsed>,
}

/// One row: `physlog  4410d5a8  0  0  45a616b8`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Latch {
    /// `physlog`, `LRU1`, `bf[34]`, ...
    pub name: String,
    pub address: Addr,
    /// The lock word, a count (non-zero while the latch is held); printed in hex, a number in
    /// JSON.
    pub lock: u64,
    /// What the holder waits on; `None` for 0.
    pub wait: Option<Addr>,
    /// The thread (rstcb, an `onstat -u` address) holding it; `None` for 0.
    pub userthread: Option<Addr>,
}

/// What a caller is told when the input is not `onstat -s` output at all.
const EXPECTED: &str = "onstat -s output: the title `Latches with lock or userthread set` or \
     the column header `name address lock wait userthread`, then latch rows \
     (`physlog 4410d5a8 0 0 45a616b8`)";

/// Parses the output of `onstat -s`.
pub fn parse(text: &str) -> Result<OnstatS, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatS, onstat; latches);

#[derive(Default)]
struct Body {
    /// Under the title or the column header: a row of a name and four hex words alone is too
    /// common a shape to be taken for a latch anywhere else.
    in_table: bool,
}

impl OnstatBody for Body {
    type Record = OnstatS;
    const EXPECTED: &'static str = EXPECTED;

    fn line<'a>(&mut self, out: &mut OnstatS, line: Line<'a>) -> Seen<'a> {
        let t = lex::trim_blanks(line.text);
        if t == "Latches with lock or userthread set"
            || lex::starts_with_words(t, &["name", "address", "lock", "wait", "userthread"])
        {
            self.in_table = true;
            return Seen::Known;
        }
        if is_elision(t) {
            out.elisions.push(line.no);
            return Seen::Skipped;
        }
        if !self.in_table {
            return Seen::Miss(Miss::new(
                t,
                "the title `Latches with lock or userthread set` before the rows",
            ));
        }
        match latch(t) {
            Ok(l) => {
                out.latches.push(l);
                Seen::Known
            }
            Err(miss) => Seen::Miss(miss),
        }
    }
}

/// A latch row: the name (one word), then address, lock, wait and userthread in hex.
fn latch(t: &str) -> Result<Latch, Miss<'_>> {
    let name_word = |i| take_till1(lex::is_blank).parse(i);
    let (i, name) = column(t, name_word, "a latch name")?;
    let (i, address) = column(i, hex_addr, "a latch address (hex)")?;
    let (i, lock) = column(i, hex_addr, "the lock word (hex)")?;
    let (i, wait) = column(i, hex_addr, "wait (hex, 0 for none)")?;
    let userthread = last_column(i, hex_addr, "a userthread (hex) at the end of the row")?;
    Ok(Latch {
        name: name.to_string(),
        address,
        lock: lock.0,
        wait: wait.non_zero(),
        userthread: userthread.non_zero(),
    })
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn latch_rows() {
        let l = latch("bf[34]   4467c0   0    0        6b29d8").expect("row");
        assert_eq!(l.name, "bf[34]");
        assert_eq!((l.wait, l.userthread), (None, Some(Addr(0x6b_29d8))));
        assert!(latch("bf[34] 4467c0 0 0").is_err());
        assert!(latch("bf[34] 4467c0 0 0 6b29d8 1").is_err());
        assert!(latch("bf[34] 4467c0 0 0 6b29dx").is_err());
    }
}
