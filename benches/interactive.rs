//! The `onstat -i` splitter's throughput: one interactive answer with every polled
//! onstat option the demo prints at 5,000 sessions (the banner before each option, a last
//! prompt), cut at the prompts into each option's text, as every tick does before parsing.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ifxtop::demo::DemoInstance;
use ifxtop::parsers::interactive;
use ifxtop::source::{Request, Source};
use std::hint::black_box;
use std::time::Duration;

/// The answer of `onstat -i` to every polled onstat option the demo prints, and their count.
fn answer(sessions: usize) -> (String, usize) {
    let demo = DemoInstance::new(1).with_sessions(sessions);
    let mut text = String::new();
    let mut n = 0;
    for s in Source::polled() {
        let request = s.request();
        if !matches!(&request, Request::Command(argv) if argv[0] == "onstat") {
            continue;
        }
        if let Ok(out) = demo.respond(&request, Duration::from_secs(600)) {
            text.push_str(interactive::PROMPT);
            text.push(' ');
            text.push_str(&out.stdout);
            n += 1;
        }
    }
    text.push_str(interactive::PROMPT);
    text.push(' ');
    (text, n)
}

fn splitter(c: &mut Criterion) {
    let mut g = c.benchmark_group("interactive_split");
    for sessions in [300, 5000] {
        let (text, n) = answer(sessions);
        assert_eq!(
            interactive::split(&text, n).map(|p| p.len()).ok(),
            Some(n),
            "the bench's input splits"
        );
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(format!("every_option_{sessions}_sessions"), |b| {
            b.iter(|| interactive::split(black_box(&text), n))
        });
    }
    g.finish();
}

criterion_group!(benches, splitter);
criterion_main!(benches);
