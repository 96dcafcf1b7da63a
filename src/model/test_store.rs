//! Test support: stores fed as the joins' tests feed them, by the demo instance second by
//! second, or with an output written out.

use crate::collect::sample::Update;
use crate::demo::DemoInstance;
use crate::source::Source;
use crate::store::{Store, StoreSettings};
use std::time::Duration;

/// An empty store that knows the demo's listener port (the sockets on it are Informix's).
pub(crate) fn new_store() -> Store {
    Store::new(StoreSettings {
        ports: vec![crate::demo::LISTENER_PORT],
        ..Default::default()
    })
}

/// The sources without an argument that `demo` answers.
pub(crate) fn sources_answered(demo: &DemoInstance) -> Vec<Source> {
    let mut sources = Source::candidates_for_tests(None);
    sources.retain(|s| demo.respond(&s.request(), Duration::from_secs(1)).is_ok());
    sources
}

/// `store` fed second `t` of `demo`: each of `sources` in order, as its collector would.
pub(crate) fn feed(
    store: &mut Store,
    demo: &DemoInstance,
    sources: impl IntoIterator<Item = Source>,
    t: u64,
) {
    let at = Duration::from_secs(t);
    for s in sources {
        if let Some(u) = Update::from_demo(demo, s, at) {
            store.apply(u);
        }
    }
}

/// `source`'s output `text`, parsed, as its collector would hand it over at second `t`.
pub(crate) fn update(source: Source, text: &str, t: u64) -> Update {
    Update {
        source,
        t: Duration::from_secs(t),
        took: Duration::ZERO,
        result: Ok(source.parse_str(text).expect("parses")),
        how: Default::default(),
    }
}
