//! Sessions joined to their client connections (`onstat -g ntt`'s `host|port` = a socket's
//! remote end).

use crate::parsers::onstat_g_ntt::OnstatGNtt;
use crate::parsers::Parsed;
use crate::store::sockets::{plain_host, JoinKept, RowsKept, SocketHistory, SocketRow, NONE};
use rustc_hash::FxHashMap;

/// True for a host printed as an IP address (so it can be compared with a socket table's).
fn is_ip(host: &str) -> bool {
    host.parse::<std::net::IpAddr>().is_ok()
}

/// Joins sessions to their client connections: the `host|port` of a session's `onstat -g ntt`
/// row is the remote end of its socket. Fills each matched row's `sessid` and returns, per
/// session, the index of its row. A host printed as a name (not an address) cannot be compared
/// with the socket table's addresses; it is matched by its port when only one connection has
/// that remote port.
pub(crate) fn join_sessions(
    rows: &mut [SocketRow],
    ntt: &Parsed,
    history: &SocketHistory,
    kept: &mut RowsKept,
) -> FxHashMap<crate::ids::Sid, usize> {
    let Some(read) = ntt.get::<OnstatGNtt>() else {
        return FxHashMap::default();
    };
    // The history keeps its connections indexed by remote end and by remote port between
    // samples; the connections each session found there are kept while neither the read nor
    // the indexes change, and `kept` says which row each connection is now.
    let mut join = std::mem::take(&mut kept.join);
    let same_read = join.ntt.as_ref().is_some_and(|n| Parsed::ptr_eq(n, ntt));
    if !same_read || join.joined_as != history.joined_as() {
        find_connections(&mut join, read, history);
        join.ntt = Some(Parsed::clone(ntt));
        join.joined_as = history.joined_as();
    }
    let matches = join.sessions.iter().filter_map(|&(sid, from, to, port)| {
        let by_remote = join
            .conns
            .get(from as usize..to as usize)
            .unwrap_or_default();
        let by_port = || {
            if port == NONE {
                None
            } else {
                kept.row_of(port)
            }
        };
        kept.last_row_of(by_remote)
            .or_else(by_port)
            .map(|i| (sid, i))
    });
    let of_session = name_sessions(rows, matches, join.sessions.len());
    kept.join = join;
    of_session
}

/// Per session with a client address in `read`, the connections of `history` it may be: those
/// with its remote end, and the one with its remote port when its host is a name.
fn find_connections(join: &mut JoinKept, read: &OnstatGNtt, history: &SocketHistory) {
    join.sessions.clear();
    join.conns.clear();
    for t in &read.threads {
        let Some(c) = &t.client else { continue };
        if t.sid.0 == 0 {
            continue;
        }
        let host = plain_host(&c.host);
        let from = u32::try_from(join.conns.len()).unwrap_or(NONE);
        history.remote_conns(host, c.port.as_str(), &mut join.conns);
        let to = u32::try_from(join.conns.len()).unwrap_or(NONE);
        let port = if is_ip(host) {
            NONE
        } else {
            history.port_conn(c.port.as_str()).unwrap_or(NONE)
        };
        join.sessions.push((t.sid, from, to, port));
    }
}

/// Names each matched row's session; per session, the index of its row (the later match of a
/// session named twice).
fn name_sessions(
    rows: &mut [SocketRow],
    matches: impl IntoIterator<Item = (crate::ids::Sid, usize)>,
    most: usize,
) -> FxHashMap<crate::ids::Sid, usize> {
    // Sized once: grown from empty, thousands of sessions were hashed again at each doubling.
    let mut out = FxHashMap::with_capacity_and_hasher(most, Default::default());
    for (sid, i) in matches {
        if let Some(r) = rows.get_mut(i) {
            r.sessid = Some(sid);
        }
        out.insert(sid, i);
    }
    out
}

/// The join as it was written first, over the rows alone (maps of them built each time): what
/// [`join_sessions`] must answer.
#[cfg(test)]
pub(crate) fn join_sessions_whole(
    rows: &mut [SocketRow],
    ntt: &crate::parsers::onstat_g_ntt::OnstatGNtt,
) -> FxHashMap<crate::ids::Sid, usize> {
    let mut by_endpoint: FxHashMap<(&str, &str), usize> = FxHashMap::default();
    // Remote port → the one row with it, or None when several rows share it.
    let mut by_port: FxHashMap<&str, Option<usize>> = FxHashMap::default();
    for (i, r) in rows.iter().enumerate() {
        by_endpoint.insert((plain_host(&r.remote.host), r.remote.port.as_str()), i);
        by_port
            .entry(r.remote.port.as_str())
            .and_modify(|e| *e = None)
            .or_insert(Some(i));
    }
    let mut matches: Vec<(crate::ids::Sid, usize)> = Vec::new();
    for t in &ntt.threads {
        let Some(c) = &t.client else { continue };
        if t.sid.0 == 0 {
            continue;
        }
        let host = plain_host(&c.host);
        let hit = by_endpoint
            .get(&(host, c.port.as_str()))
            .copied()
            .or_else(|| {
                if is_ip(host) {
                    None
                } else {
                    by_port.get(c.port.as_str()).copied().flatten()
                }
            });
        if let Some(i) = hit {
            matches.push((t.sid, i));
        }
    }
    let most = matches.len();
    name_sessions(rows, matches, most)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::Sid;
    use crate::parsers::onstat_g_ntt::{ClientAddr, NetThread, OnstatGNtt};
    use crate::parsers::sockets::{Endpoint, Socket, TcpState};
    use crate::store::sockets::RowsTag;
    use proptest::prelude::*;
    use std::time::Duration;

    /// Socket table hosts: addresses, one IPv4-mapped as `/proc/net/tcp6` may print it, a name
    /// (netstat without -n).
    const HOSTS: [&str; 4] = ["10.0.0.2", "::ffff:10.0.0.3", "10.0.0.3", "appsrv"];
    /// `onstat -g ntt` hosts: addresses and names.
    const NTT_HOSTS: [&str; 5] = ["10.0.0.2", "10.0.0.3", "::ffff:10.0.0.2", "appsrv", "web1"];

    fn socket(local: u16, host: usize, port: u16) -> Socket {
        Socket {
            proto: "tcp".into(),
            recv_q: 0,
            send_q: u64::from(port % 3) * 100,
            local: Endpoint {
                host: "10.0.0.1".into(),
                port: local.to_string().into(),
            },
            remote: Endpoint {
                host: HOSTS[host].into(),
                port: port.to_string().into(),
            },
            state: Some(TcpState::Established),
            process: None,
        }
    }

    fn ntt(threads: &[(u64, usize, u16)]) -> OnstatGNtt {
        OnstatGNtt {
            threads: threads
                .iter()
                .map(|&(sid, host, port)| NetThread {
                    netscb: Default::default(),
                    thread: "sqlexec".into(),
                    sid: Sid(sid),
                    open: None,
                    read: None,
                    write: None,
                    date: None,
                    client: Some(ClientAddr {
                        host: NTT_HOSTS[host].into(),
                        port: port.to_string().into(),
                        proto: "soctcp".into(),
                    }),
                })
                .collect(),
            ..Default::default()
        }
    }

    proptest! {
        /// The join through the history's indexes answers what the join over the rows alone
        /// does: the last row of an endpoint, a host name matched by a port only one row has,
        /// `::ffff:` taken off, sid 0 skipped, over samples with connections coming and going,
        /// the same sockets again (the rows move, the indexes stay) and the same `onstat -g ntt`
        /// read kept over several samples (the connections found for it are kept).
        #[test]
        fn the_kept_join_answers_as_the_whole_one(
            samples in proptest::collection::vec(
                (
                    proptest::collection::vec((9088u16..9090, 0usize..4, 40000u16..40006), 0..12),
                    proptest::collection::vec((0u64..8, 0usize..5, 40000u16..40007), 0..12),
                    any::<bool>(),
                    any::<bool>(),
                ),
                1..16,
            ),
        ) {
            let mut h = SocketHistory::new(Duration::from_secs(60));
            let mut kept = RowsKept::default();
            let mut rows = Vec::new();
            let mut tag = RowsTag(0);
            let mut last: Option<(Vec<Socket>, Parsed)> = None;
            for (t, (sockets, threads, same_sockets, same_read)) in samples.iter().enumerate() {
                let mut sockets: Vec<Socket> =
                    sockets.iter().map(|&(l, h, p)| socket(l, h, p)).collect();
                let mut read: Parsed = std::sync::Arc::new(ntt(threads));
                if let Some((s, r)) = &last {
                    if *same_sockets {
                        // The same connections, one queue grown: it moves in the rows.
                        sockets = s.clone();
                        if let Some(first) = sockets.last_mut() {
                            first.send_q += 1_000;
                        }
                    }
                    if *same_read {
                        read = Parsed::clone(r);
                    }
                }
                h.observe(&sockets, Duration::from_secs(t as u64 + 1), &[]);
                tag = h.rows_kept(&mut kept, &mut rows, tag);
                let mut whole = rows.clone();
                let plain = read.get::<OnstatGNtt>().expect("a read of onstat -g ntt");
                let want = join_sessions_whole(&mut whole, plain);
                let got = join_sessions(&mut rows, &read, &h, &mut kept);
                prop_assert_eq!(&got, &want);
                prop_assert_eq!(&rows, &whole);
                last = Some((sockets, read));
            }
        }
    }
}
