//! The exposition of instances whose stores were fed real fixtures: every metric's name, type,
//! labels and value as Prometheus reads them, what goes when a source fails, and `promtool check
//! metrics` on it.

use crate::common::fixture;
use crate::{available, samples, Sample, PROMTOOL};
use ifxtop::collect::sample::Update;
use ifxtop::commands::serve::metrics::{exposition, Counted, Format, InstanceMetrics, Metric};
use ifxtop::error::SourceError;
use ifxtop::model::snapshot;
use ifxtop::source::{Output, Source};
use ifxtop::store::{Store, StoreSettings};
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BANNER: &str = "\nIBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 2 days 03:04:05 -- 2395548 Kbytes\n\n";

const CKP: &str = "onstat-g-ckp/ifxtop-20-checkpoints-5-blocking.txt";
/// The newest row of `CKP`.
const CKP_NEWEST: &str =
    "40230    10:39:41 Llog        8856:28e88018 2.7    2.3    0.0    1      0.3   0.1   0.1   286160";

fn apply(store: &mut Store, source: Source, t: u64, text: &str) {
    let result = source.parse(Output {
        exit: Some(5),
        stdout: text.to_string(),
        stderr: String::new(),
    });
    if let Err(e) = &result {
        panic!("{}: {e}", source.label());
    }
    store.apply(Update {
        source,
        t: Duration::from_secs(t),
        took: Duration::ZERO,
        result,
        how: Default::default(),
    });
}

fn fail(store: &mut Store, source: Source, t: u64, error: SourceError) {
    store.apply(Update {
        source,
        t: Duration::from_secs(t),
        took: Duration::ZERO,
        result: Err(error),
        how: Default::default(),
    });
}

/// A store with one good run of onstat -u (a thread for every wait letter), -p, -g ckp, -l,
/// -g glo and -g seg, all real fixtures.
fn store() -> Store {
    let mut s = Store::new(StoreSettings::default());
    let u = format!(
        "{BANNER}{}",
        fixture("onstat-u/ifxtop-every-wait-letter.txt")
    );
    apply(&mut s, Source::OnstatU, 1, &u);
    apply(
        &mut s,
        Source::OnstatP,
        1,
        &format!("{BANNER}{}", fixture("onstat-p/hcl-14.10-adr-0602-doc.txt")),
    );
    apply(&mut s, Source::OnstatGCkp, 1, &fixture(CKP));
    apply(
        &mut s,
        Source::OnstatL,
        1,
        &fixture("onstat-l/hcl-onedb-2.0-adr-0598-doc.txt"),
    );
    apply(
        &mut s,
        Source::OnstatGGlo,
        1,
        &fixture("onstat-g-glo/ifxtop-14.10-16-cpu-vps-wide-times.txt"),
    );
    apply(
        &mut s,
        Source::OnstatGSeg,
        1,
        &fixture("onstat-g-seg/ifxtop-64-bit-locked-vx-m.txt"),
    );
    s
}

fn metrics(
    store: &Store,
    server: &str,
    host: Option<&str>,
    counted: &mut Counted,
) -> InstanceMetrics {
    let snap = snapshot::build(store, store.latest, Some(server), &[]);
    InstanceMetrics::build(Some(server), host, store, &snap, counted, Instant::now())
}

fn text_of(instances: Vec<InstanceMetrics>, format: Format) -> String {
    exposition(
        instances.into_iter().map(Arc::new).collect(),
        Instant::now(),
        format,
    )
    .expect("encodes")
}

/// The samples of `name`.
fn of<'a>(all: &'a [Sample], name: &str) -> Vec<&'a Sample> {
    all.iter().filter(|s| s.name == name).collect()
}

/// The one sample of `name` whose labels include `with`.
fn one(all: &[Sample], name: &str, with: &[(&str, &str)]) -> f64 {
    let found: Vec<_> = of(all, name)
        .into_iter()
        .filter(|s| with.iter().all(|(k, v)| s.label(k) == Some(v)))
        .collect();
    assert_eq!(found.len(), 1, "{name} {with:?}: {found:?}");
    found[0].number()
}

#[test]
fn real_outputs_become_named_typed_labelled_series() {
    let store = store();
    let m = metrics(&store, "ol_test", None, &mut Counted::default());
    let text = text_of(vec![m], Format::Text);
    let all = samples(&text);

    assert_eq!(one(&all, "informix_up", &[]), 1.0);
    assert!(one(&all, "informix_data_age_seconds", &[]) >= 0.0);
    // onstat -u: one thread per wait letter B C G L S T Y X, none defunct.
    for (reason, n) in [
        ("buffer", 1.0),
        ("checkpoint", 1.0),
        ("log_buffer", 1.0),
        ("lock", 1.0),
        ("mutex", 1.0),
        ("transaction", 1.0),
        ("condition", 1.0),
        ("rollback", 1.0),
        ("defunct", 0.0),
    ] {
        assert_eq!(
            one(&all, "informix_waiting_threads", &[("reason", reason)]),
            n,
            "{reason}"
        );
    }
    assert_eq!(of(&all, "informix_waiting_threads").len(), 9);
    // The banner: up 2 days 03:04:05, not blocked.
    assert_eq!(
        one(&all, "informix_uptime_seconds", &[]),
        (2 * 86400 + 3 * 3600 + 4 * 60 + 5) as f64
    );
    assert_eq!(one(&all, "informix_blocked", &[("reason", "CKPT")]), 0.0);
    // The banner's version and mode; no role flag in it: a standard server.
    assert_eq!(
        one(
            &all,
            "informix_server_info",
            &[
                ("version", "12.10.FC8"),
                ("mode", "On-Line"),
                ("role", "standard")
            ]
        ),
        1.0
    );
    assert_eq!(of(&all, "informix_server_info").len(), 1);
    // Sessions by state: the fixture's eight user threads all wait; every state is there.
    for (state, n) in [
        ("running", 0.0),
        ("waiting", 8.0),
        ("idle", 0.0),
        ("idle_in_txn", 0.0),
    ] {
        assert_eq!(
            one(&all, "informix_sessions", &[("state", state)]),
            n,
            "{state}"
        );
    }
    assert_eq!(of(&all, "informix_sessions").len(), 4);
    // Each source under its short name, none a command line.
    let mut names: Vec<&str> = of(&all, "ifxtop_source_up")
        .iter()
        .filter_map(|s| s.label("source"))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "onstat_g_ckp",
            "onstat_g_glo",
            "onstat_g_seg",
            "onstat_l",
            "onstat_p",
            "onstat_u"
        ]
    );

    // onstat -p, as the fixture prints them, as counters.
    for (name, v) in [
        ("informix_lock_waits_total", 1.0),
        ("informix_lock_requests_total", 195872383.0),
        ("informix_buffer_waits_total", 176.0),
        ("informix_latch_waits_total", 18848.0),
        ("informix_deadlocks_total", 0.0),
        ("informix_checkpoint_waits_total", 1.0),
        ("informix_checkpoints_total", 1822.0),
        ("informix_sequential_scans_total", 1259170.0),
        ("informix_commits_total", 128294.0),
        ("informix_rollbacks_total", 24.0),
        ("informix_isam_calls_total", 139214865.0),
        ("informix_disk_reads_total", 16934.0),
        ("informix_disk_writes_total", 103113.0),
        ("informix_buffer_reads_total", 203600361.0),
        ("informix_buffer_writes_total", 950932.0),
    ] {
        assert_eq!(one(&all, name, &[]), v, "{name}");
        // The text format 0.0.4 names the family as the series (OpenMetrics without _total).
        assert!(
            text.contains(&format!("\n# TYPE {name} counter\n")),
            "{name} is a counter"
        );
    }
    assert_eq!(
        one(&all, "informix_cpu_seconds_total", &[("mode", "user")]),
        1551.59
    );
    assert_eq!(
        one(&all, "informix_cpu_seconds_total", &[("mode", "system")]),
        144.82
    );

    // onstat -g ckp: the newest checkpoint (40230: 2.7 s, 2.3 s flushing, not blocking) and
    // the five blocking ones of the history.
    assert_eq!(one(&all, "informix_checkpoint_duration_seconds", &[]), 2.7);
    assert_eq!(one(&all, "informix_checkpoint_flush_seconds", &[]), 2.3);
    assert_eq!(one(&all, "informix_checkpoint_block_seconds", &[]), 0.0);
    assert_eq!(one(&all, "informix_blocking_checkpoints_total", &[]), 5.0);

    // onstat -l: a ratio of 0 to 1, and the counts.
    let used = one(&all, "informix_logical_log_used_ratio", &[]);
    assert!((0.0..=1.0).contains(&used), "{used}");
    assert!(one(&all, "informix_logical_logs", &[]) >= 1.0);

    // onstat -g glo: 16 cpu VPs, busy as a ratio.
    assert_eq!(one(&all, "informix_vps", &[("class", "cpu")]), 16.0);
    assert!(!of(&all, "informix_vp_cpu_seconds_total").is_empty());

    // onstat -g seg: bytes.
    assert!(one(&all, "informix_shared_memory_bytes", &[]) > 1024.0 * 1024.0);

    // Every series names its server; none a host (a local instance).
    for s in &all {
        assert_eq!(s.label("server"), Some("ol_test"), "{s:?}");
        assert_eq!(s.label("host"), None, "{s:?}");
        assert!(s.number().is_finite(), "{s:?}");
    }
    // Every metric name is one `Metric` declares (or a counter's `_total` of one).
    let declared: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
    for s in &all {
        assert!(declared.contains(&s.name.as_str()), "{} undeclared", s.name);
    }
}

#[test]
fn openmetrics_has_counters_without_total_in_the_family_and_ends_with_eof() {
    let m = metrics(&store(), "ol_test", None, &mut Counted::default());
    let text = text_of(vec![m], Format::OpenMetrics);
    assert!(text.ends_with("# EOF\n"), "{text}");
    assert!(text.contains("\n# TYPE informix_lock_waits counter\n"));
    assert!(text.contains("\ninformix_lock_waits_total{server=\"ol_test\"} 1\n"));
    assert!(text.contains("\n# TYPE informix_up gauge\n"));
    let all = samples(text.trim_end_matches("# EOF\n"));
    assert_eq!(one(&all, "informix_up", &[]), 1.0);
    assert_eq!(
        Format::from_accept(Some(
            "application/openmetrics-text;version=1.0.0,text/plain;q=0.5"
        )),
        Format::OpenMetrics
    );
    assert_eq!(Format::from_accept(None), Format::Text);
    assert_eq!(Format::from_accept(Some("*/*")), Format::Text);
}

#[test]
fn an_instance_over_ssh_has_a_host_label_on_every_series() {
    let m = metrics(
        &store(),
        "ol_a",
        Some("db1.example"),
        &mut Counted::default(),
    );
    let all = samples(&text_of(vec![m], Format::Text));
    assert!(all.len() > 50, "{}", all.len());
    for s in &all {
        assert_eq!(s.label("server"), Some("ol_a"), "{s:?}");
        assert_eq!(s.label("host"), Some("db1.example"), "{s:?}");
    }
}

#[test]
fn a_failing_source_takes_its_series_away_and_an_off_line_server_is_down() {
    let mut s = store();
    let mut counted = Counted::default();
    fail(
        &mut s,
        Source::OnstatP,
        2,
        SourceError::Timeout {
            after: Duration::from_secs(5),
        },
    );
    let all = samples(&text_of(
        vec![metrics(&s, "ol_test", None, &mut counted)],
        Format::Text,
    ));
    assert_eq!(one(&all, "informix_up", &[]), 1.0);
    assert!(of(&all, "informix_lock_waits_total").is_empty());
    assert!(of(&all, "informix_commits_total").is_empty());
    assert_eq!(
        one(&all, "ifxtop_source_up", &[("source", "onstat_p")]),
        0.0
    );
    assert_eq!(
        one(&all, "ifxtop_source_up", &[("source", "onstat_u")]),
        1.0
    );
    // Still there: what answered.
    assert_eq!(one(&all, "informix_checkpoint_duration_seconds", &[]), 2.7);

    fail(
        &mut s,
        Source::OnstatU,
        3,
        SourceError::Offline {
            message: "shared memory not initialized".into(),
        },
    );
    let all = samples(&text_of(
        vec![metrics(&s, "ol_test", None, &mut counted)],
        Format::Text,
    ));
    assert_eq!(one(&all, "informix_up", &[]), 0.0);
    assert!(of(&all, "informix_waiting_threads").is_empty());
    assert!(of(&all, "informix_uptime_seconds").is_empty());
    assert!(of(&all, "informix_server_info").is_empty());
    assert!(of(&all, "informix_sessions").is_empty());
    assert_eq!(
        one(&all, "ifxtop_source_up", &[("source", "onstat_u")]),
        0.0
    );
}

#[test]
fn an_instance_not_answered_yet_exports_only_up_0() {
    let text = text_of(
        vec![InstanceMetrics::waiting(Some("ol_new"), None)],
        Format::Text,
    );
    let all = samples(&text);
    assert_eq!(all.len(), 1, "{text}");
    assert_eq!(one(&all, "informix_up", &[("server", "ol_new")]), 0.0);
}

#[test]
fn blocking_checkpoints_are_counted_once_each() {
    let mut s = store();
    let mut counted = Counted::default();
    let first = samples(&text_of(
        vec![metrics(&s, "ol_test", None, &mut counted)],
        Format::Text,
    ));
    assert_eq!(one(&first, "informix_blocking_checkpoints_total", &[]), 5.0);
    // The same history again: nothing new.
    let again = samples(&text_of(
        vec![metrics(&s, "ol_test", None, &mut counted)],
        Format::Text,
    ));
    assert_eq!(one(&again, "informix_blocking_checkpoints_total", &[]), 5.0);
    // One more checkpoint, blocking (the `*`), 30.2 s.
    let ckp = fixture(CKP);
    assert!(ckp.contains(CKP_NEWEST));
    let newer = ckp.replace(
        CKP_NEWEST,
        &format!(
            "{CKP_NEWEST}\n40231    10:45:00*Llog        8857:28e88018 30.2   20.0   20.0   100    0.3   10.0  20.0  286160"
        ),
    );
    apply(&mut s, Source::OnstatGCkp, 2, &newer);
    let after = samples(&text_of(
        vec![metrics(&s, "ol_test", None, &mut counted)],
        Format::Text,
    ));
    assert_eq!(one(&after, "informix_blocking_checkpoints_total", &[]), 6.0);
    assert_eq!(
        one(&after, "informix_checkpoint_duration_seconds", &[]),
        30.2
    );
}

#[test]
fn several_instances_share_each_family_header() {
    let s = store();
    let a = metrics(&s, "ol_a", None, &mut Counted::default());
    let b = InstanceMetrics::waiting(Some("ol_b"), Some("db2"));
    let text = text_of(vec![a, b], Format::Text);
    assert_eq!(text.matches("# TYPE informix_up gauge\n").count(), 1);
    let all = samples(&text);
    assert_eq!(one(&all, "informix_up", &[("server", "ol_a")]), 1.0);
    assert_eq!(
        one(&all, "informix_up", &[("server", "ol_b"), ("host", "db2")]),
        0.0
    );
    assert!(of(&all, "informix_waiting_threads")
        .iter()
        .all(|s| s.label("server") == Some("ol_a")));
}

/// `promtool check metrics` on `text`: its exit status and what it said.
fn promtool(text: &str) -> (bool, String) {
    let mut child = Command::new(PROMTOOL)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("promtool reads");
    let out = child.wait_with_output().expect("promtool ends");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

#[test]
fn promtool_accepts_the_exposition_and_has_nothing_to_lint() {
    if !available(
        PROMTOOL,
        "promtool_accepts_the_exposition_and_has_nothing_to_lint",
    ) {
        return;
    }
    let s = store();
    let text = text_of(
        vec![
            metrics(&s, "ol_a", None, &mut Counted::default()),
            metrics(&s, "ol_b", Some("db2"), &mut Counted::default()),
            InstanceMetrics::waiting(Some("ol_c"), None),
        ],
        Format::Text,
    );
    let (ok, said) = promtool(&text);
    assert!(ok, "promtool refused:\n{said}\n{text}");
    assert_eq!(said.trim(), "", "promtool's lint:\n{said}");
    // It does find problems: the check is not vacuous.
    let (ok, said) = promtool("# TYPE broken_total counter\nbroken_total{a=\"1\" 3\n");
    assert!(!ok, "promtool accepted a broken line: {said}");
}

/// The demo's slow device (620 s) and its blocked secondary (700 s) through the real
/// collectors: the slow chunk's device await and Informix's read time, the chunks' page
/// counters, the secondary's lag in pages and seconds (a lower bound when blocked for longer
/// than ifxtop watched) and transmission blocked; before the replica incident, not blocked;
/// the server's info and its sessions by state.
#[test]
fn chunk_latency_and_replication_lag_are_exported() {
    let demo_metrics = |from: u64, to: u64| {
        let settings = StoreSettings {
            ports: vec![ifxtop::demo::LISTENER_PORT],
            ..StoreSettings::default()
        };
        let (store, _) = ifxtop::commands::snapshot::demo_store(
            ifxtop::demo::DemoInstance::new(1),
            Duration::from_secs(from),
            Duration::from_secs(to),
            settings,
            false,
        )
        .expect("the demo runs");
        let m = metrics(&store, "ol_demo", None, &mut Counted::default());
        let text = text_of(vec![m], Format::Text);
        // The chunk and replication series pass promtool too.
        if available(PROMTOOL, "chunk_latency_and_replication_lag_are_exported") {
            let (ok, said) = promtool(&text);
            assert!(ok && said.trim().is_empty(), "promtool:\n{said}\n{text}");
        }
        samples(&text)
    };
    let slow = demo_metrics(560, 620);
    let chunk4 = [("chunk", "4"), ("dbspace", "datadbs2")];
    let mut with_device = chunk4.to_vec();
    with_device.push(("device", "dm-8"));
    let await_s = one(&slow, "informix_chunk_device_await_seconds", &with_device);
    assert!((0.040..0.060).contains(&await_s), "{await_s}");
    assert!(one(&slow, "informix_chunk_read_latency_seconds", &chunk4) >= 0.040);
    // The other chunks' devices answer in a few milliseconds.
    for s in of(&slow, "informix_chunk_device_await_seconds") {
        if s.label("chunk") != Some("4") {
            assert!(s.number() < 0.010, "{s:?}");
        }
    }
    let peer = [("peer", "ol_dr1"), ("type", "RSS")];
    assert_eq!(
        one(&slow, "informix_replication_transmission_blocked", &peer),
        0.0
    );
    let lagging = demo_metrics(640, 700);
    assert_eq!(
        one(&lagging, "informix_replication_transmission_blocked", &peer),
        1.0
    );
    assert!(one(&lagging, "informix_replication_lag_pages", &peer) > 1000.0);
    // Blocked since 645 and watched since 640: ifxtop saw the secondary's position go by, so
    // it knows the lag (52 s at 700), no bound.
    let lag = one(&lagging, "informix_replication_lag_seconds", &peer);
    assert!((45.0..60.0).contains(&lag), "{lag}");
    assert_eq!(
        one(&lagging, "informix_replication_lag_lower_bound", &peer),
        0.0
    );
    // Watched only since 690, while blocked: the secondary's position is older than ifxtop's
    // history. The lag does not vanish: at least the 9 s watched (the replication commands ride
    // in the tick's `onstat -i` once the first tick told the server's role: from 691), said to
    // be a lower bound.
    let late = demo_metrics(690, 700);
    assert_eq!(
        one(&late, "informix_replication_transmission_blocked", &peer),
        1.0
    );
    assert_eq!(one(&late, "informix_replication_lag_seconds", &peer), 9.0);
    assert_eq!(
        one(&late, "informix_replication_lag_lower_bound", &peer),
        1.0
    );
    // Before the incident, caught up: a small lag, known.
    assert!(one(&slow, "informix_replication_lag_seconds", &peer) < 1.0);
    assert_eq!(
        one(&slow, "informix_replication_lag_lower_bound", &peer),
        0.0
    );

    // onstat -D's cumulative pages as counters (no rates of ifxtop's own): the demo's six
    // chunks, the hot datadbs1 chunk 2 reading most, the counts growing with time.
    assert_eq!(of(&slow, "informix_chunk_page_reads_total").len(), 6);
    assert_eq!(of(&slow, "informix_chunk_page_writes_total").len(), 6);
    let reads =
        |all: &[Sample], chunk: &[(&str, &str)]| one(all, "informix_chunk_page_reads_total", chunk);
    let chunk2 = [("chunk", "2"), ("dbspace", "datadbs1")];
    assert_eq!(reads(&lagging, &chunk2), 1_314_000.0);
    assert_eq!(reads(&lagging, &chunk4), 46_720.0);
    assert_eq!(
        one(&lagging, "informix_chunk_page_writes_total", &chunk4),
        11_680.0
    );
    assert!(reads(&slow, &chunk2) < reads(&lagging, &chunk2));
    for gone in [
        "informix_chunk_reads_per_second",
        "informix_chunk_writes_per_second",
        "informix_host_page_scans_total",
        "informix_host_numa_node_memory_bytes",
        "informix_host_numa_node_free_bytes",
    ] {
        assert!(of(&lagging, gone).is_empty(), "{gone}");
    }
    // Kept: what node_exporter does not read (zone_reclaim_mode, on in the demo).
    assert_eq!(one(&lagging, "informix_host_zone_reclaim_mode", &[]), 1.0);

    // The demo's primary, its version and mode.
    assert_eq!(
        one(
            &lagging,
            "informix_server_info",
            &[
                ("version", "12.10.FC8"),
                ("mode", "On-Line"),
                ("role", "primary")
            ]
        ),
        1.0
    );
    // 300 demo sessions: most idle, some running, a few waiting (every series a state).
    let sessions: f64 = of(&lagging, "informix_sessions")
        .iter()
        .map(|s| s.number())
        .sum();
    assert_eq!(sessions, 300.0);
    assert!(one(&lagging, "informix_sessions", &[("state", "idle")]) > 150.0);
    assert!(one(&lagging, "informix_sessions", &[("state", "waiting")]) >= 1.0);
    // Every source a short name: letters, digits and `_`.
    let sources = of(&lagging, "ifxtop_source_up");
    assert!(sources.len() > 20, "{sources:?}");
    for s in &sources {
        let name = s.label("source").unwrap_or_default();
        assert!(
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "{s:?}"
        );
    }
    assert_eq!(
        one(&lagging, "ifxtop_source_up", &[("source", "chunk_devices")]),
        1.0
    );
    // Every kind of finding, one series each, its value the worst severity that holds: 0 none,
    // 1 info, 2 warning, 3 critical.
    assert_eq!(
        one(
            &slow,
            "informix_finding_severity",
            &[("kind", "slow_device")]
        ),
        2.0
    );
    assert_eq!(
        one(
            &lagging,
            "informix_finding_severity",
            &[("kind", "replica_lag")]
        ),
        3.0
    );
    assert_eq!(
        one(
            &lagging,
            "informix_finding_severity",
            &[("kind", "slow_device")]
        ),
        0.0
    );
    // A finding that comes, goes or worsens changes a value, never a series: the same label
    // sets before and during the incident (a severity label started a new series at the moment
    // a finding worsened; a kind that stopped holding vanished).
    let kinds = |all: &[Sample]| {
        let mut k: Vec<Vec<(String, String)>> = of(all, "informix_finding_severity")
            .iter()
            .map(|s| s.labels.clone())
            .collect();
        k.sort();
        k
    };
    assert_eq!(kinds(&slow), kinds(&lagging));
    assert_eq!(kinds(&slow).len(), 13, "{:?}", kinds(&slow));
    for labels in kinds(&slow) {
        let keys: Vec<&str> = labels.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["server", "kind"], "{labels:?}");
    }
}

/// Before ifxtop's history of the primary's log position has two samples, a secondary whose
/// transmission is already blocked has no lag in seconds ifxtop can tell: it is exported at
/// once as a lower bound (0 s, `informix_replication_lag_lower_bound` 1), never absent (it was
/// for the first ~10 s of serve), and grows as the history does.
#[test]
fn replication_lag_is_a_lower_bound_from_the_first_sample() {
    let demo = |from: u64, to: u64| {
        let (store, _) = ifxtop::commands::snapshot::demo_store(
            ifxtop::demo::DemoInstance::new(1),
            Duration::from_secs(from),
            Duration::from_secs(to),
            StoreSettings::default(),
            false,
        )
        .expect("the demo runs");
        let m = metrics(&store, "ol_demo", None, &mut Counted::default());
        samples(&text_of(vec![m], Format::Text))
    };
    let peer = [("peer", "ol_dr1"), ("type", "RSS")];
    // The first tick tells the role; the replication commands ride in the next one.
    let first = demo(690, 692);
    assert_eq!(
        one(&first, "informix_replication_transmission_blocked", &peer),
        1.0
    );
    assert_eq!(one(&first, "informix_replication_lag_seconds", &peer), 0.0);
    assert_eq!(
        one(&first, "informix_replication_lag_lower_bound", &peer),
        1.0
    );
    // Ten seconds on, the bound has grown with the history.
    let later = demo(690, 700);
    assert!(one(&later, "informix_replication_lag_seconds", &peer) > 5.0);
    assert_eq!(
        one(&later, "informix_replication_lag_lower_bound", &peer),
        1.0
    );
}

/// Control characters (ESC, BEL, a C1 CSI) and U+202E in a label value never reach the
/// exposition raw: `curl /metrics` must not retitle a terminal or turn a line around. Here in
/// the server's name and in a `Blocked:` reason the banner names.
#[test]
fn control_characters_in_label_values_never_reach_the_exposition() {
    let mut s = Store::new(StoreSettings::default());
    let banner = "\nIBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 2 days 03:04:05 -- 2395548 Kbytes\nBlocked:X\u{1b}]0;pwned\u{7}\u{9b}2J\u{202e}gnp.exe\n\n";
    let u = format!(
        "{banner}{}",
        fixture("onstat-u/ifxtop-every-wait-letter.txt")
    );
    apply(&mut s, Source::OnstatU, 1, &u);
    let server = "ol\u{1b}[31m\u{7}\u{202e}x";
    let m = metrics(&s, server, Some("db\u{1b}[2J"), &mut Counted::default());
    for format in [Format::Text, Format::OpenMetrics] {
        let text = text_of(vec![m.clone()], format);
        for bad in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
            assert!(!text.contains(bad), "{bad:?} in:\n{text}");
        }
        let all = samples(&text);
        assert_eq!(one(&all, "informix_up", &[]), 1.0);
        assert!(all.iter().all(|s| s.label("server") == Some("ol?[31m??x")));
        assert!(all.iter().all(|s| s.label("host") == Some("db?[2J")));
        assert_eq!(
            one(
                &all,
                "informix_blocked",
                &[("reason", "X?]0;pwned??2J?gnp.exe")]
            ),
            1.0
        );
    }
}

/// docs/serve.md's table of series: every metric `serve` declares, once, with its type
/// (counters are the `_total` ones), and nothing it does not declare.
#[test]
fn the_docs_list_every_series_with_its_type() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/serve.md"))
        .expect("docs/serve.md");
    let section = doc
        .split("\n## The series\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("the series section");
    let rows: Vec<(String, String)> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .map(|l| {
            let (series, rest) = l.split_once("` | ").expect("| `series` | type | from |");
            let name = series.split('{').next().unwrap_or(series).to_string();
            let kind = rest.split(" |").next().unwrap_or("").to_string();
            (name, kind)
        })
        .collect();
    let declared: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
    for (name, kind) in &rows {
        assert!(
            declared.contains(&name.as_str()),
            "docs/serve.md lists {name}: not declared"
        );
        let want = if name.ends_with("_total") {
            "counter"
        } else {
            "gauge"
        };
        assert_eq!(kind, want, "{name}");
    }
    for name in declared {
        let n = rows.iter().filter(|(r, _)| r == name).count();
        assert_eq!(n, 1, "{name} is in docs/serve.md's table {n} times");
    }
}
