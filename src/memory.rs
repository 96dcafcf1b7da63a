//! The allocator's settings for a long-running process on a database server, and the terminal
//! given back when the process aborts (an allocation that failed: see `guard_terminal`).
//!
//! glibc's malloc serves allocations above its mmap threshold (128 KiB at start) with their own
//! `mmap`, returned to the system when freed. But by default the threshold moves: each time such
//! a block is freed, the threshold rises to its size (up to 32 MiB). With a 5,000-session
//! instance ifxtop allocates and frees about 28 MB a second in blocks of 128 KiB to a few MB
//! (the commands' outputs, their parsed rows, the snapshot's rows), so after a minute all of
//! them come from the heap, whose freed middle stays resident.
//!
//! Measured with `.ci/soak` (the release TUI, `--demo --demo-sessions 5000`, 5 minutes) and
//! the cycle bench (parse, apply and join, ms of CPU per second of polling):
//!
//! | mmap threshold      | resident     | peak    | cycle bench |
//! |---------------------|--------------|---------|-------------|
//! | moving (default)    | 42-51 MB     | 51 MB   | 11.3 ms/s   |
//! | fixed at 128 KiB    | 32-34 MB     | 39 MB   | 15.4 ms/s   |
//! | fixed at 512 KiB    | 34-36 MB     | 41 MB   | 13.2 ms/s   |
//! | fixed at 1 MiB      | 40-42 MB     | 46 MB   | 13.5 ms/s   |
//!
//! Each mmapped block is page-faulted in afresh, which is what the CPU pays; 512 KiB keeps
//! nearly all of the memory saved for half the CPU of 128 KiB.

/// The threshold `tune` sets, which then no longer moves.
pub const MMAP_THRESHOLD: usize = 512 * 1024;

/// How much free memory the top of a heap may keep before glibc gives it back: twice the mmap
/// threshold, the ratio glibc's moving threshold keeps. Set too, because an earlier move of the
/// mmap threshold (before `tune`) also raised this one, up to 64 MiB.
pub const TRIM_THRESHOLD: usize = 2 * MMAP_THRESHOLD;

/// Malloc arenas at most. glibc gives threads that allocate at once arenas of their own, up to
/// 8 per core, and each reserves 64 MiB of address space, which a `ulimit -v` counts: 16 of
/// them on two cores are the whole of a 1 GB limit, as database hosts set it. ifxtop's work is
/// on one thread; the few that parse beside it share two.
pub const ARENA_MAX: usize = 2;

/// Fixes glibc malloc's mmap threshold at [`MMAP_THRESHOLD`] (blocks that large go back to
/// the system when freed, for as long as the process runs) and its trim threshold at
/// [`TRIM_THRESHOLD`], and its arenas at [`ARENA_MAX`]. Call once at start (the binary's `main`,
/// the benches). Does nothing on other C libraries. A setting the user chose through glibc's
/// own environment (`MALLOC_MMAP_THRESHOLD_`, `MALLOC_TRIM_THRESHOLD_`, `MALLOC_ARENA_MAX`, or
/// `glibc.malloc.*` in `GLIBC_TUNABLES`) is left as they set it. Returns whether every setting
/// took.
pub fn tune() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let env = |name: &str| std::env::var(name).ok();
        let set = |param: libc::c_int, value: usize| {
            let value = libc::c_int::try_from(value).unwrap_or(libc::c_int::MAX);
            // SAFETY: mallopt only sets a malloc parameter; it takes no pointers and is safe
            // to call at any time from any thread (glibc takes the arena locks it needs).
            #[allow(unsafe_code)]
            let ok = unsafe { libc::mallopt(param, value) };
            ok == 1
        };
        let mut ok = true;
        if !chosen_by_user(Threshold::Mmap, env) {
            ok &= set(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        }
        if !chosen_by_user(Threshold::Trim, env) {
            ok &= set(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
        }
        if !chosen_by_user(Threshold::Arenas, env) {
            ok &= set(libc::M_ARENA_MAX, ARENA_MAX);
        }
        ok
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// This process's resident memory (`VmRSS`) in bytes, from `/proc/self/status` (Linux; 0
/// elsewhere): what the soak bench and the tests of [`give_back`] read.
pub fn resident() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// At most one [`give_back`] this often.
pub const GIVE_BACK_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// When [`give_back`] last gave memory back (milliseconds since the process's first call).
static LAST_GIVE_BACK_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Gives the free pages inside glibc's heaps back to the system (`malloc_trim(0)`), at most
/// every [`GIVE_BACK_EVERY`]; call it when a second's work is done (a snapshot built, the one
/// before it let go). Returns whether it trimmed.
///
/// Blocks under the mmap threshold come from the heaps, and a heap keeps the pages of every
/// free chunk between live ones: with ifxtop's long-lived rows (histories) placed between each
/// second's short-lived ones, that free middle grew to 8 MB after 35 minutes at 5,000 sessions
/// (`malloc_info`: 22.9 MB of heap, 8.1 MB of it free), most of the resident memory's growth
/// over the hour. The trim walks the free chunks and unmaps their whole pages (about a
/// millisecond); a page used again is faulted in afresh. A trim threshold the user chose
/// through glibc's environment (see [`tune`]) is their choice of when to give back: then this
/// does nothing.
pub fn give_back() -> bool {
    static USERS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *USERS.get_or_init(|| chosen_by_user(Threshold::Trim, |v| std::env::var(v).ok())) {
        return false;
    }
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let start = START.get_or_init(std::time::Instant::now);
    let now = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    let every = u64::try_from(GIVE_BACK_EVERY.as_millis()).unwrap_or(u64::MAX);
    let last = LAST_GIVE_BACK_MS.load(std::sync::atomic::Ordering::Relaxed);
    if last != 0 && now.saturating_sub(last) < every {
        return false;
    }
    // One caller wins a moment; the others leave it.
    if LAST_GIVE_BACK_MS
        .compare_exchange(
            last,
            now.max(1),
            std::sync::atomic::Ordering::Relaxed,
            std::sync::atomic::Ordering::Relaxed,
        )
        .is_err()
    {
        return false;
    }
    trim()
}

/// `malloc_trim(0)` on glibc; nothing elsewhere.
fn trim() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim takes no pointer; glibc takes each arena's lock while it walks
        // the arena's free chunks, so any thread may call it at any time.
        #[allow(unsafe_code)]
        unsafe {
            libc::malloc_trim(0);
        }
        true
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// The two malloc parameters `tune` sets.
#[derive(Clone, Copy, Debug)]
enum Threshold {
    Mmap,
    Trim,
    Arenas,
}

/// Whether the environment (`env` looks a variable up) sets `which` for glibc: its own
/// variable, or its tunable in `GLIBC_TUNABLES` (`glibc.malloc.mmap_threshold=...:...`).
fn chosen_by_user(which: Threshold, env: impl Fn(&str) -> Option<String>) -> bool {
    let (var, tunable) = match which {
        Threshold::Mmap => ("MALLOC_MMAP_THRESHOLD_", "glibc.malloc.mmap_threshold"),
        Threshold::Trim => ("MALLOC_TRIM_THRESHOLD_", "glibc.malloc.trim_threshold"),
        Threshold::Arenas => ("MALLOC_ARENA_MAX", "glibc.malloc.arena_max"),
    };
    if env(var).is_some_and(|v| !v.is_empty()) {
        return true;
    }
    env("GLIBC_TUNABLES").is_some_and(|t| {
        t.split(':').any(|kv| {
            kv.split_once('=')
                .is_some_and(|(k, v)| k == tunable && !v.is_empty())
        })
    })
}

/// The terminal as it was before ifxtop took it (its fd and settings), for the abort path.
#[cfg(unix)]
static SAVED_TTY: std::sync::OnceLock<(libc::c_int, libc::termios)> = std::sync::OnceLock::new();
/// Whether the screen holds the terminal now (raw mode, the alternate screen, no cursor).
static TERMINAL_TAKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// The size of the last allocation that failed (0: none), for the message on abort.
static FAILED_ALLOCATION: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static ABORT_HANDLER: std::sync::Once = std::sync::Once::new();

/// What leaves the alternate screen and shows the cursor (crossterm's `LeaveAlternateScreen`
/// and `Show`).
const LEAVE_SCREEN: &[u8] = b"\x1b[?1049l\x1b[?25h";

/// Makes an abort give the terminal back: call it before the screen takes the terminal (raw
/// mode, the alternate screen), and [`terminal_released`] when it gives it back.
///
/// An allocation that fails does not panic in Rust: the process aborts (SIGABRT) without
/// running the panic hook, and stable Rust has no hook of its own for it
/// (`std::alloc::set_alloc_error_hook` is unstable). So the terminal's settings are saved here,
/// and a SIGABRT handler puts them back, leaves the alternate screen and shows the cursor, then
/// lets the abort go on (the process still ends by SIGABRT, with its core dump if any). It
/// covers every abort: an allocation failing, a panic while panicking.
pub fn guard_terminal() {
    #[cfg(unix)]
    {
        use std::io::IsTerminal;
        use std::os::fd::IntoRawFd;
        // The terminal crossterm puts in raw mode: standard input when it is one, else
        // /dev/tty (kept open for the process: the handler may need it at any time).
        let fd = if std::io::stdin().is_terminal() {
            Some(libc::STDIN_FILENO)
        } else {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/tty")
                .ok()
                .map(IntoRawFd::into_raw_fd)
        };
        if let Some(fd) = fd {
            if SAVED_TTY.get().is_none() {
                // SAFETY: `termios` is plain data (integers and arrays), so all zeroes is a valid
                // value; tcgetattr only writes into the struct it is given, which outlives the
                // call, and fails harmlessly (we then keep nothing) on a bad fd.
                #[allow(unsafe_code)]
                let saved = unsafe {
                    let mut t: libc::termios = std::mem::zeroed();
                    (libc::tcgetattr(fd, &mut t) == 0).then_some(t)
                };
                if let Some(t) = saved {
                    let _ = SAVED_TTY.set((fd, t));
                }
            }
        }
        ABORT_HANDLER.call_once(|| {
            // SAFETY: the handler only does what is async-signal-safe: atomic loads and stores,
            // write(2) and tcsetattr(3) on saved, immutable data (OnceLock::get is a load), and
            // formatting into a stack buffer. SA_RESETHAND puts the default action back at
            // once, so the abort that follows (glibc's abort() raises SIGABRT again after a
            // handler returns) ends the process.
            #[allow(unsafe_code)]
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_abort as *const () as libc::sighandler_t;
                action.sa_flags = libc::SA_RESETHAND;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(libc::SIGABRT, &action, std::ptr::null_mut());
            }
        });
    }
    TERMINAL_TAKEN.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// The screen gave the terminal back: an abort from now on has nothing to restore.
pub fn terminal_released() {
    TERMINAL_TAKEN.store(false, std::sync::atomic::Ordering::SeqCst);
}

/// Records an allocation of `size` bytes that failed (the allocator wrapper below), so the
/// abort that follows can say so once the terminal is back. The first one is the cause (std's
/// own message and backtrace may fail to allocate after it).
fn allocation_failed(size: usize) {
    let _ = FAILED_ALLOCATION.compare_exchange(
        0,
        size.max(1),
        std::sync::atomic::Ordering::SeqCst,
        std::sync::atomic::Ordering::SeqCst,
    );
}

/// The SIGABRT handler: the terminal back as it was, then a line saying why when an
/// allocation failed (std's own message went to the alternate screen, which is gone).
#[cfg(unix)]
extern "C" fn on_abort(_signal: libc::c_int) {
    use std::sync::atomic::Ordering;
    if TERMINAL_TAKEN.swap(false, Ordering::SeqCst) {
        write_all(libc::STDOUT_FILENO, LEAVE_SCREEN);
        if let Some((fd, t)) = SAVED_TTY.get() {
            // SAFETY: tcsetattr reads the saved settings, which live for the whole process.
            #[allow(unsafe_code)]
            unsafe {
                libc::tcsetattr(*fd, libc::TCSANOW, t);
            }
        }
        let size = FAILED_ALLOCATION.load(Ordering::SeqCst);
        if size > 0 {
            let mut line = [0u8; 96];
            let mut n = 0;
            for part in [
                &b"ifxtop: out of memory (an allocation of "[..],
                digits(size, &mut [0u8; 20]),
                &b" bytes failed); aborting\n"[..],
            ] {
                let end = (n + part.len()).min(line.len());
                line[n..end].copy_from_slice(&part[..end - n]);
                n = end;
            }
            write_all(libc::STDERR_FILENO, &line[..n]);
        }
    }
}

/// `n` in decimal, into `buf` (no allocation: for the signal handler).
fn digits(mut n: usize, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 || at == 0 {
            return &buf[at..];
        }
    }
}

#[cfg(unix)]
fn write_all(fd: libc::c_int, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: write(2) reads at most `len` bytes from a live slice.
        #[allow(unsafe_code)]
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n <= 0 {
            return;
        }
        bytes = bytes.get(n as usize..).unwrap_or_default();
    }
}

/// The system allocator, noting the size of an allocation that fails (the abort that follows
/// then says so: see `on_abort`), and keeping a few large blocks for reuse (glibc: see
/// [`reuse`]). The binary installs it (`#[global_allocator]` in main.rs).
#[derive(Debug, Default)]
pub struct Allocator;

/// Large blocks kept for the next allocation of about their size.
///
/// Every second ifxtop allocates and frees the same large blocks again: a command's output,
/// its parsed rows, a snapshot's rows (12 blocks of 0.5-4 MB a second at 5,000 sessions, 15 MB
/// in all). Above [`MMAP_THRESHOLD`] glibc maps each afresh and unmaps it when freed, and the
/// kernel faults every page of it in again, zeroed: `.ci/side-by-side` measured the page
/// faults at a sixth of the whole process's CPU (3.20 % of a core at 512 KiB, 2.70 % with the
/// threshold at 2 MiB, where the heap then kept 60 MB resident instead of 43).
///
/// Kept here instead: at most [`reuse::SLOTS`] blocks and [`reuse::MAX_BYTES`] in all, each
/// given to an allocation it fits with at most half of it to spare, and given back to the
/// system when [`reuse::STALE`] large allocations went by without taking it. A fresh large
/// block is asked a little larger than needed ([`reuse::ROOM`]: its untouched pages cost no
/// memory), so the next second's slightly larger output fits it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub mod reuse {
    use std::sync::Mutex;

    /// Blocks kept at most.
    pub const SLOTS: usize = 6;
    /// Bytes kept at most.
    pub const MAX_BYTES: usize = 4 << 20;
    /// Large allocations a kept block may see go by before it is given back.
    pub const STALE: u32 = 48;
    /// A fresh large block is asked this fraction larger (1/8).
    pub const ROOM: usize = 8;

    #[derive(Clone, Copy)]
    struct Kept {
        ptr: usize,
        usable: usize,
        /// Large allocations since it was kept.
        age: u32,
    }

    static KEPT: Mutex<[Option<Kept>; SLOTS]> = Mutex::new([None; SLOTS]);

    /// Whether a block of `usable` bytes serves `size`, with at most half of it to spare.
    pub(super) fn fits(usable: usize, size: usize) -> bool {
        usable >= size && usable - size <= size / 2
    }

    /// Whether an allocation of `size` bytes aligned to `align` is one to serve here: large,
    /// and aligned as malloc aligns every block.
    pub(super) fn applies(size: usize, align: usize) -> bool {
        size >= super::MMAP_THRESHOLD && align <= 16
    }

    /// A kept block of at least `size` bytes (and at most half again), taken out; the others
    /// age, and those gone stale are given back.
    pub(super) fn take(size: usize) -> Option<*mut u8> {
        let mut kept = KEPT.lock().ok()?;
        let mut best: Option<(usize, usize)> = None;
        for (i, slot) in kept.iter_mut().enumerate() {
            let Some(k) = slot.as_mut() else {
                continue;
            };
            k.age += 1;
            if fits(k.usable, size) && best.is_none_or(|(_, u)| u > k.usable) {
                best = Some((i, k.usable));
            }
        }
        let taken = best.and_then(|(i, _)| kept[i].take());
        for slot in kept.iter_mut() {
            if let Some(k) = slot.filter(|k| k.age > STALE) {
                *slot = None;
                // SAFETY: a kept block came from malloc and is owned by no one else.
                #[allow(unsafe_code)]
                unsafe {
                    libc::free(k.ptr as *mut libc::c_void)
                };
            }
        }
        taken.map(|k| k.ptr as *mut u8)
    }

    /// Keeps the freed block `ptr` if there is room (the oldest kept block given back to make
    /// it); false when it is not kept (the caller frees it).
    pub(super) fn keep(ptr: *mut u8) -> bool {
        // SAFETY: `ptr` is a live block from malloc.
        #[allow(unsafe_code)]
        let usable = unsafe { libc::malloc_usable_size(ptr.cast()) };
        if usable > MAX_BYTES {
            return false;
        }
        let Ok(mut kept) = KEPT.lock() else {
            return false;
        };
        let total = |kept: &[Option<Kept>; SLOTS]| -> usize {
            kept.iter().flatten().map(|k| k.usable).sum()
        };
        while kept.iter().all(Option::is_some) || total(&kept) + usable > MAX_BYTES {
            let Some(oldest) = (0..SLOTS)
                .filter(|&i| kept[i].is_some())
                .max_by_key(|&i| kept[i].map_or(0, |k| k.age))
            else {
                return false;
            };
            if let Some(k) = kept[oldest].take() {
                // SAFETY: as in `take`.
                #[allow(unsafe_code)]
                unsafe {
                    libc::free(k.ptr as *mut libc::c_void)
                };
            }
        }
        if let Some(slot) = kept.iter_mut().find(|s| s.is_none()) {
            *slot = Some(Kept {
                ptr: ptr as usize,
                usable,
                age: 0,
            });
            return true;
        }
        false
    }

    /// A large block: a kept one, else a fresh one asked [`ROOM`] larger. Cold: a dozen
    /// calls a second against the many thousands of small allocations that only test for it.
    #[cold]
    #[inline(never)]
    pub(super) fn alloc(size: usize) -> *mut u8 {
        if let Some(p) = take(size) {
            return p;
        }
        // SAFETY: malloc of a non-zero size; its blocks are aligned to 16.
        #[allow(unsafe_code)]
        let p = unsafe { libc::malloc(size.saturating_add(size / ROOM)) }.cast::<u8>();
        if p.is_null() {
            super::allocation_failed(size);
        }
        p
    }

    /// A large block freed: kept, or given back.
    #[cold]
    #[inline(never)]
    pub(super) fn dealloc(ptr: *mut u8) {
        if !keep(ptr) {
            // SAFETY: a live block of malloc's (System uses malloc at this alignment), freed
            // once.
            #[allow(unsafe_code)]
            unsafe {
                libc::free(ptr.cast())
            };
        }
    }

    /// A block of `old` bytes grown (or shrunk) to a large `new`: in place where it has the
    /// room, else into a kept block; `None` leaves it to malloc's realloc.
    ///
    /// # Safety
    /// `ptr` is a live block of malloc's holding `old` bytes.
    #[cold]
    #[inline(never)]
    #[allow(unsafe_code)]
    pub(super) unsafe fn realloc(ptr: *mut u8, old: usize, new: usize) -> Option<*mut u8> {
        // SAFETY: `ptr` is a live block of malloc's (the caller's contract).
        let usable = unsafe { libc::malloc_usable_size(ptr.cast()) };
        if fits(usable, new) {
            return Some(ptr);
        }
        let q = take(new)?;
        // SAFETY: both blocks are live and distinct; the old one holds `old` bytes, the new
        // one at least `new`.
        unsafe { std::ptr::copy_nonoverlapping(ptr, q, old.min(new)) };
        if applies(old, 16) {
            dealloc(ptr);
        } else {
            // SAFETY: a small block of malloc's, freed once.
            unsafe { libc::free(ptr.cast()) };
        }
        Some(q)
    }

    /// The blocks and bytes kept now.
    pub fn kept() -> (usize, usize) {
        KEPT.lock().map_or((0, 0), |k| {
            (
                k.iter().flatten().count(),
                k.iter().flatten().map(|k| k.usable).sum(),
            )
        })
    }
}

// Not inlined: inlined into every allocation site of the program, these methods cost 300 KB of
// the old-glibc binary (which has a 10 MB budget) for a call's worth of time.
// SAFETY: every call is passed to the system allocator with the same layout and pointer, but
// for large blocks aligned as malloc aligns every block (`reuse::applies`): those come from
// malloc (asked a little larger) or from blocks malloc gave and `reuse` kept, are freed with
// free or kept, and are grown in place where malloc_usable_size says they have the room.
// A null result is noted in an atomic.
#[allow(unsafe_code)]
unsafe impl std::alloc::GlobalAlloc for Allocator {
    #[inline(never)]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        if reuse::applies(layout.size(), layout.align()) {
            return reuse::alloc(layout.size());
        }
        // SAFETY: the caller's contract (a non-zero-sized layout) is passed on as it is.
        let p = unsafe { std::alloc::System.alloc(layout) };
        if p.is_null() {
            allocation_failed(layout.size());
        }
        p
    }

    #[inline(never)]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: as for `alloc`. (A fresh mapping is zero already: nothing kept is used.)
        let p = unsafe { std::alloc::System.alloc_zeroed(layout) };
        if p.is_null() {
            allocation_failed(layout.size());
        }
        p
    }

    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        if reuse::applies(layout.size(), layout.align()) {
            reuse::dealloc(ptr);
            return;
        }
        // SAFETY: `ptr` came from this allocator, that is from System, with this layout.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }

    #[inline(never)]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new: usize) -> *mut u8 {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        if reuse::applies(new, layout.align()) {
            // SAFETY: the caller's: `ptr` is live with `layout`.
            if let Some(q) = unsafe { reuse::realloc(ptr, layout.size(), new) } {
                return q;
            }
        }
        // SAFETY: as for `dealloc`; `new` is the caller's, passed on.
        let p = unsafe { std::alloc::System.realloc(ptr, layout, new) };
        if p.is_null() {
            allocation_failed(new);
        }
        p
    }
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    /// Where glibc puts a block it serves with its own mmap: the page start plus the 16-byte
    /// chunk header. A block cut from a heap lands anywhere on its page.
    fn mmapped(v: &[u8]) -> bool {
        v.as_ptr() as usize % 4096 == 16
    }

    fn lookup<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_string())
        }
    }

    /// The tests of the kept blocks, one at a time (they share the one store of blocks).
    static REUSE: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// Allocates `size` bytes through [`Allocator`], touching every page.
    fn big(size: usize) -> (*mut u8, std::alloc::Layout) {
        use std::alloc::GlobalAlloc;
        let layout = std::alloc::Layout::from_size_align(size, 8).expect("layout");
        // SAFETY: a non-zero size; the block is written within its size.
        #[allow(unsafe_code)]
        let p = unsafe {
            let p = Allocator.alloc(layout);
            assert!(!p.is_null());
            std::ptr::write_bytes(p, 0xab, size);
            p
        };
        (p, layout)
    }

    fn free(block: (*mut u8, std::alloc::Layout)) {
        use std::alloc::GlobalAlloc;
        // SAFETY: a block `big` gave, freed once.
        #[allow(unsafe_code)]
        unsafe {
            Allocator.dealloc(block.0, block.1)
        };
    }

    /// Lets every kept block go stale and be given back.
    fn drain() {
        use std::alloc::GlobalAlloc;
        let layout = std::alloc::Layout::from_size_align(reuse::MAX_BYTES * 4, 8).expect("layout");
        for _ in 0..=reuse::STALE {
            // SAFETY: allocated and freed at once, never touched (its pages cost nothing).
            #[allow(unsafe_code)]
            unsafe {
                Allocator.dealloc(Allocator.alloc(layout), layout)
            };
        }
        assert_eq!(reuse::kept().0, 0);
    }

    /// The same large block serves the same output a second later, rather than a fresh
    /// mapping faulted in page by page; a slightly larger one fits it too (asked with room).
    #[test]
    fn a_large_block_freed_serves_the_next_of_about_its_size() {
        let _one = REUSE.lock().unwrap_or_else(|e| e.into_inner());
        drain();
        let first = big(900 << 10);
        let at = first.0;
        free(first);
        assert_eq!(reuse::kept().0, 1);
        let again = big(950 << 10);
        assert_eq!(again.0, at, "the kept block, not a new one");
        assert_eq!(reuse::kept().0, 0);
        free(again);
        // Grown past its room: moved to another block (or remapped), its bytes kept.
        use std::alloc::GlobalAlloc;
        let b = big(600 << 10);
        // SAFETY: `b` is live; its first 600 KiB were written by `big`.
        #[allow(unsafe_code)]
        let grown = unsafe { Allocator.realloc(b.0, b.1, 3 << 20) };
        // SAFETY: the first 600 KiB moved with it.
        #[allow(unsafe_code)]
        let bytes = unsafe { std::slice::from_raw_parts(grown, 600 << 10) };
        assert!(bytes.iter().all(|&x| x == 0xab));
        free((
            grown,
            std::alloc::Layout::from_size_align(3 << 20, 8).expect("layout"),
        ));
        drain();
    }

    /// A kept block is not given to an allocation it would leave half empty; the blocks kept
    /// are few and bounded in bytes, and given back once nothing takes them.
    #[test]
    fn kept_blocks_are_bounded_and_given_back() {
        let _one = REUSE.lock().unwrap_or_else(|e| e.into_inner());
        drain();
        let large = big(2 << 20);
        let at = large.0;
        free(large);
        assert_eq!(reuse::kept().0, 1);
        let small = big(1 << 20);
        assert_ne!(small.0, at, "a 2 MiB block is not given to 1 MiB");
        assert_eq!(reuse::kept().0, 1, "the 2 MiB block still kept");
        free(small);
        let many: Vec<_> = (0..12).map(|i| big((600 << 10) + i * 4096)).collect();
        for b in many {
            free(b);
        }
        let (blocks, bytes) = reuse::kept();
        assert!(blocks <= reuse::SLOTS, "{blocks}");
        assert!(bytes <= reuse::MAX_BYTES, "{bytes}");
        assert!(blocks >= 4, "{blocks}");
        drain();
    }

    #[test]
    fn the_abort_message_writes_numbers_without_allocating() {
        let mut buf = [0u8; 20];
        assert_eq!(digits(0, &mut buf), b"0");
        assert_eq!(digits(268_435_456, &mut buf), b"268435456");
        assert_eq!(
            digits(usize::MAX, &mut buf),
            usize::MAX.to_string().as_bytes()
        );
    }

    #[test]
    fn a_threshold_set_in_the_environment_is_the_users_choice() {
        let none = lookup(&[]);
        assert!(!chosen_by_user(Threshold::Mmap, &none));
        assert!(!chosen_by_user(Threshold::Trim, &none));

        let trim = lookup(&[("MALLOC_TRIM_THRESHOLD_", "16777216")]);
        assert!(chosen_by_user(Threshold::Trim, &trim));
        assert!(!chosen_by_user(Threshold::Mmap, &trim));

        let mmap = lookup(&[("MALLOC_MMAP_THRESHOLD_", "131072")]);
        assert!(chosen_by_user(Threshold::Mmap, &mmap));
        assert!(!chosen_by_user(Threshold::Trim, &mmap));

        let tunables = lookup(&[(
            "GLIBC_TUNABLES",
            "glibc.malloc.arena_max=1:glibc.malloc.trim_threshold=0",
        )]);
        assert!(chosen_by_user(Threshold::Trim, &tunables));
        assert!(!chosen_by_user(Threshold::Mmap, &tunables));
        assert!(chosen_by_user(Threshold::Arenas, &tunables));
        assert!(!chosen_by_user(Threshold::Arenas, &none));
        assert!(chosen_by_user(
            Threshold::Arenas,
            lookup(&[("MALLOC_ARENA_MAX", "4")])
        ));

        // Empty values and look-alike names choose nothing.
        let empty = lookup(&[
            ("MALLOC_MMAP_THRESHOLD_", ""),
            (
                "GLIBC_TUNABLES",
                "glibc.malloc.mmap_threshold=:glibc.malloc.trim_threshold_x=5",
            ),
        ]);
        assert!(!chosen_by_user(Threshold::Mmap, &empty));
        assert!(!chosen_by_user(Threshold::Trim, &empty));
    }

    /// Threads that allocate share [`ARENA_MAX`] arenas: twenty threads, each allocating while
    /// the others live, reserve well under what twenty arenas of 64 MiB would (most of a 1 GB
    /// `ulimit -v`). In a child process: the address space measured is its own.
    #[test]
    fn threads_that_allocate_share_a_few_arenas() {
        const CHILD: &str = "IFXTOP_MEMORY_ARENA_CHILD";
        if std::env::var_os(CHILD).is_some() {
            assert!(tune(), "the settings took");
            let vm = || -> usize {
                std::fs::read_to_string("/proc/self/status")
                    .ok()
                    .and_then(|s| {
                        s.lines()
                            .find_map(|l| l.strip_prefix("VmSize:"))
                            .and_then(|v| {
                                v.trim().trim_end_matches("kB").trim().parse::<usize>().ok()
                            })
                    })
                    .unwrap_or(0)
                    * 1024
            };
            let before = vm();
            let threads = 20;
            let barrier = std::sync::Arc::new(std::sync::Barrier::new(threads + 1));
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    let b = barrier.clone();
                    std::thread::Builder::new()
                        .stack_size(64 * 1024)
                        .spawn(move || {
                            let v: Vec<u8> = std::hint::black_box(vec![1u8; 4096]);
                            b.wait();
                            b.wait();
                            drop(v);
                        })
                        .expect("a thread")
                })
                .collect();
            barrier.wait();
            let grown = vm().saturating_sub(before);
            barrier.wait();
            for h in handles {
                h.join().expect("joined");
            }
            assert!(
                grown < 256 * 1024 * 1024,
                "{} MB of address space for {threads} threads",
                grown / 1024 / 1024
            );
            return;
        }
        let exe = std::env::current_exe().expect("the test binary");
        let out = std::process::Command::new(exe)
            .args([
                "--exact",
                "memory::tests::threads_that_allocate_share_a_few_arenas",
                "--test-threads=1",
                "--nocapture",
            ])
            .env(CHILD, "1")
            .env_remove("MALLOC_ARENA_MAX")
            .env_remove("GLIBC_TUNABLES")
            .output()
            .expect("the child runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("1 passed"),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// malloc's state is the process's: other tests running beside this one free large blocks
    /// that glibc then hands out again from its heap (5 of 6 blocks mmapped, now and then). So
    /// the check runs alone, in a child process of this test binary.
    #[test]
    fn large_blocks_keep_their_own_mapping_after_a_larger_one_is_freed() {
        const CHILD: &str = "IFXTOP_MEMORY_TEST_CHILD";
        if std::env::var_os(CHILD).is_some() {
            return alone_large_blocks_keep_their_own_mapping();
        }
        let exe = std::env::current_exe().expect("the test binary");
        let out = std::process::Command::new(exe)
            .args([
                "--exact",
                "memory::tests::large_blocks_keep_their_own_mapping_after_a_larger_one_is_freed",
                "--test-threads=1",
                "--nocapture",
            ])
            .env(CHILD, "1")
            .env_remove("MALLOC_MMAP_THRESHOLD_")
            .env_remove("MALLOC_TRIM_THRESHOLD_")
            .env_remove("GLIBC_TUNABLES")
            .output()
            .expect("the child runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("1 passed"),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Free chunks inside the heap, pinned there by live ones, go back to the system with
    /// `give_back`, at most once a `GIVE_BACK_EVERY`. In a child process of its own: the
    /// resident memory measured is this process's, with no other test allocating beside it.
    #[test]
    fn free_pages_inside_the_heap_go_back() {
        const CHILD: &str = "IFXTOP_MEMORY_TRIM_CHILD";
        match std::env::var(CHILD).as_deref() {
            Ok("trim") => return alone_free_pages_go_back(),
            // A trim threshold of the user's: theirs to decide when memory goes back.
            Ok("users") => return assert!(!give_back(), "trimmed against the user's choice"),
            _ => {}
        }
        for (mode, users) in [("trim", None), ("users", Some("1048576"))] {
            let exe = std::env::current_exe().expect("the test binary");
            let mut child = std::process::Command::new(exe);
            child
                .args([
                    "--exact",
                    "memory::tests::free_pages_inside_the_heap_go_back",
                    "--test-threads=1",
                    "--nocapture",
                ])
                .env(CHILD, mode)
                .env_remove("MALLOC_MMAP_THRESHOLD_")
                .env_remove("MALLOC_TRIM_THRESHOLD_")
                .env_remove("GLIBC_TUNABLES");
            if let Some(v) = users {
                child.env("MALLOC_TRIM_THRESHOLD_", v);
            }
            let out = child.output().expect("the child runs");
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && text.contains("1 passed"),
                "{mode}: {text}{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    fn alone_free_pages_go_back() {
        assert!(tune());
        // 32 MB in 16 KiB blocks (under the mmap threshold: from the heap), every page
        // written; then all but one block in 16 freed, the live ones pinning the heap's top.
        let mut blocks: Vec<Option<Vec<u8>>> = (0..2048)
            .map(|i| Some(vec![(i % 251) as u8 + 1; 16 << 10]))
            .collect();
        for (i, b) in blocks.iter_mut().enumerate() {
            if i % 16 != 0 {
                drop(std::hint::black_box(b.take()));
            }
        }
        let before = resident();
        assert!(give_back(), "the first call trims");
        let after = resident();
        let freed = 30 << 20;
        assert!(
            before.saturating_sub(after) > freed / 2,
            "resident {before} before, {after} after: less than half of 30 MB given back"
        );
        // Again at once: left for later.
        assert!(!give_back(), "a second call within GIVE_BACK_EVERY");
        assert_eq!(blocks.iter().flatten().count(), 128);
    }

    fn alone_large_blocks_keep_their_own_mapping() {
        assert!(tune());
        // Freeing an 8 MB block raises glibc's moving threshold to 8 MB; tuned, it stays.
        let big = vec![1u8; 8 << 20];
        assert!(mmapped(&big));
        drop(std::hint::black_box(big));
        // Then blocks just above the threshold, as a poll's output and rows are: each its own
        // mapping, so freeing it gives the memory back. Untuned, they come from the heap.
        let blocks: Vec<Vec<u8>> = (0..6)
            .map(|i| vec![i as u8; MMAP_THRESHOLD + 4096 + i * 4096])
            .collect();
        let own = blocks.iter().filter(|b| mmapped(b)).count();
        assert_eq!(
            own,
            blocks.len(),
            "{own} of {} blocks mmapped",
            blocks.len()
        );
    }
}
