//! `ifxtop parse KIND [FILE]`: what ifxtop understood of one captured output, as JSON.

use crate::cli::ParseArgs;
use crate::error::{Error, Result};
use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;

/// Reads a whole file (or stdin for `None`) as text. Bytes that are not UTF-8 (user names and SQL
/// in a legacy code set) become U+FFFD rather than failing the whole input.
pub(crate) fn read_text(path: Option<&Path>) -> Result<String> {
    let mut buf = Vec::new();
    match path {
        Some(p) => {
            buf = std::fs::read(p).map_err(|source| Error::File {
                path: p.display().to_string(),
                source,
            })?;
        }
        None => {
            std::io::stdin().lock().read_to_end(&mut buf)?;
        }
    }
    Ok(match String::from_utf8(buf) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// `ifxtop parse KIND [FILE]`: exit 0 with JSON when parsed, 2 with one line on stderr when the
/// input is not that kind, 1 when it cannot be read.
pub fn run_parse(args: &ParseArgs) -> ExitCode {
    let text = match read_text(args.file.as_deref()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("ifxtop parse: {e}");
            return ExitCode::from(1);
        }
    };
    match args.kind.parse_to_json(&text) {
        Ok(v) => {
            let mut out = std::io::stdout().lock();
            let written = serde_json::to_writer_pretty(&mut out, &v)
                .map_err(std::io::Error::from)
                .and_then(|_| writeln!(out));
            match written {
                Ok(()) => ExitCode::SUCCESS,
                // A closed pipe (`| head`) is not worth a message.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("ifxtop parse: {e}");
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
                "ifxtop parse: {source} is not {} output: {e}",
                args.kind.name
            );
            ExitCode::from(2)
        }
    }
}
