//! The `tools/call` line every client sends, read by hand: `jsonrpc`, `id`, `method` (which
//! is `tools/call`) and `params`, whose `_meta` holds the token (and perhaps the protocol
//! version and a progress token), whose `name` is `run`, and whose `arguments` are `run`'s
//! `tool` and `args`.
//!
//! Reading such a line through the strict parser ([`super::split_request`]) costs most of
//! what the server spends on a call's way in: `serde_json`'s deserializer walks the
//! envelope member by member through seeds and visitors for a dozen short strings. Here the
//! envelope is scanned byte by byte, its few strings are taken as they are when they hold no
//! escape, and only `args` (the domain tool's arguments, any JSON) goes to the strict parser.
//!
//! The reader takes no decision of its own: anything outside that shape — another member, a
//! key or a string with an escape, a repeated key, an `id` that is not a plain integer or
//! string, text that is not UTF-8, `args` that the strict parser refuses, a message past a
//! decode limit — gives `None`, and the caller reads the line with the strict parser, which
//! gives the same message or the error. What it gives is what [`super::split_request`]
//! gives for the same line (tests hold the two together on fixed and generated lines).

use ide_mcp_protocol::budget::{decode_budget, DECODE_BYTES_PER_INPUT_BYTE};
use ide_mcp_protocol::json::split::Split;
use ide_mcp_protocol::json::{self, TopLevel, MAX_DEPTH};
use ide_mcp_protocol::jsonrpc::ENVELOPE_MEMBERS;
use serde_json::{Map, Number, Value};

use crate::limits::DecodeLimits;
use crate::mcp::messages::RUN_MEMBERS;
use crate::mcp::meta::META_MEMBERS;
use crate::mcp::split_request::{SplitMessage, ToolsCallParams};

/// The slots of [`ENVELOPE_MEMBERS`] this reader fills.
const ID: usize = 0;
const JSONRPC: usize = 1;
const METHOD: usize = 2;
const PARAMS: usize = 3;
const _: () = assert!(
    matches!(ENVELOPE_MEMBERS[ID].as_bytes(), b"id")
        && matches!(ENVELOPE_MEMBERS[JSONRPC].as_bytes(), b"jsonrpc")
        && matches!(ENVELOPE_MEMBERS[METHOD].as_bytes(), b"method")
        && matches!(ENVELOPE_MEMBERS[PARAMS].as_bytes(), b"params")
        && matches!(RUN_MEMBERS[0].as_bytes(), b"args")
        && matches!(RUN_MEMBERS[1].as_bytes(), b"tool")
);

/// How deep `args` may nest here: the strict parser counts from the line's root, four levels
/// above `args`, so anything near its limit is left to it.
const MAX_ARGS_DEPTH: usize = MAX_DEPTH - 8;

/// The line read into the parts [`super::split_request::decode_line`] gives, when it has the
/// common shape and passes `limits`; `None` for anything else.
pub(crate) fn read(payload: &[u8], limits: &DecodeLimits) -> Option<SplitMessage> {
    // The decode limits on what the shape holds besides `args` (at most four members an
    // object, four levels) are passed or not for every line alike; a limit this low leaves
    // every line to the strict reader, which names it.
    if limits.max_object_keys < 4 || limits.max_depth < 4 {
        return None;
    }
    let text = std::str::from_utf8(payload).ok()?;
    let mut line = Cursor {
        text,
        bytes: payload,
        at: 0,
        longest_string: 0,
    };
    let mut named = [const { None }; ENVELOPE_MEMBERS.len()];
    let mut params = None;
    line.object(|line, key| {
        let slot = match key {
            "id" => ID,
            "jsonrpc" => JSONRPC,
            "method" => METHOD,
            // Only after `method`, as the strict reader takes `params` apart.
            "params" if named[METHOD].is_some() && params.is_none() => {
                params = Some(line.params(payload.len())?);
                return Some(());
            }
            _ => return None,
        };
        if named[slot].is_some() {
            return None;
        }
        let value = match slot {
            ID => line.id()?,
            METHOD => match line.string()? {
                "tools/call" => Value::String("tools/call".to_owned()),
                _ => return None,
            },
            _ => Value::String(line.string()?.to_owned()),
        };
        named[slot] = Some(value);
        Some(())
    })?;
    line.whitespace();
    if line.at != payload.len() {
        return None;
    }
    let params = params?;
    let rest = Map::new();
    // The limits on the rest: every key and string taken (`args` aside) within the longest
    // allowed, and `args` as deep as it sits.
    if line.longest_string > limits.max_string_bytes {
        return None;
    }
    if let Some(Split::Object(([Some(args), _], _))) = &params.arguments {
        limits.check_at(args, ARGS_DEPTH).ok()?;
    }
    // As the strict reader leaves it: the params' slot marks an object, taken apart.
    named[PARAMS] = Some(Value::Object(Map::new()));
    Some(SplitMessage {
        top_level: TopLevel::Object { named, rest },
        tools_call: Some(params),
    })
}

/// The bytes a plain string stops at: its closing quote, or what makes it not plain (a
/// backslash, a control character, which JSON does not allow in a string).
static ENDS_A_PLAIN_STRING: [bool; 256] = {
    let mut ends = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        ends[byte] = true;
        byte += 1;
    }
    ends[b'"' as usize] = true;
    ends[b'\\' as usize] = true;
    ends
};

/// How deep `args` sits: in `arguments`, in `params`, in the line's object.
const ARGS_DEPTH: usize = 4;

/// A position in the line.
struct Cursor<'a> {
    /// The line, which is UTF-8.
    text: &'a str,
    /// The same, as bytes.
    bytes: &'a [u8],
    at: usize,
    /// The length of the longest key or string taken so far.
    longest_string: usize,
}

impl<'a> Cursor<'a> {
    fn whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// The next byte after whitespace, taken.
    fn token(&mut self) -> Option<u8> {
        self.whitespace();
        let byte = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(byte)
    }

    /// An object: `member` reads the value of each key (the cursor after the colon).
    fn object(&mut self, mut member: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        if self.token()? != b'{' {
            return None;
        }
        self.whitespace();
        if self.bytes.get(self.at) == Some(&b'}') {
            self.at += 1;
            return Some(());
        }
        loop {
            let key = self.string()?;
            if self.token()? != b':' {
                return None;
            }
            self.whitespace();
            member(self, key)?;
            match self.token()? {
                b',' => {}
                b'}' => return Some(()),
                _ => return None,
            }
        }
    }

    /// A string without escapes or control characters, as it is in the line (a quote is
    /// never inside a longer character of UTF-8, so the slice is whole characters).
    fn string(&mut self) -> Option<&'a str> {
        if self.token()? != b'"' {
            return None;
        }
        let start = self.at;
        // The strings of this shape are short (a token is the longest): a byte at a time,
        // each looked up once, costs less than setting up a vector search.
        let end = start
            + self.bytes[start..]
                .iter()
                .position(|&byte| ENDS_A_PLAIN_STRING[usize::from(byte)])?;
        if self.bytes[end] != b'"' {
            return None;
        }
        self.at = end + 1;
        self.longest_string = self.longest_string.max(end - start);
        self.text.get(start..end)
    }

    /// A plain string, or an integer in the form the strict parser makes a `u64` of: digits
    /// without a leading zero, at most 19 of them.
    fn id(&mut self) -> Option<Value> {
        self.whitespace();
        match self.bytes.get(self.at)? {
            b'"' => Some(Value::String(self.string()?.to_owned())),
            b'0'..=b'9' => {
                let start = self.at;
                let length = self.bytes[start..]
                    .iter()
                    .position(|byte| !byte.is_ascii_digit())
                    .unwrap_or(self.bytes.len() - start);
                let digits = &self.bytes[start..start + length];
                if length > 19 || (length > 1 && digits[0] == b'0') {
                    return None;
                }
                if let Some(b'.' | b'e' | b'E') = self.bytes.get(start + length) {
                    return None;
                }
                self.at = start + length;
                let value = digits.iter().try_fold(0u64, |value, &digit| {
                    value.checked_mul(10)?.checked_add(u64::from(digit - b'0'))
                })?;
                Some(Value::Number(Number::from(value)))
            }
            _ => None,
        }
    }

    /// `tools/call`'s params: `_meta`, `name` and (after a `name` of `run`) `arguments`.
    fn params(&mut self, line_length: usize) -> Option<Box<ToolsCallParams>> {
        let (mut meta, mut name, mut arguments) = (None, None, None);
        self.object(|line, key| {
            match key {
                "_meta" if meta.is_none() => {
                    let mut members = [const { None }; META_MEMBERS.len()];
                    line.object(|line, key| {
                        let index = META_MEMBERS.iter().position(|name| *name == key)?;
                        if members[index].is_some() {
                            return None;
                        }
                        members[index] = Some(line.id()?);
                        Some(())
                    })?;
                    meta = Some(Split::Object((members, Map::new())));
                }
                "name" if name.is_none() => match line.string()? {
                    "run" => name = Some(Value::String("run".to_owned())),
                    _ => return None,
                },
                "arguments" if name.is_some() && arguments.is_none() => {
                    let (mut args, mut tool) = (None, None);
                    line.object(|line, key| {
                        match key {
                            "tool" if tool.is_none() => {
                                tool = Some(Value::String(line.string()?.to_owned()));
                            }
                            "args" if args.is_none() => args = Some(line.args(line_length)?),
                            _ => return None,
                        }
                        Some(())
                    })?;
                    arguments = Some(Split::Object(([args, tool], Map::new())));
                }
                _ => return None,
            }
            Some(())
        })?;
        Some(Box::new(ToolsCallParams {
            meta,
            name,
            arguments,
            rest: Map::new(),
        }))
    }

    /// `run`'s `args`: any JSON value, found to its end here and parsed by the strict parser
    /// within what the message's budget leaves it.
    fn args(&mut self, line_length: usize) -> Option<Value> {
        let start = self.at;
        self.skip_value()?;
        let text = &self.bytes[start..self.at];
        // Every other member of the line is at least six bytes and costs the strict parser
        // less than sixteen times its text, so this much is left for `args` in any case.
        let rest_of_line = line_length - text.len();
        let budget = decode_budget(line_length)
            .saturating_sub(rest_of_line.saturating_mul(DECODE_BYTES_PER_INPUT_BYTE));
        json::parse_strict_within(text, budget).ok()
    }

    /// Moves past one JSON value, following strings (and their escapes) and nesting, but not
    /// checking what is between: the strict parser reads the value afterwards.
    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            self.whitespace();
            match *self.bytes.get(self.at)? {
                b'"' => {
                    self.at += 1;
                    loop {
                        let offset = self.bytes[self.at..]
                            .iter()
                            .position(|&byte| byte == b'"' || byte == b'\\')?;
                        self.at += offset + 1;
                        if self.bytes[self.at - 1] == b'"' {
                            break;
                        }
                        // A backslash and the byte it escapes.
                        self.at += 1;
                    }
                }
                b'{' | b'[' => {
                    depth += 1;
                    if depth > MAX_ARGS_DEPTH {
                        return None;
                    }
                    self.at += 1;
                    continue;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    self.at += 1;
                }
                b',' | b':' if depth > 0 => {
                    self.at += 1;
                    continue;
                }
                _ => {
                    // A number or a literal: up to what ends it.
                    let length = self.bytes[self.at..].iter().position(|byte| {
                        matches!(
                            byte,
                            b',' | b':' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'
                        )
                    });
                    self.at += length.unwrap_or(self.bytes.len() - self.at);
                }
            }
            if depth == 0 {
                return Some(());
            }
        }
    }
}
