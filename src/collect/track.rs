//! A recording's database-time track: the samples of database time the screen took while it
//! recorded (one line per `onstat -u` moment, encoded by `model/activity.rs`), kept beside the
//! raw outputs so `ifxtop ash` reads an hour in seconds instead of parsing gigabytes again.
//!
//! A zstd recording is a run of zstd frames, one every [`FRAME_S`] seconds of recording (the
//! raw lines, flushed each second as before); after each comes a zstd *skippable frame*
//! (RFC 8878 §3.1.2) holding that stretch's track lines, compressed. Every zstd reader (an
//! older ifxtop, `zstdcat`) skips skippable frames, so the recording's text is what it always
//! was; [`read_track`] reads only the skippable frames, stepping over the others by their block
//! headers without unpacking them.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Seconds of recording per zstd frame: a frame starts its compression history afresh, and at
/// 10 s the file grew 8 % against one unbroken frame (a 5,000-session demo recording: one
/// frame per second grew it 65 %); a crash loses the track of the frame being written.
pub(crate) const FRAME_S: f64 = 10.0;

/// The largest zstd window a recording's reader accepts, its raw lines' frames and its track's
/// (2^27 = 128 MB, zstd's own default limit and the outputs' memory budget): a frame asking for
/// more is refused, not allocated. ifxtop writes level 3 (a 2 MB window); `zstd -19` asks 8 MB,
/// `--ultra -22` and `--long` 128 MB.
pub(crate) const WINDOW_LOG_MAX: u32 = 27;

/// A zstd frame's magic number.
const ZSTD_FRAME: u32 = 0xFD2F_B528;
/// The skippable frame's magic number the track uses (RFC 8878 allows 0x184D2A50-5F).
const SKIPPABLE: u32 = 0x184D_2A5E;
/// What a track frame's content starts with.
const TAG: &[u8; 8] = b"IFXTRACK";
/// A track frame's largest content (a skippable frame's size is 32 bits).
const MAX_FRAME: usize = u32::MAX as usize;

/// A skippable frame holding `lines` (each a line of the track), compressed. A tracked
/// recording has one after every data frame, empty or not, so a reader tells a recording with
/// a track from one without by the frame after the first.
pub(crate) fn frame(lines: &[String]) -> std::io::Result<Vec<u8>> {
    let mut text = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for l in lines {
        text.extend_from_slice(l.as_bytes());
        text.push(b'\n');
    }
    let packed = zstd::bulk::compress(&text, 3)?;
    let size = TAG.len() + packed.len();
    if size > MAX_FRAME {
        return Err(std::io::Error::other("a track frame past 4 GB"));
    }
    let mut out = Vec::with_capacity(8 + size);
    out.extend_from_slice(&SKIPPABLE.to_le_bytes());
    out.extend_from_slice(&u32::try_from(size).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(TAG);
    out.extend_from_slice(&packed);
    Ok(out)
}

/// What reading a track found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackRead {
    /// Track frames read.
    pub frames: usize,
    /// Lines handed on.
    pub lines: usize,
    /// Whether the file was read to its end (not stopped by damage, a cut or the reader).
    pub complete: bool,
    /// Why reading stopped early.
    pub problem: Option<String>,
    /// The frame that could not be unpacked, when one stopped it (damaged, or unpacking past
    /// the memory budget): its lines are not all known.
    pub damaged: Option<String>,
}

/// Where a recording's track frames are (each one's content: offset and length), and how the
/// walk over the file ended (`complete`, `problem`); none when the file is not zstd or holds no
/// track.
struct Frames {
    at: Vec<(u64, u64)>,
    complete: bool,
    problem: Option<String>,
}

type File = std::io::BufReader<std::fs::File>;

/// Walks the frames of the file, unpacking none.
fn frames(f: &mut File, len: u64) -> std::io::Result<Option<Frames>> {
    let mut out = Frames {
        at: Vec::new(),
        complete: false,
        problem: None,
    };
    let mut at = 0u64;
    let mut data_frames = 0usize;
    loop {
        if at == len {
            out.complete = true;
            break;
        }
        let Some(head) = read_at::<8>(f, at, len)? else {
            out.problem = Some(format!("cut at byte {at}"));
            break;
        };
        let magic = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
        if magic == ZSTD_FRAME {
            match frame_len(f, at, len)? {
                Some(n) => at += n,
                None => {
                    out.problem = Some(format!("a frame cut at byte {at}"));
                    break;
                }
            }
            data_frames += 1;
            // Two data frames in a row at the start: no track.
            if data_frames >= 2 && out.at.is_empty() {
                return Ok(None);
            }
            continue;
        }
        if magic & 0xFFFF_FFF0 != 0x184D_2A50 {
            if data_frames == 0 {
                return Ok(None); // not zstd
            }
            out.problem = Some(format!("not a zstd frame at byte {at}"));
            break;
        }
        let size = u64::from(u32::from_le_bytes([head[4], head[5], head[6], head[7]]));
        if at + 8 + size > len {
            out.problem = Some(format!("a track frame cut at byte {at}"));
            break;
        }
        let ours = magic == SKIPPABLE
            && size >= TAG.len() as u64
            && read_at::<8>(f, at + 8, len)?.is_some_and(|t| &t == TAG);
        if ours {
            out.at.push((at + 8, size));
        }
        at += 8 + size; // another tool's skippable frame is stepped over
    }
    Ok((!out.at.is_empty()).then_some(out))
}

/// Hands each line of the track frame whose content is at `(at, size)` to `each`, unpacked as
/// it is read: at most the outputs' memory budget (`source/budget.rs`, 128 MB) unpacked from
/// one frame, one line held at a time (a frame of 124 kB that unpacks to 2 GB cost `ifxtop ash`
/// 2 GB). How many lines, or why the frame is damaged; `Ok(None)` when `each` said stop.
fn unpack(
    f: &mut File,
    (at, size): (u64, u64),
    each: &mut dyn FnMut(&str) -> bool,
) -> Result<Option<usize>, String> {
    let cap = crate::source::budget::limit();
    let damaged = |e: std::io::Error| format!("a damaged track frame at byte {at}: {e}");
    f.seek(SeekFrom::Start(at + TAG.len() as u64))
        .map_err(|e| format!("cannot read the track frame at byte {at}: {e}"))?;
    let packed = Read::take(&mut *f, size.saturating_sub(TAG.len() as u64));
    let mut d = zstd::stream::read::Decoder::new(packed).map_err(damaged)?;
    d.window_log_max(WINDOW_LOG_MAX).map_err(damaged)?;
    // One byte past the cap tells a frame that is too big from one that fits.
    let mut text = std::io::BufReader::new(Read::take(d, cap.saturating_add(1)));
    let mut line = Vec::new();
    let mut unpacked = 0u64;
    let mut n = 0;
    loop {
        line.clear();
        let got = std::io::BufRead::read_until(&mut text, b'\n', &mut line).map_err(damaged)?;
        if got == 0 {
            return Ok(Some(n));
        }
        unpacked += got as u64;
        if unpacked > cap {
            return Err(format!(
                "the track frame at byte {at} unpacks to more than {} (the memory budget of \
                 outputs): damaged, or a decompression bomb",
                crate::files::cap_text(cap)
            ));
        }
        let text = std::str::from_utf8(&line)
            .map_err(|_| format!("a track frame not UTF-8 at byte {at}"))?;
        let text = text.strip_suffix('\n').unwrap_or(text);
        n += 1;
        if !each(text.strip_suffix('\r').unwrap_or(text)) {
            return Ok(None);
        }
    }
}

/// The file's track frames, found, with what reading them has given so far.
struct Reader {
    f: File,
    at: Vec<(u64, u64)>,
    read: TrackRead,
}

impl Reader {
    /// None when the file is not zstd or holds no track.
    fn open(path: &Path) -> std::io::Result<Option<Reader>> {
        let mut f = std::io::BufReader::with_capacity(64 * 1024, crate::files::open_regular(path)?);
        let len = f.get_ref().metadata()?.len();
        Ok(frames(&mut f, len)?.map(|found| Reader {
            f,
            at: found.at,
            read: TrackRead {
                frames: 0,
                lines: 0,
                complete: found.complete,
                problem: found.problem,
                damaged: None,
            },
        }))
    }

    /// Hands the lines of frame `i` to `each`: how many, or none when reading stopped (the
    /// frame damaged, or `each` said so).
    fn frame(&mut self, i: usize, each: &mut dyn FnMut(&str) -> bool) -> Option<usize> {
        let mut lines = 0;
        let mut counted = |line: &str| {
            lines += 1;
            each(line)
        };
        let done = unpack(&mut self.f, self.at[i], &mut counted);
        self.read.lines += lines;
        match done {
            Ok(Some(n)) => {
                self.read.frames += 1;
                Some(n)
            }
            Ok(None) => {
                self.read.frames += 1;
                self.stop("stopped".into())
            }
            Err(e) => {
                self.read.damaged = Some(e.clone());
                self.stop(e)
            }
        }
    }

    fn stop(&mut self, why: String) -> Option<usize> {
        self.read.complete = false;
        self.read.problem = Some(why);
        None
    }
}

/// Reads the track of the zstd recording at `path`, handing each line to `each` in order (it
/// returns false to stop). `None` when the file is not zstd or holds no track (a recording
/// made before the track, or written without one).
pub fn read_track(
    path: &Path,
    mut each: impl FnMut(&str) -> bool,
) -> std::io::Result<Option<TrackRead>> {
    let Some(mut r) = Reader::open(path)? else {
        return Ok(None);
    };
    for i in 0..r.at.len() {
        if r.frame(i, &mut each).is_none() {
            break;
        }
    }
    Ok(Some(r.read))
}

/// `read_track` of where the track starts and ends only: the first frame with lines, then the
/// last one with lines (a frame may hold none); the frames between are stepped over, not
/// unpacked.
pub fn read_track_ends(
    path: &Path,
    mut each: impl FnMut(&str) -> bool,
) -> std::io::Result<Option<TrackRead>> {
    let Some(mut r) = Reader::open(path)? else {
        return Ok(None);
    };
    let n = r.at.len();
    let mut first = n;
    for i in 0..n {
        match r.frame(i, &mut each) {
            None => return Ok(Some(r.read)),
            Some(0) => {}
            Some(_) => {
                first = i;
                break;
            }
        }
    }
    for i in (first + 1..n).rev() {
        if r.frame(i, &mut each) != Some(0) {
            break;
        }
    }
    Ok(Some(r.read))
}

/// `N` bytes at `at`, or none past the end.
fn read_at<const N: usize>(
    f: &mut (impl Read + Seek),
    at: u64,
    len: u64,
) -> std::io::Result<Option<[u8; N]>> {
    if at + N as u64 > len {
        return Ok(None);
    }
    let mut b = [0u8; N];
    f.seek(SeekFrom::Start(at))?;
    f.read_exact(&mut b)?;
    Ok(Some(b))
}

/// The length of the zstd frame at `at`, from its header and its blocks' headers (RFC 8878
/// §3.1.1), without unpacking it; none when it is cut or not valid.
fn frame_len(f: &mut (impl Read + Seek), at: u64, len: u64) -> std::io::Result<Option<u64>> {
    let Some([descriptor]) = read_at::<1>(f, at + 4, len)? else {
        return Ok(None);
    };
    let fcs_flag = descriptor >> 6;
    let single_segment = descriptor & 0x20 != 0;
    let checksum = descriptor & 0x04 != 0;
    if descriptor & 0x08 != 0 {
        return Ok(None); // the reserved bit
    }
    let dictionary = [0u64, 1, 2, 4][usize::from(descriptor & 3)];
    let content_size = match fcs_flag {
        0 => u64::from(single_segment),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let window = u64::from(!single_segment);
    let mut p = at + 4 + 1 + window + dictionary + content_size;
    loop {
        let Some(h) = read_at::<3>(f, p, len)? else {
            return Ok(None);
        };
        let h = u32::from(h[0]) | u32::from(h[1]) << 8 | u32::from(h[2]) << 16;
        let last = h & 1 != 0;
        let size = u64::from(h >> 3);
        let body = match (h >> 1) & 3 {
            0 | 2 => size, // raw, compressed
            1 => 1,        // one byte repeated
            _ => return Ok(None),
        };
        p += 3 + body;
        if p > len {
            return Ok(None);
        }
        if last {
            break;
        }
    }
    if checksum {
        p += 4;
    }
    Ok((p <= len).then_some(p - at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Frames of every kind zstd writes (content size known or not, a checksum, one block or
    /// many, raw and repeated blocks): the walk over their headers finds each frame's length as
    /// zstd's own `ZSTD_findFrameCompressedSize` does.
    #[test]
    fn frame_lengths_are_zstds() {
        let text: Vec<u8> = (0..400_000u32)
            .flat_map(|i| format!("{i} {}\n", i % 97).into_bytes())
            .collect();
        let noise: Vec<u8> = (0..300_000u64)
            .map(|i| (i.wrapping_mul(6_364_136_223_846_793_005) >> 33) as u8)
            .collect();
        let zeros = vec![0u8; 500_000];
        let mut file = Vec::new();
        let mut lens = Vec::new();
        for (data, checksum, size_known) in [
            (&text[..], false, false),
            (&text[..], true, true),
            (&noise[..], true, false),
            (&zeros[..], false, true),
            (&b"x"[..], false, true),
            (&b""[..], true, false),
        ] {
            let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).expect("an encoder");
            enc.include_checksum(checksum).expect("set");
            if size_known {
                enc.set_pledged_src_size(Some(data.len() as u64))
                    .expect("set");
                enc.include_contentsize(true).expect("set");
            }
            enc.write_all(data).expect("written");
            let bytes = enc.finish().expect("finished");
            let zstds = zstd::zstd_safe::find_frame_compressed_size(&bytes).expect("a frame");
            assert_eq!(zstds, bytes.len());
            lens.push(bytes.len() as u64);
            file.extend_from_slice(&bytes);
        }
        let len = file.len() as u64;
        let mut cur = std::io::Cursor::new(file);
        let mut at = 0;
        for want in lens {
            assert_eq!(frame_len(&mut cur, at, len).expect("read"), Some(want));
            at += want;
        }
        // Cut short, the last frame has no length.
        let cut = cur.into_inner();
        let short = cut.len() as u64 - 1;
        let mut cur = std::io::Cursor::new(cut);
        let mut at = 0;
        let mut last = None;
        while let Some(n) = frame_len(&mut cur, at, short).expect("read") {
            at += n;
            last = Some(at);
        }
        assert!(last.is_some_and(|a| a < short), "{last:?} {short}");
    }

    fn file_of(parts: &[&[u8]]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().expect("a temp file");
        for p in parts {
            f.write_all(p).expect("written");
        }
        f
    }

    fn data_frame(text: &str) -> Vec<u8> {
        zstd::stream::encode_all(text.as_bytes(), 3).expect("packed")
    }

    fn lines_of(path: &Path) -> (Option<TrackRead>, Vec<String>) {
        let mut got = Vec::new();
        let read = read_track(path, |l| {
            got.push(l.to_string());
            true
        })
        .expect("read");
        (read, got)
    }

    /// Data frames and track frames in turn: the track's lines in order, the data untouched
    /// for every zstd reader (the skippable frames skipped).
    #[test]
    fn the_track_is_read_past_the_data_and_skipped_by_zstd() {
        let t1 = frame(&["a".into(), "b".into()]).expect("packed");
        let middle = frame(&["m".into()]).expect("packed");
        let t2 = frame(&["c".into()]).expect("packed");
        let empty = frame(&[]).expect("packed");
        let f = file_of(&[
            &data_frame("{\"header\":1}\nzero\n"),
            &empty,
            &data_frame("one\ntwo\n"),
            &t1,
            &data_frame("three\n"),
            &middle,
            &data_frame("four\n"),
            &t2,
            &data_frame("five\n"),
            &empty,
        ]);
        let (read, lines) = lines_of(f.path());
        assert_eq!(lines, ["a", "b", "m", "c"]);
        let read = read.expect("a track");
        assert!(
            read.complete && read.frames == 5 && read.problem.is_none(),
            "{read:?}"
        );
        // The ends alone: the first frame with lines (after the empty first one), and from the
        // end the last with lines (after the empty last one); the middle is never unpacked.
        let mut ends = Vec::new();
        let read = read_track_ends(f.path(), |l| {
            ends.push(l.to_string());
            true
        })
        .expect("read")
        .expect("a track");
        assert_eq!(ends, ["a", "b", "c"]);
        assert!(read.complete && read.frames == 4, "{read:?}");
        let text = zstd::stream::decode_all(std::fs::File::open(f.path()).expect("open"))
            .expect("unpacked");
        assert_eq!(text, b"{\"header\":1}\nzero\none\ntwo\nthree\nfour\nfive\n");
    }

    /// No track (a recording from before it, plain text), and one cut by a crash: the cut
    /// track says where it stopped and keeps what came before.
    #[test]
    fn no_track_and_a_cut_track() {
        let old = file_of(&[&data_frame("{\"header\":1}\n"), &data_frame("one\n")]);
        assert_eq!(lines_of(old.path()).0, None);
        let plain = file_of(&[b"{\"header\":1}\n"]);
        assert_eq!(lines_of(plain.path()).0, None);
        let t1 = frame(&["a".into()]).expect("packed");
        let data = data_frame("three\n");
        let cut = file_of(&[
            &data_frame("{\"header\":1}\none\n"),
            &t1,
            &data[..data.len() - 2],
        ]);
        let (read, lines) = lines_of(cut.path());
        assert_eq!(lines, ["a"]);
        let read = read.expect("a track");
        assert!(!read.complete && read.problem.is_some(), "{read:?}");
    }
}
