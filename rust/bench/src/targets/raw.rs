//! The floors: sockets that read one message (frame or line, chosen by the first byte like our
//! servers do) and write the same bytes back, with no parsing beyond the framing.
//!
//! Two of them:
//! - [`start`]: one blocking thread per connection, the ping-pong every server is measured
//!   against;
//! - [`start_tokio`]: one task per connection on a two-worker Tokio runtime (like ours and
//!   rmcp's), the least an asynchronous server does: its workers wait in `epoll`, as ours
//!   and rmcp's do, so what the runtime itself costs shows apart from what a server does on
//!   it.

use std::io::{self, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::thread::JoinHandle;

use bytes::BytesMut;
use ide_mcp_protocol::frame::{FrameDecoder, MAX_FRAME_BYTES};
use ide_mcp_protocol::ndjson::LineDecoder;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::runtime::Runtime;

use crate::endpoint::{CallShape, Endpoint};
use crate::wire::Wire;

/// How much one read takes at most.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Binds `socket` and serves echo connections on background threads until the process ends.
pub fn start(socket: &Path) -> io::Result<JoinHandle<()>> {
    let listener = UnixListener::bind(socket)?;
    Ok(std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = echo_messages(stream);
            });
        }
    }))
}

/// Binds `socket` and serves echo connections as tasks of a new two-worker runtime; dropping
/// the runtime stops them.
pub fn start_tokio(socket: &Path) -> io::Result<Runtime> {
    super::serve_on_tokio(socket, "raw-echo-tokio", |stream| async move {
        let _ = echo_messages_async(stream).await;
    })
}

/// An endpoint of an echo socket. Pass our servers' token so the request bytes are exactly
/// the ones our servers get.
pub fn endpoint(socket: &Path, wire: Wire, token: Option<String>) -> Endpoint {
    Endpoint {
        socket: socket.to_path_buf(),
        wire,
        token,
        shape: CallShape::RawEcho,
    }
}

fn echo_messages(mut stream: UnixStream) -> io::Result<()> {
    let mut echo = Echo::default();
    let mut chunk = vec![0u8; READ_CHUNK_BYTES];
    loop {
        let count = stream.read(&mut chunk)?;
        if count == 0 {
            return Ok(());
        }
        let reply = echo.replies_to(&chunk[..count])?;
        if !reply.is_empty() {
            stream.write_all(reply)?;
        }
    }
}

async fn echo_messages_async(mut stream: tokio::net::UnixStream) -> io::Result<()> {
    let mut echo = Echo::default();
    let mut chunk = vec![0u8; READ_CHUNK_BYTES];
    loop {
        let count = stream.read(&mut chunk).await?;
        if count == 0 {
            return Ok(());
        }
        let reply = echo.replies_to(&chunk[..count])?;
        if !reply.is_empty() {
            stream.write_all(reply).await?;
        }
    }
}

/// One connection's echo: the bytes read so far, and what they ask to be sent back.
struct Echo {
    buffer: BytesMut,
    reply: Vec<u8>,
    wire: Option<Wire>,
    frames: FrameDecoder,
    lines: LineDecoder,
}

impl Default for Echo {
    fn default() -> Self {
        Echo {
            buffer: BytesMut::new(),
            reply: Vec::with_capacity(4096),
            wire: None,
            frames: FrameDecoder::new(MAX_FRAME_BYTES),
            lines: LineDecoder::new(MAX_FRAME_BYTES),
        }
    }
}

impl Echo {
    /// Takes `bytes` read from the client, and gives back every whole message among what was
    /// read so far, framed as it came (nothing while a message is still incomplete).
    fn replies_to(&mut self, bytes: &[u8]) -> io::Result<&[u8]> {
        self.buffer.extend_from_slice(bytes);
        let wire = *self.wire.get_or_insert(if self.buffer[0] == b'{' {
            Wire::Lines
        } else {
            Wire::Frames
        });
        self.reply.clear();
        loop {
            let decoded = match wire {
                Wire::Frames => self
                    .frames
                    .decode(&mut self.buffer)
                    .map_err(io::Error::other)?,
                Wire::Lines => self
                    .lines
                    .decode(&mut self.buffer)
                    .map_err(io::Error::other)?,
            };
            let Some(payload) = decoded else { break };
            match wire {
                Wire::Frames => {
                    self.reply
                        .extend_from_slice(payload.len().to_string().as_bytes());
                    self.reply.push(b'\n');
                    self.reply.extend_from_slice(&payload);
                }
                Wire::Lines => {
                    self.reply.extend_from_slice(&payload);
                    self.reply.push(b'\n');
                }
            }
        }
        Ok(&self.reply)
    }
}
