//! What Linux and macOS share: tokio's Unix sockets (a Linux connection's halves are
//! `own_readiness.rs`'s), the effective uid, the `*at` file operations and modes
//! (`unix/fs.rs`).

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use bytes::{BufMut, BytesMut};

pub(crate) mod fs;

/// A bound, listening socket of one server.
pub(crate) type Listener = tokio::net::UnixListener;
/// An accepted connection.
pub(crate) type Stream = tokio::net::UnixStream;
/// The write half of an accepted connection, owned by its connection's outbox.
#[cfg(not(target_os = "linux"))]
pub(crate) type StreamWriteHalf = tokio::net::unix::OwnedWriteHalf;
/// The read half of an accepted stream.
#[cfg(not(target_os = "linux"))]
pub(crate) type StreamReadHalf = tokio::net::unix::OwnedReadHalf;
#[cfg(target_os = "linux")]
pub(crate) use super::own_readiness::{
    split as split_stream, OwnReadHalf as StreamReadHalf, OwnWriteHalf as StreamWriteHalf,
};

/// Splits an accepted stream into its read and write halves.
#[cfg(not(target_os = "linux"))]
pub(crate) fn split_stream(stream: Stream) -> io::Result<(StreamReadHalf, StreamWriteHalf)> {
    Ok(stream.into_split())
}

/// The client side's blocking socket.
pub type BlockingStream = std::os::unix::net::UnixStream;
/// A blocking listening socket, for tests' stand-in servers.
#[cfg(test)]
pub(crate) type BlockingListener = std::os::unix::net::UnixListener;

/// A user, as the kernel names it: the uid.
pub(crate) type UserId = u32;

/// The effective uid of this process: the owner of everything it creates.
pub(crate) fn current_user() -> UserId {
    rustix::process::geteuid().as_raw()
}

/// Binds a listening socket at `path` and registers it with the current tokio runtime (call
/// it inside the runtime's context).
pub(crate) fn bind_listener(path: &Path) -> io::Result<Listener> {
    if path.as_os_str().len() > super::SUN_PATH_CAPACITY {
        return Err(super::socket_path_too_long(path));
    }
    let listener = std::os::unix::net::UnixListener::bind(path)?;
    listener.set_nonblocking(true)?;
    Listener::from_std(listener)
}

/// Connects the client side's blocking socket to `path`.
pub fn connect_blocking(path: &Path) -> io::Result<BlockingStream> {
    if path.as_os_str().len() > super::SUN_PATH_CAPACITY {
        return Err(super::socket_path_too_long(path));
    }
    BlockingStream::connect(path)
}

/// Reads what is already waiting on `stream` into `buffer` without blocking: `Ok(0)` when the
/// peer has hung up, `WouldBlock` when nothing waits. It asks the socket itself, not tokio,
/// whose readiness may not have caught up with a hang-up that happened a moment ago.
pub(crate) fn recv_now(stream: &Stream, buffer: &mut [u8]) -> io::Result<usize> {
    // A slice is a buffer whose room is the whole slice.
    let mut room = buffer;
    recv_fd_into(stream.as_fd(), &mut room).map_err(io::Error::from)
}

/// What is already waiting on the read half of a split stream, read without blocking into
/// `buffer`'s spare room (at least some room is made if it has none) and marked as filled:
/// `Ok(0)` when the peer has hung up, `WouldBlock` when nothing waits. Asked of the socket
/// itself, as [`recv_now`] is; the room is not zeroed first (a connection's look at its socket
/// made before every wait zeroed a 4 KiB chunk for it).
pub(crate) fn recv_now_on_half(half: &StreamReadHalf, buffer: &mut BytesMut) -> io::Result<usize> {
    #[cfg(target_os = "linux")]
    let fd = half.as_fd();
    #[cfg(not(target_os = "linux"))]
    let fd = half.as_ref().as_fd();
    recv_fd_into(fd, buffer).map_err(io::Error::from)
}

/// Reads what is waiting on `socket` without blocking into `buffer`'s spare room, retrying
/// `EINTR`, and marks what it read as filled.
pub(super) fn recv_fd_into(
    socket: std::os::fd::BorrowedFd<'_>,
    buffer: &mut impl BufMut,
) -> Result<usize, rustix::io::Errno> {
    let spare = buffer.chunk_mut();
    // SAFETY: `recv` only writes into the slice, and returns how many of its bytes it wrote;
    // exactly those are then marked as filled.
    let room = unsafe {
        std::slice::from_raw_parts_mut(spare.as_mut_ptr().cast::<MaybeUninit<u8>>(), spare.len())
    };
    let read = loop {
        match rustix::net::recv(socket, &mut *room, rustix::net::RecvFlags::DONTWAIT) {
            Ok(((filled, _), _)) => break filled.len(),
            Err(rustix::io::Errno::INTR) => continue,
            Err(errno) => return Err(errno),
        }
    };
    // SAFETY: `recv` initialised the first `read` bytes of the spare room.
    unsafe { buffer.advance_mut(read) };
    Ok(read)
}

/// Where runtime directories may go, best first: the system temp directory (`$TMPDIR`, or
/// `/tmp`), then `/tmp` itself, whose path is short enough for any socket path.
pub(crate) fn default_runtime_bases() -> Vec<PathBuf> {
    let mut bases = vec![std::env::temp_dir()];
    let tmp = PathBuf::from("/tmp");
    if !bases.contains(&tmp) {
        bases.push(tmp);
    }
    bases
}
