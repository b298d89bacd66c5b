//! The blocking transport of every client-side socket loop: whole JSON-RPC messages over a Unix
//! socket, on either wire the servers speak.
//!
//! A [`MessageStream`] sends a [`Value`] encoded with the servers' own encoder
//! ([`crate::wire::encode_message_with`]) and receives the next whole message, split off the
//! byte stream by the servers' own [`WireDecoder`]. The client, the stdio bridge, the benchmark
//! and the tests' fake servers all go through it, so there is one read loop and one write path
//! on the client side.
//!
//! It splits into a [`MessageReader`] and a [`MessageWriter`] over the same socket, for a
//! reader thread beside writers (the bridge). Both halves keep their buffers, so a connection
//! that sends and receives many messages allocates for the first ones only; the benchmark's
//! pre-encoded requests go out with [`MessageWriter::send_raw`] and its replies are matched as
//! raw payloads from [`MessageReader::receive_payload`], without decoding.

pub use crate::platform::BlockingStream;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use ide_mcp_protocol::frame::MAX_FRAME_BYTES;
use ide_mcp_protocol::json::parse_strict;
use ide_mcp_protocol::toon::{decode_bytes, DecodeOptions};
use serde_json::Value;
use tokio_util::codec::Decoder;

use crate::wire::{encode_message_with, Wire, WireDecoder, WireError};

/// How many bytes one `read` call asks the socket for.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// A write buffer that grew past this for one large message is given back afterwards.
const KEPT_WRITE_BUFFER_BYTES: usize = 64 * 1024;

/// Why a message could not be sent or received.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// Reading from or writing to the socket failed (including a read timeout).
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The peer's byte stream broke (a bad frame header, an oversize frame or line, or the
    /// stream ending inside a message); nothing more can be read from it.
    #[error(transparent)]
    Stream(WireError),
    /// A whole message arrived but its payload did not decode; the stream goes on.
    #[error("invalid {}: {error}", payload_format(*.wire))]
    Decode {
        /// The wire the payload came on.
        wire: Wire,
        /// Why it did not decode.
        error: String,
    },
    /// An outgoing message could not be encoded (it is too large for a frame); nothing was
    /// written.
    #[error(transparent)]
    Encode(WireError),
}

fn payload_format(wire: Wire) -> &'static str {
    match wire {
        Wire::Frames => "TOON",
        Wire::Lines => "JSON",
    }
}

/// A blocking connection that sends and receives whole messages.
#[derive(Debug)]
pub struct MessageStream {
    reader: MessageReader,
    writer: MessageWriter,
}

impl MessageStream {
    /// Connects to the socket at `path` and speaks `wire` on it.
    pub fn connect(path: &Path, wire: Wire) -> io::Result<MessageStream> {
        Ok(MessageStream::new(
            crate::platform::connect_blocking(path)?,
            wire,
        ))
    }

    /// Speaks `wire` on an already connected stream.
    pub fn new(stream: BlockingStream, wire: Wire) -> MessageStream {
        let stream = Arc::new(stream);
        MessageStream {
            reader: MessageReader {
                stream: Arc::clone(&stream),
                decoder: WireDecoder::for_wire(wire, MAX_FRAME_BYTES),
                wire,
                buffer: BytesMut::new(),
                chunk: vec![0; READ_CHUNK_BYTES],
                reached_eof: false,
                busy_poll_timeout: None,
            },
            writer: MessageWriter {
                stream,
                wire,
                buffer: BytesMut::new(),
                scratch: String::new(),
            },
        }
    }

    /// Separates the reading half from the writing half, for use on different threads.
    pub fn split(self) -> (MessageReader, MessageWriter) {
        (self.reader, self.writer)
    }

    /// The wire spoken.
    pub fn wire(&self) -> Wire {
        self.writer.wire
    }

    /// The socket itself.
    pub fn socket(&self) -> &BlockingStream {
        &self.writer.stream
    }

    /// Gives up the buffers and keeps only the socket.
    pub fn into_socket(self) -> BlockingStream {
        let MessageStream { reader, writer } = self;
        drop(reader);
        Arc::try_unwrap(writer.stream)
            .unwrap_or_else(|_| unreachable!("the two halves hold the only references"))
    }

    /// Sets the read timeout (see [`MessageReader::set_read_timeout`]).
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.reader.set_read_timeout(timeout)
    }

    /// Spins instead of sleeping on reads (see [`MessageReader::set_busy_poll`]).
    pub fn set_busy_poll(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.reader.set_busy_poll(timeout)
    }

    /// Closes the sending direction (see [`MessageWriter::shutdown_write`]).
    pub fn shutdown_write(&self) -> io::Result<()> {
        self.writer.shutdown_write()
    }

    /// Sends one message (see [`MessageWriter::send`]).
    pub fn send(&mut self, message: &Value) -> Result<(), TransportError> {
        self.writer.send(message)
    }

    /// Writes bytes as they are (see [`MessageWriter::send_raw`]).
    pub fn send_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.writer.send_raw(bytes)
    }

    /// The next message (see [`MessageReader::receive`]).
    pub fn receive(&mut self) -> Result<Option<Value>, TransportError> {
        self.reader.receive()
    }

    /// The next payload, undecoded (see [`MessageReader::receive_payload`]).
    pub fn receive_payload(&mut self) -> Result<Option<Bytes>, TransportError> {
        self.reader.receive_payload()
    }
}

/// The reading half of a [`MessageStream`].
pub struct MessageReader {
    stream: Arc<BlockingStream>,
    decoder: WireDecoder,
    wire: Wire,
    /// Bytes received but not yet split off as a whole message.
    buffer: BytesMut,
    /// Scratch space for one `read` call.
    chunk: Vec<u8>,
    /// Set once the peer has closed its side.
    reached_eof: bool,
    /// When set, the socket is non-blocking and a read that finds nothing spins instead of
    /// sleeping, until this much time has passed.
    busy_poll_timeout: Option<Duration>,
}

impl fmt::Debug for MessageReader {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("MessageReader")
            .field("wire", &self.wire)
            .field("buffered_bytes", &self.buffer.len())
            .field("reached_eof", &self.reached_eof)
            .field("busy_poll_timeout", &self.busy_poll_timeout)
            .finish_non_exhaustive()
    }
}

impl MessageReader {
    /// Sets how long a read may block before it fails with a timeout; `None` blocks forever.
    /// A message cut short by the timeout stays buffered, so receiving again resumes it.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.stream.set_read_timeout(timeout)
    }

    /// Spins on the socket instead of sleeping in `read` (`Some(timeout)`: a read that finds
    /// nothing for that long fails with [`io::ErrorKind::TimedOut`]), or goes back to blocking
    /// reads (`None`). The socket's non-blocking flag is shared by both halves, so writes become
    /// non-blocking too: use it only with one message outstanding.
    ///
    /// Spinning keeps the reader's own wake-up out of a round-trip measurement; on a virtual
    /// machine waking a sleeping thread costs tens of microseconds.
    pub fn set_busy_poll(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.stream.set_nonblocking(timeout.is_some())?;
        self.busy_poll_timeout = timeout;
        Ok(())
    }

    /// The next message, decoded: TOON for frames, strict JSON for lines (a line of blanks
    /// carries no message and is skipped). `None` means the peer closed the connection cleanly
    /// between messages.
    pub fn receive(&mut self) -> Result<Option<Value>, TransportError> {
        loop {
            let Some(payload) = self.receive_payload()? else {
                return Ok(None);
            };
            let decoded = match self.wire {
                Wire::Frames => {
                    decode_bytes(&payload, &DecodeOptions::default()).map_err(|e| e.to_string())
                }
                Wire::Lines => {
                    // Peers may send a blank line as a keep-alive.
                    if payload.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    parse_strict(&payload).map_err(|e| e.to_string())
                }
            };
            return decoded.map(Some).map_err(|error| TransportError::Decode {
                wire: self.wire,
                error,
            });
        }
    }

    /// The next whole payload, without its framing and undecoded; `None` at a clean end of
    /// stream.
    pub fn receive_payload(&mut self) -> Result<Option<Bytes>, TransportError> {
        loop {
            let decoded = if self.reached_eof {
                self.decoder.decode_eof(&mut self.buffer)
            } else {
                self.decoder.decode(&mut self.buffer)
            }
            .map_err(TransportError::Stream)?;
            if decoded.is_some() || self.reached_eof {
                return Ok(decoded);
            }
            match self.read_some()? {
                0 => self.reached_eof = true,
                count => self.buffer.extend_from_slice(&self.chunk[..count]),
            }
        }
    }

    /// One `read` into `chunk`, retried after a signal, and spun on while busy-polling.
    fn read_some(&mut self) -> io::Result<usize> {
        let mut spinning_since = None;
        loop {
            match (&*self.stream).read(&mut self.chunk) {
                Ok(count) => return Ok(count),
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    let Some(timeout) = self.busy_poll_timeout else {
                        return Err(error);
                    };
                    let since = *spinning_since.get_or_insert_with(Instant::now);
                    if since.elapsed() > timeout {
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            "no reply within the timeout",
                        ));
                    }
                    std::hint::spin_loop();
                }
                Err(error) => return Err(error),
            }
        }
    }
}

/// The writing half of a [`MessageStream`].
pub struct MessageWriter {
    stream: Arc<BlockingStream>,
    wire: Wire,
    /// The encoded message being written; kept between messages.
    buffer: BytesMut,
    /// The TOON text of the message being framed; kept between messages.
    scratch: String,
}

impl fmt::Debug for MessageWriter {
    // By hand: the buffers hold the last message sent, token included.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("MessageWriter")
            .field("wire", &self.wire)
            .finish_non_exhaustive()
    }
}

impl MessageWriter {
    /// Encodes `message` for the wire (a frame of TOON, or one compact JSON line) and writes it
    /// with one `write_all`. A message too large for a frame is refused before anything is
    /// written.
    pub fn send(&mut self, message: &Value) -> Result<(), TransportError> {
        self.buffer.clear();
        encode_message_with(
            self.wire,
            message,
            MAX_FRAME_BYTES,
            &mut self.buffer,
            &mut self.scratch,
        )
        .map_err(TransportError::Encode)?;
        let written = (&*self.stream).write_all(&self.buffer);
        if self.buffer.capacity() > KEPT_WRITE_BUFFER_BYTES {
            self.buffer = BytesMut::new();
            self.scratch = String::new();
        }
        Ok(written?)
    }

    /// Writes `bytes` to the socket as they are: pre-encoded messages, or malformed input for
    /// tests.
    pub fn send_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        (&*self.stream).write_all(bytes)
    }

    /// Closes the sending direction, so the peer sees end of input while replies can still be
    /// read.
    pub fn shutdown_write(&self) -> io::Result<()> {
        self.stream.shutdown(Shutdown::Write)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn the_halves_work_from_different_threads() {
        let (ours, theirs) = BlockingStream::pair().unwrap();
        let (mut reader, mut writer) = MessageStream::new(ours, Wire::Lines).split();
        let mut peer = MessageStream::new(theirs, Wire::Lines);
        let echo = std::thread::spawn(move || {
            while let Some(message) = peer.receive().unwrap() {
                peer.send(&message).unwrap();
            }
        });

        for n in 0..3 {
            writer.send(&json!({ "n": n })).unwrap();
        }
        writer.shutdown_write().unwrap();

        for n in 0..3 {
            assert_eq!(reader.receive().unwrap(), Some(json!({ "n": n })));
        }
        echo.join().unwrap();
        assert_eq!(reader.receive().unwrap(), None);
    }

    #[test]
    fn busy_polling_gives_up_after_its_timeout() {
        let (ours, _theirs) = BlockingStream::pair().unwrap();
        let mut stream = MessageStream::new(ours, Wire::Frames);
        stream
            .set_busy_poll(Some(Duration::from_millis(20)))
            .unwrap();

        let error = stream.receive_payload().unwrap_err();

        assert!(
            matches!(&error, TransportError::Io(error) if error.kind() == io::ErrorKind::TimedOut),
            "{error:?}"
        );
    }

    #[test]
    fn an_undecodable_payload_leaves_the_stream_usable() {
        let (ours, theirs) = BlockingStream::pair().unwrap();
        let mut stream = MessageStream::new(ours, Wire::Lines);
        let mut peer = MessageStream::new(theirs, Wire::Lines);
        peer.send_raw(b"{oops\n").unwrap();
        peer.send(&json!({ "ok": true })).unwrap();

        let error = stream.receive().unwrap_err();

        assert!(error.to_string().starts_with("invalid JSON: "), "{error}");
        assert_eq!(stream.receive().unwrap(), Some(json!({ "ok": true })));
    }
}
