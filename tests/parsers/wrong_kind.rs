//! Every fixture parsed as every other kind is rejected: a parser recognises its own command's
//! output by its structure (a title, a column header, a row shape only it has) and fails on the
//! rest, so `ifxtop parse KIND FILE` exits 2 instead of inventing data from another command's
//! output. The pairs below are allowed, each for a stated reason; nothing else may be accepted.

use crate::common::fixtures_dir;
use crate::fixtures_all::kind_for;
use ifxtop::source::kinds::kinds;

/// (kind parsing or `onstat-*` for every onstat kind, fixture directory, fixture file or `*`,
/// why it is accepted).
const ALLOWED: &[(&str, &str, &str, &str)] = &[
    // The off-line message (`shared memory not initialized for INFORMIXSERVER ...`) is what every
    // onstat command prints when the server is down: the same text, a whole answer for each
    // (`drill::every_kind_accepts_the_off_line_message`).
    (
        "onstat-*",
        "onstat-u",
        "ifxtop-offline.txt",
        "every onstat command's off-line message is the same",
    ),
    // `onstat -g ses <sid>` and `onstat -g sql <sid>` of a session that has ended print the
    // banner and nothing else, exactly as `onstat -` does (BANNER_ALONE): the same text.
    (
        "onstat-g-ses",
        "onstat-banner",
        "*",
        "the banner alone is `onstat -g ses <sid>` of a session that has ended",
    ),
    (
        "onstat-g-sql",
        "onstat-banner",
        "*",
        "the banner alone is `onstat -g sql <sid>` of a session that has ended",
    ),
    (
        "onstat-g-pqs",
        "onstat-banner",
        "*",
        "the banner alone is `onstat -g pqs <sid>` of a session running no query",
    ),
];

/// Whether the allow-list entry `(k, d, f)` covers `kind` parsing `dir/file`.
fn covers(entry: &(&str, &str, &str, &str), kind: &str, dir: &str, file: &str) -> bool {
    let (k, d, f, _) = *entry;
    let kind_ok = k == kind || (k == "onstat-*" && kind.starts_with("onstat-"));
    kind_ok && d == dir && (f == "*" || f == file)
}

#[test]
fn every_fixture_is_rejected_by_every_other_kind() {
    let root = fixtures_dir();
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .expect("fixtures dir")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut checked = 0;
    let mut accepted = Vec::new();
    let mut used = vec![false; ALLOWED.len()];
    for d in dirs {
        let dir = d
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut files: Vec<_> = std::fs::read_dir(&d)
            .expect("fixture subdir")
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "txt"))
            .collect();
        files.sort();
        for path in files {
            let file = path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            let Some(own) = kind_for(&dir, &file) else {
                continue;
            };
            let text = std::fs::read_to_string(&path).expect("fixture text");
            for k in kinds().iter().filter(|k| **k != own) {
                checked += 1;
                if k.parse_to_json(&text).is_err() {
                    continue;
                }
                match ALLOWED.iter().position(|e| covers(e, k.name, &dir, &file)) {
                    Some(i) => used[i] = true,
                    None => accepted.push(format!("{} accepts {dir}/{file}", k.name)),
                }
            }
        }
    }
    assert!(checked > 4000, "only {checked} pairs checked");
    let stale: Vec<_> = ALLOWED
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|((k, d, f, _), _)| format!("{k} {d}/{f}"))
        .collect();
    assert!(
        accepted.is_empty(),
        "{} wrong-kind pairs accepted:\n{}",
        accepted.len(),
        accepted.join("\n")
    );
    assert!(
        stale.is_empty(),
        "allow-list entries no longer needed: {stale:?}"
    );
}

/// Rows alone (a grep'd fragment) are an answer; the same rows among another command's titles
/// and headers are not: that is the other command's output.
#[test]
fn rows_alone_are_accepted_rows_among_other_lines_are_not() {
    use ifxtop::parsers::onstat_g_con;
    let rows = "5789 26e67cd298 netnorm 84353 0\n7 14aa0588 backend:3 12 1\n";
    assert_eq!(onstat_g_con::parse(rows).expect("rows").conditions.len(), 2);
    let e = onstat_g_con::parse(&format!("Checkpoint history\n{rows}")).expect_err("not -g con");
    assert_eq!((e.line, e.column), (1, 1));
    assert!(e.expected.contains("Conditions with waiters:"), "{e}");
    // A number where the name goes is another table's row (`onstat -t`, `/proc/diskstats`).
    assert!(onstat_g_con::parse(" 1 14a957c0 0 1 100001 10000e 350 350 0 0\n").is_err());
}

/// The banner alone answers `onstat -g ses <sid>`; the banner and `onstat -g sql`'s part does
/// not (that is `onstat -g sql`), nor the banner and another command's table.
#[test]
fn the_banner_alone_is_an_answer_the_banner_and_more_is_not() {
    use ifxtop::parsers::{onstat_g_ses, onstat_g_sql};
    let banner = "IBM Informix Dynamic Server Version 12.10.FC13 -- On-Line -- Up 9 days 11:40:21 -- 8913920 Kbytes\n\n";
    assert!(onstat_g_ses::parse(banner).is_ok());
    let sql = format!(
        "{banner}Sess  SQL            Current            Iso Lock       SQL  ISAM F.E.\n\
         Id    Stmt type      Database           Lvl Mode       ERR  ERR  Vers  Explain\n\
         812   UPDATE         stores             CR  Wait 30    0    0    9.24  Off\n"
    );
    assert_eq!(onstat_g_sql::parse(&sql).expect("-g sql").sessions.len(), 1);
    let e = onstat_g_ses::parse(&sql).expect_err("not -g ses");
    assert!(e.expected.starts_with("onstat -g ses output"), "{e}");
    let k = format!(
        "{banner}Locks\naddress  wtlist   owner    lklist   type     tblsnum  rowid    key#/bsiz\n"
    );
    assert!(onstat_g_ses::parse(&k).is_err());
    assert!(onstat_g_sql::parse(&k).is_err());
}

/// A line only another command prints rejects the input and names that command.
#[test]
fn another_commands_own_line_names_it() {
    use ifxtop::parsers::{onstat_d, onstat_g_ath, onstat_g_sql};
    let e = onstat_d::parse(&crate::common::fixture(
        "onstat-D/hcl-14.10-adr-0507-doc.txt",
    ))
    .expect_err("-D");
    assert!(e.expected.contains("onstat -D's"), "{e}");
    let e = onstat_g_ath::parse(&crate::common::fixture(
        "onstat-g-rea/ifxtop-12.10-cpu-queue.txt",
    ))
    .expect_err("-g rea");
    assert!(e.expected.contains("onstat -g rea's"), "{e}");
    let e = onstat_g_sql::parse(&crate::common::fixture(
        "onstat-g-ses/ifxtop-ses-detail-12.10.txt",
    ))
    .expect_err("-g ses");
    assert!(e.expected.contains("onstat -g ses's"), "{e}");
}
