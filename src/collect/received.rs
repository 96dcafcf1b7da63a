//! What a viewer received since it attached, kept so it can seek back over it as a replay
//! does: every sample line as it came, in private temporary files (0600, unlinked when made:
//! they go away with the viewer, however it ends), zstd, about a frame a second, with each
//! sample's time, source and line indexed in memory as it is written (nothing is read back to
//! find a moment).
//!
//! Bounded: at most `max_bytes` on disk, in two segments. When the newer reaches half of it,
//! the older is let go and a new segment starts with the last output of every source (at most
//! [`MAX_SEED_SOURCES`] sources, [`MAX_SEED_BYTES`] of them, held in memory for that), so what is
//! kept always replays whole from its first line: a source polled every 10 minutes is there
//! however far back the kept history starts.

use crate::collect::record::{Lines, Opener, Recording, RecordingHeader};
use crate::source::Source;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex};

/// The disk a viewer's history may take, unless told otherwise: at the 350 KB/s of a
/// 5,000-session instance's feed (docs/share.md), 6 to 12 minutes; at 300 sessions, hours.
pub const DEFAULT_MAX_BYTES: u64 = 256 << 20;
/// A frame ends when the samples reach a new second, or at this much text.
const FRAME_TEXT: usize = 4 << 20;
/// The last outputs kept for the start of the next segment: this many sources at most...
pub const MAX_SEED_SOURCES: usize = 4096;
/// ...and this many bytes of them (the oldest let go first).
pub const MAX_SEED_BYTES: usize = 64 << 20;
/// zstd's level (the feed's own).
const LEVEL: i32 = 3;

/// One temporary file of the history.
struct Segment {
    file: Arc<File>,
    /// Bytes of whole frames written.
    bytes: u64,
    /// Lines in those frames.
    lines: u64,
    /// Lines at its start that repeat older outputs (the last of every source): read only
    /// when it is the first segment kept.
    seeds: u64,
    /// Each sample's time, source and line (from 1) in this file.
    index: Vec<(f64, Source, u64)>,
}

impl Segment {
    /// A new file in `dir` (the temporary directory when `None`).
    fn new(dir: Option<&std::path::Path>) -> std::io::Result<Segment> {
        // Created and unlinked at once (`tempfile`), then 0600 (the SQL of the server's
        // sessions is in it).
        let file = match dir {
            Some(d) => tempfile::tempfile_in(d)?,
            None => tempfile::tempfile()?,
        };
        file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
        Ok(Segment {
            file: Arc::new(file),
            bytes: 0,
            lines: 0,
            seeds: 0,
            index: Vec::new(),
        })
    }

    /// Writes `text` (whole lines) as one frame; `samples` are its lines' times and sources.
    fn write(&mut self, text: &[u8], samples: &[(f64, Source)]) -> std::io::Result<()> {
        let frame = zstd::bulk::compress(text, LEVEL)?;
        self.file.write_all_at(&frame, self.bytes)?;
        self.bytes += frame.len() as u64;
        for (i, (t, source)) in samples.iter().enumerate() {
            self.index.push((*t, *source, self.lines + 1 + i as u64));
        }
        self.lines += samples.len() as u64;
        Ok(())
    }
}

#[derive(Default)]
struct Inner {
    older: Option<Segment>,
    newer: Option<Segment>,
    /// The frame being gathered: its text, its samples, and its samples' second.
    text: Vec<u8>,
    frame: Vec<(f64, Source)>,
    second: Option<u64>,
    /// The last line of every source, for the start of the next segment.
    latest: rustc_hash::FxHashMap<Source, (f64, Arc<[u8]>)>,
    latest_bytes: usize,
    /// Why keeping stopped (the disk is full), once it did: what was kept can still be played.
    stopped: Option<String>,
}

/// A viewer's received history.
pub struct Received {
    header: RecordingHeader,
    max_bytes: u64,
    /// Where its files are made (the temporary directory when `None`).
    dir: Option<std::path::PathBuf>,
    inner: Mutex<Inner>,
}

/// How much is kept, for the screen.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Kept {
    pub bytes: u64,
    pub stopped: Option<String>,
}

impl Received {
    /// An empty history of the feed whose header is `header`, at most `max_bytes` on disk.
    pub fn new(header: RecordingHeader, max_bytes: u64) -> Received {
        Received {
            header,
            max_bytes: max_bytes.max(1),
            dir: None,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The same, its files made in `dir`.
    pub fn in_dir(mut self, dir: &std::path::Path) -> Received {
        self.dir = Some(dir.to_path_buf());
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps one sample: `line` is its line as received (without its newline).
    pub fn push(&self, line: &[u8], source: Source, t: f64) {
        let mut g = self.lock();
        let inner = &mut *g;
        if inner.stopped.is_some() {
            return;
        }
        let second = t.max(0.0) as u64;
        if inner.second.is_some_and(|s| s != second) || inner.text.len() >= FRAME_TEXT {
            self.end_frame(inner);
        }
        inner.second = Some(second);
        let start = inner.text.len();
        inner.text.extend_from_slice(line);
        inner.text.push(b'\n');
        inner.frame.push((t, source));
        let kept: Arc<[u8]> = Arc::from(&inner.text[start..]);
        inner.latest_bytes += kept.len();
        if let Some((_, old)) = inner.latest.insert(source, (t, kept)) {
            inner.latest_bytes -= old.len();
        }
        while inner.latest.len() > MAX_SEED_SOURCES || inner.latest_bytes > MAX_SEED_BYTES {
            let Some(oldest) = inner
                .latest
                .iter()
                .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
                .map(|(s, _)| *s)
            else {
                break;
            };
            if let Some((_, gone)) = inner.latest.remove(&oldest) {
                inner.latest_bytes -= gone.len();
            }
        }
    }

    /// Writes the frame gathered so far; a new segment when the newer is half the cap.
    fn end_frame(&self, inner: &mut Inner) {
        if inner.frame.is_empty() {
            return;
        }
        let text = std::mem::take(&mut inner.text);
        let frame = std::mem::take(&mut inner.frame);
        let written = (|| -> std::io::Result<()> {
            if inner.newer.is_none() {
                inner.newer = Some(Segment::new(self.dir.as_deref())?);
            }
            let Some(newer) = inner.newer.as_mut() else {
                return Ok(());
            };
            newer.write(&text, &frame)?;
            if newer.bytes >= self.max_bytes / 2 {
                // The older goes (its file with it); the new one starts from the last outputs.
                let mut next = Segment::new(self.dir.as_deref())?;
                let mut seeds: Vec<(f64, Source, &Arc<[u8]>)> = inner
                    .latest
                    .iter()
                    .map(|(s, (t, line))| (*t, *s, line))
                    .collect();
                seeds.sort_by(|a, b| a.0.total_cmp(&b.0));
                let mut seed_text = Vec::new();
                let mut seed_samples = Vec::with_capacity(seeds.len());
                for (t, source, line) in seeds {
                    seed_text.extend_from_slice(line);
                    seed_samples.push((t, source));
                }
                next.write(&seed_text, &seed_samples)?;
                next.seeds = next.lines;
                inner.older = inner.newer.replace(next);
            }
            Ok(())
        })();
        if let Err(e) = written {
            inner.stopped = Some(format!("the history stopped being kept: {e}"));
            inner.latest.clear();
            inner.latest_bytes = 0;
        }
        // The text's room serves the next frame.
        let mut text = text;
        text.clear();
        inner.text = text;
    }

    /// How much is on disk, and why keeping stopped if it did.
    pub fn kept(&self) -> Kept {
        let g = self.lock();
        Kept {
            bytes: g.older.iter().chain(&g.newer).map(|s| s.bytes).sum(),
            stopped: g.stopped.clone(),
        }
    }

    /// Everything kept up to now, as a recording a player can play (the frame being gathered
    /// written first). `None` when nothing is kept.
    pub fn recording(&self) -> Option<Arc<Recording>> {
        let mut g = self.lock();
        self.end_frame(&mut g);
        let segs: Vec<&Segment> = g.older.iter().chain(&g.newer).collect();
        if segs.iter().all(|s| s.index.is_empty()) {
            return None;
        }
        // The first segment whole; a later one without its seeds (the first holds them).
        let mut parts = Vec::new();
        let mut index = Vec::new();
        let mut lines = 0u64;
        for (k, s) in segs.iter().enumerate() {
            let skip = if k == 0 { 0 } else { s.seeds };
            let base = lines;
            index.extend(
                s.index
                    .iter()
                    .filter(|(_, _, l)| *l > skip)
                    .map(|(t, src, l)| (*t, *src, base + (l - skip))),
            );
            lines += s.lines - skip;
            parts.push((s.file.clone(), s.bytes, skip));
        }
        let open: Opener = Arc::new(move || open_parts(&parts));
        Some(Arc::new(Recording::indexed(
            Some(self.header.clone()),
            open,
            index,
            lines,
        )))
    }
}

/// The lines of `parts` (a file, its whole frames' bytes, the lines at its start to pass
/// over), one after the other.
fn open_parts(parts: &[(Arc<File>, u64, u64)]) -> Result<Lines, String> {
    let mut all: Box<dyn Read + Send> = Box::new(std::io::empty());
    for (file, end, skip) in parts {
        let at = At {
            file: file.clone(),
            pos: 0,
            end: *end,
        };
        let d = zstd::stream::read::Decoder::new(at).map_err(|e| e.to_string())?;
        let mut r = BufReader::new(d);
        for _ in 0..*skip {
            r.skip_until(b'\n').map_err(|e| e.to_string())?;
        }
        all = Box::new(all.chain(r));
    }
    Ok(Box::new(BufReader::new(all)))
}

/// A file read from `pos` to `end` at its own position (the writer appends at its own).
struct At {
    file: Arc<File>,
    pos: u64,
    end: u64,
}

impl Read for At {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.end.saturating_sub(self.pos);
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        if n == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..n], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::replay::Player;
    use std::time::Duration;

    fn header() -> RecordingHeader {
        RecordingHeader::new(
            Some("ol_test"),
            None,
            time::OffsetDateTime::UNIX_EPOCH,
            &[],
            2,
        )
    }

    fn line(source: Source, t: f64, out: &str) -> Vec<u8> {
        serde_json::to_vec(&crate::collect::sample::RawSample {
            t,
            source: source.label().to_string(),
            argv: vec!["onstat".into()],
            exit: Some(0),
            stdout: out.to_string(),
            stderr: String::new(),
        })
        .expect("json")
    }

    /// `len` letters that do not compress, different for each `seed`.
    fn noise(seed: u64, len: usize) -> String {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                char::from(b'a' + (x % 26) as u8)
            })
            .collect()
    }

    fn played(rec: Arc<Recording>, to: f64) -> Vec<(f64, String)> {
        let mut p = Player::new(rec);
        let mut played = p.seek(Duration::from_secs_f64(to));
        std::iter::from_fn(|| played.next_update())
            .map(|u| (u.t.as_secs_f64(), u.source.label().to_string()))
            .collect()
    }

    #[test]
    fn what_was_received_plays_back_in_time_order_up_to_now() {
        let r = Received::new(header(), DEFAULT_MAX_BYTES);
        assert!(r.recording().is_none());
        for t in 100..110 {
            r.push(
                &line(Source::OnstatU, t as f64, "u"),
                Source::OnstatU,
                t as f64,
            );
            r.push(
                &line(Source::OnstatGAth, t as f64 + 0.2, "ath"),
                Source::OnstatGAth,
                t as f64 + 0.2,
            );
        }
        // The last second is in the recording too (its frame written when asked).
        let rec = r.recording().expect("kept");
        assert_eq!(rec.len(), 20);
        assert_eq!(rec.time_of(0), Some(Duration::from_secs(100)));
        let got = played(rec, 104.5);
        assert_eq!(got.len(), 10, "{got:?}");
        assert_eq!(got.last().map(|g| g.0), Some(104.2));
        // Received later: in the next recording, the earlier one as it was.
        r.push(&line(Source::OnstatU, 110.0, "u"), Source::OnstatU, 110.0);
        assert_eq!(r.recording().expect("kept").len(), 21);
    }

    /// At the cap the oldest segment goes, and what is kept still starts with every source's
    /// last output (a slow source's, received once, long ago).
    #[test]
    fn it_is_bounded_and_replays_whole_after_the_oldest_went() {
        // Outputs that do not compress: each second takes its bytes on disk.
        let cap = 64 * 1024;
        let r = Received::new(header(), cap);
        r.push(
            &line(Source::OnstatGAth, 1.0, "ath"),
            Source::OnstatGAth,
            1.0,
        );
        for t in 2..400u64 {
            let t = t as f64;
            r.push(
                &line(Source::OnstatU, t, &noise(t as u64, 2000)),
                Source::OnstatU,
                t,
            );
        }
        let kept = r.kept();
        assert!(kept.bytes <= cap + 8 * 1024, "{kept:?}");
        assert_eq!(kept.stopped, None);
        let rec = r.recording().expect("kept");
        let got = played(rec.clone(), 400.0);
        assert_eq!(
            got.first(),
            Some(&(1.0, "onstat -g ath".to_string())),
            "{:?}",
            &got[..3]
        );
        let first_u = got.iter().find(|g| g.1 == "onstat -u").map(|g| g.0);
        assert!(
            first_u.is_some_and(|t| t > 100.0),
            "{first_u:?}: the oldest is gone"
        );
        assert_eq!(got.last().map(|g| g.0), Some(399.0));
        // Each onstat -u once, in time order.
        let us: Vec<f64> = got
            .iter()
            .filter(|g| g.1 == "onstat -u")
            .map(|g| g.0)
            .collect();
        assert!(us.windows(2).all(|w| w[1] == w[0] + 1.0), "{us:?}");
    }

    #[test]
    fn its_files_are_private_and_gone_from_the_directory() {
        let s = Segment::new(None).expect("temp file");
        use std::os::unix::fs::PermissionsExt;
        let m = s.file.metadata().expect("meta");
        assert_eq!(m.permissions().mode() & 0o777, 0o600);
        assert_eq!(std::os::unix::fs::MetadataExt::nlink(&m), 0, "unlinked");
    }

    /// A disk that fills (a 64 kB tmpfs): the keeping stops and says why; what was kept still
    /// plays, whole, up to where it stopped.
    #[test]
    fn a_full_disk_stops_the_keeping_and_what_was_kept_still_plays() {
        crate::files::test_mounts::in_own_mounts(
            "collect::received::tests::keeping_into_a_full_tmpfs",
        );
    }

    #[test]
    #[ignore = "run by a_full_disk_stops_the_keeping_and_what_was_kept_still_plays, in a namespace of its own"]
    fn keeping_into_a_full_tmpfs() {
        let dir = crate::files::test_mounts::small_tmpfs();
        let r = Received::new(header(), DEFAULT_MAX_BYTES).in_dir(dir.path());
        for t in 1..200u64 {
            let t = t as f64;
            r.push(
                &line(Source::OnstatU, t, &noise(t as u64, 4000)),
                Source::OnstatU,
                t,
            );
        }
        let kept = r.kept();
        let why = kept.stopped.clone().expect("stopped");
        assert!(why.contains("No space left on device"), "{why}");
        assert!(kept.bytes > 0 && kept.bytes <= 64 * 1024, "{kept:?}");
        let rec = r.recording().expect("what was kept");
        let got = played(rec, 200.0);
        assert!(!got.is_empty());
        assert!(
            got.windows(2).all(|w| w[1].0 == w[0].0 + 1.0),
            "whole, in order: {got:?}"
        );
        assert_eq!(got[0].0, 1.0);
    }
}
