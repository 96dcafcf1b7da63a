//! Client connections on the Informix listener ports over time: Send-Q/Recv-Q now, its
//! maximum over the window and its trend, per connection.

use crate::parsers::sockets::{Endpoint, Socket, TcpState};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::VecDeque;
use std::time::Duration;

/// One Send-Q sample: when (milliseconds since ifxtop started, modulo 2^32: two are compared
/// by their wrapping difference, right for any window under [`MAX_WINDOW_MS`]) and how many
/// bytes (a socket's queue is an `int` in the kernel). 8 bytes, not `(Duration, u64)`'s 24:
/// thousands of connections each keep a few dozen.
type Sample = (u32, u32);

fn nanos(t: Duration) -> u64 {
    u64::try_from(t.as_nanos()).unwrap_or(u64::MAX)
}

/// A sample's time: milliseconds, wrapping every 49 days.
fn millis(t: Duration) -> u32 {
    (t.as_millis() % (1u128 << 32)) as u32
}

/// The longest window the wrapping times can tell (24 days).
const MAX_WINDOW_MS: u32 = i32::MAX as u32;

#[derive(Debug, Clone)]
struct ConnHistory {
    /// The latest samples in the window, oldest first, at most [`TREND_SAMPLES`]: what the
    /// sparkline draws. A connection never holds the whole window (60 samples at a 1 s poll).
    recent: VecDeque<Sample>,
    /// The samples that can still be the window's largest Send-Q once older ones leave it:
    /// strictly decreasing from the front, so the front is the window's maximum (a
    /// sliding-window maximum). A connection whose queue never changes holds one.
    peaks: VecDeque<Sample>,
    /// The latest sample's queues and state: the endpoints are the maps' keys, not kept
    /// again (5,000 connections held 2.5 MB of map with a whole socket in each entry, 1.25 MB
    /// without).
    send_q: u64,
    recv_q: u64,
    state: Option<TcpState>,
    /// When it was last in a sample (nanoseconds since ifxtop started).
    last_seen: u64,
    /// When the current stretch of samples with bytes in its Send-Q began (nanoseconds since
    /// ifxtop started): a reply in flight is acknowledged within a round trip, a client that
    /// does not read leaves them there.
    queued_since: Option<u64>,
    /// Order of first appearance: a stable, cheap tie-break for the pane's order.
    seq: u64,
    /// The window's largest Send-Q (the front of `peaks`), kept beside the queues: the pane's
    /// order reads it for every connection each second, and reading it from `peaks` took a
    /// cache miss per connection (5,000 of them, their samples on the heap).
    max: u32,
}

impl ConnHistory {
    fn push(&mut self, t: u32, q: u64) {
        let q = u32::try_from(q).unwrap_or(u32::MAX);
        if self.recent.len() == TREND_SAMPLES {
            self.recent.pop_front();
        }
        self.recent.push_back((t, q));
        while self.peaks.back().is_some_and(|&(_, p)| p <= q) {
            self.peaks.pop_back();
        }
        self.peaks.push_back((t, q));
    }

    /// Drops the samples taken more than `window` milliseconds before `now`.
    fn expire(&mut self, now: u32, window: u32) {
        let old = |&(ft, _): &Sample| now.wrapping_sub(ft) > window;
        while self.recent.front().is_some_and(old) {
            self.recent.pop_front();
        }
        while self.peaks.front().is_some_and(old) {
            self.peaks.pop_front();
        }
        self.max = self.peaks.front().map_or(0, |&(_, q)| q);
    }

    /// The largest Send-Q in the window.
    fn max(&self) -> u64 {
        u64::from(self.max)
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
    /// Seconds its Send-Q has held bytes, from the first of the samples in a row that saw
    /// bytes in it to the latest (0 when only the latest did); `None` when it is empty.
    pub queued_for_s: Option<f64>,
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
        let now = nanos(t);
        let now_ms = millis(t);
        let window = u32::try_from(self.window.as_millis())
            .unwrap_or(u32::MAX)
            .min(MAX_WINDOW_MS);
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
                        recent: VecDeque::with_capacity(TREND_SAMPLES),
                        peaks: VecDeque::new(),
                        send_q: s.send_q,
                        recv_q: s.recv_q,
                        state: s.state,
                        last_seen: now,
                        queued_since: None,
                        seq: self.next_seq,
                        max: 0,
                    })
                }
            };
            if h.last_seen == now && !h.recent.is_empty() {
                continue;
            }
            h.push(now_ms, s.send_q);
            // Its old samples dropped now, while its samples are in the cache (a second pass
            // over 5,000 connections found each evicted).
            h.expire(now_ms, window);
            // Bytes seen in the sample before this one (of the connection as it was: a
            // connection missing from a sample starts again).
            let queued_before =
                h.send_q > 0 && self.latest.is_some_and(|l| nanos(l) == h.last_seen);
            h.queued_since = match (s.send_q > 0, queued_before) {
                (false, _) => None,
                (true, true) => h.queued_since.or(Some(now)),
                (true, false) => Some(now),
            };
            // Only what changes between samples (the endpoints are the key).
            h.send_q = s.send_q;
            h.recv_q = s.recv_q;
            h.state = s.state;
            h.last_seen = now;
        }
        let horizon = nanos(t.saturating_sub(self.window));
        for by_remote in self.conns.values_mut() {
            by_remote.retain(|_, h| {
                // Those in this sample were expired as they were pushed.
                if h.last_seen != now {
                    h.expire(now_ms, window);
                }
                h.last_seen >= horizon
            });
        }
        self.conns.retain(|_, m| !m.is_empty());
        self.latest = Some(t);
    }

    /// Connections present in the latest sample, largest Send-Q first.
    #[cfg(test)]
    pub(crate) fn rows(&self) -> Vec<SocketRow> {
        let mut rows = Vec::new();
        self.rows_into(&mut rows);
        rows
    }

    /// [`Self::rows`] into `out` (emptied first), using its room.
    pub(crate) fn rows_into(&self, out: &mut Vec<SocketRow>) {
        out.clear();
        let Some(latest) = self.latest else {
            return;
        };
        // Sort references with the keys computed once (thousands of connections on a big
        // instance, rebuilt every second), then build the rows in order.
        let latest = nanos(latest);
        let mut live: Vec<(&Endpoint, &Endpoint, &ConnHistory, u64)> = self
            .conns
            .iter()
            .flat_map(|(local, m)| m.iter().map(move |(remote, h)| (local, remote, h)))
            .filter(|(_, _, h)| h.last_seen == latest)
            .map(|(local, remote, h)| (local, remote, h, h.max()))
            .collect();
        live.sort_unstable_by(|(_, _, a, amax), (_, _, b, bmax)| {
            b.send_q
                .cmp(&a.send_q)
                .then(bmax.cmp(amax))
                .then(a.seq.cmp(&b.seq))
        });
        out.reserve_exact(live.len());
        out.extend(live.into_iter().map(|(local, remote, h, max)| {
            SocketRow {
                local: local.clone(),
                remote: remote.clone(),
                state: h.state,
                send_q: h.send_q,
                recv_q: h.recv_q,
                max_send_q: max,
                // A connection that never queued anything in the window draws a blank
                // sparkline: no samples needed (most of thousands of connections).
                trend: if max == 0 {
                    Vec::new()
                } else {
                    h.recent.iter().map(|&(_, q)| u64::from(q)).collect()
                },
                queued_for_s: h
                    .queued_since
                    .map(|q| latest.saturating_sub(q) as f64 / 1e9),
                sessid: None,
                user: None,
            }
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn socket(remote_port: u16, send_q: u64) -> Socket {
        Socket {
            proto: "tcp".into(),
            recv_q: 0,
            send_q,
            local: Endpoint::new("10.0.0.1", "9088"),
            remote: Endpoint::new("10.0.0.2", &remote_port.to_string()),
            state: Some(TcpState::Established),
            process: None,
        }
    }

    /// What the rows must say, from every sample kept: the window's maximum and the last
    /// TREND_SAMPLES samples in the window.
    fn naive(samples: &[(Duration, u64)], latest: Duration, window: Duration) -> (u64, Vec<u64>) {
        let horizon = latest.saturating_sub(window);
        let inside: Vec<u64> = samples
            .iter()
            .filter(|(t, _)| *t >= horizon)
            .map(|(_, q)| *q)
            .collect();
        let max = inside.iter().copied().max().unwrap_or(0);
        let trend = if max == 0 {
            Vec::new()
        } else {
            inside[inside.len().saturating_sub(TREND_SAMPLES)..].to_vec()
        };
        (max, trend)
    }

    proptest! {
        /// The sliding-window maximum and the bounded trend say what keeping every sample
        /// would, for any queue sizes and any gaps between samples.
        #[test]
        fn rows_match_every_sample_kept(
            steps in proptest::collection::vec((1u64..5_000, 0u64..4), 1..200),
        ) {
            let window = Duration::from_secs(60);
            let mut h = SocketHistory::new(window);
            let mut t = Duration::ZERO;
            let mut kept = Vec::new();
            for (gap_ms, q) in steps {
                t += Duration::from_millis(gap_ms * 10);
                // Few distinct values, so equal queues (ties) are common.
                let q = q * 1000;
                h.observe([&socket(40000, q)], t, &[]);
                kept.push((t, q));
                let rows = h.rows();
                prop_assert_eq!(rows.len(), 1);
                let (max, trend) = naive(&kept, t, window);
                prop_assert_eq!(rows[0].max_send_q, max);
                prop_assert_eq!(&rows[0].trend, &trend);
            }
        }
    }

    /// Bytes in a Send-Q are dated from the first of the samples in a row that saw them: a
    /// reply in flight shows in one sample (0 s), a client that does not read holds them
    /// sample after sample; a connection missing from a sample starts again.
    #[test]
    fn a_send_q_is_dated_from_the_first_sample_in_a_row_that_held_bytes() {
        let mut h = SocketHistory::new(Duration::from_secs(60));
        let at = Duration::from_secs;
        let queued = |h: &SocketHistory| h.rows().first().and_then(|r| r.queued_for_s);
        h.observe([&socket(40000, 0)], at(1), &[]);
        assert_eq!(queued(&h), None);
        h.observe([&socket(40000, 300)], at(2), &[]);
        assert_eq!(queued(&h), Some(0.0));
        h.observe([&socket(40000, 0)], at(3), &[]);
        assert_eq!(queued(&h), None);
        for s in 4..=7 {
            h.observe([&socket(40000, 900)], at(s), &[]);
        }
        assert_eq!(queued(&h), Some(3.0));
        h.observe([&socket(40001, 0)], at(8), &[]);
        h.observe([&socket(40000, 900)], at(9), &[]);
        assert_eq!(queued(&h), Some(0.0));
    }

    #[test]
    fn a_connection_keeps_a_sparklines_worth_of_samples_not_the_window() {
        let mut h = SocketHistory::new(Duration::from_secs(60));
        for i in 0..600u64 {
            // Rising then falling: the worst case for the peaks kept is a falling queue.
            let q = if i < 300 { i } else { 600 - i };
            h.observe([&socket(40000, q)], Duration::from_secs(i), &[]);
        }
        let conn = h.conns.values().flat_map(|m| m.values()).next();
        let conn = conn.expect("the connection is kept");
        assert_eq!(conn.recent.len(), TREND_SAMPLES);
        // A falling queue keeps every sample of the window as a possible maximum: 61 at most.
        assert!(conn.peaks.len() <= 61, "{} peaks", conn.peaks.len());
        // The window holds seconds 539..=599; the queue was 61 at 539.
        assert_eq!(h.rows()[0].max_send_q, 61);
    }

    /// A sample is 8 bytes; its time wraps every 49 days of watching, and the window still
    /// holds what it should across the wrap.
    #[test]
    fn the_window_holds_across_the_wrap_of_a_samples_time() {
        assert_eq!(std::mem::size_of::<Sample>(), 8);
        let mut h = SocketHistory::new(Duration::from_secs(60));
        let t0 = Duration::from_millis((1u64 << 32) - 30_000);
        h.observe([&socket(40000, 5_000)], t0, &[]);
        for i in 1..=59u64 {
            h.observe([&socket(40000, 0)], t0 + Duration::from_secs(i), &[]);
        }
        // 29 s past the wrap, the 5,000 bytes of 59 s before are still in the window.
        assert_eq!(h.rows()[0].max_send_q, 5_000);
        assert_eq!(h.rows()[0].trend.len(), TREND_SAMPLES);
        h.observe([&socket(40000, 0)], t0 + Duration::from_secs(61), &[]);
        assert_eq!(h.rows()[0].max_send_q, 0);
        // A queue past what 32 bits hold (never seen: the kernel's is an int) reads as the
        // most they hold, not as a wrapped small number.
        h.observe(
            [&socket(40000, u64::MAX)],
            t0 + Duration::from_secs(62),
            &[],
        );
        assert_eq!(h.rows()[0].max_send_q, u64::from(u32::MAX));
    }

    #[test]
    fn a_quiet_connection_holds_one_peak_and_draws_no_sparkline() {
        let mut h = SocketHistory::new(Duration::from_secs(60));
        for i in 0..120u64 {
            h.observe([&socket(40000, 0)], Duration::from_secs(i), &[]);
        }
        let conn = h.conns.values().flat_map(|m| m.values()).next();
        assert_eq!(conn.map(|c| c.peaks.len()), Some(1));
        let rows = h.rows();
        assert_eq!(rows[0].max_send_q, 0);
        assert!(rows[0].trend.is_empty());
    }
}
