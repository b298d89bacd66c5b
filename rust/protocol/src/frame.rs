//! Length-prefixed framing: `<payload length in decimal ASCII>\n<payload>`.
//!
//! The header is 1 to 10 ASCII digits with no sign, space, carriage return or leading
//! zero (`0` alone is the header of an empty payload), then a single `\n`. Every error
//! is fatal: once a header is bad the stream cannot be resynchronised, so the caller
//! closes the connection.
//!
//! The decoder never trusts a declared length with memory: it reserves room only in
//! step with the bytes that actually arrive, so a peer that announces 64 MiB and then
//! sends ten bytes costs ten bytes (plus one bounded read-ahead chunk), not 64 MiB.

use bytes::{BufMut, Bytes, BytesMut};

pub use crate::contract::MAX_FRAME_BYTES;

/// The most digits a header may have. Ten digits already exceed any sane payload; the
/// bound lets a runaway header be rejected after eleven bytes instead of never.
const MAX_HEADER_DIGITS: usize = 10;

/// The largest length ten digits can spell. A configured maximum above it is clamped,
/// because no header could declare more.
const MAX_EXPRESSIBLE: u64 = 9_999_999_999;

/// How much room the decoder reserves ahead of the buffered bytes while a body is
/// incomplete. It keeps reads of large frames efficient without letting the declared
/// length decide how much memory is committed.
const READ_AHEAD: usize = 64 * 1024;

/// Why a stream of frames had to be abandoned. Every variant is fatal for the
/// connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The header is not 1 to 10 plain decimal digits followed by `\n`.
    #[error("bad frame header: {reason}")]
    BadHeader {
        /// What was wrong with the header, in a few words.
        reason: &'static str,
    },
    /// The header declares (at least) `declared` bytes, more than the limit `max`.
    #[error("frame declares {declared} bytes, more than the maximum of {max}")]
    TooLarge {
        /// The length the header spells, or the part of it read before it crossed
        /// the limit.
        declared: u64,
        /// The configured maximum payload size.
        max: usize,
    },
    /// The stream ended inside a header or a body.
    #[error("stream ended inside a frame ({buffered} bytes of it buffered)")]
    Truncated {
        /// How many bytes of the unfinished frame were buffered when the stream ended.
        buffered: usize,
    },
}

/// Where the decoder stands between calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Expecting (the rest of) a header at the start of the buffer.
    Header,
    /// The header was consumed; the body of `len` bytes starts at the buffer's start.
    Body { len: usize },
    /// An error was returned; it is returned again, because the stream is unusable.
    Failed(FrameError),
}

/// Incremental decoder of length-prefixed frames.
///
/// Feed it the bytes read so far; it removes complete frames from the front of the
/// buffer and leaves everything else in place. `Ok(None)` means "not enough bytes yet",
/// which is the normal state between reads. The shape matches a `tokio_util` codec's
/// `decode`/`decode_eof`, so a server can wrap it directly.
#[derive(Debug, Clone)]
pub struct FrameDecoder {
    max_frame_bytes: usize,
    state: State,
}

impl Default for FrameDecoder {
    /// A decoder allowing payloads up to [`MAX_FRAME_BYTES`].
    fn default() -> Self {
        Self::new(MAX_FRAME_BYTES)
    }
}

impl FrameDecoder {
    /// A decoder that rejects payloads longer than `max_frame_bytes`.
    ///
    /// A limit above what a ten-digit header can declare is clamped to that.
    pub fn new(max_frame_bytes: usize) -> Self {
        Self {
            max_frame_bytes: clamp_max(max_frame_bytes),
            state: State::Header,
        }
    }

    /// The largest payload this decoder accepts.
    pub fn max_frame_bytes(&self) -> usize {
        self.max_frame_bytes
    }

    /// Takes the next complete frame's payload off the front of `buf`.
    ///
    /// Returns `Ok(None)` when more bytes are needed. A bad or oversized header is
    /// reported as soon as the bytes seen prove it bad, without waiting for the rest.
    /// After an error every later call returns the same error.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
        loop {
            match self.state {
                State::Failed(err) => return Err(err),
                State::Header => match scan_header(buf, self.max_frame_bytes) {
                    Ok(None) => return Ok(None),
                    Ok(Some((header_len, len))) => {
                        let _ = buf.split_to(header_len);
                        self.state = State::Body { len };
                    }
                    Err(err) => {
                        self.state = State::Failed(err);
                        return Err(err);
                    }
                },
                State::Body { len } => {
                    if buf.len() >= len {
                        self.state = State::Header;
                        return Ok(Some(buf.split_to(len).freeze()));
                    }
                    // Grow only by what the next reads can plausibly fill: the declared
                    // length is a claim, not a promise.
                    buf.reserve((len - buf.len()).min(READ_AHEAD));
                    return Ok(None);
                }
            }
        }
    }

    /// Like [`decode`](Self::decode), for when the stream has ended.
    ///
    /// A clean end between frames gives `Ok(None)`; an end inside a header or a body
    /// gives [`FrameError::Truncated`].
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
        if let Some(frame) = self.decode(buf)? {
            return Ok(Some(frame));
        }
        if self.state == State::Header && buf.is_empty() {
            return Ok(None);
        }
        let err = FrameError::Truncated {
            buffered: buf.len(),
        };
        self.state = State::Failed(err);
        Err(err)
    }
}

/// A configured maximum, clamped to what a header can declare.
fn clamp_max(max: usize) -> usize {
    match u64::try_from(max) {
        Ok(m) if m <= MAX_EXPRESSIBLE => max,
        // Only reachable where usize is wider than ten decimal digits, so the
        // constant fits.
        _ => usize::try_from(MAX_EXPRESSIBLE).unwrap_or(usize::MAX),
    }
}

/// Reads a header at the start of `buf`.
///
/// Returns the header's length including its `\n` and the declared payload length,
/// `None` if the header is incomplete but so far valid, or the reason it is invalid.
/// The whole header is rescanned on each call; it is at most eleven bytes, so that
/// costs nothing and keeps the decoder's state trivial.
fn scan_header(buf: &[u8], max: usize) -> Result<Option<(usize, usize)>, FrameError> {
    let mut value: u64 = 0;
    for (i, &byte) in buf.iter().take(MAX_HEADER_DIGITS + 1).enumerate() {
        match byte {
            b'\n' if i == 0 => return Err(bad("empty header")),
            b'\n' => {
                // `value <= max` was checked digit by digit, so it fits in usize.
                let len = usize::try_from(value).map_err(|_| too_large(value, max))?;
                return Ok(Some((i + 1, len)));
            }
            // Ten digits were read and no newline followed.
            _ if i == MAX_HEADER_DIGITS => return Err(bad("more than 10 digits")),
            b'0'..=b'9' => {
                if i == 1 && buf[0] == b'0' {
                    return Err(bad("leading zero"));
                }
                value = value * 10 + u64::from(byte - b'0');
                // Each further digit only makes the number larger, so once past the
                // limit the header is rejected without waiting for its end.
                if value > max as u64 {
                    return Err(too_large(value, max));
                }
            }
            b'+' | b'-' => return Err(bad("sign before the length")),
            b' ' | b'\t' => return Err(bad("whitespace in the header")),
            b'\r' => return Err(bad("carriage return in the header")),
            _ => return Err(bad("non-digit in the header")),
        }
    }
    Ok(None)
}

fn bad(reason: &'static str) -> FrameError {
    FrameError::BadHeader { reason }
}

fn too_large(declared: u64, max: usize) -> FrameError {
    FrameError::TooLarge { declared, max }
}

/// Appends `payload` to `dst` as one frame.
///
/// Fails with [`FrameError::TooLarge`] if the payload is longer than `max_frame_bytes`
/// (so a sender never emits a frame its peer must reject), leaving `dst` untouched.
pub fn encode_frame(
    payload: &[u8],
    max_frame_bytes: usize,
    dst: &mut BytesMut,
) -> Result<(), FrameError> {
    let max = clamp_max(max_frame_bytes);
    if payload.len() > max {
        return Err(too_large(payload.len() as u64, max));
    }
    let mut digits = [0u8; MAX_HEADER_DIGITS];
    let mut start = digits.len();
    let mut n = payload.len();
    loop {
        start -= 1;
        // `n % 10` is a single decimal digit.
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let header = &digits[start..];
    dst.reserve(header.len() + 1 + payload.len());
    dst.put_slice(header);
    dst.put_u8(b'\n');
    dst.put_slice(payload);
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn encode(payload: &[u8]) -> Vec<u8> {
        let mut dst = BytesMut::new();
        encode_frame(payload, MAX_FRAME_BYTES, &mut dst).unwrap();
        dst.to_vec()
    }

    /// Feeds `input` to a fresh decoder in the given chunk sizes (cycled), then
    /// signals EOF, and returns the payloads or the first error.
    fn decode_chunked(
        input: &[u8],
        chunks: &[usize],
        max: usize,
    ) -> Result<Vec<Vec<u8>>, FrameError> {
        let mut decoder = FrameDecoder::new(max);
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        let mut rest = input;
        let mut sizes = chunks.iter().copied().cycle();
        while !rest.is_empty() {
            let n = sizes.next().unwrap_or(1).clamp(1, rest.len());
            buf.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            while let Some(frame) = decoder.decode(&mut buf)? {
                out.push(frame.to_vec());
            }
        }
        while let Some(frame) = decoder.decode_eof(&mut buf)? {
            out.push(frame.to_vec());
        }
        Ok(out)
    }

    fn decode_one(input: &[u8]) -> Result<Option<Bytes>, FrameError> {
        FrameDecoder::default().decode(&mut BytesMut::from(input))
    }

    fn bad_reason(input: &[u8]) -> &'static str {
        match decode_one(input) {
            Err(FrameError::BadHeader { reason }) => reason,
            other => panic!("expected BadHeader for {input:?}, got {other:?}"),
        }
    }

    #[test]
    fn encode_writes_decimal_length_newline_payload() {
        assert_eq!(encode(b"hello"), b"5\nhello");
        assert_eq!(encode(&[7u8; 12]), [&b"12\n"[..], &[7u8; 12]].concat());
    }

    #[test]
    fn encode_of_empty_payload_is_header_zero() {
        assert_eq!(encode(b""), b"0\n");
    }

    #[test]
    fn encode_rejects_payload_over_max_and_leaves_dst_untouched() {
        let mut dst = BytesMut::from(&b"keep"[..]);
        let err = encode_frame(b"12345", 4, &mut dst).unwrap_err();
        assert_eq!(
            err,
            FrameError::TooLarge {
                declared: 5,
                max: 4
            }
        );
        assert_eq!(&dst[..], b"keep");
    }

    #[test]
    fn header_zero_decodes_to_empty_payload() {
        let frame = decode_one(b"0\n").unwrap().unwrap();
        assert!(frame.is_empty());
    }

    #[test]
    fn several_frames_in_one_buffer_decode_in_order() {
        let mut input = encode(b"one");
        input.extend(encode(b""));
        input.extend(encode(b"three"));
        let mut buf = BytesMut::from(&input[..]);
        let mut decoder = FrameDecoder::default();
        let mut got = Vec::new();
        while let Some(frame) = decoder.decode(&mut buf).unwrap() {
            got.push(frame);
        }
        assert_eq!(got, vec![&b"one"[..], b"", b"three"]);
        assert!(buf.is_empty());
    }

    #[test]
    fn frames_fed_byte_by_byte_decode_like_frames_fed_at_once() {
        let mut input = encode(b"{\"a\":1}");
        input.extend(encode(b""));
        input.extend(encode(&[0xAB; 300]));
        let whole = decode_chunked(&input, &[input.len()], MAX_FRAME_BYTES).unwrap();
        let bytewise = decode_chunked(&input, &[1], MAX_FRAME_BYTES).unwrap();
        assert_eq!(whole, bytewise);
        assert_eq!(whole.len(), 3);
    }

    #[test]
    fn frame_split_at_every_boundary_decodes_identically() {
        let input = [encode(b"abc"), encode(b"0123456789")].concat();
        let expected = vec![b"abc".to_vec(), b"0123456789".to_vec()];
        for split in 0..=input.len() {
            let mut decoder = FrameDecoder::default();
            let mut buf = BytesMut::from(&input[..split]);
            let mut got = Vec::new();
            while let Some(f) = decoder.decode(&mut buf).unwrap() {
                got.push(f.to_vec());
            }
            buf.extend_from_slice(&input[split..]);
            while let Some(f) = decoder.decode_eof(&mut buf).unwrap() {
                got.push(f.to_vec());
            }
            assert_eq!(got, expected, "split at {split}");
        }
    }

    #[test]
    fn incomplete_header_is_not_an_error() {
        assert_eq!(decode_one(b"").unwrap(), None);
        assert_eq!(decode_one(b"12").unwrap(), None);
        assert_eq!(decode_one(b"67108864").unwrap(), None);
    }

    #[test]
    fn incomplete_body_is_not_an_error() {
        assert_eq!(decode_one(b"5\nhel").unwrap(), None);
    }

    #[test]
    fn leading_zero_is_rejected_before_the_newline() {
        assert_eq!(bad_reason(b"01"), "leading zero");
        assert_eq!(bad_reason(b"00\n"), "leading zero");
    }

    #[test]
    fn sign_is_rejected() {
        assert_eq!(bad_reason(b"+5"), "sign before the length");
        assert_eq!(bad_reason(b"-5\nhello"), "sign before the length");
    }

    #[test]
    fn space_is_rejected() {
        assert_eq!(bad_reason(b" 5\n"), "whitespace in the header");
        assert_eq!(bad_reason(b"5 "), "whitespace in the header");
    }

    #[test]
    fn carriage_return_is_rejected_before_the_newline() {
        assert_eq!(bad_reason(b"5\r"), "carriage return in the header");
    }

    #[test]
    fn non_digit_is_rejected_immediately() {
        assert_eq!(bad_reason(b"{"), "non-digit in the header");
        assert_eq!(bad_reason(b"1x"), "non-digit in the header");
    }

    #[test]
    fn empty_header_is_rejected() {
        assert_eq!(bad_reason(b"\n"), "empty header");
    }

    #[test]
    fn eleventh_digit_is_rejected_without_waiting_for_the_newline() {
        // A limit so high that only the digit count can fail.
        let mut decoder = FrameDecoder::new(usize::MAX);
        assert_eq!(
            decoder.decode(&mut BytesMut::from(&b"1234567890"[..])),
            Ok(None)
        );
        assert_eq!(
            decoder.decode(&mut BytesMut::from(&b"12345678901"[..])),
            Err(FrameError::BadHeader {
                reason: "more than 10 digits"
            })
        );
    }

    #[test]
    fn declared_length_over_max_is_too_large_when_header_ends() {
        let mut decoder = FrameDecoder::new(100);
        assert_eq!(
            decoder.decode(&mut BytesMut::from(&b"101\n"[..])),
            Err(FrameError::TooLarge {
                declared: 101,
                max: 100
            })
        );
    }

    #[test]
    fn declared_length_over_max_is_rejected_before_the_header_ends() {
        let mut decoder = FrameDecoder::new(100);
        assert_eq!(
            decoder.decode(&mut BytesMut::from(&b"1000"[..])),
            Err(FrameError::TooLarge {
                declared: 1000,
                max: 100
            })
        );
    }

    #[test]
    fn declared_length_equal_to_max_is_accepted() {
        let mut decoder = FrameDecoder::new(3);
        let frame = decoder.decode(&mut BytesMut::from(&b"3\nabc"[..]));
        assert_eq!(frame, Ok(Some(Bytes::from_static(b"abc"))));
    }

    #[test]
    fn ten_digit_header_over_i32_range_is_too_large_not_overflow() {
        let mut decoder = FrameDecoder::default();
        let err = decoder
            .decode(&mut BytesMut::from(&b"4294967296\n"[..]))
            .unwrap_err();
        assert!(matches!(err, FrameError::TooLarge { .. }), "{err:?}");
    }

    #[test]
    fn huge_declared_length_does_not_grow_the_buffer() {
        let mut decoder = FrameDecoder::default();
        let mut buf = BytesMut::new();
        buf.extend_from_slice(format!("{MAX_FRAME_BYTES}\n").as_bytes());
        buf.extend_from_slice(&[b'x'; 10]);
        assert_eq!(decoder.decode(&mut buf), Ok(None));
        assert_eq!(decoder.decode(&mut buf), Ok(None));
        assert!(
            buf.capacity() <= 2 * READ_AHEAD,
            "capacity {} follows the declared length",
            buf.capacity()
        );
    }

    #[test]
    fn buffer_growth_tracks_received_bytes() {
        let mut decoder = FrameDecoder::default();
        let mut buf = BytesMut::new();
        buf.extend_from_slice(format!("{MAX_FRAME_BYTES}\n").as_bytes());
        let chunk = [0u8; 4096];
        for _ in 0..64 {
            buf.extend_from_slice(&chunk);
            assert_eq!(decoder.decode(&mut buf), Ok(None));
            // Reserve may round up (doubling), but never past a small multiple of
            // what is actually held.
            assert!(buf.capacity() <= 2 * (buf.len() + READ_AHEAD));
        }
    }

    #[test]
    fn eof_between_frames_is_clean() {
        let mut decoder = FrameDecoder::default();
        let mut buf = BytesMut::from(&encode(b"x")[..]);
        assert!(decoder.decode(&mut buf).unwrap().is_some());
        assert_eq!(decoder.decode_eof(&mut buf), Ok(None));
    }

    #[test]
    fn eof_mid_header_is_truncated() {
        let mut decoder = FrameDecoder::default();
        assert_eq!(
            decoder.decode_eof(&mut BytesMut::from(&b"12"[..])),
            Err(FrameError::Truncated { buffered: 2 })
        );
    }

    #[test]
    fn eof_mid_body_is_truncated() {
        let mut decoder = FrameDecoder::default();
        assert_eq!(
            decoder.decode_eof(&mut BytesMut::from(&b"5\nabc"[..])),
            Err(FrameError::Truncated { buffered: 3 })
        );
    }

    #[test]
    fn eof_right_after_header_is_truncated() {
        let mut decoder = FrameDecoder::default();
        assert_eq!(
            decoder.decode_eof(&mut BytesMut::from(&b"5\n"[..])),
            Err(FrameError::Truncated { buffered: 0 })
        );
    }

    #[test]
    fn decode_eof_still_returns_a_complete_last_frame() {
        let mut decoder = FrameDecoder::default();
        let mut buf = BytesMut::from(&b"2\nok"[..]);
        assert_eq!(
            decoder.decode_eof(&mut buf),
            Ok(Some(Bytes::from_static(b"ok")))
        );
        assert_eq!(decoder.decode_eof(&mut buf), Ok(None));
    }

    #[test]
    fn errors_are_sticky() {
        let mut decoder = FrameDecoder::default();
        let mut buf = BytesMut::from(&b"x"[..]);
        let err = decoder.decode(&mut buf).unwrap_err();
        let mut fresh = BytesMut::from(&encode(b"fine")[..]);
        assert_eq!(decoder.decode(&mut fresh), Err(err));
    }

    #[test]
    fn max_above_ten_digits_is_clamped() {
        let decoder = FrameDecoder::new(usize::MAX);
        assert!(decoder.max_frame_bytes() as u64 <= MAX_EXPRESSIBLE);
        assert_eq!(FrameDecoder::default().max_frame_bytes(), MAX_FRAME_BYTES);
    }

    #[test]
    fn error_messages_are_readable() {
        assert_eq!(
            bad("leading zero").to_string(),
            "bad frame header: leading zero"
        );
        assert_eq!(
            too_large(70, 64).to_string(),
            "frame declares 70 bytes, more than the maximum of 64"
        );
    }

    proptest! {
        #[test]
        fn arbitrary_payloads_chunked_arbitrarily_round_trip(
            payloads in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..200), 0..8),
            chunks in prop::collection::vec(1usize..64, 1..16),
        ) {
            let mut input = Vec::new();
            for p in &payloads {
                input.extend(encode(p));
            }
            let decoded = decode_chunked(&input, &chunks, MAX_FRAME_BYTES).unwrap();
            prop_assert_eq!(decoded, payloads);
        }

        #[test]
        fn arbitrary_bytes_never_panic_and_decode_to_a_prefix(
            input in prop::collection::vec(any::<u8>(), 0..64),
            chunks in prop::collection::vec(1usize..8, 1..8),
        ) {
            let mut decoder = FrameDecoder::new(32);
            let mut buf = BytesMut::new();
            let mut reencoded = Vec::new();
            'feed: for chunk in input.chunks(chunks[0]) {
                buf.extend_from_slice(chunk);
                loop {
                    match decoder.decode(&mut buf) {
                        Ok(Some(f)) => reencoded.extend(encode(&f)),
                        Ok(None) => break,
                        Err(_) => break 'feed,
                    }
                }
            }
            prop_assert!(input.starts_with(&reencoded));
        }
    }
}
