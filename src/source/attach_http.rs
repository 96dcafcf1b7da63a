//! A viewer's way to `ifxtop serve`'s feed over HTTP: `ifxtop --attach https://HOST:PORT`.
//! A GET of the feed's path streams the collector's frames (the same bytes as the socket); each
//! line the viewer says goes as a POST to the same path, naming its feed by the token serve
//! answered the GET with ([`VIEWER_HEADER`]). Over TLS only (the feed holds the server's SQL),
//! with basic auth: the password comes from a file or the environment, never the command line.

pub use super::attach::{HttpTarget, FEED_PATH};
use hyper::body::Bytes;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};

/// The header of serve's answer to the feed's GET: the token that names this viewer's feed in
/// its POSTs (a random number, good only with the same user's password).
pub const VIEWER_HEADER: &str = "x-ifxtop-viewer";
/// Connecting and the TLS handshake, each.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The CA bundles looked for when no `--attach-ca` is given (Debian's, Red Hat's).
const SYSTEM_CAS: [&str; 2] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
];
/// A CA file's bound (as serve's PEM files).
const PEM_CAP: u64 = 4 << 20;
/// Frames read ahead of the viewer.
const AHEAD: usize = 16;

/// A user and password for basic auth (never printed).
#[derive(Clone)]
pub struct Credentials {
    pub user: String,
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credentials({}, ***)", self.user)
    }
}

impl Credentials {
    fn header(&self) -> String {
        use base64::Engine;
        let pair = format!("{}:{}", self.user, self.password);
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        )
    }
}

/// How to reach the feed: the CA that signed serve's certificate (the system's bundle when
/// `None`) and the credentials.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    pub ca: Option<PathBuf>,
    pub credentials: Option<Credentials>,
}

/// The TLS client: trusting `ca`'s certificates, else the system's bundle.
fn tls(ca: Option<&Path>) -> io::Result<tokio_rustls::TlsConnector> {
    let files: Vec<PathBuf> = match ca {
        Some(p) => vec![p.to_path_buf()],
        None => SYSTEM_CAS
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.is_file())
            .collect(),
    };
    let mut roots = rustls::RootCertStore::empty();
    for f in &files {
        let pem = crate::files::read_capped(f, PEM_CAP)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", f.display())))?;
        for cert in CertificateDer::pem_slice_iter(&pem) {
            let cert = cert.map_err(|e| io::Error::other(format!("{}: {e}", f.display())))?;
            roots
                .add(cert)
                .map_err(|e| io::Error::other(format!("{}: {e}", f.display())))?;
        }
    }
    if roots.is_empty() {
        return Err(io::Error::other(match ca {
            Some(p) => format!("{}: no PEM certificate in it", p.display()),
            None => {
                "no CA certificates here: give --attach-ca FILE (the CA of serve's certificate)"
                    .to_string()
            }
        }));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(io::Error::other)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_rustls::TlsConnector::from(Arc::new(config)))
}

type Sender = hyper::client::conn::http1::SendRequest<http_body_util::Full<Bytes>>;

/// A TLS connection to `t`, its HTTP/1.1 driven on the current runtime.
async fn connect(t: &HttpTarget, tls: &tokio_rustls::TlsConnector) -> io::Result<Sender> {
    let timed = |what: &'static str| move |_| io::Error::new(io::ErrorKind::TimedOut, what);
    let tcp = tokio::time::timeout(
        CONNECT_TIMEOUT,
        tokio::net::TcpStream::connect((t.host.as_str(), t.port)),
    )
    .await
    .map_err(timed("connecting timed out"))??;
    let name = ServerName::try_from(t.host.clone()).map_err(io::Error::other)?;
    let stream = tokio::time::timeout(CONNECT_TIMEOUT, tls.connect(name, tcp))
        .await
        .map_err(timed("the TLS handshake timed out"))?
        .map_err(|e| {
            let said = e.to_string();
            let hint = if said.contains("UnknownIssuer") {
                " (trust the CA of serve's certificate: --attach-ca FILE)"
            } else if said.contains("CaUsedAsEndEntity") {
                " (serve's certificate is marked as a CA: make it with \
                 basicConstraints=critical,CA:FALSE, or sign it with a CA and give that CA)"
            } else {
                ""
            };
            io::Error::new(e.kind(), format!("TLS: {said}{hint}"))
        })?;
    let (sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(io::Error::other)?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// A request of the feed's path.
fn request(
    t: &HttpTarget,
    method: hyper::Method,
    creds: Option<&Credentials>,
    token: Option<&str>,
    body: Bytes,
) -> io::Result<hyper::Request<http_body_util::Full<Bytes>>> {
    let mut r = hyper::Request::builder()
        .method(method)
        .uri(&t.path)
        .header(hyper::header::HOST, t.authority())
        .header(hyper::header::USER_AGENT, "ifxtop");
    if let Some(c) = creds {
        r = r.header(hyper::header::AUTHORIZATION, c.header());
    }
    if let Some(token) = token {
        r = r.header(VIEWER_HEADER, token);
    }
    r.body(http_body_util::Full::new(body))
        .map_err(io::Error::other)
}

/// What serve said when it did not answer 200: its status and the first line of its text.
async fn refusal(resp: hyper::Response<hyper::body::Incoming>) -> String {
    use http_body_util::BodyExt;
    let status = resp.status();
    let text = http_body_util::Limited::new(resp.into_body(), 1024)
        .collect()
        .await
        .map(|b| String::from_utf8_lossy(&b.to_bytes()).into_owned())
        .unwrap_or_default();
    let first = crate::format::printable(text.lines().next().unwrap_or_default().trim());
    if first.is_empty() {
        status.to_string()
    } else {
        format!("{status}: {first}")
    }
}

/// A stream of byte chunks from a channel, read as one stream; a chunk that is an error ends
/// it with that error.
pub struct ChanReader {
    rx: Receiver<io::Result<Bytes>>,
    buf: Bytes,
}

impl ChanReader {
    pub fn new(rx: Receiver<io::Result<Bytes>>) -> Self {
        ChanReader {
            rx,
            buf: Bytes::new(),
        }
    }
}

impl Read for ChanReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.buf.is_empty() {
            match self.rx.recv() {
                Ok(Ok(b)) => self.buf = b,
                Ok(Err(e)) => return Err(e),
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.buf.len());
        out[..n].copy_from_slice(&self.buf[..n]);
        self.buf = self.buf.slice(n..);
        Ok(n)
    }
}

/// What the viewer says, a flush at a time: each flush is one POST.
struct Say {
    buf: Vec<u8>,
    tx: SyncSender<Vec<u8>>,
}

impl Write for Say {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.tx
            .send(std::mem::take(&mut self.buf))
            .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))
    }
}

fn runtime() -> io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

fn note(said: &Mutex<String>, what: &str) {
    let mut s = said.lock().unwrap_or_else(|p| p.into_inner());
    if s.len() < 4096 {
        s.push_str(what);
        s.push('\n');
    }
}

/// Opens the feed at `t`: the GET answered 200 (anything else is the error, with serve's
/// words), its frames to read, and a way to say things back.
pub fn open(t: &HttpTarget, opts: &HttpOptions) -> io::Result<super::attach::Transport> {
    let tls = tls(opts.ca.as_deref())?;
    let said: Arc<Mutex<String>> = Arc::default();
    let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel::<io::Result<String>>(1);
    let (data_tx, data_rx) = std::sync::mpsc::sync_channel::<io::Result<Bytes>>(AHEAD);
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    {
        let (t, tls, creds) = (t.clone(), tls.clone(), opts.credentials.clone());
        std::thread::Builder::new()
            .name("attach-http-in".into())
            .spawn(move || {
                let rt = match runtime() {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                rt.block_on(async move {
                    let asked = async {
                        let mut s = connect(&t, &tls).await?;
                        let req =
                            request(&t, hyper::Method::GET, creds.as_ref(), None, Bytes::new())?;
                        s.send_request(req).await.map_err(io::Error::other)
                    };
                    let resp = match asked.await {
                        Ok(r) => r,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    if resp.status() != hyper::StatusCode::OK {
                        let why = refusal(resp).await;
                        let _ = ready_tx.send(Err(io::Error::new(
                            io::ErrorKind::PermissionDenied,
                            format!("serve answered {why}"),
                        )));
                        return;
                    }
                    let token = resp
                        .headers()
                        .get(VIEWER_HEADER)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_string();
                    let _ = ready_tx.send(Ok(token));
                    use http_body_util::BodyExt;
                    let mut body = resp.into_body();
                    loop {
                        let frame = tokio::select! {
                            _ = &mut stopped => return,
                            f = body.frame() => f,
                        };
                        let chunk = match frame {
                            None => return,
                            Some(Err(e)) => Err(io::Error::other(e)),
                            Some(Ok(f)) => match f.into_data() {
                                Ok(d) => Ok(d),
                                Err(_) => continue,
                            },
                        };
                        let end = chunk.is_err();
                        // Blocks while the viewer is behind: the connection waits with it.
                        if data_tx.send(chunk).is_err() || end {
                            return;
                        }
                    }
                });
            })?;
    }
    let token = ready_rx
        .recv()
        .map_err(|_| io::Error::other("the feed's connection ended"))??;
    let (say_tx, say_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(64);
    {
        let (t, creds, said) = (t.clone(), opts.credentials.clone(), said.clone());
        std::thread::Builder::new()
            .name("attach-http-out".into())
            .spawn(move || {
                let Ok(rt) = runtime() else { return };
                // One connection a POST: they are few (a few lines a minute), and a connection
                // kept idle between them would be closed by serve's header timeout.
                for body in say_rx {
                    let said = said.clone();
                    let sent = rt.block_on(async {
                        let mut s = connect(&t, &tls).await?;
                        let req = request(
                            &t,
                            hyper::Method::POST,
                            creds.as_ref(),
                            Some(&token),
                            Bytes::from(body),
                        )?;
                        let resp = s.send_request(req).await.map_err(io::Error::other)?;
                        if resp.status().is_success() {
                            Ok(())
                        } else {
                            Err(io::Error::other(refusal(resp).await))
                        }
                    });
                    if let Err(e) = sent {
                        note(&said, &format!("POST {}: {e}", t.path));
                    }
                }
            })?;
    }
    Ok(super::attach::Transport {
        from: Box::new(ChanReader::new(data_rx)),
        to: Box::new(Say {
            buf: Vec::new(),
            tx: say_tx,
        }),
        keep: Box::new(stop),
        said,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_https_with_the_feeds_path() {
        let t = HttpTarget::parse("https://dba@db01:9443").expect("parses");
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str(), t.user.as_deref()),
            ("db01", 9443, "/feed", Some("dba"))
        );
        let t = HttpTarget::parse("https://[::1]/feed/ol_prod").expect("parses");
        assert_eq!((t.host.as_str(), t.port), ("::1", 19088));
        assert_eq!(t.path, "/feed/ol_prod");
        assert_eq!(t.to_string(), "https://[::1]:19088/feed/ol_prod");
        for bad in [
            "http://db01:19088",
            "https://db01:0",
            "https://db01:x",
            "https://db01/metrics",
            "https://db 01",
            "https://@db01",
            "https://db01/feed?x=1",
        ] {
            assert!(HttpTarget::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn credentials_are_never_printed() {
        let c = Credentials {
            user: "dba".into(),
            password: "s3cret".into(),
        };
        assert!(!format!("{c:?}").contains("s3cret"));
        assert_eq!(c.header(), "Basic ZGJhOnMzY3JldA==");
    }
}
