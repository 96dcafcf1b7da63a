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

/// `text` with every control character but the line break and the tab replaced by `?`: what a
/// database user wrote (a user name, SQL) must not drive the terminal, a clipboard paste (`\e[201~`
/// ends a bracketed paste) or a shell reading an export.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                '?'
            } else {
                c
            }
        })
        .collect()
}

/// Text that is safe to write to a terminal, a file or a clipboard. The only way to make one is
/// the sanitizer ([`SafeText::new`]: control characters but newline and tab become `?`), so a
/// database user's name, a condition's name, a verdict or a recording's host cannot carry an
/// escape sequence (a pane title, an OSC 52 clipboard write) out of ifxtop: what prints, exports
/// or copies takes a `SafeText`, not a `&str`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SafeText(String);

impl SafeText {
    pub fn new(text: &str) -> SafeText {
        SafeText(printable(text))
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
    }

    #[test]
    fn export_names_sort_by_time() {
        let t = time::macros::datetime!(2026-11-22 13:35:02 UTC);
        assert_eq!(export_stem(t), "ifxtop-20261122T133502Z");
    }
}
