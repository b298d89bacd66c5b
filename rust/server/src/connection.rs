//! One client connection: read messages, answer control traffic at once, admit tool calls
//! into the in-flight table, and write every reply through one writer task.

use std::sync::Arc;

use bytes::BytesMut;
use ide_mcp_protocol::jsonrpc::{
    ErrorObject, Id, IncomingMessage, Notification, Request, Response,
};
use serde_json::{Map, Value};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::unix::OwnedWriteHalf;
use tokio::net::UnixStream;

use tokio::sync::{mpsc, OwnedSemaphorePermit};
use tokio_util::codec::Decoder;
use tokio_util::sync::CancellationToken;

use crate::admission::{answer_of, Admission};
use crate::calls::RunCall;
use crate::config::ServerConfig;
use crate::guard::ClientIdentity;
use crate::in_flight::{InFlightCalls, Refusal};
use crate::mcp::{self, REQUEST_REJECTED, TOKEN_META_KEY};
use crate::meta_tools::{domains_text, tools_text, within_budget};
use crate::peer_credentials::PeerCredentials;
use crate::server_name::ServerName;
use crate::shared::Shared;
use crate::wire::{decode_payload, encode_message, encode_message_with, Wire, WireDecoder};

/// Room in the outgoing queue beyond the slots reserved by in-flight calls, for control
/// replies and progress notifications.
const CONTROL_QUEUE_CAPACITY: usize = 32;

/// How much a connection reads at a time.
const READ_CHUNK_BYTES: usize = 8 * 1024;

/// How much an unexpected client may send while the host decides; past this it waits in
/// the kernel's socket buffer.
const PRE_ADMISSION_BYTES: usize = 64 * 1024;

/// A call that runs longer than this on the connection's task before answering or waiting
/// makes the connection yield before its next message.
const INLINE_CALL_YIELD_AFTER: Duration = Duration::from_micros(500);

/// How often a connection with calls in flight re-checks its idle timer.
const IDLE_RECHECK: Duration = Duration::from_secs(1);

/// Serves one accepted connection until the client leaves, breaks a limit, or the servers
/// stop. `_connection_slot` is this connection's share of the server's connection cap.
pub(crate) async fn serve(
    stream: UnixStream,
    shared: Arc<Shared>,
    server: ServerName,
    peer: PeerCredentials,
    _connection_slot: OwnedSemaphorePermit,
) {
    let accepted_at = Instant::now();
    let cancellation = shared.shutdown.child_token();
    let Some(early_bytes) = admit(&stream, &shared, &peer, &cancellation).await else {
        tracing::info!(server = %server, pid = peer.pid, "connection not admitted; closed");
        return;
    };
    let connection_id = shared.next_connection_id();
    let (read_half, write_half) = stream.into_split();
    let (outgoing, outgoing_queue) =
        mpsc::channel(shared.config.queue_depth + CONTROL_QUEUE_CAPACITY);
    let mut connection = Connection {
        in_flight: Arc::new(InFlightCalls::new(shared.config.queue_depth)),
        identity: ClientIdentity {
            pid: Some(peer.pid),
            name: None,
            connection_id,
        },
        shared: Arc::clone(&shared),
        server,
        cancellation: cancellation.clone(),
        outgoing,
        bad_messages: 0,
    };
    let mut decoder = WireDecoder::new(shared.config.max_frame_bytes);
    let mut buffer = early_bytes;
    let mut writer = Some((write_half, outgoing_queue));
    let mut timing = ReadTiming {
        accepted_at,
        saw_message: false,
        message_started: None,
        last_activity: accepted_at,
    };
    let close_reason = 'connection: loop {
        loop {
            let payload = match decoder.decode(&mut buffer) {
                Ok(Some(payload)) => payload,
                Ok(None) => break,
                Err(error) => break 'connection format!("unreadable stream: {error}"),
            };
            timing.saw_message = true;
            timing.message_started = None;
            timing.last_activity = Instant::now();
            let wire = decoder.wire().unwrap_or(Wire::Frames);
            if let Some((write_half, queue)) = writer.take() {
                shared.tasks.spawn(write_replies(
                    write_half,
                    queue,
                    wire,
                    shared.config.max_frame_bytes,
                    shared.config.write_timeout,
                    cancellation.clone(),
                ));
            }
            connection.handle_payload(wire, &payload).await;
            if connection.bad_messages > shared.config.max_bad_messages {
                break 'connection format!(
                    "more than {} bad messages",
                    shared.config.max_bad_messages
                );
            }
        }
        if buffer.is_empty() {
            // An idle connection keeps no read buffer at all.
            buffer = BytesMut::new();
            timing.message_started = None;
        } else if timing.message_started.is_none() {
            timing.message_started = Some(Instant::now());
        }
        let (deadline, expiry) = timing.next_deadline(
            &shared.config,
            &buffer,
            decoder.wire(),
            connection.in_flight.len(),
        );
        tokio::select! {
            biased;
            _ = cancellation.cancelled() => break 'connection "closed".to_owned(),
            _ = tokio::time::sleep_until(deadline.into()) => match expiry {
                Expiry::Close(reason) => break 'connection reason.to_owned(),
                Expiry::Recheck => timing.last_activity = Instant::now(),
            },
            ready = read_half.readable() => {
                if let Err(error) = ready {
                    break 'connection format!("read failed: {error}");
                }
                if buffer.capacity() - buffer.len() < READ_CHUNK_BYTES / 2 {
                    buffer.reserve(READ_CHUNK_BYTES);
                }
                match read_half.try_read_buf(&mut buffer) {
                    Ok(0) => {
                        if let Err(error) = decoder.decode_eof(&mut buffer) {
                            break 'connection format!("unreadable stream: {error}");
                        }
                        break 'connection "the client closed the connection".to_owned();
                    }
                    Ok(_) => {}
                    Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(error) => break 'connection format!("read failed: {error}"),
                }
            }
        }
    };
    tracing::debug!(server = %server, connection_id, reason = %close_reason, "connection closed");
    // A closed connection cancels all of its calls; their tasks end without replying.
    cancellation.cancel();
    connection.in_flight.cancel_all();
}

/// When the bytes of a connection are due.
struct ReadTiming {
    accepted_at: Instant,
    saw_message: bool,
    message_started: Option<Instant>,
    last_activity: Instant,
}

/// What happens when a connection's deadline passes.
enum Expiry {
    /// Close the connection, for this reason.
    Close(&'static str),
    /// Nothing yet: look again.
    Recheck,
}

impl ReadTiming {
    fn next_deadline(
        &self,
        config: &ServerConfig,
        buffer: &BytesMut,
        wire: Option<Wire>,
        calls_in_flight: usize,
    ) -> (Instant, Expiry) {
        if !self.saw_message {
            return (
                self.accepted_at + config.first_message_timeout,
                Expiry::Close("no complete first message in time"),
            );
        }
        if let Some(started) = self.message_started {
            let header_done = match wire {
                Some(Wire::Lines) => true,
                _ => buffer.iter().take(12).any(|&byte| byte == b'\n'),
            };
            return if header_done {
                (
                    started + config.body_timeout,
                    Expiry::Close("a message body arrived too slowly"),
                )
            } else {
                (
                    started + config.header_timeout,
                    Expiry::Close("a frame header arrived too slowly"),
                )
            };
        }
        if calls_in_flight > 0 {
            return (
                Instant::now() + IDLE_RECHECK.min(config.idle_timeout),
                Expiry::Recheck,
            );
        }
        (
            self.last_activity + config.idle_timeout,
            Expiry::Close("idle for too long"),
        )
    }
}

/// Holds an unexpected client until the host answers, reading (a bounded amount of) what it
/// sends meanwhile so its leaving is noticed. Returns the bytes read, or `None` to close.
async fn admit(
    stream: &UnixStream,
    shared: &Arc<Shared>,
    peer: &PeerCredentials,
    cancellation: &CancellationToken,
) -> Option<BytesMut> {
    let mut early = BytesMut::new();
    let receiver = match shared
        .admission
        .classify(peer.pid, shared.config.rejection_cooldown)
    {
        Admission::Admitted => return Some(early),
        Admission::Refused => return None,
        Admission::Wait(receiver) => receiver,
        Admission::Ask(pending) => {
            let (receiver, prompt) = shared.admission.ask(
                Arc::clone(&shared.host),
                pending,
                shared.config.admission_timeout,
            );
            let shutdown = shared.shutdown.clone();
            shared.tasks.spawn(async move {
                tokio::select! {
                    _ = prompt => {}
                    _ = shutdown.cancelled() => {}
                }
            });
            receiver
        }
    };
    let answer = answer_of(receiver);
    tokio::pin!(answer);
    loop {
        tokio::select! {
            biased;
            _ = cancellation.cancelled() => return None,
            allowed = &mut answer => {
                // A client that left while held is gone even if the answer came first:
                // nothing it sent may run.
                return (allowed && !hung_up(stream, &mut early)).then_some(early);
            }
            ready = stream.readable(), if early.len() < PRE_ADMISSION_BYTES => {
                ready.ok()?;
                early.reserve(READ_CHUNK_BYTES);
                match stream.try_read_buf(&mut early) {
                    // The client went away while held: nothing it sent will run.
                    Ok(0) => return None,
                    Ok(_) => {}
                    Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(_) => return None,
                }
            }
        }
    }
}

/// Reads whatever is already waiting, without blocking, and says whether the peer has hung up.
/// It asks the socket itself rather than tokio, whose readiness may not have caught up with a
/// hang-up that happened a moment ago.
fn hung_up(stream: &UnixStream, early: &mut BytesMut) -> bool {
    use std::os::fd::AsFd;
    let mut chunk = [0u8; 4096];
    while early.len() < PRE_ADMISSION_BYTES {
        match rustix::net::recv(stream.as_fd(), &mut chunk, rustix::net::RecvFlags::DONTWAIT) {
            Ok((0, _)) => return true,
            Ok((read, _)) => early.extend_from_slice(&chunk[..read]),
            Err(rustix::io::Errno::AGAIN) => return false,
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return true,
        }
    }
    false
}

/// Writes queued messages in order, coalescing whatever is ready into one write. A client
/// that does not take a write within the timeout is closed: nothing is buffered for it
/// beyond the bounded queue.
async fn write_replies(
    mut socket: OwnedWriteHalf,
    mut queue: mpsc::Receiver<Value>,
    wire: Wire,
    max_message_bytes: usize,
    write_timeout: Duration,
    cancellation: CancellationToken,
) {
    let mut buffer = BytesMut::new();
    while let Some(message) = queue.recv().await {
        // The TOON text of one message before it is framed; lives for this batch only.
        let mut scratch = String::new();
        encode_or_report(wire, &message, max_message_bytes, &mut buffer, &mut scratch);
        drop(message);
        while buffer.len() < 64 * 1024 {
            match queue.try_recv() {
                Ok(message) => {
                    encode_or_report(wire, &message, max_message_bytes, &mut buffer, &mut scratch)
                }
                Err(_) => break,
            }
        }
        drop(scratch);
        match tokio::time::timeout(write_timeout, socket.write_all(&buffer)).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                tracing::debug!(%error, "closing connection: write failed");
                cancellation.cancel();
                return;
            }
            Err(_) => {
                tracing::debug!("closing connection: the client stopped reading");
                cancellation.cancel();
                return;
            }
        }
        // An idle connection keeps no write buffer.
        buffer = BytesMut::new();
    }
    let _ = socket.shutdown().await;
}

fn encode_or_report(
    wire: Wire,
    message: &Value,
    max: usize,
    buffer: &mut BytesMut,
    scratch: &mut String,
) {
    if let Err(error) = encode_message_with(wire, message, max, buffer, scratch) {
        // Only a message over the frame limit can fail; answer with an error instead, so
        // the client is not left waiting for its id.
        tracing::warn!(%error, "an outgoing message did not fit in a frame");
        if let Some(id) = message.get("id").and_then(Id::from_value) {
            let reply = Response::error(
                Some(id),
                ErrorObject::internal_error("the reply exceeded the maximum frame size"),
            );
            let _ = encode_message(wire, &reply.into_value(), max, buffer);
        }
    }
}

struct Connection {
    shared: Arc<Shared>,
    server: ServerName,
    identity: ClientIdentity,
    cancellation: CancellationToken,
    outgoing: mpsc::Sender<Value>,
    in_flight: Arc<InFlightCalls>,
    /// Undecodable, invalid or unauthenticated messages so far.
    bad_messages: u32,
}

impl Connection {
    async fn handle_payload(&mut self, wire: Wire, payload: &[u8]) {
        let value = match decode_payload(wire, payload, &self.shared.config.decode_limits) {
            Ok(value) => value,
            Err(reason) => {
                self.bad_messages += 1;
                tracing::debug!(server = %self.server, %reason, "undecodable payload");
                self.send(Response::error(None, ErrorObject::parse_error()))
                    .await;
                return;
            }
        };
        match IncomingMessage::from_value(value) {
            Ok(IncomingMessage::Request(request)) => self.handle_request(request).await,
            Ok(IncomingMessage::Notification(notification)) => {
                self.handle_notification(notification)
            }
            // The servers send no requests, so there is nothing a response could answer.
            Ok(IncomingMessage::Response(_)) => {}
            Err(invalid) => {
                self.bad_messages += 1;
                self.send(invalid.to_response()).await;
            }
        }
    }

    async fn send(&self, response: Response) {
        // Waiting here is the back-pressure on a client that does not read its replies.
        let _ = self.outgoing.send(response.into_value()).await;
    }

    async fn reply(&self, id: Id, result: Value) {
        self.send(Response::success(id, result)).await;
    }

    async fn fail(&self, id: Id, error: ErrorObject) {
        self.send(Response::error(Some(id), error)).await;
    }

    fn authenticated(&self, params: Option<&Value>) -> bool {
        let presented = params
            .and_then(|params| params.get("_meta"))
            .and_then(|meta| meta.get(TOKEN_META_KEY))
            .and_then(Value::as_str);
        presented.is_some_and(|token| self.shared.tokens.verify(token))
    }

    async fn handle_request(&mut self, request: Request) {
        if !self.authenticated(request.params.as_ref()) {
            self.bad_messages += 1;
            self.fail(
                request.id,
                ErrorObject::new(
                    ide_mcp_protocol::jsonrpc::ErrorCode::INVALID_REQUEST,
                    REQUEST_REJECTED,
                ),
            )
            .await;
            return;
        }
        if self.in_flight.contains(&request.id) {
            let id_text = request.id.to_value().to_string();
            self.fail(
                request.id,
                ErrorObject::invalid_request(format!(
                    "id {id_text} is still in flight on this connection; use a new id"
                )),
            )
            .await;
            return;
        }
        let requested_version = request
            .params
            .as_ref()
            .and_then(|params| params.get("_meta"))
            .and_then(|meta| meta.get(mcp::PROTOCOL_VERSION_META_KEY));
        if let Some(version) = requested_version {
            let version_text = version.as_str().unwrap_or_default();
            if !mcp::is_supported_version(version_text) {
                let requested = match version.as_str() {
                    Some(text) => text.to_owned(),
                    None => version.to_string(),
                };
                self.fail(
                    request.id,
                    ErrorObject::unsupported_protocol_version(
                        &requested,
                        &mcp::supported_versions(),
                    ),
                )
                .await;
                return;
            }
        }
        let server = self.server;
        match request.method.as_str() {
            "initialize" => {
                if let Some(name) = request
                    .params
                    .as_ref()
                    .and_then(|params| params.pointer("/clientInfo/name"))
                    .and_then(Value::as_str)
                {
                    self.identity.name = Some(name.chars().take(128).collect());
                }
                let result = mcp::initialize_result(server, request.params.as_ref());
                self.reply(request.id, result).await;
            }
            "ping" => self.reply(request.id, mcp::ping_result(server)).await,
            "server/discover" => self.reply(request.id, mcp::discover_result(server)).await,
            "tools/list" => self.reply(request.id, mcp::tools_list_result(server)).await,
            "tools/call" => self.tools_call(request).await,
            method => {
                let error = ErrorObject::method_not_found(method);
                self.fail(request.id, error).await;
            }
        }
    }

    fn handle_notification(&mut self, notification: Notification) {
        if !self.authenticated(notification.params.as_ref()) {
            self.bad_messages += 1;
            // A failed notification is dropped: there is no id to answer.
            return;
        }
        if notification.method == "notifications/cancelled" {
            let request_id = notification
                .params
                .as_ref()
                .and_then(|params| params.get("requestId"))
                .and_then(Id::from_value);
            if let Some(id) = request_id {
                self.in_flight.cancel(&id);
            }
        }
        // `notifications/initialized` and anything unknown need no action.
    }

    async fn tools_call(&self, mut request: Request) {
        // The arguments move out of the request (never copied): `run` hands them on whole.
        let arguments = request
            .params
            .as_mut()
            .and_then(Value::as_object_mut)
            .and_then(|params| params.remove("arguments"));
        let params = request.params.as_ref().and_then(Value::as_object);
        let Some(name) = params
            .and_then(|params| params.get("name"))
            .and_then(Value::as_str)
        else {
            self.fail(
                request.id,
                ErrorObject::invalid_params("tools/call needs `name`, a string"),
            )
            .await;
            return;
        };
        let arguments = match arguments {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(arguments)) => arguments,
            Some(_) => {
                self.fail(
                    request.id,
                    ErrorObject::invalid_params("`arguments` must be an object"),
                )
                .await;
                return;
            }
        };
        let server = self.server;
        let budget = self.shared.config.output_budget_bytes;
        match name {
            "domains" => {
                let text = domains_text(&self.shared.registry(), server);
                let result = mcp::tool_result(server, within_budget(text, budget), false);
                self.reply(request.id, result).await;
            }
            "tools" => {
                let result = match arguments.get("domain").and_then(Value::as_str) {
                    None => mcp::tool_result(
                        server,
                        "tools needs `domain`, a domain name from domains()".to_owned(),
                        true,
                    ),
                    Some(domain) => match tools_text(&self.shared.registry(), server, domain) {
                        Ok(text) => mcp::tool_result(server, within_budget(text, budget), false),
                        Err(message) => mcp::tool_result(server, message, true),
                    },
                };
                self.reply(request.id, result).await;
            }
            "run" => {
                let progress_token = params
                    .and_then(|params| params.get("_meta"))
                    .and_then(|meta| meta.get("progressToken"))
                    .filter(|token| token.is_string() || token.is_i64() || token.is_u64())
                    .cloned();
                self.start_run(request.id, arguments, progress_token).await;
            }
            other => {
                let error = ErrorObject::invalid_params(format!(
                    "unknown tool `{other}`: this server's tools are domains, tools and run"
                ));
                self.fail(request.id, error).await;
            }
        }
    }

    /// Admits a `run` call and starts it, or answers at once that a cap is reached.
    async fn start_run(
        &self,
        id: Id,
        arguments: Map<String, Value>,
        progress_token: Option<Value>,
    ) {
        let Ok(reply_slot) = self.outgoing.clone().reserve_owned().await else {
            return;
        };
        let call_cancellation = self.cancellation.child_token();
        match self
            .in_flight
            .admit(id.clone(), call_cancellation.clone(), reply_slot)
        {
            Ok(()) => {}
            Err(Refusal::QueueFull(slot)) => {
                let text = format!(
                    "busy: this connection already has {} calls in flight (QUEUE_DEPTH); wait for \
                     a reply, then retry",
                    self.shared.config.queue_depth
                );
                slot.send(
                    Response::success(id, mcp::tool_result(self.server, text, true)).into_value(),
                );
                return;
            }
            Err(Refusal::DuplicateId(slot)) => {
                let error = ErrorObject::invalid_request(
                    "this id is still in flight on this connection; use a new id",
                );
                slot.send(Response::error(Some(id), error).into_value());
                return;
            }
        }
        let Ok(handler_slot) = self.shared.handler_slots(self.server).try_acquire_owned() else {
            let text = format!(
                "busy: the `{}` server is already running {} tool calls; retry in a moment",
                self.server, self.shared.config.max_running_handlers
            );
            self.in_flight.finish(
                &id,
                Response::success(id.clone(), mcp::tool_result(self.server, text, true))
                    .into_value(),
            );
            return;
        };
        let call = RunCall {
            shared: Arc::clone(&self.shared),
            server: self.server,
            registry: self.shared.registry(),
            id,
            arguments,
            progress_token,
            client: self.identity.clone(),
            cancellation: call_cancellation,
            in_flight: Arc::clone(&self.in_flight),
            outgoing: self.outgoing.clone(),
            _handler_slot: handler_slot,
        };
        // Most calls finish without waiting for anything (a Rust handler, a guard that
        // answers at once): run the call here first, so such a call costs no task of its own
        // and no wake-up of another thread. Only a call that has to wait moves to a task of
        // its own, so this connection goes on reading (and can cancel it) meanwhile. Whatever
        // the call registered a wake-up with while polled here is registered again by the
        // task's first poll (every future re-registers on each poll), so nothing is lost.
        let started = Instant::now();
        let mut call = Box::pin(call.run());
        if futures::poll!(call.as_mut()).is_pending() {
            self.shared.tasks.spawn(call);
        }
        if started.elapsed() > INLINE_CALL_YIELD_AFTER {
            // A handler that computed for long before answering: let the writer (queued
            // behind this task on this thread) and other tasks run before the next message,
            // as they would have while the call ran in a task of its own.
            tokio::task::yield_now().await;
        }
    }
}
