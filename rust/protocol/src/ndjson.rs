//! Newline-delimited JSON: one message per line.
//!
//! A connection whose first byte is `{` speaks this instead of length-prefixed frames,
//! because that is what stock MCP clients send. Each line ends with `\n`; a `\r` just
//! before it is tolerated and dropped, and empty lines are skipped. A line longer than
//! the cap is fatal: without a terminator in sight there is no safe place to resume.
//!
//! The decoder remembers how far it has already searched for `\n`, so a long line that
//! arrives in many small reads is scanned once in total, not once per read.

use bytes::{BufMut, Bytes, BytesMut};

use crate::frame::MAX_FRAME_BYTES;

/// The default cap on one line's length, the same as the frame limit so both wire
/// formats carry the same messages.
pub const MAX_LINE_BYTES: usize = MAX_FRAME_BYTES;

/// Why a stream of lines had to be abandoned. Every variant is fatal for the
/// connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// A line (without its terminator) is longer than `max` bytes.
    #[error("line longer than the maximum of {max} bytes")]
    TooLong {
        /// The configured maximum line length.
        max: usize,
    },
    /// The stream ended in the middle of a line.
    #[error("stream ended inside a line ({buffered} bytes of it buffered)")]
    Truncated {
        /// How many bytes of the unfinished line were buffered when the stream ended.
        buffered: usize,
    },
}

/// Incremental decoder of `\n`-terminated lines.
///
/// Same contract as [`FrameDecoder`](crate::frame::FrameDecoder): complete lines are
/// taken off the front of the buffer, `Ok(None)` means "not enough bytes yet", and
/// after an error every later call returns the same error.
#[derive(Debug, Clone)]
pub struct LineDecoder {
    max_line_bytes: usize,
    /// How many bytes at the front of the buffer are known to hold no `\n`.
    scanned: usize,
    failed: Option<LineError>,
}

impl Default for LineDecoder {
    /// A decoder allowing lines up to [`MAX_LINE_BYTES`].
    fn default() -> Self {
        Self::new(MAX_LINE_BYTES)
    }
}

impl LineDecoder {
    /// A decoder that rejects lines longer than `max_line_bytes` (not counting the
    /// `\n` or a `\r` before it).
    pub fn new(max_line_bytes: usize) -> Self {
        Self {
            max_line_bytes,
            scanned: 0,
            failed: None,
        }
    }

    /// The longest line this decoder accepts.
    pub fn max_line_bytes(&self) -> usize {
        self.max_line_bytes
    }

    /// Takes the next non-empty line off the front of `buf`, without its terminator.
    ///
    /// Returns `Ok(None)` when more bytes are needed. An over-long line is reported
    /// as soon as more bytes than the cap are buffered without a `\n`.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, LineError> {
        if let Some(err) = self.failed {
            return Err(err);
        }
        loop {
            // The caller owns the buffer: if it shrank behind our back, the remembered
            // offset means nothing and the search starts over.
            let from = if self.scanned <= buf.len() {
                self.scanned
            } else {
                0
            };
            let Some(pos) = memchr::memchr(b'\n', &buf[from..]).map(|i| from + i) else {
                self.scanned = buf.len();
                if self.overlong_without_newline(buf) {
                    return Err(self.fail(LineError::TooLong {
                        max: self.max_line_bytes,
                    }));
                }
                return Ok(None);
            };
            self.scanned = 0;
            let mut line = buf.split_to(pos + 1);
            line.truncate(pos);
            if line.last() == Some(&b'\r') {
                line.truncate(pos - 1);
            }
            if line.len() > self.max_line_bytes {
                return Err(self.fail(LineError::TooLong {
                    max: self.max_line_bytes,
                }));
            }
            if !line.is_empty() {
                return Ok(Some(line.freeze()));
            }
        }
    }

    /// Like [`decode`](Self::decode), for when the stream has ended.
    ///
    /// A clean end after a `\n` gives `Ok(None)`; leftover bytes of an unterminated
    /// line give [`LineError::Truncated`].
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, LineError> {
        if let Some(line) = self.decode(buf)? {
            return Ok(Some(line));
        }
        if buf.is_empty() {
            return Ok(None);
        }
        Err(self.fail(LineError::Truncated {
            buffered: buf.len(),
        }))
    }

    /// Whether the buffered bytes, which hold no `\n`, already prove the line too
    /// long. One byte of slack is allowed while that byte is a `\r`, since it may be
    /// the start of a `\r\n` terminator rather than part of the line.
    fn overlong_without_newline(&self, buf: &[u8]) -> bool {
        let max = self.max_line_bytes;
        match buf.len().checked_sub(max) {
            None | Some(0) => false,
            Some(1) => buf.last() != Some(&b'\r'),
            Some(_) => true,
        }
    }

    fn fail(&mut self, err: LineError) -> LineError {
        self.failed = Some(err);
        err
    }
}

/// Appends `payload` and a `\n` to `dst`.
///
/// The payload must not contain `\n`; compact JSON never does, since newlines inside
/// strings are escaped.
pub fn encode_line(payload: &[u8], dst: &mut BytesMut) {
    debug_assert!(
        memchr::memchr(b'\n', payload).is_none(),
        "an NDJSON payload must not contain a newline"
    );
    dst.reserve(payload.len() + 1);
    dst.put_slice(payload);
    dst.put_u8(b'\n');
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn decode_all(decoder: &mut LineDecoder, buf: &mut BytesMut) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        while let Some(line) = decoder.decode(buf).unwrap() {
            out.push(line.to_vec());
        }
        out
    }

    #[test]
    fn encode_appends_a_newline() {
        let mut dst = BytesMut::new();
        encode_line(b"{}", &mut dst);
        encode_line(b"[1]", &mut dst);
        assert_eq!(&dst[..], b"{}\n[1]\n");
    }

    #[test]
    fn several_lines_in_one_buffer_decode_in_order() {
        let mut buf = BytesMut::from(&b"{\"a\":1}\n{\"b\":2}\n{\"c\""[..]);
        let lines = decode_all(&mut LineDecoder::default(), &mut buf);
        assert_eq!(lines, vec![b"{\"a\":1}".to_vec(), b"{\"b\":2}".to_vec()]);
        assert_eq!(&buf[..], b"{\"c\"");
    }

    #[test]
    fn crlf_terminator_is_stripped() {
        let mut buf = BytesMut::from(&b"{}\r\n"[..]);
        assert_eq!(
            decode_all(&mut LineDecoder::default(), &mut buf),
            vec![b"{}"]
        );
    }

    #[test]
    fn only_one_carriage_return_is_stripped() {
        let mut buf = BytesMut::from(&b"x\r\r\n"[..]);
        assert_eq!(
            decode_all(&mut LineDecoder::default(), &mut buf),
            vec![b"x\r"]
        );
    }

    #[test]
    fn empty_lines_are_skipped() {
        let mut buf = BytesMut::from(&b"\n\r\n{}\n\n[]\n"[..]);
        assert_eq!(
            decode_all(&mut LineDecoder::default(), &mut buf),
            vec![b"{}".to_vec(), b"[]".to_vec()]
        );
        assert!(buf.is_empty());
    }

    #[test]
    fn lines_fed_byte_by_byte_decode_like_lines_fed_at_once() {
        let input = b"{\"id\":1}\r\n\n{\"id\":2}\n";
        let mut whole = BytesMut::from(&input[..]);
        let expected = decode_all(&mut LineDecoder::default(), &mut whole);
        let mut decoder = LineDecoder::default();
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        for &b in input {
            buf.put_u8(b);
            got.extend(decode_all(&mut decoder, &mut buf));
        }
        assert_eq!(got, expected);
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn line_of_exactly_max_bytes_is_accepted_with_either_terminator() {
        let mut decoder = LineDecoder::new(4);
        let mut buf = BytesMut::new();
        for chunk in [&b"abcd"[..], b"\r", b"\n", b"wxyz", b"\n"] {
            buf.extend_from_slice(chunk);
            assert!(decoder.decode(&mut buf).is_ok(), "after {chunk:?}");
        }
        let mut buf = BytesMut::from(&b"abcd\r\nwxyz\n"[..]);
        assert_eq!(decode_all(&mut LineDecoder::new(4), &mut buf).len(), 2);
    }

    #[test]
    fn too_long_line_is_rejected_before_its_newline_arrives() {
        let mut decoder = LineDecoder::new(4);
        let mut buf = BytesMut::from(&b"abcd"[..]);
        assert_eq!(decoder.decode(&mut buf), Ok(None));
        buf.put_u8(b'e');
        assert_eq!(decoder.decode(&mut buf), Err(LineError::TooLong { max: 4 }));
    }

    #[test]
    fn too_long_line_with_newline_in_the_same_read_is_rejected() {
        let mut decoder = LineDecoder::new(4);
        let mut buf = BytesMut::from(&b"abcde\n"[..]);
        assert_eq!(decoder.decode(&mut buf), Err(LineError::TooLong { max: 4 }));
    }

    #[test]
    fn carriage_return_past_max_is_rejected_once_not_followed_by_newline() {
        let mut decoder = LineDecoder::new(4);
        let mut buf = BytesMut::from(&b"abcd\r"[..]);
        assert_eq!(decoder.decode(&mut buf), Ok(None));
        buf.put_u8(b'x');
        assert_eq!(decoder.decode(&mut buf), Err(LineError::TooLong { max: 4 }));
    }

    #[test]
    fn errors_are_sticky() {
        let mut decoder = LineDecoder::new(1);
        let mut buf = BytesMut::from(&b"abc"[..]);
        let err = decoder.decode(&mut buf).unwrap_err();
        assert_eq!(decoder.decode(&mut BytesMut::from(&b"a\n"[..])), Err(err));
    }

    #[test]
    fn eof_after_newline_is_clean() {
        let mut decoder = LineDecoder::default();
        let mut buf = BytesMut::from(&b"{}\n"[..]);
        assert!(decoder.decode_eof(&mut buf).unwrap().is_some());
        assert_eq!(decoder.decode_eof(&mut buf), Ok(None));
    }

    #[test]
    fn eof_mid_line_is_truncated() {
        let mut decoder = LineDecoder::default();
        let mut buf = BytesMut::from(&b"{\"a\""[..]);
        assert_eq!(
            decoder.decode_eof(&mut buf),
            Err(LineError::Truncated { buffered: 4 })
        );
    }

    #[test]
    fn scanning_a_long_line_fed_in_small_reads_is_linear() {
        // Each byte must be searched once; a rescan from the start on each read would
        // touch about n^2/2 bytes. The offset is the observable evidence.
        let mut decoder = LineDecoder::default();
        let mut buf = BytesMut::new();
        for i in 0..10_000 {
            buf.put_u8(b'a');
            assert_eq!(decoder.decode(&mut buf), Ok(None));
            assert_eq!(decoder.scanned, i + 1);
        }
        buf.put_u8(b'\n');
        assert_eq!(decoder.decode(&mut buf).unwrap().unwrap().len(), 10_000);
        assert_eq!(decoder.scanned, 0);
    }

    #[test]
    fn scanned_offset_survives_a_buffer_shrunk_by_the_caller() {
        let mut decoder = LineDecoder::default();
        let mut buf = BytesMut::from(&b"abcdef"[..]);
        assert_eq!(decoder.decode(&mut buf), Ok(None));
        let mut other = BytesMut::from(&b"x\n"[..]);
        assert_eq!(
            decoder.decode(&mut other),
            Ok(Some(Bytes::from_static(b"x")))
        );
    }

    proptest! {
        #[test]
        fn arbitrary_lines_chunked_arbitrarily_round_trip(
            lines in prop::collection::vec("[^\n\r]{1,80}", 0..8),
            chunk in 1usize..32,
        ) {
            let mut input = BytesMut::new();
            for line in &lines {
                encode_line(line.as_bytes(), &mut input);
            }
            let mut decoder = LineDecoder::default();
            let mut buf = BytesMut::new();
            let mut got = Vec::new();
            for piece in input.chunks(chunk) {
                buf.extend_from_slice(piece);
                got.extend(decode_all(&mut decoder, &mut buf));
            }
            prop_assert_eq!(decoder.decode_eof(&mut buf), Ok(None));
            let expected: Vec<Vec<u8>> = lines.iter().map(|l| l.as_bytes().to_vec()).collect();
            prop_assert_eq!(got, expected);
        }
    }
}
