//! Linux: the peer's credentials from `SO_PEERCRED`, process information from `/proc`.

use std::io;
use std::os::fd::AsFd;
use std::path::PathBuf;

use super::{PeerCredentials, Stream};

/// `sizeof(sockaddr_un.sun_path)` on Linux.
pub(super) const SUN_PATH_BYTES: usize = 108;

/// Reads the credentials of the peer of an accepted stream (`SO_PEERCRED`).
pub(crate) fn peer_credentials(stream: &Stream) -> io::Result<PeerCredentials> {
    let fd = stream.as_fd();
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
        user: cred.uid.as_raw(),
    })
}

/// Field `number` (1-based, as proc(5) counts) of `/proc/<pid>/stat`, from field 3 on.
fn stat_field(pid: i32, number: usize) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may itself contain spaces and ')',
    // so parse from the last ')'.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name
        .split_whitespace()
        .nth(number.checked_sub(3)?)
        .map(str::to_owned)
}

/// The parent of `pid`, from `/proc/<pid>/stat`.
pub(crate) fn parent_pid(pid: i32) -> Option<i32> {
    stat_field(pid, 4)?.parse().ok()
}

/// When `pid` started, in clock ticks since boot, from `/proc/<pid>/stat`.
pub(crate) fn start_time(pid: i32) -> Option<u64> {
    stat_field(pid, 22)?.parse().ok()
}

/// The executable of `pid`, from `/proc/<pid>/exe`.
pub(crate) fn executable(pid: i32) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/exe")).ok()
}

/// The command line of `pid`, from `/proc/<pid>/cmdline`.
pub(crate) fn command_line(pid: i32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| {
            bytes
                .split(|&byte| byte == 0)
                .filter(|argument| !argument.is_empty())
                .map(|argument| String::from_utf8_lossy(argument).into_owned())
                .collect()
        })
        .unwrap_or_default()
}
