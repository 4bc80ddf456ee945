//! A split's records out of a stream of the file's bytes: sans-IO, the same state machine
//! for every reader (`yarn-am split cat`, tests, benches).
//!
//! The reader asks [`SplitRecords::position`] where to start, feeds the bytes it reads from
//! there in order ([`SplitRecords::feed`], any chunk sizes), writes out what each call hands
//! back, and stops when [`SplitRecords::is_done`] says so or the file ends
//! ([`SplitRecords::end_of_file`]).
//!
//! **Text** follows MapReduce's line rule (Hadoop 1's `LineRecordReader`, the look-back
//! form the issue names): a line belongs to the split holding its first byte. A split that
//! does not start at offset 0 reads from `start - 1` and skips up to and including the first
//! `\n` it meets (when the byte before `start` is a `\n`, only that byte: the split starts at
//! a line start and keeps its first line); every split reads past its end to finish the line
//! it is in. So each line is in exactly one split, and the splits' outputs, concatenated in
//! order, are the file. (Hadoop 2+ reads from `start` and keeps reading while `pos <= end`:
//! a line starting exactly on a boundary then goes to the split before; either rule puts
//! each line in exactly one split.) Records are written as they are in the file, their
//! terminator included: `\n`, or `\r\n` (the `\r` is the line's last byte before the `\n`,
//! so a `\r\n` never splits); a lone `\r` is data, not a terminator (Hadoop's LineReader
//! also ends a line at a lone CR). The file's last line may lack a terminator.
//!
//! The over-read is bounded: a line that runs more than `max_line` bytes past the split's
//! end is [`RecordError::LineTooLong`]. The skip at the start needs no bound: it stops at
//! the split's end (a line that covers the whole split belongs to an earlier one).
//!
//! **Bytes** is the raw range `[start, start + length)`, as `{split.url}` serves it.

use thiserror::Error;

pub use yarn_am_wire::inputs::RecordFormat;

/// Default bound of the read past a split's end (a line longer than this that crosses the
/// end is an error, not an unbounded read).
pub const DEFAULT_MAX_LINE: u64 = 16 << 20;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum RecordError {
    #[error(
        "the line starting at byte {line_start} runs more than {limit} bytes past the split's \
         end ({end}) without a newline (raise --max-line-bytes, or use --format bytes)"
    )]
    LineTooLong {
        line_start: u64,
        end: u64,
        limit: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Text, not at offset 0: dropping the partial line before the split's first line.
    Skip,
    /// Writing records out.
    Emit,
    Done,
}

/// The state machine of one split (see the module doc).
#[derive(Debug, Clone)]
pub struct SplitRecords {
    format: RecordFormat,
    start: u64,
    end: u64,
    max_line: u64,
    /// File offset of the next byte to feed.
    pos: u64,
    phase: Phase,
    /// Text: where the current line started (it is complete when `at_line_start`).
    line_start: u64,
    at_line_start: bool,
}

impl SplitRecords {
    /// The split `[start, start + length)` read as `format`; `max_line` bounds the read past
    /// its end (text).
    pub fn new(format: RecordFormat, start: u64, length: u64, max_line: u64) -> Self {
        let end = start.saturating_add(length);
        let skip = format == RecordFormat::Text && start > 0;
        let mut s = SplitRecords {
            format,
            start,
            end,
            max_line,
            pos: if skip { start - 1 } else { start },
            phase: if skip { Phase::Skip } else { Phase::Emit },
            line_start: start,
            at_line_start: true,
        };
        if length == 0 {
            s.phase = Phase::Done;
        }
        s
    }

    /// The file offset of the next byte the reader must feed (at first: where to start).
    pub fn position(&self) -> u64 {
        self.pos
    }

    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// The split's end offset (exclusive): bytes the reader should ask for at least up to,
    /// unless the machine is done before.
    pub fn end(&self) -> u64 {
        self.end
    }

    pub fn start(&self) -> u64 {
        self.start
    }

    /// Takes the next bytes of the file (at [`SplitRecords::position`]) and returns the part
    /// of them to write out (always one contiguous piece: the skip is at the front, the stop
    /// at the back). Bytes after the machine is done are ignored and do not move the
    /// position.
    pub fn feed<'a>(&mut self, chunk: &'a [u8]) -> Result<&'a [u8], RecordError> {
        let mut i = 0;
        let mut out_from = 0;
        while i < chunk.len() {
            match self.phase {
                Phase::Done => break,
                Phase::Skip => {
                    if self.pos >= self.end {
                        // No line starts inside the split: it has no records.
                        self.phase = Phase::Done;
                        break;
                    }
                    match chunk[i..].iter().position(|&b| b == b'\n') {
                        Some(nl) if self.pos + (nl as u64) < self.end => {
                            i += nl + 1;
                            self.pos += nl as u64 + 1;
                            self.phase = Phase::Emit;
                            self.line_start = self.pos;
                            self.at_line_start = true;
                            out_from = i;
                        }
                        _ => {
                            // Up to the split's end or the chunk's, whichever is first.
                            let n = ((self.end - self.pos) as usize).min(chunk.len() - i);
                            i += n;
                            self.pos += n as u64;
                            out_from = i;
                        }
                    }
                }
                Phase::Emit if self.format == RecordFormat::Bytes => {
                    let n = ((self.end - self.pos) as usize).min(chunk.len() - i);
                    i += n;
                    self.pos += n as u64;
                    if self.pos >= self.end {
                        self.phase = Phase::Done;
                    }
                }
                Phase::Emit => {
                    if self.at_line_start && self.pos >= self.end {
                        self.phase = Phase::Done;
                        break;
                    }
                    // Inside the split a whole run is taken at once; past the end only up
                    // to the newline that finishes the line.
                    let rest = &chunk[i..];
                    let take = if self.pos < self.end {
                        let n = ((self.end - self.pos) as usize).min(rest.len());
                        match rest[..n].iter().rposition(|&b| b == b'\n') {
                            Some(last) => {
                                self.line_start = self.pos + last as u64 + 1;
                                self.at_line_start = last + 1 == n;
                            }
                            None => self.at_line_start = false,
                        }
                        n
                    } else {
                        match rest.iter().position(|&b| b == b'\n') {
                            Some(nl) => {
                                self.at_line_start = true;
                                nl + 1
                            }
                            None => {
                                self.at_line_start = false;
                                rest.len()
                            }
                        }
                    };
                    i += take;
                    self.pos += take as u64;
                    if self.at_line_start {
                        self.line_start = self.pos;
                    }
                    if !self.at_line_start && self.pos > self.end.saturating_add(self.max_line) {
                        self.phase = Phase::Done;
                        return Err(RecordError::LineTooLong {
                            line_start: self.line_start,
                            end: self.end,
                            limit: self.max_line,
                        });
                    }
                }
            }
        }
        let out_to = if self.phase == Phase::Skip {
            out_from
        } else {
            i
        };
        Ok(&chunk[out_from.min(out_to)..out_to])
    }

    /// The file ended at [`SplitRecords::position`]: a last line without a terminator is
    /// complete; the machine is done.
    pub fn end_of_file(&mut self) {
        self.phase = Phase::Done;
    }

    /// How many bytes from [`SplitRecords::position`] the reader needs at least before the
    /// machine can be done: up to the split's end, then (text) some more to finish the line.
    /// `past_end_chunk` is the reader's step past the end.
    pub fn wanted(&self, past_end_chunk: u64) -> u64 {
        if self.is_done() {
            0
        } else if self.pos < self.end {
            self.end - self.pos
        } else {
            past_end_chunk.min(self.end.saturating_add(self.max_line) + 1 - self.pos)
        }
    }
}

/// The records of `[start, start + length)` of `file`, fed in chunks of `chunk` bytes (a
/// test helper and the reference the readers' tests compare with).
pub fn records_of(
    file: &[u8],
    format: RecordFormat,
    start: u64,
    length: u64,
    max_line: u64,
    chunk: usize,
) -> Result<Vec<u8>, RecordError> {
    let mut m = SplitRecords::new(format, start, length, max_line);
    let mut out = Vec::new();
    while !m.is_done() {
        let at = m.position() as usize;
        if at >= file.len() {
            m.end_of_file();
            break;
        }
        let to = (at + chunk.max(1)).min(file.len());
        out.extend_from_slice(m.feed(&file[at..to])?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const BIG: u64 = 1 << 40;

    fn text(file: &[u8], start: u64, len: u64) -> String {
        let out = records_of(file, RecordFormat::Text, start, len, BIG, 3).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_line_belongs_to_the_split_holding_its_first_byte() {
        let f = b"ab\ncd\nef\n";
        // Split [0, 4): "ab\n" and "cd\n" (starts at 3 < 4, finished past the end).
        assert_eq!(text(f, 0, 4), "ab\ncd\n");
        // [4, 8): skips "d\n", keeps "ef\n" (starts at 6).
        assert_eq!(text(f, 4, 4), "ef\n");
        // [8, 9): the "\n" at 8 is the rest of "ef\n": nothing starts here.
        assert_eq!(text(f, 8, 1), "");
        // A split starting exactly at a line start (byte before is '\n') keeps that line.
        assert_eq!(text(f, 3, 3), "cd\n");
        assert_eq!(text(f, 0, 3), "ab\n");
        // A split inside one long line has no records.
        assert_eq!(text(b"abcdefgh\n", 2, 3), "");
    }

    #[test]
    fn crlf_and_no_trailing_newline() {
        let f = b"a\r\nb\r\nc";
        assert_eq!(text(f, 0, 2), "a\r\n");
        // Starting between '\r' and '\n': the "\n" is skipped, "b\r\n" kept.
        assert_eq!(text(f, 2, 2), "b\r\n");
        assert_eq!(text(f, 4, 3), "c");
        assert_eq!(text(f, 6, 1), "c");
        assert_eq!(text(f, 0, 7), "a\r\nb\r\nc");
    }

    #[test]
    fn the_first_read_is_one_byte_before_the_start() {
        let m = SplitRecords::new(RecordFormat::Text, 10, 5, BIG);
        assert_eq!(m.position(), 9);
        let m = SplitRecords::new(RecordFormat::Text, 0, 5, BIG);
        assert_eq!(m.position(), 0);
        let m = SplitRecords::new(RecordFormat::Bytes, 10, 5, BIG);
        assert_eq!(m.position(), 10);
    }

    #[test]
    fn bytes_are_the_raw_range() {
        let f = b"ab\ncd\nef\n";
        let out = records_of(f, RecordFormat::Bytes, 2, 5, 0, 2).unwrap();
        assert_eq!(out, b"\ncd\ne");
    }

    #[test]
    fn the_read_past_the_end_is_bounded() {
        let mut f = b"x\n".to_vec();
        f.extend(std::iter::repeat_n(b'y', 100));
        f.push(b'\n');
        let e = records_of(&f, RecordFormat::Text, 0, 4, 10, 7).unwrap_err();
        assert_eq!(
            e,
            RecordError::LineTooLong {
                line_start: 2,
                end: 4,
                limit: 10
            }
        );
        assert!(e.to_string().contains("byte 2"), "{e}");
        // Under the bound it completes.
        let out = records_of(&f, RecordFormat::Text, 0, 4, 100, 7).unwrap();
        assert_eq!(out, f);
    }

    #[test]
    fn wanted_asks_for_the_split_then_steps_past_it() {
        let mut m = SplitRecords::new(RecordFormat::Text, 0, 4, 100);
        assert_eq!(m.wanted(8), 4);
        assert_eq!(m.feed(b"ab\nc").unwrap(), b"ab\nc");
        assert_eq!(m.wanted(8), 8);
        assert_eq!(m.feed(b"d\nzz").unwrap(), b"d\n");
        assert!(m.is_done());
        assert_eq!(m.position(), 6);
        assert_eq!(m.wanted(8), 0);
    }

    proptest! {
        /// Whatever the file (newlines, `\r\n`, no trailing newline), the split size (even
        /// below a line's length) and the chunking, the splits' outputs concatenated in
        /// order are the file, byte for byte: every line in exactly one split.
        #[test]
        fn the_splits_outputs_concatenated_are_the_file(
            pieces in proptest::collection::vec(
                prop_oneof![Just(b"\n".to_vec()), Just(b"\r\n".to_vec()), Just(b"\r".to_vec()),
                            proptest::collection::vec(b'a'..=b'e', 0..12)],
                0..40),
            split in 1u64..30,
            chunk in 1usize..20,
        ) {
            let file: Vec<u8> = pieces.concat();
            let mut all = Vec::new();
            let mut start = 0;
            while start < file.len() as u64 {
                let len = split.min(file.len() as u64 - start);
                let out = records_of(&file, RecordFormat::Text, start, len, BIG, chunk).unwrap();
                // Each split's output is whole lines: it starts at a line start.
                if !out.is_empty() && !all.is_empty() {
                    prop_assert_eq!(all.last(), Some(&b'\n'));
                }
                all.extend(out);
                let bytes = records_of(&file, RecordFormat::Bytes, start, len, 0, chunk).unwrap();
                prop_assert_eq!(&bytes[..], &file[start as usize..(start + len) as usize]);
                start += len;
            }
            prop_assert_eq!(all, file);
        }
    }
}
