//! Fixed-width columns written straight into a `String`. The big tables (thousands of threads,
//! locks and sockets) are printed every second; `format!` padding would cost more than
//! everything else the demo does.

const LOWER: &[u8; 16] = b"0123456789abcdef";
const UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// How many hex digits `v` has (0 has one).
fn hex_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(4)
}

/// How many bytes [`Rows`] gathers before it pushes them onto the answer.
const ROWS_BUF: usize = 2048;

/// A table's rows written column by column into a buffer on the stack, and pushed onto the
/// answer a couple of kilobytes at a time (and what is left when it is dropped). Pushing each
/// column, each run of blanks and each digit onto the `String` on its own cost most of what
/// the demo's printing did, at thousands of rows a second.
///
/// Only whole `str`s and ASCII bytes are written, so what it pushes is always UTF-8. Every
/// column goes through [`Rows::take`], which never drops a byte: a request wider than the
/// buffer is written on the heap and pushed in its place. Its columns are `#[inline]`: each is
/// a few instructions, called for every column of thousands of rows from the printers' modules.
pub(crate) struct Rows<'a> {
    o: &'a mut String,
    buf: [u8; ROWS_BUF],
    len: usize,
    /// The one request wider than `buf` since the last push, written before what `buf` holds
    /// (it was pushed first). Empty, and nothing allocated, for the tables' columns.
    wide: Vec<u8>,
}

impl<'a> Rows<'a> {
    /// Rows written at the end of `o`.
    pub(crate) fn new(o: &'a mut String) -> Self {
        Rows {
            o,
            buf: [0; ROWS_BUF],
            len: 0,
            wide: Vec::new(),
        }
    }

    /// How long the answer is with what is gathered (to measure a column written since).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.o.len() + self.wide.len() + self.len
    }

    /// What is gathered, pushed onto the answer.
    fn flush(&mut self) {
        push_utf8(self.o, &self.wide);
        self.wide.clear();
        push_utf8(self.o, &self.buf[..self.len]);
        self.len = 0;
    }

    /// The next `n` bytes of the answer, counted as written, for the caller to fill: in the
    /// buffer (after pushing what it holds when they do not fit behind it), or, when `n` is
    /// more than the whole buffer, in `wide`.
    #[inline]
    fn take(&mut self, n: usize) -> &mut [u8] {
        if self.len + n > ROWS_BUF {
            self.flush();
            if n > ROWS_BUF {
                return self.take_wide(n);
            }
        }
        let at = self.len;
        self.len += n;
        &mut self.buf[at..at + n]
    }

    /// `n` bytes in `wide` (emptied by the push before).
    #[cold]
    fn take_wide(&mut self, n: usize) -> &mut [u8] {
        self.wide.resize(n, 0);
        &mut self.wide
    }

    #[inline]
    pub(crate) fn str(&mut self, s: &str) {
        self.take(s.len()).copy_from_slice(s.as_bytes());
    }

    /// One ASCII character (`\n`, `:`).
    #[inline]
    pub(crate) fn ascii(&mut self, c: u8) {
        self.take(1)[0] = c;
    }

    /// `n` blanks.
    #[inline]
    pub(crate) fn pad(&mut self, n: usize) {
        self.take(n).fill(b' ');
    }

    /// `s` left-aligned in `width` (never cut).
    #[inline]
    pub(crate) fn left(&mut self, s: &str, width: usize) {
        self.str(s);
        self.pad(width.saturating_sub(s.len()));
    }

    /// A number left-aligned in `width`.
    #[inline]
    pub(crate) fn dec(&mut self, v: u64, width: usize) {
        self.left(itoa::Buffer::new().format(v), width);
    }

    /// A number right-aligned in `width`.
    #[inline]
    pub(crate) fn rdec(&mut self, v: u64, width: usize) {
        let mut b = itoa::Buffer::new();
        let s = b.format(v);
        self.pad(width.saturating_sub(s.len()));
        self.str(s);
    }

    /// A number zero-padded to `width` digits (more digits if it has them).
    #[inline]
    pub(crate) fn zdec(&mut self, v: u64, width: usize) {
        let mut b = itoa::Buffer::new();
        let s = b.format(v);
        self.take(width.saturating_sub(s.len())).fill(b'0');
        self.str(s);
    }

    /// An address (lowercase hex) left-aligned in `width`.
    #[inline]
    pub(crate) fn hex(&mut self, v: u64, width: usize) {
        let n = hex_len(v);
        hex_digits(self.take(n), v, LOWER);
        self.pad(width.saturating_sub(n));
    }

    /// Uppercase hex, zero-padded to `digits` (as /proc/net/tcp prints).
    #[inline]
    pub(crate) fn zhex(&mut self, v: u64, digits: usize) {
        // A u64 has 16 digits: any more are leading zeros.
        let n = digits.min(16);
        let (zeros, low) = self.take(digits).split_at_mut(digits - n);
        zeros.fill(b'0');
        hex_digits(low, v, UPPER);
    }

    /// `HH:MM:SS` of a second of the day.
    #[inline]
    pub(crate) fn hms(&mut self, secs_of_day: u64) {
        hms_digits(self.take(8), secs_of_day);
    }
}

/// `bytes` (whole `str`s and ASCII, so UTF-8) pushed onto `o`.
fn push_utf8(o: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(s) => o.push_str(s),
        Err(_) => o.push_str(&String::from_utf8_lossy(bytes)),
    }
}

impl std::fmt::Write for Rows<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.str(s);
        Ok(())
    }
}

impl Drop for Rows<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// The low hex digits of `v` into `out`, the highest first (as many as `out` is long).
#[inline]
fn hex_digits(out: &mut [u8], v: u64, digits: &[u8; 16]) {
    for (k, b) in out.iter_mut().rev().enumerate() {
        *b = digits[((v >> (4 * k)) & 0xf) as usize];
    }
}

/// `HH:MM:SS` of a second of the day into `out` (8 bytes).
fn hms_digits(out: &mut [u8], secs_of_day: u64) {
    let fields = [
        secs_of_day / 3_600 % 24,
        secs_of_day / 60 % 60,
        secs_of_day % 60,
    ];
    for (k, v) in fields.into_iter().enumerate() {
        out[3 * k] = b'0' + (v / 10 % 10) as u8;
        out[3 * k + 1] = b'0' + (v % 10) as u8;
        if k < 2 {
            out[3 * k + 2] = b':';
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_match_format() {
        let mut o = String::new();
        let mut r = Rows::new(&mut o);
        r.dec(812, 8);
        r.hex(0x26_e8a0_1028, 17);
        r.rdec(0, 6);
        r.zhex(0x2380, 4);
        r.hms(9 * 3_600 + 5 * 60 + 7);
        drop(r);
        assert_eq!(
            o,
            format!(
                "{:<8}{:<17x}{:>6}{:04X}09:05:07",
                812, 0x26_e8a0_1028_u64, 0, 0x2380
            )
        );
        let mut o = String::new();
        Rows::new(&mut o).zhex(0xff, 20);
        assert_eq!(o, "000000000000000000FF");
        let mut o = String::new();
        Rows::new(&mut o).pad(300);
        assert_eq!(o, " ".repeat(300));
        let mut o = String::new();
        Rows::new(&mut o).dec(u64::MAX, 0);
        assert_eq!(o, u64::MAX.to_string());
        let mut o = String::new();
        Rows::new(&mut o).dec(0, 0);
        assert_eq!(o, "0");
        let mut o = String::new();
        Rows::new(&mut o).hex(u64::MAX, 0);
        assert_eq!(o, "ffffffffffffffff");
    }

    /// Each column asked wider than the buffer (on its own, or within a column: the padding of
    /// a number or a name) is written whole and in its place: behind what was gathered
    /// before it, before what comes after, and counted in `len` while it waits.
    #[test]
    fn columns_wider_than_the_buffer_are_written_whole() {
        use std::fmt::Write as _;
        let wide = 2 * ROWS_BUF + 5;
        let name = "é".repeat(ROWS_BUF);
        let v: u64 = 3_092_504;
        // A column's name, how `Rows` writes it, and what `format!` writes.
        type Column<'c> = (&'c str, &'c dyn Fn(&mut Rows<'_>), String);
        let columns: [Column<'_>; 9] = [
            ("str", &|r| r.str(&name), name.clone()),
            ("pad", &|r| r.pad(wide), " ".repeat(wide)),
            (
                "left",
                &|r| r.left("sqlexec", wide),
                format!("{:<wide$}", "sqlexec"),
            ),
            ("dec", &|r| r.dec(v, wide), format!("{v:<wide$}")),
            ("rdec", &|r| r.rdec(v, wide), format!("{v:>wide$}")),
            ("zdec", &|r| r.zdec(v, wide), format!("{v:0wide$}")),
            ("hex", &|r| r.hex(v, wide), format!("{v:<wide$x}")),
            ("zhex", &|r| r.zhex(v, wide), format!("{v:0wide$X}")),
            (
                "fmt",
                &|r| {
                    let _ = write!(r, "{v:>wide$}");
                },
                format!("{v:>wide$}"),
            ),
        ];
        let mut wrong = Vec::new();
        for (what, column, expected) in &columns {
            for before in [0, 7, ROWS_BUF - 1, ROWS_BUF] {
                let mut o = String::from("head\n");
                let mut r = Rows::new(&mut o);
                r.pad(before);
                column(&mut r);
                let counted = r.len() == 5 + before + expected.len();
                // Narrow columns behind it, then the same column again.
                r.ascii(b':');
                r.hms(45_296);
                r.ascii(b'\n');
                column(&mut r);
                r.ascii(b'\n');
                drop(r);
                let plain = format!("head\n{:before$}{expected}:12:34:56\n{expected}\n", "");
                if !counted || o != plain {
                    wrong.push(format!(
                        "{what} after {before}: {} bytes, not {}",
                        o.len(),
                        plain.len()
                    ));
                }
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    /// Every column written through `Rows` is what `format!` writes, across many refills of
    /// its buffer (a column cut by the end of the buffer, a `str` longer than it, blanks wider
    /// than it) and after text already in the answer.
    #[test]
    fn rows_write_what_format_writes() {
        use std::fmt::Write as _;
        let long = "é".repeat(ROWS_BUF);
        let mut plain = String::from("head\n");
        let mut gathered = plain.clone();
        let mut rows = Rows::new(&mut gathered);
        let mut v: u64 = 1;
        for k in 0..5_000usize {
            v = v
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(k as u64);
            let x = v >> (k % 64);
            let w = k % 23;
            let _ = write!(plain, "{x:<w$x}{x:<w$}{x:>w$}{x:0w$}");
            rows.hex(x, w);
            rows.dec(x, w);
            rows.rdec(x, w);
            rows.zdec(x, w);
            let digits = k % 35;
            let full = format!("{x:0digits$X}");
            plain.push_str(&full[full.len() - digits..]);
            rows.zhex(x, digits);
            let tod = x % 90_000;
            let (h, m, s) = (tod / 3_600 % 24, tod / 60 % 60, tod % 60);
            let _ = write!(plain, "{h:02}:{m:02}:{s:02}{:<w$}", "sqlexec");
            rows.hms(tod);
            rows.left("sqlexec", w);
            let _ = write!(plain, "{:>13.4}", x as f64 / 7.0);
            let _ = write!(rows, "{:>13.4}", x as f64 / 7.0);
            if k % 1_000 == 999 {
                plain.push_str(&long);
                rows.str(&long);
                let n = 3 * ROWS_BUF + k;
                let _ = write!(plain, "{:n$}", "");
                rows.pad(n);
            }
            plain.push('\n');
            rows.ascii(b'\n');
            assert_eq!(rows.len(), plain.len());
        }
        drop(rows);
        assert!(
            gathered == plain,
            "{} bytes against {}",
            gathered.len(),
            plain.len()
        );
    }

    #[test]
    fn numbers_of_every_length_match_format() {
        let mut values = vec![
            0,
            1,
            9,
            10,
            15,
            16,
            99,
            100,
            255,
            256,
            u64::MAX,
            u64::MAX - 1,
        ];
        for k in 1..20 {
            values.extend([10u64.pow(k) - 1, 10u64.pow(k), 10u64.pow(k) + 7]);
        }
        for k in 1..16 {
            values.extend([(1u64 << (4 * k)) - 1, 1u64 << (4 * k)]);
        }
        for v in values {
            for width in [0, 1, 5, 9, 17, 25] {
                let mut o = String::from("x");
                let mut r = Rows::new(&mut o);
                r.dec(v, width);
                r.rdec(v, width);
                r.hex(v, width);
                drop(r);
                assert_eq!(
                    o,
                    format!("x{v:<width$}{v:>width$}{v:<width$x}"),
                    "{v} {width}"
                );
            }
            for width in [0, 1, 2, 4, 20, 22] {
                let mut o = String::from("x");
                Rows::new(&mut o).zdec(v, width);
                assert_eq!(o, format!("x{v:0width$}"), "{v} {width}");
            }
            // Zero-padded upper-case hex, narrower than the number (its low digits, as the
            // kernel's fixed-width columns never are), as wide, and wider than a u64.
            for digits in 0..=34 {
                let mut o = String::from("x");
                Rows::new(&mut o).zhex(v, digits);
                let full = format!("{v:0digits$X}");
                assert_eq!(
                    o,
                    format!("x{}", &full[full.len() - digits..]),
                    "{v} {digits}"
                );
            }
        }
    }
}
