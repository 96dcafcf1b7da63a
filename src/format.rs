//! How numbers, durations and sizes read on screen and in reports (one place, so the panes,
//! the session screen and `ifxtop snapshot` say the same thing the same way).

use std::time::Duration;

/// `42s`, `3m05s`, `2h10m`.
pub(crate) fn human_duration(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else if s < 86_400 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else {
        format!("{}d{:02}h", s / 86_400, (s % 86_400) / 3600)
    }
}

/// `human_duration`, or as a lower bound (`≥6s`) when the time is only as long as ifxtop has
/// seen it and it began before.
pub(crate) fn human_duration_bound(secs: f64, at_least: bool) -> String {
    if at_least {
        format!("≥{}", human_duration(secs))
    } else {
        human_duration(secs)
    }
}

/// `245 KB`, `1.2 MB`, `812 B`.
pub(crate) fn human_bytes(n: u64) -> String {
    const K: f64 = 1024.0;
    let f = n as f64;
    if f < K {
        format!("{n} B")
    } else if f < K * K {
        format!("{:.0} KB", f / K)
    } else if f < K * K * K {
        format!("{:.1} MB", f / K / K)
    } else {
        format!("{:.1} GB", f / K / K / K)
    }
}

/// `764K`, `12.3M`, `1.2G`: a size in at most 5 cells (top's RES), for a table column. Under
/// 100 of a unit it keeps a decimal.
pub(crate) fn compact_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["K", "M", "G", "T", "P", "E"];
    if n < 1024 {
        return format!("{n}B");
    }
    let mut f = n as f64 / 1024.0;
    let mut unit = 0;
    // 1023.6K would print as 1024K: past 999.95 of a unit, the next one.
    while f >= 999.95 && unit + 1 < UNITS.len() {
        f /= 1024.0;
        unit += 1;
    }
    if f < 99.95 {
        format!("{f:.1}{}", UNITS[unit])
    } else {
        format!("{f:.0}{}", UNITS[unit])
    }
}

/// `mm:ss` or `h:mm:ss`.
pub(crate) fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, (s % 3600) / 60, s % 60)
    } else {
        format!("{:02}:{:02}", s / 60, s % 60)
    }
}

/// `ifxtop-20261122T133502Z` from a UTC time: sortable, no characters shells dislike.
pub(crate) fn export_stem(now: time::OffsetDateTime) -> String {
    let fmt = time::macros::format_description!("[year][month][day]T[hour][minute][second]Z");
    let stamp = now
        .to_offset(time::UtcOffset::UTC)
        .format(&fmt)
        .unwrap_or_else(|_| "now".to_string());
    format!("ifxtop-{stamp}")
}

/// `2026-11-22T13:35:02Z`: ISO 8601 (RFC 3339), UTC, to the second.
pub fn iso_utc(t: time::OffsetDateTime) -> String {
    let fmt = time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    t.to_offset(time::UtcOffset::UTC)
        .format(&fmt)
        .unwrap_or_default()
}

/// `13:35:20` in the time's own offset (the server's time zone).
pub fn local_time(t: time::OffsetDateTime) -> String {
    let fmt = time::macros::format_description!("[hour]:[minute]:[second]");
    t.format(&fmt).unwrap_or_default()
}

/// `2026-11-22 13:35:20` in the time's own offset.
pub fn local_date_time(t: time::OffsetDateTime) -> String {
    let fmt = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    t.format(&fmt).unwrap_or_default()
}

/// A moment as a DBA types it, wherever ifxtop takes one (`snapshot --at`, `ash --from/--to`,
/// `--demo-at`, the replay's `:` seek): seconds into the timeline (`90`, `42.5`, `90s`, `2m`,
/// `1m30s`), a share of a recording (`40%`), or a time of day on its clock (`13:34`,
/// `13:34:50`). A colon always means a time of day.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum When {
    Offset(Duration),
    /// A share of the recording, 0 to 1.
    Share(f64),
    TimeOfDay(time::Time),
}

/// The latest moment ifxtop takes (`--at`, `--to`, `--from`, `--demo-at`, a recording's times):
/// about ten years. Past about 2e10 s the session clock's nanoseconds overflow, and the demo's
/// walk to `snapshot --demo --at 2e10` never ended.
pub const MAX_MOMENT: Duration = Duration::from_secs(10 * 365 * 86_400);

/// What `When` accepts, for its errors.
const WHEN_FORMS: &str =
    "seconds (90, 42.5, 2m, 1m30s), a share of a recording (40%) or a time of day (13:34, 13:34:50)";

impl std::str::FromStr for When {
    type Err = String;

    fn from_str(text: &str) -> Result<When, String> {
        let t = text.trim();
        let bad = || format!("`{text}`: {WHEN_FORMS}");
        if let Some(p) = t.strip_suffix('%') {
            let v: f64 = p.trim().parse().map_err(|_| bad())?;
            return if (0.0..=100.0).contains(&v) {
                Ok(When::Share(v / 100.0))
            } else {
                Err(format!("`{text}`: a share from 0% to 100%"))
            };
        }
        if t.contains(':') {
            let parts: Vec<u8> = t
                .split(':')
                .map(|p| {
                    let p = p.trim();
                    if p.is_empty() || p.len() > 2 || !p.bytes().all(|b| b.is_ascii_digit()) {
                        return Err(());
                    }
                    p.parse::<u8>().map_err(|_| ())
                })
                .collect::<Result<_, _>>()
                .map_err(|_| bad())?;
            let (h, m, s) = match parts.as_slice() {
                [h, m] => (*h, *m, 0),
                [h, m, s] => (*h, *m, *s),
                _ => return Err(bad()),
            };
            return time::Time::from_hms(h, m, s)
                .map(When::TimeOfDay)
                .map_err(|_| format!("`{text}`: not a time of day (00:00:00 to 23:59:59)"));
        }
        // `2m`, `1m30s`, `90s`, `90`.
        let (minutes, rest) = match t.split_once('m') {
            Some((m, rest)) => (Some(m), rest),
            None => (None, t),
        };
        let minutes: f64 = match minutes {
            Some(m) => m.trim().parse().map_err(|_| bad())?,
            None => 0.0,
        };
        let rest = rest.trim();
        let rest = rest.strip_suffix('s').unwrap_or(rest).trim();
        let seconds: f64 = if rest.is_empty() && t.contains('m') {
            0.0
        } else {
            rest.parse().map_err(|_| bad())?
        };
        if !(minutes.is_finite() && seconds.is_finite()) {
            return Err(bad());
        }
        let d = Duration::try_from_secs_f64(minutes * 60.0 + seconds)
            .map_err(|_| format!("`{text}`: 0 seconds or more"))?;
        if d > MAX_MOMENT {
            return Err(format!(
                "`{text}`: at most {} s (ten years) into a timeline",
                MAX_MOMENT.as_secs()
            ));
        }
        Ok(When::Offset(d))
    }
}

impl std::fmt::Display for When {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            When::Offset(d) => write!(f, "{}", d.as_secs_f64()),
            When::Share(p) => write!(f, "{}%", p * 100.0),
            When::TimeOfDay(t) => write!(f, "{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second()),
        }
    }
}

impl When {
    /// Seconds into a timeline that started at `started` (its clock and time zone, for a time
    /// of day: the first such moment from the start on) and lasts `length` (for a share).
    pub fn into_timeline(
        self,
        started: Option<time::OffsetDateTime>,
        length: Option<Duration>,
    ) -> Result<Duration, String> {
        match self {
            When::Offset(d) => Ok(d),
            When::Share(p) => length.map(|l| l.mul_f64(p)).ok_or_else(|| {
                format!("{self}: a share needs a recording's length: give seconds or a time of day")
            }),
            When::TimeOfDay(t) => {
                let started = started.ok_or_else(|| {
                    format!(
                        "{self}: a time of day needs the recording's start time, which it does \
                         not have: give seconds"
                    )
                })?;
                let mut at = started.replace_time(t);
                if at < started {
                    at += time::Duration::days(1);
                }
                Duration::try_from(at - started).map_err(|_| format!("{self}: out of range"))
            }
        }
    }
}

/// `1 lock`, `3 locks`, `1 session waits`: a count with its words agreeing (the one helper for
/// every such count on screen and in reports).
pub(crate) fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `2,400`, `97,104`: a count with thousands separated, as the verdicts print them.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Splits `text` into lines of at most `width` characters at blanks (a longer word gets a line
/// of its own); no line for empty text.
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        let len = crate::format::cells(&cur);
        if len > 0 && len + 1 + crate::format::cells(word) > width {
            out.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The terminal cells `text` takes: a CJK character two, a combining mark none (what the
/// terminal draws, not the characters counted).
pub fn cells(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// `text` cut to at most `max` cells, with `…` (one cell) when cut.
pub fn cut(text: &str, max: usize) -> String {
    if cells(text) <= max {
        return text.to_string();
    }
    let room = max.saturating_sub(1);
    let mut s = String::with_capacity(room + 3);
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > room {
            break;
        }
        used += w;
        s.push(c);
    }
    s.push('…');
    s
}

/// A bidirectional control: an embedding, override or isolate (U+202A-U+202E, U+2066-U+2069)
/// or a direction mark (U+200E, U+200F, U+061C). Not control characters to Unicode (they are
/// formats), yet one in a user name turns the rest of the line around where it is shown: a
/// right-to-left override makes a name or a path read as another ("Trojan Source").
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}'
    )
}

/// A character no text leaving ifxtop may carry as itself: a control character (C0, DEL, C1:
/// an escape sequence drives the terminal, `\e[201~` ends a bracketed paste) or a bidirectional
/// control. The one rule: the text sanitizer, the JSON one and the screen's cells all ask it.
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || is_bidi_control(c)
}

/// `text` with every unsafe character ([`is_unsafe`]) but the line break and the tab replaced by
/// `?`: what a database user wrote (a user name, SQL) must not drive the terminal, a clipboard
/// paste or a shell reading an export, nor turn a line around.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| {
            if is_unsafe(c) && c != '\n' && c != '\t' {
                '?'
            } else {
                c
            }
        })
        .collect()
}

/// JSON text (serde_json's output) with every unsafe character ([`is_unsafe`]) left in it
/// written as its `\uXXXX` escape: serde_json escapes C0 controls but writes DEL, C1 controls
/// and bidirectional controls as they are. They occur only inside strings (JSON's own syntax is
/// ASCII), where the escape reads back as the same character: the data is kept whole, the text
/// carries none of them. The line breaks and blanks of pretty-printed JSON stay.
fn json_escaped(json: &str) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if is_unsafe(c) && c != '\n' && c != '\t' {
            // Every unsafe character is in the Basic Multilingual Plane: one escape each.
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// Text that is safe to write to a terminal, a file or a clipboard. The only ways to make one
/// are the sanitizers ([`SafeText::new`]: unsafe characters but newline and tab become `?`;
/// [`SafeText::json`]: JSON with them escaped), so a database user's name, a condition's name, a
/// verdict or a recording's host cannot carry an escape sequence (a pane title, an OSC 52
/// clipboard write) or a right-to-left override out of ifxtop: what prints, exports or copies
/// takes a `SafeText`, not a `&str`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SafeText(String);

impl SafeText {
    pub fn new(text: &str) -> SafeText {
        SafeText(printable(text))
    }

    /// Serialized JSON, its unsafe characters escaped (it reads back as the same data).
    pub fn json(json: &str) -> SafeText {
        SafeText(json_escaped(json))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Display for SafeText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_moment_is_typed_as_seconds_a_share_or_a_time_of_day() {
        let w = |s: &str| s.parse::<When>();
        assert_eq!(w("90"), Ok(When::Offset(Duration::from_secs(90))));
        assert_eq!(w("42.5"), Ok(When::Offset(Duration::from_millis(42_500))));
        assert_eq!(w("90s"), Ok(When::Offset(Duration::from_secs(90))));
        assert_eq!(w("2m"), Ok(When::Offset(Duration::from_secs(120))));
        assert_eq!(w("1m30s"), Ok(When::Offset(Duration::from_secs(90))));
        assert_eq!(w("40%"), Ok(When::Share(0.4)));
        assert_eq!(
            w("13:34:50"),
            Ok(When::TimeOfDay(time::macros::time!(13:34:50)))
        );
        assert_eq!(w("13:10"), Ok(When::TimeOfDay(time::macros::time!(13:10))));
        for bad in [
            "soon", "140%", "25:00:00", "13:60", "1:2:3:4", "-5", "13::50", "NaN", "",
        ] {
            assert!(w(bad).is_err(), "{bad}");
        }
        assert!(w("soon")
            .unwrap_err()
            .contains("a time of day (13:34, 13:34:50)"));
    }

    #[test]
    fn a_time_of_day_is_on_the_timelines_clock() {
        let started = time::macros::datetime!(2026-11-22 13:30:00 UTC);
        let at = |s: &str| {
            s.parse::<When>()
                .and_then(|w| w.into_timeline(Some(started), None))
        };
        assert_eq!(at("13:34:50"), Ok(Duration::from_secs(290)));
        // Earlier than the start: the next day's.
        assert_eq!(
            at("00:00:10"),
            Ok(Duration::from_secs(10 * 3600 + 30 * 60 + 10))
        );
        // In the recording's own time zone.
        let east = time::macros::datetime!(2026-11-22 13:30:00 +02:00);
        assert_eq!(
            When::TimeOfDay(time::macros::time!(13:31)).into_timeline(Some(east), None),
            Ok(Duration::from_secs(60))
        );
        assert!("13:34:50"
            .parse::<When>()
            .and_then(|w| w.into_timeline(None, None))
            .unwrap_err()
            .contains("start time"));
        assert_eq!(
            When::Share(0.5).into_timeline(None, Some(Duration::from_secs(300))),
            Ok(Duration::from_secs(150))
        );
        assert!(When::Share(0.5).into_timeline(Some(started), None).is_err());
    }

    use super::*;

    #[test]
    fn durations_read_like_top() {
        assert_eq!(human_duration(0.4), "0s");
        assert_eq!(human_duration(72.0), "1m12s");
        assert_eq!(human_duration(7260.0), "2h01m");
        assert_eq!(human_duration(90_000.0), "1d01h");
    }

    #[test]
    fn compact_sizes_fit_five_cells() {
        assert_eq!(compact_bytes(812), "812B");
        assert_eq!(compact_bytes(12_288), "12.0K");
        assert_eq!(compact_bytes(782_336), "764K");
        assert_eq!(compact_bytes(1_048_576), "1.0M");
        assert_eq!(compact_bytes(12_897_485), "12.3M");
        assert_eq!(compact_bytes(1_048_000), "1.0M");
        assert_eq!(compact_bytes(3 << 30), "3.0G");
        assert_eq!(compact_bytes(u64::MAX), "16.0E");
        for n in [1023, 102_350, 1_047_552, 1_073_000_000, u64::MAX] {
            assert!(compact_bytes(n).len() <= 5, "{n}: {}", compact_bytes(n));
        }
    }

    #[test]
    fn printable_text_keeps_lines_and_drops_escapes() {
        assert_eq!(
            printable("x\u{1b}[201~\u{1b}]0;pwn\u{7}\nok\t1"),
            "x?[201~?]0;pwn?\nok\t1"
        );
        assert_eq!(printable("caf\u{e9}"), "caf\u{e9}");
        assert_eq!(printable("ev\u{202e}il\u{9b}\u{2066}"), "ev?il??");
    }

    #[test]
    fn json_keeps_its_data_and_carries_no_unsafe_character() {
        let name = "ev\u{202e}il\u{9b}\u{7f}\u{1b}";
        let j = serde_json::to_string_pretty(&serde_json::json!({ "user": name })).expect("json");
        let safe = SafeText::json(&j);
        let unsafe_left = |c: char| is_unsafe(c) && c != '\n' && c != '\t';
        assert!(!safe.as_str().chars().any(unsafe_left), "{safe}");
        assert!(
            safe.as_str().contains("ev\\u202eil\\u009b\\u007f\\u001b"),
            "{safe}"
        );
        let back: serde_json::Value = serde_json::from_str(safe.as_str()).expect("reads back");
        assert_eq!(back["user"], name);
    }

    #[test]
    fn export_names_sort_by_time() {
        let t = time::macros::datetime!(2026-11-22 13:35:02 UTC);
        assert_eq!(export_stem(t), "ifxtop-20261122T133502Z");
    }
}
