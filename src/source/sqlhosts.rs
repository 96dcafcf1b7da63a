//! Informix listener ports from the sqlhosts file (and /etc/services for named services), so the
//! Sockets pane knows which connections are the instance's.

use std::collections::HashMap;

/// One sqlhosts line: `dbservername nettype hostname servicename [options]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SqlhostsEntry {
    pub(crate) server: String,
    pub(crate) nettype: String,
    pub(crate) host: String,
    pub(crate) service: String,
}

pub(crate) fn parse_sqlhosts(text: &str) -> Vec<SqlhostsEntry> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some(SqlhostsEntry {
                server: w.next()?.to_string(),
                nettype: w.next()?.to_string(),
                host: w.next()?.to_string(),
                service: w.next()?.to_string(),
            })
        })
        .collect()
}

/// `/etc/services`: tcp service name (and aliases) → port.
pub(crate) fn parse_services(text: &str) -> HashMap<String, u16> {
    let mut map = HashMap::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        let mut w = line.split_whitespace();
        let (Some(name), Some(portproto)) = (w.next(), w.next()) else {
            continue;
        };
        let Some((port, proto)) = portproto.split_once('/') else {
            continue;
        };
        if proto != "tcp" {
            continue;
        }
        let Ok(port) = port.parse::<u16>() else {
            continue;
        };
        map.entry(name.to_string()).or_insert(port);
        for alias in w {
            map.entry(alias.to_string()).or_insert(port);
        }
    }
    map
}

/// The TCP ports of `servers` (INFORMIXSERVER and its aliases) in sqlhosts. Shared-memory and
/// stream-pipe entries (`onipcshm`, `onipcstr`) have no port.
pub(crate) fn listener_ports(
    entries: &[SqlhostsEntry],
    servers: &[&str],
    services: &HashMap<String, u16>,
) -> Vec<u16> {
    let mut ports: Vec<u16> = entries
        .iter()
        .filter(|e| servers.contains(&e.server.as_str()))
        .filter(|e| !e.nettype.contains("ipc"))
        .filter_map(|e| {
            e.service
                .parse::<u16>()
                .ok()
                .or_else(|| services.get(&e.service).copied())
        })
        .collect();
    ports.sort_unstable();
    ports.dedup();
    ports
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_by_number_and_by_service_name() {
        let hosts = parse_sqlhosts(
            "# comment\nol_prod onsoctcp dbhost 9088\nol_prod_shm onipcshm dbhost dummy\n\
             ol_prod_ssl onsocssl dbhost ifx_ssl # tls\nother onsoctcp h 1526\n",
        );
        assert_eq!(hosts.len(), 4);
        let services = parse_services("ifx_ssl 9089/tcp ssl_alias\nfoo 1/udp\n");
        assert_eq!(services.get("ifx_ssl"), Some(&9089));
        assert_eq!(services.get("ssl_alias"), Some(&9089));
        assert_eq!(services.get("foo"), None);
        assert_eq!(
            listener_ports(
                &hosts,
                &["ol_prod", "ol_prod_shm", "ol_prod_ssl"],
                &services
            ),
            vec![9088, 9089]
        );
    }
}
