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

const LOWER: &[u8; 16] = b"0123456789abcdef";
const UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// How many hex digits `v` has (0 has one).
fn hex_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(4)
}

/// The `n` low hex digits of `v` onto `o`, the highest first, each an ASCII char pushed as it
/// is (no digits gathered in a buffer and checked as UTF-8 first).
fn push_hex(o: &mut String, v: u64, n: usize, digits: &[u8; 16]) {
    for k in (0..n).rev() {
        let nibble = (v >> (4 * k)) & 0xf;
        o.push(char::from(digits[nibble as usize]));
    }
}

/// A number left-aligned in `width`.
pub(crate) fn ldec(o: &mut String, v: u64, width: usize) {
    left(o, itoa::Buffer::new().format(v), width);
}

/// A number right-aligned in `width`.
pub(crate) fn rdec(o: &mut String, v: u64, width: usize) {
    let mut b = itoa::Buffer::new();
    let s = b.format(v);
    pad(o, width.saturating_sub(s.len()));
    o.push_str(s);
}

/// An address (lowercase hex) left-aligned in `width`.
pub(crate) fn lhex(o: &mut String, v: u64, width: usize) {
    let n = hex_len(v);
    o.reserve(n.max(width));
    push_hex(o, v, n, LOWER);
    pad(o, width.saturating_sub(n));
}

/// Uppercase hex, zero-padded to `digits` (as /proc/net/tcp prints).
pub(crate) fn zhex(o: &mut String, v: u64, digits: usize) {
    // A u64 has 16 digits: any more are leading zeros.
    let n = digits.min(16);
    o.reserve(digits);
    for _ in n..digits {
        o.push('0');
    }
    push_hex(o, v, n, UPPER);
}

/// A number zero-padded to `width` digits (more digits if it has them).
pub(crate) fn zdec(o: &mut String, v: u64, width: usize) {
    let mut b = itoa::Buffer::new();
    let s = b.format(v);
    for _ in s.len()..width {
        o.push('0');
    }
    o.push_str(s);
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
        let mut o = String::new();
        ldec(&mut o, u64::MAX, 0);
        assert_eq!(o, u64::MAX.to_string());
        let mut o = String::new();
        ldec(&mut o, 0, 0);
        assert_eq!(o, "0");
        let mut o = String::new();
        lhex(&mut o, u64::MAX, 0);
        assert_eq!(o, "ffffffffffffffff");
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
            for width in [0, 1, 2, 4, 20, 22] {
                let mut o = String::from("x");
                zdec(&mut o, v, width);
                assert_eq!(o, format!("x{v:0width$}"), "{v} {width}");
            }
            // Zero-padded upper-case hex, narrower than the number (its low digits, as the
            // kernel's fixed-width columns never are), as wide, and wider than a u64.
            for digits in 0..=34 {
                let mut o = String::from("x");
                zhex(&mut o, v, digits);
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
