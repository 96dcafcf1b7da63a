//! `--log FILE`: a plain-text diary of what the live loop saw go wrong (and right again), for
//! after the incident. Nothing is ever written to the screen; without `--log` nothing is written.

use crate::collect::sample::Update;
use crate::source::Source;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// The most `--log` grows to (the file as a whole, across runs): a diary of changes is small; a
/// flapping source over days must not fill the disk of a database server.
pub(crate) const LOG_CAP: u64 = 16 * 1024 * 1024;

/// A writer that stops at a byte budget, with one line saying it stopped.
struct Capped<W: Write> {
    inner: W,
    left: u64,
    full: bool,
}

impl<W: Write> Write for Capped<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.full {
            return Ok(buf.len());
        }
        const NOTE: &[u8] = b"ifxtop: --log reached its size limit: nothing more is written\n";
        let need = buf.len() as u64 + NOTE.len() as u64;
        if need > self.left {
            self.full = true;
            if self.left >= NOTE.len() as u64 {
                self.inner.write_all(NOTE)?;
            }
            return Ok(buf.len());
        }
        self.left -= buf.len() as u64;
        self.inner.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Logs state changes, not every sample: a source that fails every second for an hour gives one
/// line when it starts failing and one when it recovers.
pub(crate) struct DebugLog {
    out: Box<dyn Write + Send>,
    /// Per source: the error it is failing with (None: healthy).
    state: BTreeMap<Source, Option<String>>,
    /// The file, as messages name it.
    path: String,
    /// A write failed (a full disk): nothing more is written.
    failed: bool,
    /// Whether a screen says the failure (`take_failure`), rather than standard error.
    on_screen: bool,
    /// The failure, until the screen took it.
    unsaid: Option<String>,
}

impl DebugLog {
    /// Opens `path` for appending (0600, never through a symbolic link), at most [`LOG_CAP`]
    /// bytes in all: past it, one line says so and nothing more is written.
    pub(crate) fn open(path: &Path) -> std::io::Result<DebugLog> {
        let f = crate::files::open_append_private(path)?;
        let size = f.metadata()?.len();
        let mut log = DebugLog::to(Box::new(Capped {
            inner: std::io::LineWriter::new(f),
            left: LOG_CAP.saturating_sub(size),
            full: false,
        }));
        log.path = path.display().to_string();
        Ok(log)
    }

    /// Logs to any writer (tests).
    pub(crate) fn to(out: Box<dyn Write + Send>) -> DebugLog {
        DebugLog {
            out,
            state: BTreeMap::new(),
            path: "the log".into(),
            failed: false,
            on_screen: false,
            unsaid: None,
        }
    }

    /// A screen says a failure to write ([`DebugLog::take_failure`]), not standard error (it
    /// would land in the middle of the screen).
    pub(crate) fn for_screen(mut self) -> DebugLog {
        self.on_screen = true;
        self
    }

    /// One line: wall-clock time (UTC), session time, the message (through the sanitizer: an
    /// error may quote what a command printed, and the log is read with `cat` and `less`). A
    /// failed write (a full disk) never stops the inspector: it is said once (on standard
    /// error, or by the screen through [`DebugLog::take_failure`]) and nothing more is written.
    pub(crate) fn line(&mut self, t: Duration, msg: &str) {
        if self.failed {
            return;
        }
        let now = time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let msg = crate::format::SafeText::new(msg);
        let written = writeln!(self.out, "{now} t={:.1}s {msg}", t.as_secs_f64())
            .and_then(|()| self.out.flush());
        if let Err(e) = written {
            self.failed = true;
            let said = format!(
                "--log {}: cannot write ({e}): nothing more is logged",
                crate::format::SafeText::new(&self.path)
            );
            if self.on_screen {
                self.unsaid = Some(said);
            } else {
                eprintln!("ifxtop: {said}");
            }
        }
    }

    /// The failure to write, the first time it is asked after it happened (a screen says it
    /// once).
    pub(crate) fn take_failure(&mut self) -> Option<String> {
        self.unsaid.take()
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
            how: Default::default(),
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

    /// What a command printed reaches the log through the sanitizer: no escape sequence, no
    /// right-to-left override.
    #[test]
    fn a_logged_error_carries_no_control_character() {
        let buf = Shared::default();
        let mut log = DebugLog::to(Box::new(buf.clone()));
        let quoted = "onstat: \u{1b}]0;pwn\u{7} user ev\u{202e}il\u{9b}";
        log.update(&upd(1, Some(SourceError::Other(quoted.into()))));
        let text = String::from_utf8(buf.0.lock().expect("lock").clone()).expect("utf8");
        assert!(
            text.ends_with("onstat -u: onstat: ?]0;pwn? user ev?il?\n"),
            "{text}"
        );
    }
}

#[cfg(test)]
mod file_tests {
    use super::*;

    /// `--log` into a full disk (a 64 kB tmpfs, filled): the failure is said once (to the
    /// screen, which asks for it), nothing more is written, the inspector goes on; it stopped
    /// without a word.
    #[test]
    fn a_log_on_a_full_disk_says_so_once() {
        crate::files::test_mounts::in_own_mounts("collect::log::file_tests::log_on_a_full_tmpfs");
    }

    #[test]
    #[ignore = "run by a_log_on_a_full_disk_says_so_once, in a namespace of its own"]
    fn log_on_a_full_tmpfs() {
        let dir = crate::files::test_mounts::small_tmpfs();
        let path = dir.path().join("ifxtop.log");
        let mut log = DebugLog::open(&path).expect("open").for_screen();
        log.line(Duration::from_secs(1), "first");
        assert_eq!(log.take_failure(), None);
        let mut f = std::fs::File::create(dir.path().join("filler")).expect("create");
        let _ = f.write_all(&[b'x'; 64 * 1024]);
        drop(f);
        for i in 0..50 {
            log.line(Duration::from_secs(2 + i), &"y".repeat(200));
        }
        let said = log.take_failure().expect("said");
        assert!(said.contains("No space left on device"), "{said}");
        assert!(
            said.starts_with(&format!("--log {}: cannot write", path.display())),
            "{said}"
        );
        assert_eq!(log.take_failure(), None, "once");
        log.line(Duration::from_secs(99), "more");
        assert_eq!(log.take_failure(), None, "once");
    }

    /// `--log` through a planted link is refused (the link's target untouched); a new log is
    /// 0600; a log at its size limit says so once and grows no more.
    #[test]
    fn the_log_follows_no_link_is_private_and_is_bounded() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me").expect("write");
        let link = dir.path().join("ifxtop.log");
        std::os::unix::fs::symlink(&victim, &link).expect("symlink");
        assert!(DebugLog::open(&link).is_err());
        assert_eq!(std::fs::read_to_string(&victim).expect("read"), "keep me");
        let path = dir.path().join("new.log");
        let mut log = DebugLog::open(&path).expect("open");
        log.line(Duration::from_secs(1), "hello");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // Nearly full: one more line does not fit, the note does, then nothing.
        let full = dir.path().join("full.log");
        std::fs::write(&full, vec![b'x'; (LOG_CAP - 100) as usize]).expect("write");
        let mut log = DebugLog::open(&full).expect("open");
        for _ in 0..10 {
            log.line(Duration::from_secs(2), &"y".repeat(60));
        }
        drop(log);
        let len = std::fs::metadata(&full).expect("meta").len();
        assert!(len <= LOG_CAP, "{len}");
        let text = std::fs::read_to_string(&full).expect("read");
        assert_eq!(text.matches("size limit").count(), 1);
    }
}
