//! LEB128 varints and zigzag signs: integers in as few bytes as their size needs, for lists
//! whose values are mostly small differences (a reference to an object allocated near its
//! source, the gap to the next object).

/// `d` as an unsigned value whose size follows `|d|`: 0, -1, 1, -2, ... become 0, 1, 2, 3, ...
#[inline]
pub fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

/// The inverse of [`zigzag`].
#[inline]
pub fn unzigzag(z: u64) -> i64 {
    (z >> 1) as i64 ^ -((z & 1) as i64)
}

/// Appends `z` in LEB128: seven bits a byte, low first, the high bit set on all but the last.
#[inline]
pub fn push(out: &mut Vec<u8>, mut z: u64) {
    while z >= 0x80 {
        out.push(z as u8 | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// The varint at the start of `b`, and the bytes it takes (all of `b` when it is cut short).
#[inline]
pub fn read(b: &[u8]) -> (u64, usize) {
    let mut z = 0u64;
    for (i, &byte) in b.iter().enumerate() {
        z |= u64::from(byte & 0x7f).checked_shl(7 * i as u32).unwrap_or(0);
        if byte < 0x80 {
            return (z, i + 1);
        }
    }
    (z, b.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_the_extremes() {
        for d in [0, 1, -1, 63, -64, 64, i64::from(i32::MAX), i64::from(i32::MIN), i64::MAX, i64::MIN] {
            let mut b = Vec::new();
            push(&mut b, zigzag(d));
            assert_eq!(read(&b), (zigzag(d), b.len()));
            assert_eq!(unzigzag(zigzag(d)), d);
        }
        let mut b = Vec::new();
        push(&mut b, u64::MAX);
        assert_eq!(read(&b), (u64::MAX, 10));
    }
}
