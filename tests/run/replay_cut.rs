//! A recording cut short on disk while it is replayed (a copy still under way, a disk cleaned
//! up): the replay stops at the last moment it could read and says why; a later seek past the
//! cut shows that moment as itself, never its data labelled as the moment sought.

use super::{demo_setup, key, play, Mode};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ifxtop::tui::run::Input;
use std::sync::Arc;
use std::time::Duration;

#[tokio::test(start_paused = true)]
async fn a_recording_cut_while_replayed_stops_there_and_says_so() {
    let (_dir, path, _) = super::demo_u_recording(50, 100, "long.jsonl", |o| o);
    let rec = ifxtop::collect::record::read_recording(&path).expect("readable");
    let text = std::fs::read_to_string(&path).expect("read");
    // The header and the samples of 0 to 49 s stay.
    let cut: usize = text.lines().take(51).map(|l| l.len() + 1).sum();
    let mut setup = demo_setup(0);
    setup.mode = Mode::Replay {
        file: path.display().to_string(),
    };
    setup.runner = Arc::new(ifxtop::source::local::LocalRunner::new(None));
    setup.note = None;
    setup.replay = Some(Arc::new(rec));
    let code = |c: KeyCode| Input::Key(KeyEvent::new(c, KeyModifiers::NONE));
    let seek = |wait: u64, a: char, b: char| {
        vec![
            (wait, key(':')),
            (0, key(a)),
            (0, key(b)),
            (0, code(KeyCode::Enter)),
        ]
    };
    // To 10 s; the file is cut at 1.5 s; to 90 s at 2.5 s; q at 4.5 s.
    let mut script = seek(500, '1', '0');
    script.extend(seek(2000, '9', '0'));
    script.push((2000, key('q')));
    let cutter = {
        let path = path.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            std::fs::write(&path, &text[..cut]).expect("cut");
        })
    };
    let (code, frames, _) = play(setup, script).await;
    cutter.await.expect("cut");
    assert_eq!(code, 0);
    // Never the data of 49 s labelled 1:30.
    for f in &frames {
        assert!(!f.contains("REPLAY 01:30"), "{f}");
    }
    let last = frames.last().expect("frames");
    assert!(last.contains("REPLAY 00:49/01:39"), "{last}");
    assert!(last.contains("the recording changed on disk"), "{last}");
    // The moment shown is the sample's own: 0 s old.
    assert!(last.contains(" -u 0s "), "{last}");
}
