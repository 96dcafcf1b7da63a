//! The findings on real captures: a `Blocked:CKPT` banner with a session in a critical section,
//! an off-line server, a primary whose log transmission to an RSS secondary is blocked.

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
    });
}

fn build(store: &Store) -> Snapshot {
    snapshot::build(store, store.latest, Some("test"), &[])
}

#[test]
fn a_blocked_checkpoint_names_the_critical_section() {
    let mut s = Store::new(StoreSettings::default());
    let u = fixture("onstat-u/ifxtop-banner-ckpt-req-critical-section.txt");
    apply(&mut s, Source::OnstatU, 1, 5, &u);
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
