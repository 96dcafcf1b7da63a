//! Budget (DESIGN.md §6): the running TUI costs under 2 % of one core with a 5,000-session
//! instance at 1 s polling (onstat processes not counted). Per second the live loop parses what
//! the collectors brought, applies it to the store and rebuilds the snapshot (the joins) once;
//! drawing a frame is measured by `benches/render.rs`. This bench measures that work for a
//! 5,000-session instance from the demo (real onstat formats), in its heaviest second: every
//! source due at once (onstat -u, -g con, -X, -g ath, -g cpu, -g ntt, -k, /proc/net/tcp{,6}, and the
//! chunk I/O and replication sources: onstat -D, -g iof, /proc/diskstats, -g cluster, -g rss
//! verbose, joined to the chunks' devices resolved once; the vital signs: onstat -p, -l, -s, -x,
//! -g glo, -g rea, -g lmx, -g wmx, -g tpf, -g ckp, -g seg; each session's memory: onstat -g ses).
//! 2 % of a core is 20 ms per second: the `steady` group's ten seconds must take under 200 ms.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ifxtop::collect::sample::Update;
use ifxtop::demo::DemoInstance;
use ifxtop::model::snapshot;
use ifxtop::source::Source;
use ifxtop::store::{Store, StoreSettings};
use std::time::Duration;

const SOURCES: [Source; 26] = [
    Source::OnstatU,
    Source::OnstatGCon,
    Source::OnstatX,
    Source::OnstatGAth,
    Source::OnstatGCpu,
    Source::OnstatGNtt,
    Source::OnstatK,
    Source::ProcNetTcp6,
    Source::ProcNetTcp,
    Source::OnstatDUpper,
    Source::ProcDiskstats,
    Source::OnstatGIof,
    Source::OnstatGCluster,
    Source::OnstatGRss,
    Source::OnstatP,
    Source::OnstatL,
    Source::OnstatS,
    Source::OnstatXTxn,
    Source::OnstatGGlo,
    Source::OnstatGRea,
    Source::OnstatGLmx,
    Source::OnstatGWmx,
    Source::OnstatGTpf,
    Source::OnstatGCkp,
    Source::OnstatGSeg,
    Source::OnstatGSesList,
];

fn cycle(c: &mut Criterion) {
    // The allocator as the binary sets it (blocks above `memory::MMAP_THRESHOLD` get their own
    // mapping).
    ifxtop::memory::tune();
    // `cargo test --all-targets` runs this once without `--bench`: keep that cheap.
    let full = std::env::args().any(|a| a == "--bench");
    let sessions = if full { 5_000 } else { 200 };
    let demo = DemoInstance::new(1).with_sessions(sessions);
    let settings = StoreSettings {
        ports: vec![ifxtop::demo::LISTENER_PORT],
        ..StoreSettings::default()
    };
    let mut store = Store::new(settings);
    // A minute of history first, so trackers, rates and windows hold what they hold live.
    let outputs_at = |t: u64| {
        SOURCES
            .iter()
            .map(|s| {
                let out = demo
                    .respond(&s.request(), Duration::from_secs(t))
                    .expect("the demo answers every live source");
                (*s, out)
            })
            .collect::<Vec<_>>()
    };
    let apply = |store: &mut Store, t: u64, outs: Vec<(Source, ifxtop::source::Output)>| {
        for (source, out) in outs {
            let result = source.parse(out);
            assert!(result.is_ok(), "{}: {:?}", source.label(), result.err());
            store.apply(Update {
                source,
                t: Duration::from_secs(t),
                took: Duration::ZERO,
                result,
                how: Default::default(),
            });
        }
    };
    let map = demo
        .respond(&Source::OncheckPe.request(), Duration::ZERO)
        .expect("oncheck -pe");
    apply(&mut store, 0, vec![(Source::OncheckPe, map)]);
    // The chunks' devices, resolved once as the devices task does (stat and sysfs).
    let d_upper = Source::OnstatDUpper
        .parse(
            demo.respond(&Source::OnstatDUpper.request(), Duration::ZERO)
                .expect("onstat -D"),
        )
        .expect("onstat -D parses");
    let paths: Vec<String> = d_upper
        .get::<ifxtop::parsers::onstat_d_upper::OnstatDUpper>()
        .map(|d| d.chunks.iter().map(|c| c.path.clone()).collect())
        .unwrap_or_default();
    assert!(!paths.is_empty(), "the demo's chunks");
    let devices = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(async {
            let runner = ifxtop::demo::DemoRunner::wall(1, sessions);
            ifxtop::collect::devices::resolve_with(&runner, &paths)
                .await
                .transcript()
        });
    apply(
        &mut store,
        0,
        vec![(
            Source::ChunkDevices,
            ifxtop::source::Output {
                exit: Some(0),
                stdout: devices,
                stderr: String::new(),
            },
        )],
    );
    // 150 s into the demo's timeline: client waits with a filling Send-Q.
    for t in 90..150 {
        apply(&mut store, t, outputs_at(t));
    }
    let t = 150;
    let outs = outputs_at(t);
    let bytes: usize = outs.iter().map(|(_, o)| o.stdout.len()).sum();
    let snap = snapshot::build(&store, Duration::from_secs(t), Some("ol_demo"), &[]);
    assert!(snap.summary.threads >= sessions, "{}", snap.summary.threads);
    // The I/O joins are in the work measured: every chunk down to its device, a verdict.
    assert!(
        snap.io.chunks.len() >= 6
            && snap.io.chunks.iter().all(|c| c.device_await_ms.is_some())
            && snap.io.chunks.iter().any(|c| c.verdict.is_some()),
        "{:#?}",
        snap.io
    );
    assert_eq!(snap.replication.peers.len(), 1, "{:#?}", snap.replication);

    // The steady state the budget is about: ten seconds of polling as the collectors do it
    // (onstat -u, -g con and the socket tables every second, -X every 2 s, the joins, -k, -p,
    // -l, -s, -x, -D and /proc/diskstats every 5 s, -g ath, -g cpu, -g ntt, -g glo, -g rea, -g lmx,
    // -g wmx, -g iof and the replication commands every 10 s, -g ckp, -g tpf and -g ses every 30 s,
    // -g seg every minute; one snapshot a second), reported per second. The ten seconds hold
    // each 30 s and 60 s source once (its heaviest share).
    let due = |s: &Source, t: u64| match s {
        Source::OnstatX => t % 2 == 0,
        Source::OnstatK
        | Source::OnstatP
        | Source::OnstatL
        | Source::OnstatS
        | Source::OnstatXTxn
        | Source::OnstatDUpper
        | Source::ProcDiskstats => t % 5 == 0,
        Source::OnstatGAth
        | Source::OnstatGCpu
        | Source::OnstatGNtt
        | Source::OnstatGGlo
        | Source::OnstatGRea
        | Source::OnstatGLmx
        | Source::OnstatGWmx
        | Source::OnstatGIof
        | Source::OnstatGCluster
        | Source::OnstatGRss => t % 10 == 0,
        Source::OnstatGTpf | Source::OnstatGCkp | Source::OnstatGSeg | Source::OnstatGSesList => {
            t == 150
        }
        _ => true,
    };
    let ten: Vec<(u64, Vec<(Source, ifxtop::source::Output)>)> = (150..160)
        .map(|t| {
            let outs = outputs_at(t)
                .into_iter()
                .filter(|(s, _)| due(s, t))
                .collect();
            (t, outs)
        })
        .collect();
    // The same ten seconds as database time reads them (collect/demand.rs): `onstat -g ath`
    // at every second (more threads look runnable than CPU VPs, as in the demo at every
    // second), and the statements of the sessions active at the second's `onstat -u`, each
    // read again every 10 s (a tenth of them a second, at most 200), `onstat -g sql <sid>`.
    let with_db_time: Vec<(u64, Vec<(Source, ifxtop::source::Output)>)> = (150..160)
        .map(|t| {
            let mut outs: Vec<(Source, ifxtop::source::Output)> = outputs_at(t)
                .into_iter()
                .filter(|(s, _)| due(s, t) || *s == Source::OnstatGAth)
                .collect();
            let u = outs
                .iter()
                .find(|(s, _)| *s == Source::OnstatU)
                .and_then(|(_, o)| ifxtop::parsers::onstat_u::parse(&o.stdout).ok())
                .expect("onstat -u");
            let mut active: Vec<u64> = u
                .threads
                .iter()
                .filter(|th| {
                    th.sessid.0 != 0
                        && !matches!(th.flags.thread_kind(), Some('B' | 'D' | 'F' | 'M'))
                        && th.wait_reason != Some(ifxtop::parsers::onstat_u::WaitReason::Condition)
                })
                .map(|th| th.sessid.0)
                .filter(|sid| sid % 10 == t % 10)
                .collect();
            active.sort_unstable();
            active.dedup();
            active.truncate(200);
            for sid in active {
                let s = Source::OnstatGSql(ifxtop::ids::Sid(sid));
                let out = demo
                    .respond(&s.request(), Duration::from_secs(t))
                    .expect("onstat -g sql");
                outs.push((s, out));
            }
            (t, outs)
        })
        .collect();
    let read: usize = with_db_time
        .iter()
        .map(|(_, o)| {
            o.iter()
                .filter(|(s, _)| matches!(s, Source::OnstatGSql(_)))
                .count()
        })
        .sum();
    eprintln!("database time: {read} statements read in ten seconds");
    let mut g = c.benchmark_group(format!("steady_{sessions}_sessions"));
    g.sample_size(20);
    g.bench_function("ten_seconds_of_polling_with_database_time", |b| {
        b.iter_batched(
            || (store.clone(), with_db_time.clone()),
            |(mut st, ten)| {
                let mut snaps = Vec::with_capacity(ten.len());
                for (t, outs) in ten {
                    apply(&mut st, t, outs);
                    snaps.push(snapshot::build(
                        &st,
                        Duration::from_secs(t),
                        Some("ol_demo"),
                        &[],
                    ));
                }
                (st, snaps)
            },
            criterion::BatchSize::LargeInput,
        )
    });
    g.bench_function("ten_seconds_of_polling", |b| {
        b.iter_batched(
            || (store.clone(), ten.clone()),
            |(mut st, ten)| {
                let mut snaps = Vec::with_capacity(ten.len());
                for (t, outs) in ten {
                    apply(&mut st, t, outs);
                    snaps.push(snapshot::build(
                        &st,
                        Duration::from_secs(t),
                        Some("ol_demo"),
                        &[],
                    ));
                }
                (st, snaps)
            },
            criterion::BatchSize::LargeInput,
        )
    });
    g.finish();

    // The same ten seconds with each second's snapshot built from the parts kept from the
    // second before (those whose sources did not move shared), against built whole: the
    // parsing and applying are the same in both, the difference is the builds'. The parts start
    // as the second before the ten left them (a build of that second, not timed).
    let mut g = c.benchmark_group(format!("rebuild_{sessions}_sessions"));
    g.sample_size(20);
    // Each second applied, then built from `parts` (kept from second to second), or whole.
    let seconds = |st: &mut Store,
                   ten: Vec<(u64, Vec<(Source, ifxtop::source::Output)>)>,
                   mut parts: Option<&mut snapshot::Parts>| {
        let mut snaps = Vec::with_capacity(ten.len());
        for (t, outs) in ten {
            apply(st, t, outs);
            let at = Duration::from_secs(t);
            snaps.push(match parts.as_deref_mut() {
                Some(p) => snapshot::build_from(st, at, Some("ol_demo"), &[], None, p),
                None => snapshot::build(st, at, Some("ol_demo"), &[]),
            });
        }
        snaps
    };
    g.bench_function("ten_seconds_whole", |b| {
        b.iter_batched(
            || (store.clone(), ten.clone()),
            |(mut st, ten)| {
                let snaps = seconds(&mut st, ten, None);
                (st, snaps)
            },
            criterion::BatchSize::LargeInput,
        )
    });
    // Each second's snapshot let go before the next is built, as the screen and `serve` do:
    // dropped, or its rows' room handed to the next build (`Snapshot::recycle`).
    let let_go = |st: &mut Store,
                  ten: Vec<(u64, Vec<(Source, ifxtop::source::Output)>)>,
                  parts: &mut snapshot::Parts,
                  recycle: bool| {
        let mut last: Option<std::sync::Arc<snapshot::Snapshot>> = None;
        for (t, outs) in ten {
            apply(st, t, outs);
            if let Some(old) = last.take() {
                if recycle {
                    snapshot::Snapshot::recycle(old, parts);
                } else {
                    drop(old);
                }
            }
            let at = Duration::from_secs(t);
            last = Some(std::sync::Arc::new(snapshot::build_from(
                st,
                at,
                Some("ol_demo"),
                &[],
                None,
                parts,
            )));
        }
        last
    };
    for (name, recycle) in [
        ("ten_seconds_dropped", false),
        ("ten_seconds_recycled", true),
    ] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || {
                    let st = store.clone();
                    let mut parts = snapshot::Parts::default();
                    let at = Duration::from_secs(149);
                    let first =
                        snapshot::build_from(&st, at, Some("ol_demo"), &[], None, &mut parts);
                    if recycle {
                        snapshot::Snapshot::recycle(std::sync::Arc::new(first), &mut parts);
                    }
                    (st, ten.clone(), parts)
                },
                |(mut st, ten, mut parts)| {
                    let last = let_go(&mut st, ten, &mut parts, recycle);
                    (st, last, parts)
                },
                criterion::BatchSize::LargeInput,
            )
        });
    }
    g.bench_function("ten_seconds_from_parts", |b| {
        b.iter_batched(
            || {
                let st = store.clone();
                let mut parts = snapshot::Parts::default();
                let at = Duration::from_secs(149);
                let _ = snapshot::build_from(&st, at, Some("ol_demo"), &[], None, &mut parts);
                (st, ten.clone(), parts)
            },
            |(mut st, ten, mut parts)| {
                let snaps = seconds(&mut st, ten, Some(&mut parts));
                (st, snaps, parts)
            },
            criterion::BatchSize::LargeInput,
        )
    });
    g.finish();

    // One second's build alone, from a store that holds that second (nothing parsed or
    // applied): what the joins cost, the waits' and the sessions' rows made again as each
    // second makes them, the parts whose sources did not move shared, and the snapshot let go
    // into the next build's room as the screen does.
    let mut g = c.benchmark_group(format!("build_{sessions}_sessions"));
    g.sample_size(30);
    g.bench_function("one_second_recycled", |b| {
        let mut st = store.clone();
        apply(&mut st, t, outs.clone());
        let at = Duration::from_secs(t);
        let mut parts = snapshot::Parts::default();
        b.iter(|| {
            let snap = snapshot::build_from(&st, at, Some("ol_demo"), &[], None, &mut parts);
            snapshot::Snapshot::recycle(std::sync::Arc::new(snap), &mut parts);
        })
    });
    g.finish();

    let mut g = c.benchmark_group(format!("poll_cycle_{sessions}_sessions"));
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("parse_apply_join", |b| {
        b.iter_batched(
            || (store.clone(), outs.clone()),
            |(mut st, outs)| {
                apply(&mut st, t, outs);
                let snap = snapshot::build(&st, Duration::from_secs(t), Some("ol_demo"), &[]);
                // Returned, so dropping the store clone (the bench's own setup) is not timed:
                // the live loop keeps its one store.
                (st, snap)
            },
            criterion::BatchSize::LargeInput,
        )
    });
    g.finish();
}

/// The chunk I/O and replication share of that work, alone: one round of their outputs parsed
/// and applied (the heaviest moment: -D, /proc/diskstats, -g iof, -g cluster and -g rss verbose
/// all due), then the chunk and replication views built.
fn io_share(c: &mut Criterion) {
    const IO: [Source; 5] = [
        Source::OnstatDUpper,
        Source::ProcDiskstats,
        Source::OnstatGIof,
        Source::OnstatGCluster,
        Source::OnstatGRss,
    ];
    let demo = DemoInstance::new(1);
    let outs_at = |t: u64| {
        IO.iter()
            .map(|s| {
                let out = demo
                    .respond(&s.request(), Duration::from_secs(t))
                    .expect("the demo answers");
                (*s, out)
            })
            .collect::<Vec<_>>()
    };
    let mut store = Store::new(StoreSettings::default());
    let u = demo
        .respond(&Source::OnstatU.request(), Duration::from_secs(600))
        .expect("onstat -u");
    let apply = |store: &mut Store, t: u64, outs: Vec<(Source, ifxtop::source::Output)>| {
        for (source, out) in outs {
            let result = source.parse(out);
            assert!(result.is_ok(), "{}: {:?}", source.label(), result.err());
            store.apply(Update {
                source,
                t: Duration::from_secs(t),
                took: Duration::ZERO,
                result,
                how: Default::default(),
            });
        }
    };
    apply(&mut store, 600, vec![(Source::OnstatU, u)]);
    for t in (540..620).step_by(5) {
        apply(&mut store, t, outs_at(t));
    }
    let outs = outs_at(620);
    let mut g = c.benchmark_group("io_share");
    g.bench_function("parse_apply_views", |b| {
        b.iter_batched(
            || (store.clone(), outs.clone()),
            |(mut st, outs)| {
                apply(&mut st, 620, outs);
                let io = ifxtop::model::io::build_io(&st);
                let flags = vec!["Prim".to_string()];
                let r = ifxtop::model::io::build_replication(&st, Some(&flags));
                (st, io, r)
            },
            criterion::BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, cycle, io_share);
criterion_main!(benches);
