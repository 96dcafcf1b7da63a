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

/// `text` in lines of at most `width` cells, broken at blanks, a word longer than a line
/// broken where the line ends: nothing cut.
fn lines_of(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    for line in crate::format::wrap(text, width) {
        let mut rest = line.as_str();
        while crate::format::cells(rest) > width {
            let at = rest
                .char_indices()
                .scan(0, |w, (i, c)| {
                    *w += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                    Some((i, *w))
                })
                .find(|(_, w)| *w > width)
                .map_or(rest.len(), |(i, _)| i);
            out.push(rest[..at].to_string());
            rest = &rest[at..];
        }
        out.push(rest.to_string());
    }
    out
}

/// The list as text for a terminal `width` columns wide: one line each, the culprit or note
/// whole (on lines of its own below when it does not fit, never cut), the cut's file on a
/// line of its own below.
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
    let room = width.saturating_sub(CULPRIT_AT);
    for l in listed {
        // On the incident's line when it fits, else on lines of its own below it.
        let (first, below) = if crate::format::cells(&l.culprit) <= room {
            (l.culprit.as_str(), Vec::new())
        } else {
            ("", lines_of(&l.culprit, width.saturating_sub(2).max(20)))
        };
        let line = format!(
            "{:<19}  {:<18} {:<8} {first}",
            short(&l.when),
            l.what,
            l.severity,
        );
        out.push_str(line.trim_end());
        out.push('\n');
        for more in below {
            out.push_str(&format!("  {more}\n"));
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

/// `ifxtop incidents`, its text for a terminal `width` columns wide.
pub fn run_cli(args: &IncidentsArgs, width: usize) -> ExitCode {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The culprit (a session and the table it holds) is whole at 80 columns and wider: wrapped
    /// under its column when it does not fit, never cut; the cut's file on a line of its own.
    #[test]
    fn the_culprit_is_whole_at_80_columns_and_wider() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ring_dir = dir.path().join("ring");
        ring::prepare_dir(&ring_dir).expect("ring");
        let culprit = "sid 812 stores:'informix'.customer_order_history_2026";
        let began = IncidentLine {
            event: "began".into(),
            began: "2026-11-22T13:34:40Z".into(),
            kind: "lock_chain".into(),
            severity: "warning".into(),
            culprit: culprit.into(),
            summary: String::new(),
            ended: None,
            file: None,
            bytes: None,
            note: None,
            named: None,
        };
        let cut = IncidentLine {
            event: "cut".into(),
            ended: Some("2026-11-22T13:36:00Z".into()),
            file: Some("20261122T133440Z-lock_chain.jsonl.zst".into()),
            ..began.clone()
        };
        let index = ring_dir.join("incidents").join("index.jsonl");
        let lines: String = [&began, &cut]
            .iter()
            .map(|l| serde_json::to_string(l).expect("json") + "\n")
            .collect();
        std::fs::write(&index, lines).expect("index");
        std::fs::write(
            ring_dir
                .join("incidents")
                .join("20261122T133440Z-lock_chain.jsonl.zst"),
            b"",
        )
        .expect("cut file");
        let listed = list(&ring_dir);
        assert_eq!(listed.len(), 1, "{listed:?}");
        for width in [80, 160] {
            let t = text(&ring_dir, &listed, width);
            let body: Vec<&str> = t
                .lines()
                .skip_while(|l| !l.starts_with("WHEN"))
                .skip(1)
                .collect();
            assert!(
                body.iter().any(|l| l.trim_end().ends_with(culprit)),
                "{width}:\n{t}"
            );
            for l in &body {
                if !l.trim_start().starts_with("file:") {
                    assert!(crate::format::cells(l) <= width, "{width}: {l}");
                }
            }
            assert!(
                body.iter()
                    .any(|l| l.contains("file: ") && l.ends_with("-lock_chain.jsonl.zst")),
                "{t}"
            );
        }
        // A word longer than a line is broken, not cut.
        let long = "x".repeat(200);
        let parts = lines_of(&format!("sid 1 {long}"), 78);
        assert!(
            parts.iter().all(|p| crate::format::cells(p) <= 78),
            "{parts:?}"
        );
        assert_eq!(parts.concat(), format!("sid 1{long}"));
        // At 160 columns the culprit is on the incident's own line.
        let wide = text(&ring_dir, &listed, 160);
        assert!(
            wide.lines()
                .any(|l| l.starts_with("2026-11-22 13:34:40") && l.ends_with(culprit)),
            "{wide}"
        );
    }
}
