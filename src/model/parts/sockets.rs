//! The sockets part: the client connections on the listener ports with their queues, each
//! joined to its session (`onstat -g ntt`) and that session's user (`onstat -u`).

use crate::ids::Sid;
use crate::source::Source;
use crate::store::sockets::{RowsKept, RowsTag, SocketRow};
use crate::store::Store;
use compact_str::CompactString;

/// The rows, and the row of each session's client connection.
pub(crate) struct Sockets {
    pub(crate) rows: Vec<SocketRow>,
    /// Which build the rows are (handed back with them by `Snapshot::recycle`).
    pub(crate) tag: RowsTag,
    pub(crate) of_session: rustc_hash::FxHashMap<Sid, usize>,
}

/// The rows joined to their sessions; their users are named by [`name_users`] (after the waits
/// have read the rows, as they always did).
/// `room` holds the rows of a snapshot let go (`tag`: which build they are), or is empty: the
/// rows of the connections that did not change since the build `kept` describes are kept.
pub(crate) fn build(
    store: &Store,
    room: Vec<SocketRow>,
    tag: RowsTag,
    kept: &mut RowsKept,
) -> Sockets {
    let mut rows = room;
    let tag = store.sockets.rows_kept(kept, &mut rows, tag);
    let of_session = match store.parsed(&Source::OnstatGNtt) {
        Some(n) => crate::model::sockets::join_sessions(&mut rows, n, &store.sockets, kept),
        None => Default::default(),
    };
    Sockets {
        rows,
        tag,
        of_session,
    }
}

/// The user of each socket's session.
pub(crate) fn name_users(store: &Store, sockets: &mut [SocketRow]) {
    if let Some(u) = store.get(crate::source::key::OnstatU) {
        let users: rustc_hash::FxHashMap<Sid, &CompactString> =
            u.threads.iter().map(|t| (t.sessid, &t.user)).collect();
        for r in sockets.iter_mut() {
            r.user = r.sessid.and_then(|s| users.get(&s)).map(|u| (*u).clone());
        }
    }
}

/// What it reads (the socket tables feed the Send-Q history).
#[allow(dead_code)]
pub(crate) const INPUTS: &[Source] = &[
    Source::ProcNetTcp,
    Source::ProcNetTcp6,
    Source::Netstat,
    Source::OnstatGNtt,
    Source::OnstatU,
];
