//! Who is on the other end of a Unix socket.
//!
//! The kernel records the connecting process's credentials on the socket, so
//! they cannot be forged by the client. The servers accept only peers running
//! as the same user as the IDE; the token is a second factor on top of that.

use std::io;
use std::os::fd::BorrowedFd;

/// The credentials of a Unix-socket peer, as recorded by the kernel when it
/// connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerCredentials {
    /// Process id of the peer. May be 0 if the peer lives in a PID namespace
    /// we cannot see.
    pub pid: i32,
    /// Effective user id of the peer.
    pub uid: u32,
    /// Effective group id of the peer.
    pub gid: u32,
}

/// Reads the credentials of the peer of the connected Unix socket `fd`
/// (`SO_PEERCRED`).
///
/// Only Linux is supported; elsewhere this returns an
/// [`io::ErrorKind::Unsupported`] error.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn peer_credentials(fd: BorrowedFd<'_>) -> io::Result<PeerCredentials> {
    let cred = rustix::net::sockopt::socket_peercred(fd).map_err(|errno| {
        io::Error::new(
            io::Error::from(errno).kind(),
            format!(
                "could not read the peer credentials (SO_PEERCRED) of socket fd {fd:?}: {errno}; \
                 the fd must be a connected Unix-domain stream socket"
            ),
        )
    })?;
    Ok(PeerCredentials {
        pid: cred.pid.as_raw_nonzero().get(),
        uid: cred.uid.as_raw(),
        gid: cred.gid.as_raw(),
    })
}

/// Reads the credentials of the peer of the connected Unix socket `fd`.
///
/// Not implemented on this platform: always an
/// [`io::ErrorKind::Unsupported`] error.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub fn peer_credentials(fd: BorrowedFd<'_>) -> io::Result<PeerCredentials> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "reading Unix-socket peer credentials of fd {fd:?} is only implemented on Linux \
             (SO_PEERCRED); this platform would need getpeereid(3)"
        ),
    ))
}

/// Whether the peer runs as the same user as this process (its uid equals our
/// effective uid).
pub fn is_same_user(peer: &PeerCredentials) -> bool {
    peer.uid == rustix::process::geteuid().as_raw()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::os::fd::AsFd;
    use std::os::unix::net::{UnixListener, UnixStream};

    #[test]
    fn socket_pair_reports_our_own_process() {
        let (a, b) = UnixStream::pair().unwrap();
        for end in [&a, &b] {
            let creds = peer_credentials(end.as_fd()).unwrap();
            assert_eq!(creds.pid, i32::try_from(std::process::id()).unwrap());
            assert_eq!(creds.uid, rustix::process::geteuid().as_raw());
            assert_eq!(creds.gid, rustix::process::getegid().as_raw());
            assert!(is_same_user(&creds));
        }
    }

    #[test]
    fn listener_and_connection_report_our_own_process() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let client = UnixStream::connect(&path).unwrap();
        let (server_side, _) = listener.accept().unwrap();
        let seen_by_server = peer_credentials(server_side.as_fd()).unwrap();
        let seen_by_client = peer_credentials(client.as_fd()).unwrap();
        assert_eq!(seen_by_server, seen_by_client);
        assert_eq!(
            seen_by_server.pid,
            i32::try_from(std::process::id()).unwrap()
        );
        assert!(is_same_user(&seen_by_server));
    }

    #[test]
    fn another_uid_is_not_the_same_user() {
        let us = rustix::process::geteuid().as_raw();
        let other = PeerCredentials {
            pid: 1,
            uid: us.wrapping_add(1),
            gid: 0,
        };
        assert!(!is_same_user(&other));
    }

    #[test]
    fn a_non_socket_fd_is_an_error() {
        let file = tempfile::tempfile().unwrap();
        let err = peer_credentials(file.as_fd()).unwrap_err();
        assert!(err.to_string().contains("SO_PEERCRED"), "{err}");
    }
}
