//! TOON (Token-Oriented Object Notation, spec v4.4): the codec for payloads on the wire.
//!
//! ```
//! use ide_mcp_protocol::toon::{decode, encode, DecodeOptions, EncodeOptions};
//! use serde_json::json;
//!
//! let value = json!({"tools": [{"name": "open", "args": 1}, {"name": "save", "args": 2}]});
//! let text = encode(&value, &EncodeOptions::default());
//! assert_eq!(text, "tools[2]{name,args}:\n  open,1\n  save,2");
//! assert_eq!(decode(&text, &DecodeOptions::default()).expect("valid TOON"), value);
//! ```
//!
//! Policies where the spec leaves a choice:
//! - Floats are written in plain decimal with the shortest round-trip digits,
//!   never in exponent form; the decoder accepts both forms.
//! - Integral numbers decode as exact integers when they fit `i64`/`u64` (so
//!   `1.0`, `1e3` and `-0` decode as `1`, `1000` and `0`); integer literals that
//!   no 64-bit type or `f64` holds exactly decode as strings, never rounded.
//! - Duplicate keys are an error in strict mode (the default, and what the servers use);
//!   non-strict mode, on request, follows the spec: the last one wins.
//! - Nesting beyond [`DecodeOptions::max_depth`] is an error. Neither direction
//!   recurses over the document's nesting, so no input can exhaust the stack.
//! - What the decoded value takes is counted while it is built and capped by
//!   [`DecodeOptions::max_decoded_bytes`] (by default 16 bytes per byte of the
//!   document plus 1 MiB, see [`crate::budget`]), so no document expands past it.

mod byte_search;
mod decode;
mod encode;
mod error;
mod header;
mod number;
mod options;
mod quote;
mod scan;

pub use error::DecodeError;
pub use options::{DecodeOptions, Delimiter, EncodeOptions};

use serde_json::Value;

/// Encodes `value` as a TOON document (no trailing newline).
pub fn encode(value: &Value, options: &EncodeOptions) -> String {
    // Small messages dominate; starting at 128 bytes skips the first few regrowths.
    let mut out = String::with_capacity(128);
    encode_into(value, options, &mut out);
    out
}

/// Appends the TOON encoding of `value` to `out`, reusing its allocation.
pub fn encode_into(value: &Value, options: &EncodeOptions, out: &mut String) {
    encode::encode_into(value, options, out);
}

/// Appends `text` as a string value, exactly as [`encode_into`] writes a string anywhere in a
/// document encoded with `options` (quoted only when it must be), for a writer that puts
/// a known document together around it.
pub fn encode_str_into(text: &str, options: &EncodeOptions, out: &mut String) {
    quote::push_string_value(text, options.delimiter, out);
}

/// Decodes a TOON document.
pub fn decode(text: &str, options: &DecodeOptions) -> Result<Value, DecodeError> {
    decode::decode(text, options)
}

/// Decodes a TOON document from bytes; invalid UTF-8 is an error at its position.
pub fn decode_bytes(bytes: &[u8], options: &DecodeOptions) -> Result<Value, DecodeError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => decode(text, options),
        Err(error) => {
            let valid = &bytes[..error.valid_up_to()];
            let line_start = memchr::memrchr(b'\n', valid).map_or(0, |newline| newline + 1);
            let line = 1 + memchr::memchr_iter(b'\n', valid).count();
            // The prefix is valid UTF-8, so counting its characters is exact.
            let column =
                std::str::from_utf8(&valid[line_start..]).map_or(1, |s| s.chars().count() + 1);
            Err(DecodeError::new(line, column, "invalid UTF-8"))
        }
    }
}
