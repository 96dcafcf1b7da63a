//! `sysmaster:systabnames` read through dbaccess: partnum → `db:'owner'.table`, so the partnums
//! `onstat -k` prints (tblsnum) name their tables.
//!
//! ifxtop asks for one column, `partnum|db:'owner'.table`, so the output layout does not depend
//! on dbaccess's column widths: `    1048578|stores:'informix'.customer`.

use super::lex::{lines, Line};
use super::Unparsed;
use crate::error::ParseError;
use serde::Serialize;
use std::collections::BTreeMap;

/// The query ifxtop sends on dbaccess's standard input.
pub(crate) const QUERY: &str =
    "select partnum || '|' || trim(dbsname) || ':''' || trim(owner) || '''.' \
                         || trim(tabname) from systabnames;\n";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Systabnames {
    /// partnum → `db:'owner'.table`.
    pub(crate) tables: BTreeMap<u32, String>,
    pub unparsed: Vec<Unparsed>,
}

impl Systabnames {
    pub fn table(&self, partnum: u64) -> Option<&str> {
        // `onstat -k` reads partnums as wide as 15.0 prints them; systabnames holds 32-bit ones.
        let partnum = u32::try_from(partnum).ok()?;
        self.tables.get(&partnum).map(String::as_str)
    }
}

fn is_chatter(l: &Line<'_>) -> bool {
    let t = l.text.trim();
    t.is_empty()
        || t == "(expression)"
        || t.starts_with("Database selected")
        || t.starts_with("Database closed")
        || t.ends_with("row(s) retrieved.")
        || t == "No rows found."
}

pub(crate) fn parse(text: &str) -> Result<Systabnames, ParseError> {
    let mut out = Systabnames::default();
    let mut recognised = false;
    for line in lines(text) {
        if is_chatter(&line) {
            recognised |= !line.text.trim().is_empty();
            continue;
        }
        let t = line.text.trim();
        let parsed = t
            .split_once('|')
            .and_then(|(num, name)| Some((num.trim().parse::<u32>().ok()?, name.trim())));
        match parsed {
            Some((partnum, name)) if !name.is_empty() => {
                recognised = true;
                out.tables.insert(partnum, name.to_string());
            }
            _ => Unparsed::keep(&mut out.unparsed, line),
        }
    }
    if !recognised {
        let first = lines(text).find(|l| !l.is_blank());
        return Err(match first {
            Some(l) => l.error_at(l.text, "`partnum|db:'owner'.table` rows from dbaccess"),
            None => ParseError::empty("dbaccess output of systabnames"),
        });
    }
    Ok(out)
}

record!(Systabnames);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_dbaccess_chatter() {
        let text = "\nDatabase selected.\n\n\n(expression)\n\n1048578|stores:'informix'.customer\n    1048579|stores:'informix'.orders\n\n2 row(s) retrieved.\n\n\n\nDatabase closed.\n\n";
        let s = parse(text).expect("parses");
        assert_eq!(s.table(1_048_578), Some("stores:'informix'.customer"));
        assert_eq!(s.table(1_048_579), Some("stores:'informix'.orders"));
        assert!(s.unparsed.is_empty());
    }

    #[test]
    fn errors_are_not_tables() {
        let e = parse("  201: A syntax error has occurred.\n").expect_err("not rows");
        assert_eq!(e.line, 1);
        let s = parse("Database selected.\nweird line\n").expect("chatter recognised");
        assert_eq!(s.unparsed.len(), 1);
    }
}
