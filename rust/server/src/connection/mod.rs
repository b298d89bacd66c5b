//! The transport layer of one connection: hold it while the host decides on an unexpected
//! client, read its bytes under the read timers, cut them into payloads for its session, and
//! write every reply — all from the connection's one task.
//!
//! - [`admission_hold`]: an unexpected client waits here for the host's answer.
//! - [`read_timing`]: the first-message, header, body and idle timers.
//! - [`outbox`]: the writing side (the outgoing queue, coalescing, the write timeout).
//! - [`request_watch`]: a short look at the socket before waiting, for a client that sends its
//!   next message right after each reply.
//! - [`spare_buffer`]: read buffers kept per thread between messages.

mod admission_hold;
mod outbox;
mod read_timing;
mod request_watch;
mod spare_buffer;

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc;
use tokio_util::codec::Decoder;
use tokio_util::sync::CancellationToken;

use crate::guard::ClientIdentity;
use crate::platform::{PeerCredentials, Stream};
use crate::server_name::ServerName;
use crate::session::connection_budget::UnauthenticatedPlace;
use crate::session::in_flight::InFlightCalls;
use crate::session::Session;
use crate::shared::Shared;
use crate::wire::{Wire, WireDecoder};
use outbox::Outbox;
use read_timing::{Expiry, ReadTiming};
use request_watch::{Looked, RequestWatch};

/// Room in the outgoing queue beyond the slots reserved by in-flight calls, for control
/// replies and progress notifications.
const CONTROL_QUEUE_CAPACITY: usize = 32;

/// How much a connection reads at a time.
const READ_CHUNK_BYTES: usize = 8 * 1024;

/// What an accepted connection starts with from the accept loop.
pub(crate) struct Accepted {
    /// Closes the connection: the servers stopping, or the connection shed for a newcomer.
    pub(crate) cancellation: CancellationToken,
    /// Its place in the unauthenticated pool, until it presents a valid token.
    pub(crate) unauthenticated: UnauthenticatedPlace,
}

/// Serves one accepted connection until the client leaves, breaks a limit, is shed, or the
/// servers stop.
pub(crate) async fn serve(
    stream: Stream,
    shared: Arc<Shared>,
    server: ServerName,
    peer: PeerCredentials,
    accepted: Accepted,
) {
    let Accepted {
        cancellation,
        unauthenticated,
    } = accepted;
    let Some(early_bytes) = admission_hold::admit(&stream, &shared, &peer, &cancellation).await
    else {
        tracing::info!(server = %server, pid = peer.pid, "connection not admitted; closed");
        return;
    };
    // The first message is due from here: the time the host took to admit it does not count.
    let accepted_at = Instant::now();
    let connection_id = shared.next_connection_id();
    let (read_half, write_half) = match crate::platform::split_stream(stream) {
        Ok(halves) => halves,
        Err(error) => {
            tracing::warn!(server = %server, "connection dropped: its socket could not be set up: {error}");
            return;
        }
    };
    let (outgoing, outgoing_queue) =
        mpsc::channel(shared.config.queue_depth + CONTROL_QUEUE_CAPACITY);
    let mut session = Session {
        in_flight: Arc::new(InFlightCalls::new(shared.config.queue_depth)),
        identity: ClientIdentity {
            pid: Some(peer.pid),
            name: None,
            connection_id,
        },
        shared: Arc::clone(&shared),
        server,
        cancellation: cancellation.clone(),
        _call_tokens_anchor: cancellation.child_token(),
        outgoing,
        bad_messages: 0,
        unauthenticated: Some(unauthenticated),
        authenticated: None,
        close_reason: None,
        others_waiting: false,
    };
    let inbound_ceiling = shared.config.inbound_message_ceiling();
    let mut decoder = WireDecoder::new(inbound_ceiling);
    let mut buffer = early_bytes;
    let mut outbox = Outbox::new(
        write_half,
        outgoing_queue,
        shared.config.max_frame_bytes,
        shared.config.write_timeout,
    );
    let mut timing = ReadTiming {
        accepted_at,
        saw_message: false,
        message_started: None,
        last_activity: accepted_at,
    };
    // One timer for the connection's life, moved only when what is due comes earlier (or
    // once it went off): a timer made afresh for every message was registered with the
    // runtime's timer wheel and taken out again each time, a good part of a short call.
    let mut alarm = std::pin::pin!(tokio::time::sleep_until(accepted_at.into()));
    let mut alarm_at = None;
    // Waited on across messages, like the alarm: made afresh for each one, it registered with
    // the token and left it again every time.
    let mut closing = std::pin::pin!(cancellation.clone().cancelled_owned());
    let mut watch = RequestWatch::new(connection_id, shared.config.socket_look);
    let close_reason = 'connection: loop {
        loop {
            let payload = match decoder.decode(&mut buffer) {
                Ok(Some(payload)) => payload,
                Ok(None) => break,
                Err(error) => break 'connection unreadable(&error, inbound_ceiling),
            };
            timing.message_started = None;
            timing.last_activity = Instant::now();
            let wire = decoder.wire().unwrap_or(Wire::Frames);
            // What is left in the buffer after this payload is (the start of) another message.
            session.others_waiting = !buffer.is_empty();
            // The session may wait (for room in the queue, for a place under the connection
            // cap); meanwhile the outbox keeps writing, so it never waits for itself.
            // Pinned where it is built: the future is large, and moving it into the outbox's
            // future would make every idle connection hold copies of it.
            let handled = {
                let handling = std::pin::pin!(session.handle_payload(wire, &payload));
                outbox.alongside(wire, handling).await
            };
            if let Err(reason) = handled {
                break 'connection reason;
            }
            // Only a valid token shows who a connection is: until one, the first-message
            // timer keeps running, whatever else arrives.
            timing.saw_message = session.authenticated.is_some();
            if let Some(reason) = session.close_reason.take() {
                break 'connection reason;
            }
            if session.bad_messages > shared.config.max_bad_messages {
                break 'connection format!(
                    "more than {} bad messages",
                    shared.config.max_bad_messages
                );
            }
        }
        // Replies of calls that finished inline, and control replies: out now, from this
        // task, in one write for every message this read brought.
        let wire = decoder.wire().unwrap_or(Wire::Frames);
        if let Err(reason) = outbox.write_ready(wire) {
            break 'connection reason;
        }
        if buffer.is_empty() && session.in_flight.len() == 0 && !outbox.has_work() {
            // A look that finds the next message goes round without passing the runtime's
            // wait, which is where a task is charged for its turn: charged here instead, a
            // client that never pauses still sends this task back to the scheduler now and
            // then, where other tasks (and other connections' readiness) are seen.
            if watch.would_look(&shared.last_reader) {
                tokio::task::coop::consume_budget().await;
            }
            match watch.before_waiting(&read_half, &mut buffer, &shared.last_reader) {
                Looked::Bytes => continue 'connection,
                Looked::Closed => {
                    break 'connection client_closed(&mut decoder, &mut buffer, inbound_ceiling)
                }
                Looked::Nothing => {}
            }
        }
        if buffer.is_empty() {
            // An idle connection keeps no read buffer at all.
            spare_buffer::give_back(spare_buffer::Use::Read, std::mem::take(&mut buffer));
            timing.message_started = None;
        } else if timing.message_started.is_none() {
            timing.message_started = Some(Instant::now());
        }
        let (deadline, expiry) = timing.next_deadline(
            &shared.config,
            &buffer,
            decoder.wire(),
            session.in_flight.len(),
        );
        // A deadline that moved later keeps the alarm where it is: going off early, it only
        // finds nothing due yet.
        if alarm_at.is_none_or(|at| deadline < at) {
            alarm.as_mut().reset(deadline.into());
            alarm_at = Some(deadline);
        }
        // The queue is waited on only while something can still arrive on it or is left to
        // write. Waiting on it registers this task with the queue, and every reply this task
        // queues itself (an inline call's, a control reply) would then wake it while it runs:
        // Tokio polls a task woken that way once more and wakes another worker for it, a
        // thread wake-up per call. The calls in flight are counted first: one that finishes
        // queues its reply before it leaves the table (under the table's lock), so a reply
        // queued after the count was read is seen by `has_work`.
        let queue_may_fill = session.in_flight.len() > 0 || outbox.has_work();
        tokio::select! {
            biased;
            () = &mut closing => break 'connection "closed".to_owned(),
            // Replies of calls that ran in tasks of their own, and the rest of a batch the
            // socket did not take at once.
            written = outbox.step(wire), if queue_may_fill => if let Err(reason) = written {
                break 'connection reason;
            },
            () = &mut alarm => {
                alarm_at = None;
                let now = Instant::now();
                if now >= deadline {
                    match expiry {
                        Expiry::Close(reason) => break 'connection reason.to_owned(),
                        Expiry::Recheck => timing.last_activity = now,
                    }
                }
            },
            ready = read_half.readable() => {
                if let Err(error) = ready {
                    break 'connection format!("read failed: {error}");
                }
                make_read_room(&mut buffer);
                match read_half.try_read_buf(&mut buffer) {
                    Ok(0) => break 'connection client_closed(&mut decoder, &mut buffer, inbound_ceiling),
                    Ok(_) => watch.arrived(&shared.last_reader),
                    Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(error) => break 'connection format!("read failed: {error}"),
                }
            }
        }
    };
    tracing::debug!(server = %server, connection_id, reason = %close_reason, "connection closed");
    // A closed connection cancels all of its calls; their tasks end without replying.
    cancellation.cancel();
    session.in_flight.cancel_all();
    // What was answered before the close still goes out, within the write timeout.
    outbox.finish(decoder.wire().unwrap_or(Wire::Frames)).await;
}

/// Makes room in `buffer` for a read: a buffer kept by the thread when it has none at all (an
/// idle connection gives its buffer back), or about a chunk more when less than half of one
/// is left.
fn make_read_room(buffer: &mut bytes::BytesMut) {
    if buffer.capacity() - buffer.len() < READ_CHUNK_BYTES / 2 {
        if buffer.is_empty() {
            *buffer = spare_buffer::take(spare_buffer::Use::Read);
        }
        buffer.reserve(READ_CHUNK_BYTES);
    }
}

/// The reason to close when the client has closed its side: a message cut short by it is
/// unreadable, anything else an orderly leave.
fn client_closed(
    decoder: &mut WireDecoder,
    buffer: &mut bytes::BytesMut,
    inbound_ceiling: usize,
) -> String {
    match decoder.decode_eof(buffer) {
        Err(error) => unreadable(&error, inbound_ceiling),
        Ok(_) => "the client closed the connection".to_owned(),
    }
}

/// Why a byte stream cannot go on, for the log: an oversize message says where the limit
/// comes from, so a host that sends large arguments knows which option to raise.
fn unreadable(error: &crate::wire::WireError, inbound_ceiling: usize) -> String {
    format!(
        "unreadable stream: {error} (messages are read up to {inbound_ceiling} bytes: twice \
         maxArgumentBytes plus 64 KiB, at most maxFrameBytes)"
    )
}
