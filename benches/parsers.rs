//! Parser throughput (DESIGN.md §6: at least 200 MB/s on `onstat -u` / `onstat -X` text, 20,000
//! threads in under 10 ms). The inputs are generated here, deterministically, in the layout of
//! a 64-bit Linux 12.10 instance: 10-digit addresses in 16-wide columns, mixed flags and waits.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
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

criterion_group!(benches, parsers);
criterion_main!(benches);
