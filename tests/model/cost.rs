//! What ifxtop costs (issue 23), from the store to the snapshot: each source's CPU a call (its
//! share of an `onstat -i` shared with others) and calls a minute; ifxtop's own CPU and its
//! children's as a share of a core; and on the demo or a replay, which start no process, that
//! the children are simulated rather than zeros.

use ifxtop::collect::sample::{How, Update};
use ifxtop::model::snapshot;
use ifxtop::source::cost::ProcessCost;
use ifxtop::source::{Output, Source};
use ifxtop::store::{Store, StoreSettings};
use std::time::Duration;

const U: &str = "\nIBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 00:10:00 -- 2457600 Kbytes\n\nUserthreads\naddress          flags   sessid   user     tty      wait             tout locks nreads   nwrites\n 0 active, 128 total, 1 maximum concurrent\n";

fn update(t: u64, how: How) -> Update {
    Update {
        source: Source::OnstatU,
        t: Duration::from_secs(t),
        took: Duration::ZERO,
        result: Source::OnstatU.parse(Output {
            exit: Some(5),
            stdout: U.into(),
            stderr: String::new(),
        }),
        how,
    }
}

fn json(store: &Store) -> serde_json::Value {
    serde_json::to_value(snapshot::build(store, store.latest, Some("test"), &[])).expect("json")
}

#[test]
fn live_calls_show_their_cpu_and_ifxtop_its_share_of_a_core() {
    let mut store = Store::new(StoreSettings::default());
    // 21 calls over 20 s, each one onstat -i of 4 options that took 8 ms of CPU; ifxtop itself
    // used 0.2 s and its children 0.168 s over those 20 s, starting 20 processes.
    for t in 0..=20u64 {
        store.apply(update(
            t,
            How {
                note: Some("onstat -i: one process for 4 options".into()),
                cpu: Some(Duration::from_millis(8)),
                shared: 4,
                // Its part of each call: 1,000 bytes more every second.
                bytes: Some(1000 * (t + 1)),
                process: Some(ProcessCost {
                    self_cpu: Duration::from_millis(1000 + 10 * t),
                    children_cpu: Duration::from_millis(500 + 8 * t),
                    processes: 100 + t,
                }),
            },
        ));
    }
    let j = json(&store);
    let u = j["sources"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["source"] == "onstat -u"))
        .expect("onstat -u");
    assert_eq!(u["cpu_ms_per_call"], 2.0, "{u}");
    assert_eq!(u["calls_per_min"], 63.0, "{u}");
    assert_eq!(
        u["bytes_per_call"], 11_000.0,
        "the mean of 1,000..=21,000: {u}"
    );
    assert_eq!(u["via"], "onstat -i: one process for 4 options");
    let c = &j["cost"];
    assert_eq!(c["children"], "measured", "{c}");
    assert_eq!(c["self_cpu_s"], 1.2);
    assert_eq!(c["children_cpu_s"], 0.66);
    assert!(
        (c["self_core_share"].as_f64().expect("share") - 0.01).abs() < 1e-9,
        "{c}"
    );
    assert!(
        (c["children_core_share"].as_f64().expect("share") - 0.008).abs() < 1e-9,
        "{c}"
    );
    assert_eq!(c["processes_per_min"], 60.0, "{c}");
}

#[test]
fn without_a_process_the_children_are_simulated_not_zero() {
    let mut store = Store::new(StoreSettings::default());
    for t in 0..=20u64 {
        store.apply(update(t, How::default()));
    }
    let j = json(&store);
    let c = &j["cost"];
    assert_eq!(
        c["children"], "simulated: the demo or a replay starts no onstat process",
        "{c}"
    );
    assert!(
        c["self_cpu_s"].is_null() && c["children_cpu_s"].is_null(),
        "{c}"
    );
    assert_eq!(c["calls_per_min"], 63.0, "{c}");
    let u = &j["sources"][0];
    assert!(u.get("cpu_ms_per_call").is_none(), "{u}");
    assert!(u.get("bytes_per_call").is_none(), "nothing read: {u}");
}
