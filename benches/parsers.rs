//! Parser throughput (DESIGN.md §6: at least 200 MB/s on `onstat -u` / `onstat -X` text, 20,000
//! threads in under 10 ms). The inputs are generated here, deterministically, in the layout of
//! a 64-bit Linux 12.10 instance: 10-digit addresses in 16-wide columns, mixed flags and waits.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ifxtop::parsers::{
    onstat_banner, onstat_g_bth, onstat_g_glo, onstat_g_lmx, onstat_g_rea, onstat_g_seg,
    onstat_g_tpf, onstat_g_wmx, onstat_l, onstat_p, onstat_s, onstat_x_txn,
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
// Vital signs (issue 11): one throughput figure per parser, on generated text of `n` rows in the
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
            _ => |t| onstat_g_rea::parse(t).is_ok(),
        };
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::new(name, n), &text, |b, t| {
            b.iter(|| parse(black_box(t)))
        });
    }
    g.finish();
}

criterion_group!(benches, parsers, vitals);
criterion_main!(benches);
