//! Hadoop's TFile, as far as aggregated logs use it: free of I/O, over the whole file's bytes.
//!
//! A TFile is a BCFile (a "block compressed file") whose data blocks hold key-value entries.
//! The facts this reader relies on (Hadoop's `BCFile`, `TFile`, `Chunk`, `Utils`):
//!
//! - The file ends with a 28-byte tail: the offset of the meta index (big-endian `i64`), the
//!   BCFile version (two big-endian `i16`, major 1) and a 16-byte magic.
//! - The meta index: a count, then per meta block its name (`data:` + name), its compression
//!   name and its region (offset, compressed size, raw size). Numbers are TFile's own variable
//!   length integers ([`read_vlong`]), strings a length then UTF-8 bytes.
//! - The meta block `BCFile.index` (compressed like the meta index says) lists the data
//!   blocks: the data blocks' compression name, a count, and one region each.
//! - A data block, once decompressed, is entries back to back: the key's length and bytes,
//!   then the value as chunks, each a length and bytes; a negative length means more chunks
//!   follow (its absolute value is the chunk's size), a non-negative one is the last chunk.
//!
//! Compression names are `none`, `gz` (zlib streams, Hadoop's `DefaultCodec`; one block may
//! hold several back to back) and `lzo`, which is refused. Every length is checked against
//! what is left of the file or block before it is used, and a decompressed block may not
//! grow past its declared raw size nor past what deflate can expand its compressed size to,
//! so hostile bytes give a [`TFileError`], never a panic or an allocation out of proportion
//! to the file.

use std::borrow::Cow;

/// The BCFile magic at the very end of the file.
pub const MAGIC: [u8; 16] = [
    0xd1, 0x11, 0xd3, 0x68, 0x91, 0xb5, 0xd7, 0xb6, 0x39, 0xdf, 0x41, 0x40, 0x92, 0xba, 0xe1, 0x50,
];
/// Offset of the meta index (8), version (4), magic (16).
const TAIL_LEN: usize = 8 + 4 + 16;
/// The meta block that lists the data blocks.
const DATA_INDEX: &str = "BCFile.index";
/// Deflate cannot expand data by more than about 1032 to 1: a "raw size" above this many
/// times the compressed size is a lie, whatever it claims.
const MAX_DEFLATE_RATIO: u64 = 1032;

/// What was malformed, and where.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TFileError {
    #[error("not a TFile: {len} bytes, shorter than the {TAIL_LEN}-byte BCFile tail")]
    TooShort { len: usize },
    #[error("not a TFile: the last 16 bytes are not the BCFile magic")]
    BadMagic,
    #[error("unsupported BCFile version {major}.{minor} (this reader knows major 1)")]
    Version { major: i16, minor: i16 },
    #[error("{what} ends past its end ({need} bytes wanted at {at}, {len} there)")]
    Truncated {
        what: &'static str,
        at: usize,
        need: u64,
        len: usize,
    },
    #[error("{what}: invalid variable-length integer at {at}")]
    BadVarint { what: &'static str, at: usize },
    #[error("{what}: length {value} at {at} is negative or too large")]
    BadLength {
        what: &'static str,
        at: usize,
        value: i64,
    },
    #[error("meta index entry {name:?} does not start with \"data:\"")]
    MetaName { name: String },
    #[error("the meta index has no {name:?} block")]
    MissingMeta { name: &'static str },
    #[error(
        "{what}: region at {offset} of {size} bytes lies outside the file's first {limit} bytes"
    )]
    Region {
        what: &'static str,
        offset: i64,
        size: i64,
        limit: usize,
    },
    #[error("{what}: compression {name:?} is not supported (only none and gz)")]
    Compression { what: &'static str, name: String },
    #[error("{what}: declared raw size {raw} is impossible for {compressed} compressed bytes")]
    RawSize {
        what: &'static str,
        raw: i64,
        compressed: i64,
    },
    #[error("{what}: zlib data is corrupt or cut short ({reason})")]
    Inflate { what: &'static str, reason: String },
    #[error("{what}: decompressed to {actual} bytes, declared {declared}")]
    RawSizeMismatch {
        what: &'static str,
        declared: u64,
        actual: u64,
    },
}

pub type Result<T, E = TFileError> = std::result::Result<T, E>;

/// A cursor over bytes that names what it reads in its errors.
#[derive(Clone)]
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    what: &'static str,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8], what: &'static str) -> Self {
        Cursor { buf, pos: 0, what }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn take(&mut self, n: u64) -> Result<&'a [u8]> {
        if n > self.remaining() as u64 {
            return Err(TFileError::Truncated {
                what: self.what,
                at: self.pos,
                need: n,
                len: self.remaining(),
            });
        }
        let s = &self.buf[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N as u64)?);
        Ok(a)
    }

    pub(crate) fn u16_be(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    pub(crate) fn i32_be(&mut self) -> Result<i32> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    fn i64_be(&mut self) -> Result<i64> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// TFile's `Utils.readVLong`.
    pub(crate) fn vlong(&mut self) -> Result<i64> {
        let at = self.pos;
        read_vlong(&self.buf[self.pos..])
            .map(|(v, used)| {
                self.pos += used;
                v
            })
            .ok_or(if self.remaining() == 0 {
                TFileError::Truncated {
                    what: self.what,
                    at,
                    need: 1,
                    len: 0,
                }
            } else {
                TFileError::BadVarint {
                    what: self.what,
                    at,
                }
            })
    }

    /// A length: a vlong that must be in `0..=remaining`.
    fn length(&mut self) -> Result<u64> {
        let at = self.pos;
        let v = self.vlong()?;
        if v < 0 || v > self.remaining() as i64 {
            return Err(TFileError::BadLength {
                what: self.what,
                at,
                value: v,
            });
        }
        Ok(v as u64)
    }

    /// TFile's `Utils.readString` (a null string, length -1, is refused: none is expected).
    fn string(&mut self) -> Result<String> {
        let n = self.length()?;
        Ok(String::from_utf8_lossy(self.take(n)?).into_owned())
    }
}

/// Decodes one of TFile's variable-length integers (`Utils.readVLong`) from the start of
/// `b`: the value and the bytes used, `None` when `b` is cut short or the first byte names
/// no encoding. First byte `fb` as a signed byte: `>= -32` is the value itself; -72..=-33 add
/// one byte, -104..=-73 two, -120..=-105 three (each with `fb` plus a bias as the high part);
/// -128..=-121 say 4 to 8 big-endian bytes follow (-125 to -121 are the ones Hadoop writes).
pub fn read_vlong(b: &[u8]) -> Option<(i64, usize)> {
    let fb = *b.first()? as i8 as i64;
    if fb >= -32 {
        return Some((fb, 1));
    }
    let tail = |n: usize| -> Option<u64> {
        let bytes = b.get(1..1 + n)?;
        Some(bytes.iter().fold(0u64, |acc, &x| (acc << 8) | x as u64))
    };
    match fb {
        -72..=-33 => Some((((fb + 52) << 8) | tail(1)? as i64, 2)),
        -104..=-73 => Some((((fb + 88) << 16) | tail(2)? as i64, 3)),
        -120..=-105 => Some((((fb + 112) << 24) | tail(3)? as i64, 4)),
        _ => {
            let len = (fb + 129) as usize;
            if !(4..=8).contains(&len) {
                return None;
            }
            let raw = tail(len)?;
            // Sign-extend from `len` bytes.
            let shift = 64 - 8 * len as u32;
            Some((((raw << shift) as i64) >> shift, 1 + len))
        }
    }
}

/// How a block is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    /// zlib streams (Hadoop's `DefaultCodec`, named `gz` in TFile).
    Gz,
}

impl Compression {
    fn by_name(what: &'static str, name: &str) -> Result<Compression> {
        match name {
            "none" => Ok(Compression::None),
            "gz" => Ok(Compression::Gz),
            other => Err(TFileError::Compression {
                what,
                name: other.to_string(),
            }),
        }
    }
}

/// Where a block lies in the file and how big it is once decompressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockRegion {
    pub offset: u64,
    pub compressed: u64,
    pub raw: u64,
}

impl BlockRegion {
    fn read(c: &mut Cursor<'_>, what: &'static str, limit: usize) -> Result<BlockRegion> {
        let (offset, size, raw) = (c.vlong()?, c.vlong()?, c.vlong()?);
        let inside = offset >= 0
            && size >= 0
            && offset
                .checked_add(size)
                .is_some_and(|end| end <= limit as i64);
        if !inside {
            return Err(TFileError::Region {
                what,
                offset,
                size,
                limit,
            });
        }
        if raw < 0 {
            return Err(TFileError::RawSize {
                what,
                raw,
                compressed: size,
            });
        }
        Ok(BlockRegion {
            offset: offset as u64,
            compressed: size as u64,
            raw: raw as u64,
        })
    }
}

/// A parsed TFile: where its data blocks are and how they are compressed.
#[derive(Debug)]
pub struct TFile<'a> {
    bytes: &'a [u8],
    compression: Compression,
    blocks: Vec<BlockRegion>,
}

impl<'a> TFile<'a> {
    /// Reads the tail, the meta index and the data index of the file `bytes`.
    pub fn parse(bytes: &'a [u8]) -> Result<TFile<'a>> {
        let len = bytes.len();
        if len < TAIL_LEN {
            return Err(TFileError::TooShort { len });
        }
        let mut tail = Cursor::new(&bytes[len - TAIL_LEN..], "BCFile tail");
        let meta_at = tail.i64_be()?;
        let (major, minor) = (tail.u16_be()? as i16, tail.u16_be()? as i16);
        if tail.take(16)? != MAGIC {
            return Err(TFileError::BadMagic);
        }
        if major != 1 {
            return Err(TFileError::Version { major, minor });
        }
        // Everything but the tail: blocks and indexes lie before it.
        let body = len - TAIL_LEN;
        if meta_at < 0 || meta_at as u64 > body as u64 {
            return Err(TFileError::Region {
                what: "meta index",
                offset: meta_at,
                size: 0,
                limit: body,
            });
        }
        let mut meta = Cursor::new(&bytes[meta_at as usize..body], "meta index");
        let count = meta.vlong()?;
        if count < 0 {
            return Err(TFileError::BadLength {
                what: "meta index",
                at: 0,
                value: count,
            });
        }
        let mut data_index = None;
        // Each entry takes several bytes, so the count cannot outrun the index's bytes; the
        // loop stops at the first entry that does not fit.
        for _ in 0..count {
            let name = meta.string()?;
            let Some(name) = name.strip_prefix("data:") else {
                return Err(TFileError::MetaName { name });
            };
            let compression = meta.string()?;
            let region = BlockRegion::read(&mut meta, "meta block", body)?;
            if name == DATA_INDEX {
                data_index = Some((compression, region));
            }
        }
        let (compression, region) =
            data_index.ok_or(TFileError::MissingMeta { name: DATA_INDEX })?;
        let compression = Compression::by_name("data index", &compression)?;
        let index = block_bytes(bytes, compression, region, "data index")?;
        let mut c = Cursor::new(&index, "data index");
        let compression = Compression::by_name("data blocks", &c.string()?)?;
        let n = c.vlong()?;
        if n < 0 {
            return Err(TFileError::BadLength {
                what: "data index",
                at: 0,
                value: n,
            });
        }
        let mut blocks = Vec::new();
        for _ in 0..n {
            blocks.push(BlockRegion::read(&mut c, "data block", body)?);
        }
        Ok(TFile {
            bytes,
            compression,
            blocks,
        })
    }

    /// How the data blocks are compressed.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// The data blocks' regions, in file order.
    pub fn blocks(&self) -> &[BlockRegion] {
        &self.blocks
    }

    /// Every entry of every data block, in file order; entries borrow uncompressed blocks
    /// and own the bytes of decompressed ones.
    pub fn entries(&self) -> Result<Vec<Entry<'a>>> {
        let mut out = Vec::new();
        for region in &self.blocks {
            match block_bytes(self.bytes, self.compression, *region, "data block")? {
                Cow::Borrowed(b) => read_entries(b, &mut out)?,
                Cow::Owned(b) => {
                    let mut owned = Vec::new();
                    read_entries(&b, &mut owned)?;
                    out.extend(owned.into_iter().map(|e| -> Entry<'a> { e.into_owned() }));
                }
            }
        }
        Ok(out)
    }
}

/// One key-value entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    pub key: Cow<'a, [u8]>,
    pub value: Cow<'a, [u8]>,
}

impl Entry<'_> {
    fn into_owned(self) -> Entry<'static> {
        Entry {
            key: Cow::Owned(self.key.into_owned()),
            value: Cow::Owned(self.value.into_owned()),
        }
    }
}

/// The entries of one uncompressed data block, appended to `out`.
fn read_entries<'b>(block: &'b [u8], out: &mut Vec<Entry<'b>>) -> Result<()> {
    let mut c = Cursor::new(block, "data block entry");
    while c.remaining() > 0 {
        let klen = c.length()?;
        let key = Cow::Borrowed(c.take(klen)?);
        let mut value: Cow<'b, [u8]> = Cow::Borrowed(&[]);
        loop {
            let at = c.pos();
            let n = c.vlong()?;
            let size = n.unsigned_abs();
            if size > c.remaining() as u64 {
                return Err(TFileError::BadLength {
                    what: "value chunk",
                    at,
                    value: n,
                });
            }
            let chunk = c.take(size)?;
            value = if value.is_empty() {
                Cow::Borrowed(chunk)
            } else {
                let mut v = value.into_owned();
                v.extend_from_slice(chunk);
                Cow::Owned(v)
            };
            if n >= 0 {
                break;
            }
        }
        out.push(Entry { key, value });
    }
    Ok(())
}

/// A block's uncompressed bytes: borrowed when stored plain, else inflated.
fn block_bytes<'f>(
    file: &'f [u8],
    compression: Compression,
    region: BlockRegion,
    what: &'static str,
) -> Result<Cow<'f, [u8]>> {
    // BlockRegion::read checked the region lies inside the file.
    let stored = &file[region.offset as usize..(region.offset + region.compressed) as usize];
    match compression {
        Compression::None => Ok(Cow::Borrowed(stored)),
        Compression::Gz => {
            if region.raw > region.compressed.saturating_mul(MAX_DEFLATE_RATIO).max(64) {
                return Err(TFileError::RawSize {
                    what,
                    raw: region.raw as i64,
                    compressed: region.compressed as i64,
                });
            }
            inflate(stored, region.raw, what).map(Cow::Owned)
        }
    }
}

/// Inflates back-to-back zlib streams (Hadoop finishes a stream on each flush) into at most
/// `raw` bytes, which must be exactly what they hold. Output grows piece by piece, so a
/// hostile stream costs at most `raw` (itself bounded by the compressed size) plus one piece.
fn inflate(mut input: &[u8], raw: u64, what: &'static str) -> Result<Vec<u8>> {
    use flate2::{Decompress, FlushDecompress, Status};
    const PIECE: usize = 64 * 1024;
    let bad = |reason: &str| TFileError::Inflate {
        what,
        reason: reason.to_string(),
    };
    let mut out: Vec<u8> = Vec::new();
    let mut piece = vec![0u8; PIECE];
    while !input.is_empty() {
        let mut d = Decompress::new(true);
        loop {
            let (in0, out0) = (d.total_in(), d.total_out());
            let status = d
                .decompress(input, &mut piece, FlushDecompress::None)
                .map_err(|e| bad(&e.to_string()))?;
            let used = (d.total_in() - in0) as usize;
            let produced = (d.total_out() - out0) as usize;
            input = &input[used..];
            if out.len() as u64 + produced as u64 > raw {
                return Err(TFileError::RawSizeMismatch {
                    what,
                    declared: raw,
                    actual: out.len() as u64 + produced as u64,
                });
            }
            out.extend_from_slice(&piece[..produced]);
            if status == Status::StreamEnd {
                break;
            }
            if used == 0 && produced == 0 {
                return Err(bad(if input.is_empty() {
                    "the stream ends before its end marker"
                } else {
                    "the decompressor makes no progress"
                }));
            }
        }
    }
    if out.len() as u64 != raw {
        return Err(TFileError::RawSizeMismatch {
            what,
            declared: raw,
            actual: out.len() as u64,
        });
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests;
