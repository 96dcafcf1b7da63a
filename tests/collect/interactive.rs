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
    // A statement (`-g sql N`), the same for every session: the tick's call asks the active
    // sessions' (about a hundred here), answered without a process each, as onstat -i does.
    let sql = demo
        .respond(
            &Source::OnstatGSql(ifxtop::ids::Sid(812)).request(),
            Duration::from_secs(600),
        )
        .expect("a statement");
    let at = sql.stdout.find(" Version ").expect("a banner");
    let body_at = sql.stdout[at..].find("\n\n").map_or(0, |p| at + p + 2);
    std::fs::write(dir.join("a").join("g_sql"), &sql.stdout).expect("answer");
    std::fs::write(dir.join("b").join("g_sql"), &sql.stdout[body_at..]).expect("body");
}

/// Where a fake onstat hangs.
#[derive(Clone, Copy, PartialEq)]
enum Hang<'a> {
    Never,
    /// `onstat -i` hangs before its first prompt (plain calls answer).
    BeforePrompt,
    /// On this option (`g ath`): in `onstat -i` after its prompt, and as a plain call.
    On(&'a str),
}

/// A fake onstat: command-line calls answer from `a/`; `onstat -i` (when `interactive`) reads
/// one option a line (each logged as `i: OPTION`) and answers with `quirk`'s banner rule,
/// `last_prompt` or not, and `onstat: invalid option` for an option in `unknown`; it hangs
/// where `hang` says.
fn script(
    interactive: bool,
    banner_once: bool,
    last_prompt: bool,
    unknown: &str,
    hang: Hang,
) -> String {
    let banner = "IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line (Prim) -- Up 00:10:00 -- 2457600 Kbytes";
    let before_prompt = hang == Hang::BeforePrompt;
    let on = match hang {
        Hang::On(o) => o,
        _ => "",
    };
    format!(
        r#"d="$(dirname "$0")"
echo "$*" >> "$d/calls"
if [ "$1" = -i ]; then
  if [ {interactive} = false ]; then echo "onstat: illegal option -- i" >&2; exit 1; fi
  if [ {before_prompt} = true ]; then exec sleep 600; fi
  if [ {banner_once} = true ]; then printf '\n%s\n\n' '{banner}'; fi
  sqla=$(cat "$d/a/g_sql"); sqlb=$(cat "$d/b/g_sql")
  while IFS= read -r line; do
    echo "i: $line" >> "$d/calls"
    case "$line" in
      "g sql "*) printf 'onstat> '
        if [ {banner_once} = true ]; then printf '\n%s\n' "$sqlb"; else printf '%s\n' "$sqla"; fi
        continue;;
    esac
    k=$(echo "$line" | sed 's/ /_/g')
    printf 'onstat> '
    if [ "$line" = "{on}" ]; then exec sleep 600; fi
    if [ "$line" = "{unknown}" ]; then echo "onstat: invalid option: $line"
    elif [ {banner_once} = true ] && [ -f "$d/b/$k" ]; then echo; cat "$d/b/$k"
    elif [ -f "$d/a/$k" ]; then cat "$d/a/$k"
    else echo "onstat: invalid option: $line"; fi
  done
  if [ {last_prompt} = true ]; then printf 'onstat> '; fi
  exit 5
fi
k=$(echo "$*" | sed 's/^-//; s/ /_/g')
if [ "$k" = "$(echo "{on}" | sed 's/ /_/g')" ]; then exec sleep 600; fi
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
    let (updates, calls) = first_updates(&script(true, false, true, "", Hang::Never)).await;
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
    let (updates, calls) = first_updates(&script(true, true, false, "", Hang::Never)).await;
    assert_interactive(&updates, &calls);
}

#[tokio::test]
async fn an_option_it_does_not_know_runs_alone_and_says_so() {
    let (updates, calls) = first_updates(&script(true, false, true, "g con", Hang::Never)).await;
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

/// An `onstat -i` that does not answer `-g sql N`: the active sessions' statements it left
/// unread (about a hundred here) are not each run as a process of their own; the other options
/// go on in the call.
#[tokio::test]
async fn statements_it_does_not_answer_are_not_a_process_each() {
    let body = script(true, false, true, "", Hang::Never).replacen(
        "\"g sql \"*) printf 'onstat> '",
        "\"g sql \"*) printf 'onstat> '; echo \"onstat: invalid option: $line\"; continue;;\n      \"never\") printf 'onstat> '",
        1,
    );
    assert!(
        body.contains("invalid option: $line\"; continue;;"),
        "{body}"
    );
    let (updates, calls) =
        updates_for(&body, Duration::from_secs(1), Duration::from_secs(5), 4.0).await;
    let asked_in_call = calls.iter().filter(|c| c.starts_with("i: g sql ")).count();
    assert!(
        asked_in_call >= 10,
        "statements asked in the call: {calls:?}"
    );
    let plain = calls.iter().filter(|c| c.starts_with("-g sql ")).count();
    assert_eq!(plain, 0, "a process for each statement: {calls:?}");
    let u_ok = updates
        .iter()
        .filter(|(_, u)| u.source == Source::OnstatU && u.result.is_ok())
        .count();
    assert!(u_ok >= 3, "-u answered {u_ok} times");
}

#[tokio::test]
async fn an_onstat_without_interactive_mode_falls_back_and_says_why() {
    let (updates, calls) = first_updates(&script(false, false, true, "", Hang::Never)).await;
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

/// The tests of this file that run collectors on the real clock.
static REAL_CLOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Every update of every collector against the fake `body` for `secs`, with when it came (since
/// the start), with runs cut at `hang` (a hang costs that, not onstat's 10 s) and periods scaled
/// by `interval`; and the onstat command lines and `onstat -i` option lines seen.
async fn updates_for(
    body: &str,
    interval: Duration,
    hang: Duration,
    secs: f64,
) -> (Vec<(Duration, Update)>, Vec<String>) {
    // One at a time: these run on the real clock, each starting a fake onstat every 0.2-1 s;
    // side by side they slow each other's processes past the gaps they check.
    let _alone = REAL_CLOCK.lock().await;
    let (_d, dir) = fake_onstat(body);
    answers(&dir);
    let runner = Arc::new(
        LocalRunner::new(Some("ol_test".into()))
            .with_path(path_with(&dir))
            .with_max_timeout(hang),
    );
    let mut collection = Collection::start(
        runner,
        interval,
        None,
        ExtentSource::default(),
        SessionClock::start(),
    );
    let started = tokio::time::Instant::now();
    let end = started + Duration::from_secs_f64(secs);
    let mut got = Vec::new();
    while let Ok(Some(u)) = tokio::time::timeout_at(end, collection.next_update()).await {
        got.push((started.elapsed(), u));
    }
    drop(collection);
    let calls = std::fs::read_to_string(dir.join("calls")).unwrap_or_default();
    (got, calls.lines().map(str::to_string).collect())
}

fn timed_out(u: &Update) -> bool {
    matches!(u.result, Err(ifxtop::error::SourceError::Timeout { .. }))
}

/// An `onstat -i` that never prompts (it hangs before its first prompt) while plain calls
/// answer at once: killed at its timeout, it is taken for an onstat without interactive mode,
/// and the sources run as plain calls at once, then on every tick; `onstat -i` is not tried
/// again before the retry.
#[tokio::test]
async fn an_onstat_i_that_never_prompts_falls_back_to_plain_calls() {
    let body = script(true, false, true, "", Hang::BeforePrompt);
    let (updates, calls) =
        updates_for(&body, Duration::from_secs(1), Duration::from_secs(1), 5.0).await;
    let u: Vec<&(Duration, Update)> = updates
        .iter()
        .filter(|(_, u)| u.source == Source::OnstatU)
        .collect();
    let ok: Vec<Duration> = u
        .iter()
        .filter(|(_, u)| u.result.is_ok())
        .map(|(at, _)| *at)
        .collect();
    // Data within a tick or two of the hung call's second, then every tick.
    assert!(
        ok.first()
            .is_some_and(|at| *at < Duration::from_millis(2500)),
        "{u:?}"
    );
    assert!(ok.len() >= 3, "{u:?}");
    let first = &u.iter().find(|(_, u)| u.result.is_ok()).expect("data").1;
    assert_eq!(
        note(first),
        "one call per option: onstat -i hung before its first `onstat>` prompt (timed out after 1s (killed))"
    );
    assert_eq!(
        calls.iter().filter(|c| *c == "-i").count(),
        1,
        "interactive mode tried again: {calls:?}"
    );
    // The killed call's timeout is said at once, once per source it carried (where everything
    // hangs, that is all there is to show); no plain call timed out.
    let killed: Vec<&Update> = updates
        .iter()
        .map(|(_, u)| u)
        .filter(|u| timed_out(u))
        .collect();
    let first_t = killed.first().map(|u| u.t);
    assert!(
        killed
            .iter()
            .all(|u| Some(u.t) == first_t && note(u).starts_with("onstat -i: one process for")),
        "{killed:?}"
    );
    for (i, u) in killed.iter().enumerate() {
        assert!(
            !killed[..i].iter().any(|k| k.source == u.source),
            "{killed:?}"
        );
    }
}

/// One option that hangs (`-g ath` in the first tick's `onstat -i`, and as a plain call) costs
/// only itself: the options answered before it keep their answers, it gets the timeout and
/// from then runs alone, in a task of its own, while the others go on grouped and on time; the
/// options the killed call never reached are asked at the next tick, not marked timed out
/// until their own period comes round.
#[tokio::test]
async fn a_hung_option_costs_only_itself() {
    let body = script(true, false, true, "", Hang::On("g ath"));
    // Periods a fifth (the fast tick 0.2 s, `-g ath` 2 s, `-g seg` 12 s); a hang 1.5 s.
    let (updates, calls) = updates_for(
        &body,
        Duration::from_millis(200),
        Duration::from_millis(1500),
        7.0,
    )
    .await;
    let of = |s: Source| -> Vec<&(Duration, Update)> {
        updates.iter().filter(|(_, u)| u.source == s).collect()
    };
    // The first call: -u, before -g ath, answered in it; -g ath timed out there.
    let u = of(Source::OnstatU);
    let first_u = &u.first().expect("-u").1;
    assert!(first_u.result.is_ok(), "{first_u:?}");
    assert!(
        note(first_u).starts_with("onstat -i: one process for "),
        "{}",
        note(first_u)
    );
    let ath = of(Source::OnstatGAth);
    let first_ath = &ath.first().expect("-g ath").1;
    assert!(timed_out(first_ath), "{first_ath:?}");
    assert!(note(first_ath).ends_with("it hung on this option, which runs alone from now"));
    // Nothing else ever timed out.
    let others: Vec<&(Duration, Update)> = updates
        .iter()
        .filter(|(_, u)| timed_out(u) && u.source != Source::OnstatGAth)
        .collect();
    assert!(others.is_empty(), "{others:?}");
    // Past -g ath in the call, never reached: asked at the next tick, not at their period
    // (-g seg's is 12 s here).
    let seg = of(Source::OnstatGSeg);
    let first_seg = seg.first().expect("-g seg");
    assert!(first_seg.1.result.is_ok(), "{first_seg:?}");
    assert!(first_seg.0 < Duration::from_secs(4), "{first_seg:?}");
    // -g ath alone from then, in a call of its own; no later onstat -i asks it.
    let alone: Vec<&&(Duration, Update)> = ath
        .iter()
        .filter(|(_, u)| note(u) == "run alone: it hung a call")
        .collect();
    assert!(!alone.is_empty(), "{ath:?}");
    assert!(calls.iter().any(|c| c == "-g ath"), "{calls:?}");
    assert_eq!(
        calls.iter().filter(|c| *c == "i: g ath").count(),
        1,
        "{calls:?}"
    );
    // The slower sources (in a call of their own once a call took long) are not held up
    // either: each answers about every second (its period here), never 3 s apart.
    for s in [
        Source::OnstatK,
        Source::OnstatP,
        Source::OnstatL,
        Source::OnstatS,
        Source::OnstatXTxn,
        Source::OnstatDUpper,
    ] {
        let at: Vec<Duration> = of(s)
            .iter()
            .filter(|(_, u)| u.result.is_ok())
            .map(|(t, _)| *t)
            .collect();
        let mut gaps: Vec<Duration> = at.windows(2).map(|w| w[1] - w[0]).collect();
        gaps.push(Duration::from_secs(7).saturating_sub(*at.last().expect("answers")));
        let worst = gaps.iter().max().copied().unwrap_or_default();
        assert!(worst < Duration::from_secs(3), "{s:?}: {at:?}");
    }
    // While it hangs alone, the others go on: -u answered every tick of that time.
    for (at, u) in alone {
        let from = *at - u.took;
        let during = of(Source::OnstatU)
            .iter()
            .filter(|(t, u)| *t > from && *t < *at && u.result.is_ok())
            .count();
        assert!(during >= 3, "-u answered {during} times while -g ath hung");
    }
}

/// A session's option that hangs (`-g ses 812`, its screen open) costs only itself, as any
/// option: it gets the call's timeout, then runs alone in a task of its own (no later
/// `onstat -i` asks it), while the tick's other options keep their answers; the session's
/// options the killed call never reached are asked at the next tick, not a period later.
#[tokio::test]
async fn a_hung_session_option_costs_only_itself() {
    let body = script(true, false, true, "", Hang::On("g ses 812"));
    let (_d, dir) = fake_onstat(&body);
    answers(&dir);
    // The session's own answers, as the demo prints them, and the statements of every
    // session (the active ones' ride in the tick's calls too; one the fake did not answer
    // would run alone, a plain call a tick).
    let demo = DemoInstance::new(1);
    let sid = ifxtop::ids::Sid(812);
    let u = demo
        .respond(&Source::OnstatU.request(), Duration::from_secs(600))
        .expect("the demo answers");
    let u = ifxtop::parsers::onstat_u::parse(&u.stdout).expect("parses");
    let mut asked = vec![Source::OnstatGPqs(sid)];
    asked.extend(u.threads.iter().map(|t| Source::OnstatGSql(t.sessid)));
    for s in asked {
        let request = s.request();
        let out = demo
            .respond(&request, Duration::from_secs(600))
            .expect("the demo answers");
        std::fs::write(dir.join("a").join(key(&request.argv()[1..])), &out.stdout).expect("answer");
    }
    let runner = Arc::new(
        LocalRunner::new(Some("ol_test".into()))
            .with_path(path_with(&dir))
            .with_max_timeout(Duration::from_secs(3)),
    );
    // Periods a fifth: the fast tick 0.2 s, the sessions' 1 s; a hang 3 s (a call of the
    // fake's carries about 100 options, each a few processes of its script).
    let collection = Collection::start(
        runner,
        Duration::from_millis(200),
        None,
        ExtentSource::default(),
        SessionClock::start(),
    );
    collection.set_focus(ifxtop::collect::Focus {
        drilled: vec![sid],
        ..Default::default()
    });
    let mut collection = collection;
    let started = tokio::time::Instant::now();
    let end = started + Duration::from_secs(10);
    let mut updates = Vec::new();
    while let Ok(Some(u)) = tokio::time::timeout_at(end, collection.next_update()).await {
        updates.push((started.elapsed(), u));
    }
    drop(collection);
    let calls: Vec<String> = std::fs::read_to_string(dir.join("calls"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let of = |s: Source| -> Vec<&(Duration, Update)> {
        updates.iter().filter(|(_, u)| u.source == s).collect()
    };
    // In the tick's call first; it hung there and got the call's timeout.
    let ses = of(Source::OnstatGSes(sid));
    let (hung_at, first) = ses.first().expect("-g ses 812");
    assert!(timed_out(first), "{first:?}");
    assert!(
        note(first).ends_with("it hung on this option, which runs alone from now"),
        "{}",
        note(first)
    );
    // Then alone, in a call of its own; never again in an onstat -i.
    assert!(
        ses.iter()
            .skip(1)
            .any(|(_, u)| note(u) == "run alone: it hung a call"),
        "{ses:?}"
    );
    assert!(calls.iter().any(|c| c == "-g ses 812"), "{calls:?}");
    assert_eq!(
        calls.iter().filter(|c| *c == "i: g ses 812").count(),
        1,
        "{calls:?}"
    );
    // Nothing else timed out.
    let others: Vec<&(Duration, Update)> = updates
        .iter()
        .filter(|(_, u)| timed_out(u) && u.source != Source::OnstatGSes(sid))
        .collect();
    assert!(others.is_empty(), "{others:?}");
    // Its statement and plan, in the tick's calls (one process for the tick's options), the
    // first soon after the hang: asked again at the next tick.
    for s in [Source::OnstatGSql(sid), Source::OnstatGPqs(sid)] {
        let got: Vec<&(Duration, Update)> = of(s)
            .into_iter()
            .filter(|(_, u)| u.result.is_ok())
            .collect();
        let (at, u) = got.first().unwrap_or_else(|| panic!("{s:?}: {updates:?}"));
        assert!(
            note(u).starts_with("onstat -i: one process for "),
            "{s:?}: {}",
            note(u)
        );
        assert!(
            *at < *hung_at + Duration::from_millis(1500),
            "{s:?} first at {at:?}, the hang at {hung_at:?}"
        );
    }
    // While it hangs alone, the others go on: -u answered tick after tick.
    for (at, u) in ses
        .iter()
        .filter(|(_, u)| note(u) == "run alone: it hung a call")
    {
        let from = *at - u.took;
        let during = of(Source::OnstatU)
            .iter()
            .filter(|(t, u)| *t > from && *t < *at && u.result.is_ok())
            .count();
        assert!(
            during >= 3,
            "-u answered {during} times while -g ses 812 hung"
        );
    }
}
