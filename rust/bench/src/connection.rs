//! One benchmark connection: connect, shake hands, send echo calls with fresh ids, and read
//! replies, validating each one.

use std::fmt;
use std::io;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use bytes::Bytes;
use ide_mcp_server::transport::{MessageStream, TransportError};
use serde_json::Value;

use crate::endpoint::{CallShape, Endpoint, ECHO_VALUE};
use crate::wire::{decode_payload, ReplyTemplate, RequestTemplate, FIRST_CALL_ID};

/// How long a reply may take before the run fails.
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a benchmark run could not go on: the server misbehaved or the socket failed. A benchmark
/// of a server that answers wrongly has no meaningful numbers, so every such case stops it.
#[derive(Debug)]
pub struct BenchError(pub String);

impl fmt::Display for BenchError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl std::error::Error for BenchError {}

impl From<io::Error> for BenchError {
    fn from(error: io::Error) -> Self {
        BenchError(format!("socket I/O failed: {error}"))
    }
}

impl From<TransportError> for BenchError {
    fn from(error: TransportError) -> Self {
        match error {
            // A blocking read that hit the socket's read timeout.
            TransportError::Io(error) if error.kind() == io::ErrorKind::WouldBlock => {
                BenchError("socket I/O failed: no reply within the timeout".to_owned())
            }
            error => BenchError(format!("socket I/O failed: {error}")),
        }
    }
}

/// A validated reply to one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    /// The id it answers.
    pub id: u64,
    /// The server refused the call because a concurrency cap was reached (an error result
    /// starting with `busy`); it still answered the id.
    pub busy: bool,
}

/// A connected, initialised benchmark connection.
#[derive(Debug)]
pub struct BenchConnection {
    transport: MessageStream,
    shape: CallShape,
    request: RequestTemplate,
    /// The first validated echo reply; later replies that equal it outside the id digits are
    /// accepted without decoding them.
    reply_template: Option<ReplyTemplate>,
    next_id: u64,
}

impl BenchConnection {
    /// Connects to `endpoint` and, when it speaks MCP, completes `initialize` and sends
    /// `notifications/initialized`.
    pub fn open(endpoint: &Endpoint) -> Result<BenchConnection, BenchError> {
        let transport =
            MessageStream::connect(&endpoint.socket, endpoint.wire).map_err(|error| {
                BenchError(format!(
                    "cannot connect to {}: {error}",
                    endpoint.socket.display()
                ))
            })?;
        // A server that stops answering fails the run instead of hanging it.
        transport.set_read_timeout(Some(REPLY_TIMEOUT))?;
        let mut connection = BenchConnection {
            transport,
            shape: endpoint.shape,
            request: RequestTemplate::new(endpoint.wire, &endpoint.echo_request()),
            reply_template: None,
            next_id: FIRST_CALL_ID,
        };
        if endpoint.needs_handshake() {
            connection.handshake(endpoint)?;
        }
        Ok(connection)
    }

    fn handshake(&mut self, endpoint: &Endpoint) -> Result<(), BenchError> {
        self.transport.send(&endpoint.initialize_request())?;
        loop {
            let payload = self.next_payload()?;
            let message = decode_payload(self.transport.wire(), &payload)
                .map_err(|error| BenchError(format!("undecodable initialize reply: {error}")))?;
            if message.get("id").and_then(Value::as_u64) != Some(1) {
                continue;
            }
            if message.get("result").is_none() {
                return Err(BenchError(format!("initialize failed: {message}")));
            }
            break;
        }
        self.transport.send(&endpoint.initialized_notification())?;
        Ok(())
    }

    /// Spins while waiting for replies instead of sleeping (see
    /// [`MessageStream::set_busy_poll`]); only for one call outstanding at a time.
    pub fn set_busy_poll(&mut self, on: bool) -> Result<(), BenchError> {
        self.transport
            .set_busy_poll(on.then_some(REPLY_TIMEOUT))
            .map_err(BenchError::from)
    }

    /// The process at the other end of the socket.
    pub fn server_pid(&self) -> Result<rustix::process::Pid, BenchError> {
        let credentials = rustix::net::sockopt::socket_peercred(self.transport.socket())
            .map_err(|error| BenchError(format!("cannot read the server's process: {error}")))?;
        Ok(credentials.pid)
    }

    /// The encoded size of one echo request.
    pub fn request_bytes(&self) -> usize {
        self.request.len()
    }

    /// Sends the next echo call; returns its id.
    pub fn send_call(&mut self) -> Result<u64, BenchError> {
        let id = self.next_id;
        self.next_id += 1;
        self.transport.send_raw(self.request.with_id(id))?;
        Ok(id)
    }

    /// Reads until the next reply to a call, skipping notifications, and validates it.
    pub fn read_reply(&mut self) -> Result<Reply, BenchError> {
        loop {
            let payload = self.next_payload()?;
            if let Some(id) = self
                .reply_template
                .as_ref()
                .and_then(|template| template.id_of(&payload))
            {
                return Ok(Reply { id, busy: false });
            }
            if let Some(reply) = self.validate_in_full(&payload)? {
                return Ok(reply);
            }
        }
    }

    /// The payload size of the learned reply, once one was validated.
    pub fn reply_bytes(&self) -> Option<usize> {
        self.reply_template.as_ref().map(ReplyTemplate::len)
    }

    /// Gives up the reading side, keeping only the socket open (for idle-connection counts).
    pub fn into_idle_socket(self) -> UnixStream {
        self.transport.into_socket()
    }

    /// The next whole message; end of stream is an error, since a benchmark always expects
    /// another reply.
    fn next_payload(&mut self) -> Result<Bytes, BenchError> {
        self.transport.receive_payload()?.ok_or_else(|| {
            BenchError(
                "socket I/O failed: the server closed the connection while a reply was expected"
                    .to_owned(),
            )
        })
    }

    /// Decodes `payload` and checks it is a correct reply; `None` for a notification.
    fn validate_in_full(&mut self, payload: &Bytes) -> Result<Option<Reply>, BenchError> {
        let message = decode_payload(self.transport.wire(), payload)
            .map_err(|error| BenchError(format!("undecodable reply: {error}")))?;
        let Some(id_value) = message.get("id") else {
            return Ok(None);
        };
        let id = id_value
            .as_u64()
            .ok_or_else(|| BenchError(format!("a reply with an unexpected id: {message}")))?;
        let busy = match self.shape {
            CallShape::RawEcho => {
                if message.get("method").and_then(Value::as_str) != Some("tools/call") {
                    return Err(BenchError(format!(
                        "the echo socket sent back something else: {message}"
                    )));
                }
                false
            }
            CallShape::MetaRun | CallShape::DirectTool => check_echo_result(&message)?,
        };
        if !busy && self.reply_template.is_none() {
            self.reply_template = ReplyTemplate::learn(payload, id);
        }
        Ok(Some(Reply { id, busy }))
    }
}

/// Whether `message` is a successful echo (`false`) or a busy refusal (`true`); anything else
/// is an error.
fn check_echo_result(message: &Value) -> Result<bool, BenchError> {
    let result = message
        .get("result")
        .ok_or_else(|| BenchError(format!("the echo call failed: {message}")))?;
    let text = result
        .pointer("/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        if text.starts_with("busy") {
            return Ok(true);
        }
        return Err(BenchError(format!("the echo tool failed: {text}")));
    }
    if !text.contains(ECHO_VALUE) {
        return Err(BenchError(format!(
            "the echo reply does not contain the value: {text}"
        )));
    }
    Ok(false)
}
