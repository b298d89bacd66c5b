//! The searches eight bytes at a time in a machine word: on every target but x86-64, and
//! there for spans shorter than a lane.
//!
//! Past [`LONG_SPAN`] bytes the search goes on with `memchr`.

use super::LONG_SPAN as WORD_BY_WORD;

const ONES: u64 = u64::from_le_bytes([0x01; 8]);
const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);

/// `byte` in every byte of a word.
#[inline]
const fn splat(byte: u8) -> u64 {
    ONES * byte as u64
}

/// The eight bytes at the start of `chunk` (which has at least eight) as one word; the
/// first byte is the lowest.
#[inline]
fn load_word(chunk: &[u8]) -> u64 {
    let mut eight = [0; 8];
    eight.copy_from_slice(&chunk[..8]);
    u64::from_le_bytes(eight)
}

/// The high bit of the first zero byte of `word` set, possibly with false marks above it,
/// or 0 when no byte is zero: a borrow only runs on past a zero byte, so the lowest mark is
/// exact. Little-endian, `trailing_zeros() / 8` of a nonzero result is the byte's index.
#[inline]
const fn zero_byte_marks(word: u64) -> u64 {
    word.wrapping_sub(ONES) & !word & HIGHS
}

/// The high bit of the first byte of `word` under `limit` (at most 0x80) set, possibly with
/// false marks above it, or 0 when no byte is under it; as exact as [`zero_byte_marks`], for
/// the same reason (bytes from 0x80 up are masked out by `!word`).
#[inline]
const fn under_marks(word: u64, limit: u8) -> u64 {
    word.wrapping_sub(splat(limit)) & !word & HIGHS
}

/// Whether `byte` ends a JSON string's run of plain bytes: its closing quote, an escape, or
/// a control character (which JSON does not allow in a string).
#[inline]
pub(super) const fn ends_json_run(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// The offset of the first byte of `bytes` that [`ends_json_run`], a word at a time to the
/// end: no `memchr` function takes that class of bytes.
#[inline]
pub(super) fn find_json_run_end(bytes: &[u8]) -> Option<usize> {
    let mut rest = bytes;
    let mut at = 0;
    // Word by word with `split_first_chunk`, which the compiler turns into plain loads and a
    // pointer bump; `chunks_exact` with `load_word` cost the server's string reads a fifth more.
    while let Some((word, after)) = rest.split_first_chunk::<8>() {
        let word = u64::from_le_bytes(*word);
        let marks = under_marks(word, 0x20)
            | zero_byte_marks(word ^ splat(b'"'))
            | zero_byte_marks(word ^ splat(b'\\'));
        if marks != 0 {
            return Some(at + (marks.trailing_zeros() / 8) as usize);
        }
        rest = after;
        at += 8;
    }
    let tail = rest.iter().position(|&b| ends_json_run(b))?;
    Some(at + tail)
}

/// The offset of the first byte of `bytes` equal to `target`.
#[inline]
pub(super) fn find_byte(target: u8, bytes: &[u8]) -> Option<usize> {
    let head = &bytes[..bytes.len().min(WORD_BY_WORD)];
    let mut words = head.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let marks = zero_byte_marks(load_word(word) ^ splat(target));
        if marks != 0 {
            return Some(at + (marks.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    if let Some(i) = words.remainder().iter().position(|&b| b == target) {
        return Some(at + i);
    }
    let rest = bytes.get(WORD_BY_WORD..)?;
    memchr::memchr(target, rest).map(|i| WORD_BY_WORD + i)
}

/// The offset of the first byte of `bytes` equal to `first` or `second`.
///
/// Each target's lowest mark is exact, so the lowest mark of both together is too.
#[inline]
pub(super) fn find_either(first: u8, second: u8, bytes: &[u8]) -> Option<usize> {
    let head = &bytes[..bytes.len().min(WORD_BY_WORD)];
    let mut words = head.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let word = load_word(word);
        let marks = zero_byte_marks(word ^ splat(first)) | zero_byte_marks(word ^ splat(second));
        if marks != 0 {
            return Some(at + (marks.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    if let Some(i) = words
        .remainder()
        .iter()
        .position(|&b| b == first || b == second)
    {
        return Some(at + i);
    }
    let rest = bytes.get(WORD_BY_WORD..)?;
    memchr::memchr2(first, second, rest).map(|i| WORD_BY_WORD + i)
}

/// The offset of the first byte of `bytes` equal to `first`, `second` or `third`.
#[inline]
pub(super) fn find_any_of_three(first: u8, second: u8, third: u8, bytes: &[u8]) -> Option<usize> {
    let head = &bytes[..bytes.len().min(WORD_BY_WORD)];
    let mut words = head.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let word = load_word(word);
        let marks = zero_byte_marks(word ^ splat(first))
            | zero_byte_marks(word ^ splat(second))
            | zero_byte_marks(word ^ splat(third));
        if marks != 0 {
            return Some(at + (marks.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    if let Some(i) = words
        .remainder()
        .iter()
        .position(|&b| b == first || b == second || b == third)
    {
        return Some(at + i);
    }
    let rest = bytes.get(WORD_BY_WORD..)?;
    memchr::memchr3(first, second, third, rest).map(|i| WORD_BY_WORD + i)
}

/// The length of the run of `byte` that starts `bytes`.
#[inline]
pub(super) fn run_length(byte: u8, bytes: &[u8]) -> usize {
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..at + 8) {
        // Nonzero bytes of the XOR differ from `byte`.
        let others = load_word(chunk) ^ splat(byte);
        if others != 0 {
            return at + (others.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while at < bytes.len() && bytes[at] == byte {
        at += 1;
    }
    at
}
