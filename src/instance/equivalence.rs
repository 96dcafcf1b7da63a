//! The guard of the snapshot's parts: over the demo's whole timeline, walked by the real
//! collectors on the one headless loop, every snapshot built from the parts kept (the ones whose
//! sources did not move shared with the snapshot before) equals the one built whole.

use crate::demo::DemoInstance;
use crate::instance::watch::check;
use crate::store::StoreSettings;
use std::time::Duration;

/// Walks `demo` through its whole timeline, comparing every build; panics on the first
/// difference with both snapshots.
fn walk_compared(demo: DemoInstance, label: &str) {
    let settings = StoreSettings {
        ports: vec![crate::demo::LISTENER_PORT],
        ..StoreSettings::default()
    };
    let whole = Duration::from_secs(crate::demo::timeline::CYCLE);
    check::start();
    // Sampling database time, the walk builds a snapshot whenever the screen would.
    let mut activity = crate::model::activity::Activity::new();
    let walked = crate::instance::walk::demo_store_sampled(
        demo,
        Duration::ZERO,
        whole,
        settings,
        false,
        Some(&mut activity),
        None,
    );
    let checked = check::finish();
    walked.expect("the demo walks");
    if let Some((at, kept, full)) = checked.differed.first() {
        let first = kept
            .lines()
            .zip(full.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        let around = |s: &str| {
            s.lines()
                .skip(first.saturating_sub(8))
                .take(24)
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "{label}: {} of {} builds differ; the first at {at}s, from JSON line {first}:\n\
             from the parts:\n{}\nwhole:\n{}",
            checked.differences,
            checked.builds,
            around(kept),
            around(full)
        );
    }
    assert_eq!(checked.differences, 0, "{label}: builds differ (same JSON)");
    eprintln!(
        "{label}: {} builds equal; parts {:?}",
        checked.builds, checked.parts
    );
    // A build at every second of the walk at least, and parts shared most of them.
    let seconds = crate::demo::timeline::CYCLE;
    assert!(checked.builds >= seconds, "{label}: {checked:?}");
    assert!(
        checked.parts.reused > checked.parts.built / 2,
        "{label}: the parts were rarely shared: {checked:?}"
    );
    // And the rows of nearly every build filled the room of the snapshot before (the walk
    // lets each go before the next, as the screen and `serve` do).
    assert!(
        checked.parts.rooms + 10 >= checked.builds,
        "{label}: the rows' room was rarely kept: {checked:?}"
    );
}

#[test]
fn parts_equal_whole_over_the_timeline_tidy_300() {
    for seed in 1..=3 {
        walk_compared(
            DemoInstance::new(seed).with_sessions(300),
            &format!("seed {seed}, 300 sessions"),
        );
    }
}

#[test]
fn parts_equal_whole_over_the_timeline_messy_300() {
    for seed in 1..=3 {
        walk_compared(
            DemoInstance::new(seed).with_sessions(300).messy(),
            &format!("messy seed {seed}, 300 sessions"),
        );
    }
}

/// The same at 5,000 sessions: minutes (`cargo test --lib parts_equal_whole -- --ignored`).
#[test]
#[ignore = "minutes: run with --ignored"]
fn parts_equal_whole_over_the_timeline_5000() {
    for seed in 1..=3 {
        walk_compared(
            DemoInstance::new(seed).with_sessions(5_000),
            &format!("seed {seed}, 5,000 sessions"),
        );
        walk_compared(
            DemoInstance::new(seed).with_sessions(5_000).messy(),
            &format!("messy seed {seed}, 5,000 sessions"),
        );
    }
}
