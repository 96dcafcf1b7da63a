//! The two header lines on every screen: server, mode, uptime, refresh, Running/Frozen badge;
//! then each source's data age and error.

use super::theme::Theme;
use crate::app::{App, ExtentStatus, Mode};
use crate::model::snapshot::Snapshot;
use crate::views::panes::human_duration;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use std::time::Duration;

pub fn render(app: &App, now: Duration, area: Rect, buf: &mut Buffer) {
    let theme = &app.theme;
    let snap = app.shown();
    buf.set_style(Rect { height: 1, ..area }, theme.header_bar);
    let line1 = title_line(app, snap, now, theme);
    buf.set_line(area.x, area.y, &line1, area.width);
    if area.height > 1 {
        let line2 = sources_line(app, snap, now, theme);
        buf.set_line(area.x, area.y + 1, &line2, area.width);
    }
}

fn title_line<'a>(app: &'a App, snap: &'a Snapshot, now: Duration, theme: &Theme) -> Line<'a> {
    let bar = theme.header_bar;
    let mut spans = vec![Span::styled(" ifxtop ", bar.patch(theme.title))];
    let name = match &app.mode {
        Mode::Live => app
            .server
            .clone()
            .unwrap_or_else(|| "(no INFORMIXSERVER)".into()),
        Mode::Demo { seed } => format!("demo (seed {seed})"),
        Mode::Replay { file } => format!("replay {file}"),
    };
    spans.push(Span::styled(format!("{name}  "), bar));
    let s = &snap.server;
    if let Some(off) = &s.offline {
        spans.push(Span::styled(
            format!("OFF-LINE: {off}  "),
            bar.patch(theme.error),
        ));
    } else {
        if let Some(v) = &s.version {
            spans.push(Span::styled(format!("{v}  "), bar));
        }
        if let Some(m) = &s.mode {
            let mut mode = m.clone();
            for f in &s.mode_flags {
                mode.push_str(&format!(" ({f})"));
            }
            let st = if s.mode_flags.iter().any(|f| f.starts_with("CKPT")) {
                bar.patch(theme.warn)
            } else {
                bar
            };
            spans.push(Span::styled(format!("{mode}  "), st));
        }
        if let Some(b) = &s.blocked {
            spans.push(Span::styled(
                format!("Blocked:{b}  "),
                bar.patch(theme.error),
            ));
        }
        if let Some(up) = s.uptime_s {
            spans.push(Span::styled(
                format!("up {}  ", human_duration(up as f64)),
                bar,
            ));
        }
    }
    spans.push(Span::styled(format!("every {}s  ", app.interval), bar));
    let badge = match (&app.frozen, &app.replay) {
        (Some((_, at)), _) => Span::styled(
            format!(
                " FROZEN {} ",
                human_duration(now.saturating_sub(*at).as_secs_f64())
            ),
            theme.badge_frozen,
        ),
        (None, Some(r)) => Span::styled(
            format!(
                " REPLAY {}/{} {}{} ",
                clock(r.position),
                clock(r.length),
                if r.paused { "paused" } else { "▶" },
                if (r.speed - 1.0).abs() > f64::EPSILON {
                    format!(" x{}", r.speed)
                } else {
                    String::new()
                }
            ),
            theme.badge_frozen,
        ),
        (None, None) => Span::styled(" RUNNING ", bar.patch(theme.badge_running)),
    };
    spans.push(badge);
    Line::from(spans)
}

/// `mm:ss` or `h:mm:ss`.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, (s % 3600) / 60, s % 60)
    } else {
        format!("{:02}:{:02}", s / 60, s % 60)
    }
}

/// Short names for the header's source list.
fn short(source: &str) -> Option<&'static str> {
    Some(match source {
        "onstat -u" => "-u",
        "onstat -X" => "-X",
        "onstat -g con" => "con",
        "onstat -g ath" => "ath",
        "onstat -g ntt" => "ntt",
        "onstat -k" => "-k",
        "/proc/net/tcp" => "tcp",
        "netstat -an" => "netstat",
        "/proc/vmstat" => "numa",
        _ => return None,
    })
}

fn sources_line<'a>(app: &'a App, snap: &'a Snapshot, now: Duration, theme: &Theme) -> Line<'a> {
    let mut spans = vec![Span::raw(" ")];
    let mut errors: Vec<Span> = Vec::new();
    for s in &snap.sources {
        let Some(name) = short(&s.source) else {
            continue;
        };
        let age = s.age_s.map_or("-".to_string(), human_duration);
        match &s.error {
            Some(e) => {
                spans.push(Span::styled(format!("{name} {age}! "), theme.error));
                errors.push(Span::styled(format!(" {}: {e}", s.source), theme.error));
            }
            None => {
                let st = if s
                    .age_s
                    .is_some_and(|a| a > 3.0 * app.interval.max(1.0) + 2.0)
                {
                    theme.warn
                } else {
                    Style::new()
                };
                spans.push(Span::styled(format!("{name} {age} "), st));
            }
        }
    }
    if snap.sources.is_empty() {
        spans.push(Span::styled("waiting for first data", theme.dim));
    }
    spans.push(extent_span(app, now, theme));
    spans.extend(errors.into_iter().take(1));
    Line::from(spans)
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
        ExtentStatus::Failed { error, .. } => {
            Span::styled(format!(" map: failed: {error}"), theme.error)
        }
    }
}
