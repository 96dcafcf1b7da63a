//! What the demo host's kernel shows: `/proc/net/tcp{,6}`, `netstat -an`, the NUMA node files
//! under `/sys/devices/system/node`, `/proc/sys/vm/zone_reclaim_mode`, `/proc/vmstat`, the
//! process list with `comm` and `numa_maps`. A 2-socket box (2 NUMA nodes, 2x16 cores) with
//! zone_reclaim_mode = 1, the seed's misconfiguration.

use super::instance::{Link, Population, INFORMIX_UID, SERVER_IP};
use super::moment::World;
use super::noise::{below, Salt};
use super::text;
use super::timeline::Now;
use super::timeline::{self, Incident};
use crate::demo::LISTENER_PORT;
use std::fmt::Write as _;

/// Width the kernel pads `/proc/net/tcp` lines to (`TMPSZ - 1`).
const TCP_LINE: usize = 149;

/// The DBA's own ssh connection and the host's other sockets.
const SSH_CLIENT: ([u8; 4], u16) = ([10, 30, 4, 17], 51_514);

/// An IPv4 address as `/proc/net/tcp` prints it: the 32-bit value in host byte order.
fn word(ip: [u8; 4]) -> u64 {
    u64::from(u32::from_ne_bytes(ip))
}

/// An address column of `/proc/net/tcp{,6}`.
#[derive(Clone, Copy)]
enum Ip {
    V4([u8; 4]),
    /// `::` (the IPv6 wildcard).
    Any6,
    /// `::ffff:a.b.c.d`.
    Mapped([u8; 4]),
}

fn write_ip(o: &mut text::Rows<'_>, ip: Ip) {
    match ip {
        Ip::V4(a) => o.zhex(word(a), 8),
        Ip::Any6 => o.zhex(0, 32),
        Ip::Mapped(a) => {
            o.zhex(0, 16);
            o.zhex(word([0, 0, 0xff, 0xff]), 8);
            o.zhex(word(a), 8);
        }
    }
}

/// One socket row as the kernel prints it (`get_tcp4_sock` / `get_tcp6_sock`), padded like
/// tcp4's when `pad`.
#[allow(clippy::too_many_arguments)]
fn tcp_row(
    o: &mut text::Rows<'_>,
    sl: usize,
    (local, lport): (Ip, u16),
    (remote, rport): (Ip, u16),
    st: u8,
    tx: u64,
    uid: u32,
    inode: u64,
    pad: bool,
) {
    let start = o.len();
    // A connection whose client does not read runs the zero-window probe timer (4); data in
    // flight, the retransmit timer (1).
    let (tr, when) = match (st, tx) {
        (0x01, q) if q > 65_536 => (4, 0x1f4),
        (0x01, q) if q > 0 => (1, 0x14),
        _ => (0, 0),
    };
    o.rdec(sl as u64, 4);
    o.str(": ");
    write_ip(o, local);
    o.ascii(b':');
    o.zhex(u64::from(lport), 4);
    o.ascii(b' ');
    write_ip(o, remote);
    o.ascii(b':');
    o.zhex(u64::from(rport), 4);
    o.ascii(b' ');
    o.zhex(u64::from(st), 2);
    o.ascii(b' ');
    o.zhex(tx, 8);
    o.str(":00000000 ");
    o.zhex(tr, 2);
    o.ascii(b':');
    o.zhex(when, 8);
    o.str(" 00000000 ");
    o.rdec(u64::from(uid), 5);
    o.str("        0 ");
    o.dec(inode, 0);
    o.str(" 1 0000000000000000 ");
    o.str(if st == 0x0A {
        "100 0 0 10 0"
    } else {
        "20 4 30 10 -1"
    });
    if pad {
        o.pad(TCP_LINE.saturating_sub(o.len() - start));
    }
    o.ascii(b'\n');
}

/// The sessions connected now, with what they do.
fn connected<'w>(
    w: &'w World<'_>,
) -> impl Iterator<Item = (&'w super::instance::Session, &'w super::moment::SessionNow)> {
    w.pop
        .sessions
        .iter()
        .zip(&w.sessions)
        .filter(|(s, _)| w.present(s.idx))
}

/// The inode of the socket of the session on `s`'s slot: each connection its own.
fn inode(w: &World<'_>, s: &super::instance::Session) -> u64 {
    s.inode + 1_000_000 * w.tenants.get(s.idx).map_or(0, |t| t.epoch)
}

/// `/proc/net/tcp`: the listeners, the DBA's ssh connection, and one ESTABLISHED connection per
/// client session to the Informix port, its `tx_queue` being the session's Send-Q.
pub(crate) fn proc_net_tcp(w: &World<'_>) -> String {
    let mut o = String::with_capacity(150 * (w.pop.sessions.len() + 8));
    let header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";
    let mut r = text::Rows::new(&mut o);
    r.left(header, TCP_LINE);
    r.ascii(b'\n');
    let any = Ip::V4([0, 0, 0, 0]);
    let me = Ip::V4(SERVER_IP);
    let fixed = [
        ((any, LISTENER_PORT), (any, 0), 0x0A, INFORMIX_UID, 31_337),
        ((any, 22), (any, 0), 0x0A, 0, 20_114),
        ((Ip::V4([127, 0, 0, 1]), 25), (any, 0), 0x0A, 0, 21_907),
        (
            (me, 22),
            (Ip::V4(SSH_CLIENT.0), SSH_CLIENT.1),
            0x01,
            0,
            2_771_004,
        ),
    ];
    let mut sl = 0;
    for (local, remote, st, uid, inode) in fixed {
        tcp_row(&mut r, sl, local, remote, st, 0, uid, inode, true);
        sl += 1;
    }
    for (s, sn) in connected(w) {
        if let Link::Tcp { ip, port } = w.client(s.idx).1 {
            let (local, remote) = ((me, LISTENER_PORT), (Ip::V4(ip), port));
            tcp_row(
                &mut r,
                sl,
                local,
                remote,
                0x01,
                sn.send_q,
                INFORMIX_UID,
                inode(w, s),
                true,
            );
            sl += 1;
        }
    }
    drop(r);
    o
}

/// `/proc/net/tcp6`: the IPv6 listeners and the sessions that came in through them as
/// v4-mapped addresses.
pub(crate) fn proc_net_tcp6(w: &World<'_>) -> String {
    let mut o = String::new();
    o.push_str("  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n");
    let me = Ip::Mapped(SERVER_IP);
    let any = Ip::Any6;
    let mut r = text::Rows::new(&mut o);
    tcp_row(
        &mut r,
        0,
        (any, LISTENER_PORT),
        (any, 0),
        0x0A,
        0,
        INFORMIX_UID,
        31_338,
        false,
    );
    tcp_row(&mut r, 1, (any, 22), (any, 0), 0x0A, 0, 0, 20_116, false);
    let mut sl = 2;
    for (s, sn) in connected(w) {
        if let Link::Tcp6Mapped { ip, port } = w.client(s.idx).1 {
            let (local, remote) = ((me, LISTENER_PORT), (Ip::Mapped(ip), port));
            tcp_row(
                &mut r,
                sl,
                local,
                remote,
                0x01,
                sn.send_q,
                INFORMIX_UID,
                inode(w, s),
                false,
            );
            sl += 1;
        }
    }
    drop(r);
    o
}

fn dotted(ip: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", ip[0], ip[1], ip[2], ip[3])
}

fn netstat_row(
    r: &mut text::Rows<'_>,
    proto: &str,
    send_q: u64,
    local: &str,
    foreign: &str,
    state: &str,
) {
    r.left(proto, 6);
    r.str("     0 ");
    r.rdec(send_q, 6);
    r.ascii(b' ');
    r.left(local, 24);
    r.left(foreign, 24);
    r.left(state, 11);
    r.ascii(b'\n');
}

/// `netstat -an` (Linux net-tools), for hosts without `/proc/net/tcp`.
pub(crate) fn netstat_an(w: &World<'_>) -> String {
    let mut o = String::with_capacity(90 * (w.pop.sessions.len() + 16));
    o.push_str("Active Internet connections (servers and established)\n");
    o.push_str("Proto Recv-Q Send-Q Local Address           Foreign Address         State      \n");
    let mut r = text::Rows::new(&mut o);
    let me = dotted(SERVER_IP);
    netstat_row(
        &mut r,
        "tcp",
        0,
        &format!("0.0.0.0:{LISTENER_PORT}"),
        "0.0.0.0:*",
        "LISTEN",
    );
    netstat_row(&mut r, "tcp", 0, "0.0.0.0:22", "0.0.0.0:*", "LISTEN");
    netstat_row(&mut r, "tcp", 0, "127.0.0.1:25", "0.0.0.0:*", "LISTEN");
    netstat_row(
        &mut r,
        "tcp",
        0,
        &format!("{me}:22"),
        &format!("{}:{}", dotted(SSH_CLIENT.0), SSH_CLIENT.1),
        "ESTABLISHED",
    );
    for (s, sn) in connected(w) {
        if let Link::Tcp { ip, port } = w.client(s.idx).1 {
            netstat_row(
                &mut r,
                "tcp",
                sn.send_q,
                &format!("{me}:{LISTENER_PORT}"),
                &format!("{}:{port}", dotted(ip)),
                "ESTABLISHED",
            );
        }
    }
    netstat_row(
        &mut r,
        "tcp6",
        0,
        &format!(":::{LISTENER_PORT}"),
        ":::*",
        "LISTEN",
    );
    netstat_row(&mut r, "tcp6", 0, ":::22", ":::*", "LISTEN");
    for (s, sn) in connected(w) {
        if let Link::Tcp6Mapped { ip, port } = w.client(s.idx).1 {
            netstat_row(
                &mut r,
                "tcp6",
                sn.send_q,
                &format!("::ffff:{me}:{LISTENER_PORT}"),
                &format!("::ffff:{}:{port}", dotted(ip)),
                "ESTABLISHED",
            );
        }
    }
    netstat_row(&mut r, "udp", 0, "0.0.0.0:68", "0.0.0.0:*", "");
    netstat_row(&mut r, "udp", 0, "127.0.0.1:323", "0.0.0.0:*", "");
    drop(r);
    o.push_str("Active UNIX domain sockets (servers and established)\n");
    o.push_str("Proto RefCnt Flags       Type       State         I-Node   Path\n");
    o.push_str("unix  2      [ ACC ]     STREAM     LISTENING     17310    /run/systemd/private\n");
    o.push_str(
        "unix  2      [ ACC ]     STREAM     LISTENING     20977    /var/run/rpcbind.sock\n",
    );
    o.push_str("unix  3      [ ]         STREAM     CONNECTED     21455    \n");
    o
}

pub(crate) const NODES_ONLINE: &str = "0-1\n";

/// `cpulist` of a node: 16 cores each.
pub(crate) fn node_cpulist(n: u32) -> Option<String> {
    match n {
        0 => Some("0-15\n".into()),
        1 => Some("16-31\n".into()),
        _ => None,
    }
}

pub(crate) fn node_distance(n: u32) -> Option<String> {
    match n {
        0 => Some("10 21\n".into()),
        1 => Some("21 10\n".into()),
        _ => None,
    }
}

/// Node 0's free memory (kB): low all along (its page cache fills it and zone reclaim keeps it
/// local), very low while the checkpoint stalls, recovering after.
fn node0_free_kb(seed: u64, now: &Now) -> u64 {
    let jitter = below(seed, Salt::Mem, 0, now.t, 120_000);
    match now.incident() {
        Incident::CheckpointRequested => {
            let fall = 1_450_000u64.saturating_sub(now.into * 180_000);
            fall.max(70_000) + jitter / 4
        }
        Incident::CheckpointInProgress => 80_000 + now.into * 120_000 + jitter / 4,
        _ => 1_390_000 + jitter,
    }
}

/// `/sys/devices/system/node/nodeN/meminfo`.
pub(crate) fn node_meminfo(pop: &Population, now: &Now, n: u32) -> Option<String> {
    let seed = pop.seed;
    let (total, free, hp_total, file) = match n {
        0 => {
            let free = node0_free_kb(seed, now);
            (65_857_628u64, free, 1_100u64, 43_210_556u64)
        }
        1 => (
            66_058_564,
            21_480_112 + below(seed, Salt::Mem, 1, now.t, 300_000),
            948,
            18_802_340,
        ),
        _ => return None,
    };
    let used = total - free;
    let huge_kb = hp_total * 2_048;
    let anon = used.saturating_sub(file + huge_kb + 3_100_000);
    let rows: [(&str, u64); 26] = [
        ("MemTotal", total),
        ("MemFree", free),
        ("MemUsed", used),
        ("Active", file / 3 + anon / 2),
        ("Inactive", file - file / 3 + anon / 2),
        ("Active(anon)", anon / 2),
        ("Inactive(anon)", anon - anon / 2),
        ("Active(file)", file / 3),
        ("Inactive(file)", file - file / 3),
        ("Unevictable", 0),
        ("Mlocked", 0),
        (
            "Dirty",
            1_204 + below(seed, Salt::Mem, 2 + u64::from(n), now.t, 900),
        ),
        ("Writeback", 0),
        ("FilePages", file + 210_000),
        ("Mapped", 894_240),
        ("AnonPages", anon),
        ("Shmem", 47_860),
        ("KernelStack", 17_008),
        ("PageTables", 143_304),
        ("NFS_Unstable", 0),
        ("Bounce", 0),
        ("WritebackTmp", 0),
        ("Slab", 3_654_304),
        ("SReclaimable", 2_473_124),
        ("SUnreclaim", 1_181_180),
        ("AnonHugePages", 147_456),
    ];
    let mut o = String::new();
    for (k, v) in rows {
        let key = format!("{k}:");
        let _ = writeln!(o, "Node {n} {key:<16}{v:>8} kB");
    }
    for (k, v) in [
        ("HugePages_Total", hp_total),
        ("HugePages_Free", 0),
        ("HugePages_Surp", 0),
    ] {
        let key = format!("{k}:");
        let _ = writeln!(o, "Node {n} {key:<17}{v:>5}");
    }
    Some(o)
}

/// The seed's misconfiguration, on for the whole demo.
pub(crate) const ZONE_RECLAIM_MODE: &str = "1\n";

/// `/proc/vmstat`: counters are functions of t (monotonic); the reclaim counters climb fast
/// while the checkpoint stalls.
pub(crate) fn vmstat(pop: &Population, now: &Now) -> String {
    let t = now.t;
    let stall = timeline::seconds_in(Incident::CheckpointRequested, t);
    let inp = timeline::seconds_in(Incident::CheckpointInProgress, t);
    let free_pages = (node0_free_kb(pop.seed, now) + 21_600_000) / 4;
    // (key, value at 0, per second, extra per second of stall, extra per second of CKPT INP)
    let counters: [(&str, u64, u64, u64, u64); 40] = [
        ("nr_free_pages", free_pages, 0, 0, 0),
        ("nr_zone_inactive_anon", 1_204_330, 0, 0, 0),
        ("nr_zone_active_anon", 1_180_002, 0, 0, 0),
        ("nr_zone_inactive_file", 15_503_224, 0, 0, 0),
        ("nr_zone_active_file", 5_001_118, 0, 0, 0),
        ("nr_dirty", 611, 0, 0, 0),
        ("nr_writeback", 0, 0, 0, 0),
        ("nr_shmem", 23_930, 0, 0, 0),
        ("nr_anon_transparent_hugepages", 72, 0, 0, 0),
        ("numa_hit", 91_200_330_112, 52_000, 0, 0),
        ("numa_miss", 310_228_004, 40, 0, 0),
        ("numa_foreign", 310_228_004, 40, 0, 0),
        ("numa_interleave", 112_904, 0, 0, 0),
        ("numa_local", 91_190_110_420, 51_900, 0, 0),
        ("numa_other", 320_448_000, 140, 0, 0),
        ("pgpgin", 8_812_330_440, 9_500, 0, 0),
        ("pgpgout", 20_145_990_112, 21_000, 0, 78_000),
        ("pswpin", 0, 0, 0, 0),
        ("pswpout", 0, 0, 0, 0),
        ("pgalloc_dma", 0, 0, 0, 0),
        ("pgalloc_dma32", 12_120_441, 3, 0, 0),
        ("pgalloc_normal", 99_312_004_581, 54_000, 0, 0),
        ("pgfree", 99_850_114_907, 54_100, 1_200, 0),
        ("pgactivate", 4_120_558_310, 2_100, 0, 0),
        ("pgdeactivate", 2_210_773_019, 1_900, 0, 0),
        ("pgfault", 310_552_902_114, 9_000, 0, 0),
        ("pgmajfault", 2_210_447, 1, 3, 0),
        ("pgrefill", 3_302_118_009, 1_700, 2_000, 0),
        ("pgsteal_kswapd", 6_221_880_330, 1_150, 0, 0),
        ("pgsteal_direct", 35_100_228, 2, 4_500, 600),
        ("pgscan_kswapd", 6_950_004_118, 1_300, 30_000, 0),
        ("pgscan_direct", 210_330_114, 3, 250_000, 20_000),
        ("pgscan_direct_throttle", 0, 0, 0, 0),
        ("zone_reclaim_failed", 18_204_330, 1, 150, 10),
        ("pginodesteal", 401_223, 0, 0, 0),
        ("slabs_scanned", 1_330_228_110, 400, 9_000, 0),
        ("kswapd_inodesteal", 2_100_441, 0, 0, 0),
        ("pageoutrun", 15_120_330, 3, 20, 0),
        ("allocstall_normal", 520_117, 0, 310, 20),
        ("compact_stall", 40_221, 0, 12, 0),
    ];
    let mut o = String::with_capacity(40 * counters.len());
    for (k, base, rate, stall_rate, inp_rate) in counters {
        let v = base + rate * t + stall_rate * stall + inp_rate * inp;
        let _ = writeln!(o, "{k} {v}");
    }
    o
}

/// The host's processes: (pid, comm). The oninit processes are the instance's.
pub(crate) const PROCESSES: [(u32, &str); 30] = [
    (1, "systemd"),
    (2, "kthreadd"),
    (3, "rcu_gp"),
    (9, "ksoftirqd/0"),
    (11, "migration/0"),
    (412, "systemd-journal"),
    (610, "sshd"),
    (702, "rpcbind"),
    (988, "crond"),
    (1022, "rsyslogd"),
    (1301, "chronyd"),
    (2210, "sshd"),
    (2215, "bash"),
    (20210, "oninit"),
    (20211, "oninit"),
    (20212, "oninit"),
    (20213, "oninit"),
    (20214, "oninit"),
    (20215, "oninit"),
    (20216, "oninit"),
    (20217, "oninit"),
    (20218, "oninit"),
    (20219, "oninit"),
    (20220, "oninit"),
    (20221, "oninit"),
    (20222, "oninit"),
    (20223, "oninit"),
    (20224, "oninit"),
    (20225, "oninit"),
    (31001, "ifxtop"),
];

/// `ls /proc`: the pids and the kernel's other entries.
pub(crate) fn proc_list() -> String {
    let mut o = String::new();
    for (pid, _) in PROCESSES {
        let _ = writeln!(o, "{pid}");
    }
    for name in [
        "acpi",
        "buddyinfo",
        "cpuinfo",
        "meminfo",
        "net",
        "self",
        "sys",
        "vmstat",
        "zoneinfo",
    ] {
        let _ = writeln!(o, "{name}");
    }
    o
}

pub(crate) fn comm(pid: u32) -> Option<String> {
    PROCESSES
        .iter()
        .find(|(p, _)| *p == pid)
        .map(|(_, c)| format!("{c}\n"))
}

/// `/proc/<pid>/numa_maps`. The oninit processes attach the same shared segments (the
/// resident segment in huge pages, mostly on node 0 where the instance started) and have
/// their own heaps and stacks.
pub(crate) fn numa_maps(pop: &Population, pid: u32, t: u64) -> Option<String> {
    let (_, name) = PROCESSES.iter().find(|(p, _)| *p == pid)?;
    let seed = pop.seed;
    let p = u64::from(pid);
    let mut o = String::new();
    if *name == "oninit" {
        let _ = writeln!(o, "00400000 default file=/opt/informix/bin/oninit mapped=2890 mapmax=18 N0=2890 kernelpagesize_kB=4");
        let _ = writeln!(o, "01c5b000 default file=/opt/informix/bin/oninit anon=310 dirty=310 mapped=400 mapmax=18 N0=400 kernelpagesize_kB=4");
        let heap = 800 + below(seed, Salt::Mem, p, 0, 900);
        let _ = writeln!(
            o,
            "02a3e000 default heap anon={heap} dirty={heap} N0={} N1={} kernelpagesize_kB=4",
            heap - heap / 8,
            heap / 8
        );
        // The shared-memory segments of `onstat -g seg`, most of them on node 0 (where the
        // server started and allocated them).
        let base = super::vitals::segments_base(pop);
        for s in super::segments::at(seed, base, pop.sessions.len(), t) {
            let (page_kb, pages) = if s.huge {
                (2_048, s.size / (2 << 20))
            } else {
                (4, s.blkused)
            };
            let n1 = pages * 2 / 11;
            let _ = writeln!(
                o,
                "{:x} default file=/SYSV{:08x}\\040(deleted){} dirty={pages} mapmax=18 N0={} N1={n1} kernelpagesize_kB={page_kb}",
                s.addr,
                s.key,
                if s.huge { " huge" } else { "" },
                pages - n1
            );
        }
        let _ = writeln!(o, "7f25e7d03000 default file=/usr/lib64/libc-2.17.so mapped=83 mapmax=60 N0=83 kernelpagesize_kB=4");
        let _ = writeln!(
            o,
            "7f25e80bf000 default anon=3 dirty=3 N0=3 kernelpagesize_kB=4"
        );
        let stack = 9 + below(seed, Salt::Mem, p, 1, 20);
        let _ = writeln!(
            o,
            "7ffd1c4a1000 default stack anon={stack} dirty={stack} N{}={stack} kernelpagesize_kB=4",
            p % 2
        );
    } else {
        let _ = writeln!(
            o,
            "00400000 default file=/usr/bin/{name} mapped=7 N0=7 kernelpagesize_kB=4"
        );
        let _ = writeln!(
            o,
            "0145f000 default heap anon=3 dirty=3 N0=3 kernelpagesize_kB=4"
        );
        let _ = writeln!(o, "7f25e7d03000 default file=/usr/lib64/libc-2.17.so mapped=83 mapmax=60 N0=83 kernelpagesize_kB=4");
        let _ = writeln!(
            o,
            "7ffd1c4a1000 default stack anon=2 dirty=2 N0=2 kernelpagesize_kB=4"
        );
    }
    Some(o)
}
