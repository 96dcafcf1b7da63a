//! `ifxtop serve` as a child process of a test: started on a loopback port it picks itself,
//! stopped by the test (SIGTERM, or killed when the test ends however it ends), and asked over
//! plain HTTP/1.1.

use crate::samples;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Held by the tests that flood serve (`load.rs`, the idle-connection test in `prometheus.rs`,
/// the TLS burst in `tls.rs`), by the one that times refusals and by the real Prometheus's
/// (a 1 s scrape timeout): run together they take each other's CPU and connects on a 2-core
/// machine.
pub(crate) static SLOTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A child process killed when the test ends, however it ends.
pub(crate) struct Running(pub(crate) Option<Child>);

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Running {
    /// The process id, for /proc/PID.
    pub(crate) fn pid(&self) -> u32 {
        self.0.as_ref().expect("running").id()
    }

    /// SIGTERM, then its exit status within 10 s.
    pub(crate) fn terminate(mut self) -> std::process::ExitStatus {
        let mut c = self.0.take().expect("running");
        let pid = nix::unistd::Pid::from_raw(i32::try_from(c.id()).expect("pid"));
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(st) = c.try_wait().expect("wait") {
                return st;
            }
            if Instant::now() > until {
                let _ = c.kill();
                let _ = c.wait();
                panic!("ifxtop serve did not end within 10 s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Starts `cmd` (an `ifxtop serve ...`) with its stderr piped: what it prints up to the line
/// saying where it listens (its warnings, if any, come first), then the rest read on so it
/// never blocks on a full pipe.
pub(crate) fn start(mut cmd: Command) -> (Running, String) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ifxtop serve starts");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let running = Running(Some(child));
    let mut line = String::new();
    while !line.contains("://") {
        let n = stderr
            .read_line(&mut line)
            .expect("serve says where it listens");
        if n == 0 {
            break;
        }
    }
    std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = stderr.read_to_string(&mut rest);
    });
    (running, line)
}

/// The address in serve's line "ifxtop serve: metrics of ol_demo at
/// http://127.0.0.1:PORT/metrics" (or https://).
pub(crate) fn address_in(line: &str) -> SocketAddr {
    line.split("://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
}

/// `ifxtop serve ARGS` with `INFORMIXSERVER` unset, as `start` starts it.
pub(crate) fn serve_command(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ifxtop"));
    cmd.arg("serve").args(args).env_remove("INFORMIXSERVER");
    cmd
}

/// `ifxtop serve --listen 127.0.0.1:0 ARGS`, and the address it says it listens on.
pub(crate) fn serve(args: &[&str]) -> (Running, SocketAddr) {
    let mut cmd = serve_command(&["--listen", "127.0.0.1:0"]);
    cmd.args(args);
    let (running, line) = start(cmd);
    (running, address_in(&line))
}

/// A Prometheus reading `config`, its data and its log (returned) in `dir`, on a free loopback
/// port (returned).
pub(crate) fn prometheus(
    config: &std::path::Path,
    dir: &std::path::Path,
) -> (Running, SocketAddr, std::path::PathBuf) {
    let addr: SocketAddr = format!("127.0.0.1:{}", crate::common::free_port())
        .parse()
        .expect("addr");
    let log = dir.join("prometheus.log");
    let running = Running(Some(
        Command::new(crate::PROMETHEUS)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log file"))
            .spawn()
            .expect("prometheus starts"),
    ));
    (running, addr, log)
}

/// A plain HTTP/1.1 request on loopback: status code, headers, body.
pub(crate) fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[&str],
) -> (u16, String, String) {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connects");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).expect("sends");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("reads the answer");
    let raw = String::from_utf8(raw).expect("utf-8");
    let (head, body) = raw.split_once("\r\n\r\n").expect("a head and a body");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("status in {head:?}"));
    (status, head.to_string(), body.to_string())
}

/// The metrics once every instance has answered (`informix_up` 1 for `n` instances), within 30 s.
pub(crate) fn metrics_when_up(addr: SocketAddr, n: usize) -> String {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, _, body) = http(addr, "GET", "/metrics", &[]);
        assert_eq!(status, 200, "{body}");
        let up = samples(&body)
            .iter()
            .filter(|s| s.name == "informix_up" && s.number() == 1.0)
            .count();
        if up == n {
            return body;
        }
        assert!(Instant::now() < until, "not up within 30 s:\n{body}");
        std::thread::sleep(Duration::from_millis(200));
    }
}
