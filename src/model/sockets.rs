//! Sessions joined to their client connections (`onstat -g ntt`'s `host|port` = a socket's
//! remote end).

use crate::store::sockets::SocketRow;
use rustc_hash::FxHashMap;

/// True for a host printed as an IP address (so it can be compared with a socket table's).
fn is_ip(host: &str) -> bool {
    host.parse::<std::net::IpAddr>().is_ok()
}

/// A socket table's host with the IPv4-mapped prefix of `/proc/net/tcp6` taken off, so
/// `::ffff:10.1.2.3` compares equal to `onstat -g ntt`'s `10.1.2.3`.
fn plain_host(host: &str) -> &str {
    host.strip_prefix("::ffff:").unwrap_or(host)
}

/// Joins sessions to their client connections: the `host|port` of a session's `onstat -g ntt`
/// row is the remote end of its socket. Fills each matched row's `sessid` and returns, per
/// session, the index of its row. A host printed as a name (not an address) cannot be compared
/// with the socket table's addresses; it is matched by its port when only one connection has
/// that remote port.
pub(crate) fn join_sessions(
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
    let mut out = FxHashMap::default();
    for (sid, i) in matches {
        if let Some(r) = rows.get_mut(i) {
            r.sessid = Some(sid);
        }
        out.insert(sid, i);
    }
    out
}
