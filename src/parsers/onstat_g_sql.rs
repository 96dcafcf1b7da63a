//! `onstat -g sql <sid>`: a session's SQL state and its current statement.

use super::header::{self, Header};
use super::lex;
use super::onstat_g_ses::{push_sql_text, sql_line, sql_state, SqlLine, SqlState, TextBlock};
use super::onstat_u::nothing_found;
use super::Unparsed;
use crate::error::ParseError;
use compact_str::CompactString;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatGSql {
    pub header: Option<Header>,
    pub offline: Option<String>,
    /// The `Sess SQL Current ...` rows (one per session with `onstat -g sql`, one with `<sid>`).
    pub sessions: Vec<SqlState>,
    /// `Current statement name : unlcur`.
    pub statement_name: Option<CompactString>,
    /// The number in `Current SQL statement (5) :`, where printed.
    pub current_sql_id: Option<u64>,
    /// `Current SQL statement [(N)] :` (lines joined with `\n`, indentation removed).
    pub current_sql: Option<String>,
    /// `Last parsed SQL statement :`.
    pub last_parsed_sql: Option<String>,
    /// `11600 byte(s) of memory is allocated from the sscpool`, where printed.
    pub sscpool_bytes: Option<u64>,
    pub unparsed: Vec<Unparsed>,
}

/// What a caller is told when the input is not `onstat -g sql` output at all.
const EXPECTED: &str = "onstat -g sql output: the column header \
     `Sess SQL Current Iso Lock SQL ISAM F.E.` / `Id Stmt type Database Lvl Mode ERR ERR Vers`, \
     a session row (`812 UPDATE stores CR Wait 30 0 0 9.24 Off`), \
     `Current statement name : x`, `Current SQL statement :` or `Last parsed SQL statement :`";

/// Parses the output of `onstat -g sql` or `onstat -g sql <sid>`.
pub fn parse(text: &str) -> Result<OnstatGSql, ParseError> {
    let mut lines = lex::lines(text);
    let mut out = OnstatGSql::default();
    let (banner, offline) = header::parse_preamble(&mut lines).into_parts();
    // `onstat -g sql <sid>` for a session that does not exist (or has no SQL) prints the banner
    // alone: an answer, not garbage.
    let mut recognised = banner.is_some() || offline.is_some();
    (out.header, out.offline) = (banner, offline);
    let mut first_miss: Option<ParseError> = None;
    // Statement text runs up to a blank line.
    let mut text_block: Option<TextBlock> = None;
    for line in lines {
        if line.is_blank() {
            text_block = None;
            continue;
        }
        let t = line.text;
        let known = sql_line(t);
        if let (Some(block), None) = (text_block, known) {
            let target = match block {
                TextBlock::Current => &mut out.current_sql,
                TextBlock::LastParsed => &mut out.last_parsed_sql,
            };
            push_sql_text(target, t);
            continue;
        }
        text_block = None;
        let kept = match known {
            Some(SqlLine::Header) => true,
            Some(SqlLine::StatementName(n)) => {
                set_once(&mut out.statement_name, || CompactString::new(n))
            }
            Some(SqlLine::CurrentSql(id)) => {
                let fresh = out.current_sql.is_none() && out.current_sql_id.is_none();
                if fresh {
                    out.current_sql_id = id;
                    text_block = Some(TextBlock::Current);
                }
                fresh
            }
            Some(SqlLine::LastParsed) => {
                let fresh = out.last_parsed_sql.is_none();
                if fresh {
                    text_block = Some(TextBlock::LastParsed);
                }
                fresh
            }
            Some(SqlLine::Sscpool(b)) => set_once(&mut out.sscpool_bytes, || b),
            None => match sql_state(t) {
                Ok(s) => {
                    out.sessions.push(s);
                    true
                }
                Err(miss) => {
                    if first_miss.is_none() {
                        first_miss = Some(miss.error(line, EXPECTED));
                    }
                    out.unparsed.push(Unparsed::new(line));
                    continue;
                }
            },
        };
        recognised = true;
        if !kept {
            // A part printed twice: listed rather than mixed into the first one.
            out.unparsed.push(Unparsed::new(line));
        }
    }
    if !recognised {
        return Err(first_miss.unwrap_or_else(|| nothing_found(text, EXPECTED)));
    }
    Ok(out)
}

/// Sets `slot` unless it already holds a value; says whether it did.
fn set_once<T>(slot: &mut Option<T>, v: impl FnOnce() -> T) -> bool {
    if slot.is_some() {
        return false;
    }
    *slot = Some(v());
    true
}
