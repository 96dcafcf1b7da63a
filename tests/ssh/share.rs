//! Watch together over plain ssh: a collector (`ifxtop serve --demo --share`) and two viewers,
//! one through the real sshd (`ssh HOST ifxtop attach SOCKET`, as `ifxtop --attach` runs it),
//! one on the socket here: both get the feed, each sees the other in the presence list, a
//! mark from one reaches the other, and junk sent over ssh is refused.

use crate::common::feed::{wait_for, Lines};
use crate::sshd::{self, Sshd};
use ifxtop::source::attach::{open, AttachTarget, Transport};
use ifxtop::source::ssh::SshTarget;
use std::io::Write;
use std::process::Child;

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn two_viewers_one_over_ssh_see_the_feed_each_other_and_a_mark() {
    if !sshd::available("two_viewers_one_over_ssh_see_the_feed_each_other_and_a_mark") {
        return;
    }
    let sshd = Sshd::start();
    let dir = tempfile::tempdir().expect("dir");
    let sock = dir.path().join("feed.sock");
    let _serve = Killed(crate::common::feed::serve_sharing(&sock));
    wait_for("the socket", || sock.exists());
    // Over ssh, as `ifxtop --attach 127.0.0.1:PORT --attach-socket SOCK` runs it.
    let target = AttachTarget::Ssh(SshTarget::parse(&sshd.target()).expect("target"));
    let Transport {
        from, mut to, keep, ..
    } = open(
        &target,
        Some(&sshd.client_config()),
        env!("CARGO_BIN_EXE_ifxtop"),
        Some(&sock.display().to_string()),
    )
    .expect("ssh");
    let over_ssh = Lines::read(from);
    // On the socket here.
    let here = std::os::unix::net::UnixStream::connect(&sock).expect("connect");
    let mut to_here = here.try_clone().expect("clone");
    let local = Lines::read(Box::new(here));
    let has = |l: &Lines, s: &str| l.has(s);
    for l in [&over_ssh, &local] {
        wait_for("the header", || has(l, "\"ifxtop_recording\":1"));
        wait_for("onstat -u", || has(l, "\"source\":\"onstat -u\""));
    }
    // The presence list: two viewers, the one over ssh from where sshd says it came.
    wait_for("both in the presence list", || {
        local.any(|l| {
            l.contains("\"viewers\"")
                && l.matches("\"via\":\"socket\"").count() == 2
                && l.contains("\"host\":\"127.0.0.1\"")
        })
    });
    // A mark over ssh reaches the viewer here; junk over ssh is refused and runs nothing.
    to.write_all(b"{\"mark\":{\"at\":290.0,\"text\":\"sid 812 holds the chain\"}}\n")
        .expect("mark");
    to.write_all(b"{\"argv\":[\"onmode\",\"-z\",\"812\"]}\n")
        .expect("junk");
    to.flush().expect("flush");
    wait_for("the mark here", || has(&local, "sid 812 holds the chain"));
    wait_for("the refusal over ssh", || has(&over_ssh, "\"refused\""));
    assert!(!has(&local, "\"refused\""));
    // Nothing it sent ran: no output of the feed was of a command it named.
    for l in [&over_ssh, &local] {
        assert!(
            !l.any(|x| x.starts_with("{\"t\":") && x.contains("\"argv\":[\"onmode\"")),
            "nothing the viewer sent ran"
        );
    }
    // And the other way.
    to_here
        .write_all(b"{\"mark\":{\"at\":291.0,\"text\":\"look at customer\"}}\n")
        .expect("mark");
    wait_for("the mark over ssh", || has(&over_ssh, "look at customer"));
    drop(keep);
}
