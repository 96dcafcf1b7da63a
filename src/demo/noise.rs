//! Deterministic noise: a splitmix64 hash of (seed, entity, time bucket), so any moment of the
//! demo is computed directly from its inputs, with no state carried between calls.

/// One step of splitmix64: a good 64-bit mix of `x`.
pub(crate) fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Which question a hash answers: the same entity and bucket with another salt gives an
/// unrelated number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub(crate) enum Salt {
    Kind = 1,
    User,
    Host,
    Gap,
    Period,
    State,
    Mutex,
    Rates,
    Pid,
    Sql,
    Memory,
    Page,
    Waiters,
    Owner,
    SendQ,
    Noise,
    Vp,
    Opened,
    Link,
    Pdq,
    Count,
    Leaf,
    Mem,
    Addr,
    Profile,
    Ckpt,
    Tpf,
    Segment,
    Cpu,
    /// Which sessions come and go, when, and whether a new one takes an old sid.
    Churn,
    /// How long each part of one `onstat` call takes to print.
    Skew,
    /// An idle client's reply still unacknowledged when the socket table is read.
    Blip,
}

/// A hash of (seed, salt, entity, bucket).
pub(crate) fn hash(seed: u64, salt: Salt, entity: u64, bucket: u64) -> u64 {
    splitmix64(seed ^ splitmix64((salt as u64) ^ splitmix64(entity ^ splitmix64(bucket))))
}

/// A number in `0..n` (0 when `n` is 0).
pub(crate) fn below(seed: u64, salt: Salt, entity: u64, bucket: u64, n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        hash(seed, salt, entity, bucket) % n
    }
}

/// A fraction in `[0, 1)`.
pub(crate) fn unit(seed: u64, salt: Salt, entity: u64, bucket: u64) -> f64 {
    (hash(seed, salt, entity, bucket) >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn salts_and_buckets_decorrelate() {
        assert_ne!(hash(1, Salt::Kind, 5, 0), hash(1, Salt::User, 5, 0));
        assert_ne!(hash(1, Salt::Kind, 5, 0), hash(1, Salt::Kind, 5, 1));
        assert_ne!(hash(1, Salt::Kind, 5, 0), hash(2, Salt::Kind, 5, 0));
        assert_eq!(hash(7, Salt::Page, 3, 9), hash(7, Salt::Page, 3, 9));
        let u = unit(3, Salt::Noise, 1, 2);
        assert!((0.0..1.0).contains(&u));
        assert_eq!(below(3, Salt::Noise, 1, 2, 0), 0);
    }
}
