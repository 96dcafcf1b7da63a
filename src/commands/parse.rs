//! `ifxtop parse KIND [FILE]`: what ifxtop understood of one captured output, as JSON.

use crate::cli::ParseArgs;
use crate::error::{Error, Result};
use crate::format::SafeText;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// The most `ifxtop parse` and `ifxtop resolve` read of a capture: what ifxtop takes of the
/// largest output it runs (the extent map's `oncheck -pe`, its cap at the default output cap).
pub(crate) const CAPTURE_CAP: u64 =
    crate::source::DEFAULT_MAX_OUTPUT_MB * crate::files::MB * crate::source::EXTENT_OUTPUT_FACTOR;

/// Reads a whole file (or stdin for `None`) as text, at most [`CAPTURE_CAP`] bytes. Bytes that
/// are not UTF-8 (user names and SQL in a legacy code set) become U+FFFD rather than failing
/// the whole input. A FIFO or a device named as the file is refused at once (pipe it to
/// standard input instead).
pub(crate) fn read_text(path: Option<&Path>) -> Result<String> {
    let buf = match path {
        Some(p) => crate::files::read_capped(p, CAPTURE_CAP)
            .map_err(|e| Error::Usage(crate::files::user_file_error("file", p, &e)))?,
        None => crate::files::read_all_capped(std::io::stdin().lock(), CAPTURE_CAP, 0)
            .map_err(|e| Error::Usage(format!("standard input: {e}")))?,
    };
    Ok(crate::files::lossy(buf))
}

/// `ifxtop parse KIND [FILE]`: exit 0 with JSON when parsed, 2 with one line on stderr when the
/// input is not that kind, 1 when it cannot be read.
pub fn run_parse(args: &ParseArgs) -> ExitCode {
    let text = match read_text(args.file.as_deref()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("ifxtop parse: {}", SafeText::new(&e.to_string()));
            return ExitCode::from(1);
        }
    };
    match args.kind.parse_to_json(&text) {
        Ok(v) => {
            // Through the sanitizer: a user name or SQL in the output may hold any character.
            let mut out = std::io::stdout().lock();
            let written = serde_json::to_string_pretty(&v)
                .map_err(std::io::Error::from)
                .and_then(|j| writeln!(out, "{}", SafeText::json(&j)));
            match written {
                Ok(()) => ExitCode::SUCCESS,
                // A closed pipe (`| head`) is not worth a message.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("ifxtop parse: {}", SafeText::new(&e.to_string()));
                    ExitCode::from(1)
                }
            }
        }
        Err(e) => {
            let source = args
                .file
                .as_ref()
                .map_or_else(|| "<stdin>".to_string(), |p| p.display().to_string());
            eprintln!(
                "ifxtop parse: {}",
                SafeText::new(&format!("{source} is not {} output: {e}", args.kind.name))
            );
            ExitCode::from(2)
        }
    }
}
