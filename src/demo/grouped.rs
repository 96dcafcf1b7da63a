//! `onstat` with several options in one call (`onstat -u -X -k -p -D`): the banner once, then
//! each option's part, as the collectors ask for them (`collect/group.rs`).

use super::moment::World;
use super::{disk, onstat, vitals};

/// A part of `onstat`'s output that several options can share a call for: what one option
/// prints after the banner, starting with its title line.
type Body = fn(&World<'_>, &mut String);

/// The options onstat prints together under one banner (`onstat -u -X -k -p -l -s -x`), each
/// with what it prints: another option is one more line here (and its title in
/// `parsers::group`).
const GROUPABLE: [(&str, Body); 9] = [
    ("-u", onstat::users),
    ("-X", onstat::buffers),
    ("-k", onstat::locks),
    ("-d", onstat::dbspaces),
    ("-D", disk::d_upper),
    ("-p", vitals::profile),
    ("-l", vitals::logs),
    ("-s", vitals::latches),
    ("-x", vitals::transactions),
];

/// Whether `option` is one onstat prints with others in one call.
pub(crate) fn groupable(option: &str) -> bool {
    GROUPABLE.iter().any(|(name, _)| *name == option)
}

/// `onstat OPTIONS...`: the banner once, then each option's part in the order asked, a blank
/// line between them (what `parsers::group::split` cuts back). `None` for an option not in
/// `GROUPABLE`.
pub(crate) fn onstat_options(w: &World<'_>, options: &[&str]) -> Option<String> {
    let mut o = onstat::banner(w);
    for (k, option) in options.iter().enumerate() {
        let body = GROUPABLE.iter().find(|(name, _)| name == option)?.1;
        if k > 0 {
            o.push('\n');
        }
        body(w, &mut o);
    }
    Some(o)
}
