//! The mixin in `mixin/`: its alert and recording rules pass `promtool check rules` and its
//! unit tests (`promtool test rules`, series modelled on the demo's incidents); the Grafana
//! dashboard parses, and every rule and panel names only metrics `serve` declares.

use crate::{available, PROMTOOL};
use ifxtop::commands::serve::metrics::Metric;
use std::path::{Path, PathBuf};
use std::process::Command;

fn mixin(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("mixin")
        .join(rel)
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(mixin(rel)).unwrap_or_else(|e| panic!("mixin/{rel}: {e}"))
}

/// `promtool ARGS`: whether it succeeded, and what it said.
fn promtool(args: &[&std::ffi::OsStr]) -> (bool, String) {
    let out = Command::new(PROMTOOL)
        .args(args)
        .output()
        .expect("promtool runs");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// The exporter's metric names in `text`: every word starting `informix_` or `ifxtop_` that is
/// not a recording rule's name (those have a `:`).
fn metric_names(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .filter(|w| (w.starts_with("informix_") || w.starts_with("ifxtop_")) && !w.contains(':'))
        .map(String::from)
        .collect()
}

fn declared() -> Vec<&'static str> {
    Metric::ALL.iter().map(|m| m.name()).collect()
}

#[test]
fn the_rules_pass_promtool_check_and_their_unit_tests() {
    if !available(
        PROMTOOL,
        "the_rules_pass_promtool_check_and_their_unit_tests",
    ) {
        return;
    }
    let (ok, said) = promtool(&[
        "check".as_ref(),
        "rules".as_ref(),
        mixin("alerts.yml").as_os_str(),
        mixin("rules.yml").as_os_str(),
    ]);
    assert!(ok, "promtool check rules:\n{said}");
    assert!(said.contains("SUCCESS: 12 rules found"), "{said}");
    assert!(said.contains("SUCCESS: 8 rules found"), "{said}");
    let (ok, said) = promtool(&[
        "test".as_ref(),
        "rules".as_ref(),
        mixin("tests/alerts_test.yml").as_os_str(),
    ]);
    assert!(ok, "promtool test rules:\n{said}");
    assert!(said.contains("SUCCESS"), "{said}");

    // The unit tests test something: the lock-chain alert at 10 minutes instead of 60 s, the
    // critical-finding alert firing on a warning, and the replica lag alert ignoring a lower
    // bound, each fail them.
    for (from, to) in [
        (
            "informix_longest_wait_seconds{reason=\"lock\"} > 60",
            "informix_longest_wait_seconds{reason=\"lock\"} > 600",
        ),
        (
            "expr: informix_finding_severity >= 3",
            "expr: informix_finding_severity >= 2",
        ),
        (
            "expr: informix_replication_lag_seconds > 30",
            "expr: informix_replication_lag_seconds > 30 unless on (job, instance, server, peer, type) informix_replication_lag_lower_bound == 1",
        ),
    ] {
        let dir = tempfile::tempdir().expect("temp dir");
        let alerts = read("alerts.yml");
        assert!(alerts.contains(from), "{from}");
        std::fs::write(dir.path().join("alerts.yml"), alerts.replace(from, to)).expect("write");
        std::fs::write(dir.path().join("rules.yml"), read("rules.yml")).expect("write");
        std::fs::create_dir(dir.path().join("tests")).expect("mkdir");
        let test = dir.path().join("tests/alerts_test.yml");
        std::fs::write(&test, read("tests/alerts_test.yml")).expect("write");
        let (ok, said) = promtool(&["test".as_ref(), "rules".as_ref(), test.as_os_str()]);
        assert!(!ok, "the unit tests pass with {to:?}:\n{said}");
    }
}

#[test]
fn the_rules_name_only_metrics_serve_declares_and_cover_the_incidents() {
    let declared = declared();
    for file in ["alerts.yml", "rules.yml", "tests/alerts_test.yml"] {
        let text = read(file);
        let names = metric_names(&text);
        assert!(!names.is_empty(), "{file}");
        for n in names {
            assert!(
                declared.contains(&n.as_str()),
                "mixin/{file} names {n}: not declared"
            );
        }
    }
    let alerts = read("alerts.yml");
    for (alert, uses) in [
        ("InformixDown", "informix_up == 0"),
        ("InformixBlocked", "informix_blocked == 1"),
        (
            "InformixLockChain",
            "informix_longest_wait_seconds{reason=\"lock\"}",
        ),
        (
            "InformixLongTransaction",
            "informix_oldest_transaction_logs_spanned",
        ),
        (
            "InformixLogicalLogsNearlyFull",
            "informix_logical_log_used_ratio",
        ),
        (
            "InformixLogicalLogsNotBackedUp",
            "informix_logical_logs_not_backed_up",
        ),
        ("InformixReplicaLag", "informix_replication_lag_seconds"),
        (
            "InformixReplicaTransmissionBlocked",
            "informix_replication_transmission_blocked",
        ),
        (
            "InformixSlowChunkDevice",
            "informix_chunk_device_await_seconds",
        ),
        (
            "InformixCheckpointBlocking",
            "informix_blocking_checkpoints_total",
        ),
        ("InformixFindingCritical", "informix_finding_severity >= 3"),
    ] {
        let rule = alerts
            .split("- alert: ")
            .find(|r| r.starts_with(&format!("{alert}\n")))
            .unwrap_or_else(|| panic!("no alert {alert}"));
        let expr = rule
            .lines()
            .find_map(|l| l.trim().strip_prefix("expr: "))
            .unwrap_or_else(|| panic!("{alert} has no expr"));
        assert!(expr.contains(uses), "{alert}: {expr}");
        // Each alert is exercised by the unit tests.
        assert!(
            read("tests/alerts_test.yml").contains(&format!("alertname: {alert}\n")),
            "{alert} is not tested"
        );
    }
}

#[test]
fn the_dashboard_parses_and_its_panels_query_declared_metrics() {
    let dash: serde_json::Value =
        serde_json::from_str(&read("dashboards/informix.json")).expect("the dashboard is JSON");
    let declared = declared();
    let panels = dash["panels"].as_array().expect("panels");
    let mut titles = Vec::new();
    for p in panels {
        let title = p["title"].as_str().expect("a title");
        titles.push(title);
        let targets = p["targets"].as_array().expect("targets");
        assert!(!targets.is_empty(), "{title}");
        for t in targets {
            let expr = t["expr"].as_str().expect("an expr");
            let names = metric_names(expr);
            assert!(
                !names.is_empty(),
                "{title}: {expr} queries no metric of serve"
            );
            for n in names {
                assert!(
                    declared.contains(&n.as_str()),
                    "{title}: {n} is not declared"
                );
            }
        }
    }
    for want in [
        "Up",
        "Waiting threads by reason",
        "Database time by class (average active sessions)",
        "Lock waits per second",
        "Chunk device await",
        "Replica lag",
        "Findings by kind (worst severity)",
    ] {
        assert!(titles.contains(&want), "no panel {want:?}: {titles:?}");
    }
    // Database time is stacked.
    let db_time = panels
        .iter()
        .find(|p| p["title"] == "Database time by class (average active sessions)")
        .expect("the database time panel");
    assert_eq!(
        db_time["fieldConfig"]["defaults"]["custom"]["stacking"]["mode"],
        "normal"
    );
    // The server variable lists what serve exports.
    assert_eq!(
        dash["templating"]["list"][1]["definition"],
        "label_values(informix_up, server)"
    );
    // The checks are not vacuous: an undeclared name is found.
    assert_eq!(
        metric_names("rate(informix_chunk_reads_per_second[5m]) + server:informix_x:rate5m"),
        ["informix_chunk_reads_per_second"]
    );
    assert!(!declared.contains(&"informix_chunk_reads_per_second"));
}
