//! The two wires one socket speaks: length-prefixed TOON frames (the contract) and
//! newline-delimited JSON (for stock Unix-socket bridges). The first byte decides.

use bytes::{BufMut, Bytes, BytesMut};
use ide_mcp_protocol::budget::decode_budget;
use ide_mcp_protocol::frame::{encode_frame, FrameDecoder, FrameError};
use ide_mcp_protocol::json;
use ide_mcp_protocol::ndjson::{LineDecoder, LineError};
use ide_mcp_protocol::toon;
use serde_json::Value;
use tokio_util::codec::Decoder;

use crate::limits::DecodeLimits;
use crate::mcp::split_request::{self, SplitMessage};
use crate::outgoing::Outgoing;

/// Which wire a connection speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Wire {
    /// `<length>\n<TOON payload>` in both directions: the servers' native wire.
    #[default]
    Frames,
    /// One JSON message per line in both directions.
    Lines,
}

impl Wire {
    /// A short name for people: `frames/TOON` or `NDJSON`.
    pub fn label(self) -> &'static str {
        match self {
            Wire::Frames => "frames/TOON",
            Wire::Lines => "NDJSON",
        }
    }
}

/// Why a connection's byte stream cannot go on. Every variant closes the connection,
/// because the stream cannot be resynchronised after it.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// A bad frame header, an oversize frame or EOF inside a frame.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// An over-long line or EOF inside a line.
    #[error(transparent)]
    Line(#[from] LineError),
    /// The socket failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Splits the incoming byte stream into payloads, choosing the wire on the first byte.
#[derive(Debug)]
pub struct WireDecoder {
    max_message_bytes: usize,
    state: DecoderState,
}

#[derive(Debug)]
enum DecoderState {
    Undecided,
    Frames(FrameDecoder),
    Lines(LineDecoder),
}

impl WireDecoder {
    /// A decoder that accepts messages of at most `max_message_bytes`.
    pub fn new(max_message_bytes: usize) -> Self {
        WireDecoder {
            max_message_bytes,
            state: DecoderState::Undecided,
        }
    }

    /// A decoder for a wire known in advance, as a client's is: nothing is decided on the
    /// first byte, so a peer speaking lines may start with an empty line.
    pub fn for_wire(wire: Wire, max_message_bytes: usize) -> Self {
        let state = match wire {
            Wire::Frames => DecoderState::Frames(FrameDecoder::new(max_message_bytes)),
            Wire::Lines => DecoderState::Lines(LineDecoder::new(max_message_bytes)),
        };
        WireDecoder {
            max_message_bytes,
            state,
        }
    }

    /// The wire, once the first byte has arrived.
    pub fn wire(&self) -> Option<Wire> {
        match self.state {
            DecoderState::Undecided => None,
            DecoderState::Frames(_) => Some(Wire::Frames),
            DecoderState::Lines(_) => Some(Wire::Lines),
        }
    }

    fn decide(&mut self, buf: &BytesMut) {
        if let (DecoderState::Undecided, Some(&first)) = (&self.state, buf.first()) {
            self.state = if first == b'{' {
                DecoderState::Lines(LineDecoder::new(self.max_message_bytes))
            } else {
                DecoderState::Frames(FrameDecoder::new(self.max_message_bytes))
            };
        }
    }
}

impl Decoder for WireDecoder {
    type Item = Bytes;
    type Error = WireError;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, WireError> {
        self.decide(buf);
        match &mut self.state {
            DecoderState::Undecided => Ok(None),
            DecoderState::Frames(frames) => Ok(frames.decode(buf)?),
            DecoderState::Lines(lines) => Ok(lines.decode(buf)?),
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, WireError> {
        self.decide(buf);
        match &mut self.state {
            DecoderState::Undecided => Ok(None),
            DecoderState::Frames(frames) => Ok(frames.decode_eof(buf)?),
            DecoderState::Lines(lines) => Ok(lines.decode_eof(buf)?),
        }
    }
}

/// Decodes one payload into a JSON-RPC value within `limits`; the error text is for logs
/// only (the client gets the standard "Parse error").
///
/// The value may take at most [`decode_budget`]`(payload.len())` bytes (16 bytes per
/// payload byte plus 1 MiB), counted while it is built, so a payload that would expand past that is refused
/// before the memory is taken — this runs before authentication. The budget is fixed, not
/// an option.
pub fn decode_payload(wire: Wire, payload: &[u8], limits: &DecodeLimits) -> Result<Value, String> {
    let budget = decode_budget(payload.len());
    let value = match wire {
        Wire::Frames => {
            let options = toon::DecodeOptions {
                max_depth: limits.max_depth,
                max_decoded_bytes: Some(budget),
                ..toon::DecodeOptions::default()
            };
            toon::decode_bytes(payload, &options).map_err(|error| error.to_string())?
        }
        Wire::Lines => {
            json::parse_strict_within(payload, budget).map_err(|error| error.to_string())?
        }
    };
    limits.check(&value)?;
    Ok(value)
}

/// [`decode_payload`] for a message about to be classified: a JSON line is read straight
/// into the parts the servers use (`mcp::split_request`); a frame's TOON text decodes into a
/// value first, which is then taken apart at its top level. The same budget, limits and
/// errors. (The common `tools/call` comes before this, read by hand: `mcp::common_call`.)
pub(crate) fn decode_message(
    wire: Wire,
    payload: &[u8],
    limits: &DecodeLimits,
) -> Result<SplitMessage, String> {
    match wire {
        Wire::Frames => decode_payload(wire, payload, limits).map(SplitMessage::whole),
        Wire::Lines => split_request::decode_line(payload, limits),
    }
}

/// Appends one message of a connection's outgoing queue, encoded for `wire`, to `dst`. A tool
/// call's reply is written straight from its parts, as the encoding of its value.
pub(crate) fn encode_outgoing(
    wire: Wire,
    message: &Outgoing,
    max_message_bytes: usize,
    dst: &mut BytesMut,
    scratch: &mut String,
) -> Result<(), WireError> {
    match (wire, message) {
        (wire, Outgoing::Message(message)) => {
            encode_message_with(wire, message, max_message_bytes, dst, scratch)
        }
        (Wire::Lines, Outgoing::ToolReply(reply)) => {
            reply.write_json(dst);
            dst.put_u8(b'\n');
            Ok(())
        }
        (Wire::Frames, Outgoing::ToolReply(reply)) => {
            scratch.clear();
            reply.write_toon(scratch);
            encode_frame(scratch.as_bytes(), max_message_bytes, dst)?;
            Ok(())
        }
    }
}

/// Appends one outgoing message, encoded for `wire`, to `dst`.
pub fn encode_message(
    wire: Wire,
    message: &Value,
    max_message_bytes: usize,
    dst: &mut BytesMut,
) -> Result<(), WireError> {
    encode_message_with(wire, message, max_message_bytes, dst, &mut String::new())
}

/// [`encode_message`] with a scratch string for the TOON text, so a writer that encodes many
/// messages in a row allocates it once.
pub fn encode_message_with(
    wire: Wire,
    message: &Value,
    max_message_bytes: usize,
    dst: &mut BytesMut,
    scratch: &mut String,
) -> Result<(), WireError> {
    match wire {
        Wire::Frames => {
            // The frame header holds the payload's length, so the text is built first.
            scratch.clear();
            toon::encode_into(message, &toon::EncodeOptions::default(), scratch);
            encode_frame(scratch.as_bytes(), max_message_bytes, dst)?;
        }
        Wire::Lines => {
            // Compact JSON escapes every newline, so it is written straight into `dst`.
            let start = dst.len();
            if let Err(error) = serde_json::to_writer(dst.writer(), message) {
                dst.truncate(start);
                return Err(std::io::Error::other(error).into());
            }
            debug_assert!(
                !dst[start..].contains(&b'\n'),
                "an NDJSON payload must not contain a newline"
            );
            dst.put_u8(b'\n');
        }
    }
    Ok(())
}
