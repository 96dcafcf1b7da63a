//! What ifxtop costs the server it watches: its own CPU time, its children's (every onstat,
//! cat or ssh it started and reaped), how many processes it started, and per call the CPU time
//! of the process that answered it.
//!
//! The kernel adds a child's CPU time to `getrusage(RUSAGE_CHILDREN)` when the child is reaped.
//! The local runner reads it right after each reap ([`reaped`]); the growth since the reap
//! before is that child's time (two children reaped at the same instant may swap their
//! shares; their sum is exact). The collector that asked for the run finds it in the slot
//! [`measured`] gave the run's future (a task-local: the runner's future runs in the
//! collector's task). The demo and a replay start no process: their calls have no CPU time,
//! and the screens say so rather than show zeros. The demo's simulation runs inside ifxtop:
//! the CPU time its answers take (the thread's own, around each answer: [`simulating`]) is
//! counted apart, so what ifxtop itself costs can be said without it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

static PROCESSES: AtomicU64 = AtomicU64::new(0);
/// The CPU time the demo's simulation has taken, nanoseconds.
static SIMULATION_NS: AtomicU64 = AtomicU64::new(0);
static LAST_CHILDREN: Mutex<Duration> = Mutex::new(Duration::ZERO);

tokio::task_local! {
    static CALL: Arc<AtomicU64>;
}

/// No CPU time was reported for a call.
const NONE: u64 = u64::MAX;

fn usage(who: nix::sys::resource::UsageWho) -> Option<Duration> {
    let u = nix::sys::resource::getrusage(who).ok()?;
    let d = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(u64::try_from(t.tv_sec()).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec()).unwrap_or(0))
    };
    Some(d(u.user_time()) + d(u.system_time()))
}

/// ifxtop's own CPU time (user and system) since it started.
pub fn self_cpu() -> Option<Duration> {
    usage(nix::sys::resource::UsageWho::RUSAGE_SELF)
}

/// The CPU time of every child ifxtop started and reaped.
pub fn children_cpu() -> Option<Duration> {
    usage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
}

/// The calling thread's CPU time (user and system) since it started.
fn thread_cpu() -> Option<Duration> {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID).ok()?;
    Some(
        Duration::from_secs(u64::try_from(t.tv_sec()).ok()?)
            + Duration::from_nanos(u64::try_from(t.tv_nsec()).ok()?),
    )
}

/// Runs `f`, the demo's simulation answering a call, and counts the CPU time it takes (the
/// thread's own: nothing else runs on it meanwhile) as the simulation's.
pub fn simulating<T>(f: impl FnOnce() -> T) -> T {
    let (out, took) = on_this_thread(f);
    if let Some(d) = took {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        SIMULATION_NS.fetch_add(ns, Ordering::Relaxed);
    }
    out
}

/// Runs `f`, with the CPU time the calling thread spent in it.
fn on_this_thread<T>(f: impl FnOnce() -> T) -> (T, Option<Duration>) {
    let before = thread_cpu();
    let out = f();
    let took = before.zip(thread_cpu()).map(|(a, b)| b.saturating_sub(a));
    (out, took)
}

/// The CPU time the demo's simulation has taken in this process (zero without a demo).
pub fn simulation_cpu() -> Duration {
    Duration::from_nanos(SIMULATION_NS.load(Ordering::Relaxed))
}

/// What the whole process has cost so far, read at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProcessCost {
    /// The whole process's CPU time, the demo's simulation included.
    pub self_cpu: Duration,
    /// Of that, the demo's simulation's.
    pub simulation_cpu: Duration,
    pub children_cpu: Duration,
    pub processes: u64,
}

/// The process's cost now (`None` where rusage is not available).
pub fn now() -> Option<ProcessCost> {
    Some(ProcessCost {
        self_cpu: self_cpu()?,
        simulation_cpu: simulation_cpu(),
        children_cpu: children_cpu()?,
        processes: processes(),
    })
}

/// How many processes the local runner started.
pub fn processes() -> u64 {
    PROCESSES.load(Ordering::Relaxed)
}

/// A process was started.
pub(crate) fn started() {
    PROCESSES.fetch_add(1, Ordering::Relaxed);
}

/// A child was just reaped: its CPU time (the growth of the children's total since the last
/// reap) goes to the call being measured, if any.
pub(crate) fn reaped() {
    let Some(total) = children_cpu() else {
        return;
    };
    let grew = {
        let mut last = LAST_CHILDREN
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let grew = total.saturating_sub(*last);
        *last = (*last).max(total);
        grew
    };
    let _ = CALL.try_with(|slot| {
        let ns = u64::try_from(grew.as_nanos()).unwrap_or(NONE - 1);
        let _ = slot.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
            Some(if v == NONE { ns } else { v.saturating_add(ns) })
        });
    });
}

/// Runs `f`, returning with its output the CPU time of the processes it reaped (`None` when it
/// reaped none: the demo, a replay, a file read).
pub(crate) async fn measured<F: std::future::Future>(f: F) -> (F::Output, Option<Duration>) {
    let slot = Arc::new(AtomicU64::new(NONE));
    let out = CALL.scope(slot.clone(), f).await;
    let v = slot.load(Ordering::Acquire);
    (out, (v != NONE).then(|| Duration::from_nanos(v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_reaped_child_is_charged_to_the_call_that_ran_it() {
        let (_, none) = measured(async {}).await;
        assert_eq!(none, None);
        let before = processes();
        let (status, cpu) = measured(async {
            started();
            // A child that burns some CPU.
            let s = tokio::process::Command::new("sh")
                .args(["-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"])
                .status()
                .await;
            reaped();
            s
        })
        .await;
        assert!(status.is_ok_and(|s| s.success()));
        assert!(processes() > before);
        let cpu = cpu.expect("a child was reaped");
        assert!(cpu > Duration::ZERO, "{cpu:?}");
        assert!(children_cpu().is_some_and(|c| c >= cpu));
        assert!(self_cpu().is_some_and(|c| c > Duration::ZERO));
    }

    /// What the simulation takes is counted: a busy closure's CPU time, and not the time it
    /// sleeps. (Other tests may simulate at the same time: the total only grows by theirs.)
    #[test]
    fn the_simulations_cpu_is_counted_apart() {
        let spin = || {
            let start = std::time::Instant::now();
            let mut x = 0u64;
            while start.elapsed() < Duration::from_millis(30) {
                x = std::hint::black_box(x.wrapping_add(1));
            }
            x
        };
        let before = simulation_cpu();
        assert!(simulating(spin) > 0);
        let busy = simulation_cpu() - before;
        assert!(busy >= Duration::from_millis(10), "{busy:?}");
        let ((), slept) = on_this_thread(|| std::thread::sleep(Duration::from_millis(50)));
        let slept = slept.expect("a thread clock");
        assert!(slept < Duration::from_millis(25), "{slept:?}");
        let (_, spun) = on_this_thread(spin);
        assert!(spun.expect("a thread clock") >= Duration::from_millis(10));
    }
}
