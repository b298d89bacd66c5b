//! A small blocking client for the ide-mcp servers.
//!
//! It speaks either wire the servers accept on a Unix socket: length-prefixed TOON frames (the
//! default) or newline-delimited JSON. It attaches the token from the `token` file beside the
//! socket to every request and notification, numbers requests with increasing integers, and
//! correlates replies by id. It uses plain `std` sockets (through [`crate::transport`]) and no
//! async runtime, so the CLI, integration tests and benchmarks can all drive a server from
//! ordinary threads.

use crate::transport::BlockingStream;
use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ide_mcp_protocol::jsonrpc::ErrorCode;
pub use ide_mcp_protocol::jsonrpc::Id;
use serde_json::{json, Map, Value};

pub use crate::mcp::TOKEN_META_KEY;
pub use crate::runtime_dir::TOKEN_FILE_NAME;

/// The protocol version [`Client::initialize`] asks for.
pub const CLIENT_PROTOCOL_VERSION: &str = "2025-11-25";

/// The JSON-RPC error code of a request that failed authentication (or was otherwise invalid).
pub const INVALID_REQUEST_CODE: i64 = ErrorCode::INVALID_REQUEST.0;

/// The exact message of the error a server sends for a request it refuses; it never says why,
/// so a client's only sensible reaction is to re-read the token and try once more.
pub use crate::mcp::REQUEST_REJECTED as REQUEST_REJECTED_MESSAGE;

use crate::transport::{MessageStream, TransportError};
/// Which of the two wires a [`Client`] speaks (the servers' own [`Wire`]).
pub use crate::wire::Wire;

/// What went wrong talking to a server. Each variant says what failed and on what, so a person
/// reading the message knows what to try next.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The socket could not be connected to.
    #[error(
        "cannot connect to {}: {source} (is the IDE running with the project open, and is this the socket it announced as `IDE MCP servers listening under <dir>`?)",
        socket.display()
    )]
    Connect {
        /// The socket path that was tried.
        socket: PathBuf,
        /// Why the connection failed.
        #[source]
        source: io::Error,
    },
    /// The token file could not be read.
    #[error("cannot read the token file {}: {source}", path.display())]
    TokenFile {
        /// The token file that was tried.
        path: PathBuf,
        /// Why reading it failed.
        #[source]
        source: io::Error,
    },
    /// The client has no token file to re-read (it was built from a bare stream).
    #[error("this client has no token file to read")]
    NoTokenFile,
    /// Reading from or writing to the socket failed (including a read timeout).
    #[error("socket I/O failed: {0}")]
    Io(#[from] io::Error),
    /// The server's byte stream broke (a bad frame header, an oversize frame or line, or the
    /// connection ending inside a message); the connection cannot be used any more.
    #[error("the server's byte stream is broken: {0}")]
    Stream(String),
    /// A whole message arrived but its payload did not decode.
    #[error("cannot decode a message from the server: {0}")]
    Decode(String),
    /// An outgoing message could not be encoded.
    #[error("cannot encode a message: {0}")]
    Encode(String),
    /// The server closed the connection while a reply was still expected.
    #[error("the server closed the connection before replying")]
    Closed,
    /// The server answered with a JSON-RPC error.
    #[error("the server answered with error {code}: {message}")]
    Rpc {
        /// The JSON-RPC error code.
        code: i64,
        /// The error message.
        message: String,
        /// The optional `data` member of the error.
        data: Option<Value>,
    },
    /// The server's reply does not have the shape the protocol promises.
    #[error("unexpected reply from the server: {0}")]
    Protocol(String),
}

impl From<TransportError> for ClientError {
    fn from(error: TransportError) -> Self {
        match error {
            TransportError::Io(error) => ClientError::Io(error),
            TransportError::Stream(error) => ClientError::Stream(error.to_string()),
            error @ TransportError::Decode { .. } => ClientError::Decode(error.to_string()),
            TransportError::Encode(error) => ClientError::Encode(error.to_string()),
        }
    }
}

/// The outcome of a `tools/call`: the text of `result.content[0]` and whether the server marked
/// it as an error result (a reason a model can act on, not a protocol failure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutcome {
    /// `result.isError`, false when absent.
    pub is_error: bool,
    /// `result.content[0].text`.
    pub text: String,
}

/// A blocking connection to one ide-mcp server socket.
pub struct Client {
    /// The connected socket, speaking its wire.
    transport: MessageStream,
    /// Where the socket lives, for error messages.
    socket: Option<PathBuf>,
    /// The token file re-read by [`Client::reload_token`]; none for a client built on a bare stream.
    token_file: Option<PathBuf>,
    /// The token attached to outgoing messages; none sends messages without one.
    token: Option<String>,
    /// The id the next request gets.
    next_id: i64,
    /// Messages read while [`Client::request`] waited for a different reply; handed out first by
    /// [`Client::read_message`] and drained of notifications by [`Client::take_notifications`].
    unclaimed: VecDeque<Value>,
}

impl fmt::Debug for Client {
    // Written by hand so that the token never reaches a log through `{:?}`.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Client")
            .field("socket", &self.socket)
            .field("transport", &self.transport)
            .field("token_file", &self.token_file)
            .field("has_token", &self.token.is_some())
            .field("next_id", &self.next_id)
            .field("unclaimed", &self.unclaimed.len())
            .finish()
    }
}

impl Client {
    /// Connects to `socket` over the framed TOON wire, with the token from the `token` file
    /// beside the socket.
    pub fn connect(socket: &Path) -> Result<Client, ClientError> {
        Client::connect_with(socket, Wire::Frames)
    }

    /// Connects to `socket` over `wire`, with the token from the `token` file beside the socket.
    pub fn connect_with(socket: &Path, wire: Wire) -> Result<Client, ClientError> {
        let transport =
            MessageStream::connect(socket, wire).map_err(|source| ClientError::Connect {
                socket: socket.to_path_buf(),
                source,
            })?;
        let token_file = token_file_beside(socket);
        let token = read_token_file(&token_file)?;
        let mut client = Client::from_transport(transport);
        client.socket = Some(socket.to_path_buf());
        client.token_file = Some(token_file);
        client.token = Some(token);
        Ok(client)
    }

    /// Wraps an already connected stream. The client has no token and no token file until
    /// [`Client::set_token`] or [`Client::set_token_file`] gives it one.
    pub fn from_stream(stream: BlockingStream, wire: Wire) -> Client {
        Client::from_transport(MessageStream::new(stream, wire))
    }

    fn from_transport(transport: MessageStream) -> Client {
        Client {
            transport,
            socket: None,
            token_file: None,
            token: None,
            next_id: 1,
            unclaimed: VecDeque::new(),
        }
    }

    /// The wire this client speaks.
    pub fn wire(&self) -> Wire {
        self.transport.wire()
    }

    /// Sets the token file that [`Client::reload_token`] reads (and reads it now).
    pub fn set_token_file(&mut self, path: &Path) -> Result<(), ClientError> {
        self.token_file = Some(path.to_path_buf());
        self.reload_token()
    }

    /// Re-reads the token file, so a rotated token is picked up.
    pub fn reload_token(&mut self) -> Result<(), ClientError> {
        let path = self.token_file.as_deref().ok_or(ClientError::NoTokenFile)?;
        self.token = Some(read_token_file(path)?);
        Ok(())
    }

    /// Replaces the token attached to outgoing messages; `None` sends them without one.
    pub fn set_token(&mut self, token: Option<String>) {
        self.token = token;
    }

    /// Sets how long a read may block before it fails with a timeout; `None` blocks forever.
    /// A message cut short by the timeout stays buffered, so reading again resumes it.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> Result<(), ClientError> {
        self.transport.set_read_timeout(timeout)?;
        Ok(())
    }

    /// Sends a request with the next id and the token in `params._meta`; returns the id used.
    /// `params` of `null` becomes an object holding only `_meta`.
    pub fn send_request(&mut self, method: &str, params: Value) -> Result<Id, ClientError> {
        let id = Id::Int(self.next_id);
        self.next_id += 1;
        let mut message = json!({ "jsonrpc": "2.0", "id": id.clone(), "method": method });
        set_params(&mut message, params);
        self.attach_current_token(&mut message);
        self.send_value(&message)?;
        Ok(id)
    }

    /// Sends a notification with the token in `params._meta`.
    pub fn send_notification(&mut self, method: &str, params: Value) -> Result<(), ClientError> {
        let mut message = json!({ "jsonrpc": "2.0", "method": method });
        set_params(&mut message, params);
        self.attach_current_token(&mut message);
        self.send_value(&message)
    }

    /// Sends `message` exactly as given, with nothing attached.
    pub fn send_value(&mut self, message: &Value) -> Result<(), ClientError> {
        Ok(self.transport.send(message)?)
    }

    /// Writes `bytes` to the socket as they are (for tests of malformed input).
    pub fn send_raw_bytes(&mut self, bytes: &[u8]) -> Result<(), ClientError> {
        self.transport.send_raw(bytes)?;
        Ok(())
    }

    /// Closes the sending half, so the server sees end of input while replies can still be read.
    pub fn shutdown_write(&self) -> Result<(), ClientError> {
        self.transport.shutdown_write()?;
        Ok(())
    }

    /// Returns the next message: one set aside by [`Client::request`] if any, else the next one
    /// from the socket. `None` means the server closed the connection cleanly between messages.
    pub fn read_message(&mut self) -> Result<Option<Value>, ClientError> {
        if let Some(message) = self.unclaimed.pop_front() {
            return Ok(Some(message));
        }
        self.read_from_socket()
    }

    /// Sends a request and reads until its reply arrives; returns the whole reply object
    /// (`result` or `error`). Other messages that arrive meanwhile are set aside: notifications
    /// for [`Client::take_notifications`], everything for [`Client::read_message`].
    ///
    /// A `request rejected` reply makes the client re-read its token file once; if the token
    /// there has changed (it rotated), the request is sent once more with the new token.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, ClientError> {
        let token_before = self.token.clone();
        let reply = self.request_once(method, params.clone())?;
        if !is_rejection(&reply) || self.token_file.is_none() {
            return Ok(reply);
        }
        // Without a readable token file there is nothing newer to try; the rejection stands.
        if self.reload_token().is_err() || self.token == token_before {
            return Ok(reply);
        }
        self.request_once(method, params)
    }

    /// Drains the notifications set aside while [`Client::request`] waited for its reply, oldest
    /// first. Other set-aside messages stay for [`Client::read_message`].
    pub fn take_notifications(&mut self) -> Vec<Value> {
        let (notifications, others): (VecDeque<Value>, VecDeque<Value>) =
            self.unclaimed.drain(..).partition(is_notification);
        self.unclaimed = others;
        notifications.into()
    }

    /// Performs the MCP handshake: `initialize` (protocol version
    /// [`CLIENT_PROTOCOL_VERSION`]), then `notifications/initialized`. Returns the `initialize`
    /// result.
    pub fn initialize(&mut self) -> Result<Value, ClientError> {
        let params = json!({
            "protocolVersion": CLIENT_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": { "name": "ide-mcp", "version": env!("CARGO_PKG_VERSION") },
        });
        let reply = self.request("initialize", params)?;
        let result = into_result(reply)?;
        self.send_notification("notifications/initialized", json!({}))?;
        Ok(result)
    }

    /// Calls one of the server's tools with `tools/call`. A JSON-RPC error becomes
    /// [`ClientError::Rpc`]; an error *result* is an `Ok` outcome with `is_error` set.
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Result<ToolOutcome, ClientError> {
        let reply = self.request(
            "tools/call",
            json!({ "name": name, "arguments": arguments }),
        )?;
        let result = into_result(reply)?;
        let is_error = match result.get("isError") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(flag)) => *flag,
            Some(other) => {
                return Err(ClientError::Protocol(format!(
                    "tools/call result has a non-boolean isError: {other}"
                )))
            }
        };
        let text = result
            .pointer("/content/0/text")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                ClientError::Protocol(format!(
                    "tools/call result has no content[0].text: {result}"
                ))
            })?;
        Ok(ToolOutcome {
            is_error,
            text: text.to_owned(),
        })
    }

    /// Lists the server's live domains (the `domains` meta-tool).
    pub fn domains(&mut self) -> Result<ToolOutcome, ClientError> {
        self.call_tool("domains", json!({}))
    }

    /// Lists one domain's tools (the `tools` meta-tool).
    pub fn tools(&mut self, domain: &str) -> Result<ToolOutcome, ClientError> {
        self.call_tool("tools", json!({ "domain": domain }))
    }

    /// Runs one tool with its arguments (the `run` meta-tool).
    pub fn run(&mut self, tool: &str, args: Value) -> Result<ToolOutcome, ClientError> {
        self.call_tool("run", json!({ "tool": tool, "args": args }))
    }

    /// Sends one request and waits for the reply with its id.
    fn request_once(&mut self, method: &str, params: Value) -> Result<Value, ClientError> {
        let id = self.send_request(method, params)?;
        loop {
            let message = self.read_from_socket()?.ok_or(ClientError::Closed)?;
            if is_reply_to(&message, &id) {
                return Ok(message);
            }
            self.unclaimed.push_back(message);
        }
    }

    fn attach_current_token(&self, message: &mut Value) {
        if let Some(token) = &self.token {
            attach_token(message, token);
        }
    }

    /// Reads from the socket until one whole message is buffered, and decodes it.
    fn read_from_socket(&mut self) -> Result<Option<Value>, ClientError> {
        Ok(self.transport.receive()?)
    }
}

/// The path of the token file that belongs to `socket`: `token` in the same directory.
pub fn token_file_beside(socket: &Path) -> PathBuf {
    socket.with_file_name(TOKEN_FILE_NAME)
}

/// Reads a token file; surrounding whitespace (a trailing newline) is not part of the token.
pub fn read_token_file(path: &Path) -> Result<String, ClientError> {
    let contents = std::fs::read_to_string(path).map_err(|source| ClientError::TokenFile {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(contents.trim().to_owned())
}

/// Puts `token` into `message.params._meta` under [`TOKEN_META_KEY`], creating `params` and
/// `_meta` as objects when they are absent or `null`.
///
/// Only requests and notifications (objects with a `method`) get a token; a reply, a batch or a
/// message whose `params` is an array is left as it is, and the server judges it as sent.
pub fn attach_token(message: &mut Value, token: &str) {
    let Some(object) = message.as_object_mut() else {
        return;
    };
    if !object.contains_key("method") {
        return;
    }
    let params = object
        .entry("params")
        .or_insert_with(|| Value::Object(Map::new()));
    if params.is_null() {
        *params = Value::Object(Map::new());
    }
    let Some(params) = params.as_object_mut() else {
        return;
    };
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if meta.is_null() {
        *meta = Value::Object(Map::new());
    }
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(TOKEN_META_KEY.to_owned(), Value::String(token.to_owned()));
    }
}

/// Whether `reply` is the server's refusal of a request: error −32600 `request rejected`.
pub fn is_rejection(reply: &Value) -> bool {
    let Some(error) = reply.get("error") else {
        return false;
    };
    error.get("code").and_then(Value::as_i64) == Some(INVALID_REQUEST_CODE)
        && error.get("message").and_then(Value::as_str) == Some(REQUEST_REJECTED_MESSAGE)
}

/// Whether `message` is a notification: it has a `method` and no `id`.
pub fn is_notification(message: &Value) -> bool {
    message.get("method").is_some() && message.get("id").is_none()
}

/// Whether `message` is a reply (it has `result` or `error`, and no `method`) carrying `id`.
fn is_reply_to(message: &Value, id: &Id) -> bool {
    message.get("method").is_none()
        && (message.get("result").is_some() || message.get("error").is_some())
        && message.get("id").and_then(Id::from_value).as_ref() == Some(id)
}

/// Stores `params` in `message`, leaving it out when it is `null` (attaching a token creates it).
fn set_params(message: &mut Value, params: Value) {
    if params.is_null() {
        return;
    }
    if let Some(object) = message.as_object_mut() {
        object.insert("params".to_owned(), params);
    }
}

/// The `result` of a reply, or its `error` as [`ClientError::Rpc`].
fn into_result(reply: Value) -> Result<Value, ClientError> {
    let Value::Object(mut reply) = reply else {
        return Err(ClientError::Protocol(format!(
            "a reply is not an object: {reply}"
        )));
    };
    if let Some(error) = reply.remove("error") {
        return Err(rpc_error(error));
    }
    reply
        .remove("result")
        .ok_or_else(|| ClientError::Protocol("a reply has neither result nor error".to_owned()))
}

fn rpc_error(error: Value) -> ClientError {
    let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("(no message)")
        .to_owned();
    let data = error.get("data").cloned();
    ClientError::Rpc {
        code,
        message,
        data,
    }
}

#[cfg(test)]
mod tests;
