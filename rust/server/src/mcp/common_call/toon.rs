//! The frame's TOON, as the encoder writes the common `tools/call` (the bridge's way in):
//!
//! ```text
//! jsonrpc: "2.0"
//! id: 12
//! method: tools/call
//! params:
//!   name: run
//!   arguments:
//!     tool: echo
//!     args:
//!       value: bench-echo
//!   _meta:
//!     "dev.lain.claudejb/token": …
//! ```
//!
//! read line by line: each line is `key: value` or `key:` (an object on the lines below it,
//! one level deeper), its key bare or quoted, its value read by
//! [`toon::decode_field_value`], the decoder's own reading of a field's value. The decoder
//! would build a map for each of the five objects and hash every key. `args` is read here
//! only when its fields are values (no object or array of them beside `[]`): a deeper `args`
//! is left to the decoder with the rest of the message.
//!
//! A message of at most [`MAX_BYTES`] is read: the decoder's budget (16 bytes a byte of the
//! message, and 1 MiB more) is then far above what this shape can take (its strings, an entry
//! for each of its lines, a few objects' room), so no message is read here that the decoder
//! would refuse for its budget.

use std::borrow::Cow;

use ide_mcp_protocol::toon;
use serde_json::{Map, Value};

use super::{Envelope, Params};
use crate::limits::DecodeLimits;
use crate::mcp::messages::ParsedRequest;
use ide_mcp_protocol::jsonrpc::JSONRPC_VERSION;

/// The largest message read here. Its decode charges at most its bytes of strings, an entry
/// (72 bytes) for each of its lines (at least three bytes each) and the room of its five
/// objects (at most 16 entries each): about 25 times its size plus 6 KiB, well within the
/// 16 times plus 1 MiB of its budget.
pub(crate) const MAX_BYTES: usize = 8 * 1024;

/// `jsonrpc`'s value as a frame spells it: quoted, since bare it would be a number.
const QUOTED_JSONRPC_VERSION: &str = "\"2.0\"";
/// `method`'s value as the encoder writes it, and quoted as another encoder may.
const TOOLS_CALL: &str = "tools/call";
const QUOTED_TOOLS_CALL: &str = "\"tools/call\"";
/// `name`'s value, bare as the encoder writes it and quoted.
const RUN: &str = "run";
const QUOTED_RUN: &str = "\"run\"";

// `QUOTED_JSONRPC_VERSION` spells the version JSON-RPC's own constant names.
const _: () = assert!(matches!(JSONRPC_VERSION.as_bytes(), b"2.0"));

/// The request of the frame, when it has the common shape and passes `limits`; `None` for
/// anything else.
pub(crate) fn read(payload: &[u8], limits: &DecodeLimits) -> Option<ParsedRequest> {
    if payload.len() > MAX_BYTES || !super::limits_leave_room(limits) {
        return None;
    }
    let text = std::str::from_utf8(payload).ok()?;
    let mut lines = Lines {
        rest: Some(text),
        peeked: None,
        longest_string: 0,
    };
    let mut envelope = Envelope::default();
    let mut params = None;
    while let Some(line) = lines.next()? {
        if line.depth != 0 {
            return None;
        }
        let (key, token) = lines.field(line.content)?;
        match (key.as_ref(), token) {
            ("params", None) if envelope.takes_params() && params.is_none() => {
                params = Some(lines.params()?);
            }
            ("id", Some(id)) => envelope.id(lines.value(id)?)?,
            // The one spelling of each string these may be (TOON writes "2.0" quoted, as it
            // would read a number bare, and has no escape that spells a plain character), so
            // it is compared as it is, not made a string first; any other value is the
            // decoder's to read, as an envelope this reader does not take.
            ("jsonrpc", Some(QUOTED_JSONRPC_VERSION)) => {
                lines.took_string(JSONRPC_VERSION.len());
                envelope.version(JSONRPC_VERSION)?;
            }
            ("method", Some(TOOLS_CALL | QUOTED_TOOLS_CALL)) => {
                lines.took_string(TOOLS_CALL.len());
                envelope.method(TOOLS_CALL)?;
            }
            _ => return None,
        }
    }
    envelope.finish(params?, lines.longest_string, limits)
}

/// One line: its depth (two spaces a level) and its content, trailing spaces and CR off.
#[derive(Clone, Copy)]
struct Line<'a> {
    depth: usize,
    content: &'a str,
}

/// The lines of the message, one looked at ahead.
struct Lines<'a> {
    rest: Option<&'a str>,
    peeked: Option<Line<'a>>,
    /// The length of the longest key or string value taken so far.
    longest_string: usize,
}

impl<'a> Lines<'a> {
    /// The next line; `Some(None)` at the end, `None` for a line the decoder reads another
    /// way than this reader would (blank, indented by a tab or an odd number of spaces).
    fn next(&mut self) -> Option<Option<Line<'a>>> {
        if let Some(line) = self.peeked.take() {
            return Some(Some(line));
        }
        let Some(rest) = self.rest else {
            return Some(None);
        };
        // The newline, a space and a CR are never inside a longer character of UTF-8, so
        // every cut is on a boundary.
        let bytes = rest.as_bytes();
        let indent = bytes.iter().take_while(|&&byte| byte == b' ').count();
        let end = indent + toon::find_line_end(&bytes[indent..]).unwrap_or(bytes.len() - indent);
        self.rest = rest.get(end + 1..);
        let mut content_end = end;
        while content_end > indent && matches!(bytes[content_end - 1], b' ' | b'\r') {
            content_end -= 1;
        }
        if content_end == indent || bytes[indent] == b'\t' || indent % 2 != 0 {
            return None;
        }
        Some(Some(Line {
            depth: indent / 2,
            content: rest.get(indent..content_end)?,
        }))
    }

    /// The next line when it is `depth` deep; `Some(None)` when the next line is shallower
    /// (or there is none), which ends the object the caller reads; `None` when it is deeper.
    fn next_at(&mut self, depth: usize) -> Option<Option<Line<'a>>> {
        let Some(line) = self.next()? else {
            return Some(None);
        };
        if line.depth < depth {
            self.peeked = Some(line);
            return Some(None);
        }
        (line.depth == depth).then_some(Some(line))
    }

    /// A line's key and its value's text (`None` for `key:`, which opens an object), which
    /// [`Lines::value`] reads. The key is quoted, or bare as the encoder writes bare keys:
    /// then the decoder takes it as it is, with no `[` (an array's header) or quote before
    /// its colon.
    fn field(&mut self, content: &'a str) -> Option<(Cow<'a, str>, Option<&'a str>)> {
        let bare = toon::bare_key_length(content);
        let (key, after_colon) = if bare > 0 {
            // The first byte past a bare key is the colon, or the key is not one the decoder
            // reads as it is (its colon comes after a byte no bare key holds).
            (
                Cow::Borrowed(&content[..bare]),
                content[bare..].strip_prefix(':')?,
            )
        } else {
            let (key, end) = toon::decode_quoted_key(content)?;
            (key, content[end..].strip_prefix(':')?)
        };
        self.longest_string = self.longest_string.max(key.len());
        let token = after_colon.trim_start_matches(' ');
        Some((key, (!token.is_empty()).then_some(token)))
    }

    /// A field's value read from its text as the decoder reads it.
    fn value(&mut self, token: &str) -> Option<Value> {
        let value = toon::decode_field_value(token)?;
        if let Value::String(text) = &value {
            self.took_string(text.len());
        }
        Some(value)
    }

    /// A string value of `length` bytes was taken.
    fn took_string(&mut self, length: usize) {
        self.longest_string = self.longest_string.max(length);
    }

    /// An object's fields at `depth`, each given to `field` with its value's text (`None` for
    /// one that opens an object, which `field` reads from the lines after it).
    fn object(
        &mut self,
        depth: usize,
        mut field: impl FnMut(&mut Self, Cow<'a, str>, Option<&'a str>) -> Option<()>,
    ) -> Option<()> {
        while let Some(line) = self.next_at(depth)? {
            let (key, token) = self.field(line.content)?;
            field(self, key, token)?;
        }
        Some(())
    }

    /// `tools/call`'s params, on the lines one level deep.
    fn params(&mut self) -> Option<Params> {
        let mut params = Params::default();
        self.object(1, |lines, key, token| match (key.as_ref(), token) {
            ("_meta", None) => {
                let mut meta = params.start_meta()?;
                lines.object(2, |lines, key, token| meta.set(&key, lines.value(token?)?))?;
                params.meta(meta)
            }
            // `run` has one spelling, bare or quoted (as `method`'s value).
            ("name", Some(name)) => {
                lines.took_string(RUN.len());
                params.name(matches!(name, RUN | QUOTED_RUN))
            }
            ("arguments", None) => {
                let mut arguments = params.start_arguments()?;
                lines.object(2, |lines, key, token| match (key.as_ref(), token) {
                    ("tool", Some(tool)) => arguments.tool(lines.value(tool)?),
                    ("args", Some(args)) => arguments.args(lines.value(args)?),
                    ("args", None) => arguments.args(lines.flat_object(3)?),
                    _ => None,
                })?;
                params.arguments(arguments)
            }
            _ => None,
        })?;
        Some(params)
    }

    /// An object whose fields (at `depth`, perhaps none) all have values.
    fn flat_object(&mut self, depth: usize) -> Option<Value> {
        let mut object = Map::new();
        self.object(depth, |lines, key, token| {
            let value = lines.value(token?)?;
            let key = key.into_owned();
            if object.contains_key(&key) {
                return None;
            }
            object.insert(key, value);
            Some(())
        })?;
        Some(Value::Object(object))
    }
}
