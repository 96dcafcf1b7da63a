//! Fixed-width columns written straight into a `String`. The big tables (thousands of threads,
//! locks and sockets) are printed every second; `format!` padding would cost more than
//! everything else the demo does.

const BLANKS: &str = "                                                                                                                                ";

/// `n` blanks.
pub(crate) fn pad(o: &mut String, n: usize) {
    let mut n = n;
    while n > 0 {
        let k = n.min(BLANKS.len());
        o.push_str(&BLANKS[..k]);
        n -= k;
    }
}

/// `s` left-aligned in `width` (never cut).
pub(crate) fn left(o: &mut String, s: &str, width: usize) {
    o.push_str(s);
    pad(o, width.saturating_sub(s.len()));
}

/// Decimal digits of `v` in `buf`.
pub(crate) fn dec(v: u64, buf: &mut [u8; 20]) -> &str {
    let at = dec_digits(v, buf);
    std::str::from_utf8(&buf[at..]).unwrap_or("0")
}

/// Lowercase hex digits of `v` in `buf`, as onstat prints addresses.
#[cfg(test)]
pub(crate) fn hex(v: u64, buf: &mut [u8; 20]) -> &str {
    let mut b = [0u8; 16];
    let at = hex_digits(v, &mut b);
    let n = b.len() - at;
    buf[..n].copy_from_slice(&b[at..]);
    std::str::from_utf8(&buf[..n]).unwrap_or("0")
}

/// The ASCII digits `buf[at..]` onto `o`, a char at a time: no UTF-8 check of the digits
/// (`from_utf8` was as costly as the rest of `onstat -u`'s row).
fn push_ascii(o: &mut String, digits: &[u8]) {
    o.extend(digits.iter().map(|&d| char::from(d)));
}

/// Decimal digits of `v` at the end of `buf`: where they start.
fn dec_digits(v: u64, buf: &mut [u8; 20]) -> usize {
    let mut i = buf.len();
    let mut v = v;
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            return i;
        }
    }
}

/// Lowercase hex digits of `v` at the end of `buf`: where they start.
fn hex_digits(v: u64, buf: &mut [u8; 16]) -> usize {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut i = buf.len();
    let mut v = v;
    loop {
        i -= 1;
        buf[i] = DIGITS[(v & 0xf) as usize];
        v >>= 4;
        if v == 0 {
            return i;
        }
    }
}

/// A number left-aligned in `width`.
pub(crate) fn ldec(o: &mut String, v: u64, width: usize) {
    let mut b = [0u8; 20];
    let at = dec_digits(v, &mut b);
    push_ascii(o, &b[at..]);
    pad(o, width.saturating_sub(b.len() - at));
}

/// A number right-aligned in `width`.
pub(crate) fn rdec(o: &mut String, v: u64, width: usize) {
    let mut b = [0u8; 20];
    let at = dec_digits(v, &mut b);
    pad(o, width.saturating_sub(b.len() - at));
    push_ascii(o, &b[at..]);
}

/// An address (lowercase hex) left-aligned in `width`.
pub(crate) fn lhex(o: &mut String, v: u64, width: usize) {
    let mut b = [0u8; 16];
    let at = hex_digits(v, &mut b);
    push_ascii(o, &b[at..]);
    pad(o, width.saturating_sub(b.len() - at));
}

/// Uppercase hex, zero-padded to `digits` (as /proc/net/tcp prints).
pub(crate) fn zhex(o: &mut String, v: u64, digits: usize) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    for k in (0..digits).rev() {
        let nibble = u32::try_from(4 * k)
            .ok()
            .and_then(|sh| v.checked_shr(sh))
            .unwrap_or(0);
        o.push(DIGITS[(nibble & 0xf) as usize] as char);
    }
}

/// `HH:MM:SS` of a second of the day.
pub(crate) fn hms(o: &mut String, secs_of_day: u64) {
    let two = |o: &mut String, v: u64| {
        o.push((b'0' + (v / 10 % 10) as u8) as char);
        o.push((b'0' + (v % 10) as u8) as char);
    };
    two(o, secs_of_day / 3_600 % 24);
    o.push(':');
    two(o, secs_of_day / 60 % 60);
    o.push(':');
    two(o, secs_of_day % 60);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_match_format() {
        let mut o = String::new();
        ldec(&mut o, 812, 8);
        lhex(&mut o, 0x26_e8a0_1028, 17);
        rdec(&mut o, 0, 6);
        zhex(&mut o, 0x2380, 4);
        hms(&mut o, 9 * 3_600 + 5 * 60 + 7);
        assert_eq!(
            o,
            format!(
                "{:<8}{:<17x}{:>6}{:04X}09:05:07",
                812, 0x26_e8a0_1028_u64, 0, 0x2380
            )
        );
        let mut o = String::new();
        zhex(&mut o, 0xff, 20);
        assert_eq!(o, "000000000000000000FF");
        let mut o = String::new();
        pad(&mut o, 300);
        assert_eq!(o.len(), 300);
        let mut b = [0u8; 20];
        assert_eq!(dec(u64::MAX, &mut b), u64::MAX.to_string());
        assert_eq!(hex(u64::MAX, &mut b), "ffffffffffffffff");
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
                ldec(&mut o, v, width);
                rdec(&mut o, v, width);
                lhex(&mut o, v, width);
                assert_eq!(
                    o,
                    format!("x{v:<width$}{v:>width$}{v:<width$x}"),
                    "{v} {width}"
                );
            }
        }
    }
}
