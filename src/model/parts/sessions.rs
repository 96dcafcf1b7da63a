//! The sessions part: each session of `onstat -u` with its client, statement, memory and CPU.

use crate::ids::BySid;
use crate::model::waiters::WaiterRow;
use crate::parsers::onstat_u::OnstatU;
use crate::source::Source;
use crate::store::{Stamp, Store};
use compact_str::CompactString;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;

/// What the client hosts are read from (every 10 s).
pub(crate) const HOST_INPUTS: &[Source] = &[Source::OnstatGNtt];
/// What the sessions' memory is read from (every 30 s).
pub(crate) const MEMORY_INPUTS: &[Source] = &[Source::OnstatGSesList];

/// A map as kept by the parts, with the stamp of the sources it was built from.
pub(crate) type Kept<T> = Option<(Stamp, Arc<T>)>;

/// The room of the previous build's rows, and the maps of slow sources as kept by the parts
/// (each with the stamp of its sources: used only while the store's stamp is still that one).
#[derive(Default)]
pub(crate) struct SessionRoom {
    pub(crate) rows: Vec<crate::model::sessions::SessionRow>,
    pub(crate) hosts: Kept<BySid<CompactString>>,
    pub(crate) memory: Kept<BySid<(u64, u64)>>,
}

impl From<Vec<crate::model::sessions::SessionRow>> for SessionRoom {
    fn from(rows: Vec<crate::model::sessions::SessionRow>) -> Self {
        SessionRoom {
            rows,
            ..SessionRoom::default()
        }
    }
}

/// The map kept, when the store's sources stand where they stood when it was built; else one
/// built now.
fn kept_or<T>(kept: Kept<T>, stamp: Stamp, build: impl FnOnce() -> T) -> Arc<T> {
    match kept {
        Some((s, v)) if s == stamp => v,
        _ => Arc::new(build()),
    }
}

/// Each session's memory, total and used, from the last `onstat -g ses` (the list): empty
/// before it is read. A session it does not name has no figure (unknown, not 0).
pub(crate) fn session_memory(store: &Store) -> BySid<(u64, u64)> {
    store
        .get(crate::source::key::OnstatGSesList)
        .map(|l| {
            l.sessions
                .iter()
                .map(|r| (r.sid, (r.total_memory, r.used_memory)))
                .collect::<BySid<_>>()
                .tight()
        })
        .unwrap_or_default()
}

/// What the sessions' CPU figures cover (`None` before any `onstat -g cpu`).
pub(crate) fn session_cpu_span(store: &Store) -> Option<SessionCpuSpan> {
    if let Some((from, to)) = store.cpu.interval() {
        return Some(SessionCpuSpan {
            from_s: Some(from.as_secs_f64()),
            to_s: Some(to.as_secs_f64()),
            unknown: None,
        });
    }
    store.cpu.unknown().map(|why| SessionCpuSpan {
        from_s: None,
        to_s: None,
        unknown: Some(why.words()),
    })
}

/// The interval the sessions' CPU figures cover (two `onstat -g cpu` samples), or why they are
/// not known.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionCpuSpan {
    /// Session seconds of the two samples.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_s: Option<f64>,
    /// Why no session has a figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<&'static str>,
}

/// The client host of each session, from `onstat -g ntt`: owned, to be kept while that source
/// is not read again (most hosts fit a `CompactString` inline: no block of their own).
pub(crate) fn client_hosts(store: &Store) -> BySid<CompactString> {
    store
        .get(crate::source::key::OnstatGNtt)
        .map(|n| {
            n.threads
                .iter()
                .filter_map(|t| Some((t.sid, CompactString::new(&t.client.as_ref()?.host))))
                .collect::<BySid<_>>()
                .tight()
        })
        .unwrap_or_default()
}

/// The client program of the sessions whose `onstat -g ses <sid>` was collected, in session
/// order (the store lists them so).
fn client_programs(store: &Store) -> BySid<&str> {
    // A session's program does not change: any `onstat -g ses <sid>` read names it.
    store
        .per_session(Source::OnstatGSes)
        .filter_map(|(sid, st)| {
            let (_, parsed) = st.last_ok.as_ref()?;
            let ses = parsed.get::<crate::parsers::onstat_g_ses::OnstatGSes>()?;
            Some((sid, ses.detail.as_ref()?.program.as_deref()?))
        })
        .collect()
}

/// Each session's current statement with when it was read, where an `onstat -g sql <sid>` read
/// within [`crate::model::activity::SQL_FRESH_S`] of the moment tells it (a statement changes;
/// an older one is not said to be the session's), in session order (the store lists them so).
fn current_statements(store: &Store) -> BySid<(crate::store::Read, &str)> {
    let Some(moment) = store.moment() else {
        return Default::default();
    };
    store
        .per_session(Source::OnstatGSql)
        .filter_map(|(sid, st)| {
            // The source's state as listed: not looked up again by its key.
            let (seen, parsed) = st.last_ok.as_ref()?;
            if moment.abs_diff(*seen).as_secs_f64() > crate::model::activity::SQL_FRESH_S {
                return None;
            }
            let q = parsed.get::<crate::parsers::onstat_g_sql::OnstatGSql>()?;
            let text = q.current_sql.as_ref().or(q.last_parsed_sql.as_ref())?;
            Some((sid, (store.read(st), text.as_str())))
        })
        .collect()
}

/// The Sessions pane's rows: each session of `u` with its client, SQL, memory and CPU.
pub(crate) fn session_rows(
    store: &Store,
    u: &OnstatU,
    waiters: &[WaiterRow],
    now: Duration,
    room: SessionRoom,
) -> Vec<crate::model::sessions::SessionRow> {
    let hosts = kept_or(room.hosts, store.stamp(HOST_INPUTS), || client_hosts(store));
    let memory = kept_or(room.memory, store.stamp(MEMORY_INPUTS), || {
        session_memory(store)
    });
    let programs = client_programs(store);
    let sql = current_statements(store);
    crate::model::sessions::build(
        u,
        &crate::model::sessions::SessionInputs {
            waiters,
            tracker: &store.tracker,
            rates: &store.rates,
            cpu: &store.cpu,
            memory: &memory,
            hosts: &hosts,
            programs: &programs,
            sql: &sql,
            now,
        },
        room.rows,
    )
}
