//! Every fixture under `tests/fixtures/` parses as the kind its directory names, and the lines it
//! leaves unparsed are exactly those its `<name>.unparsed` sidecar lists (with the reason why).
//!
//! Snapshots of each fixture's JSON live with each parser's own tests; this test is the net that
//! catches a fixture nobody parses.

use crate::common::fixtures_dir;
use crate::common::kind;
use ifxtop::source::Kind;
use std::collections::BTreeSet;

/// The kind a fixture is parsed as: the kind its directory is named after (`onstat-g-ath/`), so
/// a new source's fixtures are checked without a line here; the directories named otherwise
/// below; for `netstat/` by file name (`ss-*`).
pub(crate) fn kind_for(dir: &str, file: &str) -> Option<Kind> {
    Some(match dir {
        "netstat" if file.starts_with("ss-") => kind("ss"),
        "netstat" => kind("netstat"),
        "numa_maps" => kind("numa-maps"),
        "onstat-B" => kind("onstat-b"),
        "onstat-g-BTH" => kind("onstat-g-bth"),
        "onstat-x-txn" => kind("onstat-x"),
        "onstat-r" => kind("onstat-banner"),
        // Not outputs: recordings of whole sessions.
        "recordings" => return None,
        _ => Kind::from_name(dir)?,
    })
}

/// Line numbers listed in a `.unparsed` sidecar (`12  # why`), or none when there is no sidecar.
fn expected_unparsed(path: &std::path::Path) -> BTreeSet<u64> {
    let side = path.with_extension("unparsed");
    let Ok(text) = std::fs::read_to_string(&side) else {
        return BTreeSet::new();
    };
    text.lines()
        .filter_map(|l| l.split('#').next())
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

#[test]
fn every_fixture_parses_with_only_the_expected_unparsed_lines() {
    let root = fixtures_dir();
    let mut checked = 0;
    let mut failures = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .expect("fixtures dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .collect();
    dirs.sort_by_key(|e| e.file_name());
    for d in dirs {
        let dir = d.file_name().to_string_lossy().into_owned();
        let mut files: Vec<_> = std::fs::read_dir(d.path())
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
            let Some(kind) = kind_for(&dir, &file) else {
                failures.push(format!("{dir}/{file}: no parser kind for this directory"));
                continue;
            };
            let text = std::fs::read_to_string(&path).expect("fixture text");
            checked += 1;
            match kind.parse_to_json(&text) {
                Err(e) => failures.push(format!("{dir}/{file}: {e}")),
                Ok(json) => {
                    let got: BTreeSet<u64> = json
                        .get("unparsed")
                        .and_then(|u| u.as_array())
                        .map(|a| {
                            a.iter()
                                .filter_map(|u| u.get("line").and_then(|l| l.as_u64()))
                                .collect()
                        })
                        .unwrap_or_default();
                    let want = expected_unparsed(&path);
                    if got != want {
                        failures.push(format!(
                            "{dir}/{file}: unparsed lines {got:?}, expected {want:?} ({})",
                            json.get("unparsed")
                                .map(|u| u.to_string())
                                .unwrap_or_default()
                        ));
                    }
                }
            }
        }
    }
    assert!(checked >= 27, "only {checked} fixtures found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
