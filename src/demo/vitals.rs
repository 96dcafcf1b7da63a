//! The server's vital signs as the demo's onstat prints them, in the 12.10 layouts of the
//! samples in `tests/fixtures/`: `-p` (profile), `-l` (logs), `-s` (latches), `-x`
//! (transactions), `-g glo` (VP CPU), `-g rea` (ready queue), `-g lmx` / `-g wmx` (mutexes),
//! `-g tpf` (thread profiles), `-g ckp` (checkpoints), `-g seg` (shared memory). The numbers
//! come from `profile` (counters), `logs`, `checkpoints`, `segments` and the moment's threads,
//! so each output agrees with the others and with `-u`.

use super::checkpoints;
use super::instance::{Population, Role, Status, SYSTEM_THREADS};
use super::logs::{self, LogPos, LOG_FILES, LOG_PAGES};
use super::longtx::{self, Stage};
use super::moment::{Activity, Holder, Thread, Vp, World, MUTEXES, MUTEX_SIZE};
use super::noise::{unit, Salt};
use super::profile::{CPU_VPS, Q};
use super::segments;
use super::text;
use std::fmt::Write as _;

/// `value` written so that it starts at `col` (or right after what is there, when that is
/// already past `col`, with at least `gap` blanks).
fn at_col(r: &mut text::Rows<'_>, line_start: usize, col: usize, gap: usize, value: &str) {
    let pos = r.len() - line_start;
    if pos < col {
        r.pad(col - pos);
    } else if pos > 0 {
        r.pad(gap);
    }
    r.str(value);
}

/// A header line, then one line of values, each starting where its name does on the header
/// line. `gap` blanks at least between values (onstat -p prints none: a wide value runs into
/// the next one).
fn named_row(o: &mut String, header: &str, values: &[String], gap: usize) {
    let mut r = text::Rows::new(o);
    r.str(header);
    r.ascii(b'\n');
    let cols: Vec<usize> = text_words(header);
    let start = r.len();
    for (v, col) in values.iter().zip(cols) {
        at_col(&mut r, start, col, gap, v);
    }
    r.ascii(b'\n');
}

/// The byte column where each blank-separated word of `line` starts.
fn text_words(line: &str) -> Vec<usize> {
    let mut cols = Vec::new();
    let mut prev_blank = true;
    for (i, b) in line.bytes().enumerate() {
        let blank = b == b' ';
        if !blank && prev_blank {
            cols.push(i);
        }
        prev_blank = blank;
    }
    cols
}

fn n(v: f64) -> String {
    (v.max(0.0) as u64).to_string()
}

fn dec2(v: f64) -> String {
    format!("{v:.2}")
}

/// `onstat -p`.
pub(crate) fn profile(w: &World<'_>, o: &mut String) {
    let c = w.counters;
    let t = w.now.t as i64;
    let q = |x: Q| c.at(x, t);
    let bufreads = q(Q::BufReads);
    let dskreads = q(Q::DskReads);
    let bufwrits = q(Q::BufWrits);
    let dskwrits = q(Q::DskWrits);
    let cached = |disk: f64, buf: f64| {
        if buf > 0.0 {
            100.0 * (buf - disk).max(0.0) / buf
        } else {
            0.0
        }
    };
    o.push_str("Profile\n");
    named_row(
        o,
        "dskreads  pagreads   bufreads   %cached dskwrits   pagwrits   bufwrits   %cached",
        &[
            n(dskreads),
            n(dskreads * 1.7),
            n(bufreads),
            dec2(cached(dskreads, bufreads)),
            n(dskwrits),
            n(dskwrits * 1.3),
            n(bufwrits),
            dec2(cached(dskwrits, bufwrits)),
        ],
        0,
    );
    o.push('\n');
    let isam = q(Q::Isam);
    named_row(
        o,
        "isamtot   open     start    read     write   rewrite  delete  commit  rollbk",
        &[
            n(isam),
            n(isam * 0.05),
            n(isam * 0.08),
            n(isam * 0.71),
            n(isam * 0.011),
            n(isam * 0.004),
            n(isam * 0.0015 + q(Q::PurgeRows)),
            n(q(Q::Commit)),
            n(q(Q::Rollbk)),
        ],
        0,
    );
    o.push('\n');
    named_row(
        o,
        "gp_read   gp_write   gp_rewrt   gp_del     gp_alloc   gp_free   gp_curs",
        &[
            n(isam * 0.000_01),
            n(isam * 0.000_000_5),
            n(isam * 0.000_003),
            n(isam * 0.000_001),
            "0".into(),
            "0".into(),
            n(isam * 0.000_004),
        ],
        0,
    );
    o.push('\n');
    let others =
        q(Q::AioCpu) + q(Q::LioCpu) + q(Q::PioCpu) + q(Q::SocCpu) + q(Q::AdmCpu) + q(Q::MscCpu);
    named_row(
        o,
        "ovlock    ovuserthread   ovbuff   usercpu  syscpu   numckpts   flushes",
        &[
            "0".into(),
            "0".into(),
            "0".into(),
            dec2(q(Q::CpuUser) + others * 0.4),
            dec2(q(Q::CpuSys) + others * 0.6),
            n(q(Q::Checkpoints)),
            n(q(Q::Checkpoints)),
        ],
        0,
    );
    o.push('\n');
    named_row(
        o,
        "bufwaits  lokwaits  lockreqs   deadlks  dltouts  ckpwaits  compress  seqscans",
        &[
            n(q(Q::BufWaits)),
            n(q(Q::LokWaits)),
            n(q(Q::LockReqs)),
            n(q(Q::Deadlks)),
            n(q(Q::Dltouts)),
            n(q(Q::CkpWaits)),
            n(q(Q::Commit) * 0.02),
            n(q(Q::SeqScans)),
        ],
        0,
    );
    o.push('\n');
    let ra = q(Q::ReadAhead);
    named_row(
        o,
        "ixda-RA   idx-RA     da-RA    logrec-RA  RA-pgsused lchwaits",
        &[
            n(ra * 0.05),
            n(ra * 0.3),
            n(ra * 0.6),
            "0".into(),
            n(ra * 0.93),
            n(q(Q::LchWaits)),
        ],
        0,
    );
}

/// `onstat -l`.
pub(crate) fn logs(w: &World<'_>, o: &mut String) {
    let c = w.counters;
    let t = w.now.t;
    let ti = t as i64;
    // Counted since the statistics were last reset.
    let boot = -(super::profile::ZEROED_AGO as i64);
    let phys_since_boot = (c.at(Q::PlogPages, ti) - c.at(Q::PlogPages, boot)).max(0.0) as u64;
    let phys_since_ckpt = {
        let ended = ti - checkpoints::since_last(t) as i64;
        (c.at(Q::PlogPages, ti) - c.at(Q::PlogPages, ended)).max(0.0) as u64
    };
    const PHYSIZE: u64 = 400_000;
    o.push_str("Physical Logging\n");
    o.push_str("Buffer bufused  bufsize  numpages numwrits pages/io\n");
    let pnum = phys_since_boot;
    let pwrits = (pnum / 37).max(1);
    let _ = writeln!(
        o,
        "  P-{:<2} {:<8} {:<8} {:<8} {:<8} {:.2}",
        1 + pnum % 2,
        pnum % 17,
        512,
        pnum,
        pwrits,
        pnum as f64 / pwrits as f64
    );
    o.push_str("      phybegin         physize  phypos   phyused  %used   \n");
    let _ = writeln!(
        o,
        "      {:<16} {:<8} {:<8} {:<8} {:<8.2}",
        "5:53",
        PHYSIZE,
        phys_since_boot % PHYSIZE,
        phys_since_ckpt.min(PHYSIZE),
        100.0 * phys_since_ckpt.min(PHYSIZE) as f64 / PHYSIZE as f64
    );
    o.push('\n');
    o.push_str("Logical Logging\n");
    o.push_str("Buffer bufused  bufsize  numrecs  numpages numwrits recs/pages pages/io\n");
    let numpages = logs::written(c, ti).saturating_sub(logs::written(c, boot));
    let numrecs = numpages * 147 / 10;
    let numwrits = (numpages * 10 / 38).max(1);
    let _ = writeln!(
        o,
        "  L-{:<2} {:<8} {:<8} {:<8} {:<8} {:<8} {:<10.1} {:<8.1}",
        1 + numpages % 3,
        numpages % 7,
        256,
        numrecs,
        numpages,
        numwrits,
        numrecs as f64 / numpages.max(1) as f64,
        numpages as f64 / numwrits as f64
    );
    o.push_str("        Subsystem    numrecs  Log Space used\n");
    let _ = writeln!(
        o,
        "        {:<12} {:<8} {}",
        "OLDRSAM",
        numrecs,
        numpages * 2_048 * 97 / 100
    );
    o.push('\n');
    let last = checkpoints::last_lsn(c, t).map(|p| p.uniq);
    o.push_str(
        "address          number   flags    uniqid   begin                size     used    %used\n",
    );
    let mut r = text::Rows::new(o);
    for f in logs::files(c, ti, last) {
        r.hex(w.pop.layout.logfiles + (f.number - 1) * 0x48, 17);
        r.dec(f.number, 9);
        r.left(std::str::from_utf8(&f.flags).unwrap_or("-------"), 9);
        r.dec(f.uniq, 9);
        r.left(&format!("6:{}", 53 + (f.number - 1) * LOG_PAGES), 21);
        r.dec(LOG_PAGES, 9);
        r.rdec(f.used, 5);
        let _ = writeln!(r, " {:>8.2}", 100.0 * f.used as f64 / LOG_PAGES as f64);
    }
    let _ = writeln!(r, " {LOG_FILES} active, {LOG_FILES} total");
}

/// The rstcb and tid of a mutex holder.
fn holder_ids(w: &World<'_>, h: Holder) -> (u64, u64) {
    match h {
        Holder::Session(i) => (w.pop.sessions[i].rstcb, session_tid(w, i)),
        Holder::Daemon(i) => (w.pop.daemon_rstcb(i), Population::daemon_tid(i)),
    }
}

/// The thread id of the session on slot `i` now.
fn session_tid(w: &World<'_>, i: usize) -> u64 {
    w.tenants.get(i).map_or(0, |t| t.tid)
}

fn mutex_addr(pop: &Population, which: u64) -> u64 {
    pop.layout.mutex + which * MUTEX_SIZE
}

/// `onstat -s`: the latches (mutexes) held, by whom.
pub(crate) fn latches(w: &World<'_>, o: &mut String) {
    o.push_str("Latches with lock or userthread set\n");
    o.push_str("name     address          lock wait userthread\n");
    let mut r = text::Rows::new(o);
    for m in &w.mutexes {
        let (rstcb, _) = holder_ids(w, m.holder);
        r.left(MUTEXES[m.which as usize % MUTEXES.len()], 8);
        r.ascii(b' ');
        r.hex(mutex_addr(w.pop, m.which), 17);
        r.str("1    0    ");
        r.hex(rstcb, 0);
        r.ascii(b'\n');
    }
}

/// `m:ss`.
fn min_sec(secs: u64) -> String {
    format!("{}:{:02}", secs / 60, secs % 60)
}

/// A log position as onstat prints it (`9871:0x2f3018`), left-aligned in `width`.
fn logpos_into(r: &mut text::Rows<'_>, p: LogPos, width: usize) {
    let at = r.len();
    r.dec(p.uniq, 0);
    r.str(":0x");
    r.hex(p.offset(), 0);
    r.pad(width.saturating_sub(r.len() - at));
}

/// `onstat -x`: a transaction per session; those that have logged show where they began.
pub(crate) fn transactions(w: &World<'_>, o: &mut String) {
    let c = w.counters;
    let t = w.now.t;
    let threads = w.threads();
    o.push_str("Transactions\n");
    o.push_str("address          flags userthread       locks  begin          current        isol    est.     retrys coord\n");
    o.push_str("                                               logpos         logpos                 rb_time\n");
    let stage = longtx::stage(&w.now);
    let mut active = 0u64;
    let mut r = text::Rows::new(o);
    for th in threads.iter().filter(|th| th.flags[3] == b'P') {
        let Some(i) = th.session else { continue };
        let s = &w.pop.sessions[i];
        let sn = &w.sessions[i];
        active += 1;
        let mut flags = *b"A----";
        let isol = match super::onstat::isolation_of(s) {
            "DR" => "DIRTY",
            _ => "COMMIT",
        };
        let (begin, current, rb) = if sn.txn {
            flags[2] = if matches!(sn.activity, Activity::Rollback { .. }) {
                b'R'
            } else {
                b'B'
            };
            // Its first record went in during its first second.
            let began = w.txn_began(i) as i64 - 1;
            let b = logs::pos_at(c, began);
            match (s.role, stage) {
                (Role::LongTxn, Some(Stage::Open)) => {
                    let own =
                        (c.at(Q::TxnLogPages, t as i64) - c.at(Q::TxnLogPages, began)).max(0.0);
                    // Rolling back goes at about 3,000 pages a second.
                    (
                        b,
                        logs::pos_at(c, t as i64),
                        min_sec((own / 3_000.0) as u64),
                    )
                }
                (Role::LongTxn, Some(_)) => {
                    // The current position winds back to the begin position as it rolls back.
                    let hwm = began + longtx::HWM_INTO as i64;
                    let done = began + 1 + longtx::DONE_INTO as i64;
                    let top = logs::written(c, hwm);
                    let bottom = logs::written(c, began);
                    let frac = (t as i64 - hwm) as f64 / (done - hwm).max(1) as f64;
                    let now = top - ((top - bottom) as f64 * frac.clamp(0.0, 1.0)) as u64;
                    (
                        b,
                        logs::pos_of(now),
                        min_sec((done - t as i64).max(0) as u64),
                    )
                }
                _ => (b, logs::pos_at(c, t as i64), "0:00".to_string()),
            }
        } else {
            (
                LogPos { uniq: 0, page: 0 },
                LogPos { uniq: 0, page: 0 },
                String::new(),
            )
        };
        r.hex(w.pop.layout.txn + i as u64 * 0x370, 17);
        r.left(std::str::from_utf8(&flags).unwrap_or("A----"), 6);
        r.hex(th.rstcb, 17);
        r.dec(u64::from(th.locks), 7);
        if sn.txn {
            logpos_into(&mut r, begin, 15);
            logpos_into(&mut r, current, 15);
        } else {
            r.str("-              -              ");
        }
        r.left(isol, 8);
        r.left(if sn.txn { &rb } else { "-" }, 9);
        r.str("0\n");
    }
    drop(r);
    let total = (active + 64).next_power_of_two().max(256);
    let peak = active + active / 8 + 3;
    let _ = writeln!(
        o,
        " {active} active, {total} total, {peak} maximum concurrent"
    );
}

/// The VPs: (number, class, pid), as `onstat -g ath` names them (`1cpu` ... `16cpu`, `17lio`).
fn vps() -> Vec<(u64, &'static str)> {
    let mut v: Vec<(u64, &'static str)> = (1..=CPU_VPS).map(|k| (k, "cpu")).collect();
    for (k, class) in [
        "lio", "pio", "aio", "aio", "aio", "aio", "msc", "fifo", "soc", "soc", "adm",
    ]
    .into_iter()
    .enumerate()
    {
        v.push((CPU_VPS + 1 + k as u64, class));
    }
    v
}

/// CPU seconds (user, sys) of a VP class at `t`.
fn class_cpu(w: &World<'_>, class: &str) -> (f64, f64) {
    let c = w.counters;
    let t = w.now.t as i64;
    let split = |q: Q, user: f64| {
        let v = c.at(q, t);
        (v * user, v * (1.0 - user))
    };
    match class {
        "cpu" => (c.at(Q::CpuUser, t), c.at(Q::CpuSys, t)),
        "aio" => split(Q::AioCpu, 0.43),
        "lio" => split(Q::LioCpu, 0.28),
        "pio" => split(Q::PioCpu, 0.35),
        "soc" => split(Q::SocCpu, 0.32),
        "adm" => split(Q::AdmCpu, 0.77),
        "msc" => split(Q::MscCpu, 0.45),
        _ => (0.0, 0.0),
    }
}

/// How a class's CPU is shared among its VPs (weights summing to 1).
fn share(seed: u64, class: &str, members: &[u64], vp: u64) -> f64 {
    let weight = |k: u64| match class {
        // The first aio VP does most of the work, as in the samples.
        "aio" => 1.0 / (1.0 + (k - members[0]) as f64),
        _ => 1.0 + 0.3 * unit(seed, Salt::Profile, 200 + k, 0),
    };
    let sum: f64 = members.iter().map(|&k| weight(k)).sum();
    weight(vp) / sum.max(f64::MIN_POSITIVE)
}

/// `onstat -g glo`.
pub(crate) fn glo(w: &World<'_>) -> String {
    let c = w.counters;
    let t = w.now.t;
    let mut o = super::onstat::banner(w);
    let threads = w.threads().len() + SYSTEM_THREADS.len();
    let all = vps();
    o.push_str("MT global info:\n");
    o.push_str("sessions threads  vps      lngspins\n");
    let _ = writeln!(
        o,
        "{:<8} {:<8} {:<8} {}",
        w.pop.sessions.len() + 4,
        threads,
        all.len(),
        c.count(Q::LngSpins, t)
    );
    o.push('\n');
    o.push_str("          sched calls     thread switches yield 0   yield n   yield forever\n");
    let sched = c.count(Q::SchedCalls, t);
    let sw = c.count(Q::Switches, t);
    let _ = writeln!(
        o,
        "total:    {:<15} {:<15} {:<9} {:<9} {}",
        sched,
        sw,
        sched / 18,
        sched / 90,
        sched * 3 / 10
    );
    let (rs, rw) = (c.rate(Q::SchedCalls, t), c.rate(Q::Switches, t));
    let _ = writeln!(
        o,
        "per sec:  {:<15} {:<15} {:<9} {:<9} {}",
        rs as u64,
        rw as u64,
        (rs / 18.0) as u64,
        (rs / 90.0) as u64,
        (rs * 0.3) as u64
    );
    o.push('\n');
    o.push_str("Virtual processor summary:\n");
    o.push_str(" class       vps       usercpu   syscpu    total\n");
    let classes = ["cpu", "aio", "lio", "pio", "adm", "soc", "msc", "fifo"];
    let (mut tu, mut ts) = (0.0, 0.0);
    for class in classes {
        let count = all.iter().filter(|(_, c)| *c == class).count();
        let (u, s) = class_cpu(w, class);
        tu += u;
        ts += s;
        let _ = writeln!(
            o,
            " {:<11} {:<9} {:<9.2} {:<9.2} {:.2}",
            class,
            count,
            u,
            s,
            u + s
        );
    }
    let _ = writeln!(
        o,
        " {:<11} {:<9} {:<9.2} {:<9.2} {:.2}",
        "total",
        all.len(),
        tu,
        ts,
        tu + ts
    );
    o.push('\n');
    o.push_str("Individual virtual processors:\n");
    o.push_str(" vp    pid       class       usercpu   syscpu    total     Thread    Eff\n");
    let seed = w.pop.seed;
    for &(vp, class) in &all {
        let members: Vec<u64> = all
            .iter()
            .filter(|(_, c)| *c == class)
            .map(|(k, _)| *k)
            .collect();
        let f = share(seed, class, &members, vp);
        let (u, s) = class_cpu(w, class);
        let (u, s) = (u * f, s * f);
        let total = u + s;
        let (thread, eff) = match class {
            "soc" => ("NA".to_string(), "NA".to_string()),
            "adm" => ("0.00".to_string(), "0%".to_string()),
            "aio" => {
                let e = 0.01 + 0.02 * unit(seed, Salt::Profile, 300 + vp, 0);
                (format!("{:.2}", total / e), format!("{:.0}%", e * 100.0))
            }
            "cpu" => {
                let e = 0.62 + 0.3 * unit(seed, Salt::Profile, 300 + vp, 0);
                (format!("{:.2}", total / e), format!("{:.0}%", e * 100.0))
            }
            _ => (format!("{total:.2}"), "100%".to_string()),
        };
        let _ = writeln!(
            o,
            " {:<5} {:<9} {:<11} {:<9.2} {:<9.2} {:<9.2} {:<9} {:>4}",
            vp,
            20_210 + vp - 1,
            class,
            u,
            s,
            total,
            thread,
            eff
        );
    }
    let _ = writeln!(
        o,
        "               tot           {tu:<9.2} {ts:<9.2} {:.2}",
        tu + ts
    );
    o
}

/// The VP number of a thread (`3cpu` → 3), for ordering.
fn vp_number(vp: Vp) -> u64 {
    match vp {
        Vp::Cpu(n) => u64::from(n),
        Vp::Named(s) => s
            .bytes()
            .take_while(u8::is_ascii_digit)
            .fold(0, |a, b| a * 10 + u64::from(b - b'0')),
    }
}

/// `onstat -g rea`: the threads ready to run, by VP, highest priority first.
pub(crate) fn rea(w: &World<'_>) -> String {
    let mut o = super::onstat::banner(w);
    let mut ready: Vec<&Thread> = w
        .threads()
        .iter()
        .filter(|th| th.status == Status::Ready)
        .collect();
    ready.sort_by_key(|th| (vp_number(th.vp), std::cmp::Reverse(th.prty), th.tid));
    o.push_str("Ready threads:\n");
    o.push_str(
        " tid     tcb              rstcb            prty status                vp-class      name\n",
    );
    o.push('\n');
    let mut r = text::Rows::new(&mut o);
    for th in &ready {
        super::onstat::ath_row(
            &mut r,
            (th.tid, super::onstat::tcb(w.pop, th.tid), th.rstcb, th.prty),
            &th.status,
            th.vp,
            th.name,
        );
    }
    drop(r);
    o
}

/// `onstat -g lmx` (every mutex held) or `-g wmx` (those with waiters).
pub(crate) fn mutexes(w: &World<'_>, with_waiters_only: bool) -> String {
    let mut o = super::onstat::banner(w);
    o.push_str(if with_waiters_only {
        "Mutexes with waiters:\n"
    } else {
        "Locked mutexes:\n"
    });
    o.push_str("mid      addr             name               holder   lkcnt  waiter   waittime\n");
    let mut r = text::Rows::new(&mut o);
    for m in &w.mutexes {
        if with_waiters_only && m.waiters.is_empty() {
            continue;
        }
        let (_, holder_tid) = holder_ids(w, m.holder);
        let mut line = format!(
            "{:<8} {:<16x} {:<18} {:<8} {:<6}",
            4_011 + m.which * 9,
            mutex_addr(w.pop, m.which),
            MUTEXES[m.which as usize % MUTEXES.len()],
            holder_tid,
            0
        );
        let mut waiters = m.waiters.iter();
        if let Some(&(i, waited)) = waiters.next() {
            let _ = write!(line, " {:<8} {}", session_tid(w, i), waited);
        }
        r.str(&line);
        r.ascii(b'\n');
        for &(i, waited) in waiters {
            r.pad(61);
            let _ = writeln!(r, "{:<8} {}", session_tid(w, i), waited);
        }
    }
    if !with_waiters_only {
        let _ = writeln!(
            r,
            "\nNumber of mutexes on VP free lists: {}",
            280 + (w.now.t * 7) % 61
        );
    }
    drop(r);
    o
}

/// `onstat -g tpf`: every thread's profile; `lsus` is the log space its transaction uses now.
pub(crate) fn tpf(w: &World<'_>) -> String {
    let c = w.counters;
    let t = w.now.t;
    let seed = w.pop.seed;
    let mut o = super::onstat::banner(w);
    o.push_str("Thread profiles\n");
    const HEADER: &str =
        "tid lkreqs lkw dl to lgrs isrd iswr isrw isdl isct isrb lx bfr bfw lsus lsmx seq";
    o.push_str(HEADER);
    o.push('\n');
    let cols = text_words(HEADER);
    let threads = w.threads();
    let stage = longtx::stage(&w.now);
    let mut out = text::Rows::new(&mut o);
    for th in threads {
        let r = th.nreads;
        let wr = th.nwrites;
        let u = |k: u64| unit(seed, Salt::Tpf, th.tid, k);
        let (mut lkw, mut to, mut lx, mut lsus, mut lsmx) = (0, 0, 0, 0, 0);
        if let Some(i) = th.session {
            let s = &w.pop.sessions[i];
            if matches!(s.role, Role::Chain(_)) {
                lkw = 3 + (u(1) * 5.0) as u64;
                to = (u(2) * 2.0) as u64;
            }
            let sn = &w.sessions[i];
            if th.flags[3] == b'P' && sn.txn {
                let began = w.txn_began(i) as i64 - 1;
                let own = if s.role == Role::LongTxn && stage.is_some() {
                    c.at(Q::TxnLogPages, t as i64) - c.at(Q::TxnLogPages, began)
                } else {
                    (logs::written(c, t as i64).saturating_sub(logs::written(c, began)) as f64)
                        * 0.002
                };
                lsus = (own.max(0.0) * 2_048.0) as u64 + 4_096;
            }
            if s.role == Role::LongTxn {
                // Its biggest transaction: a whole purge (it runs every cycle).
                let purge =
                    c.at(Q::TxnLogPages, super::timeline::CYCLE as i64) - c.at(Q::TxnLogPages, 0);
                lsmx = ((purge.max(0.0) * 2_048.0) as u64).max(lsus);
                if matches!(stage, Some(Stage::RollingBack | Stage::Blocked)) {
                    lx = 1;
                }
            } else {
                lsmx = lsus.max((u(3) * 2_000_000.0) as u64);
            }
        }
        let values = [
            th.tid,
            r / 2 + wr,
            lkw,
            0,
            to,
            wr * 3,
            r,
            wr / 2,
            wr / 3,
            wr / 9,
            wr / 20,
            (wr as f64 * 0.0004) as u64,
            lx,
            r * 7 + wr,
            wr * 2,
            lsus,
            lsmx,
            (r as f64 * 0.0003) as u64,
        ];
        let start = out.len();
        for (v, col) in values.iter().zip(&cols) {
            let mut b = itoa::Buffer::new();
            at_col(&mut out, start, *col, 1, b.format(*v));
        }
        out.ascii(b'\n');
    }
    drop(out);
    o
}

/// `onstat -g ckp`: the last checkpoints, in the manuals' two blocks and the summary.
pub(crate) fn ckp(w: &World<'_>) -> String {
    let mut o = super::onstat::banner(w);
    let group = super::instance::CKPT
        .end
        .min(w.pop.sessions.len())
        .saturating_sub(super::instance::CKPT.start) as u64;
    let rows = checkpoints::history(w.counters, w.pop.seed, group, w.now.t);
    o.push_str("Auto Checkpoints=On   RTO_SERVER_RESTART=0 seconds\n\n");
    o.push_str(
        "                                                                    Critical Sections\n",
    );
    o.push_str("         Clock                            Total  Flush  Block  #      Ckpt  Wait  Long  #Dirty\n");
    o.push_str("Interval Time      Trigger     LSN        Time   Time   Time   Waits  Time  Time  Time  Buffers\n");
    for k in &rows {
        let clock = super::onstat::time_of_day(k.at);
        let star = if k.blocking { "*" } else { " " };
        let _ = writeln!(
            o,
            "{:<8} {clock}{star}{:<11} {:<10} {:<6.1} {:<6.1} {:<6.1} {:<6} {:<5.1} {:<5.1} {:<5.1} {}",
            k.id,
            k.trigger,
            format!("{}:{:x}", k.lsn.uniq, k.lsn.offset()),
            k.total,
            k.flush,
            k.block,
            k.waits,
            k.ckpt_time,
            k.wait_time,
            k.long_time,
            k.dirty
        );
    }
    o.push('\n');
    o.push_str("           Physical Log    Logical Log\n");
    o.push_str("  Dskflu   Total   Avg      Total   Avg\n");
    o.push_str("  /Sec     Pages   /Sec     Pages  /Sec\n");
    let per = checkpoints_interval();
    for k in &rows {
        let _ = writeln!(
            o,
            "  {:<8} {:<7} {:<8} {:<7} {}",
            k.dskflu_per_sec,
            k.plog_pages,
            k.plog_pages / per,
            k.llog_pages,
            k.llog_pages / per
        );
    }
    o.push('\n');
    o.push_str("Max Plog   Max Llog    Max Dskflush    Avg Dskflush   Avg Dirty   Blocked\n");
    o.push_str("pages/sec  pages/sec   Time            pages/sec      pages/sec   Time\n");
    let count = rows.len().max(1) as u64;
    let _ = writeln!(
        o,
        "{:<10} {:<11} {:<15} {:<14} {:<11} {}",
        rows.iter().map(|k| k.plog_pages / per).max().unwrap_or(0),
        rows.iter().map(|k| k.llog_pages / per).max().unwrap_or(0),
        rows.iter().map(|k| k.flush as u64).max().unwrap_or(0),
        rows.iter().map(|k| k.dskflu_per_sec).sum::<u64>() / count,
        rows.iter().map(|k| k.dirty / per).sum::<u64>() / count,
        rows.iter().map(|k| k.block).sum::<f64>() as u64
    );
    o
}

fn checkpoints_interval() -> u64 {
    super::schedule::CKPTINTVL
}

/// `onstat -g seg`.
pub(crate) fn seg(w: &World<'_>) -> String {
    let mut o = super::onstat::banner(w);
    let segs = segments::at(
        w.pop.seed,
        segments_base(w.pop),
        w.pop.sessions.len(),
        w.now.t,
    );
    o.push_str("Segment Summary:\n");
    o.push_str(
        "id         key        addr             size             ovhd     class blkused  blkfree\n",
    );
    for s in &segs {
        let _ = writeln!(
            o,
            "{:<10} {:<10x} {:<16x} {:<16} {:<8} {:<5} {:<8} {}",
            s.id, s.key, s.addr, s.size, s.ovhd, s.class, s.blkused, s.blkfree
        );
    }
    let _ = writeln!(
        o,
        "{:<10} {:<10} {:<16} {:<16} {:<8} {:<5} {:<8} {}",
        "Total:",
        "-",
        "-",
        segs.iter().map(|s| s.size).sum::<u64>(),
        "-",
        "-",
        segs.iter().map(|s| s.blkused).sum::<u64>(),
        segs.iter().map(|s| s.blkfree).sum::<u64>()
    );
    o.push('\n');
    o.push_str("Virtual segment low memory reserve (bytes):4194304\n");
    o.push_str("Low memory reserve used 0 times and used maximum block size 0 bytes\n");
    o
}

/// Where the first segment is attached (the address `/proc/<oninit>/numa_maps` shows).
pub(crate) fn segments_base(pop: &Population) -> u64 {
    pop.layout.mem2k & !0xffff_ffff
}
