//! The local runner: runs onstat/oncheck/netstat on this machine and reads /proc and /sys.

use super::{BoxFuture, CommandRunner, Output, Request};
use crate::error::SourceError;
use std::process::Stdio;
use std::time::Duration;

/// This machine's host name (reports and recordings name the host they describe).
pub fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
}

/// Runs commands with `INFORMIXSERVER` set to the watched instance.
#[derive(Debug, Clone, Default)]
pub struct LocalRunner {
    pub(crate) informixserver: Option<String>,
    /// A PATH for the commands (tests put fake onstat executables first); the process's own
    /// PATH when `None`.
    pub(crate) path: Option<std::ffi::OsString>,
}

impl LocalRunner {
    pub fn new(informixserver: Option<String>) -> Self {
        LocalRunner {
            informixserver,
            path: None,
        }
    }

    /// Runs commands with this PATH (the program is looked up in it too).
    pub fn with_path(mut self, path: impl Into<std::ffi::OsString>) -> Self {
        self.path = Some(path.into());
        self
    }

    pub(crate) async fn run_command(
        &self,
        argv: &[String],
        stdin: Option<&str>,
        timeout: Duration,
    ) -> Result<Output, SourceError> {
        let Some((program, args)) = argv.split_first() else {
            return Err(SourceError::Other("empty command".into()));
        };
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Dropping the future (timeout, quit) kills the child: never leave onstat behind.
            .kill_on_drop(true);
        if let Some(server) = &self.informixserver {
            cmd.env("INFORMIXSERVER", server);
        }
        if let Some(path) = &self.path {
            // std looks the program up in the child's PATH when it is set here.
            cmd.env("PATH", path);
        }
        let mut child = cmd.spawn().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                SourceError::NotFound {
                    program: program.clone(),
                }
            } else {
                SourceError::Spawn {
                    program: program.clone(),
                    reason: e.to_string(),
                }
            }
        })?;
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            use tokio::io::AsyncWriteExt;
            // A program that exits without reading its input is not an error here: its exit
            // code and output tell what happened.
            let _ = tokio::time::timeout(timeout, pipe.write_all(text.as_bytes())).await;
            drop(pipe);
        }
        match tokio::time::timeout(timeout, child.wait_with_output()).await {
            Err(_) => Err(SourceError::Timeout { after: timeout }),
            Ok(Err(e)) => Err(SourceError::Spawn {
                program: program.clone(),
                reason: e.to_string(),
            }),
            Ok(Ok(out)) => Ok(Output {
                exit: out.status.code(),
                stdout: lossy(out.stdout),
                stderr: lossy(out.stderr),
            }),
        }
    }
}

/// Command output in a legacy code set must not fail the whole sample.
fn lossy(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

impl CommandRunner for LocalRunner {
    fn run<'a>(
        &'a self,
        request: &'a Request,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<Output, SourceError>> {
        Box::pin(async move {
            match request {
                Request::Command(argv) => self.run_command(argv, None, timeout).await,
                Request::CommandInput { argv, stdin } => {
                    self.run_command(argv, Some(stdin), timeout).await
                }
                Request::ReadFile(path) => {
                    let read = tokio::time::timeout(timeout, tokio::fs::read(path)).await;
                    match read {
                        Err(_) => Err(SourceError::Timeout { after: timeout }),
                        Ok(Err(e)) => Err(SourceError::Io {
                            path: path.display().to_string(),
                            reason: e.to_string(),
                        }),
                        Ok(Ok(bytes)) => Ok(Output::ok(lossy(bytes))),
                    }
                }
                Request::ListDir(path) => {
                    let list = async {
                        let mut names = Vec::new();
                        let mut rd = tokio::fs::read_dir(path).await?;
                        while let Some(entry) = rd.next_entry().await? {
                            names.push(entry.file_name().to_string_lossy().into_owned());
                        }
                        names.sort();
                        Ok::<_, std::io::Error>(names)
                    };
                    match tokio::time::timeout(timeout, list).await {
                        Err(_) => Err(SourceError::Timeout { after: timeout }),
                        Ok(Err(e)) => Err(SourceError::Io {
                            path: path.display().to_string(),
                            reason: e.to_string(),
                        }),
                        Ok(Ok(names)) => Ok(Output::ok(names.join("\n"))),
                    }
                }
            }
        })
    }
}
