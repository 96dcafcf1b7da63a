//! Database time (`model/activity.rs`) against the demo's ground truth: the real collectors,
//! store and joins on a paused clock sample every `onstat -u` moment; the demo's truth says what
//! every session did at each second. Over every incident, the seconds of each class are the
//! truth's, the class that grew most against the calm stretch before is the truth's, and within
//! it the head blocker with the most database time is the truth's; calm stretches stay at their
//! baseline. `ifxtop ash` over a recording gives the same table as the live sampling did.

#[path = "../common/mod.rs"]
mod common;

use ifxtop::commands::ash::demo_activity;
use ifxtop::demo::timeline::{Incident, CYCLE, TIMELINE};
use ifxtop::demo::truth::{Dispatch, SessionTruth, State, Truth, TruthWalk};
use ifxtop::demo::DemoInstance;
use ifxtop::model::activity::{Activity, Class, Key, Query, Report};
use std::collections::BTreeMap;
use std::time::Duration;

const SEED: u64 = 1;
const SESSIONS: usize = 300;

/// The class a session's truth stands for in database time (`None`: idle, not database time;
/// as the oracle of `tests/truth` says, a client wait with nothing queued is idle). Running,
/// reading pages, in a critical section or rolling back: where it is at the instant, on a CPU
/// or waiting for one (one class here) or waiting for a disk.
fn truth_class(s: &SessionTruth) -> Option<Class> {
    Some(match s.state {
        State::Idle => return None,
        State::SlowFetch if s.send_q == 0 => return None,
        State::SlowFetch => Class::Condition,
        State::Running | State::Reading | State::Critical | State::Rollback => match s.dispatch? {
            Dispatch::OnCpu | Dispatch::Ready => Class::Cpu,
            Dispatch::Io => Class::Io,
        },
        State::Mutex => Class::Mutex,
        State::Buffer => Class::Buffer,
        State::Checkpoint => Class::Checkpoint,
        State::Lock => Class::Lock,
        State::LogWait => Class::LogBuffer,
    })
}

/// ifxtop's classes as the truth tells them apart (CPU and CPU wait are one).
fn merged(c: Class) -> Class {
    if c == Class::CpuWait {
        Class::Cpu
    } else {
        c
    }
}

/// The truth's seconds of each class and of each (class, head blocker), over a window.
#[derive(Default, Debug)]
struct TruthTime {
    seconds: u64,
    by_class: BTreeMap<Class, f64>,
    heads: BTreeMap<(Class, u64), f64>,
    /// Seconds of waiting on each mutex, by its name.
    mutexes: BTreeMap<&'static str, f64>,
}

impl TruthTime {
    fn of(truths: &BTreeMap<u64, Truth>, from: u64, to: u64) -> TruthTime {
        let mut t = TruthTime::default();
        for truth in truths.range(from + 1..=to).map(|(_, t)| t) {
            t.seconds += 1;
            for m in &truth.mutexes {
                *t.mutexes.entry(m.name).or_default() += m.waiters.len() as f64;
            }
            for s in truth.sessions.values() {
                let Some(c) = truth_class(s) else {
                    continue;
                };
                *t.by_class.entry(c).or_default() += 1.0;
                if let Some(h) = s.head {
                    *t.heads.entry((c, h)).or_default() += 1.0;
                }
            }
        }
        t
    }

    fn aas(&self, c: Class) -> f64 {
        self.by_class.get(&c).copied().unwrap_or(0.0) / self.seconds.max(1) as f64
    }
}

fn aas(r: &Report, c: Class) -> f64 {
    let secs = if c == Class::Cpu {
        r.class_secs(Class::Cpu) + r.class_secs(Class::CpuWait)
    } else {
        r.class_secs(c)
    };
    secs / r.window_s.max(1.0)
}

const CLASSES: [Class; 8] = [
    Class::Cpu,
    Class::Io,
    Class::Lock,
    Class::Buffer,
    Class::Mutex,
    Class::Checkpoint,
    Class::LogBuffer,
    Class::Condition,
];

/// The class that grew most from `calm` to `incident` against its own calm level (a count's
/// noise grows as its square root: 90 sessions on CPU that become 94 are noise, 0.2 in lock
/// waits that become 3 are not), with its growth in average active sessions.
fn grew_most(calm: impl Fn(Class) -> f64, incident: impl Fn(Class) -> f64) -> (Class, f64) {
    CLASSES
        .into_iter()
        .map(|c| {
            let growth = incident(c) - calm(c);
            (c, growth, growth / (calm(c) + 1.0).sqrt())
        })
        .max_by(|a, b| a.2.total_cmp(&b.2))
        .map(|(c, g, _)| (c, g))
        .expect("as the test set it up")
}

/// The demo's second pass through its timeline, from the calm tail of the first (so the first
/// incident has a calm stretch before it): ifxtop's activity and the truth at every second.
type Timeline = (Activity, BTreeMap<u64, Truth>, Vec<(u64, u64, Incident)>);

fn timeline() -> Timeline {
    let tail = TIMELINE.last().expect("as the test set it up").end;
    let mut phases = vec![(tail, CYCLE, Incident::Calm)];
    phases.extend(
        TIMELINE
            .iter()
            .map(|p| (CYCLE + p.start, CYCLE + p.end, p.incident)),
    );
    let (start, end) = (tail, CYCLE + tail);
    let demo = DemoInstance::new(SEED).with_sessions(SESSIONS);
    let activity = demo_activity(
        demo.clone(),
        Duration::from_secs(start),
        Duration::from_secs(end),
    )
    .expect("as the test set it up");
    let mut walk = TruthWalk::new(&demo, start.saturating_sub(200));
    let mut truths = BTreeMap::new();
    loop {
        let t = walk.next();
        if t.t > end {
            break;
        }
        truths.insert(t.t, t);
    }
    (activity, truths, phases)
}

/// The samples of a phase `[start, end)` as a query's window: the moments after `from` up to
/// `to`. Samples older than five minutes are kept in 10-second buckets (a bucket is in a window
/// when its middle is), so the window is the whole buckets inside the phase: from its first
/// multiple of ten to its last. `None` for a phase holding no whole bucket.
fn window(start: u64, end: u64) -> Option<(u64, u64)> {
    let a = start.div_ceil(BUCKET) * BUCKET;
    let z = end / BUCKET * BUCKET;
    (z > a).then(|| (a - 1, z - 1))
}

const BUCKET: u64 = ifxtop::model::activity::BUCKET as u64;

#[test]
fn database_time_names_each_incident_as_the_truth_does() {
    let (activity, truths, phases) = timeline();
    let mut table = String::new();
    let mut failures = Vec::new();
    let mut calm_before: Option<(u64, u64)> = None;
    for (start, end, incident) in phases {
        let Some((from, to)) = window(start, end) else {
            continue;
        };
        let report = activity.report(&Query::every_key(from as f64, to as f64, 5));
        let truth = TruthTime::of(&truths, from, to);
        // Every second sampled, and each class's seconds as the truth counts them.
        if report.samples != truth.seconds {
            failures.push(format!(
                "{:?} {from}-{to}: {} samples for {} seconds",
                incident, report.samples, truth.seconds
            ));
        }
        for c in CLASSES {
            let (ours, theirs) = (aas(&report, c), truth.aas(c));
            if (ours - theirs).abs() > 0.02 * theirs.max(1.0) {
                failures.push(format!(
                    "{:?} {from}-{to}: {c:?} {ours:.3} average active sessions, the truth {theirs:.3}",
                    incident
                ));
            }
        }
        if incident == Incident::Calm {
            calm_before = Some((from, to));
            continue;
        }
        let Some((cf, ct)) = calm_before else {
            continue;
        };
        let calm = activity.report(&Query::every_key(cf as f64, ct as f64, 5));
        let calm_truth = TruthTime::of(&truths, cf, ct);
        let (truth_class, truth_growth) = grew_most(|c| calm_truth.aas(c), |c| truth.aas(c));
        let (our_class, our_growth) = grew_most(|c| aas(&calm, c), |c| aas(&report, c));
        let _ = std::fmt::Write::write_fmt(
            &mut table,
            format_args!(
                "{:<22} truth {:<11} +{:>6.2}   ifxtop {:<11} +{:>6.2}\n",
                format!("{:?}", incident),
                format!("{truth_class:?}"),
                truth_growth,
                format!("{our_class:?}"),
                our_growth
            ),
        );
        if truth_growth < 1.0 {
            // Nothing grows in the truth (the slow device and the replica's lag cost the
            // sessions no waiting here): nothing may grow in ifxtop's either.
            if our_growth >= 1.0 {
                failures.push(format!(
                    "{:?}: {our_class:?} grew by {our_growth:.2} where the truth grew nothing",
                    incident
                ));
            }
            continue;
        }
        if merged(our_class) != truth_class {
            failures.push(format!(
                "{:?}: {our_class:?} grew most, the truth says {truth_class:?}",
                incident
            ));
            continue;
        }
        // Within the class, the head blocker with the most database time is the truth's.
        let truth_head = truth
            .heads
            .iter()
            .filter(|((c, _), _)| *c == truth_class)
            .max_by(|a, b| a.1.total_cmp(b.1).then(b.0 .1.cmp(&a.0 .1)))
            .map(|((_, h), secs)| (*h, *secs));
        let within = activity.report(&Query {
            filter: Some((Key::Class, truth_class.name().to_string())),
            ..Query::every_key(from as f64, to as f64, 5)
        });
        let our_head = within
            .list(Key::HeadBlocker)
            .iter()
            .find(|e| e.key != "-")
            .map(|e| (e.key.clone(), e.db_time_s));
        // Waiting on a mutex: the mutex with the most waiting is the truth's.
        if truth_class == Class::Mutex {
            let truth_mutex = truth
                .mutexes
                .iter()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .map(|(n, _)| n.to_string());
            let ours = within.list(Key::Object).first().map(|e| e.key.clone());
            if truth_mutex != ours {
                failures.push(format!(
                    "{incident:?}: top mutex {ours:?}, the truth {truth_mutex:?}"
                ));
            }
        }
        match (truth_head, our_head) {
            (Some((h, secs)), Some((k, ours)))
                if secs >= truth.seconds as f64 && k != h.to_string() =>
            {
                failures.push(format!(
                    "{incident:?}: head blocker {k} ({ours}s), the truth {h} ({secs}s)"
                ));
            }
            (Some((h, secs)), None) if secs >= truth.seconds as f64 => failures.push(format!(
                "{:?}: no head blocker, the truth {h} ({secs}s)",
                incident
            )),
            _ => {}
        }
    }
    println!("{table}");
    assert!(failures.is_empty(), "{table}\n{}", failures.join("\n"));
}

fn ifxtop(args: &[&str], path: &std::path::Path) -> serde_json::Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(args)
        .arg(path)
        .output()
        .expect("as the test set it up");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("as the test set it up")
}

const EVERY_KEY: [&str; 2] = [
    "--group",
    "class,sql,user,host,program,object,session,head_blocker",
];

/// `ifxtop ash` over a recording gives the same table as the sampling did live: the demo
/// recorded, then read back, from the database-time track a zstd recording keeps (the samples
/// taken while recording) and from the outputs parsed again (a plain recording has no track;
/// `--rederive` ignores one).
#[test]
fn a_recording_gives_the_live_table() {
    let dir = tempfile::tempdir().expect("as the test set it up");
    for (name, rederive, read_from) in [
        ("lock-chain.jsonl.zst", false, "track"),
        ("lock-chain.jsonl.zst", true, "outputs"),
        ("lock-chain.jsonl", false, "outputs"),
    ] {
        let rec = dir.path().join(name);
        // The lock chain, recorded by `ifxtop snapshot --demo --record` with its activity.
        let live = if rec.exists() {
            None
        } else {
            let snap = [
                "snapshot", "--demo", "--at", "330", "--window", "40", "--format", "json",
                "--record",
            ];
            Some(ifxtop(&snap, &rec))
        };
        let mut ash = vec!["ash", "--window", "40", "--format", "json", "--top", "10"];
        ash.extend(EVERY_KEY);
        if rederive {
            ash.push("--rederive");
        }
        ash.push("--replay");
        let replayed = ifxtop(&ash, &rec);
        assert_eq!(replayed["read_from"], read_from, "{name}");
        let Some(live) = live else {
            continue;
        };
        let live = &live["activity"];
        assert!(
            live["db_time_s"].as_f64().expect("as the test set it up") > 0.0,
            "{live}"
        );
        assert_eq!(live["samples"], 40, "{live}");
        for field in ["samples", "db_time_s", "by_class", "window_s"] {
            assert_eq!(live[field], replayed[field], "{name} {field}");
        }
        for key in ["class", "user", "object", "session", "head_blocker", "sql"] {
            assert_eq!(live["top"][key], replayed["top"][key], "{name} top {key}");
        }
        // The lock chain's head is there, with its statement.
        let heads = live["top"]["head_blocker"]
            .as_array()
            .expect("as the test set it up");
        assert!(heads.iter().any(|h| h["key"] == "812"), "{heads:?}");
    }
}

/// A recording cut short (a crash): its track ends with the last whole frame, its outputs go on
/// a little further. The window ending at the recording's end is read from the outputs (and
/// says why); one ending within the track from the track, with the same table.
#[test]
fn a_cut_recording_reads_its_end_from_the_outputs() {
    let dir = tempfile::tempdir().expect("as the test set it up");
    let whole = dir.path().join("whole.jsonl.zst");
    let snap = [
        "snapshot", "--demo", "--at", "330", "--format", "json", "--record",
    ];
    ifxtop(&snap, &whole);
    let bytes = std::fs::read(&whole).expect("as the test set it up");
    let cut = dir.path().join("cut.jsonl.zst");
    std::fs::write(&cut, &bytes[..bytes.len() * 9 / 10]).expect("as the test set it up");
    let mut end = vec!["ash", "--window", "20", "--format", "json"];
    end.extend(EVERY_KEY);
    end.push("--replay");
    let at_end = ifxtop(&end, &cut);
    assert_eq!(at_end["read_from"], "outputs", "{at_end}");
    let note = at_end["read_from_note"].as_str().unwrap_or_default();
    assert!(note.contains("cut short"), "{note}");
    let within = |rederive: bool| {
        let mut a = vec!["ash", "--from", "290", "--to", "300", "--format", "json"];
        a.extend(EVERY_KEY);
        if rederive {
            a.push("--rederive");
        }
        a.push("--replay");
        ifxtop(&a, &cut)
    };
    let (from_track, from_outputs) = (within(false), within(true));
    assert_eq!(from_track["read_from"], "track", "{from_track}");
    assert_eq!(from_outputs["read_from"], "outputs");
    assert!(
        from_track["samples"].as_u64().is_some_and(|n| n >= 9),
        "{from_track}"
    );
    for field in ["samples", "db_time_s", "by_class", "top"] {
        assert_eq!(from_track[field], from_outputs[field], "{field}");
    }
}

/// `ifxtop ash` parses only the sources database time reads: over a recording of several
/// incidents (the lock chain, the checkpoint stall, mutex contention), its samples are the ones
/// a walk parsing every source takes. And the recording's track gives the table the samples
/// taken as it was recorded gave, exactly (parsed again, a statement read 60 ms after a moment
/// may count for that moment's sample, which the recording's screen had built already: the
/// statements' seconds can differ by one a session, the classes' cannot).
#[test]
fn reading_only_what_activity_needs_changes_no_sample() {
    let common::RecordedDemo {
        dir: _dir,
        path,
        rec,
        settings,
        live,
    } = common::recorded_demo();
    let mut every = Activity::new();
    ifxtop::instance::walk::replay_walk(
        rec.clone(),
        settings.clone(),
        Duration::ZERO,
        rec.length(),
        &mut every,
    );
    let mut needed = Activity::new();
    ifxtop::instance::walk::replay_activity(
        rec.clone(),
        settings,
        Duration::ZERO,
        rec.length(),
        &mut needed,
    );
    let mut kept = Activity::new();
    ifxtop::instance::walk::track_activity(&path, 0.0, rec.length().as_secs_f64(), &mut kept)
        .expect("read")
        .expect("a whole track");
    let q = Query::every_key(0.0, rec.length().as_secs_f64(), 20);
    let (a, b) = (every.report(&q), needed.report(&q));
    assert!(a.samples > 200 && a.db_time_s > 0.0, "{a:?}");
    assert_eq!(a, b);
    let (recorded, kept) = (live.report(&q), kept.report(&q));
    assert_eq!(recorded, kept);
    for key in [Key::Class, Key::Session, Key::Object, Key::HeadBlocker] {
        assert_eq!(a.list(key), kept.list(key), "{key:?}");
    }
    assert_eq!(
        (a.samples, a.db_time_s, &a.by_class),
        (kept.samples, kept.db_time_s, &kept.by_class)
    );
}

/// `ifxtop ash ... | head` closes the pipe early: no panic, no message, success (it panicked
/// printing before).
#[test]
fn a_closed_pipe_is_no_error() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args([
            "ash",
            "--demo",
            "--window",
            "5",
            "--group",
            "class,session,sql",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("as the test set it up");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("as the test set it up");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
