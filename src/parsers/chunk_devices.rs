//! The chunk → block device resolution: which requests it takes (`stat -L` of the chunk paths,
//! then small sysfs files under `/sys/dev/block`), and from their answers each chunk's device,
//! what that device is (an LVM volume, a multipath map, a partition, the filesystem of a cooked
//! file) and the whole disks under it — or, plainly, why it cannot be known.
//!
//! Pure. [`Resolver::needs`] says what to ask next given the answers so far; the collector asks
//! (through the command runner, so it works locally, over ssh and in the demo), hands the answers
//! back, and delivers [`Resolver::transcript`] as one sample: a recording keeps it, and [`parse`]
//! reads a transcript back through the very same walk, so a replay resolves as the live run did.

use super::lex::{self, dec_u64, lines, sp1, trim_blanks, PResult};
use super::sysblock::{self, DevNum, DevType, DmTarget};
use super::Unparsed;
use crate::error::ParseError;
use nom::bytes::complete::take_while1;
use nom::Parser;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// What `stat -L -c` prints per path: the mode in hex (`61b0`), the device's major and minor in
/// hex (for a device file), the device the file is on in decimal (for a cooked file), the name.
/// GNU coreutils (RHEL 7's 8.22 included) and BusyBox both know these.
pub const STAT_FORMAT: &str = "%f %t %T %d %n";

/// Layers of devices followed below a chunk's device at most (LVM on multipath on a partition
/// is four); deeper is a loop in what sysfs said.
const MAX_DEPTH: usize = 16;
/// Requests one resolution makes at most (a few per device): what a machine with thousands of
/// paths to one LUN still fits in.
pub const MAX_ASKS: usize = 4_000;

/// One request of the resolution.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ask {
    /// `stat -L -c '%f %t %T %d %n' -- PATHS`: every chunk path in one process.
    Stat(Vec<String>),
    /// A file read (`cat PATH`).
    Read(String),
    /// A directory listed (`ls PATH`).
    List(String),
}

impl Ask {
    /// The argv of the stat command for `paths`.
    pub fn stat_argv(paths: &[String]) -> Vec<String> {
        let mut argv: Vec<String> = ["stat", "-L", "-c", STAT_FORMAT, "--"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        argv.extend(paths.iter().cloned());
        argv
    }

    /// How the transcript names it: `stat -L -c '%f %t %T %d %n' -- /a /b`, `cat PATH`,
    /// `ls PATH`.
    pub fn header(&self) -> String {
        match self {
            Ask::Stat(paths) => format!("stat -L -c '{STAT_FORMAT}' -- {}", paths.join(" ")),
            Ask::Read(p) => format!("cat {p}"),
            Ask::List(p) => format!("ls {p}"),
        }
    }

    /// The inverse of `header`.
    fn from_header(h: &str) -> Option<Ask> {
        let stat = format!("stat -L -c '{STAT_FORMAT}' --");
        if let Some(rest) = h.strip_prefix(&stat) {
            let paths: Vec<String> = rest
                .split([' ', '\t'])
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect();
            return Some(Ask::Stat(paths));
        }
        if let Some(p) = h.strip_prefix("cat ") {
            return is_path(p).then(|| Ask::Read(p.to_string()));
        }
        if let Some(p) = h.strip_prefix("ls ") {
            return is_path(p).then(|| Ask::List(p.to_string()));
        }
        None
    }
}

fn is_path(p: &str) -> bool {
    p.starts_with('/') && !p.contains(['\n', '\r'])
}

/// How one request ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// It ran: its exit code (`None`: killed), what it printed.
    Done {
        exit: Option<i32>,
        stdout: String,
        stderr: String,
    },
    /// It could not be done (no such file, not found on PATH, timed out): why.
    Failed(String),
}

impl Answer {
    /// The text of a file read or a listing that worked.
    fn text(&self) -> Result<&str, String> {
        match self {
            Answer::Done {
                exit: Some(0),
                stdout,
                ..
            } => Ok(stdout),
            Answer::Done { exit, stderr, .. } => Err(first_line(stderr).map_or_else(
                || match exit {
                    Some(c) => format!("exit code {c}"),
                    None => "killed".to_string(),
                },
                str::to_string,
            )),
            Answer::Failed(why) => Err(why.clone()),
        }
    }
}

fn first_line(s: &str) -> Option<&str> {
    s.lines().map(str::trim).find(|l| !l.is_empty())
}

/// What a chunk's path is, from its mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PathKind {
    /// A block device (a raw chunk): its own device.
    BlockDevice,
    /// A regular file (a cooked chunk): the device of its filesystem.
    File,
    /// A character device (a `/dev/raw` binding): sysfs does not say which block device.
    CharDevice,
    /// Anything else (a directory, a fifo).
    Other,
}

/// One block device met on the way down.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlockDevice {
    pub dev: DevNum,
    /// The kernel's name (`DEVNAME`): `dm-4`, `sdb`, `nvme0n1p2`; `/proc/diskstats` names it so.
    pub name: String,
    /// A device-mapper device's own name (`vg_ifx-lv_data1`, `mpatha`): what `/dev/mapper/`
    /// shows.
    pub dm_name: Option<String>,
    /// What a device-mapper device is (LVM, multipath, ...), from its uuid.
    pub dm_target: Option<DmTarget>,
    pub partition: bool,
}

impl BlockDevice {
    /// `vg_ifx-lv_data1 (dm-4)`, `sdd1`.
    pub fn label(&self) -> String {
        match &self.dm_name {
            Some(n) => format!("{n} ({})", self.name),
            None => self.name.clone(),
        }
    }
}

/// One chunk path, resolved or not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChunkDevice {
    pub path: String,
    pub kind: Option<PathKind>,
    /// The device the chunk's I/O goes to first: the device itself for a raw chunk, the
    /// filesystem's device for a cooked one.
    pub device: Option<DevNum>,
    /// The layers below it, top down (an LVM volume, its multipath map, the paths' disks).
    pub below: Vec<DevNum>,
    /// The whole disks at the bottom (several: stripes, multipath paths, RAID members).
    pub disks: Vec<DevNum>,
    /// Why the device (or the disks under it) cannot be known.
    pub unknown: Option<String>,
}

/// Every chunk path with its device, and the devices met.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct ChunkDevices {
    pub chunks: Vec<ChunkDevice>,
    /// Every device met, by number (in JSON a list: the number is in each).
    #[serde(serialize_with = "devices_as_list")]
    pub devices: BTreeMap<DevNum, BlockDevice>,
    /// Transcript lines not understood.
    pub unparsed: Vec<Unparsed>,
}

record!(ChunkDevices);

fn devices_as_list<S: serde::Serializer>(
    m: &BTreeMap<DevNum, BlockDevice>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(m.values())
}

impl ChunkDevices {
    pub fn chunk(&self, path: &str) -> Option<&ChunkDevice> {
        self.chunks.iter().find(|c| c.path == path)
    }

    pub fn device(&self, dev: DevNum) -> Option<&BlockDevice> {
        self.devices.get(&dev)
    }
}

/// Asks the walk made and found unanswered, and what it found so far.
#[derive(Default)]
struct Walk {
    needs: Vec<Ask>,
    asked: BTreeSet<Ask>,
    devices: BTreeMap<DevNum, BlockDevice>,
}

impl Walk {
    /// The answer to `ask`, or `None` (and `ask` noted as needed).
    fn get<'r>(&mut self, r: &'r Resolver, ask: Ask) -> Option<&'r Answer> {
        let a = r.answers.get(&ask);
        if a.is_none() && self.asked.len() < MAX_ASKS && self.asked.insert(ask.clone()) {
            self.needs.push(ask);
        }
        a
    }
}

/// What is known of the devices under one device.
enum Below {
    /// Not all answers are in yet.
    Pending,
    /// The layers under it (top down) and the whole disks at the bottom.
    Known {
        layers: Vec<DevNum>,
        disks: Vec<DevNum>,
    },
    /// Why not.
    Unknown(String),
}

/// The resolution of one list of chunk paths.
#[derive(Debug, Clone, Default)]
pub struct Resolver {
    paths: Vec<String>,
    answers: BTreeMap<Ask, Answer>,
    /// The order answers came in, for the transcript.
    order: Vec<Ask>,
}

impl Resolver {
    /// Chunk paths, in the order `onstat -D` lists them (repeats dropped).
    pub fn new(paths: &[String]) -> Resolver {
        let mut seen = BTreeSet::new();
        let paths = paths
            .iter()
            .filter(|p| seen.insert(p.as_str()))
            .cloned()
            .collect();
        Resolver {
            paths,
            ..Resolver::default()
        }
    }

    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    /// Records how `ask` ended.
    pub fn answer(&mut self, ask: Ask, answer: Answer) {
        if self.answers.insert(ask.clone(), answer).is_none() {
            self.order.push(ask);
        }
    }

    /// What to ask next: empty when the resolution is complete.
    pub fn needs(&self) -> Vec<Ask> {
        let mut w = Walk::default();
        let _ = self.walk(&mut w);
        w.needs
    }

    /// Each chunk path's device, as far as the answers tell.
    pub fn result(&self) -> ChunkDevices {
        let mut w = Walk::default();
        let chunks = self.walk(&mut w);
        ChunkDevices {
            chunks,
            devices: w.devices,
            unparsed: Vec::new(),
        }
    }

    /// Every request and its answer, in the order asked: what a recording keeps, and what
    /// [`parse`] reads back.
    pub fn transcript(&self) -> String {
        let mut o = String::new();
        // The stat first, whatever order the answers came in: it names the paths.
        let stat = Ask::Stat(self.paths.clone());
        let order = std::iter::once(&stat).chain(self.order.iter().filter(|a| **a != stat));
        for ask in order {
            let Some(answer) = self.answers.get(ask) else {
                continue;
            };
            o.push_str("==> ");
            o.push_str(&ask.header());
            o.push_str(" <==\n");
            match answer {
                Answer::Done {
                    exit,
                    stdout,
                    stderr,
                } => {
                    match exit {
                        Some(c) => o.push_str(&format!("exit {c}\n")),
                        None => o.push_str("killed\n"),
                    }
                    push_lines(&mut o, stdout);
                    if !stderr.trim().is_empty() {
                        o.push_str("--- stderr\n");
                        push_lines(&mut o, stderr);
                    }
                }
                Answer::Failed(why) => {
                    o.push_str("failed: ");
                    o.push_str(&one_line(why));
                    o.push('\n');
                }
            }
        }
        o
    }

    fn walk(&self, w: &mut Walk) -> Vec<ChunkDevice> {
        let unknown = |path: &String, why: String| ChunkDevice {
            path: path.clone(),
            kind: None,
            device: None,
            below: Vec::new(),
            disks: Vec::new(),
            unknown: Some(why),
        };
        if self.paths.is_empty() {
            return Vec::new();
        }
        let Some(stat) = w.get(self, Ask::Stat(self.paths.clone())) else {
            return self
                .paths
                .iter()
                .map(|p| unknown(p, "not resolved yet".into()))
                .collect();
        };
        let (stdout, stderr) = match stat {
            Answer::Done { stdout, stderr, .. } => (stdout.as_str(), stderr.as_str()),
            Answer::Failed(why) => {
                return self
                    .paths
                    .iter()
                    .map(|p| unknown(p, format!("stat failed: {why}")))
                    .collect();
            }
        };
        let stats: BTreeMap<&str, StatLine> = lines(stdout)
            .filter_map(|l| stat_line(l.text))
            .map(|s| (s.name, s))
            .collect();
        self.paths
            .iter()
            .map(|path| {
                let Some(s) = stats.get(path.as_str()) else {
                    let why = stderr
                        .lines()
                        .map(str::trim)
                        .find(|l| l.contains(path.as_str()))
                        .map_or_else(
                            || "stat said nothing of it".to_string(),
                            |l| format!("stat: {}", l.trim_start_matches("stat: ")),
                        );
                    return unknown(path, why);
                };
                let kind = s.kind();
                let dev = match kind {
                    PathKind::BlockDevice => s.rdev,
                    PathKind::File => s.fs_dev(),
                    PathKind::CharDevice => {
                        return ChunkDevice {
                            kind: Some(kind),
                            ..unknown(
                                path,
                                "a character device (a raw binding): sysfs does not say which \
                                 block device it is bound to"
                                    .into(),
                            )
                        }
                    }
                    PathKind::Other => {
                        return ChunkDevice {
                            kind: Some(kind),
                            ..unknown(
                                path,
                                format!("neither a device nor a file (mode {:x})", s.mode),
                            )
                        }
                    }
                };
                let mut c = ChunkDevice {
                    path: path.clone(),
                    kind: Some(kind),
                    device: Some(dev),
                    below: Vec::new(),
                    disks: Vec::new(),
                    unknown: None,
                };
                match self.device(w, dev, 0, &mut Vec::new()) {
                    Below::Pending => c.unknown = Some("not resolved yet".into()),
                    Below::Known { layers, disks } => {
                        c.below = layers;
                        c.disks = disks;
                    }
                    Below::Unknown(why) => {
                        c.unknown = Some(if kind == PathKind::File && dev.major == 0 {
                            format!(
                                "on a filesystem with no block device of its own (device {dev}: \
                                 NFS, btrfs, tmpfs or overlay): its disk I/O cannot be told"
                            )
                        } else {
                            why
                        });
                    }
                }
                c
            })
            .collect()
    }

    /// The layers and disks under device `dev`; `path` holds the devices above it (a loop ends).
    fn device(&self, w: &mut Walk, dev: DevNum, depth: usize, path: &mut Vec<DevNum>) -> Below {
        if depth > MAX_DEPTH || path.contains(&dev) {
            return Below::Unknown(format!("the devices under {dev} loop"));
        }
        let base = dev.sys_dev_block();
        let Some(ans) = w.get(self, Ask::Read(format!("{base}/uevent"))) else {
            return Below::Pending;
        };
        let uevent = match ans.text().map(sysblock::parse_uevent) {
            Ok(Ok(u)) => u,
            Ok(Err(e)) => return Below::Unknown(format!("{base}/uevent: {e}")),
            Err(why) => return Below::Unknown(format!("no {base}: {why}")),
        };
        let partition = uevent.devtype == Some(DevType::Partition);
        let mut bd = BlockDevice {
            dev,
            name: uevent.devname.clone(),
            dm_name: None,
            dm_target: None,
            partition,
        };
        if uevent.devname.starts_with("dm-") {
            // Names only: a device whose name cannot be read is still followed down.
            if let Some(a) = w.get(self, Ask::Read(format!("{base}/dm/name"))) {
                bd.dm_name = a.text().ok().and_then(|t| sysblock::parse_dm_name(t).ok());
            }
            if let Some(a) = w.get(self, Ask::Read(format!("{base}/dm/uuid"))) {
                bd.dm_target = a
                    .text()
                    .ok()
                    .and_then(|t| sysblock::parse_dm_uuid(t).ok())
                    .map(|u| u.target);
            }
        }
        w.devices.insert(dev, bd);
        path.push(dev);
        let below = if partition {
            // The partition's directory sits in its disk's: `..` (the kernel follows the link
            // first) is the disk.
            match w.get(self, Ask::Read(format!("{base}/../uevent"))) {
                None => Below::Pending,
                Some(a) => match a.text().map(sysblock::parse_uevent) {
                    Ok(Ok(parent)) => self.under(w, &[parent.dev], depth, path),
                    Ok(Err(e)) => Below::Unknown(format!("the disk of {}: {e}", uevent.devname)),
                    Err(why) => Below::Unknown(format!("the disk of {}: {why}", uevent.devname)),
                },
            }
        } else {
            match w.get(self, Ask::List(format!("{base}/slaves"))) {
                None => Below::Pending,
                Some(a) => match a.text().map(sysblock::parse_slaves) {
                    // A whole disk: nothing under it.
                    Ok(Ok(slaves)) if slaves.is_empty() => Below::Known {
                        layers: Vec::new(),
                        disks: vec![dev],
                    },
                    Ok(Ok(slaves)) => {
                        let mut devs = Vec::new();
                        let mut pending = false;
                        let mut failed = None;
                        for s in &slaves {
                            let p = format!("/sys/class/block/{s}/uevent");
                            match w.get(self, Ask::Read(p)) {
                                None => pending = true,
                                Some(a) => match a.text().map(sysblock::parse_uevent) {
                                    Ok(Ok(u)) => devs.push(u.dev),
                                    Ok(Err(e)) => failed = Some(format!("{s}: {e}")),
                                    Err(why) => failed = Some(format!("{s}: {why}")),
                                },
                            }
                        }
                        if pending {
                            Below::Pending
                        } else if let Some(f) = failed {
                            Below::Unknown(format!("under {}: {f}", uevent.devname))
                        } else {
                            self.under(w, &devs, depth, path)
                        }
                    }
                    Ok(Err(e)) => Below::Unknown(format!("{base}/slaves: {e}")),
                    Err(why) => Below::Unknown(format!("{base}/slaves: {why}")),
                },
            }
        };
        path.pop();
        below
    }

    /// The layers and disks under each of `devs` (the devices one level down), merged.
    fn under(&self, w: &mut Walk, devs: &[DevNum], depth: usize, path: &mut Vec<DevNum>) -> Below {
        let mut layers: Vec<DevNum> = Vec::new();
        let mut disks: Vec<DevNum> = Vec::new();
        let mut pending = false;
        let mut unknown = None;
        for d in devs {
            match self.device(w, *d, depth + 1, path) {
                Below::Pending => pending = true,
                Below::Unknown(why) => unknown = Some(why),
                Below::Known {
                    layers: l,
                    disks: k,
                } => {
                    // A device with something under it is a layer; a disk is only a disk.
                    if !k.contains(d) && !layers.contains(d) {
                        layers.push(*d);
                    }
                    for x in l {
                        if !layers.contains(&x) {
                            layers.push(x);
                        }
                    }
                    for x in k {
                        if !disks.contains(&x) {
                            disks.push(x);
                        }
                    }
                }
            }
        }
        match (pending, unknown) {
            (true, _) => Below::Pending,
            (false, Some(why)) => Below::Unknown(why),
            (false, None) => Below::Known { layers, disks },
        }
    }
}

fn push_lines(o: &mut String, text: &str) {
    for l in text.lines() {
        // A line that would read as a section header is kept, marked, not taken for one.
        if l.starts_with("==> ") || l.starts_with("--- stderr") {
            o.push_str("\\ ");
        }
        o.push_str(l);
        o.push('\n');
    }
}

fn one_line(s: &str) -> String {
    s.lines().map(str::trim).collect::<Vec<_>>().join(" ")
}

/// One line of `stat -L -c '%f %t %T %d %n'`.
struct StatLine<'a> {
    mode: u32,
    /// The device of a device file (`%t:%T`).
    rdev: DevNum,
    /// The device the file is on (`%d`, the kernel's `st_dev`).
    dev: u64,
    name: &'a str,
}

impl StatLine<'_> {
    fn kind(&self) -> PathKind {
        match self.mode & 0o170_000 {
            0o060_000 => PathKind::BlockDevice,
            0o100_000 => PathKind::File,
            0o020_000 => PathKind::CharDevice,
            _ => PathKind::Other,
        }
    }

    /// `st_dev` as glibc encodes a `dev_t` (12-bit major and 20-bit minor split across it).
    fn fs_dev(&self) -> DevNum {
        let d = self.dev;
        DevNum {
            major: (((d >> 8) & 0xfff) | ((d >> 32) & !0xfff)) as u32,
            minor: ((d & 0xff) | ((d >> 12) & !0xff)) as u32,
        }
    }
}

fn hex_u32(i: &str) -> PResult<'_, u32> {
    let (rest, h) = take_while1(|c: char| c.is_ascii_hexdigit()).parse(i)?;
    match u32::from_str_radix(h, 16) {
        Ok(v) => Ok((rest, v)),
        Err(_) => Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::HexDigit,
        ))),
    }
}

/// `61b0 fd 4 2049 /ifx/chunks/rootdbs_01`: the name is the rest of the line.
fn stat_line(text: &str) -> Option<StatLine<'_>> {
    let parsed: PResult<'_, _> =
        (hex_u32, sp1, hex_u32, sp1, hex_u32, sp1, dec_u64, sp1).parse(text);
    let (name, (mode, _, major, _, minor, _, dev, _)) = parsed.ok()?;
    let name = lex::trim_end_bytes(name, |b| b == b'\r');
    (!name.is_empty()).then_some(StatLine {
        mode,
        rdev: DevNum { major, minor },
        dev,
        name,
    })
}

const EXPECTED: &str =
    "a chunk device transcript: `==> stat -L -c '%f %t %T %d %n' -- PATHS <==`, \
     then `exit N` or `failed: WHY` and the output, then `==> cat /sys/dev/block/M:m/uevent <==` \
     and the like";

/// Reads a transcript (what [`Resolver::transcript`] wrote) and resolves it again.
pub fn parse(text: &str) -> Result<ChunkDevices, ParseError> {
    let mut r = Resolver::default();
    let mut unparsed = Vec::new();
    // The section being read: its request, its status, stdout, stderr.
    struct Section {
        ask: Ask,
        status: Option<Status>,
        stdout: String,
        stderr: String,
        in_stderr: bool,
    }
    enum Status {
        Exit(Option<i32>),
        Failed(String),
    }
    fn close(r: &mut Resolver, s: Section) {
        let answer = match s.status {
            Some(Status::Failed(why)) => Answer::Failed(why),
            Some(Status::Exit(exit)) => Answer::Done {
                exit,
                stdout: s.stdout,
                stderr: s.stderr,
            },
            None => Answer::Failed("no status in the transcript".into()),
        };
        if let Ask::Stat(paths) = &s.ask {
            if r.paths.is_empty() {
                r.paths = paths.clone();
            }
        }
        r.answer(s.ask, answer);
    }
    let mut cur: Option<Section> = None;
    let mut first_error: Option<ParseError> = None;
    for line in lines(text) {
        let t = line.text;
        if let Some(h) = t.strip_prefix("==> ").and_then(|h| h.strip_suffix(" <==")) {
            if let Some(s) = cur.take() {
                close(&mut r, s);
            }
            match Ask::from_header(h) {
                Some(ask) => {
                    cur = Some(Section {
                        ask,
                        status: None,
                        stdout: String::new(),
                        stderr: String::new(),
                        in_stderr: false,
                    })
                }
                None => {
                    first_error.get_or_insert_with(|| line.error_at(h, EXPECTED));
                    unparsed.push(Unparsed::new(line));
                }
            }
            continue;
        }
        let Some(s) = cur.as_mut() else {
            if !line.is_blank() {
                first_error.get_or_insert_with(|| line.error_at(t, EXPECTED));
                unparsed.push(Unparsed::new(line));
            }
            continue;
        };
        if s.status.is_none() {
            let tt = trim_blanks(t);
            s.status = if let Some(c) = tt.strip_prefix("exit ") {
                c.parse::<i32>().ok().map(|c| Status::Exit(Some(c)))
            } else if tt == "killed" {
                Some(Status::Exit(None))
            } else {
                tt.strip_prefix("failed: ")
                    .map(|w| Status::Failed(w.to_string()))
            };
            if s.status.is_none() {
                first_error.get_or_insert_with(|| line.error_at(t, EXPECTED));
                unparsed.push(Unparsed::new(line));
            }
            continue;
        }
        if t == "--- stderr" {
            s.in_stderr = true;
            continue;
        }
        let body = t.strip_prefix("\\ ").unwrap_or(t);
        let into = if s.in_stderr {
            &mut s.stderr
        } else {
            &mut s.stdout
        };
        into.push_str(body);
        into.push('\n');
    }
    if let Some(s) = cur.take() {
        close(&mut r, s);
    }
    if r.paths.is_empty() && !r.answers.contains_key(&Ask::Stat(Vec::new())) {
        return Err(first_error.unwrap_or_else(|| ParseError::empty(EXPECTED)));
    }
    let mut out = r.result();
    out.unparsed = unparsed;
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines() {
        let s = stat_line("61b0 fd 4 5 /ifx/chunks/rootdbs_01").expect("line");
        assert_eq!(s.kind(), PathKind::BlockDevice);
        assert_eq!(
            s.rdev,
            DevNum {
                major: 253,
                minor: 4
            }
        );
        let f = stat_line("81b0 0 0 64770 /ifx/chunks/llog with blank").expect("file");
        assert_eq!(f.kind(), PathKind::File);
        assert_eq!(
            f.fs_dev(),
            DevNum {
                major: 253,
                minor: 2
            }
        );
        assert_eq!(f.name, "/ifx/chunks/llog with blank");
        // A 12-bit minor: 259:300 is encoded across the word.
        let big = (259u64 << 8) | (300 & 0xff) | ((300u64 & !0xff) << 12);
        let l = format!("81a4 0 0 {big} /x");
        assert_eq!(
            stat_line(&l).expect("big").fs_dev(),
            DevNum {
                major: 259,
                minor: 300
            }
        );
        assert!(stat_line("stat: cannot stat '/x': No such file or directory").is_none());
        assert!(stat_line("61b0 fd 4 5 ").is_none());
    }

    #[test]
    fn headers_round_trip() {
        for a in [
            Ask::Stat(vec!["/a/b".into(), "/c".into()]),
            Ask::Read("/sys/dev/block/8:1/../uevent".into()),
            Ask::List("/sys/dev/block/253:0/slaves".into()),
        ] {
            assert_eq!(Ask::from_header(&a.header()), Some(a));
        }
        assert_eq!(Ask::from_header("rm -rf /"), None);
    }
}
