//! The platform seam: everything that differs between operating systems, behind one small
//! interface, so that a port is a port of this module and nothing else.
//!
//! The interface, which every OS provides under the same names:
//! - **sockets** — [`Listener`] (bound with [`bind_listener`], which refuses a path longer
//!   than the OS's `sun_path` with a clear error), the accepted [`Stream`] (tokio-style
//!   `readable`, `try_read_buf`) and the halves [`split_stream`] makes of it, [`StreamReadHalf`]
//!   (`readable`, `try_read_buf`) and [`StreamWriteHalf`] (`writable`, `try_write`,
//!   `AsyncWrite`), [`recv_now`] (what is already waiting, asked of the socket itself;
//!   [`recv_now_on_half`] on the read half), and the client side's [`BlockingStream`] /
//!   [`connect_blocking`];
//! - **peer identity** — [`peer_credentials`] of an accepted stream, and [`is_same_user`];
//! - **process information for admission** — [`process`]: `start_time`, `parent_pid`,
//!   `executable`, `command_line` of a pid (answers are `None`/empty when the OS will not say);
//! - **files** — [`fs`]: descriptor-relative, never-follow-a-link file operations, and the
//!   protection of the runtime directory and token file (modes on Unix, an owner-only ACL on
//!   Windows) through [`Protection`], with no policy of the runtime directory in them;
//! - **where the runtime lives** — [`default_runtime_bases`].
//!
//! The OS files: `unix.rs` (+ `unix/fs.rs`) is shared by Linux and macOS (tokio's Unix sockets,
//! `openat` and friends, modes); `linux.rs` and `macos.rs` hold what differs between those two
//! (peer credentials, process information), and `own_readiness.rs` the halves of a Linux
//! connection, which wait through an epoll set of their own rather than the reactor's
//! (macOS keeps tokio's halves); `windows.rs` (+ `windows/`) is the Windows port
//! (AF_UNIX through `uds_windows` and `async-io`, the peer's SID, ACLs, Toolhelp).

use std::fmt;

#[cfg(unix)]
mod unix;
#[cfg(all(unix, test))]
pub(crate) use unix::BlockingListener;
#[cfg(unix)]
pub use unix::BlockingStream;
#[cfg(unix)]
pub(crate) use unix::{
    bind_listener, connect_blocking, current_user, default_runtime_bases, fs, recv_now,
    recv_now_on_half, split_stream, Listener, Stream, StreamReadHalf, StreamWriteHalf, UserId,
};
#[cfg(target_os = "linux")]
mod own_readiness;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as os;

#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as os;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as os;
#[cfg(all(windows, test))]
pub(crate) use windows::BlockingListener;
#[cfg(windows)]
pub use windows::BlockingStream;
#[cfg(windows)]
pub(crate) use windows::{
    bind_listener, connect_blocking, current_user, default_runtime_bases, fs, recv_now,
    recv_now_on_half, split_stream, Listener, Stream, StreamReadHalf, StreamWriteHalf, UserId,
};

#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
compile_error!(
    "ide-mcp-server has platform code for Linux, macOS and Windows only; a port is a new file \
     in rust/server/src/platform/"
);

pub(crate) use os::peer_credentials;

/// Process information of a pid, for admission: the OS's answers, or `None` / empty.
pub(crate) mod process {
    pub(crate) use super::os::{command_line, executable, parent_pid, start_time};
}

/// The longest socket path the OS can bind, in bytes, without the terminating NUL: the
/// size of `sockaddr_un.sun_path` less one.
pub(crate) const SUN_PATH_CAPACITY: usize = os::SUN_PATH_BYTES - 1;

/// The identity of the process on the other end of a socket, as the kernel recorded it when
/// it connected (so the client cannot forge it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PeerCredentials {
    /// Process id of the peer. May be 0 if the peer lives in a PID namespace we cannot see.
    pub pid: i32,
    /// The user the peer runs as.
    pub user: UserId,
}

/// Whether the peer runs as the same user as this process.
pub(crate) fn is_same_user(peer: &PeerCredentials) -> bool {
    peer.user == current_user()
}

/// How a file or directory of the runtime directory is protected: reachable by its owner
/// alone. Unix gives it a mode (0700, 0600); Windows an owner-only, protected ACL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Protection {
    /// A directory only its owner may enter, list or change.
    PrivateDirectory,
    /// A file (or socket) only its owner may read or write.
    PrivateFile,
}

impl fmt::Display for Protection {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(fs::protection_name(*self))
    }
}

/// Why a socket path cannot be bound: longer than the OS's `sun_path`.
pub(crate) fn socket_path_too_long(path: &std::path::Path) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!(
            "the socket path {} is {} bytes, longer than the {SUN_PATH_CAPACITY} bytes a Unix \
             socket address holds on this OS; use a shorter base directory",
            path.display(),
            path.as_os_str().len()
        ),
    )
}

#[cfg(test)]
pub(crate) mod tests;
