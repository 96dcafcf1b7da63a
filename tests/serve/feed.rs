//! serve's shared feed over HTTP (`--share`): `GET /feed` behind serve's TLS and basic auth,
//! `POST /feed` for what the viewer says. A wrong password gets a 401 and not one byte of the
//! feed; plain HTTP on the TLS port gets nothing; the right password gets the feed, sees itself
//! in the presence list, and its mark comes back to it. Loopback only; serve is ended by the
//! test, by its own handle.

use crate::common::feed::{wait_for, web_config, Lines, PASSWORD, USER};
use crate::common::pki::pki;
use crate::run::{address_in, serve_command, start, Running};
use ifxtop::source::attach_http::{open, Credentials, HttpOptions, HttpTarget};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};

/// zstd's frame magic: the feed's first bytes (and every frame's).
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// `ifxtop serve --demo --demo-at 280 --share` with `web` as its web configuration.
fn serve_sharing(dir: &Path, web: &Path) -> (Running, SocketAddr) {
    let mut cmd = serve_command(&[
        "--demo",
        "--demo-at",
        "280",
        "--web.listen-address",
        "127.0.0.1:0",
    ]);
    cmd.arg("--web.config.file")
        .arg(web)
        .arg("--share")
        .arg(dir.join("feed.sock"));
    let (running, line) = start(cmd);
    (running, address_in(&line))
}

/// Everything answered to `request` on `stream` within 5 s (or until it closes).
fn answer_of(mut stream: impl Read + Write, request: &str) -> Vec<u8> {
    let mut raw = Vec::new();
    if stream.write_all(request.as_bytes()).is_err() {
        return raw;
    }
    let end = Instant::now() + Duration::from_secs(5);
    let mut buf = [0u8; 16 * 1024];
    while Instant::now() < end {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => break,
        }
    }
    raw
}

fn get(path: &str, addr: SocketAddr, auth: Option<(&str, &str)>) -> String {
    use base64::Engine;
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if let Some((u, p)) = auth {
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"));
        req.push_str(&format!("Authorization: Basic {token}\r\n"));
    }
    req + "\r\n"
}

fn tcp(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    s
}

/// GET over TLS trusting `ca`: all that came back.
fn https(addr: SocketAddr, ca: &Path, request: &str) -> Vec<u8> {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(ca).expect("ca") {
        roots.add(c.expect("ca cert")).expect("added");
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    let name = ServerName::try_from("127.0.0.1").expect("name");
    let conn = rustls::ClientConnection::new(Arc::new(config), name).expect("client");
    answer_of(rustls::StreamOwned::new(conn, tcp(addr)), request)
}

fn has_feed_bytes(raw: &[u8]) -> bool {
    raw.windows(4).any(|w| w == ZSTD_MAGIC)
}

#[test]
fn a_wrong_password_gets_nothing_of_the_feed_and_the_right_one_watches() {
    let dir = tempfile::tempdir().expect("dir");
    let pki = pki(dir.path());
    let web = web_config(dir.path(), &pki);
    let (serve, addr) = serve_sharing(dir.path(), &web);
    // The socket exists once the collector shares: the feed is on.
    wait_for("the socket", || dir.path().join("feed.sock").exists());
    let target =
        HttpTarget::parse(&format!("https://{USER}@127.0.0.1:{}", addr.port())).expect("url");
    let with = |password: &str| HttpOptions {
        ca: Some(pki.ca.clone()),
        credentials: Some(Credentials {
            user: USER.into(),
            password: password.into(),
        }),
    };

    // A wrong password, no password: 401 and not one byte of the feed.
    for auth in [Some((USER, "wrong horse")), Some(("root", PASSWORD)), None] {
        let raw = https(addr, &pki.ca, &get("/feed", addr, auth));
        let text = String::from_utf8_lossy(&raw);
        assert!(text.starts_with("HTTP/1.1 401"), "{auth:?}: {text}");
        assert!(!has_feed_bytes(&raw), "{auth:?}: feed bytes in {text:?}");
    }
    let refused = open(&target, &with("wrong horse")).err().expect("refused");
    assert!(refused.to_string().contains("401"), "{refused}");
    // Plain HTTP on the TLS port, with the right password: no HTTP answer, no feed.
    let raw = answer_of(tcp(addr), &get("/feed", addr, Some((USER, PASSWORD))));
    assert!(
        !raw.starts_with(b"HTTP/") && !has_feed_bytes(&raw),
        "plain HTTP answered: {:?}",
        String::from_utf8_lossy(&raw)
    );

    // The right password: the feed, this viewer in the presence list as the user its password
    // proved, its mark back to it, its junk refused.
    let t = open(&target, &with(PASSWORD)).expect("the feed");
    let lines = Lines::read(t.from);
    let mut to = t.to;
    wait_for("the header", || lines.has("\"ifxtop_recording\":1"));
    wait_for("onstat -u", || lines.has("\"source\":\"onstat -u\""));
    wait_for("in the presence list", || {
        lines.any(|l| {
            l.contains("\"viewers\"")
                && l.contains("\"via\":\"http\"")
                && l.contains(&format!("\"user\":\"{USER}\""))
        })
    });
    to.write_all(b"{\"mark\":{\"at\":290.0,\"text\":\"sid 812 holds the chain\"}}\n")
        .expect("mark");
    to.flush().expect("POST");
    to.write_all(b"{\"argv\":[\"onmode\",\"-z\",\"812\"]}\n")
        .expect("junk");
    to.flush().expect("POST");
    wait_for("the mark back", || {
        lines.has(&format!(
            "\"text\":\"sid 812 holds the chain\",\"by\":\"{USER}\""
        ))
    });
    wait_for("the junk refused", || lines.has("\"refused\""));
    assert!(
        !lines.any(|l| l.starts_with("{\"t\":") && l.contains("\"argv\":[\"onmode\"")),
        "nothing the viewer sent ran"
    );
    // serve's metrics count the viewer and what it was sent.
    let scrape = || {
        String::from_utf8_lossy(&https(
            addr,
            &pki.ca,
            &get("/metrics", addr, Some((USER, PASSWORD))),
        ))
        .to_string()
    };
    // The metrics are published once a second: one published between the viewer's attach and
    // its first write counts the viewer and 0 bytes, truly. So wait for one counting both.
    let sent = |metrics: &str| {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix("ifxtop_share_sent_bytes_total{server=\"ol_demo\"} "))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .expect("bytes sent")
    };
    wait_for("the viewer and the bytes sent to it counted", || {
        let metrics = scrape();
        metrics.contains("ifxtop_share_viewers{server=\"ol_demo\"} 1") && sent(&metrics) > 0.0
    });
    // A POST naming no feed of this user's is refused.
    let raw = https(
        addr,
        &pki.ca,
        &get("/feed", addr, Some((USER, PASSWORD))).replacen("GET", "POST", 1),
    );
    assert!(
        String::from_utf8_lossy(&raw).starts_with("HTTP/1.1 404"),
        "{}",
        String::from_utf8_lossy(&raw)
    );
    drop(t.keep);
    drop(serve);
}

/// Without TLS the feed is not offered, even with the right password (it holds the server's
/// SQL): 403, and not a byte of it.
#[test]
fn without_tls_the_feed_is_not_offered() {
    let dir = tempfile::tempdir().expect("dir");
    let hash = bcrypt::hash(PASSWORD, 4).expect("bcrypt");
    let web = dir.path().join("web.yml");
    std::fs::write(&web, format!("basic_auth_users:\n  {USER}: '{hash}'\n")).expect("write");
    let (_serve, addr) = serve_sharing(dir.path(), &web);
    wait_for("the socket", || dir.path().join("feed.sock").exists());
    let raw = answer_of(tcp(addr), &get("/feed", addr, Some((USER, PASSWORD))));
    let text = String::from_utf8_lossy(&raw);
    assert!(text.starts_with("HTTP/1.1 403"), "{text}");
    assert!(text.contains("needs TLS"), "{text}");
    assert!(!has_feed_bytes(&raw));
}
