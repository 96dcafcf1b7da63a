//! The shared feed's wire: what one collector sends the viewers that watch with it (a
//! recording's lines, in zstd frames, with a few control lines of its own) and the little a
//! viewer may send back (one JSON line each, bounded; anything else is refused).
//!
//! Collector → viewer: a stream of zstd frames (any zstd reader reads their concatenation as
//! one stream). Its lines are, in order: the recording's header (`{"ifxtop_recording": 1,
//! ...}`), a `{"share": {"hello": ...}}` line, then recorded samples (`{"t": .., "source": ..,
//! ...}`, the lines of a recording) from the recent history on, and control lines
//! (`{"share": ...}`: who watches, marks, what was refused) as they happen.

use crate::collect::sample::RawSample;
use serde::{Deserialize, Serialize};

/// The version of this wire (the hello says it).
pub const VERSION: u64 = 1;
/// The longest line a viewer may send (bytes, the newline included): a longer one is refused
/// and the viewer dropped.
pub const MAX_VIEWER_LINE: usize = 4096;
/// The longest text of a mark, in characters.
pub const MAX_MARK_TEXT: usize = 200;

/// One viewer, as the presence list shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Presence {
    /// The collector's number for this viewer (its `you` in the hello).
    pub id: u64,
    /// The user the collector saw connect (the socket's peer; basic auth's user over HTTP).
    pub user: String,
    /// Where the viewer says it is (the ssh client's address, its host name), when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// How it is attached: `socket` (here or through `ssh host ifxtop attach`) or `http`.
    pub via: String,
    /// Since when (UTC, RFC 3339).
    pub since: String,
    /// How far behind the collector's latest sample the viewer last said it was, in seconds
    /// (`None` until it says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind_s: Option<f64>,
    /// Feed bytes waiting for it to read them.
    pub queued_bytes: u64,
    /// What its screen shows, as it last said (for others to follow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<View>,
}

/// What a screen shows, for others to follow (`@`): its pane, the session it has open or
/// selected, and its moment when that is not the live end.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct View {
    /// The pane, as its number key says it (1 to 8).
    pub pane: u8,
    /// The session on screen: open (`open`) or selected in the pane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<u64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub open: bool,
    /// The moment shown (the collector's session time) when not the live end: frozen, back
    /// in what it received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<f64>,
    /// Whom it follows itself (a presence id; 0: the collector's screen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follows: Option<u64>,
}

/// A mark: "look at 13:34:50, sid 812", sent to every viewer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mark {
    /// The collector's session time the mark points at, in seconds.
    pub at: f64,
    /// What to look at, in words (sanitized when shown).
    pub text: String,
    /// Who marked (the collector fills it in: a viewer cannot speak for another).
    #[serde(default)]
    pub by: String,
}

/// A control line of the feed: `{"share": ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Control {
    /// First after the header: the wire's version, the collector's session time when the
    /// viewer joined, who collects, and the viewer's own number.
    Hello {
        version: u64,
        now: f64,
        collector: String,
        you: u64,
        /// What the collector lets each viewer ask for (sessions read for it each tick).
        max_focus: usize,
    },
    /// Everyone attached, sent when it changes and every few seconds.
    Viewers(Vec<Presence>),
    Mark(Mark),
    /// What the collector refused of this viewer, and why.
    Refused(String),
    /// The sessions this viewer's asks have read, as the collector bounded them.
    Focus(Vec<u64>),
    /// What the collector's own screen shows (`ifxtop --share`), for viewers to follow.
    Screen(View),
}

/// A control line as written: `{"share": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlLine {
    pub share: Control,
}

/// One line of the feed after the header.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum FeedLine {
    Control(ControlLine),
    Sample(RawSample),
}

/// What a viewer may send, one JSON line each. Nothing else is read: an unknown message, a
/// line too long or not JSON is refused (said back to that viewer) and reaches nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ViewerMsg {
    /// Who it is beyond what the collector sees: its host (`SSH_CLIENT`'s address).
    Hello {
        host: Option<String>,
    },
    /// The collector's session time of the latest sample it has shown.
    At {
        t: f64,
    },
    /// The sessions it has open (a session screen): read their `onstat -g ses/sql/pqs` too.
    Focus {
        sids: Vec<u64>,
    },
    Mark {
        at: f64,
        text: String,
    },
    /// What its screen shows, for the others to follow: kept in the presence list, nothing run.
    View(View),
}

/// Bytes a second over the last few seconds, from a running total read now and then (the feed's
/// bytes, sent or received, for the cost line).
#[derive(Debug, Default)]
pub struct Rate {
    seen: std::collections::VecDeque<(std::time::Instant, u64)>,
}

impl Rate {
    /// Over about this long.
    const WINDOW: std::time::Duration = std::time::Duration::from_secs(10);

    /// The rate up to `total` at `now`: `None` until a second has been seen.
    pub fn per_s(&mut self, total: u64, now: std::time::Instant) -> Option<f64> {
        self.seen.push_back((now, total));
        while self.seen.len() > 2
            && self
                .seen
                .get(1)
                .is_some_and(|(t, _)| now.saturating_duration_since(*t) >= Self::WINDOW)
        {
            self.seen.pop_front();
        }
        let (t0, n0) = *self.seen.front()?;
        let over = now.saturating_duration_since(t0).as_secs_f64();
        (over >= 1.0).then(|| total.saturating_sub(n0) as f64 / over)
    }
}

/// The bytes of one line (JSON and a newline) of `value`.
pub fn line<T: Serialize>(value: &T) -> Vec<u8> {
    // Serializing plain structs and strings cannot fail.
    let mut v = serde_json::to_vec(value).unwrap_or_default();
    v.push(b'\n');
    v
}

/// A control line's bytes.
pub fn control(c: Control) -> Vec<u8> {
    line(&ControlLine { share: c })
}

/// Reads one viewer line: the message, or why it is refused.
pub fn viewer_msg(line: &[u8]) -> Result<ViewerMsg, String> {
    if line.len() > MAX_VIEWER_LINE {
        return Err(format!("a line longer than {MAX_VIEWER_LINE} bytes"));
    }
    let msg: ViewerMsg = serde_json::from_slice(line).map_err(|e| {
        let what = String::from_utf8_lossy(&line[..line.len().min(40)]).into_owned();
        format!("not a viewer message ({e}): {what}")
    })?;
    match &msg {
        ViewerMsg::Mark { text, at } if text.chars().count() > MAX_MARK_TEXT || !at.is_finite() => {
            Err(format!(
                "a mark's text is at most {MAX_MARK_TEXT} characters, its moment a number"
            ))
        }
        ViewerMsg::At { t } if !t.is_finite() => Err("`at` must be a number".into()),
        ViewerMsg::View(v)
            if !(1..=8).contains(&v.pane) || v.at.is_some_and(|t| !t.is_finite()) =>
        {
            Err("a view's pane is 1 to 8, its moment a number".into())
        }
        _ => Ok(msg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_viewer_may_send_only_its_five_messages() {
        assert_eq!(
            viewer_msg(br#"{"focus":{"sids":[812]}}"#),
            Ok(ViewerMsg::Focus { sids: vec![812] })
        );
        assert_eq!(
            viewer_msg(br#"{"view":{"pane":2,"sid":812,"open":true,"at":290.5}}"#),
            Ok(ViewerMsg::View(View {
                pane: 2,
                sid: Some(812),
                open: true,
                at: Some(290.5),
                follows: None
            }))
        );
        for junk in [
            &br#"{"run":"onmode -z 812"}"#[..],
            br#"{"focus":{"sids":[812],"argv":["onmode","-z"]}}"#,
            br#"{"interval":0.1}"#,
            b"onstat -g ses 812",
            b"\x00\xff\xfe",
            br#"{"mark":{"at":1e999,"text":"x"}}"#,
            br#"{"view":{"pane":9}}"#,
            br#"{"view":{"pane":1,"argv":["onmode","-z"]}}"#,
        ] {
            assert!(
                viewer_msg(junk).is_err(),
                "{:?}",
                String::from_utf8_lossy(junk)
            );
        }
        let long = format!(r#"{{"mark":{{"at":1,"text":"{}"}}}}"#, "x".repeat(300));
        assert!(viewer_msg(long.as_bytes()).is_err());
    }

    #[test]
    fn a_rate_is_over_the_last_seconds_and_none_before_one() {
        let t0 = std::time::Instant::now();
        let at = |s: u64| t0 + std::time::Duration::from_secs(s);
        let mut r = Rate::default();
        assert_eq!(r.per_s(0, t0), None);
        assert_eq!(r.per_s(1000, at(1)), Some(1000.0));
        // A burst long ago (the history at join) leaves the window.
        for s in 2..=30 {
            r.per_s(1000 + (s - 1) * 10, at(s));
        }
        let now = r.per_s(1000 + 30 * 10, at(31)).expect("a rate");
        assert!((now - 10.0).abs() < 0.01, "{now}");
    }

    #[test]
    fn the_feed_tells_its_control_lines_from_samples() {
        let c = control(Control::Refused("no".into()));
        assert!(matches!(
            serde_json::from_slice::<FeedLine>(&c),
            Ok(FeedLine::Control(_))
        ));
        let s = br#"{"t":1.5,"source":"onstat -u","argv":["onstat","-u"],"exit":5,"stdout":"x","stderr":""}"#;
        assert!(matches!(
            serde_json::from_slice::<FeedLine>(s),
            Ok(FeedLine::Sample(RawSample { t, .. })) if t == 1.5
        ));
    }
}
