//! The demo's storage below Informix, in real formats: `onstat -D` (page counts per chunk),
//! `onstat -g iof` (operations and Informix's average times per chunk), `/proc/diskstats` (an
//! 18-field RHEL 8 kernel), `stat -L -c '%f %t %T %d %n'` of the chunk paths and the sysfs files
//! that take each chunk to its disks.
//!
//! The layout: the chunk paths are links in `/ifx/chunks` (a filesystem on `vg_sys-lv_ifx`,
//! `dm-2`) to LVM volumes on two SAN LUNs seen through multipath (`mpatha` on `sdb`/`sdc`:
//! rootdbs, datadbs1, plogdbs; `mpathb` on `sde`/`sdf`: datadbs2), one to a partition of a local
//! SSD (`/dev/sdd1`), and the logical-log chunk is a cooked file on `/ifx` itself.
//!
//! Informix's demand is flat: every chunk reads and writes the same pages per second all along.
//! In the `SlowDevice` phase the second LUN turns slow (the array behind it): its devices' await
//! rises from 2 ms to 45 ms over 10 s and stays there, %util with it from 10 % to 34 %, and
//! Informix's own times per operation on `datadbs2_01` rise with it. Every counter is a closed
//! form of the time (an integral of the rates), so any moment is computed directly.
//!
//! Informix's counters were last zeroed (`onstat -z`) `RESET_AGO` seconds before the demo's time
//! 0; the kernel's count from boot.

use super::moment::World;
use super::onstat::{banner, UPTIME_AT_ZERO};
use super::schema::{CHUNKS, DBSPACES};
use super::timeline::{self, Incident, CYCLE};
use crate::source::Output;
use std::fmt::Write as _;

/// `onstat -z` ran this long before the demo's time 0.
const RESET_AGO: f64 = 30.0;
/// The kernel booted this long before Informix started.
const OS_BEFORE_IFX: f64 = 1_800.0;
/// The slow device's await and %util climb over this many seconds of the phase, then hold: a
/// SAN path failing over, or an array starting a rebuild, takes the latency up in seconds.
const RAMP_S: f64 = 10.0;
/// Added to the slow LUN's await at the top of the ramp, ms.
const SLOW_EXTRA_MS: f64 = 43.0;
/// Informix's own time per operation above the device's (its queue, the KAIO call), ms.
const IFX_OVERHEAD_MS: f64 = 0.3;

/// One block device of the host.
struct Dev {
    name: &'static str,
    major: u32,
    minor: u32,
    /// A partition of this disk.
    partition_of: Option<&'static str>,
    /// A device-mapper device: its name and uuid.
    dm: Option<(&'static str, &'static str)>,
    slaves: &'static [&'static str],
    /// Base await, ms, of reads and writes.
    r_await: f64,
    w_await: f64,
    /// Busy share when calm; and, on the slow LUN, at the top of the ramp.
    util: f64,
    slow_util: Option<f64>,
    /// Background I/O that is not Informix's (the OS, swap): reads, writes per second.
    os_reads: f64,
    os_writes: f64,
}

const LUN_A: (f64, f64) = (0.9, 0.5);
const LUN_B: (f64, f64) = (2.0, 1.0);
const SSD: (f64, f64) = (0.3, 0.2);
const HDD: (f64, f64) = (4.0, 1.5);

const fn dev(name: &'static str, major: u32, minor: u32, aw: (f64, f64), util: f64) -> Dev {
    Dev {
        name,
        major,
        minor,
        partition_of: None,
        dm: None,
        slaves: &[],
        r_await: aw.0,
        w_await: aw.1,
        util,
        slow_util: None,
        os_reads: 0.0,
        os_writes: 0.0,
    }
}

const fn part(mut d: Dev, of: &'static str) -> Dev {
    d.partition_of = Some(of);
    d
}

const fn dm(
    mut d: Dev,
    name: &'static str,
    uuid: &'static str,
    slaves: &'static [&'static str],
) -> Dev {
    d.dm = Some((name, uuid));
    d.slaves = slaves;
    d
}

const fn slow(mut d: Dev, top: f64) -> Dev {
    d.slow_util = Some(top);
    d
}

const fn os(mut d: Dev, reads: f64, writes: f64) -> Dev {
    d.os_reads = reads;
    d.os_writes = writes;
    d
}

/// In `/proc/diskstats` order.
const DEVICES: [Dev; 18] = [
    os(dev("sda", 8, 0, HDD, 0.04), 1.0, 6.0),
    part(dev("sda1", 8, 1, HDD, 0.0), "sda"),
    os(part(dev("sda2", 8, 2, HDD, 0.04), "sda"), 1.0, 6.0),
    dev("sdb", 8, 16, LUN_A, 0.12),
    dev("sdc", 8, 32, LUN_A, 0.12),
    dev("sdd", 8, 48, SSD, 0.09),
    part(dev("sdd1", 8, 49, SSD, 0.09), "sdd"),
    slow(dev("sde", 8, 64, LUN_B, 0.06), 0.21),
    slow(dev("sdf", 8, 80, LUN_B, 0.06), 0.21),
    os(
        dm(
            dev("dm-0", 253, 0, HDD, 0.03),
            "vg_sys-lv_root",
            uuid::ROOT,
            &["sda2"],
        ),
        1.0,
        6.0,
    ),
    dm(
        dev("dm-1", 253, 1, HDD, 0.0),
        "vg_sys-lv_swap",
        uuid::SWAP,
        &["sda2"],
    ),
    dm(
        dev("dm-2", 253, 2, HDD, 0.05),
        "vg_sys-lv_ifx",
        uuid::IFX,
        &["sda2"],
    ),
    dm(
        dev("dm-3", 253, 3, LUN_A, 0.2),
        "mpatha",
        "mpath-3600a098038303742695d4a5a4e2f6b41",
        &["sdb", "sdc"],
    ),
    dm(
        dev("dm-4", 253, 4, LUN_A, 0.01),
        "vg_ifx-lv_rootdbs",
        uuid::ROOTDBS,
        &["dm-3"],
    ),
    dm(
        dev("dm-5", 253, 5, LUN_A, 0.18),
        "vg_ifx-lv_data1",
        uuid::DATA1,
        &["dm-3"],
    ),
    dm(
        dev("dm-6", 253, 6, LUN_A, 0.03),
        "vg_ifx-lv_plog",
        uuid::PLOG,
        &["dm-3"],
    ),
    slow(
        dm(
            dev("dm-7", 253, 7, LUN_B, 0.1),
            "mpathb",
            "mpath-3600a098038303742695d4a5a4e2f6b42",
            &["sde", "sdf"],
        ),
        0.34,
    ),
    slow(
        dm(
            dev("dm-8", 253, 8, LUN_B, 0.1),
            "vg_data2-lv_data2",
            uuid::DATA2,
            &["dm-7"],
        ),
        0.34,
    ),
];

/// The LVM uuids: `LVM-`, the volume group's 32 characters, then the volume's 32.
mod uuid {
    pub(super) const ROOT: &str =
        "LVM-Kq0tWnBv3lTzC8cD1fXhQe2m9sRyAo4J1bC8dE2fG7hJ3kL9mN0pQ5rS6tU4vW";
    pub(super) const SWAP: &str =
        "LVM-Kq0tWnBv3lTzC8cD1fXhQe2m9sRyAo4J8zY7xW6vU5tS4rQ3pN2mL1kJ0hG9fE";
    pub(super) const IFX: &str =
        "LVM-Kq0tWnBv3lTzC8cD1fXhQe2m9sRyAo4Jq2W3e4R5t6Y7u8I9o0P1a2S3d4F5gH";
    pub(super) const ROOTDBS: &str =
        "LVM-b7Yp2xHcL0vNq4mS8tRw1eKz6uAdF3gJm1N2b3V4c5X6z7L8k9J0h1G2f3D4sA";
    pub(super) const DATA1: &str =
        "LVM-b7Yp2xHcL0vNq4mS8tRw1eKz6uAdF3gJp9O8i7U6y5T4r3E2w1Q0a9S8d7F6gH";
    pub(super) const PLOG: &str =
        "LVM-b7Yp2xHcL0vNq4mS8tRw1eKz6uAdF3gJz5X4c3V2b1N0m9L8k7J6h5G4f3D2sA";
    pub(super) const DATA2: &str =
        "LVM-Z3nQ8rTy1uWb5xEc7vKm2pLs9dFh4gJaT1y2U3i4O5p6A7s8D9f0G1h2J3k4L5";
}

/// What Informix asks of one chunk (flat), and where its I/O goes.
struct Load {
    chunk: u32,
    /// Pages per second, in the dbspace's page size.
    read_pages: f64,
    write_pages: f64,
    /// Pages per operation (read-ahead reads many at once).
    pages_per_read: f64,
    pages_per_write: f64,
    /// What the chunk path is: a link to a block device, or a file.
    target: Target,
    /// The devices its I/O passes through, with the share each sees (multipath splits it).
    route: &'static [(&'static str, f64)],
}

enum Target {
    Block(&'static str),
    /// A cooked file on the filesystem of this device.
    File(&'static str),
}

const LOADS: [Load; 6] = [
    Load {
        chunk: 1,
        read_pages: 12.0,
        write_pages: 6.0,
        pages_per_read: 1.0,
        pages_per_write: 1.0,
        target: Target::Block("dm-4"),
        route: &[("dm-4", 1.0), ("dm-3", 1.0), ("sdb", 0.5), ("sdc", 0.5)],
    },
    Load {
        chunk: 2,
        read_pages: 1_800.0,
        write_pages: 240.0,
        pages_per_read: 8.0,
        pages_per_write: 2.0,
        target: Target::Block("dm-5"),
        route: &[("dm-5", 1.0), ("dm-3", 1.0), ("sdb", 0.5), ("sdc", 0.5)],
    },
    Load {
        chunk: 3,
        read_pages: 420.0,
        write_pages: 60.0,
        pages_per_read: 4.0,
        pages_per_write: 1.0,
        target: Target::Block("sdd1"),
        route: &[("sdd1", 1.0), ("sdd", 1.0)],
    },
    Load {
        chunk: 4,
        read_pages: 64.0,
        write_pages: 16.0,
        pages_per_read: 1.0,
        pages_per_write: 1.0,
        target: Target::Block("dm-8"),
        route: &[("dm-8", 1.0), ("dm-7", 1.0), ("sde", 0.5), ("sdf", 0.5)],
    },
    Load {
        chunk: 5,
        read_pages: 0.0,
        write_pages: 150.0,
        pages_per_read: 1.0,
        pages_per_write: 8.0,
        target: Target::Block("dm-6"),
        route: &[("dm-6", 1.0), ("dm-3", 1.0), ("sdb", 0.5), ("sdc", 0.5)],
    },
    Load {
        chunk: 6,
        read_pages: 0.5,
        write_pages: 90.0,
        pages_per_read: 1.0,
        pages_per_write: 4.0,
        target: Target::File("dm-2"),
        route: &[("dm-2", 1.0), ("sda2", 1.0), ("sda", 1.0)],
    },
];

fn device(name: &str) -> Option<&'static Dev> {
    DEVICES.iter().find(|d| d.name == name)
}

fn page_kb(chunk: u32) -> f64 {
    CHUNKS
        .iter()
        .find(|c| c.number == chunk)
        .and_then(|c| DBSPACES.iter().find(|d| d.number == c.dbspace))
        .map_or(2.0, |d| f64::from(d.page_kb))
}

/// Whether a device is on the LUN that turns slow.
fn is_slow(d: &Dev) -> bool {
    d.slow_util.is_some()
}

/// The chunks whose I/O goes through the LUN that turns slow (the ground truth's slow chunks).
pub(crate) fn slow_chunks() -> Vec<u32> {
    LOADS
        .iter()
        .filter(|l| l.route.iter().any(|(d, _)| device(d).is_some_and(is_slow)))
        .map(|l| l.chunk)
        .collect()
}

/// How far up its ramp the slow LUN is at `t` (0 calm, 1 at the top): its devices answer in
/// their base await plus [`SLOW_EXTRA_MS`] times this.
pub(crate) fn slowness(t: u64) -> f64 {
    let now = timeline::now(t);
    if now.incident() != Incident::SlowDevice {
        return 0.0;
    }
    (now.into as f64 / RAMP_S).min(1.0)
}

/// The await (ms) the slow LUN's devices answer in at `t`: the largest base await plus the
/// ramp's extra.
pub(crate) fn slow_await_ms(t: u64) -> f64 {
    let base = DEVICES
        .iter()
        .filter(|d| is_slow(d))
        .map(|d| d.r_await.max(d.w_await))
        .fold(0.0, f64::max);
    base + SLOW_EXTRA_MS * slowness(t)
}

/// ∫₀ᵗ of the slow ramp (0 outside the phase, climbing to 1 over `RAMP_S`, then 1): seconds
/// "at the top" the slow LUN has had by time `t`.
fn ramp_integral(t: f64) -> f64 {
    let Some(p) = timeline::first(Incident::SlowDevice) else {
        return 0.0;
    };
    let (start, len) = (p.start as f64, p.len() as f64);
    let of = |x: f64| {
        let x = x.clamp(0.0, len);
        if x < RAMP_S {
            x * x / (2.0 * RAMP_S)
        } else {
            x - RAMP_S / 2.0
        }
    };
    let t = t.max(0.0);
    let cycle = CYCLE as f64;
    let cycles = (t / cycle).floor();
    cycles * of(len) + of(t - cycles * cycle - start)
}

/// Informix's (flat) operations per second on a device: reads, writes, KB read, KB written.
fn informix_on(name: &str) -> (f64, f64, f64, f64) {
    let mut out = (0.0, 0.0, 0.0, 0.0);
    for l in &LOADS {
        if let Some((_, share)) = l.route.iter().find(|(d, _)| *d == name) {
            let kb = page_kb(l.chunk);
            out.0 += share * l.read_pages / l.pages_per_read;
            out.1 += share * l.write_pages / l.pages_per_write;
            out.2 += share * l.read_pages * kb;
            out.3 += share * l.write_pages * kb;
        }
    }
    out
}

/// Seconds since boot at demo time `t`.
fn since_boot(t: f64) -> f64 {
    UPTIME_AT_ZERO as f64 + OS_BEFORE_IFX + t
}

/// Seconds since Informix's counters were zeroed.
fn since_reset(t: f64) -> f64 {
    RESET_AGO + t
}

/// `/proc/diskstats` at `t`: 18 fields (kernel 4.18).
pub(crate) fn proc_diskstats(t: u64) -> String {
    let t = t as f64;
    let up = since_boot(t);
    let ramp = ramp_integral(t);
    let mut o = String::with_capacity(DEVICES.len() * 120);
    for d in &DEVICES {
        let (ir, iw, ikr, ikw) = informix_on(d.name);
        let (r, w) = (ir + d.os_reads, iw + d.os_writes);
        let (kr, kw) = (ikr + d.os_reads * 4.0, ikw + d.os_writes * 8.0);
        let extra = if is_slow(d) {
            SLOW_EXTRA_MS * ramp
        } else {
            0.0
        };
        let reads = (r * up) as u64;
        let writes = (w * up) as u64;
        let read_ms = (r * (d.r_await * up + extra)) as u64;
        let write_ms = (w * (d.w_await * up + extra)) as u64;
        let util_extra = d.slow_util.map_or(0.0, |top| (top - d.util) * ramp);
        let io_ms = (1000.0 * (d.util * up + util_extra)) as u64;
        let in_flight = if is_slow(d) && timeline::now(t as u64).incident() == Incident::SlowDevice
        {
            2
        } else {
            0
        };
        let _ = writeln!(
            o,
            "{:>4} {:>7} {} {} {} {} {} {} {} {} {} {} {} {} 0 0 0 0",
            d.major,
            d.minor,
            d.name,
            reads,
            reads / 9,
            (kr * up * 2.0) as u64,
            read_ms,
            writes,
            writes / 4,
            (kw * up * 2.0) as u64,
            write_ms,
            in_flight,
            io_ms,
            read_ms + write_ms,
        );
    }
    o
}

/// `onstat -D`: the spaces as `onstat -d` prints them, then each chunk's pages read and
/// written since the counters were zeroed.
pub(crate) fn onstat_d_upper(w: &World<'_>) -> String {
    let mut o = banner(w);
    d_upper(w, &mut o);
    o
}

/// What `onstat -D` prints after the banner (alone or in a grouped call).
pub(crate) fn d_upper(w: &World<'_>, o: &mut String) {
    let base = w.pop.layout.pools - 0x40_0000;
    o.push_str("Dbspaces\n");
    o.push_str(
        "address          number   flags      fchunk   nchunks  pgsize   flags    owner    name\n",
    );
    for d in &DBSPACES {
        let chunks: Vec<_> = CHUNKS.iter().filter(|c| c.dbspace == d.number).collect();
        let _ = writeln!(
            o,
            "{:<16x} {:<8} {:<10} {:<8} {:<8} {:<8} {:<8} {:<8} {}",
            base + u64::from(d.number) * 0x1b08,
            d.number,
            format!("{:#x}", d.flags),
            chunks.first().map_or(0, |c| c.number),
            chunks.len(),
            d.page_kb * 1024,
            d.letters,
            "informix",
            d.name
        );
    }
    let _ = writeln!(o, " {} active, 2047 maximum", DBSPACES.len());
    o.push_str("\nChunks\n");
    o.push_str("address          chunk/dbs     offset     page Rd    page Wr    pathname\n");
    let s = since_reset(w.now.t as f64);
    for c in &CHUNKS {
        let (rd, wr) = LOADS
            .iter()
            .find(|l| l.chunk == c.number)
            .map_or((0, 0), |l| {
                ((l.read_pages * s) as u64, (l.write_pages * s) as u64)
            });
        let _ = writeln!(
            o,
            "{:<16x} {:<6} {:<6} {:<10} {:<10} {:<10} {}",
            base + 0x40_0000 + u64::from(c.number) * 0x2240,
            c.number,
            c.dbspace,
            0,
            rd,
            wr,
            c.path
        );
    }
    let _ = writeln!(o, " {} active, 32766 maximum", CHUNKS.len());
    o.push_str("\nExpanded chunk capacity mode: always\n");
}

/// Informix's count and average time (s) of one kind of operation on a chunk since the reset.
fn ops(pages: f64, per_op: f64, base_ms: f64, t: f64, slow: bool) -> (u64, Option<f64>) {
    let s = since_reset(t);
    let rate = pages / per_op;
    let count = (rate * s) as u64;
    if count == 0 {
        return (0, None);
    }
    let extra = if slow {
        SLOW_EXTRA_MS * ramp_integral(t)
    } else {
        0.0
    };
    let total_ms = rate * ((base_ms + IFX_OVERHEAD_MS) * s + extra);
    (count, Some(total_ms / 1000.0 / count as f64))
}

fn op_row(o: &mut String, name: &str, count: u64, avg: Option<f64>) {
    let avg = avg.map_or_else(|| "N/A".to_string(), |a| format!("{a:.4}"));
    let _ = writeln!(o, "      {name:<11} {count:<13} {avg}");
}

/// `onstat -g iof`: per chunk file, bytes and pages read and written, operations per second
/// since the reset, and the operation table with Informix's average time per operation.
pub(crate) fn onstat_g_iof(w: &World<'_>) -> String {
    let t = w.now.t as f64;
    let s = since_reset(t);
    let mut o = banner(w);
    o.push_str("AIO global files:\n");
    o.push_str(
        "gfd pathname                    bytes read   page reads   bytes write   page writes  io/s\n",
    );
    for (k, c) in CHUNKS.iter().enumerate() {
        let Some(l) = LOADS.iter().find(|l| l.chunk == c.number) else {
            continue;
        };
        let dev = match l.target {
            Target::Block(d) | Target::File(d) => device(d),
        };
        let slow = dev.is_some_and(is_slow);
        let (r_aw, w_aw) = dev.map_or((1.0, 1.0), |d| (d.r_await, d.w_await));
        let kb = page_kb(c.number);
        let (rd, wr) = ((l.read_pages * s) as u64, (l.write_pages * s) as u64);
        let (nr, ar) = ops(l.read_pages, l.pages_per_read, r_aw, t, slow);
        let (nw, aw) = ops(l.write_pages, l.pages_per_write, w_aw, t, slow);
        let io_s = (nr + nw) as f64 / s.max(1.0);
        let _ = writeln!(
            o,
            "{:<3} {:<27} {:<12} {:<12} {:<13} {:<12} {io_s:.1}",
            k + 3,
            c.path,
            (rd as f64 * kb * 1024.0) as u64,
            rd,
            (wr as f64 * kb * 1024.0) as u64,
            wr
        );
        o.push('\n');
        o.push_str("      op type     count         avg. time\n");
        match l.target {
            // A raw chunk: kernel AIO does every read and write.
            Target::Block(_) => {
                op_row(&mut o, "seeks", 0, None);
                op_row(&mut o, "reads", 0, None);
                op_row(&mut o, "writes", 0, None);
                op_row(&mut o, "kaio_reads", nr, ar);
                op_row(&mut o, "kaio_writes", nw, aw);
            }
            // A cooked file: the AIO VPs seek, then read or write.
            Target::File(_) => {
                op_row(&mut o, "seeks", nr + nw, (nr + nw > 0).then_some(0.0));
                op_row(&mut o, "reads", nr, ar);
                op_row(&mut o, "writes", nw, aw);
                op_row(&mut o, "kaio_reads", 0, None);
                op_row(&mut o, "kaio_writes", 0, None);
            }
        }
        o.push('\n');
    }
    o
}

/// `stat -L -c '%f %t %T %d %n' -- PATHS`: each chunk path followed to what it is.
pub(crate) fn stat(paths: &[&str]) -> Output {
    if paths.is_empty() {
        return Output {
            exit: Some(1),
            stdout: String::new(),
            stderr: "stat: missing operand\nTry 'stat --help' for more information.\n".into(),
        };
    }
    let mut out = Output {
        exit: Some(0),
        ..Output::default()
    };
    for p in paths {
        let load = CHUNKS
            .iter()
            .find(|c| c.path == *p)
            .and_then(|c| LOADS.iter().find(|l| l.chunk == c.number));
        match load.map(|l| &l.target) {
            Some(Target::Block(name)) => {
                let Some(d) = device(name) else { continue };
                // A device node on devtmpfs (0:5): its own device in %t/%T.
                let _ = writeln!(out.stdout, "61b0 {:x} {:x} 5 {p}", d.major, d.minor);
            }
            Some(Target::File(name)) => {
                let Some(d) = device(name) else { continue };
                let st_dev = (u64::from(d.major) << 8) | u64::from(d.minor);
                let _ = writeln!(out.stdout, "81b0 0 0 {st_dev} {p}");
            }
            None => {
                out.exit = Some(1);
                let _ = writeln!(
                    out.stderr,
                    "stat: cannot stat '{p}': No such file or directory"
                );
            }
        }
    }
    out
}

fn uevent(d: &Dev) -> String {
    let mut o = format!(
        "MAJOR={}\nMINOR={}\nDEVNAME={}\nDEVTYPE={}\n",
        d.major,
        d.minor,
        d.name,
        if d.partition_of.is_some() {
            "partition"
        } else {
            "disk"
        }
    );
    if d.partition_of.is_some() {
        let n = d.name.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        let _ = writeln!(o, "PARTN={n}");
    }
    o
}

/// A device by the `M:m` of `/sys/dev/block/M:m` or the name of `/sys/class/block/NAME`, and
/// the rest of the path.
fn sys_device(path: &str) -> Option<(&'static Dev, &str)> {
    if let Some(rest) = path.strip_prefix("/sys/dev/block/") {
        let (num, file) = rest.split_once('/').unwrap_or((rest, ""));
        let (major, minor) = num.split_once(':')?;
        let (major, minor): (u32, u32) = (major.parse().ok()?, minor.parse().ok()?);
        let d = DEVICES
            .iter()
            .find(|d| d.major == major && d.minor == minor)?;
        return Some((d, file));
    }
    let rest = path.strip_prefix("/sys/class/block/")?;
    let (name, file) = rest.split_once('/').unwrap_or((rest, ""));
    Some((device(name)?, file))
}

/// A sysfs file of a block device: `uevent`, `dev`, `dm/name`, `dm/uuid`, and a partition's
/// `../uevent` (its disk's: the kernel follows the link before `..`).
pub(crate) fn sys_file(path: &str) -> Option<String> {
    let (d, file) = sys_device(path)?;
    match file {
        "uevent" => Some(uevent(d)),
        "dev" => Some(format!("{}:{}\n", d.major, d.minor)),
        "partition" => d.partition_of.map(|_| {
            format!(
                "{}\n",
                d.name.trim_start_matches(|c: char| c.is_ascii_alphabetic())
            )
        }),
        "dm/name" => d.dm.map(|(n, _)| format!("{n}\n")),
        "dm/uuid" => d.dm.map(|(_, u)| format!("{u}\n")),
        "../uevent" => d.partition_of.and_then(device).map(uevent),
        _ => None,
    }
}

/// A sysfs directory listing: `slaves` (what a dm device is built on; empty for a disk or a
/// partition), as the runner lists it (one name a line, sorted).
pub(crate) fn sys_dir(path: &str) -> Option<String> {
    let (d, file) = sys_device(path)?;
    match file {
        "slaves" => {
            let mut names: Vec<&str> = d.slaves.to_vec();
            names.sort_unstable();
            Some(names.join("\n"))
        }
        "holders" => {
            let mut names: Vec<&str> = DEVICES
                .iter()
                .filter(|h| h.slaves.contains(&d.name))
                .map(|h| h.name)
                .collect();
            names.sort_unstable();
            Some(names.join("\n"))
        }
        _ => None,
    }
}

/// The chunks of the demo as `schema` has them, for tests.
#[cfg(test)]
fn chunk_paths() -> Vec<&'static str> {
    CHUNKS.iter().map(|c| c.path).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_chunk_has_a_load_and_a_device() {
        for c in &CHUNKS {
            let l = LOADS.iter().find(|l| l.chunk == c.number).expect("load");
            for (d, _) in l.route {
                assert!(device(d).is_some(), "{d}");
            }
        }
        for d in &DEVICES {
            for s in d.slaves {
                assert!(device(s).is_some(), "{s}");
            }
            if let Some(p) = d.partition_of {
                assert!(device(p).is_some(), "{p}");
            }
        }
        let out = stat(&chunk_paths());
        assert_eq!(out.exit, Some(0));
        assert_eq!(out.stdout.lines().count(), CHUNKS.len());
    }

    #[test]
    fn the_ramp_integrates() {
        let p = timeline::first(Incident::SlowDevice).expect("phase");
        assert_eq!(ramp_integral(p.start as f64), 0.0);
        assert!((ramp_integral(p.start as f64 + RAMP_S) - RAMP_S / 2.0).abs() < 1e-9);
        let full = p.len() as f64 - RAMP_S / 2.0;
        assert!((ramp_integral(CYCLE as f64) - full).abs() < 1e-9);
        assert!((ramp_integral(CYCLE as f64 + p.start as f64) - full).abs() < 1e-9);
        let mut prev = 0.0;
        for t in 0..2 * CYCLE {
            let v = ramp_integral(t as f64);
            assert!(v >= prev);
            prev = v;
        }
    }
}
