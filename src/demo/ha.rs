//! The demo's replication, in real formats: the demo server is the primary (`(Prim)` in its
//! banner) of one RSS secondary, `ol_dr1`, and answers `onstat -g cluster` and
//! `onstat -g rss verbose` as a 12.10 primary prints them.
//!
//! The primary writes `LOG_RATE` log pages a second. Calm, the secondary acknowledges within a
//! few pages. In the `ReplicaLag` phase it slows down (acknowledges `SLOW_ACK_RATE` pages a
//! second while the primary sends everything), so the pages sent and not acknowledged grow until
//! they pass the flow-control limit (`FLOW_CONTROL_ON`): log transmission is then `Blocked`, the
//! secondary acknowledges nothing more, and what is not sent piles up as the backlog. In the
//! calm after the phase it catches up (`CATCH_UP_RATE`) within seconds.

use super::moment::World;
use super::onstat::{banner, CLOCK_AT_ZERO};
use super::timeline::{self, Incident};
use crate::parsers::ha::LogPos;
use std::fmt::Write as _;

/// The RSS secondary's name.
pub(crate) const RSS_NAME: &str = "ol_dr1";
/// The primary's name (`Primary Server:`).
const PRIMARY: &str = "ol_demo";
/// Log pages the primary writes per second.
const LOG_RATE: u64 = 40;
/// Pages in each logical log.
const LOG_PAGES: u64 = 100_000;
/// Log pages written before the demo's time 0: log 1871 is current from t=145 to t=2645.
const PAGES_AT_ZERO: u64 = 186_994_200;
/// In the lag phase the secondary acknowledges this many pages a second until it stops.
const SLOW_ACK_RATE: u64 = 10;
/// Pages sent and not acknowledged past which transmission blocks.
const FLOW_CONTROL_ON: u64 = 384;
/// After the phase it catches up this fast (sending and acknowledging).
const CATCH_UP_RATE: u64 = 300;

/// Log pages written by `t` (the primary's position as one number).
fn written(t: u64) -> u64 {
    PAGES_AT_ZERO + LOG_RATE * t
}

/// A page count as a log position (`log id, page`).
fn pos(total: u64) -> LogPos {
    LogPos {
        log: (total / LOG_PAGES + 1) as u32,
        page: total % LOG_PAGES,
    }
}

/// Where the replication stands at `t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RssState {
    /// Pages the primary has written.
    pub(crate) current: u64,
    /// Pages sent to the secondary.
    pub(crate) sent: u64,
    /// Pages the secondary acknowledged.
    pub(crate) acked: u64,
    pub(crate) blocked: bool,
    /// When the secondary last acknowledged (demo seconds).
    pub(crate) last_ack: u64,
}

/// The state at `t` seconds.
pub(crate) fn rss_state(t: u64) -> RssState {
    let now = timeline::now(t);
    let calm = |t: u64| RssState {
        current: written(t),
        sent: written(t),
        // A flush or two behind, as an asynchronous secondary is.
        acked: written(t) - 3 - t % 5,
        blocked: false,
        last_ack: t,
    };
    let Some(phase) = timeline::first(Incident::ReplicaLag) else {
        return calm(t);
    };
    let start = now.cycle * timeline::CYCLE + phase.start;
    // The moment pending acknowledgements pass the limit: sent grows by LOG_RATE, acked by
    // SLOW_ACK_RATE, from 5 apart.
    let block_after = (FLOW_CONTROL_ON - 5) / (LOG_RATE - SLOW_ACK_RATE) + 1;
    let acked_at_block = written(start) - 5 + SLOW_ACK_RATE * block_after;
    let sent_at_block = written(start + block_after);
    match now.incident() {
        Incident::ReplicaLag => {
            let into = now.into;
            if into < block_after {
                RssState {
                    current: written(t),
                    sent: written(t),
                    acked: written(start) - 5 + SLOW_ACK_RATE * into,
                    blocked: false,
                    last_ack: t,
                }
            } else {
                RssState {
                    current: written(t),
                    sent: sent_at_block,
                    acked: acked_at_block,
                    blocked: true,
                    last_ack: start + block_after,
                }
            }
        }
        _ if now.phase.start == phase.end => {
            // The calm right after: catching up.
            let x = now.into;
            let current = written(t);
            let sent = current.min(sent_at_block + CATCH_UP_RATE * x);
            let caught = calm(t);
            let acked = caught.acked.min(acked_at_block + CATCH_UP_RATE * x);
            RssState {
                current,
                sent,
                acked,
                blocked: false,
                last_ack: t,
            }
        }
        _ => calm(t),
    }
}

/// `2026-11-22.13:41:47`: how `onstat -g rss verbose` prints a time.
fn stamp(t: u64) -> String {
    let at = time::OffsetDateTime::from_unix_timestamp(CLOCK_AT_ZERO + t as i64)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let fmt = time::macros::format_description!("[year]-[month]-[day].[hour]:[minute]:[second]");
    at.format(&fmt).unwrap_or_default()
}

fn index_page_logging(o: &mut String) {
    o.push_str("Index page logging status: Enabled\n");
    o.push_str("Index page logging was enabled at: 2024/02/28 06:12:40\n");
}

/// `onstat -g cluster`: the primary, its current log page, and the secondary's acknowledged
/// position (the 12.10 table, without the `Applied Log` column).
pub(crate) fn onstat_g_cluster(w: &World<'_>) -> String {
    let s = rss_state(w.now.t);
    let cur = pos(s.current);
    let acked = pos(s.acked);
    let mut o = banner(w);
    let _ = writeln!(o, "Primary Server:{PRIMARY}");
    let _ = writeln!(o, "Current Log Page:{},{}", cur.log, cur.page);
    index_page_logging(&mut o);
    o.push_str("\n\n");
    o.push_str("Server  ACKed Log    Supports     Status\n");
    o.push_str("        (log, page)  Updates\n");
    let _ = writeln!(
        o,
        "{RSS_NAME:<7} {:<12} {:<12} ASYNC(RSS),Connected,Active",
        format!("{},{}", acked.log, acked.page),
        "No"
    );
    o
}

/// `onstat -g rss verbose` on the primary.
pub(crate) fn onstat_g_rss_verbose(w: &World<'_>) -> String {
    let t = w.now.t;
    let s = rss_state(t);
    let next = pos(s.sent + 1);
    let acked = pos(s.acked);
    let mut o = banner(w);
    o.push_str("Local server type: Primary\n");
    index_page_logging(&mut o);
    o.push_str("Number of RSS servers: 1\n\nRSS Server information:\n\n");
    o.push_str("RSS Server control block: 0x4b8e1028\n");
    let _ = writeln!(o, "RSS server name: {RSS_NAME}");
    o.push_str("RSS server status: Active\n");
    o.push_str("RSS connection status: Connected\n");
    let _ = writeln!(
        o,
        "Log transmission status: {}",
        if s.blocked { "Blocked" } else { "Active" }
    );
    let _ = writeln!(
        o,
        "Next log page to send(log id,page): {},{}",
        next.log, next.page
    );
    let _ = writeln!(
        o,
        "Last log page acked(log id,page): {},{}",
        acked.log, acked.page
    );
    let _ = writeln!(o, "Time of Last Acknowledgement: {}", stamp(s.last_ack));
    let _ = writeln!(o, "Pending Log Pages to be ACKed: {}", s.sent - s.acked);
    let _ = writeln!(o, "Approximate Log Page Backlog:{}", s.current - s.sent);
    // Log buffers of 16 pages.
    let _ = writeln!(
        o,
        "Sequence number of next buffer to send: {}",
        s.sent.saturating_sub(PAGES_AT_ZERO) / 16 + 1
    );
    let _ = writeln!(
        o,
        "Sequence number of last buffer acked: {}",
        // Near time 0 the secondary is a few pages behind the buffers counted from there.
        (s.acked + 16).saturating_sub(PAGES_AT_ZERO) / 16
    );
    o.push_str("Supports Proxy Writes: N\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn falls_behind_blocks_and_catches_up() {
        let p = timeline::first(Incident::ReplicaLag).expect("phase");
        let calm = rss_state(p.start - 1);
        assert!(!calm.blocked && calm.current - calm.acked < 10);
        let mid = rss_state(p.middle());
        assert!(mid.blocked, "{mid:?}");
        assert!(mid.sent - mid.acked > FLOW_CONTROL_ON, "{mid:?}");
        assert!(mid.current - mid.acked > 1_000, "{mid:?}");
        // Caught up before the cycle ends.
        let after = rss_state(timeline::CYCLE - 1);
        assert!(
            !after.blocked && after.current - after.acked < 10,
            "{after:?}"
        );
        // Positions never go back.
        let mut prev = rss_state(0);
        for t in 1..2 * timeline::CYCLE {
            let s = rss_state(t);
            assert!(s.current >= prev.current && s.sent >= prev.sent && s.acked >= prev.acked);
            assert!(s.acked <= s.sent && s.sent <= s.current, "{t}: {s:?}");
            prev = s;
        }
        // One log all through the first cycle's incident.
        assert_eq!(pos(written(p.start)).log, pos(written(timeline::CYCLE)).log);
    }
}
