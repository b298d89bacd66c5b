//! What a connection's outgoing queue carries: any message as a JSON value, or the reply to a
//! `tools/call` kept in its parts until the wire encodes it.
//!
//! A tool call's reply is the one message every call sends, and its shape never changes: an
//! envelope, one text block, `isError`, the era's `resultType`, the server's `_meta`. Built
//! as a value it costs a dozen allocations (ordered maps, a copy of `_meta`), and serialising
//! the value walks it again. Both wires write it from the parts instead: NDJSON as the bytes
//! `serde_json` writes for the value (`ToolReply::into_value`, in the tests), frames as the
//! text the TOON encoder writes for it; the tests hold each to byte equality with the value's
//! encoding.

use std::sync::LazyLock;

use bytes::{BufMut, BytesMut};
use ide_mcp_protocol::jsonrpc::Id;
use ide_mcp_protocol::toon::{self, EncodeOptions};
use serde_json::{json, Value};

use crate::mcp::results::result_meta;
use crate::mcp::{Era, ToolResult};
use crate::server_name::ServerName;

/// One message for a connection to send.
///
/// Kept small: the connection's outgoing queue allocates room for 32 of them when the
/// connection starts, idle or not. A tool call's reply, the message of nearly every call, is
/// held in place; any other message (a control reply, a notification, an error, none of them
/// on a tool call's way) is boxed, as a JSON value is larger than the reply's parts.
#[derive(Debug, PartialEq)]
pub(crate) enum Outgoing {
    /// Any message: a control reply, a notification, an error.
    Message(Box<Value>),
    /// The reply to a `tools/call`.
    ToolReply(ToolReply),
}

impl From<Value> for Outgoing {
    fn from(message: Value) -> Self {
        Outgoing::Message(Box::new(message))
    }
}

impl Outgoing {
    /// The id of the request this answers, if it answers one.
    pub(crate) fn id(&self) -> Option<Id> {
        match self {
            Outgoing::Message(message) => message.get("id").and_then(Id::from_value),
            Outgoing::ToolReply(reply) => Some(reply.id.clone()),
        }
    }

    /// The message as a JSON value.
    #[cfg(test)]
    pub(crate) fn into_value(self) -> Value {
        match self {
            Outgoing::Message(message) => *message,
            Outgoing::ToolReply(reply) => reply.into_value(),
        }
    }
}

/// The successful JSON-RPC response to a `tools/call`, in parts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolReply {
    /// The request's id.
    pub(crate) id: Id,
    /// The server that answers, named in `_meta`.
    pub(crate) server: ServerName,
    /// The request's era, which decides whether `resultType` is present.
    pub(crate) era: Era,
    /// The text block.
    pub(crate) text: String,
    /// `isError`. With `text`, the `ToolResult`, held as its two fields so that the reply's
    /// small fields share one word (an `Outgoing` is a slot of the connection's queue).
    pub(crate) is_error: bool,
}

impl ToolReply {
    /// The reply to `id` with `result`.
    pub(crate) fn new(id: Id, server: ServerName, era: Era, result: ToolResult) -> Self {
        ToolReply {
            id,
            server,
            era,
            text: result.text,
            is_error: result.is_error,
        }
    }
}

impl ToolReply {
    /// The response as a JSON value: what both wires' encodings of the reply must encode
    /// (the tests compare them with this value's encodings).
    #[cfg(test)]
    pub(crate) fn into_value(self) -> Value {
        let result = crate::mcp::ServerResult::Tool(ToolResult {
            text: self.text,
            is_error: self.is_error,
        })
        .into_value(self.server, self.era);
        ide_mcp_protocol::jsonrpc::Response::success(self.id, result).into_value()
    }

    /// Appends the response as compact JSON, exactly the bytes `serde_json` writes for
    /// [`ToolReply::into_value`] (members in the same order, strings escaped by `serde_json`
    /// itself), without a newline.
    pub(crate) fn write_json(&self, dst: &mut BytesMut) {
        let text = &self.text;
        // The fixed parts of the line are short; the text is most of it.
        dst.reserve(text.len() + 192);
        dst.put_slice(br#"{"jsonrpc":"2.0","id":"#);
        // A number id is written bare, as `Id`'s `Display` writes it, by `itoa`: through
        // `Display` the formatting machinery cost a reply a few hundred instructions.
        let mut digits = itoa::Buffer::new();
        match &self.id {
            Id::String(id) => write_json_string(dst, id),
            Id::Int(number) => dst.put_slice(digits.format(*number).as_bytes()),
            Id::UInt(number) => dst.put_slice(digits.format(*number).as_bytes()),
        }
        dst.put_slice(br#","result":{"content":[{"type":"text","text":"#);
        write_json_string(dst, text);
        dst.put_slice(if self.is_error {
            br#"}],"isError":true"#
        } else {
            br#"}],"isError":false"#
        });
        if self.era == Era::Modern {
            dst.put_slice(br#","resultType":"complete""#);
        }
        dst.put_slice(br#","_meta":"#);
        dst.put_slice(result_meta_json(self.server).as_bytes());
        dst.put_slice(b"}}");
    }
}

impl ToolReply {
    /// Appends the response as TOON, exactly the text [`toon::encode_into`] writes for
    /// [`ToolReply::into_value`] with the default options (the frame wire's).
    pub(crate) fn write_toon(&self, out: &mut String) {
        let options = EncodeOptions::default();
        let text = &self.text;
        out.reserve(text.len() + 256);
        out.push_str("jsonrpc: \"2.0\"\nid: ");
        let mut digits = itoa::Buffer::new();
        match &self.id {
            Id::String(id) => toon::encode_str_into(id, &options, out),
            Id::Int(number) => out.push_str(digits.format(*number)),
            Id::UInt(number) => out.push_str(digits.format(*number)),
        }
        // One text block is a table of one row.
        out.push_str("\nresult:\n  content[1]{type,text}:\n    text,");
        toon::encode_str_into(text, &options, out);
        out.push_str(if self.is_error {
            "\n  isError: true"
        } else {
            "\n  isError: false"
        });
        if self.era == Era::Modern {
            out.push_str("\n  resultType: complete");
        }
        out.push('\n');
        out.push_str(result_meta_toon(self.server));
    }
}

/// The `_meta` member of `server`'s results as the lines TOON writes for it inside `result`,
/// encoded once.
fn result_meta_toon(server: ServerName) -> &'static str {
    static TOON: LazyLock<[String; 4]> = LazyLock::new(|| {
        ServerName::ALL.map(|server| {
            let nested = json!({ "result": { "_meta": result_meta(server) } });
            let text = toon::encode(&nested, &EncodeOptions::default());
            text.strip_prefix("result:\n")
                .map(str::to_owned)
                .unwrap_or(text)
        })
    });
    &TOON[server as usize]
}

/// A string as JSON, escaped as `serde_json` escapes it.
fn write_json_string(dst: &mut BytesMut, text: &str) {
    // Writing a `&str` into memory cannot fail.
    let _ = serde_json::to_writer(dst.writer(), text);
}

/// The `_meta` of `server`'s results as compact JSON, serialised once.
fn result_meta_json(server: ServerName) -> &'static str {
    static JSON: LazyLock<[String; 4]> = LazyLock::new(|| {
        ServerName::ALL.map(|server| Value::Object(result_meta(server).clone()).to_string())
    });
    &JSON[server as usize]
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_message_is_no_larger_than_a_tool_reply() {
        // The queue's first block is 32 of these per connection.
        assert!(std::mem::size_of::<super::Outgoing>() <= std::mem::size_of::<super::ToolReply>());
    }

    use super::*;
    use proptest::prelude::*;

    fn serde_json_bytes(reply: &ToolReply) -> Vec<u8> {
        serde_json::to_vec(&reply.clone().into_value()).expect("a value serialises")
    }

    fn direct_bytes(reply: &ToolReply) -> Vec<u8> {
        let mut line = BytesMut::new();
        reply.write_json(&mut line);
        line.to_vec()
    }

    fn encoder_toon(reply: &ToolReply) -> String {
        toon::encode(&reply.clone().into_value(), &EncodeOptions::default())
    }

    fn direct_toon(reply: &ToolReply) -> String {
        let mut text = String::new();
        reply.write_toon(&mut text);
        text
    }

    fn id() -> impl Strategy<Value = Id> {
        prop_oneof![
            any::<i64>().prop_map(Id::Int),
            (i64::MAX as u64 + 1..=u64::MAX).prop_map(Id::UInt),
            any::<String>().prop_map(Id::String),
        ]
    }

    proptest! {
        #[test]
        fn the_direct_json_is_the_json_of_the_value(
            id in id(),
            server in 0..ServerName::ALL.len(),
            modern in any::<bool>(),
            text in any::<String>(),
            is_error in any::<bool>(),
        ) {
            let reply = ToolReply {
                id,
                server: ServerName::ALL[server],
                era: if modern { Era::Modern } else { Era::Legacy },
                text,
                is_error,
            };
            prop_assert_eq!(direct_bytes(&reply), serde_json_bytes(&reply));
            prop_assert_eq!(direct_toon(&reply), encoder_toon(&reply));
        }
    }

    #[test]
    fn escapes_and_every_server_and_era_match_the_value() {
        let texts = [
            "",
            "plain",
            "quote \" backslash \\ slash /",
            "controls \u{0} \u{1f} \n \r \t \u{7f}",
            "unicode é 漢字 🦀 \u{2028} \u{2029}",
            // What TOON must quote: delimiters, structure, words and numbers, edge spaces.
            "a,b",
            "a|b\tc",
            "- item",
            "key: value",
            "[1]: x",
            "{x}",
            "true",
            "null",
            "42",
            "-1.5e3",
            " lead",
            "trail ",
            "#",
        ];
        for server in ServerName::ALL {
            for era in [Era::Legacy, Era::Modern] {
                for text in texts {
                    let ids = [
                        Id::Int(-7),
                        Id::UInt(u64::MAX),
                        Id::String("a\"b".into()),
                        Id::String(String::new()),
                        Id::String("12".into()),
                        Id::String("a,b".into()),
                    ];
                    for id in ids {
                        let reply =
                            ToolReply::new(id, server, era, ToolResult::success(text.to_owned()));
                        assert_eq!(direct_bytes(&reply), serde_json_bytes(&reply), "{text:?}");
                        assert_eq!(direct_toon(&reply), encoder_toon(&reply), "{text:?}");
                    }
                }
            }
        }
    }
}
