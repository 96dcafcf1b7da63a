//! Collectors: one tokio task per source (or per family of sources), each with its own period
//! and timeout, one run in flight, results parsed off the UI path and sent as typed,
//! timestamped updates. Time is tokio's: on a paused runtime the same collectors run a demo
//! timeline or a test in virtual time.

#[cfg(test)]
mod budget;
mod demand;
pub mod devices;
mod edits;
pub mod extents;
mod focus;
pub mod follow;
mod group;
mod ha;
pub mod log;
pub mod received;
pub mod record;
pub mod replay;
pub mod ring;
pub mod sample;
pub mod track;
pub mod wire;

use crate::error::SourceError;
use crate::ids::Sid;
use crate::parsers::memo::LineMemo;
use crate::parsers::numa::CpuList;
use crate::parsers::Parsed;
use crate::source::{
    Collector, CommandRunner, Cut, Output, Request, Source, FILE_TIMEOUT, PERIOD_DISCOVERY,
};
use extents::{ExtentSource, ExtentStatus};
pub use focus::Focus;
use sample::{How, RawSample, Update};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// The refresh intervals `+` and `-` step through.
pub(crate) const INTERVALS: [Duration; 7] = [
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(3),
    Duration::from_secs(5),
    Duration::from_secs(10),
    Duration::from_secs(30),
];

/// The shortest and the longest interval `--interval` and the config may set.
pub(crate) const INTERVAL_RANGE: std::ops::RangeInclusive<Duration> =
    Duration::from_millis(100)..=Duration::from_secs(3600);

/// `interval` within [`INTERVAL_RANGE`].
pub(crate) fn clamp_interval(interval: Duration) -> Duration {
    interval.clamp(*INTERVAL_RANGE.start(), *INTERVAL_RANGE.end())
}

/// How long past its own timeout a runner's answer is waited for before the collector gives
/// up on it (the runner's kill and reporting come first).
const RUNNER_GRACE: Duration = Duration::from_secs(2);

/// Time since the session started: the `t` of every sample and recording line. On tokio's
/// clock, so a paused runtime plays it in virtual time.
#[derive(Debug, Clone, Copy)]
pub struct SessionClock {
    start: Instant,
    /// What could not be taken off `start` (an instant before the process's own start).
    offset: Duration,
}

impl SessionClock {
    pub fn start() -> Self {
        SessionClock::starting_at(Duration::ZERO)
    }

    /// A clock that reads `at` now (a demo played from a point of its timeline).
    pub fn starting_at(at: Duration) -> Self {
        let now = Instant::now();
        SessionClock {
            start: now.checked_sub(at).unwrap_or(now),
            offset: if now.checked_sub(at).is_some() {
                Duration::ZERO
            } else {
                at
            },
        }
    }

    pub(crate) fn now(&self) -> Duration {
        self.offset + self.start.elapsed()
    }
}

/// Where collected outputs go: the app (typed) and, when recording, the recorder (raw).
#[derive(Clone)]
pub struct Sinks {
    pub updates: mpsc::Sender<Update>,
    /// A plain channel: the recorder writes files on its own thread, never on the async loop.
    pub raw: Option<std::sync::mpsc::SyncSender<RawSample>>,
}

/// What every collector shares.
#[derive(Clone)]
pub struct Ctx {
    pub runner: Arc<dyn CommandRunner>,
    pub clock: SessionClock,
    pub sinks: Sinks,
    /// The interval of the 1 s sources; the others scale with it.
    pub interval: watch::Receiver<Duration>,
    /// The server's release (major << 32 | minor) from the latest banner; 0 until one is seen.
    release: Arc<AtomicU64>,
    /// The server's replication role from the latest `onstat -u` banner ([`Role`] bits); 0
    /// until one is seen.
    role: Arc<std::sync::atomic::AtomicU8>,
    /// The chunk paths of the latest `onstat -D`: the devices task resolves them when they
    /// change.
    chunk_paths: Arc<watch::Sender<Vec<String>>>,
    /// What the latest `onstat -u` wants read with the next one (demand.rs).
    demand: Arc<demand::Demand>,
    /// The memoised sources' last parses, so unchanged lines are not parsed again.
    memos: Arc<Memos>,
}

/// What the banner's mode flags say of the server's part in a cluster: `(Prim)`, `(Sec)` (an
/// HDR secondary), `(RSS)`, `(SDS)`. A server whose banner has none is a standard server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Role {
    pub(crate) primary: bool,
    pub(crate) hdr_secondary: bool,
    pub(crate) rss: bool,
    pub(crate) sds: bool,
}

impl Role {
    const SEEN: u8 = 1;

    pub(crate) fn from_flags(flags: &[String]) -> Role {
        let has = |f: &str| flags.iter().any(|x| x == f);
        Role {
            primary: has("Prim"),
            hdr_secondary: has("Sec"),
            rss: has("RSS"),
            sds: has("SDS"),
        }
    }

    /// A primary or a secondary of some kind: the replication commands apply.
    pub(crate) fn in_cluster(self) -> bool {
        self.primary || self.hdr_secondary || self.rss || self.sds
    }

    fn bits(self) -> u8 {
        Role::SEEN
            | u8::from(self.primary) << 1
            | u8::from(self.hdr_secondary) << 2
            | u8::from(self.rss) << 3
            | u8::from(self.sds) << 4
    }

    fn from_bits(b: u8) -> Option<Role> {
        (b & Role::SEEN != 0).then_some(Role {
            primary: b & 2 != 0,
            hdr_secondary: b & 4 != 0,
            rss: b & 8 != 0,
            sds: b & 16 != 0,
        })
    }
}

impl Ctx {
    pub fn new(
        runner: Arc<dyn CommandRunner>,
        clock: SessionClock,
        sinks: Sinks,
        interval: watch::Receiver<Duration>,
    ) -> Ctx {
        Ctx {
            runner,
            clock,
            sinks,
            interval,
            release: Arc::new(AtomicU64::new(0)),
            role: Arc::new(std::sync::atomic::AtomicU8::new(0)),
            chunk_paths: Arc::new(watch::channel(Vec::new()).0),
            demand: Arc::new(demand::Demand::default()),
            memos: Arc::default(),
        }
    }

    /// The server's replication role, once a banner told it.
    pub(crate) fn role(&self) -> Option<Role> {
        Role::from_bits(self.role.load(Ordering::Relaxed))
    }

    /// The server's release, once a banner told it.
    pub(crate) fn release(&self) -> Option<(u32, u32)> {
        let v = self.release.load(Ordering::Relaxed);
        (v != 0).then_some(((v >> 32) as u32, (v & 0xffff_ffff) as u32))
    }

    /// Whether `source` is asked now: one of a later release waits until the release is known.
    pub(crate) fn asks(&self, source: &Source) -> bool {
        source.supported_by(self.release())
    }

    fn scaled(&self, base: Duration) -> Duration {
        let interval = clamp_interval(*self.interval.borrow());
        base.mul_f64(interval.as_secs_f64())
    }

    /// Runs one request for `source`, records it, parses it, and sends the update. Returns what
    /// was parsed or why not, or `None` when the app has gone.
    pub(crate) async fn collect(&self, source: &Source) -> Option<Result<Parsed, SourceError>> {
        self.collect_with(source, &source.request()).await
    }

    /// `collect` with another request standing in for the source's own (a captured
    /// `oncheck -pe` file read instead of running oncheck).
    pub(crate) async fn collect_with(
        &self,
        source: &Source,
        request: &Request,
    ) -> Option<Result<Parsed, SourceError>> {
        let out = self.run_raw(source, request).await;
        self.deliver(source, out).await
    }

    /// Parses what a run of `source` gave (off the loop when big) and sends the update.
    /// Returns what was parsed or why not, or `None` when the app has gone.
    pub(crate) async fn deliver(
        &self,
        source: &Source,
        out: RawRun,
    ) -> Option<Result<Parsed, SourceError>> {
        self.deliver_noted(source, out, None).await
    }

    /// `deliver`, saying how the run was made (`note`: one `onstat -i` for several options, or
    /// why not).
    pub(crate) async fn deliver_noted(
        &self,
        source: &Source,
        out: RawRun,
        note: Option<String>,
    ) -> Option<Result<Parsed, SourceError>> {
        let how = How {
            note,
            cpu: out.cpu,
            shared: out.shared,
            bytes: out.result.as_ref().ok().map(|o| o.stdout.len() as u64),
            process: None,
            live: false, // deliver_result says
        };
        let result = match out.result {
            Ok(o) => parse_off_the_loop(&self.memos, *source, o).await,
            Err(e) => Err(e),
        };
        self.deliver_result(source, out.t, out.took, result, how)
            .await
    }

    /// Sends what was parsed (or why not) of a run of `source` at `t` that took `took`.
    pub(crate) async fn deliver_result(
        &self,
        source: &Source,
        t: Duration,
        took: Duration,
        result: Result<Parsed, SourceError>,
        mut how: How,
    ) -> Option<Result<Parsed, SourceError>> {
        if how.cpu.is_some() {
            how.process = crate::source::cost::now();
        }
        how.live = self.runner.runs_processes();
        if let (Source::OnstatU, Ok(p)) = (source, &result) {
            let header = p
                .get::<crate::parsers::onstat_u::OnstatU>()
                .and_then(|u| u.header.as_ref());
            if let Some((major, minor)) = header.and_then(|h| h.release()) {
                self.release.store(
                    (u64::from(major) << 32) | u64::from(minor),
                    Ordering::Relaxed,
                );
            }
            if let Some(h) = header {
                self.role
                    .store(Role::from_flags(&h.mode_flags).bits(), Ordering::Relaxed);
            }
            if let Some(u) = p.get::<crate::parsers::onstat_u::OnstatU>() {
                self.demand.observe(u);
            }
        }
        if let (Source::OnstatGGlo, Ok(p)) = (source, &result) {
            let cpu = p
                .get::<crate::parsers::onstat_g_glo::OnstatGGlo>()
                .and_then(|g| g.classes.iter().find(|c| c.class == "cpu"))
                .map(|c| c.vps);
            if let Some(n) = cpu {
                self.demand.cpu_vps(n);
            }
        }
        if let (Source::OnstatDUpper, Ok(p)) = (source, &result) {
            if let Some(d) = p.get::<crate::parsers::onstat_d_upper::OnstatDUpper>() {
                let paths: Vec<String> = d.chunks.iter().map(|c| c.path.clone()).collect();
                self.chunk_paths.send_if_modified(|old| {
                    let changed = *old != paths;
                    if changed {
                        *old = paths;
                    }
                    changed
                });
            }
        }
        let update = Update {
            source: *source,
            t,
            took,
            result: result.clone(),
            how,
        };
        self.sinks.updates.send(update).await.ok()?;
        Some(result)
    }

    /// Runs a request through the runner, bounded here too: a runner must keep its own
    /// timeout, but one that does not (a hung ssh, a wedged file system) must not hold a
    /// collector forever. What it started is killed when the dropped future goes.
    pub(crate) async fn run_bounded(
        &self,
        request: &Request,
        timeout: Duration,
    ) -> Result<Output, SourceError> {
        self.run_bounded_as(request, timeout, false).await.0
    }

    /// `run_bounded`, with the CPU time of the process that answered (`source::cost`).
    pub(crate) async fn run_measured(
        &self,
        request: &Request,
        timeout: Duration,
    ) -> (Result<Output, SourceError>, Option<Duration>) {
        self.run_bounded_as(request, timeout, false).await
    }

    /// `run_measured`, keeping what the command had printed on its standard output when it was
    /// killed at its timeout (`CommandRunner::run_keeping`).
    pub(crate) async fn run_measured_keeping(
        &self,
        request: &Request,
        timeout: Duration,
    ) -> (Result<Output, Cut>, Option<Duration>) {
        let run = self.runner.run_keeping(request, timeout);
        let (r, cpu) =
            crate::source::cost::measured(tokio::time::timeout(timeout + RUNNER_GRACE, run)).await;
        match r {
            Ok(r) => (r, cpu),
            Err(_) => (Err(Cut::bare(SourceError::Timeout { after: timeout })), cpu),
        }
    }

    /// `run_bounded`, for the extent map's report when `extent_report` (the runner's larger
    /// output cap).
    async fn run_bounded_as(
        &self,
        request: &Request,
        timeout: Duration,
        extent_report: bool,
    ) -> (Result<Output, SourceError>, Option<Duration>) {
        let run = if extent_report {
            self.runner.run_extent_report(request, timeout)
        } else {
            self.runner.run(request, timeout)
        };
        let (r, cpu) =
            crate::source::cost::measured(tokio::time::timeout(timeout + RUNNER_GRACE, run)).await;
        match r {
            Ok(r) => (r, cpu),
            Err(_) => (Err(SourceError::Timeout { after: timeout }), cpu),
        }
    }

    /// Runs a request and records its raw output (when recording), without parsing.
    pub(crate) async fn run_raw(&self, source: &Source, request: &Request) -> RawRun {
        let started = Instant::now();
        let t = self.clock.now();
        // The extent map's report may be far bigger than any poll: the runner's larger cap.
        let extent_report = source.def().collector == Collector::Extents;
        let (result, cpu) = self
            .run_bounded_as(request, source.timeout(), extent_report)
            .await;
        let took = started.elapsed();
        let run = RawRun {
            t,
            took,
            result,
            cpu,
            shared: 1,
        };
        self.record(source, &request.argv(), &run);
        run
    }

    /// Whether runs are recorded (their outputs go to the recorder).
    pub(crate) fn recording(&self) -> bool {
        self.sinks.raw.is_some()
    }

    /// Keeps a run's raw output for the recording, when recording. `argv` is the command that
    /// ran (a grouped `onstat -u -X -k` for each of its sources' parts).
    pub(crate) fn record(&self, source: &Source, argv: &[String], run: &RawRun) {
        if let Some(raw) = &self.sinks.raw {
            let (exit, stdout, stderr) = match &run.result {
                Ok(o) => (o.exit, o.stdout.clone(), o.stderr.clone()),
                Err(e) => (None, String::new(), e.to_string()),
            };
            // A full recorder queue drops the sample rather than stall collection; the recorder
            // counts what it missed.
            let _ = raw.try_send(RawSample {
                t: run.t.as_secs_f64(),
                source: source.label(),
                argv: argv.to_vec(),
                exit,
                stdout,
                stderr,
            });
        }
    }
}

/// Parses an output; the extent map (a big `oncheck -pe` takes a while to index) off the async
/// workers.
async fn parse_off_the_loop(
    memos: &Memos,
    source: Source,
    out: Output,
) -> Result<Parsed, SourceError> {
    if source.def().collector == Collector::Extents {
        tokio::task::spawn_blocking(move || source.parse(out))
            .await
            .unwrap_or_else(|e| Err(SourceError::Other(format!("parser: {e}"))))
    } else {
        memos.parse_text(&source, out.exit, &out.stdout, &out.stderr)
    }
}

/// Per `memoised` source, the memo of its last parse (`parsers::memo`): the rows of lines
/// unchanged since are given again, not parsed. It holds the record the store holds too (the
/// same `Arc`), and a key of 16 bytes a row.
#[derive(Default)]
pub(crate) struct Memos(std::sync::Mutex<Vec<(Source, LineMemo)>>);

impl Memos {
    /// `Source::parse_text`, through the source's memo when it is `memoised`.
    pub(crate) fn parse_text(
        &self,
        source: &Source,
        exit: Option<i32>,
        stdout: &str,
        stderr: &str,
    ) -> Result<Parsed, SourceError> {
        if !source.memoised() {
            return source.parse_text(exit, stdout, stderr);
        }
        // Taken out for the parse, so no lock is held through it (one run of a source is in
        // flight at a time; a second would only parse without the memo).
        let mut memo = self.take(source);
        let result = source.parse_text_memo(exit, stdout, stderr, &mut memo);
        self.put(source, memo);
        result
    }

    /// How many rows the memo of `source` holds a line's key for.
    #[cfg(test)]
    fn remembered(&self, source: &Source) -> usize {
        let all = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        all.iter()
            .find(|(s, _)| s == source)
            .map_or(0, |(_, m)| m.remembered())
    }

    fn take(&self, source: &Source) -> LineMemo {
        let mut all = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        all.iter_mut()
            .find(|(s, _)| s == source)
            .map(|(_, m)| std::mem::take(m))
            .unwrap_or_default()
    }

    fn put(&self, source: &Source, memo: LineMemo) {
        let mut all = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match all.iter_mut().find(|(s, _)| s == source) {
            Some((_, m)) => *m = memo,
            None => all.push((*source, memo)),
        }
    }
}

pub(crate) struct RawRun {
    pub(crate) t: Duration,
    pub(crate) took: Duration,
    pub(crate) result: Result<Output, SourceError>,
    /// The CPU time of the process that answered, when one ran here.
    pub(crate) cpu: Option<Duration>,
    /// How many sources that process answered.
    pub(crate) shared: u32,
}

/// The sessions in focus, as a front-end wants them, handed to the demand (focus.rs): their
/// options ride in the tick's `onstat -i` (group.rs).
fn spawn_focus(ctx: &Ctx, mut focus: watch::Receiver<Focus>) -> JoinHandle<()> {
    let ctx = ctx.clone();
    tokio::spawn(async move {
        loop {
            ctx.demand.set_focus(&focus.borrow_and_update());
            if focus.changed().await.is_err() {
                return;
            }
        }
    })
}

/// Waits out the rest of a period, or returns early when the interval changes.
///
/// Waits end on multiples of the period on the session clock, so sources with the same period
/// run together and their results reach the screen in one redraw (one snapshot to build, not one
/// per source). A run that used most of its period waits for the next multiple but one: a slow
/// onstat is not run back to back.
async fn pause(ctx: &mut Ctx, base: Duration, phase: Duration) {
    let now = ctx.clock.now();
    let next = group::next_due(now, ctx.scaled(base), ctx.scaled(phase));
    let wait = next.saturating_sub(now);
    tokio::select! {
        _ = tokio::time::sleep(wait) => {}
        _ = ctx.interval.changed() => {}
    }
}

/// One task per source, each on its own period, or every tick while the latest `onstat -u`
/// wants it read with the next one (demand.rs).
pub fn spawn_polling(ctx: &Ctx, sources: Vec<Source>) -> Vec<JoinHandle<()>> {
    sources
        .into_iter()
        .map(|source| {
            let mut ctx = ctx.clone();
            tokio::spawn(async move {
                let mut demand = ctx.demand.subscribe();
                let demandable = demand::Demand::demandable(&source);
                loop {
                    // A source of a later release than the server's is not run at all.
                    if ctx.asks(&source) && ctx.collect(&source).await.is_none() {
                        break;
                    }
                    loop {
                        let wanted = ctx.demand.wants(&source);
                        // Wanted with every tick, it is due on the tick, not past it.
                        let (period, phase) = if wanted {
                            (demand::Demand::period(&source), Duration::ZERO)
                        } else {
                            (source.period(), source.phase())
                        };
                        tokio::select! {
                            _ = pause(&mut ctx, period, phase) => break,
                            // Wanted now: wait for the next tick instead of the period.
                            changed = demand.changed(), if !wanted && demandable => {
                                if changed.is_err() || !ctx.demand.wants(&source) {
                                    continue;
                                }
                            }
                        }
                    }
                }
            })
        })
        .collect()
}

/// Sockets: `/proc/net/tcp` and `tcp6` where they exist, else `netstat -an`.
fn spawn_sockets(ctx: &Ctx) -> JoinHandle<()> {
    let mut ctx = ctx.clone();
    tokio::spawn(async move {
        let mut use_netstat = false;
        let mut proc_ever_ok = false;
        loop {
            if use_netstat {
                if ctx.collect(&Source::Netstat).await.is_none() {
                    break;
                }
            } else {
                // tcp6 first, so the tcp sample that follows joins the fresh tcp6 table.
                if ctx.collect(&Source::ProcNetTcp6).await.is_none() {
                    break;
                }
                match ctx.collect(&Source::ProcNetTcp).await {
                    None => break,
                    Some(Ok(_)) => proc_ever_ok = true,
                    Some(Err(_)) if !proc_ever_ok => use_netstat = true,
                    Some(Err(_)) => {}
                }
            }
            pause(&mut ctx, Source::ProcNetTcp.period(), Duration::ZERO).await;
        }
    })
}

/// Finds the oninit processes: numeric entries of /proc whose `comm` is `oninit`. Lowest pids
/// first (the first oninit is the master; all attach the same shared memory).
pub(crate) async fn find_oninit_pids(ctx: &Ctx, max: usize) -> Vec<u32> {
    let list = ctx
        .run_bounded(&Request::ListDir("/proc".into()), FILE_TIMEOUT)
        .await;
    let Ok(list) = list else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = list
        .stdout
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    pids.sort_unstable();
    let mut found = Vec::new();
    for pid in pids {
        let comm = ctx
            .runner
            .run(
                &Request::ReadFile(format!("/proc/{pid}/comm").into()),
                FILE_TIMEOUT,
            )
            .await;
        if comm.is_ok_and(|c| c.stdout.trim() == "oninit") {
            found.push(pid);
            if found.len() >= max {
                break;
            }
        }
    }
    found
}

/// How many oninit processes' numa_maps are read: reading numa_maps walks the page tables of the
/// (huge) shared segment in the kernel, so a few processes are enough — shared memory is the
/// same in all of them.
pub(crate) const MAX_ONINIT_MAPS: usize = 4;

/// NUMA: node list, per-node meminfo and cpulist, zone_reclaim_mode, vmstat, oninit numa_maps.
fn spawn_numa(ctx: &Ctx) -> JoinHandle<()> {
    let mut ctx = ctx.clone();
    tokio::spawn(async move {
        let mut last_cpulist: Option<Instant> = None;
        let mut last_maps: Option<Instant> = None;
        let mut last_discovery: Option<Instant> = None;
        let mut pids: Vec<u32> = Vec::new();
        loop {
            let nodes: Vec<u32> = match ctx.collect(&Source::NodesOnline).await {
                None => break,
                Some(Ok(p)) => p.get::<CpuList>().map(|c| c.0.clone()).unwrap_or_default(),
                Some(Err(_)) => Vec::new(),
            };
            let due =
                |last: Option<Instant>, every: Duration| last.is_none_or(|l| l.elapsed() >= every);
            let cpulist_due = due(last_cpulist, Source::NodeCpulist(0).period());
            for &n in &nodes {
                if ctx.collect(&Source::NodeMeminfo(n)).await.is_none() {
                    return;
                }
                if cpulist_due && ctx.collect(&Source::NodeCpulist(n)).await.is_none() {
                    return;
                }
            }
            if cpulist_due {
                last_cpulist = Some(Instant::now());
            }
            if ctx.collect(&Source::ZoneReclaimMode).await.is_none()
                || ctx.collect(&Source::Vmstat).await.is_none()
            {
                break;
            }
            if due(last_discovery, PERIOD_DISCOVERY) {
                pids = find_oninit_pids(&ctx, MAX_ONINIT_MAPS).await;
                last_discovery = Some(Instant::now());
            }
            if due(last_maps, ctx.scaled(Source::NumaMaps(0).period())) {
                for &pid in &pids {
                    if ctx.collect(&Source::NumaMaps(pid)).await.is_none() {
                        return;
                    }
                }
                last_maps = Some(Instant::now());
            }
            pause(&mut ctx, Source::Vmstat.period(), Duration::ZERO).await;
        }
    })
}

/// Every collector of one instance, running. Dropping it stops them all (and so kills every
/// command in flight: the runners kill what they started when their futures are dropped).
pub struct Collection {
    pub(crate) clock: SessionClock,
    /// The interval of the 1 s sources (`+`/`-`).
    pub(crate) interval: watch::Sender<Duration>,
    /// The sessions whose `onstat -g ses/sql` are collected.
    pub(crate) focus: watch::Sender<Focus>,
    /// Asks the extent job for a new map.
    pub(crate) rebuild: mpsc::Sender<()>,
    pub(crate) updates: mpsc::Receiver<Update>,
    pub(crate) extents: mpsc::Receiver<ExtentStatus>,
    /// What the latest `onstat -u` wants read with the next one, and what a front-end pins.
    demand: Arc<demand::Demand>,
    tasks: Vec<JoinHandle<()>>,
}

impl Collection {
    /// `first`, and every other update already waiting: what is applied together.
    pub(crate) fn arrived(&mut self, first: Update) -> Vec<Update> {
        let mut all = vec![first];
        while let Ok(u) = self.updates.try_recv() {
            all.push(u);
        }
        all
    }

    /// Collects the sessions of `focus` (`onstat -g ses/sql/pqs <sid>`), in the tick's call
    /// (focus.rs).
    pub fn set_focus(&self, focus: Focus) {
        self.focus.send_if_modified(|f| {
            let changed = *f != focus;
            *f = focus;
            changed
        });
    }

    /// Reads the statements of these sessions too in every tick's call, besides those of the
    /// active sessions `onstat -u` shows (what a front-end's snapshot knows:
    /// `model::snapshot::statements_wanted`).
    pub fn ask_statements(&self, sids: Vec<Sid>) {
        self.focus.send_if_modified(|f| {
            let changed = f.statements != sids;
            if changed {
                f.statements = sids;
            }
            changed
        });
    }

    /// Wants `source` (one of the grouped call's: `onstat -D`, `-g glo`, `-k`, `-X`) at every
    /// tick from the next one on (`on`), or on its own period again. A snapshot pins `onstat -D`
    /// and `onstat -g glo` until it has the two samples their rates need.
    pub(crate) fn pin(&self, source: &Source, on: bool) {
        self.demand.pin(source, on);
    }

    /// Starts every collector against `runner`: the polled sources of the registry, sockets,
    /// NUMA, the drill-down sessions and the extent job.
    pub fn start(
        runner: Arc<dyn CommandRunner>,
        interval: Duration,
        raw: Option<std::sync::mpsc::SyncSender<RawSample>>,
        extent_source: ExtentSource,
        clock: SessionClock,
    ) -> Collection {
        Collection::start_with(runner, interval, raw, Some(extent_source), clock)
    }

    /// `start`, without the extent job when `extent_source` is `None` (`ifxtop serve`: no
    /// metric needs the map, and `oncheck -pe` is costly on a large instance). The extent
    /// channel is then closed from the start.
    pub(crate) fn start_with(
        runner: Arc<dyn CommandRunner>,
        interval: Duration,
        raw: Option<std::sync::mpsc::SyncSender<RawSample>>,
        extent_source: Option<ExtentSource>,
        clock: SessionClock,
    ) -> Collection {
        let (upd_tx, updates) = mpsc::channel::<Update>(4096);
        let (interval_tx, interval_rx) = watch::channel(interval);
        let ctx = Ctx::new(
            runner,
            clock,
            Sinks {
                updates: upd_tx,
                raw,
            },
            interval_rx,
        );
        // Every polled onstat source and the replication commands: one `onstat -i` a tick.
        let (grouped, alone): (Vec<Source>, Vec<Source>) = Source::polled()
            .into_iter()
            .chain(Source::replication())
            .partition(|s| matches!(s.def().run, crate::source::Run::Onstat(_)));
        let mut tasks = spawn_polling(&ctx, alone);
        tasks.push(group::spawn(&ctx, grouped));
        let (focus, focus_rx) = watch::channel::<Focus>(Focus::default());
        tasks.push(spawn_focus(&ctx, focus_rx));
        tasks.push(spawn_sockets(&ctx));
        tasks.push(spawn_numa(&ctx));
        tasks.push(devices::spawn(&ctx));
        let demand = ctx.demand.clone();
        let (rebuild, rebuild_rx) = mpsc::channel::<()>(2);
        let (ext_tx, extents) = mpsc::channel::<ExtentStatus>(16);
        match extent_source {
            Some(from) => tasks.push(tokio::spawn(extents::job(ctx, from, rebuild_rx, ext_tx))),
            None => drop((rebuild_rx, ext_tx)),
        }
        Collection {
            clock,
            interval: interval_tx,
            focus,
            rebuild,
            updates,
            extents,
            demand,
            tasks,
        }
    }

    /// A collection of `tasks` that are not collectors (a viewer's feed: `follow.rs`).
    pub(crate) fn from_parts(
        clock: SessionClock,
        interval: watch::Sender<Duration>,
        focus: watch::Sender<Focus>,
        rebuild: mpsc::Sender<()>,
        updates: mpsc::Receiver<Update>,
        extents: mpsc::Receiver<ExtentStatus>,
        tasks: Vec<JoinHandle<()>>,
    ) -> Collection {
        Collection {
            clock,
            interval,
            focus,
            rebuild,
            updates,
            extents,
            demand: Arc::default(),
            tasks,
        }
    }

    /// The next update from any collector (`None` once they have all stopped).
    pub async fn next_update(&mut self) -> Option<Update> {
        self.updates.recv().await
    }

    /// Stops every collector now (also done on drop).
    pub(crate) fn stop(&mut self) {
        for t in self.tasks.drain(..) {
            t.abort();
        }
    }
}

impl Drop for Collection {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::Memos;
    use crate::demo::DemoInstance;
    use crate::source::Source;
    use std::time::Duration;

    const MEMOISED: [Source; 7] = [
        Source::OnstatU,
        Source::OnstatGAth,
        Source::OnstatGCon,
        Source::OnstatK,
        Source::OnstatXTxn,
        Source::ProcNetTcp,
        Source::ProcNetTcp6,
    ];

    /// Each memoised source's answers second after second, parsed through the memo, then
    /// alone: the same records (or errors). Returns how many rows the memos held keys for.
    fn same_as_alone(demo: &DemoInstance, seconds: impl Iterator<Item = u64>) -> usize {
        let memos = Memos::default();
        let mut rows = 0;
        for s in seconds {
            let t = Duration::from_secs(s);
            for source in MEMOISED {
                assert!(source.memoised());
                let Ok(out) = demo.respond(&source.request(), t) else {
                    continue;
                };
                let with = memos.parse_text(&source, out.exit, &out.stdout, &out.stderr);
                let alone = source.parse_ref(&out);
                match (&with, &alone) {
                    (Ok(w), Ok(a)) => assert!(
                        w.to_json() == a.to_json(),
                        "{} at {s} s: the memo's record differs",
                        source.label()
                    ),
                    (w, a) => assert_eq!(
                        w.as_ref().err().map(ToString::to_string),
                        a.as_ref().err().map(ToString::to_string),
                        "{} at {s} s",
                        source.label()
                    ),
                }
                rows += memos.remembered(&source);
            }
        }
        rows
    }

    /// The demo's every seed, tidy and messy, at 300 sessions over its whole timeline (every
    /// incident, sessions coming and going, sids used again), and at 5,000 over stretches of
    /// it (a seek between them: the memo is of a second long past).
    #[test]
    fn memo_parses_are_the_plain_parses_over_demo_seconds() {
        for (seed, messy, small) in DemoInstance::seeds_tidy_and_messy(300) {
            let rows = same_as_alone(&small, 0..crate::demo::timeline::CYCLE);
            assert!(rows > 0, "seed {seed} messy {messy}");
        }
        for seed in 1..=3 {
            let big = DemoInstance::new(seed).with_sessions(5_000);
            let stretches = [0..12, 150..162, 300..312, 455..467, 600..612, 100..104];
            assert!(same_as_alone(&big, stretches.into_iter().flatten()) > 0);
        }
    }
}
