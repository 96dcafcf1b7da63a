//! The proof that a source is one registry entry plus its parser: the test build's toy source
//! (`Source::Toy`, `/proc/loadavg`, parsed by `parsers::toy`), added in those two places and
//! named in `walk::feeds_activity` (as every source is), goes the whole way: polled on its
//! period, recorded under its label, stored under its typed key, listed with its short name
//! among the sources a snapshot reports, and read by `ifxtop parse toy-loadavg`.

use crate::collect::{spawn_polling, Ctx, SessionClock, Sinks};
use crate::error::SourceError;
use crate::parsers::toy::LoadAvg;
use crate::source::{key, BoxFuture, CommandRunner, Kind, Output, Request, Source};
use crate::store::{Store, StoreSettings};
use std::sync::Arc;
use std::time::Duration;

/// Answers `/proc/loadavg` and nothing else.
struct LoadAvgFile;

impl CommandRunner for LoadAvgFile {
    fn run<'a>(
        &'a self,
        request: &'a Request,
        _timeout: Duration,
    ) -> BoxFuture<'a, Result<Output, SourceError>> {
        Box::pin(async move {
            match request {
                Request::ReadFile(p) if p.as_os_str() == "/proc/loadavg" => Ok(Output {
                    exit: Some(0),
                    stdout: "0.50 0.40 0.30 1/123 4567\n".into(),
                    ..Output::default()
                }),
                _ => Err(SourceError::NotFound {
                    program: "a toy".into(),
                }),
            }
        })
    }
}

#[tokio::test]
async fn a_toy_source_is_one_entry_and_its_parser() {
    assert!(Source::polled().contains(&Source::Toy), "polled on its own");
    let (tx, mut updates) = tokio::sync::mpsc::channel(16);
    let (raw_tx, raw) = std::sync::mpsc::sync_channel(16);
    let (_interval, interval_rx) = tokio::sync::watch::channel(Duration::from_secs(1));
    let ctx = Ctx::new(
        Arc::new(LoadAvgFile),
        SessionClock::start(),
        Sinks {
            updates: tx,
            raw: Some(raw_tx),
        },
        interval_rx,
    );
    let tasks = spawn_polling(&ctx, vec![Source::Toy]);
    let update = tokio::time::timeout(Duration::from_secs(10), updates.recv())
        .await
        .expect("an update in time")
        .expect("the collector runs");
    for t in tasks {
        t.abort();
    }
    assert_eq!(update.source, Source::Toy);
    let recorded = raw.try_recv().expect("recorded");
    assert_eq!(recorded.source, "/proc/loadavg");
    assert_eq!(Source::from_label(&recorded.source), Some(Source::Toy));

    let mut store = Store::new(StoreSettings::default());
    store.apply(update);
    let want = LoadAvg {
        one: 0.5,
        five: 0.4,
        fifteen: 0.3,
    };
    assert_eq!(store.get(key::Toy), Some(&want));

    let snap = crate::model::snapshot::build(&store, Duration::from_secs(1), None, &[]);
    let listed = snap
        .sources
        .iter()
        .find(|s| s.short == "toy")
        .expect("listed among the sources");
    assert_eq!(listed.source, "/proc/loadavg");
    assert!(
        listed.age_s.is_some() && listed.error.is_none(),
        "{listed:?}"
    );

    let kind = Kind::from_name("toy-loadavg").expect("a parse kind");
    assert_eq!(kind.command(), "/proc/loadavg");
    let json = kind.parse_to_json("1.00 2.00 3.00 4/5 6").expect("parses");
    assert_eq!(json["fifteen"], 3.0);
}
