//! The health part: each source's age, errors and cost, and what ifxtop costs the server; the
//! findings read from a late source marked as of its moment. Built every time (ages run on
//! with the clock).

use crate::source::Source;
use crate::store::Store;
use serde::Serialize;
use std::time::Duration;

/// A period in seconds, or `null` for none: a one-shot or on-demand source's period is
/// `Duration::MAX` (1.8e19 s), which says "never again", not a number to show or compute with.
fn period_or_null<S: serde::Serializer>(period_s: &f64, s: S) -> Result<S::Ok, S::Error> {
    // A year: no polled source has a period anywhere near it.
    if period_s.is_finite() && *period_s < 365.0 * 86_400.0 {
        s.serialize_f64(*period_s)
    } else {
        s.serialize_none()
    }
}

/// Health of one source, for the header and the status line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourceStatus {
    pub source: String,
    /// Its short name in the header (`-u`, `con`), from the registry.
    #[serde(skip)]
    pub(crate) short: &'static str,
    pub(crate) age_s: Option<f64>,
    /// How often it is collected at an interval of 1 s: data older than a few periods is stale.
    /// A source collected once or on demand has no period (`Duration::MAX`): `null` in JSON.
    #[serde(serialize_with = "period_or_null")]
    pub(crate) period_s: f64,
    pub error: Option<String>,
    /// What kind of failure `error` is.
    pub(crate) failure: Option<crate::error::Failure>,
    pub(crate) took_ms: u64,
    pub(crate) runs: u64,
    pub(crate) failures: u64,
    /// How it was collected: in one `onstat -i` with other options, or one call per option
    /// and why (an onstat without interactive mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) via: Option<String>,
    /// Milliseconds of CPU a call (its share of a call shared with other sources), when a
    /// process ran for it here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cpu_ms_per_call: Option<f64>,
    /// Runs a minute, once it has been collected for a full minute and run twice (a rate
    /// over less says nothing: an `oncheck -pe` run once in 25 s is not 2.4 calls a minute).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) calls_per_min: Option<f64>,

    /// Bytes of output a call (its part of a call shared with other sources), once one
    /// answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) bytes_per_call: Option<f64>,
    /// Read at the moment of the latest `onstat -u` but printed a second later by the server's
    /// clock (the call stalled between the two): what changes within a second (the holders it
    /// names, its waits' ages) is not joined at this moment.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub late: bool,
}

/// What ifxtop costs the server it runs on (`source::cost`): its own CPU, and the processes
/// and file reads it asks of the server, as rates once there is a full minute to count over.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Cost {
    /// ifxtop's own CPU time since it started, and its share of one core since the first
    /// reading (the demo's simulation runs inside ifxtop: it is counted in, and said apart
    /// below).
    pub self_cpu_s: Option<f64>,
    pub self_core_share: Option<f64>,
    /// Of those, the demo's simulation's (its answers to the calls: what a server's onstat
    /// would do); none without a demo.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simulation_cpu_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simulation_core_share: Option<f64>,
    /// Its children's (onstat, cat, ssh) CPU time, and their share of one core.
    pub children_cpu_s: Option<f64>,
    pub children_core_share: Option<f64>,
    /// `measured`, or why not (the demo and a replay start no process).
    pub children: String,
    /// The seconds the counts below are over (since the first source ran).
    pub over_s: f64,
    /// Processes started: onstat (one `onstat -i` for several options is one), other commands
    /// (oncheck, dbaccess, ...); and files read (`/proc`, `/sys`).
    pub onstat_processes: f64,
    pub other_processes: f64,
    pub file_reads: u64,
    /// The same a minute, once `over_s` is a full minute (none before).
    pub onstat_processes_per_min: Option<f64>,
    pub other_processes_per_min: Option<f64>,
    pub file_reads_per_min: Option<f64>,
}

/// The findings read from a source older than its period (it failed or stopped answering),
/// marked `as of` that source's moment: a replica's `blocked` from a `-g rss` read minutes ago
/// is not said to be so now.
pub(crate) fn mark_late(
    findings: &mut [crate::model::findings::Finding],
    sources: &[SourceStatus],
) {
    for f in findings.iter_mut() {
        let late = f
            .kind
            .sources()
            .iter()
            .filter_map(|src| {
                let label = src.label();
                let st = sources.iter().find(|s| s.source == label)?;
                let age = st.age_s?;
                // Its period, or the spacing its runs have had (a slower interval scales it).
                let every = st
                    .calls_per_min
                    .filter(|c| *c > 0.0)
                    .map_or(st.period_s, |c| st.period_s.max(60.0 / c));
                (every.is_finite() && age > every + crate::model::findings::LATE_AFTER_S)
                    .then_some((age, label))
            })
            .max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((age, label)) = late {
            f.mark_as_of(age, &label);
        }
    }
}

/// Each source's health, age and cost, for the header and the status line; the per-node NUMA
/// sources are left out.
pub(crate) fn source_statuses(store: &Store, now: Duration) -> Vec<SourceStatus> {
    let mut out: Vec<SourceStatus> = Vec::new();
    // The statements as one source, where they sort: the sources around them walked, not the
    // hundreds of statements read in turn.
    let (before, after) = store.sources_around(Source::OnstatGSql);
    let add = |out: &mut Vec<SourceStatus>, (s, st): (&Source, &crate::store::SourceState)| {
        if !matches!(
            s,
            Source::NodeMeminfo(_) | Source::NodeCpulist(_) | Source::NumaMaps(_)
        ) {
            let mut status = source_status(s, st, now);
            status.late = store.late_for_moment(s);
            out.push(status);
        }
    };
    for source in before {
        add(&mut out, source);
    }
    out.extend(statements_status(store, now));
    for source in after {
        add(&mut out, source);
    }
    out
}

/// The statements read (`onstat -g sql <sid>`, those of the active sessions in turn, hundreds
/// of sessions on a busy server) as one source: the newest read's age, error and how it ran,
/// the runs, calls and bytes of them all.
fn statements_status(store: &Store, now: Duration) -> Option<SourceStatus> {
    // Summed over them all, and only the newest read described (each described in full was
    // a label, an error and a note copied for every session read, every second).
    let mut newest: Option<(Source, &crate::store::SourceState)> = None;
    let (mut runs, mut failures) = (0, 0);
    let mut per_min: Option<f64> = None;
    let (mut bytes, mut byte_calls, mut cpu, mut cpu_calls) = (0u64, 0, Duration::ZERO, 0);
    for (sid, st) in store.per_session(Source::OnstatGSql) {
        runs += st.runs;
        failures += st.failures;
        per_min = match (per_min, calls_per_min(st, now)) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        bytes = bytes.saturating_add(st.bytes);
        byte_calls += st.byte_calls;
        cpu += st.cpu;
        cpu_calls += st.cpu_calls;
        let t = st.last_ok.as_ref().map(|(t, _)| *t);
        if newest.is_none_or(|(_, n)| t > n.last_ok.as_ref().map(|(t, _)| *t)) {
            newest = Some((Source::OnstatGSql(sid), st));
        }
    }
    let (s, st) = newest?;
    let mut sum = source_status(&s, st, now);
    sum.runs = runs;
    sum.failures = failures;
    sum.source = "onstat -g sql".to_string();
    sum.calls_per_min = per_min;
    sum.bytes_per_call = (byte_calls > 0).then(|| bytes as f64 / byte_calls as f64);
    sum.cpu_ms_per_call = (cpu_calls > 0).then(|| cpu.as_secs_f64() * 1000.0 / cpu_calls as f64);
    Some(sum)
}

/// How often the source ran a minute, over a minute at least of its runs: the runs after its
/// first instant over the time since it (a source run each second reads 60, not 61 over its
/// first minute).
fn calls_per_min(st: &crate::store::SourceState, now: Duration) -> Option<f64> {
    st.first_t
        .map(|f| now.saturating_sub(f).as_secs_f64())
        .filter(|span| *span >= RATE_OVER_S && st.runs >= 2)
        .map(|span| st.runs.saturating_sub(st.runs_at_first) as f64 * 60.0 / span)
}

fn source_status(s: &Source, st: &crate::store::SourceState, now: Duration) -> SourceStatus {
    SourceStatus {
        source: s.label(),
        short: s.short(),
        age_s: st.age(now).map(|a| a.as_secs_f64()),
        period_s: s.period().as_secs_f64(),
        error: st.failing().map(|e| e.to_string()),
        failure: st.failing().map(|e| e.failure()),
        took_ms: u64::try_from(st.last_took.as_millis()).unwrap_or(u64::MAX),
        runs: st.runs,
        failures: st.failures,
        via: st.note.clone(),
        cpu_ms_per_call: (st.cpu_calls > 0)
            .then(|| st.cpu.as_secs_f64() * 1000.0 / st.cpu_calls as f64),
        calls_per_min: calls_per_min(st, now),
        bytes_per_call: (st.byte_calls > 0).then(|| st.bytes as f64 / st.byte_calls as f64),
        late: false,
    }
}

/// A rate a minute is given over a full minute at least.
const RATE_OVER_S: f64 = 60.0;

/// What ifxtop costs, from the sources' counts and the store's first and latest readings of the
/// process's CPU (`None` before any source ran).
pub(crate) fn cost(store: &Store, sources: &[SourceStatus], now: Duration) -> Option<Cost> {
    use crate::source::CallKind;
    if sources.is_empty() {
        return None;
    }
    // Every source counts here, the per-node NUMA files and the statements read in turn too
    // (hundreds of sources on a busy server, every second), in one walk. The rates count what
    // ran after the collectors' first tick over the time since it began: [onstat processes,
    // other processes, file reads], all of them, then those of the first tick (every source
    // whose first run came before any source ran again: a tick's calls start a little apart,
    // and the next tick begins with a source's second run).
    let mut first: Option<Duration> = None;
    let mut total = [0.0f64; 3];
    let mut at_first = [0.0f64; 3];
    for (s, st) in store.sources() {
        let (kind, n, n_at_first) = match s.call_kind() {
            CallKind::Onstat => (0, st.processes, st.processes_at_first),
            CallKind::Command => (1, st.processes, st.processes_at_first),
            CallKind::FileRead => (2, st.runs as f64, st.runs_at_first as f64),
        };
        total[kind] += n;
        let Some(t) = st.first_t else { continue };
        first = Some(first.map_or(t, |f| f.min(t)));
        if store.first_repeat.is_none_or(|r| t < r) {
            at_first[kind] += n_at_first;
        }
    }
    let [onstat, command, file_reads] = total;
    let over_s = first.map_or(0.0, |f| now.saturating_sub(f).as_secs_f64());
    let per_min = |n: f64, at_first: f64| {
        (over_s >= RATE_OVER_S).then(|| (n - at_first).max(0.0) * 60.0 / over_s)
    };
    // A process ran for a call here (its CPU was read when it was reaped), or processes run
    // here though none has finished yet (a live host whose every command hangs or fails): the
    // children are measured; the demo and a replay start none.
    let children = if sources.iter().any(|s| s.cpu_ms_per_call.is_some()) || store.runs_processes {
        "measured".to_string()
    } else {
        "simulated: the demo or a replay starts no onstat process".to_string()
    };
    let mut cost = Cost {
        children,
        over_s,
        onstat_processes: onstat,
        other_processes: command,
        file_reads: file_reads as u64,
        onstat_processes_per_min: per_min(onstat, at_first[0]),
        other_processes_per_min: per_min(command, at_first[1]),
        file_reads_per_min: per_min(file_reads, at_first[2]),
        ..Cost::default()
    };
    let (first, last) = store.process_cost;
    if let Some((t1, last)) = last {
        cost.self_cpu_s = Some(last.self_cpu.as_secs_f64());
        let simulated = last.simulation_cpu > Duration::ZERO;
        if simulated {
            cost.simulation_cpu_s = Some(last.simulation_cpu.as_secs_f64());
        }
        if cost.children == "measured" {
            cost.children_cpu_s = Some(last.children_cpu.as_secs_f64());
        }
        if let Some((t0, first)) =
            first.filter(|(t0, _)| t1.saturating_sub(*t0) >= Duration::from_secs(10))
        {
            let span = t1.saturating_sub(t0).as_secs_f64();
            let share = |a: Duration, b: Duration| a.saturating_sub(b).as_secs_f64() / span;
            cost.self_core_share = Some(share(last.self_cpu, first.self_cpu));
            if simulated {
                cost.simulation_core_share = Some(share(last.simulation_cpu, first.simulation_cpu));
            }
            if cost.children == "measured" {
                cost.children_core_share = Some(share(last.children_cpu, first.children_cpu));
            }
        }
    }
    Some(cost)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::test_store;

    /// The statements read in turn are one source, listed where they sort among the others
    /// (every other source listed as the store orders them, the NUMA host files left out).
    #[test]
    fn statements_are_one_source_where_they_sort() {
        let demo = crate::demo::DemoInstance::new(1).with_sessions(40);
        let mut store = test_store::new_store();
        let t = 300;
        test_store::feed(&mut store, &demo, test_store::sources_answered(&demo), t);
        let sids: Vec<u64> = demo.sids_at(t).iter().copied().take(5).collect();
        test_store::feed(
            &mut store,
            &demo,
            sids.iter().map(|&s| Source::OnstatGSql(crate::ids::Sid(s))),
            t,
        );
        let mut want: Vec<String> = Vec::new();
        for (s, _) in store.sources() {
            match s {
                Source::NodeMeminfo(_) | Source::NodeCpulist(_) | Source::NumaMaps(_) => {}
                Source::OnstatGSql(_) if want.iter().any(|l| l == "onstat -g sql") => {}
                Source::OnstatGSql(_) => want.push("onstat -g sql".into()),
                _ => want.push(s.label()),
            }
        }
        let got: Vec<String> = source_statuses(&store, Duration::from_secs(t))
            .into_iter()
            .map(|s| s.source)
            .collect();
        assert!(want.len() > 10, "{want:?}");
        assert!(want.iter().any(|l| l == "onstat -g sql"), "{want:?}");
        assert_eq!(got, want);
        let sql = source_statuses(&store, Duration::from_secs(t))
            .into_iter()
            .find(|s| s.source == "onstat -g sql")
            .expect("statements");
        assert_eq!(sql.runs, sids.len() as u64);
    }
}
