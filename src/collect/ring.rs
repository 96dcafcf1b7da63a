//! The flight recorder: every collected output kept in a ring directory, always on and bounded
//! (a retention in time and a cap in bytes, oldest out first), so any minute of the last day
//! replays as a recording does; the minutes around an incident cut out on their own and kept
//! beyond the retention; bookmarks.
//!
//! The ring is a directory of its own (0700) of segments, each a recording (header + samples,
//! zstd, files 0600 created new): `20261122T033000Z.jsonl.zst`, named after its first moment
//! (UTC). A segment holds [`SEGMENT_S`] seconds (less when it reaches an eighth of the byte
//! cap); its header's `started` is its own second 0, its samples' `t` count from there. What is
//! stored is what changed: each output after the first of its source in a segment as the lines
//! that changed against its source's last one (`edits.rs`), in one zstd frame per segment
//! (measured against the other ways in docs/recording.md). Every output is made whole again
//! when read: a replay's store sees exactly what it would have seen. The segment being written
//! is flushed every second: a crash loses the second being written, and the torn tail is
//! dropped when read.
//!
//! `incidents/` holds the cuts (`<UTC>-<finding>.jsonl.zst`, recordings of the minutes before a
//! finding reached warning until it cleared) and `index.jsonl` (one line when one begins, one
//! when it is cut); `marks.jsonl` the bookmarks.

use crate::collect::record::{Lines, Recording, RecordingHeader};
use crate::collect::sample::RawSample;
use crate::error::Error;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Seconds of collection per segment.
pub const SEGMENT_S: f64 = 600.0;
/// A segment's time origin is this long before the first second it holds, so a slow command
/// that finishes after the segment changed (its sample carries the moment it ran) still has its
/// place in time.
const LATE_S: f64 = 60.0;
const ZSTD_LEVEL: i32 = 3;
/// The extension of every file of the ring.
const EXT: &str = ".jsonl.zst";
/// The default retention.
pub const DEFAULT_RETENTION_H: f64 = 24.0;
/// The default byte cap of the segments.
pub const DEFAULT_MAX_MB: u64 = 2048;
/// The default minutes kept before an incident.
pub const DEFAULT_BEFORE_MIN: f64 = 5.0;
/// The default byte cap of the incidents' cuts (beyond the segments' cap).
pub const DEFAULT_INCIDENTS_MB: u64 = 512;
/// An incident still holding this long after it began is cut there (a finding that holds for
/// hours, logs not backed up, would otherwise never be cut).
pub const INCIDENT_MAX_S: f64 = 1800.0;
/// The free space the ring leaves on its file system, unless told otherwise: the share of the
/// file system and the cap of systemd-journald's `SystemKeepFree=` default (journald.conf(5):
/// "15% of the size of the respective file system, but each value is capped to 4G"), the
/// always-on recorder every Linux host already runs. Under it the ring stops writing, says
/// so, and the screen and `serve` show a finding: a database host's disk must not fill because
/// ifxtop records (Informix's logs, its dumps and the system need that room).
pub const KEEP_FREE_PERCENT: u64 = 15;
pub const KEEP_FREE_MAX_BYTES: u64 = 4 << 30;

/// The free space the ring leaves on a file system of `size` bytes (see [`KEEP_FREE_PERCENT`]).
pub fn keep_free(size: u64) -> u64 {
    (size / 100)
        .saturating_mul(KEEP_FREE_PERCENT)
        .min(KEEP_FREE_MAX_BYTES)
}

/// Where the ring is and what it keeps.
#[derive(Debug, Clone, PartialEq)]
pub struct RingConfig {
    pub dir: PathBuf,
    /// How long a segment is kept after its last moment.
    pub retention: Duration,
    /// The segments' bytes at most.
    pub max_bytes: u64,
    /// How much before an incident its cut keeps.
    pub before: Duration,
    /// The incidents' cuts' bytes at most (the oldest removed first).
    pub incidents_max_bytes: u64,
    /// The file system's free bytes under which the ring stops writing; `None`: [`keep_free`]
    /// of the file system's size.
    pub min_free_bytes: Option<u64>,
}

impl RingConfig {
    /// The defaults: 24 h within 2 GB, 5 minutes before an incident.
    pub fn new(dir: PathBuf) -> Self {
        RingConfig {
            dir,
            retention: Duration::from_secs_f64(DEFAULT_RETENTION_H * 3600.0),
            max_bytes: DEFAULT_MAX_MB * crate::files::MB,
            before: Duration::from_secs_f64(DEFAULT_BEFORE_MIN * 60.0),
            incidents_max_bytes: DEFAULT_INCIDENTS_MB * crate::files::MB,
            min_free_bytes: None,
        }
    }
}

/// What every segment's header says besides its start.
#[derive(Debug, Clone)]
pub struct Origin {
    pub server: Option<String>,
    pub host: Option<String>,
    /// The wall time of session second 0.
    pub wall_start: time::OffsetDateTime,
    pub ports: Vec<u16>,
    pub base_page_kb: u32,
}

impl Origin {
    fn header(&self, started: time::OffsetDateTime) -> RecordingHeader {
        RecordingHeader::new(
            self.server.as_deref(),
            self.host.as_deref(),
            started,
            &self.ports,
            self.base_page_kb,
        )
    }

    fn wall(&self, t: f64) -> time::OffsetDateTime {
        self.wall_start + time::Duration::seconds_f64(t)
    }
}

/// Creates the ring's directory 0700 (and `incidents/` in it), or checks one already there: a
/// directory (not a link to one), with no access for group or others.
pub fn prepare_dir(dir: &Path) -> Result<(), Error> {
    for d in [dir.to_path_buf(), dir.join("incidents")] {
        own_dir(&d)?;
    }
    Ok(())
}

fn own_dir(dir: &Path) -> Result<(), Error> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let err = |source: std::io::Error| Error::File {
        path: dir.display().to_string(),
        source,
    };
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(err(e)),
    }
    let meta = std::fs::symlink_metadata(dir).map_err(err)?;
    if !meta.file_type().is_dir() {
        return Err(Error::Usage(format!(
            "--ring {}: not a directory of its own (a ring is a directory ifxtop creates, 0700)",
            dir.display()
        )));
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(Error::Usage(format!(
            "--ring {}: mode {mode:o}: group or others have access to it (it holds SQL text): \
             chmod 700 it, or give a new directory",
            dir.display()
        )));
    }
    Ok(())
}

/// One segment of a ring, as found on disk.
#[derive(Debug, Clone)]
pub struct Segment {
    pub path: PathBuf,
    /// Its second 0 (its header's `started`), in the server's offset.
    pub started: time::OffsetDateTime,
    pub header: RecordingHeader,
    pub bytes: u64,
}

fn is_segment_name(name: &str) -> bool {
    name.len() > EXT.len() && name.ends_with(EXT) && name.as_bytes()[0].is_ascii_digit()
}

/// The segments of the ring in `dir`, oldest first (by their headers' start). A file without a
/// readable header is passed over.
pub fn segments(dir: &Path) -> Result<Vec<Segment>, Error> {
    let read = std::fs::read_dir(dir).map_err(|source| Error::File {
        path: dir.display().to_string(),
        source,
    })?;
    let mut out = Vec::new();
    for entry in read.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !is_segment_name(&name) || !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let Ok(Some(header)) = crate::collect::record::read_header(&path) else {
            continue;
        };
        let Some(started) = header.started_at() else {
            continue;
        };
        let bytes = entry.metadata().map(|m| m.len()).unwrap_or(0);
        out.push(Segment {
            path,
            started,
            header,
            bytes,
        });
    }
    out.sort_by(|a, b| a.started.cmp(&b.started).then(a.path.cmp(&b.path)));
    Ok(out)
}

/// The file name of a segment or a cut starting at `at`: its UTC time, sortable.
fn stamp(at: time::OffsetDateTime) -> String {
    let f = time::macros::format_description!("[year][month][day]T[hour][minute][second]Z");
    at.to_offset(time::UtcOffset::UTC)
        .format(&f)
        .unwrap_or_else(|_| "00000000T000000Z".into())
}

/// A new file in `dir` named `stem` (`stem-2`, `stem-3` when taken): 0600, never through a link.
fn create_named(dir: &Path, stem: &str) -> std::io::Result<(PathBuf, std::fs::File)> {
    for n in 1..1000 {
        let name = if n == 1 {
            format!("{stem}{EXT}")
        } else {
            format!("{stem}-{n}{EXT}")
        };
        let path = dir.join(name);
        match crate::files::create_new_private(&path) {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(format!(
        "{stem}: a thousand files of that name already"
    )))
}

/// A file of the ring: one zstd frame of lines, written as a stream, flushed at will (what is on
/// disk then decompresses up to there). zstd's own context (not the `zstd` crate's writer), so
/// the memory it holds can be told ([`Frame::held`]).
pub(crate) struct Frame {
    cctx: zstd::zstd_safe::CCtx<'static>,
    file: std::fs::File,
    out: Vec<u8>,
    packer: crate::collect::edits::Packer,
}

fn zstd_err(code: usize) -> std::io::Error {
    std::io::Error::other(zstd::zstd_safe::get_error_name(code))
}

impl Frame {
    fn new(file: std::fs::File) -> std::io::Result<Frame> {
        let mut cctx = zstd::zstd_safe::CCtx::create();
        cctx.set_parameter(zstd::zstd_safe::CParameter::CompressionLevel(ZSTD_LEVEL))
            .map_err(zstd_err)?;
        Ok(Frame {
            cctx,
            file,
            out: Vec::with_capacity(zstd::zstd_safe::CCtx::out_size()),
            packer: Default::default(),
        })
    }

    /// Writes `bytes` (whole lines) into the frame.
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let mut input = zstd::zstd_safe::InBuffer::around(bytes);
        while input.pos() < bytes.len() {
            self.out.clear();
            let mut out = zstd::zstd_safe::OutBuffer::around(&mut self.out);
            self.cctx
                .compress_stream2(
                    &mut out,
                    &mut input,
                    zstd::zstd_safe::zstd_sys::ZSTD_EndDirective::ZSTD_e_continue,
                )
                .map_err(zstd_err)?;
            self.file.write_all(&self.out)?;
        }
        Ok(())
    }

    /// Writes one output: whole, or as the lines that changed since its source's last one.
    /// False when it could not be put in JSON (nothing written).
    fn sample(&mut self, sample: RawSample) -> std::io::Result<bool> {
        let mut packer = std::mem::take(&mut self.packer);
        let res = match packer.line(sample) {
            Ok(line) => self.write_all(line).map(|()| true),
            Err(_) => Ok(false),
        };
        self.packer = packer;
        res
    }

    /// What was written so far to disk, decompressible.
    fn flush(&mut self) -> std::io::Result<()> {
        self.drain(false)
    }

    fn drain(&mut self, end: bool) -> std::io::Result<()> {
        loop {
            self.out.clear();
            let mut out = zstd::zstd_safe::OutBuffer::around(&mut self.out);
            let left = if end {
                self.cctx.end_stream(&mut out)
            } else {
                self.cctx.flush_stream(&mut out)
            }
            .map_err(zstd_err)?;
            self.file.write_all(&self.out)?;
            if left == 0 {
                return Ok(());
            }
        }
    }

    /// Ends the frame.
    fn finish(mut self) -> std::io::Result<std::fs::File> {
        self.drain(true)?;
        self.file.flush()?;
        Ok(self.file)
    }

    fn file(&self) -> &std::fs::File {
        &self.file
    }

    /// The memory it holds: zstd's context, the outputs kept to write the next ones as edits.
    pub(crate) fn held(&self) -> usize {
        self.cctx.sizeof() + self.packer.held() + self.out.capacity()
    }
}

/// The session time at which the segment whose origin is `base` ends. Its samples' times are
/// written less its origin; from 2 segments on the origin is at least half of every time in it,
/// so the subtraction is exact (Sterbenz) and a replay adds it back to the very time collected:
/// the first segment, from 0, needs no subtraction and runs two segments long.
fn segment_end(base: f64) -> f64 {
    if base == 0.0 {
        2.0 * SEGMENT_S + LATE_S
    } else {
        base + LATE_S + SEGMENT_S
    }
}

/// The segment being written.
struct Open {
    path: PathBuf,
    /// Its second 0 in session time, and on the clock.
    base: f64,
    started: time::OffsetDateTime,
    enc: Frame,
    /// The whole seconds of session time up to which it was flushed.
    flushed_s: f64,
    /// Until when its samples run (session time).
    last_t: f64,
}

impl Open {
    fn bytes(&self) -> u64 {
        self.enc.file().metadata().map(|m| m.len()).unwrap_or(0)
    }
}

/// A closed segment the writer keeps track of.
#[derive(Debug, Clone)]
struct Closed {
    path: PathBuf,
    /// Its second 0, and its header.
    started: time::OffsetDateTime,
    header: RecordingHeader,
    /// Its last moment (the next one's start, for segments of an earlier run).
    ended: time::OffsetDateTime,
    bytes: u64,
}

/// What the ring did, for the cost line and `serve`'s metrics.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RingStats {
    /// Bytes written to segments since it started (compressed).
    pub written: u64,
    /// Bytes the segments hold on disk now.
    pub segments_bytes: u64,
    /// Bytes the incidents' cuts hold.
    pub incidents_bytes: u64,
    /// Samples written.
    pub samples: u64,
    /// Why it stopped writing (a full disk, an error), when it did.
    pub stopped: Option<String>,
    /// The latest session time written.
    pub last_t: f64,
    /// Incidents cut so far.
    pub cuts: u64,
    /// Bytes written over the last minute of data (`None` before a minute).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written_per_min: Option<f64>,
    /// The file system's free bytes at the last look, and what the ring leaves free.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_free_bytes: Option<u64>,
}

/// What the instance tells the ring besides the outputs: incidents and bookmarks.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A finding reached warning at session time `t`. `subject` is what it is about (its
    /// incident's key with the kind: `model::incidents::subject`), `culprit` whom it blames.
    Began {
        t: f64,
        kind: String,
        subject: String,
        severity: String,
        culprit: String,
        summary: String,
    },
    /// The finding of that kind and subject cleared (or ifxtop stopped) at `t`; `culprit`,
    /// when it was named only after it began.
    Ended {
        t: f64,
        kind: String,
        subject: String,
        culprit: Option<String>,
    },
}

/// An incident line of `incidents/index.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IncidentLine {
    /// `began` or `cut`.
    pub event: String,
    /// When it began (RFC 3339, UTC).
    pub began: String,
    pub kind: String,
    #[serde(default)]
    pub severity: String,
    #[serde(default)]
    pub culprit: String,
    #[serde(default)]
    pub summary: String,
    /// When it cleared (a cut).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// The cut's file name in `incidents/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Why the cut is short or missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The culprit, when it was named only after the incident began (`culprit` is empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub named: Option<String>,
}

/// A bookmark line of `marks.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MarkLine {
    /// RFC 3339, UTC.
    pub at: String,
    pub note: String,
}

fn rfc3339(t: time::OffsetDateTime) -> String {
    t.to_offset(time::UtcOffset::UTC)
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Appends one JSON line to `path` (created 0600, never through a link).
fn append_line(path: &Path, line: &impl Serialize) -> std::io::Result<()> {
    let mut text = serde_json::to_string(line).map_err(std::io::Error::other)?;
    text.push('\n');
    let mut f = crate::files::open_append_private(path)?;
    f.write_all(text.as_bytes())
}

/// Appends a bookmark at `at` to the ring in `dir`.
pub fn mark(dir: &Path, at: time::OffsetDateTime, note: &str) -> Result<(), Error> {
    prepare_dir(dir)?;
    let path = dir.join("marks.jsonl");
    append_line(
        &path,
        &MarkLine {
            at: rfc3339(at),
            note: note.to_string(),
        },
    )
    .map_err(|source| Error::File {
        path: path.display().to_string(),
        source,
    })
}

/// The bookmarks of the ring in `dir`, in the file's order (lines that are no mark skipped).
pub fn marks(dir: &Path) -> Vec<MarkLine> {
    read_lines(&dir.join("marks.jsonl"))
}

/// The incident lines of the ring in `dir`.
pub fn incident_lines(dir: &Path) -> Vec<IncidentLine> {
    read_lines(&dir.join("incidents").join("index.jsonl"))
}

fn read_lines<T: for<'de> Deserialize<'de>>(path: &Path) -> Vec<T> {
    let Ok(text) = crate::files::read_text_capped(path, 64 * crate::files::MB) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// An incident not cut yet.
#[derive(Debug, Clone)]
struct OpenIncident {
    began_t: f64,
    subject: String,
    line: IncidentLine,
}

/// Writes the ring: segments, retention, the byte caps, incidents' cuts. Synchronous: the
/// production thread ([`Ring`]) and the tests on a paused clock drive the same writer.
pub struct RingWriter {
    cfg: RingConfig,
    origin: Origin,
    cur: Option<Open>,
    closed: Vec<Closed>,
    stats: RingStats,
    incidents: Vec<OpenIncident>,
    /// The free space checked last at this session second.
    free_checked: f64,
    /// The origin of the last segment started.
    last_base: Option<f64>,
    /// Bytes written by each whole second of data, back to a minute ago: the rate a minute.
    minute: std::collections::VecDeque<(f64, u64)>,
    /// It stopped for want of room: it looks again once a minute of data, and writes again
    /// when there is.
    stopped_for_room: bool,
    /// The bytes of the segments this writer finished (`written` is these and the open one's).
    finished_bytes: u64,
}

impl RingWriter {
    /// Opens the ring in `cfg.dir` (created 0700 when absent): the segments an earlier run left
    /// stay, counted in the cap and the retention.
    pub fn open(cfg: RingConfig, origin: Origin) -> Result<RingWriter, Error> {
        prepare_dir(&cfg.dir)?;
        let found = segments(&cfg.dir)?;
        let mut closed: Vec<Closed> = Vec::with_capacity(found.len());
        for (i, s) in found.iter().enumerate() {
            let ended = found
                .get(i + 1)
                .map(|n| n.started)
                .or_else(|| {
                    std::fs::metadata(&s.path)
                        .and_then(|m| m.modified())
                        .ok()
                        .map(time::OffsetDateTime::from)
                })
                .unwrap_or(s.started);
            closed.push(Closed {
                path: s.path.clone(),
                started: s.started,
                header: s.header.clone(),
                ended,
                bytes: s.bytes,
            });
        }
        let mut w = RingWriter {
            cfg,
            origin,
            cur: None,
            closed,
            stats: RingStats::default(),
            incidents: Vec::new(),
            free_checked: f64::NEG_INFINITY,
            last_base: None,
            minute: std::collections::VecDeque::new(),
            stopped_for_room: false,
            finished_bytes: 0,
        };
        w.stats.incidents_bytes = w.incidents_bytes();
        w.recount();
        Ok(w)
    }

    pub fn stats(&self) -> &RingStats {
        &self.stats
    }

    pub fn config(&self) -> &RingConfig {
        &self.cfg
    }

    /// The memory the segment being written holds (zstd's context, the outputs kept to write
    /// the next ones as edits).
    pub fn held(&self) -> usize {
        self.cur.as_ref().map_or(0, |o| o.enc.held())
    }

    fn recount(&mut self) {
        let open = self.cur.as_ref().map_or(0, Open::bytes);
        self.stats.segments_bytes = self.closed.iter().map(|c| c.bytes).sum::<u64>() + open;
        self.stats.written = self.finished_bytes + open;
    }

    fn stop(&mut self, why: String) {
        if self.stats.stopped.is_none() {
            self.stats.stopped = Some(why);
        }
        self.close_current();
    }

    /// Writes one collected output.
    pub fn write(&mut self, mut sample: RawSample) {
        if self.stats.stopped.is_some() && !self.stopped_for_room {
            return;
        }
        let t = sample.t;
        if !t.is_finite() || t < 0.0 {
            return;
        }
        self.check_free(t);
        if self.stats.stopped.is_some() {
            return;
        }
        let seg_cap = (self.cfg.max_bytes / 8).max(1);
        let rotate = match &self.cur {
            None => true,
            Some(o) => t >= segment_end(o.base) || o.bytes() >= seg_cap,
        };
        if rotate {
            if let Err(e) = self.rotate(t) {
                self.stop(format!("ring stopped: {}: {e}", self.cfg.dir.display()));
                return;
            }
        }
        let Some(o) = self.cur.as_mut() else {
            return;
        };
        // A sample from before the segment's origin (later than LATE_S): at its origin.
        sample.t = (t - o.base).max(0.0);
        o.last_t = o.last_t.max(t);
        let mut res = match o.enc.sample(sample) {
            Ok(true) => Ok(()),
            Ok(false) => return,
            Err(e) => Err(e),
        };
        // Flushed at each new second of the data: what is on disk replays, a crash loses the
        // second being written.
        if res.is_ok() && t.floor() > o.flushed_s {
            o.flushed_s = t.floor();
            res = o.enc.flush();
        }
        if let Err(e) = res {
            let why = format!("ring stopped: {}: {e}", o.path.display());
            self.stop(why);
            return;
        }
        self.stats.samples += 1;
        self.stats.last_t = self.stats.last_t.max(t);
        self.recount();
        self.count_minute(t);
        self.prune();
        self.due_cuts(t);
    }

    /// The bytes written over the last minute of data, as each new second comes.
    fn count_minute(&mut self, t: f64) {
        let sec = t.floor();
        if self.minute.back().is_some_and(|(s, _)| sec <= *s) {
            return;
        }
        self.minute.push_back((sec, self.stats.written));
        // The oldest kept is the newest a minute or more before.
        while self.minute.get(1).is_some_and(|(s, _)| sec - s >= 60.0) {
            self.minute.pop_front();
        }
        if let Some((s0, w0)) = self.minute.front().filter(|(s0, _)| sec - s0 >= 60.0) {
            let bytes = self.stats.written.saturating_sub(*w0) as f64;
            self.stats.written_per_min = Some(bytes * 60.0 / (sec - s0));
        }
    }

    /// Flushes what was written (the production thread, once a second).
    pub fn flush(&mut self) {
        if let Some(o) = &mut self.cur {
            if let Err(e) = o.enc.flush() {
                let why = format!("ring stopped: {}: {e}", o.path.display());
                self.stop(why);
            }
        }
        self.recount();
    }

    fn rotate(&mut self, t: f64) -> std::io::Result<()> {
        self.close_current();
        // The segment's origin: whole segments of session time, LATE_S before (the first
        // from 0, two segments long).
        let start = (t / SEGMENT_S).floor() * SEGMENT_S;
        let base = if start >= 2.0 * SEGMENT_S {
            start - LATE_S
        } else {
            0.0
        };
        // Cut early (past its bytes), the next starts at the sample's second.
        let early = t < segment_end(base) && self.last_base.is_some_and(|b| b >= base);
        let base = if early || t >= segment_end(base) {
            t.floor()
        } else {
            base
        };
        self.last_base = Some(base);
        let started = self.origin.wall(base);
        let (path, file) = create_named(&self.cfg.dir, &stamp(started))?;
        let mut enc = Frame::new(file)?;
        let mut header =
            serde_json::to_vec(&self.origin.header(started)).map_err(std::io::Error::other)?;
        header.push(b'\n');
        enc.write_all(&header)?;
        enc.flush()?;
        self.cur = Some(Open {
            path,
            base,
            started,
            enc,
            flushed_s: t.floor(),
            last_t: t,
        });
        Ok(())
    }

    /// Ends the segment being written (its zstd frame finished).
    fn close_current(&mut self) {
        let Some(o) = self.cur.take() else {
            return;
        };
        let ended = self.origin.wall(o.last_t);
        let path = o.path.clone();
        let _ = o.enc.finish().and_then(|mut f| f.flush());
        let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        self.finished_bytes += bytes;
        self.closed.push(Closed {
            path,
            started: o.started,
            header: self.origin.header(o.started),
            ended,
            bytes,
        });
        self.recount();
    }

    /// The oldest segments out: those past the retention, then while the segments pass the cap.
    fn prune(&mut self) {
        let now = self.origin.wall(self.stats.last_t);
        let keep_from = now - time::Duration::try_from(self.cfg.retention).unwrap_or_default();
        let mut removed = false;
        while let Some(first) = self.closed.first() {
            let total = self.stats.segments_bytes;
            if first.ended >= keep_from && total <= self.cfg.max_bytes {
                break;
            }
            let first = self.closed.remove(0);
            let _ = std::fs::remove_file(&first.path);
            self.stats.segments_bytes = total.saturating_sub(first.bytes);
            removed = true;
        }
        // The segment being written alone past the cap: it ends, and goes.
        if self.closed.is_empty() && self.stats.segments_bytes > self.cfg.max_bytes {
            self.close_current();
            if let Some(c) = self.closed.pop() {
                let _ = std::fs::remove_file(&c.path);
            }
            removed = true;
        }
        if removed {
            self.recount();
        }
    }

    /// Stops writing when the file system holds less than the free space the ring leaves
    /// (checked once a minute of data).
    fn check_free(&mut self, t: f64) {
        if t - self.free_checked < 60.0 {
            return;
        }
        self.free_checked = t;
        if let Some((free, size)) = fs_space(&self.cfg.dir) {
            let keep = self.cfg.min_free_bytes.unwrap_or_else(|| keep_free(size));
            self.stats.free_bytes = Some(free);
            self.stats.keep_free_bytes = Some(keep);
            if free >= keep {
                if std::mem::take(&mut self.stopped_for_room) {
                    // Room again: a new segment from this second on.
                    self.stats.stopped = None;
                }
            } else if self.stats.stopped.is_none() {
                self.stopped_for_room = true;
                let rule = if self.cfg.min_free_bytes.is_some() {
                    String::new()
                } else {
                    format!(
                        " ({KEEP_FREE_PERCENT} % of the file system, at most {}, as journald \
                         leaves)",
                        crate::format::human_bytes(KEEP_FREE_MAX_BYTES)
                    )
                };
                self.stop(format!(
                    "ring stopped: {} has {} free, under the {}{rule} the ring leaves free \
                     (disk nearly full): nothing more is recorded",
                    self.cfg.dir.display(),
                    crate::format::human_bytes(free),
                    crate::format::human_bytes(keep)
                ));
            }
        }
    }

    /// An incident began or ended.
    pub fn event(&mut self, ev: Event) {
        match ev {
            Event::Began {
                t,
                kind,
                subject,
                severity,
                culprit,
                summary,
            } => {
                let line = IncidentLine {
                    event: "began".into(),
                    began: rfc3339(self.origin.wall(t)),
                    kind,
                    severity,
                    culprit,
                    summary,
                    ended: None,
                    file: None,
                    bytes: None,
                    note: None,
                    named: None,
                };
                let _ = append_line(&self.index_path(), &line);
                self.incidents.push(OpenIncident {
                    began_t: t,
                    subject,
                    line,
                });
            }
            Event::Ended {
                t,
                kind,
                subject,
                culprit,
            } => {
                if let Some(i) = self
                    .incidents
                    .iter()
                    .position(|o| o.line.kind == kind && o.subject == subject)
                {
                    let mut o = self.incidents.remove(i);
                    if let Some(c) = culprit {
                        o.line.named = Some(c);
                    }
                    self.cut(o, t);
                }
            }
        }
    }

    fn index_path(&self) -> PathBuf {
        self.cfg.dir.join("incidents").join("index.jsonl")
    }

    /// Incidents held past [`INCIDENT_MAX_S`] are cut at that length.
    fn due_cuts(&mut self, t: f64) {
        while let Some(i) = self
            .incidents
            .iter()
            .position(|o| t - o.began_t >= INCIDENT_MAX_S)
        {
            let o = self.incidents.remove(i);
            let end = o.began_t + INCIDENT_MAX_S;
            self.cut(o, end);
        }
    }

    /// Writes the cut of one incident: its recording from `before` ahead of its start to `end`.
    fn cut(&mut self, o: OpenIncident, end: f64) {
        if let Some(c) = &mut self.cur {
            let _ = c.enc.flush();
        }
        let from = self
            .origin
            .wall((o.began_t - self.cfg.before.as_secs_f64()).max(0.0));
        let to = self.origin.wall(end);
        let mut line = o.line;
        line.event = "cut".into();
        line.ended = Some(rfc3339(to));
        let stem = format!("{}-{}", stamp(self.origin.wall(o.began_t)), line.kind);
        let dir = self.cfg.dir.join("incidents");
        // The segments as this writer knows them (every header read again from disk at each
        // cut was most of the cost of a day's incidents).
        let mut segs: Vec<Segment> = self
            .closed
            .iter()
            .map(|c| Segment {
                path: c.path.clone(),
                started: c.started,
                header: c.header.clone(),
                bytes: c.bytes,
            })
            .collect();
        if let Some(o) = &self.cur {
            segs.push(Segment {
                path: o.path.clone(),
                started: o.started,
                header: self.origin.header(o.started),
                bytes: o.bytes(),
            });
        }
        let ring = RingIndex {
            dir: self.cfg.dir.clone(),
            segments: segs,
            end: to,
        };
        match write_window(&ring, from, to, &dir, &stem) {
            Ok((path, bytes)) => {
                line.file = path.file_name().map(|n| n.to_string_lossy().into_owned());
                line.bytes = Some(bytes);
                self.stats.cuts += 1;
            }
            Err(e) => line.note = Some(format!("not cut: {e}")),
        }
        let _ = append_line(&self.index_path(), &line);
        self.stats.incidents_bytes = self.incidents_bytes();
        self.prune_incidents();
    }

    fn incident_files(&self) -> Vec<(PathBuf, u64)> {
        let mut files: Vec<(PathBuf, u64)> = std::fs::read_dir(self.cfg.dir.join("incidents"))
            .map(|r| {
                r.flatten()
                    .filter(|e| {
                        let n = e.file_name().to_string_lossy().into_owned();
                        is_segment_name(&n) && e.file_type().is_ok_and(|t| t.is_file())
                    })
                    .map(|e| (e.path(), e.metadata().map(|m| m.len()).unwrap_or(0)))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        files
    }

    fn incidents_bytes(&self) -> u64 {
        self.incident_files().iter().map(|(_, b)| b).sum()
    }

    /// The oldest cuts out while they pass their cap.
    fn prune_incidents(&mut self) {
        let mut files = self.incident_files();
        let mut total: u64 = files.iter().map(|(_, b)| b).sum();
        while total > self.cfg.incidents_max_bytes && !files.is_empty() {
            let (p, b) = files.remove(0);
            let _ = std::fs::remove_file(&p);
            total -= b;
        }
        self.stats.incidents_bytes = total;
    }

    /// Ends the ring: the incidents still open are cut at the last moment, the segment being
    /// written is finished.
    pub fn close(mut self) -> RingStats {
        let t = self.stats.last_t;
        for o in std::mem::take(&mut self.incidents) {
            self.cut(o, t);
        }
        self.close_current();
        self.stats.clone()
    }
}

/// The free bytes (for an unprivileged user) and the size of the file system holding `dir`.
// `fsblkcnt_t` and `c_ulong` are 32 bits on some targets.
#[allow(clippy::useless_conversion)]
fn fs_space(dir: &Path) -> Option<(u64, u64)> {
    let st = nix::sys::statvfs::statvfs(dir).ok()?;
    let frag = u64::from(st.fragment_size());
    Some((
        u64::from(st.blocks_available()).saturating_mul(frag),
        u64::from(st.blocks()).saturating_mul(frag),
    ))
}

/// The ring's segments that hold moments between `from` and `to`, in order.
fn covering(
    segs: &[Segment],
    from: time::OffsetDateTime,
    to: time::OffsetDateTime,
) -> Vec<Segment> {
    segs.iter()
        .enumerate()
        .filter(|(i, s)| s.started <= to && segs.get(i + 1).is_none_or(|n| n.started > from))
        .map(|(_, s)| s.clone())
        .collect()
}

/// The first sample of a line, `{"t":12.5,...`: its time and where the rest starts.
fn lead_t(line: &[u8]) -> Option<(f64, usize)> {
    let rest = line.strip_prefix(b"{\"t\":")?;
    let end = rest.iter().position(|&b| b == b',' || b == b'}')?;
    let t: f64 = std::str::from_utf8(&rest[..end]).ok()?.parse().ok()?;
    Some((t, 5 + end))
}

/// Segments read one after another as one recording: one header (`started` the window's
/// start), each sample's time moved onto the window's clock, those outside the window left out.
struct Joined {
    segs: Arc<[(PathBuf, f64)]>,
    next: usize,
    cur: Option<Lines>,
    header: Option<Vec<u8>>,
    out: Vec<u8>,
    pos: usize,
    line: Vec<u8>,
    /// The window's length (seconds).
    end_t: f64,
    /// What was dropped (a torn tail), said once per segment.
    notes: Arc<Mutex<Vec<String>>>,
    /// The segment being read; whether it starts with its header.
    offset: f64,
    first_line: bool,
}

impl Joined {
    fn note(&self, what: String) {
        if let Ok(mut n) = self.notes.lock() {
            if !n.contains(&what) {
                n.push(what);
            }
        }
    }

    /// The next line of the joined recording into `out`; false at the end.
    fn refill(&mut self) -> bool {
        self.out.clear();
        self.pos = 0;
        if let Some(h) = self.header.take() {
            self.out = h;
            return true;
        }
        loop {
            if self.cur.is_none() {
                let Some((path, offset)) = self.segs.get(self.next).cloned() else {
                    return false;
                };
                self.next += 1;
                match crate::collect::record::file_lines(&path) {
                    Ok(l) => {
                        self.cur = Some(l);
                        self.offset = offset;
                        self.first_line = true;
                    }
                    Err(e) => {
                        self.note(format!("{}: {e}: passed over", path.display()));
                        continue;
                    }
                }
            }
            let Some(lines) = self.cur.as_mut() else {
                continue;
            };
            self.line.clear();
            let cap = crate::collect::record::line_cap();
            let read = Read::take(&mut **lines, cap).read_until(b'\n', &mut self.line);
            let name = self
                .segs
                .get(self.next - 1)
                .map(|(p, _)| p.display().to_string())
                .unwrap_or_default();
            match read {
                Ok(0) => {
                    self.cur = None;
                    continue;
                }
                Err(e) => {
                    self.note(format!(
                        "{name}: ends early ({e}): a torn tail (ifxtop stopped mid-write), \
                         replayed up to it"
                    ));
                    self.cur = None;
                    continue;
                }
                Ok(_) => {}
            }
            if self.line.last() != Some(&b'\n') {
                self.note(format!(
                    "{name}: its last line is cut (ifxtop stopped mid-write): dropped"
                ));
                self.cur = None;
                continue;
            }
            let first = std::mem::replace(&mut self.first_line, false);
            if first && self.line.windows(18).any(|w| w == b"\"ifxtop_recording\"") {
                continue;
            }
            match lead_t(&self.line) {
                Some((t, rest)) => {
                    let t = t + self.offset;
                    if !(0.0..=self.end_t).contains(&t) {
                        continue;
                    }
                    self.out.extend_from_slice(b"{\"t\":");
                    self.out.extend_from_slice(
                        serde_json::to_string(&t).unwrap_or_default().as_bytes(),
                    );
                    self.out.extend_from_slice(&self.line[rest..]);
                }
                // Not a sample ifxtop wrote: left for the recording's reader to judge.
                None => self.out.extend_from_slice(&self.line),
            }
            return true;
        }
    }
}

impl Read for Joined {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.pos >= self.out.len() {
            if !self.refill() {
                return Ok(0);
            }
        }
        let n = buf.len().min(self.out.len() - self.pos);
        buf[..n].copy_from_slice(&self.out[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// The ring in `dir` as found: its segments, its span, its marks.
#[derive(Debug, Clone)]
pub struct RingIndex {
    pub dir: PathBuf,
    pub segments: Vec<Segment>,
    /// The last moment of the last segment.
    pub end: time::OffsetDateTime,
}

impl RingIndex {
    /// Reads the ring in `dir`: an error when it holds no segment.
    pub fn open(dir: &Path) -> Result<RingIndex, Error> {
        let segments = segments(dir)?;
        let Some(last) = segments.last() else {
            return Err(Error::Usage(format!(
                "{}: no ring in it (a ring is what `--ring DIR` writes)",
                dir.display()
            )));
        };
        let rec = crate::collect::record::read_replayable_for_walk(&last.path)
            .map(|r| r.length())
            .unwrap_or_default();
        let end = last.started + time::Duration::try_from(rec).unwrap_or_default();
        Ok(RingIndex {
            dir: dir.to_path_buf(),
            end,
            segments,
        })
    }

    /// The ring's first moment.
    pub fn start(&self) -> time::OffsetDateTime {
        self.segments.first().map(|s| s.started).unwrap_or(self.end)
    }

    /// A moment of the ring as a DBA types it: seconds from the ring's start, a share of it, or
    /// a time of day (the first such moment from its start on), clamped to the ring.
    pub fn moment(&self, when: crate::format::When) -> Result<time::OffsetDateTime, String> {
        let start = self.start();
        let length = Duration::try_from(self.end - start).unwrap_or_default();
        let d = when.into_timeline(Some(start), Some(length))?;
        let at = start + time::Duration::try_from(d).unwrap_or_default();
        if at > self.end {
            return Err(format!(
                "{when}: the ring ends at {} ({})",
                clock_of(self.end),
                self.dir.display()
            ));
        }
        Ok(at)
    }

    /// The ring from `from` to `to` as one recording (its second 0 is `from`, or the first
    /// segment's start when later), reading only the segments that hold those moments.
    pub fn window(
        &self,
        from: time::OffsetDateTime,
        to: time::OffsetDateTime,
        timeline: bool,
    ) -> Result<Recording, Error> {
        let (open, notes) = self.opener(from, to)?;
        let mut rec = crate::collect::record::read_opened(open, timeline);
        if let Ok(n) = notes.lock() {
            rec.skipped.extend(n.iter().cloned());
        }
        if rec.is_empty() {
            return Err(Error::Usage(format!(
                "{}: nothing to replay between {} and {}: {}",
                self.dir.display(),
                clock_of(from),
                clock_of(to),
                rec.problems_line()
            )));
        }
        Ok(rec)
    }

    /// The lines of the ring from `from` to `to`, opened again at each call, and where what
    /// they dropped (a torn tail) is said.
    #[allow(clippy::type_complexity)]
    fn opener(
        &self,
        from: time::OffsetDateTime,
        to: time::OffsetDateTime,
    ) -> Result<(crate::collect::record::Opener, Arc<Mutex<Vec<String>>>), Error> {
        let segs = covering(&self.segments, from, to);
        let Some(first) = segs.first() else {
            return Err(Error::Usage(format!(
                "{}: nothing between {} and {}",
                self.dir.display(),
                clock_of(from),
                clock_of(to)
            )));
        };
        let base = from.max(first.started);
        let mut header = first.header.clone();
        let fresh = RecordingHeader::new(
            header.server.as_deref(),
            header.host.as_deref(),
            base,
            &header.ports,
            header.base_page_kb.unwrap_or(2),
        );
        header.started = fresh.started;
        header.utc_offset = fresh.utc_offset;
        let mut header_line =
            serde_json::to_vec(&header).map_err(|e| Error::Other(e.to_string()))?;
        header_line.push(b'\n');
        let parts: Arc<[(PathBuf, f64)]> = segs
            .iter()
            .map(|s| (s.path.clone(), (s.started - base).as_seconds_f64()))
            .collect();
        let end_t = (to - base).as_seconds_f64();
        let notes = Arc::new(Mutex::new(Vec::new()));
        let n2 = notes.clone();
        let open: crate::collect::record::Opener = Arc::new(move || {
            let j = Joined {
                segs: parts.clone(),
                next: 0,
                cur: None,
                header: Some(header_line.clone()),
                out: Vec::new(),
                pos: 0,
                line: Vec::new(),
                end_t,
                notes: n2.clone(),
                offset: 0.0,
                first_line: false,
            };
            Ok(Box::new(std::io::BufReader::with_capacity(1 << 16, j)) as Lines)
        });
        Ok((open, notes))
    }
}

/// `13:34:50` of a wall time.
fn clock_of(t: time::OffsetDateTime) -> String {
    format!("{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second())
}

/// Writes the ring's moments from `from` to `to` into a new recording `stem.jsonl.zst` in
/// `dir`: its path and bytes.
/// The ring's lines read once, in the order written, each sample as it was collected (the cut's
/// reader puts them in time order, as any recording's).
fn write_window(
    index: &RingIndex,
    from: time::OffsetDateTime,
    to: time::OffsetDateTime,
    dir: &Path,
    stem: &str,
) -> Result<(PathBuf, u64), Error> {
    let (open, _) = index.opener(from, to)?;
    let mut lines = open().map_err(Error::Other)?;
    let (path, file) = create_named(dir, stem)?;
    let mut enc = Frame::new(file)?;
    let mut line = Vec::new();
    let mut written = 0u64;
    let mut first = true;
    loop {
        line.clear();
        let n = Read::take(&mut *lines, crate::collect::record::line_cap())
            .read_until(b'\n', &mut line);
        // The end, or a torn tail (dropped as a replay drops it).
        if !matches!(n, Ok(n) if n > 0) || line.last() != Some(&b'\n') {
            break;
        }
        if std::mem::take(&mut first) {
            // The window's header.
            enc.write_all(&line)?;
            continue;
        }
        if let Ok(s) = serde_json::from_slice::<RawSample>(&line) {
            if enc.sample(s)? {
                written += 1;
            }
        }
    }
    enc.finish()?;
    if written == 0 {
        let _ = std::fs::remove_file(&path);
        return Err(Error::Usage(format!(
            "{}: nothing between {} and {}",
            index.dir.display(),
            clock_of(from),
            clock_of(to)
        )));
    }
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    Ok((path, bytes))
}

/// The ring written on its own thread: outputs arrive on a channel (the recorder's), events on
/// another; flushed every second; its stats shared.
pub struct Ring {
    thread: std::thread::JoinHandle<RingStats>,
    stats: Arc<Mutex<RingStats>>,
    events: std::sync::mpsc::Sender<Event>,
    dir: PathBuf,
}

impl Ring {
    /// Starts writing `writer` from `rx` (until every sender is gone), forwarding each output
    /// to `also` (a `--record` file) when given.
    pub fn start(
        writer: RingWriter,
        rx: std::sync::mpsc::Receiver<RawSample>,
        also: Option<std::sync::mpsc::SyncSender<RawSample>>,
    ) -> Ring {
        let stats = Arc::new(Mutex::new(writer.stats().clone()));
        let (events, ev_rx) = std::sync::mpsc::channel::<Event>();
        let shared = stats.clone();
        let dir = writer.config().dir.clone();
        let thread = std::thread::spawn(move || {
            let mut w = writer;
            let mut last_flush = std::time::Instant::now();
            loop {
                match rx.recv_timeout(Duration::from_millis(250)) {
                    Ok(s) => {
                        if let Some(a) = &also {
                            let _ = a.try_send(s.clone());
                        }
                        w.write(s);
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                }
                while let Ok(ev) = ev_rx.try_recv() {
                    w.event(ev);
                }
                if last_flush.elapsed() >= Duration::from_secs(1) {
                    w.flush();
                    last_flush = std::time::Instant::now();
                    if let Ok(mut s) = shared.lock() {
                        *s = w.stats().clone();
                    }
                }
            }
            while let Ok(ev) = ev_rx.try_recv() {
                w.event(ev);
            }
            let end = w.close();
            if let Ok(mut s) = shared.lock() {
                *s = end.clone();
            }
            end
        });
        Ring {
            thread,
            stats,
            events,
            dir,
        }
    }

    /// Where incidents go.
    pub fn events(&self) -> std::sync::mpsc::Sender<Event> {
        self.events.clone()
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where its stats are kept (updated every second): a snapshot's owner shows them.
    pub fn stats_handle(&self) -> Arc<Mutex<RingStats>> {
        self.stats.clone()
    }

    /// What it did so far (updated every second).
    pub fn stats(&self) -> RingStats {
        self.stats.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Waits for the thread (every sender gone) and returns what it did.
    pub fn finish(self) -> RingStats {
        drop(self.events);
        self.thread.join().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t: f64, stdout: String) -> RawSample {
        RawSample::onstat_u(t, stdout)
    }

    fn origin() -> Origin {
        Origin {
            server: Some("ol_test".into()),
            host: Some("db01".into()),
            wall_start: time::macros::datetime!(2026-11-22 13:30:00 UTC),
            ports: vec![9088],
            base_page_kb: 2,
        }
    }

    /// The ring leaves journald's share of a file system free: 15 %, at most 4 GB.
    #[test]
    fn the_ring_leaves_what_journald_leaves_free() {
        assert_eq!(keep_free(1000 * 100), 15 * 1000);
        assert_eq!(keep_free(1 << 40), 4 << 30);
        assert_eq!(keep_free(0), 0);
    }

    /// The bytes a minute are over the last minute of data, none before a whole minute.
    #[test]
    fn the_bytes_a_minute_are_over_the_last_minute_of_data() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut cfg = RingConfig::new(dir.path().join("ring"));
        cfg.min_free_bytes = Some(0);
        let mut w = RingWriter::open(cfg, origin()).expect("ring");
        let mut x: u64 = 7;
        // Incompressible text, 4 kB a second.
        let mut noise = || -> String {
            (0..256)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    format!("{x:016x}")
                })
                .collect()
        };
        for t in 0..59 {
            w.write(sample(f64::from(t), noise()));
        }
        assert_eq!(w.stats().written_per_min, None, "{:?}", w.stats());
        for t in 59..180 {
            w.write(sample(f64::from(t), noise()));
        }
        let per_min = w.stats().written_per_min.expect("a minute");
        // 4 kB of random hex a second: 4 bits a character, about 2 kB a second compressed,
        // 120 kB a minute.
        assert!((110_000.0..160_000.0).contains(&per_min), "{per_min}");
        // The last minute's only: a quiet minute after it reads near nothing.
        for t in 180..242 {
            w.write(sample(f64::from(t), "same".into()));
        }
        let quiet = w.stats().written_per_min.expect("a minute");
        assert!(quiet < 20_000.0, "{quiet}");
        // What it wrote is what is on disk, to the byte: flushes and the frame's end counted.
        let stats = w.close();
        assert_eq!(stats.written, stats.segments_bytes);
        let on_disk: u64 = segments(&dir.path().join("ring"))
            .expect("segments")
            .iter()
            .map(|s| s.bytes)
            .sum();
        assert_eq!(stats.written, on_disk);
    }

    /// A nearly full disk (a 64 kB tmpfs, filled but for less than the 15 % the ring leaves):
    /// the ring stops writing and says why; once there is room again, it writes again.
    #[test]
    fn a_full_disk_stops_the_ring_until_there_is_room() {
        crate::files::test_mounts::in_own_mounts(
            "collect::ring::tests::ring_on_a_nearly_full_tmpfs",
        );
    }

    #[test]
    #[ignore = "run by a_full_disk_stops_the_ring_until_there_is_room, in a namespace of its own"]
    fn ring_on_a_nearly_full_tmpfs() {
        let fs = crate::files::test_mounts::small_tmpfs();
        let mut w =
            RingWriter::open(RingConfig::new(fs.path().join("ring")), origin()).expect("ring");
        w.write(sample(0.0, "first".into()));
        assert!(w.stats().stopped.is_none(), "{:?}", w.stats());
        assert_eq!(w.stats().keep_free_bytes, Some(keep_free(64 * 1024)));
        // Leave 4 kB free: under the 9.6 kB the ring leaves.
        let filler = fs.path().join("filler");
        let free = w.stats().free_bytes.expect("free");
        std::fs::write(&filler, vec![b'x'; (free - 4096) as usize]).expect("filler");
        for t in 1..=61 {
            w.write(sample(f64::from(t), "more".into()));
        }
        let stats = w.stats().clone();
        let why = stats.stopped.as_deref().expect("stopped");
        assert!(
            why.contains("disk nearly full") && why.contains("15 %"),
            "{why}"
        );
        let samples = stats.samples;
        w.write(sample(62.0, "lost".into()));
        assert_eq!(w.stats().samples, samples, "nothing written while stopped");
        // Room again: a minute of data later it writes again.
        std::fs::remove_file(&filler).expect("rm");
        for t in 63..=125 {
            w.write(sample(f64::from(t), "again".into()));
        }
        assert!(w.stats().stopped.is_none(), "{:?}", w.stats());
        assert!(w.stats().samples > samples, "{:?}", w.stats());
        let stats = w.close();
        assert!(stats.stopped.is_none(), "{stats:?}");
    }

    #[test]
    fn a_sample_line_keeps_its_text_with_its_time_moved() {
        let line = br#"{"t":12.5,"source":"onstat -u","stdout":"x"}"#;
        let (t, rest) = lead_t(line).expect("a sample");
        assert_eq!(t, 12.5);
        assert_eq!(&line[rest..], br#","source":"onstat -u","stdout":"x"}"#);
        assert!(lead_t(br#"{"ifxtop_recording":1}"#).is_none());
    }
}
