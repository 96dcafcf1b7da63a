//! The vital signs: `onstat -p` rates between samples (and across a reset), VP busy %, memory
//! growth, the oldest transaction and the logs it holds, mutexes with their holder, and the S
//! waiters of `onstat -u` joined to the mutex they wait for and its holder as blocker.

use crate::common::fixture;
use ifxtop::collect::sample::Update;
use ifxtop::ids::Sid;
use ifxtop::model::snapshot::{self, Snapshot};
use ifxtop::model::waiters::WaitTarget;
use ifxtop::source::{Output, Source};
use ifxtop::store::{Store, StoreSettings};
use std::time::Duration;

const BANNER: &str = "\nIBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 2 days 03:04:05 -- 2395548 Kbytes\n\n";

fn apply(store: &mut Store, source: Source, t: u64, text: &str) {
    let result = source.parse(Output {
        exit: Some(5),
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

/// `onstat -u` with `banner`, these thread rows (each ending in a newline) and an `N active`
/// footer.
fn onstat_u(banner: &str, rows: &str, active: usize) -> String {
    format!(
        "{banner}Userthreads
address          flags   sessid   user     tty      wait             tout locks nreads   nwrites
{rows} {active} active, 128 total, 12 maximum concurrent
"
    )
}

/// `onstat -g ath` with `banner` and these thread rows.
fn onstat_g_ath(banner: &str, rows: &str) -> String {
    format!(
        "{banner}Threads:
 tid     tcb      rstcb    prty status                vp-class      name
{rows}"
    )
}

/// `onstat -g lmx` with `banner` and these mutex rows.
fn onstat_g_lmx(banner: &str, rows: &str) -> String {
    format!(
        "{banner}Locked mutexes:
mid      addr             name               holder   lkcnt  waiter   waittime
{rows}"
    )
}

/// `onstat -k` with `banner`, these lock rows and a `1 active` footer.
fn onstat_k(banner: &str, rows: &str) -> String {
    format!(
        "{banner}Locks
address          wtlist           owner            lklist           type     tblsnum  rowid    key#/bsiz
{rows} 1 active, 20000 total, 16384 hash buckets, 0 lock table overflows
"
    )
}

fn build(store: &Store) -> Snapshot {
    snapshot::build(store, store.latest, Some("test"), &[])
}

/// `onstat -p` in the 12.10 layout with these counters (the others fixed).
fn profile(dskreads: u64, bufreads: u64, lokwaits: u64, bufwaits: u64, commit: u64) -> String {
    format!(
        "{BANNER}Profile
dskreads  pagreads   bufreads   %cached dskwrits   pagwrits   bufwrits   %cached
{dskreads:<9} 47321      {bufreads:<10} 99.99   103113     158697     950932     89.16

isamtot   open     start    read     write   rewrite  delete  commit  rollbk
139214865 9195777  12257208 94191268 362691  55696    38134   {commit:<7} 24

gp_read   gp_write   gp_rewrt   gp_del     gp_alloc   gp_free   gp_curs
39        2          27         51         0          0         16

ovlock    ovuserthread   ovbuff   usercpu  syscpu   numckpts   flushes
0         0              0        1551.59  144.82   1822       1822

bufwaits  lokwaits  lockreqs   deadlks  dltouts  ckpwaits  compress  seqscans
{bufwaits:<9} {lokwaits:<9} 195872383  0        0        1         39331     1259170

ixda-RA   idx-RA     da-RA    logrec-RA  RA-pgsused lchwaits
0         7594       2124     0          2002       18848
"
    )
}

#[test]
fn profile_counters_become_rates_and_a_reset_starts_over() {
    let mut s = Store::new(StoreSettings::default());
    apply(
        &mut s,
        Source::OnstatP,
        0,
        &profile(1000, 100_000, 10, 100, 5000),
    );
    assert_eq!(build(&s).vitals.rates, None, "one sample is no rate");
    apply(
        &mut s,
        Source::OnstatP,
        5,
        &profile(1100, 110_000, 60, 150, 5500),
    );
    let r = build(&s).vitals.rates.expect("rates after two samples");
    assert_eq!(r.lokwaits, Some(10.0));
    assert_eq!(r.bufwaits, Some(10.0));
    assert_eq!(r.commit, Some(100.0));
    assert_eq!(r.deadlks, Some(0.0));
    // 100 disk reads for 10,000 buffer reads: 99 % from the cache over the interval (the
    // counters' own %cached says 99.99, since the server started).
    assert_eq!(r.read_cache_pct, Some(99.0));
    // onstat -z: every counter drops. No negative rate: nothing until the next interval.
    apply(&mut s, Source::OnstatP, 10, &profile(5, 50, 0, 1, 3));
    assert_eq!(build(&s).vitals.rates, None);
    apply(&mut s, Source::OnstatP, 15, &profile(10, 1050, 5, 6, 503));
    let r = build(&s).vitals.rates.expect("rates again");
    assert_eq!(r.lokwaits, Some(1.0));
    assert_eq!(r.commit, Some(100.0));
    assert_eq!(r.read_cache_pct, Some(99.5));
    // The sparkline history kept the intervals before and after, not the reset.
    let h = &build(&s).vitals.history.rates["lokwaits"];
    assert_eq!(h, &vec![10.0, 1.0]);
}

#[test]
fn vp_cpu_seconds_become_busy_percent_per_class() {
    let glo = fixture("onstat-g-glo/ifxtop-14.10-16-cpu-vps-wide-times.txt");
    let mut s = Store::new(StoreSettings::default());
    apply(&mut s, Source::OnstatGGlo, 0, &glo);
    let snap = build(&s);
    assert!(!snap.vitals.vps.is_empty());
    assert!(snap.vitals.vps.iter().all(|v| v.busy_pct.is_none()));
    // 10 s later the same CPU seconds: idle, 0 %.
    apply(&mut s, Source::OnstatGGlo, 10, &glo);
    let cpu = build(&s)
        .vitals
        .vps
        .into_iter()
        .find(|v| v.class == "cpu")
        .expect("a cpu class");
    assert_eq!(cpu.count, 16);
    assert_eq!(cpu.busy_pct, Some(0.0));
    // 10 s later the cpu class used 120 more CPU seconds (+100 user, +20 sys) on its 16 VPs:
    // 120 / (10 s * 16) = 75 % busy.
    let busier = glo.replace(
        " cpu         16        4542663.11 257580.43 4800243.54",
        " cpu         16        4542763.11 257600.43 4800363.54",
    );
    assert_ne!(busier, glo);
    apply(&mut s, Source::OnstatGGlo, 20, &busier);
    let cpu = build(&s)
        .vitals
        .vps
        .into_iter()
        .find(|v| v.class == "cpu")
        .expect("a cpu class");
    let busy = cpu.busy_pct.expect("busy");
    assert!((busy - 75.0).abs() < 1e-6, "{busy}");
    assert_eq!(build(&s).vitals.history.vps["cpu"].len(), 2);
}

/// An instance where session 901 holds mutex `lockhash[12]` and 902, 903 wait for it (S), and
/// session 905's transaction began 4 logs ago.
fn mutex_and_long_txn_store() -> Store {
    let u = onstat_u(
        BANNER,
        "4b4ad628         ---P--- 901      appuser  -        0                0    3     120      45
4b4adc40         S--P--- 902      appuser  -        4b0f1d28         0    1     10       2
4b4ae258         S--P--- 903      batch    -        4b0f1d28         0    0     5        0
4b4ae870         ---P--- 905      loader   -        0                0    9000  7        800
",
        4,
    );
    let ath = onstat_g_ath(
        BANNER,
        " 5118    141c9270 4b4ad628 2    running                 1cpu        sqlexec
 5120    141e3138 4b4adc40 2    mutex wait lockhash[12] 1cpu        sqlexec
 5121    141f8138 4b4ae258 2    mutex wait lockhash[12] 1cpu        sqlexec
 5122    1420d138 4b4ae870 2    running                 1cpu        sqlexec
",
    );
    let lmx = onstat_g_lmx(
        BANNER,
        "4011     4b0f1d28         lockhash[12]       5118     0      5120     4
                                                             5121     2
",
    );
    let x = format!(
        "{BANNER}Transactions
address  flags userthread locks  begin_logpos  current_logpos isol    retrys coord
a6d1028  A---- 4b4ad628   3      -             -              COMMIT  0
a6d1348  A-B-- 4b4ae870   9000   3:0x25018     6:0x486fc      COMMIT  0
 2 active, 128 total, 9 maximum concurrent
"
    );
    let l = fixture("onstat-l/hcl-onedb-2.0-adr-0598-doc.txt");
    let mut s = Store::new(StoreSettings::default());
    apply(&mut s, Source::OnstatU, 0, &u);
    apply(&mut s, Source::OnstatGAth, 0, &ath);
    apply(&mut s, Source::OnstatGLmx, 0, &lmx);
    apply(&mut s, Source::OnstatXTxn, 0, &x);
    apply(&mut s, Source::OnstatL, 0, &l);
    s
}

#[test]
fn an_s_waiter_names_its_mutex_and_its_holder_is_the_blocker() {
    let snap = build(&mutex_and_long_txn_store());
    let w = snap
        .waiters
        .iter()
        .find(|w| w.sessid == Sid(902))
        .expect("902 waits");
    match &w.waiting_on {
        WaitTarget::Latch { name, owner, .. } => {
            assert_eq!(name.as_deref(), Some("lockhash[12]"));
            assert_eq!(owner.map(|o| o.to_string()).as_deref(), Some("4b4ad628"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(w.blockers, vec![Sid(901)]);
    assert_eq!(w.waiting_on_short(), "mutex lockhash[12] (4b0f1d28)");
    assert!(w.verdict.contains("lockhash[12]"), "{}", w.verdict);
    assert!(w.verdict.contains("sid 901"), "{}", w.verdict);
    // The mutex list: its holder's session and its waiters' sessions.
    let m = &snap.vitals.mutexes[0];
    assert_eq!(m.name, "lockhash[12]");
    assert_eq!(m.holder_sessid, Some(Sid(901)));
    assert_eq!(m.waiters, 2);
    assert_eq!(m.waiter_sessids, vec![Sid(902), Sid(903)]);
    assert_eq!(m.longest_wait_s, Some(4));
    // 901 holds up two sessions in the Sessions list too.
    let s901 = snap
        .sessions
        .iter()
        .find(|s| s.sessid == Sid(901))
        .expect("901");
    assert_eq!(s901.blocks, vec![Sid(902), Sid(903)]);
}

#[test]
fn the_oldest_transaction_names_its_session_and_the_logs_it_holds() {
    let snap = build(&mutex_and_long_txn_store());
    let logs = snap.vitals.logs.expect("logs");
    // The -l sample: 6 of 8 logs used, 5 backed up, the current one (6) not.
    assert_eq!(logs.total, 8);
    assert_eq!(logs.not_backed_up, 1);
    assert_eq!(logs.current, Some(6));
    let t = logs.oldest_transaction.expect("an open transaction");
    assert_eq!(t.sessid, Some(Sid(905)));
    assert_eq!(t.user.as_deref(), Some("loader"));
    assert_eq!(t.begin_log, 3);
    // Logs 3, 4, 5 and the current 6.
    assert_eq!(t.logs_spanned, 4);
    assert_eq!(t.locks, 9000);
}

/// `mutex_and_long_txn_store`'s `onstat -u` a second later with the oldest transaction's
/// session (905, rstcb 4b4ae870) gone and `newcomer` on its rstcb, the freed address given to
/// the next session as the server does.
fn after_the_owner_left(newcomer: &str) -> String {
    onstat_u(
        BANNER,
        &format!(
            "4b4ad628         ---P--- 901      appuser  -        0                0    3     121      45
{newcomer}"
        ),
        2,
    )
}

/// The oldest open transaction a snapshot of `s` says.
fn oldest(s: &Store) -> ifxtop::model::vitals::OldestTransaction {
    build(s)
        .vitals
        .logs
        .and_then(|l| l.oldest_transaction)
        .expect("an open transaction")
}

/// The oldest transaction's session is the one that owned its thread when `onstat -x` was
/// read. `-x` is read every 5 s, `-u` every second: joined to a later `-u`, its rstcb named
/// whoever had it by then.
#[test]
fn the_oldest_transactions_session_is_the_one_of_its_onstat_x_read() {
    let mut s = mutex_and_long_txn_store();
    let u = after_the_owner_left(
        "4b4ae870         ---P--- 977      batch    -        0                0    0     1        0\n",
    );
    apply(&mut s, Source::OnstatU, 2, &u);
    let t = oldest(&s);
    assert_eq!(t.sessid, Some(Sid(905)));
    assert_eq!(t.user.as_deref(), Some("loader"));
    assert_eq!(t.locks, 9000);
}

/// Its session's screen says it holds the oldest transaction only while the session is the
/// one of the `onstat -x` read: a new session given the freed sid and rstcb (counters from
/// zero) is not said to hold it.
#[test]
fn a_session_given_the_owners_sid_again_is_not_said_to_hold_the_oldest_transaction() {
    let holds = |s: &Store| {
        let snap = snapshot::build(s, s.latest, Some("test"), &[Sid(905)]);
        let v = &snap.session_views[0];
        v.verdict.contains("holds the oldest open transaction")
    };
    let mut s = mutex_and_long_txn_store();
    assert!(holds(&s), "905 holds it at the -x read's moment");
    // A second later, 905 still there with more reads: still it.
    let same = after_the_owner_left(
        "4b4ae870         ---P--- 905      loader   -        0                0    9000  9        812\n",
    );
    apply(&mut s, Source::OnstatU, 1, &same);
    assert!(holds(&s), "the same session a second later");
    // Then another session with sid 905 on the same rstcb, its counters from zero.
    let again = after_the_owner_left(
        "4b4ae870         ---P--- 905      batch    -        0                0    0     1        0\n",
    );
    apply(&mut s, Source::OnstatU, 2, &again);
    assert!(!holds(&s), "a new session given sid 905 again");
}

/// An `onstat -x` read with no `onstat -u` of its moment names no session: the `-u` before or
/// after it may have another session on the thread's address.
#[test]
fn an_onstat_x_read_apart_from_any_onstat_u_names_no_session() {
    let mut s = mutex_and_long_txn_store();
    let x = format!(
        "{BANNER}Transactions
address  flags userthread locks  begin_logpos  current_logpos isol    retrys coord
a6d1348  A-B-- 4b4ae870   9100   3:0x25018     6:0x486fc      COMMIT  0
 1 active, 128 total, 9 maximum concurrent
"
    );
    apply(&mut s, Source::OnstatXTxn, 3, &x);
    let u = after_the_owner_left(
        "4b4ae870         ---P--- 977      batch    -        0                0    0     1        0\n",
    );
    apply(&mut s, Source::OnstatU, 4, &u);
    let t = oldest(&s);
    assert_eq!(t.locks, 9100, "the later -x read's");
    assert_eq!(t.sessid, None);
    assert_eq!(t.user, None);
    // A -u of its moment read after it names the session.
    apply(&mut s, Source::OnstatXTxn, 5, &x);
    let u = after_the_owner_left(
        "4b4ae870         ---P--- 977      batch    -        0                0    0     2        0\n",
    );
    apply(&mut s, Source::OnstatU, 5, &u);
    let t = oldest(&s);
    assert_eq!(t.sessid, Some(Sid(977)));
}

#[test]
fn memory_growth_counts_from_the_first_sample() {
    let seg = fixture("onstat-g-seg/ifxtop-64-bit-locked-vx-m.txt");
    let mut s = Store::new(StoreSettings::default());
    apply(&mut s, Source::OnstatGSeg, 0, &seg);
    let m = build(&s).vitals.memory.expect("memory");
    assert_eq!(m.growth_kb, 0);
    assert_eq!(m.added_segments, 0);
    assert!(m.total_kb > 0 && m.segments > 1);
    let by_class: u64 = m.by_class.values().sum();
    // The classes add up to the Total line (this sample's Total is 400 KB off its rows).
    assert!(
        by_class.abs_diff(m.total_kb) * 100 < m.total_kb,
        "{by_class} of {}",
        m.total_kb
    );
    assert_eq!(m.by_class["B"], 8_589_950_976 / 1024);
}

/// The engine's blocker graph (`onstat -g bth`, 14.10): the manual's example. Session 27 (tid 49)
/// waits for a memory grant (MGM) held by session 26 (tid 48): no lock or buffer says so, the
/// graph does. Sessions 28..31 wait on a lock that `-k` says 27 owns, and the graph agrees.
#[test]
fn the_engine_blocker_graph_fills_in_what_locks_cannot_see() {
    let banner = "\nIBM Informix Dynamic Server Version 14.10.FC9 -- On-Line -- Up 2 days 03:04:05 -- 2395548 Kbytes\n\n";
    let u = onstat_u(
        banner,
        "4b4ad628         --BP--- 26       appuser  -        0                0    3     120      45
4b4adc40         Y-BP--- 27       appuser  -        4c000100         0    1     10       2
4b4ae258         L--P--- 28       batch    -        4411e578         0    0     5        0
4b4ae870         L--P--- 29       batch    -        4411e578         0    0     5        0
",
        4,
    );
    let ath = onstat_g_ath(
        banner,
        " 48      141c9270 4b4ad628 2    running                 1cpu        sqlexec
 49      141e3138 4b4adc40 2    cond wait  mgm          1cpu        sqlexec
 50      141f8138 4b4ae258 2    lock wait               1cpu        sqlexec
 51      1420d138 4b4ae870 2    lock wait               1cpu        sqlexec
",
    );
    let k = onstat_k(
        banner,
        "4411e578         4b4ae258         4b4adc40         0                HDR+X    100105   68           0
",
    );
    let bth = format!(
        "{banner}{}",
        fixture("onstat-g-bth/hcl-14.10-adr-1179-doc.txt")
    );
    let mut s = Store::new(StoreSettings::default());
    apply(&mut s, Source::OnstatU, 0, &u);
    apply(&mut s, Source::OnstatGAth, 0, &ath);
    apply(&mut s, Source::OnstatK, 0, &k);
    let without = build(&s);
    let w27 = |snap: &Snapshot| {
        snap.waiters
            .iter()
            .find(|w| w.sessid == Sid(27))
            .cloned()
            .expect("27 waits")
    };
    assert!(w27(&without).blockers.is_empty());
    apply(&mut s, Source::OnstatGBth, 0, &bth);
    let with = build(&s);
    assert_eq!(w27(&with).blockers, vec![Sid(26)]);
    // 28 waits on 27's lock (-k), 27 on 26's memory grant (the graph): one chain to the head.
    let w28 = with
        .waiters
        .iter()
        .find(|w| w.sessid == Sid(28))
        .expect("28 waits");
    assert_eq!(w28.blockers, vec![Sid(27), Sid(26)]);
    assert_eq!(w28.head_blocker, Some(Sid(26)));
    assert_eq!(w28.engine_blocker, None, "-k and the graph agree on 27");
}

/// Where `-k` and the graph name different blockers, the waiter says both.
#[test]
fn a_disagreement_with_the_engine_graph_is_said() {
    let banner = "\nIBM Informix Dynamic Server Version 14.10.FC9 -- On-Line -- Up 2 days 03:04:05 -- 2395548 Kbytes\n\n";
    let u = onstat_u(
        banner,
        "4b4ad628         --BP--- 26       appuser  -        0                0    3     120      45
4b4adc40         ---P--- 27       appuser  -        0                0    1     10       2
4b4ae258         L--P--- 28       batch    -        4411e578         0    0     5        0
",
        3,
    );
    let ath = onstat_g_ath(
        banner,
        " 48      141c9270 4b4ad628 2    running                 1cpu        sqlexec
 49      141e3138 4b4adc40 2    running                 1cpu        sqlexec
 50      141f8138 4b4ae258 2    lock wait               1cpu        sqlexec
",
    );
    // -k: the lock is 26's; the graph (tid 50 blocked by 49): 27's.
    let k = onstat_k(
        banner,
        "4411e578         4b4ae258         4b4ad628         0                HDR+X    100105   68           0
",
    );
    let bth = format!(
        "{banner}{}",
        fixture("onstat-g-bth/hcl-14.10-adr-1179-doc.txt")
    );
    let mut s = Store::new(StoreSettings::default());
    apply(&mut s, Source::OnstatU, 0, &u);
    apply(&mut s, Source::OnstatGAth, 0, &ath);
    apply(&mut s, Source::OnstatK, 0, &k);
    apply(&mut s, Source::OnstatGBth, 0, &bth);
    let snap = build(&s);
    let w = snap
        .waiters
        .iter()
        .find(|w| w.sessid == Sid(28))
        .expect("28 waits");
    assert_eq!(w.blockers, vec![Sid(26)], "-k's owner stays the blocker");
    assert_eq!(w.engine_blocker, Some(Sid(27)));
    assert!(
        w.verdict.ends_with("(but onstat -g bth names sid 27)"),
        "{}",
        w.verdict
    );
}

/// The snapshot JSON's vital-sign names (the names; more fields are welcome).
#[test]
fn the_json_names_the_vital_signs() {
    let mut s = mutex_and_long_txn_store();
    apply(
        &mut s,
        Source::OnstatP,
        0,
        &profile(1000, 100_000, 10, 100, 5000),
    );
    apply(
        &mut s,
        Source::OnstatP,
        5,
        &profile(1100, 110_000, 60, 150, 5500),
    );
    apply(
        &mut s,
        Source::OnstatGCkp,
        5,
        &fixture("onstat-g-ckp/ifxtop-20-checkpoints-5-blocking.txt"),
    );
    let v = serde_json::to_value(build(&s)).expect("json");
    for key in [
        "lokwaits", "bufwaits", "lchwaits", "deadlks", "dltouts", "ckpwaits",
    ] {
        assert!(v["rates"][key].is_number(), "rates.{key}: {}", v["rates"]);
    }
    for key in [
        "seqscans",
        "commit",
        "rollbk",
        "isamtot",
        "read_cache_pct",
        "write_cache_pct",
    ] {
        assert!(v["rates"].get(key).is_some(), "rates.{key}");
    }
    let c = &v["checkpoints"][0];
    for key in [
        "trigger", "total_s", "flush_s", "block_s", "crit_s", "waits", "blocking",
    ] {
        assert!(c.get(key).is_some(), "checkpoints[].{key}: {c}");
    }
    assert_eq!(v["logs"]["oldest_transaction"]["sessid"], 905);
    assert_eq!(v["logs"]["oldest_transaction"]["logs_spanned"], 4);
    assert!(v["logs"]["used_pct"].is_number() && v["logs"]["not_backed_up"] == 1);
    assert_eq!(v["mutexes"][0]["name"], "lockhash[12]");
    assert_eq!(v["mutexes"][0]["holder_sessid"], 901);
    assert_eq!(v["mutexes"][0]["waiters"], 2);
    assert!(v["server"].get("blocked").is_some());
    for key in ["vps", "ready_queue", "memory"] {
        assert!(v.get(key).is_some(), "{key}");
    }
}

/// An `onstat -g glo` printed a second after the `onstat -u` of its call (the banner's uptime
/// one more) sums CPU seconds to another moment than its time: no busy % from it, and the next
/// sample in step is measured from the last one in step (over 20 s, not from the late one).
#[test]
fn vp_busy_from_a_glo_printed_a_second_late_is_not_known() {
    let glo = fixture("onstat-g-glo/ifxtop-14.10-16-cpu-vps-wide-times.txt");
    let banner = "Up 23 days 19:02:44";
    assert!(glo.contains(banner));
    let u = |uptime: &str| {
        format!(
            "\nHCL Informix Dynamic Server Version 14.10.FC9 -- On-Line -- {uptime} -- 25165824 Kbytes\n\n\
             Userthreads\n\
             address          flags   sessid   user     tty      wait             tout locks nreads   nwrites\n\
             4b4ad628         ---P--- 901      appuser  -        0                0    3     120      45\n \
             1 active, 128 total, 12 maximum concurrent\n"
        )
    };
    // The cpu class's CPU seconds (user, sys, total) plus `more` user seconds.
    let glo_at = |uptime: &str, more: f64| {
        glo.replace(banner, uptime).replace(
            " cpu         16        4542663.11 257580.43 4800243.54",
            &format!(
                " cpu         16        {:.2} 257580.43 {:.2}",
                4542663.11 + more,
                4800243.54 + more
            ),
        )
    };
    let busy = |s: &Store| {
        build(s)
            .vitals
            .vps
            .into_iter()
            .find(|v| v.class == "cpu")
            .and_then(|v| v.busy_pct)
    };
    let mut s = Store::new(StoreSettings::default());
    apply(&mut s, Source::OnstatU, 0, &u("Up 23 days 19:02:44"));
    apply(
        &mut s,
        Source::OnstatGGlo,
        0,
        &glo_at("Up 23 days 19:02:44", 0.0),
    );
    // 10 s later its -g glo was printed a second after its -u, 80 CPU seconds on.
    apply(&mut s, Source::OnstatU, 10, &u("Up 23 days 19:02:54"));
    apply(
        &mut s,
        Source::OnstatGGlo,
        10,
        &glo_at("Up 23 days 19:02:55", 80.0),
    );
    assert_eq!(busy(&s), None, "a late sample's busy % was given");
    // 20 s after the first, in step: 160 CPU seconds over 20 s on 16 VPs = 50 %.
    apply(&mut s, Source::OnstatU, 20, &u("Up 23 days 19:03:04"));
    apply(
        &mut s,
        Source::OnstatGGlo,
        20,
        &glo_at("Up 23 days 19:03:04", 160.0),
    );
    let b = busy(&s).expect("busy from the last sample in step");
    assert!((b - 50.0).abs() < 1e-6, "{b}");
}

/// A head holding a mutex others wait an instant for is the background of a busy server, and
/// ending it does not help; unless lock waits of this moment have no holder known (no
/// `onstat -k` read with the `onstat -u`): they may be on its locks, and the advice says so.
#[test]
fn a_brief_mutex_holder_is_not_said_harmless_beside_lock_waits_of_unknown_holder() {
    let store = |lock_waiter: bool| {
        let extra = if lock_waiter {
            "4b4af000         L--P--- 904      appuser  -        44a1b000         0    1     3        0\n"
        } else {
            ""
        };
        let u = onstat_u(
            BANNER,
            &format!(
                "4b4ad628         ---P--- 901      appuser  -        0                0    3     120      45
4b4adc40         S--P--- 902      appuser  -        4b0f1d28         0    1     10       2
4b4ae258         S--P--- 903      batch    -        4b0f1d28         0    0     5        0
{extra}"
            ),
            4,
        );
        let lmx = onstat_g_lmx(
            BANNER,
            "4011     4b0f1d28         lockhash[12]       5118     0      5120     0
                                                             5121     0
",
        );
        let ath = onstat_g_ath(
            BANNER,
            " 5118    141c9270 4b4ad628 2    running                 1cpu        sqlexec
 5120    141e3138 4b4adc40 2    mutex wait lockhash[12] 1cpu        sqlexec
 5121    141f8138 4b4ae258 2    mutex wait lockhash[12] 1cpu        sqlexec
",
        );
        let mut s = Store::new(StoreSettings::default());
        apply(&mut s, Source::OnstatU, 0, &u);
        apply(&mut s, Source::OnstatGAth, 0, &ath);
        apply(&mut s, Source::OnstatGLmx, 0, &lmx);
        s
    };
    let action = |s: &Store| {
        build(s)
            .heads
            .iter()
            .find(|h| h.sid == Sid(901))
            .and_then(|h| h.action.clone())
            .expect("901 heads the mutex waits, with advice")
    };
    let alone = action(&store(false));
    assert!(alone.ends_with("ending it does not help"), "{alone}");
    let beside = action(&store(true));
    assert!(!beside.contains("does not help"), "{beside}");
    assert!(beside.contains("not known at this moment"), "{beside}");
}
