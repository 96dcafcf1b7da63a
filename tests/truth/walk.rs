//! The pipeline against the demo on a paused clock: the real collectors, store, joins and
//! findings' history, a snapshot built half a second into every second, and the demo's truth at
//! the second of that snapshot's `onstat -u` beside it.

use crate::report::Report;
use ifxtop::collect::{extents::ExtentSource, Collection, SessionClock};
use ifxtop::demo::timeline::Incident;
use ifxtop::demo::truth::{Truth, TruthWalk};
use ifxtop::demo::{DemoInstance, DemoRunner};
use ifxtop::model::findings::FindingsHistory;
use ifxtop::model::snapshot::{build, Snapshot};
use ifxtop::source::Source;
use ifxtop::store::{Store, StoreSettings};
use std::sync::Arc;
use std::time::Duration;

/// How far before the first moment checked the truth walk begins (every wait the demo plays
/// but the idle ones, which say their own age, begins within this).
pub const WARM: u64 = 200;

/// An incident's name in the tables.
pub fn incident_name(i: Incident) -> &'static str {
    match i {
        Incident::Calm => "Calm",
        Incident::InsertHotSpot => "InsertHotSpot",
        Incident::NullIndexLeaf => "NullIndexLeaf",
        Incident::SendQFill => "SendQFill",
        Incident::SendQDrain => "SendQDrain",
        Incident::CheckpointRequested => "CheckpointRequested",
        Incident::CheckpointInProgress => "CheckpointInProgress",
        Incident::LockChain => "LockChain",
        Incident::LongTransaction => "LongTransaction",
        Incident::CpuSaturated => "CpuSaturated",
        Incident::MutexContention => "MutexContention",
        Incident::SlowDevice => "SlowDevice",
        Incident::ReplicaLag => "ReplicaLag",
    }
}

/// One second checked: the snapshot, the truth at the second of its `onstat -u`, and when.
pub struct Moment<'a> {
    pub snap: &'a Snapshot,
    pub truth: &'a Truth,
    /// When the snapshot was built (demo seconds): ages are counted on to it.
    pub now_s: f64,
    /// The moment of its `onstat -u` (demo seconds).
    pub moment_s: f64,
    /// The walk's first second checked.
    pub first: bool,
    /// `seed 1 n 300 t=290`, for messages.
    pub at: String,
}

impl Moment<'_> {
    /// Seconds from the truth's second to the build: what an age known at the truth's second
    /// grows by until the snapshot is built.
    pub fn since_truth(&self) -> f64 {
        self.now_s - self.truth.t as f64
    }
}

/// What a run checks: it sees every second of the truth walked (from `WARM` before the first
/// moment checked), and checks each moment.
pub trait Check {
    fn truth(&mut self, _truth: &Truth) {}
    fn check(&mut self, m: &Moment<'_>, r: &mut Report);
    /// Whether the walk asks for statements as a front-end does each second (its sessions
    /// active on a slow client, its top CPU sessions: `Collection::ask_statements`).
    fn asks_statements(&self) -> bool {
        false
    }
}

impl<F: FnMut(&Moment<'_>, &mut Report)> Check for F {
    fn check(&mut self, m: &Moment<'_>, r: &mut Report) {
        self(m, r)
    }
}

/// Several checks as one.
pub struct All<'a>(pub Vec<&'a mut dyn Check>);

impl Check for All<'_> {
    fn truth(&mut self, truth: &Truth) {
        for c in &mut self.0 {
            c.truth(truth);
        }
    }
    fn check(&mut self, m: &Moment<'_>, r: &mut Report) {
        for c in &mut self.0 {
            c.check(m, r);
        }
    }
    fn asks_statements(&self) -> bool {
        self.0.iter().any(|c| c.asks_statements())
    }
}

/// Runs the pipeline against the demo from `start` for `len` seconds, checking every second.
pub fn run_with(seed: u64, sessions: usize, start: u64, len: u64, check: &mut dyn Check) -> Report {
    let demo = DemoInstance::new(seed).with_sessions(sessions).messy();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("runtime");
    let from = Duration::from_secs(start);
    let mut report = Report::default();
    rt.block_on(async {
        let runner = DemoRunner::new(demo.clone()).starting_at(from);
        let mut collection = Collection::start(
            Arc::new(runner),
            Duration::from_secs(1),
            None,
            ExtentSource::default(),
            SessionClock::starting_at(from),
        );
        let mut store = Store::new(StoreSettings::default());
        let mut findings = FindingsHistory::default();
        let mut walk = TruthWalk::new(&demo, start.saturating_sub(WARM));
        let mut truth = walk.next();
        check.truth(&truth);
        let t0 = tokio::time::Instant::now();
        let mut first = true;
        for k in 0..len {
            // Half a second into each second: what was taken at its start has arrived.
            let deadline = t0 + Duration::from_secs(k) + Duration::from_millis(500);
            loop {
                tokio::select! {
                    Some(u) = collection.next_update() => store.apply(u),
                    _ = tokio::time::sleep_until(deadline) => break,
                }
            }
            let Some(u_t) = store
                .source(&Source::OnstatU)
                .and_then(|s| s.last_ok.as_ref())
                .map(|(t, _)| *t)
            else {
                continue;
            };
            let now = from + Duration::from_secs(k) + Duration::from_millis(500);
            let mut snap = build(&store, now, None, &[]);
            snap.track_findings(&mut findings, None);
            if check.asks_statements() {
                collection.ask_statements(ifxtop::model::snapshot::statements_wanted(&snap));
            }
            while truth.t < u_t.as_secs() {
                truth = walk.next();
                check.truth(&truth);
            }
            report.incident = incident_name(truth.incident);
            let m = Moment {
                snap: &snap,
                truth: &truth,
                now_s: now.as_secs_f64(),
                moment_s: u_t.as_secs_f64(),
                first,
                at: format!("seed {seed} n {sessions} t={}", truth.t),
            };
            check.check(&m, &mut report);
            first = false;
        }
    });
    report
}
