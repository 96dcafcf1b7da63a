//! Holds a fast row parser to its reference (the plain nom version kept in the tests): the same
//! row, or a miss at the same column needing the same thing, for every fixture line, each line
//! cut short and changed a character at a time, and generated rows.

use super::lex::offset_in;
use super::Miss;
use proptest::prelude::*;
use std::fmt::Debug;

/// A row parser's answer reduced to what a caller sees: the row, or where and why it missed.
fn seen<T>(text: &str, r: Result<T, Miss<'_>>) -> Result<T, (usize, &'static str)> {
    r.map_err(|m| (offset_in(text, m.at), m.needs))
}

/// Both parsers on `text`, compared.
pub(crate) fn check<T: PartialEq + Debug>(
    text: &str,
    fast: impl Fn(&str) -> Result<T, Miss<'_>>,
    reference: impl Fn(&str) -> Result<T, Miss<'_>>,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(
        seen(text, fast(text)),
        seen(text, reference(text)),
        "{:?}",
        text
    );
    Ok(())
}

/// Every line of every fixture in `tests/fixtures/` (all commands: another command's rows are
/// the garbage a parser must refuse the same way), without its line ending and trailing blanks
/// as the line splitter hands it over.
pub(crate) fn fixture_lines() -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "txt") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        out.extend(super::lex::lines(&text).map(|l| l.text.to_string()));
    }
    out
}

/// `line`, each of its cuts at a char boundary, and each character replaced by a few others or
/// removed: the ways a row goes wrong (a column cut, a letter in a number, a blank lost).
pub(crate) fn variants(line: &str) -> Vec<String> {
    let mut out = vec![line.to_string()];
    let bounds: Vec<usize> = line.char_indices().map(|(i, _)| i).collect();
    for (k, &i) in bounds.iter().enumerate() {
        let next = bounds.get(k + 1).copied().unwrap_or(line.len());
        out.push(line[..i].to_string());
        for with in ["", " ", "x", "0", "F", "-", "é", "  ", ":"] {
            out.push(format!("{}{with}{}", &line[..i], &line[next..]));
        }
    }
    out
}

/// Both parsers over every fixture line and its variants.
pub(crate) fn check_fixtures<T: PartialEq + Debug>(
    fast: impl Fn(&str) -> Result<T, Miss<'_>>,
    reference: impl Fn(&str) -> Result<T, Miss<'_>>,
) -> usize {
    let mut rows = 0;
    for line in fixture_lines() {
        rows += usize::from(fast(&line).is_ok());
        for v in variants(&line) {
            if let Err(e) = check(&v, &fast, &reference) {
                panic!("{e}");
            }
        }
    }
    rows
}

/// A blank run between columns: one blank most often, sometimes several or a tab.
pub(crate) fn gap() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => Just(" ".to_string()),
        2 => "[ ]{2,12}",
        1 => "[ \t]{1,3}",
    ]
}

/// A line of `columns` separated by [`gap`]s, with blanks before it sometimes.
pub(crate) fn row_of(columns: Vec<BoxedStrategy<String>>) -> impl Strategy<Value = String> {
    let n = columns.len();
    (
        prop_oneof![3 => Just(String::new()), 1 => "[ ]{1,4}"],
        columns,
        proptest::collection::vec(gap(), n),
    )
        .prop_map(|(lead, cols, gaps)| {
            let mut s = lead;
            for (k, (c, g)) in cols.into_iter().zip(gaps).enumerate() {
                if k > 0 {
                    s.push_str(&g);
                }
                s.push_str(&c);
            }
            s
        })
}

/// `row` changed once: a character replaced, removed or put in, or the line cut.
pub(crate) fn mutated(row: impl Strategy<Value = String>) -> impl Strategy<Value = String> {
    (
        row,
        any::<prop::sample::Index>(),
        0..4u8,
        prop::sample::select(vec!['x', ' ', '0', 'F', '-', 'é', '\t', ':', 'Z', '9']),
    )
        .prop_map(|(row, at, how, c)| {
            let bounds: Vec<usize> = row
                .char_indices()
                .map(|(i, _)| i)
                .chain([row.len()])
                .collect();
            let i = bounds[at.index(bounds.len())];
            let next = row[i..].chars().next().map_or(i, |ch| i + ch.len_utf8());
            match how {
                0 => format!("{}{c}{}", &row[..i], &row[next..]),
                1 => format!("{}{}", &row[..i], &row[next..]),
                2 => format!("{}{c}{}", &row[..i], &row[i..]),
                _ => row[..i].to_string(),
            }
        })
}

/// Lowercase hex of 1 to 16 digits, sometimes with leading zeros or uppercase.
pub(crate) fn hex_col() -> BoxedStrategy<String> {
    prop_oneof![
        4 => any::<u64>().prop_map(|v| format!("{:x}", v >> (v % 64))),
        1 => Just("0".to_string()),
        1 => "[0-9a-f]{1,18}",
        1 => "[0-9A-F]{1,10}",
    ]
    .boxed()
}

/// A decimal number, sometimes too large for 64 bits or with leading zeros.
pub(crate) fn dec_col() -> BoxedStrategy<String> {
    prop_oneof![
        6 => any::<u32>().prop_map(|v| (v >> (v % 32)).to_string()),
        1 => any::<u64>().prop_map(|v| v.to_string()),
        1 => "[0-9]{18,22}",
        1 => "0[0-9]{1,3}",
    ]
    .boxed()
}
