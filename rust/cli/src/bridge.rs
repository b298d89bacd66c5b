//! `ide-mcp bridge <socket>`: MCP over stdio for clients that cannot open a Unix socket.
//! `ide-mcp bridge --project DIR SERVER` finds the socket in the per-user registry of live
//! server sets (the set whose project root holds DIR, the deepest root winning), and finds it
//! again when the set goes away and another serves the project: the requests owed by the lost
//! set are answered with an error, and the next request looks the project up again (waiting up
//! to [`RECONNECT_WAIT`] for a restarting IDE). `--token-file FILE` names the token file of a
//! socket that is not beside it (one forwarded over ssh).
//!
//! Standard input carries JSON-RPC messages, one per line. Each is parsed strictly, given the
//! current token in `params._meta`, encoded as TOON and sent as one frame on the socket. A
//! reader thread decodes the server's frames and writes each message as one compact JSON line
//! on standard output, which carries nothing else; diagnostics go to standard error.
//!
//! The token comes from the `token` file beside the socket (or `--token-file`). It is re-read
//! whenever that file changes, and after a `request rejected` reply: the requests in flight are
//! kept by id, so a request rejected because the token rotated under it is sent once more with
//! the new token instead of its rejection being passed on.
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
use ide_mcp_server::client::{attach_token, is_rejection, read_token_file, ClientError};
use ide_mcp_server::transport::{MessageReader, MessageStream, MessageWriter, TransportError};
use ide_mcp_server::wire::Wire;
use serde_json::{json, Value};

use crate::bridge_target::{BridgeTarget, Endpoint};

/// How long the bridge waits, after standard input ends, for replies still owed.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// The exit status when the server cannot be reached or goes away.
const SERVER_LOST: u8 = 2;

/// JSON-RPC "Parse error".
const PARSE_ERROR_CODE: i64 = ErrorCode::PARSE_ERROR.0;

/// JSON-RPC "Invalid Request", used here for a message too large for the socket wire.
const INVALID_REQUEST_CODE: i64 = ErrorCode::INVALID_REQUEST.0;

/// JSON-RPC "Internal error", for a request the server set went away without answering.
const INTERNAL_ERROR_CODE: i64 = ErrorCode::INTERNAL_ERROR.0;

/// How long a `--project` bridge that lost its set looks for one serving the project again.
const RECONNECT_WAIT: Duration = Duration::from_secs(10);

/// How often it looks meanwhile.
const RECONNECT_POLL: Duration = Duration::from_millis(200);

/// How many bytes one `read` of standard input asks for.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Arguments of `ide-mcp bridge`.
#[derive(Debug, Args)]
pub struct BridgeArgs {
    /// Find the server set whose project root holds DIR in the per-user registry of live
    /// server sets (`ide-mcp list`); TARGET is then the server: code, run, vcs or ops.
    #[arg(long, value_name = "DIR", conflicts_with = "token_file")]
    project: Option<PathBuf>,
    /// The token file, for a socket that is not beside it (a forwarded one).
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// The server's socket, e.g. <runtime dir>/code.sock, whose token is read from the `token`
    /// file beside it; or, with --project, the server's name.
    #[arg(value_name = "SOCKET|SERVER")]
    target: String,
}

/// Runs `ide-mcp bridge`.
pub fn run(args: BridgeArgs) -> ExitCode {
    let target = match BridgeTarget::from_args(args.project, args.token_file, args.target) {
        Ok(target) => target,
        Err(error) => {
            eprintln!("ide-mcp bridge: {error}");
            return ExitCode::from(SERVER_LOST);
        }
    };
    let endpoint = match target.resolve() {
        Ok(endpoint) => endpoint,
        Err(error) => {
            eprintln!("ide-mcp bridge: {error}");
            return ExitCode::from(SERVER_LOST);
        }
    };
    let stream = match MessageStream::connect(&endpoint.socket, Wire::Frames) {
        Ok(stream) => stream,
        Err(source) => {
            let error = ClientError::Connect {
                socket: endpoint.socket.clone(),
                source,
            };
            eprintln!("ide-mcp bridge: {error}");
            return ExitCode::from(SERVER_LOST);
        }
    };
    if let BridgeTarget::Project { directory, .. } = &target {
        eprintln!(
            "ide-mcp bridge: {} is served by {}",
            directory.display(),
            endpoint.socket.display()
        );
    }
    let bridge = Arc::new(Bridge {
        target,
        connection: Mutex::new(Connection {
            socket: endpoint.socket.clone(),
            writer: None,
            generation: 0,
        }),
        tokens: Mutex::new(TokenSource::new(endpoint.token_file.clone())),
        state: Mutex::new(BridgeState::default()),
        state_changed: Condvar::new(),
    });
    // Read the token now, so that a missing token file is reported at once.
    bridge.current_token();
    if let Err(error) = bridge.attach(&mut lock(&bridge.connection), stream, &endpoint) {
        eprintln!("ide-mcp bridge: {error}");
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
    /// The connection it was sent on.
    generation: u64,
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

/// The connection to the server now.
#[derive(Debug)]
struct Connection {
    /// The socket path, for messages.
    socket: PathBuf,
    /// The socket's write half; `None` once a `--project` bridge lost it. A whole frame is
    /// written under the lock, so frames from the stdin side and resends from the socket side
    /// never interleave.
    writer: Option<MessageWriter>,
    /// Counts the connections made, so that the reader of a lost one touches nothing of the
    /// next.
    generation: u64,
}

/// The bridge between standard input/output and one server socket.
#[derive(Debug)]
struct Bridge {
    /// What the bridge reaches, looked up again on reconnection.
    target: BridgeTarget,
    /// The connection now; locked before `tokens` or `state` when they are taken together.
    connection: Mutex<Connection>,
    /// The token file and the token last read from it.
    tokens: Mutex<TokenSource>,
    /// Requests in flight and how the two ends stand; never locked together with `tokens`.
    state: Mutex<BridgeState>,
    /// Signalled whenever a request leaves `state.in_flight` or the server goes away.
    state_changed: Condvar,
}

impl Bridge {
    /// Makes `stream` the connection and starts its reader thread.
    fn attach(
        self: &Arc<Self>,
        connection: &mut Connection,
        stream: MessageStream,
        endpoint: &Endpoint,
    ) -> Result<(), String> {
        let (read_half, write_half) = stream.split();
        connection.generation += 1;
        connection.socket = endpoint.socket.clone();
        connection.writer = Some(write_half);
        let generation = connection.generation;
        self.lock_state().server_gone = false;
        let reader_bridge = Arc::clone(self);
        thread::Builder::new()
            .name("bridge-socket-reader".to_owned())
            .spawn(move || reader_bridge.forward_replies(read_half, generation))
            .map(|_| ())
            .map_err(|error| format!("cannot start the socket reader: {error}"))
    }

    /// The connection's generation, reconnecting first when a `--project` bridge lost its set.
    /// The error says why no set could be reached.
    fn ensure_connected(self: &Arc<Self>) -> Result<u64, String> {
        let mut connection = lock(&self.connection);
        if connection.writer.is_some() || !self.target.reconnects() {
            return Ok(connection.generation);
        }
        let started = std::time::Instant::now();
        let failure = loop {
            let reached = self.target.resolve().and_then(|endpoint| {
                match MessageStream::connect(&endpoint.socket, Wire::Frames) {
                    Ok(stream) => Ok((stream, endpoint)),
                    Err(source) => Err(ClientError::Connect {
                        socket: endpoint.socket,
                        source,
                    }
                    .to_string()),
                }
            });
            match reached {
                Ok((stream, endpoint)) => {
                    lock(&self.tokens).switch_to(endpoint.token_file.clone());
                    self.attach(&mut connection, stream, &endpoint)?;
                    eprintln!(
                        "ide-mcp bridge: reconnected to {}",
                        endpoint.socket.display()
                    );
                    return Ok(connection.generation);
                }
                Err(error) if started.elapsed() >= RECONNECT_WAIT => break error,
                Err(_) => thread::sleep(RECONNECT_POLL),
            }
        };
        Err(failure)
    }

    /// Reads JSON-RPC lines from `input` and forwards each to the server, until `input` ends.
    /// Fails only when the server can no longer be written to.
    fn forward_requests(self: &Arc<Self>, mut input: impl Read) -> Result<(), String> {
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
    fn forward_line(self: &Arc<Self>, line: &[u8]) -> Result<(), String> {
        let message = match parse_strict(line) {
            Ok(message) => message,
            Err(error) => {
                write_stdout_line(&parse_error(&error.to_string()));
                return Ok(());
            }
        };
        let generation = match self.ensure_connected() {
            Ok(generation) => generation,
            Err(reason) => {
                eprintln!("ide-mcp bridge: {reason}");
                if let Some(id) = request_id(&message) {
                    write_stdout_line(&lost_reply(id, &reason));
                }
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
                    generation,
                },
            );
        }
        if let Some(cancelled) = cancelled_request_id(&message) {
            // The server sends no reply for a cancelled request, so none is waited for.
            self.lock_state().in_flight.remove(&id_key(cancelled));
            self.state_changed.notify_all();
        }
        self.send(message, token.as_deref(), generation)
    }

    /// Attaches `token` to `message` and writes it to the socket of connection `generation` as
    /// one TOON frame. A `--project` bridge whose set went away answers the request with an
    /// error and goes on; any other bridge fails.
    fn send(&self, mut message: Value, token: Option<&str>, generation: u64) -> Result<(), String> {
        if let Some(token) = token {
            attach_token(&mut message, token);
        }
        let mut connection = lock(&self.connection);
        let current = connection.generation == generation;
        let sent = match connection.writer.as_mut() {
            Some(writer) if current => writer.send(&message),
            _ => Err(TransportError::Io(io::ErrorKind::NotConnected.into())),
        };
        match sent {
            Ok(()) => Ok(()),
            Err(TransportError::Encode(error)) => {
                drop(connection);
                self.answer_unsendable(&message, &error.to_string());
                Ok(())
            }
            Err(error) => {
                let reason = format!(
                    "lost the connection to {} while sending: {error}",
                    connection.socket.display()
                );
                if !self.target.reconnects() {
                    return Err(reason);
                }
                if connection.generation == generation {
                    connection.writer = None;
                }
                drop(connection);
                if let Some(id) = request_id(&message) {
                    // Whoever takes it out of the table answers it, so it is answered once.
                    if self.lock_state().in_flight.remove(&id_key(id)).is_some() {
                        write_stdout_line(&lost_reply(id, &reason));
                        self.state_changed.notify_all();
                    }
                }
                Ok(())
            }
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
    fn forward_replies(&self, mut socket: MessageReader, generation: u64) {
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
        let socket_path = {
            let mut connection = lock(&self.connection);
            if connection.generation == generation {
                connection.writer = None;
            }
            connection.socket.clone()
        };
        let reason = failure.unwrap_or_else(|| "it closed the connection".to_owned());
        if self.target.reconnects() {
            self.answer_lost_requests(generation, &socket_path, &reason);
            return;
        }
        let input_closed = {
            let mut state = self.lock_state();
            state.server_gone = true;
            state.input_closed
        };
        self.state_changed.notify_all();
        if !input_closed {
            eprintln!(
                "ide-mcp bridge: lost the connection to {}: {reason}",
                socket_path.display()
            );
            // The main thread is blocked reading standard input and cannot be woken portably;
            // the bridge has nothing left to do, so it ends here.
            std::process::exit(i32::from(SERVER_LOST));
        }
    }

    /// A `--project` bridge lost connection `generation`: every request sent on it is answered
    /// with an error (the set went away; whether the request ran is unknown), and the next
    /// request looks the project up again.
    fn answer_lost_requests(&self, generation: u64, socket: &Path, reason: &str) {
        eprintln!(
            "ide-mcp bridge: lost the connection to {}: {reason}; the next request looks the              project up again",
            socket.display()
        );
        let lost: Vec<Value> = {
            let mut state = self.lock_state();
            let keys: Vec<String> = state
                .in_flight
                .iter()
                .filter(|(_, in_flight)| in_flight.generation == generation)
                .map(|(key, _)| key.clone())
                .collect();
            keys.iter()
                .filter_map(|key| state.in_flight.remove(key))
                .filter_map(|in_flight| in_flight.request.get("id").cloned())
                .collect()
        };
        let reason = format!("the IDE's server set went away before answering ({reason})");
        for id in lost {
            write_stdout_line(&lost_reply(&id, &reason));
        }
        self.state_changed.notify_all();
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
        let (request, generation) = {
            let mut state = self.lock_state();
            let Some(in_flight) = state.in_flight.get_mut(key) else {
                return false;
            };
            in_flight.resent = true;
            in_flight.sent_with = Some(new_token.clone());
            (in_flight.request.clone(), in_flight.generation)
        };
        match self.send(request, Some(&new_token), generation) {
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

    /// Reads the token from another file from now on (a `--project` bridge found a new set).
    fn switch_to(&mut self, path: PathBuf) {
        *self = TokenSource::new(path);
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

/// The error reply to request `id` when no server set could answer it.
fn lost_reply(id: &Value, reason: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": INTERNAL_ERROR_CODE, "message": reason },
    })
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
