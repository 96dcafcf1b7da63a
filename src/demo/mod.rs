//! The simulated Informix instance behind `--demo` (lead's placeholder until the demo lands).

use crate::error::SourceError;
use crate::source::{BoxFuture, CommandRunner, Output, Request};
use std::time::{Duration, Instant};

pub const LISTENER_PORT: u16 = 9088;

pub struct DemoRunner {
    start: Instant,
}

impl DemoRunner {
    pub fn wall(seed: u64, sessions: usize) -> Self {
        let _ = (seed, sessions);
        DemoRunner {
            start: Instant::now(),
        }
    }
}

pub struct DemoInstance;

impl DemoInstance {
    pub fn new(seed: u64) -> Self {
        let _ = seed;
        DemoInstance
    }

    pub fn with_sessions(self, n: usize) -> Self {
        let _ = n;
        self
    }

    pub fn respond(&self, request: &Request, t: Duration) -> Result<Output, SourceError> {
        let _ = t;
        Err(SourceError::NotFound {
            program: request.program(),
        })
    }
}

pub fn describe_phase(t: Duration) -> String {
    format!("demo t={}s", t.as_secs())
}

impl CommandRunner for DemoRunner {
    fn run<'a>(
        &'a self,
        request: &'a Request,
        _timeout: Duration,
    ) -> BoxFuture<'a, Result<Output, SourceError>> {
        Box::pin(async move {
            Err(SourceError::NotFound {
                program: request.program(),
            })
        })
    }

    fn clock(&self) -> Option<Duration> {
        Some(self.start.elapsed())
    }
}
