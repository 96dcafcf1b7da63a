//! The kinds `ifxtop parse KIND` reads: every source the registry names with a kind (its entry
//! says `kind "onstat-k"`: the parser is the entry's own, so a source is still one entry), then
//! the outputs no source polls (`parsers::UNPOLLED`).

use super::registry::{self, Run};
use crate::error::ParseError;
use crate::parsers::{self, Parsed};
use std::sync::OnceLock;

/// One kind `ifxtop parse` accepts: its name, the command it is the output of, and its parser.
#[derive(Clone, Copy)]
pub struct Kind {
    /// The name used on the command line, the command as it is typed (`ifxtop parse onstat-u`,
    /// `onstat-X` for `onstat -X`, `onstat-g-con`).
    pub name: &'static str,
    /// Older or other spellings still accepted (`onstat-x-txn` for `onstat-x`).
    pub aliases: &'static [&'static str],
    command: Command,
    parse: fn(&str) -> Result<Parsed, ParseError>,
}

/// What a kind is the output of, to name it in a message.
#[derive(Clone, Copy)]
enum Command {
    /// A source's: its run (`onstat -g ses {}` is named `onstat -g ses`).
    Run(Run),
    Text(&'static str),
}

impl std::fmt::Debug for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Kind({})", self.name)
    }
}

impl PartialEq for Kind {
    fn eq(&self, other: &Kind) -> bool {
        self.name == other.name
    }
}

/// Every kind's name, in the order `kinds` lists them (for the help and an unknown name's
/// error).
pub fn names() -> Vec<&'static str> {
    kinds().iter().map(|k| k.name).collect()
}

/// Every kind: the registry's, then those no source polls.
pub fn kinds() -> &'static [Kind] {
    static ALL: OnceLock<Vec<Kind>> = OnceLock::new();
    ALL.get_or_init(|| {
        let unpolled = parsers::UNPOLLED.iter().map(|u| Kind {
            name: u.name,
            aliases: u.aliases,
            command: Command::Text(u.command),
            parse: u.parse,
        });
        let sources = registry::kinds().into_iter().map(|e| Kind {
            name: e.name,
            aliases: e.aliases,
            command: Command::Run(e.run),
            parse: e.parse,
        });
        sources.chain(unpolled).collect()
    })
}

impl Kind {
    /// The kind named `name` exactly (by its name or an alias); else the one whose name or alias
    /// it is in another case, when only one kind is (`ONSTAT-U`). Names that differ only in
    /// case are different commands (`onstat-d`/`onstat-D`, `onstat-x`/`onstat-X`): in any
    /// other case they name no kind.
    pub fn from_name(name: &str) -> Option<Kind> {
        let spellings = |k: &Kind| std::iter::once(k.name).chain(k.aliases.iter().copied());
        if let Some(k) = kinds().iter().find(|k| spellings(k).any(|n| n == name)) {
            return Some(*k);
        }
        let mut found = kinds()
            .iter()
            .filter(|k| spellings(k).any(|n| n.eq_ignore_ascii_case(name)));
        match (found.next(), found.next()) {
            (Some(k), None) => Some(*k),
            _ => None,
        }
    }

    /// The command it is the output of, as typed (`onstat -X`, `/proc/net/tcp`).
    pub fn command(&self) -> String {
        match self.command {
            Command::Text(t) => t.to_string(),
            Command::Run(run) => run.text(None),
        }
    }

    /// Parses `text` as this kind and returns what was understood as JSON. When it is not
    /// this kind but exactly one other reads it whole, the error names that one (`onstat-x`
    /// once meant `onstat -X`; a capture saved under the wrong name says which it is).
    pub fn parse_to_json(self, text: &str) -> Result<serde_json::Value, ParseError> {
        match (self.parse)(text) {
            Ok(r) => Ok(r.to_json()),
            Err(e) => match self.other_reading(text) {
                Some(other) => Err(ParseError {
                    expected: format!(
                        "{}; this looks like `{}` output: use kind {}",
                        e.expected,
                        other.command(),
                        other.name
                    ),
                    ..e
                }),
                None => Err(e),
            },
        }
    }

    /// Parses `text` as this kind alone, with no search for the kind it may be instead: how
    /// many of its lines were left unparsed, or why it was refused. For checks over many texts
    /// (a refusal by `parse_to_json` tries every other kind: forty parses).
    pub fn unparsed_lines(self, text: &str) -> Result<usize, ParseError> {
        (self.parse)(text).map(|r| r.unparsed())
    }

    /// The one other kind that reads `text` with no line left over, if exactly one does.
    fn other_reading(self, text: &str) -> Option<Kind> {
        let mut readers = kinds().iter().filter(|k| {
            **k != self && (k.parse)(text).is_ok_and(|r| r.unparsed() == 0 && r.offline().is_none())
        });
        match (readers.next(), readers.next()) {
            (Some(k), None) => Some(*k),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_round_trip() {
        for k in kinds() {
            assert_eq!(Kind::from_name(k.name), Some(*k));
            for a in k.aliases {
                assert_eq!(Kind::from_name(a), Some(*k), "{a}");
            }
        }
        let name = |n: &str| Kind::from_name(n).map(|k| k.name);
        // As the command is typed: `-X` buffers, `-x` transactions, `-D` and `-d` apart.
        assert_eq!(name("onstat-X"), Some("onstat-X"));
        assert_eq!(name("onstat-x"), Some("onstat-x"));
        assert_eq!(name("onstat-x-txn"), Some("onstat-x"));
        assert_eq!(name("onstat-x-TXN"), Some("onstat-x"));
        assert_eq!(name("onstat-D"), Some("onstat-D"));
        assert_eq!(name("onstat-d"), Some("onstat-d"));
        assert_eq!(name("numactl-h"), Some("numactl-H"));
        assert_eq!(name("onstat-B"), Some("onstat-b"));
        assert_eq!(name("onstat-g-BTH"), Some("onstat-g-bth"));
        // Another case is accepted only where it names one kind.
        assert_eq!(name("ONSTAT-U"), Some("onstat-u"));
        assert_eq!(name("Onstat-G-Cluster"), Some("onstat-g-cluster"));
        assert_eq!(name("ONSTAT-D"), None);
        assert_eq!(name("ONSTAT-X"), None);
        assert!(Kind::from_name("onstat -u").is_none());
    }

    #[test]
    fn kind_names_are_unique() {
        let mut names: Vec<_> = kinds()
            .iter()
            .flat_map(|k| std::iter::once(k.name).chain(k.aliases.iter().copied()))
            .collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n);
    }

    /// Every kind `ifxtop parse` read before the kinds moved into the registry, by the same
    /// name: none was lost in the move.
    #[test]
    fn every_kind_is_still_read() {
        for name in [
            "onstat-u",
            "onstat-X",
            "onstat-g-con",
            "oncheck-pe",
            "netstat",
            "ss",
            "proc-net-tcp",
            "numactl-H",
            "node-meminfo",
            "numa-maps",
            "onstat-g-ath",
            "onstat-g-cpu",
            "onstat-g-ntt",
            "onstat-k",
            "onstat-g-ses",
            "onstat-g-sql",
            "onstat-g-pqs",
            "onstat-b",
            "onstat-d",
            "onstat-t",
            "onstat-g-ckp",
            "onstat-D",
            "onstat-g-iof",
            "onstat-g-rss",
            "onstat-g-dri",
            "onstat-g-cluster",
            "onstat-g-sds",
            "proc-diskstats",
            "onstat-banner",
            "onstat-p",
            "onstat-l",
            "onstat-g-glo",
            "onstat-g-lmx",
            "onstat-g-wmx",
            "onstat-s",
            "onstat-g-seg",
            "onstat-g-bth",
            "onstat-g-tpf",
            "onstat-x",
            "onstat-g-rea",
        ] {
            assert_eq!(Kind::from_name(name).map(|k| k.name), Some(name));
        }
        // Those 40 (and the test build's toy).
        let toy = usize::from(Kind::from_name("toy-loadavg").is_some());
        assert_eq!(kinds().len(), 40 + toy);
    }

    #[test]
    fn a_kind_names_its_command_as_typed() {
        let command = |n: &str| Kind::from_name(n).map(|k| k.command());
        assert_eq!(command("onstat-X").as_deref(), Some("onstat -X"));
        assert_eq!(command("onstat-g-sql").as_deref(), Some("onstat -g sql"));
        assert_eq!(command("proc-net-tcp").as_deref(), Some("/proc/net/tcp"));
        assert_eq!(
            command("node-meminfo").as_deref(),
            Some("/sys/devices/system/node/nodeN/meminfo")
        );
        assert_eq!(command("ss").as_deref(), Some("ss -tan"));
    }

    /// `ifxtop parse` reads a grep'd `onstat -u` fragment without its footer; the poll refuses
    /// one (a cut output must not show a busy server as empty).
    #[test]
    fn the_kind_reads_what_the_poll_refuses() {
        let cut = "Userthreads\naddress          flags   sessid   user     tty      wait             tout locks nreads   nwrites\n\
                   4a0b8028         ---P--D 1        informix -        0                0    0     139      1085\n";
        assert!(Kind::from_name("onstat-u")
            .expect("a kind")
            .parse_to_json(cut)
            .is_ok());
        assert!(super::super::Source::OnstatU.parse_str(cut).is_err());
    }
}
