//! One `onstat -i` a tick (collect/group.rs) against fake onstats on PATH that play what the
//! manual leaves open: a banner before each option or only once, a last prompt or none, an
//! option it does not know, and an onstat without interactive mode (the fallback to one call
//! per option, said in each update's note).

use super::{fake_onstat, path_with};
use ifxtop::collect::extents::ExtentSource;
use ifxtop::collect::sample::Update;
use ifxtop::collect::{Collection, SessionClock};
use ifxtop::demo::DemoInstance;
use ifxtop::source::local::LocalRunner;
use ifxtop::source::Source;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The sources checked: the fastest of the tick, and a `-g` one that used to run alone.
const CHECKED: [Source; 2] = [Source::OnstatU, Source::OnstatGCon];

/// The answer file name of an option: `-g con` → `g_con`.
fn key(options: &[String]) -> String {
    options.join("_").trim_start_matches('-').to_string()
}

/// Writes the demo's answer to every polled onstat option: `a/KEY` as `onstat -OPTION` prints
/// it, `b/KEY` without its banner.
fn answers(dir: &Path) {
    let demo = DemoInstance::new(1);
    for sub in ["a", "b"] {
        std::fs::create_dir_all(dir.join(sub)).expect("answers dir");
    }
    for s in Source::polled() {
        let request = s.request();
        let argv = request.argv();
        if argv.first().map(String::as_str) != Some("onstat") {
            continue;
        }
        let Ok(out) = demo.respond(&request, Duration::from_secs(600)) else {
            continue;
        };
        let k = key(&argv[1..]);
        std::fs::write(dir.join("a").join(&k), &out.stdout).expect("answer");
        // The body: what follows the blank line after the banner.
        let at = out.stdout.find(" Version ").expect("a banner");
        let body_at = out.stdout[at..].find("\n\n").map_or(0, |p| at + p + 2);
        std::fs::write(dir.join("b").join(&k), &out.stdout[body_at..]).expect("body");
    }
}

/// A fake onstat: command-line calls answer from `a/`; `onstat -i` (when `interactive`) reads
/// one option a line and answers with `quirk`'s banner rule, `last_prompt` or not, and
/// `onstat: invalid option` for an option in `unknown`.
fn script(interactive: bool, banner_once: bool, last_prompt: bool, unknown: &str) -> String {
    let banner = "IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line (Prim) -- Up 00:10:00 -- 2457600 Kbytes";
    format!(
        r#"d="$(dirname "$0")"
echo "$*" >> "$d/calls"
if [ "$1" = -i ]; then
  if [ {interactive} = false ]; then echo "onstat: illegal option -- i" >&2; exit 1; fi
  if [ {banner_once} = true ]; then printf '\n%s\n\n' '{banner}'; fi
  while IFS= read -r line; do
    k=$(echo "$line" | sed 's/ /_/g')
    printf 'onstat> '
    if [ "$line" = "{unknown}" ]; then echo "onstat: invalid option: $line"
    elif [ {banner_once} = true ] && [ -f "$d/b/$k" ]; then echo; cat "$d/b/$k"
    elif [ -f "$d/a/$k" ]; then cat "$d/a/$k"
    else echo "onstat: invalid option: $line"; fi
  done
  if [ {last_prompt} = true ]; then printf 'onstat> '; fi
  exit 5
fi
k=$(echo "$*" | sed 's/^-//; s/ /_/g')
if [ -f "$d/a/$k" ]; then cat "$d/a/$k"; exit 5; fi
echo "onstat: cannot do $*" >&2
exit 1"#
    )
}

/// Runs every collector against the fake until each checked source has an update; returns
/// those first updates and the onstat command lines started.
async fn first_updates(body: &str) -> (Vec<Update>, Vec<String>) {
    let (_d, dir) = fake_onstat(body);
    answers(&dir);
    let runner = Arc::new(LocalRunner::new(Some("ol_test".into())).with_path(path_with(&dir)));
    let mut collection = Collection::start(
        runner,
        Duration::from_secs(1),
        None,
        ExtentSource::default(),
        SessionClock::start(),
    );
    let mut got: Vec<Update> = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while got.len() < CHECKED.len() {
        let u = tokio::time::timeout_at(deadline, collection.next_update())
            .await
            .expect("every checked source within 20 s")
            .expect("collectors running");
        if CHECKED.contains(&u.source) && !got.iter().any(|g| g.source == u.source) {
            got.push(u);
        }
    }
    drop(collection);
    let calls = std::fs::read_to_string(dir.join("calls")).unwrap_or_default();
    (got, calls.lines().map(str::to_string).collect())
}

fn note(u: &Update) -> &str {
    u.how.note.as_deref().unwrap_or("")
}

fn assert_interactive(updates: &[Update], calls: &[String]) {
    assert_eq!(calls.first().map(String::as_str), Some("-i"), "{calls:?}");
    for u in updates {
        assert!(
            u.result.is_ok(),
            "{:?}: {:?}",
            u.source,
            u.result.as_ref().err()
        );
        assert!(
            note(u).starts_with("onstat -i: one process for "),
            "{:?}: {}",
            u.source,
            note(u)
        );
    }
}

#[tokio::test]
async fn a_banner_per_option_and_a_last_prompt() {
    let (updates, calls) = first_updates(&script(true, false, true, "")).await;
    assert_interactive(&updates, &calls);
    // Each source's bytes are its own part of the one call: what onstat printed for it.
    let demo = DemoInstance::new(1);
    for u in &updates {
        let printed = demo
            .respond(&u.source.request(), Duration::from_secs(600))
            .expect("the demo's answer");
        assert_eq!(
            u.how.bytes,
            Some(printed.stdout.len() as u64),
            "{:?}",
            u.source
        );
    }
}

#[tokio::test]
async fn a_banner_once_and_no_prompt_at_end_of_input() {
    let (updates, calls) = first_updates(&script(true, true, false, "")).await;
    assert_interactive(&updates, &calls);
}

#[tokio::test]
async fn an_option_it_does_not_know_runs_alone_and_says_so() {
    let (updates, calls) = first_updates(&script(true, false, true, "g con")).await;
    let u = updates
        .iter()
        .find(|u| u.source == Source::OnstatU)
        .expect("-u");
    assert!(
        u.result.is_ok() && note(u).starts_with("onstat -i: one process"),
        "{}",
        note(u)
    );
    let con = updates
        .iter()
        .find(|u| u.source == Source::OnstatGCon)
        .expect("-g con");
    assert!(con.result.is_ok(), "{:?}", con.result.as_ref().err());
    assert_eq!(note(con), "run alone: onstat -i did not answer this option");
    assert!(calls.iter().any(|c| c == "-g con"), "{calls:?}");
}

#[tokio::test]
async fn an_onstat_without_interactive_mode_falls_back_and_says_why() {
    let (updates, calls) = first_updates(&script(false, false, true, "")).await;
    assert_eq!(calls.first().map(String::as_str), Some("-i"), "{calls:?}");
    for u in &updates {
        assert!(
            u.result.is_ok(),
            "{:?}: {:?}",
            u.source,
            u.result.as_ref().err()
        );
        assert_eq!(
            note(u),
            "one call per option: onstat -i no `onstat>` prompt: onstat did not answer in interactive mode",
            "{:?}",
            u.source
        );
    }
    assert!(calls.iter().any(|c| c == "-g con"), "{calls:?}");
}
