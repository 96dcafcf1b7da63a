//! Running the `ifxtop` binary as a user would, for every CLI test.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `ifxtop parse ARGS...` with `stdin` (if any) piped in.
pub fn ifxtop_parse(args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ifxtop"));
    cmd.arg("parse")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("INFORMIXSERVER")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let mut child = cmd.spawn().expect("run ifxtop");
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().expect("stdin pipe");
        pipe.write_all(text.as_bytes()).expect("write stdin");
    }
    child.wait_with_output().expect("ifxtop output")
}
