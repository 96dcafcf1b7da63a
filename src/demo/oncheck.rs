//! The demo's storage as Informix tools print it: `oncheck -pe` (the newer
//! `Pagesize(k) Size(p) Used(p) Free(p)` layout) and the systabnames query through dbaccess.

use super::schema::{self, CHUNKS, CREATED, DBSPACES, PARTITIONS};
use crate::source::Output;
use std::fmt::Write as _;

/// `oncheck -pe`: per dbspace, per chunk, its extents with offsets and sizes in the chunk's own
/// page size, then the chunk's totals.
pub(crate) fn oncheck_pe() -> String {
    let mut o = String::new();
    for d in &DBSPACES {
        let _ = write!(
            o,
            "DBspace Usage Report: {:<20}Owner: informix  Created: {CREATED}\n\n\n",
            d.name
        );
        for c in CHUNKS.iter().filter(|c| c.dbspace == d.number) {
            let (used, free) = schema::chunk_usage(c);
            o.push_str(
                " Chunk Pathname                             Pagesize(k)  Size(p)  Used(p)  Free(p)\n",
            );
            let _ = writeln!(
                o,
                " {:>5} {:<38}{:>10} {:>8} {:>8} {:>8}",
                c.number, c.path, d.page_kb, c.size, used, free
            );
            o.push('\n');
            o.push_str(
                " Description                                                   Offset(p)  Size(p)\n",
            );
            o.push_str(
                " ------------------------------------------------------------- -------- --------\n",
            );
            for e in schema::placed(c) {
                let _ = writeln!(o, " {:<61} {:>8} {:>8}", e.description, e.offset, e.size);
            }
            o.push('\n');
            let _ = writeln!(o, " Total Used: {used:>8}");
            let _ = writeln!(o, " Total Free: {free:>8}");
            o.push_str("\n\n");
        }
    }
    o
}

/// dbaccess answering `crate::parsers::systabnames::QUERY`: the rows on stdout (column mode,
/// headed `(expression)`), dbaccess's messages on stderr.
pub(crate) fn systabnames() -> Output {
    let mut out = String::from("\n(expression)\n\n");
    let mut parts: Vec<_> = PARTITIONS.iter().collect();
    parts.sort_by_key(|p| p.partnum);
    for p in &parts {
        let _ = writeln!(out, "{}|{}", p.partnum, p.name);
    }
    out.push('\n');
    Output {
        exit: Some(0),
        stdout: out,
        stderr: format!(
            "\nDatabase selected.\n\n\n{} row(s) retrieved.\n\n\n\nDatabase closed.\n\n",
            parts.len()
        ),
    }
}

/// dbaccess given any other SQL: the syntax error it would print.
pub(crate) fn dbaccess_error() -> Output {
    Output {
        exit: Some(1),
        stdout: String::new(),
        stderr: "\nDatabase selected.\n\n\n  201: A syntax error has occurred.\nError in line 1\nNear character position 1\n\n\nDatabase closed.\n\n".into(),
    }
}
