//! The logical log's end over time (`onstat -l`: the current log and how far into it), and when
//! each open transaction was first seen (`onstat -x`): together they bound when a transaction
//! began from where its first log record is, so its age is its own, not that of a finding.

use crate::ids::{Addr, Sid};
use crate::parsers::onstat_l::OnstatL;
use crate::parsers::onstat_u::{OnstatU, UserThread};
use crate::parsers::onstat_x_txn::{LogPos, OnstatXTxn};
use compact_str::CompactString;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::time::Duration;

/// Positions kept: at one `onstat -l` every 5 s, over five hours. Older ones go; a transaction
/// that began before the oldest kept is bounded by it (it began before then).
const POSITIONS: usize = 4096;

/// A log position in pages: the log's unique id, then the page in it.
type Pages = (u64, u64);

/// When a transaction began, as far as the samples tell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Began {
    /// It began at or before this moment (session time): its first record was written by then,
    /// or it was open then.
    pub by: Duration,
    /// It began after this moment, where a sample shows the log's end still before its first
    /// record.
    pub after: Option<Duration>,
}

/// The open transaction whose first log record is the oldest, as one `onstat -x` read shows
/// it: what keeps the logs from being freed.
#[derive(Debug, Clone, PartialEq)]
pub struct OldestOpen {
    pub address: Addr,
    /// Its thread's `onstat -u` address.
    pub userthread: Addr,
    pub begin: LogPos,
    pub locks: u64,
    /// The session whose thread was at `userthread` in the `onstat -u` of that read's moment;
    /// `None` while no `onstat -u` of that moment was read (an rstcb is given to the next
    /// session once its own ends, so a later `-u` may put another session there).
    pub owner: Option<Owner>,
}

/// The session that owned a thread at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct Owner {
    pub sid: Sid,
    pub user: CompactString,
    /// Its thread's reads and writes then (`UserThread::continues`).
    counts: (u64, u64),
}

impl Owner {
    fn of(thread: &UserThread) -> Owner {
        Owner {
            sid: thread.sessid,
            user: thread.user.clone(),
            counts: thread.counts(),
        }
    }

    /// Whether `thread` (of a later `onstat -u`, at the same address) is still this session.
    pub fn is(&self, thread: &UserThread) -> bool {
        thread.continues(self.sid, self.counts)
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct LogHistory {
    /// (when, where the log's end was), oldest first.
    positions: VecDeque<(Duration, Pages)>,
    /// Each open transaction (its address and first record) and when it was first seen.
    first_seen: FxHashMap<(Addr, LogPos), Duration>,
    /// The oldest open transaction of the last `onstat -x` read.
    oldest: Option<OldestOpen>,
}

impl LogHistory {
    /// Takes one `onstat -l` read at `t`.
    pub(crate) fn observe_l(&mut self, l: &OnstatL, t: Duration) {
        let Some(c) = l.current() else {
            return;
        };
        let at = (c.uniqid, c.used);
        // The end only moves on; a step back is another log ring (a restart): start again.
        if self.positions.back().is_some_and(|(_, p)| *p > at) {
            self.positions.clear();
        }
        if self.positions.len() == POSITIONS {
            self.positions.pop_front();
        }
        self.positions.push_back((t, at));
    }

    /// Takes one `onstat -x` read at `t`: transactions first seen now are remembered, those
    /// gone forgotten, and the oldest open one is kept with its owner in `users`, the `onstat
    /// -u` of the read's moment (`None`: none of that moment).
    pub(crate) fn observe_x(&mut self, x: &OnstatXTxn, t: Duration, users: Option<&OnstatU>) {
        self.oldest = x
            .transactions
            .iter()
            .filter_map(|tx| Some((tx, tx.userthread?, tx.begin_logpos?)))
            .min_by_key(|(_, _, b)| *b)
            .map(|(tx, userthread, begin)| OldestOpen {
                address: tx.address,
                userthread,
                begin,
                locks: tx.locks,
                owner: None,
            });
        if let Some(u) = users {
            self.name_owner(u);
        }
        let mut now: FxHashMap<(Addr, LogPos), Duration> = FxHashMap::default();
        now.reserve(x.transactions.len());
        for tx in &x.transactions {
            if let Some(b) = tx.begin_logpos {
                let key = (tx.address, b);
                let seen = self.first_seen.get(&key).copied().unwrap_or(t);
                now.insert(key, seen);
            }
        }
        self.first_seen = now;
    }

    /// Names the oldest open transaction's owner from `users`, an `onstat -u` of the moment of
    /// the `onstat -x` read it came from (the caller says so), when it is not named yet (the
    /// `-u` of a moment may be applied before its `-x` or after it).
    pub(crate) fn name_owner(&mut self, users: &OnstatU) {
        if let Some(o) = self.oldest.as_mut().filter(|o| o.owner.is_none()) {
            o.owner = users
                .threads
                .iter()
                .find(|th| th.address == o.userthread)
                .map(Owner::of);
        }
    }

    /// The oldest open transaction of the last `onstat -x` read.
    pub fn oldest(&self) -> Option<&OldestOpen> {
        self.oldest.as_ref()
    }

    /// When the transaction at `address` whose first record is at `begin` began: by the first
    /// sample in which the log's end had passed that record (or it was first seen, if earlier),
    /// after the last sample in which the end had not reached it. `page_bytes`: the log's page
    /// size (`onstat -x` prints byte offsets, `onstat -l` pages).
    pub fn began(&self, address: Addr, begin: LogPos, page_bytes: u64) -> Option<Began> {
        let first = self.first_seen.get(&(address, begin)).copied();
        let record: Pages = (u64::from(begin.log), begin.pos / page_bytes.max(1));
        let past = self.positions.iter().position(|(_, p)| *p > record);
        let by = match (past.map(|i| self.positions[i].0), first) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        let after = match past {
            Some(0) => None,
            Some(i) => Some(self.positions[i - 1].0),
            // No sample has passed it yet: it began after the latest.
            None => self.positions.back().map(|(t, _)| *t),
        };
        Some(Began { by, after })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(uniq: u64, used: u64) -> OnstatL {
        let text = format!(
            "\nIBM Informix Dynamic Server Version 12.10.FC14 -- On-Line -- Up 1 days 00:00:00 -- 1000 Kbytes\n\n\
Logical Logging\nBuffer bufused  bufsize  numrecs    numpages   numwrits   recs/pages pages/io\n L-2  0        64       1000       100        50         10.0       2.0\n\n\
address          number   flags    uniqid   begin                size     used    %used\n\
4a3b6f40         1        U---C-L  {uniq}    6:53                 50000    {used:>5}    10.00\n 1 active, 1 total\n"
        );
        crate::parsers::onstat_l::parse(&text).expect("parses")
    }

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    /// A record the log's end passed between two samples began between them; one it passed
    /// before the first sample began before it (a lower bound of its age only); a transaction
    /// first seen earlier than the log's end passed its record began by then.
    #[test]
    fn a_transaction_began_between_the_samples_around_its_first_record() {
        let mut h = LogHistory::default();
        h.observe_l(&l(10, 100), secs(100));
        h.observe_l(&l(10, 400), secs(105));
        h.observe_l(&l(11, 20), secs(110));
        let at = Addr(0x1000);
        let pos = |log: u32, page: u64| LogPos {
            log,
            pos: page * 2048 + 0x18,
        };
        assert_eq!(
            h.began(at, pos(10, 250), 2048),
            Some(Began {
                by: secs(105),
                after: Some(secs(100))
            })
        );
        assert_eq!(
            h.began(at, pos(9, 49_000), 2048),
            Some(Began {
                by: secs(100),
                after: None
            })
        );
        // Not yet reached by the last sample, but open when -x was read.
        assert_eq!(h.began(at, pos(11, 30), 2048), None);
        let x = crate::parsers::onstat_x_txn::OnstatXTxn {
            transactions: vec![crate::parsers::onstat_x_txn::Transaction {
                address: at,
                flags: "A-B--".into(),
                userthread: Some(Addr(0x2000)),
                locks: 1,
                begin_logpos: Some(pos(10, 250)),
                curr_logpos: None,
                isolation: "COMMIT".into(),
                rb_time: None,
                retrys: 0,
                coord: None,
            }],
            ..Default::default()
        };
        h.observe_x(&x, secs(103), None);
        h.observe_x(&x, secs(108), None);
        assert_eq!(
            h.began(at, pos(10, 250), 2048).map(|b| b.by),
            Some(secs(103))
        );
    }
}
