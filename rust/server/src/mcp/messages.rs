//! What a client may send, parsed once from JSON-RPC into types. Adding an MCP method starts
//! here: a variant of [`ClientRequest`] (or [`ClientNotification`]), its parse in
//! [`ClientRequest::parse`], then a file under `methods/`.

use ide_mcp_protocol::json;
use ide_mcp_protocol::jsonrpc::{ErrorObject, Id, Notification, Request};
use serde_json::{Map, Value};

use crate::mcp::meta::RequestMeta;
use crate::mcp::versions::Era;

/// Longest client name kept from `initialize`, in characters.
const MAX_CLIENT_NAME_CHARS: usize = 128;

/// A request, with its `_meta` read and its method parsed.
#[derive(Debug)]
pub struct ParsedRequest {
    /// Echoed in the reply.
    pub id: Id,
    /// What `_meta` carried.
    pub meta: RequestMeta,
    /// The method and its parameters, or why they are invalid. Authentication comes first,
    /// so an invalid request of a client without the token still gets `request rejected`.
    pub request: Result<ClientRequest, ErrorObject>,
}

/// The requests the servers answer.
#[derive(Debug, PartialEq)]
pub enum ClientRequest {
    /// `initialize`: the legacy era's handshake.
    Initialize {
        /// The version the client asked for, if it named one as a string.
        protocol_version: Option<String>,
        /// `clientInfo.name`, cut to 128 characters (self-reported).
        client_name: Option<String>,
    },
    /// `ping`.
    Ping,
    /// `server/discover`: the modern era's handshake.
    Discover,
    /// `tools/list`.
    ToolsList,
    /// `tools/call` of one of the meta-tools.
    ToolsCall {
        /// Which meta-tool.
        tool: MetaTool,
        /// Its arguments (an empty object when none were given).
        arguments: ToolArguments,
    },
    /// Any other method.
    Unknown(String),
}

/// The arguments of a `tools/call`: an object, or the two members `run` reads, taken out of
/// the object as it was parsed (see `mcp::split_request`), so no map was built for them.
#[derive(Debug, PartialEq)]
pub enum ToolArguments {
    /// The arguments object.
    Object(Map<String, Value>),
    /// `run`'s `args` and `tool` members, as given; the object's other members are ignored,
    /// as [`RunArguments::parse`] ignores them. Boxed: two values are twice a map's size, and
    /// this travels inside every future of the call path, which an idle connection's task
    /// holds room for.
    Run(Box<RunMembers>),
}

/// The two members of `run`'s arguments that it reads.
#[derive(Debug, PartialEq)]
pub struct RunMembers {
    /// The `args` member.
    pub args: Option<Value>,
    /// The `tool` member.
    pub tool: Option<Value>,
}

impl Default for ToolArguments {
    fn default() -> Self {
        ToolArguments::Object(Map::new())
    }
}

impl ToolArguments {
    /// The arguments as an object (`run`'s two members in one, when they were taken apart).
    pub fn into_object(self) -> Map<String, Value> {
        match self {
            ToolArguments::Object(object) => object,
            ToolArguments::Run(members) => {
                let RunMembers { args, tool } = *members;
                let members = [("args", args), ("tool", tool)];
                members
                    .into_iter()
                    .filter_map(|(key, value)| Some((key.to_owned(), value?)))
                    .collect()
            }
        }
    }
}

/// The three meta-tools every server lists, or another name.
#[derive(Debug, PartialEq, Eq)]
pub enum MetaTool {
    /// `domains()`.
    Domains,
    /// `tools(domain)`.
    Tools,
    /// `run(tool, args)`.
    Run,
    /// A name that is none of the three.
    Other(String),
}

/// The notifications the servers act on.
#[derive(Debug, PartialEq)]
pub enum ClientNotification {
    /// `notifications/cancelled {requestId}`; `None` when `requestId` is missing or not an id.
    Cancelled {
        /// The call to cancel.
        request_id: Option<Id>,
    },
    /// `notifications/initialized`, and anything unknown: nothing to do.
    Ignored,
}

impl ParsedRequest {
    /// The request's era: modern when its `_meta` names a protocol version (as every modern
    /// request does) or it is `server/discover`; legacy otherwise.
    pub fn era(&self) -> Era {
        if self.meta.protocol_version.is_some()
            || matches!(self.request, Ok(ClientRequest::Discover))
        {
            Era::Modern
        } else {
            Era::Legacy
        }
    }
}

impl ClientRequest {
    /// Reads a request's `_meta` and parses its method. The parameters move (never copied).
    pub fn parse(request: Request) -> ParsedRequest {
        let Request {
            id,
            method,
            mut params,
        } = request;
        let meta = RequestMeta::take_from(params.as_mut());
        let request = match method.as_str() {
            "initialize" => Ok(initialize(params.as_ref())),
            "ping" => Ok(ClientRequest::Ping),
            "server/discover" => Ok(ClientRequest::Discover),
            "tools/list" => Ok(ClientRequest::ToolsList),
            "tools/call" => tools_call(params),
            _ => Ok(ClientRequest::Unknown(method)),
        };
        ParsedRequest { id, meta, request }
    }
}

fn initialize(params: Option<&Value>) -> ClientRequest {
    let protocol_version = params
        .and_then(|params| params.get("protocolVersion"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let client_name = params
        .and_then(|params| params.pointer("/clientInfo/name"))
        .and_then(Value::as_str)
        .map(|name| name.chars().take(MAX_CLIENT_NAME_CHARS).collect());
    ClientRequest::Initialize {
        protocol_version,
        client_name,
    }
}

fn tools_call(params: Option<Value>) -> Result<ClientRequest, ErrorObject> {
    let params = match params {
        Some(Value::Object(params)) => params,
        _ => Map::new(),
    };
    let [arguments, name] = json::take_members(params, ["arguments", "name"]);
    let Some(Value::String(name)) = name else {
        return Err(ErrorObject::invalid_params(
            "tools/call needs `name`, a string",
        ));
    };
    let arguments = match arguments {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(arguments)) => arguments,
        Some(_) => return Err(ErrorObject::invalid_params("`arguments` must be an object")),
    };
    Ok(ClientRequest::ToolsCall {
        tool: MetaTool::named(name),
        arguments: ToolArguments::Object(arguments),
    })
}

impl MetaTool {
    /// The meta-tool called `name`.
    pub(crate) fn named(name: String) -> MetaTool {
        match name.as_str() {
            "domains" => MetaTool::Domains,
            "tools" => MetaTool::Tools,
            "run" => MetaTool::Run,
            _ => MetaTool::Other(name),
        }
    }
}

impl ClientNotification {
    /// Reads a notification's `_meta` and parses its method.
    pub fn parse(notification: Notification) -> (RequestMeta, ClientNotification) {
        let Notification { method, mut params } = notification;
        let meta = RequestMeta::take_from(params.as_mut());
        let parsed = match method.as_str() {
            "notifications/cancelled" => ClientNotification::Cancelled {
                request_id: params
                    .as_ref()
                    .and_then(|params| params.get("requestId"))
                    .and_then(Id::from_value),
            },
            _ => ClientNotification::Ignored,
        };
        (meta, parsed)
    }
}

/// The members of `run`'s arguments that it reads, in the order [`RunArguments::parse`] takes
/// them.
pub const RUN_MEMBERS: [&str; 2] = ["args", "tool"];

/// The arguments of `run(tool, args)`.
#[derive(Debug, PartialEq)]
pub struct RunArguments {
    /// The domain tool to run.
    pub tool: String,
    /// Its arguments: an object (an empty one when none were given).
    pub args: Value,
}

impl RunArguments {
    /// Reads `{tool, args}`; the error is the text of the tool result that says what is wrong.
    pub fn parse(arguments: Map<String, Value>) -> Result<RunArguments, &'static str> {
        let [args, tool] = json::take_members(arguments, RUN_MEMBERS);
        Self::from_members(args, tool)
    }

    /// [`RunArguments::parse`] of arguments in either form.
    pub fn read(arguments: ToolArguments) -> Result<RunArguments, &'static str> {
        match arguments {
            ToolArguments::Object(object) => Self::parse(object),
            ToolArguments::Run(members) => Self::from_members(members.args, members.tool),
        }
    }

    /// Reads the `args` and `tool` members.
    fn from_members(
        args: Option<Value>,
        tool: Option<Value>,
    ) -> Result<RunArguments, &'static str> {
        let Some(Value::String(tool)) = tool else {
            return Err("run needs `tool`, a tool name from tools(domain), and `args`, an object");
        };
        let args = match args {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(args @ Value::Object(_)) => args,
            Some(_) => return Err("`args` must be an object"),
        };
        Ok(RunArguments { tool, args })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(method: &str, params: Value) -> ParsedRequest {
        ClientRequest::parse(Request {
            id: Id::Int(1),
            method: method.to_owned(),
            params: Some(params),
        })
    }

    #[test]
    fn tools_call_parses_the_meta_tool_and_moves_its_arguments() {
        let parsed = request(
            "tools/call",
            json!({"name": "run", "arguments": {"tool": "t"}, "_meta": {"progressToken": "p"}}),
        );
        assert_eq!(parsed.meta.progress_token, Some(json!("p")));
        let Ok(ClientRequest::ToolsCall { tool, arguments }) = parsed.request else {
            panic!("not a tools/call: {:?}", parsed.request);
        };
        assert_eq!(tool, MetaTool::Run);
        assert_eq!(Value::Object(arguments.into_object()), json!({"tool": "t"}));
    }

    #[test]
    fn tools_call_without_a_name_or_with_bad_arguments_is_invalid_params() {
        for params in [
            json!({}),
            json!({"name": 3}),
            json!({"name": "run", "arguments": 3}),
        ] {
            let error = request("tools/call", params).request.expect_err("invalid");
            assert_eq!(error.code.0, -32602);
        }
    }

    #[test]
    fn initialize_keeps_a_client_name_of_at_most_128_characters() {
        let parsed = request(
            "initialize",
            json!({"protocolVersion": "2025-03-26", "clientInfo": {"name": "n".repeat(500)}}),
        );
        let Ok(ClientRequest::Initialize {
            protocol_version,
            client_name,
        }) = parsed.request
        else {
            panic!("not initialize");
        };
        assert_eq!(protocol_version.as_deref(), Some("2025-03-26"));
        assert_eq!(client_name.map(|name| name.len()), Some(128));
    }

    #[test]
    fn an_unknown_method_keeps_its_name() {
        assert_eq!(
            request("resources/list", json!({})).request,
            Ok(ClientRequest::Unknown("resources/list".to_owned()))
        );
    }

    #[test]
    fn run_arguments_need_a_tool_and_an_object_of_args() {
        assert!(RunArguments::parse(Map::new()).is_err());
        let bad_args = json!({"tool": "t", "args": [1]});
        let Value::Object(bad_args) = bad_args else {
            unreachable!()
        };
        assert_eq!(
            RunArguments::parse(bad_args),
            Err("`args` must be an object")
        );
        let Value::Object(ok) = json!({"tool": "t"}) else {
            unreachable!()
        };
        assert_eq!(
            RunArguments::parse(ok),
            Ok(RunArguments {
                tool: "t".to_owned(),
                args: json!({})
            })
        );
    }

    #[test]
    fn cancelled_reads_its_request_id() {
        let (_, parsed) = ClientNotification::parse(Notification {
            method: "notifications/cancelled".to_owned(),
            params: Some(json!({"requestId": "a"})),
        });
        assert_eq!(
            parsed,
            ClientNotification::Cancelled {
                request_id: Some(Id::from("a"))
            }
        );
    }
}
