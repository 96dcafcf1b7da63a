//! `onstat -p`: the server profile, printed as pairs of lines (a line of counter names, a line
//! of their values), read into one map of counter name → value.

use super::header::Header;
use super::lex::{self, Line, PResult};
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use nom::character::complete::{char, digit1};
use nom::combinator::{all_consuming, map_res, recognize};
use nom::Parser;
use serde::Serialize;
use std::collections::BTreeMap;

/// The whole output of one `onstat -p`.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct OnstatP {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    /// Every counter by its name as printed (`dskreads`, `ixda-RA`, `ovuserthread`, ...); the two
    /// `%cached` columns are `%cached_read` and `%cached_write`.
    pub counters: BTreeMap<String, Counter>,
    pub unparsed: Vec<Unparsed>,
}

impl OnstatP {
    /// A counter's value as a float, whichever way it was printed.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.counters.get(name).map(|c| c.as_f64())
    }
}

/// A counter's value: most are whole numbers; `%cached`, `usercpu`, `syscpu` have decimals.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Counter {
    Count(u64),
    Decimal(f64),
}

impl Counter {
    pub fn as_f64(self) -> f64 {
        match self {
            // Profile counts stay far below 2^53, where f64 starts to round.
            Counter::Count(n) => n as f64,
            Counter::Decimal(x) => x,
        }
    }
}

/// What a caller is told when the input is not `onstat -p` output at all.
const EXPECTED: &str = "onstat -p output: the title `Profile`, a line of counter names \
     (`dskreads pagreads bufreads %cached ...`, `isamtot open start ...`) followed by a line \
     of their values";

/// Parses the output of `onstat -p`.
pub fn parse(text: &str) -> Result<OnstatP, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatP, onstat);

/// The first word of every line of names `onstat -p` prints, in its versions from 7.x to 15.0
/// (`ovtbls` and `ovlock` start the overflow line in older and newer versions). A line of names
/// starting with anything else is not the profile's (the other names on it may be new ones).
const FIRST_NAMES: &[&str] = &[
    "dskreads", "isamtot", "gp_read", "ovtbls", "ovlock", "bufwaits", "ixda-RA",
];

#[derive(Default)]
struct Body {
    /// The names of the last line of names, with the column each starts at, waiting for their
    /// values on the next line.
    names: Vec<(String, usize)>,
    /// `%cached` columns seen so far: the first is the reads', the second the writes'.
    cached: usize,
}

impl OnstatBody for Body {
    type Record = OnstatP;
    const EXPECTED: &'static str = EXPECTED;

    fn line<'a>(&mut self, out: &mut OnstatP, line: Line<'a>) -> Seen<'a> {
        let t = lex::trim_blanks(line.text);
        if t == "Profile" {
            self.names.clear();
            return Seen::Known;
        }
        if let Some(names) = names_line(line.text) {
            if names.first().is_some_and(|(n, _)| *n == "dskreads") {
                // A new profile (`onstat -r`): its `%cached` are read and write again.
                self.cached = 0;
            }
            self.names = names
                .into_iter()
                .map(|(name, col)| (self.name_of(name), col))
                .collect();
            return Seen::Known;
        }
        if self.names.is_empty() {
            return Seen::Miss(Miss::new(
                lex::trim_start_bytes(line.text, lex::is_blank_byte),
                "a line of counter names (`dskreads pagreads ...`) or the title `Profile`",
            ));
        }
        let names = std::mem::take(&mut self.names);
        match values(&names, line.text) {
            Ok(vals) => {
                for ((name, _), v) in names.into_iter().zip(vals) {
                    out.counters.insert(name, v);
                }
                Seen::Known
            }
            Err(miss) => Seen::Miss(miss),
        }
    }
}

impl Body {
    /// The name a counter is kept under: `%cached` is printed twice.
    fn name_of(&mut self, name: &str) -> String {
        if name != "%cached" {
            return name.to_string();
        }
        self.cached += 1;
        match self.cached {
            1 => "%cached_read".to_string(),
            2 => "%cached_write".to_string(),
            n => format!("%cached_{n}"),
        }
    }
}

/// A counter name: lowercase letters, digits and `_`, `-`, `%`, `/` (`gp_read`, `ixda-RA`,
/// `%cached`, `RA-pgsused`: some have capitals after the first letter).
fn is_name(word: &str) -> bool {
    let mut b = word.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_lowercase() || c == b'%' || c.is_ascii_uppercase())
        && word
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'%' | b'/'))
        && word.bytes().any(|c| c.is_ascii_alphabetic())
}

/// A line of counter names whose first is one the profile prints first on a line: the names
/// with the byte column each starts at.
fn names_line(text: &str) -> Option<Vec<(&str, usize)>> {
    let words = words_at(text);
    let (first, _) = words.first()?;
    if !FIRST_NAMES.contains(first) || !words.iter().all(|(w, _)| is_name(w)) {
        return None;
    }
    Some(words)
}

/// The blank-separated words of `text` with the byte column each starts at.
fn words_at(text: &str) -> Vec<(&str, usize)> {
    lex::header_words(text)
        .map(|w| (w, lex::offset_in(text, w)))
        .collect()
}

/// A value: a whole number or one with decimals (`1551.59`, `99.99`).
fn counter(i: &str) -> PResult<'_, Counter> {
    let int = map_res(digit1, |s: &str| s.parse::<u64>().map(Counter::Count));
    let dec = map_res(recognize((digit1, char('.'), digit1)), |s: &str| {
        s.parse::<f64>().map(Counter::Decimal)
    });
    // The decimal first: `99.99` is not the count 99.
    nom::branch::alt((dec, int)).parse(i)
}

/// The values under `names`. One value per name when every value ended at a blank; when a
/// value filled its column and ran into the next one (`2036003611299.99`: fewer words than
/// names), the run is cut where the next column starts on the names line, moved right by as
/// much as the values before it overflowed.
fn values<'a>(names: &[(String, usize)], text: &'a str) -> Result<Vec<Counter>, Miss<'a>> {
    let words = words_at(text);
    let pieces: Vec<&str> = if words.len() == names.len() {
        words.iter().map(|(w, _)| *w).collect()
    } else if words.len() < names.len() {
        split_run_together(names, &words).ok_or_else(|| {
            Miss::new(
                words.last().map_or(text, |(w, _)| *w),
                "one value under each counter name",
            )
        })?
    } else {
        let (extra, _) = words[names.len()];
        return Err(Miss::new(
            &text[lex::offset_in(text, extra)..],
            "no more values than counter names",
        ));
    };
    pieces
        .into_iter()
        .map(|p| {
            all_consuming(counter)
                .parse(p)
                .map(|(_, c)| c)
                .map_err(|_| Miss::new(&text[lex::offset_in(text, p)..], "a number"))
        })
        .collect()
}

/// Cuts words that ran into the next column; `None` when that does not give one piece per name.
/// A decimal counter (`%cached`, `usercpu`, `syscpu`) is printed with two decimals, so it ends
/// two digits after its point; a whole number ends where the next column starts on the names
/// line, moved right by as much as the values before it overflowed (a number that fills its
/// column exactly is the first to touch the next one).
fn split_run_together<'a>(
    names: &[(String, usize)],
    words: &[(&'a str, usize)],
) -> Option<Vec<&'a str>> {
    let mut out = Vec::with_capacity(names.len());
    // How far right of its name the current value starts (columns before it overflowed).
    let mut shift = 0usize;
    for &(word, start) in words {
        let (mut rest, mut at) = (word, start);
        loop {
            let field = out.len();
            let (name, col) = names.get(field)?;
            shift = shift.max(at.saturating_sub(*col));
            let cut = if is_decimal(name) {
                two_decimals_len(rest)?
            } else {
                match names.get(field + 1) {
                    Some((_, next_col)) if next_col + shift > at => {
                        (next_col + shift - at).min(rest.len())
                    }
                    _ => rest.len(),
                }
            };
            out.push(rest.get(..cut)?);
            rest = rest.get(cut..)?;
            at += cut;
            if rest.is_empty() {
                break;
            }
        }
    }
    (out.len() == names.len()).then_some(out)
}

/// The counters `onstat -p` prints with decimals.
fn is_decimal(name: &str) -> bool {
    name.starts_with("%cached") || name == "usercpu" || name == "syscpu"
}

/// The length of the `digits.dd` at the start of `s`.
fn two_decimals_len(s: &str) -> Option<usize> {
    let parsed: PResult<'_, &str> = recognize((
        digit1,
        char('.'),
        nom::bytes::complete::take_while_m_n(2, 2, |c: char| c.is_ascii_digit()),
    ))
    .parse(s);
    parsed.ok().map(|(_, d)| d.len())
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    fn names(line: &str) -> Vec<(String, usize)> {
        names_line(line)
            .expect("names")
            .into_iter()
            .map(|(n, c)| (n.to_string(), c))
            .collect()
    }

    #[test]
    fn values_one_per_name() {
        let n = names("dskreads  pagreads   bufreads   %cached dskwrits");
        let v = values(&n, "16934     47321      203600361  99.99   103113").expect("values");
        assert_eq!(v[2], Counter::Count(203_600_361));
        assert_eq!(v[3], Counter::Decimal(99.99));
    }

    #[test]
    fn values_that_ran_into_the_next_column() {
        let n = names("dskreads  pagreads   bufreads   %cached dskwrits   pagwrits");
        // bufreads filled its 11 columns; the rest moved on.
        let v = values(
            &n,
            "16934     47321      2036003611299.99   103113     158697",
        )
        .expect("cut at the column");
        assert_eq!(v[2], Counter::Count(20_360_036_112));
        assert_eq!(v[3], Counter::Decimal(99.99));
        assert_eq!(v[4], Counter::Count(103_113));
        // A decimal that overflowed its column ends two digits after its point.
        let n = names("ovlock    ovuserthread   ovbuff   usercpu  syscpu   numckpts");
        let v = values(
            &n,
            "0         0              0        1551234.59144.82   1822",
        )
        .expect("decimals");
        assert_eq!(v[3], Counter::Decimal(1_551_234.59));
        assert_eq!(v[4], Counter::Decimal(144.82));
        assert_eq!(v[5], Counter::Count(1822));
        // Two runs on one line, the second shifted by the first's overflow.
        let n = names("isamtot   open     start    read");
        let v = values(&n, "13921486509195777  1225720894191268").expect("two runs");
        assert_eq!(
            v,
            [
                Counter::Count(1_392_148_650),
                Counter::Count(9_195_777),
                Counter::Count(122_572_089),
                Counter::Count(4_191_268)
            ]
        );
    }

    #[test]
    fn not_values() {
        let n = names("isamtot   open     start    read");
        assert!(values(&n, "1 2 3 4 5").is_err());
        assert!(values(&n, "1 2 x 4").is_err());
        assert!(values(&n, "1 2").is_err());
        assert!(names_line("tid lkreqs lkw dl").is_none());
        assert!(names_line("dskreads 12").is_none());
    }
}
