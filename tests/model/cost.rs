//! What ifxtop costs, from the store to the snapshot: each source's CPU a call (its share of an
//! `onstat -i` shared with others) and calls a minute; ifxtop's own CPU and its children's as a
//! share of a core; the onstat processes apart from the file reads; rates only over a full
//! minute; and on the demo or a replay, which start no process, that the children are simulated
//! rather than zeros.

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

/// A read of `/proc/net/tcp` at `t` (a file read: no process).
fn file_read(t: u64) -> Update {
    Update {
        source: Source::ProcNetTcp,
        t: Duration::from_secs(t),
        took: Duration::ZERO,
        result: Source::ProcNetTcp.parse(Output {
            exit: Some(0),
            stdout: "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n".into(),
            stderr: String::new(),
        }),
        how: How::default(),
    }
}

/// A run of `source` at `t` that timed out (a process ran, `how` says how it was shared).
fn timed_out(source: Source, t: Duration, how: How) -> Update {
    Update {
        source,
        t,
        took: Duration::ZERO,
        result: Err(ifxtop::error::SourceError::Timeout {
            after: Duration::from_secs(10),
        }),
        how,
    }
}

/// Each second for `secs` seconds: one `onstat -i` of 4 options (this source's share of it:
/// a quarter of a process) that took 8 ms of CPU, and two file reads; ifxtop itself uses 10 ms
/// a second and its children 8 ms.
fn live_store(secs: u64) -> Store {
    let mut store = Store::new(StoreSettings::default());
    for t in 0..=secs {
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
                    simulation_cpu: Duration::ZERO,
                    children_cpu: Duration::from_millis(500 + 8 * t),
                    processes: 100 + t,
                }),
                live: true,
            },
        ));
        store.apply(file_read(t));
        store.apply(file_read(t));
    }
    store
}

fn close(a: &serde_json::Value, b: f64) -> bool {
    a.as_f64().is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn live_calls_show_their_cpu_and_ifxtop_its_share_of_a_core() {
    let j = json(&live_store(60));
    let u = j["sources"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["source"] == "onstat -u"))
        .expect("onstat -u");
    assert_eq!(u["cpu_ms_per_call"], 2.0, "{u}");
    // 61 runs a second apart: 60 after the first, in the 60 s since it.
    assert!(close(&u["calls_per_min"], 60.0), "61 runs over 60 s: {u}");
    assert_eq!(
        u["bytes_per_call"], 31_000.0,
        "the mean of 1,000..=61,000: {u}"
    );
    assert_eq!(u["via"], "onstat -i: one process for 4 options");
    let c = &j["cost"];
    assert_eq!(c["children"], "measured", "{c}");
    assert_eq!(c["self_cpu_s"], 1.6);
    assert_eq!(c["children_cpu_s"], 0.98);
    assert!(close(&c["self_core_share"], 0.01), "{c}");
    assert!(close(&c["children_core_share"], 0.008), "{c}");
    // Processes apart from file reads: a quarter of an onstat -i a second, two reads a second;
    // the counts are all of them, the rates those after the first second in the 60 s since.
    assert!(close(&c["onstat_processes"], 61.0 / 4.0), "{c}");
    assert!(close(&c["onstat_processes_per_min"], 60.0 / 4.0), "{c}");
    assert_eq!(c["file_reads"], 122, "{c}");
    assert!(close(&c["file_reads_per_min"], 120.0), "{c}");
    assert!(close(&c["other_processes_per_min"], 0.0), "{c}");
}

/// A collector that starts one `onstat -i` a second reads 60 processes a minute from its first
/// minute on, not 61 over its first minute and 60.5 over its second (the first instant's process counted
/// as if it had taken a second of its own), and a source that began later counts all of its
/// runs: its first is after the window's first instant.
#[test]
fn one_process_a_second_is_sixty_a_minute() {
    let mut store = Store::new(StoreSettings::default());
    let shared = How {
        shared: 2,
        live: true,
        ..How::default()
    };
    for t in 0..=120u64 {
        store.apply(update(t, shared.clone()));
        // The other half of each second's onstat -i.
        store.apply(timed_out(
            Source::OnstatGCon,
            Duration::from_secs(t),
            shared.clone(),
        ));
        if t >= 30 && t % 10 == 0 {
            // Every 10 s from 30 s on, a process of its own.
            store.apply(timed_out(
                Source::OnstatGSeg,
                Duration::from_secs(t),
                How {
                    live: true,
                    ..How::default()
                },
            ));
        }
        if t >= 60 {
            let c = json(&store)["cost"].clone();
            // One a second from 0 s; one every 10 s from 30 s on (30, 40, ... up to t).
            let seg = (t - 30) / 10 + 1;
            let want = (t as f64 + seg as f64) * 60.0 / t as f64;
            assert!(close(&c["onstat_processes_per_min"], want), "at {t} s: {c}");
            assert!(
                close(&c["onstat_processes"], (t + 1 + seg) as f64),
                "at {t} s: {c}"
            );
        }
    }
    let j = json(&store);
    let u = j["sources"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["source"] == "onstat -u"))
        .expect("onstat -u");
    assert!(close(&u["calls_per_min"], 60.0), "{u}");
}

/// The collectors' first tick is one origin though its calls start a little apart (the
/// socket table read at 0 ms, the `onstat -i` 250 ms later): its process is not counted as
/// a second's worth of its own. A source first run in a later tick (`-k`, asked for by what
/// the first tick's `onstat -u` showed) counts all its runs, even within 400 ms of the first.
#[test]
fn the_first_tick_is_one_origin_though_its_calls_start_apart() {
    let mut store = Store::new(StoreSettings::default());
    let at = |ms: u64, u: Update| Update {
        t: Duration::from_millis(ms),
        ..u
    };
    for t in 0..=90u64 {
        store.apply(at(t * 1000, file_read(t)));
        store.apply(at(t * 1000 + 250, update(t, How::default())));
        if t >= 1 {
            // With the second tick's onstat -i, 1,250 ms after the first call.
            store.apply(timed_out(
                Source::OnstatK,
                Duration::from_millis(t * 1000 + 250),
                How::default(),
            ));
        }
    }
    store.latest = Duration::from_millis(90_250);
    let j = json(&store);
    let c = &j["cost"];
    // -u: 90 after the first tick; -k: all of its 90; over 90.25 s.
    assert!(
        close(&c["onstat_processes_per_min"], 180.0 * 60.0 / 90.25),
        "{c}"
    );
    assert!(close(&c["file_reads_per_min"], 90.0 * 60.0 / 90.25), "{c}");
}

/// At a short interval (`--interval 0.2`) the second tick begins before the first tick's
/// `onstat -i` has been 400 ms away: the first tick ends where a source first runs again, not
/// at a fixed time after the first call. A source first run in the second tick, 300 ms after
/// the first call, counts all its runs.
#[test]
fn the_first_tick_ends_where_a_source_runs_again() {
    let mut store = Store::new(StoreSettings::default());
    for k in 0..=350u64 {
        let tick = k * 200;
        store.apply(Update {
            t: Duration::from_millis(tick),
            ..file_read(0)
        });
        store.apply(Update {
            t: Duration::from_millis(tick + 150),
            ..update(0, How::default())
        });
        if k >= 1 {
            store.apply(timed_out(
                Source::OnstatK,
                Duration::from_millis(tick + 100),
                How::default(),
            ));
        }
    }
    store.latest = Duration::from_millis(70_150);
    let j = json(&store);
    let c = &j["cost"];
    // -u: 350 after the first tick; -k: all of its 350; over 70.15 s.
    assert!(
        close(&c["onstat_processes_per_min"], 700.0 * 60.0 / 70.15),
        "{c}"
    );
    assert!(close(&c["file_reads_per_min"], 350.0 * 60.0 / 70.15), "{c}");
}

/// Under a minute there is no rate a minute: a count over 20 s is not "63 a minute".
#[test]
fn rates_are_only_over_a_full_minute() {
    let j = json(&live_store(20));
    let u = j["sources"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["source"] == "onstat -u"))
        .expect("onstat -u");
    assert!(u.get("calls_per_min").is_none(), "{u}");
    let c = &j["cost"];
    assert!(c["onstat_processes_per_min"].is_null(), "{c}");
    assert!(c["file_reads_per_min"].is_null(), "{c}");
    assert!(close(&c["onstat_processes"], 21.0 / 4.0), "{c}");
    assert_eq!(c["file_reads"], 42, "{c}");
    assert!(close(&c["over_s"], 20.0), "{c}");
    // ifxtop's own share needs ten seconds, not a minute.
    assert!(close(&c["self_core_share"], 0.01), "{c}");
}

/// A source run once (the extent map's `oncheck -pe`) has no rate, however long ifxtop ran:
/// once in 25 s is not 2.4 calls a minute.
#[test]
fn a_one_shot_call_is_not_a_rate() {
    let mut store = live_store(90);
    store.apply(Update {
        source: Source::OncheckPe,
        t: Duration::from_secs(65),
        took: Duration::ZERO,
        // It ran (a process) and was killed at its timeout.
        result: Err(ifxtop::error::SourceError::Timeout {
            after: Duration::from_secs(600),
        }),
        how: How::default(),
    });
    let j = json(&store);
    let pe = j["sources"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["source"] == "oncheck -pe"))
        .expect("oncheck -pe");
    assert!(pe.get("calls_per_min").is_none(), "{pe}");
    // It is counted, as one process of another command than onstat.
    let c = &j["cost"];
    assert!(close(&c["other_processes"], 1.0), "{c}");
}

#[test]
fn without_a_process_the_children_are_simulated_not_zero() {
    let mut store = Store::new(StoreSettings::default());
    for t in 0..=60u64 {
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
    assert!(close(&c["onstat_processes_per_min"], 60.0), "{c}");
    let u = &j["sources"][0];
    assert!(u.get("cpu_ms_per_call").is_none(), "{u}");
    assert!(u.get("bytes_per_call").is_none(), "nothing read: {u}");
}

/// The statements read (`onstat -g sql <sid>`, one source a session) are one line: the runs,
/// failures and bytes of them all; the age, error and how it ran of the newest read.
#[test]
fn the_statements_read_are_one_source_summed_and_described_by_the_newest() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/onstat-g-sql/",
        "ifxtop-sql-812.txt"
    ))
    .expect("fixture");
    let mut store = Store::new(StoreSettings::default());
    store.apply(update(100, How::default()));
    // Sessions 10, 11 and 12 read at 90, 97 and 95 s, 1,000, 2,000 and 3,000 bytes each;
    // session 11 read twice.
    for (sid, t, bytes, note) in [
        (10, 90, 1_000, "first"),
        (11, 96, 2_000, "older of 11"),
        (11, 97, 2_000, "newest"),
        (12, 95, 3_000, "middle"),
    ] {
        let source = Source::OnstatGSql(ifxtop::ids::Sid(sid));
        store.apply(Update {
            source,
            t: Duration::from_secs(t),
            took: Duration::ZERO,
            result: source.parse(Output {
                exit: Some(5),
                stdout: text.clone(),
                stderr: String::new(),
            }),
            how: How {
                note: Some(note.into()),
                bytes: Some(bytes),
                ..How::default()
            },
        });
    }
    let j = serde_json::to_value(snapshot::build(
        &store,
        Duration::from_secs(100),
        Some("test"),
        &[],
    ))
    .expect("json");
    let sql: Vec<&serde_json::Value> = j["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .filter(|s| s["source"].as_str().is_some_and(|l| l.contains("-g sql")))
        .collect();
    assert_eq!(sql.len(), 1, "{sql:?}");
    let s = sql[0];
    assert_eq!(s["source"], "onstat -g sql", "{s}");
    assert_eq!(s["runs"], 4, "{s}");
    assert_eq!(s["via"], "newest", "{s}");
    assert!(close(&s["age_s"], 3.0), "{s}");
    assert_eq!(s["bytes_per_call"], 2_000.0, "{s}");
}
