//! What the latest `onstat -u` asks to be read with the next one. Who holds a lock, a buffer or
//! a mutex changes within a second, so the joins name a holder only from an output taken at
//! the same moment as the `onstat -u` whose waiter it explains. While threads wait on locks or
//! buffers, `onstat -k` and `onstat -X` join every tick's grouped call (no process of their
//! own); while a mutex wait lasts past one sample, `onstat -g lmx` (holders and waiters) runs
//! every [`MUTEX_PERIOD`], a process of its own, kept inside the budget of 200 onstat processes
//! a minute (`budget.rs`). A calm server asks for none of them more often than their own
//! periods.

use crate::ids::Addr;
use crate::parsers::onstat_u::{OnstatU, WaitReason};
use crate::source::Source;
use std::sync::Mutex;
use tokio::sync::watch;

/// How often `onstat -g lmx` runs while a mutex wait lasts: a holder is named at one tick in
/// three (a process every second would take the minute past 200 onstat processes).
pub(crate) const MUTEX_PERIOD: std::time::Duration = std::time::Duration::from_secs(3);

const LOCKS: u8 = 1;
const BUFFERS: u8 = 2;
const MUTEXES: u8 = 4;
/// `onstat -D` and `onstat -g glo`: wanted at every tick only when a front-end asks
/// ([`Demand::pin`]).
const CHUNKS: u8 = 8;
const VPS: u8 = 16;

/// The demand, shared by the collectors of one instance.
#[derive(Debug)]
pub(crate) struct Demand {
    bits: watch::Sender<u8>,
    /// What a front-end wants at every tick whatever `onstat -u` says: a snapshot's second
    /// `onstat -D` (the chunk rates) and `onstat -g glo` (the CPU VPs' load) at the next tick
    /// rather than five and ten seconds on.
    pinned: std::sync::atomic::AtomicU8,
    /// The previous sample's mutex waits (thread, mutex): a wait seen in two samples in a row
    /// lasts past an instant.
    mutex_waits: Mutex<Vec<(Addr, Addr)>>,
}

impl Default for Demand {
    fn default() -> Self {
        Demand {
            bits: watch::channel(0).0,
            pinned: std::sync::atomic::AtomicU8::new(0),
            mutex_waits: Mutex::new(Vec::new()),
        }
    }
}

impl Demand {
    /// Takes one `onstat -u` sample.
    pub(crate) fn observe(&self, u: &OnstatU) {
        let mut bits = 0;
        let mut waits: Vec<(Addr, Addr)> = Vec::new();
        for th in &u.threads {
            match th.wait_reason {
                Some(WaitReason::Lock) => bits |= LOCKS,
                Some(WaitReason::Buffer) => bits |= BUFFERS,
                Some(WaitReason::Mutex) => {
                    if let Some(w) = th.wait {
                        waits.push((th.address, w));
                    }
                }
                _ => {}
            }
        }
        waits.sort_unstable();
        if let Ok(mut prev) = self.mutex_waits.lock() {
            if waits.iter().any(|w| prev.binary_search(w).is_ok()) {
                bits |= MUTEXES;
            }
            *prev = waits;
        }
        self.bits.send_if_modified(|b| {
            let changed = *b != bits;
            *b = bits;
            changed
        });
    }

    fn bit(source: &Source) -> u8 {
        match source {
            Source::OnstatK => LOCKS,
            Source::OnstatX => BUFFERS,
            Source::OnstatGLmx => MUTEXES,
            Source::OnstatDUpper => CHUNKS,
            Source::OnstatGGlo => VPS,
            _ => 0,
        }
    }

    /// Whether `source` is ever wanted at every tick.
    pub(crate) fn demandable(source: &Source) -> bool {
        Demand::bit(source) != 0
    }

    /// The period of `source` while it is wanted.
    pub(crate) fn period(source: &Source) -> std::time::Duration {
        match source {
            Source::OnstatGLmx => MUTEX_PERIOD,
            _ => crate::source::registry::PERIOD_FAST,
        }
    }

    /// Whether `source` is wanted at every tick now.
    pub(crate) fn wants(&self, source: &Source) -> bool {
        let pinned = self.pinned.load(std::sync::atomic::Ordering::Relaxed);
        (*self.bits.borrow() | pinned) & Demand::bit(source) != 0
    }

    /// Wants `source` at every tick (`on`) until unpinned, whatever `onstat -u` says. Only the
    /// grouped call's sources follow a pin (`onstat -D`, `-g glo`, `-k`, `-X`).
    pub(crate) fn pin(&self, source: &Source, on: bool) {
        let bit = Demand::bit(source);
        if on {
            self.pinned
                .fetch_or(bit, std::sync::atomic::Ordering::Relaxed);
        } else {
            self.pinned
                .fetch_and(!bit, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// A receiver that sees the demand change.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u8> {
        self.bits.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(rows: &[(u64, char, u64)]) -> OnstatU {
        let mut text = String::from(
            "\nIBM Informix Dynamic Server Version 12.10.FC14 -- On-Line -- Up 1 days 00:00:00 -- 1000 Kbytes\n\nUserthreads\naddress          flags   sessid   user     tty      wait             tout locks nreads   nwrites\n",
        );
        for (i, (addr, f, wait)) in rows.iter().enumerate() {
            text.push_str(&format!(
                "{addr:x} {f}--P--- {} informix - {wait:x} 0 1 0 0\n",
                100 + i
            ));
        }
        text.push_str(&format!(
            " {} active, 1024 total, 20 maximum concurrent\n",
            rows.len()
        ));
        crate::parsers::onstat_u::parse(&text).expect("parses")
    }

    #[test]
    fn lock_and_buffer_waits_ask_for_k_and_x_at_once_a_mutex_wait_only_when_it_lasts() {
        let d = Demand::default();
        d.observe(&u(&[(0x1000, 'L', 0x9000)]));
        assert!(d.wants(&Source::OnstatK));
        assert!(!d.wants(&Source::OnstatX));
        d.observe(&u(&[(0x1000, 'B', 0x9100), (0x2000, 'S', 0x7000)]));
        assert!(!d.wants(&Source::OnstatK));
        assert!(d.wants(&Source::OnstatX));
        // The first sample of a mutex wait: an instant, not worth a process a second.
        assert!(!d.wants(&Source::OnstatGLmx));
        d.observe(&u(&[(0x2000, 'S', 0x7000)]));
        assert!(d.wants(&Source::OnstatGLmx));
        // -g lmx names holders and waiters: -g wmx is not asked for more often.
        assert!(!d.wants(&Source::OnstatGWmx));
        // Another mutex: a new wait.
        d.observe(&u(&[(0x2000, 'S', 0x7100)]));
        assert!(!d.wants(&Source::OnstatGLmx));
        d.observe(&u(&[]));
        assert!(!d.wants(&Source::OnstatK) && !d.wants(&Source::OnstatX));
    }

    #[test]
    fn a_pinned_source_is_wanted_until_unpinned_whatever_onstat_u_says() {
        let d = Demand::default();
        assert!(!d.wants(&Source::OnstatDUpper));
        d.pin(&Source::OnstatDUpper, true);
        d.observe(&u(&[(0x1000, 'L', 0x9000)]));
        assert!(d.wants(&Source::OnstatDUpper) && d.wants(&Source::OnstatK));
        d.observe(&u(&[]));
        assert!(d.wants(&Source::OnstatDUpper) && !d.wants(&Source::OnstatK));
        d.pin(&Source::OnstatDUpper, false);
        assert!(!d.wants(&Source::OnstatDUpper));
    }
}
