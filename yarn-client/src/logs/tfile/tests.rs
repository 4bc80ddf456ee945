//! Unit tests of the TFile reader: Hadoop's vlong encodings, files built here the way
//! BCFile and TFile write them, and hostile bytes (truncated, corrupted) giving errors.

use std::io::Write;

use proptest::prelude::*;

use super::*;

/// Hadoop's `Utils.writeVLong`, for building test files.
pub(crate) fn write_vlong(out: &mut Vec<u8>, n: i64) {
    if (-32..128).contains(&n) {
        out.push(n as u8);
        return;
    }
    let un = if n < 0 { !n } else { n };
    let len = (64 - un.leading_zeros() as usize) / 8 + 1;
    let mut first = n >> ((len - 1) * 8);
    let mut len = len;
    if len == 1 {
        first >>= 8;
        len = 2;
    }
    if len == 2 {
        if (-20..20).contains(&first) {
            out.push((first - 52) as u8);
            out.push(n as u8);
            return;
        }
        first >>= 8;
        len = 3;
    }
    if len == 3 {
        if (-16..16).contains(&first) {
            out.push((first - 88) as u8);
            out.extend_from_slice(&(n as u16).to_be_bytes());
            return;
        }
        first >>= 8;
        len = 4;
    }
    if len == 4 && (-8..8).contains(&first) {
        out.push((first - 112) as u8);
        out.extend_from_slice(&((n as u32) >> 8).to_be_bytes()[2..]);
        out.push(n as u8);
        return;
    }
    out.push((len as i64 - 129) as u8);
    out.extend_from_slice(&n.to_be_bytes()[8 - len..]);
}

fn write_string(out: &mut Vec<u8>, s: &str) {
    write_vlong(out, s.len() as i64);
    out.extend_from_slice(s.as_bytes());
}

fn compress(raw: &[u8], compression: &str) -> Vec<u8> {
    match compression {
        "gz" => {
            // Two zlib streams back to back, as a flush inside a block writes them.
            let (a, b) = raw.split_at(raw.len() / 2);
            let mut out = Vec::new();
            for part in [a, b] {
                let mut e =
                    flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
                e.write_all(part).unwrap();
                out.extend(e.finish().unwrap());
            }
            out
        }
        _ => raw.to_vec(),
    }
}

/// A test entry: its key and its value as the chunks it is written in.
pub(crate) type TestEntry = (Vec<u8>, Vec<Vec<u8>>);

/// A TFile laid out as BCFile writes one: data blocks (each a list of entries, a value as
/// its chunks), a `TFile.meta` block, `BCFile.index`, the meta index, the tail.
pub(crate) fn build(blocks: &[Vec<TestEntry>], compression: &str) -> Vec<u8> {
    let mut file = b"junk before the first block".to_vec();
    let mut regions = Vec::new();
    for block in blocks {
        let mut raw = Vec::new();
        for (key, chunks) in block {
            write_vlong(&mut raw, key.len() as i64);
            raw.extend_from_slice(key);
            for (i, chunk) in chunks.iter().enumerate() {
                let last = i + 1 == chunks.len();
                write_vlong(
                    &mut raw,
                    if last {
                        chunk.len() as i64
                    } else {
                        -(chunk.len() as i64)
                    },
                );
                raw.extend_from_slice(chunk);
            }
        }
        let stored = compress(&raw, compression);
        regions.push((file.len(), stored.len(), raw.len()));
        file.extend(stored);
    }
    let mut metas = Vec::new();
    let tfile_meta = vec![0, 1, 0, 0, 3, 0];
    metas.push(("TFile.meta", file.len(), tfile_meta.len(), tfile_meta.len()));
    file.extend(&tfile_meta);
    let mut index = Vec::new();
    write_string(&mut index, compression);
    write_vlong(&mut index, regions.len() as i64);
    for (o, c, r) in &regions {
        for v in [o, c, r] {
            write_vlong(&mut index, *v as i64);
        }
    }
    let stored = compress(&index, compression);
    metas.push(("BCFile.index", file.len(), stored.len(), index.len()));
    file.extend(stored);
    let meta_at = file.len();
    write_vlong(&mut file, metas.len() as i64);
    for (name, o, c, r) in metas {
        write_string(&mut file, &format!("data:{name}"));
        write_string(
            &mut file,
            if name == "TFile.meta" {
                "none"
            } else {
                compression
            },
        );
        for v in [o, c, r] {
            write_vlong(&mut file, v as i64);
        }
    }
    file.extend((meta_at as i64).to_be_bytes());
    file.extend([0, 1, 0, 0]);
    file.extend(MAGIC);
    file
}

fn sample_blocks() -> Vec<Vec<TestEntry>> {
    vec![
        vec![
            (b"k1".to_vec(), vec![b"one chunk".to_vec()]),
            (
                b"k2".to_vec(),
                vec![b"first ".to_vec(), b"second ".to_vec(), b"last".to_vec()],
            ),
        ],
        vec![
            (b"k3".to_vec(), vec![vec![7u8; 5000]]),
            (Vec::new(), vec![Vec::new()]),
        ],
    ]
}

#[test]
fn vlongs_decode_as_hadoop_encodes_them() {
    // Byte forms from Utils' documentation: one byte for [-32, 127), then 2, 3, 4 and 5-9.
    assert_eq!(read_vlong(&[0x05]), Some((5, 1)));
    assert_eq!(read_vlong(&[0xe0]), Some((-32, 1)));
    assert_eq!(read_vlong(&[0x7f]), Some((127, 1)));
    assert_eq!(read_vlong(&[(0i8 - 52) as u8, 200]), Some((200, 2)));
    assert_eq!(read_vlong(&[(-1i8 - 52) as u8, 0xdf]), Some((-33, 2)));
    assert_eq!(
        read_vlong(&[(-125i8) as u8, 0x7f, 0xff, 0xff, 0xff]),
        Some((i32::MAX as i64, 5))
    );
    assert_eq!(
        read_vlong(&[(-121i8) as u8, 0x80, 0, 0, 0, 0, 0, 0, 0]),
        Some((i64::MIN, 9))
    );
    // Cut short, and the first bytes Hadoop never writes (1-3 following bytes as a length).
    assert_eq!(read_vlong(&[]), None);
    assert_eq!(read_vlong(&[(-52i8) as u8]), None);
    assert_eq!(read_vlong(&[(-128i8) as u8, 0, 0]), None);
    for n in [
        0i64,
        127,
        128,
        -33,
        5119,
        -5120,
        5120,
        1 << 20,
        -(1 << 20),
        1 << 27,
        i32::MIN as i64,
        1 << 40,
        i64::MAX,
        i64::MIN,
    ] {
        let mut b = Vec::new();
        write_vlong(&mut b, n);
        assert_eq!(read_vlong(&b), Some((n, b.len())), "{n}");
    }
}

#[test]
fn entries_come_back_in_order_with_chunks_joined() {
    for compression in ["none", "gz"] {
        let file = build(&sample_blocks(), compression);
        let t = TFile::parse(&file).unwrap();
        assert_eq!(t.blocks().len(), 2);
        let e = t.entries().unwrap();
        let keys: Vec<&[u8]> = e.iter().map(|e| &*e.key).collect();
        assert_eq!(keys, [&b"k1"[..], b"k2", b"k3", b""], "{compression}");
        assert_eq!(&*e[0].value, b"one chunk");
        assert_eq!(&*e[1].value, b"first second last");
        assert_eq!(&*e[2].value, &[7u8; 5000][..]);
        assert!(e[3].value.is_empty());
    }
    // Plain blocks are borrowed, not copied.
    let file = build(&sample_blocks(), "none");
    let t = TFile::parse(&file).unwrap();
    assert!(matches!(t.entries().unwrap()[0].value, Cow::Borrowed(_)));
}

#[test]
fn other_compressions_and_versions_are_refused_by_name() {
    let file = build(&sample_blocks(), "lzo");
    let err = TFile::parse(&file).unwrap_err();
    assert_eq!(
        err,
        TFileError::Compression {
            what: "data index",
            name: "lzo".into()
        }
    );
    assert!(err.to_string().contains("\"lzo\" is not supported"));
    let mut v2 = build(&sample_blocks(), "none");
    let at = v2.len() - 20;
    v2[at..at + 2].copy_from_slice(&2u16.to_be_bytes());
    assert_eq!(
        TFile::parse(&v2).unwrap_err(),
        TFileError::Version { major: 2, minor: 0 }
    );
    let mut bad = build(&sample_blocks(), "none");
    *bad.last_mut().unwrap() ^= 1;
    assert_eq!(TFile::parse(&bad).unwrap_err(), TFileError::BadMagic);
    assert_eq!(
        TFile::parse(b"short").unwrap_err(),
        TFileError::TooShort { len: 5 }
    );
}

#[test]
fn a_raw_size_beyond_what_deflate_can_reach_is_refused_before_inflating() {
    let region = BlockRegion {
        offset: 0,
        compressed: 10,
        raw: 1 << 40,
    };
    let err = block_bytes(&[0u8; 10], Compression::Gz, region, "data block").unwrap_err();
    assert!(matches!(err, TFileError::RawSize { .. }), "{err}");
    // A stream longer than its declared raw size stops one piece past it.
    let data = compress(&[1u8; 100_000], "gz");
    let region = BlockRegion {
        offset: 0,
        compressed: data.len() as u64,
        raw: 10,
    };
    let err = block_bytes(&data, Compression::Gz, region, "data block").unwrap_err();
    assert!(
        matches!(err, TFileError::RawSizeMismatch { declared: 10, .. }),
        "{err}"
    );
}

/// Parses and reads every entry: the outcome must be a value or an error, never a panic.
pub(crate) fn read_all(bytes: &[u8]) -> Result<usize> {
    let t = TFile::parse(bytes)?;
    Ok(t.entries()?.len())
}

#[test]
fn every_truncation_is_an_error() {
    for compression in ["none", "gz"] {
        let file = build(&sample_blocks(), compression);
        for len in 0..file.len() {
            // Cutting the front keeps the tail intact: offsets then point wrong.
            assert!(
                read_all(&file[..len]).is_err(),
                "{compression} cut at {len}"
            );
            let _ = read_all(&file[len..]);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn corrupted_bytes_never_panic(
        gz in any::<bool>(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
    ) {
        let mut file = build(&sample_blocks(), if gz { "gz" } else { "none" });
        for (at, byte) in flips {
            let i = at.index(file.len());
            file[i] = byte;
        }
        let _ = read_all(&file);
    }

    #[test]
    fn arbitrary_bytes_behind_a_valid_tail_never_panic(
        body in proptest::collection::vec(any::<u8>(), 0..512),
        meta_at in 0i64..600,
    ) {
        let mut file = body;
        file.extend(meta_at.to_be_bytes());
        file.extend([0, 1, 0, 0]);
        file.extend(MAGIC);
        let _ = read_all(&file);
    }

    #[test]
    fn vlongs_round_trip(n in any::<i64>()) {
        let mut b = Vec::new();
        write_vlong(&mut b, n);
        prop_assert_eq!(read_vlong(&b), Some((n, b.len())));
    }
}
