//! The signals a watch reacts to, as one stream: the screen, `serve` and `snapshot` all take
//! them from here.

use crate::error::Error;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;

/// A signal ifxtop was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Terminate,
    Hangup,
    Interrupt,
    Quit,
    /// SIGTSTP (`kill -TSTP`; Ctrl-Z arrives as a key in raw mode): suspend like Ctrl-Z.
    Stop,
    /// SIGCONT: continued after a stop (ours or someone else's `kill -STOP`): take the
    /// terminal again and draw everything.
    Continue,
}

impl Signal {
    /// The signals that end a watch: SIGTERM, SIGHUP, SIGINT, SIGQUIT.
    pub const ENDS: [Signal; 4] = [
        Signal::Terminate,
        Signal::Hangup,
        Signal::Interrupt,
        Signal::Quit,
    ];
    /// What the screen takes: the ends, and SIGTSTP and SIGCONT.
    pub const SCREEN: [Signal; 6] = [
        Signal::Terminate,
        Signal::Hangup,
        Signal::Interrupt,
        Signal::Quit,
        Signal::Stop,
        Signal::Continue,
    ];

    /// The exit code a shell expects after a signal that ends ifxtop (128 + its number).
    pub fn exit_code(self) -> Option<u8> {
        match self {
            Signal::Hangup => Some(129),
            Signal::Interrupt => Some(130),
            Signal::Quit => Some(131),
            Signal::Terminate => Some(143),
            Signal::Stop | Signal::Continue => None,
        }
    }

    fn kind(self) -> SignalKind {
        match self {
            Signal::Terminate => SignalKind::terminate(),
            Signal::Hangup => SignalKind::hangup(),
            Signal::Interrupt => SignalKind::interrupt(),
            Signal::Quit => SignalKind::quit(),
            Signal::Stop => SignalKind::from_raw(nix::libc::SIGTSTP),
            Signal::Continue => SignalKind::from_raw(nix::libc::SIGCONT),
        }
    }
}

/// Every signal of `which` that arrives, in order, on one channel (inside a tokio runtime). The
/// handlers are in place when this returns, so nothing sent after is missed.
pub fn listen(which: &[Signal]) -> Result<mpsc::UnboundedReceiver<Signal>, Error> {
    let (tx, rx) = mpsc::unbounded_channel();
    for &sig in which {
        let mut stream = signal(sig.kind()).map_err(Error::Io)?;
        let tx = tx.clone();
        tokio::spawn(async move {
            while stream.recv().await.is_some() {
                if tx.send(sig).is_err() {
                    break;
                }
            }
        });
    }
    Ok(rx)
}

/// The first signal that ends a watch, as its exit code; never, if the handlers cannot be set
/// up.
pub async fn first_end() -> u8 {
    match listen(&Signal::ENDS) {
        Ok(mut rx) => loop {
            match rx.recv().await {
                Some(s) => {
                    if let Some(code) = s.exit_code() {
                        return code;
                    }
                }
                None => return std::future::pending().await,
            }
        },
        Err(_) => std::future::pending().await,
    }
}
