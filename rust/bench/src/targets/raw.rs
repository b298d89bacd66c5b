//! The floor: a socket that reads one message (frame or line, chosen by the first byte like our
//! servers do) and writes the same bytes back. One blocking thread per connection, no parsing
//! beyond the framing.

use std::io::{self, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::thread::JoinHandle;

use bytes::BytesMut;
use ide_mcp_protocol::frame::{FrameDecoder, MAX_FRAME_BYTES};
use ide_mcp_protocol::ndjson::LineDecoder;

use crate::endpoint::{CallShape, Endpoint};
use crate::wire::Wire;

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

/// An endpoint of the echo socket. Pass our servers' token so the request bytes are exactly
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
    let mut buffer = BytesMut::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut reply = Vec::with_capacity(4096);
    let mut wire = None;
    let mut frames = FrameDecoder::new(MAX_FRAME_BYTES);
    let mut lines = LineDecoder::new(MAX_FRAME_BYTES);
    loop {
        let count = stream.read(&mut chunk)?;
        if count == 0 {
            return Ok(());
        }
        buffer.extend_from_slice(&chunk[..count]);
        let wire = *wire.get_or_insert(if buffer[0] == b'{' {
            Wire::Lines
        } else {
            Wire::Frames
        });
        reply.clear();
        loop {
            let decoded = match wire {
                Wire::Frames => frames.decode(&mut buffer).map_err(io::Error::other)?,
                Wire::Lines => lines.decode(&mut buffer).map_err(io::Error::other)?,
            };
            let Some(payload) = decoded else { break };
            match wire {
                Wire::Frames => {
                    reply.extend_from_slice(payload.len().to_string().as_bytes());
                    reply.push(b'\n');
                    reply.extend_from_slice(&payload);
                }
                Wire::Lines => {
                    reply.extend_from_slice(&payload);
                    reply.push(b'\n');
                }
            }
        }
        if !reply.is_empty() {
            stream.write_all(&reply)?;
        }
    }
}
