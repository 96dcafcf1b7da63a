//! Never panicking, for every kind `ifxtop parse` reads (`ifxtop::source::kinds::kinds()`: the
//! registry's sources, then `parsers::UNPOLLED`), each read by its kind's own parser as the
//! poll and `ifxtop parse` call it (`Kind::unparsed_lines`): arbitrary text, row-like noise,
//! every fixture cut at every char boundary, fixture lines shuffled and repeated. The table is the kinds with their fixtures
//! (`fixtures_all::kind_for` names each fixture's kind), so a new kind is covered without a line
//! here, and `every_kind_has_a_fixture` fails until it has a fixture (or says why it has none).
//!
//! Every fixture read whole by every other kind is `wrong_kind`'s matrix (a panic fails it too),
//! so it is not repeated here.

// Tests fail by panicking; `expect` says what was missing.
#![allow(clippy::expect_used)]

use crate::common::fixtures_in;
use crate::fixtures_all::kind_for;
use ifxtop::source::kinds::kinds;
use ifxtop::source::Kind;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::TestCaseError;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

/// The kinds that have no fixture, each with why. None now: a kind without a sample cannot be
/// cut or shuffled, so a new kind gets a fixture or a line here saying why it has none.
const WITHOUT_FIXTURES: &[(&str, &str)] = &[];

/// Every kind of `kinds()`, in its order, with the texts of its fixtures.
fn table() -> &'static [(Kind, Vec<String>)] {
    static TABLE: OnceLock<Vec<(Kind, Vec<String>)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table: Vec<(Kind, Vec<String>)> = kinds().iter().map(|k| (*k, vec![])).collect();
        let dirs = crate::common::fixture_dirs();
        for dir in dirs {
            for (stem, text) in fixtures_in(&dir) {
                let Some(kind) = kind_for(&dir, &format!("{stem}.txt")) else {
                    continue;
                };
                table
                    .iter_mut()
                    .find(|(k, _)| *k == kind)
                    .expect("kind_for names a kind of kinds()")
                    .1
                    .push(text);
            }
        }
        table
    })
}

/// `text` read as `kind`: how many lines were left unparsed (none when it is refused), or, when
/// it panicked, which kind and why.
fn parse(kind: Kind, text: &str) -> Result<usize, String> {
    catch_unwind(AssertUnwindSafe(|| kind.unparsed_lines(text)))
        .map(|r| r.unwrap_or(0))
        .map_err(|p| {
            let why = p
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| p.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            format!("{} panicked: {why}", kind.name)
        })
}

/// `text` read as every kind: a panic fails the case, naming the kind.
fn every_kind_reads(text: &str) -> Result<(), TestCaseError> {
    for (kind, _) in table() {
        parse(*kind, text).map_err(TestCaseError::fail)?;
    }
    Ok(())
}

#[test]
fn every_kind_has_a_fixture() {
    assert!(!kinds().is_empty(), "no kinds");
    let names: Vec<&str> = table().iter().map(|(k, _)| k.name).collect();
    let all: Vec<&str> = kinds().iter().map(|k| k.name).collect();
    assert_eq!(names, all, "the table is every kind, once");
    let none: Vec<&str> = table()
        .iter()
        .filter(|(_, texts)| texts.is_empty())
        .map(|(k, _)| k.name)
        .collect();
    let listed: Vec<&str> = WITHOUT_FIXTURES.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        none, listed,
        "the kinds without a fixture are exactly those WITHOUT_FIXTURES lists (with why)"
    );
}

/// Every fixture of every kind cut at every char boundary (and whole), read as its kind.
#[test]
fn every_fixture_cut_at_every_char_boundary_never_panics() {
    let mut panics = Vec::new();
    let mut cuts = 0;
    for (kind, texts) in table() {
        for text in texts {
            let ends = text.char_indices().map(|(i, _)| i).chain([text.len()]);
            for i in ends {
                cuts += 1;
                if let Err(e) = parse(*kind, &text[..i]) {
                    panics.push(format!("{e}, cut at byte {i} of {:?}", &text[..i]));
                }
            }
        }
    }
    assert!(cuts > 100_000, "only {cuts} cuts");
    assert!(panics.is_empty(), "{}", panics.join("\n"));
}

// Each text strategy is read as every kind, so every kind gets the noise shaped for every other
// kind's rows. The regexes are those the parsers' own tests used, all kept: each is shaped for
// some rows (`onstat -X`'s hex alone, `-g ntt`'s `|`, `-g ckp`'s `~`) that a union of their
// characters would rarely make.
proptest! {
    /// Short arbitrary text (`*` repeats up to 32 times).
    #[test]
    fn arbitrary_text(s in "\\PC*") {
        every_kind_reads(&s)?;
    }

    /// Longer arbitrary text.
    #[test]
    fn arbitrary_text_up_to_300_chars(s in "\\PC{0,300}") {
        every_kind_reads(&s)?;
    }

    /// `onstat -u` rows: addresses, flags (`Y`, `D`, `F`, `U`, `N`, `C`, `T`, `*`, `-`).
    #[test]
    fn onstat_u_like_rows(
        s in "[0-9a-fA-FYDEFUNCT* \\t:-]{0,120}(\n[0-9a-fA-F YP-]{0,80}){0,4}"
    ) {
        every_kind_reads(&s)?;
    }

    /// `onstat -X` rows: hex and blanks alone.
    #[test]
    fn onstat_x_like_rows(s in "[0-9a-f :\\t]{0,120}(\n[0-9a-f ]{0,80}){0,4}") {
        every_kind_reads(&s)?;
    }

    /// Drill-down rows (`-g ath`, `-g ntt`, `-k`, `-g ses`, `-g sql`, `-g pqs`): `host|port`,
    /// times, `+` and `*`.
    #[test]
    fn drill_down_like_rows(
        s in "[0-9a-fA-F|:/.()* \\t+-]{0,100}(\n[0-9a-zA-Z|:/ +-]{0,80}){0,6}"
    ) {
        every_kind_reads(&s)?;
    }

    /// `-b`, `-d`, `-t` and `-g ckp` rows: `0x`, `~`, `*`, dates.
    #[test]
    fn buffers_chunks_tblspaces_checkpoints_like_rows(
        s in "[0-9a-fx :.*~/\\t]{0,120}(\n[0-9a-fA-Z:.* ]{0,90}){0,5}"
    ) {
        every_kind_reads(&s)?;
    }

    /// Vital-sign rows (`-p`, `-l`, `-g glo`, `-s`, `-g seg`, `-x`, ...): `%`, `()`, `-`.
    #[test]
    fn vital_sign_like_rows(
        s in "[0-9a-fA-Z:.%*()\\-x \\t]{0,120}(\n[0-9a-fA-Z:.%*()\\- \\t]{0,90}){0,6}"
    ) {
        every_kind_reads(&s)?;
    }

    /// Disk and HA rows (`-D`, `-g iof`, `-g rss`, `-g sds`, `-g cluster`, `-g dri`,
    /// `/proc/diskstats`): `;`, `,`, `=`, paths, indented lines.
    #[test]
    fn disk_and_ha_like_rows(
        s in "[0-9a-zA-Z:;,./()= \\t-]{0,120}(\n[\\t ]?[0-9a-zA-Z:;,./()= -]{0,90}){0,6}"
    ) {
        every_kind_reads(&s)?;
    }

    /// `oncheck -pe` report lines: its titles and labels, long numbers, `db:'owner'.table`.
    #[test]
    fn oncheck_pe_like_lines(
        s in "([ \\t]{0,3}(Chunk Pathname|Description|Total Used:|DBspace Usage Report:|FREE|see below|[0-9]{1,25}|[a-z]+:'[a-z]+'\\.[a-z #]+|-+)[ \\t]{0,3}\n?){0,30}"
    ) {
        every_kind_reads(&s)?;
    }

    /// For every kind: lines of one of its fixtures picked anywhere, in any order, any number
    /// of times, joined by newlines; and the same from all its fixtures at once, each line
    /// ending in a newline. Every line is an entry, a known line or listed as unparsed: never
    /// more unparsed entries than lines.
    #[test]
    fn shuffled_and_repeated_fixture_lines(
        fixture in any::<Index>(),
        picks in proptest::collection::vec(any::<Index>(), 0..120),
    ) {
        for (kind, texts) in table() {
            if texts.is_empty() {
                continue;
            }
            let one: Vec<&str> = fixture.get(texts).lines().collect();
            let all: Vec<&str> = texts.iter().flat_map(|t| t.lines()).collect();
            let mut mixes = Vec::new();
            if !one.is_empty() {
                mixes.push(picks.iter().map(|i| *i.get(&one)).collect::<Vec<_>>().join("\n"));
            }
            if !all.is_empty() {
                mixes.push(picks.iter().map(|i| format!("{}\n", i.get(&all))).collect());
            }
            for text in mixes {
                let unparsed = parse(*kind, &text).map_err(TestCaseError::fail)?;
                prop_assert!(
                    unparsed <= picks.len(),
                    "{}: {unparsed} unparsed of {} lines", kind.name, picks.len()
                );
            }
        }
    }
}
