//! A live server whose every command fails or hangs is not "simulated": what ifxtop costs is
//! measured on any live host (its own CPU, its commands'), whatever its sources answer.

use super::{demo_setup, key, play, Hanging, Mode};
use std::sync::Arc;

#[tokio::test(start_paused = true)]
async fn a_live_server_whose_commands_hang_is_measured_not_simulated() {
    let mut setup = demo_setup(0);
    setup.mode = Mode::Live;
    setup.runner = Arc::new(Hanging);
    setup.note = None;
    setup.server = Some("ol_hung".into());
    // The Server pane once the first timeouts are in, then quit.
    let script = vec![(40_000, key('6')), (2_000, key('q'))];
    let (code, frames, _) = play(setup, script).await;
    assert_eq!(code, 0);
    let pane = frames
        .iter()
        .rev()
        .find(|f| f.contains("IFXTOP"))
        .unwrap_or_else(|| panic!("the cost line; last:\n{}", frames[frames.len() - 1]));
    // Measured: never the demo's "onstat (simulated)" nor "the demo's simulation";
    // its onstat processes counted as started.
    assert!(!pane.contains("simula"), "{pane}");
    assert!(pane.contains("onstat "), "{pane}");
}
