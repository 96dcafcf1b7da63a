//! The time one `onstat` call takes: its options are printed one after the other, each a few
//! milliseconds after the previous (more for a bulky one: `-u` of 5,000 threads), and now and
//! then the process stalls for tens of milliseconds between two of them (descheduled, a latch
//! on shared memory). The server's seconds do not begin at the runner's: each begins
//! `SERVER_TICK` after the runner's whole second, so a call started on a tick is printed in
//! that second unless it stalls, and the options after a stall are printed in the next one
//! (their banners say so: one second more of uptime). What changes within that second (who
//! holds a lock or a mutex) can then differ between two parts of one call.

use super::noise::{below, Salt};
use std::time::Duration;

/// The server's second `N` begins this long after the runner's `N.000`: longer than a whole
/// call takes at 5,000 sessions when it does not stall (about 35 ms when every option meets).
pub(crate) const SERVER_TICK: Duration = Duration::from_millis(50);

/// How long printing one part takes: a fixed cost, then its bytes at 100 MB/s.
fn part_time(bytes: usize) -> Duration {
    Duration::from_micros(300) + Duration::from_nanos(10 * bytes as u64)
}

/// One call in this many stalls between two of its parts...
const STALL_ONE_IN: u64 = 40;
/// ... for this long.
const STALL: Duration = Duration::from_millis(60);

/// The server's second at the runner's time `t`.
pub(crate) fn second_of(t: Duration) -> u64 {
    (t + Duration::from_secs(1) - SERVER_TICK).as_secs()
}

/// The parts of one call started at `t`, printed one after the other: where each begins.
pub(crate) struct Call {
    at: Duration,
    next: usize,
    /// The part before which the call stalls, if it does.
    stall_before: Option<usize>,
    /// Parts printed apart (else all at the call's start).
    apart: bool,
}

impl Call {
    /// A call of `parts` parts started at `t`, printed apart or (not `apart`) all at `t`.
    pub(crate) fn new(seed: u64, t: Duration, parts: usize, apart: bool) -> Call {
        let second = second_of(t);
        let stalls = apart && parts > 1 && below(seed, Salt::Skew, second, 0, STALL_ONE_IN) == 0;
        Call {
            at: t,
            next: 0,
            stall_before: stalls
                .then(|| 1 + below(seed, Salt::Skew, second, 1, parts as u64 - 1) as usize),
            apart,
        }
    }

    /// When the next part is printed.
    pub(crate) fn part_at(&mut self) -> Duration {
        if self.stall_before == Some(self.next) {
            self.at += STALL;
        }
        self.next += 1;
        self.at
    }

    /// The part just printed was `bytes` long.
    pub(crate) fn printed(&mut self, bytes: usize) {
        if self.apart {
            self.at += part_time(bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_on_the_tick_stays_in_its_second_unless_it_stalls() {
        assert_eq!(second_of(Duration::from_secs(40)), 40);
        assert_eq!(second_of(Duration::from_millis(40_049)), 40);
        assert_eq!(second_of(Duration::from_millis(40_050)), 41);
        assert_eq!(second_of(Duration::from_millis(39_999)), 40);
        let mut stalled = 0;
        for t in 0..1_000u64 {
            let mut c = Call::new(1, Duration::from_secs(t), 6, true);
            let mut seconds = Vec::new();
            for _ in 0..6 {
                seconds.push(second_of(c.part_at()));
                c.printed(20_000);
            }
            // The first part is of the call's own second; the rest too unless it stalled.
            assert_eq!(seconds[0], t);
            if seconds.iter().any(|s| *s != t) {
                stalled += 1;
                let first_late = seconds.iter().position(|s| *s != t).unwrap_or(0);
                assert!(first_late >= 1);
                assert!(seconds[first_late..].iter().all(|s| *s == t + 1));
            }
        }
        // About one call in 40.
        assert!(
            (10..=45).contains(&stalled),
            "{stalled} of 1000 calls stalled"
        );
    }
}
