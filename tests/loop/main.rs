//! The one headless loop and its one rule for when a snapshot is built (src/instance/headless.rs,
//! src/instance/watch.rs): a watch that records and a walk through that recording afterwards
//! build at the same moments, so they take the same samples of database time.

#[path = "../common/mod.rs"]
mod common;

use ifxtop::model::activity::{Activity, Key, Query};
use std::time::Duration;

/// The demo watched while recording (the samples kept in the recording's track, as the screen
/// keeps them) and the recording's outputs parsed again by a walk: the same samples, every key
/// of them, statements included. Each build asks for the statements of the blockers and the
/// longest waits; they arrive after that build, so the sample of that moment has the statements
/// of the second before. A walk that built at its own moment (60 ms after each `onstat -u`,
/// whatever arrived in between) counted them one moment early.
#[test]
fn a_recording_walked_again_samples_what_its_watch_sampled() {
    let common::RecordedDemo {
        dir: _dir,
        rec,
        settings,
        live: watched,
        ..
    } = common::recorded_demo();
    let mut walked = Activity::new();
    ifxtop::instance::walk::replay_walk(
        rec.clone(),
        settings,
        Duration::ZERO,
        rec.length(),
        &mut walked,
    );
    let q = Query::every_key(0.0, rec.length().as_secs_f64(), 50);
    let (kept, again) = (watched.report(&q), walked.report(&q));
    assert!(kept.samples > 200 && kept.db_time_s > 0.0, "{kept:?}");
    assert!(
        !kept.list(Key::Sql).is_empty(),
        "the watch collected statements"
    );
    for key in Key::ALL {
        assert_eq!(kept.list(key), again.list(key), "{key:?}");
    }
    assert_eq!(kept, again);
}
