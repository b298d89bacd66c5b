//! Fuzzes the two stream decoders with arbitrary bytes arriving in arbitrary reads.
//!
//! The first four input bytes choose the read sizes (cycled); the rest is the stream.
//! Checked for both [`FrameDecoder`] and [`LineDecoder`]:
//! - nothing panics;
//! - the outcome (payloads, then the final error or clean end) does not depend on how
//!   the stream was split into reads;
//! - what was decoded accounts for a prefix of the stream: frames re-encode to exactly
//!   that prefix, lines reappear in order separated only by terminators and empty lines;
//! - the buffer's capacity follows the bytes received, never a declared length.

#![no_main]

use bytes::BytesMut;
use ide_mcp_protocol::frame::{encode_frame, FrameDecoder, FrameError, MAX_FRAME_BYTES};
use ide_mcp_protocol::ndjson::{LineDecoder, LineError};
use libfuzzer_sys::fuzz_target;

/// A small frame limit, so oversize headers are common.
const SMALL_MAX: usize = 4096;
/// A small line limit, for the same reason.
const LINE_MAX: usize = 256;
/// The most the frame decoder may reserve beyond what it holds.
const READ_AHEAD: usize = 64 * 1024;

/// Splits `input` into reads whose sizes cycle through `sizes` (each 1..=64), or
/// into a single read when `sizes` is empty.
fn reads<'a>(input: &'a [u8], sizes: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut rest = input;
    let mut sizes = sizes.iter().cycle();
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let n = sizes
            .next()
            .map_or(rest.len(), |&s| usize::from(s % 64) + 1)
            .min(rest.len());
        let (head, tail) = rest.split_at(n);
        rest = tail;
        Some(head)
    })
}

/// Decodes `input` with frames, checking the capacity bound after every call.
fn frames(input: &[u8], sizes: &[u8], max: usize) -> (Vec<Vec<u8>>, Result<(), FrameError>) {
    let mut decoder = FrameDecoder::new(max);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut fed = 0usize;
    let bound = |buf: &BytesMut, fed: usize| {
        assert!(
            buf.capacity() <= 2 * (fed + READ_AHEAD.min(max)) + 64,
            "capacity {} after {fed} bytes received",
            buf.capacity()
        );
    };
    for read in reads(input, sizes) {
        buf.extend_from_slice(read);
        fed += read.len();
        loop {
            match decoder.decode(&mut buf) {
                Ok(Some(frame)) => out.push(frame.to_vec()),
                Ok(None) => break,
                Err(err) => return (out, Err(err)),
            }
            bound(&buf, fed);
        }
        bound(&buf, fed);
    }
    loop {
        match decoder.decode_eof(&mut buf) {
            Ok(Some(frame)) => out.push(frame.to_vec()),
            Ok(None) => return (out, Ok(())),
            Err(err) => return (out, Err(err)),
        }
    }
}

/// Decodes `input` as lines.
fn lines(input: &[u8], sizes: &[u8]) -> (Vec<Vec<u8>>, Result<(), LineError>) {
    let mut decoder = LineDecoder::new(LINE_MAX);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for read in reads(input, sizes) {
        buf.extend_from_slice(read);
        loop {
            match decoder.decode(&mut buf) {
                Ok(Some(line)) => out.push(line.to_vec()),
                Ok(None) => break,
                Err(err) => return (out, Err(err)),
            }
        }
    }
    loop {
        match decoder.decode_eof(&mut buf) {
            Ok(Some(line)) => out.push(line.to_vec()),
            Ok(None) => return (out, Ok(())),
            Err(err) => return (out, Err(err)),
        }
    }
}

/// Length of a line terminator (`\n` or `\r\n`) at the start of `s`, if any.
fn terminator(s: &[u8]) -> Option<usize> {
    match s {
        [b'\n', ..] => Some(1),
        [b'\r', b'\n', ..] => Some(2),
        _ => None,
    }
}

fn check_frames(input: &[u8], sizes: &[u8], max: usize) {
    let chunked = frames(input, sizes, max);
    let whole = frames(input, &[], max);
    let bytewise = frames(input, &[0], max);
    assert_eq!(chunked, whole, "frames depend on read sizes");
    assert_eq!(bytewise, whole, "frames depend on read sizes");

    let mut reencoded = BytesMut::new();
    for payload in &chunked.0 {
        assert!(payload.len() <= max);
        encode_frame(payload, max, &mut reencoded).expect("a decoded payload re-encodes");
    }
    assert!(input.starts_with(&reencoded), "frames are not a prefix");
    if chunked.1.is_ok() {
        assert_eq!(&reencoded[..], input, "a clean end must consume everything");
    }
}

fn check_lines(input: &[u8], sizes: &[u8]) {
    let chunked = lines(input, sizes);
    let whole = lines(input, &[]);
    assert_eq!(chunked, whole, "lines depend on read sizes");

    let mut at = 0;
    for line in &chunked.0 {
        assert!(!line.is_empty() && line.len() <= LINE_MAX);
        assert!(!line.contains(&b'\n'));
        while let Some(n) = terminator(&input[at..]) {
            at += n;
        }
        assert!(input[at..].starts_with(line), "lines are not in the input");
        at += line.len();
        at += terminator(&input[at..]).expect("a line ends with a terminator");
    }
    if chunked.1.is_ok() {
        while let Some(n) = terminator(&input[at..]) {
            at += n;
        }
        assert_eq!(at, input.len(), "a clean end must consume everything");
    }
}

fuzz_target!(|data: &[u8]| {
    let (sizes, input) = data.split_at(data.len().min(4));
    check_frames(input, sizes, SMALL_MAX);
    check_frames(input, sizes, MAX_FRAME_BYTES);
    check_lines(input, sizes);
});
