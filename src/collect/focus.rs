//! The sessions in focus: a session screen open (drilled into), the sessions a recording or the
//! Activity pane keeps on record (background), and the statements read besides the active
//! ones. Their `onstat -g ses <sid>`, `-g sql <sid>` and `-g pqs <sid>` ride in the tick's one
//! `onstat -i` (group.rs) like every other option, each part with the call's moment: no process
//! of their own (a session screen cost 36 more a minute, a recording's four background sessions
//! 96).
//!
//! When: every session in focus on the joins' period, on the session clock's multiples of it
//! as the other sources; a session newly drilled into at the next call (group.rs starts one at
//! once when the next tick is more than a second away); the options a killed call never
//! reached at the next call. A session whose option hung a call runs alone, as any option that
//! hangs (group.rs).

use crate::ids::Sid;
use crate::source::Source;
use std::time::Duration;

/// The sessions whose `onstat -g ses <sid>` and `onstat -g sql <sid>` are collected (and, for
/// the drilled ones, `onstat -g pqs <sid>`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Focus {
    /// Drilled into by the user: collected at once when one is added, then on the joins' period.
    pub drilled: Vec<Sid>,
    /// Worth having on record (a recording's blockers and long waiters, a report's heads):
    /// collected on the joins' period only, never more often however the set changes.
    pub background: Vec<Sid>,
    /// Sessions whose statements ride in the tick's `onstat -i` besides the active ones the
    /// collectors see in `onstat -u` (demand.rs): those a snapshot knows are active though
    /// their thread waits on a condition (a slow client), the top CPU sessions.
    pub statements: Vec<Sid>,
}

impl Focus {
    /// At most this many background sessions: each adds two options to a call per period.
    pub const MAX_BACKGROUND: usize = 4;

    /// Every session to collect, drilled ones first, each once.
    pub fn sids(&self) -> Vec<Sid> {
        let mut out: Vec<Sid> = Vec::new();
        for s in self.drilled.iter().chain(&self.background) {
            if !out.contains(s) {
                out.push(*s);
            }
        }
        out
    }
}

/// What is asked for session `sid` of `focus`: `onstat -g ses` and `-g sql`, and for a drilled
/// session (its screen is open) `onstat -g pqs`, the operators of the query it runs, where the
/// server has it (`asks`). A background session's plan is not worth the output.
pub(crate) fn focus_sources(
    focus: &Focus,
    sid: Sid,
    asks: impl Fn(&Source) -> bool,
) -> Vec<Source> {
    let mut out = vec![Source::OnstatGSes(sid), Source::OnstatGSql(sid)];
    let plan = Source::OnstatGPqs(sid);
    if focus.drilled.contains(&sid) && asks(&plan) {
        out.push(plan);
    }
    out
}

/// When the sessions in focus are read.
#[derive(Debug, Default)]
pub(crate) struct Schedule {
    focus: Focus,
    /// When every session in focus is read next (`None`: at the next call).
    next_round: Option<Duration>,
    /// Sessions drilled into since the last call: read at the next.
    drilled_now: Vec<Sid>,
    /// Options a killed call never reached: asked again at the next call.
    retry: Vec<Source>,
}

impl Schedule {
    /// Takes the focus a front-end wants; whether a session was newly drilled into.
    pub(crate) fn set(&mut self, focus: &Focus) -> bool {
        if *focus == self.focus {
            return false;
        }
        let new: Vec<Sid> = focus
            .drilled
            .iter()
            .filter(|s| !self.focus.drilled.contains(s))
            .copied()
            .collect();
        // Nothing was in focus: the round starts at the next call, not a period on.
        if self.focus.sids().is_empty() {
            self.next_round = None;
        }
        for s in &new {
            if !self.drilled_now.contains(s) {
                self.drilled_now.push(*s);
            }
        }
        self.focus = focus.clone();
        !new.is_empty()
    }

    /// The options to ask in the call at `now`: every session's once its round is due (then
    /// the next round at `next_round`, the next multiple of the joins' period), else those of
    /// the sessions just drilled into; and those a killed call never reached, of sessions still
    /// in focus. They count as asked.
    pub(crate) fn due(
        &mut self,
        now: Duration,
        next_round: Duration,
        asks: impl Fn(&Source) -> bool,
    ) -> Vec<Source> {
        let sids = self.focus.sids();
        let mut out: Vec<Source> = Vec::new();
        let round = !sids.is_empty()
            && self
                .next_round
                .is_none_or(|at| at <= now + Duration::from_millis(1));
        let of_round: Vec<Sid> = if round {
            self.next_round = Some(next_round);
            sids.clone()
        } else {
            self.drilled_now
                .iter()
                .copied()
                .filter(|s| self.focus.drilled.contains(s))
                .collect()
        };
        self.drilled_now.clear();
        for sid in of_round {
            for s in focus_sources(&self.focus, sid, &asks) {
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        }
        for s in std::mem::take(&mut self.retry) {
            let still = sid_of(&s).is_some_and(|sid| sids.contains(&sid));
            if still && asks(&s) && !out.contains(&s) {
                out.push(s);
            }
        }
        out
    }

    /// Options of `sources` a killed call never reached: the focus's are asked at the next call.
    pub(crate) fn retry(&mut self, sources: &[Source]) {
        for s in sources {
            if is_focus(s) && !self.retry.contains(s) {
                self.retry.push(*s);
            }
        }
    }
}

/// Whether `source` is one of a session in focus.
pub(crate) fn is_focus(source: &Source) -> bool {
    sid_of(source).is_some()
}

/// The session of a focus option.
fn sid_of(source: &Source) -> Option<Sid> {
    match source {
        Source::OnstatGSes(s) | Source::OnstatGSql(s) | Source::OnstatGPqs(s) => Some(*s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    fn sids(v: &[Source]) -> Vec<String> {
        v.iter().map(Source::label).collect()
    }

    /// `onstat -g pqs` only for the sessions whose screen is open, and only where the server
    /// has it: a background session (a recording's blocker) costs ses and sql alone.
    #[test]
    fn the_plan_is_asked_for_drilled_sessions_only() {
        let focus = Focus {
            drilled: vec![Sid(812)],
            background: vec![Sid(813), Sid(812)],
            statements: Vec::new(),
        };
        let all = |sid| focus_sources(&focus, sid, |_| true);
        assert_eq!(
            all(Sid(812)),
            [
                Source::OnstatGSes(Sid(812)),
                Source::OnstatGSql(Sid(812)),
                Source::OnstatGPqs(Sid(812))
            ]
        );
        assert_eq!(
            all(Sid(813)),
            [Source::OnstatGSes(Sid(813)), Source::OnstatGSql(Sid(813))]
        );
        // A server older than 12.10 (or not known yet) is not asked.
        let old = focus_sources(&focus, Sid(812), |s| s.supported_by(Some((11, 70))));
        assert_eq!(
            old,
            [Source::OnstatGSes(Sid(812)), Source::OnstatGSql(Sid(812))]
        );
        let new = focus_sources(&focus, Sid(812), |s| s.supported_by(Some((15, 0))));
        assert_eq!(new.len(), 3);
    }

    /// Every session in focus on the period's multiples; a session drilled into at the next
    /// call, alone; a background change waits for the round; nothing while the focus is empty.
    #[test]
    fn sessions_are_read_on_the_period_and_a_drilled_one_at_the_next_call() {
        let mut s = Schedule::default();
        // The round after one at `t`: the next multiple of 5 s.
        let period = |t: Duration| secs((t.as_secs() / 5 + 1) * 5);
        let yes = |_: &Source| true;
        assert!(s.due(secs(1), period(secs(1)), yes).is_empty());
        // The first session: at the next call.
        assert!(!s.set(&Focus {
            drilled: Vec::new(),
            background: vec![Sid(7)],
            statements: Vec::new(),
        }));
        assert_eq!(
            sids(&s.due(secs(2), period(secs(2)), yes)),
            ["onstat -g ses 7", "onstat -g sql 7"]
        );
        // Then at the next multiple of the period: 5 (3 s on), 10...
        assert!(s.due(secs(3), period(secs(3)), yes).is_empty());
        assert!(s.due(secs(4), period(secs(4)), yes).is_empty());
        assert_eq!(s.due(secs(5), period(secs(5)), yes).len(), 2);
        // A background change waits for the round.
        s.set(&Focus {
            drilled: Vec::new(),
            background: vec![Sid(7), Sid(8)],
            statements: Vec::new(),
        });
        assert!(s.due(secs(6), period(secs(6)), yes).is_empty());
        // A session drilled into: at the next call, alone, with its plan.
        assert!(s.set(&Focus {
            drilled: vec![Sid(9)],
            background: vec![Sid(7), Sid(8)],
            statements: Vec::new(),
        }));
        assert_eq!(
            sids(&s.due(secs(7), period(secs(7)), yes)),
            ["onstat -g ses 9", "onstat -g sql 9", "onstat -g pqs 9"]
        );
        assert!(s.due(secs(8), period(secs(8)), yes).is_empty());
        // The round: every session, each option once.
        assert_eq!(s.due(secs(10), period(secs(10)), yes).len(), 7);
        // Options a killed call never reached: at the next call, while their session is in
        // focus; others are not the focus's.
        s.retry(&[
            Source::OnstatGPqs(Sid(9)),
            Source::OnstatGSes(Sid(99)),
            Source::OnstatU,
        ]);
        assert_eq!(
            sids(&s.due(secs(11), period(secs(11)), yes)),
            ["onstat -g pqs 9"]
        );
        assert!(s.due(secs(12), period(secs(12)), yes).is_empty());
        // Nothing in focus: nothing asked, its round neither.
        s.set(&Focus::default());
        assert!(s.due(secs(15), period(secs(15)), yes).is_empty());
        // In focus again: at the next call.
        s.set(&Focus {
            drilled: Vec::new(),
            background: vec![Sid(7)],
            statements: Vec::new(),
        });
        assert_eq!(s.due(secs(16), period(secs(16)), yes).len(), 2);
    }
}
