//! Array headers: `key[N]:`, `key[N|]{a|b}:`, keyed `key[N:]{a,b}:`, nested
//! field groups `{id,customer{name,city}}`, and the quote-aware scanning they need.
//!
//! Headers are parsed once per array, so clarity wins over speed here; the
//! per-row paths live in the decoder.

use std::collections::HashSet;

use super::byte_search::find_any_of_three;
use super::options::Delimiter;
use super::quote::{decode_quoted, find_closing_quote, first_of_two};

/// A problem at a byte offset of the scanned content.
pub(crate) type ContentError = (usize, String);

/// First occurrence of `target` at or after `from` outside double quotes.
/// Quote state starts closed at `from`; a backslash inside quotes escapes the next byte.
pub(crate) fn find_unquoted(bytes: &[u8], target: u8, from: usize) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        let at = i + first_of_two(target, b'"', &bytes[i..])?;
        if bytes[at] == target {
            return Some(at);
        }
        i = find_closing_quote(bytes, at)? + 1;
    }
    None
}

/// First unquoted occurrence of either byte, with which one it was.
pub(crate) fn find_unquoted2(bytes: &[u8], first: u8, second: u8, from: usize) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        let offset = memchr::memchr3(first, second, b'"', &bytes[i..])?;
        let at = i + offset;
        if bytes[at] != b'"' {
            return Some(at);
        }
        i = find_closing_quote(bytes, at)? + 1;
    }
    None
}

/// Trims U+0020 only: tabs and other spaces are content.
///
/// A byte loop: `str::trim_matches` goes through the generic pattern machinery, which
/// costs more than the one or two spaces there usually are to remove.
#[inline]
pub(crate) fn trim_spaces(text: &str) -> &str {
    let bytes = text.as_bytes();
    let start = skip_spaces(bytes, 0);
    let mut end = bytes.len();
    while end > start && bytes[end - 1] == b' ' {
        end -= 1;
    }
    &text[start..end]
}

/// Index of the first byte at or after `from` that is not U+0020 (`bytes.len()` if none).
#[inline]
pub(crate) fn skip_spaces(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    while at < bytes.len() && bytes[at] == b' ' {
        at += 1;
    }
    at
}

/// One entry of a flattened field list, in header order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FieldOp {
    /// A field that takes the next cell.
    Leaf(String),
    /// A nested group: an object whose subfields follow, up to the matching `Close`.
    Open(String),
    Close,
}

#[derive(Debug, Clone)]
pub(crate) struct Fields {
    pub ops: Vec<FieldOp>,
    /// Cells per row.
    pub leaf_count: usize,
    /// Deepest group nesting (0 when flat).
    pub group_depth: usize,
}

impl Fields {
    pub fn is_flat(&self) -> bool {
        self.group_depth == 0
    }
}

#[derive(Debug)]
pub(crate) struct Header {
    pub key: Option<String>,
    pub length: usize,
    pub delimiter: Delimiter,
    /// `[N:]`: an object of N entry rows rather than an array.
    pub keyed: bool,
    pub fields: Option<Fields>,
    /// Byte range of the values after the colon, when there are any.
    pub inline: Option<(usize, usize)>,
}

/// Parses `content` as an array header.
///
/// `Ok(None)` means the line is not a header (no bracket before the first
/// colon) and should be read as a key-value line. A line that starts to be a
/// header but breaks its grammar is an error in both modes: guessing a key
/// from a malformed header would let two readers disagree.
pub(crate) fn parse_header(
    content: &str,
    max_group_depth: usize,
    strict: bool,
) -> Result<Option<Header>, ContentError> {
    match plain_header(content) {
        Some(header) => Ok(Some(header)),
        None => parse_header_in_full(content, max_group_depth, strict),
    }
}

/// [`parse_header`] for every shape.
fn parse_header_in_full(
    content: &str,
    max_group_depth: usize,
    strict: bool,
) -> Result<Option<Header>, ContentError> {
    let bytes = content.as_bytes();
    let bracket_start = if bytes.first() == Some(&b'"') {
        let Some(close) = find_closing_quote(bytes, 0) else {
            return Ok(None);
        };
        if bytes.get(close + 1) != Some(&b'[') {
            return Ok(None);
        }
        close + 1
    } else {
        match find_unquoted(bytes, b'[', 0) {
            Some(at) => at,
            None => return Ok(None),
        }
    };
    // A header needs a colon after its bracket; a colon before it makes a key.
    match find_unquoted(bytes, b':', 0) {
        Some(colon) if colon > bracket_start => {}
        _ => return Ok(None),
    }

    let bracket_end = find_unquoted(bytes, b']', bracket_start)
        .ok_or_else(|| (bracket_start, "unterminated bracket segment".to_owned()))?;

    let mut brace_end = bracket_end + 1;
    let brace_start = find_unquoted(bytes, b'{', bracket_end);
    if let Some(brace) = brace_start {
        if find_unquoted(bytes, b':', bracket_end).is_some_and(|colon| brace < colon) {
            if brace != bracket_end + 1 {
                return Err((
                    bracket_end + 1,
                    "unexpected text between bracket segment and field list".to_owned(),
                ));
            }
            if let Some(close) = find_matching_brace(bytes, brace) {
                brace_end = close + 1;
            }
        }
    }

    let colon = find_unquoted(bytes, b':', bracket_end.max(brace_end))
        .ok_or_else(|| (bracket_end, "missing colon after array header".to_owned()))?;
    let gap_start = (bracket_end + 1).max(brace_end);
    if colon != gap_start {
        return Err((
            gap_start,
            "unexpected text between array header and colon".to_owned(),
        ));
    }

    let key = if bracket_start > 0 {
        let raw = &content[..bracket_start];
        if raw.ends_with([' ', '\t']) {
            return Err((
                bracket_start,
                "unexpected whitespace between key and bracket segment".to_owned(),
            ));
        }
        Some(parse_name(raw, 0)?)
    } else {
        None
    };

    let (length, delimiter, keyed) =
        parse_bracket_segment(&content[bracket_start + 1..bracket_end])
            .map_err(|message| (bracket_start + 1, message))?;

    let mut fields = None;
    if let Some(brace) = brace_start.filter(|&brace| brace < colon) {
        if let Some(close) = find_matching_brace(bytes, brace).filter(|&close| close < colon) {
            let list = &content[brace + 1..close];
            for other in [Delimiter::Comma, Delimiter::Tab, Delimiter::Pipe] {
                if other != delimiter {
                    if let Some(at) = find_unquoted(list.as_bytes(), other.as_byte(), 0) {
                        return Err((
                            brace + 1 + at,
                            format!(
                                "header delimiter mismatch: bracket declares \"{}\" but the field list uses \"{}\"",
                                delimiter.display(),
                                other.display()
                            ),
                        ));
                    }
                }
            }
            fields = Some(
                parse_fields(list, delimiter, max_group_depth, strict)
                    .map_err(|(at, message)| (brace + 1 + at, message))?,
            );
        }
    }

    if keyed && fields.is_none() {
        return Err((
            bracket_start,
            "a keyed header needs a field list".to_owned(),
        ));
    }

    let value_start = skip_spaces(bytes, colon + 1);
    let inline = (value_start < content.len()).then_some((value_start, content.len()));
    if fields.is_some() && inline.is_some() {
        return Err((
            value_start,
            "unexpected values after a header with a field list".to_owned(),
        ));
    }

    Ok(Some(Header {
        key,
        length,
        delimiter,
        keyed,
        fields,
        inline,
    }))
}

/// The shape almost every header has, `key[N]:` or `key[N]: values` with a bare key, the
/// comma delimiter and no field list, read in one pass; `None` for anything else, which
/// [`parse_header`] then reads in full (and which gives the same result for this shape).
fn plain_header(content: &str) -> Option<Header> {
    let bytes = content.as_bytes();
    // The first `[`, `:` or `"` must be the bracket: a colon first makes a key-value line,
    // a quote first a quoted key.
    let bracket = find_any_of_three([b'[', b':', b'"'], bytes)?;
    if bytes[bracket] != b'[' {
        return None;
    }
    plain_header_at(content, bracket, 0)
}

/// [`plain_header`] for a line whose first `[`, `:` or `"` is known to be the `[` at
/// `bracket` (the decoder has looked for it to tell the line's shape); the inline values'
/// range is given from `base`, where `content` starts in the text.
pub(crate) fn plain_header_at(content: &str, bracket: usize, base: usize) -> Option<Header> {
    let bytes = content.as_bytes();
    let raw_key = &content[..bracket];
    // Spaces or a tab around the key: the full parser trims them, or words the error.
    if raw_key.starts_with(' ') || raw_key.ends_with([' ', '\t']) {
        return None;
    }
    // At most 18 digits cannot overflow; a 19th digit is not the `]`, and longer lengths
    // take the full parser.
    let first_digit = bracket + 1;
    let mut close = first_digit;
    let mut length = 0u64;
    while close - first_digit < 18 {
        match bytes.get(close) {
            Some(&digit) if digit.is_ascii_digit() => {
                length = length * 10 + u64::from(digit - b'0');
                close += 1;
            }
            _ => break,
        }
    }
    let digits = close - first_digit;
    let canonical = digits == 1 || (digits > 1 && bytes[first_digit] != b'0');
    if !canonical || bytes.get(close) != Some(&b']') || bytes.get(close + 1) != Some(&b':') {
        return None;
    }
    // Like the full parser: a length beyond usize still forms a header.
    let length = usize::try_from(length).unwrap_or(usize::MAX);
    let value_start = skip_spaces(bytes, close + 2);
    Some(Header {
        key: (bracket > 0).then(|| raw_key.to_owned()),
        length,
        delimiter: Delimiter::Comma,
        keyed: false,
        fields: None,
        inline: (value_start < bytes.len()).then_some((base + value_start, base + bytes.len())),
    })
}

/// `N`, `N<delim>`, `N:` or `N:<delim>`, with N a canonical non-negative integer.
fn parse_bracket_segment(segment: &str) -> Result<(usize, Delimiter, bool), String> {
    let mut rest = segment.as_bytes();
    let mut delimiter = Delimiter::Comma;
    if let Some((&last, init)) = rest.split_last() {
        if last == b'\t' || last == b'|' {
            delimiter = Delimiter::from_byte(last).unwrap_or_default();
            rest = init;
        }
    }
    let mut keyed = false;
    if let Some((b':', init)) = rest.split_last() {
        keyed = true;
        rest = init;
    }
    let canonical = !rest.is_empty()
        && rest.iter().all(u8::is_ascii_digit)
        && (rest == b"0" || rest[0] != b'0');
    if !canonical {
        return Err(format!(
            "invalid array length \"{segment}\": expected a non-negative integer without leading zeros"
        ));
    }
    // A length beyond usize still forms a header; no input can satisfy it.
    let length = rest
        .iter()
        .try_fold(0usize, |acc, &d| {
            acc.checked_mul(10)?.checked_add(usize::from(d - b'0'))
        })
        .unwrap_or(usize::MAX);
    Ok((length, delimiter, keyed))
}

/// Index of the `}` matching the `{` at `open`, ignoring braces in quotes.
fn find_matching_brace(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = find_closing_quote(bytes, i)?;
            }
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// A key or field name: quoted (the quotes must span it) or bare, spaces trimmed.
fn parse_name(raw: &str, base: usize) -> Result<String, ContentError> {
    let trimmed = trim_spaces(raw);
    let lead = skip_spaces(raw.as_bytes(), 0);
    if trimmed.starts_with('"') {
        let (name, end) = decode_quoted(trimmed, 0)
            .map_err(|(at, message)| (base + lead + at, message.to_owned()))?;
        if end != trimmed.len() {
            return Err((
                base + lead + end,
                "unexpected characters after closing quote".to_owned(),
            ));
        }
        return Ok(name);
    }
    Ok(trimmed.to_owned())
}

/// Parses a field list (between the outer braces) into a flat op list, without
/// recursion: nested groups are tracked on an explicit stack.
fn parse_fields(
    list: &str,
    delimiter: Delimiter,
    max_group_depth: usize,
    strict: bool,
) -> Result<Fields, ContentError> {
    let bytes = list.as_bytes();
    let delim = delimiter.as_byte();
    let mut ops = Vec::new();
    // Names already used at each open level, to reject duplicates (strict mode; non-strict
    // lets the last one win when the row is built).
    let mut levels: Vec<HashSet<String>> = vec![HashSet::new()];
    let mut leaf_count = 0;
    let mut group_depth = 0;
    let mut i = 0;
    loop {
        // One entry: a name, then a delimiter, an opening brace, a closing brace or the end.
        let entry_start = i;
        let mut stop = i;
        while stop < bytes.len() && !matches!(bytes[stop], b'{' | b'}') && bytes[stop] != delim {
            if bytes[stop] == b'"' {
                stop = find_closing_quote(bytes, stop)
                    .ok_or_else(|| (stop, "unterminated quoted field name".to_owned()))?;
            }
            stop += 1;
        }
        let raw = &list[entry_start..stop];
        let terminator = bytes.get(stop).copied();
        if trim_spaces(raw).is_empty() {
            let message = if terminator == Some(b'{') {
                "missing field name before nested field group"
            } else {
                "empty field name in field list"
            };
            return Err((entry_start, message.to_owned()));
        }
        if terminator == Some(b'{') && raw.ends_with([' ', '\t']) {
            return Err((
                stop,
                "unexpected whitespace before nested field group".to_owned(),
            ));
        }
        let name = parse_name(raw, entry_start)?;
        let level = levels
            .last_mut()
            .ok_or_else(|| (stop, "unmatched brace in field list".to_owned()))?;
        if !level.insert(name.clone()) && strict {
            return Err((
                entry_start,
                format!("duplicate field name \"{name}\" in field list"),
            ));
        }
        i = stop + 1;
        match terminator {
            Some(b'{') => {
                ops.push(FieldOp::Open(name));
                levels.push(HashSet::new());
                group_depth = group_depth.max(levels.len() - 1);
                if levels.len() - 1 > max_group_depth {
                    return Err((
                        stop,
                        "field groups nested deeper than the nesting limit".to_owned(),
                    ));
                }
                continue;
            }
            Some(b'}') | None => {
                ops.push(FieldOp::Leaf(name));
                leaf_count += 1;
                if terminator.is_none() {
                    break;
                }
                // Close this group and any that end right after it.
                let mut at = stop;
                loop {
                    if levels.len() < 2 {
                        return Err((at, "unmatched brace in field list".to_owned()));
                    }
                    levels.pop();
                    ops.push(FieldOp::Close);
                    at += 1;
                    while bytes.get(at) == Some(&b' ') {
                        at += 1;
                    }
                    match bytes.get(at) {
                        Some(b'}') => continue,
                        Some(&b) if b == delim => break,
                        None => break,
                        Some(_) => {
                            return Err((
                                at,
                                "unexpected content after nested field group".to_owned(),
                            ))
                        }
                    }
                }
                if at >= bytes.len() {
                    break;
                }
                i = at + 1;
            }
            Some(_) => {
                ops.push(FieldOp::Leaf(name));
                leaf_count += 1;
            }
        }
    }
    if levels.len() != 1 {
        return Err((bytes.len(), "unmatched brace in field list".to_owned()));
    }
    Ok(Fields {
        ops,
        leaf_count,
        group_depth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(content: &str) -> Header {
        parse_header(content, 64, true)
            .expect("valid header")
            .expect("is a header")
    }

    #[test]
    fn plain_headers_read_as_the_full_parser_reads_them() {
        let plain = [
            "[0]:",
            "[3]: a,b,c",
            "k[1]:",
            "tags[3]: alpha,\"beta, gamma\",δ",
            "a.b_c[12]:   x",
            "key[999999999999999999]:",
            "k[10]: x",
            "k[7]:x",
            "k[2]: {x},[y]",
        ];
        for content in plain {
            let fast = plain_header(content).expect("plain shape");
            let full = parse_header_in_full(content, 64, true)
                .expect("valid")
                .expect("header");
            assert_eq!(format!("{fast:?}"), format!("{full:?}"), "{content}");
        }
        // Everything else is left to the full parser, errors included.
        for content in [
            "k[3|]: a|b",
            "k[3\t]: a",
            "k[2:]{a}:",
            "k[2]{a,b}:",
            "\"q\"[1]: x",
            "k [1]: x",
            "k\t[1]: x",
            "k[01]: x",
            "k[]: x",
            "k[1] : x",
            "k: [1]: x",
            "k[1]",
            "k[1234567890123456789]:",
            "k[1234567890123456789",
            " k[1]: x",
            "k[1x]: x",
            "k[1",
        ] {
            assert!(plain_header(content).is_none(), "{content}");
        }
    }

    fn leaf(name: &str) -> FieldOp {
        FieldOp::Leaf(name.to_owned())
    }

    #[test]
    fn plain_inline_and_delimiters() {
        let h = header("tags[3]: a,b,c");
        assert_eq!(h.key.as_deref(), Some("tags"));
        assert_eq!(
            (h.length, h.delimiter, h.keyed),
            (3, Delimiter::Comma, false)
        );
        assert_eq!(h.inline, Some((9, 14)));
        let h = header("\"x-y\"[2|]:");
        assert_eq!(h.key.as_deref(), Some("x-y"));
        assert_eq!((h.delimiter, h.inline.is_none()), (Delimiter::Pipe, true));
        let h = header("[2:\t]{a\tb}:");
        assert_eq!((h.key, h.keyed, h.delimiter), (None, true, Delimiter::Tab));
    }

    #[test]
    fn nested_field_groups() {
        let h = header("o[1]{id,c{n,\"full name\"},t}:");
        let fields = h.fields.expect("fields");
        assert_eq!(
            fields.ops,
            vec![
                leaf("id"),
                FieldOp::Open("c".to_owned()),
                leaf("n"),
                leaf("full name"),
                FieldOp::Close,
                leaf("t")
            ]
        );
        assert_eq!((fields.leaf_count, fields.group_depth), (4, 1));
        assert_eq!(
            header("i[1]{\"a{b}\",c}:").fields.expect("fields").ops,
            vec![leaf("a{b}"), leaf("c")]
        );
    }

    #[test]
    fn unquoted_bytes_are_found_before_and_past_the_byte_by_byte_head() {
        for length in 0..48 {
            let plain = "x".repeat(length);
            assert_eq!(find_unquoted(plain.as_bytes(), b',', 0), None);
            for at in 0..length {
                let mut text = plain.clone().into_bytes();
                text[at] = b',';
                assert_eq!(find_unquoted(&text, b',', 0), Some(at), "{length} {at}");
                // Behind a quoted comma, the unquoted one after it is found.
                let quoted = format!(
                    "\"{}\"{}",
                    ",".repeat(at),
                    String::from_utf8(text).expect("ASCII")
                );
                let expected = at + 2 + at;
                assert_eq!(find_unquoted(quoted.as_bytes(), b',', 0), Some(expected));
            }
        }
    }

    #[test]
    fn not_headers() {
        for content in [
            "key: foo [2]: bar",
            "a: b [2]{x,y}: 1,2",
            "\"a\": [1]",
            "plain",
            "x[1]",
        ] {
            assert!(
                parse_header(content, 64, true).expect("no error").is_none(),
                "{content}"
            );
        }
    }

    #[test]
    fn malformed_headers() {
        for content in [
            "foo[1][bar]: 10",
            "key[]: 1,2",
            "foo[bar][1]: 20",
            "foo[2]extra: a,b",
            "foo [2]: a",
            "a[2|]{x,y}: 1|2",
            "items[03]: a",
            "x[+3]: a",
            "x[1e1]: a",
            "items[2] : a",
            "items[2] {a}:",
            "items[1]{}:",
            "items[1]{id,meta{}}:",
            "items[1]{a,a}:",
            "items[1]{a,a{x}}:",
            "m[2:]:",
            "m[2|:]{v}:",
            "m[2:,]{v}:",
            "m[1:]{v}: x",
            "items[2]{a,b}: 1,2",
            "items[1]{id,c{name:",
        ] {
            assert!(parse_header(content, 64, true).is_err(), "{content}");
        }
    }

    #[test]
    fn group_depth_is_capped_without_recursion() {
        let deep = format!("x[1]{{{}b{}}}:", "a{".repeat(100_000), "}".repeat(100_000));
        assert!(parse_header(&deep, 128, true).is_err());
    }
}
