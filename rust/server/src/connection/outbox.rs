//! The writing side of a connection, driven by the connection's own task: every reply and
//! notification, in order, coalesced into as few writes as possible, each batch under the
//! write timeout.
//!
//! There is no writer task. A reply that is ready when the connection finishes a message (a
//! call that completed inline, a control reply) is encoded and written by the connection task
//! before it waits again, so a call that needs nothing from another thread costs no wake-up of
//! another task. Replies of calls that run in tasks of their own arrive on the bounded queue,
//! which wakes the connection task like a readable socket does.

use std::time::{Duration, Instant};

use crate::platform::StreamWriteHalf;
use bytes::{Buf, BytesMut};
use ide_mcp_protocol::jsonrpc::{ErrorObject, Response};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

use super::spare_buffer::{self, Use};
use crate::outgoing::Outgoing;
use crate::wire::{encode_message, encode_outgoing, Wire};

/// How many bytes of encoded messages one batch gathers at most.
const COALESCE_BYTES: usize = 64 * 1024;

/// Why the writing side ended the connection.
pub(super) type WriteFailure = String;

/// The socket's sending half, the queue of messages for it and the batch being written.
pub(super) struct Outbox {
    socket: StreamWriteHalf,
    queue: mpsc::Receiver<Outgoing>,
    max_message_bytes: usize,
    write_timeout: Duration,
    /// Encoded bytes not yet taken by the socket; empty (and unallocated) when idle.
    batch: BytesMut,
    /// When the socket first refused part of the current batch: the batch must be gone
    /// within the write timeout from then.
    stalled_since: Option<Instant>,
    /// A write failed or timed out: nothing more is written.
    failed: bool,
}

impl Outbox {
    pub(super) fn new(
        socket: StreamWriteHalf,
        queue: mpsc::Receiver<Outgoing>,
        max_message_bytes: usize,
        write_timeout: Duration,
    ) -> Self {
        Outbox {
            socket,
            queue,
            max_message_bytes,
            write_timeout,
            batch: BytesMut::new(),
            stalled_since: None,
            failed: false,
        }
    }

    /// Writes whatever is queued now, without waiting: the connection calls this after each
    /// message, so an inline reply leaves at once. A batch the socket did not take whole is
    /// finished by [`Outbox::step`].
    pub(super) fn write_ready(&mut self, wire: Wire) -> Result<(), WriteFailure> {
        if self.batch.is_empty() {
            self.gather(wire);
        }
        self.write_now()
    }

    /// Whether anything is left to write: a batch the socket did not take whole, or messages
    /// in the queue.
    pub(super) fn has_work(&self) -> bool {
        !self.batch.is_empty() || !self.queue.is_empty()
    }

    /// Waits for something to write — a queued message, or room in the socket for the rest
    /// of the batch — and writes it. Cancel-safe: it only waits on cancel-safe futures and
    /// does its work after they are ready. Never returns while there is nothing to do.
    pub(super) async fn step(&mut self, wire: Wire) -> Result<(), WriteFailure> {
        if self.batch.is_empty() {
            let Some(message) = self.queue.recv().await else {
                // Every sender is gone: nothing more will come.
                return std::future::pending().await;
            };
            self.encode(wire, &message);
            drop(message);
            self.gather(wire);
            return self.write_now();
        }
        let deadline = self.stalled_since.unwrap_or_else(Instant::now) + self.write_timeout;
        tokio::select! {
            ready = self.socket.writable() => match ready {
                Ok(()) => self.write_now(),
                Err(error) => {
                    self.failed = true;
                    Err(format!("write failed: {error}"))
                }
            },
            _ = tokio::time::sleep_until(deadline.into()) => {
                self.failed = true;
                Err("the client stopped reading".to_owned())
            }
        }
    }

    /// Runs `future` (the session handling a message) to its end while keeping the writing
    /// side going, so a session that waits for room in the queue is not waiting for itself.
    pub(super) async fn alongside<F: std::future::Future>(
        &mut self,
        wire: Wire,
        mut future: std::pin::Pin<&mut F>,
    ) -> Result<F::Output, WriteFailure> {
        loop {
            tokio::select! {
                biased;
                output = future.as_mut() => return Ok(output),
                step = self.step(wire) => step?,
            }
        }
    }

    /// The connection is closing: writes what is already queued (within the write timeout)
    /// and closes the sending direction.
    pub(super) async fn finish(mut self, wire: Wire) {
        if self.failed {
            return;
        }
        loop {
            if self.batch.is_empty() {
                self.gather(wire);
                if self.batch.is_empty() {
                    break;
                }
            }
            let write = self.socket.write_all(&self.batch);
            if !matches!(
                tokio::time::timeout(self.write_timeout, write).await,
                Ok(Ok(()))
            ) {
                return;
            }
            self.batch.clear();
        }
        let _ = self.socket.shutdown().await;
    }

    /// Moves queued messages into the batch, up to [`COALESCE_BYTES`].
    fn gather(&mut self, wire: Wire) {
        // The TOON text of one message before it is framed: this thread's, kept between
        // batches.
        spare_buffer::with_text(|scratch| {
            while self.batch.len() < COALESCE_BYTES {
                match self.queue.try_recv() {
                    Ok(message) => self.encode_with(wire, &message, scratch),
                    Err(_) => break,
                }
            }
        });
    }

    fn encode(&mut self, wire: Wire, message: &Outgoing) {
        spare_buffer::with_text(|scratch| self.encode_with(wire, message, scratch));
    }

    fn encode_with(&mut self, wire: Wire, message: &Outgoing, scratch: &mut String) {
        if self.batch.capacity() == 0 {
            // This thread's spare buffer: a reply written at once (as nearly every one is)
            // costs no allocation, and an idle connection still holds none.
            self.batch = spare_buffer::take(Use::Write);
        }
        let max = self.max_message_bytes;
        if let Err(error) = encode_outgoing(wire, message, max, &mut self.batch, scratch) {
            // Only a message over the frame limit can fail; answer with an error instead, so
            // the client is not left waiting for its id.
            tracing::warn!(%error, "an outgoing message did not fit in a frame");
            if let Some(id) = message.id() {
                let reply = Response::error(
                    Some(id),
                    ErrorObject::internal_error("the reply exceeded the maximum frame size"),
                );
                let _ = encode_message(wire, &reply.into_value(), max, &mut self.batch);
            }
        }
    }

    /// Writes as much of the batch as the socket takes now.
    fn write_now(&mut self) -> Result<(), WriteFailure> {
        let written = self.try_write_batch();
        self.failed |= written.is_err();
        written
    }

    fn try_write_batch(&mut self) -> Result<(), WriteFailure> {
        while !self.batch.is_empty() {
            match self.socket.try_write(&self.batch) {
                Ok(0) => return Err("write failed: the socket took nothing".to_owned()),
                Ok(written) => self.batch.advance(written),
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    self.stalled_since.get_or_insert_with(Instant::now);
                    return Ok(());
                }
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => return Err(format!("write failed: {error}")),
            }
        }
        // An idle connection keeps no write buffer.
        spare_buffer::give_back(Use::Write, std::mem::take(&mut self.batch));
        self.stalled_since = None;
        Ok(())
    }
}
