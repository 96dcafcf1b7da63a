//! Shared test helpers: fixture loading and insta snapshots in the top-level `snapshots/`.
#![allow(dead_code)]

pub mod fake_onstat;
pub mod feed;
pub mod pki;

use std::path::{Path, PathBuf};

/// The store settings of the demo's instance from its second 0: its listener, clock and host.
pub fn demo_settings() -> ifxtop::store::StoreSettings {
    ifxtop::store::StoreSettings {
        ports: vec![ifxtop::demo::LISTENER_PORT],
        wall_start: Some(ifxtop::demo::EPOCH),
        host: Some(ifxtop::demo::HOST.into()),
        ..ifxtop::store::StoreSettings::default()
    }
}

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The path of `tests/fixtures/<rel>`, as an argument for a command line.
pub fn fixture_path(rel: &str) -> String {
    fixtures_dir().join(rel).display().to_string()
}

/// A TCP port free on loopback now (bound, read, released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The text of `tests/fixtures/<rel>`.
pub fn fixture(rel: &str) -> String {
    let p = fixtures_dir().join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("fixture {}: {e}", p.display()))
}

/// The directories of `tests/fixtures/` (one per command or file read), sorted.
pub fn fixture_dirs() -> Vec<String> {
    let mut dirs: Vec<String> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    dirs
}

/// Every `.txt` fixture in `tests/fixtures/<dir>/`, sorted, as (file stem, text).
pub fn fixtures_in(dir: &str) -> Vec<(String, String)> {
    let d = fixtures_dir().join(dir);
    let mut v: Vec<_> = std::fs::read_dir(&d)
        .unwrap_or_else(|e| panic!("fixture dir {}: {e}", d.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .map(|p| {
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(&p)
                .unwrap_or_else(|e| panic!("fixture {}: {e}", p.display()));
            (stem, text)
        })
        .collect();
    v.sort();
    v
}

/// The `ifxtop parse` kind named `name` (panics on a name the registry does not have).
pub fn kind(name: &str) -> ifxtop::source::Kind {
    ifxtop::source::Kind::from_name(name).unwrap_or_else(|| panic!("no parse kind {name}"))
}

/// Snapshot a serializable value as JSON into the top-level `snapshots/` directory.
#[macro_export]
macro_rules! snap_json {
    ($name:expr, $value:expr) => {
        insta::with_settings!({
            snapshot_path => concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_json_snapshot!($name, $value);
        })
    };
}

/// Snapshot a string (a rendered screen, CLI output) into the top-level `snapshots/` directory.
#[macro_export]
macro_rules! snap_text {
    ($name:expr, $value:expr) => {
        insta::with_settings!({
            snapshot_path => concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!($name, $value);
        })
    };
}

/// Processes (not zombies) whose command line holds `marker`, by /proc: what a test's fake
/// onstat left behind.
pub fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let cmdline = std::fs::read(format!("/proc/{name}/cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(format!("/proc/{name}/stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        if !zombie && String::from_utf8_lossy(&cmdline).contains(marker) {
            found.push(name);
        }
    }
    found
}

/// A hand-written `onstat -u` ends as a real one does, with its `N active, M total` footer: a
/// polled one without it is taken as cut short. Other sources' texts are left as they are.
pub fn with_u_footer(source: ifxtop::source::Source, text: &str) -> String {
    if source != ifxtop::source::Source::OnstatU || text.contains(" active,") {
        return text.to_string();
    }
    let rows = text
        .lines()
        .filter(|l| l.split_whitespace().nth(1).is_some_and(|f| f.len() == 7))
        .count();
    format!(
        "{}\n {rows} active, 1024 total, {rows} maximum concurrent\n",
        text.trim_end()
    )
}

/// Whether the tests run in CI (`CI` set to anything but empty, `0` or `false`, as CI services
/// set it and `.ci/run` does): there a test whose program is missing fails instead of skipping.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// Whether `program` (a path, or a name looked up on the PATH) is there for `test`. Missing:
/// in CI a failure naming the Debian package (`./test` installs it); elsewhere the test says
/// it skipped and passes.
pub fn have(program: &str, package: &str, test: &str) -> bool {
    let found = if program.contains('/') {
        Path::new(program).exists()
    } else {
        std::env::var_os("PATH").is_some_and(|paths| {
            std::env::split_paths(&paths).any(|dir| dir.join(program).is_file())
        })
    };
    if found {
        return true;
    }
    assert!(
        !in_ci(),
        "{test}: {program} is missing (Debian package {package}; ./test installs it)"
    );
    eprintln!(
        "SKIPPED {test}: {program} not found (Debian package {package}; ./test installs it); \
         in CI this is a failure"
    );
    false
}

/// The demo of seed 1 from 280 s to 520 s (the lock chain, the checkpoint stall, the mutex
/// contention) watched while recording, as the screen records: the recording (its outputs and
/// its database-time track), read back for a walk, with the settings a replay takes and the
/// samples the watch kept.
pub struct RecordedDemo {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
    pub rec: std::sync::Arc<ifxtop::collect::record::Recording>,
    pub settings: ifxtop::store::StoreSettings,
    pub live: ifxtop::model::activity::Activity,
}

pub fn recorded_demo() -> RecordedDemo {
    use std::time::Duration;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("demo.jsonl.zst");
    let settings = ifxtop::store::StoreSettings {
        wall_start: Some(ifxtop::demo::EPOCH),
        ..ifxtop::store::StoreSettings::default()
    };
    let mut track = Vec::new();
    let mut live = ifxtop::model::activity::Activity::new();
    let (_, samples) = ifxtop::instance::walk::demo_store_sampled(
        ifxtop::demo::DemoInstance::new(1),
        Duration::from_secs(280),
        Duration::from_secs(520),
        settings.clone(),
        true,
        Some(&mut live),
        Some(&mut track),
    )
    .expect("the demo runs");
    ifxtop::commands::snapshot::write_recording_tracked(
        &path,
        Some("ol_demo"),
        &settings,
        samples.iter().cloned(),
        Some(&track),
    )
    .expect("the recording is written");
    let rec = std::sync::Arc::new(
        ifxtop::collect::record::read_replayable_for_walk(&path).expect("the recording reads"),
    );
    let settings = ifxtop::instance::walk::replay_settings(&rec, settings);
    RecordedDemo {
        dir,
        path,
        rec,
        settings,
        live,
    }
}
