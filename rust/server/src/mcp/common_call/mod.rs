//! The `tools/call` message every client sends, read by hand: `jsonrpc`, `id`, `method`
//! (which is `tools/call`) and `params`, whose `_meta` holds the token (and perhaps the
//! protocol version and a progress token), whose `name` is `run`, and whose `arguments` are
//! `run`'s `tool` and `args`. [`json`] reads it from a JSON line, [`toon`] from a frame's
//! TOON, each into the parts the servers use ([`SplitMessage`]) without building a map for
//! the envelope's objects or hashing their keys: most of what a call cost on its way in.
//!
//! The readers take no decision of their own: anything outside that shape (another member, a
//! repeated key, an escape where they expect none, a message past a decode limit, text they
//! do not read exactly as the decoder would) gives `None`, and the caller reads the message
//! with the decoder, which gives the same message or the error. What a reader gives is what
//! the decoder's way gives for the same message (tests hold them together on fixed and
//! generated messages, and on both sides of the decode budget).

pub(crate) mod json;
pub(crate) mod toon;

use ide_mcp_protocol::json::split::Split;
use ide_mcp_protocol::json::TopLevel;
use ide_mcp_protocol::jsonrpc::ENVELOPE_MEMBERS;
use serde_json::{Map, Value};

use crate::limits::DecodeLimits;
use crate::mcp::messages::RUN_MEMBERS;
use crate::mcp::meta::META_MEMBERS;
use crate::mcp::split_request::{SplitMessage, ToolsCallParams};

/// The slots of [`ENVELOPE_MEMBERS`] the readers fill.
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

/// How deep `args` sits: in `arguments`, in `params`, in the message's object.
const ARGS_DEPTH: usize = 4;

/// Whether `limits` leave room for the shape besides `args` (at most four members an
/// object, four levels, and room to spare below the decoders' own nesting checks): a limit
/// this low leaves every message to the decoder, which names it.
fn limits_leave_room(limits: &DecodeLimits) -> bool {
    limits.max_object_keys >= 4 && limits.max_depth >= 2 * ARGS_DEPTH
}

/// The envelope's members read so far.
#[derive(Default)]
struct Envelope {
    named: [Option<Value>; ENVELOPE_MEMBERS.len()],
}

impl Envelope {
    /// Sets a member once; a second time, or a `method` other than `tools/call`, is not the
    /// common shape.
    fn set(&mut self, slot: usize, value: Value) -> Option<()> {
        if self.named[slot].is_some() || (slot == METHOD && value.as_str() != Some("tools/call")) {
            return None;
        }
        self.named[slot] = Some(value);
        Some(())
    }

    /// Whether `params` may come now: after `method`, as the decoder's way takes `params`
    /// apart only then.
    fn takes_params(&self) -> bool {
        self.named[METHOD].is_some()
    }

    /// The message, when it passes `limits`: every key and string the reader took (`args`
    /// aside) within the longest allowed (`longest_string`), and `args` as deep as it sits.
    fn finish(
        mut self,
        params: Box<ToolsCallParams>,
        longest_string: usize,
        limits: &DecodeLimits,
    ) -> Option<SplitMessage> {
        if longest_string > limits.max_string_bytes {
            return None;
        }
        if let Some(Split::Object(([Some(args), _], _))) = &params.arguments {
            limits.check_at(args, ARGS_DEPTH).ok()?;
        }
        // As the decoder's way leaves it: the params' slot marks an object, taken apart.
        self.named[PARAMS] = Some(Value::Object(Map::new()));
        Some(SplitMessage {
            top_level: TopLevel::Object {
                named: self.named,
                rest: Map::new(),
            },
            tools_call: Some(params),
        })
    }
}

/// `tools/call`'s params read so far: `_meta`, `name` (which is `run`) and, after it,
/// `arguments`.
#[derive(Default)]
struct Params {
    meta: Option<[Option<Value>; META_MEMBERS.len()]>,
    name: Option<Value>,
    arguments: Option<[Option<Value>; RUN_MEMBERS.len()]>,
}

impl Params {
    /// Starts `_meta`, which may come once.
    fn start_meta(&self) -> Option<Meta> {
        self.meta.is_none().then(Meta::default)
    }

    fn meta(&mut self, meta: Meta) -> Option<()> {
        self.meta = Some(meta.0);
        Some(())
    }

    /// `name`, once, and `run`.
    fn name(&mut self, name: Value) -> Option<()> {
        if self.name.is_some() || name.as_str() != Some("run") {
            return None;
        }
        self.name = Some(name);
        Some(())
    }

    /// Starts `arguments`, which may come once and after `name`.
    fn start_arguments(&self) -> Option<Arguments> {
        (self.name.is_some() && self.arguments.is_none()).then(Arguments::default)
    }

    fn arguments(&mut self, arguments: Arguments) -> Option<()> {
        self.arguments = Some(arguments.0);
        Some(())
    }

    fn finish(self) -> Box<ToolsCallParams> {
        Box::new(ToolsCallParams {
            meta: self
                .meta
                .map(|members| Split::Object((members, Map::new()))),
            name: self.name,
            arguments: self
                .arguments
                .map(|members| Split::Object((members, Map::new()))),
            rest: Map::new(),
        })
    }
}

/// `_meta`'s members read so far: only those the servers read, each once.
#[derive(Default)]
struct Meta([Option<Value>; META_MEMBERS.len()]);

impl Meta {
    fn set(&mut self, key: &str, value: Value) -> Option<()> {
        let slot = &mut self.0[META_MEMBERS.iter().position(|name| *name == key)?];
        if slot.is_some() {
            return None;
        }
        *slot = Some(value);
        Some(())
    }
}

/// `run`'s `args` and `tool` read so far, each once.
#[derive(Default)]
struct Arguments([Option<Value>; RUN_MEMBERS.len()]);

impl Arguments {
    fn args(&mut self, args: Value) -> Option<()> {
        Self::set(&mut self.0[0], args)
    }

    fn tool(&mut self, tool: Value) -> Option<()> {
        Self::set(&mut self.0[1], tool)
    }

    fn set(slot: &mut Option<Value>, value: Value) -> Option<()> {
        if slot.is_some() {
            return None;
        }
        *slot = Some(value);
        Some(())
    }
}
