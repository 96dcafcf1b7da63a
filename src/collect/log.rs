//! `--log FILE`: a plain-text diary of what the live loop saw go wrong (and right again), for
//! after the incident. Nothing is ever written to the screen; without `--log` nothing is written.

use crate::collect::sample::Update;
use crate::source::Source;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// Logs state changes, not every sample: a source that fails every second for an hour gives one
/// line when it starts failing and one when it recovers.
pub(crate) struct DebugLog {
    out: Box<dyn Write + Send>,
    /// Per source: the error it is failing with (None: healthy).
    state: BTreeMap<Source, Option<String>>,
}

impl DebugLog {
    /// Opens `path` for appending.
    pub(crate) fn open(path: &Path) -> std::io::Result<DebugLog> {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(DebugLog::to(Box::new(std::io::LineWriter::new(f))))
    }

    /// Logs to any writer (tests).
    pub(crate) fn to(out: Box<dyn Write + Send>) -> DebugLog {
        DebugLog {
            out,
            state: BTreeMap::new(),
        }
    }

    /// One line: wall-clock time (UTC), session time, the message. A failed write is dropped: the
    /// log must never stop the inspector.
    pub(crate) fn line(&mut self, t: Duration, msg: &str) {
        let now = time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let _ = writeln!(self.out, "{now} t={:.1}s {msg}", t.as_secs_f64());
    }

    /// Notes an update when its source changes between healthy and failing (or fails anew).
    pub(crate) fn update(&mut self, u: &Update) {
        let now = match &u.result {
            Ok(_) => None,
            Err(e) => Some(e.to_string()),
        };
        let before = self.state.get(&u.source).cloned();
        let msg = match (&before, &now) {
            (None, None) => Some(format!("{}: first data", u.source.label())),
            (Some(Some(_)), None) => Some(format!("{}: recovered", u.source.label())),
            (b, Some(e)) if b.as_ref().and_then(|x| x.as_ref()) != Some(e) => {
                Some(format!("{}: {e}", u.source.label()))
            }
            _ => None,
        };
        if let Some(m) = msg {
            self.line(u.t, &m);
        }
        self.state.insert(u.source, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::SourceError;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| std::io::ErrorKind::Other)?
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn upd(t: u64, err: Option<SourceError>) -> Update {
        Update {
            source: Source::OnstatU,
            t: Duration::from_secs(t),
            took: Duration::ZERO,
            result: match err {
                None => Ok(Arc::new(crate::parsers::onstat_u::OnstatU::default())
                    as crate::parsers::Parsed),
                Some(e) => Err(e),
            },
        }
    }

    #[test]
    fn only_changes_are_logged() {
        let buf = Shared::default();
        let mut log = DebugLog::to(Box::new(buf.clone()));
        let timeout = SourceError::Timeout {
            after: Duration::from_secs(10),
        };
        log.update(&upd(1, None));
        log.update(&upd(2, None));
        log.update(&upd(3, Some(timeout.clone())));
        log.update(&upd(4, Some(timeout)));
        log.update(&upd(5, Some(SourceError::Killed)));
        log.update(&upd(6, None));
        let text = String::from_utf8(buf.0.lock().expect("lock").clone()).expect("utf8");
        let msgs: Vec<&str> = text
            .lines()
            .map(|l| l.split_once(' ').map_or("", |(_, rest)| rest))
            .collect();
        assert_eq!(
            msgs,
            vec![
                "t=1.0s onstat -u: first data",
                "t=3.0s onstat -u: timed out after 10s (killed)",
                "t=5.0s onstat -u: killed by signal",
                "t=6.0s onstat -u: recovered",
            ]
        );
    }
}
