//! `onstat -g dri`: High-Availability Data Replication (HDR): this server's type and state, its
//! paired server, the last DR checkpoint, the backlog, the last send/receive/ping times, the
//! last log page applied and the DR settings (`DRINTERVAL`, `DRTIMEOUT`, `HDR_TXN_SCOPE`, ...).

use super::ha::{label_key, label_value, whole_log_pos, whole_u64, LogPos};
use super::header::Header;
use super::lex::{self, dec_i64, hex_addr, sp0, sp1, trim_blanks, Line, PResult};
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::Addr;
use nom::bytes::complete::{tag, take_while1};
use nom::character::complete::char;
use nom::combinator::all_consuming;
use nom::Parser;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;

/// The whole output of one `onstat -g dri`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatGDri {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    /// `Data Replication at 0x4d676028:`.
    pub address: Option<Addr>,
    /// As printed: `primary`, `HDR Secondary`, `standard`, ...
    #[serde(rename = "type")]
    pub dr_type: Option<String>,
    /// As printed: `on`, `off`, `connecting`, ...
    pub state: Option<String>,
    /// Empty when no pair is defined.
    pub paired_server: Option<String>,
    /// `Last DR CKPT (id/pg)`: `4 / 5` → [4, 5] (`-1` when none).
    pub last_dr_ckpt: Option<DrCheckpoint>,
    /// `Supports Proxy Writes`: `Y`, `N` or `NA` as printed (newer builds).
    pub supports_proxy_writes: Option<String>,
    /// `Backlog  0`.
    pub backlog: Option<u64>,
    /// `Last Send  2013/12/11 16:39:48`, as printed.
    pub last_send: Option<String>,
    pub last_receive: Option<String>,
    pub last_ping: Option<String>,
    /// `Last log page applied(log id,page): 4,6`.
    pub last_applied: Option<LogPos>,
    /// The configuration lines (`DRINTERVAL 5`, `HDR_TXN_SCOPE NEAR_SYNC`): name → value as
    /// printed.
    #[serde(serialize_with = "super::numbers_or_texts")]
    pub settings: BTreeMap<String, String>,
    pub unparsed: Vec<Unparsed>,
}

/// `Last DR CKPT (id/pg)`: the log id and page of the last DR checkpoint (`-1 / -1` before the
/// first one), in JSON `[id, page]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrCheckpoint {
    pub id: i64,
    pub page: i64,
}

impl Serialize for DrCheckpoint {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (self.id, self.page).serialize(s)
    }
}

/// What a caller is told when the input is not `onstat -g dri` output at all.
const EXPECTED: &str = "onstat -g dri output: the title `Data Replication at 0x4d676028:`, the \
     column header `Type State Paired server Last DR CKPT (id/pg)`, the row \
     (`primary on my_server 4 / 5 NA`), a setting (`DRINTERVAL 5`), `Backlog`, `Last Send`, \
     `Last Receive`, `Last Ping` or `Last log page applied(log id,page): 4,6`";

/// Parses the output of `onstat -g dri`.
pub fn parse(text: &str) -> Result<OnstatGDri, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatGDri, onstat);

#[derive(Default)]
struct Body {
    /// The title or the column header was seen: the row and the settings follow it.
    titled: bool,
    /// The column header was seen and the row not yet.
    row_next: bool,
}

impl OnstatBody for Body {
    type Record = OnstatGDri;
    const EXPECTED: &'static str = EXPECTED;

    fn line<'a>(&mut self, out: &mut OnstatGDri, line: Line<'a>) -> Seen<'a> {
        let text = line.text;
        let t = trim_blanks(text);
        if let Some(a) = title(t) {
            out.address = Some(a);
            self.titled = true;
            return Seen::Known;
        }
        if lex::starts_with_words(text, &["Type", "State", "Paired", "server"]) {
            self.titled = true;
            self.row_next = true;
            return Seen::Known;
        }
        if !self.titled {
            return Seen::Miss(Miss::new(t, "the title `Data Replication at 0x...:`"));
        }
        if self.row_next {
            self.row_next = false;
            return match dr_row(t) {
                Ok(r) => {
                    out.dr_type = Some(r.dr_type);
                    out.state = Some(r.state.to_string());
                    out.paired_server = Some(r.paired.to_string());
                    out.last_dr_ckpt = Some(r.ckpt);
                    out.supports_proxy_writes = r.proxy_writes.map(str::to_string);
                    Seen::Known
                }
                Err(miss) => Seen::Miss(miss),
            };
        }
        if let Some(seen) = timing_line(out, t) {
            return seen;
        }
        match setting(t) {
            Some((name, value)) => {
                out.settings.insert(name.to_string(), value.to_string());
                Seen::Known
            }
            None => Seen::Miss(Miss::new(t, "a setting (`DRINTERVAL 5`)")),
        }
    }
}

/// `Data Replication at 0x4d676028:`
fn title(t: &str) -> Option<Addr> {
    let parsed: PResult<'_, _> =
        all_consuming((tag("Data Replication at 0x"), hex_addr, char(':'))).parse(t);
    parsed.ok().map(|(_, (_, a, _))| a)
}

/// `Backlog 0`, `Last Send 2013/12/11 16:39:48`, `Last Receive ...`, `Last Ping ...`, `Last log
/// page applied(log id,page): 4,6`; `None` when the line is none of these.
fn timing_line<'a>(out: &mut OnstatGDri, t: &'a str) -> Option<Seen<'a>> {
    if let Some((label, value)) = label_value(t) {
        if label_key(label) == "last log page applied" {
            return Some(match whole_log_pos(value) {
                Some(p) => {
                    out.last_applied = Some(p);
                    Seen::Known
                }
                None => Seen::Miss(Miss::new(value, "a log position (`4,6`)")),
            });
        }
    }
    let (slot, rest) = if let Some(rest) = t.strip_prefix("Backlog") {
        return Some(
            match whole_u64(rest).filter(|_| rest.starts_with([' ', '\t'])) {
                Some(n) => {
                    out.backlog = Some(n);
                    Seen::Known
                }
                None => Seen::Miss(Miss::new(rest, "a backlog (a number)")),
            },
        );
    } else if let Some(rest) = t.strip_prefix("Last Send") {
        (&mut out.last_send, rest)
    } else if let Some(rest) = t.strip_prefix("Last Receive") {
        (&mut out.last_receive, rest)
    } else if let Some(rest) = t.strip_prefix("Last Ping") {
        (&mut out.last_ping, rest)
    } else {
        return None;
    };
    if !rest.starts_with([' ', '\t']) && !rest.is_empty() {
        return None;
    }
    *slot = Some(trim_blanks(rest).to_string());
    Some(Seen::Known)
}

/// `DRINTERVAL   5`, `DRLOSTFOUND  /etc/dr.lostfound`, `HDR_TXN_SCOPE NEAR_SYNC`: an upper-case
/// name, then its value as printed (possibly empty).
fn setting(t: &str) -> Option<(&str, &str)> {
    let parsed: PResult<'_, _> =
        take_while1(|c: char| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_').parse(t);
    let (rest, name) = parsed.ok()?;
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    name.starts_with(|c: char| c.is_ascii_uppercase())
        .then(|| (name, trim_blanks(rest)))
}

/// The one row under the column header.
struct DrRow<'a> {
    dr_type: String,
    state: &'a str,
    paired: &'a str,
    ckpt: DrCheckpoint,
    proxy_writes: Option<&'a str>,
}

/// `primary  on  my_server  4 / 5  NA`, `HDR Secondary  on  ifx1_dr  31 / 4836  N`,
/// `standard  off  -1 / -1  NA`. The type may be two words (`HDR Secondary`): the state is the
/// first all-lower-case word after the first, the paired server what follows it (if anything)
/// before the checkpoint; proxy writes (`Y`, `N`, `NA`) end the row in newer builds.
fn dr_row(t: &str) -> Result<DrRow<'_>, Miss<'_>> {
    let (left, ckpt, proxy_writes) = split_checkpoint(t)?;
    let left = trim_blanks(left);
    // The type: the first word and every word after it up to the state.
    let parsed: PResult<'_, _> = lex::word(left);
    let (mut rest, _) = parsed.map_err(|_| Miss::new(left, "a type (`primary`)"))?;
    let state = loop {
        let parsed: PResult<'_, _> = (sp1, lex::word).parse(rest);
        let (after, (_, w)) =
            parsed.map_err(|_| Miss::new(rest, "a lower-case state (`on`) after the type"))?;
        if is_state(w) {
            break w;
        }
        rest = after;
    };
    let dr_type = trim_blanks(&left[..lex::offset_in(left, rest)]);
    let after_state = &rest[lex::offset_in(rest, state) + state.len()..];
    let paired = trim_blanks(after_state);
    if paired.contains([' ', '\t']) {
        return Err(Miss::new(
            paired,
            "one paired server name before the checkpoint",
        ));
    }
    Ok(DrRow {
        dr_type: dr_type.to_string(),
        state,
        paired,
        ckpt,
        proxy_writes,
    })
}

/// A DR state as printed: lower-case letters and `-` (`on`, `off`, `connecting`, `read-only`).
fn is_state(w: &str) -> bool {
    w.chars().all(|c| c.is_ascii_lowercase() || c == '-')
}

/// Splits `... 4 / 5 [NA]` into what precedes the checkpoint, the checkpoint and proxy writes.
fn split_checkpoint(t: &str) -> Result<(&str, DrCheckpoint, Option<&str>), Miss<'_>> {
    let slash = t
        .rfind('/')
        .ok_or(Miss::new(t, "the last DR checkpoint (`4 / 5`)"))?;
    let (before, after) = (&t[..slash], &t[slash + 1..]);
    let (left, id) =
        lex::last_word(before).ok_or(Miss::new(before, "a checkpoint log id before `/`"))?;
    let parsed: PResult<'_, _> = all_consuming(dec_i64).parse(id);
    let (_, id) = parsed.map_err(|_| Miss::new(before, "a checkpoint log id before `/`"))?;
    let parsed: PResult<'_, _> = (sp0, dec_i64, sp0).parse(after);
    let (rest, (_, page, _)) =
        parsed.map_err(|_| Miss::new(after, "a checkpoint page after `/`"))?;
    let proxy_writes = match trim_blanks(rest) {
        "" => None,
        w @ ("Y" | "N" | "NA") => Some(w),
        other => return Err(Miss::new(other, "`Y`, `N` or `NA` (supports proxy writes)")),
    };
    Ok((left, DrCheckpoint { id, page }, proxy_writes))
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn rows_with_one_and_two_word_types() {
        let r =
            dr_row("primary        on           my_server                      4 / 5          NA")
                .expect("primary");
        assert_eq!(
            (r.dr_type.as_str(), r.state, r.paired),
            ("primary", "on", "my_server")
        );
        assert_eq!((r.ckpt.id, r.ckpt.page, r.proxy_writes), (4, 5, Some("NA")));
        let r =
            dr_row("HDR Secondary  on           ifx1_dr                      31 / 4836       N")
                .expect("secondary");
        assert_eq!((r.dr_type.as_str(), r.paired), ("HDR Secondary", "ifx1_dr"));
        let r =
            dr_row("standard       off                                  -1 / -1").expect("none");
        assert_eq!((r.state, r.paired, r.ckpt.id), ("off", "", -1));
        assert!(dr_row("primary on a b 4 / 5").is_err());
        assert!(dr_row("primary on my_server 4 / 5 maybe").is_err());
    }

    #[test]
    fn settings_and_titles() {
        assert_eq!(
            setting("HDR_TXN_SCOPE NEAR_SYNC"),
            Some(("HDR_TXN_SCOPE", "NEAR_SYNC"))
        );
        assert_eq!(setting("DRLOSTFOUND"), Some(("DRLOSTFOUND", "")));
        assert_eq!(setting("Backlog 0"), None);
        assert_eq!(setting("_X 1"), None);
        assert_eq!(
            title("Data Replication at 0x463cc028:"),
            Some(Addr(0x463c_c028))
        );
    }
}
