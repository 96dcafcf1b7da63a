//! The session screen: one waiting session explained — identity, flags in words, what it waits
//! on and for how long, the blocker chain (selectable), locks, SQL and the running query's plan,
//! socket, wait history.

use crate::format::human_bytes;
use crate::model::session::SessionView;
use crate::model::waiters::WaitTarget;
use crate::tui::app::{App, DrillUi};
use crate::tui::table::{sparkline, wrap};
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Label column width.
const L: usize = 10;

fn label(text: &str, theme: &Theme) -> Span<'static> {
    Span::styled(format!("{text:<L$}"), theme.column_header)
}

/// `text` in at most three lines of `width`; the third ends in `…` when there was more.
fn wrap3(text: &str, width: usize) -> Vec<String> {
    let mut lines = wrap(text, width);
    if lines.len() > 3 {
        lines.truncate(3);
        if let Some(last) = lines.last_mut() {
            // `…` after the last line, cut to the width when it does not fit after it.
            *last = crate::format::cut(&format!("{last}…"), width);
        }
    }
    lines
}

/// The screen's lines; `selected` marks the chosen blocker. `replay`: what was not collected
/// then never will be.
pub(crate) fn lines(
    view: &SessionView,
    d: &DrillUi,
    theme: &Theme,
    width: u16,
    replay: bool,
) -> Vec<Line<'static>> {
    let mut out: Vec<Line<'static>> = Vec::new();
    identity_lines(view, theme, &mut out);
    // The width text gets beside the labels.
    let w = usize::from(width).saturating_sub(L).max(20);
    verdict_lines(view, theme, w, &mut out);
    if let Some(t) = view.threads.first() {
        out.push(Line::from(vec![
            label("FLAGS", theme),
            Span::raw(format!("{}  {}", t.flags, t.in_words.join(", "))),
        ]));
    }
    wait_lines(view, theme, width, &mut out);
    blocker_lines(view, d, theme, &mut out);
    blocks_lines(view, theme, width, &mut out);
    action_lines(view, theme, width, &mut out);
    socket_lines(view, theme, width, &mut out);
    lock_lines(view, theme, &mut out);
    sql_lines(view, theme, w, replay, &mut out);
    plan_lines(view, theme, replay, &mut out);
    history_lines(view, theme, &mut out);
    cpu_lines(view, theme, &mut out);
    memory_lines(view, theme, &mut out);
    thread_lines(view, theme, &mut out);
    for n in &view.notes {
        out.push(Line::from(Span::styled(n.clone(), theme.dim)));
    }
    out
}

/// The title: who the session is, its threads and program, and whether it is gone.
fn identity_lines(view: &SessionView, theme: &Theme, out: &mut Vec<Line<'static>>) {
    let who = format!(
        "session {}  {}{}{}",
        view.sid,
        view.user.as_deref().unwrap_or("?"),
        view.client_host
            .as_deref()
            .map(|h| format!("@{h}"))
            .unwrap_or_default(),
        view.client_pid
            .map(|p| format!(" (pid {p})"))
            .unwrap_or_default()
    );
    let threads = format!(
        "  {} thread{}{}",
        view.threads.len(),
        if view.threads.len() == 1 { "" } else { "s" },
        view.program
            .as_deref()
            .map(|p| format!("  {p}"))
            .unwrap_or_default()
    );
    out.push(Line::from(vec![
        Span::styled(who, theme.title),
        Span::raw(threads),
        Span::styled(
            if view.gone {
                "  (gone)".to_string()
            } else {
                String::new()
            },
            theme.error,
        ),
    ]));
}

/// The verdict in at most three lines of `w`: hot while the session waits on anything but its
/// client.
fn verdict_lines(view: &SessionView, theme: &Theme, w: usize, out: &mut Vec<Line<'static>>) {
    let verdict_style = if view.waiter.as_ref().is_some_and(|waiter| !waiter.idle) {
        theme.hot
    } else {
        theme.ok
    };
    for (i, part) in wrap3(&view.verdict, w).into_iter().enumerate() {
        out.push(Line::from(vec![
            label(if i == 0 { "VERDICT" } else { "" }, theme),
            Span::styled(part, verdict_style),
        ]));
    }
}

/// What it waits on and for how long, or that it waits on nothing.
fn wait_lines(view: &SessionView, theme: &Theme, width: u16, out: &mut Vec<Line<'static>>) {
    match &view.waiter {
        Some(w) => {
            // A lock or a mutex says what it is (`HDR+X on ...`, `mutex 2685501a40`); a
            // condition, a buffer or a bare address needs the kind of wait before it
            // (`condition sm_read`, `buffer order_log ... (3:280014)`, `checkpoint 2688a0f2a0`).
            let what = w.waiting_on.describe();
            let what = match &w.waiting_on {
                WaitTarget::Lock { .. } | WaitTarget::Latch { .. } => what,
                _ if what.is_empty() => w.reason.short().to_string(),
                _ => format!("{} {what}", w.reason.short()),
            };
            let mut s = format!(
                "{what} for {}",
                crate::format::human_duration_bound(w.in_wait_s, w.in_wait_s_at_least)
            );
            if let WaitTarget::Condition {
                waittime: Some(wt), ..
            } = &w.waiting_on
            {
                s.push_str(&format!(" (onstat -g con: {wt}s)"));
            }
            // Wrapped like the verdict: its end is how long.
            for (i, part) in wrap3(&s, usize::from(width).saturating_sub(L).max(20))
                .into_iter()
                .enumerate()
            {
                out.push(Line::from(vec![
                    label(if i == 0 { "WAITS ON" } else { "" }, theme),
                    Span::raw(part),
                ]));
            }
        }
        None => out.push(Line::from(vec![
            label("WAITS ON", theme),
            Span::styled("nothing", theme.dim),
        ])),
    }
}

/// The chain of blockers up to the head blocker; `d.selected` marks the chosen one.
fn blocker_lines(view: &SessionView, d: &DrillUi, theme: &Theme, out: &mut Vec<Line<'static>>) {
    if view.chain.is_empty() {
        out.push(Line::from(vec![
            label("BLOCKERS", theme),
            Span::styled("none", theme.dim),
        ]));
    } else {
        for (i, link) in view.chain.iter().enumerate() {
            let text = format!(
                "{}sid {} {}  {}, {}{}",
                if i == 0 { "" } else { "→ " },
                link.sid,
                link.user,
                link.state,
                crate::format::count(link.locks, "lock", "locks"),
                if link.head { "  HEAD BLOCKER" } else { "" }
            );
            let style = if i == d.selected {
                theme.selected
            } else if link.head {
                theme.hot
            } else {
                Style::new()
            };
            out.push(Line::from(vec![
                label(if i == 0 { "BLOCKERS" } else { "" }, theme),
                Span::styled(text, style),
            ]));
        }
    }
}

/// The sessions that wait for this one, when any do.
fn blocks_lines(view: &SessionView, theme: &Theme, width: u16, out: &mut Vec<Line<'static>>) {
    if !view.blocking.is_empty() {
        let n = view.blocking.len();
        let sids: Vec<String> = view.blocking.iter().map(|s| s.to_string()).collect();
        let text = format!(
            "{} for it: sid {}",
            crate::format::count(n as u64, "session waits", "sessions wait"),
            sids.join(", ")
        );
        let w = width.saturating_sub(L as u16).max(20);
        out.push(Line::from(vec![
            label("BLOCKS", theme),
            Span::styled(crate::tui::table::fit(&text, w, false), theme.hot),
        ]));
    }
}

/// What helps: the command that ends the session where that frees others, else words.
fn action_lines(view: &SessionView, theme: &Theme, width: u16, out: &mut Vec<Line<'static>>) {
    if let Some(cmd) = &view.kill_command {
        out.push(Line::from(vec![
            label("ACTION", theme),
            Span::styled(cmd.clone(), theme.key),
            Span::styled("  ends it: your call (ifxtop only reads)", theme.dim),
        ]));
    } else if let Some(words) = &view.action {
        let w = usize::from(width).saturating_sub(L).max(20);
        for (i, part) in wrap3(words, w).into_iter().enumerate() {
            out.push(Line::from(vec![
                label(if i == 0 { "ACTION" } else { "" }, theme),
                Span::raw(part),
            ]));
        }
    }
}

/// The client's socket and its send queue, or why there is none to show.
fn socket_lines(view: &SessionView, theme: &Theme, width: u16, out: &mut Vec<Line<'static>>) {
    match &view.socket {
        Some(s) => out.push(Line::from(vec![
            label("SOCKET", theme),
            Span::raw(format!(
                "{}{}  Send-Q {}  Recv-Q {}  max {}  ",
                s.remote,
                // The local end is the listener; a narrow screen keeps the queues instead.
                if width >= 100 {
                    format!(" → {}", s.local)
                } else {
                    String::new()
                },
                human_bytes(s.send_q),
                human_bytes(s.recv_q),
                human_bytes(s.max_send_q)
            )),
            Span::styled(sparkline(&view.send_q_trend, 20), theme.hot),
        ])),
        None => out.push(Line::from(vec![
            label("SOCKET", theme),
            Span::styled(
                // A session waiting on sm_read talks over shared memory: it has no socket.
                if view.waiter.as_ref().is_some_and(|w| {
                    w.waiting_on.condition_kind() == crate::model::waiters::ConditionKind::ClientShm
                }) {
                    "none: a shared-memory connection"
                } else {
                    "not known (needs onstat -g ntt and the socket table)"
                },
                theme.dim,
            ),
        ])),
    }
}

/// The locks it holds or waits for (the first few), or why there are none to show.
fn lock_lines(view: &SessionView, theme: &Theme, out: &mut Vec<Line<'static>>) {
    if !view.locks_known {
        out.push(Line::from(vec![
            label("LOCKS", theme),
            Span::styled("not collected (onstat -k)", theme.dim),
        ]));
    } else if view.locks.is_empty() {
        out.push(Line::from(vec![
            label("LOCKS", theme),
            Span::styled("none held (onstat -k)", theme.dim),
        ]));
    } else {
        const SHOWN: usize = 4;
        for (i, l) in view.locks.iter().take(SHOWN).enumerate() {
            let text = if l.held {
                format!(
                    "holds {} on {} rowid {}{}",
                    l.lock_type,
                    l.table,
                    l.rowid,
                    if l.contended { "  ← others wait" } else { "" }
                )
            } else {
                format!("waits for {} on {} rowid {}", l.lock_type, l.table, l.rowid)
            };
            let style = if l.contended || !l.held {
                theme.hot
            } else {
                Style::new()
            };
            out.push(Line::from(vec![
                label(if i == 0 { "LOCKS" } else { "" }, theme),
                Span::styled(text, style),
            ]));
        }
        if view.locks.len() > SHOWN {
            out.push(Line::from(vec![
                label("", theme),
                Span::styled(format!("… {} more", view.locks.len() - SHOWN), theme.dim),
            ]));
        }
    }
}

/// Its SQL in at most three lines of `w`, or why there is none to show. `replay`: what was
/// not collected then never will be.
fn sql_lines(
    view: &SessionView,
    theme: &Theme,
    w: usize,
    replay: bool,
    out: &mut Vec<Line<'static>>,
) {
    match &view.sql {
        Some(sql) => {
            // `wrap` folds the statement's own line breaks and indentation into blanks.
            let text = match &view.database {
                Some(db) => format!("[{db}] {sql}"),
                None => sql.clone(),
            };
            let first = if view.sql_is_last_parsed {
                "LAST SQL"
            } else {
                "SQL"
            };
            for (i, part) in wrap3(&text, w).into_iter().enumerate() {
                out.push(Line::from(vec![
                    label(if i == 0 { first } else { "" }, theme),
                    Span::raw(part),
                ]));
            }
        }
        None => out.push(Line::from(vec![
            label("SQL", theme),
            Span::styled(
                if view.sql_collected {
                    "none (onstat -g sql shows no statement)"
                } else if replay {
                    // Its SQL was asked only for the sessions drilled into while recording.
                    "not in the recording (not opened while recording)"
                } else {
                    "not known yet (onstat -g sql / -g ses)"
                },
                theme.dim,
            ),
        ])),
    }
}

/// What it did before, newest first, with how long each lasted.
fn history_lines(view: &SessionView, theme: &Theme, out: &mut Vec<Line<'static>>) {
    if !view.history.is_empty() {
        // Newest first, each with how long it lasted: `lock 30s ← running 2m05s`.
        let mut parts: Vec<String> = Vec::new();
        let mut until = view.history_end_s;
        for s in view.history.iter().rev().take(6) {
            let from = s.from.as_secs_f64();
            let what = s.reason.map_or("running", |r| r.short());
            parts.push(format!(
                "{what} {}",
                crate::format::human_duration_bound(until - from, s.at_least)
            ));
            until = from;
        }
        out.push(Line::from(vec![
            label("HISTORY", theme),
            Span::raw(parts.join(" ← ")),
        ]));
    }
}

/// Its share of a core over the last span onstat -g cpu measured.
fn cpu_lines(view: &SessionView, theme: &Theme, out: &mut Vec<Line<'static>>) {
    if let (Some(pct), Some((from, to))) = (view.cpu_percent, view.cpu_over_s) {
        let bound = if view.cpu_at_least { "≥" } else { "" };
        out.push(Line::from(vec![
            label("CPU", theme),
            Span::raw(format!(
                "{bound}{pct:.1}% of a core over {} (onstat -g cpu), {} ago",
                crate::format::human_duration(to - from),
                crate::format::human_duration((view.history_end_s - to).max(0.0)),
            )),
        ]));
    }
}

/// Its memory pool, and when onstat -g ses read it.
fn memory_lines(view: &SessionView, theme: &Theme, out: &mut Vec<Line<'static>>) {
    // Memory is read every 30 s (every 5 s with this screen open): it says of when.
    if let Some(m) = view.memory {
        let from = if m.by_sid {
            format!("onstat -g ses {}", view.sid)
        } else {
            "onstat -g ses".to_string()
        };
        out.push(Line::from(vec![
            label("MEMORY", theme),
            Span::raw(format!(
                "{} in its pool, {} used ({from}), {} ago",
                crate::format::human_bytes(m.total_bytes),
                crate::format::human_bytes(m.used_bytes),
                crate::format::human_duration((view.history_end_s - m.at_s).max(0.0)),
            )),
        ]));
    } else if let Some(at) = view.memory_missing_at_s {
        out.push(Line::from(vec![
            label("MEMORY", theme),
            Span::styled(
                format!(
                    "- (not in onstat -g ses of {} ago: started since)",
                    crate::format::human_duration((view.history_end_s - at).max(0.0)),
                ),
                theme.dim,
            ),
        ]));
    }
}

/// Its threads, one row each, under a header.
fn thread_lines(view: &SessionView, theme: &Theme, out: &mut Vec<Line<'static>>) {
    if !view.threads.is_empty() {
        // The addresses as wide as this server prints them (8 or 16 hex digits): at 80 columns
        // the row then keeps its status.
        let rw = view
            .threads
            .iter()
            .map(|t| t.rstcb.to_string().len())
            .max()
            .unwrap_or(0)
            .max(5);
        out.push(Line::from(Span::styled(
            format!(
                "{:<L$}{:<rw$} {:>6} {:<12} {:<7} {:>5} {:>9} {:>9}  {}",
                "THREADS", "rstcb", "tid", "name", "flags", "locks", "nreads", "nwrites", "status"
            ),
            theme.column_header,
        )));
        for t in &view.threads {
            out.push(Line::from(format!(
                "{:<L$}{:<rw$} {:>6} {:<12} {:<7} {:>5} {:>9} {:>9}  {}",
                "",
                t.rstcb.to_string(),
                t.tid.map_or("-".into(), |x| x.to_string()),
                t.name.as_deref().unwrap_or("-"),
                t.flags,
                t.locks,
                t.nreads,
                t.nwrites,
                t.status.as_deref().unwrap_or("-")
            )));
        }
    }
}

/// The running query's operators (`onstat -g pqs <sid>`), one line each, indented by depth:
/// `nljoin  next  224,717 rows  1.82s` then its inputs below it.
fn plan_lines(view: &SessionView, theme: &Theme, replay: bool, out: &mut Vec<Line<'static>>) {
    const SHOWN: usize = 6;
    let state = if !view.plan_collected {
        Some(if replay {
            // Asked only while a session's screen was open.
            "not in the recording (not opened while recording)"
        } else {
            "not known yet (onstat -g pqs)"
        })
    } else if view.plan.is_empty() {
        Some("no query running (onstat -g pqs)")
    } else {
        None
    };
    // A plan read before the moment shown says when: the state above is of the moment, and a
    // session idle now may have been running when the plan was read.
    let age = view
        .plan_age_s
        .filter(|a| *a >= 1.0)
        .map(|a| format!("  ({} ago)", crate::format::human_duration(a)));
    if let Some(state) = state {
        let mut spans = vec![label("PLAN", theme), Span::styled(state, theme.dim)];
        if view.plan_collected {
            spans.extend(age.map(|a| Span::styled(a, theme.dim)));
        }
        out.push(Line::from(spans));
        return;
    }
    for (i, step) in view.plan.iter().take(SHOWN).enumerate() {
        let mut spans = vec![
            label(if i == 0 { "PLAN" } else { "" }, theme),
            Span::raw(step.line()),
        ];
        if i == 0 {
            spans.extend(age.clone().map(|a| Span::styled(a, theme.dim)));
        }
        out.push(Line::from(spans));
    }
    if view.plan.len() > SHOWN {
        out.push(Line::from(vec![
            label("", theme),
            Span::styled(
                format!("… {} more operators", view.plan.len() - SHOWN),
                theme.dim,
            ),
        ]));
    }
}

pub(crate) fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let Some((d, view)) = app.session() else {
        return;
    };
    let lines = match view {
        Some(v) => lines(v, d, &app.theme, area.width, app.replay.is_some()),
        None => vec![Line::from(Span::styled(
            format!("collecting session {}…", d.sid),
            app.theme.dim,
        ))],
    };
    let height = usize::from(area.height);
    if height == 0 {
        return;
    }
    // Scrolls when taller than the terminal; the first and last rows say what is hidden.
    let max_scroll = lines.len().saturating_sub(height);
    let scroll = d.scroll.min(max_scroll);
    let mut shown: Vec<Line> = lines.iter().skip(scroll).take(height).cloned().collect();
    if scroll > 0 {
        if let Some(first) = shown.first_mut() {
            *first = Line::from(Span::styled(
                format!(
                    "↑ {scroll} more line{} (PgUp)",
                    if scroll == 1 { "" } else { "s" }
                ),
                app.theme.dim,
            ));
        }
    }
    let below = lines.len().saturating_sub(scroll + height);
    if below > 0 {
        if let Some(last) = shown.last_mut() {
            *last = Line::from(Span::styled(
                format!("↓ {} more lines (PgDn)", below + 1),
                app.theme.dim,
            ));
        }
    }
    for (y, line) in (area.y..area.y + area.height).zip(shown.iter()) {
        super::set_line_cut(buf, area.x, y, line, area.width);
    }
}

/// The screen as plain text, for the clipboard.
pub(crate) fn text(view: &SessionView, d: &DrillUi, replay: bool) -> String {
    let mut s = String::new();
    for l in lines(view, d, &Theme::plain(), 100, replay) {
        for span in &l.spans {
            s.push_str(&span.content);
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    /// Three lines at most, the third ending in `…` within the width, whether it filled the
    /// width or not and whatever the characters' widths.
    #[test]
    fn wrap3_ends_in_an_ellipsis_within_the_width() {
        for (text, width) in [
            ("aaaa bbbb cccc dddd eeee", 4),
            ("aa bb cc dd", 4),
            ("数据 库服 务器 数据", 4),
            ("数据 库 服务 器", 5),
        ] {
            let lines = wrap3(text, width);
            assert_eq!(lines.len(), 3, "{text}");
            let last = lines.last().map(String::as_str).unwrap_or_default();
            assert!(last.ends_with('…'), "{text}: {lines:?}");
            for l in &lines {
                assert!(crate::format::cells(l) <= width, "{text}: {lines:?}");
            }
        }
    }
    use crate::model::session::PlanStep;

    fn plan_line(view: &SessionView, replay: bool) -> String {
        let d = DrillUi {
            sid: view.sid,
            selected: 0,
            scroll: 0,
        };
        text(view, &d, replay)
            .lines()
            .find(|l| l.starts_with("PLAN"))
            .expect("a PLAN line")
            .to_string()
    }

    /// Why there is no plan: not asked yet, not in a recording, or no query running; and a
    /// long plan is cut with a count of what is left out.
    #[test]
    fn the_plan_or_why_not() {
        let mut v = SessionView::default();
        assert_eq!(
            plan_line(&v, false),
            "PLAN      not known yet (onstat -g pqs)"
        );
        assert_eq!(
            plan_line(&v, true),
            "PLAN      not in the recording (not opened while recording)"
        );
        v.plan_collected = true;
        assert_eq!(
            plan_line(&v, true),
            "PLAN      no query running (onstat -g pqs)"
        );
        v.plan = (0..9)
            .map(|i| PlanStep {
                depth: i,
                opname: "nljoin".into(),
                phase: "next".into(),
                rows: 1_234_567,
                time_s: 75.0,
            })
            .collect();
        let all = text(
            &v,
            &DrillUi {
                sid: v.sid,
                selected: 0,
                scroll: 0,
            },
            false,
        );
        assert!(
            all.contains("PLAN      nljoin  next  1,234,567 rows  1m15s"),
            "{all}"
        );
        assert!(all.contains("… 3 more operators"), "{all}");
    }

    /// A plan read before the moment shown says how long before: the session's state above is
    /// of the moment, and an idle session may have been running when its plan was read.
    #[test]
    fn an_older_plan_says_when_it_was_read() {
        let mut v = SessionView {
            plan_collected: true,
            plan_age_s: Some(4.0),
            ..SessionView::default()
        };
        assert_eq!(
            plan_line(&v, false),
            "PLAN      no query running (onstat -g pqs)  (4s ago)"
        );
        v.plan = vec![PlanStep {
            depth: 0,
            opname: "scan".into(),
            phase: "next".into(),
            rows: 992,
            time_s: 1.0,
        }];
        assert_eq!(
            plan_line(&v, false),
            "PLAN      scan  next  992 rows  1.00s  (4s ago)"
        );
        // Read at the moment shown: nothing to say.
        v.plan_age_s = Some(0.4);
        assert_eq!(
            plan_line(&v, false),
            "PLAN      scan  next  992 rows  1.00s"
        );
    }
}
