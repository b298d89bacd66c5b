//! Reading one field of a TOON document as the decoder reads it, for a reader that takes a
//! document of a known shape apart line by line (`ide-mcp-server`'s `mcp::common_call`).
//! Each is `#[inline]`, so it is compiled where it is used and not in this crate: compiled
//! here, these few lines changed how the compiler laid the decoder out, and cost it about
//! 2 % of its instructions on a deep document (`examples/codec_ops.rs` under callgrind).

use std::borrow::Cow;

use serde_json::Value;

use super::{byte_search, number, quote};

/// A field's value as the decoder reads it from `token`, the text after `key: ` (with no
/// space at either end): a quoted string, `true`, `false`, `null`, a number (by the number
/// policy of [`super`]), `[]` (an empty array), or else the token itself as a string. `None` where
/// the decoder reports an error (a quoted string that is broken or followed by more text)
/// and for an empty token, which makes the field an object (nested, on the lines after it, or
/// empty). For a reader that takes a document of a known shape apart line by line and must
/// read each value as the decoder would (`ide-mcp-server`'s `mcp::common_call`); tests hold
/// it to the decoder.
#[inline]
pub fn decode_field_value(token: &str) -> Option<Value> {
    match token.as_bytes().first() {
        None => None,
        Some(b'[') if token == "[]" => Some(Value::Array(Vec::new())),
        Some(b'"') => match quote::decode_quoted(token, 0) {
            Ok((text, after)) if after == token.len() => Some(Value::String(text)),
            _ => None,
        },
        Some(b't') if token == "true" => Some(Value::Bool(true)),
        Some(b'f') if token == "false" => Some(Value::Bool(false)),
        Some(b'n') if token == "null" => Some(Value::Null),
        Some(b'-' | b'0'..=b'9') => {
            Some(number::decode_number(token).unwrap_or_else(|| Value::String(token.to_owned())))
        }
        Some(_) => Some(Value::String(token.to_owned())),
    }
}

/// A key quoted at the start of `text`, decoded, and the offset just past its closing quote;
/// `None` when it is broken. Borrowed from `text` when it holds no escape (a key such as
/// `"dev.lain.claudejb/token"`, quoted only for its `/`). With [`bare_key_length`], what a
/// line-by-line reader needs to read a key as the decoder does.
#[inline]
pub fn decode_quoted_key(text: &str) -> Option<(Cow<'_, str>, usize)> {
    let body = text.strip_prefix('"')?;
    match byte_search::find_either(b'"', b'\\', body.as_bytes()) {
        Some(close) if body.as_bytes()[close] == b'"' => {
            Some((Cow::Borrowed(&body[..close]), close + 2))
        }
        Some(_) => quote::decode_quoted(text, 0)
            .ok()
            .map(|(key, end)| (Cow::Owned(key), end)),
        None => None,
    }
}

/// The offset of the first newline in `bytes`: a line's end, found as the decoder finds it
/// (sixteen bytes at a time, where a byte at a time cost a line reader more than the rest of
/// a short line's reading).
#[inline]
pub fn find_line_end(bytes: &[u8]) -> Option<usize> {
    byte_search::find_byte(b'\n', bytes)
}

/// The length of the key the encoder would write bare (`[A-Za-z_][A-Za-z0-9_.]*`) that
/// `text` starts with, 0 when it starts with none: a line `key: value` whose bare key is
/// followed by its colon is read by the decoder with that key as it is.
#[inline]
pub fn bare_key_length(text: &str) -> usize {
    quote::bare_key_length(text)
}
