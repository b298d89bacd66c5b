//! Strings and keys: when the encoder must quote, how it escapes, and how the
//! decoder unescapes.
//!
//! The escape set is `\\ \" \n \r \t` plus `\uXXXX` for the other C0 controls.
//! Supplementary characters always travel as literal UTF-8, so the decoder
//! rejects every surrogate escape: no escape can produce a lone surrogate.

use super::byte_search::find_either;
use super::number::is_numeric_like;
use super::options::Delimiter;

/// Bytes that force quoting wherever they appear in a value: C0 controls and
/// the structural characters `: " \ [ ] { }`. The active delimiter is added
/// per position.
const fn structural_byte_table(delimiter: u8) -> [bool; 256] {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = true;
        byte += 1;
    }
    table[b':' as usize] = true;
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table[b'[' as usize] = true;
    table[b']' as usize] = true;
    table[b'{' as usize] = true;
    table[b'}' as usize] = true;
    table[delimiter as usize] = true;
    table
}

static NEEDS_QUOTE_COMMA: [bool; 256] = structural_byte_table(b',');
static NEEDS_QUOTE_TAB: [bool; 256] = structural_byte_table(b'\t');
static NEEDS_QUOTE_PIPE: [bool; 256] = structural_byte_table(b'|');

fn quote_table(delimiter: Delimiter) -> &'static [bool; 256] {
    match delimiter {
        Delimiter::Comma => &NEEDS_QUOTE_COMMA,
        Delimiter::Tab => &NEEDS_QUOTE_TAB,
        Delimiter::Pipe => &NEEDS_QUOTE_PIPE,
    }
}

/// Whether a string value must be quoted to decode back as the same string.
///
/// `delimiter` is the one in force at the value's position: the active
/// delimiter inside inline arrays and rows, the document delimiter elsewhere.
pub(crate) fn value_needs_quotes(text: &str, delimiter: Delimiter) -> bool {
    let bytes = text.as_bytes();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return true; // "" would decode as an empty token, which is ambiguous.
    };
    // Padding would be trimmed; `-` reads as a list marker, `#` as a comment.
    if matches!(first, b' ' | b'\t' | b'-' | b'#') || matches!(last, b' ' | b'\t') {
        return true;
    }
    let table = quote_table(delimiter);
    if bytes.iter().any(|&b| table[b as usize]) {
        return true;
    }
    // Only now the rarer checks: things that would decode as another type.
    match first {
        b't' | b'f' | b'n' => matches!(text, "true" | "false" | "null"),
        b'0'..=b'9' | b'+' => is_numeric_like(bytes),
        _ => false,
    }
}

/// The bytes a bare key may hold after its first: `[A-Za-z0-9_.]`.
static BARE_KEY_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = b.is_ascii_alphanumeric() || b == b'_' || b == b'.';
        byte += 1;
    }
    table
};

/// Whether a key may be written bare: `^[A-Za-z_][A-Za-z0-9_.]*$`.
pub(crate) fn key_is_bare(key: &str) -> bool {
    !key.is_empty() && bare_key_length(key) == key.len()
}

/// The length of the bare key (`[A-Za-z_][A-Za-z0-9_.]*`) that `text` starts with, 0 when it
/// starts with none.
pub(crate) fn bare_key_length(text: &str) -> usize {
    let bytes = text.as_bytes();
    match bytes.first() {
        // One table look-up a byte, where the character classes took five comparisons.
        Some(first) if first.is_ascii_alphabetic() || *first == b'_' => {
            1 + bytes[1..]
                .iter()
                .take_while(|&&b| BARE_KEY_BYTE[usize::from(b)])
                .count()
        }
        _ => 0,
    }
}

/// Whether any byte of `word` needs an escape: a control byte, `"` or `\\`.
///
/// Word-at-a-time tests (the classic `hasless`/`haszero` bit tricks): subtracting
/// 0x20 (or 1 after an XOR that zeroes matching bytes) from every byte borrows into a
/// byte's high bit exactly when that byte was below the bound, and `& !word` drops
/// bytes whose high bit was set already. The answer for the word as a whole is exact.
fn word_needs_escape(word: u64) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH_BITS: u64 = u64::from_ne_bytes([0x80; 8]);
    let below_space = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let is_quote = quote.wrapping_sub(ONES) & !quote;
    let is_backslash = backslash.wrapping_sub(ONES) & !backslash;
    (below_space | is_quote | is_backslash) & HIGH_BITS != 0
}

/// The length of the prefix of `bytes` that needs no escape, found eight bytes at a time
/// (most strings quoted for a `:` or `,` have nothing to escape).
fn escape_free_prefix(bytes: &[u8]) -> usize {
    let mut clean = 0;
    for chunk in bytes.chunks_exact(8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        if word_needs_escape(u64::from_ne_bytes(word)) {
            break;
        }
        clean += 8;
    }
    clean
}

/// Appends `text` in double quotes with the TOON escapes applied.
pub(crate) fn push_quoted(text: &str, out: &mut String) {
    out.reserve(text.len() + 2);
    out.push('"');
    let bytes = text.as_bytes();
    let mut run_start = 0;
    // The byte loop starts after the words that need no escape; they stay in the run.
    for (index, &byte) in bytes.iter().enumerate().skip(escape_free_prefix(bytes)) {
        let escape: &str = match byte {
            b'\\' => "\\\\",
            b'"' => "\\\"",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x00..=0x1f => "",
            _ => continue,
        };
        // Every byte that breaks the run is ASCII, so the slice bounds are
        // character boundaries.
        out.push_str(&text[run_start..index]);
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(HEX[usize::from(byte >> 4)] as char);
            out.push(HEX[usize::from(byte & 0xf)] as char);
        } else {
            out.push_str(escape);
        }
        run_start = index + 1;
    }
    out.push_str(&text[run_start..]);
    out.push('"');
}

/// Appends a key, bare when allowed, quoted otherwise.
pub(crate) fn push_key(key: &str, out: &mut String) {
    if key_is_bare(key) {
        out.push_str(key);
    } else {
        push_quoted(key, out);
    }
}

/// Appends a string value, quoting only when needed.
pub(crate) fn push_string_value(text: &str, delimiter: Delimiter, out: &mut String) {
    if value_needs_quotes(text, delimiter) {
        push_quoted(text, out);
    } else {
        out.push_str(text);
    }
}

/// A problem inside a quoted string: byte offset (into the scanned text) and reason.
pub(crate) type QuoteError = (usize, &'static str);

/// The first `first` or `second` in `bytes`.
///
/// What is searched is mostly short (a cell, a key, a quoted string): the first bytes are looked at one by
/// one, since a call into `memchr2` costs more than they do, and the rest goes to `memchr2`.
#[inline]
pub(crate) fn first_of_two(first: u8, second: u8, bytes: &[u8]) -> Option<usize> {
    const BYTE_BY_BYTE: usize = 16;
    let head = &bytes[..bytes.len().min(BYTE_BY_BYTE)];
    if let Some(at) = head.iter().position(|&b| b == first || b == second) {
        return Some(at);
    }
    let rest = bytes.get(BYTE_BY_BYTE..)?;
    memchr::memchr2(first, second, rest).map(|at| BYTE_BY_BYTE + at)
}

/// Index of the closing quote for the quote at `open`, skipping escaped bytes.
pub(crate) fn find_closing_quote(bytes: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    while let Some(offset) = first_of_two(b'"', b'\\', &bytes[i..]) {
        let at = i + offset;
        if bytes[at] == b'"' {
            return Some(at);
        }
        i = at + 2;
        if i >= bytes.len() {
            return None;
        }
    }
    None
}

/// Decodes the quoted string whose opening quote is at `open` in `text`.
/// Returns the string and the index just past its closing quote.
///
/// A string without escapes, the most common, is read where the call is; the rest is a
/// call of its own.
#[inline]
pub(crate) fn decode_quoted(text: &str, open: usize) -> Result<(String, usize), QuoteError> {
    let bytes = text.as_bytes();
    let body_start = open + 1;
    match find_either(b'"', b'\\', &bytes[body_start..]) {
        Some(offset) if bytes[body_start + offset] == b'"' => {
            let close = body_start + offset;
            Ok((text[body_start..close].to_owned(), close + 1))
        }
        Some(offset) => decode_escaped(text, open, body_start + offset),
        None => Err((open, "unterminated string: missing closing quote")),
    }
}

/// [`decode_quoted`] for a string whose first escape is the backslash at `escape`.
#[inline(never)]
fn decode_escaped(text: &str, open: usize, escape: usize) -> Result<(String, usize), QuoteError> {
    let bytes = text.as_bytes();
    let body_start = open + 1;
    let mut out = String::with_capacity(bytes.len() - body_start);
    // The bytes before the escape were searched already: they are copied, not searched again.
    out.push_str(&text[body_start..escape]);
    let mut i = escape;
    loop {
        let Some(offset) = find_either(b'"', b'\\', &bytes[i..]) else {
            return Err((open, "unterminated string: missing closing quote"));
        };
        let at = i + offset;
        out.push_str(&text[i..at]);
        if bytes[at] == b'"' {
            return Ok((out, at + 1));
        }
        let Some(&escaped) = bytes.get(at + 1) else {
            return Err((open, "unterminated string: missing closing quote"));
        };
        i = at + 2;
        match escaped {
            b'\\' => out.push('\\'),
            b'"' => out.push('"'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
                let code = bytes
                    .get(i..i + 4)
                    .and_then(|hex| {
                        hex.iter().try_fold(0u32, |acc, &h| {
                            (h as char).to_digit(16).map(|digit| acc * 16 + digit)
                        })
                    })
                    .ok_or((at, "invalid escape: \\u needs exactly four hex digits"))?;
                // Surrogates (U+D800..U+DFFF) have no char: supplementary
                // characters must appear as literal UTF-8.
                let character = char::from_u32(code)
                    .ok_or((at, "invalid escape: \\u escapes may not encode surrogates"))?;
                out.push(character);
                i += 4;
            }
            _ => {
                return Err((
                    at,
                    "invalid escape: only \\\\ \\\" \\n \\r \\t and \\uXXXX are allowed",
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quoted(text: &str) -> String {
        let mut out = String::new();
        push_quoted(text, &mut out);
        out
    }

    #[test]
    fn quoting_decisions() {
        let comma = Delimiter::Comma;
        for text in [
            "",
            " a",
            "a ",
            "\ta",
            "true",
            "false",
            "null",
            "42",
            "-3.14",
            "1e-6",
            "05",
            "+1",
            "-",
            "- item",
            "-x",
            "#",
            "#x",
            "a:b",
            "a,b",
            "[5]",
            "{k}",
            "say \"hi\"",
            "a\\b",
            "line\nbreak",
            "a\u{4}b",
        ] {
            assert!(value_needs_quotes(text, comma), "{text:?} must be quoted");
        }
        for text in [
            "hello",
            "Ada_99",
            "café",
            "你好",
            "🚀",
            "hello world",
            "a|b",
            "a\u{a0}",
            "True",
            "nul",
            "1x",
            "x-1",
            "a#b",
        ] {
            assert!(!value_needs_quotes(text, comma), "{text:?} stays bare");
        }
        assert!(value_needs_quotes("a|b", Delimiter::Pipe));
        assert!(!value_needs_quotes("a,b", Delimiter::Pipe));
        assert!(!value_needs_quotes("a,b", Delimiter::Tab));
    }

    #[test]
    fn key_rules() {
        for key in ["a", "_private", "user.name", "A9_.x"] {
            assert!(key_is_bare(key), "{key}");
        }
        for key in ["", "9a", "-lead", "a b", "a:b", "café", "a-b", ".a"] {
            assert!(!key_is_bare(key), "{key}");
        }
    }

    #[test]
    fn a_bare_key_is_measured_up_to_the_first_byte_no_bare_key_holds() {
        let cases = [
            ("id: 12", 2),
            ("user.name_2:", 11),
            ("a", 1),
            ("a b: 1", 1),
            ("café: x", 3),
            ("", 0),
            (": x", 0),
            ("9a: x", 0),
            ("\"quoted\": x", 0),
            ("[2]: a,b", 0),
        ];
        for (text, length) in cases {
            assert_eq!(bare_key_length(text), length, "{text}");
        }
    }

    #[test]
    fn word_escape_test_matches_the_byte_test() {
        let needs = |b: u8| b < 0x20 || b == b'"' || b == b'\\';
        for special in 0..=255u8 {
            for position in 0..8 {
                let mut word = *b"abcdefgh";
                word[position] = special;
                assert_eq!(
                    word_needs_escape(u64::from_ne_bytes(word)),
                    needs(special),
                    "{special:#x} at {position}"
                );
            }
        }
        let text = "0123456789abcdef\"tail";
        assert_eq!(escape_free_prefix(text.as_bytes()), 16);
        assert_eq!(quoted(text), "\"0123456789abcdef\\\"tail\"");
    }

    #[test]
    fn escapes_round_trip() {
        let text = "q\" b\\ n\n r\r t\t c\u{1}\u{1f} é🚀";
        let encoded = quoted(text);
        assert_eq!(
            encoded,
            "\"q\\\" b\\\\ n\\n r\\r t\\t c\\u0001\\u001f é🚀\""
        );
        let (decoded, end) = decode_quoted(&encoded, 0).expect("valid");
        assert_eq!(decoded, text);
        assert_eq!(end, encoded.len());
    }

    #[test]
    fn bad_escapes_are_rejected() {
        for text in [
            "\"a\\x\"",
            "\"a\\u00b\"",
            "\"\\uD800\"",
            "\"\\udfff\"",
            "\"\\ud83d\\ude80\"",
            "\"open",
            "\"ends\\",
            "\"\\u12g4\"",
        ] {
            assert!(decode_quoted(text, 0).is_err(), "{text}");
        }
        assert_eq!(
            decode_quoted("\"x\\u00E9y\"", 0).expect("valid").0,
            "x\u{e9}y"
        );
    }

    #[test]
    fn closing_quote_skips_escapes() {
        assert_eq!(find_closing_quote(b"\"a\\\"b\" rest", 0), Some(5));
        assert_eq!(find_closing_quote(b"\"a\\", 0), None);
        assert_eq!(find_closing_quote(b"\"abc", 0), None);
    }
}
