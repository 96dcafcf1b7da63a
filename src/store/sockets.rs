//! Client connections on the Informix listener ports over time: Send-Q/Recv-Q now, its
//! maximum over the window and its trend, per connection.

use crate::parsers::sockets::{Endpoint, Socket, TcpState};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::VecDeque;
use std::time::Duration;

#[derive(Debug, Clone)]
struct ConnHistory {
    send_q: VecDeque<(Duration, u64)>,
    last: Socket,
    last_seen: Duration,
    /// Order of first appearance: a stable, cheap tie-break for the pane's order.
    seq: u64,
    /// The largest Send-Q in `send_q`, kept up to date so building rows reads no history.
    max: u64,
}

impl ConnHistory {
    fn recompute_max(&mut self) {
        self.max = self.send_q.iter().map(|(_, q)| *q).max().unwrap_or(0);
    }
}

/// Send-Q samples a row carries for its sparkline (the widest sparkline drawn is 20 cells).
pub(crate) const TREND_SAMPLES: usize = 24;

/// Send-Q history per connection. Feed it every socket sample.
#[derive(Debug, Clone)]
pub(crate) struct SocketHistory {
    window: Duration,
    /// Local end (a listener address: a handful) → remote end → history. Two levels, so a
    /// sample's lookups borrow its endpoints instead of cloning a key per connection.
    conns: FxHashMap<Endpoint, FxHashMap<Endpoint, ConnHistory>>,
    latest: Option<Duration>,
    next_seq: u64,
}

/// One row of the Sockets pane.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SocketRow {
    pub local: Endpoint,
    pub remote: Endpoint,
    pub state: Option<TcpState>,
    pub send_q: u64,
    pub recv_q: u64,
    pub max_send_q: u64,
    /// Send-Q per sample over the window, oldest first.
    pub trend: Vec<u64>,
    /// The session on this connection (joined through `onstat -g ntt`), when known.
    pub sessid: Option<crate::ids::Sid>,
    pub user: Option<compact_str::CompactString>,
}

/// Which sockets belong to the instance: those whose local port is a listener port (the server
/// end of a client connection). With no known port, every TCP connection is shown.
pub(crate) fn is_client_connection(s: &Socket, ports: &[u16]) -> bool {
    if s.state == Some(TcpState::Listen) || !s.proto.starts_with("tcp") {
        return false;
    }
    ports.is_empty() || s.local.port_num().is_some_and(|p| ports.contains(&p))
}

impl SocketHistory {
    pub(crate) fn new(window: Duration) -> Self {
        SocketHistory {
            window,
            conns: FxHashMap::default(),
            latest: None,
            next_seq: 0,
        }
    }

    /// Takes one sample of the socket table(s) at `t`; only the instance's connections are kept.
    pub(crate) fn observe<'a>(
        &mut self,
        sockets: impl IntoIterator<Item = &'a Socket>,
        t: Duration,
        ports: &[u16],
    ) {
        for s in sockets {
            if !is_client_connection(s, ports) {
                continue;
            }
            let by_remote = match self.conns.get_mut(&s.local) {
                Some(m) => m,
                None => self.conns.entry(s.local.clone()).or_default(),
            };
            let h = match by_remote.get_mut(&s.remote) {
                Some(h) => h,
                None => {
                    self.next_seq += 1;
                    by_remote.entry(s.remote.clone()).or_insert(ConnHistory {
                        send_q: VecDeque::new(),
                        last: s.clone(),
                        last_seen: t,
                        seq: self.next_seq,
                        max: 0,
                    })
                }
            };
            if h.send_q.back().is_some_and(|(bt, _)| *bt == t) {
                continue;
            }
            h.send_q.push_back((t, s.send_q));
            h.max = h.max.max(s.send_q);
            // Only what changes between samples (the endpoints are the key).
            h.last.send_q = s.send_q;
            h.last.recv_q = s.recv_q;
            h.last.state = s.state;
            h.last_seen = t;
        }
        let horizon = t.saturating_sub(self.window);
        for by_remote in self.conns.values_mut() {
            by_remote.retain(|_, h| {
                let mut max_left = false;
                while h.send_q.front().is_some_and(|(ft, _)| *ft < horizon) {
                    if let Some((_, q)) = h.send_q.pop_front() {
                        max_left |= q == h.max && q > 0;
                    }
                }
                if max_left {
                    h.recompute_max();
                }
                h.last_seen >= horizon
            });
        }
        self.conns.retain(|_, m| !m.is_empty());
        self.latest = Some(t);
    }

    /// Connections present in the latest sample, largest Send-Q first.
    pub(crate) fn rows(&self) -> Vec<SocketRow> {
        let Some(latest) = self.latest else {
            return Vec::new();
        };
        // Sort references with the keys computed once (thousands of connections on a big
        // instance, rebuilt every second), then build the rows in order.
        let mut live: Vec<(&ConnHistory, u64)> = self
            .conns
            .values()
            .flat_map(|m| m.values())
            .filter(|h| h.last_seen == latest)
            .map(|h| (h, h.max))
            .collect();
        live.sort_unstable_by(|(a, amax), (b, bmax)| {
            b.last
                .send_q
                .cmp(&a.last.send_q)
                .then(bmax.cmp(amax))
                .then(a.seq.cmp(&b.seq))
        });
        live.into_iter()
            .map(|(h, max)| SocketRow {
                local: h.last.local.clone(),
                remote: h.last.remote.clone(),
                state: h.last.state,
                send_q: h.last.send_q,
                recv_q: h.last.recv_q,
                max_send_q: max,
                // A connection that never queued anything in the window draws a blank
                // sparkline: no samples needed (most of thousands of connections).
                trend: if max == 0 {
                    Vec::new()
                } else {
                    h.send_q
                        .iter()
                        .skip(h.send_q.len().saturating_sub(TREND_SAMPLES))
                        .map(|(_, q)| *q)
                        .collect()
                },
                sessid: None,
                user: None,
            })
            .collect()
    }
}
