//! `ifxtop serve` as a user runs it: its HTTP answers on loopback, and a real Prometheus
//! (Debian's `prometheus`) scraping `ifxtop serve --demo` and answering queries for `informix_up`
//! and `informix_waiting_threads` through its HTTP API. Every process is stopped by the test
//! (SIGTERM for serve, which must then end cleanly) and every wait is bounded.

use crate::common::free_port;
use crate::run::{self, address_in, http, metrics_when_up, serve, serve_command, start};
use crate::{available, samples, PROMETHEUS};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn serve_answers_metrics_in_both_formats_and_nothing_else() {
    let (serve, addr) = serve(&["--demo", "--demo-instances", "2"]);
    assert!(addr.ip().is_loopback());
    let body = metrics_when_up(addr, 2);
    let all = samples(&body);
    let mut servers: Vec<&str> = all
        .iter()
        .filter(|s| s.name == "informix_up")
        .filter_map(|s| s.label("server"))
        .collect();
    servers.sort();
    servers.dedup();
    assert_eq!(servers.len(), 2, "two demo instances: {servers:?}");
    assert!(all.iter().all(|s| s.label("server").is_some()));

    let (status, head, body) = http(
        addr,
        "GET",
        "/metrics",
        &["Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"],
    );
    assert_eq!(status, 200);
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/openmetrics-text; version=1.0.0"),
        "{head}"
    );
    assert!(body.ends_with("# EOF\n"));

    let (status, _, _) = http(addr, "GET", "/nothing", &[]);
    assert_eq!(status, 404);
    let (status, head, _) = http(addr, "POST", "/metrics", &["Content-Length: 0"]);
    assert_eq!(status, 405);
    assert!(head.contains("GET, HEAD"), "{head}");
    let (status, _, body) = http(addr, "HEAD", "/metrics", &[]);
    assert_eq!((status, body.as_str()), (200, ""));

    let st = serve.terminate();
    assert!(st.success(), "serve ends cleanly on SIGTERM: {st:?}");
}

#[test]
fn an_unreachable_ssh_host_is_down_with_its_host_label_and_stalls_nothing() {
    if !available(
        "/usr/bin/ssh",
        "an_unreachable_ssh_host_is_down_with_its_host_label_and_stalls_nothing",
    ) {
        return;
    }
    let home = tempfile::tempdir().expect("home");
    // Nothing listens on this port: ssh fails at once (BatchMode, no prompt).
    let far = format!("127.0.0.1:{}", free_port());
    let mut cmd = serve_command(&["--listen", "127.0.0.1:0", "--demo", "--ssh", &far]);
    cmd.args(["--server", "ol_far", "--ssh-config", "/dev/null"])
        .env("HOME", home.path())
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .env_remove("IFXTOP_SSH_CONFIG");
    let (serve, line) = start(cmd);
    assert!(line.contains("ol_demo, ol_far@127.0.0.1"), "{line}");
    let addr = address_in(&line);
    // The demo answers while the far host fails.
    let body = metrics_when_up(addr, 1);
    let all = samples(&body);
    let up: Vec<_> = all.iter().filter(|s| s.name == "informix_up").collect();
    assert_eq!(up.len(), 2, "{body}");
    let demo = up
        .iter()
        .find(|s| s.label("server") == Some("ol_demo"))
        .expect("the demo");
    assert_eq!((demo.number(), demo.label("host")), (1.0, None));
    let far_up = up
        .iter()
        .find(|s| s.label("server") == Some("ol_far"))
        .expect("the far host");
    assert_eq!(far_up.number(), 0.0);
    assert_eq!(far_up.label("host"), Some("127.0.0.1"));
    // Of the far instance, nothing but what says it is down, and the calls ifxtop made for it
    // (what it costs: each a run that failed).
    for s in all.iter().filter(|s| s.label("server") == Some("ol_far")) {
        assert_eq!(s.label("host"), Some("127.0.0.1"), "{s:?}");
        if s.name == "ifxtop_source_runs_total" {
            assert!(s.number() >= 1.0, "{s:?}");
            continue;
        }
        // What the process has cost (the failed ssh runs made for it are reaped children).
        if s.name == "ifxtop_cpu_seconds_total" {
            assert!(s.number() >= 0.0, "{s:?}");
            continue;
        }
        assert!(
            ["informix_up", "ifxtop_source_up"].contains(&s.name.as_str()),
            "{s:?}"
        );
        assert_eq!(s.number(), 0.0, "{s:?}");
    }
    let st = serve.terminate();
    assert!(st.success(), "serve ends cleanly on SIGTERM: {st:?}");
}

#[test]
fn a_listen_address_that_is_not_one_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(["serve", "--demo", "--listen", "localhost"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("an IP address and a port"), "{err}");
}

#[test]
fn live_screen_options_that_mean_nothing_to_serve_are_refused() {
    for (args, said) in [
        (
            &["--demo", "--record", "x.jsonl"][..],
            "--record: serve does not record",
        ),
        (
            &["--replay", "x.jsonl"][..],
            "--replay: serve exports live instances",
        ),
        (
            &["--demo", "--extents", "pe.txt"][..],
            "--extents: serve builds no extent map",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(said), "{args:?}: {err}");
    }
}

/// The first non-empty answer Prometheus gives to `promql` within 60 s of its start. It accepts
/// connections before its storage is open and answers every query 503 until then (`/-/ready`
/// says when it is ready), so a refused connection or a "not ready" is "not yet"; the
/// timeout names the targets and the log.
pub(crate) fn first_answer(
    prom: SocketAddr,
    promql: &str,
    log: &std::path::Path,
) -> Vec<serde_json::Value> {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        if TcpStream::connect_timeout(&prom, Duration::from_secs(1)).is_ok()
            && http(prom, "GET", "/-/ready", &[]).0 == 200
        {
            let r = query(prom, promql);
            if !r.is_empty() {
                return r;
            }
        }
        if Instant::now() > until {
            let targets = if TcpStream::connect_timeout(&prom, Duration::from_secs(1)).is_ok() {
                http(prom, "GET", "/api/v1/targets", &[]).2
            } else {
                "(Prometheus does not listen)".to_string()
            };
            panic!(
                "Prometheus has no answer to {promql} within 60 s; targets: {targets}\nlog:\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Prometheus's answer to an instant query: the `data.result` array.
pub(crate) fn query(prom: SocketAddr, promql: &str) -> Vec<serde_json::Value> {
    let mut encoded = String::new();
    for b in promql.bytes() {
        if b.is_ascii_alphanumeric() || b"_-.".contains(&b) {
            encoded.push(char::from(b));
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    let (status, _, body) = http(prom, "GET", &format!("/api/v1/query?query={encoded}"), &[]);
    assert_eq!(status, 200, "{promql}: {body}");
    let v: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(v["status"], "success", "{body}");
    v["data"]["result"].as_array().cloned().unwrap_or_default()
}

/// A Prometheus still opening its storage: it listens, and answers everything 503 "Service
/// Unavailable" (as Prometheus's web handler does until it is ready) for its first 1.5 s. Waiting
/// for it is not a failure; the answer after it is the one returned.
#[test]
fn a_prometheus_not_yet_ready_is_waited_for() {
    use std::net::TcpListener;
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let addr = listener.local_addr().expect("addr");
    let started = Instant::now();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopped = stop.clone();
    let fake = std::thread::spawn(move || {
        let mut answered_503 = 0;
        for conn in listener.incoming() {
            if stopped.load(std::sync::atomic::Ordering::SeqCst) {
                break;
            }
            let Ok(mut conn) = conn else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && conn.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head);
            let (status, body) = if started.elapsed() < Duration::from_millis(1500) {
                answered_503 += 1;
                ("503 Service Unavailable", "Service Unavailable".to_string())
            } else if head.starts_with("GET /-/ready ") {
                ("200 OK", "Prometheus Server is Ready.".to_string())
            } else if head.starts_with("GET /api/v1/query?query=informix_up") {
                let r = r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{"server":"ol_demo"},"value":[1,"1"]}]}}"#;
                ("200 OK", r.to_string())
            } else {
                ("404 Not Found", "not here".to_string())
            };
            let _ = write!(
                conn,
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
        answered_503
    });
    let log = tempfile::NamedTempFile::new().expect("log");
    let r = first_answer(addr, "informix_up == 1", log.path());
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0]["metric"]["server"], "ol_demo");
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let _ = TcpStream::connect(addr);
    let answered_503 = fake.join().expect("the fake ends");
    assert!(
        answered_503 >= 1,
        "the wait went through a 503 at least once"
    );
}

#[test]
fn prometheus_scrapes_serve_and_answers_queries() {
    // A real Prometheus with a 1 s scrape timeout: not beside the floods, which take the CPU
    // of a 2-core machine from every process on it.
    let _slots = crate::run::SLOTS.lock().unwrap_or_else(|e| e.into_inner());
    if !available(PROMETHEUS, "prometheus_scrapes_serve_and_answers_queries") {
        return;
    }
    let (serve, target) = serve(&["--demo"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
             scrape_configs:\n  - job_name: ifxtop\n    static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .expect("config");
    let (prometheus, prom_addr, log) = run::prometheus(&config, dir.path());

    // Within 60 s: Prometheus ready, a scrape done, the demo answered.
    let up = first_answer(prom_addr, "informix_up == 1", &log);
    assert_eq!(up.len(), 1, "{up:?}");
    let metric = &up[0]["metric"];
    assert_eq!(metric["server"], "ol_demo", "{metric}");
    assert_eq!(metric["job"], "ifxtop", "{metric}");
    assert_eq!(metric["instance"], target.to_string(), "{metric}");
    assert_eq!(up[0]["value"][1], "1");

    let waiting = query(prom_addr, "informix_waiting_threads");
    let mut reasons: Vec<String> = waiting
        .iter()
        .map(|r| {
            assert_eq!(r["metric"]["server"], "ol_demo", "{r}");
            let v: f64 = r["value"][1]
                .as_str()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("a number: {r}"));
            assert!(v >= 0.0 && v.fract() == 0.0, "{r}");
            r["metric"]["reason"].as_str().unwrap_or("").to_string()
        })
        .collect();
    reasons.sort();
    assert_eq!(
        reasons,
        [
            "buffer",
            "checkpoint",
            "condition",
            "defunct",
            "lock",
            "log_buffer",
            "mutex",
            "rollback",
            "transaction"
        ]
    );

    // The scrape itself was healthy: Prometheus's own `up`, and no sample it dropped.
    let scrape_up = query(prom_addr, "up{job=\"ifxtop\"}");
    assert_eq!(scrape_up.len(), 1, "{scrape_up:?}");
    assert_eq!(scrape_up[0]["value"][1], "1");
    let (status, _, targets) = http(prom_addr, "GET", "/api/v1/targets", &[]);
    assert_eq!(status, 200);
    let t: serde_json::Value = serde_json::from_str(&targets).expect("JSON");
    let active = &t["data"]["activeTargets"][0];
    assert_eq!(active["health"], "up", "{active}");
    assert_eq!(active["lastError"], "", "{active}");

    drop(prometheus);
    let st = serve.terminate();
    assert!(st.success(), "serve ends cleanly on SIGTERM: {st:?}");
}

/// The reliability test's flood: more connections than serve keeps (512) that send nothing,
/// then slow senders (a header line every second). Past the limit, each new connection closes
/// the oldest idle one at once (before, the new one was answered 503 and the idle ones held
/// their places for the whole header timeout): with 1,200 idle connections open, a scrape is
/// answered at once; the idle ones serve kept are closed within the header timeout (3 s), and
/// a trickled request is never served. Bounded: 1,200 connections on loopback, a few seconds.
#[test]
fn idle_and_slow_connections_do_not_starve_the_scrapes() {
    let _slots = crate::run::SLOTS.lock().unwrap_or_else(|e| e.into_inner());
    let (running, addr) = serve(&["--demo"]);
    metrics_when_up(addr, 1);
    // 1,200 idle connections, from eight threads of 150.
    let started = Instant::now();
    let held: Vec<TcpStream> = std::thread::scope(|scope| {
        let fillers: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| {
                    let mut held = Vec::new();
                    let mut failed = 0;
                    while held.len() < 150 && failed < 50 {
                        match TcpStream::connect_timeout(&addr, Duration::from_secs(5)) {
                            Ok(s) => held.push(s),
                            Err(_) => {
                                failed += 1;
                                std::thread::sleep(Duration::from_millis(20));
                            }
                        }
                    }
                    held
                })
            })
            .collect();
        fillers
            .into_iter()
            .flat_map(|f| f.join().expect("filler"))
            .collect()
    });
    let opened = Instant::now();
    assert_eq!(held.len(), 1200);
    // A scrape now, while every place is taken by an idle connection: answered within 1 s.
    let asked = Instant::now();
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connects");
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let _ = s.write_all(
        format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    );
    let mut got = String::new();
    let _ = s.read_to_string(&mut got);
    let took = asked.elapsed();
    assert!(
        got.starts_with("HTTP/1.1 200"),
        "{:?}",
        got.chars().take(80).collect::<String>()
    );
    assert!(took < Duration::from_secs(1), "the scrape took {took:?}");
    // The idle connections serve closed to make room got an end of stream (never a 503), well
    // before the header timeout: at least the 688 past 512, and the scrape's.
    let ended = |s: &TcpStream| {
        let _ = s.set_nonblocking(true);
        let mut b = [0u8; 16];
        let r = s.peek(&mut b);
        let _ = s.set_nonblocking(false);
        match r {
            Ok(0) => Some(true),
            Ok(_) => Some(false),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => Some(true),
            Err(_) => None,
        }
    };
    let mut closed = 0;
    for s in &held {
        match ended(s) {
            Some(true) => closed += 1,
            Some(false) => panic!("an idle connection was sent something"),
            None => {}
        }
    }
    // (Told apart from the header timeout only while none of them is 3 s old: on a machine
    // too busy to open 1,200 connections and scrape in that time, the timeout closes them all
    // anyway, and this says nothing.)
    if started.elapsed() < Duration::from_secs(3) {
        assert!(
            closed >= 1200 - 512,
            "only {closed} of 1,200 idle connections closed at once"
        );
    } else {
        eprintln!(
            "1,200 connections took {:?} to open and scrape: eviction not told apart",
            started.elapsed()
        );
    }
    // Slow senders: a header line every second, for 5 s: closed at the header timeout (3 s),
    // never served.
    let slow: Vec<std::thread::JoinHandle<String>> = (0..8)
        .map(|_| {
            std::thread::spawn(move || {
                let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(5)) else {
                    return String::new();
                };
                let _ = s.set_read_timeout(Some(Duration::from_secs(12)));
                let _ = s.write_all(b"GET /metrics HTTP/1.1\r\n");
                for _ in 0..5 {
                    std::thread::sleep(Duration::from_secs(1));
                    if s.write_all(b"X-Slow: 1\r\n").is_err() {
                        break;
                    }
                }
                let mut got = String::new();
                let _ = s.read_to_string(&mut got);
                got
            })
        })
        .collect();
    // Every idle connection is closed by the server within the header timeout and a little:
    // reading gives the end of the stream, not a timeout.
    std::thread::sleep(HEADER_TIMEOUT_AND_A_LITTLE.saturating_sub(opened.elapsed()));
    for mut s in held {
        s.set_read_timeout(Some(Duration::from_secs(1)))
            .expect("timeout");
        let mut rest = Vec::new();
        assert!(s.read_to_end(&mut rest).is_ok(), "not closed by the server");
        assert!(rest.is_empty(), "an idle connection was sent {rest:?}");
    }
    for h in slow {
        let got = h.join().expect("slow sender");
        assert!(
            !got.starts_with("HTTP/1.1 200"),
            "a trickled request was served: {got:?}"
        );
    }
    assert!(running.terminate().success());
}

/// serve's header timeout (3 s) and a second: every idle connection is closed by then.
const HEADER_TIMEOUT_AND_A_LITTLE: Duration = Duration::from_secs(4);
