//! The `tools/call` message every client sends, read by hand: `jsonrpc`, `id`, `method`
//! (which is `tools/call`) and `params`, whose `_meta` holds the token (and perhaps the
//! protocol version and a progress token), whose `name` is `run`, and whose `arguments` are
//! `run`'s `tool` and `args`. [`json`] reads it from a JSON line, [`toon`] from a frame's
//! TOON, each straight into the request the servers answer ([`ParsedRequest`]), without a
//! map built for the envelope's objects, a key hashed, or the envelope classified as a
//! value: most of what a call cost on its way in.
//!
//! The readers take no decision of their own: anything outside that shape (another member, a
//! repeated key, an escape where they expect none, a message past a decode limit, text they
//! do not read exactly as the decoder would) gives `None`, and the caller reads the message
//! with the decoder, which gives the same request or the error. What a reader gives is what
//! the decoder's way gives for the same message, decoded and classified (tests hold them
//! together on fixed and generated messages, and on both sides of the decode budget).

pub(crate) mod json;
pub(crate) mod toon;

use ide_mcp_protocol::jsonrpc::{Id, JSONRPC_VERSION};
use serde_json::{Map, Value};

use crate::limits::DecodeLimits;
use crate::mcp::messages::{
    ClientRequest, MetaTool, ParsedRequest, RunMembers, ToolArguments, RUN_MEMBERS,
};
use crate::mcp::meta::{RequestMeta, META_MEMBERS};
use crate::wire::Wire;

const _: () = assert!(
    matches!(RUN_MEMBERS[0].as_bytes(), b"args") && matches!(RUN_MEMBERS[1].as_bytes(), b"tool")
);

/// The request of a `tools/call` of the common shape read from `payload` (a frame or a line,
/// as `wire` says), when it passes `limits`; `None` for any other message, which the caller
/// decodes and classifies as every message.
pub(crate) fn read(wire: Wire, payload: &[u8], limits: &DecodeLimits) -> Option<ParsedRequest> {
    match wire {
        Wire::Frames => toon::read(payload, limits),
        Wire::Lines => json::read(payload, limits),
    }
}

/// How deep `args` sits: in `arguments`, in `params`, in the message's object.
const ARGS_DEPTH: usize = 4;

/// Whether `limits` leave room for the shape besides `args` (at most four members an
/// object, four levels, and room to spare below the decoders' own nesting checks): a limit
/// this low leaves every message to the decoder, which names it.
fn limits_leave_room(limits: &DecodeLimits) -> bool {
    limits.max_object_keys >= 4 && limits.max_depth >= 2 * ARGS_DEPTH
}

/// The envelope's members read so far: `jsonrpc` (whether it was "2.0"), `id` and `method`.
#[derive(Default)]
struct Envelope {
    version: Option<bool>,
    id: Option<Value>,
    method: bool,
}

impl Envelope {
    /// `jsonrpc`, once.
    fn version(&mut self, version: &str) -> Option<()> {
        self.version
            .replace(version == JSONRPC_VERSION)
            .is_none()
            .then_some(())
    }

    /// `id`, once.
    fn id(&mut self, id: Value) -> Option<()> {
        self.id.replace(id).is_none().then_some(())
    }

    /// `method`, once, and `tools/call`.
    fn method(&mut self, method: &str) -> Option<()> {
        if self.method || method != "tools/call" {
            return None;
        }
        self.method = true;
        Some(())
    }

    /// Whether `params` may come now: after `method`, as the decoder's way takes `params`
    /// apart only then.
    fn takes_params(&self) -> bool {
        self.method
    }

    /// The request, when the envelope makes one (`jsonrpc` "2.0", an `id` that can be one;
    /// any other envelope is an error the decoder's way words) with `params` (which named
    /// `run`; without a `name` the decoder's way words the error too), and the message passes
    /// `limits`: every key and string the reader took (`args` aside) within the longest
    /// allowed (`longest_string`), and `args` as deep as it sits. Built here as the
    /// decoder's way builds it from the same members (`ToolsCallParams::into_request`),
    /// without the params' objects made first.
    fn finish(
        self,
        params: Params,
        longest_string: usize,
        limits: &DecodeLimits,
    ) -> Option<ParsedRequest> {
        if self.version != Some(true) || !self.method || !params.named_run {
            return None;
        }
        let id = Id::from_value(self.id.as_ref()?)?;
        if longest_string > limits.max_string_bytes {
            return None;
        }
        if let Some([Some(args), _]) = &params.arguments {
            limits.check_at(args, ARGS_DEPTH).ok()?;
        }
        let meta = RequestMeta::from_members(params.meta.unwrap_or_default());
        let arguments = match params.arguments {
            Some([args, tool]) => ToolArguments::Run(Box::new(RunMembers { args, tool })),
            None => ToolArguments::Object(Map::new()),
        };
        Some(ParsedRequest {
            id,
            meta,
            request: Ok(ClientRequest::ToolsCall {
                tool: MetaTool::Run,
                arguments,
            }),
        })
    }
}

/// `tools/call`'s params read so far: `_meta`, whether `name` (which is `run`) came, and,
/// after it, `arguments`.
#[derive(Default)]
struct Params {
    meta: Option<[Option<Value>; META_MEMBERS.len()]>,
    named_run: bool,
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

    /// `name`, once, and `run` (`is_run`: the caller read it as exactly that string).
    fn name(&mut self, is_run: bool) -> Option<()> {
        if self.named_run || !is_run {
            return None;
        }
        self.named_run = true;
        Some(())
    }

    /// Starts `arguments`, which may come once and after `name`.
    fn start_arguments(&self) -> Option<Arguments> {
        (self.named_run && self.arguments.is_none()).then(Arguments::default)
    }

    fn arguments(&mut self, arguments: Arguments) -> Option<()> {
        self.arguments = Some(arguments.0);
        Some(())
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
