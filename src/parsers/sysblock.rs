//! The small sysfs files that take a block device (a partition, an LVM volume, a multipath or md
//! device) to the whole disk(s) under it: `/sys/dev/block/M:m/uevent`, `.../dev`, `.../partition`,
//! `dm/name`, `dm/uuid`, the `slaves/` listing, and the resolution over them. Pure: text in,
//! typed out; the caller reads the files (and resolves the `/sys/class/block/<dev>` link).

use super::lex::{dec_u32, lines, trim_blanks, PResult};
use crate::error::ParseError;
use nom::character::complete::char;
use nom::combinator::all_consuming;
use nom::Parser;
use serde::Serialize;
use std::collections::BTreeMap;

/// A device number, `major:minor` as `/sys/block/<dev>/dev` prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct DevNum {
    pub major: u32,
    pub minor: u32,
}

impl std::fmt::Display for DevNum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.major, self.minor)
    }
}

impl DevNum {
    /// `/sys/dev/block/M:m`, the directory (a link) of this device.
    pub fn sys_dev_block(&self) -> String {
        format!("/sys/dev/block/{self}")
    }
}

/// `DEVTYPE=` of a block device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DevType {
    Disk,
    Partition,
    /// Anything else, as printed.
    Other(String),
}

/// `/sys/dev/block/M:m/uevent` (the same file as `/sys/class/block/<dev>/uevent`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Uevent {
    pub dev: DevNum,
    /// `DEVNAME=`: `sda1`, `dm-0`, `nvme0n1p2`, `cciss/c0d0` (the `/dev/` name).
    pub devname: String,
    pub devtype: Option<DevType>,
    /// `PARTN=` of a partition.
    pub partn: Option<u32>,
    /// `PARTNAME=` (GPT partition label) when there is one.
    pub partname: Option<String>,
    /// Every other `KEY=value` line (`DISKSEQ`, `DM_NAME`, ...), as printed.
    #[serde(serialize_with = "super::numbers_or_texts")]
    pub other: BTreeMap<String, String>,
}

impl Uevent {
    pub fn is_partition(&self) -> bool {
        self.devtype == Some(DevType::Partition)
    }
}

/// Parses a block device's `uevent`: `KEY=value` lines, `MAJOR`, `MINOR` and `DEVNAME` required.
pub fn parse_uevent(text: &str) -> Result<Uevent, ParseError> {
    const EXPECTED: &str = "a block device uevent (`MAJOR=8`, `MINOR=1`, `DEVNAME=sda1`, \
         `DEVTYPE=partition` lines)";
    let (mut major, mut minor, mut devname) = (None, None, None);
    let (mut devtype, mut partn, mut partname) = (None, None, None);
    let mut other = BTreeMap::new();
    for line in lines(text) {
        if line.is_blank() {
            continue;
        }
        let t = trim_blanks(line.text);
        let Some((key, value)) = t.split_once('=').filter(|(k, _)| is_env_key(k)) else {
            return Err(line.error_at(t, EXPECTED));
        };
        let number = |v: &str| {
            v.parse::<u32>()
                .map_err(|_| line.error_at(value, format!("{EXPECTED}; a number after {key}=")))
        };
        match key {
            "MAJOR" => major = Some(number(value)?),
            "MINOR" => minor = Some(number(value)?),
            "PARTN" => partn = Some(number(value)?),
            "DEVNAME" => devname = Some(value.to_string()),
            "PARTNAME" => partname = Some(value.to_string()),
            "DEVTYPE" => {
                devtype = Some(match value {
                    "disk" => DevType::Disk,
                    "partition" => DevType::Partition,
                    v => DevType::Other(v.to_string()),
                })
            }
            _ => {
                other.insert(key.to_string(), value.to_string());
            }
        }
    }
    match (major, minor, devname) {
        (Some(major), Some(minor), Some(devname)) if !devname.is_empty() => Ok(Uevent {
            dev: DevNum { major, minor },
            devname,
            devtype,
            partn,
            partname,
            other,
        }),
        _ => Err(ParseError::empty(EXPECTED)),
    }
}

/// `MAJOR`, `DM_NAME`: upper-case letters, digits and `_`.
fn is_env_key(k: &str) -> bool {
    !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// `/sys/block/<dev>/dev` (or `/sys/class/block/<dev>/dev`): `8:1`.
pub fn parse_dev(text: &str) -> Result<DevNum, ParseError> {
    let t = trim_blanks(text.trim_end_matches(['\n', '\r']));
    let parsed: PResult<'_, _> = all_consuming((dec_u32, char(':'), dec_u32)).parse(t);
    parsed
        .map(|(_, (major, _, minor))| DevNum { major, minor })
        .map_err(|_| ParseError::at(1, t, 0, "a device number `major:minor` (`8:1`)"))
}

/// `/sys/class/block/<dev>/partition`: the partition number (the file exists for partitions
/// only).
pub fn parse_partition(text: &str) -> Result<u32, ParseError> {
    let t = text.trim();
    t.parse()
        .map_err(|_| ParseError::at(1, t, 0, "a partition number"))
}

/// `/sys/block/dm-N/dm/name`: the device-mapper name (`vg0-lv_data`, `mpatha`), one word.
pub fn parse_dm_name(text: &str) -> Result<String, ParseError> {
    one_name(text, "a device-mapper name (`vg0-lv_data`)")
}

/// What a device-mapper device is, from the prefix of its `dm/uuid`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DmTarget {
    /// `LVM-<vg uuid><lv uuid>`: a logical volume.
    Lvm,
    /// `mpath-<wwid>`: a multipath device (its slaves are paths to one LUN).
    Multipath,
    /// `CRYPT-...`: dm-crypt / LUKS.
    Crypt,
    /// `part<N>-...`: partition N of another dm device (kpartx).
    Partition(u32),
    /// Another prefix (`stratis-`, `VDO-`, ...) or none, as printed.
    Other(String),
}

/// `/sys/block/dm-N/dm/uuid`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DmUuid {
    pub uuid: String,
    pub target: DmTarget,
}

/// Parses `dm/uuid` (`LVM-AbC...`, `mpath-3600508b4...`, `part1-mpath-3600...`). An empty file
/// (a device created without a uuid) is `Other("")`.
pub fn parse_dm_uuid(text: &str) -> Result<DmUuid, ParseError> {
    let t = trim_blanks(text.trim_end_matches(['\n', '\r']));
    if t.contains([' ', '\t', '\n']) {
        return Err(ParseError::at(1, t, 0, "one device-mapper uuid"));
    }
    let prefix = t.split_once('-').map_or("", |(p, _)| p);
    let target = match prefix {
        "LVM" => DmTarget::Lvm,
        "mpath" => DmTarget::Multipath,
        "CRYPT" => DmTarget::Crypt,
        p => match p.strip_prefix("part").and_then(|n| n.parse().ok()) {
            Some(n) => DmTarget::Partition(n),
            None => DmTarget::Other(p.to_string()),
        },
    };
    Ok(DmUuid {
        uuid: t.to_string(),
        target,
    })
}

/// The names in a `slaves/` (or `holders/`) directory listing, one per line or blank-separated
/// (`ls` output). An empty listing is a device with nothing under it.
pub fn parse_slaves(listing: &str) -> Result<Vec<String>, ParseError> {
    let mut out = Vec::new();
    for line in lines(listing) {
        for name in line.text.split([' ', '\t']).filter(|w| !w.is_empty()) {
            if !is_device_name(name) {
                return Err(line.error_at(name, "block device names (`sda`, `dm-0`)"));
            }
            out.push(name.to_string());
        }
    }
    Ok(out)
}

/// A sysfs block device name: no `/`, not `.` or `..`, printable.
fn is_device_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name.chars().all(|c| c.is_ascii_graphic() && c != '/')
}

fn one_name(text: &str, expected: &str) -> Result<String, ParseError> {
    let t = trim_blanks(text.trim_end_matches(['\n', '\r']));
    if t.is_empty() || t.contains([' ', '\t', '\n']) {
        return Err(ParseError::at(1, t, 0, expected));
    }
    Ok(t.to_string())
}

/// The disk a partition belongs to, from where `/sys/class/block/<dev>` points: a partition's
/// directory sits in its disk's (`.../block/sda/sda1` → `sda`, `.../nvme0/nvme0n1/nvme0n1p2` →
/// `nvme0n1`). Only for a partition (`DEVTYPE=partition`): a whole disk's directory sits in its
/// controller's (`.../nvme0/nvme0n1`) or in `block/`. `None` when the path does not end in `dev`
/// or `dev` sits in `block/`.
pub fn parent_from_sysfs_path(path: &str, dev: &str) -> Option<String> {
    let mut parts = path
        .trim_end_matches('/')
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".");
    let last = parts.next_back()?;
    let parent = parts.next_back()?;
    (last == dev && parent != "block" && parent != "..").then(|| parent.to_string())
}

/// What the caller read from sysfs about one device name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BlockFacts {
    /// `DEVTYPE=` from the uevent.
    pub devtype: Option<DevType>,
    /// For a partition: the disk it is on ([`parent_from_sysfs_path`]).
    pub parent: Option<String>,
    /// The `slaves/` listing: what a dm or md device is built on.
    pub slaves: Vec<String>,
}

/// The whole disks under `dev`: a partition goes to its disk, a dm/md device to the disks
/// under its slaves (through any number of layers: LVM on multipath on `sd*`, a kpartx
/// partition on multipath), a device with neither to itself. Multipath gives every path
/// (`sdb`, `sdc`: one LUN). `facts` answers for one name; a name it knows nothing of counts as
/// a disk. In order of first appearance, without repeats; a loop in the facts ends there.
pub fn whole_disks(dev: &str, facts: impl Fn(&str) -> Option<BlockFacts>) -> Vec<String> {
    const MAX_DEPTH: usize = 16;
    let mut out = Vec::new();
    let mut seen = Vec::new();
    let mut stack = vec![(dev.to_string(), 0usize)];
    while let Some((name, depth)) = stack.pop() {
        if seen.contains(&name) {
            continue;
        }
        seen.push(name.clone());
        let f = facts(&name).unwrap_or_default();
        let below: Vec<String> = match (&f.devtype, &f.parent) {
            (Some(DevType::Partition), Some(p)) => vec![p.clone()],
            _ => f.slaves.clone(),
        };
        if below.is_empty() || depth >= MAX_DEPTH {
            if !out.contains(&name) {
                out.push(name);
            }
        } else {
            // Reversed so the first slave is resolved first.
            stack.extend(below.into_iter().rev().map(|b| (b, depth + 1)));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn uevents() {
        let u =
            parse_uevent("MAJOR=8\nMINOR=1\nDEVNAME=sda1\nDEVTYPE=partition\nPARTN=1\nDISKSEQ=9\n")
                .expect("partition");
        assert_eq!(u.dev, DevNum { major: 8, minor: 1 });
        assert!(u.is_partition());
        assert_eq!(
            (u.partn, u.other.get("DISKSEQ").map(String::as_str)),
            (Some(1), Some("9"))
        );
        assert!(parse_uevent("MAJOR=8\nDEVNAME=sda\n").is_err());
        assert!(parse_uevent("hello world\n").is_err());
        assert!(parse_uevent("MAJOR=x\nMINOR=1\nDEVNAME=sda1\n").is_err());
    }

    #[test]
    fn small_files() {
        assert_eq!(parse_dev("253:3\n").expect("dev").to_string(), "253:3");
        assert!(parse_dev("253 3").is_err());
        assert_eq!(parse_partition("2\n").expect("n"), 2);
        assert_eq!(parse_dm_name("vg0-lv_data\n").expect("name"), "vg0-lv_data");
        assert!(parse_dm_name("two words").is_err());
        assert_eq!(
            parse_dm_uuid("part1-mpath-3600").expect("uuid").target,
            DmTarget::Partition(1)
        );
        assert_eq!(
            parse_dm_uuid("LVM-abc").expect("uuid").target,
            DmTarget::Lvm
        );
        assert_eq!(parse_slaves("sdb\nsdc\n").expect("ls"), vec!["sdb", "sdc"]);
        assert!(parse_slaves("../sdb").is_err());
    }

    #[test]
    fn parents_from_links() {
        let p =
            "../../devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda1";
        assert_eq!(parent_from_sysfs_path(p, "sda1").as_deref(), Some("sda"));
        assert_eq!(
            parent_from_sysfs_path("../../devices/virtual/block/dm-0", "dm-0"),
            None
        );
        assert_eq!(
            parent_from_sysfs_path(
                "/sys/devices/pci0000:00/nvme/nvme0/nvme0n1/nvme0n1p2",
                "nvme0n1p2"
            )
            .as_deref(),
            Some("nvme0n1")
        );
        assert_eq!(parent_from_sysfs_path("../../block/sda/sda1", "sdb1"), None);
    }
}
