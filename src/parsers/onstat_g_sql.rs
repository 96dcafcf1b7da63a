//! `onstat -g sql <sid>`: a session's SQL state and its current statement.

use super::header::Header;
use super::lex::Line;
use super::onstat_g_ses::{push_sql_text, sql_line, sql_state, SqlLine, SqlState, TextBlock};
use super::Unparsed;
use super::{OnstatBody, Seen};
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

/// Parses the output of `onstat -g sql` (the list) or `onstat -g sql <sid>` (one session).
pub fn parse(text: &str) -> Result<OnstatGSql, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatGSql, onstat; sessions);

#[derive(Default)]
struct Body {
    /// Statement text runs up to a blank line.
    text_block: Option<TextBlock>,
}

impl OnstatBody for Body {
    type Record = OnstatGSql;
    const EXPECTED: &'static str = EXPECTED;
    // `onstat -g sql <sid>` for a session that does not exist (or has no SQL) prints the banner
    // alone: an answer, not garbage.
    const BANNER_ALONE: bool = true;

    fn blank(&mut self, _out: &mut OnstatGSql) {
        self.text_block = None;
    }

    fn line<'a>(&mut self, out: &mut OnstatGSql, line: Line<'a>) -> Seen<'a> {
        let t = line.text;
        // `onstat -g ses <sid>` prints the same SQL part after its session and threads.
        if super::onstat_g_ses::is_session_header(t)
            || super::onstat_g_ses::session_columns(t).is_some()
            || super::onstat_g_ses::is_threads_header(t)
        {
            return Seen::Foreign("onstat -g ses");
        }
        let known = sql_line(t);
        if let (Some(block), None) = (self.text_block, known) {
            let target = match block {
                TextBlock::Current => &mut out.current_sql,
                TextBlock::LastParsed => &mut out.last_parsed_sql,
            };
            push_sql_text(target, t);
            return Seen::Skipped;
        }
        self.text_block = None;
        let kept = match known {
            Some(SqlLine::Header) => true,
            Some(SqlLine::StatementName(n)) => {
                set_once(&mut out.statement_name, || CompactString::new(n))
            }
            Some(SqlLine::CurrentSql(id)) => {
                let fresh = out.current_sql.is_none() && out.current_sql_id.is_none();
                if fresh {
                    out.current_sql_id = id;
                    self.text_block = Some(TextBlock::Current);
                }
                fresh
            }
            Some(SqlLine::LastParsed) => {
                let fresh = out.last_parsed_sql.is_none();
                if fresh {
                    self.text_block = Some(TextBlock::LastParsed);
                }
                fresh
            }
            Some(SqlLine::Sscpool(b)) => set_once(&mut out.sscpool_bytes, || b),
            None => match sql_state(t) {
                Ok(s) => {
                    out.sessions.push(s);
                    return Seen::Row;
                }
                Err(miss) => return Seen::Miss(miss),
            },
        };
        if kept {
            Seen::Known
        } else {
            // A part printed twice: listed rather than mixed into the first one.
            Seen::KnownUnused
        }
    }
}

/// Sets `slot` unless it already holds a value; says whether it did.
fn set_once<T>(slot: &mut Option<T>, v: impl FnOnce() -> T) -> bool {
    if slot.is_some() {
        return false;
    }
    *slot = Some(v());
    true
}
