//! `onstat -g bth` (who blocks whom: the highest-level blockers and the threads waiting on
//! resources) and `onstat -g BTH` (the same, plus each blocker's stack and its session as
//! `onstat -g ses <sid>` prints it).

use super::header::Header;
use super::lex::{self, dec_u64, hex_addr, last_word, Line, PResult};
use super::onstat_b::column;
use super::onstat_g_ath::collapse_blanks;
use super::onstat_g_ses::{self, OnstatGSes};
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::{Addr, Sid, Tid};
use nom::bytes::complete::{tag, take_till1};
use nom::character::complete::char;
use nom::combinator::all_consuming;
use nom::sequence::delimited;
use nom::Parser;
use serde::Serialize;

/// The whole output of one `onstat -g bth` or `onstat -g BTH`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatGBth {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    /// `Highest level blocker(s)`: threads that block others and wait on nothing themselves.
    pub blockers: Vec<Blocker>,
    /// `Threads waiting on resources`.
    pub waiting: Vec<WaitingThread>,
    /// `onstat -g BTH`: each blocker's stack.
    pub stacks: Vec<ThreadStack>,
    /// `onstat -g BTH`: each blocker's session, read by the `onstat -g ses` parser (its lines
    /// not understood are listed in this record's `unparsed`).
    pub blocker_sessions: Vec<OnstatGSes>,
    pub unparsed: Vec<Unparsed>,
}

/// `48  sqlexec  26`
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Blocker {
    pub tid: Tid,
    pub name: String,
    pub session: Sid,
}

/// `50  sqlexec  Lock (0x4411e578)  49`
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WaitingThread {
    pub tid: Tid,
    pub name: String,
    /// As printed, blanks collapsed: `MGM`, `Lock (0x4411e578)`, `Condition (ReadAhead)`.
    pub resource: String,
    /// The address in the resource's parentheses when it is one (`Lock (0x4411e578)`): the
    /// `onstat -k` lock address.
    pub resource_address: Option<Addr>,
    /// The thread blocking it; `None` for `-` (a condition has no owner).
    pub blocker: Option<Tid>,
}

/// `Stack for thread: 48 sqlexec` and the lines under it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThreadStack {
    pub tid: Tid,
    pub name: String,
    pub base: Option<Addr>,
    pub len: Option<u64>,
    pub pc: Option<Addr>,
    pub tos: Option<Addr>,
    /// `ready`, `running`, ... as printed.
    pub state: Option<String>,
    pub vp: Option<u64>,
    /// Innermost first.
    pub frames: Vec<StackFrame>,
}

/// `0x00000000017b32c3 (oninit) yield_processor_svp`
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StackFrame {
    pub pc: Addr,
    pub module: String,
    pub function: String,
}

/// What a caller is told when the input is not `onstat -g bth` output at all.
const EXPECTED: &str = "onstat -g bth output: `This command attempts to identify any blocking \
     threads.`, the titles `Highest level blocker(s)` and `Threads waiting on resources` with \
     their rows (`48 sqlexec 26`, `50 sqlexec Lock (0x4411e578) 49`), or (`onstat -g BTH`) \
     `Stack for thread: 48 sqlexec`";

/// Parses the output of `onstat -g bth` or `onstat -g BTH`.
pub fn parse(text: &str) -> Result<OnstatGBth, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatGBth, onstat);

#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Section {
    #[default]
    None,
    Blockers,
    Waiting,
    Stack,
    /// A blocker's session (`onstat -g BTH`), up to the next part of this command's own.
    Session,
}

/// A blocker's session block: its lines (blank ones too, which end parts of it) with their
/// line numbers in the whole input.
#[derive(Default)]
struct SessionBlock {
    text: String,
    line_nos: Vec<usize>,
}

#[derive(Default)]
struct Body {
    section: Section,
    /// A line only this command prints was seen: a session block is only taken as one after
    /// it (alone, it is `onstat -g ses` output, not this).
    own_seen: bool,
    sessions: Vec<SessionBlock>,
}

impl OnstatBody for Body {
    type Record = OnstatGBth;
    const EXPECTED: &'static str = EXPECTED;

    fn blank(&mut self, _out: &mut OnstatGBth) {
        if self.section == Section::Session {
            if let Some(b) = self.sessions.last_mut() {
                b.text.push('\n');
                b.line_nos.push(0);
            }
        }
    }

    fn line<'a>(&mut self, out: &mut OnstatGBth, line: Line<'a>) -> Seen<'a> {
        let t = lex::trim_blanks(line.text);
        if let Some(section) = own_line(t, out) {
            self.own_seen = true;
            if section != Section::None {
                self.section = section;
            }
            return Seen::Known;
        }
        if self.own_seen && is_session_header(t) {
            self.section = Section::Session;
            self.sessions.push(SessionBlock::default());
        }
        if self.section == Section::Session {
            if let Some(b) = self.sessions.last_mut() {
                b.text.push_str(line.text);
                b.text.push('\n');
                b.line_nos.push(line.no);
                // Read as a whole by `finish`.
                return Seen::Skipped;
            }
        }
        let row = match self.section {
            Section::Blockers => blocker(t).map(|b| out.blockers.push(b)),
            Section::Waiting => waiting(t).map(|w| out.waiting.push(w)),
            Section::Stack => stack_line(t, out),
            Section::None | Section::Session => Err(Miss::new(
                t,
                "a title (`Highest level blocker(s)`, `Threads waiting on resources`, \
                 `Stack for thread:`) before the rows",
            )),
        };
        match row {
            Ok(()) => Seen::Known,
            Err(miss) => Seen::Miss(miss),
        }
    }

    fn finish(&mut self, out: &mut OnstatGBth) -> Result<(), ParseError> {
        for block in std::mem::take(&mut self.sessions) {
            let no = |n: usize| block.line_nos.get(n.wrapping_sub(1)).copied().unwrap_or(0);
            match onstat_g_ses::parse(&block.text) {
                Ok(mut ses) => {
                    out.unparsed
                        .extend(
                            std::mem::take(&mut ses.unparsed)
                                .into_iter()
                                .map(|u| Unparsed {
                                    line: no(u.line),
                                    ..u
                                }),
                        );
                    out.blocker_sessions.push(ses);
                }
                Err(_) => out.unparsed.extend(
                    block
                        .text
                        .lines()
                        .zip(&block.line_nos)
                        .filter(|(_, n)| **n != 0)
                        .map(|(text, n)| Unparsed {
                            line: *n,
                            text: text.to_string(),
                            more: 0,
                        }),
                ),
            }
        }
        out.unparsed.sort_by_key(|u| u.line);
        Ok(())
    }
}

/// The lines only this command prints, and the part each opens (`None`: no new part). A
/// `Stack for thread:` line also starts a stack in `out`.
fn own_line(t: &str, out: &mut OnstatGBth) -> Option<Section> {
    Some(match t {
        "This command attempts to identify any blocking threads." => Section::None,
        "Highest level blocker(s)" => Section::Blockers,
        "Threads waiting on resources" => Section::Waiting,
        "Run 'onstat -g BTH' for more info on blockers." => Section::None,
        _ if lex::starts_with_words(t, &["tid", "name", "session"]) => Section::Blockers,
        _ if lex::starts_with_words(t, &["tid", "name", "blocking", "resource", "blocker"]) => {
            Section::Waiting
        }
        _ => {
            let (tid, name) = stack_title(t)?;
            out.stacks.push(ThreadStack {
                tid,
                name: name.to_string(),
                base: None,
                len: None,
                pc: None,
                tos: None,
                state: None,
                vp: None,
                frames: Vec::new(),
            });
            Section::Stack
        }
    })
}

/// `session  effective  #RSAM  total  used  dynamic`: where `onstat -g ses <sid>` output begins.
fn is_session_header(t: &str) -> bool {
    lex::starts_with_words(t, &["session"]) && lex::header_words(t).any(|w| w == "#RSAM")
}

/// `Stack for thread: 48 sqlexec` → (tid, name).
fn stack_title(t: &str) -> Option<(Tid, &str)> {
    let parsed: PResult<'_, _> = (tag("Stack for thread:"), lex::sp0, dec_u64, lex::sp1).parse(t);
    let (name, (_, _, tid, _)) = parsed.ok()?;
    (!name.is_empty()).then_some((Tid(tid), name))
}

/// `0x00000000461a3000`
fn hex_0x(i: &str) -> PResult<'_, Addr> {
    let (i, _) = tag("0x").parse(i)?;
    hex_addr(i)
}

/// A line of a stack: `base: 0x...`, `len: 69632`, `pc:`, `tos:`, `state: ready`, `vp: 1`, or
/// a frame.
fn stack_line<'a>(t: &'a str, out: &mut OnstatGBth) -> Result<(), Miss<'a>> {
    let Some(stack) = out.stacks.last_mut() else {
        return Err(Miss::new(t, "`Stack for thread:` first"));
    };
    if let Ok((_, frame)) = frame(t) {
        stack.frames.push(frame);
        return Ok(());
    }
    let Some((key, value)) = t.split_once(':') else {
        return Err(Miss::new(t, "a stack field (`pc: 0x...`) or a frame"));
    };
    let value = lex::trim_blanks(value);
    let at = &t[lex::offset_in(t, value)..];
    let addr = || {
        all_consuming(hex_0x)
            .parse(value)
            .map(|(_, a)| a)
            .map_err(|_| Miss::new(at, "an address (`0x...`)"))
    };
    let number = || {
        all_consuming(dec_u64)
            .parse(value)
            .map(|(_, n)| n)
            .map_err(|_| Miss::new(at, "a number"))
    };
    match key {
        "base" => stack.base = Some(addr()?),
        "pc" => stack.pc = Some(addr()?),
        "tos" => stack.tos = Some(addr()?),
        "len" => stack.len = Some(number()?),
        "vp" => stack.vp = Some(number()?),
        "state" if !value.is_empty() => stack.state = Some(value.to_string()),
        _ => {
            return Err(Miss::new(
                t,
                "a stack field (`base`, `len`, `pc`, `tos`, `state`, `vp`) or a frame",
            ))
        }
    }
    Ok(())
}

/// `0x00000000017b32c3 (oninit) yield_processor_svp`
fn frame(t: &str) -> PResult<'_, StackFrame> {
    let (i, pc) = hex_0x(t)?;
    let (i, _) = lex::sp1(i)?;
    let (i, module) = delimited(char('('), take_till1(|c| c == ')'), char(')')).parse(i)?;
    let (function, _) = lex::sp1(i)?;
    if function.is_empty() {
        return Err(nom::Err::Error(nom::error::Error::new(
            function,
            nom::error::ErrorKind::Eof,
        )));
    }
    Ok((
        "",
        StackFrame {
            pc,
            module: module.to_string(),
            function: function.to_string(),
        },
    ))
}

/// `48  sqlexec  26`: tid, name (the words between), session.
fn blocker(t: &str) -> Result<Blocker, Miss<'_>> {
    let (i, tid) = column(t, dec_u64, "a thread id (tid)")?;
    let (name, last) = last_word(i).ok_or(Miss::new(i, "a name and a session id"))?;
    let session = all_consuming(dec_u64)
        .parse(last)
        .map(|(_, s)| s)
        .map_err(|_| Miss::new(&i[lex::offset_in(i, last)..], "a session id at the end"))?;
    let name = lex::trim_blanks(name);
    if name.is_empty() {
        return Err(Miss::new(i, "a thread name before the session id"));
    }
    Ok(Blocker {
        tid: Tid(tid),
        name: collapse_blanks(name),
        session: Sid(session),
    })
}

/// `50  sqlexec  Lock (0x4411e578)  49`: tid, name (one word), the resource (the words up to
/// the last), the blocker (a tid, or `-`).
fn waiting(t: &str) -> Result<WaitingThread, Miss<'_>> {
    let (i, tid) = column(t, dec_u64, "a thread id (tid)")?;
    let name_word = |i| take_till1(lex::is_blank).parse(i);
    let (i, name) = column(i, name_word, "a thread name")?;
    let (resource, last) = last_word(i).ok_or(Miss::new(i, "a resource and a blocker"))?;
    let resource = lex::trim_blanks(resource);
    if resource.is_empty() {
        return Err(Miss::new(i, "a resource before the blocker"));
    }
    let blocker = if last == "-" {
        None
    } else {
        let (_, b) = all_consuming(dec_u64).parse(last).map_err(|_| {
            Miss::new(
                &i[lex::offset_in(i, last)..],
                "a blocker (a tid, or `-`) at the end",
            )
        })?;
        Some(Tid(b))
    };
    Ok(WaitingThread {
        tid: Tid(tid),
        name: name.to_string(),
        resource_address: resource_address(resource),
        resource: collapse_blanks(resource),
        blocker,
    })
}

/// `Lock (0x4411e578)` → the address.
fn resource_address(resource: &str) -> Option<Addr> {
    let open = resource.find('(')?;
    let inner = resource[open + 1..].strip_suffix(')')?;
    all_consuming(hex_0x).parse(inner).ok().map(|(_, a)| a)
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn waiting_rows() {
        let w = waiting("50       sqlexec              Lock (0x4411e578)              49")
            .expect("lock");
        assert_eq!(w.resource, "Lock (0x4411e578)");
        assert_eq!(w.resource_address, Some(Addr(0x4411_e578)));
        assert_eq!(w.blocker, Some(Tid(49)));
        let w = waiting("13       readahead_0          Condition (ReadAhead)           -")
            .expect("condition");
        assert_eq!((w.blocker, w.resource_address), (None, None));
        assert!(waiting("13 readahead_0 -").is_err());
        assert!(waiting("13 readahead_0 MGM x").is_err());
    }

    #[test]
    fn stack_parts() {
        assert_eq!(
            stack_title("Stack for thread: 48 sqlexec"),
            Some((Tid(48), "sqlexec"))
        );
        let (_, f) = frame("0x00000000017b32c3 (oninit) yield_processor_svp").expect("frame");
        assert_eq!(
            (f.module.as_str(), f.function.as_str()),
            ("oninit", "yield_processor_svp")
        );
        assert!(frame("0x17b32c3 oninit yield").is_err());
    }
}
