//! `onstat -g ath`: every thread with its tid, tcb, rstcb (the `onstat -u` address), priority,
//! status (old and new spellings), VP class and name.

use super::header::Header;
use super::lex::{self, dec_u32, dec_u64, hex_addr, sp1, Line, PResult};
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::{Addr, Tid};
use compact_str::CompactString;
use nom::Parser;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatGAth {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    pub threads: Vec<AthThread>,
    /// Line numbers of lines made only of dots (`.....`): a publisher's or a pager's cut, so the
    /// list is known to be incomplete there.
    pub elisions: Vec<usize>,
    pub unparsed: Vec<Unparsed>,
}

impl OnstatGAth {
    /// The thread with this tid (what `onstat -g con` names as a condition's waiter).
    pub fn thread(&self, tid: Tid) -> Option<&AthThread> {
        self.threads.iter().find(|t| t.tid == tid)
    }

    /// Each user thread's session: tid → rstcb (here) → session (`u`'s row at that address).
    /// Only as true as the two are of one moment: an rstcb is reused by the next session.
    pub fn sessions(
        &self,
        u: &super::onstat_u::OnstatU,
    ) -> rustc_hash::FxHashMap<Tid, crate::ids::Sid> {
        let sid_of: rustc_hash::FxHashMap<Addr, crate::ids::Sid> =
            u.threads.iter().map(|t| (t.address, t.sessid)).collect();
        self.threads
            .iter()
            .filter_map(|t| Some((t.tid, *sid_of.get(&t.rstcb?)?)))
            .collect()
    }
}

/// One row: `213  14c91ec0 14a58b98 2  cond wait  sm_read  1cpu  sqlexec`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AthThread {
    pub tid: Tid,
    pub tcb: Addr,
    /// The `onstat -u` address of a user thread; `None` for 0 (a thread with no rstcb).
    pub rstcb: Option<Addr>,
    pub prty: u32,
    /// The status exactly as printed, blanks collapsed (`cond wait sm_read`, `sleeping secs: 44`):
    /// inline up to 24 bytes, so copying or dropping a row touches no heap for most statuses.
    pub status: CompactString,
    /// The status decoded.
    pub state: ThreadState,
    /// `1cpu`, `4lio`, `8tli`, ... (the VP class with its number, as printed).
    pub vp_class: CompactString,
    /// `sqlexec`, `main_loop()`, `flush_sub(0)`, ...
    pub name: CompactString,
}

/// What `status` says the thread is doing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ThreadState {
    Running,
    Ready,
    /// `sleeping forever` (secs None) or `sleeping secs: N`.
    Sleeping {
        secs: Option<u64>,
    },
    /// `cond wait NAME` (NAME is the `onstat -g con` condition name).
    CondWait {
        name: CompactString,
    },
    /// `mutex wait NAME`.
    MutexWait {
        name: CompactString,
    },
    /// `lock wait` / `lockwait`.
    LockWait,
    /// `IO Wait`, `IO Idle`.
    Io,
    /// `join wait`, `yield ...`, `buffer wait`, `checkpoint wait`, `log buffer wait`, `terminated`,
    /// and anything newer: the words as printed.
    Other {
        words: CompactString,
    },
}

impl ThreadState {
    /// Decodes a status whose blanks are already collapsed (`cond wait sm_read`). The old
    /// spelling `cond wait(netnorm)` is understood too.
    pub(crate) fn from_status(status: &str) -> ThreadState {
        match status {
            "running" => return ThreadState::Running,
            "ready" => return ThreadState::Ready,
            "sleeping forever" => return ThreadState::Sleeping { secs: None },
            "lock wait" | "lockwait" => return ThreadState::LockWait,
            s if s.eq_ignore_ascii_case("IO Wait") || s.eq_ignore_ascii_case("IO Idle") => {
                return ThreadState::Io
            }
            _ => {}
        }
        if let Some(rest) = status.strip_prefix("sleeping secs:") {
            if let Ok(secs) = rest.trim().parse::<u64>() {
                return ThreadState::Sleeping { secs: Some(secs) };
            }
        }
        if let Some(name) = waited_name(status, "cond wait") {
            return ThreadState::CondWait {
                name: CompactString::new(name),
            };
        }
        if let Some(name) = waited_name(status, "mutex wait") {
            return ThreadState::MutexWait {
                name: CompactString::new(name),
            };
        }
        ThreadState::Other {
            words: CompactString::new(status),
        }
    }
}

/// `cond wait sm_read` or `cond wait(sm_read)` → `sm_read`; `None` when `status` is not `what`
/// followed by a name. The name is the rest of the status (a mutex name may hold a blank).
fn waited_name<'a>(status: &'a str, what: &str) -> Option<&'a str> {
    let rest = status.strip_prefix(what)?;
    let name = if let Some(paren) = rest.strip_prefix('(') {
        paren.strip_suffix(')')?
    } else {
        rest.strip_prefix(' ')?
    };
    let name = name.trim();
    (!name.is_empty()).then_some(name)
}

/// What a caller is told when the input is not `onstat -g ath` output at all.
const EXPECTED: &str = "onstat -g ath output: the title `Threads:`, the column header \
     `tid tcb rstcb prty status vp-class name` or a thread row \
     (`213 14c91ec0 14a58b98 2 cond wait sm_read 1cpu sqlexec`)";

/// Parses the output of `onstat -g ath`.
pub fn parse(text: &str) -> Result<OnstatGAth, ParseError> {
    super::drive::<Body>(text)
}

/// [`parse`], giving again the row of a line `memo` remembers instead of parsing it.
pub(crate) fn parse_memo(
    text: &str,
    memo: &super::memo::LineMemo,
) -> super::memo::Recalled<OnstatGAth> {
    super::drive_memo::<Body>(text, memo)
}

record!(OnstatGAth, onstat; threads);

#[derive(Default)]
struct Body;

impl OnstatBody for Body {
    type Record = OnstatGAth;
    const EXPECTED: &'static str = EXPECTED;

    fn reserve(&mut self, out: &mut OnstatGAth, lines: usize) {
        out.threads.reserve(lines);
    }

    // A row is its line's alone: nothing but the line's text goes into it.
    const MEMO: bool = true;

    fn rows(out: &OnstatGAth) -> usize {
        out.threads.len()
    }

    fn copy_row(last: &OnstatGAth, i: usize, out: &mut OnstatGAth) -> bool {
        super::memo::copy_row(&last.threads, i, &mut out.threads)
    }

    fn line<'a>(&mut self, out: &mut OnstatGAth, line: Line<'a>) -> Seen<'a> {
        match thread_row(line.text) {
            Ok(t) => {
                out.threads.push(t);
                Seen::Row
            }
            // The same table under `onstat -g rea`'s title is that command's (`-g rea` kind).
            Err(_) if line.text.trim() == "Ready threads:" => Seen::Foreign("onstat -g rea"),
            Err(_) if is_title(line.text) || is_column_header(line.text) => Seen::Known,
            Err(_) if is_elision(line.text) => {
                out.elisions.push(line.no);
                Seen::Skipped
            }
            Err(miss) => Seen::Miss(miss),
        }
    }
}

/// A line of dots only (`.....`, `....`): where a publisher or a pager cut rows out.
pub(super) fn is_elision(text: &str) -> bool {
    let t = super::lex::trim_blanks(text);
    !t.is_empty() && t.bytes().all(|b| b == b'.')
}

/// `text` with every run of blanks made one blank, ends trimmed: how a free-text column
/// (`cond wait  sm_read`) is kept.
pub(super) fn collapse_blanks(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for w in lex::header_words(text) {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(w);
    }
    s
}

/// [`collapse_blanks`] as a [`CompactString`]: a short column (a status) stays off the heap.
pub(super) fn collapse_blanks_compact(text: &str) -> CompactString {
    let mut s = CompactString::default();
    for w in lex::header_words(text) {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(w);
    }
    s
}

/// `Threads:` (and the same table's titles in `onstat -g act` and `onstat -g wai`, which list
/// the running and the waiting threads in the same columns).
fn is_title(text: &str) -> bool {
    matches!(
        text.trim(),
        "Threads:" | "Running threads:" | "Waiting threads:"
    )
}

/// ` tid     tcb      rstcb    prty status                vp-class      name`
pub(super) fn is_column_header(text: &str) -> bool {
    lex::starts_with_words(text, &["tid", "tcb", "rstcb", "prty", "status"])
}

/// A VP class as printed: its number and class name (`1cpu`, `10aio`, `11soc`), with the `*`
/// that `onstat -g act` puts before it (`*1cpu`).
fn is_vp_class(word: &str) -> bool {
    let w = word.strip_prefix('*').unwrap_or(word);
    let digits = w.bytes().take_while(u8::is_ascii_digit).count();
    let class = &w[digits..];
    // VPs are numbered from 1.
    digits > 0
        && !w.starts_with('0')
        && !class.is_empty()
        && class
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && class.as_bytes()[0].is_ascii_lowercase()
}

/// Splits `status... vp-class name...` at the first word after the status's first word that
/// looks like a VP class: (status, vp class, name).
fn split_at_vp_class(i: &str) -> Option<(&str, &str, &str)> {
    let mut rest = super::lex::trim_start_bytes(i, super::lex::is_blank_byte);
    let mut first = true;
    loop {
        // Blanks are ASCII: found byte by byte, without decoding the row's characters.
        let end = rest
            .bytes()
            .position(super::lex::is_blank_byte)
            .unwrap_or(rest.len());
        let word = &rest[..end];
        if word.is_empty() {
            return None;
        }
        if !first && is_vp_class(word) {
            let status_end = lex::offset_in(i, rest);
            let status = super::lex::trim_blanks(&i[..status_end]);
            let name = super::lex::trim_blanks(&rest[end..]);
            return Some((status, word, name));
        }
        first = false;
        rest = super::lex::trim_start_bytes(&rest[end..], super::lex::is_blank_byte);
    }
}

/// One thread row: tid, tcb, rstcb and prty from the left, then the status up to the VP class,
/// then the name (which may hold blanks: `lio vp 0`).
pub(super) fn thread_row(text: &str) -> Result<AthThread, Miss<'_>> {
    let i = super::lex::trim_start_bytes(text, super::lex::is_blank_byte);
    // Each column must end at a blank: `tid` is no number, `14c91ec0x` no address.
    let parsed: PResult<'_, _> = (dec_u64, sp1).parse(i);
    let (j, (tid, _)) = parsed.map_err(|_| Miss::new(i, "a thread id (a number)"))?;
    let parsed: PResult<'_, _> = (hex_addr, sp1).parse(j);
    let (k, (tcb, _)) = parsed.map_err(|_| Miss::new(j, "a tcb address (hex)"))?;
    let parsed: PResult<'_, _> = (hex_addr, sp1).parse(k);
    let (j, (rstcb, _)) = parsed.map_err(|_| Miss::new(k, "an rstcb address (hex, 0 for none)"))?;
    let parsed: PResult<'_, _> = (dec_u32, sp1).parse(j);
    let (k, (prty, _)) = parsed.map_err(|_| Miss::new(j, "a priority (a number)"))?;
    let (status, vp_class, name) = split_at_vp_class(k).ok_or(Miss::new(
        k,
        "a status then a VP class (`1cpu`, `4lio`) and a thread name",
    ))?;
    if name.is_empty() {
        return Err(Miss::new(
            &k[lex::offset_in(k, vp_class) + vp_class.len()..],
            "a thread name after the VP class",
        ));
    }
    let status = collapse_blanks_compact(status);
    Ok(AthThread {
        tid: Tid(tid),
        tcb,
        rstcb: rstcb.non_zero(),
        prty,
        state: ThreadState::from_status(&status),
        status,
        vp_class: CompactString::new(vp_class),
        name: CompactString::new(name),
    })
}

/// The row parser as nom's tokens read it, character by character: what [`thread_row`] must
/// give, rows and misses alike.
#[cfg(test)]
pub(crate) mod reference {
    use super::super::lex::reference::{dec_u32, dec_u64, header_words, hex_addr, sp1};
    use super::super::lex::{self, PResult};
    use super::super::Miss;
    use super::{is_vp_class, AthThread, ThreadState};
    use crate::ids::Tid;
    use compact_str::CompactString;
    use nom::Parser;

    fn collapse_blanks(text: &str) -> String {
        let mut s = String::with_capacity(text.len());
        for w in header_words(text) {
            if !s.is_empty() {
                s.push(' ');
            }
            s.push_str(w);
        }
        s
    }

    fn split_at_vp_class(i: &str) -> Option<(&str, &str, &str)> {
        let mut rest = lex::trim_start_bytes(i, lex::is_blank_byte);
        let mut first = true;
        loop {
            let end = rest.find([' ', '\t']).unwrap_or(rest.len());
            let word = &rest[..end];
            if word.is_empty() {
                return None;
            }
            if !first && is_vp_class(word) {
                let status_end = lex::offset_in(i, rest);
                let status = lex::trim_blanks(&i[..status_end]);
                let name = lex::trim_blanks(&rest[end..]);
                return Some((status, word, name));
            }
            first = false;
            rest = lex::trim_start_bytes(&rest[end..], lex::is_blank_byte);
        }
    }

    pub(crate) fn thread_row(text: &str) -> Result<AthThread, Miss<'_>> {
        let i = lex::trim_start_bytes(text, lex::is_blank_byte);
        let parsed: PResult<'_, _> = (dec_u64, sp1).parse(i);
        let (j, (tid, _)) = parsed.map_err(|_| Miss::new(i, "a thread id (a number)"))?;
        let parsed: PResult<'_, _> = (hex_addr, sp1).parse(j);
        let (k, (tcb, _)) = parsed.map_err(|_| Miss::new(j, "a tcb address (hex)"))?;
        let parsed: PResult<'_, _> = (hex_addr, sp1).parse(k);
        let (j, (rstcb, _)) =
            parsed.map_err(|_| Miss::new(k, "an rstcb address (hex, 0 for none)"))?;
        let parsed: PResult<'_, _> = (dec_u32, sp1).parse(j);
        let (k, (prty, _)) = parsed.map_err(|_| Miss::new(j, "a priority (a number)"))?;
        let (status, vp_class, name) = split_at_vp_class(k).ok_or(Miss::new(
            k,
            "a status then a VP class (`1cpu`, `4lio`) and a thread name",
        ))?;
        if name.is_empty() {
            return Err(Miss::new(
                &k[lex::offset_in(k, vp_class) + vp_class.len()..],
                "a thread name after the VP class",
            ));
        }
        let status = CompactString::from(collapse_blanks(status));
        Ok(AthThread {
            tid: Tid(tid),
            tcb,
            rstcb: rstcb.non_zero(),
            prty,
            state: ThreadState::from_status(&status),
            status,
            vp_class: CompactString::new(vp_class),
            name: CompactString::new(name),
        })
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::super::lex::columnish;
    use super::super::same_rows::{check, check_fixtures, dec_col, hex_col, mutated, row_of};
    use super::*;
    use proptest::prelude::*;

    /// A status as the versions print it, some with blanks inside, some odd.
    fn status_col() -> BoxedStrategy<String> {
        prop_oneof![
            Just("running".to_string()),
            Just("ready".to_string()),
            Just("sleeping forever".to_string()),
            "sleeping secs: [0-9]{1,4}",
            "cond wait  ?[a-z_]{2,10}",
            "cond wait\\([a-z_]{2,10}\\)",
            "mutex wait [a-z]{2,6}( chain)?",
            Just("lock wait".to_string()),
            Just("IO Idle".to_string()),
            Just("join wait".to_string()),
            "[a-z0-9:*]{1,8}( [a-z0-9:]{1,6}){0,2}",
        ]
        .boxed()
    }

    fn vp_col() -> BoxedStrategy<String> {
        prop_oneof![
            4 => "\\*?[1-9][0-9]?(cpu|aio|lio|pio|adm|msc|soc|tli|fifo|shm)",
            1 => "[0-9*a-z]{1,5}",
        ]
        .boxed()
    }

    fn name_col() -> BoxedStrategy<String> {
        prop_oneof![
            4 => "[a-z_]{2,12}(\\(\\)|\\([0-9]\\))?",
            1 => "lio vp [0-9]",
            1 => Just(String::new()),
            1 => "[a-zA-Z0-9é_ ]{1,10}",
        ]
        .boxed()
    }

    fn ath_row() -> impl Strategy<Value = String> {
        row_of(vec![
            dec_col(),
            hex_col(),
            hex_col(),
            dec_col(),
            status_col(),
            vp_col(),
            name_col(),
        ])
    }

    #[test]
    fn fixture_rows_read_as_the_reference_reads_them() {
        let rows = check_fixtures(thread_row, reference::thread_row);
        assert!(rows > 50, "{rows} rows");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn generated_rows_read_as_the_reference_reads_them(
            row in prop_oneof![3 => ath_row(), 3 => mutated(ath_row()), 1 => columnish()]
        ) {
            check(&row, thread_row, reference::thread_row)?;
        }
    }

    #[test]
    fn statuses_decode() {
        let s = ThreadState::from_status;
        assert_eq!(s("running"), ThreadState::Running);
        assert_eq!(s("ready"), ThreadState::Ready);
        assert_eq!(s("sleeping forever"), ThreadState::Sleeping { secs: None });
        assert_eq!(
            s("sleeping secs: 44"),
            ThreadState::Sleeping { secs: Some(44) }
        );
        assert_eq!(
            s("cond wait sm_read"),
            ThreadState::CondWait {
                name: "sm_read".into()
            }
        );
        assert_eq!(
            s("cond wait(netnorm)"),
            ThreadState::CondWait {
                name: "netnorm".into()
            }
        );
        assert_eq!(
            s("mutex wait ddh chain"),
            ThreadState::MutexWait {
                name: "ddh chain".into()
            }
        );
        assert_eq!(
            s("mutex wait lockhash[12]"),
            ThreadState::MutexWait {
                name: "lockhash[12]".into()
            }
        );
        assert_eq!(s("lock wait"), ThreadState::LockWait);
        assert_eq!(s("IO Idle"), ThreadState::Io);
        assert_eq!(s("IO Wait"), ThreadState::Io);
        assert_eq!(
            s("cond waiting"),
            ThreadState::Other {
                words: "cond waiting".into()
            }
        );
        assert_eq!(
            s("sleeping secs: x"),
            ThreadState::Other {
                words: "sleeping secs: x".into()
            }
        );
    }

    #[test]
    fn vp_classes() {
        for w in ["1cpu", "10aio", "*2adm", "11soc", "3lio"] {
            assert!(is_vp_class(w), "{w}");
        }
        for w in ["cpu", "1", "44", "1CPU", "secs:", "*", "0x1"] {
            assert!(!is_vp_class(w), "{w}");
        }
    }

    #[test]
    fn names_with_blanks_and_digits() {
        let t = thread_row(
            " 2       141c9270 0        2    sleeping forever        4lio        lio vp 0",
        )
        .expect("row");
        assert_eq!(t.name, "lio vp 0");
        assert_eq!(t.vp_class, "4lio");
        assert_eq!(t.status, "sleeping forever");
        assert_eq!(t.rstcb, None);
        let t = thread_row("11 1424ad58 0 2 sleeping secs: 2 1cpu sm_discon").expect("row");
        assert_eq!(t.state, ThreadState::Sleeping { secs: Some(2) });
    }

    #[test]
    fn elisions_and_blanks() {
        assert!(is_elision("....."));
        assert!(is_elision("  .  "));
        assert!(!is_elision(""));
        assert!(!is_elision("... more"));
        assert_eq!(
            collapse_blanks("  cond wait  sm_read \t x"),
            "cond wait sm_read x"
        );
    }
}
