//! The four header lines on every screen: server, mode, uptime, refresh, Running/Frozen badge;
//! each source's data age and error; the server's vital signs (blocked, waits per second,
//! deadlocks, CPU, logs, the last checkpoint, memory growth); the top finding.

use crate::collect::extents::ExtentStatus;
use crate::format::human_duration;
use crate::model::snapshot::Snapshot;
use crate::tui::app::{App, Mode};
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use std::time::Duration;

pub(crate) fn render(app: &App, now: Duration, area: Rect, buf: &mut Buffer) {
    let theme = &app.theme;
    let snap = app.shown();
    buf.set_style(Rect { height: 1, ..area }, theme.header_bar);
    let line1 = title_line(app, snap, now, theme, area.width);
    buf.set_line(area.x, area.y, &line1, area.width);
    if area.height > 1 {
        let line2 = sources_line(app, snap, now, theme, area.width);
        buf.set_line(area.x, area.y + 1, &line2, area.width);
    }
    if area.height > 2 {
        let line3 = vitals_line(snap, theme, area.width);
        buf.set_line(area.x, area.y + 2, &line3, area.width);
    }
    if area.height > 3 {
        let line4 = finding_line(snap, theme, area.width);
        buf.set_line(area.x, area.y + 3, &line4, area.width);
    }
}

/// Where a finding's summary says why (`checkpoint blocking 35s: flushing, 40 threads wait,
/// slowed by memory reclaim`): kept when the line is cut.
const WHY: &str = ", slowed by ";

/// What the line above the panes says: the top finding above info, its marker first so it
/// reads without colour (`⚠ lock chain 42s: sid 812 holds up 3 ...`), with its severity and
/// `  +N more` when others are above info; or the calm line (`✓ calm...`, `◔ watching: ...`)
/// when none is. The screen's header, the text report and the fleet say it alike.
pub(crate) fn finding_text(
    snap: &Snapshot,
) -> (String, Option<crate::model::findings::Severity>, String) {
    use crate::model::findings::{calm_line, headline, Severity};
    if snap.server.mode.is_none() && snap.server.offline.is_none() {
        return (
            "findings: waiting for onstat -u".into(),
            None,
            String::new(),
        );
    }
    let Some(f) = headline(&snap.findings) else {
        return (
            calm_line(&snap.waiters, &snap.findings, &snap.vitals).into_owned(),
            None,
            String::new(),
        );
    };
    let more = snap
        .findings
        .iter()
        .filter(|g| g.severity > Severity::Info)
        .count()
        .saturating_sub(1);
    let more = if more > 0 {
        format!("  +{more} more")
    } else {
        String::new()
    };
    (crate::format::printable(&f.line()), Some(f.severity), more)
}

/// The top finding's line ([`finding_text`]) cut to the width, coloured by its severity.
pub(crate) fn finding_line<'a>(snap: &'a Snapshot, theme: &Theme, width: u16) -> Line<'a> {
    use crate::model::findings::Severity;
    let (line, severity, more) = finding_text(snap);
    let Some(severity) = severity else {
        return Line::from(Span::styled(format!(" {line}"), theme.dim));
    };
    let style = match severity {
        Severity::Critical => theme.error,
        Severity::Warning => theme.warn,
        Severity::Info => Style::new(),
    };
    // What the finding says goes before the count of the others (`f` lists them): when the
    // line is too wide, the count goes first; then the summary is cut before its "why" (`,
    // slowed by memory reclaim`), which is what to act on, rather than at its end.
    let cells = |t: &str| crate::format::cells(t);
    let width = usize::from(width);
    let more = if 1 + cells(&line) + cells(&more) > width {
        String::new()
    } else {
        more
    };
    let room = width.saturating_sub(1 + cells(&more)).max(1);
    let text = if cells(&line) <= room {
        line
    } else {
        match line.rsplit_once(WHY) {
            Some((head, why)) if cells(why) + cells(WHY) + 8 < room => {
                let why = format!("{WHY}{why}");
                let head_room = room - cells(&why);
                let head = crate::tui::table::fit(
                    head,
                    u16::try_from(head_room).unwrap_or(u16::MAX),
                    false,
                );
                format!("{}{why}", head.trim_end())
            }
            _ => crate::tui::table::fit(&line, u16::try_from(room).unwrap_or(u16::MAX), false),
        }
    };
    Line::from(vec![
        Span::styled(format!(" {text}"), style),
        Span::styled(more, theme.dim),
    ])
}

/// `12` for 12.3, `1.5` under 10, `0` for nothing.
fn per_s(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v < 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// The vital signs in one line, what needs action first and in the alarm colour; what does not
/// fit the width goes, the least telling first: an item's priority rises with its value (a
/// lock wait now and then says less than a transaction holding five logs).
pub(crate) fn vitals_line<'a>(snap: &'a Snapshot, theme: &Theme, width: u16) -> Line<'a> {
    let v = &snap.vitals;
    // (text, style, priority)
    let mut items: Vec<(String, Style, u8)> = Vec::new();
    if let Some(b) = &snap.server.blocked {
        items.push((format!(" Blocked:{b} "), theme.badge_alarm, 9));
    }
    // Style and priority by thresholds: (error at, warn at) and the priority of each.
    let level = |x: f64, error: f64, warn: f64, prios: (u8, u8, u8)| {
        if x >= error {
            (theme.error, prios.0)
        } else if x >= warn {
            (theme.warn, prios.1)
        } else {
            (Style::new(), prios.2)
        }
    };
    if let Some(r) = &v.rates {
        let waits = |name: &str, x: Option<f64>, noise: f64| {
            x.map(|x| {
                // Coloured as soon as there are any; kept when narrow once above the noise.
                let (st, _) = level(x, 10.0, f64::MIN_POSITIVE, (0, 0, 0));
                let (_, prio) = level(x, 10.0 * noise.max(1.0), noise, (8, 5, 1));
                (format!("{name} {}/s", per_s(x)), st, prio)
            })
        };
        items.extend(waits("lock waits", r.lokwaits, 1.0));
        items.extend(waits("buf waits", r.bufwaits, 1.0));
        items.extend(waits("latch", r.lchwaits, 10.0));
        // Threads held up by a checkpoint: only when there are any.
        if let Some(c) = r.ckpwaits.filter(|c| *c > 0.0) {
            items.push((format!("ckpt waits {}/s", per_s(c)), theme.warn, 6));
        }
        if let Some(d) = r.deadlks {
            let (st, prio) = if d > 0.0 {
                (theme.error, 7)
            } else {
                (Style::new(), 1)
            };
            items.push((format!("deadlocks {}/s", per_s(d)), st, prio));
        }
        if let Some(c) = r.commit {
            items.push((format!("commits {}/s", per_s(c)), Style::new(), 2));
        }
        if let Some(p) = r.read_cache_pct {
            let (st, prio) = if p < 90.0 {
                (theme.warn, 5)
            } else {
                (Style::new(), 1)
            };
            items.push((format!("cache {p:.1}%"), st, prio));
        }
    }
    if let Some(cpu) = v.vps.iter().find(|x| x.class == "cpu") {
        if let Some(b) = cpu.busy_pct {
            let (st, prio) = level(b, 90.0, 70.0, (8, 6, 3));
            items.push((format!("cpu VPs {b:.0}%"), st, prio));
        }
    }
    if let Some(q) = v.ready_queue.filter(|q| *q > 0) {
        let (st, prio) = if q >= 10 {
            (theme.warn, 7)
        } else {
            (Style::new(), 2)
        };
        items.push((format!("ready {q}"), st, prio));
    }
    if let Some(l) = &v.logs {
        let (st, prio) = level(l.used_pct, 80.0, 50.0, (8, 6, 3));
        items.push((format!("logs {:.0}% held", l.used_pct), st, prio));
        if let Some(t) = &l.oldest_transaction {
            if t.logs_spanned > 1 {
                let (st, prio) = if t.logs_spanned >= 3 {
                    (theme.warn, 7)
                } else {
                    (Style::new(), 4)
                };
                items.push((
                    format!(
                        "oldest txn {} logs{}",
                        t.logs_spanned,
                        t.sessid.map(|s| format!(" (sid {s})")).unwrap_or_default()
                    ),
                    st,
                    prio,
                ));
            }
        }
    }
    if let Some(c) = v.checkpoints.last() {
        let (st, prio) = if c.blocking {
            (theme.warn, 5)
        } else {
            (Style::new(), 2)
        };
        items.push((format!("last ckpt {:.1}s", c.total_s), st, prio));
    }
    if let Some(m) = &v.memory {
        if m.growth_kb > 0 {
            items.push((
                format!(
                    "mem +{}",
                    crate::format::human_bytes(m.growth_kb as u64 * 1024)
                ),
                theme.warn,
                4,
            ));
        }
    }
    io_items(snap, theme, &mut items);
    if items.is_empty() {
        return Line::from(Span::styled(" vitals: waiting for onstat -p", theme.dim));
    }
    let len = |items: &[(String, Style, u8)]| -> usize {
        items
            .iter()
            .map(|(t, _, _)| t.chars().count() + 2)
            .sum::<usize>()
            + 1
    };
    while len(&items) > usize::from(width) {
        let Some(lowest) = items
            .iter()
            .enumerate()
            .filter(|(_, (_, _, p))| *p < 9)
            .min_by_key(|(_, (_, _, p))| *p)
            .map(|(i, _)| i)
        else {
            break;
        };
        items.remove(lowest);
    }
    let mut spans = vec![Span::raw(" ")];
    for (text, st, _) in items {
        spans.push(Span::styled(text, st));
        spans.push(Span::raw("  "));
    }
    Line::from(spans)
}

/// The worst chunk latency and the largest replication lag, for the vitals line: in the alarm
/// colour and kept first when they need a look, else the first to go.
fn io_items(snap: &Snapshot, theme: &Theme, items: &mut Vec<(String, Style, u8)>) {
    use crate::model::io::{Concern, SLOW_AWAIT_MS, VERY_SLOW_AWAIT_MS};
    if let Some(c) = snap.io.worst() {
        if let Some(l) = c.latency_ms() {
            let ms = crate::tui::panes::ms(l);
            let name = c.dbspace.as_deref().unwrap_or("?");
            if l >= SLOW_AWAIT_MS {
                let st = if l >= VERY_SLOW_AWAIT_MS {
                    theme.error
                } else {
                    theme.warn
                };
                // The disk only when its own await is slow, with that figure (the pane's AWAIT);
                // else the time is Informix's, above a device that answers in time.
                let text = match c.device_await_ms.filter(|a| *a >= SLOW_AWAIT_MS) {
                    Some(a) => format!("slow disk {}ms ({name})", crate::tui::panes::ms(a)),
                    None => format!("slow chunk {ms}ms ({name})"),
                };
                items.push((text, st, 8));
            } else {
                items.push((format!("io {ms}ms"), Style::new(), 1));
            }
        }
    }
    if let Some(p) = snap.replication.worst() {
        let pages = p.lag_pages.map_or("?".to_string(), |n| {
            format!("{}pg", crate::format::thousands(n))
        });
        let secs = p
            .lag_s
            .map(|s| format!(" {}", human_duration(s)))
            .unwrap_or_default();
        match p.concern {
            _ if p.transmission.as_deref() == Some("Blocked") => {
                items.push((format!("{} BLOCKED {pages}{secs}", p.name), theme.error, 8))
            }
            Concern::Alarm => items.push((format!("{} {pages}{secs}", p.name), theme.error, 8)),
            Concern::Warn => items.push((format!("lag {} {pages}{secs}", p.name), theme.warn, 7)),
            _ => items.push((format!("lag {pages}"), Style::new(), 1)),
        }
    }
}

/// The wall clock's priority on the title line: above everything else.
const CLOCK: u8 = 10;

fn title_line<'a>(
    app: &'a App,
    snap: &'a Snapshot,
    now: Duration,
    theme: &Theme,
    width: u16,
) -> Line<'a> {
    let bar = theme.header_bar;
    // (span, priority): when the line is too wide the lowest priorities go first. The wall
    // clock goes last of all: on a call the time is what two DBAs match their screens by, and
    // it matters most in an incident, when the mode's flags, REC and FROZEN are shown too.
    let mut spans: Vec<(Span<'a>, u8)> =
        vec![(Span::styled(" ifxtop ", bar.patch(theme.title)), 4)];
    let name = match &app.mode {
        // On which host: over ssh it is not the one the terminal is on.
        Mode::Live => format!(
            "{}{}",
            app.server
                .clone()
                .unwrap_or_else(|| "(no INFORMIXSERVER)".into()),
            app.host
                .as_deref()
                .map(|h| format!("@{h}"))
                .unwrap_or_default()
        ),
        // One of several demo instances: which one.
        Mode::Demo { seed } => match &app.instance {
            Some(name) => format!("demo {name} (seed {seed})"),
            None => format!("demo (seed {seed})"),
        },
        // The file's name only: the path is in the shell's history.
        Mode::Replay { file } => format!(
            "replay {}",
            std::path::Path::new(file)
                .file_name()
                .map_or(file.as_str().into(), |f| f.to_string_lossy())
        ),
    };
    spans.push((Span::styled(format!("{name}  "), bar), 5));
    let s = &snap.server;
    if let Some(off) = &s.offline {
        spans.push((
            Span::styled(format!("OFF-LINE: {off}  "), bar.patch(theme.error)),
            8,
        ));
    } else {
        if let Some(v) = &s.version {
            // 15.0 says which storage mode it runs in (`15.0.0.0 Compatibility mode`).
            let text = match &s.storage_mode {
                Some(m) => format!("{v} {m}  "),
                None => format!("{v}  "),
            };
            spans.push((Span::styled(text, bar), 1));
        }
        if let Some(m) = &s.mode {
            let mut mode = m.clone();
            for f in &s.mode_flags {
                mode.push_str(&format!(" ({f})"));
            }
            // A checkpoint requested or blocked is the alarm: its own badge, readable on any
            // terminal background (not a colour on the bar's colour).
            let alarm = s
                .mode_flags
                .iter()
                .any(|f| f.starts_with("CKPT") || f == "LONGTX");
            if alarm {
                spans.push((Span::styled(format!(" {mode} "), theme.badge_alarm), 8));
                spans.push((Span::styled("  ", bar), 8));
            } else {
                spans.push((Span::styled(format!("{mode}  "), bar), 6));
            }
        }
        if let Some(up) = s.uptime_s {
            spans.push((
                Span::styled(format!("up {}  ", human_duration(up as f64)), bar),
                2,
            ));
        }
    }
    if app.replay.is_none() {
        // A replay plays at its own speed; the interval means nothing there.
        spans.push((
            Span::styled(format!("every {}s  ", app.interval.as_secs_f64()), bar),
            3,
        ));
    }
    if let Some(wall) = app.wall_clock(shown_at(app, now)) {
        let text = if width >= 120 {
            crate::format::local_date_time(wall)
        } else {
            crate::format::local_time(wall)
        };
        spans.push((
            Span::styled(format!("{text}  "), bar.patch(theme.title)),
            CLOCK,
        ));
    }
    if let Some(rec) = &app.recording {
        let (text, style) = match &rec.stopped {
            None => (
                format!(" REC {} ", crate::format::human_bytes(rec.bytes)),
                theme.badge_alarm,
            ),
            Some(_) => (" REC stopped ".to_string(), theme.badge_frozen),
        };
        spans.push((Span::styled(text, style), 7));
        spans.push((Span::styled(" ", bar), 7));
    }
    if let Some(w) = &app.watching {
        let watching = match w.viewers.len() {
            0 => String::new(),
            n => format!(" · {n} watching"),
        };
        let text = match (&w.following, &w.ended, w.behind_s) {
            (Some(_), Some(_), _) => " FEED ENDED ".to_string(),
            (Some(_), None, behind) => format!(
                " ATTACHED{}{watching} ",
                behind.map_or(String::new(), |b| format!(" +{b:.1}s"))
            ),
            (None, _, _) => format!(" SHARED{watching} "),
        };
        spans.push((Span::styled(text, theme.badge_frozen), 7));
        spans.push((Span::styled(" ", bar), 7));
        // Following another viewer's view (`@`): whose, above whom it follows.
        if let Some((_, name)) = &app.following {
            spans.push((
                Span::styled(
                    format!(" FOLLOWING {} ", crate::format::printable(name)),
                    theme.badge_frozen,
                ),
                8,
            ));
            spans.push((Span::styled(" ", bar), 8));
        }
        // Whom it follows goes before the badge does: how far behind stays on a narrow screen.
        if let Some(f) = &w.following {
            spans.push((
                Span::styled(format!("{}  ", crate::format::printable(f)), bar),
                3,
            ));
        }
    }
    let badge = match (&app.frozen, &app.replay, app.past) {
        // A viewer back in what it received: how far behind the live end it stands.
        // The moment on screen: while a seek reads its way, the one it left.
        (Some((_, at)), None, Some(p)) => Span::styled(
            format!(
                " BEHIND {}{} ",
                human_duration(now.saturating_sub(*at).as_secs_f64()),
                p.seeking
                    .map_or(String::new(), |f| format!(" seeking {:.0}%", f * 100.0))
            ),
            theme.badge_frozen,
        ),
        (Some((_, at)), _, _) => Span::styled(
            format!(
                " FROZEN {} ",
                human_duration(now.saturating_sub(*at).as_secs_f64())
            ),
            theme.badge_frozen,
        ),
        (None, Some(r), _) => Span::styled(
            format!(
                " REPLAY {}/{} {}{} ",
                crate::format::clock(r.position),
                crate::format::clock(r.length),
                match r.seeking {
                    // The panes show an earlier moment until the seek gets there.
                    Some(p) => format!("seeking {:.0}%", p * 100.0),
                    None if r.paused => "paused".to_string(),
                    None => "▶".to_string(),
                },
                if (r.speed - 1.0).abs() > f64::EPSILON {
                    format!(" x{}", r.speed)
                } else {
                    String::new()
                }
            ),
            theme.badge_frozen,
        ),
        (None, None, _) => Span::styled(" RUNNING ", bar.patch(theme.badge_running)),
    };
    spans.push((badge, 9));
    let width = usize::from(width);
    let len =
        |v: &[(Span, u8)]| -> usize { v.iter().map(|(s, _)| s.content.chars().count()).sum() };
    while len(&spans) > width {
        let Some(lowest) = spans
            .iter()
            .enumerate()
            .min_by_key(|(_, (_, p))| *p)
            .map(|(i, _)| i)
        else {
            break;
        };
        spans.remove(lowest);
    }
    Line::from(spans.into_iter().map(|(s, _)| s).collect::<Vec<_>>())
}

fn sources_line<'a>(
    app: &'a App,
    snap: &'a Snapshot,
    now: Duration,
    theme: &Theme,
    width: u16,
) -> Line<'a> {
    struct Item {
        name: &'static str,
        age: Option<f64>,
        error: Option<String>,
        stale: bool,
        /// Read every second (at an interval of 1 s): the age the screen's moment has.
        fast: bool,
        /// Older than its own period allows (a slow source late for its next run).
        overdue: bool,
    }
    // One item per short name (every source has one, from the registry): the oldest age,
    // the first error, late if any is late.
    let mut items: Vec<Item> = Vec::with_capacity(snap.sources.len());
    for s in snap.sources.iter().filter(|s| !s.short.is_empty()) {
        let item = Item {
            name: s.short,
            age: s.age_s,
            stale: s.error.is_none()
                && s.age_s.is_some_and(|a| {
                    a > 3.0 * s.period_s * app.interval.as_secs_f64().max(1.0) + 2.0
                }),
            fast: s.period_s <= 1.0,
            overdue: s.error.is_none()
                && s.age_s.is_some_and(|a| {
                    a > 1.5 * s.period_s * app.interval.as_secs_f64().max(1.0) + 2.0
                }),
            error: s.error.as_ref().map(|e| format!(" {}: {e}", s.source)),
        };
        match items.iter_mut().find(|i| i.name == item.name) {
            Some(i) => {
                i.age = match (i.age, item.age) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
                i.stale |= item.stale;
                i.overdue |= item.overdue;
                i.fast &= item.fast;
                if i.error.is_none() {
                    i.error = item.error;
                }
            }
            None => items.push(item),
        }
    }
    let map = extent_span(app, now, theme);
    let first_error = items.iter().find_map(|i| i.error.clone());
    let age = |a: Option<f64>| a.map_or("-".to_string(), human_duration);
    let full: usize = 1
        + items
            .iter()
            .map(|i| i.name.len() + age(i.age).len() + 2 + usize::from(i.error.is_some()))
            .sum::<usize>()
        + map.content.chars().count()
        + first_error.as_ref().map_or(0, |e| e.chars().count());
    let mut spans = vec![Span::raw(" ")];
    if snap.sources.is_empty() {
        spans.push(Span::styled("waiting for first data", theme.dim));
    } else if full <= usize::from(width) {
        // Room for every source's age.
        for i in &items {
            let st = if i.error.is_some() {
                theme.error
            } else if i.stale {
                theme.warn
            } else {
                Style::new()
            };
            let bang = if i.error.is_some() { "!" } else { "" };
            spans.push(Span::styled(
                format!("{} {}{bang} ", i.name, age(i.age)),
                st,
            ));
        }
    } else {
        // Narrow: the age of the every-second data (what the screen's moment is: a source read
        // every minute is not a minute-stale screen), then only the sources that need a look:
        // failing, or late for their own period.
        let oldest = items
            .iter()
            .filter(|i| i.fast && i.error.is_none() && !i.stale)
            .filter_map(|i| i.age)
            .fold(None::<f64>, |m, a| Some(m.map_or(a, |m| m.max(a))));
        let healthy = items
            .iter()
            .filter(|i| i.error.is_none() && !i.overdue)
            .count();
        spans.push(Span::raw(format!("data ≤{} ({healthy} ok) ", age(oldest))));
        for i in items
            .iter()
            .filter(|i| i.error.is_some() || i.stale || i.overdue)
        {
            let (st, bang) = if i.error.is_some() {
                (theme.error, "!")
            } else {
                (theme.warn, "")
            };
            spans.push(Span::styled(
                format!("{} {}{bang} ", i.name, age(i.age)),
                st,
            ));
        }
    }
    spans.push(map);
    if let Some(e) = first_error {
        spans.push(Span::styled(e, theme.error));
    }
    Line::from(spans)
}

/// The moment whose server clock the header shows: when frozen, when it was frozen; in a
/// replay, as recorded.
pub(super) fn shown_at(app: &App, now: Duration) -> Duration {
    match &app.frozen {
        Some((_, at)) => *at,
        None => now,
    }
}

/// The extent map's part of the sources line, as text.
pub(super) fn map_text(app: &App, now: Duration) -> String {
    extent_span(app, now, &app.theme).content.into_owned()
}

fn extent_span(app: &App, now: Duration, theme: &Theme) -> Span<'static> {
    match &app.extents {
        ExtentStatus::None => Span::styled(" map: none", theme.dim),
        ExtentStatus::Building { what, since } => Span::styled(
            format!(
                " map: building ({what}) {}",
                human_duration(now.saturating_sub(*since).as_secs_f64())
            ),
            theme.warn,
        ),
        ExtentStatus::Ready {
            extents,
            built_at,
            age_at_load,
            ..
        } => {
            let age = *age_at_load + now.saturating_sub(*built_at);
            Span::raw(format!(
                " map: {extents} extents, {} old",
                human_duration(age.as_secs_f64())
            ))
        }
        ExtentStatus::Failed {
            error,
            in_use: Some(extents),
            ..
        } => Span::styled(
            format!(" map: {extents} extents (older), rebuild failed: {error}"),
            theme.warn,
        ),
        ExtentStatus::Failed { error, .. } => {
            Span::styled(format!(" map: failed: {error}"), theme.error)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::io::{ChunkRow, Concern};

    fn chunk(device_await_ms: f64, avg_read_ms: f64) -> ChunkRow {
        ChunkRow {
            chunk: 4,
            dbspace: Some("datadbs2".into()),
            path: "/ifx/chunks/datadbs2_01".into(),
            device: Some("dm-8".into()),
            device_name: None,
            chunk_kind: Some("raw"),
            layers: Vec::new(),
            disks: Vec::new(),
            device_unknown: None,
            reads_per_s: Some(60.0),
            writes_per_s: Some(10.0),
            avg_read_ms: Some(avg_read_ms),
            avg_read_over_s: Some(20.0),
            avg_write_ms: None,
            avg_write_over_s: None,
            device_iops: Some(70.0),
            device_await_ms: Some(device_await_ms),
            device_r_await_ms: None,
            device_w_await_ms: None,
            device_util_pct: Some(30.0),
            verdict: None,
            concern: Concern::None,
            await_history: Vec::new(),
            demand_history: Vec::new(),
        }
    }

    fn line_of(c: ChunkRow) -> String {
        let mut snap = Snapshot::default();
        std::sync::Arc::make_mut(&mut snap.io).chunks.push(c);
        vitals_line(&snap, &Theme::plain(), 80)
            .spans
            .iter()
            .map(|s| s.content.as_ref())
            .collect()
    }

    /// A replay at 80 columns, paused or played fast, keeps the recorded wall-clock time: the
    /// file's name goes first.
    #[test]
    fn a_replay_keeps_its_clock_before_its_file_name() {
        use crate::collect::replay::ReplayUi;
        use crate::tui::keymap::Keymap;
        let wall = time::macros::datetime!(2026-11-22 13:35:02 UTC);
        for (paused, speed) in [(true, 1.0), (false, 4.0), (false, 1.0)] {
            let mut app = App::new(
                Keymap::default(),
                Theme::plain(),
                Mode::Replay {
                    file: "/var/tmp/ifxtop-db01-ol_prod-2026-11-22T13-35-02.ifxrec".into(),
                },
                Duration::from_secs(1),
            );
            app.wall_start = Some(wall);
            app.replay = Some(ReplayUi {
                position: Duration::from_secs(90),
                length: Duration::from_secs(600),
                paused,
                speed,
                ..ReplayUi::default()
            });
            let now = Duration::from_secs(90);
            let line: String = title_line(&app, app.shown(), now, &Theme::plain(), 80)
                .spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect();
            let clock = crate::format::local_time(wall + now);
            assert!(line.contains(&clock), "{paused} x{speed}: {line}");
            assert!(line.contains("REPLAY"), "{line}");
            assert!(line.chars().count() <= 80, "{line}");
        }
    }

    /// Informix 15.0's banner: the version and its storage mode in the title at 160 columns.
    #[test]
    fn the_15_0_storage_mode_shows_beside_the_version() {
        use crate::tui::keymap::Keymap;
        let mut app = App::new(
            Keymap::default(),
            Theme::plain(),
            Mode::Live,
            Duration::from_secs(1),
        );
        let mut snap = Snapshot::default();
        snap.server.version = Some("15.0.0.0".into());
        snap.server.storage_mode = Some("Compatibility mode".into());
        snap.server.mode = Some("On-Line".into());
        app.live = std::sync::Arc::new(snap);
        let line: String = title_line(&app, app.shown(), Duration::ZERO, &Theme::plain(), 160)
            .spans
            .iter()
            .map(|s| s.content.as_ref())
            .collect();
        assert!(line.contains("15.0.0.0 Compatibility mode"), "{line}");
    }

    /// "slow disk" carries the device's own await (the pane's AWAIT column), even when
    /// Informix's time per read is a little longer; a slow chunk on a fast device is not
    /// called a slow disk.
    #[test]
    fn the_worst_chunk_latency_names_what_is_slow() {
        let l = line_of(chunk(45.0, 46.0));
        assert!(l.contains("slow disk 45ms (datadbs2)"), "{l}");
        let l = line_of(chunk(1.5, 25.0));
        assert!(l.contains("slow chunk 25ms (datadbs2)"), "{l}");
        assert!(!l.contains("disk"), "{l}");
        let l = line_of(chunk(1.5, 2.0));
        assert!(l.contains("io 2.0ms"), "{l}");
    }
}
