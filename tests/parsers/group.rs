//! One `onstat` call for several options, cut back into each option's output: every part reads
//! with its own parser exactly as the option's output alone does.

use crate::common::fake_onstat::{body_of, BANNER};
use crate::common::{fixture, kind};
use ifxtop::parsers::group::split;

/// (option, kind, fixture, title)
const PARTS: &[(&str, &str, &str, &str)] = &[
    (
        "-u",
        "onstat-u",
        "onstat-u/ibm-kc-12.10-adref-0608.txt",
        "Userthreads",
    ),
    (
        "-X",
        "onstat-X",
        "onstat-X/oninit-onstat-X-two-pools.txt",
        "Buffers (Access)",
    ),
    (
        "-k",
        "onstat-k",
        "onstat-k/ibm-kc-12.10-adref-0597.txt",
        "Locks",
    ),
    (
        "-p",
        "onstat-p",
        "onstat-p/hcl-14.10-adr-0602-doc.txt",
        "Profile",
    ),
    (
        "-l",
        "onstat-l",
        "onstat-l/hcl-onedb-2.0-adr-0598-doc.txt",
        "Physical Logging",
    ),
    (
        "-s",
        "onstat-s",
        "onstat-s/hcl-14.10-prf-186-doc-lru-bf.txt",
        "Latches with lock or userthread set",
    ),
    (
        "-x",
        "onstat-x",
        "onstat-x-txn/ifxtop-single-line-header-no-rb-time.txt",
        "Transactions",
    ),
    // Its output has a second title (`Chunks`) inside: still one part.
    (
        "-D",
        "onstat-D",
        "onstat-D/ifxtop-16-digit-five-spaces-prim.txt",
        "Dbspaces",
    ),
];

fn grouped(order: &[usize]) -> String {
    let mut s = BANNER.to_string();
    for &i in order {
        let (_, _, rel, title) = PARTS[i];
        s.push_str(&body_of(&fixture(rel), Some(title)));
    }
    s
}

#[test]
fn every_part_reads_as_the_option_alone() {
    for order in [
        vec![0, 1, 2, 3, 4, 5, 6, 7],
        vec![6, 3, 0, 5],
        vec![2, 1],
        vec![0, 7, 2],
        vec![7, 0],
    ] {
        let text = grouped(&order);
        let options: Vec<&str> = order.iter().map(|&i| PARTS[i].0).collect();
        let parts = split(&text, &options).unwrap_or_else(|| panic!("{options:?}:\n{text}"));
        assert_eq!(parts.len(), order.len());
        for (&i, part) in order.iter().zip(&parts) {
            let (opt, k, rel, title) = PARTS[i];
            // The part is the banner and the option's section: the same as the option's own
            // output with its banner replaced by this one.
            assert_eq!(
                part,
                &format!("{BANNER}{}", body_of(&fixture(rel), Some(title))),
                "{opt}"
            );
            let alone = kind(k)
                .parse_to_json(&format!("{BANNER}{}", body_of(&fixture(rel), Some(title))))
                .unwrap_or_else(|e| panic!("{opt} alone: {e}"));
            let cut = kind(k)
                .parse_to_json(part)
                .unwrap_or_else(|e| panic!("{opt} cut: {e}"));
            assert_eq!(cut, alone, "{opt}");
            if opt == "-D" {
                assert_eq!(cut["chunks"].as_array().map(Vec::len), Some(6), "{part}");
                assert_eq!(cut["dbspaces"].as_array().map(Vec::len), Some(5), "{part}");
            }
            assert!(
                cut["header"]["version"] == "12.10.FC8",
                "{opt}: the banner goes with the part"
            );
        }
    }
}

#[test]
fn a_missing_or_misplaced_section_is_not_guessed() {
    let text = grouped(&[0, 3]);
    // -k was asked for but is not there.
    assert_eq!(split(&text, &["-u", "-k", "-p"]), None);
    // Sections in another order than asked.
    assert_eq!(split(&text, &["-p", "-u"]), None);
    // An option with no known title (a `-g` table) is never grouped.
    assert_eq!(split(&text, &["-u", "-g"]), None);
}

#[test]
fn the_off_line_message_is_every_options_answer() {
    let off = fixture("onstat-u/ifxtop-offline.txt");
    let parts = split(&off, &["-u", "-X", "-p"]).expect("off-line splits");
    assert_eq!(parts, vec![off.clone(); 3]);
}

#[test]
fn a_blocked_banner_goes_with_every_part() {
    let banner = "\nIBM Informix Dynamic Server Version 12.10.FC8 -- On-Line (CKPT REQ) -- Up 2 days 03:04:05 -- 2395548 Kbytes\nBlocked:CKPT\n\n";
    let text = format!(
        "{banner}{}{}",
        body_of(&fixture(PARTS[0].2), Some(PARTS[0].3)),
        body_of(&fixture(PARTS[3].2), Some(PARTS[3].3))
    );
    let parts = split(&text, &["-u", "-p"]).expect("splits");
    for p in &parts {
        assert!(p.starts_with(banner), "{p}");
    }
}
