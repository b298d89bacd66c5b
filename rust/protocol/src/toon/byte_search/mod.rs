//! Byte searches for the short spans the decoder reads most: a line's end and indentation,
//! a key, a cell, a quoted string; and a JSON string's plain run, for the server's reader of
//! JSON requests ([`crate::json::plain_run_length`]).
//!
//! A call into `memchr` sets up vector registers and dispatches on the CPU's features, which
//! costs more than reading a typical 10 to 40 byte span inline. On x86-64 a span is read
//! sixteen bytes at a time in an SSE2 register (`lanes.rs`), elsewhere eight at a time in a
//! machine word (`words.rs`, which on x86-64 reads the spans shorter than a lane); past
//! [`LONG_SPAN`] bytes both go on with `memchr`.
//!
//! Which of these the compiler inlines into the decoder's line loop moves its instruction
//! count by more than the searches themselves cost (tens of thousands of instructions for
//! payload (d) of the codec bench, see docs/BENCHMARKS.md): the shapes here are the ones
//! measured best, and a change to them is measured with `examples/codec_ops.rs`.

#[cfg(target_arch = "x86_64")]
mod lanes;
mod words;

/// Bytes searched inline before the rest goes to `memchr`.
const LONG_SPAN: usize = 128;

/// The offset of the first `target` in `bytes`.
#[inline]
pub(crate) fn find_byte(target: u8, bytes: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Ok(found) = lanes::first_marked(bytes, |l| lanes::bits(lanes::equal(l, target))) {
        return found.or_else(|| past_long_span(bytes, |rest| memchr::memchr(target, rest)));
    }
    words::find_byte(target, bytes)
}

/// The offset of the first `first` or `second` in `bytes`.
#[inline]
pub(crate) fn find_either(first: u8, second: u8, bytes: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Ok(found) = lanes::first_marked(bytes, |l| {
        lanes::bits(lanes::or(lanes::equal(l, first), lanes::equal(l, second)))
    }) {
        return found
            .or_else(|| past_long_span(bytes, |rest| memchr::memchr2(first, second, rest)));
    }
    words::find_either(first, second, bytes)
}

/// The offset of the first of the three `targets` in `bytes`.
#[inline]
pub(crate) fn find_any_of_three(targets: [u8; 3], bytes: &[u8]) -> Option<usize> {
    let [first, second, third] = targets;
    #[cfg(target_arch = "x86_64")]
    if let Ok(found) = lanes::first_marked(bytes, |l| {
        let two = lanes::or(lanes::equal(l, first), lanes::equal(l, second));
        lanes::bits(lanes::or(two, lanes::equal(l, third)))
    }) {
        return found
            .or_else(|| past_long_span(bytes, |rest| memchr::memchr3(first, second, third, rest)));
    }
    words::find_any_of_three(first, second, third, bytes)
}

/// The offset of the first byte of `bytes` that ends a JSON string's plain run: a quote, a
/// backslash or a control character. A word at a time on every target: the strings it reads
/// (a request's names and token) are too short for a lane to pay for itself.
#[inline]
pub(crate) fn find_json_run_end(bytes: &[u8]) -> Option<usize> {
    words::find_json_run_end(bytes)
}

/// The length of the run of `byte` that starts `bytes`.
#[inline]
pub(crate) fn run_length(byte: u8, bytes: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let mut at = 0;
        while let Some(chunk) = bytes.get(at..at + lanes::LANE) {
            let others = !lanes::bits(lanes::equal(lanes::load(chunk), byte)) & 0xffff;
            if others != 0 {
                return at + others.trailing_zeros() as usize;
            }
            at += lanes::LANE;
        }
        at + words::run_length(byte, &bytes[at..])
    }
    #[cfg(not(target_arch = "x86_64"))]
    words::run_length(byte, bytes)
}

/// The search of what `bytes` holds past [`LONG_SPAN`], by `long` (a `memchr` function).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn past_long_span(bytes: &[u8], long: impl FnOnce(&[u8]) -> Option<usize>) -> Option<usize> {
    let rest = bytes.get(LONG_SPAN..)?;
    long(rest).map(|i| LONG_SPAN + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One implementation of the searches: the one the decoder calls (lanes on x86-64), or
    /// the word search every other target calls (and x86-64 under a lane).
    struct Searches {
        name: &'static str,
        find_byte: fn(u8, &[u8]) -> Option<usize>,
        find_either: fn(u8, u8, &[u8]) -> Option<usize>,
        find_any_of_three: fn([u8; 3], &[u8]) -> Option<usize>,
        run_length: fn(u8, &[u8]) -> usize,
    }

    const BOTH: [Searches; 2] = [
        Searches {
            name: "as called",
            find_byte,
            find_either,
            find_any_of_three,
            run_length,
        },
        Searches {
            name: "words",
            find_byte: words::find_byte,
            find_either: words::find_either,
            find_any_of_three: |[first, second, third], bytes| {
                words::find_any_of_three(first, second, third, bytes)
            },
            run_length: words::run_length,
        },
    ];

    /// Filler bytes one bit away from the targets, which must not be taken for them.
    fn filler(length: usize) -> Vec<u8> {
        (0..length)
            .map(|i| [b'\x0b', b'\x8a', b'#', b'\xa2', b'!', b'\xa0'][i % 6])
            .collect()
    }

    /// Every search agrees with a plain scan, at every length up to past the long-span
    /// bound (whole lanes or words, an overlapping last lane, a byte-by-byte tail, `memchr`
    /// past [`LONG_SPAN`]) and with a target at every offset.
    #[test]
    fn each_search_finds_what_a_plain_scan_finds() {
        for searches in &BOTH {
            for length in 0..LONG_SPAN + 40 {
                for at in (0..length).chain([length]) {
                    let mut text = filler(length);
                    if at < length {
                        text[at] = b':';
                    }
                    let expected = (at < length).then_some(at);
                    let case = format!("{}: length {length}, target at {at}", searches.name);
                    assert_eq!((searches.find_byte)(b':', &text), expected, "{case}");
                    assert_eq!(
                        (searches.find_either)(b'"', b':', &text),
                        expected,
                        "{case}"
                    );
                    assert_eq!(
                        (searches.find_either)(b':', b'"', &text),
                        expected,
                        "{case}"
                    );
                    let found = (searches.find_any_of_three)([b'[', b'"', b':'], &text);
                    assert_eq!(found, expected, "{case}");
                }
            }
        }
    }

    /// The first of several targets wins, whichever of them it is, with the other one in
    /// the same lane or word or a later one.
    #[test]
    fn the_first_of_the_targets_wins() {
        for searches in &BOTH {
            for length in 1..70 {
                for at in 0..length {
                    for (first, second) in [(b'"', b'\n'), (b'\n', b'"')] {
                        let mut text = filler(length);
                        text[length - 1] = second;
                        text[at] = first;
                        let case = format!("{}: length {length}, at {at}", searches.name);
                        let found = (searches.find_either)(b'"', b'\n', &text);
                        assert_eq!(found, Some(at), "{case}");
                        let found = (searches.find_any_of_three)([b'[', b'\n', b'"'], &text);
                        assert_eq!(found, Some(at), "{case}");
                    }
                }
            }
        }
    }

    #[test]
    fn runs_end_at_every_offset() {
        for searches in &BOTH {
            for length in 0..50 {
                let spaces = vec![b' '; length];
                let case = format!("{}: length {length}", searches.name);
                assert_eq!((searches.run_length)(b' ', &spaces), length, "{case}");
                for at in 0..length {
                    for other in [b'!', 0xa0, b'\n', b'\t'] {
                        let mut text = spaces.clone();
                        text[at] = other;
                        assert_eq!((searches.run_length)(b' ', &text), at, "{case}, at {at}");
                        assert_eq!((searches.run_length)(b' ', &text[at..]), 0, "{case}");
                    }
                }
            }
        }
    }

    fn json_run_end_byte_at_a_time(bytes: &[u8]) -> Option<usize> {
        bytes.iter().position(|&byte| words::ends_json_run(byte))
    }

    /// Every byte value at every place of runs up to three words long: the bytes that end a
    /// run are found there, and no other byte is taken for one.
    #[test]
    fn a_json_run_ends_at_every_byte_that_ends_it_and_no_other() {
        for length in 0..=24 {
            for place in 0..length {
                for byte in 0..=u8::MAX {
                    let mut bytes = vec![b'a'; length];
                    bytes[place] = byte;
                    assert_eq!(
                        find_json_run_end(&bytes),
                        json_run_end_byte_at_a_time(&bytes),
                        "byte {byte:#04x} at {place} of {length}"
                    );
                }
            }
        }
    }

    proptest::proptest! {
        /// Runs of any bytes, weighted to those at the edges of the word masks (the bytes
        /// that end a run, their neighbours, UTF-8's high bytes), several of them to a word.
        #[test]
        fn a_json_run_ends_where_a_byte_at_a_time_ends_it(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![
                    4 => proptest::strategy::Just(b'a'),
                    1 => proptest::sample::select(vec![
                        0x00, 0x01, 0x1f, 0x20, 0x21, b'"', 0x23, 0x5b, b'\\', 0x5d, 0x7f,
                        0x80, 0x9f, 0xa0, 0xdc, 0xe2, 0xff,
                    ]),
                    1 => proptest::arbitrary::any::<u8>(),
                ],
                0..80,
            ),
        ) {
            proptest::prop_assert_eq!(
                find_json_run_end(&bytes),
                json_run_end_byte_at_a_time(&bytes)
            );
        }
    }
}
