//! The Server pane's lines: the vital signs one key away from the waits. Profile rates with their last
//! minute, the last checkpoints (blocking ones marked, critical-section time beside block time),
//! the logical logs and the oldest open transaction, VP classes and the ready queue, mutexes and
//! latches with their holders, shared memory and its growth. Every line is a row the cursor
//! moves over; Enter on one that names a session opens it.

use crate::format::human_bytes;
use crate::ids::Sid;
use crate::model::snapshot::Snapshot;
use crate::tui::table::sparkline;
use crate::tui::theme::Theme;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// One line of the pane, and the session it names (Enter opens it).
pub(crate) struct ServerLine {
    pub(crate) line: Line<'static>,
    pub(crate) sid: Option<Sid>,
}

fn plain(line: Line<'static>) -> ServerLine {
    ServerLine { line, sid: None }
}

fn rate(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if x >= 100.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.1}"),
    }
}

/// Rate history scaled for the sparkline (tenths, so small rates still show).
fn spark(h: Option<&Vec<f64>>, width: usize) -> String {
    let v: Vec<u64> = h
        .map(|h| {
            h.iter()
                .map(|x| (x * 10.0).round().max(0.0) as u64)
                .collect()
        })
        .unwrap_or_default();
    sparkline(&v, width)
}

/// The pane's lines, top to bottom.
pub(crate) fn lines(snap: &Snapshot, theme: &Theme) -> Vec<ServerLine> {
    let head = theme.column_header;
    let mut out: Vec<ServerLine> = Vec::new();
    let blocked = match &snap.server.blocked {
        Some(b) => Span::styled(format!(" Blocked:{b} "), theme.badge_alarm),
        None => Span::styled("not blocked", theme.dim),
    };
    out.push(plain(Line::from(vec![
        Span::styled("SERVER    ", head),
        Span::raw(format!(
            "{} {}{}  ",
            snap.server.version.as_deref().unwrap_or("?"),
            snap.server.mode.as_deref().unwrap_or("?"),
            snap.server
                .mode_flags
                .iter()
                .map(|f| format!(" ({f})"))
                .collect::<String>()
        )),
        blocked,
    ])));
    profile(&mut out, snap, theme);
    out.push(plain(Line::from("")));
    logs(&mut out, snap, theme);
    out.push(plain(Line::from("")));
    vps(&mut out, snap, theme);
    out.push(plain(Line::from("")));
    mutexes(&mut out, snap, theme);
    out.push(plain(Line::from("")));
    memory(&mut out, snap, theme);
    out.push(plain(Line::from("")));
    checkpoints(&mut out, snap, theme);
    cost(&mut out, snap, theme);
    out
}

/// What ifxtop costs this server in a line (the Server pane's IFXTOP line, and the help's last
/// line): `ifxtop 0.4 % of a core; onstat 60 processes/min; file reads 300/min`. Processes
/// are apart from file reads, and a rate is over a full minute: before that, the counts so far.
pub(crate) fn cost_words(c: &crate::model::snapshot::Cost) -> String {
    let measured = c.children == "measured";
    let share = |v: f64| {
        let pct = v * 100.0;
        if pct > 0.0 && pct < 0.05 {
            // Some, but under what one decimal shows: not "0.0 %".
            "<0.1 %".to_string()
        } else if pct < 10.0 {
            format!("{pct:.1} %")
        } else {
            format!("{pct:.0} %")
        }
    };
    // The demo's simulation (what a server's onstat would do) said apart from ifxtop's own.
    let simulation = c.simulation_core_share.filter(|_| !measured);
    let mut me = match (c.self_core_share, simulation) {
        (Some(v), Some(d)) => format!(
            "ifxtop {} of a core, the demo's simulation {} more",
            share((v - d).max(0.0)),
            share(d)
        ),
        (Some(v), None) => format!("ifxtop {} of a core", share(v)),
        (None, _) => "ifxtop's CPU not measured".to_string(),
    };
    if measured {
        if let Some(v) = c.children_core_share {
            me.push_str(&format!(", its commands {}", share(v)));
        }
    }
    let rate = |n: f64| {
        if n >= 10.0 {
            format!("{n:.0}")
        } else {
            format!("{n:.1}")
        }
    };
    let onstat = if measured {
        "onstat"
    } else {
        "onstat (simulated)"
    };
    let mut parts = vec![me];
    if c.onstat_processes_per_min.is_some() {
        parts.push(format!(
            "{onstat} {} processes/min",
            rate(c.onstat_processes_per_min.unwrap_or(0.0))
        ));
        if let Some(n) = c.other_processes_per_min.filter(|n| *n > 0.0) {
            parts.push(format!("other commands {}/min", rate(n)));
        }
        parts.push(format!(
            "file reads {}/min",
            rate(c.file_reads_per_min.unwrap_or(0.0))
        ));
    } else {
        // Under a minute: the counts so far.
        let mut so_far = format!(
            "{onstat} {} processes",
            (c.onstat_processes + c.other_processes).round()
        );
        so_far.push_str(&format!(
            ", file reads {} in the first {:.0} s",
            c.file_reads, c.over_s
        ));
        parts.push(so_far);
    }
    parts.join("; ")
}

/// What watching together costs, for the cost line: a collector sharing (`--share`) says how
/// many watch and the feed's bytes a second; a viewer (`--attach`) that it runs nothing on
/// the server and what it receives. `None` when neither.
pub(crate) fn watch_words(w: &crate::instance::share::Watching) -> Option<String> {
    let rate = match w.bytes_per_s {
        Some(r) => format!("{}/s", crate::format::human_bytes(r.round() as u64)),
        None => crate::format::human_bytes(w.bytes),
    };
    let n = w.viewers.len();
    let viewers = if n == 1 {
        "1 viewer".to_string()
    } else {
        format!("{n} viewers")
    };
    if w.following.is_some() {
        Some(format!(
            "a viewer: nothing run on the server for it, the feed {rate} ({viewers} of the collector)"
        ))
    } else if w.sharing.is_some() {
        Some(format!("shared with {viewers}, the feed {rate} sent"))
    } else {
        None
    }
}

/// The flight recorder's part of the cost line (`--ring`): `ring 1.2 MB/min, 310 MB on disk`
/// (the bytes written so far before a minute of it); when it stopped writing, that it did (the
/// finding says why).
pub(crate) fn ring_words(r: &crate::collect::ring::RingStats) -> String {
    let disk = crate::format::human_bytes(r.segments_bytes + r.incidents_bytes);
    if r.stopped.is_some() {
        return format!("ring stopped writing (a finding says why), {disk} on disk");
    }
    let rate = match r.written_per_min {
        Some(b) => format!("{}/min", crate::format::human_bytes(b.round() as u64)),
        None => format!("{} so far", crate::format::human_bytes(r.written)),
    };
    format!("ring {rate}, {disk} on disk")
}

/// `cost_words`, and the ring's when one is kept.
pub(crate) fn cost_and_ring(snap: &Snapshot) -> Option<String> {
    let mut text = snap.cost.as_ref().map(cost_words)?;
    if let Some(r) = &snap.ring {
        text.push_str("; ");
        text.push_str(&ring_words(r));
    }
    Some(text)
}

/// What ifxtop costs this server: itself, its onstat children, and per source (the busiest
/// first) its calls a minute, CPU and bytes of output a call.
fn cost(out: &mut Vec<ServerLine>, snap: &Snapshot, theme: &Theme) {
    let Some(text) = cost_and_ring(snap) else {
        return;
    };
    out.push(plain(Line::from("")));
    out.push(plain(Line::from(vec![
        Span::styled("IFXTOP    ", theme.column_header),
        Span::raw(text),
    ])));
    let mut busiest: Vec<&crate::model::snapshot::SourceStatus> = snap
        .sources
        .iter()
        .filter(|s| s.calls_per_min.is_some())
        .collect();
    busiest.sort_by(|a, b| {
        b.calls_per_min
            .unwrap_or(0.0)
            .total_cmp(&a.calls_per_min.unwrap_or(0.0))
    });
    let per: Vec<String> = busiest
        .iter()
        .take(4)
        .map(|s| {
            format!(
                "{} {:.0}/min{}{}",
                s.source,
                s.calls_per_min.unwrap_or(0.0),
                s.cpu_ms_per_call
                    .map_or(String::new(), |ms| format!(" {ms:.1} ms")),
                s.bytes_per_call.map_or(String::new(), |b| format!(
                    " {}",
                    crate::format::human_bytes(b.round() as u64)
                ))
            )
        })
        .collect();
    // Two a line: each says its calls, CPU and bytes a call, and 80 columns hold two.
    for pair in per.chunks(2) {
        out.push(plain(Line::from(Span::styled(
            format!("          {}", pair.join(", ")),
            theme.dim,
        ))));
    }
}

/// The profile rates, two to a line (each with its last minute), then the cache hit rates.
fn profile(out: &mut Vec<ServerLine>, snap: &Snapshot, theme: &Theme) {
    let v = &snap.vitals;
    out.push(plain(Line::from(Span::styled(
        "PROFILE (per second, last minute)",
        theme.column_header,
    ))));
    let r = v.rates.clone().unwrap_or_default();
    let rows: [(&str, &'static str, Option<f64>, bool); 10] = [
        ("lock waits", "lokwaits", r.lokwaits, true),
        ("buffer waits", "bufwaits", r.bufwaits, true),
        ("latch waits", "lchwaits", r.lchwaits, true),
        ("deadlocks", "deadlks", r.deadlks, true),
        ("lock timeouts", "dltouts", r.dltouts, true),
        ("ckpt waits", "ckpwaits", r.ckpwaits, true),
        ("seq scans", "seqscans", r.seqscans, false),
        ("commits", "commit", r.commit, false),
        ("rollbacks", "rollbk", r.rollbk, false),
        ("ISAM calls", "isamtot", r.isamtot, false),
    ];
    for pair in rows.chunks(2) {
        let mut spans = Vec::new();
        for (label, key, value, alarm) in pair {
            let st = match value {
                Some(x) if *alarm && *x >= 10.0 => theme.error,
                Some(x) if *alarm && *x > 0.0 => theme.warn,
                _ => Style::new(),
            };
            spans.push(Span::raw(format!(" {label:<14}")));
            spans.push(Span::styled(format!("{:>8} ", rate(*value)), st));
            spans.push(Span::styled(
                format!("{:<14}", spark(v.history.rates.get(key), 14)),
                theme.hot,
            ));
        }
        out.push(plain(Line::from(spans)));
    }
    let pct = |p: Option<f64>| p.map_or("-".to_string(), |p| format!("{p:.1}%"));
    out.push(plain(Line::from(format!(
        " {:<14}{:>8}                {:<14}{:>8}",
        "read cache",
        pct(r.read_cache_pct),
        "write cache",
        pct(r.write_cache_pct)
    ))));
    if v.rates.is_none() {
        out.push(plain(Line::from(Span::styled(
            " (rates need two onstat -p samples)",
            theme.dim,
        ))));
    }
}

/// The last checkpoints, newest first; the blocking ones say whether critical sections held
/// them up.
fn checkpoints(out: &mut Vec<ServerLine>, snap: &Snapshot, theme: &Theme) {
    let v = &snap.vitals;
    out.push(plain(Line::from(Span::styled(
        format!(
            "{:<17}{:<10}{:>6}{:>6}{:>6}{:>6}{:>6}",
            "CHECKPOINTS", "trigger", "total", "flush", "block", "crit", "waits"
        ),
        theme.column_header,
    ))));
    // The one in progress (`onstat -g ckp` lists a checkpoint once it is done): from the banner
    // and this moment's checkpoint waiters.
    if let Some(flag) = snap
        .server
        .mode_flags
        .iter()
        .find(|f| f.starts_with("CKPT"))
    {
        let waiting: Vec<&crate::model::waiters::WaiterRow> = snap
            .waiters
            .iter()
            .filter(|w| w.reason == crate::parsers::onstat_u::WaitReason::Checkpoint)
            .collect();
        let oldest = waiting
            .iter()
            .max_by(|a, b| a.in_wait_s.total_cmp(&b.in_wait_s))
            .map(|w| {
                format!(
                    ", {} so far",
                    crate::format::human_duration_bound(w.in_wait_s, w.in_wait_s_at_least)
                )
            })
            .unwrap_or_default();
        let what = if flag.contains("INP") {
            "in progress: flushing"
        } else {
            "requested: waiting for critical sections"
        };
        out.push(plain(Line::from(Span::styled(
            format!(" now      {what}, {} waiting{oldest}", waiting.len()),
            theme.warn,
        ))));
    }
    if v.checkpoints.is_empty() {
        out.push(plain(Line::from(Span::styled(
            " none known yet (onstat -g ckp)",
            theme.dim,
        ))));
    }
    for c in v.checkpoints.iter().rev() {
        // Held up by a thread in a critical section rather than by the flush.
        let mostly_crit =
            c.blocking && c.block_s > 0.0 && c.crit_s >= 0.5 * c.block_s && c.crit_s > c.flush_s;
        let note = match (c.blocking, mostly_crit) {
            (true, true) => "  blocked: crit. sections",
            (true, false) => "  blocked",
            _ => "",
        };
        let st = if c.blocking { theme.warn } else { Style::new() };
        out.push(plain(Line::from(Span::styled(
            format!(
                " {:<9}#{:<6}{:<10}{:>6.1}{:>6.1}{:>6.1}{:>6.1}{:>6}{note}",
                c.clock_time,
                c.interval,
                c.trigger,
                c.total_s,
                c.flush_s,
                c.block_s,
                c.crit_s,
                c.waits
            ),
            st,
        ))));
    }
}

/// The logical logs and the oldest open transaction (Enter opens its session).
fn logs(out: &mut Vec<ServerLine>, snap: &Snapshot, theme: &Theme) {
    let head = theme.column_header;
    match &snap.vitals.logs {
        None => out.push(plain(Line::from(vec![
            Span::styled("LOGICAL LOGS  ", head),
            Span::styled("not known yet (onstat -l)", theme.dim),
        ]))),
        Some(l) => {
            let st = if l.used_pct >= 80.0 {
                theme.error
            } else if l.used_pct >= 50.0 {
                theme.warn
            } else {
                Style::new()
            };
            out.push(plain(Line::from(vec![
                Span::styled("LOGICAL LOGS  ", head),
                Span::styled(format!("{:.0}% held", l.used_pct), st),
                Span::raw(format!(
                    ", {} of {} not backed up, current #{}{}",
                    l.not_backed_up,
                    l.total,
                    l.current.map_or("?".into(), |c| c.to_string()),
                    l.physical_used_pct
                        .map(|p| format!("; physical log {p:.0}%"))
                        .unwrap_or_default()
                )),
            ])));
            match &l.oldest_transaction {
                None => out.push(plain(Line::from(Span::styled(
                    " no open transaction has logged anything",
                    theme.dim,
                )))),
                Some(t) => {
                    let st = if t.logs_spanned >= 3 {
                        theme.warn
                    } else {
                        Style::new()
                    };
                    let (who, note) = match (t.sessid, &t.user) {
                        (Some(s), Some(u)) => (format!("sid {s} {u}"), ""),
                        (Some(s), None) => (format!("sid {s}"), ""),
                        _ => (
                            format!("thread {}", t.userthread),
                            " (the thread is not in onstat -u)",
                        ),
                    };
                    out.push(ServerLine {
                        line: Line::from(Span::styled(
                            // The counts first: a narrow screen cuts the end.
                            format!(
                                " oldest open transaction: {who}, spans {}, {}, began in log \
                                 {}{note}",
                                crate::format::count(t.logs_spanned, "log", "logs"),
                                crate::format::count(t.locks, "lock", "locks"),
                                t.begin_log,
                            ),
                            st,
                        )),
                        sid: t.sessid,
                    });
                }
            }
        }
    }
}

/// The CPU VPs with their last minute, the other classes on one line, the ready queue.
fn vps(out: &mut Vec<ServerLine>, snap: &Snapshot, theme: &Theme) {
    let v = &snap.vitals;
    let head = theme.column_header;
    if v.vps.is_empty() {
        out.push(plain(Line::from(vec![
            Span::styled("VPs  ", head),
            Span::styled("not known yet (onstat -g glo)", theme.dim),
        ])));
        return;
    }
    out.push(plain(Line::from(Span::styled(
        "VPs (busy over the last interval, last minute)",
        head,
    ))));
    let busy_style = |b: Option<f64>| match b {
        Some(b) if b >= 90.0 => theme.error,
        Some(b) if b >= 70.0 => theme.warn,
        _ => Style::new(),
    };
    let busy = |b: Option<f64>| b.map_or("-".to_string(), |b| format!("{b:.0}%"));
    if let Some(cpu) = v.vps.iter().find(|x| x.class == "cpu") {
        out.push(plain(Line::from(vec![
            Span::raw(format!(" {:<14}{:>8} ", format!("cpu x{}", cpu.count), "")),
            Span::styled(
                format!("{:>5} ", busy(cpu.busy_pct)),
                busy_style(cpu.busy_pct),
            ),
            Span::styled(spark(v.history.vps.get("cpu"), 30), theme.hot),
        ])));
    }
    let others: Vec<Span> = v
        .vps
        .iter()
        .filter(|x| x.class != "cpu")
        .flat_map(|x| {
            [
                Span::raw(format!(" {} x{} ", x.class, x.count)),
                Span::styled(busy(x.busy_pct), busy_style(x.busy_pct)),
                Span::raw(" "),
            ]
        })
        .collect();
    if !others.is_empty() {
        out.push(plain(Line::from(others)));
    }
    if let Some(q) = v.ready_queue {
        let st = if q >= 10 { theme.warn } else { Style::new() };
        out.push(plain(Line::from(vec![
            Span::raw(format!(" {:<14}", "ready queue")),
            Span::styled(format!("{q:>8}"), st),
            Span::raw(" thread(s) waiting for a VP  "),
            Span::styled(
                sparkline(
                    &v.history
                        .ready_queue
                        .iter()
                        .map(|x| *x as u64)
                        .collect::<Vec<_>>(),
                    20,
                ),
                theme.hot,
            ),
        ])));
    }
}

/// Mutexes and latches held with waiters (Enter opens the holder's session).
fn mutexes(out: &mut Vec<ServerLine>, snap: &Snapshot, theme: &Theme) {
    out.push(plain(Line::from(Span::styled(
        format!(
            "{:<24}{:<7}{:<10}{:>8} {:>8}  waiting sessions",
            "MUTEXES & LATCHES", "kind", "holder", "waiters", "longest"
        ),
        theme.column_header,
    ))));
    // A busy server always holds a few mutexes for an instant: only those with waiters say
    // anything.
    let all = &snap.vitals.mutexes;
    let interesting: Vec<_> = all.iter().filter(|m| m.waiters > 0).collect();
    if interesting.is_empty() {
        let held = all.len();
        out.push(plain(Line::from(Span::styled(
            if held == 0 {
                " none held with waiters (onstat -g lmx, -g wmx, -s)".to_string()
            } else {
                format!(" none with waiters ({held} held for an instant)")
            },
            theme.dim,
        ))));
    }
    for m in interesting.iter().take(30) {
        let st = if m.waiters > 0 {
            theme.warn
        } else {
            Style::new()
        };
        out.push(ServerLine {
            line: Line::from(Span::styled(
                format!(
                    " {:<23}{:<7}{:<10}{:>8} {:>8}  {}",
                    crate::format::cut(&m.name, 22),
                    m.kind,
                    m.holder_sessid.map_or("-".into(), |s| format!("sid {s}")),
                    m.waiters,
                    m.longest_wait_s.map_or("-".into(), |s| format!("{s}s")),
                    m.waiter_sessids
                        .iter()
                        .map(|s| s.to_string())
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
                st,
            )),
            sid: m.holder_sessid,
        });
    }
}

/// Shared memory by segment class and its growth since ifxtop started.
fn memory(out: &mut Vec<ServerLine>, snap: &Snapshot, theme: &Theme) {
    let head = theme.column_header;
    match &snap.vitals.memory {
        None => out.push(plain(Line::from(vec![
            Span::styled("MEMORY  ", head),
            Span::styled("not known yet (onstat -g seg)", theme.dim),
        ]))),
        Some(m) => {
            let grew = if m.growth_kb > 0 {
                Span::styled(
                    format!(
                        ", +{} since ifxtop started ({} segment{} added)",
                        human_bytes(m.growth_kb as u64 * 1024),
                        m.added_segments,
                        if m.added_segments == 1 { "" } else { "s" }
                    ),
                    theme.warn,
                )
            } else {
                Span::raw(", no growth since ifxtop started")
            };
            out.push(plain(Line::from(vec![
                Span::styled("MEMORY  ", head),
                Span::raw(format!(
                    "{} segments, {}",
                    m.segments,
                    human_bytes(m.total_kb * 1024)
                )),
                grew,
            ])));
            out.push(plain(Line::from(format!(
                " by class: {}",
                m.by_class
                    .iter()
                    .map(|(c, kb)| format!("{c} {}", human_bytes(kb * 1024)))
                    .collect::<Vec<_>>()
                    .join("  ")
            ))));
        }
    }
}

/// The pane as plain text (the snapshot report, `y`).
pub(crate) fn report_text(snap: &Snapshot) -> String {
    let mut s = String::new();
    for l in lines(snap, &Theme::plain()) {
        for span in &l.line.spans {
            s.push_str(&span.content);
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod watch_tests {
    use super::watch_words;
    use crate::instance::share::Watching;

    #[test]
    fn the_cost_line_says_who_shares_and_who_views() {
        let mut w = Watching {
            sharing: Some("/run/ifxtop/ol.sock".into()),
            bytes: 3 << 20,
            bytes_per_s: Some(358_400.0),
            ..Watching::default()
        };
        assert_eq!(
            watch_words(&w).as_deref(),
            Some("shared with 0 viewers, the feed 350 KB/s sent")
        );
        w.bytes_per_s = None;
        assert_eq!(
            watch_words(&w).as_deref(),
            Some("shared with 0 viewers, the feed 3.0 MB sent")
        );
        let v = Watching {
            following: Some("db01 (informix@db01)".into()),
            bytes_per_s: Some(1024.0),
            ..Watching::default()
        };
        assert_eq!(
            watch_words(&v).as_deref(),
            Some("a viewer: nothing run on the server for it, the feed 1 KB/s (0 viewers of the collector)")
        );
        assert_eq!(watch_words(&Watching::default()), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ring on the cost line: bytes a minute once a minute is written (the bytes so far
    /// before), and what it holds on disk, segments and incidents together.
    #[test]
    fn the_ring_costs_bytes_a_minute_and_disk() {
        let mut r = crate::collect::ring::RingStats {
            written: 3 << 20,
            segments_bytes: 300 << 20,
            incidents_bytes: 10 << 20,
            ..Default::default()
        };
        assert_eq!(ring_words(&r), "ring 3.0 MB so far, 310.0 MB on disk");
        r.written_per_min = Some(1.2 * 1024.0 * 1024.0);
        assert_eq!(ring_words(&r), "ring 1.2 MB/min, 310.0 MB on disk");
    }

    /// The demo's simulation is said apart from ifxtop's own CPU; a replay (no simulation) and a
    /// live server (its commands measured) say ifxtop's alone.
    #[test]
    fn the_cost_line_says_the_demos_simulation_apart() {
        let demo = crate::model::snapshot::Cost {
            self_core_share: Some(0.015),
            simulation_core_share: Some(0.003),
            children: "simulated: the demo or a replay starts no onstat process".into(),
            ..Default::default()
        };
        let words = cost_words(&demo);
        assert!(
            words.starts_with("ifxtop 1.2 % of a core, the demo's simulation 0.3 % more; "),
            "{words}"
        );
        let replay = crate::model::snapshot::Cost {
            simulation_core_share: None,
            ..demo.clone()
        };
        let words = cost_words(&replay);
        assert!(words.starts_with("ifxtop 1.5 % of a core; "), "{words}");
        // A share too small for one decimal is not said to be none.
        let small = crate::model::snapshot::Cost {
            self_core_share: Some(0.003),
            simulation_core_share: Some(0.0002),
            ..demo.clone()
        };
        let words = cost_words(&small);
        assert!(
            words.starts_with("ifxtop 0.3 % of a core, the demo's simulation <0.1 % more; "),
            "{words}"
        );
        let live = crate::model::snapshot::Cost {
            children: "measured".into(),
            children_core_share: Some(0.002),
            ..replay
        };
        let words = cost_words(&live);
        assert!(
            words.starts_with("ifxtop 1.5 % of a core, its commands 0.2 %; "),
            "{words}"
        );
    }
}
