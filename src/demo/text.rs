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

/// `s` right-aligned in `width` (never cut).
pub(crate) fn right(o: &mut String, s: &str, width: usize) {
    pad(o, width.saturating_sub(s.len()));
    o.push_str(s);
}

/// Decimal digits of `v` in `buf`.
pub(crate) fn dec(v: u64, buf: &mut [u8; 20]) -> &str {
    let mut i = buf.len();
    let mut v = v;
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[i..]).unwrap_or("0")
}

/// Lowercase hex digits of `v` in `buf`, as onstat prints addresses.
pub(crate) fn hex(v: u64, buf: &mut [u8; 20]) -> &str {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut i = buf.len();
    let mut v = v;
    loop {
        i -= 1;
        buf[i] = DIGITS[(v & 0xf) as usize];
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[i..]).unwrap_or("0")
}

/// A number left-aligned in `width`.
pub(crate) fn ldec(o: &mut String, v: u64, width: usize) {
    let mut b = [0u8; 20];
    left(o, dec(v, &mut b), width);
}

/// A number right-aligned in `width`.
pub(crate) fn rdec(o: &mut String, v: u64, width: usize) {
    let mut b = [0u8; 20];
    right(o, dec(v, &mut b), width);
}

/// An address (lowercase hex) left-aligned in `width`.
pub(crate) fn lhex(o: &mut String, v: u64, width: usize) {
    let mut b = [0u8; 20];
    left(o, hex(v, &mut b), width);
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
}
