//! Bytes on the socket: encoding requests once, patching ids in place, and recognising a reply
//! without decoding it. Splitting the reply stream into messages is the servers' own transport
//! ([`ide_mcp_server::transport`]).
//!
//! The load generator must cost the same for every target and as little as possible, so the
//! request for each call is one pre-encoded buffer whose fixed-width id digits are rewritten,
//! and a reply is checked against the first reply of its connection (which was fully decoded
//! and validated) with a byte comparison outside the id digits.

use bytes::{Bytes, BytesMut};
use ide_mcp_protocol::frame::MAX_FRAME_BYTES;
use ide_mcp_server::DecodeLimits;
use serde_json::Value;

/// The first id a benchmark call gets. Every id has exactly [`ID_DIGITS`] digits, so patching
/// one in never changes the length of a message.
pub const FIRST_CALL_ID: u64 = 1_000_000_000;

/// How many decimal digits every call id has.
pub const ID_DIGITS: usize = 10;

/// The largest id that still has [`ID_DIGITS`] digits.
const LAST_CALL_ID: u64 = 9_999_999_999;

pub use ide_mcp_server::wire::Wire;

/// `message` encoded for `wire`, framing included (the servers' own encoder).
pub fn encode_message(wire: Wire, message: &Value) -> Vec<u8> {
    let mut encoded = BytesMut::new();
    ide_mcp_server::wire::encode_message(wire, message, MAX_FRAME_BYTES, &mut encoded)
        .expect("a benchmark message is far below the frame limit");
    encoded.to_vec()
}

/// Decodes one message payload (without its framing), as the servers do.
pub fn decode_payload(wire: Wire, payload: &[u8]) -> Result<Value, String> {
    ide_mcp_server::wire::decode_payload(wire, payload, &DecodeLimits::default())
}

/// A pre-encoded request whose id digits are rewritten for each call.
#[derive(Debug, Clone)]
pub struct RequestTemplate {
    bytes: Vec<u8>,
    id_at: usize,
}

impl RequestTemplate {
    /// Encodes `message`, whose `id` must be [`FIRST_CALL_ID`], and locates the id digits.
    pub fn new(wire: Wire, message: &Value) -> RequestTemplate {
        assert_eq!(
            message.get("id").and_then(Value::as_u64),
            Some(FIRST_CALL_ID),
            "a request template carries the placeholder id"
        );
        let bytes = encode_message(wire, message);
        let id_at = find_unique(&bytes, FIRST_CALL_ID.to_string().as_bytes())
            .expect("the placeholder id appears exactly once in the encoded request");
        RequestTemplate { bytes, id_at }
    }

    /// The request with `id`, ready to write.
    pub fn with_id(&mut self, id: u64) -> &[u8] {
        write_id(&mut self.bytes[self.id_at..self.id_at + ID_DIGITS], id);
        &self.bytes
    }

    /// The encoded length of every request made from this template.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the template is empty (it never is; for clippy's `len_without_is_empty`).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// Recognises replies that differ from a validated first reply only in their id digits.
#[derive(Debug, Clone)]
pub struct ReplyTemplate {
    payload: Bytes,
    id_at: usize,
}

impl ReplyTemplate {
    /// Learns the shape of `payload`, a validated reply to `id`. `None` when the id digits do
    /// not appear exactly once (then every reply is decoded in full).
    pub fn learn(payload: &Bytes, id: u64) -> Option<ReplyTemplate> {
        let mut digits = [0u8; ID_DIGITS];
        write_id(&mut digits, id);
        let id_at = find_unique(payload, &digits)?;
        Some(ReplyTemplate {
            payload: payload.clone(),
            id_at,
        })
    }

    /// The payload size of every reply that matches this template.
    pub fn len(&self) -> usize {
        self.payload.len()
    }

    /// Whether the template is empty (it never is; for clippy's `len_without_is_empty`).
    pub fn is_empty(&self) -> bool {
        self.payload.is_empty()
    }

    /// The id of `payload` when it is the template's reply with other id digits.
    pub fn id_of(&self, payload: &[u8]) -> Option<u64> {
        if payload.len() != self.payload.len() {
            return None;
        }
        let id_end = self.id_at + ID_DIGITS;
        if payload[..self.id_at] != self.payload[..self.id_at]
            || payload[id_end..] != self.payload[id_end..]
        {
            return None;
        }
        parse_id(&payload[self.id_at..id_end])
    }
}

/// Writes `id` as exactly [`ID_DIGITS`] decimal digits.
fn write_id(digits: &mut [u8], id: u64) {
    assert!(
        (FIRST_CALL_ID..=LAST_CALL_ID).contains(&id),
        "call ids keep a fixed width"
    );
    let mut rest = id;
    for digit in digits.iter_mut().rev() {
        *digit = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
}

fn parse_id(digits: &[u8]) -> Option<u64> {
    digits.iter().try_fold(0u64, |value, &byte| {
        byte.is_ascii_digit()
            .then(|| value * 10 + u64::from(byte - b'0'))
    })
}

/// The offset of the only occurrence of `needle` in `haystack`.
fn find_unique(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let mut found = haystack
        .windows(needle.len())
        .enumerate()
        .filter(|(_, window)| *window == needle)
        .map(|(offset, _)| offset);
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn patched_ids_keep_the_length_and_are_recognised_in_replies() {
        for wire in [Wire::Frames, Wire::Lines] {
            let message = json!({ "jsonrpc": "2.0", "id": FIRST_CALL_ID, "method": "ping" });
            let mut template = RequestTemplate::new(wire, &message);
            let length = template.len();
            let patched = template.with_id(1_234_567_890).to_vec();
            assert_eq!(patched.len(), length);
            assert!(String::from_utf8_lossy(&patched).contains("1234567890"));

            let reply = Bytes::from(encode_message(wire, &json!({ "id": 1_000_000_007u64 })));
            let learned = ReplyTemplate::learn(&reply, 1_000_000_007).expect("id found once");
            let other = encode_message(wire, &json!({ "id": 1_000_000_042u64 }));
            assert_eq!(learned.id_of(&other), Some(1_000_000_042));
            let different = encode_message(wire, &json!({ "id": 1_000_000_042u64, "x": 1 }));
            assert_eq!(learned.id_of(&different), None);
        }
    }
}
