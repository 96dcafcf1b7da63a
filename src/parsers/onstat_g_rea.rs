//! `onstat -g rea`: the ready queue, threads waiting for a VP to run on (the `onstat -g ath`
//! table under the title `Ready threads:`). A queue that stays long means too few CPU VPs.

use super::header::Header;
use super::lex::{self, Line};
use super::onstat_g_ath::{self, AthThread};
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use serde::Serialize;

/// The whole output of one `onstat -g rea`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatGRea {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    /// Highest priority first within each VP class, as onstat prints them.
    pub threads: Vec<AthThread>,
    pub unparsed: Vec<Unparsed>,
}

/// What a caller is told when the input is not `onstat -g rea` output at all.
const EXPECTED: &str = "onstat -g rea output: the title `Ready threads:`, then the column \
     header `tid tcb rstcb prty status vp-class name` and thread rows \
     (`33 672a20 409dc4 2 ready 3cpu sqlexec`)";

/// Parses the output of `onstat -g rea`.
pub fn parse(text: &str) -> Result<OnstatGRea, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatGRea, onstat; threads);

#[derive(Default)]
struct Body {
    /// Under the title `Ready threads:`: the rows are `onstat -g ath`'s, so only the title
    /// says they are the ready queue.
    in_table: bool,
}

impl OnstatBody for Body {
    type Record = OnstatGRea;
    const EXPECTED: &'static str = EXPECTED;

    fn reserve(&mut self, out: &mut OnstatGRea, lines: usize) {
        out.threads.reserve(lines);
    }

    fn line<'a>(&mut self, out: &mut OnstatGRea, line: Line<'a>) -> Seen<'a> {
        let t = lex::trim_blanks(line.text);
        if t == "Ready threads:" {
            self.in_table = true;
            return Seen::Known;
        }
        if !self.in_table {
            return Seen::Miss(Miss::new(t, "the title `Ready threads:` first"));
        }
        if onstat_g_ath::is_column_header(t) {
            return Seen::Known;
        }
        match onstat_g_ath::thread_row(t) {
            Ok(th) => {
                out.threads.push(th);
                Seen::Known
            }
            Err(miss) => Seen::Miss(miss),
        }
    }
}
