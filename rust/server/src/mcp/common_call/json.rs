//! The JSON line: the envelope scanned byte by byte (a string's run eight bytes a word), its
//! few strings taken as they are when they hold no escape, and only `args` (the domain tool's
//! arguments, any JSON) given to the strict parser. Reading the line through the strict parser
//! ([`super::super::split_request`]) walks `serde_json`'s deserializer through seeds and
//! visitors for a dozen short strings, most of what the server spent on a call's way in.

use ide_mcp_protocol::budget::{
    decode_budget, DECODE_BASE_BYTES, DECODE_BYTES_PER_INPUT_BYTE, ENTRY_BYTES,
};
use ide_mcp_protocol::json::{self, MAX_DEPTH};
use serde_json::{Map, Number, Value};

use super::{Envelope, Params};
use crate::limits::DecodeLimits;
use crate::mcp::messages::ParsedRequest;

/// How deep `args` may nest here: the strict parser counts from the line's root, four levels
/// above `args`, so anything near its limit is left to it.
const MAX_ARGS_DEPTH: usize = MAX_DEPTH - 8;

/// The most members an `args` object read here may have (a larger one goes to the strict
/// parser): few enough that no decode budget can refuse the object (below).
const PLAIN_ARGS_MEMBERS: usize = 16;

// A plain `args` object is charged by the strict parser its strings and an entry a member,
// never more than the 1 MiB every budget has, so no budget refuses one that is read here.
const _: () = assert!(PLAIN_ARGS_MEMBERS * ENTRY_BYTES <= DECODE_BASE_BYTES);

/// The request of the line, when it has the common shape and passes `limits`; `None` for
/// anything else.
pub(crate) fn read(payload: &[u8], limits: &DecodeLimits) -> Option<ParsedRequest> {
    if !super::limits_leave_room(limits) {
        return None;
    }
    let text = std::str::from_utf8(payload).ok()?;
    let mut line = Cursor {
        text,
        bytes: text.as_bytes(),
        at: 0,
        longest_string: 0,
    };
    let mut envelope = Envelope::default();
    let mut params = None;
    line.object(|line, key| match key {
        "id" => {
            let id = line.plain_value()?;
            envelope.id(id)
        }
        "jsonrpc" => {
            let version = line.string()?;
            envelope.version(version)
        }
        "method" => {
            let method = line.string()?;
            envelope.method(method)
        }
        // Only after `method`, as the strict reader takes `params` apart.
        "params" if envelope.takes_params() && params.is_none() => {
            params = Some(line.params(payload.len())?);
            Some(())
        }
        _ => None,
    })?;
    line.whitespace();
    if line.at != payload.len() {
        return None;
    }
    envelope.finish(params?, line.longest_string, limits)
}

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
        let end = start + json::plain_run_length(&self.bytes[start..])?;
        if self.bytes[end] != b'"' {
            return None;
        }
        self.at = end + 1;
        self.longest_string = self.longest_string.max(end - start);
        self.text.get(start..end)
    }

    /// A plain string, or an integer in the form the strict parser makes a `u64` of: digits
    /// without a leading zero, at most 19 of them (an `id`, or a member of `_meta`).
    fn plain_value(&mut self) -> Option<Value> {
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
    fn params(&mut self, line_length: usize) -> Option<Params> {
        let mut params = Params::default();
        self.object(|line, key| match key {
            "_meta" => {
                let mut meta = params.start_meta()?;
                line.object(|line, key| {
                    let value = line.plain_value()?;
                    meta.set(key, value)
                })?;
                params.meta(meta)
            }
            "name" => {
                let name = line.string()?;
                params.name(name == "run")
            }
            "arguments" => {
                let mut arguments = params.start_arguments()?;
                line.object(|line, key| match key {
                    "tool" => {
                        let tool = Value::String(line.string()?.to_owned());
                        arguments.tool(tool)
                    }
                    "args" => {
                        let args = line.args(line_length)?;
                        arguments.args(args)
                    }
                    _ => None,
                })?;
                params.arguments(arguments)
            }
            _ => None,
        })?;
        Some(params)
    }

    /// `run`'s `args`: any JSON value. An object of plain members, as most tools' arguments
    /// are, is read here into the value the strict parser makes of it; anything else is found
    /// to its end here and parsed by the strict parser within what the message's budget
    /// leaves it.
    fn args(&mut self, line_length: usize) -> Option<Value> {
        let start = self.at;
        // `args` is held to the decode limits as a whole once the line is read; its strings
        // do not count among the envelope's.
        let longest_string = self.longest_string;
        let plain = self.plain_object();
        self.longest_string = longest_string;
        if plain.is_some() {
            return plain;
        }
        self.at = start;
        self.skip_value()?;
        let text = &self.bytes[start..self.at];
        // Every other member of the line is at least six bytes and costs the strict parser
        // less than sixteen times its text, so this much is left for `args` in any case.
        let rest_of_line = line_length - text.len();
        let budget = decode_budget(line_length)
            .saturating_sub(rest_of_line.saturating_mul(DECODE_BYTES_PER_INPUT_BYTE));
        json::parse_strict_within(text, budget).ok()
    }

    /// An object of at most [`PLAIN_ARGS_MEMBERS`] members, its keys strings without escapes
    /// and each of its values plain ([`Cursor::plain_member`]), every key once; `None` for
    /// anything else, the cursor then anywhere in it.
    fn plain_object(&mut self) -> Option<Value> {
        // Straight into the map, where the insert also finds a repeated key.
        let mut members = Map::new();
        self.object(|line, key| {
            if members.len() == PLAIN_ARGS_MEMBERS {
                return None;
            }
            let value = line.plain_member()?;
            // A repeated key: the strict parser words the error.
            members
                .insert(key.to_owned(), value)
                .is_none()
                .then_some(())
        })?;
        Some(Value::Object(members))
    }

    /// A plain value ([`Cursor::plain_value`]) or one of the literals `true`, `false` and
    /// `null`, whose end the object around it checks.
    fn plain_member(&mut self) -> Option<Value> {
        self.whitespace();
        let (word, value): (&[u8], _) = match self.bytes.get(self.at)? {
            b't' => (b"true", Value::Bool(true)),
            b'f' => (b"false", Value::Bool(false)),
            b'n' => (b"null", Value::Null),
            _ => return self.plain_value(),
        };
        if !self.bytes[self.at..].starts_with(word) {
            return None;
        }
        self.at += word.len();
        Some(value)
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
