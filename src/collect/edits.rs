//! The ring's outputs stored as what changed: an output whose source's last output in the same
//! file is kept (its base) is written as the lines that changed against it, `"edit"`; and the
//! reader that gives such a file back as whole outputs, so every replay sees the outputs as
//! they were collected.
//!
//! A 5,000-session instance prints about 3 MB a second, a few outputs every second and others
//! every 5 to 30 s; most lines of an output are the lines of its source's last one. A zstd
//! window long enough to reach back to each source's last output (32 MB, with long-distance
//! matching) held 35 MB of memory for that; the last output of each source is about 5 MB, and
//! the lines that changed compress with zstd's own small window (measured in
//! docs/recording.md). Writer and reader keep the same bases by the same rule ([`Bases`]), and
//! an edit names the size and digest of the base it was made against: an edit read against
//! another base (a line lost before it) is said unreadable, never applied.
//!
//! The lines, in the order their fields are written (a reader finds the mark right after `t`):
//! - `{"t":12.0,"keep":true,"source":...,"stdout":"...",...}`: a whole output, kept as its
//!   source's base; every reader of recordings reads it as a plain sample.
//! - `{"t":13.0,"edit":[[0,12],"changed line\nanother",[14,4980]],"of":[498213,1234],
//!   "source":...,"stdout":null,...}`: lines 0-11 of the base, two new lines, lines 14-4993 of
//!   the base. Its `stdout` is null, so a reader that does not know edits refuses the line
//!   rather than take an empty output.
//! - a sample line without either: a whole output not kept (larger than [`BASE_MAX`]).

use crate::collect::sample::RawSample;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::io::{BufRead, Read};

/// An output longer than this is written whole and not kept as a base.
pub(crate) const BASE_MAX: usize = 4 << 20;
/// The bases kept at most (their text and line index), by the writer and the reader alike: past
/// it the least recently written go. A 5,000-session instance's sources that print every few
/// seconds come to about 5 MB; the rest are small (one session's SQL).
pub(crate) const BASES_MAX: usize = 8 << 20;

/// One source's last output.
struct Base {
    text: String,
    /// Where each line starts (bytes).
    starts: Vec<u32>,
    digest: u64,
    /// When it was last written (the [`Bases`] clock).
    used: u64,
}

impl Base {
    fn new(text: String, used: u64) -> Base {
        let mut starts = Vec::with_capacity(text.len() / 64 + 1);
        starts.push(0);
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| (i + 1) as u32));
        Base {
            digest: digest(text.as_bytes()),
            text,
            starts,
            used,
        }
    }

    fn lines(&self) -> usize {
        self.starts.len()
    }

    fn line(&self, i: usize) -> &str {
        &self.text[self.starts[i] as usize..self.end(i)]
    }

    /// Where line `i` ends (before its newline).
    fn end(&self, i: usize) -> usize {
        self.starts
            .get(i + 1)
            .map_or(self.text.len(), |&s| s as usize - 1)
    }

    /// The memory it holds, as the cap counts it.
    fn cost(&self) -> usize {
        self.text.len() + 4 * self.starts.len()
    }
}

/// A 64-bit digest of an output, to check an edit is read against the base it was made
/// against. Fixed here (a std hasher may change between releases; a ring outlives them).
fn digest(b: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = K ^ (b.len() as u64);
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        let mut x = [0u8; 8];
        x.copy_from_slice(w);
        h = (h ^ u64::from_le_bytes(x)).wrapping_mul(K);
        h ^= h >> 29;
    }
    let mut x = [0u8; 8];
    x[..words.remainder().len()].copy_from_slice(words.remainder());
    h = (h ^ u64::from_le_bytes(x)).wrapping_mul(K);
    h ^ (h >> 32)
}

/// The last output of each source, kept by the writer and the reader by the same rule.
#[derive(Default)]
pub(crate) struct Bases {
    map: rustc_hash::FxHashMap<String, Base>,
    bytes: usize,
    clock: u64,
}

impl Bases {
    /// The memory the bases hold (text and line index).
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// `text` becomes `source`'s base; the least recently written go while the bases pass
    /// [`BASES_MAX`] (never the one just put).
    fn put(&mut self, source: &str, text: String) {
        self.clock += 1;
        let base = Base::new(text, self.clock);
        self.bytes += base.cost();
        if let Some(old) = self.map.insert(source.to_string(), base) {
            self.bytes -= old.cost();
        }
        while self.bytes > BASES_MAX {
            let oldest = self
                .map
                .iter()
                .filter(|(s, _)| s.as_str() != source)
                .min_by_key(|(_, b)| b.used)
                .map(|(s, _)| s.clone());
            let Some(oldest) = oldest else { break };
            if let Some(b) = self.map.remove(&oldest) {
                self.bytes -= b.cost();
            }
        }
    }
}

/// A piece of an edit: lines of the base (first, count); one line of the base changed in its
/// middle (the line, the bytes kept before, the new middle, the bytes kept after: a session's
/// counters moved); or new lines (joined by newlines).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
enum Op<'a> {
    Copy(u32, u32),
    Change(u32, u32, Cow<'a, str>, u32),
    Lit(Cow<'a, str>),
}

/// A changed line is written as its change when this much of it is kept.
const CHANGE_MIN: usize = 16;

/// A string, borrowed from the line when it can be.
struct Text<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Op<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Op<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "[first line, lines], [line, kept before, middle, kept after] or new lines",
                )
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Op<'de>, E> {
                Ok(Op::Lit(Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Op<'de>, E> {
                Ok(Op::Lit(Cow::Owned(v.to_string())))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Op<'de>, E> {
                Ok(Op::Lit(Cow::Owned(v)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Op<'de>, A::Error> {
                let first = a
                    .next_element::<u32>()?
                    .ok_or_else(|| serde::de::Error::invalid_length(0, &self))?;
                let n = a
                    .next_element::<u32>()?
                    .ok_or_else(|| serde::de::Error::invalid_length(1, &self))?;
                let Some(Text(middle)) = a.next_element::<Text<'de>>()? else {
                    return Ok(Op::Copy(first, n));
                };
                let after = a
                    .next_element::<u32>()?
                    .ok_or_else(|| serde::de::Error::invalid_length(3, &self))?;
                if a.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    return Err(serde::de::Error::invalid_length(5, &self));
                }
                Ok(Op::Change(first, n, middle, after))
            }
        }
        d.deserialize_any(V)
    }
}

/// The edit that makes `new` from `base`: runs of the base's lines where `new` repeats them
/// (found by content, so sessions come and go without losing the rest), new lines between.
fn edit<'a>(base: &Base, new: &'a str) -> Vec<Op<'a>> {
    let n = base.lines();
    // Each line's first place in the base, and the next place of the same line.
    let mut first: rustc_hash::FxHashMap<&str, u32> = rustc_hash::FxHashMap::default();
    first.reserve(n);
    let mut next = vec![u32::MAX; n];
    for i in (0..n).rev() {
        if let Some(later) = first.insert(base.line(i), i as u32) {
            next[i] = later;
        }
    }
    // The place of `line` in the base at or after `j` (a few steps along), else its first.
    let find = |line: &str, j: usize| -> Option<usize> {
        let mut k = *first.get(line)?;
        let start = k;
        for _ in 0..8 {
            if k as usize >= j {
                return Some(k as usize);
            }
            match next[k as usize] {
                u32::MAX => break,
                later => k = later,
            }
        }
        Some(start as usize)
    };
    let mut ops: Vec<Op<'a>> = Vec::new();
    let mut j = 0usize;
    let mut rest = new;
    let mut lit_start: Option<usize> = None;
    let mut offset = 0usize;
    let flush_lit = move |ops: &mut Vec<Op<'a>>, from: &mut Option<usize>, to: usize| {
        if let Some(s) = from.take() {
            // The new lines from byte `s` to the newline before byte `to`.
            ops.push(Op::Lit(Cow::Borrowed(&new[s..to.saturating_sub(1).max(s)])));
        }
    };
    loop {
        let (line, more) = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(i) => (&rest[..i], true),
            None => (rest, false),
        };
        let here = if j < n && base.line(j) == line {
            Some(j)
        } else {
            find(line, j)
        };
        match here {
            Some(k) => {
                flush_lit(&mut ops, &mut lit_start, offset);
                match ops.last_mut() {
                    Some(Op::Copy(s, c)) if (*s + *c) as usize == k => *c += 1,
                    _ => ops.push(Op::Copy(k as u32, 1)),
                }
                j = k + 1;
            }
            None => match change(base, j, line) {
                Some((before, after)) => {
                    flush_lit(&mut ops, &mut lit_start, offset);
                    ops.push(Op::Change(
                        j as u32,
                        before as u32,
                        Cow::Borrowed(&line[before..line.len() - after]),
                        after as u32,
                    ));
                    j += 1;
                }
                None => {
                    lit_start.get_or_insert(offset);
                }
            },
        }
        if !more {
            flush_lit(&mut ops, &mut lit_start, new.len() + 1);
            break;
        }
        offset += line.len() + 1;
        rest = &rest[line.len() + 1..];
    }
    ops
}

/// How much of line `j` of the base `line` keeps before and after what changed, when that is
/// enough to write it as its change ([`CHANGE_MIN`]); on character boundaries.
fn change(base: &Base, j: usize, line: &str) -> Option<(usize, usize)> {
    if j >= base.lines() {
        return None;
    }
    let old = base.line(j).as_bytes();
    let new = line.as_bytes();
    let mut before = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    while !line.is_char_boundary(before) {
        before -= 1;
    }
    let mut after = old[before..]
        .iter()
        .rev()
        .zip(new[before..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    while !line.is_char_boundary(line.len() - after) {
        after -= 1;
    }
    (before + after >= CHANGE_MIN).then_some((before, after))
}

/// The output an edit makes of its base; `None` when it points past the base.
fn apply(base: &Base, ops: &[Op<'_>]) -> Option<String> {
    let mut out = String::with_capacity(base.text.len() + 256);
    for (i, op) in ops.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match op {
            Op::Copy(s, c) => {
                let (s, c) = (*s as usize, *c as usize);
                if c == 0 || s + c > base.lines() {
                    return None;
                }
                out.push_str(&base.text[base.starts[s] as usize..base.end(s + c - 1)]);
            }
            Op::Change(j, before, middle, after) => {
                let (j, before, after) = (*j as usize, *before as usize, *after as usize);
                if j >= base.lines() {
                    return None;
                }
                let old = base.line(j);
                let tail = old.len().checked_sub(after)?;
                if before > tail {
                    return None;
                }
                out.push_str(old.get(..before)?);
                out.push_str(middle);
                out.push_str(old.get(tail..)?);
            }
            Op::Lit(t) => out.push_str(t),
        }
    }
    (!ops.is_empty()).then_some(out)
}

#[derive(Serialize)]
struct KeepLine<'a> {
    t: f64,
    keep: bool,
    source: &'a str,
    argv: &'a [String],
    exit: Option<i32>,
    stdout: &'a str,
    stderr: &'a str,
}

#[derive(Serialize)]
struct EditLine<'a> {
    t: f64,
    edit: &'a [Op<'a>],
    of: (usize, u64),
    source: &'a str,
    argv: &'a [String],
    exit: Option<i32>,
    stdout: (),
    stderr: &'a str,
}

#[derive(Deserialize)]
struct KeepIn<'a> {
    #[serde(borrow)]
    source: Cow<'a, str>,
    stdout: String,
}

#[derive(Deserialize)]
struct EditIn<'a> {
    t: f64,
    #[serde(borrow)]
    edit: Vec<Op<'a>>,
    of: (usize, u64),
    #[serde(borrow)]
    source: Cow<'a, str>,
    #[serde(default)]
    argv: Vec<String>,
    #[serde(default)]
    exit: Option<i32>,
    #[serde(default)]
    stderr: String,
}

/// Writes outputs as lines of a ring's file: whole the first time a source is seen (kept as its
/// base), then as edits of its base. One per file: a file is read from its start.
#[derive(Default)]
pub(crate) struct Packer {
    bases: Bases,
    line: Vec<u8>,
}

impl Packer {
    /// The line of `sample` (its newline included).
    pub(crate) fn line(&mut self, sample: RawSample) -> serde_json::Result<&[u8]> {
        self.line.clear();
        let RawSample {
            t,
            source,
            argv,
            exit,
            stdout,
            stderr,
        } = sample;
        if stdout.len() > BASE_MAX {
            let whole = RawSample {
                t,
                source,
                argv,
                exit,
                stdout,
                stderr,
            };
            serde_json::to_writer(&mut self.line, &whole)?;
        } else if let Some(base) = self.bases.map.get(source.as_str()) {
            let ops = edit(base, &stdout);
            let line = EditLine {
                t,
                edit: &ops,
                of: (base.text.len(), base.digest),
                source: &source,
                argv: &argv,
                exit,
                stdout: (),
                stderr: &stderr,
            };
            serde_json::to_writer(&mut self.line, &line)?;
            drop(ops);
            self.bases.put(&source, stdout);
        } else {
            let line = KeepLine {
                t,
                keep: true,
                source: &source,
                argv: &argv,
                exit,
                stdout: &stdout,
                stderr: &stderr,
            };
            serde_json::to_writer(&mut self.line, &line)?;
            self.bases.put(&source, stdout);
        }
        self.line.push(b'\n');
        Ok(&self.line)
    }

    /// The memory its bases hold.
    pub(crate) fn held(&self) -> usize {
        self.bases.bytes() + self.line.capacity()
    }
}

/// What a line of a ring's file is, from the field right after its `t`.
#[derive(Debug, PartialEq)]
enum Mark {
    Keep,
    Edit,
    None,
}

fn mark_of(line: &[u8]) -> Mark {
    let Some(rest) = line.strip_prefix(b"{\"t\":") else {
        return Mark::None;
    };
    let Some(comma) = rest.iter().take(40).position(|&b| b == b',') else {
        return Mark::None;
    };
    let after = &rest[comma + 1..];
    if after.starts_with(b"\"keep\":") {
        Mark::Keep
    } else if after.starts_with(b"\"edit\":") {
        Mark::Edit
    } else {
        Mark::None
    }
}

/// Whether a line is an edit (for the reader's message when it could not be read).
pub(crate) fn is_edit(line: &[u8]) -> bool {
    mark_of(line) == Mark::Edit
}

impl Bases {
    /// A whole line of a recording read: a kept output becomes its source's base, an edit is
    /// made whole against its base (which it then becomes). Gives the sample the line stands
    /// for, decoded once, when that is what the recording's reader would have read from the
    /// line written out whole; or, as `Err`, the length of that line when it is longer than
    /// `cap` (with its newline: the reader reads past such a line). `None` leaves the line to
    /// be read as it is (no mark, or not readable as a sample: the reader says why). Without
    /// `keep_output` the sample holds no outputs (as an index reads it), and the base takes
    /// the output without a copy.
    pub(crate) fn read(
        &mut self,
        line: &[u8],
        cap: u64,
        keep_output: bool,
    ) -> Option<Result<RawSample, u64>> {
        let sample = match mark_of(line) {
            Mark::Keep => self.keep(line)?,
            Mark::Edit => {
                let sample = self.expand(line)?;
                if let Some(len) = line_len_past(&sample, cap) {
                    self.put(&sample.source, sample.stdout);
                    return Some(Err(len + 1));
                }
                sample
            }
            Mark::None => return None,
        };
        let mut sample = sample;
        if keep_output {
            self.put(&sample.source, sample.stdout.clone());
        } else {
            self.put(&sample.source, std::mem::take(&mut sample.stdout));
            sample.argv = Vec::new();
            sample.stderr = String::new();
        }
        Some(Ok(sample))
    }

    /// A kept output, read once for its base and its sample. The sample is `None` when the
    /// line is no sample, or may be a header to the reader (a top-level key it looks for): the
    /// line is then read as it is, its base kept all the same when it has an output.
    fn keep(&mut self, line: &[u8]) -> Option<RawSample> {
        let sample = serde_json::from_slice::<RawSample>(line).ok();
        let Some(sample) = sample.filter(|s| !s.stdout.is_empty() || has_stdout(line)) else {
            // Not a sample, or one without an output (its `stdout` left out): the base is the
            // output when there is one.
            if let Ok(k) = serde_json::from_slice::<KeepIn>(line) {
                let source = k.source.into_owned();
                self.put(&source, k.stdout);
            }
            return None;
        };
        if memchr::memmem::find(line, b"\"ifxtop_recording\"").is_some() {
            self.put(&sample.source, sample.stdout);
            return None;
        }
        Some(sample)
    }

    /// The edit in `line` made whole; `None` when it cannot be (its base not read, or
    /// another): the line then goes on as it is, and the recording's reader says it skipped
    /// it.
    fn expand(&self, line: &[u8]) -> Option<RawSample> {
        let e: EditIn = serde_json::from_slice(line).ok()?;
        let base = self.map.get(e.source.as_ref())?;
        if (base.text.len(), base.digest) != e.of {
            return None;
        }
        let stdout = apply(base, &e.edit)?;
        Some(RawSample {
            t: e.t,
            source: e.source.into_owned(),
            argv: e.argv,
            exit: e.exit,
            stdout,
            stderr: e.stderr,
        })
    }
}

/// Whether a kept line's `stdout` is there (a string: the line was read as a sample).
fn has_stdout(line: &[u8]) -> bool {
    serde_json::from_slice::<KeepIn>(line).is_ok()
}

/// The bytes of `sample` written as a recording's line (its newline not counted) when they
/// pass `cap`; counted only when a quick bound (a JSON string is at most six bytes a byte,
/// `\u0000`, and its quotes) says they may.
fn line_len_past(sample: &RawSample, cap: u64) -> Option<u64> {
    let texts = sample.source.len()
        + sample.stdout.len()
        + sample.stderr.len()
        + sample.argv.iter().map(|a| a.len() + 3).sum::<usize>();
    // Braces, keys, commas, a time and an exit code.
    const FRAME: u64 = 128;
    if (texts as u64).saturating_mul(6).saturating_add(FRAME) <= cap {
        return None;
    }
    let mut n = ByteCount(0);
    serde_json::to_writer(&mut n, sample).ok()?;
    (n.0 > cap).then_some(n.0)
}

/// A writer that only counts.
struct ByteCount(u64);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The lines of a recording with every edit made whole again, written out as plain sample
/// lines (a file without edits passes through unchanged), for a reader that needs the text of
/// each line (the ring's window moves each sample's time in the text). Lines longer than
/// `cap` pass through unread, as they came.
pub(crate) struct Expand<R> {
    inner: R,
    bases: Bases,
    cap: u64,
    line: Vec<u8>,
    out: Vec<u8>,
    pos: usize,
    /// In the middle of a line longer than the cap, passed through as it comes.
    passing: bool,
}

impl<R: BufRead> Expand<R> {
    pub(crate) fn new(inner: R, cap: u64) -> Self {
        Expand {
            inner,
            bases: Bases::default(),
            cap,
            line: Vec::new(),
            out: Vec::new(),
            pos: 0,
            passing: false,
        }
    }

    fn refill(&mut self) -> std::io::Result<()> {
        self.out.clear();
        self.pos = 0;
        if self.passing {
            let chunk = self.inner.fill_buf()?;
            let (n, ends) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            self.out.extend_from_slice(&chunk[..n]);
            self.inner.consume(n);
            self.passing = !ends && n > 0;
            return Ok(());
        }
        self.line.clear();
        (&mut self.inner)
            .take(self.cap)
            .read_until(b'\n', &mut self.line)?;
        let whole = self.line.last() == Some(&b'\n');
        if !whole && self.line.len() as u64 >= self.cap {
            self.passing = true;
        }
        // A kept output goes on as it came (a plain sample line to every reader); an edit
        // made whole is written out as the sample it stands for.
        let edit = whole && mark_of(&self.line) == Mark::Edit;
        let sample = if whole {
            self.bases.read(&self.line, u64::MAX, edit)
        } else {
            None
        };
        if let Some(Ok(sample)) = sample.filter(|_| edit) {
            if serde_json::to_writer(&mut self.out, &sample).is_ok() {
                self.out.push(b'\n');
                return Ok(());
            }
            self.out.clear();
        }
        std::mem::swap(&mut self.out, &mut self.line);
        Ok(())
    }
}
impl<R: BufRead> Read for Expand<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let avail = self.fill_buf()?;
        let n = avail.len().min(buf.len());
        buf[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Expand<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.pos >= self.out.len() {
            self.refill()?;
        }
        Ok(&self.out[self.pos..])
    }

    fn consume(&mut self, amt: usize) {
        self.pos = (self.pos + amt).min(self.out.len());
    }
}

/// The reader before outputs were decoded once: each edit made whole was written out as a
/// plain sample line and read back. What the reader must still give, kept to compare with.
#[cfg(test)]
pub(crate) mod reference {
    use super::*;

    /// The lines of a recording with every edit made whole again (a file without edits passes
    /// through unchanged). Lines longer than `cap` pass through unread, as they came.
    pub(crate) struct Expand<R> {
        inner: R,
        bases: Bases,
        cap: u64,
        line: Vec<u8>,
        out: Vec<u8>,
        pos: usize,
        /// In the middle of a line longer than the cap, passed through as it comes.
        passing: bool,
    }

    impl<R: BufRead> Expand<R> {
        pub(crate) fn new(inner: R, cap: u64) -> Self {
            Expand {
                inner,
                bases: Bases::default(),
                cap,
                line: Vec::new(),
                out: Vec::new(),
                pos: 0,
                passing: false,
            }
        }

        fn refill(&mut self) -> std::io::Result<()> {
            self.out.clear();
            self.pos = 0;
            if self.passing {
                let chunk = self.inner.fill_buf()?;
                let (n, ends) = match memchr::memchr(b'\n', chunk) {
                    Some(i) => (i + 1, true),
                    None => (chunk.len(), false),
                };
                self.out.extend_from_slice(&chunk[..n]);
                self.inner.consume(n);
                self.passing = !ends && n > 0;
                return Ok(());
            }
            self.line.clear();
            (&mut self.inner)
                .take(self.cap)
                .read_until(b'\n', &mut self.line)?;
            let whole = self.line.last() == Some(&b'\n');
            if !whole && self.line.len() as u64 >= self.cap {
                self.passing = true;
            }
            if whole {
                match mark_of(&self.line) {
                    Mark::Keep => {
                        if let Ok(k) = serde_json::from_slice::<KeepIn>(&self.line) {
                            let source = k.source.into_owned();
                            self.bases.put(&source, k.stdout);
                        }
                    }
                    Mark::Edit => {
                        if let Some(whole) = self.expand() {
                            self.out = whole;
                            return Ok(());
                        }
                    }
                    Mark::None => {}
                }
            }
            std::mem::swap(&mut self.out, &mut self.line);
            Ok(())
        }

        /// The edit in `line` made whole, as a plain sample line; `None` when it cannot be (its
        /// base not read, or another): the line then goes on as it is, and the recording's reader
        /// says it skipped it.
        fn expand(&mut self) -> Option<Vec<u8>> {
            let e: EditIn = serde_json::from_slice(&self.line).ok()?;
            let base = self.bases.map.get(e.source.as_ref())?;
            if (base.text.len(), base.digest) != e.of {
                return None;
            }
            let stdout = apply(base, &e.edit)?;
            let sample = RawSample {
                t: e.t,
                source: e.source.into_owned(),
                argv: e.argv,
                exit: e.exit,
                stdout,
                stderr: e.stderr,
            };
            let mut out = std::mem::take(&mut self.out);
            out.clear();
            serde_json::to_writer(&mut out, &sample).ok()?;
            out.push(b'\n');
            self.bases.put(&sample.source, sample.stdout);
            Some(out)
        }
    }

    impl<R: BufRead> Read for Expand<R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let avail = self.fill_buf()?;
            let n = avail.len().min(buf.len());
            buf[..n].copy_from_slice(&avail[..n]);
            self.consume(n);
            Ok(n)
        }
    }

    impl<R: BufRead> BufRead for Expand<R> {
        fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
            if self.pos >= self.out.len() {
                self.refill()?;
            }
            Ok(&self.out[self.pos..])
        }

        fn consume(&mut self, amt: usize) {
            self.pos = (self.pos + amt).min(self.out.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t: f64, source: &str, stdout: &str) -> RawSample {
        RawSample {
            t,
            source: source.into(),
            argv: vec!["onstat".into(), "-u".into()],
            exit: Some(5),
            stdout: stdout.into(),
            stderr: String::new(),
        }
    }

    fn pack(samples: &[RawSample]) -> Vec<u8> {
        let mut p = Packer::default();
        let mut out = Vec::new();
        for s in samples {
            out.extend_from_slice(p.line(s.clone()).expect("a line"));
        }
        out
    }

    fn unpack(bytes: &[u8]) -> Vec<RawSample> {
        let mut r = Expand::new(bytes, 1 << 20);
        let mut text = String::new();
        r.read_to_string(&mut text).expect("read");
        text.lines()
            .map(|l| serde_json::from_str(l).expect("a whole sample"))
            .collect()
    }

    /// Outputs written as edits of their source's last output read back whole, to the byte:
    /// lines changed, added, removed, moved, repeated; empty outputs, no final newline, an
    /// output of nothing but newlines.
    #[test]
    fn outputs_written_as_edits_read_back_whole() {
        let a = "head\n\nsid 1 x\nsid 2 y\nsid 3 z\n\nfoot\n";
        let outputs = [
            a,
            "head\n\nsid 1 x\nsid 2 Y\nsid 3 z\n\nfoot\n",
            "head\n\nsid 2 Y\nsid 3 z\nsid 4 w\n\nfoot\n",
            "head\n\nsid 3 z\nsid 2 Y\nsid 4 w\n\n\n\nfoot",
            "",
            "\n\n\n",
            "other\nentirely",
            a,
            "head\n\nsid 1 x counters 0000012 0000034 ok\nsid 2 y\n",
            "head\n\nsid 1 x counters 0000013 0000034 ok\nsid 2 y\n",
            "head\n\nsid 1 x counters 00000é3 0000034 ok\nsid 2 y\n",
            "head\n\nsid 1 x counters 00000è3 0000034 ok\nsid 2 y\n",
            "head\n\nsid 1 x counters 00000è3 0000034 ok\nsid 2 y\n",
            a,
        ];
        let samples: Vec<RawSample> = outputs
            .iter()
            .enumerate()
            .flat_map(|(i, o)| {
                [
                    sample(i as f64, "onstat -u", o),
                    sample(i as f64, "onstat -k", &o.replace('s', "S")),
                ]
            })
            .collect();
        let packed = pack(&samples);
        let text = String::from_utf8(packed.clone()).expect("utf-8");
        // The first of each source whole and kept, the rest edits.
        assert_eq!(text.matches("\"keep\":true").count(), 2, "{text}");
        assert_eq!(
            text.matches("\"edit\":").count(),
            samples.len() - 2,
            "{text}"
        );
        // A line whose counter moved is written as its change.
        assert!(text.contains(r#"[2,23,"3",11]"#), "{text}");
        assert_eq!(unpack(&packed), samples);
    }

    /// An edit read against another base than the one it was made against (a line before it
    /// lost) is not applied: the line goes on as it was, and no reader takes it for an output.
    #[test]
    fn an_edit_against_another_base_is_not_applied() {
        let samples = [
            sample(0.0, "onstat -u", "a\nb\nc\n"),
            sample(1.0, "onstat -u", "a\nB\nc\n"),
            sample(2.0, "onstat -u", "a\nB\nC\n"),
        ];
        let packed = pack(&samples);
        let lines: Vec<&[u8]> = packed.split_inclusive(|&b| b == b'\n').collect();
        // The middle line lost: the third is an edit of it.
        let damaged = [lines[0], lines[2]].concat();
        let mut r = Expand::new(&damaged[..], 1 << 20);
        let mut text = String::new();
        r.read_to_string(&mut text).expect("read");
        let out: Vec<&str> = text.lines().collect();
        assert_eq!(out.len(), 2);
        assert!(is_edit(out[1].as_bytes()), "{}", out[1]);
        assert!(
            serde_json::from_str::<RawSample>(out[1]).is_err(),
            "{}",
            out[1]
        );
    }

    /// The writer's and the reader's bases stay within their cap, the least recently written
    /// going first, and what went is written whole again.
    #[test]
    fn the_bases_stay_within_their_cap() {
        let big = "x".repeat(3 << 20);
        let samples: Vec<RawSample> = (0..6)
            .map(|i| sample(f64::from(i), &format!("src {}", i % 4), &big))
            .collect();
        let mut p = Packer::default();
        let mut packed = Vec::new();
        for s in &samples {
            packed.extend_from_slice(p.line(s.clone()).expect("line"));
            assert!(p.bases.bytes() <= BASES_MAX, "{}", p.bases.bytes());
        }
        assert_eq!(unpack(&packed), samples);
        // Too large to keep: written whole, never kept.
        let huge = sample(9.0, "huge", &"y".repeat(BASE_MAX + 1));
        let line = p.line(huge.clone()).expect("line").to_vec();
        assert_eq!(mark_of(&line), Mark::None);
        assert!(!p.bases.map.contains_key("huge"));
    }

    #[test]
    fn a_line_longer_than_the_cap_passes_through_unread() {
        let samples = [sample(0.0, "onstat -u", &"z".repeat(5000))];
        let packed = pack(&samples);
        let mut r = Expand::new(&packed[..], 100);
        let mut out = Vec::new();
        r.read_to_end(&mut out).expect("read");
        assert_eq!(out, packed);
    }
}
