//! Budget (DESIGN.md §6): resident memory under 50 MB with a 5,000-session instance, and flat
//! after warm-up. This soak drives the store the live screen keeps (every polled source of the
//! demo instance at its own period, the oncheck -pe map once, one snapshot a second) through
//! 30 simulated minutes, and reports this process's resident memory at 30 s, 5, 10, 20 and 30
//! minutes. It fails when resident memory is 50 MB or more at any of them, or grows by more than
//! 2 MB from 10 minutes (every window and history full) to the end. It runs with the allocator
//! set as the binary sets it (`ifxtop::memory::tune`); `IFXTOP_SOAK_UNTUNED=1` leaves glibc's
//! default.
//!
//! `cargo bench --bench soak` (about a minute in release). Without `--bench` (as `cargo test
//! --all-targets` runs it) it soaks 200 sessions for 3 simulated minutes.

use ifxtop::collect::sample::Update;
use ifxtop::demo::DemoInstance;
use ifxtop::model::snapshot;
use ifxtop::source::Source;
use ifxtop::store::{Store, StoreSettings};
use std::time::Duration;

/// This process's resident memory (VmRSS) in bytes.
fn rss() -> usize {
    ifxtop::memory::resident()
}

fn mb(b: usize) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn main() {
    // The allocator as the binary sets it; IFXTOP_SOAK_UNTUNED=1 measures glibc's default.
    if std::env::var_os("IFXTOP_SOAK_UNTUNED").is_none() {
        ifxtop::memory::tune();
    }
    let full = std::env::args().any(|a| a == "--bench");
    let (sessions, seconds) = if full { (5_000, 1_800) } else { (200, 180) };
    let demo = DemoInstance::new(1).with_sessions(sessions);
    let mut store = Store::new(StoreSettings {
        ports: vec![ifxtop::demo::LISTENER_PORT],
        ..StoreSettings::default()
    });
    let apply = |store: &mut Store, source: Source, t: u64| {
        let Ok(out) = demo.respond(&source.request(), Duration::from_secs(t)) else {
            return;
        };
        store.apply(Update {
            source,
            t: Duration::from_secs(t),
            took: Duration::ZERO,
            result: source.parse(out),
            how: Default::default(),
        });
    };
    apply(&mut store, Source::OncheckPe, 0);
    let polled: Vec<(Source, u64)> = Source::polled()
        .into_iter()
        .map(|s| (s, s.period().as_secs().max(1)))
        .collect();
    let marks = [30, 300, 600, 1200, 1800];
    let mut at: Vec<(u64, usize)> = Vec::new();
    let started = std::time::Instant::now();
    for t in 0..=seconds {
        for (s, every) in &polled {
            if t % every == 0 {
                apply(&mut store, *s, t);
            }
        }
        let snap = snapshot::build(&store, Duration::from_secs(t), Some("ol_demo"), &[]);
        drop(snap);
        if marks.contains(&t) || t == seconds {
            let live = rss();
            println!(
                "soak {sessions} sessions: t={t:>5} s resident {:.1} MB",
                mb(live)
            );
            at.push((t, live));
        }
    }
    println!(
        "soak: {seconds} simulated seconds in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // The budget, at every mark.
    for (t, live) in &at {
        assert!(
            *live < 50 << 20,
            "resident {:.1} MB at {t} s: over the 50 MB budget",
            mb(*live)
        );
    }
    // Flat after warm-up: every window (hot spots, sockets, wait history: 10 minutes at most)
    // is full at 10 minutes; from there the heap may not grow.
    let warm = if full { 600 } else { 120 };
    let base = at.iter().find(|(t, _)| *t >= warm).map(|x| x.1);
    let end = at.last().map(|x| x.1);
    if let (Some(base), Some(end)) = (base, end) {
        let growth = end as f64 - base as f64;
        println!(
            "soak: resident {:+.2} MB from {warm} s to the end",
            growth / 1048576.0
        );
        assert!(
            growth < 2.0 * 1048576.0,
            "resident memory grew by {:.2} MB after warm-up",
            growth / 1048576.0
        );
    }
}
