//! The live screen keeps each finding's start across its snapshots: a finding with no wait to
//! date it (CPU saturation) says how long it has held, exactly, once ifxtop saw it begin.

use crate::{demo_setup, key, last_with, play};

#[tokio::test(start_paused = true)]
async fn the_findings_list_says_since_when_a_finding_holds() {
    // From 440 s: calm, then the CPU saturates at 450 s (seen at 460 s, `onstat -g glo` every
    // 10 s: a rate over 10 s); the list is opened at about 485 s.
    let (_, frames, _) = play(
        demo_setup(440),
        vec![(45_000, key('f')), (1_000, key('q')), (500, key('q'))],
    )
    .await;
    let list = last_with(&frames, "findings, worst first").expect("the list was drawn");
    let lines: Vec<&str> = list.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("CPU saturated"))
        .unwrap_or_else(|| panic!("CPU saturation listed:\n{list}"));
    let held = lines[at + 1];
    // Seen to begin while watched: exact, not a bound, and at most since the incident began
    // (13:37:30, 450 s into the demo's day).
    assert!(
        held.contains("for ") && held.contains("since 13:37:"),
        "{list}"
    );
    assert!(!held.contains('≥') && !held.contains("or before"), "{list}");
    let since = held
        .split("since 13:37:")
        .nth(1)
        .and_then(|s| s.get(..2))
        .and_then(|s| s.parse::<u32>().ok())
        .unwrap_or_else(|| panic!("{held}"));
    assert!((30..=59).contains(&since), "{held}");
}
