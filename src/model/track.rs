//! Database time as a recording keeps it: one line per sample the screen took (its moment and
//! its active sessions), names defined once on the line that first uses them, so an hour of
//! 5,000 sessions is a few megabytes and `ifxtop ash` reads it back in seconds. The recorder
//! writes the lines beside the raw outputs (`collect/track.rs`); added back in order, they are
//! the samples the screen's Activity pane held.

use crate::ids::Sid;
use crate::model::activity::{statement_words, Active, Activity, Class, SQL_KEY_CHARS};
use compact_str::CompactString;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Names kept before the table starts again (a line with `reset` defines what it uses anew).
const MAX_NAMES: usize = 100_000;

/// One line of the track.
#[derive(Debug, Serialize, Deserialize)]
struct Line<'a> {
    at: f64,
    /// The names defined before start again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    reset: bool,
    /// Names this line uses first, numbered on from those before (1, 2, ...; 0 is none).
    #[serde(default, borrow, skip_serializing_if = "Vec::is_empty")]
    names: Vec<Cow<'a, str>>,
    /// Per active session: sid, class, user, host, program, statement, object (names'
    /// numbers), and the head blocker's sid + 1 (0: none).
    rows: Vec<[u64; 8]>,
}

/// The moment of a track line, read from its start without decoding the rest (the line starts
/// with it: `{"at":12.0,...`).
pub fn moment_of(line: &str) -> Option<f64> {
    let rest = line.strip_prefix("{\"at\":")?;
    let end = rest.find([',', '}'])?;
    rest[..end].parse().ok()
}

/// Writes samples as track lines.
#[derive(Debug)]
pub struct TrackEncoder {
    ids: FxHashMap<CompactString, u64>,
    reset: bool,
}

impl TrackEncoder {
    /// An encoder whose first line starts the names afresh (a second encoder writing into the
    /// same track numbers its names from 1 again).
    pub fn new() -> Self {
        TrackEncoder {
            ids: FxHashMap::default(),
            reset: true,
        }
    }

    /// The line of the sample of `actives` at `at`.
    pub fn line(&mut self, at: f64, actives: &[Active<'_>]) -> String {
        if self.ids.len() > MAX_NAMES {
            self.restart();
        }
        let mut names: Vec<Cow<'_, str>> = Vec::new();
        let mut id = |s: Option<&str>| -> u64 {
            let Some(s) = s.filter(|s| !s.is_empty()) else {
                return 0;
            };
            if let Some(i) = self.ids.get(s) {
                return *i;
            }
            let i = self.ids.len() as u64 + 1;
            self.ids.insert(CompactString::new(s), i);
            names.push(Cow::Owned(s.to_string()));
            i
        };
        let rows = actives
            .iter()
            .map(|a| {
                let sql = a.sql.map(|q| statement_words(q, SQL_KEY_CHARS));
                [
                    a.sid.0,
                    id(Some(a.class.name())),
                    id(Some(a.user)),
                    id(a.host),
                    id(a.program),
                    id(sql.as_deref()),
                    id(a.object.as_deref()),
                    a.head.map_or(0, |h| h.0.saturating_add(1)),
                ]
            })
            .collect();
        let line = Line {
            at,
            reset: std::mem::take(&mut self.reset),
            names,
            rows,
        };
        serde_json::to_string(&line).unwrap_or_default()
    }

    /// The next line starts the names again (a line was lost, or the table grew too big).
    pub fn restart(&mut self) {
        self.ids.clear();
        self.reset = true;
    }
}

/// One sample read back from a track: the moment and its active sessions, owned.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptSample {
    pub at: f64,
    pub rows: Vec<KeptRow>,
}

/// One active session of a [`KeptSample`].
#[derive(Debug, Clone, PartialEq)]
pub struct KeptRow {
    pub sid: Sid,
    pub class: Class,
    pub user: CompactString,
    pub host: Option<CompactString>,
    pub program: Option<CompactString>,
    /// The statement's first words ([`statement_words`]).
    pub sql: Option<CompactString>,
    pub object: Option<String>,
    pub head: Option<Sid>,
}

impl KeptSample {
    /// The active sessions again, as [`Activity::add`] takes them.
    pub fn actives(&self) -> Vec<Active<'_>> {
        self.rows
            .iter()
            .map(|r| Active {
                sid: r.sid,
                class: r.class,
                user: r.user.as_str(),
                host: r.host.as_deref(),
                program: r.program.as_deref(),
                sql: r.sql.as_deref(),
                object: r.object.clone(),
                head: r.head,
            })
            .collect()
    }

    /// Adds this sample to `activity`, as the screen added it.
    pub fn add_to(&self, activity: &mut Activity) -> bool {
        activity.add(self.at, &self.actives())
    }
}

/// Reads track lines back, in order.
#[derive(Debug, Default)]
pub struct TrackDecoder {
    /// Index 0: none.
    names: Vec<CompactString>,
}

impl TrackDecoder {
    pub fn new() -> Self {
        TrackDecoder {
            names: vec![CompactString::default()],
        }
    }

    /// The sample of one line; an error names what is wrong with it (the track cannot be read
    /// past it: the lines after may use its names).
    pub fn sample(&mut self, line: &str) -> Result<KeptSample, String> {
        let l: Line<'_> = serde_json::from_str(line).map_err(|e| format!("a bad line: {e}"))?;
        if l.reset {
            self.names.truncate(1);
        }
        if self.names.is_empty() {
            self.names.push(CompactString::default());
        }
        self.names
            .extend(l.names.iter().map(|n| CompactString::new(n)));
        let name = |i: u64| -> Result<Option<CompactString>, String> {
            if i == 0 {
                return Ok(None);
            }
            usize::try_from(i)
                .ok()
                .and_then(|i| self.names.get(i))
                .map(|n| Some(n.clone()))
                .ok_or_else(|| format!("name {i} is not defined"))
        };
        let mut rows = Vec::with_capacity(l.rows.len());
        for [sid, class, user, host, program, sql, object, head] in l.rows {
            let class = name(class)?
                .and_then(|c| Class::from_name(&c))
                .ok_or_else(|| format!("session {sid}: not a class"))?;
            rows.push(KeptRow {
                sid: Sid(sid),
                class,
                user: name(user)?.unwrap_or_default(),
                host: name(host)?,
                program: name(program)?,
                sql: name(sql)?,
                object: name(object)?.map(String::from),
                head: head.checked_sub(1).map(Sid),
            });
        }
        Ok(KeptSample { at: l.at, rows })
    }
}

impl Default for TrackEncoder {
    fn default() -> Self {
        TrackEncoder::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn active<'a>(sid: u64, class: Class, user: &'a str, sql: Option<&'a str>) -> Active<'a> {
        Active {
            sid: Sid(sid),
            class,
            user,
            host: Some("app01"),
            program: None,
            sql,
            object: (class == Class::Lock).then(|| "stores:customer".to_string()),
            head: (class == Class::Lock).then_some(Sid(812)),
        }
    }

    fn read(lines: &[String]) -> Vec<KeptSample> {
        let mut d = TrackDecoder::new();
        lines
            .iter()
            .map(|l| d.sample(l).expect("a good line"))
            .collect()
    }

    /// Samples come back as they went in (the statement as its first words), each name written
    /// once, and after a restart (a lost line) written again.
    #[test]
    fn samples_come_back_as_taken() {
        let long = format!(
            "select   *\n from customer where {}",
            "x = 1 and ".repeat(40)
        );
        let one = [
            active(
                812,
                Class::Cpu,
                "informix",
                Some("update customer set x = 1"),
            ),
            active(813, Class::Lock, "webapp", Some(&long)),
        ];
        let two = [active(813, Class::Lock, "webapp", Some(&long))];
        let mut e = TrackEncoder::new();
        let lines = vec![e.line(10.0, &one), e.line(11.0, &two), {
            e.restart();
            e.line(12.5, &two)
        }];
        assert!(lines[0].contains("\"webapp\"") && !lines[1].contains("\"webapp\""));
        assert!(lines[2].contains("\"reset\":true") && lines[2].contains("\"webapp\""));
        let back = read(&lines);
        assert_eq!(back.len(), 3);
        assert_eq!(back[2].at, 12.5);
        for (s, want) in back.iter().zip([&one[..], &two, &two]) {
            let got = s.actives();
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(want) {
                let words = w.sql.map(|q| statement_words(q, SQL_KEY_CHARS));
                assert_eq!(g.sql, words.as_deref());
                assert_eq!(
                    (g.sid, g.class, g.user, g.host, g.program, &g.object, g.head),
                    (w.sid, w.class, w.user, w.host, w.program, &w.object, w.head)
                );
            }
        }
        assert_eq!(moment_of(&lines[2]), Some(12.5));
    }

    /// Added back into a history, the track's samples give the report the samples gave.
    #[test]
    fn a_track_adds_up_as_the_samples_did() {
        let mut e = TrackEncoder::new();
        let (mut live, mut kept) = (Activity::new(), Activity::new());
        let mut lines = Vec::new();
        for t in 0..50u64 {
            let sql = format!("select {}", t % 7);
            let a = [
                active(t % 5, Class::Cpu, "u1", Some(&sql)),
                active(100 + t % 3, Class::Lock, "u2", None),
            ];
            live.add(t as f64, &a[..1 + (t % 2) as usize]);
            lines.push(e.line(t as f64, &a[..1 + (t % 2) as usize]));
        }
        for s in read(&lines) {
            s.add_to(&mut kept);
        }
        let q = crate::model::activity::Query::every_key(0.0, 50.0, 10);
        assert_eq!(live.report(&q), kept.report(&q));
    }

    /// A line naming what no line defined (one lost before it, a damaged track) is an error,
    /// never a sample with another's names.
    #[test]
    fn a_name_not_defined_is_an_error() {
        let mut e = TrackEncoder::new();
        let _lost = e.line(1.0, &[active(1, Class::Cpu, "informix", None)]);
        let next = e.line(2.0, &[active(1, Class::Cpu, "informix", None)]);
        let err = TrackDecoder::new()
            .sample(&next)
            .expect_err("names undefined");
        assert!(err.contains("not defined"), "{err}");
        assert!(TrackDecoder::new().sample("{\"at\":1").is_err());
        assert_eq!(moment_of("{\"at\":1e3,\"rows\":[]}"), Some(1000.0));
        assert_eq!(moment_of("garbage"), None);
    }
}
