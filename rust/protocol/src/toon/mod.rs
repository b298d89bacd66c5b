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

pub(crate) mod byte_search;
mod decode;
mod encode;
mod error;
mod field;
mod header;
mod number;
mod options;
mod quote;
mod scan;

pub use error::DecodeError;
pub use field::{bare_key_length, decode_field_value, decode_quoted_key, find_line_end};
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::borrow::Cow;

    /// What the decoder makes of `token` as a field's value, or `None` for an error.
    fn as_the_decoder_reads_it(token: &str) -> Option<Value> {
        let document = format!("k: {token}");
        decode(&document, &DecodeOptions::default())
            .ok()
            .and_then(|value| value.get("k").cloned())
    }

    #[test]
    fn a_value_token_is_read_as_the_decoder_reads_it() {
        let tokens = [
            "bench-echo",
            "tools/call",
            r#""2.0""#,
            "2.0",
            "12",
            "-0",
            "0",
            "05",
            "-007",
            "1e3",
            "1.5e-7",
            "1.0",
            "-12.50",
            "123456789012345678901234",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775809",
            "1e400",
            "true",
            "false",
            "null",
            "True",
            "nul",
            "-",
            "+1",
            ".5",
            "a b c",
            "a:b",
            "δ",
            r#""""#,
            r#""a\"b""#,
            r#""tab\tnew\nline""#,
            r#""\u00e9""#,
            r#""broken"#,
            r#""a"b"#,
            r#""a" b"#,
            r#""bad \x escape""#,
            r#""\ud800""#,
            "x,y",
            "[]",
            "-x",
            "0x10",
        ];
        for token in tokens {
            assert_eq!(
                decode_field_value(token),
                as_the_decoder_reads_it(token),
                "{token}"
            );
        }
    }

    #[test]
    fn a_quoted_key_is_read_as_the_decoder_reads_it() {
        for key in ["dev.lain.claudejb/token", "a b", "with \"quote\"", "é", ""] {
            let mut quoted = String::new();
            quote::push_quoted(key, &mut quoted);
            let (decoded, end) = decode_quoted_key(&quoted).expect("a quoted key");
            assert_eq!((decoded.as_ref(), end), (key, quoted.len()));
            let escaped = quoted.contains('\\');
            assert_eq!(
                matches!(decoded, Cow::Owned(_)),
                escaped,
                "copied only when escaped"
            );
            let document = format!("{quoted}: 1");
            let value = decode(&document, &DecodeOptions::default()).expect("decodes");
            assert_eq!(value.get(key), Some(&Value::from(1)), "{key}");
        }
        assert_eq!(decode_quoted_key(r#""open"#), None);
        assert_eq!(decode_quoted_key(r#""open\"#), None);
        assert_eq!(decode_quoted_key(r#""bad \x escape": 1"#), None);
        assert_eq!(decode_quoted_key("bare"), None);
        assert_eq!(
            decode_quoted_key(r#""a": "b""#),
            Some((Cow::Borrowed("a"), 3)),
            "ends at its own closing quote"
        );
    }

    #[test]
    fn a_line_ends_at_its_first_newline_at_any_length() {
        for length in 0..300 {
            let line = "k".repeat(length).into_bytes();
            assert_eq!(find_line_end(&line), None, "{length}");
            for at in [0, length / 2, length] {
                let mut with = line.clone();
                with.insert(at, b'\n');
                with.extend_from_slice(b"\nmore");
                assert_eq!(find_line_end(&with), Some(at), "{length} {at}");
            }
        }
    }

    proptest! {
        #[test]
        fn any_token_is_read_as_the_decoder_reads_it(token in "[ -~é\"\\\\]{0,12}") {
            let token = token.trim_matches(' ');
            // An empty token opens an object: no value to compare.
            if !token.is_empty() {
                prop_assert_eq!(decode_field_value(token), as_the_decoder_reads_it(token), "{}", token);
            }
        }
    }
}
