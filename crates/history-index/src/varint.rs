//! Unsigned integers as varints (LEB128): seven bits a byte, low first, the high bit set on all
//! but the last. The stored events and the token lists both write their numbers so.

/// Gives `out` the bytes of `v`.
pub(crate) fn write_with(mut v: u64, mut out: impl FnMut(u8)) {
    while v >= 0x80 {
        out((v as u8) | 0x80);
        v >>= 7;
    }
    out(v as u8);
}

/// Appends the bytes of `v` to `out`.
pub(crate) fn put(out: &mut Vec<u8>, v: u64) {
    write_with(v, |b| out.push(b));
}

/// How many bytes `v` takes.
pub(crate) fn len(v: u64) -> u64 {
    u64::from((64 - (v | 1).leading_zeros()).div_ceil(7))
}

/// Reads a varint at `*at`, moving `*at` past it; `None` past the end or on more than 64 bits.
pub(crate) fn read(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_what_it_writes() {
        let values = [0, 1, 0x7f, 0x80, 300, u64::from(u32::MAX), u64::MAX];
        let mut bytes = Vec::new();
        for v in values {
            put(&mut bytes, v);
        }
        assert_eq!(&bytes[..4], [0, 1, 0x7f, 0x80]);
        let mut at = 0;
        for v in values {
            assert_eq!(read(&bytes, &mut at), Some(v));
        }
        assert_eq!(at, bytes.len());
        let lens: u64 = values.iter().map(|&v| len(v)).sum();
        assert_eq!(lens, bytes.len() as u64);
        assert_eq!(read(&bytes, &mut at), None, "past the end");
        assert_eq!(read(&[0xff; 11], &mut 0), None, "over 64 bits");
    }
}
