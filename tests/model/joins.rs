//! Joins: waiter → what it waits on (condition, lock, buffer), blocker chains to the head
//! blocker, sessions → client sockets, the session screen. Real cross-referenced captures where
//! they exist (the oninit pages come from one instance; the IBM doc's -k owner is its -u thread),
//! small hand-written outputs in the real layouts where no capture shows the case.

use crate::common::fixture;
use ifxtop::collect::sample::Update;
use ifxtop::ids::Sid;
use ifxtop::model::snapshot::{self, Snapshot};
use ifxtop::model::waiters::WaitTarget;
use ifxtop::source::{Output, Source};
use ifxtop::store::{Store, StoreSettings};
use std::time::Duration;

fn apply(store: &mut Store, source: Source, t: u64, text: &str) {
    let text = &crate::common::with_u_footer(source, text);
    let exit = if matches!(
        source,
        Source::ProcNetTcp | Source::ProcNetTcp6 | Source::Systabnames | Source::OncheckPe
    ) {
        0
    } else {
        5
    };
    let result = source.parse(Output {
        exit: Some(exit),
        stdout: text.to_string(),
        stderr: String::new(),
    });
    match &result {
        Ok(p) => assert_eq!(p.unparsed(), 0, "{}: lines left unparsed", source.label()),
        Err(e) => panic!("{}: {e}", source.label()),
    }
    store.apply(Update {
        source,
        t: Duration::from_secs(t),
        took: Duration::ZERO,
        result,
        how: Default::default(),
    });
}

fn store() -> Store {
    Store::new(StoreSettings {
        ports: vec![9088],
        ..StoreSettings::default()
    })
}

fn build(store: &Store, focus: &[Sid]) -> Snapshot {
    snapshot::build(store, store.latest, Some("test"), focus)
}

#[test]
fn oninit_captures_join_thread_names_and_conditions() {
    let mut s = store();
    apply(
        &mut s,
        Source::OnstatGAth,
        0,
        &fixture("onstat-g-ath/oninit-onstat-g-ath-truncated.txt"),
    );
    apply(
        &mut s,
        Source::OnstatGCon,
        0,
        &fixture("onstat-g-con/oninit-onstat-g-con.txt"),
    );
    apply(
        &mut s,
        Source::OnstatU,
        0,
        &fixture("onstat-u/oninit-onstat-u.txt"),
    );
    let snap = build(&s, &[Sid(54), Sid(83)]);
    let w = snap
        .waiters
        .iter()
        .find(|w| w.sessid == Sid(54))
        .expect("54 waits");
    match &w.waiting_on {
        WaitTarget::Condition { name, waittime, .. } => {
            assert_eq!(name.as_deref(), Some("sm_read"));
            assert_eq!(*waittime, Some(187));
        }
        other => panic!("{other:?}"),
    }
    let s54 = &snap.session_views[0];
    assert_eq!(s54.threads.len(), 1);
    assert_eq!(s54.threads[0].tid, Some(213));
    assert_eq!(s54.threads[0].name.as_deref(), Some("sqlexec"));
    let status = s54.threads[0].status.as_deref().expect("status");
    assert!(status.contains("sm_read"), "{status}");
    // 83's rstcb 14a59cd8 is tid 357, waiting on netnorm in both captures.
    let s83 = &snap.session_views[1];
    assert_eq!(s83.threads[0].tid, Some(357));
    assert!(s83.verdict.contains("client"), "{}", s83.verdict);
    // The Sessions pane's time in state is the wait's own time (187 s by onstat -g con), not
    // the zero seconds ifxtop has watched it.
    let row = snap
        .sessions
        .iter()
        .find(|r| r.sessid == Sid(54))
        .expect("54 is a session");
    assert_eq!(row.state_words(), "idle");
    assert_eq!(row.in_state_s, Some(187.0));
}

#[test]
fn ibm_doc_lock_is_held_by_the_doc_thread() {
    // The IBM doc's onstat -k owner a4d9e68 is its onstat -u example's session 21.
    let mut s = store();
    apply(
        &mut s,
        Source::OnstatK,
        0,
        &fixture("onstat-k/ibm-kc-12.10-adref-0597.txt"),
    );
    apply(
        &mut s,
        Source::OnstatU,
        0,
        &fixture("onstat-u/ibm-kc-12.10-adref-0608.txt"),
    );
    let snap = build(&s, &[Sid(21)]);
    let v = &snap.session_views[0];
    assert!(v.locks_known);
    assert_eq!(v.locks.len(), 1, "{:?}", v.locks);
    let l = &v.locks[0];
    assert!(l.held);
    assert_eq!(l.lock_type, "HDR+S");
    assert_eq!(l.table, "partnum 100002");
    assert_eq!(l.rowid, "203");
    assert!(!l.contended);
}

const BANNER: &str =
    "IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 12 days 03:04:05 -- 4194304 Kbytes\n\n";

/// 812 holds locks; 813 and 815 wait for 812's; 814 waits for a lock 813 holds.
fn lock_chain() -> Store {
    let u = format!(
        "{BANNER}Userthreads
address          flags   sessid   user     tty      wait             tout locks nreads   nwrites
4b4ad628         --BP--- 812      appuser  -        0                0    3     120      45
4b4adc40         L-BP--- 813      appuser  -        44a1b000         0    1     10       2
4b4ae258         L--P--- 814      batch    -        44a1b2c8         0    0     5        0
4b4ae870         L--P--- 815      report   -        44a1b000         0    0     7        0
 4 active, 128 total, 12 maximum concurrent
"
    );
    let k = format!(
        "{BANNER}Locks
address          wtlist           owner            lklist           type     tblsnum  rowid    key#/bsiz
44a1a000         0                4b4ad628         0                HDR+IX   100105   0            0
44a1b000         4b4adc40         4b4ad628         44a1a000         HDR+X    100105   68           0
44a1b100         0                4b4ad628         44a1b000         HDR+X    100105   69           0
44a1b2c8         4b4ae258         4b4adc40         0                HDR+X    100106   12           0
 4 active, 20000 total, 16384 hash buckets, 0 lock table overflows
"
    );
    let tables = "\nDatabase selected.\n\n\n(expression)\n\n1048837|stores:'informix'.customer\n1048838|stores:'informix'.orders\n\n2 row(s) retrieved.\n\n\n\nDatabase closed.\n\n";
    let mut s = store();
    apply(&mut s, Source::Systabnames, 0, tables);
    apply(&mut s, Source::OnstatK, 1, &k);
    apply(&mut s, Source::OnstatU, 1, &u);
    s
}

#[test]
fn lock_waits_follow_owners_to_the_head_blocker() {
    let s = lock_chain();
    let snap = build(&s, &[Sid(814), Sid(812)]);
    let w = |sid: u64| {
        snap.waiters
            .iter()
            .find(|w| w.sessid == Sid(sid))
            .unwrap_or_else(|| panic!("{sid} waits"))
    };
    match &w(814).waiting_on {
        WaitTarget::Lock {
            lock_type,
            partnum,
            object,
            owner,
            ..
        } => {
            assert_eq!(lock_type.as_deref(), Some("HDR+X"));
            assert_eq!(*partnum, Some(0x100106));
            assert_eq!(object.as_deref(), Some("stores:'informix'.orders"));
            assert_eq!(owner.map(|o| o.to_string()).as_deref(), Some("4b4adc40"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(w(814).blockers, vec![Sid(813), Sid(812)]);
    assert_eq!(w(814).head_blocker, Some(Sid(812)));
    assert_eq!(
        w(814).verdict,
        "waiting for a lock on stores:'informix'.orders: blocked by sid 813, head blocker \
         sid 812 (holding 3 locks, running)"
    );
    assert_eq!(
        w(814).waiting_on.describe(),
        "HDR+X on stores:'informix'.orders (lock 44a1b2c8)"
    );
    assert_eq!(
        w(814).waiting_on.describe_short(),
        "HDR+X on orders (stores)"
    );
    assert_eq!(w(813).blockers, vec![Sid(812)]);
    assert_eq!(
        w(813).verdict,
        "waiting for a lock on stores:'informix'.customer: blocked by sid 812 (head blocker, \
         holding 3 locks, running)"
    );
    assert_eq!(w(815).head_blocker, Some(Sid(812)));
    assert!(!w(815).deadlock);
    // One head, blocking three sessions.
    assert_eq!(snap.heads.len(), 1);
    assert_eq!(snap.heads[0].sid, Sid(812));
    assert_eq!(snap.heads[0].blocked, 3);
    assert_eq!(snap.heads[0].locks, 3);
    // The session screens: 814's chain, 812's locks (the contended ones first).
    let v814 = &snap.session_views[0];
    let chain: Vec<(Sid, bool)> = v814.chain.iter().map(|l| (l.sid, l.head)).collect();
    assert_eq!(chain, vec![(Sid(813), false), (Sid(812), true)]);
    let waits: Vec<_> = v814.locks.iter().filter(|l| !l.held).collect();
    assert_eq!(waits.len(), 1);
    assert_eq!(waits[0].table, "stores:'informix'.orders");
    let v812 = &snap.session_views[1];
    assert_eq!(v812.locks.len(), 3);
    assert!(v812.locks.iter().all(|l| l.held));
    assert!(v812.locks[0].contended);
    assert_eq!(v812.locks[0].rowid, "68");
    // Not waiting, but the head blocker: its screen says so and names the command that ends it.
    assert_eq!(v812.verdict, "head blocker: holds up 3 sessions (running)");
    assert_eq!(v812.kill_command.as_deref(), Some("onmode -z 812"));
    assert_eq!(v814.kill_command, None);
    // Whom 812 holds up: 813 and 815 directly, 814 through 813.
    assert_eq!(v812.blocking, vec![Sid(813), Sid(815), Sid(814)]);
    assert!(v814.blocking.is_empty());
}

/// A head blocker rolling its transaction back (`R`, between two log records not in a critical
/// section) holds its locks until the rollback ends: ending it frees nothing sooner, so
/// `onmode -z` is not offered, and its screen says to wait for the rollback.
#[test]
fn a_rolling_back_head_blocker_is_never_offered_onmode_z() {
    let mut s = lock_chain();
    let u = format!(
        "{BANNER}Userthreads
address          flags   sessid   user     tty      wait             tout locks nreads   nwrites
4b4ad628         --RP--- 812      appuser  -        0                0    3     120      45
4b4adc40         L-BP--- 813      appuser  -        44a1b000         0    1     10       2
4b4ae258         L--P--- 814      batch    -        44a1b2c8         0    0     5        0
4b4ae870         L--P--- 815      report   -        44a1b000         0    0     7        0
 4 active, 128 total, 12 maximum concurrent
"
    );
    apply(&mut s, Source::OnstatU, 1, &u);
    let snap = build(&s, &[Sid(812)]);
    let v = &snap.session_views[0];
    assert_eq!(v.sid, Sid(812));
    assert_eq!(v.kill_command, None, "{:?}", v.action);
    assert!(
        v.action
            .as_deref()
            .is_some_and(|a| a.starts_with("rolling back") && a.contains("onmode -z does not")),
        "{:?}",
        v.action
    );
}

/// The `onstat -k` of the call was printed an instant after its `onstat -u`, and the lock 813
/// and 815 wait for changed hands in between: it now shows 813 (a waiter at the `-u`'s moment)
/// as its owner and 815 as its waiter. Neither wait is joined to it: no blocker is named from
/// a lock that no longer shows the wait, and the verdict says why.
#[test]
fn a_lock_that_changed_hands_between_the_outputs_names_no_holder() {
    let mut s = lock_chain();
    let k = format!(
        "{BANNER}Locks
address          wtlist           owner            lklist           type     tblsnum  rowid    key#/bsiz
44a1a000         0                4b4ad628         0                HDR+IX   100105   0            0
44a1b000         4b4ae870         4b4adc40         0                HDR+X    100105   68           0
44a1b100         0                4b4ad628         44a1a000         HDR+X    100105   69           0
44a1b2c8         4b4ae258         4b4adc40         0                HDR+X    100106   12           0
 4 active, 20000 total, 16384 hash buckets, 0 lock table overflows
"
    );
    apply(&mut s, Source::OnstatK, 1, &k);
    let snap = build(&s, &[]);
    let w = |sid: u64| {
        snap.waiters
            .iter()
            .find(|w| w.sessid == Sid(sid))
            .unwrap_or_else(|| panic!("{sid} waits"))
    };
    for sid in [815, 813] {
        assert!(w(sid).blockers.is_empty(), "{sid}: {:?}", w(sid).blockers);
        assert!(
            w(sid).verdict.contains("no longer shows this wait"),
            "{}",
            w(sid).verdict
        );
    }
    // 814's lock is as the onstat -u saw it: 813 holds it.
    assert_eq!(w(814).blockers, vec![Sid(813)]);
}

/// The `onstat -k` of the call was printed a second after its `onstat -u` by the server's clock
/// (the call stalled between them: its banner's uptime is one more): who holds a lock then is
/// not joined to the waits of the `-u`, and the verdict says so.
#[test]
fn a_part_printed_a_second_later_is_not_joined_at_the_moment() {
    let mut s = lock_chain();
    let late = BANNER.replace("03:04:05", "03:04:06");
    let k = format!(
        "{late}Locks
address          wtlist           owner            lklist           type     tblsnum  rowid    key#/bsiz
44a1a000         0                4b4ad628         0                HDR+IX   100105   0            0
44a1b000         4b4adc40         4b4ad628         44a1a000         HDR+X    100105   68           0
44a1b100         0                4b4ad628         44a1b000         HDR+X    100105   69           0
44a1b2c8         4b4ae258         4b4adc40         0                HDR+X    100106   12           0
 4 active, 20000 total, 16384 hash buckets, 0 lock table overflows
"
    );
    apply(&mut s, Source::OnstatK, 1, &k);
    let snap = build(&s, &[]);
    let w813 = snap
        .waiters
        .iter()
        .find(|w| w.sessid == Sid(813))
        .expect("813 waits");
    assert!(w813.blockers.is_empty(), "{:?}", w813.blockers);
    assert!(
        w813.verdict
            .contains("onstat -k was printed a second after onstat -u"),
        "{}",
        w813.verdict
    );
    assert!(snap
        .sources
        .iter()
        .any(|st| st.source == Source::OnstatK.label() && st.late));
}

#[test]
fn locks_waiting_on_each_other_are_a_deadlock() {
    let u = format!(
        "{BANNER}address          flags   sessid   user     tty      wait             tout locks nreads   nwrites
4b4ad628         L-BP--- 812      appuser  -        44a1b2c8         0    1     1        1
4b4adc40         L-BP--- 813      appuser  -        44a1b000         0    1     1        1
"
    );
    let k = format!(
        "{BANNER}Locks
address          wtlist           owner            lklist           type     tblsnum  rowid    key#/bsiz
44a1b000         4b4adc40         4b4ad628         0                HDR+X    100105   68           0
44a1b2c8         4b4ad628         4b4adc40         0                HDR+X    100105   69           0
 2 active, 20000 total, 16384 hash buckets, 0 lock table overflows
"
    );
    let mut s = store();
    apply(&mut s, Source::OnstatK, 0, &k);
    apply(&mut s, Source::OnstatU, 0, &u);
    let snap = build(&s, &[]);
    assert_eq!(snap.waiters.len(), 2);
    for w in &snap.waiters {
        assert!(w.deadlock, "{w:?}");
        assert_eq!(w.head_blocker, None);
        assert!(w.verdict.contains("DEADLOCK with sid"), "{}", w.verdict);
    }
}

/// Sessions 501 and 502 wait on netnorm; their clients are 10.20.1.5:51234 (36 KB queued) and
/// 10.20.1.6:40000 (nothing queued); 503 is printed with a host name.
fn client_waits() -> Store {
    let u = format!(
        "{BANNER}address          flags   sessid   user     tty      wait             tout locks nreads   nwrites
4b4ad628         Y--P--- 501      appuser  -        4c000100         0    1     1        1
4b4adc40         Y--P--- 502      appuser  -        4c000200         0    1     1        1
4b4ae258         Y--P--- 503      appuser  -        4c000300         0    1     1        1
"
    );
    let con = format!(
        "{BANNER}Conditions with waiters:
cid      addr             name               waiter   waittime
101      4c000100         netnorm            901      40
102      4c000200         netnorm            902      3
103      4c000300         netnorm            903      12
"
    );
    let ntt = format!(
        "{BANNER}global network information:
  #netscb connects     read    write    q-free  q-limits  q-exceed  alloc/max
  3/   3       12      100      100    2/   2  240/  10    0/   0     0 / 0

Individual thread network information (times):
          netscb thread name    sid     open     read    write address
        4d1f0000 sqlexec        501 10:00:01 10:00:05 10:00:05 10.20.1.5|51234|soctcp
        4d1f1000 sqlexec        502 10:00:02 10:00:06 10:00:06 10.20.1.6|40000|soctcp
        4d1f2000 sqlexec        503 10:00:03 10:00:07 10:00:07 app07|45678|soctcp
"
    );
    // local 10.0.0.5:9088 (0x2380); remotes 10.20.1.5:51234 (0xC822), 10.20.1.6:40000 (0x9C40),
    // 10.20.1.7:45678 (0xB26E). tx_queue 0x9000 = 36864 bytes.
    let tcp = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:2380 00000000:0000 0A 00000000:00000000 00:00000000 00000000   200        0 1 1 0000000000000000 100 0 0 10 0
   1: 0500000A:2380 0501140A:C822 01 00009000:00000000 01:00000014 00000000   200        0 2 1 0000000000000000 20 4 30 10 -1
   2: 0500000A:2380 0601140A:9C40 01 00000000:00000000 00:00000000 00000000   200        0 3 1 0000000000000000 20 4 30 10 -1
   3: 0500000A:2380 0701140A:B26E 01 00000000:00000000 00:00000000 00000000   200        0 4 1 0000000000000000 20 4 30 10 -1
";
    let mut s = store();
    apply(&mut s, Source::OnstatGNtt, 0, &ntt);
    apply(&mut s, Source::OnstatGCon, 1, &con);
    apply(&mut s, Source::ProcNetTcp6, 1, "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n");
    apply(&mut s, Source::ProcNetTcp, 1, tcp);
    apply(&mut s, Source::OnstatU, 1, &u);
    s
}

#[test]
fn client_waits_join_their_sockets_and_say_which_story_it_is() {
    let s = client_waits();
    let snap = build(&s, &[Sid(501)]);
    let w = |sid: u64| {
        snap.waiters
            .iter()
            .find(|w| w.sessid == Sid(sid))
            .unwrap_or_else(|| panic!("{sid}"))
    };
    let s501 = w(501).socket.as_ref().expect("501's socket");
    assert_eq!(s501.remote.to_string(), "10.20.1.5:51234");
    assert_eq!(s501.send_q, 36_864);
    assert!(!w(501).idle);
    assert_eq!(
        w(501).verdict,
        "waiting for its client to read: 36 KB queued on 10.20.1.5:51234 (see FET_BUF_SIZE)"
    );
    assert!(w(502).idle);
    assert_eq!(w(502).verdict, "idle: waiting for the client");
    // A host name cannot be compared with an address; its port is unique, so it joins.
    assert_eq!(
        w(503)
            .socket
            .as_ref()
            .map(|s| s.remote.to_string())
            .as_deref(),
        Some("10.20.1.7:45678")
    );
    // The Sockets pane knows each connection's session and user.
    let row = snap
        .sockets
        .iter()
        .find(|r| r.remote.to_string() == "10.20.1.5:51234")
        .expect("row");
    assert_eq!(row.sessid, Some(Sid(501)));
    assert_eq!(row.user.as_deref(), Some("appuser"));
    assert_eq!(snap.summary.idle, 2);
    // The session screen carries the socket and the client host from ntt.
    let v = &snap.session_views[0];
    assert_eq!(v.client_host.as_deref(), Some("10.20.1.5"));
    assert_eq!(v.socket.as_ref().map(|s| s.send_q), Some(36_864));
}

#[test]
fn a_drilled_session_shows_its_sql_and_client_from_ses_and_sql() {
    let mut s = lock_chain();
    apply(
        &mut s,
        Source::OnstatGSes(Sid(812)),
        2,
        &fixture("onstat-g-ses/ifxtop-ses-detail-12.10.txt"),
    );
    apply(
        &mut s,
        Source::OnstatGSql(Sid(812)),
        2,
        &fixture("onstat-g-sql/ifxtop-sql-812.txt"),
    );
    let snap = build(&s, &[Sid(812)]);
    let v = &snap.session_views[0];
    assert_eq!(v.client_host.as_deref(), Some("app03"));
    assert_eq!(v.client_pid, Some(20544));
    assert_eq!(v.program.as_deref(), Some("/opt/app/bin/order_entry"));
    assert_eq!(v.database.as_deref(), Some("stores"));
    assert!(!v.sql_is_last_parsed);
    let sql = v.sql.as_deref().expect("sql");
    assert!(sql.starts_with("update customer set balance"), "{sql}");
    assert!(sql.contains("where customer_num = 104"), "{sql}");
}

#[test]
fn a_buffer_waiter_not_yet_listed_by_onstat_x_joins_through_its_wait_address() {
    // onstat -X lists 501 as the waiter of buffer 4600a000, owned by 500; 502 is not in the
    // buffer's waiter list: its onstat -u wait column names the same buffer.
    let u = format!(
        "{BANNER}address          flags   sessid   user     tty      wait             tout locks nreads   nwrites
4b4ad000         ---P--- 500      loader   -        0                0    2     1        900
4b4ad628         B--P--- 501      loader   -        4600a000         0    1     1        10
4b4adc40         B--P--- 502      loader   -        4600a000         0    1     1        10
"
    );
    let x = format!(
        "{BANNER}Buffers (Access)
address          owner            flags pagenum          memaddr          nslots pgflgs scount   waiter

Buffer pool page size: 2048
4600a000         4b4ad000         c23   3:280014         4700000000       38     801    1        4b4ad628
 1 modified, 200000 total, 262144 hash buckets, 2048 buffer size
"
    );
    let parsed = ifxtop::parsers::onstat_x::parse(&x).expect("onstat -X");
    assert!(parsed.unparsed.is_empty(), "{:?}", parsed.unparsed);
    // Read a second before the onstat -u: a buffer's holder changes within a second, so it
    // names no holder for this moment's waiters (a wrong blocker is worse than none).
    let mut s = store();
    apply(&mut s, Source::OnstatX, 0, &x);
    apply(&mut s, Source::OnstatU, 1, &u);
    let snap = build(&s, &[]);
    for sid in [501, 502] {
        let w = snap
            .waiters
            .iter()
            .find(|w| w.sessid == Sid(sid))
            .unwrap_or_else(|| panic!("{sid}"));
        assert_eq!(w.waiting_on.owner(), None, "{sid}: {:?}", w.waiting_on);
        assert_eq!(w.head_blocker, None, "{sid}");
        assert!(w.blockers.is_empty(), "{sid}: {:?}", w.blockers);
    }
    // Read with it (the grouped onstat -u -X of one tick): both join, 502 through its wait
    // address.
    apply(&mut s, Source::OnstatX, 1, &x);
    let snap = build(&s, &[]);
    for sid in [501, 502] {
        let w = snap
            .waiters
            .iter()
            .find(|w| w.sessid == Sid(sid))
            .unwrap_or_else(|| panic!("{sid}"));
        match &w.waiting_on {
            WaitTarget::Buffer {
                chunk, page, owner, ..
            } => {
                assert_eq!((*chunk, *page), (3, 280_014));
                assert_eq!(owner.map(|o| o.to_string()).as_deref(), Some("4b4ad000"));
            }
            other => panic!("{sid}: {other:?}"),
        }
        assert_eq!(w.head_blocker, Some(Sid(500)), "{sid}");
    }
}

#[test]
fn pages_seen_before_the_extent_map_arrived_do_not_count_as_unresolved() {
    // At start onstat -X arrives before the (slow) oncheck -pe: its pages cannot resolve yet.
    // Once the map is in, they are re-keyed; the share that triggers an automatic rebuild of
    // the map must not count them.
    let x = fixture("onstat-X/ifxtop-seed-buffer-waits-4-pools.txt");
    let mut s = store();
    for t in 0..4 {
        apply(&mut s, Source::OnstatX, t, &x);
    }
    assert_eq!(build(&s, &[]).unresolved_share, Some(1.0));
    assert!(build(&s, &[]).hotspots.iter().all(|h| !h.resolved));
    apply(
        &mut s,
        Source::OncheckPe,
        4,
        &fixture("oncheck-pe/ifxtop-chunks-of-seed-onstat-X.txt"),
    );
    let snap = build(&s, &[]);
    assert_eq!(snap.unresolved_share, Some(0.0));
    let top = &snap.hotspots[0];
    assert!(top.resolved, "{top:?}");
    assert_eq!(top.samples_total, 4);
}

/// Each session's memory from `onstat -g ses` (the list): a slow fact joined with its own
/// moment. A session the list does not name (started since it was read) has none (unknown,
/// never 0); the session screen says how old the figure is, and takes the newer of the list
/// and the session's own `onstat -g ses <sid>`.
#[test]
fn session_memory_joins_the_list_of_its_moment_and_is_unknown_when_not_listed() {
    let mut s = lock_chain();
    let list = format!(
        "{BANNER}session                                      #RSAM    total      used       dynamic
id       user     tty      pid      hostname threads  memory     memory     explain
813      appuser  -        20551    app03    1        90112      61440      off
812      appuser  -        20544    app03    1        782336     735584     off
"
    );
    // Before the first read: no figure, and no moment.
    let snap = build(&s, &[Sid(814)]);
    assert!(snap.sessions.iter().all(|r| r.memory_bytes.is_none()));
    assert_eq!(snap.session_memory_at_s, None);
    apply(&mut s, Source::OnstatGSesList, 1, &list);
    // Twenty seconds on: the list keeps its own moment.
    let snap = snapshot::build(&s, Duration::from_secs(21), None, &[Sid(812), Sid(814)]);
    assert_eq!(snap.session_memory_at_s, Some(1.0));
    let row = |sid: u64| {
        snap.sessions
            .iter()
            .find(|r| r.sessid == Sid(sid))
            .unwrap_or_else(|| panic!("{sid}"))
    };
    assert_eq!(
        (row(812).memory_bytes, row(812).memory_used_bytes),
        (Some(782_336), Some(735_584))
    );
    assert_eq!(row(813).memory_bytes, Some(90_112));
    assert_eq!((row(814).memory_bytes, row(815).memory_bytes), (None, None));
    let view = |sid: u64| {
        snap.session_views
            .iter()
            .find(|v| v.sid == Sid(sid))
            .unwrap_or_else(|| panic!("{sid}"))
    };
    let m = view(812).memory.expect("812's memory");
    assert_eq!(
        (m.total_bytes, m.used_bytes, m.at_s, m.by_sid),
        (782_336, 735_584, 1.0, false)
    );
    assert_eq!(view(814).memory, None);
    assert_eq!(view(814).memory_missing_at_s, Some(1.0));
    // The session's own -g ses <sid>, read later, is the newer figure.
    let own = format!(
        "{BANNER}session           effective                            #RSAM    total      used       dynamic
id       user     user      tty      pid      hostname threads  memory     memory     explain
812      appuser  -         -        20544    app03    1        794624     740000     off
"
    );
    apply(&mut s, Source::OnstatGSes(Sid(812)), 16, &own);
    let snap = snapshot::build(&s, Duration::from_secs(21), None, &[Sid(812)]);
    let m = snap.session_views[0].memory.expect("812's memory");
    assert_eq!((m.total_bytes, m.at_s, m.by_sid), (794_624, 16.0, true));
    // The Sessions pane keeps the list's figure: every row of one read.
    assert_eq!(
        snap.sessions
            .iter()
            .find(|r| r.sessid == Sid(812))
            .and_then(|r| r.memory_bytes),
        Some(782_336)
    );
}
