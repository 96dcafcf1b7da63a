//! The simulated Informix instance behind `--demo`: a 2-socket Linux host running Informix 12.10
//! with a few hundred client sessions, printing real onstat/oncheck/netstat formats and the
//! kernel's /proc and /sys files, and playing the seeds' incidents on a repeating timeline
//! (`timeline::TIMELINE`).
//!
//! Everything is a pure function of (seed, sessions, request, t): `respond` can be asked about
//! any moment in any order, which is how `ifxtop snapshot --demo --at T` and the tests use it.

#[cfg(test)]
mod cached;
mod checkpoints;
mod cpu;
mod disk;
mod grouped;
mod ha;
mod instance;
mod logs;
mod longtx;
#[cfg(test)]
mod mess;
mod moment;
mod noise;
mod oncheck;
mod onstat;
mod os;
mod profile;
mod schedule;
pub mod schema;
mod segments;
mod skew;
mod text;
pub mod timeline;
pub mod truth;
mod vitals;
mod worlds;

use crate::error::SourceError;
use crate::source::{BoxFuture, CommandRunner, Output, Request};
use instance::Population;
use moment::World;
use profile::Counters;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use worlds::Worlds;

pub(crate) use instance::DEFAULT_SESSIONS;

/// The demo server's clock at demo time 0 (a fixed date, so what the demo shows, exports and
/// records at a demo time is the same on every run).
pub const EPOCH: time::OffsetDateTime = time::macros::datetime!(2026-11-22 13:30:00 UTC);

/// The demo server's host name.
pub const HOST: &str = "db01-demo";

/// The port the demo's Informix listens on.
pub const LISTENER_PORT: u16 = 9088;

/// The demo instance: a population and its counters built once, then asked about any moment.
#[derive(Debug, Clone)]
pub struct DemoInstance {
    pop: Population,
    counters: Arc<Counters>,
    /// The client threads' CPU seconds so far (`cpu.rs`): shared by the clones.
    cpu: Arc<std::sync::Mutex<cpu::Ledger>>,
    /// The size of the last answer to each onstat option (`u`, `g con` in an `onstat -i`;
    /// `-u -X -k` for a call of its own), to size the next answer at once.
    answer_sizes: Arc<std::sync::Mutex<AnswerSizes>>,
    /// The last few seconds of the instance, shared by the outputs of those seconds: shared by
    /// the clones too (the same population).
    worlds: Arc<Worlds>,
}

impl DemoInstance {
    /// An instance of `DEFAULT_SESSIONS` client sessions.
    pub fn new(seed: u64) -> Self {
        DemoInstance::build(seed, DEFAULT_SESSIONS, false)
    }

    /// The same instance as untidy as a production server: sessions connect and disconnect
    /// (their sids and lock slots given out again), the parts of one `onstat` call are printed
    /// milliseconds apart (now and then across a second of the server's clock), idle clients
    /// show their last reply in the Send-Q for a moment. What the oracle (`tests/truth/`) runs
    /// on; the tidy instance keeps the figures of the tests written against it.
    pub fn messy(self) -> Self {
        DemoInstance::build(self.pop.seed, self.pop.sessions.len(), true)
    }

    /// The instances the tests walk: seeds 1 to 3 of `sessions` sessions, each tidy then messy,
    /// with the seed and whether it is messy (to name a failure).
    #[cfg(test)]
    pub(crate) fn seeds_tidy_and_messy(
        sessions: usize,
    ) -> impl Iterator<Item = (u64, bool, DemoInstance)> {
        (1..=3).flat_map(move |seed| {
            [false, true].map(|messy| (seed, messy, DemoInstance::build(seed, sessions, messy)))
        })
    }

    fn build(seed: u64, n: usize, messy: bool) -> Self {
        let pop = Population::new(seed, n, messy);
        let counters = Arc::new(Counters::new(seed, pop.sessions.len()));
        DemoInstance {
            pop,
            counters,
            cpu: Arc::default(),
            answer_sizes: Arc::default(),
            worlds: Arc::new(Worlds::new(worlds::KEPT)),
        }
    }

    /// The same instance computing the instance afresh for every output, as it did before it
    /// kept the last seconds': the same outputs, at the old cost. For the test that they are
    /// the same and the bench that compares the costs.
    pub fn without_world_cache(mut self) -> Self {
        self.worlds = Arc::new(Worlds::new(0));
        self
    }

    /// How many times the instance at a second was computed so far (the others were shared).
    pub fn worlds_computed(&self) -> u64 {
        self.worlds.computed()
    }

    /// The instance at second `t`.
    fn world(&self, t: u64) -> World<'_> {
        self.worlds.at(&self.pop, &self.counters, t)
    }

    /// The same seed with `n` client sessions (clamped to 1..=`MAX_SESSIONS`).
    pub fn with_sessions(self, n: usize) -> Self {
        DemoInstance::build(self.pop.seed, n, self.pop.messy)
    }

    pub fn sessions(&self) -> usize {
        self.pop.sessions.len()
    }

    /// The ids of the client sessions connected all along, in order (the short-lived ones come
    /// and go: `sids_at`).
    pub fn sids(&self) -> Vec<u64> {
        self.pop.steady_sids()
    }

    /// The ids of the client sessions connected at second `t`, in slot order.
    pub fn sids_at(&self, t: u64) -> Vec<u64> {
        (0..self.pop.sessions.len())
            .map(|i| self.pop.tenant(i, t))
            .filter(|tn| tn.present)
            .map(|tn| tn.sid)
            .collect()
    }

    /// The server's second at the runner's time `t`: the messy instance's seconds begin a
    /// little after the runner's (`skew.rs`).
    fn second_of(&self, t: Duration) -> u64 {
        if self.pop.messy {
            skew::second_of(t)
        } else {
            t.as_secs()
        }
    }

    /// One call of `parts` parts started at `t`: the messy instance prints them apart, the
    /// tidy one all at `t`.
    fn call(&self, t: Duration, parts: usize) -> skew::Call {
        skew::Call::new(self.pop.seed, t, parts, self.pop.messy)
    }

    /// Pure and deterministic: the same (seed, sessions, request, t) gives the same output;
    /// but for `onstat -g cpu`'s CPU seconds, which count from the first moment asked
    /// (`cpu.rs`).
    pub fn respond(&self, request: &Request, t: Duration) -> Result<Output, SourceError> {
        let secs = self.second_of(t);
        let world = || self.world(secs);
        let onstat = |text: String| Output {
            exit: Some(onstat::ONLINE),
            stdout: text,
            stderr: String::new(),
        };
        match request {
            Request::Command(argv) => {
                let args: Vec<&str> = argv.iter().map(String::as_str).collect();
                match args.as_slice() {
                    ["onstat", options @ ..] => {
                        let key = options.join(" ");
                        let mut o = String::with_capacity(
                            lock(&self.answer_sizes).room_for(&[key.as_str()]),
                        );
                        self.onstat_into(&args, t, &mut o, &CallWorlds::new(self))
                            .map(|()| {
                                lock(&self.answer_sizes).keep(&key, o.len());
                                onstat(o)
                            })
                            .ok_or_else(|| not_found(request))
                    }
                    ["stat", "-L", "-c", format, "--", paths @ ..]
                        if *format == crate::parsers::chunk_devices::STAT_FORMAT =>
                    {
                        Ok(disk::stat(paths))
                    }
                    ["oncheck", "-pe"] => Ok(Output::ok(oncheck::oncheck_pe())),
                    ["netstat", "-an"] => Ok(Output::ok(os::netstat_an(&world()))),
                    _ => Err(not_found(request)),
                }
            }
            Request::CommandInput { argv, stdin } => {
                let args: Vec<&str> = argv.iter().map(String::as_str).collect();
                match args.as_slice() {
                    ["dbaccess", "sysmaster", "-"] => {
                        if stdin.trim() == crate::parsers::systabnames::QUERY.trim() {
                            Ok(oncheck::systabnames())
                        } else {
                            Ok(oncheck::dbaccess_error())
                        }
                    }
                    // Interactive mode: one option a line, its answer after an `onstat>`
                    // prompt, and a last prompt before end of input (the manual's
                    // description; `parsers::interactive`).
                    ["onstat", "-i"] => Ok(onstat(self.interactive(stdin, t))),
                    _ => Err(not_found(request)),
                }
            }
            Request::ReadFile(path) => self
                .read_file(path, secs)
                .map(Output::ok)
                .ok_or_else(|| no_such_file(path)),
            Request::ListDir(path) if path == Path::new("/proc") => Ok(Output::ok(os::proc_list())),
            Request::ListDir(path) if path == Path::new("/sys/devices/system/node") => Ok(
                Output::ok("node0\nnode1\npossible\nonline\nhas_cpu\nhas_normal_memory\n"),
            ),
            Request::ListDir(path) => path
                .to_str()
                .and_then(disk::sys_dir)
                .map(Output::ok)
                .ok_or_else(|| no_such_file(path)),
        }
    }

    /// What `onstat ARGS...` prints at `t`, written onto `o` (`None`, `o` untouched, for an
    /// option the demo does not print): the tick's `onstat -i` writes each option's answer
    /// straight after its prompt.
    fn onstat_into(
        &self,
        args: &[&str],
        t: Duration,
        o: &mut String,
        worlds: &CallWorlds<'_>,
    ) -> Option<()> {
        let secs = self.second_of(t);
        let world = || worlds.at(secs);
        match args {
            // `onstat -u`, and several options in one call: `onstat -u -X -k -p`.
            ["onstat", options @ ..]
                if !options.is_empty() && options.iter().all(|o| grouped::groupable(o)) =>
            {
                // Each option's part is printed a little after the one before.
                let mut call = self.call(t, options.len());
                return grouped::onstat_options(
                    &mut call,
                    |at| worlds.at(self.second_of(at)),
                    options,
                    o,
                );
            }
            ["onstat", "-g", "con"] => onstat::onstat_g_con(&world(), o),
            ["onstat", "-g", "ath"] => onstat::onstat_g_ath(&world(), o),
            ["onstat", "-g", "ntt"] => onstat::onstat_g_ntt(&world(), o),
            ["onstat", "-g", "ses"] => onstat::onstat_g_ses_list(&world(), o),
            _ => o.push_str(&self.onstat_text(args, &world())?),
        }
        Some(())
    }

    /// What the options `onstat_into` does not write in place print in `world`.
    fn onstat_text(&self, args: &[&str], world: &World<'_>) -> Option<String> {
        Some(match args {
            // `onstat -`: the banner alone (and the `Blocked:` line under it).
            ["onstat", "-"] => onstat::banner(world),
            ["onstat", "-g", "glo"] => vitals::glo(world),
            ["onstat", "-g", "rea"] => vitals::rea(world),
            ["onstat", "-g", "lmx"] => vitals::mutexes(world, false),
            ["onstat", "-g", "wmx"] => vitals::mutexes(world, true),
            ["onstat", "-g", "tpf"] => vitals::tpf(world),
            ["onstat", "-g", "ckp"] => vitals::ckp(world),
            ["onstat", "-g", "seg"] => vitals::seg(world),
            ["onstat", "-g", "cpu"] => cpu::onstat_g_cpu(world, &self.cpu, &self.worlds),
            ["onstat", "-g", "ses", sid] => onstat::onstat_g_ses(world, sid.parse().ok()?),
            ["onstat", "-g", "sql", sid] => onstat::onstat_g_sql(world, sid.parse().ok()?),
            ["onstat", "-g", "pqs", sid] => onstat::onstat_g_pqs(world, sid.parse().ok()?),
            // Chunk I/O and replication (disk.rs, ha.rs). `-D` answers alone here; in a
            // grouped call it is cut out like the others.
            ["onstat", "-D"] => disk::onstat_d_upper(world),
            ["onstat", "-g", "iof"] => disk::onstat_g_iof(world),
            ["onstat", "-g", "cluster"] => ha::onstat_g_cluster(world),
            ["onstat", "-g", "rss", "verbose"] => ha::onstat_g_rss_verbose(world),
            _ => return None,
        })
    }

    /// `onstat -i` fed `stdin`: each option as `onstat -OPTION` answers it alone (its banner
    /// first), after a prompt. An option the demo does not print gets onstat's complaint.
    fn interactive(&self, stdin: &str, t: Duration) -> String {
        let lines: Vec<&str> = stdin
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        // Sized once, from the last answers to the same options: grown by doubling, a tick's
        // answer of 5,000 sessions took up to twice its few megabytes (the demo's own cost,
        // inside ifxtop's process), and copied them on the way.
        let mut out = String::with_capacity(lock(&self.answer_sizes).room_for(&lines));
        let mut printed = Vec::with_capacity(lines.len());
        // Each option is printed a little after the one before (`skew.rs`).
        let mut call = self.call(t, lines.len());
        let worlds = CallWorlds::new(self);
        for line in lines {
            let part = out.len();
            out.push_str(crate::parsers::interactive::PROMPT);
            out.push(' ');
            let mut argv = vec!["onstat".to_string()];
            for (k, w) in line.split_whitespace().enumerate() {
                if k == 0 && !w.starts_with('-') {
                    argv.push(format!("-{w}"));
                } else {
                    argv.push(w.to_string());
                }
            }
            // Never a reset or a repeat, as ifxtop never sends one.
            let refused = crate::parsers::interactive::option_line(
                &argv[1..].iter().map(String::as_str).collect::<Vec<_>>(),
            )
            .is_none();
            let written = if refused {
                // Asked all the same, as before (`-g cpu`'s ledger counts what was asked).
                let _ = self.respond(&Request::Command(argv), call.part_at());
                None
            } else {
                let args: Vec<&str> = argv.iter().map(String::as_str).collect();
                self.onstat_into(&args, call.part_at(), &mut out, &worlds)
            };
            if written.is_none() {
                out.push_str("onstat: invalid option: ");
                out.push_str(line);
                out.push('\n');
            }
            call.printed(out.len() - part);
            printed.push((line, out.len() - part));
        }
        out.push_str(crate::parsers::interactive::PROMPT);
        out.push(' ');
        let mut sizes = lock(&self.answer_sizes);
        for (line, size) in printed {
            sizes.keep(line, size);
        }
        out
    }

    fn read_file(&self, path: &Path, secs: u64) -> Option<String> {
        let p = path.to_str()?;
        match p {
            "/proc/net/tcp" => return Some(os::proc_net_tcp(&self.world(secs))),
            "/proc/net/tcp6" => return Some(os::proc_net_tcp6(&self.world(secs))),
            "/proc/sys/vm/zone_reclaim_mode" => return Some(os::ZONE_RECLAIM_MODE.into()),
            "/proc/vmstat" => return Some(os::vmstat(&self.pop, &timeline::now(secs))),
            "/sys/devices/system/node/online" => return Some(os::NODES_ONLINE.into()),
            "/proc/diskstats" => return Some(disk::proc_diskstats(secs)),
            _ => {}
        }
        if p.starts_with("/sys/dev/block/") || p.starts_with("/sys/class/block/") {
            return disk::sys_file(p);
        }
        if let Some(rest) = p.strip_prefix("/sys/devices/system/node/node") {
            let (n, file) = rest.split_once('/')?;
            let n: u32 = n.parse().ok()?;
            return match file {
                "meminfo" => os::node_meminfo(&self.pop, &timeline::now(secs), n),
                "cpulist" => os::node_cpulist(n),
                "distance" => os::node_distance(n),
                _ => None,
            };
        }
        let (pid, file) = p.strip_prefix("/proc/")?.split_once('/')?;
        let pid: u32 = pid.parse().ok()?;
        match file {
            "comm" => os::comm(pid),
            "numa_maps" => os::numa_maps(&self.pop, pid, secs),
            _ => None,
        }
    }
}

/// The size of the last answer to each onstat option. The options recur (a tick's `onstat -i`
/// asks those due then): each is a key once, updated in place; any other (a session's
/// `g ses 812`) is one more entry, bounded.
#[derive(Debug, Default)]
struct AnswerSizes(std::collections::HashMap<String, usize>);

impl AnswerSizes {
    /// Options kept at most.
    const KEPT: usize = 64;

    /// Room for the answers to `options`: their last sizes and a sixteenth more (a second's
    /// answer grows a little on the last), so the writers never grow it on the way.
    fn room_for(&self, options: &[&str]) -> usize {
        let last: usize = options
            .iter()
            .map(|o| self.0.get(*o).copied().unwrap_or(0))
            .sum();
        last + last / 16
    }

    fn keep(&mut self, option: &str, size: usize) {
        if let Some(kept) = self.0.get_mut(option) {
            *kept = size;
        } else if self.0.len() < Self::KEPT {
            self.0.insert(option.to_string(), size);
        }
    }
}

/// The worlds one call prints from, one a second it reaches (a call's parts span a second or
/// two), so its printers share each world's threads; gone with the call (nothing of them kept
/// between calls).
struct CallWorlds<'a> {
    demo: &'a DemoInstance,
    seen: std::cell::RefCell<Vec<(u64, std::rc::Rc<World<'a>>)>>,
}

impl<'a> CallWorlds<'a> {
    fn new(demo: &'a DemoInstance) -> Self {
        CallWorlds {
            demo,
            seen: std::cell::RefCell::new(Vec::with_capacity(2)),
        }
    }

    /// The instance at second `secs`, the one this call saw before if it did.
    fn at(&self, secs: u64) -> std::rc::Rc<World<'a>> {
        let mut seen = self.seen.borrow_mut();
        if let Some((_, w)) = seen.iter().find(|(s, _)| *s == secs) {
            return std::rc::Rc::clone(w);
        }
        let w = std::rc::Rc::new(self.demo.world(secs));
        // The seconds of a call follow each other: the oldest is not asked again.
        if seen.len() >= 2 {
            seen.remove(0);
        }
        seen.push((secs, std::rc::Rc::clone(&w)));
        w
    }
}

fn not_found(request: &Request) -> SourceError {
    SourceError::NotFound {
        program: request.program(),
    }
}

fn no_such_file(path: &Path) -> SourceError {
    SourceError::Io {
        path: path.display().to_string(),
        reason: "No such file or directory (os error 2)".into(),
    }
}

/// The line under the tabs: `t=143s Send-Q filling: clients not reading (FET_BUF_SIZE)`.
pub fn describe_phase(t: Duration) -> String {
    timeline::describe(t)
}

/// The demo as a command runner, its clock starting when it is created.
pub struct DemoRunner {
    instance: DemoInstance,
    start: Instant,
    /// Where on the timeline the clock starts (`--demo-at`).
    offset: Duration,
}

impl DemoRunner {
    pub fn wall(seed: u64, sessions: usize) -> Self {
        DemoRunner::new(DemoInstance::new(seed).with_sessions(sessions))
    }

    /// The demo as a runner, its clock (tokio's) starting now.
    pub fn new(instance: DemoInstance) -> Self {
        DemoRunner {
            instance,
            start: Instant::now(),
            offset: Duration::ZERO,
        }
    }

    /// Starts the timeline at `at` instead of 0 (straight to an incident).
    pub fn starting_at(mut self, at: Duration) -> Self {
        self.offset = at;
        self
    }

    fn now(&self) -> Duration {
        self.offset + self.start.elapsed()
    }
}

impl CommandRunner for DemoRunner {
    fn run<'a>(
        &'a self,
        request: &'a Request,
        _timeout: Duration,
    ) -> BoxFuture<'a, Result<Output, SourceError>> {
        let t = self.now();
        Box::pin(
            async move { crate::source::cost::simulating(|| self.instance.respond(request, t)) },
        )
    }

    fn clock(&self) -> Option<Duration> {
        Some(self.now())
    }
}

/// A lock of the demo's shared state; a thread that panicked holding it left nothing half
/// done that matters to a simulation.
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
