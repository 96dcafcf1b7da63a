//! Is it the disk? Is it the replica? The chunk → device join through a fake host's `stat` and
//! sysfs (an LVM volume on multipath down to its paths, a partition to its disk, a cooked file to
//! its filesystem's device, and every way a device stays unknown, said), the transcript read
//! back to the same result, rates across counter resets and wraps, Informix's op times over a
//! span or since its reset, the verdicts, and buffer waiters on a slow chunk.

// Tests fail by panicking; `expect` says what was missing.
#![allow(clippy::expect_used)]

use ifxtop::collect::devices::resolve_with;
use ifxtop::collect::sample::Update;
use ifxtop::error::SourceError;
use ifxtop::model::io::Concern;
use ifxtop::model::snapshot::{self, Snapshot};
use ifxtop::parsers::chunk_devices::{self, PathKind};
use ifxtop::parsers::sysblock::{DevNum, DmTarget};
use ifxtop::source::{CommandRunner, Output, Request, Source};
use ifxtop::store::{Store, StoreSettings};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::Duration;

/// A host as `stat` and sysfs show it: stat lines per path, files and directory listings.
#[derive(Default)]
struct FakeHost {
    stat: BTreeMap<&'static str, &'static str>,
    files: BTreeMap<String, String>,
    dirs: BTreeMap<String, String>,
    /// `stat` is not installed.
    no_stat: bool,
    asked: Mutex<Vec<Request>>,
}

impl FakeHost {
    fn file(mut self, path: &str, text: &str) -> Self {
        self.files.insert(path.to_string(), text.to_string());
        self
    }

    fn dir(mut self, path: &str, names: &str) -> Self {
        self.dirs.insert(path.to_string(), names.to_string());
        self
    }

    /// A block device with its uevent under both of its sysfs names, and its slaves.
    fn dev(self, name: &str, major: u32, minor: u32, partition_of: Option<&str>) -> Self {
        let kind = if partition_of.is_some() {
            "partition\nPARTN=1"
        } else {
            "disk"
        };
        let uevent = format!("MAJOR={major}\nMINOR={minor}\nDEVNAME={name}\nDEVTYPE={kind}\n");
        let base = format!("/sys/dev/block/{major}:{minor}");
        let s = self
            .file(&format!("{base}/uevent"), &uevent)
            .file(&format!("/sys/class/block/{name}/uevent"), &uevent);
        if partition_of.is_none() {
            s.dir(&format!("{base}/slaves"), "")
        } else {
            s
        }
    }

    fn dm(self, name: &str, minor: u32, dm_name: &str, uuid: &str, slaves: &str) -> Self {
        let base = format!("/sys/dev/block/253:{minor}");
        self.dev(name, 253, minor, None)
            .file(&format!("{base}/dm/name"), &format!("{dm_name}\n"))
            .file(&format!("{base}/dm/uuid"), &format!("{uuid}\n"))
            .dir(&format!("{base}/slaves"), slaves)
    }

    /// A partition's `..` is its disk.
    fn parent(self, major: u32, minor: u32, disk: &str, dmajor: u32, dminor: u32) -> Self {
        self.file(
            &format!("/sys/dev/block/{major}:{minor}/../uevent"),
            &format!("MAJOR={dmajor}\nMINOR={dminor}\nDEVNAME={disk}\nDEVTYPE=disk\n"),
        )
    }
}

impl CommandRunner for FakeHost {
    fn run<'a>(
        &'a self,
        request: &'a Request,
        _timeout: Duration,
    ) -> Pin<Box<dyn Future<Output = Result<Output, SourceError>> + Send + 'a>> {
        self.asked.lock().expect("lock").push(request.clone());
        let missing = |p: &std::path::Path| SourceError::Io {
            path: p.display().to_string(),
            reason: "No such file or directory (os error 2)".into(),
        };
        let out = match request {
            Request::Command(argv) if argv.first().map(String::as_str) == Some("stat") => {
                if self.no_stat {
                    Err(SourceError::NotFound {
                        program: "stat".into(),
                    })
                } else {
                    let paths = &argv[5..];
                    let mut o = Output {
                        exit: Some(0),
                        ..Output::default()
                    };
                    for p in paths {
                        match self.stat.get(p.as_str()) {
                            Some(line) => o.stdout.push_str(&format!("{line} {p}\n")),
                            None => {
                                o.exit = Some(1);
                                o.stderr.push_str(&format!(
                                    "stat: cannot stat '{p}': No such file or directory\n"
                                ));
                            }
                        }
                    }
                    Ok(o)
                }
            }
            Request::ReadFile(p) => self
                .files
                .get(p.to_str().unwrap_or(""))
                .map(|t| ok(t))
                .ok_or_else(|| missing(p)),
            Request::ListDir(p) => self
                .dirs
                .get(p.to_str().unwrap_or(""))
                .map(|t| ok(t))
                .ok_or_else(|| missing(p)),
            other => Err(SourceError::NotFound {
                program: format!("{other:?}"),
            }),
        };
        Box::pin(async move { out })
    }
}

fn ok(text: &str) -> Output {
    Output {
        exit: Some(0),
        stdout: text.to_string(),
        stderr: String::new(),
    }
}

const LV: &str = "LVM-Kq0tWnBv3lTzC8cD1fXhQe2m9sRyAo4J1bC8dE2fG7hJ3kL9mN0pQ5rS6tU4vW";
const MPATH: &str = "mpath-3600a098038303742695d4a5a4e2f6b41";

/// An LVM volume on a multipath map on two paths; a partition of a local disk; a cooked file on
/// an LVM volume on a partition; a file on NFS; a raw binding; a loop in the dm tables; a dm
/// device whose slaves cannot be listed.
fn host() -> FakeHost {
    let mut h = FakeHost::default()
        .dev("sda", 8, 0, None)
        .dev("sda2", 8, 2, Some("sda"))
        .parent(8, 2, "sda", 8, 0)
        .dev("sdb", 8, 16, None)
        .dev("sdc", 8, 32, None)
        .dev("sdd", 8, 48, None)
        .dev("sdd1", 8, 49, Some("sdd"))
        .parent(8, 49, "sdd", 8, 48)
        .dm("dm-2", 2, "vg_sys-lv_ifx", LV, "sda2")
        .dm("dm-3", 3, "mpatha", MPATH, "sdb\nsdc")
        .dm("dm-4", 4, "vg_ifx-lv_data1", LV, "dm-3")
        .dm("dm-9", 9, "loop_a", "", "dm-10")
        .dm("dm-10", 10, "loop_b", "", "dm-9")
        .dev("dm-11", 253, 11, None);
    // dm-11's slaves directory cannot be read.
    h.dirs.remove("/sys/dev/block/253:11/slaves");
    h.stat = BTreeMap::from([
        // Links to block devices: their own major:minor (in hex).
        ("/ifx/chunks/data1", "61b0 fd 4 5"),
        ("/ifx/chunks/local", "61b0 8 31 5"),
        // A cooked file on dm-2: st_dev (253 << 8) | 2.
        ("/ifx/chunks/llog", "81b0 0 0 64770"),
        // A cooked file on NFS: an anonymous device 0:52.
        ("/nfs/chunks/c1", "81a4 0 0 52"),
        // A character device (a raw binding).
        ("/dev/raw/raw1", "21b0 a2 1 5"),
        ("/ifx/chunks/looped", "61b0 fd 9 5"),
        ("/ifx/chunks/unlistable", "61b0 fd b 5"),
    ]);
    h
}

fn resolve(h: &FakeHost, paths: &[&str]) -> chunk_devices::Resolver {
    let paths: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(resolve_with(h, &paths))
}

fn dev(major: u32, minor: u32) -> DevNum {
    DevNum { major, minor }
}

#[test]
fn each_chunk_goes_down_to_its_disks_or_says_why_not() {
    let h = host();
    let all = [
        "/ifx/chunks/data1",
        "/ifx/chunks/local",
        "/ifx/chunks/llog",
        "/nfs/chunks/c1",
        "/dev/raw/raw1",
        "/ifx/chunks/missing",
        "/ifx/chunks/looped",
        "/ifx/chunks/unlistable",
    ];
    let r = resolve(&h, &all);
    assert!(r.needs().is_empty(), "{:?}", r.needs());
    let d = r.result();
    let c = |p: &str| d.chunk(p).unwrap_or_else(|| panic!("{p}"));

    // An LVM volume on multipath: the volume, the map, both paths.
    let data1 = c("/ifx/chunks/data1");
    assert_eq!(data1.kind, Some(PathKind::BlockDevice));
    assert_eq!(data1.device, Some(dev(253, 4)));
    assert_eq!(data1.below, vec![dev(253, 3)]);
    assert_eq!(data1.disks, vec![dev(8, 16), dev(8, 32)]);
    assert_eq!(data1.unknown, None);
    let lv = d.device(dev(253, 4)).expect("dm-4");
    assert_eq!(lv.label(), "vg_ifx-lv_data1 (dm-4)");
    assert_eq!(lv.dm_target, Some(DmTarget::Lvm));
    assert_eq!(
        d.device(dev(253, 3)).and_then(|m| m.dm_target.clone()),
        Some(DmTarget::Multipath)
    );

    // A partition: its disk.
    let local = c("/ifx/chunks/local");
    assert_eq!(local.device, Some(dev(8, 49)));
    assert!(local.below.is_empty());
    assert_eq!(local.disks, vec![dev(8, 48)]);
    assert!(d.device(dev(8, 49)).expect("sdd1").partition);

    // A cooked file: its filesystem's device, an LVM volume on a partition of sda.
    let llog = c("/ifx/chunks/llog");
    assert_eq!(llog.kind, Some(PathKind::File));
    assert_eq!(llog.device, Some(dev(253, 2)));
    assert_eq!(llog.below, vec![dev(8, 2)]);
    assert_eq!(llog.disks, vec![dev(8, 0)]);

    // Said, never guessed.
    let nfs = c("/nfs/chunks/c1");
    assert_eq!(nfs.disks, Vec::<DevNum>::new());
    let why = nfs.unknown.as_deref().expect("unknown");
    assert!(
        why.contains("no block device of its own") && why.contains("0:52"),
        "{why}"
    );
    let raw = c("/dev/raw/raw1");
    assert_eq!(raw.kind, Some(PathKind::CharDevice));
    assert!(raw
        .unknown
        .as_deref()
        .is_some_and(|w| w.contains("character device")));
    let missing = c("/ifx/chunks/missing");
    assert_eq!(
        missing.unknown.as_deref(),
        Some("stat: cannot stat '/ifx/chunks/missing': No such file or directory")
    );
    let looped = c("/ifx/chunks/looped");
    assert!(
        looped
            .unknown
            .as_deref()
            .is_some_and(|w| w.contains("loop")),
        "{looped:?}"
    );
    let unlistable = c("/ifx/chunks/unlistable");
    assert_eq!(unlistable.device, Some(dev(253, 11)));
    assert!(
        unlistable
            .unknown
            .as_deref()
            .is_some_and(|w| w.contains("/sys/dev/block/253:11/slaves")),
        "{unlistable:?}"
    );

    // One stat for every path; nothing asked twice.
    let asked = h.asked.lock().expect("lock").clone();
    let stats = asked
        .iter()
        .filter(|r| matches!(r, Request::Command(_)))
        .count();
    assert_eq!(stats, 1);
    let mut unique = asked.clone();
    unique.sort_by_key(|r| format!("{r:?}"));
    unique.dedup();
    assert_eq!(unique.len(), asked.len());

    // The transcript reads back to the same resolution (what a replay does).
    let again = chunk_devices::parse(&r.transcript()).expect("transcript");
    assert_eq!(again.chunks, d.chunks);
    assert_eq!(again.devices, d.devices);
    assert!(again.unparsed.is_empty());
}

#[test]
fn without_stat_every_chunk_says_so() {
    let mut h = host();
    h.no_stat = true;
    let d = resolve(&h, &["/ifx/chunks/data1", "/ifx/chunks/llog"]).result();
    for c in &d.chunks {
        assert_eq!(
            c.unknown.as_deref(),
            Some("stat failed: stat: not found on PATH"),
            "{c:?}"
        );
        assert_eq!(c.device, None);
    }
}

#[test]
fn a_transcript_that_is_not_one_is_an_error() {
    assert!(chunk_devices::parse("hello\n").is_err());
    assert!(chunk_devices::parse("").is_err());
}

// ---------------------------------------------------------------------------------------------
// Rates, op times, verdicts, through the store

const BANNER: &str = "\nIBM Informix Dynamic Server Version 12.10.FC8 -- On-Line (Prim) -- Up 2 days 03:04:05 -- 2395548 Kbytes\n\n";

fn apply(store: &mut Store, source: Source, t: u64, text: &str) {
    let result = source.parse(Output {
        exit: Some(
            if matches!(source, Source::ProcDiskstats | Source::ChunkDevices) {
                0
            } else {
                5
            },
        ),
        stdout: text.to_string(),
        stderr: String::new(),
    });
    match &result {
        Ok(p) => assert_eq!(p.unparsed(), 0, "{}: lines left unparsed", source.label()),
        Err(e) => panic!("{}: {e}\n{text}", source.label()),
    }
    store.apply(Update {
        source,
        t: Duration::from_secs(t),
        took: Duration::ZERO,
        result,
        how: Default::default(),
    });
}

fn onstat_d(rd: u64, wr: u64) -> String {
    format!(
        "{BANNER}Dbspaces
address          number   flags      fchunk   nchunks  pgsize   flags    owner    name
4b4a0028         1        0x60001    1        2        2048     N  BA    informix datadbs
 1 active, 2047 maximum

Chunks
address          chunk/dbs     offset     page Rd    page Wr    pathname
4b4a1028         1      1      0          {rd:<10} {wr:<10} /ifx/chunks/data1
4b4a2028         2      1      0          100        100        /ifx/chunks/llog
 2 active, 32766 maximum

Expanded chunk capacity mode: always
"
    )
}

/// `/proc/diskstats` (14 fields) with dm-4's counters: reads, read ms, writes, write ms, busy ms.
fn diskstats(reads: u64, read_ms: u64, writes: u64, write_ms: u64, io_ms: u64) -> String {
    format!(
        "   8      16 sdb {reads} 0 {} {read_ms} {writes} 0 {} {write_ms} 0 {io_ms} {}\n \
         253       4 dm-4 {reads} 0 {} {read_ms} {writes} 0 {} {write_ms} 0 {io_ms} {}\n",
        reads * 16,
        writes * 16,
        read_ms + write_ms,
        reads * 16,
        writes * 16,
        read_ms + write_ms
    )
}

fn iof(count: u64, avg: &str) -> String {
    format!(
        "{BANNER}AIO global files:
gfd pathname                    bytes read   page reads   bytes write   page writes  io/s
3   /ifx/chunks/data1           2048         1            2048          1            1.0

      op type     count         avg. time
      kaio_reads  {count:<13} {avg}
      kaio_writes 0             N/A
"
    )
}

fn devices_store() -> Store {
    let mut s = Store::new(StoreSettings::default());
    let h = host();
    let transcript = resolve(&h, &["/ifx/chunks/data1", "/ifx/chunks/llog"]).transcript();
    apply(&mut s, Source::ChunkDevices, 0, &transcript);
    s
}

fn io_of(s: &Store) -> Snapshot {
    snapshot::build(s, s.latest, Some("test"), &[])
}

#[test]
fn chunk_rates_start_over_after_a_reset() {
    let mut s = devices_store();
    apply(&mut s, Source::OnstatDUpper, 0, &onstat_d(1_000, 500));
    apply(&mut s, Source::OnstatDUpper, 5, &onstat_d(11_000, 1_500));
    let row = |s: &Store| io_of(s).io.chunks.iter().find(|c| c.chunk == 1).cloned();
    let r = row(&s).expect("chunk 1");
    assert_eq!(
        (r.reads_per_s, r.writes_per_s),
        (Some(2_000.0), Some(200.0))
    );
    assert_eq!(r.dbspace.as_deref(), Some("datadbs"));
    // onstat -z: the counters went down. No rate (never a negative one) until the next sample.
    apply(&mut s, Source::OnstatDUpper, 10, &onstat_d(40, 10));
    let r = row(&s).expect("chunk 1");
    assert_eq!((r.reads_per_s, r.writes_per_s), (None, None));
    apply(&mut s, Source::OnstatDUpper, 15, &onstat_d(540, 60));
    let r = row(&s).expect("chunk 1");
    assert_eq!((r.reads_per_s, r.writes_per_s), (Some(100.0), Some(10.0)));
}

#[test]
fn device_await_and_util_as_iostat_computes_them_across_a_wrap_and_a_reset() {
    let mut s = devices_store();
    apply(&mut s, Source::OnstatDUpper, 0, &onstat_d(0, 0));
    apply(&mut s, Source::OnstatDUpper, 5, &onstat_d(500, 0));
    // 5 s: 300 reads taking 12,000 ms, 100 writes taking 4,000 ms, busy 1,500 ms.
    apply(
        &mut s,
        Source::ProcDiskstats,
        0,
        &diskstats(1_000, 2_000, 500, 800, 10_000),
    );
    apply(
        &mut s,
        Source::ProcDiskstats,
        5,
        &diskstats(1_300, 14_000, 600, 4_800, 11_500),
    );
    let snap = io_of(&s);
    let c = snap.io.chunk(1).expect("chunk 1");
    assert_eq!(c.device.as_deref(), Some("dm-4"));
    assert_eq!(c.device_name.as_deref(), Some("vg_ifx-lv_data1"));
    assert_eq!(c.layers, vec!["mpatha (dm-3)".to_string()]);
    assert_eq!(c.device_iops, Some(80.0));
    assert_eq!(c.device_await_ms, Some(40.0));
    assert_eq!(c.device_r_await_ms, Some(40.0));
    assert_eq!(c.device_w_await_ms, Some(40.0));
    assert_eq!(c.device_util_pct, Some(30.0));
    assert_eq!(c.concern, Concern::Warn);
    let v = c.verdict.as_deref().expect("verdict");
    assert!(
        v.starts_with("the device is slow: 40 ms await at 30 % util")
            && v.contains("below Informix"),
        "{v}"
    );
    // The disks under it, with their own figures (sdb has the same counters here).
    assert_eq!(c.disks.len(), 2);
    assert_eq!(c.disks[0].name, "sdb");
    assert_eq!(c.disks[0].await_ms, Some(40.0));
    // The cooked chunk's filesystem device has no diskstats line: no figures, no verdict.
    let cooked = snap.io.chunk(2).expect("chunk 2");
    assert_eq!(cooked.chunk_kind, Some("cooked"));
    assert_eq!(cooked.device_await_ms, None);
    assert_eq!(cooked.verdict, None);

    // A 32-bit counter wraps (io_ticks on older kernels): read through the wrap.
    let top = (1u64 << 32) - 1_000;
    apply(
        &mut s,
        Source::ProcDiskstats,
        10,
        &diskstats(1_400, 14_200, 600, 4_800, top),
    );
    apply(
        &mut s,
        Source::ProcDiskstats,
        15,
        &diskstats(1_500, 14_400, 600, 4_800, 1_500),
    );
    let c = io_of(&s).io.chunk(1).cloned().expect("chunk 1");
    assert_eq!(c.device_util_pct, Some(50.0));
    assert_eq!(c.device_await_ms, Some(2.0));
    // The device added again: its counters start from nothing. No rate, never a negative one.
    apply(
        &mut s,
        Source::ProcDiskstats,
        20,
        &diskstats(10, 20, 5, 5, 30),
    );
    let c = io_of(&s).io.chunk(1).cloned().expect("chunk 1");
    assert_eq!(c.device_await_ms, None);
    assert_eq!(c.device_util_pct, None);
    assert!(
        c.device_unknown
            .as_deref()
            .is_some_and(|w| w.contains("counters reset")),
        "{c:?}"
    );
    apply(
        &mut s,
        Source::ProcDiskstats,
        25,
        &diskstats(110, 220, 5, 5, 530),
    );
    let c = io_of(&s).io.chunk(1).cloned().expect("chunk 1");
    assert_eq!(c.device_await_ms, Some(2.0));
    assert_eq!(c.device_util_pct, Some(10.0));
}

#[test]
fn informix_op_times_over_a_span_when_precise_else_since_the_reset() {
    let mut s = devices_store();
    apply(&mut s, Source::OnstatDUpper, 0, &onstat_d(0, 0));
    // Shortly after `onstat -z`: 1,000 reads at 2.0 ms, then 1,000 more at 40 ms.
    apply(&mut s, Source::OnstatGIof, 0, &iof(1_000, "0.0020"));
    apply(&mut s, Source::OnstatGIof, 10, &iof(2_000, "0.0210"));
    let c = io_of(&s).io.chunk(1).cloned().expect("chunk 1");
    let ms = c.avg_read_ms.expect("avg");
    assert!((ms - 40.0).abs() < 0.5, "{ms}");
    assert_eq!(c.avg_read_over_s, Some(10.0));
    // Weeks of counts: 0.1 ms of printing over 50 M operations says nothing of the last 10 s.
    let mut s = devices_store();
    apply(&mut s, Source::OnstatDUpper, 0, &onstat_d(0, 0));
    apply(&mut s, Source::OnstatGIof, 0, &iof(50_000_000, "0.0020"));
    apply(&mut s, Source::OnstatGIof, 10, &iof(50_010_000, "0.0020"));
    let c = io_of(&s).io.chunk(1).cloned().expect("chunk 1");
    assert_eq!(c.avg_read_ms, Some(2.0));
    assert_eq!(c.avg_read_over_s, None, "since the reset, as printed");
    // A reset between samples: the older sample does not count.
    apply(&mut s, Source::OnstatGIof, 20, &iof(500, "0.0050"));
    let c = io_of(&s).io.chunk(1).cloned().expect("chunk 1");
    assert_eq!((c.avg_read_ms, c.avg_read_over_s), (Some(5.0), None));
}

#[test]
fn a_buffer_waiter_on_a_slow_chunk_says_so() {
    let mut s = devices_store();
    let u = format!(
        "{BANNER}Userthreads
address          flags   sessid   user     tty      wait             tout locks nreads   nwrites
4b4ad628         --BPR-- 812      appuser  -        0                0    3     120      45
4b4adc40         B-BP--- 813      appuser  -        37854d188        0    1     10       2
 2 active, 128 total, 12 maximum concurrent
"
    );
    let x = format!(
        "{BANNER}Buffers (Access)
address          owner            flags pagenum          memaddr          nslots pgflgs scount   waiter

Buffer pool page size: 2048
37854d188        4b4ad628         80    1:1000           4baeff4000       248    890    1        4b4adc40
 59577 modified, 8388608 total, 8388608 hash buckets, 2048 buffer size
"
    );
    apply(&mut s, Source::OnstatU, 5, &u);
    apply(&mut s, Source::OnstatX, 5, &x);
    apply(&mut s, Source::OnstatDUpper, 0, &onstat_d(0, 0));
    apply(&mut s, Source::OnstatDUpper, 5, &onstat_d(500, 0));
    apply(
        &mut s,
        Source::ProcDiskstats,
        0,
        &diskstats(1_000, 2_000, 500, 800, 10_000),
    );
    apply(
        &mut s,
        Source::ProcDiskstats,
        5,
        &diskstats(1_300, 14_000, 600, 4_800, 11_500),
    );
    let snap = io_of(&s);
    let w = snap
        .waiters
        .iter()
        .find(|w| w.sessid.0 == 813)
        .expect("813 waits");
    assert!(
        w.verdict.ends_with(
            "; its page is on chunk 1 (datadbs), whose device is slow: 40 ms await \
             (vg_ifx-lv_data1 (dm-4))"
        ),
        "{}",
        w.verdict
    );
}

#[test]
fn the_devices_are_unknown_without_diskstats_and_say_why() {
    let mut s = Store::new(StoreSettings::default());
    apply(&mut s, Source::OnstatDUpper, 0, &onstat_d(0, 0));
    s.apply(Update {
        source: Source::ProcDiskstats,
        t: Duration::ZERO,
        took: Duration::ZERO,
        result: Err(SourceError::Io {
            path: "/proc/diskstats".into(),
            reason: "No such file or directory (os error 2)".into(),
        }),
        how: Default::default(),
    });
    let snap = io_of(&s);
    let note = snap.io.note.as_deref().expect("note");
    assert!(
        note.starts_with("device latency unknown: /proc/diskstats cannot be read"),
        "{note}"
    );
    assert!(snap
        .io
        .chunks
        .iter()
        .all(|c| c.device_unknown.as_deref() == Some("no /proc/diskstats")));
}

/// The parse of a chunk devices transcript is what the store keeps.
#[test]
fn the_store_keeps_the_resolution() {
    let s = devices_store();
    let d = s
        .get(ifxtop::source::key::ChunkDevices)
        .expect("resolution");
    assert_eq!(d.chunks.len(), 2);
}

// ---------------------------------------------------------------------------------------------
// Replication

fn fixture(rel: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(rel),
    )
    .expect("fixture")
}

fn banner_u(flags: &str) -> String {
    format!(
        "\nIBM Informix Dynamic Server Version 12.10.FC10 -- On-Line{flags} -- Up 2 days 04:17:09 -- 4349812 Kbytes\n\nUserthreads
address          flags   sessid   user     tty      wait             tout locks nreads   nwrites
4b4ad628         ---P--D 1        informix -        0                0    0     10       5
 1 active, 128 total, 12 maximum concurrent
"
    )
}

#[test]
fn peers_lag_in_pages_and_seconds_and_transmission_blocked() {
    let mut s = Store::new(StoreSettings::default());
    apply(&mut s, Source::OnstatU, 0, &banner_u(" (Prim)"));
    let cluster = fixture("onstat-g-cluster/ifxtop-verbose-primary-semicolon-epoch-ack.txt");
    // Ten seconds earlier the primary was where berlin has acknowledged now.
    let earlier = cluster.replace("Current Log Page:1829,4349", "Current Log Page:1829,4270");
    assert_ne!(earlier, cluster);
    apply(&mut s, Source::OnstatGCluster, 0, &earlier);
    apply(&mut s, Source::OnstatGCluster, 10, &cluster);
    // berlin's RSS block on the primary: blocked, 385 pages not acknowledged.
    let rss = fixture("onstat-g-rss/ifxtop-primary-verbose-blocked-backlog.txt")
        .replace("ifx_dr_east", "berlin")
        .replace("ifx_dr_west", "paris");
    apply(&mut s, Source::OnstatGRss, 10, &rss);
    let r = io_of(&s).replication;
    assert_eq!(r.role.as_deref(), Some("primary"));
    assert_eq!(
        r.current_log_page.map(|p| (p.log, p.page)),
        Some((1829, 4349))
    );
    let names: Vec<&str> = r.peers.iter().map(|p| p.name.as_str()).collect();
    // Blocked first, then the one not connected, then the rest by lag.
    assert_eq!(names, vec!["berlin", "paris", "london", "tokyo"]);
    let berlin = &r.peers[0];
    assert_eq!(berlin.peer_type.as_deref(), Some("RSS"));
    assert_eq!(berlin.transmission.as_deref(), Some("Blocked"));
    // The lag from the cluster's positions (its current page and berlin's acknowledged one,
    // one sample): 79 pages, where the primary was ten seconds ago.
    assert_eq!(berlin.lag_pages, Some(79));
    assert_eq!(berlin.lag_s, Some(10.0));
    assert_eq!(berlin.concern, Concern::Alarm);
    assert_eq!(
        berlin.verdict.as_deref(),
        Some(
            "log transmission blocked: 385 pages sent and not acknowledged (flow control \
             384/352); 79 log pages behind (10s) — the secondary (or the network to it) does \
             not keep up"
        )
    );
    let paris = &r.peers[1];
    assert_eq!(
        paris.verdict.as_deref(),
        Some("not connected (Disconnected)")
    );
    assert_eq!(paris.concern, Concern::Notice, "a server only defined");
    assert_eq!(paris.last_ack.as_deref(), Some("never"));
    let london = &r.peers[2];
    assert_eq!((london.lag_pages, london.lag_s), (Some(0), Some(0.0)));
    assert_eq!(london.last_ack.as_deref(), Some("never"), "the epoch");
    assert_eq!(london.peer_type.as_deref(), Some("HDR"));

    // Without the RSS block, the same lag, nothing blocked.
    let mut s = Store::new(StoreSettings::default());
    apply(&mut s, Source::OnstatU, 0, &banner_u(" (Prim)"));
    apply(&mut s, Source::OnstatGCluster, 0, &earlier);
    apply(&mut s, Source::OnstatGCluster, 10, &cluster);
    let r = io_of(&s).replication;
    let berlin = r.peers.iter().find(|p| p.name == "berlin").expect("berlin");
    assert_eq!((berlin.lag_pages, berlin.lag_s), (Some(79), Some(10.0)));
    assert_eq!(berlin.last_ack.as_deref(), Some("2013/06/04 14:22:36"));
    assert_eq!(berlin.lag_history, vec![0.0, 79.0]);
    assert_eq!(berlin.verdict, None);

    // Without the cluster (no current page): the backlog and the pages not acknowledged; its
    // acknowledged position alone says nothing of seconds.
    let mut s = Store::new(StoreSettings::default());
    apply(&mut s, Source::OnstatU, 0, &banner_u(" (Prim)"));
    apply(&mut s, Source::OnstatGRss, 10, &rss);
    let r = io_of(&s).replication;
    let berlin = r.peers.iter().find(|p| p.name == "berlin").expect("berlin");
    assert_eq!(berlin.lag_pages, Some(97_104 + 385));
    assert_eq!((berlin.lag_s, berlin.lag_s_at_least), (None, None));
    assert!(berlin
        .verdict
        .as_deref()
        .is_some_and(|v| v.contains("; 97,489 log pages behind —")));
}

#[test]
fn a_secondary_says_how_far_it_is_and_a_standard_server_has_no_replication() {
    let mut s = Store::new(StoreSettings::default());
    apply(&mut s, Source::OnstatU, 0, &banner_u(""));
    let r = io_of(&s).replication;
    assert_eq!(r.role.as_deref(), Some("standard"));
    assert!(r.peers.is_empty() && r.secondary.is_none());
    assert!(r
        .note
        .as_deref()
        .is_some_and(|n| n.contains("no replication")));

    let mut s = Store::new(StoreSettings::default());
    apply(
        &mut s,
        Source::OnstatU,
        0,
        &banner_u(" (RSS)").replace("On-Line", "Read-Only"),
    );
    apply(
        &mut s,
        Source::OnstatGRss,
        0,
        &fixture("onstat-g-rss/ifxtop-rss-secondary-read-only-banner.txt"),
    );
    let r = io_of(&s).replication;
    assert_eq!(r.role.as_deref(), Some("RSS secondary"));
    let sec = r.secondary.clone().expect("secondary");
    assert_eq!(sec.source.as_deref(), Some("ol_east"));
    assert_eq!(sec.connection.as_deref(), Some("Connected"));
    assert_eq!(sec.received.map(|p| (p.log, p.page)), Some((1871, 40102)));

    let mut s = Store::new(StoreSettings::default());
    apply(
        &mut s,
        Source::OnstatU,
        0,
        &banner_u(" (Sec)").replace("On-Line", "Read-Only"),
    );
    apply(
        &mut s,
        Source::OnstatGDri,
        0,
        &fixture("onstat-g-dri/ifxtop-14.10-hdr-secondary-two-word-type.txt"),
    );
    let r = io_of(&s).replication;
    assert_eq!(r.role.as_deref(), Some("HDR secondary"));
    let sec = r.secondary.clone().expect("secondary");
    assert_eq!(sec.source.as_deref(), Some("ol_prod_a"));
    assert_eq!(sec.dr_state.as_deref(), Some("on"));
}
