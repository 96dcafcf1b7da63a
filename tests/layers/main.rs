//! The layout's rules (docs/architecture.md), checked on the source: folders import only the
//! folders before them in the data flow, the parsers and the joins know nothing of tokio or the
//! terminal, and `src/` keeps few files at its top. And one rule of the CI scripts (`.ci/`): a
//! step's output is shown without opening the log anew.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The folders (and top-level files) in the order data flows through them: each may import only
/// itself and those before it.
const ORDER: &[&str] = &[
    "memory", "ids", "error", "format", "files", "parsers", "extents", "source", "demo", "collect",
    "store", "model", "cli", "instance", "tui", "commands",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src").flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file belongs to (`parsers` for src/parsers/onstat_u.rs).
fn top_of(file: &Path) -> String {
    let rel = file.strip_prefix(src()).expect("under src");
    let first = rel.components().next().expect("a component");
    first
        .as_os_str()
        .to_string_lossy()
        .trim_end_matches(".rs")
        .to_string()
}

/// The top-level modules a file names through `crate::` (in code, not in comments).
fn crate_refs(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            // `$crate::` in a macro names the crate the macro is expanded in.
            if rest[..i].ends_with('$') {
                rest = after;
                continue;
            }
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
            rest = after;
        }
    }
    out
}

/// The text without its comments (what the compiler reads).
fn code_of(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn folders_import_only_what_comes_before_them() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let rank = |m: &str| ORDER.iter().position(|o| *o == m);
    let mut wrong = Vec::new();
    for f in &files {
        let top = top_of(f);
        let Some(mine) = rank(&top) else {
            continue; // main.rs, lib.rs: they may name everything
        };
        let text = std::fs::read_to_string(f).expect("read");
        for r in crate_refs(&text) {
            match rank(&r) {
                Some(theirs) if theirs <= mine => {}
                // `$crate::` in a macro and names the rules do not know are listed too.
                _ => wrong.push(format!(
                    "{} ({top}) imports crate::{r}",
                    f.strip_prefix(src()).expect("under src").display()
                )),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the data flow:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn parsers_and_joins_know_nothing_of_tokio_or_the_terminal() {
    for dir in ["parsers", "model", "extents"] {
        let mut files = Vec::new();
        rust_files(&src().join(dir), &mut files);
        assert!(!files.is_empty(), "{dir}");
        for f in files {
            let text = code_of(&std::fs::read_to_string(&f).expect("read"));
            for word in ["tokio::", "ratatui::", "crossterm::"] {
                assert!(
                    !text.contains(word),
                    "{} mentions {word}",
                    f.strip_prefix(src()).expect("under src").display()
                );
            }
        }
    }
}

#[test]
fn only_the_tui_knows_the_terminal() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    for f in files {
        if top_of(&f) == "tui" || f.ends_with("main.rs") {
            continue;
        }
        let text = code_of(&std::fs::read_to_string(&f).expect("read"));
        for word in ["ratatui::", "crossterm::"] {
            assert!(
                !text.contains(word),
                "{} mentions {word}",
                f.strip_prefix(src()).expect("under src").display()
            );
        }
    }
}

#[test]
fn few_files_at_the_top_of_src() {
    let top: Vec<_> = std::fs::read_dir(src())
        .expect("src")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .collect();
    assert!(top.len() <= 8, "{} files at the top of src/", top.len());
}

/// The file a module path names: `src/a/b.rs` or `src/a/b/mod.rs` for the longest prefix of
/// `parts` that is a file.
fn file_of(parts: &[String]) -> Option<PathBuf> {
    for n in (1..=parts.len()).rev() {
        let mut p = src();
        for part in &parts[..n] {
            p.push(part);
        }
        let file = p.with_extension("rs");
        if file.is_file() {
            return Some(file);
        }
        let m = p.join("mod.rs");
        if m.is_file() {
            return Some(m);
        }
    }
    None
}

/// The module path of a file (`["model", "waiters"]` for src/model/waiters.rs).
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).expect("under src");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        if last != "mod.rs" {
            parts.push(last.trim_end_matches(".rs").to_string());
        }
    }
    parts
}

/// The files a file names through `crate::a::b` and `super::c` paths (in code).
fn file_refs(file: &Path) -> BTreeSet<PathBuf> {
    let text = code_of(&std::fs::read_to_string(file).expect("read"));
    let me = module_of(file);
    let mut out = BTreeSet::new();
    // Inside a file's `mod tests`, `super::` is the file's own module, not its parent.
    let tests_at = text.find("mod tests {").unwrap_or(text.len());
    for (prefix, base) in [
        ("crate::", Vec::new()),
        ("super::", me[..me.len().saturating_sub(1)].to_vec()),
    ] {
        let mut rest = text.as_str();
        while let Some(i) = rest.find(prefix) {
            let at = text.len() - rest.len() + i;
            let before = rest[..i].chars().last();
            let after = &rest[i + prefix.len()..];
            rest = after;
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            let path: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let mut parts = if prefix == "super::" && at > tests_at {
                me.clone()
            } else {
                base.clone()
            };
            parts.extend(path.split("::").filter(|p| !p.is_empty()).map(String::from));
            if let Some(f) = file_of(&parts) {
                if f != file {
                    out.insert(f);
                }
            }
        }
    }
    out
}

/// No two files import each other, directly or through others (a cycle within a folder is a
/// cycle too): `python3 ../shared/tools/modgraph.py src` says the same.
#[test]
fn no_file_level_cycles() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.sort();
    let graph: std::collections::BTreeMap<PathBuf, BTreeSet<PathBuf>> =
        files.iter().map(|f| (f.clone(), file_refs(f))).collect();
    // Depth-first search with colours: grey = on the current path.
    #[derive(Clone, Copy, PartialEq)]
    enum Colour {
        White,
        Grey,
        Black,
    }
    let mut colour: std::collections::BTreeMap<&PathBuf, Colour> =
        graph.keys().map(|k| (k, Colour::White)).collect();
    let mut cycles = Vec::new();
    fn visit<'a>(
        f: &'a PathBuf,
        graph: &'a std::collections::BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        colour: &mut std::collections::BTreeMap<&'a PathBuf, Colour>,
        path: &mut Vec<&'a PathBuf>,
        cycles: &mut Vec<String>,
    ) {
        colour.insert(f, Colour::Grey);
        path.push(f);
        for g in graph.get(f).into_iter().flatten() {
            match colour.get(g).copied().unwrap_or(Colour::Black) {
                Colour::Grey => {
                    let from = path.iter().position(|p| *p == g).unwrap_or(0);
                    let names: Vec<String> = path[from..]
                        .iter()
                        .map(|p| p.strip_prefix(src()).expect("src").display().to_string())
                        .collect();
                    cycles.push(names.join(" -> "));
                }
                Colour::White => visit(g, graph, colour, path, cycles),
                Colour::Black => {}
            }
        }
        path.pop();
        colour.insert(f, Colour::Black);
    }
    for f in graph.keys() {
        if colour.get(f) == Some(&Colour::White) {
            visit(f, &graph, &mut colour, &mut Vec::new(), &mut cycles);
        }
    }
    assert!(
        cycles.is_empty(),
        "file-level cycles:\n{}",
        cycles.join("\n")
    );
}

/// `commands` reach the screen's code in one place, its text report (`tui::report`): what they
/// watch (setup, config, feed, store policy, signals, runtime) is `instance`'s.
#[test]
fn commands_reach_the_tui_in_one_place() {
    let mut files = Vec::new();
    rust_files(&src().join("commands"), &mut files);
    assert!(!files.is_empty());
    let mut uses = Vec::new();
    for f in &files {
        let text = code_of(&std::fs::read_to_string(f).expect("read"));
        for (i, _) in text.match_indices("crate::tui") {
            let path: String = text[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            uses.push(format!(
                "{}: {path}",
                f.strip_prefix(src()).expect("under src").display()
            ));
        }
    }
    assert_eq!(uses.len(), 1, "commands name tui in:\n{}", uses.join("\n"));
    assert!(uses[0].ends_with("crate::tui::report::text"), "{}", uses[0]);
}

/// The watched instance has no screen: `instance/` names neither `tui` nor the terminal crates.
#[test]
fn the_instance_has_no_screen() {
    let mut files = Vec::new();
    rust_files(&src().join("instance"), &mut files);
    assert!(files.len() >= 6, "{files:?}");
    for f in files {
        let text = code_of(&std::fs::read_to_string(&f).expect("read"));
        for word in ["crate::tui", "ratatui::", "crossterm::"] {
            assert!(
                !text.contains(word),
                "{} mentions {word}",
                f.strip_prefix(src()).expect("under src").display()
            );
        }
    }
}

/// The CI scripts show a step's output on stderr as it comes, with `tee -a`: where stderr is a
/// file (a CI log), `tee /dev/stderr` opens that file anew, truncated, and the log of every step
/// before it (the tests' output) is lost.
#[test]
fn ci_scripts_never_open_the_log_anew() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect(".ci") {
        let path = entry.expect("entry").path();
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            let code = line.split(" #").next().unwrap_or_default();
            if code.trim_start().starts_with('#') {
                continue;
            }
            for tee in code.split("tee ").skip(1) {
                checked += 1;
                let words: Vec<&str> = tee.split_whitespace().collect();
                let to_std = words
                    .iter()
                    .take_while(|w| !w.starts_with('|') && !w.starts_with(')'))
                    .any(|w| w.starts_with("/dev/std") || w.starts_with("/dev/fd/"));
                let appends = words
                    .iter()
                    .take_while(|w| w.starts_with('-'))
                    .any(|w| *w == "--append" || (!w.starts_with("--") && w.contains('a')));
                assert!(
                    !to_std || appends,
                    "{}:{}: tee to stderr or stdout without -a: {line}",
                    path.display(),
                    n + 1
                );
            }
        }
    }
    assert!(checked >= 2, "the tees of .ci/run were not found");
}
