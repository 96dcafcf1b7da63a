//! The live screen keeps each finding's start across its snapshots: a finding with no wait to
//! date it (CPU saturation, a rate over 10 s) says since when it has held as a lower bound from
//! its first sight: the rate crossed the line at some moment between two samples.

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
    // First seen while watched: a bound from that sight (`≥`, `or before`), never before the
    // incident began (13:37:30, 450 s into the demo's day).
    assert!(
        held.contains("for ≥") && held.contains("since 13:37:") && held.contains("or before"),
        "{list}"
    );
    let since = held
        .split("since 13:37:")
        .nth(1)
        .and_then(|s| s.get(..2))
        .and_then(|s| s.parse::<u32>().ok())
        .unwrap_or_else(|| panic!("{held}"));
    assert!((30..=59).contains(&since), "{held}");
}
