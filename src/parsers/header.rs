//! The banner every onstat command prints first, and the off-line message that replaces it.
//!
//! `IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line (CKPT REQ) -- Up 3 days 04:05:06 -- 2457600 Kbytes`
//! The vendor prefix varies (IBM, HCL, none, a typo'd `BM` in one published doc); a
//! `Blocked:CKPT` line may follow; a long banner wraps so that the next line starts with `-- Up`.

use super::lex::{dec_u64, sp0, sp1, Line, Lines, PResult};
use nom::branch::alt;
use nom::bytes::complete::tag;
use nom::character::complete::char;
use nom::combinator::{all_consuming, opt};
use nom::Parser;
use serde::Serialize;

/// What onstat's first lines said about the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Header {
    /// `IBM Informix Dynamic Server`, `HCL Informix Dynamic Server`, ...
    pub product: String,
    /// `12.10.FC8`
    pub version: String,
    /// The mode without its parenthesised qualifiers: `On-Line`, `Quiescent`, `Read-Only`, ...
    pub(crate) mode: String,
    /// The parenthesised qualifiers after the mode: `Prim`, `CKPT REQ`, `CKPT INP`, ...
    pub mode_flags: Vec<String>,
    pub uptime_s: Option<u64>,
    pub shm_kb: Option<u64>,
    /// The text after `Blocked:` on the line below the banner (`CKPT`, `ARCHIVE`, ...).
    pub blocked: Option<String>,
}

impl Header {
    /// A checkpoint was requested or is in progress (`(CKPT REQ)`, `(CKPT INP)`).
    pub fn checkpoint_flag(&self) -> Option<&str> {
        self.mode_flags
            .iter()
            .find(|f| f.starts_with("CKPT"))
            .map(String::as_str)
    }
}

/// What precedes a command's own output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Preamble {
    /// No banner (captures often start at the table).
    None,
    Header(Header),
    /// `shared memory not initialized for INFORMIXSERVER '...'`: the server is off-line.
    Offline(String),
}

impl Preamble {
    /// The banner and the off-line message apart, as every onstat record keeps them.
    pub(crate) fn into_parts(self) -> (Option<Header>, Option<String>) {
        match self {
            Preamble::None => (None, None),
            Preamble::Header(h) => (Some(h), None),
            Preamble::Offline(m) => (None, Some(m)),
        }
    }
}

/// Reads the banner (and a wrapped second line and a `Blocked:` line) if the first non-blank line
/// is one; leaves `lines` at the first line after it. Leaves `lines` untouched otherwise.
pub(crate) fn parse_preamble(lines: &mut Lines<'_>) -> Preamble {
    let Some(first) = lines.peek_non_blank() else {
        return Preamble::None;
    };
    if is_offline_message(first.text) {
        lines.next();
        return Preamble::Offline(first.text.trim().to_string());
    }
    let Some(mut header) = banner(first) else {
        return Preamble::None;
    };
    lines.next();
    if header.uptime_s.is_none() {
        // A long banner wraps: `... -- On-Line (Prim) --` then `-- Up 3 days ... -- N Kbytes`.
        if let Some(next) = lines.peek() {
            if let Some((up, kb)) = wrapped_tail(next.text) {
                header.uptime_s = Some(up);
                header.shm_kb = kb;
                lines.next();
            }
        }
    }
    if let Some(next) = lines.peek_non_blank() {
        if let Some(rest) = next.text.trim_start().strip_prefix("Blocked:") {
            header.blocked = Some(rest.trim().to_string());
            lines.next();
        }
    }
    Preamble::Header(header)
}

/// True for the messages onstat prints instead of a banner when the server is not running.
pub(crate) fn is_offline_message(text: &str) -> bool {
    // onstat prints it first, alone: the first lines say, not a user name or SQL text further
    // down (and a big output is not scanned to the end every second).
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .take(3)
        .any(|l| l.contains("shared memory not initialized"))
}

/// Parses one banner line; `None` when the line is not a banner.
pub(crate) fn banner(line: Line<'_>) -> Option<Header> {
    let text = line.text.trim();
    let vpos = text.find(" Version ")?;
    let product = text[..vpos].trim().to_string();
    let after = &text[vpos + " Version ".len()..];
    let mut parts = after.split("--").map(str::trim);
    let version = parts.next()?.to_string();
    if version.is_empty() || version.contains(' ') {
        return None;
    }
    let mode_text = parts.next()?;
    let (mode, mode_flags) = split_mode(mode_text);
    let mut header = Header {
        product,
        version,
        mode,
        mode_flags,
        uptime_s: None,
        shm_kb: None,
        blocked: None,
    };
    for part in parts.filter(|p| !p.is_empty()) {
        if let Ok((_, up)) = all_consuming(uptime).parse(part) {
            header.uptime_s = Some(up);
        } else if let Ok((_, kb)) = all_consuming(kbytes).parse(part) {
            header.shm_kb = Some(kb);
        }
    }
    Some(header)
}

/// `On-Line (Prim) (CKPT REQ)` → (`On-Line`, [`Prim`, `CKPT REQ`]).
fn split_mode(text: &str) -> (String, Vec<String>) {
    let base_end = text.find('(').unwrap_or(text.len());
    let mode = text[..base_end].trim().to_string();
    let mut flags = Vec::new();
    let mut rest = &text[base_end..];
    while let Some(open) = rest.find('(') {
        let Some(close) = rest[open..].find(')') else {
            break;
        };
        flags.push(rest[open + 1..open + close].trim().to_string());
        rest = &rest[open + close + 1..];
    }
    (mode, flags)
}

/// The second line of a wrapped banner: `-- Up 3 days 04:05:06 -- 2457600 Kbytes`.
fn wrapped_tail(text: &str) -> Option<(u64, Option<u64>)> {
    let text = text.trim().strip_prefix("--")?.trim();
    let mut parts = text.split("--").map(str::trim);
    let (_, up) = all_consuming(uptime).parse(parts.next()?).ok()?;
    let kb = parts.find_map(|p| all_consuming(kbytes).parse(p).ok().map(|(_, kb)| kb));
    Some((up, kb))
}

/// `Up 3 days 04:05:06`, `Up 1 day 00:00:01`, `Up 00:01:27` → seconds.
fn uptime(i: &str) -> PResult<'_, u64> {
    let (i, _) = (tag("Up"), sp1).parse(i)?;
    let (i, days) = opt((dec_u64, sp1, alt((tag("days"), tag("day"))), sp1)).parse(i)?;
    let (i, (h, _, m, _, s)) = (dec_u64, char(':'), dec_u64, char(':'), dec_u64).parse(i)?;
    let days = days.map_or(0, |(d, ..)| d);
    Ok((i, days * 86_400 + h * 3_600 + m * 60 + s))
}

/// `2457600 Kbytes`
fn kbytes(i: &str) -> PResult<'_, u64> {
    let (i, kb) = dec_u64(i)?;
    let (i, _) = (sp0, tag("Kbytes")).parse(i)?;
    Ok((i, kb))
}

#[cfg(test)]
mod tests {
    use super::super::lex::lines;
    use super::*;

    fn pre(text: &str) -> (Preamble, Option<usize>) {
        let mut l = lines(text);
        let p = parse_preamble(&mut l);
        (p, l.next().map(|l| l.no))
    }

    #[test]
    fn ibm_banner_with_days() {
        let (p, next) = pre("IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 3 days 04:05:06 -- 2457600 Kbytes\n\nUserthreads\n");
        let h = p.into_parts().0.expect("banner");
        assert_eq!(h.product, "IBM Informix Dynamic Server");
        assert_eq!(h.version, "12.10.FC8");
        assert_eq!(h.mode, "On-Line");
        assert!(h.mode_flags.is_empty());
        assert_eq!(h.uptime_s, Some(3 * 86_400 + 4 * 3_600 + 5 * 60 + 6));
        assert_eq!(h.shm_kb, Some(2_457_600));
        // Blank lines after the banner are consumed looking for a `Blocked:` line.
        assert_eq!(next, Some(3));
    }

    #[test]
    fn typo_prefix_and_padding_from_the_14_10_doc() {
        let (p, _) = pre(
            "BM Informix Dynamic Server Version 14.10.F       -- On-Line -- Up 00:01:27 -- 133540 Kbytes",
        );
        let h = p.into_parts().0.expect("banner");
        assert_eq!(h.product, "BM Informix Dynamic Server");
        assert_eq!(h.version, "14.10.F");
        assert_eq!(h.uptime_s, Some(87));
        assert_eq!(h.shm_kb, Some(133_540));
    }

    #[test]
    fn checkpoint_qualifier_and_blocked_line() {
        let (p, next) = pre("HCL Informix Dynamic Server Version 14.10.FC7 -- On-Line (Prim) (CKPT REQ) -- Up 1 day 00:00:01 -- 1024 Kbytes\nBlocked:CKPT\n\nx");
        let h = p.into_parts().0.expect("banner");
        assert_eq!(h.mode, "On-Line");
        assert_eq!(h.mode_flags, vec!["Prim", "CKPT REQ"]);
        assert_eq!(h.checkpoint_flag(), Some("CKPT REQ"));
        assert_eq!(h.blocked.as_deref(), Some("CKPT"));
        assert_eq!(h.uptime_s, Some(86_401));
        assert_eq!(next, Some(3));
    }

    #[test]
    fn wrapped_banner() {
        let (p, next) = pre("IBM Informix Dynamic Server Version 12.10.FC8 -- Read-Only (Sec) --\n-- Up 2 days 01:00:00 -- 2457600 Kbytes\n\nrest");
        let h = p.into_parts().0.expect("banner");
        assert_eq!(h.mode, "Read-Only");
        assert_eq!(h.mode_flags, vec!["Sec"]);
        assert_eq!(h.uptime_s, Some(2 * 86_400 + 3_600));
        assert_eq!(h.shm_kb, Some(2_457_600));
        assert_eq!(next, Some(4));
    }

    #[test]
    fn offline_message() {
        let (p, next) = pre("\nshared memory not initialized for INFORMIXSERVER 'ol_test'\n");
        assert_eq!(
            p.into_parts().1.as_deref(),
            Some("shared memory not initialized for INFORMIXSERVER 'ol_test'")
        );
        assert_eq!(next, None);
    }

    #[test]
    fn no_banner_leaves_lines_alone() {
        let (p, next) = pre("Userthreads\naddress flags\n");
        assert_eq!(p, Preamble::None);
        assert_eq!(next, Some(1));
    }
}
