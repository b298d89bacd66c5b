//! Windows (10 1803 and later, which speak AF_UNIX): sockets through `uds_windows`, made
//! asynchronous by `async-io`; the peer's pid from `SIO_AF_UNIX_GETPEERPID` and its user's
//! SID from its process token; owner-only ACLs (`windows/security.rs`), handle-based file
//! operations (`windows/fs.rs`) and Toolhelp process information (`windows/process.rs`).
//!
//! Why `async-io` over `uds_windows` (docs/ARCHITECTURE.md, "Platform seam"): tokio has no
//! AF_UNIX on Windows and no public way to register a foreign socket there (no `AsyncFd`);
//! mio's Windows AF_UNIX support was never released; wrapping the socket as a
//! `tokio::net::TcpStream` works until anything asks it for an address (accept parses an IP
//! address and fails); a blocking thread per connection costs a thread per idle client.
//! `async-io` registers any socket with the system's readiness API (the same AFD polling
//! mio uses), and its futures run under tokio like any other. The price is its own reactor
//! thread, on Windows only.

use std::future::Future;
use std::io::{self, Read as _, Write as _};
use std::net::Shutdown;
use std::os::windows::io::{AsRawSocket, AsSocket, BorrowedSocket};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use async_io::Async;
use bytes::BufMut;
use windows_sys::Win32::Networking::WinSock::{
    recv, WSAGetLastError, WSAIoctl, SIO_AF_UNIX_GETPEERPID, SOCKET, SOCKET_ERROR,
};

use super::PeerCredentials;

pub(crate) mod fs;
mod process;
mod security;

pub(crate) use process::{command_line, executable, parent_pid, start_time};

/// `sizeof(sockaddr_un.sun_path)` in afunix.h (`UNIX_PATH_MAX`).
pub(super) const SUN_PATH_BYTES: usize = 108;

/// The client side's blocking socket.
pub type BlockingStream = uds_windows::UnixStream;
/// A blocking listening socket, for tests' stand-in servers.
#[cfg(test)]
pub(crate) type BlockingListener = uds_windows::UnixListener;

/// A user, as Windows names it: its SID.
pub(crate) type UserId = security::Sid;

/// This process's user.
pub(crate) fn current_user() -> UserId {
    security::current_user()
}

/// A listening socket, as `async-io` needs it (the listener of `uds_windows` does not say
/// `AsSocket` itself).
#[derive(Debug)]
struct ListeningSocket(uds_windows::UnixListener);

impl AsSocket for ListeningSocket {
    fn as_socket(&self) -> BorrowedSocket<'_> {
        // SAFETY: the socket is open for as long as `self` lives, which bounds the borrow.
        unsafe { BorrowedSocket::borrow_raw(self.0.as_raw_socket()) }
    }
}

/// A bound, listening socket of one server.
#[derive(Debug)]
pub(crate) struct Listener(Async<ListeningSocket>);

impl Listener {
    /// Waits for the next connection (tokio's `UnixListener::accept`, address left out).
    pub(crate) async fn accept(&self) -> io::Result<(Stream, ())> {
        let (stream, _address) = self.0.read_with(|listener| listener.0.accept()).await?;
        Ok((Stream::new(stream)?, ()))
    }
}

/// An accepted connection: the socket, registered for readiness, shared by the read and
/// write halves.
#[derive(Debug, Clone)]
pub(crate) struct Stream(Arc<Async<uds_windows::UnixStream>>);

/// The write half of an accepted connection, owned by its connection's outbox.
#[derive(Debug)]
pub(crate) struct StreamWriteHalf(Arc<Async<uds_windows::UnixStream>>);

impl StreamWriteHalf {
    /// Waits until the socket may take a write (tokio's `writable`).
    pub(crate) fn writable(&self) -> impl Future<Output = io::Result<()>> + '_ {
        self.0.writable()
    }

    /// Writes what the socket takes now without blocking (tokio's `try_write`; the socket
    /// is non-blocking): `WouldBlock` when it takes nothing.
    pub(crate) fn try_write(&self, bytes: &[u8]) -> io::Result<usize> {
        self.0.get_ref().write(bytes)
    }
}

impl Stream {
    fn new(stream: uds_windows::UnixStream) -> io::Result<Stream> {
        Ok(Stream(Arc::new(Async::new(stream)?)))
    }

    fn socket(&self) -> SOCKET {
        self.0.get_ref().as_raw_socket() as SOCKET
    }

    /// Waits until the socket may be read (tokio's `readable`).
    pub(crate) fn readable(&self) -> impl Future<Output = io::Result<()>> + '_ {
        self.0.readable()
    }

    /// Reads what is waiting into the spare capacity of `buffer` without blocking
    /// (tokio's `try_read_buf`): `Ok(0)` is a hang-up, `WouldBlock` is nothing yet.
    pub(crate) fn try_read_buf<B: BufMut>(&self, buffer: &mut B) -> io::Result<usize> {
        let spare = buffer.chunk_mut();
        let capacity = i32::try_from(spare.len()).unwrap_or(i32::MAX);
        // SAFETY: recv writes at most `capacity` bytes into the spare capacity, which need
        // not be initialised.
        let read = unsafe { recv(self.socket(), spare.as_mut_ptr(), capacity, 0) };
        if read == SOCKET_ERROR {
            // SAFETY: plain call.
            return Err(io::Error::from_raw_os_error(unsafe { WSAGetLastError() }));
        }
        let read = read as usize;
        // SAFETY: recv initialised `read` bytes.
        unsafe { buffer.advance_mut(read) };
        Ok(read)
    }

    /// The read half (this stream) and the write half (tokio's `into_split`).
    pub(crate) fn into_split(self) -> (Stream, StreamWriteHalf) {
        let writer = StreamWriteHalf(Arc::clone(&self.0));
        (self, writer)
    }
}

/// Splits an accepted stream into its read and write halves.
pub(crate) fn split_stream(stream: Stream) -> io::Result<(StreamReadHalf, StreamWriteHalf)> {
    Ok(stream.into_split())
}

impl tokio::io::AsyncWrite for StreamWriteHalf {
    fn poll_write(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            match self.0.get_ref().write(bytes) {
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    ready!(self.0.poll_writable(context))?;
                }
                result => return Poll::Ready(result),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.0.get_ref().shutdown(Shutdown::Write))
    }
}

/// Binds a listening socket at `path`.
pub(crate) fn bind_listener(path: &Path) -> io::Result<Listener> {
    if path.as_os_str().len() > super::SUN_PATH_CAPACITY {
        return Err(super::socket_path_too_long(path));
    }
    let listener = uds_windows::UnixListener::bind(path)?;
    Ok(Listener(Async::new(ListeningSocket(listener))?))
}

/// Connects the client side's blocking socket to `path`.
pub fn connect_blocking(path: &Path) -> io::Result<BlockingStream> {
    if path.as_os_str().len() > super::SUN_PATH_CAPACITY {
        return Err(super::socket_path_too_long(path));
    }
    BlockingStream::connect(path)
}

/// Reads what is already waiting on `stream` without blocking (the socket is non-blocking):
/// `Ok(0)` when the peer has hung up, `WouldBlock` when nothing waits.
pub(crate) fn recv_now(stream: &Stream, buffer: &mut [u8]) -> io::Result<usize> {
    stream.0.get_ref().read(buffer)
}

/// The read half of an accepted stream: the stream itself (see [`Stream::into_split`]).
pub(crate) type StreamReadHalf = Stream;

/// [`recv_now`] on the read half of a split stream, into `buffer`'s spare room (some room made
/// if it has none, as on Unix), marked as filled. What it reads into is zeroed first here (the
/// socket's `read` takes an initialised slice), so it reads at most 4 KiB at a time.
pub(crate) fn recv_now_on_half(
    half: &StreamReadHalf,
    buffer: &mut bytes::BytesMut,
) -> io::Result<usize> {
    /// The most one read zeroes and takes.
    const MOST_ZEROED: usize = 4 * 1024;
    let filled = buffer.len();
    if buffer.capacity() == filled {
        buffer.reserve(64);
    }
    let room = (buffer.capacity() - filled).min(MOST_ZEROED);
    buffer.resize(filled + room, 0);
    let read = recv_now(half, &mut buffer[filled..]);
    buffer.truncate(filled + *read.as_ref().unwrap_or(&0));
    read
}

/// The peer of an accepted stream: its pid (`SIO_AF_UNIX_GETPEERPID`, recorded by the system
/// at connect) and the user its process runs as.
pub(crate) fn peer_credentials(stream: &Stream) -> io::Result<PeerCredentials> {
    let mut pid = 0u32;
    let mut returned = 0u32;
    // SAFETY: the out-buffer is `pid`, 4 bytes; a synchronous call (no OVERLAPPED).
    let status = unsafe {
        WSAIoctl(
            stream.socket(),
            SIO_AF_UNIX_GETPEERPID,
            std::ptr::null(),
            0,
            (&mut pid as *mut u32).cast(),
            size_of::<u32>() as u32,
            &mut returned,
            std::ptr::null_mut(),
            None,
        )
    };
    if status == SOCKET_ERROR {
        // SAFETY: plain call.
        let error = io::Error::from_raw_os_error(unsafe { WSAGetLastError() });
        return Err(io::Error::new(
            error.kind(),
            format!(
                "could not read the peer's pid (SIO_AF_UNIX_GETPEERPID): {error}; the socket \
                 must be a connected AF_UNIX stream socket (Windows 10 1803 or later)"
            ),
        ));
    }
    let user = security::user_of_process(pid).map_err(|error| {
        io::Error::new(
            error.kind(),
            format!("could not read the user of the peer process {pid}: {error}"),
        )
    })?;
    Ok(PeerCredentials {
        pid: i32::try_from(pid).map_err(io::Error::other)?,
        user,
    })
}

/// Where runtime directories may go: the user's own temp directory (`%TEMP%`).
pub(crate) fn default_runtime_bases() -> Vec<PathBuf> {
    vec![std::env::temp_dir()]
}
