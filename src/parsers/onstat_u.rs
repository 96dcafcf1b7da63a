//! `onstat -u`: user threads, their 7 flag characters and what they wait for.

use super::header::Header;
use super::lex::{
    self, dec_i64, dec_u64, hex_addr, last_word, lower_hex_addr, sp0, sp1, Line, PResult,
};
use super::{Miss, OnstatBody, Seen, Unparsed};
use crate::error::ParseError;
use crate::ids::{Addr, Sid};
use compact_str::CompactString;
use nom::bytes::complete::tag;
use nom::combinator::{all_consuming, opt};
use nom::Parser;
use serde::{Serialize, Serializer};

/// The whole output of one `onstat -u`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatU {
    pub header: Option<Header>,
    /// Set (and everything else empty) when onstat printed the off-line message.
    pub offline: Option<String>,
    pub threads: Vec<UserThread>,
    /// Footer `N active, M total, K maximum concurrent`.
    pub active: Option<u64>,
    pub total: Option<u64>,
    pub max_concurrent: Option<u64>,
    pub unparsed: Vec<Unparsed>,
}

/// One row of `onstat -u`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserThread {
    /// The rstcb address: what `onstat -X` owner/waiter and `onstat -k` owner refer to.
    pub address: Addr,
    pub flags: Flags,
    /// Decoded from flag position 1 (or `DEFUNCT`).
    pub wait_reason: Option<WaitReason>,
    pub sessid: Sid,
    pub user: CompactString,
    /// `None` for `-`.
    pub tty: Option<CompactString>,
    /// `None` for 0 (not waiting).
    pub wait: Option<Addr>,
    pub tout: i64,
    pub locks: u64,
    pub nreads: u64,
    pub nwrites: u64,
}

impl UserThread {
    /// Its reads and writes.
    pub fn counts(&self) -> (u64, u64) {
        (self.nreads, self.nwrites)
    }

    /// Whether this row (of a later `onstat -u`, at the same rstcb) is still the thread that had
    /// session `sid` and `counts` then: the server gives a freed rstcb, and now and then the
    /// sid, to the next session, whose counters start again from zero.
    pub fn continues(&self, sid: Sid, counts: (u64, u64)) -> bool {
        self.sessid == sid && self.nreads >= counts.0 && self.nwrites >= counts.1
    }
}

/// Position 1 of the flags: what the thread waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitReason {
    Buffer,
    Checkpoint,
    LogBuffer,
    Lock,
    Mutex,
    Transaction,
    Condition,
    Rollback,
    Defunct,
}

impl WaitReason {
    pub(crate) const ALL: [WaitReason; 9] = [
        WaitReason::Buffer,
        WaitReason::Checkpoint,
        WaitReason::LogBuffer,
        WaitReason::Lock,
        WaitReason::Mutex,
        WaitReason::Transaction,
        WaitReason::Condition,
        WaitReason::Rollback,
        WaitReason::Defunct,
    ];

    /// The flag letter onstat prints (`D` stands for `DEFUNCT`).
    pub fn letter(self) -> char {
        match self {
            WaitReason::Buffer => 'B',
            WaitReason::Checkpoint => 'C',
            WaitReason::LogBuffer => 'G',
            WaitReason::Lock => 'L',
            WaitReason::Mutex => 'S',
            WaitReason::Transaction => 'T',
            WaitReason::Condition => 'Y',
            WaitReason::Rollback => 'X',
            WaitReason::Defunct => 'D',
        }
    }

    pub fn from_letter(c: u8) -> Option<WaitReason> {
        Some(match c {
            b'B' => WaitReason::Buffer,
            b'C' => WaitReason::Checkpoint,
            b'G' => WaitReason::LogBuffer,
            b'L' => WaitReason::Lock,
            b'S' => WaitReason::Mutex,
            b'T' => WaitReason::Transaction,
            b'Y' => WaitReason::Condition,
            b'X' => WaitReason::Rollback,
            _ => return None,
        })
    }

    /// Short wait words for the WAIT column.
    pub(crate) fn short(self) -> &'static str {
        match self {
            WaitReason::Buffer => "buffer",
            WaitReason::Checkpoint => "checkpoint",
            WaitReason::LogBuffer => "log buffer",
            WaitReason::Lock => "lock",
            WaitReason::Mutex => "mutex",
            WaitReason::Transaction => "transact",
            WaitReason::Condition => "condition",
            WaitReason::Rollback => "rollback",
            WaitReason::Defunct => "defunct",
        }
    }

    /// In words, for the screen.
    pub(crate) fn words(self) -> &'static str {
        match self {
            WaitReason::Buffer => "buffer",
            WaitReason::Checkpoint => "checkpoint",
            WaitReason::LogBuffer => "log buffer write",
            WaitReason::Lock => "lock",
            WaitReason::Mutex => "mutex",
            WaitReason::Transaction => "transaction",
            WaitReason::Condition => "condition",
            WaitReason::Rollback => "rollback cleanup",
            WaitReason::Defunct => "defunct",
        }
    }
}

/// The 7 flag characters exactly as printed (`Y--P--D`, or the word `DEFUNCT`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Flags(pub [u8; 7]);

impl Flags {
    pub fn as_str(&self) -> &str {
        // Only ASCII is ever stored (the parser checks), so this cannot fail.
        std::str::from_utf8(&self.0).unwrap_or("???????")
    }

    pub fn is_defunct(&self) -> bool {
        &self.0 == b"DEFUNCT"
    }

    pub(crate) fn wait_reason(&self) -> Option<WaitReason> {
        if self.is_defunct() {
            Some(WaitReason::Defunct)
        } else {
            WaitReason::from_letter(self.0[0])
        }
    }

    /// Position 3: `A` backup thread, or the transaction state letter (B, P, X, C, R, H).
    pub fn txn_state(&self) -> Option<char> {
        (!self.is_defunct() && self.0[2] != b'-').then_some(self.0[2] as char)
    }

    /// Position 4: `P` primary thread of its session (PDQ helpers print `-`).
    pub fn is_primary(&self) -> bool {
        !self.is_defunct() && self.0[3] == b'P'
    }

    /// Position 5: `R` in a read call.
    pub fn in_read(&self) -> bool {
        !self.is_defunct() && self.0[4] == b'R'
    }

    /// Position 5: `X` in a critical section.
    pub fn in_critical_section(&self) -> bool {
        !self.is_defunct() && self.0[4] == b'X'
    }

    /// Position 6: `R` recovery thread.
    pub fn is_recovery(&self) -> bool {
        !self.is_defunct() && self.0[5] == b'R'
    }

    /// Position 7: `B` btree cleaner, `C` terminated awaiting cleanup, `D` daemon, `F` page
    /// cleaner, `M` monitor.
    pub fn thread_kind(&self) -> Option<char> {
        (!self.is_defunct() && self.0[6] != b'-').then_some(self.0[6] as char)
    }
}

impl std::fmt::Debug for Flags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Flags({})", self.as_str())
    }
}

impl std::fmt::Display for Flags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The flags read as the text they were printed as: a row keeps them as they are and lists,
/// sorts and compares them as text.
impl std::ops::Deref for Flags {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

/// Flags written out (`"L--P---"`), the first seven characters kept, `-` for those missing.
impl From<&str> for Flags {
    fn from(s: &str) -> Self {
        let mut flags = *b"-------";
        for (f, b) in flags.iter_mut().zip(s.bytes().filter(u8::is_ascii)) {
            *f = b;
        }
        Flags(flags)
    }
}

impl From<String> for Flags {
    fn from(s: String) -> Self {
        Flags::from(s.as_str())
    }
}

impl Serialize for Flags {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// What a caller is told when the input is not `onstat -u` output at all.
const EXPECTED: &str = "onstat -u output: the title `Userthreads`, the column header \
     `address flags sessid user tty wait tout locks nreads nwrites`, a thread row \
     (`a4d9e68  Y--P--- 21 niraj - a65e5a8 0 1 0 0`) or the footer \
     `N active, M total, K maximum concurrent`";

/// Parses the output of `onstat -u` (whole, or rows picked out by `grep`).
///
/// Rows are read by structure: address, flags and sessid from the left (they may run into each
/// other: `40074140Y-BP---81`), the four counters and the wait address from the right, and what
/// lies between is the user and the tty.
pub fn parse(text: &str) -> Result<OnstatU, ParseError> {
    super::drive::<Body>(text)
}

/// [`parse`], giving again the row of a line `memo` remembers instead of parsing it.
pub(crate) fn parse_memo(
    text: &str,
    memo: &super::memo::LineMemo,
) -> super::memo::Recalled<OnstatU> {
    super::drive_memo::<Body>(text, memo)
}

record!(OnstatU, onstat; threads);

#[derive(Default)]
struct Body;

impl OnstatBody for Body {
    type Record = OnstatU;
    const EXPECTED: &'static str = EXPECTED;

    fn reserve(&mut self, out: &mut OnstatU, lines: usize) {
        out.threads.reserve(lines);
    }

    // A row is its line's alone: nothing but the line's text goes into it.
    const MEMO: bool = true;

    fn rows(out: &OnstatU) -> usize {
        out.threads.len()
    }

    fn copy_row(last: &OnstatU, i: usize, out: &mut OnstatU) -> bool {
        super::memo::copy_row(&last.threads, i, &mut out.threads)
    }

    fn line<'a>(&mut self, out: &mut OnstatU, line: Line<'a>) -> Seen<'a> {
        let miss = match user_thread(line.text) {
            Ok(t) => {
                out.threads.push(t);
                return Seen::Row;
            }
            Err(miss) => miss,
        };
        if is_title(line.text) || is_column_header(line.text) {
            Seen::Known
        } else if let Some((active, total, max)) = footer(line.text) {
            out.active = Some(active);
            out.total = Some(total);
            out.max_concurrent = max;
            // `N active, N total[, N maximum concurrent]` ends `onstat -x` and old `onstat -t`
            // too: a row's worth of evidence, not a title's.
            Seen::Row
        } else {
            Seen::Miss(miss)
        }
    }
}

/// `Userthreads`
fn is_title(text: &str) -> bool {
    text.trim() == "Userthreads"
}

/// `address  flags   sessid   user     tty      wait     tout locks nreads   nwrites`
fn is_column_header(text: &str) -> bool {
    lex::starts_with_words(text, &["address", "flags", "sessid", "user"])
}

/// ` 6 active, 128 total, 7 maximum concurrent` (the last part is missing in some old builds).
fn footer(text: &str) -> Option<(u64, u64, Option<u64>)> {
    let parsed: PResult<'_, _> = all_consuming((
        sp0,
        dec_u64,
        sp1,
        tag("active,"),
        sp1,
        dec_u64,
        sp1,
        tag("total"),
        opt((tag(","), sp1, dec_u64, sp1, tag("maximum concurrent"))),
        sp0,
    ))
    .parse(text);
    let (_, (_, active, _, _, _, total, _, _, max, _)) = parsed.ok()?;
    Some((active, total, max.map(|(_, _, m, _, _)| m)))
}

#[inline]
fn skip_blanks(i: &str) -> &str {
    super::lex::trim_start_bytes(i, super::lex::is_blank_byte)
}

/// A flag character: a letter, `-` for "not set", `*` (position 2: transaction active during an
/// I/O failure).
#[inline]
fn is_flag_byte(b: u8) -> bool {
    b.is_ascii_uppercase() || b == b'-' || b == b'*'
}

/// Exactly 7 flag characters (`Y--P--D`, `DEFUNCT`), not followed by another flag character.
/// Bytes, not characters: flag characters are ASCII.
#[inline]
fn flags(i: &str) -> PResult<'_, Flags> {
    let b = i.as_bytes();
    let bytes: [u8; 7] = match b.get(..7).and_then(|f| <[u8; 7]>::try_from(f).ok()) {
        Some(f) if f.iter().all(|&c| is_flag_byte(c)) => f,
        _ => {
            return Err(nom::Err::Error(nom::error::Error::new(
                i,
                nom::error::ErrorKind::TakeWhileMN,
            )))
        }
    };
    if b.get(7).is_some_and(|&c| is_flag_byte(c)) {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::TooLarge,
        )));
    }
    // The 7 bytes are ASCII, so the rest starts at a char boundary.
    Ok((&i[7..], Flags(bytes)))
}

/// A whole blank-separated word parsed by `p`, or the word itself as the miss.
#[inline]
fn whole<'a, T>(
    word: &'a str,
    p: impl Fn(&'a str) -> PResult<'a, T>,
    needs: &'static str,
) -> Result<T, Miss<'a>> {
    match p(word) {
        Ok(("", v)) => Ok(v),
        _ => Err(Miss::new(word, needs)),
    }
}

/// Pops the last word of `rest` and parses it with `p`.
#[inline]
fn from_right<'a, T>(
    rest: &'a str,
    p: impl Fn(&'a str) -> PResult<'a, T>,
    needs: &'static str,
) -> Result<(&'a str, T), Miss<'a>> {
    let (before, w) = last_word(rest).ok_or(Miss::new(rest, needs))?;
    Ok((before, whole(w, p, needs)?))
}

/// One thread row.
fn user_thread(text: &str) -> Result<UserThread, Miss<'_>> {
    let i = skip_blanks(text);
    const ADDRESS: &str = "a hex rstcb address";
    let (after, address) = lower_hex_addr(i).map_err(|_| Miss::new(i, ADDRESS))?;
    // No blank needed: a wide address runs into the flags, the flags into the sessid. Anything
    // else right after the digits means this word was no address (`address`, `0x1f`).
    let next = after.as_bytes().first().copied();
    if !next.is_none_or(|b| lex::is_blank_byte(b) || is_flag_byte(b)) {
        return Err(Miss::new(i, ADDRESS));
    }
    let i = skip_blanks(after);
    let (i, flags) =
        flags(i).map_err(|_| Miss::new(i, "7 flag characters (`Y--P---`) or `DEFUNCT`"))?;
    let i = skip_blanks(i);
    let (i, sessid) = dec_u64(i).map_err(|_| Miss::new(i, "a session id"))?;

    let (rest, nwrites) = from_right(i, dec_u64, "nwrites (a number) at the end of the row")?;
    let (rest, nreads) = from_right(rest, dec_u64, "nreads (a number)")?;
    let (rest, locks) = from_right(rest, dec_u64, "locks (a number)")?;
    let (rest, tout) = from_right(rest, dec_i64, "tout (a number)")?;
    let (rest, wait) = from_right(rest, hex_addr, "a wait address (hex, 0 when not waiting)")?;

    let middle = super::lex::trim_blanks(rest);
    let (user, tty) = match middle.bytes().position(lex::is_blank_byte) {
        Some(b) => (
            &middle[..b],
            Some(super::lex::trim_start_bytes(
                &middle[b..],
                super::lex::is_blank_byte,
            )),
        ),
        None => (middle, None),
    };
    if user.is_empty() {
        return Err(Miss::new(rest, "a user name"));
    }
    Ok(UserThread {
        address,
        flags,
        wait_reason: flags.wait_reason(),
        sessid: Sid(sessid),
        user: CompactString::new(user),
        tty: tty.filter(|t| *t != "-").map(CompactString::new),
        wait: wait.non_zero(),
        tout,
        locks,
        nreads,
        nwrites,
    })
}

/// The row parser as nom's tokens read it, character by character: what [`user_thread`] must
/// give, rows and misses alike.
#[cfg(test)]
pub(crate) mod reference {
    use super::super::lex::reference::{dec_i64, dec_u64, hex_addr, lower_hex_addr};
    use super::super::lex::{last_word, PResult};
    use super::super::Miss;
    use super::{Flags, UserThread};
    use crate::ids::Sid;
    use compact_str::CompactString;
    use nom::bytes::complete::take_while_m_n;

    fn skip_blanks(i: &str) -> &str {
        super::super::lex::trim_start_bytes(i, super::super::lex::is_blank_byte)
    }

    fn is_flag_char(c: char) -> bool {
        c.is_ascii_uppercase() || c == '-' || c == '*'
    }

    fn flags(i: &str) -> PResult<'_, Flags> {
        let (rest, f) = take_while_m_n(7, 7, is_flag_char)(i)?;
        if rest.starts_with(is_flag_char) {
            return Err(nom::Err::Error(nom::error::Error::new(
                i,
                nom::error::ErrorKind::TooLarge,
            )));
        }
        let bytes: [u8; 7] = f.as_bytes().try_into().map_err(|_| {
            nom::Err::Error(nom::error::Error::new(
                i,
                nom::error::ErrorKind::LengthValue,
            ))
        })?;
        Ok((rest, Flags(bytes)))
    }

    fn whole<'a, T>(
        word: &'a str,
        p: impl Fn(&'a str) -> PResult<'a, T>,
        needs: &'static str,
    ) -> Result<T, Miss<'a>> {
        match p(word) {
            Ok(("", v)) => Ok(v),
            _ => Err(Miss::new(word, needs)),
        }
    }

    fn from_right<'a, T>(
        rest: &'a str,
        p: impl Fn(&'a str) -> PResult<'a, T>,
        needs: &'static str,
    ) -> Result<(&'a str, T), Miss<'a>> {
        let (before, w) = last_word(rest).ok_or(Miss::new(rest, needs))?;
        Ok((before, whole(w, p, needs)?))
    }

    pub(crate) fn user_thread(text: &str) -> Result<UserThread, Miss<'_>> {
        let i = skip_blanks(text);
        const ADDRESS: &str = "a hex rstcb address";
        let (after, address) = lower_hex_addr(i).map_err(|_| Miss::new(i, ADDRESS))?;
        if !(after.is_empty() || after.starts_with([' ', '\t']) || after.starts_with(is_flag_char))
        {
            return Err(Miss::new(i, ADDRESS));
        }
        let i = skip_blanks(after);
        let (i, flags) =
            flags(i).map_err(|_| Miss::new(i, "7 flag characters (`Y--P---`) or `DEFUNCT`"))?;
        let i = skip_blanks(i);
        let (i, sessid) = dec_u64(i).map_err(|_| Miss::new(i, "a session id"))?;

        let (rest, nwrites) = from_right(i, dec_u64, "nwrites (a number) at the end of the row")?;
        let (rest, nreads) = from_right(rest, dec_u64, "nreads (a number)")?;
        let (rest, locks) = from_right(rest, dec_u64, "locks (a number)")?;
        let (rest, tout) = from_right(rest, dec_i64, "tout (a number)")?;
        let (rest, wait) = from_right(rest, hex_addr, "a wait address (hex, 0 when not waiting)")?;

        let middle = super::super::lex::trim_blanks(rest);
        let (user, tty) = match middle.find([' ', '\t']) {
            Some(b) => (
                &middle[..b],
                Some(super::super::lex::trim_start_bytes(
                    &middle[b..],
                    super::super::lex::is_blank_byte,
                )),
            ),
            None => (middle, None),
        };
        if user.is_empty() {
            return Err(Miss::new(rest, "a user name"));
        }
        Ok(UserThread {
            address,
            flags,
            wait_reason: flags.wait_reason(),
            sessid: Sid(sessid),
            user: CompactString::new(user),
            tty: tty.filter(|t| *t != "-").map(CompactString::new),
            wait: wait.non_zero(),
            tout,
            locks,
            nreads,
            nwrites,
        })
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::super::lex::columnish;
    use super::super::same_rows::{check, check_fixtures, dec_col, gap, hex_col, mutated, row_of};
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn run_together_columns() {
        let t = user_thread("40074140Y-BP---81 informix - 0 0 0 12 5").expect("row");
        assert_eq!(t.address, Addr(0x4007_4140));
        assert_eq!(t.flags.as_str(), "Y-BP---");
        assert_eq!(t.sessid, Sid(81));
        assert_eq!(t.user, "informix");
        assert_eq!(t.tty, None);
        assert_eq!(t.wait, None);
        assert_eq!((t.tout, t.locks, t.nreads, t.nwrites), (0, 0, 12, 5));
    }

    #[test]
    fn eight_flag_characters_are_not_a_row() {
        assert!(user_thread("40074140 Y-BP---- 81 informix - 0 0 0 12 5").is_err());
        assert!(user_thread("40074140 Y-BP-- 81 informix - 0 0 0 12 5").is_err());
    }

    #[test]
    fn last_word_splits_on_the_last_blank() {
        assert_eq!(last_word("a b\tc  "), Some(("a b", "c")));
        assert_eq!(last_word("abc"), Some(("", "abc")));
        assert_eq!(last_word("   "), None);
    }

    /// A user name or a tty: words of letters, digits and `/`, `-` for no tty.
    fn name_col() -> BoxedStrategy<String> {
        prop_oneof![
            4 => "[a-z][a-z0-9_]{0,11}",
            2 => Just("-".to_string()),
            1 => "pts/[0-9]{1,2}",
            1 => "[A-Za-z0-9é/.-]{1,8}",
        ]
        .boxed()
    }

    fn flags_col() -> BoxedStrategy<String> {
        prop_oneof![
            6 => "[-BCGLSTYX][-*][-ABPXCRH][-P][-RX][-R][-BCDFM]",
            1 => Just("DEFUNCT".to_string()),
            1 => "[-A-Z*]{5,9}",
        ]
        .boxed()
    }

    /// An address, its flags and its session id, apart or run together (`40074140Y-BP---81`).
    fn head_col() -> BoxedStrategy<String> {
        prop_oneof![
            3 => (hex_col(), gap(), flags_col(), gap(), dec_col())
                .prop_map(|(a, g, f, h, s)| format!("{a}{g}{f}{h}{s}")),
            1 => (hex_col(), flags_col(), dec_col()).prop_map(|(a, f, s)| format!("{a}{f}{s}")),
        ]
        .boxed()
    }

    fn u_row() -> impl Strategy<Value = String> {
        let tout = prop_oneof![3 => dec_col(), 1 => Just("-1".to_string())].boxed();
        row_of(vec![
            head_col(),
            name_col(),
            name_col(),
            hex_col(),
            tout,
            dec_col(),
            dec_col(),
            dec_col(),
        ])
    }

    #[test]
    fn fixture_rows_read_as_the_reference_reads_them() {
        let rows = check_fixtures(user_thread, reference::user_thread);
        assert!(rows > 50, "{rows} rows");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn generated_rows_read_as_the_reference_reads_them(
            row in prop_oneof![3 => u_row(), 3 => mutated(u_row()), 1 => columnish()]
        ) {
            check(&row, user_thread, reference::user_thread)?;
        }
    }

    #[test]
    fn footer_variants() {
        assert_eq!(
            footer(" 6 active, 128 total, 7 maximum concurrent"),
            Some((6, 128, Some(7)))
        );
        assert_eq!(footer("6 active, 128 total"), Some((6, 128, None)));
        assert_eq!(footer("6 active"), None);
    }
}
