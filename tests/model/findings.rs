//! The findings on real captures: a `Blocked:CKPT` banner with a session in a critical section,
//! a `Blocked:LONGTX` banner, an off-line server, a primary whose log transmission to an RSS
//! secondary is blocked.

use crate::common::fixture;
use ifxtop::collect::sample::Update;
use ifxtop::ids::Sid;
use ifxtop::model::findings::{headline, FindingKind, Severity};
use ifxtop::model::snapshot::{self, Snapshot};
use ifxtop::source::{Output, Source};
use ifxtop::store::{Store, StoreSettings};
use std::time::Duration;

fn apply(store: &mut Store, source: Source, t: u64, exit: i32, text: &str) {
    let result = source.parse(Output {
        exit: Some(exit),
        stdout: text.to_string(),
        stderr: String::new(),
    });
    store.apply(Update {
        source,
        t: Duration::from_secs(t),
        took: Duration::ZERO,
        result,
        how: Default::default(),
    });
}

fn build(store: &Store) -> Snapshot {
    snapshot::build(store, store.latest, Some("test"), &[])
}

/// A checkpoint blocks the server for a moment every time: a block is info until it has lasted
/// 5 s (`CKPT_BLOCK_WARN_S`), a warning until 10 s (`CKPT_BLOCK_CRITICAL_S`), critical after;
/// its age is the banner's `Blocked:` or its oldest checkpoint wait, whichever is older.
#[test]
fn a_checkpoint_block_is_critical_only_once_it_lasts() {
    let mut s = Store::new(StoreSettings::default());
    let u = fixture("onstat-u/ifxtop-banner-ckpt-req-critical-section.txt");
    let mut seen = Vec::new();
    for t in 1..=12 {
        apply(&mut s, Source::OnstatU, t, 5, &u);
        let snap = build(&s);
        let f = snap
            .findings
            .iter()
            .find(|f| f.kind == FindingKind::CheckpointBlocked)
            .unwrap_or_else(|| panic!("{:?}", snap.findings));
        seen.push((t, f.severity));
    }
    let at = |t: u64| seen.iter().find(|(s, _)| *s == t).map(|(_, v)| *v);
    assert_eq!(at(1), Some(Severity::Info), "{seen:?}");
    assert_eq!(at(5), Some(Severity::Info), "{seen:?}");
    assert_eq!(at(6), Some(Severity::Warning), "{seen:?}");
    assert_eq!(at(10), Some(Severity::Warning), "{seen:?}");
    assert_eq!(at(11), Some(Severity::Critical), "{seen:?}");
    // A block that ends and comes back is a new one.
    apply(&mut s, Source::OnstatU, 13, 5, &onstat_u_under("IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 12 days 03:14:28 -- 8913920 Kbytes\n"));
    apply(&mut s, Source::OnstatU, 14, 5, &u);
    let snap = build(&s);
    let f = snap
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::CheckpointBlocked)
        .expect("blocked again");
    assert_eq!(f.severity, Severity::Info, "{f:?}");
}

#[test]
fn a_blocked_checkpoint_names_the_critical_section() {
    let mut s = Store::new(StoreSettings::default());
    let u = fixture("onstat-u/ifxtop-banner-ckpt-req-critical-section.txt");
    // Blocked for 10 s: critical.
    for t in 1..=11 {
        apply(&mut s, Source::OnstatU, t, 5, &u);
    }
    let snap = build(&s);
    let top = headline(&snap.findings).expect("a finding above info");
    assert_eq!(
        top.kind,
        FindingKind::CheckpointBlocked,
        "{:?}",
        snap.findings
    );
    assert_eq!(top.severity, Severity::Critical);
    assert_eq!(top.culprit.sids, vec![Sid(3990)]);
    assert!(top.summary.contains("sid 3990"), "{}", top.summary);
    assert!(
        top.evidence.iter().any(|e| e.fact == "Blocked:CKPT"),
        "{:?}",
        top.evidence
    );
    assert!(top.action.contains("critical section"), "{}", top.action);
    // The checkpoint comes first, the JSON carries it.
    let json = serde_json::to_value(&snap).expect("json");
    assert_eq!(json["findings"][0]["kind"], "checkpoint_blocked");
    assert_eq!(json["findings"][0]["severity"], "critical");
}

#[test]
fn an_offline_server_is_the_only_finding() {
    let mut s = Store::new(StoreSettings::default());
    let u = fixture("onstat-u/ifxtop-offline.txt");
    apply(&mut s, Source::OnstatU, 1, 255, &u);
    let snap = build(&s);
    assert_eq!(snap.findings.len(), 1, "{:?}", snap.findings);
    assert_eq!(snap.findings[0].kind, FindingKind::Offline);
    assert_eq!(snap.findings[0].severity, Severity::Critical);
}

#[test]
fn a_calm_snapshot_has_no_finding_above_info() {
    let snap = Snapshot::default();
    assert!(headline(&snap.with_facts(ifxtop::model::findings::build)).is_none());
}

/// An `onstat -u` with `banner`'s first three lines (a real capture's banner and `Blocked:`
/// line) and no user thread.
fn onstat_u_under(banner: &str) -> String {
    let head: String = banner.lines().take(3).map(|l| format!("{l}\n")).collect();
    format!(
        "{head}\nUserthreads\naddress          flags   sessid   user     tty      wait             tout locks nreads   nwrites\n 0 active, 2048 total, 311 maximum concurrent\n"
    )
}

#[test]
fn a_blocked_longtx_banner_is_a_long_transaction() {
    let mut s = Store::new(StoreSettings::default());
    let banner = fixture("onstat-banner/ifxtop-blocked-longtx.txt");
    apply(&mut s, Source::OnstatU, 1, 5, &onstat_u_under(&banner));
    let snap = build(&s);
    assert_eq!(snap.server.blocked.as_deref(), Some("LONGTX"), "{snap:?}");
    let top = headline(&snap.findings).expect("a finding above info");
    assert_eq!(
        top.kind,
        FindingKind::LongTransaction,
        "{:?}",
        snap.findings
    );
    assert_eq!(top.severity, Severity::Critical);
    assert!(top.action.contains("onparams -a"), "{}", top.action);
    // LONGTX is named once, not again as another Blocked: reason.
    assert!(!snap
        .findings
        .iter()
        .any(|f| f.kind == FindingKind::ServerBlocked));
}

#[test]
fn blocked_log_transmission_is_a_lagging_replica() {
    let mut s = Store::new(StoreSettings::default());
    let rss = fixture("onstat-g-rss/ifxtop-primary-verbose-blocked-backlog.txt");
    apply(&mut s, Source::OnstatU, 1, 5, &onstat_u_under(&rss));
    apply(&mut s, Source::OnstatGRss, 1, 5, &rss);
    let snap = build(&s);
    let lag: Vec<_> = snap
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::ReplicaLag)
        .collect();
    let blocked = lag
        .iter()
        .find(|f| f.culprit.peer.as_deref() == Some("ifx_dr_east"))
        .unwrap_or_else(|| panic!("{:?}", snap.findings));
    assert_eq!(blocked.severity, Severity::Critical);
    assert!(blocked.summary.contains("blocked"), "{}", blocked.summary);
    assert_eq!(
        headline(&snap.findings).map(|f| f.kind),
        Some(FindingKind::ReplicaLag)
    );
}

/// A finding's start is kept across the snapshots of one store: the `Blocked:CKPT` capture
/// read every second from 1 s to 12 s holds from the first, as a lower bound (its waits were on
/// before ifxtop's first sample); the JSON and the text report say so.
#[test]
fn a_finding_keeps_its_start_across_snapshots() {
    let mut s = Store::new(StoreSettings::default());
    let u = fixture("onstat-u/ifxtop-banner-ckpt-req-critical-section.txt");
    let mut history = ifxtop::model::findings::FindingsHistory::default();
    let mut last = None;
    for t in 1..=12 {
        apply(&mut s, Source::OnstatU, t, 5, &u);
        let mut snap = build(&s);
        snap.track_findings(&mut history, None);
        last = Some(snap);
    }
    let snap = last.expect("twelve snapshots");
    let top = headline(&snap.findings).expect("a finding above info");
    assert_eq!(top.kind, FindingKind::CheckpointBlocked);
    assert_eq!((top.since_s, top.for_s), (Some(1.0), Some(11.0)));
    assert!(top.for_s_at_least);
    assert!(
        top.summary.starts_with("checkpoint blocked ≥11s:"),
        "{}",
        top.summary
    );
    let json = serde_json::to_value(&snap).expect("json");
    assert_eq!(json["findings"][0]["since_s"], 1.0);
    assert_eq!(json["findings"][0]["for_s_at_least"], true);
    let text = ifxtop::tui::report::text(&snap).to_string();
    assert!(text.contains("\n           for ≥11s\n"), "{text}");
    // A snapshot alone knows its waits' start: the store's wait tracker saw them at 1 s.
    let alone = build(&s);
    assert_eq!(alone.findings[0].since_s, Some(1.0));
    assert!(alone.findings[0].for_s_at_least);
}
