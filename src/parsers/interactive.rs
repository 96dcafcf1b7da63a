//! `onstat -i`, the interactive mode (Administrator's Reference, "onstat -i command: Initiate
//! interactive mode"): onstat attaches the shared memory once, prints an `onstat>` prompt, reads
//! one option a line (without its dash: `u`, `g con`), prints that option's output, prompts
//! again, and ends at end of input. So one process answers every option due in a tick: the
//! collectors write the options, close the input and read to the end; [`split`] cuts what came
//! back into what each option prints alone, for its own parser.
//!
//! What the manual leaves open, and what [`split`] accepts:
//! - the prompt is written without a newline (the option's output, which starts with a blank
//!   line, follows it on the same line) or on a line of its own;
//! - a last prompt before end of input, or none;
//! - the banner before each option's output, or only once (before the first prompt, or in the
//!   first option's part): a part without one then gets that banner, so every part reads as the
//!   option alone prints it.
//!
//! Anything else (no prompt at all, more or fewer parts than options asked, parts without a
//! banner after one with none to lend) is an error, never a guess: the caller then runs the
//! options one by one.

use super::header;
use super::lex::Line;
use std::borrow::Cow;

/// What onstat prints before each option it reads.
pub const PROMPT: &str = "onstat>";

/// How many lines a banner block may take (the banner, a wrapped `-- Up` line, `Blocked:`, the
/// blank lines around them).
const BANNER_LINES: usize = 6;

/// Why an interactive output did not split.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SplitError {
    #[error("no `onstat>` prompt: onstat did not answer in interactive mode")]
    NoPrompt,
    #[error("{found} answers for {asked} options")]
    Count { asked: usize, found: usize },
    #[error("an answer without a banner, and no banner to lend it")]
    BannerRule,
}

/// The line to write for `options` (`["-g", "con"]` → `g con`): the manual asks for no dash.
/// `None` for what must never be sent: `z` and `rz` reset the server's counters, `r` repeats
/// forever; and for an empty or multi-line option.
pub fn option_line(options: &[&str]) -> Option<String> {
    let words: Vec<&str> = options
        .iter()
        .enumerate()
        .map(|(k, o)| if k == 0 { o.trim_start_matches('-') } else { o })
        .collect();
    let line = words.join(" ");
    let first = words.first().copied().unwrap_or("");
    let refused =
        first.is_empty() || first.contains('z') || first == "r" || line.contains(['\n', '\r']);
    (!refused).then_some(line)
}

/// Whether the text starts with onstat's banner or off-line message within its first lines.
fn has_banner(part: &str) -> bool {
    banner_end(part).is_some() || header::is_offline_message(part)
}

/// Where the banner block of `part` ends (just past the blank line after the banner), when
/// `part` starts with one.
fn banner_end(part: &str) -> Option<usize> {
    let mut at = 0;
    let mut seen = false;
    for (k, l) in part.split_inclusive('\n').enumerate() {
        if k >= BANNER_LINES {
            return None;
        }
        at += l.len();
        let text = l.trim_end_matches(['\n', '\r']);
        if seen {
            if text.trim().is_empty() {
                return Some(at);
            }
        } else if !text.trim().is_empty() {
            let line = Line { no: k + 1, text };
            header::banner(line)?;
            seen = true;
        }
    }
    seen.then_some(at)
}

/// Cuts the output of `onstat -i` fed `asked` options into one text per option, each as the
/// option prints alone (its banner first). See the module's notes for what is accepted. A part
/// that prints its own banner is a slice of `text` (no copy: the parts of a 5,000-session tick
/// are megabytes, and they lived beside the output); one that lends the banner printed once
/// is built once, at its size.
pub fn split(text: &str, asked: usize) -> Result<Vec<Cow<'_, str>>, SplitError> {
    // Each part is the rest of its prompt's line, then the lines up to the next prompt: one
    // stretch of `text`. Only the lines holding the prompt's text are read (found by a
    // vectorised search: a 5,000-session tick is megabytes of lines, a few dozen prompts);
    // the lines between them only stretch the part they belong to.
    let mut before_end = 0;
    let mut pieces: Vec<std::ops::Range<usize>> = Vec::new();
    let stretch =
        |pieces: &mut Vec<std::ops::Range<usize>>, before_end: &mut usize, end| match pieces
            .last_mut()
        {
            Some(p) => p.end = end,
            None => *before_end = end,
        };
    let bytes = text.as_bytes();
    // Where the lines read so far end.
    let mut offset = 0;
    for at in memchr::memmem::find_iter(bytes, PROMPT) {
        if at < offset {
            continue;
        }
        let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |n| n + 1);
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(text.len(), |n| at + n + 1);
        if start > offset {
            stretch(&mut pieces, &mut before_end, start);
        }
        let mut rest = &text[start..end];
        let mut prompted = false;
        loop {
            let trimmed = rest.trim_start_matches([' ', '\t']);
            match trimmed.strip_prefix(PROMPT) {
                Some(after) => {
                    pieces.push(end..end);
                    rest = after.strip_prefix(' ').unwrap_or(after);
                    prompted = true;
                }
                None => break,
            }
        }
        match pieces.last_mut() {
            Some(p) if prompted => p.start = end - rest.len(),
            _ => stretch(&mut pieces, &mut before_end, end),
        }
        offset = end;
    }
    if text.len() > offset {
        stretch(&mut pieces, &mut before_end, text.len());
    }
    let before = &text[..before_end];
    let mut parts: Vec<&str> = pieces.into_iter().map(|r| &text[r]).collect();
    if parts.is_empty() {
        return Err(SplitError::NoPrompt);
    }
    // The prompt onstat prints before it reads end of input.
    if parts.len() == asked + 1 && parts.last().is_some_and(|p| p.trim().is_empty()) {
        parts.pop();
    }
    if parts.len() != asked {
        return Err(SplitError::Count {
            asked,
            found: parts.len(),
        });
    }
    let lent: Option<&str> = if has_banner(before) {
        Some(before)
    } else {
        parts
            .first()
            .and_then(|p| banner_end(p).map(|end| &p[..end]))
    };
    let mut out = Vec::with_capacity(parts.len());
    for p in parts {
        if has_banner(p) {
            out.push(Cow::Borrowed(p));
            continue;
        }
        match lent {
            Some(b) => {
                let body = p.trim_start_matches(['\n', '\r']);
                let mut s = String::with_capacity(b.len() + body.len());
                s.push_str(b);
                s.push_str(body);
                out.push(Cow::Owned(s));
            }
            None => return Err(SplitError::BannerRule),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const BANNER: &str =
        "\nIBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 00:10:00 -- 2457600 Kbytes\n\n";

    #[test]
    fn option_lines_have_no_dash_and_never_reset_counters() {
        assert_eq!(option_line(&["-u"]).as_deref(), Some("u"));
        assert_eq!(option_line(&["-g", "con"]).as_deref(), Some("g con"));
        assert_eq!(option_line(&["-g", "rea"]).as_deref(), Some("g rea"));
        assert_eq!(
            option_line(&["-g", "rss", "verbose"]).as_deref(),
            Some("g rss verbose")
        );
        for refused in [&["-z"][..], &["z"], &["rz", "3"], &["r", "3"], &["-r"], &[]] {
            assert_eq!(option_line(refused), None, "{refused:?}");
        }
        assert_eq!(option_line(&["-g", "ses\nz"]), None);
    }

    #[test]
    fn a_banner_per_option_and_a_last_prompt() {
        let text = format!("onstat> {BANNER}Userthreads\nrow\nonstat> {BANNER}Locks\nl\nonstat> ");
        let parts = split(&text, 2).expect("splits");
        assert_eq!(parts[0], format!("{BANNER}Userthreads\nrow\n"));
        assert_eq!(parts[1], format!("{BANNER}Locks\nl\n"));
        // Each part printed its own banner: a slice of the output, not a copy.
        assert!(
            parts.iter().all(|p| matches!(p, Cow::Borrowed(_))),
            "{parts:?}"
        );
    }

    #[test]
    fn no_prompt_at_end_of_input() {
        let text = format!("onstat> {BANNER}Userthreads\nrow\nonstat> {BANNER}Locks\nl\n");
        let parts = split(&text, 2).expect("splits");
        assert_eq!(parts[1], format!("{BANNER}Locks\nl\n"));
    }

    #[test]
    fn a_banner_once_is_lent_to_every_part() {
        // Before the first prompt...
        let text = format!("{BANNER}onstat> Userthreads\nrow\nonstat> \nLocks\nl\nonstat>");
        let parts = split(&text, 2).expect("splits");
        assert_eq!(parts[0], format!("{BANNER}Userthreads\nrow\n"));
        assert_eq!(parts[1], format!("{BANNER}Locks\nl\n"));
        // ...or in the first option's answer only.
        let text = format!("onstat> {BANNER}Userthreads\nrow\nonstat> \nLocks\nl\n");
        let parts = split(&text, 2).expect("splits");
        assert_eq!(parts[1], format!("{BANNER}Locks\nl\n"));
    }

    #[test]
    fn prompts_on_lines_of_their_own() {
        let text = format!("onstat>\n{BANNER}Userthreads\nonstat>\n{BANNER}Locks\nonstat>\n");
        let parts = split(&text, 2).expect("splits");
        assert_eq!(parts[0], format!("\n{BANNER}Userthreads\n"));
    }

    #[test]
    fn what_does_not_split_says_why() {
        assert_eq!(
            split(&format!("{BANNER}Userthreads\n"), 1),
            Err(SplitError::NoPrompt)
        );
        assert_eq!(
            split(&format!("onstat> {BANNER}Userthreads\n"), 2),
            Err(SplitError::Count { asked: 2, found: 1 })
        );
        assert_eq!(
            split("onstat> Userthreads\nonstat> Locks\n", 2),
            Err(SplitError::BannerRule)
        );
        // Off-line: the message is each option's answer, a banner of its own.
        let off = "onstat> \nshared memory not initialized for INFORMIXSERVER 'x'\nonstat> \nshared memory not initialized for INFORMIXSERVER 'x'\n";
        let parts = split(off, 2).expect("splits");
        assert!(parts.iter().all(|p| header::is_offline_message(p)));
    }

    /// The splitter as it was, pushing line by line: what `split` must still give.
    fn split_line_by_line(text: &str, asked: usize) -> Result<Vec<String>, SplitError> {
        let mut before = String::new();
        let mut parts: Vec<String> = Vec::new();
        for line in text.split_inclusive('\n') {
            let mut rest = line;
            loop {
                let trimmed = rest.trim_start_matches([' ', '\t']);
                match trimmed.strip_prefix(PROMPT) {
                    Some(after) => {
                        parts.push(String::new());
                        rest = after.strip_prefix(' ').unwrap_or(after);
                    }
                    None => break,
                }
            }
            match parts.last_mut() {
                Some(p) => p.push_str(rest),
                None => before.push_str(rest),
            }
        }
        if parts.is_empty() {
            return Err(SplitError::NoPrompt);
        }
        // The prompt onstat prints before it reads end of input.
        if parts.len() == asked + 1 && parts.last().is_some_and(|p| p.trim().is_empty()) {
            parts.pop();
        }
        if parts.len() != asked {
            return Err(SplitError::Count {
                asked,
                found: parts.len(),
            });
        }
        let lent: Option<String> = if has_banner(&before) {
            Some(before)
        } else {
            parts
                .first()
                .and_then(|p| banner_end(p).map(|end| p[..end].to_string()))
        };
        let mut out = Vec::with_capacity(parts.len());
        for p in parts {
            if has_banner(&p) {
                out.push(p);
                continue;
            }
            match &lent {
                Some(b) => {
                    let mut s = String::with_capacity(b.len() + p.len());
                    s.push_str(b);
                    s.push_str(p.trim_start_matches(['\n', '\r']));
                    out.push(s);
                }
                None => return Err(SplitError::BannerRule),
            }
        }
        Ok(out)
    }

    proptest! {
        #[test]
        fn never_panics(text in "(onstat> ?|IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line --|\n| |x|\r|é)*", asked in 0usize..8) {
            let _ = split(&text, asked);
        }

        /// Built a part at a time, the parts are the ones pushed line by line.
        #[test]
        fn parts_are_as_line_by_line(text in "(onstat> ?|  onstat> |\tonstat>|IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 00:01:02 -- 1 Kbytes\n|\n| |x|\r|é)*", asked in 0usize..8) {
            let owned = split(&text, asked).map(|parts| parts.into_iter().map(Cow::into_owned).collect::<Vec<String>>());
            prop_assert_eq!(owned, split_line_by_line(&text, asked));
        }

        #[test]
        fn never_panics_on_anything(text in any::<String>(), asked in 0usize..8) {
            let _ = split(&text, asked);
        }

        /// What onstat prints with a banner per option splits back into the same parts.
        #[test]
        fn round_trips(bodies in proptest::collection::vec("[A-Za-z0-9 ]{0,20}(\n[A-Za-z0-9 ]{0,20}){0,4}\n", 1..6), last_prompt in any::<bool>()) {
            let mut text = String::new();
            for b in &bodies {
                text.push_str("onstat> ");
                text.push_str(BANNER);
                text.push_str(b);
            }
            if last_prompt {
                text.push_str("onstat> ");
            }
            let parts = split(&text, bodies.len()).expect("splits");
            for (p, b) in parts.iter().zip(&bodies) {
                let want = format!("{BANNER}{b}");
                prop_assert_eq!(p.as_ref(), want.as_str());
            }
        }
    }
}
