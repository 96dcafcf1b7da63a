//! `onstat -` (the banner alone) and `onstat -r` (the banner again every few seconds): the
//! server's product, version, mode and its qualifiers, uptime, shared memory, `Blocked:` and date.

use super::header::{self, Header};
use super::lex::Line;
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use serde::Serialize;

/// The whole output of one `onstat -` (or `onstat -r`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatBanner {
    /// The first banner.
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    /// The banners printed after the first (`onstat -r N` prints one every N seconds).
    pub repeats: Vec<Header>,
    pub unparsed: Vec<Unparsed>,
}

impl OnstatBanner {
    /// The most recent banner.
    pub fn latest(&self) -> Option<&Header> {
        self.repeats.last().or(self.header.as_ref())
    }
}

/// What a caller is told when the input is not `onstat -` output at all.
const EXPECTED: &str = "onstat - output: the banner alone (`IBM Informix Dynamic Server \
     Version 12.10.FC8 -- On-Line -- Up 3 days 04:05:06 -- 2457600 Kbytes`), with its \
     `Blocked:` and date lines, repeated by `onstat -r`";

/// Parses the output of `onstat -` or `onstat -r`.
pub fn parse(text: &str) -> Result<OnstatBanner, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatBanner, onstat);

#[derive(Default)]
struct Body {
    /// The last line was a banner (or a line under it): a wrapped tail, `Blocked:` or the date
    /// may follow.
    under_banner: bool,
    /// The first line not understood since the last banner. `onstat -` ends with its banner:
    /// lines after the last one are another command's body, so the input is not this kind.
    after_last: Option<ParseError>,
}

impl OnstatBody for Body {
    type Record = OnstatBanner;
    const EXPECTED: &'static str = EXPECTED;
    const BANNER_ALONE: bool = true;

    fn line<'a>(&mut self, out: &mut OnstatBanner, line: Line<'a>) -> Seen<'a> {
        if let Some(h) = header::banner(line) {
            match out.header {
                None => out.header = Some(h),
                Some(_) => out.repeats.push(h),
            }
            self.under_banner = true;
            self.after_last = None;
            return Seen::Known;
        }
        let last = out.repeats.last_mut().or(out.header.as_mut());
        if let Some(last) = last {
            if self.under_banner
                && (header::amend_wrapped(last, line.text) || header::amend_below(last, line.text))
            {
                return Seen::Known;
            }
            if self.after_last.is_none() {
                self.after_last = Some(line.error_at(
                    line.text,
                    "onstat - output, which ends with its banner: this line follows the last \
                     banner (the body of another command?)",
                ));
            }
        }
        self.under_banner = false;
        Seen::Miss(Miss::new(
            line.text,
            "a banner (`... Version 12.10.FC8 -- On-Line -- Up ... -- N Kbytes`)",
        ))
    }

    fn finish(&mut self, _out: &mut OnstatBanner) -> Result<(), ParseError> {
        self.after_last.take().map_or(Ok(()), Err)
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn repeated_banners_with_blocked_lines() {
        let b = parse(
            "IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line (CKPT REQ) -- Up 00:00:05 -- 1024 Kbytes\n\
             Blocked:CKPT\n\n\n\
             IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 00:00:10 -- 1024 Kbytes\n",
        )
        .expect("two banners");
        assert_eq!(
            b.header.as_ref().and_then(|h| h.blocked.as_deref()),
            Some("CKPT")
        );
        assert_eq!(b.repeats.len(), 1);
        assert_eq!(b.latest().and_then(|h| h.uptime_s), Some(10));
        assert!(b.unparsed.is_empty());
    }

    #[test]
    fn a_body_after_the_banner_is_another_command() {
        let e = parse(
            "IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 00:00:05 -- 1024 Kbytes\n\n\
             Userthreads\n",
        )
        .expect_err("onstat -u");
        assert_eq!((e.line, e.column), (3, 1));
        // A caption between two banners is unparsed, not fatal; the command line above the
        // first is skipped as a prompt line is.
        let b = parse(
            "onstat -r\nVersion 12.10.FC8 -- On-Line -- Up 00:00:05 -- 1 Kbytes\nFigure 2\n\
             Version 12.10.FC8 -- On-Line -- Up 00:00:10 -- 1 Kbytes\n",
        )
        .expect("captions between banners");
        let lines: Vec<_> = b.unparsed.iter().map(|u| u.line).collect();
        assert_eq!(lines, [3]);
        assert_eq!(b.repeats.len(), 1);
    }
}
