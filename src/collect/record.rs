//! Recordings: every collected output as it was collected, JSON Lines (zstd when the file name
//! ends in `.zst`), versioned, flushed every second so a crash or a dropped ssh connection loses
//! at most the last second. Raw outputs, not parsed values: a newer ifxtop replays an old
//! recording with its better parsers.

use crate::collect::sample::RawSample;
use crate::error::Error;
use crate::source::Source;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub(crate) const FORMAT_VERSION: u64 = 1;
const FLUSH_EVERY: Duration = Duration::from_secs(1);
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The first line of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordingHeader {
    pub ifxtop_recording: u64,
    pub server: Option<String>,
    /// RFC 3339.
    pub(crate) started: String,
    pub(crate) host: Option<String>,
    /// The listener ports the recording session used (so replay picks the same sockets).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<u16>,
    /// The base page size in KB the recording session used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_page_kb: Option<u32>,
    /// The server's offset from UTC when it was recorded (`+01:00`), so a replay shows the
    /// server's clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utc_offset: Option<String>,
}

impl RecordingHeader {
    /// The header of a recording whose session time 0 was `started` (in the server's offset).
    pub fn new(
        server: Option<&str>,
        host: Option<&str>,
        started: time::OffsetDateTime,
        ports: &[u16],
        base_page_kb: u32,
    ) -> Self {
        let fmt = time::macros::format_description!("[offset_hour sign:mandatory]:[offset_minute]");
        RecordingHeader {
            ifxtop_recording: FORMAT_VERSION,
            server: server.map(String::from),
            started: started
                .to_offset(time::UtcOffset::UTC)
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default(),
            host: host.map(String::from),
            ports: ports.to_vec(),
            base_page_kb: Some(base_page_kb),
            utc_offset: started.offset().format(&fmt).ok(),
        }
    }

    /// The recording's start in the server's offset.
    pub fn started_at(&self) -> Option<time::OffsetDateTime> {
        let t = time::OffsetDateTime::parse(
            &self.started,
            &time::format_description::well_known::Rfc3339,
        )
        .ok()?;
        let fmt = time::macros::format_description!("[offset_hour sign:mandatory]:[offset_minute]");
        let offset = self
            .utc_offset
            .as_deref()
            .and_then(|o| time::UtcOffset::parse(o, &fmt).ok())
            .unwrap_or(time::UtcOffset::UTC);
        Some(t.to_offset(offset))
    }
}

/// Counts bytes that reach the file (after compression), for the size cap.
struct Counting<W> {
    inner: W,
    written: Arc<std::sync::atomic::AtomicU64>,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

enum Sink {
    Plain(std::io::BufWriter<Counting<std::fs::File>>),
    Zstd(zstd::stream::write::Encoder<'static, Counting<std::fs::File>>),
}

impl Sink {
    fn writer(&mut self) -> &mut dyn Write {
        match self {
            Sink::Plain(w) => w,
            Sink::Zstd(w) => w,
        }
    }

    /// Makes everything written so far readable from the file (a zstd flush ends a block).
    fn flush(&mut self) -> std::io::Result<()> {
        self.writer().flush()
    }

    fn finish(self) -> std::io::Result<()> {
        match self {
            Sink::Plain(mut w) => w.flush(),
            Sink::Zstd(w) => w.finish().and_then(|mut c| c.flush()),
        }
    }
}

/// A recording being written on its own thread.
pub struct Recorder {
    thread: std::thread::JoinHandle<Result<String, Error>>,
    status: Arc<Mutex<Option<String>>>,
    written: Arc<std::sync::atomic::AtomicU64>,
}

impl Recorder {
    /// Creates the file (so a bad path fails before the screen opens), writes the header, and
    /// starts writing what arrives on `rx` until every sender is gone.
    pub(crate) fn start(
        path: &Path,
        max_mb: u64,
        header: &RecordingHeader,
        rx: Receiver<RawSample>,
    ) -> Result<Recorder, Error> {
        let file = std::fs::File::create(path).map_err(|source| Error::File {
            path: path.display().to_string(),
            source,
        })?;
        let written = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counting = Counting {
            inner: file,
            written: written.clone(),
        };
        let zst = path.extension().is_some_and(|e| e == "zst");
        let mut sink = if zst {
            Sink::Zstd(zstd::stream::write::Encoder::new(counting, 3)?)
        } else {
            Sink::Plain(std::io::BufWriter::new(counting))
        };
        let header = serde_json::to_string(header).map_err(|e| Error::Other(e.to_string()))?;
        writeln!(sink.writer(), "{header}")?;
        sink.flush()?;
        let status = Arc::new(Mutex::new(None));
        let st = status.clone();
        let cap = max_mb.saturating_mul(1024 * 1024);
        let path_text = path.display().to_string();
        let counter = written.clone();
        let thread =
            std::thread::spawn(move || write_loop(sink, rx, &written, cap, &st, &path_text));
        Ok(Recorder {
            thread,
            status,
            written: counter,
        })
    }

    /// Bytes written to the file so far (compressed, when it is).
    pub fn written(&self) -> u64 {
        self.written.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A message for the status line when recording stopped early (size cap, disk full).
    pub(crate) fn status(&self) -> Option<String> {
        self.status.lock().ok().and_then(|s| s.clone())
    }

    /// Waits for the writer to finish (all senders dropped) and returns its summary.
    pub(crate) fn finish(self) -> Result<String, Error> {
        self.thread
            .join()
            .map_err(|_| Error::Other("recorder thread panicked".into()))?
    }
}

fn write_loop(
    mut sink: Sink,
    rx: Receiver<RawSample>,
    written: &std::sync::atomic::AtomicU64,
    cap: u64,
    status: &Mutex<Option<String>>,
    path: &str,
) -> Result<String, Error> {
    let mut last_flush = Instant::now();
    let mut samples = 0u64;
    let mut stopped: Option<String> = None;
    loop {
        let msg = rx.recv_timeout(FLUSH_EVERY);
        match msg {
            Ok(sample) if stopped.is_none() => {
                let line =
                    serde_json::to_string(&sample).map_err(|e| Error::Other(e.to_string()))?;
                if let Err(e) = writeln!(sink.writer(), "{line}") {
                    stopped = Some(format!("recording stopped: {path}: {e}"));
                } else {
                    samples += 1;
                }
            }
            Ok(_) => {} // stopped: drain without writing
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if last_flush.elapsed() >= FLUSH_EVERY {
            if let Err(e) = sink.flush() {
                stopped.get_or_insert(format!("recording stopped: {path}: {e}"));
            }
            last_flush = Instant::now();
        }
        let size = written.load(std::sync::atomic::Ordering::Relaxed);
        if stopped.is_none() && size >= cap {
            stopped = Some(format!(
                "recording stopped at {} MB (--record-max): {path} holds what came before",
                size / (1024 * 1024)
            ));
        }
        if let Some(s) = &stopped {
            if let Ok(mut st) = status.lock() {
                if st.is_none() {
                    *st = Some(s.clone());
                }
            }
        }
    }
    sink.finish()?;
    Ok(match stopped {
        Some(s) => s,
        None => format!("recorded {samples} outputs to {path}"),
    })
}

/// One recorded output as a replay keeps it: its output compressed (a recording of a big
/// instance holds hundreds of MB of text; a replay must not), the rest as recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSample {
    pub(crate) t: f64,
    pub source: String,
    pub(crate) argv: Vec<String>,
    pub(crate) exit: Option<i32>,
    pub(crate) stderr: String,
    stdout_zst: Box<[u8]>,
}

/// zstd level 1: fast enough to compress every line while loading, and onstat text compresses
/// tenfold.
const KEEP_LEVEL: i32 = 1;

impl StoredSample {
    pub(crate) fn new(raw: RawSample) -> StoredSample {
        let stdout_zst = zstd::bulk::compress(raw.stdout.as_bytes(), KEEP_LEVEL)
            .unwrap_or_else(|_| raw.stdout.clone().into_bytes())
            .into_boxed_slice();
        StoredSample {
            t: raw.t,
            source: raw.source,
            argv: raw.argv,
            exit: raw.exit,
            stderr: raw.stderr,
            stdout_zst,
        }
    }

    pub(crate) fn at(&self) -> Duration {
        Duration::try_from_secs_f64(self.t).unwrap_or_default()
    }

    /// The output as recorded.
    pub(crate) fn stdout(&self) -> String {
        let bytes = zstd::stream::decode_all(&self.stdout_zst[..])
            .unwrap_or_else(|_| self.stdout_zst.to_vec());
        match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }
    }

    /// The sample as it was recorded.
    pub fn raw(&self) -> RawSample {
        RawSample {
            t: self.t,
            source: self.source.clone(),
            argv: self.argv.clone(),
            exit: self.exit,
            stdout: self.stdout(),
            stderr: self.stderr.clone(),
        }
    }

    /// Bytes it keeps in memory for its output.
    pub fn kept_bytes(&self) -> usize {
        self.stdout_zst.len()
    }
}

/// A recording read back: the samples that can be replayed, in time order, and what was not.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    pub header: Option<RecordingHeader>,
    pub samples: Vec<(Source, StoredSample)>,
    /// What was skipped and why, one line each, for the screen (the first `MAX_PROBLEMS`; the
    /// last line counts the rest).
    pub skipped: Vec<String>,
    problems_not_kept: usize,
}

impl Recording {
    /// When the recording started (its header's `started`), in the server's offset.
    pub fn started(&self) -> Option<time::OffsetDateTime> {
        self.header.as_ref()?.started_at()
    }

    pub fn length(&self) -> Duration {
        self.samples.last().map(|(_, s)| s.at()).unwrap_or_default()
    }
}

/// Reads a recording (plain or zstd, by content), a line at a time: memory holds one line and
/// the compressed samples, never the whole text. Damage is reported in `skipped`, never fatal:
/// only a file that cannot be opened is an error.
pub fn read_recording(path: &Path) -> Result<Recording, Error> {
    let file = std::fs::File::open(path).map_err(|source| Error::File {
        path: path.display().to_string(),
        source,
    })?;
    // A directory opens on Unix and fails only at the first read, which read as a damaged
    // compressed stream; a FIFO or device would block or never end.
    let kind = file.metadata().map_err(|source| Error::File {
        path: path.display().to_string(),
        source,
    })?;
    if kind.is_dir() {
        return Err(Error::Usage(format!(
            "{}: is a directory, not a recording",
            path.display()
        )));
    }
    if !kind.is_file() {
        return Err(Error::Usage(format!(
            "{}: not a regular file, not a recording",
            path.display()
        )));
    }
    Ok(read_from(BufReader::new(file)))
}

/// Problems kept word for word; past them only counted (a garbage file of a gigabyte has
/// millions of bad lines).
const MAX_PROBLEMS: usize = 100;

/// The latest time a sample may carry: about ten years of recording. Beyond it (`t: 1e300`) the
/// time cannot be a position in a recording, and sorted last it hid every other sample.
const MAX_T: f64 = 10.0 * 365.0 * 86_400.0;

/// Base page sizes a header may name, in KB.
const PAGE_SIZES_KB: [u32; 5] = [1, 2, 4, 8, 16];

impl Recording {
    /// How many problems the recording has (listed in `skipped` or only counted).
    pub fn problem_count(&self) -> usize {
        if self.problems_not_kept > 0 {
            self.skipped.len() - 1 + self.problems_not_kept
        } else {
            self.skipped.len()
        }
    }

    /// For one line: the count, then the first few problems and how many more.
    pub fn problems_line(&self) -> String {
        let n = self.problem_count();
        let mut out = format!("{n} problem{}", if n == 1 { "" } else { "s" });
        let first = problems_summary(&self.skipped[..self.skipped.len().min(3)]);
        out.push_str(&first);
        if n > 3 {
            out.push_str(&format!("; and {} more", n - 3));
        }
        out
    }

    fn problem(&mut self, what: String) {
        if self.skipped.len() < MAX_PROBLEMS {
            self.skipped.push(what);
        } else {
            self.problems_not_kept += 1;
        }
    }
}

/// `read_recording` on bytes already in memory.
pub fn parse_recording(bytes: &[u8]) -> Recording {
    read_from(BufReader::new(bytes))
}

fn read_from<R: BufRead>(mut input: R) -> Recording {
    let mut rec = Recording::default();
    let compressed = input.fill_buf().is_ok_and(|b| b.starts_with(&ZSTD_MAGIC));
    if compressed {
        match zstd::stream::read::Decoder::with_buffer(input) {
            Ok(d) => read_lines(BufReader::new(d), &mut rec, true),
            Err(e) => rec.skipped.push(format!("cannot decompress: {e}")),
        }
    } else {
        read_lines(input, &mut rec, false);
    }
    if rec.problems_not_kept > 0 {
        let n = rec.problems_not_kept;
        rec.skipped.push(format!("{n} more problems not listed"));
    }
    if rec.header.is_none() && !rec.samples.is_empty() {
        rec.skipped
            .push("no header line: a hand-written recording, replayed as it is".to_string());
    }
    rec.samples.sort_by(|a, b| a.1.t.total_cmp(&b.1.t));
    for needed in [Source::OnstatU, Source::OnstatX] {
        if !rec.samples.iter().any(|(s, _)| *s == needed) {
            rec.skipped.push(format!(
                "no {} samples: that part stays empty",
                needed.label()
            ));
        }
    }
    rec
}

fn read_lines<R: BufRead>(mut input: R, rec: &mut Recording, compressed: bool) {
    let mut buf = Vec::new();
    let mut no = 0;
    loop {
        buf.clear();
        match input.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                // A recording cut off mid-write: keep every complete block before the cut.
                rec.problem(if compressed {
                    format!("compressed stream ends early ({e}): replaying what came before")
                } else {
                    format!("read error ({e}): replaying what came before")
                });
                break;
            }
        }
        no += 1;
        let complete = buf.last() == Some(&b'\n');
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let value: serde_json::Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                rec.problem(if complete {
                    format!("line {no}: not JSON ({e})")
                } else {
                    format!("line {no}: cut off (the recording ended mid-line)")
                });
                continue;
            }
        };
        if value.get("ifxtop_recording").is_some() {
            match serde_json::from_value::<RecordingHeader>(value) {
                Ok(mut h) => {
                    if let Some(kb) = h.base_page_kb.filter(|kb| !PAGE_SIZES_KB.contains(kb)) {
                        // 0 was taken and resolved hot pages to the wrong table.
                        rec.problem(format!(
                            "line {no}: header base_page_kb {kb} is no base page size (1, 2, 4, 8 or 16): ignored"
                        ));
                        h.base_page_kb = None;
                    }
                    if h.ifxtop_recording != FORMAT_VERSION {
                        rec.problem(format!(
                            "format version {} (this ifxtop writes {FORMAT_VERSION}): replaying what it understands",
                            h.ifxtop_recording
                        ));
                    }
                    rec.header = Some(h);
                }
                Err(e) => rec.problem(format!("line {no}: bad header ({e})")),
            }
            continue;
        }
        let sample: RawSample = match serde_json::from_value(value) {
            Ok(s) => s,
            Err(e) => {
                rec.problem(format!("line {no}: not a sample ({e})"));
                continue;
            }
        };
        if !sample.t.is_finite() || !(0.0..=MAX_T).contains(&sample.t) {
            // `{:e}` for the absurd ones: 1e300 printed in full is 300 digits.
            let t = if sample.t.abs() < 1e9 {
                format!("{}", sample.t)
            } else {
                format!("{:e}", sample.t)
            };
            rec.problem(format!(
                "line {no}: bad time {t} (not 0 to {MAX_T:.0} s into the recording)"
            ));
            continue;
        }
        match Source::from_label(&sample.source) {
            Some(src) => rec.samples.push((src, StoredSample::new(sample))),
            None => rec.problem(format!("line {no}: unknown source '{}'", sample.source)),
        }
    }
}

/// The first few problems of a damaged recording and how many there were, for one line:
/// `: line 1: not JSON (...); line 2: ...; and 3 more`.
pub fn problems_summary(skipped: &[String]) -> String {
    const SHOWN: usize = 3;
    if skipped.is_empty() {
        return String::new();
    }
    let first: Vec<String> = skipped
        .iter()
        .take(SHOWN)
        .map(|s| crate::format::cut(s, 120))
        .collect();
    let mut out = format!(": {}", first.join("; "));
    if skipped.len() > SHOWN {
        out.push_str(&format!("; and {} more", skipped.len() - SHOWN));
    }
    out
}

/// Where `--record` writes when given a directory instead of a file.
pub(crate) fn default_file_name(dir: &Path) -> PathBuf {
    dir.join(format!(
        "{}.jsonl.zst",
        crate::format::export_stem(time::OffsetDateTime::now_utc())
    ))
}
