//! The sessions part: each session of `onstat -u` with its client, statement, memory and CPU.

use crate::model::sessions::BySid;
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

#[cfg(test)]
mod kept {
    //! The sessions' rows built from what was kept (the maps of slow sources, the rows and
    //! statements of the second before) are the rows built from nothing.
    use crate::collect::sample::Update;
    use crate::demo::DemoInstance;
    use crate::model::parts::Parts;
    use crate::model::snapshot::{self, Snapshot};
    use crate::source::Source;
    use crate::store::{Store, StoreSettings};
    use std::sync::Arc;
    use std::time::Duration;

    fn new_store() -> Store {
        Store::new(StoreSettings {
            ports: vec![crate::demo::LISTENER_PORT],
            ..Default::default()
        })
    }

    /// Feeds `store` second `t`: each source due at its period, then the statements of a
    /// turn of the sessions (a different few each second, as the collectors read them).
    fn feed(store: &mut Store, demo: &DemoInstance, sources: &[Source], t: u64) {
        let at = Duration::from_secs(t);
        let due = sources
            .iter()
            .filter(|s| t % s.period().as_secs().max(1) == 0)
            .copied();
        let turn: Vec<Source> = demo
            .sids_at(t)
            .iter()
            .skip((t as usize * 7) % 40)
            .step_by(5)
            .take(12)
            .map(|&sid| Source::OnstatGSql(crate::ids::Sid(sid)))
            .collect();
        for s in due.chain(turn) {
            if let Some(u) = Update::from_demo(demo, s, at) {
                store.apply(u);
            }
        }
    }

    /// Walks `demo` from `from` for `seconds`, with seeks on the way (at a step, to a time of
    /// a demo: a new store, the parts and rows kept, as a replay's seek, or another recording
    /// opened): each second's rows from the kept parts equal the rows built whole. Returns how
    /// many of the kept builds reused the client hosts and how many rows kept their statement's
    /// text.
    fn walk(
        demo: &DemoInstance,
        from: u64,
        seconds: u64,
        seeks: &[(u64, u64, &DemoInstance)],
    ) -> (u64, usize) {
        let mut sources = Source::candidates_for_tests(None);
        sources.retain(|s| demo.respond(&s.request(), Duration::from_secs(1)).is_ok());
        let mut parts = Parts::default();
        let mut store = new_store();
        let mut t = from;
        let mut demo = demo;
        let mut kept_texts = 0;
        let mut kept_maps = 0;
        let mut hosts_before = None;
        for step in 0..seconds {
            if let Some(&(_, to, other)) = seeks.iter().find(|(at, _, _)| *at == step) {
                store = new_store();
                t = to;
                demo = other;
            }
            feed(&mut store, demo, &sources, t);
            let now = Duration::from_secs(t);
            let before: Vec<_> = parts
                .spare
                .sessions
                .rows
                .iter()
                .map(|r| (r.sessid, r.sql_read))
                .collect();
            let kept = snapshot::build_from(&store, now, None, &[], None, &mut parts);
            let whole = snapshot::build(&store, now, None, &[]);
            assert_eq!(kept.sessions.len(), whole.sessions.len(), "{t}s");
            for (k, w) in kept.sessions.iter().zip(&whole.sessions) {
                assert_eq!(k, w, "{t}s: session {}", k.sessid);
            }
            kept_texts += kept
                .sessions
                .iter()
                .filter(|r| r.sql.is_some() && before.contains(&(r.sessid, r.sql_read)))
                .count();
            let hosts = Arc::as_ptr(&parts.session_hosts.value);
            kept_maps += u64::from(hosts_before == Some(hosts));
            hosts_before = Some(hosts);
            Snapshot::recycle(Arc::new(kept), &mut parts);
            t += 1;
        }
        (kept_maps, kept_texts)
    }

    /// An `onstat -g sql` of `sid` at `t` whose statement is `sql`.
    fn statement(sid: crate::ids::Sid, sql: &str, t: u64) -> Update {
        let out = format!(
            "IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 12 days 03:04:05 \
             -- 4194304 Kbytes\n\n\
             Sess       SQL            Current            Iso Lock       SQL  ISAM F.E.\n\
             Id         Stmt type      Database           Lvl Mode       ERR  ERR  Vers  Explain\n\
             {:<10} SELECT         stores             CR  Wait 30    0    0    9.24  Off\n\n\
             Current statement name : slctcur\n\n\
             Current SQL statement (5) :\n  {sql}\n\n\
             Last parsed SQL statement :\n  {sql}\n",
            sid.0
        );
        let source = Source::OnstatGSql(sid);
        Update {
            source,
            t: Duration::from_secs(t),
            took: Duration::ZERO,
            result: Ok(source.parse_str(&out).expect("parses")),
            how: Default::default(),
        }
    }

    /// Rows of another store handed back late (a snapshot the screen held across a seek or
    /// another recording opened) hold reads that no read of this store is: two stores fed the
    /// same sources in the same order at the same moment, the statement of one session of the
    /// same length and another text in each; the rows of the first, handed back as room to a
    /// build from the second, show the second's text.
    #[test]
    fn rows_of_another_store_keep_no_text() {
        let demo = DemoInstance::new(1).with_sessions(40);
        let t = 300;
        let u = Update::from_demo(&demo, Source::OnstatU, Duration::from_secs(t)).expect("-u");
        let sid = demo.sids_at(t)[0];
        let sid = crate::ids::Sid(sid);
        let fed = |sql: &str| {
            let mut store = new_store();
            store.apply(u.clone());
            store.apply(statement(sid, sql, t));
            store
        };
        let a = fed("select * from customer where customer_num = 101");
        let b = fed("select * from customer where customer_num = 102");
        let now = Duration::from_secs(t);
        let mut parts = Parts::default();
        // The screen holds the snapshot of `a` while the next ones are built from `b`.
        let held = Arc::new(snapshot::build_from(&a, now, None, &[], None, &mut parts));
        let shown = snapshot::build_from(&b, now, None, &[], None, &mut parts);
        Snapshot::recycle(held, &mut parts);
        assert!(parts.spare_room()[1] > 0, "the rows of `a` came back");
        let next = snapshot::build_from(&b, now, None, &[], None, &mut parts);
        let whole = snapshot::build(&b, now, None, &[]);
        assert_eq!(
            next.statement_of(sid),
            Some("select * from customer where customer_num = 102")
        );
        assert_eq!(next.sessions, whole.sessions);
        drop(shown);
    }

    /// Every seed the tests use, tidy and messy, with short-lived sessions coming and going
    /// (their sids used again), seeks back and forth, and another instance's recording at the
    /// same moment (the same sids read at the same times, other statements).
    #[test]
    fn rows_from_kept_parts_are_the_rows_built_whole() {
        for seed in 1..=3 {
            for messy in [false, true] {
                let demo = DemoInstance::new(seed).with_sessions(200);
                let demo = if messy { demo.messy() } else { demo };
                let other = DemoInstance::new(seed + 10).with_sessions(200);
                let other = if messy { other.messy() } else { other };
                let seeks = [(50, 60, &demo), (90, 500, &demo), (120, 530, &other)];
                let (reused, kept_texts) = walk(&demo, 200, 150, &seeks);
                // The check has teeth: the slow maps were kept, and texts kept unread.
                assert!(reused > 100, "seed {seed} messy {messy}: {reused} reused");
                assert!(
                    kept_texts > 100,
                    "seed {seed} messy {messy}: {kept_texts} texts"
                );
            }
        }
    }
}
