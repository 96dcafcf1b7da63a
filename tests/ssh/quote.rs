//! The quoting of remote command lines, checked against a real shell: any words, quoted and run
//! through `sh -c`, come back as the same words (no sshd needed).

use ifxtop::source::ssh::quote_words;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use std::process::Command;

/// Words a shell would love to interpret, and anything else but NUL (which no argv can hold).
fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ '\"$`\\\\;|&*?~!{}()<>#=%\n\t-]{0,10}",
        "[^\u{0}]{0,12}",
        Just("'".to_string()),
        Just("'\\''".to_string()),
        Just("$(id)".to_string()),
    ]
}

fn words() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(word(), 0..6)
}

/// The words a NUL-separated output holds.
pub fn split_nul(s: &str) -> Vec<String> {
    let mut v: Vec<String> = s.split('\0').map(str::to_string).collect();
    // printf ends every word with a NUL: the last piece is empty.
    assert_eq!(v.pop().as_deref(), Some(""), "{s:?}");
    v
}

/// `n` reproducible samples of hostile word lists.
pub fn samples(n: usize) -> Vec<Vec<String>> {
    let mut runner = TestRunner::deterministic();
    let strategy = words();
    (0..n)
        .map(|_| strategy.new_tree(&mut runner).expect("a sample").current())
        .collect()
}

/// What `sh -c` makes of `printf '%s\0' <quoted words>`.
fn through_sh(words: &[String]) -> Vec<String> {
    let line = format!("printf '%s\\0' {}", quote_words(words));
    // With no word, printf still prints its format once.
    let line = if words.is_empty() {
        "true".to_string()
    } else {
        line
    };
    let out = Command::new("sh")
        .arg("-c")
        .arg(&line)
        .output()
        .expect("sh");
    assert!(out.status.success(), "{line}: {out:?}");
    if words.is_empty() {
        return Vec::new();
    }
    split_nul(&String::from_utf8(out.stdout).expect("utf-8"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn quoted_words_come_back_from_sh_unchanged(words in words()) {
        prop_assert_eq!(through_sh(&words), words);
    }
}

#[test]
fn hand_picked_words_come_back_unchanged() {
    let words: Vec<String> = [
        "ol'; touch /tmp/pwned_$$; echo '$(id)",
        "",
        "'",
        "''",
        "\\'",
        "a\nb",
        "$HOME",
        "`id`",
        "-n",
        "--",
        "*",
        "~root",
        "é ü 日本",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(through_sh(&words), words);
}
