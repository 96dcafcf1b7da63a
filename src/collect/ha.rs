//! The replication task. What it runs depends on the server's part in a cluster, read from the
//! `onstat -u` banner every second (`(Prim)`, `(Sec)`, `(RSS)`, `(SDS)`):
//!
//! - a standard server (no such flag): nothing at all;
//! - any cluster member: `onstat -g cluster` every 10 s (the primary's current log page, each
//!   peer's acknowledged position, type and state);
//! - then only the commands that apply: on a primary, `-g rss verbose` when the cluster has RSS
//!   peers (transmission blocked, backlog, pages not acknowledged), `-g sds verbose` when it has
//!   SDS peers, `-g dri` when it has an HDR peer; on a secondary, its own kind's command.
//!
//! So a standard server costs no process, a primary with one kind of secondary 12 a minute, one
//! with all three kinds 24.

use super::{pause, Ctx};
use crate::parsers::onstat_g_cluster::OnstatGCluster;
use crate::source::Source;
use tokio::task::JoinHandle;

/// The kinds of secondary a cluster output lists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Kinds {
    hdr: bool,
    rss: bool,
    sds: bool,
}

impl Kinds {
    fn of(c: &OnstatGCluster) -> Kinds {
        let has = |t: &str| {
            c.servers
                .iter()
                .any(|s| s.server_type.as_deref() == Some(t))
        };
        Kinds {
            hdr: has("HDR"),
            rss: has("RSS"),
            sds: has("SDS"),
        }
    }
}

/// The commands that apply to a server of `role` whose cluster has `kinds` of peers.
fn commands(role: super::Role, kinds: Kinds) -> Vec<Source> {
    let mut out = Vec::new();
    if role.primary {
        if kinds.rss {
            out.push(Source::OnstatGRss);
        }
        if kinds.sds {
            out.push(Source::OnstatGSds);
        }
        if kinds.hdr {
            out.push(Source::OnstatGDri);
        }
    } else {
        if role.rss {
            out.push(Source::OnstatGRss);
        }
        if role.sds {
            out.push(Source::OnstatGSds);
        }
        if role.hdr_secondary {
            out.push(Source::OnstatGDri);
        }
    }
    out
}

pub(crate) fn spawn(ctx: &Ctx) -> JoinHandle<()> {
    let mut ctx = ctx.clone();
    tokio::spawn(async move {
        // What the last good cluster output listed: a failed run keeps the peers known.
        let mut kinds = Kinds::default();
        loop {
            if let Some(role) = ctx.role().filter(|r| r.in_cluster()) {
                match ctx.collect(&Source::OnstatGCluster).await {
                    None => return,
                    Some(Ok(p)) => {
                        if let Some(c) = p.get::<OnstatGCluster>() {
                            kinds = Kinds::of(c);
                        }
                    }
                    Some(Err(_)) => {}
                }
                for source in commands(role, kinds) {
                    if ctx.collect(&source).await.is_none() {
                        return;
                    }
                }
            }
            pause(&mut ctx, Source::OnstatGCluster.period()).await;
        }
    })
}

#[cfg(test)]
mod tests {
    use super::super::Role;
    use super::*;

    #[test]
    fn only_what_applies_is_asked() {
        let primary = Role::from_flags(&["Prim".to_string()]);
        let rss_only = Kinds {
            rss: true,
            ..Kinds::default()
        };
        assert_eq!(commands(primary, rss_only), vec![Source::OnstatGRss]);
        let all = Kinds {
            hdr: true,
            rss: true,
            sds: true,
        };
        assert_eq!(
            commands(primary, all),
            vec![Source::OnstatGRss, Source::OnstatGSds, Source::OnstatGDri]
        );
        // A secondary asks its own kind's command, whatever peers the cluster lists.
        let rss = Role::from_flags(&["RSS".to_string()]);
        assert_eq!(commands(rss, all), vec![Source::OnstatGRss]);
        let sds = Role::from_flags(&["SDS".to_string()]);
        assert_eq!(commands(sds, all), vec![Source::OnstatGSds]);
        let hdr = Role::from_flags(&["Sec".to_string()]);
        assert_eq!(commands(hdr, Kinds::default()), vec![Source::OnstatGDri]);
        // A standard server is not in a cluster: the task runs nothing.
        assert!(!Role::from_flags(&[]).in_cluster());
        assert!(!Role::from_flags(&["CKPT REQ".to_string()]).in_cluster());
    }
}
