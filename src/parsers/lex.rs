//! Shared lexing pieces for every parser: numbered lines, blanks, hex and decimal tokens, and
//! turning "the parser stopped here" into a `ParseError` with line and column.

use crate::error::ParseError;
use crate::ids::Addr;
use nom::bytes::complete::{take_till1, take_while, take_while1, take_while_m_n};
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

/// Zero or more blanks.
#[inline]
pub(crate) fn sp0(i: &str) -> PResult<'_, &str> {
    take_while(is_blank)(i)
}

/// One or more blanks.
#[inline]
pub(crate) fn sp1(i: &str) -> PResult<'_, &str> {
    take_while1(is_blank)(i)
}

/// A run of non-blank characters.
#[inline]
pub(crate) fn word(i: &str) -> PResult<'_, &str> {
    take_till1(is_blank)(i)
}

#[inline]
pub(crate) fn is_hex(c: char) -> bool {
    c.is_ascii_hexdigit()
}

#[inline]
pub(crate) fn is_lower_hex(c: char) -> bool {
    c.is_ascii_digit() || ('a'..='f').contains(&c)
}

/// A hex address of 1 to 16 digits, either case.
#[inline]
pub(crate) fn hex_addr(i: &str) -> PResult<'_, Addr> {
    map_res(take_while_m_n(1, 16, is_hex), |s: &str| {
        u64::from_str_radix(s, 16).map(Addr)
    })
    .parse(i)
}

/// A hex address in lowercase only: onstat prints addresses in lowercase, so an uppercase letter
/// after the digits is the next column (flags) run into this one (`40074140Y-BP---`).
#[inline]
pub(crate) fn lower_hex_addr(i: &str) -> PResult<'_, Addr> {
    map_res(take_while_m_n(1, 16, is_lower_hex), |s: &str| {
        u64::from_str_radix(s, 16).map(Addr)
    })
    .parse(i)
}

/// A hex number that fits in 32 bits (flag words).
#[inline]
pub(crate) fn hex_u32(i: &str) -> PResult<'_, u32> {
    map_res(take_while_m_n(1, 8, is_hex), |s: &str| {
        u32::from_str_radix(s, 16)
    })
    .parse(i)
}

/// An unsigned decimal number.
#[inline]
pub(crate) fn dec_u64(i: &str) -> PResult<'_, u64> {
    map_res(take_while1(|c: char| c.is_ascii_digit()), |s: &str| {
        s.parse::<u64>()
    })
    .parse(i)
}

/// An unsigned decimal number that fits in 32 bits.
#[inline]
pub(crate) fn dec_u32(i: &str) -> PResult<'_, u32> {
    map_res(take_while1(|c: char| c.is_ascii_digit()), |s: &str| {
        s.parse::<u32>()
    })
    .parse(i)
}

/// A signed decimal number (`-1` appears in some timeout columns).
#[inline]
pub(crate) fn dec_i64(i: &str) -> PResult<'_, i64> {
    let (rest, neg) = nom::combinator::opt(nom::character::complete::char('-')).parse(i)?;
    let (rest, v) = dec_u64(rest)?;
    let v = i64::try_from(v)
        .map_err(|_| nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::TooLarge)))?;
    Ok((rest, if neg.is_some() { -v } else { v }))
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
pub(crate) fn header_words(text: &str) -> impl Iterator<Item = &str> {
    text.split([' ', '\t']).filter(|w| !w.is_empty())
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
