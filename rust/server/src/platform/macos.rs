//! macOS: the peer's uid from `getpeereid` and its pid from `LOCAL_PEERPID`; process
//! information from libproc (`proc_pidinfo`, `proc_pidpath`) and `sysctl(KERN_PROCARGS2)`.

use std::ffi::{c_int, c_void, OsStr};
use std::io;
use std::mem::{size_of, MaybeUninit};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::{PeerCredentials, Stream};

/// `sizeof(sockaddr_un.sun_path)` on macOS.
pub(super) const SUN_PATH_BYTES: usize = 104;

/// The longest argument area `KERN_PROCARGS2` is read into; `kern.argmax` is 1 MiB.
const MAX_ARGUMENT_AREA_BYTES: usize = 1024 * 1024;

extern "C" {
    // In libSystem (unistd.h), not bound by the libc crate for Apple targets.
    fn getpeereid(socket: c_int, euid: *mut libc::uid_t, egid: *mut libc::gid_t) -> c_int;
}

/// Reads the credentials of the peer of an accepted stream: its effective uid
/// (`getpeereid`) and its pid (`LOCAL_PEERPID`), both recorded by the kernel at connect.
pub(crate) fn peer_credentials(stream: &Stream) -> io::Result<PeerCredentials> {
    let fd = stream.as_fd().as_raw_fd();
    let context = |call: &str, error: io::Error| {
        io::Error::new(
            error.kind(),
            format!(
                "could not read the peer credentials ({call}) of socket fd {fd}: {error}; the fd \
                 must be a connected Unix-domain stream socket"
            ),
        )
    };
    let mut uid: libc::uid_t = 0;
    let mut gid: libc::gid_t = 0;
    // SAFETY: fd is an open socket borrowed from `stream`; uid and gid are valid out-pointers.
    if unsafe { getpeereid(fd, &mut uid, &mut gid) } != 0 {
        return Err(context("getpeereid", io::Error::last_os_error()));
    }
    let mut pid: libc::pid_t = 0;
    let mut length = size_of::<libc::pid_t>() as libc::socklen_t;
    // SAFETY: the out-pointer and its length describe `pid` exactly.
    let status = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_LOCAL,
            libc::LOCAL_PEERPID,
            (&mut pid as *mut libc::pid_t).cast::<c_void>(),
            &mut length,
        )
    };
    if status != 0 {
        return Err(context("LOCAL_PEERPID", io::Error::last_os_error()));
    }
    Ok(PeerCredentials { pid, user: uid })
}

/// libproc's BSD information about `pid`: its parent and start time.
fn bsd_info(pid: i32) -> Option<libc::proc_bsdinfo> {
    if pid <= 0 {
        return None;
    }
    let mut info = MaybeUninit::<libc::proc_bsdinfo>::zeroed();
    let size = c_int::try_from(size_of::<libc::proc_bsdinfo>()).ok()?;
    // SAFETY: the buffer is a proc_bsdinfo of exactly `size` bytes.
    let written = unsafe {
        libc::proc_pidinfo(
            pid,
            libc::PROC_PIDTBSDINFO,
            0,
            info.as_mut_ptr().cast::<c_void>(),
            size,
        )
    };
    // SAFETY: the kernel filled all `size` bytes (and the buffer was zeroed before).
    (written == size).then(|| unsafe { info.assume_init() })
}

/// The parent of `pid`.
pub(crate) fn parent_pid(pid: i32) -> Option<i32> {
    i32::try_from(bsd_info(pid)?.pbi_ppid).ok()
}

/// When `pid` started, in microseconds since 1970.
pub(crate) fn start_time(pid: i32) -> Option<u64> {
    let info = bsd_info(pid)?;
    info.pbi_start_tvsec
        .checked_mul(1_000_000)?
        .checked_add(info.pbi_start_tvusec)
}

/// The executable of `pid` (`proc_pidpath`).
pub(crate) fn executable(pid: i32) -> Option<PathBuf> {
    let mut buffer = vec![0u8; libc::PROC_PIDPATHINFO_MAXSIZE as usize];
    let capacity = u32::try_from(buffer.len()).ok()?;
    // SAFETY: the buffer holds `capacity` bytes.
    let written = unsafe { libc::proc_pidpath(pid, buffer.as_mut_ptr().cast(), capacity) };
    let length = usize::try_from(written).ok().filter(|&length| length > 0)?;
    Some(PathBuf::from(OsStr::from_bytes(&buffer[..length])))
}

/// The command line of `pid`, from `sysctl(KERN_PROCARGS2)`: the argument count, the
/// executable path, NUL padding, then the arguments, each NUL-terminated.
pub(crate) fn command_line(pid: i32) -> Vec<String> {
    procargs(pid)
        .map(|area| parse_procargs(&area))
        .unwrap_or_default()
}

fn procargs(pid: i32) -> Option<Vec<u8>> {
    let mut name = [libc::CTL_KERN, libc::KERN_PROCARGS2, pid];
    let mut buffer = vec![0u8; MAX_ARGUMENT_AREA_BYTES];
    let mut length = buffer.len();
    // SAFETY: `name` has 3 entries; the buffer holds `length` bytes.
    let status = unsafe {
        libc::sysctl(
            name.as_mut_ptr(),
            3,
            buffer.as_mut_ptr().cast(),
            &mut length,
            std::ptr::null_mut(),
            0,
        )
    };
    if status != 0 {
        return None;
    }
    buffer.truncate(length);
    Some(buffer)
}

/// The arguments in a `KERN_PROCARGS2` area; whatever does not parse yields fewer arguments.
fn parse_procargs(area: &[u8]) -> Vec<String> {
    let Some((count, rest)) = area.split_first_chunk::<4>() else {
        return Vec::new();
    };
    let count = usize::try_from(i32::from_ne_bytes(*count)).unwrap_or(0);
    // Skip the executable path and the NULs that pad it.
    let Some(path_end) = rest.iter().position(|&byte| byte == 0) else {
        return Vec::new();
    };
    let after_path = &rest[path_end..];
    let Some(arguments_start) = after_path.iter().position(|&byte| byte != 0) else {
        return Vec::new();
    };
    after_path[arguments_start..]
        .split(|&byte| byte == 0)
        .take(count)
        .map(|argument| String::from_utf8_lossy(argument).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::parse_procargs;

    #[test]
    fn a_procargs_area_yields_its_arguments_and_not_the_environment() {
        let mut area = 2i32.to_ne_bytes().to_vec();
        area.extend_from_slice(b"/usr/bin/agent\0\0\0\0agent\0--mcp\0HOME=/Users/a\0");
        assert_eq!(parse_procargs(&area), ["agent", "--mcp"]);
        assert!(parse_procargs(b"\x01").is_empty());
    }
}
