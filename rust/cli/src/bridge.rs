//! `ide-mcp bridge <socket>`: MCP over stdio for clients that cannot open a Unix socket.
//!
//! Standard input carries JSON-RPC messages, one per line. Each is parsed strictly, given the
//! current token in `params._meta`, encoded as TOON and sent as one frame on the socket. A
//! reader thread decodes the server's frames and writes each message as one compact JSON line
//! on standard output, which carries nothing else; diagnostics go to standard error.
//!
//! The token comes from the `token` file beside the socket. It is re-read whenever that file
//! changes, and after a `request rejected` reply: the requests in flight are kept by id, so a
//! request rejected because the token rotated under it is sent once more with the new token
//! instead of its rejection being passed on.
//!
//! End of standard input ends the bridge with status 0 once the replies still owed have arrived
//! (waiting at most [`DRAIN_TIMEOUT`]). A socket that cannot be reached or that closes while
//! standard input is still open ends it with status 2.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::Duration;

use bytes::BytesMut;
use clap::Args;
use ide_mcp_protocol::json::{self, parse_strict};
use ide_mcp_protocol::jsonrpc::ErrorCode;
use ide_mcp_protocol::ndjson::{LineDecoder, LineError, MAX_LINE_BYTES};
use ide_mcp_server::client::{
    attach_token, is_rejection, read_token_file, token_file_beside, ClientError,
};
use ide_mcp_server::transport::{MessageReader, MessageStream, MessageWriter, TransportError};
use ide_mcp_server::wire::Wire;
use serde_json::{json, Value};

/// How long the bridge waits, after standard input ends, for replies still owed.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// The exit status when the server cannot be reached or goes away.
const SERVER_LOST: u8 = 2;

/// JSON-RPC "Parse error".
const PARSE_ERROR_CODE: i64 = ErrorCode::PARSE_ERROR.0;

/// JSON-RPC "Invalid Request", used here for a message too large for the socket wire.
const INVALID_REQUEST_CODE: i64 = ErrorCode::INVALID_REQUEST.0;

/// How many bytes one `read` of standard input asks for.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Arguments of `ide-mcp bridge`.
#[derive(Debug, Args)]
pub struct BridgeArgs {
    /// The server's socket, e.g. <runtime dir>/code.sock; the token is read from the `token`
    /// file beside it.
    socket: PathBuf,
}

/// Runs `ide-mcp bridge`.
pub fn run(args: BridgeArgs) -> ExitCode {
    let socket = args.socket;
    let (read_half, write_half) = match MessageStream::connect(&socket, Wire::Frames) {
        Ok(stream) => stream.split(),
        Err(source) => {
            let error = ClientError::Connect {
                socket: socket.clone(),
                source,
            };
            eprintln!("ide-mcp bridge: {error}");
            return ExitCode::from(SERVER_LOST);
        }
    };
    let bridge = Arc::new(Bridge {
        socket: socket.clone(),
        writer: Mutex::new(write_half),
        tokens: Mutex::new(TokenSource::new(token_file_beside(&socket))),
        state: Mutex::new(BridgeState::default()),
        state_changed: Condvar::new(),
    });
    // Read the token now, so that a missing token file is reported at once.
    bridge.current_token();

    let reader_bridge = Arc::clone(&bridge);
    let spawned = thread::Builder::new()
        .name("bridge-socket-reader".to_owned())
        .spawn(move || reader_bridge.forward_replies(read_half));
    if let Err(error) = spawned {
        eprintln!("ide-mcp bridge: cannot start the socket reader: {error}");
        return ExitCode::FAILURE;
    }

    if let Err(error) = bridge.forward_requests(io::stdin().lock()) {
        eprintln!("ide-mcp bridge: {error}");
        return ExitCode::from(SERVER_LOST);
    }
    bridge.drain_after_input_ends();
    ExitCode::SUCCESS
}

/// A request sent to the server whose reply has not been passed on yet.
#[derive(Debug)]
struct InFlight {
    /// The request as read from standard input, before a token was attached; kept so it can
    /// be sent again with a new token.
    request: Value,
    /// The token it was last sent with.
    sent_with: Option<String>,
    /// Whether it has already been sent a second time; a request is resent at most once.
    resent: bool,
}

/// What the stdin side and the socket side share.
#[derive(Debug, Default)]
struct BridgeState {
    /// Requests awaiting replies, keyed by their id's compact JSON text.
    in_flight: HashMap<String, InFlight>,
    /// Standard input has ended; the bridge is only waiting for replies owed.
    input_closed: bool,
    /// The server's side of the socket has closed.
    server_gone: bool,
}

/// The bridge between standard input/output and one server socket.
#[derive(Debug)]
struct Bridge {
    /// The socket path, for messages.
    socket: PathBuf,
    /// The socket's write half; a whole frame is written under the lock, so frames from the
    /// stdin side and resends from the socket side never interleave.
    writer: Mutex<MessageWriter>,
    /// The token file and the token last read from it.
    tokens: Mutex<TokenSource>,
    /// Requests in flight and how the two ends stand; never locked together with `tokens`.
    state: Mutex<BridgeState>,
    /// Signalled whenever a request leaves `state.in_flight` or the server goes away.
    state_changed: Condvar,
}

impl Bridge {
    /// Reads JSON-RPC lines from `input` and forwards each to the server, until `input` ends.
    /// Fails only when the server can no longer be written to.
    fn forward_requests(&self, mut input: impl Read) -> Result<(), String> {
        let mut decoder = LineDecoder::new(MAX_LINE_BYTES);
        let mut buffer = BytesMut::new();
        let mut chunk = vec![0u8; READ_CHUNK_BYTES];
        // After an over-long line, bytes are dropped up to the next newline: the line cannot
        // be answered, but the lines after it can.
        let mut skipping_overlong_line = false;
        loop {
            if !skipping_overlong_line {
                match decoder.decode(&mut buffer) {
                    Ok(Some(line)) => {
                        self.forward_line(&line)?;
                        continue;
                    }
                    Ok(None) => {}
                    Err(LineError::TooLong { max }) => {
                        eprintln!("ide-mcp bridge: dropped an input line longer than {max} bytes");
                        write_stdout_line(&parse_error(&format!("line longer than {max} bytes")));
                        decoder = LineDecoder::new(MAX_LINE_BYTES);
                        match buffer.iter().position(|byte| *byte == b'\n') {
                            Some(newline) => {
                                let _ = buffer.split_to(newline + 1);
                                continue;
                            }
                            None => {
                                buffer.clear();
                                skipping_overlong_line = true;
                            }
                        }
                    }
                    Err(LineError::Truncated { .. }) => {}
                }
            }
            let count = match input.read(&mut chunk) {
                Ok(0) => break,
                Ok(count) => count,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    eprintln!("ide-mcp bridge: cannot read standard input: {error}");
                    break;
                }
            };
            let mut received = &chunk[..count];
            if skipping_overlong_line {
                match received.iter().position(|byte| *byte == b'\n') {
                    Some(newline) => {
                        received = &received[newline + 1..];
                        skipping_overlong_line = false;
                    }
                    None => continue,
                }
            }
            buffer.extend_from_slice(received);
        }
        // A last line without its newline is still a message.
        if !skipping_overlong_line {
            while let Ok(Some(line)) = decoder.decode(&mut buffer) {
                self.forward_line(&line)?;
            }
            if !buffer.iter().all(u8::is_ascii_whitespace) {
                let last_line = buffer.split().freeze();
                self.forward_line(&last_line)?;
            }
        }
        Ok(())
    }

    /// Parses one input line and sends it to the server; a line that is not JSON is answered
    /// on standard output with a parse error.
    fn forward_line(&self, line: &[u8]) -> Result<(), String> {
        let message = match parse_strict(line) {
            Ok(message) => message,
            Err(error) => {
                write_stdout_line(&parse_error(&error.to_string()));
                return Ok(());
            }
        };
        let token = self.current_token();
        if let Some(id) = request_id(&message) {
            self.lock_state().in_flight.insert(
                id_key(id),
                InFlight {
                    request: message.clone(),
                    sent_with: token.clone(),
                    resent: false,
                },
            );
        }
        if let Some(cancelled) = cancelled_request_id(&message) {
            // The server sends no reply for a cancelled request, so none is waited for.
            self.lock_state().in_flight.remove(&id_key(cancelled));
            self.state_changed.notify_all();
        }
        self.send(message, token.as_deref())
    }

    /// Attaches `token` to `message` and writes it to the socket as one TOON frame.
    fn send(&self, mut message: Value, token: Option<&str>) -> Result<(), String> {
        if let Some(token) = token {
            attach_token(&mut message, token);
        }
        let sent = lock(&self.writer).send(&message);
        match sent {
            Ok(()) => Ok(()),
            Err(TransportError::Encode(error)) => {
                self.answer_unsendable(&message, &error.to_string());
                Ok(())
            }
            Err(error) => Err(format!(
                "lost the connection to {} while sending: {error}",
                self.socket.display()
            )),
        }
    }

    /// Answers a message that cannot be framed (it is too large), if it expects an answer.
    fn answer_unsendable(&self, message: &Value, reason: &str) {
        eprintln!("ide-mcp bridge: cannot send a message: {reason}");
        let Some(id) = request_id(message) else {
            return;
        };
        let reply = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {
                "code": INVALID_REQUEST_CODE,
                "message": format!("the message is too large for the socket: {reason}"),
            },
        });
        write_stdout_line(&reply);
        self.lock_state().in_flight.remove(&id_key(id));
        self.state_changed.notify_all();
    }

    /// Reads the server's frames and passes each message on as a JSON line, until the socket
    /// closes. If standard input is still open then, the bridge exits with an error.
    fn forward_replies(&self, mut socket: MessageReader) {
        let failure = loop {
            match socket.receive() {
                Ok(Some(message)) => self.forward_reply(message),
                Ok(None) => break None,
                Err(TransportError::Decode { error, .. }) => eprintln!(
                    "ide-mcp bridge: dropped a message from the server that is not valid TOON: {error}"
                ),
                Err(TransportError::Io(error)) => break Some(format!("reading failed: {error}")),
                Err(error) => break Some(format!("the server's byte stream broke: {error}")),
            }
        };
        let input_closed = {
            let mut state = self.lock_state();
            state.server_gone = true;
            state.input_closed
        };
        self.state_changed.notify_all();
        if !input_closed {
            let reason = failure.unwrap_or_else(|| "it closed the connection".to_owned());
            eprintln!(
                "ide-mcp bridge: lost the connection to {}: {reason}",
                self.socket.display()
            );
            // The main thread is blocked reading standard input and cannot be woken portably;
            // the bridge has nothing left to do, so it ends here.
            std::process::exit(i32::from(SERVER_LOST));
        }
    }

    /// Passes one message from the server on, unless it is the rejection of a request that
    /// can be resent with a newer token.
    fn forward_reply(&self, message: Value) {
        let reply_id = reply_id(&message).map(id_key);
        if is_rejection(&message) {
            if let Some(key) = &reply_id {
                if self.resend_with_new_token(key) {
                    return;
                }
            }
        }
        write_stdout_line(&message);
        // Only after the line is out, so that a bridge draining at end of input cannot exit
        // between forgetting the request and writing its reply.
        if let Some(key) = reply_id {
            self.lock_state().in_flight.remove(&key);
            self.state_changed.notify_all();
        }
    }

    /// Re-reads the token after a rejection; if it changed since the request `key` was sent,
    /// sends the request again with it. Returns whether it did.
    fn resend_with_new_token(&self, key: &str) -> bool {
        let sent_with = match self.lock_state().in_flight.get(key) {
            Some(in_flight) if !in_flight.resent => in_flight.sent_with.clone(),
            _ => return false,
        };
        let Some(new_token) = lock(&self.tokens).reload() else {
            return false;
        };
        if Some(&new_token) == sent_with.as_ref() {
            return false;
        }
        let request = {
            let mut state = self.lock_state();
            let Some(in_flight) = state.in_flight.get_mut(key) else {
                return false;
            };
            in_flight.resent = true;
            in_flight.sent_with = Some(new_token.clone());
            in_flight.request.clone()
        };
        match self.send(request, Some(&new_token)) {
            Ok(()) => true,
            Err(error) => {
                // The reader sees the connection close next; the rejection is passed on.
                eprintln!("ide-mcp bridge: {error}");
                false
            }
        }
    }

    /// Waits, after standard input has ended, for the replies still owed.
    fn drain_after_input_ends(&self) {
        let mut state = self.lock_state();
        state.input_closed = true;
        let (state, _) = self
            .state_changed
            .wait_timeout_while(state, DRAIN_TIMEOUT, |state| {
                !state.in_flight.is_empty() && !state.server_gone
            })
            .unwrap_or_else(PoisonError::into_inner);
        if !state.in_flight.is_empty() {
            eprintln!(
                "ide-mcp bridge: standard input ended; {} request(s) left unanswered",
                state.in_flight.len()
            );
        }
    }

    /// The token to attach now, re-read if the token file has changed.
    fn current_token(&self) -> Option<String> {
        lock(&self.tokens).current()
    }

    fn lock_state(&self) -> MutexGuard<'_, BridgeState> {
        lock(&self.state)
    }
}

/// The token file and what was last read from it.
#[derive(Debug)]
struct TokenSource {
    path: PathBuf,
    token: Option<String>,
    /// Identifies the file version `token` came from; a rotation renames a new file over the
    /// old one, which changes it.
    stamp: Option<FileStamp>,
    /// Whether the last failure to read the file was reported, so one problem is told once.
    failure_reported: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    /// The inode on Unix, where a rename over the file changes it even within one tick of
    /// the clock; Windows has no stable equivalent in std, so the time and length stand.
    inode: Option<u64>,
    modified: Option<std::time::SystemTime>,
    len: u64,
}

impl TokenSource {
    fn new(path: PathBuf) -> TokenSource {
        TokenSource {
            path,
            token: None,
            stamp: None,
            failure_reported: false,
        }
    }

    /// The current token, re-reading the file only if it is not the one read last time.
    fn current(&mut self) -> Option<String> {
        let stamp = file_stamp(&self.path);
        if stamp.is_none() || stamp != self.stamp || self.token.is_none() {
            self.read(stamp);
        }
        self.token.clone()
    }

    /// The token as the file holds it now.
    fn reload(&mut self) -> Option<String> {
        self.read(file_stamp(&self.path));
        self.token.clone()
    }

    /// Reads the file; on failure the last token read stays in use.
    fn read(&mut self, stamp: Option<FileStamp>) {
        match read_token_file(&self.path) {
            Ok(token) => {
                self.token = Some(token);
                self.stamp = stamp;
                self.failure_reported = false;
            }
            Err(error) => {
                if !self.failure_reported {
                    eprintln!("ide-mcp bridge: {error}; the server will refuse requests until it can be read");
                    self.failure_reported = true;
                }
            }
        }
    }
}

fn file_stamp(path: &Path) -> Option<FileStamp> {
    let metadata = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let inode = Some(std::os::unix::fs::MetadataExt::ino(&metadata));
    #[cfg(not(unix))]
    let inode = None;
    Some(FileStamp {
        inode,
        modified: metadata.modified().ok(),
        len: metadata.len(),
    })
}

/// The id of a request: a message with a `method` and an `id`.
fn request_id(message: &Value) -> Option<&Value> {
    message.get("method")?;
    message.get("id")
}

/// The id of a reply: a message with an `id` and no `method`.
fn reply_id(message: &Value) -> Option<&Value> {
    if message.get("method").is_some() {
        return None;
    }
    message.get("id")
}

/// The request a `notifications/cancelled` message cancels.
fn cancelled_request_id(message: &Value) -> Option<&Value> {
    if message.get("method")?.as_str()? != "notifications/cancelled" || message.get("id").is_some()
    {
        return None;
    }
    message.get("params")?.get("requestId")
}

/// The key an id is filed under: its compact JSON text, so `1` and `"1"` stay distinct.
fn id_key(id: &Value) -> String {
    json::to_string(id)
}

fn parse_error(detail: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": PARSE_ERROR_CODE, "message": "Parse error", "data": detail },
    })
}

/// Writes one message as a compact JSON line on standard output and flushes it. If standard
/// output is gone, the client is gone, and so is the bridge's purpose.
fn write_stdout_line(message: &Value) {
    let mut line = json::to_vec(message);
    line.push(b'\n');
    let mut stdout = io::stdout().lock();
    if let Err(error) = stdout.write_all(&line).and_then(|()| stdout.flush()) {
        eprintln!("ide-mcp bridge: cannot write standard output: {error}");
        std::process::exit(1);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere does not make the protected data unusable here.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
