//! serve's shared feed over HTTP (`--share`): `GET /feed` streams the same zstd frames as the
//! socket (the history, then the live frames), `POST /feed` carries what that viewer says (the
//! few messages of `collect::wire`, read by the same code as the socket's: nothing else is
//! taken, nothing runs). Offered only behind serve's TLS and basic auth (the feed holds the
//! server's SQL); the viewer's user is the one its password proved. Its POSTs name its feed by
//! the random token the GET was answered with, and must come from the same user.

use crate::instance::share::{Door, Transport, Who};
use crate::source::attach_http::{ChanReader, FEED_PATH, VIEWER_HEADER};
use http_body_util::BodyExt;
use hyper::body::{Body, Bytes, Frame};
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE, RETRY_AFTER};
use hyper::{Method, Request, Response, StatusCode};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::sync::{mpsc, oneshot};

/// Frames handed to hyper ahead of the connection: the share's own queue (bounded in bytes,
/// where a viewer that stops reading is dropped) holds the rest.
const AHEAD: usize = 4;
/// The most a POST may carry (a few lines of at most 4 KB each).
const MAX_POST: usize = 16 << 10;
/// POSTs of one viewer not yet read by the share.
const POSTS_QUEUED: usize = 16;

/// What a feed's path answers with.
pub(crate) type Answer = Response<http_body_util::Either<http_body_util::Full<Bytes>, FeedBody>>;

/// One viewer's feed, as its POSTs find it.
struct Said {
    user: String,
    tx: std::sync::mpsc::SyncSender<io::Result<Bytes>>,
}

/// The instances serve shares over HTTP, and the viewers attached to them.
#[derive(Default)]
pub(crate) struct Feeds {
    /// Each shared instance's name (as in a path: `files::name_of_instance`) and its door.
    doors: Vec<(String, Door)>,
    /// Why the feed is not offered though instances are shared (no TLS, no users).
    off: Option<String>,
    viewers: Mutex<HashMap<String, Said>>,
}

impl std::fmt::Debug for Feeds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feeds")
            .field(
                "instances",
                &self.doors.iter().map(|d| &d.0).collect::<Vec<_>>(),
            )
            .field("off", &self.off)
            .finish()
    }
}

/// Why the feed is not offered over HTTP with this web configuration (`None`: it is).
pub(crate) fn why_off(tls: bool, auth: bool) -> Option<String> {
    (!(tls && auth)).then(|| {
        "the feed over HTTP needs TLS and basic auth users in --web.config.file (it holds the \
         server's SQL)"
            .to_string()
    })
}

impl Feeds {
    /// The feeds of `doors` (instance, door), offered unless `off` says why not.
    pub(crate) fn new(doors: Vec<(String, Door)>, off: Option<String>) -> Feeds {
        let doors = doors
            .into_iter()
            .map(|(name, d)| (crate::files::name_of_instance(&name), d))
            .collect();
        Feeds {
            doors,
            off,
            viewers: Mutex::default(),
        }
    }

    /// Whether `path` is a feed's (`/feed`, `/feed/INSTANCE`).
    pub(crate) fn is_feed(path: &str) -> bool {
        path == FEED_PATH
            || path
                .strip_prefix(FEED_PATH)
                .is_some_and(|r| r.starts_with('/'))
    }

    fn door(&self, path: &str) -> Result<&Door, String> {
        let name = path
            .strip_prefix(FEED_PATH)
            .and_then(|r| r.strip_prefix('/'));
        let names = || {
            self.doors
                .iter()
                .map(|(n, _)| format!("{FEED_PATH}/{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match name {
            None if self.doors.len() == 1 => Ok(&self.doors[0].1),
            None if self.doors.is_empty() => {
                Err("nothing is shared here (serve --share)".to_string())
            }
            None => Err(format!("several instances are shared: {}", names())),
            Some(n) => self
                .doors
                .iter()
                .find(|(m, _)| m == n)
                .map(|(_, d)| d)
                .ok_or_else(|| format!("{n:?} is not shared here: {}", names())),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Said>> {
        self.viewers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The answer to a request of a feed's path by `user` (whose password serve checked).
    /// `kill` ends the connection it came on: a viewer the share lets go (it fell too far
    /// behind) is cut off at once, whether or not its connection is being written.
    pub(crate) async fn answer<B>(
        self: &Arc<Self>,
        req: Request<B>,
        user: String,
        kill: Arc<tokio::sync::Notify>,
    ) -> Answer
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        if let Some(why) = &self.off {
            return text(StatusCode::FORBIDDEN, why);
        }
        match *req.method() {
            Method::GET => self.get(req.uri().path(), user, kill).await,
            Method::POST => self.post(req, &user).await,
            _ => {
                let mut r = text(StatusCode::METHOD_NOT_ALLOWED, "GET the feed, POST to it");
                r.headers_mut()
                    .insert(ALLOW, HeaderValue::from_static("GET, POST"));
                r
            }
        }
    }

    /// A viewer attaches: the feed streams from its share (the history, then the live frames).
    async fn get(
        self: &Arc<Self>,
        path: &str,
        user: String,
        kill: Arc<tokio::sync::Notify>,
    ) -> Answer {
        let door = match self.door(path) {
            Ok(d) => d.clone(),
            Err(why) => return text(StatusCode::NOT_FOUND, &why),
        };
        let Some(token) = token() else {
            return text(StatusCode::INTERNAL_SERVER_ERROR, "no random token");
        };
        let (tx, rx) = mpsc::channel::<Bytes>(AHEAD);
        let (cut_tx, cut_rx) = oneshot::channel::<()>();
        let cut_tx = Mutex::new(Some(cut_tx));
        let (said_tx, said_rx) = std::sync::mpsc::sync_channel(POSTS_QUEUED);
        self.lock().insert(
            token.clone(),
            Said {
                user: user.clone(),
                tx: said_tx,
            },
        );
        let gone = Gone {
            feeds: self.clone(),
            token: token.clone(),
        };
        let t = Transport {
            writer: Box::new(FeedWriter { tx }),
            reader: Some(Box::new(io::BufReader::new(ChanReader::new(said_rx)))),
            close: Box::new(move || {
                if let Some(c) = cut_tx.lock().unwrap_or_else(|p| p.into_inner()).take() {
                    let _ = c.send(());
                }
                // A client that stopped reading is not written to, so the body is not asked
                // for its next frame: the connection itself is ended (its response dropped,
                // the share's writer blocked on it let go).
                kill.notify_one();
            }),
        };
        let who = Who { user, via: "http" };
        // Off the HTTP thread: the share writes to the viewer from threads of its own, and a
        // refusal is written here, both by blocking sends.
        let attached = tokio::task::spawn_blocking(move || door.attach(who, t)).await;
        match attached {
            Ok(Ok(())) => {}
            Ok(Err(why)) => {
                drop(gone);
                let mut r = text(StatusCode::SERVICE_UNAVAILABLE, &why);
                r.headers_mut()
                    .insert(RETRY_AFTER, HeaderValue::from_static("10"));
                return r;
            }
            Err(e) => {
                drop(gone);
                return text(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string());
            }
        }
        let mut r = Response::new(http_body_util::Either::Right(FeedBody {
            rx,
            cut: Some(cut_rx),
            done: false,
            held: vec![Box::new(gone)],
        }));
        let h = r.headers_mut();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/zstd"));
        if let Ok(v) = HeaderValue::from_str(&token) {
            h.insert(VIEWER_HEADER, v);
        }
        h.insert(
            hyper::header::CACHE_CONTROL,
            HeaderValue::from_static("no-store"),
        );
        r
    }

    /// What a viewer says: its feed named by its token, from the same user; the lines go to
    /// the share, which takes only its few messages.
    async fn post<B>(&self, req: Request<B>, user: &str) -> Answer
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let token = req
            .headers()
            .get(VIEWER_HEADER)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let tx = match self.lock().get(&token) {
            None => {
                return text(
                    StatusCode::NOT_FOUND,
                    &format!("no such feed: {VIEWER_HEADER} names none attached (it ended?)"),
                )
            }
            Some(s) if s.user != user => {
                return text(StatusCode::FORBIDDEN, "that feed is another user's")
            }
            Some(s) => s.tx.clone(),
        };
        let body = match http_body_util::Limited::new(req.into_body(), MAX_POST)
            .collect()
            .await
        {
            Ok(b) => b.to_bytes(),
            Err(e) => {
                return text(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &format!("at most {MAX_POST} bytes a POST: {e}"),
                )
            }
        };
        match tx.try_send(Ok(body)) {
            Ok(()) => text(StatusCode::NO_CONTENT, ""),
            Err(std::sync::mpsc::TrySendError::Full(_)) => {
                let mut r = text(StatusCode::SERVICE_UNAVAILABLE, "too many POSTs waiting");
                r.headers_mut()
                    .insert(RETRY_AFTER, HeaderValue::from_static("1"));
                r
            }
            Err(std::sync::mpsc::TrySendError::Disconnected(_)) => {
                text(StatusCode::NOT_FOUND, "that feed has ended")
            }
        }
    }
}

fn text(status: StatusCode, body: &str) -> Answer {
    let body = if body.is_empty() {
        String::new()
    } else {
        format!("{body}\n")
    };
    let mut r = Response::new(http_body_util::Either::Left(http_body_util::Full::new(
        Bytes::from(body),
    )));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// 128 random bits, in hex.
fn token() -> Option<String> {
    use ring::rand::SecureRandom;
    let mut b = [0u8; 16];
    ring::rand::SystemRandom::new().fill(&mut b).ok()?;
    Some(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// A viewer's feed gone (its response dropped): its POSTs are no longer taken, and the share's
/// reader of them sees the end.
struct Gone {
    feeds: Arc<Feeds>,
    token: String,
}

impl Drop for Gone {
    fn drop(&mut self) {
        self.feeds.lock().remove(&self.token);
    }
}

/// The share's side of a viewer's response: each frame handed on whole (a blocking send, on
/// the share's writer thread); an error once the response is gone.
struct FeedWriter {
    tx: mpsc::Sender<Bytes>,
}

impl io::Write for FeedWriter {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.tx
            .blocking_send(Bytes::copy_from_slice(b))
            .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A viewer's response: the frames as the share writes them; cut off (an error, so the
/// connection is dropped, not ended as if the feed were over) when the share drops the viewer.
pub(crate) struct FeedBody {
    rx: mpsc::Receiver<Bytes>,
    cut: Option<oneshot::Receiver<()>>,
    done: bool,
    /// Held as long as the response is sent (its token; the connection's marks).
    held: Vec<Box<dyn Send + Sync>>,
}

impl FeedBody {
    /// Keeps `thing` as long as the response is being sent.
    pub(crate) fn hold(&mut self, thing: Box<dyn Send + Sync>) {
        self.held.push(thing);
    }
}

impl Body for FeedBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        match this.rx.poll_recv(cx) {
            Poll::Ready(Some(b)) => return Poll::Ready(Some(Ok(Frame::data(b)))),
            Poll::Ready(None) => {
                this.done = true;
                return Poll::Ready(None);
            }
            Poll::Pending => {}
        }
        if let Some(cut) = this.cut.as_mut() {
            if let Poll::Ready(r) = Pin::new(cut).poll(cx) {
                this.cut = None;
                if r.is_ok() {
                    this.done = true;
                    return Poll::Ready(Some(Err(io::Error::other(
                        "the share let this viewer go",
                    ))));
                }
            }
        }
        Poll::Pending
    }
}

/// Counts the feeds a connection is sending (it outlives serve's connection lifetime while
/// one is).
pub(crate) struct Feeding(pub(crate) Arc<AtomicUsize>);

impl Feeding {
    pub(crate) fn new(n: &Arc<AtomicUsize>) -> Feeding {
        n.fetch_add(1, Ordering::SeqCst);
        Feeding(n.clone())
    }
}

impl Drop for Feeding {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::sample::RawSample;
    use crate::instance::share::{socket, Share, ShareOptions};
    use std::time::{Duration, Instant};

    fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
        let end = Instant::now() + Duration::from_secs(30);
        while !f() {
            assert!(Instant::now() < end, "never: {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A viewer over HTTP that stops reading (its response never polled, as hyper does not
    /// poll a body whose client does not read) is let go once its queue passes the bound:
    /// its connection is ended, and once its response is gone it leaves the presence list and
    /// its POSTs are no longer taken. The collector's sends never wait for it.
    #[test]
    fn a_viewer_over_http_that_stops_reading_is_let_go_and_its_connection_ended() {
        let dir = tempfile::tempdir().expect("dir");
        let mut o = ShareOptions::new(
            Some(dir.path().join("feed.sock")),
            socket::Access::new(None, None).expect("access"),
        );
        o.queue_bytes = 256 << 10;
        let header = crate::collect::record::RecordingHeader::new(
            Some("ol_test"),
            Some("db01"),
            time::OffsetDateTime::now_utc(),
            &[],
            2,
        );
        let (share, tx) = Share::start(
            o,
            "ol_test",
            &header,
            crate::collect::SessionClock::start(),
            None,
        )
        .expect("shares");
        let feeds = Arc::new(Feeds::new(vec![("ol_test".into(), share.door())], None));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let kill = Arc::new(tokio::sync::Notify::new());
        let req = Request::builder()
            .method(Method::GET)
            .uri("/feed")
            .body(http_body_util::Full::new(Bytes::new()))
            .expect("request");
        let answer = rt.block_on(feeds.answer(req, "dba".into(), kill.clone()));
        assert_eq!(answer.status(), StatusCode::OK);
        assert_eq!(share.door().counts().0, 1);
        assert_eq!(feeds.lock().len(), 1);
        // Outputs that compress badly, megabytes in all: far past the bound.
        let mut seed = 7u64;
        let noise: String = (0..2_000_000)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                char::from(b'a' + (seed >> 60) as u8)
            })
            .collect();
        for i in 0..100 {
            let sample = RawSample {
                t: f64::from(i),
                source: "onstat -u".into(),
                argv: vec!["onstat".into(), "-u".into()],
                exit: Some(5),
                stdout: noise[i as usize * 9000..i as usize * 9000 + 20_000].to_string(),
                stderr: String::new(),
            };
            tx.try_send(sample).expect("the collectors never wait");
            std::thread::sleep(Duration::from_millis(5));
        }
        wait_for("the viewer dropped", || share.door().counts().2 == 1);
        rt.block_on(async { tokio::time::timeout(Duration::from_secs(10), kill.notified()).await })
            .expect("its connection is ended");
        // The connection ended drops its response: the share's writer is let go.
        drop(answer);
        wait_for("the viewer gone", || share.door().counts().0 == 0);
        assert!(feeds.lock().is_empty(), "its POSTs are no longer taken");
    }

    #[test]
    fn feed_paths() {
        assert!(Feeds::is_feed("/feed"));
        assert!(Feeds::is_feed("/feed/ol_prod"));
        assert!(!Feeds::is_feed("/feeds"));
        assert!(!Feeds::is_feed("/metrics"));
        let f = Feeds::new(Vec::new(), None);
        assert!(f
            .door("/feed")
            .err()
            .is_some_and(|e| e.contains("nothing is shared")));
        assert_eq!(why_off(true, true), None);
        assert!(why_off(true, false).is_some() && why_off(false, true).is_some());
    }
}
