//! What the store keeps of a parse holds its rows and no room past them (`Record::shrink`).

// Tests fail by panicking; `expect` says what was missing.
#![allow(clippy::expect_used)]

use ifxtop::parsers as p;
use ifxtop::source::Source;

/// What the store keeps for a source's period holds its rows and no room past them: the
/// demo's 300 sessions as each per-session source prints them, parsed as the poll does. A
/// vector grown by doubling holds up to twice its rows.
#[test]
fn parsed_rows_hold_no_spare_room() {
    let demo = ifxtop::demo::DemoInstance::new(1).with_sessions(300);
    let parse = |s: Source| {
        let out = demo
            .respond(&s.request(), std::time::Duration::from_secs(30))
            .expect("the demo answers");
        s.parse(out).expect("it parses")
    };
    macro_rules! tight {
        ($source:expr, $t:ty, $($rows:ident),+) => {{
            let parsed = parse($source);
            let r = parsed.get::<$t>().expect("its record type");
            $(
                assert!(r.$rows.len() >= 250, "{:?}: {} rows", $source, r.$rows.len());
                assert_eq!(r.$rows.capacity(), r.$rows.len(), "{:?}", $source);
            )+
        }};
    }
    tight!(Source::OnstatU, p::onstat_u::OnstatU, threads);
    tight!(Source::OnstatGNtt, p::onstat_g_ntt::OnstatGNtt, threads);
    tight!(
        Source::OnstatGSesList,
        p::onstat_g_ses::OnstatGSes,
        sessions
    );
    tight!(Source::OnstatGAth, p::onstat_g_ath::OnstatGAth, threads);
    tight!(Source::OnstatGCpu, p::onstat_g_cpu::OnstatGCpu, threads);
    tight!(Source::OnstatGTpf, p::onstat_g_tpf::OnstatGTpf, profiles);
    tight!(
        Source::OnstatXTxn,
        p::onstat_x_txn::OnstatXTxn,
        transactions
    );
    tight!(Source::ProcNetTcp, p::sockets::Sockets, sockets);
}
