//! A right-to-left override (U+202E) in a user name never leaves the screen, the clipboard (`y`,
//! OSC 52) or an export (`e`) as itself: `?` in the copied text, its escape in the exported JSON;
//! the screen (and the exported screen text) draws no cell for it.

use super::{demo_setup, key, play_with, Fake, Mode};
use std::sync::Arc;

const RLO: char = '\u{202e}';

fn has_bidi(text: &str) -> bool {
    text.chars()
        .any(|c| matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'))
}

#[tokio::test(start_paused = true)]
async fn a_right_to_left_override_leaves_neither_screen_nor_clipboard_nor_export() {
    // Every user of every `onstat -u` holds the override, so the selected row does.
    let (_dir, path, samples) = super::demo_u_recording(50, 20, "bidi.jsonl", |out| {
        let mut stdout = String::new();
        for line in out.lines() {
            let mut words: Vec<String> = line.split(' ').map(String::from).collect();
            // The user is the fourth field of a thread's row (after address, flags, sessid).
            let fields: Vec<usize> = (0..words.len()).filter(|i| !words[*i].is_empty()).collect();
            if fields.len() >= 10 && words[fields[2]].parse::<u64>().is_ok() {
                words[fields[3]] = format!("e{RLO}vil");
            }
            stdout.push_str(&words.join(" "));
            stdout.push('\n');
        }
        stdout
    });
    assert!(samples[5].stdout.contains(RLO));
    let rec = ifxtop::collect::record::read_recording(&path).expect("readable");
    let mut setup = demo_setup(0);
    setup.mode = Mode::Replay {
        file: path.display().to_string(),
    };
    setup.runner = Arc::new(ifxtop::source::local::LocalRunner::new(None));
    setup.note = None;
    setup.replay = Some(Arc::new(rec));
    let out_dir = tempfile::tempdir().expect("tempdir");
    let outside = Fake {
        dir: Some(out_dir.path().to_path_buf()),
        ..Fake::default()
    };
    let script = vec![(5000, key('y')), (500, key('e')), (500, key('q'))];
    let (code, frames, outside) = play_with(setup, script, outside).await;
    assert_eq!(code, 0);
    // The screen draws the name without the override (a character of no width is no cell).
    assert!(
        frames.iter().any(|f| f.contains(" evil ")),
        "the name, shown: {}",
        frames.last().map(String::as_str).unwrap_or_default()
    );
    for f in &frames {
        assert!(!has_bidi(f), "{f}");
    }
    assert_eq!(outside.copied.len(), 1);
    let copied = &outside.copied[0];
    assert!(copied.contains("e?vil"), "{copied}");
    assert!(!has_bidi(copied), "{copied}");
    let mut exported = 0;
    for entry in std::fs::read_dir(out_dir.path()).expect("list") {
        let p = entry.expect("entry").path();
        let text = std::fs::read_to_string(&p).expect("read");
        assert!(!has_bidi(&text), "{}: {text}", p.display());
        if p.extension().is_some_and(|e| e == "json") {
            let v: serde_json::Value = serde_json::from_str(&text).expect("json");
            assert!(
                v.to_string().contains(&format!("e{RLO}vil")),
                "read back as the name"
            );
        } else {
            // The screen's text, as drawn.
            assert!(text.contains(" evil "), "{text}");
        }
        exported += 1;
    }
    assert_eq!(exported, 2);
}
