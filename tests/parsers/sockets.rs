//! Socket tables: /proc/net/tcp{,6}, Linux and AIX netstat, ss — real samples and edge cases.

use crate::common::kind;
use crate::common::{fixture, fixtures_in};
use ifxtop::parsers::sockets::{parse_netstat, parse_proc_net_tcp, parse_ss, TcpState};
use proptest::prelude::*;

#[test]
fn every_socket_fixture_snapshots() {
    for (stem, text) in fixtures_in("netstat") {
        let kind = if stem.starts_with("ss-") {
            kind("ss")
        } else {
            kind("netstat")
        };
        let json = kind.parse_to_json(&text).expect("parses");
        crate::snap_json!(format!("parse__netstat__{stem}"), &json);
    }
    for (stem, text) in fixtures_in("proc-net-tcp") {
        let json = kind("proc-net-tcp").parse_to_json(&text).expect("parses");
        crate::snap_json!(format!("parse__proc-net-tcp__{stem}"), &json);
    }
}

#[test]
fn node_exporter_tcpstat_decodes_host_order_addresses() {
    let s = parse_proc_net_tcp(&fixture("proc-net-tcp/node_exporter-fixture-tcpstat.txt"))
        .expect("parses");
    assert!(s.unparsed.is_empty(), "{:?}", s.unparsed);
    assert_eq!(s.sockets.len(), 2);
    let listen = &s.sockets[0];
    assert_eq!(listen.local.to_string(), "0.0.0.0:22");
    assert_eq!(listen.state, Some(TcpState::Listen));
    assert_eq!(listen.send_q, 0x15);
    let conn = &s.sockets[1];
    if cfg!(target_endian = "little") {
        assert_eq!(conn.local.to_string(), "10.0.2.15:22");
        assert_eq!(conn.remote.to_string(), "10.0.2.2:35691");
    }
    assert_eq!(conn.state, Some(TcpState::Established));
    assert_eq!((conn.send_q, conn.recv_q), (0x15, 1));
}

#[test]
fn tcp6_rows_and_v4_mapped_clients() {
    let s = parse_proc_net_tcp(&fixture("proc-net-tcp/ifxtop-tcp6-v4-mapped.txt")).expect("ok");
    assert_eq!(s.sockets.len(), 2);
    assert_eq!(s.sockets[0].proto, "tcp6");
    assert_eq!(s.sockets[0].local.to_string(), "[::]:9088");
    if cfg!(target_endian = "little") {
        // IPv4-mapped addresses read as the IPv4 client; the row stays a tcp6 socket.
        assert_eq!(s.sockets[1].proto, "tcp6");
        assert_eq!(s.sockets[1].local.to_string(), "10.0.0.5:9088");
        assert_eq!(s.sockets[1].remote.to_string(), "10.1.2.3:51234");
    }
    assert_eq!(s.sockets[1].send_q, 0x3D000);
}

#[test]
fn linux_netstat_antp_keeps_the_program() {
    let s = parse_netstat(&fixture(
        "netstat/github-linenum-37-netstat-antp-redacted.txt",
    ))
    .expect("parses");
    assert!(s.unparsed.is_empty(), "{:?}", s.unparsed);
    assert_eq!(s.sockets.len(), 4);
    assert_eq!(s.sockets[0].local.to_string(), "127.0.0.1:5432");
    assert_eq!(s.sockets[0].process.as_deref(), Some("888/postgres"));
    // The publisher redacted octets as `x`: kept as printed.
    assert_eq!(s.sockets[2].local.to_string(), "192.168.1.x:48342");
    assert_eq!(s.sockets[2].state, Some(TcpState::Established));
}

#[test]
fn name_resolved_netstat_keeps_names_and_stateless_udp() {
    let s = parse_netstat(&fixture(
        "netstat/github-wyattjia-12-debian-netstat-a-inet-truncated.txt",
    ))
    .expect("parses");
    assert!(s.unparsed.is_empty(), "{:?}", s.unparsed);
    assert_eq!(s.sockets.len(), 6);
    assert_eq!(s.sockets[0].local.to_string(), "0.0.0.0:ssh");
    assert_eq!(s.sockets[3].remote.to_string(), "192.168.1.102:53591");
    assert_eq!(s.sockets[4].proto, "udp");
    assert_eq!(s.sockets[4].state, None);
}

#[test]
fn old_ss_ant_maps_states_to_netstat_spelling() {
    let s = parse_ss(&fixture("netstat/ss-github-netdata-2169-ss-ant.txt")).expect("parses");
    assert!(s.unparsed.is_empty(), "{:?}", s.unparsed);
    assert_eq!(s.sockets.len(), 4);
    assert!(s.sockets.iter().all(|x| x.state == Some(TcpState::SynSent)));
    assert_eq!(s.sockets[0].send_q, 1);
    assert_eq!(s.sockets[0].remote.to_string(), "10.1.1.1:8080");
}

#[test]
fn newer_ss_with_netid_brackets_and_process() {
    let text = "Netid State  Recv-Q Send-Q        Local Address:Port    Peer Address:Port Process\n\
                tcp   LISTEN 0      128                 0.0.0.0:9088         0.0.0.0:*    users:((\"oninit\",pid=4242,fd=9))\n\
                tcp   ESTAB  0      249856 [::ffff:10.0.0.5]:9088 [::ffff:10.1.2.3]:51234\n\
                udp   UNCONN 0      0          127.0.0.53%lo:53          0.0.0.0:*\n";
    let s = parse_ss(text).expect("parses");
    assert!(s.unparsed.is_empty(), "{:?}", s.unparsed);
    assert_eq!(
        s.sockets[0].process.as_deref(),
        Some("users:((\"oninit\",pid=4242,fd=9))")
    );
    assert_eq!(s.sockets[1].remote.to_string(), "10.1.2.3:51234");
    assert_eq!(s.sockets[1].send_q, 249_856);
    assert_eq!(s.sockets[2].state, Some(TcpState::Unconn));
    assert_eq!(s.sockets[2].local.host, "127.0.0.53%lo");
}

#[test]
fn aix_host_dot_port_and_pcb_column() {
    let s = parse_netstat(&fixture("netstat/ifxtop-aix-netstat-Aan.txt")).expect("parses");
    assert!(s.unparsed.is_empty(), "{:?}", s.unparsed);
    assert_eq!(s.sockets.len(), 5);
    assert_eq!(s.sockets[0].local.to_string(), "*:9088");
    assert_eq!(s.sockets[0].remote.to_string(), "*:*");
    assert_eq!(s.sockets[1].remote.to_string(), "10.1.2.3:51234");
    assert_eq!(s.sockets[1].send_q, 249_856);
    assert_eq!(s.sockets[4].state, None);
}

#[test]
fn linux_v6_rows_and_the_unix_section_is_not_misread() {
    let s =
        parse_netstat(&fixture("netstat/ifxtop-linux-netstat-an-v6-and-unix.txt")).expect("parses");
    assert!(s.unparsed.is_empty(), "{:?}", s.unparsed);
    assert_eq!(s.sockets.len(), 5);
    assert_eq!(s.sockets[2].local.to_string(), "[::]:22");
    assert_eq!(s.sockets[3].remote.to_string(), "10.1.9.9:40001");
    assert_eq!(s.sockets[3].send_q, 1312);
}

#[test]
fn wrong_input_is_an_error_naming_the_line() {
    let e = parse_proc_net_tcp("Userthreads\naddress flags\n").expect_err("not tcp");
    assert_eq!((e.line, e.column), (1, 1));
    assert!(e.expected.contains("/proc/net/tcp"), "{e}");
    assert!(parse_netstat("").is_err());
    let e = parse_ss("hello world\n").expect_err("not ss");
    assert_eq!(e.line, 1);
}

fn all_texts() -> Vec<String> {
    let mut v: Vec<String> = fixtures_in("netstat").into_iter().map(|(_, t)| t).collect();
    v.extend(fixtures_in("proc-net-tcp").into_iter().map(|(_, t)| t));
    v
}

// Never panicking on anything, and on a fixture cut or shuffled read as its own kind, is
// `robust`'s, for every kind; here each table's samples, cut or shuffled, are read as the other
// socket tables too.
proptest! {
    #[test]
    fn never_panics_on_truncated_or_shuffled_fixtures(cut in 0usize..2000, seed in any::<u64>()) {
        for text in all_texts() {
            let mut end = cut.min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let t = &text[..end];
            let _ = parse_proc_net_tcp(t);
            let _ = parse_netstat(t);
            let _ = parse_ss(t);
            let mut lines: Vec<&str> = text.lines().collect();
            let n = lines.len().max(1);
            for i in 0..lines.len() {
                lines.swap(i, (seed as usize).wrapping_add(i * 7) % n);
            }
            let shuffled = lines.join("\n");
            let _ = parse_proc_net_tcp(&shuffled);
            let _ = parse_netstat(&shuffled);
            let _ = parse_ss(&shuffled);
        }
    }
}
