//! `/proc/diskstats`: the kernel's I/O counters per block device (whole disks, partitions, dm
//! and md devices), in the 14-field (before 4.18), 18-field (discards, 4.18) and 20-field
//! (flushes, 5.5) layouts.

use super::lex::{self, dec_u32, dec_u64, lines, sp1, trim_blanks, PResult};
use super::Unparsed;
use crate::error::ParseError;
use nom::Parser;
use serde::Serialize;

/// The whole of one `/proc/diskstats`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct ProcDiskstats {
    pub disks: Vec<DiskStats>,
    pub unparsed: Vec<Unparsed>,
}

/// One line: a device and its counters since boot (they wrap at the width the kernel keeps
/// them in; a reader of rates takes differences). Sectors are 512 bytes whatever the device's
/// own sector size; times are milliseconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiskStats {
    pub major: u32,
    pub minor: u32,
    /// `sda`, `sda1`, `nvme0n1p2`, `dm-0`, `md127`, `cciss!c0d0` (a `/` in the name becomes `!`).
    pub device: String,
    /// Field 4: reads completed.
    pub reads_completed: u64,
    /// Field 5: adjacent reads merged into one.
    pub reads_merged: u64,
    /// Field 6: sectors read.
    pub sectors_read: u64,
    /// Field 7: milliseconds spent reading (summed over all reads).
    pub read_ms: u64,
    /// Field 8: writes completed.
    pub writes_completed: u64,
    /// Field 9: writes merged.
    pub writes_merged: u64,
    /// Field 10: sectors written.
    pub sectors_written: u64,
    /// Field 11: milliseconds spent writing.
    pub write_ms: u64,
    /// Field 12: I/Os in flight now (the only field that is not a counter).
    pub ios_in_progress: u64,
    /// Field 13: milliseconds the device had I/O in flight (busy time: %util is its rate).
    pub io_ms: u64,
    /// Field 14: milliseconds of I/O weighted by the number in flight (queue length × time).
    pub weighted_io_ms: u64,
    /// Field 15 (4.18+): discards completed.
    pub discards_completed: Option<u64>,
    /// Field 16 (4.18+): discards merged.
    pub discards_merged: Option<u64>,
    /// Field 17 (4.18+): sectors discarded.
    pub sectors_discarded: Option<u64>,
    /// Field 18 (4.18+): milliseconds spent discarding.
    pub discard_ms: Option<u64>,
    /// Field 19 (5.5+): flush requests completed.
    pub flushes_completed: Option<u64>,
    /// Field 20 (5.5+): milliseconds spent flushing.
    pub flush_ms: Option<u64>,
    /// Fields past the 20th, should a later kernel add some.
    pub extra: Vec<u64>,
}

/// What a caller is told when the input is not `/proc/diskstats` at all.
const EXPECTED: &str = "/proc/diskstats lines: major, minor, device name and 11, 15 or 17 \
     counters (`   8       0 sda 2968 1196 185596 1424 708 384 10232 1488 0 2348 2912`)";

/// Parses `/proc/diskstats`. A line that is not a device line is listed as unparsed; the input
/// is an error when no line is one.
pub fn parse(text: &str) -> Result<ProcDiskstats, ParseError> {
    let mut out = ProcDiskstats::default();
    let mut first_error: Option<ParseError> = None;
    for line in lines(text) {
        if line.is_blank() {
            continue;
        }
        match disk_line(line.text) {
            Ok(d) => out.disks.push(d),
            Err((at, needs)) => {
                if first_error.is_none() {
                    first_error = Some(line.error_at(at, format!("{EXPECTED}; {needs} here")));
                }
                Unparsed::keep(&mut out.unparsed, line);
            }
        }
    }
    if out.disks.is_empty() {
        return Err(first_error.unwrap_or_else(|| ParseError::empty(EXPECTED)));
    }
    Ok(out)
}

record!(ProcDiskstats);

impl ProcDiskstats {
    /// The line of the device named `device`.
    pub fn device(&self, device: &str) -> Option<&DiskStats> {
        self.disks.iter().find(|d| d.device == device)
    }

    /// The line of the device `major:minor`.
    pub fn by_number(&self, major: u32, minor: u32) -> Option<&DiskStats> {
        self.disks
            .iter()
            .find(|d| d.major == major && d.minor == minor)
    }
}

/// The device name: a letter first (`sda`, `dm-0`, `nvme0n1`, `md127`, `cciss!c0d0`), never a
/// blank; a number there means the line is not a device line.
fn device_name(i: &str) -> PResult<'_, &str> {
    let (rest, name) = lex::word(i)?;
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Alpha,
        )));
    }
    Ok((rest, name))
}

/// One line; on failure, where and what was needed.
fn disk_line(text: &str) -> Result<DiskStats, (&str, &'static str)> {
    let i = lex::trim_start_bytes(text, lex::is_blank_byte);
    let parsed: PResult<'_, _> = (dec_u32, sp1, dec_u32, sp1, device_name).parse(i);
    let (mut rest, (major, _, minor, _, device)) =
        parsed.map_err(|_| (i, "major, minor and a device name"))?;
    let mut n: Vec<u64> = Vec::with_capacity(17);
    loop {
        let r = trim_blanks(rest);
        if r.is_empty() {
            break;
        }
        if !rest.starts_with([' ', '\t']) {
            return Err((rest, "a counter (a number)"));
        }
        let parsed: PResult<'_, _> = dec_u64(r);
        let (after, v) = parsed.map_err(|_| (r, "a counter (a number)"))?;
        n.push(v);
        rest = after;
    }
    if !matches!(n.len(), 11 | 15 | 17) && n.len() <= 17 {
        return Err((text, "11, 15 or 17 counters after the device name"));
    }
    let opt = |k: usize| n.get(k).copied();
    Ok(DiskStats {
        major,
        minor,
        device: device.to_string(),
        reads_completed: n[0],
        reads_merged: n[1],
        sectors_read: n[2],
        read_ms: n[3],
        writes_completed: n[4],
        writes_merged: n[5],
        sectors_written: n[6],
        write_ms: n[7],
        ios_in_progress: n[8],
        io_ms: n[9],
        weighted_io_ms: n[10],
        discards_completed: opt(11),
        discards_merged: opt(12),
        sectors_discarded: opt(13),
        discard_ms: opt(14),
        flushes_completed: opt(15),
        flush_ms: opt(16),
        extra: n.get(17..).map(<[u64]>::to_vec).unwrap_or_default(),
    })
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_three_layouts() {
        let d = disk_line("   8       0 sda 2968 1196 185596 1424 708 384 10232 1488 0 2348 2912")
            .expect("14");
        assert_eq!((d.major, d.minor, d.device.as_str()), (8, 0, "sda"));
        assert_eq!(
            (d.sectors_read, d.weighted_io_ms, d.discards_completed),
            (185_596, 2912, None)
        );
        let d = disk_line(" 259 0 nvme0n1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15").expect("18");
        assert_eq!(
            (d.discards_completed, d.discard_ms, d.flush_ms),
            (Some(12), Some(15), None)
        );
        let d = disk_line(" 253 0 dm-0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17").expect("20");
        assert_eq!((d.flushes_completed, d.flush_ms), (Some(16), Some(17)));
        let d = disk_line(" 8 0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18").expect("21");
        assert_eq!(d.extra, vec![18]);
    }

    #[test]
    fn not_device_lines() {
        assert!(disk_line("8 0 sda 1 2 3").is_err());
        assert!(disk_line("8 0 sda 1 2 3 4 5 6 7 8 9 10 11 12").is_err());
        assert!(disk_line("8 0 sda 1 2 3 4 5 6 7 8 9 10 x").is_err());
        assert!(disk_line("sda 8 0 1 2 3 4 5 6 7 8 9 10 11").is_err());
        assert!(disk_line("8 0 sda 1 2 3 4 5 6 7 8 9 10 -11").is_err());
        // `onstat -g tpf`'s thread row: 18 numbers, a number where the name goes.
        assert!(
            disk_line("945 1969 0 0 0 6181 1782 2069 13 0 0 0 0 16183 7348 743580 0 6").is_err()
        );
    }
}
