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
const ZSTD_LEVEL: i32 = 3;
/// The track's lines a live recording lets wait for the recorder: a minute of samples.
pub(crate) const TRACK_QUEUE: usize = 64;

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
        // A start far outside any real recording (a damaged or hostile header: year 9999) is
        // no start: a session time added to it would overflow the calendar.
        if !(1970..=9000).contains(&t.year()) {
            return None;
        }
        t.checked_to_offset(offset)
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
    /// The frame being written (none only while one is being ended).
    Zstd(Option<zstd::stream::write::Encoder<'static, Counting<std::fs::File>>>),
}

impl Sink {
    fn writer(&mut self) -> std::io::Result<&mut dyn Write> {
        match self {
            Sink::Plain(w) => Ok(w),
            Sink::Zstd(Some(w)) => Ok(w),
            Sink::Zstd(None) => Err(std::io::Error::other("a zstd frame failed to start")),
        }
    }

    /// Makes everything written so far readable from the file (a zstd flush ends a block).
    fn flush(&mut self) -> std::io::Result<()> {
        self.writer()?.flush()
    }

    /// Ends the zstd frame being written and writes the track frame of `track` after it
    /// (`collect/track.rs`); a new frame starts when `more` is set.
    fn end_frame(&mut self, track: &[String], more: bool) -> std::io::Result<()> {
        let Sink::Zstd(enc) = self else {
            return Ok(());
        };
        let Some(e) = enc.take() else {
            return Err(std::io::Error::other("a zstd frame failed to start"));
        };
        let mut file = e.finish()?;
        file.write_all(&crate::collect::track::frame(track)?)?;
        if more {
            *enc = Some(zstd::stream::write::Encoder::new(file, ZSTD_LEVEL)?);
        } else {
            file.flush()?;
        }
        Ok(())
    }

    fn finish(self) -> std::io::Result<()> {
        match self {
            Sink::Plain(mut w) => w.flush(),
            Sink::Zstd(Some(w)) => w.finish().and_then(|mut c| c.flush()),
            Sink::Zstd(None) => Ok(()),
        }
    }
}

/// The track's lines waiting for the end of the zstd frame they follow.
struct Track {
    rx: Receiver<String>,
    pending: Vec<String>,
    /// The session time the frame being written ends at.
    frame_end: f64,
}

impl Track {
    fn take(&mut self) -> &[String] {
        self.pending.extend(self.rx.try_iter());
        &self.pending
    }
}

/// Whether a recording at `path` is zstd, and so keeps a database-time track.
pub fn keeps_track(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}

/// A recording being written on its own thread.
pub struct Recorder {
    thread: std::thread::JoinHandle<Result<String, Error>>,
    status: Arc<Mutex<Option<String>>>,
    written: Arc<std::sync::atomic::AtomicU64>,
    /// Where the database-time track's lines go (a zstd recording asked to keep one).
    track: Option<std::sync::mpsc::SyncSender<String>>,
}

impl Recorder {
    /// Creates the file (so a bad path fails before the screen opens), writes the header, and
    /// starts writing what arrives on `rx` until every sender is gone. With `track` (a queue
    /// length) and a zstd file, the recording also keeps the database-time track sent to
    /// [`Recorder::track`] (`collect/track.rs`).
    pub(crate) fn start(
        path: &Path,
        max_mb: u64,
        header: &RecordingHeader,
        rx: Receiver<RawSample>,
        track: Option<usize>,
    ) -> Result<Recorder, Error> {
        // A new file, 0600 (a recording holds SQL text): an existing one (an earlier
        // incident's recording) is never truncated, a planted link never followed.
        let file = crate::files::create_new_private(path).map_err(|source| Error::File {
            path: path.display().to_string(),
            source: if source.kind() == std::io::ErrorKind::AlreadyExists {
                std::io::Error::new(
                    source.kind(),
                    "already exists (an earlier recording is never overwritten: give a new name)",
                )
            } else {
                source
            },
        })?;
        let written = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counting = Counting {
            inner: file,
            written: written.clone(),
        };
        let zst = keeps_track(path);
        let mut sink = if zst {
            Sink::Zstd(Some(zstd::stream::write::Encoder::new(
                counting, ZSTD_LEVEL,
            )?))
        } else {
            Sink::Plain(std::io::BufWriter::new(counting))
        };
        let header = serde_json::to_string(header).map_err(|e| Error::Other(e.to_string()))?;
        writeln!(sink.writer()?, "{header}")?;
        sink.flush()?;
        let (track_tx, track) = if let Some(queue) = track.filter(|_| zst) {
            let (tx, rx) = std::sync::mpsc::sync_channel(queue);
            let t = Track {
                rx,
                pending: Vec::new(),
                frame_end: crate::collect::track::FRAME_S,
            };
            (Some(tx), Some(t))
        } else {
            (None, None)
        };
        let status = Arc::new(Mutex::new(None));
        let st = status.clone();
        let cap = max_mb.saturating_mul(1024 * 1024);
        let path_text = path.display().to_string();
        let counter = written.clone();
        let thread =
            std::thread::spawn(move || write_loop(sink, rx, track, &written, cap, &st, &path_text));
        Ok(Recorder {
            thread,
            status,
            written: counter,
            track: track_tx,
        })
    }

    /// Where the database-time track's lines go, when this recording keeps one.
    pub fn track(&self) -> Option<std::sync::mpsc::SyncSender<String>> {
        self.track.clone()
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
    mut track: Option<Track>,
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
                // A sample past the frame's stretch ends the frame, its track after it.
                if let Some(tr) = track.as_mut().filter(|tr| sample.t >= tr.frame_end) {
                    let ended = sink.end_frame(tr.take(), true);
                    tr.pending.clear();
                    tr.frame_end = ((sample.t / crate::collect::track::FRAME_S).floor() + 1.0)
                        * crate::collect::track::FRAME_S;
                    if let Err(e) = ended {
                        stopped = Some(format!("recording stopped: {path}: {e}"));
                    }
                }
                if stopped.is_none() {
                    match sink.writer().and_then(|w| writeln!(w, "{line}")) {
                        Ok(()) => samples += 1,
                        Err(e) => stopped = Some(format!("recording stopped: {path}: {e}")),
                    }
                }
            }
            Ok(_) => {} // stopped: drain without writing
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if let Some(tr) = &mut track {
            tr.take(); // the queue never fills
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
    if let Some(tr) = &mut track {
        if stopped.is_none() {
            sink.end_frame(tr.take(), false)?;
        }
    }
    sink.finish()?;
    Ok(match stopped {
        Some(s) => s,
        None => format!("recorded {samples} outputs to {path}"),
    })
}

/// Where a recording's lines come from, read again each time a replay starts over: a replay
/// keeps none of the outputs in memory (an hour of a 5,000-session instance is gigabytes of
/// text; even compressed one by one it held about twice the file).
#[derive(Clone)]
enum Input {
    File(PathBuf),
    Bytes(Arc<[u8]>),
    /// Lines another module opens again at each start (the ring's segments, joined).
    Opened(Opener),
}

/// Opens a recording's lines from the start, each time it is asked (`collect/ring.rs`).
pub(crate) type Opener = Arc<dyn Fn() -> Result<Lines, String> + Send + Sync>;

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Input::File(p) => f.debug_tuple("File").field(p).finish(),
            Input::Bytes(b) => f.debug_tuple("Bytes").field(&b.len()).finish(),
            Input::Opened(_) => f.write_str("Opened"),
        }
    }
}

impl Default for Input {
    fn default() -> Self {
        Input::Bytes(Arc::from(&[][..]))
    }
}

/// A recording's lines as they are in the file (or as another module gives them).
pub(crate) type Lines = Box<dyn BufRead + Send>;

/// A recording's lines read one at a time, each output decoded once: a ring's outputs kept or
/// written as edits of their source's last one (`edits.rs`) come out as the samples they stand
/// for, made whole against the bases this reader keeps; every other line comes out as it is.
pub(crate) struct Reader {
    lines: Lines,
    /// `None` for lines that come already made whole (another module's).
    bases: Option<crate::collect::edits::Bases>,
}

impl Reader {
    /// The next line into `buf` (its newline kept, when it has one) or the sample it stands
    /// for, at most `cap` bytes of it as written out whole: a longer line is read to its end
    /// but not kept. Without `keep_output` a sample comes without its outputs.
    fn next(&mut self, buf: &mut Vec<u8>, cap: u64, keep_output: bool) -> LineRead {
        let read = read_line(&mut self.lines, buf, cap);
        let Some(bases) = self.bases.as_mut() else {
            return read;
        };
        if !matches!(read, LineRead::Line) || buf.last() != Some(&b'\n') {
            return read;
        }
        match bases.read(buf, cap, keep_output) {
            None => read,
            Some(Ok(sample)) => LineRead::Sample(sample),
            Some(Err(len)) => LineRead::Long(len),
        }
    }
}

impl Input {
    /// The recording's lines from the start, unpacked when the content is zstd (and whether it
    /// was).
    fn lines(&self) -> Result<(Reader, bool), String> {
        let (lines, compressed) = match self {
            Input::Opened(open) => {
                return open().map(|lines| (Reader { lines, bases: None }, false))
            }
            _ => self.raw_lines()?,
        };
        // A ring's outputs written as edits of their source's last one are made whole again
        // (`edits.rs`); any other recording's lines are read as they are.
        let bases = Some(crate::collect::edits::Bases::default());
        Ok((Reader { lines, bases }, compressed))
    }

    /// The lines of a file or bytes as they are, unpacked when the content is zstd (and
    /// whether it was).
    fn raw_lines(&self) -> Result<(Lines, bool), String> {
        let mut raw: Lines = match self {
            // Checked again at each open: the file may have been replaced since.
            Input::File(path) => Box::new(BufReader::new(
                crate::files::open_regular(path).map_err(|e| format!("cannot open: {e}"))?,
            )),
            Input::Bytes(b) => Box::new(std::io::Cursor::new(b.clone())),
            Input::Opened(open) => return open().map(|l| (l, false)),
        };
        if raw.fill_buf().is_ok_and(|b| b.starts_with(&ZSTD_MAGIC)) {
            let mut d = zstd::stream::read::Decoder::with_buffer(raw)
                .map_err(|e| format!("cannot decompress: {e}"))?;
            d.window_log_max(crate::collect::track::WINDOW_LOG_MAX)
                .map_err(|e| format!("cannot decompress: {e}"))?;
            Ok((Box::new(BufReader::new(d)), true))
        } else {
            Ok((raw, false))
        }
    }
}

/// A sample a replay can play: when, of what, and on which line of the recording.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Entry {
    t: f64,
    source: Source,
    line: u64,
}

impl Entry {
    fn at(&self) -> Duration {
        Duration::try_from_secs_f64(self.t).unwrap_or_default()
    }
}

/// A recording read back: what can be replayed, in time order, and what was not. It holds where
/// each sample is, not the outputs: [`Recording::samples`] reads them again from the file.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    pub header: Option<RecordingHeader>,
    /// What was skipped and why, one line each, for the screen (the first `MAX_PROBLEMS`; the
    /// last line counts the rest).
    pub skipped: Vec<String>,
    problems_not_kept: usize,
    input: Input,
    /// The samples to play, in time order (lines of the same time in the file's order).
    entries: Vec<Entry>,
    /// The last line a sample was read from: lines added after it (a recording still being
    /// written) are not part of this replay.
    last_line: u64,
    /// For each `onstat -u` sample, its time and the threads waiting on anything but a
    /// condition: the replay timeline's spikes.
    pub(crate) waiting: Vec<(f64, u64)>,
}

impl Recording {
    /// When the recording started (its header's `started`), in the server's offset.
    pub fn started(&self) -> Option<time::OffsetDateTime> {
        self.header.as_ref()?.started_at()
    }

    pub fn length(&self) -> Duration {
        self.entries.last().map(Entry::at).unwrap_or_default()
    }

    /// How many samples can be replayed.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The source of each sample, in time order.
    pub fn sources(&self) -> impl Iterator<Item = Source> + '_ {
        self.entries.iter().map(|e| e.source)
    }

    /// When each sample was collected, in time order.
    pub(crate) fn times(&self) -> impl Iterator<Item = Duration> + '_ {
        self.entries.iter().map(Entry::at)
    }

    /// When sample `i` (in time order) was collected.
    pub(crate) fn time_of(&self, i: usize) -> Option<Duration> {
        self.entries.get(i).map(Entry::at)
    }

    /// Bytes the recording holds in memory beyond its header and problems: what it needs to
    /// find each sample again, never the outputs.
    pub fn kept_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Entry>()
            + self.waiting.capacity() * std::mem::size_of::<(f64, u64)>()
    }

    /// A recording indexed by whoever wrote it, as it wrote it (a viewer's received history,
    /// `collect/received.rs`): `open` gives its lines from the start, `index` each sample's time,
    /// source and line (counted from 1 over what `open` gives), `lines` how many lines there are.
    /// Nothing is read now: the samples are read from `open` as they are played.
    pub(crate) fn indexed(
        header: Option<RecordingHeader>,
        open: Opener,
        index: impl IntoIterator<Item = (f64, Source, u64)>,
        lines: u64,
    ) -> Recording {
        let mut entries: Vec<Entry> = index
            .into_iter()
            .map(|(t, source, line)| Entry { t, source, line })
            .collect();
        // Stable: samples of one time stay in the order they were written.
        entries.sort_by(|a, b| a.t.total_cmp(&b.t));
        Recording {
            header,
            input: Input::Opened(open),
            entries,
            last_line: lines,
            ..Recording::default()
        }
    }

    /// Every sample, in time order, read again from the recording.
    pub fn samples(&self) -> Samples<'_> {
        Samples {
            rec: self,
            cursor: Cursor::default(),
        }
    }
}

/// The samples of a recording in time order, read from it again.
pub struct Samples<'a> {
    rec: &'a Recording,
    cursor: Cursor,
}

impl Samples<'_> {
    /// Samples read ahead of their turn (written after a later one) and held until it comes.
    pub fn read_ahead(&self) -> usize {
        self.cursor.pending()
    }
}

impl Iterator for Samples<'_> {
    type Item = (Source, RawSample);

    fn next(&mut self) -> Option<Self::Item> {
        self.cursor.next(self.rec)
    }
}

/// A position in a recording's samples, for reading them in time order again: the file is read
/// from the start, and a sample written before one of an earlier time (a slow command finished
/// late) waits in `pending` until its turn. In a recording ifxtop wrote, that is a few samples.
#[derive(Default)]
pub(crate) struct Cursor {
    lines: Option<Reader>,
    /// Index (in time order) of the next sample to give.
    pub(crate) index: usize,
    /// Lines read so far.
    no: u64,
    pending: rustc_hash::FxHashMap<u64, RawSample>,
    /// Why the samples ended before the last (the file changed or went away since it was read).
    pub(crate) broken: Option<String>,
    buf: Vec<u8>,
    /// The bytes of the outputs in `pending`.
    pending_bytes: u64,
    labels: Labels,
}

/// The bytes of text a sample holds.
fn held(raw: &RawSample) -> u64 {
    (raw.stdout.len() + raw.stderr.len() + raw.argv.iter().map(String::len).sum::<usize>()) as u64
}

impl Cursor {
    /// The next sample in time order, or `None` at the end (or when the file no longer holds
    /// what it held when read: then `broken` says why).
    pub(crate) fn next(&mut self, rec: &Recording) -> Option<(Source, RawSample)> {
        if self.broken.is_some() {
            return None;
        }
        let entry = *rec.entries.get(self.index)?;
        if self.lines.is_none() {
            match rec.input.lines() {
                Ok((l, _)) => self.lines = Some(l),
                Err(e) => return self.fail(e),
            }
        }
        loop {
            if let Some(raw) = self.pending.remove(&entry.line) {
                self.pending_bytes = self.pending_bytes.saturating_sub(held(&raw));
                self.index += 1;
                return Some((entry.source, raw));
            }
            let lines = self.lines.as_mut()?;
            if self.no >= rec.last_line {
                return self.fail(format!("line {} is no longer in the recording", entry.line));
            }
            self.buf.clear();
            let line = match lines.next(&mut self.buf, line_cap(), true) {
                LineRead::End | LineRead::Failed(_) => {
                    return self.fail(format!("the recording ends before line {}", entry.line))
                }
                LineRead::Long(_) => {
                    // Skipped when the recording was read too (no sample is there).
                    self.no += 1;
                    continue;
                }
                LineRead::Line => None,
                LineRead::Sample(raw) => Some(raw),
            };
            self.no += 1;
            if let Line::Sample(source, raw) =
                line_of(self.no, line, &self.buf, true, &mut self.labels)
            {
                // The sample this line was when the recording was read, or the file changed.
                let expected = rec
                    .entries
                    .get(self.index..)
                    .and_then(|rest| rest.iter().find(|e| e.line == self.no));
                match expected {
                    Some(e) if e.source == source && e.t == raw.t => {
                        // Read ahead of its turn: held, within the outputs' budget (a file
                        // written in reverse time order would hold every output at once).
                        self.pending_bytes += held(&raw);
                        if self.pending_bytes > line_cap() {
                            return self.fail(format!(
                                "samples out of time order by more than {} (up to line {})",
                                crate::files::cap_text(line_cap()),
                                self.no
                            ));
                        }
                        self.pending.insert(self.no, raw);
                    }
                    Some(_) => {
                        return self.fail(format!("line {} changed since it was read", self.no))
                    }
                    None => {}
                }
            }
        }
    }

    fn fail(&mut self, why: String) -> Option<(Source, RawSample)> {
        self.lines = None;
        self.pending.clear();
        self.pending_bytes = 0;
        self.broken = Some(format!(
            "the recording changed on disk: {why}; replay stops here"
        ));
        None
    }

    /// Samples read ahead of their turn, waiting in memory.
    pub(crate) fn pending(&self) -> usize {
        self.pending.len()
    }
}

/// A recording with something to replay: an empty or garbage file is a usage error naming its
/// first problems and their count, not every line.
pub fn read_replayable(path: &Path) -> Result<Recording, Error> {
    replayable(path, read_recording(path)?)
}

/// `read_replayable` for a walk with no screen (`ifxtop ash`, `snapshot --replay`): no timeline
/// of waits, so no output is parsed (nor kept) while the recording is indexed; each is read
/// and parsed once, when played.
pub fn read_replayable_for_walk(path: &Path) -> Result<Recording, Error> {
    replayable(path, read_with(path, false)?)
}

fn replayable(path: &Path, rec: Recording) -> Result<Recording, Error> {
    if rec.is_empty() {
        return Err(Error::Usage(format!(
            "{}: nothing to replay: {}",
            path.display(),
            rec.problems_line()
        )));
    }
    Ok(rec)
}

/// Reads a recording (plain or zstd, by content), a line at a time: memory holds one line and
/// where each sample is, never the outputs. Damage is reported in `skipped`, never fatal: only
/// a file that cannot be opened is an error.
pub fn read_recording(path: &Path) -> Result<Recording, Error> {
    read_with(path, true)
}

/// `read_recording`, with the replay timeline's waits counted (every `onstat -u` parsed) or
/// not.
/// The header of the recording at `path`, from its first line alone (none when the first line
/// is not a header).
pub fn read_header(path: &Path) -> Result<Option<RecordingHeader>, Error> {
    checked_file(path)?;
    let (lines, _) = Input::File(path.to_path_buf())
        .raw_lines()
        .map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
    let mut first = String::new();
    // A header is a few hundred bytes; a file of one endless line is not read to its end.
    let _ = std::io::Read::take(lines, 64 * 1024).read_line(&mut first);
    Ok(serde_json::from_str(&first).ok())
}

/// A regular file, or an error that says what `path` is instead: a FIFO, a device or a
/// directory is refused at once (`files::open_regular` opens without blocking).
pub(crate) fn checked_file(path: &Path) -> Result<(), Error> {
    match crate::files::open_regular(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => Err(Error::Usage(
            crate::files::user_file_error("--replay", path, &e),
        )),
        Err(source) => Err(Error::File {
            path: path.display().to_string(),
            source,
        }),
    }
}

fn read_with(path: &Path, timeline: bool) -> Result<Recording, Error> {
    checked_file(path)?;
    Ok(read_from(Input::File(path.to_path_buf()), timeline))
}

/// The most samples a recording's index holds: the index (a few bytes a sample, with the
/// timeline's count of waiting threads) within the outputs' memory budget. 5.6 million at 128
/// MB: a 5,000-session instance recorded for three days; a bomb of tiny lines no more.
fn max_entries() -> usize {
    let per = std::mem::size_of::<Entry>() + std::mem::size_of::<(f64, u64)>();
    usize::try_from(line_cap() / per as u64).unwrap_or(usize::MAX)
}

/// Problems kept word for word; past them only counted (a garbage file of a gigabyte has
/// millions of bad lines).
const MAX_PROBLEMS: usize = 100;

/// The latest time a sample may carry: about ten years of recording. Beyond it (`t: 1e300`) the
/// time cannot be a position in a recording, and sorted last it hid every other sample. The
/// latest moment a command line may name too (`format::When`).
pub const MAX_T: f64 = crate::format::MAX_MOMENT.as_secs() as f64;

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

/// The lines of the recording file at `path` from its start, unpacked when it is zstd, with
/// its edits written out whole (`edits::Expand`).
pub(crate) fn file_lines(path: &Path) -> Result<Lines, String> {
    let (raw, _) = Input::File(path.to_path_buf()).raw_lines()?;
    Ok(Box::new(crate::collect::edits::Expand::new(
        raw,
        line_cap(),
    )))
}

/// `read_recording` on lines `open` gives again at each start (the ring's segments joined),
/// with the replay timeline's waits counted or not.
pub(crate) fn read_opened(open: Opener, timeline: bool) -> Recording {
    read_from(Input::Opened(open), timeline)
}

/// `read_recording` on bytes already in memory.
pub fn parse_recording(bytes: &[u8]) -> Recording {
    read_from(Input::Bytes(Arc::from(bytes)), true)
}

fn read_from(input: Input, timeline: bool) -> Recording {
    let mut rec = Recording {
        input,
        ..Recording::default()
    };
    match rec.input.lines() {
        Ok((lines, compressed)) => read_lines(lines, &mut rec, compressed, timeline),
        Err(e) => rec.skipped.push(e),
    }
    if rec.problems_not_kept > 0 {
        let n = rec.problems_not_kept;
        rec.skipped.push(format!("{n} more problems not listed"));
    }
    if rec.header.is_none() && !rec.entries.is_empty() {
        rec.skipped
            .push("no header line: a hand-written recording, replayed as it is".to_string());
    }
    // Stable: samples of one time stay in the file's order.
    rec.entries.sort_by(|a, b| a.t.total_cmp(&b.t));
    rec.entries.shrink_to_fit();
    rec.waiting.sort_by(|a, b| a.0.total_cmp(&b.0));
    rec.waiting.shrink_to_fit();
    for needed in [Source::OnstatU, Source::OnstatX] {
        if !rec.entries.iter().any(|e| e.source == needed) {
            rec.skipped.push(format!(
                "no {} samples: that part stays empty",
                needed.label()
            ));
        }
    }
    rec
}

/// One line read, or why not.
enum LineRead {
    End,
    Line,
    /// The sample a line stands for, decoded (`Reader`).
    Sample(RawSample),
    /// A line longer than the cap, of this many bytes: read past, none of it kept.
    Long(u64),
    Failed(std::io::Error),
}

/// The longest line of a recording kept: one output with its JSON around it can be no longer
/// than the memory budget of the outputs being read (`source/budget.rs`, 128 MB unless a larger
/// output cap raised it), since no output ifxtop reads is. A longer line (damage, or a
/// decompression bomb: 123 kB of zstd unpack to a 4 GB line) is read past and never held.
pub(crate) fn line_cap() -> u64 {
    crate::source::budget::limit()
}

/// The next line into `buf` (its newline kept, when it has one), at most `cap` bytes of it: a
/// longer line is read to its end but not kept (`buf` is left empty and its memory given back).
fn read_line(input: &mut Lines, buf: &mut Vec<u8>, cap: u64) -> LineRead {
    let mut total = 0u64;
    loop {
        let chunk = match input.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return LineRead::Failed(e),
        };
        if chunk.is_empty() {
            break;
        }
        let (n, ends) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        total += n as u64;
        if total <= cap {
            buf.extend_from_slice(&chunk[..n]);
        } else if !buf.is_empty() {
            *buf = Vec::new();
        }
        input.consume(n);
        if ends {
            break;
        }
    }
    match total {
        0 => LineRead::End,
        n if n > cap => LineRead::Long(n),
        _ => LineRead::Line,
    }
}

/// The problem of a line past the cap.
fn long_line(no: u64, len: u64, cap: u64) -> String {
    format!(
        "line {no}: {} long, past the {} memory budget of an output: skipped (damaged, or a \
         decompression bomb)",
        crate::format::human_bytes(len),
        crate::files::cap_text(cap)
    )
}

/// What one line of a recording is.
enum Line {
    Blank,
    Header(Box<RecordingHeader>, Vec<String>),
    Sample(Source, RawSample),
    Problem(String),
}

/// A string field read and dropped: checked to be a string as a sample's is, not kept.
#[derive(Default)]
struct Unkept;

impl<'de> serde::Deserialize<'de> for Unkept {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Unkept;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Unkept, E> {
                Ok(Unkept)
            }
        }
        d.deserialize_str(V)
    }
}

/// A sample line without its outputs: what indexing a recording needs when nothing reads the
/// outputs then (no timeline). The same type as a sample with its texts dropped, so a line is
/// a sample to both or to neither.
type SampleHead = RawSample<Unkept>;

/// Reads line `no` of a recording: the same answer each time the file is read. Without
/// `keep_output`, a sample's outputs are checked and dropped (its `stdout` and `stderr` empty).
fn classify(no: u64, buf: &[u8], keep_output: bool, labels: &mut Labels) -> Line {
    let complete = buf.last() == Some(&b'\n');
    // What ifxtop wrote is UTF-8 (serde_json's output): checked by the standard library's
    // validation, several times faster than the lossy one's (a replay of 5,000 sessions spent
    // 5 % of its time in the lossy check of megabyte lines); a damaged line is read lossily.
    let line = match std::str::from_utf8(buf) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(buf),
    };
    let line = line.trim();
    if line.is_empty() {
        return Line::Blank;
    }
    // A header: its key at the top level (a sample's output may hold the words too), read
    // without building the line's tree (a line of a hundred megabytes of `[0,0,...]` built
    // into a `Value` took twenty times its size).
    if memchr::memmem::find(line.as_bytes(), b"\"ifxtop_recording\"").is_some()
        && serde_json::from_str::<HeaderProbe>(line).is_ok_and(|p| p.ifxtop_recording.is_some())
    {
        return match serde_json::from_str::<RecordingHeader>(line) {
            Ok(h) => header_line(no, h),
            Err(e) => Line::Problem(format!("line {no}: bad header ({e})")),
        };
    }
    // A sample, read straight into its type (through a `Value` first, every output was copied
    // twice: a replay of a 5,000-session recording spent a sixth of its time copying).
    let sample = if keep_output {
        serde_json::from_str::<RawSample>(line)
    } else {
        serde_json::from_str::<SampleHead>(line).map(|h| RawSample {
            t: h.t,
            source: h.source,
            argv: Vec::new(),
            exit: h.exit,
            stdout: String::new(),
            stderr: String::new(),
        })
    };
    match sample {
        Ok(sample) => sample_line(no, sample, labels),
        Err(_) if crate::collect::edits::is_edit(buf) => Line::Problem(format!(
            "line {no}: an output written as its changes against an earlier one that was not \
             read back: skipped"
        )),
        Err(e) if e.classify() == serde_json::error::Category::Data => {
            Line::Problem(format!("line {no}: not a sample ({e})"))
        }
        Err(e) => Line::Problem(if complete {
            format!("line {no}: not JSON ({e})")
        } else {
            format!("line {no}: cut off (the recording ended mid-line)")
        }),
    }
}

/// Whether a line is a header: its top-level key, every other field passed over unbuilt.
#[derive(Deserialize)]
struct HeaderProbe {
    #[serde(default)]
    ifxtop_recording: Option<serde::de::IgnoredAny>,
}

/// A header line checked: its page size and format version.
fn header_line(no: u64, mut h: RecordingHeader) -> Line {
    let mut problems = Vec::new();
    if let Some(kb) = h.base_page_kb.filter(|kb| !PAGE_SIZES_KB.contains(kb)) {
        // 0 was taken and resolved hot pages to the wrong table.
        problems.push(format!(
            "line {no}: header base_page_kb {kb} is no base page size (1, 2, 4, 8 or 16): ignored"
        ));
        h.base_page_kb = None;
    }
    if h.ifxtop_recording != FORMAT_VERSION {
        problems.push(format!(
            "format version {} (this ifxtop writes {FORMAT_VERSION}): replaying what it understands",
            h.ifxtop_recording
        ));
    }
    Line::Header(Box::new(h), problems)
}

/// What line `no` is: the sample `decoded` from it when the reader decoded it (`Reader`),
/// checked as any sample is; else what its text `buf` reads as.
fn line_of(
    no: u64,
    decoded: Option<RawSample>,
    buf: &[u8],
    keep_output: bool,
    labels: &mut Labels,
) -> Line {
    match decoded {
        Some(raw) => sample_line(no, raw, labels),
        None => classify(no, buf, keep_output, labels),
    }
}

/// A sample line checked: its time in range, its source known.
fn sample_line(no: u64, sample: RawSample, labels: &mut Labels) -> Line {
    if !sample.t.is_finite() || !(0.0..=MAX_T).contains(&sample.t) {
        // `{:e}` for the absurd ones: 1e300 printed in full is 300 digits.
        let t = if sample.t.abs() < 1e9 {
            format!("{}", sample.t)
        } else {
            format!("{:e}", sample.t)
        };
        return Line::Problem(format!(
            "line {no}: bad time {t} (not 0 to {MAX_T:.0} s into the recording)"
        ));
    }
    match labels.source(&sample.source) {
        Some(src) => Line::Sample(src, sample),
        None => Line::Problem(format!("line {no}: unknown source '{}'", sample.source)),
    }
}

/// The source of each label read, so that a label is looked up once a reading, not once a
/// sample: `Source::from_label` tries the labels of every source (a replay of 5,000 sessions
/// spent a twentieth of its time there).
#[derive(Default)]
struct Labels(rustc_hash::FxHashMap<String, Option<Source>>);

/// Labels remembered at most: a recording has a few hundred (one per process for the NUMA
/// maps); a damaged one with a label per line starts over past this.
const LABELS_MAX: usize = 4096;

impl Labels {
    fn source(&mut self, label: &str) -> Option<Source> {
        if let Some(&known) = self.0.get(label) {
            return known;
        }
        let source = Source::from_label(label);
        if self.0.len() >= LABELS_MAX {
            self.0.clear();
        }
        self.0.insert(label.to_string(), source);
        source
    }
}

/// Threads waiting on anything but a condition (B C G L S T X) in one `onstat -u` output: what
/// the replay timeline draws. Condition waits are left out: idle sessions would drown the rest.
fn waiting_threads(raw: RawSample) -> Option<u64> {
    use crate::parsers::onstat_u::{OnstatU, WaitReason};
    let parsed = Source::OnstatU
        .parse(crate::source::Output {
            exit: raw.exit,
            stdout: raw.stdout,
            stderr: raw.stderr,
        })
        .ok()?;
    let u = parsed.get::<OnstatU>()?;
    Some(
        u.threads
            .iter()
            .filter(|t| t.wait_reason.is_some_and(|r| r != WaitReason::Condition))
            .count() as u64,
    )
}

fn read_lines(mut input: Reader, rec: &mut Recording, compressed: bool, timeline: bool) {
    let mut buf = Vec::new();
    let mut no = 0;
    let cap = line_cap();
    let max_entries = max_entries();
    let mut labels = Labels::default();
    loop {
        buf.clear();
        let line = match input.next(&mut buf, cap, timeline) {
            LineRead::End => break,
            LineRead::Line => None,
            LineRead::Sample(raw) => Some(raw),
            LineRead::Long(len) => {
                no += 1;
                rec.problem(long_line(no, len, cap));
                continue;
            }
            LineRead::Failed(e) => {
                // A recording cut off mid-write: keep every complete block before the cut.
                rec.problem(if compressed {
                    format!("compressed stream ends early ({e}): replaying what came before")
                } else {
                    format!("read error ({e}): replaying what came before")
                });
                break;
            }
        };
        no += 1;
        match line_of(no, line, &buf, timeline, &mut labels) {
            Line::Blank => {}
            Line::Problem(p) => rec.problem(p),
            Line::Header(h, problems) => {
                for p in problems {
                    rec.problem(p);
                }
                rec.header = Some(*h);
            }
            Line::Sample(source, raw) => {
                if rec.entries.len() >= max_entries {
                    rec.problem(format!(
                        "more than {} samples (what the index of a replay may hold in the \
                         memory budget): replaying the first {}, up to line {}",
                        crate::format::thousands(max_entries as u64),
                        crate::format::thousands(max_entries as u64),
                        rec.last_line
                    ));
                    break;
                }
                let t = raw.t;
                rec.entries.push(Entry {
                    t,
                    source,
                    line: no,
                });
                rec.last_line = no;
                if timeline && source == Source::OnstatU && raw.exit.is_some() {
                    // The output is not kept: parsed here for the timeline, then dropped.
                    if let Some(n) = waiting_threads(raw) {
                        rec.waiting.push((t, n));
                    }
                }
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Indexed for a walk with no screen, a recording has the same samples, the same problems
    /// and no timeline.
    #[test]
    fn a_walk_indexes_the_same_samples_without_parsing_them() {
        let u = include_str!("../../tests/fixtures/onstat-u/ibm-kc-12.10-adref-0608.txt");
        let sample = |t: u32, stdout: serde_json::Value| {
            serde_json::json!({"t": t, "source": "onstat -u", "exit": 0, "stdout": stdout})
                .to_string()
        };
        let lines = [
            format!("{{\"ifxtop_recording\":{FORMAT_VERSION}}}"),
            sample(1, u.into()),
            sample(2, u.into()),
            // Not a sample to either reader: an output that is no string, or null (the
            // outputs-dropping reader once took a null).
            sample(3, 42.into()),
            sample(4, u.into()),
            sample(5, serde_json::Value::Null),
        ];
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("rec.jsonl");
        std::fs::write(&path, lines.join("\n") + "\n").expect("written");
        let full = read_recording(&path).expect("read");
        let walk = read_with(&path, false).expect("read");
        let index = |r: &Recording| r.sources().zip(r.times()).collect::<Vec<_>>();
        assert_eq!(index(&walk), index(&full));
        assert_eq!(index(&walk).len(), 3);
        assert_eq!(walk.skipped, full.skipped);
        assert!(
            walk.skipped
                .iter()
                .any(|p| p.starts_with("line 4: not a sample")),
            "{:?}",
            walk.skipped
        );
        assert_eq!(full.waiting.len(), 3);
        assert!(walk.waiting.is_empty());
        // Played, its samples carry their outputs: `tests/ash` plays a walk's recording.
    }

    /// A line with a byte that is not UTF-8 (a damaged file) is still read, lossily, as it was
    /// before the quick check for valid lines; a valid line is read as written.
    #[test]
    fn a_damaged_byte_is_read_lossily_and_a_valid_line_as_written() {
        let line = |stdout: &[u8]| {
            let mut l = br#"{"t":1.5,"source":"onstat -u","exit":0,"stdout":"a"#.to_vec();
            l.extend_from_slice(stdout);
            l.extend_from_slice(b"\"}\n");
            l
        };
        let stdout_of = |buf: &[u8]| match classify(1, buf, true, &mut Labels::default()) {
            Line::Sample(Source::OnstatU, raw) => raw.stdout,
            _ => panic!("not a sample: {}", String::from_utf8_lossy(buf)),
        };
        assert_eq!(stdout_of(&line(b"\xff b")), "a\u{fffd} b");
        assert_eq!(stdout_of(&line("é b".as_bytes())), "aé b");
    }

    /// What reading one line came to, to compare two readers.
    #[derive(Debug, PartialEq)]
    enum Seen {
        Blank,
        Header(Box<RecordingHeader>, Vec<String>),
        Sample(Source, RawSample),
        Problem(String),
        Long(u64),
        Failed,
    }

    fn seen(line: Line) -> Seen {
        match line {
            Line::Blank => Seen::Blank,
            Line::Header(h, p) => Seen::Header(h, p),
            Line::Sample(s, raw) => Seen::Sample(s, raw),
            Line::Problem(p) => Seen::Problem(p),
        }
    }

    /// Every line of `bytes` as the reader reads it: outputs decoded once.
    fn read_now(bytes: &[u8], cap: u64, keep_output: bool) -> Vec<Seen> {
        let (mut reader, _) = Input::Bytes(Arc::from(bytes)).lines().expect("lines");
        let mut labels = Labels::default();
        let mut out = Vec::new();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let no = out.len() as u64 + 1;
            out.push(match reader.next(&mut buf, cap, keep_output) {
                LineRead::End => return out,
                LineRead::Line => seen(classify(no, &buf, keep_output, &mut labels)),
                LineRead::Sample(raw) => seen(sample_line(no, raw, &mut labels)),
                LineRead::Long(n) => Seen::Long(n),
                LineRead::Failed(_) => Seen::Failed,
            });
        }
    }

    /// Every line of `bytes` as the reader read it before: edits made whole written out as
    /// plain sample lines (`edits::reference`), read back and decoded again.
    fn read_before(bytes: &[u8], cap: u64, keep_output: bool) -> Vec<Seen> {
        let mut lines: Lines = Box::new(crate::collect::edits::reference::Expand::new(
            std::io::Cursor::new(bytes.to_vec()),
            cap,
        ));
        let mut out = Vec::new();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let no = out.len() as u64 + 1;
            out.push(match read_line(&mut lines, &mut buf, cap) {
                LineRead::End => return out,
                LineRead::Line => seen(classify(no, &buf, keep_output, &mut Labels::default())),
                LineRead::Sample(_) => unreachable!("the lines are text"),
                LineRead::Long(n) => Seen::Long(n),
                LineRead::Failed(_) => Seen::Failed,
            });
        }
    }

    /// A ring's file written by the real writer: outputs of three sources kept and written as
    /// edits (counters changed, lines added and gone, quotes, tabs and control bytes to
    /// escape, times that print in 17 digits), and damage: an edit whose base line was lost,
    /// an unknown source, times out of range, a kept line that names the header's key, one
    /// without an output, one not UTF-8 (so never a base), an edit that is no JSON, a blank
    /// line, and a last line cut short.
    fn damaged_ring_file() -> Vec<u8> {
        let mut p = crate::collect::edits::Packer::default();
        let mut lines: Vec<Vec<u8>> =
            vec![format!("{{\"ifxtop_recording\":{FORMAT_VERSION}}}\n").into_bytes()];
        let output = |i: usize, who: &str| {
            let mut o = String::from("IBM Informix Dynamic Server Version 14.10.FC9\n\n");
            for sid in 0..40 + i % 7 {
                if sid % 11 != i % 11 {
                    o.push_str(&format!(
                        "{who} sid {sid}\t\"q\" \u{1} reads {:07} writes {:07}\n",
                        sid * 31 + i,
                        sid * 7 + i / 3
                    ));
                }
            }
            o
        };
        let mut t = 0.1f64;
        for i in 0..30 {
            for (k, source) in ["onstat -u", "onstat -k", "onstat -X", "onstat -q nonesuch"]
                .iter()
                .enumerate()
            {
                t += 0.1 + 0.2;
                let time = match (i, k) {
                    (12, 1) => -1.0,
                    (13, 2) => 1e300,
                    _ => t,
                };
                let sample = RawSample {
                    t: time,
                    source: (*source).into(),
                    argv: vec!["onstat".into(), format!("-{k}")],
                    exit: (i % 5 != 4).then_some(5),
                    stdout: output(i + k, source),
                    stderr: if i % 9 == 0 {
                        "oops\n".into()
                    } else {
                        String::new()
                    },
                };
                lines.push(p.line(sample).expect("a line").to_vec());
            }
        }
        // Near the end (a source whose base is lost reads nothing more): an edit whose base
        // (the line before of its source) is lost, and the damaged lines.
        let at = lines.len() - 20;
        lines.remove(at);
        lines.insert(
            at + 4,
            br#"{"t":5.0,"keep":true,"ifxtop_recording":1,"source":"onstat -u","stdout":"x"}"#
                .iter()
                .chain(b"\n")
                .copied()
                .collect(),
        );
        lines.insert(
            at + 5,
            b"{\"t\":5.5,\"keep\":true,\"source\":\"onstat -k\"}\n".to_vec(),
        );
        lines.insert(
            at + 9,
            b"{\"t\":6.0,\"keep\":true,\"source\":\"onstat -X\",\"stdout\":\"a\xff\"}\n".to_vec(),
        );
        lines.insert(at + 10, b"{\"t\":6.5,\"edit\":[[0,\n".to_vec());
        lines.insert(at + 11, b"\n".to_vec());
        let last = lines.pop().expect("a line");
        lines.push(last[..last.len() / 2].to_vec());
        lines.concat()
    }

    /// Outputs decoded once give what writing each edit out whole and reading it back gave:
    /// the same samples, field by field, in the same order, the same problems, the same lines
    /// past the cap (an edit made whole past it, though its line is short), with outputs kept
    /// and without (an index).
    #[test]
    fn outputs_decoded_once_are_what_the_round_trip_read() {
        let bytes = damaged_ring_file();
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.matches("\"edit\":").count() > 80, "{text}");
        for cap in [1 << 20, 3000, 2500] {
            for keep_output in [true, false] {
                let now = read_now(&bytes, cap, keep_output);
                let before = read_before(&bytes, cap, keep_output);
                assert_eq!(now.len(), before.len());
                for (i, (a, b)) in now.iter().zip(&before).enumerate() {
                    assert_eq!(a, b, "line {}, cap {cap}, outputs {keep_output}", i + 1);
                }
                let count = |f: fn(&Seen) -> bool| now.iter().filter(|s| f(s)).count();
                let samples = count(|s| matches!(s, Seen::Sample(..)));
                assert!(samples > 60 || cap < 4096, "{samples}: {now:?}");
                assert!(count(|s| matches!(s, Seen::Problem(..))) >= 6, "{now:?}");
                if cap == 2500 {
                    assert!(count(|s| matches!(s, Seen::Long(..))) > 0, "{now:?}");
                }
            }
        }
        // Played, the recording gives its samples with their outputs, in time order.
        let rec = parse_recording(&bytes);
        let played: Vec<(Source, RawSample)> = rec.samples().collect();
        assert_eq!(played.len(), rec.len());
        let mut want: Vec<(Source, RawSample)> = read_before(&bytes, line_cap(), true)
            .into_iter()
            .filter_map(|s| match s {
                Seen::Sample(src, raw) => Some((src, raw)),
                _ => None,
            })
            .collect();
        want.sort_by(|a, b| a.1.t.total_cmp(&b.1.t));
        assert_eq!(played, want);
    }
}
