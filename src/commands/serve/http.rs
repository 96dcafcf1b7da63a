//! The exporter's HTTP side, on a thread and a runtime of its own: the telemetry path
//! (`/metrics`) encodes the latest metrics of every instance, `/` is a landing page linking to
//! it, anything else is 404. HTTP/1.1 through hyper, over TLS when the web configuration says
//! (`web.rs`), every request checked against its basic-auth users; connections are bounded in
//! number and in how long a request (and a TLS handshake) may take to arrive. When every place
//! is taken, the connection that has waited longest without a request in progress is closed to
//! make room: idle and trickling clients, however many, cannot lock a scraper out.

use super::feed::{Answer, Feeding, Feeds};
use super::metrics::{exposition, Format, InstanceMetrics};
use super::web::{Verdict, WebConfig};
use crate::error::Error;
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{
    HeaderValue, ACCEPT, ALLOW, AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE,
};
use hyper::{Method, Request, Response, StatusCode};
use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{oneshot, watch};

/// At most this many connections at once. When a new one comes and every place is taken, the
/// oldest connection with no request in progress is closed to make room (as nginx drains its
/// oldest idle connections when it runs out): a client that connects and sends nothing, or
/// trickles a header line at a time, keeps its place only until newer ones need it, while a
/// scraper, which sends its request at once, is served. Prometheus keeps one per target, and a
/// burst of 200 scrapes at once (tests/serve/load.rs) fits. An idle connection costs a few KiB
/// (VmHWM over the load test: docs/serve.md), and 512 stay well inside the 1024 descriptors a
/// service gets by default.
pub(crate) const MAX_CONNECTIONS: usize = 512;
/// A request's headers must arrive within this, from the connection's start or the last
/// answer: Prometheus sends its request at once, so an idle or trickling connection (a header
/// line every 2 s) is closed well before it could hold a place for long.
pub(crate) const HEADER_TIMEOUT: Duration = Duration::from_secs(3);
/// No connection lives longer than this, however busy: a kept-alive scraper reconnects.
const CONNECTION_LIFETIME: Duration = Duration::from_secs(120);
/// Connections the kernel completes before serve accepts them. The standard library's 128 is
/// too few for a burst: at 128 the handshakes past it wait for the client's SYN retry (a second
/// or more), and in tests/serve/prometheus.rs opening 1,200 connections took 4 s instead of
/// well under one. Linux caps it at `net.core.somaxconn` (4096 by default).
const BACKLOG: i32 = 1024;
/// The answer, in plain HTTP, when every connection has a request in progress (only then: any
/// other is closed to make room). A TLS client is closed without it: plain text on a TLS
/// socket is a protocol error to the client, not an answer.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

type Latest = Vec<watch::Receiver<Arc<InstanceMetrics>>>;

/// How serve answers: its web configuration and where the metrics are.
#[derive(Debug)]
pub(crate) struct Web {
    pub(crate) config: WebConfig,
    /// `--web.telemetry-path`: `/metrics` unless told.
    pub(crate) telemetry_path: String,
    /// The shared feeds (`--share`): `/feed`.
    pub(crate) feeds: Arc<Feeds>,
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
    /// Serves `latest` (one receiver per instance) on `listener` from a new thread. A listener
    /// the runtime cannot take is an error here, before serve says it listens.
    pub(crate) fn start(
        listener: std::net::TcpListener,
        latest: Latest,
        web: Web,
    ) -> Result<HttpServer, Error> {
        listener.set_nonblocking(true)?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let listener = {
            let _in = rt.enter();
            tokio::net::TcpListener::from_std(listener)?
        };
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

/// One open connection: whether a request on it is in progress, and how to close it.
#[derive(Debug)]
struct Open {
    serving: bool,
    close: Option<oneshot::Sender<()>>,
}

/// Every open connection, the oldest first: which to close when a new one needs the place.
#[derive(Debug, Default)]
struct Connections {
    next: u64,
    open: HashMap<u64, Open>,
    /// Ids in the order they were opened; ids of closed connections are dropped lazily.
    order: VecDeque<u64>,
}

impl Connections {
    /// Makes room for one more, closing the oldest connection with no request in progress if
    /// every place is taken: `false` when every one has a request in progress.
    fn make_room(&mut self, max: usize) -> bool {
        if self.open.len() < max {
            return true;
        }
        let mut busy = Vec::new();
        let mut made = false;
        while let Some(id) = self.order.pop_front() {
            match self.open.get(&id) {
                None => {}
                Some(o) if o.serving => busy.push(id),
                Some(_) => {
                    if let Some(mut o) = self.open.remove(&id) {
                        if let Some(close) = o.close.take() {
                            let _ = close.send(());
                        }
                    }
                    made = true;
                    break;
                }
            }
        }
        // The busy ones keep their places, oldest first.
        for id in busy.into_iter().rev() {
            self.order.push_front(id);
        }
        made
    }

    fn add(&mut self) -> (u64, oneshot::Receiver<()>) {
        let (close, closed) = oneshot::channel();
        let id = self.next;
        self.next += 1;
        self.open.insert(
            id,
            Open {
                serving: false,
                close: Some(close),
            },
        );
        self.order.push_back(id);
        // Closed connections' ids: dropped once they are half the list (amortized O(1)).
        if self.order.len() > 2 * self.open.len() + 64 {
            let open = &self.open;
            self.order.retain(|id| open.contains_key(id));
        }
        (id, closed)
    }
}

type Shared = Arc<Mutex<Connections>>;

/// A connection's place, given back when its task ends (however it ends).
struct Place {
    id: u64,
    all: Shared,
}

impl Drop for Place {
    fn drop(&mut self) {
        if let Ok(mut c) = self.all.lock() {
            c.open.remove(&self.id);
        }
    }
}

/// A request in progress on a connection: it is not closed to make room meanwhile.
struct Serving {
    id: u64,
    all: Shared,
}

impl Serving {
    fn start(id: u64, all: &Shared) -> Serving {
        if let Ok(mut c) = all.lock() {
            if let Some(o) = c.open.get_mut(&id) {
                o.serving = true;
            }
        }
        Serving {
            id,
            all: all.clone(),
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        if let Ok(mut c) = self.all.lock() {
            if let Some(o) = c.open.get_mut(&self.id) {
                o.serving = false;
            }
        }
    }
}

async fn accept(
    listener: tokio::net::TcpListener,
    latest: Arc<Latest>,
    web: Arc<Web>,
    mut stop: oneshot::Receiver<()>,
) {
    let all: Shared = Arc::default();
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let room = all.lock().map(|mut c| c.make_room(MAX_CONNECTIONS)).unwrap_or(false);
                    if !room {
                        // Every connection has a request in progress: plain HTTP is told so
                        // (on a task of its own that may take a second: the peer may not
                        // read); a TLS client is closed, never sent plain text.
                        if web.config.tls.is_none() {
                            tokio::spawn(async move {
                                use tokio::io::AsyncWriteExt;
                                let mut stream = stream;
                                let _ = tokio::time::timeout(Duration::from_secs(1), async {
                                    let _ = stream.write_all(BUSY).await;
                                    let _ = stream.shutdown().await;
                                })
                                .await;
                            });
                        }
                        continue;
                    }
                    let Ok((id, closed)) = all.lock().map(|mut c| c.add()) else {
                        continue;
                    };
                    let place = Place { id, all: all.clone() };
                    let latest = latest.clone();
                    let web = web.clone();
                    tasks.spawn(async move {
                        let all = place.all.clone();
                        tokio::select! {
                            // Closed to make room for a newer connection.
                            _ = closed => {}
                            _ = connection(stream, id, all, latest, web) => {}
                        }
                        drop(place);
                    });
                }
                // Out of file descriptors: make room by closing the oldest idle connection.
                // Any error: wait a little, never spin.
                Err(e) => {
                    if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) {
                        if let Ok(mut c) = all.lock() {
                            let n = c.open.len();
                            c.make_room(n);
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
    tasks.abort_all();
}

/// One connection, plain or TLS (the handshake within the header timeout too: a client that
/// opens and says nothing is closed when the timeout ends, or sooner to make room).
async fn connection(
    stream: tokio::net::TcpStream,
    id: u64,
    all: Shared,
    latest: Arc<Latest>,
    web: Arc<Web>,
) {
    match web.config.tls.clone() {
        None => serve_connection(stream, id, all, latest, web).await,
        Some(tls) => {
            let acceptor = tokio_rustls::TlsAcceptor::from(tls);
            if let Ok(Ok(stream)) =
                tokio::time::timeout(HEADER_TIMEOUT, acceptor.accept(stream)).await
            {
                serve_connection(stream, id, all, latest, web).await;
            }
        }
    }
}

/// HTTP/1.1 on one connection (plain or TLS), within its lifetime. While a request is answered
/// the connection is marked serving ([`Serving`]); a feed's answer (`/feed`) is being answered
/// as long as it streams, and its connection lives past the lifetime while it does.
async fn serve_connection<S>(stream: S, id: u64, all: Shared, latest: Arc<Latest>, web: Arc<Web>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let feeding = Arc::new(AtomicUsize::new(0));
    let feeds = feeding.clone();
    // Ends the connection: a feed's viewer that the share lets go.
    let kill = Arc::new(tokio::sync::Notify::new());
    let killer = kill.clone();
    let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
        let serving = Serving::start(id, &all);
        let latest = latest.clone();
        let web = web.clone();
        let feeding = feeds.clone();
        let kill = killer.clone();
        async move {
            let mut response = respond(req, &latest, &web, kill).await;
            if let http_body_util::Either::Right(feed) = response.body_mut() {
                feed.hold(Box::new(serving));
                feed.hold(Box::new(Feeding::new(&feeding)));
            } else {
                drop(serving);
            }
            Ok::<_, Infallible>(response)
        }
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
    let conn = async move {
        tokio::select! {
            r = conn => r,
            () = kill.notified() => Ok(()),
        }
    };
    let mut conn = std::pin::pin!(conn);
    if tokio::time::timeout(CONNECTION_LIFETIME, conn.as_mut())
        .await
        .is_ok()
    {
        return;
    }
    // Past its lifetime, a connection goes on only while it sends a feed.
    while feeding.load(Ordering::SeqCst) > 0 {
        if tokio::time::timeout(Duration::from_secs(1), conn.as_mut())
            .await
            .is_ok()
        {
            return;
        }
    }
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

fn text(status: StatusCode, body: String) -> Answer {
    let mut r = Response::new(http_body_util::Either::Left(Full::new(Bytes::from(body))));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The answer to one request.
pub(crate) async fn respond<B>(
    req: Request<B>,
    latest: &Latest,
    web: &Web,
    kill: Arc<tokio::sync::Notify>,
) -> Answer
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    // Every path needs the user and password when there are users, as the toolkit has it.
    let mut user = None;
    if let Some(auth) = &web.config.auth {
        let given = req
            .headers()
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        match auth.check(given).await {
            Verdict::Allowed => user = given.and_then(super::web::credentials).map(|c| c.0),
            Verdict::Refused => {
                let mut r = text(StatusCode::UNAUTHORIZED, "unauthorized\n".to_string());
                r.headers_mut().insert(
                    WWW_AUTHENTICATE,
                    HeaderValue::from_static("Basic realm=\"ifxtop serve\""),
                );
                return r;
            }
            Verdict::Busy => {
                let mut r = text(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "too many passwords being checked: ask again\n".to_string(),
                );
                r.headers_mut()
                    .insert(RETRY_AFTER, HeaderValue::from_static("1"));
                return r;
            }
        }
    }
    if Feeds::is_feed(req.uri().path()) {
        // Only behind basic auth (`Feeds` is off without it): the user its password proved.
        let user = user.unwrap_or_default();
        return web.feeds.answer(req, user, kill).await;
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
