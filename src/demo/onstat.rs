//! The onstat outputs of the demo instance, printed in the real layouts (column widths, titles,
//! footers as in `tests/fixtures/`): the banner, `-u`, `-X`, `-g con`, `-g ath`, `-g ntt`, `-k`,
//! `-d`, `-g ses` (the list) and `-g ses <sid>`, `-g sql <sid>`, and several options in one
//! call (`onstat -u -X -k -p`, the options of `GROUPABLE`, the vital signs' from `vitals`).

use super::instance::Status;
use super::instance::{
    Link, Population, Role, Session, POOL_2K_BUFFERS, POOL_8K_BUFFERS, SERVER_HOST, SYSTEM_THREADS,
};
use super::moment::{Activity, BufRow, Thread, Vp, World};
use super::noise::{below, Salt};
use super::schema;
use super::text;
use std::fmt::Write as _;

/// The server's uptime at the demo's time 0: `Up 12 days 03:04:05`.
pub(crate) const UPTIME_AT_ZERO: u64 = 12 * 86_400 + 3 * 3_600 + 4 * 60 + 5;
pub(crate) const VERSION: &str = "12.10.FC8";
/// The exit code of onstat: the server mode, 5 = On-Line.
pub(crate) const ONLINE: i32 = 5;

/// Wall-clock time at the demo's time 0 (seconds since the Unix epoch): the demo's [`EPOCH`]
/// (2026-11-22 13:30:00), the time the header shows, so the times onstat prints (a last
/// acknowledgement, a connection opened) read against it.
///
/// [`EPOCH`]: super::EPOCH
pub(crate) const CLOCK_AT_ZERO: i64 = super::EPOCH.unix_timestamp();

fn flags_str(f: &[u8; 7]) -> &str {
    std::str::from_utf8(f).unwrap_or("-------")
}

/// The banner: the mode with its qualifier (`(CKPT REQ)`, `(LONGTX)`), uptime, shared memory
/// (the segments' total), the `Blocked:` line while the server is blocked, and the blank line
/// after.
pub(crate) fn banner(w: &World<'_>) -> String {
    let mut o = String::new();
    banner_into(w, &mut o);
    o
}

/// [`banner`], written onto `out`.
pub(crate) fn banner_into(w: &World<'_>, out: &mut String) {
    let up = UPTIME_AT_ZERO + w.now.t;
    let days = up / 86_400;
    let (h, m, s) = (up / 3_600 % 24, up / 60 % 60, up % 60);
    let day_word = if days == 1 { "day" } else { "days" };
    // The primary of an RSS secondary (demo/ha.rs).
    let mode = match w.mode_flag() {
        Some(q) => format!("On-Line (Prim) ({q})"),
        None => "On-Line (Prim)".to_string(),
    };
    let kb = super::segments::total_kb(w.now.t);
    let _ = writeln!(
        out,
        "IBM Informix Dynamic Server Version {VERSION} -- {mode} -- Up {days} {day_word} \
         {h:02}:{m:02}:{s:02} -- {kb} Kbytes"
    );
    if let Some(b) = w.blocked() {
        out.push_str("Blocked:");
        out.push_str(b);
        out.push('\n');
    }
    out.push('\n');
}

/// `onstat -u`.
pub(crate) fn users(w: &World<'_>, o: &mut String) {
    let threads = w.threads();
    o.push_str("Userthreads\n");
    o.push_str(
        "address          flags   sessid   user     tty      wait             tout locks nreads   nwrites\n",
    );
    let mut r = text::Rows::new(o);
    for th in threads {
        r.hex(th.rstcb, 17);
        r.left(flags_str(&th.flags), 8);
        r.dec(th.sid, 9);
        r.left(th.user, 9);
        r.str("-        ");
        r.hex(th.wait, 17);
        r.str("0    ");
        r.dec(u64::from(th.locks), 6);
        r.dec(th.nreads, 9);
        r.dec(th.nwrites, 0);
        r.ascii(b'\n');
    }
    drop(r);
    let active = threads.len();
    let n = w.pop.sessions.len();
    let peak = (w.pop.daemons.len() + n + n / 10 + 7).max(active);
    let _ = writeln!(
        o,
        " {active} active, {} total, {peak} maximum concurrent",
        w.pop.rstcb_total()
    );
}

/// `onstat -g con`: one condition per thread waiting on one.
pub(crate) fn onstat_g_con(w: &World<'_>, o: &mut String) {
    let threads = w.threads();
    banner_into(w, o);
    o.push_str("Conditions with waiters:\n");
    o.push_str("cid      addr             name               waiter   waittime\n");
    let mut r = text::Rows::new(o);
    for th in threads {
        if let Status::Cond { name, cid, waited } = th.status {
            r.dec(cid, 9);
            r.hex(th.wait, 17);
            r.left(name, 19);
            r.dec(th.tid, 9);
            r.dec(waited, 0);
            r.ascii(b'\n');
        }
    }
}

pub(crate) fn tcb(pop: &Population, tid: u64) -> u64 {
    pop.layout.tcb + tid * 0x5a8
}

/// One `onstat -g ath` row; `ids` is (tid, tcb, rstcb, prty).
pub(crate) fn ath_row(
    r: &mut text::Rows<'_>,
    ids: (u64, u64, u64, u8),
    status: &Status,
    vp: Vp,
    name: &str,
) {
    let (tid, tcb, rstcb, prty) = ids;
    r.ascii(b' ');
    r.dec(tid, 8);
    r.hex(tcb, 17);
    r.hex(rstcb, 17);
    r.dec(u64::from(prty), 5);
    let at = r.len();
    status.write(r);
    r.pad(24usize.saturating_sub(r.len() - at).max(1));
    let at = r.len();
    vp.write(r);
    r.pad(12usize.saturating_sub(r.len() - at));
    r.str(name);
    r.ascii(b'\n');
}

/// `onstat -g ath`: every thread; user threads carry their `onstat -u` address as rstcb.
pub(crate) fn onstat_g_ath(w: &World<'_>, o: &mut String) {
    let threads = w.threads();
    banner_into(w, o);
    o.push_str("Threads:\n");
    o.push_str(
        " tid     tcb              rstcb            prty status                vp-class      name\n",
    );
    let mut r = text::Rows::new(o);
    for (i, (status, vp, name)) in SYSTEM_THREADS.iter().enumerate() {
        let tid = 2 + i as u64;
        ath_row(
            &mut r,
            (tid, tcb(w.pop, tid), 0, 2),
            status,
            Vp::Named(vp),
            name,
        );
    }
    for th in threads {
        ath_row(
            &mut r,
            (th.tid, tcb(w.pop, th.tid), th.rstcb, th.prty),
            &th.status,
            th.vp,
            th.name,
        );
    }
}

/// The demo clock's time of day at demo second `t` (`13:33:35`).
pub(crate) fn time_of_day(t: i64) -> String {
    clock(t).1
}

/// Civil date and time of a moment of the demo clock: (MM/DD/YYYY, HH:MM:SS).
pub(crate) fn clock(t: i64) -> (String, String) {
    let (y, m, d, tod) = civil_date(t);
    (
        format!("{m:02}/{d:02}/{y:04}"),
        format!("{:02}:{:02}:{:02}", tod / 3_600, tod / 60 % 60, tod % 60),
    )
}

/// The date [`clock`] prints (`MM/DD/YYYY`), written in place.
fn date_into(r: &mut text::Rows<'_>, t: i64) {
    let (y, m, d, _) = civil_date(t);
    r.zdec(m as u64, 2);
    r.ascii(b'/');
    r.zdec(d as u64, 2);
    r.ascii(b'/');
    r.zdec(y as u64, 4);
}

/// The month, day and second of the day of a moment of the demo clock (what [`clock`]
/// prints, as numbers for the rows that write them in place).
pub(crate) fn civil(t: i64) -> (u64, u64, u64) {
    let (_, m, d, tod) = civil_date(t);
    (m as u64, d as u64, tod as u64)
}

/// (year, month, day, second of the day) of a moment of the demo clock.
fn civil_date(t: i64) -> (i64, i64, i64, i64) {
    let secs = CLOCK_AT_ZERO + t;
    let days = secs.div_euclid(86_400);
    let tod = secs.rem_euclid(86_400);
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, tod)
}

/// The client end of a session's connection as `onstat -g ntt` prints it
/// (`10.20.1.13|51234|soctcp`; nothing for a shared-memory connection).
pub(crate) fn ntt_address_into(o: &mut text::Rows<'_>, link: Link) {
    let (ip, port, mapped) = match link {
        Link::Tcp { ip, port } => (ip, port, false),
        Link::Tcp6Mapped { ip, port } => (ip, port, true),
        Link::Shm => return,
    };
    if mapped {
        o.str("::ffff:");
    }
    for (i, b) in ip.iter().enumerate() {
        if i > 0 {
            o.ascii(b'.');
        }
        o.dec(u64::from(*b), 0);
    }
    o.ascii(b'|');
    o.dec(u64::from(port), 0);
    o.str("|soctcp");
}

/// `onstat -g ntt`: a network thread per session; the address column is the client's end of
/// the socket (`host|port|proto`), the join from a session to its Send-Q.
pub(crate) fn onstat_g_ntt(w: &World<'_>, o: &mut String) {
    let t = w.now.t as i64;
    let n = w.pop.sessions.len() as u64;
    banner_into(w, o);
    o.push_str("global network information:\n");
    o.push_str(
        "  #netscb connects     read    write    q-free  q-limits  q-exceed  alloc/max   slow_DNS\n",
    );
    let _ = writeln!(
        o,
        "{:>4}/{:>4} {:>8} {:>8} {:>8} {:>4}/{:>4} {:>4}/{:>4} {:>4}/{:>4} {:>5} / {:<4} {:>8}",
        n + 4,
        n + 12,
        40_212 + n + w.now.t / 7,
        9_045_650 + 41 * n * w.now.t / 10,
        8_967_070 + 40 * n * w.now.t / 10,
        12,
        12,
        240,
        10,
        0,
        0,
        n + 4,
        n + 64,
        0
    );
    o.push('\n');
    o.push_str("Individual thread network information (times):\n");
    o.push_str("  netscb thread name    sid       open       read      write address\n");
    o.push('\n');
    let now_hms = clock(t).1;
    let day = |t: i64| (CLOCK_AT_ZERO + t).div_euclid(86_400);
    let tod = |t: i64| (CLOCK_AT_ZERO + t).rem_euclid(86_400) as u64;
    let mut r = text::Rows::new(o);
    for ((s, sn), tn) in w.pop.sessions.iter().zip(&w.sessions).zip(w.tenants.iter()) {
        if !tn.present {
            continue;
        }
        let opened = tn.since;
        let last = match sn.activity {
            Activity::Idle { waited } | Activity::SlowFetch { waited } => t - waited as i64,
            _ => t,
        };
        r.hex(s.netscb, 11);
        r.left("sqlexec", 12);
        r.rdec(tn.sid, 6);
        for at in [opened, last, last] {
            r.str("   ");
            r.hms(tod(at));
        }
        r.ascii(b' ');
        ntt_address_into(&mut r, w.client(s.idx).1);
        r.ascii(b'\n');
        if day(opened) != day(t) {
            r.pad(24);
            date_into(&mut r, opened);
            r.ascii(b'\n');
        }
    }
    drop(r);
    let boot = -(UPTIME_AT_ZERO as i64);
    let (boot_date, boot_hms) = clock(boot);
    let listeners: [(u64, &str, u64, String); 4] = [
        (0x28, "soctcplst", 2, format!("{SERVER_HOST}|9088|soctcp")),
        (0x6c8, "soctcplst", 3, format!("{SERVER_HOST}|9088|soctcp")),
        (0xd68, "sm_discon", 4, String::new()),
        (0x1408, "sm_listen", 5, String::new()),
    ];
    for (off, name, sid, addr) in listeners {
        let _ = writeln!(
            o,
            "{:<10x} {:<12}{:>6}{:>11}{:>11}{:>11} {}",
            w.pop.layout.netscb - 0x10_0000 + off,
            name,
            sid,
            boot_hms,
            if addr.is_empty() {
                ""
            } else {
                now_hms.as_str()
            },
            "",
            addr
        );
        let _ = writeln!(o, "{:24}{boot_date}", "");
    }
}

/// `onstat -k`.
pub(crate) fn locks(w: &World<'_>, o: &mut String) {
    let locks = w.locks();
    o.push_str("Locks\n");
    o.push_str(
        "address          wtlist           owner            lklist           type     tblsnum  rowid    key#/bsiz\n",
    );
    let mut r = text::Rows::new(o);
    for l in &locks {
        r.hex(l.address, 17);
        r.hex(l.wtlist, 17);
        r.hex(l.owner, 17);
        r.hex(l.lklist, 17);
        r.left(l.kind, 9);
        r.hex(u64::from(l.partnum), 9);
        r.hex(l.rowid, 9);
        r.str("   0\n");
    }
    drop(r);
    let total = (w.pop.sessions.len() as u64 * 8)
        .next_power_of_two()
        .max(20_000);
    let _ = writeln!(
        o,
        " {} active, {total} total, {} hash buckets, 0 lock table overflows",
        locks.len(),
        (total / 2).next_power_of_two()
    );
}

/// `onstat -X`: one section per buffer pool (2 KB and 8 KB), rows only for buffers being
/// accessed. Several waiters go on the row, more on lines holding only addresses under the
/// waiter column (the layout of `tests/fixtures/onstat-X/ifxtop-several-waiters-...`).
pub(crate) fn buffers(w: &World<'_>, o: &mut String) {
    o.push_str("Buffers (Access)\n");
    o.push_str(
        "address          owner            flags pagenum          memaddr          nslots pgflgs scount   waiter\n",
    );
    // Modified buffers pile up between checkpoints.
    let dirty = super::checkpoints::since_last(w.now.t);
    let (pool2k, pool8k) = w.buffers();
    let pools: [(u64, &[BufRow], u64, u64, u64); 2] = [
        (
            2048,
            &pool2k,
            POOL_2K_BUFFERS,
            1_048_576,
            4_000 + 37 * dirty,
        ),
        (8192, &pool8k, POOL_8K_BUFFERS, 262_144, 900 + 9 * dirty),
    ];
    for (size, rows, total, hash, modified) in pools {
        let _ = writeln!(o, "\nBuffer pool page size: {size}");
        for b in rows {
            let waiters = if b.waiters.is_empty() {
                vec!["0".to_string()]
            } else {
                b.waiters.iter().map(|a| format!("{a:x}")).collect()
            };
            let owner = if b.owner == u64::MAX {
                "ffffffffffffffff".to_string()
            } else {
                format!("{:x}", b.owner)
            };
            let pagenum = format!("{}:{}", b.chunk, b.page);
            let mut lines = waiters.chunks(3);
            let first = lines.next().map(|c| c.join(" ")).unwrap_or_default();
            let _ = writeln!(
                o,
                "{:<16x} {:<16} {:<5x} {:<16} {:<16x} {:<6} {:<6x} {:<8} {first}",
                b.address, owner, b.flags, pagenum, b.memaddr, b.nslots, b.pgflgs, b.scount
            );
            for more in lines {
                let _ = writeln!(o, "{:97}{}", "", more.join(" "));
            }
        }
        let _ = writeln!(
            o,
            " {modified} modified, {total} total, {hash} hash buckets, {size} buffer size"
        );
    }
}

/// `onstat -d`: dbspaces and chunks (sizes in each dbspace's page size).
pub(crate) fn dbspaces(w: &World<'_>, o: &mut String) {
    let base = w.pop.layout.pools - 0x40_0000;
    o.push_str("Dbspaces\n");
    o.push_str(
        "address          number   flags      fchunk   nchunks  pgsize   flags    owner    name\n",
    );
    for d in &schema::DBSPACES {
        let chunks: Vec<_> = schema::CHUNKS
            .iter()
            .filter(|c| c.dbspace == d.number)
            .collect();
        let fchunk = chunks.first().map_or(0, |c| c.number);
        let _ = writeln!(
            o,
            "{:<16x} {:<8} {:<10} {:<8} {:<8} {:<8} {:<8} {:<8} {}",
            base + u64::from(d.number) * 0x1b08,
            d.number,
            format!("{:#x}", d.flags),
            fchunk,
            chunks.len(),
            d.page_kb * 1024,
            d.letters,
            "informix",
            d.name
        );
    }
    let _ = writeln!(o, " {} active, 2047 maximum", schema::DBSPACES.len());
    o.push_str("\nChunks\n");
    o.push_str(
        "address          chunk/dbs     offset     size       free       bpages     flags pathname\n",
    );
    for c in &schema::CHUNKS {
        let (_, free) = schema::chunk_usage(c);
        let _ = writeln!(
            o,
            // The bpages column is empty for chunks of the default page size pools.
            "{:<16x} {:<6} {:<6} {:<10} {:<10} {:<10} {:<10} PO-B-- {}",
            base + 0x40_0000 + u64::from(c.number) * 0x2240,
            c.number,
            c.dbspace,
            0,
            c.size,
            free,
            "",
            c.path
        );
    }
    let _ = writeln!(o, " {} active, 32766 maximum", schema::CHUNKS.len());
    o.push_str("\nNOTE: The values in the \"size\" and \"free\" columns for DBspace chunks are\n");
    o.push_str("      displayed in terms of \"pgsize\" of the DBspace to which they belong.\n");
    o.push_str("\n\nExpanded chunk capacity mode: always\n");
}

/// What a session's SQL looks like in `onstat -g ses` / `-g sql`.
struct Sql {
    stmt_type: &'static str,
    isolation: &'static str,
    lock_mode: &'static str,
    cursor: &'static str,
    id: u64,
    text: String,
    fe: &'static str,
}

/// The isolation level a session runs at (`CR`, `DR`): its statement's (`sql_of`), told
/// without printing the statement (`onstat -x` asks it of every session each second).
pub(crate) fn isolation_of(s: &Session) -> &'static str {
    let dirty = match s.role {
        Role::Slow(_) => true,
        Role::Plain | Role::Local | Role::CkptWaiter(_) | Role::MutexWaiter(_) => s.sql % 5 == 4,
        _ => false,
    };
    if dirty {
        "DR"
    } else {
        "CR"
    }
}

fn sql_of(s: &Session) -> Sql {
    let n = 1_001 + s.sql % 900;
    let fe = match s.user {
        "webapp" | "svc_api" => "4.50",
        _ => "9.24",
    };
    let sql = |stmt_type, isolation, lock_mode, cursor, text: String| Sql {
        stmt_type,
        isolation,
        lock_mode,
        cursor,
        id: 2 + s.sql % 40,
        text,
        fe,
    };
    match s.role {
        Role::Chain(0) => sql(
            "UPDATE",
            "CR",
            "Wait 30",
            "slctcur",
            "update customer set balance = balance + 10.00\n  where customer_num = 104".into(),
        ),
        Role::Chain(1) => sql(
            "UPDATE",
            "CR",
            "Wait 300",
            "updcur",
            "update customer set last_order = today\n  where customer_num = 104".into(),
        ),
        Role::Chain(2) => sql(
            "UPDATE",
            "CR",
            "Wait 300",
            "updcur",
            "update items set quantity = quantity + 1\n  where order_num = 1007 and item_num = 2"
                .into(),
        ),
        Role::Chain(_) => sql(
            "UPDATE",
            "CR",
            "Wait 300",
            "updcur",
            "update orders set paid_date = today\n  where order_num = 1002".into(),
        ),
        Role::Inserter(_) => sql(
            "INSERT",
            "CR",
            "Wait 10",
            "inscur",
            format!(
                "insert into order_log (order_num, event, logged_at)\n  values ({n}, 'PICKED', current)"
            ),
        ),
        Role::Updater(_) => sql(
            "UPDATE",
            "CR",
            "Wait 10",
            "updcur",
            format!(
                "update orders set ship_date = null, ship_instruct = 'hold'\n  where order_num = {n}"
            ),
        ),
        Role::Slow(_) => sql(
            "SELECT",
            "DR",
            "Not Wait",
            "exp_cur",
            "select o.order_num, o.order_date, i.*, s.description\n  from orders o, items i, stock s\n  where o.order_num = i.order_num and i.stock_num = s.stock_num\n    and o.order_date >= '01/01/2020'".into(),
        ),
        Role::Critical => sql(
            "INSERT",
            "CR",
            "Wait 60",
            "ldcur",
            "insert into order_log select * from order_log_stage".into(),
        ),
        Role::LongTxn => sql(
            "DELETE",
            "CR",
            "Wait 60",
            "purgecur",
            "delete from order_log\n  where logged_at < current - 90 units day".into(),
        ),
        Role::MutexHolder => sql(
            "UPDATE",
            "CR",
            "Wait 30",
            "updcur",
            "update items set total_price = total_price * 1.02\n  where order_num between 1001 and 90000".into(),
        ),
        Role::Plain | Role::Local | Role::CkptWaiter(_) | Role::MutexWaiter(_) => match s.sql % 5 {
            0 => sql(
                "SELECT",
                "CR",
                "Wait 30",
                "slctcur",
                format!("select * from orders where order_num = {n}"),
            ),
            1 => sql(
                "SELECT",
                "CR",
                "Wait 30",
                "slctcur",
                format!(
                    "select customer_num, fname, lname, company\n  from customer where zipcode = '{}'",
                    94_000 + s.sql % 900
                ),
            ),
            2 => sql(
                "UPDATE",
                "CR",
                "Wait 30",
                "updcur",
                format!("update orders set paid_date = today\n  where order_num = {n}"),
            ),
            3 => sql(
                "INSERT",
                "CR",
                "Wait 30",
                "inscur",
                format!(
                    "insert into items (item_num, order_num, stock_num, manu_code, quantity, total_price)\n  values (1, {n}, 6, 'SMT', 1, 36.00)"
                ),
            ),
            _ => sql(
                "SELECT",
                "DR",
                "Not Wait",
                "slctcur",
                format!("select sum(total_price) from items\n  where order_num = {n}"),
            ),
        },
    }
}

/// A client session's pool at second `t`, total and used: what `onstat -g ses` prints for it,
/// in the list and in its detail, and what the ground truth reads. It grows by 8 KB a minute
/// over eight minutes, then its statement's memory is freed: memory moves slowly.
pub(crate) fn session_memory(s: &Session, t: u64) -> (u64, u64) {
    let grown = (t / 60 + s.idx as u64) % 8;
    let total = 8_192 * (12 + s.sql % 40 + grown);
    let used = total * (40 + s.sql % 30) / 100;
    (total, used)
}

/// The pool of the session of thread `th` at the world's moment: a daemon's (no client
/// session) is the smallest one.
fn memory_of(w: &World<'_>, th: &Thread) -> (u64, u64) {
    th.session
        .and_then(|i| w.pop.sessions.get(i))
        .map_or((12_288, 7_936), |s| session_memory(s, w.now.t))
}

/// `onstat -g ses`, the list: every session with a thread, the newest first (as onstat prints
/// them), each with its threads and the memory its `-g ses <sid>` prints at that moment.
pub(crate) fn onstat_g_ses_list(w: &World<'_>, o: &mut String) {
    banner_into(w, o);
    let all = w.threads();
    let mut by_sid: std::collections::BTreeMap<u64, (&Thread, usize)> =
        std::collections::BTreeMap::new();
    for th in all.iter().filter(|t| t.sid != 0) {
        by_sid.entry(th.sid).or_insert((th, 0)).1 += 1;
    }
    o.push_str(
        "session                                      #RSAM    total      used       dynamic\n",
    );
    o.push_str(
        "id       user     tty      pid      hostname threads  memory     memory     explain\n",
    );
    let mut r = text::Rows::new(o);
    for (sid, (first, n)) in by_sid.iter().rev() {
        let (pid, host) = match first.session.and_then(|i| w.pop.sessions.get(i)) {
            Some(s) => (u64::from(s.pid), w.client(s.idx).0),
            None => (0, "-"),
        };
        let (total, used) = memory_of(w, first);
        // `{:<8} {:<8} {:<8} {:<8} {:<8} {:<8} {:<10} {:<10} off`, in place.
        r.dec(*sid, 8);
        r.ascii(b' ');
        r.left(first.user, 8);
        r.str(" -        ");
        r.dec(pid, 8);
        r.ascii(b' ');
        r.left(host, 8);
        r.ascii(b' ');
        r.dec(*n as u64, 8);
        r.ascii(b' ');
        r.dec(total, 10);
        r.ascii(b' ');
        r.dec(used, 10);
        r.str(" off\n");
    }
}

/// The `Sess SQL ...` table and the statements: the part `onstat -g sql <sid>` prints.
fn sql_part(o: &mut String, s: &Session, sid: u64) {
    let q = sql_of(s);
    o.push_str("Sess       SQL            Current            Iso Lock       SQL  ISAM F.E.\n");
    o.push_str(
        "Id         Stmt type      Database           Lvl Mode       ERR  ERR  Vers  Explain\n",
    );
    let _ = writeln!(
        o,
        "{:<10} {:<14} {:<18} {:<3} {:<10} {:<4} {:<4} {:<5} Off",
        sid, q.stmt_type, "stores", q.isolation, q.lock_mode, 0, 0, q.fe
    );
    let _ = writeln!(o, "\nCurrent statement name : {}", q.cursor);
    let _ = writeln!(o, "\nCurrent SQL statement ({}) :", q.id);
    for line in q.text.lines() {
        let _ = writeln!(o, "  {line}");
    }
    o.push_str("\nLast parsed SQL statement :\n");
    for line in q.text.lines() {
        let _ = writeln!(o, "  {line}");
    }
}

fn ses_thread_row(o: &mut String, th: &Thread, curstk: u64) {
    let _ = writeln!(
        o,
        "{:<8} {:<8} {:<16x} {:<8} {:<8} {} -",
        th.tid,
        th.name,
        th.rstcb,
        flags_str(&th.flags),
        curstk,
        th.status.text()
    );
}

/// `onstat -g ses <sid>`: the session row, its program, threads, memory, and its SQL. Unknown
/// sids print the banner alone, as onstat does.
pub(crate) fn onstat_g_ses(w: &World<'_>, sid: u64) -> String {
    let mut o = banner(w);
    let all = w.threads();
    let threads: Vec<&Thread> = all.iter().filter(|t| t.sid == sid).collect();
    let Some(first) = threads.first() else {
        return o;
    };
    let session = first.session.and_then(|i| w.pop.sessions.get(i));
    let (total, used) = memory_of(w, first);
    o.push_str(
        "session           effective                            #RSAM    total      used       dynamic\n",
    );
    o.push_str(
        "id       user     user      tty      pid      hostname threads  memory     memory     explain\n",
    );
    let (pid, host) = match session {
        Some(s) => (s.pid.to_string(), w.client(s.idx).0),
        None => ("0".to_string(), "-"),
    };
    let _ = writeln!(
        o,
        "{:<8} {:<8} {:<9} {:<8} {:<8} {:<8} {:<8} {:<10} {:<10} off",
        sid,
        first.user,
        "-",
        "-",
        pid,
        host,
        threads.len(),
        total,
        used
    );
    if let Some(s) = session {
        let _ = writeln!(o, "\nProgram :\n{}", s.program);
    }
    o.push_str("\ntid      name     rstcb            flags    curstk   status\n");
    for th in &threads {
        let curstk = 4_000 + below(w.pop.seed, Salt::Memory, th.tid, 0, 3_000);
        ses_thread_row(&mut o, th, curstk);
    }
    let pools = w.pop.layout.pools + first.tid * 0x3000;
    let _ = writeln!(o, "\nMemory pools    count 2");
    o.push_str("name         class addr              totalsize  freesize   #allocfrag #freefrag\n");
    let free = total - used;
    let _ = writeln!(
        o,
        "{:<12} {:<5} {:<16x} {:<10} {:<10} {:<10} {}",
        sid,
        "V",
        pools,
        total - 8_192,
        free.saturating_sub(2_488),
        120 + total / 2_048,
        12 + total / 16_384
    );
    let _ = writeln!(
        o,
        "{:<12} {:<5} {:<16x} {:<10} {:<10} {:<10} {}",
        format!("{sid}*O0"),
        "V",
        pools + 0x19_5000,
        8_192,
        2_488.min(free),
        1,
        1
    );
    o.push_str("\nname           free       used           name           free       used\n");
    let pairs = [
        ("overhead", 0, 6_576, "scb", 0, 144),
        ("opentable", 0, 6_744 + used / 64, "filetable", 0, 1_200),
        ("log", 0, 16_536, "temprec", 0, 21_664),
        ("ralloc", 0, 55_264 + used / 8, "gentcb", 0, 1_592),
        ("ostcb", 0, 2_952, "sqscb", 0, 20_136),
        ("sql", 0, 72, "hashfiletab", 0, 552),
        ("osenv", 0, 2_800, "sqtcb", 0, 9_248),
        ("fragman", 0, 1_240, "", 0, 0),
    ];
    for (a, af, au, b, bf, bu) in pairs {
        if b.is_empty() {
            let _ = writeln!(o, "{a:<14} {af:<10} {au}");
        } else {
            let _ = writeln!(o, "{a:<14} {af:<10} {au:<14} {b:<14} {bf:<10} {bu}");
        }
    }
    let Some(s) = session else {
        return o;
    };
    o.push_str("\nsqscb info\n");
    o.push_str("scb              sqscb            optofc   pdqpriority optcompind  directives\n");
    let _ = writeln!(
        o,
        "{:<16x} {:<16x} {:<8} {:<11} {:<11} {}",
        pools + 0x4_71d8,
        pools + 0x3_bfe8,
        0,
        if s.pdq { 50 } else { 0 },
        2,
        1
    );
    o.push('\n');
    sql_part(&mut o, s, sid);
    o
}

/// `onstat -g sql <sid>`: the banner and the SQL part of `-g ses <sid>`; the banner alone for a
/// sid with no SQL session.
pub(crate) fn onstat_g_sql(w: &World<'_>, sid: u64) -> String {
    let mut o = banner(w);
    if let Some(s) = w.slot_of_sid(sid).and_then(|i| w.pop.sessions.get(i)) {
        sql_part(&mut o, s, sid);
    }
    o
}

/// The shape of the plan a statement runs: (opname, in1, in2) per operator, root first, the
/// inputs as indexes into the list.
type Shape = &'static [(&'static str, Option<usize>, Option<usize>)];

/// A plausible plan for the statement `sql_of` gives the session: a scan for one table, a
/// group over a scan for an aggregate, joins of scans for the report's three tables, an insert
/// over a scan for `insert ... select`, an insert alone for `insert ... values`.
fn plan_shape(q: &Sql) -> Shape {
    let text = q.text.as_str();
    if text.contains(", items i, stock s") {
        &[
            ("hjoin", Some(1), Some(4)),
            ("nljoin", Some(2), Some(3)),
            ("scan", None, None),
            ("scan", None, None),
            ("scan", None, None),
        ]
    } else if text.starts_with("insert") && text.contains("select") {
        &[("insert", Some(1), None), ("scan", None, None)]
    } else if text.starts_with("insert") {
        &[("insert", None, None)]
    } else if text.contains("sum(") {
        &[("group", Some(1), None), ("scan", None, None)]
    } else {
        &[("scan", None, None)]
    }
}

/// `onstat -g pqs <sid>`: the operators of the query the session is in the middle of (any
/// state but waiting for its client or rolling back), rows growing with the seconds since its
/// statement began (its state's period); the title and column header alone otherwise, and the
/// banner alone for a sid with no session.
pub(crate) fn onstat_g_pqs(w: &World<'_>, sid: u64) -> String {
    let mut o = banner(w);
    let Some(i) = w.slot_of_sid(sid) else {
        return o;
    };
    let (s, sn) = (&w.pop.sessions[i], w.sessions.get(i));
    o.push_str("Query Operators:\n");
    o.push_str(
        "addr     ses-id   opname    phase   rows   time           in1         in2    stmt-type\n",
    );
    let in_statement = sn.is_some_and(|sn| {
        !matches!(
            sn.activity,
            Activity::Idle { .. } | Activity::Rollback { .. }
        )
    });
    if !in_statement {
        return o;
    }
    let q = sql_of(s);
    let shape = plan_shape(&q);
    // Seconds into the statement: its state changes every `period` s, shifted by `offset`.
    let into = (w.now.t + s.offset) % s.period.max(1) + 1;
    let addr = |k: usize| s.rstcb + 0x2_0000 + 0x1c0 * k as u64;
    for (k, (opname, in1, in2)) in shape.iter().enumerate() {
        // The leaves read the most; an operator over an input passes on a part of it.
        let read = (s.reads_rate.max(1) / 4 + 7 * k as u64) * into;
        let rows = read / (1 + u64::from(in1.is_some()) * 3);
        let centis = into * 100 * (shape.len() - k) as u64 / (shape.len() as u64 + 1);
        let time = format!(
            "{:02}:{:02}.{:02}",
            centis / 6000,
            centis / 100 % 60,
            centis % 100
        );
        let input = |x: Option<usize>| x.map_or("0".to_string(), |j| format!("{:x}", addr(j)));
        let _ = writeln!(
            o,
            "{:<8x} {:<8} {:<9} {:<7} {:<6} {:<8} {:>10} {:>11}    {}",
            addr(k),
            sid,
            opname,
            "next",
            rows,
            time,
            input(*in1),
            input(*in2),
            q.stmt_type
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_is_a_civil_date() {
        assert_eq!(clock(0), ("11/22/2026".to_string(), "13:30:00".to_string()));
        assert_eq!(clock(-13 * 3_600 - 30 * 60 - 1).0, "11/21/2026");
        let boot = clock(-(UPTIME_AT_ZERO as i64));
        assert_eq!(boot, ("11/10/2026".to_string(), "10:25:55".to_string()));
        let epoch = crate::demo::EPOCH.unix_timestamp();
        assert_eq!(CLOCK_AT_ZERO, epoch);
    }

    /// `onstat -x`'s isolation of a session is the one of the statement `-g sql` prints for
    /// it, for every role and statement.
    #[test]
    fn isolation_is_the_statements() {
        for (seed, n) in [(1, 5_000), (2, 300), (3, 1_000)] {
            let pop = Population::new(seed, n, seed == 2);
            for s in &pop.sessions {
                assert_eq!(
                    isolation_of(s),
                    sql_of(s).isolation,
                    "{:?} {}",
                    s.role,
                    s.sql
                );
            }
        }
    }
}
