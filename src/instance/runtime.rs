//! The runtime a watch runs on: one thread (the collectors wait, they do not compute), and an
//! end that nothing holds up.

use crate::error::Error;
use std::time::Duration;

/// How long the runtime's last tasks get when it ends.
const SHUTDOWN_WAIT: Duration = Duration::from_millis(500);

/// The runtime of the screen, `serve` and a live `snapshot`.
pub fn current_thread() -> Result<tokio::runtime::Runtime, Error> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// The same on a paused clock (virtual time): the demo collected from one moment to another in
/// a fraction of a second.
pub fn paused() -> Result<tokio::runtime::Runtime, Error> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()?)
}

/// Ends `rt`: every task is dropped (so every command in flight is killed with its process
/// group); a file read stuck in the kernel (a dead NFS server) keeps its thread, but never holds
/// up the exit.
pub fn finish(rt: tokio::runtime::Runtime) {
    rt.shutdown_timeout(SHUTDOWN_WAIT);
}
