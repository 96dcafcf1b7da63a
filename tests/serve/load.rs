//! `ifxtop serve --demo` under load on loopback: 200 scrapes at once, all answered; then a slow
//! flood (connections that send half a request line and stall, and connections that send
//! nothing, each reopened as soon as the server closes it) while scrapes keep being answered
//! within a few seconds; and the process's peak memory (VmHWM) bounded through it all.
//! Bounded: a fixed number of threads and connections, every wait with a deadline.

use crate::run::{metrics_when_up, serve};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// Scrapes sent at once.
const AT_ONCE: usize = 200;
/// Slow senders: half a request line, then nothing.
const HALF_LINES: usize = 100;
/// Connections that send nothing at all.
const SILENT: usize = 50;
/// How long the slow flood lasts: over two header timeouts (3 s), so every slow connection is
/// closed by the server and opened again at least once.
const FLOOD: Duration = Duration::from_secs(8);
/// A scrape during the flood is answered within this (Prometheus's default scrape timeout is
/// 10 s); a debug build on a shared machine answers in milliseconds.
const ANSWERED_WITHIN: Duration = Duration::from_secs(3);
/// serve's peak resident memory, in KiB. Measured (debug build): 12.8 MiB idle, a peak of
/// 16.5 MiB through this test; 48 MiB is three times that, room for the allocator's whims, and
/// still far below what a connection count or a buffer without bound would reach.
const MAX_HWM_KIB: u64 = 48 * 1024;

/// One scrape on a connection of its own: the status and whether the body has `informix_up`,
/// or what went wrong. Every read and write waits at most `limit`.
fn scrape(addr: SocketAddr, limit: Duration) -> Result<(u16, bool), String> {
    let mut s = TcpStream::connect_timeout(&addr, limit).map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(limit)).map_err(|e| e.to_string())?;
    s.set_write_timeout(Some(limit))
        .map_err(|e| e.to_string())?;
    s.write_all(
        format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .map_err(|e| format!("send: {e}"))?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(|e| format!("read: {e}"))?;
    let raw = String::from_utf8_lossy(&raw);
    let status = raw
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| {
            format!(
                "no status in {:?}",
                raw.chars().take(80).collect::<String>()
            )
        })?;
    Ok((status, raw.contains("\ninformix_up{")))
}

/// A field of /proc/PID/status in KiB (`VmRSS`, `VmHWM`).
fn memory_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
    status
        .lines()
        .find_map(|l| {
            l.strip_prefix(field)?
                .strip_prefix(':')?
                .trim()
                .strip_suffix(" kB")?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// One slow client until `until`: it connects, sends `first` (maybe nothing) and waits; when
/// the server closes the connection it pauses a little and connects again. Returns how many of
/// its connections the server closed, and the longest any of them lived.
fn stall(addr: SocketAddr, first: &[u8], until: Instant) -> (usize, Duration) {
    let mut closed = 0;
    let mut longest = Duration::ZERO;
    while Instant::now() < until {
        let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(2)) else {
            std::thread::sleep(Duration::from_millis(100));
            continue;
        };
        let opened = Instant::now();
        if !first.is_empty() && s.write_all(first).is_err() {
            continue;
        }
        let mut buf = [0u8; 512];
        let ended = loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
                break false;
            }
            match s.read(&mut buf) {
                Ok(0) => break true,
                // An answer (a 408 or a 503): the close follows.
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break true,
                Err(_) => break false,
            }
        };
        if ended {
            closed += 1;
            longest = longest.max(opened.elapsed());
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    (closed, longest)
}

#[test]
fn two_hundred_scrapes_at_once_and_a_slow_flood_are_answered_in_bounded_memory() {
    let _slots = crate::run::SLOTS.lock().unwrap_or_else(|e| e.into_inner());
    let (running, addr) = serve(&["--demo"]);
    let pid = running.pid();
    metrics_when_up(addr, 1);
    let idle_rss = memory_kib(pid, "VmRSS");

    // 200 scrapes at once, every one answered 200 with the metrics.
    let start = Barrier::new(AT_ONCE);
    let answers: Vec<Result<(u16, bool), String>> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..AT_ONCE)
            .map(|_| {
                scope.spawn(|| {
                    start.wait();
                    scrape(addr, Duration::from_secs(20))
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("scrape thread"))
            .collect()
    });
    let bad: Vec<_> = answers
        .iter()
        .filter(|a| !matches!(a, Ok((200, true))))
        .collect();
    assert!(
        bad.is_empty(),
        "{} of {AT_ONCE} scrapes at once not answered 200 with informix_up: {:?}",
        bad.len(),
        bad.iter().take(5).collect::<Vec<_>>()
    );

    // The slow flood, and a scrape every 250 ms through it.
    let until = Instant::now() + FLOOD;
    let (scrapes, slow) = std::thread::scope(|scope| {
        let slow: Vec<_> = (0..HALF_LINES + SILENT)
            .map(|i| {
                let first: &[u8] = if i < HALF_LINES { b"GET /metr" } else { b"" };
                scope.spawn(move || stall(addr, first, until))
            })
            .collect();
        // Let the flood connect first.
        std::thread::sleep(Duration::from_millis(500));
        let mut scrapes = Vec::new();
        while Instant::now() + ANSWERED_WITHIN < until {
            let asked = Instant::now();
            let answer = scrape(addr, ANSWERED_WITHIN);
            scrapes.push((answer, asked.elapsed()));
            std::thread::sleep(Duration::from_millis(250));
        }
        let slow: Vec<(usize, Duration)> = slow
            .into_iter()
            .map(|t| t.join().expect("slow client"))
            .collect();
        (scrapes, slow)
    });
    assert!(
        scrapes.len() >= 5,
        "only {} scrapes in the flood",
        scrapes.len()
    );
    let late: Vec<_> = scrapes
        .iter()
        .filter(|(a, took)| !matches!(a, Ok((200, true))) || *took > ANSWERED_WITHIN)
        .collect();
    assert!(
        late.is_empty(),
        "{} of {} scrapes during the slow flood not answered 200 within {ANSWERED_WITHIN:?}: {:?}",
        late.len(),
        scrapes.len(),
        late.iter().take(5).collect::<Vec<_>>()
    );
    // The server, not the clients, ended the slow connections: each was closed at least once,
    // none lived much past the header timeout (3 s).
    let never_closed = slow.iter().filter(|(closed, _)| *closed == 0).count();
    assert_eq!(never_closed, 0, "slow connections the server never closed");
    let longest = slow.iter().map(|(_, l)| *l).max().unwrap_or_default();
    assert!(
        longest < Duration::from_secs(5),
        "a slow connection lived {longest:?}"
    );

    let hwm = memory_kib(pid, "VmHWM");
    let rss = memory_kib(pid, "VmRSS");
    eprintln!(
        "serve under load: VmRSS {idle_rss} KiB idle, {rss} KiB after; VmHWM {hwm} KiB; \
         {} scrapes in the flood, slowest {:?}",
        scrapes.len(),
        scrapes.iter().map(|(_, t)| *t).max().unwrap_or_default()
    );
    assert!(
        hwm < MAX_HWM_KIB,
        "serve's peak memory {hwm} KiB, over {MAX_HWM_KIB} KiB"
    );
    assert!(running.terminate().success());
}
