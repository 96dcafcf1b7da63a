//! A viewer's feed (`ifxtop --attach TARGET`), joined before the screen opens, so a refusal or a
//! host that cannot be reached is said plainly (`setup.rs` names the instance as the
//! collector's recording header does).

use crate::cli::LiveArgs;
use crate::collect::follow::{self, Joined};
use crate::error::Error;
use crate::source::attach::AttachTarget;

/// Joins the feed at `target`.
pub(crate) fn join(args: &LiveArgs, target: &AttachTarget) -> Result<Joined, Error> {
    let t = crate::source::attach::open(
        target,
        args.watch.ssh.ssh_config.as_deref(),
        &args.share.attach_ifxtop,
        args.share.attach_socket.as_deref(),
    )
    .map_err(|e| Error::Other(format!("--attach {target}: {e}")))?;
    let said = t.said.clone();
    follow::join(t.from, t.to, &target.to_string(), t.keep).map_err(|e| {
        // Why ssh could not: what it said (its last line), when it said anything.
        let ssh = said
            .lock()
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        let last = ssh.lines().last().unwrap_or_default();
        Error::Other(if last.is_empty() {
            e
        } else {
            format!("{e}: {last}")
        })
    })
}
