//! Hadoop's `WritableUtils` variable-length longs (not protobuf varints): one byte for
//! -112..=127, otherwise a marker byte giving sign and length, then big-endian bytes.

/// Reads a vlong from the front of `buf`, advancing it. `None` if `buf` is too short.
pub fn read_vlong(buf: &mut &[u8]) -> Option<i64> {
    let (&first, rest) = buf.split_first()?;
    let b0 = first as i8;
    if b0 >= -112 {
        *buf = rest;
        return Some(b0 as i64);
    }
    let negative = b0 < -120;
    let n = if negative {
        -120 - b0 as i32
    } else {
        -112 - b0 as i32
    } as usize;
    if rest.len() < n {
        return None;
    }
    let v = rest[..n].iter().fold(0i64, |acc, b| (acc << 8) | *b as i64);
    *buf = &rest[n..];
    Some(if negative { !v } else { v })
}

/// Appends `v` as a vlong.
pub fn write_vlong(out: &mut Vec<u8>, v: i64) {
    if (-112..=127).contains(&v) {
        out.push(v as i8 as u8);
        return;
    }
    let (marker_base, mag) = if v < 0 { (-120i32, !v) } else { (-112i32, v) };
    let n = 8 - (mag.leading_zeros() as usize / 8);
    out.push((marker_base - n as i32) as i8 as u8);
    for i in (0..n).rev() {
        out.push((mag >> (8 * i)) as u8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_sheet_examples() {
        for (v, bytes) in [
            (200i64, vec![0x8F, 0xC8]),
            (1000, vec![0x8E, 0x03, 0xE8]),
            (128, vec![0x8F, 0x80]),
            (-113, vec![0x87, 0x70]),
            (5, vec![5]),
            (-1, vec![0xFF]),
        ] {
            let mut out = Vec::new();
            write_vlong(&mut out, v);
            assert_eq!(out, bytes, "encoding {v}");
            let mut s = &bytes[..];
            assert_eq!(read_vlong(&mut s), Some(v));
            assert!(s.is_empty());
        }
    }

    proptest::proptest! {
        #[test]
        fn round_trips(v in proptest::num::i64::ANY) {
            let mut out = Vec::new();
            write_vlong(&mut out, v);
            let mut s = &out[..];
            proptest::prop_assert_eq!(read_vlong(&mut s), Some(v));
        }
    }
}
