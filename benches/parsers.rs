//! Parser throughput (DESIGN.md §6: at least 200 MB/s on `onstat -u` / `onstat -X` text, 20,000
//! threads in under 10 ms). The inputs are generated here, deterministically, in the layout of
//! a 64-bit Linux 12.10 instance: 10-digit addresses in 16-wide columns, mixed flags and waits.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ifxtop::parsers::{
    onstat_banner, onstat_d_upper, onstat_g_bth, onstat_g_cluster, onstat_g_dri, onstat_g_glo,
    onstat_g_iof, onstat_g_lmx, onstat_g_pqs, onstat_g_rea, onstat_g_rss, onstat_g_sds,
    onstat_g_seg, onstat_g_tpf, onstat_g_wmx, onstat_l, onstat_p, onstat_s, onstat_x_txn,
    proc_diskstats,
};
use ifxtop::parsers::{onstat_u, onstat_x};
use std::fmt::Write;
use std::hint::black_box;

/// A small deterministic generator (xorshift64*), so every run parses the same text.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const BANNER: &str =
    "IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 12 days 03:14:15 -- 8913920 Kbytes\n\n";

/// `onstat -u` with `n` threads: daemons first, then sessions, most idle on `Y`, some waiting on
/// locks, buffers, mutexes; PDQ helpers; a few ttys.
fn onstat_u_text(n: usize) -> String {
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    let mut s = String::with_capacity(n * 100 + 400);
    s.push_str(BANNER);
    s.push_str("Userthreads\n");
    s.push_str("address          flags   sessid   user     tty      wait             tout locks nreads   nwrites\n");
    let users = [
        "informix", "appsrv", "batch", "thompson", "webapp", "report",
    ];
    let mut addr: u64 = 0x26_e8a0_1028;
    for i in 0..n {
        let (flags, sessid, user) = if i < 40 {
            (
                ["---P--D", "---P--F", "---P--B"][i % 3],
                i as u64 % 8,
                "informix",
            )
        } else {
            let flags = match r.below(100) {
                0..=64 => "Y--P---",
                65..=74 => "---P---",
                75..=79 => "L--P---",
                80..=84 => "B--P---",
                85..=87 => "S--P---",
                88..=91 => "-------",
                92..=95 => "Y--P-R-",
                _ => "---PR--",
            };
            (
                flags,
                1000 + i as u64 / 2,
                users[r.below(users.len() as u64) as usize],
            )
        };
        let wait = if flags.starts_with(['Y', 'L', 'B', 'S']) {
            format!("{:x}", 0x26_e600_0000u64 + r.below(0x100_0000) * 8)
        } else {
            "0".to_string()
        };
        let tty = if r.below(20) == 0 { "pts/3" } else { "-" };
        let _ = writeln!(
            s,
            "{:<16} {} {:<8} {:<8} {:<8} {:<16} {:<4} {:<5} {:<8} {}",
            format!("{addr:x}"),
            flags,
            sessid,
            user,
            tty,
            wait,
            0,
            r.below(12),
            r.below(2_000_000),
            r.below(90_000),
        );
        addr += 0x848;
    }
    let _ = writeln!(s, " {n} active, {} total, {n} maximum concurrent", n * 2);
    s
}

/// `onstat -X` with `n` buffers over 4 pools: mostly no waiter, some with one, a few with several
/// (on the row and on continuation lines).
fn onstat_x_text(n: usize) -> String {
    let mut r = Rng(0xD1B5_4A32_D192_ED03);
    let mut s = String::with_capacity(n * 120 + 1000);
    s.push_str(BANNER);
    s.push_str("Buffers (Access)\n");
    s.push_str("address          owner            flags pagenum          memaddr          nslots pgflgs scount   waiter\n");
    let pools = [2048u32, 4096, 8192, 16384];
    let pad = " ".repeat(97);
    let mut addr: u64 = 0x2_443c_d7e8;
    for (k, ps) in pools.iter().enumerate() {
        let _ = writeln!(s, "\nBuffer pool page size: {ps}");
        let rows = n / pools.len() + usize::from(k < n % pools.len());
        for _ in 0..rows {
            let owner = match r.below(10) {
                0..=6 => "ffffffffffffffff".to_string(),
                7 => "0".to_string(),
                _ => format!("{:x}", 0x58_cc3c_7eb8u64 + r.below(5000) * 0x848),
            };
            let page = format!("{}:{}", 1 + r.below(300), r.below(40_000_000));
            let waiters = r.below(100);
            let first = if waiters < 90 {
                "0".to_string()
            } else {
                format!("{:x}", 0x59_5236_d428u64 + r.below(5000) * 0x848)
            };
            let _ = writeln!(
                s,
                "{:<16} {:<16} {:<5} {:<16} {:<16} {:<6} {:<6} {:<8} {}",
                format!("{addr:x}"),
                owner,
                "80",
                page,
                format!("{:x}", 0x4b_aadf_4000u64 + addr),
                r.below(800),
                ["890", "2801", "801"][r.below(3) as usize],
                r.below(3),
                first,
            );
            if waiters >= 97 {
                let _ = writeln!(
                    s,
                    "{pad}{:x} {:x}",
                    0x62_4d39_d668u64 + r.below(99),
                    0x62_4d39_e000u64
                );
            }
            addr += 0xa0;
        }
        let _ = writeln!(
            s,
            " {} modified, {} total, {} hash buckets, {ps} buffer size",
            r.below(90_000),
            8_388_608,
            16_777_216
        );
    }
    s
}

fn parsers(c: &mut Criterion) {
    // `cargo test --all-targets` runs this once without `--bench`: keep that cheap.
    let full = std::env::args().any(|a| a == "--bench");
    let thread_counts: &[usize] = if full { &[10_000, 20_000] } else { &[200] };
    let buffer_count = if full { 100_000 } else { 1_000 };

    let mut g = c.benchmark_group("onstat_u");
    for &n in thread_counts {
        let text = onstat_u_text(n);
        // The generated text must be what the parser understands, or the bench measures errors.
        let parsed = onstat_u::parse(&text).map(|u| (u.threads.len(), u.unparsed.len()));
        assert_eq!(
            parsed,
            Ok((n, 0)),
            "generated onstat -u text does not parse"
        );
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::new("parse", n), &text, |b, t| {
            b.iter(|| onstat_u::parse(black_box(t)))
        });
    }
    g.finish();

    let mut g = c.benchmark_group("onstat_x");
    let text = onstat_x_text(buffer_count);
    let parsed = onstat_x::parse(&text).map(|x| {
        let rows: usize = x.pools.iter().map(|p| p.buffers.len()).sum();
        (rows, x.unparsed.len())
    });
    assert_eq!(
        parsed,
        Ok((buffer_count, 0)),
        "generated onstat -X text does not parse"
    );
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_with_input(BenchmarkId::new("parse", buffer_count), &text, |b, t| {
        b.iter(|| onstat_x::parse(black_box(t)))
    });
    g.finish();
}

// ---------------------------------------------------------------------------------------------
// Chunk I/O, devices and replication (HA): one group per kind, each on generated text of a large
// instance (or a fixture repeated), checked to parse whole before it is timed.

/// `onstat -D` with `n` chunks over `n / 4` spaces.
fn onstat_d_upper_text(n: usize) -> String {
    let mut r = Rng(0x51_7CC1_B727_220A);
    let spaces = (n / 4).max(1);
    let mut s = String::with_capacity(n * 110 + spaces * 110);
    s.push_str(BANNER);
    s.push_str("Dbspaces\naddress          number   flags      fchunk   nchunks  pgsize   flags    owner    name\n");
    for d in 1..=spaces {
        let _ = writeln!(
            s,
            "{:<16x} {:<8} 0x60001    {:<8} {:<8} {:<8} N  BA    informix datadbs{d}",
            0xc000_0000_18a4_c028u64 + d as u64 * 0x230,
            d,
            (d - 1) * 4 + 1,
            4,
            [2048, 4096, 16384][d % 3],
        );
    }
    let _ = writeln!(s, " {spaces} active, 2047 maximum\n\nChunks");
    s.push_str("address          chunk/dbs     offset     page Rd    page Wr    pathname\n");
    for c in 1..=n {
        let _ = writeln!(
            s,
            "{:<16x} {:<6} {:<6} {:<10} {:<10} {:<10} /informix/chunks/data{c}",
            0xc000_0000_18b2_e028u64 + c as u64 * 0x1000,
            c,
            (c - 1) / 4 + 1,
            0,
            r.below(400_000_000),
            r.below(40_000_000),
        );
    }
    let _ = writeln!(
        s,
        " {n} active, 32766 maximum\n\nExpanded chunk capacity mode: always"
    );
    s
}

/// `onstat -g iof` with `n` files, each with its five-row operation table.
fn onstat_g_iof_text(n: usize) -> String {
    let mut r = Rng(0x2F69_3A1C_0D5B_7E41);
    let mut s = String::with_capacity(n * 420);
    s.push_str(BANNER);
    s.push_str("AIO global files:\ngfd pathname                    bytes read   page reads   bytes write   page writes  io/s\n");
    for f in 0..n {
        let (pr, pw) = (r.below(200_000_000), r.below(20_000_000));
        let _ = writeln!(
            s,
            "{:<3} /informix/chunks/data{:<6} {:<12} {:<12} {:<13} {:<12} {}.{}\n\n      op type     count         avg. time",
            f + 3,
            f,
            pr * 16384,
            pr,
            pw * 16384,
            pw,
            r.below(4000),
            r.below(10),
        );
        for op in ["seeks", "reads", "writes", "kaio_reads", "kaio_writes"] {
            if op.starts_with("kaio") {
                let _ = writeln!(
                    s,
                    "      {op:<11} {:<13} 0.{:04}",
                    r.below(9_000_000),
                    r.below(10_000)
                );
            } else {
                let _ = writeln!(s, "      {op:<11} 0             N/A");
            }
        }
        s.push('\n');
    }
    s
}

/// `onstat -g rss verbose` with `n` server blocks.
fn onstat_g_rss_text(n: usize) -> String {
    let mut r = Rng(0x6A09_E667_F3BC_C909);
    let mut s = String::with_capacity(n * 720 + 300);
    s.push_str(BANNER);
    let _ = writeln!(s, "Local server type: Primary\nIndex page logging status: Enabled\nIndex page logging was enabled at: 2024/02/02 09:14:50\nNumber of RSS servers: {n}\n\nRSS Server information:\n");
    for k in 0..n {
        let page = r.below(60_000);
        let _ = writeln!(
            s,
            "RSS Server control block: 0x{:x}\nRSS server name: ol_rss_{k}\nRSS server status: Active\n\
             RSS connection status: Connected\nRSS flow control:384/352\nLog transmission status: {}\n\
             Next log page to send(log id,page): 1871,{}\nLast log page acked(log id,page): 1871,{page}\n\
             Last log page applied(log id,page): 1871,{page}\nTime of Last Acknowledgement: 2024-02-05.19:55:47\n\
             Pending Log Pages to be ACKed: {}\nApproximate Log Page Backlog:{}\n\
             Sequence number of next buffer to send: {}\nSequence number of last buffer acked: {}\n\
             Supports Proxy Writes: N\nTotal number of delay(s): {}\nTime of last delay: 2024-02-05.19:55:40\n",
            0x4b8e_1028u64 + k as u64 * 0x2b28,
            if r.below(10) == 0 { "Blocked" } else { "Active" },
            page + 40,
            r.below(500),
            r.below(100_000),
            r.below(90_000),
            r.below(90_000),
            r.below(300),
        );
    }
    s
}

/// `onstat -g sds verbose` on a primary with `n` server blocks.
fn onstat_g_sds_text(n: usize) -> String {
    let mut r = Rng(0xBB67_AE85_84CA_A73B);
    let mut s = String::with_capacity(n * 560 + 200);
    s.push_str(BANNER);
    let _ = writeln!(
        s,
        "Number of SDS servers:{n}\nUpdater node alias name :ol_sd_pri\n"
    );
    for k in 0..n {
        let page = r.below(60_000);
        let _ = writeln!(
            s,
            "SDS server control block: 0x{:x}\nserver name: ol_sd_{k}\nserver type: SDS\nserver status: Active\n\
             connection status: Connected\nLast log page sent(log id,page):402,{page}\n\
             Last log page flushed(log id,page):402,{page}\nLast LSN acked (log id,pos):402,{}\n\
             Sequence number of next buffer to send: {}\nSequence number of last buffer acked: {}\n\
             Time of lastack:2024/12/11 22:20:04\nSupports Proxy Writes: N\nApproximate Log Page Backlog:{}\n",
            0x4621_7640u64 + k as u64 * 0x2850,
            page * 4096,
            r.below(90_000),
            r.below(90_000),
            r.below(5000),
        );
    }
    s
}

/// `onstat -g cluster verbose` with `n` secondaries: the table, then a block per server.
fn onstat_g_cluster_text(n: usize) -> String {
    let mut r = Rng(0x3C6E_F372_FE94_F82B);
    let mut s = String::with_capacity(n * 520 + 300);
    s.push_str(BANNER);
    s.push_str(
        "Primary Server:ol_prim\nCurrent Log Page:1829,4349\nIndex page logging status: Enabled\n\
                Index page logging was enabled at: 2013/06/04 11:54:04\n\n\
                Server      ACKed Log    Applied Log  Supports     Status\n\
                \x20           (log, page)  (log, page)  Updates\n",
    );
    let types = [
        "SYNC(SDS),Connected,Active",
        "ASYNC(HDR),Connected,On",
        "ASYNC(RSS),Connected,Active",
    ];
    let mut pages = Vec::with_capacity(n);
    for k in 0..n {
        let p = 4349 - r.below(400);
        pages.push(p);
        let _ = writeln!(
            s,
            "ol_sec_{k:<4} 1829,{p:<7} 1829,{p:<7} Yes          {}",
            types[k % 3]
        );
    }
    for (k, p) in pages.iter().enumerate() {
        let ty = ["SYNC (SDS)", "ASYNC (HDR)", "ASYNC (RSS)"][k % 3];
        let _ = writeln!(
            s,
            "\nserver name: ol_sec_{k}\ntype: {ty}\ncontrol block: 0x{:x}\nserver status: Active\n\
             connection status: Connected\nLast log page sent (log id, page): 1829,4349\n\
             Last log page acked (log id, page); 1829,{p}\nApproximate log page backlog: {}\n\
             SDS cycle not used\nDelayed Apply Not Used\nStop Apply Not Used\n\
             Time of last ack: 2013/06/04 14:22:37\nSupports Updates: Yes",
            0x68ce_c1c0u64 + k as u64 * 0x3000,
            4349 - p,
        );
    }
    s
}

/// `/proc/diskstats` with `n` devices in the 20-field layout.
fn proc_diskstats_text(n: usize) -> String {
    let mut r = Rng(0xA54F_F53A_5F1D_36F1);
    let mut s = String::with_capacity(n * 140);
    for k in 0..n {
        let _ = write!(s, "{:4} {:7} sd{}", 8 + k / 16 * 57, k % 16 * 16, k);
        for _ in 0..17 {
            let _ = write!(s, " {}", r.below(1 << 40));
        }
        s.push('\n');
    }
    s
}

fn disk_parsers(c: &mut Criterion) {
    // `cargo test --all-targets` runs this once without `--bench`: keep that cheap.
    let full = std::env::args().any(|a| a == "--bench");
    let n = if full { 4_000 } else { 40 };

    fn group<T>(
        c: &mut Criterion,
        name: &str,
        text: &str,
        parse: fn(&str) -> Result<T, ifxtop::error::ParseError>,
        rows: fn(&T) -> (usize, usize),
        want: usize,
    ) {
        // The text must be what the parser understands, or the bench measures errors.
        let parsed = parse(text).map(|v| rows(&v));
        assert_eq!(
            parsed,
            Ok((want, 0)),
            "generated {name} text does not parse"
        );
        let mut g = c.benchmark_group(name);
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::new("parse", want), text, |b, t| {
            b.iter(|| parse(black_box(t)))
        });
        g.finish();
    }

    let t = onstat_d_upper_text(n);
    group(
        c,
        "onstat_D",
        &t,
        onstat_d_upper::parse,
        |v| (v.chunks.len(), v.unparsed.len()),
        n,
    );
    let t = onstat_g_iof_text(n);
    group(
        c,
        "onstat_g_iof",
        &t,
        onstat_g_iof::parse,
        |v| (v.files.len(), v.unparsed.len()),
        n,
    );
    let t = onstat_g_rss_text(n / 4);
    group(
        c,
        "onstat_g_rss",
        &t,
        onstat_g_rss::parse,
        |v| (v.servers.len(), v.unparsed.len()),
        n / 4,
    );
    let t = onstat_g_sds_text(n / 4);
    group(
        c,
        "onstat_g_sds",
        &t,
        onstat_g_sds::parse,
        |v| (v.servers.len(), v.unparsed.len()),
        n / 4,
    );
    let t = onstat_g_cluster_text(n / 4);
    group(
        c,
        "onstat_g_cluster",
        &t,
        onstat_g_cluster::parse,
        |v| (v.servers.len(), v.unparsed.len()),
        n / 4,
    );
    // One output is one pair: the doc sample repeated, each copy read over the last.
    let copies = n / 4;
    let t =
        include_str!("../tests/fixtures/onstat-g-dri/hcl-14.10-adr-0527-doc.txt").repeat(copies);
    group(
        c,
        "onstat_g_dri",
        &t,
        onstat_g_dri::parse,
        |v| (usize::from(v.dr_type.is_some()), v.unparsed.len()),
        1,
    );
    let t = proc_diskstats_text(n);
    group(
        c,
        "proc_diskstats",
        &t,
        proc_diskstats::parse,
        |v| (v.disks.len(), v.unparsed.len()),
        n,
    );
}

// ---------------------------------------------------------------------------------------------
// Vital signs: one throughput figure per parser, on generated text of `n` rows in the
// layout of the real samples (or, for the banner and the profile, `n` repeats).

/// `head` then `n` rows made by `row`.
fn rows_text(head: &str, n: usize, row: impl Fn(&mut Rng, usize) -> String) -> String {
    let mut r = Rng(0x5DEE_CE66_D1CE_4E5B);
    let mut s = String::with_capacity(head.len() + n * 90);
    s.push_str(head);
    for i in 0..n {
        s.push_str(&row(&mut r, i));
        s.push('\n');
    }
    s
}

/// A vital-sign parser's bench input: its name, the text, and how many rows it must read back
/// from that text with nothing unparsed (checked once, so the bench measures parsing and not
/// errors).
type VitalInput = (&'static str, String, fn(&str) -> Option<usize>);

/// Each vital-sign parser's input of about `n` rows.
fn vital_inputs(n: usize) -> Vec<VitalInput> {
    let banner = "IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 12 days 03:14:15 -- 8913920 Kbytes\n\n\n";
    let profile = "Profile\n\
        dskreads  pagreads   bufreads   %cached dskwrits   pagwrits   bufwrits   %cached\n\
        16934     47321      2036003611299.99   103113     158697     950932     89.16\n\n\
        isamtot   open     start    read     write   rewrite  delete  commit  rollbk\n\
        139214865 9195777  12257208 94191268 362691  55696    38134   128294  24\n\n\
        ovlock    ovuserthread   ovbuff   usercpu  syscpu   numckpts   flushes\n\
        0         0              0        1551.59  144.82   1822       1822\n\n";
    vec![
        (
            "onstat_banner",
            banner.repeat(n),
            |t| onstat_banner::parse(t).ok().filter(|b| b.unparsed.is_empty()).map(|b| b.repeats.len() + 1),
        ),
        (
            "onstat_p",
            profile.repeat(n / 3 + 1),
            |t| onstat_p::parse(t).ok().filter(|p| p.unparsed.is_empty()).map(|p| p.counters.len()),
        ),
        (
            "onstat_l",
            rows_text(
                "Logical Logging\nBuffer bufused  bufsize  numrecs  numpages numwrits recs/pages pages/io\n  L-1  3        256      98415533 4917344  1288211  20.0       3.8\n\naddress          number   flags    uniqid   begin                size     used    %used\n",
                n,
                |r, i| {
                    let used = r.below(250_001);
                    format!(
                        "{:<16x} {:<8} {:<8} {:<8} {:<20} {:<8} {:>6} {:>7.2}",
                        0x4b2c_6f28u64 + i as u64 * 0x48,
                        i + 1,
                        ["U-B----", "U------", "U---C-L", "A------", "U-B-----"][i % 5],
                        3000 + i,
                        format!("3:{}", 53 + i * 250_000),
                        250_000,
                        used,
                        used as f64 / 2500.0
                    )
                },
            ),
            |t| onstat_l::parse(t).ok().filter(|l| l.unparsed.is_empty()).map(|l| l.logs.len()),
        ),
        (
            "onstat_g_glo",
            rows_text(
                "Individual virtual processors:\n vp    pid       class       usercpu   syscpu    total     Thread    Eff\n",
                n,
                |r, i| {
                    let (u, s) = (r.below(90_000_000) as f64 / 100.0, r.below(9_000_000) as f64 / 100.0);
                    format!(
                        " {:<5} {:<9} {:<11} {:<9.2} {:<9.2} {:<9.2} {:<9.2} {:>3}%",
                        i + 1,
                        4000 + i,
                        ["cpu", "aio", "lio", "soc"][i % 4],
                        u,
                        s,
                        u + s,
                        (u + s) * 1.4,
                        r.below(100)
                    )
                },
            ),
            |t| onstat_g_glo::parse(t).ok().filter(|g| g.unparsed.is_empty()).map(|g| g.vps.len()),
        ),
        (
            "onstat_g_lmx",
            rows_text("Locked mutexes:\nmid      addr             name               holder   lkcnt  waiter   waittime\n", n, mutex_row),
            |t| onstat_g_lmx::parse(t).ok().filter(|m| m.unparsed.is_empty()).map(|m| m.mutexes.len()),
        ),
        (
            "onstat_g_wmx",
            rows_text("Mutexes with waiters:\nmid      addr             name               holder   lkcnt  waiter   waittime\n", n, mutex_row),
            |t| onstat_g_wmx::parse(t).ok().filter(|m| m.unparsed.is_empty()).map(|m| m.mutexes.len()),
        ),
        (
            "onstat_s",
            rows_text(
                "Latches with lock or userthread set\nname     address           lock wait userthread\n",
                n,
                |r, i| format!("{:<8} {:<17x} {:<4} {:<4x} {:x}", format!("bf[{i}]"), 0x4410_d5a8u64 + i as u64 * 0x40, r.below(2), r.below(2) * 0x4a00_0000, 0x45a6_16b8u64 + r.below(4000) * 0x848),
            ),
            |t| onstat_s::parse(t).ok().filter(|s| s.unparsed.is_empty()).map(|s| s.latches.len()),
        ),
        (
            "onstat_g_seg",
            rows_text(
                "Segment Summary:\nid         key        addr             size             ovhd     class blkused  blkfree\n",
                n,
                |r, i| format!("{:<10} {:<10x} {:<16x} {:<16} {:<8} {:<5} {:<8} {}", 32769 + i, 0x5256_4801u64 + i as u64, 0x4400_0000u64 + i as u64 * 0x800_0000, 134_217_728, r.below(9_000_000), ["R", "V*", "B", "VX", "M"][i % 5], r.below(32768), r.below(32768)),
            ),
            |t| onstat_g_seg::parse(t).ok().filter(|s| s.unparsed.is_empty()).map(|s| s.segments.len()),
        ),
        (
            "onstat_g_bth",
            rows_text(
                "This command attempts to identify any blocking threads.\n\nThreads waiting on resources\n tid      name                 blocking resource              blocker\n",
                n,
                |r, i| format!(" {:<8} {:<20} {:<30} {}", 100 + i, "sqlexec", format!("Lock (0x{:x})", 0x4411_e578u64 + r.below(64) * 0x38), if i % 7 == 0 { "-".to_string() } else { (99 + i).to_string() }),
            ),
            |t| onstat_g_bth::parse(t).ok().filter(|b| b.unparsed.is_empty()).map(|b| b.waiting.len()),
        ),
        (
            "onstat_g_tpf",
            rows_text(
                "Thread profiles\ntid lkreqs lkw dl to lgrs isrd iswr isrw isdl isct isrb lx bfr bfw lsus lsmx seq\n",
                n,
                |r, i| {
                    let mut row = format!("{:<4}", 20 + i);
                    for _ in 0..17 {
                        let _ = write!(row, " {:<5}", r.below(1_000_000));
                    }
                    row
                },
            ),
            |t| onstat_g_tpf::parse(t).ok().filter(|p| p.unparsed.is_empty()).map(|p| p.profiles.len()),
        ),
        (
            "onstat_x_txn",
            rows_text(
                "Transactions\naddress          flags userthread       locks  begin          current        isol    est.     retrys coord\n                                               logpos         logpos                 rb_time\n",
                n,
                |r, i| {
                    let logged = r.below(4) == 0;
                    let pos = |r: &mut Rng| if logged { format!("{}:0x{:x}", 9900 + r.below(20), r.below(0x40_0000)) } else { "-".to_string() };
                    let (b, c) = (pos(r), pos(r));
                    format!("{:<16x} {} {:<16x} {:<6} {:<14} {:<14} {:<7} {:<8} 0", 0x4c3e_10a8u64 + i as u64 * 0x370, if logged { "A-B--" } else { "A----" }, 0x4b5a_0028u64 + i as u64 * 0x848, r.below(500), b, c, ["COMMIT", "DIRTY", "NOTRANS", "CURSOR"][i % 4], if logged { "0:01" } else { "-" })
                },
            ),
            |t| onstat_x_txn::parse(t).ok().filter(|x| x.unparsed.is_empty()).map(|x| x.transactions.len()),
        ),
        (
            "onstat_g_rea",
            rows_text(
                "Ready threads:\n tid      tcb              rstcb            prty status                vp-class       name\n",
                n,
                |r, i| format!(" {:<8} {:<16x} {:<16x} {:<4} {:<23} {:>4}        {}", 100 + i, 0x4f2a_10c8u64 + i as u64 * 0x1a0, 0x4b5a_4d78u64 + r.below(5000) * 0x848, 1 + r.below(4), "ready", format!("{}cpu", 1 + i % 16), "sqlexec"),
            ),
            |t| onstat_g_rea::parse(t).ok().filter(|x| x.unparsed.is_empty()).map(|x| x.threads.len()),
        ),
        (
            // `onstat -g pqs` of a busy server (every session's operators): scans under joins.
            "onstat_g_pqs",
            rows_text(
                "Query Operators:\naddr     ses-id   opname    phase   rows   time           in1         in2    stmt-type\n",
                n,
                |r, i| {
                    let addr = 0x7f3a_2c00_18a0_e2b0u64 + i as u64 * 0x1c0;
                    let join = i % 3 == 0;
                    let input = |k: u64| if join { format!("{:x}", addr + k * 0x1c0) } else { "0".to_string() };
                    format!("{:<8x} {:<8} {:<9} {:<7} {:<6} {:02}:{:02}.{:02} {:>10} {:>11}    SELECT", addr, 100 + i / 3, if join { "hjoin" } else { "scan" }, "next", r.below(10_000_000), r.below(60), r.below(60), r.below(100), input(1), input(2))
                },
            ),
            |t| onstat_g_pqs::parse(t).ok().filter(|x| x.unparsed.is_empty()).map(|x| x.operators.len()),
        ),
    ]
}

/// A mutex row, and every third a continuation line holding a second waiter.
fn mutex_row(r: &mut Rng, i: usize) -> String {
    let mut row = format!(
        "{:<8} {:<16x} {:<18} {:<8} {:<6} {:<8} {}",
        100_000 + i,
        0x0700_0001_e684_b928_u64 + i as u64 * 0x40,
        format!("lockhash[{}]", r.below(1024)),
        1 + r.below(20_000),
        0,
        1 + r.below(20_000),
        r.below(30_000)
    );
    if i % 3 == 0 {
        let _ = write!(
            row,
            "\n{:61}{:<8} {}",
            "",
            1 + r.below(20_000),
            r.below(30_000)
        );
    }
    row
}

fn vitals(c: &mut Criterion) {
    // `cargo test --all-targets` runs this once without `--bench`: keep that cheap.
    let full = std::env::args().any(|a| a == "--bench");
    let n = if full { 20_000 } else { 60 };
    let mut g = c.benchmark_group("vitals");
    for (name, text, rows) in vital_inputs(n) {
        assert!(
            rows(&text).is_some_and(|k| k > 0),
            "generated {name} text does not parse cleanly"
        );
        let parse: fn(&str) -> bool = match name {
            "onstat_banner" => |t| onstat_banner::parse(t).is_ok(),
            "onstat_p" => |t| onstat_p::parse(t).is_ok(),
            "onstat_l" => |t| onstat_l::parse(t).is_ok(),
            "onstat_g_glo" => |t| onstat_g_glo::parse(t).is_ok(),
            "onstat_g_lmx" => |t| onstat_g_lmx::parse(t).is_ok(),
            "onstat_g_wmx" => |t| onstat_g_wmx::parse(t).is_ok(),
            "onstat_s" => |t| onstat_s::parse(t).is_ok(),
            "onstat_g_seg" => |t| onstat_g_seg::parse(t).is_ok(),
            "onstat_g_bth" => |t| onstat_g_bth::parse(t).is_ok(),
            "onstat_g_tpf" => |t| onstat_g_tpf::parse(t).is_ok(),
            "onstat_x_txn" => |t| onstat_x_txn::parse(t).is_ok(),
            "onstat_g_pqs" => |t| onstat_g_pqs::parse(t).is_ok(),
            _ => |t| onstat_g_rea::parse(t).is_ok(),
        };
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::new(name, n), &text, |b, t| {
            b.iter(|| parse(black_box(t)))
        });
    }
    g.finish();
}

/// The per-second outputs as the demo prints them for 5,000 sessions (the size the idle-cost
/// budget is measured at), each at the moment of an incident that fills it: what the live
/// screen parses every second.
fn per_second(c: &mut Criterion) {
    use ifxtop::demo::timeline::{self, Incident};
    use ifxtop::demo::DemoInstance;
    use ifxtop::ids::Sid;
    use ifxtop::parsers::{onstat_g_ath, onstat_g_con, onstat_g_sql, onstat_k, sockets};
    use ifxtop::source::Source;
    let full = std::env::args().any(|a| a == "--bench");
    let demo = DemoInstance::new(1).with_sessions(if full { 5_000 } else { 50 });
    let at = |incident| {
        std::time::Duration::from_secs(timeline::first(incident).map_or(0, |p| p.middle()))
    };
    /// An output, the moment it is asked at, and its parse.
    type Case = (Source, Incident, fn(&str) -> bool);
    let cases: [Case; 8] = [
        (Source::OnstatGAth, Incident::CheckpointRequested, |t| {
            onstat_g_ath::parse(t).is_ok()
        }),
        (Source::OnstatU, Incident::CheckpointRequested, |t| {
            onstat_u::parse(t).is_ok()
        }),
        (Source::OnstatGCon, Incident::Calm, |t| {
            onstat_g_con::parse(t).is_ok()
        }),
        (Source::OnstatK, Incident::LockChain, |t| {
            onstat_k::parse(t).is_ok()
        }),
        (Source::OnstatXTxn, Incident::LockChain, |t| {
            onstat_x_txn::parse(t).is_ok()
        }),
        (Source::OnstatGSql(Sid(812)), Incident::LockChain, |t| {
            onstat_g_sql::parse(t).is_ok()
        }),
        (Source::ProcNetTcp, Incident::SendQFill, |t| {
            sockets::parse_proc_net_tcp(t).is_ok()
        }),
        (Source::ProcNetTcp6, Incident::SendQFill, |t| {
            sockets::parse_proc_net_tcp(t).is_ok()
        }),
    ];
    let mut g = c.benchmark_group("per_second");
    for (source, incident, parse) in cases {
        let text = demo
            .respond(&source.request(), at(incident))
            .map(|o| o.stdout)
            .unwrap_or_default();
        assert!(parse(&text), "the demo's {} does not parse", source.label());
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(
            BenchmarkId::from_parameter(source.label()),
            &text,
            |b, t| b.iter(|| parse(black_box(t))),
        );
        if source.memoised() {
            memo_case(&mut g, &demo, source, at(incident));
        }
    }
    g.finish();
}

/// The output of `source` at `t` parsed with the memo of its output a second before (what the
/// collectors do every second): `memo/<label>`.
fn memo_case(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    demo: &ifxtop::demo::DemoInstance,
    source: ifxtop::source::Source,
    t: std::time::Duration,
) {
    use ifxtop::parsers::memo::LineMemo;
    let before = t.saturating_sub(std::time::Duration::from_secs(1));
    let answer = |t| demo.respond(&source.request(), t).expect("an answer");
    let (last, out) = (answer(before), answer(t));
    let mut memo = LineMemo::default();
    source
        .parse_text_memo(last.exit, &last.stdout, &last.stderr, &mut memo)
        .expect("the second before parses");
    g.throughput(Throughput::Bytes(out.stdout.len() as u64));
    g.bench_with_input(BenchmarkId::new("memo", source.label()), &out, |b, out| {
        b.iter_batched(
            || memo.clone(),
            |mut m| {
                let r = source.parse_text_memo(out.exit, &out.stdout, &out.stderr, &mut m);
                (r.is_ok(), m)
            },
            criterion::BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, parsers, vitals, per_second);
criterion_group!(disk_benches, disk_parsers);
criterion_main!(benches, disk_benches);
