//! A viewer's instance (`ifxtop --attach TARGET`): the feed joined before the screen opens (so
//! a refusal or a host that cannot be reached is said plainly), and the instance named as the
//! collector's recording header names it.

use crate::cli::LiveArgs;
use crate::collect::follow::{self, Joined};
use crate::error::Error;
use crate::instance::setup::{instance_name, Mode, Setup};
use crate::source::attach::AttachTarget;
use crate::source::local::LocalRunner;
use crate::store::StoreSettings;
use std::sync::Arc;
use std::time::Duration;

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

/// The setup of a viewer of the feed at `target`.
pub(crate) fn setup(
    args: &LiveArgs,
    target: &AttachTarget,
    mut settings: StoreSettings,
) -> Result<Setup, Error> {
    let joined = join(args, target)?;
    let h = &joined.header;
    settings.ports = h.ports.clone();
    if let Some(kb) = h.base_page_kb {
        settings.base_page_kb = kb;
    }
    settings.wall_start = h.started_at();
    settings.host = h.host.clone();
    let server = h.server.clone();
    let instance = instance_name(server.as_deref(), h.host.as_deref());
    settings.instance = Some(instance.clone());
    let interval = args
        .interval
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .filter(|d| !d.is_zero())
        .unwrap_or(Duration::from_secs(1));
    Ok(Setup {
        instance,
        mode: Mode::Live,
        // Nothing runs for a viewer: the runner is never asked.
        runner: Arc::new(LocalRunner::new(None)),
        settings,
        interval,
        server,
        extents: Default::default(),
        record: args.watch.record.clone().map(|p| (p, args.record_max)),
        note: None,
        replay: None,
        log: args.log.clone(),
        share: None,
        follow: Some(std::sync::Mutex::new(Some(joined))),
    })
}
