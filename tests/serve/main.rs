//! `ifxtop serve`, the Prometheus exporter: the exposition built from a store fed with real
//! fixtures (names, types, labels, values, what goes when a source fails), `promtool check
//! metrics` on it, and a real Prometheus scraping `ifxtop serve --demo` on loopback.
//!
//! promtool and prometheus come with the Debian package `prometheus`: without it, outside CI,
//! the tests that need them say so and pass; in CI (`CI` set) a missing one is a failure.

#[path = "../common/mod.rs"]
mod common;

mod exposition;
mod feed;
mod load;
mod mixin;
mod prometheus;
mod run;
mod tls;

/// Whether `program` (from the Debian package `prometheus`) is there for `test`.
pub fn available(program: &str, test: &str) -> bool {
    common::have(program, "prometheus", test)
}

pub const PROMTOOL: &str = "/usr/bin/promtool";
pub const PROMETHEUS: &str = "/usr/bin/prometheus";

/// One sample line of an exposition: name, labels (in order), value as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub value: String,
}

impl Sample {
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn number(&self) -> f64 {
        self.value
            .parse()
            .unwrap_or_else(|e| panic!("{}: value {:?}: {e}", self.name, self.value))
    }
}

/// The sample lines of an exposition (comments skipped), parsed strictly: a line that is not
/// `name{k="v",...} value` fails the test.
pub fn samples(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| parse_line(l).unwrap_or_else(|| panic!("not a sample line: {l:?}")))
        .collect()
}

fn parse_line(line: &str) -> Option<Sample> {
    let name_end = line.find(['{', ' '])?;
    let name = line[..name_end].to_string();
    let mut rest = &line[name_end..];
    let mut labels = Vec::new();
    if let Some(r) = rest.strip_prefix('{') {
        rest = r;
        loop {
            if let Some(r) = rest.strip_prefix('}') {
                rest = r;
                break;
            }
            let eq = rest.find("=\"")?;
            let key = rest[..eq].to_string();
            rest = &rest[eq + 2..];
            let mut value = String::new();
            let mut chars = rest.char_indices();
            let end = loop {
                let (i, c) = chars.next()?;
                match c {
                    '\\' => match chars.next()?.1 {
                        'n' => value.push('\n'),
                        other => value.push(other),
                    },
                    '"' => break i,
                    c => value.push(c),
                }
            };
            labels.push((key, value));
            rest = &rest[end + 1..];
            rest = rest.strip_prefix(',').unwrap_or(rest);
        }
    }
    let value = rest.strip_prefix(' ')?.to_string();
    if value.is_empty() || value.contains(' ') {
        return None;
    }
    Some(Sample {
        name,
        labels,
        value,
    })
}
