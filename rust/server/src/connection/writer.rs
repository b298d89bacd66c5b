//! The writer task of a connection: every reply and notification, in order, coalesced into
//! as few writes as possible, each under the write timeout.

use bytes::BytesMut;
use ide_mcp_protocol::jsonrpc::{ErrorObject, Id, Response};
use serde_json::Value;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::platform::StreamWriteHalf;
use crate::wire::{encode_message, encode_message_with, Wire};

/// How many bytes of encoded messages one write gathers at most.
const COALESCE_BYTES: usize = 64 * 1024;

/// Writes queued messages in order, coalescing whatever is ready into one write. A client
/// that does not take a write within the timeout is closed: nothing is buffered for it
/// beyond the bounded queue.
pub(super) async fn write_replies(
    mut socket: StreamWriteHalf,
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
        while buffer.len() < COALESCE_BYTES {
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
