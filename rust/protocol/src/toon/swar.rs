//! Byte searches eight bytes at a time in a machine word, for the short spans the
//! decoder searches most (a line, a key, a cell, a quoted string).
//!
//! A call into `memchr` sets up vector registers and dispatches on the CPU's features,
//! which costs more than reading a typical 10 to 40 byte span a word at a time; past
//! [`WORD_BY_WORD`] bytes the search goes on with `memchr`.

/// Bytes searched a word at a time before the rest goes to `memchr`.
const WORD_BY_WORD: usize = 128;

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
pub(crate) fn load_word(chunk: &[u8]) -> u64 {
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

/// The offset of the first byte of `bytes` equal to `target`.
#[inline]
pub(crate) fn find_byte(target: u8, bytes: &[u8]) -> Option<usize> {
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
pub(crate) fn find_either(first: u8, second: u8, bytes: &[u8]) -> Option<usize> {
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
pub(crate) fn find_any_of_three(first: u8, second: u8, third: u8, bytes: &[u8]) -> Option<usize> {
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
pub(crate) fn run_length(byte: u8, bytes: &[u8]) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Filler bytes one bit away from the targets, which must not be taken for them.
    fn filler(length: usize) -> Vec<u8> {
        (0..length)
            .map(|i| [b'\x0b', b'\x8a', b'#', b'\xa2', b'!', b'\xa0'][i % 6])
            .collect()
    }

    #[test]
    fn every_offset_across_words_tail_and_memchr() {
        for length in 0..150 {
            let text = filler(length);
            assert_eq!(find_byte(b'\n', &text), None, "length {length}");
            assert_eq!(find_either(b'"', b'\n', &text), None, "length {length}");
            for at in 0..length {
                let mut with = text.clone();
                with[at] = b'\n';
                if at + 1 < length {
                    with[at + 1] = b'"';
                }
                assert_eq!(
                    find_byte(b'\n', &with),
                    Some(at),
                    "length {length}, at {at}"
                );
                assert_eq!(find_byte(b'"', &with), (at + 1 < length).then_some(at + 1));
                assert_eq!(find_either(b'"', b'\n', &with), Some(at), "at {at}");
                assert_eq!(find_either(b'\n', b'"', &with), Some(at), "at {at}");
                let mut quote_first = text.clone();
                quote_first[at] = b'"';
                if at + 1 < length {
                    quote_first[at + 1] = b'\n';
                }
                assert_eq!(find_either(b'\n', b'"', &quote_first), Some(at));
            }
        }
    }

    #[test]
    fn runs_end_at_every_offset() {
        for length in 0..40 {
            let spaces = vec![b' '; length];
            assert_eq!(run_length(b' ', &spaces), length, "length {length}");
            for at in 0..length {
                for other in [b'!', 0xa0, b'\n', b'\t'] {
                    let mut text = spaces.clone();
                    text[at] = other;
                    assert_eq!(run_length(b' ', &text), at, "length {length}, at {at}");
                    assert_eq!(run_length(b' ', &text[at..]), 0, "from the byte itself");
                }
            }
        }
    }
}
