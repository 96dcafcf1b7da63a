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

/// `onstat OPTIONS...` written onto `o`: the banner once, then each option's part in the order
/// asked, a blank line between them (what `parsers::group::split` cuts back). `None` (and `o`
/// untouched) for an option not in `GROUPABLE`.
///
/// The parts are printed one after the other (`skew.rs`): `world(at)` is the instance when a
/// part is printed. The banner is the first part's.
pub(crate) fn onstat_options<'a>(
    call: &mut super::skew::Call,
    world: impl Fn(std::time::Duration) -> std::rc::Rc<World<'a>>,
    options: &[&str],
    o: &mut String,
) -> Option<()> {
    let bodies: Vec<Body> = options
        .iter()
        .map(|option| {
            GROUPABLE
                .iter()
                .find(|(name, _)| name == option)
                .map(|g| g.1)
        })
        .collect::<Option<_>>()?;
    for (k, body) in bodies.into_iter().enumerate() {
        let w = world(call.part_at());
        let at = o.len();
        if k == 0 {
            onstat::banner_into(&w, o);
        } else {
            o.push('\n');
        }
        body(&w, o);
        call.printed(o.len() - at);
    }
    Some(())
}
