//! `ifxtop incidents --ring DIR`: what the flight recorder cut out on its own (when, what,
//! culprit, file) and its bookmarks, in time order; `ifxtop mark --ring DIR NOTE` adds a
//! bookmark.

use crate::cli::{Format, IncidentsArgs, MarkArgs};
use crate::collect::ring::{self, IncidentLine, MarkLine};
use crate::error::Error;
use crate::format::SafeText;
use serde::Serialize;
use std::process::ExitCode;

/// One line of the list: an incident (cut, or still open) or a bookmark.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Listed {
    /// When it began (RFC 3339, UTC).
    pub when: String,
    /// The finding's kind, or `mark`.
    pub what: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub severity: String,
    /// The culprit, or a bookmark's note.
    pub culprit: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// The cut's path, when there is one on disk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Why there is no file (still open, removed past the cap, not cut).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The incidents and marks of the ring in `dir`, in time order.
pub fn list(dir: &std::path::Path) -> Vec<Listed> {
    let lines: Vec<IncidentLine> = ring::incident_lines(dir);
    let mut out: Vec<Listed> = Vec::new();
    for l in &lines {
        let same =
            |o: &IncidentLine| o.began == l.began && o.kind == l.kind && o.culprit == l.culprit;
        match l.event.as_str() {
            "began" if !lines.iter().any(|o| o.event == "cut" && same(o)) => out.push(Listed {
                when: l.began.clone(),
                what: l.kind.clone(),
                severity: l.severity.clone(),
                culprit: l.culprit.clone(),
                ended: None,
                file: None,
                note: Some("open: still holding, or ifxtop stopped before it was cut".into()),
            }),
            "cut" => {
                let path = l
                    .file
                    .as_ref()
                    .map(|f| dir.join("incidents").join(f))
                    .filter(|p| p.is_file());
                let note = match (&l.file, &path, &l.note) {
                    (_, _, Some(n)) => Some(n.clone()),
                    (Some(_), None, _) => Some("removed (past the incidents' byte cap)".into()),
                    _ => None,
                };
                out.push(Listed {
                    when: l.began.clone(),
                    what: l.kind.clone(),
                    severity: l.severity.clone(),
                    culprit: match &l.named {
                        Some(n) if l.culprit.is_empty() => n.clone(),
                        _ => l.culprit.clone(),
                    },
                    ended: l.ended.clone(),
                    file: path.map(|p| p.display().to_string()),
                    note,
                });
            }
            _ => {}
        }
    }
    let marks: Vec<MarkLine> = ring::marks(dir);
    out.extend(marks.into_iter().map(|m| Listed {
        when: m.at,
        what: "mark".into(),
        severity: String::new(),
        culprit: m.note,
        ended: None,
        file: None,
        note: None,
    }));
    // RFC 3339 in UTC sorts as text.
    out.sort_by(|a, b| a.when.cmp(&b.when));
    out
}

/// `2026-11-22 03:12:05` of an RFC 3339 time.
fn short(when: &str) -> String {
    when.replace('T', " ")
        .trim_end_matches('Z')
        .chars()
        .take(19)
        .collect()
}

/// Where the culprit column starts: after the time (19), the kind (18: `checkpoint_blocked`,
/// `logs_not_backed_up`) and the severity (8), with their gaps.
const CULPRIT_AT: usize = 19 + 2 + 18 + 1 + 8 + 1;

/// The list as text for a terminal `width` columns wide: one line each, the culprit or note
/// whole (wrapped under its column when it does not fit, never cut), the cut's file on a line
/// of its own below.
pub fn text(dir: &std::path::Path, listed: &[Listed], width: usize) -> String {
    let mut out = String::new();
    match ring::RingIndex::open(dir) {
        Ok(idx) => {
            let bytes: u64 = idx.segments.iter().map(|s| s.bytes).sum();
            out.push_str(&format!(
                "ring {}: {}, {} to {} UTC, {}\n",
                dir.display(),
                crate::format::count(idx.segments.len() as u64, "segment", "segments"),
                short(&rfc(idx.start())),
                short(&rfc(idx.end)),
                crate::format::human_bytes(bytes)
            ));
        }
        Err(e) => out.push_str(&format!("ring {}: {e}\n", dir.display())),
    }
    if listed.is_empty() {
        out.push_str("no incident and no mark\n");
        return out;
    }
    out.push_str(&format!(
        "{:<19}  {:<18} {:<8} {}\n",
        "WHEN (UTC)", "WHAT", "SEVERITY", "CULPRIT / NOTE"
    ));
    let room = width.saturating_sub(CULPRIT_AT).max(20);
    for l in listed {
        let culprit = crate::tui::table::wrap(&l.culprit, room);
        let mut parts = culprit.iter();
        out.push_str(&format!(
            "{:<19}  {:<18} {:<8} {}\n",
            short(&l.when),
            l.what,
            l.severity,
            parts.next().map_or("", String::as_str)
        ));
        for more in parts {
            out.push_str(&format!("{:CULPRIT_AT$}{more}\n", ""));
        }
        match (&l.file, &l.note) {
            (Some(f), _) => out.push_str(&format!("  file: {f}\n")),
            (None, Some(n)) => out.push_str(&format!("  ({n})\n")),
            (None, None) => {}
        }
    }
    out
}

fn rfc(t: time::OffsetDateTime) -> String {
    t.to_offset(time::UtcOffset::UTC)
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

pub fn run_cli(args: &IncidentsArgs) -> ExitCode {
    if !args.ring.is_dir() {
        eprintln!(
            "ifxtop incidents: --ring {}: no such directory",
            SafeText::new(&args.ring.display().to_string()).as_str()
        );
        return ExitCode::from(2);
    }
    let listed = list(&args.ring);
    match args.format {
        Format::Text => {
            // The terminal's width; 80 when it is not a terminal (a pipe, a file).
            let width = crossterm::terminal::size()
                .ok()
                .filter(|_| std::io::IsTerminal::is_terminal(&std::io::stdout()))
                .map_or(80, |(w, _)| usize::from(w));
            print!(
                "{}",
                SafeText::new(&text(&args.ring, &listed, width)).as_str()
            )
        }
        Format::Json => match serde_json::to_string_pretty(&listed) {
            Ok(j) => println!("{}", SafeText::json(&j).as_str()),
            Err(e) => {
                eprintln!("ifxtop incidents: {e}");
                return ExitCode::from(1);
            }
        },
    }
    ExitCode::SUCCESS
}

pub fn run_mark(args: &MarkArgs) -> ExitCode {
    match mark(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ifxtop mark: {}", SafeText::new(&e.to_string()).as_str());
            ExitCode::from(match e {
                Error::Usage(_) => 2,
                _ => 1,
            })
        }
    }
}

fn mark(args: &MarkArgs) -> Result<(), Error> {
    if !args.ring.is_dir() {
        return Err(Error::Usage(format!(
            "--ring {}: no such directory (a ring is what `--ring DIR` of `serve` or the screen \
             writes)",
            args.ring.display()
        )));
    }
    if args.note.len() > 4096 {
        return Err(Error::Usage("the note: at most 4096 bytes".into()));
    }
    ring::mark(&args.ring, time::OffsetDateTime::now_utc(), &args.note)
}
