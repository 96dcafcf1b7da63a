//! Shared lexing pieces for every parser: numbered lines, blanks, hex and decimal tokens, and
//! turning "the parser stopped here" into a `ParseError` with line and column.

use crate::error::ParseError;
use crate::ids::Addr;
use nom::bytes::complete::take_while1;
use nom::combinator::map_res;
use nom::{IResult, Parser};

/// nom's result type over `&str` with its default error, used by every small parser here.
pub(crate) type PResult<'a, T> = IResult<&'a str, T>;

/// One input line: 1-based number and text without the line ending or trailing blanks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    pub(crate) no: usize,
    pub(crate) text: &'a str,
}

impl<'a> Line<'a> {
    /// An error at the position where `rest` (a suffix of this line's text) begins.
    pub(crate) fn error_at(&self, rest: &str, expected: impl Into<String>) -> ParseError {
        ParseError::at(self.no, self.text, offset_in(self.text, rest), expected)
    }

    pub(crate) fn is_blank(&self) -> bool {
        self.text.is_empty()
    }
}

/// Byte offset of `rest` inside `whole`, where `rest` is a suffix (or sub-slice) of `whole`.
pub(crate) fn offset_in(whole: &str, rest: &str) -> usize {
    let w = whole.as_ptr() as usize;
    let r = rest.as_ptr() as usize;
    if r >= w && r <= w + whole.len() {
        r - w
    } else {
        whole.len()
    }
}

/// Iterator over numbered lines. Splits on `\n` with memchr, drops a `\r` before it and trailing
/// blanks (onstat pads rows to 80 columns on some platforms; the padding means nothing).
#[derive(Debug, Clone)]
pub(crate) struct Lines<'a> {
    rest: &'a str,
    no: usize,
    done: bool,
}

pub(crate) fn lines(input: &str) -> Lines<'_> {
    Lines {
        rest: input,
        no: 0,
        done: input.is_empty(),
    }
}

impl<'a> Lines<'a> {
    /// The next line without consuming it.
    pub(crate) fn peek(&self) -> Option<Line<'a>> {
        self.clone().next()
    }

    /// Skips blank lines; returns the next non-blank one without consuming it.
    pub(crate) fn peek_non_blank(&mut self) -> Option<Line<'a>> {
        while let Some(l) = self.peek() {
            if l.is_blank() {
                self.next();
            } else {
                return Some(l);
            }
        }
        None
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = Line<'a>;

    #[inline]
    fn next(&mut self) -> Option<Line<'a>> {
        if self.done {
            return None;
        }
        let (raw, rest) = match memchr::memchr(b'\n', self.rest.as_bytes()) {
            Some(i) => (&self.rest[..i], &self.rest[i + 1..]),
            None => {
                self.done = true;
                (self.rest, "")
            }
        };
        if rest.is_empty() {
            self.done = true;
        }
        self.rest = rest;
        self.no += 1;
        Some(Line {
            no: self.no,
            text: trim_end_bytes(raw, |b| b == b' ' || b == b'\t' || b == b'\r'),
        })
    }
}

/// `s` without the trailing ASCII bytes `drop` accepts. Byte-wise: a char-pattern trim decodes
/// UTF-8 at every step, and every row of every output is trimmed several times.
#[inline]
pub(crate) fn trim_end_bytes(s: &str, drop: impl Fn(u8) -> bool) -> &str {
    let b = s.as_bytes();
    let mut n = b.len();
    while n > 0 && b[n - 1].is_ascii() && drop(b[n - 1]) {
        n -= 1;
    }
    // Only ASCII bytes were dropped, so `n` is a char boundary.
    s.get(..n).unwrap_or(s)
}

/// `s` without the leading ASCII bytes `drop` accepts.
#[inline]
pub(crate) fn trim_start_bytes(s: &str, drop: impl Fn(u8) -> bool) -> &str {
    let b = s.as_bytes();
    let mut n = 0;
    while n < b.len() && b[n].is_ascii() && drop(b[n]) {
        n += 1;
    }
    s.get(n..).unwrap_or(s)
}

/// `s` without leading and trailing blanks (spaces and tabs).
#[inline]
pub(crate) fn trim_blanks(s: &str) -> &str {
    trim_end_bytes(trim_start_bytes(s, is_blank_byte), is_blank_byte)
}

#[inline]
pub(crate) fn is_blank_byte(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// How many lines `text` has (at most one more than its newlines): a capacity for the rows
/// parsed from it, so row vectors are not grown and moved again and again.
pub(crate) fn line_count_hint(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1
}

/// Room to reserve for the rows of a table output: its lines, but no more than rows of 48 bytes
/// would make (real rows are longer; a shorter one costs the vector one doubling). Garbage of
/// short lines (`yes x`) must not reserve a row, ~100 bytes, per 2-byte line.
pub(crate) fn row_count_hint(text: &str) -> usize {
    line_count_hint(text).min(text.len() / 48 + 1)
}

#[inline]
pub(crate) fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

// The tokens below are byte loops rather than nom's `take_while*` over `&str`: those decode
// UTF-8 a character at a time and then parse the run again (`from_str_radix`), and every row
// of every per-second output goes through them. They return exactly what the nom versions
// return, errors included (the tests keep those versions as the reference).

/// nom's error for `i`: what a failed token returns.
#[inline]
fn token_error<T>(i: &str, kind: nom::error::ErrorKind) -> PResult<'_, T> {
    Err(nom::Err::Error(nom::error::Error::new(i, kind)))
}

/// How many leading bytes of `s` are ASCII blanks. A blank is ASCII, so the count is a char
/// boundary.
#[inline]
fn blank_run(s: &str) -> usize {
    s.bytes().take_while(|&b| is_blank_byte(b)).count()
}

/// Zero or more blanks.
#[inline]
pub(crate) fn sp0(i: &str) -> PResult<'_, &str> {
    let n = blank_run(i);
    Ok((&i[n..], &i[..n]))
}

/// One or more blanks.
#[inline]
pub(crate) fn sp1(i: &str) -> PResult<'_, &str> {
    match blank_run(i) {
        0 => token_error(i, nom::error::ErrorKind::TakeWhile1),
        n => Ok((&i[n..], &i[..n])),
    }
}

/// A run of non-blank characters.
#[inline]
pub(crate) fn word(i: &str) -> PResult<'_, &str> {
    // Stops at an ASCII blank (a char boundary) or the end.
    match i.bytes().position(is_blank_byte).unwrap_or(i.len()) {
        0 => token_error(i, nom::error::ErrorKind::TakeTill1),
        n => Ok((&i[n..], &i[..n])),
    }
}

#[inline]
pub(crate) fn is_hex(c: char) -> bool {
    c.is_ascii_hexdigit()
}

/// The value of the hex digits at the start of `i`, at most `max` of them (16 at most, so the
/// value fits), uppercase digits only when `upper`: (their count, the value).
#[inline]
fn hex_digits(i: &str, max: usize, upper: bool) -> (usize, u64) {
    let mut v = 0u64;
    let mut n = 0;
    for &b in i.as_bytes().iter().take(max) {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' if upper => b - b'A' + 10,
            _ => break,
        };
        v = (v << 4) | u64::from(d);
        n += 1;
    }
    (n, v)
}

/// 1 to `max` hex digits (`max` <= 16) as a number.
#[inline]
fn hex_token(i: &str, max: usize, upper: bool) -> PResult<'_, u64> {
    match hex_digits(i, max, upper) {
        (0, _) => token_error(i, nom::error::ErrorKind::TakeWhileMN),
        // Only ASCII digits were read, so `n` is a char boundary.
        (n, v) => Ok((&i[n..], v)),
    }
}

/// A hex address of 1 to 16 digits, either case.
#[inline]
pub(crate) fn hex_addr(i: &str) -> PResult<'_, Addr> {
    hex_token(i, 16, true).map(|(rest, v)| (rest, Addr(v)))
}

/// A hex number of 1 to 16 digits, either case.
#[inline]
pub(crate) fn hex_u64(i: &str) -> PResult<'_, u64> {
    hex_token(i, 16, true)
}

/// A hex address in lowercase only: onstat prints addresses in lowercase, so an uppercase letter
/// after the digits is the next column (flags) run into this one (`40074140Y-BP---`).
#[inline]
pub(crate) fn lower_hex_addr(i: &str) -> PResult<'_, Addr> {
    hex_token(i, 16, false).map(|(rest, v)| (rest, Addr(v)))
}

/// A hex number that fits in 32 bits (flag words).
#[inline]
pub(crate) fn hex_u32(i: &str) -> PResult<'_, u32> {
    // 8 digits at most always fit.
    hex_token(i, 8, true).map(|(rest, v)| (rest, v as u32))
}

/// An unsigned decimal number.
#[inline]
pub(crate) fn dec_u64(i: &str) -> PResult<'_, u64> {
    let b = i.as_bytes();
    let mut v = 0u64;
    let mut fits = true;
    let mut n = 0;
    while let Some(d) = b.get(n).filter(|d| d.is_ascii_digit()) {
        // A number too large is still read to its end: the error is on the whole run, as
        // `str::parse` gives it.
        match v
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d - b'0')))
        {
            Some(x) => v = x,
            None => fits = false,
        }
        n += 1;
    }
    match (n, fits) {
        (0, _) => token_error(i, nom::error::ErrorKind::TakeWhile1),
        (_, false) => token_error(i, nom::error::ErrorKind::MapRes),
        (n, true) => Ok((&i[n..], v)),
    }
}

/// An unsigned decimal number that fits in 32 bits.
#[inline]
pub(crate) fn dec_u32(i: &str) -> PResult<'_, u32> {
    let (rest, v) = dec_u64(i)?;
    match u32::try_from(v) {
        Ok(v) => Ok((rest, v)),
        Err(_) => token_error(i, nom::error::ErrorKind::MapRes),
    }
}

/// A signed decimal number (`-1` appears in some timeout columns).
#[inline]
pub(crate) fn dec_i64(i: &str) -> PResult<'_, i64> {
    let (rest, neg) = match i.strip_prefix('-') {
        Some(rest) => (rest, true),
        None => (i, false),
    };
    let (rest, v) = dec_u64(rest)?;
    let v = i64::try_from(v)
        .map_err(|_| nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::TooLarge)))?;
    Ok((rest, if neg { -v } else { v }))
}

/// An unsigned decimal number with or without a fraction (`1551.59`, `0.00`, `42`), as onstat
/// prints CPU seconds, percentages and ratios.
#[inline]
pub(crate) fn dec_f64(i: &str) -> PResult<'_, f64> {
    map_res(
        nom::combinator::recognize((
            take_while1(|c: char| c.is_ascii_digit()),
            nom::combinator::opt((
                nom::character::complete::char('.'),
                take_while1(|c: char| c.is_ascii_digit()),
            )),
        )),
        |s: &str| s.parse::<f64>(),
    )
    .parse(i)
}

/// Splits the last blank-separated word off `text`: (`text` before it, the word). `None` when
/// `text` holds nothing but blanks.
#[inline]
pub(crate) fn last_word(text: &str) -> Option<(&str, &str)> {
    let t = trim_end_bytes(text, is_blank_byte);
    if t.is_empty() {
        return None;
    }
    // Blanks are ASCII, so the byte after one is a char boundary.
    match t.bytes().rposition(|b| b == b' ' || b == b'\t') {
        Some(i) => Some((&t[..i], &t[i + 1..])),
        None => Some(("", t)),
    }
}

/// True when the whole line consists of `-` runs and blanks (a table rule).
pub(crate) fn is_rule(text: &str) -> bool {
    text.contains('-') && text.chars().all(|c| c == '-' || is_blank(c))
}

/// The blank-separated words of a column header line, used to recognise a header by its words
/// whatever the padding (`address  flags   sessid ...`).
pub(crate) fn header_words(text: &str) -> Words<'_> {
    Words { rest: text }
}

/// The blank-separated words of a line, found byte by byte: a blank is ASCII, so no character
/// needs decoding (every line that is no row is tried against a header's words).
#[derive(Debug, Clone)]
pub(crate) struct Words<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let rest = trim_start_bytes(self.rest, is_blank_byte);
        if rest.is_empty() {
            self.rest = rest;
            return None;
        }
        let end = rest.bytes().position(is_blank_byte).unwrap_or(rest.len());
        self.rest = &rest[end..];
        Some(&rest[..end])
    }
}

/// True when `text`'s words start with `expected` (case-sensitive).
pub(crate) fn starts_with_words(text: &str, expected: &[&str]) -> bool {
    let mut w = header_words(text);
    expected.iter().all(|e| w.next() == Some(*e))
}

/// True for a shell prompt line that runs one of `commands`, as a capture pasted from a terminal
/// starts: `$ onstat -g dri`, `informix@db01:~> onstat -l`, `[informix@db01 ~]$ onstat -u`,
/// `# onstat -d`, `db01% /opt/informix/bin/onstat -k`, or the command alone (`onstat -l`). The
/// command (its path's last part) must be one of `commands`, followed only by options and
/// arguments; whatever comes before it must end in a prompt character (`$`, `#`, `>`, `%`) and
/// a blank. No output line of these commands looks like that.
pub(crate) fn is_prompt_line(text: &str, commands: &[&str]) -> bool {
    let t = trim_blanks(text);
    let mut start = 0;
    for word in t.split([' ', '\t']) {
        let at = offset_in(t, word);
        if at < start || word.is_empty() {
            continue;
        }
        start = at + word.len();
        let name = word.rsplit('/').next().unwrap_or(word);
        if !commands.contains(&name) {
            continue;
        }
        let before = trim_end_bytes(&t[..at], is_blank_byte);
        let prompt_ok =
            before.is_empty() || (at > before.len() && before.ends_with(['$', '#', '>', '%']));
        let after = trim_blanks(&t[at + word.len()..]);
        let args_ok = after.is_empty() || after.starts_with('-');
        return prompt_ok && args_ok;
    }
    false
}

/// Skips the first non-blank line when it is a prompt line running one of `commands` (see
/// [`is_prompt_line`]); leaves `lines` untouched otherwise.
pub(crate) fn skip_prompt_line(lines: &mut Lines<'_>, commands: &[&str]) {
    let mut ahead = lines.clone();
    if let Some(first) = ahead.peek_non_blank() {
        if is_prompt_line(first.text, commands) {
            ahead.next();
            *lines = ahead;
        }
    }
}

/// The tokens as nom's combinators read them: what the byte loops above must give, results
/// and errors alike.
#[cfg(test)]
pub(crate) mod reference {
    use super::{is_blank, is_hex, PResult};
    use crate::ids::Addr;
    use nom::bytes::complete::{take_till1, take_while, take_while1, take_while_m_n};
    use nom::combinator::map_res;
    use nom::Parser;

    pub(crate) fn sp0(i: &str) -> PResult<'_, &str> {
        take_while(is_blank)(i)
    }

    pub(crate) fn sp1(i: &str) -> PResult<'_, &str> {
        take_while1(is_blank)(i)
    }

    pub(crate) fn word(i: &str) -> PResult<'_, &str> {
        take_till1(is_blank)(i)
    }

    pub(crate) fn hex_addr(i: &str) -> PResult<'_, Addr> {
        map_res(take_while_m_n(1, 16, is_hex), |s: &str| {
            u64::from_str_radix(s, 16).map(Addr)
        })
        .parse(i)
    }

    fn is_lower_hex(c: char) -> bool {
        c.is_ascii_digit() || ('a'..='f').contains(&c)
    }

    pub(crate) fn lower_hex_addr(i: &str) -> PResult<'_, Addr> {
        map_res(take_while_m_n(1, 16, is_lower_hex), |s: &str| {
            u64::from_str_radix(s, 16).map(Addr)
        })
        .parse(i)
    }

    pub(crate) fn hex_u32(i: &str) -> PResult<'_, u32> {
        map_res(take_while_m_n(1, 8, is_hex), |s: &str| {
            u32::from_str_radix(s, 16)
        })
        .parse(i)
    }

    pub(crate) fn dec_u64(i: &str) -> PResult<'_, u64> {
        map_res(take_while1(|c: char| c.is_ascii_digit()), |s: &str| {
            s.parse::<u64>()
        })
        .parse(i)
    }

    pub(crate) fn dec_u32(i: &str) -> PResult<'_, u32> {
        map_res(take_while1(|c: char| c.is_ascii_digit()), |s: &str| {
            s.parse::<u32>()
        })
        .parse(i)
    }

    pub(crate) fn dec_i64(i: &str) -> PResult<'_, i64> {
        let (rest, neg) = nom::combinator::opt(nom::character::complete::char('-')).parse(i)?;
        let (rest, v) = dec_u64(rest)?;
        let v = i64::try_from(v).map_err(|_| {
            nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::TooLarge))
        })?;
        Ok((rest, if neg.is_some() { -v } else { v }))
    }

    pub(crate) fn header_words(text: &str) -> impl Iterator<Item = &str> {
        text.split([' ', '\t']).filter(|w| !w.is_empty())
    }
}

/// Text that looks like columns: digits, hex in both cases, blanks, signs, long runs that
/// overflow, letters that end a token, and a few non-ASCII characters.
#[cfg(test)]
pub(crate) fn columnish() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let piece = prop_oneof![
        4 => "[0-9]{1,24}",
        3 => "[0-9a-fA-F]{1,20}",
        3 => "[ \t]{1,4}",
        1 => "[-+:.xXgG*_]",
        1 => "[a-zA-Z]{1,6}",
        1 => "[é€\u{a0}]",
        1 => Just("18446744073709551615".to_string()),
        1 => Just("18446744073709551616".to_string()),
        1 => Just("4294967296".to_string()),
        1 => Just("9223372036854775808".to_string()),
    ];
    proptest::collection::vec(piece, 0..8).prop_map(|v| v.concat())
}

#[cfg(test)]
mod equivalence {
    use super::*;
    use proptest::prelude::*;

    /// Every token over `text` and each of its suffixes that starts at a char boundary.
    fn check_all(text: &str) -> Result<(), TestCaseError> {
        for (at, _) in text.char_indices().chain([(text.len(), ' ')]) {
            let i = &text[at..];
            prop_assert_eq!(sp0(i), reference::sp0(i), "sp0 {:?}", i);
            prop_assert_eq!(sp1(i), reference::sp1(i), "sp1 {:?}", i);
            prop_assert_eq!(word(i), reference::word(i), "word {:?}", i);
            prop_assert_eq!(hex_addr(i), reference::hex_addr(i), "hex_addr {:?}", i);
            prop_assert_eq!(
                hex_u64(i),
                reference::hex_addr(i).map(|(r, a)| (r, a.0)),
                "hex_u64 {:?}",
                i
            );
            prop_assert_eq!(
                lower_hex_addr(i),
                reference::lower_hex_addr(i),
                "lower_hex_addr {:?}",
                i
            );
            prop_assert_eq!(hex_u32(i), reference::hex_u32(i), "hex_u32 {:?}", i);
            prop_assert_eq!(dec_u64(i), reference::dec_u64(i), "dec_u64 {:?}", i);
            prop_assert_eq!(dec_u32(i), reference::dec_u32(i), "dec_u32 {:?}", i);
            prop_assert_eq!(dec_i64(i), reference::dec_i64(i), "dec_i64 {:?}", i);
            prop_assert_eq!(
                header_words(i).collect::<Vec<_>>(),
                reference::header_words(i).collect::<Vec<_>>(),
                "header_words {:?}",
                i
            );
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn tokens_read_as_nom_reads_them(text in columnish()) {
            check_all(&text)?;
        }
    }

    #[test]
    fn tokens_at_their_edges() {
        for text in [
            "",
            " ",
            "0",
            "ffffffffffffffff",
            "ffffffffffffffff0",
            "FFFFFFFFFFFFFFFFFF",
            "abcdefABCDEF",
            "fffffffff",
            "18446744073709551615 x",
            "18446744073709551616",
            "4294967295",
            "4294967296",
            "-9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "--1",
            "-",
            "+1",
            "0x1f",
            "\t\t a\tb  ",
            "é1",
            "1é",
            "a\u{a0}b",
        ] {
            check_all(text).expect(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_numbered_and_trimmed() {
        let v: Vec<_> = lines("a  \r\n\nb\t\nc").collect();
        assert_eq!(
            v,
            vec![
                Line { no: 1, text: "a" },
                Line { no: 2, text: "" },
                Line { no: 3, text: "b" },
                Line { no: 4, text: "c" },
            ]
        );
        assert_eq!(lines("x\n").count(), 1);
        assert_eq!(lines("").count(), 0);
    }

    #[test]
    fn byte_trims_stop_at_the_first_kept_character() {
        assert_eq!(trim_blanks(" \t ab c \t"), "ab c");
        assert_eq!(trim_blanks("   "), "");
        assert_eq!(trim_end_bytes("é  ", is_blank_byte), "é");
        assert_eq!(trim_start_bytes("  é", is_blank_byte), "é");
        assert_eq!(trim_end_bytes("ab\r", |b| b == b'\r'), "ab");
    }

    #[test]
    fn hex_tokens() {
        assert_eq!(hex_addr("14a58b98 rest"), Ok((" rest", Addr(0x14a58b98))));
        assert_eq!(
            lower_hex_addr("40074140Y-BP---81"),
            Ok(("Y-BP---81", Addr(0x40074140)))
        );
        assert!(hex_addr("zz").is_err());
        assert_eq!(dec_i64("-1 x"), Ok((" x", -1)));
        assert!(dec_u64("99999999999999999999999").is_err());
    }

    #[test]
    fn rules_and_header_words() {
        assert!(is_rule(" ------ ----"));
        assert!(!is_rule("   "));
        assert!(starts_with_words(
            "address  flags   sessid",
            &["address", "flags"]
        ));
        assert!(!starts_with_words("address", &["address", "flags"]));
    }

    #[test]
    fn error_positions_come_from_the_rest_slice() {
        let l = Line {
            no: 7,
            text: "abc def",
        };
        let e = l.error_at(&l.text[4..], "a number");
        assert_eq!((e.line, e.column), (7, 5));
    }

    #[test]
    fn prompt_lines_that_run_the_command() {
        for yes in [
            "$ onstat -g dri",
            "informix@db01:~> onstat -l",
            "[informix@db01 ~]$ onstat -u",
            "# onstat -d",
            "db01% /opt/informix/bin/onstat -k",
            "  onstat -r 5",
            "onstat",
        ] {
            assert!(is_prompt_line(yes, &["onstat"]), "{yes}");
        }
        for no in [
            "$ ls -l",
            "$onstat -u",
            "onstat: cannot attach",
            "echo onstat -u",
            "onstat_wrapper -u",
            "$ onstat foo",
            "Userthreads",
            "IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line",
        ] {
            assert!(!is_prompt_line(no, &["onstat"]), "{no}");
        }
        let mut l = lines("\n$ onstat -u\nUserthreads\n");
        skip_prompt_line(&mut l, &["onstat"]);
        assert_eq!(l.next().map(|l| l.text), Some("Userthreads"));
        let mut l = lines("Userthreads\n");
        skip_prompt_line(&mut l, &["onstat"]);
        assert_eq!(l.next().map(|l| l.no), Some(1));
    }
}
