//! Typed errors of the library: parse errors (where and what), source errors (why a poll failed).

use serde::Serialize;
use std::time::Duration;

/// Input that is not the output of the command it was given as.
///
/// `line` and `column` are 1-based; `snippet` is the offending text (at most 60 characters, control
/// characters replaced) so the message can be shown on one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("line {line}, column {column}: expected {expected}, found {snippet:?}")]
pub struct ParseError {
    pub line: usize,
    pub column: usize,
    pub expected: String,
    pub snippet: String,
}

impl ParseError {
    /// An error at byte offset `col0` (0-based) of `text`, which is line `line` (1-based).
    pub(crate) fn at(line: usize, text: &str, col0: usize, expected: impl Into<String>) -> Self {
        let col0 = col0.min(text.len());
        // Column counts characters, not bytes, so it matches what an editor shows.
        let column = text.char_indices().take_while(|(i, _)| *i < col0).count() + 1;
        let rest = text.get(col0..).unwrap_or("");
        let snippet: String = if rest.is_empty() {
            "end of line".to_string()
        } else {
            rest.chars()
                .take(60)
                .map(|c| if c.is_control() { '?' } else { c })
                .collect()
        };
        ParseError {
            line,
            column,
            expected: expected.into(),
            snippet,
        }
    }

    /// The input ended before anything of the expected kind was found.
    pub(crate) fn empty(expected: impl Into<String>) -> Self {
        ParseError {
            line: 1,
            column: 1,
            expected: expected.into(),
            snippet: "end of input".to_string(),
        }
    }
}

/// Why one poll of a source gave no usable data. The last good data stays on screen beside it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SourceError {
    #[error("{program}: not found on PATH")]
    NotFound { program: String },
    #[error("{program}: could not start: {reason}")]
    Spawn { program: String, reason: String },
    #[error("timed out after {}s (killed)", .after.as_secs_f32())]
    Timeout { after: Duration },
    #[error("server off-line: {message}")]
    Offline { message: String },
    #[error("exit code {code}: {stderr}")]
    Failed { code: i32, stderr: String },
    #[error("killed by signal")]
    Killed,
    /// The command printed more than the output cap: killed (its whole process group), and
    /// nothing of what it printed is used.
    #[error("output exceeded {limit_mb} MB (killed)")]
    OutputTooLarge { limit_mb: u64 },
    /// The outputs of every run being read at once reached ifxtop's one memory budget
    /// (`source/budget.rs`): this run was killed, and nothing of what it printed is used.
    #[error(
        "output stopped at the {budget_mb} MB memory budget of all outputs being read (killed)"
    )]
    MemoryBudget { budget_mb: u64 },
    #[error("cannot read {path}: {reason}")]
    Io { path: String, reason: String },
    #[error("could not parse: {0}")]
    Parse(#[from] ParseError),
    /// The ssh connection failed (ssh exited 255 before the remote command ran).
    #[error("ssh: {message}")]
    Ssh { message: String },
    #[error("{0}")]
    Other(String),
}

impl SourceError {
    /// A failure as a recording kept it (its message): the kinds whose message says what they
    /// were come back as that kind, so a replay suggests what the live screen suggested.
    pub(crate) fn from_recorded(message: &str) -> SourceError {
        if let Some(program) = message.strip_suffix(": not found on PATH") {
            return SourceError::NotFound {
                program: program.to_string(),
            };
        }
        if let Some(secs) = message
            .strip_prefix("timed out after ")
            .and_then(|r| r.strip_suffix("s (killed)"))
            .and_then(|s| s.parse::<f64>().ok())
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
        {
            return SourceError::Timeout { after: secs };
        }
        if message == "killed by signal" {
            return SourceError::Killed;
        }
        if let Some(mb) = message
            .strip_prefix("output exceeded ")
            .and_then(|r| r.strip_suffix(" MB (killed)"))
            .and_then(|n| n.parse().ok())
        {
            return SourceError::OutputTooLarge { limit_mb: mb };
        }
        if let Some(mb) = message
            .strip_prefix("output stopped at the ")
            .and_then(|r| r.strip_suffix(" MB memory budget of all outputs being read (killed)"))
            .and_then(|n| n.parse().ok())
        {
            return SourceError::MemoryBudget { budget_mb: mb };
        }
        if let Some((path, reason)) = message
            .strip_prefix("cannot read ")
            .and_then(|r| r.split_once(": "))
        {
            return SourceError::Io {
                path: path.to_string(),
                reason: reason.to_string(),
            };
        }
        SourceError::Other(message.to_string())
    }
}

/// What kind of failure a `SourceError` is, for what the screen suggests beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    /// The program is not on PATH.
    NotFound,
    Offline,
    Timeout,
    /// Anything else: it ran and failed, or printed what could not be read.
    Other,
}

impl SourceError {
    pub fn failure(&self) -> Failure {
        match self {
            SourceError::NotFound { .. } => Failure::NotFound,
            SourceError::Offline { .. } => Failure::Offline,
            SourceError::Timeout { .. } => Failure::Timeout,
            _ => Failure::Other,
        }
    }
}

/// Errors of the library's commands (`parse`, `resolve`, `snapshot`, recording files).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error("{path}: {source}")]
    File {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Other(String),
    /// Ended by a signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT): the exit code is 128 + its number.
    #[error("stopped by a signal")]
    Signal(u8),
}

pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    /// A recording keeps a failed run's message; the replay gets the same kind of failure back.
    #[test]
    fn recorded_failures_come_back_as_their_kind() {
        for e in [
            SourceError::NotFound {
                program: "onstat".into(),
            },
            SourceError::Timeout {
                after: Duration::from_secs(10),
            },
            SourceError::Timeout {
                after: Duration::from_millis(2500),
            },
            SourceError::Killed,
            SourceError::OutputTooLarge { limit_mb: 64 },
            SourceError::MemoryBudget { budget_mb: 128 },
            SourceError::Io {
                path: "/proc/net/tcp6".into(),
                reason: "No such file or directory (os error 2)".into(),
            },
            SourceError::Other("ssh: connection refused".into()),
        ] {
            assert_eq!(SourceError::from_recorded(&e.to_string()), e);
        }
    }

    #[test]
    fn parse_error_points_at_the_column_and_quotes_the_text() {
        let e = ParseError::at(3, "abc\tdef", 3, "a hex address");
        assert_eq!(e.line, 3);
        assert_eq!(e.column, 4);
        assert_eq!(e.snippet, "?def");
        assert_eq!(
            e.to_string(),
            "line 3, column 4: expected a hex address, found \"?def\""
        );
        let e = ParseError::at(1, "abc", 10, "x");
        assert_eq!(e.snippet, "end of line");
        assert_eq!(e.column, 4);
    }
}
