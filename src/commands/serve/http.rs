//! The exporter's HTTP side, on a thread and a runtime of its own: the telemetry path
//! (`/metrics`) encodes the latest metrics of every instance, `/` is a landing page linking to
//! it, anything else is 404. HTTP/1.1 through hyper, over TLS when the web configuration says
//! (`web.rs`), every request checked against its basic-auth users; connections are bounded in
//! number and in how long a request (and a TLS handshake) may take to arrive.

use super::metrics::{exposition, Format, InstanceMetrics};
use super::web::WebConfig;
use crate::error::Error;
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{HeaderValue, ACCEPT, ALLOW, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use hyper::{Method, Request, Response, StatusCode};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{oneshot, watch};

/// At most this many connections at once; past it a new connection is answered `503 Service
/// Unavailable` at once and closed (a scraper sees why and retries; a reset says nothing).
/// Prometheus keeps one per target, but a burst of scrapers (200 at once, tests/serve/load.rs)
/// or a slow flood (connections that stall until the header timeout ends them) must not take
/// every slot: at 64, 59 of 200 scrapes at once were turned away. An idle connection costs a
/// few KiB (VmHWM over the load test: see the README), and 512 stay well inside the 1024
/// descriptors a service gets by default.
pub(crate) const MAX_CONNECTIONS: usize = 512;
/// A request's headers must arrive within this, from the connection's start or the last
/// answer: Prometheus sends its request at once, so an idle or trickling connection (a header
/// line every 2 s) is closed well before it could starve the scrapes.
pub(crate) const HEADER_TIMEOUT: Duration = Duration::from_secs(3);
/// No connection lives longer than this, however busy: a kept-alive scraper reconnects.
const CONNECTION_LIFETIME: Duration = Duration::from_secs(120);
/// Connections the kernel completes before serve accepts them. The standard library's 128 is
/// too few for a burst: at 128 the handshakes past it wait for the client's SYN retry (a second
/// or more), and in tests/serve/prometheus.rs opening 1,200 connections took 4 s instead of
/// well under one. Linux caps it at `net.core.somaxconn` (4096 by default).
const BACKLOG: i32 = 1024;
/// The answer past the connection limit.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

type Latest = Vec<watch::Receiver<Arc<InstanceMetrics>>>;

/// How serve answers: its web configuration and where the metrics are.
#[derive(Debug)]
pub(crate) struct Web {
    pub(crate) config: WebConfig,
    /// `--web.telemetry-path`: `/metrics` unless told.
    pub(crate) telemetry_path: String,
}

/// A listening socket on `addr` with room for a burst of connections ([`BACKLOG`]), as the
/// standard library makes it otherwise (`SO_REUSEADDR` on Unix).
pub(crate) fn listen(addr: std::net::SocketAddr) -> std::io::Result<std::net::TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}

/// The HTTP thread, running until `stop` (or drop).
pub(crate) struct HttpServer {
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl HttpServer {
    /// Serves `latest` (one receiver per instance) on `listener` from a new thread.
    pub(crate) fn start(
        listener: std::net::TcpListener,
        latest: Latest,
        web: Web,
    ) -> Result<HttpServer, Error> {
        listener.set_nonblocking(true)?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("ifxtop-http".into())
            .spawn(move || {
                rt.block_on(accept(listener, Arc::new(latest), Arc::new(web), stopped))
            })?;
        Ok(HttpServer {
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Stops accepting, closes every connection and waits for the thread.
    pub(crate) fn stop(mut self) {
        self.shut();
    }

    fn shut(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.shut();
    }
}

async fn accept(
    listener: std::net::TcpListener,
    latest: Arc<Latest>,
    web: Arc<Web>,
    mut stop: oneshot::Receiver<()>,
) {
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("ifxtop serve: cannot listen: {e}");
            return;
        }
    };
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    // Past the limit: a 503 at once, then closed, on a task of its own that may
                    // take at most a second (the peer may not read).
                    let Ok(slot) = slots.clone().try_acquire_owned() else {
                        tokio::spawn(async move {
                            use tokio::io::AsyncWriteExt;
                            let mut stream = stream;
                            let _ = tokio::time::timeout(Duration::from_secs(1), async {
                                let _ = stream.write_all(BUSY).await;
                                let _ = stream.shutdown().await;
                            })
                            .await;
                        });
                        continue;
                    };
                    let latest = latest.clone();
                    let web = web.clone();
                    connections.spawn(async move {
                        let _slot = slot;
                        match web.config.tls.clone() {
                            None => serve_connection(stream, latest, web).await,
                            Some(tls) => {
                                // The handshake within the header timeout too: a client that
                                // opens and says nothing keeps no slot.
                                let acceptor = tokio_rustls::TlsAcceptor::from(tls);
                                if let Ok(Ok(stream)) =
                                    tokio::time::timeout(HEADER_TIMEOUT, acceptor.accept(stream)).await
                                {
                                    serve_connection(stream, latest, web).await;
                                }
                            }
                        }
                    });
                }
                // Out of file descriptors and the like: wait a little, never spin.
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    connections.abort_all();
}

/// HTTP/1.1 on one connection (plain or TLS), within its lifetime.
async fn serve_connection<S>(stream: S, latest: Arc<Latest>, web: Arc<Web>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |req| {
        let response = respond(&req, &latest, &web);
        async move { Ok::<_, Infallible>(response) }
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
    let _ = tokio::time::timeout(CONNECTION_LIFETIME, conn).await;
}

/// The latest metrics of every instance; an instance whose task has ended is `informix_up` 0.
fn latest_metrics(latest: &Latest) -> Vec<Arc<InstanceMetrics>> {
    latest
        .iter()
        .map(|rx| {
            let m = rx.borrow().clone();
            if rx.has_changed().is_err() {
                Arc::new(m.gone())
            } else {
                m
            }
        })
        .collect()
}

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The answer to one request.
pub(crate) fn respond<B>(req: &Request<B>, latest: &Latest, web: &Web) -> Response<Full<Bytes>> {
    // Every path needs the user and password when there are users, as the toolkit has it.
    if let Some(auth) = &web.config.auth {
        let given = req
            .headers()
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        if !auth.allows(given) {
            let mut r = text(StatusCode::UNAUTHORIZED, "unauthorized\n".to_string());
            r.headers_mut().insert(
                WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"ifxtop serve\""),
            );
            return r;
        }
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = text(
            StatusCode::METHOD_NOT_ALLOWED,
            "only GET and HEAD\n".to_string(),
        );
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    match req.uri().path() {
        p if p == web.telemetry_path => {
            let format =
                Format::from_accept(req.headers().get(ACCEPT).and_then(|v| v.to_str().ok()));
            match exposition(latest_metrics(latest), std::time::Instant::now(), format) {
                Ok(body) => {
                    let mut r = text(StatusCode::OK, body);
                    r.headers_mut().insert(
                        CONTENT_TYPE,
                        HeaderValue::from_static(format.content_type()),
                    );
                    r
                }
                Err(_) => text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "the metrics could not be encoded\n".to_string(),
                ),
            }
        }
        "/" => {
            let path = html_escape(&web.telemetry_path);
            let mut r = text(
                StatusCode::OK,
                format!(
                    "<!DOCTYPE html>\n<html><head><title>ifxtop serve</title></head><body>\n\
                     <h1>ifxtop serve</h1>\n\
                     <p>Prometheus metrics of {} Informix instance{}: <a href=\"{path}\">{path}</a></p>\n\
                     </body></html>\n",
                    latest.len(),
                    if latest.len() == 1 { "" } else { "s" }
                ),
            );
            r.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            );
            r
        }
        _ => text(
            StatusCode::NOT_FOUND,
            format!("not found: the metrics are at {}\n", web.telemetry_path),
        ),
    }
}

/// `s` safe inside HTML text and a quoted attribute.
fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A burst larger than the standard library's backlog (128) completes its handshakes before
    /// serve accepts any: with 128, the connections past it wait a second or more for the SYN
    /// retry, which made 1,200 connections take 4 s (longer than the header timeout).
    #[test]
    fn a_burst_past_128_connections_is_taken_before_any_accept() {
        let listener = listen("127.0.0.1:0".parse().expect("addr")).expect("listens");
        let addr = listener.local_addr().expect("addr");
        let mut held = Vec::new();
        for i in 0..400 {
            let s = std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(500))
                .unwrap_or_else(|e| panic!("connection {i} not taken by the backlog: {e}"));
            held.push(s);
        }
        assert_eq!(held.len(), 400);
    }
}
