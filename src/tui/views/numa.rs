//! The NUMA pane: zone_reclaim_mode (with the seed's warning), page-scan rates, and per node
//! size/free/used bars and how much of the instance's memory sits there.

use crate::model::numa::NumaView;
use crate::model::snapshot::Snapshot;
use crate::tui::app::App;
use crate::tui::table::wrap;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

fn gb(kb: u64) -> String {
    format!("{:.1} GB", kb as f64 / 1024.0 / 1024.0)
}

fn cpus(list: &[u32]) -> String {
    // Compress 0 1 2 3 8 9 into 0-3,8-9 as the kernel prints it.
    let mut out = Vec::new();
    let mut i = 0;
    while i < list.len() {
        let start = list[i];
        let mut end = start;
        while i + 1 < list.len() && list[i + 1] == end + 1 {
            i += 1;
            end = list[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    if out.is_empty() {
        "(memory only)".to_string()
    } else {
        out.join(",")
    }
}

fn bar(used: u64, total: u64, width: usize) -> String {
    if total == 0 {
        return " ".repeat(width);
    }
    let filled = ((used as f64 / total as f64) * width as f64).round() as usize;
    let filled = filled.min(width);
    format!("{}{}", "█".repeat(filled), "░".repeat(width - filled))
}

pub(crate) fn lines(view: &NumaView, width: u16, app: Option<&App>) -> Vec<Line<'static>> {
    let theme = app.map(|a| a.theme);
    let warn = theme.map_or(Style::new(), |t| t.error);
    let dim = theme.map_or(Style::new(), |t| t.dim);
    let head = theme.map_or(Style::new(), |t| t.column_header);
    let mut out = Vec::new();
    match view.zone_reclaim_mode {
        Some(0) => out.push(Line::from(
            "zone_reclaim_mode = 0 (off: allocations spill to other nodes)",
        )),
        Some(_) => {
            if let Some(w) = view.zone_reclaim_warning() {
                // The whole warning, wrapped: the fix is at its end.
                for (i, l) in wrap(&w, usize::from(width).saturating_sub(2).max(20))
                    .into_iter()
                    .enumerate()
                {
                    let lead = if i == 0 { "⚠ " } else { "  " };
                    out.push(Line::from(Span::styled(format!("{lead}{l}"), warn)));
                }
            }
        }
        None => out.push(Line::from(Span::styled("zone_reclaim_mode: unknown", dim))),
    }
    let scan = match (view.pgscan_per_s, view.pgscan_direct_per_s) {
        (Some(a), Some(d)) => format!("page scans {a:.0}/s (direct reclaim {d:.0}/s)"),
        _ => "page scans: measuring (needs two /proc/vmstat samples)".to_string(),
    };
    // The kernel reclaiming memory hard (tens of thousands of pages a second, or any direct
    // reclaim: processes stalled freeing memory themselves) is the alarm; a trickle is not.
    let scan_style = match (view.pgscan_per_s, view.pgscan_direct_per_s) {
        (_, Some(d)) if d >= 1000.0 => warn,
        (Some(a), _) if a >= 10_000.0 => warn,
        (Some(a), _) if a >= 1000.0 => theme.map_or(Style::new(), |t| t.warn),
        _ => Style::new(),
    };
    out.push(Line::from(Span::styled(scan, scan_style)));
    out.push(Line::from(""));
    let bar_w = usize::from(width.saturating_sub(62)).clamp(10, 40);
    out.push(Line::from(Span::styled(
        format!(
            "{:>4}  {:<16} {:>9} {:>9}  {:<w$} {:>5}  {:>9}",
            "NODE",
            "CPUS",
            "SIZE",
            "FREE",
            "USED",
            "",
            "ONINIT",
            w = bar_w
        ),
        head,
    )));
    for n in &view.nodes {
        let total = n.total_kb.unwrap_or(0);
        let used = n.used_kb.unwrap_or(0);
        let pct = if total > 0 {
            format!("{:.0}%", used as f64 * 100.0 / total as f64)
        } else {
            "-".into()
        };
        let cpu_text = n.cpus.as_deref().map_or("?".to_string(), cpus);
        out.push(Line::from(format!(
            "{:>4}  {:<16} {:>9} {:>9}  {} {:>5}  {:>9}",
            n.node,
            cpu_text,
            n.total_kb.map_or("-".into(), gb),
            n.free_kb.map_or("-".into(), gb),
            bar(used, total, bar_w),
            pct,
            n.oninit_kb.map_or("-".into(), gb),
        )));
    }
    out.push(Line::from(""));
    if view.oninit_processes > 0 {
        out.push(Line::from(Span::styled(
            format!(
                "ONINIT: memory of {} oninit process(es) per node, shared segments counted once",
                view.oninit_processes
            ),
            dim,
        )));
    }
    if let Some(note) = &view.note {
        out.push(Line::from(Span::styled(note.clone(), dim)));
    }
    out
}

pub(crate) fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let snap = app.shown();
    for (i, line) in lines(&snap.numa, area.width, Some(app))
        .into_iter()
        .enumerate()
    {
        let Ok(i) = u16::try_from(i) else { break };
        if i >= area.height {
            break;
        }
        super::set_line_cut(buf, area.x, area.y + i, &line, area.width);
    }
}

/// The pane as plain text (copy, snapshot text report).
pub(crate) fn report_text(snap: &Snapshot) -> String {
    let mut s = String::new();
    for l in lines(&snap.numa, 100, None) {
        for span in &l.spans {
            s.push_str(&span.content);
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_are_compressed_like_the_kernel() {
        assert_eq!(cpus(&[0, 1, 2, 3, 8, 9, 12]), "0-3,8-9,12");
        assert_eq!(cpus(&[]), "(memory only)");
    }

    #[test]
    fn bars_fill_proportionally() {
        assert_eq!(bar(50, 100, 10), "█████░░░░░");
        assert_eq!(bar(0, 0, 3), "   ");
    }
}
