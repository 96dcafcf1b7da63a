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
//! with all three kinds 24 — or none: they ride in the tick's `onstat -i` call
//! (`group.rs`), which asks them when [`commands`] says.

use crate::parsers::onstat_g_cluster::OnstatGCluster;
use crate::source::Source;

/// The kinds of secondary a cluster output lists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Kinds {
    hdr: bool,
    rss: bool,
    sds: bool,
}

impl Kinds {
    pub(super) fn of(c: &OnstatGCluster) -> Kinds {
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
pub(super) fn commands(role: super::Role, kinds: Kinds) -> Vec<Source> {
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
