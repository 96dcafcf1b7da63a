//! `onstat -g ses` (the session list, with `Last 20 Sessions Terminated` where printed) and
//! `onstat -g ses <sid>` (one session's detail: its threads and its SQL). The SQL part (the
//! `Sess SQL Current ...` table and the statements) is shared with `onstat -g sql`.

use super::header::Header;
use super::lex::last_word;
use super::lex::{self, dec_i64, dec_u64, hex_addr, sp0, sp1, Line, PResult};
use super::onstat_g_ath::collapse_blanks;
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::{Addr, Sid, Tid};
use compact_str::CompactString;
use nom::bytes::complete::{tag, take_till1, take_while_m_n};
use nom::character::complete::char;
use nom::combinator::{all_consuming, opt};
use nom::sequence::delimited;
use nom::Parser;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatGSes {
    pub header: Option<Header>,
    pub offline: Option<String>,
    /// The session table (one row with `onstat -g ses <sid>`).
    pub sessions: Vec<SessionRow>,
    /// `Last 20 Sessions Terminated` (newer versions of the list).
    pub terminated: Vec<TerminatedSession>,
    /// The parts only `onstat -g ses <sid>` prints.
    pub detail: Option<SessionDetail>,
    pub unparsed: Vec<Unparsed>,
}

/// `id user tty pid hostname #RSAM-threads total-memory used-memory [dynamic-explain]`, with the
/// `effective user` column of newer detail output when present.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionRow {
    pub sid: Sid,
    pub user: CompactString,
    /// `None` for `-`.
    pub effective_user: Option<CompactString>,
    pub tty: Option<CompactString>,
    /// The client process id (0 or `-` for server-internal sessions: `None`).
    pub pid: Option<u64>,
    /// `None` for `-`.
    pub hostname: Option<CompactString>,
    pub threads: u64,
    pub total_memory: u64,
    pub used_memory: u64,
    /// `on`/`off` where printed.
    pub dynamic_explain: Option<CompactString>,
}

/// One row of `Last 20 Sessions Terminated`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TerminatedSession {
    pub sid: Sid,
    pub user: CompactString,
    pub hostname: CompactString,
    pub pid: u64,
    /// As printed: `01/19/2015.15:20`.
    pub time: CompactString,
    pub reason: String,
}

/// What `onstat -g ses <sid>` adds to the session row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct SessionDetail {
    /// `Program :` line(s), when printed.
    pub program: Option<String>,
    /// `tid name rstcb flags curstk status`.
    pub threads: Vec<SesThread>,
    /// From the `Sess SQL ...` table: statement type, database, isolation, lock mode, errors.
    pub sql: Option<SqlState>,
    /// `Current statement name : slctcur`.
    pub statement_name: Option<CompactString>,
    /// The number in `Current SQL statement (5) :`, where printed.
    pub current_sql_id: Option<u64>,
    /// `Current SQL statement :` (may span lines; joined with `\n`, indentation removed).
    pub current_sql: Option<String>,
    /// `Last parsed SQL statement :`.
    pub last_parsed_sql: Option<String>,
    /// `11600 byte(s) of memory is allocated from the sscpool`, where printed.
    pub sscpool_bytes: Option<u64>,
    /// `Xadatasources participated in this session :`, printed for a session in an XA
    /// transaction (right after the statement text, no blank line between).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub xa_datasources: Vec<XaDatasource>,
}

/// One row under `Xadatasource name  RMID  Active`:
/// `xabasicdb@atmol10:sitaramv.xads_t3_i1  6  YES`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct XaDatasource {
    pub name: String,
    /// The resource manager id the XA calls name it by.
    pub rmid: u64,
    /// `YES` / `NO`.
    pub active: bool,
}

/// One thread of a session: `78  sqlexec  4b4ad628  Y--P---  5840  cond wait  netnorm -`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SesThread {
    pub tid: Tid,
    pub name: CompactString,
    pub rstcb: Addr,
    /// The 7 `onstat -u` flag characters as printed.
    pub flags: CompactString,
    pub curstk: u64,
    /// As printed, blanks collapsed.
    pub status: String,
}

/// The `Sess SQL Current Iso Lock SQL ISAM F.E.` table row (shared with `onstat -g sql`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SqlState {
    pub sid: Sid,
    /// `SELECT`, `INSERT`, ...; `None` for `-`.
    pub stmt_type: Option<CompactString>,
    /// `None` for `-`.
    pub database: Option<CompactString>,
    /// `CR`, `DR`, `CS`, `RR`, `NL`, ...
    pub isolation: Option<CompactString>,
    /// `Not Wait`, `Wait 30`, ...
    pub lock_mode: Option<CompactString>,
    pub sql_error: Option<i64>,
    pub isam_error: Option<i64>,
    /// Client library version (`9.24`), `None` for `-`.
    pub fe_version: Option<CompactString>,
    /// `Off`/`On`, where printed.
    pub explain: Option<CompactString>,
    /// `Current Role`, where printed (`hr`).
    pub role: Option<CompactString>,
}

/// What a caller is told when the input is not `onstat -g ses` output at all.
const EXPECTED: &str = "onstat -g ses output: the column header \
     `session #RSAM total used` / `id user tty pid hostname threads memory memory`, a session \
     row (`23 informix - 17602 carson 1 57344 48968 off`), `Last 20 Sessions Terminated`, or \
     the parts of `onstat -g ses <sid>` (`Program :`, `tid name rstcb flags curstk status`, \
     `Sess SQL Current Iso Lock ...`, `Current SQL statement :`)";

/// Which table the lines under a title or column header belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Section {
    /// Nothing seen yet, or rows picked out by `grep`.
    #[default]
    None,
    /// The session table; `Some(true)` when its header has the `effective user` column.
    Sessions(Option<bool>),
    Terminated,
    /// After `Program :`: the program's path, up to a blank line.
    Program,
    Threads,
    /// `Memory pools`, the `name free used` pairs and `sqscb info`: recognised, not kept.
    Pools,
    Pairs,
    Sqscb,
    Sql,
    /// Statement text up to a blank line.
    Text(TextBlock),
    /// The XA data sources of the session.
    Xa,
}

/// Which statement the text lines belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TextBlock {
    Current,
    LastParsed,
}

/// Parses the output of `onstat -g ses` (the list) or `onstat -g ses <sid>` (one session).
pub fn parse(text: &str) -> Result<OnstatGSes, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatGSes, onstat; sessions, terminated);

#[derive(Default)]
struct Body {
    section: Section,
}

impl OnstatBody for Body {
    type Record = OnstatGSes;
    const EXPECTED: &'static str = EXPECTED;
    // `onstat -g ses <sid>` for a session that does not exist (or has no SQL) prints the banner
    // alone: an answer, not garbage.
    const BANNER_ALONE: bool = true;

    fn blank(&mut self, _out: &mut OnstatGSes) {
        if matches!(self.section, Section::Program | Section::Text(_)) {
            self.section = Section::None;
        }
    }

    fn line<'a>(&mut self, out: &mut OnstatGSes, line: Line<'a>) -> Seen<'a> {
        let t = line.text;
        // `onstat -g BTH` prints each blocker's `onstat -g ses` part after its own intro and
        // stacks: that output is `onstat -g bth`'s.
        let trimmed = t.trim();
        if trimmed == "This command attempts to identify any blocking threads."
            || trimmed.starts_with("Stack for thread:")
        {
            return Seen::Foreign("onstat -g bth");
        }
        // Statement text: every line up to a blank one, unless it starts a new part.
        if let Section::Text(block) = self.section {
            if sql_line(t).is_none() && !is_xa_title(t) {
                let detail = out.detail.get_or_insert_with(SessionDetail::default);
                let target = match block {
                    TextBlock::Current => &mut detail.current_sql,
                    TextBlock::LastParsed => &mut detail.last_parsed_sql,
                };
                push_sql_text(target, t);
                return Seen::Skipped;
            }
        }
        if self.section == Section::Program && !is_threads_header(t) {
            let p = t.trim();
            if p != "-" {
                let detail = out.detail.get_or_insert_with(SessionDetail::default);
                push_sql_text(&mut detail.program, p);
            }
            return Seen::Known;
        }
        match line_kind(t, self.section) {
            Ok(kind) => match (evidence(&kind), apply(out, kind, self.section)) {
                (evidence, Some(next)) => {
                    self.section = next;
                    match evidence {
                        Evidence::Own => Seen::Known,
                        Evidence::Row => Seen::Row,
                        Evidence::Shared => Seen::Shared,
                    }
                }
                (_, None) => Seen::KnownUnused,
            },
            Err(miss) => Seen::Miss(miss),
        }
    }
}

/// How much a line says the input is `onstat -g ses`.
enum Evidence {
    /// A title or header only `onstat -g ses` prints.
    Own,
    /// A table's row: numbers and names any command may print.
    Row,
    /// The SQL part, which `onstat -g sql` prints the same.
    Shared,
}

fn evidence(kind: &Kind<'_>) -> Evidence {
    match kind {
        Kind::Sql(_) | Kind::SqlRow(_) => Evidence::Shared,
        Kind::Session(_)
        | Kind::Terminated(_)
        | Kind::Thread(_)
        | Kind::Pool
        | Kind::Pair
        | Kind::Sqscb
        | Kind::XaRow(_) => Evidence::Row,
        _ => Evidence::Own,
    }
}

/// What one line of `onstat -g ses` is.
enum Kind<'a> {
    SessionHeader,
    /// The second header line, telling whether there is an `effective user` column.
    SessionColumns(bool),
    Session(SessionRow),
    TerminatedTitle,
    TerminatedHeader,
    Terminated(TerminatedSession),
    ProgramTitle,
    ThreadsHeader,
    Thread(SesThread),
    PoolsTitle,
    PoolsHeader,
    Pool,
    PairsHeader,
    Pair,
    SqscbTitle,
    SqscbHeader,
    Sqscb,
    Sql(SqlLine<'a>),
    SqlRow(SqlState),
    XaTitle,
    XaHeader,
    XaRow(XaDatasource),
}

/// Classifies a line: the current section's rows first, then every title and header, then the
/// rows a grep may have picked out of any table.
fn line_kind(t: &str, section: Section) -> Result<Kind<'_>, Miss<'_>> {
    let in_section = match section {
        Section::Threads => ses_thread(t).map(Kind::Thread).ok(),
        Section::Terminated => terminated_row(t).map(Kind::Terminated).ok(),
        Section::Pools => is_pool_row(t).then_some(Kind::Pool),
        Section::Pairs => is_pairs_row(t).then_some(Kind::Pair),
        Section::Sqscb => is_sqscb_row(t).then_some(Kind::Sqscb),
        Section::Sql => sql_state(t).map(Kind::SqlRow).ok(),
        Section::Xa => xa_row(t).map(Kind::XaRow),
        _ => None,
    };
    if let Some(k) = in_section {
        return Ok(k);
    }
    if let Some(k) = title_or_header(t) {
        return Ok(k);
    }
    let effective = match section {
        Section::Sessions(e) => e,
        _ => None,
    };
    let miss = match session_row(t, effective) {
        Ok(s) => return Ok(Kind::Session(s)),
        Err(m) => m,
    };
    if section == Section::None {
        // Rows without their header (`onstat -g ses | grep ...`).
        if let Ok(s) = terminated_row(t) {
            return Ok(Kind::Terminated(s));
        }
        if let Ok(s) = ses_thread(t) {
            return Ok(Kind::Thread(s));
        }
        if let Ok(s) = sql_state(t) {
            return Ok(Kind::SqlRow(s));
        }
    }
    Err(miss)
}

fn title_or_header(t: &str) -> Option<Kind<'_>> {
    if let Some(s) = sql_line(t) {
        return Some(Kind::Sql(s));
    }
    Some(if is_session_header(t) {
        Kind::SessionHeader
    } else if let Some(effective) = session_columns(t) {
        Kind::SessionColumns(effective)
    } else if is_terminated_title(t) {
        Kind::TerminatedTitle
    } else if lex::starts_with_words(t, &["Ses", "ID", "Username", "Hostname", "PID"]) {
        Kind::TerminatedHeader
    } else if is_program_title(t) {
        Kind::ProgramTitle
    } else if is_threads_header(t) {
        Kind::ThreadsHeader
    } else if lex::starts_with_words(t, &["Memory", "pools"]) {
        Kind::PoolsTitle
    } else if lex::starts_with_words(t, &["name", "class", "addr", "totalsize"]) {
        Kind::PoolsHeader
    } else if lex::starts_with_words(t, &["name", "free", "used"]) {
        Kind::PairsHeader
    } else if t.trim() == "sqscb info" {
        Kind::SqscbTitle
    } else if lex::starts_with_words(t, &["scb", "sqscb", "optofc"]) {
        Kind::SqscbHeader
    } else if is_xa_title(t) {
        Kind::XaTitle
    } else if lex::starts_with_words(t, &["Xadatasource", "name", "RMID"]) {
        Kind::XaHeader
    } else {
        return None;
    })
}

/// Applies a recognised line; returns the section that follows it, or `None` when the line
/// repeats a part already read (it is then listed as unparsed).
fn apply(out: &mut OnstatGSes, kind: Kind<'_>, section: Section) -> Option<Section> {
    let next = match kind {
        Kind::SessionHeader => Section::Sessions(None),
        Kind::SessionColumns(e) => Section::Sessions(Some(e)),
        Kind::Session(s) => {
            out.sessions.push(s);
            match section {
                Section::Sessions(_) => section,
                _ => Section::None,
            }
        }
        Kind::TerminatedTitle | Kind::TerminatedHeader => Section::Terminated,
        Kind::Terminated(s) => {
            out.terminated.push(s);
            section
        }
        Kind::ProgramTitle => {
            let d = out.detail.get_or_insert_with(SessionDetail::default);
            if d.program.is_some() {
                return None;
            }
            Section::Program
        }
        Kind::ThreadsHeader => {
            out.detail.get_or_insert_with(SessionDetail::default);
            Section::Threads
        }
        Kind::Thread(th) => {
            let d = out.detail.get_or_insert_with(SessionDetail::default);
            d.threads.push(th);
            section
        }
        Kind::PoolsTitle | Kind::PoolsHeader => {
            out.detail.get_or_insert_with(SessionDetail::default);
            Section::Pools
        }
        Kind::Pool | Kind::Pair | Kind::Sqscb => section,
        Kind::PairsHeader => Section::Pairs,
        Kind::SqscbTitle | Kind::SqscbHeader => Section::Sqscb,
        Kind::XaTitle | Kind::XaHeader => {
            out.detail.get_or_insert_with(SessionDetail::default);
            Section::Xa
        }
        Kind::XaRow(x) => {
            out.detail
                .get_or_insert_with(SessionDetail::default)
                .xa_datasources
                .push(x);
            Section::Xa
        }
        Kind::SqlRow(s) => {
            let d = out.detail.get_or_insert_with(SessionDetail::default);
            if d.sql.is_some() {
                return None;
            }
            d.sql = Some(s);
            Section::Sql
        }
        Kind::Sql(l) => {
            let d = out.detail.get_or_insert_with(SessionDetail::default);
            match l {
                SqlLine::Header => Section::Sql,
                SqlLine::StatementName(n) => {
                    if d.statement_name.is_some() {
                        return None;
                    }
                    d.statement_name = Some(CompactString::new(n));
                    Section::None
                }
                SqlLine::CurrentSql(id) => {
                    if d.current_sql.is_some() {
                        return None;
                    }
                    d.current_sql_id = id;
                    Section::Text(TextBlock::Current)
                }
                SqlLine::LastParsed => {
                    if d.last_parsed_sql.is_some() {
                        return None;
                    }
                    Section::Text(TextBlock::LastParsed)
                }
                SqlLine::Sscpool(b) => {
                    if d.sscpool_bytes.is_some() {
                        return None;
                    }
                    d.sscpool_bytes = Some(b);
                    Section::None
                }
            }
        }
    };
    Some(next)
}

/// `Xadatasources participated in this session :`
fn is_xa_title(t: &str) -> bool {
    lex::starts_with_words(
        t,
        &["Xadatasources", "participated", "in", "this", "session"],
    )
}

/// `xabasicdb@atmol10:sitaramv.xads_t3_i1  6  YES`: the data source's name (one word), its
/// RMID, whether it is active.
fn xa_row(t: &str) -> Option<XaDatasource> {
    let mut words = lex::header_words(t);
    let (name, rmid, active) = (words.next()?, words.next()?, words.next()?);
    if words.next().is_some() {
        return None;
    }
    let active = match active {
        "YES" => true,
        "NO" => false,
        _ => return None,
    };
    Some(XaDatasource {
        name: name.to_string(),
        rmid: rmid.parse().ok()?,
        active,
    })
}

/// `session           effective                            #RSAM    total      used       dynamic`
pub(super) fn is_session_header(t: &str) -> bool {
    lex::starts_with_words(t, &["session"]) && lex::header_words(t).any(|w| w == "#RSAM")
}

/// `id       user     user      tty      pid      hostname threads  memory     memory     explain`
/// → whether there is an `effective user` column.
pub(super) fn session_columns(t: &str) -> Option<bool> {
    if lex::starts_with_words(t, &["id", "user", "user", "tty", "pid"]) {
        Some(true)
    } else if lex::starts_with_words(t, &["id", "user", "tty", "pid"]) {
        Some(false)
    } else {
        None
    }
}

/// `Last 20 Sessions Terminated`
fn is_terminated_title(t: &str) -> bool {
    let mut w = lex::header_words(t);
    w.next() == Some("Last")
        && w.next()
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        && w.next() == Some("Sessions")
        && w.next() == Some("Terminated")
        && w.next().is_none()
}

/// `Program :`
fn is_program_title(t: &str) -> bool {
    t.trim()
        .strip_prefix("Program")
        .is_some_and(|r| r.trim() == ":")
}

/// `tid      name     rstcb            flags    curstk   status`
pub(super) fn is_threads_header(t: &str) -> bool {
    lex::starts_with_words(t, &["tid", "name", "rstcb", "flags", "curstk", "status"])
}

/// Splits the first blank-separated word off `i` (which starts at a non-blank): (word, rest).
fn next_word(i: &str) -> (&str, &str) {
    let end = i.find([' ', '\t']).unwrap_or(i.len());
    (
        &i[..end],
        super::lex::trim_start_bytes(&i[end..], super::lex::is_blank_byte),
    )
}

/// A decimal column that ends at a blank (or the end), then the blanks.
fn dec_column(i: &str) -> PResult<'_, u64> {
    let (r, v) = dec_u64(i)?;
    if !(r.is_empty() || r.starts_with([' ', '\t'])) {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Digit,
        )));
    }
    Ok((
        super::lex::trim_start_bytes(r, super::lex::is_blank_byte),
        v,
    ))
}

/// Pops the last word of `rest` as a decimal number.
fn number_from_right<'a>(rest: &'a str, needs: &'static str) -> Result<(&'a str, u64), Miss<'a>> {
    let (before, w) = last_word(rest).ok_or(Miss::new(rest, needs))?;
    match dec_u64(w) {
        Ok(("", v)) => Ok((before, v)),
        _ => Err(Miss::new(w, needs)),
    }
}

/// `-` means "none" in the text columns.
fn dash_none(w: &str) -> Option<CompactString> {
    (w != "-").then(|| CompactString::new(w))
}

/// One session row: sid and user from the left; the optional explain, the memory counters, the
/// thread count, hostname and pid from the right; the tty (and the effective user before it,
/// when there is that column) in between.
fn session_row(t: &str, effective: Option<bool>) -> Result<SessionRow, Miss<'_>> {
    let i = super::lex::trim_start_bytes(t, super::lex::is_blank_byte);
    let (j, sid) = dec_column(i).map_err(|_| Miss::new(i, "a session id (a number)"))?;
    let (user, rest) = next_word(j);
    if user.is_empty() {
        return Err(Miss::new(j, "a user name"));
    }
    let (mut rest, explain) = match last_word(rest) {
        Some((before, w)) if w.eq_ignore_ascii_case("on") || w.eq_ignore_ascii_case("off") => {
            (before, Some(CompactString::new(w)))
        }
        _ => (rest, None),
    };
    let used;
    let total;
    let threads;
    (rest, used) = number_from_right(rest, "used memory (a number) at the end of the row")?;
    (rest, total) = number_from_right(rest, "total memory (a number)")?;
    (rest, threads) = number_from_right(rest, "the number of RSAM threads")?;
    let (rest, hostname) = last_word(rest).ok_or(Miss::new(rest, "a hostname"))?;
    let (rest, pid_word) = last_word(rest).ok_or(Miss::new(rest, "a pid"))?;
    let pid = match pid_word {
        "-" => None,
        w => match dec_i64(w) {
            Ok(("", v)) => u64::try_from(v).ok().filter(|p| *p != 0),
            _ => return Err(Miss::new(w, "a pid (a number or `-`)")),
        },
    };
    let middle = super::lex::trim_blanks(rest);
    let (euser, tty) = match (middle.find([' ', '\t']), effective) {
        (None, Some(true)) | (Some(_), Some(false)) => {
            return Err(Miss::new(rest, "the tty column as the header has it"))
        }
        (None, _) => (None, middle),
        (Some(b), _) => (
            Some(&middle[..b]),
            super::lex::trim_start_bytes(&middle[b..], super::lex::is_blank_byte),
        ),
    };
    if tty.is_empty() || tty.contains([' ', '\t']) {
        return Err(Miss::new(rest, "a tty (`-` for none)"));
    }
    Ok(SessionRow {
        sid: Sid(sid),
        user: CompactString::new(user),
        effective_user: euser.and_then(dash_none),
        tty: dash_none(tty),
        pid,
        hostname: dash_none(&super::sockets::unmapped_host(hostname)),
        threads,
        total_memory: total,
        used_memory: used,
        dynamic_explain: explain,
    })
}

/// `46      user_1    host_1    21220  01/19/2015.15:20  session limit txn time (60s)`
fn terminated_row(t: &str) -> Result<TerminatedSession, Miss<'_>> {
    let i = super::lex::trim_start_bytes(t, super::lex::is_blank_byte);
    let (j, sid) = dec_column(i).map_err(|_| Miss::new(i, "a session id (a number)"))?;
    let (user, k) = next_word(j);
    let (hostname, l) = next_word(k);
    if user.is_empty() || hostname.is_empty() {
        return Err(Miss::new(j, "a user name and a hostname"));
    }
    let (m, pid) = dec_column(l).map_err(|_| Miss::new(l, "a pid (a number)"))?;
    let (time, reason) = next_word(m);
    let time_ok = time.contains('/')
        && time
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'/' | b'.' | b':'));
    if !time_ok {
        return Err(Miss::new(m, "a time (`01/19/2015.15:20`)"));
    }
    if reason.is_empty() {
        return Err(Miss::new(reason, "a reason"));
    }
    Ok(TerminatedSession {
        sid: Sid(sid),
        user: CompactString::new(user),
        hostname: CompactString::new(super::sockets::unmapped_host(hostname)),
        pid,
        time: CompactString::new(time),
        reason: collapse_blanks(reason),
    })
}

/// A flag character of `onstat -u`'s 7 (`Y--P---`).
#[inline]
fn is_flag_char(c: char) -> bool {
    c.is_ascii_uppercase() || c == '-' || c == '*'
}

/// `978      sqlexec  4b4ad628         Y--P---  5840     cond wait  netnorm -`
fn ses_thread(t: &str) -> Result<SesThread, Miss<'_>> {
    let i = super::lex::trim_start_bytes(t, super::lex::is_blank_byte);
    let (j, tid) = dec_column(i).map_err(|_| Miss::new(i, "a thread id (a number)"))?;
    let (name, k) = next_word(j);
    if name.is_empty() {
        return Err(Miss::new(j, "a thread name"));
    }
    let parsed: PResult<'_, _> = (hex_addr, sp1).parse(k);
    let (l, (rstcb, _)) = parsed.map_err(|_| Miss::new(k, "an rstcb address (hex)"))?;
    let parsed: PResult<'_, _> = (take_while_m_n(7, 7, is_flag_char), sp1).parse(l);
    let (m, (flags, _)) = parsed.map_err(|_| Miss::new(l, "7 flag characters (`Y--P---`)"))?;
    let (status, curstk) = dec_column(m).map_err(|_| Miss::new(m, "curstk (a number)"))?;
    if status.is_empty() {
        return Err(Miss::new(status, "a status"));
    }
    Ok(SesThread {
        tid: Tid(tid),
        name: CompactString::new(name),
        rstcb,
        flags: CompactString::new(flags),
        curstk,
        status: collapse_blanks(status),
    })
}

/// `812*O0       V     4c87f040         180224     84504      208        20`
fn is_pool_row(t: &str) -> bool {
    let parsed: PResult<'_, _> = all_consuming((
        sp0,
        take_till1(lex::is_blank),
        sp1,
        take_while_m_n(1, 1, |c: char| c.is_ascii_uppercase()),
        sp1,
        hex_addr,
        (sp1, dec_u64, sp1, dec_u64, sp1, dec_u64, sp1, dec_u64),
        sp0,
    ))
    .parse(t);
    parsed.is_ok()
}

/// `overhead       0          6576           scb            0          144` (one or two pairs)
fn is_pairs_row(t: &str) -> bool {
    fn pair(i: &str) -> PResult<'_, ()> {
        let (i, (name, _, _, _, _)) =
            (take_till1(lex::is_blank), sp1, dec_u64, sp1, dec_u64).parse(i)?;
        if name.bytes().all(|b| b.is_ascii_digit()) {
            return Err(nom::Err::Error(nom::error::Error::new(
                i,
                nom::error::ErrorKind::Verify,
            )));
        }
        Ok((i, ()))
    }
    let parsed: PResult<'_, _> = all_consuming((sp0, pair, opt((sp1, pair)), sp0)).parse(t);
    parsed.is_ok()
}

/// `4d1f9218         4d1bb028         0        0           2           1`
fn is_sqscb_row(t: &str) -> bool {
    let parsed: PResult<'_, _> = all_consuming((
        sp0,
        hex_addr,
        sp1,
        hex_addr,
        nom::multi::many_m_n(3, 6, (sp1, dec_u64)),
        sp0,
    ))
    .parse(t);
    parsed.is_ok()
}

/// The lines of the SQL part that are no table row (shared with `onstat -g sql`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SqlLine<'a> {
    /// `Sess  SQL  Current  Iso Lock ...` or `Id  Stmt type  Database ...`.
    Header,
    /// `Current statement name : slctcur`
    StatementName(&'a str),
    /// `Current SQL statement (5) :` or `Current SQL statement :`
    CurrentSql(Option<u64>),
    /// `Last parsed SQL statement :`
    LastParsed,
    /// `11600 byte(s) of memory is allocated from the sscpool`
    Sscpool(u64),
}

pub(super) fn sql_line(t: &str) -> Option<SqlLine<'_>> {
    if lex::starts_with_words(t, &["Sess", "SQL", "Current", "Iso", "Lock"])
        || lex::starts_with_words(t, &["Id", "Stmt", "type", "Database"])
    {
        return Some(SqlLine::Header);
    }
    let s = super::lex::trim_blanks(t);
    if let Some(rest) = s.strip_prefix("Current statement name") {
        let name = rest.trim_start().strip_prefix(':')?.trim();
        return (!name.is_empty()).then_some(SqlLine::StatementName(name));
    }
    let current: PResult<'_, _> = all_consuming((
        tag("Current SQL statement"),
        sp0,
        opt(delimited(char('('), dec_u64, char(')'))),
        sp0,
        char(':'),
    ))
    .parse(s);
    if let Ok((_, (_, _, id, _, _))) = current {
        return Some(SqlLine::CurrentSql(id));
    }
    let last: PResult<'_, _> =
        all_consuming((tag("Last parsed SQL statement"), sp0, char(':'))).parse(s);
    if last.is_ok() {
        return Some(SqlLine::LastParsed);
    }
    let pool: PResult<'_, _> = all_consuming((
        dec_u64,
        sp1,
        tag("byte(s) of memory is allocated from the sscpool"),
    ))
    .parse(s);
    pool.ok().map(|(_, (b, _, _))| SqlLine::Sscpool(b))
}

/// Appends one line of statement text (indentation removed) to `target`.
pub(super) fn push_sql_text(target: &mut Option<String>, line: &str) {
    let l = super::lex::trim_blanks(line);
    match target {
        Some(s) => {
            s.push('\n');
            s.push_str(l);
        }
        None => *target = Some(l.to_string()),
    }
}

/// Words as printed with blanks collapsed (`Not Wait`, `SELECT INTO`); no copy made when there
/// is nothing to collapse.
fn collapsed(s: &str) -> CompactString {
    if s.contains("  ") || s.contains('\t') {
        super::onstat_g_ath::collapse_blanks_compact(s)
    } else {
        CompactString::new(s)
    }
}

/// At most this many words in an SQL-state row (a row has 9 to 12).
const MAX_SQL_WORDS: usize = 24;

/// A lock mode is followed by these: SQL error, ISAM error, front-end version.
fn errors_and_version(words: &[&str]) -> Option<(i64, i64, Option<CompactString>)> {
    let err = |w: &str| match dec_i64(w) {
        Ok(("", v)) => Some(v),
        _ => None,
    };
    let [sql, isam, vers, ..] = words else {
        return None;
    };
    let version_like =
        *vers == "-" || (vers.contains('.') && vers.bytes().any(|b| b.is_ascii_digit()));
    version_like.then_some(())?;
    Some((err(sql)?, err(isam)?, dash_none(vers)))
}

/// One row of the `Sess SQL Current Iso Lock SQL ISAM F.E.` table:
/// `812  UPDATE  stores  CR  Wait 30  0  0  9.24  Off`. The lock mode (`Not Wait`, `Wait 30`)
/// is the anchor: before it the isolation level, the database and the statement type (which
/// may be two words or `-`); after it the two errors, the client version, and the explain flag
/// and role where printed.
pub(super) fn sql_state(t: &str) -> Result<SqlState, Miss<'_>> {
    let i = super::lex::trim_start_bytes(t, super::lex::is_blank_byte);
    let (body, sid) = dec_column(i).map_err(|_| Miss::new(i, "a session id (a number)"))?;
    let mut words: [&str; MAX_SQL_WORDS] = [""; MAX_SQL_WORDS];
    let mut n = 0;
    for w in lex::header_words(body) {
        if n == MAX_SQL_WORDS {
            return Err(Miss::new(w, "the end of the row"));
        }
        words[n] = w;
        n += 1;
    }
    let words = &words[..n];
    const LOCK: &str = "a lock mode (`Not Wait`, `Wait 30`) after the statement type, \
                        database and isolation level";
    let wait = words
        .iter()
        .position(|w| *w == "Wait")
        .ok_or(Miss::new(body, LOCK))?;
    let mode_start = if wait > 0 && words[wait - 1] == "Not" {
        wait - 1
    } else {
        wait
    };
    if mode_start < 3 {
        return Err(Miss::new(body, LOCK));
    }
    // `Wait 30 0 0 9.24` (a timeout) or `Wait 0 0 9.24` (none).
    const ERRORS: &str = "SQL and ISAM errors and a client version after the lock mode";
    let tail = &words[wait + 1..];
    let with_timeout = if mode_start == wait {
        tail.split_first()
            .filter(|(n, _)| matches!(dec_u64(n), Ok(("", _))))
            .and_then(|(_, rest)| errors_and_version(rest))
    } else {
        None
    };
    let (mode_end, (sql_error, isam_error, fe_version)) = match with_timeout {
        Some(e) => (wait + 2, e),
        None => (
            wait + 1,
            errors_and_version(tail).ok_or(Miss::new(words[wait], ERRORS))?,
        ),
    };
    let after = &words[mode_end + 3..];
    let (explain, role) = match after {
        [] => (None, None),
        [e] if e.eq_ignore_ascii_case("on") || e.eq_ignore_ascii_case("off") => {
            (Some(CompactString::new(e)), None)
        }
        [e, r] if e.eq_ignore_ascii_case("on") || e.eq_ignore_ascii_case("off") => {
            (Some(CompactString::new(e)), Some(CompactString::new(r)))
        }
        [w, ..] => {
            return Err(Miss::new(
                w,
                "the explain flag (`Off`/`On`) or the end of the row",
            ))
        }
    };
    let stmt_first = words[0];
    let stmt_last = words[mode_start - 3];
    let stmt_start = lex::offset_in(body, stmt_first);
    let stmt_end = lex::offset_in(body, stmt_last) + stmt_last.len();
    let stmt = &body[stmt_start..stmt_end];
    let stmt_type = (stmt != "-").then(|| collapsed(stmt));
    let mode = &body[lex::offset_in(body, words[mode_start])
        ..lex::offset_in(body, words[mode_end - 1]) + words[mode_end - 1].len()];
    Ok(SqlState {
        sid: Sid(sid),
        stmt_type,
        database: dash_none(words[mode_start - 2]),
        isolation: dash_none(words[mode_start - 1]),
        lock_mode: Some(collapsed(mode)),
        sql_error: Some(sql_error),
        isam_error: Some(isam_error),
        fe_version,
        explain,
        role,
    })
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn sql_state_rows() {
        let s = sql_state(
            "812        UPDATE         stores             CR  Wait 30    0    0    9.24  Off",
        )
        .expect("row");
        assert_eq!(s.lock_mode.as_deref(), Some("Wait 30"));
        assert_eq!(s.explain.as_deref(), Some("Off"));
        let s = sql_state("1.5 SELECT x CR Not Wait 0 0 9.24")
            .err()
            .map(|m| m.needs);
        assert_eq!(s, Some("a session id (a number)"));
        // Too few words before the lock mode: no database or no isolation level.
        assert!(sql_state("7 stores CR Not Wait 0 0 9.24").is_err());
        let s = sql_state("7 SELECT   INTO db CR Not   Wait 0 0 9.24").expect("padded");
        assert_eq!(
            (s.stmt_type.as_deref(), s.lock_mode.as_deref()),
            (Some("SELECT INTO"), Some("Not Wait"))
        );
    }

    #[test]
    fn session_rows_by_layout() {
        let r =
            session_row("16 sitaramv 1 18523 carson 1 81920 71720 off", Some(false)).expect("row");
        assert_eq!((r.tty.as_deref(), r.effective_user), (Some("1"), None));
        let r = session_row(
            "58 uccxuser dba pts/1 -1 sakkumar 1 126976 107496 off",
            None,
        )
        .expect("row");
        assert_eq!(
            (r.effective_user.as_deref(), r.tty.as_deref(), r.pid),
            (Some("dba"), Some("pts/1"), None)
        );
        // The header said there is an effective-user column: one word there is not enough.
        assert!(session_row("16 sitaramv 1 18523 carson 1 81920 71720 off", Some(true)).is_err());
        assert!(session_row("16 sitaramv a b c 18523 carson 1 81920 71720", None).is_err());
    }

    #[test]
    fn unmodelled_rows_are_known_by_shape() {
        assert!(is_pool_row(
            "812*O0       V     4ca14040         8192       2488       1          1"
        ));
        assert!(!is_pool_row("812 v 4ca14040 8192 2488 1 1"));
        assert!(is_pairs_row(
            "overhead       0          6576           scb            0          144"
        ));
        assert!(is_pairs_row("xatm           0          2072"));
        assert!(!is_pairs_row("12 0 2072"));
        assert!(is_sqscb_row(
            "4d1f9218         4d1bb028         0        0           2           1"
        ));
        assert!(!is_sqscb_row("4d1f9218 4d1bb028 0"));
    }

    #[test]
    fn sql_lines() {
        assert_eq!(
            sql_line("Current SQL statement (5) :"),
            Some(SqlLine::CurrentSql(Some(5)))
        );
        assert_eq!(
            sql_line("Current SQL statement :"),
            Some(SqlLine::CurrentSql(None))
        );
        assert_eq!(
            sql_line("Current statement name : unlcur"),
            Some(SqlLine::StatementName("unlcur"))
        );
        assert_eq!(sql_line("Current statement name :"), None);
        assert_eq!(
            sql_line("Last parsed SQL statement :"),
            Some(SqlLine::LastParsed)
        );
        assert_eq!(
            sql_line("11600 byte(s) of memory is allocated from the sscpool"),
            Some(SqlLine::Sscpool(11_600))
        );
        assert_eq!(sql_line("  select 1"), None);
    }
}
