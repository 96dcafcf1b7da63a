//! The banner every onstat command prints first, and the off-line message that replaces it.
//!
//! `IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line (CKPT REQ) -- Up 3 days 04:05:06 -- 2457600 Kbytes`
//! The vendor prefix varies (IBM, HCL, none, a typo'd `BM` in one published doc, or no product
//! name at all: `Version 14.10.FC1 -- ...`); a `Blocked:CKPT` line and, in newer versions, a date
//! line may follow; a long banner wraps so that the next line starts with `-- Up`.

use super::lex::{self, dec_u32, dec_u64, sp0, sp1, Line, Lines, PResult};
use nom::branch::alt;
use nom::bytes::complete::{tag, take_until, take_while_m_n};
use nom::character::complete::char;
use nom::combinator::{all_consuming, opt};
use nom::sequence::delimited;
use nom::Parser;
use serde::Serialize;

/// What onstat's first lines said about the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Header {
    /// `IBM Informix Dynamic Server`, `HCL Informix Dynamic Server`, ...; `None` when the banner
    /// starts at `Version`.
    pub product: Option<String>,
    /// `12.10.FC8`; `None` when the copy lost the banner's start and it begins at the mode
    /// (`On-Line -- Up 2 days 03:12:44 -- 2944000 Kbytes`).
    pub version: Option<String>,
    /// The mode without its parenthesised qualifiers: `On-Line`, `Quiescent`, `Read-Only`, ...
    pub mode: String,
    /// The parenthesised qualifiers after the mode: `Prim`, `CKPT REQ`, `CKPT INP`, ...
    pub mode_flags: Vec<String>,
    pub uptime_s: Option<u64>,
    pub shm_kb: Option<u64>,
    /// The text after `Blocked:` on the line below the banner (`CKPT`, `LONGTX`, `ARCHIVE`, ...).
    pub blocked: Option<String>,
    /// The date line newer versions (15.0) print under the banner, as printed
    /// (`Mon Nov 23 13:35:20 2026`, `2024-11-08 14:54:12`), without what follows its `--`.
    pub date: Option<String>,
    /// 15.0: `-- Infrastructure Version: 0` after the date.
    pub infrastructure_version: Option<u32>,
    /// 15.0: the parenthesised mode after the infrastructure version (`Compatibility mode`).
    pub storage_mode: Option<String>,
    /// A line an evaluation build prints right above the banner (GBase 8s: `Your evaluation
    /// license will expire on ...`), as printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
}

impl Header {
    /// Major and minor of the version (`12.10.FC8` → (12, 10), `15.0.0.0` → (15, 0)).
    pub fn release(&self) -> Option<(u32, u32)> {
        let mut parts = self.version.as_deref()?.split('.');
        let major = parts.next()?.trim().parse().ok()?;
        let minor = parts
            .next()?
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .ok()?;
        Some((major, minor))
    }

    /// A checkpoint was requested or is in progress (`(CKPT REQ)`, `(CKPT INP)`).
    pub fn checkpoint_flag(&self) -> Option<&str> {
        self.mode_flags
            .iter()
            .find(|f| f.starts_with("CKPT"))
            .map(String::as_str)
    }
}

/// What precedes a command's own output. Returned once per parse and taken apart at once
/// (`into_parts`): the banner is not boxed, which would cost an allocation per output parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)]
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

/// Reads the banner (and a wrapped second line, a `Blocked:` line and a date line) if the first
/// non-blank line is one; leaves `lines` at the first line after it. Leaves `lines` untouched
/// otherwise.
pub(crate) fn parse_preamble(lines: &mut Lines<'_>) -> Preamble {
    // A capture pasted from a terminal starts with the prompt line that ran it.
    lex::skip_prompt_line(lines, &["onstat"]);
    // An evaluation build's license line right above the banner (no blank line between): taken
    // with it when a banner or the off-line message follows.
    let mut license = None;
    let mut ahead = lines.clone();
    if let Some(l) = ahead.peek_non_blank().filter(|l| is_license_notice(l.text)) {
        ahead.next();
        let follows = ahead
            .peek_non_blank()
            .is_some_and(|b| is_offline_message(b.text) || banner(b).is_some());
        if follows {
            license = Some(l.text.trim().to_string());
            *lines = ahead;
        }
    }
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
    header.license = license;
    lines.next();
    if header.uptime_s.is_none() {
        // A long banner wraps: `... -- On-Line (Prim) --` then `-- Up 3 days ... -- N Kbytes`.
        if let Some(next) = lines.peek() {
            if amend_wrapped(&mut header, next.text) {
                lines.next();
            }
        }
    }
    // `Blocked:` and the date line, in either order, each at most once. Blank lines right after
    // the banner are consumed looking for them; after them, only on the way to the other one (a
    // body may end a section at a blank line).
    lines.peek_non_blank();
    loop {
        let mut ahead = lines.clone();
        match ahead.peek_non_blank() {
            Some(next) if amend_below(&mut header, next.text) => {
                ahead.next();
                *lines = ahead;
            }
            _ => break,
        }
    }
    Preamble::Header(header)
}

/// `Your evaluation license will expire on 2026-12-31.` (GBase 8s evaluation builds), or that
/// it has expired.
fn is_license_notice(text: &str) -> bool {
    text.trim_start().starts_with("Your evaluation license ")
}

/// Takes the second line of a wrapped banner into `header`; false when `text` is not one.
pub(crate) fn amend_wrapped(header: &mut Header, text: &str) -> bool {
    match wrapped_tail(text) {
        Some((up, kb)) if header.uptime_s.is_none() => {
            header.uptime_s = Some(up);
            header.shm_kb = kb;
            true
        }
        _ => false,
    }
}

/// Takes a line printed under the banner (`Blocked:CKPT`, or the date line of newer versions)
/// into `header`; false when `text` is neither, or says what `header` already has.
pub(crate) fn amend_below(header: &mut Header, text: &str) -> bool {
    if let Some(rest) = text.trim_start().strip_prefix("Blocked:") {
        if header.blocked.is_some() {
            return false;
        }
        header.blocked = Some(rest.trim().to_string());
        return true;
    }
    if header.date.is_some() {
        return false;
    }
    match date_line(text) {
        Some(d) => {
            header.date = Some(d.date.to_string());
            header.infrastructure_version = d.infrastructure_version;
            header.storage_mode = d.storage_mode.map(str::to_string);
            true
        }
        None => false,
    }
}

/// The parts of a date line: `2024-11-08 14:54:12 -- Infrastructure Version: 0 (Compatibility
/// mode)` (15.0), or the date alone.
struct DateLine<'a> {
    date: &'a str,
    infrastructure_version: Option<u32>,
    storage_mode: Option<&'a str>,
}

/// Reads a date line; `None` when `text` is not one.
fn date_line(text: &str) -> Option<DateLine<'_>> {
    let t = text.trim();
    let (date, rest) = match t.split_once("--") {
        Some((d, rest)) => (d.trim(), Some(rest.trim())),
        None => (t, None),
    };
    if !is_date_line(date) {
        return None;
    }
    let mut out = DateLine {
        date,
        infrastructure_version: None,
        storage_mode: None,
    };
    if let Some(rest) = rest {
        let (_, (version, mode)) = all_consuming(infrastructure).parse(rest).ok()?;
        out.infrastructure_version = Some(version);
        out.storage_mode = mode.map(str::trim).filter(|m| !m.is_empty());
    }
    Some(out)
}

/// `Infrastructure Version: 0 (Compatibility mode)`, the mode optional.
fn infrastructure(i: &str) -> PResult<'_, (u32, Option<&str>)> {
    let (i, (_, _, _, _, version, _)) = (
        tag("Infrastructure"),
        sp1,
        tag("Version:"),
        sp0,
        dec_u32,
        sp0,
    )
        .parse(i)?;
    let (i, mode) = opt(delimited(char('('), take_until(")"), char(')'))).parse(i)?;
    let (i, _) = sp0(i)?;
    Ok((i, (version, mode)))
}

/// The whole line is a date and time: `Mon Nov 23 13:35:20 2026` (the C library's `ctime`
/// layout, day padded or not) or `2026-11-23 13:35:20` (ISO-like, optionally with fractions).
/// No captured 15.0 output was found, so both layouts are accepted and nothing else.
pub(crate) fn is_date_line(text: &str) -> bool {
    let t = text.trim();
    all_consuming(ctime_date).parse(t).is_ok() || all_consuming(iso_date).parse(t).is_ok()
}

/// `Mon Nov 23 13:35:20 2026`
fn ctime_date(i: &str) -> PResult<'_, ()> {
    let day = alt((
        tag("Mon"),
        tag("Tue"),
        tag("Wed"),
        tag("Thu"),
        tag("Fri"),
        tag("Sat"),
        tag("Sun"),
    ));
    let month = alt((
        alt((
            tag("Jan"),
            tag("Feb"),
            tag("Mar"),
            tag("Apr"),
            tag("May"),
            tag("Jun"),
        )),
        alt((
            tag("Jul"),
            tag("Aug"),
            tag("Sep"),
            tag("Oct"),
            tag("Nov"),
            tag("Dec"),
        )),
    ));
    let (i, _) = (
        day,
        sp1,
        month,
        sp1,
        digits(1, 2),
        sp1,
        clock_time,
        sp1,
        digits(4, 4),
    )
        .parse(i)?;
    Ok((i, ()))
}

/// `2026-11-23 13:35:20` (or with a `T`, and fractions of a second).
fn iso_date(i: &str) -> PResult<'_, ()> {
    let (i, _) = (
        digits(4, 4),
        char('-'),
        digits(2, 2),
        char('-'),
        digits(2, 2),
        alt((sp1, tag("T"))),
        clock_time,
        opt((char('.'), digits(1, 9))),
    )
        .parse(i)?;
    Ok((i, ()))
}

/// `13:35:20`
fn clock_time(i: &str) -> PResult<'_, ()> {
    let (i, _) = (
        digits(2, 2),
        char(':'),
        digits(2, 2),
        char(':'),
        digits(2, 2),
    )
        .parse(i)?;
    Ok((i, ()))
}

/// `min` to `max` ASCII digits.
fn digits<'a>(
    min: usize,
    max: usize,
) -> impl Parser<&'a str, Output = &'a str, Error = nom::error::Error<&'a str>> {
    take_while_m_n(min, max, |c: char| c.is_ascii_digit())
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
    let mut parts = text.split("--").map(str::trim);
    let first = parts.next()?;
    // A copy that lost the banner's start begins at the mode (`On-Line -- Up ...`, or
    // `-- On-Line -- Up ...`): the product and version are unknown.
    let (product, version, named, mode_text) = match product_and_version(first) {
        Some((product, version, named)) => (product, Some(version), named, parts.next()?),
        None if first.is_empty() => (None, None, false, parts.next()?),
        None => (None, None, false, first),
    };
    let (mode, mode_flags) = split_mode(mode_text);
    let mut header = Header {
        product,
        version,
        mode,
        mode_flags,
        uptime_s: None,
        shm_kb: None,
        blocked: None,
        date: None,
        infrastructure_version: None,
        storage_mode: None,
        license: None,
    };
    for part in parts.filter(|p| !p.is_empty()) {
        if let Ok((_, up)) = all_consuming(uptime).parse(part) {
            header.uptime_s = Some(up);
        } else if let Ok((_, kb)) = all_consuming(kbytes).parse(part) {
            header.shm_kb = Some(kb);
        }
    }
    // Without the word `Version` the line is a banner only if the rest says so: a known mode
    // and an uptime (or a wrapped line still to come).
    let says_banner = named || (is_known_mode(&header.mode) && header.uptime_s.is_some());
    says_banner.then_some(header)
}

/// The part before the first `--`: `IBM Informix Dynamic Server Version 12.10.FC8` (product
/// and version, `named` true), `Version 14.10.FC1` (no product), or an OEM build's
/// `GBase 8s V8.8` / `Informix Dynamic Server 12.10.FC8` without the word `Version` (the last
/// word is the version when it starts with a digit, or `V` and a digit, and has a dot).
fn product_and_version(first: &str) -> Option<(Option<String>, String, bool)> {
    let named = match first.strip_prefix("Version ") {
        Some(after) => Some((None, after)),
        None => first.find(" Version ").map(|vpos| {
            (
                Some(first[..vpos].trim()),
                &first[vpos + " Version ".len()..],
            )
        }),
    };
    if let Some((product, after)) = named {
        let version = after.trim();
        if version.is_empty() || version.contains(' ') {
            return None;
        }
        return Some((product.map(str::to_string), version.to_string(), true));
    }
    let (product, version) = match first.rsplit_once([' ', '\t']) {
        Some((p, v)) => (Some(p.trim().to_string()), v),
        None => (None, first),
    };
    let digits = version.strip_prefix(['V', 'v']).unwrap_or(version);
    if !digits.starts_with(|c: char| c.is_ascii_digit()) || !digits.contains('.') {
        return None;
    }
    Some((
        product.filter(|p| !p.is_empty()),
        version.to_string(),
        false,
    ))
}

/// The server modes onstat prints in the banner.
fn is_known_mode(mode: &str) -> bool {
    [
        "On-Line",
        "Off-Line",
        "Quiescent",
        "Read-Only",
        "Updatable",
        "Single-User",
        "Administration",
        "Fast Recovery",
        "Initialization",
        "Shutdown",
        "Recovery",
        "Backup",
    ]
    .iter()
    .any(|m| mode.starts_with(m))
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
pub(crate) fn wrapped_tail(text: &str) -> Option<(u64, Option<u64>)> {
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
        assert_eq!(h.product.as_deref(), Some("IBM Informix Dynamic Server"));
        assert_eq!(h.version.as_deref(), Some("12.10.FC8"));
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
        assert_eq!(h.product.as_deref(), Some("BM Informix Dynamic Server"));
        assert_eq!(h.version.as_deref(), Some("14.10.F"));
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
    fn no_product_name() {
        let (p, _) = pre("Version 14.10.FC1 -- On-Line (Prim) -- Up 00:00:09 -- 1024 Kbytes\n");
        let h = p.into_parts().0.expect("banner");
        assert_eq!(h.product, None);
        assert_eq!(h.version.as_deref(), Some("14.10.FC1"));
        assert_eq!(h.mode_flags, vec!["Prim"]);
        let (p, _) = pre(
            "Informix Dynamic Server Version 11.70.FC4 -- On-Line -- Up 00:00:09 -- 1024 Kbytes",
        );
        let h = p.into_parts().0.expect("banner");
        assert_eq!(h.product.as_deref(), Some("Informix Dynamic Server"));
        assert!(banner(Line {
            no: 1,
            text: "Version of this document: 2"
        })
        .is_none());
    }

    #[test]
    fn date_line_under_the_banner() {
        for (date, after) in [
            ("Mon Nov 23 13:35:20 2026", "Blocked:LONGTX"),
            ("Sun Mar  1 03:04:05 2026", ""),
            ("2026-11-23 13:35:20", ""),
            ("2026-11-23T13:35:20.123", "Blocked:CKPT"),
        ] {
            let text = format!(
                "HCL Informix Dynamic Server Version 15.0.0.0 -- On-Line -- Up 00:01:00 -- 1024 Kbytes\n{date}\n{after}\n\nUserthreads\n"
            );
            let (p, next) = pre(&text);
            let h = p.into_parts().0.expect("banner");
            assert_eq!(h.date.as_deref(), Some(date));
            assert_eq!(h.blocked.as_deref(), after.strip_prefix("Blocked:"));
            let next_line = if after.is_empty() { 3 } else { 4 };
            assert_eq!(next, Some(next_line), "{text}");
        }
        // Blocked first, then the date.
        let (p, _) = pre("Version 15.0.0.0 -- On-Line -- Up 00:01:00 -- 1 Kbytes\nBlocked:CKPT\nMon Nov 23 13:35:20 2026\n");
        let h = p.into_parts().0.expect("banner");
        assert_eq!(h.date.as_deref(), Some("Mon Nov 23 13:35:20 2026"));
        assert_eq!(h.blocked.as_deref(), Some("CKPT"));
        for not_a_date in [
            "Mon Nov 23 13:35:20",
            "Mon Nov 23 13:35 2026",
            "Mon Nov 23 13:35:20 2026 extra",
            "2026-11-23",
            "13:35:20  Checkpoint Completed",
            "Moo Nov 23 13:35:20 2026",
        ] {
            assert!(!is_date_line(not_a_date), "{not_a_date}");
        }
    }

    /// A capture pasted into a ticket that lost the banner's start: read from the mode on, the
    /// version unknown. Real banners cut at the front: the first line of the GBase 8s capture
    /// `onstat-g-ses/gbase8s-ses-51-running-cut-banner.txt` (cut so by its author), and, cut
    /// here, the IBM 10.00 banner of `onstat-g-ses/cisco-uccx-15.0-cli-ses-27-10.00.txt`, the
    /// GBase `(Prim)` banner of `onstat-d/gbase8s-12.10-csdn-sbspace-metadata-...` and the HCL
    /// 14.10 `onstat -s` doc's `(CKPT REQ)` banner (wrapped in the doc, joined here).
    #[test]
    fn banner_copied_without_its_start() {
        let cases: [(&str, &str, &[&str], u64, u64); 4] = [
            (
                "On-Line -- Up 14 days 19:53:19 -- 674664 Kbytes",
                "On-Line",
                &[],
                14 * 86_400 + 19 * 3_600 + 53 * 60 + 19,
                674_664,
            ),
            (
                "-- On-Line -- Up 58 days 02:26:37 -- 444676 Kbytes",
                "On-Line",
                &[],
                58 * 86_400 + 2 * 3_600 + 26 * 60 + 37,
                444_676,
            ),
            (
                "On-Line (Prim) -- Up 00:16:02 -- 2023104 Kbytes",
                "On-Line",
                &["Prim"],
                16 * 60 + 2,
                2_023_104,
            ),
            (
                "  -- On-Line (CKPT REQ) -- Up 00:19:21 -- 167608 Kbytes",
                "On-Line",
                &["CKPT REQ"],
                19 * 60 + 21,
                167_608,
            ),
        ];
        for (line, mode, flags, up, kb) in cases {
            let (p, next) = pre(&format!("{line}\n\nUserthreads\n"));
            let h = p
                .into_parts()
                .0
                .unwrap_or_else(|| panic!("no banner: {line}"));
            assert_eq!((&h.product, &h.version), (&None, &None), "{line}");
            let got: Vec<&str> = h.mode_flags.iter().map(String::as_str).collect();
            assert_eq!((h.mode.as_str(), got.as_slice()), (mode, flags), "{line}");
            assert_eq!((h.uptime_s, h.shm_kb), (Some(up), Some(kb)), "{line}");
            assert_eq!(h.release(), None);
            assert_eq!(next, Some(3), "{line}");
        }
        // Without an uptime, or with a mode onstat never prints, it is not a banner.
        for not_banner in [
            "On-Line -- 674664 Kbytes",
            "Online -- Up 00:16:02 -- 2023104 Kbytes",
            "-- Up 00:16:02 -- 2023104 Kbytes",
        ] {
            assert!(
                banner(Line {
                    no: 1,
                    text: not_banner
                })
                .is_none(),
                "{not_banner}"
            );
        }
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
